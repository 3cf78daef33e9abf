#!/usr/bin/env bash
# The cross-architecture differential (mk/fuzz.mk, docs/fuzzing.md): generates COUNT wasm-smith
# modules from SEED and records two intents of each on this host (GENERATOR, `cross-cases`),
# replays every recording with contour-core alone on this host (NATIVE, `contour-replay`) and on
# the foreign one (the command after `--`, e.g. qemu-s390x ... contour-replay), and compares the
# two: a case agrees when both print the same line (digest, each intent's reason and fuel) and
# both replays reached the recording (`ok`). Prints and appends to REPORT one line:
#   fuzz-cross seed=S generated=G modules=M agreed=A disagreed=D cpu_s=C
# (M: the modules that loaded and were recorded; C: CPU seconds of generation and both replays).
# Exits 1 when any case disagrees or none was compared. Outputs stay in DIR (cases/, generate.txt, native.txt, foreign.txt).
#   fuzz/cross.sh COUNT SEED DIR REPORT GENERATOR NATIVE -- FOREIGN-COMMAND...
set -u
if [ $# -lt 8 ] || [ "$7" != "--" ]; then
	echo "usage: fuzz/cross.sh COUNT SEED DIR REPORT GENERATOR NATIVE -- FOREIGN-COMMAND..." >&2
	exit 2
fi
count=$1 seed=$2 dir=$3 report=$4 generator=$5 native=$6
shift 7
rm -rf "$dir/cases"
mkdir -p "$dir/cases" "$(dirname "$report")"
start_ticks=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
if ! "$generator" "$seed" "$count" "$dir/cases" >"$dir/generate.txt"; then
	echo "fuzz-cross: the generator failed (see $dir/generate.txt)" >&2
	exit 1
fi
# A replay that fails prints its case lines all the same (exit 1 when a case is not `ok`); one that
# cannot run at all leaves no lines, and its cases count as disagreeing.
"$native" --cases "$dir/cases" >"$dir/native.txt"
"$@" --cases "$dir/cases" >"$dir/foreign.txt"
end_ticks=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
cpu=$(awk -v t=$((end_ticks - start_ticks)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }')
# Case lines are `NAME DIGEST INTENTS VERDICT`; the host and count lines are left out.
line=$(awk -v seed="$seed" -v generated="$count" -v cpu="$cpu" '
	$1 == "host:" || $1 == "cases:" { next }
	FILENAME == ARGV[1] { native[$1] = $0; order[++n] = $1; next }
	{ foreign[$1] = $0 }
	END {
		for (i = 1; i <= n; i++) {
			name = order[i]
			present = (name in foreign)
			if (present && native[name] == foreign[name] && native[name] ~ / ok$/) { agreed++; continue }
			disagreed++
			if (disagreed <= 10) {
				print "  native:  " native[name] > "/dev/stderr"
				print "  foreign: " (present ? foreign[name] : name " missing") > "/dev/stderr"
			}
		}
		printf "fuzz-cross seed=%s generated=%d modules=%d agreed=%d disagreed=%d cpu_s=%s\n",
			seed, generated, n, agreed, disagreed, cpu
	}' "$dir/native.txt" "$dir/foreign.txt")
echo "$line" | tee -a "$report"
echo "  $(grep '^host:' "$dir/native.txt") | $(grep '^host:' "$dir/foreign.txt") | $(cat "$dir/generate.txt")"
# Fails on any disagreement, and when nothing was compared (a run that proves nothing).
case $line in
	*" modules=0 "*) exit 1 ;;
	*" disagreed=0 "*) exit 0 ;;
	*) exit 1 ;;
esac
