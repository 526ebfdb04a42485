/*
 * manager/export/export_profile.c - the profile (manager/post/profile.h)
 * printed: the short text at the top of `tapestry report`, the <profile>
 * element of `report --xml` (which the page reads), and `tapestry export
 * -f profile`, a directory of CSV tables, one per section. One data
 * structure, gathered once; each form prints the same figures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/profile.h"
#include "proto/error.h"

#define TOP_CALLS 20
#define TOP_CELLS 10
#define TOP_FILES 10
#define TOP_COLLS 10
#define SHOWN_RANKS 32

static int64_t span_of(const struct mgr_prof_rank *r)
{
	return r->t1 > r->t0 ? r->t1 - r->t0 : 0;
}

static const char *call_name(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	return info ? info->name : "unknown";
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- text ----------------------------------------------------------------- */

static void text_ranks(FILE *out, const struct mgr_profile *p)
{
	size_t shown = p->nranks < SHOWN_RANKS ? p->nranks : SHOWN_RANKS;

	fprintf(out, "  %5s %11s %11s %6s %11s %6s %11s %6s  %s\n", p->mpi ? "rank" : "proc",
		"span s", "MPI s", "%", "I/O s", "%", "compute s", "%", "pid program");
	for (size_t i = 0; i < shown; i++) {
		const struct mgr_prof_rank *r = &p->ranks[i];
		int64_t sp = span_of(r), c = mgr_profile_compute_ns(r);

		fprintf(out, "  %5d %11.6f %11.6f %6.2f %11.6f %6.2f %11.6f %6.2f  %" PRId64
			" %s\n", r->rank, (double)sp / 1e9, (double)r->mpi_ns / 1e9,
			pct(r->mpi_ns, sp), (double)r->io_ns / 1e9, pct(r->io_ns, sp),
			(double)c / 1e9, pct(c, sp), r->pid, r->exe[0] ? r->exe : "?");
	}
	if (p->nranks > shown)
		fprintf(out, "  (%zu more: report --xml, export -f profile)\n", p->nranks - shown);
}

static void text_calls(FILE *out, const struct mgr_profile *p)
{
	size_t shown = p->ntypes < TOP_CALLS ? p->ntypes : TOP_CALLS;
	int64_t spans = 0;

	if (!shown)
		return;
	for (size_t i = 0; i < p->nranks; i++)
		spans = mgr_sat_add(spans, span_of(&p->ranks[i]));
	fprintf(out, "  top calls by time (%zu of %zu; summed over the %s; %%span: of the"
		" %s' spans added up; imbalance: busiest %s / mean)\n", shown, p->ntypes,
		p->mpi ? "ranks" : "processes", p->mpi ? "ranks" : "processes",
		p->mpi ? "rank" : "process");
	fprintf(out, "    %-24s %10s %12s %6s %11s %11s %14s %9s\n", "call", "calls", "time s",
		"%span", "mean us", "max us", "bytes", "imbalance");
	for (size_t i = 0; i < shown; i++) {
		const struct mgr_prof_type *t = &p->types[i];

		fprintf(out, "    %-24s %10" PRIu64 " %12.6f %6.2f %11.3f %11.3f %14" PRIu64
			" %9.2f\n", call_name(t->type), t->calls, (double)t->time_ns / 1e9,
			pct(t->time_ns, spans), (double)t->time_ns / 1e3 / (double)t->calls,
			(double)t->max_ns / 1e3, t->bytes, t->imbalance);
	}
}

static void text_msgs(FILE *out, const struct mgr_profile *p)
{
	size_t shown = p->nmsgs < TOP_CELLS ? p->nmsgs : TOP_CELLS;

	if (!p->msg_count)
		return;
	fprintf(out, "  point to point: %" PRIu64 " messages, %" PRIu64 " bytes (counted at"
		" the sender, world ranks); heaviest of %zu pairs:\n", p->msg_count,
		p->msg_bytes, p->nmsgs);
	for (size_t i = 0; i < shown; i++)
		fprintf(out, "    %5d -> %-5d %10" PRIu64 " messages %14" PRIu64 " bytes\n",
			p->msgs[i].from, p->msgs[i].to, p->msgs[i].count, p->msgs[i].bytes);
	fprintf(out, "  message sizes (point to point):");
	for (int k = 0; k < MGR_PROFILE_BINS; k++) {
		const struct mgr_prof_bin *b = &p->bins[k];

		if (b->count)
			fprintf(out, "\n    %10" PRIu64 " .. %-10" PRIu64 " B %10" PRIu64
				" messages %14" PRIu64 " bytes", b->min_bytes, b->max_bytes,
				b->count, b->bytes);
	}
	fputc('\n', out);
}

