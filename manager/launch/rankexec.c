/*
 * manager/launch/rankexec.c - `tapestry rank-exec MAP -- PROGRAM [ARGS]`: what
 * mpirun starts for each rank of a launched MPI job spread over several
 * hosts, so that each rank streams to the node collector of the host it
 * runs on.
 *
 * Its collector, from what mpirun passes in the environment (no shared file
 * system needed): TAPESTRY_NODE_COLLECTORS="HOST=ADDR:PORT,..." lists the
 * node collector of every host ranks run on; the rank takes the one whose
 * ADDR is an address of this machine (getifaddrs: a node's collector
 * listens on the node's address, in a network namespace on its own), else
 * the one whose HOST is this machine's name. Only when several entries are
 * local (several described hosts on one machine) does it read its rank's
 * line "RANK ADDR:PORT" in MAP (DIR/plan/rank-collectors, on the manager's
 * machine), the rank from the MPI launcher's environment
 * (OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK). It then sets
 * TAPESTRY_COLLECTOR, moves TAPESTRY_RANK_PRELOAD into LD_PRELOAD (so that
 * this wrapper itself is not traced) and executes PROGRAM.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "proto/error.h"

/* Is ip (numeric) an address of one of this machine's interfaces? */
static int is_local(const struct ifaddrs *ifs, const char *ip)
{
	char buf[NI_MAXHOST];

	for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		socklen_t len;

		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
				     i->ifa_addr->sa_family != AF_INET6))
			continue;
		len = i->ifa_addr->sa_family == AF_INET ?
		      sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (getnameinfo(i->ifa_addr, len, buf, sizeof(buf), NULL, 0,
				NI_NUMERICHOST) == 0 && !strcmp(buf, ip))
			return 1;
	}
	return 0;
}

/* This host's collector from TAPESTRY_NODE_COLLECTORS into addr: 1 found,
 * 0 none, -1 several local ones (the caller asks MAP). */
static int from_env(const char *map, char *addr, size_t cap)
{
	char copy[8192], self[256] = "", *save = NULL;
	struct ifaddrs *ifs = NULL;
	int local = 0, named = 0;

	snprintf(copy, sizeof(copy), "%s", map);
	gethostname(self, sizeof(self) - 1);
	if (getifaddrs(&ifs) != 0)
		ifs = NULL;
	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(e, '='), ip[300], *colon;

		if (!eq)
			continue;
		*eq = 0;
		snprintf(ip, sizeof(ip), "%s", eq + 1);
		if ((colon = strrchr(ip, ':')))
			*colon = 0;
		if (ifs && is_local(ifs, ip)) {
			if (!local++)
				snprintf(addr, cap, "%s", eq + 1);
		} else if (!local && !named && !strcmp(e, self)) {
			named = 1;
			snprintf(addr, cap, "%s", eq + 1);
		}
	}
	if (ifs)
		freeifaddrs(ifs);
	return local > 1 ? -1 : local || named;
}

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

/* Its rank's line in MAP into addr: 0, or a negative PROTO_E_* code (its
 * message in the error slot). */
static int from_file(const char *map, char *addr, size_t cap)
{
	char line[512];
	FILE *f;
	int rank;

	if ((rank = my_rank()) < 0)
		return mgr_fail(PROTO_E_NOTFOUND, "rank-exec: no MPI rank in the "
				"environment (OMPI_COMM_WORLD_RANK, PMI_RANK, "
				"PMIX_RANK)");
	if (!(f = fopen(map, "r")))
		return mgr_fail(PROTO_E_IO, "rank-exec: %s: %s", map,
				strerror(errno));
	addr[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		int r;
		char a[300];

		if (sscanf(line, "%d %299s", &r, a) == 2 && r == rank) {
			snprintf(addr, cap, "%s", a);
			break;
		}
	}
	fclose(f);
	if (!addr[0])
		return mgr_fail(PROTO_E_NOTFOUND, "rank-exec: rank %d is not in %s",
				rank, map);
	return 0;
}

int mgr_cmd_rank_exec(int argc, char **argv)
{
	const char *pre, *map = getenv("TAPESTRY_NODE_COLLECTORS");
	char addr[300] = "";
	int found = 0;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		mgr_err("usage: tapestry rank-exec MAP -- PROGRAM [ARGS...] "
			"(started by tapestry launch, through mpirun)");
		return 2;
	}
	if (map && *map)
		found = from_env(map, addr, sizeof(addr));
	if (found == 0 && map && *map && access(argv[1], R_OK) != 0) {
		char self[256] = "";

		gethostname(self, sizeof(self) - 1);
		mgr_err("rank-exec: none of TAPESTRY_NODE_COLLECTORS='%s' is on "
			"this host (%s): no address of it, nor its name", map, self);
		return 1;
	}
	if (found != 1 && from_file(argv[1], addr, sizeof(addr)))
		return 1;
	setenv("TAPESTRY_COLLECTOR", addr, 1);
	unsetenv("TAPESTRY_NODE_COLLECTORS");
	if ((pre = getenv("TAPESTRY_RANK_PRELOAD")) && *pre) {
		setenv("LD_PRELOAD", pre, 1);
		unsetenv("TAPESTRY_RANK_PRELOAD");
	}
	execvp(argv[3], argv + 3);
	mgr_err("rank-exec: cannot execute %s: %s", argv[3], strerror(errno));
	return 127;
}
