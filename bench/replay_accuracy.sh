#!/usr/bin/env bash
# bench/replay_accuracy.sh - SimGrid replay of our trace against the measured
# untraced run (issue 7; [000] was off by up to 51.5 %).
#
# For bench/perturbation.c (computation and communication per iteration; no
# fwrite so that the volumes are the program's own) in each communication
# PATTERN (list: 0 a ring of MPI_Sendrecv, 1 a 4 KiB halo exchange with
# Irecv/Isend/Waitall and an Allreduce), on NP ranks (list) and ITERS
# iterations (list):
#   measured   the untraced run's timed region (barrier to barrier, the
#              maximum over ranks): median of R runs, and their spread
#   traced     the same region in the traced run (tapestry run, which also
#              measures the network with its MPI ping-pong first); RT traced
#              runs, each replayed, the one with the median simulated region
#              shown
#   simulated  SimGrid's replay of the traced run on the platform the export
#              calibrated, the SAME region: the replay of each rank's actions
#              up to and including the second barrier minus the replay up to
#              and including the first (each cut ends with finalize); the
#              whole replay (`tapestry replay`, MPI_Init to MPI_Finalize) is
#              printed beside it
# and the error of the simulated region against the measured one (target:
# within 10 %). The breakdown: the region's simulated computation (its
# compute volumes over the host speed, rank 0), the rest (communication and
# waiting), the host speed and the network figures of the platform.
# Usage: bench/replay_accuracy.sh [BUILD_DIR] (default: build/)
#   NP="2 4" ITERS="500 2000" PATTERN="0 1" R=7 RT=3 bench/replay_accuracy.sh build
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
NPS=${NP:-2} ITERS=${ITERS:-500 2000} PATTERNS=${PATTERN:-0 1} R=${R:-7} RT=${RT:-3}
. "$top/bench/lib.sh"
bench_mpi replay "${1:-}"
command -v smpirun >/dev/null || { echo "SimGrid (smpirun) not installed"; exit 1; }
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
region() { sed -n 's/^perturbation: region_ns \([0-9]*\).*/\1/p' "$1"; }
simtime() { sed -n 's/.*\[smpi_replay\/INFO\] Simulation time \([0-9.e+-]*\).*/\1/p' "$1" | tail -n 1; }

# cut DIR N: each rank's actions up to and including its Nth barrier, then
# finalize, into DIR/cutN (same file names, same list)
cut_at() {
	local d=$1 n=$2 f
	mkdir -p "$d/cut$n"
	cp "$d/simgrid-ti/list" "$d/cut$n/list"
	for f in "$d"/simgrid-ti/rank_*.txt; do
		awk -v n="$n" '{ print } $2 == "barrier" && ++b == n { print $1 " finalize"; exit }' \
			"$f" >"$d/cut$n/$(basename "$f")"
	done
}
# replay DIR SUB: smpirun on DIR/SUB with the platform of DIR; simulated s
replay_cut() {
	local d=$1 sub=$2 speed bwf
	speed=$(sed -n 's/.*--cfg=smpi\/host-speed:\([0-9.e+-]*\)f.*/\1/p' "$d/replay.err")
	bwf=$(sed -n 's/.*--cfg=smpi\/bw-factor:\([0-9.:;e+-]*\).*/\1/p' "$d/replay.err")
	(cd "$d/$sub" && smpirun -np "$np" -platform "$d/simgrid-platform/platform.xml" \
		-hostfile "$d/simgrid-platform/hostfile" -replay list \
		--cfg=smpi/host-speed:"${speed}f" --cfg=smpi/bw-factor:"${bwf:-0:1}" \
		--cfg=smpi/lat-factor:0:1 >"$d/$sub.log" 2>&1)
	simtime "$d/$sub.log"
}

echo "perturbation.c (Open MPI, this host): timed region, barrier to barrier, max over ranks; R=$R untraced runs"
for pat in $PATTERNS; do
	case $pat in
	0) echo "== pattern 0: a ring of MPI_Sendrecv (64 bytes)" ;;
	1) echo "== pattern 1: halo exchange (4 KiB each way, Irecv/Isend/Waitall) + Allreduce" ;;
	*) echo "unknown pattern $pat"; exit 1 ;;
	esac
