/*
 * collector/collector.c - the collector's life: configuration, listener,
 * timers (stats, clock), drain, frames in memory, status reports.
 *
 * The other files own one concern each: conn.c the server side, up.c the
 * upward link, root.c the job directory, spill.c the disk queue.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "collector/internal.h"
#include "proto/auth.h"
#include "proto/clockid.h"
#include "proto/codec.h"
#include "proto/jobdir.h"

#define ACCEPT_RETRY_MS 100
#define NODES_MAX 65536
#define LISTEN_BACKLOG 4096

/* CLOCK_MONOTONIC in ns, times (1 + TAPESTRY_CLOCK_DRIFT_PPM / 1e6), so
 * tests can give a collector a drifting clock (an offset comes from a time
 * namespace); the sensor drifts the same way (sensor/rt_clock.c). */
static double drift_ppm(void)
{
	static int init;
	static double ppm;

	if (!init) {
		/* main() refused a bad one */
		(void)proto_drift_ppm(getenv("TAPESTRY_CLOCK_DRIFT_PPM"), &ppm);
		init = 1;
	}
	return ppm;
}

uint64_t col_now_ns(void)
{
	double ppm = drift_ppm();
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (ppm != 0.0)
		now += (uint64_t)(int64_t)((double)now * ppm * 1e-6);
	return now;
}

void col_config_default(struct col_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->listen = "127.0.0.1:7450";
	cfg->flush_bytes = 1u << 20;
	cfg->flush_records = 65536;
	cfg->flush_ms = 50;
	cfg->zstd_level = 0;
	cfg->spill_quota = 1ull << 30;
	cfg->mem_cap = 256ull << 20;
	cfg->clock_period_ms = 5000;
	cfg->clock_rounds = 16;
	cfg->stats_period_ms = 5000;
	cfg->handshake_ms = 10000;
	cfg->idle_ms = 60000;
	cfg->keepalive_ms = 5000;
	cfg->seq_window = 1u << 16;
	cfg->frame_max = PROTO_FRAME_MAX;
}

/* ---- frames ------------------------------------------------------------ */

struct col_frame *col_frame_new(struct col *c, const void *bytes, size_t len,
				const struct proto_msg *m)
{
	struct col_frame *f = malloc(sizeof(*f) + len);

	if (!f) {
		col_err("out of memory (%zu bytes)", len);
		abort();
	}
	memset(f, 0, sizeof(*f));
	f->col = c;
	f->refs = 1;
	f->len = len;
	if (bytes)
		memcpy(f->data, bytes, len);
	c->mem_used += len;
	if (m) {
		f->type = m->type;
		if (m->type == PROTO_MSG_BATCH) {
			f->stream = m->u.batch.stream;
			f->seq = m->u.batch.seq;
			f->nrecords = m->u.batch.nrecords;
		} else if (m->type == PROTO_MSG_BYE) {
			f->stream = m->u.bye.stream;
			f->seq = m->u.bye.last_seq;
		}
	}
	return f;
}

struct col_frame *col_frame_msg(struct col *c, const struct proto_msg *m,
				int *rc)
{
	struct col_frame *f;
	size_t len;

	*rc = proto_msg_frame(m, NULL, 0, &len);
	if (*rc != PROTO_E_FULL)
		return NULL;
	f = col_frame_new(c, NULL, len, m);
	*rc = proto_msg_frame(m, f->data, len, &len);
	if (*rc) {
		col_frame_unref(f);
		return NULL;
	}
	return f;
}

void col_frame_ref(struct col_frame *f)
{
	f->refs++;
}

void col_frame_unref(struct col_frame *f)
{
	struct col *c;

	if (!f || --f->refs)
		return;
	c = f->col;
	c->mem_used -= f->len;
	free(f);
	if (c->paused && c->mem_used < c->cfg.mem_cap / 2)
		col_up_pressure(c);
	col_conn_mem_freed(c);
}

/* ---- stats ------------------------------------------------------------- */

void col_get_stats(const struct col *c, struct col_stats *st)
{
	*st = c->st;
	st->node_id = c->node_id;
	st->streams = c->streams.n;
	st->buffered_bytes = c->mem_used;
	st->spilled_bytes = col_spill_bytes(c->spill);
	st->unacked_frames = c->ua_count;
	st->parent_up = c->up_state == UP_STREAM;
	st->paused = c->paused;
}

