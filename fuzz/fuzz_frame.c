/*
 * fuzz/fuzz_frame.c - libFuzzer target for the frame decoder and the
 * message decoders (proto/frame.c, proto/msg.c).
 *
 * The first input byte picks a mode:
 *  - odd: the rest is a raw byte stream, decoded frame after frame as a
 *    connection would (this exercises magic, CRC, length and truncation);
 *  - even: the rest is a list of chunks [u8 type][u16 len][len bytes]
 *    that are wrapped into frames with correct CRCs first, so the fuzzer
 *    reaches the payload decoders behind the checksums; bit 1 of the mode
 *    byte cuts the last 1..16 bytes of that stream, bit 7 gives the
 *    decoder a small maximum payload (from bits 2..6).
 * Every decoded message must re-encode to exactly its payload bytes and
 * decode again to an equal message; anything else aborts.
 *
 * Build and run (docs/modules/proto-frame.md):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. fuzz/fuzz_frame.c \
 *     proto/frame.c proto/msg.c proto/crc32c.c proto/error.c proto/event.c
 *   ./a.out -max_total_time=60 fuzz/corpus/frame
 * The seed corpus is written by the same file built as a program:
 *   cc -DFUZZ_FRAME_GEN_CORPUS -I. fuzz/fuzz_frame.c proto/frame.c \
 *     proto/msg.c proto/crc32c.c proto/error.c && ./a.out fuzz/corpus/frame
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STREAM_MAX (1u << 20)	/* bytes of frames built in chunk mode */

static struct proto_msg m1, m2;	/* ~300 KiB each: not on the stack */

static void check_message(const struct proto_frame *f)
{
	uint8_t *out;
	size_t w;
	int rc;

	rc = proto_msg_decode(f, &m1);
	if (rc) {
		if (rc > 0 || !strcmp(proto_errname(rc), "PROTO_E_UNKNOWN"))
			abort();
		return;
	}
	out = malloc(f->length + 1);
	if (!out)
		abort();
	/* canonical encoding: the same bytes back, not one more */
	rc = proto_msg_encode(&m1, out, f->length + 1, &w);
	if (rc || w != f->length || memcmp(out, f->payload, w))
		abort();
	/* decode(encode(m)) == m */
	struct proto_frame g = {f->type, PROTO_VERSION, (uint32_t)w, out};

	if (proto_msg_decode(&g, &m2) || !proto_msg_equal(&m1, &m2))
		abort();
	free(out);
}

static void decode_stream(const uint8_t *buf, size_t len, size_t max)
{
	struct proto_frame f;
	size_t pos = 0, used;
	int rc;

	while (pos < len) {
		rc = proto_frame_decode(buf + pos, len - pos, max, &f, &used);
		if (rc == PROTO_E_TRUNCATED) {
			if (used <= len - pos || used < PROTO_FRAME_HDR)
				abort();
			return;
		}
		if (rc)		/* fatal for the stream: the connection closes */
			return;
		if (used != PROTO_FRAME_HDR + (size_t)f.length ||
		    used > len - pos || f.payload != buf + pos + PROTO_FRAME_HDR)
			abort();
		check_message(&f);
		pos += used;
	}
}

static uint8_t *build_stream(const uint8_t *in, size_t n, size_t *outlen)
{
	uint8_t *out = malloc(STREAM_MAX);
	size_t pos = 0, i = 0, w;

	if (!out)
		abort();
	while (i + 3 <= n) {
		uint8_t type = in[i];
		size_t len = (size_t)in[i + 1] | (size_t)in[i + 2] << 8;

		i += 3;
		if (len > n - i)
			len = n - i;
		if (proto_frame_encode(type, in + i, len, out + pos,
				       STREAM_MAX - pos, &w) == 0)
			pos += w;
		i += len;
	}
	*outlen = pos;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mode;
	uint8_t *stream;
	size_t len, max;

	if (size < 1)
		return 0;
	mode = data[0];
	if (mode & 1) {
		decode_stream(data + 1, size - 1, 0);
		return 0;
	}
	stream = build_stream(data + 1, size - 1, &len);
	if ((mode & 2) && len)
		len -= 1 + (size_t)(mode >> 4) % (len < 16 ? len : 16);
	/* bit 7: a small maximum (8..256 bytes), else the default */
	max = (mode & 0x80) ? (((size_t)mode >> 2) & 0x1f) * 8 + 8 : 0;
	decode_stream(stream, len, max);
	free(stream);
	return 0;
}

