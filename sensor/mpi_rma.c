/*
 * sensor/mpi_rma.c - the MPI sensor's one-sided (RMA) wrappers.
 *
 * sensor/mpi_rma.def lists the calls; sensor/mpi_gen.h expands it with the
 * prologue and epilogue of sensor/mpi_wrap.c. Each call records the
 * sensor's id of the window (1, 2 ... per process, in creation order), the
 * target as a world rank (-2: MPI_PROC_NULL, -3: unknown), bytes = origin
 * count x PMPI_Type_size_x (64-bit), the target displacement, and for the
 * request-based calls the request id (its completion records the same id).
 *
 * The window table maps a handle to its id and the world rank of each
 * member of its group (PMPI_Win_get_group, translated once at creation),
 * behind win_lock (never held with another lock).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

_Static_assert(sizeof(MPI_Win) <= sizeof(uint64_t), "MPI_Win handle");

#define WIN_TAB_MAX 65536u
#define PEER_NULL (-2)
#define PEER_UNKNOWN (-3)

#define MW_TABLE "sensor/mpi_rma.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

struct win_rec {
	int64_t id;
	int size;
	int *world;		/* world rank of member i; NULL: unknown */
};

static pthread_mutex_t win_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *win_tab;
static int64_t win_next = 1;

static uint64_t win_key(MPI_Win w)
{
	uint64_t k = 0;

	memcpy(&k, &w, sizeof(w));
	return k;
}

/* The world ranks of w's group, allocated (*n: its size); NULL when they
 * cannot be had. */
static int *win_members(MPI_Win w, int *n)
{
	MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
	int *in = NULL, *out = NULL;

	*n = 0;
	if (PMPI_Win_get_group(w, &g) != MPI_SUCCESS)
		return NULL;
	if (PMPI_Group_size(g, n) != MPI_SUCCESS || *n <= 0 ||
	    PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS)
		goto done;
	in = malloc((size_t)*n * sizeof(int));
	out = malloc((size_t)*n * sizeof(int));
	if (!in || !out)
		goto fail;
	for (int i = 0; i < *n; i++)
		in[i] = i;
	if (PMPI_Group_translate_ranks(g, *n, in, wg, out) != MPI_SUCCESS)
		goto fail;
	goto done;
fail:
	free(out);
	out = NULL;
done:
	free(in);
	if (wg != MPI_GROUP_NULL)
		PMPI_Group_free(&wg);
	PMPI_Group_free(&g);
	return out;
}

/* Register the window just made under a fresh id (returned; 0 when the
 * table is full or out of memory). */
static int64_t win_added(MPI_Win w)
{
	struct win_rec *r;
	int n = 0, *world = win_members(w, &n);
	int64_t id = 0;

	pthread_mutex_lock(&win_lock);
	if (!win_tab)
		win_tab = mw_tab_new(sizeof(struct win_rec), 8, WIN_TAB_MAX);
	if (win_tab && (r = mw_tab_get(win_tab, win_key(w)))) {
		free(r->world);
		mw_tab_del(win_tab, win_key(w));
	}
	r = win_tab ? mw_tab_put(win_tab, win_key(w), NULL) : NULL;
	if (r) {
		r->id = id = win_next++;
		r->size = world ? n : 0;
		r->world = world;
		world = NULL;
	}
	pthread_mutex_unlock(&win_lock);
	free(world);
	return id;
}

static void win_removed(uint64_t key)
{
	struct win_rec *r;

	pthread_mutex_lock(&win_lock);
	if (win_tab && (r = mw_tab_get(win_tab, key))) {
		free(r->world);
		mw_tab_del(win_tab, key);
	}
	pthread_mutex_unlock(&win_lock);
}

/* The id of w (0: unknown) and the world rank of its rank 'rank' into
 * *peer (may be NULL). */
static int64_t win_id(MPI_Win w, int rank, int64_t *peer)
{
	struct win_rec *r;
	int64_t id = 0, p = PEER_UNKNOWN;

	pthread_mutex_lock(&win_lock);
	r = win_tab ? mw_tab_get(win_tab, win_key(w)) : NULL;
	if (r) {
		id = r->id;
		if (rank >= 0 && rank < r->size && r->world[rank] != MPI_UNDEFINED)
			p = r->world[rank];
	}
	pthread_mutex_unlock(&win_lock);
	if (rank == MPI_PROC_NULL)
		p = PEER_NULL;
	if (peer)
		*peer = p;
	return id;
}

