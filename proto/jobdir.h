/*
 * proto/jobdir.h - the native job directory: writer and crash-tolerant reader.
 *
 * A job directory holds what the manager received, as frames exactly as they
 * crossed the wire (BATCH, META, CLOCK, LOSS, STATS, BYE ...), appended to
 * numbered segment files, plus an index and metadata:
 *   DIR/segments/NNNNNN.tps  append-only segments (header + frames)
 *   DIR/index                fixed-size entries, one per BATCH frame
 *   DIR/meta.xml             job metadata (key/value), rewritten atomically
 * Byte layout in docs/FORMAT.md. The reader returns every frame up to the
 * last complete one of each segment after a writer crash and reports what it
 * skipped; it never trusts the index over the segments.
 *
 * A writer is used by one thread at a time. Readers are independent.
 */
#ifndef TAPESTRY_PROTO_JOBDIR_H
#define TAPESTRY_PROTO_JOBDIR_H

#include <stddef.h>
#include <stdint.h>

#include "proto/frame.h"

#define PROTO_SEGMENT_MAX_DEFAULT (64u << 20)

struct proto_jobdir_w;
struct proto_jobdir_r;

/* Create (or, with PROTO_JOBDIR_APPEND, reopen and continue) the job
 * directory dir. segment_max: bytes per segment before rotating (0: the
 * default). NULL on failure with *rc set (PROTO_E_EXISTS when dir holds a
 * job and APPEND is not given, PROTO_E_IO ...). */
#define PROTO_JOBDIR_APPEND 0x1
struct proto_jobdir_w *proto_jobdir_create(const char *dir, int flags,
					   size_t segment_max, int *rc);

/* Append one whole frame (header + payload, as received; it is checked with
 * proto_frame_decode first). Data reaches the file before return (write(2)),
 * not necessarily the disk: see proto_jobdir_sync. */
int proto_jobdir_append(struct proto_jobdir_w *w, const void *frame,
			size_t len);

/* Set a metadata key (replacing any value); written by sync and close. */
int proto_jobdir_set_meta(struct proto_jobdir_w *w, const char *key,
			  const char *value);

/* fsync segments and index, rewrite meta.xml atomically. */
int proto_jobdir_sync(struct proto_jobdir_w *w);

/* Sync and free w; NULL is a no-op. Returns the first error met. */
int proto_jobdir_close(struct proto_jobdir_w *w);

/* What a reader met on its way. */
struct proto_jobdir_report {
	uint64_t segments;	/* segment files read */
	uint64_t frames;	/* frames returned */
	uint64_t bytes;		/* bytes of frames returned */
	uint64_t skipped_bytes;	/* bytes not returned (torn or corrupt) */
	uint64_t bad_segments;	/* segments with a bad header or a torn end */
	char first_problem[256];	/* "" or where the first problem was */
};

/* Open dir for reading. NULL with *rc on failure (PROTO_E_NOTFOUND when it
 * is not a job directory). */
struct proto_jobdir_r *proto_jobdir_open(const char *dir, int *rc);

/* Next frame in segment order. Returns 1 with *f set (valid until the next
 * call), 0 at the end, a negative code on an I/O error. Corrupt data is
 * skipped and counted, not returned as an error. */
int proto_jobdir_next(struct proto_jobdir_r *r, struct proto_frame *f);

/* Value of a metadata key, or NULL. Valid while r is open. */
const char *proto_jobdir_meta(struct proto_jobdir_r *r, const char *key);

/* What has been skipped so far. */
const struct proto_jobdir_report *proto_jobdir_report(struct proto_jobdir_r *r);

/* Free r; NULL is a no-op. */
void proto_jobdir_close_r(struct proto_jobdir_r *r);

#endif
