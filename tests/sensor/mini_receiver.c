/*
 * tests/sensor/mini_receiver.c - a minimal collector for the sensor tests.
 *
 *   mini_receiver --listen HOST:PORT --output DIR [--secret S]
 *                 [--port-file F] [--drop-first N]
 *
 * poll()-based, one process: speaks the handshake (empty secret unless
 * given), acknowledges every BATCH cumulatively per stream (duplicates by
 * (stream, seq) are acknowledged, not stored), answers PING with PONG, and
 * appends every frame after the handshake but PING to the job directory
 * DIR with proto_jobdir. PORT 0 picks a free port, written to F. Exits on
 * SIGTERM or SIGINT after closing the job directory. --drop-first N closes
 * each of the first N connections right after its first BATCH (to test
 * reconnection and resending).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

#define MAXCONN 512
#define MAXSTREAMS 8192

struct conn {
	int fd;
	int state;		/* 0 HELLO, 1 AUTH, 2 running */
	uint8_t cnonce[PROTO_NONCE], snonce[PROTO_NONCE];
	uint64_t id;
	uint8_t *buf;
	size_t len, cap;
	int batches;
	int drop_after_batch;
};

static struct conn conns[MAXCONN];
static struct {
	uint64_t stream, last;
} streams[MAXSTREAMS];
static int nstreams;
static volatile sig_atomic_t stop;
static struct proto_jobdir_w *jd;
static const char *secret = "";
static struct proto_msg msg, out;
static int drop_first;

