/*
 * manager/export/export_otf2.c - OTF2 archive through libotf2 (Vampir, otf2-print):
 * a location per (process, thread), a region per event type (Enter/Leave),
 * MPI point-to-point and non-blocking records, collectives, a metric for
 * memory samples, clock properties in ns. The points go through the external
 * sort ordered by location then time, so one event writer is open at a time
 * (memory: one OTF2 chunk). Mapping: docs/modules/export-viz.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/post/grow.h"
#include "manager/export/export_viz.h"
#include "manager/post/reqtab.h"
#include "manager/mgr.h"
#include "proto/error.h"

#ifndef HAVE_OTF2

int mgr_export_otf2(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return mgr_fail(PROTO_E_ARG, "OTF2 support was not built (otf2-config "
			"not found by configure)");
}

#else

#include <otf2/otf2.h>

/* MPI_MODE_* of an MPI_File_open's flags (the same values in Open MPI and
 * MPICH; the manager is built without MPI) */
#define MPI_AMODE_CREATE 1
#define MPI_AMODE_RDONLY 2
#define MPI_AMODE_WRONLY 4

/* location first, then the time order of mgr_viz_cmp_time */
static int cmp_loc(const struct viz_pt *x, const struct viz_pt *y)
{
	int c = MGR_CMP(x->loc, y->loc);

	return c ? c : mgr_viz_cmp_time(x, y);
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType ft,
				OTF2_LocationRef loc, void *caller, bool final)
{
	return OTF2_FLUSH;
}

/* no post-flush callback: no BufferFlush records in the trace */
static OTF2_FlushCallbacks flush_cb = {pre_flush, NULL};

static int coll_op(unsigned type, OTF2_CollectiveOp *op)
{
	switch (type) {
	case PROTO_EV_MPI_BARRIER: *op = OTF2_COLLECTIVE_OP_BARRIER; return 1;
	case PROTO_EV_MPI_BCAST: *op = OTF2_COLLECTIVE_OP_BCAST; return 1;
	case PROTO_EV_MPI_REDUCE: *op = OTF2_COLLECTIVE_OP_REDUCE; return 1;
	case PROTO_EV_MPI_ALLREDUCE: *op = OTF2_COLLECTIVE_OP_ALLREDUCE; return 1;
	case PROTO_EV_MPI_GATHER: *op = OTF2_COLLECTIVE_OP_GATHER; return 1;
	case PROTO_EV_MPI_GATHERV: *op = OTF2_COLLECTIVE_OP_GATHERV; return 1;
	case PROTO_EV_MPI_SCATTER: *op = OTF2_COLLECTIVE_OP_SCATTER; return 1;
	case PROTO_EV_MPI_SCATTERV: *op = OTF2_COLLECTIVE_OP_SCATTERV; return 1;
	case PROTO_EV_MPI_ALLGATHER: *op = OTF2_COLLECTIVE_OP_ALLGATHER; return 1;
	case PROTO_EV_MPI_ALLGATHERV: *op = OTF2_COLLECTIVE_OP_ALLGATHERV; return 1;
	case PROTO_EV_MPI_ALLTOALL: *op = OTF2_COLLECTIVE_OP_ALLTOALL; return 1;
	case PROTO_EV_MPI_ALLTOALLV: *op = OTF2_COLLECTIVE_OP_ALLTOALLV; return 1;
	case PROTO_EV_MPI_REDUCE_SCATTER: *op = OTF2_COLLECTIVE_OP_REDUCE_SCATTER; return 1;
	case PROTO_EV_MPI_SCAN: *op = OTF2_COLLECTIVE_OP_SCAN; return 1;
	case PROTO_EV_MPI_EXSCAN: *op = OTF2_COLLECTIVE_OP_EXSCAN; return 1;
	case PROTO_EV_MPI_ALLTOALLW: *op = OTF2_COLLECTIVE_OP_ALLTOALLW; return 1;
	case PROTO_EV_MPI_REDUCE_SCATTER_BLOCK:
		*op = OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
		return 1;
	default:
		/* a nonblocking collective: its blocking form's operation (the
		 * neighbourhood ones have none in OTF2: regions only) */
		return proto_ev_coll2(type) == PROTO_COLL2_NB ?
			coll_op(proto_ev_icoll(type), op) : 0;
	}
}

/* A one-sided call: the run of proto_ev_rma, and the dynamic window and
 * query calls after it (MPI_Win_attach .. MPI_Win_shared_query). */
static int rma_type(unsigned type)
{
	return proto_ev_rma(type) ||
	       (type >= PROTO_EV_MPI_WIN_ATTACH && type <= PROTO_EV_MPI_WIN_SHARED_QUERY);
}

static OTF2_RegionRole region_role(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);
	OTF2_CollectiveOp op;

	if (type == PROTO_EV_MPI_BARRIER)
		return OTF2_REGION_ROLE_BARRIER;
	if (coll_op(type, &op)) {
		switch (op) {
		case OTF2_COLLECTIVE_OP_BCAST:
		case OTF2_COLLECTIVE_OP_SCATTER:
		case OTF2_COLLECTIVE_OP_SCATTERV:
			return OTF2_REGION_ROLE_COLL_ONE2ALL;
		case OTF2_COLLECTIVE_OP_REDUCE:
		case OTF2_COLLECTIVE_OP_GATHER:
		case OTF2_COLLECTIVE_OP_GATHERV:
			return OTF2_REGION_ROLE_COLL_ALL2ONE;
		case OTF2_COLLECTIVE_OP_SCAN:
		case OTF2_COLLECTIVE_OP_EXSCAN:
			return OTF2_REGION_ROLE_COLL_OTHER;
		default:
			return OTF2_REGION_ROLE_COLL_ALL2ALL;
		}
	}
	if (type >= PROTO_EV_MPI_SEND && type <= PROTO_EV_MPI_IPROBE)
		return OTF2_REGION_ROLE_POINT2POINT;
	if ((info && info->category == PROTO_CAT_LIBC) || proto_ev_mpiio(type))
		return OTF2_REGION_ROLE_FILE_IO;
	if (rma_type(type))
		return OTF2_REGION_ROLE_RMA;
	return OTF2_REGION_ROLE_FUNCTION;
}

