/*
 * tests/sensor/mpi_tracecheck.c - checks the MPI events of a job directory.
 *
 *   mpi_tracecheck [-v] [-d] [-a] DIR NPROCS [NAME[=COUNT] ...]
 *
 * Reads DIR with proto/trace and checks that:
 *  - exactly NPROCS processes ran MPI_Init (ranks 0..NPROCS-1, from the
 *    MPI_Init event) and MPI_Finalize, none lost events;
 *  - every NAME (an event name such as MPI_Send) occurs on every rank, and
 *    exactly COUNT times per rank when COUNT is given;
 *  - every message sent by a call that did not fail (every send mode, blocking or not, a persistent
 *    send's MPI_Start, the send half of MPI_Sendrecv(_replace) and of
 *    MPI_Isendrecv(_replace)) is matched
 *    by exactly one receive (MPI_Recv, MPI_Mrecv, the completion of an
 *    irecv, imrecv or started recv_init by MPI_Wait, MPI_Waitany,
 *    MPI_Test, MPI_Testany or the ARRAY of MPI_Waitall, MPI_Waitsome,
 *    MPI_Testall, MPI_Testsome, the receive half of MPI_Sendrecv, the
 *    completion of an MPI_Isendrecv's request) with the same
 *    source and destination world ranks, communicator (its job-wide name
 *    from manager/post/comms: the ranks' local ids for one communicator may
 *    differ), tag (where the receive knows it) and bytes, and no receive
 *    is left over;
 *  - polls that found nothing (MPI_Test, MPI_Iprobe ... false) are folded:
 *    no such record on the main thread directly follows another, and a
 *    folded record (PROTO_EVF_FOLDED) carries its count of calls (an ARRAY
 *    of 1 value, at least 2);
 *  - no request (an id of a rank) is completed twice; with -a, every
 *    request started is completed or freed exactly once, and none is
 *    completed as unknown (req 0, peer -3);
 *  - every v-collective at its root carries its ARRAY of per-rank bytes;
 *  - COMPUTE events carry a method (0 or 1) and a positive flop rate, a CPU
 *    time within their wall time (1 us + 1 %: the stored stamps went through
 *    the sensor clock's conversions, the CPU time did not; 0.2 us more was
 *    seen), a CPU-time volume (method 0) of cpu_ns x rate, and on the main
 *    thread each lies between two MPI events: after the one before it ends,
 *    and right before the next in the stream, which starts after it ends
 *    (the sensor may write it only at that call's exit).
 * -d prints one line per MPI event (rank, name, args, array). Exit 0 when
 * all holds, 1 with the reasons on stderr, 2 on usage or read errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/comms.h"
#include "proto/error.h"
#include "proto/event.h"
#include "proto/trace.h"

#define MAX_RANKS 64
#define MAX_MSGS 200000
#define MAX_REQS 200000
#define MAX_NAMES 64

struct msg {
	int64_t src, dst, comm, tag, bytes;	/* tag -1: unknown (receive) */
	int used;
};

struct req {
	uint64_t stream;
	int64_t id, comm, tag;
	int recv;
	int done;		/* completions (or frees) seen */
};

struct rankinfo {
	uint64_t stream;
	int seen;
	int finalized;
	uint64_t lost;
	int counts[PROTO_EV__COUNT];
	int after_compute;	/* main thread: the last event was a COMPUTE */
	uint64_t compute_end;
	uint64_t mpi_end;	/* the last MPI event's end on the main thread */
	struct proto_event last_poll;	/* main thread: the last MPI event, if a
					 * poll that found nothing */
	int polls, folded;	/* such records; folded ones among them */
};

static struct msg sends[MAX_MSGS], recvs[MAX_MSGS];
static size_t nsends, nrecvs;
static struct req reqs[MAX_REQS];
static size_t nreqs;
static struct rankinfo ranks[MAX_RANKS];
static int failures;
static struct mgr_comms *comms;
static int all_done;		/* -a */

#define FAIL(...) do { fprintf(stderr, "mpi_tracecheck: " __VA_ARGS__); \
	fputc('\n', stderr); failures++; } while (0)

