# tests/sensor/lib.sh - sourced by the sensor integration scripts.
# Run from the top build directory (as `make check` does); $srcdir is set
# by the test harness. The trace takes the path users run: sensor -> node
# collector -> root collector writing the job directory, both real
# tapestry-collector daemons on 127.0.0.1 on ports they pick themselves;
# dump_trace reads the job directory back. Everything created lives in $T
# and is removed on exit, the collectors included; every program run is
# bounded by timeout(1) and every wait by a loop with a limit.
set -u
B=$(pwd)
SO=$B/sensor/.libs/libtapestry-sensor.so
COL=$B/tapestry-collector
DUMP=$B/tests/sensor/dump_trace
PROG=$B/tests/sensor/prog_libc
TMO=${SENSOR_TEST_TIMEOUT:-120}	# seconds per program run
ROOT_ID=7a9e5e0000000001	# fixed node ids: their CLOCK frames are
NODE_ID=7a9e5e0000000002	# not sensor streams (see `streams`)
T=$(mktemp -d /tmp/tapestry-sensor-test.XXXXXX) || exit 99
# the sensors' calibration cache (sensor-runtime.md): the test's own, cold
# at its start (the first process measures, the next ones read it)
mkdir -m 700 "$T/cache" && export TAPESTRY_CACHE_DIR="$T/cache"
RPID=			# root collector
NPID=			# node collector
RPORT=			# root's port
PORT=			# node's port: TAPESTRY_COLLECTOR of the traced programs
JOB=			# job directory of the running root
SECARG=			# --secret-file FILE given to both collectors

