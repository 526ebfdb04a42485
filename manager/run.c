/*
 * manager/run.c - `tapestry run`: trace one program on this host.
 *
 * The embedded default of MISSION.md: starts a root receiver
 * (tapestry-collector --output DIR) and a node collector whose parent it is,
 * runs PROGRAM with the sensor preloaded and pointed at the node collector,
 * then drains the tree (SIGTERM: each collector forwards what it holds and
 * waits for the acknowledgements before it exits) and prints the summary.
 * Everything started is stopped on every path out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "manager/mgr.h"

#define START_TIMEOUT_MS 10000
#define DRAIN_TIMEOUT_MS 60000

struct child {
	pid_t pid;
	int port;
	const char *what;
};

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
	      "  Exit status: PROGRAM's (or 1 when tracing failed).\n",
	      out);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Start argv with stdout on a pipe; read "listening HOST:PORT" from it. */
static int start_collector(const char *argv[], struct child *c)
{
	int p[2];
	char buf[256];
	size_t len = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	c->pid = fork();
	if (c->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (c->pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		unsetenv("LD_PRELOAD");
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	long long deadline = now_ms() + START_TIMEOUT_MS;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	while (now_ms() < deadline && len < sizeof(buf) - 1) {
		ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);

		if (n > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			char *l = strstr(buf, "listening ");
			char *colon = l ? strchr(l, '\n') : NULL;
			if (colon) {
				*colon = '\0';
				colon = strrchr(l, ':');
				if (colon) {
					c->port = atoi(colon + 1);
					break;
				}
			}
		} else if (n == 0) {
			break;	/* exited */
		} else {
			if (waitpid(c->pid, NULL, WNOHANG) == c->pid) {
				c->pid = -1;
				break;
			}
			usleep(10000);
		}
	}
	close(p[0]);
	return c->port > 0 ? 0 : -1;
}

/* SIGTERM c and wait up to timeout; SIGKILL after. Returns its status. */
static int stop_child(struct child *c, int timeout_ms)
{
	int status = 0;

	if (c->pid <= 0)
		return 0;
	kill(c->pid, SIGTERM);
	long long deadline = now_ms() + timeout_ms;
	for (;;) {
		pid_t r = waitpid(c->pid, &status, WNOHANG);

		if (r == c->pid)
			break;
		if (now_ms() > deadline) {
			mgr_err("%s (pid %d) did not drain in %d s: killed",
				c->what, (int)c->pid, timeout_ms / 1000);
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			c->pid = -1;
			return -1;
		}
		usleep(20000);
	}
	c->pid = -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Which MPI sensor fits prog: "openmpi", "mpich" or NULL. */
static const char *detect_mpi(const char *prog)
{
	char cmd[4096], line[1024];
	const char *flavour = NULL;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "p=$(command -v '%s'); f=$(readlink -f \"$p\"); "
		 "echo \"$f\"; ldd \"$f\" 2>/dev/null", prog);
	if (!(p = popen(cmd, "r")))
		return NULL;
	while (!flavour && fgets(line, sizeof(line), p)) {
		if (strstr(line, "openmpi") || strstr(line, "libmpi.so"))
			flavour = "openmpi";
		else if (strstr(line, "mpich") || strstr(line, "hydra"))
			flavour = "mpich";
	}
	while (fgets(line, sizeof(line), p))
		;
	pclose(p);
	return flavour;
}

int mgr_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"sensors", required_argument, NULL, 's'},
		{"mpi", required_argument, NULL, 'm'},
		{"secret-file", required_argument, NULL, 'S'},
		{"keep-going", no_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *sensors = "libc,mem", *mpi = NULL, *secret = NULL;
	char defdir[64], rootaddr[64], nodeaddr[64], *collector = NULL, *lib = NULL;
	struct child root = {-1, 0, "root receiver"}, node = {-1, 0, "node collector"};
	int c, status = 1, keep_going = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 's': sensors = optarg; break;
		case 'm': mpi = optarg; break;
		case 'S': secret = optarg; break;
		case 'k': keep_going = 1; break;
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
	if (strstr(sensors, "mpi") && !mpi && !(mpi = detect_mpi(argv[optind]))) {
		mgr_err("cannot tell which MPI %s uses: give --mpi openmpi|mpich",
			argv[optind]);
		return 2;
	}

	collector = mgr_find("TAPESTRY_COLLECTOR_BIN", "../collector/tapestry-collector",
			     TAPESTRY_BINDIR "/tapestry-collector");
	if (strstr(sensors, "mpi")) {
		char rel[128], inst[512];

		snprintf(rel, sizeof(rel), "../sensor/.libs/libtapestry-mpi-%s.so", mpi);
		snprintf(inst, sizeof(inst), TAPESTRY_PKGLIBDIR "/libtapestry-mpi-%s.so", mpi);
		lib = mgr_find("TAPESTRY_SENSOR_LIB", rel, inst);
	} else {
		lib = mgr_find("TAPESTRY_SENSOR_LIB", "../sensor/.libs/libtapestry-sensor.so",
			       TAPESTRY_PKGLIBDIR "/libtapestry-sensor.so");
	}
	if (!collector || access(collector, X_OK) != 0) {
		mgr_err("collector not found at %s", collector ? collector : "?");
		goto out;
	}
	if (!lib || access(lib, R_OK) != 0) {
		mgr_err("sensor library not found at %s", lib ? lib : "?");
		goto out;
	}

	const char *root_argv[] = {collector, "--listen", "127.0.0.1:0", "--print-port",
			     "--output", dir, NULL, NULL, NULL};
	if (secret) {
		root_argv[6] = "--secret-file";
		root_argv[7] = secret;
	}
	if (start_collector(root_argv, &root) < 0) {
		mgr_err("the root receiver did not start (see its messages above)");
		goto out;
	}
	snprintf(rootaddr, sizeof(rootaddr), "127.0.0.1:%d", root.port);
	const char *node_argv[] = {collector, "--listen", "127.0.0.1:0", "--print-port",
			     "--parent", rootaddr, NULL, NULL, NULL};
	if (secret) {
		node_argv[6] = "--secret-file";
		node_argv[7] = secret;
	}
	if (start_collector(node_argv, &node) < 0) {
		mgr_err("the node collector did not start (see its messages above)");
		goto out;
	}
	snprintf(nodeaddr, sizeof(nodeaddr), "127.0.0.1:%d", node.port);

	pid_t app = fork();
	if (app < 0) {
		mgr_err("fork: %s", strerror(errno));
		goto out;
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
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	int ast = 0;
	while (waitpid(app, &ast, 0) < 0 && errno == EINTR)
		;
	int app_status = WIFEXITED(ast) ? WEXITSTATUS(ast) : 128 + WTERMSIG(ast);
	if (WIFEXITED(ast) && WEXITSTATUS(ast) == 127) {
		mgr_err("%s could not be started", argv[optind]);
	}
	int drained = stop_child(&node, DRAIN_TIMEOUT_MS);
	drained |= stop_child(&root, DRAIN_TIMEOUT_MS);
	if (drained) {
		mgr_err("collection did not finish cleanly: the job directory %s may "
			"be incomplete (tapestry report says what it holds)", dir);
		status = 1;
		goto out;
	}
	fprintf(stderr, "tapestry: job directory %s written\n", dir);
	status = app_status;
	if (keep_going)
		status = 0;
out:
	stop_child(&node, 5000);
	stop_child(&root, 5000);
	free(collector);
	free(lib);
	return status;
}
