/*
 * tests/collector/test_collector.c - the collector's handlers driven
 * without sockets (bufferevent pairs): handshake state machine, faults,
 * root deduplication, flush thresholds, spill store, stream map.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "collector/internal.h"
#include "proto/auth.h"
#include "proto/codec.h"
#include "proto/jobdir.h"

static struct proto_msg msg;	/* large: not on the stack */

static void spin(struct event_base *b)
{
	for (int i = 0; i < 20; i++)
		event_base_loop(b, EVLOOP_NONBLOCK);
}

static void send_m(struct bufferevent *bev, const struct proto_msg *m)
{
	cr_assert_eq(col_send_msg(bev, m), 0);
}

/* Next message on bev's input: 1 with msg filled, 0 when none. */
static int recv_m(struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[PROTO_FRAME_HDR], *p;
	struct proto_frame f;
	size_t need, used;
	int rc;

	if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
		return 0;
	rc = proto_frame_decode(hdr, sizeof(hdr), 0, &f, &need);
	if (rc == 0)
		need = PROTO_FRAME_HDR;
	cr_assert(rc == 0 || rc == PROTO_E_TRUNCATED);
	if (evbuffer_get_length(in) < need)
		return 0;
	p = evbuffer_pullup(in, (ev_ssize_t)need);
	cr_assert_eq(proto_frame_decode(p, need, 0, &f, &used), 0);
	cr_assert_eq(proto_msg_decode(&f, &msg), 0);
	evbuffer_drain(in, need);
	return 1;
}

struct rig {
	struct event_base *base;
	struct col *col;
	struct col_config cfg;
	char dir[64];
	char job[128];
};

static void rig_up(struct rig *r, int root)
{
	int rc;

	col_log_level = COL_LOG_ERROR;
	r->base = event_base_new();
	cr_assert_not_null(r->base);
	strcpy(r->dir, "/tmp/col-test-XXXXXX");
	cr_assert_not_null(mkdtemp(r->dir));
	snprintf(r->job, sizeof(r->job), "%s/job", r->dir);
	col_config_default(&r->cfg);
	r->cfg.listen = "";
	r->cfg.stats_period_ms = 0;
	r->cfg.clock_period_ms = 0;
	r->cfg.handshake_ms = 60000;
	r->cfg.node_id = 0x1234;
	if (root)
		r->cfg.output = r->job;
	r->col = col_new(r->base, &r->cfg, &rc);
	cr_assert_not_null(r->col, "col_new: %s", proto_strerror(rc));
}

static void rm_tree(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	cr_assert_eq(system(cmd), 0);
}

static void rig_down(struct rig *r)
{
	col_free(r->col);
	event_base_free(r->base);
	rm_tree(r->dir);
}

/* A child connection: returns the test's end. */
static struct bufferevent *child(struct rig *r)
{
	struct bufferevent *p[2];

	cr_assert_eq(bufferevent_pair_new(r->base, BEV_OPT_DEFER_CALLBACKS, p), 0);
	cr_assert_not_null(col_conn_attach(r->col, p[0], "pair"));
	bufferevent_enable(p[1], EV_READ | EV_WRITE);
	return p[1];
}

static uint8_t cnonce[PROTO_NONCE] = {1, 2, 3};

static void hello(struct bufferevent *t, uint8_t role, uint64_t id)
{
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_HELLO;
	msg.u.hello.role = role;
	msg.u.hello.id = id;
	msg.u.hello.rank = -1;
	memcpy(msg.u.hello.nonce, cnonce, PROTO_NONCE);
	strcpy(msg.u.hello.host, "h");
	strcpy(msg.u.hello.name, "n");
	send_m(t, &msg);
}

