#!/usr/bin/env bash
# The wall time and peak RSS of every flood and load case of promise 8 ("limits hold"), through
# the release `tdm` binary: each case is one the limits issue found running for minutes or
# holding hundreds of MiB, and std-host/tdm/tests/limits.rs, file_reads.rs and install_checks.rs hold
# its verdict. This script only measures (`make limits-figures`); it fails when a case does not
# end the way its test says, so a figure is never one of a broken run.
#
#   mk/limits-figures.sh TDM_BINARY
set -euo pipefail

tdm=$(realpath "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$here/std-host/fixtures"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TDM_WORKSPACE="$work/ws"

huge_fuel=1000000000000
printf '%-58s %9s %11s  %s\n' case "wall s" "peak RSS" "how it ended"

# measure NAME EXPECTED_EXIT EXPECTED_TEXT -- ARGS...: runs tdm ARGS under a 60 s cut-off and
# prints its wall time and peak RSS; EXPECTED_TEXT must appear in its stdout or stderr.
measure() {
    local name=$1 want_exit=$2 want_text=$3
    shift 4
    local rc=0
    timeout 60 /usr/bin/time -f '%e %M' -o "$work/time" "$tdm" "$@" </dev/null >"$work/out" 2>"$work/err" || rc=$?
    read -r wall rss < <(tail -n 1 "$work/time") || true
    local said
    said=$(cat "$work/out" "$work/err")
    if [ "$rc" != "$want_exit" ] || ! grep -qF -- "$want_text" <<<"$said"; then
        echo "FAILED: $name exited $rc (expected $want_exit with \"$want_text\"):" >&2
        head -c 2000 <<<"$said" >&2
        exit 1
    fi
    printf '%-58s %9s %8s KiB  exit %s, %s (%s bytes out)\n' "$name" "$wall" "$rss" "$rc" "$want_text" \
        "$(($(wc -c <"$work/out") + $(wc -c <"$work/err")))"
}

run_cut() { measure "$1" 1 deadline_exceeded -- run "$fixtures/limits/$2" x --timeout 0.3 --fuel $huge_fuel; }
run_cut "run: _initialize loops (--timeout 0.3, 1e12 fuel)" initialize_loop.wat
measure "run: start function loops (its fixed 1e7 fuel slice)" 1 fuel_exhausted -- \
    run "$fixtures/limits/start_loop.wat" x --timeout 0.3 --fuel $huge_fuel
run_cut "run: start function sleeps" start_sleep.wat
run_cut "run: poll_oneoff 1 ms sleeps in a loop" sleep_loop.wat
measure "exec: _start loops (--timeout 0.3, 1e12 fuel)" 127 deadline_exceeded -- \
    exec --timeout 0.3 --fuel $huge_fuel "$fixtures/limits/command_loop.wat"

mkdir -p "$work/listed"
for i in $(seq 0 199); do printf x >"$work/listed/file-$(printf %04d "$i").txt"; done
for mode in r:"random_get of 16 MiB" w:"fd_write of 1,000,000 iovecs" p:"poll_oneoff of 100,000 subscriptions" \
    d:"fd_readdir of 200 entries"; do
    measure "exec flood: ${mode#*:}, in a loop" 127 deadline_exceeded -- exec --timeout 0.3 --fuel $huge_fuel \
        --dir "$work/listed" "$fixtures/limits/command_flood.wat" -- "${mode%%:*}"
done

measure "exec flood: one fd_read of 32M buffers, in a loop" 127 deadline_exceeded -- exec --timeout 0.3 \
    --fuel $huge_fuel --max-memory 256MiB --dir "$work/listed" "$fixtures/limits/command_read_flood.wat"

mkdir -p "$work/dist" "$work/root"
mkfifo "$work/dist/pipe" "$work/root/pipe"
measure "run: dist.read of a FIFO" 0 "named pipe" -- run "$fixtures/forward.wat" forward --dist "$work/dist" \
    --params '{"jsonrpc":"2.0","id":1,"method":"dist.read","params":{"path":"pipe"}}'
measure "exec: open a FIFO in a --dir preopen" 63 "" -- exec "$fixtures/files.wat" --dir "$work/root" -- cat pipe

# Two binary modules: 30 passive element segments of 100,000 function references each, and
# 300 imports named by 3,000 ESC characters each.
python3 - "$work/elements.wasm" "$work/names.wasm" <<'EOF'
import sys
def uleb(n):
    out = bytearray()
    while True:
        byte = n & 0x7f
        n >>= 7
        if n == 0:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)
def name(text):
    return uleb(len(text)) + text
def section(id, payload):
    return bytes([id]) + uleb(len(payload)) + payload
header = b"\0asm\x01\0\0\0" + section(1, bytes([1, 0x60, 0, 0]))
elements = uleb(30) + b"".join(bytes([1, 0]) + uleb(100_000) + bytes(100_000) for _ in range(30))
open(sys.argv[1], "wb").write(header + section(3, bytes([1, 0])) + section(9, elements) + section(10, bytes([1, 2, 0, 0x0b])))
escape = b"\x1b" * 3000
imports = uleb(300) + b"".join(name(escape + str(i).encode()) + name(escape) + bytes([0, 0]) for i in range(300))
memory = section(5, bytes([1, 0, 1])) + section(7, bytes([1]) + name(b"memory") + bytes([2, 0]))
open(sys.argv[2], "wb").write(header + section(2, imports) + memory)
EOF
measure "run: 3,000,000 passive element items" 1 module_too_large -- run "$work/elements.wasm" x
measure "run: 300 imports named by 3,000 control characters" 1 import_not_allowed -- run "$work/names.wasm" x

python3 -c 'import sys; sys.stdout.write("(module\n" + "(func)\n" * 4_000_000 + "(oops)")' >"$work/broken.wat"
measure "inspect: a 28 MB .wat (over the 2 MiB text bound)" 2 "it was not read" -- inspect "$work/broken.wat"
python3 -c 'import sys; sys.stdout.write("(module (func " + "(block)" * 299_000 + " (oops)))")' >"$work/blocks.wat"
measure "inspect: 2 MiB of (block)s with a syntax error at the end" 1 "blocks.wat" -- inspect "$work/blocks.wat"

: >"$work/sparse.wasm"
truncate -s 1G "$work/sparse.wasm"
measure "run: a sparse 1 GiB module" 2 "it was not read" -- run "$work/sparse.wasm" x

# Packages: a sparse 1 GiB module, and a good module with a sparse 1 GiB extra file.
package() {
    local dir=$1 module=$2 sha=$3
    mkdir -p "$dir/dist"
    printf 'id = "p"\nversion = "1.0.0"\nname = "p"\ndescription = "figures"\nmodule = "dist/%s"\nsha256 = "%s"\n' \
        "$module" "$sha" >"$dir/plugin.toml"
}
package "$work/pkg-module" plugin.wasm "$(printf '0%.0s' $(seq 64))"
truncate -s 1G "$work/pkg-module/dist/plugin.wasm"
measure "install: a package with a sparse 1 GiB module" 1 "it was not read" -- install "$work/pkg-module"
cp "$here/examples/echo/echo.wat" "$work/echo.wat"
package "$work/pkg-extra" echo.wat "$(sha256sum "$work/echo.wat" | cut -d' ' -f1)"
cp "$work/echo.wat" "$work/pkg-extra/dist/echo.wat"
truncate -s 1G "$work/pkg-extra/dist/huge.bin"
measure "install: a package with a sparse 1 GiB extra file" 1 "the limit is 134217728" -- install "$work/pkg-extra"
