/*
 * manager/launch/launch.c - `tapestry plan` and `tapestry launch`: from an XML job
 * description to a traced run.
 *
 * launch: validate (nothing starts on any error), start the root receiver,
 * then every collector of the tree, parents first, each through its host's
 * launcher inside a small shell wrapper that stops the collector (SIGTERM:
 * drain) when its stdin closes - so closing one pipe stops a collector on
 * any host, and a manager that dies leaves nothing behind. A collector is
 * "up" once a status query to it shows a parent node id (it received its
 * parent's WELCOME). Then the application runs (mpirun or directly), the
 * tree drains leaves first, the exports run and the report is printed.
 * docs/modules/manager-launch.md explains the choices.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/launch/appsig.h"
#include "manager/launch/ca.h"
#include "manager/export/export.h"
#include "manager/launch/jobdesc.h"
#include "manager/export/live.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "manager/launch/cores.h"
#include "manager/launch/netcal.h"
#include "manager/launch/spawn.h"
#include "manager/launch/status.h"
#include "manager/launch/summary.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "proto/num.h"

#define DRAIN_TIMEOUT_MS 60000
#define APP_GRACE_MS 10000	/* after a signal passed on, before SIGKILL */
#define CMD_MAX 16384
#define ARGV_MAX 256

/* Stops the collector given as "$@" when stdin closes or on TERM/HUP/INT,
 * once (a second SIGTERM would make it exit without draining), and exits
 * with its status. */
static const char wrapper[] =
	"\"$@\" & p=$!; s=0; "
	"stop() { [ $s = 1 ] || { s=1; kill -TERM $p 2>/dev/null; }; }; "
	"trap stop TERM HUP INT; read x; stop; r=0; "
	"while kill -0 $p 2>/dev/null; do wait $p; r=$?; done; exit $r";

/* The phases `launch --times` reports (bench/launch_overhead.sh). */
enum { PH_SETUP, PH_COLLECTORS, PH_PINGPONG, PH_APP, PH_DRAIN, PH_EXPORTS,
       PH_REPORT, PH_N };
static const char *const ph_name[PH_N] = {
	"set-up", "collectors up", "ping-pong", "application",
	"drain", "post-processing and exports", "report",
};

struct launch {
	struct mgr_jobdesc *jd;
	const char *dir;
	char *collector, *lib;
	char self[PATH_MAX];			/* this tapestry binary (rank-exec) */
	char creds[PATH_MAX];			/* DIR/creds: CA, certificates, secret */
	char secret[4096];
	size_t secretlen;
	int start_ms;
	struct mgr_child root;
	struct mgr_child col[MGR_JD_MAX_COLLECTORS];
	int order[MGR_JD_MAX_COLLECTORS];	/* start order, by depth */
	int started;				/* collectors started so far */
	int live;				/* --live-ti: sensors drain often */
	int trace_launcher;			/* --trace-launcher: shown */
	char colname[MGR_JD_MAX_COLLECTORS][96];
	char logdir[PATH_MAX];
	char spool[PATH_MAX + 8];		/* DIR/spool (issue 33) */
	struct mgr_netcal nc;			/* network ping-pong before the app */
	struct mgr_netcal_job ncjob;		/* ... while it runs */
	struct mgr_netcal_key nckey;		/* ... what its cached measure is for */
	int cores[MGR_JD_MAX_HOSTS];		/* 0 not asked yet, -1 unknown */
	long long mark[PH_N + 1];		/* when each phase began (ms) */
	int step_out;				/* the srun step's stdout, or -1 */
};

/* ---- plan ----------------------------------------------------------------- */

static const struct mgr_opts_doc plan_doc = {
	.opt = {
		{"output", 'o', MGR_OPT_SHORT, "DIR",
		 "where to write them (default: ./plan)"},
		{"check", 'c', 0, NULL,
		 "also check that the executable and the secret\n"
		 "file exist on this machine (hosts reached\n"
		 "through ssh or another launcher are not checked)"},
	},
	.col = 21,
	.head = "usage: tapestry plan [-o DIR] [--check] APP.xml\n"
		"  Validates the job description APP.xml and writes what `tapestry\n"
		"  launch` would use, without starting anything: hostfile.openmpi,\n"
		"  machinefile.mpich, platform.xml, hostfile.simgrid,\n"
		"  deployment.xml (SimGrid) and collectors.plan (start order).\n",
	.tail = "  Exit status: 0, 1 when the description is invalid (each problem\n"
		"  printed as APP.xml:LINE: message), 2 on a usage error.\n",
};

static struct mgr_jobdesc *load(const char *path, int check)
{
	char *schema = mgr_find_data("jobdesc.rng");
	struct mgr_jobdesc *jd;

	if (!schema || access(schema, R_OK) != 0) {
		mgr_fail(PROTO_E_NOTFOUND, "the job description schema is not "
			 "installed (%s)", schema ? schema : "jobdesc.rng");
		free(schema);
		return NULL;
	}
	jd = mgr_jobdesc_load(path, schema, check, stderr);
	free(schema);
	return jd;
}

static int oversubscribed(struct launch *L, char *buf, size_t cap, int remote);

int mgr_cmd_plan(int argc, char **argv)
{
	const char *dir = "plan";
	int c, check = 0;
	struct mgr_jobdesc *jd;

	optind = 1;
	while ((c = mgr_opts_next(&plan_doc, argc, argv)) > 0)
		if (c == 'o')
			dir = optarg;
		else
			check = 1;
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc - 1)
		return mgr_opts_usage(&plan_doc);
	if (!(jd = load(argv[optind], check))) {
		mgr_err("%s is not a valid job description", argv[optind]);
		return 1;
	}
	if (jd->mpi != MGR_MPI_NONE) {
		static struct launch L;
		char over[1024];

		memset(&L, 0, sizeof(L));
		L.jd = jd;
		if (oversubscribed(&L, over, sizeof(over), 0))
			fprintf(stderr, "tapestry: oversubscribed (%s): launch runs %s "
				"in its yielding mode\n", over,
				mgr_jd_mpi_name(jd->mpi));
	}
	c = mgr_jobdesc_plan(argv[optind], dir, jd);
	mgr_jobdesc_free(jd);
	if (c)
		return 1;
	fprintf(stderr, "tapestry: plan written to %s\n", dir);
	return 0;
}

/* ---- command lines ---------------------------------------------------------- */

/* {host} {address} {command} expanded into out. -1 when it does not fit. */
static int expand(const char *tpl, const struct mgr_jd_host *h, const char *cmd,
		  char *out, size_t cap)
{
	size_t len = 0;

	while (*tpl) {
		const char *sub = NULL;
		size_t skip = 1;

		if (!strncmp(tpl, "{host}", 6))
			sub = h->name, skip = 6;
		else if (!strncmp(tpl, "{address}", 9))
			sub = h->address, skip = 9;
		else if (!strncmp(tpl, "{command}", 9))
			sub = cmd, skip = 9;
		if (sub) {
			size_t n = strlen(sub);

			if (len + n >= cap)
				return -1;
			memcpy(out + len, sub, n);
			len += n;
		} else {
			if (len + 1 >= cap)
				return -1;
			out[len++] = *tpl;
		}
		tpl += skip;
	}
	out[len] = '\0';
	return 0;
}

/* The argv that runs words[] on host h through its launcher. The strings
 * live in store (cap bytes). -1 when too long. */
static int through_launcher(const struct mgr_jd_host *h, const char *const words[],
			    const char *argv[], char *store, size_t cap)
{
	const struct mgr_jd_launcher *l = h->launcher;
	char cmd[CMD_MAX] = "";
	int n = 0;

	if (l->type == MGR_LAUNCH_LOCAL) {
		for (int i = 0; words[i] && n < ARGV_MAX - 1; i++)
			argv[n++] = words[i];
		argv[n] = NULL;
		return 0;
	}
	for (int i = 0; words[i]; i++)
		if (mgr_shell_quote(cmd, sizeof(cmd), words[i]))
			return -1;
	if (l->type == MGR_LAUNCH_TEMPLATE) {
		if (expand(l->command, h, cmd, store, cap))
			return -1;
		argv[0] = "/bin/sh";
		argv[1] = "-c";
		argv[2] = store;
		argv[3] = NULL;
		return 0;
	}
	/* ssh: the remote shell runs the quoted words */
	size_t used = 0;
	char *opts;

	argv[n++] = "ssh";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = "ConnectTimeout=10";
	if (l->port) {
		argv[n++] = "-p";
		snprintf(store, cap, "%d", l->port);
		argv[n++] = store;
		used = strlen(store) + 1;
	}
	if (l->identity) {
		argv[n++] = "-i";
		argv[n++] = l->identity;
	}
	if (l->options && used < cap) {
		snprintf(store + used, cap - used, "%s", l->options);
		opts = store + used;
		used += strlen(opts) + 1;
		for (char *save = NULL, *w = strtok_r(opts, " \t", &save);
		     w && n < ARGV_MAX - 4; w = strtok_r(NULL, " \t", &save))
			argv[n++] = w;
	}
	if (used >= cap)
		return -1;
	if (l->user)
		snprintf(store + used, cap - used, "%s@%s", l->user, h->address);
	else
		snprintf(store + used, cap - used, "%s", h->address);
	argv[n++] = store + used;
	used += strlen(store + used) + 1;
	if (used + strlen(cmd) + 1 > cap)
		return -1;
	memcpy(store + used, cmd, strlen(cmd) + 1);
	argv[n++] = store + used;
	argv[n] = NULL;
	return 0;
}

