/*
 * fuzz/fuzz_codec.c - libFuzzer target for the batch codec (proto/codec.c).
 *
 * Each input is used three ways:
 *  1. decoded as it is;
 *  2. decoded again with its header checksum recomputed, so that mutations
 *     reach the field checks, zstd and the inverse transform;
 *  3. read as raw 72-byte records, encoded at level 0 and 1 and decoded.
 * Whatever decodes (version 1, 2 or 3) is re-encoded (version 3) and decoded
 * again: the records must come back identical (abort otherwise). Inputs
 * of two records or more also run with records 0, 1, 2 (mod the count)
 * turned into the types the version-2 transform treats apart (STRING,
 * ARRAY, COMPUTE), so that its container and drel paths see arbitrary
 * values. Build:
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
static unsigned char *buf;	/* proto_codec_bound(OUT_MAX) bytes */
static size_t buf_cap;


/* ev[0..n) through every encoder and back: must be identical. */
static void reencode(const struct proto_event *ev, size_t n)
{
	size_t w, got;
	int i;

	for (i = 0; i < 2; i++) {
		if (proto_codec_encode(enc[i], ev, n, buf, buf_cap, &w))
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
		buf_cap = proto_codec_bound(OUT_MAX);
		buf = malloc(buf_cap);
		if (!dec || !enc[0] || !enc[1] || !buf)
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
		s = proto_xxh32(copy, 20, proto_xxh32(copy + 24, size - 24, 0));
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
		if (n > 1) {
			static const uint16_t shapes[] = {
				PROTO_EV_STRING, PROTO_EV_ARRAY, PROTO_EV_COMPUTE
			};

			for (size_t k = 0; k < 3; k++) {
				out[k % n].type = shapes[k];
				reencode(out, n);
			}
		}
	}
	return 0;
}