static int stream_rank(uint64_t stream)
{
	int i;

	for (i = 0; i < MAX_RANKS; i++)
		if (ranks[i].seen && ranks[i].stream == stream)
			return i;
	return -1;
}

static void add_msg(struct msg *tab, size_t *n, int64_t src, int64_t dst,
		    int64_t comm, int64_t tag, int64_t bytes)
{
	if (src < 0 || dst < 0)
		return;		/* MPI_PROC_NULL moves nothing */
	if (*n >= MAX_MSGS) {
		FAIL("more than %d messages", MAX_MSGS);
		return;
	}
	tab[*n] = (struct msg){ src, dst, comm, tag, bytes, 0 };
	(*n)++;
}

static struct req *find_req(uint64_t stream, int64_t id)
{
	size_t i;

	for (i = nreqs; i-- > 0;)
		if (reqs[i].stream == stream && reqs[i].id == id)
			return &reqs[i];
	return NULL;
}

/* A completion of request id of stream (rank me): counted; a receive's
 * message recorded (not a cancelled one's). */
static void req_recv(uint64_t stream, int me, int64_t id, int64_t peer,
		     int64_t tag, int64_t bytes)
{
	struct req *q = find_req(stream, id);

	if (id <= 0 || !q) {
		if (all_done && peer == -3)
			FAIL("rank %d: a completion of an unknown request", me);
		return;
	}
	if (++q->done > 1)
		FAIL("rank %d: request %lld completed %d times", me,
		     (long long)id, q->done);
	if (!q->recv || peer == -4)
		return;
	add_msg(recvs, &nrecvs, peer, me,
		q->comm >= 0 ? mgr_comms_name(comms, stream, q->comm) : -1,
		tag, bytes);
}

static void dump(int rank, const struct proto_trace_event *te)
{
	const struct proto_ev_info *in = proto_ev_info(te->ev->type);
	size_t i;

	printf("%d %s", rank, in ? in->name : "?");
	for (i = 0; i < PROTO_EV_NARGS; i++)
		printf(" %lld", (long long)te->ev->arg[i]);
	if (te->narray) {
		printf(" |");
		for (i = 0; i < te->narray; i++)
			printf(" %lld", (long long)te->array[i]);
	}
	printf("\n");
}

static void add_req(uint64_t stream, int64_t id, int64_t comm, int64_t tag,
		    int recv)
{
	if (nreqs >= MAX_REQS) {
		FAIL("more than %d requests", MAX_REQS);
		return;
	}
	reqs[nreqs++] = (struct req){ stream, id, comm, tag, recv, 0 };
}

/* First pass: which stream is which rank, and the requests. */
static int pass1(const char *dir)
{
	struct proto_trace_event te;
	struct proto_trace *t;
	int rc, r;

	t = proto_trace_open(dir, &rc);
	if (!t) {
		fprintf(stderr, "mpi_tracecheck: %s: %s\n", dir,
			proto_strerror(rc));
		return -1;
	}
	while ((rc = proto_trace_next(t, &te)) > 0) {
		const struct proto_event *e = te.ev;

		if (e->type == PROTO_EV_MPI_INIT) {
			r = (int)e->arg[0];
			if (r < 0 || r >= MAX_RANKS) {
				FAIL("MPI_Init with rank %d", r);
				continue;
			}
			if (ranks[r].seen)
				FAIL("rank %d initialised twice", r);
			ranks[r].seen = 1;
			ranks[r].stream = te.stream->id;
		} else if ((proto_ev_base(e->type) == PROTO_EV_MPI_ISEND ||
			    proto_ev_base(e->type) == PROTO_EV_MPI_IRECV) &&
			   e->arg[4] > 0) {
			add_req(te.stream->id, e->arg[4], e->arg[2], e->arg[1],
				proto_ev_base(e->type) == PROTO_EV_MPI_IRECV);
		} else if (proto_ev_base(e->type) == PROTO_EV_MPI_ISENDRECV &&
			   e->arg[5] > 0) {
			/* its request completes as the receive (tag asked: ARRAY) */
			add_req(te.stream->id, e->arg[5], e->arg[2],
				te.narray >= 1 ? te.array[0] : -1, 1);
		} else if (e->type == PROTO_EV_MPI_GREQUEST_START && e->arg[0] > 0) {
			add_req(te.stream->id, e->arg[0], -1, -1, 0);
		} else if (e->type == PROTO_EV_MPI_START && e->arg[0] > 0) {
			add_req(te.stream->id, e->arg[0], e->arg[3], e->arg[2],
				e->arg[5] == 2);
		} else if (proto_ev_icoll(e->type) &&
			   proto_ev_arg(e->type, PROTO_F_req) >= 0 &&
			   e->arg[proto_ev_arg(e->type, PROTO_F_req)] > 0) {
			/* a nonblocking collective: completed once, no message */
			add_req(te.stream->id,
				e->arg[proto_ev_arg(e->type, PROTO_F_req)], -1,
				-1, 0);
		} else if (e->type == PROTO_EV_MPI_STARTALL) {
			for (size_t i = 0; i + 5 <= te.narray; i += 5)
				if (te.array[i] > 0)
					add_req(te.stream->id, te.array[i], 0,
						te.array[i + 2],
						te.array[i + 4] == 2);
		}
	}
	proto_trace_close(t);
	return rc < 0 ? -1 : 0;
}

