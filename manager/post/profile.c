/*
 * manager/post/profile.c - the job's profile (profile.h): per rank and call,
 * the point-to-point matrix, message sizes, collectives per communicator,
 * files per rank, in one pass over the corrected events.
 *
 * While gathering, everything is kept per stream (a stream's rank may only
 * be known from a META read after its first events); mgr_profile_finish
 * gives each stream its rank, merges the rows of streams of one rank and
 * sorts the tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/map.h"
#include "manager/post/mpi_ends.h"
#include "manager/post/profile.h"
#include "proto/error.h"

struct sproc {			/* one stream while gathering */
	const struct proto_stream *s;
	int rank;		/* the final rank, set by finish; -1 left out */
	int64_t t0, t1, mpi_ns, io_ns, threads_ns;
	uint64_t calls;
	uint32_t *fn;		/* PROTO_EV__COUNT: index + 1 into fns, 0 none */
	struct mgr_prof_bin *bins;	/* MGR_PROFILE_BINS of its sends, or NULL:
					 * summed at finish over the ranks kept,
					 * as the matrix is */
};

struct mgr_profile_acc {
	struct sproc *procs;
	size_t nprocs, cprocs;
	struct mgr_map by_stream;		/* stream id -> procs index */
	const struct proto_stream *last_s;	/* one-entry cache */
	size_t last_p;
	size_t cfns, cmsgs, ccolls, cfiles, cpaths;
	struct mgr_map msg;			/* (from proc, to rank) -> msgs */
	struct mgr_map coll;			/* (comm, type) -> colls */
	struct mgr_map member;			/* (coll, proc) seen */
	struct mgr_map path_id;			/* (stream, string id) -> paths */
	struct mgr_map path_str;		/* hash of the string -> paths */
	struct mgr_map file;			/* (path, proc) -> files */
	char **paths;
	size_t npaths;
	int done;				/* finished: only paths kept */
};

/* ---- what a call is and what it moved ----------------------------------- */

int mgr_profile_class(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	if (!info)
		return 0;
	switch (info->category) {
	case PROTO_CAT_MPI:
		return proto_ev_mpiio(type) != PROTO_IO_NOT ? 'i' : 'm';
	case PROTO_CAT_LIBC:
		return 'i';
	case PROTO_CAT_PROC:
		return 'c';
	default:
		return 0;
	}
}

int64_t mgr_profile_compute_ns(const struct mgr_prof_rank *r)
{
	int64_t span = r->t1 > r->t0 ? r->t1 - r->t0 : 0;
	int64_t c = span - r->mpi_ns - r->io_ns;

	return c > 0 ? c : 0;
}

int mgr_profile_bin(uint64_t n)
{
	int k = 0;

	while (n) {
		n >>= 1;
		k++;
	}
	return k < MGR_PROFILE_BINS ? k : MGR_PROFILE_BINS - 1;
}

