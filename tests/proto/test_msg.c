/*
 * tests/proto/test_msg.c - suite "msg": every payload round trip with edge
 * values, byte-exact layouts from docs/PROTOCOL.md, and every malformed
 * class with its distinct code. struct proto_msg is ~300 KiB: heap only.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

static struct proto_msg *msg_new(uint8_t type)
{
	struct proto_msg *m = calloc(1, sizeof(*m));

	cr_assert_not_null(m);
	m->type = type;
	return m;
}

/* ---- a raw payload builder for hand-made (malformed) payloads ---------- */

struct raw {
	uint8_t b[300000];
	size_t n;
};

static struct raw *raw_new(void)
{
	struct raw *r = calloc(1, sizeof(*r));

	cr_assert_not_null(r);
	return r;
}

static void r8(struct raw *r, uint8_t v)
{
	r->b[r->n++] = v;
}

static void r16(struct raw *r, uint16_t v)
{
	r8(r, (uint8_t)v);
	r8(r, (uint8_t)(v >> 8));
}

static void r32(struct raw *r, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		r8(r, (uint8_t)(v >> (8 * i)));
}

static void r64(struct raw *r, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		r8(r, (uint8_t)(v >> (8 * i)));
}

static void rbytes(struct raw *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

/* u16 length n, then n bytes of c */
static void rstr(struct raw *r, size_t n, char c)
{
	r16(r, (uint16_t)n);
	memset(r->b + r->n, c, n);
	r->n += n;
}

static int decode_raw(uint8_t type, const uint8_t *p, size_t n,
		      struct proto_msg *m)
{
	struct proto_frame f = {type, PROTO_VERSION, (uint32_t)n, p};

	return proto_msg_decode(&f, m);
}

/* ---- round trip -------------------------------------------------------- */

/* Frame m, decode the frame and the payload, compare; the payload must be
 * exactly `size` bytes and re-encode to the same bytes. Every shorter
 * prefix of the payload must fail (PROTO_E_LENGTH unless BATCH). */
static void round_trip(const struct proto_msg *m, size_t size)
{
	struct proto_msg *d = msg_new(0), *d2 = msg_new(0);
	uint8_t *buf = NULL, *again;
	struct proto_frame f;
	size_t len = 0, used, w;
	int rc;

	rc = proto_msg_frame_alloc(m, &buf, &len);
	cr_assert_eq(rc, 0, "%s: %s", proto_msg_name(m->type),
		     proto_errname(rc));
	cr_assert_eq(len, PROTO_FRAME_HDR + size, "%s: %zu != %zu",
		     proto_msg_name(m->type), len, PROTO_FRAME_HDR + size);
	cr_assert_eq(proto_frame_decode(buf, len, 0, &f, &used), 0);
	cr_assert_eq(used, len);
	cr_assert_eq(f.type, m->type);
	rc = proto_msg_decode(&f, d);
	cr_assert_eq(rc, 0, "%s: %s", proto_msg_name(m->type),
		     proto_errname(rc));
	cr_assert(proto_msg_equal(m, d), "%s differs", proto_msg_name(m->type));
	cr_assert(proto_msg_equal(d, m));

	/* canonical: re-encoding gives the same payload bytes */
	again = malloc(size + 1);
	cr_assert_not_null(again);
	cr_assert_eq(proto_msg_encode(d, again, size + 1, &w), 0);
	cr_assert_eq(w, size);
	cr_assert_eq(memcmp(again, f.payload, size), 0);

	/* strict length: every prefix fails, one extra byte fails */
	if (m->type != PROTO_MSG_BATCH) {
		for (size_t k = 0; k < size; k++) {
			rc = decode_raw(m->type, f.payload, k, d2);
			cr_assert_eq(rc, PROTO_E_LENGTH, "%s prefix %zu: %s",
				     proto_msg_name(m->type), k,
				     proto_errname(rc));
		}
		memcpy(again, f.payload, size);
		again[size] = 0;
		cr_assert_eq(decode_raw(m->type, again, size + 1, d2),
			     PROTO_E_LENGTH);
	} else {
		for (size_t k = 0; k <= PROTO_BATCH_HDR; k++)
			cr_assert_eq(decode_raw(m->type, f.payload, k, d2),
				     PROTO_E_LENGTH);
	}

	/* too small buffers: PROTO_E_FULL and the size needed */
	for (size_t cap = 0; cap < size; cap += (size > 300 ? size / 97 : 1)) {
		w = 0;
		cr_assert_eq(proto_msg_encode(m, again, cap, &w), PROTO_E_FULL);
		cr_assert_eq(w, size);
	}
	cr_assert_eq(proto_msg_encode(m, NULL, 0, &w), PROTO_E_FULL);
	cr_assert_eq(w, size);
	for (size_t cap = 0; cap < PROTO_FRAME_HDR + size;
	     cap += (size > 300 ? size / 97 : 1)) {
		cr_assert_eq(proto_msg_frame(m, buf, cap, &w), PROTO_E_FULL);
		cr_assert_eq(w, PROTO_FRAME_HDR + size);
	}
	free(again);
	free(buf);
	free(d);
	free(d2);
}

static void fill(void *p, size_t n, uint8_t seed)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 31);
}

