#!/bin/sh
# tests/sensor/mpi_io_run.sh FLAVOUR [LANG [PROG]] - MPI-IO (PROG io, the
# default) or one-sided communication and groups (PROG rma: mpi_rma.c or .f90; the
# same comparison of its events with its expectations, then the SimGrid
# export's sleeps and the report's counts, see mpi_rma_exports) or the
# nonblocking and neighbourhood collectives (PROG coll: mpi_coll.c; the same
# comparison, ARRAY values included, every request completed once by
# mpi_tracecheck -a, then the exports, see mpi_coll_exports) or point to
# point from 3 threads a rank (PROG threads: mpi_threads.c, skipped without
# MPI_THREAD_MULTIPLE; mpi_tracecheck -a with the counts, the threads) or
# the MPI-4 large-count forms (PROG large: mpi_large.c, the comparison only)
# under the MPI sensor.
#
# FLAVOUR: ompi or mpich; LANG: c (default), f (mpi_io.f90, mpif.h) or f08
# (mpi_io_f08.f90, the mpi_f08 module), compiled here with the flavour's
# mpif90. Runs tests/sensor/mpi_io (every MPI-IO
# form the sensor wraps, see mpi_io.c; the Fortran one fewer) on 4 ranks
# untraced, then with the flavour's
# sensor preloaded against a real tapestry-collector on 127.0.0.1 (port
# chosen by the collector); the outputs must be equal. Then every MPI-IO
# event of the trace (dump_trace) is compared, rank by rank and in order,
# with the lines the program wrote of what it knows of each call (file id,
# path, offset, bytes, collective, bytes transferred, failed), each
# nonblocking one's request id must come back in an MPI_Wait, and
# `tapestry export -f csv` must show the path and bytes of every one.
# Then the exports: OTF2 I/O records, Paje and Chrome events, and the
# SimGrid time-independent trace's sleeps (see mpi_io_exports below).
# Exit 77 when the flavour or the sensor library is missing. Run from the
# top build directory (make check does).
set -u
flavour=$1
lang=${2:-c}
prog=${3:-io}
NP=4
case $prog in
io)	names='^MPI_File_' ;;
large)	names='^MPI_(Send|Ssend|Rsend|Bsend|Recv|Sendrecv|Sendrecv_replace|Send_init|Recv_init|Start|Isend|Issend|Ibsend|Irsend|Irecv|Bcast|Reduce|Allreduce|Put|Get)$|^MPI_(Win|File)_' ;;
rma)	names='^MPI_(Win_|Put$|Get$|Accumulate$|Get_accumulate$|Fetch_and_op$|Compare_and_swap$|Rput$|Rget$|Raccumulate$|Rget_accumulate$|Comm_group$|Group_)' ;;
threads) names='^MPI_' ;;
more)	names='^MPI_(Isendrecv|Isendrecv_replace|Grequest_start|Grequest_complete|Buffer_attach|Buffer_detach|Reduce_local)$' ;;
coll)	names='^MPI_(I(barrier|bcast|reduce|allreduce|gatherv?|scatterv?|allgatherv?|alltoall[vw]?|reduce_scatter(_block)?|scan|exscan)|Alltoallw|Reduce_scatter_block|I?[Nn]eighbor_[a-z]*)$' ;;
*)	echo "mpi_io_run.sh: unknown program $prog" >&2; exit 99 ;;
esac
. "$(dirname "$0")/mpi_lib.sh"
mpi_flavour "$flavour"
exe=$B/tests/sensor/mpi_${prog}_$flavour
[ "$lang" != c ] || [ -x "$exe" ] || skip "no $exe"
mpi_tmpdir mpiio-test
if [ "$lang" != c ]; then
	# f: mpif.h; f08: the mpi_f08 module (mpi_io_f08.f90)
	src=$MPI_TOP_SRCDIR/tests/sensor/mpi_$prog.f90
	[ "$lang" = f08 ] && src=$MPI_TOP_SRCDIR/tests/sensor/mpi_${prog}_f08.f90
	exe=$tmp/mpi_${prog}_$lang
	mpi_f90 "$src" "$exe"
	flavour="$flavour Fortran"
