#!/bin/sh
# tests/sensor/reconnect.sh - the node collector dies (kill -9) in the
# middle of a traced run, with batches it had taken but the root had not
# acknowledged, and is restarted on the same port while the program runs
# on: the sensor reconnects and resends; every event is stored exactly once.
#
# The traced program is dd(1) copying 64-byte blocks from a FIFO this script
# feeds (held open read-write here, so dd never sees an early end of file
# and a 64000-byte phase fits in the pipe without blocking): each phase is
# 1000 write(2) calls of 64 bytes, and dd waits between phases, so the kill
# and the restart happen at known points of one sensor stream.
#   phase 1: root stopped (SIGSTOP): the node forwards, no ACK comes back;
#            then kill -9 of the node: the sensor's batches are unacked.
#   phase 2: no node collector: the sensor keeps its batches, retries.
#   phase 3: root resumed (it stores what the dead node had sent), node
#            restarted on the same port: the sensor reconnects and resends,
#            the root drops the batches it already has.
. "$srcdir/tests/sensor/lib.sh"
BLOCKS=1000
DDPID=
# dd is a child of this shell: kill it before lib.sh's cleanup
trap '[ -n "$DDPID" ] && { kill -KILL $DDPID 2>/dev/null; wait $DDPID 2>/dev/null; }; cleanup' EXIT

# wait_size FILE BYTES: until FILE holds BYTES (dd copied the phase), 30 s max
wait_size() {
	i=0
	while [ "$(wc -c 2>/dev/null < "$1" || echo 0)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -lt 3000 ] || fail "dd did not copy $2 bytes (has $(wc -c < "$1"))"
		alive "$DDPID" || fail "dd exited early"
		sleep 0.01
	done
}

feed() {
	head -c $((64 * BLOCKS)) /dev/zero >&7 || fail "feeding the FIFO"
}

start_collectors job
mkfifo "$T/fifo" || fail mkfifo
exec 7<> "$T/fifo"
traced dd if="$T/fifo" of="$T/dd.out" bs=64 count=$((3 * BLOCKS)) \
	iflag=fullblock status=none &
DDPID=$!

kill -STOP "$RPID"
feed
wait_size "$T/dd.out" $((64 * BLOCKS))
sleep 0.3		# sensor ships (5 ms loop), node forwards (50 ms)
kill -KILL "$NPID"
wait "$NPID" 2>/dev/null
NPID=
oldport=$PORT

feed
wait_size "$T/dd.out" $((128 * BLOCKS))
sleep 0.2		# the sensor finds no collector, backs off

kill -CONT "$RPID"
node_start "127.0.0.1:$oldport"
expect "restarted node's port" "$PORT" "$oldport"
feed
wait "$DDPID"
rc=$?
DDPID=
exec 7>&-
expect "dd exit status" $rc 0
stop_collectors
expect "dd output" "$(wc -c < "$T/dd.out" | tr -d ' ')" $((192 * BLOCKS))

dump "$T/job" "$T/dump"
expect "write events" \
	"$(count "$T/dump" " name=write " " bytes=64 " "path=$T/dd.out")" \
	$((3 * BLOCKS))
expect "streams" "$(streams "$T/dump")" 1
grep -q '^total .* dropped=0 .* bye=1$' "$T/dump" ||
	fail "drops or no BYE: $(grep '^total ' "$T/dump")"
# the sensor did talk to both node collectors (connected lines in the log)
expect "sensor connections to the node collectors" \
	"$(grep -c ' sensor [0-9a-f]* connected from ' "$T/node.log")" 2
echo "ok: node collector killed and restarted mid-run, $((3 * BLOCKS)) writes stored once"
