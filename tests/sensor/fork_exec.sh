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
echo "ok: fork and exec traced"
