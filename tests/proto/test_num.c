/*
 * tests/proto/test_num.c - proto/num.c: what each parser takes and what it
 * refuses (blanks, signs, suffixes, overflow, range) with PROTO_E_ARG, and
 * that a refused value leaves *out alone.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>

#include "proto/error.h"
#include "proto/num.h"

#define E PROTO_E_ARG	/* every refusal */

Test(num, parse_long)
{
	static const struct {
		const char *s;
		long lo, hi;
		int rc;
		long v;
	} c[] = {
		{"5", 1, 10, 0, 5}, {"1", 1, 10, 0, 1}, {"10", 1, 10, 0, 10},
		{"+7", 0, 10, 0, 7}, {"-3", -5, 5, 0, -3}, {"007", 0, 10, 0, 7},
		{"0", 1, 10, E, 0}, {"11", 1, 10, E, 0}, {"-3", 0, 10, E, 0},
		{"", 0, 10, E, 0}, {"5x", 0, 10, E, 0}, {" 5", 0, 10, E, 0},
		{"5 ", 0, 10, E, 0}, {"0x10", 0, 100, E, 0}, {"1e3", 0, 5000, E, 0},
		{"99999999999999999999", 0, LONG_MAX, E, 0},
		{"9223372036854775807", 0, LONG_MAX, 0, LONG_MAX},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		long v = 42;

		cr_expect_eq(proto_parse_long(c[i].s, c[i].lo, c[i].hi, &v), c[i].rc,
			     "'%s' in %ld..%ld", c[i].s, c[i].lo, c[i].hi);
		cr_expect_eq(v, c[i].rc ? 42 : c[i].v, "'%s': %ld", c[i].s, v);
	}
	cr_expect_eq(proto_parse_long(NULL, 0, 1, NULL), E);
}

Test(num, parse_size)
{
	static const struct {
		const char *s;
		int base, rc;
		uint64_t v;
	} c[] = {
		{"4096", 10, 0, 4096}, {"64k", 10, 0, 64u << 10}, {"64K", 10, 0, 64u << 10},
		{"16M", 10, 0, 16u << 20}, {"64MiB", 10, 0, 64u << 20},
		{"64MB", 10, 0, 64u << 20}, {"2G", 10, 0, 2ull << 30}, {"100B", 10, 0, 100},
		{"0x10", 0, 0, 16}, {"0x10", 10, E, 0}, {"010", 10, 0, 10},
		{"010", 0, 0, 8}, {"18446744073709551615", 10, 0, UINT64_MAX},
		{"18446744073709551616", 10, E, 0}, {"17179869184G", 10, E, 0},
		{"17179869183G", 10, 0, 17179869183ull << 30},
		{"", 10, E, 0}, {"-5M", 10, E, 0}, {"+5", 10, E, 0}, {" 5", 10, E, 0},
		{"64Q", 10, E, 0}, {"64iB", 10, E, 0}, {"64MiBs", 10, E, 0},
		{"M", 10, E, 0}, {"5 M", 10, E, 0},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t v = 42;

		cr_expect_eq(proto_parse_size(c[i].s, c[i].base, &v), c[i].rc,
			     "'%s' base %d", c[i].s, c[i].base);
		cr_expect_eq(v, c[i].rc ? 42 : c[i].v, "'%s': %llu", c[i].s,
			     (unsigned long long)v);
	}
	cr_expect_eq(proto_parse_size(NULL, 10, NULL), E);
}
