#!/usr/bin/env bash
# tests/manager/test_serve.sh - `tapestry serve`'s HTTP API against a real job
# directory (`tapestry run` of deploy/examples/iodemo.c), a live tree of real
# collectors and a real launch; then hostile HTTP input (traversal, links,
# oversized headers and bodies, bad methods, missing CSRF header, wrong Host,
# slow and idle clients): the server answers each with its status and keeps
# serving the others. The pages in a browser: test_serve_browser.sh.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
command -v curl >/dev/null || { echo "no curl"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve.XXXXXX)
tag="ts$$"
. "$top_srcdir/tests/manager/lib.sh"

# start_serve OUT ARGS...: tapestry serve on a free loopback port; sets U, SP
# and TOK (the token in the URL it prints)
start_serve() {
	local out=$1
	shift
	"$T" serve --listen 127.0.0.1:0 "$@" >"$out" 2>"$out.err" & SP=$!
	pids+=($SP)
	for _ in $(seq 50); do grep -q serving "$out" && break; sleep 0.1; done
	U=$(sed -n 's|^tapestry: serving \(https\{0,1\}://[^ /]*\)/.*|\1|p' "$out")
	TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$out")
}
# every curl of this script presents the token (as a script would)
curl() { command curl -H "Authorization: Bearer ${TOK:-}" "$@"; }
# code URL [CURL ARGS]: the HTTP status only
code() { curl -s --path-as-is -o /dev/null -w '%{http_code}' "$@"; }
# code0: the same without the token
code0() { command curl -s --path-as-is -o /dev/null -w '%{http_code}' "$@"; }
# poll URL OUT: GET until the answer is not 202 (60 s at most); a 409 (not
# made, and a GET starts no work) POSTs the URL it names once; prints the status
poll() {
	local c posted=
	for _ in $(seq 300); do
		c=$(curl -s -o "$2" -w '%{http_code}' "$1")
		if [ "$c" = 409 ] && [ -z "$posted" ]; then
			posted=1
			curl -s -o /dev/null -X POST -H 'X-Tapestry: 1' "$U$(json "$2" 'd["build"]')"
			continue
		fi
		[ "$c" != 202 ] && { echo "$c"; return; }
		sleep 0.2
	done
	echo timeout
}
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# 0. a job, descriptions, and the program they launch
serve_job
check "tapestry run made the job" [ -d "$work/jobs/run1/segments" ]
io_xml "$tag" 1 "$work/descs/io.xml"
cp "$top_srcdir/tests/manager/launch_bad/cycle.xml" "$work/descs/bad.xml"

# 1. options
"$T" serve --listen 0.0.0.0:0 --no-token --jobs "$work/jobs" 2>"$work/e1"
check "a non-loopback --listen with --no-token is refused (exit 2)" [ $? = 2 ]
check "  ...saying why" grep -q "not a loopback address" "$work/e1"
"$T" serve --listen nonsense 2>/dev/null
check "a bad --listen is a usage error" [ $? = 2 ]
"$T" serve --jobs "$work/none" 2>/dev/null
check "a missing --jobs is a usage error" [ $? = 2 ]

# 2. the job browser
start_serve "$work/serve.out" --jobs "$work/jobs" --descriptions "$work/descs"
check "serve prints its address" [ -n "$U" ]
check "  ...with a token made at start (?token=, 48 hex digits)" grep -Eq '^tapestry: serving http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{48} \(jobs' "$work/serve.out"
check "  ...which every route wants (401 without)" [ "$(code0 "$U/")$(code0 "$U/api/jobs")$(code0 "$U/app.js")" = 401401401 ]
check "the page is served" grep -q '<script src="/app.js"' <(curl -s "$U/")
check "its script and sheet too" [ "$(code "$U/app.js")$(code "$U/style.css")" = 200200 ]
curl -s "$U/api/jobs" >"$work/jobs.json"
check "the job list names run1" [ "$(json "$work/jobs.json" 'd["jobs"][0]["name"]')" = run1 ]
check "report.xml is served (after 202s)" [ "$(poll "$U/api/jobs/run1/report.xml" "$work/got.xml")" = 200 ]
check "  ...and is exactly tapestry report --xml" cmp "$work/report.xml" "$work/got.xml"
check "  ...the quick one made first is exactly tapestry report --xml --quick" \
	cmp <("$T" report --xml --quick "$jobs/run1") "$jobs/run1/.tapestry-serve/report-quick.xml"
