/*
 * tests/manager/test_match.c - the one MPI message matcher
 * (manager/post/match.h): tags and wildcards, arrival in any interleaving
 * of the ranks (the same pairs as sends first), ends never met, channels
 * kept apart by communicator and by direction, the bound on ends waiting.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "manager/post/match.h"
#include "proto/error.h"

#define MAXP 64

/* The pairs found: pair[send id] = receive id (-1: none). */
struct pairs {
	int pair[MAXP];
	int64_t tag[MAXP];
	uint64_t ord[MAXP];
	int n;
};

static void on_pair(void *arg, const void *send, const void *recv, int64_t tag,
		    uint64_t ord)
{
	struct pairs *p = arg;
	int s, r;

	memcpy(&s, send, sizeof(s));
	memcpy(&r, recv, sizeof(r));
	cr_assert(s >= 0 && s < MAXP && p->pair[s] == -1, "send %d paired twice", s);
	p->pair[s] = r;
	p->tag[s] = tag;
	p->ord[s] = ord;
	p->n++;
}

static struct mgr_match *fresh(struct pairs *p)
{
	memset(p, 0, sizeof(*p));
	memset(p->pair, 0xff, sizeof(p->pair));
	struct mgr_match *m = mgr_match_new(sizeof(int), 1000, on_pair, p);

	cr_assert(m);
	return m;
}

/* An end: a send (id, src -> dst, comm, tag) or a receive. */
struct end {
	int send, id;
	int64_t src, dst, comm, tag;
};

static void feed(struct mgr_match *m, const struct end *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = e[i].send ?
			mgr_match_send(m, e[i].src, e[i].dst, e[i].comm, e[i].tag, &e[i].id, NULL) :
			mgr_match_recv(m, e[i].src, e[i].dst, e[i].comm, e[i].tag, &e[i].id);

		cr_assert_eq(rc, 0);
	}
}

/* The pairs found are want[0..n) (receive ids by send id, -1: none) and
 * wait ends are left waiting. */
static void expect(struct mgr_match *m, const struct pairs *p, const int *want,
		   int n, size_t wait)
{
	int found = 0;

	for (int i = 0; i < n; i++) {
		cr_assert_eq(p->pair[i], want[i], "send %d: %d, not %d", i, p->pair[i], want[i]);
		found += want[i] >= 0;
	}
	cr_assert_eq(p->n, found);
	cr_assert_eq(mgr_match_waiting(m), wait);
	mgr_match_free(m);
}

Test(match, tags_non_overtaking_per_tag)
{
	struct pairs p;
	struct mgr_match *m = fresh(&p);
	/* rank 0 sends tags 5, 7, 5 to rank 1, which receives 7, 5, 5 */
	struct end e[] = {
		{1, 0, 0, 1, 0, 5}, {1, 1, 0, 1, 0, 7}, {1, 2, 0, 1, 0, 5},
		{0, 10, 0, 1, 0, 7}, {0, 11, 0, 1, 0, 5}, {0, 12, 0, 1, 0, 5},
	};

	feed(m, e, 6);
	cr_assert_eq(p.ord[0], 0);
	cr_assert_eq(p.ord[2], 1);
	cr_assert_eq(p.ord[1], 0);
	expect(m, &p, (int[]){11, 10, 12}, 3, 0);
}

Test(match, wildcard_takes_first_send_of_any_tag)
{
	struct pairs p;
	struct mgr_match *m = fresh(&p);
	/* receives: 7, any, 5; sends 5, 7, 5: the any takes the first
	 * send left (the 5 at 0), its tag is the send's */
	struct end e[] = {
		{1, 0, 0, 1, 0, 5}, {1, 1, 0, 1, 0, 7}, {1, 2, 0, 1, 0, 5},
		{0, 10, 0, 1, 0, 7}, {0, 11, 0, 1, 0, MGR_MATCH_ANY}, {0, 12, 0, 1, 0, 5},
	};

	feed(m, e, 6);
	cr_assert_eq(p.tag[0], 5);
	expect(m, &p, (int[]){11, 10, 12}, 3, 0);
}

/* Every interleaving of the two ranks' own orders gives the pairs of
 * sends first: receives arriving first wait, wildcards among them. */
