/*
 * sensor/mpi_wrap.c - the MPI sensor: C wrappers through the profiling
 * interface, built once per MPI implementation (Open MPI, MPICH).
 *
 * sensor/mpi.def lists the wrapped calls. Each exported MPI_NAME runs the
 * common prologue (entry time, COMPUTE event of the stretch since the
 * previous MPI call, tracer guard), the call's do_NAME() (which calls the
 * next MPI_NAME and fills the event), and the common epilogue (event,
 * ARRAY continuation, guard released). errno and return values are the
 * library's.
 *
 * Stacking: the next MPI_NAME is the one after this library in the search
 * order (dlsym RTLD_NEXT), so a PMPI tool preloaded after ours sees every
 * call; without one it is the MPI library's MPI_NAME, an alias of
 * PMPI_NAME. The sensor's own queries (sizes, ranks, probes) call PMPI_
 * directly and are invisible to other tools. This library defines no
 * PMPI_ symbol.
 *
 * Two tables, each behind its own mutex (never both held):
 *  - communicators: handle -> id (0 world, 1 self, 2.. in creation order),
 *    size, own rank and the world rank of every member, so peers are
 *    recorded as world ranks;
 *  - requests: handle -> sequential id and what the isend/irecv asked
 *    for, removed when the request completes (handles are reused).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* mpi.h declares the calls we define: they must stay exported although
 * the library is built with hidden visibility. */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "proto/error.h"
#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

_Static_assert(sizeof(MPI_Comm) <= sizeof(uint64_t), "MPI_Comm handle");
_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request handle");

#define COMM_TAB_MAX 65536u
#define REQ_TAB_MAX (1u << 20)
#define PEER_ANY (-1)
#define PEER_NULL (-2)
#define PEER_UNKNOWN (-3)
#define SMALL_REQS 32

/* ---- next functions: resolved at load, PMPI_ until then ---------------- */

/* The end of the last library call, stamped as it returns: an event ends
 * there, not after the wrapper's bookkeeping (communicator and request
 * lookups, arrays), which falls in the gap after it with the accounting
 * (the measured exit gap). Left in the event, it lengthened every message's
 * transit as the trace saw it: 550 ns where the program took 230. */
static __thread uint64_t mw_t_ret __attribute__((tls_model("initial-exec")));

