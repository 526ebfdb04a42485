/*
 * manager/serve/serve.c - `tapestry serve`: options, listening socket,
 * security checks and the routing of every request.
 *
 * Security (docs/modules/manager-serve.md, docs/SECURITY.md): a token by
 * default (made at start unless --secret-file names one; the URL printed
 * carries it as ?token=), which every request presents as "Authorization:
 * Bearer TOKEN", the cookie a visit with ?token= sets, or ?token= itself;
 * --no-token only with a warning, and then no launch nor upload. On
 * loopback the Host header must name the loopback address (a page of
 * another site cannot reach this server through DNS rebinding). POST needs
 * the header "X-Tapestry: 1", which a cross-site form cannot send. Only
 * GET, HEAD and POST; headers over 8 KiB, bodies over 1 MiB and idle
 * connections (10 s) are refused by evhttp.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "manager/mgr.h"
#include "manager/opts.h"
#include "manager/safeio.h"
#include "manager/post/events.h"
#include "manager/serve/serve.h"
#include "proto/error.h"
#include "manager/launch/spawn.h"

#define SRV_HEADERS_MAX 8192
#define SRV_BODY_MAX (1 << 20)
#define SRV_TIMEOUT_S 10

struct srv_asset {
	const char *path, *type;
	const unsigned char *data;
	size_t len;
};
extern const struct srv_asset srv_assets[];	/* manager/serve/assets.c */


static struct srv *g_srv;	/* for the signal callbacks */

static void common_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Content-Security-Policy",
			  "default-src 'self'; img-src 'self' data:; "
			  "style-src 'self'; script-src 'self'; frame-ancestors 'none'");
}

void srv_reply(struct evhttp_request *req, int code, const char *type,
	       struct evbuffer *b)
{
	common_headers(req, type);
	evhttp_send_reply(req, code, NULL, b);
}

static const char *reason(int code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 421: return "Misdirected Request";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return NULL;
	}
}

void srv_error(struct evhttp_request *req, int code, const char *fmt, ...)
{
	struct evbuffer *b = evbuffer_new();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!b) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evbuffer_add_printf(b, "{\"error\":");
	srv_json_str(b, msg);
	evbuffer_add_printf(b, ",\"status\":%d}\n", code);
	common_headers(req, "application/json");
	evhttp_send_reply(req, code, reason(code), b);
	evbuffer_free(b);
}

