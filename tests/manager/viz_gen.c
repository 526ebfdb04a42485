/*
 * tests/manager/viz_gen.c - a synthetic job directory for the viewer export
 * tests (chrome, paje, otf2, moca), written with the real job directory
 * writer, codec and message encoder, with known counts.
 *
 *   viz_gen DIR RANKS ITERS
 *
 * Rank r (one stream, META rank/pid/host/exe), per iteration, on thread 0:
 * MPI_Send to r+1 then MPI_Recv from r-1 (tag 7); MPI_Irecv + MPI_Isend +
 * MPI_Waitall (tag 9, the array carrying both requests); MPI_Irecv +
 * MPI_Isend + MPI_Wait twice (tag 11); MPI_Sendrecv (tag 13); MPI_Allreduce,
 * MPI_Barrier, MPI_Bcast; a write with a path full of characters JSON and
 * Paje must escape; a zero-duration lseek. Thread 1: a MEM_SAMPLE per
 * iteration. Thread 2: an fwrite with a write nested inside it, stored
 * inner first (the order a sensor records them). Plus MPI_Init/Finalize and
 * a rankless process (a forked helper) with reads. Events of a thread go in
 * batches of at most 50, so streams interleave in storage order.
 *
 * Prints the expected counts as KEY=VALUE lines on stdout. Exit 0, or 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "tests/strev.h"

#define BATCH 50

static struct proto_jobdir_w *w;
static struct proto_codec *codec;
static struct proto_msg *msg;

struct stream {
	uint64_t id;
	uint64_t seq;
	struct proto_event ev[BATCH + 16];
	size_t n;
};

static void die(const char *what, int rc)
{
	fprintf(stderr, "viz_gen: %s: %s\n", what, proto_strerror(rc));
	exit(1);
}

static void put_msg(void)
{
	uint8_t *buf;
	size_t len;
	int rc;

	if ((rc = proto_msg_frame_alloc(msg, &buf, &len)) != 0)
		die("frame", rc);
	if ((rc = proto_jobdir_append(w, buf, len)) != 0)
		die("append", rc);
	free(buf);
}

static void flush(struct stream *s)
{
	size_t cap = proto_codec_bound(s->n), len;
	uint8_t *data = malloc(cap);
	int rc;

	if (!s->n)
		return;
	if (!data || (rc = proto_codec_encode(codec, s->ev, s->n, data, cap, &len)) != 0)
		die("encode", data ? rc : PROTO_E_NOMEM);
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_BATCH;
	msg->u.batch.stream = s->id;
	msg->u.batch.seq = ++s->seq;
	msg->u.batch.nrecords = (uint32_t)s->n;
	msg->u.batch.data = data;
	msg->u.batch.datalen = (uint32_t)len;
	put_msg();
	free(data);
	s->n = 0;
}

static void meta(struct stream *s, int rank, int pid, const char *host)
{
	char v[32];
	int n = 0;

	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_META;
	msg->u.meta.id = s->id;
	if (rank >= 0) {
		snprintf(v, sizeof(v), "%d", rank);
		strcpy(msg->u.meta.kv[n].key, "rank");
		strcpy(msg->u.meta.kv[n++].value, v);
	}
	snprintf(v, sizeof(v), "%d", pid);
	strcpy(msg->u.meta.kv[n].key, "pid");
	strcpy(msg->u.meta.kv[n++].value, v);
	strcpy(msg->u.meta.kv[n].key, "host");
	strcpy(msg->u.meta.kv[n++].value, host);
	strcpy(msg->u.meta.kv[n].key, "exe");
	strcpy(msg->u.meta.kv[n++].value, "/usr/bin/viz \"demo\"");
	msg->u.meta.n = (uint32_t)n;
	put_msg();
}

/* counts by kind, printed at the end */
static uint64_t n_events, n_mem, n_send, n_recv, n_isend, n_irecv, n_isend_done,
	n_irecv_done, n_coll, n_links, n_procs, n_threads;

static struct proto_event *add(struct stream *s, unsigned type, uint32_t tid,
			       uint64_t t0, uint64_t t1)
{
	struct proto_event *e;

	if (s->n >= BATCH)
		flush(s);
	e = &s->ev[s->n++];
	memset(e, 0, sizeof(*e));
	e->type = (uint16_t)type;
	e->tid = tid;
	e->t_start = t0;
	e->t_end = t1;
	if (t0 == t1)
		e->flags = PROTO_EVF_INSTANT;
	if (type != PROTO_EV_STRING && type != PROTO_EV_ARRAY)
		n_events++;
	return e;
}

