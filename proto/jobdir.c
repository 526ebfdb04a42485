/*
 * proto/jobdir.c - the native job directory: segments of frames, the BATCH
 * index and meta.xml; a writer that survives its own crash (APPEND repairs)
 * and a reader that survives anybody's (skips, counts and reports).
 *
 * Byte layouts are in docs/FORMAT.md, the contracts in proto/jobdir.h, the
 * reasoning in docs/modules/proto-jobdir.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/jobdir.h"

#define SEG_MAGIC "TPSEG"
#define SEG_VERSION 1
#define SEG_HDR 32
#define SEG_NUMBER_MAX 999999u
#define IDX_MAGIC "TPIDX"
#define IDX_VERSION 1
#define IDX_HDR 16
#define IDX_ENTRY 40
#define BATCH_HEAD 24		/* u64 stream, u64 seq, u32 nrecords, u32 flags */

#define META_FILE "meta.xml"
#define META_TMP "meta.xml.tmp"
#define META_KEY_MAX 255
#define META_VALUE_MAX 65535
#define META_ENTRIES_MAX 1024
#define META_BYTES_MAX (1u << 20)
/* Escaping grows a byte to at most 6 ("&quot;"); 8 MiB covers every file we
 * can write with room for the tags. */
#define META_FILE_MAX (8u << 20)
#define META_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" \
	"<tapestry-meta version=\"1\">\n"
#define META_TAIL "</tapestry-meta>\n"

#define FBUF_MIN (64u << 10)
#define FBUF_MAX ((size_t)PROTO_FRAME_HDR + PROTO_FRAME_MAX)
#define SCAN_CHUNK (64u << 10)

/* ---- little-endian helpers ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- I/O helpers: EINTR and short transfers handled, errors -> IO ---- */

/* The code of a failed write: a full disk (or quota) is named, NOSPACE,
 * so that a writer can say so ("no space left on device: DIR") and keep
 * what it could not write; anything else is IO. */
static int write_err(void)
{
	return errno == ENOSPC || errno == EDQUOT ? PROTO_E_NOSPACE : PROTO_E_IO;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? write_err() : PROTO_E_IO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* pread up to len bytes at off; *got < len only at end of file. */
static int pread_full(int fd, void *buf, size_t len, uint64_t off,
		      size_t *got)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done,
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return PROTO_E_IO;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	*got = done;
	return 0;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return PROTO_E_IO;
	if (fsync(fd) < 0 && errno != EINVAL)
		rc = PROTO_E_IO;
	close(fd);
	return rc;
}

static char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

static char *seg_path(const char *dir, uint32_t n)
{
	char name[32];

	snprintf(name, sizeof(name), "segments/%06u.tps", n);
	return path_join(dir, name);
}

/* ---- frame buffer: grows up to one maximal frame, never more ---- */

struct fbuf {
	uint8_t *p;
	size_t cap;
};

static int fbuf_reserve(struct fbuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : FBUF_MIN;
	uint8_t *p;

	if (need > FBUF_MAX)
		return PROTO_E_TOOBIG;
	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > FBUF_MAX)
		cap = FBUF_MAX;
	p = realloc(b->p, cap);
	if (!p)
		return PROTO_E_NOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Look at the frame at off in fd, the file ending at end. Returns a
 * negative code only for I/O or memory failure; otherwise 0 with *bad = 0
 * and the frame in *f (pointing into b) and *flen, or *bad set to why this
 * is no frame: PROTO_E_TRUNCATED when the file ends inside a frame whose
 * header (or header prefix) is good, a decoder code otherwise. */
static int frame_at(struct fbuf *b, int fd, uint64_t off, uint64_t end,
		    struct proto_frame *f, size_t *flen, int *bad)
{
	uint64_t avail = end > off ? end - off : 0;
	size_t n = avail < PROTO_FRAME_HDR ? (size_t)avail : PROTO_FRAME_HDR;
	size_t got, consumed = 0, total;
	int rc;

	*bad = 0;
	rc = fbuf_reserve(b, PROTO_FRAME_HDR);
	if (rc)
		return rc;
	rc = pread_full(fd, b->p, n, off, &got);
	if (rc)
		return rc;
	if (got < n)
		n = got;	/* the file shrank under us: judge what is there */
	rc = proto_frame_decode(b->p, n, 0, f, &consumed);
	if (rc == 0) {
		*flen = consumed;
		return 0;
	}
	if (rc != PROTO_E_TRUNCATED) {
		*bad = rc;
		return 0;
	}
	if (n < PROTO_FRAME_HDR) {
		*bad = PROTO_E_TRUNCATED;
		return 0;
	}
	total = consumed;
	/* Never trust a length we did not check: the decoder's answer must
	 * describe a frame bigger than its header and within the maximum. */
	if (total <= PROTO_FRAME_HDR || total > FBUF_MAX) {
		*bad = PROTO_E_FORMAT;
		return 0;
	}
	if (total > avail) {
		*bad = PROTO_E_TRUNCATED;
		return 0;
	}
	rc = fbuf_reserve(b, total);
	if (rc)
		return rc;
	rc = pread_full(fd, b->p + PROTO_FRAME_HDR, total - PROTO_FRAME_HDR,
			off + PROTO_FRAME_HDR, &got);
	if (rc)
		return rc;
	if (got < total - PROTO_FRAME_HDR) {
		*bad = PROTO_E_TRUNCATED;
		return 0;
	}
	rc = proto_frame_decode(b->p, total, 0, f, &consumed);
	if (rc || consumed != total) {
		*bad = rc ? rc : PROTO_E_FORMAT;
		return 0;
	}
	*flen = total;
	return 0;
}

/* ---- segment and index headers ---- */

static void seg_header(uint8_t h[SEG_HDR], uint32_t number)
{
	struct timespec ts;
	uint64_t now = 0;

	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	memset(h, 0, SEG_HDR);
	memcpy(h, SEG_MAGIC, 5);
	h[5] = SEG_VERSION;
	put16(h + 6, SEG_HDR);
	put32(h + 8, number);
	put32(h + 12, 0);
	put64(h + 16, now);
	put32(h + 24, 0);
	put32(h + 28, proto_crc32c(0, h, 28));
}

/* 0 when a file header is good: magic (5 bytes), version at 5, the u16 at 6
 * equal to size16, CRC-32C of the first hdr - 4 bytes in the last 4. */
static int hdr_check(const uint8_t *h, size_t len, size_t hdr,
		     const char *magic, unsigned version, uint16_t size16)
{
	if (len < hdr)
		return PROTO_E_TRUNCATED;
	if (memcmp(h, magic, 5) != 0)
		return PROTO_E_MAGIC;
	if (get32(h + hdr - 4) != proto_crc32c(0, h, hdr - 4))
		return PROTO_E_CHECKSUM;
	if (h[5] != version)
		return PROTO_E_VERSION;
	if (get16(h + 6) != size16)
		return PROTO_E_LENGTH;
	return 0;
}

/* 0 when the header of segment number is good, else why not. */
static int seg_check(const uint8_t *h, size_t len, uint32_t number)
{
	int rc = hdr_check(h, len, SEG_HDR, SEG_MAGIC, SEG_VERSION, SEG_HDR);

	if (rc)
		return rc;
	return get32(h + 8) != number ? PROTO_E_FIELD : 0;
}

static int seg_read_check(int fd, uint32_t number)
{
	uint8_t h[SEG_HDR];
	size_t got;
	int rc = pread_full(fd, h, SEG_HDR, 0, &got);

	return rc ? rc : seg_check(h, got, number);
}