/* Full handshake with secret key; returns 1 when WELCOME came. */
static int handshake(struct rig *r, struct bufferevent *t, uint64_t id,
		     const char *key)
{
	uint8_t snonce[PROTO_NONCE], want[PROTO_MAC];

	hello(t, PROTO_ROLE_SENSOR, id);
	spin(r->base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	memcpy(snonce, msg.u.challenge.nonce, PROTO_NONCE);
	msg.type = PROTO_MSG_AUTH;
	proto_auth_proof(PROTO_AUTH_CLIENT, key, strlen(key), snonce, cnonce,
			 id, msg.u.auth.mac);
	send_m(t, &msg);
	spin(r->base);
	if (!recv_m(t) || msg.type != PROTO_MSG_WELCOME)
		return 0;
	proto_auth_proof(PROTO_AUTH_SERVER, key, strlen(key), snonce, cnonce,
			 id, want);
	cr_assert(proto_auth_equal(want, msg.u.welcome.mac));
	cr_assert_eq(msg.u.welcome.node_id, 0x1234);
	return 1;
}

static size_t nconns(struct rig *r)
{
	size_t n = 0;

	for (struct col_conn *cn = r->col->conns; cn; cn = cn->next)
		n++;
	return n;
}

static void send_batch(struct bufferevent *t, uint64_t stream, uint64_t seq,
		       uint32_t n)
{
	static struct proto_event ev[64];
	static uint8_t data[8192];
	struct proto_codec *c = proto_codec_new(0);
	size_t len;

	cr_assert(n <= 64);
	for (uint32_t i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].t_start = seq * 100 + i;
		ev[i].t_end = ev[i].t_start;
		ev[i].type = 1;
	}
	cr_assert_eq(proto_codec_encode(c, ev, n, data, sizeof(data), &len), 0);
	proto_codec_free(c);
	msg.type = PROTO_MSG_BATCH;
	msg.u.batch.stream = stream;
	msg.u.batch.seq = seq;
	msg.u.batch.nrecords = n;
	msg.u.batch.flags = 0;
	msg.u.batch.data = data;
	msg.u.batch.datalen = (uint32_t)len;
	send_m(t, &msg);
}

/* ---- handshake ------------------------------------------------------- */

Test(collector, handshake_good_and_ping)
{
	struct rig r;
	struct bufferevent *t;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 77, ""));
	msg.type = PROTO_MSG_PING;
	msg.u.ping.id = 9;
	msg.u.ping.t_send = 5;
	send_m(t, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_PONG);
	cr_assert_eq(msg.u.pong.id, 9);
	cr_assert_eq(msg.u.pong.t_orig, 5);
	cr_assert(msg.u.pong.t_recv <= msg.u.pong.t_send);
	cr_assert_eq(nconns(&r), 1);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, handshake_bad_proof_closes_only_that_one)
{
	struct rig r;
	struct bufferevent *good, *bad;
	int rc;

	rig_up(&r, 1);
	col_free(r.col);
	r.cfg.secret = "s3cret";
	r.cfg.secretlen = 6;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	good = child(&r);
	bad = child(&r);
	cr_assert(handshake(&r, good, 1, "s3cret"));
	cr_assert_not(handshake(&r, bad, 2, "wrong"));
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	send_batch(good, 1, 1, 3);
	spin(r.base);
	cr_assert_eq(recv_m(good), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 1);
	bufferevent_free(good);
	bufferevent_free(bad);
	rig_down(&r);
}

Test(collector, wrong_order_is_state_error)
{
	struct rig r;
	struct bufferevent *t, *other;

	rig_up(&r, 1);
	other = child(&r);
	t = child(&r);
	send_batch(t, 5, 1, 1);	/* before HELLO */
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_STATE);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	cr_assert(handshake(&r, other, 3, ""));
	bufferevent_free(t);
	bufferevent_free(other);
	rig_down(&r);
}

