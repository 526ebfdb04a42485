/*
 * bench/codec.c - figures of the batch codec (proto/codec.c).
 *
 * Generates trace-like records (an MPI benchmark mix and a libc write-heavy
 * mix), encodes and decodes them in batches on one core, and prints MB/s
 * (of raw 72-byte records), the compression ratio and bytes per event,
 * beside zstd alone at the same level on the same records in the same run.
 * Run by hand: ./bench/codec [records-per-batch [total-records]].
 * Not a test: no thresholds, figures only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "tests/xorshift.h"

#include "timing.h"

#define REPEATS 5

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return tests_xorshift64(&rng);
}

/* Roughly log-normal: base ns times a factor in [1, 2^spread). */
static uint64_t dur(uint64_t base, unsigned spread)
{
	return base + (base * (rnd() % 1024) * (1u + rnd() % (1u << spread))) / 1024;
}

static void ev_set(struct proto_event *e, uint64_t *t, uint64_t gap,
		   uint64_t d, unsigned type)
{
	memset(e, 0, sizeof(*e));
	*t += gap;
	e->t_start = *t;
	*t += d;
	e->t_end = *t;
	e->type = (uint16_t)type;
}

/* A blocking send or receive of bytes with peer, tag 7, on the world's
 * communicator: e. */
static struct proto_event *p2p(struct proto_event *e, uint64_t *t,
			       unsigned type, int64_t peer, int64_t bytes)
{
	ev_set(e, t, dur(200, 2), dur(3000, 4), type);
	e->arg[0] = peer;
	e->arg[1] = 7;
	e->arg[2] = 0x44000000;
	e->arg[3] = bytes;
	return e;
}

/* One rank of a halo-exchange benchmark: compute, Isend/Irecv to 2 of 4
 * neighbours, Waits, sometimes a blocking Send/Recv pair and an Allreduce. */
static void gen_mpi(struct proto_event *ev, size_t n)
{
	static const int64_t sizes[] = { 8, 1024, 8192, 65536, 262144 };
	static const int64_t peers[] = { 1, 3, 4, 12 };
	uint64_t t = 1700000000000000000ull % 100000000000ull;
	int64_t req_base = 0x55d0c0a01200;
	size_t i = 0;
	int k;

	while (i < n) {
		struct proto_event *e = &ev[i++];
		int64_t bytes = sizes[rnd() % 5];

		ev_set(e, &t, 300, dur(20000, 6), PROTO_EV_COMPUTE);
		e->arg[0] = (int64_t)(e->t_end - e->t_start) * 95 / 100;
		e->arg[1] = e->arg[0] * 2;
		e->arg[2] = 1;
		e->arg[3] = 2000000000;
		for (k = 0; k < 4 && i < n; k++) {
			e = &ev[i++];
			ev_set(e, &t, dur(150, 2), dur(900, 3),
			       k & 1 ? PROTO_EV_MPI_IRECV : PROTO_EV_MPI_ISEND);
			e->arg[0] = peers[k];
			e->arg[1] = 100 + (k >> 1);
			e->arg[2] = 0x44000000;
			e->arg[3] = bytes;
			e->arg[4] = req_base + 0x100 * k;
		}
		for (k = 0; k < 4 && i < n; k++) {
			e = &ev[i++];
			ev_set(e, &t, dur(100, 2), dur(2000, 5), PROTO_EV_MPI_WAIT);
			e->arg[0] = req_base + 0x100 * k;
			e->arg[1] = peers[k];
			e->arg[2] = 100 + (k >> 1);
			e->arg[3] = 0x44000000;
			e->arg[4] = bytes;
			e->arg[5] = (int64_t)(rnd() & 1);
		}
		if (rnd() % 4 == 0 && i + 2 <= n) {
			p2p(&ev[i++], &t, PROTO_EV_MPI_SEND, peers[0], bytes);
			e = p2p(&ev[i++], &t, PROTO_EV_MPI_RECV, peers[1], bytes);
			e->arg[4] = (int64_t)(rnd() & 1);
		}
		if (rnd() % 8 == 0 && i < n) {
			e = &ev[i++];
			ev_set(e, &t, dur(200, 2), dur(8000, 5), PROTO_EV_MPI_ALLREDUCE);
			e->arg[0] = 8;
			e->arg[1] = 0x44000000;
		}
	}
}

