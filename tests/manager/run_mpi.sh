#!/usr/bin/env bash
# tests/manager/run_mpi.sh - `tapestry run -- LAUNCHER -np 4 RING` with the
# real launchers: the traced program prints what it prints untraced, every
# process (launcher, MPICH's proxy, the ranks) is traced, and the ranks' MPI
# calls are traced without --sensors (an MPI launcher turns the MPI sensor
# on). MPICH's proxy rearranges its descriptors in a forked child before it
# execs a rank: the preloaded sensor once failed it ("HYDU_create_process:
# dup2 error (Bad file descriptor)") for every MPICH program.
# Exit 77 when no MPI flavour and its ring program are available.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
work=$(mktemp -d /tmp/tapestry-test-runmpi.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0 ran=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# flavour launcher ring-program
for case in "mpich mpirun.mpich mpi_ring_mpich" "openmpi mpirun.openmpi mpi_ring_ompi"; do
	set -- $case
	fl=$1 launcher=$(command -v "$2") ring=$top_builddir/tests/sensor/$3
	[ -n "$launcher" ] && [ -x "$ring" ] || { echo "skip $fl: no $2 or $3"; continue; }
	ran=1
	extra=
	[ "$fl" = openmpi ] && extra=--oversubscribe
	timeout 120 "$launcher" $extra -np 4 "$ring" >"$work/$fl.plain" 2>&1
	check "$fl: untraced ring runs" [ $? = 0 ]
	timeout 180 "$T" run -o "$work/$fl.job" -- "$launcher" $extra -np 4 "$ring" \
		>"$work/$fl.traced" 2>"$work/$fl.err"
	rc=$?
	check "$fl: tapestry run exits with the launcher's status ($rc)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || tail -n 20 "$work/$fl.err"
	check "$fl: program output unchanged" cmp -s "$work/$fl.plain" "$work/$fl.traced"
	check "$fl: no launcher error" bash -c "! grep -q 'Bad file descriptor' '$work/$fl.err'"
	"$T" export -f csv -o "$work/$fl.csv" "$work/$fl.job" 2>"$work/$fl.export.err"
	check "$fl: export csv succeeds" [ $? = 0 ]
	npid=$(awk -F, 'NR>1 && $11!="" {print $11}' "$work/$fl.csv" | sort -u | wc -l)
	check "$fl: 4 ranks traced, the launchers left out (got $npid pids)" [ "$npid" = 4 ]
	"$T" report "$work/$fl.job" >"$work/$fl.report" 2>&1
	check "$fl: the launcher's events counted apart" grep -q '^launchers  *[1-9][0-9]* events of launchers' "$work/$fl.report"
	nmpi=$(awk -F, '$3 ~ /^MPI_Send|^MPI_Recv|^MPI_Sendrecv/' "$work/$fl.csv" | wc -l)
	check "$fl: MPI calls traced by default (got $nmpi)" [ "$nmpi" -ge 4 ]
	# a quiet terminal: tapestry's own lines only (start, oversubscription
	# when this host has fewer than 4 cores, summary), collector logs in
	# DIR/logs, no progress line when stderr is not a terminal
	nlines=$(wc -l < "$work/$fl.err")
	check "$fl: tapestry adds at most 6 lines (got $nlines)" [ "$nlines" -le 6 ]
	check "$fl: every line is tapestry's" bash -c "! grep -v '^tapestry: ' '$work/$fl.err'"
	check "$fl: no progress line off a terminal" bash -c "! grep -q \$'\r' '$work/$fl.err'"
	check "$fl: one start line naming the flavour" grep -q "^tapestry: tracing .*sensors libc,mpi,mem, $fl; collectors up" "$work/$fl.err"
	check "$fl: summary" grep -Eq "^tapestry: [0-9]+ events from [0-9]+ processes \(4 MPI ranks; [0-9]+ launcher process(es)?(; [0-9]+ streams: an exec starts one)?\), none lost; clock: " "$work/$fl.err"
	check "$fl: collector logs in DIR/logs" grep -q "connected" "$work/$fl.job/logs/collector-node.log"
	if [ "$(nproc)" -lt 4 ]; then
		check "$fl: oversubscription said" grep -q "^tapestry: 4 ranks on $(nproc) cores here: oversubscribed" "$work/$fl.err"
		# the sensors hold the trace: said in that line, not by them
		check "$fl: the holding said by tapestry" grep -q "^tapestry: 4 ranks on $(nproc) cores here: oversubscribed, .*; the sensors hold the trace" "$work/$fl.err"
		check "$fl: ...not by the sensors" bash -c "! grep -q 'holding the trace' '$work/$fl.err'"
	fi
done
[ $ran = 1 ] || exit 77

# -v: the collectors' messages on the terminal too
timeout 120 "$T" run -v --no-pingpong -o "$work/v.job" -- true 2>"$work/v.err"
check "-v: run succeeds" [ $? = 0 ]
check "-v: collector messages shown" grep -q " info " "$work/v.err"
check "-v: ...and kept in DIR/logs" grep -q " info " "$work/v.job/logs/collector-root.log"

# on a terminal (script(1) gives one), the trace read back shows a progress
# line (from 65536 events on), erased before the summary
if command -v script >/dev/null; then
	TAPESTRY_RING_FULL=wait timeout 120 script -qec "'$T' run -o '$work/tty.job' -- \
		'$top_builddir/tests/sensor/prog_libc' burst 200000 '$work'" /dev/null >"$work/tty.out" 2>&1
	check "on a terminal: run succeeds" [ $? = 0 ]
	check "  ...a progress line" grep -aq $'\rtapestry: reading the trace: .* of .* events, .*/s' "$work/tty.out"
	check "  ...then the summary" grep -aq 'events from 1 process, none lost' "$work/tty.out"
fi

# the flavour from links and alternatives: a link to Debian's mpirun
if [ -e /etc/alternatives/mpirun ] && [ -x "$top_builddir/tests/sensor/mpi_ring_ompi" ] &&
   [ "$(readlink -f /etc/alternatives/mpirun)" = "$(readlink -f "$(command -v orterun 2>/dev/null || echo none)")" ]; then
	ln -s /etc/alternatives/mpirun "$work/launch-it"
	timeout 120 "$T" run --no-pingpong -o "$work/alt.job" -- "$work/launch-it" --oversubscribe \
		-np 2 "$top_builddir/tests/sensor/mpi_ring_ompi" >/dev/null 2>"$work/alt.err"
	check "a link to the mpirun alternative runs" [ $? = 0 ]
	check "  ...as Open MPI with the MPI sensor" grep -q "sensors libc,mpi,mem, openmpi;" "$work/alt.err"
fi

# a program that links MPI, run without a launcher (a singleton): the MPI
# sensor is on, the flavour from its libraries
if command -v mpicc.mpich >/dev/null; then
	printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { int r; MPI_Init(&c, &v);\n MPI_Comm_rank(MPI_COMM_WORLD, &r); printf("rank %%d\\n", r); MPI_Finalize(); return 0; }\n' >"$work/single.c"
	mpicc.mpich -o "$work/single" "$work/single.c" || exit 99
	timeout 120 "$T" run -o "$work/single.job" -- "$work/single" >"$work/single.out" 2>"$work/single.err"
	check "an MPI program alone runs traced" [ $? = 0 ]
	check "  ...with the MPICH sensor, told by its libraries" grep -q "sensors libc,mpi,mem, mpich;" "$work/single.err"
	check "  ...its rank traced" grep -q "(1 MPI rank)" "$work/single.err"
fi

# bad input: a launcher whose flavour nothing tells, one clear line naming
# what was tried; --sensors still overrides; nothing left running
printf '#!/bin/sh\necho "some launcher 1.0"\nshift 2; exec "$@"\n' > "$work/mpirun"
chmod +x "$work/mpirun"
timeout 60 "$T" run -o "$work/bad.job" -- "$work/mpirun" -np 2 /bin/true 2>"$work/bad.err"
check "unknown launcher flavour is a usage error" [ $? = 2 ]
check "  ...one line" [ "$(wc -l < "$work/bad.err")" = 1 ]
check "  ...naming what was tried" grep -q "cannot tell which MPI .*mpirun uses (tried: .*--version.*): give --mpi" "$work/bad.err"
check "  ...no job directory" [ ! -e "$work/bad.job" ]
timeout 60 "$T" run --sensors libc,mem -o "$work/ok.job" -- "$work/mpirun" -np 2 /bin/true >/dev/null 2>"$work/ok.err"
check "--sensors libc,mem overrides" [ $? = 0 ]
timeout 60 "$T" run --sensors libc,mpi -o "$work/bad2.job" -- /bin/true 2>"$work/bad2.err"
check "--sensors mpi for a program without MPI is a usage error" [ $? = 2 ]
check "  ...saying so" grep -q "ldd .*: no MPI library" "$work/bad2.err"
check "  ...nothing left running" bash -c "! pgrep -f '[t]apestry-collector.*$work' >/dev/null"
exit $fail
