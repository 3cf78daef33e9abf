# The embedded demo (embedded-demo/, a cargo workspace of its own): firmware that runs bundled
# plugins through contour-core on QEMU mps2-an386 (Cortex-M4F) and QEMU virt (RV32IMAC).
# Installs what is missing: the rustup targets, Debian's qemu-system-arm and qemu-system-misc.
#
#   make embedded         builds the Rust SDK plugin with a small shadow stack, the firmware for
#                         both targets (opt-level "z", fat LTO), runs both under QEMU; each log
#                         goes to target/embedded/TARGET.log; fails unless both exit 0
#   make embedded-part    the same firmware with the memory map of a 1 MiB-flash, 256 KiB-RAM part
#                         (`--features part-256k`: 220 KiB heap, >= 32 KiB stack, 128 KiB of linear
#                         memory per plugin), run on both boards; logs TARGET-part.log
#   make embedded-sizes   flash and the largest symbols at opt-level "z" and at opt-level 3, both
#                         targets, each beside its floor (plain wasmi, the same plugins, one raw ABI
#                         call each: src/floor/main.rs) and Contour's share over it; then the
#                         256 KiB-RAM part's run (the figures of embedded-demo/README.md)
#
# `make test` runs `make embedded` first (through `unit`): std-host/tdm/tests/embedded_demo.rs reads
# the logs and checks every outcome and fuel figure against the host's for the same plugins.

# Keep the including Makefile's default goal: this fragment's rules must not become it.
embedded_saved_goal := $(.DEFAULT_GOAL)

.PHONY: core-plugins-only embedded embedded-toolchain embedded-plugins embedded-firmware embedded-floor embedded-part embedded-sizes

EMBEDDED_DIR := embedded-demo
EMBEDDED_ARM := thumbv7em-none-eabihf
EMBEDDED_RISCV := riscv32imac-unknown-none-elf
EMBEDDED_WASM := wasm32-unknown-unknown
# The firmware's own target folder (git-ignored), named explicitly so CARGO_TARGET_DIR cannot move it.
EMBEDDED_TARGET_DIR := target
EMBEDDED_PROFILE ?= release
EMBEDDED_LOGS := target/embedded
# The logs of the default profile are TARGET.log (what std-host/tdm/tests/embedded_demo.rs reads);
# another profile's are TARGET-PROFILE.log.
EMBEDDED_LOG_SUFFIX = $(if $(filter release,$(EMBEDDED_PROFILE)),,-$(EMBEDDED_PROFILE))
EMBEDDED_PLUGINS := target/plugins/embedded
# The Rust SDK plugin's shadow stack on a board: 16 KiB instead of rustc's 1 MiB default, so the
# module declares 1 page instead of 17 (docs/writing-plugins.md, "Plugins for boards").
EMBEDDED_STACK_BYTES := 16384
EMBEDDED_RUST_TARGET_DIR := examples/rust/target/embedded
# A run that hangs is cut after this many seconds (it takes a few).
EMBEDDED_QEMU_TIMEOUT := 300
QEMU_ARM := qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic -monitor none \
	-semihosting-config enable=on,target=native -kernel
QEMU_RISCV := qemu-system-riscv32 -machine virt -bios none -nographic -monitor none \
	-semihosting-config enable=on,target=native -kernel

# Debian's QEMU (qemu-system-misc holds qemu-system-riscv32). Some images carry a qemu-utils
# from another release (bookworm-backports' 10.x), which Breaks Debian 12's qemu-system-common
# 7.2 and which apt would remove: when qemu-utils is installed, it is moved to the release of the
# QEMU being installed instead, so qemu-img stays.
EMBEDDED_QEMU_INSTALL := v=$$(apt-cache policy qemu-system-common | awk '/Candidate:/ { print $$2 }'); \
	utils=; if dpkg -s qemu-utils >/dev/null 2>&1; then utils=qemu-utils=$$v; fi; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends --allow-downgrades \
		qemu-system-arm qemu-system-misc $$utils

