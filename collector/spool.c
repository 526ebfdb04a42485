/*
 * collector/spool.c - the sensors' spool (issue 33): what sensors that
 * reached no collector before their end left in a directory (docs/
 * FORMAT.md, "Sensor spool"), taken at start (--spool) as if a child had
 * sent it.
 *
 * A spool file is removed only once what it holds is kept elsewhere: the
 * root removes the files it stored after the job directory's sync; a node
 * or gateway keeps each file until its parent acknowledged every BATCH and
 * the BYE of it (one ACK each, the root's rule), or, for a file with
 * neither (META, LOSS), until a drain ended with nothing left unsent. A
 * collector killed before that takes the file again at its next start:
 * taking it twice is harmless (batches are deduplicated by (stream, seq)
 * at the root, a BYE is stored once, a sensor's LOSS is a running total,
 * META repeats the same keys); taking it never was the loss this avoids.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/internal.h"
#include "proto/jobdir.h"

/* A file taken, not yet removed. */
struct col_spool_file {
	struct col_spool_file *next;
	uint64_t stream;
	uint64_t last_seq;		/* its highest BATCH seq (0: none) */
	uint64_t acks_needed;		/* its BATCH and BYE frames */
	uint64_t acks_seen;		/* ACKs of its stream since taken */
	uint64_t unkept;		/* root: frames neither stored nor
					 * counted (c->root_unkept moved) */
	char path[];
};

struct spool_ctx {
	struct col *c;
	struct proto_msg *m;
	struct col_spool_file *sf;
	uint64_t frames;
};

static int spool_frame(void *arg, const uint8_t *bytes, size_t len,
		       const struct proto_frame *pf)
{
	struct spool_ctx *x = arg;
	struct col *c = x->c;
	struct col_frame *f;
	uint64_t unkept = c->root_unkept;
	int rc = proto_msg_decode(pf, x->m);

	if (rc)
		return rc;
	f = col_frame_new(c, bytes, len, x->m);
	if (f->type == PROTO_MSG_BATCH || f->type == PROTO_MSG_BYE)
		x->sf->acks_needed++;
	if (f->type == PROTO_MSG_BATCH && f->seq > x->sf->last_seq)
		x->sf->last_seq = f->seq;
	if (c->root) {
		col_root_frame(c, NULL, f, x->m);
		col_frame_unref(f);
		x->sf->unkept += c->root_unkept - unkept;
	} else {
		col_up_enqueue(c, f);
	}
	x->frames++;
	return 0;
}

static struct col_spool_file *file_new(const char *dir, const char *name)
{
	size_t n = strlen(dir) + 1 + strlen(name) + 1;
	struct col_spool_file *sf = calloc(1, sizeof(*sf) + n);

	if (sf)
		snprintf(sf->path, n, "%s/%s", dir, name);
	return sf;
}

/* The root's files: removed once the job directory holds them (synced);
 * one that lost a frame (not stored, not counted) stays for a later
 * start, as do all when the sync fails. */
static void root_settle(struct col *c, struct col_spool_file *taken)
{
	int rc = taken ? proto_jobdir_sync(c->jobdir) : 0;

	while (taken) {
		struct col_spool_file *sf = taken;

		taken = sf->next;
		if (rc)
			col_err("spool %s: kept: the job directory's sync "
				"failed (%s)", sf->path, proto_strerror(rc));
		else if (sf->unkept)
			col_err("spool %s: kept: %" PRIu64 " of its frames "
				"were not stored", sf->path, sf->unkept);
		else
			unlink(sf->path);
		free(sf);
	}
}

void col_spool_take(struct col *c, const char *dir)
{
	struct spool_ctx x = {.c = c};
	struct col_spool_file *taken = NULL;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		if (errno != ENOENT)
			col_warn("spool %s: %s", dir, strerror(errno));
		return;
	}
	x.m = malloc(sizeof(*x.m));
	while (x.m && (de = readdir(d))) {
		char bad[PATH_MAX + 8];
		size_t n = strlen(de->d_name);
		uint64_t stream = 0, before = x.frames;
		int rc;

		if (n != 20 || strcmp(de->d_name + 16, ".tps") != 0)
			continue;
		x.sf = file_new(dir, de->d_name);
		if (!x.sf)
			break;
		rc = proto_spool_each(x.sf->path, &stream, spool_frame, &x);
		x.sf->stream = stream;
		if (rc) {
			/* what was good in it is taken: not taken twice */
			col_warn("spool %s: %s: %" PRIu64 " frames taken, the "
				 "file set aside", x.sf->path,
				 proto_strerror(rc), x.frames - before);
			snprintf(bad, sizeof(bad), "%s.bad", x.sf->path);
			rename(x.sf->path, bad);
			free(x.sf);
			continue;
		}
		col_info("spool %s: stream %016" PRIx64 ": %" PRIu64 " frames "
			 "taken", x.sf->path, stream, x.frames - before);
		if (c->root) {
			x.sf->next = taken;
			taken = x.sf;
		} else {
			x.sf->next = c->spool_files;
			c->spool_files = x.sf;
		}
	}
	free(x.m);
	closedir(d);
	if (c->root)
		root_settle(c, taken);
}

void col_spool_acked(struct col *c, uint64_t stream, uint64_t seq)
{
	struct col_spool_file **p = &c->spool_files, *sf;

	while ((sf = *p)) {
		if (sf->stream == stream && ++sf->acks_seen >= sf->acks_needed &&
		    seq >= sf->last_seq) {
			col_info("spool %s: acknowledged above, removed",
				 sf->path);
			unlink(sf->path);
			*p = sf->next;
			free(sf);
			continue;
		}
		p = &sf->next;
	}
}

void col_spool_drained(struct col *c)
{
	struct col_spool_file **p = &c->spool_files, *sf;

	while ((sf = *p)) {
		if (!sf->acks_needed) {
			unlink(sf->path);
			*p = sf->next;
			free(sf);
			continue;
		}
		col_warn("spool %s: %" PRIu64 " of %" PRIu64 " acknowledgements "
			 "came: kept for the next start", sf->path,
			 sf->acks_seen, sf->acks_needed);
		p = &sf->next;
	}
}

void col_spool_free(struct col *c)
{
	while (c->spool_files) {
		struct col_spool_file *sf = c->spool_files;

		c->spool_files = sf->next;
		free(sf);
	}
}
