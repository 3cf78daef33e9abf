#!/usr/bin/env bash
# Runs one fuzz target on one core for SECONDS (mk/fuzz.mk) and appends its summary line to
# REPORT: `TARGET execs=N cpu_s=S crashes=C`, C being the crash, timeout and OOM files this run
# left in fuzz/artifacts/TARGET. The full libFuzzer log goes beside REPORT.
#   fuzz/run-target.sh TARGET SECONDS REPORT
set -u
target=$1 seconds=$2 report=$3
toolchain=${FUZZ_TOOLCHAIN:-nightly}
target_dir=${FUZZ_TARGET_DIR:-target/fuzz-nightly}
log="$(dirname "$report")/fuzz-$target.log"
artifacts="fuzz/artifacts/$target"
mkdir -p "fuzz/corpus/$target" "$artifacts"
corpora=("fuzz/corpus/$target")
[ -d "fuzz/seeds/$target" ] && corpora+=("fuzz/seeds/$target")
# Files of the repository that are good seeds, read in place (libFuzzer writes only to the first
# corpus folder).
case $target in
	trace_decode) corpora+=(conformance/traces) ;;
	raw_module) corpora+=(conformance/fixtures examples/echo) ;;
	plugin_toml | hub_index | minisign) corpora+=(examples/hub) ;;
esac
before=$(find "$artifacts" -type f | wc -l)
start_ticks=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
# The binary `make fuzz-build` built, run directly: editing sources while a campaign runs never
# rebuilds in the middle of it, and the CPU time counted is the fuzzer's alone. One process, one
# job (the machine is shared); -timeout flags an input that runs over 30 s.
# A 256 MiB stack: under AddressSanitizer LLVM does not turn wasmi's tail-call dispatch into
# jumps, so a slice of Wasm (20,000 fuel) can nest one host frame per instruction; 8 MiB
# overflowed on a `return_call` loop that a build without ASan runs in a flat stack
# (docs/fuzzing.md, "Stack use under AddressSanitizer").
ulimit -s 262144
triple=$(rustc "+$toolchain" -vV | sed -n 's/^host: //p')
binary="$target_dir/$triple/release/$target"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=0} "$binary" "${corpora[@]}" \
	-max_total_time="$seconds" -print_final_stats=1 -timeout=30 -rss_limit_mb=2048 \
	-artifact_prefix="$artifacts/" >"$log" 2>&1
status=$?
end_ticks=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
hz=$(getconf CLK_TCK)
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
after=$(find "$artifacts" -type f | wc -l)
cpu=$(awk -v t=$((end_ticks - start_ticks)) -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }')
line="$target execs=${execs:-0} cpu_s=$cpu crashes=$((after - before)) exit=$status"
echo "$line" | tee -a "$report"
