/*
 * collector/map.c - open-addressing hash map from u64 keys to pointers.
 *
 * Linear probing, backward-shift deletion (no tombstones), load <= 1/2.
 * Key 0 marks an empty slot, so key 0 itself is kept aside in slot cap
 * (the arrays have cap + 1 entries). Grows by doubling up to max entries.
 */
#include <stdlib.h>

#include "collector/internal.h"

static inline uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

void col_map_init(struct col_map *m, size_t max)
{
	m->keys = NULL;
	m->vals = NULL;
	m->cap = 0;
	m->n = 0;
	m->max = max ? max : COL_MAP_MAX;
}

void col_map_clear(struct col_map *m)
{
	free(m->keys);
	free(m->vals);
	col_map_init(m, m->max);
}

static size_t find(const struct col_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i;

	if (key == 0)
		return m->cap;
	for (i = mix(key) & mask; m->keys[i] && m->keys[i] != key;
	     i = (i + 1) & mask)
		;
	return i;
}

void *col_map_get(const struct col_map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = find(m, key);
	if (key == 0)
		return m->vals[i];
	return m->keys[i] == key ? m->vals[i] : NULL;
}

static int grow(struct col_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 16;
	struct col_map nm = {0};

	nm.keys = calloc(ncap + 1, sizeof(*nm.keys));
	nm.vals = calloc(ncap + 1, sizeof(*nm.vals));
	if (!nm.keys || !nm.vals) {
		free(nm.keys);
		free(nm.vals);
		return PROTO_E_NOMEM;
	}
	nm.cap = ncap;
	nm.max = m->max;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i]) {
			size_t j = find(&nm, m->keys[i]);

			nm.keys[j] = m->keys[i];
			nm.vals[j] = m->vals[i];
		}
	}
	if (m->cap)
		nm.vals[ncap] = m->vals[m->cap];
	nm.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = nm;
	return 0;
}

int col_map_put(struct col_map *m, uint64_t key, void *val)
{
	size_t i;
	int rc;

	/* NULL is "absent" to col_map_get: a NULL value would make a second
	 * put of its key a second member (n counted twice, key 0 counted
	 * with nothing kept) */
	if (!val)
		return PROTO_E_ARG;
	if (m->cap && col_map_get(m, key)) {
		m->vals[find(m, key)] = val;
		return 0;
	}
	if (m->n >= m->max)
		return PROTO_E_FULL;
	if (!m->cap || (m->n + 1) * 2 > m->cap) {
		rc = grow(m);
		if (rc)
			return rc;
	}
	i = find(m, key);
	if (key)
		m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void *col_map_del(struct col_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i, j;
	void *val;

	if (!m->cap || !col_map_get(m, key))
		return NULL;
	i = find(m, key);
	val = m->vals[i];
	m->vals[i] = NULL;
	m->n--;
	if (key == 0)
		return val;
	m->keys[i] = 0;
	/* Backward shift: move later members of the probe run into the gap. */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = mix(m->keys[j]) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			m->vals[j] = NULL;
			i = j;
		}
	}
	return val;
}

int col_map_next(const struct col_map *m, size_t *i, uint64_t *key,
		 void **val)
{
	if (!m->cap)
		return 0;
	while (*i <= m->cap) {
		size_t k = (*i)++;

		if (k == m->cap) {
			if (m->vals[k]) {
				*key = 0;
				*val = m->vals[k];
				return 1;
			}
			continue;
		}
		if (m->keys[k]) {
			*key = m->keys[k];
			*val = m->vals[k];
			return 1;
		}
	}
	return 0;
}

int col_map_check(const struct col_map *m)
{
	size_t n = 0;

	if (!m->cap)
		return m->n == 0 ? 0 : PROTO_E_STATE;
	if (m->cap & (m->cap - 1) || m->n * 2 > m->cap || m->n > m->max)
		return PROTO_E_STATE;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		n++;
		/* Every key is reachable from its home slot without a hole. */
		if (find(m, m->keys[i]) != i)
			return PROTO_E_STATE;
	}
	if (m->vals[m->cap])
		n++;
	return n == m->n ? 0 : PROTO_E_STATE;
}
