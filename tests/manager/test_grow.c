/*
 * tests/manager/test_grow.c - manager/post/grow.c: big arrays on the heap below
 * TAPESTRY_SPILL_BYTES and in an unlinked spill file beyond it; contents
 * kept across growth and across the move, the spill file never visible in
 * TMPDIR, clean errors when TMPDIR is unusable or the file cannot grow.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "manager/post/grow.h"
#include "tests/xorshift.h"

static char tmpdir[64];

static void setup(void)
{
	strcpy(tmpdir, "/tmp/tapestry-test-grow.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	setenv("TMPDIR", tmpdir, 1);
	unsetenv("TAPESTRY_SPILL_BYTES");
}

/* the spill files are unlinked at once: TMPDIR stays empty */
static int dir_entries(const char *d)
{
	DIR *dh = opendir(d);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(dh);
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(dh);
	return n;
}

static void teardown(void)
{
	cr_expect_eq(dir_entries(tmpdir), 0, "a spill file is visible in TMPDIR");
	cr_expect_eq(rmdir(tmpdir), 0);
}

static int open_fds(void)
{
	return dir_entries("/proc/self/fd");
}

/* invariant: a big array of cap elements holds them, where it says */
static void check_arr(const void *p, size_t cap, size_t size)
{
	if (!p)
		return;
	const struct mgr_big_hdr *h = mgr_big_hdr(p);
	cr_assert_geq(h->bytes, cap * size);
	if (h->fd >= 0)
		cr_assert_geq(fcntl(h->fd, F_GETFD), 0, "spill fd not open");
	cr_assert_eq(mgr_big_spilled(p), h->fd >= 0);
}

/* append n values i * 7 + 1 one at a time, checking the invariant */
static uint64_t *fill(size_t n, size_t *cap, int *spilled_at)
{
	uint64_t *a = NULL;

	*cap = 0;
	if (spilled_at)
		*spilled_at = -1;
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(mgr_big_grow((void **)&a, cap, i + 1, sizeof(*a)), 0);
		a[i] = i * 7 + 1;
		check_arr(a, *cap, sizeof(*a));
		if (spilled_at && *spilled_at < 0 && mgr_big_spilled(a))
			*spilled_at = (int)i;
	}
	return a;
}

static void expect_filled(const uint64_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != i * 7 + 1)
			cr_assert_fail("element %zu is %llu", i, (unsigned long long)a[i]);
}

TestSuite(grow, .init = setup, .fini = teardown);

Test(grow, small_stays_on_heap)
{
	size_t cap, heap0 = mgr_big_heap_total;
	uint64_t *a = fill(10000, &cap, NULL);

	cr_assert_not(mgr_big_spilled(a));
	cr_assert_geq(cap, 10000);
	cr_assert_eq(mgr_big_heap_total, heap0 + cap * sizeof(*a));
	expect_filled(a, 10000);
	mgr_big_free(a);
	cr_assert_eq(mgr_big_heap_total, heap0);
	mgr_big_free(NULL);
	cr_assert_not(mgr_big_spilled(NULL));
}

Test(grow, forced_spill)
{
	int fds = open_fds();
	size_t cap, heap0 = mgr_big_heap_total;
	uint64_t *a;

	setenv("TAPESTRY_SPILL_BYTES", "0", 1);
	a = fill(300000, &cap, NULL);	/* 2.4 MB: several remappings */
	cr_assert(mgr_big_spilled(a));
	cr_assert_eq(mgr_big_heap_total, heap0, "a spilled array counted on the heap");
	cr_assert_eq(open_fds(), fds + 1);
	expect_filled(a, 300000);
	mgr_big_free(a);
	cr_assert_eq(open_fds(), fds, "spill fd not closed");
}

