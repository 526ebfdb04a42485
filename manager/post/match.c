/*
 * manager/post/match.c - the MPI message matcher (match.h).
 *
 * Each (channel, tag) is a lane with two first-in first-out lists: its
 * sends waiting (in send order) and its receives waiting (in receive
 * order; the lane of tag MGR_MATCH_ANY holds the receives of any tag). A
 * channel also lists all its sends waiting, in send order, for the
 * receives of any tag. Invariant: no receive waiting accepts a send
 * waiting (each would have taken the other on arrival); hence an arriving
 * receive takes the first send waiting that it accepts, and an arriving
 * send goes to the earliest of the receives waiting on its tag's lane and
 * on the any-tag lane, which is what the first-sends-then-receives order
 * gives.
 */
#include <stdlib.h>
#include <string.h>

#include "manager/post/grow.h"
#include "manager/post/map.h"
#include "manager/post/match.h"
#include "proto/error.h"

#define NIL UINT32_MAX

struct list {
	uint32_t head, tail;
};

struct node {			/* an end waiting */
	uint32_t lane;
	uint32_t link[2][2];	/* (previous, next) in its lane's list, and
				 * (a send) in its channel's; a free node:
				 * link[0][1] the next free one */
	uint64_t seq;		/* a receive: its number on its channel */
	uint64_t ord;		/* a send: its number on its lane */
};

struct lane {
	uint32_t chan;
	int64_t tag;
	uint64_t nsent;		/* sends seen */
	struct list snd, rcv;
};

struct chan {
	struct list snd;	/* every send waiting, in order */
	uint32_t any;		/* its any-tag lane, NIL: none yet */
	uint64_t nrecv;		/* receives seen */
};

struct mgr_match {
	size_t psize, max, waiting;
	mgr_match_fn fn;
	void *arg;
	struct mgr_map lanes, chans;
	struct lane *lane;
	struct chan *chan;
	size_t nlane, caplane, nchan, capchan;
	struct node *node;	/* pool, with the payloads beside it */
	unsigned char *pay;
	size_t nnode, capnode, cappay;
	uint32_t freed;		/* free nodes, linked by next */
};

struct mgr_match *mgr_match_new(size_t payload, size_t max, mgr_match_fn fn,
				void *arg)
{
	struct mgr_match *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->psize = payload ? payload : 1;
	m->max = max < NIL ? max : NIL - 1;
	m->fn = fn;
	m->arg = arg;
	m->freed = NIL;
	mgr_map_init(&m->lanes, MGR_MATCH_CHANNELS_MAX);
	mgr_map_init(&m->chans, MGR_MATCH_CHANNELS_MAX);
	return m;
}

void mgr_match_free(struct mgr_match *m)
{
	if (!m)
		return;
	mgr_map_clear(&m->lanes);
	mgr_map_clear(&m->chans);
	free(m->lane);
	free(m->chan);
	mgr_big_free(m->node);
	mgr_big_free(m->pay);
	free(m);
}

size_t mgr_match_waiting(const struct mgr_match *m)
{
	return m->waiting;
}

