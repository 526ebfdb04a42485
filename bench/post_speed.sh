#!/usr/bin/env bash
# bench/post_speed.sh - how fast `tapestry report` (clock, causality,
# perturbation, profile: the whole post-processing, cold, as a user runs it)
# goes, in events a second, against a baseline measured in the same run
# (issue 32 item 1). Jobs: a synthetic MPI job of N events (bench/post_gen:
# 8 rank rings of Irecv/Isend/Wait, allreduces, flushes), a real traced MPI
# job (bench/mpi_pingpong.c, 2 ranks under `tapestry run --sensors mpi`,
# ROUNDS x 1000 round trips; -m 0 leaves it out; needs mpicc.openmpi) and any
# job directory given with -j. Per job, REPS interleaved pairs: the baseline
# (BASELINE if given, a tapestry binary of another build; else TAPESTRY with
# TAPESTRY_POST_THREADS=1, every pass one after the other), then TAPESTRY as
# it is (two threads). Prints every run's wall and CPU (user + system)
# seconds, events a second (wall, and per CPU second), the ratios of the
# sums, and whether every run wrote the same report, byte for byte.
#
#   bench/post_speed.sh [-n EVENTS] [-r RANKS] [-m ROUNDS] [-k REPS] [-j JOBDIR]...
#                       [-w WORKDIR] TAPESTRY [BASELINE]
#
# defaults: 2000000 MPI events, 8 ranks, 50 rounds (100,000 round trips),
# 3 pairs, WORKDIR under /var/tmp (about 0.5 GB of spill files per 10^6
# MPI events, TMPDIR as given). The generator: TAPESTRY's build directory's
# bench/post_gen (make check or make bench), or $POST_GEN. On a loaded
# machine the wall time is mostly waiting for a core: read the CPU figures
# beside it, and the load average printed before each job.
set -u
n=2000000 ranks=8 rounds=50 reps=3 work= jobs=()
while getopts n:r:m:k:j:w: o; do
	case $o in
	n) n=$OPTARG ;; r) ranks=$OPTARG ;; m) rounds=$OPTARG ;; k) reps=$OPTARG ;;
	j) jobs+=("$(readlink -f "$OPTARG")") ;; w) work=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || [ $# = 2 ] ||
	{ echo "usage: $0 [-n N] [-r RANKS] [-m ROUNDS] [-k REPS] [-j JOB]... [-w DIR] TAPESTRY [BASELINE]" >&2; exit 2; }
T=$(readlink -f "$1")
BASE=${2:+$(readlink -f "$2")}
top=$(cd "$(dirname "$0")/.." && pwd)
gen=${POST_GEN:-"$(dirname "$(dirname "$T")")/bench/post_gen"}
[ -x "$T" ] || { echo "no $T" >&2; exit 2; }
if [ -z "$work" ]; then
	work=$(mktemp -d /var/tmp/tapestry-post-speed.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" || exit 1

# the synthetic job (kept when WORKDIR already has it)
if [ "$n" -gt 0 ]; then
	if [ ! -d "$work/gen" ]; then
		[ -x "$gen" ] || { echo "no $gen: run make bench" >&2; exit 2; }
		"$gen" "$work/gen" "$ranks" "$n" || exit 1
	fi
	jobs=("$work/gen" "${jobs[@]}")
fi
# the real MPI job
if [ "$rounds" -gt 0 ] && [ ! -d "$work/mpi" ]; then
	if ! command -v mpicc.openmpi >/dev/null; then
		echo "# no mpicc.openmpi: no real MPI job"
	else
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		mpicc.openmpi -O2 -o "$work/pp" "$top/bench/mpi_pingpong.c" || exit 1
		timeout 900 "$T" run --no-pingpong -o "$work/mpi" --sensors mpi --mpi openmpi -- \
			mpirun.openmpi --oversubscribe -np 2 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
			-x TAPESTRY_SENSORS -x TAPESTRY_MODE "$work/pp" "$rounds" 1000 8 \
			>"$work/mpi.out" 2>&1 || { echo "traced run failed:"; tail "$work/mpi.out"; exit 1; }
	fi
fi
[ -d "$work/mpi" ] && jobs+=("$work/mpi")

# timed NAME BIN [ENV...]: one cold report of $job into $work/NAME.out;
# prints "wall cpu" in seconds
timed() {
	local name=$1 bin=$2 t0 t1
	shift 2
	sync
	t0=$(date +%s.%N)
	env "$@" /usr/bin/time -o "$work/time" -f '%U %S' "$bin" report "$job" \
		>"$work/$name.out" 2>"$work/$name.err" || { echo "FAIL $bin report:"; cat "$work/$name.err"; exit 1; }
	t1=$(date +%s.%N)
	echo "$(echo "$t1 - $t0" | bc) $(tail -n 1 "$work/time" | awk '{print $1 + $2}')"
}

status=0
for job in "${jobs[@]}"; do
	events=$("$T" report --quick --xml "$job" | sed -n 's/.*<report[^>]* events="\([0-9]*\)".*/\1/p')
	echo "# job $job: $events events; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# baseline: ${BASE:-$T with TAPESTRY_POST_THREADS=1}; tested: $T"
	printf '%4s %10s %10s %10s %10s %12s %12s\n' pair wall_base wall_new cpu_base cpu_new \
		Mev/s_base Mev/s_new
	sb=0 sn=0 cb=0 cn=0
	for k in $(seq 1 "$reps"); do
		if [ -n "$BASE" ]; then
			read -r w0 c0 < <(timed "base$k" "$BASE")
		else
			read -r w0 c0 < <(timed "base$k" "$T" TAPESTRY_POST_THREADS=1)
		fi
		read -r w1 c1 < <(timed "new$k" "$T")
		printf '%4d %10.2f %10.2f %10.2f %10.2f %12.3f %12.3f\n' "$k" "$w0" "$w1" "$c0" "$c1" \
			"$(echo "$events / $w0 / 1000000" | bc -l)" "$(echo "$events / $w1 / 1000000" | bc -l)"
		sb=$(echo "$sb + $w0" | bc) sn=$(echo "$sn + $w1" | bc)
		cb=$(echo "$cb + $c0" | bc) cn=$(echo "$cn + $c1" | bc)
		for f in "base$k" "new$k"; do
			cmp -s "$work/base1.out" "$work/$f.out" ||
				{ echo "DIFFERENT report: base1 and $f"; status=1; }
		done
	done
	printf 'M events/s: wall base %.3f new %.3f; per CPU second base %.3f new %.3f\n' \
		"$(echo "$events * $reps / $sb / 1000000" | bc -l)" "$(echo "$events * $reps / $sn / 1000000" | bc -l)" \
		"$(echo "$events * $reps / $cb / 1000000" | bc -l)" "$(echo "$events * $reps / $cn / 1000000" | bc -l)"
	printf 'ratio new/base: wall %.3f, cpu %.3f\n' "$(echo "$sn / $sb" | bc -l)" "$(echo "$cn / $cb" | bc -l)"
	[ $status = 0 ] && echo "same report in all $((2 * reps)) runs"
done
exit $status
