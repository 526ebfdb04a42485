/*
 * tests/collector/test_map.c - collector/map.c: the u64 -> pointer map.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "tests/collector/rig.h"

Test(map, map_put_get_del)
{
	struct col_map m;
	static int vals[3000];

	col_map_init(&m, 2000);
	for (uint64_t k = 0; k < 2000; k++) {
		cr_assert_eq(col_map_put(&m, k * 7919, &vals[k]), 0);
		cr_assert_eq(col_map_check(&m), 0);
	}
	cr_assert_eq(col_map_put(&m, 1, &vals[0]), PROTO_E_FULL);
	for (uint64_t k = 0; k < 2000; k += 2) {
		cr_assert_eq(col_map_del(&m, k * 7919), &vals[k]);
		cr_assert_eq(col_map_check(&m), 0);
	}
	for (uint64_t k = 0; k < 2000; k++)
		cr_assert_eq(col_map_get(&m, k * 7919),
			     k % 2 ? &vals[k] : NULL);
	col_map_clear(&m);
}

/* A NULL value is refused: col_map_get says NULL for "absent", so a second
 * put of the same key (or key 0) with NULL counted a member twice. */
Test(map, null_value_refused)
{
	struct col_map m;
	static int v;

	col_map_init(&m, 100);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(col_map_put(&m, 5, NULL), PROTO_E_ARG);
		cr_assert_eq(col_map_put(&m, 0, NULL), PROTO_E_ARG);
		cr_assert_eq(col_map_check(&m), 0);
	}
	cr_assert_eq(m.n, 0);
	cr_assert_eq(col_map_put(&m, 5, &v), 0);
	cr_assert_eq(col_map_put(&m, 5, &v), 0);
	cr_assert_eq(col_map_put(&m, 0, &v), 0);
	cr_assert_eq(col_map_put(&m, 0, &v), 0);
	cr_assert_eq(m.n, 2);
	cr_assert_eq(col_map_check(&m), 0);
	cr_assert_eq(col_map_del(&m, 5), &v);
	cr_assert_eq(col_map_del(&m, 0), &v);
	cr_assert_eq(m.n, 0);
	cr_assert_eq(col_map_check(&m), 0);
	col_map_clear(&m);
}
