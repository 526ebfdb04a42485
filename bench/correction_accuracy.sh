#!/bin/bash
# bench/correction_accuracy.sh - does the perturbation correction give back
# the untraced run? Runs hpcc (N=800, 1x2), LAMMPS (a small LJ melt) and
# poll_loop.c (Iprobe/Test polling) on 2 Open MPI ranks, untraced (a PMPI
# shim, mpi_span.c, records MPI_Init's end to MPI_Finalize's start per
# rank) and traced (tapestry run; the same span from the corrected CSV and
# from TAPESTRY_NO_CORRECTION=1's), in interleaved pairs, and prints per
# rank untraced / traced / corrected and corrected / untraced.
# Usage: bench/correction_accuracy.sh [PAIRS] (default 3). Needs the build
# in ../build (or $TAPESTRY), mpicc.openmpi, hpcc, lmp.
set -u
here=$(cd "$(dirname "$0")" && pwd)
T=${TAPESTRY:-$here/../build/manager/tapestry}
pairs=${1:-3}
work=$(mktemp -d /tmp/corr-acc.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpicc.openmpi -O2 -o "$work/poll_loop" "$here/poll_loop.c" || exit 1
mpicc.openmpi -O2 -shared -fPIC -o "$work/mpi_span.so" "$here/mpi_span.c" || exit 1
sed -e '6s/.*/800          Ns/' -e '11s/.*/1            Ps/' -e '12s/.*/2            Qs/' \
	/usr/share/doc/hpcc/examples/_hpccinf.txt >"$work/hpccinf.txt"
cat >"$work/in.lj" <<'LJ'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
thermo 100
run 1000
LJ
# span per rank (ns) of a CSV: MPI_Init's end to MPI_Finalize's start
spans() { awk -F, '$3=="MPI_Init"{i[$1]=$5} $3=="MPI_Finalize"{f[$1]=$4}
	END {for (r in f) print r, f[r]-i[r]}' "$1" | sort -n; }
run_prog() {	# NAME CMD...
	local name=$1; shift
	for p in $(seq "$pairs"); do
		(cd "$work" && rm -f span.* && mpirun.openmpi -np 2 -x LD_PRELOAD="$work/mpi_span.so" \
			-x MPI_SPAN_OUT="$work/span" "$@" >/dev/null 2>&1)
		cat "$work"/span.* | sort -n >"$work/u.$name.$p"
		rm -rf "$work/job"
		(cd "$work" && "$T" run -o "$work/job" -- mpirun.openmpi -np 2 "$@" >/dev/null 2>&1)
		"$T" export -f csv -o "$work/c.csv" "$work/job" >/dev/null 2>&1
		TAPESTRY_NO_CORRECTION=1 "$T" export -f csv -o "$work/t.csv" "$work/job" >/dev/null 2>&1
		spans "$work/c.csv" >"$work/c.$name.$p"
		spans "$work/t.csv" >"$work/t.$name.$p"
		"$T" report "$work/job" | grep -E '^ +(kept|off the CPU)' | cut -c16-140 | sed "s/^/  $name pair $p: /"
		join "$work/u.$name.$p" "$work/t.$name.$p" | join - "$work/c.$name.$p" |
			awk -v n="$name" -v p="$p" '{printf "%-9s pair %d rank %d: untraced %.4f s, traced %.4f s (%+.2f%%), corrected %.4f s, corrected/untraced %.4f\n",
				n, p, $1, $2/1e9, $3/1e9, 100*($3-$2)/$2, $4/1e9, $4/$2}'
	done
}
run_prog poll ./poll_loop 3000
run_prog hpcc hpcc
run_prog lammps lmp -in in.lj -log none -screen none
