/*
 * manager/launch/netcal.h - network calibration for the SimGrid platform: run the
 * MPI ping-pong (manager/launch/pingpong.c) with a job's own mpirun and hosts
 * before the application, and record its figures in the job directory's
 * meta.xml (net_latency_ns, net_bandwidth_Bps), where the simgrid-platform
 * export reads them; keep each measure in a cache, per host pair, MPI and
 * settings, for the next job. Used by `tapestry launch` and `tapestry run`.
 */
#ifndef TAPESTRY_MANAGER_NETCAL_H
#define TAPESTRY_MANAGER_NETCAL_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define MGR_NETCAL_TIMEOUT_MS 60000
#define MGR_NETCAL_ARGV_MAX 512
#define MGR_NETCAL_MAX_AGE_S (24 * 3600)	/* a cached measure's age at most */

struct mgr_netcal {
	int ok;			/* 1: lat_ns and bw_Bps were measured */
	double lat_ns;		/* one-way, median of the 1-byte round trips / 2 */
	double lat_min_ns;	/* the same, minimum */
	double bw_Bps;		/* end to end, from the large messages */
	char hosts[256];	/* "A B": where ranks 0 and 1 ran */
	char flavour[16];	/* the MPI it ran with */
	char bw_factor[1024];	/* SMPI's piecewise bandwidth factor, "" if none */
	char note[512];		/* how it was measured, or why it was not */
	time_t when;		/* when it was measured (0: not) */
	int cached;		/* 1: taken from the cache, not measured now */
};

/* The ping-pong program for an MPI flavour ("openmpi", "mpich"), malloc'd:
 * $TAPESTRY_PINGPONG, else the build tree's, else the installed one. NULL
 * only when out of memory; the file may not exist (checked by run). */
char *mgr_netcal_program(const char *flavour);

/* A ping-pong under way (mgr_netcal_start .. mgr_netcal_finish). */
struct mgr_netcal_job {
	pid_t pid;		/* mpirun, leading its process group; -1: none */
	int go_fd;		/* write end of mpirun's stdin, or -1 */
	int out_fd;		/* read end of its stdout, or -1 */
	int log_fd;		/* the log (its stderr; its stdout copied), or -1 */
	long long deadline;	/* CLOCK_MONOTONIC ms */
	int timeout_ms;
	char log[4096];
	char flavour[16];
	char prog[4096];
};

/* Start mpirun_argv (mpirun and its options, NULL-terminated, at most
 * MGR_NETCAL_ARGV_MAX - 3 words) followed by the ping-pong program of
 * flavour with --wait-go, stdout and stderr into log, stdin a pipe: its
 * ranks start (MPI_Init, the hosts' names) and rank 0 waits for a line
 * (mpirun forwards stdin to rank 0) before it measures, so that the
 * start-up runs beside other work and the measure does not. Returns 0, or
 * -1 (nc says why, a warning printed). At most timeout_ms from here. */
int mgr_netcal_start(const char *const mpirun_argv[], const char *flavour,
		     const char *log, int timeout_ms, struct mgr_netcal_job *j,
		     struct mgr_netcal *nc);

/* Let the started ping-pong measure (once; EOF on its stdin does too). */
void mgr_netcal_go(struct mgr_netcal_job *j);

/* Let the started ping-pong measure and wait until its last figures are
 * printed, or it ended (its group killed past its deadline); fill nc
 * (nc->note says what happened either way) and print a warning when it
 * failed. 0 when measured, -1 otherwise. With every figure printed the
 * measure is over: mpirun may still be finishing (MPI finalisation, its
 * daemons), beside what the caller starts next; mgr_netcal_reap ends it. */
int mgr_netcal_finish(struct mgr_netcal_job *j, struct mgr_netcal *nc);

/* Wait for a finished ping-pong's mpirun to end, its output still copied
 * into the log, timeout_ms at most (then its group is killed). No-op
 * when it ended already. */
void mgr_netcal_reap(struct mgr_netcal_job *j, int timeout_ms);

/* Stop a started ping-pong (its process group) without a measure. */
void mgr_netcal_abort(struct mgr_netcal_job *j);

/* ---- the cache of measures (netcal.c: rules) ---------------------------- */

/* What a measure depends on, as text: the flavour, the mpirun and the
 * ping-pong program (path, size, modification time), this machine's
 * boot, the MPI settings of the environment, then the caller's lines
 * (hosts, the description's environment, launchers). */
struct mgr_netcal_key {
	char text[8192];
	size_t len;
	int bad;		/* too long or unreadable: never cached */
};

/* Start k with the parts every caller shares. */
void mgr_netcal_key_init(struct mgr_netcal_key *k, const char *flavour,
			 const char *mpirun);

/* Append one line to k (printf format). */
void mgr_netcal_key_add(struct mgr_netcal_key *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A cached measure for k not older than MGR_NETCAL_MAX_AGE_S: 1 with nc
 * filled (cached set) and log written with its lines, else 0. */
int mgr_netcal_cached(const struct mgr_netcal_key *k, const char *log,
		      struct mgr_netcal *nc);

/* Keep a successful measure (nc, its log) for k; failures are not kept.
 * Best effort: a cache that cannot be written is said once, at info. */
void mgr_netcal_store(const struct mgr_netcal_key *k, const char *log,
		      const struct mgr_netcal *nc);

/* Mark nc as not measured, with note (printf format). */
void mgr_netcal_skip(struct mgr_netcal *nc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record nc in dir/meta.xml: net_calibration (the note) always, and
 * net_latency_ns, net_latency_min_ns, net_bandwidth_Bps, net_hosts,
 * net_bw_factor, net_calibration_date (UTC, ISO 8601) and
 * net_calibration_cached (yes, no) when measured. dir must be a finished job directory (its writer gone).
 * Returns 0 or a negative PROTO_E_* code (a message is printed). */
int mgr_netcal_save(const char *dir, const struct mgr_netcal *nc);

/* The measure in one line for the terminal ("ping-pong (FLAVOUR, A B):
 * one-way latency ..."), or why there is none. */
void mgr_netcal_brief(const struct mgr_netcal *nc, char *buf, size_t cap);

#endif
