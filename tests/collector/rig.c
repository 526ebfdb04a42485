/*
 * tests/collector/rig.c - see rig.h.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/auth.h"
#include "proto/codec.h"
#include "proto/jobdir.h"
#include "tests/collector/rig.h"

struct proto_msg msg;	/* large: not on the stack */

void spin(struct event_base *b)
{
	for (int i = 0; i < 20; i++)
		event_base_loop(b, EVLOOP_NONBLOCK);
}

void send_m(struct bufferevent *bev, const struct proto_msg *m)
{
	cr_assert_eq(col_send_msg(bev, m), 0);
}

/* Next message on bev's input: 1 with msg filled, 0 when none. */
int recv_m(struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[PROTO_FRAME_HDR], *p;
	struct proto_frame f;
	size_t need, used;
	int rc;

	if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
		return 0;
	rc = proto_frame_decode(hdr, sizeof(hdr), 0, &f, &need);
	if (rc == 0)
		need = PROTO_FRAME_HDR;
	cr_assert(rc == 0 || rc == PROTO_E_TRUNCATED);
	if (evbuffer_get_length(in) < need)
		return 0;
	p = evbuffer_pullup(in, (ev_ssize_t)need);
	cr_assert_eq(proto_frame_decode(p, need, 0, &f, &used), 0);
	cr_assert_eq(proto_msg_decode(&f, &msg), 0);
	evbuffer_drain(in, need);
	return 1;
}


void rig_up(struct rig *r, int root)
{
	int rc;

	col_log_level = COL_LOG_ERROR;
	r->base = event_base_new();
	cr_assert_not_null(r->base);
	strcpy(r->dir, "/tmp/col-test-XXXXXX");
	cr_assert_not_null(mkdtemp(r->dir));
	snprintf(r->job, sizeof(r->job), "%s/job", r->dir);
	col_config_default(&r->cfg);
	r->cfg.listen = "";
	r->cfg.stats_period_ms = 0;
	r->cfg.clock_period_ms = 0;
	r->cfg.handshake_ms = 60000;
	r->cfg.node_id = 0x1234;
	if (root)
		r->cfg.output = r->job;
	r->col = col_new(r->base, &r->cfg, &rc);
	cr_assert_not_null(r->col, "col_new: %s", proto_strerror(rc));
}

void rm_tree(const char *path)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	cr_assert_eq(system(cmd), 0);
}

void rig_down(struct rig *r)
{
	col_free(r->col);
	event_base_free(r->base);
	rm_tree(r->dir);
}

/* A child connection: returns the test's end. */
struct bufferevent *child(struct rig *r)
{
	struct bufferevent *p[2];

	cr_assert_eq(bufferevent_pair_new(r->base, BEV_OPT_DEFER_CALLBACKS, p), 0);
	cr_assert_not_null(col_conn_attach(r->col, p[0], "pair"));
	bufferevent_enable(p[1], EV_READ | EV_WRITE);
	return p[1];
}

uint8_t cnonce[PROTO_NONCE] = {1, 2, 3};

void hello(struct bufferevent *t, uint8_t role, uint64_t id)
{
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_HELLO;
	msg.u.hello.role = role;
	msg.u.hello.id = id;
	msg.u.hello.rank = -1;
	memcpy(msg.u.hello.nonce, cnonce, PROTO_NONCE);
	strcpy(msg.u.hello.host, "h");
	strcpy(msg.u.hello.name, "n");
	send_m(t, &msg);
}

/* The stream key of the rig's sensor id: derived from the id, so that a
 * reconnection holds the same key; a forger's differs. */
void rig_verifier(uint64_t id, int forged, uint8_t v[PROTO_MAC])
{
	uint8_t key[PROTO_STREAM_KEY];

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(id >> (8 * (i % 8))) ^ (forged ? 0x5a : 0);
	proto_stream_verifier(key, id, v);
}

void rig_know(struct rig *r, uint64_t id)
{
	struct col_stream *s = col_stream_get(r->col, id, 1);

	cr_assert_not_null(s);
	rig_verifier(id, 0, s->verifier);
	s->has_verifier = 1;
}

