#!/usr/bin/env bash
# tests/manager/launch_pingpong.sh - the network calibration before an MPI
# application (manager/launch/netcal.c, manager/launch/pingpong.c):
#  1. the ping-pong programs alone: figures on stdout under Open MPI and
#     MPICH; bad arguments and a single rank are refused (exit 2);
#  2. `tapestry launch` of the Open MPI ring on loopback: positive one-way
#     latency and bandwidth in meta.xml, the same figures in the exported
#     platform (each link: half the latency, the bandwidth), the log kept;
#  3. --no-pingpong, a failing and a missing ping-pong program: the launch
#     goes on, says so, meta.xml records why, the export says it used
#     defaults and why;
#  4. `tapestry run` of an mpirun: the same figures in meta.xml; of a
#     program that is not an mpirun: nothing measured.
# Exit 77 without Open MPI, its sensor or the ping-pong program.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
PP="$top_builddir/manager/tapestry-pingpong-openmpi"
PPM="$top_builddir/manager/tapestry-pingpong-mpich"
lib="$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so"
[ -x "$PP" ] && [ -f "$lib" ] && command -v mpicc.openmpi >/dev/null &&
	command -v mpirun.openmpi >/dev/null ||
	{ echo "Open MPI, its sensor or the ping-pong program missing: skipped"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/tapestry-test-pingpong.XXXXXX)
tag="tp$$"	# in every collector name this test starts: pgrep finds them
. "$top_srcdir/tests/manager/lib.sh"
none_left() { ! pgrep -f -- "--name [${tag:0:1}]${tag:1}" >/dev/null; }
meta() { # meta DIR KEY: the value in DIR/meta.xml
	sed -n "s|^<entry key=\"$2\">\\(.*\\)</entry>\$|\\1|p" "$1/meta.xml"
}
positive() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }
close_to() { # close_to A B: within 0.1 % (printing rounds)
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * 1e-3) }'
}

# ---- 1. the programs alone ----------------------------------------------------
mpirun.openmpi --oversubscribe -np 2 "$PP" 100 65536 4 >"$work/pp.out" 2>&1
check "pingpong (Open MPI): exit 0" [ $? = 0 ]
check "  ...prints latency and bandwidth" grep -Eq '^pingpong: net_latency_ns [0-9.]+ net_bandwidth_Bps [0-9.e+]+$' "$work/pp.out"
check "  ...and the hosts" grep -Eq '^pingpong: hosts [^ ]+ [^ ]+$' "$work/pp.out"
check "  ...and the bandwidth factor per size up to SIZE" grep -Eq '^pingpong: bw_factor 0:1;64:[0-9.e+-]+;256:[0-9.e+-]+;1024:[0-9.e+-]+;4096:[0-9.e+-]+;16384:[0-9.e+-]+;65536:1$' "$work/pp.out"
mpirun.openmpi --oversubscribe -np 2 "$PP" 0 >"$work/pp.out" 2>&1
check "pingpong: 0 rounds refused" grep -q "usage:" "$work/pp.out"
mpirun.openmpi --oversubscribe -np 2 "$PP" 10 x >"$work/pp.out" 2>&1
check "pingpong: a size that is not a number refused" grep -q "usage:" "$work/pp.out"
mpirun.openmpi --oversubscribe -np 2 "$PP" 10 2000000000 >"$work/pp.out" 2>&1
check "pingpong: a size over 1 GiB refused" grep -q "usage:" "$work/pp.out"
mpirun.openmpi -np 1 "$PP" >"$work/pp.out" 2>&1
check "pingpong: one rank refused" grep -q "needs two ranks" "$work/pp.out"
if [ -x "$PPM" ] && command -v mpirun.mpich >/dev/null; then
	mpirun.mpich -np 2 "$PPM" 100 65536 4 >"$work/ppm.out" 2>&1
	check "pingpong (MPICH): figures" grep -Eq '^pingpong: net_latency_ns [0-9.]+ net_bandwidth_Bps [0-9.e+]+$' "$work/ppm.out"
fi

