/*
 * manager/launch/cores.c - how many cores a host has, and what makes an
 * MPI yield the processor when a host runs more ranks than it has cores
 * (oversubscribed, ranks busy-polling on shared cores run many times
 * slower: bench/RESULTS.md).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "manager/launch/cores.h"

int mgr_local_cores(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* Open MPI: allowed to place more ranks than slots, and its progress loop
 * yields; MPICH: yield at every poll of its busy-wait loop. */
static const char *const ompi_env[] = {
	"OMPI_MCA_rmaps_base_oversubscribe=1",
	"OMPI_MCA_mpi_yield_when_idle=1",
	NULL,
};
static const char *const mpich_env[] = {
	"MPIR_CVAR_POLLS_BEFORE_YIELD=1",
	NULL,
};

const char *const *mgr_yield_env(const char *flavour)
{
	if (flavour && !strcmp(flavour, "openmpi"))
		return ompi_env;
	if (flavour && !strcmp(flavour, "mpich"))
		return mpich_env;
	return NULL;
}

long mgr_ranks_asked(char *const argv[])
{
	static const char *const opts[] = {"-np", "-n", "--np", "--n", "-c",
					   "--ntasks", NULL};

	for (int i = 0; argv && argv[i]; i++) {
		for (int k = 0; opts[k]; k++) {
			size_t len = strlen(opts[k]);
			const char *v = NULL;
			char *end;
			long n;

			if (!strcmp(argv[i], opts[k]) && argv[i + 1])
				v = argv[i + 1];
			else if (!strncmp(argv[i], opts[k], len) &&
				 argv[i][len] == '=')
				v = argv[i] + len + 1;
			if (!v)
				continue;
			n = strtol(v, &end, 10);
			if (end != v && !*end && n > 0)
				return n;
		}
		if (argv[i][0] != '-' && i > 0 && argv[i - 1][0] != '-')
			break;	/* the program: its own options are not ours */
	}
	return 0;
}
