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
 *  - requests (mpi_req.c): an id of the sensor's own per request, bound
 *    to its handle until it completes (handles are shared and reused).
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
#define PEER_ANY MW_PEER_ANY
#define PEER_NULL MW_PEER_NULL
#define PEER_UNKNOWN MW_PEER_UNKNOWN
#define SMALL_REQS 32

/* ---- next functions: resolved at load, PMPI_ until then ---------------- */

/* The end of the last library call, stamped as it returns: an event ends
 * there, not after the wrapper's bookkeeping (communicator and request
 * lookups, arrays), which falls in the gap after it with the accounting
 * (the measured exit gap). Left in the event, it would lengthen every
 * message's transit as the trace sees it. */
__thread uint64_t mw_t_ret __attribute__((tls_model("initial-exec")));

/* the next-function pointers, next_NAME() and their resolution at load,
 * from the table (the same expansion as the other wrapper files') */
#define MW_TABLE "sensor/mpi.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* ---- state ------------------------------------------------------------- */

enum { ST_BEFORE, ST_RUNNING, ST_FINALIZED };

struct comm_rec {
	int64_t id;
	int size;		/* remote size for intercommunicators */
	int myrank;
	int *world;		/* world rank of member i; NULL: identity */
};

static volatile int mw_state = ST_BEFORE;
static int mpi_on = -1;		/* sn_enabled("mpi"), read at first call */
static int world_rank = -1, world_size;

static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *comm_tab;
static int64_t comm_next = 2;

static uint64_t comm_key(MPI_Comm c)
{
	return MW_KEY(c);
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
	mw_req_init();
}

static void tables_free(void)
{
	pthread_mutex_lock(&comm_lock);
	mw_tab_each(comm_tab, comm_rec_free, NULL);
	mw_tab_free(comm_tab);
	comm_tab = NULL;
	pthread_mutex_unlock(&comm_lock);
	mw_req_fini();
}

/* ---- helpers ----------------------------------------------------------- */

/* (the name this file's wrappers use) */
#define type_bytes mw_type_bytes

int64_t mw_type_bytes(MPI_Datatype t, int64_t count)
{
	MPI_Count sz = 0;

	if (t == MPI_DATATYPE_NULL || count <= 0)
		return 0;
	if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || sz < 0 ||
	    sz == MPI_UNDEFINED)
		return 0;
	return count * (int64_t)sz;
}

/* Bytes a status says were received, in 64 bits: MPI_Get_count's int
 * is MPI_UNDEFINED past 2 GiB. */
static int64_t status_bytes(const MPI_Status *st)
{
	MPI_Count n = 0;

	if (PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n == MPI_UNDEFINED || n < 0)
		return 0;
	return (int64_t)n;
}

static void set_args(struct mw_call *c, int64_t a0, int64_t a1, int64_t a2,
		     int64_t a3, int64_t a4, int64_t a5)
{
	proto_args_set(c->arg, a0, a1, a2, a3, a4, a5);
}

int64_t mw_probe_arrived(int source, int tag, MPI_Comm comm, int64_t *ns)
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
 * bytes (received for receives); peer MW_PEER_CANCELLED and bytes 0 when
 * it was cancelled. */
static void req_outcome(const struct mw_req *q, const MPI_Status *st,
			int64_t *peer, int64_t *tag, int64_t *bytes)
{
	int cancelled = 0;

	*peer = q->peer;
	*tag = q->tag;
	*bytes = q->bytes;
	/* an MPI-IO access (peer -2 too): what its status says moved, what
	 * was asked when it says nothing (MPI_UNDEFINED, no status). Its
	 * cancelled flag is not asked: Open MPI 4.1's ompio leaves it
	 * unwritten (every access read as cancelled), and file accesses are
	 * not cancelled in practice (ROMIO and ompio ignore MPI_Cancel). */
	if (q->kind == MW_REQ_IO) {
		MPI_Count n = 0;

		if (st && PMPI_Get_elements_x(st, MPI_BYTE, &n) == MPI_SUCCESS &&
		    n != MPI_UNDEFINED && n >= 0)
			*bytes = (int64_t)n;
		return;
	}
	/* to or from MPI_PROC_NULL: nothing moved (and some MPIs leave the
	 * status of such a request unwritten) */
	if (q->peer == PEER_NULL) {
		*bytes = 0;
		return;
	}
	if (q->id && st && PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS &&
	    cancelled) {
		*peer = MW_PEER_CANCELLED;
		*bytes = 0;
		return;
	}
	/* an Isendrecv's status that MPICH 4.0 left unwritten (source 0,
	 * tag 0, no data): what was asked for stands */
	if (q->kind == MW_REQ_RECV && st && q->exchange && q->peer >= 0 &&
	    q->tag >= 0 && st->MPI_SOURCE == 0 && st->MPI_TAG == 0 &&
	    status_bytes(st) == 0)
		return;
	if (q->kind == MW_REQ_RECV && st) {
		*peer = key_to_world(q->commkey, st->MPI_SOURCE);
		*tag = st->MPI_TAG;
		*bytes = status_bytes(st);
	}
}

/* ---- polls that found nothing: folded --------------------------------- */

