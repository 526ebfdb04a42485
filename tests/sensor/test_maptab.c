/*
 * tests/sensor/test_maptab.c - sensor/maptab.h: the file mappings' table
 * under threads adding and taking at once (the libc sensor's mmap and
 * munmap of a multithreaded program).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sensor/maptab.h"

static struct sn_maptab tab;
static _Atomic long wrong, missing;

#define THREADS 4
#define ROUNDS 3000000

/* Each thread maps its own addresses with its own path and unmaps each at
 * once: every take must find the mapping with the path it was added with
 * (a slot filled before it was claimed took another thread's path about
 * 1 time in 2,000 here before maptab.h claimed first). */
static void *worker(void *arg)
{
	int64_t me = (intptr_t)arg, p;

	for (long i = 0; i < ROUNDS; i++) {
		void *a = (void *)(((uintptr_t)me << 40) |
				   ((uintptr_t)(i + 1) << 12));

		sn_maptab_add(&tab, a, 4096, me);
		if (!sn_maptab_find(&tab, a, 1, &p))
			missing++;
		else if (p != me)
			wrong++;
	}
	return NULL;
}

Test(maptab, threads_add_and_take)
{
	pthread_t t[THREADS];
	int64_t p;

	for (intptr_t i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker,
					    (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(wrong, 0, "%ld munmaps with another thread's path",
		     (long)wrong);
	cr_assert_eq(missing, 0, "%ld mappings not found", (long)missing);
	for (int i = 0; i < MAPTAB_SLOTS; i++)
		cr_assert_eq(atomic_load(&tab.slot[i].addr), 0);
	cr_assert_eq(sn_maptab_find(&tab, (void *)4096, 0, &p), 0);
}

/* One thread: found with or without taking, gone once taken, a full table
 * forgets, NULL never found. */
Test(maptab, add_find_take_full)
{
	static struct sn_maptab m;
	int64_t p = -1;

	sn_maptab_add(&m, (void *)0x10000, 100, 7);
	cr_assert_eq(sn_maptab_find(&m, (void *)0x10000, 0, &p), 1);
	cr_assert_eq(p, 7);
	cr_assert_eq(sn_maptab_find(&m, (void *)0x10000, 1, &p), 1);
	cr_assert_eq(sn_maptab_find(&m, (void *)0x10000, 0, &p), 0);
	cr_assert_eq(sn_maptab_find(&m, NULL, 0, &p), 0);
	for (uintptr_t i = 1; i <= MAPTAB_SLOTS + 1; i++)
		sn_maptab_add(&m, (void *)(i << 12), 1, (int64_t)i);
	cr_assert_eq(sn_maptab_find(&m, (void *)((uintptr_t)MAPTAB_SLOTS << 12),
				    0, &p), 1);
	cr_assert_eq(p, MAPTAB_SLOTS);
	cr_assert_eq(sn_maptab_find(&m, (void *)((uintptr_t)(MAPTAB_SLOTS + 1)
						 << 12), 0, &p), 0);
}
