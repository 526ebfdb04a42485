#!/bin/sh
# tests/sensor/libc_calls.sh - every wrapped libc call, N times: the trace
# holds exactly the expected calls with the right bytes and path; output,
# errno values and exit status are the same with and without the sensor.
# Buffered stdio calls on one stream are kept as runs (one record, count
# calls, their bytes summed): calls are counted through count=, and their
# bytes summed.
. "$srcdir/tests/sensor/lib.sh"
N=50
M=$((N + 1))
# mode count bytes path [event] (- : not checked): MODE makes calls
# recorded as EVENT (default MODE); bytes: what each call moves; a path
# without ':' or '/' is a file of the traced run's directory,
# $T/traced-MODE; paths are recorded absolute even when given relative
while read -r mode cnt bytes pat ev; do
	[ -n "$mode" ] || continue
	[ -n "$ev" ] || ev=$mode
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
	expect "$mode: $ev calls" "$(calls "$T/dump-$mode" " name=$ev ")" $cnt
	grep -v ' failed=1' "$T/dump-$mode" > "$T/ok-$mode"
	if [ "$bytes" != - ]; then
		expect "$mode: bytes of the $ev calls" \
			"$(sumf "$T/ok-$mode" bytes " name=$ev ")" $((N * bytes))
		[ "$(count "$T/ok-$mode" " name=$ev " " count=")" = 0 ] &&
			expect "$mode: $ev events of $bytes bytes" \
				"$(count "$T/ok-$mode" " name=$ev " " bytes=$bytes ")" $N
	fi
	if [ "$pat" != - ]; then
		expect "$mode: $ev calls with path $pat" \
			"$(calls "$T/ok-$mode" " name=$ev " "path=$pat")" $N
	fi
	if [ $cnt = $M ]; then
		expect "$mode: failed $ev" \
			"$(count "$T/dump-$mode" " name=$ev " " failed=1" )" 1
	fi
	grep -q '^total .* dropped=0 ' "$T/dump-$mode" || fail "$mode: drops"
	echo "ok $mode: $cnt $ev calls"
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
fgets N 21 stream.txt
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
fread_unlocked N 10 stream.txt fread
fwrite_unlocked N 10 stream.txt fwrite
fputs_unlocked N 6 stream.txt fputs
fgets_unlocked N 21 stream.txt fgets
fgetc N 1 stream.txt
getc N 1 stream.txt fgetc
getc_unlocked N 1 stream.txt fgetc
fgetc_unlocked N 1 stream.txt fgetc
fputc N 1 stream.txt
putc N 1 stream.txt fputc
putc_unlocked N 1 stream.txt fputc
fputc_unlocked N 1 stream.txt fputc
getline N 21 stream.txt getdelim
getdelim N 21 stream.txt
printf N 6 -
puts N 6 -
putchar N 1 - fputc
stat M - meta.txt
lstat M - meta.txt
fstat M - meta.txt
fstatat M - meta.txt
statx M - meta.txt
access M - meta.txt
faccessat M - meta.txt access
truncate M - meta.txt
ftruncate M - meta.txt
rename M - -
renameat M - - rename
unlink M - meta.txt
unlinkat M - meta.txt unlink
mkdir M - -
rmdir M - -
opendir M - -
mmap N 2100 map.txt
sendfile M 2100 src.txt
copy_file_range M 2100 src.txt
aio N 100 aio.txt aio_return
fread_chk N 10 stream.txt fread
fgets_chk N 21 stream.txt fgets
pread_chk M 10 data.txt pread
preadv M 30 data.txt readv
pwritev M 30 data.txt writev
fseeko M - stream.txt fseek
xstat M - meta.txt stat
lxstat M - meta.txt lstat
fxstat M - meta.txt fstat
fxstatat M - meta.txt fstatat
EOT
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
# rename, renameat: both paths absolute (DIR/meta.txt <-> DIR/renamed)
for m in rename renameat; do
	d=$T/traced-$m
	expect "$m: from meta.txt" "$(count "$T/ok-$m" " name=rename " "path=$d/meta.txt ")" $((N / 2))
	expect "$m: from renamed" "$(count "$T/ok-$m" " name=rename " "path=$d/renamed ")" $((N / 2))
	expect "$m: to renamed" "$(count "$T/ok-$m" " name=rename " "path2=$d/renamed ")" $((N / 2))
done
expect "opendir: path" "$(count "$T/ok-opendir" " name=opendir " "path=$T/traced-opendir ")" $N
expect "opendir: readdir entries" \
	"$(sumf "$T/ok-opendir" result " name=readdir ")" $((N * $(ls -a "$T/traced-opendir" | wc -l)))
expect "copy_file_range: destination" "$(count "$T/ok-copy_file_range" \
	" name=copy_file_range " "path2=$T/traced-copy_file_range/dst.txt")" $N
expect "mmap: munmap" "$(count "$T/ok-mmap" " name=munmap ")" $N
expect "mmap: msync" "$(count "$T/ok-mmap" " name=msync ")" $N
expect "aio: aio_read" "$(count "$T/ok-aio" " name=aio_read " "path=$T/traced-aio/aio.txt ")" $((N / 2))
expect "aio: aio_write" "$(count "$T/ok-aio" " name=aio_write ")" $((N / 2))
expect "aio: reads returned" "$(count "$T/ok-aio" " name=aio_return " " kind=2 ")" $((N / 2))

# chdir: relative opens resolved against the directory entered
mkdir "$T/traced-chdir" "$T/plain-chdir"
untraced "$PROG" chdir $N "$T/plain-chdir" > "$T/out.plain" 2>&1
start_collectors job-chdir
traced "$PROG" chdir $N "$T/traced-chdir" > "$T/out.traced" 2>&1
stop_collectors
cmp -s "$T/out.plain" "$T/out.traced" || fail "chdir: output differs"
dump "$T/job-chdir" "$T/dump-chdir"
d=$T/traced-chdir
expect "chdir: calls" "$(count "$T/dump-chdir" " name=chdir ")" $((2 * N + 1))
expect "chdir: into sub" "$(count "$T/dump-chdir" " name=chdir " "path=$d/sub ")" $N
expect "chdir: ./x/../meta.txt from sub" \
	"$(count "$T/dump-chdir" " name=open " "path=$d/sub/meta.txt " " fd=3 ")" $((N / 2))
expect "chdir: ../meta.txt from sub" \
	"$(count "$T/dump-chdir" " name=open " "path=$d/meta.txt " " fd=3 ")" $((N / 2))
echo "ok chdir: relative paths absolute"
exit 0