static uint64_t pos(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

struct ends_sum {
	uint64_t bytes;
};

static int sum_end(void *arg, const struct mgr_end *e)
{
	struct ends_sum *s = arg;

	if (e->kind != MGR_END_FREE && e->kind != MGR_END_IRECV && e->bytes > 0)
		s->bytes += (uint64_t)e->bytes;
	return 0;
}

static void trace_event(const struct mgr_event *ev, struct proto_trace_event *te)
{
	te->ev = ev->ev;
	te->stream = ev->stream;
	te->array = ev->array;
	te->narray = ev->narray;
}

/* MPI: sends and receives by their ends (a receive's actual bytes, a
 * completion's requests; a receive request's post moves nothing yet),
 * MPI-IO by its status, the rest (collectives, one-sided) by bytes. */
static uint64_t mpi_bytes(const struct mgr_event *ev)
{
	const struct proto_event *e = ev->ev;
	int io = proto_ev_mpiio(e->type);

	/* proto_ev_moved's rule, the CSV's and the report's: the status's
	 * count (-1: what was asked); a nonblocking access and a split
	 * collective's _begin move at their end (a nonblocking one's bytes
	 * are its completion's, counted below) */
	if (io == PROTO_IO_READ || io == PROTO_IO_WRITE)
		return pos(proto_ev_moved(e));
	if (io != PROTO_IO_NOT)
		return 0;
	switch (proto_ev_base(e->type)) {
	case PROTO_EV_MPI_SEND: case PROTO_EV_MPI_RECV: case PROTO_EV_MPI_ISEND:
	case PROTO_EV_MPI_START: case PROTO_EV_MPI_STARTALL: case PROTO_EV_MPI_SENDRECV:
	case PROTO_EV_MPI_WAIT: case PROTO_EV_MPI_WAITANY: case PROTO_EV_MPI_TEST:
	case PROTO_EV_MPI_WAITALL: case PROTO_EV_MPI_WAITSOME: case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTSOME: {
		struct proto_trace_event te;
		struct ends_sum s = {0};

		if (e->flags & PROTO_EVF_FOLDED)
			return 0;	/* polls that found nothing */
		trace_event(ev, &te);
		mgr_mpi_ends(&te, sum_end, &s);
		return s.bytes;
	}
	case PROTO_EV_MPI_IRECV: case PROTO_EV_MPI_PROBE: case PROTO_EV_MPI_IPROBE:
	case PROTO_EV_MPI_REQUEST_GET_STATUS:
		return 0;	/* a receive posted or a message looked at */
	default:
		break;
	}
	if (proto_ev_rma(e->type) && e->type != PROTO_EV_MPI_PUT &&
	    e->type != PROTO_EV_MPI_GET && e->type != PROTO_EV_MPI_RPUT &&
	    e->type != PROTO_EV_MPI_RGET && e->type != PROTO_EV_MPI_ACCUMULATE &&
	    e->type != PROTO_EV_MPI_RACCUMULATE && e->type != PROTO_EV_MPI_GET_ACCUMULATE &&
	    e->type != PROTO_EV_MPI_RGET_ACCUMULATE && e->type != PROTO_EV_MPI_FETCH_AND_OP &&
	    e->type != PROTO_EV_MPI_COMPARE_AND_SWAP)
		return 0;	/* windows made, attached, queried: no transfer */
	return pos(mgr_ev_field(e, PROTO_F_bytes, 0));
}

uint64_t mgr_profile_bytes(const struct mgr_event *ev)
{
	const struct proto_event *e = ev->ev;
	const struct proto_ev_info *info = proto_ev_info(e->type);

	if (!info || (e->flags & PROTO_EVF_FAILED))
		return 0;
	if (info->category == PROTO_CAT_MPI)
		return mpi_bytes(ev);
	if (info->category != PROTO_CAT_LIBC)
		return 0;
	switch (e->type) {
	case PROTO_EV_MMAP: case PROTO_EV_MUNMAP: case PROTO_EV_MSYNC:
		return 0;	/* a mapping's length moves nothing by itself */
	default:
		/* what the call (or the run of calls) moved: proto_ev_moved's
		 * rule, one for the CSV, the report and the profile */
		return pos(proto_ev_moved(e));
	}
}

/* The time an event spent in its calls, of its span d: a libc record of
 * several calls (a stdio run, docs/modules/sensor-libc.md "Runs") carries
 * the ns inside them in an ARRAY of 1 value, at most its span (the
 * program computed between them); a trace from before has none: the
 * span. */
static int64_t in_calls(const struct mgr_event *ev, int64_t d)
{
	const struct proto_event *e = ev->ev;
	const struct proto_ev_info *info = proto_ev_info(e->type);

	if (info && info->category == PROTO_CAT_LIBC &&
	    (e->flags & PROTO_EVF_HASARRAY) && proto_ev_calls(e) > 1 &&
	    ev->array && ev->narray >= 1 && ev->array[0] >= 0 && ev->array[0] < d)
		return ev->array[0];
	return d;
}

/* 'r' a read, 'w' a write, 'o' open, 0 any other call on a file. */
static int file_op(unsigned type)
{
	switch (type) {
	case PROTO_EV_READ: case PROTO_EV_PREAD: case PROTO_EV_READV:
	case PROTO_EV_FREAD: case PROTO_EV_FGETS: case PROTO_EV_FGETC:
	case PROTO_EV_GETDELIM: case PROTO_EV_AIO_READ:
		return 'r';
	case PROTO_EV_WRITE: case PROTO_EV_PWRITE: case PROTO_EV_WRITEV:
	case PROTO_EV_FWRITE: case PROTO_EV_FPRINTF: case PROTO_EV_VFPRINTF:
	case PROTO_EV_FPUTS: case PROTO_EV_FPUTC: case PROTO_EV_PRINTF:
	case PROTO_EV_PUTS: case PROTO_EV_AIO_WRITE:
		return 'w';
	case PROTO_EV_SENDFILE: case PROTO_EV_COPY_FILE_RANGE:
		return 'r';	/* path is the source's (path2 the destination's) */
	case PROTO_EV_OPEN: case PROTO_EV_OPENAT: case PROTO_EV_CREAT:
	case PROTO_EV_FOPEN: case PROTO_EV_MPI_FILE_OPEN:
		return 'o';
	}
	switch (proto_ev_mpiio(type)) {
	case PROTO_IO_READ:
		return 'r';
	case PROTO_IO_WRITE:
		return 'w';
	}
	return 0;
}

/* Sockets are not files: their peers' addresses stay out of the table. */
static int socket_call(unsigned type)
{
	return type >= PROTO_EV_CONNECT && type <= PROTO_EV_RECVFROM;
}

/* ---- gathering ------------------------------------------------------------ */

struct mgr_profile *mgr_profile_new(void)
{
	struct mgr_profile *p = calloc(1, sizeof(*p));

	if (!p || !(p->acc = calloc(1, sizeof(*p->acc)))) {
		free(p);
		return NULL;
	}
	struct mgr_profile_acc *a = p->acc;

	mgr_map_init(&a->by_stream, MGR_PROFILE_MAX_PROCS);
	mgr_map_init(&a->msg, MGR_PROFILE_MAX_ROWS);
	mgr_map_init(&a->coll, MGR_PROFILE_MAX_ROWS);
	mgr_map_init(&a->member, MGR_PROFILE_MAX_ROWS);
	mgr_map_init(&a->path_id, MGR_PROFILE_MAX_ROWS);
	mgr_map_init(&a->path_str, MGR_PROFILE_MAX_ROWS);
	mgr_map_init(&a->file, MGR_PROFILE_MAX_ROWS);
	return p;
}

/* The index of ev's stream, made on its first event: 0, PROTO_E_FULL
 * (past MGR_PROFILE_MAX_PROCS) or PROTO_E_NOMEM. */
static int proc_of(struct mgr_profile *p, const struct proto_stream *s, size_t *out)
{
	struct mgr_profile_acc *a = p->acc;
	int64_t v;
	int rc;

	if (a->last_s == s && a->nprocs) {
		*out = a->last_p;
		return 0;
	}
	if ((v = mgr_map_get(&a->by_stream, s->id, 0)) < 0) {
		if ((rc = mgr_grow((void **)&a->procs, &a->cprocs, a->nprocs + 1,
				   sizeof(*a->procs))))
			return rc;
		if ((rc = mgr_map_put(&a->by_stream, s->id, 0, (uint32_t)a->nprocs)))
			return rc;
		struct sproc *q = &a->procs[a->nprocs];

		memset(q, 0, sizeof(*q));
		q->s = s;
		q->t0 = INT64_MAX;
		q->t1 = INT64_MIN;
		v = (int64_t)a->nprocs++;
	}
	a->last_s = s;
	a->last_p = (size_t)v;
	*out = (size_t)v;
	return 0;
}

/* Index of the row of (map key a, b) in *arr, made zeroed when new. */
static int row(struct mgr_map *m, uint64_t ka, uint64_t kb, void **arr, size_t *n,
	       size_t *cap, size_t size, size_t *out)
{
	int64_t v = mgr_map_get(m, ka, kb);
	int rc;

	if (v >= 0) {
		*out = (size_t)v;
		return 0;
	}
	if ((rc = mgr_grow(arr, cap, *n + 1, size)) ||
	    (rc = mgr_map_put(m, ka, kb, (uint32_t)*n)))
		return rc;
	memset((char *)*arr + *n * size, 0, size);
	*out = (*n)++;
	return 0;
}

struct msg_ctx {
	struct mgr_profile *p;
	size_t proc;
	int rc;
};

static int count_send(void *arg, const struct mgr_end *e)
{
	struct msg_ctx *c = arg;
	struct mgr_profile *p = c->p;
	struct mgr_profile_acc *a = p->acc;
	size_t i;

	if ((e->kind != MGR_END_SEND && e->kind != MGR_END_ISEND) || e->peer < 0)
		return 0;
	uint64_t b = pos(e->bytes);

	if ((c->rc = row(&a->msg, c->proc, (uint64_t)e->peer, (void **)&p->msgs, &p->nmsgs,
			 &a->cmsgs, sizeof(*p->msgs), &i)))
		return c->rc;
	p->msgs[i].to = (int)e->peer;
	p->msgs[i].count++;
	p->msgs[i].bytes += b;
	p->msgs[i].from = (int)c->proc;	/* a stream until finish */
	struct sproc *q = &a->procs[c->proc];

	if (!q->bins && !(q->bins = calloc(MGR_PROFILE_BINS, sizeof(*q->bins))))
		return c->rc = PROTO_E_NOMEM;
	struct mgr_prof_bin *bin = &q->bins[mgr_profile_bin(b)];

	bin->count++;
	bin->bytes += b;
	return 0;
}

static int add_coll(struct mgr_profile *p, const struct mgr_event *ev, size_t proc,
		    int64_t d, uint64_t bytes)
{
	struct mgr_profile_acc *a = p->acc;
	int64_t comm = ev->comm == INT64_MIN || ev->comm < 0 ? MGR_PROFILE_COMM_UNNAMED :
		       ev->comm;
	size_t i;
	int rc;

	if ((rc = row(&a->coll, (uint64_t)comm, ev->ev->type, (void **)&p->colls,
		      &p->ncolls, &a->ccolls, sizeof(*p->colls), &i)))
		return rc;
	struct mgr_prof_coll *c = &p->colls[i];

	c->comm = comm;
	c->type = ev->ev->type;
	c->calls++;
	c->bytes += bytes;
	c->time_ns = mgr_sat_add(c->time_ns, d);
	if (mgr_map_get(&a->member, i, proc) < 0) {
		if ((rc = mgr_map_put(&a->member, i, proc, 1)))
			return rc;
		c->ranks++;
	}
	return 0;
}

static uint64_t str_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The path index of ev's path (interned once per stream and string id). */
static int path_of(struct mgr_profile *p, const struct mgr_event *ev, size_t *out)
{
	struct mgr_profile_acc *a = p->acc;
	uint64_t sid = (uint64_t)mgr_ev_field(ev->ev, PROTO_F_path, 0);
	uint64_t k = sid ^ ((uint64_t)ev->ev->tid << 44);
	int64_t v = mgr_map_get(&a->path_id, ev->stream->id, k);
	int rc;

	if (v >= 0) {
		*out = (size_t)v;
		return 0;
	}
	uint64_t h1 = str_hash(ev->path, 0xcbf29ce484222325ull);
	uint64_t h2 = str_hash(ev->path, 0x84222325cbf29ce4ull);

	if ((v = mgr_map_get(&a->path_str, h1, h2)) < 0) {
		char *d;

		if ((rc = mgr_grow((void **)&a->paths, &a->cpaths, a->npaths + 1,
				   sizeof(*a->paths))))
			return rc;
		if (!(d = strdup(ev->path)))
			return PROTO_E_NOMEM;
		if ((rc = mgr_map_put(&a->path_str, h1, h2, (uint32_t)a->npaths))) {
			free(d);
			return rc;
		}
		a->paths[a->npaths] = d;
		v = (int64_t)a->npaths++;
	}
	if ((rc = mgr_map_put(&a->path_id, ev->stream->id, k, (uint32_t)v)))
		return rc;
	*out = (size_t)v;
	return 0;
}

static int add_file(struct mgr_profile *p, const struct mgr_event *ev, size_t proc,
		    int64_t d, uint64_t calls, uint64_t bytes)
{
	struct mgr_profile_acc *a = p->acc;
	size_t pi, i;
	int rc;

	if ((rc = path_of(p, ev, &pi)) ||
	    (rc = row(&a->file, pi, proc, (void **)&p->files, &p->nfiles, &a->cfiles,
		      sizeof(*p->files), &i)))
		return rc;
	struct mgr_prof_file *f = &p->files[i];

	f->path = a->paths[pi];
	f->rank = (int)proc;	/* a stream until finish */
	f->time_ns = mgr_sat_add(f->time_ns, d);
	switch (file_op(ev->ev->type)) {
	case 'r':
		f->reads += calls;
		f->read_bytes += bytes;
		break;
	case 'w':
		f->writes += calls;
		f->write_bytes += bytes;
		break;
	case 'o':
		f->opens++;
		break;
	default:
		f->other++;
	}
	return 0;
}

static int add_fn(struct mgr_profile *p, struct sproc *q, size_t proc, unsigned type,
		  uint64_t calls, int64_t d, uint64_t bytes)
{
	struct mgr_profile_acc *a = p->acc;
	int rc;

	if (!q->fn && !(q->fn = calloc(PROTO_EV__COUNT, sizeof(*q->fn))))
		return PROTO_E_NOMEM;
	if (!q->fn[type]) {
		if (p->nfns >= MGR_PROFILE_MAX_ROWS)
			return PROTO_E_FULL;
		if ((rc = mgr_grow((void **)&p->fns, &a->cfns, p->nfns + 1, sizeof(*p->fns))))
			return rc;
		memset(&p->fns[p->nfns], 0, sizeof(*p->fns));
		p->fns[p->nfns].type = type;
		p->fns[p->nfns].rank = (int)proc;
		q->fn[type] = (uint32_t)++p->nfns;
	}
	struct mgr_prof_fn *f = &p->fns[q->fn[type] - 1];

	f->calls += calls;
	f->time_ns = mgr_sat_add(f->time_ns, d);
	if (d > f->max_ns)
		f->max_ns = d;
	f->bytes += bytes;
	return 0;
}

/* A table past its maximum loses the row, not the profile. */
static int beyond(struct mgr_profile *p, int rc)
{
	if (rc == PROTO_E_FULL) {
		p->beyond++;
		return 0;
	}
	return rc;
}

int mgr_profile_add(struct mgr_profile *p, const struct mgr_event *ev)
{
	const struct proto_event *e = ev->ev;
	const struct proto_ev_info *info = proto_ev_info(e->type);
	size_t proc;
	int rc;

	if (!info || info->category == PROTO_CAT_TRACER || p->acc->done)
		return 0;
	if ((rc = proc_of(p, ev->stream, &proc)))
		return beyond(p, rc);
	struct sproc *q = &p->acc->procs[proc];

	if (ev->start < q->t0)
		q->t0 = ev->start;
	if (ev->end > q->t1)
		q->t1 = ev->end;
	int cls = mgr_profile_class(e->type);

	if (!cls)
		return 0;
	int64_t d = in_calls(ev, ev->end > ev->start ? ev->end - ev->start : 0);
	uint64_t calls = (e->flags & PROTO_EVF_FOLDED) && ev->array && ev->narray >= 1 &&
			 ev->array[0] > 0 ? (uint64_t)ev->array[0] : proto_ev_calls(e);
	uint64_t bytes = mgr_profile_bytes(ev);

	q->calls += calls;
	/* the main thread's time is the rank's; its other threads (MPI's
	 * progress thread, the program's workers) block beside it */
	if (cls != 'c' && e->tid != 0)
		q->threads_ns = mgr_sat_add(q->threads_ns, d);
	else if (cls == 'm')
		q->mpi_ns = mgr_sat_add(q->mpi_ns, d);
	else if (cls == 'i')
		q->io_ns = mgr_sat_add(q->io_ns, d);
	if ((rc = beyond(p, add_fn(p, q, proc, e->type, calls, d, bytes))))
		return rc;
	if (info->category == PROTO_CAT_MPI && !(e->flags & PROTO_EVF_FAILED)) {
		struct proto_trace_event te;
		struct msg_ctx c = {p, proc, 0};

		trace_event(ev, &te);
		mgr_mpi_ends(&te, count_send, &c);
		if ((rc = beyond(p, c.rc)))
			return rc;
		if ((proto_ev_collective(e->type) || proto_ev_coll2(e->type)) &&
		    (rc = beyond(p, add_coll(p, ev, proc, d, bytes))))
			return rc;
	}
	if (ev->path && ev->path[0] && cls == 'i' && !socket_call(e->type) &&
	    (rc = beyond(p, add_file(p, ev, proc, d, calls, bytes))))
		return rc;
	return 0;
}

/* ---- closing: streams to ranks, rows merged and sorted -------------------- */

/* qsort, which must not be given a NULL array even when empty */
static void psort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int cmp_fn_key(const void *x, const void *y)
{
	const struct mgr_prof_fn *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(a->rank, b->rank)) || (c = MGR_CMP(a->type, b->type)))
		return c;
	return 0;
}

