#!/usr/bin/env bash
# tests/manager/test_folding.sh - acquisition modes ([000] 4.2, issue 7): the
# same 4-rank MPI ring launched in regular mode (4 slots) and in folding mode
# (4 ranks on 1 declared slot) gives the same time-independent volumes: per
# rank the same messages (peers, tags, bytes, in order) and computation
# volumes within 1 % (also for the whole run) when the sensor counted
# instructions. Where it could not (no hardware counter: volumes are CPU
# time x flop rate), both runs are given one flop rate
# (TAPESTRY_FLOP_RATE, else each MPI_Init calibrates its own: 7-36 % per
# rank apart on a loaded machine), so only the CPU times' noise remains;
# the volumes are printed and checked to be the same work (the whole run
# within 50 % from CPU time, 1 % from an instruction counter, which one
# that lost a stretch of computation would not be; each rank within twice
# that, which a volume taken from wall time, 4 ranks sharing one slot,
# would not be).
# Skips (77) without Open MPI or the MPI sensor.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
TAP="$top_builddir/manager/tapestry"
command -v mpicc.openmpi >/dev/null || { echo "no Open MPI: skipped"; exit 77; }
[ -f "$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so" ] || { echo "no MPI sensor: skipped"; exit 77; }
T=$(mktemp -d /tmp/tapestry-test-folding.XXXXXX)
trap 'pkill -9 -f "[t]apestry-collector.*$T" 2>/dev/null; rm -rf "$T"' EXIT
mpicc.openmpi -O2 -o "$T/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99

desc() { # NAME SLOTS MODE
	cat >"$T/$1.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<job name="$1">
  <hosts><host name="localhost" address="127.0.0.1" slots="$2"/></hosts>
  <collectors><collector name="node" host="localhost"/></collectors>
  <application executable="ring" processes="4" mpi="openmpi" mode="$3">
    <argument>50</argument>
    <environment name="TAPESTRY_FLOP_RATE" value="$FLOP_RATE"/>
  </application>
  <outputs><output format="simgrid-ti"/></outputs>
</job>
XML
}
# One flop rate for both runs (launch passes <environment> to every rank):
# the sensor's calibration at each MPI_Init, on a loaded machine, differs
# from run to run by more than the CPU times do.
FLOP_RATE=1e9
desc regular 4 regular
desc folding 1 folding
for m in regular folding; do
	timeout 300 "$TAP" launch -o "$T/job-$m" "$T/$m.xml" >"$T/$m.out" 2>&1 ||
		{ cat "$T/$m.out"; echo "FAIL: launch $m"; exit 1; }
done
tol=0.01
for m in regular folding; do
	"$TAP" report --xml "$T/job-$m" >"$T/$m.report" || { echo "FAIL: report $m"; exit 1; }
	grep -q 'compute_volumes=' "$T/$m.report" || { echo "FAIL: $m: no computation volume method in the report"; exit 1; }
	if grep -q 'compute_volumes="cpu-time"' "$T/$m.report"; then
		# ring.c's ~40 ms of CPU in all: folded ranks sharing a core take
		# more of it (caches, switches) when the machine is loaded (34 %
		# more in a clean-clone run beside the suite, all 4 ranks above);
		# a lost stretch of computation is far more
		echo "$m: volumes from CPU time (no instruction counter): checked within 50 %"
		tol=0.5
	fi
done
python3 - "$T/job-regular/simgrid-ti" "$T/job-folding/simgrid-ti" "$tol" <<'PY'
import sys, glob, os
def load(d):
    ranks = {}
    for f in sorted(glob.glob(os.path.join(d, "rank_*.txt"))):
        comp, msgs = 0.0, []
        for line in open(f):
            w = line.split()
            if len(w) < 2:
                continue
            if w[1] == "compute":
                comp += float(w[2])
            elif w[1] in ("send", "recv", "isend", "irecv"):
                msgs.append(tuple(w[1:]))
        ranks[os.path.basename(f)] = (comp, msgs)
    return ranks
a, b = load(sys.argv[1]), load(sys.argv[2])
tol = float(sys.argv[3])
ok = len(a) == 4 and a.keys() == b.keys()
ta, tb = sum(v[0] for v in a.values()), sum(v[0] for v in b.values())
terr = abs(ta - tb) / ta if ta else 1.0
print("whole run: compute regular %.6g, folding %.6g (%.3f %%)" % (ta, tb, 100 * terr))
if terr > tol:
    ok = False
for r in sorted(a):
    ca, ma = a[r]
    cb, mb = b.get(r, (0, []))
    err = abs(ca - cb) / ca if ca else 1.0
    print("%s: compute regular %.4g, folding %.4g (%.3f %%); %d / %d messages %s"
          % (r, ca, cb, 100 * err, len(ma), len(mb), "same" if ma == mb else "DIFFER"))
    # per rank the CPU time of ring.c's 50 rounds is about 10 ms, which
    # moves by up to 35 % between two runs of 4 ranks on 2 cores (seen on
    # a quiet machine, 2026-12-02): a rank gets twice the run's tolerance
    # in CPU-time mode (a volume from wall time is 93-186 % off there,
    # a lost stretch shows in the whole run's figure)
    if err > (2 * tol if tol > 0.01 else tol) or ma != mb or not ma:
        ok = False
sys.exit(0 if ok else 1)
PY
