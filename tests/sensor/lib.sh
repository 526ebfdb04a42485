# tests/sensor/lib.sh - sourced by the sensor integration scripts.
# Run from the top build directory (as `make check` does); $srcdir is set
# by the test harness. Everything created lives in $T and is removed on
# exit, the receiver included.
set -u
B=$(pwd)
SO=$B/sensor/.libs/libtapestry-sensor.so
RECV=$B/tests/sensor/mini_receiver
DUMP=$B/tests/sensor/dump_trace
PROG=$B/tests/sensor/prog_libc
T=$(mktemp -d /tmp/tapestry-sensor-test.XXXXXX)
RPID=
PORT=

cleanup() {
	if [ -n "$RPID" ]; then
		kill -TERM "$RPID" 2>/dev/null
		wait "$RPID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[ -f "$SO" ] || fail "$SO not built"

# start_receiver JOBNAME [receiver options...]
start_receiver() {
	job=$1
	shift
	rm -f "$T/port"
	"$RECV" --listen 127.0.0.1:0 --output "$T/$job" --port-file "$T/port" "$@" &
	RPID=$!
	i=0
	while [ ! -s "$T/port" ]; do
		i=$((i + 1))
		[ $i -lt 500 ] || fail "receiver did not start"
		sleep 0.01
	done
	PORT=$(cat "$T/port")
}

stop_receiver() {
	kill -TERM "$RPID"
	wait "$RPID" || fail "receiver failed"
	RPID=
}

# traced CMD...: run CMD with the sensor preloaded, towards the receiver
traced() {
	env LD_PRELOAD="$SO" TAPESTRY_COLLECTOR="127.0.0.1:$PORT" "$@"
}

# count FILE PATTERN...: lines of FILE matching every pattern (fixed strings)
count() {
	f=$1
	shift
	cat "$f" > "$T/.count"
	for p in "$@"; do
		grep -F -e "$p" "$T/.count" > "$T/.count2" || true
		mv "$T/.count2" "$T/.count"
	done
	wc -l < "$T/.count" | tr -d ' '
}

expect() {
	# expect WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: got $2, want $3"
}