# ---- 2. launch on loopback ------------------------------------------------------
mpicc.openmpi -O1 -o "$work/ring" "$top_srcdir/deploy/examples/ring.c" || exit 99
ring_xml "$tag" 5 "$work/ring.xml" 's|<output format="csv"/>|<output format="simgrid-platform"/>|'
timeout 300 "$T" launch -o "$work/job" "$work/ring.xml" >"$work/l.out" 2>"$work/l.err"
rc=$?
check "launch with the ping-pong: exit 0 ($rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -n 20 "$work/l.err"
lat=$(meta "$work/job" net_latency_ns) bw=$(meta "$work/job" net_bandwidth_Bps)
check "  ...meta.xml: positive one-way latency ($lat ns)" positive "${lat:-0}"
check "  ...meta.xml: positive bandwidth ($bw B/s)" positive "${bw:-0}"
check "  ...meta.xml: positive minimum latency" positive "$(meta "$work/job" net_latency_min_ns)"
check "  ...meta.xml: a bandwidth factor per size" bash -c "grep -Eq 'key=\"net_bw_factor\">0:1;64:[0-9.e+-]+;.*;4194304:1<' '$work/job/meta.xml'"
check "  ...meta.xml: says how" bash -c "grep -q 'key=\"net_calibration\">MPI ping-pong (openmpi) between ' '$work/job/meta.xml'"
check "  ...announced before the application" grep -q "network ping-pong (openmpi, " "$work/l.err"
check "  ...its log kept" grep -q "^pingpong: net_latency_ns" "$work/job/logs/pingpong.log"
check "  ...two processes on the job's one host" grep -q "^127.0.0.1 slots=2\$" "$work/job/plan/pingpong.hosts"
pf="$work/job/simgrid-platform"
check "  ...platform export: the figures come from the trace" grep -q 'source="trace"' "$pf/job.xml"
check "  ...platform export: the bandwidth factor with them" grep -q 'bw-factor="0:1;64:' "$pf/job.xml"
check "  ...platform export: the date of the measure" grep -Eq 'measured="[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"' "$pf/job.xml"
llat=$(sed -n 's/.*link id="node-0-link" bandwidth="\([^B]*\)Bps" latency="\([^s]*\)s".*/\2/p' "$pf/platform.xml")
lbw=$(sed -n 's/.*link id="node-0-link" bandwidth="\([^B]*\)Bps" latency="\([^s]*\)s".*/\1/p' "$pf/platform.xml")
check "  ...platform.xml: each link half the one-way latency ($llat s)" \
	close_to "${llat:-0}" "$(awk -v l="$lat" 'BEGIN { print l * 1e-9 / 2 }')"
check "  ...platform.xml: each link the bandwidth ($lbw B/s)" close_to "${lbw:-0}" "$bw"
check "  ...no collector left" none_left

# ---- 2b. the kept measure (TAPESTRY_CACHE_DIR: the test's own) -------------------
# the sensors keep their calibration in the same directory (calib-HASH,
# sensor/rt_init.c): the ping-pong's measures are the netcal-* files
netcal_kept() { ls "$1" | grep -c '^netcal-'; }
export TAPESTRY_CACHE_DIR="$work/cache"
mkdir -m 700 "$TAPESTRY_CACHE_DIR"
timeout 300 "$T" launch -o "$work/job-c1" "$work/ring.xml" >/dev/null 2>"$work/c1.err"
check "launch with a cache: exit 0, measured" [ $? = 0 -a "$(meta "$work/job-c1" net_calibration_cached)" = no ]
check "  ...kept one measure" [ "$(netcal_kept "$TAPESTRY_CACHE_DIR")" = 1 ]
check "  ...meta.xml: when it was measured" bash -c "grep -Eq 'key=\"net_calibration_date\">[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z<' '$work/job-c1/meta.xml'"
timeout 300 "$T" launch -o "$work/job-c2" "$work/ring.xml" >/dev/null 2>"$work/c2.err"
check "the next launch: exit 0, the kept measure" [ $? = 0 -a "$(meta "$work/job-c2" net_calibration_cached)" = yes ]
check "  ...says so" grep -q "network ping-pong (openmpi, .*; kept from 20" "$work/c2.err"
check "  ...the same figures" [ "$(meta "$work/job-c2" net_latency_ns)" = "$(meta "$work/job-c1" net_latency_ns)" ]
check "  ...the same date" [ "$(meta "$work/job-c2" net_calibration_date)" = "$(meta "$work/job-c1" net_calibration_date)" ]
check "  ...its log says where it comes from" grep -q "^# measured .* by an earlier job" "$work/job-c2/logs/pingpong.log"
check "  ...and has the figures" grep -q "^pingpong: net_latency_ns" "$work/job-c2/logs/pingpong.log"
timeout 300 "$T" launch --fresh-pingpong -o "$work/job-c3" "$work/ring.xml" >/dev/null 2>"$work/c3.err"
check "launch --fresh-pingpong: measured again" [ "$(meta "$work/job-c3" net_calibration_cached)" = no ]
sed 's|</application>|<environment name="OMPI_MCA_btl_vader_single_copy_mechanism" value="none"/></application>|' \
	"$work/ring.xml" >"$work/ring-env.xml"
