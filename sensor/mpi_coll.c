/*
 * sensor/mpi_coll.c - the MPI sensor's collectives: the arguments every
 * collective records (the blocking ones of sensor/mpi.def, whose wrappers
 * in mpi_wrap.c call the mw_coll_*() helpers here, and their nonblocking
 * forms), and the wrappers of sensor/mpi_coll.def: Alltoallw,
 * Reduce_scatter_block, the nonblocking collectives and the neighbourhood
 * collectives (expanded by sensor/mpi_gen.h with the prologue and epilogue
 * of mpi_wrap.c).
 *
 * The calls that share a signature (Iallreduce / Iscan / Iexscan, the
 * allgather and alltoall forms, the v and w forms ...) have one body each,
 * their do_NAME() made by a local macro per signature.
 *
 * A nonblocking collective records what its blocking form records, then
 * req (and for the rooted ones wroot, the root as a world rank): a fresh
 * request id bound to its handle (kind MW_REQ_COLL, peer -2),
 * so that the Wait / Test that completes it records the same id once
 * (peer -2, bytes 0), like any request. Counts and types are read right
 * after the call: the standard keeps them valid until the completion.
 *
 * A neighbourhood collective records bytes and rbytes (per block for the
 * forms with one count, totals for those with counts per neighbour), comm,
 * indeg, outdeg, and an ARRAY of 2 x (indeg + outdeg) values: the world
 * ranks of the sources (-2: MPI_PROC_NULL, a cartesian edge), of the
 * destinations, the bytes sent to each destination, the bytes received
 * from each source, in the order of the topology (MPI_Cart_shift per
 * dimension: the -1 then the +1 neighbour; MPI_Graph_neighbors;
 * MPI_Dist_graph_neighbors). The topology is read only while recording.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

#define MW_TABLE "sensor/mpi_coll.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* Neighbour ranks the stack holds; more are allocated. */
#define NBR_SMALL 64

/* ---- the arguments of every collective ---------------------------------- */

/* arr[i] = counts[i] x the size of types[i] (types NULL: of t), i < n,
 * at most room values; returns their sum. arr may be NULL (the sum only). */
static int64_t counts_bytes(int64_t *arr, size_t room, const int *counts,
			    int n, const MPI_Datatype *types, MPI_Datatype t)
{
	int64_t sz = types ? 0 : mw_type_bytes(t, 1), sum = 0, b;

	if (!counts)
		return 0;
	for (int i = 0; i < n; i++) {
		b = counts[i] <= 0 ? 0 : types ?
			mw_type_bytes(types[i], counts[i]) : counts[i] * sz;
		sum += b;
		if (arr && (size_t)i < room)
			arr[i] = b;
	}
	return sum;
}

void mw_coll_rooted(struct mw_call *c, int64_t bytes, int root, MPI_Comm comm,
		    int64_t rid)
{
	proto_args_set(c->arg, bytes, root, mw_comm_id(comm, 0, NULL), rid, 0, 0);
}

void mw_coll_plain(struct mw_call *c, int64_t bytes, MPI_Comm comm,
		   int64_t rid)
{
	proto_args_set(c->arg, bytes, mw_comm_id(comm, 0, NULL), rid, 0, 0, 0);
}

void mw_coll_gather(struct mw_call *c, const void *sbuf, int scount,
		    MPI_Datatype stype, int rcount, MPI_Datatype rtype,
		    int root, MPI_Comm comm, int64_t rid)
{
	int me;
	int64_t id = mw_comm_info(comm, NULL, &me);
	int64_t rb = me == root ? mw_type_bytes(rtype, rcount) : 0;

	proto_args_set(c->arg, sbuf == MPI_IN_PLACE ? rb :
		       mw_type_bytes(stype, scount), rb, root, id, rid, 0);
}

/* Gatherv (gather 1) and Scatterv (0) mirrored: one count and type on
 * every rank's own side (a gatherv's send, a scatterv's receive), counts a
 * rank on the root's other side (with the ARRAY); inplace: the root's own
 * side is its block of the counts. */