/* A busy-wait on MPI_Test (or Iprobe, Testany, Testsome, Testall,
 * Request_get_status) would write two records an iteration, the call's and
 * the COMPUTE event of the loop around it. A run of consecutive calls that
 * all found nothing is kept in this thread's fold instead: one record with
 * the first call's type and arguments, from its start to the last call's
 * end, flagged PROTO_EVF_FOLDED with an ARRAY of 1 value, the number of
 * calls (a run of 1 is an ordinary record). A run may mix polls: hpcc's
 * RandomAccess alternates MPI_Test and MPI_Testany on other requests
 * (380,000 of each in a 3-second run), and a failed poll changes nothing
 * a reader needs. The COMPUTE stretches inside the run
 * are dropped (the record covers them); each call's COMPUTE event is kept
 * (mw_compute_release) until its outcome says whether the run goes on. The
 * fold is written at the thread's next MPI call that does not continue it
 * (MPI_Finalize at the latest). */
struct mw_fold {
	int on;
	uint16_t type;
	uint64_t t0, t1;
	int64_t arg[PROTO_EV_NARGS];
	int64_t n;
};

static __thread struct mw_fold mw_fold_tls __attribute__((tls_model("initial-exec")));
/* set while the wrapper calibrates itself on MPI_Iprobe: no folding */
static __thread int mw_no_fold __attribute__((tls_model("initial-exec")));

/* Did the call c (which returned rc) poll and find nothing? */
static int poll_failed(const struct mw_call *c, int rc)
{
	return rc == MPI_SUCCESS && !c->narr && !mw_no_fold &&
	       proto_ev_poll_empty(c->type, c->arg);
}

/* Write the fold's record (before anything the thread writes after it). */
static void fold_flush(struct mw_fold *f)
{
	struct proto_event *e;

	if (!f->on)
		return;
	f->on = 0;
	if (!(e = sn_slot()))
		return;
	e->t_start = f->t0;
	e->t_end = f->t1;
	e->type = f->type;
	e->flags = f->n > 1 ? PROTO_EVF_FOLDED | PROTO_EVF_HASARRAY : 0;
	memcpy(e->arg, f->arg, sizeof(e->arg));
	sn_commit(e);
	if (f->n > 1)
		sn_array(&f->n, 1);
}

/* At a traced call's exit (t1: its end): 1 when the call joined or began
 * the fold and writes no record of its own; 0 when it is recorded as
 * usual, after the fold's record and the COMPUTE event kept back. */
static int fold_call(struct mw_call *c, int rc, uint64_t t1)
{
	struct mw_fold *f = &mw_fold_tls;
	int failed = poll_failed(c, rc);

	if (f->on && failed) {
		mw_compute_release(0);
		f->t1 = t1;
		f->n++;
		return 1;
	}
	if (f->on)
		fold_flush(f);
	mw_compute_release(1);
	if (!failed)
		return 0;
	f->on = 1;
	f->type = c->type;
	f->t0 = c->t0;
	f->t1 = t1;
	f->n = 1;
	memcpy(f->arg, c->arg, sizeof(f->arg));
	return 1;
}

/* ---- prologue / epilogue ----------------------------------------------- */

void mw_begin(struct mw_call *c, unsigned type)
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
		 * cost falls between the events (see calibrate_accounting);
		 * its COMPUTE event is kept until this call's outcome
		 * (fold_call) */
		mw_compute_enter(sn_now());
		mw_t_ret = 0;
		c->t0 = sn_now();
	}
	errno = saved;
}

static void calibrate_wrapper(void);

/* The MPI_ERROR record after the record of a call that returned rc (not
 * MPI_SUCCESS) at t: only failed calls pay for it. */
static void error_record(const struct mw_call *c, int rc, uint64_t t)
{
	struct proto_event *e;
	int cls = 0;

	if (PMPI_Error_class(rc, &cls) != MPI_SUCCESS)
		cls = -1;
	if (!(e = sn_slot()))
		return;
	e->t_start = t;
	e->t_end = t;
	e->type = PROTO_EV_MPI_ERROR;
	e->flags = PROTO_EVF_INSTANT;
	proto_ev_set_args(e, rc, cls, c->type, 0, 0, 0);
	sn_commit(e);
}