unsigned col_port(const struct col *c)
{
	return c->port;
}

unsigned col_tls_port(const struct col *c)
{
	return c->tls_port;
}

uint64_t col_node_id(const struct col *c)
{
	return c->node_id;
}

static void kv(struct proto_meta *mt, const char *k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void kv(struct proto_meta *mt, const char *k, const char *fmt, ...)
{
	va_list ap;

	if (mt->n >= PROTO_META_MAX)
		return;
	snprintf(mt->kv[mt->n].key, sizeof(mt->kv[0].key), "%s", k);
	va_start(ap, fmt);
	vsnprintf(mt->kv[mt->n].value, sizeof(mt->kv[0].value), fmt, ap);
	va_end(ap);
	mt->n++;
}

/* The streams of the sensors connected here, "ID,HOST,RANK,PID,EVENTS;..."
 * (events in their batches so far), as many as fit in one value, then
 * "+N" for the others. */
static void stream_list(struct col *c, struct proto_meta *mt)
{
	char *v;
	size_t i = 0, used = 0, more = 0;
	uint64_t key;
	void *val;

	if (mt->n >= PROTO_META_MAX)
		return;
	v = mt->kv[mt->n].value;
	v[0] = '\0';
	while (col_map_next(&c->streams, &i, &key, &val)) {
		const struct col_stream *s = val;
		char one[160];

		if (!s->owner || s->owner->role != PROTO_ROLE_SENSOR)
			continue;
		int n = snprintf(one, sizeof(one), "%s%016" PRIx64 ",%s,%d,%u,%" PRIu64,
				 used ? ";" : "", s->id, s->owner->host, s->owner->rank,
				 s->owner->pid, s->events);

		if (more || used + (size_t)n + 16 > PROTO_VALUE_MAX) {
			more++;
			continue;
		}
		memcpy(v + used, one, (size_t)n + 1);
		used += (size_t)n;
	}
	if (more)
		snprintf(v + used, PROTO_VALUE_MAX + 1 - used, "%s+%zu", used ? ";" : "", more);
	snprintf(mt->kv[mt->n].key, sizeof(mt->kv[0].key), "stream_list");
	mt->n++;
}

void col_stats_msg(struct col *c, struct proto_msg *m)
{
	struct col_stats st;
	struct proto_meta *mt = &m->u.meta;

	col_get_stats(c, &st);
	m->type = PROTO_MSG_STATS;
	mt->id = c->node_id;
	mt->n = 0;
	kv(mt, "node", "%016" PRIx64, c->node_id);
	kv(mt, "name", "%s", c->name);
	kv(mt, "host", "%s", c->host);
	/* which clock it stamps with (the sensor's META has the same keys) */
	kv(mt, "boot_id", "%s", c->clockid.boot_id);
	kv(mt, "timens", "%s", c->clockid.timens);
	kv(mt, "timens_offsets", "%s", c->clockid.offsets);
	kv(mt, "clock_drift_ppm", "%g", drift_ppm());
	kv(mt, "role", "%s", c->root ? "root" : "collector");
	if (!c->root)
		kv(mt, "parent", "%016" PRIx64, c->parent_id);
	kv(mt, "time_ns", "%" PRIu64, col_now_ns());
	if (!c->root && c->clock_rtt_ns) {
		kv(mt, "clock_offset_ns", "%" PRId64, c->clock_offset_ns);
		kv(mt, "clock_rtt_ns", "%" PRIu64, c->clock_rtt_ns);
	}
	kv(mt, "children", "%" PRIu64, st.children);
	kv(mt, "streams", "%" PRIu64, st.streams);
	stream_list(c, mt);
	kv(mt, "events_per_s", "%.0f", c->ev_rate);
	kv(mt, "bytes_per_s", "%.0f", c->byte_rate);
	kv(mt, "events_in", "%" PRIu64, st.events_in);
	kv(mt, "bytes_in", "%" PRIu64, st.bytes_in);
	kv(mt, "buffered_bytes", "%" PRIu64, st.buffered_bytes);
	kv(mt, "spilled_bytes", "%" PRIu64, st.spilled_bytes);
	kv(mt, "drops", "%" PRIu64, st.dropped_events);
	kv(mt, "filtered", "%" PRIu64, st.filtered_events);
	kv(mt, "dropped_batches", "%" PRIu64, st.dropped_batches);
	kv(mt, "reconnects", "%" PRIu64, st.reconnects);
	kv(mt, "unacked_frames", "%" PRIu64, st.unacked_frames);
	kv(mt, "paused", "%d", st.paused);
	kv(mt, "rejected", "%" PRIu64, st.rejected);
	if (st.rejected)
		kv(mt, "rejected_why", "secret %" PRIu64 ", key %" PRIu64
		   ", version %" PRIu64 ", other %" PRIu64, st.rejected_secret,
		   st.rejected_key, st.rejected_version, st.rejected -
		   st.rejected_secret - st.rejected_key - st.rejected_version);
	kv(mt, "abandoned", "%" PRIu64, st.abandoned);
	kv(mt, "refused", "%" PRIu64, st.refused);
	if (c->refused_by[0])
		kv(mt, "refused_by", "%s", c->refused_by);
	if (c->root) {
		kv(mt, "stored_batches", "%" PRIu64, st.stored_batches);
		kv(mt, "dup_batches", "%" PRIu64, st.dup_batches);
		kv(mt, "lost_batches", "%" PRIu64, st.gap_batches);
	}
}

void col_remember_stats(struct col *c, struct col_frame *f, uint64_t node)
{
	struct col_frame *old = col_map_get(&c->nodes, node);

	if (!old && c->nodes.n >= NODES_MAX)
		return;
	col_frame_ref(f);
	if (col_map_put(&c->nodes, node, f)) {
		col_frame_unref(f);
		return;
	}
	col_frame_unref(old);
}

static void stats_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;
	struct col_frame *f;
	uint64_t now = col_now_ns();
	double dt = (double)(now - c->rate_t) / 1e9;
	int rc;

	if (dt > 0) {
		c->ev_rate = (double)(c->st.events_in - c->rate_events) / dt;
		c->byte_rate = (double)(c->st.bytes_in - c->rate_bytes) / dt;
	}
	c->rate_t = now;
	c->rate_events = c->st.events_in;
	c->rate_bytes = c->st.bytes_in;
	col_stats_msg(c, c->msg);
	f = col_frame_msg(c, c->msg, &rc);
	if (!f) {
		col_err("STATS: %s", proto_strerror(rc));
		return;
	}
	col_remember_stats(c, f, c->node_id);
	col_debug("stats: %.0f events/s, %" PRIu64 " buffered, %" PRIu64
		  " spilled", c->ev_rate, c->mem_used,
		  col_spill_bytes(c->spill));
	if (c->root) {
		rc = c->nospace ? 0 :	/* its room: root.c */
		     proto_jobdir_append(c->jobdir, f->data, f->len);
		if (rc)
			col_err("STATS append: %s", proto_strerror(rc));
		if (c->meta_dirty && proto_jobdir_sync(c->jobdir) == 0)
			c->meta_dirty = 0;
		col_frame_unref(f);
	} else {
		col_up_enqueue(c, f);
	}
}

