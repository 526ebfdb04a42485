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
 * The window table maps a handle to its id, the world rank of each member
 * of its group (PMPI_Win_get_group, translated once at creation) and the
 * regions attached to a dynamic window (base, size: Win_detach records the
 * size), behind its lock (struct mw_ids: never held with another lock).
 * Put_c and Get_c (MPI_VERSION >= 4) record the events of Put and Get.
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

/* A region attached to a dynamic window: its base and size. */
struct win_att {
	uintptr_t base;
	int64_t size;
};

struct win_rec {
	int64_t id;
	int size;
	int *world;		/* world rank of member i; NULL: unknown */
	struct win_att *att;	/* regions attached, not detached yet */
	size_t natt;
};

static void win_drop(void *rec)
{
	free(((struct win_rec *)rec)->world);
	free(((struct win_rec *)rec)->att);
}

static struct mw_ids wins = MW_IDS_INIT(struct win_rec, 8, WIN_TAB_MAX,
					win_drop);

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
	int n = 0, *world = win_members(w, &n);
	struct win_rec *r = mw_ids_add(&wins, MW_KEY(w));
	int64_t id = 0;

	if (r) {
		id = r->id;
		r->size = world ? n : 0;
		r->world = world;
		r->att = NULL;
		r->natt = 0;
		world = NULL;
	}
	mw_ids_unlock(&wins);
	free(world);
	return id;
}

/* The id of w (0: unknown) and the world rank of its rank 'rank' into
 * *peer (may be NULL). */
static int64_t win_id(MPI_Win w, int rank, int64_t *peer)
{
	struct win_rec *r;
	int64_t id = 0, p = PEER_UNKNOWN;

	r = mw_ids_get(&wins, MW_KEY(w));
	if (r) {
		id = r->id;
		if (rank >= 0 && rank < r->size && r->world[rank] != MPI_UNDEFINED)
			p = r->world[rank];
	}
	mw_ids_unlock(&wins);
	if (rank == MPI_PROC_NULL)
		p = PEER_NULL;
	if (peer)
		*peer = p;
	return id;
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
		mw_ids_del(&wins, MW_KEY(w));
	proto_args_set(c->arg, id, 0, 0, 0, 0, 0);
	return rc;
}

/* Remember the region attached at base (size >= 0), or take it back
 * (size < 0): the size it was attached with, -1 when unknown. Attach
 * regions are few per window (the standard's own use: a handful). */
static int64_t win_region(MPI_Win w, const void *base, int64_t size)
{
	struct win_rec *r = mw_ids_get(&wins, MW_KEY(w));
	int64_t found = -1;
	struct win_att *a;

	for (size_t i = 0; r && size < 0 && i < r->natt; i++)
		if (r->att[i].base == (uintptr_t)base) {
			found = r->att[i].size;
			r->att[i] = r->att[--r->natt];
			break;
		}
	if (r && size >= 0 &&
	    (a = realloc(r->att, (r->natt + 1) * sizeof(*a)))) {
		r->att = a;
		a[r->natt++] = (struct win_att){(uintptr_t)base, size};
	}
	mw_ids_unlock(&wins);
	return found;
}

static int do_Win_attach(struct mw_call *c, MPI_Win win, void *base,
			 MPI_Aint size)
{
	int rc = next_Win_attach(win, base, size);

	if (rc == MPI_SUCCESS)
		win_region(win, base, size);
	proto_args_set(c->arg, win_id(win, -1, NULL), size, 0, 0, 0, 0);
	return rc;
}

static int do_Win_detach(struct mw_call *c, MPI_Win win, const void *base)
{
	int rc = next_Win_detach(win, base);
	int64_t size = rc == MPI_SUCCESS ? win_region(win, base, -1) : -1;

	proto_args_set(c->arg, win_id(win, -1, NULL), size, 0, 0, 0, 0);
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

/* Put and Get, Rput and Rget: the same arguments (BUF: the origin
 * buffer's type), the request-based ones with their request. */
#define RMA_XFER(name, BUF) RMA_XFER_T(name, BUF, int)
/* CNT: the counts' type (MPI_Count for the MPI-4 large-count forms) */
#define RMA_XFER_T(name, BUF, CNT) \
static int do_##name(struct mw_call *c, BUF *origin_addr, CNT origin_count, \
		     MPI_Datatype origin_type, int target_rank, \
		     MPI_Aint target_disp, CNT target_count, \
		     MPI_Datatype target_type, MPI_Win win) \
{ \
	int rc = next_##name(origin_addr, origin_count, origin_type, \
			     target_rank, target_disp, target_count, \
			     target_type, win); \
\
	op_args(c, win, target_rank, \
		mw_type_bytes(origin_type, origin_count), target_disp, 0, 0); \
	return rc; \
}
#define RMA_RXFER(name, BUF) \
static int do_##name(struct mw_call *c, BUF *origin_addr, int origin_count, \
		     MPI_Datatype origin_type, int target_rank, \
		     MPI_Aint target_disp, int target_count, \
		     MPI_Datatype target_type, MPI_Win win, MPI_Request *req) \
{ \
	int rc = next_##name(origin_addr, origin_count, origin_type, \
			     target_rank, target_disp, target_count, \
			     target_type, win, req); \
	int64_t bytes = mw_type_bytes(origin_type, origin_count); \
