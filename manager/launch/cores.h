/*
 * manager/launch/cores.h - cores of a host and MPI's yielding mode
 * (manager/launch/cores.c).
 */
#ifndef TAPESTRY_MGR_CORES_H
#define TAPESTRY_MGR_CORES_H

/* CPUs this process may run on (sched_getaffinity), at least 1. */
int mgr_local_cores(void);

/* "NAME=VALUE" settings (NULL-terminated) that put an MPI flavour
 * ("openmpi", "mpich") in its yielding, oversubscription-allowed mode;
 * NULL for another flavour. Static storage. */
const char *const *mgr_yield_env(const char *flavour);

/* The rank count a launcher's arguments ask for (-np N, -n N, --np=N,
 * -c N, --ntasks N), looked for before the launched program; 0 when none. */
long mgr_ranks_asked(char *const argv[]);

/* Run argv (`nproc` through a host's launcher), its stdin and stderr on
 * /dev/null, and read the number it prints: the host's cores, or 0 when it
 * failed (unreachable: the collector start says why). Waits for it. */
int mgr_cores_run(const char *const argv[]);

#endif