int srv_name_ok(const char *s)
{
	size_t n = 0;

	if (!s || s[0] == '.' || !s[0])
		return 0;
	for (; s[n]; n++) {
		char c = s[n];

		if (n >= SRV_NAME_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int srv_query(struct evhttp_request *req, const char *key, char *out, size_t cap)
{
	const char *q = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	struct evkeyvalq kv;
	const char *v;
	int rc = -1;

	if (!q || evhttp_parse_query_str(q, &kv) != 0)
		return -1;
	if ((v = evhttp_find_header(&kv, key)) && strlen(v) < cap) {
		memcpy(out, v, strlen(v) + 1);
		rc = 0;
	}
	evhttp_clear_headers(&kv);
	return rc;
}

int srv_open_regular(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* ---- security ---------------------------------------------------------------- */

static int token_ok(const struct srv *s, const char *tok, size_t len)
{
	uint8_t diff = 0;

	if (len != s->secretlen)
		return 0;
	for (size_t i = 0; i < len; i++)
		diff |= (uint8_t)(tok[i] ^ s->secret[i]);
	return diff == 0;
}

static int cookie_token(const struct srv *s, const char *cookie)
{
	static const char name[] = "tapestry_token=";

	for (const char *p = cookie; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > sizeof(name) - 1 && !strncmp(p, name, sizeof(name) - 1) &&
		    token_ok(s, p + sizeof(name) - 1, len - (sizeof(name) - 1)))
			return 1;
		p += len;
	}
	return 0;
}

/* 1 when the query string of req holds token=TOKEN, the server's. */
static int query_token(const struct srv *s, struct evhttp_request *req)
{
	char tok[512];

	return s->secretlen && !srv_query(req, "token", tok, sizeof(tok)) &&
	       token_ok(s, tok, strlen(tok));
}

static void set_cookie(const struct srv *s, struct evhttp_request *req)
{
	char cookie[700];

	snprintf(cookie, sizeof(cookie), "tapestry_token=%.*s; HttpOnly; SameSite=Strict; "
		 "Path=/%s", (int)s->secretlen, s->secret, s->tls ? "; Secure" : "");
	evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie", cookie);
}

/* 0 when req may go on; else the reply is sent. Sets s->authed for this
 * request: 1 when it presented the token. */
static int check_access(struct srv *s, struct evhttp_request *req, const char *path)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *auth = evhttp_find_header(in, "Authorization");
	const char *host = evhttp_find_header(in, "Host");
	/* without a token, the Host must be this server's loopback name: a page
	 * of another site cannot reach it through DNS rebinding (with one, such
	 * a page holds neither the token nor the cookie) */
	int host_ok = !s->loopback || s->secretlen;

	s->authed = 0;
	for (int i = 0; i < 3 && !host_ok; i++)
		host_ok = host && !strcmp(host, s->host_ok[i]);
	if (!host_ok) {
		srv_error(req, 421, "Host '%s' is not this server's loopback address",
			  host ? host : "");
		return -1;
	}
	if (!s->secretlen)
		return 0;	/* --no-token: nobody is the owner */
	if ((auth && !strncmp(auth, "Bearer ", 7) &&
	     token_ok(s, auth + 7, strlen(auth + 7))) ||
	    cookie_token(s, evhttp_find_header(in, "Cookie")) || query_token(s, req)) {
		s->authed = 1;
		return 0;
	}
	if (!strcmp(path, "/login"))
		return 0;	/* says 401 itself */
	srv_error(req, 401, "this server wants its token: open the URL tapestry serve "
		  "printed (/?token=TOKEN) once, or send Authorization: Bearer TOKEN");
	return -1;
}

/* A page opened with ?token=TOKEN (the URL printed at start, Jupyter's
 * convention) or /login?token=TOKEN: the cookie, then 303 to the page
 * without the token in its address. 1 when answered. */
static int token_visit(struct srv *s, struct evhttp_request *req, const char *path)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	int login = !strcmp(path, "/login");

	if (!login && (!strncmp(path, "/api/", 5) || !query_token(s, req) ||
		       evhttp_request_get_command(req) == EVHTTP_REQ_POST))
		return 0;
	if (login && s->secretlen && !query_token(s, req)) {
		srv_error(req, 401, "wrong or missing token");
		return 1;
	}
	if (s->secretlen)
		set_cookie(s, req);
	common_headers(req, "text/plain");
	evhttp_add_header(out, "Location", login ? "/" : path);
	evhttp_send_reply(req, 303, "See Other", NULL);
	return 1;
}

/* ---- connections: TLS, and the whole-request deadline ------------------------- */

/* A connection, for the deadline: a request (headers and body) must be
 * whole within s->deadline_s of its first byte being awaited (evhttp only
 * times silence: a client trickling a byte a second held its connection
 * for ever). A reference to the bufferevent is held: once evhttp frees it
 * (its callbacks cleared) the sweep lets it go. */
struct srv_conn {
	struct srv_conn *next;
	struct bufferevent *bev;
	double start;		/* since when a request is awaited */
	int reading;		/* awaiting or reading a request (not answering) */
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct bufferevent *new_conn(struct event_base *base, void *arg)
{
	struct srv *s = arg;
	struct bufferevent *bev = NULL;

	if (s->ssl) {
		SSL *ssl = SSL_new(s->ssl);

		if (ssl && !(bev = bufferevent_openssl_socket_new(base, -1, ssl,
								  BUFFEREVENT_SSL_ACCEPTING,
								  BEV_OPT_CLOSE_ON_FREE)))
			SSL_free(ssl);
	} else {
		bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	}
	struct srv_conn *c = bev ? calloc(1, sizeof(*c)) : NULL;

	if (c) {
		bufferevent_incref(bev);
		c->bev = bev;
		c->start = mono_s();
		c->reading = 1;
		c->next = s->conns;
		s->conns = c;
	}
	return bev;
}

static struct srv_conn *conn_of(struct srv *s, struct evhttp_request *req)
{
	struct evhttp_connection *ec = evhttp_request_get_connection(req);
	struct bufferevent *bev = ec ? evhttp_connection_get_bufferevent(ec) : NULL;

	for (struct srv_conn *c = s->conns; c && bev; c = c->next)
		if (c->bev == bev)
			return c;
	return NULL;
}

/* The answer is sent: the next request is awaited from now. */
static void req_done(struct evhttp_request *req, void *arg)
{
	struct srv_conn *c = conn_of(arg, req);

	if (c) {
		c->reading = 1;
		c->start = mono_s();
	}
}

/* A request is whole: its answer is not timed. */
static void req_whole(struct srv *s, struct evhttp_request *req)
{
	struct srv_conn *c = conn_of(s, req);

	if (c) {
		c->reading = 0;
		evhttp_request_set_on_complete_cb(req, req_done, s);
	}
}

/* Every 250 ms: connections evhttp let go are released; one whose request
 * is not whole after the deadline is shut down (evhttp then closes it). */
static void sweep(evutil_socket_t fd, short what, void *arg)
{
	struct srv *s = arg;
	double now = mono_s();

	for (struct srv_conn **pp = &s->conns; *pp;) {
		struct srv_conn *c = *pp;
		bufferevent_event_cb ev = NULL;

		bufferevent_getcb(c->bev, NULL, NULL, &ev, NULL);
		if (!ev) {	/* freed by evhttp: ours was the last reference */
			*pp = c->next;
			bufferevent_decref(c->bev);
			free(c);
			continue;
		}
		if (c->reading && now - c->start > s->deadline_s) {
			evutil_socket_t sfd = bufferevent_getfd(c->bev);

			if (sfd >= 0)
				shutdown(sfd, SHUT_RDWR);
			c->reading = 0;
		}
		pp = &c->next;
	}
}

static void conns_free(struct srv *s)
{
	while (s->conns) {
		struct srv_conn *c = s->conns;

		s->conns = c->next;
		bufferevent_decref(c->bev);
		free(c);
	}
}

/* The TLS context of --tls-cert and --tls-key: 0, or -1 after a message. */
static int tls_setup(struct srv *s, const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		unsigned long e = ERR_get_error();

		mgr_err("TLS: cannot use the certificate %s and key %s: %s", cert, key,
			e ? ERR_reason_error_string(e) : "out of memory");
		SSL_CTX_free(ctx);
		return -1;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	s->ssl = ctx;
	s->tls = 1;
	return 0;
}

/* ---- routing ----------------------------------------------------------------- */

static void asset(struct evhttp_request *req, const char *path)
{
	if (!strcmp(path, "/"))
		path = "/index.html";
	for (const struct srv_asset *a = srv_assets; a->path; a++) {
		if (strcmp(a->path, path))
			continue;
		struct evbuffer *b = evbuffer_new();

		evbuffer_add_reference(b, a->data, a->len, NULL, NULL);
		srv_reply(req, 200, a->type, b);
		evbuffer_free(b);
		return;
	}
	srv_error(req, 404, "no page %s", path);
}

static void tree(struct srv *s, struct evhttp_request *req)
{
	struct evbuffer *b = evbuffer_new();

	srv_tree_json(s->tree, b);
	srv_reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* "/api/jobs/NAME/rest": NAME into name (checked), rest points after it. */
static int split(const char *p, char *name, const char **rest)
{
	const char *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);

	if (n > SRV_NAME_MAX)
		return -1;
	memcpy(name, p, n);
	name[n] = '\0';
	*rest = p + n;
	return srv_name_ok(name) ? 0 : -1;
}

static void route(struct srv *s, struct evhttp_request *req, const char *path)
{
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	int post = m == EVHTTP_REQ_POST;
	char name[SRV_NAME_MAX + 1];
	const char *rest;

	if (post) {
		const char *x = evhttp_find_header(evhttp_request_get_input_headers(req),
						   "X-Tapestry");
		if (!x || strcmp(x, "1")) {
			srv_error(req, 403, "a POST needs the header X-Tapestry: 1");
			return;
		}
	}
	if (!strncmp(path, "/api/", 5)) {
		const char *p = path + 5;

		if (!strcmp(p, "jobs") && !post)
			srv_jobs_list(s, req);
		else if (!strncmp(p, "jobs/", 5))
			split(p + 5, name, &rest) ? srv_error(req, 400, "bad job name")
						  : srv_job(s, req, name, rest);
		else if (!strcmp(p, "tree") && !post)
			tree(s, req);
		else if (!strcmp(p, "descriptions"))
			srv_desc(s, req, NULL, "");
		else if (!strncmp(p, "descriptions/", 13))
			split(p + 13, name, &rest) ? srv_error(req, 400, "bad description name")
						   : srv_desc(s, req, name, rest);
		else if (!strncmp(p, "launches/", 9) && !post)
			srv_launch_get(s, req, p + 9);
		else
			srv_error(req, post ? 405 : 404, "no API %s%s", path,
				  post ? " for POST" : "");
		return;
	}
	if (post)
		srv_error(req, 405, "POST only goes to /api/");
	else
		asset(req, path);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct srv *s = arg;
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;

	req_whole(s, req);
	/* the raw path: every name we accept is plain, so no decoding at all, and
	 * '%', "..", "//" and the like never reach the file system */
	if (!path || path[0] != '/' || strstr(path, "..") || strchr(path, '%') ||
	    strstr(path, "//") || strlen(path) > 1024) {
		srv_error(req, 400, "bad path");
		return;
	}
	if (check_access(s, req, path) || token_visit(s, req, path))
		return;
	route(s, req, path);
}

/* ---- the command ------------------------------------------------------------- */

static const struct mgr_opts_doc serve_doc = {
	.opt = {
		{"listen", 'l', 0, "ADDR:PORT",
		 "where to listen (default 127.0.0.1:7480; port 0:\n"
		 "any, printed). A non-loopback address needs\n"
		 "TLS (--tls-cert/--tls-key or --tls-dir)"},
		{"jobs", 'j', 0, "DIR", "job directories (default: .)"},
		{"descriptions", 'd', 0, "DIR", "job descriptions, *.xml (default: .)"},
		{"secret-file", 'S', 0, "F",
		 "the token every request must present (default:\n"
		 "one made at start, printed in the URL)"},
		{"no-token", 'N', 0, NULL,
		 "no token: any local user reads every job\n"
		 "(loopback only; no launch, no upload)"},
		{"collector", 'c', 0, "A:P",
		 "a collector tree to show (root or any collector);\n"
		 "launches from the page add theirs"},
		{"collector-secret-file", 'C', 0, "F", "the collectors' job secret"},
		{"allow-upload", 'u', 0, NULL, "accept new descriptions from the page"},
		{"tls-cert", 'T', 0, "F", "serve HTTPS with this certificate (PEM chain)"},
		{"tls-key", 'K', 0, "F", "...and its private key"},
		{"tls-dir", 'D', 0, "DIR",
		 "HTTPS with tapestry ca's credentials:\n"
		 "DIR/manager.crt and DIR/manager.key"},
		{"request-deadline", 'R', 0, "S",
		 "a request not whole after S seconds: closed\n"
		 "(default 20)"},
	},
	.col = 23,
	.head = "usage: tapestry serve [--listen ADDR:PORT] [--jobs DIR] [--descriptions DIR]\n"
		"                      [--secret-file F | --no-token] [--collector ADDR:PORT]\n"
		"                      [--collector-secret-file F] [--allow-upload]\n"
		"                      [--tls-cert F --tls-key F | --tls-dir DIR]\n"
		"                      [--request-deadline S]\n"
		"  The web page of tapestry: the job directories under --jobs with\n"
		"  their report, timeline and exports; the live collector tree; the\n"
		"  job descriptions of --descriptions, their plan, and a launch.\n",
};

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	if (sig == SIGCHLD) {
		srv_child_reap(g_srv);
		return;
	}
	fprintf(stderr, "tapestry: serve: %s, stopping\n", strsignal((int)sig));
	event_base_loopexit(g_srv->base, NULL);
}

static int is_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* ADDR:PORT or [ADDR]:PORT into addr and port. 0 or -1. */
static int parse_listen(const char *s, char *addr, size_t cap, int *port)
{
	const char *colon = strrchr(s, ':');
	long p;
	char *end;

	if (!colon || (size_t)(colon - s) >= cap)
		return -1;
	memcpy(addr, s, (size_t)(colon - s));
	addr[colon - s] = '\0';
	if (addr[0] == '[') {
		size_t n = strlen(addr);

		if (n < 3 || addr[n - 1] != ']')
			return -1;
		memmove(addr, addr + 1, n - 2);
		addr[n - 2] = '\0';
	}
	if (!strcmp(addr, "localhost"))
		snprintf(addr, cap, "127.0.0.1");
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || p < 0 || p > 65535)
		return -1;
	*port = (int)p;
	return 0;
}

