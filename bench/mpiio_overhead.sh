#!/usr/bin/env bash
# bench/mpiio_overhead.sh - the MPI sensor's cost per MPI-IO call: a loop of
# N MPI_File_write_at (form "at") or MPI_File_write (form "ind": the sensor
# reads the individual file pointer and its byte offset before each call)
# of S bytes per rank on NP ranks of Open MPI, into a file in /tmp, and, for
# comparison, of MPI_Comm_rank (form "rank": what any wrapped call costs),
# untraced and traced (preloaded, streaming to a collector on loopback),
# alternated R times. Prints per form the median ns per call of each and
# their ratio (traced / untraced), measured in the same run.
# Usage: bench/mpiio_overhead.sh [BUILD_DIR] (default build/). Environment:
# R (5), N (20000), S (64), NP (2).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
R=${R:-5} N=${N:-20000} S=${S:-64} NP=${NP:-2}
. "$top/bench/lib.sh"
bench_mpi mpiio "${1:-}"
colpid=
cleanup() {
	[ -n "$colpid" ] && { kill "$colpid" 2>/dev/null; wait "$colpid" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT
mpicc.openmpi -O2 -o "$T/loop" "$top/bench/mpiio_loop.c" || exit 1
lib=$B/sensor/.libs/libtapestry-mpi-openmpi.so
mkdir "$T/job"
"$B/tapestry-collector" --listen 127.0.0.1:0 --print-port --output "$T/job" \
	> "$T/col.out" 2> "$T/col.err" &
colpid=$!
port=
for i in $(seq 1 100); do
	port=$(sed -n 's/^listening .*:\([0-9][0-9]*\)$/\1/p' "$T/col.out")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "collector did not start"; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for form in rank at ind; do
	: > "$T/plain"; : > "$T/traced"
	for r in $(seq 1 "$R"); do
		mpirun.openmpi --oversubscribe -np "$NP" "$T/loop" "$T/f" "$N" "$S" "$form" >> "$T/plain"
		mpirun.openmpi --oversubscribe -np "$NP" -x LD_PRELOAD="$lib" \
			-x TAPESTRY_COLLECTOR="127.0.0.1:$port" \
			"$T/loop" "$T/f" "$N" "$S" "$form" >> "$T/traced"
	done
	p=$(median < "$T/plain"); t=$(median < "$T/traced")
	awk -v f="$form" -v p="$p" -v t="$t" 'BEGIN {
		printf "%-4s untraced %8.1f ns/call  traced %8.1f ns/call  ratio %.3f  (+%.1f ns)\n",
		       f, p, t, t / p, t - p }'
done
