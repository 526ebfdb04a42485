/*
 * manager/post/clock.c - the midpoint estimator, outlier filter, OLS fit and
 * composition of clock fits. See clock.h for the model.
 *
 * Numerics: stamps are u64 ns (uptime-sized, ~1e13); they are centred on x0
 * as int64 before becoming doubles, so the fit works on values of the size of
 * the run and the offset, not of the uptime.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/clock.h"
#include "manager/post/grow.h"
#include "proto/error.h"

struct point {
	double x, y, rtt;
	uint32_t phase;		/* 0 start, 1 periodic, 2 end (larger: 2) */
	int kept;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return MGR_CMP(x, y);
}

/* Two-sided 97.5 % quantile of Student's t with df degrees of freedom. */
static double t975(size_t df)
{
	static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447,
				   2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
				   2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
				   2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				   2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

	if (df == 0)
		return INFINITY;
	if (df < sizeof(t) / sizeof(t[0]))
		return t[df];
	if (df < 60)
		return 2.02;
	if (df < 120)
		return 1.99;
	return 1.96;
}

void mgr_clock_identity(struct mgr_clock_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->slope = 1.0;
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The midpoints of each sample (reference x, node y, centred on f->x0) and
 * its round trip, into p; impossible samples dropped. Returns how many. */
static size_t midpoints(const struct proto_clock_sample *s, const uint32_t *phase,
			size_t n, enum mgr_clock_pinger pinger,
			const struct mgr_clock_fit *f, struct point *p)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		/* ref_a/ref_b: the reference's two stamps, node_a/node_b the node's,
		 * in the order they happened on each clock */
		uint64_t ref_a = s[i].s, ref_b = s[i].r, node_a = s[i].rj, node_b = s[i].sj;

		if (pinger == MGR_CLOCK_NODE_PINGS) {
			ref_a = s[i].rj;
			ref_b = s[i].sj;
			node_a = s[i].s;
			node_b = s[i].r;
		}
		/* the pinger's interval holds the other's: drop impossible stamps */
		uint64_t outer_a = pinger == MGR_CLOCK_REF_PINGS ? ref_a : node_a;
		uint64_t outer_b = pinger == MGR_CLOCK_REF_PINGS ? ref_b : node_b;
		uint64_t inner_a = pinger == MGR_CLOCK_REF_PINGS ? node_a : ref_a;
		uint64_t inner_b = pinger == MGR_CLOCK_REF_PINGS ? node_b : ref_b;
		if (outer_b < outer_a || inner_b < inner_a)
			continue;
		double rtt = (double)(outer_b - outer_a) - (double)(inner_b - inner_a);
		if (rtt < 0)
			continue;
		p[m].x = ((double)(int64_t)(ref_a - f->x0) +
			  (double)(int64_t)(ref_b - f->x0)) / 2;
		p[m].y = ((double)(int64_t)(node_a - f->x0) +
			  (double)(int64_t)(node_b - f->x0)) / 2;
		p[m].rtt = rtt;
		p[m].phase = phase ? (phase[i] < 2 ? phase[i] : 2) : 0;
		m++;
	}
	return m;
}

/* The outlier filter: per phase, keep the quarter of the round trips that
 * are the shortest (at least MGR_CLOCK_KEEP_MIN; ties at the bound kept),
 * moved to the front of p. Sets the phase count, the round-trip figures and
 * the ONE_PHASE warning (with_phases: phases were given). tmp: m doubles.
 * Returns how many are kept. */
static size_t keep_shortest(struct point *p, size_t m, int with_phases,
			    double *tmp, struct mgr_clock_fit *f)
{
	uint32_t phases[3] = {0};
	size_t keep = 0;

	for (size_t i = 0; i < m; i++)
		phases[p[i].phase] = 1;
	f->nphases = phases[0] + phases[1] + phases[2];
	if (with_phases && !phases[2])
		f->warn |= MGR_CLOCK_WARN_ONE_PHASE;
	for (uint32_t ph = 0; ph < 3; ph++) {
		size_t k = 0;
		for (size_t i = 0; i < m; i++)
			if (p[i].phase == ph)
				tmp[k++] = p[i].rtt;
		if (!k)
			continue;
		qsort(tmp, k, sizeof(*tmp), cmp_double);
		size_t q = (k + 3) / 4;
		if (q < MGR_CLOCK_KEEP_MIN)
			q = k < MGR_CLOCK_KEEP_MIN ? k : MGR_CLOCK_KEEP_MIN;
		double bound = tmp[q - 1];
		for (size_t i = 0; i < m; i++)
			if (p[i].phase == ph && p[i].rtt <= bound)
				p[i].kept = 1;
	}
	for (size_t i = 0; i < m; i++) {
		tmp[i] = p[i].rtt;
		if (p[i].kept)
			p[keep++] = p[i];
	}
	if (m) {
		f->rtt_median_ns = median_of(tmp, m);
		f->rtt_min_ns = tmp[0];
	}
	return keep;
}

/* Ordinary least squares of y on x over p[0 .. keep) (keep >= 2): slope,
 * offset and, with more than two points, their 95 % intervals. */
