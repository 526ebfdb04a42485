#!/bin/sh
# tests/sensor/mpi_launcher.sh - issue 31 items 1 and 5 under `tapestry run`:
#  - MPICH's launcher and an MPICH ring: 2 MPI ranks, the launchers
#    (mpiexec.hydra, hydra_pmi_proxy) counted apart, left out of the
#    Chrome trace and of the report's counts by type; with
#    --trace-launcher they are shown;
#  - MPICH's launcher and Open MPI's ring (each rank a singleton that
#    starts an orted): the flavour is the program's (one line says the
#    launcher's is another), exit 0, 2 MPI processes said to be
#    singletons, the orted helpers launchers without a rank;
#  - --mpi mpich with Open MPI's launcher and ring: said before the run,
#    the MPICH sensor stands down in both ranks, exit 0;
#  - a shim (env, then sh -c 'exec ...') leaves one stream shown.
# Exit 77 without both MPIs.
. "$(dirname "$0")/mpi_lib.sh"

mpi_flavour ompi
mpi_flavour mpich
mpi_tmpdir launcher
fail=0
bad() { echo "FAIL: $*"; fail=1; }
T=$tapestry
ring_mpich=$B/tests/sensor/mpi_ring_mpich
ring_ompi=$B/tests/sensor/mpi_ring_ompi

# 1. MPICH, launchers hidden by default
timeout 300 "$T" run --no-pingpong -o "$tmp/j1" -- "$MPIRUN_MPICH" -np 2 "$ring_mpich" \
	> "$tmp/j1.out" 2> "$tmp/j1.err" || bad "mpich ring: exit $?"
grep -q "events from .*(2 MPI ranks; [0-9]* launcher process" "$tmp/j1.err" ||
	bad "mpich ring: summary: $(grep 'events from' "$tmp/j1.err")"
"$T" export -f chrome -o "$tmp/j1.json" "$tmp/j1" 2> "$tmp/x.err" || bad "export chrome"
grep -q 'hydra' "$tmp/j1.json" && bad "mpich ring: a launcher on the Chrome timeline"
n=$(grep -o '"name":"rank [0-9] (pid' "$tmp/j1.json" | sort -u | wc -l)
[ "$n" = 2 ] || bad "mpich ring: $n rank lanes, want 2"
"$T" report "$tmp/j1" > "$tmp/j1.rep" 2>&1 || bad "report"
grep -q '^launchers  *[1-9][0-9]* events of launchers' "$tmp/j1.rep" ||
	bad "report: no launchers line"
"$dump" "$tmp/j1" > "$tmp/j1.dump" || bad "dump"
for exe in mpiexec.hydra hydra_pmi_proxy; do
	grep "key=exe value=.*/$exe\$" "$tmp/j1.dump" | sed 's/.*stream=\([^ ]*\).*/\1/' |
	while read -r s; do
		grep -q "^meta stream=$s key=launcher value=1\$" "$tmp/j1.dump" ||
			echo "stream $s ($exe) not a launcher"
	done
done > "$tmp/j1.unmarked"
[ -s "$tmp/j1.unmarked" ] && bad "$(cat "$tmp/j1.unmarked")"

# ... and shown on request
timeout 300 "$T" run --no-pingpong --trace-launcher -o "$tmp/j2" -- "$MPIRUN_MPICH" -np 2 \
	"$ring_mpich" > /dev/null 2> "$tmp/j2.err" || bad "--trace-launcher: exit $?"
"$T" export -f chrome -o "$tmp/j2.json" "$tmp/j2" 2> "$tmp/x.err" || bad "export chrome"
grep -q 'hydra_pmi_proxy' "$tmp/j2.json" || bad "--trace-launcher: no hydra_pmi_proxy lane"
"$T" report "$tmp/j2" > "$tmp/j2.rep" 2>&1
grep -q '^launchers ' "$tmp/j2.rep" && bad "--trace-launcher: the report leaves launchers out"

