/*
 * manager/post/perturb.c - perturbation correction; the method is in perturb.h.
 *
 * Build: one pass over the events counts, per flow, the wrapped events and
 * the flush time before each MPI event (alpha needs the stream's calibration,
 * known only at the end of the pass), then MPI events are processed in
 * global time order (receives at their end, a collective's member once the
 * members it waits for have entered) and every receive or collective
 * member leaves a base on its flow. An event's corrected start depends on
 * the bases before it in its flow only, all made by the time anything
 * needs it (they end before it starts): it is computed on first use, from
 * the last base before it, which may be later than the partner's own
 * processing (an MPI_Sendrecv whose partner ends later).
 * Apply: exporters walk the events again; a cursor per flow finds the base
 * in force and subtracts what the tracer added since.
 * Storage: what grows with the trace (records, bases, busy intervals) is in
 * big arrays (grow.h) that spill to disk beyond the heap budget.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/causality.h"
#include "manager/post/perturb.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/mpi_ends.h"
#include "manager/post/reqtab.h"
#include "proto/error.h"
#include "proto/trace.h"

#define MAX_FLOWS (1u << 20)

struct base {
	uint64_t idx;		/* event index in the flow (its end is the base) */
	int64_t tb, tb_a;	/* raw and corrected time of the base */
	int64_t t0;		/* the base event's raw start */
	int64_t bound;		/* the most that may be removed at its end:
				 * the tracer cost that can have delayed it,
				 * its own flow's or a partner's it waited for */
	int64_t a_b;		/* alpha accumulated through the base event */
	int64_t start_a;	/* the base event's own corrected start */
};

/* What the tracer cost a flow up to a point, counted along the flow. */
struct acc {
	uint64_t nw;		/* wrapped events at the calibrated cost */
	uint64_t nstd;		/* buffered stdio calls among them */
	uint64_t nm;		/* MPI events at the calibrated accounting cost */
	int64_t flush;		/* flush ns (the tracer's work in the thread) */
	int64_t wait;		/* ns waited for room in the ring (FLUSH
				 * records of no records: post-mortem) */
	uint64_t nwait;
	int64_t wait_open;	/* waits' off-CPU ns since the last COMPUTE */
	int64_t stolen;		/* ns the thread was off the CPU in COMPUTE */
	int64_t meas;		/* the MPI sensor's work measured in situ */
	int64_t mx;		/* the gaps' excess over their flow's bound
				 * (gap_caps): off the CPU, counted with stolen */
	/* measuring: the gaps around an MPI event that follows a COMPUTE
	 * event hold nothing but the MPI sensor's accounting (its reads, the
	 * COMPUTE and MPI records): the gap from the COMPUTE end to the MPI
	 * start, and from the MPI end to the next COMPUTE start */
	int prev_comp;		/* the flow's previous event was COMPUTE */
	int pending;		/* a measured MPI event awaits its exit gap */
	int64_t comp_t1, mpi_t1;
	uint64_t nmeas;		/* measured MPI events so far */
	int64_t pend_cold;	/* the cold start taken off the last one */
	int64_t out_ps;		/* their cost outside the gaps (cost_out, but
				 * no more than the COMPUTE event after) */
};

/* After a measured MPI event: its exit gap (ns) and its cost outside the
 * gaps (ps), known at the COMPUTE event after it, counted from its end;
 * and its cold start (ns, taken off its start: see cold_start). */
struct xgap {
	int64_t gap, out_ps, cold;
	int64_t ex;		/* the exit gap's excess over its bound */
};

/* A flow's gaps around its measured MPI events (in: before the call, the
 * cold start apart; out: after it): one up to its bound is the MPI
 * sensor's work; one beyond (a preemption) counts as the typical one (the
 * flow's median), the rest as time off the CPU when keep_excess (stolen,
 * auto), else left in. */
struct gcap {
	int64_t in, out;		/* bounds */
	int64_t in_med, out_med;	/* medians */
	int keep_excess;
};

#define GAP_FACTOR 10		/* the bound: this times the median gap ... */
#define GAP_FLOOR_NS 1000	/* ... and never less */
/* gap_caps' pass: a flow's gaps, and its state along the flow */
struct gapq {
	int64_t *in, *out;
	size_t nin, nout, capin, capout;
	int prev_comp, pending;
	int64_t comp_t1, mpi_t1;
};

struct flow {
	uint64_t stream;
	uint32_t tid, sidx;	/* sidx: index of its stream */
	/* build */
	uint64_t n;		/* events so far */
	struct acc a;
	int64_t first_t;
	int have_first;
	struct base *b;		/* in flow order (idx) */
	size_t nb, capb;
	struct xgap *xg;	/* what each measured MPI event leaves after it */
	size_t nxg, capxg;
	struct gcap gc;		/* its gaps' bounds (gap_caps) */
	struct gapq *gq;	/* gap_caps' pass only */
	int64_t last_t;		/* its last event's end */
	uint64_t nwrapped;	/* its events that are not the tracer's own */
	uint64_t nmpi;		/* its MPI events */
	int helper;		/* a tracer thread (sender, memory sampler):
				 * moved with its process's main thread */
	int follower;		/* a program thread without MPI events (an MPI
				 * library's progress thread, a worker): its own
				 * cost and its main thread's removal taken off */
	/* the main thread (tid 0): its FLUSH events (the tracer's work in
	 * it: the start-up calibration, a drain), each with what the tracer
	 * cost the flow before it */
	struct fmark {
		uint64_t idx;
		int64_t t0, t1;
		struct acc a;
		int64_t a0;	/* its corrected start (marks_corrected) */
	} *fm;
	size_t nfm, capfm;
	/* the main thread: its removal (traced - corrected) at its bases'
	 * and FLUSH events' starts and ends, in time order, for its helpers
	 * and followers */
	struct rpt { int64_t t, rem; } *pt;
	size_t npt, cappt;
	/* apply */
	uint64_t an;
	struct acc aa;
	int64_t a_mpi_end;	/* corrected end of the last measured MPI event */
	size_t ab;		/* bases passed */
	size_t am;		/* FLUSH marks passed */
};

struct sinfo {
	uint64_t id;
	int rank;		/* MPI world rank, -1 */
	int64_t cost;		/* calibrated ps per wrapped event */
	int have_cost;		/* cost came from a CALIB event */
	int64_t cost_stdio;	/* ps per buffered stdio call (CALIB evtype FWRITE), -1 */
	int64_t cost_mpi;	/* extra per MPI event (CALIB evtype COMPUTE) */
	int64_t cost_out;	/* ps per measured MPI event outside its gaps
				 * (CALIB evtype MPI_INIT) */
	int64_t cost_prog;	/* the same for a call that runs the progress
				 * engine (CALIB evtype MPI_IPROBE), -1 */
	int has_compute;	/* the stream has COMPUTE events (MPI sensor) */
	/* the tracer threads' busy intervals (FLUSH, SEND events) by end
	 * time, with prefix sums of their durations (indirect = busy) */
	int64_t *bend, *bpre;
	size_t nb, capend, cappre;
};

struct rec {			/* an MPI event */
	uint64_t pos;		/* position in yield order */
	uint32_t flow;
	uint16_t type;
	uint8_t arrived, is_recv;
	uint8_t done, has_ta0;	/* processed; ta0 computed */
	uint64_t idx;		/* event index in its flow */
	struct acc a;		/* the tracer's cost before it */
	int64_t probe;		/* ns of the arrived probe inside it */
	int64_t t0, t1;		/* global repaired times */
	int64_t bytes, rbytes;	/* rbytes: a collective's, -1 if none */
	uint8_t takes;		/* a collective member that takes data
				 * (mgr_coll_role): else it waits for nobody */
	int64_t coll, coll_comm;	/* collective: the stream's n-th on the
					 * communicator named coll_comm; -1 */
	int64_t crank, root;	/* its rank in that communicator, the root's (-1) */
	int ckind;		/* MGR_CK_*: who it waits for */
	int64_t send;		/* matched send record, -1 */
	int64_t key;
	int64_t ta0, ta1;
	int64_t inst;		/* its collective instance (p->ci), -1 */
	uint32_t ipos;		/* its place among the instance's members */
	int64_t done_by;	/* MPI_Isend: the sender's call that completed
				 * its request (wait, test), -1 */
	int64_t after;		/* collective: what it took after the latest
				 * traced entry it waited for (collective_tails) */
};

/* The MPI_Isend records whose request no call has completed yet: in p->pend
 * by (stream, request), the record in its data. */
#define PEND_MAX (1u << 20)	/* beyond, departures stay at the Isend */

/* A collective member's entry in p->ix: its record, and in a scan the
 * latest corrected entry of the members up to it, once known. */
struct cmember {
	uint64_t r;
	int64_t pm_a;
	int has_pm;
};

/* A collective instance: its members are p->ix[lo .. lo + n), records in
 * rank order for a scan; the kind resolved (a rooted kind without exactly
 * one member at the root, a scan without distinct ranks: barrier). */
struct cinst {
	uint64_t lo;
	uint32_t n;
	int kind;
	int counted;		/* in the stats */
	int have_m;
	int64_t root;		/* record index of the root, -1 */
	int64_t m_a;		/* latest corrected entry of all members */
	int have_bound;
	int64_t bound;		/* the largest of the members' bounds at entry */
};

struct mgr_perturb {
	struct flow *f;
	size_t nf, capf;
	struct sinfo *s;
	size_t ns, caps;
	uint32_t *fmap;		/* open addressing: flow index + 1 */
	size_t fmapcap;
	struct rec *r;
	size_t nr, capr;
	struct mgr_perturb_stats st;
	struct mgr_comms *comms;	/* names, collectives' numbers */
	struct cinst *ci;		/* collective instances */
	size_t nci, capci;
	struct cmember *ix;		/* their members */
	struct mgr_reqtab pend;		/* pending MPI_Isend requests */
	size_t capix;
	int indirect;		/* INDIRECT_* */
	double model_max_bytes;	/* the largest size among the model's kept points */
	int error;
};

static uint32_t stream_idx(struct mgr_perturb *p, uint64_t id)
{
	for (size_t i = p->ns; i-- > 0;)
		if (p->s[i].id == id)
			return (uint32_t)i;
	if (mgr_grow((void **)&p->s, &p->caps, p->ns + 1, sizeof(*p->s))) {
		p->error = PROTO_E_NOMEM;
		return 0;
	}
	memset(&p->s[p->ns], 0, sizeof(p->s[0]));
	p->s[p->ns].id = id;
	p->s[p->ns].cost_stdio = -1;
	p->s[p->ns].cost_prog = -1;
	return (uint32_t)p->ns++;
}

