/*
 * manager/launch/netcal.c - network calibration: the MPI ping-pong run with the
 * job's mpirun before the application, and its figures in meta.xml.
 *
 * The ping-pong (manager/launch/pingpong.c) prints its results on stdout, which
 * goes to a log in the job directory together with mpirun's messages; the
 * manager parses the log. It runs in its own process group, killed when
 * it outlives its time. Its figures are end to end (one-way latency and
 * bandwidth between two ranks); the simgrid-platform export turns them
 * into per-link ones (xsl/simgrid-platform.xsl: two links per route).
 * Its ranks start with --wait-go: the caller lets them measure once the
 * job's collectors are up, so that the start-up of mpirun (most of the
 * ping-pong's time) runs beside theirs and the measure runs beside
 * nothing of the job. A measure is kept in a cache (rules below) and used
 * again by the next job with the same hosts, MPI and settings.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/netcal.h"
#include "manager/launch/spawn.h"
#include "proto/error.h"
#include "proto/jobdir.h"

#define LINE_MAX_NC 1024

char *mgr_netcal_program(const char *flavour)
{
	char rel[64], inst[512];

	snprintf(rel, sizeof(rel), "tapestry-pingpong-%s", flavour);
	snprintf(inst, sizeof(inst), "%s/tapestry-pingpong-%s",
		 TAPESTRY_PKGLIBEXECDIR, flavour);
	return mgr_find("TAPESTRY_PINGPONG", rel, inst);
}

void mgr_netcal_skip(struct mgr_netcal *nc, const char *fmt, ...)
{
	va_list ap;

	memset(nc, 0, sizeof(*nc));
	va_start(ap, fmt);
	vsnprintf(nc->note, sizeof(nc->note), fmt, ap);
	va_end(ap);
}

/* Wait for pid until deadline (ms); kill its group past that. Its wait
 * status, or -1 after a timeout (*timed_out set). */
static int wait_bounded(pid_t pid, long long deadline, int *timed_out)
{
	long long left = deadline - mgr_now_ms();
	int st = 0;

	*timed_out = 0;
	if (mgr_wait_exit(pid, left > 0 ? (int)left : 0, &st))
		return st;
	*timed_out = 1;
	kill(-pid, SIGTERM);
	if (!mgr_wait_exit(pid, 2000, &st)) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	return -1;
}

/* The figures of the ping-pong's log into nc; 0 when all were found. */
static int parse(const char *log, struct mgr_netcal *nc)
{
	char line[LINE_MAX_NC], a[120], b[120];
	FILE *f = fopen(log, "r");
	int got = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		double x, y;

		if (sscanf(line, "pingpong: net_latency_ns %lf net_bandwidth_Bps %lf",
			   &x, &y) == 2 && isfinite(x) && isfinite(y) && x > 0 && y > 0) {
			nc->lat_ns = x;
			nc->bw_Bps = y;
			got |= 1;
		} else if (sscanf(line, "pingpong: latency_ns min %lf median %lf",
				  &x, &y) == 2 && isfinite(x) && x > 0) {
			nc->lat_min_ns = x;
			got |= 2;
		} else if (!strncmp(line, "pingpong: bw_factor ", 20)) {
			/* "SIZE:FACTOR;...": digits and those signs only */
			const char *v = line + 20;
			size_t k = mgr_smpi_factor_span(v);

			if (k > 0 && k < sizeof(nc->bw_factor) && (v[k] == '\n' || !v[k]))
				snprintf(nc->bw_factor, sizeof(nc->bw_factor), "%.*s",
					 (int)k, v);
		} else if (sscanf(line, "pingpong: hosts %119s %119s", a, b) == 2) {
			snprintf(nc->hosts, sizeof(nc->hosts), "%s %s", a, b);
			got |= 4;
		}
	}
	fclose(f);
	return got == 7 ? 0 : -1;
}

/* The measure's failure: the warning, -1. */
static int failed(struct mgr_netcal *nc)
{
	mgr_err("warning: network ping-pong %s: the SimGrid platform will use "
		"default latency and bandwidth", nc->note);
	return -1;
}