embedded-toolchain:
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV) $(EMBEDDED_WASM); do \
		rustup target list --installed | grep -qx $$target || rustup target add $$target || exit 1; \
	done
	@command -v qemu-system-arm >/dev/null && command -v qemu-system-riscv32 >/dev/null || \
		{ apt-get update && $(EMBEDDED_QEMU_INSTALL); }

# examples/rust/hello with the small stack (`cargo rustc` passes the link argument to this crate only).
embedded-plugins: embedded-toolchain
	$(RUST_SIZE_CARGO) rustc --release --locked -p hello --target $(EMBEDDED_WASM) \
		--manifest-path examples/rust/Cargo.toml --target-dir $(EMBEDDED_RUST_TARGET_DIR) \
		-- -C link-arg=-zstack-size=$(EMBEDDED_STACK_BYTES)
	@mkdir -p $(EMBEDDED_PLUGINS)
	@# Copied only when it changed: a new mtime would make the firmware's build script run again.
	@cmp -s $(EMBEDDED_RUST_TARGET_DIR)/$(EMBEDDED_WASM)/release/hello.wasm $(EMBEDDED_PLUGINS)/hello.wasm || \
		cp $(EMBEDDED_RUST_TARGET_DIR)/$(EMBEDDED_WASM)/release/hello.wasm $(EMBEDDED_PLUGINS)/hello.wasm

# One cargo run per target (one run for both would unify the boards' critical-section features);
# the build scripts and proc-macros built for the host by the first are reused by the second.
embedded-firmware: embedded-plugins
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "embedded: building the firmware for $$target ($(EMBEDDED_PROFILE))"; \
		(cd $(EMBEDDED_DIR) && CONTOUR_EMBEDDED_PLUGINS=$(CURDIR)/$(EMBEDDED_PLUGINS) $(CARGO) build --locked \
			--profile $(EMBEDDED_PROFILE) --target $$target --target-dir $(EMBEDDED_TARGET_DIR) \
			--bin contour-embedded-demo) || exit 1; \
	done

# The floor (plain wasmi, the same features, profile, heap and plugins; src/floor/main.rs), built
# and run on both boards: its log is TARGET-floor[-PROFILE].log.
embedded-floor: embedded-plugins
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "embedded: building the floor for $$target ($(EMBEDDED_PROFILE))"; \
		(cd $(EMBEDDED_DIR) && CONTOUR_EMBEDDED_PLUGINS=$(CURDIR)/$(EMBEDDED_PLUGINS) $(CARGO) build --locked \
			--profile $(EMBEDDED_PROFILE) --target $$target --target-dir $(EMBEDDED_TARGET_DIR) \
			--bin contour-embedded-floor) || exit 1; \
	done
	$(call embedded_run,$(EMBEDDED_ARM),$(QEMU_ARM),contour-embedded-floor,-floor)
	$(call embedded_run,$(EMBEDDED_RISCV),$(QEMU_RISCV),contour-embedded-floor,-floor)

# The 256 KiB-RAM part: its own target folder (other features), logs TARGET-part.log.
EMBEDDED_PART_TARGET_DIR := target/part
embedded-part: embedded-plugins
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "embedded: building the firmware for $$target, 256 KiB-RAM part ($(EMBEDDED_PROFILE))"; \
		(cd $(EMBEDDED_DIR) && CONTOUR_EMBEDDED_PLUGINS=$(CURDIR)/$(EMBEDDED_PLUGINS) $(CARGO) build --locked \
			--profile $(EMBEDDED_PROFILE) --target $$target --target-dir $(EMBEDDED_PART_TARGET_DIR) \
			--features part-256k --bin contour-embedded-demo) || exit 1; \
	done
	$(call embedded_run,$(EMBEDDED_ARM),$(QEMU_ARM),contour-embedded-demo,-part,$(EMBEDDED_PART_TARGET_DIR))
	$(call embedded_run,$(EMBEDDED_RISCV),$(QEMU_RISCV),contour-embedded-demo,-part,$(EMBEDDED_PART_TARGET_DIR))

