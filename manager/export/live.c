/*
 * manager/export/live.c - `tapestry live-ti`: the time-independent actions of each
 * rank while the program runs ([003]'s run-time mode).
 *
 * Follows a job directory as the root receiver writes it (proto/trace in
 * follow mode: it polls the segments, a frame in progress is waited for),
 * maps every event with the same code as `tapestry export -f simgrid-ti`
 * (mgr_ti, manager/export/export_sim.c) and writes OUTDIR/rank_N.txt and
 * OUTDIR/list. The files are growing regular files, or named pipes that
 * `smpirun -replay list` reads as the actions come: SimGrid 3.32's replay
 * reads each rank's file to its end once (a growing file would end the
 * rank early), so pipes are the way for a simulator to run beside the
 * program. docs/modules/live-ti.md gives the design, stopping and limits.
 *
 * Each rank's lines go through a stdio stream (fopencookie) into a bounded
 * buffer of our own; the buffer is written to the rank's file or pipe
 * without blocking, so a simulator that reads one rank's pipe cannot make
 * us wait on another's. Single-threaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "manager/export/live.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "proto/error.h"
#include "proto/num.h"

#define LIVE_POLL_MS 20			/* sleep when nothing new */
#define LIVE_BATCH 65536		/* events between two flushes */
#define LIVE_BUF_HIGH (4u << 20)	/* stop reading above this */
#define LIVE_BUF_MAX (64u << 20)	/* per rank, hard limit */
#define LIVE_RANKS_MAX 65536		/* as the mapping */
#define LIVE_STALL_S 10			/* warn when paused this long */

struct lrank {
	struct live *L;
	int32_t r;
	int fd;			/* file or pipe, -1 until opened */
	int dead;		/* reader gone or write error: drop */
	int closed;		/* written to the end and closed */
	char *buf;		/* bytes not written to fd yet */
	size_t len, cap;
	uint64_t written;	/* bytes written to fd */
};

struct live {
	const struct mgr_live_opts *o;
	struct lrank **rk;	/* indexed by rank; NULL: not seen */
	size_t nrk;
	int64_t np;		/* ranks in the list, 0 before it exists */
	uint64_t first_done_read;	/* bytes read when the first rank ended */
	uint64_t first_done_total;
	double first_done_at;
	int first_done;
	struct timespec t0;
};

static volatile sig_atomic_t stop_sig;	/* signals received */

static void on_stop(int sig)
{
	(void)sig;
	if (stop_sig < 2)
		stop_sig++;
}

static double since(const struct live *L)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - L->t0.tv_sec) +
	       (double)(t.tv_nsec - L->t0.tv_nsec) * 1e-9;
}

static void nap(void)
{
	struct timespec ts = {0, LIVE_POLL_MS * 1000000L};

	nanosleep(&ts, NULL);
}

/* ---- per-rank buffers behind a stdio stream ------------------------------ */

static ssize_t ck_write(void *c, const char *b, size_t n)
{
	struct lrank *k = c;

	if (k->dead)
		return (ssize_t)n;	/* nobody reads it any more */
	if (k->len + n > LIVE_BUF_MAX) {
		errno = ENOBUFS;
		return -1;
	}
	if (k->len + n > k->cap) {
		size_t cap = k->cap ? k->cap : 65536;
		char *p;

		while (cap < k->len + n)
			cap *= 2;
		if (cap > LIVE_BUF_MAX)
			cap = LIVE_BUF_MAX;
		if (!(p = realloc(k->buf, cap))) {
			errno = ENOMEM;
			return -1;
		}
		k->buf = p;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, b, n);
	k->len += n;
	return (ssize_t)n;
}

static int ck_close(void *c)
{
	(void)c;	/* the rank's buffer and fd belong to the live feed */
	return 0;
}