Test(msg, hello_round_trip)
{
	struct proto_msg *m = msg_new(PROTO_MSG_HELLO);
	struct proto_hello *h = &m->u.hello;

	for (uint8_t role = PROTO_ROLE_SENSOR; role <= PROTO_ROLE_STATUS;
	     role++) {
		h->role = role;
		h->pid = 4242;
		h->id = 0x0123456789abcdefull;
		h->rank = -1;
		h->flags = 0xffffffffu;
		fill(h->nonce, PROTO_NONCE, role);
		strcpy(h->host, "node-1");
		strcpy(h->name, "/usr/bin/app");
		round_trip(m, 56 + 2 + 6 + 2 + 12);
	}
	/* empty strings, extreme numbers */
	h->host[0] = h->name[0] = '\0';
	h->pid = UINT32_MAX;
	h->id = 0;
	h->rank = INT32_MAX;
	round_trip(m, 60);
	/* strings at their maximum, bytes above 0x7f */
	memset(h->host, 'h', PROTO_HOST_MAX);
	h->host[PROTO_HOST_MAX] = '\0';
	memset(h->name, 0xe9, PROTO_NAME_MAX);
	h->name[PROTO_NAME_MAX] = '\0';
	round_trip(m, 60 + PROTO_HOST_MAX + PROTO_NAME_MAX);
	free(m);
}

Test(msg, small_fixed_round_trips)
{
	struct proto_msg *m = msg_new(PROTO_MSG_CHALLENGE);

	m->u.challenge.flags = PROTO_AUTH_REQUIRED;
	fill(m->u.challenge.nonce, PROTO_NONCE, 1);
	round_trip(m, 36);

	m->type = PROTO_MSG_AUTH;
	fill(m->u.auth.mac, PROTO_MAC, 2);
	round_trip(m, 32);

	m->type = PROTO_MSG_WELCOME;
	m->u.welcome.flags = 0;
	m->u.welcome.node_id = UINT64_MAX;
	fill(m->u.welcome.mac, PROTO_MAC, 3);
	round_trip(m, 44);

	m->type = PROTO_MSG_ACK;
	m->u.ack.stream = 1;
	m->u.ack.seq = 0;	/* nothing acknowledged yet: allowed */
	round_trip(m, 16);
	m->u.ack.stream = UINT64_MAX;
	m->u.ack.seq = UINT64_MAX;
	round_trip(m, 16);

	m->type = PROTO_MSG_PING;
	m->u.ping.id = 7;
	m->u.ping.t_send = 123456789012345ull;
	round_trip(m, 16);

	m->type = PROTO_MSG_PONG;
	m->u.pong.id = 7;
	m->u.pong.t_orig = 1;
	m->u.pong.t_recv = UINT64_MAX;
	m->u.pong.t_send = 0;
	round_trip(m, 32);

	m->type = PROTO_MSG_LOSS;
	m->u.loss.stream = 9;
	m->u.loss.dropped = 0;
	m->u.loss.first_seq = m->u.loss.last_seq = 0;
	round_trip(m, 32);
	m->u.loss.dropped = UINT64_MAX;
	m->u.loss.first_seq = 3;
	m->u.loss.last_seq = 3;
	round_trip(m, 32);
	m->u.loss.last_seq = UINT64_MAX;
	round_trip(m, 32);

	m->type = PROTO_MSG_BYE;
	for (uint32_t reason = 0; reason <= 2; reason++) {
		m->u.bye.stream = 5;
		m->u.bye.last_seq = reason ? 100 : 0;
		m->u.bye.reason = reason;
		round_trip(m, 20);
	}
	free(m);
}

Test(msg, batch_round_trip)
{
	struct proto_msg *m = msg_new(PROTO_MSG_BATCH);
	uint8_t *data = malloc(200000);

	cr_assert_not_null(data);
	fill(data, 200000, 5);
	m->u.batch.stream = 0xfeedfacecafebeefull;
	m->u.batch.seq = 1;
	m->u.batch.nrecords = 0;
	m->u.batch.flags = 0;
	m->u.batch.data = data;
	m->u.batch.datalen = 1;
	round_trip(m, 25);
	m->u.batch.seq = UINT64_MAX;
	m->u.batch.nrecords = PROTO_CODEC_MAX_RECORDS;
	m->u.batch.flags = 0x80000001u;
	m->u.batch.datalen = 200000;
	round_trip(m, 200024);
	free(data);
	free(m);
}

Test(msg, batch_data_points_into_payload)
{
	struct proto_msg *m = msg_new(PROTO_MSG_BATCH), *d = msg_new(0);
	uint8_t data[40], buf[100];
	struct proto_frame f;
	size_t w, used;

	fill(data, sizeof(data), 8);
	m->u.batch = (struct proto_batch){1, 2, 3, 4, data, sizeof(data)};
	cr_assert_eq(proto_msg_frame(m, buf, sizeof(buf), &w), 0);
	cr_assert_eq(w, 16 + 24 + 40u);
	cr_assert_eq(proto_frame_decode(buf, w, 0, &f, &used), 0);
	cr_assert_eq(proto_msg_decode(&f, d), 0);
	cr_assert_eq(d->u.batch.data, buf + 16 + PROTO_BATCH_HDR);
	cr_assert_eq(d->u.batch.datalen, 40u);
	free(m);
	free(d);
}