static void check_vcoll(int me, const struct proto_trace_event *te,
			int rootarg, size_t per)
{
	const struct proto_event *e = te->ev;
	const struct proto_ev_info *in = proto_ev_info(e->type);
	int root = rootarg >= 0 ? (int)e->arg[rootarg] : me;

	/* the test programs use MPI_COMM_WORLD, where rank == world rank */
	if (e->arg[rootarg >= 0 ? 3 : 2] != 0 || root != me)
		return;
	if (!(e->flags & PROTO_EVF_HASARRAY) || te->narray == 0 ||
	    te->narray % per)
		FAIL("rank %d: %s without its ARRAY (%zu values)", me,
		     in->name, te->narray);
}

/* A COMPUTE event's CPU time and volume against its wall time. */
static void check_compute(int me, const struct proto_event *e)
{
	uint64_t wall = e->t_end >= e->t_start ? e->t_end - e->t_start : 0;
	const int64_t *a = e->arg;

	if (e->t_end < e->t_start || (uint64_t)a[0] > wall + wall / 100 + 1000)
		FAIL("rank %d: COMPUTE of %llu ns with %lld ns of CPU time", me,
		     (unsigned long long)wall, (long long)a[0]);
	/* The event carries the rate rounded to a whole flop/s while the
	 * sensor multiplies by the unrounded one: the two products differ by
	 * up to half a flop per second of CPU time, plus one for the roundings
	 * of the volume itself. */
	if (a[2] == 0 && a[0] > 0 &&
	    llabs(a[1] - llround((double)a[0] * 1e-9 * (double)a[3])) >
		    1 + (long long)((double)a[0] * 0.5e-9 + 0.999))
		FAIL("rank %d: COMPUTE volume %lld for %lld ns at %lld flop/s",
		     me, (long long)a[1], (long long)a[0], (long long)a[3]);
}

/* Did e poll and find nothing (the sensor's folding rule)? */
static int poll_failed(const struct proto_event *e)
{
	return !(e->flags & PROTO_EVF_FAILED) &&
	       proto_ev_poll_empty(e->type, e->arg);
}

/* The main thread's polls that found nothing: folded. */
static void check_fold(int me, const struct proto_trace_event *te)
{
	const struct proto_event *e = te->ev;
	struct rankinfo *r = &ranks[me];
	int failed = poll_failed(e);

	if (proto_ev_info(e->type)->category != PROTO_CAT_MPI)
		return;
	if (e->flags & PROTO_EVF_FOLDED) {
		r->folded++;
		if (te->narray != 1 || te->array[0] < 2)
			FAIL("rank %d: a folded %s without its count", me,
			     proto_ev_info(e->type)->name);
	}
	if (failed && r->last_poll.type)
		FAIL("rank %d: %s then %s that found nothing, not folded", me,
		     proto_ev_info(r->last_poll.type)->name,
		     proto_ev_info(e->type)->name);
	r->polls += failed;
	memset(&r->last_poll, 0, sizeof(r->last_poll));
	if (failed)
		r->last_poll = *e;
}