static void idx_header(uint8_t h[IDX_HDR])
{
	memset(h, 0, IDX_HDR);
	memcpy(h, IDX_MAGIC, 5);
	h[5] = IDX_VERSION;
	put16(h + 6, IDX_ENTRY);
	put32(h + 12, proto_crc32c(0, h, 12));
}

static int idx_check(const uint8_t *h, size_t len)
{
	return hdr_check(h, len, IDX_HDR, IDX_MAGIC, IDX_VERSION, IDX_ENTRY);
}

static void idx_entry(uint8_t e[IDX_ENTRY],
		      const struct proto_jobdir_index_entry *x)
{
	put32(e, x->segment);
	put32(e + 4, x->length);
	put64(e + 8, x->offset);
	put64(e + 16, x->stream);
	put64(e + 24, x->seq);
	put32(e + 32, x->nrecords);
	put32(e + 36, proto_crc32c(0, e, 36));
}

static int idx_parse(const uint8_t e[IDX_ENTRY],
		     struct proto_jobdir_index_entry *x)
{
	if (get32(e + 36) != proto_crc32c(0, e, 36))
		return PROTO_E_CHECKSUM;
	x->segment = get32(e);
	x->length = get32(e + 4);
	x->offset = get64(e + 8);
	x->stream = get64(e + 16);
	x->seq = get64(e + 24);
	x->nrecords = get32(e + 32);
	return 0;
}

/* Index entry of the BATCH frame f (whole size flen) at seg/off. */
static int batch_entry(const struct proto_frame *f, size_t flen, uint32_t seg,
		       uint64_t off, struct proto_jobdir_index_entry *x)
{
	if (f->length < BATCH_HEAD)
		return PROTO_E_LENGTH;
	x->segment = seg;
	x->length = (uint32_t)flen;
	x->offset = off;
	x->stream = get64(f->payload);
	x->seq = get64(f->payload + 8);
	x->nrecords = get32(f->payload + 16);
	return 0;
}

/* ---- segment listing ---- */

struct seglist {
	uint32_t *n;
	size_t count, cap;
	uint64_t stray;
	char first_stray[64];
};

static int is_seg_name(const char *s, uint32_t *n)
{
	uint32_t v = 0;

	if (strlen(s) != 10 || strcmp(s + 6, ".tps") != 0)
		return 0;
	for (int i = 0; i < 6; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	*n = v;
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* List dir/segments in numeric order. PROTO_E_NOTFOUND when absent. */
static int seglist_read(const char *dir, struct seglist *l)
{
	char *path = path_join(dir, "segments");
	DIR *d;
	struct dirent *de;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	if (!path)
		return PROTO_E_NOMEM;
	d = opendir(path);
	free(path);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? PROTO_E_NOTFOUND
							   : PROTO_E_IO;
	for (;;) {
		uint32_t n;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = PROTO_E_IO;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (!is_seg_name(de->d_name, &n)) {
			if (l->stray++ == 0)
				snprintf(l->first_stray, sizeof(l->first_stray),
					 "%s", de->d_name);
			continue;
		}
		if (l->count == l->cap) {
			/* Bounded: at most SEG_NUMBER_MAX + 1 names match. */
			size_t cap = l->cap ? l->cap * 2 : 16;
			uint32_t *p = realloc(l->n, cap * sizeof(*p));

			if (!p) {
				rc = PROTO_E_NOMEM;
				break;
			}
			l->n = p;
			l->cap = cap;
		}
		l->n[l->count++] = n;
	}
	closedir(d);
	if (rc) {
		free(l->n);
		memset(l, 0, sizeof(*l));
		return rc;
	}
	if (l->count)
		qsort(l->n, l->count, sizeof(*l->n), cmp_u32);
	return 0;
}

/* ---- metadata: in memory, XML out, strict XML in ---- */

struct meta {
	char **key, **val;
	size_t count, cap, bytes;
};

static void meta_clear(struct meta *m)
{
	for (size_t i = 0; i < m->count; i++) {
		free(m->key[i]);
		free(m->val[i]);
	}
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

static const char *meta_get(const struct meta *m, const char *key)
{
	for (size_t i = 0; i < m->count; i++)
		if (strcmp(m->key[i], key) == 0)
			return m->val[i];
	return NULL;
}

/* Valid UTF-8 of XML 1.0 characters, controls limited to TAB, LF, CR. */
static int text_ok(const char *s, size_t len)
{
	const uint8_t *p = (const uint8_t *)s, *e = p + len;

	while (p < e) {
		uint32_t c = *p;
		int more;

		if (c < 0x80) {
			if (c < 0x20 && c != 9 && c != 10 && c != 13)
				return 0;
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			more = 1;
			c &= 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			more = 2;
			c &= 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			more = 3;
			c &= 0x07;
		} else {
			return 0;
		}
		if (e - p <= more)
			return 0;
		for (int i = 1; i <= more; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i] & 0x3fu);
		}
		if ((more == 2 && c < 0x800) || (more == 3 && c < 0x10000) ||
		    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
		    c == 0xfffe || c == 0xffff)
			return 0;
		p += more + 1;
	}
	return 1;
}

static int meta_set(struct meta *m, const char *key, const char *value)
{
	size_t kl, vl;
	char *k, *v;

	if (!key || !value)
		return PROTO_E_ARG;
	kl = strlen(key);
	vl = strlen(value);
	if (kl == 0 || kl > META_KEY_MAX || vl > META_VALUE_MAX ||
	    !text_ok(key, kl) || !text_ok(value, vl))
		return PROTO_E_ARG;
	for (size_t i = 0; i < m->count; i++) {
		if (strcmp(m->key[i], key) != 0)
			continue;
		if (m->bytes - strlen(m->val[i]) + vl > META_BYTES_MAX)
			return PROTO_E_FULL;
		v = strdup(value);
		if (!v)
			return PROTO_E_NOMEM;
		m->bytes = m->bytes - strlen(m->val[i]) + vl;
		free(m->val[i]);
		m->val[i] = v;
		return 0;
	}
	if (m->count == META_ENTRIES_MAX || m->bytes + kl + vl > META_BYTES_MAX)
		return PROTO_E_FULL;
	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		char **nk = realloc(m->key, cap * sizeof(*nk));

		if (!nk)
			return PROTO_E_NOMEM;
		m->key = nk;
		nk = realloc(m->val, cap * sizeof(*nk));
		if (!nk)
			return PROTO_E_NOMEM;
		m->val = nk;
		m->cap = cap;
	}
	k = strdup(key);
	v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return PROTO_E_NOMEM;
	}
	m->key[m->count] = k;
	m->val[m->count] = v;
	m->count++;
	m->bytes += kl + vl;
	return 0;
}

struct sbuf {
	char *p;
	size_t len, cap, max;
};

static int sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (n > b->max - b->len)
		return PROTO_E_TOOBIG;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		if (cap > b->max)
			cap = b->max;
		p = realloc(b->p, cap);
		if (!p)
			return PROTO_E_NOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static int sb_str(struct sbuf *b, const char *s)
{
	return sb_add(b, s, strlen(s));
}

/* Escape s for an attribute (attr) or element content. Line ends and TAB
 * in attributes, and CR anywhere, become character references because an
 * XML parser would otherwise normalise them away. */
static int sb_escape(struct sbuf *b, const char *s, int attr)
{
	int rc = 0;

	for (; *s && !rc; s++) {
		switch (*s) {
		case '&': rc = sb_str(b, "&amp;"); break;
		case '<': rc = sb_str(b, "&lt;"); break;
		case '>': rc = sb_str(b, "&gt;"); break;
		case '\r': rc = sb_str(b, "&#13;"); break;
		case '"': rc = attr ? sb_str(b, "&quot;") : sb_add(b, s, 1); break;
		case '\n': rc = attr ? sb_str(b, "&#10;") : sb_add(b, s, 1); break;
		case '\t': rc = attr ? sb_str(b, "&#9;") : sb_add(b, s, 1); break;
		default: rc = sb_add(b, s, 1); break;
		}
	}
	return rc;
}

