# tests/collector/lib.sh - helpers of the collector integration scripts:
# start collectors on free loopback ports, wait for them, clean up.
# Sourced; expects $B (build dir) and $T (a mkdtemp scratch dir).

COL="$B/tapestry-collector"
SYNTH="$B/tests/collector/synth"
CHECK="$B/tests/collector/check"
PIDS=""

# start_col NAME ARGS... : runs a collector with --print-port, sets
# PORT_<NAME> and PID_<NAME>.
start_col() {
	name=$1; shift
	# emptied here, not by the redirection below: that one runs in the
	# child, and the loop could read the previous collector's port first
	# (a restarted name's children then went to a dead port: CI flake)
	: >"$T/$name.port"
	"$COL" --print-port --log-file "$T/$name.log" "$@" >"$T/$name.port" &
	pid=$!
	PIDS="$PIDS $pid"
	eval "PID_$name=$pid"
	# up to 60 s: a loaded machine (two CPU hogs beside the suite on
	# 2 cores) starts a collector in seconds, not milliseconds
	for i in $(seq 1 1200); do
		if grep -q '^listening' "$T/$name.port" 2>/dev/null; then
			port=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$T/$name.port")
			eval "PORT_$name=$port"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "collector $name did not start" >&2
	cat "$T/$name.log" >&2
	return 1
}

# stop_col NAME : SIGTERM (drain) and wait.
stop_col() {
	eval "pid=\$PID_$1"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
}

cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] || continue
		echo "== $f" >&2
		# what went wrong, then how it ended
		grep -v " info col_conn_welcome: \| info col_conn_close: " "$f" | tail -30 >&2
		tail -5 "$f" >&2
	done
	exit 1
}

# stored_batches_at_least DIR N PID : wait (3 min at most) until the job
# directory DIR holds N batches (its index: a 16-byte header, 40-byte
# entries) while process PID runs, so that a fault hits a run under way
# however loaded the machine is (a fixed sleep does not); 1 when PID
# ended first or the time ran out.
stored_batches_at_least() {
	for i in $(seq 1 3600); do
		[ "$(stat -c %s "$1/index" 2>/dev/null || echo 0)" -ge $((16 + 40 * $2)) ] &&
			return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# log_has NAME PATTERN PID : wait (3 min at most) until collector NAME's
# log has PATTERN while process PID runs; 1 when it did not come.
log_has() {
	for i in $(seq 1 3600); do
		grep -q -- "$2" "$T/$1.log" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# rss_kb PID : VmHWM of the process in kB.
hwm_kb() {
	sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}
