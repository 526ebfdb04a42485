/*
 * tests/proto/test_codec.c - Criterion suite "codec" for proto/codec.c.
 *
 * Exact round trips at every level (empty, one, many, the maximum, random
 * garbage, times going backwards, each event shape the version-2
 * predictors treat apart: COMPUTE and receives whose args track the
 * duration, STRING and ARRAY containers, interleaved threads, types over
 * 255) and every class of malformed batch: truncation at every length,
 * each header field wrong, non-canonical drel tables and plane masks,
 * corrupted bodies, trailing bytes, too small output arrays, NULL
 * arguments. Version-1 batches still decode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "tests/xorshift.h"

static const int levels[] = { 0, 1, 3, 9, 19 };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return tests_xorshift64(&rng_state);
}

static void fill_garbage(struct proto_event *ev, size_t n)
{
	unsigned char *p = (unsigned char *)ev;
	size_t i;

	for (i = 0; i < n * sizeof(*ev); i++)
		p[i] = (unsigned char)rnd();
}

/* Trace-like: increasing times, few types, repeated arguments. */
static void fill_trace(struct proto_event *ev, size_t n)
{
	uint64_t t = 1000000000ull;
	size_t i;
	int k;

	memset(ev, 0, n * sizeof(*ev));
	for (i = 0; i < n; i++) {
		t += 200 + rnd() % 3000;
		ev[i].t_start = t;
		t += rnd() % 5000;
		ev[i].t_end = t;
		ev[i].type = (uint16_t)(PROTO_EV_MPI_SEND + rnd() % 4);
		ev[i].tid = (uint32_t)(rnd() % 2);
		for (k = 0; k < 4; k++)
			ev[i].arg[k] = (int64_t)(rnd() % 8);
	}
}

static void roundtrip(int level, const struct proto_event *ev, size_t n)
{
	struct proto_codec *c = proto_codec_new(level);
	size_t cap = proto_codec_bound(n), w = 0, got = 99;
	unsigned char *buf = malloc(cap);
	struct proto_event *back = calloc(n ? n : 1, sizeof(*back));
	uint32_t peek = 0;
	int rc;

	cr_assert_not_null(c);
	cr_assert_not_null(buf);
	cr_assert_not_null(back);
	rc = proto_codec_encode(c, ev, n, buf, cap, &w);
	cr_assert_eq(rc, 0, "level %d n %zu: %s", level, n, proto_errname(rc));
	cr_assert_leq(w, cap);
	cr_assert_eq(proto_codec_peek(buf, w, &peek), 0);
	cr_assert_eq(peek, n);
	rc = proto_codec_decode(c, buf, w, back, n, &got);
	cr_assert_eq(rc, 0, "level %d n %zu: %s", level, n, proto_errname(rc));
	cr_assert_eq(got, n);
	if (n)
		cr_assert_eq(memcmp(ev, back, n * sizeof(*ev)), 0,
			     "level %d n %zu: records differ", level, n);
	free(back);
	free(buf);
	proto_codec_free(c);
}

Test(codec, new_free)
{
	proto_codec_free(NULL);
	cr_assert_null(proto_codec_new(-1));
	cr_assert_null(proto_codec_new(20));
	proto_codec_free(proto_codec_new(0));
	proto_codec_free(proto_codec_new(19));
}

