/*
 * manager/post/mpi_ends.h - what an MPI event does to messages and requests:
 * the one reading of the MPI events that every reader of messages in the
 * manager shares (causality.c, perturb.c, and the viewer exports,
 * manager/export/export_viz.c; they pair messages through match.h), so that
 * a new call or a new field is taught to them in one place. The requests an event posts are remembered by its
 * reader in the request table (reqtab.h) until their completion.
 *
 * The ends of an event, in order (arguments by field name, events.def):
 *   MGR_END_SEND   a message sent: MPI_Send in every blocking mode, the send
 *                  of MPI_Sendrecv and MPI_Sendrecv_replace, and of
 *                  MPI_Isendrecv(_replace) (at the call, req 0);
 *   MGR_END_RECV   a message received: MPI_Recv, MPI_Mrecv, the receive of
 *                  MPI_Sendrecv(_replace) (its tag from the event's ARRAY;
 *                  MGR_END_NOTAG in traces from before it);
 *   MGR_END_ISEND  a send request started: MPI_Isend in every mode,
 *                  MPI_Start or an entry of MPI_Startall of a send;
 *   MGR_END_IRECV  a receive request started: MPI_Irecv, MPI_Imrecv, a
 *                  start of anything but a send, the receive of
 *                  MPI_Isendrecv(_replace) (its request; source from src,
 *                  tag and bytes from its ARRAY);
 *   MGR_END_DONE   a request completed: MPI_Wait, MPI_Waitany and
 *                  MPI_Testany (req 0: none), MPI_Test that found it done,
 *                  each request of the ARRAY of MPI_Waitall, MPI_Waitsome,
 *                  MPI_Testall, MPI_Testsome (listed; their tag -1 when the
 *                  ARRAY has none);
 *   MGR_END_FREE   a request freed: MPI_Request_free.
 * Every other event has none. Failed calls are the reader's to leave out.
 */
#ifndef TAPESTRY_MGR_MPI_ENDS_H
#define TAPESTRY_MGR_MPI_ENDS_H

#include <stdint.h>

#include "proto/trace.h"

enum mgr_end_kind {
	MGR_END_SEND = 1,
	MGR_END_RECV,
	MGR_END_ISEND,
	MGR_END_IRECV,
	MGR_END_DONE,
	MGR_END_FREE,
};

#define MGR_END_NOTAG INT64_MIN	/* the event does not say (a tag, a comm) */

struct mgr_end {
	int kind;		/* enum mgr_end_kind */
	int64_t req;		/* the request's id, 0: none */
	int64_t peer;		/* the other side's world rank (a completed
				 * receive: its actual source); < 0: none,
				 * any, MPI_PROC_NULL or unknown */
	int64_t tag;
	int64_t comm;		/* the rank's own id of the communicator (an
				 * MPI_Startall entry: 0, the world; its ARRAY
				 * has none), MGR_END_NOTAG when the event
				 * has none */
	int64_t bytes;		/* -1: not recorded */
	int listed;		/* a completion from its call's ARRAY */
};

/* Called per end; non-zero stops mgr_mpi_ends, which returns it. */
typedef int (*mgr_end_fn)(void *arg, const struct mgr_end *e);

/* Hand fn the ends of te in order: 0, or what fn returned non-zero. */
int mgr_mpi_ends(const struct proto_trace_event *te, mgr_end_fn fn, void *arg);

#endif