static struct lrank *rank_slot(struct live *L, int32_t r)
{
	if ((size_t)r >= L->nrk) {
		size_t n = L->nrk ? L->nrk : 16;
		struct lrank **p;

		while (n <= (size_t)r)
			n *= 2;
		if (!(p = realloc(L->rk, n * sizeof(*p))))
			return NULL;
		memset(p + L->nrk, 0, (n - L->nrk) * sizeof(*p));
		L->rk = p;
		L->nrk = n;
	}
	if (!L->rk[r]) {
		if (!(L->rk[r] = calloc(1, sizeof(struct lrank))))
			return NULL;
		L->rk[r]->L = L;
		L->rk[r]->r = r;
		L->rk[r]->fd = -1;
	}
	return L->rk[r];
}

/* mgr_ti's callback: the stream of rank r. */
static FILE *open_rank(void *arg, int32_t r)
{
	static const cookie_io_functions_t io = {
		.write = ck_write, .close = ck_close,
	};
	struct live *L = arg;
	struct lrank *k;
	FILE *f;

	if (r < 0 || r >= LIVE_RANKS_MAX) {
		mgr_fail(PROTO_E_TOOBIG, "rank %d out of range (at most %d "
			 "ranks)", r, LIVE_RANKS_MAX);
		return NULL;
	}
	if (L->np && r >= L->np) {
		mgr_fail(PROTO_E_ARG, "rank %d is outside the %" PRId64 " "
			 "ranks of %s/list (--np too small?)", r, L->np,
			 L->o->outdir);
		return NULL;
	}
	if (!(k = rank_slot(L, r)) || !(f = fopencookie(k, "w", io))) {
		mgr_fail(PROTO_E_NOMEM, "out of memory");
		return NULL;
	}
	return f;
}

/* ---- outputs -------------------------------------------------------------- */

static void rank_path(const struct live *L, int64_t r, char *p, size_t cap)
{
	snprintf(p, cap, "%s/rank_%" PRId64 ".txt", L->o->outdir, r);
}

/* Create the np rank files (or pipes), then the list, atomically: a
 * consumer that sees the list finds every file it names. 0, or a negative
 * PROTO_E_* code (said, mgr_fail). */
static int outputs_create(struct live *L, int64_t np)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *list;

	if (np > LIVE_RANKS_MAX)
		return mgr_fail(PROTO_E_TOOBIG, "%" PRId64 " ranks: at most %d",
				np, LIVE_RANKS_MAX);
	for (int64_t r = 0; r < np; r++) {
		struct lrank *k = rank_slot(L, (int32_t)r);
		struct stat st;

		if (!k)
			return mgr_fail(PROTO_E_NOMEM, "out of memory");
		rank_path(L, r, path, sizeof(path));
		if (L->o->fifo) {
			if (lstat(path, &st) == 0 && !S_ISFIFO(st.st_mode) &&
			    unlink(path) != 0) {
				return mgr_fail(PROTO_E_IO, "%s: cannot "
						"replace: %m", path);
			}
			if (mkfifo(path, 0644) != 0 && errno != EEXIST)
				return mgr_fail(PROTO_E_IO, "%s: cannot "
						"create a named pipe: %m",
						path);
		} else {
			k->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				     0644);
			if (k->fd < 0)
				return mgr_fail(PROTO_E_IO, "%s: cannot "
						"write: %m", path);
		}
	}
	snprintf(tmp, sizeof(tmp), "%s/list.tmp", L->o->outdir);
	snprintf(path, sizeof(path), "%s/list", L->o->outdir);
	if (!(list = fopen(tmp, "w")))
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", tmp);
	for (int64_t r = 0; r < np; r++)
		fprintf(list, "rank_%" PRId64 ".txt\n", r);
	if (fclose(list) != 0 || rename(tmp, path) != 0) {
		mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		unlink(tmp);
		return PROTO_E_IO;
	}
	L->np = np;
	if (L->o->verbose)
		fprintf(stderr, "tapestry: live-ti: +%.3f s: %s written (%" PRId64
			" ranks, %s)\n", since(L), path, np,
			L->o->fifo ? "named pipes" : "growing files");
	return 0;
}