/* index of flow (stream, tid), created when create; UINT32_MAX if none */
static uint32_t flow_idx(struct mgr_perturb *p, uint64_t stream, uint32_t tid,
			 int create)
{
	if (create && (p->nf + 1) * 2 > p->fmapcap) {
		size_t ncap = p->fmapcap ? p->fmapcap * 2 : 256;
		uint32_t *nm = calloc(ncap, sizeof(*nm));

		if (!nm || p->nf >= MAX_FLOWS) {
			free(nm);
			p->error = PROTO_E_NOMEM;
			return UINT32_MAX;
		}
		for (size_t i = 0; i < p->nf; i++) {
			size_t k = mgr_hash2(p->f[i].stream, p->f[i].tid) & (ncap - 1);
			while (nm[k])
				k = (k + 1) & (ncap - 1);
			nm[k] = (uint32_t)i + 1;
		}
		free(p->fmap);
		p->fmap = nm;
		p->fmapcap = ncap;
	}
	if (!p->fmapcap)
		return UINT32_MAX;
	size_t k = mgr_hash2(stream, tid) & (p->fmapcap - 1);
	while (p->fmap[k]) {
		struct flow *f = &p->f[p->fmap[k] - 1];

		if (f->stream == stream && f->tid == tid)
			return p->fmap[k] - 1;
		k = (k + 1) & (p->fmapcap - 1);
	}
	if (!create)
		return UINT32_MAX;
	if (mgr_grow((void **)&p->f, &p->capf, p->nf + 1, sizeof(*p->f))) {
		p->error = PROTO_E_NOMEM;
		return UINT32_MAX;
	}
	memset(&p->f[p->nf], 0, sizeof(p->f[0]));
	p->f[p->nf].stream = stream;
	p->f[p->nf].tid = tid;
	p->f[p->nf].sidx = stream_idx(p, stream);
	p->fmap[k] = (uint32_t)p->nf + 1;
	return (uint32_t)p->nf++;
}

enum {
	INDIRECT_NONE = 0,	/* the tracer has cores of its own */
	INDIRECT_BUSY = 1,	/* its threads' busy time, against the main thread */
	INDIRECT_STOLEN = 2,	/* off-CPU time measured in COMPUTE intervals */
	INDIRECT_AUTO = 3,	/* stolen where the stream has COMPUTE events,
				 * else busy (the default) */
};