static OTF2_Paradigm paradigm(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	switch (info ? info->category : PROTO_CAT_TRACER) {
	case PROTO_CAT_MPI: return OTF2_PARADIGM_MPI;
	case PROTO_CAT_TRACER: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
	default: return OTF2_PARADIGM_USER;
	}
}

/* MPI-IO: an I/O handle per file a process opened (its index is the
 * OTF2 IoHandle ref), an IoRegularFile per path (index: IoFile ref), and
 * the nonblocking operations issued and not completed yet. */
#define IO_MAX 65536u
#define IO_SPLIT (1ull << 61)	/* matching ids: split collectives */
#define IO_NB (1ull << 62)	/* nonblocking (| req) */
/* what a pending request (struct otf2's pend) is */
enum { PEND_IO = 1, PEND_COLL = 2 };

struct io_handle {
	uint32_t proc;		/* process index (viz_scan) */
	int64_t file;		/* the sensor's file id in that process */
	uint32_t path;		/* index in paths */
};

/* A one-sided operation not completed yet: completed at its window's next
 * synchronisation on that location (fence, complete, unlock(_all),
 * flush(_all, _local, _local_all), free). */
struct rma_pending {
	uint32_t loc, win;
	int64_t peer;
	uint64_t match;
};

struct otf2 {
	OTF2_Archive *ar;
	const struct viz_scan *s;
	uint64_t *nev;		/* events written per location */
	uint32_t region[PROTO_EV__COUNT];	/* event type -> region id (dense from 0) */
	uint32_t strings;	/* next string id */
	OTF2_GlobalDefWriter *g;
	int err;
	struct io_handle *io;
	size_t nio;
	char **paths;
	size_t npaths;
	struct mgr_reqtab pend;		/* (location, request) -> its IoHandle
					 * (kind PEND_IO): nonblocking I/O not
					 * completed yet; or (PEND_COLL) a
					 * nonblocking collective's End */
	struct io_handle *win;	/* windows: proc, id (file) -> RmaWin ref */
	size_t nwin;
	struct rma_pending *rpend;
	size_t nrpend, caprpend;
};

static uint32_t str(struct otf2 *o, const char *s)
{
	uint32_t id = o->strings++;

	if (OTF2_GlobalDefWriter_WriteString(o->g, id, s) != OTF2_SUCCESS)
		o->err = 1;
	return id;
}

#define OK(call) do { if ((call) != OTF2_SUCCESS) o->err = 1; } while (0)

/* OTF2 communicator of a job-wide communicator name (manager/post/comms.h):
 * 0 for MPI_COMM_WORLD, else 1 + its index in the scan's list (world when
 * the list was full) */
static uint32_t comm_ref(const struct viz_scan *s, int64_t comm)
{
	if (comm == 0)
		return 0;
	for (size_t i = 0; i < s->ncomms; i++)
		if (s->comm_ids[i] == comm)
			return (uint32_t)i + 1;
	return 0;
}

static const struct viz_scan *member_scan;

/* members by name, then side (an intercommunicator's group), then their
 * rank in the communicator, then world rank */
static int cmp_member(const void *pa, const void *pb)
{
	const struct viz_member *a = pa, *b = pb;
	int32_t ra = member_scan->procs[a->proc].rank, rb = member_scan->procs[b->proc].rank;

	int c;

	if ((c = MGR_CMP(a->name, b->name)) || (c = MGR_CMP(a->side, b->side)) ||
	    (c = MGR_CMP(a->myrank, b->myrank)))
		return c;
	return MGR_CMP(ra, rb);
}

/* Define the communicators the collectives used: each named one over its
 * members (in their rank order; world ranks index group 0's locations), an
 * intercommunicator as an InterComm of its two groups (told apart by side),
 * the others (unnamed, or without members seen) over all ranks, as their
 * membership is not known. */
static void write_comms(struct otf2 *o, uint64_t *members)
{
	const struct viz_scan *s = o->s;
	uint32_t next_group = 2;	/* 0, 1: world's */

	member_scan = s;
	qsort(s->members, s->nmembers, sizeof(*s->members), cmp_member);
	for (size_t i = 0; i < s->ncomms; i++) {
		int64_t name = s->comm_ids[i];
		uint32_t group = 1, n = 0, split = 0;
		size_t lo = 0, hi = s->nmembers;
		char label[96];

		while (lo < hi) {	/* the first member of name */
			size_t mid = (lo + hi) / 2;

			if (s->members[mid].name < name)
				lo = mid + 1;
			else
				hi = mid;
		}
		int sides = 0;
		int64_t side0 = lo < s->nmembers && s->members[lo].name == name ?
				s->members[lo].side : -1;
		for (size_t k = lo; k < s->nmembers && s->members[k].name == name; k++) {
			int32_t r = s->procs[s->members[k].proc].rank;

			if (k == lo || s->members[k].side != s->members[k - 1].side) {
				sides++;
				split = n;
			}
			if (r >= 0 && r <= s->max_rank && n <= (uint32_t)s->max_rank)
				members[n++] = (uint64_t)r;
		}
		if (name > 0 && side0 >= 0 && sides == 2 &&
		    split > 0 && split < n) {
			uint32_t ga = next_group++, gb = next_group++;

			snprintf(label, sizeof(label), "intercomm %" PRId64 " (%" PRIu32
				 " + %" PRIu32 " ranks)", name, split, n - split);
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, ga, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, split, members));
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, gb, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, n - split, members + split));
			OK(OTF2_GlobalDefWriter_WriteInterComm(o->g, (uint32_t)i + 1,
				str(o, label), ga, gb, OTF2_UNDEFINED_COMM,
				OTF2_COMM_FLAG_NONE));
			continue;
		}
		if (name > 0 && n && side0 < 0) {
			group = next_group++;
			snprintf(label, sizeof(label), "comm %" PRId64 " (%" PRIu32 " ranks)",
				 name, n);
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, group, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, n, members));
		} else {
			snprintf(label, sizeof(label), "%s %" PRId64 " (members unknown)",
				 name == -3 ? "MPI_COMM_SELF" : "comm", name);
		}
		OK(OTF2_GlobalDefWriter_WriteComm(o->g, (uint32_t)i + 1, str(o, label),
			group, 0, OTF2_COMM_FLAG_NONE));
	}
}

