/*
 * tests/manager/test_causality.c - message matching and the controlled
 * logical clock on hand-made traces with violations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/post.h"
#include "proto/codec.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "tests/manager/jobgen.h"

static struct jobgen g;

static void setup(void)
{
	jobgen_init(&g, "clc");
}

static void teardown(void)
{
	jobgen_free(&g);
}

/* The causality of the job written, asserting it builds. */
static struct mgr_causality *build(const struct mgr_post *p, int64_t lat)
{
	int rc;
	struct mgr_causality *c = mgr_causality_build(g.dir, p, lat, &rc);

	cr_assert_not_null(c, "%s", proto_strerror(rc));
	return c;
}

TestSuite(causality, .init = setup, .fini = teardown);

/* rank 0 sends at 1000; rank 1's clock is 300 ns behind, so its receive
 * ends at 900: a violation. Rank 1 then sends to rank 2, whose receive is
 * only fine before the repair moves rank 1 later (a chain: two passes). */
Test(causality, violations_repaired_in_a_chain_and_ramped)
{
	struct proto_event e0[2], e1[4], e2[2];
	int rc;

	e0[0] = jobgen_ev(PROTO_EV_MPI_SEND, 1000, 1010, 1, 7, 0, 8, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_FINALIZE, 5000, 5100, 0, 3, 0, 0, 0);
	/* rank 1: a barrier ending at 500, compute, recv 880..900, send 950 */
	e1[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 400, 500, 0, 0, 0, 0, 0);
	e1[1] = jobgen_ev(PROTO_EV_MPI_RECV, 880, 900, 0, 7, 0, 8, 0);
	e1[2] = jobgen_ev(PROTO_EV_MPI_SEND, 950, 960, 2, 9, 0, 8, 0);
	e1[3] = jobgen_ev(PROTO_EV_MPI_FINALIZE, 5000, 5100, 1, 3, 0, 0, 0);
	/* rank 2 receives from rank 1 ending at 1000 (fine before repair) */
	e2[0] = jobgen_ev(PROTO_EV_MPI_RECV, 990, 1000, 1, 9, 0, 8, 0);
	e2[1] = jobgen_ev(PROTO_EV_MPI_FINALIZE, 5000, 5100, 2, 3, 0, 0, 0);
	jobgen_job(&g, 10, 3, (struct proto_event *[]){e0, e1, e2},
		   (size_t[]){2, 4, 2});

	struct mgr_post *p = mgr_post_build(g.dir, &rc);
	cr_assert_not_null(p);
	struct mgr_causality *c = build(p, 5);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->sends, 2);
	cr_assert_eq(st->receives, 2);
	cr_assert_eq(st->matched, 2);
	cr_assert_eq(st->violations_before, 1);
	cr_assert_eq(st->violations_after, 0);
	cr_assert_geq(st->passes, 2);
	/* rank 1's receive ends at >= 1000 + 5: shifted by >= 105 */
	cr_assert_geq(900 + mgr_causality_shift(c, 11, 880), 1005);
	int64_t d = mgr_causality_shift(c, 11, 880);
	cr_assert_eq(d, 105);
	/* its later events keep their intervals */
	cr_assert_eq(mgr_causality_shift(c, 11, 950), d);
	cr_assert_eq(mgr_causality_shift(c, 11, 5000), d);
	/* the ramp: nothing moves at the barrier's end, half way at 690 */
	cr_assert_eq(mgr_causality_shift(c, 11, 500), 0);
	int64_t mid = mgr_causality_shift(c, 11, 690);
	cr_assert(mid > 40 && mid < 65, "ramp midpoint %lld", (long long)mid);
	/* rank 1's send moved to 1055: rank 2's receive (1000) followed it */
	cr_assert_geq(1000 + mgr_causality_shift(c, 12, 990), 950 + d + 5);
	cr_assert_eq(mgr_causality_shift(c, 10, 1000), 0);
	cr_assert_eq(st->max_interval_change_ns, 105);
	mgr_causality_free(c);
	mgr_post_free(p);
}