#define MPI_CALL(name, ev, params, args) \
	static int (*ptr_##name) params = PMPI_##name; \
	static inline int next_##name params \
	{ \
		int rc_ = ptr_##name args; \
		mw_t_ret = sn_now(); \
		return rc_; \
	}
#include "sensor/mpi.def"
#undef MPI_CALL

__attribute__((constructor))
static void mw_resolve(void)
{
	void *p;

#define MPI_CALL(name, ev, params, args) \
	p = dlsym(RTLD_NEXT, "MPI_" #name); \
	if (p && p != (void *)MPI_##name) \
		ptr_##name = (int (*) params)p;
#include "sensor/mpi.def"
#undef MPI_CALL
	(void)p;
}

/* ---- state ------------------------------------------------------------- */

enum { ST_BEFORE, ST_RUNNING, ST_FINALIZED };

struct comm_rec {
	int64_t id;
	int size;		/* remote size for intercommunicators */
	int myrank;
	int *world;		/* world rank of member i; NULL: identity */
};

/* REQ_COLL: a nonblocking constructor's (no peer, no bytes) */
enum { REQ_SEND = 1, REQ_RECV = 2, REQ_COLL = 3 };

struct req_rec {
	int64_t id;
	int64_t bytes;
	int64_t comm;		/* communicator id */
	uint64_t commkey;	/* its handle, to translate the actual source */
	int32_t peer;		/* world rank asked for */
	int32_t tag;
	int32_t kind;
};

static volatile int mw_state = ST_BEFORE;
static int mpi_on = -1;		/* sn_enabled("mpi"), read at first call */
static int world_rank = -1, world_size;

static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *comm_tab;
static int64_t comm_next = 2;

static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *req_tab;
static int64_t req_next = 1;

static uint64_t comm_key(MPI_Comm c)
{
	uint64_t k = 0;

	memcpy(&k, &c, sizeof(c));
	return k;
}

static uint64_t req_key(MPI_Request r)
{
	uint64_t k = 0;

	memcpy(&k, &r, sizeof(r));
	return k;
}

/* ---- in-call arrays ---------------------------------------------------- */

int64_t *mw_call_array(struct mw_call *c, size_t *n)
{
	if (*n > MW_ARR_MAX)
		*n = MW_ARR_MAX;
	if (*n <= MW_ARR_SMALL) {
		c->arr = c->arr_small;
	} else {
		c->arr = malloc(*n * sizeof(int64_t));
		if (!c->arr)
			return NULL;
	}
	c->narr = *n;
	return c->arr;
}

void mw_call_done(struct mw_call *c)
{
	if (c->arr && c->arr != c->arr_small)
		free(c->arr);
	c->arr = NULL;
	c->narr = 0;
}

/* ---- communicators ----------------------------------------------------- */

/* The world ranks of g's n members, allocated (MPI_UNDEFINED for one
 * outside MPI_COMM_WORLD, e.g. spawned); NULL when that failed. */
static int *group_world(MPI_Group g, int n)
{
	MPI_Group wg = MPI_GROUP_NULL;
	int i, *in = NULL, *out = NULL;

	if (n <= 0 || g == MPI_GROUP_NULL)
		return NULL;
	if (PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS)
		return NULL;
	in = malloc((size_t)n * sizeof(int));
	out = malloc((size_t)n * sizeof(int));
	if (!in || !out)
		goto fail_alloc;
	for (i = 0; i < n; i++)
		in[i] = i;
	if (PMPI_Group_translate_ranks(g, n, in, wg, out) != MPI_SUCCESS)
		goto fail_alloc;
	free(in);
	PMPI_Group_free(&wg);
	return out;
fail_alloc:
	free(in);
	free(out);
	PMPI_Group_free(&wg);
	return NULL;
}

/* Fill r for c: size, own rank, world ranks of its members (of the remote
 * group for an intercommunicator). Caller holds comm_lock. */
static void comm_fill(struct comm_rec *r, MPI_Comm c)
{
	MPI_Group g = MPI_GROUP_NULL;
	int inter = 0, n = 0;

	r->size = 0;
	r->myrank = -1;
	r->world = NULL;
	if (c == MPI_COMM_WORLD) {
		r->size = world_size;
		r->myrank = world_rank;
		return;
	}
	PMPI_Comm_test_inter(c, &inter);
	PMPI_Comm_rank(c, &r->myrank);
	if (inter) {
		PMPI_Comm_remote_size(c, &n);
		PMPI_Comm_remote_group(c, &g);
	} else {
		PMPI_Comm_size(c, &n);
		PMPI_Comm_group(c, &g);
	}
	r->size = n;
	r->world = group_world(g, n);
	if (g != MPI_GROUP_NULL)
		PMPI_Group_free(&g);
}

/* The record of c, registered with a fresh id if unknown (a communicator
 * made by a call we do not wrap). Caller holds comm_lock. NULL when the
 * table is full or MPI is not running. */
static struct comm_rec *comm_get(MPI_Comm c)
{
	struct comm_rec *r;
	int created;

	if (mw_state != ST_RUNNING || !comm_tab || c == MPI_COMM_NULL)
		return NULL;
	r = mw_tab_put(comm_tab, comm_key(c), &created);
	if (r && created) {
		r->id = comm_next++;
		comm_fill(r, c);
	}
	return r;
}

static int64_t rank_to_world(const struct comm_rec *r, int rank)
{
	if (rank == MPI_ANY_SOURCE)
		return PEER_ANY;
	if (rank == MPI_PROC_NULL)
		return PEER_NULL;
	if (!r || rank < 0 || rank >= r->size)
		return PEER_UNKNOWN;
	if (!r->world)
		return rank;
	return r->world[rank] == MPI_UNDEFINED ? PEER_UNKNOWN : r->world[rank];
}

/* Communicator id of c (-1: none) and the world rank of its rank 'rank'
 * (wrank may be NULL); also its size and own rank when asked. */
static int64_t comm_lookup(MPI_Comm c, int rank, int64_t *wrank, int *size,
			   int *myrank)
{
	struct comm_rec *r;
	int64_t id = -1;

	pthread_mutex_lock(&comm_lock);
	r = comm_get(c);
	if (r)
		id = r->id;
	if (wrank)
		*wrank = rank_to_world(r, rank);
	if (size)
		*size = r ? r->size : 0;
	if (myrank)
		*myrank = r ? r->myrank : -1;
	pthread_mutex_unlock(&comm_lock);
	return id;
}

/* World rank of 'rank' in the communicator whose handle was key, without
 * registering it (it may have been freed since). */
static int64_t key_to_world(uint64_t key, int rank)
{
	struct comm_rec *r;
	int64_t w;

	pthread_mutex_lock(&comm_lock);
	r = mw_tab_get(comm_tab, key);
	w = rank_to_world(r, rank);
	pthread_mutex_unlock(&comm_lock);
	return w;
}

/* The lowest world rank of r's members (-1: unknown): the communicators
 * one constructor call makes are disjoint, so it tells them apart. */
static int64_t comm_leader(const struct comm_rec *r)
{
	int64_t m = -1;

	for (int i = 0; i < r->size; i++) {
		int64_t w = rank_to_world(r, i);

		if (w >= 0 && (m < 0 || w < m))
			m = w;
	}
	return m;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The key of a member set (manager/post/comms.h, gkey): FNV-1a 64 over the n
 * sorted world ranks in world (NULL: unknown) and the tag, folded to a
 * non-negative int64 so that -1 stays "unknown". -1 as well when a member
 * is outside MPI_COMM_WORLD (no job-wide number) or out of memory. */
static int64_t members_key(const int *world, int n, int64_t tag)
{
	uint64_t h = 14695981039346656037ull, v;
	int *w, i, b;

	if (!world || n <= 0 || !(w = malloc((size_t)n * sizeof(int))))
		return -1;
	memcpy(w, world, (size_t)n * sizeof(int));
	qsort(w, (size_t)n, sizeof(int), cmp_int);
	for (i = 0; i <= n; i++) {
		if (i < n && (w[i] < 0 || w[i] == MPI_UNDEFINED))
			break;
		v = i < n ? (uint64_t)(uint32_t)w[i] : (uint64_t)tag;
		for (b = 0; b < 8; b++, v >>= 8) {
			h ^= v & 0xff;
			h *= 1099511628211ull;
		}
	}
	free(w);
	return i <= n ? -1 : (int64_t)(h & INT64_MAX);
}

/* What a constructor made, for its event. */
struct made {
	int64_t parent;		/* the communicator it was made from */
	int64_t id;		/* -1: MPI_COMM_NULL */
	int64_t size, leader;	/* leader: lowest world rank, -1 */
	int64_t myrank;		/* own rank in it, -1 */
	int64_t key;		/* members_key(members, tag 0), -1 */
};

/* Copy of the record of c (world duplicated: free it), for a communicator
 * that has c's group. Caller holds comm_lock. */
static struct comm_rec comm_copy(MPI_Comm c)
{
	struct comm_rec *r = comm_get(c), out = {-1, 0, -1, NULL};

	if (!r)
		return out;
	out = *r;
	out.world = NULL;
	if (r->world && r->size > 0 &&
	    (out.world = malloc((size_t)r->size * sizeof(int))))
		memcpy(out.world, r->world, (size_t)r->size * sizeof(int));
	else if (r->world)
		out.size = 0;	/* members unknown rather than wrong */
	return out;
}

/* Register a communicator just created, with a fresh id; -1 for
 * MPI_COMM_NULL (the id is consumed anyway, so that every rank of the
 * parent numbers the next communicator alike). like: MPI_COMM_NULL, or a
 * communicator of the same group and ranks whose record is copied instead
 * of asking MPI about c (MPI_Comm_idup: c must not be used before the
 * request completes). */
static struct made comm_created(MPI_Comm c, MPI_Comm like)
{
	struct comm_rec *r, src = {-1, 0, -1, NULL};
	struct made m = {-1, -1, 0, -1, -1, -1};
	int64_t id;

	pthread_mutex_lock(&comm_lock);
	id = comm_next++;
	if (c != MPI_COMM_NULL && mw_state == ST_RUNNING && comm_tab) {
		/* before the put below: comm_get may move records */
		if (like != MPI_COMM_NULL)
			src = comm_copy(like);
		/* a handle MPI reused after a free we did not see */
		if ((r = mw_tab_get(comm_tab, comm_key(c)))) {
			free(r->world);
			mw_tab_del(comm_tab, comm_key(c));
		}
		r = mw_tab_put(comm_tab, comm_key(c), NULL);
		if (r) {
			if (like != MPI_COMM_NULL) {
				*r = src;
				src.world = NULL;
			} else {
				comm_fill(r, c);
			}
			r->id = id;
			m.size = r->size;
			m.leader = comm_leader(r);
			m.myrank = r->myrank;
			/* constructors are rare and already O(size) */
			m.key = members_key(r->world, r->size, 0);
		}
		free(src.world);
		m.id = id;
	}
	pthread_mutex_unlock(&comm_lock);
	return m;
}

static void comm_forget(uint64_t key)
{
	struct comm_rec *r;

	pthread_mutex_lock(&comm_lock);
	r = mw_tab_get(comm_tab, key);
	if (r) {
		free(r->world);
		mw_tab_del(comm_tab, key);
	}
	pthread_mutex_unlock(&comm_lock);
}

static void comm_rec_free(uint64_t key, void *val, void *arg)
{
	struct comm_rec *r = val;

	free(r->world);
	r->world = NULL;
}

static void tables_init(void)
{
	struct comm_rec *r;

	pthread_mutex_lock(&comm_lock);
	if (!comm_tab)
		comm_tab = mw_tab_new(sizeof(struct comm_rec), 16, COMM_TAB_MAX);
	r = mw_tab_put(comm_tab, comm_key(MPI_COMM_WORLD), NULL);
	if (r) {
		r->id = 0;
		comm_fill(r, MPI_COMM_WORLD);
	}
	r = mw_tab_put(comm_tab, comm_key(MPI_COMM_SELF), NULL);
	if (r) {
		r->id = 1;
		comm_fill(r, MPI_COMM_SELF);
	}
	pthread_mutex_unlock(&comm_lock);
	pthread_mutex_lock(&req_lock);
	if (!req_tab)
		req_tab = mw_tab_new(sizeof(struct req_rec), 64, REQ_TAB_MAX);
	pthread_mutex_unlock(&req_lock);
}

static void tables_free(void)
{
	pthread_mutex_lock(&comm_lock);
	mw_tab_each(comm_tab, comm_rec_free, NULL);
	mw_tab_free(comm_tab);
	comm_tab = NULL;
	pthread_mutex_unlock(&comm_lock);
	pthread_mutex_lock(&req_lock);
	mw_tab_free(req_tab);
	req_tab = NULL;
	pthread_mutex_unlock(&req_lock);
}

/* ---- requests ---------------------------------------------------------- */

/* Give the request just started a sequential id and remember what it
 * asked for. The id is returned even when the table is full (the wait
 * then records req 0). */
static int64_t req_started(MPI_Request r, int kind, MPI_Comm comm,
			   int64_t commid, int64_t peer, int tag, int64_t bytes)
{
	struct req_rec *q;
	int64_t id;

	pthread_mutex_lock(&req_lock);
	id = req_next++;
	q = r != MPI_REQUEST_NULL ? mw_tab_put(req_tab, req_key(r), NULL) : NULL;
	if (q) {
		q->id = id;
		q->kind = kind;
		q->comm = commid;
		q->commkey = comm_key(comm);
		q->peer = (int32_t)peer;
		q->tag = tag;
		q->bytes = bytes;
	}
	pthread_mutex_unlock(&req_lock);
	return id;
}

/* Copy the record of r into *out; remove it when take. 1 if found. */
static int req_find(MPI_Request r, struct req_rec *out, int take)
{
	struct req_rec *q;
	int found = 0;

	memset(out, 0, sizeof(*out));
	out->peer = PEER_NULL;
	if (r == MPI_REQUEST_NULL)
		return 0;
	pthread_mutex_lock(&req_lock);
	q = mw_tab_get(req_tab, req_key(r));
	if (q) {
		*out = *q;
		found = 1;
		if (take)
			mw_tab_del(req_tab, req_key(r));
	}
	pthread_mutex_unlock(&req_lock);
	if (!found)
		out->peer = PEER_UNKNOWN;
	return found;
}

/* ---- helpers ----------------------------------------------------------- */

static int64_t type_bytes(MPI_Datatype t, int64_t count)
{
	int sz = 0;

	if (t == MPI_DATATYPE_NULL || count <= 0)
		return 0;
	if (PMPI_Type_size(t, &sz) != MPI_SUCCESS || sz < 0)
		return 0;
	return count * sz;
}

static int64_t status_bytes(const MPI_Status *st)
{
	int n = 0;

	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n == MPI_UNDEFINED || n < 0)
		return 0;
	return n;
}

static int64_t counts_sum(const int *counts, int n)
{
	int64_t s = 0;
	int i;

	if (!counts)
		return 0;
	for (i = 0; i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

/* ARRAY of counts[i] x type size, i < n, appended at c->arr + at. */
static void counts_array(int64_t *arr, size_t room, const int *counts, int n,
			 MPI_Datatype t)
{
	int64_t sz = type_bytes(t, 1);
	size_t i;

	for (i = 0; i < (size_t)n && i < room; i++)
		arr[i] = counts[i] > 0 ? counts[i] * sz : 0;
}

static void set_args(struct mw_call *c, int64_t a0, int64_t a1, int64_t a2,
		     int64_t a3, int64_t a4, int64_t a5)
{
	proto_args_set(c->arg, a0, a1, a2, a3, a4, a5);
}

/* Has the message this receive would match already arrived? The probe
 * runs inside the call's interval; *ns gets its duration (the sensor's own
 * time, which the post-processing removes). */
static int64_t probe_arrived(int source, int tag, MPI_Comm comm, int64_t *ns)
{
	MPI_Status st;
	int flag = 0, rc;
	uint64_t t;

	*ns = 0;
	if (source == MPI_PROC_NULL)
		return 1;
	t = sn_now();
	rc = PMPI_Iprobe(source, tag, comm, &flag, &st);
	*ns = (int64_t)(sn_now() - t);
	return rc == MPI_SUCCESS && flag ? 1 : 0;
}

/* Has request r already completed (non-destructive)? */
static int64_t req_done(MPI_Request r)
{
	int flag = 0;

	if (r == MPI_REQUEST_NULL)
		return 1;
	if (PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return 0;
	return flag ? 1 : 0;
}

/* What a completed request did: peer (actual source for receives), tag,
 * bytes (received for receives). */
static void req_outcome(const struct req_rec *q, const MPI_Status *st,
			int64_t *peer, int64_t *tag, int64_t *bytes)
{
	*peer = q->peer;
	*tag = q->tag;
	*bytes = q->bytes;
	if (q->kind == REQ_RECV && st) {
		*peer = key_to_world(q->commkey, st->MPI_SOURCE);
		*tag = st->MPI_TAG;
		*bytes = status_bytes(st);
	}
}

/* ---- prologue / epilogue ----------------------------------------------- */

static void mw_begin(struct mw_call *c, unsigned type)
{
	int saved = errno;

	c->on = 0;
	c->flush = 0;
	c->type = (uint16_t)type;
	c->flags = 0;
	c->arr = NULL;
	c->narr = 0;
	memset(c->arg, 0, sizeof(c->arg));
	/* sn_enter() first: it initialises the runtime, whose configuration
	 * says whether the MPI sensor is on (read before it, the default
	 * was "off" for good: a whole run untraced, seen once in CI) */
	if (type != PROTO_EV__INVALID && mpi_on != 0 && sn_enter()) {
		if (mpi_on < 0)
			mpi_on = sn_enabled("mpi") ? 1 : 0;
		if (!mpi_on) {
			sn_leave();
			errno = saved;
			return;
		}
		c->on = 1;
		/* the accounting's reads before the call's own stamp: their
		 * cost falls between the events (see calibrate_accounting) */
		mw_compute_enter(sn_now());
		mw_t_ret = 0;
		c->t0 = sn_now();
	}
	errno = saved;
}

static void calibrate_wrapper(void);

static void mw_end(struct mw_call *c, int rc)
{
	struct proto_event *e;
	uint64_t t1;
	int saved = errno;

	if (c->on) {
		t1 = mw_t_ret >= c->t0 ? mw_t_ret : sn_now();
		if (rc != MPI_SUCCESS)
			c->flags |= PROTO_EVF_FAILED;
		if (c->narr)
			c->flags |= PROTO_EVF_HASARRAY;
		/* the CPU-time read, and a COMPUTE event that waited for it,
		 * before the call's record */
		mw_compute_exit(t1);
		e = sn_slot();
		if (e) {
			e->t_start = c->t0;
			e->t_end = t1;
			e->type = c->type;
			e->flags = c->flags;
			memcpy(e->arg, c->arg, sizeof(e->arg));
			sn_commit(e);
			if (c->narr)
				sn_array(c->arr, c->narr);
		}
		mw_compute_open();
		sn_leave();
	}
	mw_call_done(c);
	if (c->flush)
		sn_flush_all();
	/* once, as MPI_Init returns: the wrapper's own calls are traced from
	 * here (the guard is free again) */
	if (__builtin_expect(c->type == PROTO_EV_MPI_INIT, 0) && c->on)
		calibrate_wrapper();
	errno = saved;
}

/* ---- the wrapper's unmeasured cost -------------------------------------- */

static int cmp_u64w(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The tracer's cost around an MPI call that the measured gaps do not hold:
 * the wrapper's entry before the COMPUTE event's end stamp and its exit
 * after the next COMPUTE event's start, which the correction left in the
 * COMPUTE events (17 ns a call here with the CPU-time accounting, 50 with
 * the trapping counter: the code after a trap runs cold). Measured once,
 * as MPI_Init returns, on the application thread: a call through the whole
 * wrapper WRAP_ITER times into a scratch ring that the sender never sees
 * (sn_scratch_begin), against the same number of direct calls; per call,
 * the median of its event's duration plus the COMPUTE event's after it,
 * less the median direct call. MPI_Comm_rank (no progress engine) is sent
 * as CALIB evtype MPI_INIT; MPI_Iprobe on MPI_COMM_SELF (one pass of the
 * progress engine, nothing pending) as CALIB evtype MPI_IPROBE: a call
 * that runs the progress engine runs that much slower after the sensor's
 * reads (43 ns a call more than MPI_Comm_rank here with the trapping
 * counter, bench/call_residual.sh), which the correction takes off its
 * start. Both in ns and ps; the calibration's own time as a FLUSH record. */
#define WRAP_ITER 256
#define WRAP_ROUNDS 9
/* The calibration's call: MPI_Iprobe or MPI_Comm_rank, through the
 * wrapper or direct (PMPI_). */
static void calib_call(int probe, int direct)
{
	int r, flag;

	if (probe)
		(direct ? PMPI_Iprobe : MPI_Iprobe)(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF,
						    &flag, MPI_STATUS_IGNORE);
	else
		(direct ? PMPI_Comm_rank : MPI_Comm_rank)(MPI_COMM_WORLD, &r);
}

/* The cost of one call through the wrapper beyond the direct call, ns; -1
 * if it could not be measured. */
static int64_t wrapper_cost(int probe, int *samples)
{
	uint16_t type = probe ? PROTO_EV_MPI_IPROBE : PROTO_EV_MPI_COMM_RANK;
	uint64_t d[WRAP_ITER], u[WRAP_ROUNDS], nrec;
	const struct proto_event *ring;
	struct sn_scratch *sc;
	int n = 0;

	for (int k = 0; k < WRAP_ROUNDS; k++) {
		uint64_t a = sn_now();

		for (int i = 0; i < WRAP_ITER; i++)
			calib_call(probe, 1);
		u[k] = (sn_now() - a) / WRAP_ITER;
	}
	if (!(sc = sn_scratch_begin(WRAP_ITER * 4)))
		return -1;
	for (int i = 0; i < WRAP_ITER; i++)
		calib_call(probe, 0);
	nrec = sn_scratch_end(sc, &ring);
	/* COMPUTE, the call, COMPUTE, ...: each call's event and the stretch
	 * after it, from the second call on (the first COMPUTE holds what came
	 * before the loop) */
	for (uint64_t k = 2; k < nrec && n < WRAP_ITER; k++) {
		const struct proto_event *m = &ring[k - 1], *c = &ring[k];

		if (m->type == type && c->type == PROTO_EV_COMPUTE &&
		    m->t_end >= m->t_start && c->t_end >= c->t_start)
			d[n++] = (m->t_end - m->t_start) + (c->t_end - c->t_start);
	}
	sn_scratch_free(sc);
	*samples = n;
	if (n <= WRAP_ITER / 2)
		return -1;
	qsort(d, (size_t)n, sizeof(d[0]), cmp_u64w);
	qsort(u, WRAP_ROUNDS, sizeof(u[0]), cmp_u64w);
	return d[n / 2] > u[WRAP_ROUNDS / 2] ? (int64_t)(d[n / 2] - u[WRAP_ROUNDS / 2]) : 0;
}

static void calibrate_wrapper(void)
{
	static int done;
	struct proto_event *e;
	int64_t cost[2];
	int n[2] = {0, 0};
	uint64_t c0, c1;

	if (done || mw_state != ST_RUNNING)
		return;
	done = 1;
	c0 = sn_now();
	cost[0] = wrapper_cost(0, &n[0]);
	cost[1] = wrapper_cost(1, &n[1]);
	c1 = sn_now();
	if (!sn_enter())
		return;
	/* (sn_slot set the record's tid and cleared its flags) */
	for (int k = 0; k < 2; k++) {
		if (cost[k] < 0 || !(e = sn_slot()))
			continue;
		e->t_start = e->t_end = c1;
		e->type = PROTO_EV_CALIB;
		e->flags = PROTO_EVF_INSTANT;
		proto_ev_set_args(e, k ? PROTO_EV_MPI_IPROBE : PROTO_EV_MPI_INIT, cost[k], n[k],
				  cost[k] * 1000, 0, 0);
		sn_commit(e);
	}
	/* the calibration worked in the application's thread (records: not
	 * a wait for room) */
	if ((e = sn_slot())) {
		e->t_start = c0;
		e->t_end = c1;
		e->type = PROTO_EV_FLUSH;
		proto_ev_set_args(e, WRAP_ITER * 4, 0, 0, 0, 0, 0);
		sn_commit(e);
	}
	sn_leave();
}

/* ---- life and communicators -------------------------------------------- */

static void after_init(struct mw_call *c)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	mw_state = ST_RUNNING;
	tables_init();
	sn_set_rank(world_rank, world_size);
	if (mpi_on > 0)
		mw_compute_setup();
	set_args(c, world_rank, world_size, 0, 0, 0, 0);
}

static int do_Init(struct mw_call *c, int *argc, char ***argv)
{
	int rc = next_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		after_init(c);
	return rc;
}

static int do_Init_thread(struct mw_call *c, int *argc, char ***argv,
			  int required, int *provided)
{
	int rc = next_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		after_init(c);
	return rc;
}

static int do_Finalize(struct mw_call *c)
{
	int rc;

	set_args(c, world_rank, world_size, 0, 0, 0, 0);
	rc = next_Finalize();
	mw_state = ST_FINALIZED;
	tables_free();
	/* the sensor ships over its own socket: flushing after MPI is gone
	 * is fine, and the Finalize event is then part of the flush */
	c->flush = 1;
	return rc;
}

static int do_Comm_size(struct mw_call *c, MPI_Comm comm, int *size)
{
	int rc = next_Comm_size(comm, size);

	set_args(c, comm_lookup(comm, 0, NULL, NULL, NULL),
		 rc == MPI_SUCCESS ? *size : -1, 0, 0, 0, 0);
	return rc;
}

static int do_Comm_rank(struct mw_call *c, MPI_Comm comm, int *rank)
{
	int rc = next_Comm_rank(comm, rank);

	set_args(c, comm_lookup(comm, 0, NULL, NULL, NULL),
		 rc == MPI_SUCCESS ? *rank : -1, 0, 0, 0, 0);
	return rc;
}

/* The communicator a constructor on comm that returned rc made
 * (registered; like: see comm_created), and its parent's id. */
static struct made made_of(MPI_Comm comm, int rc, const MPI_Comm *newcomm,
			   MPI_Comm like)
{
	struct made m = {-1, -1, 0, -1, -1, -1};

	if (rc == MPI_SUCCESS)
		m = comm_created(*newcomm, like);
	m.parent = comm_lookup(comm, 0, NULL, NULL, NULL);
	return m;
}

/* The event of a constructor whose only inputs are comm and a group,
 * dimensions or a graph (MPI_Comm_create, MPI_Cart_sub, the two
 * MPI_Dist_graph_create). */
static void made_args(struct mw_call *c, MPI_Comm comm, int rc, const MPI_Comm *newcomm)
{
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, m.id, m.size, m.leader, m.myrank, 0);
}

static int do_Comm_split(struct mw_call *c, MPI_Comm comm, int color, int key,
			 MPI_Comm *newcomm)
{
	int rc = next_Comm_split(comm, color, key, newcomm);
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, color, key, m.id, m.size, m.myrank);
	return rc;
}

/* A dup's record (MPI_Comm_dup, MPI_Comm_dup_with_info). */
static int dup_args(struct mw_call *c, MPI_Comm comm, int rc, MPI_Comm *newcomm)
{
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, m.id, m.size, m.myrank, 0, 0);
	return rc;
}

static int do_Comm_dup(struct mw_call *c, MPI_Comm comm, MPI_Comm *newcomm)
{
	return dup_args(c, comm, next_Comm_dup(comm, newcomm), newcomm);
}

static int do_Comm_create(struct mw_call *c, MPI_Comm comm, MPI_Group group,
			  MPI_Comm *newcomm)
{
	int rc = next_Comm_create(comm, group, newcomm);

	made_args(c, comm, rc, newcomm);
	return rc;
}

static int do_Comm_split_type(struct mw_call *c, MPI_Comm comm, int split_type,
			      int key, MPI_Info info, MPI_Comm *newcomm)
{
	int rc = next_Comm_split_type(comm, split_type, key, info, newcomm);
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, split_type, m.id, m.size, m.leader, m.myrank);
	return rc;
}

static int do_Cart_create(struct mw_call *c, MPI_Comm comm, int ndims,
			  const int dims[], const int periods[], int reorder,
			  MPI_Comm *newcomm)
{
	int rc = next_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, m.id, m.size, m.leader, ndims, m.myrank);
	return rc;
}

static int do_Cart_sub(struct mw_call *c, MPI_Comm comm, const int remain_dims[],
		       MPI_Comm *newcomm)
{
	int rc = next_Cart_sub(comm, remain_dims, newcomm);

	made_args(c, comm, rc, newcomm);
	return rc;
}

/* newcomm is set at the call (Open MPI, MPICH) and has comm's group, but
 * must not be used before the request completes: registered from comm's
 * record. The request is kept (REQ_COLL) so that its completion records
 * the same request id, and the event carries it. */
static int do_Comm_idup(struct mw_call *c, MPI_Comm comm, MPI_Comm *newcomm,
			MPI_Request *req)
{
	int rc = next_Comm_idup(comm, newcomm, req);
	struct made m = made_of(comm, rc, newcomm, comm);
	int64_t rid = 0;

	if (rc == MPI_SUCCESS)
		rid = req_started(*req, REQ_COLL, comm, m.parent, PEER_NULL, 0, 0);
	set_args(c, m.parent, m.id, m.size, m.myrank, rid, 0);
	return rc;
}

static int do_Graph_create(struct mw_call *c, MPI_Comm comm, int nnodes,
			   const int index[], const int edges[], int reorder,
			   MPI_Comm *newcomm)
{
	int rc = next_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, m.id, m.size, m.leader, nnodes, m.myrank);
	return rc;
}