/* ---- MPI-IO ----------------------------------------------------------------- */

/* Index of path in o->paths, added if new; UINT32_MAX out of memory. */
static uint32_t io_path(struct otf2 *o, const char *path)
{
	char **n;

	for (size_t i = 0; i < o->npaths; i++)
		if (!strcmp(o->paths[i], path))
			return (uint32_t)i;
	if (o->npaths >= IO_MAX ||
	    !(n = realloc(o->paths, (o->npaths + 1) * sizeof(*n))))
		return UINT32_MAX;
	o->paths = n;
	if (!(n[o->npaths] = strdup(path)))
		return UINT32_MAX;
	return (uint32_t)o->npaths++;
}

/* ---- one-sided ------------------------------------------------------------ */

static int rma_made(unsigned type)
{
	return type == PROTO_EV_MPI_WIN_CREATE || type == PROTO_EV_MPI_WIN_ALLOCATE ||
	       type == PROTO_EV_MPI_WIN_ALLOCATE_SHARED ||
	       type == PROTO_EV_MPI_WIN_CREATE_DYNAMIC;
}

/* Remember window id of stream's process (its index is its RmaWin ref):
 * 0, or PROTO_E_NOMEM. */
static int win_add(struct otf2 *o, uint64_t stream, int64_t id)
{
	int64_t proc = mgr_map_get(&o->s->procmap, stream, 0);
	struct io_handle *n;

	if (proc < 0 || o->nwin >= IO_MAX)
		return 0;
	if (!(n = realloc(o->win, (o->nwin + 1) * sizeof(*n))))
		return PROTO_E_NOMEM;
	o->win = n;
	n[o->nwin++] = (struct io_handle){(uint32_t)proc, id, 0};
	return 0;
}

/* The index in v (n handles) of id of the process of location loc (the
 * latest made of that id), UINT32_MAX when unknown. */
static uint32_t handle_of(const struct otf2 *o, const struct io_handle *v, size_t n,
			  uint32_t loc, int64_t id)
{
	uint32_t proc = o->s->threads[loc].proc;

	for (size_t i = n; i-- > 0;)
		if (v[i].proc == proc && v[i].file == id)
			return (uint32_t)i;
	return UINT32_MAX;
}

static void rma_pend(struct otf2 *o, uint32_t loc, uint32_t win, int64_t peer,
		     uint64_t match)
{
	if (o->nrpend >= IO_MAX ||
	    mgr_grow((void **)&o->rpend, &o->caprpend, o->nrpend + 1, sizeof(*o->rpend)))
		return;		/* its completion is not written */
	o->rpend[o->nrpend++] = (struct rma_pending){loc, win, peer, match};
}

/* Complete the pending operations of win on loc (to peer only, if >= 0). */
static void rma_complete(struct otf2 *o, OTF2_EvtWriter *w, OTF2_TimeStamp t,
			 uint32_t loc, uint32_t win, int64_t peer)
{
	for (size_t i = 0; i < o->nrpend;) {
		struct rma_pending *q = &o->rpend[i];

		if (q->loc == loc && q->win == win && (peer < 0 || q->peer == peer)) {
			OK(OTF2_EvtWriter_RmaOpCompleteBlocking(w, NULL, t, win, q->match));
			*q = o->rpend[--o->nrpend];
		} else {
			i++;
		}
	}
}

/* The one-sided calls OTF2 brackets with RmaCollectiveBegin (at the
 * enter) and RmaCollectiveEnd (at the leave): window construction and
 * destruction, fence, post, start, complete, wait; 0 for the others. */
static int rma_coll(unsigned type, OTF2_CollectiveOp *op, OTF2_RmaSyncLevel *lvl)
{
	*lvl = OTF2_RMA_SYNC_LEVEL_NONE;
	switch (type) {
	case PROTO_EV_MPI_WIN_CREATE: case PROTO_EV_MPI_WIN_CREATE_DYNAMIC:
		*op = OTF2_COLLECTIVE_OP_CREATE_HANDLE;
		return 1;
	case PROTO_EV_MPI_WIN_ALLOCATE: case PROTO_EV_MPI_WIN_ALLOCATE_SHARED:
		*op = OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE;
		return 1;
	case PROTO_EV_MPI_WIN_FREE:
		*op = OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
		return 1;
	case PROTO_EV_MPI_WIN_POST: case PROTO_EV_MPI_WIN_START:
		/* exposure / access epoch opened: processes, not memory */
		*op = OTF2_COLLECTIVE_OP_BARRIER;
		*lvl = OTF2_RMA_SYNC_LEVEL_PROCESS;
		return 1;
	case PROTO_EV_MPI_WIN_FENCE: case PROTO_EV_MPI_WIN_COMPLETE:
	case PROTO_EV_MPI_WIN_WAIT:
		*op = OTF2_COLLECTIVE_OP_BARRIER;
		*lvl = OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY;
		return 1;
	}
	return 0;
}

/* The window of a one-sided point whose records are written (a call that
 * worked on a window the export knows), UINT32_MAX for none: the same at
 * the enter and the leave, so a begin always has its end. */
static uint32_t rma_win(const struct otf2 *o, const struct viz_pt *p)
{
	if (p->flags & PROTO_EVF_FAILED)
		return UINT32_MAX;
	return handle_of(o, o->win, o->nwin, p->loc, p->a[0]);
}

static void rma_enter(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p,
		      OTF2_TimeStamp t)
{
	OTF2_CollectiveOp op;
	OTF2_RmaSyncLevel lvl;

	if (rma_coll(p->type, &op, &lvl) && rma_win(o, p) != UINT32_MAX)
		OK(OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, t));
}

/* OTF2's lock type of MPI_Win_lock's (the MPI's own value: Open MPI's
 * MPI_LOCK_SHARED is 2, MPICH's 235; anything else is exclusive). */
