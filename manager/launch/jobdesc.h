/*
 * manager/launch/jobdesc.h - the XML job description of `tapestry launch` and
 * `tapestry plan`: loading, validation (RELAX NG schema share/jobdesc.rng,
 * then the semantic checks a schema cannot express) and the model the
 * launcher works from. docs/JOBDESC.md describes the format for users,
 * docs/modules/manager-launch.md this code.
 *
 * Every problem found is printed as "FILE:LINE: message" on the error
 * stream given to mgr_jobdesc_load(); the load fails when there was at
 * least one. Not thread-safe (libxml2's error handlers are global).
 */
#ifndef TAPESTRY_MGR_JOBDESC_H
#define TAPESTRY_MGR_JOBDESC_H

#include <stdio.h>

#define MGR_JD_MAX_HOSTS 256
#define MGR_JD_MAX_COLLECTORS 256
#define MGR_JD_MAX_LAUNCHERS 32
#define MGR_JD_MAX_ARGS 128
#define MGR_JD_MAX_ENV 64
#define MGR_JD_MAX_OPTS 32
#define MGR_JD_MAX_OUTPUTS 16
#define MGR_JD_MAX_PROCESSES 65536
#define MGR_JD_MAX_SLOTS 65536	/* per host */

enum mgr_jd_launcher_type { MGR_LAUNCH_LOCAL, MGR_LAUNCH_SSH, MGR_LAUNCH_TEMPLATE };
enum mgr_jd_mpi { MGR_MPI_NONE, MGR_MPI_OPENMPI, MGR_MPI_MPICH };
enum mgr_jd_mode { MGR_MODE_REGULAR, MGR_MODE_FOLDING, MGR_MODE_SCATTERING };

struct mgr_jd_launcher {
	char *name;
	enum mgr_jd_launcher_type type;
	char *command;		/* template: "... {host} {address} {command}" */
	char *user, *identity, *collector_path;	/* ssh; collector_path: all */
	char *tapestry_path;	/* `tapestry` on those hosts (rank-exec), or NULL */
	int port;		/* ssh port, 0: default */
	char *options;		/* ssh: extra options, split on blanks */
	int line;
};

struct mgr_jd_host {
	char *name, *address, *site, *subnet;
	int slots;
	const struct mgr_jd_launcher *launcher;
	int node;		/* index of its node collector, -1: none */
	int line;
};

struct mgr_jd_opt {
	char *name, *value;
};

struct mgr_jd_collector {
	char *name;
	int host;		/* index into hosts */
	int parent;		/* index into collectors, -1: the root collector */
	int port;		/* listen port, 0: chosen by the kernel */
	int depth;		/* 0 for the root collector */
	int nopts;
	struct mgr_jd_opt opt[MGR_JD_MAX_OPTS];
	int line;
};

struct mgr_jd_env {
	char *name, *value;
};

struct mgr_jobdesc {
	char *path;			/* the file loaded */
	char *name;			/* job name */
	int nhosts, ncollectors, nlaunchers;
	int from_slurm;			/* <hosts from="slurm"/>: the allocation's */
	int slurm_step;			/* its node collectors: one srun step */
	struct mgr_jd_host host[MGR_JD_MAX_HOSTS];
	struct mgr_jd_collector col[MGR_JD_MAX_COLLECTORS];
	struct mgr_jd_launcher launcher[MGR_JD_MAX_LAUNCHERS];
	int root;			/* index of the root collector */
	/* application */
	char *executable;		/* as written */
	char *exe_path;			/* resolved (absolute when found) */
	int nargs;
	char *arg[MGR_JD_MAX_ARGS];
	int nenv;
	struct mgr_jd_env env[MGR_JD_MAX_ENV];
	int processes;
	enum mgr_jd_mpi mpi;
	enum mgr_jd_mode mode;
	char *workdir;			/* application's directory, or NULL */
	/* sensors: bit 0 libc, 1 mpi, 2 mem */
	unsigned sensors;
	char *sensor_mode;		/* "stream" or "postmortem", or NULL */
	int noutputs;
	char *output[MGR_JD_MAX_OUTPUTS];	/* export format names */
	char *secret_file;		/* absolute, or NULL */
	char *manager_address;		/* where the root receiver listens */
	int manager_port;		/* 0: chosen by the kernel */
	int total_slots;
};

#define MGR_SENSOR_LIBC 1u
#define MGR_SENSOR_MPI 2u
#define MGR_SENSOR_MEM 4u

/* Load and validate the description in path against the schema at
 * schema_path. Every problem is printed to err as "PATH:LINE: message".
 * Relative paths in the description (executable, secret file, workdir)
 * are resolved against the description's directory. With check_files,
 * the executable must exist and be executable (skipped for hosts that
 * are not local, where it cannot be checked) and the secret file must be
 * readable. Returns the model (mgr_jobdesc_free() it) or NULL when there
 * was any problem. */
struct mgr_jobdesc *mgr_jobdesc_load(const char *path, const char *schema_path,
				     int check_files, FILE *err);

/* Free jd. NULL: no-op. */
void mgr_jobdesc_free(struct mgr_jobdesc *jd);

/* Name of an MPI flavour / mode ("openmpi", "mpich", "none"; "regular" ...). */
const char *mgr_jd_mpi_name(enum mgr_jd_mpi m);
const char *mgr_jd_mode_name(enum mgr_jd_mode m);

/* The host of rank r (0 <= r < processes): ranks fill each host's slots
 * in document order, then start again at the first host (folding). */
int mgr_jd_rank_host(const struct mgr_jobdesc *jd, int r);

/* Run each stylesheet of the plan over the description and write the
 * results into dir (created if missing): hostfile.openmpi,
 * machinefile.mpich, platform.xml, hostfile.simgrid, deployment.xml,
 * collectors.plan (stylesheets found with mgr_find_data()). Each file is
 * written under a temporary name and renamed. jd: the description as
 * loaded, for what the file does not say (<hosts from="slurm"/>: the
 * allocation's hosts and the collectors made for them), or NULL. 0, or a
 * negative PROTO_E_* code (said: mgr_fail, or on stderr for what is wrong
 * in the description, as mgr_jobdesc_load says it). */
int mgr_jobdesc_plan(const char *path, const char *dir,
		     const struct mgr_jobdesc *jd);

/* The commands working from a description (manager/launch/launch.c, status.c). */
int mgr_cmd_plan(int argc, char **argv);
int mgr_cmd_launch(int argc, char **argv);
int mgr_cmd_status(int argc, char **argv);

#endif