static int cmp_fn_time(const void *x, const void *y)
{
	const struct mgr_prof_fn *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(a->rank, b->rank)) || (c = MGR_CMP(b->time_ns, a->time_ns)) ||
	    (c = MGR_CMP(a->type, b->type)))
		return c;
	return 0;
}

static int cmp_type(const void *x, const void *y)
{
	const struct mgr_prof_type *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(b->time_ns, a->time_ns)) || (c = MGR_CMP(a->type, b->type)))
		return c;
	return 0;
}

static int cmp_msg_key(const void *x, const void *y)
{
	const struct mgr_prof_msg *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(a->from, b->from)) || (c = MGR_CMP(a->to, b->to)))
		return c;
	return 0;
}

static int cmp_msg(const void *x, const void *y)
{
	const struct mgr_prof_msg *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(b->bytes, a->bytes)) || (c = MGR_CMP(b->count, a->count)))
		return c;
	return cmp_msg_key(x, y);
}

static int cmp_coll(const void *x, const void *y)
{
	const struct mgr_prof_coll *a = x, *b = y;
	int c;

	/* the unnamed (-1) last, then by time */
	if ((c = MGR_CMP((uint64_t)a->comm, (uint64_t)b->comm)) ||
	    (c = MGR_CMP(b->time_ns, a->time_ns)) || (c = MGR_CMP(a->type, b->type)))
		return c;
	return 0;
}