/* Busy time of stream si's tracer threads ended by t. */
static int64_t busy_before(const struct mgr_perturb *p, uint32_t si, int64_t t)
{
	const struct sinfo *s = &p->s[si];
	size_t lo = 0, hi = s->nb;

	if (!s->nb)
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->bend[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s->bpre[lo];
}

/* Time a thread spent off the CPU during a COMPUTE interval (wall time
 * minus the thread's CPU time, both measured by the MPI sensor): on a host
 * whose cores are all busy, the tracer's own threads and daemons take it
 * from the application. 0 for other events, without a CPU time (0: the
 * read failed), or when not counted. */
static int64_t stolen_ns(const struct mgr_perturb *p, const struct proto_event *ev,
			 int64_t t0, int64_t t1, int64_t waits)
{
	if ((p->indirect != INDIRECT_STOLEN && p->indirect != INDIRECT_AUTO) ||
	    ev->type != PROTO_EV_COMPUTE || ev->arg[0] <= 0)
		return 0;
	/* the waits for room inside the interval count on their own: their
	 * time off the CPU (waits) is not stolen again */
	int64_t wall = t1 - t0;

	if (ev->arg[0] >= wall || waits >= wall - ev->arg[0])
		return 0;
	return wall - ev->arg[0] - waits;
}

static int wrapped(const struct proto_event *ev)
{
	const struct proto_ev_info *i = proto_ev_info(ev->type);

	return i && i->category != PROTO_CAT_TRACER && i->category != PROTO_CAT_MEM;
}

/* A buffered stdio call: it usually stays in user space, where the
 * tracer's work overlaps with it (its own calibration, CALIB evtype FWRITE). */
static int is_stdio(const struct proto_event *ev)
{
	switch (ev->type) {
	case PROTO_EV_FREAD: case PROTO_EV_FWRITE: case PROTO_EV_FPRINTF:
	case PROTO_EV_VFPRINTF: case PROTO_EV_FPUTS: case PROTO_EV_FGETS:
	case PROTO_EV_FGETC: case PROTO_EV_FPUTC: case PROTO_EV_GETDELIM:
	case PROTO_EV_PRINTF: case PROTO_EV_PUTS:
		return 1;
	default:
		return 0;
	}
}

static int is_mpi(const struct proto_event *ev)
{
	const struct proto_ev_info *i = proto_ev_info(ev->type);

	return i && i->category == PROTO_CAT_MPI;
}

/* Account for ev (from t0 to t1) in c before its own alpha is taken: an
 * MPI event right after a COMPUTE event adds the gap between them (the
 * accounting reads and the COMPUTE record, measured); a COMPUTE event ends
 * the exit gap of the measured MPI event before it, returned in *xg (gap
 * -1: none), with that event's cost outside the gaps (out_ps, the stream's
 * calibration): the wrapper's work that the calibration found in the
 * COMPUTE event after the call, but no more than that event lasted (a
 * COMPUTE event between back-to-back calls, Irecv, Isend ..., may be
 * shorter than the calibration: the rest would have moved the next call
 * before the end of this one). The build adds them here, the apply pass at
 * that MPI event's end. */
static void acc_before(struct acc *c, const struct proto_event *ev,
		       int64_t t0, int64_t t1, int64_t out_ps, int build,
		       const struct gcap *gc, int64_t cold, struct xgap *xg)
{
	xg->gap = -1;
	xg->out_ps = 0;
	xg->cold = 0;
	xg->ex = 0;
	if (ev->type == PROTO_EV_COMPUTE) {
		if (c->pending) {
			int64_t d = t1 > t0 ? t1 - t0 : 0;

			xg->gap = t0 > c->mpi_t1 ? t0 - c->mpi_t1 : 0;
			if (xg->gap > gc->out) {	/* preempted: the rest */
				xg->ex = gc->keep_excess ? xg->gap - gc->out_med : 0;
				xg->gap = gc->out_med;
			}
			xg->out_ps = d <= out_ps / 1000 ? d * 1000 : out_ps;
			xg->cold = c->pend_cold;
			c->pending = 0;
			if (build) {
				c->meas = mgr_sat_add(c->meas, xg->gap);
				c->mx = mgr_sat_add(c->mx, xg->ex);
				c->out_ps = mgr_sat_add(c->out_ps, xg->out_ps);
			}
		}
		return;
	}
	if (!is_mpi(ev))
		return;
	if (c->pending) {	/* no COMPUTE after the last one: unmeasured */
		xg->gap = 0;
		xg->out_ps = out_ps;
		xg->cold = c->pend_cold;
		c->pending = 0;
		if (build)
			c->out_ps = mgr_sat_add(c->out_ps, out_ps);
	}
	if (c->prev_comp) {
		/* the entry gap: the cold start (taken off t0) counts whole */
		int64_t g = t0 > c->comp_t1 ? t0 - c->comp_t1 : 0;
		int64_t own = g > cold ? g - cold : 0;

		if (own > gc->in) {	/* preempted: the rest */
			if (gc->keep_excess)
				c->mx = mgr_sat_add(c->mx, own - gc->in_med);
			g -= own - gc->in_med;
		}
		c->meas = mgr_sat_add(c->meas, g);
	}
}

/* A FLUSH record with no records: an application thread waited for the
 * sender to make room in its ring (post-mortem mode), sleeping; the
 * sender's own FLUSH records always carry records. */
static int is_wait(const struct proto_event *ev)
{
	return ev->type == PROTO_EV_FLUSH && ev->arg[0] == 0 && ev->arg[1] == 0;
}

/* Account for ev in c after it; 1 if it is a measured MPI event (its costs
 * are in the gaps around it, not at the calibrated rates). */
static int acc_after(const struct mgr_perturb *p, struct acc *c,
		     const struct proto_event *ev, int64_t t0, int64_t t1)
{
	int measured = 0;

	if (is_mpi(ev) && c->prev_comp) {
		measured = 1;
		c->pending = 1;
		c->mpi_t1 = t1;
		c->nmeas++;
	} else {
		/* a run of stdio calls paid the wrapper once a call */
		if (wrapped(ev))
			c->nw += proto_ev_calls(ev);
		if (is_stdio(ev))
			c->nstd += proto_ev_calls(ev);
		if (is_mpi(ev))
			c->nm++;
	}
	if (ev->type == PROTO_EV_FLUSH) {
		if (is_wait(ev)) {
			c->wait = mgr_sat_add(c->wait, t1 - t0);
			/* its time off the CPU (its sleep loop's CPU
			 * time, cpu_ns, is on it) */
			c->wait_open = mgr_sat_add(c->wait_open, t1 - t0 -
						   (ev->arg[2] > 0 && ev->arg[2] < t1 - t0 ?
						    ev->arg[2] : 0));
			c->nwait++;
		}
		else
			c->flush = mgr_sat_add(c->flush, t1 - t0);
	}
	c->stolen = mgr_sat_add(c->stolen, stolen_ns(p, ev, t0, t1, c->wait_open));
	c->prev_comp = ev->type == PROTO_EV_COMPUTE;
	if (c->prev_comp) {
		c->comp_t1 = t1;
		c->wait_open = 0;
	}
	return measured;
}

/* A CALIB record's cost in ps: its cost_ps when the sensor sent one (a
 * cost of a few ns rounded to whole ns was off by up to 0.5 ns a call:
 * 3 % of a run of cheap calls), else cost_ns. */
#define COST_MAX_NS 1000000000	/* a second an event: beyond, damage */
static int64_t cost_ns(int64_t v)
{
	return v < 0 ? 0 : v > COST_MAX_NS ? COST_MAX_NS : v;
}

static int64_t calib_ps(const struct proto_event *ev)
{
	return ev->arg[3] > 0 ? cost_ns(ev->arg[3] / 1000) * 1000 + ev->arg[3] % 1000 :
	       cost_ns(ev->arg[1]) * 1000;
}

/* Remember the MPI_Isend record rec of (stream, req). 0 or PROTO_E_NOMEM;
 * past PEND_MAX pending requests, forgotten. */
static int pend_put(struct mgr_perturb *p, uint64_t stream, int64_t req, uint64_t rec)
{
	struct mgr_req q = {.data = rec};
	int rc = mgr_reqtab_put(&p->pend, stream, req, &q);

	return rc == PROTO_E_FULL ? 0 : rc;
}

/* A call of stream completed request req: the MPI_Isend it started, if
 * any, learns which (done_by), and is forgotten. */
static void pend_done(struct mgr_perturb *p, uint64_t stream, int64_t req, uint64_t by)
{
	struct mgr_req q;

	if (mgr_reqtab_take(&p->pend, stream, req, &q))
		p->r[q.data].done_by = (int64_t)by;
}

/* The request ends of one event of a stream (pending_requests). */
struct pend_ctx {
	struct mgr_perturb *p;
	uint64_t stream, rec;
};

static int pend_end(void *arg, const struct mgr_end *e)
{
	struct pend_ctx *x = arg;

	if (e->kind == MGR_END_ISEND)
		return pend_put(x->p, x->stream, e->req, x->rec);
	if (e->kind == MGR_END_DONE || e->kind == MGR_END_FREE)
		pend_done(x->p, x->stream, e->req, x->rec);
	return 0;
}

/* An MPI_Isend's request (a started send's too) is pending until a call of
 * its stream completes it (MPI_Wait, MPI_Waitany, MPI_Waitall, MPI_Test
 * that found it done ...) or frees it: rec, the record of that call, is
 * its done_by. 0 or PROTO_E_NOMEM. */
static int pending_requests(struct mgr_perturb *p, const struct proto_trace_event *te,
			    uint64_t stream, uint64_t rec)
{
	struct pend_ctx x = {p, stream, rec};

	return mgr_mpi_ends(te, pend_end, &x);
}

/* ns of the sensor's arrived probe inside te's call (MPI_Recv's probe_ns,
 * MPI_Sendrecv's in its ARRAY), 0 if none. */
static int64_t event_probe(const struct proto_trace_event *te)
{
	const struct proto_event *ev = te->ev;
	int a = proto_ev_arg(ev->type, PROTO_F_probe_ns);

	if (proto_ev_base(ev->type) == PROTO_EV_MPI_SENDRECV)
		return te->array && te->narray >= 3 && te->array[2] > 0 ? te->array[2] : 0;
	return a >= 0 && ev->arg[a] > 0 ? ev->arg[a] : 0;
}

/* The cold start of a measured MPI call that runs the progress engine (all
 * but MPI_Comm_rank and MPI_Comm_size): after the sensor's reads (above all
 * a counter read that traps to the hypervisor) its code runs that much
 * slower than the wrapper's calibration on MPI_Comm_rank says: the
 * stream's MPI_Iprobe calibration less its MPI_Comm_rank one (tens of ns
 * with a counter that traps, about 0 with CPU time: bench/call_residual.sh
 * measures what is left; bench/RESULTS.md). Taken off the call's start, as
 * the tracer's
 * work before it; not where the sensor's arrived probe ran first (MPI_Recv,
 * MPI_Sendrecv): the probe took the cold start, removed as probe_ns. At
 * most the call's duration. */
static int64_t cold_start(const struct sinfo *si, const struct proto_trace_event *te,
			  int64_t t0, int64_t t1)
{
	uint16_t t = te->ev->type;
	int64_t c = si->cost_prog > si->cost_out ? (si->cost_prog - si->cost_out) / 1000 : 0;

	if (!c || t == PROTO_EV_MPI_COMM_RANK || t == PROTO_EV_MPI_COMM_SIZE || event_probe(te))
		return 0;
	return c < t1 - t0 ? c : t1 > t0 ? t1 - t0 : 0;
}

/* A CALIB event's figures into its stream's costs. */
static void note_calibration(struct sinfo *si, const struct proto_event *ev)
{
	/* the lowest of a stream's calibrations (the sensor's at start-up
	 * and at exit): other work only ever slows one down */
	if (ev->arg[0] == 0 && (!si->have_cost || calib_ps(ev) < si->cost)) {
		si->cost = calib_ps(ev);
		si->have_cost = 1;
	}
	if (ev->arg[0] == PROTO_EV_COMPUTE)
		si->cost_mpi = cost_ns(ev->arg[1]);
	if (ev->arg[0] == PROTO_EV_MPI_INIT)
		si->cost_out = calib_ps(ev);
	if (ev->arg[0] == PROTO_EV_FWRITE &&
	    (si->cost_stdio < 0 || calib_ps(ev) < si->cost_stdio))
		si->cost_stdio = calib_ps(ev);
	if (ev->arg[0] == PROTO_EV_MPI_IPROBE)
		si->cost_prog = calib_ps(ev);
}

/* A FLUSH (not a wait) or SEND of the sensor: where a batch ends and how
 * long its making took, into the stream's bend and bpre. 0, or a negative
 * PROTO_E_*. */
static int add_batch_end(struct sinfo *si, const struct proto_event *ev,
			 int64_t t0, int64_t t1)
{
	int rc;

	if ((rc = mgr_big_grow((void **)&si->bend, &si->capend, si->nb + 1,
			       sizeof(*si->bend))) ||
	    (rc = mgr_big_grow((void **)&si->bpre, &si->cappre, si->nb + 2,
			       sizeof(*si->bpre))))
		return rc;
	/* durations ride in bpre until the prefix sums are made: the thread's
	 * CPU time when the event has it (its wall time also counts the
	 * moments it waited for a core), else the wall time */
	int c = proto_ev_arg(ev->type, PROTO_F_cpu_ns);
	int64_t d = t1 > t0 ? t1 - t0 : 0;
	if (c >= 0 && ev->arg[c] > 0 && ev->arg[c] < d)
		d = ev->arg[c];
	si->bend[si->nb] = t1;
	si->bpre[si->nb] = d;
	si->nb++;
	return 0;
}

static void on_event(struct mgr_perturb *p, const struct proto_trace_event *te,
		     uint64_t pos, mgr_perturb_time_fn time, void *arg)
{
	const struct proto_event *ev = te->ev;
	uint32_t fi = flow_idx(p, te->stream->id, ev->tid, 1);

	if (fi == UINT32_MAX)
		return;
	struct flow *f = &p->f[fi];
	int64_t t0 = time(arg, f->stream, ev->t_start);
	int64_t t1 = time(arg, f->stream, ev->t_end);

	if (!f->have_first) {
		f->first_t = t0;
		f->have_first = 1;
	}
	if (t1 > f->last_t)
		f->last_t = t1;
	if (wrapped(ev) || is_mpi(ev))
		f->nwrapped++;
	if (is_mpi(ev))
		f->nmpi++;
	if (ev->tid == 0 && ev->type == PROTO_EV_FLUSH) {
		if ((p->error = mgr_big_grow((void **)&f->fm, &f->capfm, f->nfm + 1,
					     sizeof(*f->fm))))
			return;
		f->fm[f->nfm++] = (struct fmark){f->n, t0, t1, f->a, t0};
	}
	if (ev->type == PROTO_EV_COMPUTE)
		p->s[f->sidx].has_compute = 1;
	if (ev->type == PROTO_EV_CALIB)
		note_calibration(&p->s[f->sidx], ev);
	const struct proto_ev_info *info = proto_ev_info(ev->type);
	int64_t cold = 0;
	if (is_mpi(ev) && f->a.prev_comp) {	/* measured */
		cold = cold_start(&p->s[f->sidx], te, t0, t1);
		t0 += cold;
		p->st.cold_ns = mgr_sat_add(p->st.cold_ns, cold);
		p->st.cold_events += cold > 0;
	}
	struct xgap xg;
	acc_before(&f->a, ev, t0, t1, p->s[f->sidx].cost_out, 1, &f->gc, cold, &xg);
	if (xg.gap >= 0) {
		if ((p->error = mgr_big_grow((void **)&f->xg, &f->capxg,
					     f->nxg + 1, sizeof(*f->xg))))
			return;
		f->xg[f->nxg++] = xg;
	}
	if (info && info->category == PROTO_CAT_MPI) {
		int rc = mgr_comms_event(p->comms, f->stream, ev, te->array, te->narray);
		if (rc || (rc = mgr_big_grow((void **)&p->r, &p->capr, p->nr + 1,
					     sizeof(*p->r)))) {
			p->error = rc;
			return;
		}
		struct rec *r = &p->r[p->nr++];
		memset(r, 0, sizeof(*r));
		r->pos = pos;
		r->flow = fi;
		r->type = ev->type;
		r->idx = f->n;
		r->a = f->a;
		r->t0 = t0;
		r->t1 = t1;
		r->send = -1;
		r->done_by = -1;
		r->coll = r->coll_comm = -1;
		int a = proto_ev_arg(ev->type, PROTO_F_arrived);
		r->arrived = a >= 0 && ev->arg[a] > 0;
		r->probe = event_probe(te);
		if (proto_ev_base(ev->type) == PROTO_EV_MPI_SENDRECV && te->array &&
		    te->narray >= 3)	/* rtag, arrived, probe_ns */
			r->arrived = te->array[1] > 0;
		if (r->probe > t1 - t0)
			r->probe = t1 - t0;
		if (ev->type == PROTO_EV_MPI_WAITALL && te->array) {
			r->arrived = 1;	/* all of its receives had arrived */
			for (size_t i = 3; i < te->narray; i += 4)
				if (!te->array[i])
					r->arrived = 0;
		}
		int b = proto_ev_arg(ev->type, PROTO_F_bytes);
		r->bytes = b >= 0 ? ev->arg[b] : 0;
		int rb = proto_ev_arg(ev->type, PROTO_F_rbytes);
		r->rbytes = rb >= 0 ? ev->arg[rb] : -1;
		if ((p->error = pending_requests(p, te, f->stream, p->nr - 1)))
			return;
		/* a collective on a communicator with a job-wide name: the
		 * stream's n-th on it is one instance with the members' n-th */
		int c = proto_ev_arg(ev->type, PROTO_F_comm);
		if (proto_ev_collective(ev->type) && c >= 0) {
			int ri = proto_ev_arg(ev->type, PROTO_F_root);

			r->ckind = mgr_comms_coll_kind(ev->type);
			r->root = ri >= 0 ? ev->arg[ri] : -1;
			/* world: the stream's rank, known once the pass is over */
			r->crank = mgr_comms_rank(p->comms, f->stream, ev->arg[c]);
			r->coll_comm = mgr_comms_name(p->comms, f->stream, ev->arg[c]);
			r->coll = mgr_comms_next_coll(p->comms, f->stream,
						      r->coll_comm, &rc);
			if (rc) {
				p->error = rc;
				return;
			}
		}
	}
	f->n++;
	if (acc_after(p, &f->a, ev, t0, t1))
		f->a.pend_cold = cold;
	if ((ev->type == PROTO_EV_FLUSH && !is_wait(ev)) || ev->type == PROTO_EV_SEND) {
		int rc = add_batch_end(&p->s[f->sidx], ev, t0, t1);

		if (rc)
			p->error = rc;
	}
}

static struct rec *rec_at(struct mgr_perturb *p, uint64_t pos)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {	/* records are appended in pos order */
		size_t mid = (lo + hi) / 2;

		if (p->r[mid].pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr && p->r[lo].pos == pos ? &p->r[lo] : NULL;
}

static void on_match(void *arg, uint64_t send_pos, uint64_t recv_pos)
{
	struct mgr_perturb *p = arg;
	struct rec *s = rec_at(p, send_pos), *r = rec_at(p, recv_pos);

	if (!s || !r || s == r)
		return;
	r->is_recv = 1;
	/* a waitall completes several: the latest send constrains it, and
	 * its size is that message's (MPI_Waitall records none of its own) */
	if (r->send < 0 || p->r[r->send].t0 < s->t0) {
		r->send = s - p->r;
		if (proto_ev_arg(r->type, PROTO_F_bytes) < 0)
			r->bytes = s->bytes;
	}
}

/* The tracer's cost to flow f before the point at time t: nw wrapped events
 * at the calibrated cost, nm MPI events at the MPI sensor's accounting cost,
 * the flow's own flushes and waits, and the indirect part
 * (TAPESTRY_PERTURB_INDIRECT): busy: for the main thread, the busy time of
 * the process's tracer threads ended by t; stolen: the flow's off-CPU time
 * in COMPUTE intervals; auto (default): stolen where the stream has
 * COMPUTE events, else busy; 0: none. */
/* The flow's time off the CPU counted as the tracer's, by t: what its
 * COMPUTE intervals lost (stolen), but never more than the process's
 * tracer threads ran by then (their CPU time, busy_before): the rest was
 * the host's other work (other ranks, other programs: an oversubscribed
 * host), which the traced run and an untraced one both suffer. */
static int64_t stolen_capped(const struct mgr_perturb *p, const struct flow *f,
			     const struct acc *c, int64_t t)
{
	int64_t b, off = mgr_sat_add(c->stolen, c->mx);

	if (!off)
		return 0;
	b = busy_before(p, f->sidx, t);
	return off < b ? off : b;
}

static int64_t alpha_before(const struct mgr_perturb *p, const struct flow *f,
			    const struct acc *c, int64_t t)
{
	const struct sinfo *si = &p->s[f->sidx];
	int64_t std = si->cost_stdio >= 0 ? si->cost_stdio : si->cost;
	/* saturated sums (grow.h): a damaged trace's costs cannot overflow */
	int64_t a = mgr_sat_wide(((__int128)(c->nw - c->nstd) * si->cost +
				  (__int128)c->nstd * std + c->out_ps) /
				 1000);

	a = mgr_sat_add(a, mgr_sat_wide((__int128)c->nm * si->cost_mpi));
	a = mgr_sat_add(mgr_sat_add(a, c->flush),
			mgr_sat_add(stolen_capped(p, f, c, t), c->meas));
	/* a wait for room counts as it is, but for the main thread in busy
	 * mode: the sender's busy time, charged to it, covers the wait (the
	 * sender drains while the thread sleeps) */
	if (f->tid == 0 && (p->indirect == INDIRECT_BUSY ||
			    (p->indirect == INDIRECT_AUTO && !si->has_compute)))
		a = mgr_sat_add(a, busy_before(p, f->sidx, t));
	else
		a = mgr_sat_add(a, c->wait);
	return a;
}

static int64_t corrected(const struct base *b, int64_t t, int64_t a_before)
{
	return mgr_sat_add(mgr_sat_add(b->tb_a, t - b->tb),
			   -mgr_sat_add(a_before, -b->a_b));
}

/* The last base of f before its event idx; *b0 (the flow's start) if none. */
static const struct base *base_before(const struct flow *f, uint64_t idx,
				      struct base *b0)
{
	size_t lo = 0, hi = f->nb;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->b[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		return &f->b[lo - 1];
	*b0 = (struct base){0, f->first_t, f->first_t, f->first_t, 0, 0, 0};
	return b0;
}

/* x's corrected start, computed once: the bases before it are all made by
 * the time anything asks (see the top of the file). */
static int64_t start_a(const struct mgr_perturb *p, struct rec *x)
{
	if (!x->has_ta0) {
		const struct flow *f = &p->f[x->flow];
		struct base b0;

		x->ta0 = corrected(base_before(f, x->idx, &b0), x->t0,
				   alpha_before(p, f, &x->a, x->t0));
		x->has_ta0 = 1;
	}
	return x->ta0;
}

/* The most that may be removed at x's start: its last base's bound plus
 * the tracer's cost in its flow since. */
static int64_t bound_at(const struct mgr_perturb *p, const struct rec *x)
{
	const struct flow *f = &p->f[x->flow];
	struct base b0;
	const struct base *b = base_before(f, x->idx, &b0);

	return mgr_sat_add(b->bound, alpha_before(p, f, &x->a, x->t0) - b->a_b);
}

/* r's end becomes a base of its flow, kept in flow order (a damaged
 * trace may make them out of order: moved into place). */
static int add_base(struct mgr_perturb *p, struct flow *f, const struct rec *r,
		    int64_t start_a, int64_t end_a, int64_t bound)
{
	int rc = mgr_big_grow((void **)&f->b, &f->capb, f->nb + 1, sizeof(*f->b));
	if (rc)
		return rc;
	size_t k = f->nb++;

	while (k > 0 && f->b[k - 1].idx > r->idx) {
		f->b[k] = f->b[k - 1];
		k--;
	}
	struct base *b = &f->b[k];
	b->idx = r->idx;
	b->tb = r->t1;
	b->t0 = r->t0;
	/* the tracer's work for the base event itself comes after its end:
	 * acc restarts at alpha(base), as in [004] */
	b->a_b = alpha_before(p, f, &r->a, r->t0);
	/* never more removed than the tracer cost the flow so far, never
	 * later than traced: the rules above place a receive or a member
	 * from its partners' corrected times and a model; where they would
	 * remove more (a wait that was the program's own: a polling loop,
	 * ranks taking turns on fewer cores, a model that does not fit), the
	 * wait is kept (counted) */
	/* its own: the cost before it, and the sensor's arrived probe and
	 * cold start inside it */
	int64_t own = mgr_sat_add(bound_at(p, r), r->probe);
	if (bound < own)
		bound = own;
	if (end_a < r->t1 - bound) {
		p->st.capped++;
		p->st.capped_ns = mgr_sat_add(p->st.capped_ns, r->t1 - bound - end_a);
		end_a = r->t1 - bound;
	}
	if (end_a > r->t1)
		end_a = r->t1;
	if (start_a > end_a)
		start_a = end_a;
	b->tb_a = end_a;
	b->start_a = start_a;
	b->bound = bound;
	return 0;
}

/* A record's processing key with what orders it: sorted as such, the
 * comparisons read no record (pointers to records sorted by their fields
 * cost a cache miss, or a page of a spilled array, each). */
struct keyed {
	int64_t key;
	uint64_t pos;
	struct rec *r;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	int c = MGR_CMP(x->key, y->key);

	return c ? c : MGR_CMP(x->pos, y->pos);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return MGR_CMP(x, y);
}

/* The call where the message of send s to receive r left, in the traced
 * run: an MPI_Isend's message may wait for its sender's progress (the
 * rendezvous of a message beyond the eager limit): when the receive ended
 * after the sender entered the call that completed the request, that
 * call; else the send itself. NULL for the send. */
static const struct rec *departure(const struct mgr_perturb *p, const struct rec *s,
				   const struct rec *r)
{
	const struct rec *w = s->done_by >= 0 ? &p->r[s->done_by] : NULL;

	return w && w->t0 > s->t0 && w->t0 <= r->t1 ? w : NULL;
}

/* When the message of r's send left: the start of the call it left in,
 * after the arrived probe an MPI_Sendrecv runs for its receive half
 * before it sends. */
static int64_t send_out(const struct mgr_perturb *p, const struct rec *r)
{
	const struct rec *s = &p->r[r->send], *w = departure(p, s, r);

	return w ? w->t0 : s->t0 + s->probe;
}

/* r's message had arrived when r began: its probe said so, and the message
 * did not wait for its sender's progress (a message beyond the eager limit
 * whose header the probe saw had not: its data moved in the sender's wait). */
static int msg_arrived(const struct mgr_perturb *p, const struct rec *r)
{
	return r->arrived && !(r->send >= 0 && departure(p, &p->r[r->send], r));
}

/* A receive that waited for its message gives a point of the communication
 * model: bytes -> end of the receive - departure of the message. It waited
 * if its message had not arrived and it was ready (probe done) before the
 * message left. */
static int model_point(const struct mgr_perturb *p, const struct rec *r,
		       double *x, double *y)
{
	if (!r->is_recv || r->send < 0 || msg_arrived(p, r) ||
	    r->t0 + r->probe > send_out(p, r))
		return 0;
	*x = (double)r->bytes;
	*y = (double)(r->t1 - send_out(p, r));
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return MGR_CMP(x, y);
}

/* Least squares of y = lat + slope x over the points whose residual from
 * (lat0, slope0) is within cut; the fit, the points kept and their
 * residual sum of squares. */
static uint64_t ols_within(const struct mgr_perturb *p, double lat0,
			   double slope0, double cut, double *lat, double *slope,
			   double *rss, double *vxx_out)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0, x, y;

	for (size_t i = 0; i < p->nr; i++)
		if (model_point(p, &p->r[i], &x, &y) &&
		    fabs(y - (lat0 + slope0 * x)) <= cut) {
			sx += x; sy += y; sxx += x * x; sxy += x * y; n++;
		}
	if (n < 1)
		return 0;
	double mx = sx / n, my = sy / n, vxx = sxx - n * mx * mx;
	*slope = n >= 3 && vxx > 0 ? (sxy - n * mx * my) / vxx : 0;
	if (*slope < 0)
		*slope = 0;
	*lat = my - *slope * mx;
	*vxx_out = vxx;
	*rss = 0;
	for (size_t i = 0; i < p->nr; i++)
		if (model_point(p, &p->r[i], &x, &y) &&
		    fabs(y - (lat0 + slope0 * x)) <= cut) {
			double e = y - (*lat + *slope * x);
			*rss += e * e;
		}
	return (uint64_t)n;
}

/* The communication model, fitted on the trace's waiting receives. Their
 * transit times have a long tail (a rank descheduled while its message
 * waits: milliseconds against a microsecond), which would drag a plain
 * least-squares fit: the points beyond 3 robust standard deviations
 * (1.4826 x the median absolute deviation) from the median are left out,
 * then the fit is redone around the first fit with the same cut. */
static void fit_model(struct mgr_perturb *p)
{
	double x, y, *v, med, mad, cut, lat, slope, rss, vxx;
	size_t n = 0;
	uint64_t kept;

	for (size_t i = 0; i < p->nr; i++)
		n += model_point(p, &p->r[i], &x, &y);
	p->st.model_points = n;
	if (!n)
		return;
	int rc;
	if (!(v = mgr_big_calloc(n, sizeof(*v), &rc))) {
		/* no room for the robust start: plain least squares */
		med = 0;
		cut = INFINITY;
	} else {
		size_t k = 0;

		for (size_t i = 0; i < p->nr; i++)
			if (model_point(p, &p->r[i], &x, &y))
				v[k++] = y;
		mgr_big_sort(v, n, sizeof(*v), cmp_double);
		med = v[n / 2];
		for (size_t i = 0; i < n; i++)
			v[i] = fabs(v[i] - med);
		mgr_big_sort(v, n, sizeof(*v), cmp_double);
		mad = v[n / 2];
		mgr_big_free(v);
		/* a floor: identical transits would leave nothing but them */
		cut = 3 * 1.4826 * (mad > 50 ? mad : 50);
	}
	if (!ols_within(p, med, 0, cut, &lat, &slope, &rss, &vxx))
		return;
	kept = ols_within(p, lat, slope, cut, &lat, &slope, &rss, &vxx);
	if (!kept)
		return;
	p->st.model_kept = kept;
	p->st.model_cut_ns = cut;
	for (size_t i = 0; i < p->nr; i++)
		if (model_point(p, &p->r[i], &x, &y) && fabs(y - (lat + slope * x)) <= cut &&
		    x > p->model_max_bytes)
			p->model_max_bytes = x;
	p->st.model_ns_per_byte = slope;
	p->st.model_latency_ns = lat > 0 ? lat : 0;
	if (kept >= 3) {
		p->st.model_resid_sd_ns = sqrt(rss / (double)(kept - 2));
		if (vxx > 0 && p->st.model_resid_sd_ns > 0)
			p->st.model_t_slope = slope / (p->st.model_resid_sd_ns / sqrt(vxx));
	}
}

/* The model's transit for r's message. */
static double model_ns(const struct mgr_perturb *p, const struct rec *r)
{
	return p->st.model_latency_ns + p->st.model_ns_per_byte * (double)r->bytes;
}

/* r's traced transit from its message's departure (out) is in the model's
 * tail, where the fit found descheduled ranks, not transits; only for a
 * size the fit kept points up to (a bigger message's transit is beyond
 * what the model knows, not a tail). */
static int in_tail(const struct mgr_perturb *p, const struct rec *r, int64_t out)
{
	return p->st.model_kept && (double)r->bytes <= p->model_max_bytes &&
	       (double)(r->t1 - out) > model_ns(p, r) + p->st.model_cut_ns;
}

/* A receive that found its message there or on its way: it had arrived,
 * or the receive was posted (probe done) after the message left. Its own
 * time (without the probe) is what a receive costs when it need not wait. */
static int late_receive(const struct mgr_perturb *p, const struct rec *r)
{
	return r->is_recv && r->send >= 0 &&
	       (msg_arrived(p, r) || r->t0 + r->probe > send_out(p, r));
}

/* The median own time of the late receives, -1 if fewer than 3. */
static int64_t late_receive_ns(struct mgr_perturb *p)
{
	size_t n = 0, k = 0;
	int64_t *v, med;
	int rc;

	for (size_t i = 0; i < p->nr; i++)
		n += late_receive(p, &p->r[i]);
	if (n < 3 || !(v = mgr_big_calloc(n, sizeof(*v), &rc)))
		return -1;
	for (size_t i = 0; i < p->nr; i++) {
		const struct rec *r = &p->r[i];

		if (late_receive(p, r))
			v[k++] = r->t1 - r->t0 - r->probe;
	}
	mgr_big_sort(v, n, sizeof(*v), cmp_i64);
	med = v[n / 2];
	mgr_big_free(v);
	p->st.copy_ns = (double)med;
	return med;
}

static int same_instance(const struct rec *x, const struct rec *y)
{
	return x->coll == y->coll && x->coll_comm == y->coll_comm;
}

static int cmp_instance(const void *a, const void *b)
{
	const struct rec *x = *(const struct rec *const *)a;
	const struct rec *y = *(const struct rec *const *)b;

	int c;

	if ((c = MGR_CMP(x->coll_comm, y->coll_comm)) || (c = MGR_CMP(x->coll, y->coll)))
		return c;
	return MGR_CMP(x->pos, y->pos);
}

static int cmp_crank(const void *a, const void *b)
{
	const struct rec *x = *(const struct rec *const *)a;
	const struct rec *y = *(const struct rec *const *)b;

	return MGR_CMP(x->crank, y->crank);
}

/* Group the collective records order[0..n) (sorted by instance) into
 * instances, resolve their kinds and give each member its processing key:
 * the latest entry of the members it waits for and its own (comms.h):
 * everyone's (barrier, allreduce ...); the root's for the others of bcast
 * and scatter, its own for the root; everyone's for the root of reduce
 * and gather, their own for the others; the lower ranks' and its own for
 * a scan. A member never leaves before those entries (repaired), so its
 * key is at most its end, and its flow's bases before it are made first. */
static int group_instances(struct mgr_perturb *p, struct rec **order, size_t n)
{
	int rc;

	if (!n)
		return 0;
	if ((rc = mgr_big_grow((void **)&p->ix, &p->capix, n, sizeof(*p->ix))))
		return rc;
	memset(p->ix, 0, n * sizeof(*p->ix));
	for (size_t i = 0, j; i < n; i = j) {
		int64_t m = INT64_MIN, root = -1;
		size_t roots = 0;

		for (j = i + 1; j < n && same_instance(order[j], order[i]); j++)
			;
		if ((rc = mgr_big_grow((void **)&p->ci, &p->capci, p->nci + 1, sizeof(*p->ci))))
			return rc;
		struct cinst *c = &p->ci[p->nci];
		*c = (struct cinst){.lo = i, .n = (uint32_t)(j - i), .kind = order[i]->ckind, .root = -1};
		for (size_t q = i; q < j; q++) {
			struct rec *x = order[q];

			m = x->t0 > m ? x->t0 : m;
			if (x->crank >= 0 && x->crank == x->root) {
				roots++;
				root = x - p->r;
			}
		}
		if ((c->kind == MGR_CK_FROM_ROOT || c->kind == MGR_CK_TO_ROOT) && roots != 1)
			c->kind = MGR_CK_ALL;
		if (c->kind == MGR_CK_FROM_ROOT || c->kind == MGR_CK_TO_ROOT)
			c->root = root;
		if (c->kind == MGR_CK_PREFIX) {
			qsort(order + i, j - i, sizeof(*order), cmp_crank);
			for (size_t q = i; q < j; q++)
				if (order[q]->crank < 0 || (q > i && order[q]->crank == order[q - 1]->crank))
					c->kind = MGR_CK_ALL;
		}
		int64_t pm = INT64_MIN, rt0 = root >= 0 ? p->r[root].t0 : 0;
		for (size_t q = i; q < j; q++) {
			struct rec *x = order[q];
			int is_root = x - p->r == c->root;

			p->ix[q].r = (uint64_t)(x - p->r);
			x->inst = (int64_t)p->nci;
			x->ipos = (uint32_t)(q - i);
			pm = x->t0 > pm ? x->t0 : pm;
			int gives, takes;
			mgr_coll_role(x->type, proto_ev_arg(x->type, PROTO_F_bytes) >= 0 ? x->bytes : -1,
				      x->rbytes, (c->kind == MGR_CK_FROM_ROOT || c->kind == MGR_CK_TO_ROOT) ?
				      is_root : 0, &gives, &takes);
			x->takes = (uint8_t)takes;
			if (!takes) {	/* no data in: MPI lets it leave at once */
				x->key = x->t0;
				continue;
			}
			switch (c->kind) {
			case MGR_CK_FROM_ROOT:
				x->key = is_root || x->t0 > rt0 ? x->t0 : rt0;
				break;
			case MGR_CK_TO_ROOT:
				x->key = is_root ? m : x->t0;
				break;
			case MGR_CK_PREFIX:
				x->key = pm;
				break;
			default:
				x->key = m;
			}
		}
		p->nci++;
	}
	return 0;
}

/* A collective member's time after the latest traced entry it waited for
 * (its key), grouped by call, size, root or not, and bytes. */
struct ctail {
	uint64_t group;
	int64_t bytes, after;
	uint64_t r;
};

static int cmp_ctail(const void *a, const void *b)
{
	const struct ctail *x = a, *y = b;
	int c;

	if ((c = MGR_CMP(x->group, y->group)) || (c = MGR_CMP(x->bytes, y->bytes)))
		return c;
	return MGR_CMP(x->after, y->after);
}

/* What each collective member took after the latest traced entry it waited
 * for, its after, is what it keeps once corrected; but in the tail of its
 * group's (beyond 3 robust sd of the median, as the communication model:
 * a member off the CPU inside the call, the tracer's threads running, which
 * the COMPUTE events' stolen time does not see) it takes the group's
 * median. */
static int collective_tails(struct mgr_perturb *p, size_t n)
{
	int rc;
	struct ctail *v = mgr_big_calloc(n + 1, sizeof(*v), &rc);
	int64_t *d;

	if (!v)
		return rc;
	if (!(d = mgr_big_calloc(n + 1, sizeof(*d), &rc))) {
		mgr_big_free(v);
		return rc;
	}
	for (size_t q = 0; q < n; q++) {
		struct rec *y = &p->r[p->ix[q].r];
		const struct cinst *c = &p->ci[y->inst];

		y->after = y->t1 - y->key;
		v[q] = (struct ctail){(uint64_t)y->type << 48 | (uint64_t)(c->n & 0x7fffffffu) << 1 |
				      (c->root == (int64_t)p->ix[q].r), y->bytes, y->after,
				      p->ix[q].r};
	}
	mgr_big_sort(v, n, sizeof(*v), cmp_ctail);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].group == v[i].group && v[j].bytes == v[i].bytes; j++)
			;
		if (j - i < 10)		/* too few to tell a tail */
			continue;
		int64_t med = v[i + (j - i) / 2].after;
		for (size_t q = i; q < j; q++)
			d[q - i] = v[q].after > med ? v[q].after - med : med - v[q].after;
		mgr_big_sort(d, j - i, sizeof(*d), cmp_i64);
		double mad = (double)d[(j - i) / 2];
		double cut = 3 * 1.4826 * (mad > 50 ? mad : 50);
		for (size_t q = i; q < j; q++)
			if ((double)(v[q].after - med) > cut) {
				p->r[v[q].r].after = med;
				p->st.collectives_tail++;
			}
	}
	mgr_big_free(d);
	mgr_big_free(v);
	return 0;
}

