#!/bin/sh
# tests/sensor/threads.sh - 8 threads x 100,000 writes: nothing lost, every
# event counted, output unchanged.
. "$srcdir/tests/sensor/lib.sh"
N=100000
untraced "$PROG" threads $N "$T" > "$T/out.plain" || fail "untraced run"
start_collectors job
TAPESTRY_BUFFER_BYTES=1G traced "$PROG" threads $N "$T" > "$T/out.traced" ||
	fail "traced run"
stop_collectors
cmp -s "$T/out.plain" "$T/out.traced" || fail "output differs"
dump "$T/job" "$T/dump"
expect "write events" "$(count "$T/dump" " name=write " " bytes=64 ")" $((8 * N))
expect "thread_start events" "$(count "$T/dump" " name=thread_start ")" 8
grep -q '^total .* dropped=0 .* bye=1$' "$T/dump" || fail "drops or no BYE: $(grep ^total "$T/dump")"
echo "ok: $((8 * N)) writes from 8 threads, none lost"