void mw_end(struct mw_call *c, int rc)
{
	struct proto_event *e;
	uint64_t t1;
	int saved = errno;

	if (c->on) {
		t1 = mw_t_ret >= c->t0 ? mw_t_ret : sn_now();
		if (rc != MPI_SUCCESS)
			c->flags |= PROTO_EVF_FAILED | PROTO_EVF_ERRCODE;
		if (c->narr)
			c->flags |= PROTO_EVF_HASARRAY;
		/* a fold's record, and the COMPUTE event kept back, before
		 * the call's record */
		e = fold_call(c, rc, t1) ? NULL : sn_slot();
		if (e) {
			e->t_start = c->t0;
			e->t_end = t1;
			e->type = c->type;
			e->flags = c->flags;
			memcpy(e->arg, c->arg, sizeof(e->arg));
			sn_commit(e);
			if (c->narr)
				sn_array(c->arr, c->narr);
			if (rc != MPI_SUCCESS)
				error_record(c, rc, t1);
		}
		mw_compute_open();
		sn_leave();
	}
	mw_call_done(c);
	if (c->flush == 2)
		sn_ship_all();
	else if (c->flush)
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
 * COMPUTE events (more with a trapping counter: the code after a trap runs
 * cold). Measured once,
 * as MPI_Init returns, on the application thread: a call through the whole
 * wrapper WRAP_ITER times into a scratch ring that the sender never sees
 * (sn_scratch_begin), against the same number of direct calls; per call,
 * the median of its event's duration plus the COMPUTE event's after it,
 * less the median direct call. MPI_Comm_rank (no progress engine) is sent
 * as CALIB evtype MPI_INIT; MPI_Iprobe on MPI_COMM_SELF (one pass of the
 * progress engine, nothing pending) as CALIB evtype MPI_IPROBE: a call
 * that runs the progress engine runs that much slower after the sensor's
 * reads (bench/call_residual.sh), which the correction takes off its
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
	mw_no_fold = 1;
	cost[0] = wrapper_cost(0, &n[0]);
	cost[1] = wrapper_cost(1, &n[1]);
	mw_no_fold = 0;
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
	/* the sensor ships over its own socket: shipping after MPI is gone
	 * is fine, and the Finalize event is then part of it; no wait for
	 * the acknowledgements (the exit's final flush has them) */
	c->flush = 2;
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

/* A communicator of all the world's ranks in another order: its
 * constructor's event (c) gets an ARRAY of the world rank of each of its
 * ranks, so that a replay on MPI_COMM_WORLD can put its counts and roots
 * in world order. Nothing for the world's order or fewer ranks. */
static void made_order(struct mw_call *c, const struct made *m, MPI_Comm nc)
{
	struct comm_rec *r;
	int64_t *arr;
	size_t n;
	int ident = 1;

	if (!c || !c->on || m->id < 0 || world_size <= 0 || m->size != world_size)
		return;
	pthread_mutex_lock(&comm_lock);
	r = mw_tab_get(comm_tab, comm_key(nc));
	for (int i = 0; r && r->world && i < r->size && ident; i++)
		ident = r->world[i] == i;
	if (r && r->world && !ident) {
		n = (size_t)r->size;
		if ((arr = mw_call_array(c, &n)) && n == (size_t)r->size)
			for (size_t i = 0; i < n; i++)
				arr[i] = r->world[i];
		else
			mw_call_done(c);
	}
	pthread_mutex_unlock(&comm_lock);
}

/* The communicator a constructor on comm that returned rc made
 * (registered; like: see comm_created), and its parent's id; c (NULL:
 * none) gets its order (made_order). */
static struct made made_of(struct mw_call *c, MPI_Comm comm, int rc,
			   const MPI_Comm *newcomm, MPI_Comm like)
{
	struct made m = {-1, -1, 0, -1, -1, -1};

	if (rc == MPI_SUCCESS) {
		m = comm_created(*newcomm, like);
		made_order(c, &m, *newcomm);
	}
	m.parent = comm_lookup(comm, 0, NULL, NULL, NULL);
	return m;
}

/* The event of a constructor whose only inputs are comm and a group,
 * dimensions or a graph (MPI_Comm_create, MPI_Cart_sub, the two
 * MPI_Dist_graph_create). */
static void made_args(struct mw_call *c, MPI_Comm comm, int rc, const MPI_Comm *newcomm)
{
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, m.id, m.size, m.leader, m.myrank, 0);
}

static int do_Comm_split(struct mw_call *c, MPI_Comm comm, int color, int key,
			 MPI_Comm *newcomm)
{
	int rc = next_Comm_split(comm, color, key, newcomm);
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, color, key, m.id, m.size, m.myrank);
	return rc;
}

/* A dup's record (MPI_Comm_dup, MPI_Comm_dup_with_info). */
static int dup_args(struct mw_call *c, MPI_Comm comm, int rc, MPI_Comm *newcomm)
{
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

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
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

	set_args(c, m.parent, split_type, m.id, m.size, m.leader, m.myrank);
	return rc;
}

static int do_Cart_create(struct mw_call *c, MPI_Comm comm, int ndims,
			  const int dims[], const int periods[], int reorder,
			  MPI_Comm *newcomm)
{
	int rc = next_Cart_create(comm, ndims, dims, periods, reorder, newcomm);
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

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
	struct made m = made_of(c, comm, rc, newcomm, comm);
	int64_t rid = 0;

	if (rc == MPI_SUCCESS) {
		struct mw_req q = {.kind = MW_REQ_COLL, .comm = m.parent,
				   .commkey = comm_key(comm),
				   .peer = PEER_NULL, .active = 1};

		rid = mw_req_start(*req, req, &q);
	}
	set_args(c, m.parent, m.id, m.size, m.myrank, rid, 0);
	return rc;
}

static int do_Graph_create(struct mw_call *c, MPI_Comm comm, int nnodes,
			   const int index[], const int edges[], int reorder,
			   MPI_Comm *newcomm)
{
	int rc = next_Graph_create(comm, nnodes, index, edges, reorder, newcomm);
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

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
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);
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
	struct made m = made_of(NULL, local_comm, rc, newcomm, MPI_COMM_NULL);
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
	struct made m = made_of(c, comm, rc, newcomm, MPI_COMM_NULL);

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
		arrived = mw_probe_arrived(source, tag, comm, &probe);
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

/* A request just started by a send or receive that returned rc: its id,
 * bound to *req, and the event's peer, tag, comm, bytes, req. persistent:
 * made by a *_init call (inactive until MPI_Start). */