/* Processing keys: a collective member's as above, a matched receive's its
 * end, any other event's its start. order[] is left sorted by key. */
static int order_by_key(struct mgr_perturb *p, struct rec **order)
{
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < p->nr; i++) {
		struct rec *r = &p->r[i];

		r->key = r->is_recv && r->send >= 0 ? r->t1 : r->t0;
		r->inst = -1;
		if (r->coll >= 0)
			order[n++] = r;
	}
	mgr_big_sort(order, n, sizeof(*order), cmp_instance);
	if ((rc = group_instances(p, order, n)) || (rc = collective_tails(p, n)))
		return rc;
	struct keyed *k = mgr_big_calloc(p->nr + 1, sizeof(*k), &rc);

	if (!k)
		return rc;
	for (size_t i = 0; i < p->nr; i++)
		k[i] = (struct keyed){p->r[i].key, p->r[i].pos, &p->r[i]};
	mgr_big_sort(k, p->nr, sizeof(*k), cmp_keyed);
	for (size_t i = 0; i < p->nr; i++)
		order[i] = k[i].r;
	mgr_big_free(k);
	return 0;
}

/* The latest corrected entry of all of c's members. */
static void inst_latest(const struct mgr_perturb *p, struct cinst *c)
{
	if (c->have_m)
		return;
	c->m_a = INT64_MIN;
	for (uint32_t q = 0; q < c->n; q++) {
		int64_t xa = start_a(p, &p->r[p->ix[c->lo + q].r]);

		c->m_a = xa > c->m_a ? xa : c->m_a;
	}
	c->have_m = 1;
}

