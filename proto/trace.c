/*
 * proto/trace.c - events of a job directory, with streams, strings and arrays.
 *
 * Per record of a decoded batch:
 *   STRING -> appended to the string (stream, tid, id) being assembled;
 *   ARRAY  -> appended to the pending event of (stream, tid);
 *   other  -> yielded, or held as the pending event of its thread when it
 *             carries PROTO_EVF_HASARRAY until its array is complete (or the
 *             thread's next event arrives, or the trace ends).
 * Output goes through a small queue because one record may release two events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/msg.h"
#include "proto/trace.h"

#define MAX_STREAMS (1u << 20)

struct proto_kv_list {
	size_t n, cap;
	char **key, **value;
};

/* open-addressing map from a 3-part key to a pointer */
struct mapent {
	uint64_t a, b, c;
	void *val;
};

struct map {
	struct mapent *e;
	size_t cap, n;		/* cap: power of two */
};

struct strval {
	size_t len;
	char buf[];		/* PROTO_STRING_MAX + 1 */
};

struct pending {
	struct proto_event ev;
	const struct proto_stream *stream;
	int64_t *array;
	size_t narray, total;
	int active;
};

struct proto_trace {
	struct proto_jobdir_r *dir;
	struct proto_codec *codec;
	struct proto_msg *msg;
	struct proto_event *recs;
	size_t recs_cap, nrecs, pos;
	struct proto_stream *cur;	/* stream of the batch being read */
	struct proto_stream **streams;
	size_t nstreams, streams_cap;
	struct map stream_map, string_map, pending_map;
	size_t nstrings;
	struct proto_trace_stats stats;
	proto_trace_frame_cb cb;
	void *cb_arg;
	/* output queue: at most 2 events at once */
	struct proto_event outev[2];
	const struct proto_stream *outstream[2];
	int64_t *outarray[2];
	size_t outnarray[2];
	int nout, outpos;
	int ended;
	int follow;		/* PROTO_TRACE_FOLLOW and not finished */
	int64_t *yielded_array;	/* owned array of the last yielded event */
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) *
		     0xC2B2AE3D27D4EB4Full ^ c * 0x165667B19E3779F9ull;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

static void **map_slot(struct map *m, uint64_t a, uint64_t b, uint64_t c,
		       int create)
{
	if (create && (m->n + 1) * 4 >= m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct mapent *ne = calloc(ncap, sizeof(*ne));

		if (!ne)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->e[i].val)
				continue;
			size_t j = mix(m->e[i].a, m->e[i].b, m->e[i].c) & (ncap - 1);
			while (ne[j].val)
				j = (j + 1) & (ncap - 1);
			ne[j] = m->e[i];
		}
		free(m->e);
		m->e = ne;
		m->cap = ncap;
	}
	if (!m->cap)
		return NULL;
	size_t j = mix(a, b, c) & (m->cap - 1);
	while (m->e[j].val) {
		if (m->e[j].a == a && m->e[j].b == b && m->e[j].c == c)
			return &m->e[j].val;
		j = (j + 1) & (m->cap - 1);
	}
	if (!create)
		return NULL;
	m->e[j].a = a;
	m->e[j].b = b;
	m->e[j].c = c;
	m->n++;
	return &m->e[j].val;	/* *slot is NULL: caller must fill it */
}

static void map_free(struct map *m, void (*fr)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].val && fr)
			fr(m->e[i].val);
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

static void kv_free(struct proto_kv_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->key[i]);
		free(l->value[i]);
	}
	free(l->key);
	free(l->value);
	free(l);
}