static void rooted_v(struct mw_call *c, int gather, int inplace, int count,
		     MPI_Datatype type, const int *counts, MPI_Datatype ctype,
		     int root, MPI_Comm comm, int64_t rid)
{
	int me, size;
	int64_t id = mw_comm_info(comm, &size, &me), many = 0, one, *arr = NULL;
	size_t n = size > 0 ? (size_t)size : 0;

	one = mw_type_bytes(type, count);
	if (me == root && counts) {
		if (c->on)
			arr = mw_call_array(c, &n);
		many = counts_bytes(arr, n, counts, size, NULL, ctype);
		if (inplace && root >= 0 && root < size)
			one = mw_type_bytes(ctype, counts[root]);
	}
	proto_args_set(c->arg, gather ? one : many, gather ? many : one, root,
		       id, rid, 0);
}

void mw_coll_gatherv(struct mw_call *c, const void *sbuf, int scount,
		     MPI_Datatype stype, const int *rcounts, MPI_Datatype rtype,
		     int root, MPI_Comm comm, int64_t rid)
{
	rooted_v(c, 1, sbuf == MPI_IN_PLACE, scount, stype, rcounts, rtype,
		 root, comm, rid);
}

void mw_coll_scatter(struct mw_call *c, int scount, MPI_Datatype stype,
		     const void *rbuf, int rcount, MPI_Datatype rtype,
		     int root, MPI_Comm comm, int64_t rid)
{
	int me;
	int64_t id = mw_comm_info(comm, NULL, &me);
	int64_t sb = me == root ? mw_type_bytes(stype, scount) : 0;

	proto_args_set(c->arg, sb, rbuf == MPI_IN_PLACE ? sb :
		       mw_type_bytes(rtype, rcount), root, id, rid, 0);
}

void mw_coll_scatterv(struct mw_call *c, const int *scounts,
		      MPI_Datatype stype, const void *rbuf, int rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm, int64_t rid)
{
	rooted_v(c, 0, rbuf == MPI_IN_PLACE, rcount, rtype, scounts, stype,
		 root, comm, rid);
}

void mw_coll_allgather(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, int rcount, MPI_Datatype rtype,
		       MPI_Comm comm, int64_t rid)
{
	int64_t rb = mw_type_bytes(rtype, rcount);

	proto_args_set(c->arg, sbuf == MPI_IN_PLACE ? rb :
		       mw_type_bytes(stype, scount), rb,
		       mw_comm_id(comm, 0, NULL), rid, 0, 0);
}

void mw_coll_allgatherv(struct mw_call *c, const void *sbuf, int scount,
			MPI_Datatype stype, const int *rcounts,
			MPI_Datatype rtype, MPI_Comm comm, int64_t rid)
{
	int me, size;
	int64_t id = mw_comm_info(comm, &size, &me), sb, rb, *arr = NULL;
	size_t n = size > 0 ? (size_t)size : 0;

	sb = mw_type_bytes(stype, scount);
	if (c->on && rcounts)
		arr = mw_call_array(c, &n);
	rb = counts_bytes(arr, n, rcounts, size, NULL, rtype);
	if (sbuf == MPI_IN_PLACE && rcounts && me >= 0 && me < size)
		sb = mw_type_bytes(rtype, rcounts[me]);
	proto_args_set(c->arg, sb, rb, id, rid, 0, 0);
}

void mw_coll_alltoallv(struct mw_call *c, const void *sbuf,
		       const int *scounts, const MPI_Datatype *stypes,
		       MPI_Datatype stype, const int *rcounts,
		       const MPI_Datatype *rtypes, MPI_Datatype rtype,
		       MPI_Comm comm, int64_t rid)
{
	int size;
	int64_t id = mw_comm_info(comm, &size, NULL), sb, rb, *arr = NULL;
	size_t n = size > 0 ? (size_t)size * 2 : 0, half;

	/* MPI_IN_PLACE: the send side is the receive side */
	if (sbuf == MPI_IN_PLACE) {
		scounts = rcounts;
		stypes = rtypes;
		stype = rtype;
	}
	if (c->on && scounts && rcounts)
		arr = mw_call_array(c, &n);
	half = n < (size_t)size ? n : (size_t)size;
	sb = counts_bytes(arr, half, scounts, size, stypes, stype);
	rb = counts_bytes(arr ? arr + half : NULL, n - half, rcounts, size,
			  rtypes, rtype);
	proto_args_set(c->arg, sb, rb, id, rid, 0, 0);
}

