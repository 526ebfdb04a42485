/*
 * bench/trace_bytes.c - where the bytes of a job directory's trace go.
 *
 *   trace_bytes DIR [LEVEL...]
 *
 * Reads every frame of DIR/segments (proto_jobdir), and prints:
 *  - the stored bytes: BATCH frames (frame and BATCH headers, codec
 *    header, codec body) against every other frame (META, CLOCK, BYE ...:
 *    the fixed per-process costs), per event counted (STRING and ARRAY
 *    records are stored but are not events);
 *  - the events per type, with the codec's residual bits per field
 *    (sum of the bit lengths of the transformed words: gap, duration,
 *    type/flags/tid, arg0..5; a proxy of their entropy before zstd);
 *  - what each field costs after zstd: the batches re-encoded as they
 *    were cut, at level 0, and each field's 8 byte planes compressed
 *    alone at level 1;
 *  - the batches re-encoded as they were cut at each LEVEL (default 1 3
 *    9 19), with the encoder's and decoder's time per record.
 * The encoding read and written is the one this build's proto/codec.c
 * writes. Not a test: figures only (bench/RESULTS.md).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "proto/frame.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

#define FIELDS 9
#define NTYPES 65536
#define FRAME_HDR 16

static const char *const field_name[FIELDS] = {
	"gap", "dur", "type", "arg0", "arg1", "arg2", "arg3", "arg4", "arg5"};

struct batch {
	size_t first, n;	/* records ev[first .. first + n) */
};

