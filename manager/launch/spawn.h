/*
 * manager/launch/spawn.h - starting and stopping the processes a command runs:
 * collectors (which announce "listening HOST:PORT" on stdout), the traced
 * application, and finding the components they need (collector binary,
 * sensor libraries, stylesheets, schema).
 *
 * Used by `tapestry run` (manager/launch/run.c) and `tapestry launch`
 * (manager/launch/launch.c). Not thread-safe; call from the main thread only.
 */
#ifndef TAPESTRY_MGR_SPAWN_H
#define TAPESTRY_MGR_SPAWN_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* One process started by the manager. pid -1: not running (or reaped). */
struct mgr_child {
	pid_t pid;
	int port;		/* from its "listening HOST:PORT" line, or 0 */
	char addr[128];		/* HOST:PORT it announced, or "" */
	int tls_wanted;		/* also wait for "listening-tls HOST:PORT" */
	char tls_addr[128];	/* the TLS listener it announced, or "" */
	int in_fd;		/* write end of its stdin pipe, or -1 */
	int status;		/* wait status once reaped */
	int group;		/* 1: leads its own process group (signals go to it) */
	const char *what;	/* name used in messages */
};

/* Reset c to "not running" with the name what (not copied). */
void mgr_child_init(struct mgr_child *c, const char *what);

/* CLOCK_MONOTONIC in ms. */
long long mgr_now_ms(void);

/* Start argv[0] (a path, or a name searched in PATH; argv NULL-terminated) with stdout on a pipe and
 * wait up to timeout_ms for its "listening HOST:PORT" line, which fills
 * c->addr and c->port. With keep_stdin, c->in_fd is the write end of a pipe
 * on the child's stdin (closing it is how `tapestry launch` stops a
 * wrapped collector); otherwise stdin is inherited. The child always
 * leads a new process group: stopping it also stops what its launcher
 * started (a template's commands), and a signal to the manager's group
 * (Ctrl-C without a terminal handed over, `timeout -s INT`) does not
 * reach it: the manager drains it after the program. stderr_fd >= 0
 * replaces the child's stderr. LD_PRELOAD is removed from the child's
 * environment. Returns 0, or -1 when the process could not be started,
 * exited, or did not announce its port in time (c is then stopped and
 * reaped, c->status holding its wait status when it exited). */
int mgr_spawn_listener(const char *const argv[], struct mgr_child *c,
		       int timeout_ms, int keep_stdin, int stderr_fd);

/* Stop c: close its stdin pipe, send SIGTERM, wait up to timeout_ms, then
 * SIGKILL. Returns 0 when it exited with status 0, PROTO_E_STATE otherwise
 * (also when it had to be killed; the error slot names it then, mgr_fail).
 * No-op (0) when c is not running. */
int mgr_child_stop(struct mgr_child *c, int timeout_ms);

/* Wait for c without signalling it: close its stdin pipe (a wrapped
 * collector then drains and exits) and wait up to timeout_ms; SIGKILL
 * after that. Same return values as mgr_child_stop(). */
int mgr_child_close(struct mgr_child *c, int timeout_ms);

/* Wait for the child pid at most timeout_ms without signalling it,
 * woken by its exit (pidfd) rather than by polling: 1 when it was reaped
 * (*status filled) or is not a child, 0 when it still runs. */
int mgr_wait_exit(pid_t pid, int timeout_ms, int *status);

/* 1 when c has exited (reaps it, fills c->status), 0 when running. */
int mgr_child_exited(struct mgr_child *c);

/* Exit status of a wait status the way a shell reports it (128 + signal). */
int mgr_wait_code(int status);

/* What mgr_mpi_guess() found out about a program (mpiguess.c). */
struct mgr_mpi_guess {
	int launcher;		/* named like an MPI launcher (or a link to one) */
	int links_mpi;		/* links an MPI library (itself or app) */
	const char *flavour;	/* "openmpi", "mpich", or NULL: nothing told;
				 * app_flavour when known, else the launcher's */
	const char *launcher_flavour;	/* a launcher's, by name or --version */
	const char *app_flavour;	/* the MPI program's, by its libraries */
	char app[PATH_MAX];	/* the MPI program found ("": none) */
	char tried[1024];	/* the steps taken, for a message */
};

/* Is prog (args: its arguments, NULL-terminated, or NULL) an MPI launcher
 * or an MPI program, and which MPI: the libraries of the program (prog,
 * or what a launcher or a script runs), else a launcher's name, the links
 * on its way and its --version. 0, or PROTO_E_NOTFOUND when prog is not
 * found (g->tried says). */
int mgr_mpi_guess(const char *prog, char *const args[], struct mgr_mpi_guess *g);

/* The MPI ("openmpi", "mpich") a launcher's `prog --version` names (found
 * on PATH, 5 s at most), or NULL. */
const char *mgr_mpi_version(const char *prog);

/* Path of tapestry-collector (TAPESTRY_COLLECTOR_BIN, build tree, installed).
 * malloc'd, or NULL. */
char *mgr_find_collector(void);

/* Path of the sensor library for mpi ("openmpi", "mpich" or NULL for the
 * libc sensor), as `tapestry run` finds it (TAPESTRY_SENSOR_LIB overrides).
 * malloc'd, or NULL. */
char *mgr_find_sensor(const char *mpi);

/* Path of a shared data file (name relative to the data directory, e.g.
 * "jobdesc.rng" or "xsl/job-openmpi-hostfile.xsl"): TAPESTRY_SHARE_DIR,
 * then the build tree next to the binary, then $(pkgdatadir). malloc'd, or
 * NULL. */
char *mgr_find_data(const char *name);

struct proto_meta;

/* Connect to the collector at addr ("HOST:PORT") as a status client (role
 * STATUS, the usual handshake proved with secret, which may be empty) and
 * call cb(stats, arg) for every STATS frame it sends: its own first, then
 * the last one of each collector below it. Waits at most timeout_ms for
 * each step. Returns 0 once the collector closed the connection, else a
 * PROTO_E_* code with a one-line reason in why. (manager/launch/status.c) */
int mgr_status_query(const char *addr, const void *secret, size_t secretlen,
		     int timeout_ms,
		     void (*cb)(const struct proto_meta *, void *), void *arg,
		     char *why, size_t whylen);

/* Read a job secret file the way tapestry-collector does (trailing
 * newlines dropped). 0, PROTO_E_IO when unreadable, PROTO_E_TOOBIG at cap
 * bytes or more (the caller says which file). */
int mgr_read_secret(const char *path, char *buf, size_t cap, size_t *len);

/* Append s to buf (at most cap bytes with the NUL) as one word quoted for
 * /bin/sh ('...' with embedded quotes escaped). -1 when it does not fit. */
int mgr_shell_quote(char *buf, size_t cap, const char *s);

#endif
