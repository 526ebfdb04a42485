/*
 * manager/launch/rankexec.c - `tapestry rank-exec MAP -- PROGRAM [ARGS]`: what
 * mpirun starts for each rank of a launched MPI job spread over several
 * hosts, so that each rank streams to the node collector of the host it
 * runs on. It reads its rank from the MPI launcher's environment
 * (OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK), finds that rank's line
 * "RANK ADDR:PORT" in MAP (written by `tapestry launch` into DIR/plan),
 * sets TAPESTRY_COLLECTOR, moves TAPESTRY_RANK_PRELOAD into LD_PRELOAD (so
 * that this wrapper itself is not traced) and executes PROGRAM.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/mgr.h"

static int my_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "PMIX_RANK", NULL};

	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		if (*end == '\0' && r >= 0 && r < 1 << 24)
			return (int)r;
	}
	return -1;
}

int mgr_cmd_rank_exec(int argc, char **argv)
{
	char line[512], addr[300] = "";
	const char *pre;
	FILE *f;
	int rank;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		mgr_err("usage: tapestry rank-exec MAP -- PROGRAM [ARGS...] "
			"(started by tapestry launch, through mpirun)");
		return 2;
	}
	if ((rank = my_rank()) < 0) {
		mgr_err("rank-exec: no MPI rank in the environment "
			"(OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK)");
		return 2;
	}
	if (!(f = fopen(argv[1], "r"))) {
		mgr_err("rank-exec: %s: %s", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		int r;
		char a[300];

		if (sscanf(line, "%d %299s", &r, a) == 2 && r == rank) {
			snprintf(addr, sizeof(addr), "%s", a);
			break;
		}
	}
	fclose(f);
	if (!addr[0]) {
		mgr_err("rank-exec: rank %d is not in %s", rank, argv[1]);
		return 1;
	}
	setenv("TAPESTRY_COLLECTOR", addr, 1);
	if ((pre = getenv("TAPESTRY_RANK_PRELOAD")) && *pre) {
		setenv("LD_PRELOAD", pre, 1);
		unsetenv("TAPESTRY_RANK_PRELOAD");
	}
	execvp(argv[3], argv + 3);
	mgr_err("rank-exec: cannot execute %s: %s", argv[3], strerror(errno));
	return 127;
}
