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
