#!/bin/sh
# bench/soak.sh - soak test of the collector tree, run by hand (not in
# make check): 64 synthetic sensors -> node collector -> gateway -> root
# on loopback for SOAK_SECONDS (default 600), in runs of SOAK_RUN_S seconds
# (default 60: the 64 streams end with BYE and 64 new ones connect, so the
# stream tables churn too) at SOAK_RATE events/s in all (default 200000).
# Prints the resident size (VmRSS) of the three collectors every 30 s,
# then the growth from the first sample to the last, and checks that
# every event of every run is stored once. Exit 1 when a collector's RSS
# grew by more than 25 % + 8 MiB after the first sample, or data is wrong.
#
#   sh bench/soak.sh [BUILD_DIR]      (default: the current directory)
set -u
B=${1:-$(pwd)}
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$B/tapestry-collector" ] && [ -x "$B/tests/collector/synth" ] || {
	echo "usage: sh bench/soak.sh BUILD_DIR (after make check TESTS=)" >&2; exit 2; }
SECONDS_TOTAL=${SOAK_SECONDS:-600}
RUN_S=${SOAK_RUN_S:-60}
RATE=${SOAK_RATE:-200000}
STREAMS=64
BATCH=2048
EV=$(( RATE * RUN_S / STREAMS ))
T=$(mktemp -d /tmp/soak-XXXXXX)
. "$top_srcdir/tests/collector/lib.sh"
trap cleanup EXIT INT TERM
printf 'soak-secret\n' >"$T/secret"
COMMON="--secret-file $T/secret --stats-period 5s --clock-period 5s --mem-cap 64M"
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

start_col root --listen 127.0.0.1:0 --output "$T/job" $COMMON || fail root
start_col gw --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root $COMMON || fail gw
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_gw --zstd-level 1 $COMMON || fail node
echo "soak: $STREAMS sensors, $RATE events/s, runs of ${RUN_S} s, ${SECONDS_TOTAL} s in all"
echo "   t_s   node_kB     gw_kB   root_kB   events_stored_so_far"
t0=$(date +%s)
runs=0
first=""
next_sample=0
while :; do
	now=$(( $(date +%s) - t0 ))
	[ $now -ge "$SECONDS_TOTAL" ] && break
	"$SYNTH" --connect 127.0.0.1:$PORT_node --streams $STREAMS --events $EV --batch $BATCH \
		--level 1 --unique --rate "$RATE" --secret-file "$T/secret" \
		--timeout $((RUN_S * 3 + 60)) >"$T/run$runs.out" 2>&1 &
	sy=$!
	while kill -0 $sy 2>/dev/null; do
		now=$(( $(date +%s) - t0 ))
		if [ $now -ge $next_sample ]; then
			line="$(rss_kb $PID_node) $(rss_kb $PID_gw) $(rss_kb $PID_root)"
			printf '%6d %9s %9s %9s %14s\n' $now $line $((runs * STREAMS * EV))
			# the first sample after one full run is the reference
			[ -z "$first" ] && [ $runs -ge 1 ] && first=$line
			last=$line
			next_sample=$((next_sample + 30))
		fi
		sleep 1
	done
	wait $sy || fail "run $runs: $(cat $T/run$runs.out)"
	runs=$((runs + 1))
done
[ -n "$first" ] || first=$last
stop_col node || fail "node drain"
stop_col gw || fail "gw drain"
stop_col root || fail "root drain"
"$CHECK" --dir "$T/job" --streams $((runs * STREAMS)) --events $EV --batch $BATCH --unique --require-bye ||
	fail "the soak lost or duplicated events"
status=0
set -- $first
f_node=$1 f_gw=$2 f_root=$3
set -- $last
for pair in "node $f_node $1" "gw $f_gw $2" "root $f_root $3"; do
	set -- $pair
	growth=$(( $3 - $2 ))
	limit=$(( $2 / 4 + 8192 ))
	verdict=flat
	[ $growth -gt $limit ] && { verdict="GREW"; status=1; }
	echo "$1: RSS ${2} kB after the first run, ${3} kB at the end: ${growth} kB ($verdict)"
done
echo "$runs runs, $((runs * STREAMS)) streams, $((runs * STREAMS * EV)) events stored once each"
exit $status