static int req_args(struct mw_call *c, int rc, int kind, int persistent,
		    int count, MPI_Datatype type, int rank, int tag,
		    MPI_Comm comm, MPI_Request *req)
{
	int64_t peer, id = comm_lookup(comm, rank, &peer, NULL, NULL);
	int64_t bytes = type_bytes(type, count), rid = 0;

	if (rc == MPI_SUCCESS && req) {
		struct mw_req q = {.kind = kind, .comm = id,
				   .commkey = comm_key(comm),
				   .peer = (int32_t)peer, .tag = tag,
				   .bytes = bytes, .persistent = persistent,
				   .active = !persistent};

		rid = mw_req_start(*req, req, &q);
	}
	set_args(c, peer, tag, id, bytes, rid, 0);
	return rc;
}

/* The nonblocking sends and receives and the persistent requests'
 * constructors: the same arguments, recorded by req_args (KIND, whether
 * persistent). */
#define P2P_REQ(name, BUF, KIND, PERSISTENT) \
static int do_##name(struct mw_call *c, BUF *buf, int count, \
		     MPI_Datatype type, int peer, int tag, MPI_Comm comm, \
		     MPI_Request *req) \
{ \
	int rc = next_##name(buf, count, type, peer, tag, comm, req); \
\
	return req_args(c, rc, KIND, PERSISTENT, count, type, peer, tag, \
			comm, req); \
}
MW_P2P_REQS(P2P_REQ)

/* ---- persistent requests ----------------------------------------------- */

/* Each activation of a persistent request gets an id of its own: req,
 * peer, tag, comm, bytes, kind. */
static int do_Start(struct mw_call *c, MPI_Request *req)
{
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	int rc = next_Start(req);
	struct mw_req q;

	if (rc == MPI_SUCCESS && mw_req_take(r, req, MW_REQ_START, &q))
		set_args(c, q.id, q.peer, q.tag, q.comm, q.bytes, q.kind);
	else
		set_args(c, 0, PEER_UNKNOWN, 0, -1, 0, 0);
	return rc;
}

/* count + ARRAY of 5 per request: req, peer, tag, bytes, kind. */
static int do_Startall(struct mw_call *c, int count, MPI_Request reqs[])
{
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs, count, small);
	size_t n = count > 0 ? (size_t)count * 5 : 0;
	int rc = next_Startall(count, reqs);
	int64_t *arr = c->on && saved ? mw_call_array(c, &n) : NULL;
	struct mw_req q;

	for (size_t i = 0; saved && i < (size_t)count; i++) {
		int ok = rc == MPI_SUCCESS &&
			mw_req_take(saved[i], &reqs[i], MW_REQ_START, &q);

		if (arr && i < n / 5) {
			arr[i * 5] = ok ? q.id : 0;
			arr[i * 5 + 1] = ok ? q.peer : PEER_UNKNOWN;
			arr[i * 5 + 2] = ok ? q.tag : 0;
			arr[i * 5 + 3] = ok ? q.bytes : 0;
			arr[i * 5 + 4] = ok ? q.kind : 0;
		}
	}
	if (arr)
		c->narr = n / 5 * 5;
	set_args(c, count, 0, 0, 0, 0, 0);
	if (saved != small)
		free(saved);
	return rc;
}

/* ---- receives of matched messages ------------------------------------- */

/* Messages matched by MPI_Mprobe / MPI_Improbe and not yet received:
 * their communicator, to translate the actual source at MPI_Mrecv (a
 * message handle does not tell it), and what the probe saw. A small ring:
 * a matched message is received soon, by the thread that probed. */
#define MSG_RING 256
struct msg_rec {
	uint64_t key;		/* the MPI_Message handle, 0: free */
	uint64_t commkey;
	int64_t comm, peer, tag, bytes;
};
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct msg_rec msg_ring[MSG_RING];
static unsigned msg_next;

static uint64_t msg_key(MPI_Message m)
{
	return MW_KEY(m);
}

static void msg_matched(MPI_Message m, MPI_Comm comm, int64_t comm_id,
			int64_t peer, int64_t tag, int64_t bytes)
{
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
		return;
	pthread_mutex_lock(&msg_lock);
	msg_ring[msg_next % MSG_RING] = (struct msg_rec){msg_key(m),
		comm_key(comm), comm_id, peer, tag, bytes};
	msg_next++;
	pthread_mutex_unlock(&msg_lock);
}

/* The record of m, removed; 0 if unknown (*out then says so). */
static int msg_take(MPI_Message m, struct msg_rec *out)
{
	int found = 0;

	memset(out, 0, sizeof(*out));
	out->comm = -1;
	out->peer = m == MPI_MESSAGE_NO_PROC ? PEER_NULL : PEER_UNKNOWN;
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC)
		return 0;
	pthread_mutex_lock(&msg_lock);
	for (unsigned i = 0; i < MSG_RING && !found; i++) {
		struct msg_rec *r = &msg_ring[(msg_next - 1 - i) % MSG_RING];

		if (r->key == msg_key(m) && r->key) {
			*out = *r;
			r->key = 0;
			found = 1;
		}
	}
	pthread_mutex_unlock(&msg_lock);
	return found;
}

/* A probe's event: peer, tag, comm, bytes from the status when it
 * matched, else as asked; result (Iprobe, Improbe) in a4. */
static void probe_args(struct mw_call *c, int rc, int matched, int source,
		       int tag, MPI_Comm comm, const MPI_Status *st,
		       int64_t result, MPI_Message *msg)
{
	int64_t peer, id;

	if (rc == MPI_SUCCESS && matched) {
		id = comm_lookup(comm, st->MPI_SOURCE, &peer, NULL, NULL);
		set_args(c, peer, st->MPI_TAG, id, status_bytes(st), result, 0);
		if (msg)
			msg_matched(*msg, comm, id, peer, st->MPI_TAG,
				    status_bytes(st));
	} else {
		id = comm_lookup(comm, source, &peer, NULL, NULL);
		set_args(c, peer, tag, id, 0, 0, 0);
	}
}

