# bench/lib.sh - what the MPI bench scripts share. Sourced after
# `top=$(cd "$(dirname "$0")/.." && pwd)`; needs bash.

# bench_mpi NAME [BUILD_DIR]: B (BUILD_DIR, default $top/build), TAP (its
# tapestry), T (a scratch folder /tmp/tapestry-bench-NAME.XXXXXX, removed at
# exit), Open MPI allowed to run as root; exits 1 without Open MPI's mpicc or
# without TAP (the bench's figures would be missing, not wrong).
bench_mpi() {
	B=${2:-$top/build}
	TAP=$B/manager/tapestry
	command -v mpicc.openmpi >/dev/null || { echo "no Open MPI (mpicc.openmpi)"; exit 1; }
	[ -x "$TAP" ] || { echo "missing $TAP: run make"; exit 1; }
	T=$(mktemp -d "/tmp/tapestry-bench-$1.XXXXXX") || exit 1
	trap 'rm -rf "$T"' EXIT
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}
