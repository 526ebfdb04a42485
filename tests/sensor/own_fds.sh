#!/bin/sh
# tests/sensor/own_fds.sh - the sensor never changes what a program sees
# when it rearranges its descriptors: closing every descriptor above 2 (a
# close() loop, close_range, closefrom, as daemons do), or closing 0-2 and
# dup2-ing files onto them in a forked child or a new image (as MPICH's
# proxy does before it execs a rank). The traced output must be the
# untraced one, byte for byte, and the events written after the
# rearrangement must still reach the collector, each exactly once, also
# while writer threads keep the sender busy (busy), and from forked
# children that close everything while their sender starts (forkclose).
. "$srcdir/tests/sensor/lib.sh"
FDS=$B/tests/sensor/prog_fds
MODES="closeall closerange closefrom lowfork lowexec busy forkclose"
# every event counted exactly (busy: 80,000 writes under a busy sender)
export TAPESTRY_RING_FULL=wait
start_collectors job
for m in $MODES; do
	mkdir "$T/u-$m" "$T/t-$m" || fail mkdir
	untraced "$FDS" "$m" "$T/u-$m" > "$T/u-$m.out" 2>&1 ||
		fail "$m untraced: $(cat "$T/u-$m.out")"
	traced "$FDS" "$m" "$T/t-$m" > "$T/t-$m.out" 2>&1 ||
		fail "$m traced: $(cat "$T/t-$m.out")"
	sed "s#$T/t-#$T/u-#g" "$T/t-$m.out" > "$T/t-$m.cmp"
	cmp -s "$T/u-$m.out" "$T/t-$m.cmp" ||
		fail "$m: traced output differs:
$(diff "$T/u-$m.out" "$T/t-$m.cmp")"
done
stop_collectors
# what the programs saw is what they see untraced: the first free numbers
grep -q 'open closeall.out: fd 3 ' "$T/u-closeall.out" ||
	fail "closeall: $(cat "$T/u-closeall.out")"
grep -q 'open low.err: fd 2 ' "$T/u-lowfork.out" ||
	fail "lowfork: $(cat "$T/u-lowfork.out")"
dump "$T/job" "$T/dump"
for m in closeall closerange closefrom; do
	expect "$m: writes after the close" \
		"$(count "$T/dump" " name=write " " bytes=17 " "path=$T/t-$m/$m.out")" 100
done
for m in lowfork lowexec; do
	expect "$m: writes to fd 1 after the dup2" \
		"$(count "$T/dump" " name=write " " bytes=17 " "path=$T/t-$m/low.out")" 100
	expect "$m: dup2 onto 0-2" \
		"$(grep " name=dup2 " "$T/dump" | grep -c "path=$T/t-$m/low\.")" 3
done
expect "busy: writes while the runtime's descriptors moved" \
	"$(grep " name=write " "$T/dump" | grep " bytes=17 " | grep -c "path=$T/t-busy/busy-")" 80000
expect "forkclose: writes of the children after their close_range" \
	"$(grep " name=write " "$T/dump" | grep " bytes=17 " | grep -c "path=$T/t-forkclose/fc-")" 4000
expect "drops" "$(grep '^total ' "$T/dump" | grep -vc ' dropped=0 ')" 0