/* A logger/checkpointer: mostly write(2) and fwrite to three files. */
static void gen_libc(struct proto_event *ev, size_t n)
{
	static const int64_t sizes[] = { 13, 80, 512, 4096, 4096, 4096, 65536 };
	int64_t off[3] = { 0, 0, 0 };
	uint64_t t = 5000000000ull;
	size_t i;

	for (i = 0; i < n; i++) {
		struct proto_event *e = &ev[i];
		unsigned f = (unsigned)(rnd() % 3), r = (unsigned)(rnd() % 32);
		int64_t bytes = sizes[rnd() % 7];

		if (r < 24) {
			ev_set(e, &t, dur(400, 4), dur(1500, 4), PROTO_EV_WRITE);
			e->arg[0] = 3 + f;
			e->arg[1] = bytes;
			e->arg[2] = bytes;
			e->arg[3] = 1 + f;
			e->arg[5] = off[f];
			off[f] += bytes;
		} else if (r < 30) {
			ev_set(e, &t, dur(300, 3), dur(400, 3), PROTO_EV_FWRITE);
			e->arg[0] = 6;
			e->arg[1] = 80;
			e->arg[2] = 80;
			e->arg[3] = 4;
		} else if (r < 31) {
			ev_set(e, &t, dur(300, 3), dur(200, 3), PROTO_EV_LSEEK);
			e->arg[0] = 3 + f;
			e->arg[1] = off[f];
			e->arg[3] = off[f];
			e->arg[4] = 1 + f;
		} else {
			ev_set(e, &t, dur(300, 3), dur(300000, 4), PROTO_EV_FSYNC);
			e->arg[0] = 3 + f;
			e->arg[2] = 1 + f;
		}
	}
}

struct result {
	double enc, dec;	/* MB/s */
	size_t bytes;		/* encoded total */
};

/* A way to compress a batch: the codec, or zstd alone on the records as
 * they are in memory. enc writes m records into out (cap bytes), its length
 * in *len; dec reads them back into ev (room for max). 0, or -1. */
struct way {
	int (*enc)(void *w, const struct proto_event *ev, size_t m,
		   unsigned char *out, size_t cap, size_t *len);
	int (*dec)(void *w, const unsigned char *in, size_t len,
		   struct proto_event *ev, size_t max);
	size_t cap;		/* room for one batch */
};

/* The best of REPEATS encodings and decodings of ev[0 .. n) in batches,
 * checked against ev, into res: 0, or -1. */
static int bench_way(struct way *w, const struct proto_event *ev, size_t n,
		     size_t batch, struct result *res)
{
	size_t nb = (n + batch - 1) / batch, b;
	unsigned char *buf = malloc(nb * w->cap);
	size_t *len = calloc(nb, sizeof(*len));
	struct proto_event *back = malloc(n * sizeof(*back));
	double t0, best_e = 1e30, best_d = 1e30;
	int rc = -1;

	if (!buf || !len || !back)
		goto out;
	for (int rep = 0; rep < REPEATS; rep++) {
		t0 = (double)bench_now_ns();
		for (b = 0; b < nb; b++) {
			size_t m = n - b * batch < batch ? n - b * batch : batch;

			if (w->enc(w, ev + b * batch, m, buf + b * w->cap, w->cap,
				   &len[b]))
				goto out;
		}
		t0 = ((double)bench_now_ns() - t0) * 1e-9;
		best_e = t0 < best_e ? t0 : best_e;
		t0 = (double)bench_now_ns();
		for (b = 0; b < nb; b++) {
			/* room for this batch only: zstd's decoder writes
			 * past its output's end up to the room it is given */
			size_t m = n - b * batch < batch ? n - b * batch : batch;

			if (w->dec(w, buf + b * w->cap, len[b], back + b * batch, m))
				goto out;
		}
		t0 = ((double)bench_now_ns() - t0) * 1e-9;
		best_d = t0 < best_d ? t0 : best_d;
	}
	if (memcmp(back, ev, n * sizeof(*ev)))
		goto out;
	res->bytes = 0;
	for (b = 0; b < nb; b++)
		res->bytes += len[b];
	res->enc = (double)(n * PROTO_EVENT_SIZE) / best_e / 1e6;
	res->dec = (double)(n * PROTO_EVENT_SIZE) / best_d / 1e6;
	rc = 0;
out:
	free(back);
	free(len);
	free(buf);
	return rc;
}

struct codec_way {
	struct way w;		/* first: the callbacks get it */
	struct proto_codec *c;
};

static int codec_enc(void *w, const struct proto_event *ev, size_t m,
		     unsigned char *out, size_t cap, size_t *len)
{
	return proto_codec_encode(((struct codec_way *)w)->c, ev, m, out, cap,
				  len) ? -1 : 0;
}

static int codec_dec(void *w, const unsigned char *in, size_t len,
		     struct proto_event *ev, size_t max)
{
	size_t got;

