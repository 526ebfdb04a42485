/*
 * tests/proto/test_jobdir.c - Criterion suite "jobdir": the job directory
 * writer and reader, including crashes (torn tails at every offset),
 * corruption, stray files, APPEND repairs and metadata escaping.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/frame.h"
#include "proto/jobdir.h"

#define NMAX 200
#define FMAX 512

struct fr {
	uint8_t b[FMAX];
	size_t len;
};

static struct fr fr[NMAX];
static char tmp[64];
static char dir[128];

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void setup(void)
{
	strcpy(tmp, "/tmp/tps-jobdir-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/job", tmp);
}

static void teardown(void)
{
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Frame i: every third one a PING, the others BATCH (stream 7, seq i+1,
 * nrecords 3i) with i % 61 bytes of patterned data after the batch head. */
static void make_frame(int i)
{
	uint8_t p[FMAX];
	size_t n;
	uint8_t type;

	if (i % 3 == 2) {
		type = PROTO_MSG_PING;
		n = 8 + (size_t)(i % 5);
		memset(p, 0x50 + i % 7, n);
	} else {
		type = PROTO_MSG_BATCH;
		put64(p, 7);
		put64(p + 8, (uint64_t)i + 1);
		put32(p + 16, (uint32_t)i * 3);
		put32(p + 20, 0);
		n = 24 + (size_t)(i % 61);
		for (size_t k = 24; k < n; k++)
			p[k] = (uint8_t)(k * 31 + (size_t)i);
	}
	cr_assert_eq(proto_frame_encode(type, p, n, fr[i].b, FMAX,
					&fr[i].len), 0);
}

static void write_frames(int from, int to, int flags, size_t segmax)
{
	int rc = -1;
	struct proto_jobdir_w *w = proto_jobdir_create(dir, flags, segmax, &rc);

	cr_assert_not_null(w, "create: %s", proto_errname(rc));
	for (int i = from; i < to; i++) {
		make_frame(i);
		cr_assert_eq(proto_jobdir_append(w, fr[i].b, fr[i].len), 0,
			     "frame %d", i);
	}
	cr_assert_eq(proto_jobdir_close(w), 0);
}

/* Read everything; expect frames[0..n) except skip (or -1). */
static const struct proto_jobdir_report *read_all(struct proto_jobdir_r **rp,
						  int n, int skipi)
{
	struct proto_frame f;
	int rc = -1, got;
	struct proto_jobdir_r *r = proto_jobdir_open(dir, &rc);

	cr_assert_not_null(r, "open: %s", proto_errname(rc));
	for (int i = 0; i < n; i++) {
		if (i == skipi)
			continue;
		got = proto_jobdir_next(r, &f);
		cr_assert_eq(got, 1, "frame %d: %d", i, got);
		cr_assert_eq(PROTO_FRAME_HDR + f.length, fr[i].len, "frame %d", i);
		cr_assert_eq(f.type, fr[i].b[3]);
		cr_assert_eq(memcmp(f.payload, fr[i].b + PROTO_FRAME_HDR,
				    f.length), 0, "frame %d", i);
	}
	cr_assert_eq(proto_jobdir_next(r, &f), 0);
	cr_assert_eq(proto_jobdir_next(r, &f), 0);
	*rp = r;
	return proto_jobdir_report(r);
}

static char *seg(unsigned n)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/segments/%06u.tps", dir, n);
	return p;
}