static int kv_set(struct proto_kv_list *l, const char *k, const char *v)
{
	char *nv;

	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->key[i], k) == 0) {
			if (!(nv = strdup(v)))
				return PROTO_E_NOMEM;
			free(l->value[i]);
			l->value[i] = nv;
			return 0;
		}
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		char **nk = realloc(l->key, ncap * sizeof(*nk));

		if (!nk)
			return PROTO_E_NOMEM;
		l->key = nk;
		char **nvv = realloc(l->value, ncap * sizeof(*nvv));
		if (!nvv)
			return PROTO_E_NOMEM;
		l->value = nvv;
		l->cap = ncap;
	}
	l->key[l->n] = strdup(k);
	l->value[l->n] = strdup(v);
	if (!l->key[l->n] || !l->value[l->n]) {
		free(l->key[l->n]);
		free(l->value[l->n]);
		return PROTO_E_NOMEM;
	}
	l->n++;
	return 0;
}

const char *proto_stream_meta(const struct proto_stream *s, const char *key)
{
	if (!s || !s->meta)
		return NULL;
	for (size_t i = 0; i < s->meta->n; i++)
		if (strcmp(s->meta->key[i], key) == 0)
			return s->meta->value[i];
	return NULL;
}

static struct proto_stream *stream_get(struct proto_trace *t, uint64_t id)
{
	void **slot = map_slot(&t->stream_map, id, 0, 0, 0);

	if (slot)
		return *slot;
	if (t->nstreams >= MAX_STREAMS)
		return NULL;
	if (t->nstreams == t->streams_cap) {
		size_t ncap = t->streams_cap ? t->streams_cap * 2 : 16;
		struct proto_stream **ns = realloc(t->streams, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		t->streams = ns;
		t->streams_cap = ncap;
	}
	struct proto_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->meta = calloc(1, sizeof(*s->meta));
	if (!s->meta) {
		free(s);
		return NULL;
	}
	s->id = id;
	s->rank = -1;
	s->pid = -1;
	slot = map_slot(&t->stream_map, id, 0, 0, 1);
	if (!slot) {
		kv_free(s->meta);
		free(s);
		return NULL;
	}
	*slot = s;
	t->streams[t->nstreams++] = s;
	return s;
}

static void apply_meta(struct proto_stream *s, const struct proto_meta *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const char *k = m->kv[i].key, *v = m->kv[i].value;

		if (kv_set(s->meta, k, v))
			continue;
		if (strcmp(k, "rank") == 0)
			s->rank = (int32_t)strtol(v, NULL, 10);
		else if (strcmp(k, "pid") == 0)
			s->pid = strtoll(v, NULL, 10);
		else if (strcmp(k, "host") == 0)
			snprintf(s->host, sizeof(s->host), "%s", v);
		else if (strcmp(k, "exe") == 0)
			snprintf(s->exe, sizeof(s->exe), "%s", v);
	}
}

struct proto_trace *proto_trace_open(const char *dir, int *rc)
{
	return proto_trace_open_flags(dir, 0, rc);
}

struct proto_trace *proto_trace_open_flags(const char *dir, int flags,
					   int *rc)
{
	struct proto_trace *t;
	int err = PROTO_E_NOMEM;

	if (flags & ~PROTO_TRACE_FOLLOW) {
		err = PROTO_E_ARG;
		goto fail;
	}
	if (!(t = calloc(1, sizeof(*t))))
		goto fail;
	t->follow = (flags & PROTO_TRACE_FOLLOW) != 0;
	t->msg = malloc(sizeof(*t->msg));
	if (!t->msg)
		goto fail_t;
	t->codec = proto_codec_new(PROTO_CODEC_LEVEL_NONE);
	if (!t->codec)
		goto fail_msg;
	t->dir = proto_jobdir_open_flags(dir, t->follow ? PROTO_JOBDIR_FOLLOW : 0,
					 &err);
	if (!t->dir)
		goto fail_codec;
	return t;

fail_codec:
	proto_codec_free(t->codec);
fail_msg:
	free(t->msg);
fail_t:
	free(t);
fail:
	if (rc)
		*rc = err;
	return NULL;
}

static void emit(struct proto_trace *t, const struct proto_event *ev,
		 const struct proto_stream *s, int64_t *array, size_t narray)
{
	/* the queue holds at most two entries by construction */
	t->outev[t->nout] = *ev;
	t->outstream[t->nout] = s;
	t->outarray[t->nout] = array;
	t->outnarray[t->nout] = narray;
	t->nout++;
}