static void comm_label(char *buf, size_t cap, int64_t comm)
{
	if (comm == 0)
		snprintf(buf, cap, "world");
	else if (comm < 0)
		snprintf(buf, cap, "unnamed");
	else
		snprintf(buf, cap, "comm %" PRId64, comm);
}

static void text_colls(FILE *out, const struct mgr_profile *p)
{
	size_t shown = p->ncolls < TOP_COLLS ? p->ncolls : TOP_COLLS;
	char c[32];

	if (!shown)
		return;
	fprintf(out, "  collectives per communicator (%zu rows; time and bytes summed over"
		" the members):\n", p->ncolls);
	for (size_t i = 0; i < shown; i++) {
		const struct mgr_prof_coll *k = &p->colls[i];

		comm_label(c, sizeof(c), k->comm);
		fprintf(out, "    %-9s %-24s %10" PRIu64 " calls %12.6f s %14" PRIu64
			" bytes, %" PRIu64 " ranks\n", c, call_name(k->type), k->calls,
			(double)k->time_ns / 1e9, k->bytes, k->ranks);
	}
}

static void text_files(FILE *out, const struct mgr_profile *p)
{
	size_t shown = p->nfiles < TOP_FILES ? p->nfiles : TOP_FILES;

	if (!shown)
		return;
	fprintf(out, "  busiest files by time (%zu of %zu path and %s pairs; bytes: what"
		" the calls moved)\n", shown, p->nfiles, p->mpi ? "rank" : "process");
	fprintf(out, "    %5s %8s %14s %8s %14s %11s  %s\n", p->mpi ? "rank" : "proc", "reads",
		"read bytes", "writes", "write bytes", "time s", "path");
	for (size_t i = 0; i < shown; i++) {
		const struct mgr_prof_file *f = &p->files[i];

		fprintf(out, "    %5d %8" PRIu64 " %14" PRIu64 " %8" PRIu64 " %14" PRIu64
			" %11.6f  %s\n", f->rank, f->reads, f->read_bytes, f->writes,
			f->write_bytes, (double)f->time_ns / 1e9, f->path);
	}
}

void mgr_profile_text(FILE *out, const struct mgr_profile *p)
{
	fprintf(out, "profile        %zu %s", p->nranks,
		p->mpi ? (p->nranks == 1 ? "MPI rank" : "MPI ranks") :
		(p->nranks == 1 ? "process" : "processes"));
	if (p->left_out)
		fprintf(out, " (%" PRIu64 " process%s without a rank left out: launchers)",
			p->left_out, p->left_out == 1 ? "" : "es");
	fprintf(out, "; corrected times; MPI and I/O (libc and MPI-IO calls): the main"
		" thread's, compute: the rest of the span\n");
	if (p->beyond)
		fprintf(out, "               %" PRIu64 " rows past a table's maximum not"
			" kept\n", p->beyond);
	if (!p->nranks)
		return;
	text_ranks(out, p);
	text_calls(out, p);
	text_msgs(out, p);
	text_colls(out, p);
	text_files(out, p);
}

/* ---- XML ------------------------------------------------------------------ */

static void xattr_s(FILE *out, const char *name, const char *v)
{
	fprintf(out, " %s=\"", name);
	mgr_xml_text(out, v);
	fputc('"', out);
}

