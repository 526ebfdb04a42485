/*
 * tests/collector/test_up.c - collector/up.c: flush thresholds, acknowledgements down the
 * tree, reconnection, spilling while the parent is away.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/auth.h"
#include "tests/collector/rig.h"

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
	roundtrip(r, parent_end, parent_end, PROTO_MSG_AUTH);
	msg.type = PROTO_MSG_WELCOME;
	msg.u.welcome.flags = 0;
	msg.u.welcome.node_id = 0x99;
	proto_auth_proof(PROTO_AUTH_SERVER, "", 0, snonce, cn, id,
			 msg.u.welcome.mac);
	send_m(parent_end, &msg);
	spin(r->base);
}

/* msg is a PING the parent received: answer it; 1 when it was one. */
static int parent_pong(struct rig *r)
{
	uint64_t id = msg.u.ping.id, ts = msg.u.ping.t_send;

	if (msg.type != PROTO_MSG_PING)
		return 0;
	msg.type = PROTO_MSG_PONG;
	msg.u.pong.id = id;
	msg.u.pong.t_orig = ts;
	msg.u.pong.t_recv = msg.u.pong.t_send = ts + 1;
	send_m(parent_end, &msg);
	spin(r->base);
	return 1;
}

static struct proto_loss parent_loss;	/* the last LOSS the parent got */
static int parent_nloss;
static uint64_t parent_streams;	/* bit (stream % 64) of each BATCH got */

/* msg is a frame the parent got: note a BATCH's stream. */
static void parent_saw(void)
{
	if (msg.type == PROTO_MSG_BATCH)
		parent_streams |= 1ull << (msg.u.batch.stream % 64);
}

/* Count BATCH frames waiting at the parent; answer PINGs; keep LOSSes. */
static int parent_batches(struct rig *r, uint64_t *last_seq)
{
	int n = 0;

	spin(r->base);
	while (recv_m(parent_end)) {
		if (parent_pong(r))
			continue;
		parent_saw();
		if (msg.type == PROTO_MSG_LOSS) {
			parent_loss = msg.u.loss;
			parent_nloss++;
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

Test(up, flush_threshold_records)
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

Test(up, ack_travels_down_and_releases)
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
	roundtrip(&r, parent_end, t, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 2);
	/* The queued CLOCK left with the flush; it is released once read. */
	parent_batches(&r, NULL);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.unacked_frames, 0);
	bufferevent_free(t);
	rig_down(&r);
}

Test(up, reconnect_resends_unacked_in_order)
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


/* A collector without a parent, spilling to DIR/spill over mem_cap
 * bytes in memory, flushing every frame at once. */
static void spiller(struct rig *r, uint64_t mem_cap)
{
	char sdir[160];
	int rc;

	rig_up(r, 0);
	col_free(r->col);
	snprintf(sdir, sizeof(sdir), "%s/spill", r->dir);
	r->cfg.spill_dir = strdup(sdir);
	r->cfg.mem_cap = mem_cap;
	r->cfg.flush_ms = 0;
	r->cfg.clock_rounds = 0;
	r->col = col_new(r->base, &r->cfg, &rc);
	cr_assert_not_null(r->col);
}

/* The parent takes the batches of stream that come, acknowledging each
 * round's last, until it has seen seq want or nothing comes and nothing
 * waits; returns their count. */
static int parent_takes(struct rig *r, uint64_t stream, uint64_t want,
			uint64_t *last)
{
	int n = 0;

	for (int round = 0; round < 1000 && *last < want; round++) {
		int k = parent_batches(r, last);

		n += k;
		if (k) {
			msg.type = PROTO_MSG_ACK;
			msg.u.ack.stream = stream;
			msg.u.ack.seq = *last;
			send_m(parent_end, &msg);
		}
		spin(r->base);
		if (!k && col_up_idle(r->col))
			break;
	}
	return n;
}

/* A forwarder whose parent is away: batches 1..40 spilled (memory cap of
 * a few batches). With keep, the collector then dies with the newest
 * spill file cut inside its last batch (after its headers), and a new one
 * is started on the same spill directory. Then the parent comes: every
 * spilled batch reaches it in order, and the cut one as a LOSS naming it
 * with its events (the batches that were still in memory are gone with
 * the first collector: their sensor resends them). Returns the batches
 * forwarded. */
static int spill_then_catch_up(struct rig *r, int cut, uint64_t *last)
{
	struct bufferevent *t;
	char sdir[160];
	int rc, n = 0;

	spiller(r, 2048);	/* a few batches */
	snprintf(sdir, sizeof(sdir), "%s", r->cfg.spill_dir);
	t = child(r);
	cr_assert(handshake(r, t, 7, ""));
	for (uint64_t s = 1; s <= 40; s++)
		send_batch(t, 7, s, 8);
	spin(r->base);
	cr_assert_gt(col_spill_bytes(r->col->spill), 0);
	cr_assert_eq(r->col->st.frames_up, 0);
	if (cut) {
		struct dirent *de;
		DIR *d = opendir(sdir);
		char newest[256] = "", path[512];
		struct stat sb;

		bufferevent_free(t);
		t = NULL;
		col_free(r->col);	/* its files stay */
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "spill-", 6) &&
			    strcmp(de->d_name, newest) > 0)
				snprintf(newest, sizeof(newest), "%s", de->d_name);
		closedir(d);
		snprintf(path, sizeof(path), "%s/%s", sdir, newest);
		cr_assert_eq(stat(path, &sb), 0);
		cr_assert_eq(truncate(path, sb.st_size - 10), 0);
		r->col = col_new(r->base, &r->cfg, &rc);
		cr_assert_not_null(r->col);
	}
	col_set_up_connector(r->col, connector, r->base);
	parent_accept(r);
	parent_nloss = 0;
	for (int round = 0; round < 100 && *last < 40 && !parent_nloss;
	     round++) {
		int k = parent_batches(r, last);

		n += k;
		if (k) {
			msg.type = PROTO_MSG_ACK;
			msg.u.ack.stream = 7;
			msg.u.ack.seq = *last;
			send_m(parent_end, &msg);
		}
		spin(r->base);
	}
	cr_assert_eq(col_spill_bytes(r->col->spill), 0);
	if (t)
		bufferevent_free(t);
	free((char *)r->cfg.spill_dir);
	r->cfg.spill_dir = NULL;
	return n;
}