void mw_coll_reduce_scatter(struct mw_call *c, const int *rcounts,
			    MPI_Datatype type, MPI_Comm comm, int64_t rid)
{
	int size;
	int64_t id = mw_comm_info(comm, &size, NULL), *arr = NULL;
	size_t n = size > 0 ? (size_t)size : 0;

	if (c->on && rcounts)
		arr = mw_call_array(c, &n);
	proto_args_set(c->arg, counts_bytes(arr, n, rcounts, size, NULL, type),
		       id, rid, 0, 0, 0);
}

/* ---- nonblocking: the request ------------------------------------------ */

/* The id of the request a nonblocking collective on comm that returned rc
 * just started (0: none). */
static int64_t coll_req(int rc, MPI_Comm comm, MPI_Request *req)
{
	struct mw_req q = {.kind = MW_REQ_COLL, .peer = MW_PEER_NULL,
			   .active = 1};

	if (rc != MPI_SUCCESS || !req)
		return 0;
	q.comm = mw_comm_id(comm, 0, NULL);
	return mw_req_start(*req, req, &q);
}

/* The world rank of root in comm into the argument wroot of a nonblocking
 * rooted collective's event (slot i). */
static void set_wroot(struct mw_call *c, int i, int root, MPI_Comm comm)
{
	int64_t w = MW_PEER_UNKNOWN;

	mw_comm_id(comm, root, &w);
	c->arg[i] = w;
}

/* ---- Reduce_scatter_block ---------------------------------------------- */

/* bytes: the whole vector reduced (rcount x type size x comm size), as
 * Reduce_scatter's total; each rank's block is bytes / size */
static void rsb_args(struct mw_call *c, int rcount, MPI_Datatype type,
		     MPI_Comm comm, int64_t rid)
{
	int size;
	int64_t id = mw_comm_info(comm, &size, NULL);

	proto_args_set(c->arg,
		       mw_type_bytes(type, rcount) * (size > 0 ? size : 0),
		       id, rid, 0, 0, 0);
}

static int do_Reduce_scatter_block(struct mw_call *c, const void *sbuf,
				   void *rbuf, int rcount, MPI_Datatype type,
				   MPI_Op op, MPI_Comm comm)
{
	int rc = next_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);

	rsb_args(c, rcount, type, comm, 0);
	return rc;
}

/* ---- nonblocking collectives ------------------------------------------- */

static int do_Ibarrier(struct mw_call *c, MPI_Comm comm, MPI_Request *req)
{
	int rc = next_Ibarrier(comm, req);

	proto_args_set(c->arg, mw_comm_id(comm, 0, NULL),
		       coll_req(rc, comm, req), 0, 0, 0, 0);
	return rc;
}

static int do_Ibcast(struct mw_call *c, void *buf, int count,
		     MPI_Datatype type, int root, MPI_Comm comm,
		     MPI_Request *req)
{
	int rc = next_Ibcast(buf, count, type, root, comm, req);

	mw_coll_rooted(c, mw_type_bytes(type, count), root, comm,
		       coll_req(rc, comm, req));
	set_wroot(c, 4, root, comm);
	return rc;
}

static int do_Ireduce(struct mw_call *c, const void *sbuf, void *rbuf,
		      int count, MPI_Datatype type, MPI_Op op, int root,
		      MPI_Comm comm, MPI_Request *req)
{
	int rc = next_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);

	mw_coll_rooted(c, mw_type_bytes(type, count), root, comm,
		       coll_req(rc, comm, req));
	set_wroot(c, 4, root, comm);
	return rc;
}

static int do_Igatherv(struct mw_call *c, const void *sbuf, int scount,
		       MPI_Datatype stype, void *rbuf, const int rcounts[],
		       const int displs[], MPI_Datatype rtype, int root,
		       MPI_Comm comm, MPI_Request *req)
{
	int rc = next_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs,
			       rtype, root, comm, req);

	mw_coll_gatherv(c, sbuf, scount, stype, rcounts, rtype, root, comm,
			coll_req(rc, comm, req));
	set_wroot(c, 5, root, comm);
	return rc;
}

static int do_Iscatterv(struct mw_call *c, const void *sbuf,
			const int scounts[], const int displs[],
			MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, int root, MPI_Comm comm,
			MPI_Request *req)
{
	int rc = next_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount,
				rtype, root, comm, req);
	int64_t rid = coll_req(rc, comm, req);

	mw_coll_scatterv(c, scounts, stype, rbuf, rcount, rtype, root, comm, rid);
	set_wroot(c, 5, root, comm);
	return rc;
}

