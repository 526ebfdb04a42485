/*
 * manager/post/reqtab.c - the table of MPI requests in flight (reqtab.h):
 * the map (map.h) gives each request a slot of a pool, freed slots are
 * used again.
 */
#include <stdlib.h>
#include <string.h>

#include "manager/post/grow.h"
#include "manager/post/reqtab.h"
#include "proto/error.h"

void mgr_reqtab_init(struct mgr_reqtab *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	mgr_map_init(&t->map, max < UINT32_MAX ? max : UINT32_MAX);
}

void mgr_reqtab_clear(struct mgr_reqtab *t)
{
	mgr_map_clear(&t->map);
	free(t->pool);
	free(t->freed);
	t->pool = NULL;
	t->freed = NULL;
	t->npool = t->cappool = t->nfreed = t->capfreed = 0;
}

int mgr_reqtab_put(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		   const struct mgr_req *q)
{
	int64_t i = mgr_map_get(&t->map, proc, (uint64_t)req);
	int fresh = !t->nfreed, rc;
	uint32_t k;

	if (i >= 0) {		/* a handle reused */
		t->pool[i] = *q;
		return 0;
	}
	if (t->map.n >= t->map.max)
		return PROTO_E_FULL;
	if (t->nfreed) {
		k = t->freed[--t->nfreed];
	} else {
		if (mgr_grow((void **)&t->pool, &t->cappool, t->npool + 1, sizeof(*t->pool)))
			return PROTO_E_NOMEM;
		k = (uint32_t)t->npool++;
	}
	if ((rc = mgr_map_put(&t->map, proc, (uint64_t)req, k))) {
		if (fresh)		/* the slot back where it came from */
			t->npool--;
		else
			t->nfreed++;
		return rc;
	}
	t->pool[k] = *q;
	return 0;
}

const struct mgr_req *mgr_reqtab_get(const struct mgr_reqtab *t, uint64_t proc,
				     int64_t req)
{
	int64_t i = mgr_map_get(&t->map, proc, (uint64_t)req);

	return i < 0 ? NULL : &t->pool[i];
}

int mgr_reqtab_take(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		    struct mgr_req *out)
{
	int64_t i = mgr_map_get(&t->map, proc, (uint64_t)req);

	if (i < 0)
		return 0;
	if (out)
		*out = t->pool[i];
	mgr_map_del(&t->map, proc, (uint64_t)req);
	if (mgr_grow((void **)&t->freed, &t->capfreed, t->nfreed + 1, sizeof(*t->freed)))
		return 1;	/* out of memory: the slot is lost, not the request's end */
	t->freed[t->nfreed++] = (uint32_t)i;
	return 1;
}