static void release_pending(struct proto_trace *t, struct pending *p)
{
	if (!p->active)
		return;
	emit(t, &p->ev, p->stream, p->array, p->narray);
	p->array = NULL;	/* ownership moved to the output queue */
	p->active = 0;
	p->narray = p->total = 0;
}

static void pending_free(void *v)
{
	struct pending *p = v;

	free(p->array);
	free(p);
}

static struct pending *pending_get(struct proto_trace *t, uint64_t stream,
				   uint32_t tid, int create)
{
	void **slot = map_slot(&t->pending_map, stream, tid, 0, create);

	if (!slot)
		return NULL;
	if (!*slot && create)
		*slot = calloc(1, sizeof(struct pending));
	return *slot;
}

static void on_string(struct proto_trace *t, const struct proto_event *r)
{
	uint64_t id = r->t_start, off = r->t_end;
	size_t len = r->flags;

	if (len == 0 || len > PROTO_STRING_CHUNK || off + len > PROTO_STRING_MAX)
		return;
	void **slot = map_slot(&t->string_map, t->cur->id,
			       ((uint64_t)r->tid << 32) | 0, id, 0);
	struct strval *sv = slot ? *slot : NULL;

	if (off == 0) {
		if (!sv) {
			if (t->nstrings >= PROTO_TRACE_STRINGS_MAX)
				return;
			sv = malloc(sizeof(*sv) + PROTO_STRING_MAX + 1);
			if (!sv)
				return;
			slot = map_slot(&t->string_map, t->cur->id,
					(uint64_t)r->tid << 32, id, 1);
			if (!slot) {
				free(sv);
				return;
			}
			*slot = sv;
			t->nstrings++;
		}
		sv->len = 0;
	}
	if (!sv || sv->len != off)
		return;		/* a chunk out of order: keep what we had */
	memcpy(sv->buf + off, r->arg, len);
	sv->len = off + len;
	sv->buf[sv->len] = '\0';
}

static void on_array(struct proto_trace *t, const struct proto_event *r)
{
	struct pending *p = pending_get(t, t->cur->id, r->tid, 0);
	size_t n = r->flags;

	if (!p || !p->active || n == 0 || n > PROTO_EV_NARGS)
		return;
	if (r->t_end > PROTO_TRACE_ARRAY_MAX || r->t_start != p->narray ||
	    (p->total && r->t_end != p->total)) {
		release_pending(t, p);
		return;
	}
	if (!p->array) {
		p->total = (size_t)r->t_end;
		p->array = malloc((p->total ? p->total : 1) * sizeof(int64_t));
		if (!p->array) {
			release_pending(t, p);
			return;
		}
	}
	if (p->narray + n > p->total)
		n = p->total - p->narray;
	memcpy(p->array + p->narray, r->arg, n * sizeof(int64_t));
	p->narray += n;
	if (p->narray == p->total)
		release_pending(t, p);
}

/* Every lost event once (proto-trace.md, "Losses"): the sensor says its
 * drops twice - DROP records in the data (per thread, since the last one)
 * and LOSS frames (a running total, resent after reconnects, naming no
 * seq) - so the larger of the two is its count; a collector that lost a
 * batch says so in a LOSS of that one seq, whose events count once when
 * that batch is never stored (its sender may send it again). */
static void loss_total(struct proto_stream *s)
{
	s->lost_events = (s->drop_events > s->sensor_loss ? s->drop_events :
			  s->sensor_loss) + s->collector_loss + s->loss_cand_sum;
}

static int in_gap(const struct proto_stream *s, uint64_t seq);

/* A new candidate seq: 0, or -1 when it finds no room (then its count goes
 * to collector_loss, counted even if the batch is stored later: an
 * overcount rather than a loss that was never said). */
