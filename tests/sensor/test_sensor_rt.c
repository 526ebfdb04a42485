/*
 * tests/sensor/test_sensor_rt.c - the sensor runtime's rings, containers,
 * guard, fd table and clock, without the sender thread (the test drains
 * the rings itself through sn_threads_drain, as the sender does).
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/event.h"
#include "sensor/rt.h"

#define MAXEV 200000

static struct proto_event *got;
static size_t ngot;

static int collect(void *ctx, const struct proto_event *ev, size_t n)
{
	(void)ctx;
	cr_assert_leq(ngot + n, MAXEV);
	memcpy(got + ngot, ev, n * sizeof(*ev));
	ngot += n;
	return 0;
}

static size_t drain_all(void)
{
	ngot = 0;
	while (sn_threads_drain(collect, NULL, MAXEV - ngot) > 0)
		;
	return ngot;
}

static void setup(void)
{
	memset(&sn_cfg, 0, sizeof(sn_cfg));
	sn_cfg.budget = 16u << 20;	/* ring: 1 MiB = 14563 records */
	sn_cfg.sens_libc = 1;
	sn_clock_init();
	atomic_store(&sn_state, SN_ST_READY);
	got = calloc(MAXEV, sizeof(*got));
	cr_assert_not_null(got);
}

static void teardown(void)
{
	free(got);
}

TestSuite(sensor_rt, .init = setup, .fini = teardown);

static int put(uint16_t type, int64_t a0)
{
	struct proto_event *e;

	if (!sn_enter())
		return -1;
	e = sn_slot();
	if (e) {
		e->t_start = sn_now();
		e->t_end = e->t_start + 1;
		e->type = type;
		e->arg[0] = a0;
		for (int i = 1; i < PROTO_EV_NARGS; i++)
			e->arg[i] = 0;
		sn_commit(e);
	}
	sn_leave();
	return e ? 0 : 1;
}

Test(sensor_rt, records_come_out_in_order)
{
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(put(PROTO_EV_WRITE, i), 0);
	cr_assert_eq(drain_all(), 1000);
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(got[i].type, PROTO_EV_WRITE);
		cr_assert_eq(got[i].arg[0], i);
		cr_assert_eq(got[i].tid, 0);
		cr_assert_eq(got[i].flags, 0);
		if (i)
			cr_assert_geq(got[i].t_start, got[i - 1].t_start);
	}
	cr_assert_eq(drain_all(), 0, "a drained ring is empty");
}

Test(sensor_rt, ring_wraps_many_times)
{
	int64_t next = 0;

	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 5000; i++)
			cr_assert_eq(put(PROTO_EV_READ, round * 5000 + i), 0);
		cr_assert_eq(drain_all(), 5000);
		for (size_t i = 0; i < ngot; i++)
			cr_assert_eq(got[i].arg[0], next++);
	}
}

Test(sensor_rt, full_ring_counts_drops_then_reports_them)
{
	int ok = 0, dropped = 0;

	for (int i = 0; i < 20000; i++) {
		int r = put(PROTO_EV_WRITE, i);

		ok += r == 0;
		dropped += r == 1;
	}
	cr_assert_gt(dropped, 0);
	cr_assert_eq(ok + dropped, 20000);
	cr_assert_eq(sn_threads_dropped(), (uint64_t)dropped);
	cr_assert_eq(drain_all(), (size_t)ok);
	/* space is back: the next record is preceded by a DROP record */
	cr_assert_eq(put(PROTO_EV_WRITE, -1), 0);
	cr_assert_eq(drain_all(), 2);
	cr_assert_eq(got[0].type, PROTO_EV_DROP);
	cr_assert_eq(got[0].arg[0], dropped);
	cr_assert_eq(got[1].arg[0], -1);
	cr_assert_eq(sn_threads_dropped(), (uint64_t)dropped, "total unchanged");
}

Test(sensor_rt, guard_refuses_nested_sections)
{
	cr_assert_eq(sn_enter(), 1);
	cr_assert_eq(sn_enter(), 0, "re-entered from inside the tracer");
	sn_leave();
	cr_assert_eq(sn_enter(), 1);
	sn_leave();
	atomic_store(&sn_state, SN_ST_DOWN);
	cr_assert_eq(sn_enter(), 0, "shut down");
}

