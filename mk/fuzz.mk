# Fuzzing (docs/fuzzing.md): the cargo-fuzz crate in fuzz/, built with the nightly toolchain
# (libFuzzer and the sanitizers need it), outside the stable workspace and not part of `make test`.
#
#   make fuzz-build                 installs cargo-fuzz when missing, builds every target
#   make fuzz [FUZZ_SECONDS=60]     runs each target for FUZZ_SECONDS on one core, one after the
#                                   other; a summary line per target (executions, CPU seconds,
#                                   crashes) and a total go to $(FUZZ_REPORT)
#   make fuzz FUZZ_TARGETS=trace_decode   runs only the named targets
#   make fuzz-cross [FUZZ_CROSS_MODULES=2000] [FUZZ_CROSS_SEED=1]
#                                   the cross-architecture differential (stable, no fuzzer):
#                                   wasm-smith modules recorded on x86_64 and replayed here and on
#                                   big-endian s390x under qemu-s390x; outcomes, fuel and digests
#                                   must agree; one line (modules, agreed, disagreed, CPU s) goes
#                                   to $(FUZZ_CROSS_REPORT). `make cross-s390x` (so `make test`)
#                                   runs FUZZ_CROSS_BOUNDED of them.
#
# The targets' bodies and oracles are the stable crate fuzz/oracles, which `make test` also runs
# on the regression corpus fuzz/regressions/TARGET (every input that ever crashed a target).
#
# Corpora grow in fuzz/corpus/TARGET and crashes land in fuzz/artifacts/TARGET (both git-ignored);
# fuzz/seeds/TARGET holds the few tiny committed seeds. FUZZ_TARGET_DIR is where the nightly
# build goes (its own folder, so it never invalidates the stable build).

# Keep the including Makefile's default goal: this fragment's rules must not become it.
fuzz_saved_goal := $(.DEFAULT_GOAL)

.PHONY: fuzz fuzz-build fuzz-tools fuzz-cross fuzz-cross-tools

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= raw_module smith_module adversarial_plugin request_params response_bytes host_request \
	permissions plugin_toml hub_index workspace_state trace_decode differential minisign
FUZZ_TOOLCHAIN ?= nightly
FUZZ_TARGET_DIR ?= target/fuzz-nightly
FUZZ_REPORT ?= target/fuzz-report.txt
# Extra flags for `cargo fuzz build` (e.g. `-s none` to build without AddressSanitizer).
FUZZ_FLAGS ?=

fuzz-tools:
	@rustup toolchain list | grep -q '^$(FUZZ_TOOLCHAIN)' || rustup toolchain install $(FUZZ_TOOLCHAIN) --profile minimal
	@cargo +$(FUZZ_TOOLCHAIN) fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked

fuzz-build: fuzz-tools
	cargo +$(FUZZ_TOOLCHAIN) fuzz build $(FUZZ_FLAGS) --target-dir $(FUZZ_TARGET_DIR)

fuzz: fuzz-build
	@mkdir -p $(dir $(FUZZ_REPORT))
	@echo "# make fuzz FUZZ_SECONDS=$(FUZZ_SECONDS), one core, $$(date -u +%Y-%m-%dT%H:%M:%SZ)" > $(FUZZ_REPORT)
	@for target in $(FUZZ_TARGETS); do \
		FUZZ_TOOLCHAIN=$(FUZZ_TOOLCHAIN) FUZZ_TARGET_DIR=$(FUZZ_TARGET_DIR) \
			fuzz/run-target.sh $$target $(FUZZ_SECONDS) $(FUZZ_REPORT); \
	done
	@awk '$$1 != "#" && $$1 != "total" { for (i = 2; i <= NF; i++) { split($$i, kv, "="); sum[kv[1]] += kv[2] } } \
		END { printf "total execs=%d cpu_s=%.1f crashes=%d\n", sum["execs"], sum["cpu_s"], sum["crashes"] }' \
		$(FUZZ_REPORT) >> $(FUZZ_REPORT)
	@cat $(FUZZ_REPORT)

FUZZ_CROSS_MODULES ?= 2000
FUZZ_CROSS_BOUNDED ?= 200
FUZZ_CROSS_SEED ?= 1
FUZZ_CROSS_DIR ?= $(CROSS_TARGET_DIR)/fuzz-cross
FUZZ_CROSS_REPORT ?= $(CROSS_TARGET_DIR)/fuzz-cross-report.txt

# The generator and the native replay (debug builds: `make test` has built their crates already).
fuzz-cross-tools:
	$(CARGO) build -q -p contour-fuzz-oracles --bin cross-cases -p contour-replay --bin contour-replay

# $(1) modules: generate and record them here, replay them here and under qemu-s390x, compare.
fuzz_cross = fuzz/cross.sh $(1) $(FUZZ_CROSS_SEED) $(FUZZ_CROSS_DIR) $(FUZZ_CROSS_REPORT) \
	$(CROSS_TARGET_DIR)/debug/cross-cases $(CROSS_TARGET_DIR)/debug/contour-replay -- $(S390X_REPLAY)

fuzz-cross: replay-s390x fuzz-cross-tools
	$(call fuzz_cross,$(FUZZ_CROSS_MODULES))

.DEFAULT_GOAL := $(fuzz_saved_goal)
