#!/bin/sh
# tests/sensor/undelivered.sh - a sensor that could not deliver says so
# on stderr at exit, whatever TAPESTRY_LOG says: how many events, to which
# collector, why. The node collector is frozen (SIGSTOP) for the whole
# run: it accepts the TCP connection (the kernel does) but never answers
# the handshake. A run that delivers everything says nothing.
. "$srcdir/tests/sensor/lib.sh"
start_collectors job
mkdir -p "$T/a" "$T/b"
traced "$PROG" write 1000 "$T/a" > "$T/out.ok" 2> "$T/err.ok" || fail "healthy run"
[ -s "$T/err.ok" ] && fail "a delivered run said: $(cat "$T/err.ok")"
kill -STOP "$NPID"
untraced "$PROG" write 80000 "$T/b" > "$T/out.plain" 2>/dev/null
traced "$PROG" write 80000 "$T/b" > "$T/out.frozen" 2> "$T/err.frozen"
expect "exit status with a frozen collector" $? 0
kill -CONT "$NPID"
cmp -s "$T/out.plain" "$T/out.frozen" || fail "output differs"
cat "$T/err.frozen"
expect "lines on stderr" "$(wc -l < "$T/err.frozen")" 1
grep -q "events of this process were not delivered to the collector at 127.0.0.1:$PORT .*: no answer to the handshake" \
	"$T/err.frozen" || fail "no undelivered line: $(cat "$T/err.frozen")"
n=$(sed -n 's/.* \([0-9][0-9]*\) events of this process were not delivered.*/\1/p' "$T/err.frozen")
[ "${n:-0}" -ge 80000 ] || fail "$n events said undelivered, 80000 writes at least"
stop_collectors
echo "ok: $n events said undelivered"
