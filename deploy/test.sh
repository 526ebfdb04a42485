#!/usr/bin/env bash
# deploy/test.sh - install, build and run every test of tapestry.
#
# 1. deploy/setup.sh: Debian packages, autoreconf, configure (-Werror), make
# 2. make check: Criterion unit suites and the integration tests
# 3. deploy/fuzz.sh: each libFuzzer target for FUZZ_SECONDS (default 30)
# 4. make install into a scratch DESTDIR, checked
# The last line printed is "N passed, N failed" summed over all suites:
# every Criterion test counts once, every other test script once, every fuzz
# target once. Exit status 0 only when nothing failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
passed=0 failed=0 skipped=0

if ! deploy/setup.sh; then
	echo "test: set-up or build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

cd build
make -j"$(nproc)" -k check >make-check.out 2>&1
grep -E '^(PASS|FAIL|XFAIL|XPASS|ERROR|SKIP):' make-check.out || true
for trs in $(find . -name '*.trs' | sort); do
	log=${trs%.trs}.log
	res=$(sed -n 's/^:test-result: //p' "$trs" | head -n1)
	synth=$(grep -a 'Synthesis: Tested:' "$log" 2>/dev/null | tail -n1)
	if [ -n "$synth" ]; then
		p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$synth")
		f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$synth")
		c=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$synth")
		passed=$((passed + p)); failed=$((failed + f + c))
		# a suite binary that failed without a failing test (startup crash)
		if [ "$res" != PASS ] && [ $((f + c)) = 0 ]; then failed=$((failed + 1)); fi
	else
		case "$res" in
		PASS|XFAIL) passed=$((passed + 1)) ;;
		SKIP) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	fi
	if [ "$res" = FAIL ] || [ "$res" = ERROR ]; then
		echo "---- $log (tail) ----"; tail -n 30 "$log"
	fi
done
if ! grep -q '^# TOTAL' make-check.out; then
	echo "test: make check did not run the tests (build error?)"; tail -n 40 make-check.out
	failed=$((failed + 1))
fi
cd "$top"

fuzz_out=$(deploy/fuzz.sh "${FUZZ_SECONDS:-30}")
echo "$fuzz_out"
passed=$((passed + $(grep -c ': PASS' <<<"$fuzz_out")))
failed=$((failed + $(grep -c ': FAIL' <<<"$fuzz_out")))

dest=$(mktemp -d /tmp/tapestry-install.XXXXXX)
if make -C build install DESTDIR="$dest" >"$dest.log" 2>&1 && \
   [ -f "$dest/usr/local/lib/pkgconfig/tapestry.pc" ] && \
   [ -f "$dest/usr/local/include/tapestry/proto/event.h" ]; then
	echo "install: PASS"; passed=$((passed + 1))
else
	echo "install: FAIL"; tail -n 20 "$dest.log"; failed=$((failed + 1))
fi
rm -rf "$dest" "$dest.log"

if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
