/*
 * tests/sensor/dump_trace.c - print a job directory's events, one per line.
 *
 *   dump_trace DIR
 *
 * Reads every frame (proto_jobdir), decodes BATCH payloads (proto_msg,
 * proto_codec), drops duplicate (stream, seq) batches, resolves STRING
 * records per stream, and prints:
 *   meta  stream=S key=K value=V
 *   ev    stream=S seq=Q tid=T name=N t0=.. dur=.. [failed=1] field=value...
 *         (path and path2 print their string, or the id when unresolved)
 *   array stream=S tid=T total=N values=v,v,...
 *   bye   stream=S last_seq=Q reason=R
 *   total stream=S events=N strings=K batches=B dropped=D clock=C bye=R
 *         (bye: 0 none, else 1 + the BYE reason: 1 exit, 2 signal, 3 exec)
 * Exit status 0, or 1 when the directory cannot be read or a batch is
 * corrupt (it is then reported on stderr).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "proto/frame.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

struct str {
	int64_t id;
	size_t len;
	char *s;
};

struct stream {
	uint64_t id;
	struct proto_event *ev;
	size_t nev, cap;
	uint64_t *seqs;		/* seq of each batch seen */
	size_t nseq, capseq;
	uint64_t *evseq;	/* seq of each event */
	struct str *strs;
	size_t nstr, capstr;
	uint64_t dropped;
	uint64_t clock;
	int bye;
};

static struct stream *streams;
static size_t nstreams;
static struct proto_msg msg;

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "dump_trace: out of memory\n");
		exit(1);
	}
	return q;
}

static struct stream *stream_get(uint64_t id)
{
	for (size_t i = 0; i < nstreams; i++)
		if (streams[i].id == id)
			return &streams[i];
	streams = xrealloc(streams, (nstreams + 1) * sizeof(*streams));
	memset(&streams[nstreams], 0, sizeof(*streams));
	streams[nstreams].id = id;
	return &streams[nstreams++];
}

static struct str *str_get(struct stream *s, int64_t id, int create)
{
	for (size_t i = 0; i < s->nstr; i++)
		if (s->strs[i].id == id)
			return &s->strs[i];
	if (!create)
		return NULL;
	if (s->nstr == s->capstr) {
		s->capstr = s->capstr ? s->capstr * 2 : 64;
		s->strs = xrealloc(s->strs, s->capstr * sizeof(*s->strs));
	}
	s->strs[s->nstr].id = id;
	s->strs[s->nstr].len = 0;
	s->strs[s->nstr].s = xrealloc(NULL, PROTO_STRING_MAX + 1);
	memset(s->strs[s->nstr].s, 0, PROTO_STRING_MAX + 1);
	return &s->strs[s->nstr++];
}

static int batch(struct proto_codec *codec, const struct proto_batch *b)
{
	struct stream *s = stream_get(b->stream);
	uint32_t n = 0;
	size_t got = 0;
	int rc;

	for (size_t i = 0; i < s->nseq; i++)
		if (s->seqs[i] == b->seq)
			return 0;	/* duplicate */
	if (s->nseq == s->capseq) {
		s->capseq = s->capseq ? s->capseq * 2 : 64;
		s->seqs = xrealloc(s->seqs, s->capseq * sizeof(*s->seqs));
	}
	s->seqs[s->nseq++] = b->seq;
	rc = proto_codec_peek(b->data, b->datalen, &n);
	if (rc)
		return rc;
	if (s->nev + n > s->cap) {
		while (s->nev + n > s->cap)
			s->cap = s->cap ? s->cap * 2 : 4096;
		s->ev = xrealloc(s->ev, s->cap * sizeof(*s->ev));
		s->evseq = xrealloc(s->evseq, s->cap * sizeof(*s->evseq));
	}
	rc = proto_codec_decode(codec, b->data, b->datalen, s->ev + s->nev, n,
				&got);
	if (rc)
		return rc;
	for (size_t i = 0; i < got; i++) {
		struct proto_event *e = &s->ev[s->nev + i];

		s->evseq[s->nev + i] = b->seq;
		if (e->type == PROTO_EV_STRING && e->flags >= 1 &&
		    e->flags <= PROTO_STRING_CHUNK &&
		    e->t_end + e->flags <= PROTO_STRING_MAX) {
			struct str *st = str_get(s, (int64_t)e->t_start, 1);

			memcpy(st->s + e->t_end, e->arg, e->flags);
			if (e->t_end + e->flags > st->len)
				st->len = e->t_end + e->flags;
		}
	}
	s->nev += got;
	return 0;
}