/* isend/irecv/waitall, tags out of order, a sendrecv, an unmatched send */
Test(causality, nonblocking_tags_and_unmatched)
{
	struct proto_event e0[4], e1[8];

	e0[0] = jobgen_ev(PROTO_EV_MPI_ISEND, 100, 110, 1, 5, 0, 8, 1);
	e0[1] = jobgen_ev(PROTO_EV_MPI_ISEND, 120, 130, 1, 6, 0, 8, 2);
	e0[2] = jobgen_ev(PROTO_EV_MPI_SENDRECV, 300, 400, 1, 8, 0, 8, 1);
	e0[2].arg[5] = 8;
	e0[3] = jobgen_ev(PROTO_EV_MPI_SEND, 500, 510, 1, 99, 0, 8, 0);	/* never received */
	/* rank 1 posts tag 6 first, then tag 5; waitall completes both */
	e1[0] = jobgen_ev(PROTO_EV_MPI_IRECV, 50, 60, 0, 6, 0, 8, 1);
	e1[1] = jobgen_ev(PROTO_EV_MPI_IRECV, 70, 80, 0, 5, 0, 8, 2);
	e1[2] = jobgen_ev(PROTO_EV_MPI_WAITALL, 90, 105, 2, 0, 0, 0, 0);	/* ends before the sends */
	e1[2].flags = PROTO_EVF_HASARRAY;
	struct proto_event arr;
	memset(&arr, 0, sizeof(arr));
	arr.type = PROTO_EV_ARRAY;
	arr.t_start = 0;
	arr.t_end = 8;
	arr.flags = 6;
	int64_t vals[8] = {1, 0, 8, 0, 2, 0, 8, 0};
	memcpy(arr.arg, vals, 6 * sizeof(int64_t));
	e1[3] = arr;
	arr.t_start = 6;
	arr.flags = 2;
	arr.arg[0] = vals[6];
	arr.arg[1] = vals[7];
	e1[4] = arr;
	e1[5] = jobgen_ev(PROTO_EV_MPI_SENDRECV, 300, 390, 0, 8, 0, 8, 0);
	e1[5].arg[5] = 8;
	jobgen_job(&g, 20, 2, (struct proto_event *[]){e0, e1},
		   (size_t[]){4, 6});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->sends, 5);	/* 2 isend, 2 sendrecv, 1 send */
	cr_assert_eq(st->receives, 4);	/* 2 in the waitall, 2 sendrecv */
	cr_assert_eq(st->matched, 4);
	cr_assert_eq(st->unmatched_sends, 1);	/* tag 99 */
	cr_assert_eq(st->unmatched_receives, 0);
	cr_assert_eq(st->violations_after, 0);
	cr_assert_geq(st->violations_before, 1);
	/* the waitall ended at 105 before the second isend at 120: moved */
	cr_assert_geq(105 + mgr_causality_shift(c, 21, 90), 120);
	mgr_causality_free(c);
}

/* MPI_Sendrecv's receive tag comes in its ARRAY (rtag, arrived, probe_ns):
 * a Sendrecv receiving tag 8 skips an earlier send with tag 7, which a
 * later MPI_Recv(tag 7) takes (matching on the channel alone would pair
 * them the other way and leave the Recv unmatched). */
Test(causality, sendrecv_receive_tag)
{
	struct proto_event e0[3], e1[3], arr;

	e0[0] = jobgen_ev(PROTO_EV_MPI_SEND, 100, 110, 1, 7, 0, 8, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_SEND, 200, 210, 1, 8, 0, 8, 0);
	e0[2] = jobgen_ev(PROTO_EV_MPI_RECV, 600, 700, 1, 3, 0, 8, 0);
	/* peer 0, tag 3, comm 0, 8 bytes, src 0, rbytes 8 */
	e1[0] = jobgen_ev(PROTO_EV_MPI_SENDRECV, 300, 400, 0, 3, 0, 8, 0);
	e1[0].arg[5] = 8;
	e1[0].flags = PROTO_EVF_HASARRAY;
	memset(&arr, 0, sizeof(arr));
	arr.type = PROTO_EV_ARRAY;
	arr.t_end = 3;
	arr.flags = 3;
	arr.arg[0] = 8;		/* rtag */
	arr.arg[1] = 1;		/* arrived */
	arr.arg[2] = 40;	/* probe_ns */
	e1[1] = arr;
	e1[2] = jobgen_ev(PROTO_EV_MPI_RECV, 500, 550, 0, 7, 0, 8, 1);
	jobgen_job(&g, 30, 2, (struct proto_event *[]){e0, e1},
		   (size_t[]){3, 3});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->sends, 3);
	cr_assert_eq(st->receives, 3);
	cr_assert_eq(st->matched, 3);
	cr_assert_eq(st->unmatched_sends, 0);
	cr_assert_eq(st->unmatched_receives, 0);
	cr_assert_eq(st->violations_after, 0);
	mgr_causality_free(c);
}