static long fsize(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static uint8_t *slurp(const char *p, size_t *len)
{
	long n = fsize(p);
	uint8_t *b;
	FILE *f = fopen(p, "rb");

	cr_assert(n >= 0 && f);
	b = malloc((size_t)n + 1);
	cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spit(const char *p, const void *b, size_t len)
{
	FILE *f = fopen(p, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(b, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static void flip(const char *p, long off)
{
	size_t len;
	uint8_t *b = slurp(p, &len);

	cr_assert(off >= 0 && (size_t)off < len);
	b[off] ^= 0x20;
	spit(p, b, len);
	free(b);
}

/* Where frame k of those write_frames put in segment 0 starts: after the
 * segment's 32-byte header and the frames before it. */
static long frame_at(int k)
{
	size_t off = 32;

	for (int i = 0; i < k; i++)
		off += fr[i].len;
	return (long)off;
}

static unsigned nsegments(void)
{
	unsigned n = 0;

	while (fsize(seg(n)) >= 0)
		n++;
	return n;
}

TestSuite(jobdir, .init = setup, .fini = teardown);

Test(jobdir, roundtrip_across_segments)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;
	unsigned nseg;
	uint64_t total = 0;

	write_frames(0, 120, 0, 400);
	nseg = nsegments();
	cr_assert_gt(nseg, 10);
	for (unsigned s = 0; s < nseg; s++) {
		cr_assert_leq(fsize(seg(s)), 400, "segment %u", s);
		total += (uint64_t)fsize(seg(s)) - 32;
	}
	rep = read_all(&r, 120, -1);
	cr_assert_eq(rep->frames, 120);
	cr_assert_eq(rep->segments, nseg);
	cr_assert_eq(rep->bytes, total);
	cr_assert_eq(rep->skipped_bytes, 0);
	cr_assert_eq(rep->bad_segments, 0);
	cr_assert_eq(rep->stray_files, 0);
	cr_assert_eq(rep->missing_segments, 0);
	cr_assert_str_empty(rep->first_problem);
	cr_assert_eq(rep->meta_status, 0);
	proto_jobdir_close_r(r);
}

Test(jobdir, frame_larger_than_segment_max_gets_its_own_segment)
{
	struct proto_jobdir_r *r;

	write_frames(0, 30, 0, 1);
	cr_assert_eq(nsegments(), 30);
	cr_assert_eq(read_all(&r, 30, -1)->frames, 30);
	proto_jobdir_close_r(r);
}

Test(jobdir, index_entries_match)
{
	struct proto_jobdir_r *r;
	struct proto_jobdir_index_entry e;
	uint64_t k = 0;

	write_frames(0, 90, 0, 500);
	read_all(&r, 90, -1);
	for (int i = 0; i < 90; i++) {
		size_t len;
		uint8_t *b;

		if (fr[i].b[3] != PROTO_MSG_BATCH)
			continue;
		cr_assert_eq(proto_jobdir_index_get(r, k, &e), 1, "entry %llu",
			     (unsigned long long)k);
		cr_assert_eq(e.stream, 7);
		cr_assert_eq(e.seq, (uint64_t)i + 1);
		cr_assert_eq(e.nrecords, (uint32_t)i * 3);
		cr_assert_eq(e.length, fr[i].len);
		b = slurp(seg(e.segment), &len);
		cr_assert_leq(e.offset + e.length, len);
		cr_assert_eq(memcmp(b + e.offset, fr[i].b, fr[i].len), 0);
		free(b);
		k++;
	}
	cr_assert_eq(proto_jobdir_index_get(r, k, &e), 0);
	cr_assert_eq(proto_jobdir_index_get(r, UINT64_MAX, &e), 0);
	proto_jobdir_close_r(r);
}

Test(jobdir, append_continues)
{
	struct proto_jobdir_r *r;
	struct proto_jobdir_index_entry e;
	const struct proto_jobdir_recovery *rec;
	int rc = -1, batches = 0;
	struct proto_jobdir_w *w;

	write_frames(0, 40, 0, 600);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 600, &rc);
	cr_assert_not_null(w, "%s", proto_errname(rc));
	rec = proto_jobdir_recovery(w);
	cr_assert_eq(rec->truncated_bytes, 0);
	cr_assert_eq(rec->index_dropped, 0);
	cr_assert_eq(rec->index_added, 0);
	cr_assert_eq(rec->new_segment, 0);
	cr_assert_str_empty(rec->note);
	for (int i = 40; i < 80; i++) {
		make_frame(i);
		cr_assert_eq(proto_jobdir_append(w, fr[i].b, fr[i].len), 0);
	}
	cr_assert_eq(proto_jobdir_close(w), 0);
	cr_assert_eq(read_all(&r, 80, -1)->skipped_bytes, 0);
	for (int i = 0; i < 80; i++)
		if (fr[i].b[3] == PROTO_MSG_BATCH) {
			cr_assert_eq(proto_jobdir_index_get(r, (uint64_t)batches++,
							    &e), 1);
			cr_assert_eq(e.seq, (uint64_t)i + 1);
		}
	cr_assert_eq(proto_jobdir_index_get(r, (uint64_t)batches, &e), 0);
	proto_jobdir_close_r(r);
}

Test(jobdir, append_creates_a_missing_job)
{
	struct proto_jobdir_r *r;

	write_frames(0, 5, PROTO_JOBDIR_APPEND, 0);
	cr_assert_eq(read_all(&r, 5, -1)->frames, 5);
	proto_jobdir_close_r(r);
}

/* The writer crashed inside its last frame: cut the last segment at every
 * byte of that frame. The reader returns every complete frame and counts
 * exactly the torn bytes; APPEND cuts them and continues cleanly. */
Test(jobdir, torn_tail_at_every_offset)
{
	const int n = 25;
	unsigned last;
	size_t seglen, idxlen, start;
	uint8_t *segb, *idxb;
	char idx[256];

	write_frames(0, n, 0, 700);
	last = nsegments() - 1;
	segb = slurp(seg(last), &seglen);
	snprintf(idx, sizeof(idx), "%s/index", dir);
	idxb = slurp(idx, &idxlen);
	start = seglen - fr[n - 1].len;
	cr_assert_gt(start, 32);
	for (size_t cut = start; cut < seglen; cut++) {
		struct proto_jobdir_r *r;
		const struct proto_jobdir_report *rep;
		struct proto_jobdir_w *w;
		int rc = -1;

		spit(seg(last), segb, cut);
		rep = read_all(&r, n - 1, -1);
		cr_assert_eq(rep->frames, (uint64_t)n - 1);
		cr_assert_eq(rep->skipped_bytes, cut - start, "cut %zu", cut);
		cr_assert_eq(rep->bad_segments, cut > start, "cut %zu", cut);
		if (cut > start) {
			char want[64];

			snprintf(want, sizeof(want), "%06u.tps at byte %zu",
				 last, start);
			cr_assert(strstr(rep->first_problem, want),
				  "cut %zu: %s", cut, rep->first_problem);
		}
		proto_jobdir_close_r(r);

		w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 700, &rc);
		cr_assert_not_null(w, "%s", proto_errname(rc));
		cr_assert_eq(proto_jobdir_recovery(w)->truncated_bytes,
			     cut - start);
		cr_assert_eq(proto_jobdir_recovery(w)->new_segment, 0);
		cr_assert_eq(proto_jobdir_append(w, fr[n - 1].b,
						 fr[n - 1].len), 0);
		cr_assert_eq(proto_jobdir_close(w), 0);
		rep = read_all(&r, n, -1);
		cr_assert_eq(rep->skipped_bytes, 0);
		proto_jobdir_close_r(r);
		/* restore for the next cut */
		spit(seg(last), segb, seglen);
		spit(idx, idxb, idxlen);
	}
	free(segb);
	free(idxb);
}

Test(jobdir, corrupt_payload_byte_in_a_middle_frame)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;

	write_frames(0, 20, 0, 0);
	flip(seg(0), frame_at(10) + PROTO_FRAME_HDR + 3);
	rep = read_all(&r, 20, 10);
	cr_assert_eq(rep->frames, 19);
	cr_assert_eq(rep->skipped_bytes, fr[10].len);
	cr_assert_eq(rep->bad_segments, 1);
	cr_assert(strstr(rep->first_problem, "checksum"), "%s",
		  rep->first_problem);
	proto_jobdir_close_r(r);
}

Test(jobdir, corrupt_length_in_a_middle_frame_header)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;

	write_frames(0, 20, 0, 0);
	flip(seg(0), frame_at(7) + 6);	/* length byte 2: huge length */
	rep = read_all(&r, 20, 7);
	cr_assert_eq(rep->skipped_bytes, fr[7].len);
	proto_jobdir_close_r(r);
}