Test(sensor_rt, strings_are_chunked_and_cached)
{
	char s[100];
	int64_t id, id2;

	for (int i = 0; i < 100; i++)
		s[i] = (char)('a' + i % 26);
	cr_assert_eq(sn_enter(), 1);
	id = sn_string(s, sizeof(s));
	id2 = sn_string(s, sizeof(s));
	sn_leave();
	cr_assert_gt(id, 0);
	cr_assert_eq(id2, id, "second time from the cache");
	cr_assert_eq(drain_all(), 3, "100 bytes: 48 + 48 + 4");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(got[i].type, PROTO_EV_STRING);
		cr_assert_eq(got[i].t_start, (uint64_t)id);
		cr_assert_eq(got[i].t_end, (uint64_t)(i * PROTO_STRING_CHUNK));
		cr_assert_eq(got[i].flags, i < 2 ? 48 : 4);
		cr_assert_eq(memcmp(got[i].arg, s + i * 48, got[i].flags), 0);
	}
}

Test(sensor_rt, strings_bad_input_and_limits)
{
	char *big = malloc(PROTO_STRING_MAX + 1000);
	int64_t a, b;

	cr_assert_not_null(big);
	memset(big, 'x', PROTO_STRING_MAX + 1000);
	cr_assert_eq(sn_string(NULL, 5), 0);
	cr_assert_eq(sn_string("abc", 0), 0);
	a = sn_string(big, PROTO_STRING_MAX + 1000);
	cr_assert_gt(a, 0);
	cr_assert_eq(drain_all(),
		     (PROTO_STRING_MAX + PROTO_STRING_CHUNK - 1) / PROTO_STRING_CHUNK,
		     "cut at PROTO_STRING_MAX");
	b = sn_string("other", 5);
	cr_assert_gt(b, a, "ids are unique");
	free(big);
}

Test(sensor_rt, arrays_follow_in_chunks_of_six)
{
	int64_t v[10];

	for (int i = 0; i < 10; i++)
		v[i] = 100 + i;
	sn_array(NULL, 3);
	sn_array(v, 0);
	cr_assert_eq(put(PROTO_EV_MPI_WAITALL, 10), 0, "registers the thread");
	sn_array(v, 10);
	cr_assert_eq(drain_all(), 3);
	cr_assert_eq(got[1].type, PROTO_EV_ARRAY);
	cr_assert_eq(got[1].t_start, 0);
	cr_assert_eq(got[1].t_end, 10);
	cr_assert_eq(got[1].flags, 6);
	cr_assert_eq(got[2].t_start, 6);
	cr_assert_eq(got[2].flags, 4);
	cr_assert_eq(got[2].arg[3], 109);
}

Test(sensor_rt, fd_table)
{
	sn_fd_set(3, 42);
	cr_assert_eq(sn_fd_path(3), 42);
	cr_assert_eq(sn_fd_path(4), 0);
	sn_fd_set(-1, 7);
	sn_fd_set(SN_FD_MAX, 7);
	cr_assert_eq(sn_fd_path(-1), 0);
	cr_assert_eq(sn_fd_path(SN_FD_MAX), 0);
	cr_assert_eq(sn_fd_path(1 << 30), 0);
	sn_fd_reset();
	cr_assert_eq(sn_fd_path(3), 0);
}

/* sn_fd_reset reads the table only up to the highest number that had a
 * path: every number set, the last one included, is forgotten; a clear
 * (path 0) of a higher number does not move the bound; after a reset the
 * bound starts again */
Test(sensor_rt, fd_table_reset_bound)
{
	sn_fd_set(5, 1);
	sn_fd_set(SN_FD_MAX - 1, 2);
	sn_fd_set(700, 3);
	sn_fd_set(SN_FD_MAX - 2, 0);
	sn_fd_reset();
	cr_assert_eq(sn_fd_path(5), 0);
	cr_assert_eq(sn_fd_path(700), 0);
	cr_assert_eq(sn_fd_path(SN_FD_MAX - 1), 0);
	sn_fd_set(9, 4);
	cr_assert_eq(sn_fd_path(9), 4);
	sn_fd_reset();
	cr_assert_eq(sn_fd_path(9), 0);
	sn_fd_set(0, 5);
	sn_fd_reset();
	cr_assert_eq(sn_fd_path(0), 0);
}