/* ---- collectors -------------------------------------------------------------- */

struct up_check {
	int up;
	char parent[32];
};

static void check_parent(const struct proto_meta *m, void *arg)
{
	struct up_check *u = arg;

	if (u->up >= 0)
		return;	/* only the first STATS is the collector's own */
	const char *p = proto_meta_get(m, "parent");

	u->up = 0;
	if (p) {
		snprintf(u->parent, sizeof(u->parent), "%s", p);
		u->up = strtoull(p, NULL, 16) != 0;
	}
}

/* Last lines of a log file, indented, into the error slot after the
 * failure they explain (mgr_fail). */
static void log_tail(const char *path)
{
	char buf[2048];
	FILE *f = fopen(path, "r");
	long size;
	size_t n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0,
	      SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!n)
		return;
	mgr_fail(0, "  its messages (%s):", path);
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		mgr_fail(0, "  | %s", l);
}

/* Does the edge from collector i (-1: none) to its parent cross hosts? The
 * root's host is the manager's address. Such edges run TLS. */
static int cross_host(const struct launch *L, int i)
{
	const struct mgr_jobdesc *jd = L->jd;
	const struct mgr_jd_collector *c = &jd->col[i];
	const char *a = jd->host[c->host].address;
	const char *b = c->parent < 0 ? jd->manager_address :
			jd->host[jd->col[c->parent].host].address;

	return strcmp(a, b) != 0;
}

/* Has collector p (-1: the root) a child on another host? */
static int remote_child(const struct launch *L, int p)
{
	for (int j = 0; j < L->jd->ncollectors; j++)
		if (L->jd->col[j].parent == p && cross_host(L, j))
			return 1;
	return 0;
}

/* --tls-cert/--tls-key/--tls-ca of the host named name into words[*n]. */
static void tls_words(const struct launch *L, const char *name,
		      char buf[3][PATH_MAX + 64], const char *words[], int *n)
{
	snprintf(buf[0], PATH_MAX + 64, "%s/%s.crt", L->creds, name);
	snprintf(buf[1], PATH_MAX + 64, "%s/%s.key", L->creds, name);
	snprintf(buf[2], PATH_MAX + 64, "%s/ca.crt", L->creds);
	words[(*n)++] = "--tls-cert";
	words[(*n)++] = buf[0];
	words[(*n)++] = "--tls-key";
	words[(*n)++] = buf[1];
	words[(*n)++] = "--tls-ca";
	words[(*n)++] = buf[2];
}

/* Wait (L->start_ms at most) until the collector at addr, run by ch, has
 * its parent's WELCOME: 1, 0 when it answers without it, -1 when it does
 * not answer (why says) or ch exited. The queries come 1 ms apart at
 * first, doubling to 50 ms: a collector on this machine is up within a
 * few ms of its start, one behind ssh later. */
static int wait_parent(struct launch *L, struct mgr_child *ch, const char *addr,
		       char *why, size_t cap)
{
	long long deadline = mgr_now_ms() + L->start_ms;
	struct up_check u = {.up = -1};
	useconds_t step = 1000;

	while (mgr_now_ms() < deadline) {
		u.up = -1;
		if (mgr_status_query(addr, L->secret, L->secretlen, 2000,
				     check_parent, &u, why, cap) == 0 && u.up > 0)
			break;
		if (mgr_child_exited(ch))
			break;
		usleep(step);
		if (step < 50000)
			step *= 2;
	}
	return u.up;
}

/* Start collector i and wait for its "listening" line (its address is
 * what its children need): 0, or a negative code (said, mgr_fail, with
 * the tail of its log). Whether it reached its parent is collector_up's. */
static int start_collector(struct launch *L, int i)
{
	struct mgr_jobdesc *jd = L->jd;
	struct mgr_jd_collector *c = &jd->col[i];
	const struct mgr_jd_host *h = &jd->host[c->host];
	const char *words[ARGV_MAX], *argv[ARGV_MAX];
	char listen[300], parent[160], optbuf[MGR_JD_MAX_OPTS][80];
	char tlsbuf[3][PATH_MAX + 64], tls_listen[300];
	char logpath[PATH_MAX + 128];
	static char store[CMD_MAX * 2];
	int n = 0, fd, rc;
	struct mgr_child *ch = &L->col[i];

	snprintf(L->colname[i], sizeof(L->colname[i]), "collector '%s' on %s",
		 c->name, h->name);
	mgr_child_init(ch, L->colname[i]);
	snprintf(listen, sizeof(listen), "%s:%d", h->address, c->port);
	/* across hosts the edge runs TLS: to the parent's TLS listener */
	int tls_up = cross_host(L, i), tls_down = remote_child(L, i);
	const struct mgr_child *pc = c->parent < 0 ? &L->root : &L->col[c->parent];
	snprintf(parent, sizeof(parent), "%s", tls_up ? pc->tls_addr : pc->addr);
	words[n++] = "/bin/sh";
	words[n++] = "-c";
	words[n++] = wrapper;
	words[n++] = "tapestry-collector-wrapper";
	words[n++] = h->launcher->collector_path ? h->launcher->collector_path :
		     L->collector;
	words[n++] = "--listen";
	words[n++] = listen;
	words[n++] = "--print-port";
	words[n++] = "--parent";
	words[n++] = parent;
	words[n++] = "--name";
	words[n++] = c->name;
	words[n++] = "--stats-period";
	words[n++] = "1s";
	if (jd->secret_file) {
		words[n++] = "--secret-file";
		words[n++] = jd->secret_file;
	}
	if (tls_up || tls_down)
		tls_words(L, h->name, tlsbuf, words, &n);
	if (tls_down) {
		snprintf(tls_listen, sizeof(tls_listen), "%s:0", h->address);
		words[n++] = "--tls-listen";
		words[n++] = tls_listen;
		ch->tls_wanted = 1;
	}
	for (int k = 0; k < c->nopts; k++) {
		snprintf(optbuf[k], sizeof(optbuf[k]), "--%s", c->opt[k].name);
		words[n++] = optbuf[k];
		words[n++] = c->opt[k].value;
	}
	words[n] = NULL;
	if (through_launcher(h, words, argv, store, sizeof(store))) {
		return mgr_fail(PROTO_E_TOOBIG, "%s: the command line is too long",
				L->colname[i]);
	}
	snprintf(logpath, sizeof(logpath), "%s/collector-%s.log", L->logdir, c->name);
	fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	L->started++;
	if (mgr_spawn_listener(argv, ch, L->start_ms, 1, fd) < 0) {
		if (ch->status && WIFEXITED(ch->status))
			rc = mgr_fail(PROTO_E_STATE, "%s did not start (exit status %d)",
				      L->colname[i], WEXITSTATUS(ch->status));
		else
			rc = mgr_fail(PROTO_E_STATE, "%s did not start within %d s",
				      L->colname[i], L->start_ms / 1000);
		log_tail(logpath);
	} else {
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Has collector i (started) its parent's WELCOME? 0, or PROTO_E_STATE
 * (said, mgr_fail, with the tail of its log). */
static int collector_up(struct launch *L, int i)
{
	struct mgr_jobdesc *jd = L->jd;
	struct mgr_jd_collector *c = &jd->col[i];
	struct mgr_child *ch = &L->col[i];
	const struct mgr_child *pc = c->parent < 0 ? &L->root : &L->col[c->parent];
	const char *parent = cross_host(L, i) ? pc->tls_addr : pc->addr;
	char logpath[PATH_MAX + 128], why[512];
	int rc = PROTO_E_STATE, up = wait_parent(L, ch, ch->addr, why, sizeof(why));

	if (up > 0) {
		fprintf(stderr, "tapestry: %s up at %s (parent %s)\n", L->colname[i],
			ch->addr, c->parent < 0 ? "manager" : jd->col[c->parent].name);
		rc = 0;
	} else if (ch->pid < 0) {
		mgr_fail(rc, "%s exited before connecting to its parent at %s",
			 L->colname[i], parent);
	} else if (up == 0) {
		mgr_fail(rc, "%s is running at %s but did not connect to its "
			 "parent %s (%s) within %d s", L->colname[i], ch->addr,
			 c->parent < 0 ? "manager" : jd->col[c->parent].name,
			 parent, L->start_ms / 1000);
	} else {
		mgr_fail(rc, "%s announced %s but does not answer there: %s",
			 L->colname[i], ch->addr, why);
	}
	if (rc) {
		snprintf(logpath, sizeof(logpath), "%s/collector-%s.log", L->logdir,
			 c->name);
		log_tail(logpath);
	}
	return rc;
}

/* Stop every collector started, deepest first (reverse start order), then
 * the root receiver. 0 when each drained and exited cleanly, else
 * PROTO_E_STATE (said, mgr_fail, for each that did not). */
static int stop_tree(struct launch *L, int timeout_ms)
{
	int rc = 0;

	for (int k = L->started - 1; k >= 0; k--) {
		int i = L->order[k];

		if (L->col[i].pid > 0 && mgr_child_close(&L->col[i], timeout_ms)) {
			rc = mgr_fail(PROTO_E_STATE, "%s did not drain cleanly "
				      "(status %d)", L->colname[i],
				      mgr_wait_code(L->col[i].status));
		}
	}
	if (L->root.pid > 0 && mgr_child_stop(&L->root, timeout_ms)) {
		rc = mgr_fail(PROTO_E_STATE, "the root receiver did not finish "
			      "cleanly");
	}
	return rc;
}

/* ---- application ------------------------------------------------------------- */

static const char *node_addr(struct launch *L, int host)
{
	int n = L->jd->host[host].node;

	return n >= 0 ? L->col[n].addr : L->col[L->jd->root].addr;
}

static void sensors_list(unsigned s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s%s%s", s & MGR_SENSOR_LIBC ? "libc" : "",
		 (s & MGR_SENSOR_LIBC) && (s & (MGR_SENSOR_MPI | MGR_SENSOR_MEM)) ? "," : "",
		 s & MGR_SENSOR_MPI ? "mpi" : "",
		 (s & MGR_SENSOR_MPI) && (s & MGR_SENSOR_MEM) ? "," : "",
		 s & MGR_SENSOR_MEM ? "mem" : "");
}

/* TAPESTRY_COLLECTOR_FALLBACK of the sensors of host (issue 33): the
 * collectors above its node collector on the same address (their plain
 * listeners; an edge to another host runs TLS, which sensors do not
 * speak), the root receiver's when it is there too. NULL when none. */
static char *fallback_env(struct launch *L, int host)
{
	const struct mgr_jobdesc *jd = L->jd;
	const char *addr = jd->host[host].address;
	char *v = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&v, &len);
	int n = jd->host[host].node, any = 0;

	if (!f)
		return NULL;
	fputs("TAPESTRY_COLLECTOR_FALLBACK=", f);
	for (int depth = 0; n >= 0 && depth < MGR_JD_MAX_COLLECTORS; depth++) {
		int p = jd->col[n].parent;

		if (p < 0) {
			if (!strcmp(jd->manager_address, addr) && L->root.addr[0])
				any += fprintf(f, "%s%s", any ? "," : "",
					       L->root.addr) > 0;
			break;
		}
		if (!strcmp(jd->host[jd->col[p].host].address, addr) &&
		    L->col[p].addr[0])
			any += fprintf(f, "%s%s", any ? "," : "", L->col[p].addr) > 0;
		n = p;
	}
	if (fclose(f) != 0 || !any) {
		free(v);
		return NULL;
	}
	return v;
}

