/*
 * manager/export/export_sim.c - SimGrid time-independent traces ([000]): the SMPI
 * replay dialect of SimGrid 3.32 (simgrid-ti) and the 2011 dialect of the
 * paper (simgrid-ti-2011).
 *
 * One pass over the job in storage order (per stream: seq order), one open
 * file per MPI rank, so memory is bounded by the rank count, the requests
 * outstanding per rank and the communicators a rank created, never by the
 * trace length. Only events of streams that are MPI ranks are used; libc,
 * memory and tracer events (and every event of a stream without a rank,
 * such as mpirun itself) are ignored. The event -> action mapping and the
 * byte-exact line syntax are in docs/modules/export-simgrid.md.
 *
 * The mapping (mgr_ti_*, declared in manager/export/live.h) writes into FILE
 * streams a callback opens, so that the post-mortem export (files in OUT)
 * and the live feed (manager/export/live.c: growing files or named pipes) are one
 * piece of code and write the same lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/reqtab.h"
#include "manager/export/export.h"
#include "manager/export/live.h"
#include "manager/mgr.h"
#include "proto/error.h"

#define TI_RANKS_MAX 65536		/* ranks (= open files) */
#define TI_STREAMS_MAX (1u << 20)	/* streams remembered */
#define TI_REQS_MAX (1u << 20)		/* outstanding requests per rank (MPI-IO
					 * and one-sided: in the job) */
#define TI_COMMS_MAX 65536		/* communicators per rank */
/* Computation stretches below this many flops are carried over into the
 * next one instead of getting a line of their own: the sum is conserved,
 * the trace loses the sub-microsecond stretches between back-to-back MPI
 * calls (mostly the sensor's own cost). */
#define TI_MIN_FLOPS 1e4

/* SMPI's wildcard values (include/smpi/smpi.h of SimGrid 3.32); the replay
 * keys a request by (src, dst, tag) with src = the posted source's actor
 * id - 1, which is MPI_ANY_SOURCE - 1 for a wildcard receive. */
#define SMPI_ANY_SOURCE (-555)
#define SMPI_ANY_TAG (-444)
#define SMPI_BYTE "6"		/* Datatype id of MPI_BYTE */

#define PEER_ANY (-1)
#define PEER_NULL (-2)
#define PEER_CANCELLED (-4)	/* a completion of a cancelled request */

#define D_SMPI MGR_TI_SMPI
#define D_2011 MGR_TI_2011

/* SMPI's replay stores a request under its key (src, dst, tag) only when
 * no request is stored under that key yet, and a wait pops the one stored:
 * the exporter follows which of its requests the replay holds (stored),
 * so that it never writes a wait the replay has nothing for (SimGrid
 * aborts: "action wait not preceded by any irecv or isend"). */
struct ti_req {
	int64_t id;
	int src, dst, tag;	/* the replay's key of the request */
	long off, len;		/* its isend/irecv line in the file (-1: unknown) */
	uint64_t seq;		/* order of posting */
	int stored;		/* the replay holds it under its key */
	int ghost;		/* freed by the program, still stored in the replay */
};

struct ti_comm {
	int64_t id;
	int64_t size;
	int32_t *world;		/* world rank of each rank, NULL: the world's order */
	int32_t *rank;		/* its inverse: rank of each world rank */
};

/* A nonblocking collective not completed yet: its call's event as the
 * blocking type (and ARRAY), written at its completion or earlier. */
struct ti_nbc {
	int64_t id;
	unsigned itype;		/* the nonblocking type (counted as mapped) */
	int written;		/* its blocking form is written, its
				 * completion still to come */
	struct proto_event ev;
	int64_t *arr;
	size_t narr;
};

struct ti_rank {
	FILE *f;
	uint64_t stream;	/* the stream that owns this rank */
	int64_t world;		/* MPI_COMM_WORLD size seen by the rank */
	double pending;		/* flops not written yet */
	int inited, finalized;
	struct ti_req *req;
	size_t nreq, capreq;
	size_t nghost;		/* ghosts among the nreq */
	uint64_t seq;		/* requests posted */
	struct ti_comm *comm;
	size_t ncomm, capcomm;
	double instr_rate;	/* META instruction_rate, 0 if none */
	double flop_rate;	/* of the last COMPUTE event, 0 before one */
	size_t nioreq;		/* its MPI-IO and one-sided requests not
				 * completed yet (in mgr_ti.ioreqs) */
	struct ti_nbc *nbc;	/* nonblocking collectives not completed, in
				 * the order they were started */
	size_t nnbc, capnbc;
	uint64_t busy;		/* MPI events besides MPI_Init and the
				 * queries: none means nothing to replay */
};

struct ti_stream {
	uint64_t id;
	int32_t rank;		/* -1: not an MPI rank (yet) */
};

struct mgr_ti {
	enum mgr_ti_dialect d;
	mgr_ti_open_fn open;	/* opens a rank's stream */
	void *open_arg;
	struct ti_rank *rank;	/* indexed by rank */
	size_t nrank;		/* slots allocated */
	int64_t world;		/* largest world size announced */
	struct ti_stream *streams;
	size_t nstreams, capstreams, last;
	uint64_t actions, mpi_events;
	uint64_t skip_comm;	/* collectives on sub-communicators skipped */
	uint64_t sub_coll;	/* ... written as point-to-point messages */
	uint64_t skip_inter;	/* collectives on intercommunicators */
	uint64_t self_coll;	/* collectives on MPI_COMM_SELF: nothing */
	const struct mgr_ti_subs *subs;	/* their members, or NULL */
	const struct mgr_comms *comms;	/* the names subs lists them by */
	struct mgr_reqtab ioreqs;	/* (rank, id): MPI-IO and one-sided
					 * requests, kind 1 and 2 */
	uint64_t skip_req;	/* completions of requests never seen */
	uint64_t skip_2011;	/* calls the 2011 dialect cannot express */
	uint64_t skip_2011_by[PROTO_EV__COUNT];	/* the same, per type */
	uint64_t skip_failed;	/* calls that returned an error */
	uint64_t clamped;	/* counts over INT_MAX */
	uint64_t mapped[PROTO_EV__COUNT];	/* calls written as others */
	uint64_t cancelled;	/* cancelled requests whose line was blanked */
	uint64_t skip_key;	/* waits the replay's keyed store cannot serve */
	uint64_t cancel_kept;	/* ... whose line could not be (live feed) */
	uint64_t io_calls;	/* MPI-IO calls and waits: sleeps (computes) */
	uint64_t io_ns;		/* their measured time */
	uint64_t nbr_calls;	/* neighbourhood collectives: sleeps */
	uint64_t nbr_ns;
	/* one-sided calls by kind (proto_ev_rma_kind), and the completions
	 * of their requests (last slot): sleeps (computes) */
	uint64_t rma_calls[PROTO_RMA_KINDS + 1];
	uint64_t rma_ns[PROTO_RMA_KINDS + 1];
};

/* What SMPI's replay cannot run, and what is written instead (one warning
 * line per kind at the end; docs/modules/export-simgrid.md). */
static const struct {
	unsigned type;
	const char *as;
} ti_maps[] = {
	{PROTO_EV_MPI_BSEND, "isend never waited (a send would block where MPI_Bsend returns)"},
	{PROTO_EV_MPI_SSEND, "send"},
	{PROTO_EV_MPI_RSEND, "send"},
	{PROTO_EV_MPI_IBSEND, "isend"},
	{PROTO_EV_MPI_ISSEND, "isend"},
	{PROTO_EV_MPI_IRSEND, "isend"},
	{PROTO_EV_MPI_SENDRECV_REPLACE, "sendRecv (or isend, recv, wait)"},
	{PROTO_EV_MPI_ISENDRECV, "isend never waited, irecv"},
	{PROTO_EV_MPI_ISENDRECV_REPLACE, "isend never waited, irecv"},
	{PROTO_EV_MPI_START, "isend or irecv"},
	{PROTO_EV_MPI_STARTALL, "isend or irecv per request"},
	{PROTO_EV_MPI_MRECV, "recv"},
	{PROTO_EV_MPI_IMRECV, "irecv"},
	{PROTO_EV_MPI_TESTANY, "wait of the request it completed"},
	{PROTO_EV_MPI_WAITSOME, "a wait per request it completed"},
	{PROTO_EV_MPI_TESTSOME, "a wait per request it completed"},
	{PROTO_EV_MPI_TESTALL, "a wait per request it completed"},
	{PROTO_EV_MPI_REQUEST_FREE, "nothing (the replay waits for the request at its end)"},
	{PROTO_EV_MPI_ALLTOALLW, "alltoallv of each rank's bytes (on a smaller "
	 "communicator: its messages)"},
	{PROTO_EV_MPI_REDUCE_SCATTER_BLOCK, "reducescatter"},
	{PROTO_EV_MPI_IBARRIER, "barrier at its completion"},
	{PROTO_EV_MPI_IBCAST, "bcast at its completion"},
	{PROTO_EV_MPI_IREDUCE, "reduce at its completion"},
	{PROTO_EV_MPI_IALLREDUCE, "allreduce at its completion"},
	{PROTO_EV_MPI_IGATHER, "gather at its completion"},
	{PROTO_EV_MPI_IGATHERV, "gatherv at its completion"},
	{PROTO_EV_MPI_ISCATTER, "scatter at its completion"},
	{PROTO_EV_MPI_ISCATTERV, "scatterv at its completion"},
	{PROTO_EV_MPI_IALLGATHER, "allgather at its completion"},
	{PROTO_EV_MPI_IALLGATHERV, "allgatherv at its completion"},
	{PROTO_EV_MPI_IALLTOALL, "alltoall at its completion"},
	{PROTO_EV_MPI_IALLTOALLV, "alltoallv at its completion"},
	{PROTO_EV_MPI_IALLTOALLW, "alltoallv at its completion"},
	{PROTO_EV_MPI_IREDUCE_SCATTER, "reducescatter at its completion"},
	{PROTO_EV_MPI_IREDUCE_SCATTER_BLOCK, "reducescatter at its completion"},
	{PROTO_EV_MPI_ISCAN, "scan at its completion"},
	{PROTO_EV_MPI_IEXSCAN, "exscan at its completion"},
};

#define RMA_KINDS (PROTO_RMA_KINDS + 1)

/* The event flag of a blocking collective written for a nonblocking one
 * (not counted as an Alltoallw or Reduce_scatter_block of the program). */
#define TI_EVF_NBC 0x8000u

/* ---- helpers ------------------------------------------------------------ */

/* Argument f of ev, by its name in events.def (0 when the type has no
 * such field). */
static int64_t fld(const struct proto_event *ev, enum proto_field f)
{
	return mgr_ev_field(ev, f, 0);
}

static int64_t clamp_int(struct mgr_ti *x, int64_t v)
{
	if (v > INT_MAX) {
		x->clamped++;
		return INT_MAX;
	}
	return v < 0 ? 0 : v;
}