static int do_Mprobe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		     MPI_Message *msg, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Mprobe(source, tag, comm, msg, st);

	probe_args(c, rc, 1, source, tag, comm, st, 0, msg);
	return rc;
}

static int do_Improbe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		      int *flag, MPI_Message *msg, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Improbe(source, tag, comm, flag, msg, st);
	int matched = rc == MPI_SUCCESS && flag && *flag;

	probe_args(c, rc, matched, source, tag, comm, st, matched, msg);
	return rc;
}

/* peer, tag, comm, bytes of the message received (the probe's when the
 * call failed). */
static int do_Mrecv(struct mw_call *c, void *buf, int count,
		    MPI_Datatype type, MPI_Message *msg, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Message m = msg ? *msg : MPI_MESSAGE_NULL;
	int rc = next_Mrecv(buf, count, type, msg, st);
	struct msg_rec r;

	msg_take(m, &r);
	if (rc == MPI_SUCCESS && r.peer != PEER_NULL)
		set_args(c, key_to_world(r.commkey, st->MPI_SOURCE),
			 st->MPI_TAG, r.comm, status_bytes(st), 0, 0);
	else
		set_args(c, r.peer, r.tag, r.comm, r.bytes, 0, 0);
	return rc;
}

/* The request of a matched receive: peer and tag are the probe's. */
static int do_Imrecv(struct mw_call *c, void *buf, int count,
		     MPI_Datatype type, MPI_Message *msg, MPI_Request *req)
{
	MPI_Message m = msg ? *msg : MPI_MESSAGE_NULL;
	int rc = next_Imrecv(buf, count, type, msg, req);
	struct msg_rec r;
	int64_t rid = 0;

	msg_take(m, &r);
	if (rc == MPI_SUCCESS && req) {
		struct mw_req q = {.kind = MW_REQ_RECV, .comm = r.comm,
				   .commkey = r.commkey,
				   .peer = (int32_t)r.peer,
				   .tag = (int32_t)r.tag, .bytes = r.bytes,
				   .active = 1};

		rid = mw_req_start(*req, req, &q);
	}
	set_args(c, r.peer, r.tag, r.comm, r.bytes, rid, 0);
	return rc;
}

/* ---- exchanges --------------------------------------------------------- */

void mw_sendrecv_args(struct mw_call *c, int rc, int64_t sbytes, int dest,
		      int stag, int source, int rtag, int64_t rmax,
		      MPI_Comm comm, const MPI_Status *st, int64_t arrived,
		      int64_t probe)
{
	int64_t *arr, peer, src, id;
	size_t n = 3;

	id = comm_lookup(comm, dest, &peer, NULL, NULL);
	if (c->on && (arr = mw_call_array(c, &n)) && n == 3) {
		arr[0] = rc == MPI_SUCCESS ? st->MPI_TAG : rtag;
		arr[1] = arrived;
		arr[2] = probe;
	}
	if (rc == MPI_SUCCESS) {
		comm_lookup(comm, st->MPI_SOURCE, &src, NULL, NULL);
		set_args(c, peer, stag, id, sbytes, src, status_bytes(st));
	} else {
		comm_lookup(comm, source, &src, NULL, NULL);
		set_args(c, peer, stag, id, sbytes, src, rmax);
	}
}

static int do_Sendrecv(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, int dest, int stag, void *rbuf,
		       int rcount, MPI_Datatype rtype, int source, int rtag,
		       MPI_Comm comm, MPI_Status *status)
{
	return MW_SENDRECV(c, status, next_Sendrecv(sbuf, scount, stype, dest,
			   stag, rbuf, rcount, rtype, source, rtag, comm, st),
			   type_bytes(stype, scount), dest, stag, source, rtag,
			   type_bytes(rtype, rcount), comm);
}

static int do_Sendrecv_replace(struct mw_call *c, void *buf, int count,
			       MPI_Datatype type, int dest, int stag,
			       int source, int rtag, MPI_Comm comm,
			       MPI_Status *status)
{
	int64_t bytes = type_bytes(type, count);

	return MW_SENDRECV(c, status, next_Sendrecv_replace(buf, count, type,
			   dest, stag, source, rtag, comm, st), bytes, dest,
			   stag, source, rtag, bytes, comm);
}

/* ---- completions ------------------------------------------------------- */

/* Statuses to pass for n requests: the application's, or small or an
 * allocation when it passed MPI_STATUSES_IGNORE (the wrapper reads source,
 * tag and count). MPI_STATUSES_IGNORE when that failed. */
static MPI_Status *statuses_for(MPI_Status *app, int n, MPI_Status *small)
{
	MPI_Status *st;

	if (app != MPI_STATUSES_IGNORE || n <= 0)
		return app;
	st = n <= SMALL_REQS ? small : malloc((size_t)n * sizeof(*st));
	return st ? st : MPI_STATUSES_IGNORE;
}

static void statuses_done(MPI_Status *st, MPI_Status *app, MPI_Status *small)
{
	if (st != app && st != small && st != MPI_STATUSES_IGNORE)
		free(st);
}