/* Write what rank k holds, without blocking on a pipe. Returns bytes
 * written (0: nothing could go). */
static size_t rank_drain(struct live *L, struct lrank *k)
{
	size_t done = 0;

	if (k->fd < 0 && L->o->fifo && (int64_t)k->r < L->np && !k->dead &&
	    !k->closed) {
		char path[PATH_MAX];

		rank_path(L, k->r, path, sizeof(path));
		/* ENXIO until the simulator opens its end */
		k->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (k->fd < 0 && errno != ENXIO) {
			mgr_err("%s: cannot open: %m: rank %d's actions are "
				"dropped", path, k->r);
			k->dead = 1;
		}
	}
	while (k->fd >= 0 && k->len > done && !k->dead) {
		ssize_t n = write(k->fd, k->buf + done, k->len - done);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		mgr_err("rank %d: %s: its remaining actions are dropped", k->r,
			n < 0 && errno == EPIPE ? "the reader closed its pipe" :
			strerror(errno));
		k->dead = 1;
	}
	if (k->dead)
		done = k->len;
	memmove(k->buf, k->buf + done, k->len - done);
	k->len -= done;
	k->written += done;
	return done;
}

static size_t drain_all(struct live *L)
{
	size_t n = 0;

	for (size_t r = 0; r < L->nrk; r++)
		if (L->rk[r])
			n += rank_drain(L, L->rk[r]);
	return n;
}

/* 1 when a rank's buffer is past the high mark: read no more for now. */
static int backlogged(const struct live *L)
{
	for (size_t r = 0; r < L->nrk; r++)
		if (L->rk[r] && L->rk[r]->len > LIVE_BUF_HIGH)
			return 1;
	return 0;
}

/* Bytes the readers have taken: written minus what still sits in the
 * pipes. */
static void read_so_far(const struct live *L, uint64_t *rd, uint64_t *total)
{
	*rd = *total = 0;
	for (size_t r = 0; r < L->nrk; r++) {
		const struct lrank *k = L->rk[r];
		int inpipe = 0;

		if (!k)
			continue;
		*total += k->written + k->len;
		if (k->fd >= 0 && L->o->fifo && ioctl(k->fd, FIONREAD, &inpipe) != 0)
			inpipe = 0;
		*rd += k->written - (uint64_t)(inpipe > 0 ? inpipe : 0);
	}
}

/* Ranks 0..np-1 that are done: finalized, or their stream ended. */
static int64_t ranks_done(struct live *L, const struct mgr_ti *x,
			  struct proto_trace *t, int64_t np)
{
	int64_t done = 0;

	for (int64_t r = 0; r < np; r++) {
		uint64_t sid = 0;
		int st = mgr_ti_rank_state(x, (int32_t)r, &sid);

		if (st == 2) {
			done++;
			continue;
		}
		if (st != 1)
			continue;
		for (size_t i = 0; i < proto_trace_nstreams(t); i++) {
			const struct proto_stream *s = proto_trace_stream(t, i);

			if (s->id == sid) {
				done += s->ended != 0;
				break;
			}
		}
	}
	if (done && !L->first_done) {
		L->first_done = 1;
		L->first_done_at = since(L);
		read_so_far(L, &L->first_done_read, &L->first_done_total);
	}
	return done;
}

/* ---- the feed ---------------------------------------------------------- */

/* The end: pipes get what is buffered (each must be opened and read by the
 * simulator, within drain_s seconds), then every file is closed, which is
 * the simulator's end of file. 0, or a negative code (said). */
