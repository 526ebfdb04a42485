/*
 * manager/post/clock.h - global clock estimation from ping-pong samples ([004] ch. 3).
 *
 * Model: a node's clock reads y = A + B x when the reference clock reads x
 * (offset A, drift B ~ 1). Each ping-pong gives the four stamps S (ref send),
 * Rj (node receive), Sj (node send), R (ref receive). It is collapsed to one
 * point, the node's midpoint against the reference's midpoint (Dunigan's
 * estimator): X = (S + R) / 2, Y = (Rj + Sj) / 2. Asymmetric round trips are
 * removed first (per phase, only the quarter of the samples with the
 * shortest round trips are kept, at least MGR_CLOCK_KEEP_MIN: a midpoint is
 * off by at most half its round trip's excess over the true one, and the
 * shortest are the least asymmetric), then A and B are fitted by ordinary
 * least squares
 * over the points of all phases together (sampling before AND after the run).
 * 95 % confidence intervals come from the OLS variance.
 *
 * Pure computation: no I/O, thread-safe.
 */
#ifndef TAPESTRY_MGR_CLOCK_H
#define TAPESTRY_MGR_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

/* Warnings of the thesis's rule of thumb (on the offset's relative error). */
#define MGR_CLOCK_WARN_FEW 0x1u	/* fewer than 3 usable samples */
#define MGR_CLOCK_WARN_LOADED 0x2u	/* error > 5 %: loaded network or NTP slewing */
#define MGR_CLOCK_WARN_ADJUSTED 0x4u	/* error > 1 %: something adjusts the clock */
#define MGR_CLOCK_WARN_ONE_PHASE 0x8u	/* no samples after the run: extrapolated */
#define MGR_CLOCK_WARN_NO_DRIFT 0x10u	/* drift not significant: fixed at 1 */
#define MGR_CLOCK_CI_FLOOR_NS 1000.0	/* narrower intervals never warn */
#define MGR_CLOCK_KEEP_MIN 3	/* samples kept per phase, at least */

struct mgr_clock_fit {
	uint64_t x0;		/* origin: reference time of the first sample */
	double offset_ns;	/* node - reference at x0 */
	double slope;		/* B */
	double offset_ci_ns;	/* 95 % half-width */
	double slope_ci;	/* 95 % half-width */
	double offset_err;	/* offset_ci / |offset| (0 when offset is 0) */
	double rtt_min_ns, rtt_median_ns;
	size_t n_total, n_used;
	unsigned nphases;
	unsigned warn;		/* MGR_CLOCK_WARN_* */
};

/* Who sent the pings. tapestry's CLOCK frames are measured by the child
 * end of an edge (docs/PROTOCOL.md): s and r are the child's (node's) stamps,
 * rj and sj the parent's (reference's): MGR_CLOCK_NODE_PINGS. The thesis's
 * set-up, the reference pinging each node, is MGR_CLOCK_REF_PINGS. */
enum mgr_clock_pinger { MGR_CLOCK_REF_PINGS = 0, MGR_CLOCK_NODE_PINGS = 1 };

/* Fit the samples s[0..n) whose phases are phase[0..n) (NULL: all one phase).
 * Returns 0, or PROTO_E_ARG when fewer than 2 samples are usable (then *f is
 * the identity with MGR_CLOCK_WARN_FEW). */
int mgr_clock_fit(const struct proto_clock_sample *s, const uint32_t *phase,
		  size_t n, enum mgr_clock_pinger pinger,
		  struct mgr_clock_fit *f);

/* The identity fit (a node that is the reference). */
void mgr_clock_identity(struct mgr_clock_fit *f);

/* Reference time of a node stamp y: x = x0 + (y - x0 - offset) / slope. */
uint64_t mgr_clock_to_ref(const struct mgr_clock_fit *f, uint64_t y);

/* Compose along a path: child measured against mid, mid against ref, gives
 * child against ref. Confidence intervals add up (a conservative bound). */
void mgr_clock_compose(const struct mgr_clock_fit *child_mid,
		       const struct mgr_clock_fit *mid_ref,
		       struct mgr_clock_fit *child_ref);

#endif
