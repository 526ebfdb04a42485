/*
 * collector/root.c - root mode: every frame into a job directory.
 *
 * BATCH frames are deduplicated by (stream, seq): a seq at or below the
 * last one stored for its stream is acknowledged again but not stored; a
 * seq past last + 1 records the missing batches in the job's metadata
 * ("collector.lost.<stream>" = count, plus "collector.lost_batches"). The
 * ACK goes out only after proto_jobdir_append returned (the data is in the
 * file, not necessarily on the disk). BYE is stored once per stream and
 * answered with ACK(stream, last stored seq); a batch after it (a process
 * that records after its end) is stored, and reopens the stream for a
 * later BYE. On reopen (APPEND) the index
 * tells the last seq of every stream, so a restarted root still
 * deduplicates.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collector/internal.h"
#include "proto/jobdir.h"

static void send_ack(struct col_conn *cn, uint64_t stream, uint64_t seq)
{
	struct proto_msg m;

	if (!cn || cn->state != CS_STREAM)
		return;
	m.type = PROTO_MSG_ACK;
	m.u.ack.stream = stream;
	m.u.ack.seq = seq;
	col_send_msg(cn->bev, &m);
}

static int rebuild(struct col *c)
{
	struct proto_jobdir_index_entry e;
	struct proto_jobdir_r *r;
	uint64_t i;
	int rc;

	r = proto_jobdir_open(c->cfg.output, &rc);
	if (!r)
		return rc == PROTO_E_NOTFOUND ? 0 : rc;
	for (i = 0; (rc = proto_jobdir_index_get(r, i, &e)) == 1; i++) {
		struct col_stream *s = col_stream_get(c, e.stream, 1);

		if (!s) {
			rc = PROTO_E_FULL;
			break;
		}
		if (e.seq > s->last_seq)
			s->last_seq = e.seq;
	}
	proto_jobdir_close_r(r);
	if (rc == PROTO_E_NOTFOUND)
		rc = 0;
	if (rc == 0 && i)
		col_info("job %s reopened: %" PRIu64 " batches of %zu streams "
			 "already stored", c->cfg.output, i, c->streams.n);
	return rc < 0 ? rc : 0;
}

int col_root_open(struct col *c)
{
	char v[64];
	int rc;

	c->jobdir = proto_jobdir_create(c->cfg.output, PROTO_JOBDIR_APPEND,
					c->cfg.segment_max, &rc);
	if (!c->jobdir)
		return rc;
	rc = rebuild(c);
	if (rc) {
		col_warn("job %s: index unreadable (%s); deduplication starts "
			 "afresh", c->cfg.output, proto_strerror(rc));
	}
	snprintf(v, sizeof(v), "%016" PRIx64, c->node_id);
	proto_jobdir_set_meta(c->jobdir, "collector.root_node", v);
	return 0;
}

void col_root_close(struct col *c)
{
	int rc;

	if (!c->jobdir)
		return;
	rc = proto_jobdir_close(c->jobdir);
	if (rc)
		col_err("job %s: close: %s", c->cfg.output, proto_strerror(rc));
	c->jobdir = NULL;
}

static void note_gap(struct col *c, struct col_stream *s, uint64_t missing)
{
	char k[64], v[32];

	s->lost += missing;
	c->st.gap_batches += missing;
	col_warn("stream %016" PRIx64 ": %" PRIu64 " batches never arrived "
		 "(before seq %" PRIu64 ")", s->id, missing, s->last_seq + 1 +
		 missing);
	snprintf(k, sizeof(k), "collector.lost.%016" PRIx64, s->id);
	snprintf(v, sizeof(v), "%" PRIu64, s->lost);
	proto_jobdir_set_meta(c->jobdir, k, v);
	snprintf(v, sizeof(v), "%" PRIu64, c->st.gap_batches);
	proto_jobdir_set_meta(c->jobdir, "collector.lost_batches", v);
	c->meta_dirty = 1;
}

int col_root_frame(struct col *c, struct col_conn *cn, struct col_frame *f,
		   const struct proto_msg *m)
{
	struct col_stream *s = NULL;
	int rc;

	if (f->type == PROTO_MSG_BATCH || f->type == PROTO_MSG_BYE) {
		s = col_stream_get(c, f->stream, 1);
		if (!s)
			return 0;	/* table full: not acknowledged, resent */
		s->owner = cn;
	}
	if (f->type == PROTO_MSG_BATCH) {
		if (f->seq <= s->last_seq) {
			c->st.dup_batches++;
			send_ack(cn, s->id, s->last_seq);
			return 0;
		}
		rc = proto_jobdir_append(c->jobdir, f->data, f->len);
		if (rc) {
			col_err("job %s: append: %s", c->cfg.output,
				proto_strerror(rc));
			return 0;	/* not acknowledged: the sender keeps it */
		}
		if (f->seq > s->last_seq + 1)
			note_gap(c, s, f->seq - s->last_seq - 1);
		if (s->bye) {	/* the stream goes on after its BYE: a later
				 * BYE ends it again, and is stored */
			col_info("stream %016" PRIx64 ": batch %" PRIu64 " after "
				 "its end (BYE at %" PRIu64 "): stored", s->id,
				 f->seq, s->bye_seq);
			s->bye = 0;
		}
		s->last_seq = f->seq;
		c->st.stored_batches++;
		send_ack(cn, s->id, s->last_seq);
		return 0;
	}
	if (f->type == PROTO_MSG_BYE && s->bye > 1) {
		send_ack(cn, s->id, s->last_seq);
		goto bye_done;
	}
	rc = proto_jobdir_append(c->jobdir, f->data, f->len);
	if (rc) {
		col_err("job %s: append %s: %s", c->cfg.output,
			proto_msg_name(f->type), proto_strerror(rc));
		return 0;
	}
	if (f->type == PROTO_MSG_BYE) {
		s->bye = 2;	/* stored */
		send_ack(cn, s->id, s->last_seq);
		goto bye_done;
	} else if (f->type == PROTO_MSG_LOSS) {
		col_warn("stream %016" PRIx64 ": %" PRIu64 " events lost "
			 "upstream", m->u.loss.stream, m->u.loss.dropped);
	}
	return 0;
bye_done:
	/* The client's own stream ends: answer and close (PROTOCOL.md). */
	return cn && cn->role == PROTO_ROLE_SENSOR && cn->peer_id == s->id;
}
