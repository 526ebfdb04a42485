# bench/lttng_lib.sh - sourced by the benches that run LTTng-UST beside the
# sensor (sensor_overhead.sh, sustained.sh): a private lttng-sessiond whose
# LTTNG_HOME is $LH (as root the LTTng part runs as user nobody, because a
# root session daemon would use the system's /var/run/lttng). The caller
# sets LH (a directory under its temp dir), SESSION (empty) and SHM_BEFORE
# (the lttng-ust-wait- files of /dev/shm before it started) and calls
# stop_lttng on exit.

# as_lttng CMD...: run CMD as the LTTng user with the private LTTNG_HOME
as_lttng() {
	if [ "$(id -u)" = 0 ]; then
		timeout -k 5 300 setpriv --reuid=65534 --regid=65534 \
			--clear-groups env HOME="$LH" LTTNG_HOME="$LH" "$@"
	else
		timeout -k 5 300 env HOME="$LH" LTTNG_HOME="$LH" "$@"
	fi
}

# our_lttng_pids: the processes whose command line names our private
# LTTNG_HOME: the session daemon (started with --load=$LH/...) and its
# consumer daemons (their sockets are under $LH/.lttng)
our_lttng_pids() {
	for d in /proc/[0-9]*; do
		{ tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null | grep -qF "$LH/" &&
			echo "${d#/proc/}"
	done
}

stop_lttng() {
	[ -d "$LH" ] || return 0
	if [ -n "$SESSION" ]; then
		as_lttng lttng destroy "$SESSION" > /dev/null 2>&1
		SESSION=
	fi
	pids=$(our_lttng_pids | sort -u)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	i=0
	while [ $i -lt 100 ] && [ -n "$(our_lttng_pids)" ]; do
		i=$((i + 1))
		sleep 0.05
	done
	pids=$(our_lttng_pids | sort -u)
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	# the wait files LTTng-UST programs create, if this run created them
	for f in $(ls /dev/shm 2>/dev/null | grep '^lttng-ust-wait-'); do
		echo "$SHM_BEFORE" | grep -qxF "$f" || rm -f "/dev/shm/$f"
	done
}

# lttng_tools_ok: 0 when CC can include lttng/tracepoint.h and lttng,
# lttng-sessiond are there; else says why
lttng_tools_ok() {
	if ! echo '#include <lttng/tracepoint.h>' |
		"${CC:-cc}" -E -x c - > /dev/null 2>&1; then
		echo "${CC:-cc} cannot include lttng/tracepoint.h (liblttng-ust-dev" \
			"not installed?): skipped"
		return 1
	fi
	for p in lttng lttng-sessiond; do
		command -v $p > /dev/null ||
			{ echo "$p not found (lttng-tools): skipped"; return 1; }
	done
}

# start_sessiond LOG: the private session daemon (LH made readable for it)
start_sessiond() {
	mkdir -p "$LH/no-autoload"
	[ "$(id -u)" = 0 ] && chown 65534:65534 "$LH" "$LH/no-autoload"
	# --load: an empty directory instead of the system's auto-load one
	as_lttng lttng-sessiond --daemonize --no-kernel \
		--load="$LH/no-autoload" > "$1" 2>&1
}

# session_start NAME LOG: a session writing under $LH/trace with the
# benchmark's event enabled, on large sub-buffers (so that the consumer
# keeps up and no event is discarded: a discarded event costs less than a
# recorded one)
session_start() {
	SESSION=$1
	{ as_lttng lttng create "$SESSION" --output="$LH/trace-$SESSION" &&
		as_lttng lttng enable-channel -u -s "$SESSION" \
			--subbuf-size=8M --num-subbuf=8 ch &&
		as_lttng lttng enable-event -u -s "$SESSION" -c ch \
			tapestry_bench:write &&
		as_lttng lttng start "$SESSION"; } > "$2" 2>&1
}

# session_stop: stop and destroy the session; prints the events it
# discarded
session_stop() {
	as_lttng lttng stop "$SESSION" > /dev/null 2>&1
	as_lttng lttng list "$SESSION" 2>/dev/null |
		sed -n 's/^ *Discarded events: *\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
	as_lttng lttng destroy "$SESSION" > /dev/null 2>&1
	SESSION=
}