Test(jobdir, corrupt_last_segment_then_append_starts_a_new_one)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;
	struct proto_jobdir_w *w;
	int rc = -1;

	write_frames(0, 10, 0, 0);
	flip(seg(0), frame_at(4) + PROTO_FRAME_HDR);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_recovery(w)->new_segment, 1);
	cr_assert_eq(proto_jobdir_recovery(w)->truncated_bytes, 0);
	cr_assert(strstr(proto_jobdir_recovery(w)->note, "corrupt"));
	for (int i = 10; i < 15; i++) {
		make_frame(i);
		cr_assert_eq(proto_jobdir_append(w, fr[i].b, fr[i].len), 0);
	}
	cr_assert_eq(proto_jobdir_close(w), 0);
	cr_assert_eq(nsegments(), 2);
	rep = read_all(&r, 15, 4);
	cr_assert_eq(rep->skipped_bytes, fr[4].len);
	proto_jobdir_close_r(r);
}

Test(jobdir, bad_segment_headers)
{
	static const long where[] = {0, 5, 6, 8, 20, 28};

	for (size_t k = 0; k < sizeof(where) / sizeof(where[0]); k++) {
		struct proto_jobdir_r *r;
		struct proto_frame f;
		const struct proto_jobdir_report *rep;
		long len1;
		int rc = -1, got = 0;

		write_frames(0, 30, k ? PROTO_JOBDIR_APPEND : 0, 300);
		cr_assert_geq(nsegments(), 3);
		len1 = fsize(seg(1));
		flip(seg(1), where[k]);
		r = proto_jobdir_open(dir, &rc);
		cr_assert_not_null(r);
		while (proto_jobdir_next(r, &f) == 1)
			got++;
		rep = proto_jobdir_report(r);
		/* the header costs its 32 bytes; the frames after it are
		 * found again (resynchronisation) */
		cr_assert_eq(rep->skipped_bytes, 32, "byte %ld: %llu skipped "
			     "of a %ld-byte segment", where[k],
			     (unsigned long long)rep->skipped_bytes, len1);
		cr_assert_eq(got, 30, "byte %ld: %d frames", where[k], got);
		cr_assert_eq(rep->bad_segments, 1);
		cr_assert_eq(rep->frames + 0, (uint64_t)got);
		cr_assert(strstr(rep->first_problem, "000001.tps: bad segment"),
			  "%s", rep->first_problem);
		proto_jobdir_close_r(r);
		teardown();
		cr_assert_eq(mkdir(tmp, 0700), 0);
	}
}

