/*
 * collector/key.c - stream keys: which connection may speak for a sensor's
 * stream (docs/PROTOCOL.md, "Stream keys"; docs/SECURITY.md, "Streams").
 *
 * A sensor draws a random key when its stream begins and proves it on
 * every connection (KEY, after AUTH) with an HMAC over both nonces keyed
 * by the key's verifier. The collector that knows the stream's verifier
 * checks the proof itself; one that does not (the stream is new to it, or
 * it was restarted since the stream began) passes the KEY up and sends
 * WELCOME only when the parent's VERDICT says yes. The root registers the
 * verifier of a stream it has never seen, and answers every KEY passed up
 * to it. So a process that does not hold the key is refused at its
 * handshake, before any frame of it is taken: it can neither take a
 * stream whose connection is gone nor send frames that the root would
 * have to drop unacknowledged. A refusal is counted and logged with who
 * sent it (col_refuse).
 *
 * One exception keeps a node useful while its parent is away or frozen: a
 * sensor that says its stream is new (PROTO_KEY_FIRST), of a stream this
 * collector does not know in any way, is taken on its word, provisionally, and its KEY goes up at once (or once the link is
 * back). Its frames are buffered (memory, spill) but held back from the
 * parent until the answer (col_up_release); a no closes the connection
 * and drops every frame of that stream held here (col_up_purge): nothing
 * of it reaches the root, nothing waits for an acknowledgement.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "collector/internal.h"
#include "proto/auth.h"

uint32_t col_key_flags(struct col *c, uint64_t id)
{
	struct col_stream *s = col_stream_get(c, id, 0);

	return PROTO_CHALLENGE_KEY |
	       (s && s->has_verifier ? PROTO_CHALLENGE_KNOWN : 0);
}

/* 1 when k proves the stream of s: against the verifier known, or, for a
 * stream without one, against the verifier k brings (registered then). */
static int proves(struct col_stream *s, const struct proto_key *k)
{
	if (s->has_verifier)
		return proto_key_check(k, s->verifier);
	if (!(k->flags & PROTO_KEY_VERIFIER) || !proto_key_check(k, k->verifier))
		return 0;
	memcpy(s->verifier, k->verifier, PROTO_MAC);
	s->has_verifier = 1;
	return 1;
}

/* cn proved its stream: it is the stream's connection now. An older
 * sensor connection of the stream still open is the same sensor
 * reconnected before its end was seen (its send timed out while this
 * collector was not reading, say): it is closed, what it had not
 * delivered is resent on the new one. */
static int accept_claim(struct col_conn *cn, struct col_stream *s)
{
	struct col_conn *old = s->owner;

	if (old && old != cn && old->state == CS_STREAM &&
	    old->role == PROTO_ROLE_SENSOR && old->peer_id == cn->peer_id) {
		col_info("stream %016" PRIx64 " reconnected from %s: its "
			 "connection from %s is closed", s->id, cn->peer,
			 old->peer);
		s->owner = NULL;
		col_conn_close(old, NULL);
	}
	s->owner = cn;
	return col_conn_welcome(cn);
}

static void refuse_claim(struct col_conn *cn, const char *why)
{
	col_refuse(cn, cn->peer_id, 0, why);
}

/* Ask the parent (now when the link is up, else col_key_resend). */
static void ask_parent(struct col *c, const struct proto_key *k)
{
	struct proto_msg m;

	if (c->up_state != UP_STREAM)
		return;
	m.type = PROTO_MSG_KEY;
	m.u.key = *k;
	if (col_send_msg(c->up, &m))
		col_warn("stream %016" PRIx64 ": KEY not sent up", k->stream);
}

/* A first claim: WELCOME now, the parent's VERDICT later (kept with the
 * stream: col_key_verdict, col_key_resend even once the connection is
 * gone), so that a node buffers for a new sensor whatever its parent
 * does. */
static int take_on_its_word(struct col_conn *cn)
{
	struct col_stream *s = col_stream_get(cn->col, cn->claim.stream, 1);

	if (!s)
		return PROTO_E_FULL;
	if (!proves(s, &cn->claim)) {	/* a verifier came meanwhile */
		refuse_claim(cn, "a second connection without the stream's "
			     "key");
		return PROTO_E_AUTH;
	}
	if (!s->claim)
		s->claim = malloc(sizeof(*s->claim));
	if (!s->claim)
		return PROTO_E_NOMEM;
	*s->claim = cn->claim;
	/* its frames are told from the stream's others (col_up_purge) */
	s->word = ++cn->col->words;
	col_spill_wpos(cn->col->spill, &s->word_from);
	s->word_refused = 0;
	return accept_claim(cn, s);
}

/* 1 when another connection's claim of cn's stream waits for a VERDICT. */
static int awaited(const struct col *c, const struct col_conn *cn)
{
	for (const struct col_conn *o = c->conns; o; o = o->next)
		if (o != cn && o->state == CS_VERDICT &&
		    o->peer_id == cn->peer_id)
			return 1;
	return 0;
}

/* A claim that says its stream is new is taken on its word only when the
 * stream is unknown here: not known through a child collector's link (a
 * gateway has no verifier for those), not claimed by a connection that
 * waits for its VERDICT (the real sensor at a restarted collector); else
 * a process with the job's secret could take the stream from its sensor. */
