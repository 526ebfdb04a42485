#!/bin/bash
# tests/security/losses.sh - every event counted (issue 33), under `tapestry
# run` of a program writing 8-byte records to a file (tests/security/writer):
# the writes the job holds are counted against the file's size.
#  1. the node collector killed -9 while the program writes: its sensor goes
#     on to the root receiver (TAPESTRY_COLLECTOR_FALLBACK), nothing lost;
#  2. the node and the root killed -9: the sensor finds no collector and
#     leaves the rest in the job's spool (TAPESTRY_SPOOL), which run takes:
#     nothing lost, run exits 1 and says which collectors were killed;
#  3. SIGINT, SIGTERM and SIGHUP to tapestry alone, and to tapestry's
#     process group (as `timeout -s INT` and a shell's kill of the job send
#     them): the program gets the signal (dies of it, or handles it and
#     writes 100,000 records more before its exit), its sensor flushes to
#     its node collector (no spool needed: the collectors, in groups of
#     their own, are drained only after the program), nothing lost, the
#     report says the stream ended.
#  4. `tapestry launch` (gateway and node collectors), SIGINT to its group,
#     the program handling it: the same;
#  5. a bare collector tree, node and root killed -9: the sensor leaves the
#     rest in its TAPESTRY_SPOOL, the restarted node (--spool) forwards it
#     to the restarted root: every write stored.
# Waits on conditions (the file's size, the spool line), not on times.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-losses-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
# a failure leaves no collector nor program behind: they lead groups of
# their own (the collectors) or are tapestry's children
cleanup() {
	for p in $PIDS; do
		for k in $(pgrep -P "$p"); do kill -9 -- -"$k" "$k" 2>/dev/null; done
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
[ -f "$SO" ] || { echo "no sensor library: skipped"; exit 77; }
N=400000	# records of a run (case 1 and 2): about 3 MB

# size_at_least FILE BYTES PID: wait (5 min at most) until FILE holds BYTES,
# or PID is gone
size_at_least() {
	for i in $(seq 1 6000); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# collector_pid TAPESTRY-PID WHAT: the pid of its node collector (node) or
# root receiver (root)
collector_pid() {
	for p in $(pgrep -P "$1"); do
		a=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)
		case "$2:$a" in
		node:*"--name node"*|root:*"--output"*) echo "$p"; return 0;;
		esac
	done
	return 1
}

# stored JOB: the writer's 8-byte writes the job holds
stored() {
	TAPESTRY_NO_CORRECTION=1 "$TAP" export -f csv -o "$1.csv" "$1" 2>/dev/null ||
		{ echo "export of $1 failed" >&2; echo -1; return; }
	awk -F, '$3=="write" && $6==8' "$1.csv" | wc -l
}

# exact JOB RECORDS WHAT [SLACK]: the job holds RECORDS writes (RECORDS -
# SLACK: a write that a signal followed before its record was made),
# counts no loss and its stream ended
exact() {
	s=$(stored "$1")
	[ "$s" -le "$2" ] && [ "$s" -ge $(( $2 - ${4:-0} )) ] ||
		fail "$3: $s writes stored, $2 done"
	"$TAP" report "$1" > "$1.report" 2>&1 || fail "$3: report"
	grep -q "^losses  *0 events counted lost, 0 batches missing" "$1.report" ||
		fail "$3: losses: $(grep ^losses "$1.report")"
	grep -q "cut short\|no end seen" "$1.report" && fail "$3: a stream cut short"
	echo "  $3: $s writes stored of $2"
}

# ---- 1, 2: collectors killed -9 while the program writes ----------------
for kill_root in 0 1; do
	J=$T/kill$kill_root
	"$TAP" run -o "$J" -- "$WRITER" "$J.rec" $N > "$J.out" 2> "$J.err" &
	tp=$!
	PIDS="$PIDS $tp"
	size_at_least "$J.rec" $(( N * 8 / 4 )) $tp || fail "case $kill_root: the writer did not start"
	node=$(collector_pid $tp node) || fail "no node collector"
	if [ $kill_root = 1 ]; then
		root=$(collector_pid $tp root) || fail "no root receiver"
		kill -9 "$root"
	fi
	kill -9 "$node"
	wait $tp
	rc=$?
	[ "$rc" = 1 ] || { cat "$J.err"; fail "case $kill_root: run exited $rc, 1 expected"; }
	grep -q "the node collector was killed by signal 9" "$J.err" ||
		fail "case $kill_root: the node's end not said: $(cat "$J.err")"
	if [ $kill_root = 1 ]; then
		grep -q "events in [0-9]* batches of 1 process that reached no collector taken from $J/spool" "$J.err" ||
			fail "no spool taken: $(cat "$J.err")"
		[ -e "$J/spool" ] && fail "the spool was left: $(ls "$J/spool")"
		exact "$J" $N "node and root killed -9"
	else
		exact "$J" $N "node killed -9"
	fi