# Runs one firmware under QEMU: $(1) target, $(2) QEMU command, $(3) binary (default the demo),
# $(4) log name suffix (default none), $(5) target folder (default the firmware's). The log is
# kept; the exit status is QEMU's.
define embedded_run
	@mkdir -p $(EMBEDDED_LOGS)
	@echo '$$ $(2) $(EMBEDDED_DIR)/$(or $(5),$(EMBEDDED_TARGET_DIR))/$(1)/$(EMBEDDED_PROFILE)/$(or $(3),contour-embedded-demo)'
	@status=0; timeout $(EMBEDDED_QEMU_TIMEOUT) $(2) \
		$(EMBEDDED_DIR)/$(or $(5),$(EMBEDDED_TARGET_DIR))/$(1)/$(EMBEDDED_PROFILE)/$(or $(3),contour-embedded-demo) \
		> $(EMBEDDED_LOGS)/$(1)$(4)$(EMBEDDED_LOG_SUFFIX).log 2>&1 < /dev/null || status=$$?; \
	cat $(EMBEDDED_LOGS)/$(1)$(4)$(EMBEDDED_LOG_SUFFIX).log; \
	if [ $$status -ne 0 ]; then echo "embedded: $(1) $(or $(3),contour-embedded-demo) exited with status $$status"; exit 1; fi
endef

embedded: embedded-firmware
	$(call embedded_run,$(EMBEDDED_ARM),$(QEMU_ARM))
	$(call embedded_run,$(EMBEDDED_RISCV),$(QEMU_RISCV))
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "embedded: $$target ($(EMBEDDED_PROFILE)): $$(python3 $(EMBEDDED_DIR)/flash_breakdown.py --total \
			$(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$$target/$(EMBEDDED_PROFILE)/contour-embedded-demo)"; \
	done

# Both profiles, both targets: the flash by crate, the floor and Contour's share over it, and the
# logs (heap high-water, wall time); then the 256 KiB-RAM part (flash, heap and stack high-water).
embedded-sizes:
	$(MAKE) embedded
	$(MAKE) embedded-floor
	$(MAKE) embedded EMBEDDED_PROFILE=release-o3
	$(MAKE) embedded-floor EMBEDDED_PROFILE=release-o3
	$(MAKE) embedded-part
	@for profile in release release-o3; do for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		suffix=$$([ $$profile = release ] || echo -$$profile); \
		dir=$(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$$target/$$profile; \
		echo "== $$target $$profile"; \
		python3 $(EMBEDDED_DIR)/flash_breakdown.py $$dir/contour-embedded-demo $(EMBEDDED_LOGS)/$$target$$suffix.log || exit 1; \
		grep -E '^figures|^trace=|stack_high_water' $(EMBEDDED_LOGS)/$$target$$suffix.log; \
		python3 $(EMBEDDED_DIR)/flash_breakdown.py --floor $$dir/contour-embedded-floor $$dir/contour-embedded-demo || exit 1; \
	done; done
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "== $$target release, 256 KiB-RAM part (part-256k)"; \
		python3 $(EMBEDDED_DIR)/flash_breakdown.py --total \
			$(EMBEDDED_DIR)/$(EMBEDDED_PART_TARGET_DIR)/$$target/release/contour-embedded-demo || exit 1; \
		size -A $(EMBEDDED_DIR)/$(EMBEDDED_PART_TARGET_DIR)/$$target/release/contour-embedded-demo | \
			awk '$$1 ~ /^\.(data|bss|uninit|heap|stack)$$/ { printf "  %s %d", $$1, $$2 } END { print "" }'; \
		grep -E '^embedded-demo target|^figures|^trace=|^replay|stack_high_water' $(EMBEDDED_LOGS)/$$target-part.log; \
	done

# core as the firmware builds it (plugins only, no `wasi-commands`): its own tests.
core-plugins-only:
	$(CARGO) test -q -p contour-core --no-default-features --lib

unit: embedded embedded-part core-plugins-only

.DEFAULT_GOAL := $(embedded_saved_goal)
