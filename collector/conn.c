/*
 * collector/conn.c - the server side: listener, child connections and
 * their handshake state machine, frame reading and dispatch.
 *
 * Every edge starts HELLO -> CHALLENGE -> AUTH -> WELCOME
 * (docs/ARCHITECTURE.md, "Connection sequence"); then the child streams
 * BATCH, META, CLOCK, LOSS, STATS, BYE and PING frames. A malformed frame,
 * a message out of order or a failed proof closes that connection only
 * (an ERROR frame is sent first when possible), with the reason and the
 * peer address logged. A connection stuck in the handshake is closed after
 * cfg.handshake_ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <event2/buffer.h>

#include "collector/internal.h"
#include "proto/auth.h"
#include "proto/jobdir.h"

#define CONN_READ_HW (1u << 20)		/* input kept per connection */
#define CONN_MAX_READ (256u << 10)	/* bytes per read(2) */
#define CLOSING_MS 2000			/* flush an ERROR, then give up */
/* Before WELCOME a peer is not trusted: its frames are handshake frames
 * (the largest, a HELLO, is 60 + 255 + 1024 bytes of payload), so a
 * stranger cannot make the collector buffer more than this. */
#define CONN_HS_FRAME_MAX 2048
#define CONN_HS_READ_HW (PROTO_FRAME_HDR + CONN_HS_FRAME_MAX)
/* Connections still in the handshake at most: past it the oldest one is
 * closed, so a flood of connections that stall cannot keep the sensors
 * out until the handshake timeout (real clients finish in milliseconds;
 * 1,000 sensors connecting at once stay under it). */
#define CONN_HS_MAX 1024

static void release(struct col_conn *cn);

int col_send_msg(struct bufferevent *bev, const struct proto_msg *m)
{
	uint8_t small[512], *buf;
	size_t len;
	int rc = proto_msg_frame_buf(m, small, sizeof(small), &buf, &len);

	if (rc)
		return rc;
	rc = bufferevent_write(bev, buf, len) ? PROTO_E_NOMEM : 0;
	if (buf != small)
		free(buf);
	return rc;
}

int col_read_frame(struct col *c, struct evbuffer *in, size_t max,
		   struct col_frame **out)
{
	uint8_t hdr[PROTO_FRAME_HDR];
	struct proto_frame fr;
	struct col_frame *f;
	size_t len = evbuffer_get_length(in), need, used;
	int rc;

	*out = NULL;
	if (len < PROTO_FRAME_HDR)
		return 0;
	evbuffer_copyout(in, hdr, sizeof(hdr));
	rc = proto_frame_decode(hdr, sizeof(hdr), max, &fr, &need);
	if (rc == 0)
		need = PROTO_FRAME_HDR;
	else if (rc != PROTO_E_TRUNCATED)
		return rc;
	if (len < need)
		return 0;
	f = col_frame_new(c, NULL, need, NULL);
	evbuffer_remove(in, f->data, need);
	rc = proto_frame_decode(f->data, need, max, &fr, &used);
	if (!rc)
		rc = proto_msg_decode(&fr, c->msg);
	if (rc) {
		col_frame_unref(f);
		return rc;
	}
	f->type = fr.type;
	if (fr.type == PROTO_MSG_BATCH) {
		f->stream = c->msg->u.batch.stream;
		f->seq = c->msg->u.batch.seq;
		f->nrecords = c->msg->u.batch.nrecords;
	} else if (fr.type == PROTO_MSG_BYE) {
		f->stream = c->msg->u.bye.stream;
		f->seq = c->msg->u.bye.last_seq;
	} else if (fr.type == PROTO_MSG_META || fr.type == PROTO_MSG_STATS) {
		f->stream = c->msg->u.meta.id;
	} else if (fr.type == PROTO_MSG_LOSS) {
		f->stream = c->msg->u.loss.stream;
	}
	*out = f;
	return 1;
}

struct col_stream *col_stream_get(struct col *c, uint64_t id, int create)
{
	struct col_stream *s = col_map_get(&c->streams, id);

	if (s || !create)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = id;
	if (col_map_put(&c->streams, id, s)) {
		free(s);
		return NULL;
	}
	return s;
}

void col_stream_gc(struct col *c, struct col_stream *s)
{
	/* A stream is forgotten only once it ended (BYE): until then its seq
	 * is the base of its window, so that a connection that is not its
	 * sensor's cannot restart it far ahead (out_of_window). */
	if (c->root || !s || s->owner || s->ua_head || s->held_head ||
	    !s->bye || col_up_word_spilled(c, s))
		return;
	col_map_del(&c->streams, s->id);
	col_stream_free(s);
}

