#!/bin/sh
# tests/sensor/mpi_compute.sh - the MPI sensor's rule for reading the CPU
# time (sensor/mpi_compute.c, docs/modules/sensor-mpi.md), with Open MPI on
# 2 ranks running tests/sensor/mpi_compute_prog.c against a real
# tapestry-collector:
# A preload shim (tests/sensor/cputime_count.c, before the sensor) counts
# each rank's CPU-time reads (clock_gettime(CLOCK_THREAD_CPUTIME_ID)).
#  1. default: with the switch count, fewer reads than half the MPI calls
#     (the earlier sensor read at every call); the trace passes mpi_tracecheck (COMPUTE CPU time at most
#     the wall time, volume = CPU time x rate, order); META compute_cpu_rule
#     is "switches" where the kernel lets a process watch its own threads
#     (perf_event_paranoid 2 or less, or root), "gap" otherwise; most short
#     stretches are stamped from the TSC (cpu_ns = duration, within 1 ns
#     for the clock mapping); the forked child's MPI call neither crashes
#     nor fails (the switch page is not mapped in a child);
#  2. TAPESTRY_COMPUTE_GAP_NS=0: rule "gap", reads around every call (at
#     least two a call), the trace passes mpi_tracecheck;
#  3. TAPESTRY_COMPUTE_GAP_NS=abc: said on stderr, the default rule used.
# Exit 77 without Open MPI or the MPI sensor.
. "$(dirname "$0")/mpi_lib.sh"
[ -n "$MPIRUN_OMPI" ] && [ -x "$MPIRUN_OMPI" ] || skip "no Open MPI"
command -v mpicc.openmpi > /dev/null || skip "no mpicc.openmpi"
mpi_flavour ompi
mpi_tmpdir mpi-compute
mpicc.openmpi -O2 -o "$tmp/prog" "$MPI_TOP_SRCDIR/tests/sensor/mpi_compute_prog.c" \
	> "$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; exit 99; }
"${CC:-cc}" -O2 -shared -fPIC -o "$tmp/count.so" \
	"$MPI_TOP_SRCDIR/tests/sensor/cputime_count.c" -ldl > "$tmp/cc.log" 2>&1 ||
	{ cat "$tmp/cc.log"; exit 99; }
ITERS=2000
want_rule=gap
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$(id -u)" = 0 ] || [ "$paranoid" -le 2 ]; } && want_rule=switches

# traced NAME GAP: the program traced into $tmp/job-NAME, GAP in the
# environment unless empty; its output in $tmp/NAME.out, .err
traced() {
	job=$tmp/job-$1
	mpi_col_start "$job" || exit 99
	mpi_exec 2 LD_PRELOAD="$tmp/count.so:$lib" TAPESTRY_COLLECTOR="127.0.0.1:$port" \
		TAPESTRY_RING_FULL=wait ${2:+TAPESTRY_COMPUTE_GAP_NS=$2} -- \
		"$tmp/prog" $ITERS > "$tmp/$1.out" 2> "$tmp/$1.err" || {
		echo "FAIL: $1: the traced program failed"; cat "$tmp/$1.err"; exit 1; }
	mpi_col_stop
	"$dump" "$job" > "$tmp/$1.dump" 2>/dev/null || { echo "FAIL: $1: dump_trace"; exit 1; }
}

# meta NAME KEY: the distinct values of KEY in the streams of ranks (the
# program's streams: those with a compute_method)
meta() {
	sed -n "s/^meta stream=.* key=$2 value=\(.*\)/\1/p" "$tmp/$1.dump" | sort -u | tr '\n' ' '
}

# reads NAME: "MIN MAX": the fewest and most CPU-time reads of a rank
reads() {
	sed -n 's/^cputime_count: [0-9]* \([0-9]*\)$/\1/p' "$tmp/$1.err" | sort -n |
		awk 'NR == 1 { lo = $1 } { hi = $1; n++ } END { print (n == 2 ? lo : -1), hi + 0 }'
}

status=0
fail() { echo "FAIL: $*"; status=1; }

traced default ""
"$check" "$tmp/job-default" 2 MPI_Init=1 MPI_Finalize=1 MPI_Comm_rank MPI_Comm_size=1 \
	MPI_Sendrecv=$ITERS MPI_Barrier=1 compute > "$tmp/check.log" 2>&1 ||
	{ cat "$tmp/check.log"; fail "default: trace check"; }
[ "$(meta default compute_cpu_rule)" = "$want_rule " ] ||
	fail "default: compute_cpu_rule '$(meta default compute_cpu_rule)', want $want_rule"
grep -q '^fork: child exit 0$' "$tmp/default.out" ||
	{ cat "$tmp/default.out" "$tmp/default.err"; fail "default: the forked child's MPI call"; }
set -- $(reads default)
echo "default ($want_rule): $1 to $2 CPU-time reads a rank, for $ITERS exchanges"
# 20 long stretches a rank, MPI_Init's calibrations, a few switches (by
# length alone, without the switch count, every call that waited 2 us for
# its partner is read: not checked)
[ "$1" -ge 0 ] || fail "default: the CPU-time reads of both ranks were not counted"
[ "$want_rule" != switches ] || [ "$2" -lt $(( ITERS / 2 )) ] ||
	fail "default: $1 to $2 CPU-time reads a rank, want fewer than $(( ITERS / 2 ))"

traced exact 0
"$check" "$tmp/job-exact" 2 MPI_Init=1 MPI_Finalize=1 MPI_Comm_rank MPI_Comm_size=1 \
	MPI_Sendrecv=$ITERS MPI_Barrier=1 compute > "$tmp/check.log" 2>&1 ||
	{ cat "$tmp/check.log"; fail "gap 0: trace check"; }
[ "$(meta exact compute_cpu_rule)" = "gap " ] && [ "$(meta exact compute_gap_ns)" = "0 " ] ||
	fail "gap 0: rule '$(meta exact compute_cpu_rule)' gap '$(meta exact compute_gap_ns)'"
set -- $(reads exact)
echo "gap 0: $1 to $2 CPU-time reads a rank"
[ "$1" -ge $(( ITERS * 2 )) ] || fail "gap 0: $1 CPU-time reads on a rank, want $(( ITERS * 2 )) at least"

traced bad abc
grep -q "TAPESTRY_COMPUTE_GAP_NS='abc' ignored: want .* (using the switch count)" \
	"$tmp/bad.err" || { cat "$tmp/bad.err"; fail "bad setting: not said on stderr"; }
[ "$(meta bad compute_cpu_rule)" = "$want_rule " ] ||
	fail "bad setting: compute_cpu_rule '$(meta bad compute_cpu_rule)', want $want_rule"
exit $status