Test(msg, clock_round_trip)
{
	struct proto_msg *m = msg_new(PROTO_MSG_CLOCK);
	struct proto_clock *c = &m->u.clock;

	c->child = 11;
	c->parent = 22;
	for (uint32_t ph = 0; ph <= 2; ph++) {
		c->phase = ph;
		c->n = 0;
		round_trip(m, 24);
	}
	c->n = 1;
	c->sample[0] = (struct proto_clock_sample){1, 2, 3, 4};
	round_trip(m, 56);
	c->n = PROTO_CLOCK_MAX;
	for (uint32_t i = 0; i < c->n; i++)
		c->sample[i] = (struct proto_clock_sample){
			i, (uint64_t)i << 32, UINT64_MAX - i, i * 3ull};
	round_trip(m, 24 + 32 * PROTO_CLOCK_MAX);
	free(m);
}

static void meta_round_trip(uint8_t type)
{
	struct proto_msg *m = msg_new(type);
	struct proto_meta *mt = &m->u.meta;
	size_t size;

	mt->id = 77;
	mt->n = 0;
	round_trip(m, 12);
	mt->n = 2;
	strcpy(mt->kv[0].key, "host");
	strcpy(mt->kv[0].value, "node-1");
	strcpy(mt->kv[1].key, "argv");
	mt->kv[1].value[0] = '\0';
	round_trip(m, 12 + (4 + 4 + 6) + (4 + 4 + 0));
	/* the largest META: every pair at its maximum */
	mt->n = PROTO_META_MAX;
	size = 12;
	for (uint32_t i = 0; i < mt->n; i++) {
		memset(mt->kv[i].key, 'a' + i % 26, PROTO_KEY_MAX);
		mt->kv[i].key[PROTO_KEY_MAX] = '\0';
		memset(mt->kv[i].value, 'v', PROTO_VALUE_MAX);
		mt->kv[i].value[PROTO_VALUE_MAX] = '\0';
		size += 4 + PROTO_KEY_MAX + PROTO_VALUE_MAX;
	}
	round_trip(m, size);
	free(m);
}

Test(msg, meta_round_trip)
{
	meta_round_trip(PROTO_MSG_META);
}

Test(msg, stats_round_trip)
{
	meta_round_trip(PROTO_MSG_STATS);
}

Test(msg, error_round_trip)
{
	struct proto_msg *m = msg_new(PROTO_MSG_ERROR);

	m->u.error.code = PROTO_E_AUTH;
	strcpy(m->u.error.message, "authentication failed");
	round_trip(m, 6 + 21);
	m->u.error.code = INT32_MIN;
	m->u.error.message[0] = '\0';
	round_trip(m, 6);
	memset(m->u.error.message, 'e', PROTO_VALUE_MAX);
	m->u.error.message[PROTO_VALUE_MAX] = '\0';
	round_trip(m, 6 + PROTO_VALUE_MAX);
	free(m);
}

/* ---- byte-exact layouts (docs/PROTOCOL.md) ----------------------------- */

static void expect_payload(const struct proto_msg *m, const struct raw *r)
{
	uint8_t out[512];
	size_t w;

	cr_assert_eq(proto_msg_encode(m, out, sizeof(out), &w), 0);
	cr_assert_eq(w, r->n, "%s: %zu != %zu", proto_msg_name(m->type), w,
		     r->n);
	cr_assert_eq(memcmp(out, r->b, w), 0, "%s layout",
		     proto_msg_name(m->type));
}

