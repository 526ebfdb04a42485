/*
 * sensor/mpi_table.h - the small hash table of the MPI sensor.
 *
 * Maps an MPI handle value (a pointer in Open MPI, an int in MPICH, both
 * widened to 64 bits) to a fixed-size record: the communicator table and
 * the request table of sensor/mpi_wrap.c. Open addressing with linear
 * probing and backward-shift deletion; the capacity doubles up to a maximum
 * given at creation and never beyond. Pure C, no MPI, no locking: callers
 * serialise access.
 *
 * Above it, struct mw_ids: the tables of handles the sensor names with ids
 * of its own (files, windows, groups), each behind its own mutex.
 */
#ifndef TAPESTRY_SENSOR_MPI_TABLE_H
#define TAPESTRY_SENSOR_MPI_TABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mw_tab;

/* A table of records of valsize bytes, starting with room for cap records
 * and growing to at most max (both rounded up to powers of two, cap >= 8).
 * Returns NULL on bad arguments (valsize 0 or over 4096, cap > max) or
 * out of memory. */
__attribute__((visibility("hidden")))
struct mw_tab *mw_tab_new(size_t valsize, size_t cap, size_t max);

/* Release t and its records; NULL is a no-op. */
__attribute__((visibility("hidden")))
void mw_tab_free(struct mw_tab *t);

/* The record of key, or NULL if absent. The pointer stays valid until the
 * next mw_tab_put or mw_tab_del on t. */
__attribute__((visibility("hidden")))
void *mw_tab_get(struct mw_tab *t, uint64_t key);

/* The record of key, created zero-filled if absent (*created set to 1, else
 * 0; created may be NULL). NULL when the table is at its maximum size and
 * full, or growing failed: the caller then goes without a record. Same
 * pointer lifetime as mw_tab_get. */
__attribute__((visibility("hidden")))
void *mw_tab_put(struct mw_tab *t, uint64_t key, int *created);

/* Remove key: 0, or PROTO_E_NOTFOUND when absent. */
__attribute__((visibility("hidden")))
int mw_tab_del(struct mw_tab *t, uint64_t key);

/* Number of records held. */
__attribute__((visibility("hidden")))
size_t mw_tab_count(const struct mw_tab *t);

/* Call fn(key, record, arg) for every record (no put/del from fn). */
__attribute__((visibility("hidden")))
void mw_tab_each(struct mw_tab *t, void (*fn)(uint64_t, void *, void *),
		 void *arg);

/* Invariant check for tests: 0 when every record is reachable from its
 * home slot, the count matches and the load is at most 3/4; else
 * PROTO_E_STATE. */
__attribute__((visibility("hidden")))
int mw_tab_check(const struct mw_tab *t);

/* The key of a handle value h (any handle type: its bytes, widened). */
#define MW_KEY(h) mw_key(&(h), sizeof(h))
static inline uint64_t mw_key(const void *h, size_t n)
{
	uint64_t k = 0;

	memcpy(&k, h, n < sizeof(k) ? n : sizeof(k));
	return k;
}

/* Handles named by ids 1, 2 ... in the order they were added: records of
 * valsize bytes that open with their int64_t id, in a table made at the
 * first add (cap, max as for mw_tab_new), behind lock (never held with
 * another lock); drop (may be NULL) frees what a record holds. */
struct mw_ids {
	pthread_mutex_t lock;
	struct mw_tab *tab;
	int64_t next;
	size_t valsize, cap, max;
	void (*drop)(void *rec);
};
#define MW_IDS_INIT(type, cap, max, drop) \
	{ PTHREAD_MUTEX_INITIALIZER, NULL, 1, sizeof(type), cap, max, drop }

/* Lock t and give key a zero-filled record with the next id; the record
 * of a handle MPI reused after a free the sensor did not see is dropped
 * first. Returns the record, NULL when the table is full or out of memory;
 * t stays locked either way: mw_ids_unlock. */
__attribute__((visibility("hidden")))
void *mw_ids_add(struct mw_ids *t, uint64_t key);

/* Lock t and return key's record (NULL: none); mw_ids_unlock after. */
__attribute__((visibility("hidden")))
void *mw_ids_get(struct mw_ids *t, uint64_t key);

__attribute__((visibility("hidden")))
void mw_ids_unlock(struct mw_ids *t);

/* The id of key (0: none). */
__attribute__((visibility("hidden")))
int64_t mw_ids_id(struct mw_ids *t, uint64_t key);

/* Drop and remove key's record, if any. */
__attribute__((visibility("hidden")))
void mw_ids_del(struct mw_ids *t, uint64_t key);

#endif
