/*
 * sensor/mpi_req.c - the MPI sensor's request identities.
 *
 * A request handle is not an identity: Open MPI hands out one address
 * (ompi_request_empty) and MPICH one builtin handle (0x6c000001) for every
 * send that completed at once, so several outstanding requests of a rank
 * can share a value. Each request therefore gets an id of the sensor's own
 * (1, 2 ... per process), bound to its handle value only until it
 * completes or is freed. Records live in a hash table keyed by the handle,
 * each slot holding every live request of that value, oldest first.
 *
 * Which record a completion takes when a value is shared: the newest one
 * started through the same MPI_Request variable (the application waits on
 * the array it passed to the isends), else the oldest (the order of
 * starting). Persistent requests keep their record, inactive, between
 * activations; each MPI_Start gives the activation a new id.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "proto/error.h"
#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request handle");

#define REQ_TAB_MAX (1u << 20)	/* handle values */
#define REQ_LIVE_MAX (1u << 20)	/* records */

/* All live requests of one handle value, oldest first: in one while
 * cap == 0 (n <= 1), else in v. */
struct req_slot {
	uint32_t n, cap;
	struct mw_req one;
	struct mw_req *v;
};

static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *req_tab;
static int64_t req_next = 1;
static size_t req_live;

static uint64_t req_key(MPI_Request r)
{
	return MW_KEY(r);
}

static struct mw_req *slot_recs(struct req_slot *s)
{
	return s->cap ? s->v : &s->one;
}

static void slot_release(uint64_t key, void *val, void *arg)
{
	struct req_slot *s = val;

	(void)key;
	(void)arg;
	if (s->cap)
		free(s->v);
	s->v = NULL;
	s->cap = 0;
}

void mw_req_init(void)
{
	pthread_mutex_lock(&req_lock);
	if (!req_tab)
		req_tab = mw_tab_new(sizeof(struct req_slot), 64, REQ_TAB_MAX);
	pthread_mutex_unlock(&req_lock);
}

void mw_req_fini(void)
{
	pthread_mutex_lock(&req_lock);
	mw_tab_each(req_tab, slot_release, NULL);
	mw_tab_free(req_tab);
	req_tab = NULL;
	req_live = 0;
	pthread_mutex_unlock(&req_lock);
}

int64_t mw_req_new_id(void)
{
	int64_t id;

	pthread_mutex_lock(&req_lock);
	id = req_next++;
	pthread_mutex_unlock(&req_lock);
	return id;
}

/* Room for one more record in s: 0, or -1 (out of memory). */
static int slot_grow(struct req_slot *s)
{
	struct mw_req *v;
	uint32_t cap;

	if (s->cap == 0 && s->n == 0)
		return 0;
	if (s->cap && s->n < s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 4;
	v = s->cap ? realloc(s->v, cap * sizeof(*v)) :
		malloc(cap * sizeof(*v));
	if (!v)
		return -1;
	if (!s->cap)
		v[0] = s->one;
	s->v = v;
	s->cap = cap;
	return 0;
}

int64_t mw_req_start(MPI_Request r, const MPI_Request *where,
		     const struct mw_req *q)
{
	struct req_slot *s;
	int64_t id;

	pthread_mutex_lock(&req_lock);
	id = req_next++;
	if (r == MPI_REQUEST_NULL || req_live >= REQ_LIVE_MAX)
		goto out;
	s = mw_tab_put(req_tab, req_key(r), NULL);
	if (!s || slot_grow(s))
		goto out;
	slot_recs(s)[s->n] = *q;
	slot_recs(s)[s->n].id = id;
	slot_recs(s)[s->n].where = (uint64_t)(uintptr_t)where;
	s->n++;
	req_live++;
out:
	pthread_mutex_unlock(&req_lock);
	return id;
}

/* Index in s of the record a call on (r at where) means; want_active:
 * only active ones (completions), else only persistent ones (starts).
 * -1: none. */
static int slot_pick(struct req_slot *s, uint64_t where, int want_active)
{
	struct mw_req *v = slot_recs(s);
	int oldest = -1;

	for (int i = (int)s->n - 1; i >= 0; i--) {
		int ok = want_active ? v[i].active : v[i].persistent;

		if (!ok)
			continue;
		if (where && v[i].where == where)
			return i;
		oldest = i;
	}
	return oldest;
}

static void slot_remove(uint64_t key, struct req_slot *s, int i)
{
	struct mw_req *v = slot_recs(s);

	memmove(&v[i], &v[i + 1], (s->n - (uint32_t)i - 1) * sizeof(*v));
	s->n--;
	req_live--;
	if (s->n == 0) {
		slot_release(key, s, NULL);
		mw_tab_del(req_tab, key);
	}
}

int mw_req_take(MPI_Request r, const MPI_Request *where, int op,
		struct mw_req *out)
{
	struct req_slot *s;
	uint64_t key = req_key(r);
	int i, found = 0;

	memset(out, 0, sizeof(*out));
	out->peer = MW_PEER_UNKNOWN;
	if (r == MPI_REQUEST_NULL) {
		out->peer = MW_PEER_NULL;
		return 0;
	}
	pthread_mutex_lock(&req_lock);
	s = mw_tab_get(req_tab, key);
	if (!s)
		goto out;
	i = slot_pick(s, (uint64_t)(uintptr_t)where, op != MW_REQ_START);
	if (i < 0 && op == MW_REQ_FREE)
		i = slot_pick(s, (uint64_t)(uintptr_t)where, 0);
	if (i < 0) {
		/* an inactive persistent request: completes at once, empty */
		if (op == MW_REQ_COMPLETE && slot_pick(s, 0, 0) >= 0)
			out->peer = MW_PEER_NULL;
		goto out;
	}
	found = 1;
	if (op == MW_REQ_START) {
		slot_recs(s)[i].id = req_next++;
		slot_recs(s)[i].active = 1;
		slot_recs(s)[i].where = (uint64_t)(uintptr_t)where;
	}
	*out = slot_recs(s)[i];
	if (op == MW_REQ_FREE ||
	    (op == MW_REQ_COMPLETE && !slot_recs(s)[i].persistent))
		slot_remove(key, s, i);
	else if (op == MW_REQ_COMPLETE)
		slot_recs(s)[i].active = 0;
out:
	pthread_mutex_unlock(&req_lock);
	return found;
}

size_t mw_req_count(void)
{
	size_t n;

	pthread_mutex_lock(&req_lock);
	n = req_live;
	pthread_mutex_unlock(&req_lock);
	return n;
}

static void slot_count(uint64_t key, void *val, void *arg)
{
	struct req_slot *s = val;
	size_t *n = arg;

	(void)key;
	if (s->n == 0 || (s->cap == 0 && s->n > 1) || (s->cap && s->n > s->cap))
		n[1]++;
	n[0] += s->n;
}

int mw_req_check(void)
{
	size_t n[2] = {0, 0};
	int rc;

	pthread_mutex_lock(&req_lock);
	mw_tab_each(req_tab, slot_count, n);
	rc = mw_tab_check(req_tab);
	if (req_tab && (rc || n[1] || n[0] != req_live))
		rc = PROTO_E_STATE;
	pthread_mutex_unlock(&req_lock);
	return req_tab ? rc : 0;
}
