/*
 * collector/spill.c - the spill store: a FIFO of frames on disk.
 *
 * DIR/spill-NNNNNNNNNN.tps, numbered consecutively (10 decimal digits).
 * Each file: 8 bytes "TPSPILL1", u64le file number, then whole frames
 * exactly as on the wire (docs/modules/collector.md, "Spill format").
 * Frames are appended to the newest file, read back from the oldest one
 * whole, and a file is deleted once read. The quota counts file sizes,
 * headers included. Files left by a collector that died are found at open
 * and come first, so a restarted collector forwards them before anything
 * new (the root deduplicates what had already arrived).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/internal.h"

struct col_spill {
	char *dir;
	uint64_t quota;
	size_t file_max;
	uint64_t first, next;	/* files first .. next-1 exist */
	uint64_t bytes;
	int wfd;		/* open for writing: file next-1, or -1 */
	uint64_t wsize;
	uint64_t roff;		/* of the frame being read */
};

static void file_path(const struct col_spill *s, uint64_t num, char *out,
		      size_t cap)
{
	snprintf(out, cap, "%s/spill-%010" PRIu64 ".tps", s->dir, num);
}

struct col_spill *col_spill_open(const char *dir, uint64_t quota,
				 size_t file_max, int *rc)
{
	struct col_spill *s;
	struct dirent *de;
	DIR *d;
	uint64_t lo = UINT64_MAX, hi = 0;
	int found = 0;

	*rc = PROTO_E_ARG;
	if (!dir || !*dir)
		return NULL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		*rc = PROTO_E_IO;
		return NULL;
	}
	*rc = PROTO_E_NOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dir = strdup(dir);
	if (!s->dir)
		goto fail_dir;
	s->quota = quota;
	s->file_max = file_max ? file_max : (8u << 20);
	s->wfd = -1;
	*rc = PROTO_E_IO;
	d = opendir(dir);
	if (!d)
		goto fail_open;
	while ((de = readdir(d))) {
		char *end;
		unsigned long long v;

		if (strncmp(de->d_name, "spill-", 6) || strlen(de->d_name) != 20)
			continue;
		v = strtoull(de->d_name + 6, &end, 10);
		if (strcmp(end, ".tps"))
			continue;
		found = 1;
		if (v < lo)
			lo = v;
		if (v > hi)
			hi = v;
	}
	closedir(d);
	if (found) {
		s->first = lo;
		s->next = hi + 1;
		for (uint64_t n = lo; n <= hi; n++) {
			char p[4096];
			struct stat sb;

			file_path(s, n, p, sizeof(p));
			if (stat(p, &sb) == 0)
				s->bytes += (uint64_t)sb.st_size;
		}
	} else {
		s->first = s->next = 1;
	}
	*rc = 0;
	return s;

fail_open:
	free(s->dir);
fail_dir:
	free(s);
	return NULL;
}

void col_spill_free(struct col_spill *s)
{
	if (!s)
		return;
	if (s->wfd >= 0)
		close(s->wfd);
	free(s->dir);
	free(s);
}

uint64_t col_spill_bytes(const struct col_spill *s)
{
	return s ? s->bytes : 0;
}

int col_spill_empty(const struct col_spill *s)
{
	return !s || s->first == s->next;
}