Test(grow, growth_across_the_threshold)
{
	size_t cap, heap0 = mgr_big_heap_total;
	int at;
	uint64_t *a, *b;

	setenv("TAPESTRY_SPILL_BYTES", "1048576", 1);	/* 1 MiB */
	a = fill(1000000, &cap, &at);	/* 8 MB */
	cr_assert(mgr_big_spilled(a));
	/* on the heap while it fits in 1 MiB, moved when it doubled past it */
	cr_assert_eq(at, 131072, "moved at element %d", at);
	expect_filled(a, 1000000);
	cr_assert_eq(mgr_big_heap_total, heap0);
	/* the budget is shared: a second array fits until the total is over */
	b = fill(100000, &cap, &at);	/* 800 KB */
	cr_assert_not(mgr_big_spilled(b));
	cr_assert_eq(at, -1);
	/* over the budget, an array under MGR_SPILL_MIN still stays */
	void *c = NULL, *d = NULL;
	size_t ccap = 0, dcap = 0;
	cr_assert_eq(mgr_big_grow(&c, &ccap, 65536, 8), 0);	/* 512 KiB */
	cr_assert_not(mgr_big_spilled(c));
	cr_assert_eq(mgr_big_grow(&d, &dcap, 131072, 8), 0);	/* 1 MiB */
	cr_assert(mgr_big_spilled(d));
	mgr_big_free(d);
	mgr_big_free(c);
	mgr_big_free(b);
	mgr_big_free(a);
	cr_assert_eq(mgr_big_heap_total, heap0);
}

Test(grow, calloc_zeroes)
{
	int rc = 1;
	uint64_t *h = mgr_big_calloc(1000, sizeof(*h), &rc);

	cr_assert_not_null(h);
	cr_assert_eq(rc, 0);
	cr_assert_not(mgr_big_spilled(h));
	for (size_t i = 0; i < 1000; i++)
		cr_assert_eq(h[i], 0);
	setenv("TAPESTRY_SPILL_BYTES", "0", 1);
	uint64_t *f = mgr_big_calloc(100000, sizeof(*f), &rc);
	cr_assert_not_null(f);
	cr_assert(mgr_big_spilled(f));
	for (size_t i = 0; i < 100000; i++)
		cr_assert_eq(f[i], 0);
	mgr_big_free(f);
	mgr_big_free(h);
	/* zero elements: still a valid array to free */
	void *z = mgr_big_calloc(0, 8, &rc);
	cr_assert_not_null(z);
	mgr_big_free(z);
}

Test(grow, overflow)
{
	void *p = NULL;
	size_t cap = 0;
	int rc = 0;

	cr_assert_eq(mgr_big_grow(&p, &cap, SIZE_MAX / 4, 16), PROTO_E_OVERFLOW);
	cr_assert_null(p);
	cr_assert_eq(cap, 0);
	cr_assert_null(mgr_big_calloc(SIZE_MAX / 2, 4, &rc));
	cr_assert_eq(rc, PROTO_E_OVERFLOW);
	cr_assert_eq(mgr_big_resize(&p, SIZE_MAX - 8), PROTO_E_OVERFLOW);
}

Test(grow, no_tmpdir)
{
	size_t cap;
	uint64_t *a = fill(1000, &cap, NULL);	/* on the heap */
	int rc = 0;
	void *q = NULL;
	size_t qcap = 0;

	setenv("TAPESTRY_SPILL_BYTES", "0", 1);
	setenv("TMPDIR", "/nonexistent/tapestry-test-grow", 1);
	/* a new array cannot be created, an existing one cannot move: both
	 * are left as they were */
	cr_assert_eq(mgr_big_grow(&q, &qcap, 10, 8), PROTO_E_IO);
	cr_assert_null(q);
	cr_assert_eq(qcap, 0);
	size_t old = cap;
	uint64_t *keep = a;
	cr_assert_eq(mgr_big_grow((void **)&a, &cap, 100000, sizeof(*a)), PROTO_E_IO);
	cr_assert_eq(a, keep);
	cr_assert_eq(cap, old);
	expect_filled(a, 1000);
	cr_assert_null(mgr_big_calloc(100, 8, &rc));
	cr_assert_eq(rc, PROTO_E_IO);
	/* TMPDIR is a file, not a directory */
	char file[96];
	snprintf(file, sizeof(file), "%s/f", tmpdir);
	FILE *fp = fopen(file, "w");
	cr_assert_not_null(fp);
	fclose(fp);
	setenv("TMPDIR", file, 1);
	cr_assert_eq(mgr_big_grow(&q, &qcap, 10, 8), PROTO_E_IO);
	unlink(file);
	mgr_big_free(a);
}

