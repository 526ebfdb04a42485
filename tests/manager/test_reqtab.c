/*
 * tests/manager/test_reqtab.c - manager/post/reqtab.c and map.c: requests put,
 * found, replaced and taken by (process, id); the same id on two processes
 * kept apart; the maximum refused with PROTO_E_FULL and room again after a
 * take; many requests with deletions in between (backward shift) all found
 * against a plain array.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "manager/post/reqtab.h"
#include "proto/error.h"

Test(reqtab, put_get_replace_take)
{
	struct mgr_reqtab t;
	struct mgr_req q = {1, 3, 7, 2, 64, 99}, out;
	const struct mgr_req *g;

	mgr_reqtab_init(&t, 16);
	cr_assert_null(mgr_reqtab_get(&t, 1, 5));
	cr_assert_eq(mgr_reqtab_take(&t, 1, 5, &out), 0);
	cr_assert_eq(mgr_reqtab_put(&t, 1, 5, &q), 0);
	cr_assert_eq(mgr_reqtab_put(&t, 2, 5, &(struct mgr_req){.tag = 8}), 0);
	g = mgr_reqtab_get(&t, 1, 5);
	cr_assert_not_null(g);
	cr_assert(g->kind == 1 && g->peer == 3 && g->tag == 7 && g->comm == 2 &&
		  g->bytes == 64 && g->data == 99);
	cr_assert_eq(mgr_reqtab_get(&t, 2, 5)->tag, 8, "another process's id 5");
	q.tag = 9;	/* the handle reused: replaced, not added */
	cr_assert_eq(mgr_reqtab_put(&t, 1, 5, &q), 0);
	cr_assert_eq(mgr_reqtab_count(&t), 2);
	cr_assert_eq(mgr_reqtab_take(&t, 1, 5, &out), 1);
	cr_assert_eq(out.tag, 9);
	cr_assert_null(mgr_reqtab_get(&t, 1, 5));
	cr_assert_eq(mgr_reqtab_count(&t), 1);
	mgr_reqtab_clear(&t);
	cr_assert_null(mgr_reqtab_get(&t, 2, 5));
}

Test(reqtab, full)
{
	struct mgr_reqtab t;
	struct mgr_req q = {0};

	mgr_reqtab_init(&t, 3);
	for (int64_t i = 1; i <= 3; i++)
		cr_assert_eq(mgr_reqtab_put(&t, 0, i, &q), 0);
	cr_assert_eq(mgr_reqtab_put(&t, 0, 4, &q), PROTO_E_FULL);
	cr_assert_null(mgr_reqtab_get(&t, 0, 4));
	cr_assert_eq(mgr_reqtab_put(&t, 0, 2, &q), 0, "a replacement fits");
	cr_assert_eq(mgr_reqtab_take(&t, 0, 1, NULL), 1);
	cr_assert_eq(mgr_reqtab_put(&t, 0, 4, &q), 0, "room again after a take");
	mgr_reqtab_clear(&t);
}

/* Many requests, every third taken as they go: the table agrees with a
 * plain array of what should be there. */
Test(reqtab, many_with_deletions)
{
	enum { N = 20000 };
	struct mgr_reqtab t;
	char *live = calloc(N, 1);

	cr_assert_not_null(live);
	mgr_reqtab_init(&t, N);
	for (int64_t i = 0; i < N; i++) {
		struct mgr_req q = {.bytes = i * 3, .data = (uint64_t)i};

		cr_assert_eq(mgr_reqtab_put(&t, (uint64_t)(i % 7), i, &q), 0);
		live[i] = 1;
		if (i % 3 == 2) {
			int64_t k = (i * 7919) % (i + 1);

			cr_assert_eq(mgr_reqtab_take(&t, (uint64_t)(k % 7), k, NULL), live[k]);
			live[k] = 0;
		}
	}
	for (int64_t i = 0; i < N; i++) {
		const struct mgr_req *g = mgr_reqtab_get(&t, (uint64_t)(i % 7), i);

		cr_assert_eq(g != NULL, live[i], "request %lld", (long long)i);
		if (g)
			cr_assert_eq(g->bytes, i * 3);
		cr_assert_null(mgr_reqtab_get(&t, (uint64_t)(i % 7 + 1), i));
	}
	mgr_reqtab_clear(&t);
	free(live);
}
