/*
 * manager/post/causality.c - message matching and the controlled logical clock.
 * See causality.h for the method. Memory: a few words per point-to-point
 * message and per MPI event, bounded by MGR_CAUSALITY_MAX messages, in big
 * arrays (grow.h) that spill to disk beyond the heap budget.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/post.h"
#include "manager/post/grow.h"
#include "manager/post/match.h"
#include "manager/post/mpi_ends.h"
#include "manager/post/reqtab.h"
#include "proto/error.h"
#include "proto/trace.h"

#define TAG_ANY (-1)
#define MAX_PASSES 64

struct jump {
	uint64_t t_j, t_p;	/* receive start (collective end); ramp start */
	uint64_t t_min;		/* earliest ramp start (a collective's own start) */
	int64_t d;
};

struct cstream {
	uint64_t id;
	const struct proto_stream *ps;
	int rank;
	uint64_t *ends;		/* end of each MPI event, in stream order */
	size_t nends, capends;
	struct jump *j;
	int64_t *prefix;	/* prefix[i] = sum of d of j[0..i) */
	size_t nj, capj, capprefix;
};

struct msg_end {
	uint32_t stream;	/* index in streams */
	int32_t peer;		/* the other end's world rank */
	int64_t comm, tag;
	uint64_t t0, t1;	/* send: t0 = start; receive: start, end */
	uint64_t order;		/* storage order */
	int64_t match;		/* index of the matching end, -1 */
};

/* A collective event: the stream's n-th on the communicator named name is
 * one instance with every member's n-th (manager/post/comms.h). */

struct coll_end {
	uint32_t stream;	/* index in streams */
	uint8_t kind;		/* MGR_CK_* (comms.h): who waits for whom */
	uint16_t type;		/* the event's type */
	int64_t bytes, rbytes;	/* its data: what it sends, what it receives */
	int64_t crank;		/* rank in the communicator, -1: unknown */
	int64_t root;		/* root's rank in it (rooted kinds), -1 */
	int64_t name, n;
	uint64_t t0, t1;
};

struct pfx {			/* a member of a scan, by rank */
	int64_t crank, in;
	size_t i;
};

struct mgr_causality {
	struct cstream *s;
	size_t ns, caps;
	struct msg_end *snd, *rcv;
	size_t nsnd, capsnd, nrcv, caprcv;
	struct mgr_reqtab req;		/* receives posted: tag and comm */
	struct mgr_causality_stats st;
	struct mgr_comms *comms;	/* communicators' job-wide names */
	struct coll_end *coll;		/* collectives, by instance after the pass */
	size_t ncoll, capcoll;
	struct pfx *pfx;		/* scratch of coll_check (prefix kinds) */
	size_t cappfx;
	const struct mgr_post *post;
	int error;
};

static uint32_t stream_index(struct mgr_causality *c,
			     const struct proto_stream *ps)
{
	/* streams are few; the last one used is the likely one */
	static __thread size_t last;

	if (last < c->ns && c->s[last].id == ps->id)
		return (uint32_t)last;
	for (size_t i = 0; i < c->ns; i++)
		if (c->s[i].id == ps->id)
			return (uint32_t)(last = i);
	if (mgr_grow((void **)&c->s, &c->caps, c->ns + 1, sizeof(*c->s))) {
		c->error = PROTO_E_NOMEM;
		return UINT32_MAX;
	}
	memset(&c->s[c->ns], 0, sizeof(c->s[0]));
	c->s[c->ns].id = ps->id;
	c->s[c->ns].ps = ps;
	last = c->ns;
	return (uint32_t)c->ns++;
}

static void add_end(struct mgr_causality *c, int send, uint32_t si,
		    int64_t peer, int64_t comm, int64_t tag, uint64_t t0,
		    uint64_t t1, uint64_t order)
{
	struct msg_end **arr = send ? &c->snd : &c->rcv;
	size_t *n = send ? &c->nsnd : &c->nrcv, *cap = send ? &c->capsnd : &c->caprcv;

	if (peer < 0)
		return;		/* MPI_PROC_NULL or unknown: no message */
	if (*n >= MGR_CAUSALITY_MAX) {
		c->error = PROTO_E_TOOBIG;
		return;
	}
	int rc = mgr_big_grow((void **)arr, cap, *n + 1, sizeof(**arr));
	if (rc) {
		c->error = rc;
		return;
	}
	struct msg_end *m = &(*arr)[(*n)++];
	m->stream = si;
	m->peer = (int32_t)peer;
	m->comm = comm;
	m->tag = tag;
	m->t0 = t0;
	m->t1 = t1;
	m->order = order;
	m->match = -1;
}

