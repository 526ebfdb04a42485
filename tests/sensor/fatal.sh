#!/bin/sh
# tests/sensor/fatal.sh - a program that dies of SIGSEGV or SIGABRT: its
# events up to the crash are in the trace, it still dies of the signal.
. "$srcdir/tests/sensor/lib.sh"
N=1000
for mode in segv abort; do
	untraced "$PROG" $mode $N "$T" > "$T/out.plain" 2>/dev/null
	rc1=$?
	start_collectors "job-$mode"
	traced "$PROG" $mode $N "$T" > "$T/out.traced" 2>/dev/null
	rc2=$?
	stop_collectors
	expect "$mode exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" || fail "$mode: output differs"
	dump "$T/job-$mode" "$T/dump"
	expect "$mode: writes before the crash" \
		"$(count "$T/dump" " name=write " " bytes=64 ")" $N
	sig=11
	[ $mode = abort ] && sig=6
	expect "$mode: signal event" "$(count "$T/dump" " name=signal " " signo=$sig")" 1
	grep -q '^total .* bye=2$' "$T/dump" || fail "$mode: no BYE(signal)"
	echo "ok $mode: $N events before the crash, rc $rc2"
done
