/*
 * tests/manager/test_comms.c - job-wide communicator names from the ranks'
 * own creation-order ids (manager/post/comms.c).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <malloc.h>
#include <string.h>

#include "manager/post/comms.h"
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

/* stream's event of type with args a..f, fed to the table */
static void feed(uint64_t stream, unsigned type, int64_t a, int64_t b, int64_t c,
		 int64_t d, int64_t e_, int64_t f)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	proto_ev_set_args(&e, a, b, c, d, e_, f);
	cr_assert_eq(mgr_comms_event(cm, stream, &e, NULL, 0), 0);
}

/* stream's MPI_Comm_split(parent, colour) made local id 'made' (-1: none) */
static void split(uint64_t stream, int64_t parent, int64_t colour, int64_t made)
{
	feed(stream, PROTO_EV_MPI_COMM_SPLIT, parent, colour, 0, made, made >= 0 ? 2 : 0, 0);
}

static void dup(uint64_t stream, int64_t parent, int64_t made)
{
	feed(stream, PROTO_EV_MPI_COMM_DUP, parent, made, 4, 0, 0, 0);
}

/* Local id `handle` names one communicator on streams a0 and a1, another
 * on b0 and b1: both named (> 0), not the same. */
static void two_groups(int64_t handle, uint64_t a0, uint64_t a1, uint64_t b0,
		       uint64_t b1)
{
	int64_t a = mgr_comms_name(cm, a0, handle);
	int64_t b = mgr_comms_name(cm, b0, handle);

	cr_assert_gt(a, 0);
	cr_assert_gt(b, 0);
	cr_assert_neq(a, b);
	cr_assert_eq(mgr_comms_name(cm, a1, handle), a);
	cr_assert_eq(mgr_comms_name(cm, b1, handle), b);
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
	two_groups(2, 0, 2, 1, 3);
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
	cr_assert_eq(mgr_comms_event(cm, 0, &e, NULL, 0), 0);
	for (int64_t k = 0; k < 5000; k++)
		for (uint64_t s = 0; s < 2; s++)
			dup(s, 0, 2 + k);
	for (int64_t k = 0; k < 5000; k++)
		cr_assert_eq(mgr_comms_name(cm, 0, 2 + k), mgr_comms_name(cm, 1, 2 + k));
	cr_assert_eq(mgr_comms_stats(cm)->named, 5000);
}

/* One stream's 100 dups of world: each a new name, 1 to 100, though the
 * table grows under the entry being filled (a stale read of the moved
 * entry once named some of them from freed memory; glibc's M_PERTURB
 * fills freed memory, so the stale read shows) */
Test(comms, names_survive_the_table_growing)
{
	mallopt(M_PERTURB, 0x5a);
	for (int64_t k = 0; k < 100; k++)
		dup(0, 0, 2 + k);
	for (int64_t k = 0; k < 100; k++)
		cr_assert_eq(mgr_comms_name(cm, 0, 2 + k), k + 1, "dup %" PRId64, k);
	mallopt(M_PERTURB, 0);
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
		cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_CART_CREATE;
		proto_ev_set_args(&e, 0, 3, 4, 0, 2, (int64_t)s);
		cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_COMM_CREATE;	/* a leader unknown */
		proto_ev_set_args(&e, 3, 4, 4, -1, (int64_t)s, 0);
		cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_CART_SUB;		/* rows {0, 1}, {2, 3} */
		proto_ev_set_args(&e, 3, 5, 2, s < 2 ? 0 : 2, (int64_t)s % 2, 0);
		cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
	}
	cr_assert_eq(mgr_comms_name(cm, 0, 5), mgr_comms_name(cm, 1, 5));
	cr_assert_eq(mgr_comms_name(cm, 2, 5), mgr_comms_name(cm, 3, 5));
	cr_assert_neq(mgr_comms_name(cm, 0, 5), mgr_comms_name(cm, 2, 5));
	two_groups(2, 0, 1, 2, 3);
	int64_t cart = mgr_comms_name(cm, 0, 3);
	cr_assert_gt(cart, 0);
	for (uint64_t s = 1; s < 4; s++)
		cr_assert_eq(mgr_comms_name(cm, s, 3), cart);
	cr_assert_lt(mgr_comms_name(cm, 0, 4), 0, "no leader: unnamed");
	cr_assert_eq(mgr_comms_stats(cm)->named, 5);
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 4);
}

