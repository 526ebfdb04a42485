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
 *
 * A full disk (PROTO_E_NOSPACE, issue 33): said once ("no space left on
 * device: DIR"), then every BATCH that cannot be stored is counted per
 * stream (batches and records, exact: "collector.nospace_events.<stream>")
 * and acknowledged, so that no sender waits for a disk that may not come
 * back and the job says exactly what it misses; from then on no batch is
 * stored (a smaller one that would fit would take the room the streams'
 * ends, BYE, LOSS and META, and the metadata need), nor clock samples or
 * statistics. The metadata that says so needs room too: the root keeps
 * RESERVE_BYTES in DIR/reserve from the start and frees it at the first
 * full write (removed at close in any case).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define RESERVE_BYTES (256u << 10)	/* meta.xml of a few thousand streams */

static void reserve_make(struct col *c)
{
	size_t n = strlen(c->cfg.output) + sizeof("/reserve");
	int fd;

	c->reserve = malloc(n);
	if (!c->reserve)
		return;
	snprintf(c->reserve, n, "%s/reserve", c->cfg.output);
	fd = open(c->reserve, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || posix_fallocate(fd, 0, RESERVE_BYTES) != 0)
		col_warn("job %s: no room kept for the metadata of a full disk "
			 "(%s)", c->cfg.output, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void reserve_free(struct col *c)
{
	if (!c->reserve)
		return;
	unlink(c->reserve);
	free(c->reserve);
	c->reserve = NULL;
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

/* BATCH f of stream s could not be stored, the disk full: counted,
 * recorded in the metadata, acknowledged (the sender forgets it). */
static void nospace_batch(struct col *c, struct col_conn *cn,
			  struct col_stream *s, struct col_frame *f)
{
	char k[96], v[32];
	uint32_t nrec = 0;

	if (f->len >= PROTO_FRAME_HDR + 20)
		nrec = (uint32_t)f->data[PROTO_FRAME_HDR + 16] |
		       (uint32_t)f->data[PROTO_FRAME_HDR + 17] << 8 |
		       (uint32_t)f->data[PROTO_FRAME_HDR + 18] << 16 |
		       (uint32_t)f->data[PROTO_FRAME_HDR + 19] << 24;
	if (!c->nospace) {
		c->nospace = 1;
		reserve_free(c);	/* room for the metadata below */
		col_err("no space left on device: %s: batches that do not fit "
			"are counted, not stored", c->cfg.output);
		proto_jobdir_set_meta(c->jobdir, "collector.nospace",
				      c->cfg.output);
	}
	/* the batches before it that never came are lost as in a stored
	 * batch's gap, counted here once: last_seq moves past them */
	if (f->seq > s->last_seq + 1)
		note_gap(c, s, f->seq - s->last_seq - 1);
	s->nospace_batches++;
	s->nospace_events += nrec;
	c->nospace_batches++;
	c->nospace_events += nrec;
	snprintf(k, sizeof(k), "collector.nospace_events.%016" PRIx64, s->id);
	snprintf(v, sizeof(v), "%" PRIu64, s->nospace_events);
	proto_jobdir_set_meta(c->jobdir, k, v);
	snprintf(k, sizeof(k), "collector.nospace_batches.%016" PRIx64, s->id);
	snprintf(v, sizeof(v), "%" PRIu64, s->nospace_batches);
	proto_jobdir_set_meta(c->jobdir, k, v);
	snprintf(v, sizeof(v), "%" PRIu64, c->nospace_events);
	proto_jobdir_set_meta(c->jobdir, "collector.nospace_events", v);
	c->meta_dirty = 1;
	s->last_seq = f->seq;
	send_ack(cn, s->id, s->last_seq);
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
	reserve_make(c);
	return 0;
}

void col_root_close(struct col *c)
{
	int rc;

	if (!c->jobdir)
		return;
	reserve_free(c);
	rc = proto_jobdir_close(c->jobdir);
	if (rc)
		col_err("job %s: close: %s", c->cfg.output, proto_strerror(rc));
	c->jobdir = NULL;
}

int col_root_frame(struct col *c, struct col_conn *cn, struct col_frame *f,
		   const struct proto_msg *m)
{
	struct col_stream *s = NULL;
	int rc;

	if (f->type == PROTO_MSG_BATCH || f->type == PROTO_MSG_BYE) {
		s = col_stream_get(c, f->stream, 1);
		if (!s) {
			c->root_unkept++;
			return 0;	/* table full: not acknowledged, resent */
		}
		s->owner = cn;
	}
	if (f->type == PROTO_MSG_BATCH) {
		if (f->seq <= s->last_seq) {
			c->st.dup_batches++;
			send_ack(cn, s->id, s->last_seq);
			return 0;
		}
		/* once full, no batch is stored: what room is freed keeps
		 * the metadata that counts them, and the streams' ends */
		rc = c->nospace ? PROTO_E_NOSPACE :
		     proto_jobdir_append(c->jobdir, f->data, f->len);
		if (rc == PROTO_E_NOSPACE) {
			nospace_batch(c, cn, s, f);
			return 0;
		}
		if (rc) {
			col_err("job %s: append: %s", c->cfg.output,
				proto_strerror(rc));
			c->root_unkept++;
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
	if (c->nospace && f->type != PROTO_MSG_BYE && f->type != PROTO_MSG_LOSS &&
	    f->type != PROTO_MSG_META)
		return 0;	/* clock samples and statistics: not kept */
	rc = proto_jobdir_append(c->jobdir, f->data, f->len);
	if (rc == PROTO_E_NOSPACE && f->type == PROTO_MSG_BYE) {
		/* its batches are counted: the stream still ends here */
		s->bye = 2;
		send_ack(cn, s->id, s->last_seq);
		goto bye_done;
	}
	if (rc) {
		if (rc != PROTO_E_NOSPACE || !c->nospace)
			col_err("job %s: append %s: %s", c->cfg.output,
				proto_msg_name(f->type), proto_strerror(rc));
		c->root_unkept++;
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
