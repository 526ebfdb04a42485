/*
 * manager/post/events.c - global-time event iteration for exporters.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/grow.h"
#include "manager/post/perturb.h"
#include "manager/post/post.h"
#include "proto/error.h"

struct mgr_events {
	struct proto_trace *t;
	struct mgr_post *post;
	struct mgr_causality *clc;
	struct mgr_perturb *pert;	/* NULL: TAPESTRY_NO_CORRECTION */
	uint64_t origin;	/* global time of the earliest event */
	uint64_t *hidden;	/* launchers' stream ids, sorted */
	size_t nhidden;
};

int mgr_stream_launcher(const struct proto_stream *st)
{
	const char *v = proto_stream_meta(st, "launcher");

	return v && !strcmp(v, "1");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The launchers' streams of t (read to its end) into e->hidden, and the
 * origin from the others' first events when there are any. 0, or
 * PROTO_E_NOMEM. */
static int find_launchers(struct mgr_events *e, struct proto_trace *t)
{
	size_t n = proto_trace_nstreams(t);
	uint64_t origin = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);

		if (!mgr_stream_launcher(st)) {
			uint64_t g = mgr_post_global(e->post, st->id, st->t_first);

			if (st->events && g < origin)
				origin = g;
			continue;
		}
		if (!e->hidden && !(e->hidden = malloc(n * sizeof(*e->hidden))))
			return PROTO_E_NOMEM;
		e->hidden[e->nhidden++] = st->id;
	}
	if (e->nhidden) {
		qsort(e->hidden, e->nhidden, sizeof(*e->hidden), cmp_u64);
		if (origin != UINT64_MAX)
			e->origin = origin;
	}
	return 0;
}

/* global, causality-repaired time of a raw stamp: what perturb works on */
static int64_t repaired(void *arg, uint64_t stream, uint64_t raw)
{
	struct mgr_events *e = arg;
	uint64_t g = mgr_post_global(e->post, stream, raw);

	/* g is within [0, 2^60] and the shift saturated (grow.h): so is the
	 * sum, kept within what perturb adds up safely */
	return mgr_sat_add((int64_t)g, mgr_causality_shift(e->clc, stream, g));
}

static void fail_free(struct mgr_events *e)
{
	mgr_perturb_free(e->pert);
	mgr_causality_free(e->clc);
	mgr_post_free(e->post);
	free(e->hidden);
	free(e);
}

size_t mgr_events_launchers(const struct mgr_events *e)
{
	return e->nhidden;
}

int mgr_post_threads(void)
{
	const char *v = getenv("TAPESTRY_POST_THREADS");

	/* mgr_env_check refused anything but 1 or 2 */
	return v && !strcmp(v, "1") ? 1 : 2;
}

/* Pass 3 (the job start on the global clock, the launchers' streams):
 * reads only e->post, writes only e->origin, e->hidden and e->nhidden, so
 * it may run beside the causality and perturbation passes. */
struct origin_pass {
	struct mgr_events *e;
	const char *dir;
	int rc;
	int started;		/* in its own thread */
	pthread_t th;
};

static void origin_run(struct origin_pass *o)
{
	struct mgr_events *e = o->e;
	struct proto_trace_event te;
	struct proto_trace *first;
	int r;

	e->origin = UINT64_MAX;
	if (!(first = proto_trace_open(o->dir, &o->rc)))
		return;
	while ((r = proto_trace_next(first, &te)) == 1) {
		uint64_t g = mgr_post_global(e->post, te.stream->id, te.ev->t_start);

		if (g < e->origin)
			e->origin = g;
	}
	if (r >= 0)
		r = find_launchers(e, first);
	proto_trace_close(first);
	if (e->origin == UINT64_MAX)
		e->origin = 0;
	o->rc = r < 0 ? r : 0;
}

static void *origin_thread(void *arg)
{
	origin_run(arg);
	return NULL;
}

/* Start pass 3 in a thread when two are allowed (mgr_post_threads), else
 * leave it to origin_wait. */
