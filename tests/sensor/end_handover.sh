#!/bin/sh
# tests/sensor/end_handover.sh - the end of a stream (exit, exec) does not
# wait for the BYE's ACK (issue 31 item 4): once the node collector's
# kernel holds every byte, the process goes. Nothing may be lost for it,
# nothing said or spooled as undelivered (docs/modules/sensor-runtime.md,
# "Start-up and end cost").
#   1. root frozen (SIGSTOP): no ACK can come; the node answers the
#      handshake. 10 short processes (bash: fork + exec each) and one of 20,000
#      writes end, say nothing, spool nothing; every event is stored once
#      the root is resumed, every stream with its BYE.
#   2. node frozen after the handshake: dd's last records and its BYE wait
#      in the node's receive queue after dd exited; the node, resumed,
#      reads them from the closed connection: all stored.
#   3. TAPESTRY_END_WAIT=ack with the root frozen: the end waits for the
#      ACK (4 s), then keeps the stream in the spool and says so.
. "$srcdir/tests/sensor/lib.sh"
DDPID=
trap '[ -n "$DDPID" ] && { kill -KILL $DDPID 2>/dev/null; wait $DDPID 2>/dev/null; }; cleanup' EXIT
export TAPESTRY_SPOOL="$T/spool"
mkdir "$T/spool" "$T/w" || fail mkdir

# --- 1. no ACK can come
start_collectors job
kill -STOP "$RPID"
# bash forks and execs each command (dash would vfork: no child stream)
traced bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$1" write 10 "$2" || exit 1; done' \
	bash "$PROG" "$T/w" > "$T/out1" 2> "$T/err1" || fail "short processes: $(cat "$T/err1")"
traced "$PROG" write 20000 "$T/w" > "$T/out2" 2> "$T/err2" || fail "20000 writes"
alive "$RPID" || fail "root gone"
[ "$(sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$RPID/stat")" = T ] ||
	fail "the root was not stopped while the programs ended"
[ -s "$T/err1" ] && fail "short processes said: $(cat "$T/err1")"
[ -s "$T/err2" ] && fail "20000 writes said: $(cat "$T/err2")"
expect "spool files (no ACK awaited)" "$(ls "$T/spool" | wc -l | tr -d ' ')" 0
kill -CONT "$RPID"
stop_collectors
dump "$T/job" "$T/dump"
# bash, then per process: its forked child (ended by exec) and the image
expect "streams" "$(streams "$T/dump")" $((1 + 2 * 10 + 1))
expect "streams with their BYE" "$(grep -c '^total .* bye=[1-9]$' "$T/dump")" 22
expect "writes of the short processes" \
	"$(count "$T/dump" " name=write " " bytes=64 ")" $((10 * 11 + 20001))
expect "streams with drops" "$(grep -c '^total .* dropped=[1-9]' "$T/dump")" 0

# --- 2. the node reads a dead process's end
start_collectors job2
# node.log keeps the earlier collectors' lines: dd's is the next one
seen=$(grep -c "sensor .* connected from" "$T/node.log")
mkfifo "$T/fifo" || fail mkfifo
exec 7<> "$T/fifo"
traced dd if="$T/fifo" of="$T/dd.out" bs=64 count=2000 iflag=fullblock \
	status=none 2> "$T/err.dd" &
DDPID=$!
head -c 64000 /dev/zero >&7 || fail "feeding the FIFO"
i=0
until [ "$(grep -c "sensor .* connected from" "$T/node.log")" -gt "$seen" ]; do
	i=$((i + 1))
	[ $i -lt 3000 ] || fail "dd's sensor did not connect"
	sleep 0.01
done
kill -STOP "$NPID"
head -c 64000 /dev/zero >&7 || fail "feeding the FIFO"
wait "$DDPID"
expect "dd's exit status with the node frozen" $? 0
DDPID=
[ -s "$T/err.dd" ] && fail "dd said: $(cat "$T/err.dd")"
expect "spool files (node frozen)" "$(ls "$T/spool" | wc -l | tr -d ' ')" 0
stop_collectors
dump "$T/job2" "$T/dump2"
expect "dd streams" "$(streams "$T/dump2")" 1
expect "dd's writes" "$(count "$T/dump2" " name=write " " bytes=64 ")" 2000
expect "dd's BYE" "$(grep -c '^total .* bye=1$' "$T/dump2")" 1

# --- 3. the old end, asked for: waits for the ACK, then spools
start_collectors job3
kill -STOP "$RPID"
TAPESTRY_END_WAIT=ack traced "$PROG" write 100 "$T/w" > "$T/out3" 2> "$T/err3" ||
	fail "write with END_WAIT=ack"
grep -q "could not be delivered to the collectors (.*): kept for the job in $T/spool/" \
	"$T/err3" || fail "no spool line: $(cat "$T/err3")"
expect "spool files (END_WAIT=ack)" "$(ls "$T/spool" | wc -l | tr -d ' ')" 1
kill -CONT "$RPID"
stop_collectors
echo "ok: ends handed over without the ACK, all stored; END_WAIT=ack spools"
