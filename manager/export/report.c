/*
 * manager/export/report.c - `tapestry report`: what a job directory holds.
 *
 * Streams (one per traced process) with their host, pid, rank and losses;
 * events per type and per rank; what the reader had to skip; the collectors'
 * last statistics; the clock, perturbation and causality figures of the
 * post-processing. Gathered once into a struct report (report_gather), then
 * printed from it as text (default) or XML (--xml, for scripts).
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/mpi_ends.h"
#include "manager/post/perturb.h"
#include "manager/post/post.h"
#include "manager/post/profile.h"
#include "proto/error.h"
#include "proto/msg.h"

#define MAX_RANKS 4096		/* per-rank columns; others are summed as "other" */

struct tally {
	uint64_t total;
	uint64_t *by_rank;	/* MAX_RANKS + 1 (last: no rank or over max) */
	uint64_t bytes;		/* sum of the bytes argument of the calls that
				 * worked (see data_moved) */
	uint64_t failed;	/* calls that returned an error */
};

#define MAX_NODES 1024

/* The last STATS report of each collector, as stored by the root. */
struct node_stats {
	uint64_t id;
	char name[64], role[16];
	uint64_t events_in, drops, filtered, spilled, reconnects, rejected;
	uint64_t refused;	/* frames for another's stream, seq out of window */
	char refused_by[1024];	/* who sent them, newest first (truncated) */
	uint64_t why[4];	/* rejected: secret, key, version, other */
};

struct nodes {
	struct node_stats n[MAX_NODES];
	size_t count;
	struct proto_msg *msg;
};