/* y's prefix maxima in a scan: from the nearest member before it that has
 * them (members are processed in about rank order). */
static void prefix_latest(struct mgr_perturb *p, const struct cinst *c,
			  struct rec *y)
{
	struct cmember *mb = &p->ix[c->lo];
	uint32_t q = y->ipos;
	int64_t pm_a = INT64_MIN;

	while (q > 0 && !mb[q - 1].has_pm)
		q--;
	if (q > 0)
		pm_a = mb[q - 1].pm_a;
	for (; q <= y->ipos; q++) {
		int64_t xa = start_a(p, &p->r[mb[q].r]);

		pm_a = xa > pm_a ? xa : pm_a;
		mb[q].pm_a = pm_a;
		mb[q].has_pm = 1;
	}
}

/* The corrected end of collective member y: it leaves after the corrected
 * entries it waits for as it left after the traced ones, end_a =
 * max(corrected entries waited for) + its after (t1 - max(traced entries
 * waited for), its key, or its group's median if in the tail:
 * collective_tails) (the barrier model, [004]), with who waits for whom by
 * kind (comms.h, group_instances). Its end is a base. */
static int collective_end(struct mgr_perturb *p, struct rec *y)
{
	struct cinst *c = &p->ci[y->inst];
	int64_t ya = start_a(p, y), w_a = ya;
	/* a rooted kind has its root (group_instances) */
	struct rec *rt = c->root >= 0 ? &p->r[c->root] : y;

	int64_t bound = 0;
	switch (y->takes ? c->kind : -1) {
	case -1:
		break;
	case MGR_CK_FROM_ROOT:
		if (rt != y) {
			int64_t ra = start_a(p, rt);

			w_a = ra > w_a ? ra : w_a;
			bound = bound_at(p, rt);
		}
		break;
	case MGR_CK_TO_ROOT:
		if (rt == y) {
			inst_latest(p, c);
			w_a = c->m_a;
		}
		break;
	case MGR_CK_PREFIX:
		prefix_latest(p, c, y);
		w_a = p->ix[c->lo + y->ipos].pm_a;
		break;
	default:
		inst_latest(p, c);
		w_a = c->m_a;
	}
	if (y->takes && c->kind != MGR_CK_FROM_ROOT && (c->kind != MGR_CK_TO_ROOT || rt == y)) {
		/* computed once an instance (its members' starts are fixed) */
		if (!c->have_bound) {
			c->bound = 0;
			for (uint32_t q = 0; q < c->n; q++) {
				int64_t bq = bound_at(p, &p->r[p->ix[c->lo + q].r]);

				c->bound = bq > c->bound ? bq : c->bound;
			}
			c->have_bound = 1;
		}
		bound = c->bound;
	}
	int64_t end_a = mgr_sat_add(w_a, y->after);
	if (end_a < ya)
		end_a = ya;
	y->ta1 = end_a;
	y->done = 1;
	if (!c->counted) {
		c->counted = 1;
		p->st.collectives++;
		if (y->coll_comm != 0)
			p->st.collectives_sub++;
	}
	return add_base(p, &p->f[y->flow], y, ya, end_a, bound);
}

