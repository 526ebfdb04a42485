#!/usr/bin/env bash
# tests/manager/test_profile.sh - the profile of a program whose figures are
# known (tests/manager/profile_probe.c: its matrix, message sizes,
# collectives, file bytes and waits), traced under Open MPI's mpirun, checked
# figure by figure in `report --xml`, `export -f profile` and the report's
# text (tests/manager/profile_check.py), on the corrected times and on the
# traced ones (TAPESTRY_NO_CORRECTION=1). The receives' known waits are
# the program's, not the tracer's: on the corrected times each is the
# traced one less at most the tracer's measured cost (issue 28).
# Exit 77 without Open MPI or the probe.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
probe="$top_builddir/tests/manager/profile_probe_ompi"
launcher=$(command -v mpirun.openmpi)
[ -n "$launcher" ] && [ -x "$probe" ] || { echo "skip: no mpirun.openmpi or $probe"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-profile.XXXXXX)
SP=
trap '[ -n "$SP" ] && { kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; }; rm -rf "$work"' EXIT
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

for mode in raw corrected; do
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
		"$work/$mode.csv" "$WAIT_MS" $mode "$work/raw.xml" | sed "s/^/$mode: /"
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

# the page: `tapestry serve` draws the profile from report.xml; every figure
# it shows as a number is the XML's (data-x), the pictures are there
CHROMIUM=$(command -v chromium || command -v chromium-browser)
if [ -z "$CHROMIUM" ] || ! command -v curl >/dev/null; then
	echo "skip the page: no chromium or curl"
	exit $fail
fi
mkdir "$work/jobs" && mv "$work/job" "$work/jobs/probe"
"$T" serve --listen 127.0.0.1:0 --jobs "$work/jobs" >"$work/serve.out" 2>"$work/serve.err" &
SP=$!
for _ in $(seq 100); do grep -q serving "$work/serve.out" && break; sleep 0.1; done
# serve prints http://127.0.0.1:PORT/?token=TOKEN; every route needs the
# token, and a GET starts no work: the report is built by a POST (as
# tests/manager/test_serve_browser.sh does)
U=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/serve.out")
TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$work/serve.out")
check "serve is up ($U, a token)" [ -n "$U" -a -n "$TOK" ]
curl() { command curl -H "Authorization: Bearer $TOK" "$@"; }
curl -s -o /dev/null -X POST -H 'X-Tapestry: 1' "$U/api/jobs/probe/build"
for _ in $(seq 600); do
	[ "$(curl -s -o "$work/page-report.xml" -w '%{http_code}' "$U/api/jobs/probe/report.xml")" = 200 ] && break
	sleep 0.2
done
check "serve made the report, with its profile" grep -q '<profile ' "$work/page-report.xml"
args=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/chrome" --enable-logging=stderr
	--v=0 --virtual-time-budget=10000 --window-size=1400,4000)
timeout 120 "$CHROMIUM" "${args[@]}" --dump-dom "$U/?token=$TOK#/job/probe" >"$work/page.html" 2>"$work/page.err"
shots="$top_builddir/tests/manager"
timeout 120 "$CHROMIUM" "${args[@]}" --screenshot="$shots/profile-page.png" "$U/?token=$TOK#/job/probe" \
	>/dev/null 2>&1
dom() { python3 "$top_srcdir/tests/manager/serve_dom.py" "$@"; }
check "page: loaded, no error shown" dom "$work/page.html" ready
check "page: no console message" bash -c "! grep -q CONSOLE '$work/page.err'"
n=$(dom "$work/page.html" report "$work/page-report.xml")
check "page: every figure is report --xml's ($n)" [ "${n:-0}" -ge 30 ]
nprof=$(grep -o 'data-x="/report/profile/[^"]*"' "$work/page.html" | wc -l)
check "page: the profile's figures among them ($nprof)" [ "$nprof" -ge 60 ]
for id in prof-ranks prof-calls prof-matrix prof-sizes prof-files; do
	check "page: $id drawn" grep -q "id=\"$id\"" "$work/page.html"
done
check "page: a bar per rank and class (6)" [ "$(grep -o 'data-x="/report/profile/rank\[[12]\]/@\(mpi\|io\|compute\)_ns"' "$work/page.html" | sort -u | wc -l)" = 6 ]
check "page: the matrix's two cells" [ "$(grep -o 'data-x="/report/profile/messages\[[0-9]*\]/@bytes"' "$work/page.html" | wc -l)" = 2 ]
check "page: the four size bins" [ "$(grep -o 'data-x="/report/profile/size_bin\[[0-9]*\]/@count"' "$work/page.html" | wc -l)" = 4 ]
echo "screenshot: $shots/profile-page.png"
exit $fail