static void *thread_put(void *arg)
{
	for (int i = 0; i < 1000; i++)
		put(PROTO_EV_WRITE, (int64_t)(intptr_t)arg);
	return NULL;
}

Test(sensor_rt, threads_get_rings_of_their_own)
{
	pthread_t t[4];
	size_t per[4] = {0};

	for (intptr_t i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, thread_put, (void *)i), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(drain_all(), 4000);
	for (size_t i = 0; i < ngot; i++) {
		cr_assert_lt(got[i].arg[0], 4);
		cr_assert_neq(got[i].tid, 0, "not the main thread");
		per[got[i].arg[0]]++;
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(per[i], 1000);
	cr_assert_eq(drain_all(), 0, "rings of exited threads are freed");
}

Test(sensor_rt, clock_is_monotonic_and_maps_to_clock_monotonic)
{
	uint64_t prev = sn_now(), m, f;
	struct timespec ts;

	for (int i = 0; i < 100000; i++) {
		uint64_t t = sn_now();

		cr_assert_geq(t, prev);
		prev = t;
	}
	sn_clock_anchor();
	f = sn_clock_fix(sn_now());
	clock_gettime(CLOCK_MONOTONIC, &ts);
	m = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	cr_assert_leq(f > m ? f - m : m - f, 10000000ull,
		      "mapped stamp within 10 ms of CLOCK_MONOTONIC");
	cr_assert(strcmp(sn_clock_method(), "tsc") == 0 ||
		  strcmp(sn_clock_method(), "vdso") == 0);
}

Test(sensor_rt, enabled_parts)
{
	cr_assert_eq(sn_enabled("libc"), 1);
	cr_assert_eq(sn_enabled("mpi"), 0);
	cr_assert_eq(sn_enabled(NULL), 0);
	cr_assert_eq(sn_enabled("bogus"), 0);
}

/* ---- sn_calibrate on the calling thread's ring ---------------------------- */

/* The calibration samples in the thread's own ring and takes its samples
 * back: what was there before stays, in order, and three CALIB records
 * follow (FWRITE: libc is enabled; 0; STRING). Here fwrite is not wrapped,
 * so the stdio cost is about 0; the hot path's is not. */
Test(sensor_rt, calibration_keeps_the_ring_and_emits_calib)
{
	int seen[3] = {0};

	for (int i = 0; i < 10; i++)
		cr_assert_eq(put(PROTO_EV_WRITE, i), 0);
	sn_calibrate(1);
	cr_assert_eq(drain_all(), 13);
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(got[i].type, PROTO_EV_WRITE);
		cr_assert_eq(got[i].arg[0], i);
	}
	for (int i = 10; i < 13; i++) {
		cr_assert_eq(got[i].type, PROTO_EV_CALIB);
		cr_assert_gt(got[i].arg[2], 0, "samples");
		if (got[i].arg[0] == PROTO_EV_FWRITE)
			seen[0]++;
		else if (got[i].arg[0] == 0) {
			seen[1]++;
			cr_assert_gt(got[i].arg[1], 0, "the hot path costs something");
			cr_assert_lt(got[i].arg[1], 100000);
			cr_assert_geq(got[i].arg[3], 1000 * got[i].arg[1] - 500);
			cr_assert_leq(got[i].arg[3], 1000 * got[i].arg[1] + 500);
		} else if (got[i].arg[0] == PROTO_EV_STRING)
			seen[2]++;
	}
	cr_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
}

/* No room (the ring over half full: at exit, batches kept at their bound
 * stop the drain) or tracing off: nothing measured, nothing emitted, and
 * the ring as it was. */