static struct proto_event *ev;
static size_t nev, capev;
static struct batch *bat;
static size_t nbat, capbat;
static uint64_t type_count[NTYPES];
static uint64_t type_bits[NTYPES][FIELDS];

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "trace_bytes: out of memory\n");
		exit(1);
	}
	return q;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned bitlen(uint64_t x)
{
	return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

static int is_event(unsigned type)
{
	return type != PROTO_EV_STRING && type != PROTO_EV_ARRAY;
}

static int add_batch(struct proto_codec *codec, const struct proto_batch *b)
{
	uint32_t n;
	size_t got;
	int rc = proto_codec_peek(b->data, b->datalen, &n);

	if (rc)
		return rc;
	if (nev + n > capev) {
		while (nev + n > capev)
			capev = capev ? capev * 2 : 65536;
		ev = xrealloc(ev, capev * sizeof(*ev));
	}
	rc = proto_codec_decode(codec, b->data, b->datalen, ev + nev, n, &got);
	if (rc)
		return rc;
	if (nbat == capbat) {
		capbat = capbat ? capbat * 2 : 1024;
		bat = xrealloc(bat, capbat * sizeof(*bat));
	}
	bat[nbat].first = nev;
	bat[nbat++].n = got;
	nev += got;
	return 0;
}

/* The words of a level-0 batch body: base, drel table, mask, planes. */
static int body_planes(const unsigned char *body, size_t len, size_t n,
		       const unsigned char *pl[PROTO_EVENT_SIZE])
{
	size_t off = 8, kept = 0;
	const unsigned char *mask;
	int b;

	if (len < off + 1)
		return -1;
	off += 1 + 2 * (size_t)body[off];
	if (len < off + 9)
		return -1;
	mask = body + off;
	off += 9;
	for (b = 0; b < PROTO_EVENT_SIZE; b++) {
		if ((mask[b / 8] >> (b % 8)) & 1)
			pl[b] = body + off + kept++ * n;
		else
			pl[b] = NULL;
	}
	return off + kept * n == len ? 0 : -1;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Per-type residual bits and per-field zstd bytes of the batches re-encoded
 * at level 0. */
static void fields(void)
{
	struct proto_codec *c = proto_codec_new(PROTO_CODEC_LEVEL_NONE);
	ZSTD_CCtx *z = ZSTD_createCCtx();
	uint64_t fbytes[FIELDS] = {0}, prefix = 0, pbytes = 0;
	double h0 = 0;
	uint64_t *order = NULL;
	unsigned prev = 0;
	unsigned char *out = NULL, *grp = NULL, *zo = NULL;
	size_t capo = 0, capg = 0, w, i, r;
	int f, b;

	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1);
	for (i = 0; i < nbat; i++) {
		const unsigned char *pl[PROTO_EVENT_SIZE];
		size_t n = bat[i].n, need = proto_codec_bound(n);

		if (!n)
			continue;
		if (need > capo)
			out = xrealloc(out, capo = need);
		if (proto_codec_encode(c, ev + bat[i].first, n, out, capo, &w) ||
		    body_planes(out + 24, w - 24, n, pl)) {
			fprintf(stderr, "trace_bytes: re-encoding failed\n");
			exit(1);
		}
		prefix += w - 24;
		if (8 * n > capg) {
			capg = 8 * n;
			grp = xrealloc(grp, capg);
			zo = xrealloc(zo, ZSTD_compressBound(capg));
		}
		order = xrealloc(order, n * sizeof(*order));
		for (r = 0; r < n; r++) {	/* the codec's group order */
			unsigned t = (pl[16] ? pl[16][r] : 0) |
				     (pl[17] ? pl[17][r] : 0) << 8;

			order[r] = (uint64_t)t << 48 | (uint64_t)prev << 32 | r;
			prev = t;
		}
		prev = 0;
		qsort(order, n, sizeof(*order), cmp64);
		for (b = 0; b < PROTO_EVENT_SIZE; b++) {
			uint32_t hist[256] = {0};

			if (!pl[b])
				continue;
			pbytes += ZSTD_compress2(z, zo, ZSTD_compressBound(capg),
						 pl[b], n);
			for (r = 0; r < n; r++)
				hist[pl[b][r]]++;
			for (r = 0; r < 256; r++)
				if (hist[r])
					h0 -= hist[r] * log2((double)hist[r] / n) / 8;
		}
		for (f = 0; f < FIELDS; f++) {
			size_t g = 0;

			for (b = 8 * f; b < 8 * f + 8; b++)
				if (pl[b]) {
					memcpy(grp + g, pl[b], n);
					g += n;
					prefix -= n;
				}
			if (g)
				fbytes[f] += ZSTD_compress2(z, zo,
					ZSTD_compressBound(capg), grp, g);
		}
		for (r = 0; r < n; r++) {
			uint64_t word[FIELDS] = {0};
			unsigned t;

			for (f = 0; f < FIELDS; f++)
				for (b = 0; b < 8; b++)
					if (pl[8 * f + b])
						word[f] |= (uint64_t)pl[8 * f + b][r]
							   << (8 * b);
			t = (unsigned)(order[r] >> 48);
			type_count[t]++;
			for (f = 0; f < FIELDS; f++)
				type_bits[t][f] += f == 2 ? 0 : bitlen(word[f]);
		}
	}
	printf("per field after zstd 1 (each field's planes alone, per batch; "
	       "bytes per record):\n ");
	for (f = 0; f < FIELDS; f++)
		printf(" %s %.3f", field_name[f], (double)fbytes[f] / nev);
	printf("  (prefixes %.3f)\n", (double)prefix / nev);
	printf("each plane alone after zstd 1: %.3f B/record; order-0 entropy "
	       "of the planes: %.3f\n", (double)pbytes / nev, h0 / nev);
	free(out);
	free(grp);
	free(order);
	free(zo);
	ZSTD_freeCCtx(z);
	proto_codec_free(c);
}

static void types(void)
{
	unsigned t;
	int f;

	printf("per type: records, share, residual bits per record by field "
	       "(before zstd)\n");
	for (t = 0; t < NTYPES; t++) {
		const struct proto_ev_info *inf;

		if (!type_count[t] || type_count[t] * 1000 < nev)
			continue;
		inf = proto_ev_info(t);
		printf("  %-16s %9" PRIu64 " %5.1f%%", inf ? inf->name : "?",
		       type_count[t], 100.0 * type_count[t] / nev);
		for (f = 0; f < FIELDS; f++)
			if (f != 2)
				printf(" %s %4.1f", field_name[f],
				       (double)type_bits[t][f] / type_count[t]);
		printf("\n");
	}
}

static void levels(int lv, uint64_t events)
{
	struct proto_codec *c = proto_codec_new(lv);
	struct proto_event *back;
	unsigned char *out;
	size_t maxn = 0, i, w, got;
	uint64_t bytes = 0;
	double te = 0, td = 0, t0;

	if (!c) {
		fprintf(stderr, "trace_bytes: no level %d\n", lv);
		return;
	}
	for (i = 0; i < nbat; i++)
		if (bat[i].n > maxn)
			maxn = bat[i].n;
	out = xrealloc(NULL, proto_codec_bound(maxn));
	back = xrealloc(NULL, (maxn ? maxn : 1) * sizeof(*back));
	for (i = 0; i < nbat; i++) {
		t0 = now();
		if (proto_codec_encode(c, ev + bat[i].first, bat[i].n, out,
				       proto_codec_bound(maxn), &w))
			exit(1);
		te += now() - t0;
		t0 = now();
		if (proto_codec_decode(c, out, w, back, maxn, &got) ||
		    got != bat[i].n ||
		    memcmp(back, ev + bat[i].first, got * sizeof(*back))) {
			fprintf(stderr, "trace_bytes: round trip failed\n");
			exit(1);
		}
		td += now() - t0;
		bytes += w;
	}
	printf("  level %2d: codec %.3f B/event (+%d B of frame and BATCH "
	       "header a batch: %.3f), encode %.1f ns, decode %.1f ns a record\n",
	       lv, (double)bytes / events, FRAME_HDR + PROTO_BATCH_HDR,
	       (double)(bytes + nbat * (FRAME_HDR + PROTO_BATCH_HDR)) / events,
	       te * 1e9 / nev, td * 1e9 / nev);
	free(out);
	free(back);
	proto_codec_free(c);
}

int main(int argc, char **argv)
{
	static const int deflt[] = {1, 3, 9, 19};
	static struct proto_msg msg;
	struct proto_jobdir_r *r;
	struct proto_codec *codec;
	struct proto_frame f;
	uint64_t fb[256] = {0}, fn[256] = {0}, body = 0, events = 0;
	uint64_t other = 0, batchb = 0;
	int rc, more, a;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: trace_bytes DIR [LEVEL...]\n");
		return 2;
	}
	r = proto_jobdir_open(argv[1], &rc);
	codec = proto_codec_new(PROTO_CODEC_LEVEL_NONE);
	if (!r || !codec) {
		fprintf(stderr, "trace_bytes: %s: %s\n", argv[1],
			proto_strerror(r ? PROTO_E_NOMEM : rc));
		return 1;
	}
	while ((more = proto_jobdir_next(r, &f)) == 1) {
		fb[f.type] += FRAME_HDR + f.length;
		fn[f.type]++;
		if (f.type != PROTO_MSG_BATCH)
			continue;
		if ((rc = proto_msg_decode(&f, &msg)) ||
		    (rc = add_batch(codec, &msg.u.batch))) {
			fprintf(stderr, "trace_bytes: batch: %s\n",
				proto_strerror(rc));
			return 1;
		}
		body += msg.u.batch.datalen;
	}
	if (more < 0)
		return 1;
	for (i = 0; i < nev; i++)
		events += is_event(ev[i].type);
	for (a = 0; a < 256; a++)
		if (a == PROTO_MSG_BATCH)
			batchb += fb[a];
		else
			other += fb[a];
	printf("%s: %" PRIu64 " events, %zu records (STRING, ARRAY "
	       "included), %zu batches\n", argv[1], events, nev, nbat);
	printf("stored: BATCH frames %" PRIu64 " B = %.3f B/event (codec data "
	       "%" PRIu64 " = %.3f), other frames %" PRIu64 " B = %.3f B/event:",
	       batchb, (double)batchb / events, body, (double)body / events,
	       other, (double)other / events);
	for (a = 0; a < 256; a++)
		if (a != PROTO_MSG_BATCH && fn[a])
			printf(" %s %" PRIu64 "x %" PRIu64 " B",
			       proto_msg_name((unsigned)a) ?
			       proto_msg_name((unsigned)a) : "?", fn[a], fb[a]);
	printf("\n");
	fields();
	types();
	printf("re-encoded as cut, this build's codec:\n");
	if (argc > 2)
		for (a = 2; a < argc; a++)
			levels(atoi(argv[a]), events);
	else
		for (a = 0; a < 4; a++)
			levels(deflt[a], events);
	proto_jobdir_close_r(r);
	proto_codec_free(codec);
	free(ev);
	free(bat);
	return 0;
}
