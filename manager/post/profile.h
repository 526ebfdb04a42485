/*
 * manager/post/profile.h - where the time went: the job's profile, gathered
 * once from the corrected events (the ones every export reads,
 * manager/post/events.h), then printed by its readers (the report's text and
 * XML, `tapestry export -f profile`, the page through the report's XML).
 *
 * Fed event by event (mgr_profile_add) in one pass, closed once
 * (mgr_profile_finish), then read through the public arrays below. The
 * definitions (what counts as I/O, which bytes a call moved, which ranks are
 * shown) are docs/modules/manager-profile.md's.
 *
 * Ranks: the MPI ranks when the job has any (processes without a rank, the
 * launchers, are left out and counted); else every traced process is one,
 * numbered 0, 1 ... in the order its first event is read. Every table is
 * bounded (MGR_PROFILE_MAX_ROWS); what is beyond is counted, not kept.
 */
#ifndef TAPESTRY_MGR_PROFILE_H
#define TAPESTRY_MGR_PROFILE_H

#include <stdint.h>

#include "manager/post/map.h"

struct mgr_event;

#define MGR_PROFILE_MAX_ROWS ((size_t)1 << 22)	/* per table */
#define MGR_PROFILE_MAX_PROCS ((size_t)1 << 16)
#define MGR_PROFILE_BINS 64	/* 0 B, then [2^(k-1), 2^k - 1] for k = 1..63 */
#define MGR_PROFILE_COMM_UNNAMED (-1)	/* collectives on unnamed communicators */

struct mgr_prof_rank {
	int rank;
	int64_t pid;		/* of its first stream */
	char exe[64];		/* of its first stream, "" unknown */
	int64_t t0, t1;		/* first start, last end (ns from the job start) */
	int64_t mpi_ns;		/* its main thread's MPI calls (MPI-IO apart) */
	int64_t io_ns;		/* its main thread's libc and MPI-IO calls */
	int64_t threads_ns;	/* the MPI and I/O calls of its other threads */
	uint64_t calls;
};

struct mgr_prof_fn {		/* one call type on one rank */
	int rank;
	unsigned type;		/* enum proto_ev_type */
	uint64_t calls;		/* a folded run of polls counts its calls */
	int64_t time_ns, max_ns;
	uint64_t bytes;		/* moved, mgr_profile_bytes */
};

struct mgr_prof_type {		/* one call type over the ranks */
	unsigned type;
	uint64_t calls, bytes;
	int64_t time_ns, max_ns;	/* max_ns: of one call */
	int64_t rank_max_ns;		/* the busiest rank's time in it */
	double imbalance;		/* rank_max_ns / (time_ns / ranks) */
};

struct mgr_prof_msg {		/* point to point, counted at the sender */
	int from, to;		/* world ranks */
	uint64_t count, bytes;
};

struct mgr_prof_coll {		/* one collective call on one communicator */
	int64_t comm;		/* job-wide name (0: world), or _UNNAMED */
	unsigned type;
	uint64_t calls, bytes;	/* over its members */
	int64_t time_ns;
	uint64_t ranks;		/* members seen calling it */
};

struct mgr_prof_file {		/* one path on one rank */
	const char *path;	/* owned by the profile */
	int rank;
	uint64_t opens, reads, read_bytes, writes, write_bytes, other;
	int64_t time_ns;	/* of every call on it */
};

struct mgr_prof_bin {
	uint64_t min_bytes, max_bytes, count, bytes;
};

struct mgr_profile {
	int mpi;			/* ranks are MPI ranks */
	uint64_t left_out;		/* processes without a rank, left out */
	uint64_t beyond;		/* events or rows past a table's maximum */
	struct mgr_prof_rank *ranks;	/* by rank */
	size_t nranks;
	struct mgr_prof_fn *fns;	/* by rank, then time, decreasing */
	size_t nfns;
	struct mgr_prof_type *types;	/* by time, decreasing */
	size_t ntypes;
	struct mgr_prof_msg *msgs;	/* by bytes, then count, decreasing */
	size_t nmsgs;
	uint64_t msg_count, msg_bytes;	/* the matrix's sums */
	struct mgr_prof_bin bins[MGR_PROFILE_BINS];	/* point to point sends */
	struct mgr_prof_coll *colls;	/* by communicator, then time, decreasing */
	size_t ncolls;
	struct mgr_prof_file *files;	/* by time, decreasing */
	size_t nfiles;
	struct mgr_profile_acc *acc;	/* while gathering */
};

/* A new empty profile, or NULL (out of memory). */
struct mgr_profile *mgr_profile_new(void);

/* Count one event (a call of the libc or MPI sensors; the others only
 * extend their rank's span, or are ignored). 0, or PROTO_E_NOMEM. */
int mgr_profile_add(struct mgr_profile *p, const struct mgr_event *ev);

/* n processes its reader left out before they reached mgr_profile_add
 * (launchers' streams, mgr_events_launchers): counted in left_out. */
void mgr_profile_hidden(struct mgr_profile *p, uint64_t n);

/* Close the gathering: the arrays above are made and sorted, the rest
 * freed. Call once, after the last add. 0, or PROTO_E_NOMEM. */
int mgr_profile_finish(struct mgr_profile *p);

/* Free p and everything it holds; NULL is a no-op. */
void mgr_profile_free(struct mgr_profile *p);

/* The bytes an event moved, by what its call returned where it says
 * (docs/modules/manager-profile.md: read/write/send/recv and the stdio
 * calls by their result, MPI-IO by the status, an MPI completion by its
 * completed requests, MPI_Sendrecv sent + received); 0 for a failed call
 * and for calls that move no data. */
uint64_t mgr_profile_bytes(const struct mgr_event *ev);

/* Where an event's time goes: 'm' MPI, 'i' I/O (libc and MPI-IO calls),
 * 'c' computation (process calls such as fork or exit), 0 not a call. */
int mgr_profile_class(unsigned type);

/* A rank's computation: its span less its main thread's MPI and I/O
 * time, at least 0. */
int64_t mgr_profile_compute_ns(const struct mgr_prof_rank *r);

/* The bin of a message of n bytes (0 .. MGR_PROFILE_BINS - 1). */
int mgr_profile_bin(uint64_t n);

/* Check the invariants of a finished profile (sorted tables, sums that
 * agree): 0, or the number of the first broken rule. */
int mgr_profile_check(const struct mgr_profile *p);

#endif