Test(msg, layouts_byte_exact)
{
	struct proto_msg *m = msg_new(PROTO_MSG_HELLO);
	struct raw *r = raw_new();
	uint8_t nonce[PROTO_NONCE];

	fill(nonce, sizeof(nonce), 42);
	m->u.hello = (struct proto_hello){.role = PROTO_ROLE_COLLECTOR,
		.pid = 0x01020304, .id = 0x1112131415161718ull, .rank = -1,
		.flags = 0xa0b0c0d0};
	memcpy(m->u.hello.nonce, nonce, PROTO_NONCE);
	strcpy(m->u.hello.host, "h1");
	strcpy(m->u.hello.name, "abc");
	r8(r, 2);
	r8(r, 0);
	r16(r, 0);
	r32(r, 0x01020304);
	r64(r, 0x1112131415161718ull);
	r32(r, 0xffffffffu);
	r32(r, 0xa0b0c0d0);
	rbytes(r, nonce, PROTO_NONCE);
	rbytes(r, "\x02\x00h1\x03\x00" "abc", 9);
	expect_payload(m, r);

	m->type = PROTO_MSG_BATCH;
	m->u.batch = (struct proto_batch){0x0102, 0x0304, 5, 6,
					  (const uint8_t *)"xyz", 3};
	r->n = 0;
	r64(r, 0x0102);
	r64(r, 0x0304);
	r32(r, 5);
	r32(r, 6);
	rbytes(r, "xyz", 3);
	expect_payload(m, r);

	m->type = PROTO_MSG_CLOCK;
	m->u.clock.child = 1;
	m->u.clock.parent = 2;
	m->u.clock.phase = 2;
	m->u.clock.n = 1;
	m->u.clock.sample[0] = (struct proto_clock_sample){10, 11, 12, 13};
	r->n = 0;
	r64(r, 1);
	r64(r, 2);
	r32(r, 2);
	r32(r, 1);
	r64(r, 10);
	r64(r, 11);
	r64(r, 12);
	r64(r, 13);
	expect_payload(m, r);

	m->type = PROTO_MSG_META;
	m->u.meta.id = 3;
	m->u.meta.n = 1;
	strcpy(m->u.meta.kv[0].key, "k");
	strcpy(m->u.meta.kv[0].value, "vv");
	r->n = 0;
	r64(r, 3);
	r32(r, 1);
	rbytes(r, "\x01\x00k\x02\x00vv", 7);
	expect_payload(m, r);

	m->type = PROTO_MSG_BYE;
	m->u.bye = (struct proto_bye){4, 5, 1};
	r->n = 0;
	r64(r, 4);
	r64(r, 5);
	r32(r, 1);
	expect_payload(m, r);

	m->type = PROTO_MSG_ERROR;
	m->u.error.code = -18;
	strcpy(m->u.error.message, "no");
	r->n = 0;
	r32(r, 0xffffffeeu);
	rbytes(r, "\x02\x00no", 4);
	expect_payload(m, r);

	m->type = PROTO_MSG_WELCOME;
	m->u.welcome.flags = 1;
	m->u.welcome.node_id = 2;
	memcpy(m->u.welcome.mac, nonce, PROTO_MAC);
	r->n = 0;
	r32(r, 1);
	r64(r, 2);
	rbytes(r, nonce, PROTO_MAC);
	expect_payload(m, r);
	free(m);
	free(r);
}

/* ---- malformed payloads ------------------------------------------------ */

/* A valid HELLO with the given role, host and name lengths. */
static void raw_hello(struct raw *r, uint8_t role, size_t host, size_t name)
{
	uint8_t nonce[PROTO_NONCE] = {0};

	r->n = 0;
	r8(r, role);
	r8(r, 0);
	r16(r, 0);
	r32(r, 1);
	r64(r, 2);
	r32(r, 3);
	r32(r, 0);
	rbytes(r, nonce, PROTO_NONCE);
	rstr(r, host, 'h');
	rstr(r, name, 'n');
}

#define expect(rc_, want_) do {                                              \
	int rc__ = (rc_);                                                      \
	cr_assert_eq(rc__, (want_), "line %d: %s, want %s", __LINE__,          \
		     proto_errname(rc__), proto_errname(want_));               \
} while (0)

Test(msg, hello_malformed)
{
	struct proto_msg *m = msg_new(0);
	struct raw *r = raw_new();

	raw_hello(r, PROTO_ROLE_SENSOR, PROTO_HOST_MAX, PROTO_NAME_MAX);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), 0);
	raw_hello(r, PROTO_ROLE_SENSOR, PROTO_HOST_MAX + 1, 0);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_TOOBIG);
	raw_hello(r, PROTO_ROLE_SENSOR, 0, PROTO_NAME_MAX + 1);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_TOOBIG);
	raw_hello(r, PROTO_ROLE_SENSOR, 0, 65535);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_TOOBIG);
	raw_hello(r, 0, 1, 1);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	raw_hello(r, PROTO_ROLE_STATUS + 1, 1, 1);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	raw_hello(r, 255, 1, 1);
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	/* reserved bytes must be 0 */
	for (int at = 1; at < 4; at++) {
		raw_hello(r, PROTO_ROLE_SENSOR, 1, 1);
		r->b[at] = 1;
		expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m),
		       PROTO_E_FIELD);
	}
	/* rank below -1 */
	raw_hello(r, PROTO_ROLE_SENSOR, 1, 1);
	r->b[16] = 0xfe;
	r->b[17] = r->b[18] = r->b[19] = 0xff;
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	r->b[16] = 0xff;
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), 0);
	cr_assert_eq(m->u.hello.rank, -1);
	/* a NUL inside a string */
	raw_hello(r, PROTO_ROLE_SENSOR, 3, 3);
	r->b[56 + 2 + 1] = 0;
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	raw_hello(r, PROTO_ROLE_SENSOR, 3, 3);
	r->b[r->n - 1] = 0;
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_FIELD);
	/* a string length running past the payload */
	raw_hello(r, PROTO_ROLE_SENSOR, 3, 3);
	r->b[r->n - 5] = 4;
	expect(decode_raw(PROTO_MSG_HELLO, r->b, r->n, m), PROTO_E_LENGTH);
	free(m);
	free(r);
}

