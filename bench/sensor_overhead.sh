#!/bin/sh
# bench/sensor_overhead.sh [REPS [CALLS]] - the libc sensor's added cost per
# traced call, and the cost of one active LTTng-UST tracepoint event measured
# in the same run, for comparison.
#
# Run from the top build directory after `make` (tapestry-collector, the
# sensor) and `make bench` (bench/sensor_overhead). Prints:
#  1. bench/sensor_overhead without the sensor and with libtapestry-sensor.so
#     preloaded, streaming to a real tapestry-collector on 127.0.0.1 that
#     writes the job directory in a temp dir (the analogue of LTTng's
#     consumer daemon writing its trace); BENCH_LEVELS=2 puts a node
#     collector in between, as in a real job (the collectors use next to no
#     CPU here: about 1.5 MB of compressed batches per run);
#  2. when liblttng-ust-dev is installed: bench/lttng_bench.c and the
#     provider bench/lttng_tp.{h,c} compiled here into the temp dir
#     (cc ... -llttng-ust -ldl), a private lttng-sessiond (LTTNG_HOME in the
#     temp dir; as root the LTTng part runs as user nobody, because a root
#     session daemon would use the system's /var/run/lttng), a session
#     writing to the temp dir with the event enabled, the loop, stop,
#     destroy, daemon killed;
#  3. a summary: median added ns per call of both, and their ratio.
# Everything (collectors, session daemon, temp dir, LTTng's /dev/shm wait
# files this run created) is removed on exit.
set -u
B=$(pwd)
S=$(cd "$(dirname "$0")/.." && pwd)	# source tree
SO=$B/sensor/.libs/libtapestry-sensor.so
BIN=$B/bench/sensor_overhead
COL=$B/tapestry-collector
for f in "$SO" "$BIN" "$COL"; do
	[ -f "$f" ] || { echo "missing $f: run make and make bench" >&2; exit 1; }
done
T=$(mktemp -d /tmp/tapestry-bench.XXXXXX) || exit 1
L=$T/lttng			# everything LTTng: home, program, trace
LH=$L/home			# LTTNG_HOME of the private session daemon
RPID=
NPID=
SESSION=
SHM_BEFORE=$(ls /dev/shm 2>/dev/null | grep '^lttng-ust-wait-' || true)

# shellcheck source=bench/lttng_lib.sh
. "$S/bench/lttng_lib.sh"

cleanup() {
	stop_lttng
	for p in $NPID $RPID; do
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# col_start NAME ARGS...: a collector on a free port; sets CPID, CPORT
col_start() {
	cname=$1
	shift
	: > "$T/$cname.out"	# not a previous collector's port
	"$COL" --print-port --log-level warn "$@" > "$T/$cname.out" \
		2> "$T/$cname.log" &
	CPID=$!
	CPORT=
	i=0
	while [ -z "$CPORT" ] && [ $i -lt 500 ]; do
		CPORT=$(sed -n 's/^listening .*:\([0-9][0-9]*\)$/\1/p' \
			"$T/$cname.out" 2>/dev/null)
		i=$((i + 1))
		sleep 0.01
	done
	[ -n "$CPORT" ] || { echo "collector did not start" >&2; exit 1; }
}
mkdir "$T/job"
col_start root --listen 127.0.0.1:0 --output "$T/job"
RPID=$CPID
PATHDESC="sensor -> collector writing the job directory"
if [ "${BENCH_LEVELS:-1}" = 2 ]; then
	col_start node --listen 127.0.0.1:0 --parent "127.0.0.1:$CPORT"
	NPID=$CPID
	PATHDESC="sensor -> node collector -> root collector"
fi

echo "== without the sensor"
timeout 600 "$BIN" "$@"
echo "== with libtapestry-sensor.so preloaded ($PATHDESC)"
timeout 600 env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR="127.0.0.1:$CPORT" \
	"$BIN" "$@" > "$T/sensor.txt" || { cat "$T/sensor.txt"; exit 1; }
cat "$T/sensor.txt"

# lttng_run: the LTTng-UST part; prints why when it cannot be measured
lttng_run() {
	CC=${CC:-cc}
	lttng_tools_ok || return 1
	mkdir -p "$LH"
	chmod 711 "$T"
	chmod 755 "$L"
	if ! "$CC" -O2 -g -I"$S/bench" -o "$L/lttng_bench" \
		"$S/bench/lttng_bench.c" "$S/bench/lttng_tp.c" \
		-llttng-ust -ldl > "$T/cc.log" 2>&1; then
		echo "the tracepoint program does not compile:"
		cat "$T/cc.log"
		return 1
	fi
	if ! start_sessiond "$T/sessiond.log"; then
		echo "lttng-sessiond could not start:"
		cat "$T/sessiond.log"
		return 1
	fi
	if ! session_start tapestry-bench "$T/lttng.log"; then
		echo "the LTTng session could not be set up:"
		cat "$T/lttng.log"
		return 1
	fi
	as_lttng "$L/lttng_bench" "$@" > "$T/lttng.txt" 2>&1
	rc=$?
	cat "$T/lttng.txt"
	disc=$(session_stop)
	echo "  events discarded by LTTng: $disc; trace written:" \
		"$(du -sh "$LH"/trace-* 2>/dev/null | cut -f1 | head -n 1)"
	[ "$disc" = 0 ] ||
		echo "  (discarded events make the LTTng figure look cheaper)"
	stop_lttng
	return $rc
}

echo "== LTTng-UST tracepoint (same run)"
lttng_run "$@"
lttng_ok=$?

median() {	# median FILE LABEL: the ns figure on the line starting LABEL
	sed -n "s/^  $2 *\([0-9.-]*\) ns.*/\1/p" "$1" | head -n 1
}
echo "== summary: median ns per write(2) of 64 B (shared machine: figures"
echo "   vary from run to run)"
s_add=$(median "$T/sensor.txt" added)
printf '  tapestry sensor: %s (libc write) -> %s traced, added %s\n' \
	"$(median "$T/sensor.txt" 'untraced (libc write)')" \
	"$(median "$T/sensor.txt" 'through write symbol')" "$s_add"
if [ $lttng_ok = 0 ]; then
	l_add=$(median "$T/lttng.txt" added)
	printf '  LTTng-UST event: %s (write alone) -> %s with the tracepoint, added %s\n' \
		"$(median "$T/lttng.txt" 'untraced (write alone)')" \
		"$(median "$T/lttng.txt" 'write + tracepoint')" "$l_add"
	awk -v s="$s_add" -v l="$l_add" 'BEGIN {
		if (l > 0) printf "  ratio sensor / LTTng-UST: %.2f\n", s / l }'
else
	echo "  LTTng-UST event: not measured (see above)"
fi
echo "  target: sensor at most 30 ns added (MISSION.md: LTTng-UST about 105)"
