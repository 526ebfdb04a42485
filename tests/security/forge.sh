#!/bin/sh
# tests/security/forge.sh - forged sequence numbers and streams spoken for
# by a connection that does not own them (docs/SECURITY.md, "Streams").
#
# A node and a root without a job secret (as `tapestry-collector` runs by
# default), one synthetic sensor streaming. While it streams, the attacker
# reads the stream id from the node's log and sends one 41-byte BATCH for
# it with seq 10^9: as another sensor, as a second connection of the same
# stream (without the stream's key: refused at its handshake), as a
# collector, to the node and to the root; and a BATCH of a
# fresh stream with seq 10^9 (the window alone). Each is refused (ERROR,
# close), counted ("refused" in STATS) and logged with who sent it; the
# job is stored complete (every (stream, seq) once, BYE) and the report
# names the refusals.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-forge-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM
COMMON="--stats-period 1s"

start_col root --listen 127.0.0.1:0 --output "$T/job" $COMMON || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root $COMMON || fail node
N=127.0.0.1:$PORT_node
R=127.0.0.1:$PORT_root
"$SYNTH" --connect $N --streams 1 --events 400000 --batch 1000 --rate 50000 \
	--unique --timeout 120 >"$T/synth.out" &
job=$!
PIDS="$PIDS $job"
sid=
for i in $(seq 1 200); do
	sid=$(sed -n 's/.*sensor \([0-9a-f]\{16\}\) connected from.*/\1/p' "$T/node.log" | head -1)
	[ -n "$sid" ] && break
	sleep 0.05
done
[ -n "$sid" ] || fail "no sensor seen in the node's log"
echo "stream $sid is streaming"

OTHER=
forge() {	# WHAT TARGET ARGS...
	what=$1; shift
	$OTHER "$ATTACK" --mode forge --timeout 10 "$@" >"$T/a.out" 2>&1 ||
		{ cat "$T/a.out"; fail "$what: not refused"; }
	sed "s/^/  $what: /" "$T/a.out"
}
forge "node, another sensor" --connect $N --stream $sid
# a second connection of the stream without its key (the attacker's own):
# refused at the handshake, whoever sends it
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod 755 "$T"
	forge "node, the same stream id, another user" --connect $N --stream $sid \
		--hello-id stream
	other=1
else
	echo "  (not root: the other-user case is skipped)"
	other=0
fi
OTHER=
forge "node, the same stream id, the same user" --connect $N --stream $sid --hello-id stream
# a collector's link is not closed for one frame (it carries other
# streams): the frame is dropped unacknowledged, and the log says so
forge "node, as a collector" --connect $N --stream $sid --role collector --timeout 3
forge "root, as a collector" --connect $R --stream $sid --role collector --timeout 3
forge "root, the same stream id" --connect $R --stream $sid --hello-id stream
forge "root, a fresh stream" --connect $R --hello-id 5eed000000000001 --stream 5eed000000000001
wait $job || fail "the job: $(cat $T/synth.out)"
stop_col node || fail "node drain"
stop_col root || fail "root drain"
"$CHECK" --dir "$T/job" --streams 1 --events 400000 --batch 1000 --unique \
	--require-bye || fail "the job lost something to the forged batches"

# stream ids are in the logs and the job directory: only their owner reads them
for f in "$T/job" "$T/job/segments"; do
	[ "$(stat -c %a "$f")" = 700 ] || fail "$f is $(stat -c %a "$f"), not 700"
done
for f in "$T/node.log" "$T/root.log" "$T/job/index" "$T"/job/segments/*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f"), not 600"
done
echo "  job directory 0700, its files and the logs 0600"
expect_log node "refused from .*another stream" "node: another sensor"
[ $other = 1 ] && expect_log node "refused from .*uid 65534).*without the stream's key" "node: a second connection, another user"
expect_log node "refused from .*(sensor .*uid $(id -u)).*seq 0: a second connection without the stream's key" "node: a second connection, the same user"
expect_log node "refused from .*(collector .*seq 1000000000: \(the stream belongs to another connection\|seq out of the window\)" "node: a collector"
expect_log root "refused from .*(collector.*belongs to another connection" "root: a collector"
expect_log root "refused from .*(sensor .*seq 0: a second connection without the stream's key" "root: the same stream id"
expect_log root "refused from .*seq out of the window" "root: a fresh stream"
grep "refused from" "$T/node.log" | grep -q " uid $(id -u)" ||
	fail "the node's log does not name the sender's uid"
nr=$(grep -c "refused from" "$T/node.log")
rr=$(grep -c "refused from" "$T/root.log")
[ "$nr" = $((3 + other)) ] || fail "node: $nr refusals logged, $((3 + other)) expected"
[ "$rr" = 3 ] || fail "root: $rr refusals logged, 3 expected"

# the report counts them and says who sent them
"$TAP" report "$T/job" >"$T/report.txt" 2>&1 || fail "report: $(cat $T/report.txt)"
grep -q "^refused  *$((6 + other)) frames" "$T/report.txt" ||
	{ cat "$T/report.txt"; fail "the report does not count $((6 + other)) refused frames"; }
grep -q "seq 1000000000" "$T/report.txt" ||
	{ cat "$T/report.txt"; fail "the report does not say what was refused"; }
grep "^refused" -A3 "$T/report.txt" | sed 's/^/  report: /'

echo "== tapestry run makes a secret per job"
"$TAP" run -o "$T/run" -- true 2>"$T/run.err" || fail "tapestry run: $(cat $T/run.err)"
[ "$(stat -c %a "$T/run/creds/secret" 2>/dev/null)" = 600 ] ||
	fail "tapestry run made no secret (0600) in DIR/creds"
[ "$(stat -c %a "$T/run")" = 700 ] || fail "tapestry run's job directory is not 0700"
"$TAP" report "$T/run" | grep -q "ended" || fail "the run's stream did not prove the secret"
echo "  $T/run/creds/secret, 0600; the stream stored"
echo PASS