# 2. MPICH's launcher, an Open MPI program: the program's flavour (a
# program of its own: the ring of singletons would wait for itself)
command -v mpicc.openmpi > /dev/null || skip "no mpicc.openmpi"
printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { int r, n;\n MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &r);\n MPI_Comm_size(MPI_COMM_WORLD, &n); printf("rank %%d of %%d\\n", r, n);\n MPI_Finalize(); return 0; }\n' > "$tmp/single.c"
mpicc.openmpi -o "$tmp/single_ompi" "$tmp/single.c" || exit 99
timeout 300 "$T" run --no-pingpong -o "$tmp/j3" -- "$MPIRUN_MPICH" -np 2 "$tmp/single_ompi" \
	> /dev/null 2> "$tmp/j3.err" || bad "Open MPI program under mpich: exit $?"
grep -q "^tapestry: single_ompi links Open MPI but .* is MPICH's launcher: the Open MPI sensor is used" \
	"$tmp/j3.err" || bad "no mismatch line: $(head -n 3 "$tmp/j3.err")"
grep -q "sensors libc,mpi,mem, openmpi;" "$tmp/j3.err" || bad "not the Open MPI sensor"
grep -q "events from .*(2 MPI processes, each a singleton" "$tmp/j3.err" ||
	bad "singletons: $(grep 'events from' "$tmp/j3.err")"
"$dump" "$tmp/j3" > "$tmp/j3.dump" || bad "dump"
grep "key=exe value=.*/orted\$" "$tmp/j3.dump" | sed 's/.*stream=\([^ ]*\).*/\1/' |
while read -r s; do
	grep -q "^meta stream=$s key=launcher value=1\$" "$tmp/j3.dump" || echo "orted $s"
	grep -q "^meta stream=$s key=rank value=-1\$" "$tmp/j3.dump" || echo "orted $s has a rank"
done > "$tmp/j3.bad"
[ -s "$tmp/j3.bad" ] && bad "$(cat "$tmp/j3.bad")"

# 3. --mpi mpich for an Open MPI program: said, the sensor stands down
timeout 300 "$T" run --no-pingpong --mpi mpich -o "$tmp/j4" -- "$MPIRUN_OMPI" --oversubscribe \
	-np 2 "$ring_ompi" > "$tmp/j4.out" 2> "$tmp/j4.err" || bad "--mpi mpich: exit $?"
grep -q "^tapestry: --mpi mpich, but mpi_ring_ompi links Open MPI: the MPICH sensor stands down" \
	"$tmp/j4.err" || bad "--mpi mpich: no line before the run"
n=$(grep -c "warning mpi: .*MPICH sensor stands down" "$tmp/j4.err")
[ "$n" = 2 ] || bad "--mpi mpich: $n stand-down warnings, want 2"
grep -q "token sum" "$tmp/j4.out" || bad "--mpi mpich: the ring's output lost"

# 4. shims: env, then sh -c 'exec cat': one stream shown (cat's)
echo hello > "$tmp/in.txt"
timeout 60 "$T" run -o "$tmp/j5" -- env A=1 sh -c "exec cat $tmp/in.txt" \
	> "$tmp/j5.out" 2> "$tmp/j5.err" || bad "shim: exit $?"
grep -q hello "$tmp/j5.out" || bad "shim: output lost"
"$dump" "$tmp/j5" > "$tmp/j5.dump" || bad "dump"
n=$(grep -c '^total .* events=[1-9]' "$tmp/j5.dump")
m=$(grep -c '^meta .* key=launcher value=1$' "$tmp/j5.dump")
[ "$n.$m" = 3.2 ] || bad "shim: $n streams, $m launchers; want 3, 2"
"$T" export -f chrome -o "$tmp/j5.json" "$tmp/j5" 2> "$tmp/x.err" || bad "export chrome"
n=$(grep -o '"name":"pid [0-9]* on [^"]*"' "$tmp/j5.json" | sort -u | wc -l)
grep -q '/cat"' "$tmp/j5.json" && [ "$n" = 1 ] || bad "shim: $n lanes in the Chrome trace, want cat's alone"
[ $fail -eq 0 ] && echo PASS
exit $fail
