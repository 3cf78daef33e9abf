# The cross-architecture replay proof (docs/ABI.md, determinism): conformance/replay
# (`contour-replay`, contour-core alone) is built for foreign targets and replays every
# conformance trace under an emulator; each must give the digest recorded on x86_64.
#
#   make cross-s390x    big-endian s390x under qemu-s390x (part of `make test`), then a bounded
#                       run of the cross-architecture differential (`fuzz-cross`, mk/fuzz.mk) of
#                       FUZZ_CROSS_BOUNDED wasm-smith modules
#   make cross          aarch64, s390x, armv7 (32-bit) under qemu-user, x86_64 Windows under Wine
#
# Each target installs what it needs (Debian's cross gcc and emulators, the rustup target).

cross_saved_goal := $(.DEFAULT_GOAL)

.PHONY: cross cross-s390x replay-s390x cross-aarch64 cross-armv7 cross-windows replay-native

CROSS_TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
REPLAY_BUILD = $(CARGO) build -q -p contour-replay --profile cross --target
REPLAY_BIN = $(CROSS_TARGET_DIR)/$(1)/cross/contour-replay

# $(1) rustup target, $(2) Debian packages, $(3) a command the packages provide.
define cross_setup
	@rustup target list --installed | grep -qx $(1) || rustup target add $(1)
	@command -v $(3) >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(2))
endef

replay-native: embedded-plugins
	$(CARGO) run -q -p contour-replay

# The s390x replay binary and its emulator (also what `make fuzz-cross` replays with).
S390X_REPLAY = qemu-s390x -L /usr/s390x-linux-gnu $(call REPLAY_BIN,s390x-unknown-linux-gnu)
replay-s390x: embedded-plugins
	$(call cross_setup,s390x-unknown-linux-gnu,gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user,qemu-s390x)
	@command -v s390x-linux-gnu-gcc >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc-s390x-linux-gnu libc6-dev-s390x-cross)
	CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc $(REPLAY_BUILD) s390x-unknown-linux-gnu

cross-s390x: replay-s390x fuzz-cross-tools
	$(S390X_REPLAY)
	$(call fuzz_cross,$(FUZZ_CROSS_BOUNDED))

cross-aarch64: embedded-plugins
	$(call cross_setup,aarch64-unknown-linux-gnu,gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user,qemu-aarch64)
	@command -v aarch64-linux-gnu-gcc >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
	CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc $(REPLAY_BUILD) aarch64-unknown-linux-gnu
	qemu-aarch64 -L /usr/aarch64-linux-gnu $(call REPLAY_BIN,aarch64-unknown-linux-gnu)

cross-armv7: embedded-plugins
	$(call cross_setup,armv7-unknown-linux-gnueabihf,gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user,qemu-arm)
	@command -v arm-linux-gnueabihf-gcc >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
	CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc $(REPLAY_BUILD) armv7-unknown-linux-gnueabihf
	qemu-arm -L /usr/arm-linux-gnueabihf $(call REPLAY_BIN,armv7-unknown-linux-gnueabihf)

# Wine's 64-bit loader is /usr/lib/wine/wine64 (the `wine` wrapper looks for a 32-bit prefix).
WINDOWS_BIN := $(CROSS_TARGET_DIR)/x86_64-pc-windows-gnu/cross
cross-windows: embedded-plugins
	$(call cross_setup,x86_64-pc-windows-gnu,gcc-mingw-w64-x86-64 wine64,x86_64-w64-mingw32-gcc)
	@test -x /usr/lib/wine/wine64 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y wine64)
	CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc $(REPLAY_BUILD) x86_64-pc-windows-gnu
	x86_64-w64-mingw32-gcc -shared -O2 -o $(WINDOWS_BIN)/bcryptprimitives.dll \
		conformance/replay/windows/bcryptprimitives.c -ladvapi32
	WINEDEBUG=-all WINEPREFIX=$(abspath $(CROSS_TARGET_DIR))/wine-prefix /usr/lib/wine/wine64 $(WINDOWS_BIN)/contour-replay.exe

cross: cross-aarch64 cross-s390x cross-armv7 cross-windows

.DEFAULT_GOAL := $(cross_saved_goal)
