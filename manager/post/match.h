/*
 * manager/post/match.h - the manager's one MPI message matcher: which send a
 * receive got, by MPI's pairing rule, for causality (whole job,
 * causality.c) and the viewer exports (streaming, manager/export/export_viz.c).
 *
 * The rule. Messages travel on channels (source rank, destination rank,
 * communicator's job-wide name). A receive takes the first send of its
 * channel not yet taken whose tag it accepts: its own tag, or any tag for a
 * receive whose tag is MGR_MATCH_ANY (MPI_ANY_TAG not resolved by its
 * completion, a Sendrecv traced without its receive tag). A receive's source
 * is the actual one its completion recorded (MPI_ANY_SOURCE resolved), so
 * the sends of one channel are taken in their order per tag (MPI's
 * non-overtaking rule per (source, destination, communicator, tag)), and
 * receives take them in the order the caller hands them (their completion
 * order in the trace).
 *
 * Streaming. Sends and receives may be handed in any interleaving, as long
 * as the sends of one sender and the receives of one receiver come in their
 * own order: a receive with no send to take waits, a send with no waiting
 * receive to take it waits, and the pairs are the same as when every send
 * came first. Memory: the ends waiting (unmatched so far), with the
 * caller's payload of each, and a few words per channel and tag seen.
 */
#ifndef TAPESTRY_MGR_MATCH_H
#define TAPESTRY_MGR_MATCH_H

#include <stddef.h>
#include <stdint.h>

#define MGR_MATCH_ANY (-1)	/* a receive's tag: any (MPI_ANY_TAG's value
				 * in the traces) */
#define MGR_MATCH_CHANNELS_MAX (1u << 22)	/* (channel, tag) pairs */

/* A pair found: the send's and the receive's payloads (as handed in; valid
 * during the call), the send's tag and its number among the sends of its
 * channel with that tag (0, 1, ...). */
typedef void (*mgr_match_fn)(void *arg, const void *send, const void *recv,
			     int64_t tag, uint64_t ord);

struct mgr_match;

/* A matcher whose ends carry payload bytes each, holding at most max ends
 * waiting; fn(arg, ...) is told each pair as it is found. NULL: no memory. */
struct mgr_match *mgr_match_new(size_t payload, size_t max, mgr_match_fn fn,
				void *arg);
void mgr_match_free(struct mgr_match *m);

/* A send from rank src to rank dst on communicator comm (ranks >= 0;
 * comm, tag within 32 bits). 0, or PROTO_E_FIELD (out of those ranges),
 * PROTO_E_FULL (max ends waiting, or channels) or PROTO_E_NOMEM: then the
 * send is left out. *ord (when not NULL): its number on its channel and tag. */
int mgr_match_send(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm,
		   int64_t tag, const void *payload, uint64_t *ord);
/* A receive at dst of a message from src (tag MGR_MATCH_ANY: any); the
 * same returns. */
int mgr_match_recv(struct mgr_match *m, int64_t src, int64_t dst, int64_t comm,
		   int64_t tag, const void *payload);

/* Ends waiting (sends and receives not matched so far). */
size_t mgr_match_waiting(const struct mgr_match *m);

#endif
