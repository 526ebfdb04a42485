/*
 * bench/stamp_cost.c - what one clock read costs this machine (issue 23):
 * the sensor stamps every call twice (sn_now_fast, sensor/rt.h: rdtsc), so
 * on a call of 150 ns the stamps alone are a large part of the +30 ns
 * budget. Prints the median over 9 rounds of CALLS reads each, ns a read,
 * of rdtsc, rdtsc followed by independent stores (does its latency hide
 * behind other work?), rdtscp and clock_gettime(CLOCK_MONOTONIC), and the
 * stores alone.
 *
 *   cc -O2 -o stamp_cost bench/stamp_cost.c && ./stamp_cost [CALLS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define ROUNDS 9

static volatile uint64_t sink;
static uint64_t slots[64];

/* eight stores, about what a record fill does */
#define STORES(i)                                                           \
	for (int k = 0; k < 8; k++)                                         \
		slots[((i) + k) & 63] = (uint64_t)(i) * (uint64_t)k

static double run(int what, long n)
{
	uint64_t s = 0, t0 = bench_now_ns();
	struct timespec ts;
	unsigned aux;

	for (long i = 0; i < n; i++) {
		switch (what) {
#if HAVE_TSC
		case 0: s += __rdtsc(); break;
		case 1: s += __rdtsc(); STORES(i); break;
		case 2: s += __rdtscp(&aux); break;
#endif
		case 3:
			clock_gettime(CLOCK_MONOTONIC, &ts);
			s += (uint64_t)ts.tv_nsec;
			break;
		default: STORES(i); break;
		}
		__asm__ volatile("" ::: "memory");
	}
	sink = s;
	return (double)(bench_now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	static const char *name[] = {"rdtsc", "rdtsc+stores", "rdtscp",
				     "clock_gettime", "stores"};
	long n = argc > 1 ? atol(argv[1]) : 5000000;

	if (n < 1)
		return 2;
	for (int w = HAVE_TSC ? 0 : 3; w < 5; w++) {
		double d[ROUNDS];

		for (int r = 0; r < ROUNDS; r++)
			d[r] = run(w, n);
		qsort(d, ROUNDS, sizeof(d[0]), bench_cmp_double);
		printf("stamp_cost: %-14s %6.2f ns\n", name[w], d[ROUNDS / 2]);
	}
	return 0;
}