Test(collector, auth_twice_and_hello_after_welcome)
{
	struct rig r;
	struct bufferevent *t;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 3, ""));
	hello(t, PROTO_ROLE_SENSOR, 3);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, garbage_truncated_and_oversized)
{
	struct rig r;
	struct bufferevent *g, *tr, *big, *ok;
	uint8_t junk[64], hdr[PROTO_FRAME_HDR];

	rig_up(&r, 1);
	g = child(&r);
	tr = child(&r);
	big = child(&r);
	ok = child(&r);
	memset(junk, 'x', sizeof(junk));
	bufferevent_write(g, junk, sizeof(junk));
	/* A truncated HELLO waits for the rest; it is not an error. */
	hello(tr, PROTO_ROLE_SENSOR, 4);
	evbuffer_drain(bufferevent_get_output(tr), 0);
	/* A valid header announcing more than the maximum. */
	cr_assert_eq(proto_frame_header(PROTO_MSG_BATCH, NULL, 0, hdr), 0);
	{
		struct col_config c2 = r.cfg;
		(void)c2;
	}
	memset(junk, 0, sizeof(junk));
	cr_assert_eq(proto_frame_header(PROTO_MSG_HELLO, junk, 8, hdr), 0);
	bufferevent_write(big, hdr, 4);	/* magic..type only: truncated */
	spin(r.base);
	cr_assert_eq(recv_m(g), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	spin(r.base);
	cr_assert_eq(nconns(&r), 3);
	cr_assert(handshake(&r, ok, 8, ""));
	bufferevent_free(g);
	bufferevent_free(tr);
	bufferevent_free(big);
	bufferevent_free(ok);
	rig_down(&r);
}

Test(collector, oversized_length_closes)
{
	struct rig r;
	struct bufferevent *t, *ok;
	uint8_t hdr[PROTO_FRAME_HDR];
	int rc;

	rig_up(&r, 1);
	col_free(r.col);
	r.cfg.frame_max = 1024;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	t = child(&r);
	ok = child(&r);
	{
		static uint8_t payload[4096];

		cr_assert_eq(proto_frame_header(PROTO_MSG_HELLO, payload,
						sizeof(payload), hdr), 0);
	}
	bufferevent_write(t, hdr, sizeof(hdr));	/* length 4096 > 1024 */
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_TOOBIG);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	cr_assert(handshake(&r, ok, 9, ""));
	bufferevent_free(t);
	bufferevent_free(ok);
	rig_down(&r);
}

Test(collector, handshake_timeout)
{
	struct rig r;
	struct bufferevent *t;
	int rc;

	rig_up(&r, 1);
	col_free(r.col);
	r.cfg.handshake_ms = 20;
	r.col = col_new(r.base, &r.cfg, &rc);
	t = child(&r);
	usleep(50000);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);
	bufferevent_free(t);
	rig_down(&r);
}

/* ---- root: dedup, gaps, BYE ------------------------------------------ */

Test(collector, root_dedup_and_gap)
{
	struct rig r;
	struct bufferevent *t;
	uint64_t acks[8];
	int n = 0;
	struct proto_jobdir_r *jr;
	struct proto_frame f;
	int rc, batches = 0;
	struct col_stats st;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 42, ""));
	uint64_t seqs[] = {1, 2, 2, 1, 4, 3};
	for (int i = 0; i < 6; i++)
		send_batch(t, 42, seqs[i], 2);
	spin(r.base);
	while (recv_m(t)) {
		cr_assert_eq(msg.type, PROTO_MSG_ACK);
		acks[n++] = msg.u.ack.seq;
	}
	cr_assert_eq(n, 6);
	cr_assert_eq(acks[0], 1);
	cr_assert_eq(acks[1], 2);
	cr_assert_eq(acks[2], 2);	/* duplicate: acknowledged again */
	cr_assert_eq(acks[3], 2);
	cr_assert_eq(acks[4], 4);	/* 3 recorded as lost */
	cr_assert_eq(acks[5], 4);	/* late 3: below the last, not stored */
	col_get_stats(r.col, &st);
	cr_assert_eq(st.stored_batches, 3);
	cr_assert_eq(st.dup_batches, 3);
	cr_assert_eq(st.gap_batches, 1);
	msg.type = PROTO_MSG_BYE;
	msg.u.bye.stream = 42;
	msg.u.bye.last_seq = 4;
	msg.u.bye.reason = 0;
	send_m(t, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 4);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);	/* closed after its own BYE */
	col_free(r.col);
	r.col = NULL;
	jr = proto_jobdir_open(r.job, &rc);
	cr_assert_not_null(jr);
	while ((rc = proto_jobdir_next(jr, &f)) == 1)
		batches += f.type == PROTO_MSG_BATCH;
	cr_assert_eq(batches, 3);
	cr_assert_str_eq(proto_jobdir_meta(jr, "collector.lost_batches"), "1");
	proto_jobdir_close_r(jr);
	/* A restarted root still knows what it stored. */
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	t = child(&r);
	cr_assert(handshake(&r, t, 42, ""));
	send_batch(t, 42, 2, 2);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.u.ack.seq, 4);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.stored_batches, 0);
	bufferevent_free(t);
	rig_down(&r);
}

