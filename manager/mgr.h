/*
 * manager/mgr.h - the `tapestry` command's subcommands and shared helpers.
 *
 * Each subcommand is `int mgr_cmd_NAME(int argc, char **argv)` returning the
 * process exit status (0 success, 1 failure, 2 usage error) after printing
 * one clear message on failure.
 */
#ifndef TAPESTRY_MGR_H
#define TAPESTRY_MGR_H

#include <stdint.h>
#include <stdio.h>

#include "proto/trace.h"

int mgr_cmd_run(int argc, char **argv);
int mgr_cmd_export(int argc, char **argv);
int mgr_cmd_report(int argc, char **argv);
int mgr_cmd_replay(int argc, char **argv);
int mgr_cmd_rank_exec(int argc, char **argv);
int mgr_cmd_host_exec(int argc, char **argv);
int mgr_cmd_serve(int argc, char **argv);	/* manager/serve/serve.c */

/* The report of the job directory dir (manager/export/report.c), as text or
 * XML, to out: 0, or a negative PROTO_E_* code (said, mgr_fail; --strict
 * refusals come after the report). launch prints it after a job. */
int mgr_report(const char *dir, int xml, FILE *out);
/* The same from the events of dir opened by the caller (mgr_events_open,
 * or NULL: opened here), whose one iteration it uses up; hook (or NULL) sees
 * every event of it, then NULL at its clean end (not after a read error):
 * the timeline index of `tapestry serve` is made in the same pass. */
struct mgr_events;
struct mgr_event;
typedef int (*mgr_report_hook)(void *arg, const struct mgr_event *ev);
#define MGR_REPORT_XML 1	/* flags: --xml */
#define MGR_REPORT_QUICK 2	/* --quick: no post-processing (me unused) */
#define MGR_REPORT_NO_PROFILE 4	/* --no-profile: no profile (post/profile.h) */
int mgr_report_events(const char *dir, struct mgr_events *me, int flags, FILE *out,
		      mgr_report_hook hook, void *arg);

/* Errors (docs/ARCHITECTURE.md, "Errors"). A command prints: mgr_err()
 * prints "tapestry: " + message to stderr, after the messages the error slot
 * holds. Code below a command returns 0 or a negative PROTO_E_* code and says
 * why with mgr_fail(): the message goes to this thread's error slot, not to
 * the terminal, and code comes back (`return mgr_fail(PROTO_E_IO, ...)`).
 * main() prints what the slot holds when the command returns; an entry point
 * that picks an exit status elsewhere (a forked child's _exit) calls
 * mgr_err_flush() itself; a caller that recovers calls mgr_err_clear(). */
void mgr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int mgr_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mgr_err_flush(void);
void mgr_err_clear(void);

/* Path of a tapestry component: env var `env` if set, else next to the
 * running binary in a build tree (build_rel, relative to the binary's
 * directory), else the installed path. Returns a malloc'd string or NULL. */
char *mgr_find(const char *env, const char *build_rel, const char *installed);

/* SMPI's piecewise factor syntax ("SIZE:FACTOR;SIZE:FACTOR..."): the
 * length of the run of its characters (digits and . : ; e E + -) at the
 * start of s, and whether all of s (non-empty) is made of them. */
size_t mgr_smpi_factor_span(const char *s);
int mgr_smpi_factor_ok(const char *s);

/* Open a trace; NULL with a clear message in the error slot (mgr_fail). */
struct proto_trace *mgr_trace_open(const char *dir);
/* mgr_fail(rc, ...) for a job directory that could not be opened (rc from
 * proto_trace_open or mgr_events_open): says what is missing when nothing
 * was found (no such directory, not a directory, no segments/). */
int mgr_fail_jobdir(int rc, const char *dir);

/* The manager's settings from the environment (docs/ARCHITECTURE.md,
 * "Environment": TAPESTRY_MIN_LATENCY_NS, TAPESTRY_NO_CORRECTION,
 * TAPESTRY_PERTURB_INDIRECT, TAPESTRY_VIZ_RUN_MAX, TAPESTRY_SPILL_BYTES, and
 * TAPESTRY_CLOCK_DRIFT_PPM for what it starts),
 * checked before a command runs (not rank-exec, not --help): 0, or -1 after
 * a message for each value not understood. */
int mgr_env_check(void);

/* path made absolute against the current directory into out (cap bytes;
 * it need not exist): 0, or a negative proto code (said, mgr_fail). Every
 * path handed to a sensor or a collector is absolute. */
int mgr_abs_path(const char *path, char *out, size_t cap);

/* Write s to out as one CSV field (quoted when needed). */
void mgr_csv_field(FILE *out, const char *s);
/* s as XML text for an attribute's value (markup escaped, what is not an
 * XML 1.0 character as U+FFFD: the output always parses; report.c). */
void mgr_xml_text(FILE *out, const char *s);

#endif
