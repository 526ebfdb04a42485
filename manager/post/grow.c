/*
 * manager/post/grow.c - big arrays that spill to disk (see grow.h): the heap
 * budget, the unlinked spill files, resizing, freeing and sorting in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "manager/post/grow.h"
#include "proto/num.h"

size_t mgr_big_heap_total;

/* The heap budget: TAPESTRY_SPILL_BYTES (a byte count; 0 spills every big
 * array), else MGR_SPILL_DEFAULT. Read at each decision so tests can set it. */
size_t mgr_spill_budget(void)
{
	const char *v = getenv("TAPESTRY_SPILL_BYTES");
	long b;

	/* mgr_env_check refused a bad one */
	return v && *v && !proto_parse_long(v, 0, LONG_MAX, &b) ? (size_t)b :
								MGR_SPILL_DEFAULT;
}

static int spill_errno(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG ? PROTO_E_FULL :
	       e == ENOMEM ? PROTO_E_NOMEM : PROTO_E_IO;
}

static int spill_open(const char *dir)
{
	char path[4096];
	int fd;

#ifdef O_TMPFILE
	/* no name at all: nothing to unlink, nothing left after a crash */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
#endif
	if ((size_t)snprintf(path, sizeof(path), "%s/tapestry-spill-XXXXXX", dir) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) >= 0) {
		unlink(path);	/* the file lives only as long as fd */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	return fd;
}

/* A new unlinked file for a spilled array: an fd, or a negative PROTO_E_*.
 * One fd per spilled array: when they run out, the soft limit is raised to
 * the hard one once (the manager uses no select()). */
static int spill_file(void)
{
	const char *dir = getenv("TMPDIR");
	struct rlimit rl;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = spill_open(dir);
	if (fd < 0 && errno == EMFILE && !getrlimit(RLIMIT_NOFILE, &rl) &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (!setrlimit(RLIMIT_NOFILE, &rl))
			fd = spill_open(dir);
	}
	return fd < 0 ? spill_errno(errno) : fd;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return n > SIZE_MAX - pg ? 0 : (n + pg - 1) / pg * pg;
}

/* Fault in the whole pages of [a, a + n) at once when there are at least
 * MGR_SPILL_MIN bytes of them: a big array is filled front to back right
 * after it grows, and one madvise costs far less system time than a page
 * fault per page (bench/RESULTS.md, post-processing speed). Advice only:
 * a kernel without MADV_POPULATE_WRITE (before 5.14) faults as before. */
static void populate(char *a, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)a + pg - 1) / pg * pg;
	uintptr_t hi = ((uintptr_t)a + n) / pg * pg;

	if (hi >= lo + MGR_SPILL_MIN)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)a;
	(void)n;
#endif
}

/* Make the big array *p (NULL, or from mgr_big_*) hold at least bytes
 * bytes, keeping its contents; it may move to a spill file. 0, or a negative
 * PROTO_E_* (NOMEM, FULL when the disk is, IO when TMPDIR is unusable) with
 * *p unchanged and still valid. */
int mgr_big_resize(void **p, size_t bytes)
{
	struct mgr_big_hdr *h = *p ? mgr_big_hdr(*p) : NULL, *nh;
	size_t old = h ? h->bytes : 0, budget, heap, map;
	int fd, e;

	if (h && bytes <= old)
		return 0;
	if (bytes > SIZE_MAX - MGR_BIG_HDR || !(map = page_round(MGR_BIG_HDR + bytes)))
		return PROTO_E_OVERFLOW;
	if (h && h->fd >= 0) {	/* on file: extend the file, map it anew */
		size_t omap = MGR_BIG_HDR + old;

		if ((e = posix_fallocate(h->fd, (off_t)omap, (off_t)(map - omap))))
			return spill_errno(e);
#ifdef MREMAP_MAYMOVE
		/* the mapping grows with its page tables: the pages already
		 * there are not faulted in again (a new mapping would) */
		nh = mremap(h, omap, map, MREMAP_MAYMOVE);
		if (nh == MAP_FAILED)
			return PROTO_E_NOMEM;
#else
		/* the contents are the file's: a new mapping sees them, no copy */
		nh = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);
		if (nh == MAP_FAILED)
			return PROTO_E_NOMEM;
		munmap(h, omap);
#endif
		nh->bytes = map - MGR_BIG_HDR;
		*p = (char *)nh + MGR_BIG_HDR;
		return 0;
	}
	budget = mgr_spill_budget();
	heap = __atomic_load_n(&mgr_big_heap_total, __ATOMIC_RELAXED) - old + bytes;
	if (heap <= budget || bytes < (budget < MGR_SPILL_MIN ? budget : MGR_SPILL_MIN)) {
		if (!(nh = realloc(h, MGR_BIG_HDR + bytes)))
			return PROTO_E_NOMEM;
		nh->bytes = bytes;
		nh->fd = -1;
		__atomic_add_fetch(&mgr_big_heap_total, bytes - old, __ATOMIC_RELAXED);
		*p = (char *)nh + MGR_BIG_HDR;
		populate((char *)*p + old, bytes - old);
		return 0;
	}
	if ((fd = spill_file()) < 0)
		return fd;
	if ((e = posix_fallocate(fd, 0, (off_t)map))) {
		close(fd);
		return spill_errno(e);
	}
	nh = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (nh == MAP_FAILED) {
		close(fd);
		return PROTO_E_NOMEM;
	}
	if (h) {
		memcpy((char *)nh + MGR_BIG_HDR, *p, old);
		free(h);
		__atomic_sub_fetch(&mgr_big_heap_total, old, __ATOMIC_RELAXED);
	}
	nh->bytes = map - MGR_BIG_HDR;
	nh->fd = fd;
	*p = (char *)nh + MGR_BIG_HDR;
	return 0;
}