/* The request saved[i] (the application's reqs[i]) completed with status
 * st (NULL: not known): its record taken, into the 5 values of d (req,
 * peer, tag, bytes, index i). */
static void done_entry(int64_t *d, MPI_Request saved, MPI_Request *where,
		       const MPI_Status *st, int i)
{
	struct mw_req q;
	int64_t peer, tag, bytes;

	mw_req_take(saved, where, MW_REQ_COMPLETE, &q);
	req_outcome(&q, st, &peer, &tag, &bytes);
	if (!d)
		return;
	d[0] = q.id;
	d[1] = peer;
	d[2] = tag;
	d[3] = bytes;
	d[4] = i;
}

static int do_Wait(struct mw_call *c, MPI_Request *req, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	struct mw_req q;
	int64_t arrived = 0, peer, tag, bytes;
	int rc;

	if (c->on)
		arrived = req_done(r);
	rc = next_Wait(req, st);
	mw_req_take(r, req, rc == MPI_SUCCESS ? MW_REQ_COMPLETE : MW_REQ_PEEK,
		    &q);
	req_outcome(&q, rc == MPI_SUCCESS ? st : NULL, &peer, &tag, &bytes);
	set_args(c, q.id, peer, tag, q.id ? q.comm : -1, bytes, arrived);
	return rc;
}

/* Did request i of a multiple completion that returned rc complete? */
static int done_in(int rc, const MPI_Status *st, int i)
{
	if (rc == MPI_SUCCESS)
		return 1;
	return rc == MPI_ERR_IN_STATUS && st != MPI_STATUSES_IGNORE &&
		st[i].MPI_ERROR != MPI_ERR_PENDING;
}

static int do_Waitall(struct mw_call *c, int count, MPI_Request reqs_in[],
		      MPI_Status statuses[])
{
	MPI_Request small[SMALL_REQS], *saved;
	MPI_Status sst[SMALL_REQS], *st;
	int64_t *arr, peer, tag, bytes;
	size_t n = count > 0 ? (size_t)count * 4 : 0, i, m;
	struct mw_req q;
	int rc;

	saved = reqs_copy(reqs_in, count, small);
	st = saved ? statuses_for(statuses, count, sst) : statuses;
	arr = c->on && saved ? mw_call_array(c, &n) : NULL;
	m = arr ? n / 4 : 0;
	/* arrived flags first, into the array's fourth column */
	for (i = 0; i < m; i++)
		arr[i * 4 + 3] = req_done(saved[i]);
	rc = next_Waitall(count, reqs_in, st);
	for (i = 0; saved && i < (size_t)count; i++) {
		int completed = done_in(rc, st, (int)i);
		const MPI_Status *si = st != MPI_STATUSES_IGNORE &&
			completed ? &st[i] : NULL;

		mw_req_take(saved[i], &reqs_in[i],
			    completed ? MW_REQ_COMPLETE : MW_REQ_PEEK, &q);
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
	statuses_done(st, statuses, sst);
	if (saved != small)
		free(saved);
	return rc;
}

/* The completions of Waitsome / Testsome / Testall: count, result (the
 * number completed; -1: MPI_UNDEFINED, none active) + ARRAY of 5 per
 * completed request (done_entry). idx: the completed positions (NULL:
 * all count of them). */
static void some_args(struct mw_call *c, int rc, int count, int done,
		      const int *idx, const MPI_Request *saved,
		      MPI_Request *reqs, const MPI_Status *st)
{
	size_t n = done > 0 ? (size_t)done * 5 : 0;
	int64_t *arr = NULL;

	if (rc == MPI_SUCCESS && done > 0 && saved && c->on)
		arr = mw_call_array(c, &n);
	for (int k = 0; rc == MPI_SUCCESS && saved && k < done; k++) {
		int i = idx ? idx[k] : k;

		if (i < 0 || i >= count)
			continue;
		done_entry(arr && (size_t)k < n / 5 ? arr + k * 5 : NULL,
			   saved[i], &reqs[i],
			   st != MPI_STATUSES_IGNORE ? &st[idx ? k : i] : NULL,
			   i);
	}
	if (arr)
		c->narr = n / 5 * 5;
	set_args(c, count, rc == MPI_SUCCESS ? done : -1, 0, 0, 0, 0);
}

/* Waitsome and Testsome: the call (next, their next_NAME), then the
 * requests it completed recorded; an outcount of MPI_UNDEFINED (no active
 * request) as result -1. */
static int some_call(struct mw_call *c,
		     int (*next)(int, MPI_Request *, int *, int *, MPI_Status *),
		     int count, MPI_Request reqs[], int *outcount, int indices[],
		     MPI_Status statuses[])
{
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs, count, small);
	MPI_Status sst[SMALL_REQS];
	MPI_Status *st = saved ? statuses_for(statuses, count, sst) : statuses;
	int rc = next(count, reqs, outcount, indices, st);
	int done = rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED ?
		*outcount : 0;

	some_args(c, rc, count, done, indices, saved, reqs, st);
	if (rc == MPI_SUCCESS && *outcount == MPI_UNDEFINED)
		c->arg[1] = -1;
	statuses_done(st, statuses, sst);
	if (saved != small)
		free(saved);
	return rc;
}

static int do_Waitsome(struct mw_call *c, int count, MPI_Request reqs[],
		       int *outcount, int indices[], MPI_Status statuses[])
{
	return some_call(c, next_Waitsome, count, reqs, outcount, indices,
			 statuses);
}