static int cmp_file_key(const void *x, const void *y)
{
	const struct mgr_prof_file *a = x, *b = y;
	int c;

	if ((c = strcmp(a->path, b->path)) || (c = MGR_CMP(a->rank, b->rank)))
		return c;
	return 0;
}

static int cmp_file(const void *x, const void *y)
{
	const struct mgr_prof_file *a = x, *b = y;
	int c;

	if ((c = MGR_CMP(b->time_ns, a->time_ns)))
		return c;
	return cmp_file_key(x, y);
}

static int cmp_int(const void *x, const void *y)
{
	return MGR_CMP(*(const int *)x, *(const int *)y);
}

/* Each stream's rank (-1: left out), then the ranks table. */
static int finish_ranks(struct mgr_profile *p)
{
	struct mgr_profile_acc *a = p->acc;
	int *rk;
	size_t n = 0;

	for (size_t i = 0; i < a->nprocs; i++)
		p->mpi |= a->procs[i].s->rank >= 0;
	for (size_t i = 0; i < a->nprocs; i++) {
		int r = a->procs[i].s->rank;

		a->procs[i].rank = !p->mpi ? (int)i : r >= 0 ? r : -1;
		p->left_out += a->procs[i].rank < 0;
	}
	if (!(rk = malloc((a->nprocs + 1) * sizeof(*rk))))
		return PROTO_E_NOMEM;
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].rank >= 0)
			rk[n++] = a->procs[i].rank;
	psort(rk, n, sizeof(*rk), cmp_int);
	size_t u = 0;

	for (size_t i = 0; i < n; i++)
		if (!u || rk[u - 1] != rk[i])
			rk[u++] = rk[i];
	if (!(p->ranks = calloc(u + 1, sizeof(*p->ranks)))) {
		free(rk);
		return PROTO_E_NOMEM;
	}
	p->nranks = u;
	for (size_t i = 0; i < u; i++) {
		p->ranks[i].rank = rk[i];
		p->ranks[i].t0 = INT64_MAX;
		p->ranks[i].t1 = INT64_MIN;
		p->ranks[i].pid = -1;
	}
	free(rk);
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct sproc *q = &a->procs[i];
		struct mgr_prof_rank *r = NULL;

		for (size_t lo = 0, hi = u; q->rank >= 0 && lo < hi;) {
			size_t mid = (lo + hi) / 2;

			if (p->ranks[mid].rank < q->rank)
				lo = mid + 1;
			else if (p->ranks[mid].rank > q->rank)
				hi = mid;
			else {
				r = &p->ranks[mid];
				break;
			}
		}
		if (!r)
			continue;
		if (r->pid < 0) {
			r->pid = q->s->pid;
			size_t l = strnlen(q->s->exe, sizeof(r->exe) - 1);

			memcpy(r->exe, q->s->exe, l);
			r->exe[l] = 0;
		}
		if (q->t0 < r->t0)
			r->t0 = q->t0;
		if (q->t1 > r->t1)
			r->t1 = q->t1;
		r->mpi_ns = mgr_sat_add(r->mpi_ns, q->mpi_ns);
		r->io_ns = mgr_sat_add(r->io_ns, q->io_ns);
		r->threads_ns = mgr_sat_add(r->threads_ns, q->threads_ns);
		r->calls += q->calls;
	}
	for (size_t i = 0; i < u; i++)
		if (p->ranks[i].t1 < p->ranks[i].t0)
			p->ranks[i].t0 = p->ranks[i].t1 = 0;
	return 0;
}

