/*
 * collector/up.c - the upward link: queue, flush thresholds, unacked
 * frames, spill, backpressure, reconnect, clock pings.
 *
 * Order of everything not yet acknowledged, oldest first:
 *   unacked (sent) | queue (memory) | spill files | tail (memory)
 * New frames join the queue, or the spill once the queue is over the
 * memory cap or the spill already holds something, or the tail once the
 * spill is full or failing. The spill is read back, a whole file at a
 * time, when the queue is empty; the tail joins the queue once the spill
 * is empty. So frames leave in the order they arrived.
 *
 * A BATCH stays in memory until the parent's cumulative ACK of its
 * (stream, seq) comes back; other frames are released once written to the
 * socket (the evbuffer's cleanup callback); a broken link puts every
 * frame not yet released back at the head of the queue. Frames are handed
 * to the output evbuffer by reference (no copy).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "collector/internal.h"
#include "proto/auth.h"
#include "proto/codec.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
#define UP_MAX_READ (256u << 10)

static void up_connect(struct col *c);
static void batch_lost(struct col *c, uint64_t stream, uint64_t seq,
		       uint32_t nrecords);

/* Free the upward connection, if any, and mark the link down. While it is
 * freed, up_tearing tells ref_cleanup that the frames it still held were
 * not written out. */
static void close_up(struct col *c)
{
	if (c->up) {
		c->up_tearing = 1;
		bufferevent_free(c->up);
		c->up_tearing = 0;
		c->up = NULL;
	}
	c->up_state = UP_DOWN;
}

/* ---- queue helpers ---------------------------------------------------- */

/* Append f to the list head .. tail (linked by next). */
static void push_tail(struct col_frame **head, struct col_frame **tail,
		      struct col_frame *f)
{
	f->next = NULL;
	if (*tail)
		(*tail)->next = f;
	else
		*head = f;
	*tail = f;
}

static void q_push(struct col *c, struct col_frame *f)
{
	push_tail(&c->q_head, &c->q_tail, f);
	c->q_bytes += f->len;
	c->q_records += f->nrecords;
}

static struct col_frame *q_pop(struct col *c)
{
	struct col_frame *f = c->q_head;

	if (!f)
		return NULL;
	c->q_head = f->next;
	if (!c->q_head)
		c->q_tail = NULL;
	f->next = NULL;
	c->q_bytes -= f->len;
	c->q_records -= f->nrecords;
	return f;
}

static void t_push(struct col *c, struct col_frame *f)
{
	push_tail(&c->t_head, &c->t_tail, f);
}

static void ua_unlink(struct col *c, struct col_frame *f)
{
	if (f->gprev)
		f->gprev->gnext = f->gnext;
	else
		c->ua_head = f->gnext;
	if (f->gnext)
		f->gnext->gprev = f->gprev;
	else
		c->ua_tail = f->gprev;
	f->gprev = f->gnext = NULL;
	f->sent = 0;
	c->ua_count--;
}

int col_up_idle(const struct col *c)
{
	return !c->q_head && !c->t_head && !c->ua_head && !c->held_frames &&
	       col_spill_empty(c->spill);
}

void col_stream_free(struct col_stream *s)
{
	struct col_frame *f;

	while ((f = s->held_head)) {
		s->held_head = f->next;
		col_frame_unref(f);
	}
	free(s->claim);
	free(s);
}

/* A frame of a stream taken on its word (key.c) waits for the parent's
 * answer to its KEY before it goes up: 1 when f is held back so. */
static int hold(struct col *c, struct col_frame *f)
{
	struct col_stream *s = f->stream ? col_stream_get(c, f->stream, 0) :
				NULL;

	if (!s || !s->claim || s->claim_via)
		return 0;
	f->next = NULL;
	push_tail(&s->held_head, &s->held_tail, f);
	c->held_frames++;
	return 1;
}

void col_up_release(struct col *c, struct col_stream *s)
{
	struct col_frame *f;
	uint64_t bytes = 0, records = 0;

	if (!s->held_head)
		return;
	for (f = s->held_head; f; f = f->next) {
		bytes += f->len;
		records += f->nrecords;
		c->held_frames--;
	}
	/* before anything of the stream still queued: its order is kept */
	s->held_tail->next = c->q_head;
	if (!c->q_head)
		c->q_tail = s->held_tail;
	c->q_head = s->held_head;
	c->q_bytes += bytes;
	c->q_records += records;
	s->held_head = s->held_tail = NULL;
	col_up_flush(c);
}

/* ---- backpressure ----------------------------------------------------- */

