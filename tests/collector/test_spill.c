/*
 * tests/collector/test_spill.c - collector/spill.c: the spill store in order, its quota,
 * reopening, a torn tail.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "tests/collector/rig.h"

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

/* BATCH frames of seq first .. last into s (each written); their length. */
static size_t spill_batches(struct col_spill *s, uint64_t first, uint64_t last)
{
	uint8_t fr[512];
	size_t len = 0;

	for (uint64_t q = first; q <= last; q++) {
		len = batch_frame(q, fr, sizeof(fr));
		cr_assert_eq(col_spill_write(s, fr, len), 0);
	}
	return len;
}

Test(spill, spill_in_order_quota_and_reopen)
{
	char dir[] = "/tmp/col-spill-XXXXXX";
	uint8_t fr[512];
	struct col_spill *s;
	struct col_spill_skip skip = {0};
	size_t len;
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	len = batch_frame(1, fr, sizeof(fr));
	/* Room for the header and 5 frames; files of 2 frames. */
	s = col_spill_open(dir, 3 * COL_SPILL_HDR + 5 * len,
			   COL_SPILL_HDR + 2 * len, &rc);
	cr_assert_not_null(s);
	len = spill_batches(s, 1, 5);
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
		cr_assert_eq(col_spill_read_file(s, on_spilled, NULL, &skip), 0);
	cr_assert_eq(nseen, 6);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(seen_seq[i], (uint64_t)i + 1);
	cr_assert_eq(skip.bytes, 0);
	cr_assert_not(skip.torn);
	cr_assert_eq(col_spill_bytes(s), 0);
	col_spill_free(s);
	rm_tree(dir);
}

/* A file cut inside its last frame (a collector killed while spilling):
 * the whole frames are returned, the tail is skipped, and when the tail
 * holds a BATCH's frame and batch headers the batch is named with its
 * events; a tail too short for them (or corrupt) is only skipped. */
Test(spill, spill_torn_tail_is_skipped)
{
	static const size_t cut[] = {10, PROTO_FRAME_HDR + PROTO_BATCH_HDR};
	char dir[] = "/tmp/col-spill-XXXXXX", path[128];
	struct col_spill *s;
	size_t len;
	int rc;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/spill-0000000001.tps", dir);
	for (int i = 0; i < 2; i++) {
		struct col_spill_skip skip = {0};

		s = col_spill_open(dir, 1u << 20, 1u << 16, &rc);
		len = spill_batches(s, 1, 3);
		col_spill_free(s);
		cr_assert_eq(truncate(path, (off_t)(COL_SPILL_HDR + 2 * len +
						      cut[i])), 0);
		s = col_spill_open(dir, 1u << 20, 1u << 16, &rc);
		nseen = 0;
		cr_assert_eq(col_spill_read_file(s, on_spilled, NULL, &skip), 0);
		cr_assert_eq(nseen, 2);
		cr_assert_eq(skip.bytes, cut[i]);
		cr_assert_eq(skip.torn, i == 1);
		if (skip.torn) {
			cr_assert_eq(skip.stream, 5);
			cr_assert_eq(skip.seq, 3);
			cr_assert_eq(skip.nrecords, 1);
		}
		cr_assert(col_spill_empty(s));
		col_spill_free(s);
	}
	rm_tree(dir);
}
