#!/usr/bin/env bash
# tests/manager/test_export_viz.sh - `tapestry export -f chrome|paje|otf2|moca`
# end to end: a synthetic job with known counts (tests/manager/viz_gen: MPI
# send/recv, isend/irecv with wait and waitall, sendrecv, collectives, nested
# calls, memory samples, a rankless process, nasty path strings), each output
# read back by its own reader (a JSON parser, pj_dump, otf2-print) and its
# counts compared; a real `tapestry run` job when the sensor works; bad input
# (non-job directory, damaged job, unwritable output) leaves nothing behind.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
GEN="$top_builddir/tests/manager/viz_gen"
work=$(mktemp -d /tmp/tapestry-test-viz.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
for tool in python3 pj_dump otf2-print; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

RANKS=4 ITERS=25
"$GEN" "$work/job" $RANKS $ITERS >"$work/expect" || exit 99
# shellcheck disable=SC1090
. "$work/expect"

# ---- chrome -----------------------------------------------------------------
"$T" export -f chrome -o "$work/t.json" "$work/job" 2>"$work/chrome.err"
check "chrome export succeeds" [ $? = 0 ]
cat >"$work/chrome.py" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert d["displayTimeUnit"] == "ns"
c = {}
for e in ev:
    c[e["ph"]] = c.get(e["ph"], 0) + 1
    for k in ("ts", "dur"):
        if k in e:
            assert isinstance(e[k], (int, float)) and math.isfinite(e[k]) and e[k] >= 0, e
    if e["ph"] == "X":
        assert e["cat"] in ("libc", "mpi", "mem", "tracer", "proc"), e
paths = {e["args"].get("path") for e in ev if e["ph"] == "X" and e["name"] == "write" and e["args"].get("fd") == 3}
ids_s = sorted(e["id"] for e in ev if e["ph"] == "s")
ids_f = sorted(e["id"] for e in ev if e["ph"] == "f")
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
print("X=%d C=%d s=%d f=%d M=%d" % (c.get("X", 0), c.get("C", 0), c.get("s", 0), c.get("f", 0), c.get("M", 0)))
print("flows_paired=%d" % (ids_s == ids_f))
want = '/tmp/out "quoted" \\ back\ttab\x01 ctl \ufffd bad \u00e9t\u00e9.txt'
print("paths_ok=%d" % (paths == {want}))
print("procs=%d" % len(names))
EOF
python3 "$work/chrome.py" "$work/t.json" >"$work/chrome.out" 2>&1
check "chrome output is valid JSON in the Trace Event Format" [ $? = 0 ]
cat "$work/chrome.out"
check "chrome: one X event per event but memory samples ($states)" grep -q "^X=$states C=$mem " "$work/chrome.out"
check "chrome: one flow per matched message ($links)" grep -q " s=$links f=$links " "$work/chrome.out"
check "chrome: every flow start has its end" grep -q "^flows_paired=1" "$work/chrome.out"
# one matcher (manager/post/match.h): the viewers link causality's messages
m=$("$T" report "$work/job" 2>/dev/null | sed -n 's/.* \([0-9]*\) messages matched.*/\1/p' | head -n1)
check "chrome: the messages causality matched, no more, no fewer ($m = $links)" [ "$m" = "$links" ]
check "chrome: the path survives escaping (quote, backslash, tab, UTF-8, bad byte)" \
	grep -q "^paths_ok=1" "$work/chrome.out"
check "chrome: a process_name per process ($procs)" grep -q "^procs=$procs" "$work/chrome.out"

# ---- paje -------------------------------------------------------------------
"$T" export -f paje -o "$work/t.paje" "$work/job" 2>"$work/paje.err"
check "paje export succeeds" [ $? = 0 ]
pj_dump "$work/t.paje" >"$work/pj.out" 2>"$work/pj.err"
check "pj_dump reads the paje trace" [ $? = 0 ]
[ -s "$work/pj.err" ] && cat "$work/pj.err"
n=$(grep -c '^State,' "$work/pj.out")
check "paje: one state per event but memory samples ($n = $states)" [ "$n" = "$states" ]
n=$(grep -c '^Link,' "$work/pj.out")
check "paje: one link per matched message ($n = $links)" [ "$n" = "$links" ]
n=$(grep -c '^Variable,' "$work/pj.out")
check "paje: one variable value per memory sample ($n = $mem)" [ "$n" = "$mem" ]
n=$(grep -c '^Container,' "$work/pj.out")
want=$((1 + 2 + procs + threads))	# the root, 2 hosts
check "paje: containers host/process/thread ($n = $want)" [ "$n" = "$want" ]
bad=$(awk -F', ' '$1=="Link" && $5+0 < $4+0' "$work/pj.out" | wc -l)
check "paje: no link ends before it starts" [ "$bad" = 0 ]
nested=$(awk -F', ' '$1=="State" && $8=="write" && $7 == 1' "$work/pj.out" | wc -l)
check "paje: the write inside fwrite is nested ($nested = $((RANKS * ITERS)))" [ "$nested" = $((RANKS * ITERS)) ]
check "paje: times never decrease in the file" awk '
	/^%/ {next} $1>=5 {t=$2+0; if (t < last) exit 1; last=t}' "$work/t.paje"

# ---- otf2 -------------------------------------------------------------------
"$T" export -f otf2 -o "$work/t.otf2" "$work/job" 2>"$work/otf2.err"
check "otf2 export succeeds" [ $? = 0 ]
check "otf2: anchor file present" [ -f "$work/t.otf2/traces.otf2" ]
otf2-print "$work/t.otf2/traces.otf2" >"$work/o2.out" 2>"$work/o2.err"
check "otf2-print reads the archive" [ $? = 0 ]
check "otf2-print has no warning" [ ! -s "$work/o2.err" ]
[ -s "$work/o2.err" ] && head -5 "$work/o2.err"
cnt() { awk -v k="$1" '$1==k' "$work/o2.out" | wc -l; }
check "otf2: ENTER per event but samples ($(cnt ENTER) = $states)" [ "$(cnt ENTER)" = "$states" ]
check "otf2: LEAVE per event but samples ($(cnt LEAVE) = $states)" [ "$(cnt LEAVE)" = "$states" ]
check "otf2: MPI_SEND ($(cnt MPI_SEND) = $send)" [ "$(cnt MPI_SEND)" = "$send" ]
check "otf2: MPI_RECV ($(cnt MPI_RECV) = $recv)" [ "$(cnt MPI_RECV)" = "$recv" ]
check "otf2: MPI_ISEND ($(cnt MPI_ISEND) = $isend)" [ "$(cnt MPI_ISEND)" = "$isend" ]
check "otf2: MPI_ISEND_COMPLETE ($(cnt MPI_ISEND_COMPLETE) = $isend_done)" [ "$(cnt MPI_ISEND_COMPLETE)" = "$isend_done" ]
check "otf2: MPI_IRECV_REQUEST ($(cnt MPI_IRECV_REQUEST) = $irecv)" [ "$(cnt MPI_IRECV_REQUEST)" = "$irecv" ]
check "otf2: MPI_IRECV ($(cnt MPI_IRECV) = $irecv_done)" [ "$(cnt MPI_IRECV)" = "$irecv_done" ]
check "otf2: collectives begin/end ($(cnt MPI_COLLECTIVE_END) = $coll)" \
	[ "$(cnt MPI_COLLECTIVE_BEGIN)" = "$coll" -a "$(cnt MPI_COLLECTIVE_END)" = "$coll" ]
check "otf2: a METRIC per memory sample ($(cnt METRIC) = $mem)" [ "$(cnt METRIC)" = "$mem" ]
otf2-print -G "$work/t.otf2/traces.otf2" >"$work/o2g.out" 2>&1
check "otf2: clock properties in ns from 0" grep -q 'Ticks per Seconds: 1000000000, Global Offset: 0' "$work/o2g.out"
n=$(grep -c '^LOCATION ' "$work/o2g.out")
check "otf2: a location per thread ($n = $threads)" [ "$n" = "$threads" ]
check "otf2: MPI_COMM_WORLD defined" grep -q '^COMM .*MPI_COMM_WORLD' "$work/o2g.out"
# Enter/Leave nest per location: replay the stack
check "otf2: enter/leave properly nested on every location" awk '
	$1=="ENTER" {loc=$2; s[loc]=s[loc] " " $NF}
	$1=="LEAVE" {loc=$2; n=split(s[loc], a, " "); if (n == 0 || a[n] != $NF) exit 1;
		s[loc]=""; for (i = 1; i < n; i++) s[loc]=s[loc] " " a[i]}
	END {for (l in s) if (s[l] != "") exit 1}' "$work/o2.out"

# ---- moca -------------------------------------------------------------------
"$T" export -f moca -o "$work/t.moca" "$work/job" 2>"$work/moca.err"
check "moca export succeeds" [ $? = 0 ]
n=$(grep -c '^T ' "$work/t.moca")
check "moca: a T line per process with samples ($n = $mem_procs)" [ "$n" = "$mem_procs" ]
n=$(grep -c '^C ' "$work/t.moca")
check "moca: a C line per sample ($n = $mem)" [ "$n" = "$mem" ]
check "moca: every line parses (T id pid [pagesize], C id 0 start end mask, # values)" awk '
	/^T / {if (NF < 3 || NF > 4 || (NR > 1 && NF != 3)) exit 1; task=$2; chunk=0; end=0; next}
	/^C / {if (NF != 6 || $2 != chunk++ || $3 != 0 || $4 > $5 || $4 < end) exit 1; end=$5; next}
	/^# rss [0-9]+ minflt [0-9]+ majflt [0-9]+ vsize [0-9]+$/ {next}
	{exit 1}' "$work/t.moca"
check "moca: first T line carries the page size" grep -Eq '^T 0 [0-9]+ [0-9]+$' "$work/t.moca"

# ---- the external sort: tiny runs (hundreds of spilled runs, merged in
# levels) give the same files as the in-memory sort ------------------------------
for f in paje moca otf2; do
	TAPESTRY_VIZ_RUN_MAX=20 "$T" export -f $f -o "$work/small.$f" "$work/job" 2>/dev/null
	check "$f: export with 20-point runs succeeds" [ $? = 0 ]
done
check "paje: same file with spilled runs" cmp -s "$work/t.paje" "$work/small.paje"
check "moca: same file with spilled runs" cmp -s "$work/t.moca" "$work/small.moca"
check "otf2: same events with spilled runs" cmp -s "$work/o2.out" \
	<(otf2-print "$work/small.otf2/traces.otf2" 2>&1)

# ---- default output names, all-or-nothing on bad input ---------------------------
"$T" export -f chrome "$work/job" 2>/dev/null
check "default output name inside the job directory" [ -f "$work/job/trace.json" ]
mkdir -p "$work/notajob"
for f in chrome paje otf2 moca; do
	"$T" export -f $f -o "$work/bad.$f" "$work/notajob" 2>"$work/e.$f"
	rc=$?
	check "$f: a non-job directory fails ($rc)" [ "$rc" = 1 ]
	check "$f:   ...with a message" grep -q "not a readable job directory" "$work/e.$f"
	check "$f:   ...and leaves nothing" bash -c "! ls '$work'/bad.$f* 2>/dev/null | grep -q ."
done
cp -r "$work/job" "$work/damaged"
seg=$(ls "$work/damaged/segments/"*.tps | head -n1)
size=$(stat -c %s "$seg")
printf '\x55\x55\x55\x55\x55\x55\x55\x55' | dd of="$seg" bs=1 seek=$((size / 2)) conv=notrunc status=none
# damage: every format exports what is intact and says what was skipped;
# --strict refuses everywhere (csv too)
for f in chrome paje otf2 moca csv; do
	"$T" export -f $f --strict -o "$work/dmg.$f" "$work/damaged" 2>"$work/d.$f"
	rc=$?
	check "$f: a damaged job fails with --strict ($rc)" [ "$rc" = 1 ]
	check "$f:   ...saying where" grep -q "damaged job directory.*segments/000000.tps.*refused (--strict)" "$work/d.$f"
	check "$f:   ...and leaves nothing" bash -c "! ls '$work'/dmg.$f* 2>/dev/null | grep -q ."
	"$T" export -f $f -o "$work/dmg.$f" "$work/damaged" 2>"$work/d.$f"
	rc=$?
	check "$f: without --strict, what is intact is exported ($rc)" [ "$rc" = 0 ]
	check "$f:   ...into the output" [ -e "$work/dmg.$f" ]
	check "$f:   ...saying what was skipped" grep -q "damaged job directory (.*bytes skipped.*segments/000000.tps.*exported what is intact" "$work/d.$f"
done
"$T" export -f paje -o "$work/no/such/dir/t.paje" "$work/job" 2>"$work/e.unw"
check "an unwritable output fails" [ $? = 1 ]
check "  ...with a message" grep -q "cannot write" "$work/e.unw"
check "  ...about the output asked for, and its missing directory" \
	grep -q "t.paje: cannot write: no directory .*/no/such/dir$" "$work/e.unw"
# an empty (but valid) job exports to valid, empty outputs
"$GEN" "$work/job0" 2 1 >/dev/null
rm -f "$work/job0/segments/"* "$work/job0/index"
for f in chrome paje moca; do
	"$T" export -f $f -o "$work/empty.$f" "$work/job0" 2>"$work/empty.$f.err"
	check "$f: an empty job exports" [ $? = 0 ]
done
check "chrome: empty job is valid JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/empty.chrome"
check "paje: empty job reads" bash -c "pj_dump '$work/empty.paje' >/dev/null"
check "moca: empty job is an empty file" [ ! -s "$work/empty.moca" ]
"$T" export -f otf2 -o "$work/empty.otf2" "$work/job0" 2>"$work/empty.otf2.err"
check "otf2: an empty job is refused (an archive needs a location)" [ $? = 1 ]
check "  ...saying why" grep -q "no events" "$work/empty.otf2.err"
check "  ...and leaves nothing" [ ! -e "$work/empty.otf2" ]

# ---- a real job, when the sensor and collector work -----------------------------
# (HEAD's `tapestry run` looks for the collector under collector/)
[ -x "$top_builddir/tapestry-collector" ] && [ -z "${TAPESTRY_COLLECTOR_BIN:-}" ] &&
	export TAPESTRY_COLLECTOR_BIN="$top_builddir/tapestry-collector"
cc -O1 -pthread -o "$work/iodemo" "$top_srcdir/deploy/examples/iodemo.c" 2>/dev/null || exit 99
if timeout 120 "$T" run -o "$work/real" -- "$work/iodemo" "$work" >/dev/null 2>"$work/run.err"; then
	"$T" export -f csv -o "$work/real.csv" "$work/real" 2>/dev/null
	nreal=$(($(wc -l <"$work/real.csv") - 1))
	nmem=$(awk -F, '$3=="mem_sample"' "$work/real.csv" | wc -l)
	"$T" export -f chrome -o "$work/real.json" "$work/real" 2>/dev/null
	check "real job: chrome export" [ $? = 0 ]
	n=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(e['ph'] in 'XC' for e in d['traceEvents']))" "$work/real.json")
	check "real job: chrome X+C events = csv lines ($n = $nreal)" [ "$n" = "$nreal" ]
	"$T" export -f paje -o "$work/real.paje" "$work/real" 2>/dev/null
	n=$(pj_dump "$work/real.paje" 2>/dev/null | grep -c '^State,')
	check "real job: pj_dump states = events - samples ($n = $((nreal - nmem)))" [ "$n" = $((nreal - nmem)) ]
	"$T" export -f otf2 -o "$work/real.otf2" "$work/real" 2>/dev/null
	n=$(otf2-print "$work/real.otf2/traces.otf2" 2>/dev/null | awk '$1=="ENTER"' | wc -l)
	check "real job: otf2 ENTER = events - samples ($n = $((nreal - nmem)))" [ "$n" = $((nreal - nmem)) ]
	"$T" export -f moca -o "$work/real.moca" "$work/real" 2>/dev/null
	n=$(grep -c '^C ' "$work/real.moca")
	check "real job: moca chunks = memory samples ($n = $nmem)" [ "$n" = "$nmem" ]
	# a process that execs keeps its pid in a new stream: each image is a
	# container of its own, told apart by name (pid, program, a number);
	# (shells that only exec are launchers: shown with --trace-launcher)
	timeout 60 "$T" run --trace-launcher -o "$work/exec" -- /bin/sh -c 'exec /bin/sh -c /bin/true' \
		>/dev/null 2>"$work/exec.err"
	"$T" export -f paje -o "$work/exec.paje" "$work/exec" 2>/dev/null
	pj_dump "$work/exec.paje" 2>/dev/null | awk -F', ' '$3=="Process" {print $7}' >"$work/exec.names"
	check "exec'd images: one paje container each ($(tr '\n' ',' <"$work/exec.names"))" \
		[ "$(wc -l <"$work/exec.names")" = 3 ]
	check "  ...with names of their own" [ "$(sort -u "$work/exec.names" | wc -l)" = 3 ]
	"$T" export -f otf2 -o "$work/exec.otf2" "$work/exec" 2>/dev/null
	otf2-print -G "$work/exec.otf2/traces.otf2" 2>/dev/null |
		sed -n 's/^LOCATION_GROUP .* Name: "\([^"]*\)".*/\1/p' >"$work/exec.groups"
	check "exec'd images: OTF2 location groups named apart ($(tr '\n' ',' <"$work/exec.groups"))" \
		[ "$(sort -u "$work/exec.groups" | wc -l)" = 3 ]
