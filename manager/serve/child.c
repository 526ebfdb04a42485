/*
 * manager/serve/child.c - the server's child processes: reports, timeline
 * indexes, plans, exports and launches, each `tapestry ...` run by this
 * binary, its output read through a pipe by the event loop (the last
 * SRV_OUT_MAX bytes kept), its exit reaped on SIGCHLD.
 *
 * A child is finished once it has exited and its pipe reached EOF; then its
 * done callback runs once. Finished children stay on the list (their output
 * and status answer later requests) until a newer child of the same key
 * replaces them, at most SRV_KEEP finished launches being kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "manager/serve/serve.h"

#define SRV_KEEP 64	/* finished children kept for their output */

static int next_id = 1;

static void finish(struct srv *s, struct srv_child *c)
{
	if (c->eof && c->exited && c->kind == SRV_CHILD_LAUNCH && c->root[0] &&
	    !c->tree_ended) {
		c->tree_ended = 1;	/* its collectors are gone: stop asking */
		srv_tree_end(s->tree, c->root);
	}
	if (!c->eof || !c->exited || !c->done)
		return;
	void (*done)(struct srv *, struct srv_child *) = c->done;

	c->done = NULL;
	done(s, c);
}

static void keep(struct srv_child *c, const char *buf, size_t n)
{
	if (n >= SRV_OUT_MAX) {
		c->outbase += c->outlen + (n - SRV_OUT_MAX);
		buf += n - SRV_OUT_MAX;
		n = SRV_OUT_MAX;
		c->outlen = 0;
	}
	if (c->outlen + n > SRV_OUT_MAX) {
		size_t drop = c->outlen + n - SRV_OUT_MAX;

		memmove(c->out, c->out + drop, c->outlen - drop);
		c->outlen -= drop;
		c->outbase += drop;
	}
	memcpy(c->out + c->outlen, buf, n);
	c->outlen += n;
}

/* A launch says "tapestry: root receiver at ADDR writing DIR" (launch.c):
 * from then on the live tree follows ADDR. */
static void find_root(struct srv_child *c)
{
	static const char say[] = "root receiver at ";
	char *p = memmem(c->out, c->outlen, say, sizeof(say) - 1), *e;

	if (!p)
		return;
	p += sizeof(say) - 1;
	e = memchr(p, ' ', c->outlen - (size_t)(p - c->out));
	if (!e || e - p >= (long)sizeof(c->root))
		return;
	memcpy(c->root, p, (size_t)(e - p));
	c->root[e - p] = '\0';
	char dir[4400];

	snprintf(dir, sizeof(dir), "%s/%s", c->srv->jobs, c->job);
	srv_tree_add(c->srv->tree, c->root, c->job, dir);
}

static void on_output(evutil_socket_t fd, short what, void *arg)
{
	struct srv_child *c = arg;
	char buf[16384];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0) {
		keep(c, buf, (size_t)n);
		if (c->kind == SRV_CHILD_LAUNCH && !c->root[0])
			find_root(c);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	event_del(c->ev);
	close(c->fd);
	c->fd = -1;
	c->eof = 1;
	finish(c->srv, c);
}

static void child_exec(const char *const argv[], int out_fd, int pipe_w, int newgroup,
		       const char *cwd)
{
	int devnull = open("/dev/null", O_RDONLY);

	if (cwd && chdir(cwd) < 0)
		_exit(126);
	if (newgroup)
		setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(out_fd >= 0 ? out_fd : pipe_w, 1);
	dup2(pipe_w, 2);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv("/proc/self/exe", (char *const *)argv);
	_exit(127);
}

struct srv_child *srv_child_start(struct srv *s, enum srv_child_kind kind,
				  const char *key, const char *const argv[], int out_fd,
				  char *why, size_t whylen)
{
	return srv_child_start_in(s, kind, key, argv, out_fd, NULL, why, whylen);
}

struct srv_child *srv_child_start_in(struct srv *s, enum srv_child_kind kind,
				     const char *key, const char *const argv[], int out_fd,
				     const char *cwd, char *why, size_t whylen)
{
	struct srv_child *c = calloc(1, sizeof(*c));
	int p[2] = {-1, -1};

	if (!c || !(c->out = malloc(SRV_OUT_MAX))) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		goto fail;
	}
	if (c->pid == 0)
		child_exec(argv, out_fd, p[1], kind == SRV_CHILD_LAUNCH, cwd);
	close(p[1]);
	p[1] = -1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->fd = p[0];
	c->kind = kind;
	c->srv = s;
	c->id = next_id++;
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->ev = event_new(s->base, c->fd, EV_READ | EV_PERSIST, on_output, c);
	if (!c->ev || event_add(c->ev, NULL)) {
		snprintf(why, whylen, "event_add failed");
		kill(c->pid, SIGTERM);
		goto fail;
	}
	c->next = s->children;
	s->children = c;
	return c;
fail:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (c)
		free(c->out);
	free(c);
	return NULL;
}

struct srv_child *srv_child_find(struct srv *s, enum srv_child_kind kind,
				 const char *key)
{
	for (struct srv_child *c = s->children; c; c = c->next)
		if (c->kind == kind && !strcmp(c->key, key))
			return c;
	return NULL;
}

struct srv_child *srv_child_by_id(struct srv *s, int id)
{
	for (struct srv_child *c = s->children; c; c = c->next)
		if (c->id == id && c->kind == SRV_CHILD_LAUNCH)
			return c;
	return NULL;
}

int srv_child_running(const struct srv_child *c)
{
	return !c->exited || !c->eof;
}

static void child_free(struct srv_child *c)
{
	if (c->ev)
		event_free(c->ev);
	if (c->result)
		evbuffer_free(c->result);
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	free(c);
}

/* Free finished children shadowed by a newer one of the same kind and key,
 * and the oldest finished ones beyond SRV_KEEP. */
static void prune(struct srv *s)
{
	int kept = 0;

	for (struct srv_child **pp = &s->children; *pp;) {
		struct srv_child *c = *pp, *newer = NULL;

		for (struct srv_child *d = s->children; d != c; d = d->next)
			if (d->kind == c->kind && !strcmp(d->key, c->key))
				newer = d;
		if (!srv_child_running(c) && !c->done && (newer || ++kept > SRV_KEEP)) {
			*pp = c->next;
			child_free(c);
			continue;
		}
		pp = &c->next;
	}
}

void srv_child_reap(struct srv *s)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (struct srv_child *c = s->children; c; c = c->next) {
			if (c->pid != pid || c->exited)
				continue;
			c->exited = 1;
			c->status = WIFEXITED(st) ? WEXITSTATUS(st) :
				    128 + WTERMSIG(st);
		}
	}
	for (struct srv_child *c = s->children; c; c = c->next)
		finish(s, c);
	prune(s);
}

void srv_child_stop_all(struct srv *s)
{
	if (!s)
		return;
	for (struct srv_child *c = s->children; c; c = c->next)
		if (!c->exited && c->pid > 0) {
			kill(c->pid, SIGTERM);
			waitpid(c->pid, NULL, 0);
		}
	while (s->children) {
		struct srv_child *c = s->children;

		s->children = c->next;
		child_free(c);
	}
}
