/*
 * manager/export/export_paje.c - Paje trace (ViTE, pajeng's pj_dump): containers
 * host -> process -> thread, a state per event (pushed at its start, popped
 * at its end), links for matched MPI messages, a variable per process for the
 * memory samples. Paje wants the whole file in time order: the points of
 * every event go through the external sort of export_viz.c (bounded memory).
 * Mapping: docs/modules/export-viz.md.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

static const char header[] =
	"%EventDef PajeDefineContainerType 0\n%\tAlias string\n%\tType string\n"
	"%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineStateType 1\n%\tAlias string\n%\tType string\n"
	"%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineVariableType 2\n%\tAlias string\n%\tType string\n"
	"%\tName string\n%\tColor color\n%EndEventDef\n"
	"%EventDef PajeDefineLinkType 3\n%\tAlias string\n%\tType string\n"
	"%\tStartContainerType string\n%\tEndContainerType string\n"
	"%\tName string\n%EndEventDef\n"
	"%EventDef PajeDefineEntityValue 4\n%\tAlias string\n%\tType string\n"
	"%\tName string\n%\tColor color\n%EndEventDef\n"
	"%EventDef PajeCreateContainer 5\n%\tTime date\n%\tAlias string\n"
	"%\tType string\n%\tContainer string\n%\tName string\n%EndEventDef\n"
	"%EventDef PajeDestroyContainer 6\n%\tTime date\n%\tType string\n"
	"%\tName string\n%EndEventDef\n"
	"%EventDef PajeSetVariable 7\n%\tTime date\n%\tType string\n"
	"%\tContainer string\n%\tValue double\n%EndEventDef\n"
	"%EventDef PajePushState 8\n%\tTime date\n%\tType string\n"
	"%\tContainer string\n%\tValue string\n%EndEventDef\n"
	"%EventDef PajePopState 9\n%\tTime date\n%\tType string\n"
	"%\tContainer string\n%EndEventDef\n"
	"%EventDef PajeStartLink 10\n%\tTime date\n%\tType string\n"
	"%\tContainer string\n%\tValue string\n%\tStartContainer string\n"
	"%\tKey string\n%EndEventDef\n"
	"%EventDef PajeEndLink 11\n%\tTime date\n%\tType string\n"
	"%\tContainer string\n%\tValue string\n%\tEndContainer string\n"
	"%\tKey string\n%EndEventDef\n";

/* Paje strings are quoted with no escape: a quote becomes an apostrophe,
 * control characters spaces */
static void pstr(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, out);
	fputc('"', out);
}

/* ns as seconds, exact */
static void psec(FILE *out, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	fprintf(out, "%" PRId64 ".%09" PRId64, ns / 1000000000, ns % 1000000000);
}

static const char *cat_color(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	switch (info ? info->category : PROTO_CAT_TRACER) {
	case PROTO_CAT_LIBC: return "0.2 0.5 0.9";
	case PROTO_CAT_MPI: return "0.9 0.2 0.2";
	case PROTO_CAT_MEM: return "0.2 0.8 0.2";
	case PROTO_CAT_PROC: return "0.8 0.6 0.1";
	default: return "0.5 0.5 0.5";
	}
}

static void write_defs(FILE *out, const struct viz_scan *s)
{
	fputs(header, out);
	fputs("0 CT_H 0 \"Host\"\n0 CT_P CT_H \"Process\"\n0 CT_T CT_P \"Thread\"\n"
	      "1 ST CT_T \"Call\"\n"
	      "2 V_RSS CT_P \"Resident memory (bytes)\" \"0.2 0.8 0.2\"\n"
	      "3 L 0 CT_T CT_T \"MPI message\"\n"
	      "4 msg L \"message\" \"1 1 1\"\n", out);
	for (unsigned ty = 1; ty < PROTO_EV__COUNT; ty++) {
		if (!s->by_type[ty] || ty == PROTO_EV_MEM_SAMPLE)
			continue;
		fprintf(out, "4 e%u ST ", ty);
		pstr(out, mgr_viz_ev_name(ty));
		fprintf(out, " \"%s\"\n", cat_color(ty));
	}
	for (size_t h = 0; h < s->nhosts; h++) {
		fprintf(out, "5 0.000000000 h%zu CT_H 0 ", h);
		pstr(out, s->hosts[h]);
		fputc('\n', out);
	}
	for (size_t p = 0; p < s->nprocs; p++) {
		char name[400];

		mgr_viz_proc_name(s, p, name, sizeof(name));
		fprintf(out, "5 0.000000000 p%zu CT_P h%" PRIu32 " ", p, s->procs[p].host_idx);
		pstr(out, name);
		fputc('\n', out);
	}
	for (size_t t = 0; t < s->nthreads; t++)
		fprintf(out, "5 0.000000000 t%zu CT_T p%" PRIu32 " \"thread %" PRIu32 "\"\n",
			t, s->threads[t].proc, s->threads[t].tid);
}

int mgr_export_paje(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct viz_sort *so = NULL;
	struct viz_scan s;
	struct viz_pt p;
	FILE *out = NULL;
	int rc = -1;

	if (mgr_viz_scan(dir, "paje", &s) != 0)
		return -1;
	if (!(so = mgr_viz_sort_new(0, mgr_viz_cmp_time))) {
		rc = mgr_fail(PROTO_E_NOMEM, "out of memory");
		goto done;
	}
	if (mgr_viz_fill_sort(dir, &s, so, 0, 1, "paje", st) != 0)
		goto done;
	mgr_viz_match_said(s.match, dir);
	if (!(out = fopen(path, "w"))) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
		goto done;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	write_defs(out, &s);
	while ((rc = mgr_viz_sort_next(so, &p)) == 1) {
		switch (p.kind) {
		case VIZ_PT_ENTER:
			fputs("8 ", out);
			psec(out, p.t);
			fprintf(out, " ST t%" PRIu32 " e%u\n", p.loc, p.type);
			break;
		case VIZ_PT_LEAVE:
			fputs("9 ", out);
			psec(out, p.t);
			fprintf(out, " ST t%" PRIu32 "\n", p.loc);
			break;
		case VIZ_PT_LINK:
			fputs(p.a[5] ? "10 " : "11 ", out);
			psec(out, p.t);
			fprintf(out, " L 0 msg t%" PRIu32 " %" PRId64 ".%" PRId64 ".%" PRId64
				".%" PRId64 ".%" PRId64 "\n", p.loc, p.a[0], p.a[1], p.a[2],
				p.a[3], p.a[4]);
			break;
		case VIZ_PT_SAMPLE:
			fputs("7 ", out);
			psec(out, p.t);
			fprintf(out, " V_RSS p%" PRIu32 " %" PRId64 "\n",
				s.threads[p.loc].proc, p.a[0]);
			break;
		default:
			continue;
		}
		st->written++;
	}
	rc = mgr_viz_write_end(out, path, "events", rc);
done:
	mgr_viz_sort_free(so);
	mgr_viz_scan_free(&s);
	return rc < 0 ? rc : 0;
}