static int loss_cand_add(struct proto_stream *s, uint64_t seq,
			 uint64_t dropped)
{
	if (s->loss_ncand == s->loss_cand_cap) {
		unsigned ncap = s->loss_cand_cap ? 2 * s->loss_cand_cap : 8;
		void *n = ncap > s->loss_cand_cap ?
			  realloc(s->loss_cand, ncap * sizeof(*s->loss_cand)) :
			  NULL;

		if (!n)
			return -1;
		s->loss_cand = n;
		s->loss_cand_cap = ncap;
	}
	s->loss_cand[s->loss_ncand][0] = seq;
	s->loss_cand[s->loss_ncand++][1] = dropped;
	s->loss_cand_sum += dropped;
	return 0;
}

static void on_loss(struct proto_stream *s, const struct proto_loss *l)
{
	uint64_t seq = l->first_seq;

	if (seq && seq == l->last_seq) {
		unsigned i;

		/* a collector lost batch seq: void when it is stored (before
		 * or after this LOSS), once per seq however many said it */
		if (seq <= s->last_seq && !in_gap(s, seq))
			return;
		for (i = 0; i < s->loss_ncand && s->loss_cand[i][0] != seq; i++)
			;
		if (i < s->loss_ncand) {
			if (l->dropped > s->loss_cand[i][1]) {
				s->loss_cand_sum += l->dropped -
						    s->loss_cand[i][1];
				s->loss_cand[i][1] = l->dropped;
			}
		} else if (loss_cand_add(s, seq, l->dropped)) {
			s->collector_loss += l->dropped;
		}
	} else if (l->dropped > s->sensor_loss) {
		s->sensor_loss = l->dropped;
	}
	loss_total(s);
}

/* Batch seq of s is stored: a LOSS naming it is void (it arrived after
 * all). */
static void loss_stored(struct proto_stream *s, uint64_t seq)
{
	for (unsigned i = 0; i < s->loss_ncand; i++) {
		if (s->loss_cand[i][0] != seq)
			continue;
		s->loss_cand_sum -= s->loss_cand[i][1];
		s->loss_ncand--;
		s->loss_cand[i][0] = s->loss_cand[s->loss_ncand][0];
		s->loss_cand[i][1] = s->loss_cand[s->loss_ncand][1];
		i--;
	}
	loss_total(s);
}

static void on_record(struct proto_trace *t, const struct proto_event *r)
{
	if (r->type == PROTO_EV_STRING) {
		on_string(t, r);
		return;
	}
	if (r->type == PROTO_EV_ARRAY) {
		on_array(t, r);
		return;
	}
	struct pending *p = pending_get(t, t->cur->id, r->tid,
					(r->flags & PROTO_EVF_HASARRAY) != 0);
	if (p)
		release_pending(t, p);
	t->cur->events++;
	t->stats.events++;
	if (!t->cur->t_first || r->t_start < t->cur->t_first)
		t->cur->t_first = r->t_start;
	if (r->t_end > t->cur->t_last)
		t->cur->t_last = r->t_end;
	if (r->type == PROTO_EV_DROP) {
		t->cur->drop_events += (uint64_t)r->arg[0];
		loss_total(t->cur);
	}
	if ((r->flags & PROTO_EVF_HASARRAY) && p) {
		p->ev = *r;
		p->stream = t->cur;
		p->active = 1;
		p->narray = p->total = 0;
		free(p->array);
		p->array = NULL;
		return;
	}
	emit(t, r, t->cur, NULL, 0);
}

#define GAP_RANGES 256

/* Remember seqs lo..hi of s as never seen (for the index's event counts). */
static void gap_note(struct proto_stream *s, uint64_t lo, uint64_t hi)
{
	if (!s->gap_range) {
		s->gap_range = calloc(GAP_RANGES, sizeof(*s->gap_range));
		if (!s->gap_range)
			return;
	}
	if (s->ngap_range == GAP_RANGES)
		return;
	s->gap_range[s->ngap_range][0] = lo;
	s->gap_range[s->ngap_range++][1] = hi;
}