/* The uid owning the other end of a loopback TCP connection, from
 * /proc/net/tcp (IPv4 only: the table lists both ends of a loopback
 * connection, the peer's line has its address as local). 0 or -1. */
static int loopback_uid(struct col_conn *cn, uint32_t *uid)
{
	struct sockaddr_in me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	evutil_socket_t fd = bufferevent_getfd(cn->bev);
	char want_l[32], want_r[32], line[512];
	FILE *f;
	int rc = -1;

	if (fd < 0 || getsockname(fd, (struct sockaddr *)&me, &ml) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) ||
	    peer.sin_family != AF_INET ||
	    (ntohl(peer.sin_addr.s_addr) >> 24) != 127)
		return -1;
	/* the kernel prints the address as the u32 it stores, in hex */
	snprintf(want_l, sizeof(want_l), "%08X:%04X", peer.sin_addr.s_addr,
		 ntohs(peer.sin_port));
	snprintf(want_r, sizeof(want_r), "%08X:%04X", me.sin_addr.s_addr,
		 ntohs(me.sin_port));
	f = fopen("/proc/net/tcp", "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char l[32], r[32];
		unsigned u;

		if (sscanf(line, " %*s %31s %31s %*s %*s %*s %*s %u", l, r,
			   &u) == 3 && !strcmp(l, want_l) && !strcmp(r, want_r)) {
			*uid = u;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

void col_refuse(struct col_conn *cn, uint64_t stream, uint64_t seq,
		const char *why)
{
	struct col *c = cn->col;
	char who[256], uid[32] = "";
	size_t have = strlen(c->refused_by);

	c->st.refused++;
	if (!cn->has_uid && loopback_uid(cn, &cn->uid) == 0)
		cn->has_uid = 1;
	if (cn->has_uid)
		snprintf(uid, sizeof(uid), " uid %u", cn->uid);
	snprintf(who, sizeof(who), "%s (%s %016" PRIx64 " pid %u%s)",
		 cn->peer, cn->role == PROTO_ROLE_SENSOR ? "sensor" :
		 cn->role == PROTO_ROLE_COLLECTOR ? "collector" : "client",
		 cn->peer_id, cn->pid, uid);
	col_warn("refused from %s: stream %016" PRIx64 " seq %" PRIu64
		 ": %s", who, stream, seq, why);
	/* keep the latest refusals, newest first, within one STATS value */
	if (have + strlen(who) + 64 > sizeof(c->refused_by) - 1)
		have = 0;
	{
		char line[384];
		int n = snprintf(line, sizeof(line), "%s stream %016" PRIx64
				 " seq %" PRIu64 "%s", who, stream, seq,
				 have ? "; " : "");

		if (n > 0 && (size_t)n < sizeof(line)) {
			memmove(c->refused_by + n, c->refused_by, have + 1);
			memcpy(c->refused_by, line, (size_t)n);
			c->refused_by[sizeof(c->refused_by) - 1] = 0;
		}
	}
}

/* The seq a stream's next BATCH is measured from: the last one stored
 * (root) or taken from below (others), or the last one a LOSS named
 * (batches a collector dropped). */
static uint64_t seq_base(const struct col *c, const struct col_stream *s)
{
	uint64_t b = c->root ? s->last_seq : s->fwd_seq;

	return s->loss_seq > b ? s->loss_seq : b;
}

/* A BATCH is taken only within cfg.seq_window batches after its stream's
 * base (seq_base): a forged seq far ahead would make every later batch of
 * the real stream look like a duplicate (docs/SECURITY.md, "Streams").
 * A batch after the stream's BYE is taken too (within the window, from a
 * connection that proved the stream's key): a process that records after
 * its end (init/exitst2 under Open MPI) goes on, and the root stores it
 * (root.c); refused, its sensor waited for the ACK in vain. A collector
 * that has not seen the stream yet (restarted: the sensor resumes at any
 * seq) leaves it to the root, which knows what it stored. 1 when refused
 * (counted, logged). */
static int out_of_window(struct col *c, struct col_conn *cn,
			 const struct col_stream *s, uint64_t seq)
{
	uint64_t base = seq_base(c, s);

	if (seq <= base || seq - base <= c->cfg.seq_window ||
	    (!c->root && !base))
		return 0;
	col_refuse(cn, s->id, seq, "seq out of the window");
	return 1;
}

/* May cn speak for stream id? A sensor speaks only for the stream of its
 * HELLO; a stream whose owner is a live connection is accepted only from
 * it, or from a new connection of the same peer (same role and HELLO id:
 * a collector reconnecting before its old connection's end was seen).
 * A stream without a live owner (new, or its connection gone) is taken
 * by the connection that speaks for it: the resumption after a
 * reconnect. 0, or PROTO_E_AUTH (refused, counted). */
static int may_speak(struct col_conn *cn, uint64_t id, uint64_t seq,
		     struct col_stream *s)
{
	struct col_conn *o = s ? s->owner : NULL;

	if (cn->role == PROTO_ROLE_SENSOR && id != cn->peer_id) {
		col_refuse(cn, id, seq, "a sensor sent a frame of another "
			   "stream");
		return PROTO_E_AUTH;
	}
	if (!o || o == cn || o->state != CS_STREAM)
		return 0;
	if (o->role == cn->role && o->peer_id == cn->peer_id &&
	    cn->role == PROTO_ROLE_COLLECTOR)
		return 0;
	col_refuse(cn, id, seq, "the stream belongs to another connection");
	return PROTO_E_AUTH;
}

static void closing_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col_conn *cn = arg;

	col_conn_close(cn, NULL);
}


int col_conn_fail(struct col_conn *cn, int code, const char *why)
{
	struct proto_msg m;
	struct timeval tv = {CLOSING_MS / 1000, (CLOSING_MS % 1000) * 1000};

	cn->col->st.rejected++;
	if (code == PROTO_E_VERSION)
		cn->col->st.rejected_version++;
	else if (code == PROTO_E_AUTH && strstr(why, "key"))
		cn->col->st.rejected_key++;
	else if (code == PROTO_E_AUTH && cn->state == CS_AUTH)
		cn->col->st.rejected_secret++;
	col_warn("closing %s: %s (%s)", cn->peer, why, proto_errname(code));
	if (cn->state == CS_CLOSING)
		return 0;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_ERROR;
	m.u.error.code = code;
	snprintf(m.u.error.message, sizeof(m.u.error.message), "%s", why);
	col_send_msg(cn->bev, &m);
	if (cn->state == CS_STREAM && cn->role != PROTO_ROLE_STATUS &&
	    cn->col->st.children)
		cn->col->st.children--;
	cn->state = CS_CLOSING;
	bufferevent_disable(cn->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(cn->bev)) == 0) {
		col_conn_close(cn, NULL);
		return 1;
	}
	event_del(cn->hs_timer);
	event_assign(cn->hs_timer, cn->col->base, -1, 0, closing_timeout_cb, cn);
	event_add(cn->hs_timer, &tv);
	return 0;
}

