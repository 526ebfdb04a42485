/*
 * manager/export/replay.c - `tapestry replay DIR`: export the job's time-independent
 * trace (simgrid-ti) and its platform (simgrid-platform) into DIR/replay/,
 * replay them with SimGrid (`smpirun -replay`, whose default replay program
 * is SimGrid's own smpireplaymain) and print the simulated time. With
 * --platform, a platform.xml and hostfile made beforehand (another run's
 * simgrid-platform export, or written by hand) replace the job's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "proto/error.h"

#define LOG_TAIL 20		/* lines of smpirun's log shown on failure */
#define LOG_LINE_MAX 4096

static const struct mgr_opts_doc replay_doc = {
	.opt = {
		{"output", 'o', MGR_OPT_SHORT, "OUTDIR",
		 "where the exports and smpirun.log go"},
		{"platform", 'p', MGR_OPT_SHORT, "P",
		 "replay on a platform made beforehand instead of\n"
		 "DIR's own: P is a directory holding platform.xml\n"
		 "and hostfile (e.g. `tapestry export -f\n"
		 "simgrid-platform` of another run), or a platform\n"
		 "file with a hostfile beside it; the hostfile\n"
		 "names at least one host per rank of DIR"},
	},
	.col = 23,
	.head = "usage: tapestry replay [-o OUTDIR] [--platform P] DIR\n"
		"  Exports DIR as simgrid-ti and simgrid-platform into OUTDIR\n"
		"  (default DIR/replay, replaced), replays it with SimGrid\n"
		"  (smpirun -replay) and prints the simulated time.\n",
	.tail = "  TAPESTRY_SMPIRUN     smpirun to use (default: the one configure found,\n"
		"                       else smpirun in PATH)\n"
		"  Exit status: 0, 1 (export or replay failed, SimGrid missing: said),\n"
		"  2 (usage).\n",
};

/* smpirun to run, malloc'd, or NULL when SimGrid is not installed. */
static char *find_smpirun(void)
{
	const char *env = getenv("TAPESTRY_SMPIRUN"), *path = getenv("PATH");
	char cand[PATH_MAX];

	if (env && *env)
		return access(env, X_OK) == 0 ? strdup(env) : NULL;
#ifdef SMPIRUN_PATH
	if (access(SMPIRUN_PATH, X_OK) == 0)
		return strdup(SMPIRUN_PATH);
#endif
	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(cand) - 10) {
			snprintf(cand, sizeof(cand), "%.*s/smpirun", (int)n, path);
			if (access(cand, X_OK) == 0)
				return strdup(cand);
		}
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* Non-empty lines of path (a hostfile, the trace's list), or PROTO_E_IO. */
static long count_lines(const char *path)
{
	char line[LOG_LINE_MAX];
	FILE *f = fopen(path, "r");
	long n = 0;

	if (!f)
		return PROTO_E_IO;
	while (fgets(line, sizeof(line), f))
		if (line[strspn(line, " \t\r\n")])
			n++;
	fclose(f);
	return n;
}

/* The platform and hostfile of --platform p (a directory holding
 * platform.xml and hostfile, or a platform file with a hostfile beside
 * it), absolute and malloc'd, and the job.xml beside them when there is
 * one (else *job = NULL). 0, or a negative PROTO_E_* code (said, mgr_fail,
 * but out of memory). */
static int user_platform(const char *p, char **platform, char **hostfile,
			 char **job)
{
	struct stat sb;
	char *real = realpath(p, NULL), *dir = NULL, *slash;
	int rc = PROTO_E_NOMEM;

	*platform = *hostfile = *job = NULL;
	if (!real || stat(real, &sb) != 0) {
		rc = mgr_fail(PROTO_E_NOTFOUND, "%s: no such platform (--platform "
			      "takes a directory with platform.xml and hostfile, "
			      "or a platform file)", p);
		goto out;
	}
	if (!(dir = strdup(real)))
		goto out;
	if (!S_ISDIR(sb.st_mode) && (slash = strrchr(dir, '/')))
		*slash = '\0';	/* realpath's result is absolute */
	if (S_ISDIR(sb.st_mode) ? asprintf(platform, "%s/platform.xml", dir) < 0 :
	    !(*platform = strdup(real))) {
		*platform = NULL;
		goto out;
	}
	if (asprintf(hostfile, "%s/hostfile", dir) < 0) {
		*hostfile = NULL;
		goto out;
	}
	if (asprintf(job, "%s/job.xml", dir) < 0) {
		*job = NULL;
		goto out;
	}
	if (access(*platform, R_OK) != 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot read the platform: %m",
			      *platform);
		goto out;
	}
	if (access(*hostfile, R_OK) != 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot read the hostfile that goes "
			      "with %s: %m", *hostfile, *platform);
		goto out;
	}
	if (access(*job, R_OK) != 0) {
		free(*job);
		*job = NULL;
	}
	rc = 0;
out:
	free(real);
	free(dir);
	if (rc) {
		free(*platform);
		free(*hostfile);
		free(*job);
		*platform = *hostfile = *job = NULL;
	}
	return rc;
}

