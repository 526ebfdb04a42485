#!/usr/bin/env bash
# bench/mpi_pingpong.sh - what the MPI sensor adds to a small message's half
# round trip (issue 23), traced against untraced in one run.
#
# bench/mpi_pingpong.c on 2 ranks of Open MPI: blocks of ITERS round trips of
# an 8-byte message through MPI_Send/MPI_Recv (the sensor's wrappers) and
# through PMPI_Send/PMPI_Recv (never traced), alternated inside one process,
# REPS blocks each; the process prints the median half round trip of both and
# the median per-block difference ("added"). Each round runs:
#   plain            no sensor: both paths are the library's (the noise floor)
#   stream           `tapestry run --sensors mpi` (node and root collectors on
#                    loopback, the sender streaming while the ranks run)
#   postmortem       the same with TAPESTRY_MODE=postmortem
# and, with OLD=path/to/libtapestry-mpi-openmpi.so (another build, e.g. the
# previous commit's), "stream-old" and "postmortem-old" with that library
# (TAPESTRY_SENSOR_LIB), so an A/B comes from one run. Rounds are repeated R
# times, interleaved; the summary gives per configuration the median over
# rounds of untraced, traced and added ns, and of "lost" (events the job
# directory counts lost: must be 0). Added is the in-process figure: both
# paths run in the traced process, so what the sender thread and the
# collectors take from the ranks falls on both and cancels. The end-to-end
# figure (issue 32) does not cancel it: "e2e" is a traced configuration's
# traced half round trip (MPI_ path, `tapestry run`) less the untraced
# half round trip of the plain run of the same round (no sensor, no
# collectors), per round, the median over rounds; the plain run comes
# first in each round and the traced ones right after it.
# Usage: bench/mpi_pingpong.sh [BUILD_DIR] (default build/). Environment:
# R (5), REPS (301), ITERS (200), BYTES (8), MODES ("stream postmortem"),
# OLD (unset), GAPS (unset; a list of TAPESTRY_COMPUTE_GAP_NS values: each
# traced configuration is run once per value, named MODE/gGAP).
# Target (issue 23): added at most 100 ns.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
R=${R:-5} REPS=${REPS:-301} ITERS=${ITERS:-200} BYTES=${BYTES:-8}
MODES=${MODES:-stream postmortem} OLD=${OLD:-} GAPS=${GAPS:-}
. "$top/bench/lib.sh"
bench_mpi pingpong "${1:-}"
mpicc.openmpi -O2 -o "$T/pp" "$top/bench/mpi_pingpong.c" || exit 1
ARGS="$REPS $ITERS $BYTES"
field() { sed -n "s/^mpi_pingpong: .*$1 \\([-0-9.]*\\).*/\\1/p" "$2"; }

# run NAME MODE LIB GAP: one traced run; appends "NAME untraced traced added lost"
run() {
	local name=$1 mode=$2 lib=$3 gap=$4 lost
	rm -rf "${T:?}/job"
	env ${lib:+TAPESTRY_SENSOR_LIB=$lib} ${gap:+TAPESTRY_COMPUTE_GAP_NS=$gap} \
		TAPESTRY_MODE="$mode" timeout 600 "$TAP" run --no-pingpong -o "$T/job" \
		--sensors mpi --mpi openmpi -- \
		mpirun.openmpi --oversubscribe -np 2 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS -x TAPESTRY_MODE -x TAPESTRY_COMPUTE_GAP_NS \
		"$T/pp" $ARGS >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
	lost=$("$TAP" report "$T/job" 2>/dev/null |
		sed -n 's/^losses *\([0-9]*\) events counted lost.*/\1/p')
	echo "$name $(field untraced_ns "$T/out") $(field traced_ns "$T/out")" \
		"$(field added_ns "$T/out") ${lost:-?}" >>"$T/all"
}

configs() {
	local m g
	echo plain
	for m in $MODES; do
		for g in ${GAPS:--}; do
			echo "$m ${OLD:+$m-old}" | tr ' ' '\n' | grep . | sed "s|\$|/g$g|"
		done
	done
}
echo "MPI ping-pong, $BYTES B, 2 ranks: $R rounds of [$(configs | sed "s,/g-$,," | tr '\n' ' ')]," \
	"each $REPS x $ITERS round trips per path"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$R"); do
	for c in $(configs); do
		name=${c%/g*}
		gap=${c##*/g}
		[ "$gap" = - ] && gap= && c=$name
		lib=
		case $name in
		plain)
			timeout 600 mpirun.openmpi --oversubscribe -np 2 "$T/pp" $ARGS >"$T/out" 2>&1 ||
				{ cat "$T/out"; exit 1; }
			echo "plain $(field untraced_ns "$T/out") $(field traced_ns "$T/out")" \
				"$(field added_ns "$T/out") 0" >>"$T/all"
			continue ;;
		*-old) lib=$OLD ;;
		esac
		run "$c" "${name%-old}" "$lib" "$gap"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %12s %12s %12s %10s %6s  %s\n' config untraced_ns traced_ns added_ns e2e_ns lost \
	"added per round / e2e per round"
med() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
# the plain runs' untraced half round trip, one a round
awk '$1 == "plain" {print $2}' "$T/all" >"$T/plain"
for c in $(configs | sed 's|/g-$||'); do
	awk -v c="$c" '$1 == c' "$T/all" >"$T/sel"
	paste -d' ' "$T/plain" <(cut -d' ' -f3 "$T/sel") |
		awk 'NF == 2 {printf "%.1f\n", $2 - $1}' >"$T/e2e"
	printf '%-22s %12s %12s %12s %10s %6s  %s/ %s\n' "$c" \
		"$(cut -d' ' -f2 "$T/sel" | med)" "$(cut -d' ' -f3 "$T/sel" | med)" \
		"$(cut -d' ' -f4 "$T/sel" | med)" "$(med <"$T/e2e")" \
		"$(cut -d' ' -f5 "$T/sel" | sort -g | tail -n 1)" \
		"$(cut -d' ' -f4 "$T/sel" | tr '\n' ' ')" "$(tr '\n' ' ' <"$T/e2e")"
done
echo "target (issue 23): added at most 100 ns per half round trip"
echo "target (issue 32): e2e at most 100 ns per half round trip (ranks on both cores)"
