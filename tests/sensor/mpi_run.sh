#!/bin/sh
# tests/sensor/mpi_run.sh FLAVOUR LANG - integration test of the MPI sensor.
#
# FLAVOUR: ompi or mpich; LANG: c or f (Fortran, compiled here with the
# flavour's mpif90). For the ring and the all-calls program, on 4 ranks:
# run untraced, run with the flavour's sensor preloaded and streaming to a
# real tapestry-collector on 127.0.0.1 (port chosen by the collector),
# compare the outputs, then check the job directory with mpi_tracecheck
# (every call present, every send matched by its receive). Exit 77 when the
# flavour, its compiler or the sensor library is missing. Run from the top
# build directory (make check does).
flavour=$1
lang=$2
NP=4
. "$(dirname "$0")/mpi_lib.sh"
mpi_flavour "$flavour"
mpi_tmpdir mpi-test

# run_mpi OUT PROG [traced]: PROG on NP ranks, untraced or traced with the
# sensor's log at info
run_mpi() {
	if [ $# -ge 3 ]; then
		mpi_traced $NP TAPESTRY_LOG=info -- "$2" > "$1" 2> "$1.err"
	else
		mpi_exec $NP -- "$2" > "$1" 2> "$1.err"
	fi
}

# Every call of the all-calls program, exact per-rank counts where the
# program makes them deterministic (not the polling Test/Iprobe loops).
CALLS="MPI_Init=1 MPI_Finalize=1 MPI_Comm_size=4 MPI_Comm_rank=4
MPI_Comm_split=2 MPI_Comm_dup=3 MPI_Comm_create=1 MPI_Comm_split_type=1
MPI_Cart_create=2 MPI_Cart_sub=1 MPI_Comm_idup=1 MPI_Graph_create=1
MPI_Dist_graph_create=1 MPI_Dist_graph_create_adjacent=1
MPI_Comm_create_group=2 MPI_Intercomm_create=1 MPI_Intercomm_merge=1
MPI_Comm_dup_with_info=1
MPI_Recv MPI_Irecv=5 MPI_Sendrecv=6
MPI_Wait MPI_Waitall=2 MPI_Waitany=2 MPI_Test MPI_Probe=1 MPI_Iprobe
MPI_Barrier MPI_Bcast=1 MPI_Reduce=1 MPI_Allreduce=7 MPI_Gather=2
MPI_Gatherv=1 MPI_Scatter=1 MPI_Scatterv=1 MPI_Allgather=1
MPI_Allgatherv=1 MPI_Alltoall=1 MPI_Alltoallv=1 MPI_Alltoallw=1
MPI_Reduce_scatter=1
MPI_Scan=1 MPI_Exscan=1 MPI_Send MPI_Isend compute"
RING="MPI_Init=1 MPI_Finalize=1 MPI_Comm_rank=1 MPI_Comm_size=1
MPI_Send=5 MPI_Recv=5 compute"

# The manager on the all-calls job: every message matched and causal, every
# collective too after the repair; named job-wide (23): the two halves of
# the split, their dups, the low half (MPI_Comm_create), the shared-memory
# communicator, the cartesian ring, the 2-D grid and its two rows
# (MPI_Cart_sub), the idup, the dup_with_info, the graph ring and its two
# distributed forms, the three create_group ({0, 1}, {1, 2, 3}, {0, 2, 3}),
# the two halves of the second split, their intercommunicator (its
# messages matched like the others), its dup, and its merge; 2 of them
# intercommunicators; unnamed: each rank's dup of MPI_COMM_SELF (4), made
# before the intercommunicator on the even ranks and after it on the odd
# ones, so that only its job-wide name matches its messages. Corrected as
# collectives (14 instances): the Allreduce on each half, the Barrier on
# the low half, the Allreduce on the shared-memory one and on each row, the
# Barrier on the idup, the Allreduce on the dup_with_info, the Barrier on
# the two distributed graphs and each create_group, the Allreduce on the
# graph ring; not the Barriers on the intercommunicator and its dup.
report_check() {
	rep=$("$tapestry" report --xml "$1" 2> "$tmp/rep.err") || {
		echo "FAIL: $flavour $lang calls: tapestry report"; cat "$tmp/rep.err"
		return 1; }
	bad=0
	for want in unmatched_sends=0 unmatched_receives=0 violations_after=0 \
		coll_violations_after=0 communicators_named=23 communicators_unnamed=4 \
		intercommunicators=2 \
		collectives_sub=14; do
		k=${want%%=*}
		got=$(printf '%s\n' "$rep" | sed -n "s/.* $k=\"\([^\"]*\)\".*/\1/p" | head -n 1)
		if [ "$k=$got" != "$want" ]; then
			echo "FAIL: $flavour $lang calls: report $k=$got, want $want"
			bad=1
		fi
	done
	[ $bad = 0 ] || printf '%s\n' "$rep" | grep -E 'causality|perturbation'
	# OTF2 (when built, and otf2-print is there): each of the 21
	# intracommunicators defined over its own members (10 of 2 ranks, 2
	# of 3, 9 of 4), the intercommunicator and its dup as INTER_COMM of
	# two groups of 2, MPI_COMM_SELF (the parent of a dup) over "members
	# unknown" (its COMM and STRING lines: 2), and the collectives on them
	# refer to them (42 events on the intracommunicators, 8 on the two
	# intercommunicators: a Barrier each on 4 ranks)
	if command -v otf2-print > /dev/null &&
		"$tapestry" export -f otf2 -o "$tmp/o.otf2" "$1" \
			2> "$tmp/otf2.err"; then
		otf2-print -G "$tmp/o.otf2/traces.otf2" > "$tmp/o.defs" 2>&1
		otf2-print "$tmp/o.otf2/traces.otf2" > "$tmp/o.evts" 2>&1
		n2=$(grep -c '^COMM .*(2 ranks)' "$tmp/o.defs")
		n3=$(grep -c '^COMM .*(3 ranks)' "$tmp/o.defs")
		n4=$(grep -c '^COMM .*(4 ranks)' "$tmp/o.defs")
		unk=$(grep -c 'members unknown' "$tmp/o.defs")
		warn=$(grep -c 'warning' "$tmp/o.defs")
		sub=$(grep 'MPI_COLLECTIVE_END' "$tmp/o.evts" | grep -c '"comm ')
		inter=$(grep -c '^INTER_COMM .*(2 + 2 ranks)' "$tmp/o.defs")
		isub=$(grep 'MPI_COLLECTIVE_END' "$tmp/o.evts" | grep -c '"intercomm ')
		if [ "$n2.$n3.$n4.$unk.$warn.$sub.$inter.$isub" != "10.2.9.2.0.42.2.8" ]; then
			echo "FAIL: $flavour $lang calls: OTF2 communicators: $n2 of 2 ranks" \
				"(want 10), $n3 of 3 (2), $n4 of 4 (9), $unk unknown (2)," \
				"$warn warnings (0), $sub collectives on them (42)," \
				"$inter intercommunicators of 2 + 2 (2), $isub collectives" \
				"on them (8)"
			grep '^COMM\|^INTER_COMM\|warning\|unknown' "$tmp/o.defs"
			bad=1
		fi
	fi
	return $bad
}

status=0
for prog in ring calls; do
	if [ "$lang" = f ]; then
		exe=$tmp/${prog}_f
		mpi_f90 "$MPI_TOP_SRCDIR/tests/sensor/mpi_$prog.f90" "$exe"
	else
		exe=$MPI_TOP_BUILDDIR/tests/sensor/mpi_${prog}_$flavour
		[ -x "$exe" ] || skip "no $exe"
	fi
	run_mpi "$tmp/plain.out" "$exe" || {
		echo "FAIL: $prog untraced"; cat "$tmp/plain.out.err"; exit 1; }

	job=$tmp/job-$prog
	mpi_col_start "$job" || exit 99
	run_mpi "$tmp/traced.out" "$exe" traced || {
		echo "FAIL: $prog traced"; cat "$tmp/traced.out.err"; exit 1; }
	mpi_col_stop
	mpi_same_output "$flavour $lang $prog" "$tmp/plain.out" "$tmp/traced.out" ||
		status=1
	if [ $prog = ring ]; then names=$RING; else names=$CALLS; fi
	# shellcheck disable=SC2086
	if ! "$check" -v "$job" $NP $names; then
		echo "FAIL: $flavour $lang $prog: trace check"
		# what the job directory holds, for whoever reads this log
		"$dump" "$job" 2>&1 |
			grep -v '^ev ' | head -n 60
		"$dump" "$job" 2>/dev/null |
			awk '/^ev / { for (i = 1; i <= NF; i++) if ($i ~ /^name=/) n[$i]++ }
			     END { for (k in n) print "  " n[k], k }' | sort -rn | head -n 20
		sed 's/^/  collector: /' "$tmp/col.err" | tail -n 20
		# the sensors' own log (TAPESTRY_LOG=info), then the rest
		grep 'tapestry-sensor' "$tmp/traced.out.err" | sed 's/^/  sensor: /' | head -n 40
		grep -v 'tapestry-sensor' "$tmp/traced.out.err" | sed 's/^/  mpirun: /' | tail -n 20
		status=1
	fi
	# every rank calibrated its wrapper's cost outside the measured gaps
	# on MPI_Comm_rank (CALIB evtype 48 = MPI_INIT) and on MPI_Iprobe
	# (evtype 64 = MPI_IPROBE), into a scratch ring: the calibration's
	# calls are not in the trace (the counts above hold)
	"$dump" "$job" >"$tmp/dump" 2>/dev/null
	for evt in 48 64; do
		ncal=$(grep -c " name=calibration .* evtype=$evt " "$tmp/dump")
		if [ "$ncal" != $NP ]; then
			echo "FAIL: $flavour $lang $prog: $ncal wrapper calibrations (evtype $evt), want $NP"
			status=1
		fi
	done
	[ $prog = calls ] && { report_check "$job" || status=1; }
	echo "ok: $flavour $lang $prog"
done
exit $status
