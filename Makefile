# Contour: `make demo` builds the Rust hello example and runs it through `tdm run`; `make test`
# runs every check CI runs. Both set up what they need (rustup targets, Debian's clang/lld, npm
# packages) themselves.
CARGO ?= cargo
EMBEDDED_TARGET := thumbv7em-none-eabihf
TDM := target/release/tdm

.PHONY: all build demo test fmt-check clippy unit embedded-core setup bench bench-report clean examples

# Example plugins and guest SDKs (one fragment per language) add their targets to EXAMPLES.
.DEFAULT_GOAL := all
EXAMPLES :=
-include mk/*.mk

# Builds every example plugin into target/plugins/.
examples: $(EXAMPLES)

all: build

setup:
	@rustup target list --installed | grep -qx $(EMBEDDED_TARGET) || rustup target add $(EMBEDDED_TARGET)

build:
	$(CARGO) build --release -p tdm-sdk

demo: build rust-examples
	@echo '$$ tdm inspect target/plugins/hello.wasm'
	@$(TDM) inspect target/plugins/hello.wasm
	@echo
	@echo '$$ tdm run target/plugins/hello.wasm greet --params '"'"'{"name":"Ada"}'"'"' --stats'
	@$(TDM) run target/plugins/hello.wasm greet --params '{"name":"Ada"}' --stats
	@echo
	@echo '$$ tdm run examples/echo/echo.wat greet --params '"'"'{"name":"Ada"}'"'"''
	@$(TDM) run examples/echo/echo.wat greet --params '{"name":"Ada"}'

fmt-check:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit: examples
	$(CARGO) test --workspace

embedded-core: setup
	$(CARGO) build -p contour-core --target $(EMBEDDED_TARGET)

test: fmt-check clippy unit embedded-core

# Criterion benches (Contour vs bare wasmi, target/criterion/), then resident memory per sandbox
# (target/density.json). bench-report turns both into benches/REPORT.md and benches/echo_latency.svg.
bench:
	$(CARGO) bench -p contour-benches
	$(CARGO) run --release -q -p contour-benches --bin density

bench-report:
	$(CARGO) run --release -q -p contour-benches --bin report

clean:
	$(CARGO) clean
