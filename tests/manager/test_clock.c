/*
 * tests/manager/test_clock.c - the clock estimator on synthetic samples with
 * a known truth (offset, drift), asymmetric outliers, and composition.
 * Deterministic: fixed seeds, no timing.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "manager/post/clock.h"
#include "proto/error.h"

/* truth: y = X0 + A + B (x - X0) */
#define X0 1000000000000ull	/* ~17 min of uptime, in ns */
static double A = 5e9, B = 1 + 50e-6;

static uint64_t node_at(uint64_t x)
{
	return X0 + (uint64_t)llround(A + B * (double)(int64_t)(x - X0));
}

static double expo(unsigned *seed, double mean)
{
	return -mean * log((rand_r(seed) + 1.0) / (RAND_MAX + 2.0));
}

/* n samples starting at ref time x, every step ns; one leg of an outlier
 * fraction of them is delayed by 1 ms */
static size_t gen(struct proto_clock_sample *s, uint32_t *ph, size_t n,
		  uint64_t x, uint64_t step, uint32_t phase, unsigned *seed,
		  double outliers)
{
	for (size_t i = 0; i < n; i++, x += step) {
		double d1 = 30e3 + expo(seed, 10e3), d2 = 30e3 + expo(seed, 10e3);

		if (rand_r(seed) < outliers * RAND_MAX) {
			if (rand_r(seed) & 1)
				d1 += 1e6;
			else
				d2 += 1e6;
		}
		s[i].s = x;
		s[i].rj = node_at(x + (uint64_t)d1);
		s[i].sj = s[i].rj + 5000;
		/* the node's 5 us of turnaround, seen from the reference */
		s[i].r = x + (uint64_t)d1 + (uint64_t)(5000 / B) + (uint64_t)d2;
		ph[i] = phase;
	}
	return n;
}

/* Two phases of n samples 1 ms apart, the second gap ns after the first,
 * with an outlier fraction out2 (the first has none): 2 n samples. */
static size_t two_phases(struct proto_clock_sample *s, uint32_t *ph, size_t n,
			 uint64_t gap, unsigned *seed, double out2)
{
	gen(s, ph, n, X0, 1000000, 0, seed, 0.0);
	return n + gen(s + n, ph + n, n, X0 + gap, 1000000, 2, seed, out2);
}