static void raise_nofile(size_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want + 32)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want + 32 ?
		(rlim_t)(want + 32) : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* Rank of stream s (META rank, else its MPI_Init's argument), or -1. */
static int32_t stream_rank(struct mgr_ti *x, const struct proto_trace_event *me)
{
	uint64_t id = me->stream->id;
	struct ti_stream *s = NULL;

	if (x->last < x->nstreams && x->streams[x->last].id == id) {
		s = &x->streams[x->last];
	} else {
		for (size_t i = 0; i < x->nstreams; i++)
			if (x->streams[i].id == id) {
				s = &x->streams[i];
				x->last = i;
				break;
			}
	}
	if (!s) {
		if (x->nstreams == x->capstreams) {
			size_t cap = x->capstreams ? x->capstreams * 2 : 16;
			struct ti_stream *n;

			if (cap > TI_STREAMS_MAX)
				return -1;
			n = realloc(x->streams, cap * sizeof(*n));
			if (!n)
				return -1;
			x->streams = n;
			x->capstreams = cap;
		}
		s = &x->streams[x->nstreams];
		s->id = id;
		s->rank = -1;
		x->last = x->nstreams++;
	}
	if (s->rank < 0 && me->stream->rank >= 0)
		s->rank = me->stream->rank;
	if (s->rank < 0 && me->ev->type == PROTO_EV_MPI_INIT &&
	    fld(me->ev, PROTO_F_rank) >= 0 && fld(me->ev, PROTO_F_rank) < TI_RANKS_MAX)
		s->rank = (int32_t)fld(me->ev, PROTO_F_rank);
	return s->rank;
}

static struct ti_rank *rank_get(struct mgr_ti *x, int32_t r, uint64_t stream)
{
	struct ti_rank *t;

	if (r < 0 || r >= TI_RANKS_MAX) {
		(void)mgr_fail(PROTO_E_FULL,
			"rank %d out of range (at most %d ranks)", r, TI_RANKS_MAX);
		return NULL;
	}
	if ((size_t)r >= x->nrank) {
		size_t n = x->nrank ? x->nrank : 16;

		while (n <= (size_t)r)
			n *= 2;
		t = realloc(x->rank, n * sizeof(*t));
		if (!t) {
			(void)mgr_fail(PROTO_E_NOMEM, "out of memory");
			return NULL;
		}
		memset(t + x->nrank, 0, (n - x->nrank) * sizeof(*t));
		x->rank = t;
		x->nrank = n;
	}
	t = &x->rank[r];
	if (!t->f) {
		if (!(t->f = x->open(x->open_arg, r)))
			return NULL;
		t->stream = stream;
	} else if (t->stream != stream) {
		(void)mgr_fail(PROTO_E_FORMAT,
			"two processes claim MPI rank %d (streams %016" PRIx64
			" and %016" PRIx64 ")", r, t->stream, stream);
		return NULL;
	}
	return t;
}

/* Write the rank's pending computation if it is worth a line (or if
 * force and it is not zero). */
static void flush_compute(struct mgr_ti *x, int32_t r, struct ti_rank *t, int force)
{
	if (t->pending >= TI_MIN_FLOPS || (force && t->pending >= 1)) {
		if (x->d == D_SMPI)
			fprintf(t->f, "%d compute %.0f\n", r, t->pending);
		else
			fprintf(t->f, "p%d compute %.0f\n", r, t->pending);
		x->actions++;
		t->pending = 0;
	}
}

/* One action line: the rank prefix of the dialect, then fmt. */
static void __attribute__((format(printf, 4, 5)))
act(struct mgr_ti *x, int32_t r, struct ti_rank *t, const char *fmt, ...)
{
	va_list ap;

	flush_compute(x, r, t, 0);
	fprintf(t->f, x->d == D_SMPI ? "%d " : "p%d ", r);
	va_start(ap, fmt);
	vfprintf(t->f, fmt, ap);
	va_end(ap);
	fputc('\n', t->f);
	x->actions++;
}

static int req_put(struct ti_rank *t, const struct ti_req *q)
{
	if (t->nreq == t->capreq) {
		size_t cap = t->capreq ? t->capreq * 2 : 16;
		struct ti_req *n;

		if (cap > TI_REQS_MAX) {
			return mgr_fail(PROTO_E_FULL,
				"more than %u requests outstanding on one rank",
				TI_REQS_MAX);
		}
		if (!(n = realloc(t->req, cap * sizeof(*n))))
			return -1;
		t->req = n;
		t->capreq = cap;
	}
	t->req[t->nreq++] = *q;
	t->nghost += q->ghost != 0;
	return 0;
}

/* Index of the request the replay holds under key (src, dst, tag), -1. */
static ssize_t key_stored(const struct ti_rank *t, int src, int dst, int tag)
{
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].stored && t->req[i].src == src &&
		    t->req[i].dst == dst && t->req[i].tag == tag)
			return (ssize_t)i;
	return -1;
}

static void req_drop(struct ti_rank *t, size_t i)
{
	t->nghost -= t->req[i].ghost != 0;
	t->req[i] = t->req[--t->nreq];
}

static int req_add_at(struct ti_rank *t, int64_t id, int src, int dst, int tag,
		      long off, long len)
{
	struct ti_req q = {id, src, dst, tag, off, len, t->seq++,
			   key_stored(t, src, dst, tag) < 0, 0};

	return req_put(t, &q);
}

static int req_add(struct ti_rank *t, int64_t id, int src, int dst, int tag)
{
	return req_add_at(t, id, src, dst, tag, -1, -1);
}

/* Remove request id into *out; 0 if found, -1 if not. */
static int req_take(struct ti_rank *t, int64_t id, struct ti_req *out)
{
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].id == id && !t->req[i].ghost) {
			*out = t->req[i];
			req_drop(t, i);
			return 0;
		}
	return -1;
}

static int req_has(const struct ti_rank *t, int64_t id)
{
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].id == id && !t->req[i].ghost)
			return 1;
	return 0;
}

/* Requests the program has outstanding (not the ghosts). */
static size_t req_live(const struct ti_rank *t)
{
	return t->nreq - t->nghost;
}

static int comm_add(struct ti_rank *t, int64_t id, int64_t size)
{
	if (id < 0)
		return 0;
	if (t->ncomm == t->capcomm) {
		size_t cap = t->capcomm ? t->capcomm * 2 : 8;
		struct ti_comm *n;

		if (cap > TI_COMMS_MAX)
			return 0;	/* forgotten: its collectives are skipped */
		if (!(n = realloc(t->comm, cap * sizeof(*n))))
			return -1;
		t->comm = n;
		t->capcomm = cap;
	}
	t->comm[t->ncomm++] = (struct ti_comm){id, size, NULL, NULL};
	return 0;
}

/* The communicator me made, in another order than the world's when its
 * ARRAY says so (the world rank of each of its ranks: the sensor writes it
 * for a communicator of every rank, the only kind the replay runs
 * collectives on). 0, or -1 out of memory. */
