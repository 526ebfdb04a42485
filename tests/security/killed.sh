#!/bin/sh
# tests/security/killed.sh - a traced program killed by SIGKILL: what its
# buffers held is lost, and the report says how much from what the
# collector saw of the stream - its connection closed without BYE some
# time after its last stored event ("collector.closed_ns"), and the events
# that time held at the stream's mean rate (an estimate, printed as one).
# The actual number (writes done minus writes stored) is printed beside it;
# no threshold on their ratio (it depends on the machine's timing). A
# program that ends normally gets no such line.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-killed-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM
[ -f "$SO" ] || { echo "no sensor library: skipped"; exit 77; }

start_col root --listen 127.0.0.1:0 --output "$T/job" || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root || fail node
env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR=127.0.0.1:$PORT_node TAPESTRY_SENSORS=libc \
	"$WRITER" "$T/records" &
W=$!
PIDS="$PIDS $W"
env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR=127.0.0.1:$PORT_node TAPESTRY_SENSORS=libc \
	"$WRITER" "$T/records2" 1000 || fail "the normal run"
# the killed run has two batches stored first (the root's index grew past
# the normal run's), however slow the machine: a fixed sleep does not
n0=$(( ($(stat -c %s "$T/job/index") - 16) / 40 ))
stored_batches_at_least "$T/job" $((n0 + 2)) $W || fail "the writer's batches did not come"
kill -9 $W
wait $W 2>/dev/null
for i in $(seq 1 100); do	# the node saw the close
	grep -q "closed by peer" "$T/node.log" && break
	sleep 0.05
done
stop_col node || fail "node drain"
stop_col root || fail "root drain"
done_writes=$(( $(stat -c %s "$T/records") / 8 ))
"$TAP" report "$T/job" >"$T/report.txt" 2>&1 || fail "report: $(cat $T/report.txt)"
TAPESTRY_NO_CORRECTION=1 "$TAP" export -f csv -o "$T/job.csv" "$T/job" 2>/dev/null ||
	fail "export"
stored=$(awk -F, '$3=="write" && $6==8 && $11 == '"$W"'' "$T/job.csv" | wc -l)
est=$(sed -n 's/.*connection closed .* after its last stored event: about \([0-9]*\) events not delivered.*/\1/p' "$T/report.txt")
[ -n "$est" ] || { cat "$T/report.txt"; fail "the report does not say what the killed process did not deliver"; }
n=$(grep -c "connection closed .* after its last stored event" "$T/report.txt")
[ "$n" = 1 ] || fail "$n streams said undelivered, 1 expected (the normal run must not be)"
grep "connection closed" "$T/report.txt" | sed 's/^ */  report: /'
echo "  writes done $done_writes, stored $stored: $((done_writes - stored)) not delivered; the report estimates $est events"
[ "$est" -gt 0 ] || fail "an estimate of 0"
echo PASS