/* Memory grows only when nothing else can take new frames. */
static int mem_bound(const struct col *c)
{
	return !c->spill || c->t_head;
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;
	struct col_conn *cn, *next;

	if (c->paused)
		return;
	for (cn = c->conns; cn; cn = next) {
		next = cn->next;
		if (cn->state != CS_STREAM)
			continue;
		bufferevent_enable(cn->bev, EV_READ);
		if (col_conn_process(cn))
			continue;
		if (c->paused)
			break;
	}
}

void col_up_pressure(struct col *c)
{
	if (c->root)
		return;
	if (!c->paused && mem_bound(c) && c->mem_used >= c->cfg.mem_cap) {
		c->paused = 1;
		c->st.pauses++;
		col_info("memory %" PRIu64 " >= cap %" PRIu64
			 ": not reading from children", c->mem_used,
			 c->cfg.mem_cap);
		/* Connections stop at their next frame (col_conn_process). */
	} else if (c->paused &&
		   (!mem_bound(c) || c->mem_used < c->cfg.mem_cap / 2)) {
		c->paused = 0;
		col_info("memory %" PRIu64 ": reading from children again",
			 c->mem_used);
		event_active(c->resume_ev, 0, 0);
	}
}

/* ---- sending ---------------------------------------------------------- */

static void ref_cleanup(const void *data, size_t len, void *arg)
{
	struct col_frame *f = arg;
	struct col *c = f->col;

	/* Written out: a non-BATCH frame needs nothing more. */
	if (!c->up_tearing && f->sent && f->type != PROTO_MSG_BATCH) {
		ua_unlink(c, f);
		col_frame_unref(f);
		col_drain_check(c);
	}
	col_frame_unref(f);
}

static void send_frame(struct col *c, struct col_frame *f)
{
	struct evbuffer *out = bufferevent_get_output(c->up);

	f->sent = 1;
	f->gnext = NULL;
	f->gprev = c->ua_tail;
	if (c->ua_tail)
		c->ua_tail->gnext = f;
	else
		c->ua_head = f;
	c->ua_tail = f;
	c->ua_count++;
	if (f->type == PROTO_MSG_BATCH) {
		struct col_stream *s = col_stream_get(c, f->stream, 1);

		f->next = NULL;
		if (s) {
			if (s->ua_tail)
				s->ua_tail->next = f;
			else
				s->ua_head = f;
			s->ua_tail = f;
		}
	}
	col_frame_ref(f);
	if (evbuffer_add_reference(out, f->data, f->len, ref_cleanup, f)) {
		col_frame_unref(f);
		return;	/* stays unacked: resent after the next reconnect */
	}
	c->st.frames_up++;
	c->st.bytes_up += f->len;
}

struct refill {
	struct col *c;
	uint64_t frames;
};

/* 1 when f, being read from the spill, came in under the claim of its
 * stream taken on its word (spilled after that began, and, once it was
 * refused, before). */
static int under_word(struct col *c, const struct col_frame *f)
{
	struct col_stream *s = col_stream_get(c, f->stream, 0);
	struct col_spill_pos at;

	if (!s || !s->word)
		return 0;
	col_spill_rpos(c->spill, &at);
	return !col_spill_before(&at, &s->word_from) &&
	       (!s->word_refused || col_spill_before(&at, &s->word_to));
}

int col_up_word_spilled(const struct col *c, const struct col_stream *s)
{
	struct col_spill_pos next;

	if (!s->word_refused || col_spill_empty(c->spill))
		return 0;
	col_spill_rpos(c->spill, &next);
	return col_spill_before(&next, &s->word_to);
}

static void refill_one(void *arg, const uint8_t *bytes, size_t len)
{
	struct refill *r = arg;
	struct col *c = r->c;
	struct proto_frame fr;
	struct col_frame *f;
	size_t used;

	if (proto_frame_decode(bytes, len, PROTO_FRAME_MAX, &fr, &used) ||
	    proto_msg_decode(&fr, c->msg2)) {
		col_warn("spill: undecodable frame dropped");
		return;
	}
	f = col_frame_new(c, bytes, len, c->msg2);
	if (f->stream && under_word(c, f)) {
		struct col_stream *s = col_stream_get(c, f->stream, 0);

		if (s->word_refused) {	/* its claim was refused above */
			col_frame_unref(f);
			return;
		}
		f->word = s->word;
	}
	q_push(c, f);
	r->frames++;
}