check "report-quick.xml once the report is made: the report" \
	[ "$(poll "$U/api/jobs/run1/report-quick.xml" "$work/gotq.xml")" = 200 ]
check "  ...byte for byte" cmp "$work/report.xml" "$work/gotq.xml"
curl -s "$U/api/jobs" >"$work/jobs.json"
ev=$(python3 -c "import xml.etree.ElementTree as E; print(E.parse('$work/report.xml').getroot().get('events'))")
check "the list's events equal the report's ($ev)" [ "$(json "$work/jobs.json" 'd["jobs"][0]["events"]')" = "$ev" ]
check "the list names the application" grep -q '"application":"[^"]*iodemo"' "$work/jobs.json"

# a job directory the report cannot read: 500 with the report's message
mkdir -p "$work/jobs/broken"	# an index but no segments: not readable
printf 'not an index' >"$work/jobs/broken/index"
c=$(poll "$U/api/jobs/broken/report.xml" "$work/broken.json")
check "a report that fails: 500 ($c)" [ "$c" = 500 ]
check "  ...with the child's message" grep -q "the job's report and index failed (exit 1; POST /api/jobs/broken/build tries again): tapestry: " "$work/broken.json"
check "  ...and the list says failed" grep -q '"name":"broken",[^}]*"report":"failed"' <(curl -s "$U/api/jobs")
check "HEAD of the list: 200, no body" [ "$(curl -s -I -o /dev/null -w '%{http_code} %{size_download}' "$U/api/jobs")" = "200 0" ]
rm -rf "$work/jobs/broken"

# the list's columns from a quick report (one read, no post-processing),
# and a job still written marked running
timeout 60 "$T" run -o "$work/jobs/q1" -- /bin/ls / >/dev/null 2>&1
check "a job never viewed: no figures in the list" \
	[ "$(curl -s "$U/api/jobs/q1" >"$work/q1.json"; json "$work/q1.json" 'd["job"]["figures"]')" = None ]
for _ in $(seq 300); do
	c=$(code -X POST -H 'X-Tapestry: 1' "$U/api/jobs/q1/quick")
	[ "$c" != 202 ] && break
	sleep 0.2
done
check "POST quick: its quick report made (200: $c)" [ "$c" = 200 ]
curl -s "$U/api/jobs" >"$work/jobsq.json"
qrow() { json "$work/jobsq.json" "[j$1 for j in d['jobs'] if j['name'] == 'q1'][0]"; }
"$T" report --xml --quick "$jobs/q1" >"$work/q1quick.xml"
qev=$(python3 -c "import xml.etree.ElementTree as E; r=E.parse('$work/q1quick.xml').getroot(); print(r.get('events'), r.get('streams'), r.get('lost_events'))")
check "  ...the list's events, streams, losses are the quick report's ($qev)" \
	[ "$(qrow '["events"]') $(qrow '["streams"]') $(qrow '["lost_events"]')" = "$qev" ]
check "  ...said to come from it, the application named" [ "$(qrow '["figures"]') $(qrow '["application"]')" = "quick /usr/bin/ls" ]
check "  ...without the full report (none made)" [ "$(qrow '["report"]')" = none -a ! -e "$jobs/q1/.tapestry-serve/report.xml" ]
check "  ...and not running" [ "$(qrow '["running"]')" = False ]
rm -rf "$work/jobs/q1"

# 3. the timeline
check "timeline answers (after indexing)" [ "$(poll "$U/api/jobs/run1/timeline?w=800" "$work/tl.json")" = 200 ]
# the timeline draws records; the report counts calls (a stdio run is one
# record of count= calls): the records are the CSV's lines
"$T" export -f csv -o "$work/run1.csv" "$jobs/run1" 2>/dev/null
want=$(python3 - "$work/run1.csv" <<'EOF'
import csv, sys
tracer = {"proc_start", "thread_start", "flush", "send_batch", "drop", "calibration", "signal"}
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["event"] not in tracer))
EOF
)
check "timeline holds every program record of the export ($want)" \
	[ "$(json "$work/tl.json" 'd["events"]')" = "$want" ]
