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
 * The metadata file is XML written by hand (no libxml2 in proto) and read
 * back by a strict parser of exactly that format; values must be valid
 * UTF-8 without control characters other than TAB, LF and CR.
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
 * directory dir. dir may exist if it holds no job yet (no segments/, index
 * or meta.xml); its parent must exist. APPEND on a missing or empty dir
 * creates the job; on an existing job it cuts a torn tail off the last
 * segment, repairs the index and keeps the metadata (see
 * proto_jobdir_recovery). segment_max: bytes per segment before rotating
 * (0: the default); a segment always takes at least one frame. NULL on
 * failure with *rc set (PROTO_E_EXISTS when dir holds a job and APPEND is
 * not given, PROTO_E_NOTFOUND when the parent is missing, PROTO_E_FORMAT
 * for an unreadable meta.xml under APPEND, PROTO_E_ARG, PROTO_E_NOMEM,
 * PROTO_E_IO). */
#define PROTO_JOBDIR_APPEND 0x1
struct proto_jobdir_w *proto_jobdir_create(const char *dir, int flags,
					   size_t segment_max, int *rc);

/* Append one whole frame (header + payload, as received; it is checked with
 * proto_frame_decode first). Data reaches the file before return (write(2)),
 * not necessarily the disk: see proto_jobdir_sync. Returns 0, the decoder's
 * code for a bad frame (nothing written), PROTO_E_LENGTH for a BATCH whose
 * payload is under 24 bytes, PROTO_E_FULL past segment 999999,
 * PROTO_E_IO (what was written of this frame is removed again; when even
 * that fails the writer refuses every later append with PROTO_E_IO). */
int proto_jobdir_append(struct proto_jobdir_w *w, const void *frame,
			size_t len);

/* Set a metadata key (replacing any value); written by sync and close.
 * key: 1..255 bytes, value: up to 65535 bytes, both valid UTF-8 without
 * control characters but TAB, LF, CR (else PROTO_E_ARG); at most 1024 keys
 * and 1 MiB of keys and values in all (else PROTO_E_FULL). */
int proto_jobdir_set_meta(struct proto_jobdir_w *w, const char *key,
			  const char *value);

/* fsync segments and index, rewrite meta.xml atomically. */
int proto_jobdir_sync(struct proto_jobdir_w *w);

/* Sync and free w; NULL is a no-op. Returns the first error met. */
int proto_jobdir_close(struct proto_jobdir_w *w);

/* What APPEND found when it reopened a directory (all 0 otherwise). */
struct proto_jobdir_recovery {
	uint64_t truncated_bytes;	/* torn tail cut from the last segment */
	uint64_t index_dropped;		/* index entries removed (torn/stale) */
	uint64_t index_added;		/* BATCH frames indexed by the rescan */
	int new_segment;		/* 1: the last segment was left as is
					 * (bad header or corrupt, not torn,
					 * data) and writing goes to a new one */
	char note[256];			/* "" or what was repaired, and where */
};

/* Recovery report of w (valid while w is open). */
const struct proto_jobdir_recovery *
proto_jobdir_recovery(const struct proto_jobdir_w *w);

/* What a reader met on its way. */
struct proto_jobdir_report {
	uint64_t segments;	/* segment files read */
	uint64_t frames;	/* frames returned */
	uint64_t bytes;		/* bytes of frames returned */
	uint64_t skipped_bytes;	/* bytes not returned (torn or corrupt) */
	uint64_t bad_segments;	/* segments with a bad header or skipped bytes */
	char first_problem[256];	/* "" or where the first problem was */
	uint64_t stray_files;	/* names in segments/ not NNNNNN.tps */
	char first_stray[64];	/* "" or the first such name (cut) */
	uint64_t missing_segments;	/* gaps in the numbering */
	int meta_status;	/* 0, PROTO_E_NOTFOUND (no meta.xml yet),
				 * PROTO_E_FORMAT/TOOBIG (unreadable, ignored) */
};

/* Open dir for reading. NULL with *rc on failure (PROTO_E_NOTFOUND when it
 * is not a job directory). */
struct proto_jobdir_r *proto_jobdir_open(const char *dir, int *rc);

/* proto_jobdir_open with flags. PROTO_JOBDIR_FOLLOW: read a job directory
 * that a live writer is still appending to. proto_jobdir_next then returns
 * 0 for "nothing more stored yet" (call it again later: it picks up what
 * the segment grew by and the segments created since), and an incomplete
 * frame at the end of the last segment is the writer's frame in progress:
 * it is waited for, not skipped. It is skipped (and counted) as usual once
 * a newer segment shows that the writer has left that segment. The
 * metadata is the meta.xml present at open time. */
