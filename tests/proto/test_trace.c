/*
 * tests/proto/test_trace.c - reading events back from a job directory:
 * strings, arrays across batches, duplicates, gaps, corrupt batches, meta.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "proto/trace.h"
#include "tests/strev.h"

static char dir[64];
static struct proto_jobdir_w *w;
static struct proto_codec *codec;
static struct proto_msg *msg;

static void setup(void)
{
	int rc = 0;
	char base[] = "/tmp/tapestry-test-trace.XXXXXX";

	cr_assert_not_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/job", base);
	w = proto_jobdir_create(dir, 0, 0, &rc);
	cr_assert_not_null(w, "create: %s", proto_strerror(rc));
	codec = proto_codec_new(1);
	msg = calloc(1, sizeof(*msg));
}

static void teardown(void)
{
	char cmd[128];

	proto_codec_free(codec);
	free(msg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strrchr(dir, '/') - dir), dir);
	cr_assert_eq(system(cmd), 0);
}

static void put_msg(void)
{
	uint8_t *buf;
	size_t len;

	cr_assert_eq(proto_msg_frame_alloc(msg, &buf, &len), 0);
	cr_assert_eq(proto_jobdir_append(w, buf, len), 0);
	free(buf);
}

static void put_batch(uint64_t stream, uint64_t seq, const struct proto_event *ev,
		      size_t n, int corrupt)
{
	size_t cap = proto_codec_bound(n), len;
	uint8_t *data = malloc(cap);

	cr_assert_eq(proto_codec_encode(codec, ev, n, data, cap, &len), 0);
	if (corrupt)
		data[len - 1] ^= 0x5a;
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_BATCH;
	msg->u.batch.stream = stream;
	msg->u.batch.seq = seq;
	msg->u.batch.nrecords = (uint32_t)n;
	msg->u.batch.data = data;
	msg->u.batch.datalen = (uint32_t)len;
	put_msg();
	free(data);
}

static void put_meta(uint64_t stream, const char *k, const char *v)
{
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_META;
	msg->u.meta.id = stream;
	msg->u.meta.n = 1;
	strcpy(msg->u.meta.kv[0].key, k);
	strcpy(msg->u.meta.kv[0].value, v);
	put_msg();
}

static struct proto_event ev_of(unsigned type, uint32_t tid, uint64_t t)
{
	struct proto_event e;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.tid = tid;
	e.t_start = t;
	e.t_end = t + 10;
	return e;
}

TestSuite(trace, .init = setup, .fini = teardown);

Test(trace, strings_arrays_meta_dups_gaps_and_corrupt_batches)
{
	struct proto_event ev[64];
	size_t n = 0;
	char longpath[200];

	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	put_meta(7, "rank", "3");
	put_meta(7, "host", "node-a");
	n += tests_string_events(&ev[n], 0, 1, longpath);
	ev[n] = ev_of(PROTO_EV_OPEN, 0, 100);
	ev[n].arg[0] = 5;
	ev[n++].arg[3] = 1;
	/* a gatherv whose ARRAY of 8 counts continues in the next batch */
	ev[n] = ev_of(PROTO_EV_MPI_GATHERV, 0, 200);
	ev[n++].flags = PROTO_EVF_HASARRAY;
	struct proto_event a = ev_of(PROTO_EV_ARRAY, 0, 0);
	a.t_start = 0;
	a.t_end = 8;
	a.flags = 6;
	for (int i = 0; i < 6; i++)
		a.arg[i] = 10 + i;
	ev[n++] = a;
	/* another thread's event in between */
	ev[n++] = ev_of(PROTO_EV_WRITE, 1, 250);
	put_batch(7, 1, ev, n, 0);

	n = 0;
	a.t_start = 6;
	a.flags = 2;
	a.arg[0] = 16;
	a.arg[1] = 17;
	ev[n++] = a;
	ev[n++] = ev_of(PROTO_EV_CLOSE, 0, 300);
	put_batch(7, 2, ev, n, 0);
	put_batch(7, 2, ev, n, 0);	/* stored twice: yielded once */
	put_batch(7, 3, ev, n, 1);	/* corrupt: skipped */
	n = 0;
	ev[n++] = ev_of(PROTO_EV_READ, 0, 400);
	put_batch(7, 5, ev, n, 0);	/* seq 4 never arrives: a gap */
	put_batch(9, 1, ev, n, 0);	/* a second stream without meta */
	cr_assert_eq(proto_jobdir_close(w), 0);

	int rc;
	struct proto_trace *t = proto_trace_open(dir, &rc);
	cr_assert_not_null(t, "%s", proto_strerror(rc));
	struct proto_trace_event te;
	unsigned types[16];
	int nev = 0;

	while ((rc = proto_trace_next(t, &te)) == 1) {
		cr_assert_lt(nev, 16);
		types[nev] = te.ev->type;
		if (te.ev->type == PROTO_EV_OPEN) {
			const char *p = proto_trace_string(t, te.stream->id, 0, te.ev->arg[3]);
			cr_assert_not_null(p);
			cr_assert_str_eq(p, longpath);
			cr_assert_eq(te.stream->rank, 3);
			cr_assert_str_eq(te.stream->host, "node-a");
			cr_assert_str_eq(proto_stream_meta(te.stream, "rank"), "3");
		}
		if (te.ev->type == PROTO_EV_MPI_GATHERV) {
			cr_assert_eq(te.narray, 8);
			for (int i = 0; i < 8; i++)
				cr_assert_eq(te.array[i], 10 + i);
		} else {
			cr_assert_null(te.array);
		}
		nev++;
	}
	cr_assert_eq(rc, 0);
	/* open, write (tid 1, not held), gatherv (released when complete), close, read, read */
	unsigned want[] = {PROTO_EV_OPEN, PROTO_EV_WRITE, PROTO_EV_MPI_GATHERV,
			   PROTO_EV_CLOSE, PROTO_EV_READ, PROTO_EV_READ};
	cr_assert_eq(nev, 6);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(types[i], want[i], "event %d: %u", i, types[i]);
	const struct proto_trace_stats *st = proto_trace_stats(t);
	cr_assert_eq(st->dup_batches, 1);
	cr_assert_eq(st->bad_batches, 1);
	cr_assert_eq(proto_trace_nstreams(t), 2);
	const struct proto_stream *s = proto_trace_stream(t, 0);
	cr_assert_eq(s->id, 7);
	cr_assert_eq(s->gap_batches, 2);	/* 3 (corrupt) and 4 */
	cr_assert_eq(s->batches, 3);
	cr_assert_eq(proto_trace_stream(t, 1)->rank, -1);
	proto_trace_close(t);
}