int col_conn_finish(struct col_conn *cn)
{
	struct timeval tv = {CLOSING_MS / 1000, (CLOSING_MS % 1000) * 1000};

	if (cn->state == CS_CLOSING)
		return 0;
	if (cn->state == CS_STREAM && cn->role != PROTO_ROLE_STATUS &&
	    cn->col->st.children)
		cn->col->st.children--;
	cn->state = CS_CLOSING;
	bufferevent_disable(cn->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(cn->bev)) == 0) {
		col_conn_close(cn, "finished");
		return 1;
	}
	event_del(cn->hs_timer);
	event_assign(cn->hs_timer, cn->col->base, -1, 0, closing_timeout_cb, cn);
	event_add(cn->hs_timer, &tv);
	return 0;
}

/* A sensor's connection ended before its BYE (the process was killed, or
 * the link broke): say when, in a META of the stream
 * ("collector.closed_ns", this host's CLOCK_MONOTONIC, the clock the
 * sensor stamps with), so the report can tell how much of the process's
 * end is not in the trace (docs/modules/collector.md). */
static void note_closed(struct col_conn *cn)
{
	struct col *c = cn->col;
	struct col_stream *s = col_stream_get(c, cn->peer_id, 0);
	struct proto_msg *m;
	struct col_frame *f;
	int rc;

	if (c->freeing || cn->role != PROTO_ROLE_SENSOR ||
	    cn->state != CS_STREAM || !s || s->bye ||
	    !(m = malloc(sizeof(*m))))	/* large: not on the stack */
		return;
	memset(&m->u.meta, 0, sizeof(m->u.meta));
	m->type = PROTO_MSG_META;
	m->u.meta.id = cn->peer_id;
	m->u.meta.n = 1;
	snprintf(m->u.meta.kv[0].key, sizeof(m->u.meta.kv[0].key),
		 "collector.closed_ns");
	snprintf(m->u.meta.kv[0].value, sizeof(m->u.meta.kv[0].value),
		 "%" PRIu64, col_now_ns());
	f = col_frame_msg(c, m, &rc);
	free(m);
	if (!f)
		return;
	f->stream = cn->peer_id;
	if (c->root) {
		if (proto_jobdir_append(c->jobdir, f->data, f->len))
			col_warn("job %s: META of a closed stream not stored",
				 c->cfg.output);
		col_frame_unref(f);
	} else {
		col_up_enqueue(c, f);
	}
}

