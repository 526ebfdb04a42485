/*
 * manager/export/export_viz.h - what the viewer exports (chrome, paje, otf2, moca)
 * share, made of the manager's hash map (manager/post/map.h): the first pass over a job
 * (processes, threads, hosts, counts) and MPI message matching
 * (export_viz.c); the points of each event (viz_points.c); a bounded-memory
 * external sort that puts the points in time order (viz_sort.c); and the
 * progress line (viz_progress.c).
 * Internal to manager/export/.
 *
 * Every table here has a maximum; what does not fit is counted and left out
 * of the export (never a crash, never unbounded memory). The mapping of each
 * format and the memory bounds are in docs/modules/export-viz.md.
 */
#ifndef TAPESTRY_MGR_EXPORT_VIZ_H
#define TAPESTRY_MGR_EXPORT_VIZ_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/map.h"
#include "manager/export/export.h"

#define VIZ_THREADS_MAX (1u << 20)	/* (process, thread) pairs */
#define VIZ_HOSTS_MAX 65536
#define VIZ_WAITING_MAX (1u << 22)	/* message ends waiting for their other end */
#define VIZ_REQS_MAX (1u << 20)		/* outstanding non-blocking requests */
#define VIZ_COMMS_MAX 256		/* communicator names told apart (otf2) */
#define VIZ_MEMBERS_MAX (1u << 20)	/* members of named communicators */

/* ---- pass 1: the job's shape --------------------------------------------- */

struct viz_proc {
	uint64_t id;		/* stream id */
	int32_t rank;		/* -1: none */
	int64_t pid;
	char host[256];
	char exe[256];
	uint32_t host_idx;
	uint32_t first_thread;	/* threads of a process are not contiguous: */
	uint32_t nthreads;	/* see viz_thread.proc */
	uint64_t events, mem_samples;
	int64_t first, last;	/* ns from the job start */
	int has_mpi;
	int64_t label;		/* chrome pid: rank, OS pid, or 1e9 + index */
};

struct viz_thread {
	uint32_t proc;		/* index in procs */
	uint32_t tid;
	uint64_t events;
};

struct viz_member {
	int64_t name;		/* communicator's job-wide name (> 0) */
	uint32_t proc;		/* the member's process */
	int64_t myrank;		/* its rank in the communicator (-1: unknown) */
	int64_t side;		/* an intercommunicator's: which group
				 * (mgr_comms_side); -1 for the others */
};

struct viz_scan {
	struct viz_proc *procs;
	size_t nprocs, procs_cap;
	struct viz_thread *threads;
	size_t nthreads, threads_cap;
	char (*hosts)[256];
	size_t nhosts, hosts_cap;
	struct mgr_map procmap;		/* (stream id, 0) -> proc */
	struct mgr_map threadmap;	/* (proc, tid) -> thread */
	uint64_t events;
	uint64_t by_type[PROTO_EV__COUNT];	/* events per type */
	int64_t t_end;			/* largest end, ns from the job start */
	int32_t max_rank;		/* -1: no MPI ranks */
	uint32_t *rank_proc;		/* rank -> proc (UINT32_MAX: none) */
	uint64_t dropped_threads;	/* events of threads over VIZ_THREADS_MAX */
	uint64_t mem_samples;
	int64_t comm_ids[VIZ_COMMS_MAX];	/* communicators' job-wide names
						 * seen (otf2; manager/post/comms.h) */
	size_t ncomms;
	struct viz_member *members;	/* of named communicators (otf2) */
	size_t nmembers, members_cap;
	struct viz_match *match;	/* message matching (pass 2) */
};

/* Pass 1 over dir for the export format (named in the damage message):
 * fills s (zeroed first) and returns 0, or prints one
 * message and returns -1. Bounded memory: the tables above. */
int mgr_viz_scan(const char *dir, const char *format, struct viz_scan *s);
void mgr_viz_scan_free(struct viz_scan *s);

/* Thread index of an event (UINT32_MAX when over the maximum) and its
 * process index. Valid in pass 2 (pass-1 tables, looked up by stream id). */
uint32_t mgr_viz_thread_of(const struct viz_scan *s, const struct mgr_event *me);

/* Report damaged input after a read (corrupt batches, skipped bytes) and
 * the final read status; returns rc < 0 ? -1 : 0. */
int mgr_viz_read_end(const char *dir, struct mgr_events *e, int rc);

