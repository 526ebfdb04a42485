#!/bin/sh
# tests/sensor/secret.sh - with a job secret (given to both collectors) the
# handshake succeeds only with the right one; a refused sensor still lets
# the program run.
. "$srcdir/tests/sensor/lib.sh"
printf 's3cr3t\n' > "$T/secret"
start_collectors good "$T/secret"
TAPESTRY_SECRET=s3cr3t traced "$PROG" write 10 "$T" > /dev/null || fail run
stop_collectors
dump "$T/good" "$T/dump"
expect "events with the secret" "$(count "$T/dump" " name=write ")" 11
start_collectors file "$T/secret"
TAPESTRY_SECRET_FILE="$T/secret" traced "$PROG" write 10 "$T" > /dev/null || fail run
stop_collectors
dump "$T/file" "$T/dump"
expect "events with the secret file" "$(count "$T/dump" " name=write ")" 11
start_collectors bad "$T/secret"
TAPESTRY_SECRET=wrong traced "$PROG" write 10 "$T" > "$T/out" 2>/dev/null || fail run
stop_collectors
grep -q 'write ok=10' "$T/out" || fail "program disturbed"
dump "$T/bad" "$T/dump"
expect "events with a wrong secret" "$(count "$T/dump" " name=write ")" 0
expect "sensor streams with a wrong secret" "$(streams "$T/dump")" 0
grep -q 'AUTH\|proof' "$T/node.log" || fail "node collector logged no refusal"
# no secret at all against collectors that require one: refused too
start_collectors none "$T/secret"
traced "$PROG" write 10 "$T" > "$T/out" 2>/dev/null || fail run
stop_collectors
grep -q 'write ok=10' "$T/out" || fail "program disturbed"
dump "$T/none" "$T/dump"
expect "events without a secret" "$(count "$T/dump" " name=write ")" 0
echo "ok: secret"
