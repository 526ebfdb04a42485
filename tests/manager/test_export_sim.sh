#!/usr/bin/env bash
# tests/manager/test_export_sim.sh - the SimGrid exports (simgrid-ti,
# simgrid-ti-2011, simgrid-platform) and `tapestry replay`:
#  1. synthetic jobs (tests/manager/sim_gen: ring, every collective,
#     non-blocking calls) exported and compared with expected files, then
#     replayed by SimGrid (smpirun -replay) without error or deadlock;
#  2. the stylesheets alone (xsltproc) on a heterogeneous job description;
#  3. bad input: no MPI events, a missing rank, a damaged job directory, no
#     stylesheets, no SimGrid: a clear message, non-zero, nothing written;
#     `replay --platform` with a platform made beforehand (a directory, a
#     file), and with a missing one, no hostfile, too few hosts;
#  4. when the MPI sensor and Open MPI are here: deploy/examples/ring.c traced
#     for real, exported, replayed, and its communication actions compared
#     with SimGrid's own `smpirun -trace-ti` of the same source (smpicc).
# Exit 77 only when SimGrid (smpirun) is not installed.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
GEN="$top_builddir/tests/manager/sim_gen"
EXP="$top_srcdir/tests/manager/sim_expected"
command -v smpirun >/dev/null 2>&1 || { echo "SimGrid (smpirun) not installed: skipped"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-sim.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
absent() { # absent PATH...: none of them exists
	for p in "$@"; do [ ! -e "$p" ] || return 1; done
}
same() { # same EXPECTED ACTUAL
	cmp -s "$1" "$2" || { diff -u "$1" "$2" | head -20; return 1; }
}

# ---- 1. synthetic jobs ------------------------------------------------------
for k in ring coll nonblock; do
	"$GEN" $k "$work/$k" 4 || exit 99
	"$T" export -f simgrid-ti "$work/$k" 2>"$work/$k.err"
	check "$k: export simgrid-ti" [ $? = 0 ]
	check "$k: one file per rank and the list" \
		[ "$(cat "$work/$k/simgrid-ti/list")" = "$(printf 'rank_%d.txt\n' 0 1 2 3)" ]
	check "$k: every rank starts with init, ends with finalize" bash -c "
		for f in '$work/$k'/simgrid-ti/rank_*.txt; do
			r=\${f##*rank_}; r=\${r%.txt}
			[ \"\$(head -n1 \$f)\" = \"\$r init\" ] && [ \"\$(tail -n1 \$f)\" = \"\$r finalize\" ] || exit 1
		done"
	"$T" replay "$work/$k" >"$work/$k.out" 2>"$work/$k.rerr"
	rc=$?
	check "$k: replays in SimGrid (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || cat "$work/$k.rerr"
	check "$k: simulated time printed" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/$k.out"
	check "$k: no deadlock reported" bash -c "! grep -qi deadlock '$work/$k/replay/smpirun.log'"
done
check "ring rank 0 as expected" same "$EXP/ring-rank_0.txt" "$work/ring/simgrid-ti/rank_0.txt"
check "ring rank 1 as expected" same "$EXP/ring-rank_1.txt" "$work/ring/simgrid-ti/rank_1.txt"
check "coll rank 0 as expected" same "$EXP/coll-rank_0.txt" "$work/coll/simgrid-ti/rank_0.txt"
check "coll rank 3 as expected" same "$EXP/coll-rank_3.txt" "$work/coll/simgrid-ti/rank_3.txt"
check "nonblock rank 1 as expected" same "$EXP/nonblock-rank_1.txt" "$work/nonblock/simgrid-ti/rank_1.txt"
check "coll: the split's collectives written as messages among their members" grep -q "4 collectives on communicators smaller than MPI_COMM_WORLD written as point-to-point" "$work/coll.err"
check "nonblock: MPI_PROC_NULL completions reported skipped" grep -q "4 completions of requests not traced" "$work/nonblock.err"
# the ring's simulated time is deterministic: a change means the mapping moved
check "ring simulated time as expected" grep -qx "simulated time: $(cat "$EXP/ring-simtime") s" "$work/ring.out"
# beside it the measured time (the corrected trace: first return from
# MPI_Init to the last call of MPI_Finalize, taken here from the CSV), the
# ratio, what was modelled; the same figures in replay.xml and with --xml
"$T" export -f csv -o "$work/ring.csv" "$work/ring" 2>/dev/null
meas=$(awk -F, '$3=="MPI_Init" && (t0=="" || $5+0 < t0) {t0=$5+0}
	$3=="MPI_Finalize" && $4+0 > t1 {t1=$4+0}
	END {printf "%.9g", (t1 - t0) / 1e9}' "$work/ring.csv")
check "ring: measured time printed, the CSV's Init-to-Finalize span ($meas s)" \
	grep -q "^measured time: $meas s (the corrected trace, from the first return from MPI_Init to the last call of MPI_Finalize)$" "$work/ring.out"
ratio=$(awk -v s="$(cat "$EXP/ring-simtime")" -v m="$meas" 'BEGIN {printf "%.3g", s / m}')
check "ring: their ratio printed ($ratio)" grep -qx "simulated/measured: $ratio" "$work/ring.out"
check "ring: what was modelled, one line" grep -q '^model: 4 hosts, one per rank\( (the run had 4 ranks on [12] hosts\?: [^)]*)\)\?, each computing at .*flop rate .*; host-switch-host routes of one-way latency .* by default (no ping-pong in the trace); computation as flops' "$work/ring.out"
# the MPI share: the CSV's MPI calls (Init and Finalize aside) over ranks x span
share=$(awk -F, -v m="$meas" '$3 ~ /^MPI_/ && $3 != "MPI_Init" && $3 != "MPI_Finalize" && $1 != "" {
		s += $5 - $4; if ($1 + 1 > n) n = $1 + 1 }
	END {x = s / 1e9 / (m * n) * 100; if (x > 100) x = 100; printf "%.1f%% of the measured time (the ranks. MPI calls, Init and Finalize aside, over %d ranks)", x, n}' "$work/ring.csv")
check "ring: the MPI share printed ($share)" grep -q "^in MPI: $share" "$work/ring.out"
check "ring: replay prints five lines" [ "$(wc -l <"$work/ring.out")" = 5 ]
check "ring: replay.xml written in the replay's folder" [ -s "$work/ring/replay/replay.xml" ]
if command -v xmllint >/dev/null; then
	check "ring: replay.xml is well-formed" xmllint --noout "$work/ring/replay/replay.xml"
	x=$(xmllint --xpath 'string(/tapestry-replay/simulated/@seconds)' "$work/ring/replay/replay.xml")
	check "ring: replay.xml's simulated time ($x)" [ "$x" = "$(cat "$EXP/ring-simtime")" ]
	x=$(xmllint --xpath 'string(/tapestry-replay/measured/@seconds)' "$work/ring/replay/replay.xml")
	check "ring: replay.xml's measured time ($x)" [ "$x" = "$meas" ]
	x=$(xmllint --xpath 'string(/tapestry-replay/model/@hosts)' "$work/ring/replay/replay.xml")
	check "ring: replay.xml's hosts ($x)" [ "$x" = 4 ]
fi
"$T" replay --xml -o "$work/ringx" "$work/ring" >"$work/ringx.out" 2>/dev/null
check "ring: --xml prints replay.xml" cmp -s "$work/ringx.out" "$work/ringx/replay.xml"

for k in ring coll; do
	"$T" export -f simgrid-ti-2011 "$work/$k" 2>"$work/$k.2011.err"
	check "$k: export simgrid-ti-2011" [ $? = 0 ]
done
check "2011 ring rank 0 as expected" same "$EXP/ring-2011-rank_0.txt" "$work/ring/simgrid-ti-2011/rank_0.txt"
check "2011 coll rank 1 as expected" same "$EXP/coll-2011-rank_1.txt" "$work/coll/simgrid-ti-2011/rank_1.txt"
check "2011: calls without counterpart reported" grep -q "44 calls have no counterpart" "$work/coll.2011.err"
check "  ...by name" grep -q "skipped: MPI_Gather 4, .*MPI_Scan 4" "$work/coll.2011.err"

"$T" export -f simgrid-platform "$work/ring" 2>"$work/pf.err"
check "export simgrid-platform" [ $? = 0 ]
check "platform: job description as expected" same "$EXP/job.xml" "$work/ring/simgrid-platform/job.xml"
check "platform: platform.xml as expected" same "$EXP/platform.xml" "$work/ring/simgrid-platform/platform.xml"
check "platform: hostfile as expected" same "$EXP/hostfile" "$work/ring/simgrid-platform/hostfile"
check "platform: says the network figures are defaults" grep -q "defaults 4.52e-07 s one-way" "$work/pf.err"
if command -v xmllint >/dev/null; then
	check "platform.xml is well-formed" xmllint --noout "$work/ring/simgrid-platform/platform.xml"
fi
SIM_GEN_NET=1 "$GEN" ring "$work/net" 2 || exit 99
"$T" export -f simgrid-platform "$work/net" 2>"$work/net.err"
check "platform: measured network from META" grep -q 'one-way-latency="2e-06" link-latency="1e-06" link-bandwidth="1.25e+09" bw-factor="0:1;4096:0.25;65536:0.8" source="trace"' "$work/net/simgrid-platform/job.xml"
SIM_GEN_NET=bad "$GEN" ring "$work/netbad" 2 || exit 99
"$T" export -f simgrid-platform "$work/netbad" 2>"$work/netbad.err"
"$T" replay "$work/net" >"$work/net.out" 2>"$work/net.rerr"
check "replay: SMPI gets the measured bandwidth factor" grep -q -- '--cfg=smpi/bw-factor:0:1;4096:0.25;65536:0.8 ' "$work/net.rerr"
check "replay: with it, a simulated time" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/net.out"
check "platform: a bandwidth factor not in SMPI's syntax is not used" grep -q 'bw-factor="0:1" source="trace"' "$work/netbad/simgrid-platform/job.xml"
check "  ...and no note about defaults" bash -c "! grep -q defaults '$work/net.err'"

# ---- 2. the stylesheets alone ----------------------------------------------
if command -v xsltproc >/dev/null; then
	xsltproc "$top_srcdir/xsl/simgrid-platform.xsl" "$EXP/job-hetero.xml" >"$work/h.xml"
	check "xsl: heterogeneous platform as expected" same "$EXP/platform-hetero.xml" "$work/h.xml"
	xsltproc "$top_srcdir/xsl/simgrid-hostfile.xsl" "$EXP/job-hetero.xml" >"$work/h.hosts"
	check "xsl: hostfile in rank order" same "$EXP/hostfile-hetero" "$work/h.hosts"
fi

# ---- 3. bad input -----------------------------------------------------------
"$GEN" nompi "$work/nompi" || exit 99
for f in simgrid-ti simgrid-ti-2011 simgrid-platform; do
	"$T" export -f $f "$work/nompi" 2>"$work/e"
	check "$f without MPI events fails" [ $? = 1 ]
	check "  ...says why" grep -q "no MPI" "$work/e"
	check "  ...writes nothing" bash -c "! ls '$work/nompi' | grep -q simgrid"
done
"$T" replay "$work/nompi" >"$work/o" 2>"$work/e"
check "replay without MPI events fails" [ $? = 1 ]
check "  ...says why, prints no time" bash -c "grep -q 'no MPI' '$work/e' && ! grep -q simulated '$work/o'"

"$GEN" norank "$work/norank" || exit 99
"$T" export -f simgrid-ti "$work/norank" 2>"$work/e"
check "a missing rank: the others are exported" [ $? = 0 ]
check "  ...saying which rank is missing and how it is replayed" \
	grep -q "warning: .*MPI rank 1 of 4 has no MPI events (killed before its sensor sent them?): replayed as a stand-in" "$work/e"
check "  ...a stand-in file for it, init to finalize" bash -c "
	[ \"\$(head -n1 '$work/norank/simgrid-ti/rank_1.txt')\" = '1 init' ] &&
	[ \"\$(tail -n1 '$work/norank/simgrid-ti/rank_1.txt')\" = '1 finalize' ]"
check "  ...no message to or from it left" bash -c "
	! grep -Eq '^[0-9]+ (send|isend|recv|irecv) 1 |^[0-9]+ (wait|test) ([0-9]+ 1|1 [0-9]+) ' '$work/norank/simgrid-ti'/rank_*.txt"
"$T" replay "$work/norank" >"$work/norank.rp" 2>"$work/e"
check "  ...replayed (rc $?)" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/norank.rp"
check "  ...the replay names it" grep -q '^missing: rank 1 (no MPI events' "$work/norank.rp"
"$T" export -f simgrid-ti-2011 "$work/norank" 2>"$work/e"
check "a missing rank fails the 2011 dialect's export" [ $? = 1 ]
check "  ...names the rank" grep -q "MPI rank 1 of 4 has no events" "$work/e"
check "  ...writes nothing" absent "$work/norank/simgrid-ti-2011" "$work/norank/simgrid-ti-2011.tmp"

"$GEN" ring "$work/bad" || exit 99
seg="$work/bad/segments/000000.tps"
size=$(stat -c %s "$seg")
printf '\xff\xff\xff\xff' | dd of="$seg" bs=1 seek=$((size / 2)) conv=notrunc status=none
# damage: the policy of every export - what is intact, said; --strict refuses
"$T" export -f simgrid-ti --strict "$work/bad" 2>"$work/e"
check "a damaged job directory fails the export with --strict" [ $? = 1 ]
check "  ...says it is damaged" grep -q "damaged job directory.*refused (--strict)" "$work/e"
check "  ...writes nothing" absent "$work/bad/simgrid-ti" "$work/bad/simgrid-ti.tmp"
"$T" export -f simgrid-ti "$work/bad" 2>"$work/e"
check "without --strict it exports what is intact" [ -d "$work/bad/simgrid-ti" ]
check "  ...saying what was skipped" grep -q "damaged job directory (.* bytes skipped.*simgrid-ti exported what is intact" "$work/e"
check "  ...and that it may not replay" grep -q "may not replay" "$work/e"
"$T" export -f simgrid-ti "$work/no-such-dir" 2>"$work/e"
check "a missing job directory fails" [ $? = 1 ]
"$T" replay "$work/no-such-dir" 2>"$work/e"
check "replay of a missing directory fails" [ $? = 1 ]
check "  ...says so" grep -q "not a readable job directory (no such directory)" "$work/e"
TAPESTRY_XSL_DIR="$work/none" "$T" export -f simgrid-platform -o "$work/pf2" "$work/ring" 2>"$work/e"
check "missing stylesheets fail the platform export" [ $? = 1 ]
check "  ...name the stylesheet" grep -q "simgrid-platform.xsl: stylesheet not found" "$work/e"
check "  ...write nothing" absent "$work/pf2" "$work/pf2.tmp"
TAPESTRY_SMPIRUN="$work/no-smpirun" "$T" replay "$work/ring" >"$work/o" 2>"$work/e"
check "replay without SimGrid fails" [ $? = 1 ]
check "  ...says SimGrid is missing" grep -q "SimGrid is not installed" "$work/e"
printf '#!/bin/sh\necho "[0.0] [xbt/CRITICAL] boom"\nexit 3\n' >"$work/fake-smpirun"
chmod +x "$work/fake-smpirun"
TAPESTRY_SMPIRUN="$work/fake-smpirun" "$T" replay "$work/ring" >"$work/o" 2>"$work/e"
check "a failing replay fails" [ $? = 1 ]
check "  ...with smpirun's status and log" bash -c "grep -q 'exit status 3' '$work/e' && grep -q boom '$work/e'"
"$T" replay 2>/dev/null
check "replay without a directory is a usage error" [ $? = 2 ]

# ---- replay --platform: a platform made beforehand ----------------------------
"$T" export -f simgrid-platform -o "$work/pf-made" "$work/ring" 2>/dev/null
"$T" replay --platform "$work/pf-made" -o "$work/rp1" "$work/ring" >"$work/rp1.out" 2>"$work/rp1.err"
check "replay --platform DIR (rc $?)" grep -qx "simulated time: $(cat "$EXP/ring-simtime") s" "$work/rp1.out"
check "  ...says which platform it used" grep -q "replaying on the platform $work/pf-made/platform.xml" "$work/rp1.err"
check "  ...exported no platform of its own" absent "$work/rp1/simgrid-platform"
check "  ...smpirun got that platform and hostfile" bash -c \
	"grep -q -- '-platform $work/pf-made/platform.xml -hostfile $work/pf-made/hostfile' '$work/rp1.err'"
# a platform file with its hostfile beside it, and a slower host: the time changes
mkdir -p "$work/pf-slow"
sed 's/speed="[^"]*"/speed="1e8f"/' "$work/pf-made/platform.xml" >"$work/pf-slow/p.xml"
cp "$work/pf-made/hostfile" "$work/pf-slow/hostfile"
"$T" replay --platform "$work/pf-slow/p.xml" -o "$work/rp2" "$work/ring" >"$work/rp2.out" 2>/dev/null
check "replay --platform FILE (hostfile beside it)" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/rp2.out"
check "  ...slower hosts, longer simulated time" bash -c \
	"[ \"\$(sed -n 's/^simulated time: \(.*\) s/\1/p' '$work/rp2.out')\" != '$(cat "$EXP/ring-simtime")' ]"
"$T" replay --platform "$work/no-such-platform" "$work/ring" >/dev/null 2>"$work/e"
check "replay --platform of a missing platform fails" [ $? = 1 ]
check "  ...says so" grep -q "no such platform" "$work/e"
mkdir -p "$work/pf-nohf" && cp "$work/pf-made/platform.xml" "$work/pf-nohf/"
"$T" replay --platform "$work/pf-nohf" "$work/ring" >/dev/null 2>"$work/e"
check "replay --platform without a hostfile fails" [ $? = 1 ]
check "  ...naming the hostfile" grep -q "pf-nohf/hostfile: cannot read the hostfile" "$work/e"
head -n 2 "$work/pf-made/hostfile" >"$work/pf-nohf/hostfile"
"$T" replay --platform "$work/pf-nohf" -o "$work/rp3" "$work/ring" >/dev/null 2>"$work/e"
check "replay --platform with too few hosts fails" [ $? = 1 ]
check "  ...saying the platform does not fit" grep -q "names 2 hosts, the trace of .* has 4 ranks" "$work/e"
check "  ...and replays nothing" absent "$work/rp3/smpirun.log"
"$T" replay --platform 2>/dev/null
check "replay --platform without its argument is a usage error" [ $? = 2 ]

# ---- 4. a real MPI ring -----------------------------------------------------
lib="$top_builddir/sensor/.libs/libtapestry-mpi-openmpi.so"
col="$top_builddir/tapestry-collector"
[ -x "$col" ] || col="$top_builddir/collector/tapestry-collector"
if command -v mpicc.openmpi >/dev/null && [ -f "$lib" ] && [ -x "$col" ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	mpicc.openmpi -O1 -o "$work/ring_ompi" "$top_srcdir/deploy/examples/ring.c" || exit 99
	(cd "$work" && TAPESTRY_COLLECTOR_BIN="$col" timeout 300 "$T" run \
		--sensors libc,mpi --mpi openmpi -o "$work/real" -- \
		mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD \
		-x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS ./ring_ompi) >"$work/run.out" 2>"$work/run.err"
	rc=$?
	check "real ring traced (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || tail -5 "$work/run.err"
	"$T" replay "$work/real" >"$work/real.out" 2>"$work/real.err"
	rc=$?
	check "real ring: exported and replayed (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || cat "$work/real.err"
	check "real ring: simulated time printed" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/real.out"
	cat "$work/real.out"
	# every call the sensor wraps (collectives, non-blocking, wildcards,
	# MPI_PROC_NULL, sub-communicators), traced for real and replayed;
	# without Open MPI's treematch topology component, which livelocks now
	# and then in MPI_Dist_graph_create, untraced too (tests/sensor/mpi_run.sh;
	# here it once held this run until its 300 s timeout)
	mpicc.openmpi -O1 -o "$work/calls" "$top_srcdir/tests/sensor/mpi_calls.c" || exit 99
	(cd "$work" && TAPESTRY_COLLECTOR_BIN="$col" timeout 300 "$T" run \
		--sensors libc,mpi --mpi openmpi -o "$work/calls_job" -- \
		mpirun.openmpi --oversubscribe --mca topo ^treematch -np 4 -x LD_PRELOAD \
		-x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS ./calls) >"$work/run2.out" 2>"$work/run2.err"
	rc=$?
	check "real every-call program traced (rc $rc)" [ $rc = 0 ]
	"$T" replay "$work/calls_job" >"$work/calls.out" 2>"$work/calls.err"
	rc=$?
	check "real every-call program: replayed (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || cat "$work/calls.err"
	check "  ...simulated time printed" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/calls.out"
	for a in isend irecv wait waitall bcast reduce allreduce gather gatherv scatter \
		scatterv allgather allgatherv alltoall alltoallv reducescatter scan exscan; do
		grep -q "^1 $a " "$work/calls_job/replay/simgrid-ti/rank_1.txt" ||
			{ echo "  no $a action"; fail=1; }
	done
	# collectives on sub-communicators (a split reordering its ranks, a
	# dup of it, MPI_COMM_SELF): written as messages among the members,
	# replayed; the output the same traced or not
	mpicc.openmpi -O1 -o "$work/split" "$top_srcdir/tests/manager/mpi_split.c" || exit 99
	(cd "$work" && timeout 120 mpirun.openmpi --oversubscribe -np 4 ./split) >"$work/split.plain" 2>&1
	(cd "$work" && TAPESTRY_COLLECTOR_BIN="$col" timeout 300 "$T" run \
		--sensors libc,mpi --mpi openmpi -o "$work/split_job" -- \
		mpirun.openmpi --oversubscribe -np 4 -x LD_PRELOAD \
		-x TAPESTRY_COLLECTOR -x TAPESTRY_SENSORS ./split) >"$work/split.out" 2>"$work/split.err"
	rc=$?
	check "sub-communicators: traced (rc $rc), output as untraced" \
		bash -c "[ $rc = 0 ] && grep -q checksum '$work/split.out' && cmp -s '$work/split.plain' '$work/split.out'"
	"$T" replay "$work/split_job" >"$work/split_rp.out" 2>"$work/split_rp.err"
	rc=$?
	check "sub-communicators: replayed (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || tail -5 "$work/split_rp.err"
	check "  ...simulated time printed" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/split_rp.out"
	check "  ...120 collectives written as messages, 60 on MPI_COMM_SELF need none, none skipped" bash -c "
		grep -q '120 collectives on communicators smaller than MPI_COMM_WORLD written' '$work/split_rp.err' &&
		grep -q '60 collectives on MPI_COMM_SELF need no action' '$work/split_rp.err' &&
		! grep -q 'skipped (the replay' '$work/split_rp.err'"
	check "  ...rank 1 sends to and receives from rank 3 on the collectives' tags" bash -c "
		grep -Eq '^1 send 3 214748[0-2][0-9]{3} ' '$work/split_job/replay/simgrid-ti/rank_1.txt' &&
		grep -Eq '^1 recv 3 214748[0-2][0-9]{3} ' '$work/split_job/replay/simgrid-ti/rank_1.txt'"
	check "  ...one tag per communicator: more than one in all" bash -c "
		[ \$(cat '$work/split_job/replay/simgrid-ti'/rank_*.txt | grep -Eo ' 214748[0-2][0-9]{3} ' | sort -u | wc -l) -gt 1 ]"
	if command -v smpicc >/dev/null; then
		(cd "$work" && smpicc -O1 -o ring_smpi "$top_srcdir/deploy/examples/ring.c" &&
		 smpirun -np 4 -platform "$work/real/replay/simgrid-platform/platform.xml" \
			-hostfile "$work/real/replay/simgrid-platform/hostfile" -trace-ti \
			--cfg=tracing/filename:ref.txt ./ring_smpi) >"$work/ref.log" 2>&1
		check "smpirun -trace-ti of the same source" [ -s "$work/ref.txt" ]
		# communication actions only, sizes in bytes (SimGrid writes a
		# count and a datatype id: 0 double, 1 int, 2 char, 6 byte ...)
		comm() { awk 'BEGIN { split("8 4 1 2 8 4 1 8 1", sz, " ") }
			$2 ~ /^(send|recv|isend|irecv)$/ {
				n = $5; if (NF >= 6) n *= sz[$6 + 1]
				print $1, $2, $3, $4, n }' "$@"; }
		ok=1
		for r in 0 1 2 3; do
			ref=$(sed -n "$((r + 1))p" "$work/ref.txt")
			comm "$work/$ref" >"$work/ref.$r"
			comm "$work/real/replay/simgrid-ti/rank_$r.txt" >"$work/ours.$r"
			[ -s "$work/ours.$r" ] && cmp -s "$work/ref.$r" "$work/ours.$r" ||
				{ ok=0; diff "$work/ref.$r" "$work/ours.$r" | head -5; }
		done
		check "real ring: per-rank peers, tags, sizes match smpirun -trace-ti" [ $ok = 1 ]
	fi
else
	echo "skip real ring: no Open MPI sensor or collector built"
fi

# ---- 5. MPI_Alltoallw and a killed rank, under both MPIs ------------------------
# mpi_alltoallw.c (uneven counts, a type per peer; world, reversed copy,
# halves of a split, in place): SMPI's replay has no alltoallw, so it is
# written as alltoallv of each rank's bytes, or as messages on a smaller
# communicator, with a warning; it replays to its end (it used to abort in
# MPI_ERR_TRUNCATE). mpi_killed.c: the last rank dies by SIGKILL before its
# sensor sent its MPI events; export and replay go on with the others and
# say which rank is missing.
for fl in openmpi mpich; do
	case $fl in
	openmpi) cc=mpicc.openmpi run=mpirun.openmpi opt=--oversubscribe ;;
	mpich) cc=mpicc.mpich run=mpirun.mpich opt= ;;
	esac
	lib="$top_builddir/sensor/.libs/libtapestry-mpi-$fl.so"
	if ! command -v $cc >/dev/null || ! command -v $run >/dev/null || [ ! -f "$lib" ] || [ ! -x "$col" ]; then
		echo "skip $fl alltoallw and killed rank: no $fl or its sensor"
		continue
	fi
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	$cc -O1 -o "$work/a2aw_$fl" "$top_srcdir/tests/manager/mpi_alltoallw.c" || exit 99
	$cc -O1 -o "$work/killed_$fl" "$top_srcdir/tests/manager/mpi_killed.c" || exit 99
	(cd "$work" && TAPESTRY_COLLECTOR_BIN="$col" timeout 300 "$T" run --sensors mpi \
		--mpi $fl -o "$work/a2aw_$fl.job" -- $run $opt -np 4 ./a2aw_$fl) \
		>"$work/a2aw_$fl.out" 2>"$work/a2aw_$fl.err"
	rc=$?
	check "$fl alltoallw: traced, its own check passes (rc $rc)" \
		bash -c "[ $rc = 0 ] && grep -q 'alltoallw ok 12' '$work/a2aw_$fl.out'"
	"$T" replay "$work/a2aw_$fl.job" >"$work/a2aw_$fl.rp" 2>"$work/a2aw_$fl.rerr"
	rc=$?
	check "$fl alltoallw: replayed (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || tail -4 "$work/a2aw_$fl.rerr"
	check "  ...simulated time printed" grep -Eq '^simulated time: [0-9.e+-]+ s$' "$work/a2aw_$fl.rp"
	check "  ...saying how the 48 MPI_Alltoallw were written" \
		grep -q "warning: 48 MPI_Alltoallw written as alltoallv of each rank's bytes (on a smaller communicator: its messages)" "$work/a2aw_$fl.rerr"
	check "  ...rank 1's world calls as alltoallv with each peer's bytes" \
		grep -qx '1 alltoallv 32 0 4 16 12 16 4 4 4 4' "$work/a2aw_$fl.job/replay/simgrid-ti/rank_1.txt"
	(cd "$work" && TAPESTRY_COLLECTOR_BIN="$col" timeout 300 "$T" run --sensors mpi \
		--mpi $fl -o "$work/killed_$fl.job" -- $run $opt -np 4 ./killed_$fl) \
		>"$work/killed_$fl.out" 2>"$work/killed_$fl.err"
	"$T" report "$work/killed_$fl.job" >"$work/killed_$fl.report" 2>&1
	"$T" export -f simgrid-ti -o "$work/killed_$fl.ti" "$work/killed_$fl.job" 2>"$work/killed_$fl.xerr"
	if grep -q 'no MPI events in this trace' "$work/killed_$fl.xerr"; then
		# the runtime killed every rank before any sent its events
		# (MPICH, now and then)
		check "$fl killed: no rank sent MPI events: said so, not --sensors mpi" bash -c "
			grep -q 'no MPI events in this trace: its [0-9]* processes with an MPI rank sent none' '$work/killed_$fl.xerr' &&
			! grep -q 'sensors mpi' '$work/killed_$fl.xerr'"
		continue
	fi
	"$T" replay "$work/killed_$fl.job" >"$work/killed_$fl.rp" 2>"$work/killed_$fl.rerr"
	rc=$?
	check "$fl killed rank: the others replayed (rc $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || tail -4 "$work/killed_$fl.rerr"
	# which ranks sent nothing depends on when the runtime killed them
	# (Open MPI: rank 3, the one that died; MPICH kills every rank at once)
	miss=$(sed -n 's/.*warning: .*MPI rank \([0-9]*\) of 4 has no MPI events.*replayed as a stand-in.*/\1/p' \
		"$work/killed_$fl.rerr" | tr '\n' ' ' | sed 's/ $//')
	echo "  $fl killed: missing ranks: ${miss:-none}"
	# (a rank that Open MPI kills while its sensor flushes can be missing
	# too: rank 1 once in a loaded clean-clone run; counted as lost, the
	# loss issue 33 names); rank 3 must be among them
	[ $fl = openmpi ] && check "  ...rank 3, the one killed, is said missing" \
		bash -c "[[ ' $miss ' == *' 3 '* ]]"
	d="$work/killed_$fl.job/replay/simgrid-ti"
	if [ -n "$miss" ]; then
		check "  ...the replay says which ($miss)" grep -Eq "^missing: ranks? $miss \(no MPI events" "$work/killed_$fl.rp"
		for k in $miss; do
			check "  ...replay.xml: rank $k missing" grep -q "<missing rank=\"$k\" replayed-as=\"stand-in\"/>" "$work/killed_$fl.job/replay/replay.xml"
			check "  ...no message to or from rank $k left" bash -c "
				! grep -Eq '^[0-9]+ (send|isend|recv|irecv) $k |^[0-9]+ (wait|test) ([0-9]+ $k|$k [0-9]+) ' '$d'/rank_*.txt"
			check "  ...its stand-in: init, world collectives (0 bytes of its own in alltoallv), finalize" bash -c "
				[ \"\$(head -n1 '$d/rank_$k.txt')\" = '$k init' ] &&
				[ \"\$(tail -n1 '$d/rank_$k.txt')\" = '$k finalize' ] &&
				! grep -Evq '^$k (init|finalize|comm_size 4|alltoallv 0 0 0 0 0 0 0 0 0 0|bcast 4 3|allreduce 4 0)\$' '$d/rank_$k.txt'"
		done
	fi
	if [ "$miss" = 3 ]; then
		check "  ...the stand-in takes part in the 5 alltoallv, bcast, allreduce" bash -c "
			[ \$(grep -c '^3 alltoallv 0 0 0 0 0 0 0 0 0 0$' '$d/rank_3.txt') = 5 ] &&
			[ \$(grep -c '^3 bcast 4 3$' '$d/rank_3.txt') = 5 ] &&
			[ \$(grep -c '^3 allreduce ' '$d/rank_3.txt') -ge 5 ]"
		check "  ...the others send it 0 bytes in the alltoallv" \
			grep -q '^0 alltoallv 40 4 8 12 0 16 4 4 4 0$' "$d/rank_0.txt"
	fi
	n=$(for f in "$d"/rank_*.txt; do grep -Ec '^[0-9]+ (barrier|bcast|reduce|allreduce|alltoallv|comm_size)' "$f"; done | sort -u | wc -l)
	check "  ...every rank replays the same number of world collectives" [ "$n" = 1 ]
done

exit $fail