/* Rows of streams now of one rank merged (sorted by key first). */
static void finish_fns(struct mgr_profile *p)
{
	struct mgr_profile_acc *a = p->acc;
	size_t n = 0;

	for (size_t i = 0; i < p->nfns; i++) {
		p->fns[i].rank = a->procs[p->fns[i].rank].rank;
		if (p->fns[i].rank >= 0)
			p->fns[n++] = p->fns[i];
	}
	psort(p->fns, n, sizeof(*p->fns), cmp_fn_key);
	size_t u = 0;

	for (size_t i = 0; i < n; i++) {
		struct mgr_prof_fn *f = &p->fns[i], *g = u ? &p->fns[u - 1] : NULL;

		if (g && !cmp_fn_key(f, g)) {
			g->calls += f->calls;
			g->time_ns = mgr_sat_add(g->time_ns, f->time_ns);
			g->bytes += f->bytes;
			if (f->max_ns > g->max_ns)
				g->max_ns = f->max_ns;
		} else {
			p->fns[u++] = *f;
		}
	}
	p->nfns = u;
}

/* The per-type table from the merged, key-sorted fns. */
static int finish_types(struct mgr_profile *p)
{
	if (!(p->types = calloc(PROTO_EV__COUNT, sizeof(*p->types))))
		return PROTO_E_NOMEM;
	struct mgr_prof_type *by = p->types;

	for (size_t i = 0; i < p->nfns; i++) {
		const struct mgr_prof_fn *f = &p->fns[i];
		struct mgr_prof_type *t = &by[f->type];

		t->type = f->type;
		t->calls += f->calls;
		t->bytes += f->bytes;
		t->time_ns = mgr_sat_add(t->time_ns, f->time_ns);
		if (f->max_ns > t->max_ns)
			t->max_ns = f->max_ns;
		if (f->time_ns > t->rank_max_ns)
			t->rank_max_ns = f->time_ns;
	}
	size_t n = 0;

	for (unsigned ty = 0; ty < PROTO_EV__COUNT; ty++) {
		if (!by[ty].calls)
			continue;
		by[n] = by[ty];
		double mean = (double)by[n].time_ns / (double)(p->nranks ? p->nranks : 1);

		by[n].imbalance = mean > 0 ? (double)by[n].rank_max_ns / mean : 0;
		n++;
	}
	p->ntypes = n;
	psort(p->types, n, sizeof(*p->types), cmp_type);
	psort(p->fns, p->nfns, sizeof(*p->fns), cmp_fn_time);
	return 0;
}

