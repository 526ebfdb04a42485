#!/usr/bin/env bash
# bench/sustained.sh - a tracer's sustained cost on a cheap call (issue 23):
# bench/sustained.c, one self-timed loop of CALLS write(/dev/null, 64 B),
# R rounds, each running, interleaved:
#   plain        no tracer (the baseline)
#   floor        no tracer, a second thread that only sleeps with a
#                descriptor table of its own (sustained N own): what any
#                tracer with a thread such as tapestry's sender costs (glibc's
#                write takes its cancellation path); CPU tables only
#   stream       `tapestry run` (the libc sensor preloaded, a node and a root
#                collector on loopback on this machine, the default sensors
#                libc,mem), the sender streaming while the loop runs
#   postmortem   the same with TAPESTRY_MODE=postmortem (rings drained when
#                half full; a thread waits for room rather than drop)
#   lttng        when liblttng-ust-dev and lttng-tools are installed: the
#                loop built with the tapestry_bench:write tracepoint after
#                each write (bench/lttng_tp.{h,c}), a private lttng-sessiond
#                and a session recording it (8 x 8 MiB sub-buffers), its
#                consumer daemon writing the trace on this machine
# Prints per configuration the median ns per call over the rounds, the
# added ns against plain's median, and what was lost (tapestry: events
# counted lost in the job directory; LTTng: events discarded); for the
# tapestry runs also the sender thread's CPU time per record, from its own
# FLUSH (collecting and encoding a batch) and SEND (sending it) records,
# and the CPU time of every process of the run (the program, its sender
# thread, the collectors, `tapestry run`; children's CPU time as the shell
# sees it) per call beyond plain's: the marginal cost, from a second run of
# CALLS / 10 calls whose CPU is subtracted (start-up, calibrations, the
# end of the job are the same in both). CPU figures change little with the
# machine's load, unlike the wall time.
# Usage: bench/sustained.sh [BUILD_DIR] (default build/). Environment:
# R (5), CALLS (2000000), CONFIGS ("plain stream postmortem lttng").
# Target (issue 23): the sensor at most +30 ns per call, nothing lost.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
R=${R:-5} CALLS=${CALLS:-2000000} CONFIGS=${CONFIGS:-plain floor stream postmortem lttng}
TAP=$B/manager/tapestry
DUMP=$B/tests/sensor/dump_trace	# built by make check
[ -x "$TAP" ] || { echo "missing $TAP: run make"; exit 1; }
T=$(mktemp -d /tmp/tapestry-bench-sustained.XXXXXX) || exit 1
L=$T/lttng
LH=$L/home
SESSION=
SHM_BEFORE=$(ls /dev/shm 2>/dev/null | grep '^lttng-ust-wait-' || true)
# shellcheck source=bench/lttng_lib.sh
. "$top/bench/lttng_lib.sh"
trap 'stop_lttng; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
"${CC:-cc}" -O2 -o "$T/sustained" "$top/bench/sustained.c" || exit 1

have_lttng=0
case " $CONFIGS " in
*" lttng "*)
	if lttng_tools_ok; then
		mkdir -p "$LH"
		chmod 711 "$T"
		chmod 755 "$L"
		if ! "${CC:-cc}" -O2 -DWITH_LTTNG -I"$top/bench" -o "$L/sustained_lttng" \
			"$top/bench/sustained.c" "$top/bench/lttng_tp.c" -llttng-ust -ldl \
			> "$T/cc.log" 2>&1; then
			echo "the tracepoint program does not compile:"; cat "$T/cc.log"
		elif ! start_sessiond "$T/sessiond.log"; then
			echo "lttng-sessiond could not start:"; cat "$T/sessiond.log"
		else
			have_lttng=1
		fi
	fi ;;
esac

