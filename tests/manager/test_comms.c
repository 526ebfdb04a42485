/*
 * tests/manager/test_comms.c - job-wide communicator names from the ranks'
 * own creation-order ids (manager/comms.c).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "manager/comms.h"
#include "proto/event.h"

static struct mgr_comms *cm;

static void setup(void)
{
	cm = mgr_comms_new();
	cr_assert_not_null(cm);
}

static void teardown(void)
{
	mgr_comms_free(cm);
}

TestSuite(comms, .init = setup, .fini = teardown);

/* stream's MPI_Comm_split(parent, colour) made local id 'made' (-1: none) */
static void split(uint64_t stream, int64_t parent, int64_t colour, int64_t made)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = PROTO_EV_MPI_COMM_SPLIT;
	proto_ev_set_args(&e, parent, colour, 0, made, made >= 0 ? 2 : 0, 0);
	cr_assert_eq(mgr_comms_event(cm, stream, &e), 0);
}

static void dup(uint64_t stream, int64_t parent, int64_t made)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = PROTO_EV_MPI_COMM_DUP;
	proto_ev_set_args(&e, parent, made, 4, 0, 0, 0);
	cr_assert_eq(mgr_comms_event(cm, stream, &e), 0);
}

Test(comms, world_self_and_unknown)
{
	cr_assert_eq(mgr_comms_name(cm, 7, 0), 0);
	cr_assert_eq(mgr_comms_name(cm, 7, 1), -3, "MPI_COMM_SELF: unnamed");
	cr_assert_eq(mgr_comms_name(cm, 7, 9), -11, "never created: unnamed");
	cr_assert_eq(mgr_comms_stats(cm)->named, 0);
}

/* the two halves of a split have the same local id (2) and differ; each
 * half's members agree */
Test(comms, split_halves_differ)
{
	for (uint64_t s = 0; s < 4; s++)
		split(s, 0, (int64_t)(s % 2), 2);
	int64_t even = mgr_comms_name(cm, 0, 2), odd = mgr_comms_name(cm, 1, 2);

	cr_assert_gt(even, 0);
	cr_assert_gt(odd, 0);
	cr_assert_neq(even, odd);
	cr_assert_eq(mgr_comms_name(cm, 2, 2), even);
	cr_assert_eq(mgr_comms_name(cm, 3, 2), odd);
	cr_assert_eq(mgr_comms_stats(cm)->created, 4);
	cr_assert_eq(mgr_comms_stats(cm)->named, 2);
}

/* ranks 0 and 1 split their half once more (local 3), ranks 2 and 3 do
 * not; then all dup MPI_COMM_WORLD: local 4 on 0 and 1, local 3 on 2 and
 * 3, one communicator. Local 3 is two different ones. */
Test(comms, diverging_local_ids)
{
	for (uint64_t s = 0; s < 4; s++)
		split(s, 0, (int64_t)(s / 2), 2);
	split(0, 2, 0, 3);
	split(1, 2, 0, 3);
	for (uint64_t s = 0; s < 4; s++)
		dup(s, 0, s < 2 ? 4 : 3);
	int64_t w = mgr_comms_name(cm, 0, 4);

	cr_assert_gt(w, 0);
	cr_assert_eq(mgr_comms_name(cm, 1, 4), w);
	cr_assert_eq(mgr_comms_name(cm, 2, 3), w);
	cr_assert_eq(mgr_comms_name(cm, 3, 3), w);
	cr_assert_neq(mgr_comms_name(cm, 0, 3), w, "the quarter is not the dup");
	cr_assert_eq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 1, 3));
	cr_assert_neq(mgr_comms_name(cm, 0, 2), mgr_comms_name(cm, 2, 2));
}

/* a rank that gets no communicator (colour MPI_UNDEFINED) still counts the
 * creation: the next creation on the parent is the same call everywhere */
Test(comms, undefined_colour_counts)
{
	split(0, 0, 0, 2);
	split(1, 0, -32766, -1);
	dup(0, 0, 3);
	dup(1, 0, 2);
	cr_assert_eq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 1, 2));
	cr_assert_neq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 0, 2));
	cr_assert_eq(mgr_comms_stats(cm)->created, 3);
}

/* the same colour on two different parents, or in two successive splits of
 * one parent, makes different communicators */
Test(comms, same_colour_other_call)
{
	split(0, 0, 5, 2);
	split(0, 0, 5, 3);
	split(0, 2, 5, 4);
	cr_assert_neq(mgr_comms_name(cm, 0, 2), mgr_comms_name(cm, 0, 3));
	cr_assert_neq(mgr_comms_name(cm, 0, 4), mgr_comms_name(cm, 0, 2));
	cr_assert_neq(mgr_comms_name(cm, 0, 4), mgr_comms_name(cm, 0, 3));
}