Test(trace, incomplete_array_released_at_end_and_not_a_jobdir)
{
	struct proto_event ev[2];

	ev[0] = ev_of(PROTO_EV_MPI_WAITALL, 0, 10);
	ev[0].flags = PROTO_EVF_HASARRAY;
	ev[0].arg[0] = 3;
	ev[1] = ev_of(PROTO_EV_ARRAY, 0, 0);
	ev[1].t_start = 0;
	ev[1].t_end = 3;
	ev[1].flags = 2;
	put_batch(1, 1, ev, 2, 0);
	cr_assert_eq(proto_jobdir_close(w), 0);

	int rc;
	struct proto_trace *t = proto_trace_open(dir, &rc);
	cr_assert_not_null(t);
	struct proto_trace_event te;
	cr_assert_eq(proto_trace_next(t, &te), 1);
	cr_assert_eq(te.ev->type, PROTO_EV_MPI_WAITALL);
	cr_assert_eq(te.narray, 2);
	cr_assert_eq(proto_trace_next(t, &te), 0);
	cr_assert_eq(proto_trace_next(t, &te), 0);
	proto_trace_close(t);

	cr_assert_null(proto_trace_open("/nonexistent/tapestry", &rc));
	cr_assert_lt(rc, 0);
	proto_trace_close(NULL);
}

static void put_loss(uint64_t stream, uint64_t dropped, uint64_t first,
		     uint64_t last)
{
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_LOSS;
	msg->u.loss.stream = stream;
	msg->u.loss.dropped = dropped;
	msg->u.loss.first_seq = first;
	msg->u.loss.last_seq = last;
	put_msg();
}

static const struct proto_stream *read_all(uint64_t id)
{
	static struct proto_trace *t;
	struct proto_trace_event te;
	int rc;

	proto_trace_close(t);
	t = proto_trace_open(dir, &rc);
	cr_assert_not_null(t);
	while ((rc = proto_trace_next(t, &te)) == 1)
		;
	cr_assert_eq(rc, 0);
	for (size_t i = 0; i < proto_trace_nstreams(t); i++)
		if (proto_trace_stream(t, i)->id == id)
			return proto_trace_stream(t, i);
	cr_assert_fail("stream %llx not found", (unsigned long long)id);
	return NULL;
}

/* A write, then a DROP record of dropped events. */
static void write_and_drop(struct proto_event ev[2], int64_t dropped)
{
	ev[0] = ev_of(PROTO_EV_WRITE, 0, 10);
	ev[1] = ev_of(PROTO_EV_DROP, 0, 20);
	ev[1].arg[0] = dropped;
}

