#!/bin/sh
# tests/security/streamkey.sh - stream keys (docs/PROTOCOL.md, "Stream
# keys"; docs/SECURITY.md, "Streams"): a process that speaks for another's
# stream is refused at its handshake, whether the stream's connection
# lives or is gone, and even on a node collector restarted since the
# stream began (it asks the root, which knows the stream's verifier): no
# forged frame reaches the root, so nothing waits there for an ACK. The
# real sensors resume after the restart.
#
# 1. A synthetic sensor streams through a node to a root (no job secret).
#    The attacker takes its stream id from the node's log and connects as
#    that stream with a key of its own: refused by the node.
# 2. The sensor is stopped (SIGSTOP), the node killed (-9) and restarted on
#    its port: the stream's connection is gone and the new node does not
#    know the stream. The attacker tries again: the node asks the root,
#    the root refuses, the node refuses. Once more saying the stream is
#    new (--first): the node takes it on its word, the attacker sends its
#    BATCH, the root says no: the connection is closed and the BATCH
#    dropped at the node and at the root. The sensor continues (SIGCONT),
#    reconnects, is accepted; the job is stored complete (no 1-byte forged
#    batch in it), and the node drains without waiting for anything.
# 3. A real traced program (LD_PRELOAD) writing while its node is killed
#    and restarted: it reconnects, is accepted, and every write is stored.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-streamkey-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM

# wait_log NAME PATTERN : until collector NAME's log has PATTERN (10 s)
wait_log() {
	for i in $(seq 1 200); do
		grep -q -- "$2" "$T/$1.log" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no '$2' in $1.log"
}
takeover() {	# WHAT ADDR [--first] : connect as stream $sid with another key
	what=$1 addr=$2; shift 2
	"$ATTACK" --mode forge --timeout 10 --connect "$addr" --stream $sid \
		--hello-id stream "$@" >"$T/a.out" 2>&1 ||
		{ cat "$T/a.out"; fail "$what: not refused"; }
	grep -q "ERROR PROTO_E_AUTH" "$T/a.out" ||
		{ cat "$T/a.out"; fail "$what: not refused"; }
	sed "s/^/  $what: /" "$T/a.out"
}

echo "== 1. the stream's connection lives"
start_col root --listen 127.0.0.1:0 --output "$T/job" || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root || fail node
N=127.0.0.1:$PORT_node
"$SYNTH" --connect $N --streams 1 --events 200000 --batch 1000 --rate 40000 \
	--unique --timeout 120 >"$T/synth.out" &
SY=$!
PIDS="$PIDS $SY"
wait_log node "sensor [0-9a-f]\{16\} connected from"
sid=$(sed -n 's/.*sensor \([0-9a-f]\{16\}\) connected from.*/\1/p' "$T/node.log" | head -1)
echo "  stream $sid is streaming"
takeover "live stream, node" $N
grep -q "refused at the handshake" "$T/a.out" || fail "not refused at the handshake"
grep -q "refused from .*(sensor $sid .*a second connection without the stream's key" \
	"$T/node.log" || fail "the node did not log the refusal"

echo "== 2. the node restarted: its connection gone, the stream unknown there"
kill -STOP $SY
kill -9 $PID_node
wait $PID_node 2>/dev/null
mv "$T/node.log" "$T/node1.log"
start_col node --listen $N --parent 127.0.0.1:$PORT_root || fail "node restart"
wait_log node "parent .* connected"
takeover "restarted node" $N
grep -q "refused at the handshake" "$T/a.out" || fail "not refused at the handshake"
wait_log root "refused from .*: stream $sid seq 0: a KEY passed up without the stream's key"
wait_log node "refused from .*(sensor $sid .*its stream key was refused above"
takeover "restarted node, 'the stream is new'" $N --first
grep -q "BATCH of $sid" "$T/a.out" || fail "the --first claim was not taken on its word"
[ "$(grep -c "KEY passed up" "$T/root.log")" = 2 ] || fail "the root did not refuse both KEYs"
[ "$(grep -c "refused above" "$T/node.log")" = 2 ] || fail "the node did not refuse both"
grep "KEY passed up" "$T/root.log" | cut -c25- | sed 's/^/  logged (root): /'
grep "refused above" "$T/node.log" | cut -c25- | sed 's/^/  logged (node): /'
kill -CONT $SY
wait $SY || fail "the sensor after the restart: $(cat $T/synth.out)"
wait_log node "sensor $sid connected from"
echo "  the sensor reconnected: $(cat "$T/synth.out")"
stop_col node || fail "node drain"
grep -q "drained: everything acknowledged" "$T/node.log" ||
	fail "the node's drain waited for something"
"$CHECK" --dir "$T/job" --streams 1 --events 200000 --batch 1000 --unique \
	--require-bye >"$T/check.out" || { cat "$T/check.out"; fail "the job is not complete"; }
echo "  $(cat "$T/check.out")"
grep -q " bad=0 " "$T/check.out" || fail "a forged batch was stored"

echo "== 3. a real sensor, its node killed and restarted"
[ -f "$SO" ] || { echo "  no sensor library: skipped"; stop_col root; echo PASS; exit 0; }
mv "$T/node.log" "$T/node2.log"
start_col node --listen $N --parent 127.0.0.1:$PORT_root || fail "node restart"
env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR=$N TAPESTRY_SENSORS=libc \
	TAPESTRY_RING_FULL=wait "$WRITER" "$T/records" 600000 &
W=$!
PIDS="$PIDS $W"
wait_log node "sensor [0-9a-f]\{16\} connected from"
wid=$(sed -n 's/.*sensor \([0-9a-f]\{16\}\) connected from.*/\1/p' "$T/node.log" | head -1)
kill -9 $PID_node
wait $PID_node 2>/dev/null
mv "$T/node.log" "$T/node3.log"
start_col node --listen $N --parent 127.0.0.1:$PORT_root || fail "node restart"
wait $W || fail "the traced program failed"
wait_log node "sensor $wid connected from"
echo "  stream $wid reconnected to the restarted node"
stop_col node || fail "node drain"
stop_col root || fail "root drain"
grep -q "refused from .*$wid" "$T/node.log" "$T/root.log" &&
	fail "the real sensor was refused"
TAPESTRY_NO_CORRECTION=1 "$TAP" export -f csv -o "$T/job.csv" "$T/job" 2>/dev/null ||
	fail "export"
stored=$(awk -F, '$3=="write" && $6==8 && $11 == '"$W"'' "$T/job.csv" | wc -l)
echo "  writes done 600000, stored $stored"
[ "$stored" = 600000 ] || fail "the real sensor lost writes across the restart"
echo PASS