/* Number a collective on the communicator named name (local: the rank's
 * own id) and keep it for the repair unless it failed. */
static int add_coll(struct mgr_causality *c, uint32_t si, const struct proto_event *ev,
		    int64_t name, int64_t local, uint64_t t0, uint64_t t1)
{
	int rc = 0;
	int64_t n = mgr_comms_next_coll(c->comms, c->s[si].id, name, &rc);
	int kind = mgr_comms_coll_kind(ev->type), ri = proto_ev_arg(ev->type, PROTO_F_root);
	int bi = proto_ev_arg(ev->type, PROTO_F_bytes), rbi = proto_ev_arg(ev->type, PROTO_F_rbytes);

	if (rc || n < 0 || !kind || (ev->flags & PROTO_EVF_FAILED))
		return rc;
	if ((rc = mgr_big_grow((void **)&c->coll, &c->capcoll, c->ncoll + 1,
			       sizeof(*c->coll))))
		return rc;
	c->coll[c->ncoll++] = (struct coll_end){
		.stream = si, .kind = (uint8_t)kind, .type = (uint16_t)ev->type,
		.bytes = bi >= 0 ? ev->arg[bi] : -1, .rbytes = rbi >= 0 ? ev->arg[rbi] : -1,
		/* world: the stream's rank, known once the pass is over */
		.crank = name == 0 ? -1 : mgr_comms_rank(c->comms, c->s[si].id, local),
		.root = ri >= 0 ? ev->arg[ri] : -1,
		.name = name, .n = n, .t0 = t0, .t1 = t1};
	return 0;
}

/* A receive request posted (irecv, imrecv, a started recv_init): its tag
 * and communicator, for the completion that names only the request. */
static void recv_posted(struct mgr_causality *c, uint64_t stream, int64_t req,
			int64_t tag, int64_t comm)
{
	struct mgr_req q = {.tag = tag, .comm = comm};
	int rc = mgr_reqtab_put(&c->req, stream, req, &q);

	if (rc && !c->error)
		c->error = rc;
}

/* A receive request completed, with the actual peer and tag (a
 * completion's ARRAY without tags, MPI_Waitall's: posted 1, the tag the
 * receive was posted with): its end, if its posting was seen. */
static void recv_done(struct mgr_causality *c, uint32_t si, int64_t req,
		      int64_t peer, int64_t tag, int posted, uint64_t t0,
		      uint64_t t1, uint64_t order)
{
	struct mgr_req q;

	if (!mgr_reqtab_take(&c->req, c->s[si].id, req, &q))
		return;
	if (posted && tag < 0 && q.tag >= 0)
		tag = q.tag;
	add_end(c, 0, si, peer, q.comm, posted && tag < 0 ? TAG_ANY : tag, t0, t1, order);
}

/* One event's message ends (ends_of). */
struct ends_ctx {
	struct mgr_causality *c;
	uint32_t si;
	uint64_t t0, t1, order;
};

static int one_end(void *arg, const struct mgr_end *e)
{
	struct ends_ctx *x = arg;
	struct mgr_causality *c = x->c;
	/* channels are keyed by the communicator's job-wide name */
	int64_t comm = e->comm == MGR_END_NOTAG ? -1 :
		mgr_comms_name(c->comms, c->s[x->si].id, e->comm);

	switch (e->kind) {
	case MGR_END_SEND:
	case MGR_END_ISEND:
		add_end(c, 1, x->si, e->peer, comm, e->tag, x->t0, x->t1, x->order);
		break;
	case MGR_END_RECV:	/* a Sendrecv without its receive tag: any */
		add_end(c, 0, x->si, e->peer, comm, e->tag == MGR_END_NOTAG ? TAG_ANY : e->tag,
			x->t0, x->t1, x->order);
		break;
	case MGR_END_IRECV:
		recv_posted(c, c->s[x->si].id, e->req, e->tag, comm);
		break;
	case MGR_END_DONE:
		recv_done(c, x->si, e->req, e->peer, e->tag, e->listed, x->t0, x->t1, x->order);
		break;
	}
	return 0;
}

/* The message ends of te (stream index si): sends at their start,
 * receives at their end (mpi_ends.h). */