void col_conn_close(struct col_conn *cn, const char *why)
{
	struct col *c = cn->col;
	size_t i = 0;
	uint64_t key;
	void *val;

	if (why)
		col_info("connection %s closed: %s", cn->peer, why);
	note_closed(cn);
	if (cn->state == CS_STREAM && cn->role != PROTO_ROLE_STATUS &&
	    c->st.children)
		c->st.children--;
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		c->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	/* Streams it owned have no way down until their sender comes back. */
	if (cn->role != PROTO_ROLE_STATUS) {
		struct col_stream *gc[64];
		size_t ngc = 0;

		do {
			ngc = 0;
			i = 0;
			while (col_map_next(&c->streams, &i, &key, &val)) {
				struct col_stream *s = val;

				if (s->claim_via == cn)
					s->claim_via = NULL;
				if (s->owner != cn)
					continue;
				s->owner = NULL;
				if (!c->root && !s->ua_head && ngc < 64)
					gc[ngc++] = s;
			}
			for (size_t k = 0; k < ngc; k++)
				col_stream_gc(c, gc[k]);
		} while (ngc == 64);
	}
	if (cn->mem_wait && c->mem_waiters)
		c->mem_waiters--;
	cn->mem_wait = 0;
	release(cn);
	event_free(cn->hs_timer);
	bufferevent_free(cn->bev);
	free(cn);
	if (c->draining && !c->freeing)
		col_drain_check(c);
}

static int send_challenge(struct col_conn *cn)
{
	struct proto_msg m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_CHALLENGE;
	m.u.challenge.flags = cn->col->cfg.secretlen ? PROTO_AUTH_REQUIRED : 0;
	if (cn->role == PROTO_ROLE_SENSOR)
		m.u.challenge.flags |= col_key_flags(cn->col, cn->peer_id);
	rc = proto_random(cn->server_nonce, PROTO_NONCE);
	if (rc)
		return rc;
	memcpy(m.u.challenge.nonce, cn->server_nonce, PROTO_NONCE);
	return col_send_msg(cn->bev, &m);
}

static void send_status(struct col_conn *cn)
{
	struct col *c = cn->col;
	struct col_frame *own;
	size_t i = 0;
	uint64_t key;
	void *val;
	int rc;

	col_stats_msg(c, c->msg);
	own = col_frame_msg(c, c->msg, &rc);
	if (own) {
		bufferevent_write(cn->bev, own->data, own->len);
		col_frame_unref(own);
	}
	while (col_map_next(&c->nodes, &i, &key, &val)) {
		struct col_frame *f = val;

		if (key != c->node_id)
			bufferevent_write(cn->bev, f->data, f->len);
	}
}

/* A sensor's AUTH is followed by its KEY (key.c), which decides. */
static int on_auth(struct col_conn *cn, const struct proto_msg *m)
{
	struct col *c = cn->col;
	uint8_t want[PROTO_MAC];

	proto_auth_proof(PROTO_AUTH_CLIENT, c->cfg.secret, c->cfg.secretlen,
			 cn->server_nonce, cn->client_nonce, cn->peer_id, want);
	if (!proto_auth_equal(want, m->u.auth.mac))
		return PROTO_E_AUTH;
	if (cn->role == PROTO_ROLE_SENSOR) {
		cn->state = CS_KEY;
		return 0;
	}
	return col_conn_welcome(cn);
}

