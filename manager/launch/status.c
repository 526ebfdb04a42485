/*
 * manager/launch/status.c - `tapestry status`: the live collector tree, and the
 * status client `tapestry launch` uses to see that a collector is up.
 *
 * A status client is a connection of role STATUS (docs/PROTOCOL.md): the
 * usual HELLO / CHALLENGE / AUTH / WELCOME handshake, then the collector
 * sends one STATS frame of its own and the last STATS frame of every
 * collector below it that it has heard from, and closes. Blocking sockets
 * with a receive timeout: one short exchange.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "manager/launch/jobdesc.h"
#include "manager/mgr.h"
#include "manager/opts.h"
#include "manager/launch/spawn.h"
#include "manager/launch/status.h"
#include "proto/auth.h"
#include "proto/error.h"
#include "proto/msg.h"
#include "proto/num.h"

#define STATUS_BUF_MAX (1u << 20)	/* STATS frames are < 270 KB */
#define STATUS_MAX_NODES 1024

/* A blocking socket connected to addr ("HOST:PORT"), its reads and writes
 * limited to timeout_ms; or a negative PROTO_E_* code with the reason in why. */
static int connect_to(const char *addr, int timeout_ms, char *why, size_t whylen)
{
	char host[256], *colon;
	struct addrinfo hints = {0}, *res = NULL;
	int fd = -1, rc;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (!colon) {
		snprintf(why, whylen, "'%s' is not ADDR:PORT", addr);
		return PROTO_E_ARG;
	}
	*colon = '\0';
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host[0] == '[' ? host + 1 : host, colon + 1,
			      &hints, &res)) != 0) {
		snprintf(why, whylen, "%s: %s", addr, gai_strerror(rc));
		return PROTO_E_NOTFOUND;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	if (connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		struct pollfd p = {fd, POLLOUT, 0};
		int err = 0;
		socklen_t el = sizeof(err);

		if (errno != EINPROGRESS)
			goto fail;
		if (poll(&p, 1, timeout_ms) <= 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			errno = err;
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, 0);
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	freeaddrinfo(res);
	return fd;
fail:
	snprintf(why, whylen, "connect to %s: %s", addr, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return PROTO_E_IO;
}

static int send_msg(int fd, const struct proto_msg *m)
{
	uint8_t *buf = NULL;
	size_t len = 0, off = 0;
	int rc = proto_msg_frame_alloc(m, &buf, &len);

	while (!rc && off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			rc = PROTO_E_IO;
		else
			off += (size_t)n;
	}
	free(buf);
	return rc;
}

struct reader {
	int fd;
	uint8_t *buf;
	size_t len, cap;
};

/* Next frame decoded into *m. 0, PROTO_E_CLOSED at a clean end, or a code. */
static int read_msg(struct reader *r, struct proto_msg *m)
{
	for (;;) {
		struct proto_frame f;
		size_t used = 0;
		int rc = proto_frame_decode(r->buf, r->len, STATUS_BUF_MAX, &f, &used);

		if (rc == 0) {
			rc = proto_msg_decode(&f, m);
			m->type = f.type;
			memmove(r->buf, r->buf + used, r->len - used);
			r->len -= used;
			return rc;
		}
		if (rc != PROTO_E_TRUNCATED)
			return rc;
		if (r->len == r->cap) {
			size_t ncap = r->cap ? r->cap * 2 : 65536;
			uint8_t *nb;

			if (ncap > STATUS_BUF_MAX + PROTO_FRAME_HDR)
				return PROTO_E_TOOBIG;
			if (!(nb = realloc(r->buf, ncap)))
				return PROTO_E_NOMEM;
			r->buf = nb;
			r->cap = ncap;
		}
		ssize_t n = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);

		if (n == 0)
			return r->len ? PROTO_E_TRUNCATED : PROTO_E_CLOSED;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ?
			       PROTO_E_IO : PROTO_E_IO;
		r->len += (size_t)n;
	}
}

/* Send m and read the answer into m: 0 when it is of type want, 1 when
 * it is an ERROR, else a negative PROTO_E_* (PROTO_E_STATE: another type). */
static int exchange(struct reader *r, struct proto_msg *m, int want)
{
	int rc;

	if ((rc = send_msg(r->fd, m)) || (rc = read_msg(r, m)))
		return rc;
	if (m->type == PROTO_MSG_ERROR)
		return 1;
	return m->type == want ? 0 : PROTO_E_STATE;
}

int mgr_status_query(const char *addr, const void *secret, size_t secretlen,
		     int timeout_ms,
		     void (*cb)(const struct proto_meta *, void *), void *arg,
		     char *why, size_t whylen)
{
	struct proto_msg *m = calloc(1, sizeof(*m));
	struct reader r = {.fd = -1};
	uint8_t cnonce[PROTO_NONCE], snonce[PROTO_NONCE], want[PROTO_MAC];
	uint64_t id = 0;
	int rc = PROTO_E_IO;

	why[0] = '\0';
	if (!m) {
		snprintf(why, whylen, "out of memory");
		return PROTO_E_NOMEM;
	}
	if ((r.fd = connect_to(addr, timeout_ms, why, whylen)) < 0)
		goto out;
	if ((rc = proto_random(cnonce, sizeof(cnonce))) ||
	    (rc = proto_random(&id, sizeof(id))))
		goto fail_proto;
	m->type = PROTO_MSG_HELLO;
	m->u.hello.role = PROTO_ROLE_STATUS;
	m->u.hello.pid = (uint32_t)getpid();
	m->u.hello.id = id;
	m->u.hello.rank = -1;
	memcpy(m->u.hello.nonce, cnonce, PROTO_NONCE);
	gethostname(m->u.hello.host, PROTO_HOST_MAX);
	m->u.hello.host[PROTO_HOST_MAX] = '\0';
	snprintf(m->u.hello.name, sizeof(m->u.hello.name), "tapestry-status");
	if ((rc = exchange(&r, m, PROTO_MSG_CHALLENGE)) > 0)
		goto fail_error;
	if (rc)
		goto fail_proto;
	memcpy(snonce, m->u.challenge.nonce, PROTO_NONCE);
	if ((m->u.challenge.flags & PROTO_AUTH_REQUIRED) && !secretlen) {
		snprintf(why, whylen, "%s wants a job secret: give --secret-file", addr);
		rc = PROTO_E_AUTH;
		goto out;
	}
	memset(m, 0, sizeof(*m));
	m->type = PROTO_MSG_AUTH;
	proto_auth_proof(PROTO_AUTH_CLIENT, secret, secretlen, snonce, cnonce, id,
			 m->u.auth.mac);
	if ((rc = exchange(&r, m, PROTO_MSG_WELCOME)) > 0)
		goto fail_error;
	if (rc)
		goto fail_proto;
	proto_auth_proof(PROTO_AUTH_SERVER, secret, secretlen, snonce, cnonce, id, want);
	if (!proto_auth_equal(want, m->u.welcome.mac)) {
		snprintf(why, whylen, "%s: the collector's proof is wrong (another "
			 "job's secret?)", addr);
		rc = PROTO_E_AUTH;
		goto out;
	}
	while ((rc = read_msg(&r, m)) == 0) {
		if (m->type == PROTO_MSG_STATS && cb)
			cb(&m->u.meta, arg);
		else if (m->type == PROTO_MSG_ERROR)
			goto fail_error;
	}
	if (rc == PROTO_E_CLOSED)
		rc = 0;
	else
		goto fail_proto;
	goto out;
fail_error:
	snprintf(why, whylen, "%s refused: %s (%s)", addr, m->u.error.message,
		 proto_strerror(m->u.error.code));
	rc = m->u.error.code < 0 ? m->u.error.code : PROTO_E_STATE;
	goto out;
fail_proto:
	if (!why[0])
		snprintf(why, whylen, "%s: %s", addr, rc == PROTO_E_IO ?
			 "no answer (timed out or connection reset)" :
			 proto_strerror(rc));
out:
	if (r.fd >= 0)
		close(r.fd);
	free(r.buf);
	free(m);
	return rc;
}

/* ---- tapestry status ------------------------------------------------------ */

struct node {
	struct proto_meta kv;
	uint64_t id, parent;
	int shown;
};

struct tree {
	struct node *n;
	int count;
};

static void collect(const struct proto_meta *m, void *arg)
{
	struct tree *t = arg;
	const char *p;

	if (t->count == STATUS_MAX_NODES)
		return;
	struct node *nd = &t->n[t->count++];

	nd->kv = *m;
	nd->id = m->id;
	p = proto_meta_get(m, "parent");
	nd->parent = p ? strtoull(p, NULL, 16) : 0;
}

static const char *human(const char *v, char *buf, size_t cap)
{
	double d = v ? strtod(v, NULL) : 0;
	static const char *unit[] = {"", "K", "M", "G", "T"};
	int u = 0;

	while (d >= 1000 && u < 4) {
		d /= 1000;
		u++;
	}
	snprintf(buf, cap, u ? "%.1f%s" : "%.0f%s", d, unit[u]);
	return buf;
}

static void show(struct tree *t, int i, int depth)
{
	const struct proto_meta *m = &t->n[i].kv;
	char a[32], b[32], c[32], d[32], e[32];
	const char *name = proto_meta_get(m, "name"), *host = proto_meta_get(m, "host"),
		   *role = proto_meta_get(m, "role");

	t->n[i].shown = 1;
	printf("%*s%s %s (node %016" PRIx64 ") on %s\n", depth * 2, "",
	       role && !strcmp(role, "root") ? "root" : "collector",
	       name ? name : "?", t->n[i].id, host ? host : "?");
	printf("%*s  children %s, streams %s, %s events/s, %s B/s; in %s events, "
	       "%s B\n", depth * 2, "",
	       proto_meta_get(m, "children") ? proto_meta_get(m, "children") : "?",
	       proto_meta_get(m, "streams") ? proto_meta_get(m, "streams") : "?",
	       human(proto_meta_get(m, "events_per_s"), a, sizeof(a)),
	       human(proto_meta_get(m, "bytes_per_s"), b, sizeof(b)),
	       human(proto_meta_get(m, "events_in"), c, sizeof(c)),
	       human(proto_meta_get(m, "bytes_in"), d, sizeof(d)));
	printf("%*s  buffered %s B, spilled %s B, drops %s events (%s batches), "
	       "unacked %s frames, reconnects %s%s\n", depth * 2, "",
	       human(proto_meta_get(m, "buffered_bytes"), e, sizeof(e)),
	       proto_meta_get(m, "spilled_bytes") ? proto_meta_get(m, "spilled_bytes") : "?",
	       proto_meta_get(m, "drops") ? proto_meta_get(m, "drops") : "?",
	       proto_meta_get(m, "dropped_batches") ? proto_meta_get(m, "dropped_batches") : "?",
	       proto_meta_get(m, "unacked_frames") ? proto_meta_get(m, "unacked_frames") : "?",
	       proto_meta_get(m, "reconnects") ? proto_meta_get(m, "reconnects") : "?",
	       proto_meta_get(m, "paused") && !strcmp(proto_meta_get(m, "paused"), "1") ?
	       ", PAUSED (backpressure)" : "");
	if (proto_meta_get(m, "stored_batches"))
		printf("%*s  stored %s batches, %s duplicates, %s lost\n",
		       depth * 2, "", proto_meta_get(m, "stored_batches"),
		       proto_meta_get(m, "dup_batches") ? proto_meta_get(m, "dup_batches") : "?",
		       proto_meta_get(m, "lost_batches") ? proto_meta_get(m, "lost_batches") : "?");
	for (int k = 0; k < t->count; k++)
		if (!t->n[k].shown && t->n[k].parent == t->n[i].id && k != i)
			show(t, k, depth + 1);
}

static const struct mgr_opts_doc status_doc = {
	.opt = {
		{"secret-file", 'S', 0, "F",
		 "the job's secret (when the collectors use one)"},
		{"timeout", 't', 0, "S",
		 "give up after S seconds (1 to 86400, default 5)"},
	},
	.col = 20,
	.head = "usage: tapestry status [--secret-file F] [--timeout S] [ADDR:PORT | DIR]\n"
		"  Shows the live collector tree below the collector at ADDR:PORT:\n"
		"  each collector with its children, streams, event and byte rates,\n"
		"  buffered and spilled bytes, drops. DIR, a running job's directory\n"
		"  (tapestry run or launch), gives its root receiver's address and\n"
		"  secret (DIR/logs/root-status); without an argument, the current\n"
		"  directory when it is one, else 127.0.0.1:7450.\n"
		"  Collectors below report every --stats-period (tapestry launch\n"
		"  starts them with 1 s), so a new one shows after that.\n",
	.tail = "  Exit status: 0, 1 (no answer), 2 (usage).\n",
};

void mgr_status_note(const char *dir, const char *addr, const char *secret)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/logs/root-status", dir);
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "addr %s\n", addr);
	if (secret)
		fprintf(f, "secret %s\n", secret);
	fclose(f);
}