else
	echo "note: tapestry run did not work here; real-job checks skipped"
	head -3 "$work/run.err"
fi
# a real Open MPI ring under the MPI sensor: every message linked
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if command -v mpicc.openmpi >/dev/null &&
   mpicc.openmpi -O1 -o "$work/ring" "$top_srcdir/tests/sensor/mpi_ring.c" 2>/dev/null &&
   timeout 180 "$T" run -o "$work/mpi" --sensors libc,mpi,mem --mpi openmpi -- \
	mpirun.openmpi --oversubscribe -np 4 "$work/ring" >/dev/null 2>"$work/mpirun.err"; then
	"$T" export -f csv -o "$work/mpi.csv" "$work/mpi" 2>/dev/null
	nsend=$(awk -F, '$3=="MPI_Send"' "$work/mpi.csv" | wc -l)
	nrecv=$(awk -F, '$3=="MPI_Recv"' "$work/mpi.csv" | wc -l)
	check "mpi ring: sends were traced ($nsend)" [ "$nsend" -gt 0 ]
	"$T" export -f chrome -o "$work/mpi.json" "$work/mpi" 2>/dev/null
	n=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(e['ph']=='s' for e in d['traceEvents']), sum(e['ph']=='f' for e in d['traceEvents']))" "$work/mpi.json")
	check "mpi ring: a chrome flow per message ($n = $nsend $nrecv)" [ "$n" = "$nsend $nrecv" ]
	"$T" export -f paje -o "$work/mpi.paje" "$work/mpi" 2>/dev/null
	n=$(pj_dump "$work/mpi.paje" 2>/dev/null | grep -c '^Link,')
	check "mpi ring: a paje link per message ($n = $nsend)" [ "$n" = "$nsend" ]
	"$T" export -f otf2 -o "$work/mpi.otf2" "$work/mpi" 2>/dev/null
	otf2-print "$work/mpi.otf2/traces.otf2" >"$work/mpi.o2" 2>/dev/null
	n=$(awk '$1=="MPI_SEND"' "$work/mpi.o2" | wc -l)
	m=$(awk '$1=="MPI_RECV"' "$work/mpi.o2" | wc -l)
	check "mpi ring: otf2 MPI_SEND/MPI_RECV ($n $m = $nsend $nrecv)" [ "$n $m" = "$nsend $nrecv" ]
	# the report's events by type: a column per rank and one for the
	# streams without a rank (mpirun's), so that every row adds up
	"$T" report "$work/mpi" 2>/dev/null | sed -n '/^events by type/,/^$/p' >"$work/mpi.types"
	check "mpi ring: report's per-type header names the ranks and the rest" \
		grep -Eq '^ +total +failed +rank 0 +rank 1 +rank 2 +rank 3 +no rank$' "$work/mpi.types"
	bad=$(awk 'NF == 8 && $2 ~ /^[0-9]+$/ && ($2 != $4 + $5 + $6 + $7 + $8 || $3 > $2)' "$work/mpi.types" | wc -l)
	rows=$(awk 'NF == 8 && $2 ~ /^[0-9]+$/' "$work/mpi.types" | wc -l)
	check "mpi ring: the report has per-type rows ($rows)" [ "$rows" -gt 5 ]
	check "mpi ring: every per-type row adds up ($bad of $rows do not)" [ "$bad" = 0 ]
