#!/usr/bin/env bash
# tests/manager/test_spill.sh - the post-processing suites (causality,
# perturbation, post) again with every big array spilled to a file
# (TAPESTRY_SPILL_BYTES=0, manager/post/grow.h), in a TMPDIR of their own that
# must be empty afterwards: the spill files are unlinked at once.
set -u
: "${top_builddir:?}"
work=$(mktemp -d /tmp/tapestry-test-spill.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
for t in test_causality test_perturb test_post; do
	if TAPESTRY_SPILL_BYTES=0 TMPDIR="$work" "$top_builddir/tests/manager/$t"; then
		echo "ok   $t with every big array spilled"
	else
		echo "FAIL $t with every big array spilled"
		fail=1
	fi
done
if [ -n "$(ls -A "$work")" ]; then
	echo "FAIL spill files left in TMPDIR:"
	ls -la "$work"
	fail=1
else
	echo "ok   TMPDIR empty"
fi
exit $fail
