/*
 * manager/export/export_viz.c - MPI end points and message links (through the
 * manager's one matcher, manager/post/match.h) and the first pass over a
 * job (processes, threads, hosts, counts) that the
 * viewer exports share. The rest of their machinery (export_viz.h):
 * viz_map.c (bounded hash map), viz_points.c (the points of each event),
 * viz_sort.c (external sort), viz_progress.c (progress line).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/post/comms.h"
#include "manager/export/export.h"
#include "manager/export/export_viz.h"
#include "manager/post/grow.h"
#include "manager/post/match.h"
#include "manager/post/mpi_ends.h"
#include "manager/post/reqtab.h"
#include "manager/mgr.h"
#include "proto/error.h"
#include "proto/jobdir.h"

/* ---- MPI matching -------------------------------------------------------------- */

/* An end waiting in the matcher: its link point, and its process. */
struct viz_link {
	struct viz_pt p;
	uint32_t proc;
};

struct viz_match {
	struct mgr_match *match;	/* the manager's one (match.h) */
	const struct viz_scan *s;
	struct mgr_reqtab reqs;		/* (proc, req id): kind VIZ_EP_ISEND
					 * or VIZ_EP_IRECV_POST */
	viz_link_cb sink;
	void *sink_arg;
	int err;			/* the sink's first failure */
	uint64_t overflow;
	uint64_t links, backward;	/* messages linked; those whose
					 * receive completed before the send
					 * started (mgr_viz_match_backward) */
};

/* Both ends of a message found: their link points, named alike, to the
 * sink, the send's first. */
static void paired(void *arg, const void *send, const void *recv, int64_t tag,
		   uint64_t ord)
{
	struct viz_match *m = arg;
	struct viz_link e[2];

	memcpy(&e[0], send, sizeof(e[0]));
	memcpy(&e[1], recv, sizeof(e[1]));
	m->links++;
	m->backward += e[1].p.t < e[0].p.t;
	for (int i = 0; i < 2; i++) {
		struct viz_pt *p = &e[i].p;
		int rc;

		p->a[0] = e[0].proc;
		p->a[1] = e[1].proc;
		p->a[3] = tag;	/* a receive of any tag: the send's */
		p->a[4] = (int64_t)ord;
		p->a[5] = i == 0;
		if (m->sink && (rc = m->sink(m->sink_arg, p)) && !m->err)
			m->err = rc;
	}
}

struct viz_match *mgr_viz_match_new(const struct viz_scan *s)
{
	struct viz_match *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->s = s;
	mgr_reqtab_init(&m->reqs, VIZ_REQS_MAX);
	if (!(m->match = mgr_match_new(sizeof(struct viz_link), VIZ_WAITING_MAX, paired, m))) {
		free(m);
		return NULL;
	}
	return m;
}

void mgr_viz_match_free(struct viz_match *m)
{
	if (!m)
		return;
	mgr_reqtab_clear(&m->reqs);
	mgr_match_free(m->match);
	free(m);
}

void mgr_viz_match_sink(struct viz_match *m, viz_link_cb fn, void *arg)
{
	m->sink = fn;
	m->sink_arg = arg;
	m->err = 0;
}

int mgr_viz_match_err(const struct viz_match *m)
{
	return m->err;
}

uint64_t mgr_viz_match_overflow(const struct viz_match *m)
{
	return m->overflow;
}

uint64_t mgr_viz_match_backward(const struct viz_match *m, uint64_t *links)
{
	if (links)
		*links = m->links;
	return m->backward;
}

void mgr_viz_match_said(const struct viz_match *m, const char *dir)
{
	if (m->backward)
		mgr_err("%s: warning: %" PRIu64 " of %" PRIu64 " message arrows end "
			"before they start: their receive completed before their "
			"send began on the job's clock (the clocks were not "
			"corrected or the causality not repaired: see tapestry "
			"report)", dir, m->backward, m->links);
}