Test(jobdir, torn_segment_header)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;
	uint8_t junk[20] = "TPSEG";

	write_frames(0, 12, 0, 0);
	spit(seg(1), junk, sizeof(junk));
	rep = read_all(&r, 12, -1);
	cr_assert_eq(rep->skipped_bytes, 20);
	cr_assert_eq(rep->bad_segments, 1);
	proto_jobdir_close_r(r);
}

Test(jobdir, segment_header_number_must_match_the_name)
{
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;
	size_t len;
	uint8_t *b;

	write_frames(0, 12, 0, 0);
	b = slurp(seg(0), &len);
	spit(seg(1), b, len);	/* a copy of segment 0 under the wrong name */
	free(b);
	rep = read_all(&r, 12, -1);
	cr_assert_eq(rep->skipped_bytes, len);
	proto_jobdir_close_r(r);
}

Test(jobdir, stray_files_and_gaps_are_reported)
{
	static const char *const stray[] = {"foo", "00001.tps", "0000001.tps",
					    "000001.tps.bak", "00000a.tps"};
	struct proto_jobdir_r *r;
	const struct proto_jobdir_report *rep;
	char p[256];

	write_frames(0, 30, 0, 300);
	for (size_t i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/segments/%s", dir, stray[i]);
		spit(p, "x", 1);
	}
	snprintf(p, sizeof(p), "%s/segments/999990.tps", dir);
	cr_assert_eq(mkdir(p, 0700), 0);	/* a directory, not a file */
	rep = read_all(&r, 30, -1);
	cr_assert_eq(rep->stray_files, 5);
	cr_assert_str_not_empty(rep->first_stray);
	cr_assert_eq(rep->bad_segments, 1);
	cr_assert_gt(rep->missing_segments, 999000);
	cr_assert(strstr(rep->first_problem, "missing"), "%s",
		  rep->first_problem);
	proto_jobdir_close_r(r);
}

Test(jobdir, missing_segment_counted)
{
	struct proto_jobdir_r *r;
	struct proto_frame f;
	int rc = -1;

	write_frames(0, 30, 0, 300);
	cr_assert_eq(unlink(seg(1)), 0);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_not_null(r);
	while (proto_jobdir_next(r, &f) == 1)
		;
	cr_assert_eq(proto_jobdir_report(r)->missing_segments, 1);
	cr_assert_eq(proto_jobdir_report(r)->skipped_bytes, 0);
	cr_assert(strstr(proto_jobdir_report(r)->first_problem, "000001"));
	proto_jobdir_close_r(r);
}

