/*
 * tests/collector/test_root.c - collector/root.c: deduplication by (stream, seq), gaps,
 * BYE.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

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
