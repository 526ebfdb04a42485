/*
 * manager/launch/run.c - `tapestry run`: trace one program on this host.
 *
 * The embedded default of MISSION.md: starts a root receiver
 * (tapestry-collector --output DIR) and a node collector whose parent it is,
 * runs PROGRAM with the sensor preloaded and pointed at the node collector,
 * then drains the tree (SIGTERM: each collector forwards what it holds and
 * waits for the acknowledgements before it exits) and prints the summary.
 * When PROGRAM is an MPI launcher (mpiguess.c; its MPI sensor is then on
 * by default), the network is measured first
 * with the MPI ping-pong run by that mpirun on two local processes
 * (manager/launch/netcal.c), for the SimGrid platform export.
 * Everything started is stopped on every path out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "manager/launch/appsig.h"
#include "manager/launch/ca.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "manager/launch/cores.h"
#include "manager/launch/netcal.h"
#include "manager/launch/summary.h"
#include "manager/launch/spawn.h"
#include "manager/launch/status.h"
#include "proto/error.h"
#include "proto/jobdir.h"

#define START_TIMEOUT_MS 10000
#define DRAIN_TIMEOUT_MS 60000
#define APP_GRACE_MS 10000	/* after the signal passed on, before SIGKILL */

static const struct mgr_opts_doc run_doc = {
	.opt = {
		{"output", 'o', MGR_OPT_SHORT, "DIR",
		 "job directory to create (must not exist)"},
		{"verbose", 'v', MGR_OPT_SHORT, NULL,
		 "show the collectors' messages too (always kept in\n"
		 "DIR/logs)"},
		{"sensors", 's', 0, "LIST",
		 "libc,mpi,mem (default libc,mem, and mpi when PROGRAM\n"
		 "is an MPI launcher (mpirun, mpiexec, srun...) or\n"
		 "links an MPI library)"},
		{"mpi", 'm', 0, "FLAVOUR",
		 "openmpi or mpich: which MPI sensor (default: told by\n"
		 "PROGRAM's name and links, its libraries, a launcher's\n"
		 "--version)"},
		{"secret-file", 'S', 0, "F",
		 "job secret the sensors must prove (default: a new\n"
		 "one, DIR/creds/secret, as launch makes)"},
		{"keep-going", 'k', 0, NULL, "do not fail when PROGRAM exits non-zero"},
		{"no-pingpong", 'P', 0, NULL,
		 "when PROGRAM is an MPI launcher, do not measure the\n"
		 "network first (by default: an MPI ping-pong of two\n"
		 "processes with that launcher, for the SimGrid\n"
		 "platform; DIR/logs/pingpong.log). A measure is\n"
		 "kept for a day and used again with the same\n"
		 "launcher, MPI and settings"},
		{"fresh-pingpong", 'R', 0, NULL,
		 "measure again even when a kept measure applies"},
		{"trace-launcher", 'W', 0, NULL,
		 "show the launchers (mpirun, orted, mpiexec.hydra,\n"
		 "hydra_pmi_proxy, srun ..., and shells or env that\n"
		 "only execute the program) in the exports and the\n"
		 "counts: traced either way, left out by default"},
	},
	.in_order = 1, .col = 24,
	.head = "usage: tapestry run [-o DIR] [-v] [--sensors LIST] [--mpi FLAVOUR] [--secret-file F]\n"
		"                    [--keep-going] [--no-pingpong | --fresh-pingpong]\n"
		"                    [--trace-launcher]\n"
		"                    -- PROGRAM [ARGS...]\n"
		"  Traces PROGRAM on this host: starts a root receiver and a node collector\n"
		"  on loopback, runs PROGRAM with the sensor preloaded, collects, and writes\n"
		"  the job directory DIR (default: ./tapestry-job-PID).\n",
	.tail = "  More ranks (-np N) than this host's cores: the MPI runs in its yielding\n"
		"  mode (one line says so).\n"
		"  SIGTERM, SIGINT or SIGHUP to tapestry: passed on to PROGRAM's process\n"
		"  group; the collectors are drained and the job directory written.\n"
		"  Exit status: PROGRAM's (or 1 when tracing failed; 127 when PROGRAM\n"
		"  cannot be executed, and then no job directory is made; 128+N after\n"
		"  signal N to tapestry).\n",
};