static int do_Dist_graph_create(struct mw_call *c, MPI_Comm comm, int n,
				const int sources[], const int degrees[],
				const int destinations[], const int weights[],
				MPI_Info info, int reorder, MPI_Comm *newcomm)
{
	int rc = next_Dist_graph_create(comm, n, sources, degrees, destinations,
					weights, info, reorder, newcomm);

	made_args(c, comm, rc, newcomm);
	return rc;
}

static int do_Dist_graph_create_adjacent(struct mw_call *c, MPI_Comm comm,
					 int indegree, const int sources[],
					 const int sourceweights[],
					 int outdegree,
					 const int destinations[],
					 const int destweights[],
					 MPI_Info info, int reorder,
					 MPI_Comm *newcomm)
{
	int rc = next_Dist_graph_create_adjacent(comm, indegree, sources,
						 sourceweights, outdegree,
						 destinations, destweights,
						 info, reorder, newcomm);

	made_args(c, comm, rc, newcomm);
	return rc;
}

/* Collective over group's members only: the event carries the key of
 * (group, tag), taken from the arguments so that it is there even when
 * the call fails (the manager counts the call either way). */
static int do_Comm_create_group(struct mw_call *c, MPI_Comm comm,
				MPI_Group group, int tag, MPI_Comm *newcomm)
{
	int rc = next_Comm_create_group(comm, group, tag, newcomm), n = 0;
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);
	int64_t key = -1;
	int *w;

	if (c->on && PMPI_Group_size(group, &n) == MPI_SUCCESS &&
	    (w = group_world(group, n))) {
		key = members_key(w, n, tag);
		free(w);
	}
	set_args(c, m.parent, tag, m.id, m.size, key, m.myrank);
	return rc;
}

