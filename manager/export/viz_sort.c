/*
 * manager/export/viz_sort.c - the external sort of the viewer exports: the
 * points of events in time order with bounded memory (sorted runs spilled
 * to temporary files, merged through a heap; export_viz.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

struct run {
	FILE *f;
	int level;
};

struct src {
	FILE *f;			/* a spilled run, or */
	const struct viz_pt *mem;	/* the in-memory tail */
	size_t pos, n;
	struct viz_pt cur;
};

struct viz_sort {
	viz_pt_cmp cmp;
	struct viz_pt *buf;
	size_t n, cap;
	struct run *runs;
	size_t nruns;
	uint64_t spilled;
	/* reading */
	struct src *srcs;
	size_t *heap, nheap;
	int err;
};

static int qcmp(const void *a, const void *b, void *arg)
{
	return ((viz_pt_cmp)arg)(a, b);
}

struct viz_sort *mgr_viz_sort_new(size_t run_max, viz_pt_cmp cmp)
{
	struct viz_sort *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cmp = cmp;
	if (!run_max) {
		const char *env = getenv("TAPESTRY_VIZ_RUN_MAX");

		run_max = env && atol(env) > 0 ? (size_t)atol(env) : VIZ_RUN_MAX;
		if (run_max < 16)
			run_max = 16;
	}
	s->cap = run_max;
	s->buf = malloc(s->cap * sizeof(*s->buf));
	/* runs: at most VIZ_FANIN - 1 per level, 2^64 points need < 12 levels */
	s->runs = calloc(VIZ_FANIN * 12, sizeof(*s->runs));
	if (!s->buf || !s->runs) {
		mgr_viz_sort_free(s);
		return NULL;
	}
	return s;
}

static int src_next(struct src *r, struct viz_pt *out)
{
	if (r->mem) {
		if (r->pos >= r->n)
			return 0;
		*out = r->mem[r->pos++];
		return 1;
	}
	if (fread(out, sizeof(*out), 1, r->f) == 1)
		return 1;
	return ferror(r->f) ? PROTO_E_IO : 0;
}

static int heap_less(struct viz_sort *s, size_t a, size_t b)
{
	return s->cmp(&s->srcs[s->heap[a]].cur, &s->srcs[s->heap[b]].cur) < 0;
}

static void heap_down(struct viz_sort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < s->nheap && heap_less(s, l, m))
			m = l;
		if (r < s->nheap && heap_less(s, r, m))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* Start merging srcs[0..n): fill the heap. */
static int heap_start(struct viz_sort *s, size_t n)
{
	s->nheap = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = src_next(&s->srcs[i], &s->srcs[i].cur);

		if (rc < 0)
			return rc;
		if (rc == 1)
			s->heap[s->nheap++] = i;
	}
	for (size_t i = s->nheap; i-- > 0;)
		heap_down(s, i);
	return 0;
}

static int heap_pop(struct viz_sort *s, struct viz_pt *out)
{
	struct src *r;
	int rc;

	if (!s->nheap)
		return 0;
	r = &s->srcs[s->heap[0]];
	*out = r->cur;
	rc = src_next(r, &r->cur);
	if (rc < 0)
		return rc;
	if (rc == 0)
		s->heap[0] = s->heap[--s->nheap];
	heap_down(s, 0);
	return 1;
}

static int alloc_merge(struct viz_sort *s, size_t n)
{
	free(s->srcs);
	free(s->heap);
	s->srcs = calloc(n ? n : 1, sizeof(*s->srcs));
	s->heap = calloc(n ? n : 1, sizeof(*s->heap));
	return s->srcs && s->heap ? 0 : PROTO_E_NOMEM;
}

/* Merge the runs [from, nruns) into one new run of level `level`. */
static int merge_tail(struct viz_sort *s, size_t from, int level)
{
	size_t n = s->nruns - from;
	struct viz_pt p;
	FILE *out;
	int rc;

	if ((rc = alloc_merge(s, n)) != 0)
		return rc;
	if (!(out = tmpfile()))
		return PROTO_E_IO;
	for (size_t i = 0; i < n; i++)
		s->srcs[i].f = s->runs[from + i].f;
	if ((rc = heap_start(s, n)) != 0)
		goto fail;
	while ((rc = heap_pop(s, &p)) == 1)
		if (fwrite(&p, sizeof(p), 1, out) != 1) {
			rc = PROTO_E_IO;
			goto fail;
		}
	if (rc < 0 || fflush(out) != 0)
		goto fail;
	rewind(out);
	for (size_t i = from; i < s->nruns; i++)
		fclose(s->runs[i].f);
	s->nruns = from;
	s->runs[s->nruns++] = (struct run){out, level};
	return 0;
fail:
	fclose(out);
	return rc < 0 ? rc : PROTO_E_IO;
}

static int spill(struct viz_sort *s)
{
	FILE *f;
	int rc, level = 0;

	qsort_r(s->buf, s->n, sizeof(*s->buf), qcmp, (void *)s->cmp);
	if (!(f = tmpfile()))
		return PROTO_E_IO;
	if (fwrite(s->buf, sizeof(*s->buf), s->n, f) != s->n || fflush(f) != 0) {
		fclose(f);
		return PROTO_E_IO;
	}
	rewind(f);
	s->spilled += s->n;
	s->n = 0;
	s->runs[s->nruns++] = (struct run){f, 0};
	/* VIZ_FANIN runs of one level become one run of the next: at most
	 * VIZ_FANIN - 1 runs per level stay open */
	for (;;) {
		size_t k = 0;

		while (k < s->nruns && s->runs[s->nruns - 1 - k].level == level)
			k++;
		if (k < VIZ_FANIN)
			return 0;
		if ((rc = merge_tail(s, s->nruns - k, level + 1)) != 0)
			return rc;
		level++;
	}
}

int mgr_viz_sort_add(struct viz_sort *s, const struct viz_pt *p)
{
	int rc;

	if (s->n == s->cap && (rc = spill(s)) != 0)
		return rc;
	s->buf[s->n++] = *p;
	return 0;
}

int mgr_viz_sort_finish(struct viz_sort *s)
{
	int rc;

	qsort_r(s->buf, s->n, sizeof(*s->buf), qcmp, (void *)s->cmp);
	if ((rc = alloc_merge(s, s->nruns + 1)) != 0)
		return rc;
	for (size_t i = 0; i < s->nruns; i++)
		s->srcs[i].f = s->runs[i].f;
	s->srcs[s->nruns].mem = s->buf;
	s->srcs[s->nruns].n = s->n;
	return heap_start(s, s->nruns + 1);
}

int mgr_viz_sort_next(struct viz_sort *s, struct viz_pt *out)
{
	return heap_pop(s, out);
}

uint64_t mgr_viz_sort_runs(const struct viz_sort *s)
{
	return s->nruns;
}

void mgr_viz_sort_free(struct viz_sort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nruns; i++)
		fclose(s->runs[i].f);
	free(s->runs);
	free(s->buf);
	free(s->srcs);
	free(s->heap);
	free(s);
}

int mgr_viz_write_end(FILE *out, const char *path, const char *what, int rc)
{
	if (rc < 0) {
		mgr_err("reading sorted %s: %s", what, proto_strerror(rc));
		rc = -1;
	}
	if (fclose(out) != 0 && rc == 0) {
		mgr_err("%s: write failed: %m", path);
		rc = -1;
	}
	return rc;
}
