#!/usr/bin/env bash
# bench/replay_accuracy.sh - SimGrid replay of our trace against the measured
# untraced run (issue 7; [000] was off by up to 51.5 %).
#
# For bench/perturbation.c (computation and a message per iteration; no
# fwrite so that the volumes are the program's own), on NP ranks:
#   t_measured  the untraced run's timed region (median of R runs)
#   t_simulated `tapestry replay` of the traced run: SimGrid's simulated time
#               on the platform the export calibrated (host speed from the
#               sensor's flop-rate calibration, network defaults or measured)
# and the relative error. Target: within 10 %.
# Usage: bench/replay_accuracy.sh [BUILD_DIR] (default: build/)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
NP=${NP:-2} R=${R:-3}
T=$(mktemp -d /tmp/tapestry-bench-replay.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v smpirun >/dev/null || { echo "SimGrid (smpirun) not installed"; exit 1; }
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
region() { sed -n 's/^perturbation: region_ns \([0-9]*\).*/\1/p' "$1"; }
for iters in 500 2000; do
	for i in $(seq 1 "$R"); do
		mpirun.openmpi --oversubscribe -np "$NP" "$T/pert" "$iters" 0 >"$T/u.out" 2>&1 || exit 1
		region "$T/u.out"
	done | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}' >"$T/t0"
	rm -rf "$T/job"
	"$B/manager/tapestry" run -o "$T/job" --sensors mpi --mpi openmpi -- \
		mpirun.openmpi --oversubscribe -np "$NP" -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS "$T/pert" "$iters" 0 >/dev/null 2>"$T/run.err" || { cat "$T/run.err"; exit 1; }
	"$B/manager/tapestry" replay "$T/job" >"$T/replay.out" 2>&1 || { cat "$T/replay.out"; exit 1; }
	sim=$(sed -n 's/^simulated time: \([0-9.e+-]*\) s.*/\1/p' "$T/replay.out")
	awk -v t0="$(cat "$T/t0")" -v s="$sim" -v n="$iters" -v np="$NP" 'BEGIN {
		printf "perturbation.c, %d ranks, %5d iterations: measured %.6f s, simulated %.6f s, error %+.1f %% (target: 10 %%)\n",
			np, n, t0 / 1e9, s, 100 * (s * 1e9 - t0) / t0 }'
done