/* Move the oldest spill file into the queue when memory allows. */
static int refill(struct col *c)
{
	struct refill r = {c, 0};
	struct col_spill_skip skip = {0};
	int rc;

	if (col_spill_empty(c->spill))
		return 0;
	/* frames held for a VERDICT are memory too: the next file waits for
	 * the ACK or the VERDICT that frees some */
	if (c->mem_used + col_spill_head_size(c->spill) > c->cfg.mem_cap &&
	    (c->ua_head || c->q_head || c->held_frames))
		return 0;	/* after the next ACK */
	rc = col_spill_read_file(c->spill, refill_one, &r, &skip);
	if (rc && rc != PROTO_E_NOTFOUND) {
		col_err("spill read: %s", proto_strerror(rc));
		return 0;
	}
	if (skip.bytes)
		col_warn("spill: %" PRIu64 " bytes of a torn file skipped",
			 skip.bytes);
	if (skip.torn) {
		/* its sender may still hold it and send it again (then the
		 * root stores it and the LOSS is void); else it is lost with
		 * its events counted, not as a gap of unknown size */
		col_warn("spill: batch %016" PRIx64 ":%" PRIu64 " (%u events) "
			 "was in the torn tail", skip.stream, skip.seq,
			 skip.nrecords);
		batch_lost(c, skip.stream, skip.seq, skip.nrecords);
	}
	if (col_spill_empty(c->spill) && c->t_head) {
		/* The tail was waiting behind the spill: now it is next. */
		while (c->t_head) {
			struct col_frame *f = c->t_head;

			c->t_head = f->next;
			q_push(c, f);
		}
		c->t_tail = NULL;
	}
	return r.frames > 0 || rc == 0;
}

void col_up_flush(struct col *c)
{
	struct col_frame *f;

	if (c->root)
		return;
	if (c->flush_armed) {
		evtimer_del(c->flush_timer);
		c->flush_armed = 0;
	}
	if (c->up_state != UP_STREAM)
		return;
	for (;;) {
		int sent = 0, held = 0;

		while ((f = q_pop(c))) {
			if (hold(c, f)) {
				held++;
			} else {
				send_frame(c, f);
				sent++;
			}
		}
		/* a pass that only held frames reads no more: the VERDICT
		 * releases them and flushes again (col_up_release) */
		if ((held && !sent) || !refill(c))
			break;
	}
	c->q_urgent = 0;
	col_up_pressure(c);
}

static void flush_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;

	c->flush_armed = 0;
	col_up_flush(c);
}

static void maybe_flush(struct col *c)
{
	if (c->q_urgent || c->draining || c->q_bytes >= c->cfg.flush_bytes ||
	    c->q_records >= c->cfg.flush_records || c->cfg.flush_ms == 0) {
		col_up_flush(c);
		return;
	}
	if (!c->flush_armed && c->q_head) {
		struct timeval tv = {c->cfg.flush_ms / 1000,
				     (c->cfg.flush_ms % 1000) * 1000};

		evtimer_add(c->flush_timer, &tv);
		c->flush_armed = 1;
	}
}

/* ---- recompression ---------------------------------------------------- */

/* Apply the filters to ev[0..n) in place; returns the records kept. An
 * ARRAY continuing a dropped event goes with it. */
static size_t filter_records(struct col *c, struct proto_event *ev, size_t n)
{
	size_t k = 0;
	int64_t drop_tid = -1;	/* thread whose ARRAYs follow a dropped event */

	for (size_t i = 0; i < n; i++) {
		uint16_t t = ev[i].type;
		int keep = 1;

		if (t == PROTO_EV_ARRAY) {
			keep = (int64_t)ev[i].tid != drop_tid;
		} else if (t != PROTO_EV_STRING) {
			uint32_t rule = t < PROTO_EV__COUNT ? c->filter[t] : 0;

			if (rule == 1)
				keep = 0;
			else if (rule >= 2)
				keep = c->filter_seen[t]++ % rule == 0;
			if ((int64_t)ev[i].tid == drop_tid)
				drop_tid = -1;
			if (!keep && (ev[i].flags & PROTO_EVF_HASARRAY))
				drop_tid = ev[i].tid;
		}
		if (keep)
			ev[k++] = ev[i];
		else if (t != PROTO_EV_ARRAY)
			c->st.filtered_events++;
	}
	return k;
}

/* A BATCH whose codec header says "stored" (flags byte 0) recompressed at
 * cfg.zstd_level, and any BATCH filtered when filters are set; f itself
 * when nothing is to be done or the batch cannot be decoded (passed on as
 * is: the root judges it). */
static struct col_frame *transform(struct col *c, struct col_frame *f)
{
	const size_t off = PROTO_FRAME_HDR + PROTO_BATCH_HDR;
	struct proto_codec *codec = c->codec;
	struct col_frame *nf;
	size_t n, cap, w, total;
	int rc;

