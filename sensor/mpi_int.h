/*
 * sensor/mpi_int.h - what the MPI sensor's files share (not installed).
 *
 * mpi_wrap.c owns the wrappers and their tables, mpi_compute.c the
 * computation volumes between MPI calls, mpi_fortran.c the Fortran
 * bindings of Open MPI. Everything here is hidden.
 */
#ifndef TAPESTRY_SENSOR_MPI_INT_H
#define TAPESTRY_SENSOR_MPI_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sensor/sensor.h"

/* Values an in-call array (ARRAY records after the event) holds without
 * allocating; longer ones are allocated, up to MW_ARR_MAX values. */
#define MW_ARR_SMALL 48
#define MW_ARR_MAX (1u << 18)

/* One wrapped call in progress: filled by the call's do_NAME(), emitted by
 * the common epilogue. */
struct mw_call {
	int on;				/* an event is being recorded */
	int flush;			/* after the event: 1 sn_flush_all(), 2 sn_ship_all() */
	uint16_t type;			/* PROTO_EV_*; __INVALID: no event */
	uint16_t flags;			/* PROTO_EVF_* */
	uint64_t t0;			/* entry time */
	int64_t arg[PROTO_EV_NARGS];
	int64_t *arr;			/* ARRAY values, NULL: none */
	size_t narr;
	int64_t arr_small[MW_ARR_SMALL];
};

/* Room for n ARRAY values in c (n clipped to MW_ARR_MAX; *n updated), or
 * NULL when it cannot be had: the event then goes without its array.
 * Released by mw_call_done(). */
SN_HIDDEN int64_t *mw_call_array(struct mw_call *c, size_t *n);

/* Release what mw_call_array() allocated. */
SN_HIDDEN void mw_call_done(struct mw_call *c);

/* Requests (mpi_req.c). Peers as recorded: world ranks, or these. */
#define MW_PEER_ANY (-1)
#define MW_PEER_NULL (-2)
#define MW_PEER_UNKNOWN (-3)
#define MW_PEER_CANCELLED (-4)	/* a completed request that was cancelled */

/* What a request is: kind MW_REQ_SEND (any send mode), MW_REQ_RECV,
 * MW_REQ_COLL (a nonblocking constructor's: no peer, no bytes), or
 * MW_REQ_IO (a nonblocking MPI-IO access: its completion's bytes are the
 * status's count). */
enum { MW_REQ_SEND = 1, MW_REQ_RECV = 2, MW_REQ_COLL = 3, MW_REQ_IO = 4 };

struct mw_req {
	int64_t id;		/* the sensor's id of this (activation of the) request */
	int64_t bytes;		/* asked for */
	int64_t comm;		/* communicator id */
	uint64_t commkey;	/* its handle, to translate the actual source */
	uint64_t where;		/* address of the MPI_Request variable at start */
	int32_t peer;		/* world rank asked for */
	int32_t tag;
	int32_t kind;
	int32_t persistent;	/* made by a *_init call: kept between activations */
	int32_t active;		/* started and not completed */
	int32_t exchange;	/* an Isendrecv's (mpi_more.c): MPICH 4.0
				 * leaves its status unwritten, so the
				 * source, tag and bytes asked for, when not
				 * wildcards, stand (mpi_wrap.c) */
};

/* What mw_req_take() does with the record it finds. */
enum {
	MW_REQ_COMPLETE,	/* completed: removed (persistent: made inactive) */
	MW_REQ_PEEK,		/* left as it is */
	MW_REQ_START,		/* a persistent request started: new id, active */
	MW_REQ_FREE		/* MPI_Request_free: removed, persistent or not */
};

/* Create / release the request table (after MPI_Init / at MPI_Finalize). */
SN_HIDDEN void mw_req_init(void);
SN_HIDDEN void mw_req_fini(void);

/* A fresh id (for a request whose record is not kept). Thread-safe. */
SN_HIDDEN int64_t mw_req_new_id(void);

/* Live records (tests, diagnostics). */
SN_HIDDEN size_t mw_req_count(void);

/* Invariant check for tests: 0 when the table is sound (every slot holds
 * 1..cap records, their sum is the live count, the hash table's own check
 * holds), else PROTO_E_STATE. */
SN_HIDDEN int mw_req_check(void);

#ifdef MPI_VERSION
/* Bind a fresh id to request r, started through the variable where
 * (NULL: unknown), with what q says (q->id is ignored; persistent and
 * active as q says). Returns the id, also when the table is full and the
 * record cannot be kept. Thread-safe. */
SN_HIDDEN int64_t mw_req_start(MPI_Request r, const MPI_Request *where,
			       const struct mw_req *q);

/* The record a call on r (through the variable where) means, copied to
 * *out, then op done to it. 1 if found; else 0 and *out zero with peer
 * MW_PEER_NULL (r is MPI_REQUEST_NULL or an inactive persistent request:
 * it completes at once, empty) or MW_PEER_UNKNOWN (never seen). */
SN_HIDDEN int mw_req_take(MPI_Request r, const MPI_Request *where, int op,
			  struct mw_req *out);
#endif