/* Sensor settings as NAME=VALUE strings (malloc'd, NULL-terminated). */
static int sensor_env(struct launch *L, int host, char *env[], int max)
{
	struct mgr_jobdesc *jd = L->jd;
	char sensors[32];
	int n = 0;

	sensors_list(jd->sensors, sensors, sizeof(sensors));
	if (asprintf(&env[n++], "LD_PRELOAD=%s", L->lib) < 0 ||
	    asprintf(&env[n++], "TAPESTRY_COLLECTOR=%s", node_addr(L, host)) < 0 ||
	    asprintf(&env[n++], "TAPESTRY_SENSORS=%s", sensors) < 0)
		return -1;
	if (jd->secret_file && asprintf(&env[n++], "TAPESTRY_SECRET_FILE=%s",
					jd->secret_file) < 0)
		return -1;
	/* what reached no collector: left where the manager takes it
	 * (this host; another one's sensors only with a shared DIR) */
	if (asprintf(&env[n++], "TAPESTRY_SPOOL=%s", L->spool) < 0)
		return -1;
	if ((env[n] = fallback_env(L, host)))
		n++;
	if (jd->sensor_mode && asprintf(&env[n++], "TAPESTRY_MODE=%s",
					jd->sensor_mode) < 0)
		return -1;
	/* a live feed wants events within 100 ms, not the default second
	 * (the description's own TAPESTRY_DRAIN_MS, after it, wins) */
	if (L->live && asprintf(&env[n++], "TAPESTRY_DRAIN_MS=100") < 0)
		return -1;
	/* helpers a rank starts (an Open MPI singleton's orted) are
	 * launchers: shown with --trace-launcher (mpirun itself is not
	 * traced by launch) */
	if (L->trace_launcher &&
	    asprintf(&env[n++], "TAPESTRY_TRACE_LAUNCHER=1") < 0)
		return -1;
	for (int i = 0; i < jd->nenv && n < max - 1; i++)
		if (asprintf(&env[n++], "%s=%s", jd->env[i].name, jd->env[i].value) < 0)
			return -1;
	env[n] = NULL;
	return n;
}

static void free_env(char *env[])
{
	for (int i = 0; env[i]; i++)
		free(env[i]);
}

/* fork + exec argv with env (NAME=VALUE) added; the pid or -1. */
static pid_t run_with(const char *const argv[], char *const env[], const char *wd,
		      int path_search)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	mgr_app_child();
	for (int i = 0; env && env[i]; i++)
		putenv(env[i]);
	if (geteuid() == 0) {
		setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
		setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	}
	if (wd && chdir(wd) < 0) {
		fprintf(stderr, "tapestry: cannot enter %s: %s\n", wd, strerror(errno));
		_exit(127);
	}
	if (path_search)
		execvp(argv[0], (char *const *)argv);
	else
		execv(argv[0], (char *const *)argv);
	fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The application's processes: a signal to launch is passed on to each
 * (appsig.h). */
static int wait_pid(pid_t pid)
{
	return mgr_app_wait(pid, APP_GRACE_MS);
}

/* mpirun with the plan's hostfile; the sensor settings reach every rank
 * through -x NAME=VALUE (Open MPI) or -genv NAME VALUE (MPICH). */
/* Cores of host h, asked once: this machine's by sched_getaffinity,
 * another's by `nproc` through its launcher (with remote); 0 when
 * unknown. */
static int host_cores(struct launch *L, int h, int remote)
{
	const struct mgr_jd_host *host = &L->jd->host[h];
	const char *words[] = {"nproc", NULL};
	const char *argv[ARGV_MAX];
	static char store[CMD_MAX];

	if (!L->cores[h]) {
		if (host->launcher->type == MGR_LAUNCH_LOCAL)
			L->cores[h] = mgr_local_cores();
		else if (!remote)
			return 0;
		else if (!through_launcher(host, words, argv, store, sizeof(store)))
			L->cores[h] = mgr_cores_run(argv);
		if (!L->cores[h])
			L->cores[h] = -1;
	}
	return L->cores[h] > 0 ? L->cores[h] : 0;
}

/* Hosts given more ranks than they have cores, in one line into buf
 * ("localhost: 4 ranks on 2 cores"); the count of such hosts. remote: ask
 * the hosts reached through a launcher too. */
static int oversubscribed(struct launch *L, char *buf, size_t cap, int remote)
{
	static int ranks[MGR_JD_MAX_HOSTS];
	const struct mgr_jobdesc *jd = L->jd;
	int any = 0;
	size_t len = 0;

	memset(ranks, 0, sizeof(ranks));
	buf[0] = 0;
	for (int r = 0; r < jd->processes; r++) {
		int h = mgr_jd_rank_host(jd, r);

		if (h >= 0)
			ranks[h]++;
	}
	for (int h = 0; h < jd->nhosts; h++) {
		int c = ranks[h] ? host_cores(L, h, remote) : 0;

		if (!c || ranks[h] <= c)
			continue;
		if (len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s: %d ranks on "
						"%d cores", any ? ", " : "",
						jd->host[h].name, ranks[h], c);
		any++;
	}
	return any;
}

/* Append TAPESTRY_NODE_COLLECTORS=HOST=ADDR:PORT,... (the node collector
 * of every host a rank runs on) to env (NULL-terminated, room for max):
 * how rank-exec finds its host's collector without the plan directory. */
static int add_node_map(struct launch *L, char *env[], int max)
{
	const struct mgr_jobdesc *jd = L->jd;
	static char seen[MGR_JD_MAX_HOSTS];
	char *map = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&map, &len);
	int n = 0, first = 1;

	if (!f)
		return -1;
	memset(seen, 0, sizeof(seen));
	fputs("TAPESTRY_NODE_COLLECTORS=", f);
	for (int r = 0; r < jd->processes; r++) {
		int h = mgr_jd_rank_host(jd, r);

		if (h < 0 || seen[h])
			continue;
		seen[h] = 1;
		fprintf(f, "%s%s=%s", first ? "" : ",", jd->host[h].name,
			node_addr(L, h));
		first = 0;
	}
	if (fclose(f) != 0) {
		free(map);
		return -1;
	}
	while (n < max - 1 && env[n])
		n++;
	if (n >= max - 1) {
		free(map);
		return -1;
	}
	env[n] = map;
	env[n + 1] = NULL;
	return 0;
}

/* When a host the ranks run on is behind a template launcher, mpirun must
 * reach it the same way: DIR/plan/host-launchers ("HOST<TAB>TEMPLATE", by
 * name and by address) and DIR/plan/host-exec, a script running `tapestry
 * host-exec` on it, given to mpirun as its remote-shell agent. The script's
 * path into agent ("" when no rank host needs it). 0, or PROTO_E_IO
 * (said, mgr_fail). */
