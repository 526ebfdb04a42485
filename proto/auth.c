/*
 * proto/auth.c - SHA-256, HMAC-SHA256 and the handshake proofs.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/error.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void block(struct proto_sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^
			      (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
			      ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
			      ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void proto_sha256_init(struct proto_sha256 *s)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
				       0xa54ff53a, 0x510e527f, 0x9b05688c,
				       0x1f83d9ab, 0x5be0cd19};
	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->fill = 0;
}

void proto_sha256_update(struct proto_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->len += len;
	while (len > 0) {
		size_t take = 64 - s->fill;

		if (take > len)
			take = len;
		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		len -= take;
		if (s->fill == 64) {
			block(s, s->buf);
			s->fill = 0;
		}
	}
}

void proto_sha256_final(struct proto_sha256 *s, uint8_t out[PROTO_SHA256_LEN])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, lenbe[8];

	proto_sha256_update(s, &pad, 1);
	while (s->fill != 56)
		proto_sha256_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenbe[i] = (uint8_t)(bits >> (56 - 8 * i));
	proto_sha256_update(s, lenbe, 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void proto_hmac_sha256(const void *key, size_t keylen, const void *msg,
		       size_t msglen, uint8_t out[PROTO_SHA256_LEN])
{
	uint8_t k[64] = {0}, pad[64], inner[PROTO_SHA256_LEN];
	struct proto_sha256 s;

	if (keylen > 64) {
		proto_sha256_init(&s);
		proto_sha256_update(&s, key, keylen);
		proto_sha256_final(&s, k);
	} else if (keylen > 0) {
		memcpy(k, key, keylen);
	}
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	proto_sha256_init(&s);
	proto_sha256_update(&s, pad, 64);
	proto_sha256_update(&s, msg, msglen);
	proto_sha256_final(&s, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	proto_sha256_init(&s);
	proto_sha256_update(&s, pad, 64);
	proto_sha256_update(&s, inner, sizeof(inner));
	proto_sha256_final(&s, out);
}

void proto_auth_proof(enum proto_auth_side side, const void *secret,
		      size_t secretlen, const uint8_t server_nonce[PROTO_NONCE],
		      const uint8_t client_nonce[PROTO_NONCE], uint64_t id,
		      uint8_t out[PROTO_MAC])
{
	static const char client_label[] = "tapestry-v1 client";
	static const char server_label[] = "tapestry-v1 server";
	static const char stream_label[] = "tapestry-v1 stream";
	uint8_t msg[sizeof(client_label) - 1 + 2 * PROTO_NONCE + 8];
	size_t off = 0;

	_Static_assert(sizeof(client_label) == sizeof(server_label) &&
		       sizeof(client_label) == sizeof(stream_label),
		       "labels must have one length");
	memcpy(msg, side == PROTO_AUTH_CLIENT ? client_label :
	       side == PROTO_AUTH_SERVER ? server_label : stream_label,
	       sizeof(client_label) - 1);
	off += sizeof(client_label) - 1;
	memcpy(msg + off, server_nonce, PROTO_NONCE);
	off += PROTO_NONCE;
	memcpy(msg + off, client_nonce, PROTO_NONCE);
	off += PROTO_NONCE;
	for (int i = 0; i < 8; i++)
		msg[off++] = (uint8_t)(id >> (8 * i));
	proto_hmac_sha256(secret, secretlen, msg, off, out);
}

void proto_stream_verifier(const uint8_t key[PROTO_STREAM_KEY], uint64_t stream,
			   uint8_t out[PROTO_MAC])
{
	static const char label[] = "tapestry-v1 verify";
	uint8_t msg[sizeof(label) - 1 + 8];

	memcpy(msg, label, sizeof(label) - 1);
	for (int i = 0; i < 8; i++)
		msg[sizeof(label) - 1 + i] = (uint8_t)(stream >> (8 * i));
	proto_hmac_sha256(key, PROTO_STREAM_KEY, msg, sizeof(msg), out);
}

void proto_key_claim(struct proto_key *k, const uint8_t verifier[PROTO_MAC],
		     uint64_t stream, const uint8_t server_nonce[PROTO_NONCE],
		     const uint8_t client_nonce[PROTO_NONCE],
		     uint32_t challenge_flags)
{
	memset(k, 0, sizeof(*k));
	k->stream = stream;
	memcpy(k->server_nonce, server_nonce, PROTO_NONCE);
	memcpy(k->client_nonce, client_nonce, PROTO_NONCE);
	if (!(challenge_flags & PROTO_CHALLENGE_KNOWN)) {
		k->flags = PROTO_KEY_VERIFIER;
		memcpy(k->verifier, verifier, PROTO_MAC);
	}
	proto_auth_proof(PROTO_AUTH_STREAM, verifier, PROTO_MAC, server_nonce,
			 client_nonce, stream, k->proof);
}

int proto_key_check(const struct proto_key *k,
		    const uint8_t verifier[PROTO_MAC])
{
	uint8_t want[PROTO_MAC];

	proto_auth_proof(PROTO_AUTH_STREAM, verifier, PROTO_MAC,
			 k->server_nonce, k->client_nonce, k->stream, want);
	return proto_auth_equal(want, k->proof);
}

int proto_auth_equal(const uint8_t a[PROTO_MAC], const uint8_t b[PROTO_MAC])
{
	uint8_t diff = 0;

	for (int i = 0; i < PROTO_MAC; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

int proto_random(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += r;
		n -= (size_t)r;
	}
	if (n == 0)
		return 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PROTO_E_IO;
	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			close(fd);
			return PROTO_E_IO;
		}
		p += r;
		n -= (size_t)r;
	}
	close(fd);
	return 0;
}