Test(up, forwarder_spills_when_parent_down_then_catches_up)
{
	struct rig r;
	uint64_t last = 0;

	cr_assert_eq(spill_then_catch_up(&r, 0, &last), 40);
	cr_assert_eq(last, 40);
	cr_assert_eq(parent_nloss, 0);
	rig_down(&r);
}

/* The spill's torn tail: the batch it held is said lost with its 8 events
 * (not a gap of unknown size at the root), counted once. */
Test(up, torn_spill_tail_is_a_counted_loss)
{
	struct rig r;
	struct col_stats st;
	uint64_t last = 0;

	cr_assert_gt(spill_then_catch_up(&r, 1, &last), 0);
	cr_assert_eq(last, 39);
	cr_assert_eq(parent_nloss, 1);
	cr_assert_eq(parent_loss.stream, 7);
	cr_assert_eq(parent_loss.first_seq, 40);
	cr_assert_eq(parent_loss.last_seq, 40);
	cr_assert_eq(parent_loss.dropped, 8);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.dropped_batches, 1);
	cr_assert_eq(st.dropped_events, 8);
	rig_down(&r);
}

/* docs/SECURITY.md, "Limits": with no clock rounds and no STATS the link
 * still sends a PING (id 0) every keepalive_ms, so that the parent's idle
 * timeout does not close it; its PONG is no clock sample. */
Test(up, keepalive_without_clock_or_stats)
{
	struct rig r;
	int rc, pings = 0;

	rig_up(&r, 0);
	col_free(r.col);
	r.cfg.clock_period_ms = 0;
	r.cfg.stats_period_ms = 0;
	r.cfg.clock_rounds = 0;
	r.cfg.keepalive_ms = 20;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	for (int i = 0; i < 100 && pings < 2; i++) {
		usleep(10000);
		spin(r.base);
		while (recv_m(parent_end))
			if (msg.type == PROTO_MSG_PING) {
				cr_assert_eq(msg.u.ping.id, 0);
				pings++;
				parent_pong(&r);
			}
	}
	cr_assert_eq(pings, 2);
	cr_assert_eq(r.col->clock.msg ? r.col->clock.msg->u.clock.n : 0, 0);
	rig_down(&r);
}

/* The next KEY the parent received (PINGs answered): 1 with msg. */
static int parent_key(struct rig *r)
{
	spin(r->base);
	while (recv_m(parent_end)) {
		if (parent_pong(r))
			continue;
		parent_saw();
		if (msg.type == PROTO_MSG_KEY)
			return 1;
	}
	return 0;
}

/* The parent answers the KEY in msg. */
static void parent_verdict(struct rig *r, uint32_t result)
{
	struct proto_key k = msg.u.key;

	msg.type = PROTO_MSG_VERDICT;
	msg.u.verdict.stream = k.stream;
	msg.u.verdict.result = result;
	memcpy(msg.u.verdict.server_nonce, k.server_nonce, PROTO_NONCE);
	send_m(parent_end, &msg);
	spin(r->base);
}