/* Channels are keyed by the communicator's job-wide name, not by the
 * rank's own id: rank 0 made one communicator more than rank 1 before
 * both dup MPI_COMM_WORLD, so the dup is 3 on rank 0 and 2 on rank 1, and
 * rank 1's own 3 (a dup of its MPI_COMM_SELF) is another communicator.
 * Rank 0 sends on the dup, then on world; rank 1 receives on the dup,
 * then on world (matched by ids: one send and one receive unmatched). */
Test(causality, channels_by_communicator_name)
{
	struct proto_event e0[5], e1[5];

	/* rank 0: dup(self) -> 2, dup(world) -> 3 */
	e0[0] = jobgen_ev(PROTO_EV_MPI_COMM_DUP, 10, 20, 1, 2, 1, 0, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_COMM_DUP, 30, 40, 0, 3, 2, 0, 0);
	e0[2] = jobgen_ev(PROTO_EV_MPI_SEND, 100, 110, 1, 5, 3, 8, 0);
	e0[3] = jobgen_ev(PROTO_EV_MPI_SEND, 200, 210, 1, 5, 0, 8, 0);
	e0[4] = jobgen_ev(PROTO_EV_MPI_FINALIZE, 900, 910, 0, 2, 0, 0, 0);
	/* rank 1: dup(world) -> 2, dup(self) -> 3 */
	e1[0] = jobgen_ev(PROTO_EV_MPI_COMM_DUP, 30, 40, 0, 2, 2, 0, 0);
	e1[1] = jobgen_ev(PROTO_EV_MPI_COMM_DUP, 50, 60, 1, 3, 1, 0, 0);
	e1[2] = jobgen_ev(PROTO_EV_MPI_RECV, 300, 350, 0, 5, 2, 8, 0);
	e1[3] = jobgen_ev(PROTO_EV_MPI_RECV, 400, 450, 0, 5, 0, 8, 0);
	e1[4] = jobgen_ev(PROTO_EV_MPI_FINALIZE, 900, 910, 1, 2, 0, 0, 0);
	jobgen_job(&g, 40, 2, (struct proto_event *[]){e0, e1},
		   (size_t[]){5, 5});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->sends, 2);
	cr_assert_eq(st->receives, 2);
	cr_assert_eq(st->matched, 2);
	cr_assert_eq(st->unmatched_sends, 0);
	cr_assert_eq(st->unmatched_receives, 0);
	const struct mgr_comms_stats *cs = mgr_comms_stats(mgr_causality_comms(c));
	cr_assert_eq(cs->named, 1, "the dup of MPI_COMM_WORLD");
	cr_assert_eq(cs->unnamed, 2, "the dups of MPI_COMM_SELF");
	mgr_causality_free(c);
}

/* Collectives are logical messages. A barrier on MPI_COMM_WORLD: rank 0
 * leaves at 150, before rank 1 enters at 300 (rank 1's clock): its exit is
 * stretched to 300, ramped over the barrier itself (its entry stays), and
 * its later events move by 150. A bcast on the split {0, 2} whose root is
 * its rank 1 (world rank 2): rank 0 leaves at 1500, before the root
 * enters at 1600, but the barrier's repair moved it to 1650: a violation
 * before the repair, none to repair. A reduce on world rooted at 1: the
 * root leaves at 2000 before rank 2 enters at 2100: stretched by 100. */
