#!/usr/bin/env bash
# bench/trace_size.sh - bytes per event of one MPI run in each format (issue 7).
#
# Traces an MPI benchmark (bench/perturbation.c: computation, buffered
# fwrite calls, a message per iteration; and deploy/examples/ring.c) with
# the libc and MPI sensors under `tapestry run`, then prints, per run, the
# events stored and the bytes per event of: the native job directory
# (segments), OTF2 (the archive), the SimGrid time-independent text, and that
# text gzip'd. Target: native at most 6 bytes per event (OTF2: about 12).
# Also the number of BATCH frames stored: the codec's
# per-batch costs (headers, zstd tables) make small batches dear
# (docs/modules/proto-codec.md).
# Then real programs (issue 32: at most 3 bytes an event on runs of 10^6
# events or more), 2 Open MPI ranks with the default sensors: LAMMPS (lmp,
# an LJ melt of 864 atoms, 20,000 steps: about 10^6 events) and hpcc (N=800,
# 1x2: about 1.2 * 10^5 events, the most this 2-core machine traces in a
# few minutes), each split by bench/trace_bytes (make bench): BATCH frames
# per event (the events) against the other frames (META, CLOCK, STATS,
# BYE: the fixed per-process and per-second costs), and where the bytes go
# per field. Skipped without lmp or hpcc.
# Usage: bench/trace_size.sh [BUILD_DIR] (default: build/)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/lib.sh"
bench_mpi size "${1:-}"
mpicc.openmpi -O2 -o "$T/pert" "$top/bench/perturbation.c" || exit 1
mpicc.openmpi -O2 -o "$T/ring" "$top/deploy/examples/ring.c" || exit 1
bytes() { du -sb "$1" | cut -f1; }

measure() { # NAME SENSORS PROGRAM ARGS...
	name=$1 sensors=$2; shift 2
	"$B/manager/tapestry" run -o "$T/$name" --sensors "$sensors" --mpi openmpi -- \
		mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS "$@" >/dev/null 2>"$T/$name.err" || { cat "$T/$name.err"; return 1; }
	ev=$("$B/manager/tapestry" report --xml "$T/$name" | sed -n 's/.*<report [^>]* events="\([0-9]*\)".*/\1/p')
	nb=$("$B/manager/tapestry" report --xml "$T/$name" | sed -n 's/.*<report [^>]* batches="\([0-9]*\)".*/\1/p')
	native=$(bytes "$T/$name/segments")
	TAPESTRY_NO_CORRECTION=1 "$B/manager/tapestry" export -f otf2 -o "$T/$name.otf2" "$T/$name" 2>/dev/null
	otf2=$(bytes "$T/$name.otf2")
	"$B/manager/tapestry" export -f simgrid-ti -o "$T/$name.ti" "$T/$name" 2>/dev/null
	ti=$(cat "$T/$name.ti"/rank_*.txt | wc -c)
	tigz=$(cat "$T/$name.ti"/rank_*.txt | gzip -9 | wc -c)
	awk -v n="$name" -v s="$sensors" -v ev="$ev" -v nb="${nb:-0}" -v a="$native" -v o="$otf2" -v t="$ti" -v z="$tigz" 'BEGIN {
		printf "%-14s %-9s %7d events %5d batches  native %6.2f B/ev  otf2 %6.2f B/ev  ti %6.2f B/ev  ti.gz %6.2f B/ev\n",
			n, s, ev, nb, a / ev, o / ev, t / ev, z / ev }'
}
echo "bytes per event stored (4 ranks, Open MPI; TI covers the MPI events only, divided by all events)"
measure ring-mpi mpi "$T/ring" 2000
measure pert-mpi mpi "$T/pert" 2000 0
measure pert-libc-mpi libc,mpi "$T/pert" 2000 50

# Real programs: bytes per event of the events (BATCH frames) and the
# fixed costs (every other frame), by bench/trace_bytes.
real() { # NAME DIR PROGRAM ARGS...
	name=$1 dir=$2; shift 2
	(cd "$dir" && "$B/manager/tapestry" run -o "$T/$name.job" -- mpirun.openmpi -np 2 "$@" \
		>/dev/null 2>"$T/$name.err") || { cat "$T/$name.err"; return 1; }
	echo "$name: segments/ $(bytes "$T/$name.job/segments") B"
	if [ -x "$B/bench/trace_bytes" ]; then
		"$B/bench/trace_bytes" "$T/$name.job" 1 | sed -n '1,4p'
	else
		echo "  (make bench for bench/trace_bytes: the split by frame and field)"
	fi
}
if command -v lmp >/dev/null; then
	mkdir -p "$T/lmp"
	cat >"$T/lmp/in.lj" <<'LJ'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
thermo 1000
run 20000
LJ
	real lammps "$T/lmp" lmp -in in.lj -log none -screen none
else
	echo "no lmp (apt-get install lammps): LAMMPS skipped"
fi
if command -v hpcc >/dev/null && [ -f /usr/share/doc/hpcc/examples/_hpccinf.txt ]; then
	mkdir -p "$T/hpcc"
	sed -e '6s/.*/800          Ns/' -e '11s/.*/1            Ps/' -e '12s/.*/2            Qs/' \
		/usr/share/doc/hpcc/examples/_hpccinf.txt >"$T/hpcc/hpccinf.txt"
	real hpcc "$T/hpcc" hpcc
else
	echo "no hpcc (apt-get install hpcc): hpcc skipped"
fi
