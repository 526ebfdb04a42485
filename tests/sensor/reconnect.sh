#!/bin/sh
# tests/sensor/reconnect.sh - the collector drops the first connection
# before acknowledging: the sensor reconnects and resends; every event is
# stored exactly once.
. "$srcdir/tests/sensor/lib.sh"
N=3000
start_receiver job --drop-first 1
traced "$PROG" write $N "$T" > /dev/null || fail run
stop_receiver
"$DUMP" "$T/job" > "$T/dump" || fail "dump_trace"
expect "write events" "$(count "$T/dump" " name=write ")" $((N + 1))
expect "streams" "$(grep -c '^total ' "$T/dump")" 1
echo "ok: reconnect and resend"