Test(msg, batch_malformed)
{
	struct proto_msg *m = msg_new(0);
	struct raw *r = raw_new();

	r64(r, 0);	/* stream 0 */
	r64(r, 1);
	r32(r, 1);
	r32(r, 0);
	r8(r, 0xaa);
	expect(decode_raw(PROTO_MSG_BATCH, r->b, r->n, m), PROTO_E_FIELD);
	r->b[0] = 1;
	expect(decode_raw(PROTO_MSG_BATCH, r->b, r->n, m), 0);
	r->b[8] = 0;	/* seq 0 */
	expect(decode_raw(PROTO_MSG_BATCH, r->b, r->n, m), PROTO_E_FIELD);
	r->b[8] = 1;
	r->b[16] = 0x01;	/* nrecords = 2^20 + 1 */
	r->b[17] = 0x00;
	r->b[18] = 0x10;
	expect(decode_raw(PROTO_MSG_BATCH, r->b, r->n, m), PROTO_E_TOOBIG);
	r->b[16] = 0;	/* exactly the maximum */
	expect(decode_raw(PROTO_MSG_BATCH, r->b, r->n, m), 0);
	cr_assert_eq(m->u.batch.nrecords, PROTO_CODEC_MAX_RECORDS);
	/* no codec data */
	expect(decode_raw(PROTO_MSG_BATCH, r->b, PROTO_BATCH_HDR, m),
	       PROTO_E_LENGTH);
	free(m);
	free(r);
}

Test(msg, enums_and_ranges_malformed)
{
	struct proto_msg *m = msg_new(0);
	struct raw *r = raw_new();

	/* CLOCK phase 3 */
	r64(r, 1);
	r64(r, 2);
	r32(r, 3);
	r32(r, 0);
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, r->n, m), PROTO_E_FIELD);
	r->b[16] = 2;
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, r->n, m), 0);
	/* BYE reason 3, stream 0 */
	r->n = 0;
	r64(r, 1);
	r64(r, 2);
	r32(r, 3);
	expect(decode_raw(PROTO_MSG_BYE, r->b, r->n, m), PROTO_E_FIELD);
	r->b[16] = 2;
	expect(decode_raw(PROTO_MSG_BYE, r->b, r->n, m), 0);
	r->b[0] = 0;
	expect(decode_raw(PROTO_MSG_BYE, r->b, r->n, m), PROTO_E_FIELD);
	/* ACK stream 0 */
	r->n = 0;
	r64(r, 0);
	r64(r, 5);
	expect(decode_raw(PROTO_MSG_ACK, r->b, r->n, m), PROTO_E_FIELD);
	/* LOSS: stream 0, inverted range, half-empty range */
	static const uint64_t loss[][3] = {
		{0, 0, 0}, {1, 5, 4}, {1, 0, 5}, {1, 5, 0},
	};
	for (size_t i = 0; i < sizeof(loss) / sizeof(loss[0]); i++) {
		r->n = 0;
		r64(r, loss[i][0]);
		r64(r, 10);
		r64(r, loss[i][1]);
		r64(r, loss[i][2]);
		expect(decode_raw(PROTO_MSG_LOSS, r->b, r->n, m),
		       PROTO_E_FIELD);
	}
	/* ERROR with a code >= 0 */
	r->n = 0;
	r32(r, 0);
	rstr(r, 2, 'x');
	expect(decode_raw(PROTO_MSG_ERROR, r->b, r->n, m), PROTO_E_FIELD);
	r->b[0] = 5;
	expect(decode_raw(PROTO_MSG_ERROR, r->b, r->n, m), PROTO_E_FIELD);
	r->n = 0;
	r32(r, (uint32_t)PROTO_E_STATE);
	rstr(r, PROTO_VALUE_MAX + 1, 'x');
	expect(decode_raw(PROTO_MSG_ERROR, r->b, r->n, m), PROTO_E_TOOBIG);
	free(m);
	free(r);
}

Test(msg, counts_over_max)
{
	struct proto_msg *m = msg_new(0);
	struct raw *r = raw_new();

	r64(r, 1);
	r64(r, 2);
	r32(r, 0);
	r32(r, PROTO_CLOCK_MAX + 1);
	for (int i = 0; i < (PROTO_CLOCK_MAX + 1) * 4; i++)
		r64(r, (uint64_t)i);
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, r->n, m), PROTO_E_TOOBIG);
	r->b[20] = 0xff;	/* n = 0xffffffff, nothing following */
	r->b[21] = r->b[22] = r->b[23] = 0xff;
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, 24, m), PROTO_E_TOOBIG);
	/* CLOCK n and length disagree */
	r->b[20] = 2;
	r->b[21] = r->b[22] = r->b[23] = 0;
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, 24 + 32, m), PROTO_E_LENGTH);
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, 24 + 96, m), PROTO_E_LENGTH);
	expect(decode_raw(PROTO_MSG_CLOCK, r->b, 24 + 64, m), 0);

	for (uint8_t t = PROTO_MSG_STATS; t <= PROTO_MSG_META; t += 2) {
		r->n = 0;
		r64(r, 1);
		r32(r, PROTO_META_MAX + 1);
		for (int i = 0; i < PROTO_META_MAX + 1; i++) {
			rstr(r, 1, 'k');
			rstr(r, 1, 'v');
		}
		expect(decode_raw(t, r->b, r->n, m), PROTO_E_TOOBIG);
		r->b[8] = PROTO_META_MAX;
		expect(decode_raw(t, r->b, r->n, m), PROTO_E_LENGTH);
		expect(decode_raw(t, r->b, r->n - 6, m), 0);
	}
	free(m);
	free(r);
}

