/*
 * tests/proto/test_codec.c - Criterion suite "codec" for proto/codec.c.
 *
 * Exact round trips at every level (empty, one, many, the maximum, random
 * garbage, times going backwards) and every class of malformed batch:
 * truncation at every length, each header field wrong, corrupted bodies,
 * trailing bytes, too small output arrays, NULL arguments.
 */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"

static const int levels[] = { 0, 1, 3, 9, 19 };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
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
	/* Garbage does not compress: every cap below the bound is too small. */
	for (cap = 0; cap < proto_codec_bound(16); cap++)
		cr_assert_eq(proto_codec_encode(c, ev, 16, buf, cap, &w),
			     PROTO_E_FULL, "cap %zu", cap);
	cr_assert_eq(proto_codec_encode(c, ev, 16, buf, proto_codec_bound(16), &w), 0);
	cr_assert_eq(w, proto_codec_bound(16));
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
	b[4] = 2;
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
	b[8] = 21;			/* count/size mismatch */
	fix_checksum(b, len);
	expect_reject(b, len, PROTO_E_LENGTH);
	memcpy(b, buf, len);
	b[8] = 21;			/* consistent, but the frame says 20 */
	b[12] = (21 * 72) & 0xff;
	b[13] = (21 * 72) >> 8;
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

/* Known header bytes of the worked example in docs/modules/proto-codec.md. */
Test(codec, header_bytes)
{
	struct proto_codec *c = proto_codec_new(0);
	struct proto_event ev[2];
	unsigned char buf[256];
	static const unsigned char want[20] = {
		'T', 'P', 'B', 'C', 1, 0, 0, 0,
		2, 0, 0, 0, 144, 0, 0, 0, 144, 0, 0, 0,
	};
	size_t w;

	cr_assert_not_null(c);
	memset(ev, 0, sizeof(ev));
	ev[0].t_start = 1000;
	ev[0].t_end = 1500;
	ev[0].type = PROTO_EV_WRITE;
	ev[0].arg[0] = 1;
	ev[0].arg[1] = 4096;
	ev[1] = ev[0];
	ev[1].t_start = 2000;
	ev[1].t_end = 2100;
	cr_assert_eq(proto_codec_encode(c, ev, 2, buf, sizeof(buf), &w), 0);
	cr_assert_eq(w, 24 + 144);
	cr_assert_eq(memcmp(buf, want, 20), 0);
	/* planes 0, 1: zigzag(1000 - 0) = 2000 = 0x7d0, then
	 * zigzag(2000 - 1500) = 1000 = 0x3e8 (against the previous t_end) */
	cr_assert_eq(buf[24 + 0], 0xd0);
	cr_assert_eq(buf[24 + 1], 0xe8);
	cr_assert_eq(buf[24 + 2], 0x07);
	cr_assert_eq(buf[24 + 3], 0x03);
	/* plane 8: zigzag(500) = 1000 = 0x3e8, zigzag(100) = 200 */
	cr_assert_eq(buf[24 + 16], 0xe8);
	cr_assert_eq(buf[24 + 17], 200);
	/* plane 24 (arg0 low byte): zigzag(1) = 2, then delta 0 */
	cr_assert_eq(buf[24 + 48], 2);
	cr_assert_eq(buf[24 + 49], 0);
	/* plane 16: type 17 twice; plane 33: zigzag(4096) >> 8, then 0 */
	cr_assert_eq(buf[24 + 32], 17);
	cr_assert_eq(buf[24 + 33], 17);
	cr_assert_eq(buf[24 + 66], 0x20);
	cr_assert_eq(buf[24 + 67], 0);
	cr_assert_eq(buf[20], 0x3e);
	cr_assert_eq(buf[21], 0x71);
	cr_assert_eq(buf[22], 0x7a);
	cr_assert_eq(buf[23], 0x90);
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