static void fit_line(const struct point *p, size_t keep, struct mgr_clock_fit *f)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, rss = 0;

	for (size_t i = 0; i < keep; i++) {
		mx += p[i].x;
		my += p[i].y;
	}
	mx /= (double)keep;
	my /= (double)keep;
	for (size_t i = 0; i < keep; i++) {
		sxx += (p[i].x - mx) * (p[i].x - mx);
		sxy += (p[i].x - mx) * (p[i].y - my);
	}
	/* all points at one instant: no drift can be seen, assume 1 */
	f->slope = sxx > 0 ? sxy / sxx : 1.0;
	f->offset_ns = my - f->slope * mx;
	for (size_t i = 0; i < keep; i++) {
		double r = p[i].y - (f->offset_ns + f->slope * p[i].x);
		rss += r * r;
	}
	if (keep > 2) {
		double sigma2 = rss / (double)(keep - 2), t = t975(keep - 2);

		f->slope_ci = sxx > 0 ? t * sqrt(sigma2 / sxx) : 0;
		f->offset_ci_ns = t * sqrt(sigma2 * (1.0 / (double)keep +
						     (sxx > 0 ? mx * mx / sxx : 0)));
	} else {
		f->warn |= MGR_CLOCK_WARN_FEW;
	}
}

/* The offset alone over p[0 .. keep) (keep > 2), the slope fixed at 1. */
static void fit_offset(const struct point *p, size_t keep, struct mgr_clock_fit *f)
{
	double sum = 0, rss1 = 0;

	for (size_t i = 0; i < keep; i++)
		sum += p[i].y - p[i].x;
	f->slope = 1.0;
	f->offset_ns = sum / (double)keep;
	for (size_t i = 0; i < keep; i++) {
		double r = p[i].y - p[i].x - f->offset_ns;
		rss1 += r * r;
	}
	f->offset_ci_ns = t975(keep - 1) * sqrt(rss1 / (double)(keep - 1) / (double)keep);
	f->warn |= MGR_CLOCK_WARN_NO_DRIFT;
}

/* The offset's relative error and the warnings it calls for. */
static void judge(struct mgr_clock_fit *f)
{
	if (f->offset_ns != 0)
		f->offset_err = f->offset_ci_ns / fabs(f->offset_ns);
	/* the thesis's rule of thumb is about offsets of tenths of seconds:
	 * an interval of a few hundred ns around a tiny offset says nothing
	 * about the network, so only intervals over 1 us count */
	if (f->offset_ci_ns > MGR_CLOCK_CI_FLOOR_NS) {
		if (f->offset_err > 0.05)
			f->warn |= MGR_CLOCK_WARN_LOADED;
		else if (f->offset_err > 0.01)
			f->warn |= MGR_CLOCK_WARN_ADJUSTED;
	}
}

int mgr_clock_fit(const struct proto_clock_sample *s, const uint32_t *phase,
		  size_t n, enum mgr_clock_pinger pinger,
		  struct mgr_clock_fit *f)
{
	struct point *p = NULL;
	double *tmp = NULL;
	size_t keep;
	int rc = PROTO_E_NOMEM;

	mgr_clock_identity(f);
	f->n_total = n;
	if (n == 0) {
		f->warn = MGR_CLOCK_WARN_FEW;
		return PROTO_E_ARG;
	}
	p = calloc(n, sizeof(*p));
	tmp = calloc(n, sizeof(*tmp));
	if (!p || !tmp)
		goto out;
	f->x0 = pinger == MGR_CLOCK_REF_PINGS ? s[0].s : s[0].rj;
	keep = keep_shortest(p, midpoints(s, phase, n, pinger, f, p), phase != NULL,
			     tmp, f);
	f->n_used = keep;
	if (keep < 2) {
		f->warn |= MGR_CLOCK_WARN_FEW;
		rc = PROTO_E_ARG;
		goto out;
	}
	fit_line(p, keep, f);
	/* A drift the samples cannot tell from 1 (|B - 1| within its own 95 %
	 * interval, e.g. a short run sampled only at its start) is not
	 * extrapolated: fit the offset alone, with the slope fixed at 1. */
	if (keep > 2 && fabs(f->slope - 1.0) <= f->slope_ci)
		fit_offset(p, keep, f);
	judge(f);
	rc = 0;
out:
	free(p);
	free(tmp);
	return rc;
}

uint64_t mgr_clock_to_ref(const struct mgr_clock_fit *f, uint64_t y)
{
	double dy = (double)(int64_t)(y - f->x0) - f->offset_ns;

	return f->x0 + (uint64_t)(int64_t)llround(dy / f->slope);
}

void mgr_clock_compose(const struct mgr_clock_fit *cm,
		       const struct mgr_clock_fit *mr, struct mgr_clock_fit *cr)
{
	/* y_c = oc + bc (y_m - x0c) + x0c and y_m = om + bm (x - x0m) + x0m.
	 * Re-express the child's origin at the reference origin x0m:
	 * y_c - x0m = [oc + (x0c - x0m)(1 - bc) + bc om] + bc bm (x - x0m). */
	struct mgr_clock_fit out = *mr;
	double d = (double)(int64_t)(cm->x0 - mr->x0);

	out.x0 = mr->x0;
	out.slope = cm->slope * mr->slope;
	out.offset_ns = cm->offset_ns + d * (1 - cm->slope) + cm->slope * mr->offset_ns;
	out.offset_ci_ns = cm->offset_ci_ns + mr->offset_ci_ns;
	out.slope_ci = cm->slope_ci + mr->slope_ci;
	out.offset_err = out.offset_ns != 0 ? out.offset_ci_ns / fabs(out.offset_ns) : 0;
	out.n_total = cm->n_total + mr->n_total;
	out.n_used = cm->n_used + mr->n_used;
	out.warn = cm->warn | mr->warn;
	*cr = out;
}
