# The C API (c-api/, crate contour-c: libcontour.a, libcontour.so, c-api/include/contour.h) and
# its example host (examples/c-host/), docs/embedding-c.md.
#
#   make c-host         target/c-host/contour-run and target/c-host/bad_input (plain cc)
#   make c-host-check   runs them under valgrind (no error, no byte lost) and built with
#                       -fsanitize=address,undefined: the echo and the Rust hello example, a
#                       recording and its replay, and every bad input of bad_input.c
#   make c-firmware     the same as c-host-thumb (part of make test)
#   make c-host-thumb   contour-run linked with the no_std libcontour.a
#                       for thumbv7em-none-eabihf and newlib, run under QEMU's mps2-an386
#                       (Cortex-M4F): the same stdout and fuel as on this host, and a trace
#                       recorded on the board replays identically here (contour-run, tdm replay)

# Keep the including Makefile's default goal: this fragment's rules must not become it.
c_host_saved_goal := $(.DEFAULT_GOAL)

.PHONY: c-host c-host-modules c-host-check c-host-thumb c-host-thumb-tools c-firmware

# The C firmware: the C host on a Cortex-M4 board (QEMU), checked against this host.
c-firmware: c-host-thumb

C_HOST_OUT := target/c-host
C_HOST_RUN := $(C_HOST_OUT)/contour-run
C_HOST_VALGRIND := valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1

c-host:
	$(MAKE) -C examples/c-host ROOT=$(CURDIR) OUT=$(CURDIR)/$(C_HOST_OUT) CARGO="$(CARGO)"

# The WAT modules the checks run, compiled by the crate's own example (no wabt needed).
c-host-modules:
	@mkdir -p $(C_HOST_OUT)
	$(CARGO) run -q -p contour-c --example wat2wasm -- examples/echo/echo.wat $(C_HOST_OUT)/echo.wasm
	$(CARGO) run -q -p contour-c --example wat2wasm -- std-host/fixtures/forward.wat $(C_HOST_OUT)/forward.wasm

c-host-check: c-host c-host-modules rust-examples valgrind
	$(MAKE) -C examples/c-host ROOT=$(CURDIR) OUT=$(CURDIR)/$(C_HOST_OUT) CARGO="$(CARGO)" SANITIZE=1
	@set -e; for run in "$(C_HOST_OUT)/valgrind:$(C_HOST_VALGRIND) $(C_HOST_RUN)" "$(C_HOST_OUT)/asan:$(C_HOST_OUT)/asan/contour-run"; do \
		tag=$${run%%:*}; cmd=$${run#*:}; \
		echo "c-host-check: $$cmd"; \
		$$cmd $(C_HOST_OUT)/echo.wasm greet '{"name":"Ada"}' >/dev/null; \
		$$cmd target/plugins/hello.wasm greet '{"name":"Ada"}' --record $$tag.trace >/dev/null; \
		$$cmd target/plugins/hello.wasm greet --replay $$tag.trace >/dev/null; \
		rm -f $$tag.trace; \
	done
	$(C_HOST_VALGRIND) $(C_HOST_OUT)/bad_input $(C_HOST_OUT)/echo.wasm $(C_HOST_OUT)/forward.wasm >/dev/null
	$(C_HOST_OUT)/asan/bad_input $(C_HOST_OUT)/echo.wasm $(C_HOST_OUT)/forward.wasm >/dev/null
	@echo "c-host-check: valgrind and AddressSanitizer found nothing"

# Debian's bare-metal GCC with newlib, and QEMU for Cortex-M (installed when missing).
c-host-thumb-tools:
	@rustup target list --installed | grep -qx thumbv7em-none-eabihf || rustup target add thumbv7em-none-eabihf
	@command -v arm-none-eabi-gcc >/dev/null && test -e /usr/lib/arm-none-eabi/newlib/thumb/v7e-m+fp/hard/librdimon.a \
		|| (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi)
	@command -v qemu-system-arm >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-system-arm)

C_HOST_QEMU := timeout 300 qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic \
	-semihosting-config enable=on,target=native -kernel $(CURDIR)/$(C_HOST_OUT)/thumb/contour-run.elf -append

c-host-thumb: c-host c-host-modules c-host-thumb-tools rust-examples
	$(MAKE) -C examples/c-host ROOT=$(CURDIR) OUT=$(CURDIR)/$(C_HOST_OUT) CARGO="$(CARGO)" thumb
	$(CARGO) build -q -p tdm
	@set -e; cd $(C_HOST_OUT); rm -f thumb/hello.trace; \
	for module in echo.wasm ../plugins/hello.wasm; do \
		$(C_HOST_QEMU) "$$module greet {\"name\":\"Ada\"}" >thumb/out 2>thumb/err; \
		./contour-run $$module greet '{"name":"Ada"}' >thumb/host-out 2>thumb/host-err; \
		cmp thumb/out thumb/host-out || { echo "c-host-thumb: $$module: stdout differs"; exit 1; }; \
		test "$$(grep fuel_used thumb/err)" = "$$(grep fuel_used thumb/host-err)" || { echo "c-host-thumb: $$module: fuel differs"; exit 1; }; \
		echo "c-host-thumb: $$module on Cortex-M4: $$(cat thumb/out) $$(grep fuel_used thumb/err)"; \
	done; \
	$(C_HOST_QEMU) "../plugins/hello.wasm greet {\"name\":\"Grace\"} --record thumb/hello.trace" >/dev/null 2>&1; \
	./contour-run ../plugins/hello.wasm greet --replay thumb/hello.trace; \
	../debug/tdm replay thumb/hello.trace

.DEFAULT_GOAL := $(c_host_saved_goal)