/* docs/PROTOCOL.md, "Stream keys": a collector that does not know a
 * stream (new, or the collector was restarted since it began) passes the
 * sensor's KEY up and sends WELCOME only on the parent's yes; then it
 * knows the verifier and refuses a forger itself; a no is a refusal. */
Test(up, key_of_an_unknown_stream_asks_the_parent)
{
	struct rig r;
	struct bufferevent *t, *forger, *other;
	struct col_stats st;

	forwarder(&r, 1);
	t = child(&r);
	cr_assert_not(handshake_key(&r, t, 7, "", 0));	/* no answer yet */
	cr_assert(parent_key(&r));
	cr_assert_eq(msg.u.key.stream, 7);
	cr_assert(msg.u.key.flags & PROTO_KEY_VERIFIER);
	parent_verdict(&r, PROTO_VERDICT_OK);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_WELCOME);
	cr_assert(col_stream_get(r.col, 7, 0)->has_verifier);
	forger = child(&r);
	cr_assert_not(handshake_key(&r, forger, 7, "", 1));
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	cr_assert_not(parent_key(&r), "decided here, not above");
	other = child(&r);
	cr_assert_not(handshake_key(&r, other, 8, "", 1));
	cr_assert(parent_key(&r));
	parent_verdict(&r, PROTO_VERDICT_REFUSED);
	cr_assert_eq(recv_m(other), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	send_batch(t, 7, 1, 2);
	spin(r.base);
	cr_assert_eq(parent_batches(&r, NULL), 1);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.refused, 2);
	bufferevent_free(t);
	bufferevent_free(forger);
	bufferevent_free(other);
	rig_down(&r);
}

/* A sensor that says its stream is new is taken on its word while the
 * parent is away (the node buffers for it), and its KEY goes up with the
 * link; its frames are held back until the answer: a yes sends them; a no
 * closes the connection and drops every frame of that stream held here,
 * so none reaches the parent and nothing waits for an ACK, even when the
 * connection is gone by then. A claim without that word waits for the
 * link and the parent's answer. */
