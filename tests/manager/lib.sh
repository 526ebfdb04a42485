# tests/manager/lib.sh - sourced by the manager's test scripts right after
# `work=$(mktemp -d ...)`. Needs top_srcdir and top_builddir.
# Sets T and C (the tapestry and collector binaries), fail=0 and pids=();
# at exit every process in pids is killed and waited for, cleanup_more runs
# when the script defines it (namespaces, links), and $work is removed.

T="$top_builddir/manager/tapestry"
C="$top_builddir/tapestry-collector"
[ -x "$C" ] || C="$top_builddir/collector/tapestry-collector"
fail=0
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	[ "$(type -t cleanup_more)" = function ] && cleanup_more
	rm -rf "$work"
}
trap cleanup EXIT

# check DESCRIPTION COMMAND...: prints ok/FAIL; a failure sets fail=1
check() {
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

# ring_xml TAG ITERS OUT [SED-EXPR...]: deploy/examples/ring.xml with its
# collectors renamed TAG-gw and TAG-node (pgrep finds this test's own),
# ITERS iterations and the extra sed expressions, written to OUT
ring_xml() {
	_tag=$1 _it=$2 _out=$3
	shift 3
	_ex=()
	for _e in "$@"; do _ex+=(-e "$_e"); done
	sed -e "s/name=\"gateway\"/name=\"$_tag-gw\"/; s/parent=\"gateway\"/parent=\"$_tag-gw\"/" \
	    -e "s/name=\"node\"/name=\"$_tag-node\"/" \
	    -e "s|<argument>100</argument>|<argument>$_it</argument>|" \
	    "${_ex[@]}" "$top_srcdir/deploy/examples/ring.xml" >"$_out"
}

# launch_ok SECS WHAT DIR XML: `tapestry launch -o DIR XML` with DIR.out and
# DIR.err beside DIR; checks "launch WHAT exits 0" and on failure shows its
# messages and the tail of the collectors' logs
launch_ok() {
	local rc
	timeout "$1" "$T" launch -o "$3" "$4" >"$3.out" 2>"$3.err"
	rc=$?
	check "launch $2 exits 0 ($rc)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || { cat "$3.err"; tail -n 5 "$3/logs/"* 2>/dev/null; }
}

# io_xml TAG PROCESSES OUT [FORMAT]: deploy/examples/iodemo.c built beside OUT
# (DIR/iodemo, run in DIR/io) and OUT, its description on this host: the
# collectors TAG-gw and TAG-node below it, FORMAT its output (none if not given)
io_xml() {
	local d outputs=
	d=$(dirname "$3")
	[ -n "${4:-}" ] && outputs="
  <outputs><output format=\"$4\"/></outputs>"
	[ -x "$d/iodemo" ] ||
		cc -O1 -pthread -o "$d/iodemo" "$top_srcdir/deploy/examples/iodemo.c" || exit 99
	mkdir -p "$d/io"
	cat >"$3" <<EOF
<?xml version="1.0"?>
<job name="io">
  <hosts><host name="localhost" address="127.0.0.1" slots="2"/></hosts>
  <collectors>
    <collector name="$1-gw" host="localhost"/>
    <collector name="$1-node" host="localhost" parent="$1-gw"/>
  </collectors>
  <application executable="iodemo" processes="$2" workdir="io">
    <argument>.</argument>
  </application>$outputs
</job>
EOF
}

# serve_job: the job serve shows, $work/jobs/run1 (`tapestry run` of iodemo,
# built into $work/descs), jobs its folder's real path, $work/report.xml its
# `tapestry report --xml`
serve_job() {
	mkdir -p "$work/jobs" "$work/descs/io"
	cc -O1 -pthread -o "$work/descs/iodemo" "$top_srcdir/deploy/examples/iodemo.c" || exit 99
	# flush: a record per line written (else each writer's 1000 fprintf are
	# one record, a stdio run), so that the timeline has busy lanes
	timeout 120 "$T" run -o "$work/jobs/run1" -- "$work/descs/iodemo" "$work" flush >/dev/null 2>"$work/run.err"
	jobs=$(cd "$work/jobs" && pwd -P)
	"$T" report --xml "$jobs/run1" >"$work/report.xml"
}

# remote_xml OUT NAME HOST LAUNCHER TOP SUB [APPLICATION]: job NAME with the
# host "front" and HOST (1 slot, both 127.0.0.1) started through LAUNCHER
# (its <launcher .../> element, named by its first name="..."), the collector
# TOP on front and SUB on HOST below it, then APPLICATION (XML; default
# /bin/true on 1 process)
remote_xml() {
	local l=${4#*name=\"} app=${7:-'<application executable="/bin/true" processes="1"/>'}
	cat >"$1" <<EOF
<?xml version="1.0"?>
<job name="$2">
  <hosts>
    <host name="front" address="127.0.0.1"/>
    <host name="$3" address="127.0.0.1" slots="1" launcher="${l%%\"*}"/>
  </hosts>
  <launchers>
    $4
  </launchers>
  <collectors>
    <collector name="$5" host="front"/>
    <collector name="$6" host="$3" parent="$5"/>
  </collectors>
  $app
</job>
EOF
}
