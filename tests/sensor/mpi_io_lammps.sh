#!/bin/sh
# tests/sensor/mpi_io_lammps.sh - a real MPI-IO application under the
# sensor: Debian's LAMMPS (package lammps, built with its MPIIO package and
# linked with Open MPI) on 2 ranks, a 256-atom Lennard-Jones melt of 20
# steps that dumps every 10 steps through `dump atom/mpiio` and ends with
# `write_restart restart.mpiio` (MPI_File_open, set_size, write_at,
# write_at_all, sync, close). Run untraced, then under `tapestry run` with
# the MPI sensor: the files written must be byte-identical, each dump
# file's size must equal the bytes of the MPI-IO writes the trace holds
# for its path (the header by rank 0, the atoms by every rank), every rank
# must have written the restart file collectively, and the SimGrid export
# must leave no request dangling and replay. Exit 77 without lmp, Open
# MPI or the sensor library.
set -u
. ./tests/sensor/mpi_env.sh || exit 99
skip() { echo "SKIP: $*"; exit 77; }
mpirun=$MPIRUN_OMPI; lib=$MPI_PKGLIB_OMPI; B=$MPI_TOP_BUILDDIR
OMPI_ALLOW_RUN_AS_ROOT=1; OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
lmp=$(command -v lmp) || skip "no lmp (apt-get install lammps)"
[ -n "$mpirun" ] && [ -x "$mpirun" ] || skip "no Open MPI mpirun"
[ -f "$lib" ] || skip "no sensor library $lib"
ldd "$lmp" | grep -q 'libmpi\.so\.40' || skip "$lmp is not linked with Open MPI"
"$lmp" -h 2>/dev/null | grep -q 'MPIIO' || skip "$lmp has no MPIIO package"

tmp=$(mktemp -d /tmp/tapestry-lammps-test.XXXXXX) || exit 99
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP

cat > "$tmp/in.melt" <<'LMP'
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
dump d1 all atom/mpiio 10 dump.*.mpiio
thermo 10
run 20
write_restart restart.mpiio
LMP
mkdir "$tmp/plain" && cp "$tmp/in.melt" "$tmp/plain/" || exit 99
(cd "$tmp/plain" && timeout 300 "$mpirun" --oversubscribe -np 2 "$lmp" -in in.melt \
	-log none -screen none > out 2> err) || {
	echo "FAIL: lammps untraced"; cat "$tmp/plain/err"; exit 1; }

# traced the way a user does: `tapestry run` (its collectors on loopback,
# the network ping-pong for the SimGrid platform, the MPI sensor preloaded)
job=$tmp/job
mkdir "$tmp/traced" && cp "$tmp/in.melt" "$tmp/traced/" || exit 99
(cd "$tmp/traced" && timeout 300 "$B/manager/tapestry" run -o "$job" --sensors libc,mpi,mem \
	--mpi openmpi -- "$mpirun" --oversubscribe -np 2 "$lmp" -in in.melt -log none \
	-screen none > out 2> err) || {
	echo "FAIL: lammps traced (tapestry run)"; tail -n 20 "$tmp/traced/err"; exit 1; }
status=0
for f in dump.0.mpiio dump.10.mpiio dump.20.mpiio restart.mpiio; do
	cmp -s "$tmp/plain/$f" "$tmp/traced/$f" || {
		echo "FAIL: lammps: $f differs with the sensor (or is missing)"; status=1; }
done

"$B/manager/tapestry" export -f csv -o "$tmp/job.csv" "$job" 2> "$tmp/csv.err" || {
	echo "FAIL: lammps: export csv"; cat "$tmp/csv.err"; exit 1; }
for f in dump.0.mpiio dump.10.mpiio dump.20.mpiio; do
	size=$(wc -c < "$tmp/traced/$f")
	sum=$(awk -F, -v f="$f" '$3 ~ /^MPI_File_write/ && $10 == f { s += $6 } END { print s + 0 }' "$tmp/job.csv")
	if [ "$sum" != "$size" ]; then
		echo "FAIL: lammps: $f is $size bytes, the trace's MPI-IO writes $sum"
		status=1
	fi
done
nres=$(awk -F, '$3 == "MPI_File_write_at_all" && $10 == "restart.mpiio" && $6 > 0 { print $1 }' \
	"$tmp/job.csv" | sort -u | wc -l)
[ "$nres" = 2 ] || { echo "FAIL: lammps: $nres ranks wrote restart.mpiio collectively, want 2"; status=1; }
"$B/manager/tapestry" export -f simgrid-ti -o "$tmp/ti" "$job" 2> "$tmp/ti.err" || {
	echo "FAIL: lammps: export simgrid-ti"; cat "$tmp/ti.err"; exit 1; }
if grep -q 'never completed\|not traced' "$tmp/ti.err"; then
	echo "FAIL: lammps: SimGrid export"; cat "$tmp/ti.err"; status=1
fi
if command -v smpirun > /dev/null; then
	timeout 300 "$B/manager/tapestry" replay -o "$tmp/replay" "$job" > "$tmp/replay.out" 2>&1
	grep -q '^simulated time: ' "$tmp/replay.out" || {
		echo "FAIL: lammps: the replay did not run"; tail -n 20 "$tmp/replay.out"; status=1; }
fi
[ $status = 0 ] && echo "ok: lammps MPI-IO traced ($(grep -c ',MPI_File_' "$tmp/job.csv") MPI-IO events)"
exit $status
