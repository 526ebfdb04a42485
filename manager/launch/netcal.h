/*
 * manager/launch/netcal.h - network calibration for the SimGrid platform: run the
 * MPI ping-pong (manager/launch/pingpong.c) with a job's own mpirun and hosts
 * before the application, and record its figures in the job directory's
 * meta.xml (net_latency_ns, net_bandwidth_Bps), where the simgrid-platform
 * export reads them. Used by `tapestry launch` and `tapestry run`.
 */
#ifndef TAPESTRY_MANAGER_NETCAL_H
#define TAPESTRY_MANAGER_NETCAL_H

#include <stddef.h>

#define MGR_NETCAL_TIMEOUT_MS 60000
#define MGR_NETCAL_ARGV_MAX 512

struct mgr_netcal {
	int ok;			/* 1: lat_ns and bw_Bps were measured */
	double lat_ns;		/* one-way, median of the 1-byte round trips / 2 */
	double lat_min_ns;	/* the same, minimum */
	double bw_Bps;		/* end to end, from the large messages */
	char hosts[256];	/* "A B": where ranks 0 and 1 ran */
	char flavour[16];	/* the MPI it ran with */
	char bw_factor[1024];	/* SMPI's piecewise bandwidth factor, "" if none */
	char note[512];		/* how it was measured, or why it was not */
};

/* The ping-pong program for an MPI flavour ("openmpi", "mpich"), malloc'd:
 * $TAPESTRY_PINGPONG, else the build tree's, else the installed one. NULL
 * only when out of memory; the file may not exist (checked by run). */
char *mgr_netcal_program(const char *flavour);

/* Run mpirun_argv (mpirun and its options, NULL-terminated, at most
 * MGR_NETCAL_ARGV_MAX - 2 words) followed by the ping-pong program of
 * flavour, stdout and stderr into log, at most timeout_ms (then its process
 * group is killed). Fills nc (nc->note says what happened either way) and
 * prints one line on stderr: the figures, or a warning that the platform
 * will use defaults. Returns 0 when measured, -1 otherwise. */
int mgr_netcal_run(const char *const mpirun_argv[], const char *flavour,
		   const char *log, int timeout_ms, struct mgr_netcal *nc);

/* Mark nc as not measured, with note (printf format). */
void mgr_netcal_skip(struct mgr_netcal *nc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record nc in dir/meta.xml: net_calibration (the note) always, and
 * net_latency_ns, net_latency_min_ns, net_bandwidth_Bps, net_hosts when
 * measured. dir must be a finished job directory (its writer gone).
 * Returns 0 or a negative PROTO_E_* code (a message is printed). */
int mgr_netcal_save(const char *dir, const struct mgr_netcal *nc);

/* The measure in one line for the terminal ("ping-pong (FLAVOUR, A B):
 * one-way latency ..."), or why there is none. */
void mgr_netcal_brief(const struct mgr_netcal *nc, char *buf, size_t cap);

#endif