/* The key of both groups of the intercommunicator inter made on local
 * (members_key of their world ranks and the tag: the same on every member
 * of either group), -1 when a member is unknown. */
static int64_t inter_key(MPI_Comm local, MPI_Comm inter, int tag)
{
	struct comm_rec *l, *r;
	int64_t key = -1;
	int *w = NULL, nl, n = 0;

	pthread_mutex_lock(&comm_lock);
	l = comm_get(local);
	nl = l ? l->size : 0;
	r = comm_get(inter);	/* after l: a put may move records */
	l = comm_get(local);
	if (l && r && nl > 0 && r->size > 0 &&
	    (w = malloc((size_t)(nl + r->size) * sizeof(int)))) {
		for (int i = 0; i < nl; i++) {
			int64_t x = rank_to_world(l, i);

			w[n++] = x >= 0 ? (int)x : MPI_UNDEFINED;
		}
		for (int i = 0; i < r->size; i++) {
			int64_t x = rank_to_world(r, i);

			w[n++] = x >= 0 ? (int)x : MPI_UNDEFINED;
		}
		key = members_key(w, n, tag);
	}
	pthread_mutex_unlock(&comm_lock);
	free(w);
	return key;
}

/* An intercommunicator: size and leader are its remote group's (see
 * comm_fill); the ARRAY carries the key of both groups and the tag, which
 * names it (manager/post/comms.h): the six arguments are taken. */