	if (!codec || f->nrecords == 0 || f->len < off + 24 ||
	    (!c->filter && (f->data[off + 5] & 0x01)))
		return f;
	if (f->nrecords > c->scratch_cap) {
		size_t ncap = f->nrecords;
		void *ev = realloc(c->scratch_ev, ncap * sizeof(*c->scratch_ev));
		void *out;

		if (!ev)
			return f;
		c->scratch_ev = ev;
		out = realloc(c->scratch_out, off + proto_codec_bound(ncap));
		if (!out)
			return f;
		c->scratch_out = out;
		c->scratch_cap = ncap;
	}
	rc = proto_codec_decode(codec, f->data + off, f->len - off,
				c->scratch_ev, c->scratch_cap, &n);
	if (rc)
		return f;
	size_t kept = c->filter ? filter_records(c, c->scratch_ev, n) : n;
	cap = proto_codec_bound(kept);
	rc = proto_codec_encode(codec, c->scratch_ev, kept, c->scratch_out + off,
				cap, &w);
	if (rc || (kept == n && w >= f->len - off))
		return f;
	memcpy(c->scratch_out + PROTO_FRAME_HDR, f->data + PROTO_FRAME_HDR,
	       PROTO_BATCH_HDR);
	/* the BATCH header's record count (u32 at payload offset 16) */
	for (int i = 0; i < 4; i++)
		c->scratch_out[PROTO_FRAME_HDR + 16 + i] = (uint8_t)(kept >> (8 * i));
	rc = proto_frame_encode(PROTO_MSG_BATCH,
				c->scratch_out + PROTO_FRAME_HDR,
				PROTO_BATCH_HDR + w, c->scratch_out,
				off + cap, &total);
	if (rc)
		return f;
	nf = col_frame_new(c, c->scratch_out, total, NULL);
	nf->type = f->type;
	nf->stream = f->stream;
	nf->seq = f->seq;
	nf->nrecords = (uint32_t)kept;
	col_frame_unref(f);
	return nf;
}

/* ---- enqueue ---------------------------------------------------------- */

/* This collector lost batch seq of stream (nrecords events): counted, and
 * said upward in a LOSS naming that one seq (docs/PROTOCOL.md, "LOSS"),
 * queued in order behind what is already waiting. */
static void batch_lost(struct col *c, uint64_t stream, uint64_t seq,
		       uint32_t nrecords)
{
	struct proto_msg m;
	struct col_frame *lf;
	int rc;

	c->st.dropped_batches++;
	c->st.dropped_events += nrecords;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_LOSS;
	m.u.loss.stream = stream;
	m.u.loss.dropped = nrecords;
	m.u.loss.first_seq = m.u.loss.last_seq = seq;
	lf = col_frame_msg(c, &m, &rc);
	if (lf) {
		if (c->t_head || !col_spill_empty(c->spill))
			t_push(c, lf);
		else
			q_push(c, lf);
	}
}

static void drop_batch(struct col *c, struct col_frame *f)
{
	col_err("dropping batch %016" PRIx64 ":%" PRIu64 " (%u events): "
		"memory and spill exhausted", f->stream, f->seq, f->nrecords);
	batch_lost(c, f->stream, f->seq, f->nrecords);
	col_frame_unref(f);
}

void col_up_enqueue(struct col *c, struct col_frame *f)
{
	struct col_stream *s = f->stream ? col_stream_get(c, f->stream, 0) :
				NULL;
	int rc;

	if (f->type == PROTO_MSG_BATCH)
		f = transform(c, f);
	if (s && s->claim && !s->claim_via)	/* taken on its word */
		f->word = s->word;
	if (f->type == PROTO_MSG_BYE)
		c->q_urgent = 1;
	if (!c->t_head && c->spill &&
	    (!col_spill_empty(c->spill) || c->mem_used > c->cfg.mem_cap)) {
		rc = col_spill_write(c->spill, f->data, f->len);
		if (rc == 0) {
			c->st.spilled_total += f->len;
			col_frame_unref(f);
			col_up_pressure(c);
			maybe_flush(c);
			return;
		}
		if (rc != PROTO_E_FULL)
			col_err("spill write: %s", proto_strerror(rc));
	}
	/* Hard limit: with reading paused this needs a frame-sized overshoot
	 * per child at once; past twice the cap a batch is dropped, counted
	 * and reported with a LOSS frame. */
	if (f->type == PROTO_MSG_BATCH &&
	    c->mem_used > 2 * c->cfg.mem_cap + PROTO_FRAME_MAX) {
		drop_batch(c, f);
	} else if (c->t_head || !col_spill_empty(c->spill)) {
		t_push(c, f);
	} else {
		q_push(c, f);
	}
	col_up_pressure(c);
	maybe_flush(c);
}

