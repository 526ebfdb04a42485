/*
 * manager/events.c - global-time event iteration for exporters.
 */
#include <stdlib.h>

#include "manager/events.h"
#include "manager/causality.h"
#include "manager/post.h"
#include "proto/error.h"

struct mgr_events {
	struct proto_trace *t;
	struct mgr_post *post;
	struct mgr_causality *clc;
	uint64_t origin;	/* global time of the earliest event */
};

struct mgr_events *mgr_events_open(const char *dir, int *rc)
{
	struct mgr_events *e = calloc(1, sizeof(*e));
	struct proto_trace_event te;
	struct proto_trace *first;
	int r;

	if (!e) {
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	/* pass 0: the clock tree; pass 1: the job start on the global clock */
	if (!(e->post = mgr_post_build(dir, rc))) {
		free(e);
		return NULL;
	}
	/* causality repair on the global clock (MISSION: zero violations) */
	const char *lat = getenv("TAPESTRY_MIN_LATENCY_NS");
	if (!(e->clc = mgr_causality_build(dir, e->post, lat ? atoll(lat) : 0, rc))) {
		mgr_post_free(e->post);
		free(e);
		return NULL;
	}
	if (!(first = proto_trace_open(dir, rc))) {
		mgr_causality_free(e->clc);
		mgr_post_free(e->post);
		free(e);
		return NULL;
	}
	e->origin = UINT64_MAX;
	while ((r = proto_trace_next(first, &te)) == 1) {
		uint64_t g = mgr_post_global(e->post, te.stream->id, te.ev->t_start);

		if (g < e->origin)
			e->origin = g;
	}
	proto_trace_close(first);
	if (e->origin == UINT64_MAX)
		e->origin = 0;
	if (r < 0 || !(e->t = proto_trace_open(dir, rc))) {
		if (r < 0)
			*rc = r;
		mgr_causality_free(e->clc);
		mgr_post_free(e->post);
		free(e);
		return NULL;
	}
	return e;
}

int mgr_events_next(struct mgr_events *e, struct mgr_event *out)
{
	struct proto_trace_event te;
	int rc = proto_trace_next(e->t, &te);

	if (rc != 1)
		return rc;
	out->ev = te.ev;
	out->stream = te.stream;
	out->array = te.array;
	out->narray = te.narray;
	uint64_t gs = mgr_post_global(e->post, te.stream->id, te.ev->t_start);
	uint64_t ge = mgr_post_global(e->post, te.stream->id, te.ev->t_end);
	out->start = (int64_t)(gs - e->origin) +
		     mgr_causality_shift(e->clc, te.stream->id, gs);
	out->end = (int64_t)(ge - e->origin) +
		   mgr_causality_shift(e->clc, te.stream->id, ge);
	int pi = proto_ev_arg(te.ev->type, PROTO_F_path);
	out->path = pi >= 0 && te.ev->arg[pi] > 0 ?
		proto_trace_string(e->t, te.stream->id, te.ev->tid, te.ev->arg[pi]) : NULL;
	return 1;
}

struct proto_trace *mgr_events_trace(struct mgr_events *e)
{
	return e->t;
}

const struct mgr_causality *mgr_events_causality(const struct mgr_events *e)
{
	return e->clc;
}

const struct mgr_post *mgr_events_post(const struct mgr_events *e)
{
	return e->post;
}

uint64_t mgr_events_origin(const struct mgr_events *e)
{
	return e->origin;
}

void mgr_events_close(struct mgr_events *e)
{
	if (!e)
		return;
	proto_trace_close(e->t);
	mgr_causality_free(e->clc);
	mgr_post_free(e->post);
	free(e);
}
