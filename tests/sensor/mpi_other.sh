#!/bin/sh
# tests/sensor/mpi_other.sh - each MPI sensor preloaded into a program of
# the other MPI stands down (sensor/mpi_flavour.c): the MPICH sensor in
# Open MPI's ring and the Open MPI sensor in MPICH's, 2 ranks under the
# program's own mpirun. Each run must exit 0 with the untraced output, each
# rank must say once that the sensor stands down, and the trace must hold
# one stream per rank (the exec that drops the MPI sensor leaves none of
# its own) with libc events, no MPI event, and META mpi_stood_down naming
# the program's MPI. Before the fix every rank died with SIGSEGV in
# MPI_Init. Exit 77 without both MPIs.
. "$(dirname "$0")/mpi_lib.sh"

mpi_flavour ompi; lib_ompi=$lib
mpi_flavour mpich; lib_mpich=$lib
mpi_tmpdir other
fail=0

# other PROG_FLAVOUR SENSOR_LIB OTHER_NAME: the ring of PROG_FLAVOUR with
# the other sensor preloaded.
other() {
	mpi_flavour "$1"
	lib=$2
	prog=$B/tests/sensor/mpi_ring_$1
	mpi_exec 2 -- "$prog" > "$tmp/plain.$1" 2> "$tmp/plain.$1.err" || {
		echo "FAIL: $1 ring untraced"; cat "$tmp/plain.$1.err"; fail=1; return; }
	mpi_col_start "$tmp/job.$1" || { fail=1; return; }
	mpi_traced 2 -- "$prog" > "$tmp/traced.$1" 2> "$tmp/traced.$1.err"
	rc=$?
	mpi_col_stop
	[ $rc -eq 0 ] || { echo "FAIL: $1 ring with the other sensor: exit $rc"
		cat "$tmp/traced.$1.err"; fail=1; return; }
	mpi_same_output "$1 ring" "$tmp/plain.$1" "$tmp/traced.$1" || fail=1
	n=$(grep -c "warning mpi: this program uses $3 .*sensor stands down, libc calls only are traced" \
		"$tmp/traced.$1.err")
	[ "$n" = 2 ] || { echo "FAIL: $1: $n stand-down warnings, want 2 (one a rank)"
		cat "$tmp/traced.$1.err"; fail=1; }
	"$dump" "$tmp/job.$1" > "$tmp/dump.$1" || { echo "FAIL: $1: dump"; fail=1; return; }
	streams=$(grep -c '^total ' "$tmp/dump.$1")
	[ "$streams" = 2 ] || { echo "FAIL: $1: $streams streams, want 2"
		grep '^total\|key=exe' "$tmp/dump.$1"; fail=1; }
	# streams, not lines: a META sent again (a key added later, as the
	# calibration's calib_ns) repeats every key
	n=$(grep "^meta .*key=mpi_stood_down value=$3\$" "$tmp/dump.$1" |
		sed 's/ key=.*//' | sort -u | wc -l)
	[ "$n" = 2 ] || { echo "FAIL: $1: $n streams say mpi_stood_down=$3, want 2"; fail=1; }
	n=$(grep -c '^ev .* name=MPI_' "$tmp/dump.$1")
	[ "$n" = 0 ] || { echo "FAIL: $1: $n MPI events, want none"; fail=1; }
	n=$(grep -c '^ev .* name=\(open\|openat\|read\|write\|close\)' "$tmp/dump.$1")
	[ "$n" -gt 0 ] || { echo "FAIL: $1: no libc event"; fail=1; }
	echo "$1 program, other sensor: exit 0, output unchanged, $streams streams, libc only"
}

other ompi "$lib_mpich" "Open MPI"
other mpich "$lib_ompi" "MPICH"
[ $fail -eq 0 ] && echo PASS
exit $fail