static uint64_t kv_u64(const struct proto_meta *m, const char *key)
{
	const char *v = proto_meta_get(m, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static void kv_str(const struct proto_meta *m, const char *key, char *out,
		   size_t len)
{
	const char *v = proto_meta_get(m, key);

	if (v)
		snprintf(out, len, "%s", v);
}

/* How the MPI sensor measured this stream's computation volumes (META
 * compute_method, sensor-mpi.md): instruction counts do not depend on the
 * run's timing, CPU time does. NULL when the stream says nothing. */
static const char *volume_method(const struct proto_stream *s)
{
	const char *m = proto_stream_meta(s, "compute_method");

	if (!m)
		return NULL;
	return !strcmp(m, "1") ? "instructions" : !strcmp(m, "0") ? "cpu-time" : "unknown";
}

static void on_stats(void *arg, const struct proto_frame *f)
{
	struct nodes *ns = arg;
	struct node_stats *n = NULL;

	if (f->type != PROTO_MSG_STATS || !ns->msg ||
	    proto_msg_decode(f, ns->msg) != 0)
		return;
	const struct proto_meta *m = &ns->msg->u.meta;
	for (size_t i = 0; i < ns->count; i++)
		if (ns->n[i].id == m->id)
			n = &ns->n[i];
	if (!n) {
		if (ns->count == MAX_NODES)
			return;
		n = &ns->n[ns->count++];
		memset(n, 0, sizeof(*n));
		n->id = m->id;
	}
	kv_str(m, "name", n->name, sizeof(n->name));
	kv_str(m, "role", n->role, sizeof(n->role));
	n->events_in = kv_u64(m, "events_in");
	n->drops = kv_u64(m, "drops");
	n->filtered = kv_u64(m, "filtered");
	n->spilled = kv_u64(m, "spilled_bytes");
	n->reconnects = kv_u64(m, "reconnects");
	n->rejected = kv_u64(m, "rejected");
	{	/* "secret N, key N, version N, other N" (collector.c) */
		static const char *const k[4] = {"secret", "key", "version", "other"};
		char v[256] = "";

		kv_str(m, "rejected_why", v, sizeof(v));
		for (int i = 0; i < 4; i++) {
			const char *p = strstr(v, k[i]);

			n->why[i] = p ? strtoull(p + strlen(k[i]), NULL, 10) : 0;
		}
	}
	n->refused = kv_u64(m, "refused");
	kv_str(m, "refused_by", n->refused_by, sizeof(n->refused_by));
}

/* A stream that ended without BYE (its process killed): the time between
 * its last stored event and the moment its collector saw the connection
 * close ("collector.closed_ns", same host, same clock), and the events
 * that time held at the stream's mean rate - an estimate, said as one.
 * 0 when there is nothing to say. */
static uint64_t undelivered(const struct proto_stream *s, uint64_t *gap_ns)
{
	const char *v = proto_stream_meta(s, "collector.closed_ns");
	uint64_t closed = v ? strtoull(v, NULL, 10) : 0;

	*gap_ns = 0;
	if (s->ended || !closed || closed <= s->t_last || s->t_last <= s->t_first)
		return 0;
	*gap_ns = closed - s->t_last;
	return (uint64_t)((double)s->events * (double)*gap_ns /
			  (double)(s->t_last - s->t_first) + 0.5);
}

static const struct mgr_opts_doc report_doc = {
	.opt = {
		{"xml", 'x', MGR_OPT_SHORT, NULL, "machine-readable output"},
		{"quick", 'q', 0, NULL,
		 "without the post-processing (clock fits, causality\n"
		 "repair, perturbation correction): the counts, streams\n"
		 "and losses in one read of the job"},
		{"strict", 'S', 0, NULL,
		 "exit 1 when the job directory is damaged (corrupt or\n"
		 "missing batches, damaged segments, lost events, streams\n"
		 "cut short) or its index is, as `tapestry export --strict`\n"
		 "refuses it, or when a collector rejected connections"},
		{"no-profile", 'P', 0, NULL,
		 "without the profile (time per rank and call,\n"
		 "messages, files) at the top"},
	},
	.col = 16,
	.head = "usage: tapestry report [--xml] [--strict] [--quick] [--no-profile] DIR\n"
		"  The profile (where the time went: per rank and call, messages,\n"
		"  files), then events per type and rank, streams (traced processes)\n"
		"  with their losses, and what was skipped as damaged.\n",
	.tail = "  Exit status: 0, 1 (not a readable job directory; --strict and\n"
		"  damage), 2 (usage).\n",
};

/* The test of one communication model on the receives whose message came
 * late ([004] 6.3: mgr_perturb_model_check). */
#define CHECK_SHOWN 4
struct model_test {
	const char *what, *label;	/* XML name, text label */
	double lat, npb;		/* the model: latency, ns per byte */
	size_t n, rejected;		/* sizes tested (may exceed CHECK_SHOWN) */
	struct mgr_model_check c[CHECK_SHOWN];
};

/* Everything the report prints, gathered once. */
struct report {
	const char *dir;
	uint64_t launcher_events;	/* of launchers' streams (META launcher
					 * "1" when read): not in the tallies */
	struct proto_trace *t;
	struct mgr_events *me;			/* NULL: post-processing failed */
	int own_me;				/* opened here (closed with r) */
	int quick;				/* --quick: no post-processing */
	mgr_report_hook hook;			/* sees every event of me, or NULL */
	int no_profile;				/* --no-profile */
	struct mgr_profile *prof;		/* NULL: none (quick, failed) */
	/* nonblocking MPI-IO requests posted, not yet completed (stream,
	 * req, 0 read / 1 write, bytes asked), and the bytes their
	 * completions moved: a nonblocking access moves its bytes at its
	 * completion (what it asked: the completion records 0 today) */
	struct io_req { uint64_t stream; int64_t req; int rw; } *ioreq;
	size_t nioreq, capioreq;
	uint64_t io_late[2];
	void *hook_arg;
	const struct mgr_post *post;		/* these four: NULL with me */
	const struct mgr_perturb_stats *ps;
	const struct mgr_causality_stats *cs;
	const struct mgr_comms_stats *cms;
	/* the span of the program's own events, traced and corrected: over
	 * the MPI ranks' streams when there are any (span_ranks; a launcher's
	 * streams cover the whole job, uncorrected), else over every stream */
	int64_t span_raw, span_cor;
	int span_ranks;
	/* per rank, from the events written: first start and last end,
	 * traced (rs, re) and corrected (cs, ce); nrk ranks (0 .. nrk) */
	struct rank_span { int64_t rs, re, cs, ce; } *rk;
	size_t nrk;
	struct model_test tests[2];		/* fitted, then ping-pong */
	size_t ntests;
	struct tally tally[PROTO_EV__COUNT];
	int maxrank;				/* highest rank seen; -1: none */
	struct nodes *nodes;			/* NULL when out of memory */
	const struct proto_trace_stats *st;
	const struct proto_jobdir_report *jr;	/* NULL: nothing skipped */
	size_t ns;				/* streams */
	uint64_t lost, gaps;			/* over every stream */
	uint64_t gap_events;			/* in missing batches (index) */
	uint64_t undelivered;			/* estimated, no-BYE streams */
	uint64_t refused;			/* by every collector */
	uint64_t rejected;			/* connections, by every collector */
	uint64_t nospace;			/* events not stored: disk full */
	char rejected_why[128];			/* "job secret 1, ..." or "" */
	/* streams without their end (no BYE: the process was killed, as
	 * MPI_Abort's launcher kills the other ranks): they lost what they had
	 * not sent yet, counted as such rather than as no loss */
	uint64_t cut;
	/* DIR/index, checked (gather_index): "ok", "absent" or "damaged" */
	const char *index_state;
	uint64_t index_entries;			/* valid entries before a problem */
	char index_problem[128];		/* "" or what is wrong with it */
};

/* The spans of the traced and corrected events (struct report). */
static void gather_span(struct report *r)
{
	struct mgr_event ev;
	int64_t r0[2] = {INT64_MAX, INT64_MAX}, r1[2] = {INT64_MIN, INT64_MIN};
	int64_t c0[2] = {INT64_MAX, INT64_MAX}, c1[2] = {INT64_MIN, INT64_MIN};

	int rc;

	while ((rc = mgr_events_next(r->me, &ev)) == 1) {
		const struct proto_ev_info *info = proto_ev_info(ev.ev->type);

		if (r->hook)
			r->hook(r->hook_arg, &ev);
		if (r->prof && mgr_profile_add(r->prof, &ev) < 0) {
			mgr_profile_free(r->prof);	/* out of memory: said below */
			r->prof = NULL;
			mgr_err("%s: the profile is left out (out of memory)", r->dir);
		}
		if (!info || info->category == PROTO_CAT_TRACER)
			continue;
		int rank = ev.stream->rank;
		if (rank >= 0 && rank < (1 << 20)) {
			if ((size_t)rank >= r->nrk) {
				size_t n = (size_t)rank + 1;
				struct rank_span *v = realloc(r->rk, n * sizeof(*v));

				if (v) {
					for (size_t q = r->nrk; q < n; q++)
						v[q] = (struct rank_span){INT64_MAX, INT64_MIN,
									  INT64_MAX, INT64_MIN};
					r->rk = v;
					r->nrk = n;
				}
			}
			if ((size_t)rank < r->nrk) {
				struct rank_span *q = &r->rk[rank];

				if (ev.rstart < q->rs) q->rs = ev.rstart;
				if (ev.rend > q->re) q->re = ev.rend;
				if (ev.start < q->cs) q->cs = ev.start;
				if (ev.end > q->ce) q->ce = ev.end;
			}
		}
		for (int k = 0; k < 2; k++) {
			if (k == 1 && ev.stream->rank < 0)
				continue;
			if (ev.rstart < r0[k]) r0[k] = ev.rstart;
			if (ev.rend > r1[k]) r1[k] = ev.rend;
			if (ev.start < c0[k]) c0[k] = ev.start;
			if (ev.end > c1[k]) c1[k] = ev.end;
		}
	}
	if (r->hook && rc == 0)
		r->hook(r->hook_arg, NULL);	/* the clean end */
	/* while the trace is open: the profile reads its streams' ranks */
	if (r->prof)
		mgr_profile_hidden(r->prof, mgr_events_launchers(r->me));
	if (r->prof && (rc < 0 || mgr_profile_finish(r->prof) < 0)) {
		mgr_profile_free(r->prof);
		r->prof = NULL;
	}
	int k = r1[1] > r0[1] ? 1 : 0;
	r->span_ranks = k;
	if (r1[k] > r0[k]) {
		r->span_raw = r1[k] - r0[k];
		r->span_cor = c1[k] - c0[k];
	}
}

static void gather_test(struct report *r, const struct mgr_perturb *pert,
			const char *what, const char *label, double lat, double npb)
{
	struct model_test *m = &r->tests[r->ntests++];

	m->what = what;
	m->label = label;
	m->lat = lat;
	m->npb = npb;
	m->n = mgr_perturb_model_check(pert, lat, npb, m->c, CHECK_SHOWN, &m->rejected);
}

/* Both models' tests: the one fitted on the trace, and the launch's
 * ping-pong figures when meta.xml has them. */
static void gather_tests(struct report *r, const struct mgr_perturb *pert)
{
	const char *l = proto_trace_meta(r->t, "net_latency_ns");
	const char *b = proto_trace_meta(r->t, "net_bandwidth_Bps");
	double lat = l ? atof(l) : 0, bw = b ? atof(b) : 0;

	if (!r->ps->model_points)
		return;
	gather_test(r, pert, "fitted", "fitted on the trace", r->ps->model_latency_ns,
		    r->ps->model_ns_per_byte);
	if (lat > 0 && bw > 0)
		gather_test(r, pert, "pingpong", "the ping-pong measured before the program", lat, 1e9 / bw);
}

/* The post-processing's figures; a failure is said and the rest reported. */
static void gather_post(struct report *r)
{
	int prc;

	if (!r->me && !(r->me = mgr_events_open(r->dir, &prc))) {
		mgr_err("%s: post-processing failed (%s)", r->dir, proto_strerror(prc));
		return;
	}
	const struct mgr_causality *clc = mgr_events_causality(r->me);
	const struct mgr_perturb *pert = mgr_events_perturb(r->me);

	r->post = mgr_events_post(r->me);
	if (!r->no_profile && !(r->prof = mgr_profile_new()))
		mgr_err("%s: the profile is left out (out of memory)", r->dir);
	gather_span(r);
	if (pert)	/* its model tests read r->t: after the tally (report_gather) */
		r->ps = mgr_perturb_stats(pert);
	if (clc) {
		r->cs = mgr_causality_stats(clc);
		r->cms = mgr_comms_stats(mgr_causality_comms(clc));
	}
}

/* Events per type and rank, and the collectors' STATS, in one read. */
static uint64_t calls(const struct proto_event *ev)
{
	return proto_ev_calls(ev);
}

struct io_done_ctx {
	struct report *r;
	uint64_t stream;
};

/* A completion's end: a nonblocking MPI-IO request's bytes counted now
 * (what its completion says moved, the status's count: issue 31; a trace
 * from before has 0 there), its entry forgotten. */
static int io_done(void *arg, const struct mgr_end *e)
{
	struct io_done_ctx *c = arg;
	struct report *r = c->r;

	if (e->kind != MGR_END_DONE || !e->req)
		return 0;
	for (size_t i = 0; i < r->nioreq; i++)
		if (r->ioreq[i].stream == c->stream && r->ioreq[i].req == e->req) {
			if (e->bytes > 0)
				r->io_late[r->ioreq[i].rw] += (uint64_t)e->bytes;
			r->ioreq[i] = r->ioreq[--r->nioreq];
			break;
		}
	return 0;
}

/* te's part in the nonblocking MPI-IO bytes: a post remembered, a
 * completion counted. 0, or PROTO_E_NOMEM. */
static int io_requests(struct report *r, const struct proto_trace_event *te)
{
	const struct proto_event *ev = te->ev;
	int io = proto_ev_mpiio(ev->type);
	int q = proto_ev_arg(ev->type, PROTO_F_req);

	if (ev->flags & PROTO_EVF_FAILED)
		return 0;
	if ((io == PROTO_IO_READ || io == PROTO_IO_WRITE) && q >= 0) {
		if (r->nioreq == r->capioreq) {
			size_t n = r->capioreq ? 2 * r->capioreq : 64;
			struct io_req *a = realloc(r->ioreq, n * sizeof(*a));

			if (!a)
				return PROTO_E_NOMEM;
			r->ioreq = a;
			r->capioreq = n;
		}
		r->ioreq[r->nioreq++] = (struct io_req){te->stream->id, ev->arg[q],
							io == PROTO_IO_WRITE};
		return 0;
	}
	if (r->nioreq && io == PROTO_IO_NOT &&
	    proto_ev_info(ev->type)->category == PROTO_CAT_MPI) {
		struct io_done_ctx c = {r, te->stream->id};

		mgr_mpi_ends(te, io_done, &c);
	}
	return 0;
}

/* Events per type and rank, nonblocking MPI-IO bytes, the collectors'
 * STATS: one pass over r->t, touching nothing else of r but what it fills
 * (tally, nodes, maxrank, launcher_events, ioreq, io_late), so that it may
 * run beside gather_post. 0, or a negative code, *oom set when it is memory
 * (said by the caller: nothing is printed here). */
static int tally_events(struct report *r, int *oom)
{
	struct proto_trace_event te;
	int rc;

	r->maxrank = -1;
	if ((r->nodes = calloc(1, sizeof(*r->nodes))) &&
	    (r->nodes->msg = malloc(sizeof(*r->nodes->msg))))
		proto_trace_on_frame(r->t, on_stats, r->nodes);
	while ((rc = proto_trace_next(r->t, &te)) == 1) {
		struct tally *ty = &r->tally[te.ev->type];
		int k = te.stream->rank;

		/* a launcher's events are kept out of the application's
		 * (a shim, marked at its exec, is known only after) */
		if (mgr_stream_launcher(te.stream)) {
			r->launcher_events++;
			continue;
		}

		if (!ty->by_rank &&
		    !(ty->by_rank = calloc(MAX_RANKS + 1, sizeof(uint64_t)))) {
			*oom = 1;
			return PROTO_E_NOMEM;
		}
		ty->total += calls(te.ev);
		ty->failed += (te.ev->flags & PROTO_EVF_FAILED) != 0;
		int64_t moved = proto_ev_moved(te.ev);
		if (moved > 0 && !(te.ev->flags & PROTO_EVF_FAILED))
			ty->bytes += (uint64_t)moved;
		if (k < 0 || k >= MAX_RANKS)
			k = MAX_RANKS;
		else if (k > r->maxrank)
			r->maxrank = k;
		ty->by_rank[k] += calls(te.ev);
		if (io_requests(r, &te) < 0) {
			*oom = 1;
			return PROTO_E_NOMEM;
		}
	}
	return rc;
}

/* The tally's pass, in a thread of its own beside the post-processing
 * when two threads are allowed (mgr_post_threads; the figures are the
 * same either way: the passes share nothing), else after it. */
struct tally_pass {
	struct report *r;
	int rc, oom;
	int started;
	pthread_t th;
};

static void *tally_thread(void *arg)
{
	struct tally_pass *tp = arg;

	tp->rc = tally_events(tp->r, &tp->oom);
	return NULL;
}

static void tally_start(struct tally_pass *tp, struct report *r, int quick)
{
	tp->r = r;
	tp->started = !quick && mgr_post_threads() > 1 &&
		      !pthread_create(&tp->th, NULL, tally_thread, tp);
}

/* The tally done (run here if not started): 0, or a negative code, said. */
static int tally_wait(struct tally_pass *tp)
{
	if (tp->started)
		pthread_join(tp->th, NULL);
	else
		tally_thread(tp);
	tp->started = 0;
	if (tp->rc < 0 && tp->oom)
		return mgr_fail(PROTO_E_NOMEM, "out of memory");
	if (tp->rc < 0)
		return mgr_fail(tp->rc, "%s: read error: %s", tp->r->dir,
				proto_strerror(tp->rc));
	return tp->rc;
}

static void report_free(struct report *r)
{
	for (unsigned ty = 0; ty < PROTO_EV__COUNT; ty++)
		free(r->tally[ty].by_rank);
	proto_trace_close(r->t);
	mgr_profile_free(r->prof);
	if (r->own_me)
		mgr_events_close(r->me);
	if (r->nodes)
		free(r->nodes->msg);
	free(r->nodes);
	free(r->rk);
	free(r->ioreq);
}

/* DIR/index, entry by entry. The report never needs it: the reader takes
 * every batch from the segments (docs/FORMAT.md, "The job directory": the
 * index is derived data); it only counts the events of the batches the
 * segments lack (gap_events). A damaged index is said, not fatal: the
 * figures read from the segments stand; --strict refuses the job. */
static void gather_index(struct report *r)
{
	struct proto_jobdir_index_entry e;
	struct proto_jobdir_r *jd;
	int rc;

	r->index_state = "damaged";
	if (!(jd = proto_jobdir_open(r->dir, &rc))) {
		snprintf(r->index_problem, sizeof(r->index_problem), "%s",
			 proto_strerror(rc));
		return;
	}
	while ((rc = proto_jobdir_index_get(jd, r->index_entries, &e)) == 1)
		r->index_entries++;
	proto_jobdir_close_r(jd);
	if (rc == 0)
		r->index_state = "ok";
	else if (rc == PROTO_E_NOTFOUND)
		r->index_state = "absent";
	else if (rc == PROTO_E_FORMAT)
		snprintf(r->index_problem, sizeof(r->index_problem), "a bad header");
	else
		snprintf(r->index_problem, sizeof(r->index_problem), "%s at entry %" PRIu64,
			 proto_strerror(rc), r->index_entries);
}

/* What the root counted but could not store, its disk full (collector/
 * root.c, issue 33): the batches and events of stream s, exact. */
static void nospace_of(struct proto_trace *t, const struct proto_stream *s,
		       uint64_t *events, uint64_t *batches)
{
	char k[96];
	const char *v;

	snprintf(k, sizeof(k), "collector.nospace_events.%016" PRIx64, s->id);
	v = proto_trace_meta(t, k);
	*events = v ? strtoull(v, NULL, 10) : 0;
	snprintf(k, sizeof(k), "collector.nospace_batches.%016" PRIx64, s->id);
	v = proto_trace_meta(t, k);
	*batches = v ? strtoull(v, NULL, 10) : 0;
}

/* Fill r from the job directory dir, with its events me when the caller
 * has them (NULL: opened here): 0, or a negative code (said, mgr_fail;
 * r is to be freed either way). */
static int report_gather(struct report *r, const char *dir, struct mgr_events *me,
			 int quick)
{
	r->dir = dir;
	r->me = me;
	r->own_me = !me;
	r->quick = quick;
	int rc;

	if (!(r->t = mgr_trace_open(dir)))
		return PROTO_E_IO;
	struct tally_pass tp = {0};

	tally_start(&tp, r, quick);
	if (!quick)
		gather_post(r);
	rc = tally_wait(&tp);
	if (r->ps)
		gather_tests(r, mgr_events_perturb(r->me));
	if (rc < 0)
		return rc;
	r->st = proto_trace_stats(r->t);
	r->jr = proto_trace_report(r->t);
	gather_index(r);
	r->ns = proto_trace_nstreams(r->t);
	for (size_t i = 0; i < r->ns; i++) {
		const struct proto_stream *s = proto_trace_stream(r->t, i);
		uint64_t gap_ns;

		uint64_t nse, nsb;

		/* batches not stored, the disk full: counted lost exactly,
		 * not missing (their events are known) */
		nospace_of(r->t, s, &nse, &nsb);
		r->nospace += nse;
		r->lost += s->lost_events + nse;
		r->gaps += s->gap_batches > nsb ? s->gap_batches - nsb : 0;
		r->gap_events += s->gap_events;
		r->undelivered += undelivered(s, &gap_ns);
		r->cut += !s->ended;
	}
	uint64_t why[4] = {0};
	static const char *const said[4] = {"job secret", "stream key",
					    "protocol version", "other"};

	for (size_t i = 0; r->nodes && i < r->nodes->count; i++) {
		r->refused += r->nodes->n[i].refused;
		r->rejected += r->nodes->n[i].rejected;
		for (int k = 0; k < 4; k++)
			why[k] += r->nodes->n[i].why[k];
	}
	for (int k = 0, len = 0; k < 4; k++)
		if (why[k] && len < (int)sizeof(r->rejected_why))
			len += snprintf(r->rejected_why + len,
					sizeof(r->rejected_why) - (size_t)len,
					"%s%s %" PRIu64, len ? ", " : "",
					said[k], why[k]);
	return 0;
}

/* ---- data moved by MPI-IO and one-sided calls ------------------------------ */

/* From the tally: calls and bytes moved (proto_ev_moved), per kind (MPI-IO:
 * a split collective's bytes counted once, at its _end, a nonblocking
 * access's at its completion (io_late); one-sided: put, get, the
 * accumulates and atomics). */
enum { DM_READ, DM_WRITE, DM_PUT, DM_GET, DM_ACC, DM_KINDS };

static int dm_kind(unsigned ty)
{
	const char *n = proto_ev_info(ty)->name;

	switch (proto_ev_mpiio(ty)) {
	case PROTO_IO_READ:
		return strstr(n, "_begin") ? -1 : DM_READ;
	case PROTO_IO_WRITE:
		return strstr(n, "_begin") ? -1 : DM_WRITE;
	}
	switch (ty) {
	case PROTO_EV_MPI_PUT: case PROTO_EV_MPI_RPUT:
		return DM_PUT;
	case PROTO_EV_MPI_GET: case PROTO_EV_MPI_RGET:
		return DM_GET;
	case PROTO_EV_MPI_ACCUMULATE: case PROTO_EV_MPI_RACCUMULATE:
	case PROTO_EV_MPI_GET_ACCUMULATE: case PROTO_EV_MPI_RGET_ACCUMULATE:
	case PROTO_EV_MPI_FETCH_AND_OP: case PROTO_EV_MPI_COMPARE_AND_SWAP:
		return DM_ACC;
	}
	return -1;
}

/* Printed as text or as the <data> element; nothing when no call moved
 * data this way. */
static void data_moved(FILE *out, const struct report *r, int xml)
{
	static const char *const nm[DM_KINDS] = {"mpiio_read", "mpiio_write", "rma_put",
						 "rma_get", "rma_acc"};
	uint64_t calls[DM_KINDS] = {0}, bytes[DM_KINDS] = {0}, any = 0;
	char name[32];
	int k;

	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++)
		if (r->tally[ty].total && (k = dm_kind(ty)) >= 0) {
			calls[k] += r->tally[ty].total;
			bytes[k] += r->tally[ty].bytes;
			any += r->tally[ty].total;
		}
	/* the nonblocking accesses' bytes, moved at their completions */
	bytes[DM_READ] += r->io_late[0];
	bytes[DM_WRITE] += r->io_late[1];
	if (!any)
		return;
	if (xml) {
		fputs("  <data", out);
		for (k = 0; k < DM_KINDS; k++) {
			snprintf(name, sizeof(name), "%s_calls", nm[k]);
			fprintf(out, " %s=\"%" PRIu64 "\"", name, calls[k]);
			snprintf(name, sizeof(name), "%s_bytes", nm[k]);
			fprintf(out, " %s=\"%" PRIu64 "\"", name, bytes[k]);
		}
		fputs("/>\n", out);
		return;
	}
	fprintf(out, "\ndata moved     MPI-IO: %" PRIu64 " reads, %" PRIu64 " bytes; %" PRIu64
		" writes, %" PRIu64 " bytes\n               one-sided: %" PRIu64 " puts, %"
		PRIu64 " bytes; %" PRIu64 " gets, %" PRIu64 " bytes; %" PRIu64
		" accumulates and atomics, %" PRIu64 " bytes\n", calls[DM_READ],
		bytes[DM_READ], calls[DM_WRITE], bytes[DM_WRITE], calls[DM_PUT], bytes[DM_PUT],
		calls[DM_GET], bytes[DM_GET], calls[DM_ACC], bytes[DM_ACC]);
}

/* ---- XML ------------------------------------------------------------------ */

/* The XML 1.0 character at s, its length in *len: the code point, or -1
 * when the bytes are not one (invalid or overlong UTF-8, a surrogate,
 * U+FFFE/U+FFFF, a control other than TAB, LF and CR). */
static long xml_char(const unsigned char *s, size_t *len)
{
	static const unsigned char lead_min[4] = {0, 0xc2, 0xe0, 0xf0};
	static const long cp_min[4] = {0, 0x80, 0x800, 0x10000};
	size_t more = s[0] < 0x80 ? 0 : s[0] < 0xe0 ? 1 : s[0] < 0xf0 ? 2 : 3;
	long c = more ? s[0] & (0x3f >> more) : s[0];

	*len = 1;
	if (s[0] < lead_min[more] || s[0] > 0xf4)
		return -1;
	for (size_t i = 1; i <= more; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* the NUL ending s stops here too */
			return -1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < cp_min[more] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
	    c == 0xfffe || c == 0xffff || (c < 0x20 && c != 9 && c != 10 && c != 13))
		return -1;
	*len = more + 1;
	return c;
}

/* s as XML text: markup escaped; TAB, LF and CR as character references
 * (kept by attribute normalisation); every byte that is not part of an XML
 * 1.0 character (other controls, invalid UTF-8) as U+FFFD, so that the
 * output always parses (xmllint) whatever a traced program named. */
static void xml_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	while (*p) {
		long c = xml_char(p, &n);

		if (c < 0)
			fputs("\xef\xbf\xbd", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c < 0x20)
			fprintf(out, "&#%ld;", c);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
}

/* One attribute, ` name="value"`, by the value's type. */
static void attr_s(FILE *out, const char *name, const char *v)
{
	fprintf(out, " %s=\"", name);
	xml_text(out, v);
	fputc('"', out);
}

static void attr_u(FILE *out, const char *name, uint64_t v)
{
	fprintf(out, " %s=\"%" PRIu64 "\"", name, v);
}

static void attr_i(FILE *out, const char *name, int64_t v)
{
	fprintf(out, " %s=\"%" PRId64 "\"", name, v);
}

static void attr_f(FILE *out, const char *name, int prec, double v)
{
	fprintf(out, " %s=\"%.*f\"", name, prec, v);
}

static void xml_streams(FILE *out, const struct report *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		const struct proto_stream *s = proto_trace_stream(r->t, i);

		fprintf(out, "  <stream id=\"%016" PRIx64 "\"", s->id);
		attr_i(out, "rank", s->rank);
		attr_i(out, "pid", s->pid);
		attr_s(out, "host", s->host);
		attr_s(out, "exe", s->exe);
		attr_u(out, "events", s->events);
		attr_u(out, "batches", s->batches);
		{
			uint64_t nse, nsb;

			nospace_of(r->t, s, &nse, &nsb);
			attr_u(out, "lost_events", s->lost_events + nse);
			attr_u(out, "gap_batches", s->gap_batches > nsb ?
			       s->gap_batches - nsb : 0);
			attr_u(out, "nospace_events", nse);
		}
		attr_u(out, "gap_events", s->gap_events);
		attr_i(out, "ended", s->ended);
		{
			uint64_t gap_ns, n = undelivered(s, &gap_ns);

			if (n) {
				attr_u(out, "undelivered_ns", gap_ns);
				attr_u(out, "undelivered_events_estimate", n);
			}
		}
		if (volume_method(s))
			attr_s(out, "compute_volumes", volume_method(s));
		fputs("/>\n", out);
	}
}

