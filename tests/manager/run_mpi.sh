#!/usr/bin/env bash
# tests/manager/run_mpi.sh - `tapestry run -- LAUNCHER -np 4 RING` with the
# real launchers: the traced program prints what it prints untraced, every
# process (launcher, MPICH's proxy, the ranks) is traced, and the ranks' MPI
# calls are traced without --sensors (an MPI launcher turns the MPI sensor
# on). MPICH's proxy rearranges its descriptors in a forked child before it
# execs a rank: the preloaded sensor once failed it ("HYDU_create_process:
# dup2 error (Bad file descriptor)") for every MPICH program.
# Exit 77 when no MPI flavour and its ring program are available.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
work=$(mktemp -d /tmp/tapestry-test-runmpi.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0 ran=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# flavour launcher ring-program
for case in "mpich mpirun.mpich mpi_ring_mpich" "openmpi mpirun.openmpi mpi_ring_ompi"; do
	set -- $case
	fl=$1 launcher=$(command -v "$2") ring=$top_builddir/tests/sensor/$3
	[ -n "$launcher" ] && [ -x "$ring" ] || { echo "skip $fl: no $2 or $3"; continue; }
	ran=1
	extra=
	[ "$fl" = openmpi ] && extra=--oversubscribe
	timeout 120 "$launcher" $extra -np 4 "$ring" >"$work/$fl.plain" 2>&1
	check "$fl: untraced ring runs" [ $? = 0 ]
	timeout 180 "$T" run -o "$work/$fl.job" -- "$launcher" $extra -np 4 "$ring" \
		>"$work/$fl.traced" 2>"$work/$fl.err"
	rc=$?
	check "$fl: tapestry run exits with the launcher's status ($rc)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || tail -n 20 "$work/$fl.err"
	check "$fl: program output unchanged" cmp -s "$work/$fl.plain" "$work/$fl.traced"
	check "$fl: no launcher error" bash -c "! grep -q 'Bad file descriptor' '$work/$fl.err'"
	"$T" export -f csv -o "$work/$fl.csv" "$work/$fl.job" 2>"$work/$fl.export.err"
	check "$fl: export csv succeeds" [ $? = 0 ]
	npid=$(awk -F, 'NR>1 && $11!="" {print $11}' "$work/$fl.csv" | sort -u | wc -l)
	check "$fl: launcher and 4 ranks traced (got $npid pids)" [ "$npid" -ge 5 ]
	nmpi=$(awk -F, '$3 ~ /^MPI_Send|^MPI_Recv|^MPI_Sendrecv/' "$work/$fl.csv" | wc -l)
	check "$fl: MPI calls traced by default (got $nmpi)" [ "$nmpi" -ge 4 ]
done
[ $ran = 1 ] || exit 77
exit $fail
