#!/usr/bin/env bash
# tests/manager/test_run.sh - `tapestry run`, `export -f csv` and `report` end
# to end on a real program (deploy/examples/iodemo.c: 2 threads x 1000
# fprintf, a forked child reading a file), with the real sensor and real
# collectors on loopback; then every bad input of those commands.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
work=$(mktemp -d /tmp/tapestry-test-run.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"

cc -O1 -pthread -o "$work/iodemo" "$top_srcdir/deploy/examples/iodemo.c" || exit 99
"$work/iodemo" "$work" >"$work/plain.out" 2>&1
timeout 120 "$T" run -o "$work/job" -- "$work/iodemo" "$work" >"$work/traced.out" 2>"$work/run.err"
rc=$?
check "run exits with the program's status" [ "$rc" = 0 ]
[ "$rc" = 0 ] || cat "$work/run.err"
check "program output unchanged" cmp -s <(sort "$work/plain.out") <(sort "$work/traced.out")
check "job directory written" [ -d "$work/job/segments" ]

"$T" export -f csv -o "$work/t.csv" "$work/job" 2>"$work/export.err"
check "export csv succeeds" [ $? = 0 ]
check "csv header" [ "$(head -n1 "$work/t.csv")" = "rank,tid,event,start_ns,end_ns,bytes,peer,tag,fd,path,pid,result,errcode,args" ]
# the calibration records (one per series, same stamp) differ by the
# args column; a program that lives long enough for the start-up
# calibration (iodemo may end before it: then it is skipped)
"$T" run -o "$work/cal" -- /bin/sleep 1 2>/dev/null
"$T" export -f csv -o "$work/cal.csv" "$work/cal" 2>/dev/null
n_cal=$(awk -F, '$3=="calibration"' "$work/cal.csv" | wc -l)
n_cal_u=$(awk -F, '$3=="calibration"' "$work/cal.csv" | sort -u | wc -l)
check "csv: calibration lines ($n_cal)" [ "$n_cal" -ge 3 ]
check "csv: calibration lines differ by their args ($n_cal_u of $n_cal)" [ "$n_cal_u" = "$n_cal" ]
check "csv: args holds the fields without a column (evtype, cost_ns)" \
	grep -q ',calibration,.*,evtype=[0-9]* cost_ns=[0-9]' "$work/cal.csv"
# a run of fprintf calls on one stream is one line: its calls in args' count=
n_fprintf=$(awk -F, '$3=="fprintf" { n += match($NF, /count=[0-9]+/) ? substr($NF, RSTART + 6, RLENGTH - 6) : 1 }
	END { print n + 0 }' "$work/t.csv")
check "2000 fprintf events (got $n_fprintf)" [ "$n_fprintf" = 2000 ]
n_paths=$(awk -F, '$3=="fprintf" && $10 ~ /iodemo-[ab].txt$/ {
	n += match($NF, /count=[0-9]+/) ? substr($NF, RSTART + 6, RLENGTH - 6) : 1 } END { print n + 0 }' "$work/t.csv")
check "fprintf events carry their path (got $n_paths)" [ "$n_paths" = 2000 ]
n_pids=$(awk -F, 'NR>1 && $11!="" {print $11}' "$work/t.csv" | sort -u | wc -l)
check "parent and forked child both traced (got $n_pids pids)" [ "$n_pids" -ge 2 ]
n_fread=$(awk -F, '$3=="fread"' "$work/t.csv" | wc -l)
check "the child's freads are traced (got $n_fread)" [ "$n_fread" -ge 1 ]
bad_times=$(awk -F, 'NR>1 && ($4 < 0 || $5 < $4)' "$work/t.csv" | wc -l)
check "times from job start, end >= start" [ "$bad_times" = 0 ]

"$T" report "$work/job" >"$work/report.txt"
check "report succeeds" [ $? = 0 ]
check "report counts fprintf" grep -Eq '^  fprintf +2000' "$work/report.txt"
check "report says nothing lost" grep -q 'losses         0 events counted lost, 0 batches missing, 0 corrupt' "$work/report.txt"
# a job without MPI: no receives/collectives/communicators lines of zeros,
# and no clock fit printed where the identity is used
check "report of a job without MPI says so" grep -q '^causality      no MPI events' "$work/report.txt"
check "  ...and prints no receives line" bash -c "! grep -q 'receives: 0' '$work/report.txt'"
check "report has edges with the same clock (one host)" grep -q 'identity used' "$work/report.txt"
check "report shows no fit on an edge with the same clock" \
	bash -c "grep 'identity used' '$work/report.txt' | awk '\$4 != \"-\" || \$7 != \"-\" {bad=1} END {exit bad}'"
"$T" report --xml "$work/job" >"$work/report.xml"
check "xml report is well-formed" xmllint --noout "$work/report.xml"

# bad input: each gets a clear message and a non-zero status, nothing half-written
"$T" run -o "$work/job" -- true 2>"$work/e1"
check "run refuses an existing job directory" [ $? = 2 ]
check "  ...and says so" grep -q "already exists" "$work/e1"
"$T" run -o "$work/job2" -- "$work/no-such-program" 2>"$work/e2"
rc=$?
check "run of a missing program fails ($rc)" [ "$rc" != 0 ]
check "  ...and says so" grep -q "no-such-program" "$work/e2"
check "  ...no collector left behind" bash -c "! pgrep -f '[t]apestry-collector.*$work' >/dev/null"
# tapestry's own output closed under it (`| head -1`): it finishes the
# job (drained, meta.xml written) and leaves no collector behind
"$T" run -o "$work/piped" -- sh -c 'sleep 1; echo x; echo y' 2>&1 | head -n 1 >/dev/null
check "run whose output pipe closes: the job is written" [ -s "$work/piped/meta.xml" ]
check "  ...no collector left behind" bash -c "! pgrep -f '[t]apestry-collector.*$work/piped' >/dev/null"
# the summary counts processes, not streams (an exec starts a stream), and
# a process killed before its end is not "none lost"
"$T" run -o "$work/ex" -- /bin/sh -c 'exec /bin/true' 2>"$work/ex.err"
check "summary: an exec'd process is one process in two streams" \
	grep -q "events from 1 process (2 streams: an exec starts one)" "$work/ex.err"
# a shell searching PATH: the execs that found no file are failed calls,
# counted in the report's failed column
# (env and sh only execute the next program: shown with --trace-launcher)
"$T" run --trace-launcher -o "$work/search" -- env PATH=/nonexistent-a:/nonexistent-b:/bin /bin/sh -c 'exec true' 2>/dev/null
"$T" report "$work/search" >"$work/search.txt" 2>&1
check "report: events by type has a failed column" grep -Eq '^ +total +failed$' "$work/search.txt"
check "  ...the PATH search: env's exec of sh, sh's three, 2 failed" grep -Eq '^  exec +4 +2$' "$work/search.txt"
# by default those shims are left out of the counts, said in one line
"$T" run -o "$work/search2" -- env PATH=/nonexistent-a:/nonexistent-b:/bin /bin/sh -c 'exec true' 2>/dev/null
"$T" report "$work/search2" >"$work/search2.txt" 2>&1
check "report: the shims env and sh left out of the counts" grep -q '^launchers  *[1-9][0-9]* events of launchers' "$work/search2.txt"
check "  ...their execs not counted" bash -c "! grep -Eq '^  exec ' '$work/search2.txt'"
"$T" run -o "$work/killed" -- /bin/sh -c '/bin/sleep 5 & p=$!; /bin/sleep 0.5; kill -9 $p; wait' 2>"$work/killed.err"
check "summary: a process killed by SIGKILL is a stream cut short" \
	grep -q "1 stream cut short (killed before its end" "$work/killed.err"
check "  ...and not none lost" bash -c "! grep -q 'none lost' '$work/killed.err'"
# status DIR while a run goes on: both collectors, with their rates (a
# STATS report every second); polled, the first reports take a second
"$T" run -o "$work/live" -- /bin/sh -c 'i=0; while [ $i -lt 60 ]; do cat /etc/hostname >/dev/null; sleep 0.1; i=$((i + 1)); done' >/dev/null 2>&1 &
live_pid=$!
pids+=("$live_pid")
# (kept: the last answer that showed the node; the node's "in" figure
# each poll, while the 6 s program runs: a report every second changes it
# several times, one every 5 s (the collectors' default) once or twice)
: >"$work/live.in"
for i in $(seq 200); do
	kill -0 "$live_pid" 2>/dev/null || break
	"$T" status "$work/live" >"$work/live.now" 2>&1
	if grep -q "^  collector node " "$work/live.now"; then
		cp "$work/live.now" "$work/live.st"
		sed -n '/^  collector node /{n;s/.*; in \([^ ]*\) events.*/\1/p}' "$work/live.now" >>"$work/live.in"
	fi
	sleep 0.25
done
check "status of a running run: the node collector is shown" grep -q "^  collector node " "$work/live.st"
check "  ...with rates" bash -c "! grep -q '^  children .* 0 events/s' '$work/live.st'"
n_in=$(sort -u "$work/live.in" | wc -l)
check "  ...reported every second ($n_in figures while it ran)" [ "$n_in" -ge 3 ]
wait "$live_pid"
"$T" run 2>/dev/null
check "run without a program is a usage error" [ $? = 2 ]
"$T" export -f nope "$work/job" 2>"$work/e3"
check "unknown export format is a usage error" [ $? = 2 ]
mkdir -p "$work/notajob"
"$T" export -f csv -o "$work/x.csv" "$work/notajob" 2>"$work/e4"
check "export of a non-job directory fails" [ $? = 1 ]
check "  ...leaves no output" [ ! -e "$work/x.csv" ]
check "  ...nor a temporary file" [ ! -e "$work/x.csv.tmp" ]
"$T" report "$work/notajob" 2>/dev/null
check "report of a non-job directory fails" [ $? = 1 ]
# a damaged job directory: truncate the last segment in the middle of a frame
cp -r "$work/job" "$work/torn"
seg=$(ls "$work/torn/segments"/*.tps | tail -n1)
truncate -s -7 "$seg"
"$T" report "$work/torn" >"$work/torn.txt" 2>&1
check "report of a torn job directory succeeds" [ $? = 0 ]
check "  ...and reports the damage" grep -q "damaged bytes skipped" "$work/torn.txt"
"$T" --help >/dev/null && "$T" run --help >/dev/null && "$T" export --help >/dev/null && "$T" report --help >/dev/null
check "every command has --help" [ $? = 0 ]
"$T" frobnicate 2>/dev/null
check "unknown command is a usage error" [ $? = 2 ]
# the manager's settings: a value it does not understand is a usage error
# naming it, before the command does anything (a typo in
# TAPESTRY_PERTURB_INDIRECT once turned the indirect correction off)
for bad in TAPESTRY_PERTURB_INDIRECT=stollen TAPESTRY_NO_CORRECTION=yes \
	   TAPESTRY_MIN_LATENCY_NS=-5 TAPESTRY_MIN_LATENCY_NS=1us TAPESTRY_VIZ_RUN_MAX=4 \
	   TAPESTRY_SPILL_BYTES=-5 TAPESTRY_CLOCK_DRIFT_PPM=fast; do
	env "$bad" "$T" export -f csv -o "$work/bad.csv" "$work/job" 2>"$work/e5"
	check "$bad is a usage error" [ $? = 2 ]
	check "  ...naming it" grep -q "${bad%%=*}='${bad#*=}': want" "$work/e5"
	check "  ...and nothing written" [ ! -e "$work/bad.csv" ]
done
env TAPESTRY_PERTURB_INDIRECT=busy TAPESTRY_NO_CORRECTION=0 TAPESTRY_MIN_LATENCY_NS=100 \
	TAPESTRY_SPILL_BYTES=0 "$T" export -f csv -o "$work/good.csv" "$work/job" 2>"$work/e6"
check "good settings are taken" [ $? = 0 ]
check "  ...and the export written" [ -s "$work/good.csv" ]
TAPESTRY_PERTURB_INDIRECT=stollen "$T" export --help >/dev/null 2>&1
check "help is help, whatever the settings" [ $? = 0 ]
exit $fail