static OTF2_LockType rma_lock_type(int64_t mpi)
{
	return mpi == 2 || mpi == 235 ? OTF2_LOCK_SHARED : OTF2_LOCK_EXCLUSIVE;
}

/* The lock, release and sync records of a passive-target call, written
 * at its leave (1), 0 for other calls. Lock ids: the target's world rank,
 * RMA_LOCK_ALL for lock_all (one lock per window and target at a time). */
#define RMA_LOCK_ALL UINT64_MAX
static int rma_passive(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p,
		       OTF2_TimeStamp t, uint32_t win, int64_t peer)
{
	uint32_t any = OTF2_UNDEFINED_UINT32;
	uint32_t remote = peer >= 0 ? (uint32_t)peer : any;

	switch (p->type) {
	case PROTO_EV_MPI_WIN_LOCK:
		if (peer >= 0)
			OK(OTF2_EvtWriter_RmaRequestLock(w, NULL, t, win, remote,
				(uint64_t)peer, rma_lock_type(p->a[2])));
		return 1;
	case PROTO_EV_MPI_WIN_UNLOCK:
		if (peer >= 0)
			OK(OTF2_EvtWriter_RmaReleaseLock(w, NULL, t, win, remote,
							 (uint64_t)peer));
		return 1;
	case PROTO_EV_MPI_WIN_LOCK_ALL:
		OK(OTF2_EvtWriter_RmaRequestLock(w, NULL, t, win, any, RMA_LOCK_ALL,
						 OTF2_LOCK_SHARED));
		return 1;
	case PROTO_EV_MPI_WIN_UNLOCK_ALL:
		OK(OTF2_EvtWriter_RmaReleaseLock(w, NULL, t, win, any, RMA_LOCK_ALL));
		return 1;
	case PROTO_EV_MPI_WIN_FLUSH: case PROTO_EV_MPI_WIN_FLUSH_LOCAL:
		if (peer >= 0)
			OK(OTF2_EvtWriter_RmaSync(w, NULL, t, win, remote,
						  OTF2_RMA_SYNC_TYPE_MEMORY));
		return 1;
	case PROTO_EV_MPI_WIN_FLUSH_ALL: case PROTO_EV_MPI_WIN_FLUSH_LOCAL_ALL:
	case PROTO_EV_MPI_WIN_SYNC:
		OK(OTF2_EvtWriter_RmaSync(w, NULL, t, win, any, OTF2_RMA_SYNC_TYPE_MEMORY));
		return 1;
	}
	return 0;
}

/* The RMA records of a one-sided point, at its leave: RmaWinCreate after
 * a constructor, RmaWinDestroy at MPI_Win_free, RmaCollectiveEnd after
 * them and after fence, post, start, complete, wait (see rma_coll), the
 * lock, release and sync records (rma_passive); RmaPut, RmaGet, RmaAtomic
 * (accumulate, fetch-and-accumulate, compare-and-swap) per operation with
 * a target (matching id: the event number; the target's world rank, the
 * windows being defined on MPI_COMM_WORLD), completed
 * (RmaOpCompleteBlocking) at the window's next synchronisation. */
static void rma_point(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p,
		      OTF2_TimeStamp t)
{
	uint64_t match = (uint64_t)(p->seq < 0 ? -p->seq : p->seq);
	int64_t peer = p->a[1], bytes = p->a[2] < 0 ? 0 : p->a[2];
	uint32_t win;

	OTF2_CollectiveOp op;
	OTF2_RmaSyncLevel lvl;

	if (p->kind != VIZ_PT_LEAVE || (win = rma_win(o, p)) == UINT32_MAX)
		return;
	switch (p->type) {
	case PROTO_EV_MPI_WIN_FREE:
	case PROTO_EV_MPI_WIN_FENCE: case PROTO_EV_MPI_WIN_COMPLETE:
	case PROTO_EV_MPI_WIN_UNLOCK_ALL: case PROTO_EV_MPI_WIN_FLUSH_ALL:
	case PROTO_EV_MPI_WIN_FLUSH_LOCAL_ALL:
		rma_complete(o, w, t, p->loc, win, -1);
		break;
	case PROTO_EV_MPI_WIN_UNLOCK: case PROTO_EV_MPI_WIN_FLUSH:
	case PROTO_EV_MPI_WIN_FLUSH_LOCAL:
		if (peer >= 0)
			rma_complete(o, w, t, p->loc, win, peer);
		break;
	}
	if (rma_made(p->type))
		OK(OTF2_EvtWriter_RmaWinCreate(w, NULL, t, win));
	else if (p->type == PROTO_EV_MPI_WIN_FREE)
		OK(OTF2_EvtWriter_RmaWinDestroy(w, NULL, t, win));
	if (rma_coll(p->type, &op, &lvl)) {
		OK(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, t, op, lvl, win,
			OTF2_UNDEFINED_UINT32, 0, 0));
		return;
	}
	if (rma_passive(o, w, p, t, win, peer) || !proto_ev_rma(p->type))
		return;
	if (peer < 0 || peer > o->s->max_rank)
		return;		/* MPI_PROC_NULL, unknown: nothing moved */
	switch (p->type) {
	case PROTO_EV_MPI_PUT: case PROTO_EV_MPI_RPUT:
		OK(OTF2_EvtWriter_RmaPut(w, NULL, t, win, (uint32_t)peer, (uint64_t)bytes, match));
		break;
	case PROTO_EV_MPI_GET: case PROTO_EV_MPI_RGET:
		OK(OTF2_EvtWriter_RmaGet(w, NULL, t, win, (uint32_t)peer, (uint64_t)bytes, match));
		break;
	case PROTO_EV_MPI_ACCUMULATE: case PROTO_EV_MPI_RACCUMULATE:
		OK(OTF2_EvtWriter_RmaAtomic(w, NULL, t, win, (uint32_t)peer,
			OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, (uint64_t)bytes, 0, match));
		break;
	case PROTO_EV_MPI_GET_ACCUMULATE: case PROTO_EV_MPI_RGET_ACCUMULATE: {
		int ri = proto_ev_arg(p->type, PROTO_F_rbytes);

		OK(OTF2_EvtWriter_RmaAtomic(w, NULL, t, win, (uint32_t)peer,
			OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE, (uint64_t)bytes,
			(uint64_t)(p->a[ri] < 0 ? 0 : p->a[ri]), match));
		break;
	}
	case PROTO_EV_MPI_FETCH_AND_OP:
		OK(OTF2_EvtWriter_RmaAtomic(w, NULL, t, win, (uint32_t)peer,
			OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE, (uint64_t)bytes,
			(uint64_t)bytes, match));
		break;
	case PROTO_EV_MPI_COMPARE_AND_SWAP:
		OK(OTF2_EvtWriter_RmaAtomic(w, NULL, t, win, (uint32_t)peer,
			OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP, 2 * (uint64_t)bytes,
			(uint64_t)bytes, match));
		break;
	default:
		return;
	}
	rma_pend(o, p->loc, win, peer, match);
}

