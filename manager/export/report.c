/*
 * manager/export/report.c - `tapestry report`: what a job directory holds.
 *
 * Streams (one per traced process) with their host, pid, rank and losses;
 * events per type and per rank; what the reader had to skip. Text by
 * default, XML with --xml (for scripts).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manager/mgr.h"
#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/perturb.h"
#include "manager/post/post.h"
#include "proto/error.h"
#include "proto/msg.h"

#define MAX_RANKS 4096		/* per-rank columns; others are summed as "other" */

struct tally {
	uint64_t total;
	uint64_t *by_rank;	/* MAX_RANKS + 1 (last: no rank or over max) */
};

#define MAX_NODES 1024

/* The last STATS report of each collector, as stored by the root. */
struct node_stats {
	uint64_t id;
	char name[64], role[16];
	uint64_t events_in, drops, filtered, spilled, reconnects, rejected;
};

struct nodes {
	struct node_stats n[MAX_NODES];
	size_t count;
	struct proto_msg *msg;
};

static uint64_t kv_u64(const struct proto_meta *m, const char *key)
{
	const char *v = proto_meta_get(m, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static void kv_str(const struct proto_meta *m, const char *key, char *out,
		   size_t len)
{
	const char *v = proto_meta_get(m, key);

	if (v)
		snprintf(out, len, "%s", v);
}

/* How the MPI sensor measured this stream's computation volumes (META
 * compute_method, sensor-mpi.md): instruction counts do not depend on the
 * run's timing, CPU time does. NULL when the stream says nothing. */
static const char *volume_method(const struct proto_stream *s)
{
	const char *m = proto_stream_meta(s, "compute_method");

	if (!m)
		return NULL;
	return !strcmp(m, "1") ? "instructions" : !strcmp(m, "0") ? "cpu-time" : "unknown";
}

static void on_stats(void *arg, const struct proto_frame *f)
{
	struct nodes *ns = arg;
	struct node_stats *n = NULL;

	if (f->type != PROTO_MSG_STATS || !ns->msg ||
	    proto_msg_decode(f, ns->msg) != 0)
		return;
	const struct proto_meta *m = &ns->msg->u.meta;
	for (size_t i = 0; i < ns->count; i++)
		if (ns->n[i].id == m->id)
			n = &ns->n[i];
	if (!n) {
		if (ns->count == MAX_NODES)
			return;
		n = &ns->n[ns->count++];
		memset(n, 0, sizeof(*n));
		n->id = m->id;
	}
	kv_str(m, "name", n->name, sizeof(n->name));
	kv_str(m, "role", n->role, sizeof(n->role));
	n->events_in = kv_u64(m, "events_in");
	n->drops = kv_u64(m, "drops");
	n->filtered = kv_u64(m, "filtered");
	n->spilled = kv_u64(m, "spilled_bytes");
	n->reconnects = kv_u64(m, "reconnects");
	n->rejected = kv_u64(m, "rejected");
}

static void help(FILE *out)
{
	fputs("usage: tapestry report [--xml] DIR\n"
	      "  Events per type and rank, streams (traced processes) with their\n"
	      "  losses, and what was skipped as damaged.\n"
	      "  --xml   machine-readable output\n",
	      out);
}

static void xml_attr(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if ((unsigned char)*s < 0x20)
				fprintf(out, "&#%d;", *s);
			else
				fputc(*s, out);
		}
	}
}

/* The test of a communication model on the receives whose message came
 * late ([004] 6.3: mgr_perturb_model_check), as text or XML. */
