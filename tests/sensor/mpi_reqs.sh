#!/bin/sh
# tests/sensor/mpi_reqs.sh FLAVOUR - requests, completions and send modes,
# traced, exported for SimGrid, replayed, and compared with SimGrid's own
# trace of the same sources.
#
# FLAVOUR: ompi or mpich. Programs (built by make check):
#  - mpi_halo: n Irecv, n Isend, one Waitall, six steps on 4 ranks. The
#    MPIs give every isend that completed at once one handle: each request
#    must be recorded once (mpi_tracecheck -a), the export must write what
#    `smpirun -trace-ti` writes (waitall 8 a step) and no "requests never
#    completed".
#  - mpi_p2p: every send mode, persistent requests, matched probes, every
#    completion call, cancel, free, MPI_PROC_NULL on 4 ranks; then on 2
#    ranks with one message of 2,160,000,000 bytes (recorded whole on
#    both sides). Each request completed once, every message matched, the
#    export replays in SimGrid (Bsend out of order, a cancelled receive).
#  - mpi_p2pcmp: mpi_p2p.c built with -DP2P_SMPI, and the same source built
#    with smpicc and run under `smpirun -trace-ti`: the posts (sends and
#    receives with peer, tag, bytes; barriers) equal rank by rank, by
#    meaning (tests/sensor/ti_meaning.awk).
#  - mpi_order: collectives on a communicator of every rank in the reverse
#    order, zero counts, a derived datatype (size 16, extent 28): replayed.
#  - mpi_bad: bad arguments under MPI_ERRORS_RETURN and every sentinel:
#    the wrapper returns the library's error class, nothing crashes.
#  - mpi_reqs.f90: persistent requests, Ibsend/Irsend, the completions,
#    matched probes, cancel from Fortran (mpif.h), compiled with the
#    flavour's mpif90: the same checks.
# Every traced run's output must equal the untraced run's. Exit 77 when the
# flavour, the sensor, the collector or SimGrid (smpicc, smpirun) is
# missing. Run from the top build directory (make check does).
flavour=$1
NP=4
. "$(dirname "$0")/mpi_lib.sh"
mpi_flavour "$flavour"
[ -n "$SMPICC" ] && [ -x "$SMPICC" ] && [ -n "$SMPIRUN" ] && [ -x "$SMPIRUN" ] ||
	skip "no SimGrid (smpicc, smpirun)"
MPI_TMO=300
mpi_tmpdir mpi-reqs

# A platform of NP hosts for the replays and smpirun, and one of 2.
mpi_platform "$tmp/plat" $NP
mpi_platform "$tmp/plat2" 2

# trace NP JOB EXE ARGS...: untraced, then traced into JOB; outputs equal
# (in any order).
trace() {
	np=$1; job=$2; exe=$3; shift 3
	[ -x "$exe" ] || skip "no $exe"
	mpi_exec "$np" -- "$exe" "$@" > "$tmp/plain.out" 2> "$tmp/plain.out.err" || {
		echo "FAIL: $exe untraced"; cat "$tmp/plain.out.err"; return 1; }
	mpi_col_start "$job" || return 1
	mpi_traced "$np" -- "$exe" "$@" > "$tmp/traced.out" 2> "$tmp/traced.out.err" || {
		echo "FAIL: $exe traced"; cat "$tmp/traced.out.err"; return 1; }
	mpi_col_stop
	mpi_same_output "$flavour $exe" "$tmp/plain.out" "$tmp/traced.out" sort
}

# export_replay JOB PLATDIR: simgrid-ti with no request left dangling, and
# its replay in SimGrid runs to the end.
export_replay() {
	job=$1
	"$tapestry" export -f simgrid-ti -o "$job.ti" "$job" 2> "$job.export.err" || {
		echo "FAIL: $flavour $job: export"; cat "$job.export.err"; return 1; }
	if grep 'never completed' "$job.export.err"; then
		echo "FAIL: $flavour $job: the export leaves requests dangling"
		return 1
	fi
	timeout 600 "$tapestry" replay -o "$job.rp" --platform "$2" "$job" \
		> "$job.replay.out" 2> "$job.replay.err"
	if ! grep -q '^simulated time: [0-9.]* s$' "$job.replay.out"; then
		echo "FAIL: $flavour $job: the replay did not run to its end"
		tail -n 20 "$job.replay.err" "$job.rp/smpirun.log" 2>/dev/null
		return 1
	fi
}

