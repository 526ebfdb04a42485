/*
 * tests/collector/test_root.c - collector/root.c: deduplication by (stream, seq), gaps,
 * streams bound to their connection and the seq window (conn.c),
 * BYE.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/auth.h"
#include "proto/jobdir.h"
#include "tests/collector/rig.h"

Test(root, root_dedup_and_gap)
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
	roundtrip(&r, t, t, PROTO_MSG_ACK);
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

/* A sensor of stream id on a new child of r that stored its batch 1. */
static struct bufferevent *streaming(struct rig *r, uint64_t id)
{
	struct bufferevent *t = child(r);

	cr_assert(handshake(r, t, id, ""));
	send_batch(t, id, 1, 2);
	spin(r->base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.u.ack.seq, 1);
	return t;
}

/* docs/SECURITY.md, "Streams": a sensor speaks only for its own stream, a
 * live stream is not taken by a second connection without its key, a seq
 * far ahead is refused; each refusal counted,
 * the real stream unharmed. */
Test(root, streams_bound_and_seq_window)
{
	struct rig r;
	struct bufferevent *a, *b, *c, *d;
	struct col_stats st;

	rig_up(&r, 1);
	a = streaming(&r, 42);
	/* another sensor sends a batch of stream 42 */
	b = child(&r);
	cr_assert(handshake(&r, b, 43, ""));
	send_batch(b, 42, 1000000000, 1);
	expect_error(&r, b, PROTO_E_AUTH);
	/* a second connection of stream 42 without its key */
	c = child(&r);
	cr_assert(!handshake_key(&r, c, 42, "", 1));
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
	/* a fresh stream starting far ahead */
	d = child(&r);
	cr_assert(handshake(&r, d, 44, ""));
	send_batch(d, 44, 1000000000, 1);
	expect_error(&r, d, PROTO_E_FIELD);
	/* the real stream goes on */
	send_batch(a, 42, 2, 2);
	spin(r.base);
	cr_assert_eq(recv_m(a), 1);
	cr_assert_eq(msg.u.ack.seq, 2);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.refused, 3);
	cr_assert_eq(st.stored_batches, 2);
	bufferevent_free(b);
	bufferevent_free(c);
	bufferevent_free(d);
	bufferevent_free(a);
	rig_down(&r);
}

/* docs/PROTOCOL.md, "Stream keys": the first connection of a stream
 * registers its verifier; a second connection without the key is refused,
 * whether the first one lives or is gone; the real sensor reconnecting
 * (the same key) is taken, and its old connection closed. */
Test(root, stream_key_binds_reconnections)
{
	struct bufferevent *forger[2], *sensor, *back;
	struct col_stats st;
	struct rig r;

	rig_up(&r, 1);
	sensor = streaming(&r, 42);
	for (int i = 0; i < 2; i++) {
		forger[i] = child(&r);
		cr_assert(!handshake_key(&r, forger[i], 42, "", RIG_FORGED));
		cr_assert_eq(msg.u.error.code, PROTO_E_AUTH);
		spin(r.base);
		if (i == 0) {
			cr_assert_eq(nconns(&r), 1);	/* it still streams */
			bufferevent_free(sensor);	/* now it is gone */
			spin(r.base);
		}
	}
	back = child(&r);
	cr_assert(handshake(&r, back, 42, ""));	/* the sensor itself */
	send_batch(back, 42, 2, 2);
	spin(r.base);
	cr_assert_eq(recv_m(back), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 2);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.refused, 2);
	cr_assert_eq(st.stored_batches, 2);
	for (int i = 0; i < 2; i++)
		bufferevent_free(forger[i]);
	bufferevent_free(back);
	rig_down(&r);
}

/* A collector's handshake (role 2, node id) on t. */
static void collector_hs(struct rig *r, struct bufferevent *t, uint64_t id)
{
	uint8_t sn[PROTO_NONCE];

	hello(t, PROTO_ROLE_COLLECTOR, id);
	spin(r->base);
	cr_assert_eq(recv_m(t), 1);
	memcpy(sn, msg.u.challenge.nonce, PROTO_NONCE);
	msg.type = PROTO_MSG_AUTH;
	proto_auth_proof(PROTO_AUTH_CLIENT, "", 0, sn, cnonce, id,
			 msg.u.auth.mac);
	roundtrip(r, t, t, PROTO_MSG_WELCOME);
}

