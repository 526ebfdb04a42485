/*
 * manager/post/events.h - the events of a job, on one global time line.
 *
 * What every exporter reads. Wraps proto/trace (storage order, per stream in
 * seq order) and gives each event its start and end in ns from the job start,
 * on the global clock once post-processing has estimated it (manager/post/post.h:
 * per-edge clock fits composed to the root's clock, then the causality
 * repair of manager/post/causality.h, then the perturbation correction of
 * manager/post/perturb.h), else the raw host clock (one host: every component
 * stamps CLOCK_MONOTONIC). TAPESTRY_MIN_LATENCY_NS sets the latency the
 * repair gives each message (default 0: plain causality);
 * TAPESTRY_NO_CORRECTION=1 leaves out the perturbation correction.
 * The job start is the earliest event (a first pass over the trace).
 * Memory does not grow with the trace.
 */
#ifndef TAPESTRY_MGR_EVENTS_H
#define TAPESTRY_MGR_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/trace.h"

struct mgr_events;

struct mgr_event {
	const struct proto_event *ev;	/* raw record (host-clock times) */
	const struct proto_stream *stream;
	const int64_t *array;		/* ARRAY continuation, or NULL */
	size_t narray;
	int64_t start, end;		/* ns from the job start, global, corrected */
	int64_t rstart, rend;		/* the same before perturbation correction */
	const char *path;		/* resolved path/address string or NULL */
	int64_t comm;			/* job-wide name of the event's communicator
					 * (manager/post/comms.h; its comm field is the
					 * rank's own id), INT64_MIN: no comm field */
};

/* Argument of ev named f (events.def), or def when the event type has no
 * such field: how the readers take an event's arguments. */
int64_t mgr_ev_field(const struct proto_event *ev, enum proto_field f,
		     int64_t def);

/* Is st a launcher's stream the readers leave out (docs/FORMAT.md, META
 * "launcher": "1"; a launcher traced on request, "traced", is shown)? Its
 * META must be complete: after a pass over the trace. */
int mgr_stream_launcher(const struct proto_stream *st);

/* Threads the post-processing may use: TAPESTRY_POST_THREADS, 1 (every
 * pass after the other, in the calling thread) or 2 (the default: passes
 * that do not depend on each other run side by side, in threads joined
 * before the call that started them returns). The output is the same byte
 * for byte (tests/manager/test_post_threads.sh). */
int mgr_post_threads(void);

/* Open dir; NULL with *rc. Prints nothing. Runs the job-start pass beside
 * the causality and perturbation passes (mgr_post_threads). The events of launchers'
 * streams (mgr_stream_launcher) are not yielded, nor count for the
 * origin. */
struct mgr_events *mgr_events_open(const char *dir, int *rc);

/* How many launchers' streams e leaves out (mgr_stream_launcher): its
 * readers that count what they left out (the profile's left_out) are told
 * it, since they never see those streams. */
size_t mgr_events_launchers(const struct mgr_events *e);

/* The communicators' job-wide names (manager/post/comms.h), valid while e is. */
struct mgr_comms;
const struct mgr_comms *mgr_events_comms(const struct mgr_events *e);

/* Next event: 1 with *out (valid until the next call), 0 at the end, < 0 on
 * an I/O error. */
int mgr_events_next(struct mgr_events *e, struct mgr_event *out);

/* The underlying trace (streams, stats, strings, meta). */
struct proto_trace *mgr_events_trace(struct mgr_events *e);

/* The job's time model (clock fits per edge and stream). */
struct mgr_post;
const struct mgr_post *mgr_events_post(const struct mgr_events *e);

/* The causality repair applied (violations before/after, shifts). */
struct mgr_causality;
const struct mgr_causality *mgr_events_causality(const struct mgr_events *e);

/* The perturbation correction applied, or NULL (TAPESTRY_NO_CORRECTION). */
struct mgr_perturb;
const struct mgr_perturb *mgr_events_perturb(const struct mgr_events *e);

/* Job start: global time (root clock, ns) of the earliest event. */
uint64_t mgr_events_origin(const struct mgr_events *e);

/* Free e; NULL is a no-op. */
void mgr_events_close(struct mgr_events *e);

#endif
