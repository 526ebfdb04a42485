/*
 * tests/manager/sim_gen.c - synthetic MPI job directories for the SimGrid
 * export tests: what the MPI sensor would record for a few programs, written
 * with the real job directory writer, codec and message encoder.
 *
 *   sim_gen KIND DIR [RANKS]
 *     ring      rank r receives from r-1 and sends to r+1 (rank 0 starts),
 *               plus an mpirun-like stream without a rank (libc events only)
 *     coll      every collective on MPI_COMM_WORLD, on a dup of it, one on a
 *               split half (skipped by the export), one on a dup_with_info
 *               of world, sendrecv with tags 0 and 7
 *     nonblock  irecv/isend/wait/waitall/waitany/test, a wildcard irecv,
 *               requests to MPI_PROC_NULL, a waitall on a subset
 *     nompi     one stream with libc events only (no MPI)
 *     norank    like ring but rank 1's stream is missing
 *
 * SIM_GEN_NET=1 in the environment adds the META keys of a measured network
 * (net_latency_ns 2000, net_bandwidth_Bps 1.25e9, net_bw_factor
 * "0:1;4096:0.25;65536:0.8") to every rank; SIM_GEN_NET=bad gives a
 * net_bw_factor that is not SMPI's syntax.
 *
 * Each rank is one stream: a META frame (rank, size, flop_rate, host ...)
 * and BATCH frames of at most 1000 events. Exit 0, or 1 with a message.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/event.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

#define GEN_MAX 4096
#define BATCH 1000
#define RATE 2000000000	/* flop/s every rank claims */

struct gen {
	struct proto_event ev[GEN_MAX];
	size_t n;
	uint64_t t;
	int rank, size;
	int64_t req;	/* last request id */
};

static void die(const char *what)
{
	fprintf(stderr, "sim_gen: %s\n", what);
	exit(1);
}

static struct proto_event *ev(struct gen *g, unsigned type, int64_t a0,
			      int64_t a1, int64_t a2, int64_t a3, int64_t a4,
			      int64_t a5)
{
	struct proto_event *e;

	if (g->n == GEN_MAX)
		die("too many events");
	e = &g->ev[g->n++];
	memset(e, 0, sizeof(*e));
	e->t_start = g->t;
	g->t += 1000;
	e->t_end = g->t;
	g->t += 100;
	e->type = (uint16_t)type;
	proto_ev_set_args(e, a0, a1, a2, a3, a4, a5);
	return e;
}

#define EV(g, T, ...) ev(g, PROTO_EV_##T, __VA_ARGS__)

/* ARRAY records continuing the last event. */
static void arr(struct gen *g, const int64_t *v, size_t n)
{
	g->ev[g->n - 1].flags |= PROTO_EVF_HASARRAY;
	for (size_t i = 0; i < n; i += PROTO_EV_NARGS) {
		size_t k = n - i < PROTO_EV_NARGS ? n - i : PROTO_EV_NARGS;
		struct proto_event *e;

		if (g->n == GEN_MAX)
			die("too many events");
		e = &g->ev[g->n++];
		memset(e, 0, sizeof(*e));
		e->type = PROTO_EV_ARRAY;
		e->t_start = i;
		e->t_end = n;
		e->flags = (uint16_t)k;
		memcpy(e->arg, v + i, k * sizeof(int64_t));
	}
}

/* A stretch of flops at RATE whose interval is its CPU time (the exports
 * cap a stretch's CPU time by its interval). */
static void compute(struct gen *g, int64_t flops)
{
	int64_t cpu = flops * 1000000000 / RATE;
	struct proto_event *e = EV(g, COMPUTE, cpu, flops, 0, RATE, 0, 0);

	e->t_end = e->t_start + (uint64_t)cpu;
	g->t = e->t_end + 100;
}

static void start(struct gen *g, int rank, int size)
{
	memset(g, 0, sizeof(*g));
	g->t = 1000000 + (uint64_t)rank * 333;
	g->rank = rank;
	g->size = size;
	EV(g, MPI_INIT, rank, size, 0, 0, 0, 0);
	compute(g, 500);	/* tiny: carried over */
	EV(g, MPI_COMM_SIZE, 0, size, 0, 0, 0, 0);
	EV(g, MPI_COMM_RANK, 0, rank, 0, 0, 0, 0);
}