/* Every lost event once, whichever path said it (proto-trace.md, "Losses"). */
Test(trace, losses_counted_once_per_path)
{
	struct proto_event ev[2];

	write_and_drop(ev, 62749);
	/* stream 1: a DROP record and the LOSS frames that say the same
	 * drops (a running total, sent again after a reconnect) */
	put_batch(1, 1, ev, 1, 0);
	put_loss(1, 40000, 0, 0);
	put_batch(1, 2, ev, 2, 0);
	put_loss(1, 62749, 0, 0);
	put_loss(1, 62749, 0, 0);	/* after a reconnect */
	/* stream 2: LOSS only (the DROP record's batch was never stored) */
	put_batch(2, 1, ev, 1, 0);
	put_loss(2, 500, 0, 0);
	put_loss(2, 700, 0, 0);
	/* stream 3: DROP records only (no LOSS reached the root), two threads */
	ev[1].arg[0] = 300;
	put_batch(3, 1, ev, 2, 0);
	ev[1].tid = 1;
	ev[1].arg[0] = 200;
	put_batch(3, 2, ev, 2, 0);
	/* stream 4: a collector dropped batch 2 (LOSS of that seq, 1000
	 * events, never stored) and the sensor dropped 50 before batch 1 was
	 * stored (earlier sensors named seq 1 in their first LOSS: void
	 * once batch 1 is stored; the later LOSS says the 50) */
	put_loss(4, 50, 1, 1);
	put_batch(4, 1, ev, 1, 0);
	put_loss(4, 1000, 2, 2);
	put_batch(4, 3, ev, 1, 0);
	put_loss(4, 50, 1, 3);
	cr_assert_eq(proto_jobdir_close(w), 0);

	const struct proto_stream *s = read_all(1);
	cr_assert_eq(s->lost_events, 62749, "DROP + LOSS: %llu",
		     (unsigned long long)s->lost_events);
	s = read_all(2);
	cr_assert_eq(s->lost_events, 700, "LOSS only: %llu",
		     (unsigned long long)s->lost_events);
	s = read_all(3);
	cr_assert_eq(s->lost_events, 500, "DROP only: %llu",
		     (unsigned long long)s->lost_events);
	s = read_all(4);
	cr_assert_eq(s->lost_events, 1050, "collector drop + sensor: %llu",
		     (unsigned long long)s->lost_events);
	cr_assert_eq(s->gap_batches, 1);
}

/* A sensor's drops and a collector's lost batch at the same seq, each
 * counted once: the sensor's LOSS names no seq (rt_send.c), so it cannot
 * pass for the collector's; a batch that two LOSSes name counts once; a
 * LOSS whose batch is stored after all (sent again after a torn spill) or
 * before it is void. Before, the sensor's first LOSS named the seq the
 * collector lost, and its drops were counted twice (2 x 300 + 2). */
Test(trace, losses_of_one_seq_counted_once)
{
	struct proto_event ev[2];

	/* what reaches the root, in order: a batch {stream, seq, records}
	 * or, with seq 0, a LOSS {stream, 0, dropped, the seq it names} */
	static const struct {
		uint64_t stream, seq, n, named;
	} step[] = {
		/* stream 5: batch 2 (2 events) lost by a collector, said by
		 * two; the sensor's 300 drops in a LOSS and in batch 3's DROP
		 * record */
		{5, 1, 1, 0}, {5, 0, 300, 0}, {5, 0, 2, 2}, {5, 0, 2, 2},
		{5, 3, 2, 0},
		/* stream 8: LOSSes of batches that were stored after all */
		{8, 0, 1000, 1}, {8, 1, 1, 0}, {8, 2, 1, 0}, {8, 0, 1000, 2},
	};

	write_and_drop(ev, 300);
	for (size_t i = 0; i < sizeof(step) / sizeof(step[0]); i++) {
		if (step[i].seq)
			put_batch(step[i].stream, step[i].seq, ev,
				  (size_t)step[i].n, 0);
		else
			put_loss(step[i].stream, step[i].n, step[i].named,
				 step[i].named);
	}
	cr_assert_eq(proto_jobdir_close(w), 0);

	const struct proto_stream *s = read_all(5);
	cr_assert_eq(s->lost_events, 302, "sensor 300 + batch 2: %llu",
		     (unsigned long long)s->lost_events);
	cr_assert_eq(s->gap_batches, 1);
	s = read_all(8);
	cr_assert_eq(s->lost_events, 0, "stored after all: %llu",
		     (unsigned long long)s->lost_events);
}

/* More LOSSes naming batches not yet stored than the reader once kept (8):
 * each is void when its batch is stored after all. Before, the ninth and
 * later went straight into the count (4 x 2 lost events that were not). */