static int write_agent(struct launch *L, char *agent, size_t cap)
{
	const struct mgr_jobdesc *jd = L->jd;
	char map[PATH_MAX + 64], tpl[CMD_MAX];
	int any = 0;
	FILE *f;

	agent[0] = 0;
	for (int r = 0; r < jd->processes && !any; r++) {
		int h = mgr_jd_rank_host(jd, r);

		any = h >= 0 && jd->host[h].launcher->type == MGR_LAUNCH_TEMPLATE;
	}
	if (!any)
		return 0;
	snprintf(map, sizeof(map), "%s/plan/host-launchers", L->dir);
	if (!(f = fopen(map, "w")))
		goto fail;
	for (int h = 0; h < jd->nhosts; h++) {
		const struct mgr_jd_host *host = &jd->host[h];

		if (host->launcher->type == MGR_LAUNCH_SSH)
			continue;	/* host-exec uses ssh for what it lacks */
		if (host->launcher->type == MGR_LAUNCH_LOCAL)
			snprintf(tpl, sizeof(tpl), "{command}");
		else if (expand(host->launcher->command, host, "{command}", tpl,
				sizeof(tpl)))
			continue;
		fprintf(f, "%s\t%s\n%s\t%s\n", host->name, tpl, host->address, tpl);
	}
	if (fclose(f) != 0)
		goto fail;
	snprintf(agent, cap, "%s/plan/host-exec", L->dir);
	if (!(f = fopen(agent, "w")))
		goto fail;
	fprintf(f, "#!/bin/sh\n# mpirun's way to the job's hosts (tapestry launch)\n"
		"exec '%s' host-exec '%s' \"$@\"\n", L->self, map);
	if (fclose(f) != 0 || chmod(agent, 0755) != 0)
		goto fail;
	return 0;
fail:
	return mgr_fail(PROTO_E_IO, "cannot write mpirun's agent into %s/plan: %s",
			L->dir, strerror(errno));
}

/* `tapestry` on the ranks' hosts: their launchers' tapestry-path, else
 * this binary's path; NULL (said, mgr_fail) when their launchers disagree, as mpirun
 * runs one command line on every host. */
static const char *rank_tapestry(const struct launch *L)
{
	const struct mgr_jobdesc *jd = L->jd;
	const char *path = NULL;

	for (int r = 0; r < jd->processes; r++) {
		int h = mgr_jd_rank_host(jd, r);
		const char *p = h >= 0 ? jd->host[h].launcher->tapestry_path : NULL;

		if (!p)
			p = L->self;
		if (path && strcmp(path, p)) {
			mgr_fail(PROTO_E_ARG, "the ranks' hosts have `tapestry` at %s "
				 "and at %s (launchers' tapestry-path): mpirun runs "
				 "one command on all of them; give them one path",
				 path, p);
			return NULL;
		}
		path = p;
	}
	return path ? path : L->self;
}

/* Each rank streams to the node collector of its host: mpirun starts
 * `tapestry rank-exec MAP -- PROGRAM` (rankexec.c), which finds it in
 * TAPESTRY_NODE_COLLECTORS or, when several hosts share a machine, its
 * rank's line in MAP (rank -> collector, from the plan's placement), sets
 * TAPESTRY_COLLECTOR and the preload, and executes the program. MAP is
 * DIR/plan/rank-collectors, its path into mapfile. 0, or PROTO_E_IO
 * (said, mgr_fail). */
static int write_rank_map(struct launch *L, char *mapfile, size_t cap)
{
	const struct mgr_jobdesc *jd = L->jd;
	FILE *mf;

	snprintf(mapfile, cap, "%s/plan/rank-collectors", L->dir);
	if (!(mf = fopen(mapfile, "w")))
		return mgr_fail(PROTO_E_IO, "%s: %s", mapfile, strerror(errno));
	for (int r = 0; r < jd->processes; r++) {
		int h = mgr_jd_rank_host(jd, r);

		fprintf(mf, "%d %s\n", r, node_addr(L, h >= 0 ? h : 0));
	}
	if (fclose(mf) != 0)
		return mgr_fail(PROTO_E_IO, "%s: %s", mapfile, strerror(errno));
	return 0;
}

/* The environment mpirun passes to the ranks, into env (room for max,
 * NULL-terminated, freed by free_env): the sensors' settings with the
 * preload as TAPESTRY_RANK_PRELOAD (rank-exec itself is not traced), no
 * TAPESTRY_COLLECTOR (rank-exec sets it), TAPESTRY_NODE_COLLECTORS.
 * 0, or -1. */
static int rank_env(struct launch *L, char *env[], int max)
{
	const struct mgr_jobdesc *jd = L->jd;
	char *pre = NULL;

	if (sensor_env(L, jd->root >= 0 ? jd->col[jd->root].host : 0, env, max) < 0 ||
	    add_node_map(L, env, max))
		return -1;
	/* env[0] is LD_PRELOAD=..., env[1] TAPESTRY_COLLECTOR=... (sensor_env) */
	if (asprintf(&pre, "TAPESTRY_RANK_PRELOAD=%s", env[0] + strlen("LD_PRELOAD=")) < 0)
		return -1;
	free(env[0]);
	env[0] = pre;
	free(env[1]);
	for (int i = 1; env[i]; i++)	/* drop TAPESTRY_COLLECTOR */
		env[i] = env[i + 1];
	return 0;
}

static int run_mpi(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;
	const char *argv[ARGV_MAX + MGR_JD_MAX_ARGS + 2 * MGR_JD_MAX_ENV];
	char *env[MGR_JD_MAX_ENV + 10] = {NULL}, np[16], hostfile[PATH_MAX + 64];
	char *split[MGR_JD_MAX_ENV + 10] = {NULL}, mapfile[PATH_MAX + 64];
	char agent[PATH_MAX + 64];
	const char *self;
	int n = 0, rc = 1;
	pid_t pid;

	if (write_rank_map(L, mapfile, sizeof(mapfile)) ||
	    rank_env(L, env, MGR_JD_MAX_ENV + 10) ||
	    write_agent(L, agent, sizeof(agent)))
		goto out;
	snprintf(np, sizeof(np), "%d", jd->processes);
	char over[1024];
	int yield = oversubscribed(L, over, sizeof(over), 1) > 0;

	/* the ranks' sensors hold the trace there (TAPESTRY_HOLD auto, stream
	 * mode: sensor/rt_init.c): said in this line, and the sensors told it
	 * was (TAPESTRY_HOLD_SAID=1) so that they do not say it once a node */
	const char *hv = getenv("TAPESTRY_HOLD");
	const char *dm = getenv("TAPESTRY_DRAIN_MS");
	/* a live feed (--live-ti, TAPESTRY_DRAIN_MS) streams: not held */
	int hold = yield && (!hv || !*hv || !strcmp(hv, "auto")) &&
		   !L->live && !(dm && *dm) &&
		   !(jd->sensor_mode && !strcmp(jd->sensor_mode, "postmortem"));

	if (yield)
		fprintf(stderr, "tapestry: oversubscribed (%s): %s runs in its "
			"yielding mode%s\n", over, mgr_jd_mpi_name(jd->mpi),
			hold ? "; the sensors hold the trace where a host runs a "
			"rank per core or more (drained when a ring is half full, "
			"a full ring waits: nothing dropped; TAPESTRY_HOLD=off "
			"streams)" : "");
	if (hold) {
		int i = 0;

		while (env[i])
			i++;
		if (i < MGR_JD_MAX_ENV + 9 && !(env[i] = strdup("TAPESTRY_HOLD_SAID=1")))
			goto out;
	}
	if (jd->mpi == MGR_MPI_OPENMPI) {
		snprintf(hostfile, sizeof(hostfile), "%s/plan/hostfile.openmpi", L->dir);
		argv[n++] = "mpirun.openmpi";
		argv[n++] = "--hostfile";
		argv[n++] = hostfile;
		argv[n++] = "-np";
		argv[n++] = np;
		if (jd->processes > jd->total_slots || yield)
			argv[n++] = "--oversubscribe";
		if (yield) {
			argv[n++] = "--mca";
			argv[n++] = "mpi_yield_when_idle";
			argv[n++] = "1";
		}
		if (agent[0]) {
			argv[n++] = "--mca";
			argv[n++] = "plm_rsh_agent";
			argv[n++] = agent;
		}
		if (jd->workdir) {
			argv[n++] = "--wdir";
			argv[n++] = jd->workdir;
		}
		for (int i = 0; env[i]; i++) {
			argv[n++] = "-x";
			argv[n++] = env[i];
		}
	} else {
		snprintf(hostfile, sizeof(hostfile), "%s/plan/machinefile.mpich", L->dir);
		argv[n++] = "mpirun.mpich";
		argv[n++] = "-f";
		argv[n++] = hostfile;
		argv[n++] = "-np";
		argv[n++] = np;
		if (yield) {
			argv[n++] = "-genv";
			argv[n++] = "MPIR_CVAR_POLLS_BEFORE_YIELD";
			argv[n++] = "1";
		}
		if (agent[0]) {
			argv[n++] = "-launcher";
			argv[n++] = "ssh";
			argv[n++] = "-launcher-exec";
			argv[n++] = agent;
		}
		if (jd->workdir) {
			argv[n++] = "-wdir";
			argv[n++] = jd->workdir;
		}
		for (int i = 0; env[i]; i++) {
			char *eq;

			if (!(split[i] = strdup(env[i])) || !(eq = strchr(split[i], '=')))
				goto out;
			*eq = '\0';
			argv[n++] = "-genv";
			argv[n++] = split[i];
			argv[n++] = eq + 1;
		}
	}
	if (!(self = rank_tapestry(L)))
		goto out;
	argv[n++] = self;
	argv[n++] = "rank-exec";
	argv[n++] = mapfile;
	argv[n++] = "--";
	argv[n++] = jd->exe_path ? jd->exe_path : jd->executable;
	for (int i = 0; i < jd->nargs; i++)
		argv[n++] = jd->arg[i];
	argv[n] = NULL;
	fprintf(stderr, "tapestry: running %s with %d process%s (%s, %s)\n",
		jd->executable, jd->processes, jd->processes == 1 ? "" : "es",
		argv[0], mgr_jd_mode_name(jd->mode));
	if ((pid = run_with(argv, NULL, NULL, 1)) < 0) {
		mgr_fail(PROTO_E_STATE, "fork: %s", strerror(errno));
		goto out;
	}
	rc = wait_pid(pid);
out:
	free_env(env);
	for (int i = 0; split[i]; i++)
		free(split[i]);
	return rc;
}