check "  ...in its lanes" [ "$(json "$work/tl.json" 'sum(l["count"] for l in d["lanes"])')" = "$want" ]
curl -s "$U/api/jobs/run1/timeline?w=10" >"$work/tl10.json"
check "at 10 pixels the busy lanes are summarised per pixel" \
	[ "$(json "$work/tl10.json" 'sum(l["mode"]=="pixels" for l in d["lanes"])')" -ge 1 ]
check "  ...and the pixels count every event of their lane" \
	[ "$(json "$work/tl10.json" 'all(sum(l["pc"])==l["count"] for l in d["lanes"] if l["mode"]=="pixels")')" = True ]
# the events an answer holds, drawn one by one or counted in pixels (a lane
# summarised in the whole view can be drawn one by one when zoomed)
held='sum(len(l["ev"]) if l["mode"]=="events" else sum(l["pc"]) for l in d["lanes"])'
read -r t0 t1 n_all <<<"$(json "$work/tl.json" '"%d %d %d" % (d["tmin"], d["tmin"] + (d["tmax"]-d["tmin"])//50, '"$held"')')"
curl -s "$U/api/jobs/run1/timeline?w=800&t0=$t0&t1=$t1" >"$work/tlz.json"
check "a zoomed window answers that window" [ "$(json "$work/tlz.json" '"%d %d" % (d["t0"], d["t1"])')" = "$t0 $t1" ]
check "  ...with fewer events" [ "$(json "$work/tlz.json" "$held")" -lt "$n_all" ]
curl -s "$U/api/jobs/run1/event?i=0" >"$work/ev0.json"
check "an event's details" [ -n "$(json "$work/ev0.json" 'd["name"]')" ]
check "an event out of range is 400" [ "$(code "$U/api/jobs/run1/event?i=99999999")" = 400 ]
check "w out of range is 400" [ "$(code "$U/api/jobs/run1/timeline?w=99999")" = 400 ]

# 4. exports: made from the page's API, listed, downloaded
check "an export starts (202)" [ "$(code -X POST -H 'X-Tapestry: 1' "$U/api/jobs/run1/export?format=csv")" = 202 ]
for _ in $(seq 100); do
	curl -s "$U/api/jobs/run1" >"$work/job.json"
	[ "$(json "$work/job.json" '[e["state"] for e in d["exports"] if e["format"]=="csv"][0]')" = ready ] && break
	sleep 0.2
done
check "  ...and is listed ready" grep -q '"format":"csv","name":"trace.csv","state":"ready"' "$work/job.json"
curl -s -o "$work/dl.csv" "$U/api/jobs/run1/files/trace.csv"
check "  ...and downloads byte for byte" cmp "$work/dl.csv" "$jobs/run1/trace.csv"
check "an unknown export format is 400" [ "$(code -X POST -H 'X-Tapestry: 1' "$U/api/jobs/run1/export?format=nope")" = 400 ]

# 5. descriptions, plan, launch
curl -s "$U/api/descriptions" >"$work/d.json"
check "descriptions listed" [ "$(json "$work/d.json" 'sorted(x["name"] for x in d["descriptions"])')" = "['bad.xml', 'io.xml']" ]
check "upload is off by default (403)" [ "$(code -X POST -H 'X-Tapestry: 1' --data-binary @"$work/descs/io.xml" "$U/api/descriptions?name=new.xml")" = 403 ]
code -X POST -H "X-Tapestry: 1" "$U/api/descriptions/io.xml/plan" >/dev/null
check "plan of io.xml answers" [ "$(poll "$U/api/descriptions/io.xml/plan" "$work/plan.json")" = 200 ]
check "  ...valid, with the collector plan" [ "$(json "$work/plan.json" '"%d %d" % (d["exit"], "collectors.plan" in d["files"])')" = "0 1" ]
code -X POST -H "X-Tapestry: 1" "$U/api/descriptions/bad.xml/plan" >/dev/null
poll "$U/api/descriptions/bad.xml/plan" "$work/badplan.json" >/dev/null
check "plan of a bad description: exit 1 with FILE:LINE" \
	[ "$(json "$work/badplan.json" '"%d %s" % (d["exit"], ".xml:" in d["output"])')" = "1 True" ]
curl -s -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/io.xml/launch" >"$work/launch.json"
lid=$(json "$work/launch.json" 'd["id"]')
ljob=$(json "$work/launch.json" 'd["job"]')
seen_root=
for _ in $(seq 600); do
	curl -s "$U/api/launches/$lid" >"$work/l.json"
	[ -z "$seen_root" ] && [ "$(json "$work/l.json" 'd["root"] is not None')" = True ] && seen_root=1
	[ "$(json "$work/l.json" 'd["state"]')" = done ] && break
	kill -0 "$SP" || break
	sleep 0.2
