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
