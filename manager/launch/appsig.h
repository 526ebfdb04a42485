/*
 * manager/launch/appsig.h - the application of `tapestry run` and
 * `tapestry launch` under a signal to the manager (manager/launch/appsig.c):
 * SIGTERM, SIGINT or SIGHUP stop the application, and the command then
 * drains its collectors, writes what was collected and exits 128 + signal.
 */
#ifndef TAPESTRY_MGR_APPSIG_H
#define TAPESTRY_MGR_APPSIG_H

#include <sys/types.h>

/* Catch SIGTERM, SIGINT and SIGHUP from now on (no SA_RESTART: a wait is
 * interrupted). The first one caught is kept. SIGPIPE no longer ends the
 * manager (its output closed: it finishes the job). */
void mgr_sig_catch(void);

/* The signal caught since mgr_sig_catch, or 0. */
int mgr_sig_caught(void);

/* In the forked child that becomes the application, before exec: its own
 * process group, so that a signal reaches all of it and only it. */
void mgr_app_child(void);

/* Wait for the application pid (started with mgr_app_child): on a
 * terminal where the manager is in the foreground, the application's group
 * has the terminal while it runs (a Ctrl-C goes to it). When the manager
 * catches a signal, the same signal goes to the application's group, then
 * SIGKILL if it has not ended after grace_ms. Its exit status as a shell
 * says it (128 + signal). */
int mgr_app_wait(pid_t pid, int grace_ms);

/* "exited with status N" or "was killed by signal N (NAME)": how the
 * application with exit status code (as mgr_app_wait gives it) ended. */
void mgr_app_ended(int code, char *buf, size_t cap);

#endif
