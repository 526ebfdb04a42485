/*
 * manager/grow.h - small helpers shared by the post-processing modules:
 * growing arrays and a 2-key hash for open addressing.
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