done
check "the launch ends with exit 0" [ "$(json "$work/l.json" 'd["exit"]')" = 0 ]
check "  ...its output is followed" grep -q "root receiver at" <(json "$work/l.json" 'd["output"]')
check "  ...its root was seen while it ran" [ -n "$seen_root" ]
check "  ...its job is listed" grep -q "\"name\":\"$ljob\"" <(curl -s "$U/api/jobs")
check "  ...with a report" [ "$(poll "$U/api/jobs/$ljob/report.xml" "$work/l.xml")" = 200 ]
check "an unknown launch is 404" [ "$(code "$U/api/launches/999")" = 404 ]
# a launch that runs 5 s: its tree polled with its own job's secret while
# it runs (the nodes answer only to it), no connection refused, and no
# longer polled once it ended
cat >"$work/descs/sleep.xml" <<EOF
<?xml version="1.0"?>
<job name="sleep">
  <hosts><host name="localhost" address="127.0.0.1" slots="1"/></hosts>
  <collectors><collector name="$tag-sgw" host="localhost"/></collectors>
  <application executable="/bin/sleep" processes="1"><argument>5</argument></application>
</job>
EOF
curl -s -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/sleep.xml/launch" >"$work/launch2.json"
lid=$(json "$work/launch2.json" 'd["id"]')
sjob=$(json "$work/launch2.json" 'd["job"]')
tree_nodes=0
for _ in $(seq 600); do
	curl -s "$U/api/launches/$lid" >"$work/l2.json"
	sroot=$(json "$work/l2.json" 'd["root"] or ""')
	# asked again until both collectors show (the tree thread learns the
	# gateway a poll after the root)
	if [ -n "$sroot" ] && [ "${tree_nodes:-0}" -lt 2 ]; then
		curl -s "$U/api/tree" >"$work/tree2.json"
		tree_nodes=$(json "$work/tree2.json" 'len([n for n in d["nodes"] if d["roots"][n["root"]]["addr"] == "'"$sroot"'"])')
	fi
	[ "$(json "$work/l2.json" 'd["state"]')" = done ] && break
	sleep 0.2
done
check "a launch's live tree shows its collectors while it runs ($tree_nodes)" [ "${tree_nodes:-0}" -ge 2 ]
check "  ...the launch ends with exit 0" [ "$(json "$work/l2.json" 'd["exit"]')" = 0 ]
poll "$U/api/jobs/$sjob/report.xml" "$work/l2.xml" >/dev/null
check "  ...and no connection was refused by its collectors (its own secret)" \
	grep -q 'rejected_connections="0"' "$work/l2.xml"
curl -s "$U/api/tree" >"$work/tree3.json"
check "  ...once ended, its tree is no longer asked" \
	[ "$(json "$work/tree3.json" '[r["ended"] and r["error"] for r in d["roots"] if r["addr"] == "'"$sroot"'"][0]')" = "the launch ended: no longer asked" ]

# 6. the live tree: a root and a child collector
"$C" --listen 127.0.0.1:0 --print-port --output "$work/job-tree" --stats-period 200ms \
	--name "$tag-root" >"$work/root.port" 2>/dev/null & rootpid=$!
pids+=($rootpid)
for _ in $(seq 50); do grep -q listening "$work/root.port" && break; sleep 0.1; done
raddr=$(awk '{print $2}' "$work/root.port")
"$C" --listen 127.0.0.1:0 --print-port --parent "$raddr" --stats-period 200ms \
	--clock-period 300ms --name "$tag-leaf" >"$work/leaf.port" 2>/dev/null & leafpid=$!
pids+=($leafpid)
start_serve "$work/serve2.out" --jobs "$work/jobs" --descriptions "$work/descs" --collector "$raddr"
U2=$U
for _ in $(seq 100); do
	curl -s "$U2/api/tree" >"$work/tree.json"
	[ "$(json "$work/tree.json" 'len(d["nodes"])')" -ge 2 ] && break
	sleep 0.2
done
check "the tree shows the root and the leaf" \
	[ "$(json "$work/tree.json" '" ".join(sorted(n["stats"]["name"] for n in d["nodes"]))')" = "$tag-leaf $tag-root" ]