static const char *mpi_name(const char *flavour)
{
	return !strcmp(flavour, "openmpi") ? "Open MPI" : "MPICH";
}

/* One line before the run when the MPI of the program (g->app) is not
 * the launcher's or the --mpi given (mpi): which sensor runs, and what
 * the processes will do. */
static void say_mismatch(char *const argv[], const char *mpi, int given,
			 const struct mgr_mpi_guess *g)
{
	const char *app = strrchr(g->app, '/');

	app = app ? app + 1 : g->app;
	if (!g->app_flavour || !mpi)
		return;
	if (given && strcmp(mpi, g->app_flavour))
		fprintf(stderr, "tapestry: --mpi %s, but %s links %s: the %s "
			"sensor stands down in its processes (libc calls only)\n",
			mpi, app, mpi_name(g->app_flavour), mpi_name(mpi));
	else if (g->launcher_flavour && strcmp(g->launcher_flavour, g->app_flavour))
		fprintf(stderr, "tapestry: %s links %s but %s is %s's launcher: "
			"the %s sensor is used (its ranks may each start as a "
			"singleton)\n", app, mpi_name(g->app_flavour), argv[0],
			mpi_name(g->launcher_flavour), mpi_name(g->app_flavour));
}

/* The sensors and the MPI flavour for the program argv[0]: --sensors
 * when given (*sensors non-NULL), else libc,mem, plus mpi when the program
 * is an MPI launcher or links an MPI library; the flavour from --mpi, else
 * guessed (g: the program's MPI, the launcher's when the program says
 * nothing). 0, or 2 (a usage error, said) when the MPI sensor is wanted
 * and no step told the flavour. */
static int choose_sensors(char *const argv[], const char **sensors,
			  const char **mpi, struct mgr_mpi_guess *g)
{
	int want_mpi, given = *mpi != NULL;

	mgr_mpi_guess(argv[0], argv + 1, g);
	if (!*sensors)
		*sensors = g->launcher || g->links_mpi ? "libc,mpi,mem" : "libc,mem";
	want_mpi = strstr(*sensors, "mpi") != NULL;
	if (!want_mpi)
		return 0;
	if (!*mpi && !(*mpi = g->flavour)) {
		mgr_err("cannot tell which MPI %s uses (tried: %s): give --mpi "
			"openmpi|mpich, or --sensors libc,mem to trace it without "
			"the MPI sensor", argv[0], g->tried);
		return 2;
	}
	say_mismatch(argv, *mpi, given, g);
	return 0;
}

/* A launcher the ping-pong can run with (mpirun -np 2: not srun). */
static int pingpong_launcher(const char *prog, const struct mgr_mpi_guess *g)
{
	const char *base = strrchr(prog, '/');

	base = base ? base + 1 : prog;
	return g->launcher && strncmp(base, "srun", 4) != 0;
}

/* The ping-pong with PROGRAM's mpirun (flavour mpi, else detected), two
 * processes on this host; a measure kept for the same launcher, MPI and
 * settings when there is one and not fresh (netcal.h). Its mpirun's end
 * is left to mgr_netcal_reap(j) after the program. */
