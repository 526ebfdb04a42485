/*
 * proto/msg.c - payload encoders and strict decoders of every message type.
 *
 * Byte layouts: docs/PROTOCOL.md ("Payloads"); the section names below
 * follow it. Everything goes through two cursors: a writer that counts
 * what it could not store (so a too small buffer reports the size needed)
 * and a reader with a sticky error, whose getters check the bounds before
 * every read and return zeros once an error is recorded. The first error
 * in byte order is the one reported; trailing bytes are PROTO_E_LENGTH.
 * Every valid payload has exactly one encoding (reserved bytes must be 0),
 * so encode(decode(p)) == p byte for byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

#define CLOCK_SAMPLE 32	/* bytes per CLOCK sample: 4 x u64 */
#define BYE_REASON_MAX 2
#define CLOCK_PHASE_MAX 2

/* ---- writer ----------------------------------------------------------- */

struct wr {
	uint8_t *p;
	size_t cap;
	size_t pos;		/* may run past cap: then the output is full */
};

static void put_bytes(struct wr *w, const void *src, size_t n)
{
	if (n && w->pos <= w->cap && n <= w->cap - w->pos)
		memcpy(w->p + w->pos, src, n);
	w->pos += n;
}

static void put_u8(struct wr *w, uint8_t v)
{
	put_bytes(w, &v, 1);
}

static void put_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	put_bytes(w, b, sizeof(b));
}

static void put_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, sizeof(b));
}

static void put_u64(struct wr *w, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, sizeof(b));
}

/* A string field: the array holds max + 1 bytes and must hold its NUL
 * within them. Empty strings are PROTO_E_FIELD when nonempty is set. */
static int put_str(struct wr *w, const char *s, size_t max, int nonempty)
{
	size_t n = strnlen(s, max + 1);

	if (n > max)
		return PROTO_E_TOOBIG;
	if (nonempty && n == 0)
		return PROTO_E_FIELD;
	put_u16(w, (uint16_t)n);
	put_bytes(w, s, n);
	return 0;
}

/* ---- reader ----------------------------------------------------------- */

struct rd {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int err;		/* first error, sticky */
};

static void fail(struct rd *r, int rc)
{
	if (!r->err)
		r->err = rc;
}

/* Copies n bytes to dst (when not NULL) and returns their address in the
 * payload, or NULL (and PROTO_E_LENGTH) when fewer than n remain. */
static const uint8_t *get_bytes(struct rd *r, void *dst, size_t n)
{
	const uint8_t *at;

	if (r->err)
		return NULL;
	if (n > r->len - r->pos) {
		fail(r, PROTO_E_LENGTH);
		return NULL;
	}
	at = r->p + r->pos;
	if (dst && n)
		memcpy(dst, at, n);
	r->pos += n;
	return at;
}

static uint8_t get_u8(struct rd *r)
{
	const uint8_t *b = get_bytes(r, NULL, 1);

	return b ? b[0] : 0;
}

static uint16_t get_u16(struct rd *r)
{
	const uint8_t *b = get_bytes(r, NULL, 2);

	return b ? (uint16_t)(b[0] | b[1] << 8) : 0;
}

static uint32_t get_u32(struct rd *r)
{
	const uint8_t *b = get_bytes(r, NULL, 4);
	uint32_t v = 0;

	for (int i = 0; b && i < 4; i++)
		v |= (uint32_t)b[i] << (8 * i);
	return v;
}

