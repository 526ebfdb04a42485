#!/bin/sh
# tests/security/faults.sh - the fault matrix, with network namespaces as
# hosts on one machine (root only; exit 77 when not root or when network
# namespaces are not available):
#
#   host A (node collector, sensors)  --veth 10.213.1.0/24--
#   host G (gateway collector)        --veth 10.213.2.0/24--
#   host R (root receiver, job directory)
#
# Links between hosts are TLS 1.3 with mutual certificates from
# `tapestry ca`, sensors talk to their node collector in clear on host A's
# loopback, every edge proves the job secret. Each case counts the events
# the synthetic sensors produced against the events stored at the root
# (tests/collector/check: every (stream, seq) exactly once):
#   1. kill -9 of the node collector, restarted on the same port;
#   2. kill -9 of the gateway, restarted;
#   3. kill -9 of the root receiver, restarted on the same job directory
#      (append mode: it deduplicates against what it stored before);
#   4. the A-G link down for FAULTS_LINK_DOWN_S seconds (default 20);
#   5. the application (the real sensor, a program writing 8-byte records
#      in a loop) killed by SIGKILL: what is lost is what its buffers held;
#      measured and printed.
# Every namespace, veth and process is removed on exit.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "faults: not root, skipped"; exit 77; }
command -v ip >/dev/null || { echo "faults: no ip command, skipped"; exit 77; }
T=$(mktemp -d /tmp/sec-faults-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
ID=$(( $$ % 10000 ))
NA=tpA$ID NG=tpG$ID NR=tpR$ID
NSES=""
teardown() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ns in $NSES; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$T"
}
trap teardown EXIT INT TERM
for ns in $NA $NG $NR; do
	ip netns add "$ns" 2>/dev/null || { echo "faults: cannot create network namespaces, skipped"; exit 77; }
	NSES="$NSES $ns"
	ip -n "$ns" link set lo up
done
# veth names are unique per run too (they exist in the root namespace
# for an instant)
ip link add a$ID netns "$NA" type veth peer name ga$ID netns "$NG" || { echo "faults: no veth, skipped"; exit 77; }
ip link add g$ID netns "$NG" type veth peer name rg$ID netns "$NR" || exit 1
ip -n "$NA" addr add 10.213.1.1/24 dev a$ID
ip -n "$NG" addr add 10.213.1.2/24 dev ga$ID
ip -n "$NG" addr add 10.213.2.1/24 dev g$ID
ip -n "$NR" addr add 10.213.2.2/24 dev rg$ID
for l in "$NA a$ID" "$NG ga$ID" "$NG g$ID" "$NR rg$ID"; do
	set -- $l
	ip -n "$1" link set "$2" up
done

"$TAP" ca "$T/cred" --hosts hostA,hostG,hostR >/dev/null || fail "tapestry ca"
C=$T/cred
tlsf() { echo "--tls-cert $C/$1.crt --tls-key $C/$1.key --tls-ca $C/ca.crt --secret-file $C/secret"; }
COMMON="--stats-period 1s --clock-period 1s --handshake-timeout 3s"

# start_ns NAME NS ARGS... : a collector inside namespace NS
start_ns() {
	name=$1; ns=$2; shift 2
	: >"$T/$name.port"
	ip netns exec "$ns" "$COL" --print-port --log-file "$T/$name.log" "$@" >"$T/$name.port" &
	pid=$!
	PIDS="$PIDS $pid"
	eval "PID_$name=$pid"
	for i in $(seq 1 200); do
		grep -q '^listening' "$T/$name.port" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "collector $name did not start in $ns"
}
fresh_logs() { rm -f "$T"/root.log "$T"/gw.log "$T"/node.log; }
root_up() { start_ns root $NR --listen 127.0.0.1:0 --tls-listen 10.213.2.2:7461 --output "$T/job$1" $(tlsf hostR) $COMMON; }
gw_up() { start_ns gw $NG --listen 127.0.0.1:0 --tls-listen 10.213.1.2:7460 --parent 10.213.2.2:7461 --spill-dir "$T/spillG" $(tlsf hostG) $COMMON; }
node_up() { start_ns node $NA --listen 127.0.0.1:7450 --parent 10.213.1.2:7460 --spill-dir "$T/spillA" $(tlsf hostA) $COMMON; }
kill9() { eval "p=\$PID_$1"; kill -9 "$p"; wait "$p" 2>/dev/null; }
all_down() { stop_col node || fail "node drain"; stop_col gw || fail "gateway drain"; stop_col root || fail "root drain"; }