static void print_stream(struct stream *s)
{
	uint64_t events = 0;

	for (size_t i = 0; i < s->nev; i++) {
		const struct proto_event *e = &s->ev[i];
		const struct proto_ev_info *inf = proto_ev_info(e->type);

		if (e->type == PROTO_EV_STRING)
			continue;
		if (e->type == PROTO_EV_ARRAY) {
			printf("array stream=%016" PRIx64 " tid=%u index=%" PRIu64
			       " total=%" PRIu64 " values=", s->id, e->tid,
			       e->t_start, e->t_end);
			for (unsigned k = 0; k < e->flags && k < PROTO_EV_NARGS;
			     k++)
				printf("%s%" PRId64, k ? "," : "", e->arg[k]);
			printf("\n");
			continue;
		}
		events++;
		printf("ev stream=%016" PRIx64 " seq=%" PRIu64 " tid=%u name=%s "
		       "t0=%" PRIu64 " dur=%" PRId64, s->id, s->evseq[i],
		       e->tid, inf ? inf->name : "?", e->t_start,
		       (int64_t)(e->t_end - e->t_start));
		if (e->flags & PROTO_EVF_FAILED)
			printf(" failed=1");
		for (int k = 0; inf && k < PROTO_EV_NARGS; k++) {
			unsigned f = inf->field[k];
			struct str *st;

			if (f == PROTO_F_none)
				continue;
			if ((f == PROTO_F_path || f == PROTO_F_path2) &&
			    (st = str_get(s, e->arg[k], 0)) != NULL)
				printf(" %s=%s", proto_field_name(f), st->s);
			else
				printf(" %s=%" PRId64, proto_field_name(f),
				       e->arg[k]);
		}
		printf("\n");
	}
	printf("total stream=%016" PRIx64 " events=%" PRIu64 " strings=%zu "
	       "batches=%zu dropped=%" PRIu64 " clock=%" PRIu64 " bye=%d\n",
	       s->id, events, s->nstr, s->nseq, s->dropped, s->clock,
	       s->bye);
}

int main(int argc, char **argv)
{
	struct proto_jobdir_r *r;
	struct proto_codec *codec;
	struct proto_frame f;
	int rc, bad = 0, more;

	if (argc != 2) {
		fprintf(stderr, "usage: dump_trace DIR\n");
		return 2;
	}
	r = proto_jobdir_open(argv[1], &rc);
	if (!r) {
		fprintf(stderr, "dump_trace: %s: %s\n", argv[1],
			proto_strerror(rc));
		return 1;
	}
	codec = proto_codec_new(1);
	if (!codec)
		return 1;
	while ((more = proto_jobdir_next(r, &f)) == 1) {
		rc = proto_msg_decode(&f, &msg);
		if (rc) {
			fprintf(stderr, "dump_trace: bad %s frame: %s\n",
				proto_msg_name(f.type) ? proto_msg_name(f.type)
						       : "?",
				proto_strerror(rc));
			bad = 1;
			continue;
		}
		switch (f.type) {
		case PROTO_MSG_BATCH:
			rc = batch(codec, &msg.u.batch);
			if (rc) {
				fprintf(stderr, "dump_trace: batch: %s\n",
					proto_strerror(rc));
				bad = 1;
			}
			break;
		case PROTO_MSG_META:
			for (uint32_t i = 0; i < msg.u.meta.n; i++)
				printf("meta stream=%016" PRIx64 " key=%s "
				       "value=%s\n", msg.u.meta.id,
				       msg.u.meta.kv[i].key,
				       msg.u.meta.kv[i].value);
			break;
		case PROTO_MSG_LOSS: {
			struct stream *s = stream_get(msg.u.loss.stream);

			if (msg.u.loss.dropped > s->dropped)
				s->dropped = msg.u.loss.dropped;
			break;
		}
		case PROTO_MSG_CLOCK: {
			struct stream *s = stream_get(msg.u.clock.child);

			s->clock += msg.u.clock.n;
			printf("clock stream=%016" PRIx64 " phase=%u n=%u\n",
			       msg.u.clock.child, msg.u.clock.phase,
			       msg.u.clock.n);
			break;
		}
		case PROTO_MSG_BYE:
			stream_get(msg.u.bye.stream)->bye =
				1 + (int)msg.u.bye.reason;
			printf("bye stream=%016" PRIx64 " last_seq=%" PRIu64
			       " reason=%u\n", msg.u.bye.stream,
			       msg.u.bye.last_seq, msg.u.bye.reason);
			break;
		default:
			break;
		}
	}
	if (more < 0) {
		fprintf(stderr, "dump_trace: read: %s\n", proto_strerror(more));
		bad = 1;
	}
	for (size_t i = 0; i < nstreams; i++)
		print_stream(&streams[i]);
	proto_codec_free(codec);
	proto_jobdir_close_r(r);
	return bad;
}