void mgr_viz_match_link(struct viz_match *m, const struct viz_ep *ep,
			const struct viz_pt *p)
{
	int send = ep->kind == VIZ_EP_SEND || ep->kind == VIZ_EP_ISEND;
	int64_t rank = m->s->procs[ep->proc].rank;
	struct viz_link l = {*p, ep->proc};
	int rc;

	if (!send && ep->kind != VIZ_EP_RECV && ep->kind != VIZ_EP_IRECV_DONE)
		return;
	if (rank < 0 || ep->peer < 0)
		return;		/* no message, or its ends unknown */
	l.p.kind = VIZ_PT_LINK;
	l.p.a[2] = ep->comm;
	/* a receive of tag MPI_ANY_TAG (-1), or none recorded, takes any */
	if (send)
		rc = mgr_match_send(m->match, rank, ep->peer, ep->comm, ep->tag, &l, NULL);
	else
		rc = mgr_match_recv(m->match, ep->peer, rank, ep->comm,
				    ep->tag < 0 || ep->anytag ? MGR_MATCH_ANY : ep->tag, &l);
	if (rc == PROTO_E_FULL || rc == PROTO_E_NOMEM)
		m->overflow++;
}

static void req_post(struct viz_match *m, uint32_t proc, const struct viz_ep *ep)
{
	struct mgr_req q = {ep->kind, ep->peer, ep->tag, ep->comm, ep->bytes, 0};

	if (ep->req != 0 && mgr_reqtab_put(&m->reqs, proc, ep->req, &q) != 0)
		m->overflow++;
}

/* A request completed: its end point (kind from the posting), or none. */
static int req_done(struct viz_match *m, uint32_t proc, int64_t req,
		    struct viz_ep *ep)
{
	struct mgr_req q;

	if (req == 0 || !mgr_reqtab_take(&m->reqs, proc, req, &q))
		return 0;
	ep->req = req;
	ep->comm = q.comm;
	if (q.kind == VIZ_EP_OTHER_DONE) {
		ep->kind = VIZ_EP_OTHER_DONE;
		ep->peer = -2;
		ep->tag = 0;
		if (ep->bytes == INT64_MIN || ep->bytes < 0)
			ep->bytes = q.bytes;
	} else if (q.kind == VIZ_EP_ISEND) {
		ep->kind = VIZ_EP_ISEND_DONE;
		ep->peer = q.peer;
		ep->tag = q.tag;
		ep->bytes = q.bytes;
	} else {
		ep->kind = VIZ_EP_IRECV_DONE;
		/* the completion knows the actual source (and tag, unless
		 * Waitall, whose array has no tag): the caller sets them */
		if (ep->tag == INT64_MIN)
			ep->tag = q.tag;
		if (ep->peer == INT64_MIN)
			ep->peer = q.peer;
		if (ep->bytes == INT64_MIN)
			ep->bytes = q.bytes;
	}
	return 1;
}

/* A request completed, with what its completion knew in ep: its end point
 * handed to cb; nothing for a request never posted. */
static void ep_done(struct viz_match *m, uint32_t proc, int64_t req,
		    struct viz_ep *ep, viz_ep_cb cb, void *arg)
{
	if (!req_done(m, proc, req, ep))
		return;
	ep->proc = proc;
	cb(arg, ep);
}

/* One event's end points (mgr_viz_match_event). */
struct ep_ctx {
	struct viz_match *m;
	uint32_t proc;
	const struct mgr_event *me;
	viz_ep_cb cb;
	void *arg;
};

