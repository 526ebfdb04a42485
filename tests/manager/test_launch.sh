#!/usr/bin/env bash
# tests/manager/test_launch.sh - `tapestry plan`, `launch` and `status` on
# this machine: every example's plan equals tests/manager/launch_expected/;
# every bad description is refused with its line-numbered message and starts
# nothing; a local launch of a non-MPI program and of the Open MPI ring
# collect every event; launches that fail half-way (a collector host that
# cannot be reached, an executable that cannot start) stop everything; bad
# numeric options are usage errors.
# ssh and ip-netns launches: launch_ssh.sh, launch_netns.sh.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
work=$(mktemp -d /tmp/tapestry-test-launch.XXXXXX)
tag="tl$$"	# in every collector name this test starts: pgrep finds them
. "$top_srcdir/tests/manager/lib.sh"
# "--name [t]l123": matches the collectors, not a command line holding it
pat() { printf -- '--name [%s]%s' "${1:0:1}" "${1:1}"; }
none_left() { # none_left [PREFIX]: no collector named PREFIX... runs
	local p
	p=$(pat "${1:-$tag}")
	if pgrep -f -- "$p" >/dev/null; then pgrep -af -- "$p"; return 1; fi
}

# 1. plans: byte for byte
for x in ring two-sites folding io; do
	"$T" plan -o "$work/plan-$x" "$top_srcdir/deploy/examples/$x.xml" 2>"$work/plan.err"
	check "plan $x.xml" [ $? = 0 ]
	for f in "$top_srcdir/tests/manager/launch_expected/$x"/*; do
		check "  $x/$(basename "$f") matches" cmp "$f" "$work/plan-$x/$(basename "$f")"
	done
done
"$T" plan -o "$work/p" 2>/dev/null
check "plan without a description is a usage error" [ $? = 2 ]

# 2. bad descriptions: launch refuses each, with FILE:LINE, and starts nothing
for f in "$top_srcdir"/tests/manager/launch_bad/*.xml; do
	b=$(basename "$f")
	"$T" launch -o "$work/job-bad" "$f" >"$work/bad.out" 2>"$work/bad.err"
	rc=$?
	check "launch $b refused ($rc)" [ "$rc" = 1 ]
	check "  ...with a line-numbered message" grep -q "$b:[0-9][0-9]*: " "$work/bad.err"
	check "  ...and nothing launched" [ ! -e "$work/job-bad" ]
done
check "no collector after the bad descriptions" none_left

# 3. a local non-MPI launch
io_xml "$tag" 2 "$work/io.xml" csv
launch_ok 120 io.xml "$work/job-io" "$work/io.xml"
check "  ...collectors came up in order" grep -q "collector '$tag-node' on localhost up at 127.0.0.1:[0-9]* (parent $tag-gw)" "$work/job-io.err"
check "  ...plan and logs in the job directory" [ -f "$work/job-io/plan/hostfile.openmpi" -a -f "$work/job-io/plan/job.xml" -a -d "$work/job-io/logs" ]
check "  ...the root receiver's messages in DIR/logs" grep -q "info col_new: collector .* storing into" "$work/job-io/logs/collector-root.log"
check "  ...none of a collector's on the terminal" bash -c "! grep -Eq '^[0-9-]+T[0-9:.]+ (info|warn|error) ' '$work/job-io.err'"
check "  ...csv output written" [ -f "$work/job-io/trace.csv" ]
n=$(awk -F, '$3=="fprintf" { n += match($NF, /count=[0-9]+/) ? substr($NF, RSTART + 6, RLENGTH - 6) : 1 }
	END { print n + 0 }' "$work/job-io/trace.csv" 2>/dev/null)
check "  ...4000 fprintf events from 2 processes (got $n)" [ "$n" = 4000 ]
check "  ...report printed" grep -q "losses         0 events counted lost, 0 batches missing" "$work/job-io.out"
check "  ...no collector left" none_left

# 4. the Open MPI ring through the tree, with a job secret
if [ -f "$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so" ] && command -v mpicc.openmpi >/dev/null; then
	mpicc.openmpi -O1 -o "$work/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/secret"
	ring_xml "$tag" 20 "$work/ring.xml" 's|</outputs>|</outputs><security secret-file="secret"/>|'
	launch_ok 300 "ring.xml (Open MPI, secret)" "$work/job-ring" "$work/ring.xml"
	check "  ...80 MPI_Send from 4 ranks" grep -Eq '^  MPI_Send +80 +0 +20 +20 +20 +20' "$work/job-ring.out"
	check "  ...no collector left" none_left
	# 4 ranks on a host with fewer cores: said in one line, by plan too,
	# and Open MPI runs in its yielding mode
	cores=$(nproc)
	"$T" plan -o "$work/plan-ring" "$work/ring.xml" 2>"$work/plan-ring.err"
	if [ "$cores" -lt 4 ]; then
		want="oversubscribed (localhost: 4 ranks on $cores cores): "
		check "  ...oversubscription said once" [ "$(grep -c "$want" "$work/job-ring.err")" = 1 ]
		check "  ...and by plan" grep -q "$want" "$work/plan-ring.err"
		check "  ...Open MPI told to yield" grep -q "$want.*openmpi runs in its yielding mode" "$work/job-ring.err"
	else
		check "  ...no oversubscription said" bash -c "! grep -q oversubscribed '$work/job-ring.err' '$work/plan-ring.err'"
	fi
	# bad input: the description says Open MPI, the mpirun.openmpi found
	# first is another MPI's launcher: one line, nothing started
	mkdir -p "$work/fakebin"
	printf '#!/bin/sh\necho "HYDRA build details:"\necho "    Version: 4.0.2"\n' >"$work/fakebin/mpirun.openmpi"
	chmod +x "$work/fakebin/mpirun.openmpi"
	PATH="$work/fakebin:$PATH" timeout 120 "$T" launch -o "$work/job-fake" "$work/ring.xml" >/dev/null 2>"$work/fake.err"
	rc=$?
	check "a launcher that is not Open MPI's: launch fails ($rc)" [ "$rc" = 1 ]
	check "  ...in one line saying so" [ "$(grep -c "mpirun.openmpi is not Open MPI's launcher (its --version names mpich" "$work/fake.err")" = 1 ]
	check "  ...no job directory left" [ ! -e "$work/job-fake" ]
	check "  ...no collector left" none_left
else
	echo "skip the Open MPI ring (no MPI sensor built)"
fi

# 5. status: a root and a child started by hand
"$C" --listen 127.0.0.1:0 --print-port --output "$work/job-st" --stats-period 200ms \
	--name "$tag-root" >"$work/root.port" 2>/dev/null & pids+=($!)
for i in $(seq 50); do grep -q listening "$work/root.port" && break; sleep 0.1; done
raddr=$(awk '{print $2}' "$work/root.port")
"$C" --listen 127.0.0.1:0 --print-port --parent "$raddr" --stats-period 200ms \
	--name "$tag-leaf" >"$work/leaf.port" 2>/dev/null & pids+=($!)
for i in $(seq 50); do
	"$T" status "$raddr" >"$work/status.out" 2>&1
	grep -q "collector $tag-leaf" "$work/status.out" && break
	sleep 0.2
done
check "status shows the root" grep -q "^root $tag-root (node [0-9a-f]*) on" "$work/status.out"
check "status shows the child under it" grep -q "^  collector $tag-leaf" "$work/status.out"
check "status shows buffered and spilled bytes, drops" grep -q "buffered .* spilled .* drops" "$work/status.out"
"$T" status 127.0.0.1:1 2>"$work/st.err"
check "status of a closed port fails" [ $? = 1 ]
check "  ...and says why" grep -q "connect to 127.0.0.1:1" "$work/st.err"
"$T" status nonsense 2>/dev/null
check "status of a non-address is a usage error" [ $? = 2 ]
for p in "${pids[@]}"; do kill "$p"; wait "$p"; done
pids=()

# 6. half-way failures leave nothing behind
remote_xml "$work/unreachable.xml" unreachable far \
	'<launcher name="closed" type="ssh" port="1" options="-o StrictHostKeyChecking=no"/>' \
	"$tag-top" "$tag-far"
timeout 120 "$T" launch --start-timeout 10 -o "$work/job-un" "$work/unreachable.xml" >/dev/null 2>"$work/un.err"
rc=$?
check "unreachable collector host: launch fails ($rc)" [ "$rc" = 1 ]
check "  ...naming the collector" grep -q "collector '$tag-far' on far did not start" "$work/un.err"
check "  ...with ssh's reason" grep -qi "connect" "$work/un.err"
check "  ...the started collector stopped" none_left
check "  ...no job directory left" [ ! -e "$work/job-un" ]

printf '#!/nonexistent/interpreter\n' >"$work/broken"
chmod +x "$work/broken"
sed -e 's|executable="iodemo"|executable="broken"|' -e "s/$tag-/${tag}b-/g" "$work/io.xml" >"$work/broken.xml"
timeout 120 "$T" launch -o "$work/job-broken" "$work/broken.xml" >/dev/null 2>"$work/broken.err"
rc=$?
check "executable that cannot start: launch fails with 127 ($rc)" [ "$rc" = 127 ]
check "  ...and says so" grep -q "could not be started" "$work/broken.err"
check "  ...no collector left" none_left "${tag}b-"

remote_xml "$work/slow.xml" slow nowhere \
	'<launcher name="fake" type="template" command="sleep 30; {command}"/>' \
	"$tag-t2" "$tag-n2"
timeout 120 "$T" launch --start-timeout 2 -o "$work/job-slow" "$work/slow.xml" >/dev/null 2>"$work/slow.err"
rc=$?
check "collector that never comes up: launch fails ($rc)" [ "$rc" = 1 ]
check "  ...naming it and the timeout" grep -q "collector '$tag-n2' on nowhere did not start within 2 s" "$work/slow.err"
check "  ...nothing left (not even the launcher's sleep)" eval "none_left && ! pgrep -f '[s]leep 30; .*$tag'"

"$T" launch -o "$work/job-io" "$work/io.xml" 2>"$work/exists.err"
check "launch refuses an existing job directory" [ $? = 2 ]

# 7. numeric options: anything but a whole number of seconds in 1..86400 is a
# usage error naming the value (99999999999 * 1000 once overflowed an int)
for a in 0 -3 5x '' 99999999999; do
	"$T" launch --start-timeout "$a" -o "$work/job-opt" "$work/io.xml" 2>"$work/opt.err"
	check "launch --start-timeout '$a' is a usage error" [ $? = 2 ]
	check "  ...naming it" grep -q "from 1 to 86400, not '$a'" "$work/opt.err"
	"$T" status --timeout "$a" 127.0.0.1:1 2>"$work/opt.err"
	check "status --timeout '$a' is a usage error" [ $? = 2 ]
	check "  ...naming it" grep -q "from 1 to 86400, not '$a'" "$work/opt.err"
done
check "  ...and nothing launched" [ ! -e "$work/job-opt" ]
exit $fail