void mgr_profile_xml(FILE *out, const struct mgr_profile *p)
{
	fprintf(out, "  <profile ranks=\"%zu\" mpi=\"%d\" left_out=\"%" PRIu64 "\" beyond=\"%"
		PRIu64 "\" messages=\"%" PRIu64 "\" message_bytes=\"%" PRIu64 "\">\n", p->nranks,
		p->mpi, p->left_out, p->beyond, p->msg_count, p->msg_bytes);
	for (size_t i = 0; i < p->nranks; i++) {
		const struct mgr_prof_rank *r = &p->ranks[i];

		fprintf(out, "    <rank rank=\"%d\" pid=\"%" PRId64 "\"", r->rank, r->pid);
		xattr_s(out, "exe", r->exe);
		fprintf(out, " start_ns=\"%" PRId64 "\" span_ns=\"%" PRId64 "\" mpi_ns=\"%" PRId64
			"\" io_ns=\"%" PRId64 "\" compute_ns=\"%" PRId64 "\" threads_ns=\"%" PRId64
			"\" calls=\"%" PRIu64 "\"/>\n", r->t0, span_of(r), r->mpi_ns, r->io_ns,
			mgr_profile_compute_ns(r), r->threads_ns, r->calls);
	}
	for (size_t i = 0; i < p->ntypes; i++) {
		const struct mgr_prof_type *t = &p->types[i];

		fprintf(out, "    <call name=\"%s\" calls=\"%" PRIu64 "\" time_ns=\"%" PRId64
			"\" max_ns=\"%" PRId64 "\" bytes=\"%" PRIu64 "\" rank_max_ns=\"%" PRId64
			"\" imbalance=\"%.3f\"/>\n", call_name(t->type), t->calls, t->time_ns,
			t->max_ns, t->bytes, t->rank_max_ns, t->imbalance);
	}
	for (size_t i = 0; i < p->nfns; i++) {
		const struct mgr_prof_fn *f = &p->fns[i];

		fprintf(out, "    <function rank=\"%d\" name=\"%s\" calls=\"%" PRIu64 "\" time_ns=\"%"
			PRId64 "\" max_ns=\"%" PRId64 "\" bytes=\"%" PRIu64 "\"/>\n", f->rank,
			call_name(f->type), f->calls, f->time_ns, f->max_ns, f->bytes);
	}
	for (size_t i = 0; i < p->nmsgs; i++)
		fprintf(out, "    <messages from=\"%d\" to=\"%d\" count=\"%" PRIu64 "\" bytes=\"%"
			PRIu64 "\"/>\n", p->msgs[i].from, p->msgs[i].to, p->msgs[i].count,
			p->msgs[i].bytes);
	for (int k = 0; k < MGR_PROFILE_BINS; k++) {
		const struct mgr_prof_bin *b = &p->bins[k];

		if (b->count)
			fprintf(out, "    <size_bin min_bytes=\"%" PRIu64 "\" max_bytes=\"%" PRIu64
				"\" count=\"%" PRIu64 "\" bytes=\"%" PRIu64 "\"/>\n", b->min_bytes,
				b->max_bytes, b->count, b->bytes);
	}
	for (size_t i = 0; i < p->ncolls; i++) {
		const struct mgr_prof_coll *c = &p->colls[i];

		fprintf(out, "    <collective comm=\"%" PRId64 "\" name=\"%s\" calls=\"%" PRIu64
			"\" time_ns=\"%" PRId64 "\" bytes=\"%" PRIu64 "\" ranks=\"%" PRIu64 "\"/>\n",
			c->comm, call_name(c->type), c->calls, c->time_ns, c->bytes, c->ranks);
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct mgr_prof_file *f = &p->files[i];

		fprintf(out, "    <file rank=\"%d\"", f->rank);
		xattr_s(out, "path", f->path);
		fprintf(out, " opens=\"%" PRIu64 "\" reads=\"%" PRIu64 "\" read_bytes=\"%" PRIu64
			"\" writes=\"%" PRIu64 "\" write_bytes=\"%" PRIu64 "\" other=\"%" PRIu64
			"\" time_ns=\"%" PRId64 "\"/>\n", f->opens, f->reads, f->read_bytes,
			f->writes, f->write_bytes, f->other, f->time_ns);
	}
	fputs("  </profile>\n", out);
}

/* ---- CSV: export -f profile ------------------------------------------------ */

static FILE *table(const char *dir, const char *name, const char *head, int *rc)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w"))) {
		*rc = mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		return NULL;
	}
	fputs(head, f);
	fputc('\n', f);
	return f;
}

static int close_table(FILE *f, const char *dir, const char *name, int rc)
{
	if (fclose(f) != 0 && !rc)
		rc = mgr_fail(PROTO_E_IO, "%s/%s: write failed: %m", dir, name);
	return rc;
}