static void xml_events(FILE *out, const struct report *r)
{
	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		const struct tally *y = &r->tally[ty];

		if (!y->total)
			continue;
		fprintf(out, "  <events");
		attr_s(out, "type", proto_ev_info(ty)->name);
		attr_u(out, "count", y->total);
		if (y->failed)
			attr_u(out, "failed", y->failed);
		fputc('>', out);
		for (int k = 0; k <= r->maxrank; k++)
			if (y->by_rank[k])
				fprintf(out, "<rank n=\"%d\" count=\"%" PRIu64 "\"/>", k,
					y->by_rank[k]);
		fputs("</events>\n", out);
	}
}

static void xml_collectors(FILE *out, const struct report *r)
{
	for (size_t i = 0; r->nodes && i < r->nodes->count; i++) {
		const struct node_stats *n = &r->nodes->n[i];

		fprintf(out, "  <collector id=\"%016" PRIx64 "\"", n->id);
		attr_s(out, "name", n->name);
		attr_s(out, "role", n->role);
		attr_u(out, "events_in", n->events_in);
		attr_u(out, "drops", n->drops);
		attr_u(out, "filtered", n->filtered);
		attr_u(out, "spilled_bytes", n->spilled);
		attr_u(out, "reconnects", n->reconnects);
		attr_u(out, "rejected", n->rejected);
		attr_u(out, "refused", n->refused);
		attr_s(out, "refused_by", n->refused_by);
		fputs("/>\n", out);
	}
}