/* ---- forwarding: thresholds, acks down, reconnect --------------------- */

static struct bufferevent *parent_end;

static struct bufferevent *connector(struct col *c, void *arg)
{
	struct bufferevent *p[2];
	struct event_base *b = arg;

	cr_assert_eq(bufferevent_pair_new(b, BEV_OPT_DEFER_CALLBACKS, p), 0);
	parent_end = p[1];
	bufferevent_enable(p[1], EV_READ | EV_WRITE);
	return p[0];
}

/* Play the parent's side of the handshake. */
static void parent_accept(struct rig *r)
{
	uint8_t snonce[PROTO_NONCE] = {9, 9}, cn[PROTO_NONCE];
	uint64_t id;

	spin(r->base);
	cr_assert_eq(recv_m(parent_end), 1);
	cr_assert_eq(msg.type, PROTO_MSG_HELLO);
	cr_assert_eq(msg.u.hello.role, PROTO_ROLE_COLLECTOR);
	id = msg.u.hello.id;
	memcpy(cn, msg.u.hello.nonce, PROTO_NONCE);
	msg.type = PROTO_MSG_CHALLENGE;
	msg.u.challenge.flags = 0;
	memcpy(msg.u.challenge.nonce, snonce, PROTO_NONCE);
	send_m(parent_end, &msg);
	spin(r->base);
	cr_assert_eq(recv_m(parent_end), 1);
	cr_assert_eq(msg.type, PROTO_MSG_AUTH);
	msg.type = PROTO_MSG_WELCOME;
	msg.u.welcome.flags = 0;
	msg.u.welcome.node_id = 0x99;
	proto_auth_proof(PROTO_AUTH_SERVER, "", 0, snonce, cn, id,
			 msg.u.welcome.mac);
	send_m(parent_end, &msg);
	spin(r->base);
}

/* Count BATCH frames waiting at the parent; answer PINGs. */
static int parent_batches(struct rig *r, uint64_t *last_seq)
{
	int n = 0;

	spin(r->base);
	while (recv_m(parent_end)) {
		if (msg.type == PROTO_MSG_PING) {
			uint64_t id = msg.u.ping.id, ts = msg.u.ping.t_send;

			msg.type = PROTO_MSG_PONG;
			msg.u.pong.id = id;
			msg.u.pong.t_orig = ts;
			msg.u.pong.t_recv = msg.u.pong.t_send = ts + 1;
			send_m(parent_end, &msg);
			spin(r->base);
			continue;
		}
		if (msg.type == PROTO_MSG_BATCH) {
			n++;
			if (last_seq)
				*last_seq = msg.u.batch.seq;
		}
	}
	return n;
}

static void forwarder(struct rig *r, uint32_t flush_records)
{
	int rc;

	rig_up(r, 0);
	col_free(r->col);
	r->cfg.flush_records = flush_records;
	r->cfg.flush_bytes = 1u << 30;
	r->cfg.flush_ms = 3600000;
	r->cfg.clock_rounds = 2;
	r->col = col_new(r->base, &r->cfg, &rc);
	cr_assert_not_null(r->col);
	col_set_up_connector(r->col, connector, r->base);
	parent_accept(r);
}

