#!/bin/sh
# tests/security/damaged.sh - damaged job directories, end to end through
# `tapestry report` and `tapestry export` (docs/modules/proto-jobdir.md):
#   1. a segment cut in the middle of a frame: the batches the index lists
#      past the cut are counted missing (before: "0 batches missing"), with
#      their events from the index;
#   2. one byte flipped in a segment header: the header's 32 bytes are
#      skipped, every batch after it is read (before: the whole segment);
#   3. both: every export format and the report treat the damage alike -
#      what is intact is exported and the damage said; --strict refuses.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-damaged-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM

# one job of 2 streams x 95 batches of 100 events, one segment
start_col root --listen 127.0.0.1:0 --output "$T/job" || fail root
"$SYNTH" --connect 127.0.0.1:$PORT_root --streams 2 --events 9500 --batch 100 \
	--unique --timeout 60 >"$T/synth.out" || fail "synth: $(cat $T/synth.out)"
stop_col root || fail "root drain"
total=190
seg="$T/job/segments/000000.tps"
[ -f "$seg" ] || fail "no segment 000000"

read_counts() {	# DIR: sets BATCHES (read) MISSING SKIPPED GAPEV
	"$TAP" report --xml "$1" >"$T/r.xml" 2>"$T/r.err" || fail "report: $(cat $T/r.err)"
	BATCHES=$(sed -n 's/^<report .* batches="\([0-9]*\)".*/\1/p' "$T/r.xml")
	MISSING=$(sed -n 's/^<report .* gap_batches="\([0-9]*\)".*/\1/p' "$T/r.xml")
	SKIPPED=$(sed -n 's/^<report .* skipped_bytes="\([0-9]*\)".*/\1/p' "$T/r.xml")
	GAPEV=$(sed -n 's/^<report .* gap_events="\([0-9]*\)".*/\1/p' "$T/r.xml")
}

echo "== 1. a segment cut in the middle"
cp -r "$T/job" "$T/cut"
size=$(stat -c %s "$T/cut/segments/000000.tps")
truncate -s $((size / 2 + 7)) "$T/cut/segments/000000.tps"
read_counts "$T/cut"
echo "  $BATCHES of $total batches read, $MISSING missing ($GAPEV events per the index), $SKIPPED bytes skipped"
[ "$BATCHES" -lt "$total" ] || fail "the cut lost nothing?"
[ "$MISSING" = $((total - BATCHES)) ] || fail "missing $MISSING, the index says $((total - BATCHES))"
[ "$GAPEV" = $(( (total - BATCHES) * 100 )) ] || fail "events in the missing batches: $GAPEV"
"$TAP" report "$T/cut" | grep -q "events in the missing batches (index)" ||
	fail "the text report does not say it"

echo "== 2. one byte flipped in the segment header"
cp -r "$T/job" "$T/flip"
printf '\125' | dd of="$T/flip/segments/000000.tps" bs=1 seek=9 conv=notrunc status=none
read_counts "$T/flip"
echo "  $BATCHES of $total batches read, $MISSING missing, $SKIPPED bytes skipped"
[ "$SKIPPED" = 32 ] || fail "$SKIPPED bytes skipped, the 32 of the header expected"
[ "$BATCHES" = $total ] || fail "$BATCHES batches read, $total expected"

echo "== 3. every export and the report, alike"
for f in csv chrome paje otf2 moca; do
	"$TAP" export -f $f -o "$T/cut.$f" "$T/cut" 2>"$T/e.$f" ||
		fail "$f: the intact part not exported: $(cat $T/e.$f)"
	grep -q "damaged job directory (.*batches missing.*$f exported what is intact" "$T/e.$f" ||
		fail "$f: the damage not said: $(cat $T/e.$f)"
	"$TAP" export --strict -f $f -o "$T/cuts.$f" "$T/cut" 2>"$T/e.$f" &&
		fail "$f: --strict exported a damaged job"
	grep -q "$f refused (--strict)" "$T/e.$f" || fail "$f: --strict: $(cat $T/e.$f)"
	[ -e "$T/cuts.$f" ] && fail "$f: --strict left an output"
	echo "  $f: intact part exported; --strict refused"
done
"$TAP" report --strict "$T/cut" >/dev/null 2>"$T/e.rep" && fail "report --strict: exit 0"
grep -q "report refused (--strict)" "$T/e.rep" || fail "report --strict: $(cat $T/e.rep)"
"$TAP" report --strict "$T/job" >/dev/null 2>&1 || fail "report --strict of an intact job"
echo PASS
