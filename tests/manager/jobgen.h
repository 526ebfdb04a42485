/*
 * tests/manager/jobgen.h - writing small job directories by hand for the
 * post-processing suites: META and BATCH frames through the real writer,
 * msg and codec. Each function asserts (Criterion) on failure.
 */
#ifndef TAPESTRY_TESTS_JOBGEN_H
#define TAPESTRY_TESTS_JOBGEN_H

#include <stddef.h>
#include <stdint.h>

#include "proto/event.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

struct jobgen {
	char base[64];		/* the scratch directory (removed by _free) */
	char dir[96];		/* base/job */
	struct proto_jobdir_w *w;
	struct proto_msg *m;
	struct proto_codec *codec;
};

/* A new job directory under a fresh /tmp scratch directory. */
void jobgen_init(struct jobgen *g, const char *prefix);
/* Append the message g->m as a frame. */
void jobgen_put(struct jobgen *g);
/* META frame with one key/value for stream. */
void jobgen_meta(struct jobgen *g, uint64_t stream, const char *key, const char *value);
/* META "rank" for stream. */
void jobgen_rank(struct jobgen *g, uint64_t stream, int rank);
/* BATCH frame of ev[0..n) for (stream, seq). */
void jobgen_batch(struct jobgen *g, uint64_t stream, uint64_t seq,
		  const struct proto_event *ev, size_t n);
/* An event of type from t0 to t1 with its first five arguments (the others
 * zero). */
struct proto_event jobgen_ev(unsigned type, uint64_t t0, uint64_t t1,
			     int64_t a0, int64_t a1, int64_t a2, int64_t a3,
			     int64_t a4);
/* A job of nranks ranks, then the writer closed: rank r is stream base + r
 * (its META "rank"), its events ev[r][0..n[r]) one BATCH of seq 1. */
void jobgen_job(struct jobgen *g, uint64_t base, int nranks,
		struct proto_event *const ev[], const size_t n[]);
/* Close the writer (asserting success). */
void jobgen_close(struct jobgen *g);
/* Free everything and remove the scratch directory. */
void jobgen_free(struct jobgen *g);

#endif
