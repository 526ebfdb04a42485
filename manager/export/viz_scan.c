/*
 * manager/export/viz_scan.c - the first pass over a job that the viewer
 * exports share (processes, threads, hosts, counts, message channels) and
 * the points of each event fed to the external sort (export_viz.h).
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

		at_side(&p, start_side || instant, seq);
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

int mgr_viz_cmp_time(const struct viz_pt *x, const struct viz_pt *y)
{
	int c;

	if ((c = MGR_CMP(x->t, y->t)) || (c = MGR_CMP(x->loc, y->loc)) ||
	    (c = MGR_CMP(x->cls, y->cls)) || (c = MGR_CMP(x->nest, y->nest)) ||
	    (c = MGR_CMP(x->seq, y->seq)))
		return c;
	return MGR_CMP(x->sub, y->sub);
}

