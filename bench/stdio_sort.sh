#!/usr/bin/env bash
# bench/stdio_sort.sh - what tracing costs GNU sort on a large file (issue
# 31: sort reads with fread_unlocked and writes a fwrite_unlocked per line,
# millions of buffered calls). In one run, interleaved pairs (the order
# alternates): `sort -n FILE > OUT` untraced, and the same under
# `tapestry run` (collectors started, the trace written, as a user runs
# it); the wall time of each, the ratio of the medians (target: at most
# 1.10). Then the trace is checked byte-exact: the bytes the CSV export
# shows read from FILE and written to stdout equal FILE's size.
# Usage: bench/stdio_sort.sh [MB [PAIRS [BUILD_DIR]]] (100 MB, 3 pairs,
# build/)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
MB=${1:-100}
PAIRS=${2:-3}
B=${3:-$top/build}
TAP=$B/manager/tapestry
[ -x "$TAP" ] || { echo "missing $TAP: run make"; exit 1; }
T=$(mktemp -d /tmp/tapestry-bench-sort.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
awk -v n=$((MB * 1000000)) 'BEGIN { srand(7); s = 0
	while (s < n) { x = int(rand() * 1e9); printf "%d\n", x; s += length(x) + 1 } }' \
	> "$T/in.txt"
size=$(stat -c %s "$T/in.txt")
lines=$(wc -l < "$T/in.txt")
echo "input: $size bytes, $lines lines; $PAIRS pairs; $(nproc) cores"
now() { date +%s.%N; }
plain() {
	local t0 t1
	t0=$(now)
	sort -n "$T/in.txt" > "$T/out.plain" || exit 1
	t1=$(now)
	echo "$t1 - $t0" | bc
}
traced() {
	local t0 t1
	rm -rf "$T/job"
	t0=$(now)
	"$TAP" run -o "$T/job" -- sort -n "$T/in.txt" > "$T/out.traced" \
		2> "$T/run.err" || { cat "$T/run.err"; exit 1; }
	t1=$(now)
	echo "$t1 - $t0" | bc
}
u=()
t=()
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 1 ]; then
		a=$(plain); b=$(traced)
	else
		b=$(traced); a=$(plain)
	fi
	u+=("$a")
	t+=("$b")
	printf 'pair %d: untraced %.2f s, traced %.2f s, ratio %.3f\n' "$i" "$a" "$b" \
		"$(echo "$b / $a" | bc -l)"
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
mu=$(med "${u[@]}")
mt=$(med "${t[@]}")
printf 'median: untraced %.2f s, traced %.2f s, ratio %.3f (target <= 1.10)\n' \
	"$mu" "$mt" "$(echo "$mt / $mu" | bc -l)"
cmp -s "$T/out.plain" "$T/out.traced" || echo "OUTPUT DIFFERS"
"$TAP" export -f csv -o "$T/t.csv" "$T/job" 2>/dev/null
grep -v '^tapestry:' "$T/run.err"
awk -F, -v in_="$T/in.txt" '
	function calls(a) { return match(a, /count=[0-9]+/) ? substr(a, RSTART + 6, RLENGTH - 6) : 1 }
	$3 == "fread" && $10 == in_ { rd += $6 }
	$3 == "fwrite" && $9 == 1 { wr += $6 }
	$3 == "fwrite" { rec++; n += calls($14) }
	END { printf "trace: %d bytes read from the input, %d written to stdout; %d fwrite calls in %d records\n", rd, wr, n, rec }' \
	"$T/t.csv"