static int64_t type_bytes(MPI_Datatype t, int count)
{
	MPI_Count sz = 0;

	if (t == MPI_DATATYPE_NULL || count <= 0)
		return 0;
	if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || sz < 0 ||
	    sz == MPI_UNDEFINED)
		return 0;
	return (int64_t)count * (int64_t)sz;
}

/* ---- windows ------------------------------------------------------------- */

static void made_args(struct mw_call *c, int rc, MPI_Comm comm, MPI_Win *win,
		      int64_t size, int disp_unit)
{
	int64_t id = 0;

	if (rc == MPI_SUCCESS && win)
		id = win_added(*win);
	proto_args_set(c->arg, id, mw_comm_id(comm, 0, NULL), size, disp_unit,
		       0, 0);
}

static int do_Win_create(struct mw_call *c, void *base, MPI_Aint size,
			 int disp_unit, MPI_Info info, MPI_Comm comm,
			 MPI_Win *win)
{
	int rc = next_Win_create(base, size, disp_unit, info, comm, win);

	made_args(c, rc, comm, win, size, disp_unit);
	return rc;
}

static int do_Win_allocate(struct mw_call *c, MPI_Aint size, int disp_unit,
			   MPI_Info info, MPI_Comm comm, void *baseptr,
			   MPI_Win *win)
{
	int rc = next_Win_allocate(size, disp_unit, info, comm, baseptr, win);

	made_args(c, rc, comm, win, size, disp_unit);
	return rc;
}

static int do_Win_allocate_shared(struct mw_call *c, MPI_Aint size,
				  int disp_unit, MPI_Info info, MPI_Comm comm,
				  void *baseptr, MPI_Win *win)
{
	int rc = next_Win_allocate_shared(size, disp_unit, info, comm, baseptr,
					  win);

	made_args(c, rc, comm, win, size, disp_unit);
	return rc;
}

static int do_Win_create_dynamic(struct mw_call *c, MPI_Info info,
				 MPI_Comm comm, MPI_Win *win)
{
	int rc = next_Win_create_dynamic(info, comm, win);

	made_args(c, rc, comm, win, 0, 0);
	return rc;
}

static int do_Win_free(struct mw_call *c, MPI_Win *win)
{
	MPI_Win w = win ? *win : MPI_WIN_NULL;
	int64_t id = win_id(w, -1, NULL);
	int rc = next_Win_free(win);

	if (rc == MPI_SUCCESS && w != MPI_WIN_NULL)
		win_removed(win_key(w));
	proto_args_set(c->arg, id, 0, 0, 0, 0, 0);
	return rc;
}

/* ---- communication -------------------------------------------------------- */

/* win, peer, bytes, tdisp, a4, a5 */
static void op_args(struct mw_call *c, MPI_Win win, int target, int64_t bytes,
		    MPI_Aint disp, int64_t a4, int64_t a5)
{
	int64_t peer, id = win_id(win, target, &peer);

	proto_args_set(c->arg, id, peer, bytes, (int64_t)disp, a4, a5);
}

/* A request-based call's request id (kept for its completion). */
static int64_t op_req(int rc, const MPI_Request *req, int64_t bytes)
{
	return rc == MPI_SUCCESS ? mw_req_other(req, bytes) : 0;
}

static int do_Put(struct mw_call *c, const void *origin_addr, int origin_count,
		  MPI_Datatype origin_type, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_type, MPI_Win win)
{
	int rc = next_Put(origin_addr, origin_count, origin_type, target_rank,
			  target_disp, target_count, target_type, win);

	op_args(c, win, target_rank, type_bytes(origin_type, origin_count),
		target_disp, 0, 0);
	return rc;
}

static int do_Get(struct mw_call *c, void *origin_addr, int origin_count,
		  MPI_Datatype origin_type, int target_rank,
		  MPI_Aint target_disp, int target_count,
		  MPI_Datatype target_type, MPI_Win win)
{
	int rc = next_Get(origin_addr, origin_count, origin_type, target_rank,
			  target_disp, target_count, target_type, win);

	op_args(c, win, target_rank, type_bytes(origin_type, origin_count),
		target_disp, 0, 0);
	return rc;
}

