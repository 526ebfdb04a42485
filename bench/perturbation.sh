#!/usr/bin/env bash
# bench/perturbation.sh - how much of the tracer's perturbation the
# post-processing removes (issue 6; [004] chapter 4).
#
# Runs bench/perturbation.c (computation, cheap buffered fwrite calls, a small
# message around a ring per iteration: MPI_Sendrecv) with Open MPI on NP ranks:
#   t0   untraced: the timed region, as the program measures it
#   t    traced with the libc and MPI sensors: the same region, as measured
#   t_a  the region in the corrected trace: per rank from the end of the first
#        barrier to the start of the second, the maximum over ranks
# for three instrumentations (WRITES = fwrite calls per iteration):
#   0    MPI only: the MPI sensor's work around each call (CPU-time and
#        instruction-counter reads, ~3 us here where the counter traps to
#        the hypervisor; ~0.35 us with TAPESTRY_COMPUTE_METHOD=cpu, which
#        the environment passes on)
#   100, 300  MPI and as many traced fwrite calls per iteration
# and two sensor modes:
#   stream      the default: the sender thread drains, compresses and sends
#               while the program runs. On a host whose cores the ranks fill,
#               that work takes CPU from the ranks (indirect perturbation),
#               counted by TAPESTRY_PERTURB_INDIRECT (auto: the ranks' time
#               off the CPU); with TAPESTRY_RING_FULL=wait here (a thread
#               waits for room rather than drop events: a trace with losses
#               cannot be corrected; losses are printed);
#   postmortem  TAPESTRY_MODE=postmortem with a 1 GiB buffer (64 MiB rings,
#               930,000 records): the rings hold the run and are drained only
#               when half full, as the tracer of [004] flushed its buffer: the
#               perturbation is the sensor's own work in the ranks' threads.
#               With 10,000 iterations, WRITES=100 and 300 (1 and 3 million
#               records a rank) pass half a ring: the sender then drains
#               beside the ranks, as in stream mode.
# Each traced run (one per mode) comes between two untraced runs, R times;
# its error is against the mean of those two (t0 varies by up to 10 % from
# run to run here, and drifts slowly: pairing takes the drift out). The
# summary gives the median of the paired errors with a 95 % confidence
# interval of that median (order statistics), and the unpaired medians.
# Target: within 1 % of t0 when the perturbation is 20 % or more.
# Usage: bench/perturbation.sh [BUILD_DIR] (default: build/). Environment:
# NP (2), ITERS (10000), WORK (2000 adds), CONFIGS ("0 100 300": WRITES values),
# MODES ("stream postmortem"), R (7), INDIRECT (auto; e.g. "auto busy stolen 0").
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
NP=${NP:-2} ITERS=${ITERS:-10000} WORK=${WORK:-2000} R=${R:-7}
CONFIGS=${CONFIGS:-0 100 300} MODES=${MODES:-stream postmortem} INDIRECT=${INDIRECT:-auto}
T=$(mktemp -d /tmp/tapestry-bench-pert.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
region() { sed -n 's/^perturbation: region_ns \([0-9]*\).*/\1/p' "$1"; }
localns() { sed -n 's/^perturbation: .* local_ns \([0-9]*\).*/\1/p' "$1"; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# the region per rank in a CSV export: the first barrier's end to the second
# barrier's start; the maximum over ranks
# and, second, the ranks' own part: their COMPUTE events in the region
# (main threads), the mean over ranks
region_csv() {
	awk -F, '$1 == "" || $2 != 0 { next }
		$3=="MPI_Barrier" { n[$1]++; if (n[$1]==1) s[$1]=$5; if (n[$1]==2) e[$1]=$4; next }
		$3=="compute" && n[$1]==1 { c[$1] += $5 - $4 }
		END { m=0; k=0; l=0; for (r in e) { if (e[r]-s[r] > m) m=e[r]-s[r]; l += c[r]; k++ }
		      printf "%d %.0f\n", m, k ? l / k : 0 }' "$1"
}

echo "perturbation benchmark: $NP ranks, $ITERS iterations of computation ($WORK adds)" \
	"+ WRITES traced fwrite + one MPI_Sendrecv; $R traced runs of each, each between two untraced runs"
# prints the untraced region and the ranks' own part in it
untraced() {
	mpirun.openmpi --oversubscribe -np "$NP" "$T/pert" $args >"$T/u.out" 2>&1 ||
		{ cat "$T/u.out"; exit 1; }
	echo "$(region "$T/u.out") $(localns "$T/u.out")"
}
for w in $CONFIGS; do
	args="$ITERS $w $WORK"
	u=$(untraced)
	echo "${u% *}" >"$T/t0s"
	for i in $(seq 1 "$R"); do
		: >"$T/pending"
		for sm in $MODES; do
			case $sm in
			stream) env=(TAPESTRY_RING_FULL=wait) ;;
			postmortem) env=(TAPESTRY_MODE=postmortem TAPESTRY_BUFFER_BYTES=1073741824) ;;
			*) echo "unknown mode $sm"; exit 1 ;;
			esac
			rm -rf "${T:?}/job"
			env "${env[@]}" "$B/manager/tapestry" run --no-pingpong -o "$T/job" \
				--sensors libc,mpi --mpi openmpi -- \
				mpirun.openmpi --oversubscribe -np "$NP" -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
				-x TAPESTRY_SENSORS -x TAPESTRY_MODE -x TAPESTRY_BUFFER_BYTES \
				-x TAPESTRY_COMPUTE_METHOD -x TAPESTRY_RING_FULL \
				"$T/pert" $args >"$T/t.out" 2>"$T/t.err" ||
				{ cat "$T/t.out" "$T/t.err"; exit 1; }
			t=$(region "$T/t.out")
			lost=$("$B/manager/tapestry" report "$T/job" |
				sed -n 's/^losses *\([0-9]*\) events counted lost.*/\1/p')
			[ "${lost:-0}" = 0 ] || echo "   (run $i, $sm: $lost events lost: its figures mean little)"
			for ind in $INDIRECT; do
				TAPESTRY_PERTURB_INDIRECT=$ind "$B/manager/tapestry" export -f csv \
					-o "$T/c.csv" "$T/job" 2>/dev/null || exit 1
				read -r ta tal < <(region_csv "$T/c.csv")
				echo "$w $sm $ind $t $ta ${u% *} $tal ${u#* }" >>"$T/pending"
			done
			if [ "$i" = 1 ]; then
				echo "== WRITES=$w, sensor mode $sm: report of run 1"
				"$B/manager/tapestry" report "$T/job" | sed -n '/^perturbation/,/^$/p'
			fi
		done
		u=$(untraced)
		echo "${u% *}" >>"$T/t0s"
		# each traced run's own t0 (and own part l0): the mean of the
		# untraced runs around it. Per run also the ranks' own part
		# (computation and fwrite: corrected COMPUTE events against the
		# program's clock) and the rest (the MPI calls and the waits in
		# them), per iteration
		awk -v u="${u% *}" -v ul="${u#* }" '{ printf "%s %s %s %s %s %.0f %s %.0f\n",
			$1, $2, $3, $4, $5, ($6 + u) / 2, $7, ($8 + ul) / 2 }' \
			"$T/pending" | tee -a "$T/runs" |
			awk -v i="$i" -v n="$ITERS" '{ printf "   run %d WRITES=%s %-10s indirect=%-6s t %.3f ms  t_a %.3f ms  t0 %.3f ms  %+.2f %%" \
				"  (own part %+.2f %%, MPI part %+.0f ns/iteration)\n",
				i, $1, $2, $3, $4 / 1e6, $5 / 1e6, $6 / 1e6, 100 * ($5 - $6) / $6,
				100 * ($7 - $8) / $8, (($5 - $7) - ($6 - $8)) / n }'
	done
	t0=$(median <"$T/t0s")
	echo "== WRITES=$w: untraced region t0: median $t0 ns ($(sort -n "$T/t0s" | tr '\n' ' '))"
	echo "$w $t0" >>"$T/t0"
