#!/usr/bin/env bash
# tests/manager/test_serve_launch.sh - `tapestry serve`'s launch form
# through its API, as the page uses it (the token, POST with X-Tapestry):
# a description's fields read; an edited copy saved as a new description
# (the original never changed), planned and launched; each bad value
# refused naming its field, nothing saved; copies only of descriptions the
# owner may launch, only by the owner. A FIFO where a description is
# expected is refused, not waited on. The job list's duration from what
# is cheap (the segments), the report's span once made, a running job's
# growing.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
command -v curl >/dev/null || { echo "no curl"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve-launch.XXXXXX)
tag="tl$$"
. "$top_srcdir/tests/manager/lib.sh"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

mkdir -p "$work/jobs" "$work/descs"
jobs=$(realpath "$work/jobs")
io_xml "$tag" 1 "$work/descs/io.xml"
sed -i 's|<argument>.</argument>|<argument>.</argument>\n    <environment name="TL" value="1"/>|' "$work/descs/io.xml"
cp "$work/descs/io.xml" "$work/io.orig"
printf '<?xml version="1.0"?>\n<job name="b">\n  <hosts>\n    <host name="a"\n</job>\n' >"$work/descs/bad.xml"
printf '<?xml version="1.0"?>\n<!DOCTYPE job [<!ENTITY e "x">]>\n<job name="d"><hosts/><application executable="&e;" processes="1"/></job>\n' >"$work/descs/dtd.xml"
cp "$work/descs/io.xml" "$work/descs/shared.xml"
chmod g+w "$work/descs/shared.xml"
mkfifo "$work/descs/fifo.xml"

"$T" serve --listen 127.0.0.1:0 --jobs "$work/jobs" --descriptions "$work/descs" >"$work/o" 2>"$work/e" & SP=$!
pids+=($SP)
for _ in $(seq 100); do grep -q serving "$work/o" && break; sleep 0.1; done
U=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/o")
TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$work/o")
curl() { command curl -s --max-time 20 -H "Authorization: Bearer $TOK" "$@"; }
# edit BODY OUT: POST the form to io.xml's edit (or $EDIT); prints the status
edit() { curl -o "$2" -w '%{http_code}' -X POST -H 'X-Tapestry: 1' --data "$1" "$U/api/descriptions/${EDIT:-io.xml}/edit"; }
nxml() { ls "$work/descs" | grep -c '\.xml$'; }

# 1. a FIFO where a description is expected: refused at once, the server serves on
c=$(curl -o "$work/fifo.json" -w '%{http_code}' "$U/api/descriptions/fifo.xml")
check "a FIFO as a description: 403, not waited on ($c)" [ "$c" = 403 ]
check "  ...saying why" grep -q 'not a regular file' "$work/fifo.json"
check "  ...its plan refused too" [ "$(curl -o /dev/null -w '%{http_code}' -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/fifo.xml/plan")" = 403 ]
check "  ...its form too" [ "$(curl -o /dev/null -w '%{http_code}' "$U/api/descriptions/fifo.xml/form")" = 403 ]
check "  ...and the server still answers" [ "$(curl -o /dev/null -w '%{http_code}' "$U/api/descriptions")" = 200 ]

# 2. the form's fields
curl "$U/api/descriptions/io.xml/form" >"$work/form.json"
check "the form of io.xml: processes, arguments, host, default sensors, editable" \
	[ "$(json "$work/form.json" '[d["processes"], d["arguments"], [(h["name"], h["address"], h["slots"], h["collector"]) for h in d["hosts"]], d["sensors"], d["editable"]]')" = \
	  "['1', ['.'], [('localhost', '127.0.0.1', 2, True)], ['libc', 'mem'], True]" ]
c=$(curl -o "$work/bad.json" -w '%{http_code}' "$U/api/descriptions/bad.xml/form")
check "a description that is not well-formed: 400 on the field xml ($c)" [ "$c $(json "$work/bad.json" 'd["field"]')" = "400 xml" ]
check "  ...with its line" grep -q '"bad.xml:[0-9]*: not well-formed XML: ' "$work/bad.json"
c=$(curl -o "$work/dtd.json" -w '%{http_code}' "$U/api/descriptions/dtd.xml/form")
check "a description with a DOCTYPE: 400, not edited ($c)" [ "$c" = 400 ]
check "  ...saying so" grep -q DOCTYPE "$work/dtd.json"
check "a description others may write: shown, not editable" \
	[ "$(curl "$U/api/descriptions/shared.xml/form" >"$work/sh.json"; json "$work/sh.json" 'd["editable"]')" = False ]

# 3. bad values: each refused on its field, nothing saved
n0=$(nxml)
while IFS='|' read -r body field words; do
	c=$(edit "$body" "$work/err.json")
	check "edit '$body': 400 on $field ($c: $(json "$work/err.json" 'd["error"]'))" \
		[ "$c $(json "$work/err.json" 'd["field"]')" = "400 $field" ]
	grep -q "$words" "$work/err.json" || check "  ...saying '$words'" false