static int process(struct mgr_perturb *p)
{
	int rc;
	struct rec **order = mgr_big_calloc(p->nr + 1, sizeof(*order), &rc);

	if (!order)
		return rc;
	for (size_t i = 0; i < p->nr; i++)	/* world ranks are final now */
		if (p->r[i].coll >= 0 && p->r[i].coll_comm == 0)
			p->r[i].crank = p->s[p->f[p->r[i].flow].sidx].rank;
	if ((rc = order_by_key(p, order)))
		goto fail;
	int64_t copy_ns = late_receive_ns(p);
	fit_model(p);
	for (size_t k = 0; k < p->nr; k++) {
		struct rec *r = order[k];
		struct flow *f = &p->f[r->flow];

		if (r->done)
			continue;
		if (r->inst >= 0) {
			if ((rc = collective_end(p, r)))
				goto fail;
			continue;
		}
		r->ta1 = start_a(p, r) + (r->t1 - r->t0);
		r->done = 1;
		if (!r->is_recv || r->send < 0)
			continue;
		/* the call its message left in, corrected: the send may be a
		 * receive processed later (MPI_Sendrecv), or the sender's
		 * wait that began before this receive ended */
		struct rec *s = &p->r[r->send], *w = (struct rec *)departure(p, s, r);
		int arrived = msg_arrived(p, r);
		if (!w)
			w = s;
		int64_t out = send_out(p, r), out_a = start_a(p, w);
		int64_t dr = r->t0 - r->ta0, ds = w->t0 - out_a, end_a;
		p->st.receives++;
		/* the arrived probe is the sensor's time inside the call */
		int64_t own = r->t1 - r->t0 - r->probe;
		p->st.probe_ns = mgr_sat_add(p->st.probe_ns, r->probe);
		if (arrived && dr <= ds) {
			end_a = r->ta0 + own;
			p->st.receives_arrived++;
		} else if (!late_receive(p, r) && dr > ds && !in_tail(p, r, out)) {
			/* it was ready before its message left: what it took
			 * after the departure is the transit (one ready after
			 * it, the message on its way, took its own lateness) */
			end_a = out_a + (r->t1 - out);
			p->st.receives_waited++;
		} else {
			double dm = model_ns(p, r);
			if (!late_receive(p, r) && dr > ds)
				p->st.receives_tail++;
			/* a damaged size or fit: kept where int64_t holds it */
			int64_t dcom = !(dm > 0) ? 0 : dm > (double)MGR_SAT_MAX ?
				       MGR_SAT_MAX : (int64_t)dm;
			/* never longer after its send than in the traced run:
			 * the sender, more perturbed, sent relatively earlier
			 * once corrected (where transits are mostly scheduling,
			 * ranks folded onto fewer cores, the model's typical
			 * value would otherwise stretch the run) */
			int64_t seen = r->t1 - out;
			if (seen >= 0 && seen < dcom)
				dcom = seen;
			end_a = out_a + dcom;
			/* a receive takes at least its own work: its copy
			 * time if its message had arrived, else what the
			 * trace's late receives took (their median) */
			int64_t least = arrived ? own : copy_ns >= 0 ? copy_ns :
					own < dcom ? own : dcom;
			if (end_a < r->ta0 + least)
				end_a = r->ta0 + least;
			p->st.receives_model++;
		}
		if (end_a < r->ta0)
			end_a = r->ta0;
		r->ta1 = end_a;
		if ((rc = add_base(p, f, r, r->ta0, end_a, bound_at(p, w))))
			goto fail;
	}
	rc = 0;
fail:
	mgr_big_free(order);
	return rc;
}

/* A point of the main thread's removal, kept in time order. */
static int add_point(struct flow *m, int64_t t, int64_t rem)
{
	int rc;

	if (m->npt && t < m->pt[m->npt - 1].t)
		return 0;
	if ((rc = mgr_big_grow((void **)&m->pt, &m->cappt, m->npt + 1, sizeof(*m->pt))))
		return rc;
	m->pt[m->npt++] = (struct rpt){t, rem};
	return 0;
}

/* The corrected start of each FLUSH event of the main threads (the bases
 * are all made). */
static void marks_corrected(const struct mgr_perturb *p)
{
	for (size_t i = 0; i < p->nf; i++) {
		struct flow *m = &p->f[i];
		struct base b0;

		for (size_t j = 0; j < m->nfm; j++) {
			struct fmark *k = &m->fm[j];

			k->a0 = corrected(base_before(m, k->idx, &b0), k->t0,
					  alpha_before(p, m, &k->a, k->t0));
		}
	}
}

/* Main thread m's removal points: at its start (0), at each base's and
 * each FLUSH event's start and end (a FLUSH is wholly the tracer's: its
 * corrected end is its corrected start), and at its last event's end. */
static int main_points(const struct mgr_perturb *p, struct flow *m)
{
	size_t i = 0, j = 0;
	struct base b0;
	int rc;

	if ((rc = add_point(m, m->first_t, 0)))
		return rc;
	while (i < m->nb || j < m->nfm) {
		if (j >= m->nfm || (i < m->nb && m->b[i].idx < m->fm[j].idx)) {
			const struct base *b = &m->b[i++];

			if ((rc = add_point(m, b->t0, b->t0 - b->start_a)) ||
			    (rc = add_point(m, b->tb, b->tb - b->tb_a)))
				return rc;
			continue;
		}
		const struct fmark *k = &m->fm[j++];

		if ((rc = add_point(m, k->t0, k->t0 - k->a0)) ||
		    (rc = add_point(m, k->t1, k->t1 - k->a0)))
			return rc;
	}
	int64_t end_a = corrected(base_before(m, m->n, &b0), m->last_t,
				  alpha_before(p, m, &m->a, m->last_t));
	return add_point(m, m->last_t, m->last_t - end_a);
}