int col_conn_welcome(struct col_conn *cn)
{
	struct col *c = cn->col;
	struct proto_msg w;

	memset(&w, 0, sizeof(w));
	w.type = PROTO_MSG_WELCOME;
	w.u.welcome.node_id = c->node_id;
	proto_auth_proof(PROTO_AUTH_SERVER, c->cfg.secret, c->cfg.secretlen,
			 cn->server_nonce, cn->client_nonce, cn->peer_id,
			 w.u.welcome.mac);
	if (col_send_msg(cn->bev, &w))
		return PROTO_E_NOMEM;
	event_del(cn->hs_timer);
	cn->state = CS_STREAM;
	if (cn->role == PROTO_ROLE_STATUS) {
		send_status(cn);
		cn->state = CS_CLOSING;
		bufferevent_disable(cn->bev, EV_READ);
		if (evbuffer_get_length(bufferevent_get_output(cn->bev)) == 0)
			return PROTO_E_CLOSED;
		return 0;
	}
	c->st.children++;
	if (c->cfg.idle_ms) {
		struct timeval idle = {c->cfg.idle_ms / 1000,
				       (c->cfg.idle_ms % 1000) * 1000};

		bufferevent_set_timeouts(cn->bev, &idle, NULL);
	}
	if (cn->tls) {
		char cn_name[128];

		col_info("%s %016" PRIx64 " connected from %s over TLS "
			 "(certificate '%s')", cn->role == PROTO_ROLE_SENSOR ?
			 "sensor" : "collector", cn->peer_id, cn->peer,
			 col_tls_peer(cn->bev, cn_name, sizeof(cn_name)));
	} else {
		col_info("%s %016" PRIx64 " connected from %s",
			 cn->role == PROTO_ROLE_SENSOR ? "sensor" :
			 "collector", cn->peer_id, cn->peer);
	}
	if (c->paused)
		bufferevent_disable(cn->bev, EV_READ);
	return 0;
}

static int on_ping(struct col_conn *cn, const struct proto_msg *m,
		   uint64_t t_recv)
{
	struct proto_msg p;

	memset(&p, 0, sizeof(p));
	p.type = PROTO_MSG_PONG;
	p.u.pong.id = m->u.ping.id;
	p.u.pong.t_orig = m->u.ping.t_send;
	p.u.pong.t_recv = t_recv;
	p.u.pong.t_send = col_now_ns();
	return col_send_msg(cn->bev, &p);
}

/* A frame from a streaming child; f is ours to keep or release. */
static int on_stream_frame(struct col_conn *cn, struct col_frame *f,
			   uint64_t t_recv)
{
	struct col *c = cn->col;
	struct proto_msg *m = c->msg;
	struct col_stream *s;

	switch (f->type) {
	case PROTO_MSG_PING:
		col_frame_unref(f);
		return on_ping(cn, m, t_recv);
	case PROTO_MSG_KEY:	/* a claim passed up by a child collector */
		col_frame_unref(f);
		if (cn->role != PROTO_ROLE_COLLECTOR)
			return PROTO_E_STATE;
		col_key_from_below(cn, &m->u.key);
		return 0;
	case PROTO_MSG_BATCH:
	case PROTO_MSG_BYE:
	case PROTO_MSG_META:
	case PROTO_MSG_CLOCK:
	case PROTO_MSG_LOSS:
	case PROTO_MSG_STATS:
		break;
	default:
		col_frame_unref(f);
		return PROTO_E_STATE;
	}
	if (cn->role == PROTO_ROLE_STATUS) {
		col_frame_unref(f);
		return PROTO_E_STATE;
	}
	c->st.frames_in++;
	c->st.bytes_in += f->len;
	if (f->type == PROTO_MSG_META || f->type == PROTO_MSG_LOSS ||
	    (f->type == PROTO_MSG_CLOCK && cn->role == PROTO_ROLE_SENSOR)) {
		uint64_t id = f->type == PROTO_MSG_CLOCK ? m->u.clock.child :
			      f->stream;

		s = col_stream_get(c, id, 0);
		if (may_speak(cn, id, 0, s)) {
			col_frame_unref(f);
			return PROTO_E_AUTH;
		}
		if (f->type == PROTO_MSG_LOSS && s &&
		    m->u.loss.last_seq > s->loss_seq &&
		    m->u.loss.last_seq <= seq_base(c, s) + c->cfg.seq_window)
			s->loss_seq = m->u.loss.last_seq;
	}
	if (f->type == PROTO_MSG_BATCH || f->type == PROTO_MSG_BYE) {
		s = col_stream_get(c, f->stream, 1);
		if (!s) {
			col_frame_unref(f);
			return PROTO_E_FULL;
		}
		if (may_speak(cn, f->stream, f->seq, s)) {
			col_stream_gc(c, s);
			col_frame_unref(f);
			return PROTO_E_AUTH;
		}
		if (f->type == PROTO_MSG_BATCH && out_of_window(c, cn, s, f->seq)) {
			col_stream_gc(c, s);
			col_frame_unref(f);
			/* a sensor's connection is closed; a collector's link
			 * is kept (it carries other streams, and would send
			 * the frame again after a reconnect): the frame is
			 * dropped unacknowledged, its sender keeps it */
			return cn->role == PROTO_ROLE_SENSOR ? PROTO_E_FIELD : 0;
		}
		if (f->type == PROTO_MSG_BATCH && f->seq > s->fwd_seq)
			s->fwd_seq = f->seq;
		s->owner = cn;
		if (f->type == PROTO_MSG_BATCH) {
			c->st.batches_in++;
			c->st.events_in += f->nrecords;
			s->events += f->nrecords;
		} else if (!s->bye) {
			s->bye = 1;
			s->bye_seq = f->seq;
		}
	}
	if (f->type == PROTO_MSG_STATS)
		col_remember_stats(c, f, m->u.meta.id);
	if (c->root) {
		int fin = col_root_frame(c, cn, f, m);

		col_frame_unref(f);
		return fin ? 1 : 0;
	}
	col_up_enqueue(c, f);
	return 0;
}

