#!/usr/bin/env bash
# bench/launch_overhead.sh - what `tapestry launch` of the demo's ring
# (deploy/examples/ring.xml as deploy/demo.sh runs it: 4 ranks, or one per
# core on a smaller machine) costs against the bare mpirun of the same
# ring, in one run: the bare mpirun's wall time (median of 3), then each
# phase of `tapestry launch --times` (set-up, collectors up, ping-pong,
# application, drain, post-processing and exports, report), with and
# without the ping-pong: measured (--fresh-pingpong), kept from the
# previous launch (the default once a measure is kept; the bench's own
# cache, TAPESTRY_CACHE_DIR) and none (--no-pingpong). Target: launch at
# most 0.5 s more than the bare mpirun before the exports.
# Usage: bench/launch_overhead.sh [BUILD_DIR] (default: build/)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$top/build}
T=$(mktemp -d /tmp/tapestry-bench-launch.XXXXXX)
trap 'rm -rf "$T"' EXIT
export TAPESTRY_CACHE_DIR="$T/cache"
mkdir "$TAPESTRY_CACHE_DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
np=4
[ "$cores" -lt 4 ] && np=$cores
[ "$np" -lt 2 ] && np=2
sed -e "s/slots=\"4\"/slots=\"$np\"/" -e "s/processes=\"4\"/processes=\"$np\"/" \
	"$top/deploy/examples/ring.xml" >"$T/ring.xml"
mpicc.openmpi -O2 -o "$T/ring" "$top/deploy/examples/ring.c" || exit 1
now() { date +%s.%N; }
bare=()
for i in 1 2 3; do
	t0=$(now)
	mpirun.openmpi --oversubscribe -np "$np" "$T/ring" 100 >/dev/null 2>&1 || exit 1
	bare+=("$(echo "$(now) - $t0" | bc)")
done
b=$(printf '%s\n' "${bare[@]}" | sort -n | sed -n 2p)
echo "ring of $np ranks on $cores cores, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'bare mpirun                 %.3f s (median of 3)\n' "$b"
for mode in --fresh-pingpong "" --no-pingpong; do
	"$B/manager/tapestry" launch --times $mode -o "$T/job$mode" "$T/ring.xml" \
		>/dev/null 2>"$T/err$mode" || { tail -n 5 "$T/err$mode"; exit 1; }
	line=$(sed -n 's/^tapestry: times: //p' "$T/err$mode")
	echo "tapestry launch ${mode:-(the measure kept from the run before)}"
	echo "$line" | tr ',' '\n' | sed 's/^ */  /'
	before=$(echo "$line" | tr ',' '\n' | grep -v -e 'post-processing' -e report -e total |
		awk '{ s += $(NF - 1) } END { printf "%.3f", s }')
	printf '  before the exports %.3f s: +%.3f s over the bare mpirun (target +0.5 s)\n' \
		"$before" "$(echo "$before - $b" | bc)"
done
