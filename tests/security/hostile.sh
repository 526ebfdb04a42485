#!/bin/sh
# tests/security/hostile.sh - authentication and hostile input against a
# node collector that serves a real (synthetic) job at the same time.
#
# Refused and logged: wrong secret, missing secret, a proof replayed from
# another connection, frames in the wrong order (BATCH or AUTH first,
# HELLO twice, an ACK sent upward), garbage, a bad CRC, an oversized length
# (before and after the handshake), a truncated frame, a client that
# connects and stalls. Meanwhile 8 synthetic sensors stream 24 M events
# through the node into the root: every (stream, seq) arrives once (check),
# and the job's duration with and without the attacks is printed (no
# threshold: the figures are for the reader).
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-hostile-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM
printf 'hostile-test-secret\n' >"$T/secret"
chmod 600 "$T/secret"
COMMON="--secret-file $T/secret --stats-period 1s --handshake-timeout 2s"
JOB="--streams 8 --events 3000000 --batch 4096 --level 1 --unique --secret-file $T/secret --timeout 120"

echo "== default listening address is loopback"
"$COL" --help | grep -q "default 127.0.0.1:7450" || fail "help does not say the default"
start_col dflt --parent 127.0.0.1:9 --print-port || fail "default start"
grep -q "^listening 127.0.0.1:7450$" "$T/dflt.port" || fail "default is not 127.0.0.1:7450: $(cat $T/dflt.port)"
ss -ltn 2>/dev/null | grep -q "127.0.0.1:7450" || echo "  (ss not available to double-check)"
stop_col dflt
echo "  default: $(cat $T/dflt.port)"

echo "== baseline: the job alone"
start_col root --listen 127.0.0.1:0 --output "$T/job0" $COMMON || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root $COMMON || fail node
"$SYNTH" --connect 127.0.0.1:$PORT_node $JOB >"$T/s0.out" || fail "baseline synth: $(cat $T/s0.out)"
stop_col node; stop_col root
"$CHECK" --dir "$T/job0" --streams 8 --events 3000000 --batch 4096 --unique --require-bye >/dev/null || fail "baseline check"

echo "== the same job under attack"
start_col root --listen 127.0.0.1:0 --output "$T/job1" $COMMON || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root $COMMON || fail node
N=127.0.0.1:$PORT_node
"$SYNTH" --connect $N $JOB >"$T/s1.out" &
job=$!
# 40 stalled connections and 10 truncated-then-stalled ones, all at once
stalls=""
for i in $(seq 1 40); do
	"$ATTACK" --connect $N --mode stall --timeout 20 >"$T/stall$i.out" &
	stalls="$stalls $!"
done
for i in $(seq 1 10); do
	"$ATTACK" --connect $N --mode truncated-stall --timeout 20 >"$T/tstall$i.out" &
	stalls="$stalls $!"
done
n=0
for round in 1 2 3; do
	for m in garbage badcrc oversized truncated batch-first auth-first \
		 hello-twice wrong-secret no-secret replay ack-upward \
		 oversized-stream; do
		"$ATTACK" --connect $N --mode $m --secret-file "$T/secret" \
			--timeout 10 >"$T/a.out" 2>&1 || { cat "$T/a.out"; fail "attack $m was not refused"; }
		[ $round = 1 ] && sed 's/^/  /' "$T/a.out"
		n=$((n + 1))
	done
done
# the root is attacked directly too (it stores what it accepts)
for m in garbage oversized wrong-secret replay batch-first; do
	"$ATTACK" --connect 127.0.0.1:$PORT_root --mode $m --secret-file "$T/secret" \
		--timeout 10 >"$T/a.out" 2>&1 || { cat "$T/a.out"; fail "attack $m on the root was not refused"; }
	n=$((n + 1))
done
for p in $stalls; do
	wait $p || fail "a stalled connection was not closed"
done
sed 's/^/  /' "$T/stall1.out" "$T/tstall1.out"
"$ATTACK" --connect $N --mode good --secret-file "$T/secret" >/dev/null || fail "a good client is refused after the attacks"
wait $job || fail "the job under attack: $(cat $T/s1.out)"
stop_col node || fail "node drain"
stop_col root || fail "root drain"
"$CHECK" --dir "$T/job1" --streams 8 --events 3000000 --batch 4096 --unique --require-bye || fail "the job lost or duplicated something"

echo "== log lines"
expect_log node "malformed handshake frame (PROTO_E_MAGIC)" garbage
expect_log node "(PROTO_E_CHECKSUM)" "bad CRC"
expect_log node "malformed handshake frame (PROTO_E_TOOBIG)" "oversized before WELCOME"
expect_log node "malformed frame (PROTO_E_TOOBIG)" "oversized after WELCOME"
expect_log node "truncated frame" truncated
expect_log node "not allowed in this state (PROTO_E_STATE)" "wrong order"
expect_log node "authentication failed (PROTO_E_AUTH)" "wrong/missing secret, replay"
expect_log node "handshake not finished in 2000 ms" stall
expect_log root "authentication failed (PROTO_E_AUTH)" "root: wrong secret"
expect_log root "malformed handshake frame (PROTO_E_MAGIC)" "root: garbage"
auth_fails=$(grep -c "authentication failed" "$T/node.log")
[ "$auth_fails" -ge 9 ] || fail "$auth_fails authentication failures logged, 9 expected (3 wrong, 3 missing, 3 replayed)"
stalled=$(grep -c "handshake not finished" "$T/node.log")
[ "$stalled" -ge 50 ] || fail "$stalled stalled connections closed, 50 expected"
echo "attacks: $n refused, $stalled stalled connections closed, $auth_fails failed proofs logged"
echo "job of 24 M events: $(secs $T/s0.out) s alone, $(secs $T/s1.out) s under attack"
echo PASS