check "  ...the leaf under the root" \
	[ "$(json "$work/tree.json" '[n["stats"].get("parent") for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0] == [n["id"] for n in d["nodes"] if n["stats"]["name"]=="'$tag-root'"][0]')" = True ]
check "  ...fresh, with their figures" \
	[ "$(json "$work/tree.json" 'all(not n["stale"] and "events_per_s" in n["stats"] and "drops" in n["stats"] for n in d["nodes"])')" = True ]
for _ in $(seq 50); do
	[ "$(json "$work/tree.json" '[n["stats"].get("clock_rtt_ns") is not None for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0]')" = True ] && break
	sleep 0.2
	curl -s "$U2/api/tree" >"$work/tree.json"
done
check "  ...the leaf with its clock against the root (offset, round trip)" \
	[ "$(json "$work/tree.json" '[int(n["stats"]["clock_rtt_ns"]) > 0 and "clock_offset_ns" in n["stats"] for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0]')" = True ]
leaf_fit() { json "$work/tree.json" '[n["clock_fit"] for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0]'"$1"; }
for _ in $(seq 100); do
	[ "$(leaf_fit '.get("used", 0) >= 3')" = True ] && break
	sleep 0.2
	curl -s "$U2/api/tree" >"$work/tree.json"
done
check "  ...and the fit of its rounds, as the report makes it: offset, drift, quality" \
	[ "$(leaf_fit '.keys() >= {"rounds", "used", "offset_ns", "offset_ci_ns", "drift_ppm", "drift_ci_ppm", "quality"}')" = True ]
check "  ...one clock on one host: the fitted offset within a millisecond" \
	[ "$(leaf_fit '["offset_ns"] ** 2 < 1e12')" = True ]
# a traced process connected to the leaf: its stream under the leaf
laddr=$(awk '{print $2}' "$work/leaf.port")
LD_PRELOAD="$top_builddir/sensor/.libs/libtapestry-sensor.so" TAPESTRY_COLLECTOR="$laddr" \
	sh -c 'sleep 4' & tpid=$!
pids+=($tpid)
for _ in $(seq 50); do
	curl -s "$U2/api/tree" >"$work/tree.json"
	grep -q ",-1,$tpid," "$work/tree.json" && break
	sleep 0.2
done
check "  ...the leaf lists the stream of a traced process connected to it (pid $tpid)" \
	[ "$(json "$work/tree.json" '[",-1,'$tpid'," in n["stats"].get("stream_list", "") for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0]')" = True ]
wait "$tpid"
kill "$leafpid"; wait "$leafpid" 2>/dev/null
for _ in $(seq 100); do
	curl -s "$U2/api/tree" >"$work/tree.json"
	[ "$(json "$work/tree.json" '[n["stale"] for n in d["nodes"] if n["stats"]["name"]=="'$tag-leaf'"][0]')" = True ] && break
	sleep 0.2
done
check "a collector that stops reporting turns stale" \
	[ "$(json "$work/tree.json" '" ".join(str(n["stale"]) for n in sorted(d["nodes"], key=lambda n: n["stats"]["name"]))')" = "True False" ]

# 7. hostile input: each refused with its status, the server stays up
ln -s /etc "$work/jobs/link"
ln -s /etc/passwd "$jobs/run1/trace.moca"
for p in "/../etc/passwd" "/api/jobs/..%2F..%2Fetc/report.xml" "/api/jobs/run1/files/..%2F..%2F..%2Fetc%2Fpasswd" \
	"/api/jobs/run1/files/trace.csv/../../../etc/passwd" "/api/jobs/%2e%2e/report.xml" "/api/jobs/.tapestry-serve" \
	"/api/jobs/run1//files/trace.csv" "/api/descriptions/..%2Fio.xml/plan"; do
	c=$(code "$U$p")
	check "GET $p refused ($c)" [ "$c" = 400 ]