else
	echo "note: no real MPI job here (MPI sensor or mpirun unavailable); skipped"
	[ -f "$work/mpirun.err" ] && head -3 "$work/mpirun.err"
fi

# ---- every message arrow of a real job, in the three viewer formats -----------
# tests/sensor/mpi_p2p.c: every send mode, Sendrecv, persistent requests,
# matched probes, every completion call (Wait*, Test*), on 4 ranks. Each
# arrow starts at its sending call's start and ends at the end of the call
# that completed its receive (flows_check.py); on the job's raw times (one
# clock on one host: a receive cannot complete before its send began) no
# arrow ends before it starts; on the corrected times the same places, and
# an arrow that ends before it starts is said by the export, with its count.
if command -v mpicc.openmpi >/dev/null &&
   mpicc.openmpi -O1 -o "$work/p2p" "$top_srcdir/tests/sensor/mpi_p2p.c" 2>/dev/null &&
   timeout 240 "$T" run -o "$work/p2pjob" --sensors mpi --mpi openmpi -- \
	mpirun.openmpi --oversubscribe -np 4 "$work/p2p" >/dev/null 2>"$work/p2p.err"; then
	for how in raw corrected; do
		env=()
		[ $how = raw ] && env=(TAPESTRY_NO_CORRECTION=1)
		env "${env[@]}" "$T" export -f chrome -o "$work/p2p.$how.json" "$work/p2pjob" 2>"$work/p2p.$how.cerr"
		check "p2p $how: chrome export" [ $? = 0 ]
		env "${env[@]}" "$T" export -f paje -o "$work/p2p.$how.paje" "$work/p2pjob" 2>"$work/p2p.$how.perr"
		check "p2p $how: paje export" [ $? = 0 ]
		env "${env[@]}" "$T" export -f otf2 -o "$work/p2p.$how.otf2" "$work/p2pjob" 2>/dev/null
		check "p2p $how: otf2 export" [ $? = 0 ]
		pj_dump "$work/p2p.$how.paje" >/dev/null 2>&1
		check "p2p $how: pj_dump reads the paje trace" [ $? = 0 ]
		otf2-print "$work/p2p.$how.otf2/traces.otf2" >"$work/p2p.$how.o2" 2>/dev/null
		python3 "$top_srcdir/tests/manager/flows_check.py" "$work/p2p.$how.json" \
			"$work/p2p.$how.paje" "$work/p2p.$how.o2" >"$work/p2p.$how.flows"
		rc=$?
		sed 's/^/    /' "$work/p2p.$how.flows"
		back=$(sed -n 's/^chrome flows [0-9]* backward \([0-9]*\) .*/\1/p' "$work/p2p.$how.flows")
		n=$(sed -n 's/^chrome flows \([0-9]*\) .*/\1/p' "$work/p2p.$how.flows")
		check "p2p $how: flows to check ($n)" [ "${n:-0}" -gt 100 ]
		check "p2p $how: every arrow starts in its sending call and ends where its receive completed" \
			grep -Eq '^chrome flows [0-9]+ backward [0-9]+ bad_start 0 bad_end 0 unpaired 0$' "$work/p2p.$how.flows"
		check "p2p $how: ... in paje" grep -Eq '^paje links [0-9]+ backward [0-9]+ bad_start 0 bad_end 0 unpaired 0$' "$work/p2p.$how.flows"
		check "p2p $how: ... and otf2's records at their calls' enter and leave" \
			grep -Eq '^otf2 sends [0-9]+ receives [0-9]+ bad_send 0 bad_recv 0$' "$work/p2p.$how.flows"
		if [ $how = raw ]; then
			check "p2p raw: no arrow ends before it starts" [ "$rc" = 0 ]
			check "p2p raw: and the export says none" bash -c "! grep -q 'arrows end before' '$work/p2p.raw.cerr'"
		elif [ "${back:-0}" != 0 ]; then
			check "p2p corrected: the export says which arrows run backwards ($back)" \
				grep -q ": warning: $back of $n message arrows end before they start" "$work/p2p.$how.cerr"
		fi
	done
else
	echo "note: no real MPI job for the arrows (MPI sensor or mpirun unavailable); skipped"
	[ -f "$work/p2p.err" ] && head -3 "$work/p2p.err"
fi
exit $fail
