/*
 * manager/launch/summary.c - what `tapestry run` says once the job
 * directory is written: one read of the trace (a live progress line while
 * it runs, on a terminal only), then a few lines: events, losses and the
 * clock quality, what was written, the commands to try next.
 *
 * The data is gathered once (mgr_summary_read), then printed
 * (mgr_summary_print).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/summary.h"
#include "manager/post/events.h"
#include "manager/post/post.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "proto/trace.h"

#define PROGRESS_EVERY 65536	/* events between clock reads */
#define PROGRESS_MS 200		/* between two progress lines */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Events the index announces (0 when there is no readable index). */
static uint64_t index_total(const char *dir)
{
	struct proto_jobdir_index_entry e;
	struct proto_jobdir_r *r;
	uint64_t total = 0;
	int rc;

	if (!(r = proto_jobdir_open(dir, &rc)))
		return 0;
	for (uint64_t i = 0; proto_jobdir_index_get(r, i, &e) == 1; i++)
		total += e.nrecords;
	proto_jobdir_close_r(r);
	return total;
}

/* "1.2M" style counts for the progress line. */
static void human(char *buf, size_t cap, double v)
{
	if (v >= 1e9)
		snprintf(buf, cap, "%.1fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, cap, "%.1fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, cap, "%.0fk", v / 1e3);
	else
		snprintf(buf, cap, "%.0f", v);
}

static void progress(uint64_t done, uint64_t total, double t0)
{
	char a[16], b[16], r[16];
	double dt = now_s() - t0, rate = dt > 0 ? (double)done / dt : 0;

	human(a, sizeof(a), (double)done);
	human(b, sizeof(b), (double)total);
	human(r, sizeof(r), rate);
	fprintf(stderr, "\rtapestry: reading the trace: %s of %s events, %s/s",
		a, b, r);
	if (rate > 0 && total > done)
		fprintf(stderr, ", %.0f s left", (double)(total - done) / rate);
	fputs("\033[K", stderr);
	fflush(stderr);
}

#define MAX_COLLECTORS 1024

/* The last STATS frame of each collector: its "rejected" count and their
 * reasons ("rejected_why": secret N, key N, version N, other N). */
enum { WHY_SECRET, WHY_KEY, WHY_VERSION, WHY_OTHER, WHY_N };
static const char *const why_key[WHY_N] = {"secret", "key", "version", "other"};
static const char *const why_said[WHY_N] = {"job secret", "stream key",
					    "protocol version", "other"};

struct rejects {
	uint64_t id[MAX_COLLECTORS], n[MAX_COLLECTORS];
	uint64_t why[MAX_COLLECTORS][WHY_N];
	size_t count;
	struct proto_msg msg;
};

static void read_why(const char *v, uint64_t why[WHY_N])
{
	for (int k = 0; k < WHY_N; k++) {
		const char *p = v ? strstr(v, why_key[k]) : NULL;

		why[k] = p ? strtoull(p + strlen(why_key[k]), NULL, 10) : 0;
	}
}

static void on_frame(void *arg, const struct proto_frame *f)
{
	struct rejects *rj = arg;
	const char *v;
	size_t i;

	if (f->type != PROTO_MSG_STATS || proto_msg_decode(f, &rj->msg) != 0)
		return;
	for (i = 0; i < rj->count && rj->id[i] != rj->msg.u.meta.id; i++)
		;
	if (i == MAX_COLLECTORS)
		return;
	rj->count += i == rj->count;
	rj->id[i] = rj->msg.u.meta.id;
	v = proto_meta_get(&rj->msg.u.meta, "rejected");
	rj->n[i] = v ? strtoull(v, NULL, 10) : 0;
	read_why(proto_meta_get(&rj->msg.u.meta, "rejected_why"), rj->why[i]);
}

/* The MPI ranks among t's processes (a process with a rank in a stream
 * that is not a launcher's: an env or shell image before the rank's own
 * shares its pid and rank), the singletons among them, the launchers'
 * processes (every stream of theirs a launcher's). */
