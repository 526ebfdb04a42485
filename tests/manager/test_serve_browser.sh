#!/usr/bin/env bash
# tests/manager/test_serve_browser.sh - `tapestry serve`'s pages in headless
# Chromium (Debian's chromium, --dump-dom and --screenshot): each page loads
# with no console message and no error shown; the job page's figures are
# exactly those of `tapestry report --xml`; the timeline shows the window a
# zoom asks for, with fewer events; the timeline as an analysis tool against
# the job's events one by one (serve_timeline.py): helper threads folded,
# calls named, tick labels distinct at every zoom, a selection's profile, a
# search by call name; the live tree shows real collectors; the
# launch page shows the plan, and a click on Launch (through the DevTools
# protocol, serve_cdp.py) lands on the new job's page with no error; the
# launch form shows a bad process count and an unknown host on their
# fields, then saves 2 processes as a new description whose plan is shown
# and whose launch runs 2 processes. Screenshots are kept in
# $top_builddir/tests/manager/serve-*.png. Skips (77) without chromium.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || { echo "no chromium: skip"; exit 77; }
command -v curl >/dev/null || { echo "no curl: skip"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve-browser.XXXXXX)
shots="$top_builddir/tests/manager"
mkdir -p "$shots"
tag="tb$$"
. "$top_srcdir/tests/manager/lib.sh"
dom() { python3 "$top_srcdir/tests/manager/serve_dom.py" "$@"; }
tl() { python3 "$top_srcdir/tests/manager/serve_timeline.py" "$@"; }

# page NAME HASH HEIGHT: dump the page's DOM (and its console) into
# $work/NAME.html (.console), and a screenshot into $shots/serve-NAME.png
page() {
	local args=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/chrome"
		--enable-logging=stderr --v=0 --virtual-time-budget=10000 --window-size="1400,$3")
	# the URL serve printed (?token=): the cookie, then the page without it
	timeout 120 "$CHROMIUM" "${args[@]}" --dump-dom "$U/?token=$TOK$2" >"$work/$1.html" 2>"$work/$1.err"
	grep 'CONSOLE' "$work/$1.err" >"$work/$1.console"
	timeout 120 "$CHROMIUM" "${args[@]}" --screenshot="$shots/serve-$1.png" "$U/?token=$TOK$2" \
		>/dev/null 2>&1
	check "$1: no console message" [ ! -s "$work/$1.console" ]
	[ -s "$work/$1.console" ] && head -5 "$work/$1.console"
	check "$1: loaded, no error shown" dom "$work/$1.html" ready
}

# a job, a description, a tree of two real collectors
serve_job
cat >"$work/descs/io.xml" <<EOF
<?xml version="1.0"?>
<job name="io">
  <hosts><host name="localhost" address="127.0.0.1" slots="2"/></hosts>
  <collectors><collector name="$tag-gw" host="localhost"/></collectors>
  <application executable="iodemo" processes="1" workdir="io"><argument>.</argument></application>
</job>
EOF
"$C" --listen 127.0.0.1:0 --print-port --output "$work/job-tree" --stats-period 200ms \
	--name "$tag-root" >"$work/root.port" 2>/dev/null & pids+=($!)
for _ in $(seq 50); do grep -q listening "$work/root.port" && break; sleep 0.1; done
raddr=$(awk '{print $2}' "$work/root.port")
"$C" --listen 127.0.0.1:0 --print-port --parent "$raddr" --stats-period 200ms \
	--name "$tag-leaf" >/dev/null 2>&1 & pids+=($!)
"$T" serve --listen 127.0.0.1:0 --jobs "$work/jobs" --descriptions "$work/descs" \
	--collector "$raddr" >"$work/serve.out" 2>"$work/serve.err" & SP=$!
pids+=($SP)
for _ in $(seq 50); do grep -q serving "$work/serve.out" && break; sleep 0.1; done
U=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/serve.out")
TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$work/serve.out")
# the script's own requests present the token as a script would
curl() { command curl -H "Authorization: Bearer $TOK" "$@"; }
# the report and the index made once, as for a user who looked before
# (a POST: a GET starts no work)
curl -s -o /dev/null -X POST -H 'X-Tapestry: 1' "$U/api/jobs/run1/build"
for p in report.xml timeline; do
	for _ in $(seq 300); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/jobs/run1/$p")" = 200 ] && break
		sleep 0.2
	done
