/*
 * sensor/rt_clock.c - the sensor clock.
 *
 * Hot path: sn_now() reads the TSC (when the CPU says it is invariant) and
 * scales it with a rate measured briefly at start-up: "provisional" ns,
 * monotonic and close to CLOCK_MONOTONIC. The sender maps provisional
 * stamps onto CLOCK_MONOTONIC before shipping (sn_clock_fix): it takes
 * anchor pairs (TSC reading, clock_gettime) at every drain and uses the
 * line through the first anchor and the latest one, so the rate error
 * shrinks as the baseline grows and a stamp is never further from
 * CLOCK_MONOTONIC than the jitter of one anchor reading (tens of ns).
 * Without an invariant TSC, sn_now() is the vDSO clock_gettime and the
 * mapping is the identity. TAPESTRY_CLOCK_DRIFT_PPM is applied by the
 * mapping, so every shipped stamp (events and clock pings) drifts alike:
 * shipped = CLOCK_MONOTONIC x (1 + ppm / 1e6).
 */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensor/rt.h"
#if SN_HAVE_TSC
#include <cpuid.h>
#endif

struct sn_clock sn_clk;

/* Anchors (sender thread only, after init). */
static uint64_t a0_prov, a0_mono, a1_prov, a1_mono;
/* The line's slope less one, in units of 2^-64, set with each anchor
 * (fix_slope): a stamp is then mapped with one 64 x 64 -> 128-bit multiply,
 * not a 128-bit division (two stamps a record, in the sender's work beside
 * the program). use_line: the anchors are far enough
 * apart (1 ms) for the line. */
static int64_t slope_m1;
static int use_line;

/* The lines in force since each of the last SEGS anchors: a stamp is
 * mapped with the line that was in force when it was taken (the newest
 * segment whose from <= the stamp), not with the one in force when it is
 * drained. Drained stamps are mapped batch by batch, so two adjacent stamps
 * of one thread (a COMPUTE event's end and the next call's start) can fall
 * on either side of a new anchor; mapped with two lines, they could swap by
 * up to the anchors' read jitter. A stamp older than every kept segment
 * takes the oldest (sn_clock_anchor spaces the segments so that this is
 * rare). */
#define SEGS 8
static struct seg {
	uint64_t from;		/* provisional stamp the line applies from */
	int64_t slope_m1;
	int use_line;
} seg[SEGS];
static unsigned nseg, seg_head;	/* seg[seg_head] is the newest */

static void seg_push(uint64_t from)
{
	seg_head = (seg_head + 1) % SEGS;
	seg[seg_head] = (struct seg){from, slope_m1, use_line};
	if (nseg < SEGS)
		nseg++;
}

static const struct seg *seg_for(uint64_t prov)
{
	unsigned i = seg_head;

	for (unsigned k = 1; k < nseg; k++) {
		if (prov >= seg[i].from)
			return &seg[i];
		i = (i + SEGS - 1) % SEGS;
	}
	return &seg[i];
}

/* (a1_mono - a0_mono) / (a1_prov - a0_prov) - 1 in 2^-64 units: the
 * provisional rate is within a few 1e-4 of the truth, so it fits with room
 * to spare; a slope off by more than 1/4 is kept at that bound. The mapping
 * differs from the exact quotient by at most 2 ns (a stamp is within an
 * anchor's read jitter, tens of ns, anyway) and stays monotonic. */
static void fix_slope(void)
{
	uint64_t dp = a1_prov - a0_prov, dm = a1_mono - a0_mono;
	__int128 q;

	use_line = sn_clk.use_tsc && dp > 1000000;
	if (!use_line)
		return;
	q = (((__int128)dm - (__int128)dp) << 64) / (__int128)dp;
	if (q > ((__int128)1 << 62))
		q = (__int128)1 << 62;
	if (q < -((__int128)1 << 62))
		q = -((__int128)1 << 62);
	slope_m1 = (int64_t)q;
}

