/*
 * manager/post/causality.h - causality repair: the controlled logical clock.
 *
 * After the linear clock correction (manager/post/post.h) a message may still
 * appear received before it was sent. Messages are matched by the manager's
 * one matcher (match.h: FIFO per sender, receiver, communicator and tag,
 * MPI's non-overtaking rule, a receive of unknown tag taking any; the
 * communicator by its job-wide name, manager/post/comms.h). A forward
 * pass moves each violating receive to send + the minimum latency and shifts
 * every later event of the receiving process by the same amount (local
 * intervals keep their length); repeated until no violation remains, since a
 * moved process may send later. A backward pass then replaces each jump by a
 * ramp that starts at the end of the process's previous MPI event, so the
 * computation before the receive absorbs the jump instead of one instant.
 * Ramps never move a send (there is none inside a ramp), so they add no
 * violation. Collectives on MPI_COMM_WORLD and on named communicators are
 * logical messages (Becker et al.'s extension of the CLC): a member may
 * not leave before the members it waits for have entered (everyone: every
 * other member; bcast, scatter: the root; reduce, gather, the root: every
 * other member; scan, exscan: those of lower rank). A short exit is stretched:
 * a jump at the collective's end, ramped over the collective itself, so
 * entries never move for it and the passes converge. The result is a
 * per-stream shift function of global time.
 */
#ifndef TAPESTRY_MGR_CAUSALITY_H
#define TAPESTRY_MGR_CAUSALITY_H

#include <stdint.h>

struct mgr_post;
struct mgr_causality;

struct mgr_causality_stats {
	uint64_t sends, receives, matched;
	uint64_t unmatched_sends, unmatched_receives;
	uint64_t violations_before;	/* receive end < send start */
	uint64_t violations_after;	/* same test after repair: must be 0 */
	uint64_t jumps;			/* receives moved */
	unsigned passes;
	int64_t min_latency_ns;		/* the latency enforced */
	int64_t max_shift_ns;		/* largest shift of any event */
	int64_t max_interval_change_ns;	/* largest change of a local interval */
	/* collectives on MPI_COMM_WORLD and named communicators (instances):
	 * a member leaving before a member it waits for entered (every other
	 * one; a rooted one's root; the root: every other one) */
	uint64_t collectives;
	uint64_t coll_violations_before, coll_violations_after;	/* exits */
	uint64_t coll_moved;		/* exits moved (stretched) */
	/* the repair would have left more violations than it found: kept
	 * as steps (no ramps; steps 1), or not kept at all (reverted 1,
	 * jumps and exits moved are what was tried) */
	int steps, reverted;
};

/* Who gives and who takes data in a collective member of event type
 * (PROTO_EV_MPI_BARRIER .. _EXSCAN) with its bytes and rbytes (-1: not
 * recorded, counted as data), the root or not: an exit of a member that
 * takes waits for the entries of the members that give it data (MPI's
 * semantics: a bcast's root gives, its others take; a reduce's others
 * give, its root takes; a barrier's members all give and take; a call
 * that moves no byte, neither). */
void mgr_coll_role(unsigned type, int64_t bytes, int64_t rbytes, int is_root,
		   int *gives, int *takes);

/* Match the messages of dir (times through post) and repair. min_latency_ns:
 * the minimum latency a message is given (0: plain causality). NULL with *rc
 * (PROTO_E_NOMEM; PROTO_E_TOOBIG over MGR_CAUSALITY_MAX messages). */
#define MGR_CAUSALITY_MAX (64u << 20)
struct mgr_causality *mgr_causality_build(const char *dir,
					  const struct mgr_post *post,
					  int64_t min_latency_ns, int *rc);

/* The shift (ns, >= 0) to add to a global time t of stream. */
int64_t mgr_causality_shift(const struct mgr_causality *c, uint64_t stream,
			    uint64_t t);

const struct mgr_causality_stats *mgr_causality_stats(const struct mgr_causality *c);

/* The communicators' job-wide names the matching used (manager/post/comms.h). */
struct mgr_comms;
const struct mgr_comms *mgr_causality_comms(const struct mgr_causality *c);

/* Call fn once per matched message with the positions of its send event and
 * of its receive event, counted over every event proto_trace yields for the
 * job (0, 1, 2 ... in yield order: a second reader counts the same). */
typedef void (*mgr_causality_match_fn)(void *arg, uint64_t send_pos,
				       uint64_t recv_pos);
void mgr_causality_foreach(const struct mgr_causality *c,
			   mgr_causality_match_fn fn, void *arg);

/* Free c; NULL is a no-op. */
void mgr_causality_free(struct mgr_causality *c);

#endif