static void string(struct stream *s, uint32_t tid, int64_t id, const char *str)
{
	size_t len = strlen(str);

	if (s->n + len / PROTO_STRING_CHUNK + 1 >= BATCH)
		flush(s);
	s->n += tests_string_events(&s->ev[s->n], tid, id, str);
}

#define T0 1000000000000ull
#define STEP 100000ull

static void rank_stream(struct stream *s, int r, int n, int iters)
{
	int right = (r + 1) % n, left = (r + n - 1) % n;
	int64_t req = 0;
	struct proto_event *e;

	meta(s, r, 1000 + r, r < 2 ? "node-a" : "node-b");
	/* the path goes with the first batch of thread 0 */
	string(s, 0, 1, "/tmp/out \"quoted\" \\ back\ttab\x01 ctl \xff bad \xc3\xa9t\xc3\xa9.txt");
	e = add(s, PROTO_EV_MPI_INIT, 0, T0 + 10, T0 + 50);
	proto_ev_set_args(e, r, n, 0, 0, 0, 0);
	for (int i = 0; i < iters; i++) {
		uint64_t b = T0 + 1000 + (uint64_t)i * STEP;

		e = add(s, PROTO_EV_MPI_SEND, 0, b + 100, b + 300);
		proto_ev_set_args(e, right, 7, 0, 64, 0, 0);
		e = add(s, PROTO_EV_MPI_RECV, 0, b + 400, b + 900);
		proto_ev_set_args(e, left, 7, 0, 64, 0, 0);
		n_send++;
		n_recv++;
		n_links++;
		/* irecv + isend + waitall */
		int64_t rq = ++req, sq = ++req;
		e = add(s, PROTO_EV_MPI_IRECV, 0, b + 1000, b + 1100);
		proto_ev_set_args(e, left, 9, 0, 128, rq, 0);
		e = add(s, PROTO_EV_MPI_ISEND, 0, b + 1200, b + 1300);
		proto_ev_set_args(e, right, 9, 0, 128, sq, 0);
		e = add(s, PROTO_EV_MPI_WAITALL, 0, b + 1400, b + 2000);
		proto_ev_set_args(e, 2, 0, 0, 0, 0, 0);
		e->flags |= PROTO_EVF_HASARRAY;
		struct proto_event *a = add(s, PROTO_EV_ARRAY, 0, 0, 8);
		a->flags = 6;
		proto_ev_set_args(a, rq, left, 128, 1, sq, right);
		a = add(s, PROTO_EV_ARRAY, 0, 6, 8);
		a->flags = 2;
		proto_ev_set_args(a, 128, 0, 0, 0, 0, 0);
		n_irecv++;
		n_isend++;
		n_irecv_done++;
		n_isend_done++;
		n_links++;
		/* irecv + isend + wait + wait */
		rq = ++req;
		sq = ++req;
		e = add(s, PROTO_EV_MPI_IRECV, 0, b + 2100, b + 2200);
		proto_ev_set_args(e, left, 11, 0, 32, rq, 0);
		e = add(s, PROTO_EV_MPI_ISEND, 0, b + 2300, b + 2400);
		proto_ev_set_args(e, right, 11, 0, 32, sq, 0);
		e = add(s, PROTO_EV_MPI_WAIT, 0, b + 2500, b + 3000);
		proto_ev_set_args(e, sq, right, 11, 0, 32, 0);
		e = add(s, PROTO_EV_MPI_WAIT, 0, b + 3100, b + 3600);
		proto_ev_set_args(e, rq, left, 11, 0, 32, 1);
		n_irecv++;
		n_isend++;
		n_irecv_done++;
		n_isend_done++;
		n_links++;
		/* sendrecv: one send and one receive */
		e = add(s, PROTO_EV_MPI_SENDRECV, 0, b + 3700, b + 4500);
		proto_ev_set_args(e, right, 13, 0, 16, left, 16);
		n_send++;
		n_recv++;
		n_links++;
		e = add(s, PROTO_EV_MPI_ALLREDUCE, 0, b + 5000, b + 6000);
		proto_ev_set_args(e, 8, 0, 0, 0, 0, 0);
		e = add(s, PROTO_EV_MPI_BARRIER, 0, b + 6100, b + 6500);
		proto_ev_set_args(e, 0, 0, 0, 0, 0, 0);
		e = add(s, PROTO_EV_MPI_BCAST, 0, b + 6600, b + 7000);
		proto_ev_set_args(e, 1024, 0, 0, 0, 0, 0);
		n_coll += 3;
		e = add(s, PROTO_EV_WRITE, 0, b + 7100, b + 7300);
		proto_ev_set_args(e, 3, 10, 10, 1, 0, 0);
		e = add(s, PROTO_EV_LSEEK, 0, b + 7400, b + 7400);
		proto_ev_set_args(e, 3, 0, 0, 0, 1, 0);
		/* sampler thread */
		e = add(s, PROTO_EV_MEM_SAMPLE, 1, b + 500, b + 500);
		proto_ev_set_args(e, (1 << 20) + i * 4096, 3 + i, i % 2, 1 << 24, 0, 0);
		n_mem++;
		/* thread 2: fwrite [8000, 9000] holding write [8100, 8900],
		 * recorded inner first */
		e = add(s, PROTO_EV_WRITE, 2, b + 8100, b + 8900);
		proto_ev_set_args(e, 4, 100, 100, 0, 0, 0);
		e = add(s, PROTO_EV_FWRITE, 2, b + 8000, b + 9000);
		proto_ev_set_args(e, 4, 100, 100, 0, 0, 0);
	}
	e = add(s, PROTO_EV_MPI_FINALIZE, 0, T0 + 1000 + (uint64_t)iters * STEP,
		T0 + 1100 + (uint64_t)iters * STEP);
	proto_ev_set_args(e, r, n, 0, 0, 0, 0);
	n_threads += 3;
}

