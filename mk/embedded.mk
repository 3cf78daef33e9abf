# The embedded demo (embedded-demo/, a cargo workspace of its own): firmware that runs bundled
# plugins through contour-core on QEMU mps2-an386 (Cortex-M4F) and QEMU virt (RV32IMAC).
# Installs what is missing: the rustup targets, Debian's qemu-system-arm and qemu-system-misc.
#
#   make embedded         builds the Rust SDK plugin with a small shadow stack, the firmware for
#                         both targets (opt-level "z", fat LTO), runs both under QEMU; each log
#                         goes to target/embedded/TARGET.log; fails unless both exit 0
#   make embedded-sizes   flash and the largest symbols at opt-level "z" and at opt-level 3, both
#                         targets (the figures of embedded-demo/README.md)
#
# `make test` runs `make embedded` first (through `unit`): std-host/tdm/tests/embedded_demo.rs reads
# the logs and checks every outcome and fuel figure against the host's for the same plugins.

# Keep the including Makefile's default goal: this fragment's rules must not become it.
embedded_saved_goal := $(.DEFAULT_GOAL)

.PHONY: embedded embedded-toolchain embedded-plugins embedded-firmware embedded-sizes

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
	$(GUEST_CARGO) rustc --release --locked -p hello --target $(EMBEDDED_WASM) \
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
			--profile $(EMBEDDED_PROFILE) --target $$target --target-dir $(EMBEDDED_TARGET_DIR)) || exit 1; \
	done

# Runs one firmware under QEMU: $(1) target, $(2) QEMU command. The log is kept; the exit status is QEMU's.
define embedded_run
	@mkdir -p $(EMBEDDED_LOGS)
	@echo '$$ $(2) $(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$(1)/$(EMBEDDED_PROFILE)/contour-embedded-demo'
	@status=0; timeout $(EMBEDDED_QEMU_TIMEOUT) $(2) \
		$(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$(1)/$(EMBEDDED_PROFILE)/contour-embedded-demo \
		> $(EMBEDDED_LOGS)/$(1)$(EMBEDDED_LOG_SUFFIX).log 2>&1 < /dev/null || status=$$?; \
	cat $(EMBEDDED_LOGS)/$(1)$(EMBEDDED_LOG_SUFFIX).log; \
	if [ $$status -ne 0 ]; then echo "embedded: $(1) exited with status $$status"; exit 1; fi
endef

embedded: embedded-firmware
	$(call embedded_run,$(EMBEDDED_ARM),$(QEMU_ARM))
	$(call embedded_run,$(EMBEDDED_RISCV),$(QEMU_RISCV))
	@for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		echo "embedded: $$target ($(EMBEDDED_PROFILE)): $$(python3 $(EMBEDDED_DIR)/flash_breakdown.py --total \
			$(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$$target/$(EMBEDDED_PROFILE)/contour-embedded-demo)"; \
	done

# Both profiles, both targets: the flash by crate and the logs (heap high-water, wall time).
embedded-sizes:
	$(MAKE) embedded
	$(MAKE) embedded EMBEDDED_PROFILE=release-o3
	@for profile in release release-o3; do for target in $(EMBEDDED_ARM) $(EMBEDDED_RISCV); do \
		suffix=$$([ $$profile = release ] || echo -$$profile); \
		echo "== $$target $$profile"; \
		python3 $(EMBEDDED_DIR)/flash_breakdown.py $(EMBEDDED_DIR)/$(EMBEDDED_TARGET_DIR)/$$target/$$profile/contour-embedded-demo \
			$(EMBEDDED_LOGS)/$$target$$suffix.log || exit 1; \
		grep '^figures' $(EMBEDDED_LOGS)/$$target$$suffix.log; \
	done; done

unit: embedded

.DEFAULT_GOAL := $(embedded_saved_goal)
