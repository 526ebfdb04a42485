#!/bin/sh
# tests/sensor/secret.sh - with a job secret the handshake succeeds only
# with the right one; a refused sensor still lets the program run.
. "$srcdir/tests/sensor/lib.sh"
start_receiver good --secret s3cr3t
TAPESTRY_SECRET=s3cr3t traced "$PROG" write 10 "$T" > /dev/null || fail run
stop_receiver
"$DUMP" "$T/good" > "$T/dump" || fail "dump_trace"
expect "events with the secret" "$(count "$T/dump" " name=write ")" 11
printf 's3cr3t\n' > "$T/secret"
start_receiver file --secret s3cr3t
TAPESTRY_SECRET_FILE="$T/secret" traced "$PROG" write 10 "$T" > /dev/null || fail run
stop_receiver
"$DUMP" "$T/file" > "$T/dump" || fail "dump_trace"
expect "events with the secret file" "$(count "$T/dump" " name=write ")" 11
start_receiver bad --secret s3cr3t
TAPESTRY_SECRET=wrong traced "$PROG" write 10 "$T" > "$T/out" 2>/dev/null || fail run
stop_receiver
grep -q 'write ok=10' "$T/out" || fail "program disturbed"
"$DUMP" "$T/bad" > "$T/dump" || fail "dump_trace"
expect "events with a wrong secret" "$(count "$T/dump" " name=write ")" 0
echo "ok: secret"