static void xml_tests(FILE *out, const struct report *r)
{
	for (size_t i = 0; i < r->ntests; i++) {
		const struct model_test *m = &r->tests[i];
		size_t shown = m->n < CHECK_SHOWN ? m->n : CHECK_SHOWN;

		fprintf(out, "  <model_check");
		attr_s(out, "model", m->what);
		attr_f(out, "latency_ns", 1, m->lat);
		attr_f(out, "ns_per_byte", 6, m->npb);
		attr_u(out, "sizes_tested", m->n);
		/* over every size tested, shown or not */
		attr_i(out, "accepted", m->n && !m->rejected);
		fputs(">\n", out);
		for (size_t j = 0; j < shown; j++) {
			const struct mgr_model_check *c = &m->c[j];

			fprintf(out, "    <size");
			attr_i(out, "bytes", c->bytes);
			attr_u(out, "n", c->n);
			attr_f(out, "model_ns", 1, c->model_ns);
			attr_f(out, "error_mean_ns", 1, c->mean_ns);
			attr_f(out, "error_sd_ns", 1, c->sd_ns);
			attr_f(out, "t", 3, c->t);
			attr_f(out, "critical", 3, c->critical);
			attr_i(out, "accept", c->accept);
			attr_f(out, "measured_min_ns", 1, c->min_ns);
			attr_f(out, "measured_mean_ns", 1, c->avg_ns);
			attr_f(out, "measured_max_ns", 1, c->max_ns);
			fputs("/>\n", out);
		}
		fputs("  </model_check>\n", out);
	}
}

