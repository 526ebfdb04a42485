/*
 * manager/post/reqtab.h - the one table of MPI requests in flight that the
 * manager's readers share: causality (what a completion received, on which
 * communicator, with which tag), perturbation (which call completed an
 * MPI_Isend) and the viewer exports (the message a completion ends).
 *
 * A request is named by its process (a stream id, or any 64-bit index of
 * the caller's) and the sensor's request id; the table holds what the
 * posting call knew (struct mgr_req) until the request completes; at most
 * max requests (the manager's hash map, map.h, to slots of a pool).
 */
#ifndef TAPESTRY_MGR_REQTAB_H
#define TAPESTRY_MGR_REQTAB_H

#include <stddef.h>
#include <stdint.h>

#include "manager/post/map.h"

/* What a posting call knew of its request. */
struct mgr_req {
	int kind;		/* the caller's (a send, a receive ...) */
	int64_t peer, tag, comm, bytes;
	uint64_t data;		/* the caller's (perturb: the posting record) */
};

struct mgr_reqtab {
	struct mgr_map map;	/* (proc, req) -> slot of pool */
	struct mgr_req *pool;
	uint32_t *freed;	/* slots of pool free again */
	size_t npool, cappool, nfreed, capfreed;
};

/* An empty table holding at most max requests. */
void mgr_reqtab_init(struct mgr_reqtab *t, size_t max);
/* Forget every request and free the memory (the table stays usable). */
void mgr_reqtab_clear(struct mgr_reqtab *t);
/* Remember request (proc, req): inserted, or replacing the one of the same
 * name (a handle reused). 0, PROTO_E_FULL past max (nothing stored), or
 * PROTO_E_NOMEM. */
int mgr_reqtab_put(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		   const struct mgr_req *q);
/* The request (proc, req), or NULL. Valid until the next put or take. */
const struct mgr_req *mgr_reqtab_get(const struct mgr_reqtab *t, uint64_t proc,
				     int64_t req);
/* Remove request (proc, req) into *out (NULL: dropped): 1 if it was
 * there, 0 if not. */
int mgr_reqtab_take(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		    struct mgr_req *out);
/* Requests held. */
static inline size_t mgr_reqtab_count(const struct mgr_reqtab *t)
{
	return t->map.n;
}

#endif