static int do_Ireduce_scatter(struct mw_call *c, const void *sbuf,
			      void *rbuf, const int rcounts[],
			      MPI_Datatype type, MPI_Op op, MPI_Comm comm,
			      MPI_Request *req)
{
	int rc = next_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, req);

	mw_coll_reduce_scatter(c, rcounts, type, comm, coll_req(rc, comm, req));
	return rc;
}

static int do_Ireduce_scatter_block(struct mw_call *c, const void *sbuf,
				    void *rbuf, int rcount, MPI_Datatype type,
				    MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	int rc = next_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm,
					    req);

	rsb_args(c, rcount, type, comm, coll_req(rc, comm, req));
	return rc;
}

/* ---- neighbourhood collectives ----------------------------------------- */

int mw_nbr_degrees(MPI_Comm comm, int *topo, int *in, int *out,
		   int *weighted)
{
	int nd = 0, me = 0;

	*in = *out = *weighted = 0;
	if (PMPI_Topo_test(comm, topo) != MPI_SUCCESS)
		return -1;
	switch (*topo) {
	case MPI_CART:
		if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS)
			return -1;
		*in = *out = 2 * nd;
		return 0;
	case MPI_GRAPH:
		if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
		    PMPI_Graph_neighbors_count(comm, me, in) != MPI_SUCCESS)
			return -1;
		*out = *in;
		return 0;
	case MPI_DIST_GRAPH:
		return PMPI_Dist_graph_neighbors_count(comm, in, out, weighted) ==
		       MPI_SUCCESS ? 0 : -1;
	default:
		return -1;
	}
}

/* The ranks in comm of the sources (v[0, in)) then the destinations
 * (v[in, in + out)); v has room for 2 x (in + out). 0, or -1. */
static int nbr_ranks(MPI_Comm comm, int topo, int in, int out, int weighted,
		     int *v)
{
	int me = 0;

	switch (topo) {
	case MPI_CART:
		for (int d = 0; d < in / 2; d++)
			if (PMPI_Cart_shift(comm, d, 1, &v[2 * d],
					    &v[2 * d + 1]) != MPI_SUCCESS)
				return -1;
		memcpy(v + in, v, (size_t)in * sizeof(*v));
		return 0;
	case MPI_GRAPH:
		if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
		    PMPI_Graph_neighbors(comm, me, in, v) != MPI_SUCCESS)
			return -1;
		memcpy(v + in, v, (size_t)in * sizeof(*v));
		return 0;
	default:
		/* the weights, when there are some, go after the ranks */
		return PMPI_Dist_graph_neighbors(comm, in, v,
			weighted ? v + in + out : MPI_UNWEIGHTED, out, v + in,
			weighted ? v + 2 * in + out : MPI_UNWEIGHTED) ==
		       MPI_SUCCESS ? 0 : -1;
	}
}

/* What a neighbourhood collective moves on each side: one count and type
 * for every neighbour (counts NULL), or a count each, of one type or of a
 * type each (types NULL: t). */
struct nbr_side {
	int count;
	const int *counts;
	MPI_Datatype t;
	const MPI_Datatype *types;
};

static int64_t side_bytes(const struct nbr_side *s, int i)
{
	if (!s->counts)
		return mw_type_bytes(s->t, s->count);
	return mw_type_bytes(s->types ? s->types[i] : s->t, s->counts[i]);
}

/* The ARRAY of a neighbourhood collective (see the top of this file) and
 * its degrees into *in, *out. */
static void nbr_array(struct mw_call *c, MPI_Comm comm,
		      const struct nbr_side *snd, const struct nbr_side *rcv,
		      int *in, int *out)
{
	int topo, weighted, small[NBR_SMALL], *v = small;
	int64_t *arr, w;
	size_t n, want;

	if (mw_nbr_degrees(comm, &topo, in, out, &weighted) || *in < 0 || *out < 0)
		return;
	want = 2 * ((size_t)*in + (size_t)*out);
	if (want > NBR_SMALL && !(v = malloc(want * sizeof(*v))))
		return;
	n = want;
	if (nbr_ranks(comm, topo, *in, *out, weighted, v) == 0 &&
	    (arr = mw_call_array(c, &n))) {
		if (n < want)	/* clipped at MW_ARR_MAX: no partial layout */
			c->narr = 0;
		for (int i = 0; n == want && i < *in + *out; i++) {
			mw_comm_id(comm, v[i], &w);
			arr[i] = w;
		}
		for (int i = 0; n == want && i < *out; i++)
			arr[*in + *out + i] = side_bytes(snd, i);
		for (int i = 0; n == want && i < *in; i++)
			arr[*in + 2 * *out + i] = side_bytes(rcv, i);
	}
	if (v != small)
		free(v);
}

