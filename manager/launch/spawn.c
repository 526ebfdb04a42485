/*
 * manager/launch/spawn.c - processes the manager starts and stops, and where it
 * finds the components it runs (see spawn.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/spawn.h"
#include "proto/error.h"

void mgr_child_init(struct mgr_child *c, const char *what)
{
	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->in_fd = -1;
	c->what = what;
}

long long mgr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int mgr_wait_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int mgr_child_exited(struct mgr_child *c)
{
	int st;

	if (c->pid <= 0)
		return 1;
	if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
		c->status = st;
		c->pid = -1;
		return 1;
	}
	return 0;
}

/* The rest of the line of buf that starts with tag, into out (cap bytes,
 * truncated): 1 when the whole line is there, else 0 and out untouched. */
static int line_after(const char *buf, const char *tag, char *out, size_t cap)
{
	const char *l = strstr(buf, tag);
	const char *nl = l ? strchr(l, '\n') : NULL;
	size_t n;

	if (!nl)
		return 0;
	l += strlen(tag);
	n = (size_t)(nl - l);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, l, n);
	out[n] = '\0';
	return 1;
}

/* Parse "listening HOST:PORT\n" out of buf; 1 when found. */
static int parse_listening(struct mgr_child *c, const char *buf)
{
	const char *colon;

	if (!line_after(buf, "listening ", c->addr, sizeof(c->addr)))
		return 0;
	colon = strrchr(c->addr, ':');
	c->port = colon ? atoi(colon + 1) : 0;
	return c->port > 0;
}

/* Parse "listening-tls HOST:PORT\n" out of buf into c->tls_addr. */
static int parse_listening_tls(struct mgr_child *c, const char *buf)
{
	return line_after(buf, "listening-tls ", c->tls_addr, sizeof(c->tls_addr)) &&
	       strrchr(c->tls_addr, ':') != NULL;
}

int mgr_spawn_listener(const char *const argv[], struct mgr_child *c,
		       int timeout_ms, int keep_stdin, int stderr_fd)
{
	int out[2] = {-1, -1}, in[2] = {-1, -1};
	char buf[512];
	size_t len = 0;
	long long deadline;

	c->port = 0;
	c->addr[0] = '\0';
	c->tls_addr[0] = '\0';
	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	if (keep_stdin && pipe2(in, O_CLOEXEC) < 0)
		goto fail_pipe;
	c->pid = fork();
	if (c->pid < 0)
		goto fail_pipe;
	if (c->pid == 0) {
		/* a group of its own: a signal to the manager's group
		 * (`timeout -s INT`, a shell's kill of the job) is the
		 * manager's to handle; a collector that drained at once
		 * closed its listener before the sensors flushed (issue 33) */
		setpgid(0, 0);
		dup2(out[1], STDOUT_FILENO);
		if (keep_stdin)
			dup2(in[0], STDIN_FILENO);
		if (stderr_fd >= 0)
			dup2(stderr_fd, STDERR_FILENO);
		unsetenv("LD_PRELOAD");
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(out[1]);
	setpgid(c->pid, c->pid);	/* both sides: no race with kill */
	c->group = 1;
	if (keep_stdin) {
		close(in[0]);
		c->in_fd = in[1];
	}
	deadline = mgr_now_ms() + timeout_ms;
	for (;;) {
		struct pollfd pfd = {out[0], POLLIN, 0};
		long long left = deadline - mgr_now_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left > 200 ? 200 : (int)left) < 0 && errno != EINTR)
			break;
		if (!pfd.revents)
			continue;
		n = read(out[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;	/* it closed stdout: exited (or will) */
		len += (size_t)n;
		buf[len] = '\0';
		if (parse_listening(c, buf) &&
		    (!c->tls_wanted || parse_listening_tls(c, buf)))
			break;
		if (len == sizeof(buf) - 1) {	/* keep the tail only */
			memmove(buf, buf + len / 2, len - len / 2 + 1);
			len -= len / 2;
		}
	}
	close(out[0]);
	if (c->port > 0 && (!c->tls_wanted || c->tls_addr[0]))
		return 0;
	mgr_child_stop(c, 2000);
	return -1;
fail_pipe:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	c->pid = -1;
	return -1;
}

/* Sleep until pid (a child) may have exited, deadline (ms) at most: on
 * its pidfd when the kernel has them (the wake-up is the exit itself),
 * else a 5 ms step. */
static void await_exit(pid_t pid, long long deadline)
{
	long long left = deadline - mgr_now_ms();
	int fd;

	if (left <= 0)
		return;
#ifdef SYS_pidfd_open
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		struct pollfd p = {fd, POLLIN, 0};

		poll(&p, 1, left > 1000 ? 1000 : (int)left);
		close(fd);
		return;
	}
#else
	(void)fd;
#endif
	usleep(left > 5 ? 5000 : (useconds_t)left * 1000);
}