fi

# run_mpi OUT [traced]: the program on NP ranks
run_mpi() {
	_out=$1
	_how=${2:-plain}
	set -- "$exe" "$tmp/expect"
	[ $prog = io ] || [ $prog = large ] && set -- "$exe" "$tmp/data" "$tmp/expect"
	if [ "$_how" = traced ]; then
		mpi_traced $NP -- "$@" > "$_out" 2> "$_out.err"
	else
		mpi_exec $NP -- "$@" > "$_out" 2> "$_out.err"
	fi
}

run_mpi "$tmp/plain.out" || {
	echo "FAIL: $flavour: mpi_$prog untraced"; cat "$tmp/plain.out" "$tmp/plain.out.err"
	exit 1; }
grep -q "^mpi_threads: no MPI_THREAD_MULTIPLE" "$tmp/plain.out" &&
	skip "$flavour: no MPI_THREAD_MULTIPLE"
grep -q "^mpi_$prog: ok\$" "$tmp/plain.out" || {
	echo "FAIL: $flavour: mpi_$prog untraced"; cat "$tmp/plain.out"; exit 1; }

job=$tmp/job
mpi_col_start "$job" || exit 99
rm -f "$tmp"/expect.*
run_mpi "$tmp/traced.out" traced || {
	echo "FAIL: $flavour: mpi_$prog traced"; cat "$tmp/traced.out" "$tmp/traced.out.err"
	exit 1; }
mpi_col_stop
status=0
mpi_same_output "$flavour" "$tmp/plain.out" "$tmp/traced.out" || status=1

if [ $prog = threads ]; then
	# NT=3 threads x ITER=40 rounds: the counts per rank, every message
	# matched, every request completed once (mpi_tracecheck -a), and each
	# rank's Sendrecvs on 3 threads
	"$B/tests/sensor/mpi_tracecheck" -a "$job" $NP MPI_Sendrecv=120 \
		MPI_Irecv=240 MPI_Isend=360 MPI_Waitall=120 MPI_Recv=120 \
		MPI_Wait=120 MPI_Waitany=240 MPI_Comm_dup=2 > "$tmp/check.out" 2>&1 || {
		echo "FAIL: $flavour: mpi_tracecheck"; cat "$tmp/check.out"; status=1; }
	"$B/tests/sensor/dump_trace" "$job" > "$tmp/dump" 2> "$tmp/dump.err" || {
		echo "FAIL: $flavour: dump_trace"; cat "$tmp/dump.err"; exit 1; }
	n=$(awk '$1 == "ev" && $5 == "name=MPI_Sendrecv" { print $2, $4 }' "$tmp/dump" |
		sort -u | wc -l)
	[ "$n" = $((NP * 3)) ] || {
		echo "FAIL: $flavour: MPI_Sendrecv on $n threads, want $((NP * 3))"; status=1; }
	[ $status = 0 ] && echo "ok: $flavour mpi_threads (3 threads a rank)"
	exit $status
fi

# The trace's MPI-IO events and waits, per rank: "rank name k=v ..."
"$dump" "$job" > "$tmp/dump" 2> "$tmp/dump.err" || {
	echo "FAIL: $flavour: dump_trace"; cat "$tmp/dump.err"; exit 1; }
# (an event's ARRAY values follow it as "arr=v,v,...")
awk -v names="$names" 'function out() { if (pend != "") print pend; pend = "" }
$1 == "array" { if (pend != "") { v = $NF; sub(/^values=/, "", v)
		pend = pend (narr++ ? "," : " arr=") v }
	next }