/* The main thread's COMPUTE events between its MPI events. */
static void check_order(int me, const struct proto_event *e)
{
	struct rankinfo *r = &ranks[me];
	int cat = proto_ev_info(e->type)->category, mpi = cat == PROTO_CAT_MPI;

	/* a wait for room, or a memory sample, may come anywhere */
	if ((cat == PROTO_CAT_TRACER && e->type != PROTO_EV_COMPUTE) ||
	    cat == PROTO_CAT_MEM)
		return;

	if (r->after_compute && !mpi)
		FAIL("rank %d: a COMPUTE event followed by %s, not an MPI "
		     "event", me, proto_ev_info(e->type)->name);
	if (r->after_compute && mpi && e->t_start < r->compute_end)
		FAIL("rank %d: %s starts %llu ns before the COMPUTE event "
		     "before it ends", me, proto_ev_info(e->type)->name,
		     (unsigned long long)(r->compute_end - e->t_start));
	r->after_compute = e->type == PROTO_EV_COMPUTE;
	if (e->type == PROTO_EV_COMPUTE) {
		r->compute_end = e->t_end;
		if (r->mpi_end && e->t_start < r->mpi_end)
			FAIL("rank %d: a COMPUTE event starts %llu ns before "
			     "the MPI event before it ends", me,
			     (unsigned long long)(r->mpi_end - e->t_start));
	}
	if (mpi)
		r->mpi_end = e->t_end;
}

