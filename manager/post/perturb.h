/*
 * manager/post/perturb.h - removing the tracer's own perturbation ([004]
 * ch. 4): each event's times as if the tracer had not run.
 *
 * The rules, each in full in docs/modules/manager-post.md ("perturb.c"):
 * - Flows are threads (stream, tid). Between two base events a flow's
 *   corrected times are its traced ones less the tracer's cost since the
 *   base: t_a(e) = tb_a + (t(e) - tb) - acc.
 * - An event's cost is calibrated (CALIB records: per wrapped call, per
 *   buffered stdio call; of a stream's calibrations, the lowest) or, around
 *   MPI calls, measured (the gaps between an MPI event and the COMPUTE
 *   events around it, each up to ten times its flow's median gap: the
 *   rest, a preemption, counts as time off the CPU; the wrapper's work
 *   outside them, a cold start); add
 *   the tracer's work in the thread (FLUSH, waits for room in its ring),
 *   the sensor's arrived probe inside a receive, and the indirect part
 *   TAPESTRY_PERTURB_INDIRECT chooses: stolen (the thread's time off the
 *   CPU), busy (the tracer threads' CPU time), auto (stolen with COMPUTE
 *   events, else busy) or 0.
 * - A message leaves at its send's start; an MPI_Isend's, at the sender's
 *   call that completed the request when the receive ended after it began.
 * - Receives and collective members are base events, placed from their
 *   partners' corrected times (Maillet's rules): a receive whose message
 *   had arrived keeps its own time after the send; one that waited, its
 *   receiver more perturbed than the sender, keeps its transit; any other
 *   takes the communication model fitted on the trace's own waiting
 *   receives (latency + bytes / bandwidth, its tail left out). A member of
 *   a collective on MPI_COMM_WORLD or a named communicator ends at the
 *   latest corrected entry of the members it waits for (comms.h) plus what
 *   it took after their latest traced entry. A transit or a member's time
 *   in its group's tail (beyond 3 robust sd) takes the model, or the
 *   group's median.
 * Times in and out are global (post) and causality-repaired (causality).
 */
#ifndef TAPESTRY_MGR_PERTURB_H
#define TAPESTRY_MGR_PERTURB_H

#include <stdint.h>

#include "proto/event.h"

struct mgr_post;
struct mgr_causality;
struct mgr_perturb;

struct mgr_perturb_stats {
	uint64_t flows, events, receives, receives_arrived, receives_waited,
		receives_model, collectives;
	uint64_t collectives_sub;	/* of which on other communicators than
					 * MPI_COMM_WORLD (manager/post/comms.h) */
	double alpha_ns;		/* mean calibrated cost per event */
	int64_t removed_ns;		/* sum over flows of the final accumulator */
	/* the MPI sensor's accounting measured in the gaps around MPI events */
	uint64_t measured_events;
	int64_t measured_ns;
	int64_t probe_ns;		/* arrived probes inside receives */
	/* the cold starts of calls that run the progress engine */
	uint64_t cold_events;
	int64_t cold_ns;
	/* application threads' waits for room in their rings (post-mortem) */
	uint64_t waits;
	int64_t wait_ns;
	/* streams with events but neither a CALIB of evtype 0 nor META
	 * calib_ns (a process that ended before its start-up calibration was
	 * done): no tracer cost is removed from their events */
	uint64_t uncalibrated_streams, uncalibrated_events;
	double copy_ns;			/* median own time of arrived receives */
	/* the communication model, fitted on receives that waited (model_kept
	 * of model_points: the tail beyond 3 robust sd is left out) */
	uint64_t model_points, model_kept;
	double model_latency_ns, model_ns_per_byte, model_resid_sd_ns;
	double model_t_slope;		/* Student t of the per-byte term */
	double model_cut_ns;		/* the tail: beyond the fit + this */
	uint64_t receives_tail;		/* waited, their traced transit in the
					 * tail: taken from the model */
	/* receives and collective members the rules would have moved earlier
	 * than the tracer cost their thread so far allows: kept to that cost
	 * (the wait the rules removed was the program's own), and how much */
	uint64_t capped;
	int64_t capped_ns;
	/* the ranks' time off the CPU in COMPUTE intervals, and the part of
	 * it removed (at most what the process's tracer threads ran): the
	 * rest was the host's other work */
	int64_t stolen_ns, stolen_removed_ns;
	/* the gaps around measured MPI events beyond their flow's bound (ten
	 * times its median gap, at least 1 us): time the thread was off the
	 * CPU, not the sensor's work; removed with stolen_ns, within the same
	 * limit (stolen_removed_ns covers both) */
	int64_t gap_excess_ns;
	uint64_t helper_flows;		/* tracer threads moved with their main */
	uint64_t follower_flows;	/* program threads without MPI events,
					 * moved with their main (and their cost) */
	uint64_t collectives_tail;	/* members whose time after the entries
					 * they waited for was in their group's
					 * tail: its median taken */
};

/* Build the correction of dir, with the messages matched by clc (NULL: no
 * message rules). time(arg, stream, raw) gives an event's global repaired
 * time. NULL with *rc. */
typedef int64_t (*mgr_perturb_time_fn)(void *arg, uint64_t stream, uint64_t raw);
struct mgr_perturb *mgr_perturb_build(const char *dir,
				      const struct mgr_causality *clc,
				      mgr_perturb_time_fn time, void *arg,
				      int *rc);

/* Corrected start and end of the next event of its flow. Must be called for
 * every event proto_trace yields, in yield order, with the same times the
 * time function gave during the build (start, end). */
void mgr_perturb_apply(struct mgr_perturb *p, uint64_t stream,
		       const struct proto_event *ev, int64_t start, int64_t end,
		       int64_t *a_start, int64_t *a_end);

/* Restart mgr_perturb_apply's cursors (for a second read). */
void mgr_perturb_rewind(struct mgr_perturb *p);

const struct mgr_perturb_stats *mgr_perturb_stats(const struct mgr_perturb *p);

/* The test of a communication model latency + bytes x ns_per_byte on the
 * receives whose message came late ([004] 6.3): their transit is in the
 * trace (the model's points: ready before the message left). Per message
 * size with at least MGR_CHECK_MIN such receives, the errors e = transit -
 * model; H0: their mean is 0, decided by Student's T = mean / S x
 * sqrt(n - 1) (S the standard deviation of the sample) against the
 * two-sided critical value at 5 % for n - 1 degrees of freedom (valid for
 * any law of the errors once n is large enough: n >= 30). The model is
 * accepted for the trace if it is for every size tested. */
#define MGR_CHECK_MIN 30
struct mgr_model_check {
	int64_t bytes;
	uint64_t n;
	double model_ns;		/* the model's transit for bytes */
	double mean_ns, sd_ns;		/* of the errors */
	double t, critical;
	double min_ns, avg_ns, max_ns;	/* the transits measured */
	int accept;
};

/* Fills out[0 .. max) with the sizes tested, the most observed first, and
 * returns how many sizes have MGR_CHECK_MIN receives or more (may exceed
 * max; 0: nothing to test); *rejected (if not NULL) gets how many of all
 * of them reject the model. */
size_t mgr_perturb_model_check(const struct mgr_perturb *p, double latency_ns,
			       double ns_per_byte, struct mgr_model_check *out,
			       size_t max, size_t *rejected);

/* The two-sided 5 % critical value of Student's law with nu degrees of
 * freedom (nu >= 1). */
double mgr_student_critical(uint64_t nu);

/* Free p; NULL is a no-op. */
void mgr_perturb_free(struct mgr_perturb *p);

#endif