static void origin_start(struct origin_pass *o)
{
	o->started = mgr_post_threads() > 1 &&
		     !pthread_create(&o->th, NULL, origin_thread, o);
}

/* Pass 3 done (run here if it was not started): 0 or its error. */
static int origin_wait(struct origin_pass *o)
{
	if (o->started)
		pthread_join(o->th, NULL);
	else
		origin_run(o);
	o->started = 0;
	return o->rc;
}

struct mgr_events *mgr_events_open(const char *dir, int *rc)
{
	struct mgr_events *e = calloc(1, sizeof(*e));
	struct origin_pass o = {.e = e, .dir = dir};
	int r;

	if (!e) {
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	/* pass 0: the clock tree */
	if (!(e->post = mgr_post_build(dir, rc))) {
		free(e);
		return NULL;
	}
	/* pass 3 needs only the clock tree: beside passes 1 and 2 */
	origin_start(&o);
	/* causality repair on the global clock (MISSION: zero violations) */
	const char *lat = getenv("TAPESTRY_MIN_LATENCY_NS");
	if (!(e->clc = mgr_causality_build(dir, e->post, lat ? atoll(lat) : 0, rc))) {
		origin_wait(&o);
		fail_free(e);
		return NULL;
	}
	const char *raw = getenv("TAPESTRY_NO_CORRECTION");
	if ((!raw || !*raw || !strcmp(raw, "0")) &&
	    !(e->pert = mgr_perturb_build(dir, e->clc, repaired, e, rc))) {
		origin_wait(&o);
		fail_free(e);
		return NULL;
	}
	if ((r = origin_wait(&o)) < 0 || !(e->t = proto_trace_open(dir, rc))) {
		if (r < 0)
			*rc = r;
		fail_free(e);
		return NULL;
	}
	return e;
}

int mgr_events_next(struct mgr_events *e, struct mgr_event *out)
{
	struct proto_trace_event te;
	int rc;

	do
		rc = proto_trace_next(e->t, &te);
	while (rc == 1 && e->nhidden &&
	       bsearch(&te.stream->id, e->hidden, e->nhidden,
		       sizeof(*e->hidden), cmp_u64));
	if (rc != 1)
		return rc;
	out->ev = te.ev;
	out->stream = te.stream;
	out->array = te.array;
	out->narray = te.narray;
	int64_t s = repaired(e, te.stream->id, te.ev->t_start);
	int64_t en = repaired(e, te.stream->id, te.ev->t_end);
	out->rstart = s - (int64_t)e->origin;
	out->rend = en - (int64_t)e->origin;
	if (e->pert)
		mgr_perturb_apply(e->pert, te.stream->id, te.ev, s, en, &s, &en);
	out->start = s - (int64_t)e->origin;
	out->end = en - (int64_t)e->origin;
	int pi = proto_ev_arg(te.ev->type, PROTO_F_path);
	out->path = pi >= 0 && te.ev->arg[pi] > 0 ?
		proto_trace_string(e->t, te.stream->id, te.ev->tid, te.ev->arg[pi]) : NULL;
	int ci = proto_ev_arg(te.ev->type, PROTO_F_comm);
	out->comm = ci < 0 ? INT64_MIN :
		    mgr_comms_name(mgr_causality_comms(e->clc), te.stream->id,
				   te.ev->arg[ci]);
	return 1;
}

const struct mgr_comms *mgr_events_comms(const struct mgr_events *e)
{
	return mgr_causality_comms(e->clc);
}

struct proto_trace *mgr_events_trace(struct mgr_events *e)
{
	return e->t;
}

const struct mgr_perturb *mgr_events_perturb(const struct mgr_events *e)
{
	return e->pert;
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
	fail_free(e);
}

int64_t mgr_ev_field(const struct proto_event *ev, enum proto_field f,
		     int64_t def)
{
	int i = proto_ev_arg(ev->type, f);

	return i < 0 ? def : ev->arg[i];
}