Test(msg, meta_strings_malformed)
{
	struct proto_msg *m = msg_new(0);
	struct raw *r = raw_new();
	struct {
		size_t klen, vlen;
		int nul_in_key, nul_in_value, want;
	} cases[] = {
		{1, 1, 0, 0, 0},
		{PROTO_KEY_MAX, PROTO_VALUE_MAX, 0, 0, 0},
		{PROTO_KEY_MAX + 1, 1, 0, 0, PROTO_E_TOOBIG},
		{1, PROTO_VALUE_MAX + 1, 0, 0, PROTO_E_TOOBIG},
		{0, 1, 0, 0, PROTO_E_FIELD},	/* empty key */
		{1, 0, 0, 0, 0},		/* empty value is fine */
		{3, 3, 1, 0, PROTO_E_FIELD},
		{3, 3, 0, 1, PROTO_E_FIELD},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r->n = 0;
		r64(r, 1);
		r32(r, 2);
		rstr(r, 2, 'a');
		rstr(r, 2, 'b');
		rstr(r, cases[i].klen, 'k');
		if (cases[i].nul_in_key)
			r->b[r->n - 2] = 0;
		rstr(r, cases[i].vlen, 'v');
		if (cases[i].nul_in_value)
			r->b[r->n - 1] = 0;
		expect(decode_raw(PROTO_MSG_META, r->b, r->n, m), cases[i].want);
		expect(decode_raw(PROTO_MSG_STATS, r->b, r->n, m),
		       cases[i].want);
	}
	free(m);
	free(r);
}

Test(msg, fixed_sizes_short_and_long)
{
	static const struct {
		uint8_t type;
		size_t size;
	} fixed[] = {
		{PROTO_MSG_CHALLENGE, 36}, {PROTO_MSG_AUTH, 32},
		{PROTO_MSG_WELCOME, 44}, {PROTO_MSG_ACK, 16},
		{PROTO_MSG_PING, 16}, {PROTO_MSG_PONG, 32},
		{PROTO_MSG_LOSS, 32}, {PROTO_MSG_BYE, 20},
		{PROTO_MSG_KEY, 140}, {PROTO_MSG_VERDICT, 44},
	};
	struct proto_msg *m = msg_new(0);
	uint8_t buf[160];

	memset(buf, 0, sizeof(buf));
	buf[0] = 1;	/* stream 1 where there is one */
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		for (size_t n = 0; n < sizeof(buf); n++)
			expect(decode_raw(fixed[i].type, buf, n, m),
			       n == fixed[i].size ? 0 : PROTO_E_LENGTH);
	}
	free(m);
}

Test(msg, decode_bad_type_and_args)
{
	struct proto_msg *m = msg_new(0);
	struct proto_frame f = {0, PROTO_VERSION, 0, NULL};
	uint8_t b[8] = {0};

	expect(proto_msg_decode(&f, m), PROTO_E_TYPE);
	f.type = PROTO_MSG__MAX + 1;
	expect(proto_msg_decode(&f, m), PROTO_E_TYPE);
	f.type = PROTO_MSG_PING;
	f.length = 16;
	expect(proto_msg_decode(&f, m), PROTO_E_ARG);
	expect(proto_msg_decode(NULL, m), PROTO_E_ARG);
	f.payload = b;
	f.length = 8;
	expect(proto_msg_decode(&f, NULL), PROTO_E_ARG);
	free(m);
}

/* ---- the encoder refuses what the decoder refuses ---------------------- */

static int enc(const struct proto_msg *m)
{
	uint8_t *buf = NULL;
	size_t len = 99;
	int rc = proto_msg_frame_alloc(m, &buf, &len);

	if (rc) {
		cr_assert_null(buf);
		cr_assert_eq(len, 0u);
	}
	free(buf);
	return rc;
}

