/*
 * proto/codec.c - the batch codec: event records <-> compressed bytes.
 *
 * Owns the batch encoding of docs/modules/proto-codec.md ("Batch
 * encoding"): a 24-byte header, then the body. Version 3 (written): the
 * records after a reversible transform (gap to the previous record's t_end,
 * duration and args, each predicted by the last record of the same type
 * that followed the same previous type, else of the same type; args that
 * track the duration coded against it, chosen per batch; COMPUTE's volume
 * against its CPU time times its rate; all zigzag), laid out as byte
 * planes of which only the non-zero ones are kept, each but the type's in
 * (type, previous type) order, then one zstd frame (a block a plane in
 * large batches; or stored as is at level 0, or when zstd would not make
 * it smaller). Version 2 (the same without the volume rule and the group
 * order) and version 1 (the per-type delta of earlier releases) are still
 * decoded.
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "proto/codec.h"
#include "proto/error.h"

#define HDR_SIZE 24
#define HDR_MAGIC 0x43425054u	/* "TPBC" on the wire */
#define HDR_VERSION 3		/* what the encoder writes */
#define HDR_VERSION_2 2		/* still decoded */
#define HDR_VERSION_OLD 1	/* still decoded */
#define HDR_F_ZSTD 0x01u	/* body is one zstd frame */
#define HDR_F_ALL HDR_F_ZSTD
#define LEVEL_MAX 19		/* proto_codec_new() range */
#define LEVEL_WIRE_MAX 22	/* what a decoder accepts (ZSTD_maxCLevel) */
#define WINDOW_LOG_MAX 24	/* levels <= 19 use windowLog <= 23 */
#define REC_WORDS 9		/* 72 bytes = 9 little-endian words */
#define MASK_SIZE 9		/* versions 2, 3: one bit per byte plane */
#define BASE_SIZE 8		/* versions 2, 3: where the time chain starts */
#define TYPE_PLANE0 16		/* planes 16, 17: the type, in record order */
#define TYPE_PLANE1 17
#define FLUSH_MIN 512		/* records from which each plane is a zstd block */
#define NS_PER_S 1000000000u	/* COMPUTE's volume: cpu_ns * rate / 10^9 */
#define HIST_VALS 8		/* duration, the six arguments, gap */
#define CTX_SLOTS 4096		/* (type, previous type) history entries */
#define DREL_MARGIN 16	/* bits a batch must save to code an arg that way */
#define BLOCK_RECORDS 256	/* transform(): records per block of planes */
#define DREL_JUDGED 1024	/* records of a type choose_drel() looks at */
#define CTX_MUL 97		/* slot = (type * 97 + previous type) mod 4096 */
#define TYPE_SLOTS 256		/* per-type history entries (type mod 256) */
#define DREL_MAX (1 + 2 * 255)	/* count, then (type, arg mask) pairs */
#define PREFIX_MAX (BASE_SIZE + DREL_MAX)
#define RAW_MAX ((size_t)PROTO_CODEC_MAX_RECORDS * PROTO_EVENT_SIZE + \
		 PREFIX_MAX + MASK_SIZE)
/* decode scratch: the body, then a zero plane */
#define SCRATCH_MAX (RAW_MAX + PROTO_CODEC_MAX_RECORDS)

_Static_assert(sizeof(struct proto_event) == PROTO_EVENT_SIZE,
	       "struct proto_event must be 72 bytes");
_Static_assert(REC_WORDS * 8 == PROTO_EVENT_SIZE, "9 words per record");
_Static_assert(MASK_SIZE * 8 == PROTO_EVENT_SIZE, "one mask bit per plane");
_Static_assert(PROTO_EV_STRING == 1 && PROTO_EV_ARRAY == 2,
	       "STRING and ARRAY are types 1 and 2");

/* What predicts a record's duration and arguments: the values of an
 * earlier record of the batch (v[0] duration, v[1 + k] argument k, COMPUTE's
 * cpu_ns minus its duration). Valid while gen is the codec's. */
struct hist {
	uint32_t gen;
	uint32_t key;		/* type | previous type << 16; type alone */
	uint64_t v[HIST_VALS];
};

struct run {
	uint64_t prev_end;	/* t_end of the previous record */
	uint16_t prev_type;	/* its type; 0 before the first */
};