/* Ranks, mean host speed and SMPI bandwidth factor (bwf, size bwsz; "0:1"
 * when job.xml has none) from the platform export's job.xml: 0, or
 * PROTO_E_FORMAT (the caller says which file). */
static int read_job(const char *path, long *ranks, double *speed, char *bwf,
		    size_t bwsz)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	xmlNodePtr root, n;
	double sum = 0;
	long cnt = 0;

	if (!doc)
		return PROTO_E_FORMAT;
	root = xmlDocGetRootElement(doc);
	for (n = root ? root->children : NULL; n; n = n->next) {
		xmlChar *v;

		if (n->type == XML_ELEMENT_NODE &&
		    !xmlStrcmp(n->name, (const xmlChar *)"network") &&
		    (v = xmlGetProp(n, (const xmlChar *)"bw-factor"))) {
			const char *s = (const char *)v;

			if (mgr_smpi_factor_ok(s))
				snprintf(bwf, bwsz, "%s", s);
			xmlFree(v);
		}
		if (n->type != XML_ELEMENT_NODE ||
		    xmlStrcmp(n->name, (const xmlChar *)"host"))
			continue;
		if ((v = xmlGetProp(n, (const xmlChar *)"speed"))) {
			sum += strtod((const char *)v, NULL);
			xmlFree(v);
		}
		cnt++;
	}
	xmlFreeDoc(doc);
	if (cnt <= 0)
		return PROTO_E_FORMAT;
	*ranks = cnt;
	*speed = sum / (double)cnt;
	return 0;
}

/* Run argv with cwd and stdout+stderr to log: its exit status, or a
 * negative PROTO_E_* code when it could not run (said, mgr_fail). */
