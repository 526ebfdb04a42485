#!/usr/bin/env bash
# bench/perturbation.sh - how much of the tracer's perturbation the
# post-processing removes (issue 6; [004] chapter 4).
#
# Runs bench/perturbation.c (computation, cheap buffered fwrite calls, a small
# message around a ring per iteration) with Open MPI on NP ranks:
#   t0   untraced: the timed region, as the program measures it (median of R runs)
#   t    traced with the libc and MPI sensors: the same region, as measured
#   t_a  the region in the corrected trace: per rank from the end of the first
#        barrier to the start of the second, the maximum over ranks
# and prints the perturbation (t - t0)/t0, the share removed (t - t_a)/(t - t0)
# and |t_a - t0|/t0, for each way of counting the indirect perturbation
# (TAPESTRY_PERTURB_INDIRECT = busy, the default; stolen; 0). Target: within
# 1 % of t0 when the perturbation is 20 % or more.
# Usage: bench/perturbation.sh [BUILD_DIR] (default: build/).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
NP=${NP:-2} ITERS=${ITERS:-3000} WRITES=${WRITES:-100} R=${R:-3}
T=$(mktemp -d /tmp/tapestry-bench-pert.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
region() { sed -n 's/^perturbation: region_ns \([0-9]*\).*/\1/p' "$1"; }
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# the region per rank in a CSV export: the first barrier's end to the second
# barrier's start; the maximum over ranks
region_csv() {
	awk -F, '$3=="MPI_Barrier" { n[$1]++; if (n[$1]==1) s[$1]=$5; if (n[$1]==2) e[$1]=$4 }
		END { m=0; for (r in e) if (e[r]-s[r] > m) m=e[r]-s[r]; print m }' "$1"
}

for i in $(seq 1 "$R"); do
	mpirun.openmpi --oversubscribe -np "$NP" "$T/pert" "$ITERS" "$WRITES" >"$T/u$i.out" 2>&1 || { cat "$T/u$i.out"; exit 1; }
	region "$T/u$i.out"
done | median >"$T/t0"
for i in $(seq 1 "$R"); do
	"$B/manager/tapestry" run -o "$T/job$i" --sensors libc,mpi --mpi openmpi -- \
		mpirun.openmpi --oversubscribe -np "$NP" -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS "$T/pert" "$ITERS" "$WRITES" >"$T/t$i.out" 2>"$T/t$i.err" ||
		{ cat "$T/t$i.out" "$T/t$i.err"; exit 1; }
	t=$(region "$T/t$i.out")
	TAPESTRY_NO_CORRECTION=1 "$B/manager/tapestry" export -f csv -o "$T/r$i.csv" "$T/job$i" 2>/dev/null || exit 1
	tr=$(region_csv "$T/r$i.csv")
	# the corrected region with each way of counting the indirect part
	for mode in busy stolen 0; do
		TAPESTRY_PERTURB_INDIRECT=$mode "$B/manager/tapestry" export -f csv \
			-o "$T/c$i-$mode.csv" "$T/job$i" 2>/dev/null || exit 1
		echo "$mode $t $(region_csv "$T/c$i-$mode.csv") $tr"
	done
done >"$T/runs"
t0=$(cat "$T/t0")
echo "perturbation benchmark: $NP ranks, $ITERS iterations of computation + $WRITES fwrite + one message"
echo "untraced region t0 (median of $R): $t0 ns"
"$B/manager/tapestry" report "$T/job1" | sed -n '/^perturbation/,/^$/p'
while read -r mode t ta tr; do
	awk -v t0="$t0" -v t="$t" -v ta="$ta" -v tr="$tr" -v mode="$mode" 'BEGIN {
		printf "traced t %.0f ns (trace says %.0f)  corrected t_a %.0f ns  (TAPESTRY_PERTURB_INDIRECT=%s)\n", t, tr, ta, mode;
		printf "  perturbation (t - t0)/t0       %6.2f %%\n", 100 * (t - t0) / t0;
		printf "  share removed (t - t_a)/(t-t0) %6.2f %%\n", 100 * (t - ta) / (t - t0);
		printf "  |t_a - t0| / t0                %6.2f %%   (target: 1 %% when perturbation >= 20 %%)\n",
			100 * (ta > t0 ? ta - t0 : t0 - ta) / t0 }'
done <"$T/runs"