/* The ping-pong's hosts: rank 0's and the first other host a rank runs
 * on (rank 0's twice when every rank shares it), in mpirun's hostfile
 * (path) and as the cache key's line. 0, or -1 (nc says why). */
static int pingpong_hosts(struct launch *L, const char *path)
{
	/* in a Slurm allocation, mpirun knows the nodes by their names */
#define HN(h) (jd->from_slurm ? jd->host[h].name : jd->host[h].address)
	struct mgr_jobdesc *jd = L->jd;
	int h0 = mgr_jd_rank_host(jd, 0), h1 = h0, omp = jd->mpi == MGR_MPI_OPENMPI;
	FILE *f;

	for (int r = 1; r < jd->processes && h1 == h0; r++)
		h1 = mgr_jd_rank_host(jd, r);
	if (h0 < 0 || h1 < 0)
		h0 = h1 = 0;
	if (!(f = fopen(path, "w"))) {
		mgr_netcal_skip(&L->nc, "failed: cannot write %s", path);
		return -1;
	}
	if (h0 == h1)
		fprintf(f, omp ? "%s slots=2\n" : "%s:2\n", HN(h0));
	else
		fprintf(f, omp ? "%s slots=1\n%s slots=1\n" : "%s:1\n%s:1\n", HN(h0),
			HN(h1));
	if (fclose(f) != 0) {
		mgr_netcal_skip(&L->nc, "failed: cannot write %s", path);
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		const struct mgr_jd_host *h = &jd->host[k ? h1 : h0];
		const struct mgr_jd_launcher *l = h->launcher;

		mgr_netcal_key_add(&L->nckey, "host %s %s launcher %d %s %s %d %s %s",
				   HN(k ? h1 : h0), h->name, (int)l->type,
				   l->command ? l->command : "", l->user ? l->user : "",
				   l->port, l->identity ? l->identity : "",
				   l->options ? l->options : "");
	}
	return 0;
#undef HN
}

/* The network calibration (manager/launch/netcal.c) with the job's
 * mpirun: two processes on the hosts of pingpong_hosts, the description's
 * environment, not traced. Started beside the collectors (it measures
 * once calibrate_finish lets it), or taken from the cache (fresh: not). A
 * failure leaves the defaults to the export. */
static void calibrate_start(struct launch *L, int fresh)
{
	struct mgr_jobdesc *jd = L->jd;
	const char *argv[MGR_NETCAL_ARGV_MAX];
	const char *mpirun = jd->mpi == MGR_MPI_OPENMPI ? "mpirun.openmpi" : "mpirun.mpich";
	char hostfile[PATH_MAX + 64], logpath[PATH_MAX + 64], agent[PATH_MAX + 64];
	char *env[MGR_JD_MAX_ENV + 1] = {NULL};
	int n = 0, omp = jd->mpi == MGR_MPI_OPENMPI;

	mgr_netcal_key_init(&L->nckey, mgr_jd_mpi_name(jd->mpi), mpirun);
	snprintf(hostfile, sizeof(hostfile), "%s/plan/pingpong.hosts", L->dir);
	snprintf(logpath, sizeof(logpath), "%s/pingpong.log", L->logdir);
	if (pingpong_hosts(L, hostfile)) {
		mgr_err("warning: network ping-pong %s: the SimGrid platform will "
			"use default latency and bandwidth", L->nc.note);
		return;
	}
	argv[n++] = mpirun;
	argv[n++] = omp ? "--hostfile" : "-f";
	argv[n++] = hostfile;
	for (int i = 0; i < jd->nenv && n < MGR_NETCAL_ARGV_MAX - 8; i++) {
		mgr_netcal_key_add(&L->nckey, "env %s=%s", jd->env[i].name,
				   jd->env[i].value);
		if (!omp) {
			argv[n++] = "-genv";
			argv[n++] = jd->env[i].name;
			argv[n++] = jd->env[i].value;
		} else if (asprintf(&env[i], "%s=%s", jd->env[i].name,
				    jd->env[i].value) >= 0) {
			argv[n++] = "-x";
			argv[n++] = env[i];
		} else {
			env[i] = NULL;
			break;
		}
	}
	if (write_agent(L, agent, sizeof(agent))) {
		mgr_err_flush();	/* it goes on without: said now */
	} else if (agent[0]) {
		argv[n++] = omp ? "--mca" : "-launcher";
		argv[n++] = omp ? "plm_rsh_agent" : "ssh";
		if (!omp)
			argv[n++] = "-launcher-exec";
		argv[n++] = agent;
	}
	argv[n++] = "-np";
	argv[n++] = "2";
	argv[n] = NULL;
	/* a kept measure is said with the figures (calibrate_finish) */
	if (fresh || !mgr_netcal_cached(&L->nckey, logpath, &L->nc))
		mgr_netcal_start(argv, mgr_jd_mpi_name(jd->mpi), logpath,
				 MGR_NETCAL_TIMEOUT_MS, &L->ncjob, &L->nc);
	free_env(env);
}

/* The started ping-pong measures now (the collectors are up) and is
 * waited for; its measure goes to the cache. */
static void calibrate_finish(struct launch *L)
{
	char brief[512];

	if (L->ncjob.pid > 0 && mgr_netcal_finish(&L->ncjob, &L->nc) == 0)
		mgr_netcal_store(&L->nckey, L->ncjob.log, &L->nc);
	if (L->nc.ok) {
		mgr_netcal_brief(&L->nc, brief, sizeof(brief));
		fprintf(stderr, "tapestry: network %s\n", brief);
	}
}

/* Not MPI: one process per rank, each through its host's launcher, with
 * its host's node collector. */
static int run_direct(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;
	static pid_t pids[MGR_JD_MAX_PROCESSES];
	static char store[CMD_MAX * 2];
	int started = 0, rc = 0;

	fprintf(stderr, "tapestry: running %s with %d process%s (no MPI, %s)\n",
		jd->executable, jd->processes, jd->processes == 1 ? "" : "es",
		mgr_jd_mode_name(jd->mode));
	for (int r = 0; r < jd->processes; r++) {
		int h = mgr_jd_rank_host(jd, r);
		const struct mgr_jd_host *host = &jd->host[h];
		char *env[MGR_JD_MAX_ENV + 10] = {NULL};
		const char *words[ARGV_MAX + MGR_JD_MAX_ARGS + MGR_JD_MAX_ENV];
		const char *argv[ARGV_MAX + MGR_JD_MAX_ARGS + MGR_JD_MAX_ENV];
		const char *exe = jd->exe_path ? jd->exe_path : jd->executable;
		int n = 0;
		pid_t pid;

		if (sensor_env(L, h, env, MGR_JD_MAX_ENV + 10) < 0) {
			free_env(env);
			rc = 1;
			break;
		}
		if (host->launcher->type == MGR_LAUNCH_LOCAL) {
			words[n++] = exe;
			for (int i = 0; i < jd->nargs; i++)
				words[n++] = jd->arg[i];
			words[n] = NULL;
			pid = run_with(words, env, jd->workdir, 0);
		} else {
			/* the remote side gets the settings through env(1) */
			if (jd->workdir) {
				words[n++] = "/bin/sh";
				words[n++] = "-c";
				words[n++] = "cd \"$0\" && exec \"$@\"";
				words[n++] = jd->workdir;
			}
			words[n++] = "/usr/bin/env";
			for (int i = 0; env[i]; i++)
				words[n++] = env[i];
			words[n++] = exe;
			for (int i = 0; i < jd->nargs; i++)
				words[n++] = jd->arg[i];
			words[n] = NULL;
			if (through_launcher(host, words, argv, store, sizeof(store))) {
				mgr_fail(PROTO_E_TOOBIG, "rank %d: the command line "
					 "is too long", r);
				free_env(env);
				rc = 1;
				break;
			}
			pid = run_with(argv, NULL, NULL, 1);
		}
		free_env(env);
		if (pid < 0) {
			mgr_fail(PROTO_E_STATE, "fork: %s", strerror(errno));
			rc = 1;
			break;
		}
		pids[started++] = pid;
	}
	mgr_err_flush();	/* a rank not started: said before the others end */
	for (int r = 0; r < started; r++) {
		int code = wait_pid(pids[r]);

		if (code && !rc)
			rc = code;
		/* said when found: the other ranks go on, their output
		 * between these lines */
		if (code == 127)
			mgr_err("rank %d (%s) could not be started", r, jd->executable);
	}
	return rc;
}

/* ---- launch ----------------------------------------------------------------- */

