#!/bin/sh
# tests/security/tls.sh - TLS 1.3 with mutual certificates between
# collectors, on loopback:
# 1. node -TLS-> gateway -TLS-> root, sensors in clear on the node: the
#    job arrives whole; the logs name each peer's certificate;
# 2. refused and logged: plaintext to a TLS port, a client certificate of
#    another CA, a parent whose certificate is of another CA, no client
#    certificate, TLS 1.2, the right certificate with the wrong secret.
set -u
B=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d /tmp/sec-tls-XXXXXX)
. "${top_srcdir:-$B}/tests/security/lib.sh"
trap cleanup EXIT INT TERM
"$TAP" ca "$T/job" --hosts node,gw >/dev/null || fail "tapestry ca"
"$TAP" ca "$T/other" --hosts evil >/dev/null || fail "tapestry ca (other)"
J=$T/job
# tls NAME [CA-DIR] : the TLS options of host NAME
tls() { d=${2:-$J}; echo "--tls-cert $d/$1.crt --tls-key $d/$1.key --tls-ca $J/ca.crt"; }
COMMON="--secret-file $J/secret --stats-period 1s --handshake-timeout 3s"

echo "== 1. node -> gateway -> root over TLS"
start_col root --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 --output "$T/out1" $(tls manager) $COMMON || fail root
RT=$(tls_port root) || fail "root TLS port"
start_col gw --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 --parent 127.0.0.1:$RT $(tls gw) $COMMON || fail gw
GT=$(tls_port gw) || fail "gw TLS port"
start_col node --listen 127.0.0.1:0 --parent 127.0.0.1:$GT $(tls node) $COMMON || fail node
"$SYNTH" --connect 127.0.0.1:$PORT_node --streams 4 --events 1000000 --batch 4096 --unique \
	--secret-file "$J/secret" --timeout 60 >"$T/s1.out" || fail "synth: $(cat $T/s1.out)"
cat "$T/s1.out"
expect_log root "connected from .* over TLS (certificate 'gw')" "root sees the gateway's certificate"
expect_log gw "connected from .* over TLS (certificate 'node')" "gateway sees the node's certificate"
expect_log node "forwarding to .* over TLS" "node forwards over TLS"

echo "== 2. refusals"
"$ATTACK" --connect 127.0.0.1:$RT --mode plaintext --timeout 10 || fail "plaintext accepted on the TLS port"
expect_log root "closing .*: TLS: .*wrong version number" "plaintext to the TLS port"
n0=$(grep -c "closing .*: TLS:" "$T/root.log")

# a client certificate of another CA (the job's CA certificate is public)
start_col evil --listen 127.0.0.1:0 --parent 127.0.0.1:$RT \
	--tls-cert "$T/other/evil.crt" --tls-key "$T/other/evil.key" --tls-ca "$J/ca.crt" $COMMON || fail evil
expect_log root "closing .*: TLS: .*certificate" "client certificate of another CA (root)"
expect_log evil "parent 127.0.0.1:$RT: TLS:" "client certificate of another CA (client)"
kill -9 $PID_evil

# a parent (fake root) whose certificate is of another CA
start_col fake --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 --output "$T/fake" \
	--tls-cert "$T/other/evil.crt" --tls-key "$T/other/evil.key" --tls-ca "$J/ca.crt" $COMMON || fail fake
FT=$(tls_port fake) || fail "fake TLS port"
start_col victim --listen 127.0.0.1:0 --parent 127.0.0.1:$FT $(tls node) $COMMON || fail victim
expect_log victim "parent 127.0.0.1:$FT: TLS: certificate: " "parent certificate of another CA"
grep -q "connected from" "$T/fake.log" && fail "the fake parent got a connection through"
kill -9 $PID_victim $PID_fake

if command -v openssl >/dev/null; then
	openssl s_client -connect 127.0.0.1:$RT -tls1_3 -CAfile "$J/ca.crt" </dev/null >"$T/nocert.out" 2>&1
	expect_log root "closing .*: TLS: .*peer did not return a certificate" "no client certificate"
	openssl s_client -connect 127.0.0.1:$RT -tls1_2 -cert "$J/gw.crt" -key "$J/gw.key" \
		-CAfile "$J/ca.crt" </dev/null >"$T/tls12.out" 2>&1
	expect_log root "closing .*: TLS: .*protocol" "TLS 1.2"
fi

# the right certificate, the wrong secret: refused inside TLS
printf 'not the secret' >"$T/wrong"
start_col wrong --listen 127.0.0.1:0 --parent 127.0.0.1:$RT $(tls node) \
	--secret-file "$T/wrong" --handshake-timeout 3s || fail wrong
expect_log root "authentication failed (PROTO_E_AUTH)" "wrong secret inside TLS"
kill -9 $PID_wrong

stop_col node || fail "node drain"
stop_col gw || fail "gw drain"
stop_col root || fail "root drain"
"$CHECK" --dir "$T/out1" --streams 4 --events 1000000 --batch 4096 --unique --require-bye || fail "check"
rejected=$(grep -c "closing" "$T/root.log")
echo "root refused $rejected connections, each logged"
echo PASS