/* The child's side of mgr_netcal_start: stdin the go socket, stdout the
 * pipe the manager reads, stderr the log; its own process group, not
 * traced. */
static void exec_pingpong(const char *argv[], int go, int out, int log)
{
	setpgid(0, 0);
	dup2(go, 0);
	dup2(out, 1);
	dup2(log, 2);
	unsetenv("LD_PRELOAD");	/* the calibration is not traced */
	if (geteuid() == 0) {
		setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
		setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	}
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

/* Close the descriptors of j that are open. */
static void close_job_fds(struct mgr_netcal_job *j)
{
	int *fds[] = {&j->go_fd, &j->out_fd, &j->log_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int mgr_netcal_start(const char *const mpirun_argv[], const char *flavour,
		     const char *log, int timeout_ms, struct mgr_netcal_job *j,
		     struct mgr_netcal *nc)
{
	const char *argv[MGR_NETCAL_ARGV_MAX];
	char *prog = mgr_netcal_program(flavour);
	int n = 0, go[2], out[2];

	memset(j, 0, sizeof(*j));
	j->pid = -1;
	j->go_fd = j->out_fd = j->log_fd = -1;
	j->timeout_ms = timeout_ms;
	j->deadline = mgr_now_ms() + timeout_ms;
	snprintf(j->log, sizeof(j->log), "%s", log);
	snprintf(j->flavour, sizeof(j->flavour), "%s", flavour);
	mgr_netcal_skip(nc, "not measured");
	if (!prog || access(prog, X_OK) != 0) {
		mgr_netcal_skip(nc, "failed: the ping-pong program %s is not "
				"installed", prog ? prog : "tapestry-pingpong");
		free(prog);
		return failed(nc);
	}
	snprintf(j->prog, sizeof(j->prog), "%s", prog);
	free(prog);
	while (mpirun_argv[n] && n < MGR_NETCAL_ARGV_MAX - 3) {
		argv[n] = mpirun_argv[n];
		n++;
	}
	argv[n++] = j->prog;
	argv[n++] = "--wait-go";
	argv[n] = NULL;
	j->log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (j->log_fd < 0) {
		mgr_netcal_skip(nc, "failed: cannot write %s: %s", log, strerror(errno));
		return failed(nc);
	}
	/* stdin a socket, not a pipe: the "go" may meet an mpirun gone
	 * already, and send() says so without a SIGPIPE; stdout a pipe the
	 * manager copies into the log, watching for the last figures */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0) {
		mgr_netcal_skip(nc, "failed: %s", strerror(errno));
		close_job_fds(j);
		return failed(nc);
	}
	fflush(NULL);
	j->pid = fork();
	if (j->pid == 0)
		exec_pingpong(argv, go[0], out[1], j->log_fd);
	close(go[0]);
	close(out[1]);
	j->go_fd = go[1];
	j->out_fd = out[0];
	if (j->pid < 0) {
		close_job_fds(j);
		mgr_netcal_skip(nc, "failed: fork: %s", strerror(errno));
		return failed(nc);
	}
	setpgid(j->pid, j->pid);
	return 0;
}

void mgr_netcal_go(struct mgr_netcal_job *j)
{
	if (j->go_fd < 0)
		return;
	if (send(j->go_fd, "go\n", 3, MSG_NOSIGNAL) < 0) {
		/* mpirun is gone: finish tells why */
	}
	close(j->go_fd);
	j->go_fd = -1;
}

/* Copy the ping-pong's stdout into the log until its last figures line
 * (1), its end (0) or the deadline (-1). */
static int copy_until_figures(struct mgr_netcal_job *j)
{
	static const char last[] = "\npingpong: bw_factor ";
	char buf[4096], tail[LINE_MAX_NC * 2] = "\n";
	size_t tl = 1;

	for (;;) {
		long long left = j->deadline - mgr_now_ms();
		struct pollfd p = {j->out_fd, POLLIN, 0};
		ssize_t n;
		char *hit;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		n = read(j->out_fd, buf, sizeof(buf));
		if (n <= 0)
			return 0;
		if (write(j->log_fd, buf, (size_t)n) != n)
			return 0;
		/* the tail of what came, enough for one whole line */
		for (ssize_t i = 0; i < n; i++) {
			if (tl == sizeof(tail) - 1) {
				memmove(tail, tail + tl / 2, tl - tl / 2);
				tl -= tl / 2;
			}
			tail[tl++] = buf[i];
		}
		tail[tl] = 0;
		if ((hit = strstr(tail, last)) && strchr(hit + 1, '\n'))
			return 1;
	}
}

int mgr_netcal_finish(struct mgr_netcal_job *j, struct mgr_netcal *nc)
{
	int st = 0, timed_out = 0, got;

	if (j->pid < 0)
		return -1;	/* the start failed and said so */
	mgr_netcal_go(j);
	got = copy_until_figures(j);
	if (got <= 0) {
		st = wait_bounded(j->pid, got < 0 ? mgr_now_ms() : j->deadline,
				  &timed_out);
		j->pid = -1;
		close_job_fds(j);
	}
	/* with every figure printed the measure is over: mpirun's end (MPI
	 * finalisation, its daemons) is reaped by mgr_netcal_reap, beside
	 * what comes next */
	if (got < 0 || timed_out) {
		mgr_netcal_skip(nc, "failed: no result within %d s (see %s)",
				j->timeout_ms / 1000, j->log);
		return failed(nc);
	}
	if (!got && (st < 0 || mgr_wait_code(st) != 0)) {
		mgr_netcal_skip(nc, "failed: %s exited with status %d (see %s)",
				j->prog, st < 0 ? -1 : mgr_wait_code(st), j->log);
		return failed(nc);
	}
	if (parse(j->log, nc) != 0) {
		mgr_netcal_skip(nc, "failed: no figures in %s", j->log);
		return failed(nc);
	}
	nc->ok = 1;
	nc->when = time(NULL);
	snprintf(nc->flavour, sizeof(nc->flavour), "%s", j->flavour);
	snprintf(nc->note, sizeof(nc->note), "MPI ping-pong (%s) between %s "
		 "before the application: one-way latency median of 1-byte "
		 "round trips / 2, bandwidth of 4 MiB messages", j->flavour,
		 nc->hosts);
	return 0;
}

void mgr_netcal_reap(struct mgr_netcal_job *j, int timeout_ms)
{
	long long end = mgr_now_ms() + timeout_ms;
	char buf[4096];
	ssize_t n;
	int st;

	if (j->go_fd >= 0) {
		close(j->go_fd);
		j->go_fd = -1;
	}
	/* what mpirun still says goes to the log too */
	while (j->out_fd >= 0 && mgr_now_ms() < end) {
		struct pollfd p = {j->out_fd, POLLIN, 0};

		if (poll(&p, 1, 100) > 0 && ((n = read(j->out_fd, buf, sizeof(buf))) <= 0 ||
					     write(j->log_fd, buf, (size_t)n) != n))
			break;
	}
	if (j->pid > 0) {
		long long left = end - mgr_now_ms();

		if (!mgr_wait_exit(j->pid, left > 0 ? (int)left : 0, &st)) {
			kill(-j->pid, SIGTERM);
			if (!mgr_wait_exit(j->pid, 2000, &st)) {
				kill(-j->pid, SIGKILL);
				while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
					;
			}
		}
	}
	j->pid = -1;
	close_job_fds(j);
}

void mgr_netcal_abort(struct mgr_netcal_job *j)
{
	if (j->pid > 0)
		kill(-j->pid, SIGTERM);
	mgr_netcal_reap(j, 2000);
}

/* ---- the cache ------------------------------------------------------------
 *
 * A measure is kept per key (netcal.h: what it depends on) in
 * $TAPESTRY_CACHE_DIR (none: no cache), else $XDG_CACHE_HOME/tapestry, else
 * ~/.cache/tapestry, file netcal-HASH (FNV-1a of the key; the whole key
 * is in the file and compared). A measure is used again only when every
 * line of its key is the same (same hosts, MPI, mpirun and ping-pong
 * binaries, environment, and this machine not rebooted since) and it is
 * at most MGR_NETCAL_MAX_AGE_S old; --fresh-pingpong measures again and
 * replaces it. Failures are never kept. The job's meta.xml says which it
 * was (net_calibration_cached) and when it was measured
 * (net_calibration_date). */

#define CACHE_MAGIC "tapestry netcal cache 1\n"

void mgr_netcal_key_add(struct mgr_netcal_key *k, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (k->bad)
		return;
	va_start(ap, fmt);
	n = vsnprintf(k->text + k->len, sizeof(k->text) - k->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n + 2 > sizeof(k->text) - k->len ||
	    strchr(k->text + k->len, '\n')) {
		k->bad = 1;
		return;
	}
	k->len += (size_t)n;
	k->text[k->len++] = '\n';
	k->text[k->len] = '\0';
}

/* "PATH SIZE MTIME" of a program (searched in PATH when it has no '/'). */
static void key_file(struct mgr_netcal_key *k, const char *what, const char *prog)
{
	char cand[PATH_MAX], real[PATH_MAX];
	const char *path = strchr(prog, '/') ? NULL : getenv("PATH");
	struct stat sb;
	int found = 0;

	if (strchr(prog, '/'))
		found = realpath(prog, real) != NULL;
	for (const char *p = path; !found && p && *p;) {
		size_t len = strcspn(p, ":");

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, p, prog);
		found = access(cand, X_OK) == 0 && realpath(cand, real) != NULL;
		p += len + (p[len] == ':');
	}
	if (!found || stat(real, &sb) != 0) {
		k->bad = 1;
		return;
	}
	mgr_netcal_key_add(k, "%s %s %lld %lld.%09ld", what, real,
			   (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
			   sb.st_mtim.tv_nsec);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The environment's MPI and fabric settings, sorted (they choose the
 * transport the ping-pong measures). */
static void key_environ(struct mgr_netcal_key *k)
{
	static const char *const pre[] = {"OMPI_MCA_", "PMIX_MCA_", "PRTE_MCA_",
		"MPIR_CVAR_", "MPICH_", "HYDRA_", "FI_", "UCX_", "PSM2_", "I_MPI_", NULL};
	const char *v[256];
	size_t n = 0;

	for (char **e = environ; *e && n < 256; e++)
		for (int i = 0; pre[i]; i++)
			if (!strncmp(*e, pre[i], strlen(pre[i]))) {
				v[n++] = *e;
				break;
			}
	qsort(v, n, sizeof(v[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		mgr_netcal_key_add(k, "env %s", v[i]);
}

void mgr_netcal_key_init(struct mgr_netcal_key *k, const char *flavour,
			 const char *mpirun)
{
	char boot[64] = "", *prog = mgr_netcal_program(flavour);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	memset(k, 0, sizeof(*k));
	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			boot[0] = 0;
		fclose(f);
		boot[strcspn(boot, "\n")] = 0;
	}
	mgr_netcal_key_add(k, "flavour %s", flavour);
	mgr_netcal_key_add(k, "boot %s", boot);
	key_file(k, "mpirun", mpirun);
	if (prog)
		key_file(k, "program", prog);
	else
		k->bad = 1;
	free(prog);
	key_environ(k);
}

/* The cache directory is trusted only when it is this user's alone (a
 * directory, owned by us, mode 0700): another user could plant figures in
 * it or a link where the file goes. Else the cache is not used (said once)
 * and the network is measured. */
static int cache_dir_ours(const char *dir)
{
	static int said;
	struct stat st;

	if (stat(dir, &st) < 0)
		return 0;	/* not made (read only): nothing kept */
	if (S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	    !(st.st_mode & 077))
		return 1;
	if (!said++)
		mgr_err("warning: %s is not a directory of this user's alone "
			"(mode 0700): the network ping-pong's cache is not "
			"used", dir);
	return 0;
}
/* The cache file of k into path: 0, or -1 (no cache). */
static int cache_path(const struct mgr_netcal_key *k, char *path, size_t cap, int make)
{
	const char *d = getenv("TAPESTRY_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char dir[PATH_MAX];
	uint64_t h = 14695981039346656037ull;

	if (k->bad || (d && (!*d || !strcmp(d, "none"))))
		return -1;
	if (d)
		snprintf(dir, sizeof(dir), "%s", d);
	else if (x && *x == '/')
		snprintf(dir, sizeof(dir), "%s/tapestry", x);
	else if (home && *home == '/')
		snprintf(dir, sizeof(dir), "%s/.cache/tapestry", home);
	else
		return -1;
	if (make && !d && !(x && *x == '/')) {
		char parent[PATH_MAX];

		snprintf(parent, sizeof(parent), "%s/.cache", home);
		mkdir(parent, 0700);
	}
	if (make && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (!cache_dir_ours(dir))
		return -1;
	for (size_t i = 0; i < k->len; i++)
		h = (h ^ (unsigned char)k->text[i]) * 1099511628211ull;
	snprintf(path, cap, "%s/netcal-%016llx", dir, (unsigned long long)h);
	return 0;
}

/* The date of t in UTC, ISO 8601. */
static void iso_date(time_t t, char *buf, size_t cap)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Read the cache file f of k: its date into *when and its lines into log
 * (after a line saying where they come from). 0 when it is k's. */
static int cache_read(FILE *f, const struct mgr_netcal_key *k, const char *path,
		      const char *log, time_t *when)
{
	char line[LINE_MAX_NC], key[sizeof(k->text)], date[40];
	size_t len = 0;
	long long t;
	FILE *out;

	if (!fgets(line, sizeof(line), f) || strcmp(line, CACHE_MAGIC) ||
	    !fgets(line, sizeof(line), f) || sscanf(line, "measured %lld", &t) != 1)
		return -1;
	while (fgets(line, sizeof(line), f) && strcmp(line, "--\n")) {
		size_t n = strlen(line);

		if (strncmp(line, "key ", 4) || len + n - 4 >= sizeof(key))
			return -1;
		memcpy(key + len, line + 4, n - 4);
		len += n - 4;
	}
	if (len != k->len || memcmp(key, k->text, len))
		return -1;
	if (!(out = fopen(log, "w")))
		return -1;
	iso_date((time_t)t, date, sizeof(date));
	fprintf(out, "# measured %s by an earlier job, from %s\n", date, path);
	while (fgets(line, sizeof(line), f))
		fputs(line, out);
	*when = (time_t)t;
	return fclose(out) ? -1 : 0;
}

int mgr_netcal_cached(const struct mgr_netcal_key *k, const char *log,
		      struct mgr_netcal *nc)
{
	char path[PATH_MAX + 64], date[40];
	time_t when = 0, now = time(NULL);
	FILE *f;
	int rc;

	if (cache_path(k, path, sizeof(path), 0) || !(f = fopen(path, "r")))
		return 0;
	rc = cache_read(f, k, path, log, &when);
	fclose(f);
	if (rc || when > now + 60 || now - when > MGR_NETCAL_MAX_AGE_S)
		return 0;
	mgr_netcal_skip(nc, "not measured");
	if (parse(log, nc) != 0)
		return 0;
	nc->ok = 1;
	nc->cached = 1;
	nc->when = when;
	sscanf(k->text, "flavour %15s", nc->flavour);
	iso_date(when, date, sizeof(date));
	/* a long path is cut: the note still says what it is */
	if (snprintf(nc->note, sizeof(nc->note), "MPI ping-pong (%s) between %s, "
		 "measured %s before an earlier job with the same hosts, MPI and "
		 "settings (kept in %.200s; --fresh-pingpong measures again): "
		 "one-way latency median of 1-byte round trips / 2, bandwidth "
		 "of 4 MiB messages", nc->flavour, nc->hosts, date, path) < 0)
		nc->note[0] = 0;
	return 1;
}

/* A measure taken while the machine was busy: the median one-way latency
 * more than 4 times the fastest (on an idle loopback or network, 1.1-1.5
 * times). Said with the figures, and not kept for the next jobs. */
static int busy(const struct mgr_netcal *nc)
{
	return nc->ok && nc->lat_min_ns > 0 && nc->lat_ns > 4 * nc->lat_min_ns;
}

void mgr_netcal_store(const struct mgr_netcal_key *k, const char *log,
		      const struct mgr_netcal *nc)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 96], line[LINE_MAX_NC];
	FILE *in, *out;
	int ok, fd;

	if (!nc->ok || nc->cached || busy(nc) || cache_path(k, path, sizeof(path), 1))
		return;
	if (!(in = fopen(log, "r")))
		return;
	/* a name no one can guess, made here (O_EXCL): never a link */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0 || !(out = fdopen(fd, "w"))) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		fclose(in);
		return;
	}
	fprintf(out, "%smeasured %lld\n", CACHE_MAGIC, (long long)nc->when);
	for (const char *p = k->text; *p; p += strcspn(p, "\n") + 1)
		fprintf(out, "key %.*s\n", (int)strcspn(p, "\n"), p);
	fputs("--\n", out);
	while (fgets(line, sizeof(line), in))
		if (!strncmp(line, "pingpong: ", 10))
			fputs(line, out);
	fclose(in);
	ok = !ferror(out);
	if (fclose(out) || !ok || rename(tmp, path))
		unlink(tmp);
}

void mgr_netcal_brief(const struct mgr_netcal *nc, char *buf, size_t cap)
{
	char date[40] = "";

	if (nc->cached)
		iso_date(nc->when, date, sizeof(date));
	if (nc->ok)
		snprintf(buf, cap, "ping-pong (%s, %s%s%s): one-way latency %.3g us "
			 "(min %.3g us), bandwidth %.3g GB/s%s", nc->flavour, nc->hosts,
			 nc->cached ? "; kept from " : "", date,
			 nc->lat_ns / 1e3, nc->lat_min_ns / 1e3, nc->bw_Bps / 1e9,
			 busy(nc) ? "; warning: the median is over 4 times the fastest,"
			 " the machine was busy: the figures may be poor (not kept;"
			 " --no-pingpong, or run again when it is quiet)" : "");
	else
		snprintf(buf, cap, "ping-pong %s", nc->note);
}

int mgr_netcal_save(const char *dir, const struct mgr_netcal *nc)
{
	struct proto_jobdir_w *w;
	char v[64];
	int rc = 0;

	if (!(w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc))) {
		mgr_err("%s: cannot record the network calibration: %s", dir,
			proto_strerror(rc));
		return rc;
	}
	rc = proto_jobdir_set_meta(w, "net_calibration", nc->note);
	if (nc->ok) {
		snprintf(v, sizeof(v), "%.1f", nc->lat_ns);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_latency_ns", v);
		snprintf(v, sizeof(v), "%.1f", nc->lat_min_ns);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_latency_min_ns", v);
		snprintf(v, sizeof(v), "%.6g", nc->bw_Bps);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_bandwidth_Bps", v);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_hosts", nc->hosts);
		if (!rc && nc->bw_factor[0])
			rc = proto_jobdir_set_meta(w, "net_bw_factor", nc->bw_factor);
		iso_date(nc->when, v, sizeof(v));
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_calibration_date", v);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_calibration_cached",
						   nc->cached ? "yes" : "no");
	}
	int crc = proto_jobdir_close(w);

	if (!rc)
		rc = crc;
	if (rc)
		mgr_err("%s: cannot record the network calibration: %s", dir,
			proto_strerror(rc));
	return rc;
}
