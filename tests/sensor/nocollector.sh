#!/bin/sh
# tests/sensor/nocollector.sh - no collector listening: the program runs
# normally (same output, status, nothing on stderr without TAPESTRY_LOG);
# settings the sensor cannot read are said on stderr, one line each, and
# the program still runs normally.
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
	# each process says, once, what it could not deliver (and nothing else)
	grep -v "error sensor: [0-9]* events of this process were not delivered to the collector at 127.0.0.1:$PORT .*: cannot connect$" \
		"$T/err.traced" > "$T/err.other"
	[ -s "$T/err.other" ] && fail "$mode: stderr: $(cat "$T/err.other")"
	[ -s "$T/err.traced" ] || fail "$mode: nothing said of the undelivered events"
	echo "ok $mode without a collector"
done
TAPESTRY_LOG=warn traced "$PROG" write 10 "$T" > /dev/null 2> "$T/err" ||
	fail "logged run"
expect "warnings with TAPESTRY_LOG=warn" "$(grep -c warn "$T/err")" 1

# bad settings: each named on stderr with the default used, the run as
# without them; good ones (every accepted spelling) say nothing. A bad
# TAPESTRY_COLLECTOR falls back to 127.0.0.1:7450, which may be somebody's
# collector: those runs get a network namespace of their own (lo down).
untraced "$PROG" write 10 "$T" > "$T/out.plain" 2>/dev/null
netns=
unshare -n true 2>/dev/null && netns="unshare -n"
while read -r var val; do
	pre=
	case $var in
	TAPESTRY_COLLECTOR)
		[ -n "$netns" ] || { echo "skip $var='$val': no network namespace"; continue; }
		pre=$netns ;;
	esac
	# shellcheck disable=SC2086
	timeout -k 5 "$TMO" $pre env TAPESTRY_COLLECTOR="127.0.0.1:$PORT" "$var=$val" \
		LD_PRELOAD="$SO" "$PROG" write 10 "$T" > "$T/out.bad" 2> "$T/err.bad"
	expect "$var='$val': exit status" $? 0
	cmp -s "$T/out.plain" "$T/out.bad" || fail "$var='$val': output differs"
	expect "$var='$val': lines on stderr" "$(grep -vc 'were not delivered to the collector' "$T/err.bad")" 1
	grep -q "error config: $var='$val' ignored: want .* (using .*)" "$T/err.bad" ||
		fail "$var='$val': $(cat "$T/err.bad")"
done <<'EOF'
TAPESTRY_MODE post-mortem
TAPESTRY_RING_FULL block
TAPESTRY_LOG verbose
TAPESTRY_SENSORS gpu
TAPESTRY_SENSORS LIBC
TAPESTRY_SENSORS ,
TAPESTRY_MEM_PERIOD_MS 0
TAPESTRY_DRAIN_MS 1s
TAPESTRY_DRAIN_MS 99999999999999999999
TAPESTRY_CLOCK_DRIFT_PPM lots
TAPESTRY_CLOCK_DRIFT_PPM 1e6
TAPESTRY_BUFFER_BYTES 64Q
TAPESTRY_BUFFER_BYTES 99999999G
TAPESTRY_BUFFER_BYTES -5M
TAPESTRY_CLOCK hpet
TAPESTRY_COLLECTOR nohost
TAPESTRY_COLLECTOR 127.0.0.1:99999
TAPESTRY_COLLECTOR 127.0.0.1:http
EOF
TAPESTRY_SENSORS="libc,gpu" traced "$PROG" write 10 "$T" > /dev/null 2> "$T/err.two"
grep -q "TAPESTRY_SENSORS='gpu' ignored: want libc, mpi or mem (using the others)" "$T/err.two" ||
	fail "libc,gpu: $(cat "$T/err.two")"
TAPESTRY_SENSORS="gpu" traced "$PROG" write 10 "$T" > /dev/null 2> "$T/err.one"
grep -q "(using all three)" "$T/err.one" || fail "gpu alone: $(cat "$T/err.one")"
while read -r var val; do
	timeout -k 5 "$TMO" env TAPESTRY_COLLECTOR="127.0.0.1:$PORT" "$var=$val" \
		LD_PRELOAD="$SO" "$PROG" write 10 "$T" > "$T/out.good" 2> "$T/err.good"
	expect "$var='$val': exit status" $? 0
	grep -v 'were not delivered to the collector' "$T/err.good" > "$T/err.good2"
	[ -s "$T/err.good2" ] && fail "$var='$val' said: $(cat "$T/err.good2")"
done <<EOF
TAPESTRY_MODE postmortem
TAPESTRY_RING_FULL drop
TAPESTRY_LOG off
TAPESTRY_SENSORS libc+mem
TAPESTRY_BUFFER_BYTES 64MiB
TAPESTRY_BUFFER_BYTES 2G
TAPESTRY_CLOCK vdso
TAPESTRY_CLOCK tsc
TAPESTRY_CLOCK_DRIFT_PPM -12.5
TAPESTRY_COLLECTOR [::1]:$PORT
TAPESTRY_COLLECTOR :$PORT
EOF
echo "ok: bad settings said, good ones silent"
