# Rust guest SDK (guest-sdk/rust, crate tdm-plugin) and the Rust example plugins (examples/rust, a
# cargo workspace of its own): builds them for wasm32-unknown-unknown into target/plugins/.
# Installs the rustup target when it is missing.
#
#   make rust-examples   target/plugins/{hello,json-tools,dist-reader,panicky}.wasm and
#                        target/plugins/dist/greeting.txt (dist-reader's bundled file); and
#                        the installable packages target/packages/NAME/ (plugin.toml with the
#                        module's real sha256, dist/NAME.wasm, and dist-reader's dist/ files);
#                        and the same modules built for speed with wasm SIMD (`-C
#                        target-feature=+simd128`: the SDK scans JSON 128 bytes a round; opt-level
#                        3) in target/plugins/simd/NAME.wasm
#   make rust-sizes      the size of each module
#   make rust-sdk-test   the Rust SDK's own tests (its JSON against serde_json, its allocator),
#                        natively; `make test` runs them through `unit`

# Keep the including Makefile's default goal: this fragment's rules must not become it.
rust_saved_goal := $(.DEFAULT_GOAL)

EXAMPLES += rust-examples

.PHONY: rust-examples rust-sizes rust-wasm-target rust-sdk-test

RUST_WASM_TARGET := wasm32-unknown-unknown
RUST_EXAMPLES_DIR := examples/rust
# The examples' own target folder (git-ignored), named explicitly so CARGO_TARGET_DIR cannot move it.
RUST_EXAMPLES_TARGET_DIR := $(RUST_EXAMPLES_DIR)/target
RUST_EXAMPLES_OUT := $(RUST_EXAMPLES_TARGET_DIR)/$(RUST_WASM_TARGET)/release
RUST_PLUGINS_DIR := target/plugins
RUST_PACKAGES_DIR := target/packages
# Package names; cargo names each artifact with `-` turned into `_` (json_tools.wasm).
RUST_EXAMPLES := hello json-tools dist-reader panicky
# The SIMD builds' own target folder and output folder. target/plugins/NAME.wasm stays scalar: it is
# what the boards, s390x and `--no-simd` hosts run (they refuse a module that uses SIMD), built for
# size (the examples' profile, opt-level "z"). The SIMD builds are for hosts that run SIMD, where
# time counts more than bytes: opt-level 3, whose inlining saves calls, the interpreter's dearest
# instruction (a 128 B greet takes about half the time of the "z" build, for a module 40% larger).
RUST_SIMD_OPT_LEVEL := 3
# And LLVM's inliner told to inline more (its default threshold is 250 at opt-level 3): a wasm call
# costs wasmi some 150 host instructions and more time than that. At 1500 a 128 B greet of hello
# makes 14 calls instead of 24: about 14% fewer host instructions and 15-20% less time, for 2.7%
# more fuel and a module half again as large (54 KB -> 83 KB). RUSTFLAGS, like the SIMD target
# feature.
RUST_SPEED_FLAGS := -C llvm-args=-inline-threshold=1500
RUST_SIMD_TARGET_DIR := $(RUST_EXAMPLES_TARGET_DIR)/simd
RUST_SIMD_PLUGINS_DIR := $(RUST_PLUGINS_DIR)/simd

rust-wasm-target:
	@rustup target list --installed | grep -qx $(RUST_WASM_TARGET) || rustup target add $(RUST_WASM_TARGET)

rust-examples: rust-wasm-target
	$(RUST_SIZE_CARGO) build --release --locked --target $(RUST_WASM_TARGET) --manifest-path $(RUST_EXAMPLES_DIR)/Cargo.toml \
		--target-dir $(RUST_EXAMPLES_TARGET_DIR)
	@mkdir -p $(RUST_PLUGINS_DIR)/dist
	@for name in $(RUST_EXAMPLES); do \
		cp $(RUST_EXAMPLES_OUT)/$$(echo $$name | tr - _).wasm $(RUST_PLUGINS_DIR)/$$name.wasm || exit 1; \
	done
	@cp $(RUST_EXAMPLES_DIR)/dist-reader/dist/greeting.txt $(RUST_PLUGINS_DIR)/dist/greeting.txt
	RUSTFLAGS="$(GUEST_RUSTFLAGS) -C target-feature=+simd128 $(RUST_SPEED_FLAGS)" CARGO_PROFILE_RELEASE_OPT_LEVEL=$(RUST_SIMD_OPT_LEVEL) $(CARGO) build --release --locked \
		--target $(RUST_WASM_TARGET) --manifest-path $(RUST_EXAMPLES_DIR)/Cargo.toml --target-dir $(RUST_SIMD_TARGET_DIR)
	@mkdir -p $(RUST_SIMD_PLUGINS_DIR)
	@for name in $(RUST_EXAMPLES); do \
		cp $(RUST_SIMD_TARGET_DIR)/$(RUST_WASM_TARGET)/release/$$(echo $$name | tr - _).wasm \
			$(RUST_SIMD_PLUGINS_DIR)/$$name.wasm || exit 1; \
	done
	@for name in $(RUST_EXAMPLES); do \
		pkg=$(RUST_PACKAGES_DIR)/$$name; mkdir -p $$pkg/dist || exit 1; \
		if [ -d $(RUST_EXAMPLES_DIR)/$$name/dist ]; then cp $(RUST_EXAMPLES_DIR)/$$name/dist/* $$pkg/dist/ || exit 1; fi; \
		cp $(RUST_PLUGINS_DIR)/$$name.wasm $$pkg/dist/$$name.wasm || exit 1; \
		sed "s/^sha256 = .*/sha256 = \"$$(sha256sum $$pkg/dist/$$name.wasm | cut -d' ' -f1)\"/" \
			$(RUST_EXAMPLES_DIR)/$$name/plugin.toml > $$pkg/plugin.toml || exit 1; \
	done
	@echo "rust-examples: $(foreach n,$(RUST_EXAMPLES),$(RUST_PLUGINS_DIR)/$(n).wasm) and $(RUST_SIMD_PLUGINS_DIR)/*.wasm"

# The SDK's own workspace and target folder (git-ignored), like the examples'.
rust-sdk-test:
	$(CARGO) test --locked --manifest-path guest-sdk/rust/Cargo.toml --target-dir guest-sdk/rust/target

unit: rust-sdk-test

rust-sizes: rust-examples
	@for name in $(RUST_EXAMPLES); do \
		printf '%-12s %7d bytes  %s\n' $$name $$(wc -c < $(RUST_PLUGINS_DIR)/$$name.wasm) $(RUST_PLUGINS_DIR)/$$name.wasm; \
	done

.DEFAULT_GOAL := $(rust_saved_goal)