Test(sensor_rt, calibration_needs_room_and_tracing_on)
{
	size_t n;

	cr_assert_eq(put(PROTO_EV_WRITE, 0), 0);
	n = sn_tls.thr->cap / 2 + 100;
	for (size_t i = 1; i < n; i++)
		cr_assert_eq(put(PROTO_EV_WRITE, (int64_t)i), 0);
	sn_calibrate(1);
	cr_assert_eq(drain_all(), n, "no CALIB with the ring over half full");
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(got[i].arg[0], (int64_t)i);

	cr_assert_eq(put(PROTO_EV_WRITE, -1), 0);
	atomic_store(&sn_state, SN_ST_DOWN);
	sn_calibrate(1);
	atomic_store(&sn_state, SN_ST_READY);
	cr_assert_eq(drain_all(), 1, "no CALIB with tracing off");
	cr_assert_eq(got[0].arg[0], -1);

	sn_calibrate(1);
	cr_assert_eq(drain_all(), 3, "room again, tracing on");
}

/* A stream continued after a failed exec: the records of every calibration
 * so far, again, in order (whatever earlier tests calibrated, when Criterion
 * runs them in one process with --no-fork: those come first). */
Test(sensor_rt, calibration_replayed_for_a_new_stream)
{
	struct proto_event first[6];
	int before;

	cr_assert_eq(put(PROTO_EV_WRITE, 0), 0);	/* this thread's ring */
	before = sn_calib_replay();
	cr_assert_eq(drain_all(), 1 + (size_t)before);
	if (before > 2)		/* 8 copies at most */
		cr_skip_test("earlier calibrations in this process fill the copies");
	sn_calibrate(1);
	sn_calibrate(1);
	cr_assert_eq(drain_all(), 6);
	memcpy(first, got, sizeof(first));
	cr_assert_eq(sn_calib_replay(), before + 6);
	cr_assert_eq(drain_all(), (size_t)before + 6);
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(got[before + i].type, PROTO_EV_CALIB);
		for (int a = 0; a < 4; a++)
			cr_assert_eq(got[before + i].arg[a], first[i].arg[a],
				     "record %d arg %d", i, a);
	}
}

/* ---- calibration series (sn_cal_quiet, sn_cal_estimate) ---------------- */

/* A quiet series: 31 samples spread 46-55 ns, as a traced fwrite on fresh
 * ring lines; quiet at once, its estimate their mean. */
Test(sensor_cal, quiet_series_gives_its_mean)
{
	double d[CAL_MAX], sum = 0;

	for (int i = 0; i < CAL_MIN; i++) {
		d[i] = 46.0 + (double)(i % 10);
		sum += d[i];
	}
	cr_assert(!sn_cal_quiet(d, CAL_MIN - 1), "too few samples yet");
	cr_assert(sn_cal_quiet(d, CAL_MIN));
	cr_assert_float_eq(sn_cal_estimate(d, CAL_MIN), sum / CAL_MIN, 1e-9);
}

/* Start-up: most samples 1.5 to 4 times too slow (70, 200 ns). The
 * median would be 200; the series is not quiet until CAL_QUIET samples
 * lie near the fastest, and the estimate leaves the slow ones out. */
Test(sensor_cal, disturbed_samples_are_left_out)
{
	double d[CAL_MAX];
	int n = 0;

	for (int i = 0; i < 20; i++)
		d[n++] = 200.0 + i;
	for (int i = 0; i < 5; i++)
		d[n++] = 70.0;
	for (int i = 0; i < 10; i++)
		d[n++] = 47.0 + (i & 1) * 4.0;	/* 47, 51, ... */
	cr_assert(!sn_cal_quiet(d, n), "10 quiet samples of 35 are not enough");
	for (int i = 0; i < 6; i++)
		d[n++] = 49.0;
	cr_assert(sn_cal_quiet(d, n));
	/* band: 47 / 1.3 - 1 to 47 x 1.3 + 1 (35.2 to 62.1): the 16 near 47-51 */
	cr_assert_float_eq(sn_cal_estimate(d, n), (5 * 47.0 + 5 * 51.0 + 6 * 49.0) / 16, 1e-9);
}

/* Bad input: no samples gives 0 and is never quiet; one or two glitches
 * far below the rest (a sample taken while tracing was being switched
 * off) neither set the band nor enter the estimate; three do. */