static uint64_t key_a(int64_t src, int64_t dst)
{
	return (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
}

/* The channel (src, dst, comm), made when new: its index, or < 0. */
static int64_t chan_of(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm)
{
	int64_t i = mgr_map_get(&m->chans, key_a(src, dst), (uint32_t)comm);
	int rc = 0;

	if (i >= 0)
		return i;
	if (mgr_grow((void **)&m->chan, &m->capchan, m->nchan + 1, sizeof(*m->chan)))
		return PROTO_E_NOMEM;
	if ((rc = mgr_map_put(&m->chans, key_a(src, dst), (uint32_t)comm, (uint32_t)m->nchan)))
		return rc;
	m->chan[m->nchan] = (struct chan){{NIL, NIL}, NIL, 0};
	return (int64_t)m->nchan++;
}

/* The lane of tag on channel ch, made when new: its index, or < 0. */
static int64_t lane_of(struct mgr_match *m, uint32_t ch, int64_t tag)
{
	int64_t i = mgr_map_get(&m->lanes, ch, (uint32_t)tag);
	int rc = 0;

	if (i >= 0)
		return i;
	if (mgr_grow((void **)&m->lane, &m->caplane, m->nlane + 1, sizeof(*m->lane)))
		return PROTO_E_NOMEM;
	if ((rc = mgr_map_put(&m->lanes, ch, (uint32_t)tag, (uint32_t)m->nlane)))
		return rc;
	m->lane[m->nlane] = (struct lane){ch, tag, 0, {NIL, NIL}, {NIL, NIL}};
	if (tag == MGR_MATCH_ANY)
		m->chan[ch].any = (uint32_t)m->nlane;
	return (int64_t)m->nlane++;
}

/* A node holding payload, or NIL (full, no memory: *rc). */
static uint32_t node_new(struct mgr_match *m, const void *payload, int *rc)
{
	uint32_t n = m->freed;

	if (m->waiting >= m->max) {
		*rc = PROTO_E_FULL;
		return NIL;
	}
	if (n != NIL) {
		m->freed = m->node[n].link[0][1];
	} else {
		if ((*rc = mgr_big_grow((void **)&m->node, &m->capnode, m->nnode + 1,
					sizeof(*m->node))) ||
		    (*rc = mgr_big_grow((void **)&m->pay, &m->cappay,
					(m->nnode + 1) * m->psize, 1)))
			return NIL;
		n = (uint32_t)m->nnode++;
	}
	memcpy(m->pay + (size_t)n * m->psize, payload, m->psize);
	m->waiting++;
	return n;
}

static void node_free(struct mgr_match *m, uint32_t n)
{
	m->node[n].link[0][1] = m->freed;
	m->freed = n;
	m->waiting--;
}

/* Append node n to list l: its lane's (c 0) or its channel's (c 1). */
static void push(struct mgr_match *m, struct list *l, uint32_t n, int c)
{
	m->node[n].link[c][0] = l->tail;
	m->node[n].link[c][1] = NIL;
	*(l->tail == NIL ? &l->head : &m->node[l->tail].link[c][1]) = n;
	l->tail = n;
}

static void unlink_node(struct mgr_match *m, struct list *l, uint32_t n, int c)
{
	uint32_t p = m->node[n].link[c][0], x = m->node[n].link[c][1];

	*(p == NIL ? &l->head : &m->node[p].link[c][1]) = x;
	*(x == NIL ? &l->tail : &m->node[x].link[c][0]) = p;
}

static int check(int64_t src, int64_t dst, int64_t comm, int64_t tag)
{
	if (src < 0 || src > UINT32_MAX || dst < 0 || dst > UINT32_MAX ||
	    comm < INT32_MIN || comm > INT32_MAX || tag < INT32_MIN || tag > INT32_MAX)
		return PROTO_E_FIELD;
	return 0;
}

/* The lane of (src, dst, comm, tag), made when new, and its channel in
 * *ch: its index, or < 0 (PROTO_E_*). */
static int64_t lane_for(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm,
			int64_t tag, int64_t *ch)
{
	int rc = check(src, dst, comm, tag);

	if (rc)
		return rc;
	if ((*ch = chan_of(m, src, dst, comm)) < 0)
		return *ch;
	return lane_of(m, (uint32_t)*ch, tag);
}

/* An end that found no other: it waits in lane ln (a send also in its
 * channel's list), numbered k. 0 or PROTO_E_*. */
static int wait(struct mgr_match *m, const void *payload, int64_t ln, int send, uint64_t k)
{
	int rc = 0;
	uint32_t n = node_new(m, payload, &rc);
	struct lane *l = &m->lane[ln];

	if (n == NIL)
		return rc;
	m->node[n].lane = (uint32_t)ln;
	m->node[n].ord = send ? k : 0;
	m->node[n].seq = send ? 0 : k;
	push(m, send ? &l->snd : &l->rcv, n, 0);
	if (send)
		push(m, &m->chan[l->chan].snd, n, 1);
	return 0;
}

int mgr_match_send(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm,
		   int64_t tag, const void *payload, uint64_t *ord)
{
	int64_t ch, ln = lane_for(m, src, dst, comm, tag, &ch);

	if (ln < 0)
		return (int)ln;
	struct lane *l = &m->lane[ln], *rl = l;
	uint64_t k = l->nsent++;
	uint32_t any = m->chan[ch].any, r = l->rcv.head;

	if (ord)
		*ord = k;
	/* the earlier of the first receives waiting for this tag and for any */
	if (any != NIL && any != (uint32_t)ln && m->lane[any].rcv.head != NIL &&
	    (r == NIL || m->node[m->lane[any].rcv.head].seq < m->node[r].seq)) {
		rl = &m->lane[any];
		r = rl->rcv.head;
	}
	if (r == NIL)
		return wait(m, payload, ln, 1, k);
	unlink_node(m, &rl->rcv, r, 0);
	m->fn(m->arg, payload, m->pay + (size_t)r * m->psize, tag, k);
	node_free(m, r);
	return 0;
}

int mgr_match_recv(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm,
		   int64_t tag, const void *payload)
{
	int64_t ch, ln = lane_for(m, src, dst, comm, tag, &ch);

	if (ln < 0)
		return (int)ln;
	struct chan *c = &m->chan[ch];
	uint64_t seq = c->nrecv++;
	/* the first send waiting it accepts */
	uint32_t s = tag == MGR_MATCH_ANY ? c->snd.head : m->lane[ln].snd.head;
	struct lane *sl;

	if (s == NIL)
		return wait(m, payload, ln, 0, seq);
	sl = &m->lane[m->node[s].lane];
	unlink_node(m, &sl->snd, s, 0);
	unlink_node(m, &c->snd, s, 1);
	m->fn(m->arg, m->pay + (size_t)s * m->psize, payload, sl->tag, m->node[s].ord);
	node_free(m, s);
	return 0;
}
