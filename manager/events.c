/*
 * manager/events.c - global-time event iteration for exporters.
 */
#include <stdlib.h>

#include "manager/events.h"
#include "proto/error.h"

struct mgr_events {
	struct proto_trace *t;
	uint64_t origin;
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
	/* pass 1: the job start */
	if (!(first = proto_trace_open(dir, rc))) {
		free(e);
		return NULL;
	}
	e->origin = UINT64_MAX;
	while ((r = proto_trace_next(first, &te)) == 1)
		if (te.ev->t_start < e->origin)
			e->origin = te.ev->t_start;
	proto_trace_close(first);
	if (r < 0) {
		*rc = r;
		free(e);
		return NULL;
	}
	if (e->origin == UINT64_MAX)
		e->origin = 0;
	if (!(e->t = proto_trace_open(dir, rc))) {
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
	out->start = (int64_t)(te.ev->t_start - e->origin);
	out->end = (int64_t)(te.ev->t_end - e->origin);
	int pi = proto_ev_arg(te.ev->type, PROTO_F_path);
	out->path = pi >= 0 && te.ev->arg[pi] > 0 ?
		proto_trace_string(e->t, te.stream->id, te.ev->tid, te.ev->arg[pi]) : NULL;
	return 1;
}

struct proto_trace *mgr_events_trace(struct mgr_events *e)
{
	return e->t;
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
	free(e);
}
