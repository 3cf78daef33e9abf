# C and AssemblyScript guest SDKs: builds the example plugins into target/plugins/ and their
# installable packages (plugin.toml with the module's sha256, plus dist/) into target/packages/.
# Installs what is missing: clang + lld from Debian, the npm packages from the lockfile.
#
#   make c-examples    target/plugins/counter.wasm, target/plugins/malformed.wasm,
#                      target/plugins/hello-c.wasm, target/plugins/simd/hello-c.wasm
#   make as-examples   target/plugins/wordcount.wasm, target/plugins/hello-as.wasm,
#                      target/plugins/simd/hello-as.wasm
#   make c-as-sizes    the size of each module
#
# The modules in target/plugins/simd/ are the same plugins built with wasm SIMD (clang -msimd128,
# asc --enable simd): the SDKs then scan strings a 16-byte vector at a time. Only hosts that run
# SIMD load them, so the plain modules in target/plugins/ stay scalar.

# Keep the including Makefile's default goal: this fragment's rules must not become it.
c_as_saved_goal := $(.DEFAULT_GOAL)

EXAMPLES += c-examples as-examples

.PHONY: c-examples as-examples c-as-sizes c-toolchain as-toolchain

PLUGINS_DIR := target/plugins
PACKAGES_DIR := target/packages
C_SDK := guest-sdk/c
AS_SDK := guest-sdk/assemblyscript

# Debian's clang is `clang` (clang-14 on bookworm); its wasm32 linker is wasm-ld from lld, found
# either next to clang, on PATH as wasm-ld, or as wasm-ld-14 (clang 14 takes its absolute path in
# -fuse-ld=; it ignores --ld-path for wasm32). Expanded when a recipe runs, that
# is after c-toolchain installed them.
CLANG = $(shell command -v clang || command -v clang-14)
WASM_LD = $(shell p=$$($(CLANG) --target=wasm32 -print-prog-name=wasm-ld 2>/dev/null); \
	[ -x "$$p" ] && echo "$$p" || command -v wasm-ld || command -v wasm-ld-14 || \
	ls /usr/lib/llvm-*/bin/wasm-ld 2>/dev/null | head -n 1)
# -Os: about half the size of -O2 here (-O2 unrolls the byte loops); the SDK sets export names
# itself, the --export flags only make them explicit. -mbulk-memory: memcpy and memset become one
# memory.copy / memory.fill instruction (Contour charges one fuel per 64 bytes copied), not loops.
C_PLUGIN_CFLAGS ?= -Os -Wall -Wextra -Werror
C_PLUGIN_FLAGS = --target=wasm32 -mbulk-memory -nostdlib -ffreestanding $(C_PLUGIN_CFLAGS) -I $(C_SDK) \
	-fuse-ld=$(WASM_LD) -Wl,--no-entry -Wl,--export=tdm_alloc -Wl,--export=tdm_free \
	-Wl,--export=tdm_plugin_execute_intent -Wl,--stack-first -Wl,--strip-all

c-toolchain:
	@command -v clang >/dev/null && command -v wasm-ld >/dev/null || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y clang lld)

# An installable package: DIR/plugin.toml with the real sha256, and DIR/dist/NAME.wasm.
# $(1) example folder, $(2) name.
define c_as_package
	@mkdir -p $(PACKAGES_DIR)/$(2)/dist
	@cp $(PLUGINS_DIR)/$(2).wasm $(PACKAGES_DIR)/$(2)/dist/$(2).wasm
	@sed "s/^sha256 = .*/sha256 = \"$$(sha256sum $(PLUGINS_DIR)/$(2).wasm | cut -d' ' -f1)\"/" \
		$(1)/plugin.toml > $(PACKAGES_DIR)/$(2)/plugin.toml
endef

# The SDK's C files, compiled into every C plugin, and everything a rebuild depends on.
C_SDK_C := $(C_SDK)/tdm_plugin.c $(C_SDK)/tdm_json.c $(C_SDK)/tdm_alloc.c
C_SDK_SOURCES := $(C_SDK_C) $(C_SDK)/tdm_plugin.h $(C_SDK)/tdm_internal.h

$(PLUGINS_DIR)/counter.wasm: examples/c/counter/counter.c examples/c/counter/plugin.toml $(C_SDK_SOURCES) | c-toolchain
	@mkdir -p $(PLUGINS_DIR)
	$(CLANG) $(C_PLUGIN_FLAGS) -o $@ examples/c/counter/counter.c $(C_SDK_C)
	$(call c_as_package,examples/c/counter,counter)

