#!/bin/sh
# tests/security/limits.sh - memory and time limits of authenticated
# clients (docs/SECURITY.md, "Limits").
#
# 1. Eight authenticated connections each send 15 MiB of a 16 MiB BATCH
#    and hold, against a node started with --mem-cap 32M: the bytes of
#    partly read frames count against the cap, so the node's resident
#    memory stays under a bound derived from the cap (its RSS before, plus
#    the cap, plus one frame that is always let in, plus each connection's
#    1.25 MiB read buffer, plus 16 MiB of allocator slack); connections
#    past the cap wait (logged), and a good client is still served.
# 2. A client idle after the handshake is closed after --idle-timeout.
# 3. A real sensor in a quiet program (sleeping longer than the idle
#    timeout) is never closed: it pings.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-limits-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

echo "== 8 connections holding 15 MiB of a 16 MiB frame, --mem-cap 32M"
start_col root --listen 127.0.0.1:0 --output "$T/job" || fail root
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root \
	--mem-cap 32M --idle-timeout 60s || fail node
N=127.0.0.1:$PORT_node
before=$(rss_kb $PID_node)
holders=""
for i in 1 2 3 4 5 6 7 8; do
	"$ATTACK" --connect $N --mode hold-frame --timeout 60 >"$T/hold$i.out" 2>&1 &
	holders="$holders $!"
	PIDS="$PIDS $!"
done
# wait until each holder has either written all its bytes or is waiting
# for memory (the node says so); a deadline for progress, not a timing
ok=0
for i in $(seq 1 600); do
	held=$(cat "$T"/hold*.out 2>/dev/null | grep -c "held")
	waiting=$(grep -c "waits for memory" "$T/node.log")
	[ $((held + waiting)) -ge 8 ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || fail "the holders made no progress: $held held, $waiting waiting"
sleep 1	# the last reads of the granted connections
after=$(rss_kb $PID_node)
bound=$((before + 32768 + 16384 + 8 * 1280 + 16384))
echo "  node RSS ${before} kB before, ${after} kB with 8 held frames ($held complete, $waiting waiting); bound ${bound} kB"
[ "$after" -le "$bound" ] || fail "RSS ${after} kB over the bound ${bound} kB"
[ "$waiting" -ge 1 ] || fail "no connection was made to wait"
"$ATTACK" --connect $N --mode good >/dev/null || fail "a good client is refused while frames are held"
for p in $holders; do kill $p 2>/dev/null; done
for p in $holders; do wait $p 2>/dev/null; done
stop_col node; stop_col root

echo "== an idle client is closed"
start_col root --listen 127.0.0.1:0 --output "$T/job2" || fail root
start_col idle --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root \
	--idle-timeout 2s || fail node
N=127.0.0.1:$PORT_idle
"$ATTACK" --connect $N --mode idle --timeout 30 >"$T/idle.out" 2>&1 ||
	{ cat "$T/idle.out"; fail "an idle client was not closed"; }
sed 's/^/  /' "$T/idle.out"
expect_log idle "idle for 2000 ms after the handshake" idle

echo "== a quiet traced program and a quiet collector are not closed (they ping)"
start_col quiet --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_root \
	--idle-timeout 7s || fail node
# no clock rounds, no STATS: its keep-alive PINGs (every 5 s) hold the link
start_col silent --listen 127.0.0.1:0 --parent 127.0.0.1:$PORT_quiet \
	--clock-period 0 --stats-period 0 || fail "silent collector"
if [ -f "$SO" ]; then
	timeout 60 env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR=127.0.0.1:$PORT_quiet \
		sleep 12 || fail "the traced sleep failed"
	grep -q "sensor .* connected" "$T/quiet.log" || fail "the sensor never connected"
else
	echo "  (no sensor library: the collector alone)"
	sleep 12
fi
stop_col silent
stop_col quiet
if grep -q "idle for" "$T/quiet.log"; then
	fail "a healthy sensor or collector was closed as idle"
fi
n=$(grep -c "collector .* connected" "$T/quiet.log")
[ "$n" = 1 ] || fail "the silent collector connected $n times (closed as idle?)"
grep -q "reconnected" "$T/silent.log" && fail "the silent collector reconnected"
echo "  12 s, --idle-timeout 7s: the traced sleep and a collector run with --clock-period 0 --stats-period 0 not closed"
stop_col idle; stop_col root
echo PASS