static int finish_outputs(struct live *L)
{
	long long deadline_ms = (long long)(L->o->drain_s > 0 ? L->o->drain_s : 60) * 1000;
	long long waited = 0;
	int rc = 0;

	for (;;) {
		int pending = 0;

		drain_all(L);
		for (int64_t r = 0; r < L->np; r++) {
			struct lrank *k = L->rk[r];

			if (!k || k->dead || k->closed)
				continue;
			if (k->len || k->fd < 0) {
				pending++;
				continue;
			}
			/* all written: its reader gets its end of file now,
			 * whatever the others do */
			if (close(k->fd) != 0 && !L->o->fifo && rc == 0) {
				rc = mgr_fail(PROTO_E_IO, "rank %" PRId64 ": "
					      "write failed: %m", r);
			}
			k->fd = -1;
			k->closed = 1;
		}
		if (!pending)
			break;
		if (waited >= deadline_ms) {
			rc = mgr_fail(PROTO_E_CLOSED, "%d of %" PRId64 " ranks' "
				      "pipes were not read to the end within %d s: "
				      "their actions are lost", pending, L->np,
				      L->o->drain_s > 0 ? L->o->drain_s : 60);
			break;
		}
		if (stop_sig >= 2) {
			rc = mgr_fail(PROTO_E_CLOSED, "second signal: %d ranks' "
				      "pipes not read to the end", pending);
			break;
		}
		nap();
		waited += LIVE_POLL_MS;
	}
	for (size_t r = 0; r < L->nrk; r++) {
		struct lrank *k = L->rk[r];

		if (!k)
			continue;
		if (k->fd >= 0 && close(k->fd) != 0 && !L->o->fifo && rc == 0) {
			rc = mgr_fail(PROTO_E_IO, "rank %zu: write failed: %m",
				      r);
		}
		k->fd = -1;
	}
	return rc;
}

static void live_free(struct live *L)
{
	for (size_t r = 0; r < L->nrk; r++) {
		if (!L->rk[r])
			continue;
		if (L->rk[r]->fd >= 0)
			close(L->rk[r]->fd);
		free(L->rk[r]->buf);
		free(L->rk[r]);
	}
	free(L->rk);
}

/* Read what is stored now, at most LIVE_BATCH events (unbounded with
 * all, at the end). 1 when something was read, 0 when nothing, a
 * negative code on failure (said). */
static int read_some(struct live *L, struct mgr_ti *x, struct proto_trace *t,
		     int all)
{
	struct proto_trace_event te;
	size_t n = 0;
	int rc = 0;

	while ((all || n < LIVE_BATCH) && (rc = proto_trace_next(t, &te)) == 1) {
		if (mgr_ti_event(x, &te) != 0)
			return -1;
		n++;
		if (all && n % LIVE_BATCH == 0) {
			/* bounded buffers: push what the mapping wrote */
			if (mgr_ti_flush(x))
				return -1;
			drain_all(L);
		}
	}
	if (rc < 0)
		return mgr_fail(rc, "%s: read error: %s", L->o->jobdir,
				proto_strerror(rc));
	return n > 0;
}

/* Signals (TERM and INT stop, PIPE ignored) and the output directory,
 * which must not hold a list yet: 0, or a negative PROTO_E_* code (said,
 * mgr_fail). */
static int live_prepare(const struct mgr_live_opts *o)
{
	struct sigaction sa;
	char path[PATH_MAX];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	stop_sig = 0;

	if (mkdir(o->outdir, 0777) != 0 && errno != EEXIST)
		return mgr_fail(PROTO_E_IO, "%s: cannot create: %m", o->outdir);
	snprintf(path, sizeof(path), "%s/list", o->outdir);
	if (access(path, F_OK) == 0)
		return mgr_fail(PROTO_E_EXISTS, "%s already exists: give "
				"live-ti a new output directory", path);
	return 0;
}

/* Follow the job directory (opened into *tp once it appears) until every
 * rank is done or a signal stops it: 0, or a negative code (said). */
