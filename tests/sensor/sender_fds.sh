#!/bin/sh
# tests/sensor/sender_fds.sh - the sender thread keeps its descriptors in a
# table of its own (sensor-runtime.md, "Sender thread"): once it is
# connected, the program's table (/proc/PID/fd of the traced shell, listed
# by a child) holds no socket, and its log lines still reach the program's
# stderr. Skipped (77) where the kernel refuses unshare(CLONE_FILES): the
# sensor then says so at info level and shares the table as before.
. "$srcdir/tests/sensor/lib.sh"
start_collectors job
# the shell waits (bounded) until its own sensor says it connected, then
# lists its descriptors; a child's sensor logs with another pid
TAPESTRY_LOG=info traced sh -c '
	i=0
	while ! grep -q "^tapestry-sensor\[$$\] info .*connected to " "$1"; do
		i=$((i + 1))
		[ $i -lt 3000 ] || { echo "never connected"; exit 1; }
		grep -q "^tapestry-sensor\[$$\] info .*table shared" "$1" && exit 77
		sleep 0.01
	done
	ls -l /proc/$$/fd/' sh "$T/err" > "$T/fds" 2> "$T/err"
rc=$?
[ $rc -eq 77 ] && { echo "skip: $(grep 'table shared' "$T/err")"; exit 77; }
expect "traced shell's exit status" $rc 0
grep -q 'socket:' "$T/fds" && fail "a socket in the program's table:
$(cat "$T/fds")"
stop_collectors
dump "$T/job" "$T/dump"
# the shell, and its children (grep, ls: as many as the loop took)
[ "$(streams "$T/dump")" -ge 2 ] || fail "streams: $(streams "$T/dump")"
echo "ok: no socket in the program's table, $(grep -c 'connected to' "$T/err") connections logged"
