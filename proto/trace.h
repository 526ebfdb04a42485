/*
 * proto/trace.h - read the events of a job directory, stream by stream.
 *
 * Built on proto/jobdir (frames), proto/msg (payloads) and proto/codec
 * (batches). Yields every event record in storage order (per stream: in seq
 * order), with its stream's metadata (from META frames: host, pid, rank,
 * exe ...), ARRAY continuation values attached to the event they continue,
 * and STRING records resolved. Batches stored twice (same stream and seq) are
 * yielded once. Corrupt batches are skipped and counted, never half-used.
 * Memory is bounded by one batch plus the string table (PROTO_TRACE_STRINGS_MAX
 * strings), not by the trace size.
 */
#ifndef TAPESTRY_PROTO_TRACE_H
#define TAPESTRY_PROTO_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/event.h"
#include "proto/jobdir.h"

#define PROTO_TRACE_STRINGS_MAX (1u << 20)
#define PROTO_TRACE_ARRAY_MAX 65536

struct proto_trace;

/* What the trace knows of one stream (one traced process). */
struct proto_stream {
	uint64_t id;
	int32_t rank;		/* -1 until a META says "rank" */
	int64_t pid;
	char host[256];
	char exe[256];
	uint64_t batches, events;	/* yielded so far (containers excluded) */
	uint64_t dup_batches;	/* stored twice, yielded once */
	uint64_t gap_batches;	/* seq numbers never seen: between those
				 * read, and at the end those the index or
				 * the BYE name past the last one read */
	uint64_t gap_events;	/* events of those, when the index has them */
	uint64_t top_seq;	/* the highest seq a BYE or the index names */
	/* Lost events, each counted once (docs/modules/proto-trace.md,
	 * "Losses"): max(drop_events, sensor_loss) + collector_loss. */
	uint64_t lost_events;
	uint64_t drop_events;	/* sum of the DROP records' counts */
	uint64_t sensor_loss;	/* the sensor's LOSS frames: a running
				 * total, the largest one seen */
	uint64_t collector_loss;	/* LOSS frames of batches a collector
					 * dropped (one seq, never stored) */
	/* single-seq LOSS frames whose batch may still be stored: {seq,
	 * dropped}, one per seq, grown as needed - at most one per LOSS frame
	 * of the trace (the reader's bookkeeping; see proto-trace.md) */
	uint64_t (*loss_cand)[2];
	unsigned loss_ncand, loss_cand_cap;
	uint64_t loss_cand_sum;	/* the candidates' dropped, summed */
	/* seq ranges never seen between those read, at most 256 (reader's
	 * bookkeeping, for gap_events) */
	uint64_t (*gap_range)[2];
	unsigned ngap_range;
	uint64_t last_seq;
	uint64_t t_first, t_last;	/* earliest start, latest end of its
					 * events (ns, the sensor's clock) */
	int ended;		/* a BYE was seen */
	struct proto_kv_list *meta;	/* all META keys, last value wins */
};

/* One event as yielded. Pointers are valid until the next call. */
struct proto_trace_event {
	const struct proto_event *ev;
	const struct proto_stream *stream;
	const int64_t *array;	/* ARRAY values continuing ev, or NULL */
	size_t narray;
};

/* Totals of a whole read. */
struct proto_trace_stats {
	uint64_t frames, batches, events, bad_batches, dup_batches;
	uint64_t frames_by_type[PROTO_MSG__MAX + 1];
};

/* Open dir. NULL with *rc (PROTO_E_NOTFOUND, PROTO_E_NOMEM ...). */
struct proto_trace *proto_trace_open(const char *dir, int *rc);

/* Next event: 1 with *out set, 0 at the end, < 0 on an I/O error. */
int proto_trace_next(struct proto_trace *t, struct proto_trace_event *out);

/* proto_trace_open with flags. PROTO_TRACE_FOLLOW: follow a job directory
 * a live writer is still appending to (PROTO_JOBDIR_FOLLOW).
 * proto_trace_next then returns 0 for "nothing more stored yet" and may be
 * called again later; events waiting for their ARRAY stay held back until
 * it arrives, their thread's next event does, or proto_trace_finish. */
#define PROTO_TRACE_FOLLOW 0x1
struct proto_trace *proto_trace_open_flags(const char *dir, int flags,
					   int *rc);

/* Stop following: the next calls of proto_trace_next return what is
 * stored now, then the held-back events, then 0 for good - exactly the
 * end of a reader without PROTO_TRACE_FOLLOW. No-op on other readers. */
void proto_trace_finish(struct proto_trace *t);

/* The string id of a thread of a stream, or NULL when unknown. */
const char *proto_trace_string(struct proto_trace *t, uint64_t stream,
			       uint32_t tid, int64_t id);

/* A stream's META value for key, or NULL. */
const char *proto_stream_meta(const struct proto_stream *s, const char *key);

/* Streams seen so far (all of them once proto_trace_next returned 0). */
size_t proto_trace_nstreams(const struct proto_trace *t);
const struct proto_stream *proto_trace_stream(const struct proto_trace *t,
					      size_t i);

/* Frames of other types (CLOCK, STATS ...) are handed to this callback as
 * they are met, if set; the payload is valid during the call only. */
typedef void (*proto_trace_frame_cb)(void *arg, const struct proto_frame *f);
void proto_trace_on_frame(struct proto_trace *t, proto_trace_frame_cb cb,
			  void *arg);

const struct proto_trace_stats *proto_trace_stats(const struct proto_trace *t);
const struct proto_jobdir_report *proto_trace_report(struct proto_trace *t);
const char *proto_trace_meta(struct proto_trace *t, const char *key);

/* Free t; NULL is a no-op. */
void proto_trace_close(struct proto_trace *t);

#endif