#ifdef FUZZ_FRAME_GEN_CORPUS
/* Seed corpus: a few well-formed streams in both modes. */
static struct proto_msg seed;

static void write_seed(const char *dir, const char *name, const uint8_t *p,
		       size_t n)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fwrite(p, 1, n, fp) != n || fclose(fp)) {
		perror(path);
		exit(1);
	}
}

/* seed as mode byte 1 (raw) and its frame, or as mode byte 0 (chunks) and
 * [type][len][payload] */
static void seed_write(const char *dir, const char *name, int raw)
{
	uint8_t buf[4096];
	size_t hdr = raw ? 1 : 4, w;
	int rc = raw ? proto_msg_frame(&seed, buf + hdr, sizeof(buf) - hdr, &w) :
		 proto_msg_encode(&seed, buf + hdr, sizeof(buf) - hdr, &w);

	if (rc) {
		fprintf(stderr, "%s: cannot encode\n", name);
		exit(1);
	}
	buf[0] = (uint8_t)raw;
	if (!raw) {
		buf[1] = seed.type;
		buf[2] = (uint8_t)w;
		buf[3] = (uint8_t)(w >> 8);
	}
	write_seed(dir, name, buf, w + hdr);
}

int main(int argc, char **argv)
{
	static const uint8_t data[] = "codec data placeholder";
	const char *dir = argc > 1 ? argv[1] : ".";

	seed.type = PROTO_MSG_HELLO;
	seed.u.hello.role = PROTO_ROLE_SENSOR;
	seed.u.hello.pid = 100;
	seed.u.hello.id = 0x1234;
	seed.u.hello.rank = 0;
	strcpy(seed.u.hello.host, "node-1");
	strcpy(seed.u.hello.name, "/bin/app");
	seed_write(dir, "hello-raw", 1);
	seed_write(dir, "hello", 0);
	seed.type = PROTO_MSG_CHALLENGE;
	seed.u.challenge.flags = PROTO_AUTH_REQUIRED;
	seed_write(dir, "challenge", 0);
	seed.type = PROTO_MSG_AUTH;
	seed_write(dir, "auth", 0);
	seed.type = PROTO_MSG_WELCOME;
	seed.u.welcome.node_id = 9;
	seed_write(dir, "welcome", 0);
	seed.type = PROTO_MSG_BATCH;
	seed.u.batch = (struct proto_batch){0x1234, 1, 3, 0, data, sizeof(data)};
	seed_write(dir, "batch-raw", 1);
	seed_write(dir, "batch", 0);
	seed.type = PROTO_MSG_ACK;
	seed.u.ack = (struct proto_ack){0x1234, 1};
	seed_write(dir, "ack", 0);
	seed.type = PROTO_MSG_PING;
	seed.u.ping = (struct proto_ping){1, 1000};
	seed_write(dir, "ping", 0);
	seed.type = PROTO_MSG_PONG;
	seed.u.pong = (struct proto_pong){1, 1000, 1500, 1600};
	seed_write(dir, "pong", 0);
	seed.type = PROTO_MSG_CLOCK;
	seed.u.clock.child = 0x1234;
	seed.u.clock.parent = 9;
	seed.u.clock.phase = 1;
	seed.u.clock.n = 2;
	seed.u.clock.sample[0] = (struct proto_clock_sample){1, 2, 3, 4};
	seed.u.clock.sample[1] = (struct proto_clock_sample){5, 6, 7, 8};
	seed_write(dir, "clock", 0);
	seed.type = PROTO_MSG_META;
	seed.u.meta.id = 0x1234;
	seed.u.meta.n = 2;
	strcpy(seed.u.meta.kv[0].key, "host");
	strcpy(seed.u.meta.kv[0].value, "node-1");
	strcpy(seed.u.meta.kv[1].key, "argv");
	strcpy(seed.u.meta.kv[1].value, "app -n 4");
	seed_write(dir, "meta", 0);
	seed.type = PROTO_MSG_STATS;
	seed_write(dir, "stats-raw", 1);
	seed.type = PROTO_MSG_LOSS;
	seed.u.loss = (struct proto_loss){0x1234, 10, 2, 3};
	seed_write(dir, "loss", 0);
	seed.type = PROTO_MSG_BYE;
	seed.u.bye = (struct proto_bye){0x1234, 1, 0};
	seed_write(dir, "bye", 0);
	seed.type = PROTO_MSG_ERROR;
	seed.u.error.code = PROTO_E_AUTH;
	strcpy(seed.u.error.message, "authentication failed");
	seed_write(dir, "error", 0);
	return 0;
}
#endif
