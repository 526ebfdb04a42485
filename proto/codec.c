/*
 * proto/codec.c - the batch codec: event records <-> compressed bytes.
 *
 * Owns the batch encoding of docs/modules/proto-codec.md ("Batch
 * encoding"): a 24-byte header, then the body. The body is the records
 * after a reversible transform (t_start against the previous record's
 * t_end, t_end as a duration, args against the previous record of the same
 * type, all zigzag), laid out as 72 byte planes, then one zstd frame (or
 * stored as is at level 0, or when zstd would not make it smaller).
 *
 * The transform is a bijection on any 72-byte record, so every input
 * round-trips exactly, garbage included. The decoder trusts no size: it
 * validates the whole header, the checksum and the zstd frame before it
 * writes a byte into the caller's array.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "proto/codec.h"
#include "proto/error.h"

#define HDR_SIZE 24
#define HDR_MAGIC 0x43425054u	/* "TPBC" on the wire */
#define HDR_VERSION 1
#define HDR_F_ZSTD 0x01u	/* body is one zstd frame */
#define HDR_F_ALL HDR_F_ZSTD
#define LEVEL_MAX 19		/* proto_codec_new() range */
#define LEVEL_WIRE_MAX 22	/* what a decoder accepts (ZSTD_maxCLevel) */
#define WINDOW_LOG_MAX 24	/* levels <= 19 use windowLog <= 23 */
#define REC_WORDS 9		/* 72 bytes = 9 little-endian words */
#define DELTA_TYPES 256		/* types whose args are delta-coded */
#define RAW_MAX ((size_t)PROTO_CODEC_MAX_RECORDS * PROTO_EVENT_SIZE)

_Static_assert(sizeof(struct proto_event) == PROTO_EVENT_SIZE,
	       "struct proto_event must be 72 bytes");
_Static_assert(REC_WORDS * 8 == PROTO_EVENT_SIZE, "9 words per record");

struct proto_codec {
	int level;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	unsigned char *scratch;		/* transformed records, planes */
	size_t scratch_cap;		/* <= RAW_MAX */
	int64_t prev_arg[DELTA_TYPES][PROTO_EV_NARGS];
};

/* ---- little-endian access -------------------------------------------- */

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline void st64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline void st32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

/* ---- checksum: XXH32 (public algorithm by Yann Collet), written here
 * so that the codec does not depend on zstd's private symbols. --------- */

#define P1 2654435761u
#define P2 2246822519u
#define P3 3266489917u
#define P4 668265263u
#define P5 374761393u

static inline uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static inline uint32_t xxround(uint32_t acc, uint32_t lane)
{
	return rotl32(acc + lane * P2, 13) * P1;
}

uint32_t proto_xxh32(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf, *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v1 = seed + P1 + P2, v2 = seed + P2;
		uint32_t v3 = seed, v4 = seed - P1;

		do {
			v1 = xxround(v1, ld32(p));
			v2 = xxround(v2, ld32(p + 4));
			v3 = xxround(v3, ld32(p + 8));
			v4 = xxround(v4, ld32(p + 12));
			p += 16;
		} while ((size_t)(end - p) >= 16);
		h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) +
		    rotl32(v4, 18);
	} else {
		h = seed + P5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl32(h + ld32(p) * P3, 17) * P4;
	for (; p < end; p++)
		h = rotl32(h + *p * P5, 11) * P1;
	h ^= h >> 15;
	h *= P2;
	h ^= h >> 13;
	h *= P3;
	h ^= h >> 16;
	return h;
}

/* Header bytes 0..19 hashed with the body's hash as seed: one value covers
 * both, computed without copying. */
static uint32_t batch_checksum(const unsigned char *hdr,
			       const unsigned char *body, size_t blen)
{
	return proto_xxh32(hdr, HDR_SIZE - 4, proto_xxh32(body, blen, 0));
}

/* ---- transform ------------------------------------------------------- */

