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
set -u
flavour=$1
NP=4
. ./tests/sensor/mpi_env.sh || exit 99

case $flavour in
ompi)	mpirun=$MPIRUN_OMPI; lib=$MPI_PKGLIB_OMPI
	OMPI_ALLOW_RUN_AS_ROOT=1; OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ;;
mpich)	mpirun=$MPIRUN_MPICH; lib=$MPI_PKGLIB_MPICH ;;
*)	echo "mpi_abort_run.sh: unknown flavour $flavour" >&2; exit 99 ;;
esac
skip() { echo "SKIP: $*"; exit 77; }
[ -n "$mpirun" ] && [ -x "$mpirun" ] || skip "no mpirun for $flavour"
[ -f "$lib" ] || skip "no sensor library $lib"
B=$MPI_TOP_BUILDDIR
collector=$B/tapestry-collector
exe=$B/tests/sensor/mpi_abort_$flavour
[ -x "$collector" ] || skip "no tapestry-collector"
[ -x "$exe" ] || skip "no $exe"

tmp=$(mktemp -d /tmp/tapestry-mpiabort-test.XXXXXX) || exit 99
colpid=
cleanup() {
	if [ -n "$colpid" ]; then
		kill "$colpid" 2>/dev/null
		wait "$colpid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP

job=$tmp/job
mkdir "$job" || exit 99
"$collector" --listen 127.0.0.1:0 --print-port --output "$job" \
	> "$tmp/col.out" 2> "$tmp/col.err" &
colpid=$!
port=
for i in $(seq 1 100); do
	port=$(sed -n 's/^listening .*:\([0-9][0-9]*\)$/\1/p' "$tmp/col.out" 2>/dev/null)
	[ -n "$port" ] && break
	kill -0 "$colpid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: collector did not start"; cat "$tmp/col.err"; exit 99; }
if [ "$flavour" = ompi ]; then
	timeout 120 "$mpirun" --oversubscribe -np $NP -x LD_PRELOAD="$lib" \
		-x TAPESTRY_COLLECTOR="127.0.0.1:$port" "$exe" > "$tmp/out" 2> "$tmp/err"
else
	timeout 120 "$mpirun" -np $NP -env LD_PRELOAD "$lib" \
		-env TAPESTRY_COLLECTOR "127.0.0.1:$port" "$exe" > "$tmp/out" 2> "$tmp/err"
fi
rc=$?
# the collector keeps what arrived; give the killed ranks' sockets time
# to close, then stop it
sleep 1
kill -TERM "$colpid"
wait "$colpid"
colpid=
status=0
if [ $rc = 0 ] || [ $rc = 124 ] || ! grep -q '^aborting after 1024$' "$tmp/out"; then
	echo "FAIL: $flavour: the job did not abort as it should (exit $rc)"
	cat "$tmp/out" "$tmp/err"
	exit 1
fi

"$B/tests/sensor/dump_trace" "$job" > "$tmp/dump" 2> "$tmp/dump.err" || {
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
rep=$("$B/manager/tapestry" report --xml "$job" 2> "$tmp/rep.err") || {
	echo "FAIL: $flavour: tapestry report"; cat "$tmp/rep.err"; exit 1; }
noend=$(printf '%s\n' "$rep" | grep -c '<stream .* ended="0"')
cut=$(printf '%s\n' "$rep" | sed -n 's/.* streams_cut="\([0-9]*\)".*/\1/p' | head -n 1)
if [ "$cut" != "$noend" ]; then
	echo "FAIL: $flavour: report: streams_cut=$cut, want $noend (streams without an end)"
	status=1
fi
if [ "$noend" -gt 0 ]; then
	"$B/manager/tapestry" report "$job" > "$tmp/rep.txt" 2>&1
	grep -q "^losses .* $noend streams cut short" "$tmp/rep.txt" || {
		echo "FAIL: $flavour: the report's losses line does not count the $noend streams cut short"
		grep '^losses' "$tmp/rep.txt"
		status=1; }
fi
[ $status = 0 ] && echo "ok: $flavour mpi_abort (rank 0 kept; $noend streams cut short, counted)"
exit $status
