#!/usr/bin/env bash
# tests/collector/filter.sh - event filters on a node collector: a real
# program (deploy/examples/iodemo.c, then 16-byte reads) under the real sensor,
# through a node collector with --drop fprintf --sample read:2 into a root: the dropped
# type is gone, the sampled one is thinned to one in two, everything else is
# intact, and the node's last STATS (in the job, shown by tapestry report)
# counts exactly what was filtered. Bad filter options are refused.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
B=$top_builddir
T=$(mktemp -d /tmp/tapestry-test-filter.XXXXXX)
. "$top_srcdir/tests/collector/lib.sh"
trap cleanup EXIT
LIB="$B/sensor/.libs/libtapestry-sensor.so"
TAP="$B/manager/tapestry"
[ -f "$LIB" ] || { echo "no sensor library"; exit 99; }
cc -O1 -pthread -o "$T/iodemo" "$top_srcdir/deploy/examples/iodemo.c" || exit 99
# the sampled call: read(2) of 16 bytes at a time, one record a call (stdio
# calls of one stream are gathered into runs, docs/modules/sensor-libc.md)
cat >"$T/rd.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char b[16];
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;

	if (fd < 0)
		return 1;
	while (read(fd, b, sizeof(b)) > 0)
		;
	return close(fd);
}
C
cc -O1 -o "$T/rd" "$T/rd.c" || exit 99
head -c 3200 /dev/zero >"$T/zeros"

# run_job NAME NODE-OPTIONS... : iodemo through node -> root into $T/NAME
run_job() {
	job=$1; shift
	start_col "root_$job" --listen 127.0.0.1:0 --output "$T/$job" || fail "root"
	eval "rp=\$PORT_root_$job"
	start_col "node_$job" --listen 127.0.0.1:0 --parent "127.0.0.1:$rp" "$@" || fail "node"
	eval "np=\$PORT_node_$job"
	mkdir -p "$T/w_$job"
	timeout 60 env LD_PRELOAD="$LIB" TAPESTRY_COLLECTOR="127.0.0.1:$np" \
		TAPESTRY_SENSORS=libc "$T/iodemo" "$T/w_$job" >/dev/null ||
		fail "iodemo under the sensor"
	timeout 60 env LD_PRELOAD="$LIB" TAPESTRY_COLLECTOR="127.0.0.1:$np" \
		TAPESTRY_SENSORS=libc "$T/rd" "$T/zeros" || fail "rd under the sensor"
	stop_col "node_$job" || fail "node drain"
	stop_col "root_$job" || fail "root drain"
	TAPESTRY_NO_CORRECTION=1 "$TAP" export -f csv -o "$T/$job.csv" "$T/$job" 2>/dev/null || fail "export"
}
count() { awk -F, -v e="$2" '$3==e' "$T/$1.csv" | wc -l; }
# the calls: a run of stdio calls on one stream is one record, its calls in
# args' count= (docs/modules/sensor-libc.md, "Runs")
calls() {
	awk -F, -v e="$2" '$3==e { n += match($NF, /count=[0-9]+/) ? substr($NF, RSTART + 6, RLENGTH - 6) : 1 }
		END { print n + 0 }' "$T/$1.csv"
}

run_job plain
run_job filtered --drop fprintf --sample read:2

n_fprintf=$(calls plain fprintf)
r_fprintf=$(count plain fprintf)	# records: what the collector filters
n_read=$(count plain read)
[ "$n_fprintf" = 2000 ] || fail "unfiltered run: $n_fprintf fprintf events, expected 2000"
[ "$n_read" -ge 200 ] || fail "unfiltered run: $n_read read events"
[ "$(count filtered fprintf)" = 0 ] || fail "fprintf not dropped"
# one in two of the reads of this run (the counter runs across streams)
got=$(count filtered read)
[ $((got * 10)) -ge $((n_read * 4)) ] && [ $((got * 10)) -le $((n_read * 6)) ] ||
	fail "read sampled to $got of about $n_read"
for e in fopen fclose fork; do
	[ "$(count filtered $e)" = "$(count plain $e)" ] || fail "$e changed by the filter"
done
"$TAP" report "$T/filtered" >"$T/report.txt" 2>&1 || fail "report"
filtered=$(sed -n 's/.* collector .*filtered \([0-9]*\),.*/\1/p' "$T/report.txt" | head -n1)
[ -n "$filtered" ] && [ "$filtered" -ge "$r_fprintf" ] && [ "$filtered" -le $((r_fprintf + n_read)) ] ||
	{ cat "$T/report.txt" >&2; fail "report counts '$filtered' filtered events"; }
grep -q "0 events counted lost" "$T/report.txt" || fail "filtering was reported as loss"

# bad options: a clear message, exit 2, nothing started
for bad in "--drop nosuchcall" "--sample fread" "--sample fread:1" "--sample fread:x" "--drop string"; do
	# shellcheck disable=SC2086
	"$COL" --listen 127.0.0.1:0 --parent 127.0.0.1:9 $bad 2>"$T/err" >/dev/null
	[ $? = 2 ] || fail "'$bad' was not refused"
	grep -q "tapestry-collector:" "$T/err" || fail "'$bad': no message"
done
"$COL" --listen 127.0.0.1:0 --output "$T/x" --drop write 2>"$T/err" >/dev/null
[ $? = 2 ] || fail "filters accepted on the root"
# a clock drift it cannot read (a test hook, docs/ARCHITECTURE.md): refused
# as a bad option is, before anything starts
for bad in fast 1e6 12x; do
	TAPESTRY_CLOCK_DRIFT_PPM=$bad "$COL" --listen 127.0.0.1:0 --output "$T/y" 2>"$T/err" >/dev/null
	[ $? = 2 ] || fail "TAPESTRY_CLOCK_DRIFT_PPM=$bad was not refused"
	grep -q "TAPESTRY_CLOCK_DRIFT_PPM='$bad': want a number" "$T/err" || fail "drift $bad: $(cat "$T/err")"
	[ ! -e "$T/y" ] || fail "drift $bad: the collector started"
done
echo "filter: fprintf dropped (2000 calls in $r_fprintf records), read $n_read -> $got, report counts $filtered filtered"
