#!/bin/sh
# tests/sensor/fd_calls.sh - the descriptor calls the libc sensor records
# beyond close and dup2 (prog_fds calls): close_range(3, ~0U, 0) and
# closefrom(3) in the middle of a run, as CLOSE_RANGE and CLOSEFROM, with
# the events written before, between and after them all streamed (the
# runtime's own descriptors in the range were dropped and made again);
# dup3 as DUP3 with its flags, a failing one with its errno. The traced
# output must be the untraced one.
. "$srcdir/tests/sensor/lib.sh"
FDS=$B/tests/sensor/prog_fds
export TAPESTRY_RING_FULL=wait	# every event counted exactly
start_collectors job
mkdir "$T/u" "$T/t" || fail mkdir
untraced "$FDS" calls "$T/u" > "$T/u.out" 2>&1 || fail "untraced: $(cat "$T/u.out")"
traced "$FDS" calls "$T/t" > "$T/t.out" 2>&1 || fail "traced: $(cat "$T/t.out")"
cmp -s "$T/u.out" "$T/t.out" ||
	fail "traced output differs:
$(diff "$T/u.out" "$T/t.out")"
stop_collectors
dump "$T/job" "$T/dump"
for k in 1 2 3; do
	expect "writes to calls-$k.out (before, between, after the closes)" \
		"$(count "$T/dump" " name=write " " bytes=17 " "path=$T/t/calls-$k.out")" 100
done
expect "writes to fd 20 after dup3" \
	"$(count "$T/dump" " name=write " " fd=20 " " bytes=17 " "path=$T/t/calls-4.out")" 100
expect "close_range(3, ~0U, 0)" \
	"$(count "$T/dump" " name=close_range " " fd=3 " " fd2=4294967295 " " flags=0 " " result=0 ")" 1
expect "closefrom(3)" "$(grep -c ' name=closefrom .* fd=3$' "$T/dump")" 1
expect "dup3 onto 20 with O_CLOEXEC, its path" \
	"$(count "$T/dump" " name=dup3 " " fd2=20 " " result=20 " " flags=524288" "path=$T/t/calls-4.out")" 1
expect "dup3 20 onto 20: EINVAL" \
	"$(count "$T/dump" " name=dup3 " " fd=20 " " fd2=20 " " result=-1 " " err=22 ")" 1
expect "no dup3 recorded as dup2" "$(count "$T/dump" " name=dup2 ")" 0
expect "drops" "$(grep '^total ' "$T/dump" | grep -vc ' dropped=0 ')" 0