Test(codec, roundtrip_sizes)
{
	static const size_t sizes[] = { 0, 1, 2, 7, 8, 9, 15, 16, 17, 100, 1000, 4099 };
	struct proto_event *ev = calloc(4099, sizeof(*ev));
	size_t s, l;

	cr_assert_not_null(ev);
	fill_trace(ev, 4099);
	for (l = 0; l < NLEVELS; l++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			roundtrip(levels[l], ev, sizes[s]);
	free(ev);
}

Test(codec, roundtrip_garbage)
{
	struct proto_event *ev = calloc(1001, sizeof(*ev));
	size_t l;
	int rep;

	cr_assert_not_null(ev);
	for (rep = 0; rep < 4; rep++) {
		fill_garbage(ev, 1001);
		for (l = 0; l < NLEVELS; l++) {
			roundtrip(levels[l], ev, 1001);
			roundtrip(levels[l], ev, 3);
		}
	}
	free(ev);
}

Test(codec, roundtrip_extreme_values)
{
	struct proto_event ev[6];
	size_t l;

	memset(ev, 0, sizeof(ev));
	ev[0].t_start = UINT64_MAX;
	ev[0].t_end = 0;		/* end before start */
	ev[1].t_start = 0;		/* time goes backwards */
	ev[1].t_end = UINT64_MAX;
	ev[2].t_start = 1ull << 63;
	ev[2].t_end = (1ull << 63) - 1;
	ev[2].type = UINT16_MAX;	/* no per-type delta */
	ev[2].arg[0] = INT64_MIN;
	ev[3].type = 255;
	ev[3].arg[5] = INT64_MAX;
	ev[4].type = 255;
	ev[4].arg[5] = INT64_MIN;
	ev[4].flags = UINT16_MAX;
	ev[4].tid = UINT32_MAX;
	ev[5] = ev[0];
	for (l = 0; l < NLEVELS; l++)
		roundtrip(levels[l], ev, 6);
}

Test(codec, roundtrip_non_monotonic)
{
	struct proto_event ev[300];
	size_t i, l;

	fill_trace(ev, 300);
	for (i = 0; i < 300; i += 3) {
		uint64_t t = ev[i].t_start;

		ev[i].t_start = ev[i].t_end;
		ev[i].t_end = t;
	}
	ev[150].t_start = 5;
	for (l = 0; l < NLEVELS; l++)
		roundtrip(levels[l], ev, 300);
}

Test(codec, roundtrip_max, .timeout = 120)
{
	size_t n = PROTO_CODEC_MAX_RECORDS;
	struct proto_event *ev = malloc(n * sizeof(*ev));

	cr_assert_not_null(ev);
	fill_trace(ev, n);
	roundtrip(0, ev, n);
	roundtrip(1, ev, n);
	free(ev);
}

Test(codec, encode_errors)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[16];
	unsigned char buf[2048];
	size_t w = 7, cap;

	cr_assert_not_null(c);
	fill_garbage(ev, 16);
	cr_assert_eq(proto_codec_encode(NULL, ev, 1, buf, sizeof(buf), &w), PROTO_E_ARG);
	cr_assert_eq(w, 0);
	cr_assert_eq(proto_codec_encode(c, NULL, 1, buf, sizeof(buf), &w), PROTO_E_ARG);
	cr_assert_eq(proto_codec_encode(c, ev, 1, NULL, sizeof(buf), &w), PROTO_E_ARG);
	cr_assert_eq(proto_codec_encode(c, ev, 1, buf, sizeof(buf), NULL), PROTO_E_ARG);
	cr_assert_eq(proto_codec_encode(c, NULL, 0, buf, sizeof(buf), &w), 0);
	cr_assert_eq(w, 24);
	cr_assert_eq(proto_codec_encode(c, ev, PROTO_CODEC_MAX_RECORDS + 1ul, buf,
					sizeof(buf), &w), PROTO_E_TOOBIG);
	cr_assert_eq(proto_codec_encode(c, ev, 0, buf, 23, &w), PROTO_E_FULL);
	/* Garbage does not compress: it is stored, and every cap below its
	 * stored size is too small. */
	cr_assert_eq(proto_codec_encode(c, ev, 16, buf, proto_codec_bound(16), &w), 0);
	cr_assert_leq(w, proto_codec_bound(16));
	cr_assert_eq(buf[5], 0, "garbage stored");
	size_t stored = w;

	for (cap = 0; cap < stored; cap++)
		cr_assert_eq(proto_codec_encode(c, ev, 16, buf, cap, &w),
			     PROTO_E_FULL, "cap %zu", cap);
	cr_assert_eq(proto_codec_encode(c, ev, 16, buf, stored, &w), 0);
	cr_assert_eq(w, stored);
	proto_codec_free(c);
}

/* A small batch of 20 trace records at level. */
static size_t small_batch(int level, struct proto_event *ev,
			  unsigned char *buf, size_t cap)
{
	struct proto_codec *c = proto_codec_new(level);
	size_t w = 0;

	cr_assert_not_null(c);
	fill_trace(ev, 20);
	cr_assert_eq(proto_codec_encode(c, ev, 20, buf, cap, &w), 0);
	proto_codec_free(c);
	return w;
}

/* Decode must fail with want (0 = any error) and leave out untouched. */
static void expect_reject(const unsigned char *buf, size_t len, int want)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event out[32], canary[32];
	size_t n = 12345;
	int rc;

	cr_assert_not_null(c);
	memset(out, 0xa5, sizeof(out));
	memset(canary, 0xa5, sizeof(canary));
	rc = proto_codec_decode(c, buf, len, out, 32, &n);
	if (want)
		cr_assert_eq(rc, want, "got %s want %s", proto_errname(rc),
			     proto_errname(want));
	else
		cr_assert_lt(rc, 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(memcmp(out, canary, sizeof(out)), 0, "out was written");
	proto_codec_free(c);
}

/* Rewrite the checksum so that a header change reaches the field checks. */
static void fix_checksum(unsigned char *buf, size_t len);

Test(codec, truncated_every_length)
{
	struct proto_event ev[20];
	unsigned char buf[2048];
	size_t l, len, cut;

	for (l = 0; l < NLEVELS; l++) {
		len = small_batch(levels[l], ev, buf, sizeof(buf));
		for (cut = 0; cut < len; cut++)
			expect_reject(buf, cut, PROTO_E_TRUNCATED);
	}
}

