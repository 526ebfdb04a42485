#!/usr/bin/env bash
# bench/profile_cost.sh - what the profile (manager/post/profile.c, issue 29)
# adds to `tapestry report`: a synthetic MPI job of N events (bench/post_gen),
# then REPS interleaved pairs of `report --no-profile` and `report` (text to
# /dev/null) in the same run, each timed (wall, and user + system CPU); prints
# every pair and the ratio of the sums (target: at most 1.10). On a loaded
# machine the wall time is mostly waiting (the post-processing's spilled
# arrays, other processes): the CPU ratio is the profile's cost.
#
#   bench/profile_cost.sh [-n EVENTS] [-r RANKS] [-k REPS] [-w WORKDIR] TAPESTRY
#
# defaults: 10000000 events, 8 ranks, 3 pairs, WORKDIR under /var/tmp (about
# 1 GB per 10^7 events). The generator: TAPESTRY's build directory's
# bench/post_gen (`make bench`), or $POST_GEN.
set -u
n=10000000 ranks=8 reps=3 work=
while getopts n:r:k:w: o; do
	case $o in
	n) n=$OPTARG ;; r) ranks=$OPTARG ;; k) reps=$OPTARG ;; w) work=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { echo "usage: $0 [-n N] [-r RANKS] [-k REPS] [-w DIR] TAPESTRY" >&2; exit 2; }
T=$1
gen=${POST_GEN:-"$(dirname "$(dirname "$(readlink -f "$T")")")/bench/post_gen"}
[ -x "$gen" ] || { echo "no $gen: run make bench" >&2; exit 2; }
if [ -z "$work" ]; then
	work=$(mktemp -d /var/tmp/tapestry-profile-cost.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
# a job WORKDIR already holds is used again (-w: its figures were asked)
if [ ! -d "$work/job" ]; then
	mkdir -p "$work" && "$gen" "$work/job" "$ranks" "$n" || exit 1
fi
events=$("$T" report --quick --xml "$work/job" | sed -n 's/.*<report[^>]* events="\([0-9]*\)".*/\1/p')
echo "# $events events ($n MPI events asked), $ranks ranks; pairs: without, with the profile"
# one timed report: prints "wall cpu" in seconds
timed() {
	local t0 t1 c
	t0=$(date +%s.%N)
	/usr/bin/time -o "$work/time" -f '%U %S' "$T" report "$@" "$work/job" >/dev/null 2>&1
	c=$(tail -n 1 "$work/time" | awk '{print $1 + $2}')
	t1=$(date +%s.%N)
	echo "$(echo "$t1 - $t0" | bc) $c"
}
printf '%4s %12s %12s %12s %12s\n' pair wall_without wall_with cpu_without cpu_with
sw=0 sp=0 cw=0 cp=0
for k in $(seq 1 "$reps"); do
	read -r w0 c0 < <(timed --no-profile)
	read -r w1 c1 < <(timed)
	printf '%4d %12.2f %12.2f %12.2f %12.2f\n' "$k" "$w0" "$w1" "$c0" "$c1"
	sw=$(echo "$sw + $w0" | bc) sp=$(echo "$sp + $w1" | bc)
	cw=$(echo "$cw + $c0" | bc) cp=$(echo "$cp + $c1" | bc)
done
printf 'ratio with/without: wall %.3f, cpu %.3f\n' "$(echo "$sp / $sw" | bc -l)" \
	"$(echo "$cp / $cw" | bc -l)"