Test(msg, encoder_refuses_invalid)
{
	struct proto_msg *m = msg_new(0);
	uint8_t data[4] = {1, 2, 3, 4};

	expect(enc(m), PROTO_E_TYPE);
	m->type = PROTO_MSG__MAX + 1;
	expect(enc(m), PROTO_E_TYPE);

	m->type = PROTO_MSG_HELLO;
	m->u.hello.role = 0;
	expect(enc(m), PROTO_E_FIELD);
	m->u.hello.role = PROTO_ROLE_SENSOR;
	m->u.hello.rank = -2;
	expect(enc(m), PROTO_E_FIELD);
	m->u.hello.rank = 0;
	expect(enc(m), 0);
	memset(m->u.hello.host, 'x', sizeof(m->u.hello.host));	/* no NUL */
	expect(enc(m), PROTO_E_TOOBIG);
	m->u.hello.host[0] = '\0';
	memset(m->u.hello.name, 'x', sizeof(m->u.hello.name));
	expect(enc(m), PROTO_E_TOOBIG);

	m->type = PROTO_MSG_BATCH;
	m->u.batch = (struct proto_batch){1, 1, 1, 0, data, 4};
	expect(enc(m), 0);
	m->u.batch.seq = 0;
	expect(enc(m), PROTO_E_FIELD);
	m->u.batch.seq = 1;
	m->u.batch.stream = 0;
	expect(enc(m), PROTO_E_FIELD);
	m->u.batch.stream = 1;
	m->u.batch.datalen = 0;
	expect(enc(m), PROTO_E_LENGTH);
	m->u.batch.datalen = PROTO_FRAME_MAX - PROTO_BATCH_HDR + 1;
	expect(enc(m), PROTO_E_TOOBIG);
	m->u.batch.datalen = 4;
	m->u.batch.nrecords = PROTO_CODEC_MAX_RECORDS + 1;
	expect(enc(m), PROTO_E_TOOBIG);
	m->u.batch.nrecords = 1;
	m->u.batch.data = NULL;
	expect(enc(m), PROTO_E_ARG);

	m->type = PROTO_MSG_CLOCK;
	m->u.clock.phase = 3;
	m->u.clock.n = 0;
	expect(enc(m), PROTO_E_FIELD);
	m->u.clock.phase = 0;
	m->u.clock.n = PROTO_CLOCK_MAX + 1;
	expect(enc(m), PROTO_E_TOOBIG);

	m->type = PROTO_MSG_META;
	memset(&m->u.meta, 0, sizeof(m->u.meta));
	m->u.meta.n = PROTO_META_MAX + 1;
	expect(enc(m), PROTO_E_TOOBIG);
	m->u.meta.n = 1;
	expect(enc(m), PROTO_E_FIELD);	/* empty key */
	strcpy(m->u.meta.kv[0].key, "k");
	expect(enc(m), 0);
	memset(m->u.meta.kv[0].key, 'k', sizeof(m->u.meta.kv[0].key));
	expect(enc(m), PROTO_E_TOOBIG);
	strcpy(m->u.meta.kv[0].key, "k");
	memset(m->u.meta.kv[0].value, 'v', sizeof(m->u.meta.kv[0].value));
	expect(enc(m), PROTO_E_TOOBIG);

	m->type = PROTO_MSG_ACK;
	m->u.ack = (struct proto_ack){0, 1};
	expect(enc(m), PROTO_E_FIELD);
	m->type = PROTO_MSG_LOSS;
	m->u.loss = (struct proto_loss){1, 1, 2, 1};
	expect(enc(m), PROTO_E_FIELD);
	m->type = PROTO_MSG_BYE;
	m->u.bye = (struct proto_bye){1, 1, 3};
	expect(enc(m), PROTO_E_FIELD);
	m->type = PROTO_MSG_ERROR;
	m->u.error.code = 0;
	m->u.error.message[0] = '\0';
	expect(enc(m), PROTO_E_FIELD);
	m->u.error.code = -1;
	memset(m->u.error.message, 'e', sizeof(m->u.error.message));
	expect(enc(m), PROTO_E_TOOBIG);

	expect(proto_msg_encode(NULL, NULL, 0, NULL), PROTO_E_ARG);
	expect(proto_msg_frame_alloc(m, NULL, NULL), PROTO_E_ARG);
	free(m);
}

/* A validation error wins over a full buffer: a caller measuring with
 * cap 0 learns that the message is bad, not a size. */
Test(msg, field_error_before_full)
{
	struct proto_msg *m = msg_new(PROTO_MSG_BYE);
	size_t w = 7;

	m->u.bye = (struct proto_bye){1, 1, 9};
	expect(proto_msg_encode(m, NULL, 0, &w), PROTO_E_FIELD);
	cr_assert_eq(w, 0u);
	expect(proto_msg_frame(m, NULL, 0, &w), PROTO_E_FIELD);
	free(m);
}

/* The names of the message decoder's codes: tests/proto/test_frame.c,
 * errnames_of_every_code_distinct. */

Test(msg, equal_distinguishes)
{
	struct proto_msg *a = msg_new(PROTO_MSG_PONG), *b = msg_new(PROTO_MSG_PONG);

	cr_assert(proto_msg_equal(a, b));
	b->u.pong.t_send = 1;
	cr_assert_not(proto_msg_equal(a, b));
	b->u.pong.t_send = 0;
	b->type = PROTO_MSG_PING;
	cr_assert_not(proto_msg_equal(a, b));
	a->type = b->type = 0;
	cr_assert_not(proto_msg_equal(a, b));
	free(a);
	free(b);
}

/* proto_msg_frame_buf: the caller's buffer when the frame fits, an exact
 * allocation when it does not, the encoder's code on a bad message. */