done

page jobs "#/jobs" 600
check "jobs: run1 listed with the report's event count" \
	grep -q "data-k=\"events\">$(python3 -c "import xml.etree.ElementTree as E; print(E.parse('$work/report.xml').getroot().get('events'))")<" "$work/jobs.html"

check "jobs: run1's duration is its report's span" grep -q 'data-k="duration" data-of="span"' "$work/jobs.html"

page job "#/job/run1" 3000
n=$(dom "$work/job.html" report "$work/report.xml")
check "job: every figure equals tapestry report --xml ($n figures)" [ "${n:-0}" -ge 30 ]
lanes=$(dom "$work/job.html" attr tl-status data-lanes)
shown=$(dom "$work/job.html" attr tl-status data-shown)
check "job: helper threads folded under their process ($shown of $lanes lanes shown)" \
	[ "${shown:-0}" -ge 1 -a "${shown:-99}" -lt "$lanes" ]
# every lane unfolded: the writer threads' events drawn
page jobopen "#/job/run1?unfold=all" 1000
drawn=$(dom "$work/jobopen.html" attr tl-status data-drawn)
check "job: the timeline is drawn ($lanes lanes, $drawn events)" [ "${lanes:-0}" -ge 2 -a "${drawn:-0}" -ge 100 ]
check "unfold=all: every lane shown" [ "$(dom "$work/jobopen.html" attr tl-status data-shown)" = "$lanes" ]