static int ep_of(void *arg, const struct mgr_end *e)
{
	static const int kinds[] = {
		[MGR_END_SEND] = VIZ_EP_SEND, [MGR_END_RECV] = VIZ_EP_RECV,
		[MGR_END_ISEND] = VIZ_EP_ISEND, [MGR_END_IRECV] = VIZ_EP_IRECV_POST,
	};
	struct ep_ctx *x = arg;
	struct viz_ep ep = {0};

	switch (e->kind) {
	case MGR_END_SEND:
	case MGR_END_RECV:
	case MGR_END_ISEND:
	case MGR_END_IRECV:
		ep.kind = kinds[e->kind];
		ep.proc = x->proc;
		ep.peer = e->peer;
		/* a Sendrecv without its receive tag: the send tag stands for
		 * it in the records (the usual shift pattern); it matches
		 * any, as in causality */
		ep.tag = e->tag != MGR_END_NOTAG ? e->tag : mgr_ev_field(x->me->ev, PROTO_F_tag, -1);
		ep.anytag = e->tag == MGR_END_NOTAG;
		/* an MPI_Startall entry's: the world (mpi_ends.h) */
		ep.comm = x->me->comm != INT64_MIN ? x->me->comm : e->comm == 0 ? 0 : INT64_MIN;
		ep.bytes = e->bytes;
		ep.req = e->req;
		if (ep.kind == VIZ_EP_ISEND || ep.kind == VIZ_EP_IRECV_POST)
			req_post(x->m, x->proc, &ep);
		x->cb(x->arg, &ep);
		break;
	case MGR_END_DONE:	/* the tag a listed one lacks: the posted one */
		ep.peer = e->peer;
		ep.tag = e->listed && e->tag < 0 ? INT64_MIN : e->tag;
		ep.bytes = e->bytes;
		ep_done(x->m, x->proc, e->req, &ep, x->cb, x->arg);
		break;
	}
	return 0;
}

/* A request that is neither a send nor a receive, started by me (a
 * nonblocking collective, an MPI-IO or one-sided call, Comm_idup): kept so
 * that its completion gives a VIZ_EP_OTHER_DONE end point; none here. */
static void other_post(struct viz_match *m, uint32_t proc,
		       const struct mgr_event *me)
{
	const struct proto_event *ev = me->ev;
	struct viz_ep ep;

	if (!proto_ev_icoll(ev->type) && !proto_ev_mpiio(ev->type) &&
	    !proto_ev_rma(ev->type) && ev->type != PROTO_EV_MPI_COMM_IDUP)
		return;
	memset(&ep, 0, sizeof(ep));
	ep.kind = VIZ_EP_OTHER_DONE;
	ep.req = mgr_ev_field(ev, PROTO_F_req, 0);
	ep.comm = me->comm;
	ep.bytes = mgr_ev_field(ev, PROTO_F_bytes, 0);
	if (ep.req > 0)
		req_post(m, proc, &ep);
}

void mgr_viz_match_event(struct viz_match *m, uint32_t proc,
			 const struct mgr_event *me, viz_ep_cb cb, void *arg)
{
	struct proto_trace_event te = {me->ev, me->stream, me->array, me->narray};
	struct ep_ctx x = {m, proc, me, cb, arg};

	if (me->ev->flags & PROTO_EVF_FAILED)
		return;		/* failed calls have no end points */
	(void)mgr_mpi_ends(&te, ep_of, &x);
	other_post(m, proc, me);
}