S=4 E=5000000 BATCH=4096
synth_bg() {
	ip netns exec "$NA" "$SYNTH" --connect 127.0.0.1:7450 --streams $S --events $E --batch $BATCH \
		--level 1 --unique --secret-file "$C/secret" --timeout 150 >"$T/synth$1.out" 2>&1 &
	SY=$!
	PIDS="$PIDS $SY"
}
# verdict N WHAT : count produced and stored events of case N
verdict() {
	wait $SY || fail "case $1 ($2): synth: $(cat $T/synth$1.out)"
	all_down
	"$CHECK" --dir "$T/job$1" --streams $S --events $E --batch $BATCH --unique >"$T/check$1.out" ||
		{ cat "$T/check$1.out"; fail "case $1 ($2): events lost or duplicated"; }
	stored=$(sed -n 's/.* events=\([0-9]*\)\/.*/\1/p' "$T/check$1.out")
	dups=$(sed -n 's/.*duplicates=\([0-9]*\).*/\1/p' "$T/check$1.out")
	printf '  case %s %-34s produced %s stored %s lost %s duplicates %s (%s s)\n' "$1" "$2:" \
		$((S * E)) "$stored" $((S * E - stored)) "$dups" "$(secs $T/synth$1.out)"
	rm -rf "$T/job$1"
}

# stored_at_least N CASE: wait (3 min at most) until the root of case CASE
# has stored N batches (its index: 16-byte header, 40-byte entries), so
# that a kill hits a run under way however loaded the machine is: a fixed
# sleep killed the root before it stored anything at load 8-12, and the
# restarted root had no job to reopen (issue 33)
stored_at_least() {
	for i in $(seq 1 3600); do
		[ "$(stat -c %s "$T/job$2/index" 2>/dev/null || echo 0)" -ge $((16 + 40 * $1)) ] &&
			return 0
		kill -0 "$SY" 2>/dev/null || break
		sleep 0.05
	done
	fail "case $2: the root stored fewer than $1 batches"
}

t_start=$(date +%s)
echo "== 1. kill -9 of the node collector, restarted"
fresh_logs; root_up 1; gw_up; node_up
synth_bg 1
stored_at_least 4 1
kill9 node
node_up
verdict 1 "node collector killed" 
grep -q "reconnects=0 " "$T/synth1.out" && fail "case 1: the kill did not hit the run"

echo "== 2. kill -9 of the gateway, restarted"
fresh_logs; root_up 2; gw_up; node_up
synth_bg 2
stored_at_least 4 2
kill9 gw
gw_up
verdict 2 "gateway killed"
grep -q "parent 10.213.1.2:7460 lost" "$T/node.log" || fail "case 2: the kill did not hit the run"

echo "== 3. kill -9 of the root receiver, restarted (append)"
fresh_logs; root_up 3; gw_up; node_up
synth_bg 3
stored_at_least 4 3
kill9 root
root_up 3
grep -q "reopened" "$T/root.log" || fail "case 3: the root did not reopen its job"
verdict 3 "root receiver killed"
grep -q "parent 10.213.2.2:7461 lost" "$T/gw.log" || fail "case 3: the kill did not hit the run"

