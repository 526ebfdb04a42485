#!/usr/bin/env bash
# bench/call_residual.sh - what the perturbation correction leaves per MPI
# call: one call (or pattern) in a tight loop (bench/call_residual.c), run
# untraced and traced; the traced run's corrected loop (the trace's time
# between the second pair of barriers, over the iterations) against the
# untraced one. The MPI sensor's cost around a call is measured in the gaps
# and its wrapper's cost outside them calibrated on MPI_Comm_rank (CALIB
# evtype MPI_INIT); a call that runs the progress engine may run slower
# after the sensor's reads than that calibration says, above all where the
# instruction-counter read traps to the hypervisor and the call's code runs
# cold: that is the residual here.
#   kinds: comm_rank (MPI_Comm_rank: the calibration's own call), iprobe
#   (MPI_Iprobe on MPI_COMM_SELF, nothing pending: one pass of the progress
#   engine), self_exchange (MPI_Irecv, MPI_Isend to itself, MPI_Waitall:
#   three calls an iteration)
# for each accounting method: instructions (the default) and cpu
# (TAPESTRY_COMPUTE_METHOD=cpu: CPU time only, no counter read).
# Prints per kind and method the untraced ns an iteration (median of R
# runs), the corrected one (median of R traced runs), and the residual
# (corrected - untraced) per iteration and per call.
# Usage: bench/call_residual.sh [BUILD_DIR] (default build/). Environment:
# R (3 runs each), N (20000 iterations), METHODS ("instructions cpu").
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
R=${R:-3} N=${N:-20000} METHODS=${METHODS:-instructions cpu}
. "$top/bench/lib.sh"
bench_mpi resid "${1:-}"
mpicc.openmpi -O2 -o "$T/loop" "$top/bench/call_residual.c" || exit 1
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
per_iter() { sed -n 's/^call_residual: kind [0-9]* per_iter_ns \([0-9.]*\).*/\1/p' "$1"; }
echo "MPI call residual after the perturbation correction: $N iterations, 1 rank, medians of $R runs"
printf '%-14s %-13s %12s %12s %12s %10s\n' kind method untraced corrected residual per_call
k=0
for kind in comm_rank iprobe self_exchange; do
	calls=1
	[ "$kind" = self_exchange ] && calls=3
	for i in $(seq 1 "$R"); do
		mpirun.openmpi --oversubscribe -np 1 "$T/loop" "$k" "$N" >"$T/u.out" 2>&1 ||
			{ cat "$T/u.out"; exit 1; }
		per_iter "$T/u.out"
	done | median >"$T/u"
	for m in $METHODS; do
		for i in $(seq 1 "$R"); do
			rm -rf "${T:?}/job"
			TAPESTRY_COMPUTE_METHOD=$m "$B/manager/tapestry" run --no-pingpong -o "$T/job" \
				--sensors libc,mpi --mpi openmpi -- \
				mpirun.openmpi --oversubscribe -np 1 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
				-x TAPESTRY_SENSORS -x TAPESTRY_COMPUTE_METHOD \
				"$T/loop" "$k" "$N" >"$T/t.out" 2>&1 || { cat "$T/t.out"; exit 1; }
			"$B/manager/tapestry" export -f csv -o "$T/c.csv" "$T/job" 2>/dev/null || exit 1
			awk -F, -v n="$N" '$1 == "0" && $2 == 0 && $3 == "MPI_Barrier" {
				if (++k == 3) s = $5; if (k == 4) e = $4 }
				END { if (k < 4) exit 1; printf "%.1f\n", (e - s) / n }' "$T/c.csv" ||
				{ echo "no second loop in the trace"; exit 1; }
		done | median >"$T/c"
		awk -v kind="$kind" -v m="$m" -v c="$calls" -v u="$(cat "$T/u")" -v a="$(cat "$T/c")" \
			'BEGIN { printf "%-14s %-13s %12.1f %12.1f %+12.1f %+10.1f\n", kind, m, u, a, a - u, (a - u) / c }'
	done
	k=$((k + 1))
done
