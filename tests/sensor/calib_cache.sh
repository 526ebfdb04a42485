#!/bin/sh
# tests/sensor/calib_cache.sh - the sensor's calibration cache (issue 31,
# sensor-runtime.md "Calibration"): the first traced process measures and
# writes $TAPESTRY_CACHE_DIR/calib-HASH (ours, mode 0600); the next one
# emits the file's figures as its CALIB records without measuring; a file
# for another key or with a bad line is ignored and replaced; a directory
# that is not this user's alone (mode 0700) is not used.
. "$srcdir/tests/sensor/lib.sh"

# run NAME CMD...: CMD traced into job NAME, dumped into $T/NAME.dump. A
# process that ends before its calibration is done gives it up (nothing
# cached): the runs that must measure are a second long (sleep 1).
run() {
	_n=$1
	shift
	start_collectors "$_n"
	TAPESTRY_LOG=debug traced "$@" > /dev/null 2> "$T/$_n.err" ||
		fail "$_n: traced run"
	stop_collectors
	dump "$T/$_n" "$T/$_n.dump"
}
# cal DUMP: "cost_ps samples" of the generic CALIB (evtype 0)
cal() {
	sed -n 's/.* name=calibration .* evtype=0 .*samples=\([0-9]*\) cost_ps=\([0-9]*\).*/\2 \1/p' "$1"
}
C=$TAPESTRY_CACHE_DIR

run job1 sleep 1
f=$(ls "$C"/calib-* 2>/dev/null)
[ -n "$f" ] && [ "$(echo "$f" | wc -l)" = 1 ] || fail "no cache file after the first run: $(ls -la "$C")"
[ "$(stat -c %a "$f")" = 600 ] || fail "cache file mode $(stat -c %a "$f")"
head -n 1 "$f" | grep -q '^tapestry sensor calibration 1$' || fail "cache file: $(head -n 2 "$f")"
grep -q "^boot $(cat /proc/sys/kernel/random/boot_id)$" "$f" || fail "cache key without the boot id"
grep -q "^lib .*libtapestry-sensor.so " "$f" || fail "cache key without the library"
hot=$(sed -n 's/^hot_ps \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$f")
[ -n "$hot" ] || fail "no hot_ps line: $(cat "$f")"
expect "first run: its calibration is the file's" "$(cal "$T/job1.dump")" "$hot"
grep -q 'calibration from the cache' "$T/job1.err" && fail "first run read a cache"

# the second process reads it
run job2 "$PROG" write 2000 "$T"
grep -q 'calibration from the cache' "$T/job2.err" || fail "second run did not read the cache: $(cat "$T/job2.err")"
expect "second run: CALIB from the file" "$(cal "$T/job2.dump")" "$hot"
for evt in 1 31; do	# STRING, FWRITE
	expect "second run: CALIB evtype $evt" \
		"$(count "$T/job2.dump" " name=calibration " " evtype=$evt ")" 1
done
# the cached figures are read before the connection: the one META the
# stream sends holds calib_ns (issue 31: it went a second time for it)
expect "second run: META frames" "$(grep -c '^meta .* key=host ' "$T/job2.dump")" 1
expect "second run: META calib_ns" \
	"$(grep -c '^meta .* key=calib_ns value=[0-9]' "$T/job2.dump")" 1

# a bad line: ignored, measured again, replaced
sed -i 's/^hot_ps .*/hot_ps 5 0/' "$f"
run job3 sleep 1
grep -q 'calibration from the cache' "$T/job3.err" && fail "a bad cache file was used"
grep -q '^hot_ps 5 0$' "$f" && fail "a bad cache file was not replaced"
[ -n "$(cal "$T/job3.dump")" ] || fail "third run: no calibration"

# a directory others may write into is not used
rm -rf "$C" && mkdir -m 755 "$C"
run job4 sleep 1
[ -z "$(ls "$C")" ] || fail "cache written into a mode 755 directory: $(ls "$C")"
echo "ok: calibration cache written, read, refused when bad or not ours"
