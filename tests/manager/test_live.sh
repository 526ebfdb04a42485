#!/usr/bin/env bash
# tests/manager/test_live.sh - the live feed (docs/modules/live-ti.md):
#  1. synthetic finished jobs: `tapestry live-ti` writes files identical to
#     `tapestry export -f simgrid-ti`; bad usage is refused;
#  2. a real Open MPI ring under `tapestry run`, followed by `tapestry
#     live-ti --fifo` into named pipes that `smpirun -replay` reads while the
#     ring runs; the simulated time equals the post-mortem `tapestry replay`
#     of the same job directory (both printed), and the simulator had read
#     actions before any rank ended;
#  3. `tapestry launch --live-ti DIR` (growing files) on the same ring:
#     identical to the post-mortem export at the end (diff).
# Every process and fifo is cleaned up. Exit 77 only without Open MPI (its
# sensor) or SimGrid.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
GEN="$top_builddir/tests/manager/sim_gen"
command -v smpirun >/dev/null 2>&1 || { echo "SimGrid (smpirun) not installed: skipped"; exit 77; }
lib="$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so"
col="$top_builddir/tapestry-collector"
[ -x "$col" ] || col="$top_builddir/collector/tapestry-collector"
if ! command -v mpicc.openmpi >/dev/null || [ ! -f "$lib" ] || [ ! -x "$col" ]; then
	echo "Open MPI or its sensor not built: skipped"; exit 77