static int meta_render(const struct meta *m, struct sbuf *b)
{
	int rc = sb_str(b, META_HEAD);

	for (size_t i = 0; i < m->count && !rc; i++) {
		rc = sb_str(b, "<entry key=\"");
		if (!rc)
			rc = sb_escape(b, m->key[i], 1);
		if (!rc)
			rc = sb_str(b, "\">");
		if (!rc)
			rc = sb_escape(b, m->val[i], 0);
		if (!rc)
			rc = sb_str(b, "</entry>\n");
	}
	return rc ? rc : sb_str(b, META_TAIL);
}

/* Append code point c as UTF-8 when it is an XML 1.0 character. */
static int sb_utf8(struct sbuf *b, uint32_t c)
{
	char u[4];
	size_t n;

	if (!(c == 9 || c == 10 || c == 13 || (c >= 0x20 && c <= 0xd7ff) ||
	      (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)))
		return PROTO_E_FORMAT;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	return sb_add(b, u, n);
}

/* Parse text up to the terminator term ('"' in an attribute, '<' in
 * content), decoding the five predefined entities and character references,
 * into out (NUL-terminated). *pp advances to the terminator. */
static int parse_text(const char **pp, const char *e, char term, int attr,
		      size_t max, struct sbuf *out)
{
	const char *p = *pp;
	int rc;

	out->len = 0;
	out->max = max + 1;
	while (p < e && *p != term) {
		if (*p == '<' || *p == '\r' || *p == '\0' ||
		    (attr && (*p == '\n' || *p == '\t')))
			return PROTO_E_FORMAT;
		if (*p != '&') {
			rc = sb_add(out, p++, 1);
			if (rc)
				return rc == PROTO_E_TOOBIG ? PROTO_E_FORMAT : rc;
			continue;
		}
		static const struct {
			const char *ent;
			char c;
		} ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'},
			    {"&quot;", '"'}, {"&apos;", '\''}};
		int done = 0;

		for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
			size_t n = strlen(ents[i].ent);

			if ((size_t)(e - p) >= n &&
			    memcmp(p, ents[i].ent, n) == 0) {
				rc = sb_add(out, &ents[i].c, 1);
				if (rc)
					return PROTO_E_FORMAT;
				p += n;
				done = 1;
				break;
			}
		}
		if (done)
			continue;
		if (e - p < 4 || p[1] != '#')
			return PROTO_E_FORMAT;
		p += 2;
		int hex = *p == 'x';
		uint32_t c = 0;
		int digits = 0;

		if (hex)
			p++;
		for (; p < e && *p != ';'; p++, digits++) {
			int d;

			if (*p >= '0' && *p <= '9')
				d = *p - '0';
			else if (hex && *p >= 'a' && *p <= 'f')
				d = *p - 'a' + 10;
			else if (hex && *p >= 'A' && *p <= 'F')
				d = *p - 'A' + 10;
			else
				return PROTO_E_FORMAT;
			if (digits >= 8)
				return PROTO_E_FORMAT;
			c = c * (hex ? 16u : 10u) + (uint32_t)d;
		}
		if (p == e || digits == 0)
			return PROTO_E_FORMAT;
		p++;
		rc = sb_utf8(out, c);
		if (rc)
			return PROTO_E_FORMAT;
	}
	if (p == e)
		return PROTO_E_FORMAT;
	rc = sb_add(out, "", 1);
	if (rc)
		return PROTO_E_FORMAT;
	*pp = p;
	return 0;
}

static int expect(const char **pp, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(e - *pp) < n || memcmp(*pp, lit, n) != 0)
		return PROTO_E_FORMAT;
	*pp += n;
	return 0;
}

/* Parse exactly the format meta_render writes. *where: byte offset of the
 * first problem. */
static int meta_parse(const char *s, size_t len, struct meta *m,
		      size_t *where)
{
	const char *p = s, *e = s + len;
	struct sbuf k = {0}, v = {0};
	int rc = expect(&p, e, META_HEAD);

	while (!rc) {
		if (expect(&p, e, META_TAIL) == 0) {
			if (p != e)
				rc = PROTO_E_FORMAT;
			break;
		}
		rc = expect(&p, e, "<entry key=\"");
		if (!rc)
			rc = parse_text(&p, e, '"', 1, META_KEY_MAX, &k);
		if (!rc)
			rc = expect(&p, e, "\">");
		if (!rc)
			rc = parse_text(&p, e, '<', 0, META_VALUE_MAX, &v);
		if (!rc)
			rc = expect(&p, e, "</entry>\n");
		if (rc)
			break;
		if (meta_get(m, k.p)) {
			rc = PROTO_E_FORMAT;	/* a key appears once */
			break;
		}
		rc = meta_set(m, k.p, v.p);
		if (rc == PROTO_E_ARG || rc == PROTO_E_FULL)
			rc = PROTO_E_FORMAT;
	}
	free(k.p);
	free(v.p);
	*where = (size_t)(p - s);
	if (rc)
		meta_clear(m);
	return rc;
}

/* Load dir/meta.xml into m. PROTO_E_NOTFOUND when absent. */
static int meta_load(const char *dir, struct meta *m, size_t *where)
{
	char *path = path_join(dir, META_FILE);
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, rc;

	*where = 0;
	if (!path)
		return PROTO_E_NOMEM;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return errno == ENOENT ? PROTO_E_NOTFOUND : PROTO_E_IO;
	if (fstat(fd, &st) < 0) {
		rc = PROTO_E_IO;
		goto out_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = PROTO_E_FORMAT;
		goto out_fd;
	}
	if ((uint64_t)st.st_size > META_FILE_MAX) {
		rc = PROTO_E_TOOBIG;
		goto out_fd;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = PROTO_E_NOMEM;
		goto out_fd;
	}
	rc = pread_full(fd, buf, (size_t)st.st_size, 0, &got);
	if (rc)
		goto out_buf;
	rc = meta_parse(buf, got, m, where);
out_buf:
	free(buf);
out_fd:
	close(fd);
	return rc;
}

/* ================================ writer ================================ */

struct proto_jobdir_w {
	char *dir;
	size_t segment_max;
	int seg_fd;		/* current segment, -1 until the next append */
	uint32_t seg_no;	/* current (or next to create) segment */
	uint64_t seg_size;
	int idx_fd;
	uint64_t idx_size;
	int segdir_dirty;	/* a segment was created since the last sync */
	int broken;		/* a failed write could not be undone */
	struct meta meta;
	int meta_dirty;
	struct proto_jobdir_recovery rec;
};