struct proto_codec {
	int level;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	unsigned char *scratch;		/* transformed records, planes */
	size_t scratch_cap;		/* <= SCRATCH_MAX */
	uint32_t gen;			/* current batch's generation */
	struct hist ctx[CTX_SLOTS];	/* by (type, previous type) */
	struct hist typ[TYPE_SLOTS];	/* by type */
	/* this batch: args coded against the duration, bit k = arg k */
	uint8_t drel[TYPE_SLOTS];
	/* choosing drel: bits of the residuals either way, and the
	 * per-type history of each way */
	uint64_t cost[TYPE_SLOTS][2][PROTO_EV_NARGS];
	uint64_t last[TYPE_SLOTS][2][PROTO_EV_NARGS];
	uint32_t seen[TYPE_SLOTS];	/* gen: cost and last are this batch's */
	uint32_t judged[TYPE_SLOTS];	/* records of the type judged so far */
	/* version 3's group order: the words of every record, the sort
	 * keys, the order and the radix sort's other buffer */
	uint64_t (*words)[REC_WORDS];
	uint32_t *key, *ord, *ord2;
	size_t ord_cap;			/* records they hold */
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

/* Word m of 8 transformed records -> 8 plane bytes each: byte j of
 * rec[r][m] goes to dst[j * stride + r]. SSE2 where there is one (a
 * quarter of the scalar transpose's instructions), transpose8() else. */
static inline void planes8(const uint64_t rec[8][REC_WORDS], int m,
			   unsigned char *dst, size_t stride)
{
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__m128i r[8], a, b, c, d, e, f, g, h;
	int k;

	for (k = 0; k < 8; k++)
		r[k] = _mm_cvtsi64_si128((long long)rec[k][m]);
	a = _mm_unpacklo_epi8(r[0], r[1]);
	b = _mm_unpacklo_epi8(r[2], r[3]);
	c = _mm_unpacklo_epi8(r[4], r[5]);
	d = _mm_unpacklo_epi8(r[6], r[7]);
	e = _mm_unpacklo_epi16(a, b);	/* bytes 0-3 of records 0-3 */
	f = _mm_unpackhi_epi16(a, b);	/* bytes 4-7 of records 0-3 */
	g = _mm_unpacklo_epi16(c, d);
	h = _mm_unpackhi_epi16(c, d);
	r[0] = _mm_unpacklo_epi32(e, g);	/* planes 0, 1 */
	r[1] = _mm_unpackhi_epi32(e, g);	/* planes 2, 3 */
	r[2] = _mm_unpacklo_epi32(f, h);	/* planes 4, 5 */
	r[3] = _mm_unpackhi_epi32(f, h);	/* planes 6, 7 */
	for (k = 0; k < 4; k++) {
		_mm_storel_epi64((__m128i *)(void *)(dst + 2 * k * stride),
				 r[k]);
		_mm_storeh_pd((double *)(void *)(dst + (2 * k + 1) * stride),
			      _mm_castsi128_pd(r[k]));
	}
#else
	uint64_t col[8];
	int k;

	for (k = 0; k < 8; k++)
		col[k] = rec[k][m];
	transpose8(col);
	for (k = 0; k < 8; k++)
		st64(dst + k * stride, col[k]);
#endif
}

/* The (type, previous type) history slot (docs/modules/proto-codec.md,
 * "Transform"); collisions only cost prediction: the key is checked. */
static inline struct hist *ctx_slot(struct proto_codec *c, unsigned type,
				    unsigned prev)
{
	return &c->ctx[(type * CTX_MUL + prev) & (CTX_SLOTS - 1)];
}

/* STRING and ARRAY records hold no times in t_start and t_end
 * (docs/FORMAT.md): they are predicted from their own history and leave the
 * time chain alone. */
static inline int container(unsigned type)
{
	return type == PROTO_EV_STRING || type == PROTO_EV_ARRAY;
}

__extension__ typedef unsigned __int128 u128;

/* Version 3: COMPUTE's volume (argument 1) is coded against what its CPU
 * time (argument 0; its duration when 0: the sensor's read failed) gives at
 * its rate (argument 4 when argument 2, the method, is 1, else argument 3):
 * round(ns * rate / 10^9) modulo 2^64, computed in integers so that every
 * host gets the same value (docs/modules/proto-codec.md, "Transform"). The
 * sensor derives the volume so (sensor/mpi_compute.c), from the unrounded
 * rate: the residual is 0 or a few units. */
static inline uint64_t volume_pred(const int64_t *arg, uint64_t dur)
{
	uint64_t ns = arg[0] ? (uint64_t)arg[0] : dur;
	uint64_t rate = (uint64_t)(arg[2] == 1 ? arg[4] : arg[3]);
	uint64_t q = ns / NS_PER_S, r = ns % NS_PER_S;

	/* ns * rate + 10^9 / 2 = q * rate * 10^9 + (r * rate + 10^9 / 2) */
	if (rate < (1ull << 33))	/* r * rate < 2^63 */
		return q * rate + (r * rate + NS_PER_S / 2) / NS_PER_S;
	return q * rate + (uint64_t)(((u128)r * rate + NS_PER_S / 2) /
				     NS_PER_S);
}

/* What predicts a record: its context's entry, else its type's, else
 * nothing (NULL: predict 0). */
static inline const struct hist *predictor(const struct proto_codec *c,
					   const struct hist *ce,
					   const struct hist *te,
					   uint32_t key, unsigned type)
{
	if (ce->gen == c->gen && ce->key == key)
		return ce;
	if (te->gen == c->gen && te->key == type)
		return te;
	return NULL;
}

/* After a record: the run's chain and the two predictors' histories. */
static inline void remember(struct proto_codec *c, struct run *st,
			    struct hist *ce, struct hist *te, uint32_t key,
			    unsigned type, const uint64_t v[HIST_VALS],
			    uint64_t t_end)
{
	if (!container(type))
		st->prev_end = t_end;
	st->prev_type = (uint16_t)type;
	ce->gen = te->gen = c->gen;
	ce->key = key;
	te->key = type;
	memcpy(ce->v, v, HIST_VALS * sizeof(v[0]));
	memcpy(te->v, v, HIST_VALS * sizeof(v[0]));
}

/* What fwd2() and inv2() look up for a record of this type after the
 * run's previous one: its history slots, the predicting record (NULL:
 * none yet), which arguments ride on the duration. */
struct pred {
	uint32_t key;
	struct hist *ce, *te;
	unsigned drel;
};

static inline const struct hist *pred_of(struct proto_codec *c,
					 const struct run *st, unsigned type,
					 struct pred *p)
{
	p->key = type | (uint32_t)st->prev_type << 16;
	p->ce = ctx_slot(c, type, st->prev_type);
	p->te = &c->typ[type & (TYPE_SLOTS - 1)];
	p->drel = type < TYPE_SLOTS ? c->drel[type] : 0;
	return predictor(c, p->ce, p->te, p->key, type);
}

/* Record e -> its 9 version-3 words (the volume rule included); updates the running state. Inlined
 * by force: GCC kept it a call, 3 ns of the 22 a record of transform(). */
static inline __attribute__((always_inline)) void fwd2(struct proto_codec *c, const struct proto_event *e,
			struct run *st, uint64_t w[REC_WORDS])
{
	struct pred p;
	unsigned type = e->type;
	const struct hist *h = pred_of(c, st, type, &p);
	unsigned drel = p.drel;
	uint64_t v[HIST_VALS];
	int k;