static void ends_of(struct mgr_causality *c, const struct proto_trace_event *te,
		    uint32_t si, uint64_t t0, uint64_t t1, uint64_t order)
{
	struct ends_ctx x = {c, si, t0, t1, order};

	(void)mgr_mpi_ends(te, one_end, &x);
}

static void on_event(struct mgr_causality *c, const struct proto_trace_event *te,
		     uint64_t order)
{
	const struct proto_event *ev = te->ev;
	const struct proto_ev_info *info = proto_ev_info(ev->type);

	if (!info || info->category != PROTO_CAT_MPI)
		return;
	uint32_t si = stream_index(c, te->stream);
	if (si == UINT32_MAX)
		return;
	struct cstream *s = &c->s[si];
	uint64_t t0 = mgr_post_global(c->post, s->id, ev->t_start);
	uint64_t t1 = mgr_post_global(c->post, s->id, ev->t_end);
	int rc = mgr_big_grow((void **)&s->ends, &s->capends, s->nends + 1,
			      sizeof(*s->ends));
	if (rc) {
		c->error = rc;
		return;
	}
	s->ends[s->nends++] = t1;
	if ((rc = mgr_comms_event(c->comms, s->id, ev, te->array, te->narray))) {
		c->error = rc;
		return;
	}
	/* channels are keyed by the communicator's job-wide name */
	int64_t comm = -1;
	int ci = proto_ev_arg(ev->type, PROTO_F_comm);
	if (ci >= 0)
		comm = mgr_comms_name(c->comms, s->id, ev->arg[ci]);
	if (proto_ev_collective(ev->type) && comm >= 0 &&
	    (rc = add_coll(c, si, ev, comm, ev->arg[ci], t0, t1))) {
		c->error = rc;
		return;
	}
	if (ev->flags & PROTO_EVF_FAILED)
		return;
	ends_of(c, te, si, t0, t1, order);
}

static int32_t rank_of(const struct mgr_causality *c, uint32_t si)
{
	return c->s[si].rank;
}

/* channel order: sender rank, receiver rank, communicator, then storage */
static const struct mgr_causality *sort_ctx;

static int cmp_send(const void *pa, const void *pb)
{
	const struct msg_end *a = pa, *b = pb;
	int32_t ra = rank_of(sort_ctx, a->stream), rb = rank_of(sort_ctx, b->stream);
	int c;

	if ((c = MGR_CMP(ra, rb)) || (c = MGR_CMP(a->peer, b->peer)) ||
	    (c = MGR_CMP(a->comm, b->comm)))
		return c;
	return MGR_CMP(a->order, b->order);
}

static int cmp_recv(const void *pa, const void *pb)
{
	const struct msg_end *a = pa, *b = pb;
	int32_t ra = rank_of(sort_ctx, a->stream), rb = rank_of(sort_ctx, b->stream);
	int c;

	/* receives are keyed (their peer = sender, their rank = receiver) */
	if ((c = MGR_CMP(a->peer, b->peer)) || (c = MGR_CMP(ra, rb)) ||
	    (c = MGR_CMP(a->comm, b->comm)))
		return c;
	return MGR_CMP(a->order, b->order);
}

/* The channel of send s against that of receive r. */
static int cmp_channel(const struct mgr_causality *c, const struct msg_end *s,
		       const struct msg_end *r)
{
	int k;

	if ((k = MGR_CMP(rank_of(c, s->stream), r->peer)) ||
	    (k = MGR_CMP(s->peer, rank_of(c, r->stream))))
		return k;
	return MGR_CMP(s->comm, r->comm);
}

/* A pair of the matcher: payloads are indexes in snd and rcv. */
static void paired(void *arg, const void *send, const void *recv, int64_t tag,
		   uint64_t ord)
{
	struct mgr_causality *c = arg;
	size_t p, q;

	(void)tag;
	(void)ord;
	memcpy(&p, send, sizeof(p));
	memcpy(&q, recv, sizeof(q));
	c->snd[p].match = (int64_t)q;
	c->rcv[q].match = (int64_t)p;
	c->st.matched++;
}

/* The ends into the one matcher (match.h), channel by channel in the sorted
 * arrays (a channel's sends before its receives), so that what waits in it
 * is one channel's sends and the unmatched ones. A receive of tag TAG_ANY
 * takes any tag. */