/* Drop the frames that came in under the claim of s taken on its word
 * from the list at *head (via next); returns how many. */
static uint64_t purge_list(struct col_frame **head, struct col_frame **tail,
			   const struct col_stream *s, uint64_t *bytes,
			   uint64_t *records)
{
	struct col_frame **pp = head, *f;
	uint64_t n = 0;

	*tail = NULL;
	while ((f = *pp)) {
		if (f->stream != s->id || f->word != s->word) {
			*tail = f;
			pp = &f->next;
			continue;
		}
		*pp = f->next;
		if (bytes) {
			*bytes -= f->len;
			*records -= f->nrecords;
		}
		col_frame_unref(f);
		n++;
	}
	return n;
}

/* The claim of s taken on its word was refused above: its frames are
 * dropped, here and (when read) in the spill, and only they - not those
 * of the stream that came otherwise (a child collector's link, a spill
 * left by an earlier run of this collector). They were all held, none
 * sent up. The others held with them go up now. */
void col_up_purge(struct col *c, struct col_stream *s)
{
	purge_list(&c->q_head, &c->q_tail, s, &c->q_bytes, &c->q_records);
	purge_list(&c->t_head, &c->t_tail, s, NULL, NULL);
	c->held_frames -= purge_list(&s->held_head, &s->held_tail, s, NULL,
				     NULL);
	col_spill_wpos(c->spill, &s->word_to);
	s->word_refused = 1;
	if (s->held_head)
		col_up_release(c, s);	/* flushes */
	else
		col_up_flush(c);	/* the spill may wait for memory */
	col_drain_check(c);
}

/* ---- link ------------------------------------------------------------- */

static void requeue(struct col *c)
{
	struct col_frame *head = NULL, *tail = NULL, *f;
	uint64_t bytes = 0, records = 0;

	while ((f = c->ua_head)) {
		if (f->type == PROTO_MSG_BATCH) {
			struct col_stream *s = col_stream_get(c, f->stream, 0);

			if (s)
				s->ua_head = s->ua_tail = NULL;
		}
		ua_unlink(c, f);
		f->next = NULL;
		if (tail)
			tail->next = f;
		else
			head = f;
		tail = f;
		bytes += f->len;
		records += f->nrecords;
	}
	if (!head)
		return;
	tail->next = c->q_head;
	if (!c->q_head)
		c->q_tail = tail;
	c->q_head = head;
	c->q_bytes += bytes;
	c->q_records += records;
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	up_connect(arg);
}

static void up_fail(struct col *c, const char *why)
{
	struct timeval tv;

	if (c->up_state == UP_STREAM)
		col_warn("parent %s lost: %s", c->cfg.parent ? c->cfg.parent :
			 "(hook)", why);
	else
		col_info("parent %s: %s", c->cfg.parent ? c->cfg.parent :
			 "(hook)", why);
	close_up(c);
	c->clock.outstanding = 0;
	if ((c->clock.rounds_left && c->clock.phase == 2) || c->clock.end_rounds)
		c->drain_clock_done = 1;
	c->clock.rounds_left = 0;
	c->clock.end_rounds = 0;
	requeue(c);
	if (!c->backoff_ms)
		c->backoff_ms = BACKOFF_MIN_MS;
	else if ((c->backoff_ms *= 2) > BACKOFF_MAX_MS)
		c->backoff_ms = BACKOFF_MAX_MS;
	tv.tv_sec = c->backoff_ms / 1000;
	tv.tv_usec = (c->backoff_ms % 1000) * 1000;
	evtimer_add(c->up_retry, &tv);
	col_drain_check(c);
}

static void send_ping(struct col *c)
{
	struct proto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_PING;
	m.u.ping.id = ++c->clock.ping_id;
	c->clock.t_sent = col_now_ns();
	m.u.ping.t_send = c->clock.t_sent;
	c->clock.outstanding = 1;
	col_send_msg(c->up, &m);
}

void col_up_clock_round(struct col *c, uint32_t phase, unsigned rounds)
{
	if (c->root || c->up_state != UP_STREAM || !rounds) {
		if (phase == 2)
			c->drain_clock_done = 1;
		return;
	}
	if (c->clock.rounds_left) {
		/* one round at a time: the end-of-run round follows this one
		 * (dropping it would leave a drain waiting for it) */
		if (phase == 2)
			c->clock.end_rounds = rounds;
		return;
	}
	if (rounds > PROTO_CLOCK_MAX)
		rounds = PROTO_CLOCK_MAX;
	c->clock.rounds_left = rounds;
	c->clock.phase = phase;
	c->clock.msg->u.clock.n = 0;
	send_ping(c);
}

