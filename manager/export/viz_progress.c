/*
 * manager/export/viz_progress.c - the progress line of the viewer exports
 * on a terminal's stderr (export_viz.h, struct viz_progress).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manager/export/export_viz.h"

void mgr_viz_progress_init(struct viz_progress *p, const char *what,
			   uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->total = total;
	p->on = isatty(STDERR_FILENO);
	p->last = time(NULL);
}

static void progress_show(struct viz_progress *p)
{
	if (p->total)
		fprintf(stderr, "\rtapestry: %s: %" PRIu64 " events (%3u%%)", p->what,
			p->done, (unsigned)(p->done >= p->total ? 100 :
					    p->done * 100 / p->total));
	else
		fprintf(stderr, "\rtapestry: %s: %" PRIu64 " events", p->what, p->done);
}

void mgr_viz_progress_tick(struct viz_progress *p)
{
	time_t now;

	p->done++;
	if (!p->on || (p->done & 0xffff))
		return;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	progress_show(p);
}

void mgr_viz_progress_end(struct viz_progress *p)
{
	if (!p->on || p->done < 0x10000)
		return;
	progress_show(p);
	fputc('\n', stderr);
}