int handshake_key(struct rig *r, struct bufferevent *t, uint64_t id,
		  const char *key, int how)
{
	uint8_t snonce[PROTO_NONCE], want[PROTO_MAC], v[PROTO_MAC];

	hello(t, PROTO_ROLE_SENSOR, id);
	spin(r->base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_CHALLENGE);
	cr_assert(msg.u.challenge.flags & PROTO_CHALLENGE_KEY);
	memcpy(snonce, msg.u.challenge.nonce, PROTO_NONCE);
	rig_verifier(id, how & RIG_FORGED, v);
	{
		uint32_t flags = msg.u.challenge.flags;

		msg.type = PROTO_MSG_AUTH;
		proto_auth_proof(PROTO_AUTH_CLIENT, key, strlen(key), snonce,
				 cnonce, id, msg.u.auth.mac);
		send_m(t, &msg);
		msg.type = PROTO_MSG_KEY;
		proto_key_claim(&msg.u.key, v, id, snonce, cnonce, flags);
		if (how & RIG_FIRST)
			msg.u.key.flags |= PROTO_KEY_FIRST;
		send_m(t, &msg);
	}
	spin(r->base);
	if (!recv_m(t) || msg.type != PROTO_MSG_WELCOME)
		return 0;
	proto_auth_proof(PROTO_AUTH_SERVER, key, strlen(key), snonce, cnonce,
			 id, want);
	cr_assert(proto_auth_equal(want, msg.u.welcome.mac));
	cr_assert_eq(msg.u.welcome.node_id, 0x1234);
	return 1;
}

/* A forwarder has no parent that answers KEY here: it is told the
 * stream's verifier first, as if its parent had said yes (test_key.c
 * plays the parent). */
int handshake(struct rig *r, struct bufferevent *t, uint64_t id,
		     const char *key)
{
	if (!r->col->root && !col_stream_get(r->col, id, 0))
		rig_know(r, id);
	return handshake_key(r, t, id, key, 0);
}

size_t nconns(struct rig *r)
{
	size_t n = 0;

	for (struct col_conn *cn = r->col->conns; cn; cn = cn->next)
		n++;
	return n;
}

void send_batch(struct bufferevent *t, uint64_t stream, uint64_t seq,
		       uint32_t n)
{
	static struct proto_event ev[64];
	static uint8_t data[8192];
	struct proto_codec *c = proto_codec_new(0);
	size_t len;

	cr_assert(n <= 64);
	for (uint32_t i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].t_start = seq * 100 + i;
		ev[i].t_end = ev[i].t_start;
		ev[i].type = 1;
	}
	cr_assert_eq(proto_codec_encode(c, ev, n, data, sizeof(data), &len), 0);
	proto_codec_free(c);
	msg.type = PROTO_MSG_BATCH;
	msg.u.batch.stream = stream;
	msg.u.batch.seq = seq;
	msg.u.batch.nrecords = n;
	msg.u.batch.flags = 0;
	msg.u.batch.data = data;
	msg.u.batch.datalen = (uint32_t)len;
	send_m(t, &msg);
}

void roundtrip(struct rig *r, struct bufferevent *to, struct bufferevent *from, int want)
{
	send_m(to, &msg);
	spin(r->base);
	cr_assert_eq(recv_m(from), 1);
	cr_assert_eq(msg.type, want);
}

void expect_error(struct rig *r, struct bufferevent *t, int code)
{
	spin(r->base);
	cr_assert_eq(recv_m(t), 1);
	cr_assert_eq(msg.type, PROTO_MSG_ERROR);
	cr_assert_eq(msg.u.error.code, code);
}

void rig_spool_file(const char *path, uint64_t stream, const uint64_t *seqs,
		    int n, int bye)
{
	static uint8_t data[8192];
	struct proto_event ev[4];
	struct proto_codec *cd = proto_codec_new(0);
	struct proto_msg m;
	uint8_t small[16384], *buf, hdr[16];
	size_t len, dlen;
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_not_null(cd);
	memcpy(hdr, PROTO_SPOOL_MAGIC, 8);
	for (int i = 0; i < 8; i++)
		hdr[8 + i] = (uint8_t)(stream >> (8 * i));
	cr_assert_eq(fwrite(hdr, 1, 16, f), 16);
	for (int i = 0; i <= n; i++) {
		memset(&m, 0, sizeof(m));
		if (i < n) {
			memset(ev, 0, sizeof(ev));
			for (int k = 0; k < 4; k++) {
				ev[k].t_start = ev[k].t_end = seqs[i] * 100 + k;
				ev[k].type = 1;
			}
			cr_assert_eq(proto_codec_encode(cd, ev, 4, data,
							sizeof(data), &dlen), 0);
			m.type = PROTO_MSG_BATCH;
			m.u.batch.stream = stream;
			m.u.batch.seq = seqs[i];
			m.u.batch.nrecords = 4;
			m.u.batch.data = data;
			m.u.batch.datalen = (uint32_t)dlen;
		} else if (bye) {
			m.type = PROTO_MSG_BYE;
			m.u.bye.stream = stream;
			m.u.bye.last_seq = n ? seqs[n - 1] : 0;
		} else {
			break;
		}
		cr_assert_eq(proto_msg_frame_buf(&m, small, sizeof(small),
						 &buf, &len), 0);
		cr_assert_eq(fwrite(buf, 1, len, f), len);
		if (buf != small)
			free(buf);
	}
	proto_codec_free(cd);
	cr_assert_eq(fclose(f), 0);
}