/* One line: the seconds each phase took (--times). */
static void print_times(const struct launch *L)
{
	fputs("tapestry: times:", stderr);
	for (int i = 0; i < PH_N; i++)
		fprintf(stderr, "%s %s %.3f s", i ? "," : "", ph_name[i],
			(double)(L->mark[i + 1] - L->mark[i]) / 1e3);
	fprintf(stderr, ", total %.3f s\n",
		(double)(L->mark[PH_N] - L->mark[PH_SETUP]) / 1e3);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	return remove(p);
}

static const struct mgr_opts_doc launch_doc = {
	.opt = {
		{"output", 'o', MGR_OPT_SHORT, "DIR",
		 "job directory to create (must not exist;\n"
		 "default ./tapestry-job-PID)"},
		{"start-timeout", 't', 0, "S",
		 "seconds each collector has to start and\n"
		 "connect (1 to 86400, default 20)"},
		{"keep-going", 'k', 0, NULL, "exit 0 even when the application fails"},
		{"live-ti", 'L', 0, "DIR",
		 "while the job runs, write each rank's SimGrid\n"
		 "actions into DIR (tapestry live-ti --help)"},
		{"live-fifo", 'F', 0, NULL, "... as named pipes, for smpirun -replay"},
		{"no-pingpong", 'P', 0, NULL,
		 "do not measure the network before an MPI\n"
		 "application (by default an MPI ping-pong between\n"
		 "two of its hosts gives the SimGrid platform its\n"
		 "latency and bandwidth; logs/pingpong.log). A\n"
		 "measure is kept for a day and used again by the\n"
		 "next job with the same hosts, MPI and settings\n"
		 "(docs/modules/manager-launch.md)"},
		{"fresh-pingpong", 'R', 0, NULL,
		 "measure again even when a kept measure applies"},
		{"trace-launcher", 'W', 0, NULL,
		 "show the launchers' helpers a rank starts (an Open\n"
		 "MPI singleton's orted) in the exports and counts;\n"
		 "launch never traces mpirun itself"},
		{"times", 'T', 0, NULL,
		 "at the end, one line with the seconds each phase\n"
		 "took (set-up, collectors up, ping-pong,\n"
		 "application, drain, post-processing and\n"
		 "exports, report)"},
	},
	.col = 25,
	.head = "usage: tapestry launch [-o DIR] [--start-timeout S] [--keep-going]\n"
		"                       [--no-pingpong | --fresh-pingpong] [--times] [--trace-launcher]\n"
		"                       [--live-ti DIR [--live-fifo]] APP.xml\n"
		"  Runs the job APP.xml describes: validates it (nothing starts when\n"
		"  it is invalid), starts the root receiver writing DIR, then every\n"
		"  collector of the tree (parents first) through its host's launcher,\n"
		"  waits until each is connected to its parent, runs the application\n"
		"  (mpirun or directly) with the sensors preloaded, drains the tree\n"
		"  (leaves first), writes the outputs APP.xml asks for and prints\n"
		"  the report. DIR/plan holds the generated files, DIR/logs the\n"
		"  collectors' messages.\n",
	.tail = "  SIGTERM, SIGINT or SIGHUP to tapestry: passed on to the application's\n"
		"  process group; the tree is drained and the job directory written.\n"
		"  Exit status: the application's, 1 when launching or collection\n"
		"  failed (everything started is stopped), 2 on a usage error, 128+N\n"
		"  after signal N to tapestry.\n",
};

static int cmp_depth(const void *a, const void *b, void *arg)
{
	const struct mgr_jobdesc *jd = arg;
	int x = *(const int *)a, y = *(const int *)b;

	if (jd->col[x].depth != jd->col[y].depth)
		return jd->col[x].depth - jd->col[y].depth;
	return x - y;
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[8192];
	size_t n;
	int rc = 0;

	if (!in || !out)
		rc = -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

/* What the command line asks of launch. */
struct launch_opts {
	const char *dir, *desc;		/* job directory, job description */
	char defdir[64];		/* dir when -o is not given */
	char absdir[PATH_MAX];		/* dir made absolute */
	int start_ms;
	int keep_going, times, trace_launcher;
	int pingpong;			/* 0 none, 1 kept or measured, 2 measured */
	struct mgr_live_opts live;	/* live.outdir: --live-ti */
};

/* Parse the command line: -1 to go on, else the exit status (0 after
 * --help, 2 after a message). */
static int launch_options(int argc, char **argv, struct launch_opts *o)
{
	struct stat sb;
	int c;
	long v;

	o->start_ms = 20000;
	o->pingpong = 1;
	o->live.drain_s = 60;
	optind = 1;
	while ((c = mgr_opts_next(&launch_doc, argc, argv)) > 0) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 't':
			if (proto_parse_long(optarg, 1, 86400, &v)) {
				mgr_err("--start-timeout takes a number of seconds "
					"from 1 to 86400, not '%s'", optarg);
				return 2;
			}
			o->start_ms = (int)v * 1000;
			break;
		case 'k': o->keep_going = 1; break;
		case 'L': o->live.outdir = optarg; break;
		case 'F': o->live.fifo = 1; break;
		case 'P': o->pingpong = 0; break;
		case 'R': o->pingpong = 2; break;
		case 'T': o->times = 1; break;
		case 'W': o->trace_launcher = 1; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc - 1)
		return mgr_opts_usage(&launch_doc);
	o->desc = argv[optind];
	if (!o->dir) {
		snprintf(o->defdir, sizeof(o->defdir), "tapestry-job-%d", (int)getpid());
		o->dir = o->defdir;
	}
	if (stat(o->dir, &sb) == 0) {
		mgr_err("%s already exists: choose a new job directory with -o", o->dir);
		return 2;
	}
	/* the collectors, the ranks and rank-exec run in other directories */
	if (mgr_abs_path(o->dir, o->absdir, sizeof(o->absdir)))
		return 1;
	o->dir = o->absdir;
	return -1;
}

/* The MPI sensor for the application: its program's MPI (its
 * libraries), the description's mpi= (its launcher's) only when the
 * program says nothing; a mismatch said in one line (the ranks of the
 * program then start as singletons of its MPI). */
static const char *sensor_flavour(const struct mgr_jobdesc *jd)
{
	const char *exe = jd->exe_path ? jd->exe_path : jd->executable;
	const char *mpi = mgr_jd_mpi_name(jd->mpi);
	struct mgr_mpi_guess g;

	if (jd->mpi == MGR_MPI_NONE || !exe ||
	    mgr_mpi_guess(exe, NULL, &g) < 0 || !g.app_flavour ||
	    !strcmp(g.app_flavour, mpi))
		return mpi;
	fprintf(stderr, "tapestry: %s links %s but the description says "
		"mpi=\"%s\": its %s sensor is used (its ranks may each start "
		"as a singleton)\n", jd->executable,
		!strcmp(g.app_flavour, "openmpi") ? "Open MPI" : "MPICH", mpi,
		!strcmp(g.app_flavour, "openmpi") ? "Open MPI" : "MPICH");
	return g.app_flavour;
}

/* This binary, the collector and the sensor library: 0, or
 * PROTO_E_NOTFOUND (said, mgr_fail). */
static int find_programs(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;

	if (!realpath("/proc/self/exe", L->self))
		snprintf(L->self, sizeof(L->self), "%s", TAPESTRY_BINDIR "/tapestry");
	L->collector = mgr_find_collector();
	L->lib = mgr_find_sensor(jd->sensors & MGR_SENSOR_MPI ?
				 sensor_flavour(jd) : NULL);
	if (!L->collector || access(L->collector, X_OK) != 0) {
		return mgr_fail(PROTO_E_NOTFOUND, "collector not found at %s: "
				"nothing launched", L->collector ? L->collector : "?");
	}
	if (!L->lib || access(L->lib, R_OK) != 0) {
		return mgr_fail(PROTO_E_NOTFOUND, "sensor library not found at %s: "
				"nothing launched", L->lib ? L->lib : "?");
	}
	return 0;
}

/* Per-job credentials in DIR/creds: a certificate authority, a key and
 * certificate per collector host and for the manager, and a secret, used
 * when the description names none. Edges of the tree that cross hosts run
 * TLS with them; every connection proves the secret. Creates DIR: 0, or
 * a negative code (said, mgr_fail) with DIR removed again. */
