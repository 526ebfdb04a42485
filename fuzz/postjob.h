/*
 * fuzz/postjob.h - the job directories of the post-processing fuzz targets
 * (fuzz_post, fuzz_export), header only. The input is a list of chunks
 * (fuzz/scratch.h); each becomes one message of a job directory written
 * with the real writer, for stream (stream % 4) + 1:
 *   kind%4 == 0: BATCH of the bytes as 72-byte event records, their type
 *               folded into the catalogue; kind & 0x40: times made small and
 *               ordered (start < 2^20, duration < 2^12), kind & 0x20: the
 *               arguments folded into -2..5 (communicators, peers, ranks,
 *               roots that exist), so matching and repair have work
 *   kind%4 == 1: META rank = first byte % 5 (4: the key with a bad value)
 *   kind%4 == 2: CLOCK of the stream's edge to node 100: samples from the
 *               bytes (32 each), phase = stream byte % 3
 *   kind%4 == 3: META with the bytes as "key=value" text
 */
#ifndef TAPESTRY_FUZZ_POSTJOB_H
#define TAPESTRY_FUZZ_POSTJOB_H

#include "fuzz/scratch.h"

#include <string.h>

#include "proto/codec.h"
#include "proto/frame.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

static struct proto_msg msg;

static void put(struct proto_jobdir_w *w)
{
	uint8_t *buf;
	size_t len;

	if (proto_msg_frame_alloc(&msg, &buf, &len) == 0) {
		proto_jobdir_append(w, buf, len);
		free(buf);
	}
}

static void put_meta(struct proto_jobdir_w *w, uint64_t stream, const char *key,
		     const char *value)
{
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_META;
	msg.u.meta.id = stream;
	msg.u.meta.n = 1;
	snprintf(msg.u.meta.kv[0].key, sizeof(msg.u.meta.kv[0].key), "%s", key);
	snprintf(msg.u.meta.kv[0].value, sizeof(msg.u.meta.kv[0].value), "%s", value);
	put(w);
}

static void put_batch(struct proto_jobdir_w *w, struct proto_codec *c,
		      uint64_t stream, uint64_t seq, uint8_t kind,
		      const uint8_t *d, size_t len)
{
	size_t n = len / PROTO_EVENT_SIZE, cap = proto_codec_bound(n) + 1, dl = 0;
	struct proto_event *ev = calloc(n + 1, sizeof(*ev));
	uint8_t *data = malloc(cap);

	if (!ev || !data)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct proto_event *e = &ev[i];

		memcpy(e, d + i * PROTO_EVENT_SIZE, sizeof(*e));
		e->type = (uint16_t)(1 + e->type % (PROTO_EV__COUNT - 1));
		if (kind & 0x40) {
			e->t_start %= 1u << 20;
			e->t_end = e->t_start + e->t_end % (1u << 12);
		}
		if (kind & 0x20)
			for (int k = 0; k < PROTO_EV_NARGS; k++)
				e->arg[k] = (int64_t)((uint64_t)e->arg[k] % 8) - 2;
	}
	if (proto_codec_encode(c, ev, n, data, cap, &dl) != 0)
		goto out;
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_BATCH;
	msg.u.batch.stream = stream;
	msg.u.batch.seq = seq;
	msg.u.batch.nrecords = (uint32_t)n;
	msg.u.batch.data = data;
	msg.u.batch.datalen = (uint32_t)dl;
	put(w);
out:
	free(ev);
	free(data);
}

static void put_clock(struct proto_jobdir_w *w, uint64_t stream, unsigned phase,
		      const uint8_t *d, size_t len)
{
	size_t n = len / sizeof(struct proto_clock_sample);

	if (n > PROTO_CLOCK_MAX)
		n = PROTO_CLOCK_MAX;
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_CLOCK;
	msg.u.clock.child = stream;
	msg.u.clock.parent = 100;
	msg.u.clock.phase = phase;
	msg.u.clock.n = (uint32_t)n;
	memcpy(msg.u.clock.sample, d, n * sizeof(struct proto_clock_sample));
	put(w);
}

/* Write the job directory dir from the input. */
static void write_job(const char *dir, const uint8_t *data, size_t size)
{
	char text[256];
	int rc;
	uint8_t kind, sb;
	const uint8_t *d;
	size_t len;
	struct proto_jobdir_w *w = proto_jobdir_create(dir, 0, 4096, &rc);
	struct proto_codec *c = proto_codec_new(1);
	uint64_t seq[4] = {1, 1, 1, 1};

	if (!w || !c)
		abort();
	while (fz_chunk(&data, &size, &kind, &sb, &d, &len)) {
		uint8_t s = sb % 4;

		switch (kind % 4) {
		case 0:
			put_batch(w, c, s + 1, seq[s]++, kind, d, len);
			break;
		case 1:
			snprintf(text, sizeof(text), "%d", len ? d[0] % 5 : 0);
			put_meta(w, s + 1, "rank", len && d[0] % 5 == 4 ? "x" : text);
			break;
		case 2:
			put_clock(w, s + 1, sb % 3, d, len);
			break;
		default: {
			size_t k = len < sizeof(text) - 1 ? len : sizeof(text) - 1;
			char *eq;

			memcpy(text, d, k);
			text[k] = 0;
			eq = strchr(text, '=');
			if (eq)
				*eq++ = 0;
			put_meta(w, s + 1, text, eq ? eq : "");
			break;
		}
		}
	}
	proto_jobdir_close(w);
	proto_codec_free(c);
}

#endif
