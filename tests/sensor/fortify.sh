#!/bin/sh
# tests/sensor/fortify.sh - glibc's fortified open/openat (__open_2,
# __open64_2, __openat_2, __openat64_2), which binaries built with
# _FORTIFY_SOURCE call (Debian's tar, git): prog_fortify (built fortified;
# checked here to reference the four) opens files through each. The trace
# must hold each as an open/openat event with its path, the failing ones
# with failed=1 and ENOENT, and the read on each opened descriptor with
# its path (the wrappers fill the fd -> path table). The traced output
# (descriptors, results, errno names) must be the untraced one. When the
# system's tar calls __openat_2, a traced `tar cf` must show the openat of
# the file it archives and the read of it with its path.
. "$srcdir/tests/sensor/lib.sh"
FORT=$B/tests/sensor/prog_fortify
export TAPESTRY_RING_FULL=wait	# every event counted exactly
for s in __open_2 __open64_2 __openat_2 __openat64_2; do
	nm -u "$FORT" | grep -q " $s@" ||
		fail "prog_fortify does not call $s (not built fortified?)"
done
start_collectors job
mkdir "$T/u" "$T/t" || fail mkdir
untraced "$FORT" "$T/u" > "$T/u.out" 2>&1 || fail "untraced: $(cat "$T/u.out")"
traced "$FORT" "$T/t" > "$T/t.out" 2>&1 || fail "traced: $(cat "$T/t.out")"
sed "s|$T/u|DIR|g" "$T/u.out" > "$T/u.cmp"
sed "s|$T/t|DIR|g" "$T/t.out" > "$T/t.cmp"
cmp -s "$T/u.cmp" "$T/t.cmp" ||
	fail "traced output differs:
$(diff "$T/u.cmp" "$T/t.cmp")"
expect "missing files: ENOENT, untraced" "$(grep -c ' -1 ENOENT$' "$T/u.out")" 4
# the descriptors the program got (the same traced and untraced)
DIRFD=$(sed -n 's/^dir: \([0-9]*\)$/\1/p' "$T/t.out")
FD=$(sed -n 's/^open open.txt: \([0-9]*\) 0$/\1/p' "$T/t.out")
[ -n "$DIRFD" ] && [ -n "$FD" ] || fail "no descriptors in $(cat "$T/t.out")"
# a real fortified binary, when there is one: tar opens the files it
# archives through __openat_2 (Debian's does)
TAR=$(command -v tar || true)
if [ -n "$TAR" ] && nm -D -u "$TAR" 2>/dev/null | grep -q ' __openat_2@'; then
	traced "$TAR" cf "$T/t/x.tar" -C "$T/t" open64.txt > "$T/tar.out" 2>&1 ||
		fail "traced tar: $(cat "$T/tar.out")"
else
	TAR=
	echo "no tar calling __openat_2: its part skipped"
fi
stop_collectors
dump "$T/job" "$T/dump"
ENOENT=2
# tar reads open64.txt too (below)
tarread=0
[ -n "$TAR" ] && tarread=1
for v in open open64; do
	expect "$v (fortified) of $v.txt" \
		"$(count "$T/dump" " name=open " " fd=$FD " " flags=0 " "path=$T/t/$v.txt" " err=0")" 1
	expect "$v (fortified) of $v.missing: failed, ENOENT" \
		"$(count "$T/dump" " name=open " " fd=-1 " " failed=1" "path=$T/t/$v.missing" " err=$ENOENT")" 1
	n=1
	[ $v = open64 ] && n=$((1 + tarread))
	expect "read of $v.txt carries the path" \
		"$(count "$T/dump" " name=read " " result=21 " "path=$T/t/$v.txt ")" $n
done
# openat's relative paths are recorded absolute, resolved against the dirfd
for v in openat openat64; do
	expect "$v (fortified) of $v.txt" \
		"$(count "$T/dump" " name=openat " " fd=$FD " " fd2=$DIRFD " " flags=0 " "path=$T/t/$v.txt" " err=0")" 1
	expect "$v (fortified) of $v.missing: failed, ENOENT" \
		"$(count "$T/dump" " name=openat " " fd=-1 " " failed=1" "path=$T/t/$v.missing" " err=$ENOENT")" 1
	expect "read of $v.txt carries the path" \
		"$(count "$T/dump" " name=read " " result=21 " "path=$T/t/$v.txt ")" 1
done
if [ -n "$TAR" ]; then
	expect "tar: openat of open64.txt, not failed" \
		"$(grep ' name=openat ' "$T/dump" | grep -v ' failed=1' |
		grep -c " path=$T/t/open64.txt ")" 1
fi
expect "drops" "$(grep '^total ' "$T/dump" | grep -vc ' dropped=0 ')" 0
