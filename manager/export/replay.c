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

#define LOG_TAIL 20		/* lines of smpirun's log shown on failure */
#define LOG_LINE_MAX 4096

static void help(FILE *out)
{
	fputs("usage: tapestry replay [-o OUTDIR] [--platform P] DIR\n"
	      "  Exports DIR as simgrid-ti and simgrid-platform into OUTDIR\n"
	      "  (default DIR/replay, replaced), replays it with SimGrid\n"
	      "  (smpirun -replay) and prints the simulated time.\n"
	      "  -o, --output OUTDIR  where the exports and smpirun.log go\n"
	      "  -p, --platform P     replay on a platform made beforehand instead of\n"
	      "                       DIR's own: P is a directory holding platform.xml\n"
	      "                       and hostfile (e.g. `tapestry export -f\n"
	      "                       simgrid-platform` of another run), or a platform\n"
	      "                       file with a hostfile beside it; the hostfile\n"
	      "                       names at least one host per rank of DIR\n"
	      "  TAPESTRY_SMPIRUN     smpirun to use (default: the one configure found,\n"
	      "                       else smpirun in PATH)\n", out);
}

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

/* Non-empty lines of path (a hostfile, the trace's list), or -1. */
static long count_lines(const char *path)
{
	char line[LOG_LINE_MAX];
	FILE *f = fopen(path, "r");
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line[strspn(line, " \t\r\n")])
			n++;
	fclose(f);
	return n;
}

/* The platform and hostfile of --platform p (a directory holding
 * platform.xml and hostfile, or a platform file with a hostfile beside
 * it), absolute and malloc'd, and the job.xml beside them when there is
 * one (else *job = NULL). 0, or -1 with a message. */
static int user_platform(const char *p, char **platform, char **hostfile,
			 char **job)
{
	struct stat sb;
	char *real = realpath(p, NULL), *dir = NULL, *slash;
	int rc = -1;

	*platform = *hostfile = *job = NULL;
	if (!real || stat(real, &sb) != 0) {
		mgr_err("%s: no such platform (--platform takes a directory with "
			"platform.xml and hostfile, or a platform file)", p);
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
		mgr_err("%s: cannot read the platform: %m", *platform);
		goto out;
	}
	if (access(*hostfile, R_OK) != 0) {
		mgr_err("%s: cannot read the hostfile that goes with %s: %m",
			*hostfile, *platform);
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
 * when job.xml has none) from the platform export's job.xml. */
static int read_job(const char *path, long *ranks, double *speed, char *bwf,
		    size_t bwsz)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	xmlNodePtr root, n;
	double sum = 0;
	long cnt = 0;

	if (!doc)
		return -1;
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
		return -1;
	*ranks = cnt;
	*speed = sum / (double)cnt;
	return 0;
}

