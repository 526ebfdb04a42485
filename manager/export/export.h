/*
 * manager/export/export.h - the export formats of `tapestry export`.
 *
 * One function per format: read the job directory `dir` through
 * manager/post/events.h and write `out`: a file (csv, chrome, paje, moca) or a
 * directory the function creates (simgrid-ti, simgrid-ti-2011,
 * simgrid-platform, otf2). `out` does not exist when called: the driver in
 * export.c passes a temporary name and renames it into place on success, or
 * removes it on failure, so a failed export never leaves a half-written
 * output. Return 0, or a negative PROTO_E_* code with one `tapestry: ...`
 * message in the error slot (mgr_fail; a format not yet moved to it prints
 * the message with mgr_err and returns -1). csv also accepts out = "-"
 * (stdout).
 */
#ifndef TAPESTRY_MGR_EXPORT_H
#define TAPESTRY_MGR_EXPORT_H

#include <stdint.h>
#include <stdio.h>

struct mgr_export_stats {
	uint64_t events;	/* events read */
	uint64_t written;	/* records / lines / actions written */
};

typedef int (*mgr_export_fn)(const char *dir, const char *out,
			     struct mgr_export_stats *st);

int mgr_export_csv(const char *dir, const char *out, struct mgr_export_stats *st);
/* manager/export/export_sim.c */
int mgr_export_simgrid_ti(const char *dir, const char *out, struct mgr_export_stats *st);
int mgr_export_simgrid_ti_2011(const char *dir, const char *out, struct mgr_export_stats *st);
int mgr_export_simgrid_platform(const char *dir, const char *out, struct mgr_export_stats *st);
/* manager/export/export_viz.c */
int mgr_export_otf2(const char *dir, const char *out, struct mgr_export_stats *st);
int mgr_export_paje(const char *dir, const char *out, struct mgr_export_stats *st);
int mgr_export_chrome(const char *dir, const char *out, struct mgr_export_stats *st);
int mgr_export_moca(const char *dir, const char *out, struct mgr_export_stats *st);
/* manager/export/export_profile.c: the profile as a directory of CSV
 * tables (docs/FORMAT.md, "The profile export") */
int mgr_export_profile(const char *dir, const char *out, struct mgr_export_stats *st);

/* The profile (manager/post/profile.h) of the events of e, read to their
 * end (*events counts them): 0 with *out (mgr_profile_free it), or a
 * negative PROTO_E_* (said, mgr_fail). */
struct mgr_events;
struct mgr_profile;
int mgr_profile_gather(struct mgr_events *e, struct mgr_profile **out, uint64_t *events);
/* The profile printed: the short text at the top of `tapestry report`, the
 * <profile> element of its --xml (docs/COMMANDS.md). */
void mgr_profile_text(FILE *out, const struct mgr_profile *p);
void mgr_profile_xml(FILE *out, const struct mgr_profile *p);

/* Flops of a COMPUTE event: its volume when it counts flops (method 0);
 * instructions (method 1) scaled by flop_rate / instruction rate, the rate
 * the event carries (instr_rate, arg 4) or else meta_instr_rate (the
 * stream's META instruction_rate, 0 if none), or the CPU time times the flop
 * rate when neither is known. The event's own rate makes volumes exact
 * whatever the order in which the stream's META and batches are read. */
struct proto_event;
double mgr_compute_flops(const struct proto_event *ev, double meta_instr_rate);

/* Damage, the same way for every format and for `tapestry report`
 * (docs/modules/manager-post.md, "Damage"): a job directory read with
 * corrupt batches, damaged segment bytes, missing batches or lost events
 * is exported for what is intact, and what was skipped is said on stderr
 * (one line, `tapestry: DIR: damaged job directory (...): FORMAT exported
 * what is intact`); with `tapestry export --strict` (mgr_export_strict set)
 * it is refused (`... : FORMAT refused (--strict)`). Call once the whole
 * trace has been read. 0 (the warning printed when found), or
 * PROTO_E_FORMAT when refused (said, mgr_fail). */
struct proto_trace;
extern int mgr_export_strict;
int mgr_export_damage(struct proto_trace *t, const char *dir,
		      const char *format);

/* Export dir in format into out (NULL: the format's default name inside
 * dir). The temporary-name-then-rename driver. 0, or a negative PROTO_E_*
 * code (said, mgr_fail). */
int mgr_export(const char *format, const char *dir, const char *out,
	       struct mgr_export_stats *st);

#endif