# compare NAME SRC: SRC built with smpicc and run under smpirun -trace-ti;
# its actions and our export of NAME's job, reduced to their meaning
# (PART: posts, or posts and waits), equal rank by rank.
compare() {
	name=$1; src=$2; parts=$3
	"$SMPICC" -o "$tmp/$name.smpi" "$src" > "$tmp/smpicc.log" 2>&1 || {
		echo "FAIL: smpicc $src"; cat "$tmp/smpicc.log"; return 1; }
	mkdir "$tmp/$name.sg" || return 1
	(cd "$tmp/$name.sg" && timeout 300 "$SMPIRUN" -np $NP \
		-platform "$tmp/plat/platform.xml" -hostfile "$tmp/plat/hostfile" \
		-trace-ti --cfg=tracing/filename:ti "$tmp/$name.smpi" \
		< /dev/null > out 2> err) || {
		echo "FAIL: smpirun -trace-ti $name"; tail -n 20 "$tmp/$name.sg/err"; return 1; }
	bad=0
	for r in $(seq 0 $((NP - 1))); do
		theirs=$tmp/$name.sg/$(sed -n "$((r + 1))p" "$tmp/$name.sg/ti")
		for part in $parts; do
			awk -v part="$part" -f "$MPI_TOP_SRCDIR/tests/sensor/ti_meaning.awk" \
				"$tmp/job-$name.ti/rank_$r.txt" > "$tmp/ours.$part"
			awk -v part="$part" -f "$MPI_TOP_SRCDIR/tests/sensor/ti_meaning.awk" \
				"$theirs" > "$tmp/theirs.$part"
			# a tag of * (SMPI's sendRecv says none) matches any
			if ! awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
				{ split(a[FNR], x, " "); split($0, y, " ");
				  if (x[1] != y[1] || x[2] != y[2] || x[4] != y[4] ||
				      (x[3] != y[3] && x[3] != "*" && y[3] != "*")) exit 1;
				  m = FNR }
				END { exit m != n }' "$tmp/ours.$part" "$tmp/theirs.$part"; then
				echo "FAIL: $flavour $name rank $r: $part differ from smpirun -trace-ti's"
				diff "$tmp/ours.$part" "$tmp/theirs.$part" | head -n 20
				bad=1
			fi
		done
	done
	return $bad
}

status=0
HALO="MPI_Irecv=24 MPI_Isend=24 MPI_Waitall=6"
P2P="MPI_Bsend=2 MPI_Ssend=1 MPI_Rsend=1 MPI_Ibsend=1 MPI_Issend=1 MPI_Irsend=1
MPI_Send_init=1 MPI_Ssend_init=1 MPI_Recv_init=2 MPI_Startall=3 MPI_Start=2
MPI_Request_free=5 MPI_Waitsome MPI_Testsome MPI_Testany MPI_Testall
MPI_Waitany=8 MPI_Request_get_status MPI_Test MPI_Mprobe=1 MPI_Mrecv=1
MPI_Improbe MPI_Imrecv=1 MPI_Sendrecv_replace=1 MPI_Cancel=1
MPI_Test_cancelled=1"

# the halo exchange: one record per request, waitall 8 as SimGrid writes
if trace $NP "$tmp/job-halo" "$B/tests/sensor/mpi_halo_$flavour"; then
	# shellcheck disable=SC2086
	"$check" -a "$tmp/job-halo" $NP $HALO || {
		echo "FAIL: $flavour halo: trace check"; status=1; }
	export_replay "$tmp/job-halo" "$tmp/plat" || status=1
	compare halo "$MPI_TOP_SRCDIR/tests/sensor/mpi_halo.c" "posts waits" || status=1
else
	status=1
fi
echo "ok: $flavour halo"

# every point-to-point call
if trace $NP "$tmp/job-p2p" "$B/tests/sensor/mpi_p2p_$flavour"; then
	# shellcheck disable=SC2086
	"$check" -a "$tmp/job-p2p" $NP $P2P || {
		echo "FAIL: $flavour p2p: trace check"; status=1; }
	export_replay "$tmp/job-p2p" "$tmp/plat" || status=1
else
	status=1
fi
echo "ok: $flavour p2p"

# the same on 2 ranks with a message past 2 GiB: recorded whole on both
# sides (the checker matches sends and receives by bytes), replayed
if trace 2 "$tmp/job-big" "$B/tests/sensor/mpi_p2p_$flavour" 2160000000; then
	"$check" -a "$tmp/job-big" 2 MPI_Recv MPI_Send || {
		echo "FAIL: $flavour big: trace check"; status=1; }
	n=$("$check" -d "$tmp/job-big" 2 2>/dev/null |
		grep -c '^[01] MPI_\(Send\|Recv\) [01] 60 0 2160000000 ')
	[ "$n" = 2 ] || { echo "FAIL: $flavour big: $n records of the 2160000000 bytes, want 2"; status=1; }
	export_replay "$tmp/job-big" "$tmp/plat2" || status=1
else
	status=1
fi
echo "ok: $flavour big"

# collectives on a communicator of every rank in the reverse order (and
# its dup), zero counts, a derived datatype: the replay runs (counts and
# roots in world order; bytes from the type's size)
if trace $NP "$tmp/job-order" "$B/tests/sensor/mpi_order_$flavour"; then
	"$check" -a "$tmp/job-order" $NP MPI_Alltoallv=3 MPI_Gatherv=3 || {
		echo "FAIL: $flavour order: trace check"; status=1; }
	n=$("$check" -d "$tmp/job-order" $NP 2>/dev/null |
		grep -c '^[0-3] MPI_Sendrecv [0-3] 7 0 16 [0-3] 16 ')
	[ "$n" = $NP ] || { echo "FAIL: $flavour order: $n sendrecv of 16 bytes (the type's size), want $NP"; status=1; }
	export_replay "$tmp/job-order" "$tmp/plat" || status=1