Test(clock, offset_and_drift_within_targets_with_outliers)
{
	struct proto_clock_sample s[80];
	uint32_t ph[80];
	unsigned seed = 42;
	size_t n = 0;
	struct mgr_clock_fit f;

	n += gen(s + n, ph + n, 40, X0, 25000000, 0, &seed, 0.2);
	n += gen(s + n, ph + n, 40, X0 + 600000000000ull, 25000000, 2, &seed, 0.2);
	cr_assert_eq(mgr_clock_fit(s, ph, n, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_assert_eq(f.x0, X0);
	cr_log_info("offset err %.1f ns (CI %.1f), drift err %.4f ppm, used %zu/%zu",
		    f.offset_ns - A, f.offset_ci_ns, (f.slope - B) * 1e6, f.n_used, f.n_total);
	cr_assert_lt(fabs(f.offset_ns - A), 5000, "offset off by %.0f ns", f.offset_ns - A);
	cr_assert_lt(fabs(f.slope - B) * 1e6, 1.0, "drift off by %.3f ppm", (f.slope - B) * 1e6);
	cr_assert_leq(f.n_used, 80);
	cr_assert_geq(f.n_used, 20, "a quarter of each phase");
	cr_assert_eq(f.nphases, 2);
	cr_assert_eq(f.warn & (MGR_CLOCK_WARN_FEW | MGR_CLOCK_WARN_ONE_PHASE), 0);
	/* the true offset lies within the confidence interval */
	cr_assert_lt(fabs(f.offset_ns - A), f.offset_ci_ns * 3 + 1000);
	/* and events convert back to reference time within a few us */
	for (uint64_t x = X0; x < X0 + 600000000000ull; x += 50000000000ull) {
		int64_t err = (int64_t)(mgr_clock_to_ref(&f, node_at(x)) - x);
		cr_assert_lt(llabs(err), 5000, "at %llu: %lld ns", (unsigned long long)x,
			     (long long)err);
	}
}

Test(clock, filter_matters_without_it_outliers_bias_the_fit)
{
	/* every sample of the first phase is slowed on the way back: only the
	 * filter (lower half of round trips) keeps the fit honest */
	struct proto_clock_sample s[40];
	uint32_t ph[40];
	unsigned seed = 7;
	struct mgr_clock_fit f;

	two_phases(s, ph, 20, 60000000000ull, &seed, 0.45);
	cr_assert_eq(mgr_clock_fit(s, ph, 40, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_assert_lt(fabs(f.offset_ns - A), 5000);
}

/* A loaded host: 12 of each phase's 20 round trips wait 200 us on one leg
 * (the way out at the start, the way back at the end), the others have only
 * the usual jitter. Keeping the round trips up to the median kept two of
 * the delayed ones in each phase: 20 us of bias each way, 1.3 ppm of drift
 * over the 30 s. The shortest quarter is none of them. */
Test(clock, most_round_trips_delayed_on_one_leg)
{
	struct proto_clock_sample s[40];
	uint32_t ph[40];
	unsigned seed = 11;
	struct mgr_clock_fit f;

	two_phases(s, ph, 20, 30000000000ull, &seed, 0.0);
	for (int i = 0; i < 40; i++) {
		if (i % 20 >= 12)
			continue;
		if (i < 20) {	/* way out: the node stamps 200 us later */
			s[i].rj += 200000;
			s[i].sj += 200000;
		}
		s[i].r += 200000;
	}
	cr_assert_eq(mgr_clock_fit(s, ph, 40, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_log_info("offset err %.1f ns, drift err %.4f ppm, used %zu/%zu",
		    f.offset_ns - A, (f.slope - B) * 1e6, f.n_used, f.n_total);
	cr_assert_lt(fabs(f.slope - B) * 1e6, 0.5, "drift off by %.3f ppm",
		     (f.slope - B) * 1e6);
	cr_assert_lt(fabs(f.offset_ns - A), 5000, "offset off by %.0f ns",
		     f.offset_ns - A);
	cr_assert_eq(f.n_used, 10, "5 a phase");
}

Test(clock, one_phase_is_flagged_and_few_samples_refused)
{
	struct proto_clock_sample s[10];
	uint32_t ph[10];
	unsigned seed = 1;
	struct mgr_clock_fit f;

	gen(s, ph, 10, X0, 1000000, 0, &seed, 0);
	cr_assert_eq(mgr_clock_fit(s, ph, 10, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_assert(f.warn & MGR_CLOCK_WARN_ONE_PHASE);
	cr_assert_eq(mgr_clock_fit(s, ph, 0, MGR_CLOCK_REF_PINGS, &f), PROTO_E_ARG);
	cr_assert(f.warn & MGR_CLOCK_WARN_FEW);
	cr_assert_eq(f.slope, 1.0);
	/* impossible stamps (receive before send) are dropped */
	for (int i = 0; i < 10; i++)
		s[i].r = s[i].s - 1;
	cr_assert_eq(mgr_clock_fit(s, NULL, 10, MGR_CLOCK_REF_PINGS, &f), PROTO_E_ARG);
	cr_assert_eq(f.n_used, 0);
}

Test(clock, loaded_network_warns)
{
	struct proto_clock_sample s[20];
	uint32_t ph[20];
	unsigned seed = 3;
	struct mgr_clock_fit f;
	double a = A;

	A = 20000;	/* a 20 us offset measured through ms of jitter */
	two_phases(s, ph, 10, 1000000000ull, &seed, 0.0);
	for (int i = 0; i < 20; i++)
		s[i].rj += (uint64_t)expo(&seed, 2e6), s[i].sj = s[i].rj + 5000;
	A = a;
	cr_assert_eq(mgr_clock_fit(s, ph, 20, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_assert(f.warn & MGR_CLOCK_WARN_LOADED, "offset error %.3f", f.offset_err);
}

Test(clock, composition_matches_the_direct_mapping)
{
	struct mgr_clock_fit cm, mr, cr;

	mgr_clock_identity(&cm);
	mgr_clock_identity(&mr);
	/* mid = ref + 2 s, drift +30 ppm; child = mid - 1 s, drift -10 ppm */
	mr.x0 = X0;
	mr.offset_ns = 2e9;
	mr.slope = 1 + 30e-6;
	cm.x0 = X0 + 2000000000ull + 500;
	cm.offset_ns = -1e9;
	cm.slope = 1 - 10e-6;
	mgr_clock_compose(&cm, &mr, &cr);
	for (uint64_t x = X0; x < X0 + 3600000000000ull; x += 600000000000ull) {
		double ym = (double)X0 + mr.offset_ns + mr.slope * (double)(x - X0);
		double yc = (double)cm.x0 + cm.offset_ns + cm.slope * (ym - (double)cm.x0);
		uint64_t back = mgr_clock_to_ref(&cr, (uint64_t)llround(yc));
		cr_assert_lt(llabs((int64_t)(back - x)), 2, "at %llu", (unsigned long long)x);
	}
	cr_assert_eq(cr.x0, X0);
}

Test(clock, node_pings_orientation_as_in_clock_frames)
{
	/* the child (node) pings its parent (reference): s, r on the node's
	 * clock, rj, sj on the reference's, as docs/PROTOCOL.md says */
	struct proto_clock_sample s[60];
	uint32_t ph[60];
	unsigned seed = 11;
	struct mgr_clock_fit f;

	for (int i = 0; i < 60; i++) {
		uint64_t x = X0 + (i < 30 ? 0 : 300000000000ull) + (uint64_t)i * 10000000;
		double d1 = 20e3 + expo(&seed, 8e3), d2 = 20e3 + expo(&seed, 8e3);

		s[i].s = node_at(x);
		s[i].rj = x + (uint64_t)d1;
		s[i].sj = s[i].rj + 3000;
		s[i].r = node_at(s[i].sj + (uint64_t)d2);
		ph[i] = i < 30 ? 0 : 2;
	}
	cr_assert_eq(mgr_clock_fit(s, ph, 60, MGR_CLOCK_NODE_PINGS, &f), 0);
	cr_assert_eq(f.x0, s[0].rj, "x0 is the reference's first receive");
	cr_assert_lt(fabs(f.offset_ns - A), 5000, "offset off by %.0f", f.offset_ns - A);
	cr_assert_lt(fabs(f.slope - B) * 1e6, 1.0);
	/* read in the other orientation, the same stamps give the inverse
	 * mapping: the orientation is not a detail */
	cr_assert_eq(mgr_clock_fit(s, ph, 60, MGR_CLOCK_REF_PINGS, &f), 0);
	cr_assert_lt(fabs(f.offset_ns + A), 1e6, "offset %.0f", f.offset_ns);
}