static void count_ranks(struct proto_trace *t, struct mgr_summary *s)
{
	size_t n = proto_trace_nstreams(t);

	for (size_t i = 0; i < n; i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);
		int rank = 0, single = 0, all_launcher = 1;
		size_t j;

		for (j = 0; j < i; j++) {	/* streams: hundreds at most */
			const struct proto_stream *o = proto_trace_stream(t, j);

			if (o->pid == st->pid && !strcmp(o->host, st->host))
				break;
		}
		if (j < i)
			continue;	/* the process was counted */
		for (j = i; j < n; j++) {
			const struct proto_stream *o = proto_trace_stream(t, j);
			int launcher = proto_stream_meta(o, "launcher") != NULL;
			const char *size = proto_stream_meta(o, "size");

			if (o->pid != st->pid || strcmp(o->host, st->host))
				continue;
			all_launcher &= launcher;
			if (!launcher && o->rank >= 0) {
				rank = 1;
				single = size && !strcmp(size, "1");
			}
		}
		s->ranks += rank;
		s->singletons += single;
		s->launchers += all_launcher;
	}
}

int mgr_summary_read(const char *dir, struct mgr_summary *s)
{
	struct rejects *rj = calloc(1, sizeof(*rj));
	struct proto_trace_event te;
	struct proto_trace *t;
	struct mgr_post *post;
	int tty = isatty(STDERR_FILENO), rc, shown = 0;
	double t0 = now_s(), last = t0 - 1;	/* the first one at once */
	uint64_t total = tty ? index_total(dir) : 0;

	memset(s, 0, sizeof(*s));
	if (!(t = proto_trace_open(dir, &rc))) {
		free(rj);
		return rc;
	}
	if (rj)
		proto_trace_on_frame(t, on_frame, rj);
	while ((rc = proto_trace_next(t, &te)) == 1) {
		s->events++;
		if (!tty || total == 0 || s->events % PROGRESS_EVERY)
			continue;
		if (now_s() - last >= PROGRESS_MS / 1e3) {
			last = now_s();
			progress(s->events, total, t0);
			shown = 1;
		}
	}
	if (shown)
		fputs("\r\033[K", stderr);
	s->streams = proto_trace_nstreams(t);
	for (size_t i = 0; i < s->streams; i++) {
		const struct proto_stream *st = proto_trace_stream(t, i);
		size_t j;

		{	/* not stored, the disk full (collector/root.c) */
			char k[96];
			const char *v;
			uint64_t nse, nsb;

			snprintf(k, sizeof(k), "collector.nospace_events.%016"
				 PRIx64, st->id);
			v = proto_trace_meta(t, k);
			nse = v ? strtoull(v, NULL, 10) : 0;
			snprintf(k, sizeof(k), "collector.nospace_batches.%016"
				 PRIx64, st->id);
			v = proto_trace_meta(t, k);
			nsb = v ? strtoull(v, NULL, 10) : 0;
			s->nospace += nse;
			s->lost += nse;
			s->gaps += st->gap_batches > nsb ? st->gap_batches - nsb : 0;
		}
		s->lost += st->lost_events;
		s->cut += !st->ended;
		for (j = 0; j < i; j++) {	/* streams: hundreds at most */
			const struct proto_stream *o = proto_trace_stream(t, j);

			if (o->pid == st->pid && !strcmp(o->host, st->host))
				break;
		}
		s->processes += j == i;
	}
	count_ranks(t, s);
	s->corrupt = proto_trace_stats(t)->bad_batches;
	if (proto_trace_meta(t, "collector.nospace"))
		snprintf(s->nospace_dir, sizeof(s->nospace_dir), "%s",
			 proto_trace_meta(t, "collector.nospace"));
	uint64_t why[WHY_N] = {0};

	for (size_t i = 0; rj && i < rj->count; i++) {
		s->rejected += rj->n[i];
		for (int k = 0; k < WHY_N; k++)
			why[k] += rj->why[i][k];
	}
	for (int k = 0, len = 0; k < WHY_N; k++)
		if (why[k] && len < (int)sizeof(s->rejected_why))
			len += snprintf(s->rejected_why + len,
					sizeof(s->rejected_why) - (size_t)len,
					"%s%s %" PRIu64, len ? ", " : "",
					why_said[k], why[k]);
	free(rj);
	proto_trace_close(t);
	if (rc < 0)
		return rc;
	post = mgr_post_build(dir, &rc);
	mgr_post_quality(post, s->clock, sizeof(s->clock));
	mgr_post_free(post);
	return 0;
}