static void match(struct mgr_causality *c)
{
	struct mgr_match *m = mgr_match_new(sizeof(size_t), SIZE_MAX, paired, c);
	size_t i = 0, j = 0;

	if (!m) {
		c->error = PROTO_E_NOMEM;
		return;
	}
	sort_ctx = c;
	mgr_big_sort(c->snd, c->nsnd, sizeof(*c->snd), cmp_send);
	mgr_big_sort(c->rcv, c->nrcv, sizeof(*c->rcv), cmp_recv);
	while (i < c->nsnd || j < c->nrcv) {
		int k = i >= c->nsnd ? 1 : j >= c->nrcv ? -1 :
			cmp_channel(c, &c->snd[i], &c->rcv[j]);
		int rc;

		if (k <= 0) {
			const struct msg_end *s = &c->snd[i];

			rc = mgr_match_send(m, rank_of(c, s->stream), s->peer, s->comm, s->tag, &i, NULL);
			i++;
		} else {
			const struct msg_end *r = &c->rcv[j];

			rc = mgr_match_recv(m, r->peer, rank_of(c, r->stream), r->comm,
					    r->tag == TAG_ANY ? MGR_MATCH_ANY : r->tag, &j);
			j++;
		}
		if (rc == PROTO_E_NOMEM || rc == PROTO_E_FULL)
			c->error = rc;
	}
	mgr_match_free(m);
	c->st.unmatched_sends = c->nsnd - c->st.matched;
	c->st.unmatched_receives = c->nrcv - c->st.matched;
}

/* step shift of stream s at t: the jumps at or before t */
static int64_t step_shift(const struct cstream *s, uint64_t t)
{
	size_t k = mgr_upper_bound(s->j, s->nj, sizeof(*s->j),
				   offsetof(struct jump, t_j), t);

	return s->prefix ? s->prefix[k] : 0;
}

/* A jump of d at t; its ramp (backward pass) starts at tmin or later. */
static int add_jump(struct cstream *s, uint64_t t, int64_t d, uint64_t tmin)
{
	size_t k = s->nj;
	int rc;

	while (k > 0 && s->j[k - 1].t_j > t)
		k--;
	if (k > 0 && s->j[k - 1].t_j == t) {
		s->j[k - 1].d = mgr_sat_add(s->j[k - 1].d, d);
		if (tmin > s->j[k - 1].t_min)
			s->j[k - 1].t_min = tmin;
	} else {
		if ((rc = mgr_big_grow((void **)&s->j, &s->capj, s->nj + 1, sizeof(*s->j))))
			return rc;
		memmove(&s->j[k + 1], &s->j[k], (s->nj - k) * sizeof(*s->j));
		s->j[k].t_j = t;
		s->j[k].t_p = t;
		s->j[k].t_min = tmin;
		s->j[k].d = d;
		s->nj++;
	}
	if ((rc = mgr_big_grow((void **)&s->prefix, &s->capprefix, s->nj + 1,
			       sizeof(*s->prefix))))
		return rc;
	s->prefix[0] = 0;
	for (size_t i = 0; i < s->nj; i++)	/* saturated: damaged traces */
		s->prefix[i + 1] = mgr_sat_add(s->prefix[i], s->j[i].d);
	return 0;
}

static int64_t shift_at(const struct cstream *s, uint64_t t)
{
	size_t lo = mgr_upper_bound(s->j, s->nj, sizeof(*s->j),
				    offsetof(struct jump, t_j), t);
	int64_t v = s->prefix ? s->prefix[lo] : 0;
	if (lo < s->nj && t > s->j[lo].t_p) {
		const struct jump *jp = &s->j[lo];

		v += (int64_t)((double)jp->d * (double)(t - jp->t_p) /
			       (double)(jp->t_j - jp->t_p));
	}
	return v;
}

static uint64_t count_violations(const struct mgr_causality *c, int repaired,
				 int64_t lat)
{
	uint64_t v = 0;

	for (size_t q = 0; q < c->nrcv; q++) {
		const struct msg_end *r = &c->rcv[q];

		if (r->match < 0)
			continue;
		const struct msg_end *s = &c->snd[r->match];
		int64_t ts = (int64_t)s->t0, tr = (int64_t)r->t1;
		if (repaired) {
			ts += shift_at(&c->s[s->stream], s->t0);
			tr += shift_at(&c->s[r->stream], r->t1);
		}
		if (tr < ts + lat)
			v++;
	}
	return v;
}