/* The common prologue and epilogue of every wrapper (mpi_wrap.c), shared
 * by the wrapper files expanded from other tables (mpi_io.c, mpi_ext.c):
 * mw_begin() opens the call's event of type (PROTO_EV__INVALID: none),
 * mw_end() emits it with rc's outcome. */
SN_HIDDEN void mw_begin(struct mw_call *c, unsigned type);
SN_HIDDEN void mw_end(struct mw_call *c, int rc);

/* The end of the last library call on this thread (set by every next_). */
extern __thread uint64_t mw_t_ret __attribute__((tls_model("initial-exec")));

/* 1 between MPI_Init and MPI_Finalize. */
SN_HIDDEN int mw_running(void);

#ifdef MPI_VERSION
/* Communicator id of comm (-1: none) and the world rank of its rank
 * 'rank' into *wrank (may be NULL; -3 when unknown). */
SN_HIDDEN int64_t mw_comm_id(MPI_Comm comm, int rank, int64_t *wrank);

/* Communicator id of comm (-1: none), its size and own rank (either may
 * be NULL; 0 and -1 when unknown). */
SN_HIDDEN int64_t mw_comm_info(MPI_Comm comm, int *size, int *myrank);

/* The arguments (and ARRAY) of a collective's event, shared by its
 * blocking and nonblocking forms (mpi_coll.c); rid: the nonblocking form's
 * request id, 0 for the blocking one (whose table has no req). rooted:
 * Bcast, Reduce; plain: Allreduce, Scan, Exscan; allgather: also
 * Alltoall; alltoallv: also Alltoallw (types given per rank, else one). */
SN_HIDDEN void mw_coll_rooted(struct mw_call *c, int64_t bytes, int root,
			      MPI_Comm comm, int64_t rid);
SN_HIDDEN void mw_coll_plain(struct mw_call *c, int64_t bytes, MPI_Comm comm,
			     int64_t rid);
SN_HIDDEN void mw_coll_gather(struct mw_call *c, const void *sbuf, int scount,
			      MPI_Datatype stype, int rcount,
			      MPI_Datatype rtype, int root, MPI_Comm comm,
			      int64_t rid);
SN_HIDDEN void mw_coll_gatherv(struct mw_call *c, const void *sbuf,
			       int scount, MPI_Datatype stype,
			       const int *rcounts, MPI_Datatype rtype,
			       int root, MPI_Comm comm, int64_t rid);
SN_HIDDEN void mw_coll_scatter(struct mw_call *c, int scount,
			       MPI_Datatype stype, const void *rbuf,
			       int rcount, MPI_Datatype rtype, int root,
			       MPI_Comm comm, int64_t rid);
SN_HIDDEN void mw_coll_scatterv(struct mw_call *c, const int *scounts,
				MPI_Datatype stype, const void *rbuf,
				int rcount, MPI_Datatype rtype, int root,
				MPI_Comm comm, int64_t rid);
SN_HIDDEN void mw_coll_allgather(struct mw_call *c, const void *sbuf,
				 int scount, MPI_Datatype stype, int rcount,
				 MPI_Datatype rtype, MPI_Comm comm,
				 int64_t rid);
SN_HIDDEN void mw_coll_allgatherv(struct mw_call *c, const void *sbuf,
				  int scount, MPI_Datatype stype,
				  const int *rcounts, MPI_Datatype rtype,
				  MPI_Comm comm, int64_t rid);
SN_HIDDEN void mw_coll_alltoallv(struct mw_call *c, const void *sbuf,
				 const int *scounts,
				 const MPI_Datatype *stypes,
				 MPI_Datatype stype, const int *rcounts,
				 const MPI_Datatype *rtypes,
				 MPI_Datatype rtype, MPI_Comm comm,
				 int64_t rid);
SN_HIDDEN void mw_coll_reduce_scatter(struct mw_call *c, const int *rcounts,
				      MPI_Datatype type, MPI_Comm comm,
				      int64_t rid);

/* Has the message a receive (source, tag, comm) would match already
 * arrived (1, or 0)? Called at the receive's entry, inside the call's
 * interval; *ns gets the probe's duration (the sensor's own time, which
 * the post-processing removes). MPI_PROC_NULL: arrived. */
SN_HIDDEN int64_t mw_probe_arrived(int source, int tag, MPI_Comm comm,
				   int64_t *ns);

/* The calls that start a request on a message, nonblocking or persistent
 * (made by a *_init call): X(name, buffer type, kind, persistent), for
 * their wrappers' definitions (mpi_wrap.c, and the MPI_Count forms
 * name_c of mpi_large.c). */
#define MW_P2P_REQS(X) \
	X(Isend, const void, MW_REQ_SEND, 0) \
	X(Issend, const void, MW_REQ_SEND, 0) \
	X(Ibsend, const void, MW_REQ_SEND, 0) \
	X(Irsend, const void, MW_REQ_SEND, 0) \
	X(Irecv, void, MW_REQ_RECV, 0) \
	X(Send_init, const void, MW_REQ_SEND, 1) \
	X(Bsend_init, const void, MW_REQ_SEND, 1) \
	X(Ssend_init, const void, MW_REQ_SEND, 1) \
	X(Rsend_init, const void, MW_REQ_SEND, 1) \
	X(Recv_init, void, MW_REQ_RECV, 1)

