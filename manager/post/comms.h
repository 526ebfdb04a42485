/*
 * manager/post/comms.h - job-wide names for MPI communicators.
 *
 * The MPI sensor numbers communicators per process (0 MPI_COMM_WORLD,
 * 1 MPI_COMM_SELF, then 2, 3 ... in creation order), so one id may name
 * different communicators on two ranks (the even and the odd half of a
 * split are both 2) and one communicator may have different ids (a rank
 * that made one more communicator before numbers the next one apart).
 * Creating a communicator is collective over its parent, and MPI wants the
 * members of a communicator to make their collective calls on it in the
 * same order: the k-th creation call a rank makes on a parent is the k-th
 * one of every member. So a communicator made by MPI_Comm_split,
 * MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_idup, MPI_Comm_create,
 * MPI_Comm_split_type, MPI_Cart_create, MPI_Cart_sub, MPI_Graph_create,
 * MPI_Dist_graph_create or MPI_Dist_graph_create_adjacent is named
 * job-wide by (its parent's name, k, what tells apart the communicators
 * one call makes: the split's colour, else their lowest world rank, the
 * event's leader, since they are disjoint), interned into a dense number.
 * MPI_Comm_idup is a collective on the parent like the others (MPI orders
 * blocking and nonblocking collectives on a communicator alike), so it
 * takes its k at the call.
 *
 * Two constructors are collective over fewer processes than a parent:
 *  - MPI_Comm_create_group(comm, group, tag) only over the group's members,
 *    so ranks in different groups count different calls on the parent. Its
 *    event carries gkey, the sensor's hash of the group's sorted world
 *    ranks and the tag; the communicator is named (parent's name, gkey, k =
 *    the k-th create_group with that parent and gkey on this rank). Every
 *    member makes these calls in one order: two with the same members and
 *    tag could otherwise deadlock if collectives synchronise (the standard's
 *    collective correctness rule: a correct program must not), and
 *    concurrent ones from threads must differ in tag or comm (the
 *    standard, at MPI_COMM_CREATE_GROUP).
 *  - MPI_Intercomm_merge over both groups of an intercommunicator, whose
 *    two sides have different local parents: no parent name is common to
 *    all members. The merged group is, so it is named (merge, gkey of its
 *    sorted world ranks, k = the k-th merge with that gkey on this rank),
 *    by the same ordering argument.
 *  - MPI_Intercomm_create over both groups, whose local communicators
 *    differ: its event's ARRAY carries gkey, the key of both groups'
 *    world ranks and the tag (traces from before it have no ARRAY: their
 *    intercommunicators stay unnamed); named (inter, gkey, k = the k-th
 *    MPI_Intercomm_create with that gkey on this rank), by the same
 *    argument (the standard: calls on overlapping groups must not
 *    deadlock, so they are made in one order).
 * A gkey of -1 (a member outside MPI_COMM_WORLD, e.g. spawned, or the
 * sensor out of memory) leaves the communicator unnamed and is not counted.
 * Two member sets of one hash would share names: 2^-63 a pair.
 *
 * An intercommunicator's name is marked (mgr_comms_inter): causality and
 * the correction take a collective on a named communicator for an
 * intracommunicator collective, which intercommunicator ones are not (each
 * side gets the other's data), so mgr_comms_next_coll gives them no
 * instance; point-to-point messages on it are matched by name like any.
 * What MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_idup and
 * MPI_Comm_split make on an intercommunicator is one too, named as above
 * and marked; MPI_Comm_create on one stays unnamed (its leader is the
 * remote group's, which differs between the two sides). Names:
 *   0    MPI_COMM_WORLD;
 *   > 0  made by one of those traced calls on a named parent (merge,
 *        intercomm_create: any parent): the same on every member;
 *   < 0  any other (MPI_COMM_SELF, made by a call the sensor does not
 *        wrap, whose parent has no name, or by a constructor without a
 *        leader or gkey): -(local id + 2), meaningful within its stream
 *        only, as the local id was.
 * Feed every MPI event of a stream in the stream's order (creations come
 * before uses). Memory: three small table entries per creation event, at
 * most MGR_COMMS_MAX; beyond, new communicators stay unnamed (counted).
 */
#ifndef TAPESTRY_MGR_COMMS_H
#define TAPESTRY_MGR_COMMS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/event.h"

#define MGR_COMMS_MAX (1u << 22)

struct mgr_comms;

struct mgr_comms_stats {
	uint64_t created;	/* creation events with a communicator made */
	uint64_t named;		/* communicators with a job-wide name */
	uint64_t unnamed;	/* made on an unnamed parent, or past the cap */
	uint64_t inter;		/* of the named, intercommunicators */
};

/* NULL on allocation failure. */
struct mgr_comms *mgr_comms_new(void);

/* Take one event of stream with its ARRAY values (array NULL, narray 0:
 * none): the constructors' events name what they made. 0, or
 * PROTO_E_NOMEM. */
int mgr_comms_event(struct mgr_comms *cm, uint64_t stream,
		    const struct proto_event *ev, const int64_t *array,
		    size_t narray);

/* 1 when name is an intercommunicator's (see above), else 0. */
int mgr_comms_inter(const struct mgr_comms *cm, int64_t name);

/* The job-wide name of stream's communicator 'local' (see above). */
int64_t mgr_comms_name(const struct mgr_comms *cm, uint64_t stream,
		       int64_t local);

/* The stream's own rank in its named communicator 'local' (the
 * constructor's myrank), -1 when unknown (MPI_COMM_WORLD: the stream's
 * world rank, not known here). Traces from before myrank say 0. */
int64_t mgr_comms_rank(const struct mgr_comms *cm, uint64_t stream, int64_t local);

/* For stream's intercommunicator 'local' (named): the lowest world rank of
 * the other group as its MPI_Intercomm_create saw it (inherited by what is
 * made on it), so the same on every member of one group and another on the
 * other's: what tells the two groups apart. -1 otherwise or unknown. */
int64_t mgr_comms_side(const struct mgr_comms *cm, uint64_t stream, int64_t local);

/* How many collectives stream made on the communicator named 'name'
 * before this one (counted here: call once per collective event, in the
 * stream's order, one caller per job). The n-th collective of every
 * member of a communicator is one instance: (name, n) names it job-wide.
 * -1 for an unnamed communicator (name < 0), an intercommunicator, or
 * with *rc = PROTO_E_NOMEM. */
int64_t mgr_comms_next_coll(struct mgr_comms *cm, uint64_t stream,
			    int64_t name, int *rc);

/* Who must have entered a collective before a member leaves it: everyone
 * (barrier, allreduce, allgather(v), alltoall(v), reduce_scatter), the
 * root for the others (bcast, scatter(v)), every other member for the root
 * (reduce, gather(v)), the members of lower rank (scan, exscan). 0 for a
 * type that is not a collective. Used by the repair and the correction. */
enum { MGR_CK_ALL = 1, MGR_CK_FROM_ROOT, MGR_CK_TO_ROOT, MGR_CK_PREFIX };
int mgr_comms_coll_kind(unsigned type);

const struct mgr_comms_stats *mgr_comms_stats(const struct mgr_comms *cm);

/* Free cm; NULL is a no-op. */
void mgr_comms_free(struct mgr_comms *cm);

#endif
