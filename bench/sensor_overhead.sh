#!/bin/sh
# bench/sensor_overhead.sh - the libc sensor's added cost per traced call.
# Run from the top build directory after `make check` (for the receiver)
# and `make bench`. Prints bench/sensor_overhead's figures without and with
# the sensor preloaded (streaming to tests/sensor/mini_receiver), and the
# LTTng-UST tracepoint cost when liblttng-ust-dev is installed.
set -u
B=$(pwd)
SO=$B/sensor/.libs/libtapestry-sensor.so
BIN=$B/bench/sensor_overhead
RECV=$B/tests/sensor/mini_receiver
for f in "$SO" "$BIN" "$RECV"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "missing $f: run make check and make bench" >&2; exit 1; }
done
T=$(mktemp -d /tmp/tapestry-bench.XXXXXX)
RPID=
trap '[ -n "$RPID" ] && kill $RPID 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
"$RECV" --listen 127.0.0.1:0 --output "$T/job" --port-file "$T/port" &
RPID=$!
while [ ! -s "$T/port" ]; do sleep 0.01; done
echo "== without the sensor"
"$BIN" "$@"
echo "== with libtapestry-sensor.so preloaded"
LD_PRELOAD=$SO TAPESTRY_COLLECTOR=127.0.0.1:$(cat "$T/port") "$BIN" "$@"
if [ -f /usr/include/lttng/tracepoint.h ]; then
	echo "== LTTng-UST: installed, but no tracepoint provider is built here yet"
else
	echo "== LTTng-UST: liblttng-ust-dev not installed, skipped"
fi
