/*
 * manager/export/export_viz.c - MPI message matching for the viewer exports:
 * pass 1 counts the messages of each channel (sender, receiver,
 * communicator, tag); pass 2 links the k-th send of a channel with its k-th
 * receive (MPI's non-overtaking rule). Nonblocking requests are kept from
 * their post to their completion. The rest of the machinery the viewer
 * exports share (export_viz.h): viz_map.c (bounded hash map), viz_scan.c
 * (the first pass over a job, the points of each event), viz_sort.c
 * (external sort), viz_progress.c (progress line).
 */
#include <stdlib.h>
#include <string.h>

#include "manager/post/comms.h"
#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

/* ---- MPI matching -------------------------------------------------------------- */

struct viz_count {
	uint64_t n;	/* pass 1: messages of the channel */
	uint64_t k;	/* pass 2: messages met so far */
};

struct viz_req {
	int kind;	/* VIZ_EP_ISEND or VIZ_EP_IRECV_POST */
	int64_t peer, comm, tag, bytes;
};

struct viz_match {
	struct viz_map send, recv;	/* channel -> counts */
	struct viz_count *sc, *rc;
	size_t nsc, nrc;
	struct viz_map reqmap;		/* (proc, req id) -> pool slot */
	struct viz_req *pool;
	uint32_t *freelist;
	size_t npool, nfree;
	int pass2;
	uint64_t overflow;
};

struct viz_match *mgr_viz_match_new(void)
{
	struct viz_match *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	mgr_viz_map_init(&m->send, VIZ_CHANNELS_MAX);
	mgr_viz_map_init(&m->recv, VIZ_CHANNELS_MAX);
	mgr_viz_map_init(&m->reqmap, VIZ_REQS_MAX);
	m->sc = calloc(VIZ_CHANNELS_MAX, sizeof(*m->sc));
	m->rc = calloc(VIZ_CHANNELS_MAX, sizeof(*m->rc));
	if (!m->sc || !m->rc) {
		mgr_viz_match_free(m);
		return NULL;
	}
	return m;
}

void mgr_viz_match_free(struct viz_match *m)
{
	if (!m)
		return;
	mgr_viz_map_clear(&m->send);
	mgr_viz_map_clear(&m->recv);
	mgr_viz_map_clear(&m->reqmap);
	free(m->sc);
	free(m->rc);
	free(m->pool);
	free(m->freelist);
	free(m);
}

void mgr_viz_match_rewind(struct viz_match *m)
{
	mgr_viz_map_clear(&m->reqmap);
	m->npool = m->nfree = 0;
	m->pass2 = 1;
}

uint64_t mgr_viz_match_overflow(const struct viz_match *m)
{
	return m->overflow;
}

/* Channel counter of (a, b) in map/counts, created in pass 1. */
static struct viz_count *chan(struct viz_match *m, int recv, uint64_t a,
			      uint64_t b)
{
	struct viz_map *map = recv ? &m->recv : &m->send;
	struct viz_count *c = recv ? m->rc : m->sc;
	size_t *n = recv ? &m->nrc : &m->nsc;
	int64_t i = mgr_viz_map_get(map, a, b);

	if (i >= 0)
		return &c[i];
	if (m->pass2 || *n >= VIZ_CHANNELS_MAX ||
	    mgr_viz_map_put(map, a, b, (uint32_t)*n) != 0) {
		if (!m->pass2)
			m->overflow++;
		return NULL;
	}
	return &c[(*n)++];
}

/* comm: the communicator's job-wide name (negative: unnamed) */
static uint64_t ckey(int64_t comm, int64_t tag)
{
	return (uint64_t)(uint32_t)comm << 32 | (uint32_t)tag;
}

