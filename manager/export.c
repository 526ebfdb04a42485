/*
 * manager/export.c - `tapestry export`: post-mortem conversion of a job
 * directory. Formats: csv (one line per event, the columns of MISSION.md).
 *
 * Output is written to OUT.tmp and renamed into place only when complete, so
 * a failed export never leaves a half-written OUT behind.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "proto/error.h"

static void help(FILE *out)
{
	fputs("usage: tapestry export -f FORMAT [-o OUT] DIR\n"
	      "  -f, --format FORMAT  csv\n"
	      "  -o, --output OUT     output file (default: DIR/trace.FORMAT; '-' = stdout)\n"
	      "\ncsv columns: rank,tid,event,start_ns,end_ns,bytes,peer,tag,fd,path,pid,result\n"
	      "  times in ns from the job start (the earliest event); empty fields where\n"
	      "  the event has no such value.\n",
	      out);
}

/* The earliest start time of the job: a first pass over the trace. */
static int job_start(const char *dir, uint64_t *start)
{
	struct proto_trace *t = mgr_trace_open(dir);
	struct proto_trace_event te;
	int rc;

	if (!t)
		return -1;
	*start = UINT64_MAX;
	while ((rc = proto_trace_next(t, &te)) == 1)
		if (te.ev->t_start < *start)
			*start = te.ev->t_start;
	proto_trace_close(t);
	if (*start == UINT64_MAX)
		*start = 0;
	return rc;
}

static void opt_i64(FILE *out, const struct proto_event *ev, enum proto_field f)
{
	int i = proto_ev_arg(ev->type, f);

	if (i >= 0)
		fprintf(out, "%" PRId64, ev->arg[i]);
}

static int export_csv(const char *dir, FILE *out, uint64_t *nevents)
{
	uint64_t start;
	struct proto_trace *t;
	struct proto_trace_event te;
	int rc;

	if (job_start(dir, &start) < 0)
		return -1;
	if (!(t = mgr_trace_open(dir)))
		return -1;
	fputs("rank,tid,event,start_ns,end_ns,bytes,peer,tag,fd,path,pid,result\n",
	      out);
	while ((rc = proto_trace_next(t, &te)) == 1) {
		const struct proto_event *ev = te.ev;
		const struct proto_ev_info *info = proto_ev_info(ev->type);
		int pi = proto_ev_arg(ev->type, PROTO_F_path);

		if (te.stream->rank >= 0)
			fprintf(out, "%d", te.stream->rank);
		fprintf(out, ",%u,", ev->tid);
		mgr_csv_field(out, info ? info->name : "unknown");
		fprintf(out, ",%" PRId64 ",%" PRId64 ",",
			(int64_t)(ev->t_start - start), (int64_t)(ev->t_end - start));
		opt_i64(out, ev, PROTO_F_bytes);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_peer);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_tag);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_fd);
		fputc(',', out);
		if (pi >= 0 && ev->arg[pi] > 0)
			mgr_csv_field(out, proto_trace_string(t, te.stream->id,
							      ev->tid, ev->arg[pi]));
		fputc(',', out);
		if (te.stream->pid >= 0)
			fprintf(out, "%" PRId64, te.stream->pid);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_result);
		fputc('\n', out);
		(*nevents)++;
	}
	const struct proto_trace_stats *st = proto_trace_stats(t);
	if (st->bad_batches)
		mgr_err("%s: %" PRIu64 " corrupt batches skipped", dir,
			st->bad_batches);
	const struct proto_jobdir_report *r = proto_trace_report(t);
	if (r && r->skipped_bytes)
		mgr_err("%s: %" PRIu64 " bytes of damaged segments skipped (%s)",
			dir, r->skipped_bytes, r->first_problem);
	proto_trace_close(t);
	if (rc < 0)
		mgr_err("%s: read error: %s", dir, proto_strerror(rc));
	return rc < 0 ? -1 : 0;
}

int mgr_cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *format = NULL, *output = NULL;
	char *def = NULL, *tmp = NULL;
	int c, status = 1;
	uint64_t n = 0;
	FILE *out = NULL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'h': help(stdout); return 0;
		default: help(stderr); return 2;
		}
	}
	if (!format || optind != argc - 1) {
		mgr_err("export needs -f FORMAT and one job directory");
		help(stderr);
		return 2;
	}
	if (strcmp(format, "csv") != 0) {
		mgr_err("unknown export format '%s' (available: csv)", format);
		return 2;
	}
	const char *dir = argv[optind];
	if (!output) {
		if (asprintf(&def, "%s/trace.%s", dir, format) < 0)
			return 1;
		output = def;
	}
	if (strcmp(output, "-") == 0) {
		out = stdout;
	} else {
		if (asprintf(&tmp, "%s.tmp", output) < 0)
			goto done;
		if (!(out = fopen(tmp, "w"))) {
			mgr_err("%s: cannot write: %m", tmp);
			goto done;
		}
	}
	int rc = export_csv(dir, out, &n);
	if (out != stdout) {
		if (fclose(out) != 0 && rc == 0) {
			mgr_err("%s: write failed: %m", tmp);
			rc = -1;
		}
		if (rc == 0 && rename(tmp, output) != 0) {
			mgr_err("%s: cannot rename into place: %m", output);
			rc = -1;
		}
		if (rc != 0) {
			unlink(tmp);
			mgr_err("export failed: %s not written", output);
		}
	} else if (fflush(stdout) != 0) {
		rc = -1;
	}
	if (rc == 0) {
		if (out != stdout)
			fprintf(stderr, "tapestry: wrote %" PRIu64 " events to %s\n",
				n, output);
		status = 0;
	}
done:
	free(def);
	free(tmp);
	return status;
}
