/*
 * manager/post/post.h - post-processing: the job's global time model.
 *
 * Built from the CLOCK frames of a job directory. Every edge of the
 * collection tree (sensor -> node collector, collector -> parent) carries
 * the samples its child end measured; each edge gets its own fit
 * (manager/post/clock.h), and the fits are composed along the path from a stream
 * up to the root, whose clock is the reference. A stream whose samples are
 * missing keeps its raw clock and is flagged.
 */
#ifndef TAPESTRY_MGR_POST_H
#define TAPESTRY_MGR_POST_H

#include <stdint.h>
#include <stdio.h>

#include "manager/post/clock.h"
#include "proto/trace.h"

#define MGR_POST_MAX_EDGES 65536
#define MGR_POST_MAX_SAMPLES 65536	/* per edge */
#define MGR_POST_MAX_DEPTH 32

struct mgr_post;

/* Build the time model of dir (one pass over its frames). NULL with *rc. */
struct mgr_post *mgr_post_build(const char *dir, int *rc);

/* Global time (root clock, ns) of the raw stamp t of stream id, within
 * [0, MGR_T_MAX] (36 years: a damaged stamp or fit cannot make the sums and
 * differences of the post-processing overflow). */
#define MGR_T_MAX ((uint64_t)1 << 60)
uint64_t mgr_post_global(const struct mgr_post *p, uint64_t stream, uint64_t t);

/* The composed fit of stream id (identity when unknown); *depth = edges on
 * its path (0: no samples). */
const struct mgr_clock_fit *mgr_post_stream_fit(const struct mgr_post *p,
						uint64_t stream, int *depth);

/* Print the clock quality of every edge and stream (text or XML elements). */
void mgr_post_report(const struct mgr_post *p, FILE *out, int xml);

/* The clock quality in one line (links fitted, the widest +-95% offset
 * interval against the root, the first warning) into buf. p may be NULL. */
void mgr_post_quality(const struct mgr_post *p, char *buf, size_t cap);

/* Free p; NULL is a no-op. */
void mgr_post_free(struct mgr_post *p);

#endif