/* instances together: by name, then number, then stream */
static int cmp_coll(const void *pa, const void *pb)
{
	const struct coll_end *a = pa, *b = pb;
	int c;

	if ((c = MGR_CMP(a->name, b->name)) || (c = MGR_CMP(a->n, b->n)))
		return c;
	return MGR_CMP(a->stream, b->stream);
}

/* A collective's entry and exit: raw (how 0), during the repair (1: the
 * step shifts; a collective's own jump sits at its end), repaired (2). */
static void coll_times(const struct mgr_causality *c, const struct coll_end *e,
		       int how, int64_t *in, int64_t *out)
{
	const struct cstream *s = &c->s[e->stream];

	*in = (int64_t)e->t0;
	*out = (int64_t)e->t1;
	if (how == 1) {
		*in += step_shift(s, e->t0);
		*out += step_shift(s, e->t1);
	} else if (how == 2) {
		*in += shift_at(s, e->t0);
		*out += shift_at(s, e->t1);
	}
}

/* Member e must leave lat after bound: count it when it does not, and
 * with the repair (how 1) stretch it by a jump at its end. */
static int coll_short(struct mgr_causality *c, const struct coll_end *e,
		      int64_t bound, int64_t lat, int how, uint64_t *count)
{
	int64_t in, out;

	coll_times(c, e, how, &in, &out);
	if (out >= bound + lat)
		return 0;
	(*count)++;
	return how == 1 ? add_jump(&c->s[e->stream], e->t1, bound + lat - out, e->t0) : 0;
}

static int cmp_pfx(const void *pa, const void *pb)
{
	const struct pfx *a = pa, *b = pb;

	return MGR_CMP(a->crank, b->crank);
}

void mgr_coll_role(unsigned type, int64_t bytes, int64_t rbytes, int is_root,
		   int *gives, int *takes)
{
	/* a size the event does not record (-1) counts as data */
	int b = bytes != 0, rb = rbytes != 0;

	switch (type) {
	case PROTO_EV_MPI_BARRIER:
		*gives = *takes = 1;
		return;
	case PROTO_EV_MPI_BCAST:
		*gives = is_root && b;
		*takes = !is_root && b;
		return;
	case PROTO_EV_MPI_SCATTER:
	case PROTO_EV_MPI_SCATTERV:
		*gives = is_root && b;
		*takes = !is_root && rb;
		return;
	case PROTO_EV_MPI_REDUCE:
		*gives = !is_root && b;
		*takes = is_root && b;
		return;
	case PROTO_EV_MPI_GATHER:
	case PROTO_EV_MPI_GATHERV:
		*gives = !is_root && b;
		*takes = is_root && rb;
		return;
	case PROTO_EV_MPI_ALLGATHER:
	case PROTO_EV_MPI_ALLGATHERV:
	case PROTO_EV_MPI_ALLTOALL:
	case PROTO_EV_MPI_ALLTOALLV:
		*gives = b;
		*takes = rb;
		return;
	default:		/* allreduce, reduce_scatter, scan, exscan */
		*gives = *takes = b;
	}
}

/* e's role in its instance (mgr_coll_role); the root known by the caller. */
static void role_of(const struct coll_end *e, int is_root, int *gives, int *takes)
{
	mgr_coll_role(e->type, e->bytes, e->rbytes, is_root, gives, takes);
}

/* For a scan or exscan: in c->pfx, each member's bound (the latest entry of
 * the members of lower rank that give data, INT64_MIN for none) in .in, by
 * member index in .i; *ok = 0 when the ranks are unknown or not distinct
 * (no bound). 0 or PROTO_E_NOMEM. */
static int prefix_bounds(struct mgr_causality *c, const struct coll_end *e, size_t n,
			 int how, int *ok)
{
	int64_t in, out, m = INT64_MIN;
	int gives, takes;

	*ok = 0;
	if (mgr_grow((void **)&c->pfx, &c->cappfx, n, sizeof(*c->pfx)))
		return PROTO_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		if (e[i].crank < 0)
			return 0;
		coll_times(c, &e[i], how, &in, &out);
		role_of(&e[i], 0, &gives, &takes);
		c->pfx[i] = (struct pfx){e[i].crank, gives ? in : INT64_MIN, i};
	}
	qsort(c->pfx, n, sizeof(*c->pfx), cmp_pfx);
	for (size_t k = 0; k < n; k++) {
		int64_t own = c->pfx[k].in;

		if (k > 0 && c->pfx[k].crank == c->pfx[k - 1].crank)
			return 0;
		role_of(&e[c->pfx[k].i], 0, &gives, &takes);
		c->pfx[k].in = takes ? m : INT64_MIN;
		if (own > m)
			m = own;
	}
	*ok = 1;
	return 0;
}