Test(jobdir, not_a_job_directory)
{
	int rc = 0;
	char p[256];

	cr_assert_null(proto_jobdir_open(tmp, &rc));
	cr_assert_eq(rc, PROTO_E_NOTFOUND);
	rc = 0;
	cr_assert_null(proto_jobdir_open(dir, &rc));
	cr_assert_eq(rc, PROTO_E_NOTFOUND);
	snprintf(p, sizeof(p), "%s/segments", tmp);
	spit(p, "x", 1);	/* segments is a file */
	rc = 0;
	cr_assert_null(proto_jobdir_open(tmp, &rc));
	cr_assert_eq(rc, PROTO_E_NOTFOUND);
	rc = 0;
	cr_assert_null(proto_jobdir_create(NULL, 0, 0, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	rc = 0;
	cr_assert_null(proto_jobdir_create(dir, 0x80, 0, &rc));
	cr_assert_eq(rc, PROTO_E_ARG);
	snprintf(p, sizeof(p), "%s/no/such/dir", tmp);
	rc = 0;
	cr_assert_null(proto_jobdir_create(p, 0, 0, &rc));
	cr_assert_eq(rc, PROTO_E_NOTFOUND);
}

Test(jobdir, existing_job_without_append)
{
	struct proto_jobdir_w *w;
	int rc = 0;

	/* an existing empty directory is fine: it holds no job */
	cr_assert_eq(mkdir(dir, 0755), 0);
	w = proto_jobdir_create(dir, 0, 0, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_close(w), 0);
	cr_assert_null(proto_jobdir_create(dir, 0, 0, &rc));
	cr_assert_eq(rc, PROTO_E_EXISTS);
}

Test(jobdir, empty_job_reads_nothing)
{
	struct proto_jobdir_r *r;

	write_frames(0, 0, 0, 0);
	cr_assert_eq(read_all(&r, 0, -1)->segments, 0);
	cr_assert_eq(proto_jobdir_report(r)->meta_status, 0);
	proto_jobdir_close_r(r);
}

Test(jobdir, bad_frames_are_refused_and_nothing_written)
{
	struct proto_jobdir_w *w;
	uint8_t b[FMAX + 8], p[64] = {0};
	size_t len;
	int rc = 0;
	char idx[256];

	w = proto_jobdir_create(dir, 0, 0, &rc);
	cr_assert_not_null(w);
	make_frame(0);
	memcpy(b, fr[0].b, fr[0].len);
	b[0] = 'X';
	cr_assert_eq(proto_jobdir_append(w, b, fr[0].len), PROTO_E_MAGIC);
	memcpy(b, fr[0].b, fr[0].len);
	b[fr[0].len - 1] ^= 1;
	cr_assert_eq(proto_jobdir_append(w, b, fr[0].len), PROTO_E_CHECKSUM);
	cr_assert_eq(proto_jobdir_append(w, fr[0].b, fr[0].len - 1),
		     PROTO_E_TRUNCATED);
	cr_assert_eq(proto_jobdir_append(w, fr[0].b, 3), PROTO_E_TRUNCATED);
	memcpy(b, fr[0].b, fr[0].len);
	cr_assert_eq(proto_jobdir_append(w, b, fr[0].len + 8), PROTO_E_LENGTH);
	cr_assert_eq(proto_frame_encode(PROTO_MSG_BATCH, p, 23, b, sizeof(b),
					&len), 0);
	cr_assert_eq(proto_jobdir_append(w, b, len), PROTO_E_LENGTH);
	cr_assert_eq(proto_jobdir_append(w, NULL, 0), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_append(NULL, b, len), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_close(w), 0);
	cr_assert_eq(nsegments(), 0);
	snprintf(idx, sizeof(idx), "%s/index", dir);
	cr_assert_eq(fsize(idx), 16);
}

Test(jobdir, append_repairs_the_index)
{
	struct proto_jobdir_r *r;
	struct proto_jobdir_index_entry e;
	struct proto_jobdir_w *w;
	char idx[256];
	int rc = 0, fd;
	uint64_t batches = 0;

	write_frames(0, 30, 0, 400);
	for (int i = 0; i < 30; i++)
		batches += fr[i].b[3] == PROTO_MSG_BATCH;
	snprintf(idx, sizeof(idx), "%s/index", dir);
	/* a torn entry at the end */
	fd = open(idx, O_WRONLY | O_APPEND);
	cr_assert_eq(write(fd, "0123456789abcdefghij", 20), 20);
	close(fd);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 400, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_recovery(w)->index_dropped, 1);
	cr_assert_eq(proto_jobdir_recovery(w)->index_added, 0);
	cr_assert_eq(proto_jobdir_close(w), 0);
	cr_assert_eq(fsize(idx), 16 + 40 * (long)batches);
	/* a lost index is rebuilt from the segments */
	cr_assert_eq(unlink(idx), 0);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 400, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_recovery(w)->index_added, batches);
	cr_assert_eq(proto_jobdir_close(w), 0);
	/* a corrupt entry in the middle: it and the rest are re-indexed */
	flip(idx, 16 + 40 * 5 + 10);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 400, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_recovery(w)->index_dropped, batches - 5);
	cr_assert_eq(proto_jobdir_recovery(w)->index_added, batches - 5);
	cr_assert_eq(proto_jobdir_close(w), 0);
	read_all(&r, 30, -1);
	for (uint64_t k = 0, i = 0; k < batches; k++, i++) {
		while (fr[i].b[3] != PROTO_MSG_BATCH)
			i++;
		cr_assert_eq(proto_jobdir_index_get(r, k, &e), 1);
		cr_assert_eq(e.seq, i + 1);
	}
	cr_assert_eq(proto_jobdir_index_get(r, batches, &e), 0);
	proto_jobdir_close_r(r);
}

Test(jobdir, index_get_on_bad_index)
{
	struct proto_jobdir_r *r;
	struct proto_jobdir_index_entry e;
	char idx[256];
	int rc = 0;

	write_frames(0, 6, 0, 0);
	snprintf(idx, sizeof(idx), "%s/index", dir);
	flip(idx, 16 + 40 + 3);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_eq(proto_jobdir_index_get(r, 0, &e), 1);
	cr_assert_eq(proto_jobdir_index_get(r, 1, &e), PROTO_E_CHECKSUM);
	proto_jobdir_close_r(r);
	flip(idx, 2);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_eq(proto_jobdir_index_get(r, 0, &e), PROTO_E_FORMAT);
	proto_jobdir_close_r(r);
	cr_assert_eq(unlink(idx), 0);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_eq(proto_jobdir_index_get(r, 0, &e), PROTO_E_NOTFOUND);
	proto_jobdir_close_r(r);
}