Test(codec, bad_header_fields)
{
	struct proto_event ev[20];
	unsigned char buf[2048], b[2048];
	size_t len = small_batch(3, ev, buf, sizeof(buf));
	uint32_t v;

	memcpy(b, buf, len);
	b[0] ^= 1;
	expect_reject(b, len, PROTO_E_MAGIC);
	memcpy(b, buf, len);
	b[4] = 4;			/* a version to come */
	expect_reject(b, len, PROTO_E_VERSION);
	memcpy(b, buf, len);
	b[4] = 255;
	expect_reject(b, len, PROTO_E_VERSION);
	memcpy(b, buf, len);
	b[4] = 0;
	expect_reject(b, len, PROTO_E_VERSION);
	memcpy(b, buf, len);
	b[5] |= 0x80;			/* unknown flag */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[5] = 0;			/* zstd frame announced as stored */
	fix_checksum(b, len);
	expect_reject(b, len, 0);
	memcpy(b, buf, len);
	b[7] = 1;			/* reserved */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[6] = 0;			/* compressed at level 0 */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	v = PROTO_CODEC_MAX_RECORDS + 1;	/* count over max */
	memcpy(b + 8, &v, 4);
	v *= 72;
	memcpy(b + 12, &v, 4);
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_TOOBIG);
	memcpy(b, buf, len);
	b[8] = 21;	/* count/size mismatch: the plane mask finds out */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[12] = 17;			/* raw size under the minimum (18) */
	b[13] = 0;
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_LENGTH);
	memcpy(b, buf, len);
	v = 8 + 511 + 9 + 20 * 72 + 1;	/* raw size over the maximum */
	memcpy(b + 12, &v, 4);
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_LENGTH);
	memcpy(b, buf, len);
	b[12] += 1;	/* plausible, but the frame's content size differs */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_CODEC);
	memcpy(b, buf, len);
	b[20] ^= 0x10;			/* checksum */
	expect_reject(b, len, PROTO_E_CHECKSUM);
	memcpy(b, buf, len);
	b[16] += 1;			/* body size says one byte more */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_TRUNCATED);
}

Test(codec, bad_header_stored)
{
	struct proto_event ev[20];
	unsigned char buf[2048], b[2048];
	size_t len = small_batch(0, ev, buf, sizeof(buf));

	memcpy(b, buf, len);
	b[5] = 1;			/* stored body announced as zstd */
	b[6] = 1;
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_CODEC);
	memcpy(b, buf, len);
	b[6] = 3;			/* stored with a level */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[16] -= 1;			/* stored body must be the raw size */
	fix_checksum(b, len - 1);
	expect_reject(b, len - 1, PROTO_E_LENGTH);
}

Test(codec, trailing_garbage)
{
	struct proto_event ev[20];
	unsigned char buf[2048];
	size_t l, len;

	for (l = 0; l < NLEVELS; l++) {
		len = small_batch(levels[l], ev, buf, sizeof(buf) - 8);
		memset(buf + len, 0, 8);
		expect_reject(buf, len + 1, PROTO_E_LENGTH);
		expect_reject(buf, len + 8, PROTO_E_LENGTH);
	}
}

/* Flip each bit of each byte: rejected, or (only if the checksum is
 * fixed up, so that zstd's own checks are reached) decoded exactly. */
static void flip_all(int level, int fix)
{
	struct proto_codec *c = proto_codec_new(level);
	struct proto_event ev[20], out[20];
	unsigned char buf[2048], b[2048];
	size_t len = small_batch(level, ev, buf, sizeof(buf)), i, n;
	int bit, rc;

	cr_assert_not_null(c);
	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			/* With the checksum forged, version 3 with bit 0
			 * flipped is a valid version-2 batch: other rules,
			 * other records. Only the checksum guards that byte. */
			if (fix && i == 4 && bit == 0)
				continue;
			memcpy(b, buf, len);
			b[i] ^= (unsigned char)(1u << bit);
			if (fix)
				fix_checksum(b, len);
			rc = proto_codec_decode(c, b, len, out, 20, &n);
			if (!fix) {
				cr_assert_lt(rc, 0, "byte %zu bit %d accepted", i, bit);
				continue;
			}
			if (rc == 0 && level != 0)
				cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0,
					     "byte %zu bit %d: wrong records", i, bit);
			if (rc)
				cr_assert_eq(n, 0);
		}
	}
	proto_codec_free(c);
}

Test(codec, corrupt_every_byte)
{
	size_t l;

	for (l = 0; l < NLEVELS; l++)
		flip_all(levels[l], 0);
	/* Past our checksum, zstd's frame checks and XXH64 must catch it. */
	flip_all(1, 1);
	flip_all(19, 1);
}

Test(codec, out_too_small)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[20], out[20], canary[20];
	unsigned char buf[2048];
	size_t len = small_batch(1, ev, buf, sizeof(buf)), n = 5;

	cr_assert_not_null(c);
	memset(out, 0x5a, sizeof(out));
	memcpy(canary, out, sizeof(out));
	cr_assert_eq(proto_codec_decode(c, buf, len, out, 19, &n), PROTO_E_FULL);
	cr_assert_eq(n, 0);
	cr_assert_eq(memcmp(out, canary, sizeof(out)), 0);
	cr_assert_eq(proto_codec_decode(c, buf, len, NULL, 0, &n), PROTO_E_FULL);
	cr_assert_eq(proto_codec_decode(c, buf, len, out, 20, &n), 0);
	cr_assert_eq(n, 20);
	proto_codec_free(c);
}

