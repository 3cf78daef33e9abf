# Contour: `make demo` runs the bundled echo plugin through `tdm run`; `make test` runs every
# check CI runs. Both set up what they need (rustup targets) themselves.
CARGO ?= cargo
EMBEDDED_TARGET := thumbv7em-none-eabihf
TDM := target/release/tdm

.PHONY: all build demo test fmt-check clippy unit embedded-core setup bench clean examples

# Example plugins and guest SDKs (one fragment per language) add their targets to EXAMPLES.
EXAMPLES :=
-include mk/*.mk

# Builds every example plugin into target/plugins/.
examples: $(EXAMPLES)

all: build

setup:
	@rustup target list --installed | grep -qx $(EMBEDDED_TARGET) || rustup target add $(EMBEDDED_TARGET)

build:
	$(CARGO) build --release -p tdm-sdk

demo: build
	@echo '$$ tdm inspect examples/echo/echo.wat'
	@$(TDM) inspect examples/echo/echo.wat
	@echo
	@echo '$$ tdm run examples/echo/echo.wat greet --params '"'"'{"name":"Ada"}'"'"' --stats'
	@$(TDM) run examples/echo/echo.wat greet --params '{"name":"Ada"}' --stats

fmt-check:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace

embedded-core: setup
	$(CARGO) build -p contour-core --target $(EMBEDDED_TARGET)

test: fmt-check clippy unit embedded-core

bench:
	$(CARGO) bench -p contour-benches

clean:
	$(CARGO) clean