Test(msg, frame_buf_small_then_allocated)
{
	struct proto_msg *m = calloc(1, sizeof(*m));
	uint8_t small[64], *out;
	size_t len, want;
	struct proto_frame f;
	size_t used;

	cr_assert_not_null(m);
	m->type = PROTO_MSG_ACK;
	m->u.ack.stream = 7;
	m->u.ack.seq = 3;
	cr_assert_eq(proto_msg_frame_buf(m, small, sizeof(small), &out, &len), 0);
	cr_assert_eq(out, small);
	cr_assert_eq(len, PROTO_FRAME_HDR + 16);
	memset(m, 0, sizeof(*m));
	m->type = PROTO_MSG_META;
	m->u.meta.id = 1;
	m->u.meta.n = 1;
	strcpy(m->u.meta.kv[0].key, "k");
	memset(m->u.meta.kv[0].value, 'v', 1000);
	cr_assert_eq(proto_msg_frame(m, NULL, 0, &want), PROTO_E_FULL);
	cr_assert_eq(proto_msg_frame_buf(m, small, sizeof(small), &out, &len), 0);
	cr_assert_neq(out, small);
	cr_assert_eq(len, want);
	cr_assert_eq(proto_frame_decode(out, len, 0, &f, &used), 0);
	cr_assert_eq(used, len);
	free(out);
	m->u.meta.kv[0].key[0] = '\0';	/* an empty key is refused */
	cr_assert_eq(proto_msg_frame_buf(m, small, sizeof(small), &out, &len), PROTO_E_FIELD);
	free(m);
}

/* A key's value, the last one when it repeats, NULL when absent. */
Test(msg, meta_get)
{
	struct proto_msg *m = msg_new(PROTO_MSG_META);
	struct proto_meta *mt = &m->u.meta;
	const char *kv[][2] = {{"host", "a"}, {"rank", "3"}, {"host", "b"}};

	cr_assert_null(proto_meta_get(mt, "host"));
	for (size_t i = 0; i < 3; i++) {
		strcpy(mt->kv[i].key, kv[i][0]);
		strcpy(mt->kv[i].value, kv[i][1]);
	}
	mt->n = 3;
	cr_assert_str_eq(proto_meta_get(mt, "host"), "b");
	cr_assert_str_eq(proto_meta_get(mt, "rank"), "3");
	cr_assert_null(proto_meta_get(mt, "ran"));
	cr_assert_null(proto_meta_get(mt, "ranks"));
	free(m);
}

/* docs/PROTOCOL.md, KEY (15) and VERDICT (16): layouts byte for byte, the
 * verifier all zeros without its flag, stream 0 and results over 1
 * refused. */
Test(msg, key_and_verdict)
{
	struct proto_msg *m = msg_new(PROTO_MSG_KEY);
	struct raw *r = raw_new();
	struct proto_key *k = &m->u.key;
	uint8_t b[4][PROTO_MAC];

	for (int i = 0; i < 4; i++)
		fill(b[i], PROTO_MAC, (uint8_t)(10 * i + 1));
	k->stream = 0x0102030405060708ull;
	k->flags = PROTO_KEY_VERIFIER;
	memcpy(k->server_nonce, b[0], PROTO_NONCE);
	memcpy(k->client_nonce, b[1], PROTO_NONCE);
	memcpy(k->verifier, b[2], PROTO_MAC);
	memcpy(k->proof, b[3], PROTO_MAC);
	r64(r, 0x0102030405060708ull);
	r32(r, 1);
	for (int i = 0; i < 4; i++)
		rbytes(r, b[i], PROTO_MAC);
	expect_payload(m, r);
	round_trip(m, 140);
	/* without the verifier's flag its bytes must be 0 */
	k->flags = 0;
	expect(decode_raw(PROTO_MSG_KEY, r->b + 0, 8, m), PROTO_E_LENGTH);
	r->b[8] = 0;
	expect(decode_raw(PROTO_MSG_KEY, r->b, r->n, m), PROTO_E_FIELD);
	memset(r->b + 76, 0, PROTO_MAC);
	expect(decode_raw(PROTO_MSG_KEY, r->b, r->n, m), 0);
	cr_assert_eq(m->u.key.flags, 0);
	round_trip(m, 140);
	memset(r->b, 0, 8);
	expect(decode_raw(PROTO_MSG_KEY, r->b, r->n, m), PROTO_E_FIELD);

	m->type = PROTO_MSG_VERDICT;
	m->u.verdict.stream = 9;
	m->u.verdict.result = PROTO_VERDICT_REFUSED;
	memcpy(m->u.verdict.server_nonce, b[0], PROTO_NONCE);
	r->n = 0;
	r64(r, 9);
	r32(r, 1);
	rbytes(r, b[0], PROTO_NONCE);
	expect_payload(m, r);
	round_trip(m, 44);
	r->b[8] = 2;
	expect(decode_raw(PROTO_MSG_VERDICT, r->b, r->n, m), PROTO_E_FIELD);
	m->u.verdict.result = 2;
	{
		size_t w;
		uint8_t out[64];

		expect(proto_msg_encode(m, out, sizeof(out), &w), PROTO_E_FIELD);
	}
	free(m);
	free(r);
}