/* Pass over dir for the files each process opened (MPI_File_open events
 * that worked): their paths are string ids of the opening thread, which
 * the sorted points no longer carry. 0, or -1 with a message. */
static int io_scan(struct otf2 *o, const char *dir)
{
	struct proto_trace_event te;
	struct proto_trace *t;
	int rc;

	if (!o->s->by_type[PROTO_EV_MPI_FILE_OPEN] && !o->s->by_type[PROTO_EV_MPI_WIN_CREATE] &&
	    !o->s->by_type[PROTO_EV_MPI_WIN_ALLOCATE] &&
	    !o->s->by_type[PROTO_EV_MPI_WIN_ALLOCATE_SHARED] &&
	    !o->s->by_type[PROTO_EV_MPI_WIN_CREATE_DYNAMIC])
		return 0;
	if (!(t = proto_trace_open(dir, &rc)))
		return mgr_fail(rc, "%s: %s", dir, proto_strerror(rc));
	while ((rc = proto_trace_next(t, &te)) == 1) {
		const struct proto_event *ev = te.ev;
		struct io_handle *n;
		const char *path;
		int64_t proc;

		if ((ev->flags & PROTO_EVF_FAILED) || ev->arg[0] <= 0)
			continue;
		if (rma_made(ev->type)) {
			if ((rc = win_add(o, te.stream->id, ev->arg[0])) < 0)
				break;
			continue;
		}
		if (ev->type != PROTO_EV_MPI_FILE_OPEN || o->nio >= IO_MAX)
			continue;
		proc = mgr_map_get(&o->s->procmap, te.stream->id, 0);
		path = proto_trace_string(t, te.stream->id, ev->tid, ev->arg[1]);
		if (proc < 0)
			continue;
		if (!(n = realloc(o->io, (o->nio + 1) * sizeof(*n)))) {
			rc = PROTO_E_NOMEM;
			break;
		}
		o->io = n;
		n[o->nio].proc = (uint32_t)proc;
		n[o->nio].file = ev->arg[0];
		n[o->nio].path = io_path(o, path ? path : "?");
		if (n[o->nio].path == UINT32_MAX) {
			rc = PROTO_E_NOMEM;
			break;
		}
		o->nio++;
	}
	proto_trace_close(t);
	if (rc < 0)
		return mgr_fail(rc, "%s: reading the MPI-IO files: %s", dir,
				proto_strerror(rc));
	return 0;
}

/* The I/O records of an MPI-IO point: handle created at a successful
 * open's leave, destroyed at a close's; an operation begun at a
 * read/write/sync's enter and completed at its leave, or issued there
 * (nonblocking: completed by other_done() at the end point of the Wait*
 * or Test* that completed it, whichever; a split collective: at its
 * _end's leave). Matching ids: the event number, the
 * request | IO_NB, the file id | IO_SPLIT. */
static void io_point(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p,
		     OTF2_TimeStamp t)
{
	int io = proto_ev_mpiio(p->type), ri, resi, enter = p->kind == VIZ_PT_ENTER;
	uint64_t match = (uint64_t)(p->seq < 0 ? -p->seq : p->seq);
	int failed = (p->flags & PROTO_EVF_FAILED) != 0;
	const char *name = proto_ev_info(p->type)->name;
	uint32_t h;

	if (io == PROTO_IO_NOT || p->type == PROTO_EV_MPI_FILE_DELETE ||
	    (h = handle_of(o, o->io, o->nio, p->loc, p->a[0])) == UINT32_MAX)
		return;
	ri = proto_ev_arg(p->type, PROTO_F_req);
	resi = proto_ev_arg(p->type, PROTO_F_result);
	if (ri >= 0)
		match = IO_NB | (uint64_t)p->a[ri];
	else if (strstr(name, "_begin") || strstr(name, "_end"))
		match = IO_SPLIT | (uint64_t)p->a[0];
	if (p->type == PROTO_EV_MPI_FILE_OPEN) {
		if (!enter && !failed)
			OK(OTF2_EvtWriter_IoCreateHandle(w, NULL, t, h,
				(p->a[3] & MPI_AMODE_RDONLY) ? OTF2_IO_ACCESS_MODE_READ_ONLY :
				(p->a[3] & MPI_AMODE_WRONLY) ? OTF2_IO_ACCESS_MODE_WRITE_ONLY :
				OTF2_IO_ACCESS_MODE_READ_WRITE,
				(p->a[3] & MPI_AMODE_CREATE) ? OTF2_IO_CREATION_FLAG_CREATE :
				OTF2_IO_CREATION_FLAG_NONE, OTF2_IO_STATUS_FLAG_NONE));
		return;
	}
	if (p->type == PROTO_EV_MPI_FILE_CLOSE) {
		if (!enter && !failed)
			OK(OTF2_EvtWriter_IoDestroyHandle(w, NULL, t, h));
		return;
	}
	if (io == PROTO_IO_FILE && p->type != PROTO_EV_MPI_FILE_SYNC)
		return;	/* set_size, preallocate, set_view: the region only */
	if (enter) {
		if (!strstr(name, "_end"))
			OK(OTF2_EvtWriter_IoOperationBegin(w, NULL, t, h,
				io == PROTO_IO_READ ? OTF2_IO_OPERATION_MODE_READ :
				io == PROTO_IO_WRITE ? OTF2_IO_OPERATION_MODE_WRITE :
				OTF2_IO_OPERATION_MODE_FLUSH,
				(ri >= 0 ? OTF2_IO_OPERATION_FLAG_NON_BLOCKING : 0) |
				(p->a[4] && io != PROTO_IO_FILE ? OTF2_IO_OPERATION_FLAG_COLLECTIVE : 0),
				io == PROTO_IO_FILE || p->a[3] < 0 ? 0 : (uint64_t)p->a[3], match));
		return;
	}
	if (failed)
		OK(OTF2_EvtWriter_IoOperationCancelled(w, NULL, t, h, match));
	else if (ri >= 0 || strstr(name, "_begin")) {
		OK(OTF2_EvtWriter_IoOperationIssued(w, NULL, t, h, match));
		if (ri >= 0)
			(void)mgr_reqtab_put(&o->pend, p->loc, p->a[ri],
					     &(struct mgr_req){.kind = PEND_IO, .data = h});	/* full: not completed */
	} else
		OK(OTF2_EvtWriter_IoOperationComplete(w, NULL, t, h,
			resi >= 0 && p->a[resi] > 0 ? (uint64_t)p->a[resi] : 0, match));
}

