#!/usr/bin/env bash
# tests/manager/test_serve_running.sh - `tapestry serve`'s job list marks a
# job still being written (a tapestry-collector writing it) running, and
# no longer once it ended.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
command -v curl >/dev/null || { echo "no curl"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve-running.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
mkdir -p "$work/jobs" "$work/descs"
"$T" serve --listen 127.0.0.1:0 --jobs "$work/jobs" --descriptions "$work/descs" >"$work/o" 2>&1 & SP=$!
pids+=($SP)
for _ in $(seq 100); do grep -q serving "$work/o" && break; sleep 0.1; done
U=$(sed -n 's|^tapestry: serving \(http://[^ /]*\)/.*|\1|p' "$work/o")
TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$work/o")
running() { curl -s -H "Authorization: Bearer $TOK" "$U/api/jobs" | grep -o "\"name\":\"$1\"[^}]*\"running\":[a-z]*" | sed 's/.*"running"://'; }
"$T" run -o "$work/jobs/done" -- /bin/true >/dev/null 2>&1
"$T" run -o "$work/jobs/live" -- /bin/sleep 6 >/dev/null 2>&1 & lpid=$!
pids+=($lpid)
live=
for _ in $(seq 50); do
	[ "$(running live)" = true ] && { live=1; break; }
	sleep 0.2
done
check "a job being written is marked running" [ -n "$live" ]
check "  ...a finished one not" [ "$(running done)" = false ]
wait "$lpid"
check "  ...no longer once it ended" [ "$(running live)" = false ]
exit $fail