static int do_Testsome(struct mw_call *c, int count, MPI_Request reqs[],
		       int *outcount, int indices[], MPI_Status statuses[])
{
	return some_call(c, next_Testsome, count, reqs, outcount, indices,
			 statuses);
}

/* result: the flag; when set, every request completed (ARRAY as
 * Waitsome's, indices 0 .. count-1). */
static int do_Testall(struct mw_call *c, int count, MPI_Request reqs[],
		      int *flag, MPI_Status statuses[])
{
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs, count, small);
	MPI_Status sst[SMALL_REQS];
	MPI_Status *st = saved ? statuses_for(statuses, count, sst) : statuses;
	int rc = next_Testall(count, reqs, flag, st);
	int all = rc == MPI_SUCCESS && flag && *flag;

	some_args(c, rc, count, all ? count : 0, NULL, saved, reqs, st);
	c->arg[1] = all;
	statuses_done(st, statuses, sst);
	if (saved != small)
		free(saved);
	return rc;
}

/* Waitany and Testany: count, index (-1: none), req (0: none completed),
 * peer, tag, bytes. */
static void any_args(struct mw_call *c, int rc, int count, int done,
		     int index, const MPI_Request *saved, MPI_Request *reqs,
		     const MPI_Status *st)
{
	struct mw_req q;
	int64_t peer = PEER_NULL, tag = 0, bytes = 0, rid = 0;

	if (rc == MPI_SUCCESS && done && saved && index != MPI_UNDEFINED &&
	    index >= 0 && index < count) {
		mw_req_take(saved[index], &reqs[index], MW_REQ_COMPLETE, &q);
		req_outcome(&q, st, &peer, &tag, &bytes);
		rid = q.id;
	}
	set_args(c, count, rc == MPI_SUCCESS && done &&
		 index != MPI_UNDEFINED ? index : -1, rid, peer, tag, bytes);
}

static int do_Waitany(struct mw_call *c, int count, MPI_Request reqs_in[],
		      int *index, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs_in, count, small);
	int rc = next_Waitany(count, reqs_in, index, st);

	any_args(c, rc, count, 1, rc == MPI_SUCCESS ? *index : MPI_UNDEFINED,
		 saved, reqs_in, st);
	if (saved != small)
		free(saved);
	return rc;
}

static int do_Testany(struct mw_call *c, int count, MPI_Request reqs[],
		      int *index, int *flag, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request small[SMALL_REQS], *saved = reqs_copy(reqs, count, small);
	int rc = next_Testany(count, reqs, index, flag, st);

	any_args(c, rc, count, rc == MPI_SUCCESS && *flag,
		 rc == MPI_SUCCESS ? *index : MPI_UNDEFINED, saved, reqs, st);
	if (saved != small)
		free(saved);
	return rc;
}

static int do_Test(struct mw_call *c, MPI_Request *req, int *flag,
		   MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	struct mw_req q;
	int64_t peer, tag, bytes;
	int rc = next_Test(req, flag, st), done = rc == MPI_SUCCESS && *flag;

	mw_req_take(r, req, done ? MW_REQ_COMPLETE : MW_REQ_PEEK, &q);
	req_outcome(&q, done ? st : NULL, &peer, &tag, &bytes);
	set_args(c, q.id, rc == MPI_SUCCESS ? *flag : 0, peer, tag,
		 q.id ? q.comm : -1, bytes);
	return rc;
}

/* Like Test, without completing: req, result, peer, tag, comm, bytes. */
static int do_Request_get_status(struct mw_call *c, MPI_Request r, int *flag,
				 MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Request_get_status(r, flag, st);
	int done = rc == MPI_SUCCESS && *flag;
	struct mw_req q;
	int64_t peer, tag, bytes;

	mw_req_take(r, NULL, MW_REQ_PEEK, &q);
	req_outcome(&q, done ? st : NULL, &peer, &tag, &bytes);
	set_args(c, q.id, rc == MPI_SUCCESS ? *flag : 0, peer, tag,
		 q.id ? q.comm : -1, bytes);
	return rc;
}

/* req, kind: the request stays until a completion or a free takes it. */
static int do_Cancel(struct mw_call *c, MPI_Request *req)
{
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	int rc = next_Cancel(req);
	struct mw_req q;

	mw_req_take(r, req, MW_REQ_PEEK, &q);
	set_args(c, q.id, q.kind, 0, 0, 0, 0);
	return rc;
}

/* req, kind: the request is gone for the application (an active one
 * completes unseen). */
static int do_Request_free(struct mw_call *c, MPI_Request *req)
{
	MPI_Request r = req ? *req : MPI_REQUEST_NULL;
	int rc = next_Request_free(req);
	struct mw_req q;

	mw_req_take(r, req, rc == MPI_SUCCESS ? MW_REQ_FREE : MW_REQ_PEEK, &q);
	set_args(c, q.id, q.kind, 0, 0, 0, 0);
	return rc;
}

static int do_Test_cancelled(struct mw_call *c, const MPI_Status *status,
			     int *flag)
{
	int rc = next_Test_cancelled(status, flag);

	set_args(c, rc == MPI_SUCCESS && flag ? *flag : 0, 0, 0, 0, 0, 0);
	return rc;
}

static int do_Probe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		    MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Probe(source, tag, comm, st);

	probe_args(c, rc, 1, source, tag, comm, st, 0, NULL);
	return rc;
}