static uint64_t polls_of(const struct report *r);

static void xml_perturbation(FILE *out, const struct report *r)
{
	const struct mgr_perturb_stats *ps = r->ps;

	fputs("  <perturbation", out);
	attr_i(out, "span_traced_ns", r->span_raw);
	attr_i(out, "span_corrected_ns", r->span_cor);
	/* what the spans lost, from the events written */
	attr_i(out, "removed_ns", r->span_raw - r->span_cor);
	attr_i(out, "tracer_cost_ns", ps->removed_ns);
	attr_u(out, "kept_waits", ps->capped);
	attr_i(out, "kept_wait_ns", ps->capped_ns);
	attr_i(out, "off_cpu_ns", ps->stolen_ns);
	attr_i(out, "off_cpu_removed_ns", ps->stolen_removed_ns);
	attr_i(out, "off_cpu_mpi_gaps_ns", ps->gap_excess_ns);
	attr_u(out, "tracer_threads_moved", ps->helper_flows);
	attr_u(out, "program_threads_moved", ps->follower_flows);
	attr_u(out, "polls", polls_of(r));
	attr_f(out, "alpha_ns", 1, ps->alpha_ns);
	attr_u(out, "receives", ps->receives);
	attr_u(out, "receives_arrived", ps->receives_arrived);
	attr_u(out, "receives_waited", ps->receives_waited);
	attr_u(out, "receives_model", ps->receives_model);
	attr_u(out, "receives_tail", ps->receives_tail);
	attr_u(out, "collectives", ps->collectives);
	attr_u(out, "collectives_sub", ps->collectives_sub);
	attr_u(out, "collectives_tail", ps->collectives_tail);
	attr_u(out, "measured_events", ps->measured_events);
	attr_i(out, "measured_ns", ps->measured_ns);
	attr_i(out, "probe_ns", ps->probe_ns);
	attr_u(out, "cold_events", ps->cold_events);
	attr_i(out, "cold_ns", ps->cold_ns);
	attr_u(out, "model_points", ps->model_points);
	attr_u(out, "model_kept", ps->model_kept);
	attr_f(out, "model_latency_ns", 1, ps->model_latency_ns);
	attr_f(out, "model_ns_per_byte", 4, ps->model_ns_per_byte);
	attr_f(out, "model_resid_sd_ns", 1, ps->model_resid_sd_ns);
	attr_f(out, "model_t", 2, ps->model_t_slope);
	attr_u(out, "waits", ps->waits);
	attr_i(out, "wait_ns", ps->wait_ns);
	attr_u(out, "uncalibrated_streams", ps->uncalibrated_streams);
	attr_u(out, "uncalibrated_events", ps->uncalibrated_events);
	fputs("/>\n", out);
	for (size_t k = 0; k < r->nrk; k++) {
		const struct rank_span *q = &r->rk[k];

		if (q->re < q->rs)
			continue;
		fprintf(out, "  <perturbation_rank rank=\"%zu\"", k);
		attr_i(out, "span_traced_ns", q->re - q->rs);
		attr_i(out, "span_corrected_ns", q->ce - q->cs);
		attr_i(out, "removed_ns", (q->re - q->rs) - (q->ce - q->cs));
		fputs("/>\n", out);
	}
	xml_tests(out, r);
}

