#!/usr/bin/env bash
# tests/manager/test_clock_ns.sh - one global clock across two "hosts" on one
# machine (issue 6). Host A is this namespace; host B is a time namespace
# whose CLOCK_MONOTONIC is offset by +5 s, and whose collector and sensors run
# TAPESTRY_CLOCK_DRIFT_PPM=50. A 4-rank Open MPI ring runs 2 ranks on each
# host (MPMD, B's ranks started through `unshare --time`), each host's ranks
# sending to their own node collector, both collectors under one root.
# Truth for B: y = (x + 5e9) (1 + 50e-6), x the root's clock. Checked: the
# offset composed along sensor -> node B -> root within 5 us of the truth at
# its origin (the target), or, on a machine so loaded that the edge's
# fastest round trip exceeds 10 us, within half of it (the bound of any
# round-trip estimate: said when used), the drift within 1 ppm, zero
# causality violations after repair.
# Each sensor reads its collector's clock (B's in other namespaces, but with
# the same offsets and drift): that edge is the identity ("same clock"), and
# node B -> root is the estimate checked.
# Skips (77) without root, time namespaces, Open MPI or the MPI sensor.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
B=$top_builddir
COL="$B/tapestry-collector"
TAP="$B/manager/tapestry"
LIB="$B/sensor/.libs/libtapestry-mpi-openmpi.so"
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
	{ echo "no Open MPI: skipped"; exit 77; }
[ -f "$LIB" ] || { echo "no Open MPI sensor: skipped"; exit 77; }
unshare --time --monotonic 5 --fork true 2>/dev/null ||
	{ echo "time namespaces unavailable: skipped"; exit 77; }
T=$(mktemp -d /tmp/tapestry-test-clockns.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	pkill -9 -f "tapestry-collector.*$T" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.log; do echo "== $f"; tail -n 15 "$f"; done; exit 1; }

# start NAME CMD... : a collector printing its port; sets PORT
start() {
	name=$1; shift
	: >"$T/$name.port"	# not a previous collector's port (see start_col)
	"$@" --print-port --log-file "$T/$name.log" >"$T/$name.port" &
	PIDS="$PIDS $!"
	eval "PID_$name=$!"
	for _ in $(seq 1 200); do
		PORT=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$T/$name.port")
		[ -n "$PORT" ] && return 0
		sleep 0.05
	done
	fail "collector $name did not start"
}
# stop NAME: SIGTERM the collector (under unshare: unshare's child, since
# unshare does not pass signals on), then wait for the started process
stop() {
	eval "p=\$PID_$1"
	c=$(pgrep -P "$p" -f tapestry-collector | head -n1)
	kill -TERM "${c:-$p}"
	wait "$p"
}

mpicc.openmpi -O2 -o "$T/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99
start root "$COL" --listen 127.0.0.1:0 --output "$T/job"
ROOT=$PORT
start nodeA "$COL" --listen 127.0.0.1:0 --parent "127.0.0.1:$ROOT" --name nodeA
NA=$PORT
start nodeB unshare --time --monotonic 5 --fork env TAPESTRY_CLOCK_DRIFT_PPM=50 \
	"$COL" --listen 127.0.0.1:0 --parent "127.0.0.1:$ROOT" --name nodeB \
	--clock-period 1s
NB=$PORT
# about 6 s of run so that a 50 ppm drift is measured between the start and
# end samples; the sensors also sample every few seconds
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 180 \
	mpirun.openmpi --oversubscribe \
	-np 2 env LD_PRELOAD="$LIB" TAPESTRY_COLLECTOR="127.0.0.1:$NA" \
		TAPESTRY_SENSORS=mpi "$T/ring" 8000 : \
	-np 2 unshare --time --monotonic 5 --fork env LD_PRELOAD="$LIB" \
		TAPESTRY_COLLECTOR="127.0.0.1:$NB" TAPESTRY_SENSORS=mpi \
		TAPESTRY_CLOCK_DRIFT_PPM=50 "$T/ring" 8000 >"$T/ring.out" 2>&1 ||
	{ cat "$T/ring.out"; fail "the MPI ring failed"; }
stop nodeA; stop nodeB; stop root
"$TAP" report --xml "$T/job" >"$T/report.xml" 2>"$T/report.err" || fail "report"
"$TAP" report "$T/job" >"$T/report.txt" 2>&1
python3 - "$T/report.xml" <<'PY' || fail "clock or causality off target (report above)"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
ranks = {s.get("id"): int(s.get("rank")) for s in r.findall("stream")}
clocks = {c.get("child"): c for c in r.findall("clock")}
ok = True
seen = 0
for sid, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
    if rank < 0 or sid not in clocks:
        continue
    c = clocks[sid]
    depth = int(c.get("depth"))
    off, drift = float(c.get("path_offset_ns")), float(c.get("path_drift_ppm"))
    x0 = int(c.get("path_x0"))
    host_b = abs(off) > 1e9
    truth = 5e9 + (x0 + 5e9) * 50e-6 if host_b else 0.0
    tdrift = 50.0 if host_b else 0.0
    err, derr = off - truth, drift - tdrift
    print("rank %d (%s): offset %.1f ns, truth %.1f, error %.2f us (CI +-%.2f us); "
          "drift %.4f ppm, error %.4f ppm; depth %d"
          % (rank, "B" if host_b else "A", off, truth, err / 1e3,
             float(c.get("path_offset_ci_ns")) / 1e3, drift, derr, depth))
    seen += 1
    node = clocks.get(c.get("parent"))
    # the target is 5 us; what any round-trip estimate can promise is half
    # the fastest round trip of the edge (an asymmetry of the two ways moves
    # the offset by up to that, and nothing on the wire shows it): on a
    # loaded machine the round trips grow, so the check takes the larger
    bound = 5000.0
    if host_b and node is not None:
        bound = max(bound, float(node.get("rtt_min_ns")) / 2)
    if abs(err) > 5000:
        print("rank %d: offset error %.2f us beyond the 5 us target; the "
              "edge's bound (half its fastest round trip) is %.2f us"
              % (rank, err / 1e3, bound / 1e3))
    if depth != 2 or abs(err) > bound or abs(derr) > 1.0:
        ok = False
    if c.get("quality") != "same clock" or node is None or \
            (node.get("quality") == "same clock") != (not host_b):
        print("rank %d: its edge is %s, its collector's %s" % (rank,
              c.get("quality"), node.get("quality") if node is not None else "missing"))
        ok = False
hb = sum(1 for sid, rk in ranks.items() if rk >= 0 and sid in clocks
         and abs(float(clocks[sid].get("path_offset_ns"))) > 1e9)
ca = r.find("causality")
print("causality: %s messages, violations %s before repair, %s after; largest "
      "change of a local interval %s ns" % (ca.get("messages"), ca.get("violations_before"),
      ca.get("violations_after"), ca.get("max_interval_change_ns")))
if seen != 4 or hb != 2 or ca.get("violations_after") != "0" or int(ca.get("messages")) == 0 \
        or ca.get("coll_violations_after") != "0":
    ok = False
sys.exit(0 if ok else 1)
PY