static int follow(struct live *L, struct mgr_ti *x, struct proto_trace **tp)
{
	const struct mgr_live_opts *o = L->o;
	double last_note = 0, stalled_since = -1;
	int rc, waiting_note = 0;

	while (!stop_sig) {
		int got = 0;

		if (!*tp && !(*tp = proto_trace_open_flags(o->jobdir, PROTO_TRACE_FOLLOW, &rc))) {
			struct stat st;

			if (rc == PROTO_E_NOTFOUND && stat(o->jobdir, &st) == 0 &&
			    !S_ISDIR(st.st_mode))
				rc = PROTO_E_FORMAT;	/* a file: never a job */
			if (rc != PROTO_E_NOTFOUND)
				return mgr_fail(rc, "%s: cannot follow: %s",
						o->jobdir, proto_strerror(rc));
			if (!waiting_note++ && o->verbose)
				fprintf(stderr, "tapestry: live-ti: waiting for "
					"%s to appear\n", o->jobdir);
			nap();
			continue;
		}
		if (!backlogged(L)) {
			if ((got = read_some(L, x, *tp, 0)) < 0)
				return -1;
			stalled_since = -1;
		} else if (stalled_since < 0) {
			stalled_since = since(L);
		} else if (since(L) - stalled_since > LIVE_STALL_S) {
			mgr_err("warning: a pipe's reader is more than %u MiB "
				"behind: reading paused until it catches up (a "
				"simulator waiting for another rank would wait "
				"for ever)", LIVE_BUF_HIGH >> 20);
			stalled_since = since(L) + 1e9;	/* once */
		}
		if (!L->np && mgr_ti_world(x) > 0 &&
		    outputs_create(L, mgr_ti_world(x)))
			return -1;
		if (mgr_ti_flush(x))
			return -1;
		got |= drain_all(L) > 0;
		int64_t np = L->np ? L->np : mgr_ti_world(x);
		int64_t done = np ? ranks_done(L, x, *tp, np) : 0;

		if (o->verbose && since(L) - last_note >= 1) {
			uint64_t rd, tot;

			read_so_far(L, &rd, &tot);
			fprintf(stderr, "tapestry: live-ti: +%.3f s: %" PRIu64
				" actions, %" PRId64 "/%" PRId64 " ranks done, %"
				PRIu64 " of %" PRIu64 " bytes read\n", since(L),
				mgr_ti_actions(x), done, np, rd, tot);
			last_note = since(L);
		}
		if (np && done == np)
			break;
		if (!got)
			nap();
	}
	return 0;
}

/* After following: what is left, the end of every rank's file and the
 * closing line: 0, or a negative code (said). */
static int live_end(struct live *L, struct mgr_ti *x, struct proto_trace *t)
{
	const struct mgr_live_opts *o = L->o;
	int rc;

	if (t) {
		/* what is stored now, then the events held for their array */
		proto_trace_finish(t);
		if (read_some(L, x, t, 1) < 0)
			return -1;
	}
	if (!L->np && mgr_ti_world(x) > 0 && outputs_create(L, mgr_ti_world(x)))
		return -1;
	if (!L->np)
		return mgr_fail(PROTO_E_NOTFOUND, "%s: no MPI rank seen%s: "
				"nothing written", o->jobdir,
				stop_sig ? " before the stop" : "");
	if (!mgr_ti_mpi_events(x)) {
		/* the list exists: its readers still get their end of file */
		rc = mgr_fail(PROTO_E_NOTFOUND, "%s: no MPI rank seen%s: the "
			      "files stay empty", o->jobdir,
			      stop_sig ? " before the stop" : "");
		finish_outputs(L);
		return rc;
	}
	for (int64_t r = 0; r < L->np; r++)
		if (!mgr_ti_rank_state(x, (int32_t)r, NULL))
			mgr_err("warning: rank %" PRId64 " has no events: its "
				"file stays empty (a replay would deadlock)", r);
	mgr_ti_end(x);
	if (mgr_ti_flush(x) || finish_outputs(L))
		return -1;
	fprintf(stderr, "tapestry: live-ti: %" PRIu64 " actions of %" PRId64
		" ranks written to %s in %.3f s%s", mgr_ti_actions(x), L->np,
		o->outdir, since(L), stop_sig ? " (stopped by a signal)" : "");
	if (L->first_done && o->fifo)
		fprintf(stderr, "; when the first rank ended (+%.3f s) the "
			"reader had taken %" PRIu64 " of %" PRIu64 " bytes",
			L->first_done_at, L->first_done_read, L->first_done_total);
	fputc('\n', stderr);
	return 0;
}