/* A KEY passed up by a collector (restarted: it did not know the stream)
 * is answered with a VERDICT: yes with the stream's key, no (counted)
 * without; a stream the root has never seen is registered. */
Test(root, key_passed_up_is_answered)
{
	struct rig r;
	struct bufferevent *a, *g;
	uint8_t sn[PROTO_NONCE] = {7}, v[PROTO_MAC];
	struct col_stats st;

	rig_up(&r, 1);
	a = child(&r);
	cr_assert(handshake(&r, a, 42, ""));
	g = child(&r);
	collector_hs(&r, g, 0x77);
	rig_verifier(42, 1, v);
	msg.type = PROTO_MSG_KEY;
	proto_key_claim(&msg.u.key, v, 42, sn, cnonce, 0);
	roundtrip(&r, g, g, PROTO_MSG_VERDICT);
	cr_assert_eq(msg.u.verdict.result, PROTO_VERDICT_REFUSED);
	cr_assert_eq(msg.u.verdict.server_nonce[0], 7);
	rig_verifier(42, 0, v);
	msg.type = PROTO_MSG_KEY;
	proto_key_claim(&msg.u.key, v, 42, sn, cnonce, 0);
	roundtrip(&r, g, g, PROTO_MSG_VERDICT);
	cr_assert_eq(msg.u.verdict.result, PROTO_VERDICT_OK);
	rig_verifier(45, 0, v);	/* new to the root: registered */
	msg.type = PROTO_MSG_KEY;
	proto_key_claim(&msg.u.key, v, 45, sn, cnonce, 0);
	roundtrip(&r, g, g, PROTO_MSG_VERDICT);
	cr_assert_eq(msg.u.verdict.result, PROTO_VERDICT_OK);
	cr_assert(col_stream_get(r.col, 45, 0)->has_verifier);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.refused, 1);
	bufferevent_free(a);
	bufferevent_free(g);
	rig_down(&r);
}

/* issue 31 (init/exitst2 under Open MPI): a stream that goes on after its
 * BYE (the process recorded more after its end: a destructor after
 * MPI_Finalize, a failed exec) reconnects with its key and sends the next
 * batch: stored and acknowledged, and its second BYE stored too, where
 * the refusal kept the sensor waiting for an ACK that never came. A seq
 * far past the BYE is still refused (the window). */
Test(root, batch_after_bye_stored)
{
	struct rig r;
	struct bufferevent *a, *b;
	struct proto_jobdir_r *jr;
	struct proto_frame f;
	struct col_stats st;
	int rc, batches = 0, byes = 0;

	rig_up(&r, 1);
	a = streaming(&r, 42);
	msg.type = PROTO_MSG_BYE;
	msg.u.bye.stream = 42;
	msg.u.bye.last_seq = 1;
	msg.u.bye.reason = 0;
	roundtrip(&r, a, a, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 1);
	spin(r.base);
	bufferevent_free(a);
	b = child(&r);
	cr_assert(handshake(&r, b, 42, ""));
	send_batch(b, 42, 2, 2);
	spin(r.base);
	cr_assert_eq(recv_m(b), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 2);
	msg.type = PROTO_MSG_BYE;
	msg.u.bye.stream = 42;
	msg.u.bye.last_seq = 2;
	msg.u.bye.reason = 0;
	roundtrip(&r, b, b, PROTO_MSG_ACK);
	cr_assert_eq(msg.u.ack.seq, 2);
	spin(r.base);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.refused, 0);
	cr_assert_eq(st.stored_batches, 2);
	bufferevent_free(b);
	/* far past the end: still the window's refusal */
	b = child(&r);
	cr_assert(handshake(&r, b, 42, ""));
	send_batch(b, 42, 1000000000, 1);
	expect_error(&r, b, PROTO_E_FIELD);
	bufferevent_free(b);
	col_free(r.col);
	r.col = NULL;
	jr = proto_jobdir_open(r.job, &rc);
	cr_assert_not_null(jr);
	while ((rc = proto_jobdir_next(jr, &f)) == 1) {
		batches += f.type == PROTO_MSG_BATCH;
		byes += f.type == PROTO_MSG_BYE;
	}
	cr_assert_eq(batches, 2);
	cr_assert_eq(byes, 2);
	proto_jobdir_close_r(jr);
	rig_down(&r);
}