static int do_Intercomm_create(struct mw_call *c, MPI_Comm local_comm,
			       int local_leader, MPI_Comm peer_comm,
			       int remote_leader, int tag, MPI_Comm *newcomm)
{
	int rc = next_Intercomm_create(local_comm, local_leader, peer_comm,
				       remote_leader, tag, newcomm);
	struct made m = made_of(local_comm, rc, newcomm, MPI_COMM_NULL);
	size_t n = 1;
	int64_t *arr;

	if (c->on && m.id >= 0 && (arr = mw_call_array(c, &n)) && n == 1)
		arr[0] = inter_key(local_comm, *newcomm, tag);
	set_args(c, m.parent, m.id, m.size, m.leader, tag, m.myrank);
	return rc;
}

/* The merged group's key (tag 0) names it (manager/post/comms.h). */
static int do_Intercomm_merge(struct mw_call *c, MPI_Comm comm, int high,
			      MPI_Comm *newcomm)
{
	int rc = next_Intercomm_merge(comm, high, newcomm);
	struct made m = made_of(comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, high, m.id, m.size, m.key, m.myrank);
	return rc;
}

/* A dup (see do_Comm_dup); the info hints are not recorded. */
static int do_Comm_dup_with_info(struct mw_call *c, MPI_Comm comm, MPI_Info info,
				 MPI_Comm *newcomm)
{
	return dup_args(c, comm, next_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

static int do_Comm_free(struct mw_call *c, MPI_Comm *comm)
{
	uint64_t key = comm && *comm != MPI_COMM_NULL ? comm_key(*comm) : 0;
	int rc = next_Comm_free(comm);

	if (rc == MPI_SUCCESS && key)
		comm_forget(key);
	return rc;
}

/* ---- point to point ---------------------------------------------------- */

static void send_args(struct mw_call *c, int count, MPI_Datatype type,
		      int dest, int tag, MPI_Comm comm)
{
	int64_t peer, id = comm_lookup(comm, dest, &peer, NULL, NULL);

	set_args(c, peer, tag, id, type_bytes(type, count), 0, 0);
}

static int do_Send(struct mw_call *c, const void *buf, int count,
		   MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	int rc = next_Send(buf, count, type, dest, tag, comm);

	send_args(c, count, type, dest, tag, comm);
	return rc;
}

static int do_Ssend(struct mw_call *c, const void *buf, int count,
		    MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	int rc = next_Ssend(buf, count, type, dest, tag, comm);

	send_args(c, count, type, dest, tag, comm);
	return rc;
}

static int do_Rsend(struct mw_call *c, const void *buf, int count,
		    MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	int rc = next_Rsend(buf, count, type, dest, tag, comm);

	send_args(c, count, type, dest, tag, comm);
	return rc;
}

static int do_Bsend(struct mw_call *c, const void *buf, int count,
		    MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	int rc = next_Bsend(buf, count, type, dest, tag, comm);

	send_args(c, count, type, dest, tag, comm);
	return rc;
}

static int do_Recv(struct mw_call *c, void *buf, int count, MPI_Datatype type,
		   int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t arrived = 0, probe = 0, peer, id;
	int rc;

	if (c->on)
		arrived = probe_arrived(source, tag, comm, &probe);
	rc = next_Recv(buf, count, type, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		id = comm_lookup(comm, st->MPI_SOURCE, &peer, NULL, NULL);
		set_args(c, peer, st->MPI_TAG, id, status_bytes(st), arrived,
			 probe);
	} else {
		id = comm_lookup(comm, source, &peer, NULL, NULL);
		set_args(c, peer, tag, id, type_bytes(type, count), arrived,
			 probe);
	}
	return rc;
}

static int isend_common(struct mw_call *c, int rc, int count,
			MPI_Datatype type, int dest, int tag, MPI_Comm comm,
			MPI_Request *req)
{
	int64_t peer, id = comm_lookup(comm, dest, &peer, NULL, NULL);
	int64_t bytes = type_bytes(type, count), rid = 0;

	if (rc == MPI_SUCCESS)
		rid = req_started(*req, REQ_SEND, comm, id, peer, tag, bytes);
	set_args(c, peer, tag, id, bytes, rid, 0);
	return rc;
}

static int do_Isend(struct mw_call *c, const void *buf, int count,
		    MPI_Datatype type, int dest, int tag, MPI_Comm comm,
		    MPI_Request *req)
{
	int rc = next_Isend(buf, count, type, dest, tag, comm, req);

	return isend_common(c, rc, count, type, dest, tag, comm, req);
}

static int do_Issend(struct mw_call *c, const void *buf, int count,
		     MPI_Datatype type, int dest, int tag, MPI_Comm comm,
		     MPI_Request *req)
{
	int rc = next_Issend(buf, count, type, dest, tag, comm, req);

	return isend_common(c, rc, count, type, dest, tag, comm, req);
}

static int do_Irecv(struct mw_call *c, void *buf, int count,
		    MPI_Datatype type, int source, int tag, MPI_Comm comm,
		    MPI_Request *req)
{
	int rc = next_Irecv(buf, count, type, source, tag, comm, req);
	int64_t peer, id = comm_lookup(comm, source, &peer, NULL, NULL);
	int64_t bytes = type_bytes(type, count), rid = 0;

	if (rc == MPI_SUCCESS)
		rid = req_started(*req, REQ_RECV, comm, id, peer, tag, bytes);
	set_args(c, peer, tag, id, bytes, rid, 0);
	return rc;
}

static int do_Sendrecv(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, int dest, int stag, void *rbuf,
		       int rcount, MPI_Datatype rtype, int source, int rtag,
		       MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t arrived = 0, probe = 0, *arr, peer, src, id, rbytes;
	size_t n = 3;
	int rc;

	if (c->on)
		arrived = probe_arrived(source, rtag, comm, &probe);
	rc = next_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
			   rtype, source, rtag, comm, st);
	id = comm_lookup(comm, dest, &peer, NULL, NULL);
	/* the receive half's tag (actual), arrived flag and probe time ride
	 * in an ARRAY: the six arguments are taken */
	if (c->on && (arr = mw_call_array(c, &n)) && n == 3) {
		arr[0] = rc == MPI_SUCCESS ? st->MPI_TAG : rtag;
		arr[1] = arrived;
		arr[2] = probe;
	}
	if (rc == MPI_SUCCESS) {
		comm_lookup(comm, st->MPI_SOURCE, &src, NULL, NULL);
		rbytes = status_bytes(st);
	} else {
		comm_lookup(comm, source, &src, NULL, NULL);
		rbytes = type_bytes(rtype, rcount);
	}
	set_args(c, peer, stag, id, type_bytes(stype, scount), src, rbytes);
	return rc;
}

static int do_Wait(struct mw_call *c, MPI_Request *req, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	struct req_rec q;
	int64_t arrived = 0, peer, tag, bytes;
	int rc;

	if (c->on)
		arrived = req_done(r);
	rc = next_Wait(req, st);
	req_find(r, &q, rc == MPI_SUCCESS);
	req_outcome(&q, rc == MPI_SUCCESS ? st : NULL, &peer, &tag, &bytes);
	set_args(c, q.id, peer, tag, q.id ? q.comm : -1, bytes, arrived);
	return rc;
}

/* Copy n request handles into small or an allocation (NULL: failed). */
static MPI_Request *reqs_copy(const MPI_Request *src, int n,
			      MPI_Request *small)
{
	MPI_Request *dst = small;

	if (n <= 0 || !src)
		return NULL;
	if (n > SMALL_REQS) {
		dst = malloc((size_t)n * sizeof(*dst));
		if (!dst)
			return NULL;
	}
	memcpy(dst, src, (size_t)n * sizeof(*dst));
	return dst;
}

static int do_Waitall(struct mw_call *c, int count, MPI_Request reqs_in[],
		      MPI_Status statuses[])
{
	MPI_Request small[SMALL_REQS], *saved;
	MPI_Status sst[SMALL_REQS], *st = statuses;
	int64_t *arr, peer, tag, bytes;
	size_t n = count > 0 ? (size_t)count * 4 : 0, i, m;
	struct req_rec q;
	int rc;

	saved = reqs_copy(reqs_in, count, small);
	if (statuses == MPI_STATUSES_IGNORE && saved) {
		st = count <= SMALL_REQS ? sst :
			malloc((size_t)count * sizeof(MPI_Status));
		if (!st)
			st = MPI_STATUSES_IGNORE;
	}
	arr = c->on && saved ? mw_call_array(c, &n) : NULL;
	m = arr ? n / 4 : 0;
	/* arrived flags first, into the array's fourth column */
	for (i = 0; i < m; i++)
		arr[i * 4 + 3] = req_done(saved[i]);
	rc = next_Waitall(count, reqs_in, st);
	for (i = 0; saved && i < (size_t)count; i++) {
		int completed = rc == MPI_SUCCESS ||
			reqs_in[i] == MPI_REQUEST_NULL;
		const MPI_Status *si = st != MPI_STATUSES_IGNORE &&
			completed ? &st[i] : NULL;

		req_find(saved[i], &q, completed);
		req_outcome(&q, si, &peer, &tag, &bytes);
		if (i < m) {
			arr[i * 4] = q.id;
			arr[i * 4 + 1] = peer;
			arr[i * 4 + 2] = bytes;
		}
	}
	if (m)
		c->narr = m * 4;
	set_args(c, count, 0, 0, 0, 0, 0);
	if (st != statuses && st != sst && st != MPI_STATUSES_IGNORE)
		free(st);
	if (saved != small)
		free(saved);
	return rc;
}

static int do_Waitany(struct mw_call *c, int count, MPI_Request reqs_in[],
		      int *index, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs_in, count, small);
	struct req_rec q;
	int64_t peer = PEER_NULL, tag = 0, bytes = 0, rid = 0;
	int rc = next_Waitany(count, reqs_in, index, st);

	if (rc == MPI_SUCCESS && saved && *index != MPI_UNDEFINED &&
	    *index >= 0 && *index < count) {
		req_find(saved[*index], &q, 1);
		req_outcome(&q, st, &peer, &tag, &bytes);
		rid = q.id;
	}
	set_args(c, count, rc == MPI_SUCCESS ? *index : -1, rid, peer, tag,
		 bytes);
	if (saved != small)
		free(saved);
	return rc;
}

