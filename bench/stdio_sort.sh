#!/usr/bin/env bash
# bench/stdio_sort.sh - what tracing costs GNU sort on a large file (issue
# 31: sort reads with fread_unlocked and writes a fwrite_unlocked per line,
# millions of buffered calls). In one run, interleaved pairs (the order
# alternates): `sort -n FILE > OUT` untraced, and the same under
# `tapestry run` (collectors started, the trace written, as a user runs
# it). For each: sort's own wall and CPU time (user + system, its threads
# included, from /usr/bin/time run inside: the sensor traces it too), and
# the wall time of the whole `tapestry run`; the ratios of the medians
# (target: sort's at most 1.10). Then the trace is checked byte-exact: the
# bytes the CSV export shows read from FILE and written to stdout equal
# FILE's size; and the fwrite runs' spans against the time inside their
# calls (in_calls_ns, what the profile counts as I/O).
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
# sort's "wall cpu" as /usr/bin/time wrote it in FILE
tm() { awk '/^TM / { printf "%s %s", $2, $3 + $4 }' "$1"; }
plain() {
	/usr/bin/time -o "$T/tm" -f 'TM %e %U %S' sort -n "$T/in.txt" \
		> "$T/out.plain" || exit 1
	tm "$T/tm"
}
traced() {
	local t0 t1
	rm -rf "$T/job"
	t0=$(now)
	"$TAP" run -o "$T/job" -- /usr/bin/time -o "$T/tm" -f 'TM %e %U %S' \
		sort -n "$T/in.txt" > "$T/out.traced" \
		2> "$T/run.err" || { cat "$T/run.err"; exit 1; }
	t1=$(now)
	echo "$(tm "$T/tm") $(echo "$t1 - $t0" | bc)"
}
uw=(); uc=(); tw=(); tc=(); rw=()
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 1 ]; then
		a=$(plain); b=$(traced)
	else
		b=$(traced); a=$(plain)
	fi
	set -- $a $b
	uw+=("$1"); uc+=("$2"); tw+=("$3"); tc+=("$4"); rw+=("$5")
	printf 'pair %d: sort untraced %.2f s (cpu %.2f), traced %.2f s (cpu %.2f), tapestry run %.2f s; wall ratio %.3f, cpu ratio %.3f\n' \
		"$i" "$1" "$2" "$3" "$4" "$5" "$(echo "$3 / $1" | bc -l)" \
		"$(echo "$4 / $2" | bc -l)"
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
a=$(med "${uw[@]}"); b=$(med "${tw[@]}"); c=$(med "${uc[@]}"); d=$(med "${tc[@]}")
e=$(med "${rw[@]}")
printf 'median: sort untraced %.2f s (cpu %.2f), traced %.2f s (cpu %.2f), tapestry run %.2f s\n' \
	"$a" "$c" "$b" "$d" "$e"
printf 'ratios of the medians: sort wall %.3f (target <= 1.10), sort cpu %.3f, tapestry run / untraced %.3f\n' \
	"$(echo "$b / $a" | bc -l)" "$(echo "$d / $c" | bc -l)" "$(echo "$e / $a" | bc -l)"
cmp -s "$T/out.plain" "$T/out.traced" || echo "OUTPUT DIFFERS"
"$TAP" export -f csv -o "$T/t.csv" "$T/job" 2>/dev/null
grep -v '^tapestry:' "$T/run.err"
awk -F, -v in_="$T/in.txt" '
	function calls(a) { return match(a, /count=[0-9]+/) ? substr(a, RSTART + 6, RLENGTH - 6) : 1 }
	$3 == "fread" && $10 == in_ { rd += $6 }
	$3 == "fwrite" && $9 == 1 { wr += $6 }
	$3 == "fwrite" { rec++; n += calls($14); span += $5 - $4
		inc += match($14, /in_calls_ns=[0-9]+/) ? substr($14, RSTART + 12, RLENGTH - 12) : $5 - $4 }
	END { printf "trace: %d bytes read from the input, %d written to stdout; %d fwrite calls in %d records\n", rd, wr, n, rec
	      printf "fwrite records: %.3f s from first call to last, %.3f s inside the calls (the I/O time the profile counts)\n", span / 1e9, inc / 1e9 }' \
	"$T/t.csv"
