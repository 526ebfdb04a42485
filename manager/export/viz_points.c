/*
 * manager/export/viz_points.c - the points of each event that the viewer
 * exports sort (enter, leave, message end points and links) and their time
 * order (export_viz.h).
 */
#include <stdlib.h>
#include <string.h>

#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

static int is_start_side(int kind)
{
	return kind == VIZ_EP_SEND || kind == VIZ_EP_ISEND || kind == VIZ_EP_IRECV_POST;
}

/* Put p at its event's start or end for mgr_viz_cmp_time: at one instant
 * and location, ends (cls 0, the later-started inner event first) before
 * starts (cls 1, the longer outer event first), then read order (seq). */
static void at_side(struct viz_pt *p, int start, uint64_t seq)
{
	if (start) {
		p->t = p->start;
		p->cls = 1;
		p->nest = -p->end;
		p->seq = (int64_t)seq;
	} else {
		p->t = p->end;
		p->cls = 0;
		p->nest = -p->start;
		p->seq = -(int64_t)seq;
	}
}

/* An event's arguments, its communicator's id replaced by the job-wide
 * name (the exporters tell communicators apart by it). */
static void event_args(int64_t *a, const struct mgr_event *me)
{
	int ci = proto_ev_arg(me->ev->type, PROTO_F_comm);

	memcpy(a, me->ev->arg, sizeof(me->ev->arg));
	if (ci >= 0 && me->comm != INT64_MIN)
		a[ci] = me->comm;
}

/* The common part of an event's points. */
static void point_of(struct viz_pt *p, uint32_t loc, const struct mgr_event *me)
{
	memset(p, 0, sizeof(*p));
	p->loc = loc;
	p->type = me->ev->type;
	p->flags = me->ev->flags;
	p->start = me->start;
	p->end = me->end < me->start ? me->start : me->end;
}

/* An event's end points in order (1 + 2i, their link 2 + 2i), below its
 * leave (UINT16_MAX). */
#define EPS_MAX ((UINT16_MAX - 3) / 2)

void mgr_viz_link_point(struct viz_pt *p, uint32_t loc, uint64_t seq,
			const struct mgr_event *me, size_t i, const struct viz_ep *ep)
{
	point_of(p, loc, me);
	at_side(p, is_start_side(ep->kind) || me->end <= me->start, seq);
	p->sub = (uint16_t)(2 + 2 * (i < EPS_MAX ? i : EPS_MAX));
	p->kind = VIZ_PT_LINK;
}

int mgr_viz_add_event(struct viz_sort *s, uint32_t loc, uint64_t seq,
		      const struct mgr_event *me, const struct viz_ep *eps,
		      size_t neps, int with_eps, struct viz_match *links)
{
	const struct proto_event *ev = me->ev;
	int instant = me->end <= me->start;
	struct viz_pt p;
	int rc;

	point_of(&p, loc, me);
	if (ev->type == PROTO_EV_MEM_SAMPLE) {
		p.t = me->start;
		p.cls = 1;
		p.nest = -p.end;
		p.seq = (int64_t)seq;
		p.kind = VIZ_PT_SAMPLE;
		memcpy(p.a, ev->arg, sizeof(p.a));
		return mgr_viz_sort_add(s, &p);
	}
	/* enter side: outer events (later end) first; leave side: inner ones
	 * (later start) first. Inside one event: enter (sub 0), end points in
	 * order (1 + 2i, their link 2 + 2i), leave (UINT16_MAX); so the order
	 * is total and the sort's result does not depend on how it ran (nor
	 * on when a link was added: when its message was matched). */
	if (neps > EPS_MAX)
		neps = EPS_MAX;
	p.t = p.start;
	p.cls = 1;
	p.nest = -p.end;
	p.seq = (int64_t)seq;
	p.kind = VIZ_PT_ENTER;
	p.sub = 0;
	event_args(p.a, me);
	if ((rc = mgr_viz_sort_add(s, &p)) != 0)
		return rc;
	for (size_t i = 0; i < neps; i++) {
		const struct viz_ep *ep = &eps[i];

		at_side(&p, is_start_side(ep->kind) || instant, seq);
		p.sub = (uint16_t)(1 + 2 * i);
		if (with_eps) {
			p.kind = VIZ_PT_EP;
			p.a[0] = ep->kind;
			p.a[1] = ep->peer;
			p.a[2] = ep->comm;
			p.a[3] = ep->tag;
			p.a[4] = ep->bytes;
			p.a[5] = ep->req;
			if ((rc = mgr_viz_sort_add(s, &p)) != 0)
				return rc;
		}
		if (links) {
			struct viz_pt lp;

			mgr_viz_link_point(&lp, loc, seq, me, i, ep);
			mgr_viz_match_link(links, ep, &lp);
			if ((rc = mgr_viz_match_err(links)) != 0)
				return rc;
		}
	}
	at_side(&p, instant, seq);
	p.sub = UINT16_MAX;
	p.kind = VIZ_PT_LEAVE;
	event_args(p.a, me);
	return mgr_viz_sort_add(s, &p);
}

