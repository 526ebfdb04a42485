/*
 * fuzz/fuzz_codec.c - libFuzzer target for the batch codec (proto/codec.c).
 *
 * Each input is used three ways:
 *  1. decoded as it is;
 *  2. decoded again with its header checksum recomputed, so that mutations
 *     reach the field checks, zstd and the inverse transform;
 *  3. read as raw 72-byte records, encoded at level 0 and 1 and decoded.
 * Whatever decodes is re-encoded and decoded again: the records must come
 * back identical (abort otherwise). Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -I<builddir> \
 *     fuzz/fuzz_codec.c proto/codec.c proto/event.c proto/error.c -lzstd
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"

#define OUT_MAX 4096		/* records decoded per input, at most */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct proto_codec *dec, *enc[2];
static struct proto_event out[OUT_MAX], again[OUT_MAX];
static unsigned char buf[24 + OUT_MAX * PROTO_EVENT_SIZE];

/* XXH32, as proto/codec.c computes it, to forge valid checksums. */
static uint32_t rotl(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t xxh32(const unsigned char *p, size_t len, uint32_t seed)
{
	const uint32_t P1 = 2654435761u, P2 = 2246822519u, P3 = 3266489917u;
	const uint32_t P4 = 668265263u, P5 = 374761393u;
	const unsigned char *end = p + len;
	uint32_t h, v[4];
	int k;

	if (len >= 16) {
		v[0] = seed + P1 + P2;
		v[1] = seed + P2;
		v[2] = seed;
		v[3] = seed - P1;
		for (; end - p >= 16; p += 16)
			for (k = 0; k < 4; k++)
				v[k] = rotl(v[k] + rd32(p + 4 * k) * P2, 13) * P1;
		h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
	} else {
		h = seed + P5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl(h + rd32(p) * P3, 17) * P4;
	for (; p < end; p++)
		h = rotl(h + *p * P5, 11) * P1;
	h ^= h >> 15;
	h *= P2;
	h ^= h >> 13;
	h *= P3;
	return h ^ (h >> 16);
}

/* ev[0..n) through every encoder and back: must be identical. */
static void reencode(const struct proto_event *ev, size_t n)
{
	size_t w, got;
	int i;

	for (i = 0; i < 2; i++) {
		if (proto_codec_encode(enc[i], ev, n, buf, sizeof(buf), &w))
			abort();
		if (proto_codec_decode(dec, buf, w, again, OUT_MAX, &got) ||
		    got != n || memcmp(again, ev, n * sizeof(*ev)))
			abort();
	}
}

static void try_decode(const uint8_t *in, size_t len)
{
	size_t n = 0;
	int rc;

	rc = proto_codec_decode(dec, in, len, out, OUT_MAX, &n);
	if (rc) {
		if (n != 0)
			abort();
		return;
	}
	reencode(out, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *copy;
	static size_t copy_cap;
	uint32_t s;

	if (!dec) {
		dec = proto_codec_new(1);
		enc[0] = proto_codec_new(PROTO_CODEC_LEVEL_NONE);
		enc[1] = proto_codec_new(1);
		if (!dec || !enc[0] || !enc[1])
			abort();
	}
	try_decode(data, size);

	if (size >= 24) {
		if (size > copy_cap) {
			free(copy);
			copy = malloc(size);
			copy_cap = copy ? size : 0;
			if (!copy)
				return 0;
		}
		memcpy(copy, data, size);
		s = xxh32(copy, 20, xxh32(copy + 24, size - 24, 0));
		copy[20] = (unsigned char)s;
		copy[21] = (unsigned char)(s >> 8);
		copy[22] = (unsigned char)(s >> 16);
		copy[23] = (unsigned char)(s >> 24);
		try_decode(copy, size);
	}

	if (size / PROTO_EVENT_SIZE <= OUT_MAX) {
		size_t n = size / PROTO_EVENT_SIZE;

		memcpy(out, data, n * PROTO_EVENT_SIZE);
		reencode(out, n);
	}
	return 0;
}