static void xml_causality(FILE *out, const struct report *r)
{
	const struct mgr_causality_stats *cs = r->cs;

	fputs("  <causality", out);
	attr_u(out, "messages", cs->matched);
	attr_u(out, "unmatched_sends", cs->unmatched_sends);
	attr_u(out, "unmatched_receives", cs->unmatched_receives);
	attr_u(out, "violations_before", cs->violations_before);
	attr_u(out, "violations_after", cs->violations_after);
	attr_u(out, "receives_moved", cs->jumps);
	attr_i(out, "max_shift_ns", cs->max_shift_ns);
	attr_i(out, "max_interval_change_ns", cs->max_interval_change_ns);
	attr_i(out, "min_latency_ns", cs->min_latency_ns);
	attr_u(out, "communicators_named", r->cms->named);
	attr_u(out, "communicators_unnamed", r->cms->unnamed);
	attr_u(out, "intercommunicators", r->cms->inter);
	attr_u(out, "collectives", cs->collectives);
	attr_u(out, "coll_violations_before", cs->coll_violations_before);
	attr_u(out, "coll_violations_after", cs->coll_violations_after);
	attr_u(out, "collectives_moved", cs->coll_moved);
	if (cs->steps)
		attr_u(out, "steps", 1);
	if (cs->reverted)
		attr_u(out, "reverted", 1);
	fputs("/>\n", out);
}

static void report_xml(FILE *out, const struct report *r)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<report", out);
	attr_s(out, "dir", r->dir);
	attr_u(out, "events", r->st->events);
	attr_u(out, "batches", r->st->batches);
	attr_u(out, "streams", r->ns);
	attr_u(out, "lost_events", r->lost);
	attr_u(out, "gap_batches", r->gaps);
	attr_u(out, "nospace_events", r->nospace);
	attr_u(out, "corrupt_batches", r->st->bad_batches);
	attr_u(out, "duplicate_batches", r->st->dup_batches);
	attr_u(out, "skipped_bytes", r->jr ? r->jr->skipped_bytes : 0);
	attr_u(out, "gap_events", r->gap_events);
	attr_u(out, "refused_frames", r->refused);
	attr_u(out, "streams_cut", r->cut);
	attr_u(out, "rejected_connections", r->rejected);
	if (r->rejected_why[0])
		attr_s(out, "rejected_why", r->rejected_why);
	attr_s(out, "index", r->index_state);
	if (r->quick)
		attr_s(out, "post", "skipped");
	if (r->index_problem[0])
		attr_s(out, "index_problem", r->index_problem);
	fputs(">\n", out);
	if (r->prof)
		mgr_profile_xml(out, r->prof);
	xml_streams(out, r);
	xml_events(out, r);
	data_moved(out, r, 1);
	if (r->post)
		mgr_post_report(r->post, out, 1);
	xml_collectors(out, r);
	if (r->ps)
		xml_perturbation(out, r);
	if (r->cs)
		xml_causality(out, r);
	fputs("</report>\n", out);
}

void mgr_xml_text(FILE *out, const char *s)
{
	xml_text(out, s);
}

/* ---- text ----------------------------------------------------------------- */

static void text_streams(FILE *out, const struct report *r)
{
	fprintf(out, "\nstreams\n");
	for (size_t i = 0; i < r->ns; i++) {
		const struct proto_stream *s = proto_trace_stream(r->t, i);

		fprintf(out, "  %016" PRIx64 "  host %s pid %" PRId64 " rank %d  %s\n",
			s->id, s->host[0] ? s->host : "?", s->pid, s->rank,
			s->exe[0] ? s->exe : "?");
		uint64_t gap_ns, und = undelivered(s, &gap_ns), nse, nsb;

		nospace_of(r->t, s, &nse, &nsb);
		fprintf(out, "                    events %" PRIu64 ", lost %" PRIu64
			", missing batches %" PRIu64 ", %s\n", s->events,
			s->lost_events + nse, s->gap_batches > nsb ?
			s->gap_batches - nsb : 0, s->ended ? "ended" : "no end seen");
		if (nse)
			fprintf(out, "                    %" PRIu64 " events in %" PRIu64
				" batches not stored: no space left on device\n",
				nse, nsb);
		if (s->gap_events)
			fprintf(out, "                    %" PRIu64 " events in the "
				"missing batches (index)\n", s->gap_events);
		if (und)
			fprintf(out, "                    its connection closed %.1f ms "
				"after its last stored event: about %" PRIu64
				" events not delivered (at its mean rate)\n",
				(double)gap_ns / 1e6, und);
		if (volume_method(s))
			fprintf(out, "                    computation volumes from %s\n",
				volume_method(s));
	}
}

/* The MPI calls that returned an error, per type: their codes are in the
 * mpi_error records after them (docs/FORMAT.md; the CSV's errcode column). */
static void failed_calls(FILE *out, const struct report *r)
{
	int any = 0;

	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		if (!r->tally[ty].failed ||
		    proto_ev_info(ty)->category != PROTO_CAT_MPI)
			continue;
		fprintf(out, "%s %s %" PRIu64, any++ ? "," : "\nfailed MPI calls",
			proto_ev_info(ty)->name, r->tally[ty].failed);
	}
	if (any)
		fprintf(out, "\n  (their error codes: the mpi_error records, csv column errcode)\n");
}

static void text_events(FILE *out, const struct report *r)
{
	/* ranks shown: the first 16; the last column holds the rest (the
	 * streams without a rank, a launcher's, and the ranks not shown) so
	 * that every row adds up */
	int shown = r->maxrank < 16 ? r->maxrank + 1 : 16;

	/* failed: the calls among total that returned an error (a shell's
	 * search of PATH: execs that found no file) */
	if (r->launcher_events)
		fprintf(out, "\nlaunchers      %" PRIu64 " events of launchers "
			"(mpirun, orted, hydra_pmi_proxy ...; env or a shell "
			"that only executed the next program) not counted below "
			"(tapestry run --trace-launcher shows them)\n",
			r->launcher_events);
	fprintf(out, "\nevents by type\n  %-20s %12s %8s", "", "total", "failed");
	for (int k = 0; k < shown; k++) {
		char h[16];

		snprintf(h, sizeof(h), "rank %d", k);
		fprintf(out, " %8s", h);
	}
	if (shown > 0)
		fprintf(out, " %8s", r->maxrank >= 16 ? "others" : "no rank");
	fputc('\n', out);
	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		const struct tally *y = &r->tally[ty];
		uint64_t rest = y->total;

		if (!y->total)
			continue;
		fprintf(out, "  %-20s %12" PRIu64 " %8" PRIu64, proto_ev_info(ty)->name,
			y->total, y->failed);
		for (int k = 0; k < shown; k++) {
			fprintf(out, " %8" PRIu64, y->by_rank[k]);
			rest -= y->by_rank[k];
		}
		if (shown > 0)
			fprintf(out, " %8" PRIu64, rest);
		fprintf(out, "\n");
	}
	failed_calls(out, r);
}

static void text_collectors(FILE *out, const struct report *r)
{
	if (!r->nodes || !r->nodes->count)
		return;
	fprintf(out, "\ncollectors (last report of each; events in may count the"
		" collectors' own clock and statistics records)\n");
	for (size_t i = 0; i < r->nodes->count; i++) {
		const struct node_stats *n = &r->nodes->n[i];

		fprintf(out, "  %016" PRIx64 "  %-10s %-9s events in %" PRIu64
			", dropped %" PRIu64 ", filtered %" PRIu64, n->id,
			n->name[0] ? n->name : "?", n->role, n->events_in, n->drops,
			n->filtered);
		fprintf(out, ", spilled now %" PRIu64 " bytes, reconnects %" PRIu64
			", rejected connections %" PRIu64 "\n", n->spilled, n->reconnects,
			n->rejected);
	}
}