#define CHECK_SHOWN 4
static void model_check(const struct mgr_perturb *pert, int xml, const char *what,
			const char *label, double lat, double npb)
{
	struct mgr_model_check c[CHECK_SHOWN];
	size_t rejected;
	size_t n = mgr_perturb_model_check(pert, lat, npb, c, CHECK_SHOWN, &rejected);
	size_t shown = n < CHECK_SHOWN ? n : CHECK_SHOWN;
	int accepted = !rejected;	/* over every size tested, shown or not */
	if (xml) {
		printf("  <model_check model=\"%s\" latency_ns=\"%.1f\" ns_per_byte=\"%.6f\""
		       " sizes_tested=\"%zu\" accepted=\"%d\">\n", what, lat, npb, n,
		       n ? accepted : 0);
		for (size_t i = 0; i < shown; i++)
			printf("    <size bytes=\"%" PRId64 "\" n=\"%" PRIu64 "\" model_ns=\"%.1f\""
			       " error_mean_ns=\"%.1f\" error_sd_ns=\"%.1f\" t=\"%.3f\""
			       " critical=\"%.3f\" accept=\"%d\" measured_min_ns=\"%.1f\""
			       " measured_mean_ns=\"%.1f\" measured_max_ns=\"%.1f\"/>\n",
			       c[i].bytes, c[i].n, c[i].model_ns, c[i].mean_ns, c[i].sd_ns, c[i].t,
			       c[i].critical, c[i].accept, c[i].min_ns, c[i].avg_ns, c[i].max_ns);
		printf("  </model_check>\n");
		return;
	}
	printf("                 %s (%.0f ns + %.4f ns/byte): ", label, lat, npb);
	if (!n) {
		printf("no message size with %d late messages or more: not tested\n",
		       MGR_CHECK_MIN);
		return;
	}
	printf("%s\n", accepted ? "accepted" : "rejected");
	for (size_t i = 0; i < shown; i++)
		printf("                   %" PRId64 " B: %" PRIu64 " late messages, measured %.0f /"
		       " %.0f / %.0f ns (min / mean / max), model %.0f ns; error %+.1f +- %.1f ns,"
		       " t %+.2f (critical %.2f): %s\n", c[i].bytes, c[i].n, c[i].min_ns,
		       c[i].avg_ns, c[i].max_ns, c[i].model_ns, c[i].mean_ns, c[i].sd_ns,
		       c[i].t, c[i].critical, c[i].accept ? "ACCEPT" : "REJECT");
	if (n > shown)
		printf("                   (%zu more sizes tested, not shown: see --xml for the"
		       " first %d)\n", n - shown, CHECK_SHOWN);
}

/* Both models' tests: the one fitted on the trace, and the launch's
 * ping-pong figures when meta.xml has them. */
static void model_checks(const struct mgr_perturb *pert, struct proto_trace *t, int xml)
{
	const struct mgr_perturb_stats *ps = mgr_perturb_stats(pert);
	const char *l = proto_trace_meta(t, "net_latency_ns");
	const char *b = proto_trace_meta(t, "net_bandwidth_Bps");
	double lat = l ? atof(l) : 0, bw = b ? atof(b) : 0;

	if (!ps->model_points)
		return;
	if (!xml)
		printf("               model check ([004] 6.3): Student's t of the errors on the"
		       " receives whose message came late,\n"
		       "               per size with %d of them or more, 5 %% two-sided; the model"
		       " is accepted if it is for every size\n", MGR_CHECK_MIN);
	model_check(pert, xml, "fitted", "fitted on the trace", ps->model_latency_ns,
		    ps->model_ns_per_byte);
	if (lat > 0 && bw > 0)
		model_check(pert, xml, "pingpong", "the launch's ping-pong", lat, 1e9 / bw);
}

