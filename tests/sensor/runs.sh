#!/bin/sh
# tests/sensor/runs.sh - stdio runs (docs/modules/sensor-libc.md, "Runs")
# left open on other threads when the process ends: by exit, by exec, by
# a fatal signal (abort). 3 threads each make N fputs of 11 bytes (one
# run each, then they wait: in an untraced condition wait, in a traced
# read, in pause), the main thread N more, then it ends the process
# (prog_libc runs*): every call must be in the trace, once, and each run
# of more than one call carries the ns spent inside its calls (an ARRAY of
# 1 value, at most the run's span, more than 0). runsbusy: the threads
# write until the process exits (their runs taken while they extend
# them): no record twice (two records of a thread with one start).
. "$srcdir/tests/sensor/lib.sh"
N=1000

# check_runs DUMP MODE: the fputs calls and bytes of the threads and of
# the main thread, and the in-call time of every run
check_runs() {
	_d=$1
	_m=$2
	awk '/ name=fputs / && !/ tid=0 /' "$_d" > "$T/thr"
	awk '/ name=fputs / && / tid=0 /' "$_d" > "$T/main"
	expect "$_m: fputs calls of the 3 threads" "$(calls "$T/thr" fputs)" $((3 * N))
	expect "$_m: their bytes" "$(sumf "$T/thr" bytes fputs)" $((33 * N))
	expect "$_m: fputs calls of the main thread" "$(calls "$T/main" fputs)" $N
	expect "$_m: its bytes" "$(sumf "$T/main" bytes fputs)" $((11 * N))
	expect "$_m: threads with fputs" \
		"$(sed -n 's/.* tid=\([0-9]*\) .*/\1/p' "$T/thr" | sort -u | wc -l | tr -d ' ')" 3
	in_call "$_d" "$_m"
}

# in_call DUMP MODE: each run record (count > 1) is followed, on its
# thread, by an ARRAY of 1 value within (0, dur]
in_call() {
	_bad=$(awk '
	/^ev / && / name=(fputs|fwrite|fgetc|fputc) / {
		if (match($0, / count=[0-9]+/) && substr($0, RSTART + 7, RLENGTH - 7) + 0 > 1) {
			match($0, / tid=[0-9]+/); t = substr($0, RSTART, RLENGTH)
			match($0, / dur=[0-9]+/); open[t] = substr($0, RSTART + 5, RLENGTH - 5) + 0
			runs++
		}
		next
	}
	/^ev / { match($0, / tid=[0-9]+/); t = substr($0, RSTART, RLENGTH); if (t in open) { print "no array after a run of" t; delete open[t] } next }
	/^array / {
		match($0, / tid=[0-9]+/); t = substr($0, RSTART, RLENGTH)
		if (!(t in open)) next
		v = $0; sub(/.* values=/, "", v); v += 0
		if (!/ total=1 / || v <= 0 || v > open[t])
			print "bad in-call time " v " of a run of" t " dur " open[t]
		delete open[t]; arrays++
	}
	END { for (t in open) print "no array after the last run of" t; print "runs " runs + 0 " arrays " arrays + 0 }
	' "$1")
	echo "$_bad" | grep -v '^runs ' && fail "$2: $_bad"
	echo "$_bad" | grep -q '^runs 0 ' && fail "$2: no run of more than one call"
	return 0
}

for mode in runsexit runsexec runsabort; do
	rm -f "$T"/run?
	untraced "$PROG" $mode $N "$T" > "$T/out.plain" 2>/dev/null
	rc1=$?
	start_collectors "job-$mode"
	traced "$PROG" $mode $N "$T" > "$T/out.traced" 2>/dev/null
	rc2=$?
	stop_collectors
	expect "$mode exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" || fail "$mode: output differs"
	dump "$T/job-$mode" "$T/dump-$mode"
	check_runs "$T/dump-$mode" $mode
	echo "ok $mode: $((3 * N)) fputs of 3 waiting threads and $N of the main one, all in runs with their in-call time"
done

mode=runsbusy
start_collectors "job-$mode"
traced "$PROG" $mode $N "$T" > "$T/out.traced" 2>/dev/null || fail "$mode: exit status $?"
stop_collectors
dump "$T/job-$mode" "$T/dump-$mode"
awk '/ name=fputs / && !/ tid=0 /' "$T/dump-$mode" > "$T/thr"
expect "$mode: threads with fputs" \
	"$(sed -n 's/.* tid=\([0-9]*\) .*/\1/p' "$T/thr" | sort -u | wc -l | tr -d ' ')" 3
dup=$(sed -n 's/.* tid=\([0-9]*\) name=fputs t0=\([0-9]*\) .*/\1 \2/p' "$T/thr" | sort | uniq -d | wc -l | tr -d ' ')
expect "$mode: fputs records of a thread with one start" "$dup" 0
in_call "$T/dump-$mode" $mode
echo "ok $mode: $(calls "$T/thr" fputs) fputs of 3 busy threads, none twice"