Test(codec, null_args)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[20], out[20];
	unsigned char buf[2048];
	size_t len = small_batch(1, ev, buf, sizeof(buf)), n = 3;
	uint32_t cnt = 3;

	cr_assert_not_null(c);
	cr_assert_eq(proto_codec_decode(NULL, buf, len, out, 20, &n), PROTO_E_ARG);
	cr_assert_eq(n, 0);
	cr_assert_eq(proto_codec_decode(c, NULL, len, out, 20, &n), PROTO_E_ARG);
	cr_assert_eq(proto_codec_decode(c, buf, len, NULL, 20, &n), PROTO_E_ARG);
	cr_assert_eq(proto_codec_decode(c, buf, len, out, 20, NULL), PROTO_E_ARG);
	cr_assert_eq(proto_codec_peek(NULL, len, &cnt), PROTO_E_ARG);
	cr_assert_eq(cnt, 0);
	cr_assert_eq(proto_codec_peek(buf, len, NULL), PROTO_E_ARG);
	cr_assert_eq(proto_codec_peek(buf, 23, &cnt), PROTO_E_TRUNCATED);
	cr_assert_eq(proto_codec_peek(buf, 24, &cnt), 0);
	cr_assert_eq(cnt, 20);
	proto_codec_free(c);
}

/* The two records of the worked example in docs/modules/proto-codec.md. */
static size_t stored_body(const struct proto_event *ev, size_t n,
			  unsigned char *buf, size_t cap);
static void example_records(struct proto_event ev[2])
{
	memset(ev, 0, 2 * sizeof(*ev));
	ev[0].t_start = 1000;
	ev[0].t_end = 1500;
	ev[0].type = PROTO_EV_WRITE;
	ev[0].arg[0] = 1;
	ev[0].arg[1] = 4096;
	ev[1] = ev[0];
	ev[1].t_start = 2000;
	ev[1].t_end = 2100;
}

/* Every byte of the worked example (version 2, level 0). */
Test(codec, example_bytes)
{
	struct proto_codec *c = proto_codec_new(0);
	struct proto_event ev[2];
	unsigned char buf[256];
	static const unsigned char want[56] = {
		'T', 'P', 'B', 'C', 3, 0, 0, 0,
		2, 0, 0, 0, 32, 0, 0, 0, 32, 0, 0, 0,
		0x3b, 0x3e, 0x1c, 0x6b,
		/* base: the first t_start */
		0xe8, 0x03, 0, 0, 0, 0, 0, 0,
		/* drel table: no entry */
		0,
		/* plane mask: planes 0, 1, 8, 9, 16, 24, 33 */
		0x03, 0x03, 0x01, 0x01, 0x02, 0, 0, 0, 0,
		/* plane 0, 1: gaps zz(1000 - 1000) = 0, zz(500 - 0) = 0x3e8 */
		0x00, 0xe8, 0x00, 0x03,
		/* plane 8, 9: zz(500) = 0x3e8, zz(100 - 500) = 0x31f */
		0xe8, 0x1f, 0x03, 0x03,
		/* plane 16: type 17 twice */
		0x11, 0x11,
		/* plane 24: zz(1), then 1 - 1 */
		0x02, 0x00,
		/* plane 33: zz(4096) >> 8, then 0 */
		0x20, 0x00,
	};
	size_t w;

	cr_assert_not_null(c);
	example_records(ev);
	cr_assert_eq(proto_codec_encode(c, ev, 2, buf, sizeof(buf), &w), 0);
	cr_assert_eq(w, sizeof(want));
	for (size_t i = 0; i < w; i++)
		cr_assert_eq(buf[i], want[i], "byte %zu: %02x, want %02x", i,
			     buf[i], want[i]);
	cr_assert_eq(proto_codec_encode(c, ev, 0, buf, sizeof(buf), &w), 0);
	cr_assert_eq(w, 24);
	cr_assert_eq(buf[4], 3);
	proto_codec_free(c);
}

/* The same two records as a version-2 batch (the encoder of the previous
 * release wrote exactly these bytes): still decoded, to the same records. */
Test(codec, decodes_version2)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[2], out[2];
	static const unsigned char v2[56] = {
		'T', 'P', 'B', 'C', 2, 0, 0, 0,
		2, 0, 0, 0, 32, 0, 0, 0, 32, 0, 0, 0,
		0xd2, 0xcb, 0x7e, 0xc2,
		0xe8, 0x03, 0, 0, 0, 0, 0, 0,
		0,
		0x03, 0x03, 0x01, 0x01, 0x02, 0, 0, 0, 0,
		0x00, 0xe8, 0x00, 0x03,
		0xe8, 0x1f, 0x03, 0x03,
		0x11, 0x11,
		0x02, 0x00,
		0x20, 0x00,
	};
	static const unsigned char empty[24] = {
		'T', 'P', 'B', 'C', 2, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xcd, 0x12, 0xc5,
	};
	size_t n = 0;

	cr_assert_not_null(c);
	example_records(ev);
	cr_assert_eq(proto_codec_decode(c, v2, sizeof(v2), out, 2, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0);
	cr_assert_eq(proto_codec_decode(c, empty, sizeof(empty), out, 2, &n), 0);
	cr_assert_eq(n, 0);
	proto_codec_free(c);
}