timeout 300 "$T" launch -o "$work/job-c4" "$work/ring-env.xml" >/dev/null 2>"$work/c4.err"
check "another environment in the description: measured" [ "$(meta "$work/job-c4" net_calibration_cached)" = no ]
OMPI_MCA_btl_vader_eager_limit=8192 timeout 300 "$T" launch -o "$work/job-c5" "$work/ring.xml" >/dev/null 2>"$work/c5.err"
check "another MPI setting in the environment: measured" [ "$(meta "$work/job-c5" net_calibration_cached)" = no ]
for f in "$TAPESTRY_CACHE_DIR"/netcal-*; do	# every kept measure a day and more old
	sed -i 's/^measured .*/measured 1000/' "$f"
done
timeout 300 "$T" launch -o "$work/job-c6" "$work/ring.xml" >/dev/null 2>"$work/c6.err"
check "a measure older than a day: measured again" [ "$(meta "$work/job-c6" net_calibration_cached)" = no ]
check "  ...no collector left" none_left
for k in 1 2; do
	"$T" run -o "$work/run-c$k" --sensors mpi --mpi openmpi -- mpirun.openmpi --oversubscribe \
		-np 2 -x LD_PRELOAD -x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS "$work/ring" 2 >/dev/null 2>&1
done
check "tapestry run: measured, then kept" [ "$(meta "$work/run-c1" net_calibration_cached)" = no -a \
	"$(meta "$work/run-c2" net_calibration_cached)" = yes ]
chmod 755 "$TAPESTRY_CACHE_DIR"	# others may read it: not this user's alone
rm -f "$TAPESTRY_CACHE_DIR"/netcal-* "$TAPESTRY_CACHE_DIR"/calib-*	# neither the manager nor a sensor writes there now
for k in 1 2; do
	timeout 300 "$T" launch -o "$work/job-o$k" "$work/ring.xml" >/dev/null 2>"$work/o$k.err"
done
check "a cache directory of mode 0755: refused, measured each time" [ "$(meta "$work/job-o2" net_calibration_cached)" = no ]
check "  ...says so" grep -q "not a directory of this user's alone" "$work/o1.err"
check "  ...kept nothing there" [ "$(ls "$TAPESTRY_CACHE_DIR" | wc -l)" = 0 ]
export TAPESTRY_CACHE_DIR=none	# as the suite runs: no kept measure

# ---- 3. skipped, failing, missing ----------------------------------------------
timeout 300 "$T" launch --no-pingpong -o "$work/job-skip" "$work/ring.xml" >/dev/null 2>"$work/s.err"
check "launch --no-pingpong: exit 0" [ $? = 0 ]
check "  ...says so" grep -q "network ping-pong skipped (--no-pingpong)" "$work/s.err"
check "  ...meta.xml records it" grep -q 'key="net_calibration">skipped (--no-pingpong)<' "$work/job-skip/meta.xml"
check "  ...no figures" bash -c "! grep -q net_latency_ns '$work/job-skip/meta.xml'"
"$T" export -f simgrid-platform -o "$work/pf-skip" "$work/job-skip" 2>"$work/e"
check "  ...the export used defaults and says why" grep -q "defaults .*(network ping-pong at launch: skipped (--no-pingpong))" "$work/e"
check "  ...not logged" [ ! -e "$work/job-skip/logs/pingpong.log" ]