Test(causality, collectives_as_logical_messages)
{
	struct proto_event e0[4], e1[3], e2[4];

	e0[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 100, 150, 0, 0, 0, 0, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_COMM_SPLIT, 400, 500, 0, 0, 0, 2, 2);
	e0[1].arg[5] = 0;	/* myrank */
	e0[2] = jobgen_ev(PROTO_EV_MPI_BCAST, 1000, 1500, 8, 1, 2, 0, 0);
	e0[3] = jobgen_ev(PROTO_EV_MPI_REDUCE, 1900, 1950, 8, 1, 0, 0, 0);
	e1[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 300, 350, 0, 0, 0, 0, 0);
	e1[1] = jobgen_ev(PROTO_EV_MPI_COMM_SPLIT, 400, 500, 0, 1, 1, 2, 1);
	e1[1].arg[5] = 0;
	e1[2] = jobgen_ev(PROTO_EV_MPI_REDUCE, 1950, 2000, 8, 1, 0, 0, 0);
	e2[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 120, 400, 0, 0, 0, 0, 0);
	e2[1] = jobgen_ev(PROTO_EV_MPI_COMM_SPLIT, 400, 500, 0, 0, 2, 2, 2);
	e2[1].arg[5] = 1;
	e2[2] = jobgen_ev(PROTO_EV_MPI_BCAST, 1600, 1700, 8, 1, 2, 0, 0);
	e2[3] = jobgen_ev(PROTO_EV_MPI_REDUCE, 2100, 2200, 8, 1, 0, 0, 0);
	jobgen_job(&g, 50, 3, (struct proto_event *[]){e0, e1, e2},
		   (size_t[]){4, 3, 4});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->collectives, 3);
	cr_assert_eq(st->coll_violations_before, 3, "barrier, bcast, reduce: %llu",
		     (unsigned long long)st->coll_violations_before);
	cr_assert_eq(st->coll_violations_after, 0);
	cr_assert_eq(st->coll_moved, 2, "the bcast is fine once the barrier moved: %llu",
		     (unsigned long long)st->coll_moved);
	/* rank 0: the barrier's entry stays, its exit and what follows +150,
	 * half of it halfway through the barrier */
	cr_assert_eq(mgr_causality_shift(c, 50, 100), 0);
	cr_assert_eq(mgr_causality_shift(c, 50, 125), 75);
	cr_assert_eq(mgr_causality_shift(c, 50, 150), 150);
	cr_assert_eq(mgr_causality_shift(c, 50, 1500), 150);
	/* rank 1 (the reduce's root) leaves at 2100 */
	cr_assert_eq(mgr_causality_shift(c, 51, 1950), 0);
	cr_assert_eq(mgr_causality_shift(c, 51, 2000), 100);
	cr_assert_eq(mgr_causality_shift(c, 52, 2200), 0);
	mgr_causality_free(c);
}

/* A scan: each member waits for the members of lower rank only. Rank 0
 * leaves at 150 before the others enter (fine: it waits for nobody); rank
 * 2 leaves at 250 before rank 1 enters at 300: stretched to 300. */
Test(causality, scan_waits_for_lower_ranks)
{
	struct proto_event e0[1], e1[1], e2[1];

	e0[0] = jobgen_ev(PROTO_EV_MPI_SCAN, 100, 150, 8, 0, 0, 0, 0);
	e1[0] = jobgen_ev(PROTO_EV_MPI_SCAN, 300, 350, 8, 0, 0, 0, 0);
	e2[0] = jobgen_ev(PROTO_EV_MPI_SCAN, 200, 250, 8, 0, 0, 0, 0);
	jobgen_job(&g, 60, 3, (struct proto_event *[]){e0, e1, e2},
		   (size_t[]){1, 1, 1});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->collectives, 1);
	cr_assert_eq(st->coll_violations_before, 1, "%llu",
		     (unsigned long long)st->coll_violations_before);
	cr_assert_eq(st->coll_violations_after, 0);
	cr_assert_eq(mgr_causality_shift(c, 60, 150), 0);
	cr_assert_eq(mgr_causality_shift(c, 62, 200), 0);
	cr_assert_eq(mgr_causality_shift(c, 62, 250), 50);
	mgr_causality_free(c);
}

/* One collective of type on MPI_COMM_WORLD across three ranks (streams 70,
 * 71, 72): rank r from in[r] to out[r] with arguments a[r][0..3); the
 * repair built and returned. */
static struct mgr_causality *one_collective(unsigned type, const uint64_t in[3],
					    const uint64_t out[3],
					    const int64_t a[3][4])
{
	struct proto_event e[3][1];

	for (int r = 0; r < 3; r++)
		e[r][0] = jobgen_ev(type, in[r], out[r], a[r][0], a[r][1], a[r][2],
				    a[r][3], 0);
	jobgen_job(&g, 70, 3, (struct proto_event *[]){e[0], e[1], e[2]},
		   (size_t[]){1, 1, 1});
	return build(NULL, 0);
}

