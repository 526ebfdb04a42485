/*
 * sensor/maptab.h - the file mappings the libc sensor knows (mmap of a
 * file recorded, its munmap recorded with the same path): a fixed table
 * shared by the program's threads, lock-free (a wrapper never blocks).
 *
 * A slot is claimed before it is filled: addr goes 0 -> MAPTAB_BUSY by
 * compare-and-swap, then len and path are written, then addr is stored
 * with release order; a reader matches addr with acquire order, so it
 * sees the path written for that addr. (Filling first and claiming after
 * let a thread that lost the claim overwrite the winner's path: a munmap
 * recorded with another thread's file, tests/sensor/test_maptab.c.)
 * Header-only so that the test links no wrapper.
 */
#ifndef TAPESTRY_SENSOR_MAPTAB_H
#define TAPESTRY_SENSOR_MAPTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MAPTAB_SLOTS 256
#define MAPTAB_BUSY ((uintptr_t)1)	/* claimed, being filled: never a
					 * mapping's address (page-aligned) */

struct sn_maptab {
	struct {
		_Atomic uintptr_t addr;	/* 0: free */
		size_t len;
		int64_t path;
	} slot[MAPTAB_SLOTS];
};

/* Remember the mapping at a (not NULL) of len bytes of file path. A full
 * table forgets it (its munmap is then not recorded). Thread-safe,
 * async-signal-safe. */
static inline void sn_maptab_add(struct sn_maptab *t, void *a, size_t len,
				 int64_t path)
{
	for (int i = 0; i < MAPTAB_SLOTS; i++) {
		uintptr_t z = 0;

		if (atomic_load_explicit(&t->slot[i].addr,
					 memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&t->slot[i].addr, &z,
						    MAPTAB_BUSY))
			continue;
		t->slot[i].len = len;
		t->slot[i].path = path;
		atomic_store_explicit(&t->slot[i].addr, (uintptr_t)a,
				      memory_order_release);
		return;
	}
}

/* The mapping that starts at a: 1 with its path in *path (take: forget
 * it), 0 when unknown. Thread-safe, async-signal-safe. */
static inline int sn_maptab_find(struct sn_maptab *t, void *a, int take,
				 int64_t *path)
{
	uintptr_t v = (uintptr_t)a;

	for (int i = 0; a && i < MAPTAB_SLOTS; i++) {
		uintptr_t w = v;

		if (atomic_load_explicit(&t->slot[i].addr,
					 memory_order_acquire) != v)
			continue;
		*path = t->slot[i].path;
		/* still that mapping's slot once the path is read: taken
		 * and refilled meanwhile, it holds another path */
		if (take ? !atomic_compare_exchange_strong(&t->slot[i].addr,
							   &w, 0) :
		    atomic_load_explicit(&t->slot[i].addr,
					 memory_order_acquire) != v)
			continue;
		return 1;
	}
	return 0;
}

#endif