static int on_frame(struct col_conn *cn, struct col_frame *f, uint64_t t_recv)
{
	struct col *c = cn->col;
	struct proto_msg *m = c->msg;
	int rc = 0;

	switch (cn->state) {
	case CS_HELLO:
		if (f->type != PROTO_MSG_HELLO) {
			rc = PROTO_E_STATE;
			break;
		}
		if (m->u.hello.role < PROTO_ROLE_SENSOR ||
		    m->u.hello.role > PROTO_ROLE_STATUS) {
			rc = PROTO_E_FIELD;
			break;
		}
		cn->role = m->u.hello.role;
		cn->peer_id = m->u.hello.id;
		cn->pid = m->u.hello.pid;
		cn->rank = m->u.hello.rank;
		snprintf(cn->host, sizeof(cn->host), "%.63s", m->u.hello.host);
		memcpy(cn->client_nonce, m->u.hello.nonce, PROTO_NONCE);
		rc = send_challenge(cn);
		if (!rc)
			cn->state = CS_AUTH;
		break;
	case CS_AUTH:
		rc = f->type == PROTO_MSG_AUTH ? on_auth(cn, m) : PROTO_E_STATE;
		break;
	case CS_KEY:
		rc = f->type == PROTO_MSG_KEY ? col_key_claim(cn, &m->u.key) :
		     PROTO_E_STATE;
		break;
	case CS_VERDICT:	/* nothing until WELCOME */
		rc = PROTO_E_STATE;
		break;
	case CS_STREAM:
		if (f->type == PROTO_MSG_ERROR) {
			col_warn("%s reports error %d: %s", cn->peer,
				 m->u.error.code, m->u.error.message);
			col_frame_unref(f);
			return PROTO_E_CLOSED;
		}
		return on_stream_frame(cn, f, t_recv);
	case CS_CLOSING:
		break;
	}
	col_frame_unref(f);
	return rc;
}

/* Memory for frames over CONN_READ_HW (docs/modules/collector.md,
 * "Memory"): a connection may buffer one only with need bytes reserved
 * against --mem-cap (frames held, reservations); when they do not fit it
 * stops reading until memory is given back. One reservation is always
 * granted when none is held, so a large frame can always pass. */
static int reserve(struct col_conn *cn, size_t need)
{
	struct col *c = cn->col;

	if (cn->reserved >= need)
		return 1;
	c->mem_reserved -= cn->reserved;
	cn->reserved = 0;
	if (c->mem_reserved && c->mem_used + c->mem_reserved + need >
	    c->cfg.mem_cap)
		return 0;
	cn->reserved = need;
	c->mem_reserved += need;
	return 1;
}

static void release(struct col_conn *cn)
{
	if (!cn->reserved)
		return;
	cn->col->mem_reserved -= cn->reserved;
	cn->reserved = 0;
	col_conn_mem_freed(cn->col);
}

static void mem_wait(struct col_conn *cn)
{
	bufferevent_disable(cn->bev, EV_READ);
	bufferevent_setwatermark(cn->bev, EV_READ, 0, CONN_READ_HW);
	if (cn->mem_wait)
		return;
	cn->mem_wait = 1;
	cn->col->mem_waiters++;
	if (!cn->wait_logged)
		col_info("%s waits for memory to read a large frame",
			 cn->peer);
	cn->wait_logged = 1;
}

void col_conn_mem_freed(struct col *c)
{
	if (c->mem_waiters && c->mem_ev)
		event_active(c->mem_ev, 0, 0);
}