static int do_Test(struct mw_call *c, MPI_Request *req, int *flag,
		   MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	struct req_rec q;
	int64_t peer, tag, bytes;
	int rc = next_Test(req, flag, st), done = rc == MPI_SUCCESS && *flag;

	req_find(r, &q, done);
	req_outcome(&q, done ? st : NULL, &peer, &tag, &bytes);
	set_args(c, q.id, rc == MPI_SUCCESS ? *flag : 0, peer, tag,
		 q.id ? q.comm : -1, bytes);
	return rc;
}

static int do_Probe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		    MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Probe(source, tag, comm, st);
	int64_t peer, id;

	if (rc == MPI_SUCCESS) {
		id = comm_lookup(comm, st->MPI_SOURCE, &peer, NULL, NULL);
		set_args(c, peer, st->MPI_TAG, id, status_bytes(st), 0, 0);
	} else {
		id = comm_lookup(comm, source, &peer, NULL, NULL);
		set_args(c, peer, tag, id, 0, 0, 0);
	}
	return rc;
}

static int do_Iprobe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		     int *flag, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Iprobe(source, tag, comm, flag, st);
	int64_t peer, id;

	if (rc == MPI_SUCCESS && *flag) {
		id = comm_lookup(comm, st->MPI_SOURCE, &peer, NULL, NULL);
		set_args(c, peer, st->MPI_TAG, id, status_bytes(st), 1, 0);
	} else {
		id = comm_lookup(comm, source, &peer, NULL, NULL);
		set_args(c, peer, tag, id, 0, 0, 0);
	}
	return rc;
}