static const char *const keys[] = {
	"plain", "lt<amp&gt>", "quotes\"'", "nl\nkey", "tab\tcr\r",
	"unicode-é", "empty", "long",
};
static const char *const vals[] = {
	"value", "<a href=\"x\">&amp;</a> & < >", "\"double\" 'single'",
	"line1\nline2\r\nline3\rend\n", "\ttabbed\t",
	"héllo wörld ✓ 𝄞 日本語", "", NULL,
};

Test(jobdir, meta_round_trips_special_characters)
{
	struct proto_jobdir_w *w;
	struct proto_jobdir_r *r;
	char *big = malloc(65536);
	char p[512];
	int rc = 0;

	memset(big, '&', 65535);
	big[65535] = '\0';
	w = proto_jobdir_create(dir, 0, 0, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_set_meta(w, "plain", "old"), 0);
	for (size_t i = 0; i < 8; i++)
		cr_assert_eq(proto_jobdir_set_meta(w, keys[i],
						   vals[i] ? vals[i] : big), 0,
			     "key %zu", i);
	cr_assert_eq(proto_jobdir_sync(w), 0);
	cr_assert_eq(proto_jobdir_close(w), 0);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_not_null(r);
	cr_assert_eq(proto_jobdir_report(r)->meta_status, 0);
	for (size_t i = 0; i < 8; i++) {
		const char *v = proto_jobdir_meta(r, keys[i]);

		cr_assert_not_null(v, "key %zu", i);
		cr_assert_str_eq(v, vals[i] ? vals[i] : big, "key %zu", i);
	}
	cr_assert_null(proto_jobdir_meta(r, "absent"));
	cr_assert_null(proto_jobdir_meta(r, NULL));
	proto_jobdir_close_r(r);
	/* APPEND keeps what was there */
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_set_meta(w, "added", "yes"), 0);
	cr_assert_eq(proto_jobdir_close(w), 0);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_str_eq(proto_jobdir_meta(r, "added"), "yes");
	cr_assert_str_eq(proto_jobdir_meta(r, keys[5]), vals[5]);
	proto_jobdir_close_r(r);
	/* a real XML parser agrees, when one is installed */
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		snprintf(p, sizeof(p),
			 "/usr/bin/xmllint --noout %s/meta.xml 2>/dev/null",
			 dir);
		cr_assert_eq(system(p), 0);
		snprintf(p, sizeof(p),
			 "test \"$(/usr/bin/xmllint --xpath "
			 "'string(//entry[4])' "
			 "%s/meta.xml)\" = \"$(printf 'line1\\nline2\\r\\n"
			 "line3\\rend')\"", dir);
		cr_assert_eq(system(p), 0, "%s", p);
	}
	free(big);
}

Test(jobdir, meta_refuses_what_xml_cannot_hold)
{
	static const char *const bad[] = {"\x01", "a\x1f", "\xff", "\xc0\x80",
					  "\xed\xa0\x80", "\xef\xbf\xbf",
					  "\xf4\x90\x80\x80", "\xe2\x82"};
	struct proto_jobdir_w *w;
	char key[300], *big = malloc(65537);
	int rc = 0;

	w = proto_jobdir_create(dir, 0, 0, &rc);
	cr_assert_not_null(w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(proto_jobdir_set_meta(w, "k", bad[i]),
			     PROTO_E_ARG, "value %zu", i);
		cr_assert_eq(proto_jobdir_set_meta(w, bad[i], "v"),
			     PROTO_E_ARG, "key %zu", i);
	}
	cr_assert_eq(proto_jobdir_set_meta(w, "", "v"), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_set_meta(w, NULL, "v"), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_set_meta(w, "k", NULL), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_set_meta(NULL, "k", "v"), PROTO_E_ARG);
	memset(key, 'k', 256);
	key[256] = '\0';
	cr_assert_eq(proto_jobdir_set_meta(w, key, "v"), PROTO_E_ARG);
	key[255] = '\0';
	cr_assert_eq(proto_jobdir_set_meta(w, key, "v"), 0);
	memset(big, 'v', 65536);
	big[65536] = '\0';
	cr_assert_eq(proto_jobdir_set_meta(w, "k", big), PROTO_E_ARG);
	for (int i = 0; i < 1023; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		cr_assert_eq(proto_jobdir_set_meta(w, key, "v"), 0);
	}
	cr_assert_eq(proto_jobdir_set_meta(w, "one-too-many", "v"),
		     PROTO_E_FULL);
	cr_assert_eq(proto_jobdir_set_meta(w, "k7", "replaced"), 0);
	cr_assert_eq(proto_jobdir_close(w), 0);
	free(big);
}