static inline uint64_t zz(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t unzz(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* Transpose an 8x8 byte matrix held in 8 words (byte j of w[i] is element
 * (i, j), little-endian numbering). Its own inverse. */
static inline void transpose8(uint64_t w[8])
{
	uint64_t a, b;
	int i;

	for (i = 0; i < 4; i++) {
		a = w[i];
		b = w[i + 4];
		w[i] = (a & 0x00000000ffffffffull) | (b << 32);
		w[i + 4] = (a >> 32) | (b & 0xffffffff00000000ull);
	}
	for (i = 0; i < 8; i += (i & 1) ? 3 : 1) {	/* 0,1,4,5 */
		a = w[i];
		b = w[i + 2];
		w[i] = (a & 0x0000ffff0000ffffull) |
		       ((b & 0x0000ffff0000ffffull) << 16);
		w[i + 2] = ((a >> 16) & 0x0000ffff0000ffffull) |
			   (b & 0xffff0000ffff0000ull);
	}
	for (i = 0; i < 8; i += 2) {
		a = w[i];
		b = w[i + 1];
		w[i] = (a & 0x00ff00ff00ff00ffull) |
		       ((b & 0x00ff00ff00ff00ffull) << 8);
		w[i + 1] = ((a >> 8) & 0x00ff00ff00ff00ffull) |
			   (b & 0xff00ff00ff00ff00ull);
	}
}

/* Record ev -> its 9 transformed words; updates *prev_t and the per-type
 * argument history. */
static inline void fwd_record(struct proto_codec *c, const struct proto_event *e,
			      uint64_t *prev_t, uint64_t w[REC_WORDS])
{
	int k;

	w[0] = zz(e->t_start - *prev_t);
	w[1] = zz(e->t_end - e->t_start);
	w[2] = (uint64_t)e->type | (uint64_t)e->flags << 16 |
	       (uint64_t)e->tid << 32;
	*prev_t = e->t_end;
	if (e->type < DELTA_TYPES) {
		int64_t *pa = c->prev_arg[e->type];

		for (k = 0; k < PROTO_EV_NARGS; k++) {
			w[3 + k] = zz((uint64_t)e->arg[k] - (uint64_t)pa[k]);
			pa[k] = e->arg[k];
		}
	} else {
		for (k = 0; k < PROTO_EV_NARGS; k++)
			w[3 + k] = (uint64_t)e->arg[k];
	}
}

static inline void inv_record(struct proto_codec *c, const uint64_t w[REC_WORDS],
			      uint64_t *prev_t, struct proto_event *e)
{
	int k;

	e->t_start = *prev_t + unzz(w[0]);
	e->t_end = e->t_start + unzz(w[1]);
	e->type = (uint16_t)w[2];
	e->flags = (uint16_t)(w[2] >> 16);
	e->tid = (uint32_t)(w[2] >> 32);
	*prev_t = e->t_end;
	if (e->type < DELTA_TYPES) {
		int64_t *pa = c->prev_arg[e->type];

		for (k = 0; k < PROTO_EV_NARGS; k++) {
			pa[k] = (int64_t)((uint64_t)pa[k] + unzz(w[3 + k]));
			e->arg[k] = pa[k];
		}
	} else {
		for (k = 0; k < PROTO_EV_NARGS; k++)
			e->arg[k] = (int64_t)w[3 + k];
	}
}

/* ev[0..n) -> 72 byte planes of n bytes each at dst (plane b = byte b of
 * every transformed record, in record order). */
static void transform(struct proto_codec *c, const struct proto_event *ev,
		      size_t n, unsigned char *dst)
{
	uint64_t rec[8][REC_WORDS], col[8], prev_t = 0;
	size_t i, j;
	int m, r;

	memset(c->prev_arg, 0, sizeof(c->prev_arg));
	for (i = 0; i + 8 <= n; i += 8) {
		for (r = 0; r < 8; r++)
			fwd_record(c, &ev[i + r], &prev_t, rec[r]);
		for (m = 0; m < REC_WORDS; m++) {
			for (r = 0; r < 8; r++)
				col[r] = rec[r][m];
			transpose8(col);
			for (r = 0; r < 8; r++)
				st64(dst + (size_t)(8 * m + r) * n + i, col[r]);
		}
	}
	for (; i < n; i++) {
		fwd_record(c, &ev[i], &prev_t, rec[0]);
		for (m = 0; m < REC_WORDS; m++)
			for (j = 0; j < 8; j++)
				dst[(8 * m + j) * n + i] =
					(unsigned char)(rec[0][m] >> (8 * j));
	}
}

/* Inverse of transform(): planes at src -> ev[0..n). Cannot fail. */
static void untransform(struct proto_codec *c, const unsigned char *src,
			size_t n, struct proto_event *ev)
{
	uint64_t rec[8][REC_WORDS], col[8], prev_t = 0;
	size_t i, j;
	int m, r;

	memset(c->prev_arg, 0, sizeof(c->prev_arg));
	for (i = 0; i + 8 <= n; i += 8) {
		for (m = 0; m < REC_WORDS; m++) {
			for (r = 0; r < 8; r++)
				col[r] = ld64(src + (size_t)(8 * m + r) * n + i);
			transpose8(col);
			for (r = 0; r < 8; r++)
				rec[r][m] = col[r];
		}
		for (r = 0; r < 8; r++)
			inv_record(c, rec[r], &prev_t, &ev[i + r]);
	}
	for (; i < n; i++) {
		for (m = 0; m < REC_WORDS; m++) {
			rec[0][m] = 0;
			for (j = 0; j < 8; j++)
				rec[0][m] |= (uint64_t)src[(8 * m + j) * n + i]
					     << (8 * j);
		}
		inv_record(c, rec[0], &prev_t, &ev[i]);
	}
}

/* ---- context --------------------------------------------------------- */

struct proto_codec *proto_codec_new(int level)
{
	struct proto_codec *c;

	if (level < PROTO_CODEC_LEVEL_NONE || level > LEVEL_MAX)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto fail_alloc;
	c->level = level;
	c->cctx = ZSTD_createCCtx();
	if (!c->cctx)
		goto fail_cctx;
	c->dctx = ZSTD_createDCtx();
	if (!c->dctx)
		goto fail_dctx;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel,
						level ? level : 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(c->dctx, ZSTD_d_windowLogMax,
						WINDOW_LOG_MAX)))
		goto fail_param;
	return c;

fail_param:
	ZSTD_freeDCtx(c->dctx);
fail_dctx:
	ZSTD_freeCCtx(c->cctx);
fail_cctx:
	free(c);
fail_alloc:
	return NULL;
}

