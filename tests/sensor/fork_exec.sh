#!/bin/sh
# tests/sensor/fork_exec.sh - fork + exec: every process is traced as a
# stream of its own (the exec'd image through LD_PRELOAD in the environment).
. "$srcdir/tests/sensor/lib.sh"
N=20
start_collectors job
traced "$PROG" forkexec $N "$T" > "$T/out" || fail "forkexec run"
traced "$PROG" exec $N "$T" > "$T/out2" || fail "exec run"
stop_collectors
grep -q 'forkexec ok=1' "$T/out" || fail "child failed: $(cat "$T/out")"
grep -q 'write ok=20' "$T/out2" || fail "exec'd image failed: $(cat "$T/out2")"
dump "$T/job" "$T/dump"
# streams: forkexec parent, its child (forked, then exec), the child's new
# image; exec: the first image and the new one
expect "streams" "$(streams "$T/dump")" 5
expect "fork events" "$(count "$T/dump" " name=fork ")" 1
expect "exec events" "$(count "$T/dump" " name=exec " "prog_libc")" 2
expect "exec'd writes" "$(count "$T/dump" " name=write " " bytes=64 ")" $((2 * (N + 1)))
expect "streams ended by exec" "$(grep -c '^total .* bye=3$' "$T/dump")" 2
expect "proc_start" "$(count "$T/dump" " name=proc_start ")" 5
# a stream of 100,000 records ended by exec calibrates again first, as at
# exit (sn_calibrate_at_end): two calibrations of evtype 0 in that stream
# (one if the sensor says it withdrew the request). The new image exits at
# once, maybe before its start-up calibration is done: its stream is not
# counted.
start_collectors job2
TAPESTRY_RING_FULL=wait TAPESTRY_LOG=info traced "$PROG" writeexec 100000 "$T" \
	> "$T/out3" 2> "$T/err3" || fail "writeexec run"
stop_collectors
grep -q 'writeexec ok=100000 ' "$T/out3" || fail "writeexec: $(cat "$T/out3")"
grep -q 'write ok=1 ' "$T/out3" || fail "exec'd image failed: $(cat "$T/out3")"
dump "$T/job2" "$T/dump2"
expect "streams (writeexec)" "$(streams "$T/dump2")" 2
want=2
if grep -q 'exit calibration withdrawn' "$T/err3"; then
	echo "note: the exec calibration was withdrawn (sender late)"
	want=1
fi
first=$(sed -n 's/^total stream=\([0-9a-f]*\) .* bye=3$/\1/p' "$T/dump2")
[ -n "$first" ] || fail "no stream ended by exec: $(grep ^total "$T/dump2")"
expect "calibrations of evtype 0 before the exec" \
	"$(count "$T/dump2" " stream=$first " " name=calibration " " evtype=0 ")" $want
# an exec that fails: the process goes on as a new stream, which gets this
# process's CALIB records again (sn_calib_replay): the same ones as the
# stream the exec ended, stdio's included
# failing_exec JOB MODE ERRNO: prog_libc MODE (50 writes, an exec that
# fails with ERRNO, 50 writes) traced into JOB, dumped to $T/JOB.dump
failing_exec() {
	start_collectors "$1"
	traced "$PROG" "$2" 50 "$T" > "$T/$1.out" || fail "$2 run"
	stop_collectors
	grep -q "$2 ok=100 value=0 errno=$3" "$T/$1.out" || fail "$2: $(cat "$T/$1.out")"
	dump "$T/$1" "$T/$1.dump"
}
failing_exec job3 execfail EACCES
mv "$T/job3.dump" "$T/dump3"
expect "streams (execfail)" "$(streams "$T/dump3")" 2
first=$(sed -n 's/^total stream=\([0-9a-f]*\) .* bye=3$/\1/p' "$T/dump3")
second=$(sed -n 's/^total stream=\([0-9a-f]*\) .*$/\1/p' "$T/dump3" | grep -v "^$first$")
[ -n "$first" ] && [ -n "$second" ] || fail "no stream ended by exec and one after: $(grep ^total "$T/dump3")"
expect "writes in the stream ended by the exec" \
	"$(count "$T/dump3" " stream=$first " " name=write " " bytes=64 ")" 50
expect "writes in the stream after it" \
	"$(count "$T/dump3" " stream=$second " " name=write " " bytes=64 ")" 50
calibs() { grep " stream=$1 " "$T/dump3" | grep " name=calibration " |
	sed 's/.* evtype=\([0-9]*\) cost_ns=\([0-9]*\) .*/\1 \2/' | sort; }
calibs "$first" > "$T/cal1"
calibs "$second" > "$T/cal2"
expect "calibrations of evtype 0 before the failed exec" "$(grep -c '^0 ' "$T/cal1")" 1
cmp -s "$T/cal1" "$T/cal2" ||
	fail "the stream after the failed exec has other calibrations: $(cat "$T/cal1") / $(cat "$T/cal2")"
# an exec of no such file (a shell searching PATH calls execve for each
# directory): the process goes on in the same stream, with the failed exec
# recorded in it, and is not calibrated again
failing_exec job4 execnofile ENOENT
mv "$T/job4.dump" "$T/dump4"
expect "streams (execnofile)" "$(streams "$T/dump4")" 1
expect "failed exec records (execnofile)" \
	"$(count "$T/dump4" " name=exec " " failed=1 " " err=2")" 1
expect "exec records (execnofile)" "$(count "$T/dump4" " name=exec ")" 1
expect "writes (execnofile)" "$(count "$T/dump4" " name=write " " bytes=64 ")" 100
# posix_spawn(p): a SPAWN event in the parent with the child's pid, the
# child traced as a stream of its own with that pid; the failure's code
start_collectors job5
traced "$PROG" spawn 1 "$T" > "$T/out6" || fail "spawn run"
stop_collectors
grep -q 'spawn ok=2 value=0 errno=ENOENT' "$T/out6" || fail "spawn: $(cat "$T/out6")"
dump "$T/job5" "$T/dump5"
expect "spawn events" "$(count "$T/dump5" " name=spawn ")" 3
expect "failed spawn (no such file)" "$(count "$T/dump5" " name=spawn " " failed=1 " " pid=-1 " " err=2")" 1
for kid in $(sed -n 's/.* name=spawn .* pid=\([0-9][0-9]*\) .*/\1/p' "$T/dump5"); do
	grep -q " name=proc_start .* pid=$kid " "$T/dump5" ||
		fail "spawned child $kid has no stream of its own"
done
expect "streams (spawn: the parent, two children)" "$(streams "$T/dump5")" 3
echo "ok: fork and exec traced"