Test(collector, flush_threshold_records)
{
	struct rig r;
	struct bufferevent *t;
	uint64_t last = 0;

	forwarder(&r, 10);
	t = child(&r);
	cr_assert(handshake(&r, t, 7, ""));
	send_batch(t, 7, 1, 4);
	send_batch(t, 7, 2, 4);
	spin(r.base);
	cr_assert_eq(parent_batches(&r, NULL), 0, "under the threshold");
	send_batch(t, 7, 3, 4);	/* 12 records >= 10 */
	spin(r.base);
	cr_assert_eq(parent_batches(&r, &last), 3);
	cr_assert_eq(last, 3);
	/* BYE forwards at once whatever the thresholds. */
	send_batch(t, 7, 4, 1);
	msg.type = PROTO_MSG_BYE;
	msg.u.bye.stream = 7;
	msg.u.bye.last_seq = 4;
	msg.u.bye.reason = 0;
	send_m(t, &msg);
	spin(r.base);
	cr_assert_eq(parent_batches(&r, &last), 1);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, ack_travels_down_and_releases)
{
	struct rig r;
	struct bufferevent *t;
	struct col_stats st;

	forwarder(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 7, ""));
	send_batch(t, 7, 1, 4);
	send_batch(t, 7, 2, 4);
	spin(r.base);
	cr_assert_eq(parent_batches(&r, NULL), 2);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.unacked_frames, 2);
	msg.type = PROTO_MSG_ACK;
	msg.u.ack.stream = 7;
	msg.u.ack.seq = 2;
	send_m(parent_end, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 2);
	/* The queued CLOCK left with the flush; it is released once read. */
	parent_batches(&r, NULL);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.unacked_frames, 0);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, reconnect_resends_unacked_in_order)
{
	struct rig r;
	struct bufferevent *t;
	uint64_t seqs[8];
	int n = 0;
	struct col_stats st;

	forwarder(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 7, ""));
	for (uint64_t s = 1; s <= 3; s++)
		send_batch(t, 7, s, 2);
	spin(r.base);
	cr_assert_eq(parent_batches(&r, NULL), 3);
	msg.type = PROTO_MSG_ACK;
	msg.u.ack.stream = 7;
	msg.u.ack.seq = 1;
	send_m(parent_end, &msg);
	spin(r.base);
	/* The parent dies: EOF on the collector's end. */
	bufferevent_flush(parent_end, EV_WRITE, BEV_FINISHED);
	bufferevent_free(parent_end);
	spin(r.base);
	usleep(120000);	/* past the first backoff */
	spin(r.base);
	parent_accept(&r);
	spin(r.base);
	while (recv_m(parent_end))
		if (msg.type == PROTO_MSG_BATCH)
			seqs[n++] = msg.u.batch.seq;
	cr_assert_eq(n, 2);
	cr_assert_eq(seqs[0], 2);
	cr_assert_eq(seqs[1], 3);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.reconnects, 1);
	bufferevent_free(t);
	rig_down(&r);
}

/* ---- spill ------------------------------------------------------------ */

static uint64_t seen_seq[64];
static int nseen;

static void on_spilled(void *arg, const uint8_t *frame, size_t len)
{
	struct proto_frame f;
	size_t used;

	cr_assert_eq(proto_frame_decode(frame, len, 0, &f, &used), 0);
	cr_assert_eq(proto_msg_decode(&f, &msg), 0);
	seen_seq[nseen++] = msg.u.batch.seq;
}

