/*
 * sensor/mpi_large.c - the MPI sensor's wrappers of the MPI-4 large-count
 * (_c) forms of point to point and collective calls (sensor/mpi_large.def;
 * those of MPI-IO and one-sided are in sensor/mpi_io.c and mpi_rma.c).
 *
 * Built against an MPI whose mpi.h says MPI_VERSION >= 4 (MPICH 4); empty
 * otherwise. Each wrapper records the event of its int form with the same
 * fields (communicator id, peer as a world rank, tag, bytes = count x
 * type size in 64 bits, request id bound as the int forms bind it), so
 * matching, exports and replays treat MPI_Send_c as an MPI_Send; MPI_Recv_c
 * probes, like MPI_Recv, whether its message had already arrived.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

#if MPI_VERSION >= 4

#define MW_TABLE "sensor/mpi_large.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* A send's event: peer, tag, comm, bytes. */
static void send_args(struct mw_call *c, MPI_Count count, MPI_Datatype type,
		      int dest, int tag, MPI_Comm comm)
{
	int64_t peer, id = mw_comm_id(comm, dest, &peer);

	proto_args_set(c->arg, peer, tag, id, mw_type_bytes(type, count), 0, 0);
}

#define LARGE_SEND(name) \
static int do_##name(struct mw_call *c, const void *buf, MPI_Count count, \
		     MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
{ \
	int rc = next_##name(buf, count, type, dest, tag, comm); \
\
	send_args(c, count, type, dest, tag, comm); \
	return rc; \
}
LARGE_SEND(Send_c)
LARGE_SEND(Ssend_c)
LARGE_SEND(Rsend_c)
LARGE_SEND(Bsend_c)

/* peer, tag, comm, bytes: the actual ones when the receive worked */
static int do_Recv_c(struct mw_call *c, void *buf, MPI_Count count,
		     MPI_Datatype type, int source, int tag, MPI_Comm comm,
		     MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t peer, id, bytes = mw_type_bytes(type, count);
	int64_t arrived = 0, probe = 0;
	MPI_Count n = 0;
	int rc;

	if (c->on)
		arrived = mw_probe_arrived(source, tag, comm, &probe);
	rc = next_Recv_c(buf, count, type, source, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		source = st->MPI_SOURCE;
		tag = st->MPI_TAG;
		bytes = PMPI_Get_elements_c(st, MPI_BYTE, &n) == MPI_SUCCESS &&
			n != MPI_UNDEFINED && n >= 0 ? (int64_t)n : 0;
	}
	id = mw_comm_id(comm, source, &peer);
	proto_args_set(c->arg, peer, tag, id, bytes, arrived, probe);
	return rc;
}

/* The exchanges, as MPI_Sendrecv and MPI_Sendrecv_replace record them
 * (the receive probed first). */
static int do_Sendrecv_c(struct mw_call *c, const void *sbuf, MPI_Count scount,
			 MPI_Datatype stype, int dest, int stag, void *rbuf,
			 MPI_Count rcount, MPI_Datatype rtype, int source,
			 int rtag, MPI_Comm comm, MPI_Status *status)
{
	return MW_SENDRECV(c, status, next_Sendrecv_c(sbuf, scount, stype,
			   dest, stag, rbuf, rcount, rtype, source, rtag, comm,
			   st), mw_type_bytes(stype, scount), dest, stag, source,
			   rtag, mw_type_bytes(rtype, rcount), comm);
}

static int do_Sendrecv_replace_c(struct mw_call *c, void *buf,
				 MPI_Count count, MPI_Datatype type, int dest,
				 int stag, int source, int rtag, MPI_Comm comm,
				 MPI_Status *status)
{
	int64_t bytes = mw_type_bytes(type, count);

	return MW_SENDRECV(c, status, next_Sendrecv_replace_c(buf, count, type,
			   dest, stag, source, rtag, comm, st), bytes, dest,
			   stag, source, rtag, bytes, comm);
}

/* A nonblocking send or receive, or a persistent request's constructor
 * (PERSISTENT: inactive until MPI_Start, which MPI_Start records), name_c
 * for each of MW_P2P_REQS: peer, tag, comm, bytes, request id. */
#define LARGE_REQ(name, BUF, KIND, PERSISTENT) \
static int do_##name##_c(struct mw_call *c, BUF *buf, MPI_Count count, \
		     MPI_Datatype type, int peer, int tag, MPI_Comm comm, \
		     MPI_Request *req) \
{ \
	int rc = next_##name##_c(buf, count, type, peer, tag, comm, req); \
	int64_t wpeer, id = mw_comm_id(comm, peer, &wpeer), rid = 0; \
	int64_t bytes = mw_type_bytes(type, count); \
\
	if (rc == MPI_SUCCESS && req) { \
		struct mw_req q = {.kind = KIND, .comm = id, \
				   .commkey = MW_KEY(comm), \
				   .peer = (int32_t)wpeer, .tag = tag, \
				   .bytes = bytes, .persistent = PERSISTENT, \
				   .active = !PERSISTENT}; \
\
		rid = mw_req_start(*req, req, &q); \
	} \
	proto_args_set(c->arg, wpeer, tag, id, bytes, rid, 0); \
	return rc; \
}
MW_P2P_REQS(LARGE_REQ)

static int do_Bcast_c(struct mw_call *c, void *buf, MPI_Count count,
		      MPI_Datatype type, int root, MPI_Comm comm)
{
	int rc = next_Bcast_c(buf, count, type, root, comm);

	proto_args_set(c->arg, mw_type_bytes(type, count), root,
		       mw_comm_id(comm, 0, NULL), 0, 0, 0);
	return rc;
}

static int do_Reduce_c(struct mw_call *c, const void *sbuf, void *rbuf,
		       MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
		       MPI_Comm comm)
{
	int rc = next_Reduce_c(sbuf, rbuf, count, type, op, root, comm);

	proto_args_set(c->arg, mw_type_bytes(type, count), root,
		       mw_comm_id(comm, 0, NULL), 0, 0, 0);
	return rc;
}

static int do_Allreduce_c(struct mw_call *c, const void *sbuf, void *rbuf,
			  MPI_Count count, MPI_Datatype type, MPI_Op op,
			  MPI_Comm comm)
{
	int rc = next_Allreduce_c(sbuf, rbuf, count, type, op, comm);

	proto_args_set(c->arg, mw_type_bytes(type, count),
		       mw_comm_id(comm, 0, NULL), 0, 0, 0, 0);
	return rc;
}

#include "sensor/mpi_gen.h"

#endif /* MPI_VERSION >= 4 */
