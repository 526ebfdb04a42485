#!/usr/bin/env bash
# tests/manager/test_newuser.sh - what a new user met first (issue 21's trial):
# a relative job directory with a program that changes directory (every event
# kept), a refused connection said as a loss, SIGTERM to run and launch (the
# application stopped, the tree drained, nothing left running, exit 143), a
# failing or missing program said, unknown sensors refused, singular counts,
# status of a job directory, and the messages of report and export.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
work=$(mktemp -d /tmp/tapestry-test-newuser.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
T=$(readlink -f "$T")
cd "$work" || exit 99

# 1. relative job directory, a program that changes directory: the sensors of
# the processes after `cd /` still find the job's secret
timeout 120 "$T" run -o rel -- /bin/sh -c 'cd / && ls >/dev/null && ls >/dev/null' 2>rel.err
check "run with a relative -o exits 0" [ $? = 0 ]
check "  ...every process after the cd is in the job" grep -q "from 3 processes, none lost" rel.err
check "  ...no connection refused" bash -c "! grep -q refused rel.err"
[ "$fail" = 0 ] || cat rel.err

# 1. a connection refused (a process with another secret) is said as a loss
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >wrong
timeout 120 "$T" run -o refused -- /bin/sh -c "TAPESTRY_SECRET_FILE=$work/wrong ls >/dev/null" 2>ref.err
check "run with a refused process exits 0" [ $? = 0 ]
check "  ...its summary does not say none lost" bash -c "! grep -q 'none lost' ref.err"
check "  ...it says connections were refused, and why" grep -q "connections\? refused by the collectors (job secret [0-9]" ref.err
"$T" report refused >ref.txt
check "  ...and so does the report" grep -q "rejected by the collectors (job secret [0-9]" ref.txt
"$T" report --strict refused >/dev/null 2>refs.err
check "  ...which --strict refuses" [ $? = 1 ]

# 6. a stream cut short (SIGKILL: no end record) is damage under --strict;
# the shell lives a second first, so that its sensor has connected (a
# process killed before its stream opens leaves no stream to cut short)
timeout 120 "$T" run --keep-going -o cut -- /bin/sh -c 'ls >/dev/null; sleep 1; kill -9 $$' 2>cut.err
check "run of a program killed by SIGKILL says so" grep -q "killed by signal 9" cut.err
"$T" report cut >cut.txt 2>&1
check "  ...its stream is cut short" grep -q "1 stream cut short" cut.txt
"$T" report --strict cut >/dev/null 2>cuts.err
check "  ...which report --strict refuses" [ $? = 1 ]
"$T" export --strict -f csv cut 2>cute.err
check "  ...and export --strict too" [ $? = 1 ]
check "  ...saying why" grep -q "1 stream cut short.*refused (--strict)" cute.err

# the processes below pid $1, recursively
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1"); do
		echo "$c"
		descendants "$c"
	done
}
# none of the pids given is alive (a zombie is not: its parent may be init)
all_gone() {
	local p
	for p in "$@"; do
		[ -e "/proc/$p" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$p/stat" 2>/dev/null && return 1
	done
	return 0
}
# signal_stop NAME CMD...: start CMD (a run or launch whose program writes
# $work/NAME.pid, then sleeps), SIGTERM the manager once the program runs,
# check its status, that nothing it started is left, and the job written
signal_stop() {
	local name=$1 tp rc kids
	shift
	"$@" >"$name.out" 2>"$name.err" &
	tp=$!
	pids+=("$tp")
	while [ ! -s "$name.pid" ] && kill -0 "$tp" 2>/dev/null; do sleep 0.1; done
	kids=$(descendants "$tp")
	# 9. status finds the running job's root and secret from its directory
	"$T" status "$name" >"$name.status" 2>&1
	check "$name: status DIR answers" [ $? = 0 ]
	(cd "$name" && "$T" status) >"$name.status2" 2>&1
	check "$name: status inside DIR answers" [ $? = 0 ]
	kill -TERM "$tp"
	wait "$tp"
	rc=$?
	check "$name: SIGTERM ends it with 143 ($rc)" [ "$rc" = 143 ]
	check "$name:   ...the program was running" [ -s "$name.pid" ]
	check "$name:   ...nothing it started is left ($(echo $kids))" all_gone $kids
	all_gone $kids || kill -KILL $kids 2>/dev/null	# what the failure left
	check "$name:   ...the job written" [ -d "$name/segments" ]
	check "$name:   ...saying the program was stopped" grep -q "killed by signal 15" "$name.err"
	"$T" report --quick "$name" >"$name.txt" 2>&1
	check "$name:   ...the job holds the program's stream" grep -q " pid $(cat "$name.pid") " "$name.txt"
	[ "$fail" = 0 ] || cat "$name.err"
}
signal_stop sigrun "$T" run -o sigrun -- /bin/sh -c "echo \$\$ >$work/sigrun.pid; sleep 300; true"
# a description of one process on this host: lib.sh's, running /bin/sh in $work
io_xml nfsig 1 "$work/io.xml"
sed -e 's|executable="iodemo"|executable="/bin/sh"|' -e "s|workdir=\"io\"|workdir=\"$work\"|" \
	-e 's|<argument>.</argument>|<argument>-c</argument><argument>echo $$ >siglaunch.pid; sleep 300; true</argument>|' \
	io.xml >sig.xml
signal_stop siglaunch "$T" launch --no-pingpong -o siglaunch sig.xml

# 1. launch with a relative -o, a program that changes directory
sed -e 's|echo \$\$ >siglaunch.pid; sleep 300; true|cd / \&amp;\&amp; ls >/dev/null|' sig.xml >cd.xml
# 7. ... with --times, stdout and stderr into one pipe: the times line last
timeout 120 "$T" launch --times -o j-cd cd.xml 2>&1 | cat >cd.all
check "launch -o relative exits 0" [ "${PIPESTATUS[0]}" = 0 ]
check "  ...both processes in the job" grep -q "^events .*, 2 streams" cd.all
check "  ...no connection rejected" bash -c "! grep -q 'rejected by the collectors' cd.all"
check "  ...one process said in the singular" grep -q "with 1 process (" cd.all
check "  ...the times line after the report" bash -c "tail -n 1 cd.all | grep -q '^tapestry: times:'"

# 3. the program's end said; a program that cannot run: no job directory
"$T" run -o f -- false 2>false.err
check "run -- false exits 1" [ $? = 1 ]
check "  ...and says so" grep -q "false exited with status 1" false.err
"$T" run -o missing -- nosuchprog-nf 2>missing.err
check "run -- a missing program exits 127" [ $? = 127 ]
check "  ...says it in one line" [ "$(wc -l <missing.err)" = 1 ]
check "  ...naming it" grep -q "cannot execute nosuchprog-nf" missing.err
check "  ...and leaves no job directory" [ ! -e missing ]

# 4. unknown sensor names
"$T" run --sensors foo -o s -- true 2>sens.err
check "run --sensors foo is a usage error" [ $? = 2 ]
check "  ...naming it" grep -q "not 'foo'" sens.err
check "  ...nothing made" [ ! -e s ]
"$T" run --sensors libc,mem -o s2 -- true 2>/dev/null
check "run --sensors libc,mem is taken" [ $? = 0 ]

# 10. singulars
check "one process said in the singular" grep -q "from 1 process," false.err
check "one link said in the singular" bash -c "! grep -q 'all 1 links' false.err"

# 5. export says what it wrote
"$T" export -f csv rel 2>exp.err
check "export says the path it wrote" grep -q "rel/trace.csv" exp.err
"$T" export --help | grep -q "trace.csv" 
check "export --help names the default outputs" [ $? = 0 ]

# 11. report of a directory that is not a job says what is missing
"$T" report "$work/sig.xml" 2>/dev/null
mkdir notajob
"$T" report notajob 2>nj.err
check "report of a non-job directory fails" [ $? = 1 ]
check "  ...saying what is missing" grep -q "no segments" nj.err
# and so does every export
for f in csv chrome paje simgrid-ti moca; do
	"$T" export -f $f -o "nj.$f" notajob 2>nj-$f.err
	check "export -f $f of a non-job directory fails, saying what is missing" \
		grep -q "no segments" nj-$f.err
done
"$T" export -f csv -o nj.none.csv "$work/no-such-dir" 2>nj-none.err
check "export of a missing directory says so" grep -q "no such directory" nj-none.err
"$T" replay "$work/no-such-dir" 2>nj-replay.err
check "replay of a missing directory says so, as export does" grep -q "not a readable job directory (no such directory)" nj-replay.err
# 12. serve lists the newest job first, and says it stops on SIGTERM
if command -v curl >/dev/null; then
	mkdir jobs
	cp -r rel jobs/a-old && cp -r refused jobs/z-new
	touch -d '2020-01-01' jobs/a-old/segments
	"$T" serve --listen 127.0.0.1:0 --jobs jobs >serve.out 2>serve.err &
	sp=$!
	pids+=("$sp")
	while ! grep -qs serving serve.out && kill -0 "$sp" 2>/dev/null; do sleep 0.1; done
	# the URL printed carries the token every route wants (?token=)
	u=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' serve.out)
	tok=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' serve.out)
	order=$(curl -s -H "Authorization: Bearer $tok" "$u/api/jobs" | python3 -c 'import json,sys; print(" ".join(j["name"] for j in json.load(sys.stdin)["jobs"]))')
	check "serve lists the newest job first ($order)" [ "$order" = "z-new a-old" ]
	kill -TERM "$sp"
	wait "$sp"
	check "  ...and exits 0 on SIGTERM" [ $? = 0 ]
	check "  ...saying so" grep -q "serve: Terminated, stopping" serve.err
fi

# 9. status elsewhere: a hint naming the options
"$T" status --timeout 1 127.0.0.1:1 2>st.err
check "status of nothing fails" [ $? = 1 ]
check "  ...naming the job directory form" grep -q "tapestry status JOBDIR" st.err
exit $fail
