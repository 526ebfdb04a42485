#!/bin/sh
# tests/sensor/fatal.sh - a program that dies of a signal (SIGSEGV,
# SIGABRT, SIGINT, SIGHUP, SIGPIPE): its events up to the signal are in the
# trace, its stream ends, it still dies of the signal; a SIGHUP ignored from
# the start stays ignored.
. "$srcdir/tests/sensor/lib.sh"
N=1000
for mode in segv abort; do
	untraced "$PROG" $mode $N "$T" > "$T/out.plain" 2>/dev/null
	rc1=$?
	start_collectors "job-$mode"
	traced "$PROG" $mode $N "$T" > "$T/out.traced" 2>/dev/null
	rc2=$?
	stop_collectors
	expect "$mode exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" || fail "$mode: output differs"
	dump "$T/job-$mode" "$T/dump"
	expect "$mode: writes before the crash" \
		"$(count "$T/dump" " name=write " " bytes=64 ")" $N
	sig=11
	[ $mode = abort ] && sig=6
	expect "$mode: signal event" "$(count "$T/dump" " name=signal " " signo=$sig")" 1
	grep -q '^total .* bye=2$' "$T/dump" || fail "$mode: no BYE(signal)"
	echo "ok $mode: $N events before the crash, rc $rc2"
done

# The signals a program is killed with rather than crashes of: cat copies
# the lines of a fifo into a file, then waits in read() for more. Once the
# file holds all N lines, cat gets SIG from outside (process-directed, as
# from a terminal, `kill` or a launcher). Traced, it must die of SIG as
# untraced (timeout dies of the same signal: the shell sees 128+SIG), its
# writes must all be in the job and its stream must end (BYE(signal)).
L=64		# bytes per line
M=300		# lines

# feed_fifo: open the fifo's write end as fd 3 (waits for cat's open) and
# write M lines of L bytes into it
feed_fifo() {
	exec 3> "$T/fifo" || fail "open $T/fifo"
	head -c $((L * M)) /dev/zero >&3
}

# wait_size FILE BYTES: until FILE holds BYTES (10 s at most)
wait_size() {
	_i=0
	while [ "$(wc -c < "$1" 2>/dev/null || echo 0)" -lt "$2" ]; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail "$1: $(wc -c < "$1") bytes, want $2"
		sleep 0.01
	done
}

# cat_of PID: the pid of the cat below PID (the background job runs the
# function traced or untraced: a subshell, timeout, then cat; 10 s at most)
cat_of() {
	_i=0
	_c=$1
	while [ "$(cat "/proc/$_c/comm" 2>/dev/null)" != cat ]; do
		_n=$(pgrep -P "$_c" | head -n 1)
		[ -n "$_n" ] && _c=$_n
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail "no cat below $1"
		[ -n "$_n" ] || sleep 0.01
	done
	echo "$_c"
}

# sig_mask PID FIELD: FIELD (SigIgn, SigCgt) of /proc/PID/status
sig_mask() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"
}