/* The event of a neighbourhood collective: bytes and rbytes per block for
 * a side with one count, else its total over the neighbours. */
static void nbr_args(struct mw_call *c, MPI_Comm comm,
		     const struct nbr_side *snd, const struct nbr_side *rcv,
		     int64_t rid)
{
	int in = 0, out = 0;
	int64_t sb = 0, rb = 0;

	if (c->on)
		nbr_array(c, comm, snd, rcv, &in, &out);
	for (int i = 0; snd->counts && i < out; i++)
		sb += side_bytes(snd, i);
	for (int i = 0; rcv->counts && i < in; i++)
		rb += side_bytes(rcv, i);
	if (!snd->counts)
		sb = mw_type_bytes(snd->t, snd->count);
	if (!rcv->counts)
		rb = mw_type_bytes(rcv->t, rcv->count);
	proto_args_set(c->arg, sb, rb, mw_comm_id(comm, 0, NULL), in, out, rid);
}

/* nbr_args() for one count and type a side (allgather, alltoall) */
static void nbr_blocks(struct mw_call *c, MPI_Comm comm, int scount,
		       MPI_Datatype stype, int rcount, MPI_Datatype rtype,
		       int64_t rid)
{
	struct nbr_side s = {scount, NULL, stype, NULL};
	struct nbr_side r = {rcount, NULL, rtype, NULL};

	nbr_args(c, comm, &s, &r, rid);
}

/* nbr_args() for counts per neighbour on the receive side, and on the send
 * side unless scounts is NULL (then scount each); types per neighbour
 * where given (the w forms) */
static void nbr_counts(struct mw_call *c, MPI_Comm comm, int scount,
		       const int *scounts, MPI_Datatype stype,
		       const MPI_Datatype *stypes, const int *rcounts,
		       MPI_Datatype rtype, const MPI_Datatype *rtypes,
		       int64_t rid)
{
	struct nbr_side s = {scount, scounts, stype, stypes};
	struct nbr_side r = {0, rcounts, rtype, rtypes};

	nbr_args(c, comm, &s, &r, rid);
}

/* ---- the calls that share a signature: one body each ------------------- */

/* Iallreduce, Iscan, Iexscan */
typedef int (*plain_fn)(const void *, void *, int, MPI_Datatype, MPI_Op,
			MPI_Comm, MPI_Request *);

static int i_plain(struct mw_call *c, plain_fn fn, const void *sbuf,
		   void *rbuf, int count, MPI_Datatype type, MPI_Op op,
		   MPI_Comm comm, MPI_Request *req)
{
	int rc = fn(sbuf, rbuf, count, type, op, comm, req);

	mw_coll_plain(c, mw_type_bytes(type, count), comm,
		      coll_req(rc, comm, req));
	return rc;
}

#define I_PLAIN(name) \
static int do_##name(struct mw_call *c, const void *sbuf, void *rbuf, \
		     int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, \
		     MPI_Request *req) \
{ \
	return i_plain(c, next_##name, sbuf, rbuf, count, type, op, comm, \
		       req); \
}
I_PLAIN(Iallreduce)
I_PLAIN(Iscan)
I_PLAIN(Iexscan)

/* Igather, Iscatter (gather 1, scatter 0) */
typedef int (*rooted_fn)(const void *, int, MPI_Datatype, void *, int,
			 MPI_Datatype, int, MPI_Comm, MPI_Request *);

static int i_rooted(struct mw_call *c, rooted_fn fn, int gather,
		    const void *sbuf, int scount, MPI_Datatype stype,
		    void *rbuf, int rcount, MPI_Datatype rtype, int root,
		    MPI_Comm comm, MPI_Request *req)
{
	int rc = fn(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
	int64_t rid = coll_req(rc, comm, req);

	if (gather)
		mw_coll_gather(c, sbuf, scount, stype, rcount, rtype, root,
			       comm, rid);
	else
		mw_coll_scatter(c, scount, stype, rbuf, rcount, rtype, root,
				comm, rid);
	set_wroot(c, 5, root, comm);
	return rc;
}

#define I_ROOTED(name, gather) \
static int do_##name(struct mw_call *c, const void *sbuf, int scount, \
		     MPI_Datatype stype, void *rbuf, int rcount, \
		     MPI_Datatype rtype, int root, MPI_Comm comm, \
		     MPI_Request *req) \
{ \
	return i_rooted(c, next_##name, gather, sbuf, scount, stype, rbuf, \
			rcount, rtype, root, comm, req); \
}
I_ROOTED(Igather, 1)
I_ROOTED(Iscatter, 0)