static int64_t isend(struct gen *g, int peer, int tag, int64_t bytes)
{
	EV(g, MPI_ISEND, peer, tag, 0, bytes, ++g->req, 0);
	return g->req;
}

static int64_t irecv(struct gen *g, int peer, int tag, int64_t bytes)
{
	EV(g, MPI_IRECV, peer, tag, 0, bytes, ++g->req, 0);
	return g->req;
}

/* ---- programs ----------------------------------------------------------- */

static void ring(struct gen *g)
{
	int r = g->rank, n = g->size;

	for (int it = 0; it < 3; it++) {
		compute(g, 1000000);
		if (r == 0) {
			EV(g, MPI_SEND, 1 % n, it, 0, 1000000, 0, 0);
			EV(g, MPI_RECV, n - 1, it, 0, 1000000, 0, 0);
		} else {
			EV(g, MPI_RECV, r - 1, it, 0, 1000000, 1, 0);
			compute(g, 2000000);
			EV(g, MPI_SEND, (r + 1) % n, it, 0, 1000000, 0, 0);
		}
	}
	EV(g, MPI_BARRIER, 0, 0, 0, 0, 0, 0);
}

static void coll(struct gen *g)
{
	int r = g->rank, n = g->size;
	int64_t v[256] = {0};

	compute(g, 3000000);
	EV(g, MPI_BARRIER, 0, 0, 0, 0, 0, 0);
	EV(g, MPI_BCAST, 4096, 1, 0, 0, 0, 0);
	EV(g, MPI_REDUCE, 800, 0, 0, 0, 0, 0);
	EV(g, MPI_ALLREDUCE, 800, 0, 0, 0, 0, 0);
	EV(g, MPI_GATHER, 100, r == 0 ? 100 : 0, 0, 0, 0, 0);
	EV(g, MPI_GATHERV, 10 * (r + 1), r == 0 ? 10 * n * (n + 1) / 2 : 0, 0, 0, 0, 0);
	if (r == 0) {
		for (int i = 0; i < n; i++)
			v[i] = 10 * (i + 1);
		arr(g, v, (size_t)n);
	}
	EV(g, MPI_SCATTER, r == 1 ? 200 : 0, 200, 1, 0, 0, 0);
	EV(g, MPI_SCATTERV, r == 0 ? 20 * n * (n + 1) / 2 : 0, 20 * (r + 1), 0, 0, 0, 0);
	if (r == 0) {
		for (int i = 0; i < n; i++)
			v[i] = 20 * (i + 1);
		arr(g, v, (size_t)n);
	}
	EV(g, MPI_ALLGATHER, 64, 64, 0, 0, 0, 0);
	EV(g, MPI_ALLGATHERV, 8 * (r + 1), 8 * n * (n + 1) / 2, 0, 0, 0, 0);
	for (int i = 0; i < n; i++)
		v[i] = 8 * (i + 1);
	arr(g, v, (size_t)n);
	EV(g, MPI_ALLTOALL, 32, 32, 0, 0, 0, 0);
	EV(g, MPI_ALLTOALLV, 16 * n, 16 * n, 0, 0, 0, 0);
	for (int i = 0; i < 2 * n; i++)
		v[i] = 16;
	arr(g, v, (size_t)(2 * n));
	EV(g, MPI_REDUCE_SCATTER, 24 * n, 0, 0, 0, 0, 0);
	for (int i = 0; i < n; i++)
		v[i] = 24;
	arr(g, v, (size_t)n);
	EV(g, MPI_SCAN, 40, 0, 0, 0, 0, 0);
	EV(g, MPI_EXSCAN, 40, 0, 0, 0, 0, 0);
	compute(g, 1000000);
	/* a dup of world: its collectives replay on world */
	EV(g, MPI_COMM_DUP, 0, 2, n, 0, 0, 0);
	EV(g, MPI_ALLREDUCE, 8, 2, 0, 0, 0, 0);
	/* a split in halves: its collective cannot be replayed, skipped */
	EV(g, MPI_COMM_SPLIT, 0, r % 2, r, 3, (n + 1 - r % 2) / 2, r / 2);
	EV(g, MPI_BCAST, 8, 0, 3, 0, 0, 0);
	/* a dup of world with info: replayed as a dup, its collective too */
	EV(g, MPI_COMM_DUP_WITH_INFO, 0, 4, n, r, 0, 0);
	EV(g, MPI_ALLREDUCE, 16, 4, 0, 0, 0, 0);
	/* sendrecv around the ring, tag 0 (native) and tag 7 (spelled out) */
	EV(g, MPI_SENDRECV, (r + 1) % n, 0, 0, 512, (r + n - 1) % n, 512);
	EV(g, MPI_SENDRECV, (r + 1) % n, 7, 0, 256, (r + n - 1) % n, 256);
	EV(g, MPI_BARRIER, 0, 0, 0, 0, 0, 0);
}