/* A zeroed big array of n elements of size bytes, or NULL with *rc set
 * (PROTO_E_*). Free with mgr_big_free. */
void *mgr_big_calloc(size_t n, size_t size, int *rc)
{
	void *p = NULL;

	if (size && n > SIZE_MAX / size) {
		*rc = PROTO_E_OVERFLOW;
		return NULL;
	}
	if ((*rc = mgr_big_resize(&p, n * size > 0 ? n * size : 1)))
		return NULL;
	if (mgr_big_hdr(p)->fd < 0)	/* a new file reads as zeros already */
		memset(p, 0, n * size);
	return p;
}

/* Release a big array (NULL: no-op); its spill file disappears with it. */
void mgr_big_free(void *p)
{
	struct mgr_big_hdr *h;

	if (!p)
		return;
	h = mgr_big_hdr(p);
	if (h->fd >= 0) {
		int fd = h->fd;

		munmap(h, MGR_BIG_HDR + h->bytes);
		close(fd);
		return;
	}
	__atomic_sub_fetch(&mgr_big_heap_total, h->bytes, __ATOMIC_RELAXED);
	free(h);
}

/* Swap two size-byte elements, through a 64-byte stack buffer. */
static void swap_bytes(char *a, char *b, size_t size)
{
	char t[64];

	while (size > 0) {
		size_t k = size < sizeof(t) ? size : sizeof(t);

		memcpy(t, a, k);
		memcpy(a, b, k);
		memcpy(b, t, k);
		a += k;
		b += k;
		size -= k;
	}
}

/* Move element r of the heap b[0..n) down to its place (max-heap by cmp). */
static void sift(char *b, size_t r, size_t n, size_t size,
		 int (*cmp)(const void *, const void *))
{
	for (size_t c; (c = 2 * r + 1) < n; r = c) {
		if (c + 1 < n && cmp(b + c * size, b + (c + 1) * size) < 0)
			c++;
		if (cmp(b + r * size, b + c * size) >= 0)
			break;
		swap_bytes(b + r * size, b + c * size, size);
	}
}

/* The elements [lo, mid) and [mid, hi) of src, each sorted, merged into
 * dst at the same places. */
static void merge_runs(const char *src, char *dst, size_t lo, size_t mid, size_t hi,
		       size_t size, int (*cmp)(const void *, const void *))
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi) {
		const char *x = src + i * size, *y = src + j * size;
		int take_y = cmp(y, x) < 0;

		memcpy(dst + k++ * size, take_y ? y : x, size);
		i += !take_y;
		j += take_y;
	}
	memcpy(dst + k * size, src + i * size, (mid - i) * size);
	k += mid - i;
	memcpy(dst + k * size, src + j * size, (hi - j) * size);
}

/* A bottom-up merge sort of the spilled array b through t (as large, on
 * file too): runs of MGR_SORT_RUN bytes sorted by qsort (its scratch
 * bounded by the run), then merged pairwise, each pass reading and writing
 * both files in order. */
static void merge_sort(char *b, char *t, size_t n, size_t size,
		       int (*cmp)(const void *, const void *))
{
	size_t run = MGR_SORT_RUN / size ? MGR_SORT_RUN / size : 1;
	char *src = b, *dst = t;

	for (size_t i = 0; i < n; i += run)
		qsort(b + i * size, n - i < run ? n - i : run, size, cmp);
	for (size_t w = run; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = n - lo < w ? n : lo + w;
			size_t hi = n - lo < 2 * w ? n : lo + 2 * w;

			merge_runs(src, dst, lo, mid, hi, size, cmp);
		}
		char *x = src;

		src = dst;
		dst = x;
	}
	if (src != b)
		memcpy(b, src, n * size);
}

/* Sort the big array base (n elements of size bytes) by cmp. On the heap:
 * qsort, whose scratch is bounded like the array. Spilled: qsort's merge
 * buffer (glibc allocates one as large as the array, or an index of
 * pointers) would be anonymous memory growing with the trace, exactly what
 * the spill avoids: a merge sort through a second spilled array instead
 * (merge_sort), or, when there is no room for it, an in-place heapsort (its
 * accesses all over the file make it several times slower). Not stable:
 * cmp must be a total order where equal elements may come in any order. */
void mgr_big_sort(void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *))
{
	char *b = base;
	void *t = NULL;

	if (n < 2)
		return;
	if (!mgr_big_spilled(base)) {
		qsort(base, n, size, cmp);
		return;
	}
	if (n > SIZE_MAX / size || mgr_big_resize(&t, n * size) != 0)
		t = NULL;
	if (t) {
		merge_sort(b, t, n, size, cmp);
		mgr_big_free(t);
		return;
	}
	for (size_t start = n / 2; start-- > 0;)	/* heapify */
		sift(b, start, n, size, cmp);
	for (size_t end = n - 1; end > 0; end--) {
		swap_bytes(b, b + end * size, size);
		sift(b, 0, end, size, cmp);
	}
}
