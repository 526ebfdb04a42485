#!/usr/bin/env bash
# deploy/fuzz.sh - build every libFuzzer target in fuzz/ with clang (ASan +
# UBSan) and run each for a bounded time on a copy of its corpus.
#   deploy/fuzz.sh [SECONDS]   (default $FUZZ_SECONDS or 30)
# A target fuzz/fuzz_NAME.c uses the corpus fuzz/corpus/NAME/ and links every
# proto/*.c plus what a line "FUZZ-LINK: ..." in it asks for: sources (x.c),
# folders (x/: every .c in it, e.g. manager/post/ for the objects of
# manager/post/libmgrpost.la) and compiler flags. Prints one line
# per target, "fuzz NAME: PASS|FAIL ...", and exits 1 when any target failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-${FUZZ_SECONDS:-30}}
out=$(mktemp -d /tmp/tapestry-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc=${FUZZ_CC:-clang}
fail=0
cfg=
[ -f "$top/build/config.h" ] && cfg="-I$top/build"
for src in "$top"/fuzz/fuzz_*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c); name=${name#fuzz_}
	extra=
	for tok in $(sed -n 's/.*FUZZ-LINK:\(.*\)$/\1/p' "$src" | head -n1); do
		case "$tok" in
		*.c) extra="$extra $top/$tok" ;;	# sources: relative to the tree
		*/) extra="$extra $(ls "$top/$tok"*.c | tr '\n' ' ')" ;;	# a folder's sources
		*) extra="$extra $tok" ;;
		esac
	done
	bin="$out/fuzz_$name"
	# shellcheck disable=SC2086
	if ! $cc -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I"$top" $cfg \
		"$src" "$top"/proto/*.c $extra -lzstd -o "$bin" 2>"$out/$name.build"; then
		echo "fuzz $name: FAIL (build)"; sed 's/^/  /' "$out/$name.build" | head -20
		fail=1; continue
	fi
	mkdir -p "$out/corpus_$name"
	seeds=()
	[ -d "$top/fuzz/corpus/$name" ] && seeds=("$top/fuzz/corpus/$name")
	if (cd "$out" && TAPESTRY_SRCDIR="$top" ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/$name-" \
		"$out/corpus_$name" "${seeds[@]}" >"$out/$name.log" 2>&1); then
		runs=$(grep -o 'Done [0-9]* runs' "$out/$name.log" | tail -n1)
		echo "fuzz $name: PASS (${secs}s, ${runs:-done})"
	else
		echo "fuzz $name: FAIL"
		grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$out/$name.log" | head -20 | sed 's/^/  /'
		for a in "$out/$name"-*; do
			[ -e "$a" ] && { mkdir -p "$top/build/fuzz-artifacts"; cp "$a" "$top/build/fuzz-artifacts/"; }
		done
		fail=1
	fi
done
exit $fail