static void calibrate(const char *dir, const char *mpirun, const char *mpi,
		      int fresh, struct mgr_netcal *nc, struct mgr_netcal_job *j)
{
	char logdir[PATH_MAX], log[PATH_MAX + 32];
	const char *argv[] = {mpirun, "-np", "2", NULL, NULL};
	struct mgr_netcal_key key;

	if (!mpi) {
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
	if (mkdir(logdir, 0700) != 0 && errno != EEXIST) {
		mgr_netcal_skip(nc, "failed: cannot create %s: %s", logdir,
				strerror(errno));
		mgr_err("warning: network ping-pong %s: the SimGrid platform "
			"will use default latency and bandwidth", nc->note);
		return;
	}
	mgr_netcal_key_init(&key, mpi, mpirun);
	mgr_netcal_key_add(&key, "host localhost 2 %s", argv[3] ? argv[3] : "");
	if (!fresh && mgr_netcal_cached(&key, log, nc))
		return;
	if (mgr_netcal_start(argv, mpi, log, MGR_NETCAL_TIMEOUT_MS, j, nc) == 0 &&
	    mgr_netcal_finish(j, nc) == 0)
		mgr_netcal_store(&key, log, nc);
}

/* Everything one `tapestry run` holds, released by run_free(). */
struct run {
	const char *dir, *sensors, *mpi, *secret;
	char **prog;			/* PROGRAM ARGS..., NULL-terminated */
	int keep_going, pingpong, verbose, launcher, trace_launcher;
	char *collector, *lib;
	struct mgr_child root, node;
	pid_t tee[2];			/* -v: the tee of each collector's log */
	char nodeaddr[64], rootaddr[64];
	char spool[PATH_MAX + 8];	/* DIR/spool: what sensors could not deliver */
	struct mgr_netcal nc;
	struct mgr_netcal_job ncjob;	/* its mpirun, reaped after the program */
	struct mgr_mpi_guess guess;
	char defdir[64];
	char absdir[PATH_MAX];		/* dir made absolute */
	char abssecret[PATH_MAX];	/* --secret-file made absolute */
	char secretpath[PATH_MAX + 16];	/* the one made for the job */
};

/* The file a collector's stderr goes to: DIR/logs/collector-NAME.log, and
 * with -v also the terminal (through a tee whose pid is *tee). The
 * descriptor to hand to mgr_spawn_listener (closed by the caller after),
 * or -1. */
static int log_fd(const struct run *R, const char *name, pid_t *tee)
{
	char path[PATH_MAX];
	int fd, p[2];

	snprintf(path, sizeof(path), "%s/logs/collector-%s.log", R->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || !R->verbose)
		return fd;
	if (pipe2(p, O_CLOEXEC) < 0)
		return fd;
	*tee = fork();
	if (*tee == 0) {
		dup2(p[0], STDIN_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execlp("tee", "tee", "-a", path, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	close(fd);
	if (*tee < 0) {
		close(p[1]);
		return -1;
	}
	return p[1];
}

/* A secret per job when none is given (docs/SECURITY.md, "Streams"):
 * without one any local user could speak for the job's streams. Made in
 * DIR/creds as launch makes it (mgr_ca_generate). 0, or PROTO_E_IO
 * (said, mgr_fail). */
static int make_secret(struct run *R)
{
	char creds[PATH_MAX];

	snprintf(creds, sizeof(creds), "%s/creds", R->dir);
	if (mgr_ca_generate(creds, NULL, 0, 30) != 0) {
		return mgr_fail(PROTO_E_IO, "cannot make the job's secret in %s",
				creds);
	}
	snprintf(R->secretpath, sizeof(R->secretpath), "%s/%s", creds,
		 MGR_CA_SECRET);
	R->secret = R->secretpath;
	return 0;
}

/* Start the root receiver writing DIR and the node collector below it,
 * their messages into DIR/logs. 0, or a negative code (said, mgr_fail). */
static int start_collectors(struct run *R)
{
	char logs[PATH_MAX], rootaddr[64];
	/* a STATS report every second, as launch's collectors: `tapestry
	 * status DIR` shows both with their rates while the program runs */
	const char *root_argv[] = {R->collector, "--listen", "127.0.0.1:0",
				   "--print-port", "--stats-period", "1s",
				   "--output", R->dir, NULL, NULL, NULL};
	const char *node_argv[] = {R->collector, "--listen", "127.0.0.1:0",
				   "--print-port", "--stats-period", "1s",
				   "--parent", rootaddr, "--name", "node", NULL,
				   NULL, NULL};
	int fd, rc;

	snprintf(logs, sizeof(logs), "%s/logs", R->dir);
	if (mkdir(R->dir, 0700) < 0)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %s", R->dir,
				strerror(errno));
	if (mkdir(logs, 0700) < 0)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %s", logs,
				strerror(errno));
	snprintf(R->spool, sizeof(R->spool), "%s/spool", R->dir);
	if (mkdir(R->spool, 0700) < 0)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %s", R->spool,
				strerror(errno));
	if (!R->secret && (rc = make_secret(R)))
		return rc;
	if (R->secret) {
		root_argv[8] = node_argv[10] = "--secret-file";
		root_argv[9] = node_argv[11] = R->secret;
	}
	fd = log_fd(R, "root", &R->tee[0]);
	rc = mgr_spawn_listener(root_argv, &R->root, START_TIMEOUT_MS, 0, fd);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		return mgr_fail(PROTO_E_STATE, "the root receiver did not start (its "
				"messages: %s/collector-root.log)", logs);
	snprintf(rootaddr, sizeof(rootaddr), "127.0.0.1:%d", R->root.port);
	snprintf(R->rootaddr, sizeof(R->rootaddr), "%s", rootaddr);
	mgr_status_note(R->dir, rootaddr, R->secret);
	fd = log_fd(R, "node", &R->tee[1]);
	rc = mgr_spawn_listener(node_argv, &R->node, START_TIMEOUT_MS, 0, fd);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		return mgr_fail(PROTO_E_STATE, "the node collector did not start "
				"(its messages: %s/collector-node.log)", logs);
	snprintf(R->nodeaddr, sizeof(R->nodeaddr), "127.0.0.1:%d", R->node.port);
	return 0;
}

/* Run PROGRAM with the sensor preloaded; its exit status as a shell says,
 * or PROTO_E_STATE (said, mgr_fail) when it could not be forked. */
static int run_program(struct run *R)
{
	char how[128];
	int code;
	pid_t app = fork();

	if (app < 0)
		return mgr_fail(PROTO_E_STATE, "fork: %s", strerror(errno));
	if (app == 0) {
		const char *old = getenv("LD_PRELOAD");
		char *pre = NULL;

		mgr_app_child();
		if (old && *old && asprintf(&pre, "%s:%s", R->lib, old) > 0)
			setenv("LD_PRELOAD", pre, 1);
		else
			setenv("LD_PRELOAD", R->lib, 1);
		setenv("TAPESTRY_COLLECTOR", R->nodeaddr, 1);
		/* a node collector that dies: its sensors go to the root, and
		 * what none took is left in the spool (issue 33) */
		setenv("TAPESTRY_COLLECTOR_FALLBACK", R->rootaddr, 1);
		setenv("TAPESTRY_SPOOL", R->spool, 1);
		setenv("TAPESTRY_SENSORS", R->sensors, 1);
		if (R->trace_launcher)	/* META launcher "traced": shown */
			setenv("TAPESTRY_TRACE_LAUNCHER", "1", 1);
		else
			unsetenv("TAPESTRY_TRACE_LAUNCHER");
		if (R->secret)
			setenv("TAPESTRY_SECRET_FILE", R->secret, 1);
		execvp(R->prog[0], R->prog);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", R->prog[0],
			strerror(errno));
		_exit(127);
	}
	code = mgr_app_wait(app, APP_GRACE_MS);
	mgr_app_ended(code, how, sizeof(how));
	if (code)	/* a quiet terminal: a clean end goes without saying */
		fprintf(stderr, "tapestry: %s %s%s\n", R->prog[0], how,
			mgr_sig_caught() ? " (tapestry was signalled: it stopped "
			"the program)" : "");
	return code;
}

