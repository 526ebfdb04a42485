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

# A program faster than a bounded drain: 3 million events into a 64 MiB
# ring (the largest, from a 1 GiB budget), kicked each time it passes half
# full. A kick drains the rings empty: draining four batches a kick fell
# behind and dropped two thirds of the events.
N=3000000
start_collectors job2
TAPESTRY_MODE=postmortem TAPESTRY_BUFFER_BYTES=1073741824 \
	traced "$PROG" burst $N "$T" > /dev/null || fail "burst run"
stop_collectors
dump "$T/job2" "$T/dump2"
expect "burst fwrite events" "$(count "$T/dump2" " name=fwrite ")" $N
grep -q '^total .* dropped=0 .* bye=1$' "$T/dump2" || fail "burst: drops or no BYE"
echo "ok: post-mortem burst"

# Stream mode drops when the sender falls behind, unless told to wait
# (TAPESTRY_RING_FULL=wait): the same burst, nothing lost, the setting in
# META, and every wait a FLUSH record without records.
start_collectors job3
TAPESTRY_RING_FULL=wait TAPESTRY_BUFFER_BYTES=1073741824 \
	traced "$PROG" burst $N "$T" > /dev/null || fail "stream burst run"
stop_collectors
dump "$T/job3" "$T/dump3"
expect "stream burst fwrite events" "$(count "$T/dump3" " name=fwrite ")" $N
grep -q '^total .* dropped=0 .* bye=1$' "$T/dump3" || fail "stream burst: drops or no BYE"
grep -q 'key=ring_full value=wait' "$T/dump3" || fail "ring_full not in META"
grep -q 'key=ring_full value=wait' "$T/dump2" || fail "post-mortem: ring_full not wait"
echo "ok: stream burst, waiting ($(grep -c ' name=flush .* records=0 ' "$T/dump3") waits)"