/* One instance e[0..n): each member that takes data (mgr_coll_role) must
 * exit lat after the entries of the members it waits for that give data
 * (MGR_CK_ALL: every other member; MGR_CK_FROM_ROOT: the root;
 * MGR_CK_TO_ROOT, the root only: every other member; MGR_CK_PREFIX: those
 * of lower rank). Counts the exits short of that in *count; when repairing
 * (how 1), stretches each by a jump at its end, ramped over the collective
 * itself: its entry stays, so no member's bound moves and the passes
 * converge. Rooted kinds need exactly one member whose rank is the root,
 * prefix kinds distinct known ranks. */
static int coll_check(struct mgr_causality *c, const struct coll_end *e, size_t n,
		      int64_t lat, int how, uint64_t *count)
{
	int64_t top = INT64_MIN, second = INT64_MIN, root_in = INT64_MIN, in, out;
	size_t itop = SIZE_MAX, iroot = SIZE_MAX, roots = 0;
	int pfx = 0, rc, gives, takes;

	if (e[0].kind == MGR_CK_PREFIX && (rc = prefix_bounds(c, e, n, how, &pfx)))
		return rc;

	for (size_t i = 0; i < n; i++) {
		if ((e[i].kind == MGR_CK_FROM_ROOT || e[i].kind == MGR_CK_TO_ROOT) &&
		    e[i].crank >= 0 && e[i].crank == e[i].root) {
			roots++;
			iroot = i;
		}
	}
	for (size_t i = 0; i < n; i++) {
		coll_times(c, &e[i], how, &in, &out);
		role_of(&e[i], roots == 1 && i == iroot, &gives, &takes);
		if (!gives)
			continue;
		if (roots == 1 && i == iroot)
			root_in = in;
		if (in > top) {
			second = top;
			top = in;
			itop = i;
		} else if (in > second) {
			second = in;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t bound = i == itop ? second : top;

		role_of(&e[i], roots == 1 && i == iroot, &gives, &takes);
		if (!takes || e[i].kind == MGR_CK_PREFIX)
			continue;
		if (e[i].kind == MGR_CK_FROM_ROOT)
			bound = roots == 1 && i != iroot ? root_in : INT64_MIN;
		else if (e[i].kind == MGR_CK_TO_ROOT && (roots != 1 || i != iroot))
			bound = INT64_MIN;
		if (bound == INT64_MIN)
			continue;
		if ((rc = coll_short(c, &e[i], bound, lat, how, count)))
			return rc;
	}
	for (size_t k = 0; pfx && k < n; k++) {
		if (c->pfx[k].in == INT64_MIN)
			continue;
		if ((rc = coll_short(c, &e[c->pfx[k].i], c->pfx[k].in, lat, how, count)))
			return rc;
	}
	return 0;
}

/* Every instance through coll_check; the number of short exits. */
static int coll_pass(struct mgr_causality *c, int64_t lat, int how, uint64_t *count)
{
	*count = 0;
	for (size_t i = 0, j; i < c->ncoll; i = j) {
		for (j = i + 1; j < c->ncoll && c->coll[j].name == c->coll[i].name &&
			     c->coll[j].n == c->coll[i].n; j++)
			;
		int rc = coll_check(c, &c->coll[i], j - i, lat, how, count);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return MGR_CMP(x, y);
}

/* A receive by its end: the forward pass takes them in time order, so a
 * shift reaches the sends after it within one pass (a chain of messages is
 * repaired in one pass, not one pass per link). */
struct rkey {
	uint64_t t1;
	size_t q;
};

static int cmp_rkey(const void *a, const void *b)
{
	const struct rkey *x = a, *y = b;
	int c = MGR_CMP(x->t1, y->t1);

	return c ? c : MGR_CMP(x->q, y->q);
}

static void ramps(struct mgr_causality *c, int on);

static int repair(struct mgr_causality *c, int64_t lat)
{
	int changed = 1, rc;
	struct rkey *ord = mgr_big_calloc(c->nrcv + 1, sizeof(*ord), &rc);

	if (!ord)
		return rc;
	for (size_t q = 0; q < c->nrcv; q++)
		ord[q] = (struct rkey){c->rcv[q].t1, q};
	mgr_big_sort(ord, c->nrcv, sizeof(*ord), cmp_rkey);
	while (changed && c->st.passes < MAX_PASSES) {
		changed = 0;
		c->st.passes++;
		for (size_t k = 0; k < c->nrcv; k++) {
			struct msg_end *r = &c->rcv[ord[k].q];

			if (r->match < 0)
				continue;
			struct msg_end *s = &c->snd[r->match];
			int64_t ts = (int64_t)s->t0 + step_shift(&c->s[s->stream], s->t0);
			int64_t tr = (int64_t)r->t1 + step_shift(&c->s[r->stream], r->t0);
			if (tr < ts + lat) {
				if ((rc = add_jump(&c->s[r->stream], r->t0, ts + lat - tr, 0))) {
					mgr_big_free(ord);
					return rc;
				}
				c->st.jumps++;
				changed = 1;
			}
		}
		uint64_t k;
		if ((rc = coll_pass(c, lat, 1, &k))) {
			mgr_big_free(ord);
			return rc;
		}
		if (k) {
			c->st.coll_moved += k;
			changed = 1;
		}
	}
	mgr_big_free(ord);
	ramps(c, 1);
	return 0;
}

/* The backward pass (on 1): each jump becomes a ramp from the end of the
 * previous MPI event of its process (never across an earlier jump); off
 * (0): steps again. Sets the largest shift and interval change. */
static void ramps(struct mgr_causality *c, int on)
{
	c->st.max_shift_ns = c->st.max_interval_change_ns = 0;
	for (size_t i = 0; i < c->ns; i++) {
		struct cstream *s = &c->s[i];

		mgr_big_sort(s->ends, s->nends, sizeof(*s->ends), cmp_u64);
		for (size_t k = 0; k < s->nj; k++) {
			uint64_t tj = s->j[k].t_j, tp = tj;
			size_t lo = 0, hi = s->nends;

			while (lo < hi) {	/* last end strictly before tj */
				size_t mid = (lo + hi) / 2;
				if (s->ends[mid] < tj)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo > 0)
				tp = s->ends[lo - 1];
			if (s->j[k].t_min)	/* a collective's: over itself */
				tp = s->j[k].t_min;
			if (k > 0 && tp < s->j[k - 1].t_j)
				tp = s->j[k - 1].t_j;
			s->j[k].t_p = on ? tp : tj;
			if (s->j[k].d > c->st.max_interval_change_ns)
				c->st.max_interval_change_ns = s->j[k].d;
		}
		if (s->nj && s->prefix[s->nj] > c->st.max_shift_ns)
			c->st.max_shift_ns = s->prefix[s->nj];
	}
}

/* Drop every jump: the repair is not kept. */
static void unrepair(struct mgr_causality *c)
{
	for (size_t i = 0; i < c->ns; i++)
		c->s[i].nj = 0;
	c->st.max_shift_ns = c->st.max_interval_change_ns = 0;
}

/* The violations left (point-to-point and collective exits) into the
 * stats. 0 or PROTO_E_NOMEM. */
static int count_after(struct mgr_causality *c)
{
	uint64_t k;
	int r = coll_pass(c, 0, 2, &k);

	c->st.coll_violations_after = k;
	c->st.violations_after = count_violations(c, 1, 0);
	return r;
}

/* A repair must never leave more violations than it found, and should
 * leave none: the ramps move the events before a jump (the sends of another
 * thread among them) later than the forward pass saw; where they leave a
 * violation the steps the forward pass checked do not, the steps are kept;
 * a repair that still leaves more than it found (the passes did not
 * converge) is not kept at all (reverted). */
static int worse(const struct mgr_causality *c)
{
	return c->st.violations_after > c->st.violations_before ||
	       c->st.coll_violations_after > c->st.coll_violations_before;
}

static int verify(struct mgr_causality *c)
{
	int r;

	if ((r = count_after(c)))
		return r;
	uint64_t left = c->st.violations_after + c->st.coll_violations_after;
	int bad = worse(c);
	if (!left)
		return 0;
	ramps(c, 0);
	if ((r = count_after(c)))
		return r;
	if ((!worse(c) || bad) &&
	    c->st.violations_after + c->st.coll_violations_after <= left) {
		c->st.steps = 1;
		bad = worse(c);
	} else {
		ramps(c, 1);
		if ((r = count_after(c)))
			return r;
	}
	if (!bad)
		return 0;
	unrepair(c);
	c->st.steps = 0;
	c->st.reverted = 1;
	return count_after(c);
}

struct mgr_causality *mgr_causality_build(const char *dir,
					  const struct mgr_post *post,
					  int64_t min_latency_ns, int *rc)
{
	struct mgr_causality *c = calloc(1, sizeof(*c));
	struct proto_trace *t;
	struct proto_trace_event te;
	uint64_t order = 0;
	int r;

	if (!c) {
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	c->post = post;
	/* within 0 .. 1000 s: the sums of the repair stay bounded */
	if (min_latency_ns < 0)
		min_latency_ns = 0;
	if (min_latency_ns > 1000000000000)
		min_latency_ns = 1000000000000;
	c->st.min_latency_ns = min_latency_ns;
	mgr_reqtab_init(&c->req, SIZE_MAX);
	if (!(c->comms = mgr_comms_new())) {
		*rc = PROTO_E_NOMEM;
		free(c);
		return NULL;
	}
	if (!(t = proto_trace_open(dir, rc))) {
		mgr_comms_free(c->comms);
		free(c);
		return NULL;
	}
	while ((r = proto_trace_next(t, &te)) == 1 && !c->error)
		on_event(c, &te, order++);
	for (size_t i = 0; i < c->ns; i++)	/* ranks are final now */
		c->s[i].rank = c->s[i].ps->rank;
	proto_trace_close(t);
	mgr_reqtab_clear(&c->req);	/* what never completed matches nothing */
	for (size_t i = 0; i < c->ns; i++)
		c->s[i].ps = NULL;
	if (r < 0 || c->error) {
		*rc = r < 0 ? r : c->error;
		mgr_causality_free(c);
		return NULL;
	}
	c->st.sends = c->nsnd;
	c->st.receives = c->nrcv;
	match(c);
	if (c->error) {
		*rc = c->error;
		mgr_causality_free(c);
		return NULL;
	}
	for (size_t i = 0; i < c->ncoll; i++)	/* world ranks are final too */
		if (c->coll[i].name == 0)
			c->coll[i].crank = c->s[c->coll[i].stream].rank;
	mgr_big_sort(c->coll, c->ncoll, sizeof(*c->coll), cmp_coll);
	for (size_t i = 0; i < c->ncoll; i++)
		if (i == 0 || c->coll[i - 1].n != c->coll[i].n ||
		    c->coll[i - 1].name != c->coll[i].name)
			c->st.collectives++;
	uint64_t k = 0, kl = 0;
	c->st.violations_before = count_violations(c, 0, 0);
	if ((r = coll_pass(c, 0, 0, &k)) == 0 && (r = coll_pass(c, min_latency_ns, 0, &kl)) == 0) {
		c->st.coll_violations_before = k;
		/* nothing short of the latency asked for: nothing moves */
		if (kl || count_violations(c, 0, min_latency_ns))
			r = repair(c, min_latency_ns);
	}
	if (r == 0)
		r = verify(c);
	if (r != 0) {
		*rc = r;
		mgr_causality_free(c);
		return NULL;
	}
	return c;
}

int64_t mgr_causality_shift(const struct mgr_causality *c, uint64_t stream,
			    uint64_t t)
{
	if (!c)
		return 0;
	for (size_t i = 0; i < c->ns; i++)
		if (c->s[i].id == stream)
			return c->s[i].nj ? shift_at(&c->s[i], t) : 0;
	return 0;
}

const struct mgr_causality_stats *mgr_causality_stats(const struct mgr_causality *c)
{
	return &c->st;
}

const struct mgr_comms *mgr_causality_comms(const struct mgr_causality *c)
{
	return c->comms;
}

void mgr_causality_foreach(const struct mgr_causality *c,
			   mgr_causality_match_fn fn, void *arg)
{
	for (size_t q = 0; c && q < c->nrcv; q++)
		if (c->rcv[q].match >= 0)
			fn(arg, c->snd[c->rcv[q].match].order, c->rcv[q].order);
}

void mgr_causality_free(struct mgr_causality *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ns; i++) {
		mgr_big_free(c->s[i].ends);
		mgr_big_free(c->s[i].j);
		mgr_big_free(c->s[i].prefix);
	}
	free(c->s);
	mgr_big_free(c->snd);
	mgr_big_free(c->rcv);
	mgr_reqtab_clear(&c->req);
	mgr_big_free(c->coll);
	free(c->pfx);
	mgr_comms_free(c->comms);
	free(c);
}
