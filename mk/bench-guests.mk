# Rust guest plugins of the benchmarks (benches/guests, each a cargo workspace of its own, not
# examples): builds them in release into target/plugins/. Installs the rustup targets when missing.
#
#   make bench-guests   target/plugins/sha256.wasm      (wasm32-unknown-unknown: what Contour and
#                                                        bare wasmi run)
#                       target/plugins/sha256-mvp.wasm  (wasm32v1-none: MVP + mutable-globals, no
#                                                        bulk-memory, for wasm3 0.3.1)
#
# `make bench` and `make test` (through `unit`) build them first: benches/tests/sha256_guest.rs
# fails without target/plugins/sha256.wasm.

# Keep the including Makefile's default goal: this fragment's rules must not become it.
bench_guests_saved_goal := $(.DEFAULT_GOAL)

.PHONY: bench-guests bench-guests-targets

BENCH_GUESTS_TARGET := wasm32-unknown-unknown
BENCH_GUESTS_MVP_TARGET := wasm32v1-none
BENCH_GUESTS_SHA256_DIR := benches/guests/sha256
# The guest's own target folder (git-ignored), named explicitly so CARGO_TARGET_DIR cannot move it.
BENCH_GUESTS_SHA256_TARGET_DIR := $(BENCH_GUESTS_SHA256_DIR)/target
BENCH_GUESTS_PLUGINS_DIR := target/plugins
# Post-MVP features the MVP variant must not use (wabt's wasm-validate; mutable-globals stays on).
BENCH_GUESTS_MVP_ONLY := --disable-bulk-memory --disable-sign-extension --disable-saturating-float-to-int \
	--disable-multi-value --disable-reference-types --disable-simd

bench-guests-targets:
	@for target in $(BENCH_GUESTS_TARGET) $(BENCH_GUESTS_MVP_TARGET); do \
		rustup target list --installed | grep -qx $$target || rustup target add $$target || exit 1; \
	done

bench-guests: bench-guests-targets
	$(GUEST_CARGO) build --release --locked --target $(BENCH_GUESTS_TARGET) --target $(BENCH_GUESTS_MVP_TARGET) \
		--manifest-path $(BENCH_GUESTS_SHA256_DIR)/Cargo.toml --target-dir $(BENCH_GUESTS_SHA256_TARGET_DIR)
	@mkdir -p $(BENCH_GUESTS_PLUGINS_DIR)
	@cp $(BENCH_GUESTS_SHA256_TARGET_DIR)/$(BENCH_GUESTS_TARGET)/release/sha256.wasm $(BENCH_GUESTS_PLUGINS_DIR)/sha256.wasm
	@cp $(BENCH_GUESTS_SHA256_TARGET_DIR)/$(BENCH_GUESTS_MVP_TARGET)/release/sha256.wasm \
		$(BENCH_GUESTS_PLUGINS_DIR)/sha256-mvp.wasm
	@if command -v wasm-validate >/dev/null; then \
		wasm-validate $(BENCH_GUESTS_MVP_ONLY) $(BENCH_GUESTS_PLUGINS_DIR)/sha256-mvp.wasm || \
			{ echo "bench-guests: sha256-mvp.wasm uses post-MVP features"; exit 1; }; \
	else \
		echo "bench-guests: wasm-validate (Debian's wabt) not found, the MVP check of sha256-mvp.wasm is skipped"; \
	fi
	@echo "bench-guests: $(BENCH_GUESTS_PLUGINS_DIR)/sha256.wasm $(BENCH_GUESTS_PLUGINS_DIR)/sha256-mvp.wasm"

# `make test` runs benches/tests/sha256_guest.rs, which needs the module.
unit: bench-guests

# The peers' guests (only for `make bench-peers`, not `make test`: they come from crates.io):
#
#   make bench-peer-guests   target/plugins/extism-greet.wasm  (examples/rust/hello's greet written
#                                                              with extism-pdk, serde Json in and out,
#                                                              built as the scalar hello: opt-level "z"
#                                                              and RUST_SIZE_FLAGS)
#                            target/plugins/extism-greet-o3.wasm  (the same with the SIMD hello's
#                                                              speed flags, opt-level 3 and the
#                                                              inliner's threshold: each Contour build
#                                                              is timed beside an Extism guest built
#                                                              the same way)
BENCH_PEER_GUESTS_EXTISM_DIR := benches/guests/extism-greet
BENCH_PEER_GUESTS_EXTISM_TARGET_DIR := $(BENCH_PEER_GUESTS_EXTISM_DIR)/target
BENCH_PEER_GUESTS_EXTISM_O3_TARGET_DIR := $(BENCH_PEER_GUESTS_EXTISM_DIR)/target/o3

.PHONY: bench-peer-guests

bench-peer-guests: bench-guests-targets
	$(RUST_SIZE_CARGO) build --release --locked --target $(BENCH_GUESTS_TARGET) \
		--manifest-path $(BENCH_PEER_GUESTS_EXTISM_DIR)/Cargo.toml --target-dir $(BENCH_PEER_GUESTS_EXTISM_TARGET_DIR)
	@mkdir -p $(BENCH_GUESTS_PLUGINS_DIR)
	@cp $(BENCH_PEER_GUESTS_EXTISM_TARGET_DIR)/$(BENCH_GUESTS_TARGET)/release/extism_greet.wasm \
		$(BENCH_GUESTS_PLUGINS_DIR)/extism-greet.wasm
	RUSTFLAGS="$(GUEST_RUSTFLAGS) $(RUST_SPEED_FLAGS)" CARGO_PROFILE_RELEASE_OPT_LEVEL=$(RUST_SIMD_OPT_LEVEL) \
		$(CARGO) build --release --locked \
		--target $(BENCH_GUESTS_TARGET) --manifest-path $(BENCH_PEER_GUESTS_EXTISM_DIR)/Cargo.toml \
		--target-dir $(BENCH_PEER_GUESTS_EXTISM_O3_TARGET_DIR)
	@cp $(BENCH_PEER_GUESTS_EXTISM_O3_TARGET_DIR)/$(BENCH_GUESTS_TARGET)/release/extism_greet.wasm \
		$(BENCH_GUESTS_PLUGINS_DIR)/extism-greet-o3.wasm
	@echo "bench-peer-guests: $(BENCH_GUESTS_PLUGINS_DIR)/extism-greet.wasm, extism-greet-o3.wasm"

bench-peers: bench-peer-guests

.DEFAULT_GOAL := $(bench_guests_saved_goal)