cleanup() {
	for _p in $NPID $RPID; do
		kill -CONT "$_p" 2>/dev/null
		kill -KILL "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 99' INT TERM HUP

fail() {
	echo "FAIL: $*" >&2
	for _f in "$T"/root.log "$T"/node.log; do
		[ -s "$_f" ] && { echo "--- $_f" >&2; tail -n 20 "$_f" >&2; }
	done
	exit 1
}

[ -f "$SO" ] || fail "$SO not built"
[ -x "$COL" ] || fail "$COL not built"

# alive PID: the process exists and is not a zombie waiting to be reaped
alive() {
	_st=$(sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ]
}

# col_start NAME ARGS...: start one tapestry-collector, log in $T/NAME.log
# (appended: a restarted collector keeps its predecessor's lines); sets
# CPID and CPORT once it listens (10 s at most).
col_start() {
	_name=$1
	shift
	rm -f "$T/$_name.out"
	"$COL" --print-port --drain-timeout 10s "$@" \
		> "$T/$_name.out" 2>> "$T/$_name.log" &
	CPID=$!
	CPORT=
	_i=0
	while [ -z "$CPORT" ]; do
		CPORT=$(sed -n 's/^listening .*:\([0-9][0-9]*\)$/\1/p' \
			"$T/$_name.out" 2>/dev/null)
		[ -n "$CPORT" ] && break
		alive "$CPID" || fail "$_name collector exited at start"
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail "$_name collector did not start"
		sleep 0.01
	done
}

# node_start [LISTEN]: the node collector, forwarding to the root; LISTEN
# defaults to 127.0.0.1:0 (a free port). Sets NPID and PORT.
node_start() {
	# shellcheck disable=SC2086
	col_start node --node-id "0x$NODE_ID" --name node \
		--parent "127.0.0.1:$RPORT" --listen "${1:-127.0.0.1:0}" $SECARG
	NPID=$CPID
	PORT=$CPORT
}

# start_collectors JOBNAME [SECRET_FILE]: a root collector storing into
# the new job directory $T/JOBNAME and a node collector below it.
start_collectors() {
	JOB=$T/$1
	SECARG=
	[ $# -ge 2 ] && SECARG="--secret-file $2"
	mkdir "$JOB" || fail "mkdir $JOB"
	# shellcheck disable=SC2086
	col_start root --node-id "0x$ROOT_ID" --name root --output "$JOB" \
		--listen 127.0.0.1:0 $SECARG
	RPID=$CPID
	RPORT=$CPORT
	node_start
}

# stop_pid NAME PID: SIGTERM (a collector drains: everything acknowledged
# or --drain-timeout), wait at most 20 s, fail unless it exited with 0.
stop_pid() {
	kill -CONT "$2" 2>/dev/null
	kill -TERM "$2" 2>/dev/null
	_i=0
	while alive "$2"; do
		_i=$((_i + 1))
		if [ $_i -ge 2000 ]; then
			kill -KILL "$2" 2>/dev/null
			wait "$2" 2>/dev/null
			fail "$1 collector did not exit after SIGTERM"
		fi
		sleep 0.01
	done
	wait "$2" || fail "$1 collector exited with $?"
}

# stop_collectors: the node first (it drains into the root), then the root.
stop_collectors() {
	_p=$NPID
	NPID=
	stop_pid node "$_p"
	_p=$RPID
	RPID=
	stop_pid root "$_p"
}

# traced CMD...: run CMD with the sensor preloaded, towards the node
# collector (timeout propagates the exit status, signal deaths included)
traced() {
	timeout -k 5 "$TMO" env LD_PRELOAD="$SO" \
		TAPESTRY_COLLECTOR="127.0.0.1:$PORT" "$@"
}

# untraced CMD...: the same run without the sensor
untraced() {
	timeout -k 5 "$TMO" "$@"
}

# dump JOBDIR OUT: dump_trace JOBDIR into OUT, and check that no BATCH was
# stored twice (dump_trace skips a repeated (stream, seq), so compare the
# index, one 40-byte entry per stored BATCH after a 16-byte header, with
# the distinct batches it counted).
dump() {
	"$DUMP" "$1" > "$2" || fail "dump_trace $1"
	_stored=0
	if [ -f "$1/index" ]; then
		_stored=$((($(wc -c < "$1/index") - 16) / 40))
	fi
	_distinct=$(sed -n 's/^total .* batches=\([0-9]*\) .*/\1/p' "$2" |
		awk '{ s += $1 } END { print s + 0 }')
	expect "$1: stored batches (index) vs distinct batches" \
		"$_stored" "$_distinct"
}

# streams DUMP: the sensor streams of a dump (the collectors' own CLOCK
# frames show up as streams named by their node ids: not counted)
streams() {
	grep '^total ' "$1" | grep -v -e "stream=$ROOT_ID " \
		-e "stream=$NODE_ID " | wc -l | tr -d ' '
}

# count FILE PATTERN...: lines of FILE matching every pattern (fixed strings)
count() {
	_f=$1
	shift
	cat "$_f" > "$T/.count"
	for _p in "$@"; do
		grep -F -e "$_p" "$T/.count" > "$T/.count2" || true
		mv "$T/.count2" "$T/.count"
	done
	wc -l < "$T/.count" | tr -d ' '
}

# calls FILE PATTERN...: the calls the matching lines record: a line's
# count= (a run of stdio calls, docs/modules/sensor-libc.md) or 1
calls() {
	count "$@" > /dev/null
	awk '{ n = 1; if (match($0, / count=[0-9]+/)) n = substr($0, RSTART + 7, RLENGTH - 7) + 0; s += n }
	     END { print s + 0 }' "$T/.count"
}

# sumf FILE FIELD PATTERN...: the sum of FIELD= over the matching lines
sumf() {
	_sf=$2
	_ff=$1
	shift 2
	count "$_ff" "$@" > /dev/null
	awk -v f=" $_sf=" '{ i = index($0, f); if (i) { v = substr($0, i + length(f)); sub(/ .*/, "", v); s += v } }
	     END { print s + 0 }' "$T/.count"
}

expect() {
	# expect WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got $2, want $3"
}