struct opts {
	const char *listen, *jobs, *descs, *secret_file, *col_secret;
	const char *tls_cert, *tls_key, *tls_dir;
	int no_token;
	double deadline;
	const char *collectors[SRV_ROOTS_MAX];
	int ncollectors;
};

static int parse_opts(int argc, char **argv, struct opts *o, struct srv *s)
{
	int c;

	optind = 1;
	while ((c = mgr_opts_next(&serve_doc, argc, argv)) > 0) {
		switch (c) {
		case 'l': o->listen = optarg; break;
		case 'j': o->jobs = optarg; break;
		case 'd': o->descs = optarg; break;
		case 'S': o->secret_file = optarg; break;
		case 'N': o->no_token = 1; break;
		case 'T': o->tls_cert = optarg; break;
		case 'K': o->tls_key = optarg; break;
		case 'D': o->tls_dir = optarg; break;
		case 'R': {
			char *end;

			o->deadline = strtod(optarg, &end);
			if (*end || !(o->deadline > 0 && o->deadline <= 3600)) {
				mgr_err("--request-deadline takes seconds (0 to 3600), not '%s'",
					optarg);
				return 2;
			}
			break;
		}
		case 'C': o->col_secret = optarg; break;
		case 'u': s->allow_upload = 1; break;
		case 'c':
			if (o->ncollectors == SRV_ROOTS_MAX) {
				mgr_err("at most %d --collector", SRV_ROOTS_MAX);
				return 2;
			}
			o->collectors[o->ncollectors++] = optarg;
			break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (optind != argc) {
		mgr_err("serve takes no argument '%s'", argv[optind]);
		return mgr_opts_usage(&serve_doc);
	}
	return -1;
}

/* Options checked and s filled: -1 to go on, else the exit status. */
static int setup(int argc, char **argv, struct srv *s, struct opts *o,
		 char *addr, size_t cap, int *port)
{
	int rc = parse_opts(argc, argv, o, s);

	if (rc >= 0)
		return rc;
	if (parse_listen(o->listen, addr, cap, port)) {
		mgr_err("--listen takes ADDR:PORT, not '%s'", o->listen);
		return 2;
	}
	s->loopback = is_loopback(addr);
	if (o->secret_file) {
		if (mgr_read_secret(o->secret_file, s->secret, sizeof(s->secret),
				    &s->secretlen) || !s->secretlen) {
			mgr_err("cannot read a token from the secret file %s "
				"(1 to %zu bytes)", o->secret_file, sizeof(s->secret) - 1);
			return 2;
		}
		for (size_t i = 0; i < s->secretlen; i++)
			if ((unsigned char)s->secret[i] <= ' ' || s->secret[i] == ';' ||
			    (unsigned char)s->secret[i] >= 0x7f) {
				mgr_err("the token in %s must be printable ASCII without "
					"spaces or ';'", o->secret_file);
				return 2;
			}
	}
	if (o->secret_file && o->no_token) {
		mgr_err("--secret-file names a token, --no-token wants none: not both");
		return 2;
	}
	static char cert[4200], key[4200];

	if (o->tls_dir && (o->tls_cert || o->tls_key)) {
		mgr_err("--tls-dir or --tls-cert with --tls-key, not both");
		return 2;
	}
	if (!o->tls_cert != !o->tls_key) {
		mgr_err("--tls-cert and --tls-key go together");
		return 2;
	}
	if (o->tls_dir) {
		snprintf(cert, sizeof(cert), "%s/manager.crt", o->tls_dir);
		snprintf(key, sizeof(key), "%s/manager.key", o->tls_dir);
		o->tls_cert = cert;
		o->tls_key = key;
	}
	if (o->tls_cert && tls_setup(s, o->tls_cert, o->tls_key))
		return 2;
	if (!s->loopback && !s->tls) {
		mgr_err("--listen %s is not a loopback address: it needs TLS (--tls-cert and "
			"--tls-key, or --tls-dir), or the token would cross the network in "
			"clear", o->listen);
		return 2;
	}
	if (!s->loopback && o->no_token) {
		mgr_err("--listen %s is not a loopback address: --no-token is refused "
			"there", o->listen);
		return 2;
	}
	if (!o->secret_file && !o->no_token) {
		/* Jupyter's convention: a token made at start, printed in the URL */
		uint8_t r[24];

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			mgr_err("cannot make a token: %s", strerror(errno));
			return 1;
		}
		for (size_t i = 0; i < sizeof(r); i++)
			snprintf(s->secret + 2 * i, 3, "%02x", r[i]);
		s->secretlen = 2 * sizeof(r);
	}
	if (o->no_token)
		fprintf(stderr, "tapestry: serve: WARNING: --no-token: EVERY LOCAL USER can "
			"read every job under %s through this server, paths and reports "
			"included, whatever the directories' modes; launches and uploads "
			"are off\n", o->jobs);
	if (!realpath(o->jobs, s->jobs)) {
		mgr_err("--jobs %s: %s", o->jobs, strerror(errno));
		return 2;
	}
	if (!realpath(o->descs, s->descs)) {
		mgr_err("--descriptions %s: %s", o->descs, strerror(errno));
		return 2;
	}
	return -1;
}

static int listen_on(struct srv *s, struct evhttp *http, const char *addr, int port)
{
	struct evhttp_bound_socket *h = evhttp_bind_socket_with_handle(http, addr,
								       (uint16_t)port);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (!h) {
		mgr_err("cannot listen on %s:%d: %s", addr, port, strerror(errno));
		return -1;
	}
	if (getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&ss, &sl) == 0)
		port = ntohs(ss.ss_family == AF_INET6 ?
			     ((struct sockaddr_in6 *)&ss)->sin6_port :
			     ((struct sockaddr_in *)&ss)->sin_port);
	int v6 = strchr(addr, ':') != NULL;

	snprintf(s->host_ok[0], sizeof(s->host_ok[0]), v6 ? "[%s]:%d" : "%s:%d",
		 addr, port);
	snprintf(s->host_ok[1], sizeof(s->host_ok[1]), "localhost:%d", port);
	snprintf(s->host_ok[2], sizeof(s->host_ok[2]), v6 ? "[::1]:%d" : "127.0.0.1:%d",
		 port);
	printf("tapestry: serving %s://%s/%s%.*s (jobs %s, descriptions %s)\n",
	       s->tls ? "https" : "http", s->host_ok[0], s->secretlen ? "?token=" : "",
	       (int)s->secretlen, s->secret, s->jobs, s->descs);
	fflush(stdout);
	return 0;
}