static void idup(uint64_t stream, int64_t parent, int64_t made)
{
	feed(stream, PROTO_EV_MPI_COMM_IDUP, parent, made, 4, 0, 7, 0);
}

/* stream's MPI_Comm_create_group(parent, group of gkey) made 'made' */
static void cgroup(uint64_t stream, int64_t parent, int64_t gkey, int64_t made)
{
	feed(stream, PROTO_EV_MPI_COMM_CREATE_GROUP, parent, 5, made, 2, gkey, 0);
}

/* stream's MPI_Intercomm_merge(inter, high) of the member set gkey */
static void merge(uint64_t stream, int64_t inter, int64_t gkey, int64_t made)
{
	feed(stream, PROTO_EV_MPI_INTERCOMM_MERGE, inter, (int64_t)(stream % 2), made, 4,
	     gkey, (int64_t)stream);
}

/* MPI_Comm_idup takes its turn among the parent's constructors like
 * MPI_Comm_dup: ranks 0 and 1 dup then idup, 2 and 3 idup then dup, with
 * local ids that cross (without idup's turn, all four would be the first
 * creation on world) */
Test(comms, idup_interleaved_with_dup)
{
	dup(0, 0, 2);
	idup(0, 0, 3);
	dup(1, 0, 2);
	idup(1, 0, 3);
	dup(2, 0, 3);
	idup(2, 0, 2);
	dup(3, 0, 3);
	idup(3, 0, 2);
	int64_t first = mgr_comms_name(cm, 0, 2), second = mgr_comms_name(cm, 0, 3);

	cr_assert_gt(first, 0);
	cr_assert_gt(second, 0);
	cr_assert_neq(first, second);
	cr_assert_eq(mgr_comms_name(cm, 1, 2), first);
	cr_assert_eq(mgr_comms_name(cm, 2, 3), first, "the first is the dup");
	cr_assert_eq(mgr_comms_name(cm, 3, 3), first);
	cr_assert_eq(mgr_comms_name(cm, 2, 2), second);
	cr_assert_eq(mgr_comms_name(cm, 3, 2), second);
	cr_assert_eq(mgr_comms_stats(cm)->named, 2);
}

/* stream's MPI_Comm_dup_with_info(parent, info) made 'made', own rank myrank */
static void dupinfo(uint64_t stream, int64_t parent, int64_t made, int64_t myrank)
{
	feed(stream, PROTO_EV_MPI_COMM_DUP_WITH_INFO, parent, made, 2, myrank, 0, 0);
}

/* MPI_Comm_dup_with_info is named like a dup: rank 0 first dups its
 * MPI_COMM_SELF (local 2, unnamed, no turn on world), so the two ranks'
 * dup_with_info of world are local 3 and 2, one job-wide name; the dup
 * of world after it is the second creation on world on both, another */
Test(comms, dup_with_info_like_dup)
{
	dup(0, 1, 2);
	dupinfo(0, 0, 3, 0);
	dupinfo(1, 0, 2, 1);
	dup(0, 0, 4);
	dup(1, 0, 3);
	int64_t di = mgr_comms_name(cm, 0, 3), d = mgr_comms_name(cm, 0, 4);

	cr_assert_gt(di, 0);
	cr_assert_eq(mgr_comms_name(cm, 1, 2), di, "one name on both ranks");
	cr_assert_eq(mgr_comms_rank(cm, 0, 3), 0);
	cr_assert_eq(mgr_comms_rank(cm, 1, 2), 1);
	cr_assert_gt(d, 0);
	cr_assert_neq(d, di);
	cr_assert_eq(mgr_comms_name(cm, 1, 3), d);
	cr_assert_lt(mgr_comms_name(cm, 0, 2), 0, "the dup of MPI_COMM_SELF");
	cr_assert_eq(mgr_comms_stats(cm)->named, 2);
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 1);
}