/* At the leave of a nonblocking collective that worked: its End waits for
 * the completion of its request (in the pending table: root as peer, the
 * operation as tag, bytes, rbytes as data). */
static void coll_pend(struct otf2 *o, const struct viz_pt *p, OTF2_CollectiveOp op)
{
	struct proto_event ev = {.type = p->type};
	struct mgr_req q = {.kind = PEND_COLL, .tag = op};
	int64_t req;

	memcpy(ev.arg, p->a, sizeof(ev.arg));
	req = mgr_ev_field(&ev, PROTO_F_req, 0);
	q.peer = mgr_ev_field(&ev, PROTO_F_root, -1);
	q.comm = mgr_ev_field(&ev, PROTO_F_comm, 0);
	q.bytes = mgr_ev_field(&ev, PROTO_F_bytes, 0);
	q.data = (uint64_t)mgr_ev_field(&ev, PROTO_F_rbytes, q.bytes);
	if (req > 0 && mgr_reqtab_put(&o->pend, p->loc, req, &q) == PROTO_E_NOMEM)
		o->err = 1;	/* full: its End is not written */
}

static void coll_end(struct otf2 *o, OTF2_EvtWriter *w, OTF2_TimeStamp t,
		     OTF2_CollectiveOp op, int64_t comm, int64_t root,
		     int64_t bytes, int64_t rbytes)
{
	OK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, op, comm_ref(o->s, comm),
		root >= 0 ? (uint32_t)root : OTF2_UNDEFINED_UINT32,
		(uint64_t)(bytes < 0 ? 0 : bytes), (uint64_t)(rbytes < 0 ? 0 : rbytes)));
}

/* A request other than a send's or a receive's completed (end point
 * VIZ_EP_OTHER_DONE, whichever Wait* or Test* completed it): a nonblocking
 * collective's End, or an MPI-IO operation's IoOperationComplete. */
static void other_done(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p,
		       OTF2_TimeStamp t)
{
	int64_t req = p->a[5], bytes = p->a[4];
	struct mgr_req q;

	if (req <= 0 || !mgr_reqtab_take(&o->pend, p->loc, req, &q))
		return;
	if (q.kind == PEND_COLL)
		coll_end(o, w, t, (OTF2_CollectiveOp)q.tag, q.comm, q.peer, q.bytes,
			 (int64_t)q.data);
	else
		OK(OTF2_EvtWriter_IoOperationComplete(w, NULL, t, (uint32_t)q.data,
			bytes > 0 ? (uint64_t)bytes : 0, IO_NB | (uint64_t)req));
}

/* The definitions of the MPI-IO paradigm, files and handles. */
static void io_defs(struct otf2 *o)
{
	uint32_t mpiio;

	if (!o->nio)
		return;
	mpiio = str(o, "MPI-IO");
	OK(OTF2_GlobalDefWriter_WriteIoParadigm(o->g, 0, mpiio, mpiio,
		OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE, 0,
		NULL, NULL, NULL));
	for (size_t i = 0; i < o->npaths; i++)
		OK(OTF2_GlobalDefWriter_WriteIoRegularFile(o->g, (uint32_t)i,
			str(o, o->paths[i]), 0));
	for (size_t i = 0; i < o->nio; i++) {
		const struct viz_proc *pr = &o->s->procs[o->io[i].proc];
		char name[64];

		snprintf(name, sizeof(name), "MPI_File %" PRId64 " of %s %" PRId64,
			 o->io[i].file, pr->rank >= 0 ? "rank" : "pid",
			 pr->rank >= 0 ? (int64_t)pr->rank : pr->pid);
		OK(OTF2_GlobalDefWriter_WriteIoHandle(o->g, (uint32_t)i, str(o, name),
			o->io[i].path, 0, OTF2_IO_HANDLE_FLAG_NONE,
			OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE));
	}
}