/* ---- MPI end points and message links ------------------------------------ */

enum viz_ep_kind {
	VIZ_EP_SEND = 1,	/* blocking send (MPI_Send, the send of Sendrecv) */
	VIZ_EP_RECV,		/* blocking receive (MPI_Recv, Sendrecv) */
	VIZ_EP_ISEND,		/* MPI_Isend posted (or a send started) */
	VIZ_EP_IRECV_POST,	/* MPI_Irecv posted (or a receive started) */
	VIZ_EP_ISEND_DONE,	/* an Isend request completed (wait/test) */
	VIZ_EP_IRECV_DONE,	/* an Irecv request completed: the message */
	VIZ_EP_OTHER_DONE,	/* another request completed (a nonblocking
				 * collective, MPI-IO, one-sided, Comm_idup):
				 * req, bytes (the completion's), peer -2 */
};

/* A message end point of one event, as the event records it. */
struct viz_ep {
	int kind;
	uint32_t proc;		/* the event's process */
	int64_t peer;		/* world rank of the other side (< 0 unknown) */
	int64_t comm, tag, bytes, req;
	int anytag;		/* a receive whose tag is not recorded (tag:
				 * the send's of its Sendrecv): any */
};

struct viz_match;
struct viz_pt;

/* The link points of a matched message (struct viz_pt, kind VIZ_PT_LINK,
 * a = sproc, rproc, comm, tag, ord, is_send): both ends of a message are
 * named alike, (sproc, rproc, comm, tag, ord) being the processes of the
 * sender and the receiver, the communicator's job-wide name, the send's
 * tag and its number among the sends of that channel and tag. 0, or an
 * error the matcher keeps (mgr_viz_match_err). */
typedef int (*viz_link_cb)(void *arg, const struct viz_pt *p);

/* Matching for the processes of s (pass-1 result: final ranks, so a rank
 * learnt late still matches). NULL on out of memory. */
struct viz_match *mgr_viz_match_new(const struct viz_scan *s);
void mgr_viz_match_free(struct viz_match *m);
/* The end points of me (emitted by process proc), handed to cb in order;
 * requests are followed from their posting to their completion. */
typedef void (*viz_ep_cb)(void *arg, const struct viz_ep *ep);
void mgr_viz_match_event(struct viz_match *m, uint32_t proc,
			 const struct mgr_event *me, viz_ep_cb cb, void *arg);
/* Where the link points go (and clear the error). */
void mgr_viz_match_sink(struct viz_match *m, viz_link_cb fn, void *arg);
/* Hand a message end (a send, a receive, an Isend posted, an Irecv
 * completed; others are ignored) with its link point p (time, location,
 * keys) to the manager's matcher (manager/post/match.h): when its other end
 * is met, now or later in the read, both link points go to the sink. Ends
 * never met give no link. Called in the read order, per process in its
 * order. */
void mgr_viz_match_link(struct viz_match *m, const struct viz_ep *ep,
			const struct viz_pt *p);
/* The sink's first failure, 0. */
int mgr_viz_match_err(const struct viz_match *m);
/* End points left out for lack of room (requests or ends waiting). */
uint64_t mgr_viz_match_overflow(const struct viz_match *m);
/* Messages whose link ends before it starts (the receive's completion,
 * on the job's clock, before the send's start), and in *links (not NULL)
 * the messages linked so far. A message's arrow goes from the start of
 * its sending call to the end of the call that completed its receive. */
uint64_t mgr_viz_match_backward(const struct viz_match *m, uint64_t *links);
/* One warning line on stderr for dir when some links end before they
 * start; nothing otherwise. */
void mgr_viz_match_said(const struct viz_match *m, const char *dir);

/* ---- points in time order (external sort) -------------------------------- */

enum viz_pt_kind {
	VIZ_PT_ENTER = 1,	/* event start (a = args) */
	VIZ_PT_LEAVE,		/* event end */
	VIZ_PT_EP,		/* a message end point (a = kind, peer, comm, tag, bytes, req) */
	VIZ_PT_LINK,		/* a linked end point (a = sproc, rproc, comm, tag, ord, is_send) */
	VIZ_PT_SAMPLE,		/* MEM_SAMPLE (a = rss, minflt, majflt, vsize) */
};

