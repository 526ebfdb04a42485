/*
 * manager/export/export_chrome.c - Chrome Trace Event Format JSON (Perfetto,
 * chrome://tracing): a complete event ("X") per event, counters ("C") for
 * memory samples, flows ("s"/"f") for matched MPI messages, process and
 * thread names ("M"). JSON does not need time order: one streaming pass after
 * the first (shape, message counts). Mapping: docs/modules/export-viz.md.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0;	/* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/* s as a JSON string: control characters escaped, invalid UTF-8 bytes
 * replaced by U+FFFD, so the output is always valid JSON. */
static void json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', out);
	while (*p) {
		size_t n = utf8_len(p);

		if (n == 0) {
			fputs("\\ufffd", out);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p < 0x20) {
			fprintf(out, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, out);
			p += n;
		}
	}
	fputc('"', out);
}

/* ns as microseconds with three decimals (ns precision), never negative */
static void us(FILE *out, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	fprintf(out, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

struct chrome {
	FILE *out;
	const struct viz_scan *s;
	const struct mgr_event *me;
	uint32_t proc, loc;	/* the event's process and thread */
	uint64_t written, flows;
	int64_t send_ts;	/* the "s" of the message being written */
};

static void sep(struct chrome *c)
{
	if (c->written++)
		fputs(",\n", c->out);
}

/* A matched message's end, written when the message is matched (the send
 * first, then the receive: export_viz.h): a flow "s" at the start of the
 * sending call, "f" where the receive completed: the end of the call that
 * completed it (MPI_Recv, the Sendrecv, the MPI_Wait or MPI_Test of an
 * Irecv), 1 ns inside it, for viewers bind an "f" to the slice that
 * encloses its time and a slice ends where the next begins (Perfetto
 * closes a slice at its end time); not before the "s" when the receive
 * completed at or after the send's start. */
static int on_link(void *arg, const struct viz_pt *p)
{
	struct chrome *c = arg;
	const struct viz_thread *th = &c->s->threads[p->loc];
	int64_t ts = p->start;

	if (p->a[5]) {
		c->send_ts = ts;
	} else {
		ts = p->t - (p->t > p->start);
		if (ts < c->send_ts && p->t >= c->send_ts)
			ts = c->send_ts;
	}

	sep(c);
	fprintf(c->out, "{\"name\":\"MPI message\",\"cat\":\"mpi\",\"ph\":\"%s\","
		"\"id\":\"%" PRId64 ".%" PRId64 ".%" PRId64 ".%" PRId64 ".%" PRId64 "\",\"ts\":",
		p->a[5] ? "s" : "f", p->a[0], p->a[1], p->a[2], p->a[3], p->a[4]);
	us(c->out, ts);
	if (!p->a[5])
		fputs(",\"bp\":\"e\"", c->out);
	fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRIu32 "}",
		c->s->procs[th->proc].label, th->tid);
	c->flows++;
	return 0;
}

/* An end point of the current event: to the matcher. */
static void on_ep(void *arg, const struct viz_ep *ep)
{
	struct chrome *c = arg;
	struct viz_pt p;

	mgr_viz_link_point(&p, c->loc, 0, c->me, 0, ep);
	mgr_viz_match_link(c->s->match, ep, &p);
}

static void write_meta(struct chrome *c)
{
	const struct viz_scan *s = c->s;

	for (size_t p = 0; p < s->nprocs; p++) {
		const struct viz_proc *pr = &s->procs[p];
		char name[700];

		if (pr->rank >= 0)
			snprintf(name, sizeof(name), "rank %d (pid %" PRId64 " on %s) %s",
				 pr->rank, pr->pid, pr->host, pr->exe);
		else
			snprintf(name, sizeof(name), "pid %" PRId64 " on %s %s",
				 pr->pid, pr->host, pr->exe);
		sep(c);
		fprintf(c->out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%"
			PRId64 ",\"tid\":0,\"args\":{\"name\":", pr->label);
		json_str(c->out, name);
		fputs("}}", c->out);
		sep(c);
		fprintf(c->out, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%"
			PRId64 ",\"tid\":0,\"args\":{\"sort_index\":%zu}}", pr->label, p);
	}
	for (size_t t = 0; t < s->nthreads; t++) {
		const struct viz_thread *th = &s->threads[t];

		sep(c);
		fprintf(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%"
			PRId64 ",\"tid\":%" PRIu32 ",\"args\":{\"name\":\"thread %"
			PRIu32 "\"}}", s->procs[th->proc].label, th->tid, th->tid);
	}
}

static void write_event(struct chrome *c, const struct mgr_event *me)
{
	const struct proto_event *ev = me->ev;
	const struct proto_ev_info *info = proto_ev_info(ev->type);
	int64_t label = c->s->procs[c->proc].label;
	int first = 1;

	sep(c);
	if (ev->type == PROTO_EV_MEM_SAMPLE) {
		fputs("{\"name\":\"memory\",\"cat\":\"mem\",\"ph\":\"C\",\"ts\":", c->out);
		us(c->out, me->start);
		fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRIu32 ",\"args\":{"
			"\"rss\":%" PRId64 ",\"minflt\":%" PRId64 ",\"majflt\":%" PRId64
			",\"vsize\":%" PRId64 "}}", label, ev->tid, ev->arg[0], ev->arg[1],
			ev->arg[2], ev->arg[3]);
		return;
	}
	fputs("{\"name\":", c->out);
	json_str(c->out, info ? info->name : "unknown");
	fputs(",\"cat\":", c->out);
	json_str(c->out, info ? proto_cat_name(info->category) : "unknown");
	fputs(",\"ph\":\"X\",\"ts\":", c->out);
	us(c->out, me->start);
	fputs(",\"dur\":", c->out);
	us(c->out, me->end - me->start);
	fprintf(c->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRIu32 ",\"args\":{",
		label, ev->tid);
	for (int i = 0; info && i < PROTO_EV_NARGS; i++) {
		unsigned f = info->field[i];

		if (f == PROTO_F_none)
			continue;
		fprintf(c->out, "%s\"%s\":", first ? "" : ",", proto_field_name(f));
		first = 0;
		if (f == PROTO_F_path) {
			if (me->path)
				json_str(c->out, me->path);
			else
				fputs("null", c->out);
		} else {
			fprintf(c->out, "%" PRId64, ev->arg[i]);
		}
	}
	if (ev->flags & PROTO_EVF_FAILED) {
		fprintf(c->out, "%s\"failed\":true", first ? "" : ",");
		first = 0;
	}
	if (me->array && me->narray) {
		fprintf(c->out, "%s\"array\":[", first ? "" : ",");
		for (size_t i = 0; i < me->narray; i++)
			fprintf(c->out, "%s%" PRId64, i ? "," : "", me->array[i]);
		fputc(']', c->out);
	}
	fputs("}}", c->out);
}

