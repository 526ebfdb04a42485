#!/bin/sh
# tests/sensor/mpi_hpcc.sh - a real MPI application packaged by Debian,
# HPC Challenge (package hpcc, built with Open MPI; it completes requests
# with MPI_Testany, MPI_Waitall, MPI_Wait ...), on 4 ranks with a tiny
# problem (HPL N=200, NB=20, a 2x2 grid: about 3 s), untraced with mpirun
# and traced with `tapestry launch`:
#  - the results it verifies are the same (its Summary section without the
#    timings and rates: residuals, norms, sizes, Success=1, the errors
#    found by RandomAccess);
#  - every request of every rank completed exactly once and every message
#    matched (mpi_tracecheck -a);
#  - the SimGrid export leaves no request dangling and replays to its end.
# Exit 77 without hpcc, the Open MPI sensor or SimGrid. Run from the top
# build directory (make check does).
NP=4
. "$(dirname "$0")/mpi_lib.sh"
hpcc=$(command -v hpcc) || skip "no hpcc (apt-get install hpcc)"
[ -n "$MPIRUN_OMPI" ] && [ -x "$MPIRUN_OMPI" ] || skip "no mpirun.openmpi"
[ -f "$MPI_PKGLIB_OMPI" ] || skip "no Open MPI sensor"
[ -n "$SMPIRUN" ] && [ -x "$SMPIRUN" ] || skip "no smpirun"
ldd "$hpcc" | grep -q 'libmpi\.so' || skip "hpcc is not built with Open MPI"
mpi_flavour ompi
mpi_tmpdir mpi-hpcc

# hpcc reads hpccinf.txt in its working directory and appends to
# hpccoutf.txt there: one directory per run
inf() {
	mkdir -p "$1" && cat > "$1/hpccinf.txt" <<'EOF'
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
200          Ns
1            # of NBs
20           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
}

# What hpcc verified: its Summary section less timings and rates, and
# less what RandomAccess counts within its time bound (the updates it got
# through, hence its errors, depend on how fast the run was).
results() {
	sed -n '/^Begin of Summary section/,/^End of Summary section/p' "$1/hpccoutf.txt" |
		grep -Ev '(time[0-9]*|Time|Tflops|Gflops|GBs|GUPs|STREAM_[A-Za-z]+|usec|GBytes|CheckTime|Wtick)=' |
		grep -Ev '^(MPI)?RandomAccess_[A-Za-z_]*(ExeUpdates|Errors|ErrorsFraction|TimeBound)='
}

inf "$tmp/plain"
(cd "$tmp/plain" && timeout 300 "$MPIRUN_OMPI" --oversubscribe -np $NP "$hpcc" \
	< /dev/null > out 2>&1) || { echo "FAIL: hpcc untraced"; tail "$tmp/plain/out"; exit 1; }
grep -q '^Success=1$' "$tmp/plain/hpccoutf.txt" || { echo "FAIL: hpcc untraced did not succeed"; exit 1; }

# The sensors stamp with clock_gettime (TAPESTRY_CLOCK=vdso): with the TSC,
# 1 run in 6 here had one MPI_Testany starting 5 ns before the end of the
# COMPUTE event before it (mpi_tracecheck's order check; 4 ranks migrating
# between 2 cores), which this test is not about.
# 4 ranks on 2 slots (this machine's cores), oversubscribed like the
# untraced run (4 ranks busy-polling on 2 cores without yielding: 2 min 24 s
# untraced instead of 3 s, measured with mpirun --host localhost:4)
inf "$tmp/traced"
cat > "$tmp/hpcc.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<job name="hpcc">
  <hosts>
    <host name="localhost" address="127.0.0.1" slots="2" site="local"/>
  </hosts>
  <collectors>
    <collector name="node" host="localhost"/>
  </collectors>
  <application executable="$hpcc" processes="$NP" mpi="openmpi" workdir="traced"
      mode="folding">
    <environment name="TAPESTRY_RING_FULL" value="wait"/>
    <environment name="TAPESTRY_CLOCK" value="vdso"/>
  </application>
  <sensors>
    <sensor name="mpi"/>
  </sensors>
</job>
EOF
timeout 600 "$tapestry" launch -o "$tmp/job" "$tmp/hpcc.xml" < /dev/null \
	> "$tmp/launch.out" 2> "$tmp/launch.err" || {
	echo "FAIL: tapestry launch hpcc"; tail -n 20 "$tmp/launch.err"; exit 1; }

status=0
results "$tmp/plain" > "$tmp/plain.res"
results "$tmp/traced" > "$tmp/traced.res"
if ! [ -s "$tmp/plain.res" ] || ! cmp -s "$tmp/plain.res" "$tmp/traced.res"; then
	echo "FAIL: hpcc's verified results changed under the sensor"
	diff "$tmp/plain.res" "$tmp/traced.res" | head -n 20
	status=1
fi
"$check" -v -a "$tmp/job" $NP MPI_Testany MPI_Waitall || {
	echo "FAIL: hpcc trace check"; status=1; }
"$tapestry" export -f simgrid-ti -o "$tmp/ti" "$tmp/job" 2> "$tmp/export.err" || {
	echo "FAIL: export"; cat "$tmp/export.err"; status=1; }
if grep 'never completed' "$tmp/export.err"; then
	echo "FAIL: requests left dangling in the export"
	status=1
fi
mpi_platform "$tmp/plat" $NP
timeout 600 "$tapestry" replay -o "$tmp/rp" --platform "$tmp/plat" "$tmp/job" \
	> "$tmp/replay.out" 2> "$tmp/replay.err"
if ! grep -q '^simulated time: [0-9.e+]* s$' "$tmp/replay.out"; then
	echo "FAIL: the replay of hpcc did not run to its end"
	tail -n 20 "$tmp/replay.err" "$tmp/rp/smpirun.log" 2>/dev/null
	status=1
fi
grep 'warning' "$tmp/export.err" | sed 's/^/  export: /'
cat "$tmp/replay.out"
[ $status = 0 ] && echo "ok: hpcc"
exit $status