/* Run argv with cwd and stdout+stderr to log; its exit status or -1. */
static int run(char *const argv[], const char *cwd, const char *log)
{
	pid_t pid;
	int st, fd;

	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		mgr_err("%s: cannot write: %m", log);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		mgr_err("fork: %m");
		close(fd);
		return -1;
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
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The simulated time SMPI's replay logs ("Simulation time %f"), and the
 * last lines of the log for a failure report. */
static int parse_log(const char *log, double *simtime, int show_tail)
{
	static char tail[LOG_TAIL][LOG_LINE_MAX];
	char line[LOG_LINE_MAX];
	FILE *f = fopen(log, "r");
	size_t n = 0;
	int found = 0;

	if (!f)
		return -1;
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
	return found ? 0 : -1;
}

int mgr_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"platform", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *smpirun = NULL, *base = NULL, *ti = NULL, *pf = NULL, *log = NULL;
	char *platform = NULL, *hostfile = NULL, *job = NULL, *real = NULL;
	char np[32], speed_cfg[64], bwfac[1024] = "0:1", bwf_cfg[1100];
	const char *dir, *output = NULL, *user_pf = NULL;
	char *listpath = NULL;
	struct mgr_export_stats st;
	struct stat sb;
	double speed = 0, simtime = 0;
	long ranks = 0;
	int c, rc = 1, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'p': user_pf = optarg; break;
		case 'h': help(stdout); return 0;
		default: help(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		mgr_err("replay needs one job directory");
		help(stderr);
		return 2;
	}
	dir = argv[optind];
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		mgr_err("%s: not a job directory", dir);
		return 1;
	}
	if (user_pf && user_platform(user_pf, &platform, &hostfile, &job) != 0)
		return 1;
	if (!(smpirun = find_smpirun())) {
		mgr_err("SimGrid is not installed (smpirun not found; on Debian: "
			"apt-get install libsimgrid-dev): cannot replay");
		return 1;
	}
	if (output ? !(base = strdup(output)) :
	    asprintf(&base, "%s/replay", dir) < 0)
		goto done;
	if (mkdir(base, 0777) != 0 && errno != EEXIST) {
		mgr_err("%s: cannot create: %m", base);
		goto done;
	}
	if (!(real = realpath(base, NULL))) {
		mgr_err("%s: %m", base);
		goto done;
	}
	if (asprintf(&ti, "%s/simgrid-ti", real) < 0 ||
	    asprintf(&pf, "%s/simgrid-platform", real) < 0 ||
	    asprintf(&log, "%s/smpirun.log", real) < 0 ||
	    asprintf(&listpath, "%s/list", ti) < 0)
		goto done;
	if (!user_pf && (asprintf(&platform, "%s/platform.xml", pf) < 0 ||
			 asprintf(&hostfile, "%s/hostfile", pf) < 0 ||
			 asprintf(&job, "%s/job.xml", pf) < 0))
		goto done;
	if (mgr_export("simgrid-ti", dir, ti, &st) != 0 ||
	    (!user_pf && mgr_export("simgrid-platform", dir, pf, &st) != 0))
		goto done;
	if (!user_pf && read_job(job, &ranks, &speed, bwfac, sizeof(bwfac)) != 0) {
		mgr_err("%s: unreadable platform description", job);
		goto done;
	}
	if (user_pf) {
		/* the trace's ranks; the hostfile must place each of them */
		long hosts = count_lines(hostfile);

		if ((ranks = count_lines(listpath)) <= 0) {
			mgr_err("%s: no ranks in the exported trace", listpath);
			goto done;
		}
		if (hosts < ranks) {
			mgr_err("%s names %ld hosts, the trace of %s has %ld ranks: "
				"the platform does not fit this job", hostfile,
				hosts < 0 ? 0 : hosts, dir, ranks);
			goto done;
		}
		/* smpi/host-speed only silences SMPI's benchmarking note
		 * (replay benchmarks nothing): any speed does */
		long pr;

		if (!job || read_job(job, &pr, &speed, bwfac, sizeof(bwfac)) != 0)
			speed = 1e9;
		fprintf(stderr, "tapestry: replaying on the platform %s with the "
			"hosts of %s\n", platform, hostfile);
	}
	snprintf(np, sizeof(np), "%ld", ranks);
	snprintf(speed_cfg, sizeof(speed_cfg), "--cfg=smpi/host-speed:%.6gf", speed);
	/* the bandwidth factor per message size the launch's ping-pong
	 * measured (job.xml), else 1 for every size */
	snprintf(bwf_cfg, sizeof(bwf_cfg), "--cfg=smpi/bw-factor:%s", bwfac);
	{
		/* lat factor 1 and the measured bw factors: the platform's
		 * figures are measured ones, not nominal ones SMPI's default
		 * factors would correct */
		char o_np[] = "-np", o_pf[] = "-platform", o_hf[] = "-hostfile";
		char o_rp[] = "-replay", list[] = "list";
		char *bwf = bwf_cfg;
		char latf[] = "--cfg=smpi/lat-factor:0:1";
		char *args[] = {
			smpirun, o_np, np, o_pf, platform, o_hf, hostfile,
			o_rp, list, speed_cfg, bwf, latf, NULL,
		};

		fprintf(stderr, "tapestry: replaying %ld ranks: %s -np %s "
			"-platform %s -hostfile %s -replay list %s %s (in %s)\n",
			ranks, smpirun, np, platform, hostfile, speed_cfg, bwf_cfg, ti);
		status = run(args, ti, log);
	}
	if (status != 0 || parse_log(log, &simtime, 0) != 0) {
		mgr_err("replay failed (smpirun exit status %d); last lines of %s:",
			status, log);
		parse_log(log, &simtime, 1);
		goto done;
	}
	printf("simulated time: %.9g s\n", simtime);
	rc = 0;
done:
	free(smpirun);
	free(base);
	free(real);
	free(ti);
	free(pf);
	free(log);
	free(platform);
	free(hostfile);
	free(job);
	free(listpath);
	return rc;
}