int mgr_export_chrome(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct viz_progress pg;
	struct chrome c;
	struct viz_scan s;
	struct mgr_events *e = NULL;
	struct mgr_event me;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	if (mgr_viz_scan(dir, "chrome", &s) != 0)
		return -1;
	if (!(e = mgr_events_open(dir, &rc))) {
		rc = mgr_fail_jobdir(rc, dir);
		goto out_scan;
	}
	if (!(c.out = fopen(path, "w"))) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		goto out_events;
	}
	setvbuf(c.out, NULL, _IOFBF, 1 << 20);
	c.s = &s;
	mgr_viz_match_sink(s.match, on_link, &c);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"tapestry\",", c.out);
	fputs("\"job\":", c.out);
	json_str(c.out, dir);
	fputs("},\n\"traceEvents\":[\n", c.out);
	write_meta(&c);
	mgr_viz_progress_init(&pg, "chrome", s.events);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		uint32_t t = mgr_viz_thread_of(&s, &me);

		mgr_viz_progress_tick(&pg);
		st->events++;
		if (t == UINT32_MAX)
			continue;
		c.proc = s.threads[t].proc;
		c.loc = t;
		c.me = &me;
		write_event(&c, &me);
		mgr_viz_match_event(s.match, c.proc, &me, on_ep, &c);
	}
	mgr_viz_progress_end(&pg);
	mgr_viz_match_said(s.match, dir);
	fputs("\n]}\n", c.out);
	rc = mgr_viz_read_end(dir, e, rc);
	if (fclose(c.out) != 0 && rc == 0)
		rc = mgr_fail(PROTO_E_IO, "%s: write failed: %m", path);
	st->written = c.written;
out_events:
	mgr_events_close(e);
out_scan:
	mgr_viz_scan_free(&s);
	return rc;
}