static void rec_note(struct proto_jobdir_w *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rec_note(struct proto_jobdir_w *w, const char *fmt, ...)
{
	size_t n = strlen(w->rec.note);
	va_list ap;

	if (n + 3 >= sizeof(w->rec.note))
		return;
	if (n) {
		memcpy(w->rec.note + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(w->rec.note + n, sizeof(w->rec.note) - n, fmt, ap);
	va_end(ap);
}

static int has_job(const char *dir)
{
	static const char *const names[] = {"segments", "index", META_FILE};
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int found = 0;

	if (dfd < 0)
		return 0;
	for (size_t i = 0; i < 3; i++) {
		struct stat st;

		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			found = 1;
	}
	close(dfd);
	return found;
}

static int idx_write(struct proto_jobdir_w *w,
		     const struct proto_jobdir_index_entry *x)
{
	uint8_t e[IDX_ENTRY];
	int rc;

	idx_entry(e, x);
	if ((rc = write_all(w->idx_fd, e, IDX_ENTRY)) < 0) {
		if (ftruncate(w->idx_fd, (off_t)w->idx_size) < 0)
			w->broken = 1;
		return rc;
	}
	w->idx_size += IDX_ENTRY;
	return 0;
}

/* Index the BATCH frames of segment seg from off to end; stops at the
 * first bad frame. *valid: where the good frames end, *why: the problem. */
static int rescan_segment(struct proto_jobdir_w *w, struct fbuf *b, int fd,
			  uint32_t seg, uint64_t off, uint64_t end,
			  uint64_t *valid, int *why)
{
	struct proto_frame f;
	size_t flen;
	int rc, bad = 0;

	while (off < end) {
		rc = frame_at(b, fd, off, end, &f, &flen, &bad);
		if (rc)
			return rc;
		if (bad)
			break;
		if (f.type == PROTO_MSG_BATCH) {
			struct proto_jobdir_index_entry x;

			if (batch_entry(&f, flen, seg, off, &x) == 0) {
				rc = idx_write(w, &x);
				if (rc)
					return rc;
				w->rec.index_added++;
			}
		}
		off += flen;
	}
	*valid = off;
	*why = bad;
	return 0;
}

/* What recover's steps hand each other. */
struct recovery {
	struct fbuf b;		/* frame buffer of the scans */
	int have_last;		/* the job has a segment */
	uint32_t last;		/* its last segment, open on last_fd */
	int last_fd;
	uint64_t last_end;	/* valid end of the last segment */
	uint64_t kept;		/* index entries kept */
	uint32_t rseg;		/* with kept: where the last kept entry ends */
	uint64_t roff;
};

/* Step 1, the last segment: find its valid end, cut a torn tail. */
static int recover_last_segment(struct proto_jobdir_w *w, struct recovery *r)
{
	struct stat st;
	char *path;
	int rc, why;

	path = seg_path(w->dir, r->last);
	if (!path)
		return PROTO_E_NOMEM;
	r->last_fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	free(path);
	if (r->last_fd < 0 || fstat(r->last_fd, &st) < 0)
		return PROTO_E_IO;
	rc = seg_read_check(r->last_fd, r->last);
	if (rc < 0 && rc != PROTO_E_IO) {
		rec_note(w, "segment %06u: bad header (%s), left as is",
			 r->last, proto_strerror(rc));
		w->rec.new_segment = 1;
		r->last_end = (uint64_t)st.st_size;
		return 0;
	}
	if (rc)
		return rc;

	uint64_t end = (uint64_t)st.st_size;

	/* The scan only measures here; indexing comes in step 3 once the
	 * index is trimmed. */
	r->last_end = SEG_HDR;
	while (r->last_end < end) {
		struct proto_frame f;
		size_t flen;

		rc = frame_at(&r->b, r->last_fd, r->last_end, end, &f, &flen, &why);
		if (rc)
			return rc;
		if (why)
			break;
		r->last_end += flen;
	}
	if (r->last_end < end && why == PROTO_E_TRUNCATED) {
		if (ftruncate(r->last_fd, (off_t)r->last_end) < 0)
			return PROTO_E_IO;
		w->rec.truncated_bytes = end - r->last_end;
		rec_note(w, "segment %06u: torn tail of %llu bytes at offset %llu cut",
			 r->last, (unsigned long long)(end - r->last_end),
			 (unsigned long long)r->last_end);
	} else if (r->last_end < end) {
		rec_note(w, "segment %06u: corrupt frame at offset %llu (%s), left as is",
			 r->last, (unsigned long long)r->last_end, proto_strerror(why));
		w->rec.new_segment = 1;
		r->last_end = end;
	}
	return 0;
}

/* Of an index whose header is intact (size bytes of entries), how many
 * entries at its start are intact, in order and inside the valid data
 * (r->kept), and where the last of them ends (r->rseg, r->roff). */
static int count_intact(struct proto_jobdir_w *w, struct recovery *r, uint64_t size)
{
	struct proto_jobdir_index_entry prev = {0}, x;
	uint8_t e[IDX_ENTRY];
	size_t got;
	int rc;

	for (; r->kept < size / IDX_ENTRY; r->kept++) {
		rc = pread_full(w->idx_fd, e, IDX_ENTRY, IDX_HDR + r->kept * IDX_ENTRY, &got);
		if (rc)
			return rc;
		if (got < IDX_ENTRY || idx_parse(e, &x))
			break;
		if (r->kept && (x.segment < prev.segment ||
				(x.segment == prev.segment &&
				 x.offset < prev.offset + prev.length)))
			break;
		if (!r->have_last || x.segment > r->last || x.offset < SEG_HDR ||
		    x.length <= PROTO_FRAME_HDR ||
		    (x.segment == r->last && x.offset + x.length > r->last_end))
			break;
		prev = x;
	}
	if (r->kept) {
		r->rseg = prev.segment;
		r->roff = prev.offset + prev.length;
	}
	return 0;
}

/* Step 2, the index: keep the entries that are intact, in order and inside
 * the valid data; drop the rest. */
static int recover_index(struct proto_jobdir_w *w, struct recovery *r)
{
	uint8_t h[IDX_HDR];
	uint64_t nent;
	struct stat st;
	size_t got;
	int rc;

	if (fstat(w->idx_fd, &st) < 0)
		return PROTO_E_IO;
	rc = pread_full(w->idx_fd, h, IDX_HDR, 0, &got);
	if (rc)
		return rc;
	if (idx_check(h, got) != 0) {
		if (st.st_size > 0)
			rec_note(w, "index header bad, index rebuilt");
		nent = st.st_size > IDX_HDR
			? ((uint64_t)st.st_size - IDX_HDR + IDX_ENTRY - 1) / IDX_ENTRY
			: 0;
		idx_header(h);
		if (ftruncate(w->idx_fd, 0) < 0 ||
		    pwrite(w->idx_fd, h, IDX_HDR, 0) != IDX_HDR)
			return PROTO_E_IO;
	} else {
		uint64_t size = (uint64_t)st.st_size - IDX_HDR;

		nent = (size + IDX_ENTRY - 1) / IDX_ENTRY;
		if ((rc = count_intact(w, r, size)))
			return rc;
	}
	if (ftruncate(w->idx_fd, (off_t)(IDX_HDR + r->kept * IDX_ENTRY)) < 0)
		return PROTO_E_IO;
	w->idx_size = IDX_HDR + r->kept * IDX_ENTRY;
	w->rec.index_dropped = nent - r->kept;
	if (lseek(w->idx_fd, 0, SEEK_END) < 0)
		return PROTO_E_IO;
	return 0;
}

/* Step 3 for one segment s: index its BATCH frames from offset from. */
static int reindex_segment(struct proto_jobdir_w *w, struct recovery *r,
			   uint32_t s, uint64_t from)
{
	uint64_t end, valid;
	struct stat st;
	int fd, why, own = 0, rc;

	if (s == r->last) {
		fd = r->last_fd;
		end = r->last_end;
	} else {
		char *path = seg_path(w->dir, s);

		if (!path)
			return PROTO_E_NOMEM;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			return PROTO_E_IO;
		}
		own = 1;
		end = (uint64_t)st.st_size;
	}
	rc = seg_read_check(fd, s);
	if (rc == 0)
		rc = rescan_segment(w, &r->b, fd, s, from, end, &valid, &why);
	else if (rc != PROTO_E_IO)
		rc = 0;	/* a bad header: nothing to index there */
	if (own)
		close(fd);
	return rc;
}

/* Step 3: index the BATCH frames after the last kept entry. */
static int reindex_tail(struct proto_jobdir_w *w, const struct seglist *l,
			struct recovery *r)
{
	int rc;

	for (size_t i = 0; i < l->count && r->have_last; i++) {
		uint32_t s = l->n[i];

		if (s < r->rseg)
			continue;
		rc = reindex_segment(w, r, s, s == r->rseg && r->kept ? r->roff : SEG_HDR);
		if (rc)
			return rc;
	}
	if (w->rec.index_dropped || w->rec.index_added)
		rec_note(w, "index: %llu entries dropped, %llu added",
			 (unsigned long long)w->rec.index_dropped,
			 (unsigned long long)w->rec.index_added);
	return 0;
}

/* Step 4: where writing resumes; the last segment's fd passes to w when
 * writing goes on in it. */
static int resume_point(struct proto_jobdir_w *w, struct recovery *r)
{
	if (r->have_last && !w->rec.new_segment) {
		w->seg_fd = r->last_fd;
		r->last_fd = -1;
		w->seg_no = r->last;
		w->seg_size = r->last_end;
	} else if (r->have_last) {
		if (r->last == SEG_NUMBER_MAX)
			return PROTO_E_FULL;
		w->seg_no = r->last + 1;
	}
	return 0;
}

/* APPEND on an existing job: cut the torn tail of the last segment,
 * repair the index, index what it misses, pick where writing resumes. */
static int recover(struct proto_jobdir_w *w, const struct seglist *l)
{
	struct recovery r = {.have_last = l->count > 0, .last_fd = -1, .roff = SEG_HDR};
	int rc = 0;

	if (r.have_last) {
		r.last = l->n[l->count - 1];
		rc = recover_last_segment(w, &r);
	}
	if (!rc)
		rc = recover_index(w, &r);
	if (!rc)
		rc = reindex_tail(w, l, &r);
	if (!rc)
		rc = resume_point(w, &r);
	if (r.last_fd >= 0)
		close(r.last_fd);
	free(r.b.p);
	return rc;
}

struct proto_jobdir_w *proto_jobdir_create(const char *dir, int flags,
					   size_t segment_max, int *rc)
{
	struct proto_jobdir_w *w;
	struct seglist l = {0};
	char *path = NULL;
	int err, append = flags & PROTO_JOBDIR_APPEND;
	uint8_t h[IDX_HDR];

	if (!dir || !*dir || (flags & ~PROTO_JOBDIR_APPEND)) {
		err = PROTO_E_ARG;
		goto fail;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		err = PROTO_E_NOMEM;
		goto fail;
	}
	w->seg_fd = -1;
	w->idx_fd = -1;
	w->segment_max = segment_max ? segment_max : PROTO_SEGMENT_MAX_DEFAULT;
	w->meta_dirty = 1;	/* meta.xml is (re)written at the first sync */
	w->dir = strdup(dir);
	if (!w->dir) {
		err = PROTO_E_NOMEM;
		goto fail_w;
	}
	if (!append && has_job(dir)) {
		err = PROTO_E_EXISTS;
		goto fail_w;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		err = errno == ENOENT ? PROTO_E_NOTFOUND : PROTO_E_IO;
		goto fail_w;
	}
	path = path_join(dir, "segments");
	if (!path) {
		err = PROTO_E_NOMEM;
		goto fail_w;
	}
	if (mkdir(path, 0700) < 0 && (errno != EEXIST || !append)) {
		err = errno == EEXIST ? PROTO_E_EXISTS : PROTO_E_IO;
		goto fail_w;
	}
	free(path);
	path = path_join(dir, "index");
	if (!path) {
		err = PROTO_E_NOMEM;
		goto fail_w;
	}
	w->idx_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC |
				       (append ? 0 : O_EXCL), 0600);
	if (w->idx_fd < 0) {
		err = errno == EEXIST ? PROTO_E_EXISTS : PROTO_E_IO;
		goto fail_w;
	}
	if (append) {
		size_t where;

		err = meta_load(dir, &w->meta, &where);
		if (err && err != PROTO_E_NOTFOUND)
			goto fail_w;
		err = seglist_read(dir, &l);
		if (err)
			goto fail_w;
		err = recover(w, &l);
		if (err)
			goto fail_w;
	} else {
		idx_header(h);
		if (write_all(w->idx_fd, h, IDX_HDR) < 0) {
			err = PROTO_E_IO;
			goto fail_w;
		}
		w->idx_size = IDX_HDR;
		err = fsync_path(dir);
		if (err)
			goto fail_w;
	}
	free(l.n);
	free(path);
	*rc = 0;
	return w;

fail_w:
	free(l.n);
	free(path);
	if (w->idx_fd >= 0)
		close(w->idx_fd);
	if (w->seg_fd >= 0)
		close(w->seg_fd);
	meta_clear(&w->meta);
	free(w->dir);
	free(w);
fail:
	if (rc)
		*rc = err;
	return NULL;
}

const struct proto_jobdir_recovery *
proto_jobdir_recovery(const struct proto_jobdir_w *w)
{
	return &w->rec;
}

static int seg_open_next(struct proto_jobdir_w *w)
{
	uint8_t h[SEG_HDR];
	char *path;
	int fd, rc;

	if (w->seg_no > SEG_NUMBER_MAX)
		return PROTO_E_FULL;
	path = seg_path(w->dir, w->seg_no);
	if (!path)
		return PROTO_E_NOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		free(path);
		return write_err();
	}
	seg_header(h, w->seg_no);
	if ((rc = write_all(fd, h, SEG_HDR)) < 0) {
		close(fd);
		unlink(path);
		free(path);
		return rc;
	}
	free(path);
	w->seg_fd = fd;
	w->seg_size = SEG_HDR;
	w->segdir_dirty = 1;
	return 0;
}