static void write_point(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p)
{
	const struct viz_scan *s = o->s;
	OTF2_TimeStamp t = (OTF2_TimeStamp)(p->t < 0 ? 0 : p->t);
	OTF2_CollectiveOp op;
	int coll = coll_op(p->type, &op);
	uint64_t before = 0;

	OK(OTF2_EvtWriter_GetNumberOfEvents(w, &before));
	switch (p->kind) {
	case VIZ_PT_ENTER:
		OK(OTF2_EvtWriter_Enter(w, NULL, t, o->region[p->type < PROTO_EV__COUNT ? p->type : 0]));
		if (coll)
			OK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t));
		if (o->nio)
			io_point(o, w, p, t);
		if (o->nwin && rma_type(p->type))
			rma_enter(o, w, p, t);
		break;
	case VIZ_PT_LEAVE:
		if (o->nio)
			io_point(o, w, p, t);
		if (o->nwin && rma_type(p->type))
			rma_point(o, w, p, t);
		if (coll && proto_ev_icoll(p->type) &&
		    !(p->flags & PROTO_EVF_FAILED)) {
			coll_pend(o, p, op);
		} else if (coll) {
			struct proto_event ev = {.type = p->type};

			memcpy(ev.arg, p->a, sizeof(ev.arg));
			int64_t bytes = mgr_ev_field(&ev, PROTO_F_bytes, 0);

			coll_end(o, w, t, op, mgr_ev_field(&ev, PROTO_F_comm, 0),
				 mgr_ev_field(&ev, PROTO_F_root, -1), bytes,
				 mgr_ev_field(&ev, PROTO_F_rbytes, bytes));
		}
		OK(OTF2_EvtWriter_Leave(w, NULL, t, o->region[p->type < PROTO_EV__COUNT ? p->type : 0]));
		break;
	case VIZ_PT_EP: {
		int64_t peer = p->a[1], tag = p->a[3], bytes = p->a[4] < 0 ? 0 : p->a[4];
		uint64_t req = (uint64_t)p->a[5];
		/* point-to-point on MPI_COMM_WORLD with world ranks (see docs) */
		int known = peer >= 0 && peer <= s->max_rank && tag >= 0 && tag <= UINT32_MAX;

		switch (p->a[0]) {
		case VIZ_EP_SEND:
			if (known)
				OK(OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)peer, 0,
							  (uint32_t)tag, (uint64_t)bytes));
			break;
		case VIZ_EP_RECV:
			if (known)
				OK(OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)peer, 0,
							  (uint32_t)tag, (uint64_t)bytes));
			break;
		case VIZ_EP_ISEND:
			if (known)
				OK(OTF2_EvtWriter_MpiIsend(w, NULL, t, (uint32_t)peer, 0,
							   (uint32_t)tag, (uint64_t)bytes, req));
			break;
		case VIZ_EP_IRECV_POST:
			OK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, req));
			break;
		case VIZ_EP_ISEND_DONE:
			OK(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, req));
			break;
		case VIZ_EP_OTHER_DONE:
			other_done(o, w, p, t);
			break;
		case VIZ_EP_IRECV_DONE:
			if (known)
				OK(OTF2_EvtWriter_MpiIrecv(w, NULL, t, (uint32_t)peer, 0,
							   (uint32_t)tag, (uint64_t)bytes, req));
			else
				OK(OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t, req));
			break;
		}
		break;
	}
	case VIZ_PT_SAMPLE: {
		OTF2_Type types[4] = {OTF2_TYPE_INT64, OTF2_TYPE_INT64, OTF2_TYPE_INT64,
				      OTF2_TYPE_INT64};
		OTF2_MetricValue v[4];

		for (int i = 0; i < 4; i++)
			v[i].signed_int = p->a[i];
		OK(OTF2_EvtWriter_Metric(w, NULL, t, 0, 4, types, v));
		break;
	}
	}
	uint64_t after = before;
	OK(OTF2_EvtWriter_GetNumberOfEvents(w, &after));
	o->nev[p->loc] += after - before;
}