fi
work=$(mktemp -d /tmp/tapestry-test-live.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TAPESTRY_COLLECTOR_BIN="$col"

# ---- 1. finished synthetic jobs, usage ---------------------------------------
for k in ring coll nonblock; do
	"$GEN" $k "$work/$k" 4 || exit 99
	"$T" export -f simgrid-ti "$work/$k" 2>/dev/null
	timeout 60 "$T" live-ti "$work/$k" "$work/$k.live" 2>"$work/$k.err"
	check "$k: live-ti on a finished job exits 0" [ $? = 0 ]
	# but for the messages the export writes for collectives on
	# sub-communicators (coll's split), whose members the live feed
	# cannot know in advance: it skips them (export-simgrid.md)
	for f in "$work/$k/simgrid-ti"/*; do
		grep -Ev ' 214748[0-2][0-9]{3}( |$)' "$f" > "$f.nosub" && mv "$f.nosub" "$f"
	done
	check "$k: identical to export -f simgrid-ti" diff -r "$work/$k/simgrid-ti" "$work/$k.live"
done
"$T" live-ti "$work/ring" "$work/ring.live" 2>"$work/e"
check "an output directory with a list is refused" bash -c "[ $? = 1 ] && grep -q 'already exists' '$work/e'"
"$T" live-ti --np 0 "$work/ring" "$work/x" 2>"$work/e"
check "--np 0 is a usage error" bash -c "[ $? = 2 ] && grep -q 'np takes' '$work/e'"
"$T" live-ti "$work/ring" 2>/dev/null
check "one argument is a usage error" [ $? = 2 ]
timeout 60 "$T" live-ti --np 2 "$work/ring" "$work/small" 2>"$work/e"
check "a rank outside --np fails clearly" bash -c "[ $? = 1 ] && grep -q 'outside the 2 ranks' '$work/e'"
"$T" live-ti "$work/ring/meta.xml" "$work/y" 2>"$work/e"
check "a file as job directory fails clearly" bash -c "[ $? = 1 ] && grep -q 'cannot follow' '$work/e'"
# a job directory that never appears: SIGTERM stops the wait cleanly
"$T" live-ti --np 2 --fifo "$work/never" "$work/nv" 2>"$work/e" & p=$!
pids+=($p)
while [ ! -e "$work/nv/list" ]; do sleep 0.05; done
# read both pipes as a simulator would, so the end is not waited for
cat "$work/nv/rank_1.txt" >/dev/null & c=$!; cat "$work/nv/rank_0.txt" >/dev/null & c="$c $!"
pids+=($c)
kill -TERM $p; wait $p; rc=$?; wait $c
check "SIGTERM while waiting: pipes closed, rc $rc" bash -c "[ $rc = 1 ] && grep -q 'no MPI rank seen before the stop: the files stay empty' '$work/e'"

# ---- 2. a real ring replayed by SimGrid while it runs ------------------------
mpicc.openmpi -O1 -o "$work/ring_ompi" "$top_srcdir/deploy/examples/ring.c" || exit 99
export TAPESTRY_FLOP_RATE=1e9	# every rank's speed known before the run
export TAPESTRY_DRAIN_MS=100	# a live feed: ship every 100 ms, not every second
trace() { # trace JOBDIR ROUNDS
	(cd "$work" && timeout 300 "$T" run --sensors libc,mpi --mpi openmpi -o "$1" -- \
		mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD -x TAPESTRY_COLLECTOR \
		-x TAPESTRY_SENSORS -x TAPESTRY_FLOP_RATE -x TAPESTRY_DRAIN_MS ./ring_ompi "$2")
}
# the platform: a 1-round run gives the same one (same rate, default network)
trace "$work/cal" 1 >"$work/cal.out" 2>&1 || { cat "$work/cal.out"; exit 99; }
"$T" export -f simgrid-platform -o "$work/pf" "$work/cal" 2>/dev/null || exit 99

timeout 300 "$T" live-ti --np 4 --fifo -v "$work/job" "$work/live" 2>"$work/live.err" & lp=$!
pids+=($lp)
while [ ! -e "$work/live/list" ]; do sleep 0.05; done
check "the pipes exist before the program starts" \
	bash -c "for r in 0 1 2 3; do [ -p '$work/live/rank_'\$r.txt ] || exit 1; done"
(cd "$work/live" && exec timeout 300 smpirun -np 4 -platform "$work/pf/platform.xml" \
	-hostfile "$work/pf/hostfile" -replay list --cfg=smpi/host-speed:1e9f \
	--cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1) >"$work/smpi.log" 2>&1 & sp=$!
pids+=($sp)
trace "$work/job" 300 >"$work/run.out" 2>&1
rc=$?
check "real ring traced (rc $rc)" [ $rc = 0 ]
wait $lp; lrc=$?
wait $sp; src=$?
check "live-ti exits 0 ($lrc)" [ $lrc = 0 ]
check "smpirun -replay on the pipes exits 0 ($src)" [ $src = 0 ]
[ $lrc = 0 ] && [ $src = 0 ] || { cat "$work/live.err"; tail -20 "$work/smpi.log"; }
live=$(sed -n 's/.*Simulation time \([0-9.e+-]*\).*/\1/p' "$work/smpi.log")
"$T" replay "$work/job" >"$work/post.out" 2>"$work/post.err"
check "post-mortem tapestry replay exits 0" [ $? = 0 ]
post=$(sed -n 's/^simulated time: \(.*\) s$/\1/p' "$work/post.out")
# tapestry replay's platform takes each host's speed from the finished run
# (effective flops over CPU time), which no one knows while it runs: the
# post-mortem trace tapestry replay exported is replayed again on the
# platform the live replay had, so that only the traces are compared
(cd "$work/job/replay/simgrid-ti" && timeout 300 smpirun -np 4 -platform "$work/pf/platform.xml" \
	-hostfile "$work/pf/hostfile" -replay list --cfg=smpi/host-speed:1e9f \
	--cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1) >"$work/post-smpi.log" 2>&1
same=$(sed -n 's/.*Simulation time \([0-9.e+-]*\).*/\1/p' "$work/post-smpi.log")
echo "live replay (pipes, during the run):          simulated time ${live:-none} s"
echo "post-mortem trace of tapestry replay, same platform: simulated time ${same:-none} s"
echo "tapestry replay (its platform from the run):  simulated time ${post:-none} s"
check "same simulated time, live and post-mortem (same platform)" bash -c "[ -n '$live' ] && [ '$live' = '$same' ]"
grep 'live-ti: ' "$work/live.err"
read -r rd tot < <(sed -n 's/.*when the first rank ended.*had taken \([0-9]*\) of \([0-9]*\) bytes.*/\1 \2/p' "$work/live.err")
check "the simulator read actions before any rank ended (${rd:-?} of ${tot:-?} bytes)" \
	bash -c "[ -n '${rd:-}' ] && [ '${rd:-0}' -gt 0 ]"

# ---- 3. tapestry launch --live-ti (growing files) ----------------------------
tag=lv$$
ring_xml "$tag" 20 "$work/ring.xml" "s|executable=\"ring\"|executable=\"ring_ompi\"|"
(cd "$work" && timeout 300 "$T" launch -o "$work/job-l" --live-ti "$work/live-l" ring.xml) \
	>"$work/launch.out" 2>"$work/launch.err"
rc=$?
check "launch --live-ti exits 0 ($rc)" [ $rc = 0 ]
[ $rc = 0 ] || tail -20 "$work/launch.err"
"$T" export -f simgrid-ti -o "$work/post-l" "$work/job-l" 2>/dev/null
check "launch: live files identical to the post-mortem export" diff -r "$work/post-l" "$work/live-l"
check "launch: the live feed's summary printed" grep -q "live-ti: .* actions of 4 ranks" "$work/launch.err"
check "launch: --live-ti has the ranks' sensors drain every 100 ms" bash -c \
	"[ \$('$top_builddir/tests/sensor/dump_trace' '$work/job-l' 2>/dev/null | grep -c 'key=drain_ms value=100\$') -ge 4 ]"
exit $fail