/* CLOCK_MONOTONIC in ns through the vDSO. Async-signal-safe. */
uint64_t sn_now_vdso(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tsc_invariant(void)
{
	/* -1: not set (the TSC when it is invariant) */
	static const char *const clk[] = {"tsc", "vdso", NULL};
	int want = sn_env_word("TAPESTRY_CLOCK", clk, -1, "tsc or vdso");
#if SN_HAVE_TSC
	unsigned a, b, c, d;

	if (want == 1)
		return 0;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
#else
	(void)want;
	return 0;
#endif
}

/* One (provisional, monotonic) pair read as close together as possible:
 * the best of a few tries, the provisional stamp taken mid-window. */
static void read_pair(uint64_t *prov, uint64_t *mono, int tsc_raw)
{
	uint64_t best = UINT64_MAX;

	*prov = *mono = 0;

	for (int i = 0; i < 5; i++) {
#if SN_HAVE_TSC
		uint64_t x0 = tsc_raw ? __rdtsc() : sn_now_fast();
		uint64_t m = sn_now_vdso();
		uint64_t x1 = tsc_raw ? __rdtsc() : sn_now_fast();
#else
		uint64_t x0 = sn_now_fast();
		uint64_t m = sn_now_vdso();
		uint64_t x1 = sn_now_fast();
#endif

		if (x1 - x0 < best) {
			best = x1 - x0;
			*prov = x0 + (x1 - x0) / 2;
			*mono = m;
		}
	}
}

/* Choose the clock and measure the provisional TSC rate (about 0.2 ms).
 * Called once at init, before any event is stamped. */
void sn_clock_init(void)
{
	sn_clock_init_rate(0);
}

/* See rt.h. The rate only makes the provisional ns: the sender maps them
 * onto CLOCK_MONOTONIC through its anchors whatever it is. */
void sn_clock_init_rate(uint64_t mult)
{
	int inv = tsc_invariant();

	memset(&sn_clk, 0, sizeof(sn_clk));
	if (mult && inv) {
		uint64_t t0 = 0, m0 = 0;

		read_pair(&t0, &m0, 1);
		sn_clk.base_tsc = t0;
		sn_clk.base_ns = m0;
		sn_clk.mult = mult;
		sn_clk.use_tsc = 1;
	} else if (inv) {
		uint64_t t0 = 0, m0 = 0, t1 = 0, m1 = 0;

		read_pair(&t0, &m0, 1);
		do
			read_pair(&t1, &m1, 1);
		while (m1 - m0 < 200000 && t1 > t0);
		if (t1 > t0 && m1 > m0) {
			sn_clk.base_tsc = t0;
			sn_clk.base_ns = m0;
			sn_clk.mult = (uint64_t)(((unsigned __int128)(m1 - m0)
						  << 32) / (t1 - t0));
			sn_clk.use_tsc = sn_clk.mult > 0;
		}
	}
	read_pair(&a0_prov, &a0_mono, 0);
	a1_prov = a0_prov;
	a1_mono = a0_mono;
	use_line = 0;
	nseg = 0;
	seg_push(0);
}

/* Take a new anchor pair (sender thread). */
void sn_clock_anchor(void)
{
	uint64_t p, m;

	if (!sn_clk.use_tsc)
		return;
	read_pair(&p, &m, 0);
	/* the line changes at most once every sixteenth of the time since the
	 * first anchor: often while the baseline is short and the rate still
	 * improves, then rarely, so that SEGS segments cover the last half of
	 * the run's life (stamps that wait that long in a ring are mapped with
	 * the line of their time) */
	if (nseg > 1 && p - seg[seg_head].from < (p - a0_prov) / 16)
		return;
	if (p > a0_prov && m > a0_mono) {
		a1_prov = p;
		a1_mono = m;
		fix_slope();
		seg_push(p);
	}
}

/* Map a provisional stamp onto CLOCK_MONOTONIC (plus any configured
 * drift). Sender thread only. */
static inline uint64_t fix_one(uint64_t prov)
{
	const struct seg *g = seg_for(prov);
	int64_t d = (int64_t)(prov - a0_prov);
	int64_t m = d;

	if (g->use_line)	/* d x slope, floored like the division it replaces */
		m += (int64_t)(((__int128)d * g->slope_m1) >> 64);
	uint64_t r = a0_mono + (uint64_t)m;

	/* drift from the clock's own zero, exactly like the collector's
	 * (collector/collector.c col_now_ns): a host's components agree, and a
	 * test knows the truth, y = CLOCK_MONOTONIC x (1 + ppm) */
	if (sn_cfg.drift_ppm != 0.0)
		r += (uint64_t)(int64_t)((double)r * sn_cfg.drift_ppm * 1e-6);
	return r;
}

/* fix_one() for the other files (clock pings). */
uint64_t sn_clock_fix(uint64_t prov)
{
	return fix_one(prov);
}

/* sn_clock_fix() on the stamps of ev[0..n) in place (STRING and ARRAY
 * records hold no stamps), those of SN_EVF_STAMP records converted to
 * provisional ns first. Sender thread only. */
void sn_clock_fix_events(struct proto_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ev[i].type == PROTO_EV_STRING || ev[i].type == PROTO_EV_ARRAY)
			continue;
		if (ev[i].flags & SN_EVF_STAMP) {
			ev[i].t_start = sn_stamp_ns(ev[i].t_start);
			ev[i].t_end = sn_stamp_ns(ev[i].t_end);
			ev[i].flags &= (uint16_t)~SN_EVF_STAMP;
		}
		ev[i].t_start = fix_one(ev[i].t_start);
		ev[i].t_end = fix_one(ev[i].t_end);
	}
}

/* "tsc" or "vdso": what sn_now() reads. */
const char *sn_clock_method(void)
{
	return sn_clk.use_tsc ? "tsc" : "vdso";
}

/* TSC rate estimated from the anchors so far (0 without TSC). */
double sn_clock_tsc_hz(void)
{
	if (!sn_clk.use_tsc || sn_clk.mult == 0)
		return 0.0;
	return 1e9 * 4294967296.0 / (double)sn_clk.mult;
}
