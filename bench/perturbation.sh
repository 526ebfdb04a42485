#!/usr/bin/env bash
# bench/perturbation.sh - how much of the tracer's perturbation the
# post-processing removes (issue 6; [004] chapter 4).
#
# Runs bench/perturbation.c (computation, cheap buffered fwrite calls, a small
# message around a ring per iteration: MPI_Sendrecv) with Open MPI on NP ranks:
#   t0   untraced: the timed region, as the program measures it (median of R runs)
#   t    traced with the libc and MPI sensors: the same region, as measured
#   t_a  the region in the corrected trace: per rank from the end of the first
#        barrier to the start of the second, the maximum over ranks
# and prints the perturbation (t - t0)/t0, the share removed (t - t_a)/(t - t0)
# and |t_a - t0|/t0, for two sensor modes:
#   stream      the default: the sender thread drains, compresses and sends
#               every 5 ms while the program runs. On a host whose cores the
#               ranks fill, that work takes CPU from the ranks (indirect
#               perturbation), counted with TAPESTRY_PERTURB_INDIRECT=busy;
#   postmortem  TAPESTRY_MODE=postmortem with a 1 GiB buffer: the rings hold
#               the run and are drained only when half full, as the tracer
#               of [004] flushed its buffer: the perturbation is the sensor's
#               own work in the ranks' threads.
# Target: within 1 % of t0 when the perturbation is 20 % or more.
# Usage: bench/perturbation.sh [BUILD_DIR] (default: build/). Environment:
# NP (2), ITERS (3000), WRITES (100), WORK (2000), R (3), MODES
# ("stream postmortem"), INDIRECT (busy: the modes of the indirect part to
# print, e.g. "busy stolen 0").
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
NP=${NP:-2} ITERS=${ITERS:-3000} WRITES=${WRITES:-100} WORK=${WORK:-2000} R=${R:-3}
MODES=${MODES:-stream postmortem} INDIRECT=${INDIRECT:-busy}
T=$(mktemp -d /tmp/tapestry-bench-pert.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
region() { sed -n 's/^perturbation: region_ns \([0-9]*\).*/\1/p' "$1"; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# the region per rank in a CSV export: the first barrier's end to the second
# barrier's start; the maximum over ranks
region_csv() {
	awk -F, '$3=="MPI_Barrier" { n[$1]++; if (n[$1]==1) s[$1]=$5; if (n[$1]==2) e[$1]=$4 }
		END { m=0; for (r in e) if (e[r]-s[r] > m) m=e[r]-s[r]; print m }' "$1"
}

args="$ITERS $WRITES $WORK"
# untraced and traced runs interleaved, so that a change of load on the
# host falls on both
for i in $(seq 1 "$R"); do
	mpirun.openmpi --oversubscribe -np "$NP" "$T/pert" $args >"$T/u$i.out" 2>&1 ||
		{ cat "$T/u$i.out"; exit 1; }
	region "$T/u$i.out" >>"$T/t0s"
	for sm in $MODES; do
		case $sm in
		stream) env=() ;;
		postmortem) env=(TAPESTRY_MODE=postmortem TAPESTRY_BUFFER_BYTES=1073741824) ;;
		*) echo "unknown mode $sm"; exit 1 ;;
		esac
		env "${env[@]}" "$B/manager/tapestry" run -o "$T/$sm$i" --sensors libc,mpi --mpi openmpi -- \
			mpirun.openmpi --oversubscribe -np "$NP" -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
			-x TAPESTRY_SENSORS -x TAPESTRY_MODE -x TAPESTRY_BUFFER_BYTES \
			"$T/pert" $args >"$T/t.out" 2>"$T/t.err" ||
			{ cat "$T/t.out" "$T/t.err"; exit 1; }
		t=$(region "$T/t.out")
		TAPESTRY_NO_CORRECTION=1 "$B/manager/tapestry" export -f csv -o "$T/r.csv" "$T/$sm$i" 2>/dev/null || exit 1
		tr=$(region_csv "$T/r.csv")
		for ind in $INDIRECT; do
			TAPESTRY_PERTURB_INDIRECT=$ind "$B/manager/tapestry" export -f csv \
				-o "$T/c.csv" "$T/$sm$i" 2>/dev/null || exit 1
			echo "$sm $ind $t $(region_csv "$T/c.csv") $tr"
		done
		[ "$i" = 1 ] || rm -rf "${T:?}/$sm$i"
	done
done >"$T/runs"
t0=$(median <"$T/t0s")
echo "perturbation benchmark: $NP ranks, $ITERS iterations of computation ($WORK adds) + $WRITES fwrite + one MPI_Sendrecv"
echo "untraced region t0: median $t0 ns of $R runs ($(sort -n "$T/t0s" | tr '\n' ' '))"
for sm in $MODES; do
	echo "== sensor mode $sm: report of run 1"
	"$B/manager/tapestry" report "$T/${sm}1" | sed -n '/^perturbation/,/^$/p'
done
while read -r sm ind t ta tr; do
	awk -v t0="$t0" -v t="$t" -v ta="$ta" -v tr="$tr" -v sm="$sm" -v ind="$ind" 'BEGIN {
		printf "%-10s indirect=%-6s t %.0f ns (trace %.0f)  t_a %.0f ns  perturbation %6.2f %%  removed %6.2f %%  |t_a - t0|/t0 %6.2f %%\n",
			sm, ind, t, tr, ta, 100 * (t - t0) / t0, 100 * (t - ta) / (t - t0),
			100 * (ta > t0 ? ta - t0 : t0 - ta) / t0 }'
done <"$T/runs"
echo "summary (median over runs; target: |t_a - t0|/t0 within 1 % when the perturbation is 20 % or more)"
for k in $(awk '{print $1 ":" $2}' "$T/runs" | sort -u); do
	awk -v t0="$t0" -v k="$k" '$1 ":" $2 == k { e = $4 - t0; if (e < 0) e = -e
		print 100 * ($3 - t0) / t0, 100 * e / t0 }' "$T/runs" >"$T/k"
	pm=$(cut -d' ' -f1 "$T/k" | median)
	em=$(cut -d' ' -f2 "$T/k" | median)
	ew=$(cut -d' ' -f2 "$T/k" | sort -g | tail -1)
	printf "  %-20s perturbation %6.2f %%  |t_a - t0|/t0 %6.2f %%  (%d runs, worst %.2f %%)\n" \
		"$k" "$pm" "$em" "$(wc -l <"$T/k")" "$ew"
done
