/*
 * manager/launch/cores.c - how many cores a host has, and what makes an
 * MPI yield the processor when a host runs more ranks than it has cores
 * (oversubscribed, ranks busy-polling on shared cores run many times
 * slower: bench/RESULTS.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

int mgr_cores_run(const char *const argv[])
{
	char buf[64];
	size_t len = 0;
	ssize_t n;
	int p[2], st = 0;
	pid_t pid;
	long v;
	char *end;

	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(p[1], STDOUT_FILENO);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (len < sizeof(buf) - 1 &&
	       ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0 ||
		(n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf[len] = 0;
	v = strtol(buf, &end, 10);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || end == buf || v <= 0 ||
	    v > 1 << 20)
		return 0;
	return (int)v;
}