done <<'EOF'
processes=0|processes|want a whole number from 1 to 65536
processes=-2|processes|want a whole number
processes=2x|processes|want a whole number
processes=65537|processes|want a whole number
processes=|processes|want a whole number
host=ghost,,1|host|unknown host 'ghost': not a host of io.xml
host=ghost,no-such-host.invalid,1|host|unknown host address 'no-such-host.invalid'
host=ghost,-oProxyCommand=x,1|host|not starting with '-'
host=localhost,,many|host|slots 'many'
host=bad name,,1|host|host name
host=localhost|host|NAME,ADDRESS,SLOTS
sensors=1|sensors|at least one sensor
sensors=1&sensor=gpu|sensors|no sensor 'gpu'
arguments=1&arg=a%0Ab|arguments|control character
arguments=1&arg=%FF|arguments|not UTF-8
as=../x.xml|as|want NAME.xml
as=x.txt|as|want NAME.xml
processes=1%002|None|without NUL bytes
EOF
EDIT=bad.xml
check "an edit of a description that is not well-formed: 400 xml" [ "$(edit processes=2 "$work/err.json") $(json "$work/err.json" 'd["field"]')" = "400 xml" ]
EDIT=shared.xml
check "an edit of a description others may write: 403" [ "$(edit processes=2 "$work/err.json")" = 403 ]
check "  ...saying why" grep -q 'others may write it' "$work/err.json"
EDIT=
check "an edit without X-Tapestry: 403" [ "$(curl -o /dev/null -w '%{http_code}' -X POST --data processes=2 "$U/api/descriptions/io.xml/edit")" = 403 ]
check "an edit as a GET: 404" [ "$(curl -o /dev/null -w '%{http_code}' "$U/api/descriptions/io.xml/edit?processes=2")" = 404 ]
check "nothing saved by any of those" [ "$(nxml)" = "$n0" ]
check "  ...the original unchanged" cmp "$work/io.orig" "$work/descs/io.xml"

# 4. a copy saved: the form's values, the rest as written
c=$(edit 'processes=2&arguments=1&arg=.&arg=a+b%26c<d&host=localhost,,3&sensors=1&sensor=libc' "$work/ok.json")
check "an edit: 201, saved as io-edit-1.xml ($c)" [ "$c $(json "$work/ok.json" 'd["name"]')" = "201 io-edit-1.xml" ]
check "  ...the original unchanged" cmp "$work/io.orig" "$work/descs/io.xml"
python3 - "$work/descs/io-edit-1.xml" >"$work/ed1" <<'EOF'
import sys, xml.etree.ElementTree as E
j = E.parse(sys.argv[1]).getroot()
a = j.find('application')
print(a.get('processes'), [x.text for x in a.findall('argument')], [h.get('slots') for h in j.find('hosts')],
      [s.get('name') for s in j.find('sensors')], [e.get('name') for e in a.findall('environment')],
      [c.get('name') for c in j.find('collectors')])
EOF
check "  ...with its processes, arguments, slots, sensors; environment and collectors kept" \
	[ "$(cat "$work/ed1")" = "2 ['.', 'a b&c<d'] ['3'] ['libc'] ['TL'] ['$tag-gw', '$tag-node']" ]
if command -v xmllint >/dev/null; then
	check "  ...valid against the schema" xmllint --noout --relaxng "$top_srcdir/share/jobdesc.rng" "$work/descs/io-edit-1.xml"
fi
check "  ...not writable by others (launchable)" [ "$(stat -c %a "$work/descs/io-edit-1.xml")" = 644 ]
check "a second edit: io-edit-2.xml" [ "$(edit processes=3 "$work/ok2.json") $(json "$work/ok2.json" 'd["name"]')" = "201 io-edit-2.xml" ]
EDIT=io-edit-1.xml
check "an edit of an edit: io-edit-3.xml (not io-edit-1-edit-1)" [ "$(edit processes=1 "$work/ok3.json") $(json "$work/ok3.json" 'd["name"]')" = "201 io-edit-3.xml" ]
EDIT=
cp "$work/descs/io-edit-1.xml" "$work/ed1.copy"
check "save as a name taken: 409" [ "$(edit 'processes=4&as=io-edit-1.xml' "$work/err.json")" = 409 ]
check "  ...the file there unchanged" cmp "$work/ed1.copy" "$work/descs/io-edit-1.xml"
check "save as a free name: 201" [ "$(edit 'processes=1&as=mine.xml' /dev/null)" = 201 -a -f "$work/descs/mine.xml" ]
c=$(edit 'host=extra,127.0.0.1,1' "$work/ok4.json")
check "a new host with its address: 201 ($c)" [ "$c" = 201 ]
new=$(json "$work/ok4.json" 'd["name"]')
check "  ...added with a node collector under the root" \
	grep -q "<collector name=\"node-extra\" host=\"extra\" parent=\"$tag-gw\"/>" "$work/descs/$new"

# 5. the copy planned and launched
curl -o /dev/null -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/io-edit-1.xml/plan"
for _ in $(seq 300); do
	[ "$(curl -o "$work/plan.json" -w '%{http_code}' "$U/api/descriptions/io-edit-1.xml/plan")" = 200 ] && break
	sleep 0.2