int proto_jobdir_append(struct proto_jobdir_w *w, const void *frame,
			size_t len)
{
	struct proto_jobdir_index_entry x;
	struct proto_frame f;
	size_t consumed = 0;
	int rc;

	if (!w || !frame)
		return PROTO_E_ARG;
	if (w->broken)
		return PROTO_E_IO;
	rc = proto_frame_decode(frame, len, 0, &f, &consumed);
	if (rc)
		return rc;
	if (consumed != len)
		return PROTO_E_LENGTH;	/* one whole frame, nothing more */
	if (f.type == PROTO_MSG_BATCH) {
		rc = batch_entry(&f, len, 0, 0, &x);
		if (rc)
			return rc;
	}
	if (w->seg_fd >= 0 && w->seg_size > SEG_HDR &&
	    w->seg_size + len > w->segment_max) {
		/* A closed segment is never written again: make it durable
		 * now rather than at the next sync. */
		if (fsync(w->seg_fd) < 0)
			return PROTO_E_IO;
		close(w->seg_fd);
		w->seg_fd = -1;
		w->seg_no++;
	}
	if (w->seg_fd < 0) {
		rc = seg_open_next(w);
		if (rc)
			return rc;
	}
	if ((rc = write_all(w->seg_fd, frame, len)) < 0) {
		if (ftruncate(w->seg_fd, (off_t)w->seg_size) < 0)
			w->broken = 1;
		return rc;
	}
	if (f.type == PROTO_MSG_BATCH) {
		x.segment = w->seg_no;
		x.offset = w->seg_size;
		rc = idx_write(w, &x);
		if (rc) {
			if (ftruncate(w->seg_fd, (off_t)w->seg_size) < 0)
				w->broken = 1;
			return rc;
		}
	}
	w->seg_size += len;
	return 0;
}

int proto_jobdir_set_meta(struct proto_jobdir_w *w, const char *key,
			  const char *value)
{
	int rc;

	if (!w)
		return PROTO_E_ARG;
	rc = meta_set(&w->meta, key, value);
	if (!rc)
		w->meta_dirty = 1;
	return rc;
}