/* a named idup's own constructors count on it: it is a parent like any */
Test(comms, idup_is_a_parent)
{
	for (uint64_t s = 0; s < 2; s++) {
		idup(s, 0, 2);
		split(s, 2, 0, 3);
	}
	cr_assert_gt(mgr_comms_name(cm, 0, 3), 0);
	cr_assert_eq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 1, 3));
}

/* two create_group on world: A = {0, 1} then B = {1, 2, 3}. Rank 1 is in
 * both (its second create_group on world), 2 and 3 only in B (their
 * first): B's members agree all the same, A and B differ. Counting on the
 * parent alone would put rank 1's B with A. */
Test(comms, create_group_two_groups)
{
	const int64_t ka = 1111, kb = 2222;

	cgroup(0, 0, ka, 2);
	cgroup(1, 0, ka, 2);
	cgroup(1, 0, kb, 3);
	cgroup(2, 0, kb, 2);
	cgroup(3, 0, kb, 2);
	int64_t a = mgr_comms_name(cm, 0, 2), b = mgr_comms_name(cm, 1, 3);

	cr_assert_gt(a, 0);
	cr_assert_gt(b, 0);
	cr_assert_neq(a, b);
	cr_assert_eq(mgr_comms_name(cm, 1, 2), a);
	cr_assert_eq(mgr_comms_name(cm, 2, 2), b);
	cr_assert_eq(mgr_comms_name(cm, 3, 2), b);
	cr_assert_eq(mgr_comms_stats(cm)->named, 2);
	cr_assert_eq(mgr_comms_stats(cm)->created, 5);
}

/* create_group does not take a turn among the parent's constructors
 * (only the group calls it): a dup after it on world is one communicator
 * for a member and a non-member */
Test(comms, create_group_not_a_parent_turn)
{
	cgroup(0, 0, 1111, 2);
	dup(0, 0, 3);
	dup(1, 0, 2);
	cr_assert_gt(mgr_comms_name(cm, 0, 3), 0);
	cr_assert_eq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 1, 2));
}

/* the same members with another tag (another gkey), the same gkey twice
 * (the k-th), the same gkey on another parent: all different */
Test(comms, create_group_tag_and_repeat)
{
	for (uint64_t s = 0; s < 2; s++) {
		cgroup(s, 0, 1111, 2);	/* tag 1 */
		cgroup(s, 0, 3333, 3);	/* the same ranks, tag 2 */
		cgroup(s, 0, 1111, 4);	/* tag 1 again */
		cgroup(s, 2, 1111, 5);	/* on the first */
	}
	int64_t n[4];

	for (int i = 0; i < 4; i++) {
		n[i] = mgr_comms_name(cm, 0, 2 + i);
		cr_assert_gt(n[i], 0);
		cr_assert_eq(mgr_comms_name(cm, 1, 2 + i), n[i]);
		for (int j = 0; j < i; j++)
			cr_assert_neq(n[i], n[j], "%d and %d", i, j);
	}
}

/* no gkey (the sensor could not say: a member outside world): unnamed,
 * and not counted, so a later call with a gkey is the first; an unnamed
 * parent leaves it unnamed too */
Test(comms, create_group_bad_input)
{
	cgroup(0, 0, -1, 2);
	cgroup(0, 0, 1111, 3);
	cgroup(1, 0, 1111, 2);
	cgroup(0, 9, 1111, 4);
	cr_assert_lt(mgr_comms_name(cm, 0, 2), 0);
	cr_assert_gt(mgr_comms_name(cm, 0, 3), 0);
	cr_assert_eq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 1, 2));
	cr_assert_eq(mgr_comms_name(cm, 0, 4), -6, "unnamed parent");
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 2);
	cr_assert_eq(mgr_comms_stats(cm)->named, 1);
}

/* graph constructors make one communicator on the parent (a rank left
 * out of MPI_Graph_create gets none but counts the call); their myrank is
 * the reordered rank */