void proto_codec_free(struct proto_codec *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	ZSTD_freeDCtx(c->dctx);
	free(c->scratch);
	free(c);
}

/* Make the scratch buffer hold at least need bytes (need <= RAW_MAX). */
static int scratch_reserve(struct proto_codec *c, size_t need)
{
	size_t cap;
	unsigned char *p;

	if (need <= c->scratch_cap)
		return 0;
	cap = c->scratch_cap ? c->scratch_cap : 64 * 1024;
	while (cap < need)
		cap *= 2;
	if (cap > RAW_MAX)
		cap = RAW_MAX;
	p = realloc(c->scratch, cap);
	if (!p)
		return PROTO_E_NOMEM;
	c->scratch = p;
	c->scratch_cap = cap;
	return 0;
}

/* ---- encode ---------------------------------------------------------- */

size_t proto_codec_bound(size_t n)
{
	/* A body zstd does not shrink is stored as is. */
	return HDR_SIZE + n * PROTO_EVENT_SIZE;
}

static void put_header(unsigned char *h, unsigned flags, int level, size_t n,
		       size_t body)
{
	st32(h, HDR_MAGIC);
	h[4] = HDR_VERSION;
	h[5] = (unsigned char)flags;
	h[6] = (unsigned char)level;
	h[7] = 0;
	st32(h + 8, (uint32_t)n);
	st32(h + 12, (uint32_t)(n * PROTO_EVENT_SIZE));
	st32(h + 16, (uint32_t)body);
	st32(h + 20, batch_checksum(h, h + HDR_SIZE, body));
}

int proto_codec_encode(struct proto_codec *c, const struct proto_event *ev,
		       size_t n, void *out, size_t cap, size_t *written)
{
	unsigned char *o = out;
	size_t raw, zcap, z;
	int rc;

	if (written)
		*written = 0;
	if (!c || (!ev && n) || !out || !written)
		return PROTO_E_ARG;
	if (n > PROTO_CODEC_MAX_RECORDS)
		return PROTO_E_TOOBIG;
	if (cap < HDR_SIZE)
		return PROTO_E_FULL;
	raw = n * PROTO_EVENT_SIZE;
	if (n == 0 || c->level == PROTO_CODEC_LEVEL_NONE)
		goto store;

	rc = scratch_reserve(c, raw);
	if (rc)
		return rc;
	transform(c, ev, n, c->scratch);
	/* Only a frame smaller than the records is worth keeping. */
	zcap = cap - HDR_SIZE < raw ? cap - HDR_SIZE : raw - 1;
	z = ZSTD_compress2(c->cctx, o + HDR_SIZE, zcap, c->scratch, raw);
	if (!ZSTD_isError(z)) {
		put_header(o, HDR_F_ZSTD, c->level, n, z);
		*written = HDR_SIZE + z;
		return 0;
	}
	if (ZSTD_getErrorCode(z) == ZSTD_error_memory_allocation)
		return PROTO_E_NOMEM;
	if (ZSTD_getErrorCode(z) != ZSTD_error_dstSize_tooSmall)
		return PROTO_E_CODEC;
	if (cap - HDR_SIZE < raw)
		return PROTO_E_FULL;
	memcpy(o + HDR_SIZE, c->scratch, raw);
	put_header(o, 0, 0, n, raw);
	*written = HDR_SIZE + raw;
	return 0;

store:
	if (cap - HDR_SIZE < raw)
		return PROTO_E_FULL;
	transform(c, ev, n, o + HDR_SIZE);
	put_header(o, 0, 0, n, raw);
	*written = HDR_SIZE + raw;
	return 0;
}

/* ---- decode ---------------------------------------------------------- */

struct hdr {
	unsigned flags;
	uint32_t n, raw, body;
};