/* Count (pass 1) or link (pass 2) one end point. */
static void ep_link(struct viz_match *m, const struct viz_scan *s,
		    uint32_t proc, struct viz_ep *ep)
{
	int is_send = ep->kind == VIZ_EP_SEND || ep->kind == VIZ_EP_ISEND;
	struct viz_count *own, *other;
	uint32_t oproc;
	int32_t myrank;

	ep->linked = 0;
	if (ep->peer < 0 || ep->tag < 0 || ep->comm < INT32_MIN || ep->comm > INT32_MAX)
		return;
	own = is_send ? chan(m, 0, (uint64_t)proc << 32 | (uint32_t)ep->peer,
			     ckey(ep->comm, ep->tag)) :
		chan(m, 1, (uint64_t)ep->peer << 32 | proc, ckey(ep->comm, ep->tag));
	if (!own)
		return;
	if (!m->pass2) {
		own->n++;
		return;
	}
	ep->ord = own->k++;
	myrank = s->procs[proc].rank;
	if (myrank < 0 || ep->peer > s->max_rank ||
	    (oproc = s->rank_proc[ep->peer]) == UINT32_MAX)
		return;
	if (is_send) {
		int64_t i = mgr_viz_map_get(&m->recv, (uint64_t)(uint32_t)myrank << 32 | oproc,
					    ckey(ep->comm, ep->tag));
		other = i >= 0 ? &m->rc[i] : NULL;
		ep->sproc = proc;
		ep->rproc = oproc;
	} else {
		int64_t i = mgr_viz_map_get(&m->send, (uint64_t)oproc << 32 | (uint32_t)myrank,
					    ckey(ep->comm, ep->tag));
		other = i >= 0 ? &m->sc[i] : NULL;
		ep->sproc = oproc;
		ep->rproc = proc;
	}
	ep->linked = other && ep->ord < other->n;
}

static void req_post(struct viz_match *m, uint32_t proc, const struct viz_ep *ep)
{
	uint32_t slot;

	if (ep->req == 0)
		return;
	mgr_viz_map_del(&m->reqmap, proc, (uint64_t)ep->req);
	if (m->nfree) {
		slot = m->freelist[--m->nfree];
	} else {
		if (m->npool >= VIZ_REQS_MAX) {
			m->overflow++;
			return;
		}
		if (!m->pool) {
			m->pool = malloc(VIZ_REQS_MAX * sizeof(*m->pool));
			m->freelist = malloc(VIZ_REQS_MAX * sizeof(*m->freelist));
			if (!m->pool || !m->freelist) {
				free(m->pool);
				free(m->freelist);
				m->pool = NULL;
				m->freelist = NULL;
				m->overflow++;
				return;
			}
		}
		slot = (uint32_t)m->npool++;
	}
	if (mgr_viz_map_put(&m->reqmap, proc, (uint64_t)ep->req, slot) != 0) {
		m->freelist[m->nfree++] = slot;
		m->overflow++;
		return;
	}
	m->pool[slot] = (struct viz_req){ep->kind, ep->peer, ep->comm, ep->tag,
					 ep->bytes};
}

/* A request completed: its end point (kind from the posting), or none. */
static int req_done(struct viz_match *m, uint32_t proc, int64_t req,
		    struct viz_ep *ep)
{
	int64_t slot = mgr_viz_map_get(&m->reqmap, proc, (uint64_t)req);
	struct viz_req *q;

	if (slot < 0 || req == 0)
		return 0;
	q = &m->pool[slot];
	mgr_viz_map_del(&m->reqmap, proc, (uint64_t)req);
	m->freelist[m->nfree++] = (uint32_t)slot;
	ep->req = req;
	ep->comm = q->comm;
	if (q->kind == VIZ_EP_ISEND) {
		ep->kind = VIZ_EP_ISEND_DONE;
		ep->peer = q->peer;
		ep->tag = q->tag;
		ep->bytes = q->bytes;
	} else {
		ep->kind = VIZ_EP_IRECV_DONE;
		/* the completion knows the actual source (and tag, unless
		 * Waitall, whose array has no tag): the caller sets them */
		if (ep->tag == INT64_MIN)
			ep->tag = q->tag;
		if (ep->peer == INT64_MIN)
			ep->peer = q->peer;
		if (ep->bytes == INT64_MIN)
			ep->bytes = q->bytes;
	}
	return 1;
}

