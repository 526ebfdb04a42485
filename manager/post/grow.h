/*
 * manager/post/grow.h - small helpers shared by the post-processing modules:
 * growing arrays, big arrays that spill to disk, and a 2-key hash for open
 * addressing.
 *
 * Big arrays (mgr_big_*) hold what grows with the trace (records per MPI
 * event, message ends, bases). They live on the heap while the process's big
 * arrays together stay within TAPESTRY_SPILL_BYTES (default 64 MiB); beyond
 * it, each array of at least MGR_SPILL_MIN bytes moves to its own unlinked
 * file in TMPDIR (else /tmp), mapped MAP_SHARED: its pages are file pages the
 * kernel writes back and reclaims, not anonymous memory. The file's blocks
 * are reserved with posix_fallocate, so a full disk is an error (PROTO_E_FULL)
 * and never a SIGBUS. The pointer is the array itself (qsort, indexing); a
 * hidden header in front of it says where it lives. Not thread-safe per
 * array; the heap total is updated atomically.
 */
#ifndef TAPESTRY_MGR_GROW_H
#define TAPESTRY_MGR_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "proto/error.h"

/* Make *p (an array of *cap elements of size bytes) hold at least need
 * elements, doubling from 64. 0, or PROTO_E_NOMEM with *p unchanged. */
static inline int mgr_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / size || !(np = realloc(*p, ncap * size)))
		return PROTO_E_NOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

#define MGR_SPILL_DEFAULT ((size_t)64 << 20)	/* heap budget of big arrays */
#define MGR_SPILL_MIN ((size_t)1 << 20)	/* smaller arrays stay on the heap */
#define MGR_SORT_RUN ((size_t)4 << 20)	/* bytes a spilled sort's runs hold */
#define MGR_BIG_HDR 64			/* header in front: keeps 64-byte alignment */

struct mgr_big_hdr {
	size_t bytes;		/* usable bytes after the header */
	int fd;			/* the spill file; -1 on the heap */
};

/* Bytes of big arrays on the heap, process-wide (manager/post/grow.c). */
extern size_t mgr_big_heap_total;

/* The header in front of the big array p. */
static inline struct mgr_big_hdr *mgr_big_hdr(const void *p)
{
	return (struct mgr_big_hdr *)((char *)(uintptr_t)p - MGR_BIG_HDR);
}

/* The heap budget: TAPESTRY_SPILL_BYTES (a byte count; 0 spills every big
 * array), else MGR_SPILL_DEFAULT. Read at each decision so tests can set it. */
size_t mgr_spill_budget(void);

/* Make the big array *p (NULL, or from mgr_big_*) hold at least bytes
 * bytes, keeping its contents; it may move to a spill file. 0, or a negative
 * PROTO_E_* (NOMEM, FULL when the disk is, IO when TMPDIR is unusable) with
 * *p unchanged and still valid. */
int mgr_big_resize(void **p, size_t bytes);

/* mgr_grow for big arrays: make *p (NULL or from mgr_big_*) hold at least
 * need elements of size bytes, *cap doubling from 64. 0, or a negative
 * PROTO_E_* with *p and *cap unchanged. Free with mgr_big_free. Inline:
 * the common case (room enough) is a comparison. */
static inline int mgr_big_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	int rc;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / size)
		return PROTO_E_OVERFLOW;
	if ((rc = mgr_big_resize(p, ncap * size)))
		return rc;
	*cap = ncap;
	return 0;
}

/* A zeroed big array of n elements of size bytes, or NULL with *rc set
 * (PROTO_E_*). Free with mgr_big_free. */
void *mgr_big_calloc(size_t n, size_t size, int *rc);

/* 1 when the big array p lives in a spill file, 0 on the heap or NULL. */
static inline int mgr_big_spilled(const void *p)
{
	return p && mgr_big_hdr(p)->fd >= 0;
}

/* Release a big array (NULL: no-op); its spill file disappears with it. */
void mgr_big_free(void *p);

/* Sort the big array base (n elements of size bytes) by cmp. On the heap:
 * qsort, whose scratch is bounded like the array. Spilled: a merge sort
 * through a second big array as large (runs of MGR_SORT_RUN bytes by
 * qsort, then merged in passes over both in order), since qsort's merge
 * buffer would be anonymous memory growing with the trace: exactly what the
 * spill avoids; an in-place heapsort when there is no room for the second
 * array. Not stable: cmp must be a total order where equal elements may
 * come in any order. */
void mgr_big_sort(void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *));

/* Sums of durations and costs: saturated at +-MGR_SAT_MAX (2^61), so that
 * the absurd durations of a damaged trace (times stay within [0, 2^60],
 * manager/post/post.h) cannot overflow what adds them up, nor the few terms
 * added to a sum afterwards. */
#define MGR_SAT_MAX ((int64_t)1 << 61)
static inline int64_t mgr_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? MGR_SAT_MAX : -MGR_SAT_MAX;
	return r > MGR_SAT_MAX ? MGR_SAT_MAX : r < -MGR_SAT_MAX ? -MGR_SAT_MAX : r;
}

/* A wide product (counts x costs) saturated the same way. */
static inline int64_t mgr_sat_wide(__int128 v)
{
	return v > MGR_SAT_MAX ? MGR_SAT_MAX : v < -MGR_SAT_MAX ? -MGR_SAT_MAX : (int64_t)v;
}

/* Three-way comparison of two numbers: -1, 0 or 1. No hidden return: a
 * comparator chains them, if ((c = MGR_CMP(a, b)) || (c = ...)) return c; */
#define MGR_CMP(x, y) (((x) > (y)) - ((x) < (y)))

/* A well-mixed 64-bit hash of (a, b). */
static inline uint64_t mgr_hash2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b * 0xC2B2AE3D27D4EB4Full + 1);

	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 29);
}

/* Index of the first element of sorted keys[0..n) (stride bytes apart,
 * uint64_t at offset off) greater than t: the count of those <= t. */
static inline size_t mgr_upper_bound(const void *base, size_t n, size_t stride,
				     size_t off, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t k = *(const uint64_t *)((const char *)base + mid * stride + off);

		if (k <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
