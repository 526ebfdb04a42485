/*
 * manager/launch/run.c - `tapestry run`: trace one program on this host.
 *
 * The embedded default of MISSION.md: starts a root receiver
 * (tapestry-collector --output DIR) and a node collector whose parent it is,
 * runs PROGRAM with the sensor preloaded and pointed at the node collector,
 * then drains the tree (SIGTERM: each collector forwards what it holds and
 * waits for the acknowledgements before it exits) and prints the summary.
 * When PROGRAM is an mpirun (or mpiexec), the network is measured first
 * with the MPI ping-pong run by that mpirun on two local processes
 * (manager/launch/netcal.c), for the SimGrid platform export.
 * Everything started is stopped on every path out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/netcal.h"
#include "manager/launch/spawn.h"

#define START_TIMEOUT_MS 10000
#define DRAIN_TIMEOUT_MS 60000

static void help(FILE *out)
{
	fputs("usage: tapestry run [-o DIR] [--sensors LIST] [--mpi FLAVOUR] [--secret-file F]\n"
	      "                    -- PROGRAM [ARGS...]\n"
	      "  Traces PROGRAM on this host: starts a root receiver and a node collector\n"
	      "  on loopback, runs PROGRAM with the sensor preloaded, collects, and writes\n"
	      "  the job directory DIR (default: ./tapestry-job-PID).\n"
	      "  -o, --output DIR      job directory to create (must not exist)\n"
	      "  --sensors LIST        libc,mpi,mem (default libc,mem; mpi adds the MPI sensor)\n"
	      "  --mpi FLAVOUR         openmpi or mpich: which MPI sensor (default: detected\n"
	      "                        from PROGRAM, or mpirun's installation)\n"
	      "  --secret-file F       job secret the sensors must prove (default: none)\n"
	      "  --keep-going          do not fail when PROGRAM exits non-zero\n"
	      "  --no-pingpong         when PROGRAM is mpirun/mpiexec, do not measure the\n"
	      "                        network first (by default: an MPI ping-pong of two\n"
	      "                        processes with that mpirun, for the SimGrid\n"
	      "                        platform; DIR/logs/pingpong.log)\n"
	      "  Exit status: PROGRAM's (or 1 when tracing failed).\n",
	      out);
}

/* Is prog an mpirun or mpiexec? */
static int is_mpirun_name(const char *prog)
{
	const char *base = strrchr(prog, '/');

	base = base ? base + 1 : prog;
	return !strncmp(base, "mpirun", 6) || !strncmp(base, "mpiexec", 7);
}

/* The ping-pong with PROGRAM's mpirun (flavour mpi, else detected), two
 * processes on this host. */
static void calibrate(const char *dir, const char *mpirun, const char *mpi,
		      struct mgr_netcal *nc)
{
	char logdir[PATH_MAX], log[PATH_MAX + 32];
	const char *argv[] = {mpirun, "-np", "2", NULL, NULL};

	if (!mpi && !(mpi = mgr_detect_mpi(mpirun))) {
		mgr_netcal_skip(nc, "failed: cannot tell which MPI %s is "
				"(give --mpi)", mpirun);
		mgr_err("warning: network ping-pong %s: the SimGrid platform "
			"will use default latency and bandwidth", nc->note);
		return;
	}
	if (!strcmp(mpi, "openmpi"))
		argv[3] = "--oversubscribe";
	snprintf(logdir, sizeof(logdir), "%s/logs", dir);
	snprintf(log, sizeof(log), "%s/pingpong.log", logdir);
	if (mkdir(logdir, 0755) != 0 && errno != EEXIST) {
		mgr_netcal_skip(nc, "failed: cannot create %s: %s", logdir,
				strerror(errno));
		mgr_err("warning: network ping-pong %s: the SimGrid platform "
			"will use default latency and bandwidth", nc->note);
		return;
	}
	mgr_netcal_run(argv, mpi, log, MGR_NETCAL_TIMEOUT_MS, nc);
}

/* The root receiver writing dir and a node collector under it, both on
 * loopback with ports the kernel picks; nodeaddr gets the node's address.
 * 0, or -1 after a message. */
static int start_collectors(const char *collector, const char *dir, const char *secret,
			    struct mgr_child *root, struct mgr_child *node,
			    char *nodeaddr, size_t len)
{
	char rootaddr[64];
	const char *root_argv[] = {collector, "--listen", "127.0.0.1:0", "--print-port",
			     "--output", dir, NULL, NULL, NULL};
	if (secret) {
		root_argv[6] = "--secret-file";
		root_argv[7] = secret;
	}
	if (mgr_spawn_listener(root_argv, root, START_TIMEOUT_MS, 0, -1) < 0) {
		mgr_err("the root receiver did not start (see its messages above)");
		return -1;
	}
	snprintf(rootaddr, sizeof(rootaddr), "127.0.0.1:%d", root->port);
	const char *node_argv[] = {collector, "--listen", "127.0.0.1:0", "--print-port",
			     "--parent", rootaddr, NULL, NULL, NULL};
	if (secret) {
		node_argv[6] = "--secret-file";
		node_argv[7] = secret;
	}
	if (mgr_spawn_listener(node_argv, node, START_TIMEOUT_MS, 0, -1) < 0) {
		mgr_err("the node collector did not start (see its messages above)");
		return -1;
	}
	snprintf(nodeaddr, len, "127.0.0.1:%d", node->port);
	return 0;
}

