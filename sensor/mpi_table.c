/*
 * sensor/mpi_table.c - open-addressing hash table keyed by MPI handles.
 *
 * Slots hold a used byte, the key and the caller's record. The load factor
 * is kept at or below 3/4 so a probe always meets an empty slot; deletion
 * shifts the following cluster back instead of leaving tombstones, so a
 * table that sees millions of short-lived requests never degrades. Also
 * the id tables above it (struct mw_ids).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "sensor/mpi_table.h"

#define MW_TAB_VALMAX 4096

struct mw_tab {
	size_t valsize;
	size_t stride;		/* bytes per slot */
	size_t cap;		/* slots, a power of two */
	size_t max;		/* cap never exceeds this */
	size_t n;		/* records held */
	unsigned char *slots;
};

struct slot_head {
	uint64_t key;
	uint64_t used;
};

static size_t pow2_at_least(size_t v)
{
	size_t p = 8;

	while (p < v && p < ((size_t)1 << 40))
		p <<= 1;
	return p;
}

/* Finalizer of splitmix64: handles are aligned pointers or small ints,
 * both badly distributed in their low bits. */
static size_t hash64(uint64_t k)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return (size_t)k;
}

static struct slot_head *slot_at(const struct mw_tab *t, unsigned char *base,
				 size_t i)
{
	return (struct slot_head *)(void *)(base + i * t->stride);
}

struct mw_tab *mw_tab_new(size_t valsize, size_t cap, size_t max)
{
	struct mw_tab *t;

	if (valsize == 0 || valsize > MW_TAB_VALMAX || cap > max)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->valsize = valsize;
	t->stride = sizeof(struct slot_head) + ((valsize + 7) & ~(size_t)7);
	t->cap = pow2_at_least(cap);
	t->max = pow2_at_least(max);
	t->slots = calloc(t->cap, t->stride);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void mw_tab_free(struct mw_tab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static struct slot_head *find(struct mw_tab *t, uint64_t key)
{
	size_t mask = t->cap - 1;
	size_t i = hash64(key) & mask;

	for (;;) {
		struct slot_head *h = slot_at(t, t->slots, i);

		if (!h->used || h->key == key)
			return h;
		i = (i + 1) & mask;
	}
}

static int grow(struct mw_tab *t)
{
	size_t ncap = t->cap * 2, i;
	unsigned char *old = t->slots, *nslots;
	size_t ocap = t->cap;

	if (ncap > t->max)
		return PROTO_E_FULL;
	nslots = calloc(ncap, t->stride);
	if (!nslots)
		return PROTO_E_NOMEM;
	t->slots = nslots;
	t->cap = ncap;
	for (i = 0; i < ocap; i++) {
		struct slot_head *o = slot_at(t, old, i);

		if (o->used)
			memcpy(find(t, o->key), o, t->stride);
	}
	free(old);
	return 0;
}

void *mw_tab_get(struct mw_tab *t, uint64_t key)
{
	struct slot_head *h;

	if (!t)
		return NULL;
	h = find(t, key);
	return h->used ? (void *)(h + 1) : NULL;
}

void *mw_tab_put(struct mw_tab *t, uint64_t key, int *created)
{
	struct slot_head *h;

	if (created)
		*created = 0;
	if (!t)
		return NULL;
	h = find(t, key);
	if (h->used)
		return h + 1;
	if ((t->n + 1) * 4 > t->cap * 3) {
		if (grow(t))
			return NULL;
		h = find(t, key);
	}
	memset(h, 0, t->stride);
	h->key = key;
	h->used = 1;
	t->n++;
	if (created)
		*created = 1;
	return h + 1;
}

int mw_tab_del(struct mw_tab *t, uint64_t key)
{
	size_t mask, i, j;
	struct slot_head *h;

	if (!t)
		return PROTO_E_NOTFOUND;
	h = find(t, key);
	if (!h->used)
		return PROTO_E_NOTFOUND;
	mask = t->cap - 1;
	i = (size_t)((unsigned char *)h - t->slots) / t->stride;
	/* Backward shift: move later members of the cluster whose home slot
	 * is not in (i, j] into the hole, until an empty slot. */
	j = i;
	for (;;) {
		struct slot_head *hj;
		size_t home;

		j = (j + 1) & mask;
		hj = slot_at(t, t->slots, j);
		if (!hj->used)
			break;
		home = hash64(hj->key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			memcpy(slot_at(t, t->slots, i), hj, t->stride);
			i = j;
		}
	}
	memset(slot_at(t, t->slots, i), 0, t->stride);
	t->n--;
	return 0;
}

size_t mw_tab_count(const struct mw_tab *t)
{
	return t ? t->n : 0;
}

void mw_tab_each(struct mw_tab *t, void (*fn)(uint64_t, void *, void *),
		 void *arg)
{
	size_t i;

	if (!t || !fn)
		return;
	for (i = 0; i < t->cap; i++) {
		struct slot_head *h = slot_at(t, t->slots, i);

		if (h->used)
			fn(h->key, h + 1, arg);
	}
}

int mw_tab_check(const struct mw_tab *t)
{
	size_t i, n = 0, mask;

	if (!t)
		return PROTO_E_ARG;
	mask = t->cap - 1;
	if (t->cap & mask || t->cap > t->max || t->n * 4 > t->cap * 3)
		return PROTO_E_STATE;
	for (i = 0; i < t->cap; i++) {
		struct slot_head *h = slot_at(t, t->slots, i);
		size_t k;

		if (!h->used)
			continue;
		n++;
		/* every slot from home to i must be occupied */
		for (k = hash64(h->key) & mask; k != i; k = (k + 1) & mask)
			if (!slot_at(t, t->slots, k)->used)
				return PROTO_E_STATE;
	}
	return n == t->n ? 0 : PROTO_E_STATE;
}

/* ---- id tables ----------------------------------------------------------- */

void *mw_ids_get(struct mw_ids *t, uint64_t key)
{
	pthread_mutex_lock(&t->lock);
	return t->tab ? mw_tab_get(t->tab, key) : NULL;
}

void mw_ids_unlock(struct mw_ids *t)
{
	pthread_mutex_unlock(&t->lock);
}

/* With t locked: drop and remove key's record. */
static void ids_drop(struct mw_ids *t, uint64_t key)
{
	void *r = t->tab ? mw_tab_get(t->tab, key) : NULL;

	if (!r)
		return;
	if (t->drop)
		t->drop(r);
	mw_tab_del(t->tab, key);
}

void *mw_ids_add(struct mw_ids *t, uint64_t key)
{
	int64_t *r;

	pthread_mutex_lock(&t->lock);
	if (!t->tab)
		t->tab = mw_tab_new(t->valsize, t->cap, t->max);
	ids_drop(t, key);
	r = t->tab ? mw_tab_put(t->tab, key, NULL) : NULL;
	if (r)
		*r = t->next++;
	return r;
}

int64_t mw_ids_id(struct mw_ids *t, uint64_t key)
{
	int64_t *r = mw_ids_get(t, key), id = r ? *r : 0;

	mw_ids_unlock(t);
	return id;
}

void mw_ids_del(struct mw_ids *t, uint64_t key)
{
	pthread_mutex_lock(&t->lock);
	ids_drop(t, key);
	pthread_mutex_unlock(&t->lock);
}