static int in_gap(const struct proto_stream *s, uint64_t seq)
{
	for (unsigned i = 0; i < s->ngap_range; i++)
		if (seq >= s->gap_range[i][0] && seq <= s->gap_range[i][1])
			return 1;
	return 0;
}

/* At the end of the read: the batches the index (and the BYEs) name that
 * were never read - a segment cut or damaged - count as missing, with
 * their events when the index has them (proto-trace.md, "Losses"). The
 * index may be stale or damaged: what it cannot say is not counted. */
static void gaps_from_index(struct proto_trace *t)
{
	struct proto_jobdir_index_entry e;

	for (uint64_t i = 0; proto_jobdir_index_get(t->dir, i, &e) == 1; i++) {
		struct proto_stream *s = stream_get(t, e.stream);

		if (!s)
			break;
		if (e.seq > s->last_seq) {
			s->gap_events += e.nrecords;
			if (e.seq > s->top_seq)
				s->top_seq = e.seq;
		} else if (in_gap(s, e.seq)) {
			s->gap_events += e.nrecords;
		}
	}
	for (size_t i = 0; i < t->nstreams; i++) {
		struct proto_stream *s = t->streams[i];

		if (s->top_seq > s->last_seq) {
			s->gap_batches += s->top_seq - s->last_seq;
			gap_note(s, s->last_seq + 1, s->top_seq);
		}
	}
}

static int on_batch(struct proto_trace *t, const struct proto_batch *b)
{
	struct proto_stream *s = stream_get(t, b->stream);
	uint32_t n;

	if (!s)
		return PROTO_E_NOMEM;
	if (b->seq <= s->last_seq) {
		s->dup_batches++;
		t->stats.dup_batches++;
		return 0;
	}
	if (proto_codec_peek(b->data, b->datalen, &n) != 0) {
		t->stats.bad_batches++;
		return 0;
	}
	if (n > t->recs_cap) {
		struct proto_event *nr = realloc(t->recs, n * sizeof(*nr));

		if (!nr)
			return PROTO_E_NOMEM;
		t->recs = nr;
		t->recs_cap = n;
	}
	size_t got = 0;
	if (proto_codec_decode(t->codec, b->data, b->datalen, t->recs,
			       t->recs_cap, &got) != 0 || got != n) {
		t->stats.bad_batches++;
		return 0;
	}
	if (b->seq > s->last_seq + 1) {
		s->gap_batches += b->seq - s->last_seq - 1;
		gap_note(s, s->last_seq + 1, b->seq - 1);
	}
	s->last_seq = b->seq;
	if (s->loss_ncand)
		loss_stored(s, b->seq);
	s->batches++;
	t->stats.batches++;
	t->cur = s;
	t->nrecs = got;
	t->pos = 0;
	return 0;
}

static int on_frame(struct proto_trace *t, const struct proto_frame *f)
{
	struct proto_stream *s;
	int rc;

	t->stats.frames++;
	if (f->type <= PROTO_MSG__MAX)
		t->stats.frames_by_type[f->type]++;
	if (f->type != PROTO_MSG_BATCH && f->type != PROTO_MSG_META &&
	    f->type != PROTO_MSG_LOSS && f->type != PROTO_MSG_BYE) {
		if (t->cb)
			t->cb(t->cb_arg, f);
		return 0;
	}
	rc = proto_msg_decode(f, t->msg);
	if (rc)
		return 0;	/* undecodable payload: counted in frames only */
	switch (f->type) {
	case PROTO_MSG_BATCH:
		return on_batch(t, &t->msg->u.batch);
	case PROTO_MSG_META:
		if (!(s = stream_get(t, t->msg->u.meta.id)))
			return PROTO_E_NOMEM;
		apply_meta(s, &t->msg->u.meta);
		break;
	case PROTO_MSG_LOSS:
		if (!(s = stream_get(t, t->msg->u.loss.stream)))
			return PROTO_E_NOMEM;
		on_loss(s, &t->msg->u.loss);
		break;
	case PROTO_MSG_BYE:
		if (!(s = stream_get(t, t->msg->u.bye.stream)))
			return PROTO_E_NOMEM;
		s->ended = 1;
		if (t->msg->u.bye.last_seq > s->top_seq)
			s->top_seq = t->msg->u.bye.last_seq;
		break;
	}
	if (t->cb)
		t->cb(t->cb_arg, f);
	return 0;
}

