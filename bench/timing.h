/*
 * bench/timing.h - the clock and the sort order the bench programs share.
 * Header only: the bench scripts compile each program alone with mpicc or
 * cc, with no library to link.
 */
#ifndef TAPESTRY_BENCH_TIMING_H
#define TAPESTRY_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* qsort order of doubles, ascending (for medians). */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