static void finish_msgs(struct mgr_profile *p)
{
	struct mgr_profile_acc *a = p->acc;
	size_t n = 0, u = 0;

	for (size_t i = 0; i < p->nmsgs; i++) {
		p->msgs[i].from = a->procs[p->msgs[i].from].rank;
		if (p->msgs[i].from >= 0)
			p->msgs[n++] = p->msgs[i];
	}
	psort(p->msgs, n, sizeof(*p->msgs), cmp_msg_key);
	for (size_t i = 0; i < n; i++) {
		if (u && !cmp_msg_key(&p->msgs[i], &p->msgs[u - 1])) {
			p->msgs[u - 1].count += p->msgs[i].count;
			p->msgs[u - 1].bytes += p->msgs[i].bytes;
		} else {
			p->msgs[u++] = p->msgs[i];
		}
	}
	p->nmsgs = u;
	for (size_t i = 0; i < u; i++) {
		p->msg_count += p->msgs[i].count;
		p->msg_bytes += p->msgs[i].bytes;
	}
	psort(p->msgs, u, sizeof(*p->msgs), cmp_msg);
	for (size_t i = 0; i < a->nprocs; i++)
		for (int k = 0; a->procs[i].bins && a->procs[i].rank >= 0 &&
				k < MGR_PROFILE_BINS; k++) {
			p->bins[k].count += a->procs[i].bins[k].count;
			p->bins[k].bytes += a->procs[i].bins[k].bytes;
		}
	for (int k = 0; k < MGR_PROFILE_BINS; k++) {
		p->bins[k].min_bytes = k ? (uint64_t)1 << (k - 1) : 0;
		p->bins[k].max_bytes = !k ? 0 : k == 64 ? UINT64_MAX :
				       ((uint64_t)1 << (k - 1)) * 2 - 1;
	}
}