void mgr_summary_print(const char *dir, const struct mgr_summary *s,
		       const char *network, FILE *out)
{
	fprintf(out, "tapestry: %" PRIu64 " events from %zu process%s", s->events,
		s->processes, s->processes == 1 ? "" : "es");
	if (s->ranks > 1 && s->singletons == s->ranks)
		fprintf(out, " (%zu MPI processes, each a singleton: its own "
			"MPI_COMM_WORLD of 1", s->ranks);
	else if (s->ranks)
		fprintf(out, " (%zu MPI rank%s", s->ranks, s->ranks == 1 ? "" : "s");
	if (s->launchers)
		fprintf(out, "%s%zu launcher process%s", s->ranks ? "; " : " (",
			s->launchers, s->launchers == 1 ? "" : "es");
	if (s->streams != s->processes)
		fprintf(out, "%s%zu streams: an exec starts one",
			s->ranks || s->launchers ? "; " : " (", s->streams);
	if (s->ranks || s->launchers || s->streams != s->processes)
		fputc(')', out);
	if (s->lost || s->gaps || s->corrupt)
		fprintf(out, ", %" PRIu64 " lost, %" PRIu64 " batches missing, %"
			PRIu64 " corrupt", s->lost, s->gaps, s->corrupt);
	else if (!s->rejected && !s->cut)
		fputs(", none lost", out);
	if (s->cut)
		fprintf(out, ", %zu stream%s cut short (killed before %s end: %s last"
			" events are lost, tapestry report counts them)", s->cut,
			s->cut == 1 ? "" : "s", s->cut == 1 ? "its" : "their",
			s->cut == 1 ? "its" : "their");
	/* a refused sensor's events are in the job when it left them in
	 * the spool (run and launch give it one), else not counted */
	if (s->rejected)
		fprintf(out, ", %" PRIu64 " connection%s refused by the collectors"
			" (%s: a refused process's events are in the job only from "
			"the spool)", s->rejected, s->rejected == 1 ? "" : "s",
			s->rejected_why[0] ? s->rejected_why : "reason not said");
	fprintf(out, "; clock: %s\n", s->clock);
	if (s->nospace_dir[0])
		fprintf(out, "tapestry: no space left on device: %s: %" PRIu64
			" events could not be stored (counted, in the lost above)\n",
			s->nospace_dir, s->nospace);
	if (network && *network)
		fprintf(out, "tapestry: network %s\n", network);
	fprintf(out, "tapestry: job directory %s written (collector logs in "
		"%s/logs)\n", dir, dir);
	fprintf(out, "tapestry: next: tapestry report %s; tapestry export -f "
		"chrome -o trace.json %s\n", dir, dir);
}

int mgr_take_spool(const char *dir, const char *spool)
{
	struct proto_spool_report rep;
	int rc = proto_jobdir_spool_ingest(dir, spool, &rep);

	if (rep.files)
		fprintf(stderr, "tapestry: %" PRIu64 " events in %" PRIu64
			" batches of %" PRIu64 " process%s that reached no "
			"collector taken from %s\n", rep.events, rep.batches,
			rep.files, rep.files == 1 ? "" : "es", spool);
	if (rep.bad_files)
		mgr_err("%" PRIu64 " damaged spool files (the first: %s): their "
			"good frames are in the job", rep.bad_files,
			rep.first_problem);
	if (rc)
		mgr_err("%s: cannot take the spool %s: %s", dir, spool,
			rep.first_problem[0] ? rep.first_problem :
			proto_strerror(rc));
	else
		rmdir(spool);	/* empty: the job does not keep it */
	return rc;
}
