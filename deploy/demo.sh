#!/usr/bin/env bash
# deploy/demo.sh - the end-to-end demo on localhost (README command one).
#
# Installs and builds what is missing (deploy/setup.sh), compiles the
# example programs, then runs `tapestry launch` on deploy/examples/ring.xml:
# a root receiver, a gateway collector and a node collector start on
# 127.0.0.1, a C MPI ring of 4 ranks (or one per core on a smaller machine)
# runs under Open MPI with the sensors
# preloaded, the tree drains leaves first, the CSV output is written and
# the report printed. When SimGrid is installed and `tapestry replay` works,
# the trace is replayed: the simulated time, the measured one, their ratio
# and what the platform models are printed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/tapestry-demo.XXXXXX)
echo "demo: working in $work"
# the set-up's log is this run's own (two users or two runs do not share it)
log="$work/setup.log"
"$top/deploy/setup.sh" >"$log" 2>&1 || {
	echo "demo: set-up failed, see $log"; tail -n 20 "$log"; exit 1; }
b="$top/build"
T="$b/manager/tapestry"

# the description names its executable relative to itself: put both here.
# It asks for 4 ranks on 4 slots; on a machine with fewer cores the ring
# gets one rank per core (2 at least), so that no rank busy-polls on a core
# another one needs.
cores=$(nproc)
np=4
[ "$cores" -lt 4 ] && np=$cores
[ "$np" -lt 2 ] && np=2
sed -e "s/slots=\"4\"/slots=\"$np\"/" -e "s/processes=\"4\"/processes=\"$np\"/" \
	"$top/deploy/examples/ring.xml" > "$work/ring.xml"
mpicc.openmpi -O2 -o "$work/ring" "$top/deploy/examples/ring.c"

echo "== tapestry plan ring.xml (what launch derives from the description)"
"$T" plan -o "$work/plan" "$work/ring.xml"
sed -n '2,$p' "$work/plan/collectors.plan"
cat "$work/plan/hostfile.openmpi"

echo "== tapestry launch ring.xml"
status=0
"$T" launch -o "$work/job-ring" "$work/ring.xml" || status=$?
if [ "$status" != 0 ]; then
	echo "demo: tapestry launch failed (status $status)"
	exit "$status"
fi
echo "== first lines of the CSV output"
head -n 6 "$work/job-ring/trace.csv"

if command -v smpirun >/dev/null 2>&1; then
	echo "== tapestry replay (SimGrid)"
	if "$T" replay "$work/job-ring" >"$work/replay.out" 2>&1; then
		# the simulated time, the measured one beside it, their ratio and
		# what the platform models (replay's own lines, not the smpirun one)
		grep -v '^tapestry: replaying' "$work/replay.out" || tail -n 3 "$work/replay.out"
	else
		echo "demo: replay did not succeed here (see $work/replay.out)"
		tail -n 3 "$work/replay.out"
	fi
else
	echo "demo: SimGrid not installed: no replay"
fi
echo "demo: the job directory is $work/job-ring (tapestry report $work/job-ring)"
