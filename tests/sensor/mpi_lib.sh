# tests/sensor/mpi_lib.sh - sourced by the MPI sensor's integration scripts
# (tests/sensor/mpi_*.sh): what configure found (mpi_env.sh in the build
# tree), the flavour's launcher and sensor library, a scratch directory
# removed on exit with the collector still running, a tapestry-collector
# on 127.0.0.1 (port of its choosing), mpirun with or without the sensor,
# the Fortran compiler, the comparison of a traced run's output with the
# untraced one's and a SimGrid platform. Run from the top build directory
# (make check does); source it as `. "$(dirname "$0")/mpi_lib.sh"`.
set -u
. ./tests/sensor/mpi_env.sh || exit 99
B=$MPI_TOP_BUILDDIR
collector=$B/tapestry-collector
check=$B/tests/sensor/mpi_tracecheck
tapestry=$B/manager/tapestry
dump=$B/tests/sensor/dump_trace
MPI_TMO=120		# seconds an mpirun may take (mpi_exec)
tmp=
colpid=

skip() { echo "SKIP: $*"; exit 77; }

# mpi_flavour FLAVOUR: for ompi or mpich, sets mpirun, lib (the sensor
# library) and f90 (the flavour's mpif90, maybe empty); lets Open MPI run
# as root. Skips (77) when the flavour's mpirun, its sensor library or the
# collector is missing.
mpi_flavour() {
	case $1 in
	ompi)	mpirun=$MPIRUN_OMPI; lib=$MPI_PKGLIB_OMPI; f90=$MPIF90_OMPI
		OMPI_ALLOW_RUN_AS_ROOT=1; OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM ;;
	mpich)	mpirun=$MPIRUN_MPICH; lib=$MPI_PKGLIB_MPICH; f90=$MPIF90_MPICH ;;
	*)	echo "$0: unknown flavour $1" >&2; exit 99 ;;
	esac
	MPI_FLAVOUR=$1
	[ -n "$mpirun" ] && [ -x "$mpirun" ] || skip "no mpirun for $1"
	[ -f "$lib" ] || skip "no sensor library $lib"
	[ -x "$collector" ] || skip "no tapestry-collector"
}

# mpi_tmpdir NAME: $tmp, a new directory /tmp/tapestry-NAME.*, removed on
# exit (kept when KEEP is set) after the collector still running is stopped.
mpi_tmpdir() {
	tmp=$(mktemp -d "/tmp/tapestry-$1.XXXXXX") || exit 99
	trap mpi_cleanup EXIT
	trap 'exit 99' INT TERM HUP
}

mpi_cleanup() {
	if [ -n "$colpid" ]; then
		kill "$colpid" 2>/dev/null
		wait "$colpid" 2>/dev/null
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}

# mpi_col_start JOB: a tapestry-collector storing into the new directory
# JOB, listening on 127.0.0.1 on a port it picks ($port; pid $colpid);
# returns 1, said, when it did not start within 10 s. Its output file is
# emptied before it starts: the redirection runs in the child, and the
# loop could read a previous collector's port (dead by then) first.
mpi_col_start() {
	mkdir "$1" || return 1
	: > "$tmp/col.out"
	"$collector" --listen 127.0.0.1:0 --print-port --output "$1" \
		> "$tmp/col.out" 2> "$tmp/col.err" &
	colpid=$!
	port=
	for _i in $(seq 1 100); do
		port=$(sed -n 's/^listening .*:\([0-9][0-9]*\)$/\1/p' \
			"$tmp/col.out" 2>/dev/null)
		[ -n "$port" ] && break
		kill -0 "$colpid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "FAIL: collector did not start"
		cat "$tmp/col.err"; return 1; }
}

# mpi_col_stop: SIGTERM to the collector (it stores what it received and
# exits), and wait for it.
mpi_col_stop() {
	kill -TERM "$colpid"
	wait "$colpid"
	colpid=
}

# mpi_exec NP [VAR=VALUE...] -- CMD [ARG...]: CMD on NP ranks with the
# flavour's mpirun, MPI_TMO seconds at most, each VAR=VALUE (no blanks) in
# the ranks' environment, stdin from /dev/null (MPICH's launcher fails on
# a closed one). Open MPI oversubscribes, and runs without its treematch
# topology component: it can livelock in MPI_Dist_graph_create (all ranks
# spinning in ompi_comm_nextcid; about 1 run in 10 of the Fortran
# all-calls program, untraced too; open-mpi/ompi issues 10295 and 13918).
mpi_exec() {
	_np=$1
	shift
	_env=
	while [ "$1" != -- ]; do
		_env="$_env $1"
		shift
	done
	shift
	for _e in $_env; do
		if [ "$MPI_FLAVOUR" = ompi ]; then
			set -- -x "$_e" "$@"
		else
			set -- -env "${_e%%=*}" "${_e#*=}" "$@"
		fi
	done
	if [ "$MPI_FLAVOUR" = ompi ]; then
		set -- --oversubscribe --mca topo ^treematch -np "$_np" "$@"
	else
		set -- -np "$_np" "$@"
	fi
	timeout "$MPI_TMO" "$mpirun" "$@" < /dev/null
}

# mpi_traced NP [VAR=VALUE...] -- CMD [ARG...]: mpi_exec with the sensor
# preloaded, streaming to the collector of mpi_col_start; a full ring waits
# for room (TAPESTRY_RING_FULL=wait), so the counts are exact (stream
# mode's default drops events when a ring fills: 4 MPICH ranks
# busy-polling on 2 cores kept a sender thread off the CPU while the
# all-calls program's Test/Iprobe loop filled its ring; the drop path has
# its own test, test_sensor_rt).
mpi_traced() {
	_np=$1
	shift
	mpi_exec "$_np" LD_PRELOAD="$lib" TAPESTRY_COLLECTOR="127.0.0.1:$port" \
		TAPESTRY_RING_FULL=wait "$@"
}

# mpi_f90 SRC EXE: compile the Fortran program SRC with the flavour's
# mpif90 (skips without one); exits 99 when it does not compile.
mpi_f90() {
	[ -n "$f90" ] && [ -x "$f90" ] || skip "no Fortran compiler for $MPI_FLAVOUR"
	"$f90" -o "$2" "$1" > "$tmp/f90.log" 2>&1 || { cat "$tmp/f90.log"; exit 99; }
}

# mpi_same_output WHAT PLAIN TRACED [sort]: the traced run wrote what the
# untraced one did (in any order of lines with `sort`); else said, 1.
mpi_same_output() {
	if [ $# -ge 4 ]; then
		sort "$2" > "$2.sorted"
		sort "$3" > "$3.sorted"
		set -- "$1" "$2.sorted" "$3.sorted"
	fi
	cmp -s "$2" "$3" && return 0
	echo "FAIL: $1: output changed by the sensor"
	diff "$2" "$3"
	return 1
}

# mpi_platform DIR N: a SimGrid platform of 4 hosts h0..h3 (1 Gflop/s,
# 10 GB/s) in DIR/platform.xml and the first N of them in DIR/hostfile.
mpi_platform() {
	mkdir -p "$1" || exit 99
	cat > "$1/platform.xml" <<'EOF'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf" bw="10GBps" lat="1us"/>
</platform>
EOF
	: > "$1/hostfile"
	for _i in $(seq 0 $(($2 - 1))); do
		echo "h$_i" >> "$1/hostfile"
	done
}