/* DIR/logs/root-status into addr and secret (secret "" when none): 0, or
 * -1 when dir holds none. */
static int status_find(const char *dir, char *addr, size_t acap, char *secret,
		       size_t scap)
{
	char path[4096], line[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/logs/root-status", dir);
	if (!(f = fopen(path, "r")))
		return -1;
	*addr = *secret = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "addr ", 5))
			snprintf(addr, acap, "%.*s", (int)(acap - 1), line + 5);
		else if (!strncmp(line, "secret ", 7))
			snprintf(secret, scap, "%.*s", (int)(scap - 1), line + 7);
	}
	fclose(f);
	return *addr ? 0 : -1;
}

int mgr_read_secret(const char *path, char *buf, size_t cap, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return PROTO_E_IO;
	n = fread(buf, 1, cap, f);
	fclose(f);
	if (n >= cap)
		return PROTO_E_TOOBIG;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;	/* as tapestry-collector reads it */
	*len = n;
	return 0;
}

int mgr_cmd_status(int argc, char **argv)
{
	const char *addr = NULL, *secret_file = NULL;
	char secret[4096], why[512], found[256], found_secret[4096];
	size_t secretlen = 0;
	struct stat sb;
	int c, timeout_ms = 5000, rc;
	long v;
	struct tree t = {0};

	optind = 1;
	while ((c = mgr_opts_next(&status_doc, argc, argv)) > 0) {
		switch (c) {
		case 'S': secret_file = optarg; break;
		case 't':
			if (proto_parse_long(optarg, 1, 86400, &v)) {
				mgr_err("--timeout takes a number of seconds from 1 "
					"to 86400, not '%s'", optarg);
				return 2;
			}
			timeout_ms = (int)v * 1000;
			break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind < argc)
		addr = argv[optind++];
	if (optind < argc)
		return mgr_opts_usage(&status_doc);
	if (addr && stat(addr, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (status_find(addr, found, sizeof(found), found_secret,
				sizeof(found_secret))) {
			mgr_err("%s: no logs/root-status: not the directory of a job "
				"tapestry run or launch is running", addr);
			return 1;
		}
		addr = found;
		if (!secret_file && *found_secret)
			secret_file = found_secret;
	} else if (!addr) {
		addr = "127.0.0.1:7450";
		if (!status_find(".", found, sizeof(found), found_secret,
				 sizeof(found_secret))) {
			addr = found;
			if (!secret_file && *found_secret)
				secret_file = found_secret;
		}
	}
	if (secret_file &&
	    mgr_read_secret(secret_file, secret, sizeof(secret), &secretlen)) {
		mgr_err("cannot read the secret file %s", secret_file);
		return 2;
	}
	if (!strchr(addr, ':')) {
		mgr_err("'%s' is not ADDR:PORT", addr);
		return 2;
	}
	t.n = calloc(STATUS_MAX_NODES, sizeof(*t.n));
	if (!t.n)
		return 1;
	rc = mgr_status_query(addr, secret, secretlen, timeout_ms, collect, &t,
			      why, sizeof(why));
	if (rc) {
		mgr_err("status of %s: %s", addr, why);
		if (addr != found)
			mgr_err("a job's collectors: tapestry status JOBDIR (its "
				"root's address and secret), or ADDR:PORT with "
				"--secret-file F");
		free(t.n);
		return 1;
	}
	if (!t.count) {
		printf("%s answered but sent no STATS\n", addr);
		free(t.n);
		return 0;
	}
	show(&t, 0, 0);
	for (int k = 1; k < t.count; k++)	/* parents not heard from */
		if (!t.n[k].shown)
			show(&t, k, 1);
	free(t.n);
	return 0;
}
