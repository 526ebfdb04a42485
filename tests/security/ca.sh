#!/bin/sh
# tests/security/ca.sh - `tapestry ca`: the files, their modes, the chain
# (checked with openssl verify), the names in the certificates, and bad
# input: an existing CA is never overwritten, bad host names, bad days.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-ca-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM
command -v openssl >/dev/null || { echo "no openssl command"; exit 77; }

D=$T/cred
"$TAP" ca "$D" --hosts node1,gw.example,10.213.1.2,::1 >"$T/out" || fail "tapestry ca: $(cat $T/out)"
cat "$T/out"
[ "$(stat -c %a "$D")" = 700 ] || fail "directory mode $(stat -c %a "$D")"
for f in ca node1 gw.example 10.213.1.2 ::1 manager; do
	[ "$(stat -c %a "$D/$f.key")" = 600 ] || fail "$f.key mode"
	[ -s "$D/$f.crt" ] || fail "$f.crt missing"
done
[ "$(stat -c %a "$D/secret")" = 600 ] || fail "secret mode"
grep -qE '^[0-9a-f]{64}$' "$D/secret" || fail "secret is not 64 hex digits"
openssl verify -CAfile "$D/ca.crt" "$D/node1.crt" "$D/gw.example.crt" \
	"$D/10.213.1.2.crt" "$D/::1.crt" "$D/manager.crt" >"$T/verify" || fail "chain: $(cat $T/verify)"
openssl x509 -in "$D/ca.crt" -noout -text >"$T/ca.txt"
grep -q "CA:TRUE" "$T/ca.txt" || fail "the CA is not a CA"
grep -q "prime256v1\|P-256" "$T/ca.txt" || fail "the CA key is not P-256"
openssl x509 -in "$D/node1.crt" -noout -text >"$T/n.txt"
grep -q "CA:FALSE" "$T/n.txt" || fail "a host certificate is a CA"
grep -q "DNS:node1" "$T/n.txt" || fail "no DNS name"
grep -q "TLS Web Server Authentication, TLS Web Client Authentication" "$T/n.txt" || fail "extended key usage"
openssl x509 -in "$D/10.213.1.2.crt" -noout -text | grep -q "IP Address:10.213.1.2" || fail "no IP name"
openssl x509 -in "$D/node1.crt" -noout -subject | grep -q "CN *= *node1" || fail "subject"
openssl pkey -in "$D/node1.key" -noout 2>/dev/null || openssl ec -in "$D/node1.key" -noout 2>/dev/null || fail "key unreadable"
echo "  files, modes, chain and names: ok"

sum=$(cat "$D"/* | md5sum)
"$TAP" ca "$D" --hosts other >"$T/out" 2>&1
[ $? = 1 ] || fail "an existing CA was overwritten"
grep -q "not overwritten" "$T/out" || fail "message: $(cat $T/out)"
[ "$(cat "$D"/* | md5sum)" = "$sum" ] || fail "files changed"
[ ! -e "$D/other.crt" ] || fail "other.crt written"
for bad in "--hosts a/b" "--hosts ca" "--hosts x,x" "--hosts a:b" "--hosts .hidden"; do
	# shellcheck disable=SC2086
	"$TAP" ca "$T/bad" $bad >"$T/out" 2>&1
	[ $? = 1 ] || fail "'$bad' accepted"
	[ -z "$(ls -A "$T/bad" 2>/dev/null)" ] || fail "'$bad' left files"
done
for bad in "" "--days 0" "--days x" "--hosts ," "a b"; do
	# shellcheck disable=SC2086
	"$TAP" ca $bad >"$T/out" 2>&1
	[ $? = 2 ] || fail "usage '$bad' not refused with 2"
	grep -q "tapestry" "$T/out" || fail "no message for '$bad'"
done
"$TAP" ca "$T/no/such/parent" >"$T/out" 2>&1
[ $? = 1 ] || fail "missing parent directory"
"$TAP" ca --help | grep -q "ca.crt" || fail "help"
"$TAP" --help | grep -q "^  ca " || fail "not in the command list"
echo PASS