static void write_defs(struct otf2 *o)
{
	const struct viz_scan *s = o->s;
	uint32_t empty, machine, node_cls, host_cls, *host_node = NULL;
	uint64_t *members = NULL;

	o->g = OTF2_Archive_GetGlobalDefWriter(o->ar);
	if (!o->g) {
		o->err = 1;
		return;
	}
	OK(OTF2_GlobalDefWriter_WriteClockProperties(o->g, 1000000000, 0,
		(uint64_t)s->t_end + 1, OTF2_UNDEFINED_TIMESTAMP));
	empty = str(o, "");
	(void)empty;
	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		uint32_t name;

		if (!s->by_type[ty] || ty == PROTO_EV_MEM_SAMPLE)
			continue;
		name = str(o, mgr_viz_ev_name(ty));
		OK(OTF2_GlobalDefWriter_WriteRegion(o->g, o->region[ty], name, name, empty,
			region_role(ty), paradigm(ty), OTF2_REGION_FLAG_NONE, empty, 0, 0));
	}
	machine = str(o, "job");
	node_cls = str(o, "machine");
	host_cls = str(o, "node");
	OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->g, 0, machine, node_cls,
						    OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	host_node = calloc(s->nhosts ? s->nhosts : 1, sizeof(*host_node));
	if (!host_node) {
		o->err = 1;
		return;
	}
	for (size_t h = 0; h < s->nhosts; h++) {
		host_node[h] = (uint32_t)h + 1;
		OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->g, host_node[h],
			str(o, s->hosts[h]), host_cls, 0));
	}
	for (size_t p = 0; p < s->nprocs; p++) {
		const struct viz_proc *pr = &s->procs[p];
		char name[400];

		/* ranks by their rank alone, as MPI tools name them */
		if (pr->rank >= 0)
			snprintf(name, sizeof(name), "rank %d", pr->rank);
		else
			mgr_viz_proc_name(s, p, name, sizeof(name));
		OK(OTF2_GlobalDefWriter_WriteLocationGroup(o->g, p, str(o, name),
			OTF2_LOCATION_GROUP_TYPE_PROCESS, host_node[pr->host_idx],
			OTF2_UNDEFINED_LOCATION_GROUP));
	}
	for (size_t t = 0; t < s->nthreads; t++) {
		char name[64];

		snprintf(name, sizeof(name), "thread %" PRIu32, s->threads[t].tid);
		OK(OTF2_GlobalDefWriter_WriteLocation(o->g, t, str(o, name),
			OTF2_LOCATION_TYPE_CPU_THREAD, o->nev[t], s->threads[t].proc));
	}
	if (s->mem_samples) {
		static const char *mn[4] = {"rss", "minflt", "majflt", "vsize"};
		static const char *md[4] = {"resident set size", "minor page faults in the period",
					    "major page faults in the period", "virtual size"};
		OTF2_MetricMemberRef mm[4] = {0, 1, 2, 3};

		for (int i = 0; i < 4; i++)
			OK(OTF2_GlobalDefWriter_WriteMetricMember(o->g, (uint32_t)i,
				str(o, mn[i]), str(o, md[i]), OTF2_METRIC_TYPE_OTHER,
				i == 0 || i == 3 ? OTF2_METRIC_ABSOLUTE_POINT :
				OTF2_METRIC_RELATIVE_LAST, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0,
				str(o, i == 0 || i == 3 ? "bytes" : "faults")));
		OK(OTF2_GlobalDefWriter_WriteMetricClass(o->g, 0, 4, mm,
			OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT));
	}
	if (s->max_rank >= 0) {
		size_t n = (size_t)s->max_rank + 1;
		uint32_t world = str(o, "MPI_COMM_WORLD");

		members = malloc(n * sizeof(*members));
		if (!members) {
			o->err = 1;
			goto done;
		}
		/* group 0: rank -> location of its main thread (a rank with no
		 * process falls back to location 0) */
		for (size_t r = 0; r < n; r++)
			members[r] = s->rank_proc[r] == UINT32_MAX ? 0 :
				s->procs[s->rank_proc[r]].first_thread;
		OK(OTF2_GlobalDefWriter_WriteGroup(o->g, 0, str(o, "world locations"),
			OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
			OTF2_GROUP_FLAG_NONE, (uint32_t)n, members));
		for (size_t r = 0; r < n; r++)
			members[r] = r;
		OK(OTF2_GlobalDefWriter_WriteGroup(o->g, 1, str(o, "world"),
			OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
			OTF2_GROUP_FLAG_NONE, (uint32_t)n, members));
		OK(OTF2_GlobalDefWriter_WriteComm(o->g, 0, world, 1,
			OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
		write_comms(o, members);
	}
	io_defs(o);
	/* windows on MPI_COMM_WORLD: their targets are world ranks */
	for (size_t i = 0; i < o->nwin; i++) {
		const struct viz_proc *pr = &s->procs[o->win[i].proc];
		char name[64];

		snprintf(name, sizeof(name), "window %" PRId64 " of %s %" PRId64,
			 o->win[i].file, pr->rank >= 0 ? "rank" : "pid",
			 pr->rank >= 0 ? (int64_t)pr->rank : pr->pid);
		OK(OTF2_GlobalDefWriter_WriteRmaWin(o->g, (uint32_t)i, str(o, name), 0,
			OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS));
	}
done:
	free(members);
	free(host_node);
}

int mgr_export_otf2(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct viz_sort *so = NULL;
	struct viz_scan s;
	struct viz_pt p;
	struct otf2 ob, *o = &ob;
	OTF2_EvtWriter *w = NULL;
	uint32_t cur = UINT32_MAX;
	int rc = -1, r = 0;

	memset(o, 0, sizeof(*o));
	mgr_reqtab_init(&o->pend, IO_MAX);
	if (mgr_viz_scan(dir, "otf2", &s) != 0)
		return -1;
	o->s = &s;
	if (!s.nthreads) {
		rc = mgr_fail(PROTO_E_NOTFOUND, "%s: no events: an OTF2 archive "
			      "needs at least one location", dir);
		goto done;
	}
	o->nev = calloc(s.nthreads ? s.nthreads : 1, sizeof(*o->nev));
	if (!o->nev || !(so = mgr_viz_sort_new(0, cmp_loc))) {
		rc = mgr_fail(PROTO_E_NOMEM, "out of memory");
		goto done;
	}
	for (unsigned ty = 1, n = 0; ty < PROTO_EV__COUNT; ty++)
		if (s.by_type[ty] && ty != PROTO_EV_MEM_SAMPLE)
			o->region[ty] = n++;
	if (io_scan(o, dir) != 0 || mgr_viz_fill_sort(dir, &s, so, 1, 0, "otf2", st) != 0)
		goto done;
	if (mkdir(path, 0777) != 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot create: %m", path);
		goto done;
	}
	o->ar = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE,
				 OTF2_CHUNK_SIZE_MIN, OTF2_CHUNK_SIZE_MIN,
				 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o->ar) {
		rc = mgr_fail(PROTO_E_IO, "%s: OTF2 cannot open the archive", path);
		goto done;
	}
	OK(OTF2_Archive_SetFlushCallbacks(o->ar, &flush_cb, NULL));
	OK(OTF2_Archive_SetSerialCollectiveCallbacks(o->ar));
	OK(OTF2_Archive_SetCreator(o->ar, "tapestry"));
	OK(OTF2_Archive_OpenEvtFiles(o->ar));
	while (!o->err && (r = mgr_viz_sort_next(so, &p)) == 1) {
		if (p.loc != cur) {
			if (w)
				OK(OTF2_Archive_CloseEvtWriter(o->ar, w));
			cur = p.loc;
			if (!(w = OTF2_Archive_GetEvtWriter(o->ar, cur))) {
				o->err = 1;
				break;
			}
		}
		write_point(o, w, &p);
	}
	if (r < 0) {
		rc = mgr_fail(r, "reading sorted events: %s", proto_strerror(r));
		goto done;
	}
	if (w)
		OK(OTF2_Archive_CloseEvtWriter(o->ar, w));
	OK(OTF2_Archive_CloseEvtFiles(o->ar));
	OK(OTF2_Archive_OpenDefFiles(o->ar));
	for (size_t t = 0; t < s.nthreads; t++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar, t);

		if (!dw)
			o->err = 1;
		else
			OK(OTF2_Archive_CloseDefWriter(o->ar, dw));
	}
	OK(OTF2_Archive_CloseDefFiles(o->ar));
	write_defs(o);
	for (size_t t = 0; t < s.nthreads; t++)
		st->written += o->nev[t];
	if (o->err) {
		rc = mgr_fail(PROTO_E_IO, "%s: OTF2 write failed", path);
		goto done;
	}
	rc = 0;
done:
	if (o->ar && OTF2_Archive_Close(o->ar) != OTF2_SUCCESS && rc == 0)
		rc = mgr_fail(PROTO_E_IO, "%s: OTF2 archive close failed", path);
	mgr_viz_sort_free(so);
	for (size_t i = 0; i < o->npaths; i++)
		free(o->paths[i]);
	free(o->paths);
	free(o->io);
	mgr_reqtab_clear(&o->pend);
	free(o->win);
	free(o->rpend);
	free(o->nev);
	mgr_viz_scan_free(&s);
	return rc;
}

#endif
