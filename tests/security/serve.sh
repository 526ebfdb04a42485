#!/usr/bin/env bash
# tests/security/serve.sh - `tapestry serve` on a shared machine (issue 30):
# the server runs as this (root) user, a second local user (`nobody`, through
# runuser) attacks it:
#   1. the token: every route answers 401 to nobody without it;
#   2. --no-token warns, and refuses launches and uploads to everybody;
#      with the token, only descriptions the owner alone may write launch;
#   3. links planted in a job directory nobody may write (the cache
#      .tapestry-serve/ and its files and temporary files, an export's
#      temporary file): nothing outside is read nor written, a clear error;
#   4. GETs start no work; a request trickled byte by byte is closed at the
#      request deadline;
#   5. TLS on the listening socket; a non-loopback address needs it.
# Skips (77) unless root with runuser and curl.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
[ "$(id -u)" = 0 ] || { echo "not root: skip"; exit 77; }
command -v runuser >/dev/null && command -v curl >/dev/null || { echo "no runuser or curl: skip"; exit 77; }
work=$(mktemp -d /tmp/tapestry-test-serve-sec.XXXXXX)
. "$top_srcdir/tests/manager/lib.sh"
chmod 711 "$work"	# nobody reaches what is shared with it, nothing else
as_nobody() { runuser -u nobody -- "$@"; }
# start_serve OUT ARGS...: tapestry serve on a free loopback port; sets U, SP, TOK
start_serve() {
	local out=$1
	shift
	"$T" serve --listen 127.0.0.1:0 "$@" >"$out" 2>"$out.err" & SP=$!
	pids+=($SP)
	for _ in $(seq 100); do grep -q serving "$out" && break; sleep 0.1; done
	U=$(sed -n 's|^tapestry: serving \(https\{0,1\}://[^ /]*\)/.*|\1|p' "$out")
	TOK=$(sed -n 's|^tapestry: serving [^ ]*/?token=\([^ ]*\) .*|\1|p' "$out")
}
stop_serve() { kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; }
# ncode URL [ARGS]: the status nobody gets; ocode: the owner's (with the token)
ncode() { as_nobody curl -s -k --path-as-is -o /dev/null -w '%{http_code}' "$@"; }
ocode() { curl -s -k --path-as-is -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOK" "$@"; }
# poll URL OUT: the owner's GET until not 202 (60 s at most); a 409 (not
# made, and a GET starts no work) POSTs the URL it names once; prints the status
poll() {
	local c posted=
	for _ in $(seq 300); do
		c=$(curl -s -k -o "$2" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$1")
		if [ "$c" = 409 ] && [ -z "$posted" ]; then
			posted=1
			curl -s -k -o /dev/null -X POST -H 'X-Tapestry: 1' -H "Authorization: Bearer $TOK" \
				"$U$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["build"])' "$2")"
			continue
		fi
		[ "$c" != 202 ] && { echo "$c"; return; }
		sleep 0.2
	done
	echo timeout
}

# a job of the owner (0700, as run makes it), descriptions
mkdir -p "$work/jobs" "$work/descs"
timeout 120 "$T" run -o "$work/jobs/run1" -- /bin/echo hello >/dev/null 2>"$work/run.err"
check "tapestry run made the job" [ -d "$work/jobs/run1/segments" ]
chmod 755 "$work/jobs"
mark=$work/descs/ran
desc() {	# desc FILE: a description whose program writes who ran it into $mark
	cat >"$1" <<EOF
<?xml version="1.0"?>
<job name="x">
  <hosts><host name="localhost" address="127.0.0.1" slots="1"/></hosts>
  <collectors><collector name="srvsec$$-gw" host="localhost"/></collectors>
  <application executable="/bin/sh" processes="1">
    <argument>-c</argument><argument>id -u &gt;&gt;$mark</argument>
  </application>
</job>
EOF
}
desc "$work/descs/pwn.xml"

# 1. the token
start_serve "$work/s1.out" --jobs "$work/jobs" --descriptions "$work/descs"
check "a token made at start, in the URL printed" [ ${#TOK} = 48 ]
check "  ...not on the command line (ps)" [ "$(tr '\0' ' ' </proc/$SP/cmdline | grep -c "$TOK")" = 0 ]
for p in / /app.js /api/jobs /api/jobs/run1 /api/jobs/run1/report.xml /api/tree /api/descriptions \
	/api/descriptions/pwn.xml /login; do
	c=$(ncode "$U$p")
	check "nobody: GET $p: 401 ($c)" [ "$c" = 401 ]
done
c=$(ncode -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/pwn.xml/launch")
check "nobody: POST launch: 401 ($c)" [ "$c" = 401 ]
wrong=${TOK%?}$([ "${TOK: -1}" = 0 ] && echo 1 || echo 0)	# its last digit changed
c=$(ncode -H "Authorization: Bearer $wrong" "$U/api/jobs")
check "nobody with a wrong token: 401 ($c)" [ "$c" = 401 ]
c=$(ncode -b "tapestry_token=$wrong" "$U/api/jobs")
check "nobody with a wrong cookie: 401 ($c)" [ "$c" = 401 ]
c=$(ocode "$U/api/jobs")
check "the owner with the token: 200 ($c)" [ "$c" = 200 ]
check "  ...and the report of a 0700 job" [ "$(poll "$U/api/jobs/run1/report.xml" "$work/r.xml")" = 200 ]
sleep 1
check "nothing ran" [ ! -e "$mark" ]
stop_serve

# 2. --no-token: a warning; no launch, no upload, for anybody
start_serve "$work/s2.out" --jobs "$work/jobs" --descriptions "$work/descs" --no-token --allow-upload
check "--no-token: no token in the URL" grep -q '^tapestry: serving http://127.0.0.1:[0-9]*/ (jobs' "$work/s2.out"
check "  ...a loud warning" grep -q "WARNING: --no-token: EVERY LOCAL USER" "$work/s2.out.err"
check "  ...a foreign Host header (DNS rebinding): 421" [ "$(ncode -H 'Host: evil.example:80' "$U/api/jobs")" = 421 ]
c=$(ncode -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/pwn.xml/launch")
check "  ...nobody's launch: 403 ($c)" [ "$c" = 403 ]
c=$(ncode -X POST -H 'X-Tapestry: 1' --data-binary @"$work/descs/pwn.xml" "$U/api/descriptions?name=up.xml")
check "  ...nobody's upload: 403 ($c)" [ "$c" = 403 ]
c=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/pwn.xml/launch")
check "  ...the owner's launch too (nobody is the owner): 403 ($c)" [ "$c" = 403 ]
check "  ...nothing uploaded" [ ! -e "$work/descs/up.xml" ]
sleep 1
check "  ...nothing ran" [ ! -e "$mark" ]
stop_serve

# launches with the token: only descriptions the owner alone may write
start_serve "$work/s3.out" --jobs "$work/jobs" --descriptions "$work/descs"
desc "$work/descs/theirs.xml"; chown nobody "$work/descs/theirs.xml"
desc "$work/descs/gw.xml"; chmod 666 "$work/descs/gw.xml"
ln -s "$work/descs/pwn.xml" "$work/descs/link.xml"
for d in theirs gw; do
	c=$(curl -s -o "$work/l.json" -w '%{http_code}' -H "Authorization: Bearer $TOK" -X POST -H 'X-Tapestry: 1' \
		"$U/api/descriptions/$d.xml/launch")
	check "a description $d.xml (another user's, others may write) is not launched: 403 ($c)" [ "$c" = 403 ]
done
check "  ...saying why" grep -q "another user owns it" <(curl -s -H "Authorization: Bearer $TOK" -X POST \
	-H 'X-Tapestry: 1' "$U/api/descriptions/theirs.xml/launch")
c=$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/link.xml/launch")
check "a linked description is not one (404: $c)" [ "$c" = 404 ]
for d in theirs gw; do
	c=$(ocode -X POST -H 'X-Tapestry: 1' --data processes=1 "$U/api/descriptions/$d.xml/edit")
	check "the launch form makes no copy of $d.xml (the copy would be the owner's): 403 ($c)" \
		[ "$c" = 403 -a ! -e "$work/descs/$d-edit-1.xml" ]
done
c=$(ocode -X POST -H 'X-Tapestry: 1' --data processes=1 "$U/api/descriptions/link.xml/edit")
check "  ...nor of a linked one (404: $c)" [ "$c" = 404 ]
chmod 777 "$work/descs"
c=$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/pwn.xml/launch")
check "a description in a directory others may write (not sticky): 403 ($c)" [ "$c" = 403 ]
chmod 755 "$work/descs"
sleep 1
check "  ...none of them ran" [ ! -e "$mark" ]
c=$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/descriptions/pwn.xml/launch")
check "the owner's own description launches (202: $c)" [ "$c" = 202 ]
for _ in $(seq 300); do [ -s "$mark" ] && break; sleep 0.2; done
check "  ...and ran as the owner" [ "$(head -1 "$mark" 2>/dev/null)" = 0 ]
stop_serve
rm -f "$mark" "$work/descs/link.xml"

# 3. links planted by nobody in its own job directory under the shared --jobs
printf 'TOPSECRET\n' >"$work/secret"; chmod 600 "$work/secret"	# the owner's, 0600
for v in 1 2 3; do printf 'victim %s\n' $v >"$work/victim$v"; done	# the owner's files
cp "$work/victim1" "$work/victims.orig1"
cp -a "$work/jobs/run1" "$work/jobs/theirs"; rm -rf "$work/jobs/theirs/.tapestry-serve"
chown -R nobody "$work/jobs/theirs"
J=$work/jobs/theirs
start_serve "$work/s4.out" --jobs "$work/jobs" --descriptions "$work/descs"
as_nobody mkdir -p "$J/.tapestry-serve"
as_nobody ln -s "$work/secret" "$J/.tapestry-serve/report.xml"
as_nobody ln -s "$work/secret" "$J/.tapestry-serve/report-quick.xml"
for p in report.xml report-quick.xml; do
	c=$(curl -s -o "$work/got" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$U/api/jobs/theirs/$p")
	check "a link at .tapestry-serve/$p: refused (403: $c)" [ "$c" = 403 ]
	check "  ...saying so" grep -q "symbolic link: refused" "$work/got"
	check "  ...the owner's file not read" [ "$(grep -c TOPSECRET "$work/got")" = 0 ]
done
check "the job list says failed, and reads nothing through it" \
	[ "$(curl -s -H "Authorization: Bearer $TOK" "$U/api/jobs" | grep -c TOPSECRET)" = 0 ]
as_nobody rm "$J/.tapestry-serve/report.xml" "$J/.tapestry-serve/report-quick.xml"
as_nobody ln -s "$work/victim1" "$J/.tapestry-serve/report.xml.tmp"
as_nobody ln -s "$work/victim2" "$J/.tapestry-serve/report-quick.xml.tmp"
as_nobody ln -s "$work/victim3" "$J/.tapestry-serve/timeline.idx.tmp"
c=$(poll "$U/api/jobs/theirs/timeline" "$work/got")
check "links at the temporary files: the build fails (500: $c)" [ "$c" = 500 ]
check "  ...saying the link is refused" grep -q "report.xml.tmp: it is a symbolic link: refused" "$work/got"
for v in 1 2 3; do
	check "  ...the owner's file victim$v unchanged" [ "$(cat "$work/victim$v")" = "victim $v" ]
done
check "  ...the links left as they were, not renamed into place" \
	[ -L "$J/.tapestry-serve/report.xml.tmp" -a ! -e "$J/.tapestry-serve/report.xml" ]
as_nobody rm -r "$J/.tapestry-serve"
mkdir -p "$work/ownerdir"
as_nobody ln -s "$work/ownerdir" "$J/.tapestry-serve"
c=$(curl -s -o "$work/got" -w '%{http_code}' -H "Authorization: Bearer $TOK" "$U/api/jobs/theirs/report.xml")
check "a link at .tapestry-serve itself: refused (403: $c)" [ "$c" = 403 ]
check "  ...nothing written where it points" [ -z "$(ls -A "$work/ownerdir")" ]
as_nobody rm "$J/.tapestry-serve"
as_nobody mv "$J/index" "$J/index.real"
as_nobody ln -s "$work/secret" "$J/index"
ocode -X POST -H "X-Tapestry: 1" "$U/api/jobs/theirs/build" >/dev/null
c=$(poll "$U/api/jobs/theirs/report.xml" "$work/got")
check "a link at the job's index: the report refused (500: $c)" [ "$c" = 500 ]
check "  ...saying so" grep -q "theirs/index is a symbolic link: refused" "$work/got"
check "  ...the owner's file not read" [ "$(grep -c TOPSECRET "$work/got")" = 0 ]
as_nobody rm "$J/index"
as_nobody mv "$J/index.real" "$J/index"
# an export the owner starts from the page into nobody's job directory
as_nobody ln -s "$work/victim1" "$J/trace.csv.tmp"
check "an export into it starts (202)" [ "$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/jobs/theirs/export?format=csv")" = 202 ]
for _ in $(seq 100); do
	curl -s -H "Authorization: Bearer $TOK" "$U/api/jobs/theirs" >"$work/job.json"
	grep -q '"format":"csv","name":"trace.csv","state":"failed"' "$work/job.json" && break
	sleep 0.2
done
check "  ...fails: trace.csv.tmp is a link" grep -q '"format":"csv","name":"trace.csv","state":"failed"' "$work/job.json"
check "  ...the owner's file unchanged" cmp "$work/victim1" "$work/victims.orig1"
as_nobody rm "$J/trace.csv.tmp"
as_nobody ln -s "$work/victim1" "$J/trace.csv"
check "a link at the export's own name: replaced, not followed (202)" \
	[ "$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/jobs/theirs/export?format=csv")" = 202 ]
for _ in $(seq 100); do [ -f "$J/trace.csv" -a ! -L "$J/trace.csv" ] && break; sleep 0.2; done
check "  ...trace.csv is the export" [ -f "$J/trace.csv" -a ! -L "$J/trace.csv" ]
check "  ...the owner's file unchanged" cmp "$work/victim1" "$work/victims.orig1"
"$T" export -f csv "$J" 2>/dev/null >/dev/null
as_nobody ln -s "$work/victim2" "$J/trace.json.tmp"
"$T" export -f chrome "$J" 2>"$work/exp.err"
check "tapestry export from the command line: a link at OUT.tmp refused (exit 1)" [ $? = 1 ]
check "  ...saying so" grep -q "trace.json.tmp is a symbolic link: refused" "$work/exp.err"
check "  ...the owner's file unchanged" [ "$(cat "$work/victim2")" = "victim 2" ]
stop_serve

# 4. GETs start no work; a request must be whole within the deadline
start_serve "$work/s5.out" --jobs "$work/jobs" --descriptions "$work/descs" --request-deadline 3
rm -rf "$work/jobs/run1/.tapestry-serve"
for p in report.xml report-quick.xml "report.xml?retry=1" timeline event; do
	c=$(ocode "$U/api/jobs/run1/$p")
	check "GET $p of a job never made: 409, starts nothing ($c)" [ "$c" = 409 ]
done
c=$(ocode "$U/api/descriptions/pwn.xml/plan?run=1")
check "GET plan?run=1 never planned: 409 ($c)" [ "$c" = 409 ]
sleep 1
check "  ...no child was started (no report made, no plan running)" \
	[ ! -e "$work/jobs/run1/.tapestry-serve/report.xml" -a -z "$(pgrep -P "$SP")" ]
c=$(ocode -X POST "$U/api/jobs/run1/build")
check "POST build without X-Tapestry: 403 ($c)" [ "$c" = 403 ]
c=$(ocode -X POST -H 'X-Tapestry: 1' "$U/api/jobs/run1/build")
check "POST build with it: 202 ($c)" [ "$c" = 202 ]
check "  ...then the report (200)" [ "$(poll "$U/api/jobs/run1/report.xml" "$work/r2.xml")" = 200 ]
port=${U##*:}
python3 - "$port" >"$work/trickle" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.5)
t0 = time.monotonic()
closed = None
for c in b"GET /api/jobs HTTP/1.1\r\nHost: x\r\n" * 4:
    try:
        s.send(bytes([c]))
        if s.recv(100) == b"":
            closed = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - t0
        break
print("closed %.1f" % closed if closed else "open %.1f" % (time.monotonic() - t0))
PY
read -r st secs <"$work/trickle"
check "a request trickled a byte per 0.5 s: closed after the 3 s deadline ($st after $secs s)" \
	[ "$st" = closed ]
check "  ...and the server serves others" [ "$(ocode "$U/api/jobs")" = 200 ]
head -c 200000 /dev/zero | tr '\0' a >"$work/big.bin"
cp "$work/big.bin" "$work/jobs/run1/trace.csv"
check "  ...a download is not cut by it (200 KB at 20 KB/s)" \
	[ "$(curl -s --limit-rate 20k -H "Authorization: Bearer $TOK" "$U/api/jobs/run1/files/trace.csv" | wc -c)" = 200000 ]
rm -f "$work/jobs/run1/trace.csv"
stop_serve

# 5. TLS on the listening socket
"$T" serve --listen 0.0.0.0:0 --jobs "$work/jobs" 2>"$work/e5"
check "a non-loopback address without TLS: refused (exit 2)" [ $? = 2 ]
check "  ...saying why" grep -q "needs TLS" "$work/e5"
"$T" ca "$work/creds" >/dev/null 2>&1
start_serve "$work/s6.out" --jobs "$work/jobs" --descriptions "$work/descs" --tls-dir "$work/creds"
check "--tls-dir (tapestry ca's credentials): the URL printed is https" grep -q '^tapestry: serving https://' "$work/s6.out"
port=${U##*:}
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/creds/ca.crt" --connect-to "manager:$port:127.0.0.1:$port" \
	-H "Authorization: Bearer $TOK" "https://manager:$port/api/jobs")
check "  ...served over TLS, its certificate verified against the CA (200: $c)" [ "$c" = 200 ]
c=$(ncode "$U/api/jobs")
check "  ...nobody without the token: 401 ($c)" [ "$c" = 401 ]
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$port/api/jobs")
check "  ...plain HTTP to it gets no answer ($c)" [ "$c" = 000 ]
check "  ...the cookie is Secure" grep -qi '^Set-Cookie: .*; Secure' <(curl -s -k -D - -o /dev/null "$U/?token=$TOK")
stop_serve
"$T" serve --listen 127.0.0.1:0 --tls-cert "$work/creds/manager.crt" --tls-key "$work/creds/ca.key" 2>"$work/e6"
check "a key that is not the certificate's: refused (exit 2)" [ $? = 2 ]

exit $fail