/* made on a communicator without a name (one the sensor registered at its
 * first use, or MPI_COMM_SELF), or without a parent: unnamed, counted */
Test(comms, unnamed_parent)
{
	split(0, 6, 0, 7);
	dup(0, 1, 8);
	dup(0, -1, 9);
	cr_assert_eq(mgr_comms_name(cm, 0, 7), -9);
	cr_assert_eq(mgr_comms_name(cm, 0, 8), -10);
	cr_assert_eq(mgr_comms_name(cm, 0, 9), -11);
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 3);
	cr_assert_eq(mgr_comms_stats(cm)->named, 0);
}

/* collectives are numbered per stream and communicator */
Test(comms, collective_numbers)
{
	int rc = 0;

	split(0, 0, 0, 2);
	split(1, 0, 0, 2);
	int64_t c = mgr_comms_name(cm, 0, 2);

	cr_assert_eq(mgr_comms_next_coll(cm, 0, 0, &rc), 0);
	cr_assert_eq(mgr_comms_next_coll(cm, 0, c, &rc), 0);
	cr_assert_eq(mgr_comms_next_coll(cm, 0, c, &rc), 1);
	cr_assert_eq(mgr_comms_next_coll(cm, 1, c, &rc), 0);
	cr_assert_eq(mgr_comms_next_coll(cm, 0, 0, &rc), 1);
	cr_assert_eq(mgr_comms_next_coll(cm, 1, 0, &rc), 0);
	cr_assert_eq(mgr_comms_next_coll(cm, 1, -3, &rc), -1, "unnamed");
	cr_assert_eq(rc, 0);
}

/* other events are ignored; a table grown past its first size keeps
 * every name */
Test(comms, many)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = PROTO_EV_MPI_BARRIER;
	cr_assert_eq(mgr_comms_event(cm, 0, &e), 0);
	for (int64_t k = 0; k < 5000; k++)
		for (uint64_t s = 0; s < 2; s++)
			dup(s, 0, 2 + k);
	for (int64_t k = 0; k < 5000; k++)
		cr_assert_eq(mgr_comms_name(cm, 0, 2 + k), mgr_comms_name(cm, 1, 2 + k));
	cr_assert_eq(mgr_comms_stats(cm)->named, 5000);
}

/* MPI_Comm_create, MPI_Comm_split_type and MPI_Cart_sub tell their
 * communicators apart by leader (lowest world rank); a leader of -1 leaves
 * it unnamed; MPI_Cart_create makes one communicator */
Test(comms, leaders)
{
	struct proto_event e;

	for (uint64_t s = 0; s < 4; s++) {
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_COMM_SPLIT_TYPE;	/* two nodes */
		proto_ev_set_args(&e, 0, 1, 2, 2, s < 2 ? 0 : 2, (int64_t)s % 2);
		cr_assert_eq(mgr_comms_event(cm, s, &e), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_CART_CREATE;
		proto_ev_set_args(&e, 0, 3, 4, 0, 2, (int64_t)s);
		cr_assert_eq(mgr_comms_event(cm, s, &e), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_COMM_CREATE;	/* a leader unknown */
		proto_ev_set_args(&e, 3, 4, 4, -1, (int64_t)s, 0);
		cr_assert_eq(mgr_comms_event(cm, s, &e), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_CART_SUB;		/* rows {0, 1}, {2, 3} */
		proto_ev_set_args(&e, 3, 5, 2, s < 2 ? 0 : 2, (int64_t)s % 2, 0);
		cr_assert_eq(mgr_comms_event(cm, s, &e), 0);
	}
	cr_assert_eq(mgr_comms_name(cm, 0, 5), mgr_comms_name(cm, 1, 5));
	cr_assert_eq(mgr_comms_name(cm, 2, 5), mgr_comms_name(cm, 3, 5));
	cr_assert_neq(mgr_comms_name(cm, 0, 5), mgr_comms_name(cm, 2, 5));
	int64_t a = mgr_comms_name(cm, 0, 2), b = mgr_comms_name(cm, 2, 2);

	cr_assert_gt(a, 0);
	cr_assert_gt(b, 0);
	cr_assert_neq(a, b);
	cr_assert_eq(mgr_comms_name(cm, 1, 2), a);
	cr_assert_eq(mgr_comms_name(cm, 3, 2), b);
	int64_t cart = mgr_comms_name(cm, 0, 3);
	cr_assert_gt(cart, 0);
	for (uint64_t s = 1; s < 4; s++)
		cr_assert_eq(mgr_comms_name(cm, s, 3), cart);
	cr_assert_lt(mgr_comms_name(cm, 0, 4), 0, "no leader: unnamed");
	cr_assert_eq(mgr_comms_stats(cm)->named, 5);
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 4);
}