	v[0] = e->t_end - e->t_start;
	for (k = 0; k < PROTO_EV_NARGS; k++)
		v[1 + k] = (uint64_t)e->arg[k];
	for (k = 0; k < PROTO_EV_NARGS; k++)
		if ((drel >> k) & 1)
			v[1 + k] -= v[0];
	if (type == PROTO_EV_COMPUTE)
		v[2] -= volume_pred(e->arg, v[0]);
	v[7] = e->t_start - (container(type) ? 0 : st->prev_end);
	w[0] = zz(v[7] - (h ? h->v[7] : 0));
	w[2] = (uint64_t)type | (uint64_t)e->flags << 16 |
	       (uint64_t)e->tid << 32;
	if (h) {
		w[1] = zz(v[0] - h->v[0]);
		for (k = 0; k < PROTO_EV_NARGS; k++)
			w[3 + k] = zz(v[1 + k] - h->v[1 + k]);
	} else {
		w[1] = zz(v[0]);
		for (k = 0; k < PROTO_EV_NARGS; k++)
			w[3 + k] = zz(v[1 + k]);
	}
	remember(c, st, p.ce, p.te, p.key, type, v, e->t_end);
}

/* Inverse of fwd2() for version 3, and of version 2's (v3 = 0: no volume
 * rule). */
static inline void inv2(struct proto_codec *c, const uint64_t w[REC_WORDS],
			struct run *st, struct proto_event *e, int v3)
{
	struct pred p;
	unsigned type = (uint16_t)w[2];
	const struct hist *h = pred_of(c, st, type, &p);
	unsigned drel = p.drel;
	uint64_t v[HIST_VALS];
	int k;