/* The exits found short and moved; which ranks moved (bit r). */
static void expect_moved(struct mgr_causality *c, uint64_t n, unsigned ranks,
			 const uint64_t out[3])
{
	const struct mgr_causality_stats *st = mgr_causality_stats(c);

	cr_assert_eq(st->collectives, 1);
	cr_assert_eq(st->coll_violations_before, n, "short exits %llu, expected %llu",
		     (unsigned long long)st->coll_violations_before, (unsigned long long)n);
	cr_assert_eq(st->coll_violations_after, 0);
	cr_assert_eq(st->coll_moved, n);
	for (int r = 0; r < 3; r++)
		cr_assert_eq(mgr_causality_shift(c, 70 + (uint64_t)r, out[r]) > 0,
			     (ranks >> r) & 1, "rank %d's exit moved by %lld", r,
			     (long long)mgr_causality_shift(c, 70 + (uint64_t)r, out[r]));
	if (!n) {
		cr_assert_eq(st->passes, 0, "nothing to repair: no pass");
		cr_assert_eq(st->max_shift_ns, 0);
	}
	mgr_causality_free(c);
}

/* Everyone waits for everyone: rank 0 leaves at 150, before rank 1 enters
 * at 300; rank 2 leaves at 400, after every entry; rank 1 after rank 0's
 * and rank 2's entries. */
static const uint64_t all_in[3] = {100, 300, 120}, all_out[3] = {150, 350, 400};

Test(causality, barrier_every_exit_after_every_entry)
{
	const int64_t a[3][4] = {{0}, {0}, {0}};

	expect_moved(one_collective(PROTO_EV_MPI_BARRIER, all_in, all_out, a), 1, 1, all_out);
}

Test(causality, allreduce_every_exit_after_every_entry)
{
	const int64_t a[3][4] = {{8, 0}, {8, 0}, {8, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_ALLREDUCE, all_in, all_out, a), 1, 1, all_out);
}

Test(causality, allgather_every_exit_after_every_entry)
{
	const int64_t a[3][4] = {{8, 8, 0}, {8, 8, 0}, {8, 8, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_ALLGATHER, all_in, all_out, a), 1, 1, all_out);
}

Test(causality, alltoall_every_exit_after_every_entry)
{
	const int64_t a[3][4] = {{8, 8, 0}, {8, 8, 0}, {8, 8, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_ALLTOALL, all_in, all_out, a), 1, 1, all_out);
}

/* No data, no dependence: an allreduce of 0 bytes moves nothing. */
Test(causality, allreduce_of_nothing_waits_for_nobody)
{
	const int64_t a[3][4] = {{0, 0}, {0, 0}, {0, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_ALLREDUCE, all_in, all_out, a), 0, 0, all_out);
}

/* A bcast rooted at 1: rank 0 leaves at 150, before the root enters at 300
 * (moved); the root leaves at 310 before rank 2 enters (nothing: the root
 * waits for nobody); rank 2 enters at 400, after the root. */
static const uint64_t bc_in[3] = {100, 300, 400}, bc_out[3] = {150, 310, 450};

Test(causality, bcast_non_root_exits_after_root_entry)
{
	const int64_t a[3][4] = {{8, 1, 0}, {8, 1, 0}, {8, 1, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_BCAST, bc_in, bc_out, a), 1, 1, bc_out);
}

/* The same bcast of 0 bytes (hpcc makes them): MPI returns at once. */
Test(causality, bcast_of_nothing_waits_for_nobody)
{
	const int64_t a[3][4] = {{0, 1, 0}, {0, 1, 0}, {0, 1, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_BCAST, bc_in, bc_out, a), 0, 0, bc_out);
}

/* A scatter rooted at 1, as the bcast. */
Test(causality, scatter_non_root_exits_after_root_entry)
{
	const int64_t a[3][4] = {{0, 8, 1, 0}, {24, 8, 1, 0}, {0, 8, 1, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_SCATTER, bc_in, bc_out, a), 1, 1, bc_out);
}

/* A reduce rooted at 0: the root leaves at 150, before rank 1 enters at
 * 200 (moved); rank 2 leaves at 130, before rank 1 enters too, but a
 * reduce's other members wait for nobody. */
static const uint64_t rd_in[3] = {100, 200, 120}, rd_out[3] = {150, 250, 130};

Test(causality, reduce_root_exits_after_every_entry)
{
	const int64_t a[3][4] = {{8, 0, 0}, {8, 0, 0}, {8, 0, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_REDUCE, rd_in, rd_out, a), 1, 1, rd_out);
}

