/*
 * manager/post/mpi_ends.c - the ends of an MPI event (mpi_ends.h).
 */
#include "manager/post/events.h"
#include "manager/post/mpi_ends.h"

/* MPI_Startall: its ARRAY holds (req, peer, tag, bytes, kind) per request. */
static int startall(const struct proto_trace_event *te, mgr_end_fn fn, void *arg)
{
	int rc;

	for (size_t i = 0; te->array && i + 5 <= te->narray; i += 5) {
		const int64_t *q = te->array + i;
		struct mgr_end e = {q[4] == 1 ? MGR_END_ISEND : MGR_END_IRECV,
				    q[0], q[1], q[2], 0, q[3], 0};

		if ((rc = fn(arg, &e)))
			return rc;
	}
	return 0;
}

/* The requests of a completion's ARRAY (proto_ev_done). */
static int listed(const struct proto_trace_event *te, mgr_end_fn fn, void *arg)
{
	struct proto_done d;
	int rc;

	for (size_t i = 0; !proto_ev_done(te->ev->type, te->array, te->narray, i, &d); i++) {
		struct mgr_end e = {MGR_END_DONE, d.req, d.peer, d.tag, MGR_END_NOTAG, d.bytes, 1};

		if ((rc = fn(arg, &e)))
			return rc;
	}
	return 0;
}

int mgr_mpi_ends(const struct proto_trace_event *te, mgr_end_fn fn, void *arg)
{
	const struct proto_event *ev = te->ev;
	struct mgr_end e = {0, mgr_ev_field(ev, PROTO_F_req, 0),
			    mgr_ev_field(ev, PROTO_F_peer, -1), mgr_ev_field(ev, PROTO_F_tag, -1),
			    mgr_ev_field(ev, PROTO_F_comm, MGR_END_NOTAG),
			    mgr_ev_field(ev, PROTO_F_bytes, -1),
			    0};
	int rc;

	switch (proto_ev_base(ev->type)) {	/* the send modes a send ... */
	case PROTO_EV_MPI_SEND:
		e.kind = MGR_END_SEND;
		break;
	case PROTO_EV_MPI_RECV:
		e.kind = MGR_END_RECV;
		break;
	case PROTO_EV_MPI_ISEND:
		e.kind = MGR_END_ISEND;
		break;
	case PROTO_EV_MPI_IRECV:
		e.kind = MGR_END_IRECV;
		break;
	case PROTO_EV_MPI_START:
		e.kind = mgr_ev_field(ev, PROTO_F_kind, 0) == 1 ? MGR_END_ISEND : MGR_END_IRECV;
		break;
	case PROTO_EV_MPI_STARTALL:
		return startall(te, fn, arg);
	case PROTO_EV_MPI_SENDRECV:
		e.kind = MGR_END_SEND;
		if ((rc = fn(arg, &e)))
			return rc;
		e.kind = MGR_END_RECV;
		e.peer = mgr_ev_field(ev, PROTO_F_src, -1);
		e.bytes = mgr_ev_field(ev, PROTO_F_rbytes, -1);
		/* the receive's tag rides in the ARRAY (rtag, arrived, probe_ns) */
		e.tag = te->array && te->narray >= 1 ? te->array[0] : MGR_END_NOTAG;
		break;
	case PROTO_EV_MPI_ISENDRECV:	/* and Isendrecv_replace */
		/* the send: a message at the call, as a buffered send's; the
		 * receive: the request, completed as an Irecv's. ARRAY: the
		 * receive's tag and bytes asked for. */
		e.kind = MGR_END_SEND;
		e.req = 0;
		if ((rc = fn(arg, &e)))
			return rc;
		e.kind = MGR_END_IRECV;
		e.req = mgr_ev_field(ev, PROTO_F_req, 0);
		e.peer = mgr_ev_field(ev, PROTO_F_src, -1);
		e.tag = te->array && te->narray >= 1 ? te->array[0] : MGR_END_NOTAG;
		e.bytes = te->array && te->narray >= 2 ? te->array[1] : -1;
		break;
	case PROTO_EV_MPI_TEST:
		if (!mgr_ev_field(ev, PROTO_F_result, 0))
			return 0;	/* not complete yet */
		/* fall through */
	case PROTO_EV_MPI_WAIT:
	case PROTO_EV_MPI_WAITANY:	/* and Testany */
		e.kind = MGR_END_DONE;
		break;
	case PROTO_EV_MPI_REQUEST_FREE:
		e.kind = MGR_END_FREE;
		break;
	case PROTO_EV_MPI_WAITALL:
	case PROTO_EV_MPI_WAITSOME:
	case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTSOME:
		return listed(te, fn, arg);
	default:
		return 0;
	}
	return fn(arg, &e);
}