static int meta_write(struct proto_jobdir_w *w)
{
	struct sbuf b = {.max = META_FILE_MAX};
	char *tmp = path_join(w->dir, META_TMP);
	char *dst = path_join(w->dir, META_FILE);
	int fd = -1, rc;

	if (!tmp || !dst) {
		rc = PROTO_E_NOMEM;
		goto out;
	}
	rc = meta_render(&w->meta, &b);
	if (rc)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = write_err();
		goto out;
	}
	rc = write_all(fd, b.p, b.len);
	if (!rc && fsync(fd) < 0)
		rc = write_err();
	if (close(fd) < 0 && !rc)
		rc = PROTO_E_IO;
	if (!rc && rename(tmp, dst) < 0)
		rc = PROTO_E_IO;
	if (rc)
		unlink(tmp);
	else
		rc = fsync_path(w->dir);
out:
	free(b.p);
	free(tmp);
	free(dst);
	return rc;
}

int proto_jobdir_sync(struct proto_jobdir_w *w)
{
	int rc = 0, r;

	if (!w)
		return PROTO_E_ARG;
	if (w->seg_fd >= 0 && fsync(w->seg_fd) < 0)
		rc = PROTO_E_IO;
	if (fsync(w->idx_fd) < 0 && !rc)
		rc = PROTO_E_IO;
	if (w->segdir_dirty) {
		char *path = path_join(w->dir, "segments");

		r = path ? fsync_path(path) : PROTO_E_NOMEM;
		free(path);
		if (!r)
			w->segdir_dirty = 0;
		else if (!rc)
			rc = r;
	}
	if (w->meta_dirty) {
		r = meta_write(w);
		if (!r)
			w->meta_dirty = 0;
		else if (!rc)
			rc = r;
	}
	if (w->broken && !rc)
		rc = PROTO_E_IO;
	return rc;
}

int proto_jobdir_close(struct proto_jobdir_w *w)
{
	int rc;

	if (!w)
		return 0;
	rc = proto_jobdir_sync(w);
	if (w->seg_fd >= 0 && close(w->seg_fd) < 0 && !rc)
		rc = PROTO_E_IO;
	if (close(w->idx_fd) < 0 && !rc)
		rc = PROTO_E_IO;
	meta_clear(&w->meta);
	free(w->dir);
	free(w);
	return rc;
}

/* ================================ reader ================================ */

struct proto_jobdir_r {
	char *dir;
	struct seglist segs;
	size_t cur;		/* index in segs of the open segment */
	int fd;			/* open segment or -1 */
	uint64_t off, size;	/* read position, size when opened */
	int seg_bad;		/* this segment is counted in bad_segments */
	int err;		/* sticky I/O error */
	struct fbuf buf;
	uint8_t *scan;		/* SCAN_CHUNK bytes for resynchronisation */
	struct meta meta;
	int idx_fd;		/* -1 until proto_jobdir_index_get */
	int idx_rc;		/* header check result once opened */
	uint32_t seg_no;	/* number of the open segment */
	int hdr_bad;		/* the open segment's header is bad */
	int follow;		/* PROTO_JOBDIR_FOLLOW */
	uint32_t last_no;	/* follow: number of the last segment entered */
	int entered;		/* follow: last_no is valid */
	struct proto_jobdir_report rep;
};

static void problem(struct proto_jobdir_r *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct proto_jobdir_r *r, const char *fmt, ...)
{
	va_list ap;

	if (r->rep.first_problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->rep.first_problem, sizeof(r->rep.first_problem), fmt, ap);
	va_end(ap);
}

struct proto_jobdir_r *proto_jobdir_open(const char *dir, int *rc)
{
	return proto_jobdir_open_flags(dir, 0, rc);
}

struct proto_jobdir_r *proto_jobdir_open_flags(const char *dir, int flags,
					       int *rc)
{
	struct proto_jobdir_r *r;
	size_t where;
	int err;

	if (!dir || (flags & ~PROTO_JOBDIR_FOLLOW)) {
		err = PROTO_E_ARG;
		goto fail;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = PROTO_E_NOMEM;
		goto fail;
	}
	r->fd = -1;
	r->idx_fd = -1;
	r->follow = (flags & PROTO_JOBDIR_FOLLOW) != 0;
	r->dir = strdup(dir);
	r->scan = malloc(SCAN_CHUNK);
	if (!r->dir || !r->scan) {
		err = PROTO_E_NOMEM;
		goto fail_r;
	}
	err = seglist_read(dir, &r->segs);
	if (err)
		goto fail_r;
	r->rep.stray_files = r->segs.stray;
	memcpy(r->rep.first_stray, r->segs.first_stray,
	       sizeof(r->rep.first_stray));
	for (size_t i = 0; i < r->segs.count; i++) {
		uint32_t expect_no = i ? r->segs.n[i - 1] + 1 : 0;

		if (r->segs.n[i] > expect_no) {
			r->rep.missing_segments += r->segs.n[i] - expect_no;
			problem(r, "segments %06u to %06u missing", expect_no,
				r->segs.n[i] - 1);
		}
	}
	err = meta_load(dir, &r->meta, &where);
	r->rep.meta_status = err;
	if (err == PROTO_E_FORMAT || err == PROTO_E_TOOBIG)
		problem(r, META_FILE " unreadable at byte %zu (%s), ignored",
			where, proto_strerror(err));
	else if (err && err != PROTO_E_NOTFOUND)
		goto fail_r;
	*rc = 0;
	return r;

fail_r:
	proto_jobdir_close_r(r);
fail:
	if (rc)
		*rc = err;
	return NULL;
}

/* Count [from, to) of the open segment as skipped, because of why. */
static void skip(struct proto_jobdir_r *r, uint64_t from, uint64_t to,
		 int why)
{
	r->rep.skipped_bytes += to - from;
	if (!r->seg_bad) {
		r->seg_bad = 1;
		r->rep.bad_segments++;
	}
	problem(r, "segments/%06u.tps at byte %llu: %s (%llu bytes skipped)",
		r->seg_no, (unsigned long long)from,
		why == PROTO_E_TRUNCATED ? "torn frame" : proto_strerror(why),
		(unsigned long long)(to - from));
}

/* Offset of the next valid frame after a bad one at from, or r->size.
 * A candidate needs a good header checksum and then a good payload
 * checksum: resynchronisation on a false candidate would take 64 bits of
 * checksum to collide. */
static int resync(struct proto_jobdir_r *r, uint64_t from, uint64_t *next)
{
	uint64_t p = from + 1;

	while (p + PROTO_FRAME_HDR <= r->size) {
		size_t got, n = SCAN_CHUNK;
		int rc;

		if (r->size - p < n)
			n = (size_t)(r->size - p);
		rc = pread_full(r->fd, r->scan, n, p, &got);
		if (rc)
			return rc;
		if (got < PROTO_FRAME_HDR)
			break;
		for (size_t i = 0; i + PROTO_FRAME_HDR <= got; i++) {
			struct proto_frame f;
			size_t c = 0, flen;
			int bad;

			if (r->scan[i] != 'T' || r->scan[i + 1] != 'P')
				continue;
			rc = proto_frame_decode(r->scan + i, PROTO_FRAME_HDR,
						0, &f, &c);
			if (rc != 0 && rc != PROTO_E_TRUNCATED)
				continue;
			rc = frame_at(&r->buf, r->fd, p + i, r->size, &f,
				      &flen, &bad);
			if (rc)
				return rc;
			if (!bad) {
				*next = p + i;
				return 0;
			}
		}
		/* Overlap so that a header across the chunk end is seen. */
		p += got - PROTO_FRAME_HDR + 1;
	}
	*next = r->size;
	return 0;
}

