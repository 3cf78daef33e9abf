# Contour: `make demo` builds the Rust hello example and runs it through `tdm run`; `make test`
# runs every check CI runs. Both set up what they need (rustup targets, Debian's clang/lld, npm
# packages) themselves.
CARGO ?= cargo
EMBEDDED_TARGET := thumbv7em-none-eabihf
TDM := target/release/tdm

.PHONY: all build demo test fmt-check clippy unit embedded-core setup bench bench-peers bench-profile bench-report valgrind clean examples

# Rust guests (examples, bench guests, the boards' plugin) name their source files by fixed
# prefixes, not by where this checkout or cargo's registry lives: panic locations are data in the
# module, and a conformance trace binds the module's hash, so the bytes must not depend on the path.
GUEST_RUSTFLAGS := --remap-path-prefix=$(CURDIR)=/contour --remap-path-prefix=$(or $(CARGO_HOME),$(HOME)/.cargo)=/cargo
GUEST_CARGO = RUSTFLAGS="$(GUEST_RUSTFLAGS)" $(CARGO)
# The Rust guests built for size (opt-level "z": the scalar examples, the boards' hello, the
# Extism greet timed beside them) also raise LLVM's inliner threshold, which "z" keeps so low that
# Vec's push, reserve and extend stay calls, a wasm call being wasmi's dearest instruction. At 100
# a 128 B greet of hello makes 49 calls instead of 87: about 20% less time and 6% less fuel, for
# a module 8% larger (36.7 KB -> 39.7 KB). `tdm new`'s Rust template builds with the same flag.
RUST_SIZE_FLAGS := -C llvm-args=-inline-threshold=100
RUST_SIZE_CARGO = RUSTFLAGS="$(GUEST_RUSTFLAGS) $(RUST_SIZE_FLAGS)" $(CARGO)

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
	$(CARGO) build --release -p tdm

demo: build rust-examples
	@echo '$$ tdm inspect target/plugins/hello.wasm'
	@$(TDM) inspect target/plugins/hello.wasm
	@echo
	@echo '$$ tdm run target/plugins/hello.wasm greet --params '"'"'{"name":"Ada"}'"'"' --stats'
	@$(TDM) run target/plugins/hello.wasm greet --params '{"name":"Ada"}' --stats
	@echo
	@echo '$$ tdm run examples/echo/echo.wat greet --params '"'"'{"name":"Ada"}'"'"''
	@$(TDM) run examples/echo/echo.wat greet --params '{"name":"Ada"}'
	@echo
	@rm -rf target/demo-workspace
	@echo '$$ tdm hub add bundled examples/hub --key examples/keys/bundled-hub.pub   (workspace: target/demo-workspace)'
	@TDM_WORKSPACE=target/demo-workspace $(TDM) hub add bundled examples/hub --key examples/keys/bundled-hub.pub
	@echo '$$ tdm install echo --hub bundled && tdm approve echo --yes && tdm call echo greet --params '"'"'{"name":"Ada"}'"'"''
	@TDM_WORKSPACE=target/demo-workspace $(TDM) install echo --hub bundled
	@TDM_WORKSPACE=target/demo-workspace $(TDM) approve echo --yes
	@TDM_WORKSPACE=target/demo-workspace $(TDM) call echo greet --params '{"name":"Ada"}'

fmt-check:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The WASI test suite (std-host/tdm/tests/wasi_testsuite.rs) lives in ../shared beside the repo; in
# a fresh clone of a local repo (CI), beside the repo it was cloned from. Found nowhere, its test
# is skipped with a line saying so; `cargo test` run by hand still insists on finding it.
ORIGIN_DIR := $(shell git remote get-url origin 2>/dev/null)
WASI_TESTSUITE ?= $(or $(abspath $(firstword $(wildcard ../shared/wasi-testsuite $(if $(ORIGIN_DIR),$(ORIGIN_DIR)/../shared/wasi-testsuite)))),skip)
export WASI_TESTSUITE

# Debian's minisign: std-host/tdm/tests/publishing.rs checks that it and tdm verify each other's
# signatures and keys (installed when missing).
.PHONY: minisign
minisign:
	@command -v minisign >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y minisign)

unit: examples minisign c-host-check
	@echo 'WASI test suite: $(WASI_TESTSUITE)'
	$(CARGO) test --workspace

embedded-core: setup
	$(CARGO) build -p contour-core --target $(EMBEDDED_TARGET)

# `unit` runs `make embedded` first (mk/embedded.mk): the firmware builds core for both boards,
# which covers what `embedded-core` checks.
test: fmt-check clippy unit cross-s390x c-firmware

# Criterion benches (Contour vs bare wasmi, target/criterion/), resident memory per sandbox
# (target/density.json) and instructions per hot path under callgrind (target/profile.json).
# bench-report turns them into benches/REPORT.md and benches/echo_latency.svg.
# BENCH_FEATURES is empty here; bench-peers sets it to the peers feature.
BENCH_FEATURES ?=
bench: bench-guests rust-examples valgrind
	$(CARGO) bench -p contour-benches $(BENCH_FEATURES)
	$(CARGO) run --release -q -p contour-benches --bin density
	$(CARGO) run --release -q -p contour-benches --bin profile
	$(CARGO) run --release -q -p contour-benches --bin fresh_calls
	$(CARGO) run --release -q -p contour-benches --bin cold_starts
	$(if $(BENCH_FEATURES),$(CARGO) run --release -q -p contour-benches $(BENCH_FEATURES) --bin greet_rounds)
	$(CARGO) build --release -q -p tdm
	$(CARGO) run --release -q -p contour-benches --bin mcp_calls

# callgrind counts instructions for bench-profile (valgrind is on this machine kind; installed when missing).
valgrind:
	@command -v valgrind >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind)

# Instructions per iteration of each hot path against its baseline (repeatable on a noisy machine).
bench-profile: rust-examples valgrind
	$(CARGO) run --release -q -p contour-benches --bin profile

# The same benches plus the peers (benches/benches/peers.rs behind the `peers` cargo feature: wasmtime 48 with
# Cranelift and Pulley, wasm3, Extism 1.30) in one run, so every ratio against a peer is from the same run. Building
# wasmtime and Extism's own wasmtime takes about 20 minutes the first time on 2 cores; the wasm3 crate's build
# script runs Debian's bindgen, which needs libclang-dev (both installed when missing).
bench-peers:
	@command -v bindgen >/dev/null && dpkg -s libclang-dev >/dev/null 2>&1 || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bindgen libclang-dev)
	$(MAKE) bench BENCH_FEATURES="--features peers"

bench-report:
	$(CARGO) run --release -q -p contour-benches --bin report

clean:
	$(CARGO) clean