static size_t batch_frame(uint64_t seq, uint8_t *out, size_t cap)
{
	static const uint8_t data[24 + 72];
	size_t len;

	msg.type = PROTO_MSG_BATCH;
	msg.u.batch.stream = 5;
	msg.u.batch.seq = seq;
	msg.u.batch.nrecords = 1;
	msg.u.batch.flags = 0;
	msg.u.batch.data = data;
	msg.u.batch.datalen = sizeof(data);
	cr_assert_eq(proto_msg_frame(&msg, out, cap, &len), 0);
	return len;
}

Test(collector, spill_in_order_quota_and_reopen)
{
	char dir[] = "/tmp/col-spill-XXXXXX";
	uint8_t fr[512];
	struct col_spill *s;
	uint64_t skipped = 0;
	size_t len;
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	len = batch_frame(1, fr, sizeof(fr));
	/* Room for the header and 5 frames; files of 2 frames. */
	s = col_spill_open(dir, 3 * COL_SPILL_HDR + 5 * len,
			   COL_SPILL_HDR + 2 * len, &rc);
	cr_assert_not_null(s);
	for (uint64_t q = 1; q <= 5; q++) {
		len = batch_frame(q, fr, sizeof(fr));
		cr_assert_eq(col_spill_write(s, fr, len), 0);
	}
	len = batch_frame(6, fr, sizeof(fr));
	cr_assert_eq(col_spill_write(s, fr, len), PROTO_E_FULL);
	col_spill_free(s);
	/* Another run finds the files and keeps their order. */
	s = col_spill_open(dir, 1u << 20, 2 * len, &rc);
	cr_assert_not_null(s);
	cr_assert_not(col_spill_empty(s));
	len = batch_frame(6, fr, sizeof(fr));
	cr_assert_eq(col_spill_write(s, fr, len), 0);
	nseen = 0;
	while (!col_spill_empty(s))
		cr_assert_eq(col_spill_read_file(s, on_spilled, NULL, &skipped), 0);
	cr_assert_eq(nseen, 6);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(seen_seq[i], (uint64_t)i + 1);
	cr_assert_eq(skipped, 0);
	cr_assert_eq(col_spill_bytes(s), 0);
	col_spill_free(s);
	rm_tree(dir);
}

Test(collector, spill_torn_tail_is_skipped)
{
	char dir[] = "/tmp/col-spill-XXXXXX", path[128];
	uint8_t fr[512];
	struct col_spill *s;
	uint64_t skipped = 0;
	size_t len;
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	s = col_spill_open(dir, 1u << 20, 1u << 16, &rc);
	for (uint64_t q = 1; q <= 3; q++) {
		len = batch_frame(q, fr, sizeof(fr));
		cr_assert_eq(col_spill_write(s, fr, len), 0);
	}
	col_spill_free(s);
	snprintf(path, sizeof(path), "%s/spill-0000000001.tps", dir);
	cr_assert_eq(truncate(path, COL_SPILL_HDR + 2 * len + 10), 0);
	s = col_spill_open(dir, 1u << 20, 1u << 16, &rc);
	nseen = 0;
	cr_assert_eq(col_spill_read_file(s, on_spilled, NULL, &skipped), 0);
	cr_assert_eq(nseen, 2);
	cr_assert_eq(skipped, 10);
	col_spill_free(s);
	rm_tree(dir);
}

Test(collector, forwarder_spills_when_parent_down_then_catches_up)
{
	struct rig r;
	struct bufferevent *t;
	struct col_stats st;
	char sdir[160];
	uint64_t last = 0;
	int rc, n;

	rig_up(&r, 0);
	col_free(r.col);
	snprintf(sdir, sizeof(sdir), "%s/spill", r.dir);
	r.cfg.spill_dir = sdir;
	r.cfg.mem_cap = 2048;	/* a few batches */
	r.cfg.flush_ms = 0;
	r.cfg.clock_rounds = 0;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	t = child(&r);
	cr_assert(handshake(&r, t, 7, ""));
	for (uint64_t s = 1; s <= 40; s++)
		send_batch(t, 7, s, 8);
	spin(r.base);
	col_get_stats(r.col, &st);
	cr_assert_gt(st.spilled_bytes, 0);
	cr_assert_eq(st.frames_up, 0);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	n = 0;
	for (int round = 0; round < 100 && n < 40; round++) {
		int k = parent_batches(&r, &last);

		n += k;
		if (k) {
			msg.type = PROTO_MSG_ACK;
			msg.u.ack.stream = 7;
			msg.u.ack.seq = last;
			send_m(parent_end, &msg);
		}
		spin(r.base);
	}
	cr_assert_eq(n, 40);
	cr_assert_eq(last, 40);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.spilled_bytes, 0);
	bufferevent_free(t);
	rig_down(&r);
}

