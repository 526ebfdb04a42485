#!/bin/sh
# tests/sensor/postmortem.sh - TAPESTRY_MODE=postmortem keeps everything
# until exit, then ships it in one go.
. "$srcdir/tests/sensor/lib.sh"
N=5000
start_collectors job
TAPESTRY_MODE=postmortem traced "$PROG" write $N "$T" > /dev/null || fail run
stop_collectors
dump "$T/job" "$T/dump"
expect "write events" "$(count "$T/dump" " name=write ")" $((N + 1))
grep -q 'key=mode value=postmortem' "$T/dump" || fail "mode not in META"
grep -q '^total .* dropped=0 .* bye=1$' "$T/dump" || fail "drops or no BYE"
echo "ok: post-mortem"

# burst NAME ENV...: N cheap events with a 1 GiB budget under ENV into job
# NAME; nothing may be lost (dump in $T/NAME.dump)
burst() {
	_j=$1
	shift
	start_collectors "$_j"
	traced env TAPESTRY_BUFFER_BYTES=1073741824 "$@" \
		"$PROG" burst $N "$T" > /dev/null || fail "$_j run"
	stop_collectors
	dump "$T/$_j" "$T/$_j.dump"
	expect "$_j fwrite events" "$(count "$T/$_j.dump" " name=fwrite ")" $N
	grep -q '^total .* dropped=0 .* bye=1$' "$T/$_j.dump" || fail "$_j: drops or no BYE"
}

# A program faster than a bounded drain: 3 million events into a 64 MiB
# ring (the largest, from a 1 GiB budget), kicked each time it passes half
# full. A kick drains the rings empty: draining four batches a kick fell
# behind and dropped two thirds of the events.
N=3000000
burst job2 TAPESTRY_MODE=postmortem
grep -q 'key=ring_full value=wait' "$T/job2.dump" || fail "post-mortem: ring_full not wait"
echo "ok: post-mortem burst"

# Stream mode drops when the sender falls behind, unless told to wait
# (TAPESTRY_RING_FULL=wait): the same burst into 4 MiB of buffers (rings
# of 3,600 records, which it fills faster than the sender wakes up):
# nothing lost, the setting in META, and the waits in the trace, as FLUSH
# records without records.
burst job3 TAPESTRY_RING_FULL=wait TAPESTRY_BUFFER_BYTES=4194304
grep -q 'key=ring_full value=wait' "$T/job3.dump" || fail "ring_full not in META"
waits=$(grep -c ' name=flush .* records=0 ' "$T/job3.dump")
[ "$waits" -gt 0 ] || fail "stream burst: no wait recorded"
echo "ok: stream burst, waiting ($waits waits)"

# The documented minimum budget, 1 MiB: a sixteenth of it is less than
# the smallest ring (SN_RING_MIN records), and every thread once got no
# ring at all, so that every event counted as dropped. Each thread gets
# the smallest ring; waiting when it is full, nothing is lost.
N=24000
start_collectors job4
TAPESTRY_BUFFER_BYTES=1M TAPESTRY_RING_FULL=wait traced "$PROG" write $N "$T" \
	> /dev/null || fail "job4 run"
stop_collectors
dump "$T/job4" "$T/job4.dump"
expect "1 MiB budget: write events" "$(count "$T/job4.dump" " name=write ")" $((N + 1))
grep -q '^total .* dropped=0 .* bye=1$' "$T/job4.dump" || fail "1 MiB budget: drops or no BYE"
echo "ok: the 1 MiB budget"