Test(match, out_of_order_arrival_across_ranks)
{
	struct end snd[] = {
		{1, 0, 0, 1, 0, 5}, {1, 1, 0, 1, 0, 7}, {1, 2, 0, 1, 0, 5}, {1, 3, 0, 1, 0, 9},
	};
	struct end rcv[] = {
		{0, 10, 0, 1, 0, 7}, {0, 11, 0, 1, 0, MGR_MATCH_ANY},
		{0, 12, 0, 1, 0, 5}, {0, 13, 0, 1, 0, MGR_MATCH_ANY},
	};
	struct pairs ref, p;
	struct mgr_match *m = fresh(&ref);

	feed(m, snd, 4);
	feed(m, rcv, 4);
	mgr_match_free(m);
	cr_assert_eq(ref.n, 4);
	cr_assert_eq(ref.pair[3], 13);
	/* the 70 interleavings of 4 sends and 4 receives */
	for (unsigned mask = 0; mask < 256; mask++) {
		if (__builtin_popcount(mask) != 4)
			continue;
		size_t i = 0, j = 0;

		m = fresh(&p);
		for (int k = 0; k < 8; k++)
			feed(m, mask >> k & 1 ? &snd[i++] : &rcv[j++], 1);
		cr_assert_eq(p.n, 4, "mask %x", mask);
		for (int s = 0; s < 4; s++) {
			cr_assert_eq(p.pair[s], ref.pair[s], "mask %x send %d", mask, s);
			cr_assert_eq(p.tag[s], ref.tag[s]);
			cr_assert_eq(p.ord[s], ref.ord[s]);
		}
		cr_assert_eq(mgr_match_waiting(m), 0);
		mgr_match_free(m);
	}
}

Test(match, unmatched_at_end_wait)
{
	struct pairs p;
	struct mgr_match *m = fresh(&p);
	/* a send of tag 3 nobody receives; a receive of tag 4 nothing sends */
	struct end e[] = {
		{1, 0, 0, 1, 0, 3}, {0, 10, 0, 1, 0, 4}, {1, 1, 0, 1, 0, 2}, {0, 11, 0, 1, 0, 2},
	};

	feed(m, e, 4);
	expect(m, &p, (int[]){-1, 11}, 2, 2);
}

Test(match, communicators_and_directions_apart)
{
	struct pairs p;
	struct mgr_match *m = fresh(&p);
	/* same ranks and tag on comms 0 and 3, and 1 -> 0 beside 0 -> 1 */
	struct end e[] = {
		{1, 0, 0, 1, 3, 1}, {1, 1, 0, 1, 0, 1}, {1, 2, 1, 0, 0, 1},
		{0, 10, 0, 1, 0, MGR_MATCH_ANY}, {0, 11, 1, 0, 0, 1}, {0, 12, 0, 1, 3, 1},
		{0, 13, 2, 1, 0, 1},
	};

	feed(m, e, 7);
	/* the receive from rank 2 waits: nothing sent */
	expect(m, &p, (int[]){12, 10, 11}, 3, 1);
}

Test(match, bounds)
{
	struct pairs p;
	int id = 0;

	memset(&p, 0, sizeof(p));
	memset(p.pair, 0xff, sizeof(p.pair));
	struct mgr_match *m = mgr_match_new(sizeof(int), 2, on_pair, &p);

	cr_assert_eq(mgr_match_send(m, 0, 1, 0, 1, &id, NULL), 0);
	cr_assert_eq(mgr_match_send(m, 0, 1, 0, 1, &id, NULL), 0);
	cr_assert_eq(mgr_match_send(m, 0, 1, 0, 1, &id, NULL), PROTO_E_FULL);
	cr_assert_eq(mgr_match_send(m, -1, 1, 0, 1, &id, NULL), PROTO_E_FIELD);
	cr_assert_eq(mgr_match_recv(m, 0, 1, (int64_t)1 << 40, 1, &id), PROTO_E_FIELD);
	cr_assert_eq(mgr_match_recv(m, 0, 1, 0, 1, &id), 0);	/* takes one */
	cr_assert_eq(mgr_match_waiting(m), 1);
	mgr_match_free(m);
}