/* Checks of the header alone (docs/modules/proto-codec.md, "Header"). */
static int parse_header(const unsigned char *in, size_t len, struct hdr *h)
{
	unsigned level;

	if (len < HDR_SIZE)
		return PROTO_E_TRUNCATED;
	if (ld32(in) != HDR_MAGIC)
		return PROTO_E_MAGIC;
	if (in[4] != HDR_VERSION)
		return PROTO_E_VERSION;
	h->flags = in[5];
	level = in[6];
	h->n = ld32(in + 8);
	h->raw = ld32(in + 12);
	h->body = ld32(in + 16);
	if ((h->flags & ~HDR_F_ALL) || in[7] != 0)
		return PROTO_E_FORMAT;
	if (h->flags & HDR_F_ZSTD) {
		if (level < 1 || level > LEVEL_WIRE_MAX || h->n == 0)
			return PROTO_E_FORMAT;
	} else if (level != 0) {
		return PROTO_E_FORMAT;
	}
	if (h->n > PROTO_CODEC_MAX_RECORDS)
		return PROTO_E_TOOBIG;
	if ((uint64_t)h->n * PROTO_EVENT_SIZE != h->raw)
		return PROTO_E_LENGTH;
	if (h->flags & HDR_F_ZSTD) {
		if (h->body > ZSTD_compressBound(h->raw))
			return PROTO_E_LENGTH;
	} else if (h->body != h->raw) {
		return PROTO_E_LENGTH;
	}
	return 0;
}

int proto_codec_peek(const void *in, size_t len, uint32_t *nrecords)
{
	struct hdr h;
	int rc;

	if (nrecords)
		*nrecords = 0;
	if (!in || !nrecords)
		return PROTO_E_ARG;
	rc = parse_header(in, len, &h);
	if (rc)
		return rc;
	*nrecords = h.n;
	return 0;
}

/* The zstd frame at z[0..zlen) must be one frame, with a checksum, of
 * exactly raw bytes; decompressed into c->scratch. */
static int unzstd(struct proto_codec *c, const unsigned char *z, size_t zlen,
		  size_t raw)
{
	unsigned long long csize;
	size_t r;
	int rc;

	/* RFC 8878 3.1.1: magic, then the frame header descriptor whose
	 * bit 2 is Content_Checksum_flag; skippable frames are refused. */
	if (zlen < 5 || ld32(z) != ZSTD_MAGICNUMBER || !(z[4] & 0x04))
		return PROTO_E_CODEC;
	csize = ZSTD_getFrameContentSize(z, zlen);
	if (csize == ZSTD_CONTENTSIZE_UNKNOWN ||
	    csize == ZSTD_CONTENTSIZE_ERROR || csize != raw)
		return PROTO_E_CODEC;
	r = ZSTD_findFrameCompressedSize(z, zlen);
	if (ZSTD_isError(r) || r != zlen)
		return PROTO_E_CODEC;
	rc = scratch_reserve(c, raw);
	if (rc)
		return rc;
	r = ZSTD_decompressDCtx(c->dctx, c->scratch, raw, z, zlen);
	if (ZSTD_isError(r)) {
		ZSTD_DCtx_reset(c->dctx, ZSTD_reset_session_only);
		switch (ZSTD_getErrorCode(r)) {
		case ZSTD_error_checksum_wrong:
			return PROTO_E_CHECKSUM;
		case ZSTD_error_memory_allocation:
			return PROTO_E_NOMEM;
		default:
			return PROTO_E_CODEC;
		}
	}
	if (r != raw)
		return PROTO_E_CODEC;
	return 0;
}

int proto_codec_decode(struct proto_codec *c, const void *in, size_t len,
		       struct proto_event *out, size_t max, size_t *n)
{
	const unsigned char *p = in, *src;
	struct hdr h;
	int rc;

	if (n)
		*n = 0;
	if (!c || !in || !n || (!out && max))
		return PROTO_E_ARG;
	rc = parse_header(p, len, &h);
	if (rc)
		return rc;
	if (len - HDR_SIZE < h.body)
		return PROTO_E_TRUNCATED;
	if (len - HDR_SIZE > h.body)
		return PROTO_E_LENGTH;
	if (ld32(p + 20) != batch_checksum(p, p + HDR_SIZE, h.body))
		return PROTO_E_CHECKSUM;
	if (h.n > max)
		return PROTO_E_FULL;
	if (h.n == 0)
		return 0;
	if (h.flags & HDR_F_ZSTD) {
		rc = unzstd(c, p + HDR_SIZE, h.body, h.raw);
		if (rc)
			return rc;
		src = c->scratch;
	} else {
		src = p + HDR_SIZE;
	}
	untransform(c, src, h.n, out);
	*n = h.n;
	return 0;
}