/* The tables, one file each (docs/FORMAT.md, "The profile export"). */
static int write_csv(const char *dir, const struct mgr_profile *p, uint64_t *rows)
{
	int rc = 0;
	FILE *f;

	if (!(f = table(dir, "ranks.csv", "rank,pid,exe,start_ns,span_ns,mpi_ns,io_ns,"
			"compute_ns,threads_ns,calls", &rc)))
		return rc;
	for (size_t i = 0; i < p->nranks; i++, (*rows)++) {
		const struct mgr_prof_rank *r = &p->ranks[i];

		fprintf(f, "%d,%" PRId64 ",", r->rank, r->pid);
		mgr_csv_field(f, r->exe);
		fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%"
			PRId64 ",%" PRIu64 "\n", r->t0, span_of(r), r->mpi_ns, r->io_ns,
			mgr_profile_compute_ns(r), r->threads_ns, r->calls);
	}
	if ((rc = close_table(f, dir, "ranks.csv", rc)) ||
	    !(f = table(dir, "functions.csv", "rank,name,calls,time_ns,max_ns,bytes", &rc)))
		return rc;
	for (size_t i = 0; i < p->nfns; i++, (*rows)++)
		fprintf(f, "%d,%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 "\n",
			p->fns[i].rank, call_name(p->fns[i].type), p->fns[i].calls,
			p->fns[i].time_ns, p->fns[i].max_ns, p->fns[i].bytes);
	if ((rc = close_table(f, dir, "functions.csv", rc)) ||
	    !(f = table(dir, "calls.csv", "name,calls,time_ns,max_ns,bytes,rank_max_ns,"
			"imbalance", &rc)))
		return rc;
	for (size_t i = 0; i < p->ntypes; i++, (*rows)++) {
		const struct mgr_prof_type *t = &p->types[i];

		fprintf(f, "%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRId64 ",%.3f\n",
			call_name(t->type), t->calls, t->time_ns, t->max_ns, t->bytes,
			t->rank_max_ns, t->imbalance);
	}
	if ((rc = close_table(f, dir, "calls.csv", rc)) ||
	    !(f = table(dir, "messages.csv", "from,to,count,bytes", &rc)))
		return rc;
	for (size_t i = 0; i < p->nmsgs; i++, (*rows)++)
		fprintf(f, "%d,%d,%" PRIu64 ",%" PRIu64 "\n", p->msgs[i].from, p->msgs[i].to,
			p->msgs[i].count, p->msgs[i].bytes);
	if ((rc = close_table(f, dir, "messages.csv", rc)) ||
	    !(f = table(dir, "sizes.csv", "min_bytes,max_bytes,count,bytes", &rc)))
		return rc;
	for (int k = 0; k < MGR_PROFILE_BINS; k++)
		if (p->bins[k].count) {
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				p->bins[k].min_bytes, p->bins[k].max_bytes, p->bins[k].count,
				p->bins[k].bytes);
			(*rows)++;
		}
	if ((rc = close_table(f, dir, "sizes.csv", rc)) ||
	    !(f = table(dir, "collectives.csv", "comm,name,calls,time_ns,bytes,ranks", &rc)))
		return rc;
	for (size_t i = 0; i < p->ncolls; i++, (*rows)++)
		fprintf(f, "%" PRId64 ",%s,%" PRIu64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 "\n",
			p->colls[i].comm, call_name(p->colls[i].type), p->colls[i].calls,
			p->colls[i].time_ns, p->colls[i].bytes, p->colls[i].ranks);
	if ((rc = close_table(f, dir, "collectives.csv", rc)) ||
	    !(f = table(dir, "files.csv", "rank,path,opens,reads,read_bytes,writes,"
			"write_bytes,other,time_ns", &rc)))
		return rc;
	for (size_t i = 0; i < p->nfiles; i++, (*rows)++) {
		const struct mgr_prof_file *x = &p->files[i];

		fprintf(f, "%d,", x->rank);
		mgr_csv_field(f, x->path);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRId64 "\n", x->opens, x->reads, x->read_bytes, x->writes,
			x->write_bytes, x->other, x->time_ns);
	}
	return close_table(f, dir, "files.csv", rc);
}

int mgr_profile_gather(struct mgr_events *e, struct mgr_profile **out, uint64_t *events)
{
	struct mgr_profile *p = mgr_profile_new();
	struct mgr_event me;
	int rc;

	if (!p)
		return mgr_fail(PROTO_E_NOMEM, "out of memory");
	while ((rc = mgr_events_next(e, &me)) == 1) {
		(*events)++;
		if ((rc = mgr_profile_add(p, &me)) < 0)
			break;
	}
	if (rc == 0) {
		mgr_profile_hidden(p, mgr_events_launchers(e));
		rc = mgr_profile_finish(p);
	}
	if (rc < 0) {
		mgr_profile_free(p);
		return mgr_fail(rc, "profile: %s", proto_strerror(rc));
	}
	*out = p;
	return 0;
}

int mgr_export_profile(const char *dir, const char *out, struct mgr_export_stats *st)
{
	struct mgr_profile *p = NULL;
	struct mgr_events *e;
	int rc;

	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
	if ((rc = mgr_profile_gather(e, &p, &st->events)) == 0) {
		if (mkdir(out, 0777) != 0)
			rc = mgr_fail(PROTO_E_IO, "%s: cannot make the directory: %m", out);
		else
			rc = write_csv(out, p, &st->written);
	}
	int damaged = !rc && mgr_export_damage(mgr_events_trace(e), dir, "profile");

	mgr_profile_free(p);
	mgr_events_close(e);
	return rc < 0 ? rc : damaged ? PROTO_E_FORMAT : 0;
}