static int seg_enter(struct proto_jobdir_r *r)
{
	uint32_t n = r->segs.n[r->cur];
	char *path = seg_path(r->dir, n);
	struct stat st;
	int rc;

	if (!path)
		return PROTO_E_NOMEM;
	r->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (r->fd < 0 && errno == ENOENT) {
		/* removed since the listing: as if it had never been there */
		r->rep.missing_segments++;
		problem(r, "segments/%06u.tps vanished while reading", n);
		r->cur++;
		return 0;
	}
	if (r->fd < 0)
		return PROTO_E_IO;
	if (fstat(r->fd, &st) < 0)
		return PROTO_E_IO;
	if (r->follow && S_ISREG(st.st_mode) && (uint64_t)st.st_size < SEG_HDR &&
	    r->cur + 1 >= r->segs.count) {
		/* the writer is creating it: come back when it has a header */
		close(r->fd);
		r->fd = -1;
		return 1;
	}
	r->seg_no = n;
	r->last_no = n;
	r->entered = 1;
	r->hdr_bad = 0;
	r->seg_bad = 0;
	r->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	r->rep.segments++;
	/* A directory or device with a segment's name is a bad segment, not
	 * an I/O error that would end the whole read. */
	rc = S_ISREG(st.st_mode) ? seg_read_check(r->fd, n) : PROTO_E_FORMAT;
	if (rc == PROTO_E_IO)
		return rc;
	if ((rc == PROTO_E_MAGIC || rc == PROTO_E_CHECKSUM) &&
	    S_ISREG(st.st_mode) && r->size > SEG_HDR) {
		/* A damaged header costs the header: the frames after it
		 * are found by resynchronisation (header and payload CRCs),
		 * as after any damaged frame. A header that checks but is
		 * not this segment's (another version or number: a file
		 * that is not ours, or a copy) still skips the file. */
		r->rep.skipped_bytes += SEG_HDR;
		r->rep.bad_segments++;
		r->seg_bad = 1;
		problem(r, "segments/%06u.tps: bad segment header (%s), its %u "
			"bytes skipped, frames resynchronised", n,
			proto_strerror(rc), SEG_HDR);
		r->off = SEG_HDR;
		return 0;
	}
	if (rc) {
		r->rep.skipped_bytes += r->size;
		r->rep.bad_segments++;
		r->seg_bad = 1;
		problem(r, "segments/%06u.tps: bad segment header (%s), "
			"%llu bytes skipped", n, proto_strerror(rc),
			(unsigned long long)r->size);
		r->hdr_bad = 1;
		r->off = r->size;
		return 0;
	}
	r->off = SEG_HDR;
	return 0;
}

/* Follow mode: list the segments again, keeping only those after the last
 * one entered (segments are never renumbered, and the writer only ever
 * creates higher numbers); r->cur is 0. Returns how many there are, or a
 * code. */
static int follow_relist(struct proto_jobdir_r *r)
{
	struct seglist l;
	size_t keep = 0;
	int rc = seglist_read(r->dir, &l);

	if (rc == PROTO_E_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	for (size_t i = 0; i < l.count; i++)
		if (!r->entered || l.n[i] > r->last_no)
			l.n[keep++] = l.n[i];
	l.count = keep;
	free(r->segs.n);
	r->segs = l;
	r->cur = 0;
	r->rep.stray_files = l.stray;
	memcpy(r->rep.first_stray, l.first_stray, sizeof(r->rep.first_stray));
	return keep > (size_t)INT32_MAX ? INT32_MAX : (int)keep;
}

/* Follow mode: has the open segment grown since we took its size? */
static int follow_grew(struct proto_jobdir_r *r)
{
	struct stat st;

	if (fstat(r->fd, &st) < 0)
		return PROTO_E_IO;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size <= r->size)
		return 0;
	r->size = (uint64_t)st.st_size;
	return 1;
}

/* Follow mode, the open segment read to its current end (or to a frame
 * in progress): 1 when it grew (read on), 2 when the writer has left it
 * (a newer segment exists and it did not grow since), 0 when it is still
 * the live one (nothing more yet), or a code. The newer segment is looked
 * for before the last size check: the writer creates it only after its
 * last write to this one. */
static int follow_live_end(struct proto_jobdir_r *r)
{
	int rc = follow_grew(r);

	if (rc)
		return rc;
	if (r->cur + 1 >= r->segs.count) {
		rc = follow_relist(r);
		if (rc <= 0)
			return rc;	/* nothing newer: still the live one */
		/* segs holds only newer ones; closing the open segment moves
		 * cur on by one, onto the first of them */
		r->cur = (size_t)-1;
	}
	rc = follow_grew(r);
	return rc ? rc : 2;
}

int proto_jobdir_next(struct proto_jobdir_r *r, struct proto_frame *f)
{
	int rc;

	if (!r || !f)
		return PROTO_E_ARG;
	if (r->err)
		return r->err;
	for (;;) {
		size_t flen;
		int bad;

		if (r->fd < 0) {
			if (r->cur >= r->segs.count && r->follow) {
				rc = follow_relist(r);
				if (rc < 0)
					goto io;
			}
			if (r->cur >= r->segs.count)
				return 0;
			rc = seg_enter(r);
			if (rc < 0)
				goto io;
			if (rc == 1)
				return 0;
			if (r->fd < 0)
				continue;
		}
		if (r->off >= r->size) {
			if (r->follow && !r->hdr_bad) {
				rc = follow_live_end(r);
				if (rc < 0)
					goto io;
				if (rc == 1)
					continue;
				if (rc == 0)
					return 0;
			}
			close(r->fd);
			r->fd = -1;
			r->cur++;
			continue;
		}
		rc = frame_at(&r->buf, r->fd, r->off, r->size, f, &flen, &bad);
		if (rc)
			goto io;
		if (bad == PROTO_E_TRUNCATED && r->follow) {
			/* the writer's frame in progress, unless it left */
			rc = follow_live_end(r);
			if (rc < 0)
				goto io;
			if (rc == 1)
				continue;
			if (rc == 0)
				return 0;
		}
		if (!bad) {
			r->off += flen;
			r->rep.frames++;
			r->rep.bytes += flen;
			return 1;
		}
		uint64_t next;

		rc = resync(r, r->off, &next);
		if (rc)
			goto io;
		skip(r, r->off, next, bad);
		r->off = next;
	}
io:
	r->err = rc;
	return rc;
}

const char *proto_jobdir_meta(struct proto_jobdir_r *r, const char *key)
{
	if (!r || !key)
		return NULL;
	return meta_get(&r->meta, key);
}

const struct proto_jobdir_report *proto_jobdir_report(struct proto_jobdir_r *r)
{
	return &r->rep;
}

int proto_jobdir_index_get(struct proto_jobdir_r *r, uint64_t i,
			   struct proto_jobdir_index_entry *e)
{
	uint8_t b[IDX_ENTRY];
	size_t got;
	int rc;

	if (!r || !e)
		return PROTO_E_ARG;
	if (r->idx_fd < 0) {
		char *path = path_join(r->dir, "index");

		if (!path)
			return PROTO_E_NOMEM;
		r->idx_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		free(path);
		if (r->idx_fd < 0)
			return errno == ENOENT ? PROTO_E_NOTFOUND : PROTO_E_IO;
		rc = pread_full(r->idx_fd, b, IDX_HDR, 0, &got);
		r->idx_rc = rc ? rc : idx_check(b, got) ? PROTO_E_FORMAT : 0;
	}
	if (r->idx_rc)
		return r->idx_rc;
	if (i > (UINT64_MAX - IDX_HDR) / IDX_ENTRY - 1)
		return 0;
	rc = pread_full(r->idx_fd, b, IDX_ENTRY, IDX_HDR + i * IDX_ENTRY, &got);
	if (rc)
		return rc;
	if (got < IDX_ENTRY)
		return 0;
	rc = idx_parse(b, e);
	return rc ? rc : 1;
}

