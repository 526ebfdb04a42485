/*
 * tests/collector/test_conn.c - collector/conn.c: the handshake state machine and its
 * faults (bad proofs, wrong order, garbage, oversized frames, timeouts), the
 * job secret, replayed proofs, status clients, handshake floods.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/auth.h"
#include "tests/collector/rig.h"

Test(conn, handshake_good_and_ping)
{
	struct rig r;
	struct bufferevent *t;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 77, ""));
	msg.type = PROTO_MSG_PING;
	msg.u.ping.id = 9;
	msg.u.ping.t_send = 5;
	roundtrip(&r, t, t, PROTO_MSG_PONG);
	cr_assert_eq(msg.u.pong.id, 9);
	cr_assert_eq(msg.u.pong.t_orig, 5);
	cr_assert(msg.u.pong.t_recv <= msg.u.pong.t_send);
	cr_assert_eq(nconns(&r), 1);
	bufferevent_free(t);
	rig_down(&r);
}

Test(conn, handshake_bad_proof_closes_only_that_one)
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

Test(conn, wrong_order_is_state_error)
{
	struct rig r;
	struct bufferevent *t, *other;

	rig_up(&r, 1);
	other = child(&r);
	t = child(&r);
	send_batch(t, 5, 1, 1);	/* before HELLO */
	expect_error(&r, t, PROTO_E_STATE);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	cr_assert(handshake(&r, other, 3, ""));
	bufferevent_free(t);
	bufferevent_free(other);
	rig_down(&r);
}

Test(conn, auth_twice_and_hello_after_welcome)
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

Test(conn, garbage_truncated_and_oversized)
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

Test(conn, oversized_length_closes)
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
	expect_error(&r, t, PROTO_E_TOOBIG);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);
	cr_assert(handshake(&r, ok, 9, ""));
	bufferevent_free(t);
	bufferevent_free(ok);
	rig_down(&r);
}

Test(conn, handshake_timeout)
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
	{	/* not a refusal: no frame came (issue 33) */
		struct col_stats st;

		col_get_stats(r.col, &st);
		cr_assert_eq(st.rejected, 0);
		cr_assert_eq(st.abandoned, 1);
	}
	bufferevent_free(t);
	rig_down(&r);
}

/* A process that ends (or execs) before its handshake finished, a probe:
 * the connection carried no event and was refused by no one. It is not
 * counted as rejected (the summary and the report said "1 connection
 * refused" for it), but as abandoned; nor is one closed inside its HELLO.
 * A refusal names its reason (issue 33). */
Test(conn, closed_during_handshake_is_not_a_refusal)
{
	struct rig r;
	struct bufferevent *t;
	struct col_stats st;
	uint8_t half[8] = {0};

	rig_up(&r, 1);
	t = child(&r);
	hello(t, PROTO_ROLE_SENSOR, 7);
	spin(r.base);
	cr_assert(recv_m(t));
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	bufferevent_flush(t, EV_WRITE, BEV_FINISHED);	/* gone before its AUTH */
	spin(r.base);
	bufferevent_free(t);
	t = child(&r);
	bufferevent_write(t, half, sizeof(half));	/* inside a frame */
	spin(r.base);
	bufferevent_flush(t, EV_WRITE, BEV_FINISHED);
	spin(r.base);
	bufferevent_free(t);
	cr_assert_eq(nconns(&r), 0);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.rejected, 0);
	cr_assert_eq(st.abandoned, 2);
	rig_down(&r);
}

/* A sensor closes right after its BYE (docs/modules/collector.md): a write
 * that fails on its streaming connection (the reset an ACK provokes once
 * its process is gone) stops the writing only: what it sent is still read
 * and stored, no ACK goes to it, and its EOF closes the connection. The
 * failure is the bufferevent's event callback called as libevent does. */