/* A full disk (issue 33): the batches that never came before one refused
 * for want of room are a gap, counted once as lost, apart from the ones
 * counted as not stored; a late one of them is a duplicate. The disk is
 * said full as after a first PROTO_E_NOSPACE (c->nospace). */
Test(root, nospace_gap_counted_once)
{
	struct rig r;
	struct bufferevent *t;
	struct proto_jobdir_r *jr;
	struct col_stats st;
	uint64_t want[] = {2, 5, 5, 6};
	int rc;

	rig_up(&r, 1);
	t = streaming(&r, 42);		/* batch 1 stored */
	r.col->nospace = 1;
	send_batch(t, 42, 2, 3);	/* not stored, counted */
	send_batch(t, 42, 5, 4);	/* 3 and 4 never came */
	send_batch(t, 42, 3, 5);	/* late: a duplicate */
	send_batch(t, 42, 6, 6);
	spin(r.base);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(recv_m(t), 1);
		cr_assert_eq(msg.type, PROTO_MSG_ACK);
		cr_assert_eq(msg.u.ack.seq, want[i], "ACK %d: %" PRIu64, i,
			     msg.u.ack.seq);
	}
	col_get_stats(r.col, &st);
	cr_assert_eq(st.stored_batches, 1);
	cr_assert_eq(st.gap_batches, 2);
	cr_assert_eq(st.dup_batches, 1);
	bufferevent_free(t);
	col_free(r.col);
	r.col = NULL;
	jr = proto_jobdir_open(r.job, &rc);
	cr_assert_not_null(jr);
	cr_assert_str_eq(proto_jobdir_meta(jr, "collector.lost_batches"), "2");
	cr_assert_str_eq(proto_jobdir_meta(jr,
		"collector.lost.000000000000002a"), "2");
	cr_assert_str_eq(proto_jobdir_meta(jr,
		"collector.nospace_batches.000000000000002a"), "3");
	cr_assert_str_eq(proto_jobdir_meta(jr,
		"collector.nospace_events.000000000000002a"), "13");
	cr_assert_str_eq(proto_jobdir_meta(jr, "collector.nospace_events"),
			 "13");
	proto_jobdir_close_r(jr);
	rig_down(&r);
}

/* The sensors' spool (--spool, issue 33): a file taken is removed only
 * once the job directory holds it (synced). A sync that fails (here
 * meta.xml.tmp is a directory) keeps it; the next start takes it again,
 * its batches deduplicated, and removes it. */
Test(root, spool_kept_until_synced)
{
	struct rig r;
	struct col_stats st;
	struct proto_jobdir_r *jr;
	struct proto_frame f;
	char spool[128], path[160], block[160];
	uint64_t seqs[] = {1, 2};
	int rc, batches = 0;

	rig_up(&r, 1);
	col_free(r.col);
	snprintf(spool, sizeof(spool), "%s/spool", r.dir);
	cr_assert_eq(mkdir(spool, 0700), 0);
	snprintf(path, sizeof(path), "%s/000000000000002a.tps", spool);
	rig_spool_file(path, 42, seqs, 2, 1);
	snprintf(block, sizeof(block), "%s/meta.xml.tmp", r.job);
	cr_assert_eq(mkdir(block, 0700), 0);
	r.cfg.spool = spool;
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.stored_batches, 2);
	cr_assert_eq(access(path, F_OK), 0, "removed before the job was synced");
	col_free(r.col);
	cr_assert_eq(rmdir(block), 0);
	r.col = col_new(r.base, &r.cfg, &rc);
	cr_assert_not_null(r.col);
	col_get_stats(r.col, &st);
	cr_assert_eq(st.stored_batches, 0);
	cr_assert_eq(st.dup_batches, 2);
	cr_assert_eq(access(path, F_OK), -1, "taken and synced, still there");
	col_free(r.col);
	r.col = NULL;
	jr = proto_jobdir_open(r.job, &rc);
	cr_assert_not_null(jr);
	while ((rc = proto_jobdir_next(jr, &f)) == 1)
		batches += f.type == PROTO_MSG_BATCH;
	cr_assert_eq(batches, 2);
	proto_jobdir_close_r(jr);
	rig_down(&r);
}