Test(comms, graph_constructors)
{
	static const unsigned types[] = {PROTO_EV_MPI_GRAPH_CREATE,
		PROTO_EV_MPI_DIST_GRAPH_CREATE,
		PROTO_EV_MPI_DIST_GRAPH_CREATE_ADJACENT};
	struct proto_event e;

	for (uint64_t s = 0; s < 3; s++)
		for (int i = 0; i < 3; i++) {
			int64_t made = s == 2 && i == 0 ? -1 : 2 + i;

			memset(&e, 0, sizeof(e));
			e.type = (uint16_t)types[i];
			proto_ev_set_args(&e, 0, made, 0, 0, 0, 0);
			e.arg[proto_ev_arg(e.type, PROTO_F_myrank)] = 2 - (int64_t)s;
			e.arg[proto_ev_arg(e.type, PROTO_F_leader)] = 0;
			cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
		}
	dup(0, 0, 5);
	dup(2, 0, 5);
	for (int64_t l = 2; l < 5; l++) {
		cr_assert_gt(mgr_comms_name(cm, 0, l), 0);
		cr_assert_eq(mgr_comms_name(cm, 1, l), mgr_comms_name(cm, 0, l));
		cr_assert_eq(mgr_comms_rank(cm, 1, l), 1);
		if (l > 2)
			cr_assert_eq(mgr_comms_name(cm, 2, l), mgr_comms_name(cm, 0, l));
	}
	cr_assert_neq(mgr_comms_name(cm, 0, 2), mgr_comms_name(cm, 0, 3));
	cr_assert_eq(mgr_comms_name(cm, 0, 5), mgr_comms_name(cm, 2, 5),
		     "the dup after them is the fourth creation on world");
	cr_assert_lt(mgr_comms_name(cm, 2, 2), 0, "never made");
	cr_assert_eq(mgr_comms_stats(cm)->named, 4);
}

/* the merge of an intercommunicator whose two sides have different local
 * ids for it (unnamed, local): named by its member set, the same on all
 * four; a second merge of the same members is another; other members,
 * another; no gkey, unnamed */
Test(comms, intercomm_merge)
{
	for (uint64_t s = 0; s < 4; s++) {
		merge(s, 3 + (int64_t)(s % 2), 4444, 6);
		merge(s, 3 + (int64_t)(s % 2), 4444, 7);
	}
	merge(0, 8, 5555, 9);
	merge(1, 8, 5555, 9);
	merge(0, 8, -1, 10);
	int64_t m = mgr_comms_name(cm, 0, 6);

	cr_assert_gt(m, 0);
	for (uint64_t s = 1; s < 4; s++) {
		cr_assert_eq(mgr_comms_name(cm, s, 6), m);
		cr_assert_eq(mgr_comms_name(cm, s, 7), mgr_comms_name(cm, 0, 7));
		cr_assert_eq(mgr_comms_rank(cm, s, 6), (int64_t)s);
	}
	cr_assert_neq(mgr_comms_name(cm, 0, 7), m);
	cr_assert_gt(mgr_comms_name(cm, 0, 9), 0);
	cr_assert_eq(mgr_comms_name(cm, 1, 9), mgr_comms_name(cm, 0, 9));
	cr_assert_neq(mgr_comms_name(cm, 0, 9), m);
	cr_assert_lt(mgr_comms_name(cm, 0, 10), 0);
	cr_assert_eq(mgr_comms_stats(cm)->named, 3);
}

/* stream's MPI_Intercomm_create on local id 'local' made id 'made', with
 * gkey in its ARRAY (narray 0: a trace from before it); the even streams
 * and the odd ones are its two groups (remote leaders 1 and 0) */
static void intercomm(uint64_t stream, int64_t local, int64_t made,
		      int64_t gkey, size_t narray)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = PROTO_EV_MPI_INTERCOMM_CREATE;
	proto_ev_set_args(&e, local, made, 2, stream % 2 ? 0 : 1, 9,
			  (int64_t)stream / 2);
	cr_assert_eq(mgr_comms_event(cm, stream, &e, &gkey, narray), 0);
}

/* Without its ARRAY (an older trace) an intercommunicator stays unnamed,
 * and so does all made from it (its dup). */
