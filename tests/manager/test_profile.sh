#!/usr/bin/env bash
# tests/manager/test_profile.sh - the profile of a program whose figures are
# known (tests/manager/profile_probe.c: its matrix, message sizes,
# collectives, file bytes and waits), traced under Open MPI's mpirun, checked
# figure by figure in `report --xml`, `export -f profile` and the report's
# text (tests/manager/profile_check.py), on the corrected times and on the
# traced ones (TAPESTRY_NO_CORRECTION=1). The receives' known waits are
# checked hard on the traced times; on the corrected ones they are said
# (KNOWN): the correction removes them today (issue 28, the post lane).
# Exit 77 without Open MPI or the probe.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
probe="$top_builddir/tests/manager/profile_probe_ompi"
launcher=$(command -v mpirun.openmpi)
[ -n "$launcher" ] && [ -x "$probe" ] || { echo "skip: no mpirun.openmpi or $probe"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-profile.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fail=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
WAIT_MS=300
mkdir "$work/io"
timeout 300 "$T" run --no-pingpong -o "$work/job" -- "$launcher" --oversubscribe -np 2 \
	"$probe" "$work/io" "$WAIT_MS" >"$work/run.out" 2>"$work/run.err"
check "the probe runs traced" [ $? = 0 ]
[ $fail = 0 ] || { tail -n 20 "$work/run.err"; exit 1; }

for mode in corrected raw; do
	env=()
	[ $mode = raw ] && env=(TAPESTRY_NO_CORRECTION=1)
	env "${env[@]}" "$T" report --xml "$work/job" >"$work/$mode.xml" 2>"$work/$mode.err"
	check "$mode: report --xml" [ $? = 0 ]
	env "${env[@]}" "$T" report "$work/job" >"$work/$mode.txt" 2>>"$work/$mode.err"
	check "$mode: report" [ $? = 0 ]
	env "${env[@]}" "$T" export -f profile -o "$work/$mode.csv" "$work/job" 2>>"$work/$mode.err"
	check "$mode: export -f profile" [ $? = 0 ]
	check "$mode: the export's tables" test -f "$work/$mode.csv/ranks.csv" -a \
		-f "$work/$mode.csv/functions.csv" -a -f "$work/$mode.csv/calls.csv" -a \
		-f "$work/$mode.csv/messages.csv" -a -f "$work/$mode.csv/sizes.csv" -a \
		-f "$work/$mode.csv/collectives.csv" -a -f "$work/$mode.csv/files.csv"
	python3 "$top_srcdir/tests/manager/profile_check.py" "$work/$mode.xml" "$work/$mode.txt" \
		"$work/$mode.csv" "$WAIT_MS" $mode | sed "s/^/$mode: /"
	check "$mode: every figure" [ "${PIPESTATUS[0]}" = 0 ]
done

# --no-profile: today's report without it; the default export name
"$T" report --no-profile "$work/job" >"$work/np.txt" 2>/dev/null
check "--no-profile: no profile" bash -c "! grep -q '^profile ' '$work/np.txt'"
check "--no-profile: the rest as before" diff <(sed -n '/^job directory/,$p' "$work/corrected.txt") "$work/np.txt"
"$T" export -f profile "$work/job" 2>/dev/null
check "export -f profile: DIR/profile by default" test -f "$work/job/profile/ranks.csv"
# --quick: no post-processing, no profile
"$T" report --quick --xml "$work/job" >"$work/q.xml" 2>/dev/null
check "--quick: no <profile>" bash -c "! grep -q '<profile' '$work/q.xml'"
# a job directory that is not one: no output left
"$T" export -f profile -o "$work/none" "$work/io" 2>"$work/bad.err"
check "export -f profile of a non-job fails" [ $? != 0 ]
check "  ...leaving nothing" test ! -e "$work/none" -a ! -e "$work/none.tmp"
exit $fail
