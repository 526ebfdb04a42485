#!/bin/sh
# tests/sensor/stamps.sh - the stamps of traced calls, as they reach the job
# directory, lie on CLOCK_MONOTONIC where the program saw the calls: every
# write of `prog_libc timed` starts and ends between the program's own
# readings of CLOCK_MONOTONIC before and after its loop, and the writes
# follow one another (10 us of slack at either end: the sender's mapping of
# a stamp onto CLOCK_MONOTONIC is a fit, off by 1 us once in a few runs of
# these 4 ms; a stamp left in TSC counts or converted twice lands seconds to
# days away). The libc wrappers store the TSC's raw count and the
# sender converts it (SN_EVF_STAMP, sensor/rt.h); with TAPESTRY_CLOCK=vdso
# they store ns. Both clocks, in stream and post-mortem modes.
. "$srcdir/tests/sensor/lib.sh"
N=20000
for clk in tsc vdso; do
	for mode in stream postmortem; do
		j=job-$clk-$mode
		start_collectors "$j"
		traced env TAPESTRY_CLOCK=$clk TAPESTRY_MODE=$mode \
			"$PROG" timed $N "$T" > "$T/$j.out" || fail "$j run"
		stop_collectors
		dump "$T/$j" "$T/$j.dump"
		grep -q "key=clock value=$clk" "$T/$j.dump" || fail "$j: clock not $clk"
		set -- $(sed -n 's/^timed before=\([0-9]*\) after=\([0-9]*\)$/\1 \2/p' "$T/$j.out")
		[ $# = 2 ] || fail "$j: no times printed"
		# the N writes to /dev/null of the loop (fd and bytes: not the
		# program's other writes, its stdout)
		r=$(grep " name=write .* bytes=64 result=64 path=/dev/null " "$T/$j.dump" |
		    sed 's/.* t0=\(-*[0-9]*\) dur=\(-*[0-9]*\) .*/\1 \2/' |
		    awk -v b="$1" -v a="$2" '
			{ n++; e = $1 + $2
			  if ($1 < b - 10000 || $1 > a + 10000 || $2 < 0 || e > a + 10000) out++
			  if ($1 < last) back++
			  last = e }
			END { printf "%d %d %d\n", n, out, back }')
		set -- $r
		expect "$j: writes" "$1" $N
		expect "$j: writes outside the program's readings" "$2" 0
		expect "$j: writes that start before the previous one ended" "$3" 0
		echo "ok: $j"
	done
done