/* The offset of the round's sample of least round trip, for STATS: an
 * indication (the manager fits every round, manager-post.md). */
static void last_offset(struct col *c, const struct proto_clock *ck)
{
	uint64_t best = 0;

	for (uint32_t i = 0; i < ck->n; i++) {
		const struct proto_clock_sample *x = &ck->sample[i];

		if (x->r < x->s || x->sj < x->rj || x->r - x->s < x->sj - x->rj)
			continue;
		uint64_t rtt = (x->r - x->s) - (x->sj - x->rj);

		if (!best || rtt < best) {
			best = rtt ? rtt : 1;
			c->clock_offset_ns = (int64_t)(((double)x->rj - (double)x->s +
							(double)x->sj - (double)x->r) / 2);
		}
	}
	if (best)
		c->clock_rtt_ns = best;
}

static void on_pong(struct col *c, const struct proto_pong *p)
{
	struct col_clock *k = &c->clock;
	struct proto_clock_sample *s;
	uint64_t now = col_now_ns();

	if (!k->outstanding || p->id != k->ping_id || !k->rounds_left)
		return;	/* a stale answer */
	k->outstanding = 0;
	s = &k->msg->u.clock.sample[k->msg->u.clock.n++];
	s->s = k->t_sent;
	s->rj = p->t_recv;
	s->sj = p->t_send;
	s->r = now;
	if (--k->rounds_left && k->msg->u.clock.n < PROTO_CLOCK_MAX) {
		send_ping(c);
		return;
	}
	k->rounds_left = 0;
	last_offset(c, &k->msg->u.clock);
	{
		struct col_frame *f;
		int rc;

		k->msg->type = PROTO_MSG_CLOCK;
		k->msg->u.clock.child = c->node_id;
		k->msg->u.clock.parent = c->parent_id;
		k->msg->u.clock.phase = k->phase;
		f = col_frame_msg(c, k->msg, &rc);
		if (f) {
			col_up_enqueue(c, f);
		} else {
			col_err("CLOCK frame: %s", proto_strerror(rc));
		}
	}
	if (k->phase == 2) {
		c->drain_clock_done = 1;
		col_drain_check(c);
	} else if (k->end_rounds) {
		unsigned r = k->end_rounds;

		k->end_rounds = 0;
		col_up_clock_round(c, 2, r);
	}
}

static void on_ack(struct col *c, uint64_t stream, uint64_t seq,
		   const struct col_frame *ackf)
{
	struct col_stream *s = col_stream_get(c, stream, 0);
	struct col_frame *f;

	col_spool_acked(c, stream, seq);
	if (!s)
		return;
	while ((f = s->ua_head) && f->seq <= seq) {
		s->ua_head = f->next;
		if (!s->ua_head)
			s->ua_tail = NULL;
		f->next = NULL;
		/* Frames before it on the link got there too. */
		ua_unlink(c, f);
		col_frame_unref(f);
	}
	if (s->owner && s->owner->state == CS_STREAM && !s->owner->write_dead) {
		struct col_conn *cn = s->owner;

		bufferevent_write(cn->bev, ackf->data, ackf->len);
		/* The ACK of a sensor's own BYE ends its connection. */
		if (s->bye && cn->role == PROTO_ROLE_SENSOR &&
		    cn->peer_id == s->id && !s->ua_head && seq >= s->bye_seq) {
			col_conn_finish(cn);	/* may free cn; s survives */
			s = col_stream_get(c, stream, 0);
		}
	}
	col_stream_gc(c, s);
}