Test(jobdir, meta_total_size_bounded)
{
	struct proto_jobdir_w *w;
	char key[16], *big = malloc(65536);
	int rc = 0, i;

	memset(big, '"', 65535);
	big[65535] = '\0';
	w = proto_jobdir_create(dir, 0, 0, &rc);
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		rc = proto_jobdir_set_meta(w, key, big);
		if (rc)
			break;
	}
	cr_assert_eq(rc, PROTO_E_FULL);
	cr_assert_eq(i, 15);
	cr_assert_eq(proto_jobdir_close(w), 0);
	free(big);
}

Test(jobdir, corrupt_meta_is_reported_not_fatal)
{
	static const char *const bad[] = {
		"",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n<entry key=\"a\">x</entry>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n<entry key=\"a\">x & y</entry>\n"
		"</tapestry-meta>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n<entry key=\"a\">&#0;</entry>\n"
		"</tapestry-meta>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n<entry key=\"a\">1</entry>\n"
		"<entry key=\"a\">2</entry>\n</tapestry-meta>\n",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n</tapestry-meta>\ntrailing",
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-meta version=\"1\">\n<entry key=\"\">v</entry>\n"
		"</tapestry-meta>\n",
	};
	struct proto_jobdir_r *r;
	struct proto_jobdir_w *w;
	char p[256];
	int rc = 0;

	write_frames(0, 3, 0, 0);
	snprintf(p, sizeof(p), "%s/meta.xml", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		spit(p, bad[i], strlen(bad[i]));
		r = proto_jobdir_open(dir, &rc);
		cr_assert_not_null(r);
		cr_assert_eq(proto_jobdir_report(r)->meta_status,
			     PROTO_E_FORMAT, "case %zu", i);
		cr_assert(strstr(proto_jobdir_report(r)->first_problem,
				 "meta.xml"));
		cr_assert_null(proto_jobdir_meta(r, "a"));
		proto_jobdir_close_r(r);
		cr_assert_null(proto_jobdir_create(dir, PROTO_JOBDIR_APPEND,
						   0, &rc));
		cr_assert_eq(rc, PROTO_E_FORMAT);
	}
	/* references a real XML writer might use are accepted */
	{
		static const char good[] =
			"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<tapestry-meta version=\"1\">\n<entry key=\"a&#x41;\">"
			"&apos;&#233;&#x1D11E;</entry>\n</tapestry-meta>\n";

		spit(p, good, strlen(good));
	}
	r = proto_jobdir_open(dir, &rc);
	cr_assert_eq(proto_jobdir_report(r)->meta_status, 0);
	cr_assert_str_eq(proto_jobdir_meta(r, "aA"), "'é𝄞");
	proto_jobdir_close_r(r);
	cr_assert_eq(unlink(p), 0);
	r = proto_jobdir_open(dir, &rc);
	cr_assert_eq(proto_jobdir_report(r)->meta_status, PROTO_E_NOTFOUND);
	cr_assert_str_empty(proto_jobdir_report(r)->first_problem);
	proto_jobdir_close_r(r);
	w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc);
	cr_assert_not_null(w);
	cr_assert_eq(proto_jobdir_close(w), 0);
}

Test(jobdir, null_handles)
{
	cr_assert_eq(proto_jobdir_close(NULL), 0);
	proto_jobdir_close_r(NULL);
	cr_assert_eq(proto_jobdir_sync(NULL), PROTO_E_ARG);
	cr_assert_eq(proto_jobdir_next(NULL, NULL), PROTO_E_ARG);
	cr_assert_null(proto_jobdir_meta(NULL, "k"));
}

/* ---- sensor spool files (proto_jobdir_spool_ingest, issue 33) ---------- */

/* A spool file of stream id at path: the header, then the frames given. */
static void spool_file(const char *path, const char *magic, uint64_t id,
		       const struct fr *const f[], int n)
{
	uint8_t b[16 + NMAX * FMAX];
	size_t len = 16;

	memcpy(b, magic, 8);
	put64(b + 8, id);
	for (int i = 0; i < n; i++) {
		memcpy(b + len, f[i]->b, f[i]->len);
		len += f[i]->len;
	}
	spit(path, b, len);
}

static struct fr bye_frame(uint64_t stream, uint64_t last)
{
	struct fr x;
	uint8_t p[20];

	put64(p, stream);
	put64(p + 8, last);
	put32(p + 16, 0);
	cr_assert_eq(proto_frame_encode(PROTO_MSG_BYE, p, sizeof(p), x.b, FMAX,
					&x.len), 0);
	return x;
}

static uint64_t index_count(void)
{
	struct proto_jobdir_index_entry e;
	int rc = -1;
	uint64_t n = 0;
	struct proto_jobdir_r *r = proto_jobdir_open(dir, &rc);

	cr_assert_not_null(r);
	while (proto_jobdir_index_get(r, n, &e) == 1)
		n++;
	proto_jobdir_close_r(r);
	return n;
}