/* one count and type a side: Iallgather, Ialltoall, the neighbourhood
 * allgather and alltoall (blocking: req NULL, fn not called with it) */
typedef int (*blocks_fn)(const void *, int, MPI_Datatype, void *, int,
			 MPI_Datatype, MPI_Comm, MPI_Request *);
typedef int (*blocks_b_fn)(const void *, int, MPI_Datatype, void *, int,
			   MPI_Datatype, MPI_Comm);

static void blocks_args(struct mw_call *c, int nbr, const void *sbuf,
			int scount, MPI_Datatype stype, int rcount,
			MPI_Datatype rtype, MPI_Comm comm, int64_t rid)
{
	if (nbr)
		nbr_blocks(c, comm, scount, stype, rcount, rtype, rid);
	else
		mw_coll_allgather(c, sbuf, scount, stype, rcount, rtype, comm,
				  rid);
}

static int i_blocks(struct mw_call *c, blocks_fn fn, int nbr,
		    const void *sbuf, int scount, MPI_Datatype stype,
		    void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
		    MPI_Request *req)
{
	int rc = fn(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);

	blocks_args(c, nbr, sbuf, scount, stype, rcount, rtype, comm,
		    coll_req(rc, comm, req));
	return rc;
}

#define I_BLOCKS(name, nbr) \
static int do_##name(struct mw_call *c, const void *sbuf, int scount, \
		     MPI_Datatype stype, void *rbuf, int rcount, \
		     MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req) \
{ \
	return i_blocks(c, next_##name, nbr, sbuf, scount, stype, rbuf, \
			rcount, rtype, comm, req); \
}
I_BLOCKS(Iallgather, 0)
I_BLOCKS(Ialltoall, 0)
I_BLOCKS(Ineighbor_allgather, 1)
I_BLOCKS(Ineighbor_alltoall, 1)

static int b_blocks(struct mw_call *c, blocks_b_fn fn, const void *sbuf,
		    int scount, MPI_Datatype stype, void *rbuf, int rcount,
		    MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = fn(sbuf, scount, stype, rbuf, rcount, rtype, comm);

	blocks_args(c, 1, sbuf, scount, stype, rcount, rtype, comm, 0);
	return rc;
}

#define B_BLOCKS(name) \
static int do_##name(struct mw_call *c, const void *sbuf, int scount, \
		     MPI_Datatype stype, void *rbuf, int rcount, \
		     MPI_Datatype rtype, MPI_Comm comm) \
{ \
	return b_blocks(c, next_##name, sbuf, scount, stype, rbuf, rcount, \
			rtype, comm); \
}
B_BLOCKS(Neighbor_allgather)
B_BLOCKS(Neighbor_alltoall)

/* a count a rank or neighbour on the receive side: Iallgatherv, the
 * neighbourhood allgatherv (blocking: req NULL) */
typedef int (*gv_fn)(const void *, int, MPI_Datatype, void *, const int *,
		     const int *, MPI_Datatype, MPI_Comm, MPI_Request *);

static void gv_args(struct mw_call *c, int nbr, const void *sbuf,
		    int scount, MPI_Datatype stype, const int *rcounts,
		    MPI_Datatype rtype, MPI_Comm comm, int64_t rid)
{
	if (nbr)
		nbr_counts(c, comm, scount, NULL, stype, NULL, rcounts, rtype,
			   NULL, rid);
	else
		mw_coll_allgatherv(c, sbuf, scount, stype, rcounts, rtype,
				   comm, rid);
}

static int i_gv(struct mw_call *c, gv_fn fn, int nbr, const void *sbuf,
		int scount, MPI_Datatype stype, void *rbuf,
		const int *rcounts, const int *displs, MPI_Datatype rtype,
		MPI_Comm comm, MPI_Request *req)
{
	int rc = fn(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
		    req);

	gv_args(c, nbr, sbuf, scount, stype, rcounts, rtype, comm,
		coll_req(rc, comm, req));
	return rc;
}