static void nonblock(struct gen *g)
{
	int r = g->rank, n = g->size, left = (r + n - 1) % n, right = (r + 1) % n;
	int64_t a, b, c, d, e, v[8] = {0};

	compute(g, 1000000);
	/* halo exchange: waitall on everything outstanding */
	a = irecv(g, left, 1, 4096);
	b = isend(g, right, 1, 4096);
	compute(g, 500000);
	EV(g, MPI_WAITALL, 2, 0, 0, 0, 0, 0);
	int64_t w1[8] = {a, left, 4096, 0, b, right, 4096, 1};
	arr(g, w1, 8);
	/* wildcard receive completed by wait after a failed test */
	c = irecv(g, -1, 5, 100);
	d = isend(g, right, 5, 100);
	EV(g, MPI_WAIT, d, right, 5, 0, 100, 1);
	EV(g, MPI_TEST, c, 0, -1, 5, 0, 0);
	compute(g, 200000);
	EV(g, MPI_WAIT, c, left, 5, 0, 100, 0);
	/* requests with MPI_PROC_NULL: no action, their wait skipped */
	e = isend(g, -2, 9, 10);
	EV(g, MPI_WAIT, e, -2, 9, 0, 10, 1);
	/* waitall on a subset of what is outstanding, then waitany, test */
	a = irecv(g, left, 2, 64);
	b = irecv(g, right, 3, 64);
	c = isend(g, right, 2, 64);
	d = isend(g, left, 3, 64);
	v[0] = c; v[1] = right; v[2] = 64; v[3] = 0;
	v[4] = d; v[5] = left; v[6] = 64; v[7] = 0;
	EV(g, MPI_WAITALL, 2, 0, 0, 0, 0, 0);
	arr(g, v, 8);
	EV(g, MPI_WAITANY, 2, 0, a, left, 2, 64);
	EV(g, MPI_TEST, b, 1, right, 3, 0, 64);
	/* a blocking ring step after all that */
	if (r == 0) {
		EV(g, MPI_SEND, right, 4, 0, 1 << 20, 0, 0);
		EV(g, MPI_RECV, left, 4, 0, 1 << 20, 0, 0);
	} else {
		EV(g, MPI_RECV, left, 4, 0, 1 << 20, 0, 0);
		EV(g, MPI_SEND, right, 4, 0, 1 << 20, 0, 0);
	}
	EV(g, MPI_BARRIER, 0, 0, 0, 0, 0, 0);
}

/* ---- writing ------------------------------------------------------------ */

static void put(struct proto_jobdir_w *w, struct proto_msg *m)
{
	uint8_t *buf;
	size_t len;

	if (proto_msg_frame_alloc(m, &buf, &len) != 0)
		die("frame encoding failed");
	if (proto_jobdir_append(w, buf, len) != 0)
		die("append failed");
	free(buf);
}

static void kv(struct proto_meta *m, const char *k, const char *v)
{
	snprintf(m->kv[m->n].key, sizeof(m->kv[m->n].key), "%s", k);
	snprintf(m->kv[m->n].value, sizeof(m->kv[m->n].value), "%s", v);
	m->n++;
}

static void kvi(struct proto_meta *m, const char *k, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	kv(m, k, b);
}

