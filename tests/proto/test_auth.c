/*
 * tests/proto/test_auth.c - SHA-256, HMAC and handshake proofs, checked
 * against OpenSSL and the FIPS/RFC 4231 vectors.
 */
#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "proto/auth.h"
#include "proto/error.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

Test(auth, sha256_vectors)
{
	uint8_t out[32];
	char h[65];
	struct proto_sha256 s;

	proto_sha256_init(&s);
	proto_sha256_update(&s, "abc", 3);
	proto_sha256_final(&s, out);
	hex(out, 32, h);
	cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	proto_sha256_init(&s);
	proto_sha256_final(&s, out);
	hex(out, 32, h);
	cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(auth, sha256_matches_openssl_all_lengths)
{
	uint8_t data[300], a[32], b[32];
	unsigned blen;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(data); n++) {
		struct proto_sha256 s;

		proto_sha256_init(&s);
		/* feed in uneven pieces to exercise the block buffer */
		size_t off = 0, step = 1;
		while (off < n) {
			size_t take = step < n - off ? step : n - off;
			proto_sha256_update(&s, data + off, take);
			off += take;
			step = step * 3 % 71 + 1;
		}
		proto_sha256_final(&s, a);
		EVP_Digest(data, n, b, &blen, EVP_sha256(), NULL);
		cr_assert_eq(memcmp(a, b, 32), 0, "length %zu", n);
	}
}

Test(auth, hmac_rfc4231_case2_and_openssl)
{
	uint8_t out[32], ref[32];
	unsigned len;
	char h[65];

	proto_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, out);
	hex(out, 32, h);
	cr_assert_str_eq(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	uint8_t longkey[131];
	memset(longkey, 0xaa, sizeof(longkey));
	proto_hmac_sha256(longkey, sizeof(longkey), "x", 1, out);
	HMAC(EVP_sha256(), longkey, sizeof(longkey), (const uint8_t *)"x", 1, ref, &len);
	cr_assert_eq(memcmp(out, ref, 32), 0);
	proto_hmac_sha256("", 0, "", 0, out);
	HMAC(EVP_sha256(), "", 0, (const uint8_t *)"", 0, ref, &len);
	cr_assert_eq(memcmp(out, ref, 32), 0);
}

Test(auth, proofs_differ_by_side_secret_nonce_and_id)
{
	uint8_t sn[PROTO_NONCE], cn[PROTO_NONCE], p1[32], p2[32];

	cr_assert_eq(proto_random(sn, sizeof(sn)), 0);
	cr_assert_eq(proto_random(cn, sizeof(cn)), 0);
	proto_auth_proof(PROTO_AUTH_CLIENT, "s3cret", 6, sn, cn, 42, p1);
	proto_auth_proof(PROTO_AUTH_CLIENT, "s3cret", 6, sn, cn, 42, p2);
	cr_assert(proto_auth_equal(p1, p2));
	proto_auth_proof(PROTO_AUTH_SERVER, "s3cret", 6, sn, cn, 42, p2);
	cr_assert_not(proto_auth_equal(p1, p2));
	proto_auth_proof(PROTO_AUTH_CLIENT, "s3cret!", 7, sn, cn, 42, p2);
	cr_assert_not(proto_auth_equal(p1, p2));
	proto_auth_proof(PROTO_AUTH_CLIENT, "s3cret", 6, sn, cn, 43, p2);
	cr_assert_not(proto_auth_equal(p1, p2));
	cn[5] ^= 1;
	proto_auth_proof(PROTO_AUTH_CLIENT, "s3cret", 6, sn, cn, 42, p2);
	cr_assert_not(proto_auth_equal(p1, p2));
}

/* Stream keys (proto/auth.h): the verifier depends on the key and the
 * stream; a claim checks against its own verifier only, and not once its
 * nonces, stream or proof change; with PROTO_CHALLENGE_KNOWN the verifier
 * stays home. */
Test(auth, stream_key_claims)
{
	uint8_t key[PROTO_STREAM_KEY], v[PROTO_MAC], v2[PROTO_MAC];
	uint8_t sn[PROTO_NONCE], cn[PROTO_NONCE], zero[PROTO_MAC] = {0};
	struct proto_key k, k2;

	cr_assert_eq(proto_random(key, sizeof(key)), 0);
	cr_assert_eq(proto_random(sn, sizeof(sn)), 0);
	cr_assert_eq(proto_random(cn, sizeof(cn)), 0);
	proto_stream_verifier(key, 42, v);
	proto_stream_verifier(key, 43, v2);
	cr_assert_not(proto_auth_equal(v, v2));
	key[0] ^= 1;
	proto_stream_verifier(key, 42, v2);
	cr_assert_not(proto_auth_equal(v, v2));
	proto_key_claim(&k, v, 42, sn, cn, PROTO_CHALLENGE_KEY);
	cr_assert_eq(k.flags, PROTO_KEY_VERIFIER);
	cr_assert(proto_auth_equal(k.verifier, v));
	cr_assert(proto_key_check(&k, v));
	cr_assert_not(proto_key_check(&k, v2));
	proto_key_claim(&k2, v, 42, sn, cn,
			PROTO_CHALLENGE_KEY | PROTO_CHALLENGE_KNOWN);
	cr_assert_eq(k2.flags, 0);
	cr_assert(proto_auth_equal(k2.verifier, zero));
	cr_assert(proto_auth_equal(k2.proof, k.proof));
	k2 = k;
	k2.server_nonce[3] ^= 1;
	cr_assert_not(proto_key_check(&k2, v));
	k2 = k;
	k2.stream = 43;
	cr_assert_not(proto_key_check(&k2, v));
	k2 = k;
	k2.proof[31] ^= 1;
	cr_assert_not(proto_key_check(&k2, v));
	/* not the AUTH proof under the same key: labels differ */
	proto_auth_proof(PROTO_AUTH_CLIENT, v, PROTO_MAC, sn, cn, 42, v2);
	cr_assert_not(proto_auth_equal(v2, k.proof));
}

Test(auth, random_is_not_constant)
{
	uint8_t a[32], b[32];

	cr_assert_eq(proto_random(a, 32), 0);
	cr_assert_eq(proto_random(b, 32), 0);
	cr_assert_neq(memcmp(a, b, 32), 0);
}