int main(int argc, char **argv)
{
	struct stream *s;
	struct stream helper = {.id = 99};
	int rc, n, iters;

	if (argc != 4 || (n = atoi(argv[2])) < 2 || (iters = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: viz_gen DIR RANKS(>=2) ITERS(>=1)\n");
		return 1;
	}
	if (!(w = proto_jobdir_create(argv[1], 0, 0, &rc)))
		die(argv[1], rc);
	codec = proto_codec_new(1);
	msg = calloc(1, sizeof(*msg));
	s = calloc((size_t)n, sizeof(*s));
	if (!codec || !msg || !s)
		die("memory", PROTO_E_NOMEM);
	for (int r = 0; r < n; r++) {
		s[r].id = 0x1000 + (uint64_t)r;
		rank_stream(&s[r], r, n, iters);
	}
	/* a rankless helper process: a few reads, interleaved with the ranks'
	 * batches in storage order */
	meta(&helper, -1, 4242, "node-a");
	for (int i = 0; i < 5; i++) {
		struct proto_event *e = add(&helper, PROTO_EV_READ, 0,
					    T0 + 2000 + (uint64_t)i * 300,
					    T0 + 2100 + (uint64_t)i * 300);
		proto_ev_set_args(e, 0, 10, 10, 0, 0, 0);
	}
	n_threads++;
	n_procs = (uint64_t)n + 1;
	flush(&helper);
	for (int r = 0; r < n; r++)
		flush(&s[r]);
	if ((rc = proto_jobdir_close(w)) != 0)
		die("close", rc);
	printf("events=%" PRIu64 "\nmem=%" PRIu64 "\nstates=%" PRIu64
	       "\nsend=%" PRIu64 "\nrecv=%" PRIu64 "\nisend=%" PRIu64
	       "\nirecv=%" PRIu64 "\nisend_done=%" PRIu64 "\nirecv_done=%" PRIu64
	       "\ncoll=%" PRIu64 "\nlinks=%" PRIu64 "\nprocs=%" PRIu64
	       "\nthreads=%" PRIu64 "\nmem_procs=%d\n",
	       n_events, n_mem, n_events - n_mem, n_send, n_recv, n_isend, n_irecv,
	       n_isend_done, n_irecv_done, n_coll, n_links, n_procs, n_threads, n);
	proto_codec_free(codec);
	free(msg);
	free(s);
	return 0;
}
