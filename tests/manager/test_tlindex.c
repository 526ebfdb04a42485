/*
 * tests/manager/test_tlindex.c - the timeline index of `tapestry serve`
 * (manager/serve/tlindex.c) on job directories written by hand: every event
 * of the program on its lane in time order, a window answered event by event
 * or per pixel with every event counted once, the matched message, details,
 * an empty job, and a damaged index refused as such.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "manager/serve/serve.h"
#include "proto/event.h"
#include "tests/manager/jobgen.h"

static struct jobgen g;
static char idx[160];

static void setup(void)
{
	setenv("TAPESTRY_NO_CORRECTION", "1", 1);	/* times as written */
	jobgen_init(&g, "tlx");
	snprintf(idx, sizeof(idx), "%s/timeline.idx", g.base);
}

static void teardown(void)
{
	unlink(idx);
	jobgen_free(&g);
}

TestSuite(tlindex, .init = setup, .fini = teardown);

/* The answer to a query, NUL-terminated (free it). */
static char *query(int64_t t0, int64_t t1, int w)
{
	struct evbuffer *b = evbuffer_new();
	char why[256];
	int rc = srv_tl_query(idx, t0, t1, w, b, why, sizeof(why));

	cr_assert_eq(rc, 0, "query: %s", why);
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

/* Sum of the integers of the JSON array after key in s, from position from. */
static long sum_array(const char *s, const char *key, const char **after)
{
	const char *p = strstr(s, key);
	long sum = 0;

	cr_assert(p, "no %s in %s", key, s);
	p += strlen(key);
	while (*p && *p != ']') {
		sum += strtol(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	*after = p;
	return sum;
}

/* rank 0: 200 writes 100 ns apart, written latest first, then a send;
 * rank 1: the receive and a memory sample. */
static void two_ranks(void)
{
	struct proto_event e0[201], e1[2];

	jobgen_rank(&g, 10, 0);
	jobgen_rank(&g, 11, 1);
	for (int i = 0; i < 200; i++) {
		uint64_t t = 100000 + 100 * (uint64_t)(199 - i);

		e0[i] = jobgen_ev(PROTO_EV_WRITE, t, t + 40, 1, 8, 8, 0, 0);
	}
	e0[200] = jobgen_ev(PROTO_EV_MPI_SEND, 130000, 130010, 1, 7, 0, 8, 0);
	e1[0] = jobgen_ev(PROTO_EV_MPI_RECV, 130500, 130600, 0, 7, 0, 8, 0);
	e1[1] = jobgen_ev(PROTO_EV_MEM_SAMPLE, 120000, 120000, 4096000, 0, 0, 0, 0);
	jobgen_batch(&g, 10, 1, e0, 201);
	jobgen_batch(&g, 11, 1, e1, 2);
	jobgen_close(&g);
	cr_assert_eq(srv_tl_build(g.dir, idx), 0);
}

Test(tlindex, whole_job_event_by_event_with_the_message)
{
	two_ranks();
	char *s = query(INT64_MIN, INT64_MAX, 1000);

	cr_assert(strstr(s, "\"events\":203,\"messages\":1,"), "%s", s);
	cr_assert(strstr(s, "\"lane\":0,\"stream\":\"000000000000000a\",\"rank\":0"), "%s", s);
	cr_assert(strstr(s, "\"lane\":1,\"stream\":\"000000000000000b\",\"rank\":1"), "%s", s);
	/* rank 0's writes come sorted by time whatever the order written */
	const char *p = strstr(s, "\"ev\":[[") + 6;
	int64_t last = INT64_MIN;

	for (int i = 0; i < 201; i++) {
		long long idx_, start;

		cr_assert_eq(sscanf(p, "[%lld,%lld", &idx_, &start), 2, "at %.40s", p);
		cr_assert_eq(idx_, i);
		cr_assert_geq(start, last, "event %d starts at %lld, before %lld", i, start,
			      (long long)last);
		last = start;
		p = strchr(p, ']') + 2;
	}
	cr_assert(strstr(s, "\"mem\":[[20000,4096000]]"), "%s", s);
	/* the send of lane 0 to the receive of lane 1 (times from the job start) */
	cr_assert(strstr(s, "\"msgs\":[[0,30000,30010,1,30500,30600]]"), "%s", s);
	free(s);
}

Test(tlindex, narrow_pixels_count_every_event_once)
{
	two_ranks();
	char *s = query(INT64_MIN, INT64_MAX, 8);	/* 201 events > 2 x 8 */
	const char *after;

	cr_assert(strstr(s, "\"mode\":\"pixels\""), "%s", s);
	cr_assert_eq(sum_array(s, "\"pc\":[", &after), 201);
	cr_assert(!strstr(s, "\"msgs\""), "messages only when every lane is in events");
	/* no pixel busier than itself in any category */
	const char *p = strstr(s, "\"px\":[") + 6;

	for (int k = 0; k < 32; k++) {
		long v = strtol(p, (char **)&p, 10);

		cr_assert(v >= 0 && v <= 1000, "fraction %ld", v);
		p++;
	}
	free(s);
}

Test(tlindex, a_window_gives_its_events_and_the_one_under_its_start)
{
	two_ranks();
	/* [10020, 10130]: the write at 10000..10040 is under t0, then 10100 */
	char *s = query(10020, 10130, 1000);

	cr_assert(strstr(s, "\"t0\":10020,\"t1\":10130,"), "%s", s);
	cr_assert(strstr(s, ",10000,10040,"), "%s", s);
	cr_assert(strstr(s, ",10100,10140,"), "%s", s);
	cr_assert(!strstr(s, ",10200,"), "%s", s);
	free(s);
}

Test(tlindex, details_of_an_event_and_out_of_range)
{
	struct evbuffer *b = evbuffer_new();
	char why[256], out[1024] = "";

	two_ranks();
	cr_assert_eq(srv_tl_event(idx, 200, b, why, sizeof(why)), 0, "%s", why);
	evbuffer_copyout(b, out, sizeof(out) - 1);
	cr_assert(strstr(out, "\"name\":\"MPI_Send\""), "%s", out);
	cr_assert(strstr(out, "\"start\":30000,\"end\":30010"), "%s", out);
	cr_assert_eq(srv_tl_event(idx, 203, b, why, sizeof(why)), -2);
	cr_assert(strstr(why, "no event 203"), "%s", why);
	evbuffer_free(b);
}

Test(tlindex, empty_job)
{
	jobgen_meta(&g, 10, "rank", "0");
	jobgen_close(&g);
	cr_assert_eq(srv_tl_build(g.dir, idx), 0);
	char *s = query(0, 100, 10);

	cr_assert(strstr(s, "\"events\":0,\"messages\":0,\"lanes\":[]"), "%s", s);
	free(s);
}

Test(tlindex, damaged_index_is_refused_as_such)
{
	struct evbuffer *b = evbuffer_new();
	char why[256];

	two_ranks();
	cr_assert_eq(truncate(idx, 200), 0);
	cr_assert_eq(srv_tl_query(idx, 0, 100, 10, b, why, sizeof(why)), -3);
	cr_assert(strstr(why, "damaged"), "%s", why);
	cr_assert_eq(srv_tl_query(idx, 0, 100, 0, b, why, sizeof(why)), -2);
	evbuffer_free(b);
}

/* The answer of f (srv_tl_range or srv_tl_find), NUL-terminated (free it). */
static char *answer(int rc, struct evbuffer *b, const char *why)
{
	cr_assert_eq(rc, 0, "%s", why);
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

static char *range(int64_t t0, int64_t t1)
{
	struct evbuffer *b = evbuffer_new();
	char why[256] = "";

	return answer(srv_tl_range(idx, t0, t1, b, why, sizeof(why)), b, why);
}

static char *find(const char *name, int64_t after, int64_t after_i)
{
	struct evbuffer *b = evbuffer_new();
	char why[256] = "";

	return answer(srv_tl_find(idx, name, after, after_i, b, why, sizeof(why)), b, why);
}

/* "[TYPE,CALLS,NS,CAT]" */
static int has_cell(const char *s, unsigned type, long calls, long ns)
{
	char cellstr[64];

	snprintf(cellstr, sizeof(cellstr), "[%u,%ld,%ld,", type, calls, ns);
	return strstr(s, cellstr) != NULL;
}

Test(tlindex, a_windows_profile_clips_the_calls_at_its_edges)
{
	two_ranks();
	char *s = range(INT64_MIN, INT64_MAX);

	cr_assert(has_cell(s, PROTO_EV_WRITE, 200, 8000), "%s", s);
	cr_assert(has_cell(s, PROTO_EV_MPI_SEND, 1, 10), "%s", s);
	cr_assert(strstr(s, ",1,10,0]"), "MPI_Send is point to point (0): %s", s);
	cr_assert(strstr(s, "{\"lane\":1,\"calls\":[[") && has_cell(s, PROTO_EV_MPI_RECV, 1, 100),
		  "%s", s);
	cr_assert(strstr(s, "\"MPI_Recv\"") && strstr(s, "\"write\""), "names: %s", s);
	cr_assert(!strstr(s, "mem_sample"), "a memory sample is no call: %s", s);
	free(s);
	/* the write under t0 (10000..10040) and the one at 10100..10140, clipped */
	s = range(10020, 10130);
	cr_assert(has_cell(s, PROTO_EV_WRITE, 2, 20 + 30), "%s", s);
	cr_assert(!strstr(s, "\"lane\":1"), "%s", s);
	free(s);
	/* inside one call */
	s = range(30550, 30560);
	cr_assert(has_cell(s, PROTO_EV_MPI_RECV, 1, 10), "%s", s);
	cr_assert(strstr(s, "\"lanes\":[{\"lane\":1,"), "%s", s);
	free(s);
}

#define LONG_N 5000

/* rank 0: LONG_N writes 100 ns apart, 40 ns each, under one MPI_Wait of
 * 10..450000 (nested: the running totals' rows must find it), and an
 * MPI_Barrier every 1000th write, 5 ns; a second lane of 3 MPI_Allreduce. */
static void long_lane(struct proto_event *e)
{
	struct proto_event r1[3];

	jobgen_rank(&g, 10, 0);
	jobgen_rank(&g, 11, 1);
	for (int i = 0; i < LONG_N; i++) {
		uint64_t t = 1000 + 100 * (uint64_t)i;

		e[i] = jobgen_ev(i % 1000 == 999 ? PROTO_EV_MPI_BARRIER : PROTO_EV_WRITE, t,
				 t + (i % 1000 == 999 ? 5 : 40), 1, 8, 8, 0, 0);
	}
	e[LONG_N] = jobgen_ev(PROTO_EV_MPI_WAIT, 1010, 451000, 0, 0, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		r1[i] = jobgen_ev(PROTO_EV_MPI_ALLREDUCE, 1000 + 200000 * (uint64_t)i,
				  1000 + 200000 * (uint64_t)i + 7000, 8, 0, 0, 0, 0);
	for (int k = 0; k <= LONG_N / 1000; k++)
		jobgen_batch(&g, 10, (uint64_t)k + 1, e + 1000 * k,
			     k == LONG_N / 1000 ? 1 : 1000);
	jobgen_batch(&g, 11, 1, r1, 3);
	jobgen_close(&g);
	cr_assert_eq(srv_tl_build(g.dir, idx), 0);
}

Test(tlindex, a_windows_profile_equals_the_sum_over_its_events)
{
	static struct proto_event e[LONG_N + 1];
	const unsigned types[] = {PROTO_EV_WRITE, PROTO_EV_MPI_BARRIER, PROTO_EV_MPI_WAIT};

	long_lane(e);
	/* windows at block edges, inside one, across several, the whole job
	 * (times from the job start: the events' minus 1000) */
	const int64_t win[][2] = {{0, 10}, {99990, 100010}, {102390, 102410}, {50, 450000},
				  {123456, 345678}, {449999, 460000}, {0, 2}, {300, 301}};

	for (size_t w = 0; w < sizeof(win) / sizeof(win[0]); w++) {
		int64_t t0 = win[w][0], t1 = win[w][1];
		char *s = range(t0, t1);

		for (size_t k = 0; k < 3; k++) {
			long calls = 0, ns = 0;

			for (int i = 0; i <= LONG_N; i++) {
				int64_t a = (int64_t)e[i].t_start - 1000, z = (int64_t)e[i].t_end - 1000;

				if (e[i].type != types[k] || a > t1 || (a < t0 && z <= t0))
					continue;
				calls++;
				ns += (z < t1 ? z : t1) - (a > t0 ? a : t0);
			}
			cr_assert(!calls || has_cell(s, types[k], calls, ns),
				  "[%ld, %ld] type %u: %ld calls, %ld ns expected in %s",
				  (long)t0, (long)t1, types[k], calls, ns, s);
			if (!calls) {
				char no[16];

				snprintf(no, sizeof(no), "[%u,", types[k]);
				cr_assert(!strstr(s, no), "[%ld, %ld] no type %u: %s",
					  (long)t0, (long)t1, types[k], s);
			}
		}
		free(s);
	}
}

Test(tlindex, a_search_walks_the_calls_in_time_order)
{
	static struct proto_event e[LONG_N + 1];

	long_lane(e);
	/* "barrier": the 5 MPI_Barrier, at 99900 + 100000 k from the job start */
	char *s = find("barrier", INT64_MIN, -1);
	long long i0, start, i1;

	cr_assert(strstr(s, "\"matches\":5,") && strstr(s, "\"MPI_Barrier\""), "%s", s);
	cr_assert(!strstr(s, "MPI_Allreduce"), "%s", s);
	cr_assert_eq(sscanf(strstr(s, "\"next\":{"), "\"next\":{\"i\":%lld,\"lane\":0,\"start\":%lld",
			    &i0, &start), 2, "%s", s);
	cr_assert_eq(start, 99900);
	free(s);
	for (int k = 1; k < 5; k++) {
		s = find("BARRIER", start, i0);
		cr_assert_eq(sscanf(strstr(s, "\"next\":{"), "\"next\":{\"i\":%lld,\"lane\":0,"
				    "\"start\":%lld", &i1, &start), 2, "%s", s);
		cr_assert_eq(start, 99900 + 100000 * k, "%s", s);
		cr_assert_gt(i1, i0);
		i0 = i1;
		free(s);
	}
	s = find("barrier", start, i0);
	cr_assert(strstr(s, "\"next\":null"), "past the last: %s", s);
	free(s);
	/* "MPI_": every MPI call of both lanes, the first the MPI_Allreduce at 0
	 * (lane 1), then the MPI_Wait at 10 (lane 0) */
	s = find("MPI_", INT64_MIN, -1);
	cr_assert(strstr(s, "\"matches\":9,"), "%s", s);
	cr_assert(strstr(s, "\"lane\":1,\"start\":0,\"end\":7000,"), "%s", s);
	free(s);
	s = find("MPI_", 0, 1000000);
	cr_assert(strstr(s, "\"lane\":0,\"start\":10,\"end\":450000,"), "%s", s);
	free(s);
	s = find("nosuchcall", INT64_MIN, -1);
	cr_assert(strstr(s, "\"matches\":0,\"names\":{},\"next\":null"), "%s", s);
	free(s);
	/* a name that is not one: refused */
	struct evbuffer *b = evbuffer_new();
	char why[256];

	cr_assert_eq(srv_tl_find(idx, "MPI Send", INT64_MIN, -1, b, why, sizeof(why)), -2);
	cr_assert_eq(srv_tl_find(idx, "", INT64_MIN, -1, b, why, sizeof(why)), -2);
	evbuffer_free(b);
}