else
	status=1
fi
echo "ok: $flavour order"

# bad arguments with MPI_ERRORS_RETURN: the wrapper returns the library's
# error class for each (the program compares PMPI_ with MPI_ and prints
# "rank N ok"), and nothing crashes on the sentinels; the trace checks
# (failed calls move nothing) and replays
if trace $NP "$tmp/job-bad" "$B/tests/sensor/mpi_bad_$flavour" "$tmp/errs"; then
	n=$(grep -c '^rank [0-9]* ok$' "$tmp/traced.out")
	[ "$n" = $NP ] || { echo "FAIL: $flavour bad: the wrapper returned other errors"
		cat "$tmp/traced.out"; status=1; }
	# each failed call's mpi_error record: the code the program got, its
	# class, right after the call's record (flagged failed)
	"$B/tests/sensor/dump_trace" "$tmp/job-bad" | awk -v d="$tmp/got" '
		$1 != "ev" { next }
		{ s = $2; name = $5; sub(/^name=/, "", name) }
		name == "MPI_Init" { for (i = 6; i <= NF; i++) if ($i ~ /^rank=/) { r = $i; sub(/^rank=/, "", r); rk[s] = r } }
		name == "mpi_error" { c = $8; k = $9; sub(/^errcode=/, "", c); sub(/^errclass=/, "", k)
			if (!(s in failed) || !failed[s]) c = c " after an event not failed"
			out[s] = out[s] c " " k "\n" }
		{ failed[s] = / failed=1/ }
		END { for (s in out) printf "%s", out[s] > (d "." rk[s]) }'
	r=0
	while [ $r -lt $NP ]; do
		cmp -s "$tmp/errs.$r" "$tmp/got.$r" || { echo "FAIL: $flavour bad: rank $r's mpi_error records"
			diff "$tmp/errs.$r" "$tmp/got.$r"; status=1; }
		r=$((r + 1))
	done
	"$tapestry" export -f csv -o "$tmp/bad.csv" "$tmp/job-bad" 2> /dev/null
	n=$(awk -F, '$3 == "mpi_error" && $13 != ""' "$tmp/bad.csv" | wc -l)
	[ "$n" = "$(cat "$tmp"/errs.* | wc -l)" ] || {
		echo "FAIL: $flavour bad: $n mpi_error CSV lines with their code"; status=1; }
	# the report's count of failed MPI calls
	n=$("$tapestry" report "$tmp/job-bad" 2> /dev/null | sed -n 's/^failed MPI calls //p' |
		tr ',' '\n' | awk '{ s += $NF } END { print s + 0 }')
	[ "$n" = "$(cat "$tmp"/errs.* | wc -l)" ] || {
		echo "FAIL: $flavour bad: the report counts $n failed MPI calls"; status=1; }
	"$check" -a "$tmp/job-bad" $NP MPI_Mrecv=1 MPI_Imrecv=1 MPI_Testany=2 || {
		echo "FAIL: $flavour bad: trace check"; status=1; }
	export_replay "$tmp/job-bad" "$tmp/plat" || status=1
else
	status=1
fi
echo "ok: $flavour bad"

# the same calls from Fortran (mpif.h): Open MPI's Fortran layer calls
# PMPI_ directly, so these go through sensor/mpi_fortran.c's bindings
if [ -n "$f90" ] && [ -x "$f90" ]; then
	mpi_f90 "$MPI_TOP_SRCDIR/tests/sensor/mpi_reqs.f90" "$tmp/reqs_f"
	if trace $NP "$tmp/job-f" "$tmp/reqs_f"; then
		"$check" -a "$tmp/job-f" $NP MPI_Send_init=1 MPI_Recv_init=1 \
			MPI_Startall=3 MPI_Start=2 MPI_Request_free=2 MPI_Ibsend=1 \
			MPI_Irsend=1 MPI_Waitsome MPI_Testsome MPI_Testany \
			MPI_Testall MPI_Request_get_status MPI_Mprobe=1 MPI_Mrecv=1 \
			MPI_Sendrecv_replace=1 MPI_Cancel=1 MPI_Test_cancelled=1 || {
			echo "FAIL: $flavour Fortran: trace check"; status=1; }
		export_replay "$tmp/job-f" "$tmp/plat" || status=1
	else
		status=1
	fi
	echo "ok: $flavour Fortran"
else
	echo "FAIL: no Fortran compiler for $flavour"
	status=1
fi

# the comparison with smpirun -trace-ti
if trace $NP "$tmp/job-p2pcmp" "$B/tests/sensor/mpi_p2pcmp_$flavour"; then
	"$tapestry" export -f simgrid-ti -o "$tmp/job-p2pcmp.ti" "$tmp/job-p2pcmp" \
		2> /dev/null || { echo "FAIL: $flavour p2pcmp: export"; status=1; }
	compare p2pcmp "$MPI_TOP_SRCDIR/tests/sensor/mpi_p2p.c" posts || status=1
else
	status=1
fi
echo "ok: $flavour p2pcmp"
exit $status