/* End points of the current event, collected for mgr_viz_add_event. */
struct eps {
	struct viz_ep *v;
	size_t n, cap;
	int full;
};

static void on_ep(void *arg, const struct viz_ep *ep)
{
	struct eps *e = arg;

	if (e->n == e->cap) {
		/* Waitall: at most PROTO_TRACE_ARRAY_MAX / 4 end points */
		size_t cap = e->cap ? e->cap * 2 : 16;
		struct viz_ep *nv = cap <= PROTO_TRACE_ARRAY_MAX ?
			realloc(e->v, cap * sizeof(*nv)) : NULL;

		if (!nv) {
			e->full = 1;
			return;
		}
		e->v = nv;
		e->cap = cap;
	}
	e->v[e->n++] = *ep;
}

/* A matched message's link point into the sort. */
static int link_to_sort(void *arg, const struct viz_pt *p)
{
	return mgr_viz_sort_add(arg, p);
}

int mgr_viz_fill_sort(const char *dir, struct viz_scan *s, struct viz_sort *so,
		      int with_eps, int with_links, const char *what,
		      struct mgr_export_stats *st)
{
	struct viz_progress pg;
	struct mgr_events *e;
	struct mgr_event me;
	struct eps eps = {0};
	uint64_t seq = 0;
	int rc;

	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
	mgr_viz_match_sink(s->match, link_to_sort, so);
	mgr_viz_progress_init(&pg, what, s->events);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		uint32_t t = mgr_viz_thread_of(s, &me);

		mgr_viz_progress_tick(&pg);
		st->events++;
		if (t == UINT32_MAX)
			continue;
		eps.n = 0;
		mgr_viz_match_event(s->match, s->threads[t].proc, &me, on_ep, &eps);
		rc = mgr_viz_add_event(so, t, ++seq, &me, eps.v, eps.n, with_eps,
				       with_links ? s->match : NULL);
		if (rc != 0)
			break;
	}
	mgr_viz_progress_end(&pg);
	free(eps.v);
	mgr_events_close(e);
	if (rc < 0)
		return mgr_fail(rc, "%s: %s while sorting events", dir, proto_strerror(rc));
	if ((rc = mgr_viz_sort_finish(so)) != 0)
		return mgr_fail(rc, "sorting events: %s", proto_strerror(rc));
	return 0;
}

int mgr_viz_cmp_time(const struct viz_pt *x, const struct viz_pt *y)
{
	int c;

	if ((c = MGR_CMP(x->t, y->t)) || (c = MGR_CMP(x->loc, y->loc)) ||
	    (c = MGR_CMP(x->cls, y->cls)) || (c = MGR_CMP(x->nest, y->nest)) ||
	    (c = MGR_CMP(x->seq, y->seq)))
		return c;
	return MGR_CMP(x->sub, y->sub);
}