done
check "a linked job directory is not a job (404)" [ "$(code "$U/api/jobs/link")" = 404 ]
check "  ...nor in the list" [ "$(curl -s "$U/api/jobs" | grep -c '"name":"link"')" = 0 ]
check "a linked export file is refused (403)" [ "$(code "$U/api/jobs/run1/files/trace.moca")" = 403 ]
check "a file that is not an export is 404" [ "$(code "$U/api/jobs/run1/files/meta.xml")" = 404 ]
check "the report cache is not a download (400)" [ "$(code "$U/api/jobs/run1/files/.tapestry-serve/report.xml")" = 400 ]
check "headers over 8 KiB: 400/431" grep -qE '^(400|431)$' <(code -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" "$U/api/jobs")
head -c 2000000 /dev/zero >"$work/big"
check "a body over 1 MiB: 413" [ "$(code -X POST -H 'X-Tapestry: 1' --data-binary @"$work/big" "$U/api/descriptions?name=x.xml")" = 413 ]
check "DELETE is not served (501)" [ "$(code -X DELETE "$U/api/jobs")" = 501 ]
check "POST without X-Tapestry: 403" [ "$(code -X POST "$U/api/jobs/run1/export?format=csv")" = 403 ]
check "POST where none is taken: 405" [ "$(code -X POST -H 'X-Tapestry: 1' "$U/api/jobs")" = 405 ]
check "an unknown page: 404" [ "$(code "$U/nope.html")" = 404 ]
port=${U##*:}
# slow clients: 40 idle connections and one sending its request byte by byte
fds=()
for _ in $(seq 40); do exec {fd}<>"/dev/tcp/127.0.0.1/$port"; fds+=("$fd"); done
( exec 3<>"/dev/tcp/127.0.0.1/$port"; for c in G E T ' ' /; do printf %s "$c" >&3; sleep 1; done ) & slow=$!
pids+=($slow)
check "served while 40 idle and one slow client hold connections" [ "$(code "$U/api/jobs")" = 200 ]
printf 'GARBAGE\r\n\r\n' | timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3" >"$work/garbage.out"
check "a garbage request line: 400" grep -q "^HTTP/1.1 400" "$work/garbage.out"
for fd in "${fds[@]}"; do exec {fd}>&-; done
kill "$slow" 2>/dev/null; wait "$slow" 2>/dev/null
check "the server is still up" kill -0 "$SP"
check "  ...and serving" [ "$(code "$U/api/jobs")" = 200 ]

# 8. a token of --secret-file: every request presents it
printf 'tok-%s\n' "$tag" >"$work/token"
start_serve "$work/serve3.out" --jobs "$work/jobs" --descriptions "$work/descs" --secret-file "$work/token"
check "--secret-file's token is the one in the URL printed" [ "$TOK" = "tok-$tag" ]
check "without the token: 401" [ "$(code0 "$U/api/jobs")" = 401 ]
check "a wrong token: 401" [ "$(code0 -H "Authorization: Bearer nope" "$U/api/jobs")" = 401 ]
check "a token one byte short: 401" [ "$(code0 -H "Authorization: Bearer tok-${tag%?}" "$U/api/jobs")" = 401 ]
check "Authorization: Bearer TOKEN: 200" [ "$(code0 -H "Authorization: Bearer tok-$tag" "$U/api/jobs")" = 200 ]
check "/login with a wrong token: 401" [ "$(code0 "$U/login?token=nope")" = 401 ]
command curl -s -c "$work/cookies" -o /dev/null "$U/login?token=tok-$tag"
check "/login sets the cookie, which then works" [ "$(code0 -b "$work/cookies" "$U/api/jobs")" = 200 ]
command curl -s -D "$work/visit.h" -c "$work/cookies2" -o /dev/null "$U/?token=tok-$tag"
check "the URL printed (/?token=) answers 303 to / (the token out of the address)" \
	grep -q '^Location: /\s*$' "$work/visit.h"
check "  ...with the cookie HttpOnly, SameSite=Strict" \
	grep -qi "^Set-Cookie: tapestry_token=tok-$tag; HttpOnly; SameSite=Strict; Path=/" "$work/visit.h"
check "  ...which then opens the page" [ "$(code0 -b "$work/cookies2" "$U/")" = 200 ]
check "a wrong cookie: 401" [ "$(code0 -b "tapestry_token=tok-x$tag" "$U/api/jobs")" = 401 ]
check "?token= on an API URL (scripts): 200" [ "$(code0 "$U/api/jobs?token=tok-$tag")" = 200 ]
"$T" serve --listen 127.0.0.1:0 --secret-file "$work/token" --no-token 2>"$work/e2"
check "--secret-file with --no-token: usage error" [ $? = 2 ]

exit $fail
