/*
 * manager/serve/tlindex.c - the timeline index of a job: every event of the
 * program (all but the tracer's own, compute kept) on the corrected global
 * clock, by lane (one per stream and thread), with level-of-detail buckets
 * and the matched MPI messages, in one file the server maps read-only.
 *
 * A request [t0, t1] at w pixels costs O(lanes * (log n + w)): a lane whose
 * events in the window are few (<= 2w) is answered with the events
 * themselves; else with per-pixel busy fractions per category summed from
 * the coarsest level whose buckets are no wider than a pixel (four times
 * coarser per level; level 0 has about one bucket per 8 events), or binned
 * from the events when the window is narrower than level 0's buckets (then
 * it holds about 8 w events). Messages come with a window whose lanes are
 * all answered with events. The server's memory does not grow with the
 * job: the file is mapped per request (docs/modules/manager-serve.md has the
 * layout; it is a cache in host byte order, rebuilt when the job changes).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "manager/post/causality.h"
#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/safeio.h"
#include "manager/serve/serve.h"
#include "proto/error.h"
#include "proto/event.h"

#define TL_MAGIC "TPSTL03"
#define TL_SPARSE 1024		/* records per entry of the sparse start index */
#define TL_LANES_MAX 65536
#define TL_B0_MAX (1u << 20)		/* level-0 buckets of a lane, at most */
#define TL_STR_MAX (32u << 20)		/* bytes of distinct paths kept */
#define TL_STR_SLOTS (1u << 18)
#define TL_W_MAX 4096
#define TL_MSGS_MAX 4000
#define TL_NCAT 7		/* the kinds of call the page colours, category() */
#define TL_TMASK ((PROTO_EV__COUNT + 63) / 64)

struct tl_head {
	char magic[8];
	uint64_t nlanes, nrec, nmsg, strlen;
	int64_t tmin, tmax;
	uint64_t off_lanes, off_rec, off_lod, off_msend, off_mrecv, off_str, size;
	uint64_t off_sparse, nsparse;
	uint64_t off_types, ntypes, off_cum, ncum;
};

struct tl_lane {
	uint64_t stream, first, count, lod;	/* lod: first bucket */
	uint64_t sparse;			/* first entry of the sparse index */
	int64_t pid;
	int32_t rank;
	uint32_t tid, b0, levels;
	char host[64], exe[124];
	uint64_t types, cum;		/* first of its types, of its totals rows */
	uint32_t ntypes, pad;
	uint64_t tmask[TL_TMASK];	/* the types it holds (mem samples not) */
};

struct tl_rec {
	int64_t start, end;
	int64_t arg[6];
	uint16_t type, flags;
	uint32_t path;		/* offset + 1 in the strings, 0: none */
	uint64_t pos;		/* yield position (the causality module's) */
};

struct tl_bucket {
	float busy[TL_NCAT];	/* ns busy per category() */
	float mem;		/* largest memory sample (rss), 0: none */
	uint32_t count;		/* events starting in it */
};

/* The running totals of a lane: a row per TL_SPARSE records (row k: its
 * records [0, k * TL_SPARSE), the last row all of them), ntypes + 1 cells:
 * cell 0 {largest end of those records, largest end of the block before
 * the row (records [(k - 1) * TL_SPARSE, k * TL_SPARSE))}, then per type
 * of the lane {calls, busy ns}.
 * A window's profile and a search by name are differences of two rows and
 * at most a few blocks of records, whatever the job's size. */
struct tl_cum {
	int64_t a, b;
};

struct tl_msg {
	uint32_t send, recv;	/* record numbers */
};

/* ---- building ------------------------------------------------------------------- */