/* ---- map -------------------------------------------------------------- */

Test(collector, map_put_get_del)
{
	struct col_map m;
	static int vals[3000];

	col_map_init(&m, 2000);
	for (uint64_t k = 0; k < 2000; k++) {
		cr_assert_eq(col_map_put(&m, k * 7919, &vals[k]), 0);
		cr_assert_eq(col_map_check(&m), 0);
	}
	cr_assert_eq(col_map_put(&m, 1, &vals[0]), PROTO_E_FULL);
	for (uint64_t k = 0; k < 2000; k += 2) {
		cr_assert_eq(col_map_del(&m, k * 7919), &vals[k]);
		cr_assert_eq(col_map_check(&m), 0);
	}
	for (uint64_t k = 0; k < 2000; k++)
		cr_assert_eq(col_map_get(&m, k * 7919),
			     k % 2 ? &vals[k] : NULL);
	col_map_clear(&m);
}

/* ---- security: proofs, handshake limits, TLS configuration ------------- */

static void rig_secret(struct rig *r, const char *secret)
{
	int rc;

	rig_up(r, 1);
	col_free(r->col);
	r->cfg.secret = secret;
	r->cfg.secretlen = strlen(secret);
	r->col = col_new(r->base, &r->cfg, &rc);
	cr_assert_not_null(r->col);
}

Test(collector, missing_secret_refused)
{
	struct rig r;
	struct bufferevent *t;
	struct col_stats st;

	rig_secret(&r, "job-secret");
	t = child(&r);
	/* a client without the secret proves with the empty key */
	cr_assert_not(handshake(&r, t, 5, ""));
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.rejected, 1);
	cr_assert_eq(st.children, 0);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, challenge_flags_secret)
{
	struct rig r;
	struct bufferevent *t;

	rig_secret(&r, "k");
	t = child(&r);
	hello(t, PROTO_ROLE_SENSOR, 6);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	cr_assert(msg.u.challenge.flags & PROTO_AUTH_REQUIRED);
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, replayed_proof_refused)
{
	struct rig r;
	struct bufferevent *first, *second;
	uint8_t snonce[PROTO_NONCE], auth[PROTO_MAC];

	rig_secret(&r, "job-secret");
	first = child(&r);
	second = child(&r);
	/* the recorded exchange: HELLO, CHALLENGE, AUTH, WELCOME */
	hello(first, PROTO_ROLE_SENSOR, 11);
	spin(r.base);
	cr_assert_eq(recv_m(first), 1);
	memcpy(snonce, msg.u.challenge.nonce, PROTO_NONCE);
	proto_auth_proof(PROTO_AUTH_CLIENT, "job-secret", 10, snonce, cnonce,
			 11, auth);
	msg.type = PROTO_MSG_AUTH;
	memcpy(msg.u.auth.mac, auth, PROTO_MAC);
	send_m(first, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(first), 1);
	cr_assert_eq(msg.type, PROTO_MSG_WELCOME);
	/* replayed on a new connection: the server nonce is fresh */
	hello(second, PROTO_ROLE_SENSOR, 11);
	spin(r.base);
	cr_assert_eq(recv_m(second), 1);
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	cr_assert_neq(memcmp(msg.u.challenge.nonce, snonce, PROTO_NONCE), 0);
	msg.type = PROTO_MSG_AUTH;
	memcpy(msg.u.auth.mac, auth, PROTO_MAC);
	send_m(second, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(second), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);	/* the first one still streams */
	bufferevent_free(first);
	bufferevent_free(second);
	rig_down(&r);
}

