/*
 * manager/export/replay.c - `tapestry replay DIR`: export the job's time-independent
 * trace (simgrid-ti) and its platform (simgrid-platform) into DIR/replay/,
 * replay them with SimGrid (`smpirun -replay`, whose default replay program
 * is SimGrid's own smpireplaymain) and print the simulated time beside the
 * measured one (the corrected trace's), their ratio and what the platform
 * models; the same figures in OUTDIR/replay.xml (or on stdout with --xml).
 * With --platform, a platform.xml and hostfile made beforehand (another
 * run's simgrid-platform export, or written by hand) replace the job's own.
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
#include "manager/post/events.h"
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
		{"xml", 'x', 0, NULL,
		 "print the figures as XML (replay.xml's) instead\n"
		 "of text"},
	},
	.col = 23,
	.head = "usage: tapestry replay [-o OUTDIR] [--platform P] [--xml] DIR\n"
		"  Exports DIR as simgrid-ti and simgrid-platform into OUTDIR\n"
		"  (default DIR/replay, replaced), replays it with SimGrid\n"
		"  (smpirun -replay) and prints the simulated time, the measured\n"
		"  one (the corrected trace: first return from MPI_Init to the\n"
		"  last call of MPI_Finalize), their ratio and what was modelled;\n"
		"  the same in OUTDIR/replay.xml.\n",
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

/* What the platform export's job.xml says the platform models: its
 * ranks (one host each), their speeds, the network's figures and where
 * they come from (what replay prints as its model line). */
struct model {
	long ranks;
	double speed, speed_min, speed_max;	/* flop/s: mean, range */
	double latency, bandwidth;		/* one-way s, B/s; 0: unknown */
	char bwf[1024];			/* SMPI bandwidth factor ("0:1": none) */
	char source[32];		/* "trace", "default", ... */
	char missing[256];		/* ranks without events, "2 5", or "" */
	long nmissing;
	long run_hosts;			/* distinct trace-host of the ranks (the
					 * run's hosts), <= 0: unknown */
};

/* A double attribute of n, or 0. */
static double num_prop(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	double d = v ? strtod((const char *)v, NULL) : 0;

	xmlFree(v);
	return d;
}

/* The platform export's job.xml into *m (its bw-factor only when valid,
 * else "0:1"): 0, or PROTO_E_FORMAT (the caller says which file). */
static int read_job(const char *path, struct model *m)
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

		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!xmlStrcmp(n->name, (const xmlChar *)"network")) {
			if ((v = xmlGetProp(n, (const xmlChar *)"bw-factor"))) {
				if (mgr_smpi_factor_ok((const char *)v))
					snprintf(m->bwf, sizeof(m->bwf), "%s", (const char *)v);
				xmlFree(v);
			}
			if ((v = xmlGetProp(n, (const xmlChar *)"source"))) {
				snprintf(m->source, sizeof(m->source), "%s", (const char *)v);
				xmlFree(v);
			}
			m->latency = num_prop(n, "one-way-latency");
			m->bandwidth = num_prop(n, "link-bandwidth");
		}
		if (xmlStrcmp(n->name, (const xmlChar *)"host"))
			continue;
		double sp = num_prop(n, "speed");
		xmlChar *th = xmlGetProp(n, (const xmlChar *)"trace-host");

		/* the run's hosts: a first appearance among the hosts so far
		 * (quadratic: left unknown past 4096 ranks) */
		if (th && *th && cnt < 4096 && m->run_hosts >= 0) {
			int seen = 0;

			for (xmlNodePtr q = root->children; q != n && !seen; q = q->next) {
				xmlChar *qh;

				if (q->type != XML_ELEMENT_NODE ||
				    xmlStrcmp(q->name, (const xmlChar *)"host"))
					continue;
				qh = xmlGetProp(q, (const xmlChar *)"trace-host");
				seen = qh && !xmlStrcmp(qh, th);
				xmlFree(qh);
			}
			m->run_hosts += !seen;
		}
		if (cnt >= 4096)
			m->run_hosts = -1;
		xmlFree(th);

		if (num_prop(n, "missing") > 0) {	/* a stand-in's host */
			size_t k = strlen(m->missing);

			if (k < sizeof(m->missing) - 24)
				snprintf(m->missing + k, sizeof(m->missing) - k, "%s%.0f",
					 k ? " " : "", num_prop(n, "rank"));
			m->nmissing++;
			cnt++;
			continue;
		}

		sum += sp;
		if (!cnt || sp < m->speed_min)
			m->speed_min = sp;
		if (!cnt || sp > m->speed_max)
			m->speed_max = sp;
		cnt++;
	}
	xmlFreeDoc(doc);
	if (cnt <= 0)
		return PROTO_E_FORMAT;
	m->ranks = cnt;
	m->speed = cnt > m->nmissing ? sum / (double)(cnt - m->nmissing) : 1e9;
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

