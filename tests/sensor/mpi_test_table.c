/*
 * tests/sensor/mpi_test_table.c - the MPI sensor's handle table
 * (sensor/mpi_table.c): bad arguments, insert/lookup/delete against a
 * reference, growth up to the maximum and refusal beyond, invariants
 * checked after every mutation.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "proto/error.h"
#include "sensor/mpi_table.h"

struct val {
	int64_t id;
	int32_t a, b;
};

Test(mpi_table, bad_arguments)
{
	cr_assert_null(mw_tab_new(0, 8, 8));
	cr_assert_null(mw_tab_new(5000, 8, 8));
	cr_assert_null(mw_tab_new(8, 64, 16));
	mw_tab_free(NULL);
	cr_assert_null(mw_tab_get(NULL, 1));
	cr_assert_null(mw_tab_put(NULL, 1, NULL));
	cr_assert_eq(mw_tab_del(NULL, 1), PROTO_E_NOTFOUND);
	cr_assert_eq(mw_tab_count(NULL), 0);
	cr_assert_eq(mw_tab_check(NULL), PROTO_E_ARG);
	mw_tab_each(NULL, NULL, NULL);
}

Test(mpi_table, put_get_del)
{
	struct mw_tab *t = mw_tab_new(sizeof(struct val), 8, 1024);
	struct val *v;
	int created;

	cr_assert_not_null(t);
	cr_assert_null(mw_tab_get(t, 42));
	v = mw_tab_put(t, 42, &created);
	cr_assert_not_null(v);
	cr_assert_eq(created, 1);
	cr_assert_eq(v->id, 0, "new records are zero-filled");
	v->id = 7;
	cr_assert_eq(mw_tab_check(t), 0);
	v = mw_tab_put(t, 42, &created);
	cr_assert_eq(created, 0);
	cr_assert_eq(v->id, 7);
	/* key 0 is a valid handle value (MPICH ints can be 0) */
	v = mw_tab_put(t, 0, &created);
	cr_assert_not_null(v);
	cr_assert_eq(created, 1);
	cr_assert_eq(mw_tab_count(t), 2);
	cr_assert_eq(mw_tab_del(t, 42), 0);
	cr_assert_eq(mw_tab_del(t, 42), PROTO_E_NOTFOUND);
	cr_assert_null(mw_tab_get(t, 42));
	cr_assert_not_null(mw_tab_get(t, 0));
	cr_assert_eq(mw_tab_count(t), 1);
	cr_assert_eq(mw_tab_check(t), 0);
	mw_tab_free(t);
}

/* Random operations against a reference array, keys in a small range so
 * clusters, collisions and backward shifts happen all the time. */
Test(mpi_table, against_reference)
{
	enum { KEYS = 500, OPS = 200000 };
	static int64_t ref[KEYS];
	struct mw_tab *t = mw_tab_new(sizeof(struct val), 8, 4096);
	uint64_t x = 88172645463325252ULL;
	size_t n = 0;
	int i;

	cr_assert_not_null(t);
	memset(ref, 0, sizeof(ref));
	for (i = 0; i < OPS; i++) {
		uint64_t k;
		struct val *v;
		int created;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % KEYS;
		/* pointer-like keys: aligned, high bits set */
		switch ((x >> 32) % 3) {
		case 0:
			v = mw_tab_put(t, 0x7f0000000000ULL + k * 64, &created);
			cr_assert_not_null(v);
			cr_assert_eq(created, ref[k] == 0);
			if (created)
				n++;
			v->id = i + 1;
			ref[k] = i + 1;
			break;
		case 1:
			cr_assert_eq(mw_tab_del(t, 0x7f0000000000ULL + k * 64),
				     ref[k] ? 0 : PROTO_E_NOTFOUND);
			if (ref[k])
				n--;
			ref[k] = 0;
			break;
		default:
			v = mw_tab_get(t, 0x7f0000000000ULL + k * 64);
			if (ref[k])
				cr_assert(v && v->id == ref[k]);
			else
				cr_assert_null(v);
		}
		cr_assert_eq(mw_tab_count(t), n);
		if (i % 97 == 0)
			cr_assert_eq(mw_tab_check(t), 0);
	}
	cr_assert_eq(mw_tab_check(t), 0);
	mw_tab_free(t);
}

Test(mpi_table, bounded)
{
	struct mw_tab *t = mw_tab_new(sizeof(struct val), 8, 64);
	uint64_t k;
	size_t held = 0;

	cr_assert_not_null(t);
	for (k = 1; k <= 100; k++)
		if (mw_tab_put(t, k, NULL))
			held++;
	/* 64 slots at most, 3/4 load: 48 records, the rest refused */
	cr_assert_eq(held, 48);
	cr_assert_eq(mw_tab_count(t), 48);
	cr_assert_eq(mw_tab_check(t), 0);
	cr_assert_null(mw_tab_put(t, 1000, NULL));
	/* an existing key is still found when full */
	cr_assert_not_null(mw_tab_put(t, 1, NULL));
	cr_assert_eq(mw_tab_del(t, 1), 0);
	cr_assert_not_null(mw_tab_put(t, 1000, NULL));
	cr_assert_eq(mw_tab_check(t), 0);
	mw_tab_free(t);
}

static void count_cb(uint64_t key, void *val, void *arg)
{
	struct val *v = val;

	*(int64_t *)arg += v->id + (int64_t)key;
}

Test(mpi_table, each)
{
	struct mw_tab *t = mw_tab_new(sizeof(struct val), 8, 64);
	int64_t sum = 0;
	uint64_t k;

	cr_assert_not_null(t);
	for (k = 1; k <= 10; k++)
		((struct val *)mw_tab_put(t, k, NULL))->id = (int64_t)k;
	mw_tab_each(t, count_cb, &sum);
	cr_assert_eq(sum, 110);
	mw_tab_each(t, NULL, &sum);
	mw_tab_free(t);
}