static void text_tests(FILE *out, const struct report *r)
{
	if (!r->ntests)
		return;
	fprintf(out, "               how well a model of message transit fits the messages that"
		" arrived late (sizes with %d or more;\n"
		"               a fit is accepted when, for every size, the average error is within"
		" what chance allows at 95 %%):\n", MGR_CHECK_MIN);
	for (size_t i = 0; i < r->ntests; i++) {
		const struct model_test *m = &r->tests[i];
		size_t shown = m->n < CHECK_SHOWN ? m->n : CHECK_SHOWN;

		fprintf(out, "                 %s (%.0f ns + %.4f ns/byte): ", m->label,
			m->lat, m->npb);
		if (!m->n) {
			fprintf(out, "no message size with %d late messages or more: not"
				" tested\n", MGR_CHECK_MIN);
			continue;
		}
		fprintf(out, "%s\n", m->rejected ? "does not fit (receives that needed it keep"
			" at least the tracer-free part of their traced wait)" : "fits");
		for (size_t j = 0; j < shown; j++) {
			const struct mgr_model_check *c = &m->c[j];

			fprintf(out, "                   %" PRId64 " B: %" PRIu64 " late messages took"
				" %.0f / %.0f / %.0f ns (least / mean / most),",
				c->bytes, c->n, c->min_ns, c->avg_ns, c->max_ns);
			fprintf(out, " the model says %.0f ns: off by %+.1f ns on average, spread"
				" %.1f ns (%s; t %+.2f, limit %.2f)\n", c->model_ns, c->mean_ns,
				c->sd_ns, c->accept ? "fits" : "does not fit", c->t, c->critical);
		}
		if (m->n > shown)
			fprintf(out, "                   (%zu more sizes tested, not shown: see"
				" --xml for the first %d)\n", m->n - shown, CHECK_SHOWN);
	}
}

/* Events of the MPI sensor in the job (the receives, collectives and
 * communicators lines say nothing without them). */
static uint64_t mpi_events(const struct report *r)
{
	uint64_t n = 0;

	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		const struct proto_ev_info *info = proto_ev_info(ty);

		if (info && info->category == PROTO_CAT_MPI)
			n += r->tally[ty].total;
	}
	return n;
}

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The polling calls of the job (MPI_Iprobe, MPI_Test and its forms). */
static uint64_t polls_of(const struct report *r)
{
	static const unsigned t[] = {PROTO_EV_MPI_IPROBE, PROTO_EV_MPI_TEST,
				     PROTO_EV_MPI_TESTALL, PROTO_EV_MPI_TESTANY,
				     PROTO_EV_MPI_TESTSOME};
	uint64_t n = 0;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		n += r->tally[t[i]].total;
	return n;
}

static void text_perturbation(FILE *out, const struct report *r)
{
	const struct mgr_perturb_stats *ps = r->ps;
	int64_t raw = r->span_raw, cor = r->span_cor;

	fprintf(out, "\nperturbation   the tracer's own cost taken out of the times (spans of the"
		" events written, first event to last)\n");
	for (size_t k = 0; k < r->nrk && r->nrk <= 64; k++) {
		const struct rank_span *q = &r->rk[k];
		int64_t a = q->re - q->rs, c = q->ce - q->cs;

		if (q->re < q->rs)
			continue;
		fprintf(out, "               rank %zu: traced %.6f s, corrected %.6f s: %.6f s"
			" removed (%.2f%%)\n", k, (double)a / 1e9, (double)c / 1e9,
			(double)(a - c) / 1e9, pct(a - c, a));
	}
	fprintf(out, "               %s: traced %.6f s, corrected %.6f s: %.6f s removed"
		" (%.2f%%)\n", r->span_ranks ? "all ranks" : "whole job", (double)raw / 1e9,
		(double)cor / 1e9, (double)(raw - cor) / 1e9, pct(raw - cor, raw));
	fprintf(out, "               what the tracer cost, measured: %.6f s over all threads"
		" (%.1f ns per traced call on average", (double)ps->removed_ns / 1e9,
		ps->alpha_ns);
	if (ps->measured_events)
		fprintf(out, "; the MPI sensor's work around %" PRIu64 " MPI calls, %.6f s",
			ps->measured_events, (double)ps->measured_ns / 1e9);
	if (ps->probe_ns)
		fprintf(out, "; its probes inside receives, %.6f s", (double)ps->probe_ns / 1e9);
	fprintf(out, "). No event is moved earlier than the tracer cost that can have delayed"
		" it (its own thread's, or that of a rank it waited for).\n");
	if (ps->helper_flows)
		fprintf(out, "               the tracer's own threads (%" PRIu64 ": sender, memory"
			" sampler) move with their process's main thread\n", ps->helper_flows);
	if (ps->follower_flows)
		fprintf(out, "               the program's threads without MPI calls (%" PRIu64 ":"
			" an MPI library's progress threads, workers) lose their own tracer cost and"
			" their main thread's removal\n", ps->follower_flows);
	if (mpi_events(r) || ps->receives || ps->collectives) {
		fprintf(out, "               receives: %" PRIu64 ", each placed after its sender's"
			" corrected send: %" PRIu64 " found their message there (own time kept),"
			" %" PRIu64 " waited for it (transit kept), %" PRIu64 " took the"
			" communication model", ps->receives, ps->receives_arrived,
			ps->receives_waited, ps->receives_model);
		if (ps->model_points)
			fprintf(out, " (%.0f ns + %.4f ns/byte, fitted on %" PRIu64 " of the %"
				PRIu64 " receives that waited; %" PRIu64 " transits far beyond it)",
				ps->model_latency_ns, ps->model_ns_per_byte, ps->model_kept,
				ps->model_points, ps->receives_tail);
		fprintf(out, "\n               collectives: %" PRIu64 " (%" PRIu64 " on"
			" communicators other than MPI_COMM_WORLD), each member leaving as long"
			" after the entries it waits for as it did traced (%" PRIu64 " unusually"
			" long ones took the usual time)\n", ps->collectives, ps->collectives_sub,
			ps->collectives_tail);
	}
	if (ps->capped)
		fprintf(out, "               kept: %" PRIu64 " receives or collective exits would have"
			" moved %.6f s earlier in all than the tracer cost explains: that waiting"
			" was the program's own (a polling loop, ranks taking turns on a busy"
			" host, a model that does not fit), left in\n", ps->capped,
			(double)ps->capped_ns / 1e9);
	uint64_t polls = polls_of(r);
	if (ps->receives && polls > ps->receives)
		fprintf(out, "               the program polls: %" PRIu64 " MPI_Iprobe / MPI_Test*"
			" calls for %" PRIu64 " receives; between its polls it waits for its"
			" partners, and the time a poll found nothing is the program's own: only"
			" the tracer's cost inside each call is removed\n", polls, ps->receives);
	int64_t off_cpu = ps->stolen_ns + ps->gap_excess_ns;
	if (off_cpu)
		fprintf(out, "               off the CPU between MPI calls: %.6f s, and around"
			" them (gaps beyond ten times their thread's median): %.6f s; %.6f s of"
			" it removed (at most what the tracer's threads ran)%s\n",
			(double)ps->stolen_ns / 1e9, (double)ps->gap_excess_ns / 1e9,
			(double)ps->stolen_removed_ns / 1e9,
			off_cpu > ps->stolen_removed_ns + ps->stolen_removed_ns / 10 + 1000000 ?
			"; the rest was other work on the host (more runnable threads than"
			" cores): left in, an untraced run on this host would wait as long" : "");
	if (ps->waits)
		fprintf(out, "               waits for room in the rings (post-mortem): %"
			PRIu64 ", %.6f s, removed\n", ps->waits, (double)ps->wait_ns / 1e9);
	if (ps->uncalibrated_streams)
		fprintf(out, "               streams without a calibration (no tracer cost"
			" removed): %" PRIu64 ", %" PRIu64 " events\n",
			ps->uncalibrated_streams, ps->uncalibrated_events);
	text_tests(out, r);
}

