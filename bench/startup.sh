#!/usr/bin/env bash
# bench/startup.sh - what the libc sensor adds to a process's start and end
# (issue 31 item 4: at most 2 ms a traced process), traced against untraced
# in one run, interleaved.
#
# Workloads, each timed from inside (bash's $EPOCHREALTIME around the work,
# so the timing shell's own start and end are outside the figure):
#   true     N runs of /bin/true from a bash loop (N=200): N+0 processes
#   make     make -B of F small C files (F=7: a compile each and a link)
#   sort     sort of a 2 MB file of numbers piped into head
# Each round runs every workload untraced (bash -c) and traced (`tapestry
# run --sensors libc,mem -- bash -c ...`: the real collectors, started by
# run before the timed part), the pair's order alternating. The summary
# gives per workload the median untraced and traced ms, the median of the
# rounds' differences, the traced processes (from the job's report) and
# the added ms per traced process; and the load average before and after.
# Usage: bench/startup.sh [BUILD_DIR] (default build/). Environment: R
# (5 rounds), N (200), F (7), W (workloads, "true make sort"),
# SENSORS (libc,mem), EXTRA (environment of the traced runs, e.g.
# "TAPESTRY_END_WAIT=ack"), OLD (another build's
# libtapestry-sensor.so, e.g. the previous commit's: a third column
# "traced-old", TAPESTRY_SENSOR_LIB).
# Target (issue 31): added at most 2 ms a process.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
TAP=$B/manager/tapestry
R=${R:-5} N=${N:-200} F=${F:-7} SENSORS=${SENSORS:-libc,mem} OLD=${OLD:-}
W=${W:-true make sort} EXTRA=${EXTRA:-}
[ -x "$TAP" ] || { echo "missing $TAP: run make"; exit 1; }
command -v cc >/dev/null && command -v make >/dev/null || { echo "needs cc and make"; exit 1; }
T=$(mktemp -d /tmp/tapestry-bench-startup.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# the workloads' inputs
mkdir "$T/src"
for i in $(seq 1 "$F"); do
	printf 'int f%d(int x) { return x * %d + 1; }\n' "$i" "$i" >"$T/src/f$i.c"
done
{
	printf 'int main(void) { return 0; }\n'
} >"$T/src/main.c"
{
	printf 'OBJS = main.o'
	for i in $(seq 1 "$F"); do printf ' f%d.o' "$i"; done
	printf '\nprog: $(OBJS)\n\tcc -o prog $(OBJS)\n%%.o: %%.c\n\tcc -O0 -c $<\n'
} >"$T/src/Makefile"
seq 1 300000 | shuf --random-source=<(yes) >"$T/nums.txt"

# the timed part of each workload, as a bash script printing "ms X"
cat >"$T/true.sh" <<EOF
a=\$EPOCHREALTIME
for ((i = 0; i < $N; i++)); do /bin/true; done
b=\$EPOCHREALTIME
echo "ms \$(echo "(\${b/./} - \${a/./}) / 1000" | bc -l)" >&2
EOF
cat >"$T/make.sh" <<EOF
cd "$T/src" || exit 1
a=\$EPOCHREALTIME
make -s -B prog >/dev/null || exit 1
b=\$EPOCHREALTIME
echo "ms \$(echo "(\${b/./} - \${a/./}) / 1000" | bc -l)" >&2
EOF
cat >"$T/sort.sh" <<EOF
a=\$EPOCHREALTIME
sort -n "$T/nums.txt" | head -n 5 >/dev/null
b=\$EPOCHREALTIME
echo "ms \$(echo "(\${b/./} - \${a/./}) / 1000" | bc -l)" >&2
EOF

ms() { sed -n 's/^ms \([0-9.]*\)$/\1/p' "$1" | tail -n 1; }

# one NAME WORKLOAD [LIB]: a run; appends "WORKLOAD NAME ms procs"
one() {
	local name=$1 w=$2 lib=${3:-} procs=0
	if [ "$name" = untraced ]; then
		bash "$T/$w.sh" 2>"$T/err" || { cat "$T/err"; exit 1; }
	else
		rm -rf "${T:?}/job"
		env ${lib:+TAPESTRY_SENSOR_LIB=$lib} $EXTRA "$TAP" run -o "$T/job" \
			--sensors "$SENSORS" -- bash "$T/$w.sh" 2>"$T/err" >/dev/null ||
			{ cat "$T/err"; exit 1; }
		procs=$(sed -n 's/^tapestry: [0-9]* events from \([0-9]*\) processes.*/\1/p' "$T/err")
		grep -q 'none lost' "$T/err" || echo "note: $w $name: $(grep 'events from' "$T/err")"
	fi
	echo "$w $name $(ms "$T/err") ${procs:-0}" >>"$T/all"
}

echo "start-up: $N x /bin/true, make -B of $F files, sort | head of 300,000 numbers" \
	"(run: $W); $R rounds, traced (--sensors $SENSORS${EXTRA:+, $EXTRA}) and untraced interleaved"
echo "host: $(nproc) cores, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
names="untraced traced${OLD:+ traced-old}"
for r in $(seq 1 "$R"); do
	for w in $W; do
		order=$names
		[ $((r % 2)) = 0 ] && order=$(echo "$names" | tr ' ' '\n' | tac | tr '\n' ' ')
		for n in $order; do
			case $n in
			traced-old) one "$n" "$w" "$OLD" ;;
			*) one "$n" "$w" ;;
			esac
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
printf '%-6s %-11s %10s %10s %10s %7s %12s\n' work config untraced_ms traced_ms added_ms procs added_ms/proc
for w in $W; do
	for n in ${names#untraced }; do
		u=$(awk -v w="$w" '$1 == w && $2 == "untraced" {print $3}' "$T/all" | med)
		t=$(awk -v w="$w" -v n="$n" '$1 == w && $2 == n {print $3}' "$T/all" | med)
		p=$(awk -v w="$w" -v n="$n" '$1 == w && $2 == n {print $4}' "$T/all" | med)
		# per round: traced less the untraced run of the same round
		d=$(paste <(awk -v w="$w" '$1 == w && $2 == "untraced" {print $3}' "$T/all") \
			<(awk -v w="$w" -v n="$n" '$1 == w && $2 == n {print $3}' "$T/all") |
			awk '{print $2 - $1}' | med)
		# the timing shell is one of the processes, outside the figure
		pp=$((p > 1 ? p - 1 : 1))
		printf '%-6s %-11s %10.1f %10.1f %10.1f %7s %12.2f\n' "$w" "$n" "$u" "$t" "$d" "$pp" \
			"$(echo "$d / $pp" | bc -l)"
	done
done
echo "target (issue 31): added at most 2 ms a traced process"