static void run_free(struct run *R)
{
	mgr_child_stop(&R->node, 5000);
	mgr_child_stop(&R->root, 5000);
	mgr_netcal_abort(&R->ncjob);	/* ended already, or stopped now */
	for (int i = 0; i < 2; i++)
		if (R->tee[i] > 0)
			while (waitpid(R->tee[i], NULL, 0) < 0 && errno == EINTR)
				;
	free(R->collector);
	free(R->lib);
}

/* --sensors: names among libc, mpi and mem separated by commas, at least
 * one (the sensor would skip an unknown name and trace with the others,
 * silently for the user here). 1, or 0 after a message. */
static int sensors_ok(const char *list)
{
	static const char *const names[] = {"libc", "mpi", "mem"};
	const char *p = list;

	do {
		size_t n = strcspn(p, ","), k;

		for (k = 0; k < 3; k++)
			if (strlen(names[k]) == n && !strncmp(p, names[k], n))
				break;
		if (k == 3) {
			mgr_err("--sensors takes names among libc, mpi and mem "
				"separated by commas, not '%.*s'", (int)n, p);
			return 0;
		}
		p += n;
	} while (*p++ == ',');
	return 1;
}

/* Whether PROGRAM can be run as execvp would find it. */
static int executable(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; ; p++) {
		size_t n = strcspn(p, ":");
		struct stat sb;

		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, n ? p : ".",
			 "/", prog);
		if (access(buf, X_OK) == 0 && stat(buf, &sb) == 0 &&
		    S_ISREG(sb.st_mode))
			return 1;
		p += n;
		if (!*p)
			return 0;
	}
}

