/*
 * bench/post_gen.c - a large synthetic MPI job directory for measuring the
 * manager's post-processing memory (bench/post_memory.sh, issue 7).
 *
 *   post_gen DIR RANKS MPI_EVENTS
 *
 * Each rank is one stream (META rank/size/calib_ns, then BATCH frames of 1000
 * events written as they are made, so the generator's memory is constant).
 * Per iteration a rank posts MPI_Irecv from its left neighbour, MPI_Isend to
 * its right one, waits for both, and computes; every 64th iteration is an
 * MPI_Allreduce on MPI_COMM_WORLD, every 256th a tracer FLUSH. One receive in
 * 50,000 ends before its send started (a clock error the causality pass must
 * repair). About MPI_EVENTS MPI events in all. Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/event.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

#define BATCH 1000
#define PERIOD 20000	/* ns per iteration */

struct gen {
	struct proto_jobdir_w *w;
	struct proto_codec *cd;
	uint8_t *out;
	size_t cap;
	uint64_t stream, seq;
	struct proto_event ev[BATCH];
	size_t n;
};

static void die(const char *what)
{
	fprintf(stderr, "post_gen: %s\n", what);
	exit(1);
}

static void put(struct gen *g, struct proto_msg *m)
{
	uint8_t *buf;
	size_t len;

	if (proto_msg_frame_alloc(m, &buf, &len) != 0)
		die("frame encoding failed");
	if (proto_jobdir_append(g->w, buf, len) != 0)
		die("append failed");
	free(buf);
}

static void flush(struct gen *g)
{
	static struct proto_msg m;
	size_t len;

	if (!g->n)
		return;
	if (proto_codec_encode(g->cd, g->ev, g->n, g->out, g->cap, &len) != 0)
		die("codec failed");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_BATCH;
	m.u.batch.stream = g->stream;
	m.u.batch.seq = ++g->seq;
	m.u.batch.nrecords = (uint32_t)g->n;
	m.u.batch.data = g->out;
	m.u.batch.datalen = (uint32_t)len;
	put(g, &m);
	g->n = 0;
}

static void ev(struct gen *g, unsigned type, uint64_t t0, uint64_t t1,
	       int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
	       int64_t a5)
{
	struct proto_event *e = &g->ev[g->n++];

	memset(e, 0, sizeof(*e));
	e->type = (uint16_t)type;
	e->t_start = t0;
	e->t_end = t1;
	proto_ev_set_args(e, a0, a1, a2, a3, a4, a5);
	if (g->n == BATCH)
		flush(g);
}

static void meta(struct gen *g, int rank, int size)
{
	static struct proto_msg m;
	const char *kv[][2] = {{"host", "genhost"}, {"exe", "/bin/post_gen"},
			       {"calib_ns", "40"}};

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_META;
	m.u.meta.id = g->stream;
	for (size_t i = 0; i < 3; i++) {
		snprintf(m.u.meta.kv[i].key, sizeof(m.u.meta.kv[i].key), "%s", kv[i][0]);
		snprintf(m.u.meta.kv[i].value, sizeof(m.u.meta.kv[i].value), "%s", kv[i][1]);
	}
	snprintf(m.u.meta.kv[3].key, sizeof(m.u.meta.kv[3].key), "rank");
	snprintf(m.u.meta.kv[3].value, sizeof(m.u.meta.kv[3].value), "%d", rank);
	snprintf(m.u.meta.kv[4].key, sizeof(m.u.meta.kv[4].key), "size");
	snprintf(m.u.meta.kv[4].value, sizeof(m.u.meta.kv[4].value), "%d", size);
	m.u.meta.n = 5;
	put(g, &m);
}

static void rank_stream(struct gen *g, int r, int n, uint64_t iters)
{
	int left = (r + n - 1) % n, right = (r + 1) % n;
	int64_t req = 0;

	g->stream = 0xa000 + (uint64_t)r;
	g->seq = 0;
	meta(g, r, n);
	ev(g, PROTO_EV_MPI_INIT, 1000, 2000, r, n, 0, 0, 0, 0);
	for (uint64_t it = 0; it < iters; it++) {
		uint64_t t = 100000 + it * PERIOD + (uint64_t)r * 37;
		int64_t rq = ++req, sq = ++req, bytes = 1024 + (int64_t)(it % 7) * 512;
		/* receive i+1 on rank r is sent by r-1 at t + 1000: it ends at
		 * t + 6000, or, once in 50,000, at t + 800 (a clock error) */
		uint64_t rend = (it + (uint64_t)r) % 50000 == 49999 ? t + 800 : t + 6000;

		ev(g, PROTO_EV_MPI_IRECV, t, t + 300, left, (int64_t)(it & 0xff), 0,
		   bytes, rq, 0);
		ev(g, PROTO_EV_MPI_ISEND, t + 1000, t + 1400, right,
		   (int64_t)(it & 0xff), 0, bytes, sq, 0);
		ev(g, PROTO_EV_MPI_WAIT, rend > t + 1500 ? t + 1500 : t + 500, rend,
		   rq, left, (int64_t)(it & 0xff), 0, bytes, it % 3 == 0);
		ev(g, PROTO_EV_MPI_WAIT, rend + 100, rend + 300, sq, right,
		   (int64_t)(it & 0xff), 0, bytes, 1);
		ev(g, PROTO_EV_COMPUTE, rend + 400, t + PERIOD - 3000, -1, 0, 0, 0, 0, 0);
		if (it % 64 == 63)
			ev(g, PROTO_EV_MPI_ALLREDUCE, t + PERIOD - 2900,
			   t + PERIOD - 2000 + (uint64_t)r * 10, 8, 0, 0, 0, 0, 0);
		if (it % 256 == 255)
			ev(g, PROTO_EV_FLUSH, t + PERIOD - 1500, t + PERIOD - 1000,
			   256 * 5, 256 * 5 * 40, 0, 0, 0, 0);
	}
	ev(g, PROTO_EV_MPI_FINALIZE, 100000 + iters * PERIOD,
	   100000 + iters * PERIOD + 1000, r, n, 0, 0, 0, 0);
	flush(g);
}

int main(int argc, char **argv)
{
	static struct gen g;
	int n, rc;
	unsigned long long total;

	if (argc != 4) {
		fputs("usage: post_gen DIR RANKS MPI_EVENTS\n", stderr);
		return 2;
	}
	n = atoi(argv[2]);
	total = strtoull(argv[3], NULL, 10);
	if (n < 2 || n > 4096 || total < (unsigned long long)n * 8)
		die("RANKS must be 2..4096 and MPI_EVENTS at least 8 per rank");
	if (!(g.w = proto_jobdir_create(argv[1], 0, 0, &rc)))
		die("cannot create the job directory");
	if (!(g.cd = proto_codec_new(1)))
		die("out of memory");
	g.cap = proto_codec_bound(BATCH);
	if (!(g.out = malloc(g.cap)))
		die("out of memory");
	/* 4 MPI events per iteration, plus an allreduce every 64 */
	uint64_t iters = (uint64_t)(total / (unsigned long long)n * 64 / 257);
	for (int r = 0; r < n; r++)
		rank_stream(&g, r, n, iters);
	free(g.out);
	proto_codec_free(g.cd);
	if (proto_jobdir_close(g.w) != 0)
		die("close failed");
	return 0;
}
