/*
 * proto/auth.h - challenge-response proofs for the connection handshake.
 *
 * proof = HMAC-SHA256(key = job secret,
 *                     msg = label || server_nonce || client_nonce || u64le id)
 * with label "tapestry-v1 client" for AUTH and "tapestry-v1 server" for
 * WELCOME, so neither proof can be replayed as the other. The secret never
 * crosses the network. SHA-256 is implemented here (FIPS 180-4) so that the
 * preloaded sensor does not pull OpenSSL into the traced program; tests check
 * it against OpenSSL. Pure functions, thread-safe.
 */
#ifndef TAPESTRY_PROTO_AUTH_H
#define TAPESTRY_PROTO_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

#define PROTO_SHA256_LEN 32

struct proto_sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed */
	uint8_t buf[64];
	size_t fill;
};

void proto_sha256_init(struct proto_sha256 *s);
void proto_sha256_update(struct proto_sha256 *s, const void *data, size_t len);
void proto_sha256_final(struct proto_sha256 *s, uint8_t out[PROTO_SHA256_LEN]);

/* HMAC-SHA256 of msg under key (any key length). */
void proto_hmac_sha256(const void *key, size_t keylen, const void *msg,
		       size_t msglen, uint8_t out[PROTO_SHA256_LEN]);

/* PROTO_AUTH_STREAM: a sensor's proof of its stream key, keyed by the
 * stream's verifier instead of the job secret (label "tapestry-v1 stream"). */
enum proto_auth_side {
	PROTO_AUTH_CLIENT = 0, PROTO_AUTH_SERVER = 1, PROTO_AUTH_STREAM = 2
};

/* The proof of side for this handshake (see the file comment). */
void proto_auth_proof(enum proto_auth_side side, const void *secret,
		      size_t secretlen, const uint8_t server_nonce[PROTO_NONCE],
		      const uint8_t client_nonce[PROTO_NONCE], uint64_t id,
		      uint8_t out[PROTO_MAC]);

/* Stream keys (docs/PROTOCOL.md, "Stream keys"): a sensor draws a random
 * key of PROTO_STREAM_KEY bytes when its stream begins and never sends it;
 * what collectors learn is the stream's verifier,
 *   verifier = HMAC-SHA256(key, "tapestry-v1 verify" || u64le stream),
 * and what a connection proves is
 *   proof = HMAC-SHA256(verifier, "tapestry-v1 stream" || server nonce ||
 *                       client nonce || u64le stream). */
#define PROTO_STREAM_KEY 32

void proto_stream_verifier(const uint8_t key[PROTO_STREAM_KEY], uint64_t stream,
			   uint8_t out[PROTO_MAC]);

/* Fill k, the KEY of the connection whose CHALLENGE carried challenge_flags
 * and server_nonce: the verifier included unless PROTO_CHALLENGE_KNOWN. */
void proto_key_claim(struct proto_key *k, const uint8_t verifier[PROTO_MAC],
		     uint64_t stream, const uint8_t server_nonce[PROTO_NONCE],
		     const uint8_t client_nonce[PROTO_NONCE],
		     uint32_t challenge_flags);

/* 1 when k's proof was made with verifier (constant time), else 0. */
int proto_key_check(const struct proto_key *k,
		    const uint8_t verifier[PROTO_MAC]);

/* Constant-time comparison of two proofs: 1 when equal. */
int proto_auth_equal(const uint8_t a[PROTO_MAC], const uint8_t b[PROTO_MAC]);

/* Fill buf with n bytes from getrandom(2) (urandom fallback). 0 or PROTO_E_IO. */
int proto_random(void *buf, size_t n);

#endif