static int pass2(const char *dir, int verbose_dump)
{
	struct proto_trace_event te;
	struct proto_trace *t;
	size_t i;
	int rc, me;

	t = proto_trace_open(dir, &rc);
	if (!t)
		return -1;
	while ((rc = proto_trace_next(t, &te)) > 0) {
		const struct proto_event *e = te.ev;
		const int64_t *a = e->arg;
		uint64_t s = te.stream->id;

		me = stream_rank(s);
		if (me < 0)
			continue;
		if (e->type < PROTO_EV__COUNT)
			ranks[me].counts[e->type]++;
		if (mgr_comms_event(comms, s, e, te.array, te.narray)) {
			FAIL("out of memory naming communicators");
			break;
		}
		int ci = proto_ev_arg(e->type, PROTO_F_comm);
		int64_t comm = ci >= 0 ? mgr_comms_name(comms, s, a[ci]) : -1;
		if (verbose_dump && (proto_ev_info(e->type)->category ==
				     PROTO_CAT_MPI ||
				     e->type == PROTO_EV_COMPUTE))
			dump(me, &te);
		/* a failed call moved nothing (its request: none) */
		switch (e->flags & PROTO_EVF_FAILED ? PROTO_EV__INVALID :
			proto_ev_base(e->type)) {
		case PROTO_EV_MPI_SEND:
		case PROTO_EV_MPI_ISEND:
			add_msg(sends, &nsends, me, a[0], comm, a[1], a[3]);
			break;
		case PROTO_EV_MPI_START:
			if (a[5] == 1)
				add_msg(sends, &nsends, me, a[1], comm, a[2], a[4]);
			break;
		case PROTO_EV_MPI_STARTALL:
			/* (the test programs start on MPI_COMM_WORLD) */
			for (i = 0; i + 5 <= te.narray; i += 5)
				if (te.array[i + 4] == 1)
					add_msg(sends, &nsends, me,
						te.array[i + 1],
						mgr_comms_name(comms, s, 0),
						te.array[i + 2], te.array[i + 3]);
			break;
		case PROTO_EV_MPI_REQUEST_FREE: {
			/* an active request's end (an inactive persistent
			 * one's was its completion) */
			struct req *q = find_req(s, a[0]);

			if (q && !q->done)
				q->done = 1;
			break;
		}
		case PROTO_EV_MPI_RECV:
			add_msg(recvs, &nrecvs, a[0], me, comm, a[1], a[3]);
			if (a[4] != 0 && a[4] != 1)
				FAIL("rank %d: MPI_Recv arrived %lld", me,
				     (long long)a[4]);
			break;
		case PROTO_EV_MPI_SENDRECV:	/* and _replace */
			add_msg(sends, &nsends, me, a[0], comm, a[1], a[3]);
			add_msg(recvs, &nrecvs, a[4], me, comm, -1, a[5]);
			break;
		case PROTO_EV_MPI_ISENDRECV:	/* and _replace: the send */
			add_msg(sends, &nsends, me, a[0], comm, a[1], a[3]);
			break;
		case PROTO_EV_MPI_WAIT:
			req_recv(s, me, a[0], a[1], a[2], a[4]);
			break;
		case PROTO_EV_MPI_WAITANY:
			if (a[1] >= 0)
				req_recv(s, me, a[2], a[3], a[4], a[5]);
			break;
		case PROTO_EV_MPI_WAITSOME:
		case PROTO_EV_MPI_TESTALL:
		case PROTO_EV_MPI_TESTSOME: {
			struct proto_done d;

			for (i = 0; !proto_ev_done(e->type, te.array,
						   te.narray, i, &d); i++)
				req_recv(s, me, d.req, d.peer, d.tag, d.bytes);
			if (a[1] > 0 && i != (size_t)(e->type ==
					PROTO_EV_MPI_TESTALL ? a[0] : a[1]))
				FAIL("rank %d: %s of %lld with %zu completions",
				     me, proto_ev_info(e->type)->name,
				     (long long)a[1], i);
			break;
		}
		case PROTO_EV_MPI_TEST:
			if (a[1])
				req_recv(s, me, a[0], a[2], a[3], a[5]);
			break;
		case PROTO_EV_MPI_WAITALL:
			if (a[0] > 0 && (!(e->flags & PROTO_EVF_HASARRAY) ||
					 te.narray != (size_t)a[0] * 4)) {
				FAIL("rank %d: MPI_Waitall of %lld without its "
				     "ARRAY (%zu values)", me, (long long)a[0],
				     te.narray);
				break;
			}
			for (i = 0; i < te.narray; i += 4) {
				struct req *q = find_req(s, te.array[i]);

				req_recv(s, me, te.array[i], te.array[i + 1],
					 q ? q->tag : 0, te.array[i + 2]);
			}
			break;
		case PROTO_EV_MPI_GATHERV:
		case PROTO_EV_MPI_SCATTERV:
			check_vcoll(me, &te, 2, 1);
			break;
		case PROTO_EV_MPI_ALLGATHERV:
		case PROTO_EV_MPI_REDUCE_SCATTER:
			check_vcoll(me, &te, -1, 1);
			break;
		case PROTO_EV_MPI_ALLTOALLV:
			check_vcoll(me, &te, -1, 2);
			break;
		case PROTO_EV_COMPUTE:
			if ((a[2] != 0 && a[2] != 1) || a[3] <= 0 || a[0] < 0)
				FAIL("rank %d: bad COMPUTE (method %lld rate "
				     "%lld)", me, (long long)a[2],
				     (long long)a[3]);
			check_compute(me, e);
			break;
		default:
			break;
		}
		if (e->tid == 0) {
			check_order(me, e);
			check_fold(me, &te);
		}
	}
	for (i = 0; i < proto_trace_nstreams(t); i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);

		me = stream_rank(st->id);
		if (me >= 0)
			ranks[me].lost = st->lost_events;
	}
	proto_trace_close(t);
	return rc < 0 ? -1 : 0;
}

static int same(const struct msg *s, const struct msg *r, int tags)
{
	return s->src == r->src && s->dst == r->dst && s->comm == r->comm &&
		s->bytes == r->bytes && (!tags || s->tag == r->tag);
}

/* Say each message of tab (n of them) that no other matched: "WHAT src ->
 * dst comm C tag T B bytes WHY". */