/* Run argv[0] with the sensor library lib preloaded, sending to the node
 * collector at nodeaddr, and wait for it: its exit status (128 + signal
 * when killed), or -1 after a message when it cannot be forked. */
static int run_program(char **argv, const char *lib, const char *nodeaddr,
		       const char *sensors, const char *secret)
{
	pid_t app = fork();
	if (app < 0) {
		mgr_err("fork: %s", strerror(errno));
		return -1;
	}
	if (app == 0) {
		const char *old = getenv("LD_PRELOAD");
		char *pre = NULL;

		if (old && *old && asprintf(&pre, "%s:%s", lib, old) > 0)
			setenv("LD_PRELOAD", pre, 1);
		else
			setenv("LD_PRELOAD", lib, 1);
		setenv("TAPESTRY_COLLECTOR", nodeaddr, 1);
		setenv("TAPESTRY_SENSORS", sensors, 1);
		if (secret)
			setenv("TAPESTRY_SECRET_FILE", secret, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	int ast = 0;
	while (waitpid(app, &ast, 0) < 0 && errno == EINTR)
		;
	int app_status = WIFEXITED(ast) ? WEXITSTATUS(ast) : 128 + WTERMSIG(ast);
	if (WIFEXITED(ast) && WEXITSTATUS(ast) == 127)
		mgr_err("%s could not be started", argv[0]);
	return app_status;
}

int mgr_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"sensors", required_argument, NULL, 's'},
		{"mpi", required_argument, NULL, 'm'},
		{"secret-file", required_argument, NULL, 'S'},
		{"keep-going", no_argument, NULL, 'k'},
		{"no-pingpong", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *sensors = "libc,mem", *mpi = NULL, *secret = NULL;
	char defdir[64], nodeaddr[64], *collector = NULL, *lib = NULL;
	struct mgr_child root, node;
	int c, status = 1, keep_going = 0, pingpong = 1, is_mpirun;
	struct mgr_netcal nc;

	mgr_child_init(&root, "root receiver");
	mgr_child_init(&node, "node collector");
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 's': sensors = optarg; break;
		case 'm': mpi = optarg; break;
		case 'S': secret = optarg; break;
		case 'k': keep_going = 1; break;
		case 'P': pingpong = 0; break;
		case 'h': help(stdout); return 0;
		default: help(stderr); return 2;
		}
	}
	if (optind >= argc) {
		mgr_err("run needs a PROGRAM to trace (tapestry run -- PROGRAM ARGS)");
		return 2;
	}
	if (!dir) {
		snprintf(defdir, sizeof(defdir), "tapestry-job-%d", (int)getpid());
		dir = defdir;
	}
	struct stat sb;
	if (stat(dir, &sb) == 0) {
		mgr_err("%s already exists: choose a new job directory with -o", dir);
		return 2;
	}
	if (mpi && strcmp(mpi, "openmpi") && strcmp(mpi, "mpich")) {
		mgr_err("--mpi takes openmpi or mpich, not '%s'", mpi);
		return 2;
	}
	if (strstr(sensors, "mpi") && !mpi && !(mpi = mgr_detect_mpi(argv[optind]))) {
		mgr_err("cannot tell which MPI %s uses: give --mpi openmpi|mpich",
			argv[optind]);
		return 2;
	}

	collector = mgr_find_collector();
	lib = mgr_find_sensor(strstr(sensors, "mpi") ? mpi : NULL);
	if (!collector || access(collector, X_OK) != 0) {
		mgr_err("collector not found at %s", collector ? collector : "?");
		goto out;
	}
	if (!lib || access(lib, R_OK) != 0) {
		mgr_err("sensor library not found at %s", lib ? lib : "?");
		goto out;
	}

	if (start_collectors(collector, dir, secret, &root, &node, nodeaddr,
			     sizeof(nodeaddr)))
		goto out;
	is_mpirun = is_mpirun_name(argv[optind]);
	if (is_mpirun && pingpong)
		calibrate(dir, argv[optind], mpi, &nc);
	else if (is_mpirun)
		mgr_netcal_skip(&nc, "skipped (--no-pingpong)");

	int app_status = run_program(argv + optind, lib, nodeaddr, sensors, secret);
	if (app_status < 0)
		goto out;
	int drained = mgr_child_stop(&node, DRAIN_TIMEOUT_MS);
	drained |= mgr_child_stop(&root, DRAIN_TIMEOUT_MS);
	if (drained) {
		mgr_err("collection did not finish cleanly: the job directory %s may "
			"be incomplete (tapestry report says what it holds)", dir);
		status = 1;
		goto out;
	}
	fprintf(stderr, "tapestry: job directory %s written\n", dir);
	if (is_mpirun)
		mgr_netcal_save(dir, &nc);	/* a failure: the export's defaults */
	status = app_status;
	if (keep_going)
		status = 0;
out:
	mgr_child_stop(&node, 5000);
	mgr_child_stop(&root, 5000);
	free(collector);
	free(lib);
	return status;
}
