#!/usr/bin/env bash
# tests/manager/test_repair_mpi.sh - the causality repair and the
# perturbation correction on real Open MPI jobs on one clock (issue 28):
# coll_mix.c (a Sendrecv ring and every common collective, 0-byte bcasts
# among them) under `tapestry run` on 2 and 4 ranks (4 oversubscribe this
# host). One clock: no violation before the repair, so nothing moves
# (receives moved 0, exits moved 0); after correction, each rank's span
# lost at least 0 and at most the tracer's measured cost, and the other
# threads (the tracer's sender and memory sampler, the MPI library's own)
# keep their place beside their main thread. The shifted clocks are test_clock_ns.sh's (4 ranks, +5 s).
# Skips (77) without Open MPI.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
work=$(mktemp -d /tmp/tapestry-test-repair.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
	{ echo "no Open MPI: skipped"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O1 -o "$work/coll_mix" "$top_srcdir/tests/manager/coll_mix.c" || exit 99

for np in 2 4; do
	job="$work/job$np"
	timeout 300 "$T" run -o "$job" -- mpirun.openmpi --oversubscribe -np $np \
		"$work/coll_mix" 200 >"$work/run$np.out" 2>&1
	rc=$?
	check "$np ranks: traced run succeeds" [ $rc = 0 ]
	[ $rc = 0 ] || { cat "$work/run$np.out"; continue; }
	"$T" report --xml "$job" >"$work/r$np.xml" 2>"$work/r$np.err"
	check "$np ranks: report --xml" [ $? = 0 ]
	"$T" report "$job" >"$work/r$np.txt" 2>&1
	"$T" export -f csv -o "$work/c$np.csv" "$job" 2>/dev/null
	TAPESTRY_NO_CORRECTION=1 "$T" export -f csv -o "$work/t$np.csv" "$job" 2>/dev/null
	python3 - "$work/r$np.xml" "$work/c$np.csv" "$work/t$np.csv" $np >"$work/check$np.out" 2>&1 <<'PY'
import sys, csv, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
np = int(sys.argv[4])
bad, known = [], []
ca = r.find("causality")
for k, want in (("violations_after", "0"), ("coll_violations_after", "0"),
                ("unmatched_sends", "0"), ("unmatched_receives", "0")):
    if ca.get(k) != want:
        bad.append("causality %s=%s, want %s" % (k, ca.get(k), want))
# one clock: nothing to repair. Known: the sensors stamp with the TSC,
# each process mapping it onto CLOCK_MONOTONIC through its own anchor
# line (sensor/rt_clock.c), so two processes' stamps of one moment can
# differ by a few hundred ns under load: collectives on shared memory
# complete faster (one run of 2 ranks with two CPU hogs: 277 exits before
# an awaited entry, 7 moved, the largest by 140 ns). Moves within 1 us are
# said (KNOWN), not failed, until the sensor's stamps agree
one = [(k, ca.get(k)) for k in ("violations_before", "receives_moved",
                                "coll_violations_before", "collectives_moved")
       if ca.get(k) != "0"]
if one:
    what = "causality on one clock: %s, largest shift %s ns" % (
        ", ".join("%s=%s" % kv for kv in one), ca.get("max_shift_ns"))
    (known if int(ca.get("max_shift_ns")) <= 1000 else bad).append(what)
if int(ca.get("collectives")) < 200 * 8:
    bad.append("collectives %s" % ca.get("collectives"))
pe = r.find("perturbation")
cost = int(pe.get("tracer_cost_ns"))
ranks = r.findall("perturbation_rank")
if len(ranks) != np:
    bad.append("%d perturbation_rank elements" % len(ranks))
for q in ranks:
    rem = int(q.get("removed_ns"))
    if int(q.get("span_traced_ns")) - int(q.get("span_corrected_ns")) != rem:
        bad.append("rank %s: removed_ns is not the spans' difference" % q.get("rank"))
    if rem < 0 or rem > cost:
        bad.append("rank %s: removed %d ns, tracer cost %d ns" % (q.get("rank"), rem, cost))
if int(pe.get("removed_ns")) != int(pe.get("span_traced_ns")) - int(pe.get("span_corrected_ns")):
    bad.append("total removed_ns is not the spans' difference")
# every other thread of a rank (the tracer's: sender, memory sampler; the
# MPI library's progress threads) keeps its place beside the main thread:
# one that ended before the main thread traced does not end after it
# corrected, one that ended after it ends no later after it than traced
# (1 us for the interpolation's rounding). The main thread's start-up
# calibration (a FLUSH of seconds on a folded host) is removed: a thread
# left in place ended seconds after its process.
def last(path):
    e = {}
    for row in csv.DictReader(open(path)):
        if not row["rank"]:
            continue
        k = (row["rank"], row["tid"])
        e[k] = max(e.get(k, 0), int(row["end_ns"]))
    return {k: v - e[(k[0], "0")] for k, v in e.items() if k[1] != "0" and (k[0], "0") in e}
dc, dt = last(sys.argv[2]), last(sys.argv[3])
if not dc:
    bad.append("no thread beside a main thread")
for k in sorted(dc):
    print("rank %s tid %s: ends %.3f ms after the main thread traced, %.3f corrected"
          % (k[0], k[1], dt[k] / 1e6, dc[k] / 1e6))
    if dc[k] > max(dt[k], 0) + 1000:
        bad.append("rank %s tid %s: ends %d ns after the main thread corrected, %d traced"
                   % (k[0], k[1], dc[k], dt[k]))
print("\n".join(["KNOWN " + k for k in known] + bad) if bad or known else "ok")
sys.exit(1 if bad else 2 if known else 0)
PY
	rc=$?
	if [ $rc = 2 ]; then
		echo "KNOWN $np ranks: one clock, but the stamps of two processes differ by up to 1 us (see below); spans lose no more than the tracer cost; threads stay beside their main thread"
	else
		check "$np ranks: one clock, nothing repaired; spans lose no more than the tracer cost; threads stay beside their main thread" \
			[ $rc = 0 ]
	fi
	sed 's/^/    /' "$work/check$np.out"
	[ $rc = 1 ] && sed -n '/^perturbation/,$p' "$work/r$np.txt"
done
exit $fail