# a window of 1/50 of the job around the busiest lane's middle event
read -r z0 z1 zs <<<"$(curl -s "$U/api/jobs/run1/timeline?w=1200" | python3 -c '
import json, sys
d = json.load(sys.stdin)
l = max(d["lanes"], key=lambda l: len(l.get("ev", [])))
s = l["ev"][len(l["ev"]) // 2][1]
w = (d["tmax"] - d["tmin"]) // 50
print(max(d["tmin"], s - w // 2), max(d["tmin"], s - w // 2) + w, s)')"
page zoom "#/job/run1?t0=$z0&t1=$z1&unfold=all" 1400
check "zoom: the timeline shows the window asked for" \
	[ "$(dom "$work/zoom.html" attr tl-status data-t0) $(dom "$work/zoom.html" attr tl-status data-t1)" = "$z0 $z1" ]
zd=$(dom "$work/zoom.html" attr tl-status data-drawn)
check "zoom: fewer events drawn, not none (0 < $zd < $drawn)" [ "${zd:-0}" -gt 0 -a "${zd:-999999}" -lt "$drawn" ]

# the timeline as an analysis tool (issue 29 item 4), against the job's
# events one by one (the whole job at 4096 pixels: every lane event by event)
curl -s "$U/api/jobs/run1/timeline?w=4096" >"$work/events.json"
check "job: the legend names the kinds of call" grep -q 'MPI collective.*MPI wait.*I/O and libc.*computation' "$work/job.html"
# 20 us around that event: calls of a few us wide enough for their names
page named "#/job/run1?t0=$((zs - 5000))&t1=$((zs + 15000))&unfold=all" 900
check "20 us window: calls named in their slices ($(dom "$work/named.html" attr tl-status data-named))" \
	[ "$(dom "$work/named.html" attr tl-status data-named)" -gt 0 ]
check "job: tick labels distinct ($(tl "$work/job.html" "$work/events.json" ticks))" \
	tl "$work/job.html" "$work/events.json" ticks
# a 3 ms and a 100 us window from the same place: distinct labels, not the same
page ticks3ms "#/job/run1?t0=$z0&t1=$((z0 + 3000000))&unfold=all" 900
page ticks100us "#/job/run1?t0=$z0&t1=$((z0 + 100000))&unfold=all" 900
a=$(tl "$work/ticks3ms.html" "$work/events.json" ticks) b=$(tl "$work/ticks100us.html" "$work/events.json" ticks)
check "3 ms window: tick labels distinct ($a)" [ -n "$a" ]
check "100 us window: tick labels distinct ($b)" [ -n "$b" ]
check "  ...and not those of the 3 ms window" [ -n "$a" -a -n "$b" -a "$a" != "$b" ]
# a selection: its profile per call equals the sums over its events, cut
# at its edges; the whole job's too
page range "#/job/run1?t0=$z0&t1=$z1&s0=$((z0 + (z1 - z0) / 4))&s1=$((z1 - (z1 - z0) / 4))" 1400
check "range: the selection's profile ($(tl "$work/range.html" "$work/events.json" range))" \
	tl "$work/range.html" "$work/events.json" range
page rangeall "#/job/run1?s0=0&s1=999999999999" 1400
check "range: the whole job's profile ($(tl "$work/rangeall.html" "$work/events.json" range))" \
	tl "$work/rangeall.html" "$work/events.json" range
# a search: the first call by time whose name holds "fprint", then none
page find "#/job/run1?find=FPRINT" 1400
check "find: lands on the first fprintf ($(tl "$work/find.html" "$work/events.json" find fprint))" \
	tl "$work/find.html" "$work/events.json" find fprint
check "  ...its details shown" [ "$(dom "$work/find.html" attr tl-detail data-name)" = fprintf ]
page nofind "#/job/run1?find=MPI_Nosuchcall" 900
check "find: a name no call has says so" grep -q 'no call matches "MPI_Nosuchcall"' "$work/nofind.html"
check "find: a name that is not one is refused (400)" \
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/jobs/run1/find?q=a.b")" = 400 ]

for _ in $(seq 50); do
	[ "$(curl -s "$U/api/tree" | grep -o '"stale":false' | wc -l)" -ge 2 ] && break
	sleep 0.2
done
page tree "#/tree" 700
check "tree: both collectors shown, fresh" [ "$(grep -o 'data-stale="false"' "$work/tree.html" | wc -l)" = 2 ]
check "tree: with their names" grep -q "collector $tag-leaf" "$work/tree.html"

page launch "#/launch/io.xml" 1400
check "launch: the plan is shown valid" grep -Eq 'class="ok"[^>]*>the plan is valid' "$work/launch.html"
check "launch: with the collector plan" grep -q "collectors.plan" "$work/launch.html"
check "launch: the form, filled from the description" grep -q 'id="f-np" type="number" min="1" max="65536" value="1"' "$work/launch.html"

# a launch from the page: click, follow, land on the new job's page
job=$(python3 "$top_srcdir/tests/manager/serve_cdp.py" "$CHROMIUM" "$U/?token=$TOK#/launch/io.xml" \
	"$shots/serve-launched.png" 180 2>"$work/cdp.err")
check "launch from the page lands on the new job's page ($job)" [ "${job#\#/job/io-}" != "$job" ]
[ -s "$work/cdp.err" ] && cat "$work/cdp.err"
job=${job%%\?*}	# the timeline's window, when the page put it in the address
check "  ...a job directory made by that launch" [ -d "$jobs/${job#\#/job/}/segments" ]

# the launch form: a bad count and an unknown host shown on their fields,
# then 2 processes saved as a new description, planned, launched
cp "$work/descs/io.xml" "$work/io.orig"
job=$(python3 "$top_srcdir/tests/manager/serve_cdp.py" "$CHROMIUM" "$U/?token=$TOK#/launch/io.xml" \
	"$shots/serve-launched2.png" 180 form 2>"$work/cdp2.err")
check "the form: errors on their fields, then the copy planned and launched ($job)" \
	[ "${job#\#/job/io-edit-1-}" != "$job" ]
[ -s "$work/cdp2.err" ] && cat "$work/cdp2.err"
check "  ...saved as io-edit-1.xml with 2 processes" grep -q 'processes="2"' "$work/descs/io-edit-1.xml"
check "  ...only that copy: no file of the refused tries, the original unchanged" \
	[ "$(ls "$work/descs" | grep -c '\.xml$')" = 2 -a "$(cmp "$work/io.orig" "$work/descs/io.xml" && echo same)" = same ]
n=$("$T" report --xml --quick "$jobs/${job#\#/job/}" 2>/dev/null | python3 -c '
import sys, xml.etree.ElementTree as E
print(len({s.get("pid") for s in E.parse(sys.stdin).getroot().iter("stream") if s.get("exe", "").endswith("/iodemo")}))')
check "  ...its job ran 2 processes, each with the child it forks ($n pids of iodemo)" [ "$n" = 4 ]

echo "screenshots: $shots/serve-*.png"
exit $fail