/* A version-2 zstd batch of the previous release (the fuzz seed
 * fuzz/corpus/codec/v2-zstd1-40, ring-like records) decodes, and its
 * records re-encode as version 3 and come back the same. */
Test(codec, decodes_version2_zstd)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event out[40], again[40];
	unsigned char in[8192], buf[8192];
	size_t len, n = 0, w;
	FILE *f = fopen(TEST_SRCDIR "/fuzz/corpus/codec/v2-zstd1-40", "rb");

	cr_assert_not_null(c);
	cr_assert_not_null(f);
	len = fread(in, 1, sizeof(in), f);
	fclose(f);
	cr_assert_eq(in[4], 2, "a version-2 seed");
	cr_assert_eq(in[5], 1, "compressed");
	cr_assert_eq(proto_codec_decode(c, in, len, out, 40, &n), 0);
	cr_assert_eq(n, 40);
	cr_assert_eq(proto_codec_encode(c, out, 40, buf, sizeof(buf), &w), 0);
	cr_assert_eq(buf[4], 3);
	cr_assert_eq(proto_codec_decode(c, buf, w, again, 40, &n), 0);
	cr_assert_eq(memcmp(out, again, sizeof(out)), 0);
	proto_codec_free(c);
}

/* Version 3's group order: planes 16 and 17 (the type) in record order,
 * every other plane in the order of (type, previous type), ties in record
 * order. COMPUTE (10) after nothing, SEND after COMPUTE, COMPUTE after
 * SEND, SEND after COMPUTE: records 0, 2, 1, 3. The volumes are what the
 * CPU time gives at the rate: their planes are all zero, dropped. */
Test(codec, group_order)
{
	struct proto_event ev[4];
	unsigned char buf[512];
	size_t w, i, off;
	unsigned char mask[9];
	static const uint64_t dur[4] = { 5, 6, 7, 8 };

	memset(ev, 0, sizeof(ev));
	for (i = 0; i < 4; i++) {
		ev[i].t_start = 1000 * (i + 1);
		ev[i].t_end = ev[i].t_start + dur[i];
		if (i % 2 == 0) {
			ev[i].type = PROTO_EV_COMPUTE;
			ev[i].arg[0] = (int64_t)(1000000 * (i + 1));
			ev[i].arg[3] = 3000000000;	/* 3 flop/ns */
			ev[i].arg[1] = 3 * ev[i].arg[0];
		} else {
			ev[i].type = PROTO_EV_MPI_SEND;
		}
	}
	w = stored_body(ev, 4, buf, sizeof(buf));
	cr_assert_eq(buf[4], 3);
	off = 24 + 8 + 1 + 2 * buf[24 + 8];
	memcpy(mask, buf + off, 9);
	off += 9;
	cr_assert_eq(mask[4] & 0xff, 0, "arg 1 (planes 32..39) dropped");
	cr_assert(mask[1] & 1, "duration's low byte kept");
	cr_assert(mask[2] & 1, "type kept");
	/* plane 8, the durations' low byte, is the 3rd kept plane after
	 * planes 0, 1 when kept; find it by counting */
	{
		size_t k = 0, p8 = 0, p16 = 0;

		for (int b = 0; b < 72; b++) {
			if (!((mask[b / 8] >> (b % 8)) & 1))
				continue;
			if (b == 8)
				p8 = off + k * 4;
			if (b == 16)
				p16 = off + k * 4;
			k++;
		}
		cr_assert_eq(w, off + k * 4);
		/* types in record order */
		cr_assert_eq(buf[p16 + 0], PROTO_EV_COMPUTE);
		cr_assert_eq(buf[p16 + 1], PROTO_EV_MPI_SEND);
		cr_assert_eq(buf[p16 + 2], PROTO_EV_COMPUTE);
		cr_assert_eq(buf[p16 + 3], PROTO_EV_MPI_SEND);
		/* durations: record 0 zz(5); record 2 predicted by COMPUTE's
		 * type entry: zz(7 - 5); record 1 zz(6); record 3 after its
		 * context (SEND after COMPUTE): zz(8 - 6) */
		cr_assert_eq(buf[p8 + 0], 10);
		cr_assert_eq(buf[p8 + 1], 4);
		cr_assert_eq(buf[p8 + 2], 12);
		cr_assert_eq(buf[p8 + 3], 4);
	}
	roundtrip(0, ev, 4);
	roundtrip(1, ev, 4);
}

/* COMPUTE's volume rule on any values: CPU time 0 (the duration then),
 * method 1 (the instruction rate), rates around 2^33 (where the integer
 * product needs 128 bits) and garbage; exact round trips, and a volume
 * the rule predicts costs no plane. */