#define PROTO_JOBDIR_FOLLOW 0x2
struct proto_jobdir_r *proto_jobdir_open_flags(const char *dir, int flags,
					       int *rc);

/* Next frame in segment order. Returns 1 with *f set (valid until the next
 * call), 0 at the end, a negative code on an I/O error. Corrupt data is
 * skipped and counted, not returned as an error. */
int proto_jobdir_next(struct proto_jobdir_r *r, struct proto_frame *f);

/* Value of a metadata key, or NULL. Valid while r is open. */
const char *proto_jobdir_meta(struct proto_jobdir_r *r, const char *key);

/* What has been skipped so far. */
const struct proto_jobdir_report *proto_jobdir_report(struct proto_jobdir_r *r);

/* One index entry (DIR/index, docs/FORMAT.md): where a BATCH frame is. */
struct proto_jobdir_index_entry {
	uint32_t segment;	/* segment number */
	uint32_t length;	/* whole frame, header included */
	uint64_t offset;	/* of the frame header in the segment file */
	uint64_t stream;
	uint64_t seq;
	uint32_t nrecords;
};

/* Entry i of the index, for tools that want a batch without scanning.
 * Returns 1 with *e filled, 0 past the end (a torn last entry counts as
 * absent), PROTO_E_NOTFOUND without an index, PROTO_E_FORMAT for a bad
 * index header, PROTO_E_CHECKSUM for a corrupt entry, PROTO_E_IO. The
 * index is a hint: check the frame found there (proto_frame_decode). */
int proto_jobdir_index_get(struct proto_jobdir_r *r, uint64_t i,
			   struct proto_jobdir_index_entry *e);

/* Free r; NULL is a no-op. */
void proto_jobdir_close_r(struct proto_jobdir_r *r);

/* ---- sensor spool files (docs/FORMAT.md, "Sensor spool") ----
 * A sensor that could not deliver its stream leaves the rest of it in a
 * spool directory (TAPESTRY_SPOOL): one file STREAMHEX.tps (16 lowercase
 * hex digits) per stream, PROTO_SPOOL_MAGIC, the stream id (u64 LE), then
 * whole frames of that stream only (META, BATCH, LOSS, BYE). */
#define PROTO_SPOOL_MAGIC "TPSPOOL1"
#define PROTO_SPOOL_HDR 16

/* Call fn(ctx, frame, len, decoded) for each frame of the spool file
 * path, in order; *stream = the file's stream. Stops at fn's first
 * non-zero return (returned). 0 when every frame was passed; else the
 * decoder's code of the bad frame (the frames before it were passed),
 * PROTO_E_FORMAT for a frame of another stream or type, PROTO_E_MAGIC,
 * PROTO_E_NOTFOUND, PROTO_E_TOOBIG (over 4 GiB), PROTO_E_NOMEM,
 * PROTO_E_IO. */
int proto_spool_each(const char *path, uint64_t *stream,
		     int (*fn)(void *ctx, const uint8_t *frame, size_t len,
			       const struct proto_frame *f),
		     void *ctx);

/* What proto_jobdir_spool_ingest took. */
struct proto_spool_report {
	uint64_t files;		/* spool files taken (and removed) */
	uint64_t batches;	/* BATCH frames appended */
	uint64_t events;	/* their records */
	uint64_t dup_batches;	/* already in the job: not appended again */
	uint64_t bad_files;	/* unreadable or damaged (left in place) */
	char first_problem[256];	/* "" or the first of them */
};

/* Append the spool files of directory spool to the job directory dir
 * (reopened with PROTO_JOBDIR_APPEND; nothing is written when spool holds
 * none): each file's frames in order, a BATCH whose (stream, seq) the job
 * holds already skipped; a file taken whole is removed once the job is
 * synced (closed) without error (else every file stays, to be taken again:
 * its batches are then skipped), a damaged one
 * keeps its good frames in the job and is renamed NAME.bad (counted in *rep). No
 * writer may have dir open meanwhile. 0 (also when spool does not
 * exist), PROTO_E_NOSPACE (first_problem names dir), or the codes of
 * proto_jobdir_create/append. */
int proto_jobdir_spool_ingest(const char *dir, const char *spool,
			      struct proto_spool_report *rep);

#endif