/* ---- pass 1 ------------------------------------------------------------------------ */

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int64_t proc_of(struct viz_scan *s, const struct proto_stream *st)
{
	int64_t i = mgr_map_get(&s->procmap, st->id, 0);
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
	if (mgr_map_put(&s->procmap, st->id, 0, (uint32_t)s->nprocs) != 0)
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
	int64_t i = mgr_map_get(&s->threadmap, proc, tid);
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
	if (mgr_map_put(&s->threadmap, proc, tid, (uint32_t)s->nthreads) != 0)
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
	struct mgr_map hostmap;
	int rc = 0;

	for (size_t i = 0; i < proto_trace_nstreams(t); i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);
		int64_t p = mgr_map_get(&s->procmap, st->id, 0);

		if (p < 0)
			continue;
		s->procs[p].rank = st->rank >= 0 && st->rank < (1 << 22) ? st->rank : -1;
		s->procs[p].pid = st->pid;
		snprintf(s->procs[p].host, sizeof(s->procs[p].host), "%s",
			 st->host[0] ? st->host : "localhost");
		snprintf(s->procs[p].exe, sizeof(s->procs[p].exe), "%s", st->exe);
	}
	mgr_map_init(&hostmap, VIZ_HOSTS_MAX);
	s->max_rank = -1;
	for (size_t p = 0; p < s->nprocs; p++) {
		struct viz_proc *pr = &s->procs[p];
		uint64_t h1 = fnv(pr->host, 0xcbf29ce484222325ull);
		int64_t h = mgr_map_get(&hostmap, h1, fnv(pr->host, 7));

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
				if (mgr_map_put(&hostmap, h1, fnv(pr->host, 7),
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
	mgr_map_clear(&hostmap);
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

int mgr_viz_scan(const char *dir, const char *format, struct viz_scan *s)
{
	struct viz_progress pg;
	struct mgr_events *e;
	struct mgr_event me;
	int rc;

	memset(s, 0, sizeof(*s));
	mgr_map_init(&s->procmap, 1u << 20);
	mgr_map_init(&s->threadmap, VIZ_THREADS_MAX);
	if (!(s->match = mgr_viz_match_new(s)))
		return mgr_fail(PROTO_E_NOMEM, "out of memory");
	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
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
		if (me.ev->type < PROTO_EV__COUNT)
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
	}
	mgr_viz_progress_end(&pg);
	if (rc == 0) {
		struct proto_trace *t = mgr_events_trace(e);

		if (mgr_export_damage(t, dir, format)) {
			mgr_events_close(e);
			return -1;
		}
		rc = scan_finish(s, t);
	}
	mgr_events_close(e);
	if (rc < 0)
		return mgr_fail(rc, "%s: %s", dir, proto_strerror(rc));
	return 0;
}

void mgr_viz_scan_free(struct viz_scan *s)
{
	free(s->procs);
	free(s->threads);
	free(s->hosts);
	free(s->rank_proc);
	free(s->members);
	mgr_map_clear(&s->procmap);
	mgr_map_clear(&s->threadmap);
	mgr_viz_match_free(s->match);
	memset(s, 0, sizeof(*s));
}

uint32_t mgr_viz_thread_of(const struct viz_scan *s, const struct mgr_event *me)
{
	int64_t p = mgr_map_get(&s->procmap, me->stream->id, 0), t;

	if (p < 0)
		return UINT32_MAX;
	t = mgr_map_get(&s->threadmap, (uint64_t)p, me->ev->tid);
	return t < 0 ? UINT32_MAX : (uint32_t)t;
}

int mgr_viz_read_end(const char *dir, struct mgr_events *e, int rc)
{
	if (rc < 0)
		mgr_err("%s: read error: %s", dir, proto_strerror(rc));
	return rc < 0 ? -1 : 0;
}

void mgr_viz_proc_name(const struct viz_scan *s, size_t p, char *buf, size_t cap)
{
	const struct viz_proc *pr = &s->procs[p];
	const char *exe = strrchr(pr->exe, '/') ? strrchr(pr->exe, '/') + 1 : pr->exe;
	char nth[24] = "", who[32] = "";
	unsigned k = 1;

	for (size_t q = 0; q < p; q++)	/* processes: thousands at most */
		k += s->procs[q].pid == pr->pid && s->procs[q].host_idx == pr->host_idx;
	if (k > 1)
		snprintf(nth, sizeof(nth), " #%u", k);
	if (pr->rank >= 0)
		snprintf(who, sizeof(who), "rank %d ", pr->rank);
	snprintf(buf, cap, "%spid %" PRId64 "%s%s%s", who, pr->pid, *exe ? " " : "",
		 exe, nth);
}

const char *mgr_viz_ev_name(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	return info ? info->name : "unknown";
}
