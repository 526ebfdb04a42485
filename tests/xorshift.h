/*
 * tests/xorshift.h - the xorshift64 generator (13, 7, 17) the tests, fuzz
 * corpus writers and benches draw their data from: reproducible from its
 * seed, no libc state. Header only, as each program is built alone.
 */
#ifndef TAPESTRY_TESTS_XORSHIFT_H
#define TAPESTRY_TESTS_XORSHIFT_H

#include <stdint.h>

/* The next value of the generator whose state (never 0) is *x. */
static inline uint64_t tests_xorshift64(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#endif