done

# ---- 3: signals to tapestry, or to its process group --------------------
for how in alone group group-handled; do
	for sig in INT TERM HUP; do
		J=$T/$how-$sig
		case $how in
		alone)	"$TAP" run -o "$J" -- "$WRITER" "$J.rec" > "$J.out" 2> "$J.err" &;;
		group)	setsid "$TAP" run -o "$J" -- "$WRITER" "$J.rec" > "$J.out" 2> "$J.err" &;;
		*)	setsid "$TAP" run -o "$J" -- "$WRITER" "$J.rec" -1 100000 > "$J.out" 2> "$J.err" &;;
		esac
		tp=$!
		PIDS="$PIDS $tp"
		size_at_least "$J.rec" 400000 $tp || fail "$how $sig: the writer did not start"
		if [ $how != alone ]; then
			kill -$sig -- -$tp	# setsid: tapestry leads its group
		else
			kill -$sig $tp
		fi
		wait $tp
		rc=$?
		[ "$rc" = $((128 + $(kill -l $sig))) ] ||
			fail "$how $sig: run exited $rc, 128 + SIG$sig expected"
		[ $how = group-handled ] || grep -q "killed by signal" "$J.err" ||
			fail "$how $sig: the program's end not said: $(cat "$J.err")"
		grep -q "not delivered\|could not be delivered\|reached no collector" "$J.err" &&
			fail "$how $sig: a sensor could not deliver: $(cat "$J.err")"
		exact "$J" $(( $(stat -c %s "$J.rec") / 8 )) "SIG$sig to tapestry $how" 1
	done
done
# ---- 4: launch, SIGINT to its group (the program handles it) ------------
J=$T/launch
mkdir -p "$T/lw"
cat > "$T/launch.xml" <<EOX
<?xml version="1.0"?>
<job name="losses">
  <hosts><host name="localhost" address="127.0.0.1" slots="1"/></hosts>
  <collectors>
    <collector name="loss-gw" host="localhost"/>
    <collector name="loss-node" host="localhost" parent="loss-gw"/>
  </collectors>
  <application executable="$WRITER" processes="1" workdir="$T/lw">
    <argument>$T/lw/rec</argument><argument>-1</argument><argument>100000</argument>
  </application>
</job>
EOX
setsid "$TAP" launch -o "$J" "$T/launch.xml" > "$J.out" 2> "$J.err" &
tp=$!
PIDS="$PIDS $tp"
size_at_least "$T/lw/rec" 400000 $tp || { cat "$J.err"; fail "launch: the writer did not start"; }
kill -INT -- -$tp
wait $tp
rc=$?
[ "$rc" = 130 ] || { cat "$J.err"; fail "launch: exited $rc, 130 expected"; }
grep -q "not delivered\|could not be delivered\|reached no collector" "$J.err" &&
	fail "launch: a sensor could not deliver: $(cat "$J.err")"
exact "$J" $(( $(stat -c %s "$T/lw/rec") / 8 )) "SIGINT to launch's group" 1
# ---- 5: a bare tree: node and root killed, the node restarted with the
# sensors' spool (--spool), the root reopening its job ----------------
mkdir -m 700 "$T/spool"
start_col root --listen 127.0.0.1:0 --output "$T/bare" || fail "root"
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root || fail "node"
env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR=127.0.0.1:$PORT_node TAPESTRY_SENSORS=libc \
	TAPESTRY_SPOOL="$T/spool" "$WRITER" "$T/bare.rec" $N 2> "$T/bare.err" &
W=$!
PIDS="$PIDS $W"
size_at_least "$T/bare.rec" $(( N * 8 / 4 )) $W || fail "bare: the writer did not start"
kill -9 $PID_node $PID_root
wait $W || fail "bare: the writer failed"
grep -q "kept for the job in $T/spool/" "$T/bare.err" || fail "bare: not spooled: $(cat "$T/bare.err")"
start_col root --listen 127.0.0.1:0 --output "$T/bare" || fail "root again"
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root --spool "$T/spool" ||
	fail "node again"
stop_col node || fail "node drain"
stop_col root || fail "root drain"
[ -n "$(ls "$T/spool")" ] && fail "bare: the spool was left: $(ls "$T/spool")"
exact "$T/bare" $N "bare tree, node and root killed, spool taken by the node"
echo PASS
