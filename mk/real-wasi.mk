# Real programs through `tdm exec` (not part of `make test`: building them takes minutes):
# ripgrep 15.2.0 and jaq 1.5.1 (--no-default-features) from crates.io for wasm32-wasip1 into
# target/real-wasi/bin/, then std-host/tdm/tests/real_wasi.rs against the release `tdm`: file search,
# directory walk, stdin filters, args/env/clock, piped output and `| head -1`, a write refused
# under --dir and done under --dir-rw,
# and the fuel per second each program used (the figure behind the default command budget).
#
# ripgrep builds from its own lockfile (--locked). jaq 1.5.1's lockfile pins `time` 0.3.20,
# which no longer compiles on Rust >= 1.80, so jaq resolves its dependencies afresh (jaq
# itself stays pinned at 1.5.1).

# Keep the including Makefile's default goal: this fragment's rules must not become it.
real_wasi_saved_goal := $(.DEFAULT_GOAL)

.PHONY: real-wasi real-wasi-programs

REAL_WASI_DIR := target/real-wasi
REAL_WASI_TARGET := wasm32-wasip1
REAL_WASI_RIPGREP := 15.2.0
REAL_WASI_JAQ := 1.5.1
REAL_WASI_INSTALL = $(CARGO) install --target $(REAL_WASI_TARGET) --root $(REAL_WASI_DIR) \
	--target-dir $(REAL_WASI_DIR)/build

real-wasi-programs:
	@rustup target list --installed | grep -qx $(REAL_WASI_TARGET) || rustup target add $(REAL_WASI_TARGET)
	$(REAL_WASI_INSTALL) --locked ripgrep@$(REAL_WASI_RIPGREP)
	$(REAL_WASI_INSTALL) --no-default-features jaq@$(REAL_WASI_JAQ)

real-wasi: real-wasi-programs
	REAL_WASI_BIN=$(abspath $(REAL_WASI_DIR)/bin) $(CARGO) test --release -p tdm --test real_wasi -- \
		--ignored --nocapture --test-threads 1

.DEFAULT_GOAL := $(real_wasi_saved_goal)