Test(up, first_key_taken_while_the_parent_is_away)
{
	struct rig r;
	struct bufferevent *t, *forger, *waits, *gone;
	uint64_t last = 0;
	int keys = 0;

	rig_up(&r, 0);
	waits = child(&r);
	cr_assert_not(handshake_key(&r, waits, 11, "", 0));
	t = child(&r);
	cr_assert(handshake_key(&r, t, 9, "", RIG_FIRST));
	forger = child(&r);
	cr_assert(handshake_key(&r, forger, 10, "", RIG_FIRST | RIG_FORGED));
	gone = child(&r);
	cr_assert(handshake_key(&r, gone, 12, "", RIG_FIRST | RIG_FORGED));
	for (uint64_t q = 1; q <= 3; q++) {
		send_batch(t, 9, q, 2);
		send_batch(forger, 10, q, 2);
		send_batch(gone, 12, q, 2);
	}
	spin(r.base);
	bufferevent_free(gone);
	spin(r.base);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	parent_streams = 0;
	while (parent_key(&r)) {
		keys++;
		parent_verdict(&r, msg.u.key.stream == 10 ||
			       msg.u.key.stream == 12 ?
			       PROTO_VERDICT_REFUSED : PROTO_VERDICT_OK);
	}
	cr_assert_eq(keys, 4);
	cr_assert_eq(recv_m(waits), 1);
	cr_assert_eq(msg.type, PROTO_MSG_WELCOME);
	cr_assert_eq(recv_m(forger), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	cr_assert_not(col_stream_get(r.col, 10, 0)->has_verifier);
	cr_assert_null(col_stream_get(r.col, 9, 0)->claim, "not settled");
	msg.type = PROTO_MSG_ACK;
	msg.u.ack.stream = 9;
	msg.u.ack.seq = 3;
	send_m(parent_end, &msg);
	spin(r.base);
	parent_batches(&r, &last);
	cr_assert(col_up_idle(r.col), "streams 10, 12: frames still held");
	cr_assert_eq(parent_streams, 1ull << 9, "batches of %llx went up",
		     (unsigned long long)parent_streams);
	bufferevent_free(t);
	bufferevent_free(forger);
	bufferevent_free(waits);
	rig_down(&r);
}

/* Frames held for a claim taken on its word count against --mem-cap: with
 * the parent away from the start a FIRST sensor's batches spill; when the
 * link comes, its KEY goes up and every frame read back is held until the
 * VERDICT. Before, the spill was read file after file into memory meanwhile
 * (the refill's gate saw no queue and nothing unacknowledged). */
Test(up, held_frames_bound_the_refill)
{
	struct rig r;
	struct bufferevent *t;
	uint64_t last = 0;

	spiller(&r, 2048);	/* a few batches */
	t = child(&r);
	cr_assert(handshake_key(&r, t, 9, "", RIG_FIRST));
	for (uint64_t s = 1; s <= 200; s++)
		send_batch(t, 9, s, 8);
	spin(r.base);
	cr_assert_gt(col_spill_bytes(r.col->spill), 4 * r.cfg.mem_cap);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	cr_assert(parent_key(&r));
	spin(r.base);
	cr_assert_leq(r.col->mem_used, 2 * r.cfg.mem_cap,
		      "%llu bytes in memory while the VERDICT is awaited",
		      (unsigned long long)r.col->mem_used);
	cr_assert_gt(col_spill_bytes(r.col->spill), 0);
	parent_verdict(&r, PROTO_VERDICT_OK);
	cr_assert_eq(parent_takes(&r, 9, 200, &last), 200);
	cr_assert_eq(last, 200);
	cr_assert_eq(col_spill_bytes(r.col->spill), 0);
	bufferevent_free(t);
	free((char *)r.cfg.spill_dir);
	r.cfg.spill_dir = NULL;
	rig_down(&r);
}

/* A claim that says its stream is new is taken on its word only when the
 * stream is unknown here. A gateway that knows stream 20 only through a
 * child collector's link (no verifier) and a restarted leaf where the real
 * sensor of 21 waits for its VERDICT both pass a forger's FIRST claim up
 * and wait: the forger is refused, the stream keeps its owner and the
 * real sensor is welcomed. Before, the forger was welcomed at once with
 * its own verifier registered (and the real sensor of 21 refused). */
Test(up, first_key_of_a_known_stream_waits_for_the_verdict)
{
	struct rig r;
	struct bufferevent *real, *forger20, *forger21;
	struct col_stream *s;
	int keys = 0;

	rig_up(&r, 0);
	s = col_stream_get(r.col, 20, 1);	/* as through a child link */
	cr_assert_not_null(s);
	real = child(&r);
	cr_assert_not(handshake_key(&r, real, 21, "", 0));
	forger21 = child(&r);
	cr_assert_not(handshake_key(&r, forger21, 21, "",
				    RIG_FIRST | RIG_FORGED));
	forger20 = child(&r);
	cr_assert_not(handshake_key(&r, forger20, 20, "",
				    RIG_FIRST | RIG_FORGED));
	cr_assert_not(col_stream_get(r.col, 20, 0)->has_verifier);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	while (parent_key(&r)) {
		uint8_t v[PROTO_MAC];

		keys++;
		rig_verifier(msg.u.key.stream, 0, v);
		parent_verdict(&r, proto_key_check(&msg.u.key, v) ?
			       PROTO_VERDICT_OK : PROTO_VERDICT_REFUSED);
	}
	cr_assert_eq(keys, 3);
	expect_error(&r, forger21, PROTO_E_AUTH);
	expect_error(&r, forger20, PROTO_E_AUTH);
	cr_assert_eq(recv_m(real), 1);
	cr_assert_eq(msg.type, PROTO_MSG_WELCOME);
	cr_assert_not(col_stream_get(r.col, 20, 0)->has_verifier);
	bufferevent_free(real);
	bufferevent_free(forger20);
	bufferevent_free(forger21);
	rig_down(&r);
}

/* A refused claim drops its own frames only. A collector restarted on its
 * spill directory holds the real sensor's batches of stream 30 it does
 * not know any more; a forger says 30 is new and is taken on its word,
 * sends 11..13 (spilled too), and is refused above: the real batches go
 * up, the forger's do not. Before, every frame of 30 was dropped, spilled
 * ones for good. */
Test(up, refused_claim_drops_only_its_frames)
{
	struct rig r;
	struct bufferevent *t, *forger;
	uint64_t last = 0;
	int rc, n, in_mem = 0;

	spiller(&r, 256);	/* nearly everything spills */
	t = child(&r);
	cr_assert(handshake(&r, t, 30, ""));
	for (uint64_t s = 1; s <= 10; s++)
		send_batch(t, 30, s, 8);
	spin(r.base);
	bufferevent_free(t);
	spin(r.base);
	for (struct col_frame *f = r.col->q_head; f; f = f->next)
		in_mem += f->type == PROTO_MSG_BATCH;	/* gone with it */
	col_free(r.col);	/* restarted: its spill stays */
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	cr_assert_gt(col_spill_bytes(r.col->spill), 0);
	forger = child(&r);
	cr_assert(handshake_key(&r, forger, 30, "", RIG_FIRST | RIG_FORGED));
	for (uint64_t s = 11; s <= 13; s++)
		send_batch(forger, 30, s, 8);
	spin(r.base);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	cr_assert(parent_key(&r));
	cr_assert_eq(msg.u.key.stream, 30);
	parent_verdict(&r, PROTO_VERDICT_REFUSED);
	n = parent_takes(&r, 30, 13, &last);
	cr_assert_gt(10 - in_mem, 0);
	cr_assert_eq(n, 10 - in_mem, "%d batches of 30 went up", n);
	cr_assert_eq(last, 10);
	cr_assert(col_up_idle(r.col));
	bufferevent_free(forger);
	free((char *)r.cfg.spill_dir);
	r.cfg.spill_dir = NULL;
	rig_down(&r);
}

/* The sensors' spool (--spool, issue 33) on a node: a file taken stays
 * until the parent acknowledged each of its batches and its BYE (one ACK
 * each); killed before that, the node would take it again at its next
 * start instead of losing it. */
Test(up, spool_kept_until_acknowledged)
{
	struct rig r;
	char spool[128], path[160];
	uint64_t seqs[] = {1, 2}, acks[] = {1, 2, 2};
	int rc, batches = 0, byes = 0;

	rig_up(&r, 0);
	col_free(r.col);
	snprintf(spool, sizeof(spool), "%s/spool", r.dir);
	cr_assert_eq(mkdir(spool, 0700), 0);
	snprintf(path, sizeof(path), "%s/000000000000002a.tps", spool);
	rig_spool_file(path, 42, seqs, 2, 1);
	r.cfg.spool = spool;
	r.cfg.clock_rounds = 2;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	spin(r.base);
	while (recv_m(parent_end)) {
		if (parent_pong(&r))
			continue;
		batches += msg.type == PROTO_MSG_BATCH;
		byes += msg.type == PROTO_MSG_BYE;
	}
	cr_assert_eq(batches, 2);
	cr_assert_eq(byes, 1);
	cr_assert_eq(access(path, F_OK), 0, "removed before any ACK");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(access(path, F_OK), 0, "removed after %d ACKs", i);
		msg.type = PROTO_MSG_ACK;
		msg.u.ack.stream = 42;
		msg.u.ack.seq = acks[i];
		send_m(parent_end, &msg);
		spin(r.base);
	}
	cr_assert_eq(access(path, F_OK), -1, "acknowledged, still there");
	rig_down(&r);
}

