/*
 * manager/export/export_moca.c - the memory samples in MOCA's text format ([002]):
 * a task (`T id pid [pagesize]`) per process that has samples, a chunk
 * (`C id N start end cpumask`) per sample period. The sensor samples whole
 * processes (rss, faults, vsize), not pages, so no chunk has access lines
 * (`A ...`, N = 0) and the sample's values follow each chunk as a `#`
 * comment. Samples are grouped by task with the external sort (bounded
 * memory). What is and is not represented: docs/modules/export-viz.md.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

/* process, then time, then read order */
static int cmp_task(const struct viz_pt *x, const struct viz_pt *y)
{
	int c;

	if ((c = MGR_CMP(x->loc, y->loc)) || (c = MGR_CMP(x->t, y->t)))
		return c;
	return MGR_CMP(x->seq, y->seq);
}

static int fill(const char *dir, const struct viz_scan *s, struct viz_sort *so,
		struct mgr_export_stats *st)
{
	struct viz_progress pg;
	struct mgr_events *e;
	struct mgr_event me;
	uint64_t seq = 0;
	int rc;

	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
	mgr_viz_progress_init(&pg, "moca", s->events);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		uint32_t t;
		struct viz_pt p;

		mgr_viz_progress_tick(&pg);
		st->events++;
		if (me.ev->type != PROTO_EV_MEM_SAMPLE ||
		    (t = mgr_viz_thread_of(s, &me)) == UINT32_MAX)
			continue;
		memset(&p, 0, sizeof(p));
		p.loc = s->threads[t].proc;
		p.t = me.start;
		p.seq = (int64_t)++seq;
		p.kind = VIZ_PT_SAMPLE;
		memcpy(p.a, me.ev->arg, sizeof(p.a));
		if ((rc = mgr_viz_sort_add(so, &p)) != 0)
			break;
	}
	mgr_viz_progress_end(&pg);
	mgr_events_close(e);
	if (rc == 0)
		rc = mgr_viz_sort_finish(so);
	if (rc < 0)
		return mgr_fail(rc, "%s: %s while sorting samples", dir,
				proto_strerror(rc));
	return 0;
}

int mgr_export_moca(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct viz_sort *so = NULL;
	struct viz_scan s;
	struct viz_pt p;
	FILE *out = NULL;
	uint32_t cur = UINT32_MAX;
	uint64_t task = 0, chunk = 0;
	int64_t prev = 0;
	int rc = -1;

	if (mgr_viz_scan(dir, "moca", &s) != 0)
		return -1;
	if (!(so = mgr_viz_sort_new(0, cmp_task))) {
		rc = mgr_fail(PROTO_E_NOMEM, "out of memory");
		goto done;
	}
	if ((rc = fill(dir, &s, so, st)) != 0)
		goto done;
	if (!(out = fopen(path, "w"))) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		goto done;
	}
	while ((rc = mgr_viz_sort_next(so, &p)) == 1) {
		if (p.loc != cur) {
			const struct viz_proc *pr = &s.procs[p.loc];

			/* the first task's line ends with the page size, as in
			 * MOCA (this machine's: the sensor does not record it) */
			if (task == 0)
				fprintf(out, "T 0 %" PRId64 " %ld\n", pr->pid,
					sysconf(_SC_PAGESIZE));
			else
				fprintf(out, "T %" PRIu64 " %" PRId64 "\n", task, pr->pid);
			task++;
			cur = p.loc;
			chunk = 0;
			prev = pr->first < p.t ? pr->first : p.t;
			st->written++;
		}
		/* a chunk per sample period: from the previous sample (or the
		 * process's first event) to this sample; no pages, CPUs unknown */
		fprintf(out, "C %" PRIu64 " 0 %" PRId64 " %" PRId64 " 0\n"
			"# rss %" PRId64 " minflt %" PRId64 " majflt %" PRId64
			" vsize %" PRId64 "\n", chunk++, prev, p.t,
			p.a[0], p.a[1], p.a[2], p.a[3]);
		prev = p.t;
		st->written++;
	}
	rc = mgr_viz_write_end(out, path, "samples", rc);
done:
	mgr_viz_sort_free(so);
	mgr_viz_scan_free(&s);
	return rc < 0 ? rc : 0;
}