uint64_t col_spill_head_size(const struct col_spill *s)
{
	char p[4096];
	struct stat sb;

	if (col_spill_empty(s))
		return 0;
	file_path(s, s->first, p, sizeof(p));
	return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return PROTO_E_IO;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int start_file(struct col_spill *s)
{
	uint8_t hdr[COL_SPILL_HDR];
	char p[4096];
	uint64_t num = s->next;
	int fd;

	file_path(s, num, p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return PROTO_E_IO;
	memcpy(hdr, COL_SPILL_MAGIC, 8);
	for (int i = 0; i < 8; i++)
		hdr[8 + i] = (uint8_t)(num >> (8 * i));
	if (write_all(fd, hdr, sizeof(hdr))) {
		close(fd);
		unlink(p);
		return PROTO_E_IO;
	}
	s->wfd = fd;
	s->wsize = COL_SPILL_HDR;
	s->bytes += COL_SPILL_HDR;
	s->next++;
	return 0;
}

int col_spill_write(struct col_spill *s, const void *frame, size_t len)
{
	int newfile;
	int rc;

	if (!s || !frame || !len)
		return PROTO_E_ARG;
	newfile = s->wfd < 0 || (s->wsize > COL_SPILL_HDR &&
				 s->wsize + len > s->file_max);
	if (s->bytes + len + (newfile ? COL_SPILL_HDR : 0) > s->quota)
		return PROTO_E_FULL;
	if (newfile) {
		if (s->wfd >= 0) {
			close(s->wfd);
			s->wfd = -1;
		}
		rc = start_file(s);
		if (rc)
			return rc;
	}
	rc = write_all(s->wfd, frame, len);
	if (rc) {
		/* Keep the file made of whole frames only. */
		if (ftruncate(s->wfd, (off_t)s->wsize) < 0) {
			close(s->wfd);
			s->wfd = -1;
		}
		return rc;
	}
	s->wsize += len;
	s->bytes += len;
	return 0;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The tail p[0..n) does not hold a whole frame: when it is the start of a
 * BATCH whose header checked (TRUNCATED, not a corrupt header) and whose
 * 24-byte batch header is there, say which batch it was, so that its
 * events are counted as lost instead of leaving a gap of unknown size. */
static void torn_batch(const uint8_t *p, size_t n, int rc,
		       struct col_spill_skip *skip)
{
	const uint8_t *b = p + PROTO_FRAME_HDR;

	skip->bytes += n;
	if (rc != PROTO_E_TRUNCATED || n < PROTO_FRAME_HDR + PROTO_BATCH_HDR ||
	    p[3] != PROTO_MSG_BATCH || !le(b, 8) || !le(b + 8, 8))
		return;
	skip->torn = 1;
	skip->stream = le(b, 8);
	skip->seq = le(b + 8, 8);
	skip->nrecords = (uint32_t)le(b + 16, 4);
}

int col_spill_read_file(struct col_spill *s,
			void (*fn)(void *arg, const uint8_t *frame, size_t len),
			void *arg, struct col_spill_skip *skip)
{
	char p[4096];
	struct stat sb;
	uint8_t *buf = NULL;
	size_t size, off;
	int fd, rc = 0;

	if (col_spill_empty(s))
		return PROTO_E_NOTFOUND;
	if (s->wfd >= 0 && s->first == s->next - 1) {
		close(s->wfd);
		s->wfd = -1;
	}
	file_path(s, s->first, p, sizeof(p));
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			return PROTO_E_IO;
		s->first++;	/* a hole in the numbering: nothing to read */
		return 0;
	}
	if (fstat(fd, &sb) < 0) {
		rc = PROTO_E_IO;
		goto out_fd;
	}
	size = (size_t)sb.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		rc = PROTO_E_NOMEM;
		goto out_fd;
	}
	for (off = 0; off < size;) {
		ssize_t r = read(fd, buf + off, size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = PROTO_E_IO;
			goto out_buf;
		}
		off += (size_t)r;
	}
	if (size < COL_SPILL_HDR || memcmp(buf, COL_SPILL_MAGIC, 8)) {
		skip->bytes += size;
		goto done;
	}
	for (off = COL_SPILL_HDR; off < size;) {
		struct proto_frame f;
		size_t used;
		int frc = proto_frame_decode(buf + off, size - off,
					     PROTO_FRAME_MAX, &f, &used);

		if (frc) {
			torn_batch(buf + off, size - off, frc, skip);
			break;
		}
		s->roff = off;
		fn(arg, buf + off, used);
		off += used;
	}
done:
	unlink(p);
	s->bytes = s->bytes >= size ? s->bytes - size : 0;
	s->first++;
	s->roff = 0;
out_buf:
	free(buf);
out_fd:
	close(fd);
	return rc;
}

void col_spill_wpos(const struct col_spill *s, struct col_spill_pos *p)
{
	p->file = !s ? 0 : s->wfd >= 0 ? s->next - 1 : s->next;
	p->off = s && s->wfd >= 0 ? s->wsize : 0;
}

void col_spill_rpos(const struct col_spill *s, struct col_spill_pos *p)
{
	p->file = s ? s->first : 0;
	p->off = s ? s->roff : 0;
}

int col_spill_before(const struct col_spill_pos *a,
		     const struct col_spill_pos *b)
{
	return a->file < b->file || (a->file == b->file && a->off < b->off);
}
