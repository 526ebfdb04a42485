#!/usr/bin/env bash
# bench/folding_volumes.sh - how far apart the computation volumes of a folded
# and a regular run of the same program are, per rank ([000] 4.2; issue 23),
# for several settings of the MPI sensor's computation accounting.
#
# The program: deploy/examples/ring.c (ROUNDS rounds, 0.3 ms of computation
# between messages here) and, with PROG=pert, bench/perturbation.c (WORK adds
# per iteration: stretches of a few us, under the accounting's read threshold,
# so that the rule that stamps short stretches from the TSC is what is
# measured). Each is launched with `tapestry launch` on 4 ranks in regular
# mode (4 slots) and in folding mode (4 ranks on 1 declared slot:
# oversubscribed on this 2-core host), R times per configuration,
# configurations interleaved:
#   default      the sensor's own rule (the switch count where the kernel
#                gives it)
#   gap=N        TAPESTRY_COMPUTE_GAP_NS=N: the rule by segment length (GAPS,
#                default "2000 0": its default, and a CPU-time read around
#                every call)
#   old          OLD=path/to/libtapestry-mpi-openmpi.so (TAPESTRY_SENSOR_LIB),
#                when set: another build of the sensor, e.g. the previous one
# Prints per configuration and rank the median and the largest absolute
# value of the relative difference (folded - regular) / regular of the
# rank's total computation volume (simgrid-ti export) over the R pairs, and
# the same for the whole run.
# Usage: bench/folding_volumes.sh [BUILD_DIR] (default build/). Environment:
# R (3), GAPS ("2000 0"), OLD, PROG (ring), ROUNDS (50), ITERS (3000),
# WORK (2000).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
R=${R:-3} GAPS=${GAPS-2000 0} OLD=${OLD:-} PROG=${PROG:-ring}
ROUNDS=${ROUNDS:-50} ITERS=${ITERS:-3000} WORK=${WORK:-2000}
. "$top/bench/lib.sh"
bench_mpi folding "${1:-}"
if [ "$PROG" = ring ]; then
	mpicc.openmpi -O2 -o "$T/prog" "$top/deploy/examples/ring.c" || exit 1
	PARGS="<argument>$ROUNDS</argument>"
else
	mpicc.openmpi -O2 -o "$T/prog" "$top/bench/perturbation.c" || exit 1
	PARGS="<argument>$ITERS</argument><argument>0</argument><argument>$WORK</argument>"
fi

# desc FILE SLOTS MODE GAP
desc() {
	local envx=
	[ -n "$4" ] && envx="<environment name=\"TAPESTRY_COMPUTE_GAP_NS\" value=\"$4\"/>"
	cat >"$1" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<job name="fold">
  <hosts><host name="localhost" address="127.0.0.1" slots="$2"/></hosts>
  <collectors><collector name="node" host="localhost"/></collectors>
  <application executable="$T/prog" processes="4" mpi="openmpi" mode="$3">
    $PARGS
    $envx
  </application>
  <outputs><output format="simgrid-ti"/></outputs>
</job>
XML
}

# volumes DIR: "rank volume" per rank, then "all total"
volumes() {
	awk '$2 == "compute" { v[FILENAME] += $3 }
	     END { for (f in v) { n = f; sub(/.*rank_/, "", n); sub(/\.txt$/, "", n);
			     print n, v[f]; t += v[f] } print "all", t }' "$1"/simgrid-ti/rank_*.txt
}

CONFIGS=default
for g in $GAPS; do CONFIGS="$CONFIGS gap=$g"; done
[ -n "$OLD" ] && CONFIGS="$CONFIGS old"
echo "folded against regular computation volumes: $PROG on 4 ranks, $R pairs per configuration"
echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$R"); do
	for c in $CONFIGS; do
		gap=
		lib=
		case $c in
		gap=*) gap=${c#gap=} ;;
		old) lib=$OLD ;;
		esac
		for m in regular folding; do
			slots=4
			[ $m = folding ] && slots=1
			desc "$T/$m.xml" $slots $m "$gap"
			rm -rf "${T:?}/job-$m"
			env ${lib:+TAPESTRY_SENSOR_LIB=$lib} timeout 600 "$TAP" launch \
				-o "$T/job-$m" "$T/$m.xml" >"$T/$m.out" 2>&1 ||
				{ cat "$T/$m.out"; echo "launch $m failed"; exit 1; }
			volumes "$T/job-$m" | sort >"$T/$m.vol"
		done
		join "$T/regular.vol" "$T/folding.vol" |
			awk -v c="$c" '{ d = $2 > 0 ? ($3 - $2) / $2 * 100 : 0
					 print c, $1, d }' >>"$T/all"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-5s %10s %10s  %s\n' config rank median_% max_abs_% "per pair (%, folded - regular)"
for c in $CONFIGS; do
	for r in 0 1 2 3 all; do
		awk -v c="$c" -v r="$r" '$1 == c && $2 == r { print $3 }' "$T/all" >"$T/sel"
		printf '%-12s %-5s %10s %10s  %s\n' "$c" "$r" \
			"$(sort -g "$T/sel" | awk '{a[NR]=$1} END{printf "%.3f", a[int((NR+1)/2)]}')" \
			"$(awk '{ a = $1 < 0 ? -$1 : $1; if (a > m) m = a } END {printf "%.3f", m}' "$T/sel")" \
			"$(awk '{printf "%.2f ", $1}' "$T/sel")"
	done
done