static int do_Iprobe(struct mw_call *c, int source, int tag, MPI_Comm comm,
		     int *flag, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_Iprobe(source, tag, comm, flag, st);
	int matched = rc == MPI_SUCCESS && flag && *flag;

	probe_args(c, rc, matched, source, tag, comm, st, matched, NULL);
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

	mw_coll_rooted(c, type_bytes(type, count), root, comm, 0);
	return rc;
}

static int do_Reduce(struct mw_call *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype type, MPI_Op op, int root,
		     MPI_Comm comm)
{
	int rc = next_Reduce(sbuf, rbuf, count, type, op, root, comm);

	mw_coll_rooted(c, type_bytes(type, count), root, comm, 0);
	return rc;
}

static int do_Allreduce(struct mw_call *c, const void *sbuf, void *rbuf,
			int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Allreduce(sbuf, rbuf, count, type, op, comm);

	mw_coll_plain(c, type_bytes(type, count), comm, 0);
	return rc;
}

static int do_Gather(struct mw_call *c, const void *sbuf, int scount,
		     MPI_Datatype stype, void *rbuf, int rcount,
		     MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root,
			     comm);

	mw_coll_gather(c, sbuf, scount, stype, rcount, rtype, root, comm, 0);
	return rc;
}

static int do_Gatherv(struct mw_call *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, const int rcounts[],
		      const int displs[], MPI_Datatype rtype, int root,
		      MPI_Comm comm)
{
	int rc = next_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
			      root, comm);

	mw_coll_gatherv(c, sbuf, scount, stype, rcounts, rtype, root, comm, 0);
	return rc;
}

static int do_Scatter(struct mw_call *c, const void *sbuf, int scount,
		      MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root,
			      comm);

	mw_coll_scatter(c, scount, stype, rbuf, rcount, rtype, root, comm, 0);
	return rc;
}

static int do_Scatterv(struct mw_call *c, const void *sbuf,
		       const int scounts[], const int displs[],
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int rc = next_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount,
			       rtype, root, comm);

	mw_coll_scatterv(c, scounts, stype, rbuf, rcount, rtype, root, comm, 0);
	return rc;
}

static int do_Allgather(struct mw_call *c, const void *sbuf, int scount,
			MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);

	mw_coll_allgather(c, sbuf, scount, stype, rcount, rtype, comm, 0);
	return rc;
}

static int do_Allgatherv(struct mw_call *c, const void *sbuf, int scount,
			 MPI_Datatype stype, void *rbuf, const int rcounts[],
			 const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs,
				 rtype, comm);

	mw_coll_allgatherv(c, sbuf, scount, stype, rcounts, rtype, comm, 0);
	return rc;
}

static int do_Alltoall(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, void *rbuf, int rcount,
		       MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);

	mw_coll_allgather(c, sbuf, scount, stype, rcount, rtype, comm, 0);
	return rc;
}

static int do_Alltoallv(struct mw_call *c, const void *sbuf,
			const int scounts[], const int sdispls[],
			MPI_Datatype stype, void *rbuf, const int rcounts[],
			const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts,
				rdispls, rtype, comm);

	mw_coll_alltoallv(c, sbuf, scounts, NULL, stype, rcounts, NULL, rtype,
			  comm, 0);
	return rc;
}

static int do_Reduce_scatter(struct mw_call *c, const void *sbuf, void *rbuf,
			     const int rcounts[], MPI_Datatype type,
			     MPI_Op op, MPI_Comm comm)
{
	int rc = next_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);

	mw_coll_reduce_scatter(c, rcounts, type, comm, 0);
	return rc;
}

static int do_Scan(struct mw_call *c, const void *sbuf, void *rbuf, int count,
		   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Scan(sbuf, rbuf, count, type, op, comm);

	mw_coll_plain(c, type_bytes(type, count), comm, 0);
	return rc;
}

static int do_Exscan(struct mw_call *c, const void *sbuf, void *rbuf,
		     int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	int rc = next_Exscan(sbuf, rbuf, count, type, op, comm);

	mw_coll_plain(c, type_bytes(type, count), comm, 0);
	return rc;
}

/* ---- for the other wrapper files (mpi_io.c, mpi_ext.c, mpi_coll.c) ------- */

int64_t mw_comm_id(MPI_Comm comm, int rank, int64_t *wrank)
{
	return comm_lookup(comm, rank, wrank, NULL, NULL);
}

int64_t mw_comm_info(MPI_Comm comm, int *size, int *myrank)
{
	return comm_lookup(comm, 0, NULL, size, myrank);
}

int64_t mw_req_other(const MPI_Request *req, int64_t bytes)
{
	struct mw_req q = {.bytes = bytes, .comm = -1, .peer = MW_PEER_NULL,
			   .kind = MW_REQ_COLL, .active = 1};

	return req ? mw_req_start(*req, req, &q) : 0;
}

int64_t mw_req_io(const MPI_Request *req, int64_t bytes)
{
	struct mw_req q = {.bytes = bytes, .comm = -1, .peer = MW_PEER_NULL,
			   .kind = MW_REQ_IO, .active = 1};

	return req ? mw_req_start(*req, req, &q) : 0;
}

int mw_running(void)
{
	return mw_state == ST_RUNNING;
}

/* ---- the exported wrappers --------------------------------------------- */

/* MPI_NAME(): prologue, do_NAME(), epilogue, from the table */
#include "sensor/mpi_gen.h"