void col_conn_mem_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;
	struct col_conn *cn, *next;

	for (cn = c->conns; cn && c->mem_waiters; cn = next) {
		next = cn->next;
		if (!cn->mem_wait)
			continue;
		cn->mem_wait = 0;
		c->mem_waiters--;
		if (c->paused || cn->state != CS_STREAM)
			continue;
		bufferevent_enable(cn->bev, EV_READ);
		col_conn_process(cn);
	}
}

int col_conn_process(struct col_conn *cn)
{
	struct col *c = cn->col;
	struct evbuffer *in = bufferevent_get_input(cn->bev);
	uint64_t t_recv = col_now_ns();

	while (cn->state != CS_CLOSING) {
		struct col_frame *f;
		size_t max = cn->state == CS_STREAM ? c->cfg.frame_max :
			     CONN_HS_FRAME_MAX;
		int rc;

		if (c->paused && cn->state == CS_STREAM) {
			bufferevent_disable(cn->bev, EV_READ);
			return 0;
		}
		rc = col_read_frame(c, in, max, &f);
		if (rc == 0) {
			/* Let one whole frame in even when it is large. */
			size_t need = PROTO_FRAME_HDR;
			uint8_t hdr[PROTO_FRAME_HDR];
			struct proto_frame fr;

			if (cn->state != CS_STREAM) {
				bufferevent_setwatermark(cn->bev, EV_READ, 0,
							 CONN_HS_READ_HW);
				return 0;
			}
			if (evbuffer_copyout(in, hdr, sizeof(hdr)) ==
			    (ev_ssize_t)sizeof(hdr))
				proto_frame_decode(hdr, sizeof(hdr), max, &fr,
						   &need);
			if (need > CONN_READ_HW && !reserve(cn, need)) {
				mem_wait(cn);
				return 0;
			}
			bufferevent_setwatermark(cn->bev, EV_READ, 0,
						 need > CONN_READ_HW ?
						 need : CONN_READ_HW);
			return 0;
		}
		if (rc == 1)
			release(cn);
		if (rc < 0)
			return col_conn_fail(cn, rc, rc == PROTO_E_VERSION ?
					 "a protocol version not spoken here" :
					 cn->state == CS_STREAM ?
					 "malformed frame" :
					 "malformed handshake frame");
		rc = on_frame(cn, f, t_recv);
		if (rc == 1)
			return col_conn_finish(cn);
		if (rc == PROTO_E_CLOSED) {
			col_conn_close(cn, "closed after reply");
			return 1;
		}
		if (rc && cn->state == CS_STREAM)
			return col_conn_fail(cn, rc, rc == PROTO_E_AUTH ?
					 "frame refused: not its stream" :
					 rc == PROTO_E_FIELD ?
					 "frame refused: seq out of window" :
					 rc == PROTO_E_STATE ?
					 "message not allowed in this state" :
					 "bad message");
		if (rc)
			return col_conn_fail(cn, rc, rc == PROTO_E_AUTH ?
					 (cn->state == CS_KEY ?
					  "stream key refused" :
					  "authentication failed") :
					 rc == PROTO_E_STATE ?
					 "message not allowed in this state" :
					 "bad message");
	}
	return 0;
}

int col_conn_unread(const struct col *c)
{
	for (const struct col_conn *cn = c->conns; cn; cn = cn->next) {
		int n = 0;

		if (cn->role != PROTO_ROLE_SENSOR || cn->state != CS_STREAM)
			continue;
		if (evbuffer_get_length(bufferevent_get_input(cn->bev)))
			return 1;
		if (!cn->tls &&
		    ioctl(bufferevent_getfd(cn->bev), FIONREAD, &n) == 0 && n > 0)
			return 1;
	}
	return 0;
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct col *c = ((struct col_conn *)arg)->col;

	col_conn_process(arg);
	if (c->draining)
		col_drain_check(c);
}