static int make_credentials(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;
	const char *names[MGR_JD_MAX_COLLECTORS];
	int nn = 0;

	if (mkdir(L->dir, 0700) < 0)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %m", L->dir);
	snprintf(L->creds, sizeof(L->creds), "%s/creds", L->dir);
	for (int i = 0; i < jd->ncollectors; i++) {
		const char *hn = jd->host[jd->col[i].host].name;
		int dup = 0;

		for (int k = 0; k < nn; k++)
			dup |= !strcmp(names[k], hn);
		if (!dup && strcmp(hn, MGR_CA_MANAGER))
			names[nn++] = hn;
	}
	if (mgr_ca_generate(L->creds, names, nn, 30) != 0) {
		mgr_fail(PROTO_E_IO, "cannot make the job's credentials in %s: "
			 "nothing launched", L->creds);
		nftw(L->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		return PROTO_E_IO;
	}
	return 0;
}

/* The job's secret (the description's file, else DIR/creds') and the
 * application's mpirun: 0, or a negative code (said, mgr_fail, but
 * PROTO_E_NOMEM). */
static int check_secret_mpirun(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;

	if (!jd->secret_file) {
		char sp[PATH_MAX + 16];

		snprintf(sp, sizeof(sp), "%s/%s", L->creds, MGR_CA_SECRET);
		if (!(jd->secret_file = strdup(sp)))
			return PROTO_E_NOMEM;
	}
	if (jd->secret_file &&
	    mgr_read_secret(jd->secret_file, L->secret, sizeof(L->secret), &L->secretlen)) {
		return mgr_fail(PROTO_E_AUTH, "cannot read the secret file %s: "
				"nothing launched", jd->secret_file);
	}
	if (jd->mpi != MGR_MPI_NONE) {
		const char *mpirun = jd->mpi == MGR_MPI_OPENMPI ? "mpirun.openmpi" :
				     "mpirun.mpich";
		char q[256] = "", cmd[512];

		mgr_shell_quote(q, sizeof(q), mpirun);
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", q);
		if (system(cmd) != 0) {
			return mgr_fail(PROTO_E_NOTFOUND, "%s not found (application "
					"mpi=\"%s\"): nothing launched", mpirun,
					mgr_jd_mpi_name(jd->mpi));
		}
		const char *says = mgr_mpi_version(mpirun);

		if (!says || strcmp(says, mgr_jd_mpi_name(jd->mpi))) {
			return mgr_fail(PROTO_E_ARG, "%s is not %s's launcher (its "
					"--version names %s; application mpi=\"%s\"): "
					"nothing launched", mpirun,
					jd->mpi == MGR_MPI_OPENMPI ? "Open MPI" : "MPICH",
					says ? says : "no MPI", mgr_jd_mpi_name(jd->mpi));
		}
	}
	return 0;
}

/* DIR/logs and DIR/plan, before anything runs (the ping-pong's hostfile
 * and log go there): 0, or PROTO_E_IO (said, mgr_fail). */
static int job_dirs(struct launch *L)
{
	char plan[PATH_MAX + 16];

	snprintf(L->logdir, sizeof(L->logdir), "%s/logs", L->dir);
	snprintf(plan, sizeof(plan), "%s/plan", L->dir);
	snprintf(L->spool, sizeof(L->spool), "%s/spool", L->dir);
	if (mkdir(L->logdir, 0700) < 0 || mkdir(plan, 0700) < 0 ||
	    mkdir(L->spool, 0700) < 0) {
		return mgr_fail(PROTO_E_IO, "cannot create the logs and the plan "
				"in %s: %m", L->dir);
	}
	return 0;
}

/* The root receiver, which writes the job directory, then the plan in
 * DIR/plan (with a copy of the description desc): 0, or a negative code
 * (said, mgr_fail). A description not copied is a warning: it goes on. */
static int start_root(struct launch *L, const char *desc)
{
	struct mgr_jobdesc *jd = L->jd;
	char listen[300], path[PATH_MAX + 64];

	snprintf(listen, sizeof(listen), "%s:%d", jd->manager_address, jd->manager_port);
	const char *root_argv[24] = {L->collector, "--listen", listen, "--print-port",
				     "--output", L->dir, "--stats-period", "1s"};
	int rn = 8, fd, rc;
	char root_tls[3][PATH_MAX + 64], root_tls_listen[300];

	if (jd->secret_file) {
		root_argv[rn++] = "--secret-file";
		root_argv[rn++] = jd->secret_file;
	}
	if (remote_child(L, -1)) {
		/* collectors of other hosts reach the manager over TLS */
		tls_words(L, MGR_CA_MANAGER, root_tls, root_argv, &rn);
		snprintf(root_tls_listen, sizeof(root_tls_listen), "%s:0",
			 jd->manager_address);
		root_argv[rn++] = "--tls-listen";
		root_argv[rn++] = root_tls_listen;
		L->root.tls_wanted = 1;
	}
	root_argv[rn] = NULL;
	/* its messages go to DIR/logs like every other collector's, not
	 * between the application's lines on the terminal */
	snprintf(path, sizeof(path), "%s/collector-root.log", L->logdir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0) {
		return mgr_fail(PROTO_E_IO, "cannot write the logs into %s: %m",
				L->logdir);
	}
	rc = mgr_spawn_listener(root_argv, &L->root, L->start_ms, 0, fd);
	close(fd);
	if (rc < 0) {
		return mgr_fail(PROTO_E_STATE, "the root receiver did not start "
				"on %s (its messages: %s)", listen, path);
	}
	fprintf(stderr, "tapestry: root receiver at %s writing %s\n", L->root.addr, L->dir);
	mgr_status_note(L->dir, L->root.addr, jd->secret_file);
	snprintf(path, sizeof(path), "%s/plan", L->dir);
	if (mgr_jobdesc_plan(desc, path, jd)) {
		return mgr_fail(PROTO_E_IO, "cannot write the plan and logs into %s",
				L->dir);
	}
	snprintf(path, sizeof(path), "%s/plan/job.xml", L->dir);
	if (copy_file(desc, path))
		mgr_err("warning: cannot copy the description to %s", path);
	return 0;
}

/* --live-ti: the live feed, a child following the job directory beside
 * the job: 0, or PROTO_E_STATE (said, mgr_fail). */
static int start_live(struct launch *L, struct mgr_live_opts *o, struct mgr_child *live)
{
	o->jobdir = L->dir;
	o->np = L->jd->processes;
	fflush(NULL);
	if ((live->pid = fork()) == 0)
		_exit(mgr_live_run(o));
	if (live->pid < 0) {
		return mgr_fail(PROTO_E_STATE, "cannot start the live feed: %m");
	}
	return 0;
}

/* Read "K: listening ADDR:PORT" lines (srun --label) from fd until every
 * one of the n tasks said one, or the deadline: task K's port into
 * ports[K]. The number of tasks heard from. */
static int read_step_ports(int fd, int n, int ports[], long long deadline)
{
	char buf[8192];
	size_t len = 0;
	int got = 0;

	while (got < n && mgr_now_ms() < deadline) {
		struct pollfd p = {fd, POLLIN, 0};
		char *nl;
		ssize_t r;

		if (poll(&p, 1, 200) <= 0)
			continue;
		r = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = 0;
		while ((nl = strchr(buf, '\n'))) {
			int k, port;

			*nl = 0;
			if (sscanf(buf, "%d: listening %*[^:]:%d", &k, &port) == 2 &&
			    k >= 0 && k < n && !ports[k]) {
				ports[k] = port;
				got++;
			}
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1)
			len = 0;
	}
	return got;
}

/* <hosts from="slurm"/> without <collectors>: the node collector of every
 * node (jobdesc.c: each directly under the root receiver) in one srun
 * step, one task per node (task K on the K-th node of the allocation),
 * stdin to every task (closing it drains them all), each task's messages
 * into DIR/logs/collector-node-NODE.log. Each listens on every address of
 * its node; its "listening" line gives its port. 0, or -1 (said). */
static int start_slurm_step(struct launch *L)
{
	struct mgr_jobdesc *jd = L->jd;
	struct mgr_child *ch = &L->col[0];
	static char nodes[32], ntasks[32], errpat[PATH_MAX + 64];
	/* per task: its node's name in --name and in its TLS files */
	static const char script[] =
		"w=$1; c=$2; t=$3; shift 3; if [ -n \"$t\" ]; then set -- \"$@\" "
		"--tls-cert \"$t/$SLURMD_NODENAME.crt\" --tls-key "
		"\"$t/$SLURMD_NODENAME.key\" --tls-ca \"$t/ca.crt\"; fi; "
		"exec /bin/sh -c \"$w\" wrapper \"$c\" --listen 0.0.0.0:0 "
		"--print-port --name \"node-$SLURMD_NODENAME\" --stats-period 1s \"$@\"";
	const char *argv[ARGV_MAX];
	char why[512] = "";
	int n = 0, in[2], out[2], tls = remote_child(L, -1), ports[MGR_JD_MAX_COLLECTORS] = {0};

	snprintf(nodes, sizeof(nodes), "--nodes=%d", jd->ncollectors);
	snprintf(ntasks, sizeof(ntasks), "--ntasks=%d", jd->ncollectors);
	snprintf(errpat, sizeof(errpat), "--error=%s/collector-node-%%N.log", L->logdir);
	const char *head[] = {"srun", "--overlap", nodes, ntasks, "--ntasks-per-node=1",
			      "--input=all", "--label", "--kill-on-bad-exit=1", errpat,
			      "/bin/sh", "-c", script, "tapestry-slurm-node", wrapper,
			      L->collector, tls ? L->creds : "",
			      "--parent", tls ? L->root.tls_addr : L->root.addr, NULL};
	for (int i = 0; head[i]; i++)
		argv[n++] = head[i];
	if (jd->secret_file) {
		argv[n++] = "--secret-file";
		argv[n++] = jd->secret_file;
	}
	argv[n] = NULL;
	if (pipe2(in, O_CLOEXEC) < 0)
		return PROTO_E_IO;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return PROTO_E_IO;
	}
	mgr_child_init(ch, "the node collectors' srun step");
	snprintf(L->colname[0], sizeof(L->colname[0]), "the node collectors' srun step");
	ch->what = L->colname[0];
	if ((ch->pid = fork()) == 0) {
		setpgid(0, 0);
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		unsetenv("LD_PRELOAD");
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (ch->pid < 0) {
		close(in[1]);
		close(out[0]);
		return PROTO_E_STATE;
	}
	setpgid(ch->pid, ch->pid);
	ch->group = 1;
	ch->in_fd = in[1];
	L->order[0] = 0;
	L->started = 1;
	L->step_out = out[0];
	int got = read_step_ports(out[0], jd->ncollectors, ports,
				  mgr_now_ms() + L->start_ms);
	if (got < jd->ncollectors) {
		return mgr_fail(PROTO_E_STATE, "srun started %d of the %d node "
				"collectors within %d s (their messages: "
				"%s/collector-node-*.log)", got, jd->ncollectors,
				L->start_ms / 1000, L->logdir);
	}
	for (int k = 0; k < jd->ncollectors; k++) {
		const struct mgr_jd_host *h = &jd->host[jd->col[k].host];

		if (k)
			mgr_child_init(&L->col[k], L->colname[k]);
		snprintf(L->col[k].addr, sizeof(L->col[k].addr), "%s:%d", h->address,
			 ports[k]);
		L->col[k].port = ports[k];
		if (wait_parent(L, ch, L->col[k].addr, why, sizeof(why)) <= 0) {
			return mgr_fail(PROTO_E_STATE, "collector '%s' on %s at %s did "
					"not connect to the manager within %d s (%s; "
					"its messages: %s/collector-node-%s.log)",
					jd->col[k].name, h->name, L->col[k].addr,
					L->start_ms / 1000, why[0] ? why : "no answer",
					L->logdir, h->name);
		}
		fprintf(stderr, "tapestry: collector '%s' on %s up at %s (srun step, "
			"parent manager)\n", jd->col[k].name, h->name, L->col[k].addr);
	}
	return 0;
}

/* Every collector, parents first, then the network ping-pong before an
 * MPI application: its mpirun started before the root receiver
 * (calibrate_start) and its ranks started up beside ours; it measures
 * once every collector is up (nothing of the job runs then). Each
 * collector is started once its parent listens (its address is all the
 * child needs); whether each reached its parent is checked once all are
 * started. 0, or -1 when a collector did not start (the ping-pong is
 * stopped then). */
static int start_tree(struct launch *L, int pingpong)
{
	struct mgr_jobdesc *jd = L->jd;
	int mpi = jd->mpi != MGR_MPI_NONE, rc;

	L->mark[PH_COLLECTORS] = mgr_now_ms();
	for (int i = 0; i < jd->ncollectors; i++)
		L->order[i] = i;
	qsort_r(L->order, (size_t)jd->ncollectors, sizeof(int), cmp_depth, jd);
	if (jd->slurm_step) {
		if ((rc = start_slurm_step(L)))
			goto fail;
	} else {
		for (int k = 0; k < jd->ncollectors; k++)
			if ((rc = start_collector(L, L->order[k])))
				goto fail;
		for (int k = 0; k < jd->ncollectors; k++)
			if ((rc = collector_up(L, L->order[k])))
				goto fail;
	}
	L->mark[PH_PINGPONG] = mgr_now_ms();
	if (mpi && pingpong) {
		calibrate_finish(L);
	} else if (mpi) {
		mgr_netcal_skip(&L->nc, "skipped (--no-pingpong)");
		fprintf(stderr, "tapestry: network ping-pong skipped (--no-pingpong): "
			"the SimGrid platform will use default latency and "
			"bandwidth\n");
	}
	return 0;
fail:
	if (mpi && pingpong)
		mgr_netcal_abort(&L->ncjob);
	return rc;
}

/* After the application (exit status app): drain the tree, end the live
 * feed, write the outputs and print the report. The command's exit
 * status. */
static int finish(struct launch *L, const struct launch_opts *o,
		  struct mgr_child *live, int app)
{
	struct mgr_jobdesc *jd = L->jd;
	int export_failed = 0, status, collected = 1;

	char how[128];

	mgr_app_ended(app, how, sizeof(how));
	fprintf(stderr, "tapestry: application %s%s; draining the collectors\n",
		how, mgr_sig_caught() ? " (tapestry was signalled: it stopped "
		"the application)" : "");
	L->mark[PH_DRAIN] = mgr_now_ms();
	mgr_netcal_reap(&L->ncjob, 10000);	/* its mpirun ended beside the app */
	/* a collector that died: its sensors went on to the next one or to
	 * the spool; the job is written and reported, the launch fails */
	if (stop_tree(L, DRAIN_TIMEOUT_MS)) {
		mgr_err_flush();
		collected = 0;
	}
	if (mgr_take_spool(L->dir, L->spool)) {
		mgr_err("collection did not finish cleanly: the job directory %s "
			"may be incomplete (tapestry report says what it holds)", L->dir);
		return 1;
	}
	fprintf(stderr, "tapestry: job directory %s written\n", L->dir);
	if (jd->mpi != MGR_MPI_NONE)
		mgr_netcal_save(L->dir, &L->nc);	/* a failure: the export's defaults */
	/* the live feed ends by itself once every rank has ended; SIGTERM
	 * makes it flush and stop when it does not */
	for (long long t0 = mgr_now_ms(); live->pid > 0 && !mgr_child_exited(live) &&
	     mgr_now_ms() - t0 < 10000;)
		usleep(20000);
	if (live->pid > 0 && mgr_child_stop(live, (o->live.drain_s + 5) * 1000))
		mgr_err("the live feed did not end cleanly: %s may be incomplete",
			o->live.outdir);
	L->mark[PH_EXPORTS] = mgr_now_ms();
	for (int i = 0; i < jd->noutputs; i++) {
		struct mgr_export_stats st = {0};

		if (mgr_export(jd->output[i], L->dir, NULL, &st)) {
			mgr_err_flush();	/* said before the next output's line */
			export_failed = 1;
			continue;
		}
		fprintf(stderr, "tapestry: output %s written (%" PRIu64 " events)\n",
			jd->output[i], st.events);
	}
	fflush(stdout);
	L->mark[PH_REPORT] = mgr_now_ms();
	if (mgr_report(L->dir, 0, stdout))
		mgr_err_flush();	/* why, before the times */
	L->mark[PH_N] = mgr_now_ms();
	fflush(stdout);		/* the report before the times, through a pipe too */
	if (o->times)
		print_times(L);
	status = o->keep_going ? 0 : app;
	if (!status && (export_failed || !collected))
		status = 1;
	return status;
}

/* The phases of a launch, in order: options, description, programs,
 * credentials (DIR created), secret and mpirun, root receiver, live feed,
 * collectors and ping-pong, application, then finish. A failure before the
 * application stops what was started and removes DIR. */
int mgr_cmd_launch(int argc, char **argv)
{
	struct launch_opts o = {0};
	struct launch *L;
	struct mgr_child live;
	int status = 1, app_ran = 0, rc;

	if ((rc = launch_options(argc, argv, &o)) >= 0)
		return rc;
	mgr_sig_catch();
	if (!(L = calloc(1, sizeof(*L)))) {
		mgr_err("out of memory");
		return 1;
	}
	L->dir = o.dir;
	L->step_out = -1;
	L->ncjob.pid = -1;
	L->ncjob.go_fd = L->ncjob.out_fd = L->ncjob.log_fd = -1;
	L->start_ms = o.start_ms;
	L->live = o.live.outdir != NULL;
	L->trace_launcher = o.trace_launcher;
	mgr_child_init(&L->root, "root receiver");
	mgr_child_init(&live, "live feed");
	L->mark[PH_SETUP] = mgr_now_ms();
	if (!(L->jd = load(o.desc, 1))) {
		mgr_err("%s is not a valid job description: nothing launched", o.desc);
		free(L);
		return 1;
	}
	if (find_programs(L) || make_credentials(L)) {
		mgr_err_flush();
		goto out;
	}
	if (check_secret_mpirun(L) || job_dirs(L))
		goto stop;
	/* first: its mpirun's start is most of its time, beside ours */
	if (L->jd->mpi != MGR_MPI_NONE && o.pingpong)
		calibrate_start(L, o.pingpong > 1);
	if (start_root(L, o.desc) ||
	    (o.live.outdir && start_live(L, &o.live, &live)) ||
	    start_tree(L, o.pingpong))
		goto stop;
	app_ran = 1;
	L->mark[PH_APP] = mgr_now_ms();
	rc = mgr_sig_caught() ? 128 + mgr_sig_caught() :
	     L->jd->mpi == MGR_MPI_NONE ? run_direct(L) : run_mpi(L);
	mgr_err_flush();	/* mpirun not started: said before "application ..." */
	status = finish(L, &o, &live, rc);
	goto out;
stop:
	mgr_err_flush();	/* the phase's failure before what stopping says */
	stop_tree(L, 5000);
	mgr_netcal_abort(&L->ncjob);
	if (!app_ran) {
		/* nothing was traced: do not leave a job directory behind */
		nftw(L->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		mgr_err("launch failed before the application started: every "
			"collector was stopped, %s removed", L->dir);
	}
out:
	stop_tree(L, 5000);
	mgr_netcal_abort(&L->ncjob);	/* ended long ago, or stopped now */
	mgr_child_stop(&live, 5000);
	if (L->step_out >= 0)
		close(L->step_out);
	mgr_jobdesc_free(L->jd);
	free(L->collector);
	free(L->lib);
	free(L);
	return mgr_sig_caught() ? 128 + mgr_sig_caught() : status;
}
