/*
 * sensor/mpi_more.c - the MPI sensor's wrappers of sensor/mpi_more.def:
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4), the generalized
 * requests, MPI_Buffer_attach/detach and MPI_Reduce_local.
 *
 * An Isendrecv's request completes once for both its halves, so it is
 * bound as a receive (the source, tag and bytes asked for): its completion,
 * by any Wait or Test, records the actual source and bytes as an Irecv's
 * does. The send half is a message sent at the call (the readers treat it
 * as a buffered send's: manager/post/mpi_ends.c, the SimGrid export's
 * isend never waited), which is when the MPI may send it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

#define MW_TABLE "sensor/mpi_more.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

#if MPI_VERSION >= 4
/* The event of an Isendrecv(_replace) that returned rc: peer, tag, comm,
 * bytes, src, req + ARRAY (rtag, rbytes); the request bound as a
 * receive. */
static int exchange_args(struct mw_call *c, int rc, int64_t sbytes, int dest,
			 int stag, int64_t rbytes, int source, int rtag,
			 MPI_Comm comm, MPI_Request *req)
{
	int64_t peer, src, id = mw_comm_id(comm, dest, &peer), rid = 0, *arr;
	size_t n = 2;

	mw_comm_id(comm, source, &src);
	if (rc == MPI_SUCCESS && req) {
		struct mw_req q = {.kind = MW_REQ_RECV, .comm = id,
				   .commkey = MW_KEY(comm), .peer = (int32_t)src,
				   .tag = rtag, .bytes = rbytes, .active = 1,
				   .exchange = 1};

		rid = mw_req_start(*req, req, &q);
	}
	if (c->on && (arr = mw_call_array(c, &n)) && n == 2) {
		arr[0] = rtag;
		arr[1] = rbytes;
	}
	proto_args_set(c->arg, peer, stag, id, sbytes, src, rid);
	return rc;
}

static int do_Isendrecv(struct mw_call *c, const void *sbuf, int scount,
			MPI_Datatype stype, int dest, int stag, void *rbuf,
			int rcount, MPI_Datatype rtype, int source, int rtag,
			MPI_Comm comm, MPI_Request *req)
{
	int rc = next_Isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
				rtype, source, rtag, comm, req);

	return exchange_args(c, rc, mw_type_bytes(stype, scount), dest, stag,
			     mw_type_bytes(rtype, rcount), source, rtag, comm,
			     req);
}

static int do_Isendrecv_replace(struct mw_call *c, void *buf, int count,
				MPI_Datatype type, int dest, int stag,
				int source, int rtag, MPI_Comm comm,
				MPI_Request *req)
{
	int rc = next_Isendrecv_replace(buf, count, type, dest, stag, source,
					rtag, comm, req);
	int64_t bytes = mw_type_bytes(type, count);

	return exchange_args(c, rc, bytes, dest, stag, bytes, source, rtag,
			     comm, req);
}
#endif

/* A generalized request completes as a nonblocking collective's (peer -2,
 * bytes 0): its id at the start, the same id at its completion. */
static int do_Grequest_start(struct mw_call *c,
			     MPI_Grequest_query_function *query_fn,
			     MPI_Grequest_free_function *free_fn,
			     MPI_Grequest_cancel_function *cancel_fn,
			     void *extra_state, MPI_Request *req)
{
	int rc = next_Grequest_start(query_fn, free_fn, cancel_fn, extra_state,
				     req);
	int64_t rid = rc == MPI_SUCCESS ? mw_req_other(req, 0) : 0;

	proto_args_set(c->arg, rid, 0, 0, 0, 0, 0);
	return rc;
}

/* req: the id the request got at its start (0: not seen), left bound
 * for its Wait or Test. */
static int do_Grequest_complete(struct mw_call *c, MPI_Request req)
{
	struct mw_req q;
	int rc = next_Grequest_complete(req);

	mw_req_take(req, NULL, MW_REQ_PEEK, &q);
	proto_args_set(c->arg, q.id, 0, 0, 0, 0, 0);
	return rc;
}

static int do_Buffer_attach(struct mw_call *c, void *buffer, int size)
{
	int rc = next_Buffer_attach(buffer, size);

	proto_args_set(c->arg, size, 0, 0, 0, 0, 0);
	return rc;
}

/* bytes: the size of the buffer detached (0 when it failed) */
static int do_Buffer_detach(struct mw_call *c, void *buffer_addr, int *size)
{
	int rc = next_Buffer_detach(buffer_addr, size);

	proto_args_set(c->arg, rc == MPI_SUCCESS && size ? *size : 0, 0, 0, 0,
		       0, 0);
	return rc;
}

static int do_Reduce_local(struct mw_call *c, const void *inbuf,
			   void *inoutbuf, int count, MPI_Datatype type,
			   MPI_Op op)
{
	int rc = next_Reduce_local(inbuf, inoutbuf, count, type, op);

	proto_args_set(c->arg, mw_type_bytes(type, count), 0, 0, 0, 0, 0);
	return rc;
}

/* MPI_NAME(): prologue, do_NAME(), epilogue, from the table */
#include "sensor/mpi_gen.h"
