/*
 * manager/post/reqtab.c - the table of MPI requests in flight (reqtab.h).
 */
#include <string.h>

#include "manager/post/grow.h"
#include "manager/post/reqtab.h"
#include "proto/error.h"

struct mgr_reqent {
	uint64_t proc;
	int64_t req;
	int used;
	struct mgr_req q;
};

void mgr_reqtab_init(struct mgr_reqtab *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

void mgr_reqtab_clear(struct mgr_reqtab *t)
{
	mgr_big_free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}

static size_t home(size_t cap, uint64_t proc, int64_t req)
{
	return (size_t)mgr_hash2(proc, (uint64_t)req) & (cap - 1);
}

/* The slot of (proc, req): its entry, or the free slot it would take. */
static size_t slot(const struct mgr_reqtab *t, uint64_t proc, int64_t req)
{
	size_t k = home(t->cap, proc, req);

	while (t->e[k].used && (t->e[k].proc != proc || t->e[k].req != req))
		k = (k + 1) & (t->cap - 1);
	return k;
}

/* Twice the capacity (at most half full): 0 or PROTO_E_NOMEM. */
static int grow(struct mgr_reqtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	struct mgr_reqtab nt = {NULL, ncap, t->n, t->max};
	int rc;

	if (!(nt.e = mgr_big_calloc(ncap, sizeof(*nt.e), &rc)))
		return rc;
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].used)
			nt.e[slot(&nt, t->e[i].proc, t->e[i].req)] = t->e[i];
	mgr_big_free(t->e);
	*t = nt;
	return 0;
}

int mgr_reqtab_put(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		   const struct mgr_req *q)
{
	size_t k;
	int rc;

	if (t->cap && t->e[k = slot(t, proc, req)].used) {
		t->e[k].q = *q;
		return 0;
	}
	if (t->n >= t->max)
		return PROTO_E_FULL;
	if ((t->n + 1) * 2 > t->cap && (rc = grow(t)))
		return rc;
	k = slot(t, proc, req);
	t->e[k] = (struct mgr_reqent){proc, req, 1, *q};
	t->n++;
	return 0;
}

const struct mgr_req *mgr_reqtab_get(const struct mgr_reqtab *t, uint64_t proc,
				     int64_t req)
{
	size_t k;

	if (!t->cap || !t->e[k = slot(t, proc, req)].used)
		return NULL;
	return &t->e[k].q;
}

int mgr_reqtab_take(struct mgr_reqtab *t, uint64_t proc, int64_t req,
		    struct mgr_req *out)
{
	size_t k, j;

	if (!t->cap || !t->e[k = slot(t, proc, req)].used)
		return 0;
	if (out)
		*out = t->e[k].q;
	/* backward shift: move up each later entry of the run whose home
	 * does not lie cyclically in (k, j] */
	for (j = k;;) {
		size_t h;

		t->e[k].used = 0;
		do {
			j = (j + 1) & (t->cap - 1);
			if (!t->e[j].used) {
				t->n--;
				return 1;
			}
			h = home(t->cap, t->e[j].proc, t->e[j].req);
		} while (k <= j ? (k < h && h <= j) : (k < h || h <= j));
		t->e[k] = t->e[j];
		k = j;
	}
}