static void up_read_cb(struct bufferevent *bev, void *arg)
{
	struct col *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct proto_msg *m = c->msg2;
	uint8_t want[PROTO_MAC];
	int acked = 0;

	for (;;) {
		struct col_frame *f;
		int rc = col_read_frame(c, in, c->cfg.frame_max, &f);

		if (rc == 0)
			break;
		if (rc < 0) {
			up_fail(c, proto_strerror(rc));
			return;
		}
		/* col_read_frame decoded into c->msg; keep a copy of the
		 * small messages we need, c->msg is shared with children. */
		m->type = f->type;
		switch (f->type) {
		case PROTO_MSG_CHALLENGE: m->u.challenge = c->msg->u.challenge; break;
		case PROTO_MSG_WELCOME: m->u.welcome = c->msg->u.welcome; break;
		case PROTO_MSG_ACK: m->u.ack = c->msg->u.ack; break;
		case PROTO_MSG_PONG: m->u.pong = c->msg->u.pong; break;
		case PROTO_MSG_ERROR: m->u.error = c->msg->u.error; break;
		case PROTO_MSG_VERDICT: m->u.verdict = c->msg->u.verdict; break;
		default: break;
		}
		if (f->type == PROTO_MSG_ERROR) {
			col_err("parent refused: %d %s", m->u.error.code,
				m->u.error.message);
			col_frame_unref(f);
			up_fail(c, "ERROR from parent");
			return;
		}
		switch (c->up_state) {
		case UP_CHALLENGE:
			if (f->type != PROTO_MSG_CHALLENGE)
				goto unexpected;
			memcpy(c->up_server_nonce, m->u.challenge.nonce,
			       PROTO_NONCE);
			{
				struct proto_msg a;

				memset(&a, 0, sizeof(a));
				a.type = PROTO_MSG_AUTH;
				proto_auth_proof(PROTO_AUTH_CLIENT,
						 c->cfg.secret, c->cfg.secretlen,
						 m->u.challenge.nonce,
						 c->up_nonce, c->node_id,
						 a.u.auth.mac);
				col_send_msg(c->up, &a);
			}
			c->up_state = UP_WELCOME;
			break;
		case UP_WELCOME:
			if (f->type != PROTO_MSG_WELCOME)
				goto unexpected;
			proto_auth_proof(PROTO_AUTH_SERVER, c->cfg.secret,
					 c->cfg.secretlen,
					 c->up_server_nonce,
					 c->up_nonce, c->node_id, want);
			if (!proto_auth_equal(want, m->u.welcome.mac)) {
				col_frame_unref(f);
				up_fail(c, "parent's proof is wrong");
				return;
			}
			c->parent_id = m->u.welcome.node_id;
			c->up_state = UP_STREAM;
			bufferevent_set_timeouts(c->up, NULL, NULL);
			c->backoff_ms = 0;
			if (c->up_ever)
				c->st.reconnects++;
			col_info("parent %s (node %016" PRIx64 ") %s",
				 c->cfg.parent ? c->cfg.parent : "(hook)",
				 c->parent_id, c->up_ever ? "reconnected" :
				 "connected");
			col_up_clock_round(c, c->draining ? 2 :
					   c->up_ever ? 1 : 0,
					   c->cfg.clock_rounds);
			c->up_ever = 1;
			col_key_resend(c);	/* sensors waiting for WELCOME */
			c->q_urgent = 1;
			col_up_flush(c);
			break;
		case UP_STREAM:
			if (f->type == PROTO_MSG_ACK) {
				on_ack(c, m->u.ack.stream, m->u.ack.seq, f);
				acked = 1;
			} else if (f->type == PROTO_MSG_PONG) {
				on_pong(c, &m->u.pong);
			} else if (f->type == PROTO_MSG_VERDICT) {
				col_key_verdict(c, &m->u.verdict, f);
			} else {
				goto unexpected;
			}
			break;
		default:
			goto unexpected;
		}
		col_frame_unref(f);
		continue;
unexpected:
		col_frame_unref(f);
		up_fail(c, "unexpected message from parent");
		return;
	}
	if (acked) {
		col_up_flush(c);	/* refill from the spill */
		col_up_pressure(c);
		col_drain_check(c);
	}
}

static void up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct col *c = arg;
	struct proto_msg m;
	struct timeval tv = {c->cfg.handshake_ms / 1000,
			     (c->cfg.handshake_ms % 1000) * 1000};
	char why[300], tlswhy[256];

	if (what & BEV_EVENT_CONNECTED) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_MSG_HELLO;
		m.u.hello.role = PROTO_ROLE_COLLECTOR;
		m.u.hello.pid = (uint32_t)getpid();
		m.u.hello.id = c->node_id;
		m.u.hello.rank = -1;
		proto_random(c->up_nonce, PROTO_NONCE);
		memcpy(m.u.hello.nonce, c->up_nonce, PROTO_NONCE);
		snprintf(m.u.hello.host, sizeof(m.u.hello.host), "%s", c->host);
		snprintf(m.u.hello.name, sizeof(m.u.hello.name), "%s", c->name);
		col_send_msg(bev, &m);
		c->up_state = UP_CHALLENGE;
		bufferevent_set_timeouts(bev, &tv, NULL);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		up_fail(c, "closed by parent");
	} else if (what & BEV_EVENT_TIMEOUT) {
		up_fail(c, c->up_state == UP_CONNECTING ? "connect timeout" :
			"handshake timeout");
	} else if (what & BEV_EVENT_ERROR) {
		if (c->tls_cli) {
			snprintf(why, sizeof(why), "TLS: %s",
				 col_tls_error(bev, tlswhy, sizeof(tlswhy)));
			/* a refused certificate is worth more than info */
			if (c->up_state != UP_STREAM)
				col_warn("parent %s: %s", c->cfg.parent, why);
			up_fail(c, why);
		} else {
			up_fail(c, evutil_socket_error_to_string(
					EVUTIL_SOCKET_ERROR()));
		}
	}
}