static void conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct col_conn *cn = arg;

	if (cn->state == CS_CLOSING &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		col_conn_close(cn, NULL);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct col_conn *cn = arg;
	struct col *c = cn->col;
	char why[256];

	if (what & BEV_EVENT_EOF) {
		size_t left;

		/* Frames already buffered are still served. */
		if (cn->state == CS_STREAM && !c->paused &&
		    col_conn_process(cn))
			return;
		left = evbuffer_get_length(bufferevent_get_input(bev));
		if (cn->state < CS_STREAM) {
			/* no event came: a process that ended or exec'd
			 * before its handshake finished, a probe; not a
			 * refusal, not a loss */
			c->st.abandoned++;
			if (left)
				col_info("closing %s: closed by peer during the "
					 "handshake (%zu bytes of a truncated "
					 "frame)", cn->peer, left);
			else
				col_info("closing %s: closed by peer during the "
					 "handshake", cn->peer);
			col_conn_close(cn, NULL);
		} else if (left && cn->state != CS_CLOSING && !c->paused) {
			/* what is left is not a whole frame: a truncated one */
			c->st.cut_frames++;
			col_warn("closing %s: closed by peer inside a frame "
				 "(%zu bytes of a truncated frame)", cn->peer,
				 left);
			col_conn_close(cn, NULL);
		} else {
			col_conn_close(cn, "closed by peer");
		}
	} else if ((what & BEV_EVENT_ERROR) && (what & BEV_EVENT_WRITING) &&
		   !cn->tls && cn->role == PROTO_ROLE_SENSOR &&
		   cn->state == CS_STREAM) {
		/* a sensor hands its stream over without waiting for the
		 * BYE's ACK (docs/modules/sensor-runtime.md): its process
		 * may be gone, and an ACK written after its close is answered
		 * with a reset. What it wrote before is still in our receive
		 * queue: stop writing, read on to its end (EOF or the reset's
		 * error on the read side), then close */
		col_info("%s: write failed (%s): reading what is left",
			 cn->peer, evutil_socket_error_to_string(
				 EVUTIL_SOCKET_ERROR()));
		bufferevent_disable(bev, EV_WRITE);
		evbuffer_drain(bufferevent_get_output(bev),
			       evbuffer_get_length(bufferevent_get_output(bev)));
		cn->write_dead = 1;
	} else if (what & BEV_EVENT_ERROR) {
		if (cn->tls) {
			col_tls_error(bev, why, sizeof(why));
			if (cn->state != CS_STREAM && cn->state != CS_CLOSING) {
				c->st.rejected++;
				col_warn("closing %s: TLS: %s", cn->peer, why);
				col_conn_close(cn, NULL);
				return;
			}
			col_conn_close(cn, why);
			return;
		}
		col_conn_close(cn, evutil_socket_error_to_string(
				       EVUTIL_SOCKET_ERROR()));
	} else if (what & BEV_EVENT_TIMEOUT) {
		c->st.abandoned++;
		col_warn("closing %s: idle for %u ms after the handshake",
			 cn->peer, c->cfg.idle_ms);
		col_conn_close(cn, NULL);
	}
}

static void hs_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col_conn *cn = arg;

	cn->col->st.abandoned++;
	col_warn("closing %s: handshake not finished in %u ms", cn->peer,
		 cn->col->cfg.handshake_ms);
	col_conn_close(cn, NULL);
}

struct col_conn *col_conn_attach(struct col *c, struct bufferevent *bev,
				 const char *peer)
{
	struct col_conn *cn = calloc(1, sizeof(*cn));
	struct timeval tv = {c->cfg.handshake_ms / 1000,
			     (c->cfg.handshake_ms % 1000) * 1000};

	struct col_conn *oldest = NULL;
	size_t pending = 0;

	if (!cn) {
		bufferevent_free(bev);
		return NULL;
	}
	for (struct col_conn *x = c->conns; x; x = x->next)
		if (x->state < CS_STREAM) {
			pending++;
			oldest = x;	/* the list is newest first */
		}
	if (pending >= CONN_HS_MAX && oldest) {
		c->st.abandoned++;
		col_warn("closing %s: %zu connections in the handshake, the "
			 "oldest is dropped", oldest->peer, pending);
		col_conn_close(oldest, NULL);
	}
	cn->col = c;
	cn->bev = bev;
	cn->serial = ++c->conn_serial;
	snprintf(cn->peer, sizeof(cn->peer), "%s", peer ? peer : "?");
	cn->hs_timer = evtimer_new(c->base, hs_timeout_cb, cn);
	if (!cn->hs_timer) {
		bufferevent_free(bev);
		free(cn);
		return NULL;
	}
	evtimer_add(cn->hs_timer, &tv);
	cn->next = c->conns;
	if (c->conns)
		c->conns->prev = cn;
	c->conns = cn;
	bufferevent_setcb(bev, conn_read_cb, conn_write_cb, conn_event_cb, cn);
	bufferevent_setwatermark(bev, EV_READ, 0, CONN_HS_READ_HW);
	bufferevent_set_max_single_read(bev, CONN_MAX_READ);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	col_debug("connection from %s", cn->peer);
	return cn;
}