Test(jobdir, spool_taken_once_and_deduplicated)
{
	char spool[160], path[200];
	struct proto_spool_report rep;
	struct fr bye = bye_frame(7, 7);
	const struct fr *f[3];

	write_frames(0, 6, 0, 0);	/* batches seq 1, 2, 4, 5 of stream 7 */
	cr_assert_eq(index_count(), 4);
	make_frame(6);			/* seq 7, 18 records */
	f[0] = &fr[1];			/* seq 2: stored already */
	f[1] = &fr[6];
	f[2] = &bye;
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	cr_assert_eq(mkdir(spool, 0700), 0);
	snprintf(path, sizeof(path), "%s/0000000000000007.tps", spool);
	spool_file(path, PROTO_SPOOL_MAGIC, 7, f, 3);
	snprintf(path, sizeof(path), "%s/notes.txt", spool);	/* not ours */
	spit(path, "x", 1);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.files, 1);
	cr_assert_eq(rep.batches, 1);
	cr_assert_eq(rep.dup_batches, 1);
	cr_assert_eq(rep.events, 18);
	cr_assert_eq(rep.bad_files, 0);
	cr_assert_eq(index_count(), 5);
	snprintf(path, sizeof(path), "%s/0000000000000007.tps", spool);
	cr_assert_eq(access(path, F_OK), -1, "a spool file taken stays");
	snprintf(path, sizeof(path), "%s/notes.txt", spool);
	cr_assert_eq(access(path, F_OK), 0);
	/* taken again: nothing (the file is gone) */
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.files + rep.batches, 0);
	cr_assert_eq(index_count(), 5);
}

Test(jobdir, spool_damaged_foreign_and_missing)
{
	char spool[160], path[200], bad[210];
	struct proto_spool_report rep;
	struct fr other = bye_frame(8, 1);
	const struct fr *f[3];

	write_frames(0, 2, 0, 0);
	snprintf(spool, sizeof(spool), "%s/nospool", tmp);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.files, 0);
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	cr_assert_eq(mkdir(spool, 0700), 0);
	/* a frame of another stream in stream 7's file: the frames before
	 * it are taken, the file is set aside */
	make_frame(3);
	make_frame(4);
	f[0] = &fr[3];
	f[1] = &other;
	f[2] = &fr[4];
	snprintf(path, sizeof(path), "%s/0000000000000007.tps", spool);
	spool_file(path, PROTO_SPOOL_MAGIC, 7, f, 3);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.files, 0);
	cr_assert_eq(rep.bad_files, 1);
	cr_assert_eq(rep.batches, 1);
	cr_assert_neq(strstr(rep.first_problem, proto_strerror(PROTO_E_FORMAT)), NULL,
		      "%s", rep.first_problem);
	snprintf(bad, sizeof(bad), "%s.bad", path);
	cr_assert_eq(access(bad, F_OK), 0);
	cr_assert_eq(access(path, F_OK), -1);
	cr_assert_eq(index_count(), 3);
	/* a bad magic, a truncated header, a PING (not a spool frame) */
	spool_file(path, "TPSPILL1", 7, f, 1);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.bad_files, 1);
	spit(path, "TPSPOOL1", 8);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.bad_files, 1);
	make_frame(2);
	f[0] = &fr[2];
	spool_file(path, PROTO_SPOOL_MAGIC, 7, f, 1);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.bad_files, 1);
	cr_assert_eq(index_count(), 3);
}

/* A spool file taken is removed only once the job is synced: a sync that
 * fails (meta.xml.tmp a directory here) keeps it, the failure said; the
 * next take skips its batches and removes it. */
Test(jobdir, spool_kept_until_synced)
{
	char spool[160], path[200], block[160];
	struct proto_spool_report rep;
	const struct fr *f[2];

	write_frames(0, 2, 0, 0);	/* batches seq 1, 2 of stream 7 */
	make_frame(3);
	make_frame(4);
	f[0] = &fr[3];
	f[1] = &fr[4];
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	cr_assert_eq(mkdir(spool, 0700), 0);
	snprintf(path, sizeof(path), "%s/0000000000000007.tps", spool);
	spool_file(path, PROTO_SPOOL_MAGIC, 7, f, 2);
	snprintf(block, sizeof(block), "%s/meta.xml.tmp", dir);
	cr_assert_eq(mkdir(block, 0700), 0);
	cr_assert_neq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(access(path, F_OK), 0, "removed, the job not synced");
	cr_assert_eq(rmdir(block), 0);
	cr_assert_eq(proto_jobdir_spool_ingest(dir, spool, &rep), 0);
	cr_assert_eq(rep.files, 1);
	cr_assert_eq(rep.batches, 0);
	cr_assert_eq(rep.dup_batches, 2);
	cr_assert_eq(access(path, F_OK), -1);
	cr_assert_eq(index_count(), 4);
}