static void on_signal(int s)
{
	(void)s;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t *stream_last(uint64_t stream)
{
	for (int i = 0; i < nstreams; i++)
		if (streams[i].stream == stream)
			return &streams[i].last;
	if (nstreams == MAXSTREAMS)
		return NULL;
	streams[nstreams].stream = stream;
	streams[nstreams].last = 0;
	return &streams[nstreams++].last;
}

static void drop(struct conn *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static int reply(struct conn *c, const struct proto_msg *m)
{
	uint8_t b[4096];
	size_t n, off = 0;

	if (proto_msg_frame(m, b, sizeof(b), &n))
		return -1;
	while (off < n) {
		ssize_t r = send(c->fd, b + off, n - off, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

static int store(const uint8_t *frame, size_t len)
{
	int rc = proto_jobdir_append(jd, frame, len);

	if (rc)
		fprintf(stderr, "mini_receiver: append: %s\n",
			proto_strerror(rc));
	return rc;
}

/* Handle one frame; -1 closes the connection. */
static int handle(struct conn *c, const struct proto_frame *f,
		  const uint8_t *raw, size_t rawlen)
{
	uint64_t t_recv = now_ns();
	int rc = proto_msg_decode(f, &msg);

	if (rc) {
		fprintf(stderr, "mini_receiver: bad %s: %s\n",
			proto_msg_name(f->type) ? proto_msg_name(f->type) : "?",
			proto_strerror(rc));
		return -1;
	}
	memset(&out, 0, sizeof(out));
	if (c->state == 0) {
		if (f->type != PROTO_MSG_HELLO)
			return -1;
		memcpy(c->cnonce, msg.u.hello.nonce, PROTO_NONCE);
		c->id = msg.u.hello.id;
		proto_random(c->snonce, PROTO_NONCE);
		out.type = PROTO_MSG_CHALLENGE;
		out.u.challenge.flags = *secret ? PROTO_AUTH_REQUIRED : 0;
		memcpy(out.u.challenge.nonce, c->snonce, PROTO_NONCE);
		c->state = 1;
		return reply(c, &out);
	}
	if (c->state == 1) {
		uint8_t want[PROTO_MAC];

		if (f->type != PROTO_MSG_AUTH)
			return -1;
		proto_auth_proof(PROTO_AUTH_CLIENT, secret, strlen(secret),
				 c->snonce, c->cnonce, c->id, want);
		if (!proto_auth_equal(want, msg.u.auth.mac)) {
			out.type = PROTO_MSG_ERROR;
			out.u.error.code = PROTO_E_AUTH;
			snprintf(out.u.error.message,
				 sizeof(out.u.error.message),
				 "authentication failed");
			reply(c, &out);
			fprintf(stderr, "mini_receiver: AUTH refused\n");
			return -1;
		}
		out.type = PROTO_MSG_WELCOME;
		out.u.welcome.node_id = 0x5151;
		proto_auth_proof(PROTO_AUTH_SERVER, secret, strlen(secret),
				 c->snonce, c->cnonce, c->id,
				 out.u.welcome.mac);
		c->state = 2;
		return reply(c, &out);
	}
	switch (f->type) {
	case PROTO_MSG_PING:
		out.type = PROTO_MSG_PONG;
		out.u.pong.id = msg.u.ping.id;
		out.u.pong.t_orig = msg.u.ping.t_send;
		out.u.pong.t_recv = t_recv;
		out.u.pong.t_send = now_ns();
		return reply(c, &out);
	case PROTO_MSG_BATCH: {
		uint64_t *last = stream_last(msg.u.batch.stream);

		if (!last || c->drop_after_batch)
			return -1;	/* (a crash before storing) */
		if (msg.u.batch.seq > *last) {
			if (store(raw, rawlen))
				return -1;
			*last = msg.u.batch.seq;
		}
		out.type = PROTO_MSG_ACK;
		out.u.ack.stream = msg.u.batch.stream;
		out.u.ack.seq = *last;
		return reply(c, &out);
	}
	case PROTO_MSG_BYE: {
		uint64_t *last = stream_last(msg.u.bye.stream);

		store(raw, rawlen);
		out.type = PROTO_MSG_ACK;
		out.u.ack.stream = msg.u.bye.stream;
		out.u.ack.seq = last ? *last : 0;
		reply(c, &out);
		return -1;
	}
	case PROTO_MSG_META:
	case PROTO_MSG_CLOCK:
	case PROTO_MSG_LOSS:
	case PROTO_MSG_STATS:
		return store(raw, rawlen) ? -1 : 0;
	default:
		return -1;
	}
}

static void readable(struct conn *c)
{
	for (;;) {
		ssize_t n;

		if (c->cap - c->len < 65536) {
			size_t ncap = c->cap ? c->cap * 2 : 131072;
			uint8_t *nb;

			if (ncap > PROTO_FRAME_MAX + 2 * PROTO_FRAME_HDR + 65536)
				ncap = PROTO_FRAME_MAX + 2 * PROTO_FRAME_HDR +
				       65536;
			if (ncap <= c->cap) {
				drop(c);
				return;
			}
			nb = realloc(c->buf, ncap);
			if (!nb) {
				drop(c);
				return;
			}
			c->buf = nb;
			c->cap = ncap;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (n == 0) {
			drop(c);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				drop(c);
			break;
		}
		c->len += (size_t)n;
		for (;;) {
			struct proto_frame f;
			size_t used = 0;
			int rc = proto_frame_decode(c->buf, c->len, 0, &f, &used);

			if (rc == PROTO_E_TRUNCATED)
				break;
			if (rc || handle(c, &f, c->buf, used) < 0) {
				drop(c);
				return;
			}
			memmove(c->buf, c->buf + used, c->len - used);
			c->len -= used;
		}
	}
}

static int listen_on(const char *spec, int *port)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = {0}, *res;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd, one = 1;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(host, colon + 1, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) ||
	    listen(fd, 256)) {
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(ss.ss_family == AF_INET6
			      ? ((struct sockaddr_in6 *)&ss)->sin6_port
			      : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

int main(int argc, char **argv)
{
	const char *listen_spec = NULL, *outdir = NULL, *port_file = NULL;
	struct sigaction sa;
	int lfd, port = 0, rc;
	struct pollfd *p;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen_spec = argv[++i];
		else if (!strcmp(argv[i], "--output") && i + 1 < argc)
			outdir = argv[++i];
		else if (!strcmp(argv[i], "--secret") && i + 1 < argc)
			secret = argv[++i];
		else if (!strcmp(argv[i], "--port-file") && i + 1 < argc)
			port_file = argv[++i];
		else if (!strcmp(argv[i], "--drop-first") && i + 1 < argc)
			drop_first = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: mini_receiver --listen HOST:PORT "
				"--output DIR [--secret S] [--port-file F] "
				"[--drop-first N]\n");
			return 2;
		}
	}
	if (!listen_spec || !outdir) {
		fprintf(stderr, "mini_receiver: --listen and --output needed\n");
		return 2;
	}
	jd = proto_jobdir_create(outdir, 0, 0, &rc);
	if (!jd) {
		fprintf(stderr, "mini_receiver: %s: %s\n", outdir,
			proto_strerror(rc));
		return 1;
	}
	lfd = listen_on(listen_spec, &port);
	if (lfd < 0) {
		fprintf(stderr, "mini_receiver: cannot listen on %s\n",
			listen_spec);
		proto_jobdir_close(jd);
		return 1;
	}
	if (port_file) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) ||
		    rename(tmp, port_file)) {
			fprintf(stderr, "mini_receiver: cannot write %s\n",
				port_file);
			return 1;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < MAXCONN; i++)
		conns[i].fd = -1;
	p = calloc(MAXCONN + 1, sizeof(*p));
	if (!p)
		return 1;
	while (!stop) {
		int n = 0, map[MAXCONN];

		p[n].fd = lfd;
		p[n++].events = POLLIN;
		for (int i = 0; i < MAXCONN; i++)
			if (conns[i].fd >= 0) {
				map[n - 1] = i;
				p[n].fd = conns[i].fd;
				p[n++].events = POLLIN;
			}
		if (poll(p, (nfds_t)n, 200) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			for (int i = 0; fd >= 0 && i < MAXCONN; i++)
				if (conns[i].fd < 0) {
					conns[i].fd = fd;
					if (drop_first > 0) {
						conns[i].drop_after_batch = 1;
						drop_first--;
					}
					fd = -1;
				}
			if (fd >= 0)
				close(fd);
		}
		for (int k = 1; k < n; k++)
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				if (conns[map[k - 1]].fd == p[k].fd)
					readable(&conns[map[k - 1]]);
	}
	for (int i = 0; i < MAXCONN; i++)
		if (conns[i].fd >= 0)
			drop(&conns[i]);
	free(p);
	close(lfd);
	rc = proto_jobdir_close(jd);
	if (rc)
		fprintf(stderr, "mini_receiver: close: %s\n", proto_strerror(rc));
	return rc ? 1 : 0;
}
