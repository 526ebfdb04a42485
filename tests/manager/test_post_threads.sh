#!/usr/bin/env bash
# tests/manager/test_post_threads.sh - the post-processing with two threads
# (TAPESTRY_POST_THREADS=2, the default: the job-start pass beside the
# causality and perturbation passes, the report's tally beside the
# post-processing) writes what one thread writes, byte for byte: the report
# (text and XML), the CSV export and the serve cache (report and timeline
# index), on a bench/post_gen job (Irecv/Isend/Wait rings, allreduces,
# flushes, clock errors to repair), on the heap and with every big array
# spilled; and a thread count other than 1 or 2 is refused.
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
work=$(mktemp -d /tmp/tapestry-test-post-threads.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
gen="$top_builddir/bench/post_gen"

# same WHAT FILE...: the files of run 1 and run 2 are equal and not empty
same() {
	local what=$1 f
	shift
	for f in "$@"; do
		if [ ! -s "$work/1/$f" ] || ! cmp -s "$work/1/$f" "$work/2/$f"; then
			echo "FAIL $what: $f differs (or is empty)"
			cmp "$work/1/$f" "$work/2/$f" | head -3
			fail=1
			return
		fi
	done
	echo "ok   $what: $* equal"
}

# outputs N: everything written with TAPESTRY_POST_THREADS=N into $work/N
outputs() {
	local n=$1 o="$work/$1"
	rm -rf "$o"
	mkdir -p "$o"
	# in $o, the outputs named alike: the messages that name them are too
	(
		cd "$o" || exit 1
		export TAPESTRY_POST_THREADS=$n
		"$T" report ../job >report.txt 2>report.err || echo "report exit $?" >>status
		"$T" report --xml ../job >report.xml 2>>report.err || echo "xml exit $?" >>status
		"$T" export -f csv -o events.csv ../job 2>>report.err || echo "csv exit $?" >>status
		"$T" serve --build-index ../job tl.idx cache.xml 2>>report.err ||
			echo "cache exit $?" >>status
		echo done >>status
	)
}

check "post_gen writes a job" "$gen" "$work/job" 4 60000
for spill in heap spilled; do
	if [ $spill = spilled ]; then
		export TAPESTRY_SPILL_BYTES=0 TMPDIR="$work/tmp"
		mkdir -p "$TMPDIR"
	fi
	outputs 1
	outputs 2
	unset TAPESTRY_SPILL_BYTES TMPDIR
	same "$spill: both runs end" status report.err
	same "$spill: report" report.txt report.xml
	same "$spill: CSV export" events.csv
	same "$spill: serve cache" cache.xml tl.idx
	check "$spill: the report has the job's events" grep -q "^events  *[1-9]" "$work/1/report.txt"
	check "$spill: the report has the repair" grep -q "<causality" "$work/1/report.xml"
done
check "no spill file left" test -z "$(ls -A "$work/tmp")"

for bad in 0 3 two ""x; do
	TAPESTRY_POST_THREADS=$bad "$T" report "$work/job" >"$work/bad.out" 2>"$work/bad.err"
	st=$?
	check "TAPESTRY_POST_THREADS=$bad refused (exit $st)" test $st = 2
	check "TAPESTRY_POST_THREADS=$bad said" grep -q "TAPESTRY_POST_THREADS" "$work/bad.err"
done
exit $fail
