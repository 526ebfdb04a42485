#!/bin/sh
# tests/sensor/real_programs.sh - Debian's own programs traced byte-exact
# (issue 31): sort, cp, gzip, tar (create and extract) and python3 run on
# real files, with relative paths from their working directory, under the
# sensor towards real collectors; the CSV export's bytes (what each call
# moved) summed per file equal each file's size, read from every input and
# written to every output, the paths absolute. copy_file_range's
# destination is read from the dump (path2 has no CSV column).
. "$srcdir/tests/sensor/lib.sh"
TAP=$B/manager/tapestry
[ -x "$TAP" ] || fail "$TAP not built"
W=$T/work
mkdir -p "$W/data/sub" "$W/x" || fail mkdir
awk 'BEGIN { srand(3); for (i = 0; i < 40000; i++) printf "%d\n", int(rand() * 1e9) }' \
	> "$W/nums.txt"
head -c 300000 /dev/urandom > "$W/data/blob.bin"
seq 1 20000 > "$W/data/sub/seq.txt"
size() { stat -c %s "$1"; }

# run NAME CMD...: CMD traced in $W; its job dumped and exported to CSV
run() {
	_n=$1
	shift
	start_collectors "job-$_n"
	(cd "$W" && traced "$@") > "$T/$_n.out" 2> "$T/$_n.err" ||
		fail "$_n: exit $?: $(cat "$T/$_n.err")"
	stop_collectors
	dump "$T/job-$_n" "$T/$_n.dump"
	"$TAP" export -f csv -o "$T/$_n.csv" "$T/job-$_n" 2> "$T/$_n.exp" ||
		fail "$_n: export: $(cat "$T/$_n.exp")"
}

# moved CSV PATH: "READ WRITE", the bytes the CSV shows moved from and to PATH
moved() {
	awk -F, -v p="$2" '
	$10 == p && $3 ~ /^(read|pread|readv|fread|fgets|fgetc|getdelim|recv|recvfrom|copy_file_range|sendfile)$/ { r += $6 }
	$10 == p && $3 ~ /^(write|pwrite|writev|fwrite|fputs|fputc|fprintf|vfprintf|printf|puts|send|sendto)$/ { w += $6 }
	END { print r + 0, w + 0 }' "$1"
}

# check NAME FILE READ WRITE: the trace of NAME moved READ bytes from FILE
# and WRITE bytes to it (FILE relative to $W)
check() {
	expect "$1: bytes read from, written to $2" "$(moved "$T/$1.csv" "$W/$2")" "$3 $4"
}

run sort sort -n nums.txt -o sorted.txt
check sort nums.txt "$(size "$W/nums.txt")" 0
check sort sorted.txt 0 "$(size "$W/sorted.txt")"
echo "ok sort"

run cp cp data/blob.bin copy.bin
cmp -s "$W/data/blob.bin" "$W/copy.bin" || fail "cp: copy differs"
check cp data/blob.bin "$(size "$W/data/blob.bin")" 0
w=$(moved "$T/cp.csv" "$W/copy.bin" | cut -d' ' -f2)
c=$(sumf "$T/cp.dump" bytes " name=copy_file_range " "path2=$W/copy.bin")
expect "cp: bytes written to copy.bin (write + copy_file_range)" $((w + c)) "$(size "$W/copy.bin")"
echo "ok cp ($c bytes by copy_file_range)"

run gzip gzip -k data/sub/seq.txt
check gzip data/sub/seq.txt "$(size "$W/data/sub/seq.txt")" 0
check gzip data/sub/seq.txt.gz 0 "$(size "$W/data/sub/seq.txt.gz")"
rm -f "$W/data/sub/seq.txt.gz"
echo "ok gzip"

run tarc tar cf a.tar data
check tarc a.tar 0 "$(size "$W/a.tar")"
check tarc data/blob.bin "$(size "$W/data/blob.bin")" 0
check tarc data/sub/seq.txt "$(size "$W/data/sub/seq.txt")" 0
echo "ok tar c"

run tarx tar xf a.tar -C x
cmp -s "$W/data/blob.bin" "$W/x/data/blob.bin" || fail "tar x: file differs"
check tarx a.tar "$(size "$W/a.tar")" 0
check tarx x/data/blob.bin 0 "$(size "$W/data/blob.bin")"
check tarx x/data/sub/seq.txt 0 "$(size "$W/data/sub/seq.txt")"
echo "ok tar x"

if command -v python3 > /dev/null; then
	run py python3 -c 'import shutil
with open("data/sub/seq.txt") as f:
    lines = f.readlines()
with open("data/py.txt", "w") as g:
    g.writelines(reversed(lines))
shutil.copyfileobj(open("data/blob.bin", "rb"), open("py.bin", "wb"))'
	check py data/sub/seq.txt "$(size "$W/data/sub/seq.txt")" 0
	check py data/py.txt 0 "$(size "$W/data/py.txt")"
	check py data/blob.bin "$(size "$W/data/blob.bin")" 0
	check py py.bin 0 "$(size "$W/py.bin")"
	echo "ok python3"
fi
exit 0