/* The report of me (flags of mgr_report_events; hook and arg: who else
 * sees its pass over the events) into file report (written as report.tmp,
 * renamed): 0, or -1 after a message. */
static int build_report(const char *dir, struct mgr_events *me, int flags,
			const char *report, mgr_report_hook hook, void *arg)
{
	char tmpname[4400];
	const char *base;
	FILE *f = NULL;
	int bad, fd = -1, pfd = mgr_parent_dir(report, 1, &base);

	/* REPORT.tmp made anew (O_EXCL) in REPORT's directory, reached without
	 * following a link; renamed within it */
	snprintf(tmpname, sizeof(tmpname), "%s.tmp", base);
	if (pfd < 0 || (fd = mgr_create_excl(pfd, tmpname, O_WRONLY, 0600)) < 0 ||
	    !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "tapestry: cannot write %s.tmp: %s\n", report,
			pfd < 0 && (errno == ELOOP || errno == ENOTDIR) ?
			"a symbolic link on its way: refused" : errno == ELOOP ?
			"it is a symbolic link: refused" : strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(pfd, tmpname, 0);
		}
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	bad = mgr_report_events(dir, me, MGR_REPORT_XML | flags, f, hook, arg);
	bad |= fclose(f) != 0;
	if (bad || renameat(pfd, tmpname, pfd, base) < 0) {
		mgr_err("the report of %s failed", dir);	/* after its reason */
		unlinkat(pfd, tmpname, 0);
		close(pfd);
		return -1;
	}
	close(pfd);
	return 0;
}