for np in $NPS; do
	for iters in $ITERS; do
		for i in $(seq 1 "$R"); do
			mpirun.openmpi --oversubscribe -np "$np" "$T/pert" "$iters" 0 2000 "$pat" >"$T/u.out" 2>&1 || exit 1
			region "$T/u.out"
		done | sort -n >"$T/t0s"
		t0=$(awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}' "$T/t0s")
		lo=$(head -n 1 "$T/t0s") hi=$(tail -n 1 "$T/t0s")
		for k in $(seq 1 "$RT"); do
			# an untraced run right before each traced one: this host
			# switches between states (one-way latency 0.1 or 0.36 us)
			# that last minutes; each pair is compared in one state
			mpirun.openmpi --oversubscribe -np "$np" "$T/pert" "$iters" 0 2000 "$pat" >"$T/u.out" 2>&1 || exit 1
			u=$(region "$T/u.out")
			rm -rf "$T/job"
			"$B/manager/tapestry" run -o "$T/job" --sensors mpi --mpi openmpi -- \
				mpirun.openmpi --oversubscribe -np "$np" -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
				-x TAPESTRY_SENSORS "$T/pert" "$iters" 0 2000 "$pat" >"$T/traced.out" 2>"$T/run.err" ||
				{ cat "$T/run.err"; exit 1; }
			tr=$(region "$T/traced.out")
			d="$T/job/replay"
			"$B/manager/tapestry" replay "$T/job" >"$T/replay.out" 2>"$d.err.tmp" ||
				{ cat "$T/replay.out" "$d.err.tmp"; exit 1; }
			mv "$d.err.tmp" "$d/replay.err"
			whole=$(sed -n 's/^simulated time: \([0-9.e+-]*\) s.*/\1/p' "$T/replay.out")
			cut_at "$d" 1
			cut_at "$d" 2
			s1=$(replay_cut "$d" cut1) s2=$(replay_cut "$d" cut2)
			# rank 0's compute volume between its first and second barrier
			flops=$(awk '$2 == "barrier" { b++ } b == 1 && $2 == "compute" { s += $3 } END { print s + 0 }' \
				"$d/simgrid-ti/rank_0.txt")
			speed=$(sed -n 's/.*host id="node-0" rank="0" speed="\([0-9.e+-]*\)".*/\1/p' "$d/simgrid-platform/job.xml")
			net=$(sed -n 's/.*one-way-latency="\([^"]*\)" link-latency="[^"]*" link-bandwidth="\([^"]*\)" bw-factor="\([^"]*\)" source="\([^"]*\)".*/latency \1 s one-way, bandwidth \2 B\/s (\4), bw-factor \3/p' \
				"$d/simgrid-platform/job.xml")
			echo "$(awk -v a="$s1" -v b="$s2" -v u="$u" 'BEGIN { printf "%.9f %.2f", b - a, 100 * ((b - a) * 1e9 - u) / u }') $tr $whole $flops $speed $net"
		done | sort -n >"$T/sims"
		read -r sim perr tr whole flops speed net <<<"$(awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}' "$T/sims")"
		pairs=$(awk '{ printf "%s%+.1f %%", (NR > 1 ? ", " : ""), $2 }' "$T/sims")
		pmed=$(cut -d' ' -f2 "$T/sims" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
		slo=$(head -n 1 "$T/sims" | cut -d' ' -f1) shi=$(tail -n 1 "$T/sims" | cut -d' ' -f1)
		awk -v t0="$t0" -v lo="$lo" -v hi="$hi" -v tr="$tr" -v sim="$sim" -v slo="$slo" -v shi="$shi" \
		    -v whole="$whole" -v n="$iters" -v np="$np" -v fl="$flops" -v sp="$speed" -v net="$net" 'BEGIN {
			comp = fl / sp
			printf "%d ranks, %5d iterations: measured %.6f s (%.6f..%.6f), traced %.6f s, simulated %.6f s (%.6f..%.6f; whole replay %.6f s): error %+.1f %% (target: 10 %%)\n",
				np, n, t0 / 1e9, lo / 1e9, hi / 1e9, tr / 1e9, sim, slo, shi, whole, 100 * (sim * 1e9 - t0) / t0
			printf "    per iteration: measured %.3f us; simulated %.3f us = compute %.3f us (rank 0: %.0f flops at %.4g flop/s) + communication and waiting %.3f us; %s\n",
				t0 / 1e3 / n, sim * 1e6 / n, comp * 1e6 / n, fl / n, sp, (sim - comp) * 1e6 / n, net }'
		echo "    paired (each traced run's simulation against the untraced run just before it): median $pmed % (target: 10 %); pairs $pairs"
	done
done
done
