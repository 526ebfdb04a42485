# tests/security/lib.sh - helpers of the security scripts, on top of
# tests/collector/lib.sh (start_col, stop_col, cleanup, fail).
# Sourced; expects $B (build dir) and $T (a mkdtemp scratch dir).
. "${top_srcdir:-$B}/tests/collector/lib.sh"
ATTACK="$B/tests/security/attack"
TAP="$B/manager/tapestry"
SO=$B/sensor/.libs/libtapestry-sensor.so	# the sensor, when built
WRITER=$B/tests/security/writer		# a program for it to trace

# tls_port NAME : the TLS port printed by collector NAME (waits for it).
tls_port() {
	for i in $(seq 1 1200); do	# up to 60 s: the machine may be loaded
		p=$(sed -n 's/^listening-tls .*:\([0-9]*\)$/\1/p' "$T/$1.port" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
	done
	return 1
}

# expect_log NAME PATTERN WHAT : the log of collector NAME has PATTERN.
expect_log() {
	for i in $(seq 1 1200); do	# up to 60 s: the machine may be loaded
		grep -q -- "$2" "$T/$1.log" && {
			echo "  logged ($3): $(grep -- "$2" "$T/$1.log" | tail -1 | cut -c25-)"
			return 0
		}
		sleep 0.05
	done
	fail "$3: no log line matching '$2' in $1.log"
}

# secs FILE : the seconds= figure of a synth summary line.
secs() { sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' "$1"; }
