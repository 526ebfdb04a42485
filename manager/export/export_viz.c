/*
 * manager/export/export_viz.c - the machinery the viewer exports share: a bounded
 * hash map, the first pass over a job (processes, threads, hosts, counts,
 * message channels), MPI message matching, the external sort that puts the
 * points of events in time order with bounded memory, and the progress line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/post/comms.h"
#include "manager/export/export_viz.h"
#include "manager/post/grow.h"
#include "manager/mgr.h"
#include "proto/error.h"
#include "proto/jobdir.h"

/* ---- bounded hash map ------------------------------------------------------- */

struct viz_slot {
	uint64_t a, b;
	uint32_t v;
	uint32_t used;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

void mgr_viz_map_init(struct viz_map *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max;
}

void mgr_viz_map_clear(struct viz_map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

static size_t map_find(const struct viz_map *m, uint64_t a, uint64_t b)
{
	size_t i = mix(a, b) & (m->cap - 1);

	while (m->slot[i].used && (m->slot[i].a != a || m->slot[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return i;
}

int64_t mgr_viz_map_get(const struct viz_map *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = map_find(m, a, b);
	return m->slot[i].used ? (int64_t)m->slot[i].v : -1;
}

static int map_grow(struct viz_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct viz_slot *old = m->slot, *ns = calloc(ncap, sizeof(*ns));
	size_t ocap = m->cap;

	if (!ns)
		return PROTO_E_NOMEM;
	m->slot = ns;
	m->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			m->slot[map_find(m, old[i].a, old[i].b)] = old[i];
	free(old);
	return 0;
}

int mgr_viz_map_put(struct viz_map *m, uint64_t a, uint64_t b, uint32_t v)
{
	size_t i;
	int rc;

	if ((m->n + 1) * 2 > m->cap && (rc = map_grow(m)) != 0)
		return rc;
	i = map_find(m, a, b);
	if (!m->slot[i].used) {
		if (m->n >= m->max)
			return PROTO_E_FULL;
		m->n++;
	}
	m->slot[i] = (struct viz_slot){a, b, v, 1};
	return 0;
}

void mgr_viz_map_del(struct viz_map *m, uint64_t a, uint64_t b)
{
	size_t i, j, k, mask = m->cap - 1;

	if (!m->cap)
		return;
	i = map_find(m, a, b);
	if (!m->slot[i].used)
		return;
	/* backward-shift deletion keeps every probe chain unbroken */
	for (j = (i + 1) & mask; m->slot[j].used; j = (j + 1) & mask) {
		k = mix(m->slot[j].a, m->slot[j].b) & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].used = 0;
	m->n--;
}

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

/* ---- pass 1 ------------------------------------------------------------------------ */

static void nop_ep(void *arg, const struct viz_ep *ep)
{
}

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int64_t proc_of(struct viz_scan *s, const struct proto_stream *st)
{
	int64_t i = mgr_viz_map_get(&s->procmap, st->id, 0);
	struct viz_proc *np;
	size_t cap;

	if (i >= 0)
		return i;
	/* capacity doubles; proto/trace bounds streams at 2^20 */
	if (s->nprocs == s->procs_cap) {
		cap = s->procs_cap ? s->procs_cap * 2 : 16;
		np = realloc(s->procs, cap * sizeof(*np));
		if (!np)
			return PROTO_E_NOMEM;
		s->procs = np;
		s->procs_cap = cap;
	}
	if (mgr_viz_map_put(&s->procmap, st->id, 0, (uint32_t)s->nprocs) != 0)
		return PROTO_E_FULL;
	np = &s->procs[s->nprocs];
	memset(np, 0, sizeof(*np));
	np->id = st->id;
	np->first = INT64_MAX;
	np->last = INT64_MIN;
	return (int64_t)s->nprocs++;
}

static int64_t thread_of(struct viz_scan *s, uint32_t proc, uint32_t tid)
{
	int64_t i = mgr_viz_map_get(&s->threadmap, proc, tid);
	struct viz_thread *nt;

	if (i >= 0)
		return i;
	if (s->nthreads >= VIZ_THREADS_MAX)
		return -1;
	if (s->nthreads == s->threads_cap) {
		size_t cap = s->threads_cap ? s->threads_cap * 2 : 16;

		nt = realloc(s->threads, cap * sizeof(*nt));
		if (!nt)
			return PROTO_E_NOMEM;
		s->threads = nt;
		s->threads_cap = cap;
	}
	if (mgr_viz_map_put(&s->threadmap, proc, tid, (uint32_t)s->nthreads) != 0)
		return -1;
	s->threads[s->nthreads] = (struct viz_thread){proc, tid, 0};
	if (!s->procs[proc].nthreads)
		s->procs[proc].first_thread = (uint32_t)s->nthreads;
	s->procs[proc].nthreads++;
	return (int64_t)s->nthreads++;
}

/* Communicators by job-wide name (those used, and the members of those
 * made by a traced constructor, with each member's own rank in it). */
static int note_comm(struct viz_scan *s, const struct mgr_events *e,
		     const struct mgr_event *me, uint32_t proc)
{
	int64_t c = me->comm;
	int ni = proto_ev_arg(me->ev->type, PROTO_F_newcomm);

	if (ni >= 0 && me->ev->arg[ni] >= 0) {
		int64_t name = mgr_comms_name(mgr_events_comms(e), me->stream->id,
					      me->ev->arg[ni]);
		int mi = proto_ev_arg(me->ev->type, PROTO_F_myrank);

		/* an intercommunicator's two groups each number from 0:
		 * its members are told apart by side */
		int inter = mgr_comms_inter(mgr_events_comms(e), name);
		int64_t side = inter ? mgr_comms_side(mgr_events_comms(e),
						      me->stream->id,
						      me->ev->arg[ni]) : -1;

		if (name > 0 && (!inter || side >= 0) &&
		    s->nmembers < VIZ_MEMBERS_MAX) {
			if (mgr_grow((void **)&s->members, &s->members_cap,
				     s->nmembers + 1, sizeof(*s->members)))
				return PROTO_E_NOMEM;
			s->members[s->nmembers++] = (struct viz_member){
				name, proc, mi >= 0 ? me->ev->arg[mi] : -1, side};
		}
	}
	if (c == INT64_MIN || c == 0 || c < INT32_MIN || c > INT32_MAX)
		return 0;	/* none, or MPI_COMM_WORLD */
	for (size_t i = 0; i < s->ncomms; i++)
		if (s->comm_ids[i] == c)
			return 0;
	if (s->ncomms < VIZ_COMMS_MAX)
		s->comm_ids[s->ncomms++] = c;
	return 0;
}

/* Host table, process labels, rank -> process. */
static int scan_finish(struct viz_scan *s, struct proto_trace *t)
{
	struct viz_map hostmap;
	int rc = 0;

	for (size_t i = 0; i < proto_trace_nstreams(t); i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);
		int64_t p = mgr_viz_map_get(&s->procmap, st->id, 0);

		if (p < 0)
			continue;
		s->procs[p].rank = st->rank >= 0 && st->rank < (1 << 22) ? st->rank : -1;
		s->procs[p].pid = st->pid;
		snprintf(s->procs[p].host, sizeof(s->procs[p].host), "%s",
			 st->host[0] ? st->host : "localhost");
		snprintf(s->procs[p].exe, sizeof(s->procs[p].exe), "%s", st->exe);
	}
	mgr_viz_map_init(&hostmap, VIZ_HOSTS_MAX);
	s->max_rank = -1;
	for (size_t p = 0; p < s->nprocs; p++) {
		struct viz_proc *pr = &s->procs[p];
		uint64_t h1 = fnv(pr->host, 0xcbf29ce484222325ull);
		int64_t h = mgr_viz_map_get(&hostmap, h1, fnv(pr->host, 7));

		if (h < 0) {
			if (s->nhosts >= VIZ_HOSTS_MAX) {
				h = 0;	/* all further hosts fold into the first */
			} else {
				if (s->nhosts == s->hosts_cap) {
					size_t cap = s->hosts_cap ? s->hosts_cap * 2 : 4;
					void *nh = realloc(s->hosts, cap * sizeof(*s->hosts));

					if (!nh) {
						rc = PROTO_E_NOMEM;
						goto done;
					}
					s->hosts = nh;
					s->hosts_cap = cap;
				}
				memcpy(s->hosts[s->nhosts], pr->host, sizeof(pr->host));
				h = (int64_t)s->nhosts++;
				if (mgr_viz_map_put(&hostmap, h1, fnv(pr->host, 7),
						    (uint32_t)h) != 0) {
					rc = PROTO_E_NOMEM;
					goto done;
				}
			}
		}
		pr->host_idx = (uint32_t)h;
		if (pr->rank > s->max_rank)
			s->max_rank = pr->rank;
	}
	if (s->max_rank >= 0) {
		s->rank_proc = malloc(((size_t)s->max_rank + 1) * sizeof(*s->rank_proc));
		if (!s->rank_proc) {
			rc = PROTO_E_NOMEM;
			goto done;
		}
		memset(s->rank_proc, 0xff, ((size_t)s->max_rank + 1) * sizeof(*s->rank_proc));
		/* a forked child inherits its parent's rank: the process that
		 * made MPI calls holds the rank */
		for (size_t p = 0; p < s->nprocs; p++) {
			int32_t r = s->procs[p].rank;

			if (r < 0)
				continue;
			if (s->rank_proc[r] == UINT32_MAX ||
			    (s->procs[p].has_mpi && !s->procs[s->rank_proc[r]].has_mpi))
				s->rank_proc[r] = (uint32_t)p;
		}
	}
	/* chrome pid: the rank when it names this process, else the OS pid
	 * when no other process has it, else a number no pid reaches */
	for (size_t p = 0; p < s->nprocs; p++) {
		struct viz_proc *pr = &s->procs[p];
		/* (the pairwise check is skipped for very many processes) */
		int unique = pr->pid > 0 && s->nprocs <= 4096;

		if (pr->rank >= 0 && s->rank_proc[pr->rank] == p) {
			pr->label = pr->rank;
			continue;
		}
		for (size_t q = 0; unique && q < s->nprocs; q++)
			if (q != p && (s->procs[q].pid == pr->pid ||
				       s->procs[q].rank == pr->pid))
				unique = 0;
		pr->label = unique ? pr->pid : 1000000000 + (int64_t)p;
	}
done:
	mgr_viz_map_clear(&hostmap);
	return rc;
}

static uint64_t index_total(const char *dir)
{
	struct proto_jobdir_index_entry ie;
	struct proto_jobdir_r *r;
	uint64_t n = 0;
	int rc;

	if (!(r = proto_jobdir_open(dir, &rc)))
		return 0;
	for (uint64_t i = 0; proto_jobdir_index_get(r, i, &ie) == 1; i++)
		n += ie.nrecords;
	proto_jobdir_close_r(r);
	return n;
}

int mgr_viz_scan(const char *dir, struct viz_scan *s)
{
	struct viz_progress pg;
	struct mgr_events *e;
	struct mgr_event me;
	int rc;

	memset(s, 0, sizeof(*s));
	mgr_viz_map_init(&s->procmap, 1u << 20);
	mgr_viz_map_init(&s->threadmap, VIZ_THREADS_MAX);
	if (!(s->match = mgr_viz_match_new())) {
		mgr_err("out of memory");
		return -1;
	}
	if (!(e = mgr_events_open(dir, &rc))) {
		mgr_err("%s: not a readable job directory (%s)", dir, proto_strerror(rc));
		return -1;
	}
	mgr_viz_progress_init(&pg, "reading", index_total(dir));
	while ((rc = mgr_events_next(e, &me)) == 1) {
		const struct proto_ev_info *info = proto_ev_info(me.ev->type);
		int64_t p = proc_of(s, me.stream), th;

		mgr_viz_progress_tick(&pg);
		if (p < 0) {
			rc = (int)p;
			break;
		}
		th = thread_of(s, (uint32_t)p, me.ev->tid);
		if (th == PROTO_E_NOMEM) {
			rc = PROTO_E_NOMEM;
			break;
		}
		s->events++;
		if (me.ev->type < 128)
			s->by_type[me.ev->type]++;
		if (th < 0) {
			s->dropped_threads++;
			continue;
		}
		s->threads[th].events++;
		struct viz_proc *pr = &s->procs[p];
		pr->events++;
		if (me.start < pr->first)
			pr->first = me.start;
		if (me.end > pr->last)
			pr->last = me.end;
		if (me.end > s->t_end)
			s->t_end = me.end;
		if (me.start > s->t_end)
			s->t_end = me.start;
		if (me.ev->type == PROTO_EV_MEM_SAMPLE) {
			pr->mem_samples++;
			s->mem_samples++;
		}
		if (info && info->category == PROTO_CAT_MPI) {
			pr->has_mpi = 1;
			if ((rc = note_comm(s, e, &me, (uint32_t)p)) != 0)
				break;
		}
		mgr_viz_match_event(s->match, s, (uint32_t)p, &me, nop_ep, NULL);
	}
	mgr_viz_progress_end(&pg);
	if (rc == 0) {
		struct proto_trace *t = mgr_events_trace(e);
		const struct proto_trace_stats *ts = proto_trace_stats(t);
		const struct proto_jobdir_report *jr = proto_trace_report(t);

		if ((jr && jr->skipped_bytes) || ts->bad_batches) {
			mgr_err("%s: damaged job directory (%" PRIu64 " corrupt batches, %"
				PRIu64 " bytes skipped%s%s): not exported", dir,
				ts->bad_batches, jr ? jr->skipped_bytes : 0,
				jr && jr->first_problem[0] ? ": " : "",
				jr ? jr->first_problem : "");
			mgr_events_close(e);
			return -1;
		}
		rc = scan_finish(s, t);
	}
	mgr_events_close(e);
	if (rc < 0) {
		mgr_err("%s: %s", dir, proto_strerror(rc));
		return -1;
	}
	mgr_viz_match_rewind(s->match);
	return 0;
}

void mgr_viz_scan_free(struct viz_scan *s)
{
	free(s->procs);
	free(s->threads);
	free(s->hosts);
	free(s->rank_proc);
	free(s->members);
	mgr_viz_map_clear(&s->procmap);
	mgr_viz_map_clear(&s->threadmap);
	mgr_viz_match_free(s->match);
	memset(s, 0, sizeof(*s));
}

uint32_t mgr_viz_thread_of(const struct viz_scan *s, const struct mgr_event *me)
{
	int64_t p = mgr_viz_map_get(&s->procmap, me->stream->id, 0), t;

	if (p < 0)
		return UINT32_MAX;
	t = mgr_viz_map_get(&s->threadmap, (uint64_t)p, me->ev->tid);
	return t < 0 ? UINT32_MAX : (uint32_t)t;
}

int mgr_viz_read_end(const char *dir, struct mgr_events *e, int rc)
{
	if (rc < 0)
		mgr_err("%s: read error: %s", dir, proto_strerror(rc));
	return rc < 0 ? -1 : 0;
}

const char *mgr_viz_ev_name(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	return info ? info->name : "unknown";
}

/* ---- points of an event ------------------------------------------------------------- */

static int is_start_side(int kind)
{
	return kind == VIZ_EP_SEND || kind == VIZ_EP_ISEND || kind == VIZ_EP_IRECV_POST;
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

int mgr_viz_add_event(struct viz_sort *s, uint32_t loc, uint64_t seq,
		      const struct mgr_event *me, const struct viz_ep *eps,
		      size_t neps, int with_eps, int with_links)
{
	const struct proto_event *ev = me->ev;
	int instant = me->end <= me->start;
	struct viz_pt p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.loc = loc;
	p.type = ev->type;
	p.flags = ev->flags;
	p.start = me->start;
	p.end = me->end < me->start ? me->start : me->end;
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
	 * is total and the sort's result does not depend on how it ran. */
	if (neps > (UINT16_MAX - 3) / 2)
		neps = (UINT16_MAX - 3) / 2;
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
		int start_side = is_start_side(ep->kind);

		if (start_side || instant) {
			p.t = p.start;
			p.cls = 1;
			p.nest = -p.end;
			p.seq = (int64_t)seq;
		} else {
			p.t = p.end;
			p.cls = 0;
			p.nest = -p.start;
			p.seq = -(int64_t)seq;
		}
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
		if (with_links && ep->linked) {
			p.sub++;
			p.kind = VIZ_PT_LINK;
			p.a[0] = ep->sproc;
			p.a[1] = ep->rproc;
			p.a[2] = ep->comm;
			p.a[3] = ep->tag;
			p.a[4] = (int64_t)ep->ord;
			p.a[5] = start_side;
			if ((rc = mgr_viz_sort_add(s, &p)) != 0)
				return rc;
		}
	}
	if (instant) {
		p.t = p.start;
		p.cls = 1;
		p.nest = -p.end;
		p.seq = (int64_t)seq;
	} else {
		p.t = p.end;
		p.cls = 0;
		p.nest = -p.start;
		p.seq = -(int64_t)seq;
	}
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

	if (!(e = mgr_events_open(dir, &rc))) {
		mgr_err("%s: not a readable job directory (%s)", dir, proto_strerror(rc));
		return -1;
	}
	mgr_viz_progress_init(&pg, what, s->events);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		uint32_t t = mgr_viz_thread_of(s, &me);

		mgr_viz_progress_tick(&pg);
		st->events++;
		if (t == UINT32_MAX)
			continue;
		eps.n = 0;
		mgr_viz_match_event(s->match, s, s->threads[t].proc, &me, on_ep, &eps);
		rc = mgr_viz_add_event(so, t, ++seq, &me, eps.v, eps.n, with_eps,
				       with_links);
		if (rc != 0)
			break;
	}
	mgr_viz_progress_end(&pg);
	free(eps.v);
	mgr_events_close(e);
	if (rc < 0) {
		mgr_err("%s: %s while sorting events", dir, proto_strerror(rc));
		return -1;
	}
	if ((rc = mgr_viz_sort_finish(so)) != 0) {
		mgr_err("sorting events: %s", proto_strerror(rc));
		return -1;
	}
	return 0;
}

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

int mgr_viz_cmp_time(const struct viz_pt *x, const struct viz_pt *y)
{
	CMP(x->t, y->t);
	CMP(x->loc, y->loc);
	CMP(x->cls, y->cls);
	CMP(x->nest, y->nest);
	CMP(x->seq, y->seq);
	CMP(x->sub, y->sub);
	return 0;
}

/* ---- external sort --------------------------------------------------------------------- */

struct run {
	FILE *f;
	int level;
};

struct src {
	FILE *f;			/* a spilled run, or */
	const struct viz_pt *mem;	/* the in-memory tail */
	size_t pos, n;
	struct viz_pt cur;
};

struct viz_sort {
	viz_pt_cmp cmp;
	struct viz_pt *buf;
	size_t n, cap;
	struct run *runs;
	size_t nruns;
	uint64_t spilled;
	/* reading */
	struct src *srcs;
	size_t *heap, nheap;
	int err;
};

static int qcmp(const void *a, const void *b, void *arg)
{
	return ((viz_pt_cmp)arg)(a, b);
}

struct viz_sort *mgr_viz_sort_new(size_t run_max, viz_pt_cmp cmp)
{
	struct viz_sort *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cmp = cmp;
	if (!run_max) {
		const char *env = getenv("TAPESTRY_VIZ_RUN_MAX");

		run_max = env && atol(env) > 0 ? (size_t)atol(env) : VIZ_RUN_MAX;
		if (run_max < 16)
			run_max = 16;
	}
	s->cap = run_max;
	s->buf = malloc(s->cap * sizeof(*s->buf));
	/* runs: at most VIZ_FANIN - 1 per level, 2^64 points need < 12 levels */
	s->runs = calloc(VIZ_FANIN * 12, sizeof(*s->runs));
	if (!s->buf || !s->runs) {
		mgr_viz_sort_free(s);
		return NULL;
	}
	return s;
}

static int src_next(struct src *r, struct viz_pt *out)
{
	if (r->mem) {
		if (r->pos >= r->n)
			return 0;
		*out = r->mem[r->pos++];
		return 1;
	}
	if (fread(out, sizeof(*out), 1, r->f) == 1)
		return 1;
	return ferror(r->f) ? PROTO_E_IO : 0;
}

static int heap_less(struct viz_sort *s, size_t a, size_t b)
{
	return s->cmp(&s->srcs[s->heap[a]].cur, &s->srcs[s->heap[b]].cur) < 0;
}

static void heap_down(struct viz_sort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->nheap && heap_less(s, l, m))
			m = l;
		if (r < s->nheap && heap_less(s, r, m))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* Start merging srcs[0..n): fill the heap. */
static int heap_start(struct viz_sort *s, size_t n)
{
	s->nheap = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = src_next(&s->srcs[i], &s->srcs[i].cur);

		if (rc < 0)
			return rc;
		if (rc == 1)
			s->heap[s->nheap++] = i;
	}
	for (size_t i = s->nheap; i-- > 0;)
		heap_down(s, i);
	return 0;
}

static int heap_pop(struct viz_sort *s, struct viz_pt *out)
{
	struct src *r;
	int rc;

	if (!s->nheap)
		return 0;
	r = &s->srcs[s->heap[0]];
	*out = r->cur;
	rc = src_next(r, &r->cur);
	if (rc < 0)
		return rc;
	if (rc == 0)
		s->heap[0] = s->heap[--s->nheap];
	heap_down(s, 0);
	return 1;
}

static int alloc_merge(struct viz_sort *s, size_t n)
{
	free(s->srcs);
	free(s->heap);
	s->srcs = calloc(n ? n : 1, sizeof(*s->srcs));
	s->heap = calloc(n ? n : 1, sizeof(*s->heap));
	return s->srcs && s->heap ? 0 : PROTO_E_NOMEM;
}

/* Merge the runs [from, nruns) into one new run of level `level`. */
static int merge_tail(struct viz_sort *s, size_t from, int level)
{
	size_t n = s->nruns - from;
	struct viz_pt p;
	FILE *out;
	int rc;

	if ((rc = alloc_merge(s, n)) != 0)
		return rc;
	if (!(out = tmpfile()))
		return PROTO_E_IO;
	for (size_t i = 0; i < n; i++)
		s->srcs[i].f = s->runs[from + i].f;
	if ((rc = heap_start(s, n)) != 0)
		goto fail;
	while ((rc = heap_pop(s, &p)) == 1)
		if (fwrite(&p, sizeof(p), 1, out) != 1) {
			rc = PROTO_E_IO;
			goto fail;
		}
	if (rc < 0 || fflush(out) != 0)
		goto fail;
	rewind(out);
	for (size_t i = from; i < s->nruns; i++)
		fclose(s->runs[i].f);
	s->nruns = from;
	s->runs[s->nruns++] = (struct run){out, level};
	return 0;
fail:
	fclose(out);
	return rc < 0 ? rc : PROTO_E_IO;
}

static int spill(struct viz_sort *s)
{
	FILE *f;
	int rc, level = 0;

	qsort_r(s->buf, s->n, sizeof(*s->buf), qcmp, (void *)s->cmp);
	if (!(f = tmpfile()))
		return PROTO_E_IO;
	if (fwrite(s->buf, sizeof(*s->buf), s->n, f) != s->n || fflush(f) != 0) {
		fclose(f);
		return PROTO_E_IO;
	}
	rewind(f);
	s->spilled += s->n;
	s->n = 0;
	s->runs[s->nruns++] = (struct run){f, 0};
	/* VIZ_FANIN runs of one level become one run of the next: at most
	 * VIZ_FANIN - 1 runs per level stay open */
	for (;;) {
		size_t k = 0;

		while (k < s->nruns && s->runs[s->nruns - 1 - k].level == level)
			k++;
		if (k < VIZ_FANIN)
			return 0;
		if ((rc = merge_tail(s, s->nruns - k, level + 1)) != 0)
			return rc;
		level++;
	}
}

int mgr_viz_sort_add(struct viz_sort *s, const struct viz_pt *p)
{
	int rc;

	if (s->n == s->cap && (rc = spill(s)) != 0)
		return rc;
	s->buf[s->n++] = *p;
	return 0;
}

int mgr_viz_sort_finish(struct viz_sort *s)
{
	int rc;

	qsort_r(s->buf, s->n, sizeof(*s->buf), qcmp, (void *)s->cmp);
	if ((rc = alloc_merge(s, s->nruns + 1)) != 0)
		return rc;
	for (size_t i = 0; i < s->nruns; i++)
		s->srcs[i].f = s->runs[i].f;
	s->srcs[s->nruns].mem = s->buf;
	s->srcs[s->nruns].n = s->n;
	return heap_start(s, s->nruns + 1);
}

int mgr_viz_sort_next(struct viz_sort *s, struct viz_pt *out)
{
	return heap_pop(s, out);
}

uint64_t mgr_viz_sort_runs(const struct viz_sort *s)
{
	return s->nruns;
}

void mgr_viz_sort_free(struct viz_sort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nruns; i++)
		fclose(s->runs[i].f);
	free(s->runs);
	free(s->buf);
	free(s->srcs);
	free(s->heap);
	free(s);
}

/* ---- progress ------------------------------------------------------------------------------ */

void mgr_viz_progress_init(struct viz_progress *p, const char *what,
			   uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->total = total;
	p->on = isatty(STDERR_FILENO);
	p->last = time(NULL);
}

static void progress_show(struct viz_progress *p)
{
	if (p->total)
		fprintf(stderr, "\rtapestry: %s: %" PRIu64 " events (%3u%%)", p->what,
			p->done, (unsigned)(p->done >= p->total ? 100 :
					    p->done * 100 / p->total));
	else
		fprintf(stderr, "\rtapestry: %s: %" PRIu64 " events", p->what, p->done);
}

void mgr_viz_progress_tick(struct viz_progress *p)
{
	time_t now;

	p->done++;
	if (!p->on || (p->done & 0xffff))
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	progress_show(p);
}

void mgr_viz_progress_end(struct viz_progress *p)
{
	if (!p->on || p->done < 0x10000)
		return;
	progress_show(p);
	fputc('\n', stderr);
}
