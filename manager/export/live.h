/*
 * manager/export/live.h - time-independent actions from events, post-mortem and
 * live.
 *
 * Two parts that share one event -> action mapping:
 *  - mgr_ti (manager/export/export_sim.c): the mapping itself, one MPI event at a
 *    time into per-rank FILE streams, with its per-rank state (pending
 *    computation, outstanding requests, communicators). `tapestry export -f
 *    simgrid-ti` and the live feed both drive it, so both write the same
 *    lines for the same events (docs/modules/export-simgrid.md).
 *  - mgr_live (manager/export/live.c): `tapestry live-ti`, which follows a job
 *    directory while it is written and feeds the actions of each rank into
 *    growing files or named pipes (docs/modules/live-ti.md).
 */
#ifndef TAPESTRY_MGR_LIVE_H
#define TAPESTRY_MGR_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "proto/trace.h"

/* ---- the mapping (manager/export/export_sim.c) ---------------------------------- */

struct mgr_ti;

enum mgr_ti_dialect { MGR_TI_SMPI, MGR_TI_2011 };

/* Called once per rank, at its first MPI event, for the stream its lines go
 * to. The mapping owns the FILE from then on (fclose at mgr_ti_free).
 * NULL refuses the rank: mgr_ti_event then fails (the callback prints
 * why). */
typedef FILE *(*mgr_ti_open_fn)(void *arg, int32_t rank);

/* A new mapping; NULL when out of memory. */
struct mgr_ti *mgr_ti_new(enum mgr_ti_dialect d, mgr_ti_open_fn open, void *arg);

/* Map one event (any event: what is not an MPI or COMPUTE event of an MPI
 * rank is ignored). 0, or -1 with a message printed (a rank out of range,
 * two streams claiming one rank, the callback refused, out of memory). */
int mgr_ti_event(struct mgr_ti *x, const struct proto_trace_event *te);

/* World size announced so far (largest MPI_Init size or META size), 0 when
 * no rank has been seen. */
int64_t mgr_ti_world(const struct mgr_ti *x);

/* Rank r's state: 0 unseen, 1 writing, 2 finalized (no more actions). With
 * stream non-NULL, *stream is the id of the stream that owns the rank. */
int mgr_ti_rank_state(const struct mgr_ti *x, int32_t r, uint64_t *stream);

/* MPI events mapped so far; action lines written so far. */
uint64_t mgr_ti_mpi_events(const struct mgr_ti *x);
uint64_t mgr_ti_actions(const struct mgr_ti *x);

/* fflush every rank's stream. 0, or -1 when one failed (message printed). */
int mgr_ti_flush(struct mgr_ti *x);

/* End of input: each rank 0..world-1 that has a stream and no
 * MPI_Finalize gets its remaining computation and a `finalize` line (with
 * a warning), then the warnings about what was skipped are printed. */
void mgr_ti_end(struct mgr_ti *x);

/* Close every rank's stream and free x; NULL is a no-op. Returns 0, or -1
 * when a stream failed to write (message printed). */
int mgr_ti_free(struct mgr_ti *x);

/* The members of the job's communicators (manager/export/export_sim_sub.c),
 * read from the constructor events of the job directory dir beforehand:
 * with them, the SMPI dialect writes a collective on a communicator of
 * fewer ranks than the world as point-to-point messages among its members
 * (docs/modules/export-simgrid.md); without (the live feed, which cannot
 * read ahead) such collectives are skipped, counted. */
struct mgr_ti_subs;
struct mgr_comms;
/* NULL with *rc (PROTO_E_*) on a read error or out of memory. */
struct mgr_ti_subs *mgr_ti_subs_read(const char *dir, const struct mgr_comms *cm, int *rc);
/* The world ranks of the communicator named name, in its rank order (*n
 * of them), or NULL when its members are not known. */
const int32_t *mgr_ti_subs_members(const struct mgr_ti_subs *s, int64_t name,
				   size_t *n);
void mgr_ti_subs_free(struct mgr_ti_subs *s);
/* Give x the members (and the names they are listed by); x does not own
 * them. */
void mgr_ti_set_subs(struct mgr_ti *x, const struct mgr_ti_subs *subs,
		     const struct mgr_comms *cm);

/* MPI ranks of the world without events (manager/export/export_sim_missing.c). */
struct mgr_ti_missing {
	int64_t world;
	const unsigned char *missing;	/* world entries: 1 for a missing rank */
};
/* After a post-mortem export into out (SMPI dialect, every file closed)
 * of a job with ranks missing or cut short (no MPI_Finalize): rewrite the
 * files of the ranks present without their messages to or from the
 * missing ones (0 bytes for them in the v-collectives), each up to the
 * last collective on MPI_COMM_WORLD they all have, and write for each
 * missing rank a stand-in that takes part in those collectives
 * (docs/modules/export-simgrid.md, "Missing ranks"). 0, or -1 (said). */
int mgr_ti_standin(const char *out, const struct mgr_ti_missing *m);

/* ---- the live feed (manager/export/live.c) -------------------------------------- */

struct mgr_live_opts {
	const char *jobdir;	/* followed; may not exist yet */
	const char *outdir;	/* created if missing; must not hold a list */
	int64_t np;		/* ranks, or 0: learned from the first MPI_Init */
	int fifo;		/* 1: named pipes, 0: growing regular files */
	int drain_s;		/* at the end, how long pipes may take to be
				 * read (default 60) */
	int verbose;		/* progress lines on stderr */
};

/* Follow o->jobdir until every rank has ended (MPI_Finalize mapped or its
 * stream's BYE stored) or SIGTERM/SIGINT, writing OUTDIR/rank_N.txt and
 * OUTDIR/list (docs/modules/live-ti.md). Installs its own signal handlers
 * for SIGTERM, SIGINT (stop and flush) and ignores SIGPIPE. Returns the
 * exit status: 0, 1 on failure (message printed: the error slot is
 * printed before it returns, as a forked child _exits with it). */
int mgr_live_run(const struct mgr_live_opts *o);

/* `tapestry live-ti [--np N] [--fifo] JOBDIR OUTDIR`. */
int mgr_cmd_live_ti(int argc, char **argv);

#endif