Test(trace, many_loss_candidates_voided)
{
	struct proto_event ev[2];

	write_and_drop(ev, 0);
	put_batch(9, 1, ev, 1, 0);
	for (uint64_t seq = 2; seq <= 13; seq++)
		put_loss(9, 2, seq, seq);
	for (uint64_t seq = 2; seq <= 13; seq++)
		put_batch(9, seq, ev, 1, 0);
	put_loss(9, 5, 20, 20);	/* never stored: counts */
	cr_assert_eq(proto_jobdir_close(w), 0);

	const struct proto_stream *s = read_all(9);
	cr_assert_eq(s->lost_events, 5, "only batch 20: %llu",
		     (unsigned long long)s->lost_events);
}

/* A segment cut in the middle: the batches the index lists past the cut are
 * missing, with their events (docs/modules/proto-trace.md, "Losses"). */
Test(trace, cut_segment_counted_from_the_index)
{
	struct proto_event ev[10];
	char seg[128];
	struct stat sb;

	for (int i = 0; i < 10; i++)
		ev[i] = ev_of(PROTO_EV_WRITE, 0, 10 + (uint64_t)i);
	put_meta(7, "exe", "cut");
	for (uint64_t s = 1; s <= 95; s++)
		put_batch(7, s, ev, 10, 0);
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_BYE;
	msg->u.bye.stream = 7;
	msg->u.bye.last_seq = 95;
	put_msg();
	cr_assert_eq(proto_jobdir_close(w), 0);
	snprintf(seg, sizeof(seg), "%s/segments/000000.tps", dir);
	cr_assert_eq(stat(seg, &sb), 0);
	cr_assert_eq(truncate(seg, sb.st_size / 2 + 7), 0);	/* mid-frame */

	const struct proto_stream *s = read_all(7);
	cr_assert_lt(s->batches, 95);
	cr_assert_eq(s->gap_batches, 95 - s->batches, "%llu read, %llu missing",
		     (unsigned long long)s->batches,
		     (unsigned long long)s->gap_batches);
	cr_assert_eq(s->gap_events, 10 * (95 - s->batches));
}

/* A job whose batches an earlier release wrote (codec version 2: the
 * worked example of docs/modules/proto-codec.md, two writes) is read
 * beside version-3 batches of this one; a batch of a version to come
 * (4) is refused and counted, not half-read. */
Test(trace, reads_codec_version2_refuses_unknown)
{
	static const uint8_t v2[56] = {
		'T', 'P', 'B', 'C', 2, 0, 0, 0,
		2, 0, 0, 0, 32, 0, 0, 0, 32, 0, 0, 0,
		0xd2, 0xcb, 0x7e, 0xc2,
		0xe8, 0x03, 0, 0, 0, 0, 0, 0,
		0,
		0x03, 0x03, 0x01, 0x01, 0x02, 0, 0, 0, 0,
		0x00, 0xe8, 0x00, 0x03,
		0xe8, 0x1f, 0x03, 0x03,
		0x11, 0x11,
		0x02, 0x00,
		0x20, 0x00,
	};
	uint8_t v4[sizeof(v2)];
	uint32_t ck;
	struct proto_event ev[1] = { ev_of(PROTO_EV_READ, 0, 5000) };
	uint64_t starts[3] = {0};
	int rc, nev = 0;

	memcpy(v4, v2, sizeof(v2));
	v4[4] = 4;
	ck = proto_xxh32(v4, 20, proto_xxh32(v4 + 24, sizeof(v4) - 24, 0));
	for (int i = 0; i < 4; i++)	/* valid but for the version */
		v4[20 + i] = (uint8_t)(ck >> (8 * i));
	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_BATCH;
	msg->u.batch.stream = 7;
	msg->u.batch.seq = 1;
	msg->u.batch.nrecords = 2;
	msg->u.batch.data = v2;
	msg->u.batch.datalen = sizeof(v2);
	put_msg();
	put_batch(7, 2, ev, 1, 0);
	msg->type = PROTO_MSG_BATCH;
	msg->u.batch.seq = 3;
	msg->u.batch.data = v4;
	put_msg();
	cr_assert_eq(proto_jobdir_close(w), 0);

	struct proto_trace *t = proto_trace_open(dir, &rc);
	struct proto_trace_event te;

	cr_assert_not_null(t, "%s", proto_strerror(rc));
	while ((rc = proto_trace_next(t, &te)) == 1) {
		cr_assert_lt(nev, 3);
		starts[nev++] = te.ev->t_start;
	}
	cr_assert_eq(rc, 0);
	cr_assert_eq(nev, 3);
	cr_assert_eq(starts[0], 1000);
	cr_assert_eq(starts[1], 2000);
	cr_assert_eq(starts[2], 5000);
	cr_assert_eq(proto_trace_stats(t)->bad_batches, 1);
	proto_trace_close(t);
}