struct viz_pt {
	int64_t t;		/* ns from the job start */
	int64_t nest;		/* order of nested events at one time */
	int64_t seq;		/* event number (negated on the leave side) */
	uint32_t loc;		/* thread index (moca: process index) */
	uint8_t cls;
	uint16_t sub;		/* position inside the event */
	uint16_t kind;		/* enum viz_pt_kind */
	uint16_t type;		/* event type */
	uint16_t flags;		/* event flags */
	int64_t start, end;	/* the event's times */
	int64_t a[6];
};

typedef int (*viz_pt_cmp)(const struct viz_pt *x, const struct viz_pt *y);

/* Time order for viewers: t, thread, leave side before enter side, nesting
 * (outer enters first, inner leaves first), event, sub-position. */
int mgr_viz_cmp_time(const struct viz_pt *x, const struct viz_pt *y);

/* The points of one event (its enter, its end points, its leave), keyed for
 * mgr_viz_cmp_time; eps/neps from mgr_viz_match_event. Adds them to s;
 * links (not NULL) is handed the message ends with their link points
 * (mgr_viz_match_link), to be added when matched. */
struct viz_sort;
int mgr_viz_add_event(struct viz_sort *s, uint32_t loc, uint64_t seq,
		      const struct mgr_event *me, const struct viz_ep *eps,
		      size_t neps, int with_eps, struct viz_match *links);
/* The link point of end point i (ep) of event me at location loc, event
 * number seq: the keys mgr_viz_add_event gives it. */
void mgr_viz_link_point(struct viz_pt *p, uint32_t loc, uint64_t seq,
			const struct mgr_event *me, size_t i, const struct viz_ep *ep);

/* A sort holding at most run_max points in memory (a sorted run is spilled
 * to an anonymous temporary file when full; runs are merged VIZ_FANIN at a
 * time). run_max 0: VIZ_RUN_MAX, or TAPESTRY_VIZ_RUN_MAX from the
 * environment (at least 16; tests use it to force many runs). NULL on out
 * of memory. */
#define VIZ_RUN_MAX (1u << 18)
#define VIZ_FANIN 64
struct viz_sort *mgr_viz_sort_new(size_t run_max, viz_pt_cmp cmp);
int mgr_viz_sort_add(struct viz_sort *s, const struct viz_pt *p);
/* After the last add: prepare reading. 0 or PROTO_E_IO / PROTO_E_NOMEM. */
int mgr_viz_sort_finish(struct viz_sort *s);
/* Next point in order: 1, 0 at the end, < 0 on an I/O error. */
int mgr_viz_sort_next(struct viz_sort *s, struct viz_pt *out);
uint64_t mgr_viz_sort_runs(const struct viz_sort *s);
void mgr_viz_sort_free(struct viz_sort *s);
/* The end of an output written from the sorted points: rc is the last
 * mgr_viz_sort_next's (< 0: said as "reading sorted WHAT: ..."); out is
 * closed, a failure said for path. rc when all went well, else -1. */
int mgr_viz_write_end(FILE *out, const char *path, const char *what, int rc);

/* Pass 2: read dir again and add the points of every event to so (end
 * points with with_eps, linked messages with with_links), then finish the
 * sort. Counts events read in st->events. 0, or -1 with a message. */
int mgr_viz_fill_sort(const char *dir, struct viz_scan *s, struct viz_sort *so,
		      int with_eps, int with_links, const char *what,
		      struct mgr_export_stats *st);

/* ---- progress on a terminal ------------------------------------------------- */

struct viz_progress {
	const char *what;
	uint64_t total, done;
	time_t last;
	int on;
};

/* Percent of total (events) shown on stderr once a second when stderr is a
 * terminal; nothing otherwise. */
void mgr_viz_progress_init(struct viz_progress *p, const char *what,
			   uint64_t total);
void mgr_viz_progress_tick(struct viz_progress *p);
void mgr_viz_progress_end(struct viz_progress *p);

/* Name of an event type ("unknown" for none). */
const char *mgr_viz_ev_name(unsigned type);

/* A process's name for a viewer's container: "rank R pid P PROG" or "pid P
 * PROG" (PROG: the executable's last component), and " #K" for the K-th
 * image (K > 1, in the scan's order) of a pid that exec'd: each image is a
 * stream of its own with the same pid. */
void mgr_viz_proc_name(const struct viz_scan *s, size_t p, char *buf, size_t cap);

#endif