	for (k = 0; k < HIST_VALS - 1; k++)
		v[k] = unzz(w[1 + (k > 0) + k]) + (h ? h->v[k] : 0);
	v[7] = unzz(w[0]) + (h ? h->v[7] : 0);
	e->t_start = (container(type) ? 0 : st->prev_end) + v[7];
	e->t_end = e->t_start + v[0];
	e->type = (uint16_t)type;
	e->flags = (uint16_t)(w[2] >> 16);
	e->tid = (uint32_t)(w[2] >> 32);
	remember(c, st, p.ce, p.te, p.key, type, v, e->t_end);
	for (k = 0; k < PROTO_EV_NARGS; k++)
		e->arg[k] = (int64_t)(v[1 + k] + ((drel >> k) & 1 ? v[0] : 0));
	if (v3 && type == PROTO_EV_COMPUTE)
		e->arg[1] = (int64_t)((uint64_t)e->arg[1] +
				      volume_pred(e->arg, v[0]));
}

/* Inverse of version 1's transform: t_start against the previous t_end,
 * t_end as a duration, args against the previous record of the same type
 * (types < 256). */
static inline void inv1(struct proto_codec *c, const uint64_t w[REC_WORDS],
			struct run *st, struct proto_event *e)
{
	int k;

	e->t_start = st->prev_end + unzz(w[0]);
	e->t_end = e->t_start + unzz(w[1]);
	e->type = (uint16_t)w[2];
	e->flags = (uint16_t)(w[2] >> 16);
	e->tid = (uint32_t)(w[2] >> 32);
	st->prev_end = e->t_end;
	if (e->type < TYPE_SLOTS) {
		struct hist *te = &c->typ[e->type];

		if (te->gen != c->gen) {
			memset(te, 0, sizeof(*te));
			te->gen = c->gen;
		}
		for (k = 0; k < PROTO_EV_NARGS; k++) {
			te->v[1 + k] += unzz(w[3 + k]);
			e->arg[k] = (int64_t)te->v[1 + k];
		}
	} else {
		for (k = 0; k < PROTO_EV_NARGS; k++)
			e->arg[k] = (int64_t)w[3 + k];
	}
}

/* A new batch: every history entry becomes empty (generation bump; the
 * tables are cleared for real once every 2^32 batches). */
static void history_reset(struct proto_codec *c)
{
	if (++c->gen == 0) {
		memset(c->ctx, 0, sizeof(c->ctx));
		memset(c->typ, 0, sizeof(c->typ));
		memset(c->seen, 0, sizeof(c->seen));
		c->gen = 1;
	}
}

static inline unsigned bits(uint64_t x)
{
	return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

/* Which arguments of which types (< 256) this batch codes against the
 * record's duration: those whose residuals would be shorter that way,
 * judged on per-type deltas (a cheap stand-in for the real predictor) over
 * the first DREL_JUDGED records of each type: judging every record cost a
 * quarter of the encoder's time on a batch of one call, and a type whose
 * arguments track the duration shows it in its first thousand records.
 * Fills c->drel. */
static void choose_drel(struct proto_codec *c, const struct proto_event *ev,
			size_t n)
{
	size_t i;
	int k;

	memset(c->drel, 0, sizeof(c->drel));
	for (i = 0; i < n; i++) {
		unsigned t = ev[i].type;
		uint64_t dur = ev[i].t_end - ev[i].t_start;

		if (t >= TYPE_SLOTS || container(t))
			continue;
		if (c->seen[t] != c->gen) {
			c->seen[t] = c->gen;
			c->judged[t] = 0;
			memset(c->cost[t], 0, sizeof(c->cost[t]));
			memset(c->last[t], 0, sizeof(c->last[t]));
		}
		if (c->judged[t]++ >= DREL_JUDGED)
			continue;
		for (k = 0; k < PROTO_EV_NARGS; k++) {
			uint64_t a = (uint64_t)ev[i].arg[k];

			/* judged as fwd2() codes it */
			if (k == 1 && t == PROTO_EV_COMPUTE)
				a -= volume_pred(ev[i].arg, dur);

			c->cost[t][0][k] += bits(zz(a - c->last[t][0][k]));
			c->cost[t][1][k] += bits(zz(a - dur - c->last[t][1][k]));
			c->last[t][0][k] = a;
			c->last[t][1][k] = a - dur;
		}
	}
	for (i = 0; i < n; i++) {
		unsigned t = ev[i].type;

		if (t >= TYPE_SLOTS || container(t) || c->seen[t] != c->gen)
			continue;
		c->seen[t] = c->gen - 1;	/* once per type */
		for (k = 0; k < PROTO_EV_NARGS; k++)
			if (c->cost[t][1][k] + DREL_MARGIN < c->cost[t][0][k])
				c->drel[t] |= (uint8_t)(1u << k);
	}
}

/* The drel table at dst: a count, then (type, arg mask) for each type
 * with a non-zero mask, types increasing. Returns its size. */
static size_t put_drel(const struct proto_codec *c, unsigned char *dst)
{
	size_t len = 1;
	unsigned t;

	for (t = 0; t < TYPE_SLOTS; t++) {
		if (!c->drel[t])
			continue;
		dst[len++] = (unsigned char)t;
		dst[len++] = c->drel[t];
	}
	dst[0] = (unsigned char)((len - 1) / 2);
	return len;
}

/* Make the group-order buffers hold n records (n <= 2^20). */
static int order_reserve(struct proto_codec *c, size_t n)
{
	void *w, *k, *o, *o2;

	if (n <= c->ord_cap)
		return 0;
	w = realloc(c->words, n * sizeof(c->words[0]));
	if (w)
		c->words = w;
	k = realloc(c->key, n * sizeof(uint32_t));
	if (k)
		c->key = k;
	o = realloc(c->ord, n * sizeof(uint32_t));
	if (o)
		c->ord = o;
	o2 = realloc(c->ord2, n * sizeof(uint32_t));
	if (o2)
		c->ord2 = o2;
	if (!w || !k || !o || !o2)
		return PROTO_E_NOMEM;
	c->ord_cap = n;
	return 0;
}

/* Version 3's group order of n records whose keys (type << 16 | previous
 * record's type, 0 for the first) are in c->key: c->ord[j] is the record
 * at position j when the records are sorted by key, equal keys in record
 * order (a stable LSD radix sort, 8 bits a pass; a byte every key shares
 * needs no pass). */
static void group_order(struct proto_codec *c, size_t n)
{
	uint32_t *k = c->key, *a = c->ord, *b = c->ord2, *t;
	uint32_t all = ~0u, any = 0;
	size_t i;
	int sh;

	for (i = 0; i < n; i++) {
		all &= k[i];
		any |= k[i];
		a[i] = (uint32_t)i;
	}
	for (sh = 0; sh < 32; sh += 8) {
		size_t cnt[256] = {0}, sum = 0, d;

		if (!(((all ^ any) >> sh) & 0xff))
			continue;
		for (i = 0; i < n; i++)
			cnt[(k[i] >> sh) & 0xff]++;
		for (d = 0; d < 256; d++) {
			size_t x = cnt[d];

			cnt[d] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			b[cnt[(k[a[i]] >> sh) & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	c->ord = a;
	c->ord2 = b;
}

/* The keys of group_order() from the records' types, in record order. */
static inline void group_key(struct proto_codec *c, size_t i, unsigned type,
			     unsigned *prev)
{
	c->key[i] = (uint32_t)type << 16 | *prev;
	*prev = type;
}

/* ev[0..n) (n > 0) -> the version-3 body before zstd at dst: base, the
 * drel table, the 9-byte plane mask, then the planes whose bit is set, n
 * bytes each (plane b = byte b of every transformed record; planes 16 and
 * 17, the type, in record order, the others in group order). dst holds
 * PREFIX_MAX + MASK_SIZE + 72 n bytes; the order buffers n records.
 * Returns the bytes used; *prefix = the bytes before the first plane. */
static size_t transform(struct proto_codec *c, const struct proto_event *ev,
			size_t n, unsigned char *dst, size_t *prefix)
{
	uint64_t rec[8][REC_WORDS], any[REC_WORDS] = {0};
	unsigned char blk[PROTO_EVENT_SIZE][BLOCK_RECORDS]
		__attribute__((aligned(64)));
	uint64_t (*W)[REC_WORDS] = c->words;
	unsigned char *mask, *planes;
	struct run st = {0, 0};
	size_t i, j, g, nb, kept, tlen;
	unsigned prev = 0;
	int m, r, b;

	history_reset(c);
	choose_drel(c, ev, n);
	/* the time chain starts at the first event's t_start */
	for (i = 0; i < n && container(ev[i].type); i++)
		;
	st.prev_end = i < n ? ev[i].t_start : 0;
	st64(dst, st.prev_end);
	tlen = BASE_SIZE + put_drel(c, dst + BASE_SIZE);
	mask = dst + tlen;
	planes = mask + MASK_SIZE;
	for (i = 0; i < n; i++) {
		fwd2(c, &ev[i], &st, W[i]);
		group_key(c, i, ev[i].type, &prev);
		for (m = 0; m < REC_WORDS; m++)
			any[m] |= W[i][m];
	}
	group_order(c, n);
	/* Blocks of BLOCK_RECORDS: the planes of a block are gathered in
	 * blk (in the first-level cache), then each is copied out as whole
	 * lines. Storing 8 bytes at a time straight into 72 planes n bytes
	 * apart (n a power of two: every plane in the same cache set) missed
	 * the cache at nearly every store. */
	for (i = 0; i + 8 <= n; i += nb) {
		nb = (n - i) & ~(size_t)7;
		if (nb > BLOCK_RECORDS)
			nb = BLOCK_RECORDS;
		for (g = 0; g < nb; g += 8) {
			for (r = 0; r < 8; r++)
				memcpy(rec[r], W[c->ord[i + g + r]],
				       sizeof(rec[r]));
			for (m = 0; m < REC_WORDS; m++)
				planes8(rec, m, &blk[8 * m][g], BLOCK_RECORDS);
		}
		for (b = 0; b < PROTO_EVENT_SIZE; b++)
			memcpy(planes + (size_t)b * n + i, blk[b], nb);
	}
	for (; i < n; i++)
		for (m = 0; m < REC_WORDS; m++)
			for (j = 0; j < 8; j++)
				planes[(8 * m + j) * n + i] = (unsigned char)
					(W[c->ord[i]][m] >> (8 * j));
	for (i = 0; i < n; i++) {
		planes[TYPE_PLANE0 * n + i] = (unsigned char)ev[i].type;
		planes[TYPE_PLANE1 * n + i] = (unsigned char)(ev[i].type >> 8);
	}
	/* Drop the planes that are zero for every record: the mask says
	 * which are kept, in plane order (moving them down only). */
	memset(mask, 0, MASK_SIZE);
	kept = 0;
	for (b = 0; b < PROTO_EVENT_SIZE; b++) {
		if (!((any[b / 8] >> (8 * (b % 8))) & 0xff))
			continue;
		mask[b / 8] |= (unsigned char)(1u << (b % 8));
		if (kept != (size_t)b)
			memmove(planes + kept * n, planes + (size_t)b * n, n);
		kept++;
	}
	*prefix = tlen + MASK_SIZE;
	return tlen + MASK_SIZE + kept * n;
}

/* Version 3's planes (all 72 at pl[b], a dropped one pointing to n zero
 * bytes) -> the words of each record in record order, in c->words. */
static void ungroup(struct proto_codec *c, const unsigned char *pl[],
		    size_t n)
{
	uint64_t (*W)[REC_WORDS] = c->words, col[8];
	unsigned prev = 0, type;
	size_t i, j;
	int m, r;

	for (i = 0; i < n; i++) {
		type = pl[TYPE_PLANE0][i] | (unsigned)pl[TYPE_PLANE1][i] << 8;
		group_key(c, i, type, &prev);
	}
	group_order(c, n);
	for (i = 0; i + 8 <= n; i += 8) {
		for (m = 0; m < REC_WORDS; m++) {
			for (r = 0; r < 8; r++)
				col[r] = ld64(pl[8 * m + r] + i);
			transpose8(col);
			for (r = 0; r < 8; r++)
				W[c->ord[i + r]][m] = col[r];
		}
	}
	for (; i < n; i++)
		for (m = 0; m < REC_WORDS; m++) {
			W[c->ord[i]][m] = 0;
			for (j = 0; j < 8; j++)
				W[c->ord[i]][m] |= (uint64_t)pl[8 * m + j][i]
						   << (8 * j);
		}
	for (i = 0; i < n; i++)
		W[i][2] = (W[i][2] & ~(uint64_t)0xffff) | (c->key[i] >> 16);
}

/* Inverse of transform() and of versions 1 and 2's: plane b of n records
 * at pl[b] (all 72 given; a dropped plane points to n zero bytes) ->
 * ev[0..n). Version 3 needs the order buffers for n records. Cannot fail. */
static void untransform(struct proto_codec *c, const unsigned char *pl[],
			size_t n, int version, uint64_t base,
			struct proto_event *ev)
{
	uint64_t rec[8][REC_WORDS], col[8];
	struct run st = {base, 0};
	size_t i, j;
	int m, r;

	history_reset(c);
	if (version == HDR_VERSION) {
		ungroup(c, pl, n);
		for (i = 0; i < n; i++)
			inv2(c, c->words[i], &st, &ev[i], 1);
		return;
	}
	for (i = 0; i + 8 <= n; i += 8) {
		for (m = 0; m < REC_WORDS; m++) {
			for (r = 0; r < 8; r++)
				col[r] = ld64(pl[8 * m + r] + i);
			transpose8(col);
			for (r = 0; r < 8; r++)
				rec[r][m] = col[r];
		}
		for (r = 0; r < 8; r++) {
			if (version == HDR_VERSION_OLD)
				inv1(c, rec[r], &st, &ev[i + r]);
			else
				inv2(c, rec[r], &st, &ev[i + r], 0);
		}
	}
	for (; i < n; i++) {
		for (m = 0; m < REC_WORDS; m++) {
			rec[0][m] = 0;
			for (j = 0; j < 8; j++)
				rec[0][m] |= (uint64_t)pl[8 * m + j][i]
					     << (8 * j);
		}
		if (version == HDR_VERSION_OLD)
			inv1(c, rec[0], &st, &ev[i]);
		else
			inv2(c, rec[0], &st, &ev[i], 0);
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
	free(c->words);
	free(c->key);
	free(c->ord);
	free(c->ord2);
	free(c);
}

/* Make the scratch buffer hold at least need bytes (need <= SCRATCH_MAX). */
static int scratch_reserve(struct proto_codec *c, size_t need)
{
	size_t cap;
	unsigned char *p;

	if (need <= c->scratch_cap)
		return 0;
	cap = c->scratch_cap ? c->scratch_cap : 64 * 1024;
	while (cap < need)
		cap *= 2;
	if (cap > SCRATCH_MAX)
		cap = SCRATCH_MAX;
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
	return HDR_SIZE + (n ? PREFIX_MAX + MASK_SIZE + n * PROTO_EVENT_SIZE : 0);
}

static void put_header(unsigned char *h, unsigned flags, int level, size_t n,
		       size_t raw, size_t body)
{
	st32(h, HDR_MAGIC);
	h[4] = HDR_VERSION;
	h[5] = (unsigned char)flags;
	h[6] = (unsigned char)level;
	h[7] = 0;
	st32(h + 8, (uint32_t)n);
	st32(h + 12, (uint32_t)raw);
	st32(h + 16, (uint32_t)body);
	st32(h + 20, batch_checksum(h, h + HDR_SIZE, body));
}

/* The transformed body c->scratch[0..raw) as one zstd frame in
 * dst[0..cap): its size or a zstd error code. From FLUSH_MIN records, each
 * plane ends a zstd block (the prefix goes with the first), so that each
 * gets its own literal and sequence tables: the bytes of a plane (the low
 * byte of the durations, the high byte of the gaps ...) have little in
 * common with its neighbours'. Small batches are one block: a block's
 * tables would cost more than they save. */
static size_t compress(struct proto_codec *c, unsigned char *dst, size_t cap,
		       size_t raw, size_t prefix, size_t n)
{
	ZSTD_outBuffer out = {dst, cap, 0};
	ZSTD_inBuffer in;
	size_t off = 0, end, r;

	if (n < FLUSH_MIN)
		return ZSTD_compress2(c->cctx, dst, cap, c->scratch, raw);
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	r = ZSTD_CCtx_setPledgedSrcSize(c->cctx, raw);
	if (ZSTD_isError(r))
		return r;
	while (off < raw) {
		end = off ? off + n : prefix + n;
		if (end > raw)
			end = raw;
		in = (ZSTD_inBuffer){c->scratch + off, end - off, 0};
		do {
			r = ZSTD_compressStream2(c->cctx, &out, &in,
						 end == raw ? ZSTD_e_end
							    : ZSTD_e_flush);
			if (ZSTD_isError(r))
				goto fail;
			/* output full with more to write: the frame would
			 * not fit */
			if (r && out.pos == out.size) {
				r = (size_t)-ZSTD_error_dstSize_tooSmall;
				goto fail;
			}
		} while (r || in.pos < in.size);
		off = end;
	}
	return out.pos;

fail:
	ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
	return r;
}

int proto_codec_encode(struct proto_codec *c, const struct proto_event *ev,
		       size_t n, void *out, size_t cap, size_t *written)
{
	unsigned char *o = out;
	size_t raw, z, prefix;
	int rc;

	if (written)
		*written = 0;
	if (!c || (!ev && n) || !out || !written)
		return PROTO_E_ARG;
	if (n > PROTO_CODEC_MAX_RECORDS)
		return PROTO_E_TOOBIG;
	if (cap < HDR_SIZE)
		return PROTO_E_FULL;
	if (n == 0) {
		put_header(o, 0, 0, 0, 0, 0);
		*written = HDR_SIZE;
		return 0;
	}
	rc = scratch_reserve(c, PREFIX_MAX + MASK_SIZE + n * PROTO_EVENT_SIZE);
	if (!rc)
		rc = order_reserve(c, n);
	if (rc)
		return rc;
	raw = transform(c, ev, n, c->scratch, &prefix);
	if (c->level != PROTO_CODEC_LEVEL_NONE) {
		/* Only a frame smaller than the transformed body is kept. */
		z = compress(c, o + HDR_SIZE,
			     cap - HDR_SIZE < raw ? cap - HDR_SIZE : raw - 1,
			     raw, prefix, n);
		if (!ZSTD_isError(z)) {
			put_header(o, HDR_F_ZSTD, c->level, n, raw, z);
			*written = HDR_SIZE + z;
			return 0;
		}
		if (ZSTD_getErrorCode(z) == ZSTD_error_memory_allocation)
			return PROTO_E_NOMEM;
		if (ZSTD_getErrorCode(z) != ZSTD_error_dstSize_tooSmall)
			return PROTO_E_CODEC;
	}
	if (cap - HDR_SIZE < raw)
		return PROTO_E_FULL;
	memcpy(o + HDR_SIZE, c->scratch, raw);
	put_header(o, 0, 0, n, raw, raw);
	*written = HDR_SIZE + raw;
	return 0;
}

/* ---- decode ---------------------------------------------------------- */

struct hdr {
	int version;
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
	if (in[4] != HDR_VERSION && in[4] != HDR_VERSION_2 &&
	    in[4] != HDR_VERSION_OLD)
		return PROTO_E_VERSION;
	h->version = in[4];
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
	if (h->version == HDR_VERSION_OLD) {
		if ((uint64_t)h->n * PROTO_EVENT_SIZE != h->raw)
			return PROTO_E_LENGTH;
	} else if (h->n == 0) {
		if (h->raw != 0)
			return PROTO_E_LENGTH;
	} else if (h->raw < BASE_SIZE + 1 + MASK_SIZE ||
		   h->raw > PREFIX_MAX + MASK_SIZE +
				    (uint64_t)h->n * PROTO_EVENT_SIZE) {
		/* drel table, mask, then at most 72 planes of n bytes */
		return PROTO_E_LENGTH;
	}
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

/* Plane pointers of a body src[0..raw) of n records: version 1 has all 72
 * planes; versions 2 and 3 the drel table (into c->drel), a mask, then the planes
 * it names, the others pointing to zero (n zero bytes). PROTO_E_FORMAT
 * when the table is not canonical or the mask does not match the size. */
static int plane_map(struct proto_codec *c, const unsigned char *src,
		     size_t raw, size_t n, int version,
		     const unsigned char *zero, uint64_t *base,
		     const unsigned char *pl[PROTO_EVENT_SIZE])
{
	size_t kept = 0, cnt, i;
	int b, prev = -1;

	memset(c->drel, 0, sizeof(c->drel));
	*base = 0;
	if (version == HDR_VERSION_OLD) {
		for (b = 0; b < PROTO_EVENT_SIZE; b++)
			pl[b] = src + (size_t)b * n;
		return 0;
	}
	*base = ld64(src);
	src += BASE_SIZE;
	raw -= BASE_SIZE;
	cnt = src[0];
	if (1 + 2 * cnt + MASK_SIZE > raw)
		return PROTO_E_FORMAT;
	for (i = 0; i < cnt; i++) {
		unsigned t = src[1 + 2 * i], m = src[2 + 2 * i];

		/* types increasing, masks of the six args, never empty, never
		 * on STRING or ARRAY */
		if ((int)t <= prev || m == 0 || m >= (1u << PROTO_EV_NARGS) ||
		    container(t))
			return PROTO_E_FORMAT;
		c->drel[t] = (uint8_t)m;
		prev = (int)t;
	}
	src += 1 + 2 * cnt;
	raw -= 1 + 2 * cnt;
	for (b = 0; b < PROTO_EVENT_SIZE; b++)
		kept += (src[b / 8] >> (b % 8)) & 1;
	if (MASK_SIZE + kept * n != raw)
		return PROTO_E_FORMAT;
	kept = 0;
	for (b = 0; b < PROTO_EVENT_SIZE; b++) {
		if ((src[b / 8] >> (b % 8)) & 1)
			pl[b] = src + MASK_SIZE + kept++ * n;
		else
			pl[b] = zero;
	}
	return 0;
}

int proto_codec_decode(struct proto_codec *c, const void *in, size_t len,
		       struct proto_event *out, size_t max, size_t *n)
{
	const unsigned char *p = in, *src, *pl[PROTO_EVENT_SIZE];
	uint64_t base;
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
	/* scratch: the decompressed body, then n zero bytes (the plane
	 * every dropped plane reads) */
	rc = scratch_reserve(c, (size_t)h.raw + h.n);
	if (rc)
		return rc;
	if (h.flags & HDR_F_ZSTD) {
		rc = unzstd(c, p + HDR_SIZE, h.body, h.raw);
		if (rc)
			return rc;
		src = c->scratch;
	} else {
		src = p + HDR_SIZE;
	}
	if (h.version == HDR_VERSION) {
		rc = order_reserve(c, h.n);
		if (rc)
			return rc;
	}
	memset(c->scratch + h.raw, 0, h.n);
	rc = plane_map(c, src, h.raw, h.n, h.version, c->scratch + h.raw,
		       &base, pl);
	if (rc)
		return rc;
	untransform(c, pl, h.n, h.version, base, out);
	*n = h.n;
	return 0;
}