void proto_jobdir_close_r(struct proto_jobdir_r *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	if (r->idx_fd >= 0)
		close(r->idx_fd);
	free(r->segs.n);
	free(r->buf.p);
	free(r->scan);
	meta_clear(&r->meta);
	free(r->dir);
	free(r);
}

/* ---- sensor spool files (docs/FORMAT.md, "Sensor spool") ---------------- */

#define SPOOL_MAX_BYTES (1ull << 32)	/* a sensor keeps a quarter of its
					 * budget (1 TiB at most) in batches;
					 * beyond 4 GiB a file is refused */

/* The frames a spool file may hold: its stream's own, at offset 0 of the
 * payload (PROTOCOL.md: META id, BATCH, LOSS and BYE stream). */
static int spool_type_ok(uint8_t type)
{
	return type == PROTO_MSG_META || type == PROTO_MSG_BATCH ||
	       type == PROTO_MSG_LOSS || type == PROTO_MSG_BYE;
}

int proto_spool_each(const char *path, uint64_t *stream,
		     int (*fn)(void *ctx, const uint8_t *frame, size_t len,
			       const struct proto_frame *f),
		     void *ctx)
{
	struct stat sb;
	uint8_t *buf = NULL;
	size_t len, off = PROTO_SPOOL_HDR;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? PROTO_E_NOTFOUND : PROTO_E_IO;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		rc = PROTO_E_IO;
		goto out;
	}
	if ((uint64_t)sb.st_size > SPOOL_MAX_BYTES) {
		rc = PROTO_E_TOOBIG;
		goto out;
	}
	len = (size_t)sb.st_size;
	if (len < PROTO_SPOOL_HDR) {
		rc = PROTO_E_FORMAT;
		goto out;
	}
	buf = malloc(len);
	if (!buf) {
		rc = PROTO_E_NOMEM;
		goto out;
	}
	{
		size_t got = 0;

		rc = pread_full(fd, buf, len, 0, &got);
		if (!rc && got != len)
			rc = PROTO_E_TRUNCATED;
		if (rc)
			goto out;
	}
	if (memcmp(buf, PROTO_SPOOL_MAGIC, 8) != 0) {
		rc = PROTO_E_MAGIC;
		goto out;
	}
	*stream = get64(buf + 8);
	while (off < len) {
		struct proto_frame f;
		size_t used;

		rc = proto_frame_decode(buf + off, len - off, 0, &f, &used);
		if (rc)
			break;
		if (!spool_type_ok(f.type) || f.length < 8 ||
		    get64(f.payload) != *stream) {
			rc = PROTO_E_FORMAT;
			break;
		}
		rc = fn(ctx, buf + off, used, &f);
		if (rc)
			break;
		off += used;
	}
out:
	free(buf);
	close(fd);
	return rc;
}

/* The (stream, seq) of every BATCH stored, sorted: what a spool file's
 * batches are checked against. */
struct spool_ingest {
	struct proto_jobdir_w *w;
	uint64_t (*have)[2];
	size_t nhave;
	struct proto_spool_report *rep;
};

static int pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int stored_batches(const char *dir, struct spool_ingest *in)
{
	struct proto_jobdir_index_entry e;
	struct proto_jobdir_r *r;
	size_t cap = 0;
	int rc;

	r = proto_jobdir_open(dir, &rc);
	if (!r)
		return rc == PROTO_E_NOTFOUND ? 0 : rc;
	for (uint64_t i = 0; (rc = proto_jobdir_index_get(r, i, &e)) == 1; i++) {
		if (in->nhave == cap) {
			void *p;

			cap = cap ? 2 * cap : 1024;
			p = realloc(in->have, cap * sizeof(*in->have));
			if (!p) {
				rc = PROTO_E_NOMEM;
				break;
			}
			in->have = p;
		}
		in->have[in->nhave][0] = e.stream;
		in->have[in->nhave][1] = e.seq;
		in->nhave++;
	}
	proto_jobdir_close_r(r);
	if (rc < 0 && rc != PROTO_E_NOTFOUND)
		return rc;
	if (in->nhave)
		qsort(in->have, in->nhave, sizeof(*in->have), pair_cmp);
	return 0;
}

static int ingest_frame(void *ctx, const uint8_t *frame, size_t len,
			const struct proto_frame *f)
{
	struct spool_ingest *in = ctx;
	int rc;

	if (f->type == PROTO_MSG_BATCH && f->length >= 24) {
		uint64_t key[2] = {get64(f->payload), get64(f->payload + 8)};

		if (in->nhave && bsearch(key, in->have, in->nhave,
					 sizeof(*in->have), pair_cmp)) {
			in->rep->dup_batches++;
			return 0;
		}
		in->rep->events += get32(f->payload + 16);
	}
	rc = proto_jobdir_append(in->w, frame, len);
	if (rc)
		return rc;
	if (f->type == PROTO_MSG_BATCH)
		in->rep->batches++;
	return 0;
}

/* A spool file taken, removed once the job directory is synced. */
struct spool_taken {
	struct spool_taken *next;
	char path[];
};

int proto_jobdir_spool_ingest(const char *dir, const char *spool,
			      struct proto_spool_report *rep)
{
	struct spool_ingest in = {.rep = rep};
	struct spool_taken *taken = NULL, *t;
	DIR *d;
	struct dirent *de;
	int rc;

	memset(rep, 0, sizeof(*rep));
	d = opendir(spool);
	if (!d)
		return errno == ENOENT ? 0 : PROTO_E_IO;
	rc = stored_batches(dir, &in);
	if (rc)
		goto out;
	while ((de = readdir(d))) {
		char path[4096];
		size_t n = strlen(de->d_name);
		uint64_t stream = 0;
		int frc;

		if (n != 20 || strcmp(de->d_name + 16, ".tps") != 0)
			continue;
		if (!in.w) {
			in.w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc);
			if (!in.w)
				goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", spool, de->d_name);
		frc = proto_spool_each(path, &stream, ingest_frame, &in);
		if (frc == PROTO_E_NOSPACE) {
			rc = PROTO_E_NOSPACE;
			snprintf(rep->first_problem, sizeof(rep->first_problem),
				 "no space left on device: %.200s", dir);
			goto out;
		}
		if (frc) {
			char bad[sizeof(path) + 8];

			if (!rep->bad_files++)
				snprintf(rep->first_problem,
					 sizeof(rep->first_problem), "%.200s: %s",
					 path, proto_strerror(frc));
			/* its good frames are in the job: not taken twice */
			snprintf(bad, sizeof(bad), "%s.bad", path);
			rename(path, bad);
			continue;
		}
		rep->files++;
		t = malloc(sizeof(*t) + strlen(path) + 1);
		if (!t) {
			rc = PROTO_E_NOMEM;
			goto out;
		}
		strcpy(t->path, path);
		t->next = taken;
		taken = t;
	}
out:
	if (in.w) {
		int crc = proto_jobdir_close(in.w);

		if (!rc)
			rc = crc;
	}
	/* removed only once the job holds them on disk: a crash or a
	 * failed sync before keeps them for the next take (deduplicated) */
	while ((t = taken)) {
		taken = t->next;
		if (!rc)
			unlink(t->path);
		free(t);
	}
	free(in.have);
	closedir(d);
	return rc;
}