static int run(char *const argv[], const char *cwd, const char *log)
{
	pid_t pid;
	int st, fd;

	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", log);
	pid = fork();
	if (pid < 0) {
		mgr_fail(PROTO_E_IO, "fork: %m");
		close(fd);
		return PROTO_E_IO;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (chdir(cwd) != 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return mgr_fail(PROTO_E_IO, "waitpid: %m");
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The simulated time SMPI's replay logs ("Simulation time %f"), and the
 * last lines of the log for a failure report: 0, PROTO_E_IO when the log
 * cannot be read, PROTO_E_NOTFOUND when it has no simulated time. */
static int parse_log(const char *log, double *simtime, int show_tail)
{
	static char tail[LOG_TAIL][LOG_LINE_MAX];
	char line[LOG_LINE_MAX];
	FILE *f = fopen(log, "r");
	size_t n = 0;
	int found = 0;

	if (!f)
		return PROTO_E_IO;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "] Simulation time ");

		if (p && strstr(line, "smpi_replay")) {
			*simtime = strtod(p + strlen("] Simulation time "), NULL);
			found = 1;
		}
		if (!strstr(line, "[xbt_cfg/INFO]"))
			snprintf(tail[n++ % LOG_TAIL], LOG_LINE_MAX, "%s", line);
	}
	fclose(f);
	if (show_tail) {
		size_t first = n > LOG_TAIL ? n - LOG_TAIL : 0;

		for (size_t i = first; i < n; i++)
			fprintf(stderr, "  | %s", tail[i % LOG_TAIL]);
	}
	return found ? 0 : PROTO_E_NOTFOUND;
}

/* The files of one replay, freed by replay_free. */
struct replay {
	const char *dir;		/* the job directory */
	char *smpirun, *base, *real;	/* real: base's absolute path */
	char *ti, *pf, *log, *listpath;	/* the exports, smpirun's log */
	char *platform, *hostfile, *job;
	double speed;
	long ranks;
	char bwfac[1024];
};

static void replay_free(struct replay *R)
{
	free(R->smpirun);
	free(R->base);
	free(R->real);
	free(R->ti);
	free(R->pf);
	free(R->log);
	free(R->platform);
	free(R->hostfile);
	free(R->job);
	free(R->listpath);
}

/* The output folder (output, else DIR/replay) and the paths in it: 0, or
 * a negative PROTO_E_* code (said, mgr_fail, but out of memory). */
static int replay_paths(struct replay *R, const char *output, int user_pf)
{
	if (output ? !(R->base = strdup(output)) :
	    asprintf(&R->base, "%s/replay", R->dir) < 0)
		return PROTO_E_NOMEM;
	if (mkdir(R->base, 0777) != 0 && errno != EEXIST)
		return mgr_fail(PROTO_E_IO, "%s: cannot create: %m", R->base);
	if (!(R->real = realpath(R->base, NULL)))
		return mgr_fail(PROTO_E_IO, "%s: %m", R->base);
	if (asprintf(&R->ti, "%s/simgrid-ti", R->real) < 0 ||
	    asprintf(&R->pf, "%s/simgrid-platform", R->real) < 0 ||
	    asprintf(&R->log, "%s/smpirun.log", R->real) < 0 ||
	    asprintf(&R->listpath, "%s/list", R->ti) < 0)
		return PROTO_E_NOMEM;
	if (!user_pf && (asprintf(&R->platform, "%s/platform.xml", R->pf) < 0 ||
			 asprintf(&R->hostfile, "%s/hostfile", R->pf) < 0 ||
			 asprintf(&R->job, "%s/job.xml", R->pf) < 0))
		return PROTO_E_NOMEM;
	return 0;
}

/* --platform: the trace's ranks, which the user's hostfile must place
 * each of: 0, or a negative PROTO_E_* code (said, mgr_fail). */
static int fit_user_platform(struct replay *R)
{
	long hosts = count_lines(R->hostfile), pr;

	if ((R->ranks = count_lines(R->listpath)) <= 0)
		return mgr_fail(PROTO_E_NOTFOUND, "%s: no ranks in the exported "
				"trace", R->listpath);
	if (hosts < R->ranks)
		return mgr_fail(PROTO_E_ARG, "%s names %ld hosts, the trace of %s "
				"has %ld ranks: the platform does not fit this "
				"job", R->hostfile, hosts < 0 ? 0 : hosts, R->dir,
				R->ranks);
	/* smpi/host-speed only silences SMPI's benchmarking note (replay
	 * benchmarks nothing): any speed does */
	if (!R->job || read_job(R->job, &pr, &R->speed, R->bwfac, sizeof(R->bwfac)) != 0)
		R->speed = 1e9;
	fprintf(stderr, "tapestry: replaying on the platform %s with the "
		"hosts of %s\n", R->platform, R->hostfile);
	return 0;
}

/* smpirun -replay in the exported trace's folder: its exit status. */
static int run_smpirun(struct replay *R)
{
	char np[32], speed_cfg[64], bwf_cfg[1100];

	snprintf(np, sizeof(np), "%ld", R->ranks);
	snprintf(speed_cfg, sizeof(speed_cfg), "--cfg=smpi/host-speed:%.6gf", R->speed);
	/* the bandwidth factor per message size the launch's ping-pong
	 * measured (job.xml), else 1 for every size */
	snprintf(bwf_cfg, sizeof(bwf_cfg), "--cfg=smpi/bw-factor:%s", R->bwfac);
	/* lat factor 1 and the measured bw factors: the platform's figures
	 * are measured ones, not nominal ones SMPI's default factors would
	 * correct */
	char o_np[] = "-np", o_pf[] = "-platform", o_hf[] = "-hostfile";
	char o_rp[] = "-replay", list[] = "list";
	char *bwf = bwf_cfg;
	char latf[] = "--cfg=smpi/lat-factor:0:1";
	char *args[] = {
		R->smpirun, o_np, np, o_pf, R->platform, o_hf, R->hostfile,
		o_rp, list, speed_cfg, bwf, latf, NULL,
	};

	fprintf(stderr, "tapestry: replaying %ld ranks: %s -np %s "
		"-platform %s -hostfile %s -replay list %s %s (in %s)\n",
		R->ranks, R->smpirun, np, R->platform, R->hostfile, speed_cfg,
		bwf_cfg, R->ti);
	return run(args, R->ti, R->log);
}

int mgr_cmd_replay(int argc, char **argv)
{
	struct replay R = {.bwfac = "0:1"};
	const char *output = NULL, *user_pf = NULL;
	struct mgr_export_stats st;
	struct stat sb;
	double simtime = 0;
	int c, rc = 1, status;

	optind = 1;
	while ((c = mgr_opts_next(&replay_doc, argc, argv)) > 0) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'p': user_pf = optarg; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc - 1) {
		mgr_err("replay needs one job directory");
		return mgr_opts_usage(&replay_doc);
	}
	R.dir = argv[optind];
	if (stat(R.dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		mgr_fail_jobdir(PROTO_E_NOTFOUND, R.dir);	/* as export says it */
		return 1;
	}
	if (user_pf && user_platform(user_pf, &R.platform, &R.hostfile, &R.job) != 0)
		goto done;
	if (!(R.smpirun = find_smpirun())) {
		mgr_err("SimGrid is not installed (smpirun not found; on Debian: "
			"apt-get install libsimgrid-dev): cannot replay");
		goto done;
	}
	if (replay_paths(&R, output, user_pf != NULL))
		goto done;
	if (mgr_export("simgrid-ti", R.dir, R.ti, &st) != 0 ||
	    (!user_pf && mgr_export("simgrid-platform", R.dir, R.pf, &st) != 0))
		goto done;
	if (!user_pf &&
	    read_job(R.job, &R.ranks, &R.speed, R.bwfac, sizeof(R.bwfac)) != 0) {
		mgr_err("%s: unreadable platform description", R.job);
		goto done;
	}
	if (user_pf && fit_user_platform(&R))
		goto done;
	status = run_smpirun(&R);
	if (status < 0)
		goto done;	/* smpirun did not run (said) */
	if (status != 0 || parse_log(R.log, &simtime, 0) != 0) {
		mgr_err("replay failed (smpirun exit status %d); last lines of %s:",
			status, R.log);
		parse_log(R.log, &simtime, 1);
		goto done;
	}
	printf("simulated time: %.9g s\n", simtime);
	rc = 0;
done:
	replay_free(&R);
	return rc;
}