/* The other threads of a process follow its main thread. The tracer's own
 * (a flow of tid > 0 with none of the program's events: the sender, the
 * memory sampler) are moved with it: each of their times less the main
 * thread's removal at that time, interpolated between its points
 * (main_points). Their own costs (the flushes they are made of) are no
 * perturbation of theirs. A program thread without MPI events (an MPI
 * library's progress thread, a worker) has no base of its own, yet what
 * delayed the main thread delayed what it waits for or starts: it loses
 * its own tracer cost and the main thread's removal (a thread that kept
 * its place while its main thread lost the start-up calibration ended
 * seconds after its process). A thread with MPI events is corrected on
 * its own bases. */
static int helpers(struct mgr_perturb *p)
{
	int rc;

	for (size_t i = 0; i < p->nf; i++) {
		struct flow *f = &p->f[i];
		uint32_t mi;

		if (f->tid == 0 || (f->nwrapped && f->nmpi) ||
		    (mi = flow_idx(p, f->stream, 0, 0)) == UINT32_MAX)
			continue;
		if (f->nwrapped) {
			f->follower = 1;
			p->st.follower_flows++;
		} else {
			f->helper = 1;
			p->st.helper_flows++;
		}
		struct flow *m = &p->f[mi];
		if (!m->npt && (rc = main_points(p, m)))
			return rc;
	}
	return 0;
}

