/*
 * tests/manager/jobgen.c - see jobgen.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "tests/manager/jobgen.h"

void jobgen_init(struct jobgen *g, const char *prefix)
{
	int rc;

	memset(g, 0, sizeof(*g));
	snprintf(g->base, sizeof(g->base), "/tmp/tapestry-test-%s.XXXXXX", prefix);
	cr_assert_not_null(mkdtemp(g->base));
	snprintf(g->dir, sizeof(g->dir), "%s/job", g->base);
	g->w = proto_jobdir_create(g->dir, 0, 0, &rc);
	cr_assert_not_null(g->w, "create: %s", proto_strerror(rc));
	g->m = calloc(1, sizeof(*g->m));
	g->codec = proto_codec_new(1);
	cr_assert(g->m && g->codec);
}

void jobgen_put(struct jobgen *g)
{
	uint8_t *buf;
	size_t len;

	cr_assert_eq(proto_msg_frame_alloc(g->m, &buf, &len), 0);
	cr_assert_eq(proto_jobdir_append(g->w, buf, len), 0);
	free(buf);
}

void jobgen_meta(struct jobgen *g, uint64_t stream, const char *key,
		 const char *value)
{
	memset(g->m, 0, sizeof(*g->m));
	g->m->type = PROTO_MSG_META;
	g->m->u.meta.id = stream;
	g->m->u.meta.n = 1;
	snprintf(g->m->u.meta.kv[0].key, sizeof(g->m->u.meta.kv[0].key), "%s", key);
	snprintf(g->m->u.meta.kv[0].value, sizeof(g->m->u.meta.kv[0].value), "%s",
		 value);
	jobgen_put(g);
}

void jobgen_rank(struct jobgen *g, uint64_t stream, int rank)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", rank);
	jobgen_meta(g, stream, "rank", v);
}

void jobgen_batch(struct jobgen *g, uint64_t stream, uint64_t seq,
		  const struct proto_event *ev, size_t n)
{
	size_t cap = proto_codec_bound(n), len;
	uint8_t *data = malloc(cap);

	cr_assert_not_null(data);
	cr_assert_eq(proto_codec_encode(g->codec, ev, n, data, cap, &len), 0);
	memset(g->m, 0, sizeof(*g->m));
	g->m->type = PROTO_MSG_BATCH;
	g->m->u.batch.stream = stream;
	g->m->u.batch.seq = seq;
	g->m->u.batch.nrecords = (uint32_t)n;
	g->m->u.batch.data = data;
	g->m->u.batch.datalen = (uint32_t)len;
	jobgen_put(g);
	free(data);
}

struct proto_event jobgen_ev(unsigned type, uint64_t t0, uint64_t t1,
			     int64_t a0, int64_t a1, int64_t a2, int64_t a3,
			     int64_t a4)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.t_start = t0;
	e.t_end = t1;
	e.arg[0] = a0;
	e.arg[1] = a1;
	e.arg[2] = a2;
	e.arg[3] = a3;
	e.arg[4] = a4;
	return e;
}

void jobgen_job(struct jobgen *g, uint64_t base, int nranks,
		struct proto_event *const ev[], const size_t n[])
{
	for (int r = 0; r < nranks; r++)
		jobgen_rank(g, base + (uint64_t)r, r);
	for (int r = 0; r < nranks; r++)
		jobgen_batch(g, base + (uint64_t)r, 1, ev[r], n[r]);
	jobgen_close(g);
}

void jobgen_close(struct jobgen *g)
{
	cr_assert_eq(proto_jobdir_close(g->w), 0);
	g->w = NULL;
}

void jobgen_free(struct jobgen *g)
{
	char cmd[128];

	if (g->w)
		proto_jobdir_close(g->w);
	free(g->m);
	proto_codec_free(g->codec);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g->base);
	cr_assert_eq(system(cmd), 0);
}
