#!/bin/sh
# tests/sensor/nocollector.sh - no collector listening: the program runs
# normally (same output, status, nothing on stderr without TAPESTRY_LOG).
. "$srcdir/tests/sensor/lib.sh"
# a port nobody listens on: let the collectors pick theirs, then stop them
start_collectors job
stop_collectors
for mode in write fprintf fork exit; do
	mkdir -p "$T/p-$mode" "$T/t-$mode"
	untraced "$PROG" $mode 100 "$T/p-$mode" > "$T/out.plain" 2> "$T/err.plain"
	rc1=$?
	traced "$PROG" $mode 100 "$T/t-$mode" > "$T/out.traced" 2> "$T/err.traced"
	rc2=$?
	expect "$mode exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" || fail "$mode: output differs"
	[ -s "$T/err.traced" ] && fail "$mode: stderr: $(cat "$T/err.traced")"
	echo "ok $mode without a collector"
done
TAPESTRY_LOG=warn traced "$PROG" write 10 "$T" > /dev/null 2> "$T/err" ||
	fail "logged run"
expect "warnings with TAPESTRY_LOG=warn" "$(grep -c warn "$T/err")" 1