# sender_cpu CONFIG: "CONFIG encode_ns send_ns" per record into $T/sender
sender_cpu() {
	[ -x "$DUMP" ] || return 0
	"$DUMP" "$T/job" 2>/dev/null | awk -v c="$1" '
		/ name=flush / { for (i = 1; i <= NF; i++) {
			if ($i ~ /^cpu_ns=/) fc += substr($i, 8)
			if ($i ~ /^records=/) fr += substr($i, 9) } }
		/ name=send_batch / { for (i = 1; i <= NF; i++)
			if ($i ~ /^cpu_ns=/) sc += substr($i, 8) }
		END { if (fr) printf "%s %.1f %.1f\n", c, fc / fr, sc / fr }' >> "$T/sender"
}
ns() { sed -n 's/^sustained: ns_per_call \([0-9.]*\).*/\1/p' "$1"; }
# KC = children's CPU (user + system) in ns so far, from the shell's
# `times` (through files: in a pipe or $(...) it would run in a subshell
# of its own and see none of them)
kids_cpu() {
	times > "$T/times"
	awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) {
		split($i, a, "m"); t += a[1] * 60 + substr(a[2], 1, length(a[2]) - 1) }
		printf "%.0f\n", t * 1e9 }' "$T/times" > "$T/kc"
	read -r KC < "$T/kc"
}
# one_run CONFIG N: the loop of N calls under CONFIG; its children's CPU
# (ns) into $T/run_cpu, the program's output in $T/out, its errors in $T/err
one_run() {
	local c0
	kids_cpu
	c0=$KC
	case $1 in
	plain)
		"$T/sustained" "$2" > "$T/out" 2> "$T/err" || return 1 ;;
	floor)
		"$T/sustained" "$2" own > "$T/out" 2> "$T/err" || return 1 ;;
	*)
		rm -rf "${T:?}/job"
		TAPESTRY_MODE=$1 timeout 600 "$TAP" run -o "$T/job" -- \
			"$T/sustained" "$2" > "$T/out" 2> "$T/err" || return 1 ;;
	esac
	kids_cpu
	# the tree's, then the program's main thread and process (its line)
	echo "$((KC - c0)) $(sed -n 's/^sustained:.* cpu_main_ns \([0-9]*\) cpu_proc_ns \([0-9]*\).*/\1 \2/p' "$T/out")" > "$T/run_cpu"
}
SHORT=$((CALLS / 10))
echo "sustained loop: $CALLS x write(/dev/null, 64 B), $R rounds of [$CONFIGS]"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$R"); do
	for c in $CONFIGS; do
		lost=0
		case $c in
		plain|floor|stream|postmortem)
			# the short run first: the long one's job is read below
			one_run "$c" "$SHORT" && cp "$T/run_cpu" "$T/short_cpu" &&
				one_run "$c" "$CALLS" ||
				{ cat "$T/out" "$T/err"; exit 1; }
			# marginal ns per call: tree, main thread, process
			paste -d' ' "$T/run_cpu" "$T/short_cpu" | awk -v c="$c" -v n=$((CALLS - SHORT)) \
				'{ printf "%s %.1f %.1f %.1f\n", c, ($1 - $4) / n, ($2 - $5) / n, ($3 - $6) / n }' >> "$T/cpu"
			if [ "$c" != plain ] && [ "$c" != floor ]; then
				lost=$("$TAP" report "$T/job" 2>/dev/null |
					sed -n 's/^losses *\([0-9]*\) events counted lost.*/\1/p')
				sender_cpu "$c"
			fi ;;
		lttng)
			[ $have_lttng = 1 ] || continue
			session_start "b$i" "$T/lttng.log" || { cat "$T/lttng.log"; exit 1; }
			as_lttng "$L/sustained_lttng" "$CALLS" > "$T/out" 2>&1
			lost=$(session_stop)
			rm -rf "$LH/trace-b$i" ;;
		esac
		echo "$c $(ns "$T/out") ${lost:-?}" >> "$T/all"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
base=$(awk '$1 == "plain" { print $2 }' "$T/all" | med)
printf '%-12s %12s %10s %8s  %s\n' config ns_per_call added lost "per round"
for c in $CONFIGS; do
	m=$(awk -v c="$c" '$1 == c { print $2 }' "$T/all" | med)
	[ -n "$m" ] || { echo "$c: not measured"; continue; }
	printf '%-12s %12s %10s %8s  %s\n' "$c" "$m" \
		"$(awk -v m="$m" -v b="${base:-0}" 'BEGIN { printf "%+.1f", m - b }')" \
		"$(awk -v c="$c" '$1 == c { print $3 }' "$T/all" | sort -g | tail -n 1)" \
		"$(awk -v c="$c" '$1 == c { printf "%s ", $2 }' "$T/all")"
done
if [ -s "$T/sender" ]; then
	echo "sender thread CPU per record (median over rounds): encode (FLUSH), send (SEND)"
	for c in stream postmortem; do
		e=$(awk -v c="$c" '$1 == c { print $2 }' "$T/sender" | med)
		s=$(awk -v c="$c" '$1 == c { print $3 }' "$T/sender" | med)
		[ -n "$e" ] && printf '  %-12s %8s ns %8s ns\n' "$c" "$e" "$s"
	done
fi
if [ -s "$T/cpu" ]; then
	echo "CPU ns per call, marginal, medians over rounds: every process of"
	echo "the run (and beyond plain), the program's main thread, its other"
	echo "threads (the sender), the rest (the collectors, and tapestry run,"
	echo "which reads the whole job at the end)"
	printf '  %-12s %8s %8s %8s %8s %8s\n' config all added main sender rest
	cb=$(awk '$1 == "plain" { print $2 }' "$T/cpu" | med)
	for c in plain floor stream postmortem; do
		a=$(awk -v c="$c" '$1 == c { print $2 }' "$T/cpu" | med)
		[ -n "$a" ] || continue
		m=$(awk -v c="$c" '$1 == c { print $3 }' "$T/cpu" | med)
		o=$(awk -v c="$c" '$1 == c { print $4 - $3 }' "$T/cpu" | med)
		r=$(awk -v c="$c" '$1 == c { print $2 - $4 }' "$T/cpu" | med)
		printf '  %-12s %8s %+8.1f %8s %8s %8s\n' "$c" "$a" \
			"$(awk -v a="$a" -v b="${cb:-0}" 'BEGIN { print a - b }')" "$m" "$o" "$r"
	done
fi
echo "target (issue 23): tapestry at most +30 ns per call, nothing lost"