/* Options into R; 0, or the exit status of a usage error or --help + 10. */
static int parse(struct run *R, int argc, char **argv)
{
	struct stat sb;
	int c;

	optind = 1;
	while ((c = mgr_opts_next(&run_doc, argc, argv)) > 0) {
		switch (c) {
		case 'o': R->dir = optarg; break;
		case 's': R->sensors = optarg; break;
		case 'm': R->mpi = optarg; break;
		case 'S': R->secret = optarg; break;
		case 'k': R->keep_going = 1; break;
		case 'P': R->pingpong = 0; break;
		case 'R': R->pingpong = 2; break;
		case 'v': R->verbose = 1; break;
		case 'W': R->trace_launcher = 1; break;
		}
	}
	if (c < 0)
		return c == MGR_OPTS_HELP ? 10 : 2;
	if (optind >= argc) {
		mgr_err("run needs a PROGRAM to trace (tapestry run -- PROGRAM ARGS)");
		return 2;
	}
	R->prog = argv + optind;
	if (!R->dir) {
		snprintf(R->defdir, sizeof(R->defdir), "tapestry-job-%d",
			 (int)getpid());
		R->dir = R->defdir;
	}
	if (stat(R->dir, &sb) == 0) {
		mgr_err("%s already exists: choose a new job directory with -o",
			R->dir);
		return 2;
	}
	if (R->mpi && strcmp(R->mpi, "openmpi") && strcmp(R->mpi, "mpich")) {
		mgr_err("--mpi takes openmpi or mpich, not '%s'", R->mpi);
		return 2;
	}
	if (R->sensors && !sensors_ok(R->sensors))
		return 2;
	if (!executable(R->prog[0])) {
		mgr_err("cannot execute %s: %s: nothing traced, no job directory "
			"made", R->prog[0], strchr(R->prog[0], '/') ?
			"no such executable file" : "not found in PATH");
		return 127;
	}
	/* the sensors and collectors run elsewhere (a program that changes
	 * directory): they are handed absolute paths */
	if (mgr_abs_path(R->dir, R->absdir, sizeof(R->absdir)) ||
	    (R->secret && mgr_abs_path(R->secret, R->abssecret,
				       sizeof(R->abssecret))))
		return 1;
	R->dir = R->absdir;
	if (R->secret)
		R->secret = R->abssecret;
	return choose_sensors(R->prog, &R->sensors, &R->mpi, &R->guess);
}