struct builder {
	struct tl_lane *lanes;
	uint32_t *slot;		/* hash (stream, tid) -> lane + 1 */
	size_t nlanes;
	uint32_t *posmap;	/* yield position -> record number (a big array:
				 * on file beyond the heap budget, grow.h) */
	uint64_t npos;
	size_t cappos;
	char *str;
	size_t strlen;
	uint32_t *sslot;	/* hash of strings -> offset + 1 */
	struct tl_rec *rec;	/* the output's records (mapped) */
	struct tl_msg *msg;	/* a big array too */
	size_t nmsg, capmsg;
	uint64_t nsparse, ntypes, ncum;
	int failed;
	FILE *tmp;		/* the records in yield order (unlinked) */
	uint64_t nrec;
	int64_t tmin, tmax;
	int rc;			/* the first error of srv_tl_add, 0 */
	int ended;		/* srv_tl_add saw the end of the events */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static long lane_of(struct builder *b, const struct proto_stream *st, uint32_t tid)
{
	uint64_t h = mix(st->id * 31 + tid) & (TL_LANES_MAX * 2 - 1);

	for (;; h = (h + 1) & (TL_LANES_MAX * 2 - 1)) {
		uint32_t v = b->slot[h];

		if (!v)
			break;
		if (b->lanes[v - 1].stream == st->id && b->lanes[v - 1].tid == tid)
			return v - 1;
	}
	if (b->nlanes == TL_LANES_MAX)
		return -1;
	struct tl_lane *l = &b->lanes[b->nlanes];

	memset(l, 0, sizeof(*l));
	l->stream = st->id;
	l->tid = tid;
	b->slot[h] = (uint32_t)++b->nlanes;
	return (long)b->nlanes - 1;
}

static uint32_t intern(struct builder *b, const char *s)
{
	size_t n = strlen(s);
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	for (h &= TL_STR_SLOTS - 1;; h = (h + 1) & (TL_STR_SLOTS - 1)) {
		uint32_t v = b->sslot[h];

		if (!v)
			break;
		if (!strcmp(b->str + v - 1, s))
			return v;
	}
	if (b->strlen + n + 1 > TL_STR_MAX || b->strlen > UINT32_MAX - 4097)
		return 0;
	char *ns = realloc(b->str, b->strlen + n + 1);

	if (!ns)
		return 0;
	b->str = ns;
	memcpy(b->str + b->strlen, s, n + 1);
	b->sslot[h] = (uint32_t)b->strlen + 1;
	b->strlen += n + 1;
	return b->sslot[h];
}

static int kept(unsigned type)
{
	const struct proto_ev_info *in = proto_ev_info(type);

	return in && (in->category != PROTO_CAT_TRACER || type == PROTO_EV_COMPUTE);
}

struct tmp_rec {
	uint32_t lane;
	struct tl_rec r;
};

/* Pass 1: one event into b->tmp (lane, record), in yield order. */
static int add_event(struct builder *b, const struct mgr_event *ev)
{
	uint64_t pos = b->npos++;
	int rc;

	if (pos == b->cappos && (rc = mgr_big_grow((void **)&b->posmap, &b->cappos,
						    pos + 1, sizeof(uint32_t))))
		return rc;
	b->posmap[pos] = UINT32_MAX;
	if (!kept(ev->ev->type))
		return 0;
	long lane = lane_of(b, ev->stream, ev->ev->tid);

	if (lane < 0 || b->nrec >= UINT32_MAX - 1)
		return PROTO_E_TOOBIG;
	struct tl_lane *l = &b->lanes[lane];
	struct tmp_rec t = {.lane = (uint32_t)lane};

	if (!l->count++) {
		l->rank = ev->stream->rank;
		l->pid = ev->stream->pid;
		const char *slash = strrchr(ev->stream->exe, '/');

		snprintf(l->host, sizeof(l->host), "%.63s", ev->stream->host);
		snprintf(l->exe, sizeof(l->exe), "%.123s", slash ? slash + 1 : ev->stream->exe);
	}
	t.r.start = ev->start;
	t.r.end = ev->end < ev->start ? ev->start : ev->end;
	memcpy(t.r.arg, ev->ev->arg, sizeof(t.r.arg));
	t.r.type = ev->ev->type;
	t.r.flags = ev->ev->flags;
	t.r.path = ev->path ? intern(b, ev->path) : 0;
	t.r.pos = pos;
	if (t.r.type != PROTO_EV_MEM_SAMPLE)
		l->tmask[t.r.type / 64] |= 1ULL << (t.r.type % 64);
	if (fwrite(&t, sizeof(t), 1, b->tmp) != 1)
		return PROTO_E_IO;
	b->nrec++;
	if (t.r.start < b->tmin)
		b->tmin = t.r.start;
	if (t.r.end > b->tmax)
		b->tmax = t.r.end;
	return 0;
}

static int cmp_lane(const void *a, const void *b)
{
	const struct tl_lane *x = a, *y = b;
	int64_t rx = x->rank < 0 ? INT32_MAX : x->rank, ry = y->rank < 0 ? INT32_MAX : y->rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct tl_rec *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start ? 1 :
	       x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The kind of call the page colours: 0 MPI point to point, 1 MPI
 * collective, 2 MPI completion (wait, test), 3 other MPI (set-up,
 * communicators, one-sided), 4 I/O and libc (MPI-IO included), 5
 * computation, 6 process and other. */
static int category(unsigned type)
{
	const struct proto_ev_info *in = proto_ev_info(type);

	if (type == PROTO_EV_COMPUTE)
		return 5;
	if (!in)
		return 6;
	if (in->category == PROTO_CAT_LIBC)
		return 4;
	if (in->category != PROTO_CAT_MPI)
		return 6;
	if (proto_ev_mpiio(type) != PROTO_IO_NOT)
		return 4;
	if (proto_ev_collective(type) || proto_ev_coll2(type))
		return 1;
	switch (type) {
	case PROTO_EV_MPI_WAIT: case PROTO_EV_MPI_WAITALL: case PROTO_EV_MPI_WAITANY:
	case PROTO_EV_MPI_WAITSOME: case PROTO_EV_MPI_TEST: case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTANY: case PROTO_EV_MPI_TESTSOME:
	case PROTO_EV_MPI_REQUEST_GET_STATUS:
		return 2;
	case PROTO_EV_MPI_SEND: case PROTO_EV_MPI_RECV: case PROTO_EV_MPI_ISEND:
	case PROTO_EV_MPI_IRECV: case PROTO_EV_MPI_SENDRECV: case PROTO_EV_MPI_PROBE:
	case PROTO_EV_MPI_IPROBE: case PROTO_EV_MPI_BSEND: case PROTO_EV_MPI_SSEND:
	case PROTO_EV_MPI_RSEND: case PROTO_EV_MPI_IBSEND: case PROTO_EV_MPI_ISSEND:
	case PROTO_EV_MPI_IRSEND: case PROTO_EV_MPI_SENDRECV_REPLACE:
	case PROTO_EV_MPI_SEND_INIT: case PROTO_EV_MPI_BSEND_INIT:
	case PROTO_EV_MPI_SSEND_INIT: case PROTO_EV_MPI_RSEND_INIT:
	case PROTO_EV_MPI_RECV_INIT: case PROTO_EV_MPI_START: case PROTO_EV_MPI_STARTALL:
	case PROTO_EV_MPI_MPROBE: case PROTO_EV_MPI_IMPROBE: case PROTO_EV_MPI_MRECV:
	case PROTO_EV_MPI_IMRECV: case PROTO_EV_MPI_ISENDRECV:
	case PROTO_EV_MPI_ISENDRECV_REPLACE:
		return 0;
	}
	return 3;
}

/* Level-of-detail buckets of one lane over [tmin, tmax]. */
static void lane_lod(const struct tl_lane *l, const struct tl_rec *rec,
		     struct tl_bucket *bk, int64_t tmin, int64_t tmax)
{
	double bw = (double)(tmax - tmin + 1) / l->b0;

	for (uint64_t i = 0; i < l->count; i++) {
		const struct tl_rec *r = &rec[l->first + i];
		uint64_t j0 = (uint64_t)((double)(r->start - tmin) / bw);

		if (j0 >= l->b0)
			j0 = l->b0 - 1;
		bk[j0].count++;
		if (r->type == PROTO_EV_MEM_SAMPLE) {
			if ((float)r->arg[0] > bk[j0].mem)
				bk[j0].mem = (float)r->arg[0];
			continue;
		}
		int c = category(r->type);

		for (uint64_t j = j0; j < l->b0; j++) {
			double bs = tmin + j * bw, be = bs + bw;
			double s = r->start > bs ? (double)r->start : bs;
			double e = (double)r->end < be ? (double)r->end : be;

			if (e > s)
				bk[j].busy[c] += (float)(e - s);
			if ((double)r->end <= be)
				break;
		}
	}
	/* level k + 1 from level k: four buckets into one */
	struct tl_bucket *lo = bk;
	for (uint32_t k = 1, n = l->b0; k < l->levels; k++, n /= 4) {
		struct tl_bucket *hi = lo + n;

		for (uint32_t j = 0; j < n / 4; j++) {
			memset(&hi[j], 0, sizeof(hi[j]));
			for (int q = 0; q < 4; q++) {
				const struct tl_bucket *x = &lo[4 * j + (uint32_t)q];

				for (int c = 0; c < TL_NCAT; c++)
					hi[j].busy[c] += x->busy[c];
				hi[j].count += x->count;
				if (x->mem > hi[j].mem)
					hi[j].mem = x->mem;
			}
		}
		lo = hi;
	}
}

static void on_match(void *arg, uint64_t send_pos, uint64_t recv_pos)
{
	struct builder *b = arg;

	if (b->failed || send_pos >= b->npos || recv_pos >= b->npos ||
	    b->posmap[send_pos] == UINT32_MAX || b->posmap[recv_pos] == UINT32_MAX)
		return;
	if (mgr_big_grow((void **)&b->msg, &b->capmsg, b->nmsg + 1, sizeof(*b->msg))) {
		b->failed = 1;
		return;
	}
	b->msg[b->nmsg].send = b->posmap[send_pos];
	b->msg[b->nmsg++].recv = b->posmap[recv_pos];
}

static const struct tl_rec *g_sort_rec;	/* qsort has no argument: one build at a time */

static int cmp_msg_send(const void *a, const void *b)
{
	int64_t x = g_sort_rec[((const struct tl_msg *)a)->send].start;
	int64_t y = g_sort_rec[((const struct tl_msg *)b)->send].start;

	return x < y ? -1 : x > y;
}

static int cmp_msg_recv(const void *a, const void *b)
{
	int64_t x = g_sort_rec[((const struct tl_msg *)a)->recv].start;
	int64_t y = g_sort_rec[((const struct tl_msg *)b)->recv].start;

	return x < y ? -1 : x > y;
}

/* Sort the records of a lane (the corrections may reorder a few) through a
 * big array: its scratch stays within the post-processing's heap budget
 * (qsort's would be anonymous memory as large as the lane). */
static int sort_lane(struct tl_rec *r, uint64_t n)
{
	struct tl_rec *t = NULL;
	int rc;

	if (n > SIZE_MAX / sizeof(*r))
		return PROTO_E_TOOBIG;
	if ((rc = mgr_big_resize((void **)&t, n * sizeof(*r))))
		return rc;
	memcpy(t, r, n * sizeof(*r));
	mgr_big_sort(t, n, sizeof(*r), cmp_rec);
	memcpy(r, t, n * sizeof(*r));
	mgr_big_free(t);
	return 0;
}

/* Pass 2: records into their lanes' places in the mapped output, lanes
 * sorted by time, posmap pointing at the final places. */
static int place(struct builder *b, FILE *tmp, uint32_t *perm, uint64_t nrec)
{
	uint64_t *cursor = calloc(b->nlanes, sizeof(uint64_t));
	struct tmp_rec t;
	int rc;

	if (!cursor)
		return PROTO_E_NOMEM;
	rewind(tmp);
	for (uint64_t i = 0; i < nrec; i++) {
		if (fread(&t, sizeof(t), 1, tmp) != 1) {
			free(cursor);
			return PROTO_E_IO;
		}
		uint32_t ln = perm[t.lane];
		uint64_t at = b->lanes[ln].first + cursor[ln]++;

		b->rec[at] = t.r;
	}
	free(cursor);
	for (size_t ln = 0; ln < b->nlanes; ln++) {
		struct tl_lane *l = &b->lanes[ln];
		struct tl_rec *r = b->rec + l->first;
		int sorted = 1;

		for (uint64_t i = 1; i < l->count && sorted; i++)
			sorted = cmp_rec(&r[i - 1], &r[i]) <= 0;
		if (!sorted && (rc = sort_lane(r, l->count)))
			return rc;
		for (uint64_t i = 0; i < l->count; i++)
			b->posmap[r[i].pos] = (uint32_t)(l->first + i);
	}
	return 0;
}

/* Lanes sorted for display; perm[old] = new. Offsets and LOD sizes set. */
static int order_lanes(struct builder *b, uint32_t **perm, uint64_t *nbuckets)
{
	for (size_t i = 0; i < b->nlanes; i++)
		b->lanes[i].first = i;	/* the old number, for perm */
	qsort(b->lanes, b->nlanes, sizeof(*b->lanes), cmp_lane);
	if (!(*perm = malloc((b->nlanes + 1) * sizeof(uint32_t))))
		return PROTO_E_NOMEM;
	uint64_t first = 0, lod = 0;

	for (size_t i = 0; i < b->nlanes; i++) {
		struct tl_lane *l = &b->lanes[i];
		uint32_t b0 = 1, levels = 1;

		(*perm)[l->first] = (uint32_t)i;
		l->first = first;
		first += l->count;
		while (b0 < TL_B0_MAX && b0 < l->count / 8) {
			b0 *= 4;
			levels++;
		}
		l->b0 = b0;
		l->levels = levels;
		l->lod = lod;
		l->sparse = b->nsparse;
		b->nsparse += (l->count + TL_SPARSE - 1) / TL_SPARSE;
		for (uint32_t n = b0; n; n /= 4)
			lod += n;
		l->ntypes = 0;
		for (int k = 0; k < TL_TMASK; k++)
			l->ntypes += (uint32_t)__builtin_popcountll(l->tmask[k]);
		l->types = b->ntypes;
		b->ntypes += l->ntypes;
		l->cum = b->ncum;
		b->ncum += ((l->count + TL_SPARSE - 1) / TL_SPARSE + 1) * (l->ntypes + 1);
	}
	*nbuckets = lod;
	return 0;
}

/* The types of lane l (by number) and its running totals (struct tl_cum). */
static void lane_totals(const struct tl_lane *l, const struct tl_rec *rec, uint16_t *types,
			struct tl_cum *cum)
{
	uint16_t col[PROTO_EV__COUNT];	/* type -> cell, 0: none */
	uint32_t n = 0, w = l->ntypes + 1;
	struct tl_cum *row = cum;

	for (unsigned t = 0; t < PROTO_EV__COUNT; t++) {
		col[t] = 0;
		if (l->tmask[t / 64] >> (t % 64) & 1) {
			types[n++] = (uint16_t)t;
			col[t] = (uint16_t)n;
		}
	}
	memset(row, 0, w * sizeof(*row));
	row[0].a = row[0].b = INT64_MIN;
	for (uint64_t i = 0; i < l->count; i++) {
		const struct tl_rec *r = &rec[l->first + i];

		if (i % TL_SPARSE == 0) {
			memcpy(row + w, row, w * sizeof(*row));
			row += w;
			row[0].b = INT64_MIN;
		}
		if (r->type == PROTO_EV_MEM_SAMPLE || r->type >= PROTO_EV__COUNT)
			continue;
		if (r->end > row[0].a)
			row[0].a = r->end;
		if (r->end > row[0].b)
			row[0].b = r->end;
		row[col[r->type]].a++;
		row[col[r->type]].b += r->end - r->start;
	}
}

static int write_index(struct builder *b, struct mgr_events *me, FILE *tmp,
		       const char *out, uint64_t nrec, int64_t tmin, int64_t tmax)
{
	uint32_t *perm = NULL;
	uint64_t nb = 0;
	int rc = order_lanes(b, &perm, &nb), fd = -1;
	struct tl_head h = {TL_MAGIC, b->nlanes, nrec, 0, b->strlen, tmin, tmax, 0, 0, 0,
			    0, 0, 0, 0, 0, 0, 0, 0, 0};
	char tmpname[4400];
	uint8_t *map = MAP_FAILED;
	const char *base;
	int pfd = -1;

	if (rc)
		goto out;
	/* messages are known once records have their places: counted first */
	h.off_lanes = sizeof(h);
	h.off_rec = h.off_lanes + b->nlanes * sizeof(struct tl_lane);
	h.off_lod = h.off_rec + nrec * sizeof(struct tl_rec);
	h.off_sparse = h.off_lod + nb * sizeof(struct tl_bucket);
	h.nsparse = b->nsparse;
	h.off_types = h.off_sparse + b->nsparse * sizeof(int64_t);
	h.ntypes = b->ntypes;
	h.off_cum = h.off_types + (b->ntypes * sizeof(uint16_t) + 7) / 8 * 8;
	h.ncum = b->ncum;
	uint64_t msg_at = h.off_cum + b->ncum * sizeof(struct tl_cum);
	size_t cap = (size_t)msg_at;

	rc = PROTO_E_IO;
	/* OUT.tmp made anew (O_EXCL) in OUT's directory, reached without
	 * following a link: a link planted there is refused */
	if ((pfd = mgr_parent_dir(out, 1, &base)) < 0) {
		fprintf(stderr, "tapestry: cannot open the directory of %s: %s\n", out,
			errno == ELOOP || errno == ENOTDIR ? "a symbolic link on its way: refused" :
			strerror(errno));
		goto out;
	}
	snprintf(tmpname, sizeof(tmpname), "%s.tmp", base);
	if ((fd = mgr_create_excl(pfd, tmpname, O_RDWR, 0600)) < 0) {
		fprintf(stderr, "tapestry: cannot create %s.tmp: %s\n", out, errno == ELOOP ?
			"it is a symbolic link: refused" : strerror(errno));
		tmpname[0] = '\0';
		goto out;
	}
	if (ftruncate(fd, (off_t)cap) < 0 ||
	    (map = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
		goto out;
	b->rec = (struct tl_rec *)(map + h.off_rec);
	if ((rc = place(b, tmp, perm, nrec)))
		goto out;
	for (size_t i = 0; i < b->nlanes; i++)
		lane_lod(&b->lanes[i], b->rec,
			 (struct tl_bucket *)(map + h.off_lod) + b->lanes[i].lod, tmin, tmax);
	memcpy(map + h.off_lanes, b->lanes, b->nlanes * sizeof(struct tl_lane));
	/* every TL_SPARSE-th start: a search touches two pages of records, not
	 * twenty spread over the file */
	for (size_t i = 0; i < b->nlanes; i++)
		for (uint64_t k = 0; k * TL_SPARSE < b->lanes[i].count; k++)
			((int64_t *)(map + h.off_sparse))[b->lanes[i].sparse + k] =
				b->rec[b->lanes[i].first + k * TL_SPARSE].start;
	for (size_t i = 0; i < b->nlanes; i++)
		lane_totals(&b->lanes[i], b->rec, (uint16_t *)(map + h.off_types) + b->lanes[i].types,
			    (struct tl_cum *)(map + h.off_cum) + b->lanes[i].cum);
	const struct mgr_causality *clc = mgr_events_causality(me);

	if (clc)
		mgr_causality_foreach(clc, on_match, b);
	rc = PROTO_E_NOMEM;
	if (b->failed)
		goto out;
	h.nmsg = b->nmsg;
	h.off_msend = msg_at;
	h.off_mrecv = msg_at + b->nmsg * sizeof(struct tl_msg);
	h.off_str = h.off_mrecv + b->nmsg * sizeof(struct tl_msg);
	h.size = h.off_str + b->strlen;
	g_sort_rec = b->rec;
	rc = PROTO_E_IO;
	mgr_big_sort(b->msg, b->nmsg, sizeof(*b->msg), cmp_msg_send);
	if (pwrite(fd, b->msg, b->nmsg * sizeof(*b->msg), (off_t)h.off_msend) !=
	    (ssize_t)(b->nmsg * sizeof(*b->msg)))
		goto out;
	mgr_big_sort(b->msg, b->nmsg, sizeof(*b->msg), cmp_msg_recv);
	if (pwrite(fd, b->msg, b->nmsg * sizeof(*b->msg), (off_t)h.off_mrecv) !=
	    (ssize_t)(b->nmsg * sizeof(*b->msg)) ||
	    pwrite(fd, b->str, b->strlen, (off_t)h.off_str) != (ssize_t)b->strlen)
		goto out;
	memcpy(map, &h, sizeof(h));
	if (renameat(pfd, tmpname, pfd, base) < 0)
		goto out;
	/* the server maps the page cache: it answers from the index at once,
	 * and the disk catches up after (a sync first made a 10^7-event job's
	 * timeline wait for 1 GB to reach the disk). The child exits once it
	 * is there; a machine crash meanwhile may tear the cache, which
	 * manager-serve.md says how to drop. */
	fdatasync(fd);
	rc = 0;
out:
	if (map != MAP_FAILED)
		munmap(map, cap);
	if (fd >= 0)
		close(fd);
	if (rc && pfd >= 0 && tmpname[0])
		unlinkat(pfd, tmpname, 0);
	if (pfd >= 0)
		close(pfd);
	free(perm);
	return rc;
}

struct srv_tl_builder *srv_tl_begin(const char *out, char *why, size_t whylen)
{
	struct builder *b = calloc(1, sizeof(*b));
	const char *base;
	int pfd, fd = -1;

	if (!b || !(b->lanes = malloc(TL_LANES_MAX * sizeof(*b->lanes))) ||
	    !(b->slot = calloc(TL_LANES_MAX * 2, sizeof(uint32_t))) ||
	    !(b->sslot = calloc(TL_STR_SLOTS, sizeof(uint32_t)))) {
		snprintf(why, whylen, "out of memory");
		srv_tl_free((struct srv_tl_builder *)b);
		return NULL;
	}
	/* the records, in a file without a name in OUT's directory (reached
	 * without following a link): gone with the process, whatever happens */
	if ((pfd = mgr_parent_dir(out, 1, &base)) >= 0)
		fd = openat(pfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 || !(b->tmp = fdopen(fd, "w+"))) {
		snprintf(why, whylen, "cannot write beside %s: %s", out,
			 pfd < 0 && (errno == ELOOP || errno == ENOTDIR) ?
			 "a symbolic link on its way: refused" : strerror(errno));
		if (fd >= 0)
			close(fd);
		if (pfd >= 0)
			close(pfd);
		srv_tl_free((struct srv_tl_builder *)b);
		return NULL;
	}
	close(pfd);
	b->tmin = INT64_MAX;
	b->tmax = INT64_MIN;
	return (struct srv_tl_builder *)b;
}

int srv_tl_add(void *arg, const struct mgr_event *ev)
{
	struct builder *b = arg;

	if (!ev)
		b->ended = 1;
	else if (!b->rc)
		b->rc = add_event(b, ev);
	return b->rc;
}

int srv_tl_finish(struct srv_tl_builder *tb, struct mgr_events *me, const char *dir,
		  const char *out)
{
	struct builder *b = (struct builder *)tb;
	int rc = b->rc ? b->rc : b->ended ? 0 : PROTO_E_IO;

	if (!rc) {
		if (!b->nrec)
			b->tmin = b->tmax = 0;
		rc = write_index(b, me, b->tmp, out, b->nrec, b->tmin, b->tmax);
	}
	if (rc)
		fprintf(stderr, "tapestry: indexing %s: %s\n", dir, proto_strerror(rc));
	srv_tl_free(tb);
	return rc ? -1 : 0;
}

void srv_tl_free(struct srv_tl_builder *tb)
{
	struct builder *b = (struct builder *)tb;

	if (!b)
		return;
	void *heap[] = {b->lanes, b->slot, b->sslot, b->str, b};

	if (b->tmp)
		fclose(b->tmp);
	mgr_big_free(b->posmap);
	mgr_big_free(b->msg);
	for (size_t i = 0; i < sizeof(heap) / sizeof(heap[0]); i++)
		free(heap[i]);
}

int srv_tl_build_events(struct mgr_events *me, const char *dir, const char *out)
{
	char why[4500];
	struct srv_tl_builder *b = srv_tl_begin(out, why, sizeof(why));
	struct mgr_event ev;
	int rc;

	if (!b) {
		fprintf(stderr, "tapestry: indexing %s: %s\n", dir, why);
		return -1;
	}
	while ((rc = mgr_events_next(me, &ev)) == 1 && !srv_tl_add(b, &ev))
		;
	if (rc == 0)
		srv_tl_add(b, NULL);
	else if (rc < 0)
		((struct builder *)b)->rc = rc;
	return srv_tl_finish(b, me, dir, out);
}

int srv_tl_build(const char *dir, const char *out)
{
	int rc;
	struct mgr_events *me = mgr_events_open(dir, &rc);

	if (!me) {
		fprintf(stderr, "tapestry: indexing %s: %s\n", dir, proto_strerror(rc));
		return -1;
	}
	rc = srv_tl_build_events(me, dir, out);
	mgr_events_close(me);
	return rc;
}

/* ---- querying --------------------------------------------------------------------- */

struct tl_map {
	uint8_t *p;
	size_t size;
	const struct tl_head *h;
	const struct tl_lane *lanes;
	const struct tl_rec *rec;
	const struct tl_bucket *lod;
	const struct tl_msg *msend, *mrecv;
	const char *str;
	const int64_t *sparse;
	const uint16_t *types;
	const struct tl_cum *cum;
};

static int tl_open(const char *path, struct tl_map *m, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	memset(m, 0, sizeof(*m));
	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct tl_head)) {
		if (fd >= 0)
			close(fd);
		snprintf(why, whylen, "cannot read the timeline index %s", path);
		return -1;
	}
	m->size = (size_t)st.st_size;
	m->p = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m->p == MAP_FAILED) {
		snprintf(why, whylen, "cannot map %s: %s", path, strerror(errno));
		return -1;
	}
	/* a request reads a few pages here and there: no read-ahead */
	madvise(m->p, m->size, MADV_RANDOM);
	m->h = (const struct tl_head *)m->p;
	const struct tl_head *h = m->h;
	uint64_t nb = 0;

	if (memcmp(h->magic, TL_MAGIC, 8) || h->size != m->size ||
	    h->off_lanes != sizeof(*h) || h->nlanes > TL_LANES_MAX ||
	    h->off_rec != h->off_lanes + h->nlanes * sizeof(struct tl_lane) ||
	    h->nrec > UINT32_MAX || h->off_lod != h->off_rec + h->nrec * sizeof(struct tl_rec) ||
	    h->off_msend < h->off_lod || h->nmsg > UINT32_MAX || h->off_sparse < h->off_lod ||
	    h->off_mrecv != h->off_msend + h->nmsg * sizeof(struct tl_msg) ||
	    h->off_str != h->off_mrecv + h->nmsg * sizeof(struct tl_msg) ||
	    h->off_str + h->strlen != h->size ||
	    (h->strlen && m->p[h->size - 1] != '\0'))
		goto bad;
	m->lanes = (const struct tl_lane *)(m->p + h->off_lanes);
	m->rec = (const struct tl_rec *)(m->p + h->off_rec);
	m->lod = (const struct tl_bucket *)(m->p + h->off_lod);
	m->msend = (const struct tl_msg *)(m->p + h->off_msend);
	m->mrecv = (const struct tl_msg *)(m->p + h->off_mrecv);
	m->str = (const char *)(m->p + h->off_str);
	uint64_t nt = 0, nc = 0;

	for (uint64_t i = 0, first = 0, sp = 0; i < h->nlanes; i++) {
		const struct tl_lane *l = &m->lanes[i];
		uint64_t n = 0;

		for (uint32_t k = 0, w = l->b0; k < l->levels; k++, w /= 4)
			n += w;
		if (l->first != first || l->lod != nb || l->b0 > TL_B0_MAX || !l->b0 ||
		    l->levels > 12 || l->sparse != sp || l->types != nt || l->cum != nc ||
		    l->ntypes > PROTO_EV__COUNT || l->count > h->nrec)
			goto bad;
		sp += (l->count + TL_SPARSE - 1) / TL_SPARSE;
		nt += l->ntypes;
		nc += ((l->count + TL_SPARSE - 1) / TL_SPARSE + 1) * (l->ntypes + 1);
		first += l->count;
		nb += n;
		if (first > h->nrec || nt > h->ntypes || nc > h->ncum)
			goto bad;
	}
	if (h->off_sparse != h->off_lod + nb * sizeof(struct tl_bucket) ||
	    h->nsparse > h->nrec ||
	    nt != h->ntypes || nc != h->ncum ||
	    h->off_types != h->off_sparse + h->nsparse * sizeof(int64_t) ||
	    h->off_cum != h->off_types + (h->ntypes * sizeof(uint16_t) + 7) / 8 * 8 ||
	    h->ncum > h->size / sizeof(struct tl_cum) ||
	    h->off_cum + h->ncum * sizeof(struct tl_cum) != h->off_msend)
		goto bad;
	m->sparse = (const int64_t *)(m->p + h->off_sparse);
	m->types = (const uint16_t *)(m->p + h->off_types);
	m->cum = (const struct tl_cum *)(m->p + h->off_cum);
	for (uint64_t i = 0; i < h->ntypes; i++)
		if (m->types[i] >= PROTO_EV__COUNT)
			goto bad;
	return 0;
bad:
	munmap(m->p, m->size);
	snprintf(why, whylen, "the timeline index %s is damaged or of another version", path);
	return -3;
}

static void tl_close(struct tl_map *m)
{
	munmap(m->p, m->size);
}

/* First record of lane l starting at or after t: the sparse index gives the
 * block, then a search within it. */
static uint64_t lower(const struct tl_map *m, const struct tl_lane *l, int64_t t)
{
	const int64_t *sp = m->sparse + l->sparse;
	uint64_t lo = 0, hi = (l->count + TL_SPARSE - 1) / TL_SPARSE;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sp[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	hi = lo * TL_SPARSE < l->count ? lo * TL_SPARSE : l->count;
	lo = lo ? (lo - 1) * TL_SPARSE + 1 : 0;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (m->rec[l->first + mid].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void lane_head(struct evbuffer *b, const struct tl_lane *l, size_t i)
{
	evbuffer_add_printf(b, "%s{\"lane\":%zu,\"stream\":\"%016" PRIx64 "\",\"rank\":%d,"
			    "\"pid\":%" PRId64 ",\"tid\":%u,\"count\":%" PRIu64 ",\"host\":",
			    i ? "," : "", i, l->stream, l->rank, l->pid, l->tid, l->count);
	srv_json_str(b, l->host);
	evbuffer_add_printf(b, ",\"exe\":");
	srv_json_str(b, l->exe);
}

static void raw_events(struct evbuffer *b, const struct tl_map *m, uint64_t from,
		       uint64_t to, uint64_t *seen)
{
	int n = 0;

	evbuffer_add_printf(b, ",\"mode\":\"events\",\"ev\":[");
	for (uint64_t i = from; i < to; i++) {
		const struct tl_rec *r = &m->rec[i];

		if (r->type == PROTO_EV_MEM_SAMPLE)
			continue;
		if (r->type < PROTO_EV__COUNT)
			seen[r->type / 64] |= 1ULL << (r->type % 64);
		evbuffer_add_printf(b, "%s[%" PRIu64 ",%" PRId64 ",%" PRId64 ",%u,%d]",
				    n++ ? "," : "", i, r->start, r->end, r->type,
				    category(r->type));
	}
	evbuffer_add_printf(b, "],\"mem\":[");
	n = 0;
	for (uint64_t i = from; i < to; i++)
		if (m->rec[i].type == PROTO_EV_MEM_SAMPLE)
			evbuffer_add_printf(b, "%s[%" PRId64 ",%" PRId64 "]", n++ ? "," : "",
					    m->rec[i].start, m->rec[i].arg[0]);
	evbuffer_add(b, "]", 1);
}

struct pixels {
	double busy[TL_W_MAX][TL_NCAT];
	double mem[TL_W_MAX];
	uint32_t count[TL_W_MAX];
	char text[TL_W_MAX * (TL_NCAT + 1) * 21];	/* a lane's numbers, written */
};

/* v in decimal and a comma at t; the end. One evbuffer_add per lane:
 * a printf per number was most of a whole-job answer's time. */
static char *put_u64(char *t, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*t++ = d[--n];
	*t++ = ',';
	return t;
}

/* the numbers from text to t, less the last comma, as "KEY[...]" */
static void put_array(struct evbuffer *b, const char *key, const char *text, const char *t)
{
	evbuffer_add_printf(b, "%s[", key);
	evbuffer_add(b, text, (size_t)(t - text) - (t > text));
	evbuffer_add(b, "]", 1);
}

/* Spread busy ns of category c over [s, e] into the pixels. */
static void spread(struct pixels *px, int w, double t0, double pw, double s, double e,
		   int c, double busy)
{
	double len = e - s;
	long p0 = (long)((s - t0) / pw), p1 = (long)((e - t0) / pw);

	if (p1 < 0 || p0 >= w)
		return;
	for (long p = p0 < 0 ? 0 : p0; p <= p1 && p < w; p++) {
		double ps = t0 + p * pw, pe = ps + pw;
		double a = s > ps ? s : ps, z = e < pe ? e : pe;

		if (len <= 0)
			px->busy[p][c] += busy;
		else if (z > a)
			px->busy[p][c] += busy * (z - a) / len;
	}
}

static void put_pixel(struct pixels *px, int w, double t0, double pw, double t,
		      uint32_t count, float mem)
{
	long p = (long)((t - t0) / pw);

	if (p < 0 || p >= w)
		return;
	px->count[p] += count;
	if ((double)mem > px->mem[p])
		px->mem[p] = (double)mem;
}

static void pixel_lane(struct evbuffer *b, const struct tl_map *m, const struct tl_lane *l,
		       struct pixels *px, int64_t t0, int64_t t1, int w, uint64_t from,
		       uint64_t to)
{
	double pw = (double)(t1 - t0) / w, span = (double)(m->h->tmax - m->h->tmin + 1);
	double bw = span / l->b0;
	int k = -1;

	memset(px, 0, offsetof(struct pixels, text));	/* not text: written before read */
	for (uint32_t lv = 0; lv < l->levels && bw * (double)(1u << (2 * lv)) <= pw; lv++)
		k = (int)lv;
	if (k < 0) {
		for (uint64_t i = from; i < to; i++) {
			const struct tl_rec *r = &m->rec[i];

			put_pixel(px, w, (double)t0, pw, (double)r->start, 1,
				  r->type == PROTO_EV_MEM_SAMPLE ? (float)r->arg[0] : 0);
			if (r->type != PROTO_EV_MEM_SAMPLE)
				spread(px, w, (double)t0, pw, (double)r->start, (double)r->end,
				       category(r->type), (double)(r->end - r->start));
		}
	} else {
		const struct tl_bucket *bk = m->lod + l->lod;
		uint32_t n = l->b0;

		for (int lv = 0; lv < k; lv++) {
			bk += n;
			n /= 4;
		}
		double kw = span / n, tmin = (double)m->h->tmin;
		long j0 = (long)(((double)t0 - tmin) / kw), j1 = (long)(((double)t1 - tmin) / kw);

		for (long j = j0 < 0 ? 0 : j0; j <= j1 && j < (long)n; j++) {
			double bs = tmin + (double)j * kw;

			put_pixel(px, w, (double)t0, pw, bs, bk[j].count, bk[j].mem);
			for (int c = 0; c < TL_NCAT; c++)
				if (bk[j].busy[c] > 0)
					spread(px, w, (double)t0, pw, bs, bs + kw, c, bk[j].busy[c]);
		}
	}
	char *t = px->text;

	for (int p = 0; p < w; p++)
		for (int c = 0; c < TL_NCAT; c++) {
			double f = px->busy[p][c] / pw;

			t = put_u64(t, (uint64_t)(1000 * (f > 1 ? 1 : f) + 0.5));
		}
	put_array(b, ",\"mode\":\"pixels\",\"px\":", px->text, t);
	t = px->text;
	for (int p = 0; p < w; p++)
		t = put_u64(t, px->count[p]);
	put_array(b, ",\"pc\":", px->text, t);
	t = px->text;
	for (int p = 0; p < w; p++)
		t = put_u64(t, px->mem[p] > 0 ? (uint64_t)(px->mem[p] + 0.5) : 0);
	put_array(b, ",\"pm\":", px->text, t);
}

/* ,"names":{"TYPE":"NAME",...} for the types in seen */
static void type_names(struct evbuffer *b, const uint64_t *seen)
{
	int n = 0;

	evbuffer_add_printf(b, ",\"names\":{");
	for (unsigned t = 0; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *in = proto_ev_info(t);

		if (!(seen[t / 64] >> (t % 64) & 1) || !in)
			continue;
		evbuffer_add_printf(b, "%s\"%u\":", n++ ? "," : "", t);
		srv_json_str(b, in->name);
	}
	evbuffer_add(b, "}", 1);
}

static size_t lane_at(const struct tl_map *m, uint64_t i)
{
	size_t lo = 0, hi = m->h->nlanes;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (m->lanes[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t msg_lower(const struct tl_map *m, const struct tl_msg *arr, int recv,
			  int64_t t)
{
	uint64_t lo = 0, hi = m->h->nmsg;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (m->rec[recv ? arr[mid].recv : arr[mid].send].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void messages(struct evbuffer *b, const struct tl_map *m, int64_t t0, int64_t t1)
{
	int n = 0, truncated = 0;

	evbuffer_add_printf(b, ",\"msgs\":[");
	for (int pass = 0; pass < 2 && !truncated; pass++) {
		const struct tl_msg *arr = pass ? m->mrecv : m->msend;

		for (uint64_t i = msg_lower(m, arr, pass, t0); i < m->h->nmsg; i++) {
			const struct tl_rec *s = &m->rec[arr[i].send], *r = &m->rec[arr[i].recv];

			if ((pass ? r : s)->start > t1)
				break;
			if (pass && s->start >= t0 && s->start <= t1)
				continue;	/* given by the first pass */
			if (n == TL_MSGS_MAX) {
				truncated = 1;
				break;
			}
			evbuffer_add_printf(b, "%s[%zu,%" PRId64 ",%" PRId64 ",%zu,%" PRId64 ",%"
					    PRId64 "]", n++ ? "," : "", lane_at(m, arr[i].send),
					    s->start, s->end, lane_at(m, arr[i].recv), r->start,
					    r->end);
		}
	}
	evbuffer_add_printf(b, "],\"msgs_truncated\":%s", truncated ? "true" : "false");
}

int srv_tl_query(const char *path, int64_t t0, int64_t t1, int w,
		 struct evbuffer *b, char *why, size_t whylen)
{
	struct tl_map m;
	struct pixels *px;
	int all_raw = 1;
	uint64_t seen[TL_TMASK] = {0};

	if (w < 1 || w > TL_W_MAX) {
		snprintf(why, whylen, "w must be 1 to %d pixels", TL_W_MAX);
		return -2;
	}
	int rc = tl_open(path, &m, why, whylen);

	if (rc)
		return rc;
	if (t0 < m.h->tmin)
		t0 = m.h->tmin;
	if (t1 > m.h->tmax)
		t1 = m.h->tmax;
	if (t1 <= t0)
		t1 = t0 + 1;
	if (!(px = malloc(sizeof(*px)))) {
		tl_close(&m);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	evbuffer_add_printf(b, "{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"w\":%d,\"tmin\":%"
			    PRId64 ",\"tmax\":%" PRId64 ",\"events\":%" PRIu64 ",\"messages\":%"
			    PRIu64 ",\"lanes\":[", t0, t1, w, m.h->tmin, m.h->tmax, m.h->nrec,
			    m.h->nmsg);
	for (size_t i = 0; i < m.h->nlanes; i++) {
		const struct tl_lane *l = &m.lanes[i];
		uint64_t from = lower(&m, l, t0), to = lower(&m, l, t1 + 1);

		if (from > 0 && m.rec[l->first + from - 1].end > t0)
			from--;	/* the event under t0 */
		lane_head(b, l, i);
		if (to - from <= (uint64_t)(2 * w)) {
			raw_events(b, &m, l->first + from, l->first + to, seen);
		} else {
			all_raw = 0;
			pixel_lane(b, &m, l, px, t0, t1, w, l->first + from, l->first + to);
		}
		evbuffer_add(b, "}", 1);
	}
	evbuffer_add(b, "]", 1);
	if (all_raw)
		messages(b, &m, t0, t1);
	type_names(b, seen);
	evbuffer_add(b, "}\n", 2);
	free(px);
	tl_close(&m);
	return 0;
}

int srv_tl_event(const char *path, uint64_t i, struct evbuffer *b, char *why,
		 size_t whylen)
{
	struct tl_map m;
	int rc = tl_open(path, &m, why, whylen);

	if (rc)
		return rc;
	if (i >= m.h->nrec) {
		snprintf(why, whylen, "no event %" PRIu64 " (the index has %" PRIu64 ")",
			 i, m.h->nrec);
		tl_close(&m);
		return -2;
	}
	const struct tl_rec *r = &m.rec[i];
	const struct proto_ev_info *in = proto_ev_info(r->type);
	size_t ln = lane_at(&m, i);

	evbuffer_add_printf(b, "{\"i\":%" PRIu64 ",\"lane\":%zu,\"rank\":%d,\"pid\":%" PRId64
			    ",\"tid\":%u,\"name\":", i, ln, m.lanes[ln].rank, m.lanes[ln].pid,
			    m.lanes[ln].tid);
	srv_json_str(b, in ? in->name : "?");
	evbuffer_add_printf(b, ",\"category\":");
	srv_json_str(b, in ? proto_cat_name(in->category) : NULL);
	evbuffer_add_printf(b, ",\"start\":%" PRId64 ",\"end\":%" PRId64 ",\"failed\":%s,"
			    "\"args\":{", r->start, r->end,
			    r->flags & PROTO_EVF_FAILED ? "true" : "false");
	for (int k = 0, n = 0; in && k < PROTO_EV_NARGS; k++) {
		const char *f = proto_field_name(in->field[k]);

		if (!f || !strcmp(f, "none") || in->field[k] == PROTO_F_path)
			continue;
		evbuffer_add_printf(b, "%s\"%s\":%" PRId64, n++ ? "," : "", f, r->arg[k]);
	}
	evbuffer_add_printf(b, "},\"path\":");
	srv_json_str(b, r->path && r->path <= m.h->strlen ? m.str + r->path - 1 : NULL);
	evbuffer_add(b, "}\n", 2);
	tl_close(&m);
	return 0;
}

/* ---- a window's profile, a search by name -------------------------------------- */

/* The cell of type in lane l's rows, 0: not one of its types. */
static uint32_t cell(const struct tl_map *m, const struct tl_lane *l, unsigned type)
{
	const uint16_t *t = m->types + l->types;
	uint32_t lo = 0, hi = l->ntypes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t[mid] < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->ntypes && t[lo] == type ? lo + 1 : 0;
}

static const struct tl_cum *row_of(const struct tl_map *m, const struct tl_lane *l, uint64_t k)
{
	return m->cum + l->cum + k * (l->ntypes + 1);
}

/* Totals of lane l's records [0, x) into tot (a row's ntypes + 1 cells). */
static void totals_at(const struct tl_map *m, const struct tl_lane *l, uint64_t x,
		      struct tl_cum *tot)
{
	uint64_t k = x / TL_SPARSE;

	memcpy(tot, row_of(m, l, k), (l->ntypes + 1) * sizeof(*tot));
	for (uint64_t i = k * TL_SPARSE; i < x; i++) {
		const struct tl_rec *r = &m->rec[l->first + i];
		uint32_t c = cell(m, l, r->type);

		if (c) {
			tot[c].a++;
			tot[c].b += r->end - r->start;
		}
	}
}

/* The record before i of lane l, going back, that may end after t (a
 * record of [stop, i) ending after t, else stop - 1): the rows' largest
 * ends skip the blocks that hold none, and end the walk where no record
 * before ends after t. */
static uint64_t back_after(const struct tl_map *m, const struct tl_lane *l, uint64_t i,
			   uint64_t stop, int64_t t)
{
	while (i-- > stop) {
		const struct tl_cum *row = row_of(m, l, i / TL_SPARSE + 1);

		if (row->a <= t)
			return stop - 1;	/* none before ends after t */
		if (row->b <= t) {		/* none in this block */
			i = i / TL_SPARSE * TL_SPARSE;
			continue;
		}
		for (;; i--) {
			if (m->rec[l->first + i].end > t)
				return i;
			if (i == stop || i % TL_SPARSE == 0)
				break;
		}
	}
	return stop - 1;
}

/* Calls and busy ns per type of lane l within [t0, t1] into tot: the calls
 * that start in it or are under t0, their time clipped to the window. The
 * records ending past an edge are found through the rows' largest ends
 * (back_after), so only the blocks that hold such a record are read. */
static void lane_range(const struct tl_map *m, const struct tl_lane *l, int64_t t0,
		       int64_t t1, struct tl_cum *tot, struct tl_cum *lo)
{
	uint64_t a = lower(m, l, t0), z = lower(m, l, t1 + 1);

	totals_at(m, l, z, tot);
	totals_at(m, l, a, lo);
	for (uint32_t c = 1; c <= l->ntypes; c++) {
		tot[c].a -= lo[c].a;
		tot[c].b -= lo[c].b;
	}
	/* i + 1 > a: unsigned, stop - 1 wraps when stop is 0 */
	for (uint64_t i = back_after(m, l, z, a, t1); i + 1 > a && i < z;
	     i = back_after(m, l, i, a, t1)) {
		const struct tl_rec *r = &m->rec[l->first + i];
		uint32_t c = cell(m, l, r->type);

		if (c)
			tot[c].b -= r->end - t1;
	}
	for (uint64_t i = back_after(m, l, a, 0, t0); i < a; i = back_after(m, l, i, 0, t0)) {
		const struct tl_rec *r = &m->rec[l->first + i];
		uint32_t c = cell(m, l, r->type);

		if (c) {
			tot[c].a++;
			tot[c].b += (r->end < t1 ? r->end : t1) - t0;
		}
	}
}

int srv_tl_range(const char *path, int64_t t0, int64_t t1, struct evbuffer *b, char *why,
		 size_t whylen)
{
	struct tl_map m;
	struct tl_cum *tot, *lo;
	uint64_t seen[TL_TMASK] = {0};
	int rc = tl_open(path, &m, why, whylen), nl = 0;

	if (rc)
		return rc;
	if (t0 < m.h->tmin)
		t0 = m.h->tmin;
	if (t1 > m.h->tmax)
		t1 = m.h->tmax;
	if (t1 <= t0)
		t1 = t0 + 1;
	tot = malloc(2 * (PROTO_EV__COUNT + 1) * sizeof(*tot));
	if (!tot) {
		tl_close(&m);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	lo = tot + PROTO_EV__COUNT + 1;
	evbuffer_add_printf(b, "{\"t0\":%" PRId64 ",\"t1\":%" PRId64 ",\"lanes\":[", t0, t1);
	for (size_t i = 0; i < m.h->nlanes; i++) {
		const struct tl_lane *l = &m.lanes[i];
		int n = 0;

		lane_range(&m, l, t0, t1, tot, lo);
		for (uint32_t c = 1; c <= l->ntypes; c++) {
			unsigned t = m.types[l->types + c - 1];

			if (!tot[c].a)
				continue;
			if (!n++)
				evbuffer_add_printf(b, "%s{\"lane\":%zu,\"calls\":[", nl++ ? "," : "", i);
			else
				evbuffer_add(b, ",", 1);
			evbuffer_add_printf(b, "[%u,%" PRId64 ",%" PRId64 ",%d]", t, tot[c].a,
					    tot[c].b, category(t));
			seen[t / 64] |= 1ULL << (t % 64);
		}
		if (n)
			evbuffer_add(b, "]}", 2);
	}
	evbuffer_add(b, "]", 1);
	type_names(b, seen);
	evbuffer_add(b, "}\n", 2);
	free(tot);
	tl_close(&m);
	return 0;
}

/* Calls of lane l of the cells in want (n of them) among its records [0, row k). */
static int64_t want_count(const struct tl_map *m, const struct tl_lane *l, uint64_t k,
			  const uint32_t *want, uint32_t n)
{
	const struct tl_cum *row = row_of(m, l, k);
	int64_t sum = 0;

	for (uint32_t j = 0; j < n; j++)
		sum += row[want[j]].a;
	return sum;
}

/* The first record of lane l at or after from whose cell is in want, or
 * l->count: the rest of from's block, then the first row whose count grows
 * (a binary search), then that row's block. */
static uint64_t next_in_lane(const struct tl_map *m, const struct tl_lane *l, uint64_t from,
			     const uint32_t *want, uint32_t n, const uint8_t *is)
{
	uint64_t nblk = (l->count + TL_SPARSE - 1) / TL_SPARSE;

	if (from >= l->count || !n)
		return l->count;
	uint64_t k = from / TL_SPARSE, end = (k + 1) * TL_SPARSE;

	for (uint64_t i = from; i < end && i < l->count; i++)
		if (is[m->rec[l->first + i].type])
			return i;
	int64_t base = want_count(m, l, k + 1, want, n);
	uint64_t lo = k + 2, hi = nblk + 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (want_count(m, l, mid, want, n) > base)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo > nblk)
		return l->count;
	for (uint64_t i = (lo - 1) * TL_SPARSE; i < lo * TL_SPARSE && i < l->count; i++)
		if (is[m->rec[l->first + i].type])
			return i;
	return l->count;	/* not reached in an index that passed tl_open */
}

int srv_tl_find(const char *path, const char *name, int64_t after, int64_t after_i,
		struct evbuffer *b, char *why, size_t whylen)
{
	struct tl_map m;
	uint8_t is[65536] = {0};	/* type -> matches name */
	uint32_t want[PROTO_EV__COUNT];
	uint64_t seen[TL_TMASK] = {0}, best = UINT64_MAX;
	int64_t matches = 0;
	size_t n = strlen(name);

	if (!n || n > 64 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_") != n) {
		snprintf(why, whylen, "a call name is 1 to 64 letters, digits or _");
		return -2;
	}
	for (unsigned t = 0; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *in = proto_ev_info(t);

		is[t] = in && t != PROTO_EV_MEM_SAMPLE && strcasestr(in->name, name);
	}
	int rc = tl_open(path, &m, why, whylen);

	if (rc)
		return rc;
	for (size_t i = 0; i < m.h->nlanes; i++) {
		const struct tl_lane *l = &m.lanes[i];
		uint32_t nw = 0;

		for (uint32_t c = 1; c <= l->ntypes; c++) {
			unsigned t = m.types[l->types + c - 1];

			if (is[t]) {
				want[nw++] = c;
				seen[t / 64] |= 1ULL << (t % 64);
			}
		}
		if (!nw)
			continue;
		matches += want_count(&m, l, (l->count + TL_SPARSE - 1) / TL_SPARSE, want, nw);
		uint64_t j = next_in_lane(&m, l, lower(&m, l, after), want, nw, is);

		/* after the call (after, after_i): the same start, a later number */
		while (j < l->count && m.rec[l->first + j].start == after &&
		       (int64_t)(l->first + j) <= after_i)
			j = next_in_lane(&m, l, j + 1, want, nw, is);
		if (j < l->count && (best == UINT64_MAX ||
				     m.rec[l->first + j].start < m.rec[best].start))
			best = l->first + j;
	}
	evbuffer_add_printf(b, "{\"query\":");
	srv_json_str(b, name);
	evbuffer_add_printf(b, ",\"matches\":%" PRId64, matches);
	type_names(b, seen);
	if (best == UINT64_MAX) {
		evbuffer_add_printf(b, ",\"next\":null}\n");
	} else {
		const struct tl_rec *r = &m.rec[best];

		evbuffer_add_printf(b, ",\"next\":{\"i\":%" PRIu64 ",\"lane\":%zu,\"start\":%"
				    PRId64 ",\"end\":%" PRId64 ",\"type\":%u}}\n", best,
				    lane_at(&m, best), r->start, r->end, r->type);
	}
	tl_close(&m);
	return 0;
}