$1 == "ev" {
	out(); narr = 0
	s = $2; sub(/^stream=/, "", s)
	name = $5; sub(/^name=/, "", name)
	if (name == "MPI_Init") {
		for (i = 6; i <= NF; i++) if ($i ~ /^rank=/) { r = $i; sub(/^rank=/, "", r); rank[s] = r }
		next
	}
	if (name !~ names && name !~ /^MPI_(Wait|Test)(all|any|some)?$/) next
	line = name
	for (i = 8; i <= NF; i++) line = line " " $i
	pend = (s in rank ? rank[s] : "?") " " line
}
END { out() }' "$tmp/dump" > "$tmp/io"

# compare RANK: the rank's events with its expectations, in order
compare() {
	grep "^$1 " "$tmp/io" | cut -d' ' -f2- > "$tmp/got.$1"
	awk -v rank="$1" -v flavour="$flavour" -v prog=$prog '
	# the completions (whichever call): the request ids they repeat, from
	# their req argument or their ARRAY (proto_ev_done: 4 values a request
	# for MPI_Waitall, 5 for the others, the id first)
	NR == FNR { if ($1 !~ /^MPI_(Wait|Test)(all|any|some)?$/) { ev[++n] = $0; next }
		    stride = $1 == "MPI_Waitall" ? 4 : 5
		    r = ""; b = ""
		    for (i = 2; i <= NF; i++) {
			if ($i ~ /^req=/) { waited[$i] = 1; r = $i }
			if ($i ~ /^bytes=/) { b = $i; sub(/^bytes=/, "", b) }
			if ($i ~ /^arr=/) { v = $i; sub(/^arr=/, "", v); m = split(v, a, ",")
				for (j = 1; j + stride - 1 <= m; j += stride) {
					waited["req=" a[j]] = 1
					moved["req=" a[j]] = a[j + stride - 2]
				} }
		    }
		    if (r != "" && b != "") moved[r] = b
		    next }
	{
		k++
		if (k > n) { printf "FAIL: %s rank %s: no event for: %s\n", flavour, rank, $0; bad = 1; next }
		split(ev[k], g, " ")
		delete have
		for (i = 2; i in g; i++) { split(g[i], kv, "="); have[kv[1]] = kv[2] }
		if (g[1] != $1) { printf "FAIL: %s rank %s event %d: %s, want %s\n", flavour, rank, k, ev[k], $0; bad = 1; next }
		if (("failed" in have) && $0 !~ / failed=1/) { printf "FAIL: %s rank %s event %d failed: %s\n", flavour, rank, k, ev[k]; bad = 1 }
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[2] == "+") {
				if (!(have[kv[1]] > 0)) { printf "FAIL: %s rank %s event %d (%s): %s=%s, want > 0\n", flavour, rank, k, $1, kv[1], have[kv[1]]; bad = 1 }
				else if (kv[1] == "req" && prog != "coll" && !(("req=" have["req"]) in waited)) { printf "FAIL: %s rank %s event %d (%s): req %s never waited for\n", flavour, rank, k, $1, have["req"]; bad = 1 }
			} else if (kv[1] == "done") {
				# the bytes its completion recorded (the status count)
				if (moved["req=" have["req"]] != kv[2]) { printf "FAIL: %s rank %s event %d (%s): its completion moved %s bytes, want %s\n", flavour, rank, k, $1, moved["req=" have["req"]], kv[2]; bad = 1 }
			} else if (have[kv[1]] != kv[2]) {
				printf "FAIL: %s rank %s event %d (%s): %s=%s, want %s\n", flavour, rank, k, $1, kv[1], have[kv[1]], kv[2]; bad = 1
			}
		}
	}
	END { if (k < n) { printf "FAIL: %s rank %s: %d MPI-IO events more than expected\n", flavour, rank, n - k; bad = 1 }
	      exit bad }' "$tmp/got.$1" "$tmp/expect.$1"
}
r=0
while [ $r -lt $NP ]; do
	[ -f "$tmp/expect.$r" ] || { echo "FAIL: $flavour: no expectations of rank $r"; exit 1; }
	compare $r || status=1
	r=$((r + 1))