Test(grow, file_cannot_grow)
{
	struct rlimit rl = {1 << 20, 1 << 20};	/* files of at most 1 MiB */
	size_t cap;
	uint64_t *a;

	setenv("TAPESTRY_SPILL_BYTES", "0", 1);
	a = fill(1000, &cap, NULL);
	cr_assert(mgr_big_spilled(a));
	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	/* like a full disk: the blocks cannot be reserved, the array stays */
	size_t old = cap;
	cr_assert_eq(mgr_big_grow((void **)&a, &cap, 1 << 20, sizeof(*a)), PROTO_E_FULL);
	cr_assert_eq(cap, old);
	check_arr(a, cap, sizeof(*a));
	expect_filled(a, 1000);
	cr_assert_eq(mgr_big_grow((void **)&a, &cap, 1001, sizeof(*a)), 0);
	mgr_big_free(a);
}

Test(grow, budget_variable)
{
	setenv("TAPESTRY_SPILL_BYTES", "123", 1);
	cr_assert_eq(mgr_spill_budget(), 123);
	setenv("TAPESTRY_SPILL_BYTES", "12x", 1);
	cr_assert_eq(mgr_spill_budget(), MGR_SPILL_DEFAULT);
	setenv("TAPESTRY_SPILL_BYTES", "", 1);
	cr_assert_eq(mgr_spill_budget(), MGR_SPILL_DEFAULT);
	setenv("TAPESTRY_SPILL_BYTES", "99999999999999999999999", 1);
	cr_assert_eq(mgr_spill_budget(), MGR_SPILL_DEFAULT);
}

struct rec3 {
	uint64_t key;
	uint32_t id;
	char pad[100];		/* larger than the swap buffer */
};

static int cmp_rec3(const void *a, const void *b)
{
	const struct rec3 *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* mgr_big_sort: qsort on the heap, a merge sort through a second spilled
 * array once spilled (n below one run: qsort alone; n of several runs, not
 * a power of two of them: merge passes with an odd run out); the same
 * order either way, and the elements' other bytes move with them */
Test(grow, sort_heap_and_spilled)
{
	for (int spilled = 0; spilled < 3; spilled++) {
		size_t n = spilled == 2 ? 5 * MGR_SORT_RUN / sizeof(struct rec3) + 17 : 5001;
		size_t cap = 0;
		struct rec3 *r = NULL;
		uint64_t x = 88172645463325252ull;

		setenv("TAPESTRY_SPILL_BYTES", spilled ? "0" : "1073741824", 1);
		cr_assert_eq(mgr_big_grow((void **)&r, &cap, n, sizeof(*r)), 0);
		cr_assert_eq(mgr_big_spilled(r), spilled > 0);
		for (size_t i = 0; i < n; i++) {
			r[i].key = tests_xorshift64(&x) % 1000;	/* many equal keys */
			r[i].id = (uint32_t)i;
			memset(r[i].pad, (int)(i & 0x7f), sizeof(r[i].pad));
		}
		mgr_big_sort(r, n, sizeof(*r), cmp_rec3);
		for (size_t i = 0; i < n; i++) {
			if (i)
				cr_assert_lt(cmp_rec3(&r[i - 1], &r[i]), 0, "order at %zu", i);
			cr_assert_eq(r[i].pad[99], (char)(r[i].id & 0x7f));
		}
		mgr_big_sort(r, 1, sizeof(*r), cmp_rec3);
		mgr_big_sort(r, 0, sizeof(*r), cmp_rec3);
		mgr_big_free(r);
	}
	cr_assert_eq(dir_entries(tmpdir), 0);
}
