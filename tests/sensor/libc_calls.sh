#!/bin/sh
# tests/sensor/libc_calls.sh - every wrapped libc call, N times: the trace
# holds exactly the expected events with the right bytes and path; output,
# errno values and exit status are the same with and without the sensor.
. "$srcdir/tests/sensor/lib.sh"
N=50
M=$((N + 1))
# mode event count bytes path-fragment (- : not checked)
while read -r mode ev cnt bytes pat; do
	[ -n "$mode" ] || continue
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
open open M - $T/traced-open/open.txt
openat openat M - $T/traced-openat/openat.txt
creat creat M - $T/traced-creat/creat.txt
close close M - $T/traced-close/close.txt
read read M 10 $T/traced-read/data.txt
write write M 64 $T/traced-write/write.txt
pread pread M 10 $T/traced-pread/data.txt
pwrite pwrite M 10 $T/traced-pwrite/data.txt
readv readv M 30 $T/traced-readv/data.txt
writev writev M 30 $T/traced-writev/data.txt
lseek lseek M - $T/traced-lseek/data.txt
fsync fsync M - $T/traced-fsync/data.txt
fdatasync fdatasync M - $T/traced-fdatasync/data.txt
dup dup M - $T/traced-dup/data.txt
dup2 dup2 M - $T/traced-dup2/data.txt
fopen fopen M - $T/traced-fopen/fopen.txt
fdopen fdopen M - $T/traced-fdopen/fdopen.txt
fclose fclose N - $T/traced-fclose/fclose.txt
fread fread N 10 $T/traced-fread/stream.txt
fwrite fwrite N 64 $T/traced-fwrite/stream.txt
fprintf fprintf N 6 $T/traced-fprintf/stream.txt
vfprintf vfprintf N 5 $T/traced-vfprintf/stream.txt
fputs fputs N 6 $T/traced-fputs/stream.txt
fgets fgets N 32 $T/traced-fgets/stream.txt
fflush fflush N - $T/traced-fflush/stream.txt
fseek fseek M - $T/traced-fseek/stream.txt
connect connect M - 127.0.0.1:
accept accept M - 127.0.0.1:
send send M 16 127.0.0.1:
recv recv M 16 127.0.0.1:
sendto sendto M 8 127.0.0.1:
recvfrom recvfrom M 64 127.0.0.1:
fork fork N - -
pthread_create pthread_create N - -
EOT
# fork: every child is a stream of its own, with its exit status
expect "fork: child streams" "$(count "$T/dump-fork" " name=exit " " status=7")" $N
expect "fork: child proc_start" "$(count "$T/dump-fork" " name=proc_start ")" $((N + 1))
expect "pthread_create: thread_start" \
	"$(count "$T/dump-pthread_create" " name=thread_start ")" $N
exit 0