done
nexp=$(cat "$tmp"/expect.* | wc -l)
if [ $prog = coll ]; then
	# every request completed exactly once, whatever completed it
	"$B/tests/sensor/mpi_tracecheck" -a "$job" $NP MPI_Ibarrier=1 \
		MPI_Ineighbor_alltoallw=1 > "$tmp/check.out" 2>&1 || {
		echo "FAIL: $flavour: mpi_tracecheck"; cat "$tmp/check.out"; status=1; }
	. "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_exports.sh"
	mpi_coll_exports || status=1
	[ $status = 0 ] && echo "ok: $flavour mpi_coll ($nexp collectives checked)"
	exit $status
fi
if [ $prog = more ]; then
	# every request completed once (the Isendrecvs' and the generalized
	# one), every message matched (the Isendrecvs' sends with their
	# requests' receives); the exports
	"$B/tests/sensor/mpi_tracecheck" -a "$job" $NP MPI_Grequest_start=1 \
		MPI_Reduce_local=1 MPI_Buffer_attach=1 MPI_Buffer_detach=1 \
		> "$tmp/check.out" 2>&1 || {
		echo "FAIL: $flavour: mpi_tracecheck"; cat "$tmp/check.out"; status=1; }
	. "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_exports.sh"
	mpi_more_exports || status=1
	[ $status = 0 ] && echo "ok: $flavour mpi_more ($nexp calls checked)"
	exit $status
fi
if [ $prog = large ]; then
	[ $status = 0 ] && echo "ok: $flavour mpi_large ($nexp large-count calls checked)"
	exit $status
fi
if [ $prog = rma ]; then
	. "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_exports.sh"
	mpi_rma_exports || status=1
	[ $status = 0 ] && echo "ok: $flavour mpi_rma ($nexp one-sided calls checked)"
	exit $status
fi

# CSV: every MPI-IO event with its path, and its bytes (not for the
# handle never opened, nor MPI_File_delete, which have none / no bytes).
# The bytes column is what the call moved (proto_ev_moved, the report's
# and the profile's rule too): the status's count where the program
# knows it (result=; a read at the end of the file 0, though it asked
# 400), 0 for a call that failed, a nonblocking access and a split
# collective's _begin (they move at their completion: the MPI_Wait... row,
# the _end row). So the 400-byte rows are the lines with result=400.
"$tapestry" export -f csv -o "$tmp/job.csv" "$job" 2> "$tmp/csv.err" || {
	echo "FAIL: $flavour: export csv"; cat "$tmp/csv.err"; exit 1; }
ncsv=$(awk -F, -v p="$tmp/data" '$3 ~ /^MPI_File_/ && ($10 == p || $10 == p ".seq" || $10 == "/nonexistent-dir/x")' "$tmp/job.csv" | wc -l)
nnopath=$(awk -F, '$3 ~ /^MPI_File_/ && $10 == ""' "$tmp/job.csv" | wc -l)
nbytes=$(awk -F, '$3 ~ /^MPI_File_(i?(read|write))/ && $6 == 400' "$tmp/job.csv" | wc -l)
wbytes=$(cat "$tmp"/expect.* | grep -v 'failed=1' | grep -c 'result=400')
wnopath=$(cat "$tmp"/expect.* | grep -c ' path=0 ')
if [ "$ncsv.$nnopath" != "$((nexp - wnopath)).$wnopath" ] || [ "$nbytes" != "$wbytes" ]; then
	echo "FAIL: $flavour: CSV: $ncsv MPI-IO rows with the path (want $((nexp - wnopath)))," \
		"$nnopath without (want $wnopath), $nbytes of 400 bytes (want $wbytes)"
	grep MPI_File_ "$tmp/job.csv" | head -n 20
	status=1
fi

if [ -f "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_exports.sh" ]; then
	. "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_exports.sh"
	mpi_io_exports || status=1
fi
[ $status = 0 ] && echo "ok: $flavour mpi_io ($nexp MPI-IO calls checked)"
exit $status
