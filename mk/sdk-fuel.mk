# Where one intent's fuel goes, per guest SDK: the `greet` plugin written with each SDK
# (examples/rust/hello, examples/c/hello, examples/assemblyscript/hello), each scalar and built with
# wasm SIMD (target/plugins/simd/), warm through Contour at
# 128 B, 4 KiB and 64 KiB, and split into envelope, params, handler, response and allocator by a
# build of each with fuel marks (benches/src/bin/sdk_fuel.rs). Writes target/sdk_fuel.json
# (under CARGO_TARGET_DIR when set), which `make bench-report` puts into benches/REPORT.md.
#
#   make sdk-fuel   the marked builds into target/plugins/fuel-marks/, then the table
#
# The marked builds import `contour_profile.mark`, so they do not load in Contour: the harness runs
# them in bare wasmi with Contour's fuel costs, and the plain builds through Contour.

# Keep the including Makefile's default goal: this fragment's rules must not become it.
sdk_fuel_saved_goal := $(.DEFAULT_GOAL)

.PHONY: sdk-fuel sdk-fuel-modules

SDK_FUEL_DIR := target/plugins/fuel-marks
# The marked Rust build's own target folder, so it never replaces the plain build's artifacts.
SDK_FUEL_RUST_TARGET_DIR = $(RUST_EXAMPLES_TARGET_DIR)/fuel-marks

sdk-fuel-modules: rust-examples c-examples as-examples
	@mkdir -p $(SDK_FUEL_DIR)
	$(RUST_SIZE_CARGO) build --release --locked --target $(RUST_WASM_TARGET) --manifest-path $(RUST_EXAMPLES_DIR)/Cargo.toml \
		--target-dir $(SDK_FUEL_RUST_TARGET_DIR) -p hello --features tdm-plugin/fuel-marks
	@cp $(SDK_FUEL_RUST_TARGET_DIR)/$(RUST_WASM_TARGET)/release/hello.wasm $(SDK_FUEL_DIR)/hello.wasm
	$(CLANG) $(C_PLUGIN_FLAGS) -DTDM_FUEL_MARKS -o $(SDK_FUEL_DIR)/hello-c.wasm examples/c/hello/hello.c $(C_SDK_C)
	cd $(AS_SDK) && node_modules/.bin/asc ../../examples/assemblyscript/hello/assembly/index.ts \
		--config ../../examples/assemblyscript/hello/asconfig.json --target release --use TDM_FUEL_MARKS=1 \
		-o ../../$(SDK_FUEL_DIR)/hello-as.wasm
	@# The same three built with wasm SIMD (Rust with the flags of its SIMD build), into $(SDK_FUEL_DIR)/simd/.
	@mkdir -p $(SDK_FUEL_DIR)/simd
	RUSTFLAGS="$(GUEST_RUSTFLAGS) -C target-feature=+simd128 $(RUST_SPEED_FLAGS)" CARGO_PROFILE_RELEASE_OPT_LEVEL=$(RUST_SIMD_OPT_LEVEL) \
		$(CARGO) build --release --locked --target $(RUST_WASM_TARGET) \
		--manifest-path $(RUST_EXAMPLES_DIR)/Cargo.toml --target-dir $(SDK_FUEL_RUST_TARGET_DIR)/simd -p hello \
		--features tdm-plugin/fuel-marks
	@cp $(SDK_FUEL_RUST_TARGET_DIR)/simd/$(RUST_WASM_TARGET)/release/hello.wasm $(SDK_FUEL_DIR)/simd/hello.wasm
	$(CLANG) $(C_PLUGIN_FLAGS) -msimd128 -DTDM_FUEL_MARKS -o $(SDK_FUEL_DIR)/simd/hello-c.wasm examples/c/hello/hello.c $(C_SDK_C)
	cd $(AS_SDK) && node_modules/.bin/asc ../../examples/assemblyscript/hello/assembly/index.ts \
		--config ../../examples/assemblyscript/hello/asconfig.json --target release --use TDM_FUEL_MARKS=1 \
		--enable simd -o ../../$(SDK_FUEL_DIR)/simd/hello-as.wasm

sdk-fuel: sdk-fuel-modules
	$(CARGO) run --release -q -p contour-benches --bin sdk_fuel

# `make bench` (and so `make bench-peers`) writes target/sdk_fuel.json for the report's SDK section.
bench: sdk-fuel

.DEFAULT_GOAL := $(sdk_fuel_saved_goal)