	return proto_codec_decode(((struct codec_way *)w)->c, in, len, ev, max,
				  &got) ? -1 : 0;
}

static int bench_codec(int level, const struct proto_event *ev, size_t n,
		       size_t batch, struct result *res)
{
	struct codec_way cw = {
		{codec_enc, codec_dec, proto_codec_bound(batch)},
		proto_codec_new(level),
	};
	int rc = cw.c ? bench_way(&cw.w, ev, n, batch, res) : -1;

	proto_codec_free(cw.c);
	return rc;
}

struct zstd_way {
	struct way w;		/* first: the callbacks get it */
	ZSTD_CCtx *cc;
	ZSTD_DCtx *dc;
};

static int zstd_enc(void *w, const struct proto_event *ev, size_t m,
		    unsigned char *out, size_t cap, size_t *len)
{
	*len = ZSTD_compress2(((struct zstd_way *)w)->cc, out, cap, ev,
			      m * PROTO_EVENT_SIZE);
	return ZSTD_isError(*len) ? -1 : 0;
}

static int zstd_dec(void *w, const unsigned char *in, size_t len,
		    struct proto_event *ev, size_t max)
{
	return ZSTD_isError(ZSTD_decompressDCtx(((struct zstd_way *)w)->dc, ev,
						max * PROTO_EVENT_SIZE, in,
						len)) ? -1 : 0;
}

/* zstd alone: the same records as they are in memory, same level. */
static int bench_zstd(int level, const struct proto_event *ev, size_t n,
		      size_t batch, struct result *res)
{
	struct zstd_way zw = {
		{zstd_enc, zstd_dec, ZSTD_compressBound(batch * PROTO_EVENT_SIZE)},
		ZSTD_createCCtx(), ZSTD_createDCtx(),
	};
	int rc = -1;

	if (zw.cc && zw.dc) {
		ZSTD_CCtx_setParameter(zw.cc, ZSTD_c_compressionLevel, level);
		ZSTD_CCtx_setParameter(zw.cc, ZSTD_c_checksumFlag, 1);
		rc = bench_way(&zw.w, ev, n, batch, res);
	}
	ZSTD_freeCCtx(zw.cc);
	ZSTD_freeDCtx(zw.dc);
	return rc;
}

static void line(const char *what, int level, size_t n, const struct result *r)
{
	double raw = (double)(n * PROTO_EVENT_SIZE);
	double bpe = (double)r->bytes / (double)n;

	printf("  %-12s level %2d  enc %7.0f MB/s  dec %7.0f MB/s  "
	       "ratio %6.2f  %6.2f B/event  (%+.2f vs 6 B/event)\n",
	       what, level, r->enc, r->dec, raw / (double)r->bytes, bpe, bpe - 6);
}

int main(int argc, char **argv)
{
	static const int lv[] = { 0, 1, 3, 6 };
	size_t batch = argc > 1 ? strtoul(argv[1], NULL, 10) : 16384;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1u << 20;
	struct proto_event *ev;
	struct result r;
	int mix, l, rc = 0;

	if (batch == 0 || batch > PROTO_CODEC_MAX_RECORDS || n == 0) {
		fprintf(stderr, "usage: %s [records-per-batch (1..%u) [total]]\n",
			argv[0], PROTO_CODEC_MAX_RECORDS);
		return 2;
	}
	ev = malloc(n * sizeof(*ev));
	if (!ev)
		return 1;
	printf("batch codec: %zu records per batch, %zu records (%.1f MB raw), "
	       "best of %d, one core\n", batch, n,
	       (double)(n * PROTO_EVENT_SIZE) / 1e6, REPEATS);
	for (mix = 0; mix < 2; mix++) {
		if (mix == 0)
			gen_mpi(ev, n);
		else
			gen_libc(ev, n);
		printf("%s\n", mix == 0 ? "MPI benchmark mix (compute, Isend/Irecv, Wait, Send/Recv, Allreduce)"
					: "libc write-heavy mix (write, fwrite, lseek, fsync)");
		for (l = 0; l < (int)(sizeof(lv) / sizeof(lv[0])); l++) {
			if (bench_codec(lv[l], ev, n, batch, &r)) {
				fprintf(stderr, "codec level %d failed\n", lv[l]);
				rc = 1;
				continue;
			}
			line("codec", lv[l], n, &r);
			if (lv[l] == 0)
				continue;
			if (bench_zstd(lv[l], ev, n, batch, &r)) {
				fprintf(stderr, "zstd level %d failed\n", lv[l]);
				rc = 1;
				continue;
			}
			line("zstd alone", lv[l], n, &r);
		}
	}
	free(ev);
	return rc;
}
