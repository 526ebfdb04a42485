#!/bin/bash
# tests/security/diskfull.sh - a job directory on a full disk (issue 33):
# `tapestry run` of 600,000 writes into a job on a 1 MiB tmpfs (made here,
# unmounted by itself). The root receiver says "no space left on device:
# DIR" once, counts every batch it cannot store (per stream, exact) and
# acknowledges it, keeps the metadata that says so (room reserved at the
# start), and the run exits 1 with that line; the report counts the events
# not stored as lost, exactly: stored + lost = every event the sensor made.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-diskfull-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
cleanup() {
	for p in $PIDS; do
		for k in $(pgrep -P "$p"); do kill -9 -- -"$k" "$k" 2>/dev/null; done
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	mountpoint -q "$T/small" && umount "$T/small"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
[ -f "$SO" ] || { echo "no sensor library: skipped"; exit 77; }
mkdir "$T/small"
mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null ||
	{ echo "cannot mount a tmpfs here (not root?): skipped"; exit 77; }
N=600000
J=$T/small/job
"$TAP" run -o "$J" -- "$WRITER" "$T/rec" $N > "$T/run.out" 2> "$T/run.err" &
tp=$!
PIDS="$PIDS $tp"
wait $tp
rc=$?
cat "$T/run.err"
[ "$rc" = 1 ] || fail "run exited $rc on a full disk, 1 expected"
grep -q "^tapestry: no space left on device: $J: [0-9]* events could not be stored" "$T/run.err" ||
	fail "run does not name the full disk"
[ "$(stat -c %s "$T/rec")" = $((N * 8)) ] || fail "the program did not write everything"
grep -q 'key="collector.nospace"' "$J/meta.xml" || fail "meta.xml does not say it: $(cat "$J/meta.xml")"
[ -e "$J/reserve" ] && fail "the reserve was left in the job"
"$TAP" report --xml "$J" > "$T/report.xml" 2>&1 || fail "report"
"$TAP" report "$J" > "$T/report.txt" 2>&1 || fail "report"
grep -q "events not stored: no space left on device: $J" "$T/report.txt" ||
	fail "the report does not say it: $(head -5 "$T/report.txt")"
lost=$(sed -n 's/^losses  *\([0-9]*\) events counted lost.*/\1/p' "$T/report.txt")
nospace=$(sed -n 's/.* \([0-9]*\) events not stored: no space left on device.*/\1/p' "$T/report.txt" | head -1)
[ -n "$lost" ] && [ "$lost" = "$nospace" ] || fail "lost $lost, not stored $nospace: not the same"
[ "$lost" -gt 0 ] || fail "nothing counted lost on a full disk"
# every event the sensor made is stored or counted: its batches' records
# (the writes, its own FLUSH/SEND/MEM records...) are at least the writes
events=$(sed -n 's/^events  *\([0-9]*\) in .*/\1/p' "$T/report.txt")
[ $((events + lost)) -ge $N ] || fail "stored $events + lost $lost < $N writes"
grep -q " 0 batches missing" "$T/report.txt" || fail "batches said missing: $(grep ^losses "$T/report.txt")"
echo "  stored $events events, $lost counted not stored (full disk), $N writes made"
echo PASS