Test(collector, handshake_frames_are_small)
{
	struct rig r;
	struct bufferevent *t, *ok;
	uint8_t hdr[PROTO_FRAME_HDR];
	static uint8_t payload[4096];

	/* frame_max is 16 MiB, but before WELCOME a 4 KiB frame is refused
	 * as soon as its header is read: a stranger cannot make the
	 * collector buffer a large frame */
	rig_up(&r, 1);
	t = child(&r);
	ok = child(&r);
	cr_assert_eq(proto_frame_header(PROTO_MSG_HELLO, payload,
					sizeof(payload), hdr), 0);
	bufferevent_write(t, hdr, sizeof(hdr));
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_TOOBIG);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	/* after WELCOME a large frame is fine (a 4 KiB BATCH here) */
	cr_assert(handshake(&r, ok, 12, ""));
	send_batch(ok, 12, 1, 64);
	spin(r.base);
	cr_assert_eq(recv_m(ok), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	bufferevent_free(t);
	bufferevent_free(ok);
	rig_down(&r);
}

Test(collector, status_client_cannot_send_data)
{
	struct rig r;
	struct bufferevent *t;

	rig_up(&r, 1);
	t = child(&r);
	hello(t, PROTO_ROLE_STATUS, 13);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	msg.type = PROTO_MSG_AUTH;
	{
		uint8_t sn[PROTO_NONCE];

		memcpy(sn, msg.u.challenge.nonce, PROTO_NONCE);
		proto_auth_proof(PROTO_AUTH_CLIENT, "", 0, sn, cnonce, 13,
				 msg.u.auth.mac);
	}
	send_m(t, &msg);
	spin(r.base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_WELCOME);
	/* it gets its STATS and is closed; nothing it sends is stored */
	send_batch(t, 13, 1, 1);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);
	{
		struct col_stats st;

		col_get_stats(r.col, &st);
		cr_assert_eq(st.stored_batches, 0);
	}
	bufferevent_free(t);
	rig_down(&r);
}

Test(collector, tls_configuration_checked)
{
	struct event_base *b = event_base_new();
	struct col_config cfg;
	int rc;

	col_log_level = -1;
	col_config_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	cfg.output = NULL;
	cfg.parent = "127.0.0.1:9";
	cfg.tls_cert = "/nonexistent/x.crt";	/* alone: incomplete */
	cr_assert_null(col_new(b, &cfg, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	cfg.tls_cert = NULL;
	cfg.tls_listen = "127.0.0.1:0";		/* a TLS port without files */
	cr_assert_null(col_new(b, &cfg, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	cfg.tls_cert = "/nonexistent/x.crt";
	cfg.tls_key = "/nonexistent/x.key";
	cfg.tls_ca = "/nonexistent/ca.crt";
	cr_assert_null(col_new(b, &cfg, &rc));	/* unreadable files */
	cr_assert_eq(rc, PROTO_E_IO);
	col_log_level = COL_LOG_ERROR;
	event_base_free(b);
}

Test(collector, handshake_flood_drops_the_oldest)
{
	struct rig r;
	enum { N = 1100 };
	static struct bufferevent *t[N];
	struct bufferevent *late;
	struct col_stats st;

	rig_up(&r, 1);
	col_log_level = -1;
	for (int i = 0; i < N; i++)
		t[i] = child(&r);	/* each stalls before HELLO */
	cr_assert_eq(nconns(&r), 1024);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.rejected, N - 1024);
	/* a real client still gets through */
	late = child(&r);
	cr_assert(handshake(&r, late, 99, ""));
	col_log_level = COL_LOG_ERROR;
	for (int i = 0; i < N; i++)
		bufferevent_free(t[i]);
	bufferevent_free(late);
	rig_down(&r);
}
