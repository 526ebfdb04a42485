#!/bin/sh
# tests/sensor/mpi_abort_run.sh FLAVOUR - MPI_Abort under the MPI sensor.
#
# FLAVOUR: ompi or mpich. tests/sensor/mpi_abort on 4 ranks, preloaded,
# against a real tapestry-collector on 127.0.0.1: rank 0 aborts after 5
# MPI_Allreduce while the others wait; the launcher kills them (MPICH's
# hydra with SIGKILL, Open MPI's with SIGTERM, then SIGKILL). The aborting
# rank's stream must hold its MPI events (MPI_Init, the 5 MPI_Allreduce,
# MPI_Abort with its error code and communicator): the sensor flushes
# before the call. `tapestry report` must count the streams that ended
# without their end (killed: what they had not shipped is lost) rather
# than report no loss. Exit 77 when the flavour or the library is missing.
flavour=$1
NP=4
. "$(dirname "$0")/mpi_lib.sh"
mpi_flavour "$flavour"
exe=$B/tests/sensor/mpi_abort_$flavour
[ -x "$exe" ] || skip "no $exe"
mpi_tmpdir mpiabort-test

job=$tmp/job
mpi_col_start "$job" || exit 99
mpi_exec $NP LD_PRELOAD="$lib" TAPESTRY_COLLECTOR="127.0.0.1:$port" -- \
	"$exe" > "$tmp/out" 2> "$tmp/err"
rc=$?
# the collector keeps what arrived; give the killed ranks' sockets time
# to close, then stop it
sleep 1
mpi_col_stop
status=0
if [ $rc = 0 ] || [ $rc = 124 ] || ! grep -q '^aborting after 1024$' "$tmp/out"; then
	echo "FAIL: $flavour: the job did not abort as it should (exit $rc)"
	cat "$tmp/out" "$tmp/err"
	exit 1
fi

"$dump" "$job" > "$tmp/dump" 2> "$tmp/dump.err" || {
	echo "FAIL: $flavour: dump_trace"; cat "$tmp/dump.err"; exit 1; }
s0=$(awk '$1 == "ev" && / name=MPI_Init / && / rank=0 / { sub(/^stream=/, "", $2); print $2 }' "$tmp/dump")
[ -n "$s0" ] || { echo "FAIL: $flavour: no MPI_Init of rank 0 in the trace"; status=1; }
got=$(awk -v s="stream=$s0" '$1 == "ev" && $2 == s && $5 ~ /^name=MPI_(Init|Allreduce|Abort)$/ {
	n = $5; sub(/^name=/, "", n)
	if (n == "MPI_Abort") for (i = 8; i <= NF; i++) n = n " " $i
	print n }' "$tmp/dump" | LC_ALL=C sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
want="1 MPI_Abort errcode=3 comm=0;5 MPI_Allreduce;1 MPI_Init;"
if [ "$got" != "$want" ]; then
	echo "FAIL: $flavour: rank 0's MPI events: $got, want $want"
	status=1
fi

# the report: streams without their end are counted, not "no loss"
rep=$("$tapestry" report --xml "$job" 2> "$tmp/rep.err") || {
	echo "FAIL: $flavour: tapestry report"; cat "$tmp/rep.err"; exit 1; }
noend=$(printf '%s\n' "$rep" | grep -c '<stream .* ended="0"')
cut=$(printf '%s\n' "$rep" | sed -n 's/.* streams_cut="\([0-9]*\)".*/\1/p' | head -n 1)
if [ "$cut" != "$noend" ]; then
	echo "FAIL: $flavour: report: streams_cut=$cut, want $noend (streams without an end)"
	status=1
fi
if [ "$noend" -gt 0 ]; then
	"$tapestry" report "$job" > "$tmp/rep.txt" 2>&1
	grep -q "^losses .* $noend streams\? cut short" "$tmp/rep.txt" || {
		echo "FAIL: $flavour: the report's losses line does not count the $noend streams cut short"
		grep '^losses' "$tmp/rep.txt"
		status=1; }
fi
[ $status = 0 ] && echo "ok: $flavour mpi_abort (rank 0 kept; $noend streams cut short, counted)"
exit $status