static void finish_files(struct mgr_profile *p)
{
	struct mgr_profile_acc *a = p->acc;
	size_t n = 0, u = 0;

	for (size_t i = 0; i < p->nfiles; i++) {
		p->files[i].rank = a->procs[p->files[i].rank].rank;
		if (p->files[i].rank >= 0)
			p->files[n++] = p->files[i];
	}
	psort(p->files, n, sizeof(*p->files), cmp_file_key);
	for (size_t i = 0; i < n; i++) {
		struct mgr_prof_file *f = &p->files[i], *g = u ? &p->files[u - 1] : NULL;

		if (g && !cmp_file_key(f, g)) {
			g->opens += f->opens;
			g->reads += f->reads;
			g->read_bytes += f->read_bytes;
			g->writes += f->writes;
			g->write_bytes += f->write_bytes;
			g->other += f->other;
			g->time_ns = mgr_sat_add(g->time_ns, f->time_ns);
		} else {
			p->files[u++] = *f;
		}
	}
	p->nfiles = u;
	psort(p->files, u, sizeof(*p->files), cmp_file);
}

/* What gathering needed, freed; the paths stay (files[].path point to
 * them) until mgr_profile_free. */
static void acc_clear(struct mgr_profile_acc *a)
{
	for (size_t i = 0; i < a->nprocs; i++) {
		free(a->procs[i].fn);
		free(a->procs[i].bins);
	}
	free(a->procs);
	a->procs = NULL;
	a->nprocs = a->cprocs = 0;
	mgr_map_clear(&a->by_stream);
	mgr_map_clear(&a->msg);
	mgr_map_clear(&a->coll);
	mgr_map_clear(&a->member);
	mgr_map_clear(&a->path_id);
	mgr_map_clear(&a->path_str);
	mgr_map_clear(&a->file);
	a->done = 1;
}