static void unmatched(const struct msg *tab, size_t n, const char *what,
		      const char *why)
{
	for (size_t i = 0; i < n; i++)
		if (!tab[i].used)
			FAIL("%s %lld -> %lld comm %lld tag %lld %lld bytes %s",
			     what, (long long)tab[i].src,
			     (long long)tab[i].dst, (long long)tab[i].comm,
			     (long long)tab[i].tag, (long long)tab[i].bytes,
			     why);
}

/* Receives that know their tag first, then the others (tag -1). */
static void match(void)
{
	size_t i, j;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nrecvs; i++) {
			if (recvs[i].used || (recvs[i].tag < 0) != pass)
				continue;
			for (j = 0; j < nsends; j++)
				if (!sends[j].used &&
				    same(&sends[j], &recvs[i], !pass))
					break;
			if (j < nsends) {
				sends[j].used = recvs[i].used = 1;
			}
		}
	unmatched(sends, nsends, "send", "never received");
	unmatched(recvs, nrecvs, "receive", "matches no send");
}

int main(int argc, char **argv)
{
	int verbose = 0, dumpev = 0, nprocs, r, i;
	const char *dir;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-v"))
			verbose = 1;
		else if (!strcmp(argv[1], "-d"))
			dumpev = 1;
		else if (!strcmp(argv[1], "-a"))
			all_done = 1;
		else
			break;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: mpi_tracecheck [-v] [-d] [-a] DIR NPROCS "
			"[NAME[=COUNT] ...]\n");
		return 2;
	}
	dir = argv[1];
	nprocs = atoi(argv[2]);
	if (nprocs <= 0 || nprocs > MAX_RANKS) {
		fprintf(stderr, "mpi_tracecheck: bad NPROCS %s\n", argv[2]);
		return 2;
	}
	if (!(comms = mgr_comms_new())) {
		fprintf(stderr, "mpi_tracecheck: out of memory\n");
		return 2;
	}
	if (pass1(dir) || pass2(dir, dumpev)) {
		mgr_comms_free(comms);
		return 2;
	}
	mgr_comms_free(comms);
	for (r = 0; r < MAX_RANKS; r++) {
		if (r < nprocs && !ranks[r].seen)
			FAIL("no MPI_Init for rank %d", r);
		if (r >= nprocs && ranks[r].seen)
			FAIL("unexpected rank %d", r);
		if (!ranks[r].seen)
			continue;
		if (ranks[r].counts[PROTO_EV_MPI_FINALIZE] != 1)
			FAIL("rank %d: %d MPI_Finalize", r,
			     ranks[r].counts[PROTO_EV_MPI_FINALIZE]);
		if (ranks[r].lost)
			FAIL("rank %d: %llu events lost", r,
			     (unsigned long long)ranks[r].lost);
	}
	for (i = 3; i < argc; i++) {
		char name[64];
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
		enum proto_ev_type ty;

		if (len >= sizeof(name)) {
			fprintf(stderr, "mpi_tracecheck: bad name %s\n", argv[i]);
			return 2;
		}
		memcpy(name, argv[i], len);
		name[len] = '\0';
		ty = proto_ev_lookup(name);
		if (ty == PROTO_EV__INVALID) {
			fprintf(stderr, "mpi_tracecheck: unknown event %s\n",
				name);
			return 2;
		}
		for (r = 0; r < nprocs; r++) {
			int n = ranks[r].counts[ty];

			if (n == 0 || (eq && n != atoi(eq + 1)))
				FAIL("rank %d: %d %s (expected %s)", r, n,
				     name, eq ? eq + 1 : "at least 1");
		}
	}
	match();
	for (size_t k = 0; all_done && k < nreqs; k++)
		if (reqs[k].done != 1)
			FAIL("rank %d: request %lld completed %d times",
			     stream_rank(reqs[k].stream), (long long)reqs[k].id,
			     reqs[k].done);
	if (verbose || failures)
		fprintf(stderr, "mpi_tracecheck: %d ranks, %zu sends, %zu "
			"receives, %d failures\n", nprocs, nsends, nrecvs,
			failures);
	return failures ? 1 : 0;
}