Test(conn, write_failure_keeps_reading_a_sensor)
{
	struct rig r;
	struct bufferevent *t, *mine;
	bufferevent_event_cb ecb;
	struct col_stats st;
	void *arg;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 77, ""));
	send_batch(t, 77, 1, 10);
	spin(r.base);
	cr_assert(recv_m(t));
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	mine = bufferevent_pair_get_partner(t);
	bufferevent_getcb(mine, NULL, NULL, &ecb, &arg);
	ecb(mine, BEV_EVENT_WRITING | BEV_EVENT_ERROR, arg);
	cr_assert_eq(nconns(&r), 1);
	send_batch(t, 77, 2, 20);
	msg.type = PROTO_MSG_BYE;
	msg.u.bye.stream = 77;
	msg.u.bye.last_seq = 2;
	msg.u.bye.reason = 0;
	send_m(t, &msg);
	spin(r.base);
	cr_assert_not(recv_m(t), "an ACK went to a dead connection");
	col_get_stats(r.col, &st);
	cr_assert_eq(st.batches_in, 2);
	cr_assert_eq(st.events_in, 30);
	bufferevent_flush(t, EV_WRITE, BEV_FINISHED);
	spin(r.base);
	bufferevent_free(t);
	spin(r.base);
	cr_assert_eq(nconns(&r), 0);
	rig_down(&r);
}

/* A drain waits for bytes a sensor left unread (col_conn_unread): a BATCH
 * written but not yet processed is seen, then taken. */
Test(conn, unread_sensor_bytes_are_seen)
{
	struct rig r;
	struct bufferevent *t;

	rig_up(&r, 1);
	t = child(&r);
	cr_assert(handshake(&r, t, 78, ""));
	cr_assert_not(col_conn_unread(r.col));
	send_batch(t, 78, 1, 5);
	cr_assert(col_conn_unread(r.col));
	spin(r.base);
	cr_assert_not(col_conn_unread(r.col));
	bufferevent_free(t);
	rig_down(&r);
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

Test(conn, missing_secret_refused)
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
	cr_assert_eq(st.rejected_secret, 1);
	cr_assert_eq(st.rejected_key + st.rejected_version, 0);
	cr_assert_eq(st.abandoned, 0);
	cr_assert_eq(st.children, 0);
	bufferevent_free(t);
	rig_down(&r);
}

Test(conn, challenge_flags_secret)
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

Test(conn, replayed_proof_refused)
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
	{
		uint8_t v[PROTO_MAC];

		rig_verifier(11, 0, v);
		msg.type = PROTO_MSG_KEY;
		proto_key_claim(&msg.u.key, v, 11, snonce, cnonce, 0);
	}
	roundtrip(&r, first, first, PROTO_MSG_WELCOME);
	/* replayed on a new connection: the server nonce is fresh */
	hello(second, PROTO_ROLE_SENSOR, 11);
	spin(r.base);
	cr_assert_eq(recv_m(second), 1);
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	cr_assert_neq(memcmp(msg.u.challenge.nonce, snonce, PROTO_NONCE), 0);
	msg.type = PROTO_MSG_AUTH;
	memcpy(msg.u.auth.mac, auth, PROTO_MAC);
	roundtrip(&r, second, second, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	spin(r.base);
	cr_assert_eq(nconns(&r), 1);	/* the first one still streams */
	bufferevent_free(first);
	bufferevent_free(second);
	rig_down(&r);
}

Test(conn, handshake_frames_are_small)
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
	expect_error(&r, t, PROTO_E_TOOBIG);
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

Test(conn, status_client_cannot_send_data)
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
	roundtrip(&r, t, t, PROTO_MSG_WELCOME);
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

Test(conn, handshake_flood_drops_the_oldest)
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
	cr_assert_eq(st.rejected, 0);
	cr_assert_eq(st.abandoned, N - 1024);
	/* a real client still gets through */
	late = child(&r);
	cr_assert(handshake(&r, late, 99, ""));
	col_log_level = COL_LOG_ERROR;
	for (int i = 0; i < N; i++)
		bufferevent_free(t[i]);
	bufferevent_free(late);
	rig_down(&r);
}