/* The event of a sendrecv (the receive half's actual source, tag and
 * bytes from st when rc succeeded, else source, rtag and rmax): peer, tag,
 * comm, bytes, src, rbytes + ARRAY of 3: receive tag, arrived, probe_ns
 * (the six arguments are taken). */
SN_HIDDEN void mw_sendrecv_args(struct mw_call *c, int rc, int64_t sbytes,
				int dest, int stag, int source, int rtag,
				int64_t rmax, MPI_Comm comm,
				const MPI_Status *st, int64_t arrived,
				int64_t probe);

/* The body of a sendrecv wrapper (int and MPI_Count forms): the receive
 * (source, rtag, comm) probed first when recording, then CALL, which
 * writes the status st (the caller's, or one of ours when it passed
 * MPI_STATUS_IGNORE), then mw_sendrecv_args; its value is CALL's. */
#define MW_SENDRECV(c, status, CALL, sbytes, dest, stag, source, rtag, \
		    rmax, comm) \
	({ \
		MPI_Status mw_mine_, *st = (status) == MPI_STATUS_IGNORE ? \
			&mw_mine_ : (status); \
		int64_t mw_arrived_ = 0, mw_probe_ = 0; \
		int mw_rc_; \
\
		if ((c)->on) \
			mw_arrived_ = mw_probe_arrived(source, rtag, comm, \
						       &mw_probe_); \
		mw_rc_ = (CALL); \
		mw_sendrecv_args(c, mw_rc_, sbytes, dest, stag, source, rtag, \
				 rmax, comm, st, mw_arrived_, mw_probe_); \
		mw_rc_; \
	})

/* The degrees of comm's topology into *in, *out (the neighbours a
 * neighbourhood collective receives from, sends to), its kind (MPI_CART,
 * MPI_GRAPH, MPI_DIST_GRAPH) into *topo and whether it is weighted; -1
 * when it has none (mpi_coll.c). */
SN_HIDDEN int mw_nbr_degrees(MPI_Comm comm, int *topo, int *in, int *out,
			     int *weighted);

/* A request that is neither a send nor a receive (an MPI-IO or RMA one),
 * just started through the variable *req: its sequential id, kept like a
 * nonblocking constructor's so that its completion records the same id
 * (peer -2, bytes as given); 0 when req is NULL. */
SN_HIDDEN int64_t mw_req_other(const MPI_Request *req, int64_t bytes);
/* mw_req_other() for a nonblocking MPI-IO access of bytes asked for: its
 * completion records what its status says moved (MPI_Get_elements_x on
 * MPI_BYTE), or what was asked when the status says nothing. */
SN_HIDDEN int64_t mw_req_io(const MPI_Request *req, int64_t bytes);

/* count elements of t in bytes: the type's size (the data, not its
 * extent), in 64 bits (a derived type may pass 2 GiB at a count of 1);
 * 0 for MPI_DATATYPE_NULL, a count of 0 or less, or an unknown size. */
SN_HIDDEN int64_t mw_type_bytes(MPI_Datatype t, int64_t count);
#endif

/* Computation between MPI calls (mpi_compute.c). */

/* Calibrate the flop rate (or take TAPESTRY_FLOP_RATE), probe
 * perf_event_open, and publish compute_method and flop_rate with sn_meta().
 * Called once, after MPI_Init; not thread-safe against itself. */
SN_HIDDEN void mw_compute_setup(void);

/* At an MPI call's entry (now: sn_now()): the COMPUTE event covering this
 * thread's time since its previous MPI exit, if there was one, kept for
 * mw_compute_release. A short
 * stretch during which the thread stayed on the CPU makes no system call
 * (method 0).
 * Must be called inside sn_enter()/sn_leave(), before any sn_slot() of the
 * call. */
SN_HIDDEN void mw_compute_enter(uint64_t now);

/* At the call's exit, before its record: emit 1 writes the COMPUTE event
 * mw_compute_enter made, 0 drops it (a poll folded into the previous one's
 * record covers its stretch: sensor/mpi_wrap.c). This thread only. */
SN_HIDDEN void mw_compute_release(int emit);

/* After the call's record: method 1's counter read, a CPU-time read when
 * the call may have left the CPU; the next stretch starts. */
SN_HIDDEN void mw_compute_open(void);

/* The calibrated rate in flop/s (0 before mw_compute_setup). */
SN_HIDDEN double mw_flop_rate(void);

/* 0: CPU time x calibrated rate; 1: perf instruction counts. */
SN_HIDDEN int mw_compute_method(void);

/* Thread CPU time in ns (CLOCK_THREAD_CPUTIME_ID), 0 on failure. */
SN_HIDDEN uint64_t mw_thread_cpu_ns(void);

/* Time a fixed loop of iters x 8 double multiply-adds on this thread's CPU
 * clock; flop/s, or 0 when the clock failed. */
SN_HIDDEN double mw_flop_loop_rate(uint64_t iters);

#endif