#define I_GV(name, nbr) \
static int do_##name(struct mw_call *c, const void *sbuf, int scount, \
		     MPI_Datatype stype, void *rbuf, const int rcounts[], \
		     const int displs[], MPI_Datatype rtype, MPI_Comm comm, \
		     MPI_Request *req) \
{ \
	return i_gv(c, next_##name, nbr, sbuf, scount, stype, rbuf, rcounts, \
		    displs, rtype, comm, req); \
}
I_GV(Iallgatherv, 0)
I_GV(Ineighbor_allgatherv, 1)

static int do_Neighbor_allgatherv(struct mw_call *c, const void *sbuf,
				  int scount, MPI_Datatype stype, void *rbuf,
				  const int rcounts[], const int displs[],
				  MPI_Datatype rtype, MPI_Comm comm)
{
	int rc = next_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts,
					  displs, rtype, comm);

	gv_args(c, 1, sbuf, scount, stype, rcounts, rtype, comm, 0);
	return rc;
}

/* counts a rank or neighbour on both sides, one type or a type each:
 * Ialltoallv, Ialltoallw, Alltoallw and the neighbourhood alltoallv and
 * alltoallw, blocking or not (the displacements' type, int or MPI_Aint,
 * is the signature's only difference) */
static void vw_args(struct mw_call *c, int nbr, const void *sbuf,
		    const int *scounts, const MPI_Datatype *stypes,
		    MPI_Datatype stype, const int *rcounts,
		    const MPI_Datatype *rtypes, MPI_Datatype rtype,
		    MPI_Comm comm, int64_t rid)
{
	if (nbr)
		nbr_counts(c, comm, 0, scounts, stype, stypes, rcounts, rtype,
			   rtypes, rid);
	else
		mw_coll_alltoallv(c, sbuf, scounts, stypes, stype, rcounts,
				  rtypes, rtype, comm, rid);
}

/* the v forms (one type a side); REQ: the request argument or nothing */
#define VW_V(name, nbr, disp, ...) \
static int do_##name(struct mw_call *c, const void *sbuf, \
		     const int scounts[], const disp sdispls[], \
		     MPI_Datatype stype, void *rbuf, const int rcounts[], \
		     const disp rdispls[], MPI_Datatype rtype, MPI_Comm comm \
		     __VA_OPT__(, MPI_Request *__VA_ARGS__)) \
{ \
	int rc = next_##name(sbuf, scounts, sdispls, stype, rbuf, rcounts, \
			     rdispls, rtype, comm __VA_OPT__(, __VA_ARGS__)); \
\
	vw_args(c, nbr, sbuf, scounts, NULL, stype, rcounts, NULL, rtype, \
		comm, __VA_OPT__(coll_req(rc, comm, __VA_ARGS__) +) 0); \
	return rc; \
}
VW_V(Ialltoallv, 0, int, req)
VW_V(Neighbor_alltoallv, 1, int)
VW_V(Ineighbor_alltoallv, 1, int, req)

/* the w forms (a type a rank or neighbour) */
#define VW_W(name, nbr, disp, ...) \
static int do_##name(struct mw_call *c, const void *sbuf, \
		     const int scounts[], const disp sdispls[], \
		     const MPI_Datatype stypes[], void *rbuf, \
		     const int rcounts[], const disp rdispls[], \
		     const MPI_Datatype rtypes[], MPI_Comm comm \
		     __VA_OPT__(, MPI_Request *__VA_ARGS__)) \
{ \
	int rc = next_##name(sbuf, scounts, sdispls, stypes, rbuf, rcounts, \
			     rdispls, rtypes, comm __VA_OPT__(, __VA_ARGS__)); \
\
	vw_args(c, nbr, sbuf, scounts, stypes, MPI_DATATYPE_NULL, rcounts, \
		rtypes, MPI_DATATYPE_NULL, comm, \
		__VA_OPT__(coll_req(rc, comm, __VA_ARGS__) +) 0); \
	return rc; \
}
VW_W(Alltoallw, 0, int)
VW_W(Ialltoallw, 0, int, req)
VW_W(Neighbor_alltoallw, 1, MPI_Aint)
VW_W(Ineighbor_alltoallw, 1, MPI_Aint, req)

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