static int do_Accumulate(struct mw_call *c, const void *origin_addr,
			 int origin_count, MPI_Datatype origin_type,
			 int target_rank, MPI_Aint target_disp,
			 int target_count, MPI_Datatype target_type,
			 MPI_Op op, MPI_Win win)
{
	int rc = next_Accumulate(origin_addr, origin_count, origin_type,
				 target_rank, target_disp, target_count,
				 target_type, op, win);

	op_args(c, win, target_rank, type_bytes(origin_type, origin_count),
		target_disp, 0, 0);
	return rc;
}

static int do_Get_accumulate(struct mw_call *c, const void *origin_addr,
			     int origin_count, MPI_Datatype origin_type,
			     void *result_addr, int result_count,
			     MPI_Datatype result_type, int target_rank,
			     MPI_Aint target_disp, int target_count,
			     MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
	int rc = next_Get_accumulate(origin_addr, origin_count, origin_type,
				     result_addr, result_count, result_type,
				     target_rank, target_disp, target_count,
				     target_type, op, win);

	op_args(c, win, target_rank, type_bytes(origin_type, origin_count),
		target_disp, type_bytes(result_type, result_count), 0);
	return rc;
}

static int do_Fetch_and_op(struct mw_call *c, const void *origin_addr,
			   void *result_addr, MPI_Datatype type,
			   int target_rank, MPI_Aint target_disp, MPI_Op op,
			   MPI_Win win)
{
	int rc = next_Fetch_and_op(origin_addr, result_addr, type, target_rank,
				   target_disp, op, win);

	op_args(c, win, target_rank, type_bytes(type, 1), target_disp, 0, 0);
	return rc;
}

static int do_Compare_and_swap(struct mw_call *c, const void *origin_addr,
			       const void *compare_addr, void *result_addr,
			       MPI_Datatype type, int target_rank,
			       MPI_Aint target_disp, MPI_Win win)
{
	int rc = next_Compare_and_swap(origin_addr, compare_addr, result_addr,
				       type, target_rank, target_disp, win);

	op_args(c, win, target_rank, type_bytes(type, 1), target_disp, 0, 0);
	return rc;
}

static int do_Rput(struct mw_call *c, const void *origin_addr,
		   int origin_count, MPI_Datatype origin_type,
		   int target_rank, MPI_Aint target_disp, int target_count,
		   MPI_Datatype target_type, MPI_Win win, MPI_Request *req)
{
	int rc = next_Rput(origin_addr, origin_count, origin_type, target_rank,
			   target_disp, target_count, target_type, win, req);
	int64_t bytes = type_bytes(origin_type, origin_count);

	op_args(c, win, target_rank, bytes, target_disp,
		op_req(rc, req, bytes), 0);
	return rc;
}

static int do_Rget(struct mw_call *c, void *origin_addr, int origin_count,
		   MPI_Datatype origin_type, int target_rank,
		   MPI_Aint target_disp, int target_count,
		   MPI_Datatype target_type, MPI_Win win, MPI_Request *req)
{
	int rc = next_Rget(origin_addr, origin_count, origin_type, target_rank,
			   target_disp, target_count, target_type, win, req);
	int64_t bytes = type_bytes(origin_type, origin_count);

	op_args(c, win, target_rank, bytes, target_disp,
		op_req(rc, req, bytes), 0);
	return rc;
}

static int do_Raccumulate(struct mw_call *c, const void *origin_addr,
			  int origin_count, MPI_Datatype origin_type,
			  int target_rank, MPI_Aint target_disp,
			  int target_count, MPI_Datatype target_type,
			  MPI_Op op, MPI_Win win, MPI_Request *req)
{
	int rc = next_Raccumulate(origin_addr, origin_count, origin_type,
				  target_rank, target_disp, target_count,
				  target_type, op, win, req);
	int64_t bytes = type_bytes(origin_type, origin_count);

	op_args(c, win, target_rank, bytes, target_disp,
		op_req(rc, req, bytes), 0);
	return rc;
}