/* The span the replay simulates, measured on the job's corrected trace:
 * from the first rank's return from MPI_Init to the last rank's call of
 * MPI_Finalize (the replay's init and finalize actions take no simulated
 * time; what the MPI library does inside them is not replayed). */
struct span {
	int64_t t0, t1;		/* ns from the job start; t1 < t0: none */
	long inits, finals;	/* ranks seen in MPI_Init, in MPI_Finalize */
	int64_t last;		/* the ranks' last MPI call's end: t1 when
				 * no rank reached MPI_Finalize */
	int64_t mpi_ns;		/* the ranks' MPI calls other than Init and
				 * Finalize, their durations added up */
	long ranks;		/* ranks with an event */
};

/* One pass over dir (manager/post/events.h: the corrected times): 0, or a
 * negative PROTO_E_* code (said, mgr_fail). */
static int measured_span(const char *dir, struct span *sp)
{
	struct mgr_events *e;
	struct mgr_event me;
	int rc;

	sp->t0 = INT64_MAX;
	sp->t1 = INT64_MIN;
	sp->inits = sp->finals = 0;
	sp->last = INT64_MIN;
	sp->mpi_ns = 0;
	sp->ranks = 0;
	if (!(e = mgr_events_open(dir, &rc)))
		return mgr_fail_jobdir(rc, dir);
	while ((rc = mgr_events_next(e, &me)) == 1) {
		if (me.stream->rank < 0 || (me.ev->flags & PROTO_EVF_FAILED))
			continue;
		if (me.stream->rank + 1 > sp->ranks)
			sp->ranks = me.stream->rank + 1;
		int mpi = proto_ev_info(me.ev->type) &&
			  proto_ev_info(me.ev->type)->category == PROTO_CAT_MPI;
		if (mpi && me.end > sp->last)
			sp->last = me.end;
		if (mpi && me.ev->type != PROTO_EV_MPI_INIT &&
		    me.ev->type != PROTO_EV_MPI_FINALIZE && me.end > me.start)
			sp->mpi_ns += me.end - me.start;
		if (me.ev->type == PROTO_EV_MPI_INIT) {
			sp->inits++;
			if (me.end < sp->t0)
				sp->t0 = me.end;
		} else if (me.ev->type == PROTO_EV_MPI_FINALIZE) {
			sp->finals++;
			if (me.start > sp->t1)
				sp->t1 = me.start;
		}
	}
	mgr_events_close(e);
	if (rc < 0)
		return mgr_fail(rc, "%s: read error: %s", dir, proto_strerror(rc));
	if (!sp->finals)
		sp->t1 = sp->last;
	return 0;
}

/* The measured span in seconds, or a negative number when the trace has
 * no MPI_Init to measure it from. */
static double span_s(const struct span *sp)
{
	return sp->inits && sp->t1 >= sp->t0 ? (double)(sp->t1 - sp->t0) * 1e-9 : -1;
}

/* To what the measure goes. */
static const char *span_to(const struct span *sp)
{
	return sp->finals ? "last call of MPI_Finalize" :
		"end of the last MPI call (no rank reached MPI_Finalize)";
}

/* The files of one replay, freed by replay_free. */
struct replay {
	const char *dir;		/* the job directory */
	char *smpirun, *base, *real;	/* real: base's absolute path */
	char *ti, *pf, *log, *listpath;	/* the exports, smpirun's log */
	char *platform, *hostfile, *job;
	char *xml;			/* OUTDIR/replay.xml */
	const char *user_pf;		/* --platform's argument, or NULL */
	long ranks;
	struct model m;			/* job.xml's (m.speed: 1e9 without) */
	int has_model;			/* job.xml was read */
	double simtime;
	struct span meas;
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
	free(R->xml);
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
	    asprintf(&R->xml, "%s/replay.xml", R->real) < 0 ||
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
	long hosts = count_lines(R->hostfile);

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
	if (R->job && read_job(R->job, &R->m) == 0)
		R->has_model = 1;
	else
		R->m.speed = 1e9;
	fprintf(stderr, "tapestry: replaying on the platform %s with the "
		"hosts of %s\n", R->platform, R->hostfile);
	return 0;
}