/* 0 when the job directory dir is reached without a link and its index,
 * meta.xml and segments/ are not links; else a message, -1. */
static int job_no_links(const char *dir)
{
	static const char *const names[] = {"index", "meta.xml", "segments"};
	int fd = mgr_dir_nofollow(dir);

	if (fd < 0) {
		fprintf(stderr, "tapestry: %s: %s\n", dir, errno == ELOOP || errno == ENOTDIR ?
			"a symbolic link on its way: refused" : strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (mgr_is_link(fd, names[i])) {
			fprintf(stderr, "tapestry: %s/%s is a symbolic link: refused\n", dir,
				names[i]);
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

/* The child that makes a job's cache (jobs.c): `serve --build-index DIR
 * INDEX|- [REPORT]`. A quick report first (SRV_QUICK beside REPORT: one
 * read, no post-processing: the page's counts within seconds), then one
 * post-processing for both the report and the index, made in the same pass
 * over the events (the post-processing's corrections are applied in one
 * iteration only). 0, or 1 after a message. */
static int build_cache(const char *dir, const char *index, const char *report)
{
	char quick[4400], why[4500];
	const char *slash = report ? strrchr(report, '/') : NULL;
	struct srv_tl_builder *tb = NULL;
	int rc, bad = 0, want_index = strcmp(index, "-") != 0;

	if (job_no_links(dir))
		return 1;
	if (slash) {
		snprintf(quick, sizeof(quick), "%.*s/" SRV_QUICK, (int)(slash - report), report);
		bad = build_report(dir, NULL, MGR_REPORT_QUICK, quick, NULL, NULL);
	}
	struct mgr_events *me = mgr_events_open(dir, &rc);

	if (want_index && !me) {
		fprintf(stderr, "tapestry: indexing %s: %s\n", dir, proto_strerror(rc));
		bad = 1;
	} else if (want_index && report && !(tb = srv_tl_begin(index, why, sizeof(why)))) {
		fprintf(stderr, "tapestry: indexing %s: %s\n", dir, why);
		bad = 1;
	}
	/* without me, the report says what failed and gives what it can */
	if (report)
		bad |= build_report(dir, me, 0, report, tb ? srv_tl_add : NULL, tb);
	if (tb)
		bad |= srv_tl_finish(tb, me, dir, index) != 0;
	else if (want_index && me && !report)
		bad |= srv_tl_build_events(me, dir, index) != 0;
	mgr_events_close(me);
	return bad ? 1 : 0;
}

int mgr_cmd_serve(int argc, char **argv)
{
	struct srv *s = calloc(1, sizeof(*s));
	struct opts o = {.listen = "127.0.0.1:7480", .jobs = ".", .descs = ".", .deadline = 20};
	struct evhttp *http = NULL;
	struct event *sig[3] = {NULL, NULL, NULL};
	char addr[256], why[512];
	int port = 0, status = 1;

	if (argc == 4 && !strcmp(argv[1], "--build-quick")) {
		/* internal: the quick report alone (the job list's columns) */
		if (job_no_links(argv[2]))
			return 1;
		return build_report(argv[2], NULL, MGR_REPORT_QUICK, argv[3], NULL, NULL) ? 1 : 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--build-index")) {
		/* internal: the child that makes a job's cache */
		if (argc != 4 && argc != 5)
			return 2;
		return build_cache(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	}
	if (!s)
		return 1;
	if ((status = setup(argc, argv, s, &o, addr, sizeof(addr), &port)) >= 0) {
		free(s);
		return status;
	}
	status = 1;
	s->self = "/proc/self/exe";
	s->deadline_s = o.deadline;
	g_srv = s;
	signal(SIGPIPE, SIG_IGN);
	if (!(s->base = event_base_new()) || !(http = evhttp_new(s->base)))
		goto out;
	if (!(s->tree = srv_tree_new(o.col_secret, why, sizeof(why)))) {
		mgr_err("%s", why);
		goto out;
	}
	for (int i = 0; i < o.ncollectors; i++)
		srv_tree_add(s->tree, o.collectors[i], "--collector", NULL);
	evhttp_set_max_headers_size(http, SRV_HEADERS_MAX);
	evhttp_set_max_body_size(http, SRV_BODY_MAX);
	evhttp_set_timeout(http, SRV_TIMEOUT_S);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST);
	evhttp_set_gencb(http, on_request, s);
	evhttp_set_bevcb(http, new_conn, s);
	struct timeval quarter = {0, 250000};

	if (!(s->sweep = event_new(s->base, -1, EV_PERSIST, sweep, s)) ||
	    event_add(s->sweep, &quarter))
		goto out;
	if (listen_on(s, http, addr, port))
		goto out;
	sig[0] = evsignal_new(s->base, SIGINT, on_signal, NULL);
	sig[1] = evsignal_new(s->base, SIGTERM, on_signal, NULL);
	sig[2] = evsignal_new(s->base, SIGCHLD, on_signal, NULL);
	for (int i = 0; i < 3; i++)
		if (!sig[i] || event_add(sig[i], NULL))
			goto out;
	event_base_dispatch(s->base);
	status = 0;
out:
	srv_child_stop_all(s);
	for (int i = 0; i < 3; i++)
		if (sig[i])
			event_free(sig[i]);
	if (http)
		evhttp_free(http);
	if (s->sweep)
		event_free(s->sweep);
	conns_free(s);
	if (s->ssl)
		SSL_CTX_free(s->ssl);
	srv_tree_free(s->tree);
	if (s->base)
		event_base_free(s->base);
	free(s);
	return status;
}