/* ---- collectives ------------------------------------------------------- */

static int do_Barrier(struct mw_call *c, MPI_Comm comm)
{
	int rc = next_Barrier(comm);

	set_args(c, comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0, 0, 0);
	return rc;
}

static int do_Bcast(struct mw_call *c, void *buf, int count,
		    MPI_Datatype type, int root, MPI_Comm comm)
{
	int rc = next_Bcast(buf, count, type, root, comm);

	set_args(c, type_bytes(type, count), root,
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0);
	return rc;
}

static int do_Reduce(struct mw_call *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype type, MPI_Op op, int root,
		     MPI_Comm comm)
{
	int rc = next_Reduce(sbuf, rbuf, count, type, op, root, comm);

	set_args(c, type_bytes(type, count), root,
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0);
	return rc;
}

static int do_Allreduce(struct mw_call *c, const void *sbuf, void *rbuf,
			int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Allreduce(sbuf, rbuf, count, type, op, comm);

	set_args(c, type_bytes(type, count),
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0, 0);
	return rc;
}

static int do_Gather(struct mw_call *c, const void *sbuf, int scount,
		     MPI_Datatype stype, void *rbuf, int rcount,
		     MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root,
			     comm), me;
	int64_t id = comm_lookup(comm, 0, NULL, NULL, &me);
	int64_t rb = me == root ? type_bytes(rtype, rcount) : 0;

	set_args(c, sbuf == MPI_IN_PLACE ? rb : type_bytes(stype, scount), rb,
		 root, id, 0, 0);
	return rc;
}