Test(causality, gather_root_exits_after_every_entry)
{
	const int64_t a[3][4] = {{8, 24, 0, 0}, {8, 0, 0, 0}, {8, 0, 0, 0}};

	expect_moved(one_collective(PROTO_EV_MPI_GATHER, rd_in, rd_out, a), 1, 1, rd_out);
}

/* Two ranks on one clock, messages and collectives all in order: the
 * repair finds nothing and moves nothing. */
Test(causality, nothing_to_repair_moves_nothing)
{
	struct proto_event e0[5], e1[5];

	e0[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 100, 200, 0, 0, 0, 0, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_SEND, 300, 310, 1, 7, 0, 8, 0);
	e0[2] = jobgen_ev(PROTO_EV_MPI_BCAST, 400, 420, 8, 0, 0, 0, 0);
	e0[3] = jobgen_ev(PROTO_EV_MPI_RECV, 500, 700, 1, 8, 0, 8, 0);
	e0[4] = jobgen_ev(PROTO_EV_MPI_ALLREDUCE, 800, 900, 8, 0, 0, 0, 0);
	e1[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 150, 201, 0, 0, 0, 0, 0);
	e1[1] = jobgen_ev(PROTO_EV_MPI_RECV, 250, 320, 0, 7, 0, 8, 0);
	e1[2] = jobgen_ev(PROTO_EV_MPI_BCAST, 350, 430, 8, 0, 0, 0, 0);
	e1[3] = jobgen_ev(PROTO_EV_MPI_SEND, 600, 610, 0, 8, 0, 8, 0);
	e1[4] = jobgen_ev(PROTO_EV_MPI_ALLREDUCE, 850, 860, 8, 0, 0, 0, 0);
	jobgen_job(&g, 80, 2, (struct proto_event *[]){e0, e1}, (size_t[]){5, 5});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->matched, 2);
	cr_assert_eq(st->violations_before, 0);
	cr_assert_eq(st->coll_violations_before, 0);
	cr_assert_eq(st->collectives, 3);
	cr_assert_eq(st->jumps, 0);
	cr_assert_eq(st->coll_moved, 0);
	cr_assert_eq(st->passes, 0);
	cr_assert_eq(st->max_shift_ns, 0);
	for (uint64_t t = 0; t < 1000; t += 50) {
		cr_assert_eq(mgr_causality_shift(c, 80, t), 0);
		cr_assert_eq(mgr_causality_shift(c, 81, t), 0);
	}
	mgr_causality_free(c);
}

/* Two threads of rank 0: thread 1 sends to rank 1 from 900 to 2000 while
 * thread 0 receives from rank 2 at 950..960, a message rank 2 sent at 1500
 * (a violation: rank 0's clock is behind). The forward pass moves the
 * receive to 1500 by a jump at 950; a ramp from rank 0's previous MPI end
 * (100) would move thread 1's send, inside it, to about 1420, after rank
 * 1 received it (1000): a violation the repair made. The repair keeps its
 * steps instead; violations never grow. */
Test(causality, ramps_that_would_add_violations_stay_steps)
{
	struct proto_event e0[3], e1[1], e2[1];

	e0[0] = jobgen_ev(PROTO_EV_MPI_BARRIER, 50, 100, 0, 0, 0, 0, 0);
	e0[1] = jobgen_ev(PROTO_EV_MPI_SEND, 900, 2000, 1, 7, 0, 8, 0);
	e0[1].tid = 1;
	e0[2] = jobgen_ev(PROTO_EV_MPI_RECV, 950, 960, 2, 9, 0, 8, 0);
	e1[0] = jobgen_ev(PROTO_EV_MPI_RECV, 950, 1000, 0, 7, 0, 8, 0);
	e2[0] = jobgen_ev(PROTO_EV_MPI_SEND, 1500, 1510, 0, 9, 0, 8, 0);
	jobgen_job(&g, 90, 3, (struct proto_event *[]){e0, e1, e2}, (size_t[]){3, 1, 1});

	struct mgr_causality *c = build(NULL, 0);
	const struct mgr_causality_stats *st = mgr_causality_stats(c);
	cr_assert_eq(st->violations_before, 1);
	cr_assert_eq(st->violations_after, 0);
	cr_assert_eq(st->steps, 1, "ramps would have moved the send");
	cr_assert_eq(st->reverted, 0);
	cr_assert_eq(mgr_causality_shift(c, 90, 900), 0);
	cr_assert_eq(mgr_causality_shift(c, 90, 960), 540);
	mgr_causality_free(c);
}