# bytes_written DUMP: the sum of the bytes of the successful writes
bytes_written() {
	grep -F ' name=write ' "$1" | grep -v ' failed=1' |
		sed -n 's/.* bytes=\([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# killed_run traced|untraced SIG OUT: cat fifo > OUT, killed by SIG once
# OUT holds everything; prints the shell's status of the run
killed_run() {
	rm -f "$T/fifo" "$3"
	mkfifo "$T/fifo" || fail "mkfifo"
	$1 cat "$T/fifo" > "$3" 2>/dev/null &
	_t=$!
	feed_fifo
	wait_size "$3" $((L * M))
	kill -s "$2" "$(cat_of $_t)"
	wait $_t
	_rc=$?
	exec 3>&-
	echo $_rc
}

for sn in INT:2 HUP:1; do
	sig=${sn%:*}
	rc1=$(killed_run untraced $sig "$T/out.plain")
	start_collectors "job-kill-$sig"
	rc2=$(killed_run traced $sig "$T/out.traced")
	stop_collectors
	expect "SIG$sig: untraced exit status" $rc1 $((128 + ${sn#*:}))
	expect "SIG$sig: exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" || fail "SIG$sig: output differs"
	dump "$T/job-kill-$sig" "$T/dump"
	expect "SIG$sig: bytes written before the signal" \
		"$(bytes_written "$T/dump")" $((L * M))
	expect "SIG$sig: streams" "$(streams "$T/dump")" 1
	grep -q '^total .* bye=2$' "$T/dump" || fail "SIG$sig: no BYE(signal)"
	echo "ok SIG$sig: $((L * M)) bytes written before the signal, rc $rc2," \
		"$(count "$T/dump" " name=signal ") SIGNAL event(s)"
done

# SIGPIPE: cat writes into a pipe whose reader (head) has exited after the
# first M lines; the next line kills cat with SIGPIPE (env restores the
# default, in case this shell was started with SIGPIPE ignored). The write
# that raised it never returned: not recorded.
piped_run() {
	rm -f "$T/fifo" "$2" "$T/rc"
	mkfifo "$T/fifo" || fail "mkfifo"
	{ $1 env --default-signal=PIPE cat "$T/fifo"; echo $? > "$T/rc"; } |
		head -c $((L * M)) > "$2" &
	_h=$!
	feed_fifo
	_i=0
	while alive $_h; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail "head did not exit"
		sleep 0.01
	done
	head -c $L /dev/zero >&3
	wait $_h
	exec 3>&-
	_i=0
	while [ ! -s "$T/rc" ]; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail "cat did not end"
		sleep 0.01
	done
	cat "$T/rc"
}
rc1=$(piped_run untraced "$T/out.plain")
start_collectors job-pipe
rc2=$(piped_run traced "$T/out.traced")
stop_collectors
expect "SIGPIPE: untraced exit status" $rc1 141
expect "SIGPIPE: exit status" $rc2 $rc1
cmp -s "$T/out.plain" "$T/out.traced" || fail "SIGPIPE: output differs"
dump "$T/job-pipe" "$T/dump"
# env's stream ends with its exec (BYE(exec)), cat's with the signal
expect "SIGPIPE: bytes written" "$(bytes_written "$T/dump")" $((L * M))
expect "SIGPIPE: streams" "$(streams "$T/dump")" 2
expect "SIGPIPE: BYE(signal)" "$(grep -c '^total .* bye=2$' "$T/dump")" 1
echo "ok SIGPIPE: $((L * M)) bytes written before the signal, rc $rc2," \
	"$(count "$T/dump" " name=signal ") SIGNAL event(s)"

# SIGHUP ignored from the start (nohup sets SIG_IGN, then execs cat): the
# sensor installs nothing for it, cat survives SIGHUP and ends at the end
# of its input, traced as untraced, with the same ignored set.
hup_run() {
	rm -f "$T/fifo" "$2"
	mkfifo "$T/fifo" || fail "mkfifo"
	$1 nohup cat "$T/fifo" > "$2" 2>/dev/null &
	_t=$!
	feed_fifo
	wait_size "$2" $((L * M))
	_c=$(cat_of $_t)
	sig_mask "$_c" SigIgn > "$T/sigign.$1"
	sig_mask "$_c" SigCgt > "$T/sigcgt.$1"
	kill -s HUP "$_c"
	sleep 0.2
	alive "$_c" || fail "$1 nohup cat died of SIGHUP"
	head -c $L /dev/zero >&3
	exec 3>&-
	wait $_t
	echo $?
}
rc1=$(hup_run untraced "$T/out.plain")
start_collectors job-nohup
rc2=$(hup_run traced "$T/out.traced")
stop_collectors
expect "nohup: exit status" "$rc2" "$rc1"
expect "nohup: untraced exit status" "$rc1" 0
cmp -s "$T/out.plain" "$T/out.traced" || fail "nohup: output differs"
# the classic signals 1-31 (above them, libc's own: its SIGSETXID handler
# replaces an inherited SIG_IGN once the sensor has started a thread)
low31() {
	echo $(($(printf '%d' "0x$(cat "$1")") & 0x7fffffff))
}
expect "nohup: ignored signals" "$(low31 "$T/sigign.traced")" \
	"$(low31 "$T/sigign.untraced")"
# SIGHUP (bit 0) neither ignored-and-caught nor caught by the sensor
expect "nohup: SIGHUP caught" \
	$(($(printf '%d' "0x$(cat "$T/sigcgt.traced")") & 1)) 0
dump "$T/job-nohup" "$T/dump"
expect "nohup: bytes written" "$(bytes_written "$T/dump")" $((L * (M + 1)))
expect "nohup: signal events" "$(count "$T/dump" " name=signal ")" 0
expect "nohup: BYE(exit)" "$(grep -c '^total .* bye=1$' "$T/dump")" 1
echo "ok nohup: SIGHUP ignored, traced as untraced, rc $rc2"

# a timer's signal the program handles itself (SIGALRM every ms for 0.2 s):
# the program's handler runs as untraced, and no SIGNAL event per tick
if command -v python3 >/dev/null; then
	start_collectors job-tick
	traced python3 -c 'import signal, time
n = [0]
signal.signal(signal.SIGALRM, lambda *a: n.__setitem__(0, n[0] + 1))
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
t = time.time()
while time.time() - t < 0.2:
    time.sleep(0.01)
signal.setitimer(signal.ITIMER_REAL, 0)
print("ticks", "many" if n[0] > 20 else n[0])' >"$T/tick.out" 2>&1 || fail "tick run: $(cat "$T/tick.out")"
	stop_collectors
	grep -q "^ticks many$" "$T/tick.out" || fail "tick: the handler ran $(cat "$T/tick.out")"
	dump "$T/job-tick" "$T/dump"
	expect "tick: SIGALRM events" "$(count "$T/dump" " name=signal " " signo=14")" 0
	echo "ok tick: SIGALRM handled by the program, not recorded"
fi