static void up_connect(struct col *c)
{
	struct bufferevent *bev;
	struct timeval tv = {c->cfg.handshake_ms / 1000,
			     (c->cfg.handshake_ms % 1000) * 1000};

	if (c->up || (!c->cfg.parent && !c->up_connector))
		return;
	if (c->up_connector) {
		bev = c->up_connector(c, c->up_connector_arg);
		if (!bev) {
			up_fail(c, "connector failed");
			return;
		}
		c->up = bev;
		bufferevent_setcb(bev, up_read_cb, NULL, up_event_cb, c);
		bufferevent_enable(bev, EV_READ | EV_WRITE);
		c->up_state = UP_CONNECTING;
		up_event_cb(bev, BEV_EVENT_CONNECTED, c);
		return;
	}
	bev = c->tls_cli ? col_tls_connect(c) :
	      bufferevent_socket_new(c->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		up_fail(c, "out of memory");
		return;
	}
	c->up = bev;
	c->up_state = UP_CONNECTING;
	bufferevent_setcb(bev, up_read_cb, NULL, up_event_cb, c);
	bufferevent_set_max_single_read(bev, UP_MAX_READ);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	/* the connect (and the TLS handshake) is bounded too: a parent
	 * behind a link that is down must not hold the retry forever */
	bufferevent_set_timeouts(bev, &tv, &tv);
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&c->parent_sa,
				       c->parent_salen) < 0)
		up_fail(c, "connect failed");
}

/* A PING now and then keeps the link open under the parent's idle
 * timeout (docs/SECURITY.md, "Limits") when neither the clock rounds nor
 * STATS come often enough: id 0, so that its PONG is no clock sample. */
static void keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct col *c = arg;
	struct proto_msg m;

	if (c->up_state != UP_STREAM)
		return;
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MSG_PING;
	m.u.ping.t_send = col_now_ns();
	col_send_msg(c->up, &m);
}

static int period_covers(unsigned period, unsigned keepalive)
{
	return period && period <= keepalive;
}

int col_up_start(struct col *c)
{
	unsigned k = c->cfg.keepalive_ms;

	if (k && !period_covers(c->cfg.clock_period_ms, k) &&
	    !period_covers(c->cfg.stats_period_ms, k)) {
		struct timeval tv = {k / 1000, (k % 1000) * 1000};

		event_add(c->keepalive_timer, &tv);
	}
	up_connect(c);
	return 0;
}

void col_up_stop(struct col *c)
{
	struct col_frame *f;

	close_up(c);
	requeue(c);
	while ((f = q_pop(c)))
		col_frame_unref(f);
	while ((f = c->t_head)) {
		c->t_head = f->next;
		col_frame_unref(f);
	}
	c->t_tail = NULL;
}

void col_set_up_connector(struct col *c,
			  struct bufferevent *(*fn)(struct col *, void *),
			  void *arg)
{
	c->up_connector = fn;
	c->up_connector_arg = arg;
	if (!c->root)
		up_connect(c);
}

int col_up_init(struct col *c)
{
	c->resume_ev = event_new(c->base, -1, 0, resume_cb, c);
	c->flush_timer = evtimer_new(c->base, flush_timer_cb, c);
	c->up_retry = evtimer_new(c->base, retry_cb, c);
	c->keepalive_timer = event_new(c->base, -1, EV_PERSIST, keepalive_cb,
				       c);
	if (!c->resume_ev || !c->flush_timer || !c->up_retry ||
	    !c->keepalive_timer)
		return PROTO_E_NOMEM;
	return 0;
}

void col_up_fini(struct col *c)
{
	if (c->resume_ev)
		event_free(c->resume_ev);
	if (c->flush_timer)
		event_free(c->flush_timer);
	if (c->up_retry)
		event_free(c->up_retry);
	if (c->keepalive_timer)
		event_free(c->keepalive_timer);
	c->resume_ev = c->flush_timer = c->up_retry = NULL;
	c->keepalive_timer = NULL;
}