static int do_Rget_accumulate(struct mw_call *c, const void *origin_addr,
			      int origin_count, MPI_Datatype origin_type,
			      void *result_addr, int result_count,
			      MPI_Datatype result_type, int target_rank,
			      MPI_Aint target_disp, int target_count,
			      MPI_Datatype target_type, MPI_Op op,
			      MPI_Win win, MPI_Request *req)
{
	int rc = next_Rget_accumulate(origin_addr, origin_count, origin_type,
				      result_addr, result_count, result_type,
				      target_rank, target_disp, target_count,
				      target_type, op, win, req);
	int64_t bytes = type_bytes(origin_type, origin_count);

	op_args(c, win, target_rank, bytes, target_disp,
		op_req(rc, req, bytes), type_bytes(result_type, result_count));
	return rc;
}

/* ---- synchronisation ------------------------------------------------------ */

/* win, then a1..a3 */
static void sync_args(struct mw_call *c, MPI_Win win, int64_t a1, int64_t a2,
		      int64_t a3)
{
	proto_args_set(c->arg, win_id(win, -1, NULL), a1, a2, a3, 0, 0);
}

/* win, world rank of target, then a2 a3 */
static void target_args(struct mw_call *c, MPI_Win win, int rank, int64_t a2,
			int64_t a3)
{
	int64_t peer, id = win_id(win, rank, &peer);

	proto_args_set(c->arg, id, peer, a2, a3, 0, 0);
}

static int64_t group_size(MPI_Group g)
{
	int n = 0;

	if (g == MPI_GROUP_NULL || PMPI_Group_size(g, &n) != MPI_SUCCESS)
		return -1;
	return n;
}

static int do_Win_fence(struct mw_call *c, int assert, MPI_Win win)
{
	int rc = next_Win_fence(assert, win);

	sync_args(c, win, assert, 0, 0);
	return rc;
}

static int do_Win_post(struct mw_call *c, MPI_Group group, int assert,
		       MPI_Win win)
{
	int rc = next_Win_post(group, assert, win);

	sync_args(c, win, assert, group_size(group), 0);
	return rc;
}

static int do_Win_start(struct mw_call *c, MPI_Group group, int assert,
			MPI_Win win)
{
	int rc = next_Win_start(group, assert, win);

	sync_args(c, win, assert, group_size(group), 0);
	return rc;
}

static int do_Win_complete(struct mw_call *c, MPI_Win win)
{
	int rc = next_Win_complete(win);

	sync_args(c, win, 0, 0, 0);
	return rc;
}

static int do_Win_wait(struct mw_call *c, MPI_Win win)
{
	int rc = next_Win_wait(win);

	sync_args(c, win, 0, 0, 0);
	return rc;
}

static int do_Win_lock(struct mw_call *c, int lock_type, int rank, int assert,
		       MPI_Win win)
{
	int rc = next_Win_lock(lock_type, rank, assert, win);

	target_args(c, win, rank, lock_type, assert);
	return rc;
}

static int do_Win_unlock(struct mw_call *c, int rank, MPI_Win win)
{
	int rc = next_Win_unlock(rank, win);

	target_args(c, win, rank, 0, 0);
	return rc;
}

static int do_Win_lock_all(struct mw_call *c, int assert, MPI_Win win)
{
	int rc = next_Win_lock_all(assert, win);

	sync_args(c, win, assert, 0, 0);
	return rc;
}

static int do_Win_unlock_all(struct mw_call *c, MPI_Win win)
{
	int rc = next_Win_unlock_all(win);

	sync_args(c, win, 0, 0, 0);
	return rc;
}

static int do_Win_flush(struct mw_call *c, int rank, MPI_Win win)
{
	int rc = next_Win_flush(rank, win);

	target_args(c, win, rank, 0, 0);
	return rc;
}

static int do_Win_flush_all(struct mw_call *c, MPI_Win win)
{
	int rc = next_Win_flush_all(win);

	sync_args(c, win, 0, 0, 0);
	return rc;
}

static int do_Win_flush_local(struct mw_call *c, int rank, MPI_Win win)
{
	int rc = next_Win_flush_local(rank, win);

	target_args(c, win, rank, 0, 0);
	return rc;
}

static int do_Win_flush_local_all(struct mw_call *c, MPI_Win win)
{
	int rc = next_Win_flush_local_all(win);

	sync_args(c, win, 0, 0, 0);
	return rc;
}

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