Test(comms, intercomm_without_gkey_unnamed)
{
	for (uint64_t s = 0; s < 2; s++) {
		split(s, 0, (int64_t)s, 2);
		intercomm(s, 2, 3, 0, 0);
		dup(s, 3, 4);
	}
	cr_assert_gt(mgr_comms_name(cm, 0, 2), 0);
	for (uint64_t s = 0; s < 2; s++) {
		cr_assert_eq(mgr_comms_name(cm, s, 3), -5);
		cr_assert_eq(mgr_comms_name(cm, s, 4), -6);
	}
	int rc = 0;
	cr_assert_eq(mgr_comms_next_coll(cm, 0, mgr_comms_name(cm, 0, 3), &rc), -1);
	cr_assert_eq(mgr_comms_stats(cm)->unnamed, 4);
	cr_assert_eq(mgr_comms_stats(cm)->named, 2);
	cr_assert_eq(mgr_comms_stats(cm)->inter, 0);
}

/* Four ranks, the even and the odd half of a split (local id 2 on all)
 * joined by MPI_Intercomm_create: one name on both sides, whatever local
 * id each gave it (3 on the evens, 5 on the odds, which dup'd
 * MPI_COMM_SELF first), marked as an intercommunicator, so its collectives
 * get no instance; each side knows its group by the other's leader. A
 * dup and a split of it are intercommunicators too (and know theirs),
 * named alike on both sides; MPI_Comm_create on it stays unnamed; its
 * merge is an intracommunicator. A second MPI_Intercomm_create over the
 * same groups and tag is another; a gkey of -1 leaves it unnamed. */
Test(comms, intercomm_named)
{
	struct proto_event e;
	int rc = 0;

	for (uint64_t s = 0; s < 4; s++) {
		int64_t off = s % 2 ? 2 : 0;

		split(s, 0, (int64_t)s % 2, 2);
		if (off)
			dup(s, 1, 3);	/* only the odds: of MPI_COMM_SELF */
		intercomm(s, 2, 3 + off, 7777, 1);
		dup(s, 3 + off, 4 + off);
		split(s, 3 + off, 1, 10 + off);
		memset(&e, 0, sizeof(e));
		e.type = PROTO_EV_MPI_COMM_CREATE;
		proto_ev_set_args(&e, 3 + off, 20 + off, 1, s % 2 ? 0 : 1, 0, 0);
		cr_assert_eq(mgr_comms_event(cm, s, &e, NULL, 0), 0);
		merge(s, 3 + off, 4444, 30 + off);
		intercomm(s, 2, 40 + off, 7777, 1);
		intercomm(s, 2, 50 + off, -1, 1);
	}
	for (int64_t l = 0; l < 5; l++) {
		int64_t made = (int64_t[]){3, 4, 10, 30, 40}[l];
		int64_t n = mgr_comms_name(cm, 0, made);

		cr_assert_gt(n, 0, "local %" PRId64, made);
		for (uint64_t s = 1; s < 4; s++)
			cr_assert_eq(mgr_comms_name(cm, s, made + (s % 2 ? 2 : 0)), n,
				     "local %" PRId64 " on stream %" PRIu64, made, s);
		cr_assert_eq(mgr_comms_inter(cm, n), made != 30, "local %" PRId64, made);
		for (uint64_t s = 0; s < 4; s++)	/* the groups told apart */
			cr_assert_eq(mgr_comms_side(cm, s, made + (s % 2 ? 2 : 0)),
				     made == 30 ? -1 : s % 2 ? 0 : 1);
		cr_assert_eq(mgr_comms_next_coll(cm, 0, n, &rc), made == 30 ? 0 : -1);
	}
	cr_assert_neq(mgr_comms_name(cm, 0, 3), mgr_comms_name(cm, 0, 40));
	cr_assert_lt(mgr_comms_name(cm, 0, 20), 0, "create on an intercomm");
	cr_assert_lt(mgr_comms_name(cm, 1, 22), 0);
	cr_assert_lt(mgr_comms_name(cm, 0, 50), 0, "no gkey");
	cr_assert_eq(mgr_comms_inter(cm, 0), 0);
	cr_assert_eq(mgr_comms_inter(cm, -5), 0);
	cr_assert_eq(rc, 0);
	/* 2 halves, 2 intercomms, the first's dup and split, its merge */
	cr_assert_eq(mgr_comms_stats(cm)->named, 7);
	cr_assert_eq(mgr_comms_stats(cm)->inter, 4);
}