printf '#!/bin/sh\necho "pingpong: broken on purpose" >&2\nexit 3\n' >"$work/bad-pp"
chmod +x "$work/bad-pp"
TAPESTRY_PINGPONG="$work/bad-pp" timeout 300 "$T" launch -o "$work/job-bad" "$work/ring.xml" >"$work/b.out" 2>"$work/b.err"
rc=$?
check "a failing ping-pong: the launch goes on (exit $rc)" [ "$rc" = 0 ]
check "  ...the application ran" grep -Eq '^  MPI_Send +20 ' "$work/b.out"
check "  ...a warning that defaults will be used" grep -q "warning: network ping-pong failed: .* exited with status 3 .*default latency and bandwidth" "$work/b.err"
check "  ...meta.xml records the failure" grep -q 'key="net_calibration">failed: ' "$work/job-bad/meta.xml"
check "  ...no figures" bash -c "! grep -q net_latency_ns '$work/job-bad/meta.xml'"
"$T" export -f simgrid-platform -o "$work/pf-bad" "$work/job-bad" 2>"$work/e"
check "  ...the export says it used defaults, and why" grep -q "defaults .*network ping-pong at launch: failed: " "$work/e"
check "  ...the log has mpirun's messages" grep -q "broken on purpose" "$work/job-bad/logs/pingpong.log"

# a ping-pong measured on a busy machine (its median 40 times its fastest):
# said with the figures, used for this job, not kept for the next
cat >"$work/busy-pp" <<'PP'
#!/bin/sh
echo "pingpong: hosts vm vm"
echo "pingpong: latency_ns min 100 median 4000"
echo "pingpong: net_latency_ns 4000 net_bandwidth_Bps 1e9"
PP
chmod +x "$work/busy-pp"
mkdir -m 700 "$work/cache-busy"
TAPESTRY_CACHE_DIR="$work/cache-busy" TAPESTRY_PINGPONG="$work/busy-pp" \
	timeout 300 "$T" launch -o "$work/job-busy" "$work/ring.xml" >/dev/null 2>"$work/busy.err"
check "a busy ping-pong: the launch goes on" [ $? = 0 ]
check "  ...says the machine was busy" grep -q "network ping-pong .*warning: the median is over 4 times the fastest, the machine was busy" "$work/busy.err"
check "  ...not kept for the next jobs" [ "$(netcal_kept "$work/cache-busy")" = 0 ]

TAPESTRY_PINGPONG="$work/no-such-program" timeout 300 "$T" launch -o "$work/job-none" "$work/ring.xml" >/dev/null 2>"$work/n.err"
check "a missing ping-pong program: the launch goes on" [ $? = 0 ]
check "  ...says it is not installed" grep -q "no-such-program is not installed" "$work/n.err"
check "  ...no collector left" none_left

# ---- 4. tapestry run ------------------------------------------------------------
"$T" run -o "$work/run" --sensors mpi --mpi openmpi -- mpirun.openmpi --oversubscribe -np 2 \
	-x LD_PRELOAD -x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS "$work/ring" 2 >/dev/null 2>"$work/r.err"
check "run of an mpirun: exit 0" [ $? = 0 ]
check "  ...positive latency in meta.xml" positive "$(meta "$work/run" net_latency_ns)"
check "  ...positive bandwidth in meta.xml" positive "$(meta "$work/run" net_bandwidth_Bps)"
"$T" run -o "$work/run-skip" --no-pingpong --sensors mpi --mpi openmpi -- mpirun.openmpi --oversubscribe \
	-np 2 -x LD_PRELOAD -x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS "$work/ring" 2 >/dev/null 2>&1
check "run --no-pingpong: recorded as skipped" grep -q 'key="net_calibration">skipped' "$work/run-skip/meta.xml"
"$T" run -o "$work/run-plain" -- /bin/true 2>"$work/p.err"
check "run of a program that is not an mpirun: nothing measured" bash -c \
	"! grep -q 'ping-pong' '$work/p.err' && ! grep -q net_calibration '$work/run-plain/meta.xml' 2>/dev/null"
exit $fail