static void write_stream(struct proto_jobdir_w *w, struct proto_codec *cd,
			 uint64_t id, int rank, const struct gen *g)
{
	static struct proto_msg m;
	size_t cap = proto_codec_bound(BATCH), len;
	uint8_t *out = malloc(cap);
	uint64_t seq = 0;

	if (!out)
		die("out of memory");
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_META;
	m.u.meta.id = id;
	kvi(&m.u.meta, "pid", 1000 + rank);
	kv(&m.u.meta, "host", "simhost");
	kv(&m.u.meta, "exe", "/bin/synthetic");
	if (rank >= 0) {
		kvi(&m.u.meta, "rank", rank);
		kvi(&m.u.meta, "size", g->size);
		kvi(&m.u.meta, "compute_method", 0);
		kvi(&m.u.meta, "flop_rate", RATE);
		if (getenv("SIM_GEN_NET")) {	/* a measured network */
			kvi(&m.u.meta, "net_latency_ns", 2000);
			kvi(&m.u.meta, "net_bandwidth_Bps", 1250000000);
			kv(&m.u.meta, "net_bw_factor",
			   strcmp(getenv("SIM_GEN_NET"), "bad") ?
			   "0:1;4096:0.25;65536:0.8" : "0:1;4096:x\"/><evil");
		}
	}
	put(w, &m);
	for (size_t i = 0; i < g->n;) {
		size_t k = g->n - i < BATCH ? g->n - i : BATCH;

		/* never split an event from its ARRAY continuation */
		while (i + k < g->n && g->ev[i + k].type == PROTO_EV_ARRAY)
			k--;
		if (proto_codec_encode(cd, g->ev + i, k, out, cap, &len) != 0)
			die("codec failed");
		memset(&m, 0, sizeof(m));
		m.type = PROTO_MSG_BATCH;
		m.u.batch.stream = id;
		m.u.batch.seq = ++seq;
		m.u.batch.nrecords = (uint32_t)k;
		m.u.batch.data = out;
		m.u.batch.datalen = (uint32_t)len;
		put(w, &m);
		i += k;
	}
	free(out);
}

int main(int argc, char **argv)
{
	static struct gen g;
	struct proto_jobdir_w *w;
	struct proto_codec *cd;
	const char *kind;
	int n, rc;

	if (argc < 3 || argc > 4) {
		fputs("usage: sim_gen ring|coll|nonblock|nompi|norank DIR [RANKS]\n",
		      stderr);
		return 2;
	}
	kind = argv[1];
	n = argc == 4 ? atoi(argv[3]) : 4;
	if (n < 2 || n > 128)
		die("RANKS must be 2..128");
	if (!(w = proto_jobdir_create(argv[2], 0, 0, &rc)))
		die("cannot create the job directory");
	if (!(cd = proto_codec_new(1)))
		die("out of memory");
	if (!strcmp(kind, "nompi")) {
		memset(&g, 0, sizeof(g));
		g.t = 1000;
		for (int i = 0; i < 10; i++)
			EV(&g, WRITE, 1, 100, 100, 0, 0, 0);
		write_stream(w, cd, 0x5eed, -1, &g);
	} else {
		void (*prog)(struct gen *) = !strcmp(kind, "coll") ? coll :
			!strcmp(kind, "nonblock") ? nonblock :
			!strcmp(kind, "ring") || !strcmp(kind, "norank") ? ring : NULL;

		if (!prog)
			die("unknown KIND");
		for (int r = 0; r < n; r++) {
			if (r == 1 && !strcmp(kind, "norank"))
				continue;
			start(&g, r, n);
			prog(&g);
			compute(&g, 100);
			EV(&g, MPI_FINALIZE, r, n, 0, 0, 0, 0);
			write_stream(w, cd, 0xa000 + (uint64_t)r, r, &g);
		}
		/* mpirun: a process without a rank, libc events only */
		memset(&g, 0, sizeof(g));
		g.t = 500;
		for (int i = 0; i < 5; i++)
			EV(&g, WRITE, 1, 10, 10, 0, 0, 0);
		write_stream(w, cd, 0xb000, -1, &g);
	}
	proto_codec_free(cd);
	if (proto_jobdir_close(w) != 0)
		die("close failed");
	return 0;
}