Test(codec, roundtrip_volume_rule)
{
	static struct proto_event ev[1200];
	size_t i, l;

	memset(ev, 0, sizeof(ev));
	for (i = 0; i < 1200; i++) {
		struct proto_event *e = &ev[i];

		e->type = i % 3 ? PROTO_EV_COMPUTE : PROTO_EV_MPI_RECV;
		e->t_start = 1000000 + 5000 * i;
		e->t_end = e->t_start + rnd() % 4000;
		e->arg[0] = (int64_t)(i % 5 == 0 ? 0 : rnd() % 3000000000ull);
		e->arg[2] = (int64_t)(i % 7 == 0);
		e->arg[3] = (int64_t)((1ull << 33) - 2 + i % 5);
		e->arg[4] = (int64_t)(i % 11 == 0 ? rnd() : 2000000000 + i);
		e->arg[1] = (int64_t)rnd();
		if (i % 13 == 0)
			for (int k = 0; k < 6; k++)
				e->arg[k] = (int64_t)rnd();
	}
	for (l = 0; l < NLEVELS; l++) {
		roundtrip(levels[l], ev, 1200);
		roundtrip(levels[l], ev + 1, 600);
		roundtrip(levels[l], ev + 5, 30);
	}
}

/* The version-1 worked example (earlier releases' job directories):
 * every plane stored, args against the previous record of the type. */
Test(codec, decodes_version1)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[2], out[2];
	unsigned char b[24 + 144];
	static const unsigned char hdr[24] = {
		'T', 'P', 'B', 'C', 1, 0, 0, 0,
		2, 0, 0, 0, 144, 0, 0, 0, 144, 0, 0, 0,
		0x3e, 0x71, 0x7a, 0x90,
	};
	size_t n = 0;

	cr_assert_not_null(c);
	example_records(ev);
	memset(b, 0, sizeof(b));
	memcpy(b, hdr, 24);
	b[24 + 0] = 0xd0;	/* plane 0: zz(1000), zz(2000 - 1500) */
	b[24 + 1] = 0xe8;
	b[24 + 2] = 0x07;	/* plane 1 */
	b[24 + 3] = 0x03;
	b[24 + 16] = 0xe8;	/* plane 8: zz(500), zz(100) */
	b[24 + 17] = 0xc8;
	b[24 + 18] = 0x03;	/* plane 9 */
	b[24 + 32] = 17;	/* plane 16: types */
	b[24 + 33] = 17;
	b[24 + 48] = 2;		/* plane 24: zz(1), 0 */
	b[24 + 66] = 0x20;	/* plane 33: zz(4096) >> 8 */
	cr_assert_eq(proto_codec_decode(c, b, sizeof(b), out, 2, &n), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0);
	proto_codec_free(c);
}

/* A version-1 zstd batch written by the earlier encoder (the fuzz seed
 * fuzz/corpus/codec/zstd1-40) decodes, and re-encodes as version 2. */
Test(codec, decodes_version1_zstd)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event out[40], again[40];
	unsigned char in[8192], buf[8192];
	size_t len, n = 0, w;
	FILE *f = fopen(TEST_SRCDIR "/fuzz/corpus/codec/zstd1-40", "rb");

	cr_assert_not_null(c);
	cr_assert_not_null(f);
	len = fread(in, 1, sizeof(in), f);
	fclose(f);
	cr_assert_eq(in[4], 1, "a version-1 seed");
	cr_assert_eq(proto_codec_decode(c, in, len, out, 40, &n), 0);
	cr_assert_eq(n, 40);
	cr_assert_eq(proto_codec_encode(c, out, 40, buf, sizeof(buf), &w), 0);
	cr_assert_eq(buf[4], 3);
	cr_assert_eq(proto_codec_decode(c, buf, w, again, 40, &n), 0);
	cr_assert_eq(memcmp(out, again, sizeof(out)), 0);
	proto_codec_free(c);
}

/* A ring-like rank: COMPUTE (cpu_ns about the duration, constant rates),
 * MPI_Send, COMPUTE, MPI_Recv (probe time about the duration), with the
 * sender thread's FLUSH records and STRING/ARRAY containers between. */
static void fill_ring(struct proto_event *ev, size_t n)
{
	uint64_t t = 8346412820238ull;
	size_t i;

	memset(ev, 0, n * sizeof(*ev));
	for (i = 0; i < n; i++) {
		struct proto_event *e = &ev[i];
		uint64_t dur;

		t += 1400 + rnd() % 400;
		switch (i % 7) {
		case 0:
		case 2:
			dur = i % 7 ? 50 + rnd() % 20 : 135000 + rnd() % 3000;
			e->type = PROTO_EV_COMPUTE;
			e->arg[0] = (int64_t)(dur + 1500 + rnd() % 100);
			/* as sensor/mpi_compute.c derives it */
			e->arg[1] = (int64_t)((double)e->arg[0] * 1e-9 *
					      5292958645.3 + 0.5);
			e->arg[3] = 5292958645;
			break;
		case 1:
			dur = 15000 + rnd() % 200000;
			e->type = PROTO_EV_MPI_SEND;
			e->arg[0] = 1;
			e->arg[1] = (int64_t)(i / 7);
			e->arg[3] = 8192;
			break;
		case 3:
			dur = 30000 + rnd() % 400000;
			e->type = PROTO_EV_MPI_RECV;
			e->flags = PROTO_EVF_HASARRAY;
			e->arg[0] = 3;
			e->arg[1] = (int64_t)(i / 7);
			e->arg[3] = 8192;
			e->arg[4] = (int64_t)(rnd() % 2);
			e->arg[5] = (int64_t)(dur - 1000 - rnd() % 50);
			break;
		case 4:		/* not times: must not break the chain */
			e->type = PROTO_EV_ARRAY;
			e->t_start = 0;
			e->t_end = 3;
			e->flags = 3;
			e->arg[0] = (int64_t)(i / 7);
			e->arg[2] = (int64_t)(rnd() % 30000);
			continue;
		case 5:
			e->type = PROTO_EV_STRING;
			e->t_start = i / 7 + 1;
			e->t_end = 0;
			e->flags = 5;
			memcpy(e->arg, "/tmp/", 5);
			continue;
		default:
			dur = 20000 + rnd() % 9000;
			e->type = PROTO_EV_FLUSH;
			e->tid = 1;
			e->arg[0] = (int64_t)(rnd() % 300);
			e->arg[1] = e->arg[0] * 5;
			break;
		}
		e->t_start = t;
		t += dur;
		e->t_end = t;
	}
}