/* A spool file with no BATCH and no BYE (a sensor's META and LOSS only
 * would be one; here an empty one) waits for no ACK: removed when a drain
 * ends with nothing left unsent; a file still waiting for ACKs is kept. */
static int drained;
static void drain_done(struct col *c, int rc, void *arg)
{
	drained = 1;
}

Test(up, spool_without_acks_removed_at_drain)
{
	struct rig r;
	char spool[128], empty[160], waits[160];
	uint64_t seqs[] = {1};
	int rc;

	rig_up(&r, 0);
	col_free(r.col);
	snprintf(spool, sizeof(spool), "%s/spool", r.dir);
	cr_assert_eq(mkdir(spool, 0700), 0);
	snprintf(empty, sizeof(empty), "%s/0000000000000007.tps", spool);
	rig_spool_file(empty, 7, NULL, 0, 0);
	snprintf(waits, sizeof(waits), "%s/0000000000000008.tps", spool);
	rig_spool_file(waits, 8, seqs, 1, 1);
	r.cfg.spool = spool;
	r.cfg.clock_rounds = 0;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	col_set_up_connector(r.col, connector, r.base);
	parent_accept(&r);
	cr_assert_eq(parent_batches(&r, NULL), 1);
	msg.type = PROTO_MSG_ACK;	/* the batch's; the BYE's never comes */
	msg.u.ack.stream = 8;
	msg.u.ack.seq = 1;
	send_m(parent_end, &msg);
	spin(r.base);
	cr_assert_eq(access(empty, F_OK), 0);
	drained = 0;
	cr_assert_eq(col_drain(r.col, drain_done, NULL), 0);
	for (int i = 0; i < 100 && !drained; i++) {
		parent_batches(&r, NULL);
		spin(r.base);
	}
	cr_assert(drained);
	cr_assert_eq(access(empty, F_OK), -1, "drained, still there");
	cr_assert_eq(access(waits, F_OK), 0, "removed without its BYE's ACK");
	rig_down(&r);
}
