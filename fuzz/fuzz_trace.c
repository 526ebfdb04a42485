/*
 * fuzz/fuzz_trace.c - libFuzzer target for proto/trace.c (the event reader
 * every exporter uses).
 *
 * The input is a list of chunks [u8 kind][u8 stream][u16le len][len bytes];
 * each becomes one frame of a job directory written with the real writer:
 *   kind%4 == 0: BATCH whose codec data encodes the bytes as event records
 *               (so STRING/ARRAY/HASARRAY handling is reached with any values)
 *   kind%4 == 1: BATCH whose codec data is the bytes themselves
 *   kind%4 == 2: META payload = the bytes
 *   kind%4 == 3: a frame of type (stream % 16) with the bytes as payload
 * Then the directory is read with proto_trace to the end, resolving strings.
 */
#include "fuzz/scratch.h"

#include <string.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/frame.h"
#include "proto/jobdir.h"
#include "proto/msg.h"
#include "proto/trace.h"

static void put_frame(struct proto_jobdir_w *w, uint8_t type,
		      const uint8_t *p, size_t len)
{
	uint8_t *buf = malloc(PROTO_FRAME_HDR + len + 1);
	size_t n;

	if (buf && proto_frame_encode(type, p, len, buf, PROTO_FRAME_HDR + len,
				      &n) == 0)
		proto_jobdir_append(w, buf, n);
	free(buf);
}

static void put_batch(struct proto_jobdir_w *w, struct proto_codec *c,
		      uint64_t stream, uint64_t seq, const uint8_t *d,
		      size_t len, int encode)
{
	size_t n = len / PROTO_EVENT_SIZE, cap = proto_codec_bound(n) + 24;
	uint8_t *p = malloc(cap + len);
	size_t dl = 0;

	if (!p)
		return;
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(stream >> (8 * i));
		p[8 + i] = (uint8_t)(seq >> (8 * i));
	}
	memset(p + 16, 0, 8);
	p[16] = (uint8_t)n;
	if (encode) {
		struct proto_event *ev = malloc(n * sizeof(*ev) + 1);

		if (ev) {
			memcpy(ev, d, n * sizeof(*ev));
			if (proto_codec_encode(c, ev, n, p + 24, cap - 24, &dl) != 0)
				dl = 0;
			free(ev);
		}
	} else {
		memcpy(p + 24, d, len);
		dl = len;
	}
	put_frame(w, PROTO_MSG_BATCH, p, 24 + dl);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[128];
	int rc;
	uint8_t kind, stream;
	const uint8_t *d;
	size_t len;

	fz_jobdir(dir, sizeof(dir), "trace");
	struct proto_jobdir_w *w = proto_jobdir_create(dir, 0, 4096, &rc);
	struct proto_codec *c = proto_codec_new(1);
	if (!w || !c)
		abort();
	uint64_t seq = 1;
	while (fz_chunk(&data, &size, &kind, &stream, &d, &len)) {
		switch (kind % 4) {
		case 0:
		case 1:
			put_batch(w, c, stream % 3 + 1, kind & 0x80 ? seq : seq++,
				  d, len, kind % 4 == 0);
			break;
		case 2:
			put_frame(w, PROTO_MSG_META, d, len);
			break;
		default:
			put_frame(w, (uint8_t)(stream % 16), d, len);
			break;
		}
	}
	proto_jobdir_close(w);
	proto_codec_free(c);

	struct proto_trace *t = proto_trace_open(dir, &rc);
	if (t) {
		struct proto_trace_event te;
		volatile size_t sum = 0;

		while (proto_trace_next(t, &te) == 1) {
			int pi = proto_ev_arg(te.ev->type, PROTO_F_path);
			const char *s = pi >= 0 ? proto_trace_string(
				t, te.stream->id, te.ev->tid, te.ev->arg[pi]) : NULL;
			if (s)
				sum += strlen(s);
			for (size_t i = 0; i < te.narray; i++)
				sum += (size_t)te.array[i];
		}
		proto_trace_close(t);
	}
	fz_rmdir(dir);
	return 0;
}