int mgr_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"xml", no_argument, NULL, 'x'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, xml = 0, rc, maxrank = -1, status = 1;
	struct tally tally[PROTO_EV__COUNT];
	struct proto_trace *t;
	struct proto_trace_event te;

	optind = 1;
	while ((c = getopt_long(argc, argv, "xh", opts, NULL)) != -1) {
		switch (c) {
		case 'x': xml = 1; break;
		case 'h': help(stdout); return 0;
		default: help(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		mgr_err("report needs one job directory");
		help(stderr);
		return 2;
	}
	const char *dir = argv[optind];
	if (!(t = mgr_trace_open(dir)))
		return 1;
	int prc;
	/* the post-processing: clock tree, causality repair, perturbation */
	struct mgr_events *me = mgr_events_open(dir, &prc);
	if (!me)
		mgr_err("%s: post-processing failed (%s)", dir, proto_strerror(prc));
	const struct mgr_post *post = me ? mgr_events_post(me) : NULL;
	const struct mgr_causality *clc = me ? mgr_events_causality(me) : NULL;
	const struct mgr_perturb *pert = me ? mgr_events_perturb(me) : NULL;
	/* the span of the program's own events, traced and corrected: over
	 * the MPI ranks' streams when there are any (a launcher's streams
	 * cover the whole job, uncorrected), else over every stream */
	int64_t span_raw = 0, span_cor = 0;
	int span_ranks = 0;
	if (me) {
		struct mgr_event ev;
		int64_t r0[2] = {INT64_MAX, INT64_MAX}, r1[2] = {INT64_MIN, INT64_MIN};
		int64_t c0[2] = {INT64_MAX, INT64_MAX}, c1[2] = {INT64_MIN, INT64_MIN};

		while (mgr_events_next(me, &ev) == 1) {
			const struct proto_ev_info *info = proto_ev_info(ev.ev->type);

			if (!info || info->category == PROTO_CAT_TRACER)
				continue;
			for (int k = 0; k < 2; k++) {
				if (k == 1 && ev.stream->rank < 0)
					continue;
				if (ev.rstart < r0[k]) r0[k] = ev.rstart;
				if (ev.rend > r1[k]) r1[k] = ev.rend;
				if (ev.start < c0[k]) c0[k] = ev.start;
				if (ev.end > c1[k]) c1[k] = ev.end;
			}
		}
		int k = r1[1] > r0[1] ? 1 : 0;
		span_ranks = k;
		if (r1[k] > r0[k]) {
			span_raw = r1[k] - r0[k];
			span_cor = c1[k] - c0[k];
		}
	}
	const struct mgr_causality_stats *cs = clc ? mgr_causality_stats(clc) : NULL;
	const struct mgr_comms_stats *cms = clc ? mgr_comms_stats(mgr_causality_comms(clc)) : NULL;
	memset(tally, 0, sizeof(tally));
	struct nodes *nodes = calloc(1, sizeof(*nodes));
	if (nodes && (nodes->msg = malloc(sizeof(*nodes->msg))))
		proto_trace_on_frame(t, on_stats, nodes);
	while ((rc = proto_trace_next(t, &te)) == 1) {
		struct tally *ty = &tally[te.ev->type];
		int r = te.stream->rank;

		if (!ty->by_rank &&
		    !(ty->by_rank = calloc(MAX_RANKS + 1, sizeof(uint64_t)))) {
			mgr_err("out of memory");
			goto out;
		}
		ty->total++;
		if (r < 0 || r >= MAX_RANKS)
			r = MAX_RANKS;
		else if (r > maxrank)
			maxrank = r;
		ty->by_rank[r]++;
	}
	if (rc < 0) {
		mgr_err("%s: read error: %s", dir, proto_strerror(rc));
		goto out;
	}

	const struct proto_trace_stats *st = proto_trace_stats(t);
	const struct proto_jobdir_report *jr = proto_trace_report(t);
	size_t ns = proto_trace_nstreams(t);
	uint64_t lost = 0, gaps = 0;

	for (size_t i = 0; i < ns; i++) {
		lost += proto_trace_stream(t, i)->lost_events;
		gaps += proto_trace_stream(t, i)->gap_batches;
	}
	if (xml) {
		printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<report dir=\"");
		xml_attr(stdout, dir);
		printf("\" events=\"%" PRIu64 "\" batches=\"%" PRIu64
		       "\" streams=\"%zu\" lost_events=\"%" PRIu64
		       "\" gap_batches=\"%" PRIu64 "\" corrupt_batches=\"%" PRIu64
		       "\" duplicate_batches=\"%" PRIu64 "\" skipped_bytes=\"%" PRIu64
		       "\">\n",
		       st->events, st->batches, ns, lost, gaps, st->bad_batches,
		       st->dup_batches, jr ? jr->skipped_bytes : 0);
		for (size_t i = 0; i < ns; i++) {
			const struct proto_stream *s = proto_trace_stream(t, i);

			printf("  <stream id=\"%016" PRIx64 "\" rank=\"%d\" pid=\"%" PRId64
			       "\" host=\"", s->id, s->rank, s->pid);
			xml_attr(stdout, s->host);
			printf("\" exe=\"");
			xml_attr(stdout, s->exe);
			printf("\" events=\"%" PRIu64 "\" batches=\"%" PRIu64
			       "\" lost_events=\"%" PRIu64 "\" gap_batches=\"%" PRIu64
			       "\" ended=\"%d\"", s->events, s->batches,
			       s->lost_events, s->gap_batches, s->ended);
			if (volume_method(s))
				printf(" compute_volumes=\"%s\"", volume_method(s));
			printf("/>\n");
		}
		for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
			if (!tally[ty].total)
				continue;
			printf("  <events type=\"%s\" count=\"%" PRIu64 "\">",
			       proto_ev_info(ty)->name, tally[ty].total);
			for (int r = 0; r <= maxrank; r++)
				if (tally[ty].by_rank[r])
					printf("<rank n=\"%d\" count=\"%" PRIu64 "\"/>", r,
					       tally[ty].by_rank[r]);
			printf("</events>\n");
		}
		if (post)
			mgr_post_report(post, stdout, 1);
		for (size_t i = 0; nodes && i < nodes->count; i++) {
			const struct node_stats *n = &nodes->n[i];

			printf("  <collector id=\"%016" PRIx64 "\" name=\"", n->id);
			xml_attr(stdout, n->name);
			printf("\" role=\"");
			xml_attr(stdout, n->role);
			printf("\" events_in=\"%" PRIu64 "\" drops=\"%" PRIu64 "\" filtered=\"%"
			       PRIu64 "\" spilled_bytes=\"%" PRIu64 "\" reconnects=\"%" PRIu64
			       "\" rejected=\"%" PRIu64 "\"/>\n", n->events_in, n->drops,
			       n->filtered, n->spilled, n->reconnects, n->rejected);
		}
		if (pert) {
			const struct mgr_perturb_stats *ps = mgr_perturb_stats(pert);
			printf("  <perturbation span_traced_ns=\"%" PRId64 "\" span_corrected_ns=\"%" PRId64
			       "\" removed_ns=\"%" PRId64 "\" alpha_ns=\"%.1f\" receives=\"%" PRIu64
			       "\" receives_arrived=\"%" PRIu64 "\" receives_waited=\"%" PRIu64
			       "\" receives_model=\"%" PRIu64 "\" receives_tail=\"%" PRIu64
			       "\" collectives=\"%" PRIu64
			       "\" collectives_sub=\"%" PRIu64 "\" collectives_tail=\"%" PRIu64
			       "\" measured_events=\"%" PRIu64 "\" measured_ns=\"%" PRId64
			       "\" probe_ns=\"%" PRId64 "\" cold_events=\"%" PRIu64
			       "\" cold_ns=\"%" PRId64 "\" model_points=\"%" PRIu64
			       "\" model_kept=\"%" PRIu64 "\" model_latency_ns=\"%.1f\""
			       " model_ns_per_byte=\"%.4f\" model_resid_sd_ns=\"%.1f\" model_t=\"%.2f\""
			       " waits=\"%" PRIu64 "\" wait_ns=\"%" PRId64 "\" uncalibrated_streams=\"%"
			       PRIu64 "\" uncalibrated_events=\"%" PRIu64 "\"/>\n",
			       span_raw, span_cor, ps->removed_ns, ps->alpha_ns, ps->receives,
			       ps->receives_arrived, ps->receives_waited, ps->receives_model,
			       ps->receives_tail, ps->collectives, ps->collectives_sub,
			       ps->collectives_tail, ps->measured_events,
			       ps->measured_ns,
			       ps->probe_ns, ps->cold_events, ps->cold_ns, ps->model_points,
			       ps->model_kept, ps->model_latency_ns,
			       ps->model_ns_per_byte, ps->model_resid_sd_ns, ps->model_t_slope,
			       ps->waits, ps->wait_ns, ps->uncalibrated_streams,
			       ps->uncalibrated_events);
			model_checks(pert, t, 1);
		}
		if (cs)
			printf("  <causality messages=\"%" PRIu64 "\" unmatched_sends=\"%" PRIu64
			       "\" unmatched_receives=\"%" PRIu64 "\" violations_before=\"%" PRIu64
			       "\" violations_after=\"%" PRIu64 "\" receives_moved=\"%" PRIu64
			       "\" max_shift_ns=\"%" PRId64 "\" max_interval_change_ns=\"%" PRId64
			       "\" min_latency_ns=\"%" PRId64 "\" communicators_named=\"%" PRIu64
			       "\" communicators_unnamed=\"%" PRIu64 "\" intercommunicators=\"%"
			       PRIu64 "\" collectives=\"%" PRIu64
			       "\" coll_violations_before=\"%" PRIu64 "\" coll_violations_after=\"%"
			       PRIu64 "\" collectives_moved=\"%" PRIu64 "\"/>\n", cs->matched,
			       cs->unmatched_sends, cs->unmatched_receives,
			       cs->violations_before, cs->violations_after, cs->jumps,
			       cs->max_shift_ns, cs->max_interval_change_ns,
			       cs->min_latency_ns, cms->named, cms->unnamed, cms->inter,
			       cs->collectives,
			       cs->coll_violations_before, cs->coll_violations_after,
			       cs->coll_moved);
		printf("</report>\n");
	} else {
		printf("job directory  %s\n", dir);
		printf("events         %" PRIu64 " in %" PRIu64 " batches, %zu streams\n",
		       st->events, st->batches, ns);
		printf("losses         %" PRIu64 " events counted lost, %" PRIu64
		       " batches missing, %" PRIu64 " corrupt batches, %" PRIu64
		       " damaged bytes skipped\n", lost, gaps, st->bad_batches,
		       jr ? jr->skipped_bytes : 0);
		if (jr && jr->first_problem[0])
			printf("               first problem: %s\n", jr->first_problem);
		printf("\nstreams\n");
		for (size_t i = 0; i < ns; i++) {
			const struct proto_stream *s = proto_trace_stream(t, i);

			printf("  %016" PRIx64 "  host %s pid %" PRId64 " rank %d  %s\n"
			       "                    events %" PRIu64 ", lost %" PRIu64
			       ", missing batches %" PRIu64 ", %s\n",
			       s->id, s->host[0] ? s->host : "?", s->pid, s->rank,
			       s->exe[0] ? s->exe : "?", s->events, s->lost_events,
			       s->gap_batches, s->ended ? "ended" : "no end seen");
			if (volume_method(s))
				printf("                    computation volumes from %s\n",
				       volume_method(s));
		}
		printf("\nevents by type%s\n", maxrank >= 0 ? " (total, then per rank)" : "");
		for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
			if (!tally[ty].total)
				continue;
			printf("  %-20s %12" PRIu64, proto_ev_info(ty)->name,
			       tally[ty].total);
			for (int r = 0; r <= maxrank && r < 16; r++)
				printf(" %8" PRIu64, tally[ty].by_rank[r]);
			printf("\n");
		}
		if (nodes && nodes->count) {
			printf("\ncollectors (last report of each)\n");
			for (size_t i = 0; i < nodes->count; i++) {
				const struct node_stats *n = &nodes->n[i];

				printf("  %016" PRIx64 "  %-10s %-9s events in %" PRIu64
				       ", dropped %" PRIu64 ", filtered %" PRIu64
				       ", spilled now %" PRIu64 " bytes, reconnects %" PRIu64
				       ", rejected connections %" PRIu64 "\n", n->id,
				       n->name[0] ? n->name : "?", n->role, n->events_in,
				       n->drops, n->filtered, n->spilled, n->reconnects,
				       n->rejected);
			}
		}
		if (post)
			mgr_post_report(post, stdout, 0);
		if (pert) {
			const struct mgr_perturb_stats *ps = mgr_perturb_stats(pert);
			printf("\nperturbation   %s %.6f s, corrected %.6f s (%.2f%% removed);"
			       " tracer cost %.1f ns per event, %" PRId64 " ns in all\n"
			       "               receives: %" PRIu64 " (%" PRIu64 " had arrived, %" PRIu64
			       " waited, %" PRIu64 " needed the model, %" PRIu64 " of them waited"
			       " longer than the model's tail), %" PRIu64 " collectives (%"
			       PRIu64 " on other communicators than MPI_COMM_WORLD; %" PRIu64
			       " members took their group's median, in its tail)\n",
			       span_ranks ? "ranks' span" : "traced span",
			       (double)span_raw / 1e9, (double)span_cor / 1e9,
			       span_raw ? 100.0 * (double)(span_raw - span_cor) / (double)span_raw : 0,
			       ps->alpha_ns, ps->removed_ns, ps->receives, ps->receives_arrived,
			       ps->receives_waited, ps->receives_model, ps->receives_tail,
			       ps->collectives, ps->collectives_sub, ps->collectives_tail);
			if (ps->measured_events || ps->probe_ns)
				printf("               MPI sensor's accounting measured around %" PRIu64
				       " MPI events: %" PRId64 " ns; arrived probes %" PRId64 " ns;"
				       " cold starts of %" PRIu64 " calls: %" PRId64 " ns\n",
				       ps->measured_events, ps->measured_ns, ps->probe_ns,
				       ps->cold_events, ps->cold_ns);
			if (ps->waits)
				printf("               waits for room in the rings (post-mortem): %" PRIu64
				       ", %" PRId64 " ns\n", ps->waits, ps->wait_ns);
			if (ps->uncalibrated_streams)
				printf("               streams without a calibration (no tracer cost"
				       " removed): %" PRIu64 ", %" PRIu64 " events\n",
				       ps->uncalibrated_streams, ps->uncalibrated_events);
			if (ps->model_points)
				printf("               communication model on %" PRIu64 " of %" PRIu64
				       " waiting receives (the tail beyond 3 robust sd left out):"
				       " latency %.0f ns, %.4f ns/byte, residual sd %.0f ns, Student t of"
				       " the size term %.2f\n", ps->model_kept, ps->model_points,
				       ps->model_latency_ns, ps->model_ns_per_byte,
				       ps->model_resid_sd_ns, ps->model_t_slope);
			model_checks(pert, t, 0);
		}
		if (cs)
			printf("\ncausality      %" PRIu64 " messages matched (%" PRIu64
			       " sends, %" PRIu64 " receives unmatched); violations %" PRIu64
			       " before repair, %" PRIu64 " after; %" PRIu64
			       " receives moved, largest shift %" PRId64
			       " ns, largest change of a local interval %" PRId64 " ns\n"
			       "               collectives: %" PRIu64 " (on MPI_COMM_WORLD and named"
			       " communicators); exits before an awaited entry %" PRIu64
			       " before repair, %" PRIu64 " after; %" PRIu64 " exits moved\n"
			       "               communicators: %" PRIu64 " named job-wide (made by"
			       " a traced constructor; %" PRIu64 " of them intercommunicators),"
			       " %" PRIu64 " not\n",
			       cs->matched, cs->unmatched_sends, cs->unmatched_receives,
			       cs->violations_before, cs->violations_after, cs->jumps,
			       cs->max_shift_ns, cs->max_interval_change_ns, cs->collectives,
			       cs->coll_violations_before, cs->coll_violations_after,
			       cs->coll_moved, cms->named, cms->inter, cms->unnamed);
	}
	status = 0;
out:
	for (unsigned ty = 0; ty < PROTO_EV__COUNT; ty++)
		free(tally[ty].by_rank);
	proto_trace_close(t);
	mgr_events_close(me);
	if (nodes)
		free(nodes->msg);
	free(nodes);
	return status;
}