int proto_trace_next(struct proto_trace *t, struct proto_trace_event *out)
{
	struct proto_frame f;
	int rc;

	free(t->yielded_array);
	t->yielded_array = NULL;
	for (;;) {
		if (t->outpos < t->nout) {
			int i = t->outpos++;

			out->ev = &t->outev[i];
			out->stream = t->outstream[i];
			out->array = t->outarray[i];
			out->narray = t->outnarray[i];
			t->yielded_array = t->outarray[i];
			if (t->outpos == t->nout)
				t->outpos = t->nout = 0;
			return 1;
		}
		if (t->pos < t->nrecs) {
			on_record(t, &t->recs[t->pos++]);
			continue;
		}
		if (t->ended)
			return 0;
		rc = proto_jobdir_next(t->dir, &f);
		if (rc < 0)
			return rc;
		if (rc == 0 && t->follow)
			return 0;	/* nothing more yet: hold the pending */
		if (rc == 0) {
			/* release what is still waiting for its array */
			for (size_t i = 0; i < t->pending_map.cap; i++) {
				struct pending *p = t->pending_map.e[i].val;

				if (p && p->active) {
					release_pending(t, p);
					if (t->nout == 2)
						break;
				}
			}
			if (t->nout == 0) {
				t->ended = 1;
				gaps_from_index(t);
			}
			continue;
		}
		rc = on_frame(t, &f);
		if (rc < 0)
			return rc;
	}
}

void proto_trace_finish(struct proto_trace *t)
{
	if (t)
		t->follow = 0;
}

const char *proto_trace_string(struct proto_trace *t, uint64_t stream,
			       uint32_t tid, int64_t id)
{
	void **slot = map_slot(&t->string_map, stream, (uint64_t)tid << 32,
			       (uint64_t)id, 0);
	struct strval *sv = slot ? *slot : NULL;

	return sv ? sv->buf : NULL;
}

size_t proto_trace_nstreams(const struct proto_trace *t)
{
	return t->nstreams;
}

const struct proto_stream *proto_trace_stream(const struct proto_trace *t,
					      size_t i)
{
	return i < t->nstreams ? t->streams[i] : NULL;
}

void proto_trace_on_frame(struct proto_trace *t, proto_trace_frame_cb cb,
			  void *arg)
{
	t->cb = cb;
	t->cb_arg = arg;
}

const struct proto_trace_stats *proto_trace_stats(const struct proto_trace *t)
{
	return &t->stats;
}

const struct proto_jobdir_report *proto_trace_report(struct proto_trace *t)
{
	return proto_jobdir_report(t->dir);
}

const char *proto_trace_meta(struct proto_trace *t, const char *key)
{
	return proto_jobdir_meta(t->dir, key);
}

void proto_trace_close(struct proto_trace *t)
{
	if (!t)
		return;
	free(t->yielded_array);
	for (int i = t->outpos; i < t->nout; i++)
		free(t->outarray[i]);
	map_free(&t->string_map, free);
	map_free(&t->pending_map, pending_free);
	map_free(&t->stream_map, NULL);
	for (size_t i = 0; i < t->nstreams; i++) {
		free(t->streams[i]->gap_range);
		free(t->streams[i]->loss_cand);
		kv_free(t->streams[i]->meta);
		free(t->streams[i]);
	}
	free(t->streams);
	free(t->recs);
	proto_jobdir_close_r(t->dir);
	proto_codec_free(t->codec);
	free(t->msg);
	free(t);
}