static int64_t arg_of(const struct proto_event *ev, enum proto_field f)
{
	return mgr_ev_field(ev, f, -1);
}

void mgr_viz_match_event(struct viz_match *m, const struct viz_scan *s,
			 uint32_t proc, const struct mgr_event *me,
			 viz_ep_cb cb, void *arg)
{
	const struct proto_event *ev = me->ev;
	struct viz_ep ep;

	if (ev->flags & PROTO_EVF_FAILED)
		return;
	memset(&ep, 0, sizeof(ep));
	switch (ev->type) {
	case PROTO_EV_MPI_SEND:
	case PROTO_EV_MPI_ISEND:
	case PROTO_EV_MPI_IRECV:
	case PROTO_EV_MPI_RECV:
		ep.kind = ev->type == PROTO_EV_MPI_SEND ? VIZ_EP_SEND :
			ev->type == PROTO_EV_MPI_ISEND ? VIZ_EP_ISEND :
			ev->type == PROTO_EV_MPI_IRECV ? VIZ_EP_IRECV_POST : VIZ_EP_RECV;
		ep.peer = arg_of(ev, PROTO_F_peer);
		ep.tag = arg_of(ev, PROTO_F_tag);
		ep.comm = me->comm;
		ep.bytes = arg_of(ev, PROTO_F_bytes);
		ep.req = mgr_ev_field(ev, PROTO_F_req, 0);
		if (ep.kind == VIZ_EP_ISEND || ep.kind == VIZ_EP_IRECV_POST)
			req_post(m, proc, &ep);
		if (ep.kind != VIZ_EP_IRECV_POST)
			ep_link(m, s, proc, &ep);
		cb(arg, &ep);
		return;
	case PROTO_EV_MPI_SENDRECV:
		ep.kind = VIZ_EP_SEND;
		ep.peer = arg_of(ev, PROTO_F_peer);
		ep.tag = arg_of(ev, PROTO_F_tag);
		ep.comm = me->comm;
		ep.bytes = arg_of(ev, PROTO_F_bytes);
		ep_link(m, s, proc, &ep);
		cb(arg, &ep);
		/* the receive's actual tag rides in the ARRAY (rtag, arrived,
		 * probe_ns); traces from before it: the send tag stands for it
		 * (the usual shift pattern) */
		if (me->array && me->narray >= 1)
			ep.tag = me->array[0];
		ep.kind = VIZ_EP_RECV;
		ep.peer = arg_of(ev, PROTO_F_src);
		ep.bytes = arg_of(ev, PROTO_F_rbytes);
		ep_link(m, s, proc, &ep);
		cb(arg, &ep);
		return;
	case PROTO_EV_MPI_WAIT:
	case PROTO_EV_MPI_WAITANY:
	case PROTO_EV_MPI_TEST:
		if (ev->type == PROTO_EV_MPI_TEST && arg_of(ev, PROTO_F_result) != 1)
			return;
		ep.peer = arg_of(ev, PROTO_F_peer);
		ep.tag = arg_of(ev, PROTO_F_tag);
		ep.bytes = arg_of(ev, PROTO_F_bytes);
		if (!req_done(m, proc, arg_of(ev, PROTO_F_req), &ep))
			return;
		if (ep.kind == VIZ_EP_IRECV_DONE)
			ep_link(m, s, proc, &ep);
		cb(arg, &ep);
		return;
	case PROTO_EV_MPI_WAITALL:
		/* array: (req, peer, bytes, arrived) per request */
		for (size_t i = 0; me->array && i + 4 <= me->narray; i += 4) {
			memset(&ep, 0, sizeof(ep));
			ep.peer = me->array[i + 1];
			ep.bytes = me->array[i + 2];
			ep.tag = INT64_MIN;
			if (!req_done(m, proc, me->array[i], &ep))
				continue;
			if (ep.kind == VIZ_EP_IRECV_DONE)
				ep_link(m, s, proc, &ep);
			cb(arg, &ep);
		}
		return;
	default:
		return;
	}
}