int mgr_live_run(const struct mgr_live_opts *o)
{
	struct live L = {.o = o};
	struct proto_trace *t = NULL;
	struct mgr_ti *x = NULL;
	int status = 1;

	clock_gettime(CLOCK_MONOTONIC, &L.t0);
	if (live_prepare(o)) {
		mgr_err_flush();
		return 1;
	}
	if (!(x = mgr_ti_new(MGR_TI_SMPI, open_rank, &L))) {
		mgr_err("out of memory");
		return 1;
	}
	if ((o->np > 0 && outputs_create(&L, o->np)) || follow(&L, x, &t) ||
	    live_end(&L, x, t))
		goto out;
	status = 0;
out:
	if (mgr_ti_free(x) != 0)
		status = 1;
	proto_trace_close(t);
	live_free(&L);
	mgr_err_flush();	/* an exit status: launch's child _exits with it */
	return status;
}

static const struct mgr_opts_doc live_doc = {
	.opt = {
		{"np", 'n', 0, "N", "ranks: the list and files are made at once\n"
		 "(default: when the first MPI_Init is seen)"},
		{"fifo", 'f', 0, NULL, "named pipes instead of growing files: what\n"
		 "SimGrid's replay needs to run beside the job"},
		{"drain-timeout", 'd', 0, "S",
		 "at the end, how long the pipes may take to be\n"
		 "read (default 60)"},
		{"verbose", 'v', MGR_OPT_SHORT, NULL,
		 "progress on stderr every second"},
	},
	.col = 23,
	.head = "usage: tapestry live-ti [--np N] [--fifo] [--drain-timeout S] [-v]\n"
		"                        JOBDIR OUTDIR\n"
		"  Follows the job directory JOBDIR while it is written (by `tapestry\n"
		"  run`, `tapestry launch` or a root collector) and writes each MPI\n"
		"  rank's SimGrid time-independent actions (the simgrid-ti dialect of\n"
		"  `tapestry export`) to OUTDIR/rank_N.txt as the events arrive, with\n"
		"  OUTDIR/list for `smpirun -replay list` (run from inside OUTDIR).\n"
		"  Stops when every rank has ended, or on SIGTERM/SIGINT, flushing what\n"
		"  it holds. JOBDIR may not exist yet.\n",
	.tail = "  Exit status: 0, 1 on failure, 2 on a usage error.\n",
};

int mgr_cmd_live_ti(int argc, char **argv)
{
	struct mgr_live_opts o = {.drain_s = 60};
	long v;
	int c;

	optind = 1;
	while ((c = mgr_opts_next(&live_doc, argc, argv)) > 0) {
		switch (c) {
		case 'n':
		case 'd':
			if (proto_parse_long(optarg, 1, c == 'n' ? LIVE_RANKS_MAX : 86400,
					 &v)) {
				mgr_err("--%s takes a number from 1 to %d, not '%s'",
					c == 'n' ? "np" : "drain-timeout",
					c == 'n' ? LIVE_RANKS_MAX : 86400, optarg);
				return 2;
			}
			if (c == 'n')
				o.np = v;
			else
				o.drain_s = (int)v;
			break;
		case 'f': o.fifo = 1; break;
		case 'v': o.verbose = 1; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (argc - optind != 2)
		return mgr_opts_usage(&live_doc);
	o.jobdir = argv[optind];
	o.outdir = argv[optind + 1];
	return mgr_live_run(&o);
}
