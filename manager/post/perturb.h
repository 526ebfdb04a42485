/*
 * manager/post/perturb.h - removing the tracer's own perturbation ([004] ch. 4).
 *
 * Flows are threads (stream, tid). Each event e of a flow costs the traced
 * program alpha(e): the stream's calibrated cost per wrapped call (CALIB
 * evtype 0, measured by the sensor at start-up and again at exit: the
 * lower counts) for every libc/MPI/process
 * event (buffered stdio calls: their own, CALIB evtype FWRITE, measured
 * around real fwrite calls), plus the whole duration of FLUSH events (the
 * tracer working in the application's thread; one without records is the
 * thread's wait for room in its ring, post-mortem mode: removed as it is,
 * but for the main thread in busy mode, where the sender's busy time
 * charged to it covers the wait). Between base events a flow's corrected times are
 *     t_a(e) = tb_a + (t(e) - tb) - acc,   acc = sum of alpha since the base.
 * The MPI sensor's accounting around MPI calls (CPU-time and counter reads,
 * the COMPUTE and MPI records) is measured, not calibrated: an MPI event
 * right after a COMPUTE event has nothing but that work in the gap from the
 * COMPUTE end to its start and from its end to the next COMPUTE start, and
 * both gaps are removed as they are. MPI events without a COMPUTE before
 * them (MPI_Init; traces without COMPUTE events) count the calibrated
 * accounting cost (CALIB evtype COMPUTE) instead; the last one's exit gap
 * half of it. A measured MPI event also counts the wrapper's work outside
 * its gaps (CALIB evtype MPI_INIT), no more than the COMPUTE event after it
 * lasted; one that runs the progress engine (all but MPI_Comm_rank and
 * MPI_Comm_size) its cold start, taken off its start: the MPI_Iprobe
 * calibration (CALIB evtype MPI_IPROBE) less the MPI_Comm_rank one, at
 * most its duration, but not where the sensor's arrived probe ran first
 * (MPI_Recv, MPI_Sendrecv), which took it. The arrived probe inside a receive (probe_ns) is removed
 * from its own time. The indirect part, TAPESTRY_PERTURB_INDIRECT: stolen
 * (the thread's off-CPU time in COMPUTE intervals, but for its waits for
 * room, which count whole: whatever took the CPU, the sender, the
 * collectors, the other ranks' tracers), busy (for the main thread, the
 * busy time of the tracer's own threads, FLUSH and SEND events: on a host
 * without a spare core they take the CPU from the application), auto (the
 * default: stolen for streams with COMPUTE events, busy for the others),
 * or 0 (the tracer has cores of its own).
 * A message leaves at its send's start (an MPI_Sendrecv's: after its
 * arrived probe), but an MPI_Isend's when the receive ended after the
 * sender entered the call that completed the request (MPI_Wait, Waitany,
 * Waitall, a Test that found it done): a message beyond the eager limit
 * waits for its sender's progress, and the tracer's work between the
 * Isend and that call is no transit. Departures count for the rules below
 * and the model's points.
 * Receives and collectives become base events:
 *  - a receive whose message had already arrived ("arrived" flag: MPI_Iprobe
 *    before blocking; but not a message that left in its sender's wait, as
 *    above: the probe saw a rendezvous's header, its data moved later) and
 *    whose receiver is not more perturbed than the sender keeps its copy
 *    time: t_a(ER) = t_a(SR) + (t(ER) - t(SR));
 *  - a receive that waited (ready, its probe done, before its message left:
 *    one ready after it found the message on its way, and its t(ER) - t(S)
 *    holds its own lateness), whose receiver is more perturbed than the
 *    sender, still waits: t_a(ER) = t_a(S) + (t(ER) - t(S)), unless that
 *    transit is in the model's tail (beyond 3 robust sd, for a size up to the
 *    largest the fit kept: a rank off the CPU
 *    inside its call while the message waited, which the stolen time of
 *    the COMPUTE events does not see), where the model gives it;
 *  - any other receive uses the communication model fitted on the trace's
 *    own waiting receives (latency + bytes / bandwidth; least squares
 *    without the points beyond 3 robust sd of the median: a descheduled
 *    rank's millisecond waits), counted as "model", never longer after its
 *    send than in the traced run, and takes at least the median own time
 *    of the receives that found their message there or on its way;
 *  - a collective member ends at the latest corrected entry of the members
 *    it waits for plus what it took after their latest traced entry (the
 *    median of its group, same call, size, root or not and bytes, where
 *    that is in the group's tail beyond 3 robust sd: a member off the CPU
 *    inside the call) (a barrier model where everyone waits for everyone;
 *    bcast and scatter wait for the root, the root of reduce and gather for
 *    the others, scan and exscan for the lower ranks: manager/post/comms.h): on
 *    MPI_COMM_WORLD
 *    and on every communicator with a job-wide name; on the others it is a
 *    plain event.
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