static void text_causality(FILE *out, const struct report *r)
{
	const struct mgr_causality_stats *cs = r->cs;

	if (!mpi_events(r) && !cs->matched && !cs->collectives) {
		fprintf(out, "\ncausality      no MPI events: no messages to match, nothing"
			" repaired\n");
		return;
	}
	fprintf(out, "\ncausality      %" PRIu64 " messages matched (%" PRIu64 " sends, %"
		PRIu64 " receives unmatched); violations %" PRIu64 " before repair, %"
		PRIu64 " after;", cs->matched, cs->unmatched_sends, cs->unmatched_receives,
		cs->violations_before, cs->violations_after);
	fprintf(out, " %" PRIu64 " receives moved, largest shift %" PRId64 " ns, largest"
		" change of a local interval %" PRId64 " ns\n", cs->jumps,
		cs->max_shift_ns, cs->max_interval_change_ns);
	fprintf(out, "               collectives: %" PRIu64 " (on MPI_COMM_WORLD and named"
		" communicators); exits before an awaited entry %" PRIu64 " before"
		" repair, %" PRIu64 " after; %" PRIu64 " exits moved\n", cs->collectives,
		cs->coll_violations_before, cs->coll_violations_after, cs->coll_moved);
	if (!cs->violations_before && !cs->coll_violations_before && !cs->jumps &&
	    !cs->coll_moved)
		fprintf(out, "               nothing received before it was sent, no collective"
			" left early: nothing moved\n");
	if (cs->steps)
		fprintf(out, "               the moves are kept as steps (smoothing them would"
			" have put a send after its receive)\n");
	if (cs->reverted)
		fprintf(out, "               the repair is NOT applied: it would have left more"
			" violations than it found (the clocks are too far off to trust; see the"
			" clock section)\n");
	fprintf(out, "               communicators: %" PRIu64 " named job-wide (made by a"
		" traced constructor; %" PRIu64 " of them intercommunicators), %" PRIu64
		" not\n", r->cms->named, r->cms->inter, r->cms->unnamed);
}

/* Frames the collectors refused (SECURITY.md, "Streams"), with who sent
 * them. */
static void text_refused(FILE *out, const struct report *r)
{
	if (!r->refused)
		return;
	fprintf(out, "refused        %" PRIu64 " frames (of a stream not their "
		"sender's, or a seq out of the window), not stored\n", r->refused);
	for (size_t i = 0; i < r->nodes->count; i++) {
		const struct node_stats *n = &r->nodes->n[i];

		if (n->refused)
			fprintf(out, "               by %s %016" PRIx64 ": %" PRIu64
				", from %s\n", n->name[0] ? n->name : "?", n->id,
				n->refused, n->refused_by);
	}
}

static void report_text(FILE *out, const struct report *r)
{
	if (r->prof) {
		mgr_profile_text(out, r->prof);
		fputc('\n', out);
	}
	fprintf(out, "job directory  %s\n", r->dir);
	fprintf(out, "events         %" PRIu64 " in %" PRIu64 " batches, %zu stream%s\n",
		r->st->events, r->st->batches, r->ns, r->ns == 1 ? "" : "s");
	fprintf(out, "losses         %" PRIu64 " events counted lost, %" PRIu64
		" batches missing, %" PRIu64 " corrupt batches, %" PRIu64
		" damaged bytes skipped", r->lost, r->gaps, r->st->bad_batches,
		r->jr ? r->jr->skipped_bytes : 0);
	if (r->cut)
		fprintf(out, ", %" PRIu64 " stream%s cut short (no end seen: what they had"
			" not sent yet is lost%s)", r->cut, r->cut == 1 ? "" : "s", r->undelivered ?
			", estimated below" : ", how much is not known");
	fputc('\n', out);
	/* only connections the collectors said no to (issue 33): one its
	 * process closed during the handshake carried no event */
	if (r->rejected)
		fprintf(out, "               %" PRIu64 " connection%s rejected by the "
			"collectors (%s): a refused process's events are in the job "
			"only if it left them in the spool (run, launch), else not "
			"counted (its stderr says how many)\n", r->rejected,
			r->rejected == 1 ? "" : "s", r->rejected_why[0] ?
			r->rejected_why : "reason not said");
	if (r->nospace)
		fprintf(out, "               %" PRIu64 " events not stored: no space "
			"left on device: %s (counted exactly, in the lost above)\n",
			r->nospace, proto_trace_meta(r->t, "collector.nospace") ?
			proto_trace_meta(r->t, "collector.nospace") : r->dir);
	if (r->gap_events)
		fprintf(out, "               the index names %" PRIu64 " events in the "
			"missing batches\n", r->gap_events);
	if (r->undelivered)
		fprintf(out, "               about %" PRIu64 " events never delivered "
			"by processes that ended without BYE (estimated, below)\n",
			r->undelivered);
	if (r->jr && r->jr->first_problem[0])
		fprintf(out, "               first problem: %s\n", r->jr->first_problem);
	if (r->quick)
		fprintf(out, "post           skipped (--quick): no clock, perturbation or causality"
			" figures\n");
	if (r->index_problem[0])
		fprintf(out, "index          damaged (%s): not used; every figure here was read"
			" from the segments, which hold every batch stored (the index only"
			" locates batches, and counts the events of missing ones)\n",
			r->index_problem);
	text_refused(out, r);
	text_streams(out, r);
	text_events(out, r);
	data_moved(out, r, 0);
	text_collectors(out, r);
	if (r->post)
		mgr_post_report(r->post, out, 0);
	if (r->ps)
		text_perturbation(out, r);
	if (r->cs)
		text_causality(out, r);
}

int mgr_report(const char *dir, int xml, FILE *out)
{
	return mgr_report_events(dir, NULL, xml ? MGR_REPORT_XML : 0, out, NULL, NULL);
}

int mgr_report_events(const char *dir, struct mgr_events *me, int flags, FILE *out,
		      mgr_report_hook hook, void *arg)
{
	int xml = flags & MGR_REPORT_XML;

	struct report *r = malloc(sizeof(*r));
	int rc;

	if (!r)
		return mgr_fail(PROTO_E_NOMEM, "out of memory");
	memset(r, 0, sizeof(*r));
	r->hook = hook;
	r->hook_arg = arg;
	r->no_profile = (flags & MGR_REPORT_NO_PROFILE) != 0;
	if (!(rc = report_gather(r, dir, me, flags & MGR_REPORT_QUICK))) {
		(xml ? report_xml : report_text)(out, r);
		/* --strict: a damaged job is an error, as for every export */
		if (mgr_export_strict)
			rc = mgr_export_damage(r->t, dir, "report");
		if (mgr_export_strict && r->rejected)
			rc = mgr_fail(PROTO_E_AUTH, "%s: %" PRIu64 " connections "
				      "rejected by the collectors, their events not "
				      "in the job: refused (--strict)", dir,
				      r->rejected);
		if (mgr_export_strict && r->index_problem[0])
			rc = mgr_fail(PROTO_E_FORMAT, "%s: damaged index (%s): "
				      "refused (--strict)", dir, r->index_problem);
	}
	report_free(r);
	free(r);
	return rc;
}

int mgr_cmd_report(int argc, char **argv)
{
	int c, flags = 0;

	optind = 1;
	while ((c = mgr_opts_next(&report_doc, argc, argv)) > 0) {
		switch (c) {
		case 'x': flags |= MGR_REPORT_XML; break;
		case 'q': flags |= MGR_REPORT_QUICK; break;
		case 'P': flags |= MGR_REPORT_NO_PROFILE; break;
		case 'S': mgr_export_strict = 1; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc - 1) {
		mgr_err("report needs one job directory");
		return mgr_opts_usage(&report_doc);
	}
	return mgr_report_events(argv[optind], NULL, flags, stdout, NULL, NULL) ?
	       1 : 0;
}