/* The body of a level-0 batch of ev[0..n) (after the header). */
static size_t stored_body(const struct proto_event *ev, size_t n,
			  unsigned char *buf, size_t cap)
{
	struct proto_codec *c = proto_codec_new(0);
	size_t w = 0;

	cr_assert_not_null(c);
	cr_assert_eq(proto_codec_encode(c, ev, n, buf, cap, &w), 0);
	proto_codec_free(c);
	cr_assert_eq(buf[5], 0);
	return w;
}

Test(codec, roundtrip_event_shapes)
{
	struct proto_event *ev = calloc(3000, sizeof(*ev));
	static const size_t sizes[] = { 1, 2, 5, 7, 8, 9, 63, 64, 700, 3000 };
	size_t l, s;

	cr_assert_not_null(ev);
	fill_ring(ev, 3000);
	for (l = 0; l < NLEVELS; l++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			roundtrip(levels[l], ev, sizes[s]);
			roundtrip(levels[l], ev + 3000 - sizes[s], sizes[s]);
		}
	free(ev);
}

/* The drel table names COMPUTE arg 0 and MPI_Recv arg 5 (they track the
 * duration) and nothing else; a record of every other shape round-trips. */
Test(codec, drel_chosen)
{
	struct proto_event ev[700];
	static unsigned char buf[24 + 8 + 511 + 9 + 700 * 72];
	size_t w;

	fill_ring(ev, 700);
	w = stored_body(ev, 700, buf, sizeof(buf));
	cr_assert_gt(w, 24 + 8 + 1 + 9);
	cr_assert_eq(buf[24 + 8], 2, "%u drel entries", buf[24 + 8]);
	cr_assert_eq(buf[24 + 9], PROTO_EV_COMPUTE);
	cr_assert_eq(buf[24 + 10], 0x01);
	cr_assert_eq(buf[24 + 11], PROTO_EV_MPI_RECV);
	cr_assert_eq(buf[24 + 12], 0x20);
}

/* Records that differ only where the predictors look: contexts that
 * collide in the slot table, types over 255 and their type & 255 twin,
 * type 0, the all-zero record (no plane kept). */
Test(codec, roundtrip_predictor_edges)
{
	struct proto_event ev[64];
	size_t i, l;

	memset(ev, 0, sizeof(ev));
	for (l = 0; l < NLEVELS; l++)
		roundtrip(levels[l], ev, 64);	/* mask all zero */
	for (i = 0; i < 64; i++) {
		/* (42 + k, 22 - k) pairs: type * 97 + prev collide mod 4096 */
		static const uint16_t types[] = { 42, 0, 84, 22, 256 + 17, 17,
						  UINT16_MAX, 255, 1, 2 };

		ev[i].type = types[i % 10];
		ev[i].t_start = 1000 * i + (rnd() % 7);
		ev[i].t_end = ev[i].t_start + rnd() % 100;
		ev[i].arg[i % 6] = (int64_t)rnd();
		ev[i].arg[5] = (int64_t)(ev[i].t_end - ev[i].t_start + 3);
		ev[i].tid = (uint32_t)(i % 3);
	}
	for (l = 0; l < NLEVELS; l++) {
		roundtrip(levels[l], ev, 64);
		roundtrip(levels[l], ev + 1, 17);
	}
}

/* A stored batch of 20 ring records with its body edited (then the
 * checksum fixed): must be rejected with want. */
static void reject_body_edit(unsigned char *b, size_t len, int want)
{
	fix_checksum(b, len);
	expect_reject(b, len, want);
}