/* The components: the collector and the sensor library. 0, or
 * PROTO_E_NOTFOUND (said, mgr_fail). */
static int find_parts(struct run *R)
{
	R->collector = mgr_find_collector();
	R->lib = mgr_find_sensor(strstr(R->sensors, "mpi") ? R->mpi : NULL);
	if (!R->collector || access(R->collector, X_OK) != 0) {
		return mgr_fail(PROTO_E_NOTFOUND, "collector not found at %s",
				R->collector ? R->collector : "?");
	}
	if (!R->lib || access(R->lib, R_OK) != 0) {
		return mgr_fail(PROTO_E_NOTFOUND, "sensor library not found at %s",
				R->lib ? R->lib : "?");
	}
	return 0;
}

/* The sensors hold the trace when a node runs a rank per core or more
 * (TAPESTRY_HOLD unset or auto, stream mode: sensor/rt_init.c). */
static int sensors_hold(long ranks, int cores)
{
	const char *h = getenv("TAPESTRY_HOLD"), *m = getenv("TAPESTRY_MODE");

	if (h && *h && strcmp(h, "auto"))
		return 0;
	if (m && !strcmp(m, "postmortem"))
		return 0;
	/* a live feed asked for records every TAPESTRY_DRAIN_MS: streamed */
	if (getenv("TAPESTRY_DRAIN_MS") && *getenv("TAPESTRY_DRAIN_MS"))
		return 0;
	return ranks > 0 && ranks >= cores;
}

#define HOLD_SAID "the sensors hold the trace (drained when a ring is half " \
	"full, a full ring waits: nothing dropped; TAPESTRY_HOLD=off streams)"

/* More ranks asked of this host than it has cores: say so in one line and
 * put the MPI in its yielding mode (the environment the launcher and the
 * ranks inherit; a setting the user made is kept). A rank per core or
 * more: the sensors hold the trace, said in that line (or its own), and
 * the ranks' sensors told it was (TAPESTRY_HOLD_SAID=1) not to say it
 * once a node themselves. */
static void oversubscribe(const struct run *R)
{
	const char *const *env = mgr_yield_env(R->mpi);
	long n = R->guess.launcher ? mgr_ranks_asked(R->prog + 1) : 0;
	int cores = mgr_local_cores();
	int hold = sensors_hold(n, cores);

	if (hold)
		setenv("TAPESTRY_HOLD_SAID", "1", 1);
	if (n <= cores || !env) {
		if (hold)
			fprintf(stderr, "tapestry: %ld ranks on %d cores here: "
				HOLD_SAID "\n", n, cores);
		return;
	}
	fprintf(stderr, "tapestry: %ld ranks on %d cores here: oversubscribed, "
		"%s set to yield the processor when idle%s%s\n", n, cores, R->mpi,
		hold ? "; " : "", hold ? HOLD_SAID : "");
	for (int i = 0; env[i]; i++) {
		char name[128];
		size_t len = strcspn(env[i], "=");

		snprintf(name, sizeof(name), "%.*s", (int)len, env[i]);
		setenv(name, env[i] + len + 1, 0);
	}
}

/* How collector c ended when it did not stop cleanly, said in one line:
 * killed during the run (kill -9), or failed its drain (its log says
 * why). 1 when it stopped cleanly. */