static int comm_order(struct ti_rank *t, const struct proto_trace_event *me)
{
	struct ti_comm *c = t->ncomm ? &t->comm[t->ncomm - 1] : NULL;
	int ni = proto_ev_arg(me->ev->type, PROTO_F_newcomm);
	size_t n = me->narray;

	if (!c || ni < 0 || c->id != fld(me->ev, PROTO_F_newcomm) || !me->array ||
	    n == 0 || (int64_t)n != c->size || n > INT32_MAX)
		return 0;
	if (!(c->world = malloc(n * sizeof(int32_t))) ||
	    !(c->rank = malloc(n * sizeof(int32_t)))) {
		free(c->world);
		c->world = NULL;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		c->rank[i] = -1;
	for (size_t i = 0; i < n; i++) {
		int64_t w = me->array[i];

		if (w < 0 || (uint64_t)w >= n || c->rank[w] >= 0) {
			/* not a permutation: taken as the world's order */
			free(c->world);
			free(c->rank);
			c->world = c->rank = NULL;
			return 0;
		}
		c->world[i] = (int32_t)w;
		c->rank[w] = (int32_t)i;
	}
	return 0;
}

static const struct ti_comm *comm_find(const struct ti_rank *t, int64_t id)
{
	for (size_t i = t->ncomm; i-- > 0;)
		if (t->comm[i].id == id)
			return &t->comm[i];
	return NULL;
}

/* A root (a rank of c) as a world rank. */
static int64_t root_of(const struct ti_comm *c, int64_t root)
{
	return c && c->world && root >= 0 && root < c->size ? c->world[root] : root;
}

/* Remember the communicator a constructor's event made, with its size. */
static int comm_made(struct ti_rank *t, const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;

	if (comm_add(t, fld(ev, PROTO_F_newcomm), fld(ev, PROTO_F_size)))
		return -1;
	return comm_order(t, me);
}

/* SMPI's replay runs every collective on MPI_COMM_WORLD: a communicator
 * qualifies when it has all the ranks (world, or a dup/split that kept
 * everyone). */
static int comm_is_world(const struct ti_rank *t, int64_t id)
{
	if (id == 0)
		return 1;
	for (size_t i = t->ncomm; i-- > 0;)
		if (t->comm[i].id == id)
			return t->comm[i].size == t->world;
	return 0;
}

static void completed(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id)
{
	struct ti_req q;

	if (req_take(t, id, &q) != 0) {
		x->skip_req++;
		return;
	}
	if (x->d != D_SMPI) {
		act(x, r, t, "wait");
		return;
	}
	if (!q.stored) {
		/* the replay's wait pops the request it holds under the key */
		ssize_t k = key_stored(t, q.src, q.dst, q.tag);

		if (k < 0) {
			x->skip_key++;
			return;
		}
		if (t->req[k].ghost)
			req_drop(t, (size_t)k);
		else
			t->req[k].stored = 0;
	}
	act(x, r, t, "wait %d %d %d", q.src, q.dst, q.tag);
}

/* q (taken) was stored but its line is gone: the replay stores the next
 * request posted under its key instead. */
static void req_unpost(struct ti_rank *t, const struct ti_req *q)
{
	ssize_t k = -1;

	if (!q->stored)
		return;
	for (size_t i = 0; i < t->nreq; i++) {
		const struct ti_req *o = &t->req[i];

		if (!o->stored && o->src == q->src && o->dst == q->dst &&
		    o->tag == q->tag && o->seq > q->seq &&
		    (k < 0 || o->seq < t->req[k].seq))
			k = (ssize_t)i;
	}
	if (k >= 0)
		t->req[k].stored = 1;
}

/* The request id was cancelled: the replay must neither post it (a
 * receive no one sends to is waited for at the replay's end, for ever) nor
 * wait for it. Its isend/irecv line is overwritten in place, same length,
 * by a compute of 0 flops ("R compute 00..0"); where the stream cannot
 * seek (the live feed's pipes) or the line is unknown it stays, counted. */
static void cancelled(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id)
{
	char buf[160];
	struct ti_req q;
	long end;
	int n;

	if (req_take(t, id, &q) != 0) {
		x->skip_req++;
		return;
	}
	n = snprintf(buf, sizeof(buf), x->d == D_SMPI ? "%d compute " : "p%d compute ", r);
	if (q.off < 0 || n <= 0 || q.len < n + 2 || q.len > (long)sizeof(buf) ||
	    (end = ftell(t->f)) < 0 || fseek(t->f, q.off, SEEK_SET) != 0) {
		x->cancel_kept++;
		return;
	}
	memset(buf + n, '0', (size_t)(q.len - 1 - n));
	buf[q.len - 1] = '\n';
	if (fwrite(buf, 1, (size_t)q.len, t->f) == (size_t)q.len) {
		x->cancelled++;
		req_unpost(t, &q);
	} else {
		x->cancel_kept++;
	}
	fseek(t->f, end, SEEK_SET);
}

/* A completion as the sensor recorded it (peer: the actual one, or
 * PEER_CANCELLED): a wait, or the cancellation's blanking. */
static void done_one(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id,
		     int64_t peer)
{
	if (peer == PEER_CANCELLED)
		cancelled(x, r, t, id);
	else
		completed(x, r, t, id);
}

/* An isend or irecv line, and its request remembered with the line's
 * place in the file (for a cancellation). */
static int post(struct mgr_ti *x, int32_t r, struct ti_rank *t, const char *what,
		int64_t peer, int64_t tag, int64_t bytes, int64_t id, int src,
		int dst, int ktag)
{
	long off, end;

	flush_compute(x, r, t, 0);
	off = ftell(t->f);
	act(x, r, t, "%s %" PRId64 " %" PRId64 " %" PRId64, what, peer, tag, clamp_int(x, bytes));
	end = off >= 0 ? ftell(t->f) : -1;
	return req_add_at(t, id, src, dst, ktag, off, end >= off ? end - off : -1);
}

/* Per-rank byte counts of a v-collective: the ARRAY if it has n values at
 * offset off, else total / n each (the sensor keeps the array at the root
 * only for gatherv/scatterv); in world rank order (cm: the collective's
 * communicator, whose ranks may be in another order). */
static void counts(struct mgr_ti *x, struct ti_rank *t, const struct proto_trace_event *me,
		   size_t off, int64_t total, const struct ti_comm *cm)
{
	int64_t n = t->world;

	for (int64_t i = 0; i < n; i++) {
		/* in world order: the ARRAY is in the communicator's */
		int64_t k = cm && cm->rank && cm->size == n ? cm->rank[i] : i, v;

		if (me->array && me->narray >= off + (size_t)n)
			v = me->array[off + (size_t)k];
		else
			v = total > 0 ? total / n : 0;
		fprintf(t->f, " %" PRId64, clamp_int(x, v));
	}
}

/* MPI_Waitall in SMPI's terms: its cancelled requests blanked first; then
 * `waitall N` when it completes every request outstanding, else one wait
 * per request (a subset of them); all outstanding ones when the sensor
 * lost the list. */
static void waitall(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		    const struct proto_trace_event *me)
{
	int64_t count = fld(me->ev, PROTO_F_count);
	size_t n = me->array ? me->narray / 4 : 0, known = 0;
	struct proto_done d;

	for (size_t i = 0; !proto_ev_done(me->ev->type, me->array, me->narray, i, &d); i++)
		if (d.peer == PEER_CANCELLED)
			cancelled(x, r, t, d.req);
	for (size_t i = 0; i < n; i++)
		known += req_has(t, me->array[i * 4]);
	if (count > 0 && n < (size_t)count) {
		/* the sensor lost the request list: all of them */
		if (req_live(t))
			act(x, r, t, "waitall %zu", req_live(t));
		t->nreq = t->nghost = 0;
	} else if (known && known == req_live(t)) {
		/* (the replay's waitall waits for every request it holds) */
		act(x, r, t, "waitall %zu", known);
		t->nreq = t->nghost = 0;
	} else {
		/* a subset of what is outstanding: one wait each */
		for (size_t i = 0; i < n; i++)
			if (req_has(t, me->array[i * 4]))
				completed(x, r, t, me->array[i * 4]);
	}
}

/* ---- MPI-IO: time, not actions ------------------------------------------- */

/* The replay has no file I/O and no one-sided communication: an MPI-IO or
 * one-sided call, and a completion that waited only for such requests,
 * become a sleep of the call's measured duration (SMPI's "sleep SECONDS");
 * the 2011 dialect has no sleep, so there it is computation at the rank's
 * flop rate. Counted for the warning lines: kind 0 MPI-IO, -1 a
 * neighbourhood collective, else 1 + the one-sided kind (RMA_KINDS - 1:
 * completions of one-sided requests). */
static void io_time(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		    const struct proto_event *ev, int kind)
{
	uint64_t ns = ev->t_end > ev->t_start ? ev->t_end - ev->t_start : 0;

	if (kind < 0) {
		x->nbr_calls++;
		x->nbr_ns += ns;
	} else if (kind == 0) {
		x->io_calls++;
		x->io_ns += ns;
	} else {
		x->rma_calls[kind - 1]++;
		x->rma_ns[kind - 1] += ns;
	}
	if (x->d == D_SMPI)
		act(x, r, t, "sleep %.9f", (double)ns * 1e-9);
	else
		t->pending += (double)ns * 1e-9 * t->flop_rate;
}

/* Remember rank r's MPI-IO (kind 1) or one-sided (kind 2) request id: 0,
 * or -1 out of memory; past TI_REQS_MAX in the job, forgotten (its wait
 * counts as unknown). */
static int ioreq_add(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id, int kind)
{
	int known = mgr_reqtab_get(&x->ioreqs, (uint64_t)r, id) != NULL;
	int rc = mgr_reqtab_put(&x->ioreqs, (uint64_t)r, id, &(struct mgr_req){.kind = kind});

	if (rc == PROTO_E_FULL)
		return 0;
	if (rc)
		return -1;
	t->nioreq += !known;
	return 0;
}

/* Remove rank r's request id: its kind if it was an MPI-IO (1) or a
 * one-sided (2) one, else 0. */
static int ioreq_take(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id)
{
	struct mgr_req q;

	if (id <= 0 || !mgr_reqtab_take(&x->ioreqs, (uint64_t)r, id, &q))
		return 0;
	t->nioreq--;
	return q.kind;
}

/* The i-th request id (0: none) a completion (Wait, Test, Waitany,
 * Testany, or the ARRAY of Waitall, Waitsome, Testall, Testsome) says it
 * completed: 0, or -1 past the last one (or not a completion). */
static int done_id(const struct proto_trace_event *me, size_t i, int64_t *id)
{
	const struct proto_event *ev = me->ev;
	struct proto_done d;

	*id = 0;
	switch (proto_ev_base(ev->type)) {
	case PROTO_EV_MPI_WAIT:
	case PROTO_EV_MPI_WAITANY:	/* and Testany (req 0: none) */
		*id = fld(ev, PROTO_F_req);
		return i ? -1 : 0;
	case PROTO_EV_MPI_TEST:
		*id = fld(ev, PROTO_F_result) ? fld(ev, PROTO_F_req) : 0;
		return i ? -1 : 0;
	default:
		if (proto_ev_done(ev->type, me->array, me->narray, i, &d))
			return -1;
		*id = d.req;
		return 0;
	}
}

/* An MPI-IO event (time; its request remembered), or a completion of
 * MPI-IO requests: 1 when handled here (nothing left for the dialect; a
 * Waitall that also completed other requests goes on to it without its
 * MPI-IO ones), 0 otherwise, -1 out of memory. */
static int io_event(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		    const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int rma = proto_ev_rma(ev->type), k = 0;
	int64_t req;

	if (rma || proto_ev_mpiio(ev->type) != PROTO_IO_NOT) {
		io_time(x, r, t, ev, rma ? 1 + proto_ev_rma_kind(ev->type) : 0);
		req = fld(ev, PROTO_F_req);	/* 0: none */
		return req > 0 && ioreq_add(x, r, t, req, rma ? 2 : 1) ? -1 : 1;
	}
	if (!t->nioreq)
		return 0;
	/* a test that found its MPI-IO request not done: nothing to replay */
	if (ev->type == PROTO_EV_MPI_TEST && !fld(ev, PROTO_F_result))
		return mgr_reqtab_get(&x->ioreqs, (uint64_t)r, fld(ev, PROTO_F_req)) != NULL;
	for (size_t i = 0, n = 0, io = 0; ; i++) {
		int64_t id;
		int kk;

		if (done_id(me, i, &id) < 0) {
			/* a completion that also completed other requests goes
			 * on to the dialect without its MPI-IO ones */
			if (!io || io < n)
				return 0;
			break;
		}
		n++;
		if ((kk = ioreq_take(x, r, t, id))) {
			io++;
			k = kk;
		}
	}
	io_time(x, r, t, ev, k == 1 ? 0 : RMA_KINDS);
	return 1;
}

/* ---- the two dialects --------------------------------------------------- */

/* A persistent request started: MPI_Start's arguments, or one entry of
 * MPI_Startall's ARRAY (req, peer, tag, bytes, kind each). */
struct ti_start {
	int64_t req, peer, tag, bytes, kind;	/* kind 1: a send, 2: a receive */
};

static struct ti_start start_of(const struct proto_event *ev)
{
	return (struct ti_start){fld(ev, PROTO_F_req), fld(ev, PROTO_F_peer),
				 fld(ev, PROTO_F_tag), fld(ev, PROTO_F_bytes),
				 fld(ev, PROTO_F_kind)};
}

/* The i-th request of MPI_Startall's ARRAY into *s: 0, or -1 past its end. */
static int startall_get(const struct proto_trace_event *me, size_t i,
			struct ti_start *s)
{
	const int64_t *q;

	if (!me->array || i * 5 + 5 > me->narray)
		return -1;
	q = me->array + i * 5;
	*s = (struct ti_start){q[0], q[1], q[2], q[3], q[4]};
	return 0;
}

/* A request started in SMPI's terms: isend / irecv; nothing to or from
 * MPI_PROC_NULL. */
static int smpi_start(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		      const struct ti_start *s)
{
	int64_t p, tg;

	if (s->kind == 1)
		return s->peer < 0 ? 0 : post(x, r, t, "isend", s->peer, s->tag, s->bytes,
					      s->req, r, (int)s->peer, (int)s->tag);
	if (s->kind != 2 || s->peer == PEER_NULL || s->peer < PEER_ANY)
		return 0;
	p = s->peer == PEER_ANY ? SMPI_ANY_SOURCE : s->peer;
	tg = s->tag < 0 ? SMPI_ANY_TAG : s->tag;
	return post(x, r, t, "irecv", p, tg, s->bytes, s->req,
		    s->peer == PEER_ANY ? SMPI_ANY_SOURCE - 1 : (int)s->peer, r, (int)tg);
}

/* The same in the 2011 dialect (no wildcard, no MPI_PROC_NULL). */
static int d2011_start(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		       const struct ti_start *s)
{
	if (s->peer < 0)
		return 0;
	act(x, r, t, "%s p%" PRId64 " %" PRId64,
	    s->kind == 1 ? "Isend" : "Irecv", s->peer, s->bytes);
	return req_add(t, s->req, s->kind == 1 ? r : (int)s->peer,
		       s->kind == 1 ? (int)s->peer : r, (int)s->tag);
}

/* MPI_Start and MPI_Startall in the exporter's dialect: 0, or -1 out of
 * memory. */
static int started(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		   const struct proto_trace_event *me)
{
	int (*one)(struct mgr_ti *, int32_t, struct ti_rank *,
		   const struct ti_start *) = x->d == D_SMPI ? smpi_start : d2011_start;
	struct ti_start s;

	if (x->d == D_SMPI)
		x->mapped[me->ev->type]++;
	if (me->ev->type == PROTO_EV_MPI_START) {
		s = start_of(me->ev);
		return one(x, r, t, &s);
	}
	for (size_t i = 0; !startall_get(me, i, &s); i++)
		if (one(x, r, t, &s))
			return -1;
	return 0;
}

/* MPI_Test that found its request not complete, in SMPI's terms: the
 * replay tests the request it holds under the key and keeps it. */
static int smpi_test(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id)
{
	struct ti_req q;

	if (req_take(t, id, &q) != 0) {
		x->skip_req++;
		return 0;
	}
	if (q.stored || key_stored(t, q.src, q.dst, q.tag) >= 0)
		act(x, r, t, "test %d %d %d", q.src, q.dst, q.tag);
	return req_put(t, &q);
}

/* MPI_Waitall in the 2011 dialect: a wait per request it completed; all
 * the outstanding ones when the sensor lost the list. */
static void d2011_waitall(struct mgr_ti *x, int32_t r, struct ti_rank *t,
			  const struct proto_trace_event *me)
{
	size_t n = me->array ? me->narray / 4 : 0;
	int64_t count = fld(me->ev, PROTO_F_count);

	if (count > 0 && n < (size_t)count) {
		while (t->nreq)
			completed(x, r, t, t->req[t->nreq - 1].id);
	} else {
		for (size_t i = 0; i < n; i++)
			if (req_has(t, me->array[i * 4]))
				completed(x, r, t, me->array[i * 4]);
	}
}

/* MPI_Request_free: SMPI's replay waits for the request at its end and
 * holds its key until then (a ghost); the 2011 dialect forgets it. */
static int request_free(struct mgr_ti *x, struct ti_rank *t, int64_t id)
{
	struct ti_req q;

	if (req_take(t, id, &q) != 0 || x->d != D_SMPI)
		return 0;
	x->mapped[PROTO_EV_MPI_REQUEST_FREE]++;
	if (!q.stored)
		return 0;
	q.ghost = 1;
	return req_put(t, &q);
}

/* Completions in either dialect (Wait, Waitany and Testany, Test, Waitall,
 * Waitsome, Testall, Testsome, Request_free); every other event (Comm_rank,
 * Probe, Iprobe, Cancel ...) has no replay action. 0, or -1 out of memory. */
static int done_event(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		      const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int64_t req = fld(ev, PROTO_F_req), peer = fld(ev, PROTO_F_peer);
	int smpi = x->d == D_SMPI;
	struct proto_done d;

	switch (proto_ev_base(ev->type)) {
	case PROTO_EV_MPI_WAIT:
		done_one(x, r, t, req, peer);
		break;
	case PROTO_EV_MPI_WAITANY:	/* and Testany (req 0: none done) */
		if (req <= 0)
			break;
		if (smpi && ev->type != PROTO_EV_MPI_WAITANY)
			x->mapped[ev->type]++;
		done_one(x, r, t, req, peer);
		break;
	case PROTO_EV_MPI_TEST:
		if (fld(ev, PROTO_F_result))	/* the program went on after completion */
			done_one(x, r, t, req, peer);
		else if (smpi)
			return smpi_test(x, r, t, req);
		break;
	case PROTO_EV_MPI_WAITALL:
		if (smpi)
			waitall(x, r, t, me);
		else
			d2011_waitall(x, r, t, me);
		break;
	case PROTO_EV_MPI_WAITSOME:	/* one wait per request completed */
	case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTSOME:
		for (size_t i = 0; !proto_ev_done(ev->type, me->array, me->narray, i, &d); i++) {
			if (smpi && i == 0)
				x->mapped[ev->type]++;
			done_one(x, r, t, d.req, d.peer);
		}
		break;
	case PROTO_EV_MPI_REQUEST_FREE:
		return request_free(x, t, req);
	default:
		break;
	}
	return 0;
}

/* A call SMPI's replay has under another name (ti_maps), counted. */
static void mapped(struct mgr_ti *x, const struct proto_event *ev)
{
	if (ev->type != proto_ev_base(ev->type))
		x->mapped[ev->type]++;
}

/* MPI_Sendrecv (and Sendrecv_replace) in SMPI's dialect. */
static void smpi_sendrecv(struct mgr_ti *x, int32_t r, struct ti_rank *t,
			  const struct proto_event *ev)
{
	int64_t peer = fld(ev, PROTO_F_peer), tag = fld(ev, PROTO_F_tag);
	int64_t bytes = clamp_int(x, fld(ev, PROTO_F_bytes));
	int64_t src = fld(ev, PROTO_F_src);

	if (peer < 0 && src < 0)
		return;
	mapped(x, ev);
	if (src < 0) {
		act(x, r, t, "send %" PRId64 " %" PRId64 " %" PRId64, peer, tag, bytes);
	} else if (peer < 0) {
		act(x, r, t, "recv %" PRId64 " %" PRId64 " %" PRId64,
		    src, tag, clamp_int(x, fld(ev, PROTO_F_rbytes)));
	} else if (tag == 0) {
		/* the replay's sendRecv uses tag 0 on both sides */
		act(x, r, t, "sendRecv %" PRId64 " %" PRId64 " %" PRId64
		    " %" PRId64 " " SMPI_BYTE " " SMPI_BYTE,
		    bytes, peer, clamp_int(x, fld(ev, PROTO_F_rbytes)), src);
	} else {
		/* other tags: the same exchange spelled out (the receive tag
		 * is taken equal to the send tag) */
		act(x, r, t, "isend %" PRId64 " %" PRId64 " %" PRId64, peer, tag, bytes);
		act(x, r, t, "recv %" PRId64 " %" PRId64 " %" PRId64,
		    src, tag, clamp_int(x, fld(ev, PROTO_F_rbytes)));
		act(x, r, t, "wait %d %" PRId64 " %" PRId64, r, peer, tag);
	}
}

/* MPI_Isendrecv(_replace): the send an isend never waited (the replay
 * waits for it at its end, as a Bsend's), the receive an irecv under the
 * request's id, which its completion waits for; start: the dialect's. */
static int isendrecv(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		     const struct proto_trace_event *me,
		     int (*start)(struct mgr_ti *, int32_t, struct ti_rank *,
				  const struct ti_start *))
{
	const struct proto_event *ev = me->ev;
	int64_t peer = fld(ev, PROTO_F_peer), bytes = fld(ev, PROTO_F_bytes);
	struct ti_start s = {fld(ev, PROTO_F_req), fld(ev, PROTO_F_src),
			     me->array && me->narray >= 1 ? me->array[0] : -1,
			     me->array && me->narray >= 2 ? me->array[1] : bytes, 2};

	if (peer >= 0 && x->d == D_SMPI)
		act(x, r, t, "isend %" PRId64 " %" PRId64 " %" PRId64, peer,
		    fld(ev, PROTO_F_tag), clamp_int(x, bytes));
	else if (peer >= 0)
		act(x, r, t, "Isend p%" PRId64 " %" PRId64, peer, bytes);
	return start(x, r, t, &s);
}

/* Point to point and requests in SMPI's dialect (the table in
 * docs/modules/export-simgrid.md): 0, or -1 out of memory. */
static int smpi_p2p(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		    const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	unsigned base = proto_ev_base(ev->type);
	int64_t peer = fld(ev, PROTO_F_peer), tag = fld(ev, PROTO_F_tag);
	int64_t bytes = fld(ev, PROTO_F_bytes);

	switch (base) {
	case PROTO_EV_MPI_SEND:	/* every blocking mode */
		if (peer < 0)
			break;
		mapped(x, ev);
		/* buffered: an isend no one waits for (the replay waits for
		 * it at its end); its send would block where MPI_Bsend
		 * returns, and legal programs deadlock */
		act(x, r, t, "%s %" PRId64 " %" PRId64 " %" PRId64,
		    ev->type == PROTO_EV_MPI_BSEND ? "isend" : "send",
		    peer, tag, clamp_int(x, bytes));
		break;
	case PROTO_EV_MPI_RECV:		/* and Mrecv */
		if (peer == PEER_NULL || peer < PEER_ANY)
			break;
		mapped(x, ev);
		act(x, r, t, "recv %" PRId64 " %" PRId64 " %" PRId64,
		    peer == PEER_ANY ? SMPI_ANY_SOURCE : peer,
		    tag < 0 ? SMPI_ANY_TAG : tag, clamp_int(x, bytes));
		break;
	case PROTO_EV_MPI_ISEND:	/* every nonblocking mode */
	case PROTO_EV_MPI_IRECV: {	/* and Imrecv */
		struct ti_start s = {fld(ev, PROTO_F_req), peer, tag, bytes,
				     base == PROTO_EV_MPI_ISEND ? 1 : 2};

		mapped(x, ev);
		return smpi_start(x, r, t, &s);
	}
	case PROTO_EV_MPI_START:
	case PROTO_EV_MPI_STARTALL:
		return started(x, r, t, me);
	case PROTO_EV_MPI_SENDRECV:	/* and Sendrecv_replace */
		smpi_sendrecv(x, r, t, ev);
		break;
	case PROTO_EV_MPI_ISENDRECV:	/* and Isendrecv_replace */
		x->mapped[ev->type]++;	/* said: an isend no one waits for */
		return isendrecv(x, r, t, me, smpi_start);
	default:
		return done_event(x, r, t, me);
	}
	return 0;
}

/* Point to point and requests in the 2011 dialect: 0, or -1 out of memory. */
static int d2011_p2p(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		     const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int64_t peer = fld(ev, PROTO_F_peer), tag = fld(ev, PROTO_F_tag);
	int64_t bytes = fld(ev, PROTO_F_bytes), src;

	switch (proto_ev_base(ev->type)) {
	case PROTO_EV_MPI_SEND:
	case PROTO_EV_MPI_RECV:
		if (peer >= 0)
			act(x, r, t, "%s p%" PRId64 " %" PRId64,
			    proto_ev_base(ev->type) == PROTO_EV_MPI_SEND ? "send" : "recv",
			    peer, bytes);
		break;
	case PROTO_EV_MPI_ISEND:
		if (peer < 0)
			break;
		act(x, r, t, "Isend p%" PRId64 " %" PRId64, peer, bytes);
		return req_add(t, fld(ev, PROTO_F_req), r, (int)peer, (int)tag);
	case PROTO_EV_MPI_IRECV:
		if (peer < 0) {	/* no wildcard in this dialect */
			if (peer == PEER_ANY) {
				x->skip_2011++;
				x->skip_2011_by[ev->type]++;
			}
			break;
		}
		act(x, r, t, "Irecv p%" PRId64 " %" PRId64, peer, bytes);
		return req_add(t, fld(ev, PROTO_F_req), (int)peer, r, (int)tag);
	case PROTO_EV_MPI_START:
	case PROTO_EV_MPI_STARTALL:
		return started(x, r, t, me);
	case PROTO_EV_MPI_SENDRECV:
		src = fld(ev, PROTO_F_src);
		if (peer >= 0)
			act(x, r, t, "Isend p%" PRId64 " %" PRId64, peer, bytes);
		if (src >= 0)
			act(x, r, t, "recv p%" PRId64 " %" PRId64, src,
			    fld(ev, PROTO_F_rbytes));
		if (peer >= 0)
			act(x, r, t, "wait");
		break;
	case PROTO_EV_MPI_ISENDRECV:
		return isendrecv(x, r, t, me, d2011_start);
	default:
		return done_event(x, r, t, me);
	}
	return 0;
}

/* The v-collectives in SMPI's dialect: their per-rank counts (counts). */
static void smpi_vcoll(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		       const struct proto_trace_event *me, const struct ti_comm *cm)
{
	const struct proto_event *ev = me->ev;
	int64_t b = fld(ev, PROTO_F_bytes), rb = fld(ev, PROTO_F_rbytes);
	int64_t root = fld(ev, PROTO_F_root);

	flush_compute(x, r, t, 0);
	switch (ev->type) {
	case PROTO_EV_MPI_GATHERV:
		fprintf(t->f, "%d gatherv %" PRId64, r, clamp_int(x, b));
		counts(x, t, me, 0, rb, cm);
		fprintf(t->f, " %" PRId64 "\n", root_of(cm, root));
		break;
	case PROTO_EV_MPI_SCATTERV:
		fprintf(t->f, "%d scatterv", r);
		counts(x, t, me, 0, b, cm);
		fprintf(t->f, " %" PRId64 " %" PRId64 "\n", clamp_int(x, rb), root_of(cm, root));
		break;
	case PROTO_EV_MPI_ALLGATHERV:
		fprintf(t->f, "%d allgatherv %" PRId64, r, clamp_int(x, b));
		counts(x, t, me, 0, rb, cm);
		fputc('\n', t->f);
		break;
	case PROTO_EV_MPI_ALLTOALLV:
	case PROTO_EV_MPI_ALLTOALLW:	/* the same ARRAY of bytes */
		fprintf(t->f, "%d alltoallv %" PRId64, r, clamp_int(x, b));
		counts(x, t, me, 0, b, cm);
		fprintf(t->f, " %" PRId64, clamp_int(x, rb));
		counts(x, t, me, (size_t)t->world, rb, cm);
		fputc('\n', t->f);
		break;
	case PROTO_EV_MPI_REDUCE_SCATTER:
	case PROTO_EV_MPI_REDUCE_SCATTER_BLOCK:	/* no ARRAY: total / n each */
		fprintf(t->f, "%d reducescatter", r);
		counts(x, t, me, 0, b, cm);
		fputs(" 0\n", t->f);
		break;
	default:
		return;
	}
	x->actions++;
}

/* ---- collectives on sub-communicators ------------------------------------ */

/* SMPI's replay runs every collective on MPI_COMM_WORLD: its comm_split and
 * comm_dup actions do nothing and no collective action names a
 * communicator (src/smpi/internals/smpi_replay.cpp, SimGrid 3.32). A
 * collective on a communicator of fewer ranks is written as the messages
 * of a simple algorithm among its members (world ranks, from
 * mgr_ti_subs), on a tag of its own that application messages do not
 * use: the root sends to, or receives from, each other member (rooted
 * kinds); every member sends to every other and receives from each (the
 * kinds where everyone waits for everyone: isend, recv, wait); a chain in
 * rank order (scan, exscan). A receive's size is an upper bound of what
 * arrives (the replay aborts on a message larger than its receive). The
 * tag is TI_SUB_TAG + the communicator's job-wide name mod TI_SUB_TAGS:
 * the replay matches messages by source and tag only, so two ranks that
 * run collectives on two overlapping communicators in different orders
 * would pair one's messages with the other's on a single tag. */
#define TI_SUB_TAG 2147480000
#define TI_SUB_TAGS 2048	/* TI_SUB_TAG + 2047 <= INT_MAX */

struct sub {		/* one collective on a sub-communicator, at rank r */
	struct mgr_ti *x;
	int32_t r;
	struct ti_rank *t;
	const struct proto_trace_event *me;
	const int32_t *w;	/* the members' world ranks */
	size_t n, at;		/* their count, r's rank among them */
	int tag;		/* the communicator's (TI_SUB_TAG + ...) */
};

/* Bytes for member i: the event's ARRAY of per-rank counts (from offset
 * off, in the communicator's order) when it has them, else total / n. */
static int64_t sub_count(const struct sub *s, size_t off, size_t i, int64_t total)
{
	const struct proto_trace_event *me = s->me;

	if (me->array && me->narray >= off + s->n)
		return clamp_int(s->x, me->array[off + i]);
	return total / (int64_t)s->n;
}

/* The root sends to each other member (its count from off, or out), the
 * others receive in bytes. */
static void sub_from_root(const struct sub *s, size_t root, size_t off,
			  int64_t out, int64_t in)
{
	if (root != s->at) {
		act(s->x, s->r, s->t, "recv %d %d %" PRId64, s->w[root], s->tag, in);
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		if (i != s->at)
			act(s->x, s->r, s->t, "send %d %d %" PRId64, s->w[i], s->tag,
			    off == SIZE_MAX ? out : sub_count(s, off, i, out * (int64_t)s->n));
}

/* Each other member sends out bytes to the root, which receives in. */
static void sub_to_root(const struct sub *s, size_t root, int64_t out, int64_t in)
{
	if (root != s->at) {
		act(s->x, s->r, s->t, "send %d %d %" PRId64, s->w[root], s->tag, out);
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		if (i != s->at)
			act(s->x, s->r, s->t, "recv %d %d %" PRId64, s->w[i], s->tag, in);
}

/* Every member sends to every other (its count from off, or out) and
 * receives in bytes from each. */
static void sub_all(const struct sub *s, size_t off, int64_t out, int64_t in)
{
	for (size_t i = 0; i < s->n; i++)
		if (i != s->at)
			act(s->x, s->r, s->t, "isend %d %d %" PRId64, s->w[i], s->tag,
			    off == SIZE_MAX ? out : sub_count(s, off, i, out * (int64_t)s->n));
	for (size_t i = 0; i < s->n; i++)
		if (i != s->at)
			act(s->x, s->r, s->t, "recv %d %d %" PRId64, s->w[i], s->tag, in);
	for (size_t i = 0; i < s->n; i++)
		if (i != s->at)
			act(s->x, s->r, s->t, "wait %d %d %d", s->r, s->w[i], s->tag);
}

/* A collective on a communicator of fewer ranks than the world, as
 * point-to-point messages: 0 (or skipped, counted, on an
 * intercommunicator: each group gets the other's data, which no replay
 * action does), -1 when its members are not known. */
static int sub_coll(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		    const struct proto_trace_event *me, int64_t comm)
{
	const struct proto_event *ev = me->ev;
	int64_t b = clamp_int(x, fld(ev, PROTO_F_bytes));
	int64_t rb = clamp_int(x, fld(ev, PROTO_F_rbytes));
	int64_t root = mgr_ev_field(ev, PROTO_F_root, 0);
	struct sub s = {x, r, t, me, NULL, 0, 0, TI_SUB_TAG};

	if (comm == 1) {	/* MPI_COMM_SELF (the sensor's id 1): no message */
		x->self_coll++;
		return 0;
	}
	if (x->subs) {
		int64_t name = mgr_comms_name(x->comms, me->stream->id, comm);

		if (mgr_comms_inter(x->comms, name)) {
			x->skip_inter++;
			return 0;
		}
		s.w = mgr_ti_subs_members(x->subs, name, &s.n);
		s.tag = TI_SUB_TAG + (int)((uint64_t)name % TI_SUB_TAGS);
	}
	while (s.at < s.n && s.w[s.at] != r)
		s.at++;
	if (s.at >= s.n || root < 0 || root >= (int64_t)s.n)
		return -1;
	x->sub_coll++;
	switch (ev->type) {
	case PROTO_EV_MPI_BCAST:
	case PROTO_EV_MPI_SCATTER:
		sub_from_root(&s, (size_t)root, SIZE_MAX, b, ev->type == PROTO_EV_MPI_BCAST ? b : rb);
		break;
	case PROTO_EV_MPI_SCATTERV:
		sub_from_root(&s, (size_t)root, 0, b / (int64_t)s.n, rb);
		break;
	case PROTO_EV_MPI_REDUCE:
	case PROTO_EV_MPI_GATHER:
	case PROTO_EV_MPI_GATHERV:	/* (its rb: the root's total) */
		sub_to_root(&s, (size_t)root, b, ev->type == PROTO_EV_MPI_REDUCE ? b : rb ? rb : b);
		break;
	case PROTO_EV_MPI_SCAN:
	case PROTO_EV_MPI_EXSCAN:	/* a chain in rank order */
		if (s.at > 0)
			act(x, r, t, "recv %d %d %" PRId64, s.w[s.at - 1], s.tag, b);
		if (s.at + 1 < s.n)
			act(x, r, t, "send %d %d %" PRId64, s.w[s.at + 1], s.tag, b);
		break;
	case PROTO_EV_MPI_ALLTOALLV:	/* ARRAY: send counts, then receive counts */
	case PROTO_EV_MPI_ALLTOALLW:	/* the same, in bytes (each peer's type) */
	case PROTO_EV_MPI_REDUCE_SCATTER:	/* ARRAY: the counts */
		sub_all(&s, 0, b / (int64_t)s.n, ev->type == PROTO_EV_MPI_REDUCE_SCATTER ? b : rb);
		break;
	default:	/* barrier, allreduce, allgather(v), alltoall */
		sub_all(&s, SIZE_MAX, b, ev->type == PROTO_EV_MPI_ALLREDUCE ? b :
			ev->type == PROTO_EV_MPI_BARRIER ? 0 : rb);
		break;
	}
	return 0;
}

/* Collectives in SMPI's dialect: the replayer runs them on the whole
 * world only (cm: a communicator of every rank, perhaps in another order);
 * others are skipped, counted. */
static void smpi_coll(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		      const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int64_t comm = fld(ev, PROTO_F_comm);
	int64_t b = fld(ev, PROTO_F_bytes), rb = fld(ev, PROTO_F_rbytes);
	const struct ti_comm *cm;
	int64_t root;

	if (!comm_is_world(t, comm)) {
		if (sub_coll(x, r, t, me, comm))
			x->skip_comm++;
		return;
	}
	cm = comm_find(t, comm);
	root = root_of(cm, fld(ev, PROTO_F_root));
	switch (ev->type) {
	case PROTO_EV_MPI_BARRIER:
		act(x, r, t, "barrier");
		break;
	case PROTO_EV_MPI_BCAST:
		act(x, r, t, "bcast %" PRId64 " %" PRId64, b, root);
		break;
	case PROTO_EV_MPI_REDUCE:
		act(x, r, t, "reduce %" PRId64 " 0 %" PRId64, clamp_int(x, b), root);
		break;
	case PROTO_EV_MPI_ALLREDUCE:
		act(x, r, t, "allreduce %" PRId64 " 0", clamp_int(x, b));
		break;
	case PROTO_EV_MPI_GATHER:
		act(x, r, t, "gather %" PRId64 " %" PRId64 " %" PRId64,
		    clamp_int(x, b), clamp_int(x, rb ? rb : b), root);
		break;
	case PROTO_EV_MPI_SCATTER:
		act(x, r, t, "scatter %" PRId64 " %" PRId64 " %" PRId64,
		    clamp_int(x, b ? b : rb), clamp_int(x, rb), root);
		break;
	case PROTO_EV_MPI_ALLGATHER:
	case PROTO_EV_MPI_ALLTOALL:
		act(x, r, t, "%s %" PRId64 " %" PRId64,
		    ev->type == PROTO_EV_MPI_ALLGATHER ? "allgather" : "alltoall",
		    clamp_int(x, b), clamp_int(x, rb));
		break;
	case PROTO_EV_MPI_SCAN:
	case PROTO_EV_MPI_EXSCAN:
		act(x, r, t, "%s %" PRId64 " 0",
		    ev->type == PROTO_EV_MPI_SCAN ? "scan" : "exscan", clamp_int(x, b));
		break;
	default:
		smpi_vcoll(x, r, t, me, cm);
		break;
	}
}

/* Collectives in the 2011 dialect: Table 1 of [000] has barrier, bcast,
 * reduce and allReduce, without a root (rooted on p0), each preceded by
 * comm_size; the others are skipped, counted. */
static void d2011_coll(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		       const struct proto_event *ev)
{
	int64_t b = fld(ev, PROTO_F_bytes);

	switch (ev->type) {
	case PROTO_EV_MPI_BARRIER:
	case PROTO_EV_MPI_BCAST:
	case PROTO_EV_MPI_REDUCE:
	case PROTO_EV_MPI_ALLREDUCE:
		break;
	default:
		x->skip_2011++;
		x->skip_2011_by[ev->type]++;
		return;
	}
	if (!comm_is_world(t, fld(ev, PROTO_F_comm))) {
		x->skip_comm++;
		return;
	}
	act(x, r, t, "comm_size %" PRId64, t->world);
	if (ev->type == PROTO_EV_MPI_BARRIER)
		act(x, r, t, "barrier");
	else if (ev->type == PROTO_EV_MPI_BCAST)
		act(x, r, t, "bcast %" PRId64, b);
	else
		act(x, r, t, "%s %" PRId64 " 0",
		    ev->type == PROTO_EV_MPI_REDUCE ? "reduce" : "allReduce", b);
}

/* The rank's life and its communicators, in either dialect: 1 when ev is
 * one of those calls (handled), 0 when not, -1 out of memory. SMPI's
 * replay has init, finalize, comm_size, comm_split and comm_dup; the 2011
 * dialect comm_size only. Every constructor's communicator is remembered
 * (comm_made) for the collectives on it. */
static int life_event(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		      const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int smpi = x->d == D_SMPI;

	switch (ev->type) {
	case PROTO_EV_MPI_INIT:
		if (smpi && !t->inited)
			act(x, r, t, "init");
		t->inited = 1;
		return 1;
	case PROTO_EV_MPI_FINALIZE:
		flush_compute(x, r, t, 1);
		if (smpi)
			act(x, r, t, "finalize");
		t->finalized = 1;
		return 1;
	case PROTO_EV_MPI_COMM_SIZE:
		act(x, r, t, "comm_size %" PRId64, fld(ev, PROTO_F_result));
		return 1;
	case PROTO_EV_MPI_COMM_SPLIT:
	case PROTO_EV_MPI_COMM_DUP:
	case PROTO_EV_MPI_COMM_DUP_WITH_INFO:	/* the same dup to SMPI */
	case PROTO_EV_MPI_COMM_CREATE:		/* the others: no replay */
	case PROTO_EV_MPI_CART_CREATE:		/* action, known for their */
	case PROTO_EV_MPI_CART_SUB:		/* size only */
	case PROTO_EV_MPI_COMM_SPLIT_TYPE:
	case PROTO_EV_MPI_COMM_IDUP:		/* (its request: skip_req) */
	case PROTO_EV_MPI_GRAPH_CREATE:
	case PROTO_EV_MPI_DIST_GRAPH_CREATE:
	case PROTO_EV_MPI_DIST_GRAPH_CREATE_ADJACENT:
	case PROTO_EV_MPI_COMM_CREATE_GROUP:
	case PROTO_EV_MPI_INTERCOMM_MERGE:
		break;
	default:
		return 0;
	}
	if (comm_made(t, me))
		return -1;
	if (smpi && ev->type == PROTO_EV_MPI_COMM_SPLIT)
		act(x, r, t, "comm_split %" PRId64 " %" PRId64,
		    fld(ev, PROTO_F_color), fld(ev, PROTO_F_key));
	else if (smpi && (ev->type == PROTO_EV_MPI_COMM_DUP ||
			  ev->type == PROTO_EV_MPI_COMM_DUP_WITH_INFO))
		act(x, r, t, "comm_dup");
	return 1;
}

/* One MPI event of rank r in the exporter's dialect: 0, or -1 out of
 * memory. */
static int dialect_event(struct mgr_ti *x, int32_t r, struct ti_rank *t,
			 const struct proto_trace_event *me)
{
	int rc = life_event(x, r, t, me);

	if (rc)
		return rc < 0 ? -1 : 0;
	if (proto_ev_collective(me->ev->type) ||
	    proto_ev_coll2(me->ev->type) == PROTO_COLL2_BLOCKING) {
		/* Alltoallw, Reduce_scatter_block: mapped (not those written
		 * for a nonblocking one) */
		if (proto_ev_coll2(me->ev->type) && x->d == D_SMPI &&
		    !(me->ev->flags & TI_EVF_NBC))
			x->mapped[me->ev->type]++;
		if (x->d == D_SMPI)
			smpi_coll(x, r, t, me);
		else
			d2011_coll(x, r, t, me->ev);
		return 0;
	}
	return x->d == D_SMPI ? smpi_p2p(x, r, t, me) : d2011_p2p(x, r, t, me);
}

double mgr_compute_flops(const struct proto_event *ev, double meta_instr_rate)
{
	double vol = (double)ev->arg[1], rate = (double)ev->arg[3];
	double irate = ev->arg[4] > 0 ? (double)ev->arg[4] : meta_instr_rate;

	if (ev->arg[2] == 0)
		return vol > 0 ? vol : 0;
	if (irate > 0 && rate > 0)
		return vol * rate / irate;
	return (double)ev->arg[0] * 1e-9 * rate;
}

/* CPU time of a COMPUTE stretch that the program itself used: the thread
 * CPU time (arg 0) read by the sensor just outside the stretch's stamps,
 * capped by the stamps' interval. The reads' own kernel time falls between
 * them and the stamps (with perf counters, a counter read that traps to
 * the hypervisor costs microseconds a stretch); CPU time inside an interval cannot exceed it. */
static double stretch_cpu_ns(const struct proto_event *ev)
{
	double cpu = (double)ev->arg[0];
	double wall = ev->t_end > ev->t_start ? (double)(ev->t_end - ev->t_start) : 0;

	return cpu > wall ? wall : cpu;
}

/* Flops of a COMPUTE event; a volume that is CPU time x rate (method 0)
 * counts only the stretch's own CPU time (stretch_cpu_ns). */
static double compute_flops(const struct ti_rank *t, const struct proto_event *ev)
{
	double f = mgr_compute_flops(ev, t->instr_rate);

	if (ev->arg[2] == 0 && ev->arg[0] > 0)
		f *= stretch_cpu_ns(ev) / (double)ev->arg[0];
	return f;
}

/* ---- nonblocking and neighbourhood collectives ----------------------------- */

/* The replay has neither nonblocking nor neighbourhood collectives: a
 * nonblocking collective becomes its blocking form, written where its
 * request completed, or earlier: with a later-started one's completion,
 * or before the rank's next blocking collective (so that every rank
 * writes its collectives in the order it called them, which MPI makes the
 * same on every rank; written at each one's own completion, two ranks
 * that completed them in other orders replayed them crossed and SimGrid
 * deadlocked); counted per type: the ti_maps lines. A neighbourhood
 * collective, blocking or the completion of a nonblocking one, is a sleep
 * of its measured duration (computation in the 2011 dialect; io_time). */

/* Remember the nonblocking collective me, request id: 0, or -1 out of
 * memory (past TI_REQS_MAX it is forgotten: its completion writes nothing). */
static int nbc_add(struct ti_rank *t, const struct proto_trace_event *me,
		   int64_t id)
{
	struct ti_nbc *n;

	if (t->nnbc >= TI_REQS_MAX)
		return 0;
	if (mgr_grow((void **)&t->nbc, &t->capnbc, t->nnbc + 1, sizeof(*t->nbc)))
		return -1;
	n = &t->nbc[t->nnbc];
	*n = (struct ti_nbc){id, me->ev->type, 0, *me->ev, NULL, 0};
	n->ev.type = (uint16_t)proto_ev_icoll(me->ev->type);
	n->ev.flags |= TI_EVF_NBC;
	if (me->array && me->narray) {
		if (!(n->arr = malloc(me->narray * sizeof(*n->arr))))
			return -1;
		memcpy(n->arr, me->array, me->narray * sizeof(*n->arr));
		n->narr = me->narray;
	}
	t->nnbc++;
	return 0;
}

/* Write those of the first k remembered nonblocking collectives not
 * written yet (in the order they were started) as their blocking forms,
 * at the event me; the k-th (whole: 1, at its completion) takes me's
 * duration, the others none. 0, or -1 on error. */
static int nbc_write(struct mgr_ti *x, int32_t r, struct ti_rank *t, size_t k,
		     int whole, const struct proto_trace_event *me)
{
	int rc = 0;

	for (size_t i = 0; i < k && rc == 0; i++) {
		struct ti_nbc *n = &t->nbc[i];
		struct proto_trace_event as = {&n->ev, me->stream, n->arr, n->narr};

		if (n->written)
			continue;
		n->written = 1;
		n->ev.t_start = me->ev->t_start;
		n->ev.t_end = whole && i == k - 1 ? me->ev->t_end : me->ev->t_start;
		if (x->d == D_SMPI)
			x->mapped[n->itype]++;
		if (proto_ev_coll2(n->ev.type) == PROTO_COLL2_NEIGHBOR)
			io_time(x, r, t, &n->ev, -1);
		else
			rc = dialect_event(x, r, t, &as);
		free(n->arr);
		n->arr = NULL;
	}
	return rc < 0 ? -1 : 0;
}

/* Request id was completed by the event me: the nonblocking collective it
 * ends is written now if it was not yet, with those started before it,
 * and forgotten. 1 when it was one, 0 if not, -1 on error. */
static int nbc_done(struct mgr_ti *x, int32_t r, struct ti_rank *t, int64_t id,
		    const struct proto_trace_event *me)
{
	for (size_t i = 0; id > 0 && i < t->nnbc; i++) {
		if (t->nbc[i].id != id)
			continue;
		if (nbc_write(x, r, t, i + 1, 1, me) < 0)
			return -1;
		memmove(&t->nbc[i], &t->nbc[i + 1],
			(t->nnbc - i - 1) * sizeof(*t->nbc));
		t->nnbc--;
		return 1;
	}
	return 0;
}

/* Does the replay run an event of this type as a collective (an action
 * every rank of the world takes in the same order)? */
static int replayed_collective(unsigned type)
{
	return proto_ev_collective(type) ||
	       proto_ev_coll2(type) == PROTO_COLL2_BLOCKING ||
	       type == PROTO_EV_MPI_COMM_SPLIT || type == PROTO_EV_MPI_COMM_DUP ||
	       type == PROTO_EV_MPI_COMM_DUP_WITH_INFO;
}

/* A nonblocking collective (remembered), a neighbourhood one (time), a
 * blocking collective after nonblocking ones not written yet (they first),
 * or a completion of nonblocking collectives' requests (their blocking
 * forms): 1 when handled here, 0 otherwise (a completion that also
 * completed other requests, or the blocking collective, goes on to the
 * dialect), -1 on error. */
static int nbc_event(struct mgr_ti *x, int32_t r, struct ti_rank *t,
		     const struct proto_trace_event *me)
{
	const struct proto_event *ev = me->ev;
	int k = proto_ev_coll2(ev->type), rc;
	size_t n = 0, nb = 0;
	int64_t id, req = fld(ev, PROTO_F_req);

	if (k == PROTO_COLL2_NEIGHBOR) {
		io_time(x, r, t, ev, -1);
		return 1;
	}
	if (k == PROTO_COLL2_NB || k == PROTO_COLL2_INEIGHBOR)
		return req > 0 && nbc_add(t, me, req) < 0 ? -1 : 1;
	if (!t->nnbc)
		return 0;
	if (replayed_collective(ev->type))
		return nbc_write(x, r, t, t->nnbc, 0, me);
	/* a test that found a nonblocking collective not done: nothing */
	for (size_t i = 0; ev->type == PROTO_EV_MPI_TEST &&
	     !fld(ev, PROTO_F_result) && i < t->nnbc; i++)
		if (t->nbc[i].id == req)
			return 1;
	for (; done_id(me, n, &id) == 0; n++) {
		if ((rc = nbc_done(x, r, t, id, me)) < 0)
			return -1;
		nb += (size_t)rc;
	}
	return nb && nb == n ? 1 : 0;
}

static int ti_event(struct mgr_ti *x, const struct proto_trace_event *me)
{
	const struct proto_ev_info *info = proto_ev_info(me->ev->type);
	struct ti_rank *t;
	int32_t r;

	if (!info || (info->category != PROTO_CAT_MPI &&
		      me->ev->type != PROTO_EV_COMPUTE))
		return 0;
	r = stream_rank(x, me);
	if (r < 0)
		return 0;
	if (me->ev->type == PROTO_EV_COMPUTE) {
		/* computation before the rank's first MPI action is dropped
		 * with the stream's unranked prologue; later, it accrues */
		if ((size_t)r < x->nrank && x->rank[r].f && !x->rank[r].finalized &&
		    x->rank[r].stream == me->stream->id)
			x->rank[r].pending += compute_flops(&x->rank[r], me->ev);
		if ((size_t)r < x->nrank && me->ev->arg[3] > 0)
			x->rank[r].flop_rate = (double)me->ev->arg[3];
		return 0;
	}
	x->mpi_events++;
	if (!(t = rank_get(x, r, me->stream->id)))
		return -1;
	if (!t->world) {
		const char *v = proto_stream_meta(me->stream, "instruction_rate");

		t->instr_rate = v ? strtod(v, NULL) : 0;
		if (me->ev->type == PROTO_EV_MPI_INIT && fld(me->ev, PROTO_F_size) > 0)
			t->world = fld(me->ev, PROTO_F_size);
		else if ((v = proto_stream_meta(me->stream, "size")))
			t->world = strtoll(v, NULL, 10);
		if (t->world > x->world)
			x->world = t->world;
	}
	if (t->finalized)
		return 0;
	if (me->ev->type != PROTO_EV_MPI_INIT && me->ev->type != PROTO_EV_MPI_COMM_SIZE &&
	    me->ev->type != PROTO_EV_MPI_COMM_RANK)
		t->busy++;
	if (me->ev->flags & PROTO_EVF_FAILED) {
		x->skip_failed++;
		return 0;
	}
	switch (io_event(x, r, t, me)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
	switch (nbc_event(x, r, t, me)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
	return dialect_event(x, r, t, me);
}

/* Everything that makes a trace unfit for replay: damage, losses, ranks
 * without a trace. Prints the reason; 0 when fit. Ranks of the world
 * without events: in *missing (malloc'd, world entries) for the SMPI
 * dialect, which replays a stand-in for them (mgr_ti_standin), said; the
 * 2011 dialect refuses them. */
static int check_trace(struct mgr_ti *x, const char *dir, struct mgr_events *e,
		       unsigned char **missing)
{
	struct proto_trace *tr = mgr_events_trace(e);
	const struct proto_trace_stats *ts = proto_trace_stats(tr);
	const struct proto_jobdir_report *jr = proto_trace_report(tr);
	uint64_t lost = 0, gaps = 0;

	for (size_t i = 0; i < proto_trace_nstreams(tr); i++) {
		const struct proto_stream *s = proto_trace_stream(tr, i);

		if (s->rank < 0)
			continue;
		lost += s->lost_events;
		gaps += s->gap_batches;
	}
	/* damage: the policy of every export (export.h, mgr_export_damage) */
	if (mgr_export_damage(tr, dir, "simgrid-ti"))
		return -1;
	if (ts->bad_batches || (jr && jr->skipped_bytes) || lost || gaps)
		mgr_err("%s: warning: the trace is damaged (%" PRIu64 " events "
			"lost, %" PRIu64 " batches missing on the ranks' streams): "
			"a time-independent trace with missing actions may not "
			"replay", dir, lost, gaps);
	if (!x->mpi_events) {
		size_t ranked = 0, cut = 0;

		for (size_t i = 0; i < proto_trace_nstreams(tr); i++) {
			const struct proto_stream *s = proto_trace_stream(tr, i);

			ranked += s->rank >= 0;
			cut += s->rank >= 0 && !s->ended;
		}
		if (ranked)
			return mgr_fail(PROTO_E_FORMAT,
				"%s: no MPI events in this trace: its %zu processes "
				"with an MPI rank sent none (%zu cut short: killed "
				"before their sensor sent its events, as an MPI "
				"runtime kills the other ranks when one dies; "
				"tapestry report lists the streams)", dir, ranked, cut);
		return mgr_fail(PROTO_E_FORMAT,
			"%s: no MPI events in this trace (was it taken with "
			"--sensors mpi?)", dir);
	}
	int64_t present = 0;

	for (int64_t r = 0; r < x->world; r++)
		present += (size_t)r < x->nrank && x->rank[r].f &&
			   (x->rank[r].busy || x->rank[r].finalized);
	for (int64_t r = 0; r < x->world; r++) {
		/* a rank cut short after MPI_Init (killed before its sensor
		 * sent more) is missing as well: the others' messages and
		 * collectives with it are not in its trace */
		if ((size_t)r < x->nrank && x->rank[r].f &&
		    (x->rank[r].busy || x->rank[r].finalized))
			continue;
		/* stand-ins for a few ranks (at most 64, or as many as are
		 * present): a world mostly missing (or whose size is wrong) is
		 * not the other ranks' job */
		if (x->d != D_SMPI ||
		    (x->world - present > 64 && present < x->world - present))
			return mgr_fail(PROTO_E_FORMAT, "%s: MPI rank %" PRId64 " of %" PRId64
				" has no events: the replay would deadlock%s",
				dir, r, x->world, x->d == D_SMPI ?
				" (and most ranks have none: no stand-ins)" : "");
		if (!*missing && !(*missing = calloc((size_t)x->world, 1)))
			return mgr_fail(PROTO_E_NOMEM, "out of memory");
		(*missing)[r] = 1;
		mgr_err("warning: %s: MPI rank %" PRId64 " of %" PRId64 " has no MPI "
			"events%s (killed before its sensor sent them?): replayed as a "
			"stand-in that takes part in the other ranks' collectives on "
			"MPI_COMM_WORLD and nothing else; their messages to and from it "
			"are left out", dir, r, x->world,
			(size_t)r < x->nrank && x->rank[r].f ? " after MPI_Init" : "");
	}
	for (size_t r = 0; r < x->nrank; r++)
		if (x->rank[r].f && (int64_t)r >= x->world) {
			return mgr_fail(PROTO_E_FORMAT,
				"%s: rank %zu is outside the world of %" PRId64
				" ranks", dir, r, x->world);
		}
	return 0;
}

/* ---- the mapping's interface (manager/export/live.h) --------------------------- */

struct mgr_ti *mgr_ti_new(enum mgr_ti_dialect d, mgr_ti_open_fn open, void *arg)
{
	struct mgr_ti *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->d = d;
	x->open = open;
	x->open_arg = arg;
	mgr_reqtab_init(&x->ioreqs, TI_REQS_MAX);
	return x;
}

void mgr_ti_set_subs(struct mgr_ti *x, const struct mgr_ti_subs *subs,
		     const struct mgr_comms *cm)
{
	x->subs = subs;
	x->comms = cm;
}

int mgr_ti_event(struct mgr_ti *x, const struct proto_trace_event *te)
{
	return ti_event(x, te);
}

int64_t mgr_ti_world(const struct mgr_ti *x)
{
	return x->world;
}

int mgr_ti_rank_state(const struct mgr_ti *x, int32_t r, uint64_t *stream)
{
	if (r < 0 || (size_t)r >= x->nrank || !x->rank[r].f)
		return 0;
	if (stream)
		*stream = x->rank[r].stream;
	return x->rank[r].finalized ? 2 : 1;
}

uint64_t mgr_ti_mpi_events(const struct mgr_ti *x)
{
	return x->mpi_events;
}

uint64_t mgr_ti_actions(const struct mgr_ti *x)
{
	return x->actions;
}

int mgr_ti_flush(struct mgr_ti *x)
{
	for (size_t r = 0; r < x->nrank; r++)
		if (x->rank[r].f && fflush(x->rank[r].f) != 0) {
			return mgr_fail(PROTO_E_IO, "rank %zu: write failed: %m", r);
		}
	return 0;
}

/* What mgr_ti_end says with a count alone, in this order (from
 * TI_SAID_LATE on: after the lines with more figures). */
#define SAID(count, kind, what) {offsetof(struct mgr_ti, count), kind, what}
#define STR_(x) #x
#define STR(x) STR_(x)
static const struct {
	size_t off;		/* of the uint64_t count in struct mgr_ti */
	const char *kind;	/* "warning" or "note" */
	const char *what;	/* after the count */
} ti_said[] = {
	SAID(sub_coll, "warning", "collectives on communicators "
	 "smaller than MPI_COMM_WORLD written as point-to-point messages among "
	 "their members, tags " STR(TI_SUB_TAG) " + the communicator's name "
	 "mod " STR(TI_SUB_TAGS) " (the replay runs every collective "
	 "on MPI_COMM_WORLD)"),
	SAID(self_coll, "note", "collectives on MPI_COMM_SELF "
	 "need no action"),
	SAID(skip_inter, "warning", "collectives on "
	 "intercommunicators skipped (the replay has no intercommunicator)"),
	SAID(skip_comm, "warning", "collectives on communicators "
	 "smaller than MPI_COMM_WORLD skipped (the replay runs every collective on "
	 "MPI_COMM_WORLD)"),
	SAID(skip_req, "warning", "completions of requests not "
	 "traced (MPI_REQUEST_NULL, MPI_PROC_NULL) skipped"),
	SAID(skip_2011, "warning", "calls have no counterpart in "
	 "the 2011 dialect (gather, scatter, alltoall..., wildcard Irecv) and were "
	 "skipped"),
	SAID(skip_failed, "warning", "MPI calls that failed were "
	 "skipped"),
#define TI_SAID_LATE 7
	SAID(cancelled, "warning", "cancelled requests: their "
	 "isend/irecv lines became compute 0 and they are not waited for"),
	SAID(skip_key, "warning", "waits dropped: the replay "
	 "holds one request per (source, destination, tag) and another one under "
	 "the same key was waited for first"),
	SAID(cancel_kept, "warning", "cancelled requests keep "
	 "their isend/irecv line (a stream that cannot seek): the replay may wait "
	 "for them for ever"),
};

/* Which calls the 2011 dialect skipped, by name: "MPI_Scan 40, ...". */
static void skipped_2011_said(const struct mgr_ti *x)
{
	char b[512];
	size_t k = 0;

	b[0] = 0;
	for (unsigned ty = 1; ty < PROTO_EV__COUNT && k < sizeof(b) - 64; ty++) {
		const struct proto_ev_info *info = proto_ev_info(ty);

		if (!x->skip_2011_by[ty] || !info)
			continue;
		k += (size_t)snprintf(b + k, sizeof(b) - k, "%s%s %" PRIu64, k ? ", " : "",
				      ty == PROTO_EV_MPI_IRECV ? "MPI_Irecv (wildcard)" :
				      info->name, x->skip_2011_by[ty]);
	}
	if (k)
		mgr_err("  skipped: %s", b);
}

/* The lines of ti_said[from, to) whose count is not 0. */
static void counts_said(const struct mgr_ti *x, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		uint64_t n = *(const uint64_t *)((const char *)x + ti_said[i].off);

		if (n)
			mgr_err("%s: %" PRIu64 " %s", ti_said[i].kind, n, ti_said[i].what);
		if (n && ti_said[i].off == offsetof(struct mgr_ti, skip_2011))
			skipped_2011_said(x);
	}
}

void mgr_ti_end(struct mgr_ti *x)
{
	for (int64_t r = 0; r < x->world && (size_t)r < x->nrank; r++) {
		struct ti_rank *t = &x->rank[r];

		if (!t->f)
			continue;
		if (!t->finalized) {
			mgr_err("warning: rank %" PRId64 " has no MPI_Finalize "
				"(the program ended early?): finalize added", r);
			flush_compute(x, (int32_t)r, t, 1);
			if (x->d == D_SMPI)
				act(x, (int32_t)r, t, "finalize");
			t->finalized = 1;
		}
		if (req_live(t))
			mgr_err("warning: rank %" PRId64 " ends with %zu requests "
				"never completed", r, req_live(t));
		if (t->nnbc)
			mgr_err("warning: rank %" PRId64 " ends with %zu nonblocking "
				"collectives never completed", r, t->nnbc);
	}
	counts_said(x, 0, TI_SAID_LATE);
	if (x->io_calls)
		mgr_err("warning: %" PRIu64 " MPI-IO calls and completions of their "
			"requests replayed as %s of their measured duration (%.6f s in "
			"all): the replay has no file I/O", x->io_calls,
			x->d == D_SMPI ? "sleeps" : "computations at the rank's flop rate",
			(double)x->io_ns * 1e-9);
	if (x->nbr_calls)
		mgr_err("warning: %" PRIu64 " neighbourhood collectives (and completions "
			"of nonblocking ones) replayed as %s of their measured duration "
			"(%.6f s in all): the replay has no neighbourhood collectives",
			x->nbr_calls,
			x->d == D_SMPI ? "sleeps" : "computations at the rank's flop rate",
			(double)x->nbr_ns * 1e-9);
	for (int k = 0; k < RMA_KINDS; k++)
		if (x->rma_calls[k])
			mgr_err("warning: %" PRIu64 " %s%s replayed as %s of their measured "
				"duration (%.6f s in all): the replay has no one-sided "
				"communication", x->rma_calls[k],
				k < RMA_KINDS - 1 ?
				proto_ev_info(proto_ev_rma_type(k))->name :
				"completions of one-sided requests",
				k < RMA_KINDS - 1 ? " calls" : "",
				x->d == D_SMPI ? "sleeps" : "computations at the rank's flop rate",
				(double)x->rma_ns[k] * 1e-9);
	if (x->clamped)
		mgr_err("warning: %" PRIu64 " counts above %d bytes were "
			"clamped (the replay parses them as int)", x->clamped, INT_MAX);
	for (size_t i = 0; x->d == D_SMPI && i < sizeof(ti_maps) / sizeof(ti_maps[0]); i++)
		if (x->mapped[ti_maps[i].type])
			mgr_err("warning: %" PRIu64 " %s written as %s (SMPI's "
				"replay has no %s)", x->mapped[ti_maps[i].type],
				proto_ev_info(ti_maps[i].type)->name, ti_maps[i].as,
				proto_ev_info(ti_maps[i].type)->name);
	counts_said(x, TI_SAID_LATE, sizeof(ti_said) / sizeof(ti_said[0]));
}

int mgr_ti_free(struct mgr_ti *x)
{
	int rc = 0;

	if (!x)
		return 0;
	for (size_t r = 0; r < x->nrank; r++) {
		struct ti_rank *t = &x->rank[r];

		if (t->f && fclose(t->f) != 0 && rc == 0) {
			(void)mgr_fail(PROTO_E_IO, "rank %zu: write failed: %m", r);
			rc = -1;
		}
		free(t->req);
		for (size_t i = 0; i < t->ncomm; i++) {
			free(t->comm[i].world);
			free(t->comm[i].rank);
		}
		free(t->comm);
		for (size_t i = 0; i < t->nnbc; i++)
			free(t->nbc[i].arr);
		free(t->nbc);
	}
	free(x->rank);
	free(x->streams);
	mgr_reqtab_clear(&x->ioreqs);
	free(x);
	return rc;
}

/* ---- the post-mortem export --------------------------------------------- */

struct out_dir {
	const char *out;
};

static FILE *open_rank_file(void *arg, int32_t r)
{
	const struct out_dir *o = arg;
	char path[PATH_MAX];
	FILE *f;

	raise_nofile((size_t)r + 1);
	snprintf(path, sizeof(path), "%s/rank_%d.txt", o->out, r);
	if (!(f = fopen(path, "w")))
		mgr_err("%s: cannot write: %m", path);
	return f;
}

static int ti_export(enum mgr_ti_dialect d, const char *dir, const char *out,
		     struct mgr_export_stats *st)
{
	struct out_dir od = {out};
	struct mgr_ti_subs *subs = NULL;
	struct mgr_ti *x = NULL;
	struct mgr_events *e;
	struct mgr_event me;
	char path[PATH_MAX];
	FILE *list = NULL;
	unsigned char *missing = NULL;
	struct mgr_ti_missing mi = {0, NULL};
	int rc;

	if (!(e = mgr_events_open(dir, &rc))) {
		return mgr_fail_jobdir(rc, dir);
	}
	if (mkdir(out, 0777) != 0) {
		(void)mgr_fail(PROTO_E_IO, "%s: cannot create: %m", out);
		mgr_events_close(e);
		return -1;
	}
	if (!(x = mgr_ti_new(d, open_rank_file, &od))) {
		(void)mgr_fail(PROTO_E_NOMEM, "out of memory");
		goto fail;
	}
	if (d == D_SMPI) {	/* (the 2011 dialect skips them) */
		if (!(subs = mgr_ti_subs_read(dir, mgr_events_comms(e), &rc))) {
			(void)mgr_fail(rc, "%s: read error: %s", dir, proto_strerror(rc));
			goto fail;
		}
		mgr_ti_set_subs(x, subs, mgr_events_comms(e));
	}
	while ((rc = mgr_events_next(e, &me)) == 1) {
		struct proto_trace_event te = {me.ev, me.stream, me.array, me.narray};

		st->events++;
		if (ti_event(x, &te) != 0) {
			rc = -2;
			break;
		}
	}
	if (rc == -2)
		goto fail;
	if (rc < 0) {
		(void)mgr_fail(rc, "%s: read error: %s", dir, proto_strerror(rc));
		goto fail;
	}
	if (check_trace(x, dir, e, &missing) != 0)
		goto fail;
	/* ranks cut short (no MPI_Finalize: killed at different points) are
	 * evened out after the export, as the missing ones (mgr_ti_standin) */
	for (int64_t r = 0; d == D_SMPI && !missing && r < x->world; r++)
		if (!x->rank[r].finalized &&
		    !(missing = calloc((size_t)x->world, 1))) {
			(void)mgr_fail(PROTO_E_NOMEM, "out of memory");
			goto fail;
		}
	snprintf(path, sizeof(path), "%s/list", out);
	if (!(list = fopen(path, "w"))) {
		(void)mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		goto fail;
	}
	for (int64_t r = 0; r < x->world; r++)
		fprintf(list, "rank_%" PRId64 ".txt\n", r);
	mgr_ti_end(x);
	rc = 0;
	goto done;
fail:
	rc = -1;
done:
	if (list && fclose(list) != 0 && rc == 0) {
		(void)mgr_fail(PROTO_E_IO, "%s/list: write failed: %m", out);
		rc = -1;
	}
	if (x) {
		st->written = x->actions;
		mi.world = x->world;
		mi.missing = missing;
		if (mgr_ti_free(x) != 0)
			rc = -1;
	}
	/* every file closed: the ranks without events get their stand-in */
	if (rc == 0 && missing && mgr_ti_standin(out, &mi) != 0)
		rc = -1;
	free(missing);
	mgr_ti_subs_free(subs);
	mgr_events_close(e);
	return rc;
}

int mgr_export_simgrid_ti(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return ti_export(D_SMPI, dir, out, st);
}

int mgr_export_simgrid_ti_2011(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return ti_export(D_2011, dir, out, st);
}