\
	op_args(c, win, target_rank, bytes, target_disp, \
		op_req(rc, req, bytes), 0); \
	return rc; \
}
RMA_XFER(Put, const void)
RMA_XFER(Get, void)
#if MPI_VERSION >= 4
RMA_XFER_T(Put_c, const void, MPI_Count)
RMA_XFER_T(Get_c, void, MPI_Count)
#endif
RMA_RXFER(Rput, const void)
RMA_RXFER(Rget, void)

static int do_Accumulate(struct mw_call *c, const void *origin_addr,
			 int origin_count, MPI_Datatype origin_type,
			 int target_rank, MPI_Aint target_disp,
			 int target_count, MPI_Datatype target_type,
			 MPI_Op op, MPI_Win win)
{
	int rc = next_Accumulate(origin_addr, origin_count, origin_type,
				 target_rank, target_disp, target_count,
				 target_type, op, win);

	op_args(c, win, target_rank, mw_type_bytes(origin_type, origin_count),
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

	op_args(c, win, target_rank, mw_type_bytes(origin_type, origin_count),
		target_disp, mw_type_bytes(result_type, result_count), 0);
	return rc;
}

static int do_Fetch_and_op(struct mw_call *c, const void *origin_addr,
			   void *result_addr, MPI_Datatype type,
			   int target_rank, MPI_Aint target_disp, MPI_Op op,
			   MPI_Win win)
{
	int rc = next_Fetch_and_op(origin_addr, result_addr, type, target_rank,
				   target_disp, op, win);

	op_args(c, win, target_rank, mw_type_bytes(type, 1), target_disp, 0, 0);
	return rc;
}

static int do_Compare_and_swap(struct mw_call *c, const void *origin_addr,
			       const void *compare_addr, void *result_addr,
			       MPI_Datatype type, int target_rank,
			       MPI_Aint target_disp, MPI_Win win)
{
	int rc = next_Compare_and_swap(origin_addr, compare_addr, result_addr,
				       type, target_rank, target_disp, win);

	op_args(c, win, target_rank, mw_type_bytes(type, 1), target_disp, 0, 0);
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
	int64_t bytes = mw_type_bytes(origin_type, origin_count);

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
	int64_t bytes = mw_type_bytes(origin_type, origin_count);

	op_args(c, win, target_rank, bytes, target_disp,
		op_req(rc, req, bytes), mw_type_bytes(result_type, result_count));
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

static int do_Win_lock(struct mw_call *c, int lock_type, int rank, int assert,
		       MPI_Win win)
{
	int rc = next_Win_lock(lock_type, rank, assert, win);

	target_args(c, win, rank, lock_type, assert);
	return rc;
}

static int do_Win_lock_all(struct mw_call *c, int assert, MPI_Win win)
{
	int rc = next_Win_lock_all(assert, win);

	sync_args(c, win, assert, 0, 0);
	return rc;
}

/* The calls on a window and one target rank, and on a window alone. */
#define WIN_TARGET(name) \
static int do_##name(struct mw_call *c, int rank, MPI_Win win) \
{ \
	int rc = next_##name(rank, win); \
\
	target_args(c, win, rank, 0, 0); \
	return rc; \
}
#define WIN_ONLY(name) \
static int do_##name(struct mw_call *c, MPI_Win win) \
{ \
	int rc = next_##name(win); \
\
	sync_args(c, win, 0, 0, 0); \
	return rc; \
}
WIN_TARGET(Win_unlock)
WIN_TARGET(Win_flush)
WIN_TARGET(Win_flush_local)
WIN_ONLY(Win_complete)
WIN_ONLY(Win_wait)
WIN_ONLY(Win_unlock_all)
WIN_ONLY(Win_flush_all)
WIN_ONLY(Win_flush_local_all)
WIN_ONLY(Win_sync)

/* the flag it returned (-1: failed) */
static int do_Win_test(struct mw_call *c, MPI_Win win, int *flag)
{
	int rc = next_Win_test(win, flag);

	sync_args(c, win, rc == MPI_SUCCESS && flag ? *flag != 0 : -1, 0, 0);
	return rc;
}

/* The segment of rank's (world rank: peer) in a shared memory window:
 * its size and displacement unit (-1 when the call failed). */
static int do_Win_shared_query(struct mw_call *c, MPI_Win win, int rank,
			       MPI_Aint *size, int *disp_unit, void *baseptr)
{
	int rc = next_Win_shared_query(win, rank, size, disp_unit, baseptr);
	int ok = rc == MPI_SUCCESS && size && disp_unit;

	target_args(c, win, rank, ok ? *size : -1, ok ? *disp_unit : -1);
	return rc;
}

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
