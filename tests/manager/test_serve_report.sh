#!/usr/bin/env bash
# tests/manager/test_serve_report.sh - `tapestry report` (what the job page of
# `tapestry serve` shows) on awkward job directories: a name with a control
# character and bytes that are not UTF-8 (the XML still parses: U+FFFD in
# their place), and a damaged index beside intact segments (said, with why
# the segments suffice; --strict refuses it); and --quick, the report the
# page shows first (no post-processing).
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
T="$top_builddir/manager/tapestry"
command -v xmllint >/dev/null || { echo "no xmllint"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve-report.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
. "$top_srcdir/tests/manager/lib.sh"

timeout 60 "$T" run -o "$work/run" -- /bin/ls / >/dev/null 2>"$work/run.err"
check "tapestry run made a job" [ -s "$work/run/index" ]

# 1. XML 1.0 has no character for \001, and \377 is not UTF-8
odd="$work/job$(printf '\001')x$(printf '\377')"
cp -r "$work/run" "$odd"
"$T" report --xml "$odd" >"$work/odd.xml"
check "report --xml of an oddly named job exits 0" [ $? = 0 ]
check "  ...and parses (xmllint)" xmllint --noout "$work/odd.xml"
check "  ...with U+FFFD for each bad byte" \
	grep -q "job$(printf '\357\277\275')x$(printf '\357\277\275')\"" "$work/odd.xml"
check "  ...and no character reference below 32 but TAB, LF, CR" \
	bash -c "! grep -Eq '&#([0-8]|1[124-9]|2[0-9]|3[01]);' '$work/odd.xml'"

# 2. --quick: the counts without the post-processing
"$T" report --xml --quick "$work/run" >"$work/quick.xml"
check "report --xml --quick exits 0, parses, says post=\"skipped\"" \
	bash -c "xmllint --noout '$work/quick.xml' && grep -q ' post=\"skipped\"' '$work/quick.xml'"
check "  ...the same streams and events as the full report" \
	cmp <(grep -E '<(stream|events) ' "$work/quick.xml") <("$T" report --xml "$work/run" | grep -E '<(stream|events) ')
check "  ...and nothing of the post-processing" \
	bash -c "! grep -Eq '<(clock|causality|perturbation)' '$work/quick.xml'"
check "  ...and says so as text" grep -q "^post  *skipped (--quick)" <("$T" report --quick "$work/run")

# serve's cache child: the report and the timeline index in one pass over
# the events give what each gives alone
"$T" serve --build-index "$work/run" "$work/both.idx" "$work/both.xml"
check "the cache child makes both (exit 0)" [ $? = 0 ]
"$T" serve --build-index "$work/run" "$work/alone.idx"
check "  ...the index as made alone" cmp "$work/both.idx" "$work/alone.idx"
check "  ...the report as tapestry report --xml" cmp "$work/both.xml" <("$T" report --xml "$work/run")
check "  ...and the quick report beside it" cmp "$work/report-quick.xml" <("$T" report --xml --quick "$work/run")

# 3. a damaged index, the segments intact
check "an intact index is reported as such" \
	grep -q ' index="ok"' <("$T" report --xml "$work/run")
cp -r "$work/run" "$work/junk"
head -c 4096 /dev/zero | tr '\0' 'J' >"$work/junk/index"
"$T" report "$work/junk" >"$work/junk.txt" 2>&1
check "report on a junk index exits 0 (the segments suffice)" [ $? = 0 ]
check "  ...saying the index is damaged and why the figures stand" \
	grep -q "^index  *damaged (a bad header): not used; every figure here was read from the segments" "$work/junk.txt"
check "  ...with the same events as on the intact job" \
	[ "$(grep '^events ' "$work/junk.txt")" = "$("$T" report "$work/run" | grep '^events ')" ]
"$T" report --xml "$work/junk" >"$work/junk.xml"
check "report --xml says index=\"damaged\" and parses" \
	bash -c "grep -q ' index=\"damaged\" index_problem=\"a bad header\"' '$work/junk.xml' && xmllint --noout '$work/junk.xml'"
"$T" report --strict "$work/junk" >/dev/null 2>"$work/strict.err"
check "report --strict on a junk index exits 1" [ $? = 1 ]
check "  ...saying so" grep -q "damaged index (a bad header): refused (--strict)" "$work/strict.err"
# a good header, a corrupt entry after the good ones
cp -r "$work/run" "$work/entry"
printf 'JJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJJ' >>"$work/entry/index"
"$T" report "$work/entry" >"$work/entry.txt" 2>&1
check "a corrupt entry is named with its number" \
	grep -q "^index  *damaged (.* at entry $(( ($(stat -c %s "$work/run/index") - 16) / 40 )))" "$work/entry.txt"
rm -f "$work/junk/index"
check "no index at all is said as absent, not as damage" \
	grep -q ' index="absent"' <("$T" report --xml "$work/junk")
exit $fail