Test(codec, bad_body_stored)
{
	struct proto_event ev[20];
	unsigned char buf[4096], b[4096];
	size_t len, cnt, mask;

	fill_ring(ev, 20);
	len = stored_body(ev, 20, buf, sizeof(buf));
	cnt = buf[24 + 8];
	cr_assert_geq(cnt, 1, "the ring batch has a drel entry");
	mask = 24 + 8 + 1 + 2 * cnt;

	memcpy(b, buf, len);
	b[24 + 8] = (unsigned char)(cnt + 1);	/* table longer than said */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[24 + 8] = 255;		/* table past the body */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[24 + 10] = 0;			/* empty arg mask */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[24 + 10] = 0x40;		/* a seventh arg */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[24 + 9] = PROTO_EV_ARRAY;	/* containers have no duration */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[24 + 9] = PROTO_EV_STRING;
	reject_body_edit(b, len, PROTO_E_FORMAT);
	if (cnt >= 2) {
		memcpy(b, buf, len);	/* types not increasing */
		b[24 + 11] = b[24 + 9];
		reject_body_edit(b, len, PROTO_E_FORMAT);
	}
	memcpy(b, buf, len);
	b[mask + 8] ^= 0x80;		/* one plane more or less than sent */
	reject_body_edit(b, len, PROTO_E_FORMAT);
	memcpy(b, buf, len);
	b[mask] ^= 0x01;
	reject_body_edit(b, len, PROTO_E_FORMAT);
	/* Each body byte's every value: rejected or decoded, never a crash,
	 * out untouched on error (expect_reject checks that). */
	for (size_t i = 24; i < mask + 9; i++)
		for (int v = 0; v < 256; v += 17) {
			struct proto_codec *c = proto_codec_new(0);
			struct proto_event out[20];
			size_t n = 7;
			int rc;

			memcpy(b, buf, len);
			b[i] = (unsigned char)v;
			fix_checksum(b, len);
			rc = proto_codec_decode(c, b, len, out, 20, &n);
			cr_assert(rc == 0 ? n == 20 : n == 0);
			proto_codec_free(c);
		}
}

/* Every truncation and bit flip of a zstd ring batch is refused. */
Test(codec, corrupt_ring_batch)
{
	struct proto_codec *c = proto_codec_new(1);
	struct proto_event ev[200], out[200];
	static unsigned char buf[24 + 8 + 511 + 9 + 200 * 72], b[sizeof(buf)];
	size_t len, i, n;

	cr_assert_not_null(c);
	fill_ring(ev, 200);
	cr_assert_eq(proto_codec_encode(c, ev, 200, buf, sizeof(buf), &len), 0);
	cr_assert_eq(buf[5], 1, "compressed");
	for (i = 0; i < len; i++)
		cr_assert_lt(proto_codec_decode(c, buf, i, out, 200, &n), 0);
	for (i = 0; i < len; i++) {
		memcpy(b, buf, len);
		b[i] ^= (unsigned char)(1u << (i % 8));
		cr_assert_lt(proto_codec_decode(c, b, len, out, 200, &n), 0,
			     "byte %zu", i);
		fix_checksum(b, len);
		if (proto_codec_decode(c, b, len, out, 200, &n) == 0)
			cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0,
				     "byte %zu: wrong records", i);
	}
	proto_codec_free(c);
}

static void fix_checksum(unsigned char *buf, size_t len)
{
	uint32_t s;

	if (len < 24)
		return;
	s = proto_xxh32(buf, 20, proto_xxh32(buf + 24, len - 24, 0));
	buf[20] = (unsigned char)s;
	buf[21] = (unsigned char)(s >> 8);
	buf[22] = (unsigned char)(s >> 16);
	buf[23] = (unsigned char)(s >> 24);
}

Test(codec, xxh32_vectors)
{
	/* Published XXH32 test values. */
	cr_assert_eq(proto_xxh32((const unsigned char *)"", 0, 0), 0x02cc5d05u);
	cr_assert_eq(proto_xxh32((const unsigned char *)"abc", 3, 0), 0x32d153ffu);
}

/* A batch large enough for one zstd block a plane (FLUSH_MIN records and
 * more): truncations and bit flips are refused; with the checksum forged,
 * refused or decoded to the exact records. */
Test(codec, corrupt_large_batch)
{
	struct proto_codec *c = proto_codec_new(1);
	static struct proto_event ev[1000], out[1000];
	static unsigned char buf[24 + 8 + 511 + 9 + 1000 * 72], b[sizeof(buf)];
	size_t len, i, n;

	cr_assert_not_null(c);
	fill_ring(ev, 1000);
	cr_assert_eq(proto_codec_encode(c, ev, 1000, buf, sizeof(buf), &len), 0);
	cr_assert_eq(buf[4], 3);
	cr_assert_eq(buf[5], 1, "compressed");
	cr_assert_eq(proto_codec_decode(c, buf, len, out, 1000, &n), 0);
	cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0);
	for (i = 0; i < len; i += 1 + rnd() % 7) {
		cr_assert_lt(proto_codec_decode(c, buf, i, out, 1000, &n), 0);
		cr_assert_eq(n, 0);
	}
	for (i = 24; i < len; i += 1 + rnd() % 5) {
		memcpy(b, buf, len);
		b[i] ^= (unsigned char)(1u << (rnd() % 8));
		cr_assert_lt(proto_codec_decode(c, b, len, out, 1000, &n), 0,
			     "byte %zu", i);
		fix_checksum(b, len);
		if (proto_codec_decode(c, b, len, out, 1000, &n) == 0)
			cr_assert_eq(memcmp(out, ev, sizeof(ev)), 0,
				     "byte %zu: wrong records", i);
	}
	proto_codec_free(c);
}
