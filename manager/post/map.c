/*
 * manager/post/map.c - the manager's bounded hash map (map.h).
 */
#include <stdlib.h>
#include <string.h>

#include "manager/post/map.h"
#include "proto/error.h"

struct mgr_map_slot {
	uint64_t a, b;
	uint32_t v;
	uint32_t used;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

void mgr_map_init(struct mgr_map *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max;
}

void mgr_map_clear(struct mgr_map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

static size_t map_find(const struct mgr_map *m, uint64_t a, uint64_t b)
{
	size_t i = mix(a, b) & (m->cap - 1);

	while (m->slot[i].used && (m->slot[i].a != a || m->slot[i].b != b))
		i = (i + 1) & (m->cap - 1);
	return i;
}

int64_t mgr_map_get(const struct mgr_map *m, uint64_t a, uint64_t b)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = map_find(m, a, b);
	return m->slot[i].used ? (int64_t)m->slot[i].v : -1;
}

static int map_grow(struct mgr_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct mgr_map_slot *old = m->slot, *ns = calloc(ncap, sizeof(*ns));
	size_t ocap = m->cap;

	if (!ns)
		return PROTO_E_NOMEM;
	m->slot = ns;
	m->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			m->slot[map_find(m, old[i].a, old[i].b)] = old[i];
	free(old);
	return 0;
}

int mgr_map_put(struct mgr_map *m, uint64_t a, uint64_t b, uint32_t v)
{
	size_t i;
	int rc;

	if ((m->n + 1) * 2 > m->cap && (rc = map_grow(m)) != 0)
		return rc;
	i = map_find(m, a, b);
	if (!m->slot[i].used) {
		if (m->n >= m->max)
			return PROTO_E_FULL;
		m->n++;
	}
	m->slot[i] = (struct mgr_map_slot){a, b, v, 1};
	return 0;
}

void mgr_map_del(struct mgr_map *m, uint64_t a, uint64_t b)
{
	size_t i, j, k, mask = m->cap - 1;

	if (!m->cap)
		return;
	i = map_find(m, a, b);
	if (!m->slot[i].used)
		return;
	/* backward-shift deletion keeps every probe chain unbroken */
	for (j = (i + 1) & mask; m->slot[j].used; j = (j + 1) & mask) {
		k = mix(m->slot[j].a, m->slot[j].b) & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].used = 0;
	m->n--;
}
