/*
 * tests/sensor/test_mpi_req.c - the MPI sensor's request identities
 * (sensor/mpi_req.c), without running MPI: handle values shared by several
 * live requests, the choice of record by the application's variable and
 * by age, persistent requests across activations, frees, the sentinels;
 * the table's invariants checked after every change. Built with Open MPI's
 * headers (an MPI_Request is a pointer there: the handles below are
 * addresses of an array, never dereferenced).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

static char handles[8];

static MPI_Request h(int i)
{
	return (MPI_Request)(void *)&handles[i];
}

static struct mw_req send_to(int peer, int tag)
{
	struct mw_req q = {.kind = MW_REQ_SEND, .peer = peer, .tag = tag,
			   .bytes = 8, .active = 1};

	return q;
}

static void setup(void)
{
	mw_req_init();
}

static void teardown(void)
{
	mw_req_fini();
}

TestSuite(mpi_req, .init = setup, .fini = teardown);

/* n isends that all got the same handle (completed at once), one
 * waitall on the array: each record taken once, by the variable. */
Test(mpi_req, shared_handle_by_variable)
{
	MPI_Request arr[4];
	int64_t id[4];
	struct mw_req q, out;

	for (int i = 0; i < 4; i++) {
		arr[i] = h(0);
		q = send_to(i, 10 + i);
		id[i] = mw_req_start(arr[i], &arr[i], &q);
		cr_assert_eq(mw_req_check(), 0);
	}
	cr_assert_eq(mw_req_count(), 4);
	/* completed in another order than started: the variable decides */
	for (int i = 3; i >= 0; i--) {
		cr_assert_eq(mw_req_take(h(0), &arr[i], MW_REQ_COMPLETE, &out), 1);
		cr_assert_eq(out.id, id[i]);
		cr_assert_eq(out.peer, i);
		cr_assert_eq(out.tag, 10 + i);
		cr_assert_eq(mw_req_check(), 0);
	}
	cr_assert_eq(mw_req_count(), 0);
	cr_assert_eq(mw_req_take(h(0), &arr[0], MW_REQ_COMPLETE, &out), 0);
	cr_assert_eq(out.peer, MW_PEER_UNKNOWN);
}

/* Copied into other variables: the oldest first (the order of starting). */
Test(mpi_req, shared_handle_by_age)
{
	MPI_Request tmp = h(1), other = h(1);
	int64_t a, b;
	struct mw_req q = send_to(1, 1), out;

	a = mw_req_start(h(1), &tmp, &q);
	b = mw_req_start(h(1), &tmp, &q);
	cr_assert_neq(a, b);
	cr_assert_eq(mw_req_take(h(1), &other, MW_REQ_PEEK, &out), 1);
	cr_assert_eq(out.id, a);
	cr_assert_eq(mw_req_take(h(1), &other, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, a);
	cr_assert_eq(mw_req_take(h(1), NULL, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, b);
	cr_assert_eq(mw_req_check(), 0);
}

/* The newest started through the same variable: a handle reused after a
 * completion the sensor did not see leaves an older record behind. */
Test(mpi_req, same_variable_newest)
{
	MPI_Request v = h(2);
	struct mw_req q = send_to(2, 2), out;
	int64_t old, cur;

	old = mw_req_start(h(2), &v, &q);
	cur = mw_req_start(h(2), &v, &q);
	cr_assert_eq(mw_req_take(h(2), &v, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, cur);
	cr_assert_eq(mw_req_take(h(2), &v, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, old);
}

Test(mpi_req, persistent)
{
	MPI_Request p = h(3);
	struct mw_req q = send_to(3, 3), out;
	int64_t init, act1, act2;

	q.persistent = 1;
	q.active = 0;
	init = mw_req_start(p, &p, &q);
	/* inactive: a completion finds nothing to complete */
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_COMPLETE, &out), 0);
	cr_assert_eq(out.peer, MW_PEER_NULL);
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_START, &out), 1);
	act1 = out.id;
	cr_assert_neq(act1, init);
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, act1);
	cr_assert_eq(mw_req_count(), 1);	/* kept, inactive */
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_START, &out), 1);
	act2 = out.id;
	cr_assert_neq(act2, act1);
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(out.id, act2);
	cr_assert_eq(mw_req_take(p, &p, MW_REQ_FREE, &out), 1);
	cr_assert_eq(mw_req_count(), 0);
	cr_assert_eq(mw_req_check(), 0);
}

Test(mpi_req, sentinels)
{
	MPI_Request n = MPI_REQUEST_NULL;
	struct mw_req q = send_to(-2, 0), out;

	cr_assert_gt(mw_req_start(MPI_REQUEST_NULL, &n, &q), 0);
	cr_assert_eq(mw_req_count(), 0);
	cr_assert_eq(mw_req_take(MPI_REQUEST_NULL, &n, MW_REQ_COMPLETE, &out), 0);
	cr_assert_eq(out.peer, MW_PEER_NULL);
	cr_assert_eq(out.id, 0);
	cr_assert_eq(mw_req_take(h(4), NULL, MW_REQ_FREE, &out), 0);
	cr_assert_eq(out.peer, MW_PEER_UNKNOWN);
}

/* Many live requests of one handle: the slot grows and shrinks. */
Test(mpi_req, many_shared)
{
	static MPI_Request v[300];
	struct mw_req q = send_to(5, 5), out;

	for (int i = 0; i < 300; i++) {
		v[i] = h(5);
		mw_req_start(h(5), &v[i], &q);
	}
	cr_assert_eq(mw_req_count(), 300);
	cr_assert_eq(mw_req_check(), 0);
	for (int i = 0; i < 300; i += 2)
		cr_assert_eq(mw_req_take(h(5), &v[i], MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(mw_req_check(), 0);
	for (int i = 1; i < 300; i += 2)
		cr_assert_eq(mw_req_take(h(5), &v[i], MW_REQ_COMPLETE, &out), 1);
	cr_assert_eq(mw_req_count(), 0);
	cr_assert_eq(mw_req_check(), 0);
}