static void clock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;

	col_up_clock_round(c, 1, 4);
}

/* ---- listener ---------------------------------------------------------- */

/* A connection accepted on either listener; tls: the TLS one. */
static void accepted(struct col *c, evutil_socket_t fd, struct sockaddr *sa,
		     int tls)
{
	struct bufferevent *bev;
	struct col_conn *cn;
	char host[INET6_ADDRSTRLEN] = "?", peer[64];
	unsigned port = 0;

	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(peer, sizeof(peer), "%s:%u", host, port);
	bev = tls ? col_tls_accept(c, fd) :
	      bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		col_err("no memory for connection from %s", peer);
		evutil_closesocket(fd);
		return;
	}
	cn = col_conn_attach(c, bev, peer);
	if (cn)
		cn->tls = tls;
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	accepted(arg, fd, sa, 0);
}

static void accept_tls_cb(struct evconnlistener *l, evutil_socket_t fd,
			  struct sockaddr *sa, int salen, void *arg)
{
	accepted(arg, fd, sa, 1);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;

	if (c->listener && !c->draining)
		evconnlistener_enable(c->listener);
	if (c->tls_listener && !c->draining)
		evconnlistener_enable(c->tls_listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct col *c = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval tv = {0, ACCEPT_RETRY_MS * 1000};

	/* Out of descriptors: the pending connection stays in the backlog;
	 * pause accepting instead of spinning on it. */
	col_warn("accept: %s", evutil_socket_error_to_string(err));
	evconnlistener_disable(l);
	evtimer_add(c->accept_retry, &tv);
}

int col_parse_addr(const char *text, struct sockaddr_storage *ss, int *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = text ? strrchr(text, ':') : NULL;
	char *end;
	unsigned long port;
	size_t hl;

	if (!colon || colon == text)
		return PROTO_E_ARG;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || port > 65535)
		return PROTO_E_ARG;
	hl = (size_t)(colon - text);
	if (text[0] == '[' && hl >= 2 && text[hl - 1] == ']') {
		text++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return PROTO_E_ARG;
	memcpy(host, text, hl);
	host[hl] = 0;
	memset(ss, 0, sizeof(*ss));
	if (evutil_inet_pton(AF_INET, host,
			     &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return 0;
	}
	if (evutil_inet_pton(AF_INET6, host,
			     &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return PROTO_E_ARG;
}

/* 1 when ss is a loopback address (127/8 or ::1). */
static int is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr)
			>> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(
			&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return 0;
}

/* Bind a listener on text ("ADDR:PORT") calling cb; *port gets the port
 * bound. 0, PROTO_E_ARG, PROTO_E_IO. */
static int listen_on(struct col *c, const char *text, evconnlistener_cb cb,
		     struct evconnlistener **out, unsigned *port, int tls)
{
	struct sockaddr_storage ss;
	int sslen = sizeof(ss);
	struct evconnlistener *l;

	if (col_parse_addr(text, &ss, &sslen)) {
		col_err("bad listen address %s", text);
		return PROTO_E_ARG;
	}
	/* Loopback is the default; anything else was asked for. Say what
	 * it exposes (docs/SECURITY.md). */
	if (!is_loopback(&ss) && !tls && !c->cfg.secretlen)
		col_warn("listening on %s in clear without a job secret: "
			 "anyone who can reach it can join the job", text);
	else if (!is_loopback(&ss) && !tls)
		col_info("listening on %s in clear (authenticated by the job "
			 "secret, not encrypted)", text);
	l = evconnlistener_new_bind(
		c->base, cb, c,
		LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE |
		LEV_OPT_CLOSE_ON_EXEC, LISTEN_BACKLOG,
		(struct sockaddr *)&ss, sslen);
	if (!l) {
		col_err("cannot listen on %s: %s", text, strerror(errno));
		return PROTO_E_IO;
	}
	evconnlistener_set_error_cb(l, accept_error_cb);
	*out = l;
	sslen = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&ss,
			(socklen_t *)&sslen) == 0) {
		if (ss.ss_family == AF_INET)
			*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return 0;
}

static int open_listener(struct col *c)
{
	int rc = 0;

	/* no listen address: connections come through col_conn_attach */
	if (c->cfg.listen && *c->cfg.listen)
		rc = listen_on(c, c->cfg.listen, accept_cb, &c->listener,
			       &c->port, 0);
	if (!rc && c->cfg.tls_listen)
		rc = listen_on(c, c->cfg.tls_listen, accept_tls_cb,
			       &c->tls_listener, &c->tls_port, 1);
	return rc;
}

/* ---- drain ------------------------------------------------------------- */

static void drain_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;
	void (*done)(struct col *, int, void *) = c->drain_cb;

	c->drain_cb = NULL;
	if (done)
		done(c, c->drain_rc, c->drain_arg);
}

void col_drain_check(struct col *c)
{
	if (!c->draining || !c->drain_cb || c->drain_fired)
		return;
	/* what ended sensors left in their connections first */
	if (col_conn_unread(c))
		return;
	if (c->root) {
		c->drain_rc = proto_jobdir_sync(c->jobdir);
	} else {
		if (!col_up_idle(c) || !c->drain_clock_done)
			return;
		c->drain_rc = 0;
		col_spool_drained(c);
	}
	c->drain_fired = 1;
	event_active(c->drain_ev, 0, 0);
}

int col_drain(struct col *c, void (*done)(struct col *, int rc, void *arg),
	      void *arg)
{
	if (c->draining)
		return PROTO_E_STATE;
	c->draining = 1;
	c->drain_cb = done;
	c->drain_arg = arg;
	/* a last report, so that even a short job stores every collector's
	 * figures (drops, filtered events, spill) */
	stats_cb(-1, 0, c);
	if (c->listener) {
		evconnlistener_free(c->listener);
		c->listener = NULL;
	}
	if (c->tls_listener) {
		evconnlistener_free(c->tls_listener);
		c->tls_listener = NULL;
	}
	if (!c->root) {
		c->q_urgent = 1;
		if (c->up_state == UP_STREAM)
			col_up_clock_round(c, 2, c->cfg.clock_rounds);
		else if (!c->cfg.parent && !c->up_connector)
			c->drain_clock_done = 1;
		col_up_flush(c);
	}
	col_drain_check(c);
	return 0;
}

/* ---- life -------------------------------------------------------------- */

/* A node or gateway collector's own parts: event filter, codec, spill,
 * parent address, clock timer; then it starts connecting upward. 0, or a
 * negative PROTO_E_* (a bad spill directory or parent address said). */
static int forwarder_init(struct col *c)
{
	const struct col_config *cfg = &c->cfg;
	struct timeval tv;
	int rc;

	if (cfg->filter) {
		c->filter = malloc(PROTO_EV__COUNT * sizeof(*c->filter));
		c->filter_seen = calloc(PROTO_EV__COUNT, sizeof(*c->filter_seen));
		if (!c->filter || !c->filter_seen)
			return PROTO_E_NOMEM;
		memcpy(c->filter, cfg->filter,
		       PROTO_EV__COUNT * sizeof(*c->filter));
	}
	if (cfg->zstd_level > 0 || cfg->filter) {
		/* filtering re-encodes: at least level 1 then */
		c->codec = proto_codec_new(cfg->zstd_level > 0 ?
					   cfg->zstd_level : 1);
		if (!c->codec)
			return PROTO_E_NOMEM;
	}
	if (cfg->spill_dir) {
		size_t fmax = cfg->mem_cap / 8;

		if (fmax > (8u << 20))
			fmax = 8u << 20;
		if (fmax < (64u << 10))
			fmax = 64u << 10;
		c->spill = col_spill_open(cfg->spill_dir,
					  cfg->spill_quota, fmax, &rc);
		if (!c->spill) {
			col_err("spill directory %s: %s",
				cfg->spill_dir, proto_strerror(rc));
			return rc;
		}
		if (!col_spill_empty(c->spill))
			col_info("spill %s: %" PRIu64 " bytes left by "
				 "an earlier run, forwarded first",
				 cfg->spill_dir,
				 col_spill_bytes(c->spill));
	}
	if (cfg->parent) {
		int len = sizeof(c->parent_sa);

		if (col_parse_addr(cfg->parent, &c->parent_sa, &len) ||
		    (c->parent_sa.ss_family == AF_INET &&
		     !((struct sockaddr_in *)&c->parent_sa)->sin_port)) {
			col_err("bad parent address %s", cfg->parent);
			return PROTO_E_ARG;
		}
		c->parent_salen = len;
	}
	if (cfg->clock_period_ms) {
		tv.tv_sec = cfg->clock_period_ms / 1000;
		tv.tv_usec = (cfg->clock_period_ms % 1000) * 1000;
		event_add(c->clock_timer, &tv);
	}
	col_up_start(c);
	return 0;
}

struct col *col_new(struct event_base *base, const struct col_config *cfg,
		    int *rc)
{
	struct col *c;
	struct timeval tv;
	int dummy;

	if (!rc)
		rc = &dummy;
	*rc = PROTO_E_ARG;
	if (!base || !cfg || (cfg->parent && cfg->output) ||
	    cfg->mem_cap == 0 || cfg->frame_max == 0 ||
	    cfg->frame_max > PROTO_FRAME_MAX || cfg->zstd_level < 0 ||
	    cfg->zstd_level > 19)
		return NULL;
	*rc = PROTO_E_NOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->base = base;
	c->cfg = *cfg;
	c->root = cfg->output != NULL;
	col_map_init(&c->streams, COL_MAP_MAX);
	col_map_init(&c->nodes, NODES_MAX);
	snprintf(c->name, sizeof(c->name), "%s",
		 cfg->name ? cfg->name : "collector");
	if (gethostname(c->host, sizeof(c->host) - 1) < 0)
		snprintf(c->host, sizeof(c->host), "unknown");
	proto_clockid_read(&c->clockid);
	c->node_id = cfg->node_id;
	while (!c->node_id)
		if ((*rc = proto_random(&c->node_id, sizeof(c->node_id))))
			goto fail;
	*rc = PROTO_E_NOMEM;
	c->msg = malloc(sizeof(*c->msg));
	c->msg2 = malloc(sizeof(*c->msg2));
	c->clock.msg = calloc(1, sizeof(*c->clock.msg));
	c->drain_ev = event_new(base, -1, 0, drain_ev_cb, c);
	c->mem_ev = event_new(base, -1, 0, col_conn_mem_cb, c);
	c->stats_timer = event_new(base, -1, EV_PERSIST, stats_cb, c);
	c->clock_timer = event_new(base, -1, EV_PERSIST, clock_cb, c);
	c->accept_retry = evtimer_new(base, accept_retry_cb, c);
	if (!c->msg || !c->msg2 || !c->clock.msg || !c->drain_ev || !c->mem_ev ||
	    !c->stats_timer || !c->clock_timer || !c->accept_retry)
		goto fail;
	*rc = col_up_init(c);
	if (*rc)
		goto fail;
	c->rate_t = col_now_ns();
	*rc = col_tls_init(c);
	if (*rc)
		goto fail;
	*rc = open_listener(c);
	if (*rc)
		goto fail;
	if (c->root) {
		*rc = col_root_open(c);
		if (*rc) {
			col_err("job directory %s: %s", cfg->output,
				proto_strerror(*rc));
			goto fail;
		}
	} else if ((*rc = forwarder_init(c))) {
		goto fail;
	}
	if (cfg->spool)
		col_spool_take(c, cfg->spool);
	if (cfg->stats_period_ms) {
		tv.tv_sec = cfg->stats_period_ms / 1000;
		tv.tv_usec = (cfg->stats_period_ms % 1000) * 1000;
		event_add(c->stats_timer, &tv);
	}
	if (c->tls_listener)
		col_info("TLS listener on %s (port %u): TLS 1.3, client "
			 "certificates of %s required", cfg->tls_listen,
			 c->tls_port, cfg->tls_ca);
	col_info("collector %016" PRIx64 " listening on port %u, %s %s%s",
		 c->node_id, c->port, c->root ? "storing into" : "forwarding to",
		 c->root ? cfg->output : cfg->parent ? cfg->parent : "(none)",
		 c->tls_cli ? " over TLS" : "");
	*rc = 0;
	return c;

fail:
	col_free(c);
	return NULL;
}

void col_free(struct col *c)
{
	struct col_conn *cn;
	size_t i = 0;
	uint64_t key;
	void *val;

	if (!c)
		return;
	c->freeing = 1;
	col_spool_free(c);
	while ((cn = c->conns))
		col_conn_close(cn, NULL);
	if (c->listener)
		evconnlistener_free(c->listener);
	if (c->tls_listener)
		evconnlistener_free(c->tls_listener);
	col_up_stop(c);
	col_up_fini(c);
	col_root_close(c);
	while (col_map_next(&c->streams, &i, &key, &val))
		col_stream_free(val);
	col_map_clear(&c->streams);
	i = 0;
	while (col_map_next(&c->nodes, &i, &key, &val))
		col_frame_unref(val);
	col_map_clear(&c->nodes);
	col_spill_free(c->spill);
	proto_codec_free(c->codec);
	free(c->filter);
	free(c->filter_seen);
	free(c->scratch_ev);
	free(c->scratch_out);
	if (c->drain_ev)
		event_free(c->drain_ev);
	if (c->mem_ev)
		event_free(c->mem_ev);
	c->mem_ev = NULL;
	if (c->stats_timer)
		event_free(c->stats_timer);
	if (c->clock_timer)
		event_free(c->clock_timer);
	if (c->accept_retry)
		event_free(c->accept_retry);
	free(c->clock.msg);
	free(c->msg);
	free(c->msg2);
	col_tls_fini(c);
	free(c);
}