DOWN=${FAULTS_LINK_DOWN_S:-20}
echo "== 4. link A-G down for $DOWN s"
fresh_logs; root_up 4; gw_up; node_up
synth_bg 4
stored_at_least 4 4
ip -n "$NG" link set ga$ID down
sleep "$DOWN"
ip -n "$NG" link set ga$ID up
verdict 4 "link down ${DOWN} s"
[ "$(secs $T/synth4.out | cut -d. -f1)" -ge "$DOWN" ] || fail "case 4: the run ended before the link came back"

echo "== 5. the application killed by SIGKILL"
LIB="$B/sensor/.libs/libtapestry-sensor.so"
if [ -f "$LIB" ]; then
	cat >"$T/writer.c" <<'EOC'
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (uint64_t i = 0;; i++)
		if (write(fd, &i, 8) != 8)
			return 1;
}
EOC
	cc -O1 -o "$T/writer" "$T/writer.c" || fail "cannot build the writer"
	fresh_logs; root_up 5; gw_up; node_up
	ip netns exec "$NA" env LD_PRELOAD="$LIB" TAPESTRY_COLLECTOR=127.0.0.1:7450 \
		TAPESTRY_SECRET_FILE="$C/secret" TAPESTRY_SENSORS=libc TAPESTRY_BUFFER_BYTES=16M \
		"$T/writer" "$T/records" &
	W=$!
	PIDS="$PIDS $W"
	t0=$(date +%s%N)
	# killed once some of it is stored and a second has passed, however
	# slow the machine (a fixed sleep stored nothing at load 8-12)
	stored_batches_at_least "$T/job5" 1 $W || fail "case 5: nothing stored"
	sleep 1
	kill -9 $W
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait $W 2>/dev/null
	sleep 0.5
	all_down
	done_writes=$(( $(stat -c %s "$T/records") / 8 ))
	TAPESTRY_NO_CORRECTION=1 "$TAP" export -f csv -o "$T/job5.csv" "$T/job5" 2>"$T/export5.err" ||
		fail "case 5: export: $(cat $T/export5.err)"
	stored=$(awk -F, '$3=="write" && $6==8' "$T/job5.csv" | wc -l)
	lost=$((done_writes - stored))
	# the bound: what the killed process held - its rings (3/4 of the
	# 16 MiB budget, 64-byte records at most 196608 events) and the
	# batches not yet acknowledged
	printf '  case 5 %-34s produced %s stored %s lost %s (%s%% of the run; %s ms of writes at %s/s)\n' \
		"application killed (SIGKILL):" "$done_writes" "$stored" "$lost" \
		"$(awk -v l=$lost -v d=$done_writes 'BEGIN{printf "%.3f", d ? 100*l/d : 0}')" \
		"$(awk -v l=$lost -v d=$done_writes -v ms=$ms 'BEGIN{printf "%.1f", d ? ms*l/d : 0}')" $((done_writes * 1000 / ms))
	[ "$stored" -gt 0 ] || fail "case 5: nothing stored"
	[ "$lost" -ge 0 ] || fail "case 5: more writes stored ($stored) than done ($done_writes)"
	"$TAP" report "$T/job5" >"$T/report5.txt" 2>&1 || fail "case 5: report"
	grep -i "lost" "$T/report5.txt" | head -3 | sed 's/^/    report: /'
	# drops the sensor counted (its buffers full while the machine is busy)
	# are in the trace; what is not counted is at most what it held
	counted=$(sed -n 's/^losses *\([0-9]*\) events counted lost.*/\1/p' "$T/report5.txt")
	uncounted=$((lost - ${counted:-0}))
	echo "    $lost lost: ${counted:-0} counted in the trace, $uncounted not (the killed process's buffers)"
	[ "$uncounted" -le 262144 ] || fail "case 5: $uncounted events lost uncounted, more than the sensor's buffers hold"
else
	echo "  case 5 skipped: no sensor library"
fi
echo "fault matrix: $(( $(date +%s) - t_start )) s"
echo PASS