$(PLUGINS_DIR)/malformed.wasm: examples/c/malformed/malformed.c examples/c/malformed/plugin.toml $(C_SDK_SOURCES) | c-toolchain
	@mkdir -p $(PLUGINS_DIR)
	$(CLANG) $(C_PLUGIN_FLAGS) -o $@ examples/c/malformed/malformed.c $(C_SDK_C)
	$(call c_as_package,examples/c/malformed,malformed)

$(PLUGINS_DIR)/hello-c.wasm: examples/c/hello/hello.c examples/c/hello/plugin.toml $(C_SDK_SOURCES) | c-toolchain
	@mkdir -p $(PLUGINS_DIR)
	$(CLANG) $(C_PLUGIN_FLAGS) -o $@ examples/c/hello/hello.c $(C_SDK_C)
	$(call c_as_package,examples/c/hello,hello-c)

# The same hello with wasm SIMD: the SDK's string scans take the `#ifdef __wasm_simd128__` path.
$(PLUGINS_DIR)/simd/hello-c.wasm: examples/c/hello/hello.c $(C_SDK_SOURCES) | c-toolchain
	@mkdir -p $(PLUGINS_DIR)/simd
	$(CLANG) $(C_PLUGIN_FLAGS) -msimd128 -o $@ examples/c/hello/hello.c $(C_SDK_C)

c-examples: $(PLUGINS_DIR)/counter.wasm $(PLUGINS_DIR)/malformed.wasm $(PLUGINS_DIR)/hello-c.wasm \
	$(PLUGINS_DIR)/simd/hello-c.wasm

as-toolchain:
	@command -v npm >/dev/null || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm)

# `npm ci` installs exactly the lockfile (assemblyscript pinned); redone when the lockfile changes.
$(AS_SDK)/node_modules/.package-lock.json: $(AS_SDK)/package.json $(AS_SDK)/package-lock.json | as-toolchain
	cd $(AS_SDK) && npm ci --no-audit --no-fund

AS_SDK_SOURCES := $(wildcard $(AS_SDK)/assembly/*.ts)

$(PLUGINS_DIR)/wordcount.wasm: examples/assemblyscript/wordcount/assembly/index.ts \
		examples/assemblyscript/wordcount/asconfig.json examples/assemblyscript/wordcount/plugin.toml \
		examples/assemblyscript/wordcount/tdm-intents.json $(AS_SDK)/transform/intents.mjs \
		$(AS_SDK_SOURCES) $(AS_SDK)/node_modules/.package-lock.json
	@mkdir -p $(PLUGINS_DIR)
	cd $(AS_SDK) && node_modules/.bin/asc ../../examples/assemblyscript/wordcount/assembly/index.ts \
		--config ../../examples/assemblyscript/wordcount/asconfig.json --target release -o ../../$@
	$(call c_as_package,examples/assemblyscript/wordcount,wordcount)

$(PLUGINS_DIR)/hello-as.wasm: examples/assemblyscript/hello/assembly/index.ts \
		examples/assemblyscript/hello/asconfig.json examples/assemblyscript/hello/plugin.toml \
		examples/assemblyscript/hello/tdm-intents.json $(AS_SDK)/transform/intents.mjs \
		$(AS_SDK_SOURCES) $(AS_SDK)/node_modules/.package-lock.json
	@mkdir -p $(PLUGINS_DIR)
	cd $(AS_SDK) && node_modules/.bin/asc ../../examples/assemblyscript/hello/assembly/index.ts \
		--config ../../examples/assemblyscript/hello/asconfig.json --target release -o ../../$@
	$(call c_as_package,examples/assemblyscript/hello,hello-as)

# The same hello with wasm SIMD: the SDK's string scans take the `ASC_FEATURE_SIMD` path.
$(PLUGINS_DIR)/simd/hello-as.wasm: examples/assemblyscript/hello/assembly/index.ts \
		examples/assemblyscript/hello/asconfig.json examples/assemblyscript/hello/tdm-intents.json \
		$(AS_SDK)/transform/intents.mjs $(AS_SDK_SOURCES) $(AS_SDK)/node_modules/.package-lock.json
	@mkdir -p $(PLUGINS_DIR)/simd
	cd $(AS_SDK) && node_modules/.bin/asc ../../examples/assemblyscript/hello/assembly/index.ts \
		--config ../../examples/assemblyscript/hello/asconfig.json --target release --enable simd -o ../../$@

as-examples: $(PLUGINS_DIR)/wordcount.wasm $(PLUGINS_DIR)/hello-as.wasm $(PLUGINS_DIR)/simd/hello-as.wasm

c-as-sizes: c-examples as-examples
	@for m in counter malformed hello-c wordcount hello-as; do \
		printf '%-12s %7d bytes  %s\n' $$m $$(wc -c < $(PLUGINS_DIR)/$$m.wasm) $(PLUGINS_DIR)/$$m.wasm; \
	done

.DEFAULT_GOAL := $(c_as_saved_goal)