/* The main thread m's removal at t (helpers, followers). */
static int64_t removal_at(const struct flow *m, int64_t t)
{
	size_t lo = 0, hi = m->npt;

	if (!m->npt)
		return 0;
	while (lo < hi) {	/* the first point after t */
		size_t mid = (lo + hi) / 2;

		if (m->pt[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return m->pt[0].rem;
	if (lo == m->npt)
		return m->pt[m->npt - 1].rem;
	const struct rpt *a = &m->pt[lo - 1], *b = &m->pt[lo];
	if (b->t == a->t)
		return b->rem;
	return a->rem + (int64_t)((double)(b->rem - a->rem) * (double)(t - a->t) /
				  (double)(b->t - a->t));
}

static int gap_add(int64_t **v, size_t *n, size_t *cap, int64_t g)
{
	int rc = mgr_big_grow((void **)v, cap, *n + 1, sizeof(**v));

	if (!rc)
		(*v)[(*n)++] = g;
	return rc;
}

/* The median of v[0 .. n) (sorted here; the upper one of an even count) and
 * the bound: GAP_FACTOR times it, at least GAP_FLOOR_NS; no bound without
 * gaps. */
static void gap_bound(int64_t *v, size_t n, int64_t *med, int64_t *bound)
{
	*med = 0;
	*bound = INT64_MAX;
	if (!n)
		return;
	mgr_big_sort(v, n, sizeof(*v), cmp_i64);
	*med = v[n / 2];
	*bound = *med < COST_MAX_NS / GAP_FACTOR ? *med * GAP_FACTOR : COST_MAX_NS;
	if (*bound < GAP_FLOOR_NS)
		*bound = GAP_FLOOR_NS;
}

static void gapq_free(struct flow *f)
{
	if (f->gq) {
		mgr_big_free(f->gq->in);
		mgr_big_free(f->gq->out);
		free(f->gq);
		f->gq = NULL;
	}
}

/* A pass before the build: per flow, the gaps around its measured MPI
 * events (as acc_before finds them, the cold start apart) and their bounds
 * (f->gc). A gap holds the MPI sensor's accounting, but also any time the
 * thread was preempted there: beyond its bound, the rest is counted as
 * time off the CPU. 0 or a negative PROTO_E_*. */
static int gap_caps(struct mgr_perturb *p, const char *dir,
		    mgr_perturb_time_fn time, void *arg)
{
	struct proto_trace *t;
	struct proto_trace_event te;
	int rc, r;

	if (!(t = proto_trace_open(dir, &rc)))
		return rc;
	while ((r = proto_trace_next(t, &te)) == 1 && !p->error) {
		const struct proto_event *ev = te.ev;
		uint32_t fi = flow_idx(p, te.stream->id, ev->tid, 1);

		if (fi == UINT32_MAX)
			break;
		struct flow *f = &p->f[fi];
		int comp = ev->type == PROTO_EV_COMPUTE;

		if (!f->gq && (comp || is_mpi(ev)) &&
		    !(f->gq = calloc(1, sizeof(*f->gq)))) {
			p->error = PROTO_E_NOMEM;
			break;
		}
		struct gapq *q = f->gq;
		if (!q)
			continue;
		int64_t t0 = time(arg, f->stream, ev->t_start);
		int64_t t1 = time(arg, f->stream, ev->t_end);

		if (comp && q->pending &&
		    (p->error = gap_add(&q->out, &q->nout, &q->capout,
					t0 > q->mpi_t1 ? t0 - q->mpi_t1 : 0)))
			break;
		if (comp || is_mpi(ev))
			q->pending = 0;
		if (is_mpi(ev) && q->prev_comp) {
			if ((p->error = gap_add(&q->in, &q->nin, &q->capin,
						t0 > q->comp_t1 ? t0 - q->comp_t1 : 0)))
				break;
			q->pending = 1;
			q->mpi_t1 = t1;
		}
		q->prev_comp = comp;
		if (comp)
			q->comp_t1 = t1;
	}
	proto_trace_close(t);
	for (size_t i = 0; i < p->nf; i++) {
		struct flow *f = &p->f[i];

		f->gc.keep_excess = p->indirect == INDIRECT_STOLEN ||
				    p->indirect == INDIRECT_AUTO;
		f->gc.in = f->gc.out = INT64_MAX;
		if (!f->gq)
			continue;
		gap_bound(f->gq->in, f->gq->nin, &f->gc.in_med, &f->gc.in);
		gap_bound(f->gq->out, f->gq->nout, &f->gc.out_med, &f->gc.out);
		gapq_free(f);
	}
	return r < 0 ? r : p->error;
}

struct mgr_perturb *mgr_perturb_build(const char *dir,
				      const struct mgr_causality *clc,
				      mgr_perturb_time_fn time, void *arg,
				      int *rc)
{
	struct mgr_perturb *p = calloc(1, sizeof(*p));
	struct proto_trace *t;
	struct proto_trace_event te;
	uint64_t pos = 0;
	int r;

	if (!p) {
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	const char *ind = getenv("TAPESTRY_PERTURB_INDIRECT");
	p->indirect = !ind || !*ind || !strcmp(ind, "auto") ? INDIRECT_AUTO :
		      !strcmp(ind, "busy") ? INDIRECT_BUSY :
		      !strcmp(ind, "stolen") ? INDIRECT_STOLEN : INDIRECT_NONE;
	mgr_reqtab_init(&p->pend, PEND_MAX);
	if (!(p->comms = mgr_comms_new())) {
		*rc = PROTO_E_NOMEM;
		free(p);
		return NULL;
	}
	if ((r = gap_caps(p, dir, time, arg)) != 0) {
		*rc = r;
		mgr_perturb_free(p);
		return NULL;
	}
	if (!(t = proto_trace_open(dir, rc))) {
		mgr_perturb_free(p);
		return NULL;
	}
	while ((r = proto_trace_next(t, &te)) == 1 && !p->error)
		on_event(p, &te, pos++, time, arg);
	/* a stream whose CALIB never came: its META calib_ns, else 0 (counted) */
	for (size_t i = 0; i < proto_trace_nstreams(t); i++) {
		const struct proto_stream *ps = proto_trace_stream(t, i);
		const char *v = proto_stream_meta(ps, "calib_ns");
		uint32_t si = stream_idx(p, ps->id);

		p->s[si].rank = ps->rank;
		if (!p->s[si].have_cost && v)
			p->s[si].cost = llround(fmin(fmax(atof(v), 0), COST_MAX_NS) * 1000);
		else if (!p->s[si].have_cost && ps->events) {
			p->st.uncalibrated_streams++;
			p->st.uncalibrated_events += ps->events;
		}
	}
	proto_trace_close(t);
	/* the last measured MPI event of a flow (MPI_Finalize) has no COMPUTE
	 * after it: its exit reads cost half the calibrated accounting */
	for (size_t i = 0; i < p->nf && r >= 0 && !p->error; i++) {
		struct flow *f = &p->f[i];

		if (!f->a.pending)
			continue;
		if ((p->error = mgr_big_grow((void **)&f->xg, &f->capxg,
					     f->nxg + 1, sizeof(*f->xg))))
			break;
		f->xg[f->nxg++] = (struct xgap){p->s[f->sidx].cost_mpi / 2,
						p->s[f->sidx].cost_out, f->a.pend_cold, 0};
		f->a.meas += p->s[f->sidx].cost_mpi / 2;
		f->a.out_ps = mgr_sat_add(f->a.out_ps, p->s[f->sidx].cost_out);
		f->a.pending = 0;
	}
	if (r < 0 || p->error) {
		*rc = r < 0 ? r : p->error;
		mgr_perturb_free(p);
		return NULL;
	}
	for (size_t i = 0; i < p->ns; i++) {
		struct sinfo *si = &p->s[i];
		struct busy { int64_t end, d; } *bv;

		if (!si->nb)
			continue;
		if (!(bv = mgr_big_calloc(si->nb, sizeof(*bv), rc))) {
			mgr_perturb_free(p);
			return NULL;
		}
		for (size_t k = 0; k < si->nb; k++) {
			bv[k].end = si->bend[k];
			bv[k].d = si->bpre[k];
		}
		mgr_big_sort(bv, si->nb, sizeof(*bv), cmp_i64);
		si->bpre[0] = 0;
		for (size_t k = 0; k < si->nb; k++) {
			si->bend[k] = bv[k].end;
			si->bpre[k + 1] = mgr_sat_add(si->bpre[k], bv[k].d);
		}
		mgr_big_free(bv);
	}
	if (clc)
		mgr_causality_foreach(clc, on_match, p);
	if ((r = process(p)) != 0) {
		*rc = r;
		mgr_perturb_free(p);
		return NULL;
	}
	marks_corrected(p);
	if ((r = helpers(p)) != 0) {
		*rc = r;
		mgr_perturb_free(p);
		return NULL;
	}
	double cost = 0;
	for (size_t i = 0; i < p->ns; i++)
		cost += (double)p->s[i].cost;
	p->st.alpha_ns = p->ns ? cost / 1000 / (double)p->ns : 0;
	p->st.flows = p->nf;
	for (size_t i = 0; i < p->nf; i++) {
		struct flow *f = &p->f[i];

		p->st.events += f->n;
		if (f->helper)
			continue;
		p->st.removed_ns = mgr_sat_add(p->st.removed_ns,
					       alpha_before(p, f, &f->a, INT64_MAX));
		p->st.stolen_ns = mgr_sat_add(p->st.stolen_ns, f->a.stolen);
		p->st.gap_excess_ns = mgr_sat_add(p->st.gap_excess_ns, f->a.mx);
		p->st.stolen_removed_ns = mgr_sat_add(p->st.stolen_removed_ns,
						      stolen_capped(p, f, &f->a, INT64_MAX));
		p->st.measured_ns = mgr_sat_add(p->st.measured_ns, f->a.meas);
		p->st.measured_events += f->a.nmeas;
		p->st.waits += f->a.nwait;
		p->st.wait_ns = mgr_sat_add(p->st.wait_ns, f->a.wait);
	}
	mgr_perturb_rewind(p);
	return p;
}

void mgr_perturb_rewind(struct mgr_perturb *p)
{
	for (size_t i = 0; i < p->nf; i++) {
		p->f[i].an = 0;
		memset(&p->f[i].aa, 0, sizeof(p->f[i].aa));
		p->f[i].ab = 0;
		p->f[i].am = 0;
	}
}

void mgr_perturb_apply(struct mgr_perturb *p, uint64_t stream,
		       const struct proto_event *ev, int64_t start, int64_t end,
		       int64_t *a_start, int64_t *a_end)
{
	uint32_t fi = flow_idx(p, stream, ev->tid, 0);

	*a_start = start;
	*a_end = end;
	if (fi == UINT32_MAX)
		return;
	struct flow *f = &p->f[fi];
	uint64_t i = f->an;

	if (f->helper) {
		uint32_t mi = flow_idx(p, stream, 0, 0);

		if (mi != UINT32_MAX) {
			*a_start = start - removal_at(&p->f[mi], start);
			*a_end = end - removal_at(&p->f[mi], end);
			if (*a_end < *a_start)
				*a_end = *a_start;
		}
		f->an++;
		return;
	}

	while (f->ab < f->nb && f->b[f->ab].idx < i)
		f->ab++;
	/* the base in force: the last one before this event */
	struct base b0 = {0, f->first_t, f->first_t, f->first_t, 0, 0, 0};
	const struct base *b = f->ab > 0 ? &f->b[f->ab - 1] : &b0;
	/* a measured MPI event's cold start, as the build took it off */
	int64_t cold = 0;
	if (is_mpi(ev) && f->aa.prev_comp && f->aa.nmeas < f->nxg)
		start += cold = f->xg[f->aa.nmeas].cold;
	struct xgap xg;
	acc_before(&f->aa, ev, start, end, 0, 0, &f->gc, cold, &xg);
	int64_t a_before = alpha_before(p, f, &f->aa, start);

	*a_start = mgr_sat_add(mgr_sat_add(b->tb_a, start - b->tb),
			       -mgr_sat_add(a_before, -b->a_b));
	*a_end = mgr_sat_add(*a_start, end - start);
	if (f->ab < f->nb && f->b[f->ab].idx == i) {
		/* this event is a base: its end was decided by the model */
		*a_start = f->b[f->ab].start_a;
		*a_end = f->b[f->ab].tb_a;
	}
	/* a COMPUTE event starts where the MPI event before it ended (the
	 * events inside it come before it in the flow: the alpha above counts
	 * them, which is right for its end only) */
	if (ev->type == PROTO_EV_COMPUTE && xg.gap >= 0 && f->a_mpi_end <= *a_end)
		*a_start = f->a_mpi_end;
	/* a FLUSH is the tracer's work in the thread, all of it taken off
	 * what follows: it keeps no length, and what the tracer recorded
	 * inside it before it (the start-up calibration's CALIB records,
	 * stamped at its end) is put at its corrected start */
	while (f->am < f->nfm && f->fm[f->am].idx < i)
		f->am++;
	if (ev->type == PROTO_EV_FLUSH)
		*a_end = *a_start;
	else if (f->am < f->nfm && f->fm[f->am].t0 <= start && end <= f->fm[f->am].t1)
		*a_start = *a_end = f->fm[f->am].a0;
	f->an++;
	int64_t off = stolen_capped(p, f, &f->aa, start);
	int measured = acc_after(p, &f->aa, ev, start, end);
	if (measured)
		f->a_mpi_end = *a_end;
	off = stolen_capped(p, f, &f->aa, end) - off;
	if (off > end - start)
		off = end - start;
	if (off)	/* the interval keeps only the time the thread ran */
		*a_end -= off;
	if (f->follower) {
		uint32_t mi = flow_idx(p, stream, 0, 0);

		if (mi != UINT32_MAX) {
			*a_start -= removal_at(&p->f[mi], start);
			*a_end -= removal_at(&p->f[mi], end);
			if (*a_end < *a_start)
				*a_end = *a_start;
		}
	}
	/* a measured MPI event: its exit gap and cost outside the gaps
	 * (known from the build) count from its end, for the events that
	 * follow it */
	if (measured && f->aa.nmeas - 1 < f->nxg) {
		f->aa.meas = mgr_sat_add(f->aa.meas, f->xg[f->aa.nmeas - 1].gap);
		f->aa.mx = mgr_sat_add(f->aa.mx, f->xg[f->aa.nmeas - 1].ex);
		f->aa.out_ps = mgr_sat_add(f->aa.out_ps, f->xg[f->aa.nmeas - 1].out_ps);
	}
}

double mgr_student_critical(uint64_t nu)
{
	static const double t975[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};
	const double z = 1.959963985, z2 = z * z;
	double v = (double)nu;

	if (nu < 1)
		return HUGE_VAL;
	if (nu < sizeof(t975) / sizeof(t975[0]))
		return t975[nu];
	/* Cornish-Fisher expansion of the quantile around the normal one
	 * (within 1e-3 beyond 30 degrees of freedom) */
	return z + z * (z2 + 1) / (4 * v) +
	       z * ((5 * z2 + 16) * z2 + 3) / (96 * v * v) +
	       z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * v * v * v);
}

struct mpoint {
	int64_t bytes;
	double y;
};

static int cmp_mpoint(const void *a, const void *b)
{
	const struct mpoint *x = a, *y = b;

	return MGR_CMP(x->bytes, y->bytes);
}

static int cmp_check(const void *a, const void *b)
{
	const struct mgr_model_check *x = a, *y = b;

	int c = MGR_CMP(y->n, x->n);	/* most samples first */

	return c ? c : MGR_CMP(x->bytes, y->bytes);
}

/* out[] keeps the max sets with the most receives. */
static void check_keep(struct mgr_model_check *out, size_t max, size_t *kept,
		       const struct mgr_model_check *c)
{
	if (!max)
		return;
	if (*kept < max) {
		out[(*kept)++] = *c;
	} else if (cmp_check(c, &out[max - 1]) < 0) {
		out[max - 1] = *c;
	} else {
		return;
	}
	qsort(out, *kept, sizeof(*out), cmp_check);
}

size_t mgr_perturb_model_check(const struct mgr_perturb *p, double latency_ns,
			       double ns_per_byte, struct mgr_model_check *out,
			       size_t max, size_t *rejected)
{
	size_t n = 0, k = 0, tested = 0, kept = 0, bad = 0;
	struct mpoint *v;
	double x, y;
	int rc;

	for (size_t i = 0; i < p->nr; i++)
		n += model_point(p, &p->r[i], &x, &y);
	if (rejected)
		*rejected = 0;
	if (!n || !(v = mgr_big_calloc(n, sizeof(*v), &rc)))
		return 0;
	for (size_t i = 0; i < p->nr; i++)
		if (model_point(p, &p->r[i], &x, &y))
			v[k++] = (struct mpoint){p->r[i].bytes, y};
	mgr_big_sort(v, n, sizeof(*v), cmp_mpoint);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].bytes == v[i].bytes; j++)
			;
		if (j - i < MGR_CHECK_MIN)
			continue;
		struct mgr_model_check c = {.bytes = v[i].bytes, .n = j - i,
					    .min_ns = HUGE_VAL, .max_ns = -HUGE_VAL};
		double sum = 0, sq = 0, tot = 0;

		c.model_ns = latency_ns + ns_per_byte * (double)c.bytes;
		for (size_t q = i; q < j; q++) {
			double e = v[q].y - c.model_ns;

			sum += e;
			tot += v[q].y;
			c.min_ns = v[q].y < c.min_ns ? v[q].y : c.min_ns;
			c.max_ns = v[q].y > c.max_ns ? v[q].y : c.max_ns;
		}
		c.mean_ns = sum / (double)c.n;
		c.avg_ns = tot / (double)c.n;
		for (size_t q = i; q < j; q++) {
			double e = v[q].y - c.model_ns - c.mean_ns;

			sq += e * e;
		}
		c.sd_ns = sqrt(sq / (double)c.n);
		/* identical errors: 0 if none, else as far from 0 as can be */
		c.t = c.sd_ns > 0 ? c.mean_ns / c.sd_ns * sqrt((double)(c.n - 1)) :
		      c.mean_ns == 0 ? 0.0 : c.mean_ns > 0 ? HUGE_VAL : -HUGE_VAL;
		c.critical = mgr_student_critical(c.n - 1);
		c.accept = fabs(c.t) <= c.critical;
		bad += !c.accept;
		tested++;
		check_keep(out, max, &kept, &c);
	}
	mgr_big_free(v);
	if (rejected)
		*rejected = bad;
	return tested;
}

const struct mgr_perturb_stats *mgr_perturb_stats(const struct mgr_perturb *p)
{
	return &p->st;
}

void mgr_perturb_free(struct mgr_perturb *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nf; i++) {
		mgr_big_free(p->f[i].b);
		mgr_big_free(p->f[i].pt);
		mgr_big_free(p->f[i].fm);
		mgr_big_free(p->f[i].xg);
		gapq_free(&p->f[i]);
	}
	for (size_t i = 0; i < p->ns; i++) {
		mgr_big_free(p->s[i].bend);
		mgr_big_free(p->s[i].bpre);
	}
	free(p->f);
	free(p->s);
	free(p->fmap);
	mgr_big_free(p->r);
	mgr_big_free(p->ci);
	mgr_big_free(p->ix);
	mgr_reqtab_clear(&p->pend);
	mgr_comms_free(p->comms);
	free(p);
}