/* smpirun -replay in the exported trace's folder: its exit status. */
static int run_smpirun(struct replay *R)
{
	char np[32], speed_cfg[64], bwf_cfg[1100];

	snprintf(np, sizeof(np), "%ld", R->ranks);
	snprintf(speed_cfg, sizeof(speed_cfg), "--cfg=smpi/host-speed:%.6gf", R->m.speed);
	/* the bandwidth factor per message size the launch's ping-pong
	 * measured (job.xml), else 1 for every size */
	snprintf(bwf_cfg, sizeof(bwf_cfg), "--cfg=smpi/bw-factor:%s", R->m.bwf);
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

/* s as an XML attribute value (control characters dropped). */
static void xml_attr(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* The line saying what the platform models. */
static void model_line(FILE *f, const struct replay *R)
{
	const struct model *m = &R->m;

	if (R->user_pf)
		fprintf(f, "model: the platform %s, rank r on the r-th host of %s",
			R->platform, R->hostfile);
	else
		fprintf(f, "model: %ld hosts, one per rank", R->ranks);
	if (R->has_model && m->run_hosts > 0 && m->run_hosts < R->ranks - m->nmissing)
		fprintf(f, " (the run had %ld ranks on %ld host%s: ranks that shared a "
			"host's cores there each have one here)", R->ranks - m->nmissing,
			m->run_hosts, m->run_hosts > 1 ? "s" : "");
	if (R->has_model) {
		if (m->speed_min < m->speed_max)
			fprintf(f, ", each computing at its rank's measured flop rate "
				"(%.3g to %.3g flop/s)", m->speed_min, m->speed_max);
		else
			fprintf(f, ", each computing at its rank's measured flop rate "
				"(%.3g flop/s)", m->speed);
	}
	if (R->has_model && !R->user_pf && m->latency > 0 && m->bandwidth > 0)
		fprintf(f, "; host-switch-host routes of one-way latency %.3g us and "
			"bandwidth %.3g GB/s %s%s", m->latency * 1e6, m->bandwidth * 1e-9,
			!strcmp(m->source, "trace") ? "from the job's network ping-pong" :
			"by default (no ping-pong in the trace)",
			strcmp(m->bwf, "0:1") ? ", with its bandwidth factors per message "
			"size" : "");
	fputs("; computation as flops, MPI calls as SMPI runs them (the "
	      "export's warnings say what was written otherwise)\n", f);
}

/* The figures as XML (replay.xml, --xml). */
static void write_xml(FILE *f, const struct replay *R)
{
	const struct model *m = &R->m;
	double meas = span_s(&R->meas);

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tapestry-replay "
	      "version=\"1\" job=\"", f);
	xml_attr(f, R->dir);
	fprintf(f, "\" ranks=\"%ld\">\n", R->ranks);
	fprintf(f, "  <simulated seconds=\"%.9g\"/>\n", R->simtime);
	fputs("  <measured", f);
	if (meas >= 0)
		fprintf(f, " seconds=\"%.9g\"", meas);
	fprintf(f, " from=\"first return from MPI_Init\" to=\"%s\" "
		"times=\"corrected\" ranks-init=\"%ld\" ranks-finalize=\"%ld\"/>\n",
		span_to(&R->meas), R->meas.inits, R->meas.finals);
	fprintf(f, "  <mpi seconds=\"%.9g\" ranks=\"%ld\" what=\"the ranks' "
		"MPI calls other than MPI_Init and MPI_Finalize, added up\"/>\n",
		(double)R->meas.mpi_ns * 1e-9, R->meas.ranks);
	if (meas > 0)
		fprintf(f, "  <ratio simulated-over-measured=\"%.6g\"/>\n",
			R->simtime / meas);
	fprintf(f, "  <model hosts=\"%ld\" host-per-rank=\"1\"", R->ranks);
	if (R->has_model && m->run_hosts > 0)
		fprintf(f, " run-hosts=\"%ld\"", m->run_hosts);
	if (R->has_model)
		fprintf(f, " speed-mean=\"%.6g\" speed-min=\"%.6g\" speed-max=\"%.6g\"",
			m->speed, m->speed_min, m->speed_max);
	if (R->has_model && !R->user_pf)
		fprintf(f, " one-way-latency=\"%.6g\" bandwidth=\"%.6g\" "
			"network-source=\"%s\"", m->latency, m->bandwidth,
			m->source);
	fputs(" bw-factor=\"", f);
	xml_attr(f, m->bwf);
	fputs("\" platform=\"", f);
	xml_attr(f, R->platform);
	fputs("\" hostfile=\"", f);
	xml_attr(f, R->hostfile);
	fputs("\"/>\n", f);
	for (const char *p = m->missing; *p;) {
		size_t k = strcspn(p, " ");

		fprintf(f, "  <missing rank=\"%.*s\" replayed-as=\"stand-in\"/>\n",
			(int)k, p);
		p += k + (p[k] == ' ');
	}
	fputs("</tapestry-replay>\n", f);
}

/* The figures: replay.xml, and text (or the XML with xml) on stdout. 0,
 * or PROTO_E_IO (said). */
static int report(const struct replay *R, int xml)
{
	double meas = span_s(&R->meas);
	FILE *f = fopen(R->xml, "w");

	if (!f)
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", R->xml);
	write_xml(f, R);
	if (fclose(f) != 0)
		return mgr_fail(PROTO_E_IO, "%s: write failed: %m", R->xml);
	if (xml) {
		write_xml(stdout, R);
		return 0;
	}
	printf("simulated time: %.9g s\n", R->simtime);
	if (meas >= 0)
		printf("measured time: %.9g s (the corrected trace, from the first "
		       "return from MPI_Init to the %s)\n", meas, span_to(&R->meas));
	else
		printf("measured time: unknown (the trace has no MPI_Init)\n");
	if (meas > 0)
		printf("simulated/measured: %.3g\n", R->simtime / meas);
	if (meas > 0 && R->meas.ranks > 0) {
		double share = (double)R->meas.mpi_ns * 1e-9 /
			       (meas * (double)R->meas.ranks);

		printf("in MPI: %.1f%% of the measured time (the ranks' MPI "
		       "calls, Init and Finalize aside, over %ld ranks); the "
		       "simulation computes the rest at the measured rates and "
		       "plays the MPI calls on the model below, so a ratio "
		       "far below 1 says the run's MPI calls took longer than "
		       "this network takes (waits for other ranks, a loaded or "
		       "oversubscribed host)\n", share > 1 ? 100.0 : share * 100,
		       R->meas.ranks);
	}
	model_line(stdout, R);
	if (R->m.nmissing)
		printf("missing: rank%s %s (no MPI events: killed before its sensor "
		       "sent them?), replayed as %s in the others' collectives on "
		       "MPI_COMM_WORLD and nothing else\n",
		       R->m.nmissing > 1 ? "s" : "", R->m.missing,
		       R->m.nmissing > 1 ? "stand-ins that take part" :
		       "a stand-in that takes part");
	return 0;
}

int mgr_cmd_replay(int argc, char **argv)
{
	struct replay R = {.m = {.bwf = "0:1"}};
	const char *output = NULL, *user_pf = NULL;
	struct mgr_export_stats st;
	struct stat sb;
	int c, rc = 1, status, xml = 0;

	optind = 1;
	while ((c = mgr_opts_next(&replay_doc, argc, argv)) > 0) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'p': user_pf = optarg; break;
		case 'x': xml = 1; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc - 1) {
		mgr_err("replay needs one job directory");
		return mgr_opts_usage(&replay_doc);
	}
	R.dir = argv[optind];
	R.user_pf = user_pf;
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
	if (!user_pf) {
		if (read_job(R.job, &R.m) != 0) {
			mgr_err("%s: unreadable platform description", R.job);
			goto done;
		}
		R.ranks = R.m.ranks;
		R.has_model = 1;
	}
	if (user_pf && fit_user_platform(&R))
		goto done;
	status = run_smpirun(&R);
	if (status < 0)
		goto done;	/* smpirun did not run (said) */
	if (status != 0 || parse_log(R.log, &R.simtime, 0) != 0) {
		mgr_err("replay failed (smpirun exit status %d); last lines of %s:",
			status, R.log);
		parse_log(R.log, &R.simtime, 1);
		goto done;
	}
	if (measured_span(R.dir, &R.meas) != 0 || report(&R, xml) != 0)
		goto done;
	rc = 0;
done:
	replay_free(&R);
	return rc;
}
