/*
 * manager/export/export_csv.c - CSV: one line per event, the columns of MISSION.md
 * (scripts depend on their names and order; add columns only at the end).
 */
#include <inttypes.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/mgr.h"
#include "proto/error.h"

static void opt_i64(FILE *out, const struct proto_event *ev, enum proto_field f)
{
	int i = proto_ev_arg(ev->type, f);

	if (i >= 0)
		fprintf(out, "%" PRId64, ev->arg[i]);
}

/* The last column: the event's fields that have no column of their own,
 * "name=value" separated by spaces (evtype=0 cost_ns=18 samples=63488
 * cost_ps=18116 for a calibration record; comm=0 req=5 for MPI_Isend). */
static void other_fields(FILE *out, const struct proto_event *ev,
			 const struct proto_ev_info *info)
{
	int first = 1;

	for (int k = 0; info && k < PROTO_EV_NARGS; k++) {
		unsigned f = info->field[k];

		switch (f) {
		case PROTO_F_none: case PROTO_F_bytes: case PROTO_F_peer:
		case PROTO_F_tag: case PROTO_F_fd: case PROTO_F_path:
		case PROTO_F_result: case PROTO_F_errcode:
			continue;
		default:
			break;
		}
		fprintf(out, "%s%s=%" PRId64, first ? "" : " ", proto_field_name(f),
			ev->arg[k]);
		first = 0;
	}
}

/* A run of stdio calls: the ns inside them (its ARRAY, docs/FORMAT.md). */
static void in_calls(FILE *out, const struct mgr_event *me,
		     const struct proto_ev_info *info)
{
	const struct proto_event *ev = me->ev;

	if (info && info->category == PROTO_CAT_LIBC &&
	    (ev->flags & PROTO_EVF_HASARRAY) && proto_ev_calls(ev) > 1 &&
	    me->array && me->narray >= 1)
		fprintf(out, " in_calls_ns=%" PRId64, me->array[0]);
}

int mgr_export_csv(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct mgr_events *e;
	struct mgr_event me;
	FILE *out;
	int rc;

	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
	out = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!out) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		mgr_events_close(e);
		return rc;
	}
	fputs("rank,tid,event,start_ns,end_ns,bytes,peer,tag,fd,path,pid,result,errcode,"
	      "args\n", out);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		const struct proto_event *ev = me.ev;
		const struct proto_ev_info *info = proto_ev_info(ev->type);

		st->events++;
		if (me.stream->rank >= 0)
			fprintf(out, "%d", me.stream->rank);
		fprintf(out, ",%u,", ev->tid);
		mgr_csv_field(out, info ? info->name : "unknown");
		fprintf(out, ",%" PRId64 ",%" PRId64 ",", me.start, me.end);
		if (proto_ev_arg(ev->type, PROTO_F_bytes) >= 0)	/* what moved */
			fprintf(out, "%" PRId64, proto_ev_moved(ev));
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_peer);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_tag);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_fd);
		fputc(',', out);
		mgr_csv_field(out, me.path);
		fputc(',', out);
		if (me.stream->pid >= 0)
			fprintf(out, "%" PRId64, me.stream->pid);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_result);
		fputc(',', out);
		opt_i64(out, ev, PROTO_F_errcode);
		fputc(',', out);
		other_fields(out, ev, info);
		in_calls(out, &me, info);
		fputc('\n', out);
		st->written++;
	}
	int damaged = rc >= 0 && mgr_export_damage(mgr_events_trace(e), dir, "csv");

	if (rc < 0)
		mgr_fail(rc, "%s: read error: %s", dir, proto_strerror(rc));
	mgr_events_close(e);
	if (out != stdout) {
		if (fclose(out) != 0 && rc >= 0)
			rc = mgr_fail(PROTO_E_IO, "%s: write failed: %m", path);
	} else if (fflush(stdout) != 0) {
		rc = PROTO_E_IO;
	}
	return rc < 0 ? rc : damaged ? PROTO_E_FORMAT : 0;
}