static uint64_t get_u64(struct rd *r)
{
	const uint8_t *b = get_bytes(r, NULL, 8);
	uint64_t v = 0;

	for (int i = 0; b && i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* A string: u16 length (<= max, else TOOBIG), bytes without NUL (FIELD),
 * copied to dst[0..max] and NUL-terminated; dst is "" on any error. */
static void get_str(struct rd *r, char *dst, size_t max, int nonempty)
{
	uint16_t n = get_u16(r);
	const uint8_t *b;

	dst[0] = '\0';
	if (r->err)
		return;
	if (n > max) {
		fail(r, PROTO_E_TOOBIG);
		return;
	}
	b = get_bytes(r, NULL, n);
	if (!b)
		return;
	if (memchr(b, 0, n) || (nonempty && n == 0)) {
		fail(r, PROTO_E_FIELD);
		return;
	}
	memcpy(dst, b, n);
	dst[n] = '\0';
}

static void check(struct rd *r, int ok, int rc)
{
	if (!r->err && !ok)
		fail(r, rc);
}

/* ---- field rules shared by encoder and decoder ------------------------- */

static int role_ok(uint8_t role)
{
	return role >= PROTO_ROLE_SENSOR && role <= PROTO_ROLE_STATUS;
}

/* LOSS: first_seq and last_seq both 0 (no batch affected), or a range. */
static int loss_range_ok(const struct proto_loss *l)
{
	if (l->first_seq == 0 || l->last_seq == 0)
		return l->first_seq == l->last_seq;
	return l->first_seq <= l->last_seq;
}

/* ---- encoders ---------------------------------------------------------- */

static int enc_hello(struct wr *w, const struct proto_hello *h)
{
	int rc;

	if (!role_ok(h->role) || h->rank < -1)
		return PROTO_E_FIELD;
	put_u8(w, h->role);
	put_u8(w, 0);
	put_u16(w, 0);
	put_u32(w, h->pid);
	put_u64(w, h->id);
	put_u32(w, (uint32_t)h->rank);
	put_u32(w, h->flags);
	put_bytes(w, h->nonce, PROTO_NONCE);
	rc = put_str(w, h->host, PROTO_HOST_MAX, 0);
	if (rc)
		return rc;
	return put_str(w, h->name, PROTO_NAME_MAX, 0);
}

static int enc_batch(struct wr *w, const struct proto_batch *b)
{
	if (b->stream == 0 || b->seq == 0)
		return PROTO_E_FIELD;
	if (b->nrecords > PROTO_CODEC_MAX_RECORDS ||
	    b->datalen > PROTO_FRAME_MAX - PROTO_BATCH_HDR)
		return PROTO_E_TOOBIG;
	if (b->datalen == 0)
		return PROTO_E_LENGTH;
	if (!b->data)
		return PROTO_E_ARG;
	put_u64(w, b->stream);
	put_u64(w, b->seq);
	put_u32(w, b->nrecords);
	put_u32(w, b->flags);
	put_bytes(w, b->data, b->datalen);
	return 0;
}

static int enc_clock(struct wr *w, const struct proto_clock *c)
{
	if (c->n > PROTO_CLOCK_MAX)
		return PROTO_E_TOOBIG;
	if (c->phase > CLOCK_PHASE_MAX)
		return PROTO_E_FIELD;
	put_u64(w, c->child);
	put_u64(w, c->parent);
	put_u32(w, c->phase);
	put_u32(w, c->n);
	for (uint32_t i = 0; i < c->n; i++) {
		put_u64(w, c->sample[i].s);
		put_u64(w, c->sample[i].rj);
		put_u64(w, c->sample[i].sj);
		put_u64(w, c->sample[i].r);
	}
	return 0;
}

static int enc_meta(struct wr *w, const struct proto_meta *m)
{
	int rc;

	if (m->n > PROTO_META_MAX)
		return PROTO_E_TOOBIG;
	put_u64(w, m->id);
	put_u32(w, m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		rc = put_str(w, m->kv[i].key, PROTO_KEY_MAX, 1);
		if (rc)
			return rc;
		rc = put_str(w, m->kv[i].value, PROTO_VALUE_MAX, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* KEY: the verifier is all zeros unless its flag says it is there, so
 * that a payload has one encoding. */
static int key_ok(const struct proto_key *k)
{
	uint8_t any = 0;

	if (k->stream == 0)
		return 0;
	if (k->flags & PROTO_KEY_VERIFIER)
		return 1;
	for (int i = 0; i < PROTO_MAC; i++)
		any |= k->verifier[i];
	return any == 0;
}

static int enc_key(struct wr *w, const struct proto_key *k)
{
	if (!key_ok(k))
		return PROTO_E_FIELD;
	put_u64(w, k->stream);
	put_u32(w, k->flags);
	put_bytes(w, k->server_nonce, PROTO_NONCE);
	put_bytes(w, k->client_nonce, PROTO_NONCE);
	put_bytes(w, k->verifier, PROTO_MAC);
	put_bytes(w, k->proof, PROTO_MAC);
	return 0;
}

static int enc_verdict(struct wr *w, const struct proto_verdict *v)
{
	if (v->stream == 0 || v->result > PROTO_VERDICT_REFUSED)
		return PROTO_E_FIELD;
	put_u64(w, v->stream);
	put_u32(w, v->result);
	put_bytes(w, v->server_nonce, PROTO_NONCE);
	return 0;
}

static int enc_payload(struct wr *w, const struct proto_msg *m)
{
	const struct proto_loss *l = &m->u.loss;
	const struct proto_bye *b = &m->u.bye;

	switch (m->type) {
	case PROTO_MSG_HELLO:
		return enc_hello(w, &m->u.hello);
	case PROTO_MSG_CHALLENGE:
		put_u32(w, m->u.challenge.flags);
		put_bytes(w, m->u.challenge.nonce, PROTO_NONCE);
		return 0;
	case PROTO_MSG_AUTH:
		put_bytes(w, m->u.auth.mac, PROTO_MAC);
		return 0;
	case PROTO_MSG_WELCOME:
		put_u32(w, m->u.welcome.flags);
		put_u64(w, m->u.welcome.node_id);
		put_bytes(w, m->u.welcome.mac, PROTO_MAC);
		return 0;
	case PROTO_MSG_BATCH:
		return enc_batch(w, &m->u.batch);
	case PROTO_MSG_ACK:
		if (m->u.ack.stream == 0)
			return PROTO_E_FIELD;
		put_u64(w, m->u.ack.stream);
		put_u64(w, m->u.ack.seq);
		return 0;
	case PROTO_MSG_PING:
		put_u64(w, m->u.ping.id);
		put_u64(w, m->u.ping.t_send);
		return 0;
	case PROTO_MSG_PONG:
		put_u64(w, m->u.pong.id);
		put_u64(w, m->u.pong.t_orig);
		put_u64(w, m->u.pong.t_recv);
		put_u64(w, m->u.pong.t_send);
		return 0;
	case PROTO_MSG_CLOCK:
		return enc_clock(w, &m->u.clock);
	case PROTO_MSG_META:
	case PROTO_MSG_STATS:
		return enc_meta(w, &m->u.meta);
	case PROTO_MSG_LOSS:
		if (l->stream == 0 || !loss_range_ok(l))
			return PROTO_E_FIELD;
		put_u64(w, l->stream);
		put_u64(w, l->dropped);
		put_u64(w, l->first_seq);
		put_u64(w, l->last_seq);
		return 0;
	case PROTO_MSG_BYE:
		if (b->stream == 0 || b->reason > BYE_REASON_MAX)
			return PROTO_E_FIELD;
		put_u64(w, b->stream);
		put_u64(w, b->last_seq);
		put_u32(w, b->reason);
		return 0;
	case PROTO_MSG_ERROR:
		if (m->u.error.code >= 0)
			return PROTO_E_FIELD;
		put_u32(w, (uint32_t)m->u.error.code);
		return put_str(w, m->u.error.message, PROTO_VALUE_MAX, 0);
	case PROTO_MSG_KEY:
		return enc_key(w, &m->u.key);
	case PROTO_MSG_VERDICT:
		return enc_verdict(w, &m->u.verdict);
	default:
		return PROTO_E_TYPE;
	}
}

int proto_msg_encode(const struct proto_msg *m, uint8_t *out, size_t cap,
		     size_t *written)
{
	struct wr w = {out, out ? cap : 0, 0};
	int rc;

	if (!m || !written)
		return PROTO_E_ARG;
	*written = 0;
	rc = enc_payload(&w, m);
	if (rc)
		return rc;
	*written = w.pos;
	return w.pos > w.cap ? PROTO_E_FULL : 0;
}

int proto_msg_frame(const struct proto_msg *m, uint8_t *out, size_t cap,
		    size_t *written)
{
	size_t n;
	int rc;

	if (!m || !written)
		return PROTO_E_ARG;
	*written = 0;
	if (out && cap >= PROTO_FRAME_HDR)
		rc = proto_msg_encode(m, out + PROTO_FRAME_HDR,
				      cap - PROTO_FRAME_HDR, &n);
	else
		rc = proto_msg_encode(m, NULL, 0, &n);
	if (rc && rc != PROTO_E_FULL)
		return rc;
	*written = PROTO_FRAME_HDR + n;
	if (rc)
		return rc;
	return proto_frame_header(m->type, out + PROTO_FRAME_HDR, n, out);
}

int proto_msg_frame_alloc(const struct proto_msg *m, uint8_t **out,
			  size_t *len)
{
	uint8_t *buf;
	size_t need, n;
	int rc;

	if (!out || !len)
		return PROTO_E_ARG;
	*out = NULL;
	*len = 0;
	rc = proto_msg_frame(m, NULL, 0, &need);
	if (rc != PROTO_E_FULL)
		return rc ? rc : PROTO_E_ARG;	/* 0 is impossible: need >= 16 */
	buf = malloc(need);
	if (!buf)
		return PROTO_E_NOMEM;
	rc = proto_msg_frame(m, buf, need, &n);
	if (rc)
		goto fail_encode;
	*out = buf;
	*len = n;
	return 0;

fail_encode:
	free(buf);
	return rc;
}

/* ---- decoders ---------------------------------------------------------- */

static void dec_hello(struct rd *r, struct proto_hello *h)
{
	uint8_t reserved8;
	uint16_t reserved16;

	h->role = get_u8(r);
	check(r, role_ok(h->role), PROTO_E_FIELD);
	reserved8 = get_u8(r);
	reserved16 = get_u16(r);
	check(r, reserved8 == 0 && reserved16 == 0, PROTO_E_FIELD);
	h->pid = get_u32(r);
	h->id = get_u64(r);
	h->rank = (int32_t)get_u32(r);
	check(r, h->rank >= -1, PROTO_E_FIELD);
	h->flags = get_u32(r);
	get_bytes(r, h->nonce, PROTO_NONCE);
	get_str(r, h->host, PROTO_HOST_MAX, 0);
	get_str(r, h->name, PROTO_NAME_MAX, 0);
}

static void dec_batch(struct rd *r, struct proto_batch *b)
{
	b->stream = get_u64(r);
	b->seq = get_u64(r);
	check(r, b->stream != 0 && b->seq != 0, PROTO_E_FIELD);
	b->nrecords = get_u32(r);
	check(r, b->nrecords <= PROTO_CODEC_MAX_RECORDS, PROTO_E_TOOBIG);
	b->flags = get_u32(r);
	/* PROTOCOL.md: the codec data runs to the end and is never empty. */
	b->datalen = (uint32_t)(r->len - r->pos);
	check(r, b->datalen > 0, PROTO_E_LENGTH);
	b->data = get_bytes(r, NULL, b->datalen);
}

static void dec_clock(struct rd *r, struct proto_clock *c)
{
	c->child = get_u64(r);
	c->parent = get_u64(r);
	c->phase = get_u32(r);
	check(r, c->phase <= CLOCK_PHASE_MAX, PROTO_E_FIELD);
	c->n = get_u32(r);
	check(r, c->n <= PROTO_CLOCK_MAX, PROTO_E_TOOBIG);
	/* Exact size known from n: say LENGTH before reading samples. */
	check(r, r->len - r->pos == (size_t)c->n * CLOCK_SAMPLE,
	      PROTO_E_LENGTH);
	for (uint32_t i = 0; i < c->n && !r->err; i++) {
		c->sample[i].s = get_u64(r);
		c->sample[i].rj = get_u64(r);
		c->sample[i].sj = get_u64(r);
		c->sample[i].r = get_u64(r);
	}
}

static void dec_meta(struct rd *r, struct proto_meta *m)
{
	m->id = get_u64(r);
	m->n = get_u32(r);
	check(r, m->n <= PROTO_META_MAX, PROTO_E_TOOBIG);
	for (uint32_t i = 0; i < m->n && !r->err; i++) {
		get_str(r, m->kv[i].key, PROTO_KEY_MAX, 1);
		get_str(r, m->kv[i].value, PROTO_VALUE_MAX, 0);
	}
}

static void dec_key(struct rd *r, struct proto_key *k)
{
	k->stream = get_u64(r);
	check(r, k->stream != 0, PROTO_E_FIELD);
	k->flags = get_u32(r);
	get_bytes(r, k->server_nonce, PROTO_NONCE);
	get_bytes(r, k->client_nonce, PROTO_NONCE);
	get_bytes(r, k->verifier, PROTO_MAC);
	check(r, key_ok(k), PROTO_E_FIELD);
	get_bytes(r, k->proof, PROTO_MAC);
}

static void dec_verdict(struct rd *r, struct proto_verdict *v)
{
	v->stream = get_u64(r);
	check(r, v->stream != 0, PROTO_E_FIELD);
	v->result = get_u32(r);
	check(r, v->result <= PROTO_VERDICT_REFUSED, PROTO_E_FIELD);
	get_bytes(r, v->server_nonce, PROTO_NONCE);
}

static void dec_payload(struct rd *r, struct proto_msg *m)
{
	struct proto_loss *l = &m->u.loss;
	struct proto_bye *b = &m->u.bye;

	switch (m->type) {
	case PROTO_MSG_HELLO:
		dec_hello(r, &m->u.hello);
		break;
	case PROTO_MSG_CHALLENGE:
		m->u.challenge.flags = get_u32(r);
		get_bytes(r, m->u.challenge.nonce, PROTO_NONCE);
		break;
	case PROTO_MSG_AUTH:
		get_bytes(r, m->u.auth.mac, PROTO_MAC);
		break;
	case PROTO_MSG_WELCOME:
		m->u.welcome.flags = get_u32(r);
		m->u.welcome.node_id = get_u64(r);
		get_bytes(r, m->u.welcome.mac, PROTO_MAC);
		break;
	case PROTO_MSG_BATCH:
		dec_batch(r, &m->u.batch);
		break;
	case PROTO_MSG_ACK:
		m->u.ack.stream = get_u64(r);
		check(r, m->u.ack.stream != 0, PROTO_E_FIELD);
		m->u.ack.seq = get_u64(r);
		break;
	case PROTO_MSG_PING:
		m->u.ping.id = get_u64(r);
		m->u.ping.t_send = get_u64(r);
		break;
	case PROTO_MSG_PONG:
		m->u.pong.id = get_u64(r);
		m->u.pong.t_orig = get_u64(r);
		m->u.pong.t_recv = get_u64(r);
		m->u.pong.t_send = get_u64(r);
		break;
	case PROTO_MSG_CLOCK:
		dec_clock(r, &m->u.clock);
		break;
	case PROTO_MSG_META:
	case PROTO_MSG_STATS:
		dec_meta(r, &m->u.meta);
		break;
	case PROTO_MSG_LOSS:
		l->stream = get_u64(r);
		check(r, l->stream != 0, PROTO_E_FIELD);
		l->dropped = get_u64(r);
		l->first_seq = get_u64(r);
		l->last_seq = get_u64(r);
		check(r, loss_range_ok(l), PROTO_E_FIELD);
		break;
	case PROTO_MSG_BYE:
		b->stream = get_u64(r);
		check(r, b->stream != 0, PROTO_E_FIELD);
		b->last_seq = get_u64(r);
		b->reason = get_u32(r);
		check(r, b->reason <= BYE_REASON_MAX, PROTO_E_FIELD);
		break;
	case PROTO_MSG_ERROR:
		m->u.error.code = (int32_t)get_u32(r);
		check(r, m->u.error.code < 0, PROTO_E_FIELD);
		get_str(r, m->u.error.message, PROTO_VALUE_MAX, 0);
		break;
	case PROTO_MSG_KEY:
		dec_key(r, &m->u.key);
		break;
	case PROTO_MSG_VERDICT:
		dec_verdict(r, &m->u.verdict);
		break;
	default:
		fail(r, PROTO_E_TYPE);
		break;
	}
}

int proto_msg_decode(const struct proto_frame *f, struct proto_msg *m)
{
	struct rd r = {0};

	if (!f || !m || (f->length && !f->payload))
		return PROTO_E_ARG;
	r.p = f->payload;
	r.len = f->length;
	m->type = f->type;
	dec_payload(&r, m);
	/* PROTOCOL.md: a payload is exactly its fields; extra bytes are an
	 * error, not an extension point (new fields need a new version). */
	check(&r, r.pos == r.len, PROTO_E_LENGTH);
	return r.err;
}

/* ---- equality ---------------------------------------------------------- */

static int hello_eq(const struct proto_hello *a, const struct proto_hello *b)
{
	return a->role == b->role && a->pid == b->pid && a->id == b->id &&
	       a->rank == b->rank && a->flags == b->flags &&
	       !memcmp(a->nonce, b->nonce, PROTO_NONCE) &&
	       !strcmp(a->host, b->host) && !strcmp(a->name, b->name);
}

static int batch_eq(const struct proto_batch *a, const struct proto_batch *b)
{
	return a->stream == b->stream && a->seq == b->seq &&
	       a->nrecords == b->nrecords && a->flags == b->flags &&
	       a->datalen == b->datalen &&
	       (a->datalen == 0 || !memcmp(a->data, b->data, a->datalen));
}

static int clock_eq(const struct proto_clock *a, const struct proto_clock *b)
{
	if (a->child != b->child || a->parent != b->parent ||
	    a->phase != b->phase || a->n != b->n || a->n > PROTO_CLOCK_MAX)
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->sample[i].s != b->sample[i].s ||
		    a->sample[i].rj != b->sample[i].rj ||
		    a->sample[i].sj != b->sample[i].sj ||
		    a->sample[i].r != b->sample[i].r)
			return 0;
	return 1;
}

static int meta_eq(const struct proto_meta *a, const struct proto_meta *b)
{
	if (a->id != b->id || a->n != b->n || a->n > PROTO_META_MAX)
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (strcmp(a->kv[i].key, b->kv[i].key) ||
		    strcmp(a->kv[i].value, b->kv[i].value))
			return 0;
	return 1;
}

static int key_eq(const struct proto_key *a, const struct proto_key *b)
{
	return a->stream == b->stream && a->flags == b->flags &&
	       !memcmp(a->server_nonce, b->server_nonce, PROTO_NONCE) &&
	       !memcmp(a->client_nonce, b->client_nonce, PROTO_NONCE) &&
	       !memcmp(a->verifier, b->verifier, PROTO_MAC) &&
	       !memcmp(a->proof, b->proof, PROTO_MAC);
}

int proto_msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	const struct proto_loss *la = &a->u.loss, *lb = &b->u.loss;
	const struct proto_bye *ba = &a->u.bye, *bb = &b->u.bye;

	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case PROTO_MSG_HELLO:
		return hello_eq(&a->u.hello, &b->u.hello);
	case PROTO_MSG_CHALLENGE:
		return a->u.challenge.flags == b->u.challenge.flags &&
		       !memcmp(a->u.challenge.nonce, b->u.challenge.nonce,
			       PROTO_NONCE);
	case PROTO_MSG_AUTH:
		return !memcmp(a->u.auth.mac, b->u.auth.mac, PROTO_MAC);
	case PROTO_MSG_WELCOME:
		return a->u.welcome.flags == b->u.welcome.flags &&
		       a->u.welcome.node_id == b->u.welcome.node_id &&
		       !memcmp(a->u.welcome.mac, b->u.welcome.mac, PROTO_MAC);
	case PROTO_MSG_BATCH:
		return batch_eq(&a->u.batch, &b->u.batch);
	case PROTO_MSG_ACK:
		return a->u.ack.stream == b->u.ack.stream &&
		       a->u.ack.seq == b->u.ack.seq;
	case PROTO_MSG_PING:
		return a->u.ping.id == b->u.ping.id &&
		       a->u.ping.t_send == b->u.ping.t_send;
	case PROTO_MSG_PONG:
		return a->u.pong.id == b->u.pong.id &&
		       a->u.pong.t_orig == b->u.pong.t_orig &&
		       a->u.pong.t_recv == b->u.pong.t_recv &&
		       a->u.pong.t_send == b->u.pong.t_send;
	case PROTO_MSG_CLOCK:
		return clock_eq(&a->u.clock, &b->u.clock);
	case PROTO_MSG_META:
	case PROTO_MSG_STATS:
		return meta_eq(&a->u.meta, &b->u.meta);
	case PROTO_MSG_LOSS:
		return la->stream == lb->stream && la->dropped == lb->dropped &&
		       la->first_seq == lb->first_seq &&
		       la->last_seq == lb->last_seq;
	case PROTO_MSG_BYE:
		return ba->stream == bb->stream &&
		       ba->last_seq == bb->last_seq && ba->reason == bb->reason;
	case PROTO_MSG_ERROR:
		return a->u.error.code == b->u.error.code &&
		       !strcmp(a->u.error.message, b->u.error.message);
	case PROTO_MSG_KEY:
		return key_eq(&a->u.key, &b->u.key);
	case PROTO_MSG_VERDICT:
		return a->u.verdict.stream == b->u.verdict.stream &&
		       a->u.verdict.result == b->u.verdict.result &&
		       !memcmp(a->u.verdict.server_nonce,
			       b->u.verdict.server_nonce, PROTO_NONCE);
	default:
		return 0;
	}
}

int proto_msg_frame_buf(const struct proto_msg *m, uint8_t *small, size_t cap,
			uint8_t **out, size_t *len)
{
	int rc = proto_msg_frame(m, small, cap, len);

	*out = small;
	if (rc == PROTO_E_FULL)
		return proto_msg_frame_alloc(m, out, len);
	return rc;
}

const char *proto_meta_get(const struct proto_meta *m, const char *key)
{
	const char *v = NULL;

	for (uint32_t i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key))
			v = m->kv[i].value;
	return v;
}