static int do_Gatherv(struct mw_call *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, const int rcounts[],
		      const int displs[], MPI_Datatype rtype, int root,
		      MPI_Comm comm)
{
	int rc = next_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
			      root, comm), me, size;
	int64_t id = comm_lookup(comm, 0, NULL, &size, &me), rb = 0, sb, *arr;
	size_t n = size > 0 ? (size_t)size : 0;

	sb = type_bytes(stype, scount);
	if (me == root && rcounts) {
		rb = type_bytes(rtype, counts_sum(rcounts, size));
		if (sbuf == MPI_IN_PLACE && root >= 0 && root < size)
			sb = type_bytes(rtype, rcounts[root]);
		if (c->on && (arr = mw_call_array(c, &n)))
			counts_array(arr, n, rcounts, size, rtype);
	}
	set_args(c, sb, rb, root, id, 0, 0);
	return rc;
}

static int do_Scatter(struct mw_call *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root,
			      comm), me;
	int64_t id = comm_lookup(comm, 0, NULL, NULL, &me);
	int64_t sb = me == root ? type_bytes(stype, scount) : 0;

	set_args(c, sb, rbuf == MPI_IN_PLACE ? sb : type_bytes(rtype, rcount),
		 root, id, 0, 0);
	return rc;
}

static int do_Scatterv(struct mw_call *c, const void *sbuf,
		       const int scounts[], const int displs[],
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount,
			       rtype, root, comm), me, size;
	int64_t id = comm_lookup(comm, 0, NULL, &size, &me), sb = 0, rb, *arr;
	size_t n = size > 0 ? (size_t)size : 0;

	rb = type_bytes(rtype, rcount);
	if (me == root && scounts) {
		sb = type_bytes(stype, counts_sum(scounts, size));
		if (rbuf == MPI_IN_PLACE && root >= 0 && root < size)
			rb = type_bytes(stype, scounts[root]);
		if (c->on && (arr = mw_call_array(c, &n)))
			counts_array(arr, n, scounts, size, stype);
	}
	set_args(c, sb, rb, root, id, 0, 0);
	return rc;
}

static int do_Allgather(struct mw_call *c, const void *sbuf, int scount,
			MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	int64_t rb = type_bytes(rtype, rcount);

	set_args(c, sbuf == MPI_IN_PLACE ? rb : type_bytes(stype, scount), rb,
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0);
	return rc;
}

static int do_Allgatherv(struct mw_call *c, const void *sbuf, int scount,
			 MPI_Datatype stype, void *rbuf, const int rcounts[],
			 const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs,
				 rtype, comm), me, size;
	int64_t id = comm_lookup(comm, 0, NULL, &size, &me), sb, rb, *arr;
	size_t n = size > 0 ? (size_t)size : 0;

	sb = type_bytes(stype, scount);
	rb = rcounts ? type_bytes(rtype, counts_sum(rcounts, size)) : 0;
	if (sbuf == MPI_IN_PLACE && rcounts && me >= 0 && me < size)
		sb = type_bytes(rtype, rcounts[me]);
	if (c->on && rcounts && (arr = mw_call_array(c, &n)))
		counts_array(arr, n, rcounts, size, rtype);
	set_args(c, sb, rb, id, 0, 0, 0);
	return rc;
}

static int do_Alltoall(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	int64_t rb = type_bytes(rtype, rcount);

	set_args(c, sbuf == MPI_IN_PLACE ? rb : type_bytes(stype, scount), rb,
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0);
	return rc;
}

static int do_Alltoallv(struct mw_call *c, const void *sbuf,
			const int scounts[], const int sdispls[],
			MPI_Datatype stype, void *rbuf, const int rcounts[],
			const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts,
				rdispls, rtype, comm), size;
	int64_t id = comm_lookup(comm, 0, NULL, &size, NULL), sb, rb, *arr;
	size_t n = size > 0 ? (size_t)size * 2 : 0;
	int inplace = sbuf == MPI_IN_PLACE;
	const int *sc = inplace ? rcounts : scounts;
	MPI_Datatype st = inplace ? rtype : stype;

	sb = sc ? type_bytes(st, counts_sum(sc, size)) : 0;
	rb = rcounts ? type_bytes(rtype, counts_sum(rcounts, size)) : 0;
	if (c->on && sc && rcounts && (arr = mw_call_array(c, &n))) {
		counts_array(arr, n, sc, size, st);
		if (n > (size_t)size)
			counts_array(arr + size, n - (size_t)size, rcounts,
				     size, rtype);
	}
	set_args(c, sb, rb, id, 0, 0, 0);
	return rc;
}

static int do_Reduce_scatter(struct mw_call *c, const void *sbuf, void *rbuf,
			     const int rcounts[], MPI_Datatype type,
			     MPI_Op op, MPI_Comm comm)
{
	int rc = next_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm), size;
	int64_t id = comm_lookup(comm, 0, NULL, &size, NULL), *arr;
	size_t n = size > 0 ? (size_t)size : 0;

	if (c->on && rcounts && (arr = mw_call_array(c, &n)))
		counts_array(arr, n, rcounts, size, type);
	set_args(c, rcounts ? type_bytes(type, counts_sum(rcounts, size)) : 0,
		 id, 0, 0, 0, 0);
	return rc;
}

static int do_Scan(struct mw_call *c, const void *sbuf, void *rbuf, int count,
		   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Scan(sbuf, rbuf, count, type, op, comm);

	set_args(c, type_bytes(type, count),
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0, 0);
	return rc;
}

static int do_Exscan(struct mw_call *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Exscan(sbuf, rbuf, count, type, op, comm);

	set_args(c, type_bytes(type, count),
		 comm_lookup(comm, 0, NULL, NULL, NULL), 0, 0, 0, 0);
	return rc;
}

/* ---- the exported wrappers --------------------------------------------- */

/* (a, b) -> , a, b and () -> nothing: do_NAME(&c MW_MORE args) */
#define MW_MORE(...) __VA_OPT__(,) __VA_ARGS__
#define MPI_CALL(name, ev, params, args) \
int MPI_##name params \
{ \
	struct mw_call c; \
	int rc; \
\
	mw_begin(&c, PROTO_EV_##ev); \
	rc = do_##name(&c MW_MORE args); \
	mw_end(&c, rc); \
	return rc; \
}
#include "sensor/mpi.def"
#undef MPI_CALL
