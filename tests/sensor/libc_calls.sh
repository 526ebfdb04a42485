#!/bin/sh
# tests/sensor/libc_calls.sh - every wrapped libc call, N times: the trace
# holds exactly the expected events with the right bytes and path; output,
# errno values and exit status are the same with and without the sensor.
. "$srcdir/tests/sensor/lib.sh"
N=50
M=$((N + 1))
# mode count bytes path (- : not checked): MODE makes events named MODE; a
# path without ':' is a file of the traced run's directory, $T/traced-MODE
while read -r mode cnt bytes pat; do
	[ -n "$mode" ] || continue
	ev=$mode
	case $pat in -|*:*) ;; *) pat=$T/traced-$mode/$pat ;; esac
	case $cnt in N) cnt=$N ;; M) cnt=$M ;; esac
	mkdir "$T/plain-$mode" "$T/traced-$mode"
	untraced "$PROG" "$mode" $N "$T/plain-$mode" > "$T/out.plain" 2>&1
	rc1=$?
	start_collectors "job-$mode"
	traced "$PROG" "$mode" $N "$T/traced-$mode" > "$T/out.traced" 2>&1
	rc2=$?
	stop_collectors
	expect "$mode exit status" $rc2 $rc1
	cmp -s "$T/out.plain" "$T/out.traced" ||
		fail "$mode: output differs: $(cat "$T/out.plain") / $(cat "$T/out.traced")"
	dump "$T/job-$mode" "$T/dump-$mode"
	expect "$mode: $ev events" "$(count "$T/dump-$mode" " name=$ev ")" $cnt
	grep -v ' failed=1' "$T/dump-$mode" > "$T/ok-$mode"
	if [ "$bytes" != - ]; then
		expect "$mode: $ev events of $bytes bytes" \
			"$(count "$T/ok-$mode" " name=$ev " " bytes=$bytes ")" $N
	fi
	if [ "$pat" != - ]; then
		expect "$mode: $ev events with path $pat" \
			"$(count "$T/ok-$mode" " name=$ev " "path=$pat")" $N
	fi
	if [ $cnt = $M ]; then
		expect "$mode: failed $ev" \
			"$(count "$T/dump-$mode" " name=$ev " " failed=1" )" 1
	fi
	grep -q '^total .* dropped=0 ' "$T/dump-$mode" || fail "$mode: drops"
	echo "ok $mode: $cnt $ev events"
done <<EOT
open M - open.txt
openat M - openat.txt
creat M - creat.txt
close M - close.txt
read M 10 data.txt
write M 64 write.txt
pread M 10 data.txt
pwrite M 10 data.txt
readv M 30 data.txt
writev M 30 data.txt
lseek M - data.txt
fsync M - data.txt
fdatasync M - data.txt
dup M - data.txt
dup2 M - data.txt
fopen M - fopen.txt
fdopen M - fdopen.txt
fclose N - fclose.txt
fread N 10 stream.txt
fwrite N 64 stream.txt
fprintf N 6 stream.txt
vfprintf N 5 stream.txt
fputs N 6 stream.txt
fgets N 32 stream.txt
fflush N - stream.txt
fseek M - stream.txt
connect M - 127.0.0.1:
accept M - 127.0.0.1:
send M 16 127.0.0.1:
recv M 16 127.0.0.1:
sendto M 8 127.0.0.1:
recvfrom M 64 127.0.0.1:
fork N - -
pthread_create N - -
EOT
# fork: every child is a stream of its own, with its exit status
expect "fork: child streams" "$(count "$T/dump-fork" " name=exit " " status=7")" $N
expect "fork: child proc_start" "$(count "$T/dump-fork" " name=proc_start ")" $((N + 1))
expect "pthread_create: thread_start" \
	"$(count "$T/dump-pthread_create" " name=thread_start ")" $N
exit 0