done
echo "summary (target: the corrected region within 1 % of the untraced one when the"
echo "perturbation is 20 % or more)"
echo "  paired: per traced run, (t_a - t0) / t0 with t0 the mean of the untraced runs"
echo "  just before and after it (this host changes speed from run to run, by up to 10 %);"
echo "  the median of those errors, with a 95 % confidence interval of that median (order"
echo "  statistics); unpaired: the median t_a against the median of all untraced runs;"
echo "  own part: the ranks' computation and fwrite calls (corrected COMPUTE events against"
echo "  the program's own clock, paired, median); MPI part: the rest of the region, MPI calls"
echo "  and their waits, corrected minus untraced per iteration (median)"
for k in $(awk '{print $1 ":" $2 ":" $3}' "$T/runs" | sort -u); do
	w=${k%%:*}
	t0=$(awk -v w="$w" '$1 == w { print $2 }' "$T/t0")
	awk -v k="$k" '$1 ":" $2 ":" $3 == k { print $4, $5, $6, $7, $8 }' "$T/runs" >"$T/k"
	tm=$(cut -d' ' -f1 "$T/k" | median)
	tam=$(cut -d' ' -f2 "$T/k" | median)
	awk '{ print 100 * ($2 - $3) / $3 }' "$T/k" | sort -g >"$T/e"
	awk '{ print 100 * ($1 - $3) / $3 }' "$T/k" | sort -g >"$T/p"
	lm=$(awk '{ print 100 * ($4 - $5) / $5 }' "$T/k" | median)
	mm=$(awk -v n="$ITERS" '{ print (($2 - $4) - ($3 - $5)) / n }' "$T/k" | median)
	awk -v k="$k" -v t0="$t0" -v ta="$tam" -v pm="$(median <"$T/p")" -v lm="$lm" -v mm="$mm" \
		-v em="$(median <"$T/e")" -v es="$(tr '\n' ' ' <"$T/e")" 'BEGIN {
		split(k, p, ":")
		n = split(es, e, " ")
		# the widest j with P(Binomial(n, 1/2) < j) <= 2.5 %: [e(j), e(n+1-j)]
		c = 0; q = 1; for (i = 0; i < n; i++) q /= 2
		pr = q; j = 0
		for (i = 0; i <= n; i++) {
			if (c + pr > 0.025) break
			c += pr; j = i + 1; pr = pr * (n - i) / (i + 1)
		}
		if (j >= 1) ci = sprintf("[%+.2f, %+.2f]", e[j], e[n + 1 - j]); else ci = "(too few runs)"
		printf "  WRITES=%-3s %-10s indirect=%-6s perturbation %6.1f %%  paired: median %+6.2f %%, 95 %% CI %s;" \
			" unpaired: t_a %.3f ms vs t0 %.3f ms: %+.2f %%  (%d runs); own part %+.2f %%, MPI part %+.0f ns/iteration\n",
			p[1], p[2], p[3], pm, em, ci, ta / 1e6, t0 / 1e6, 100 * (ta - t0) / t0, n, lm, mm }'
done