Test(sensor_cal, no_samples_and_low_glitches)
{
	double d[CAL_MAX] = {0};

	cr_assert_float_eq(sn_cal_estimate(d, 0), 0.0, 1e-12);
	cr_assert(!sn_cal_quiet(d, 0));
	for (int i = 0; i < CAL_MIN; i++)
		d[i] = 50.0;
	d[3] = 1.0;
	d[17] = 2.0;
	cr_assert(sn_cal_quiet(d, CAL_MIN));
	cr_assert_float_eq(sn_cal_estimate(d, CAL_MIN), 50.0, 1e-9);
	d[20] = 1.5;
	cr_assert(!sn_cal_quiet(d, CAL_MIN), "three fast samples set the band");
	cr_assert_float_eq(sn_cal_estimate(d, CAL_MIN), 1.5, 1e-9);
}

/* ---- calibration cache (sn_calcache_parse, sn_calcache_format) --------- */

#define CC_KEY "host h\nboot b\ncpu c\nlib /x 1 2.000000003\nclock tsc\n"

Test(sensor_calcache, format_then_parse_gives_the_values_back)
{
	struct sn_calcache v = {0}, w;
	char buf[2048];
	int n;

	v.have = SN_CC_TSC | SN_CC_HOT | SN_CC_STRING | SN_CC_STDIO;
	v.tsc_mult = 2049102292ull;
	v.cost_ps[0] = 22679;
	v.samples[0] = 63488;
	v.cost_ps[1] = 14806;
	v.samples[1] = 63488;
	v.cost_ps[2] = 16921;
	v.samples[2] = 67584;
	n = sn_calcache_format(buf, sizeof(buf), CC_KEY, &v);
	cr_assert_gt(n, 0);
	cr_assert_eq(sn_calcache_parse(buf, CC_KEY, &w), 0);
	cr_assert_eq(w.have, v.have);
	cr_assert_eq(w.tsc_mult, v.tsc_mult);
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(w.cost_ps[k], v.cost_ps[k]);
		cr_assert_eq(w.samples[k], v.samples[k]);
	}
	/* a part missing is said by have (no stdio: the libc sensor was off) */
	v.have &= ~(unsigned)SN_CC_STDIO;
	cr_assert_gt(sn_calcache_format(buf, sizeof(buf), CC_KEY, &v), 0);
	cr_assert_eq(sn_calcache_parse(buf, CC_KEY, &w), 0);
	cr_assert_eq(w.have, SN_CC_TSC | SN_CC_HOT | SN_CC_STRING);
	cr_assert_eq(sn_calcache_format(buf, 40, CC_KEY, &v), -1, "too small a buffer");
}

Test(sensor_calcache, another_key_or_bad_lines_are_refused)
{
	static const char *const bad[] = {
		/* another boot */
		"tapestry sensor calibration 1\nhost h\nboot B\ncpu c\nlib /x 1 2.000000003\nclock tsc\nhot_ps 20000 100\n",
		/* another magic */
		"tapestry sensor calibration 2\n" CC_KEY "hot_ps 20000 100\n",
		/* a TSC of 1 Hz, a cost of 1 s, no samples, a negative cost */
		"tapestry sensor calibration 1\n" CC_KEY "tsc_mult 1 1\n",
		"tapestry sensor calibration 1\n" CC_KEY "hot_ps 1000000000000 100\n",
		"tapestry sensor calibration 1\n" CC_KEY "hot_ps 20000 0\n",
		"tapestry sensor calibration 1\n" CC_KEY "hot_ps -5 100\n",
		/* an unknown word, a cut line, trailing junk */
		"tapestry sensor calibration 1\n" CC_KEY "cold_ps 20000 100\n",
		"tapestry sensor calibration 1\n" CC_KEY "hot_ps 20000",
		"tapestry sensor calibration 1\n" CC_KEY "hot_ps 20000 100 7\n",
		"",
	};
	struct sn_calcache w;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		w.have = 99;
		cr_assert_eq(sn_calcache_parse(bad[i], CC_KEY, &w), -1, "case %zu", i);
	}
	/* the key alone, no values: valid, nothing held */
	cr_assert_eq(sn_calcache_parse("tapestry sensor calibration 1\n" CC_KEY, CC_KEY, &w), 0);
	cr_assert_eq(w.have, 0);
}