void mgr_profile_hidden(struct mgr_profile *p, uint64_t n)
{
	p->left_out += n;
}

int mgr_profile_finish(struct mgr_profile *p)
{
	int rc;

	if (!p->acc || p->acc->done)
		return 0;
	if ((rc = finish_ranks(p)))
		return rc;
	finish_fns(p);
	if ((rc = finish_types(p)))
		return rc;
	finish_msgs(p);
	psort(p->colls, p->ncolls, sizeof(*p->colls), cmp_coll);
	finish_files(p);
	acc_clear(p->acc);
	return 0;
}

void mgr_profile_free(struct mgr_profile *p)
{
	if (!p)
		return;
	if (p->acc) {
		acc_clear(p->acc);
		for (size_t i = 0; i < p->acc->npaths; i++)
			free(p->acc->paths[i]);
		free(p->acc->paths);
		free(p->acc);
	}
	free(p->ranks);
	free(p->fns);
	free(p->types);
	free(p->msgs);
	free(p->colls);
	free(p->files);
	free(p);
}

int mgr_profile_check(const struct mgr_profile *p)
{
	uint64_t count = 0, bytes = 0;

	for (size_t i = 1; i < p->nranks; i++)
		if (p->ranks[i - 1].rank >= p->ranks[i].rank)
			return 1;
	for (size_t i = 1; i < p->nfns; i++)
		if (cmp_fn_time(&p->fns[i - 1], &p->fns[i]) >= 0)
			return 2;
	for (size_t i = 1; i < p->ntypes; i++)
		if (cmp_type(&p->types[i - 1], &p->types[i]) >= 0)
			return 3;
	for (size_t i = 0; i < p->nmsgs; i++) {
		if (i && cmp_msg(&p->msgs[i - 1], &p->msgs[i]) >= 0)
			return 4;
		count += p->msgs[i].count;
		bytes += p->msgs[i].bytes;
	}
	if (count != p->msg_count || bytes != p->msg_bytes)
		return 5;
	count = bytes = 0;
	for (int k = 0; k < MGR_PROFILE_BINS; k++) {
		count += p->bins[k].count;
		bytes += p->bins[k].bytes;
		if (p->bins[k].count && (mgr_profile_bin(p->bins[k].min_bytes) != k ||
					 mgr_profile_bin(p->bins[k].max_bytes) != k))
			return 6;
	}
	/* the bins count the messages the matrix does */
	if (count != p->msg_count || bytes != p->msg_bytes)
		return 7;
	for (size_t i = 1; i < p->nfiles; i++)
		if (cmp_file(&p->files[i - 1], &p->files[i]) >= 0)
			return 8;
	for (size_t r = 0; r < p->nranks; r++) {
		int64_t m = 0, r_all;

		for (size_t i = 0; i < p->nfns; i++) {
			if (p->fns[i].rank != p->ranks[r].rank)
				continue;
			int c = mgr_profile_class(p->fns[i].type);

			if (c == 'm' || c == 'i')
				m = mgr_sat_add(m, p->fns[i].time_ns);
		}
		r_all = mgr_sat_add(mgr_sat_add(p->ranks[r].mpi_ns, p->ranks[r].io_ns),
				    p->ranks[r].threads_ns);
		if (m != r_all)
			return 9;
	}
	return 0;
}