int mgr_wait_exit(pid_t pid, int timeout_ms, int *status)
{
	long long deadline = mgr_now_ms() + timeout_ms;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return 1;
		if (mgr_now_ms() >= deadline)
			return 0;
		await_exit(pid, deadline);
	}
}

static int wait_child(struct mgr_child *c, int timeout_ms, int term)
{
	int st = 0;

	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	if (c->pid <= 0)
		return WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0 ? 0 :
		       PROTO_E_STATE;
	if (term)
		kill(c->group ? -c->pid : c->pid, SIGTERM);
	if (!mgr_wait_exit(c->pid, timeout_ms, &st)) {
		mgr_fail(PROTO_E_STATE, "%s (pid %d) did not stop within %d s: "
			 "killed", c->what, (int)c->pid, timeout_ms / 1000);
		kill(c->group ? -c->pid : c->pid, SIGKILL);
		waitpid(c->pid, &st, 0);
		c->status = st;
		c->pid = -1;
		return PROTO_E_STATE;
	}
	c->status = st;
	c->pid = -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : PROTO_E_STATE;
}

int mgr_child_stop(struct mgr_child *c, int timeout_ms)
{
	return wait_child(c, timeout_ms, 1);
}

int mgr_child_close(struct mgr_child *c, int timeout_ms)
{
	return wait_child(c, timeout_ms, 0);
}

/* First of the build-tree candidates (relative to the binary's directory)
 * that exists, as an absolute path; NULL when none does. */
static char *build_tree(const char *const rel[])
{
	char self[PATH_MAX], cand[PATH_MAX * 2];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	dirname(self);
	for (size_t i = 0; rel[i]; i++) {
		snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
		if (access(cand, F_OK) == 0)
			return realpath(cand, NULL);
	}
	return NULL;
}

char *mgr_find_collector(void)
{
	/* the binary sits in collector/ or at the top of a build tree */
	static const char *const rel[] = {"../collector/tapestry-collector",
					  "../tapestry-collector", NULL};
	const char *v = getenv("TAPESTRY_COLLECTOR_BIN");
	char *p;

	if (v && *v)
		return strdup(v);
	if ((p = build_tree(rel)))
		return p;
	return strdup(TAPESTRY_BINDIR "/tapestry-collector");
}

char *mgr_find_sensor(const char *mpi)
{
	char rel[128], inst[512];

	if (mpi) {
		snprintf(rel, sizeof(rel), "../sensor/.libs/libtapestry-mpi-%s.so", mpi);
		snprintf(inst, sizeof(inst), TAPESTRY_PKGLIBDIR "/libtapestry-mpi-%s.so",
			 mpi);
		return mgr_find("TAPESTRY_SENSOR_LIB", rel, inst);
	}
	return mgr_find("TAPESTRY_SENSOR_LIB", "../sensor/.libs/libtapestry-sensor.so",
			TAPESTRY_PKGLIBDIR "/libtapestry-sensor.so");
}

char *mgr_find_data(const char *name)
{
	const char *v = getenv("TAPESTRY_SHARE_DIR");
	char a[PATH_MAX], b[PATH_MAX], *p;

	if (v && *v) {
		if (asprintf(&p, "%s/%s", v, name) < 0)
			return NULL;
		return p;
	}
	/* build tree: share/local.am copies the data into build/share */
	snprintf(a, sizeof(a), "../share/%s", name);
	snprintf(b, sizeof(b), "../%s", name);
	const char *const rel[] = {a, b, NULL};
	if ((p = build_tree(rel)))
		return p;
	if (asprintf(&p, "%s/%s", TAPESTRY_PKGDATADIR, name) < 0)
		return NULL;
	return p;
}

/* Append ch at *len; -1 when cap would be exceeded (room kept for NUL). */
static int put(char *buf, size_t cap, size_t *len, char ch)
{
	if (*len + 1 >= cap)
		return -1;
	buf[(*len)++] = ch;
	return 0;
}

int mgr_shell_quote(char *buf, size_t cap, const char *s)
{
	size_t len = strlen(buf);
	int rc = 0;

	if (len && buf[len - 1] != ' ')
		rc |= put(buf, cap, &len, ' ');
	rc |= put(buf, cap, &len, '\'');
	for (; *s && !rc; s++) {
		if (*s == '\'') {
			rc |= put(buf, cap, &len, '\'');
			rc |= put(buf, cap, &len, '\\');
			rc |= put(buf, cap, &len, '\'');
			rc |= put(buf, cap, &len, '\'');
		} else {
			rc |= put(buf, cap, &len, *s);
		}
	}
	rc |= put(buf, cap, &len, '\'');
	buf[len] = '\0';
	return rc ? -1 : 0;
}