int col_key_claim(struct col_conn *cn, const struct proto_key *k)
{
	struct col *c = cn->col;
	struct col_stream *s = col_stream_get(c, k->stream, 0);

	if (k->stream != cn->peer_id ||
	    memcmp(k->server_nonce, cn->server_nonce, PROTO_NONCE) ||
	    memcmp(k->client_nonce, cn->client_nonce, PROTO_NONCE)) {
		refuse_claim(cn, "a KEY of another connection or stream");
		return PROTO_E_AUTH;
	}
	if (s && s->has_verifier) {
		if (proto_key_check(k, s->verifier))
			return accept_claim(cn, s);
		refuse_claim(cn, "a second connection without the stream's "
			     "key");
		return PROTO_E_AUTH;
	}
	if (!(k->flags & PROTO_KEY_VERIFIER) || !proto_key_check(k, k->verifier)) {
		refuse_claim(cn, "a KEY without a verifier that proves it");
		return PROTO_E_AUTH;
	}
	if (c->root) {
		s = col_stream_get(c, k->stream, 1);
		if (!s)
			return PROTO_E_FULL;
		proves(s, k);
		return accept_claim(cn, s);
	}
	/* new here (or this collector was restarted): the parent decides */
	cn->claim = *k;
	ask_parent(c, k);
	if ((k->flags & PROTO_KEY_FIRST) && !s && !awaited(c, cn))
		return take_on_its_word(cn);
	cn->state = CS_VERDICT;
	return 0;
}

static void send_verdict(struct col_conn *cn, const struct proto_key *k,
			 uint32_t result)
{
	struct proto_msg m = {.type = PROTO_MSG_VERDICT,
			      .u.verdict = {k->stream, result, {0}}};

	memcpy(m.u.verdict.server_nonce, k->server_nonce, PROTO_NONCE);
	col_send_msg(cn->bev, &m);
}

void col_key_from_below(struct col_conn *cn, const struct proto_key *k)
{
	struct col *c = cn->col;
	struct col_stream *s = col_stream_get(c, k->stream, 1);

	if (!s) {
		send_verdict(cn, k, PROTO_VERDICT_REFUSED);
		return;
	}
	if (!c->root) {
		/* passed on, and kept until answered: asked again after a
		 * reconnect of the link up (col_key_resend) */
		s->claim_via = cn;
		if (!s->claim)
			s->claim = malloc(sizeof(*s->claim));
		if (s->claim)
			*s->claim = *k;
		ask_parent(c, k);
		return;
	}
	if (!proves(s, k)) {
		col_refuse(cn, k->stream, 0, "a KEY passed up without the "
			   "stream's key");
		send_verdict(cn, k, PROTO_VERDICT_REFUSED);
		return;
	}
	/* the claim's collector link carries the stream from now on */
	s->owner = cn;
	send_verdict(cn, k, PROTO_VERDICT_OK);
}

/* The parent answered the claim of s taken on its word here (or passed
 * on, at a gateway): a no forgets the stream's verifier and every frame of
 * it held here, and closes the sensor connection that claimed it if it is
 * still open. */
static void settle(struct col *c, struct col_stream *s, uint32_t result)
{
	struct col_conn *o = s->owner;

	free(s->claim);
	s->claim = NULL;
	if (s->claim_via)	/* a gateway only passes the answer on */
		return;
	if (result == PROTO_VERDICT_OK) {
		col_up_release(c, s);
		return;
	}
	s->has_verifier = 0;
	col_up_purge(c, s);
	if (o && o->role == PROTO_ROLE_SENSOR && o->state == CS_STREAM &&
	    o->peer_id == s->id) {
		s->owner = NULL;
		refuse_claim(o, "its stream key was refused above");
		col_conn_fail(o, PROTO_E_AUTH, "stream key refused");
	}
}

void col_key_verdict(struct col *c, const struct proto_verdict *v,
		     const struct col_frame *f)
{
	struct col_stream *s;

	for (struct col_conn *cn = c->conns; cn; cn = cn->next) {
		int rc;

		if (cn->state != CS_VERDICT || cn->peer_id != v->stream ||
		    memcmp(cn->server_nonce, v->server_nonce, PROTO_NONCE))
			continue;
		if (v->result != PROTO_VERDICT_OK) {
			refuse_claim(cn, "its stream key was refused above");
			col_conn_fail(cn, PROTO_E_AUTH, "stream key refused");
			return;
		}
		s = col_stream_get(c, v->stream, 1);
		rc = s ? (proves(s, &cn->claim) ? accept_claim(cn, s) :
			  PROTO_E_AUTH) : PROTO_E_FULL;
		if (rc == PROTO_E_AUTH)
			refuse_claim(cn, "a second connection without the "
				     "stream's key");
		if (rc)
			col_conn_fail(cn, rc, rc == PROTO_E_AUTH ?
				      "stream key refused" : "bad message");
		return;
	}
	s = col_stream_get(c, v->stream, 0);
	if (s && s->claim && !memcmp(s->claim->server_nonce, v->server_nonce,
				     PROTO_NONCE))
		settle(c, s, v->result);
	/* a gateway: the claim came from a child collector */
	if (!s || !s->claim_via || s->claim_via->state != CS_STREAM)
		return;
	if (v->result == PROTO_VERDICT_OK)
		s->owner = s->claim_via;
	bufferevent_write(s->claim_via->bev, f->data, f->len);
}

void col_key_resend(struct col *c)
{
	size_t i = 0;
	uint64_t key;
	void *val;

	for (struct col_conn *cn = c->conns; cn; cn = cn->next)
		if (cn->state == CS_VERDICT)
			ask_parent(c, &cn->claim);
	while (col_map_next(&c->streams, &i, &key, &val)) {
		struct col_stream *s = val;

		if (s->claim)
			ask_parent(c, s->claim);
	}
}