done
check "the copy's plan: valid, 3 slots in the host file" \
	[ "$(json "$work/plan.json" '"%d %s" % (d["exit"], "127.0.0.1 slots=3" in d["files"]["hostfile.openmpi"])')" = "0 True" ]
curl -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/io-edit-1.xml/launch" >"$work/launch.json"
lid=$(json "$work/launch.json" 'd["id"]')
ljob=$(json "$work/launch.json" 'd["job"]')
for _ in $(seq 600); do
	curl "$U/api/launches/$lid" >"$work/l.json"
	[ "$(json "$work/l.json" 'd["state"]')" = done ] && break
	sleep 0.2
done
check "the copy launched: exit 0 ($ljob)" [ "$(json "$work/l.json" 'd["exit"]')" = 0 ]
check "  ...its job named after the copy" [ "${ljob#io-edit-1-}" != "$ljob" ]
n=$("$T" report --xml --quick "$jobs/$ljob" 2>/dev/null | python3 -c '
import sys, xml.etree.ElementTree as E
print(len({s.get("pid") for s in E.parse(sys.stdin).getroot().iter("stream") if s.get("exe", "").endswith("/iodemo")}))')
check "  ...2 processes of iodemo ran, each with the child it forks ($n pids)" [ "$n" = 4 ]
check "  ...with the copy's description in its plan" grep -q 'processes="2"' "$jobs/$ljob/plan/job.xml"

# 6. the job list's duration
"$T" run -o "$work/jobs/r1" -- /bin/true >/dev/null 2>&1
curl "$U/api/jobs" >"$work/jobs.json"
row() { json "$work/jobs.json" "[j$2 for j in d['jobs'] if j['name'] == '$1'][0]"; }
want=$(python3 - "$jobs/r1" <<'EOF'
import os, struct, sys
seg = os.path.join(sys.argv[1], 'segments')
created = struct.unpack('<Q', open(os.path.join(seg, '000000.tps'), 'rb').read(32)[16:24])[0]
# mtimes are the kernel's coarse clock: a tick-short job can end before its
# header's precise start, and is then 0 long
print(max(0, max(os.stat(os.path.join(seg, f)).st_mtime_ns for f in os.listdir(seg)) - created))
EOF
)
check "a job never viewed: the collection's wall time, from its segments ($want ns)" \
	[ "$(row r1 '["duration_ns"]') $(row r1 '["duration_of"]')" = "$want collection" ]
curl -o /dev/null -X POST -H 'X-Tapestry: 1' "$U/api/jobs/r1/build"
for _ in $(seq 300); do
	[ "$(curl -o "$work/r1.xml" -w '%{http_code}' "$U/api/jobs/r1/report.xml")" = 200 ] && break
	sleep 0.2
done
span=$(python3 -c "import xml.etree.ElementTree as E; print(E.parse('$work/r1.xml').getroot().find('perturbation').get('span_corrected_ns'))")
curl "$U/api/jobs" >"$work/jobs.json"
check "once its report is made: the report's span ($span)" \
	[ "$(row r1 '["duration_ns"]') $(row r1 '["duration_of"]')" = "$span span" ]
# a job that runs until told (its program reads a FIFO): no race with a loaded machine
mkfifo "$work/go"
"$T" run -o "$work/jobs/live" -- /bin/sh -c "read x <'$work/go'" >/dev/null 2>&1 & lpid=$!
pids+=($lpid)
d1=
for _ in $(seq 100); do
	curl "$U/api/jobs" >"$work/jobs.json"
	[ "$(row live '["duration_of"]')" = running ] && { d1=$(row live '["duration_ns"]'); break; }
	sleep 0.1
done
check "a job being written: marked running, its duration so far ($d1)" [ -n "$d1" ]
sleep 0.5
curl "$U/api/jobs" >"$work/jobs.json"
check "  ...growing" [ "$(row live '["duration_ns"] > '"${d1:-0}")" = True ]
echo go >"$work/go"
wait "$lpid"
curl "$U/api/jobs" >"$work/jobs.json"
check "  ...and once ended, the collection's" [ "$(row live '["duration_of"]')" = collection ]

# 7. --no-token: nobody is the owner, no edit
"$T" serve --listen 127.0.0.1:0 --no-token --jobs "$work/jobs" --descriptions "$work/descs" >"$work/o2" 2>/dev/null & pids+=($!)
for _ in $(seq 100); do grep -q serving "$work/o2" && break; sleep 0.1; done
U2=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/o2")
n0=$(nxml)
check "--no-token: the form not editable" [ "$(command curl -s "$U2/api/descriptions/io.xml/form" >"$work/nt.json"; json "$work/nt.json" 'd["editable"]')" = False ]
check "  ...an edit 403" [ "$(command curl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Tapestry: 1' --data processes=2 "$U2/api/descriptions/io.xml/edit")" = 403 ]
check "  ...nothing saved" [ "$(nxml)" = "$n0" ]

exit $fail
