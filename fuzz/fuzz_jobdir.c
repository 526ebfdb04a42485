/*
 * fuzz/fuzz_jobdir.c - libFuzzer target for the job directory reader and
 * the APPEND recovery of the writer (proto/jobdir.c).
 *
 * The first input byte picks what the rest becomes, in one temporary job
 * directory made once per process:
 *   0  segments/000000.tps as given (segment header included)
 *   1  the same after a valid segment header, so mutations reach frames
 *   2  meta.xml (the segment file is a valid empty segment)
 *   3  the index file, read entry by entry through proto_jobdir_index_get
 *   4  as 1, then reopened with PROTO_JOBDIR_APPEND, one frame appended,
 *      closed and read again: the repaired directory must read cleanly
 * Every frame returned must be a valid frame; abort otherwise. Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *     fuzz/fuzz_jobdir.c proto/jobdir.c proto/frame.c proto/crc32c.c \
 *     proto/msg.c proto/error.c proto/event.c
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/frame.h"
#include "proto/jobdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char segdir[96], seg0[96], seg1[96], meta[96], metatmp[96], idx[96];

static void cleanup(void)
{
	unlink(seg0);
	unlink(seg1);
	unlink(meta);
	unlink(metatmp);
	unlink(idx);
	rmdir(segdir);
	rmdir(dir);
}

static void init_once(void)
{
	if (dir[0])
		return;
	strcpy(dir, "/tmp/fuzz-jobdir-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(segdir, sizeof(segdir), "%s/segments", dir);
	snprintf(seg0, sizeof(seg0), "%s/000000.tps", segdir);
	snprintf(seg1, sizeof(seg1), "%s/000001.tps", segdir);
	snprintf(meta, sizeof(meta), "%s/meta.xml", dir);
	snprintf(metatmp, sizeof(metatmp), "%s/meta.xml.tmp", dir);
	snprintf(idx, sizeof(idx), "%s/index", dir);
	if (mkdir(segdir, 0700) < 0)
		abort();
	atexit(cleanup);
}

static void put(const char *path, const void *a, size_t alen, const void *b,
		size_t blen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || (alen && write(fd, a, alen) != (ssize_t)alen) ||
	    (blen && write(fd, b, blen) != (ssize_t)blen))
		abort();
	close(fd);
}

/* A valid header of segment 0, as docs/FORMAT.md describes it. */
static void seg_header(uint8_t h[32])
{
	uint32_t crc;

	memset(h, 0, 32);
	memcpy(h, "TPSEG", 5);
	h[5] = 1;
	h[6] = 32;
	crc = proto_crc32c(0, h, 28);
	for (int i = 0; i < 4; i++)
		h[28 + i] = (uint8_t)(crc >> (8 * i));
}

static void read_all(void)
{
	struct proto_jobdir_r *r;
	struct proto_frame f;
	int rc;

	r = proto_jobdir_open(dir, &rc);
	if (!r)
		abort();	/* segments/ exists: open must succeed */
	while ((rc = proto_jobdir_next(r, &f)) == 1) {
		if (f.version != PROTO_VERSION || !proto_msg_name(f.type) ||
		    f.length > PROTO_FRAME_MAX)
			abort();
	}
	if (rc != 0)
		abort();
	(void)proto_jobdir_meta(r, "key");
	(void)proto_jobdir_report(r);
	proto_jobdir_close_r(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t h[32];
	int mode;

	init_once();
	if (size < 1)
		return 0;
	mode = data[0] % 5;
	data++;
	size--;
	seg_header(h);
	switch (mode) {
	case 0:
		put(seg0, data, size, NULL, 0);
		read_all();
		break;
	case 1:
		put(seg0, h, 32, data, size);
		read_all();
		break;
	case 2:
		put(seg0, h, 32, NULL, 0);
		put(meta, data, size, NULL, 0);
		read_all();
		break;
	case 3: {
		struct proto_jobdir_r *r;
		struct proto_jobdir_index_entry e;
		int rc;

		put(seg0, h, 32, NULL, 0);
		put(idx, data, size, NULL, 0);
		r = proto_jobdir_open(dir, &rc);
		if (!r)
			abort();
		for (uint64_t i = 0; i < 128; i++)
			if (proto_jobdir_index_get(r, i, &e) != 1)
				break;
		proto_jobdir_close_r(r);
		break;
	}
	case 4: {
		static const uint8_t payload[24] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
		uint8_t frame[64];
		size_t len;
		struct proto_jobdir_w *w;
		struct proto_jobdir_r *r;
		int rc;

		put(seg0, h, 32, data, size);
		w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 4096, &rc);
		if (!w)
			abort();
		if (proto_frame_encode(PROTO_MSG_BATCH, payload, sizeof(payload),
				       frame, sizeof(frame), &len) ||
		    proto_jobdir_append(w, frame, len) ||
		    proto_jobdir_close(w))
			abort();
		read_all();
		/* what APPEND kept of segment 0 must now read without a
		 * torn tail: a second APPEND finds nothing to cut */
		w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 4096, &rc);
		if (!w || proto_jobdir_recovery(w)->truncated_bytes)
			abort();
		if (proto_jobdir_close(w))
			abort();
		r = proto_jobdir_open(dir, &rc);
		if (!r)
			abort();
		proto_jobdir_close_r(r);
		break;
	}
	}
	unlink(seg0);
	unlink(seg1);
	unlink(meta);
	unlink(metatmp);
	unlink(idx);
	return 0;
}
