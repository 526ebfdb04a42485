#!/usr/bin/env bash
# deploy/demo.sh - the end-to-end demo on localhost.
#
# Installs and builds what is missing (deploy/setup.sh), then traces a real
# program with `tapestry run`: a root receiver and a node collector start on
# loopback, the program runs with the sensor preloaded, the events stream up
# the tree into a job directory. Prints the report and the first CSV lines.
# With the MPI sensor built, it also traces a 4-rank MPI ring under mpirun.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/deploy/setup.sh" >/tmp/tapestry-demo-setup.log 2>&1 || {
	echo "demo: set-up failed, see /tmp/tapestry-demo-setup.log"; tail -n 20 /tmp/tapestry-demo-setup.log; exit 1; }
b="$top/build"
work=$(mktemp -d /tmp/tapestry-demo.XXXXXX)
echo "demo: working in $work"

cc -O2 -pthread -o "$work/iodemo" "$top/deploy/examples/iodemo.c"
echo "== tapestry run -- iodemo"
"$b/manager/tapestry" run -o "$work/job-io" -- "$work/iodemo" "$work"
echo "== tapestry report"
"$b/manager/tapestry" report "$work/job-io"
echo "== tapestry export -f csv (first lines)"
"$b/manager/tapestry" export -f csv -o "$work/io.csv" "$work/job-io"
head -n 8 "$work/io.csv"

if [ -f "$b/sensor/.libs/libtapestry-mpi-openmpi.so" ] && command -v mpicc.openmpi >/dev/null; then
	mpicc.openmpi -O2 -o "$work/ring" "$top/deploy/examples/ring.c"
	echo "== tapestry run --sensors libc,mpi -- mpirun -np 4 ring"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	"$b/manager/tapestry" run -o "$work/job-ring" --sensors libc,mpi --mpi openmpi -- \
		mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS "$work/ring"
	"$b/manager/tapestry" report "$work/job-ring"
fi
echo "demo: job directories are in $work"