static int said_stop(struct mgr_child *c, int rc, const char *dir)
{
	if (!rc)
		return 1;
	mgr_err_flush();	/* a drain that timed out, said by the stop */
	if (WIFSIGNALED(c->status))
		mgr_err("the %s was killed by signal %d (%s) during the run",
			c->what, WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
	else if (WIFEXITED(c->status))
		mgr_err("the %s exited with status %d (its messages: %s/logs)",
			c->what, WEXITSTATUS(c->status), dir);
	return 0;
}

/* Drain the node collector, then the root. 1 when both stopped cleanly. */
static int stop_collectors(struct run *R)
{
	int node = mgr_child_stop(&R->node, DRAIN_TIMEOUT_MS);
	int root = mgr_child_stop(&R->root, DRAIN_TIMEOUT_MS);

	return said_stop(&R->node, node, R->dir) & said_stop(&R->root, root, R->dir);
}

/* The job directory is written: read it once and say what it holds. 1
 * when it is complete as far as the job knows, 0 when its disk was full
 * (said: the run then fails). */
static int summarize(struct run *R)
{
	struct mgr_summary sum;
	char net[512] = "";
	int rc;

	if (R->launcher)
		mgr_netcal_brief(&R->nc, net, sizeof(net));
	rc = mgr_summary_read(R->dir, &sum);
	if (rc) {
		mgr_err("%s: cannot read the trace back (%s): tapestry report says "
			"what it holds", R->dir, proto_strerror(rc));
		return 1;
	}
	mgr_summary_print(R->dir, &sum, net, stderr);
	return !sum.nospace_dir[0];
}

int mgr_cmd_run(int argc, char **argv)
{
	struct run R = {.pingpong = 1, .tee = {-1, -1},
			.ncjob = {.pid = -1, .go_fd = -1, .out_fd = -1, .log_fd = -1}};
	int status = 1, app_status, rc, clean;

	mgr_child_init(&R.root, "root receiver");
	mgr_child_init(&R.node, "node collector");
	rc = parse(&R, argc, argv);
	if (rc)
		return rc == 10 ? 0 : rc;
	mgr_sig_catch();
	if (find_parts(&R) || start_collectors(&R)) {
		mgr_err_flush();	/* before what stopping the collectors says */
		goto out;
	}
	R.launcher = pingpong_launcher(R.prog[0], &R.guess);
	if (R.launcher && R.pingpong)	/* the launcher's MPI runs it */
		calibrate(R.dir, R.prog[0], R.guess.launcher_flavour ?
			  R.guess.launcher_flavour : R.mpi, R.pingpong > 1,
			  &R.nc, &R.ncjob);
	else if (R.launcher)
		mgr_netcal_skip(&R.nc, "skipped (--no-pingpong)");
	oversubscribe(&R);
	fprintf(stderr, "tapestry: tracing %s into %s (sensors %s%s%s; "
		"collectors up, logs in %s/logs)\n", R.prog[0], R.dir, R.sensors,
		strstr(R.sensors, "mpi") ? ", " : "",
		strstr(R.sensors, "mpi") ? R.mpi : "", R.dir);
	app_status = mgr_sig_caught() ? 128 + mgr_sig_caught() : run_program(&R);
	mgr_err_flush();	/* a program not started, said now */
	mgr_netcal_reap(&R.ncjob, 10000);	/* its mpirun ended beside the program */
	if (app_status < 0)
		goto out;
	/* a collector killed during the run: its sensors went on to the
	 * next collector or to the spool, and the summary says what the job
	 * holds; the run still fails (a fault the user should know of) */
	clean = stop_collectors(&R);
	rc = mgr_take_spool(R.dir, R.spool);
	if (rc)
		mgr_err("collection did not finish cleanly: the job directory %s may "
			"be incomplete (tapestry report says what it holds)", R.dir);
	if (R.launcher)
		mgr_netcal_save(R.dir, &R.nc);	/* a failure: the export's defaults */
	if (!summarize(&R))
		clean = 0;	/* the disk was full: said */
	status = !clean || rc ? 1 : R.keep_going ? 0 : app_status;
out:
	run_free(&R);
	return mgr_sig_caught() ? 128 + mgr_sig_caught() : status;
}
