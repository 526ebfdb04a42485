/*
 * proto/event.c - the catalogue table expanded from events.def.
 */
#include <string.h>

#include "proto/event.h"

_Static_assert(sizeof(struct proto_event) == PROTO_EVENT_SIZE,
	       "proto_event must be 72 bytes without padding");
_Static_assert(PROTO_F__COUNT < 256, "field ids must fit a byte");

static const struct proto_ev_info catalogue[PROTO_EV__COUNT] = {
	[PROTO_EV__INVALID] = {NULL, PROTO_CAT_TRACER, {0}},
#define EV(id, nm, cat, a0, a1, a2, a3, a4, a5)                              \
	[PROTO_EV_##id] = {nm, PROTO_CAT_##cat,                              \
			   {PROTO_F_##a0, PROTO_F_##a1, PROTO_F_##a2,         \
			    PROTO_F_##a3, PROTO_F_##a4, PROTO_F_##a5}},
#include "proto/events.def"
#undef EV
};

static const char *const field_names[PROTO_F__COUNT] = {
#define FIELD(nm, desc) #nm,
#include "proto/fields.def"
#undef FIELD
};

const struct proto_ev_info *proto_ev_info(unsigned type)
{
	if (type == PROTO_EV__INVALID || type >= PROTO_EV__COUNT)
		return NULL;
	return &catalogue[type];
}

enum proto_ev_type proto_ev_lookup(const char *name)
{
	if (!name)
		return PROTO_EV__INVALID;
	for (unsigned t = 1; t < PROTO_EV__COUNT; t++)
		if (strcmp(catalogue[t].name, name) == 0)
			return (enum proto_ev_type)t;
	return PROTO_EV__INVALID;
}

int proto_ev_arg(unsigned type, enum proto_field f)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	if (!info || f == PROTO_F_none)
		return -1;
	for (int i = 0; i < PROTO_EV_NARGS; i++)
		if (info->field[i] == f)
			return i;
	return -1;
}

/* The collectives are one run of events.def, MPI_Barrier first. */
_Static_assert(PROTO_EV_MPI_EXSCAN - PROTO_EV_MPI_BARRIER == 14,
	       "the collectives must stay one run of events.def");

int proto_ev_collective(unsigned type)
{
	return type >= PROTO_EV_MPI_BARRIER && type <= PROTO_EV_MPI_EXSCAN;
}

/* MPI-IO is one run of events.def, MPI_File_open first: file management
 * (open .. set_view), then reads and writes, blocking, nonblocking, split. */
_Static_assert(PROTO_EV_MPI_FILE_WRITE_ORDERED_END - PROTO_EV_MPI_FILE_OPEN == 40,
	       "MPI-IO must stay one run of events.def");

/* The file pointer, view and query calls are a second run, file
 * management all of them, like the two queries added later. */
_Static_assert(PROTO_EV_MPI_FILE_GET_INFO - PROTO_EV_MPI_FILE_SEEK == 10,
	       "the MPI-IO queries must stay one run of events.def");

int proto_ev_mpiio(unsigned type)
{
	const char *n;

	if ((type >= PROTO_EV_MPI_FILE_SEEK && type <= PROTO_EV_MPI_FILE_GET_INFO) ||
	    type == PROTO_EV_MPI_FILE_GET_AMODE || type == PROTO_EV_MPI_FILE_GET_GROUP)
		return PROTO_IO_FILE;
	if (type < PROTO_EV_MPI_FILE_OPEN || type > PROTO_EV_MPI_FILE_WRITE_ORDERED_END)
		return PROTO_IO_NOT;
	if (type <= PROTO_EV_MPI_FILE_SET_VIEW)
		return PROTO_IO_FILE;
	/* "MPI_File_read...", "MPI_File_iwrite..." */
	n = catalogue[type].name + sizeof("MPI_File_") - 1;
	if (*n == 'i')
		n++;
	return *n == 'r' ? PROTO_IO_READ : PROTO_IO_WRITE;
}

int64_t proto_ev_moved(const struct proto_event *ev)
{
	int b = proto_ev_arg(ev->type, PROTO_F_bytes);
	int r = proto_ev_arg(ev->type, PROTO_F_result);
	int io;

	if (b < 0)
		return -1;
	switch (ev->type) {
	case PROTO_EV_READ: case PROTO_EV_WRITE: case PROTO_EV_PREAD:
	case PROTO_EV_PWRITE: case PROTO_EV_READV: case PROTO_EV_WRITEV:
	case PROTO_EV_SEND_SOCK: case PROTO_EV_RECV_SOCK: case PROTO_EV_SENDTO:
	case PROTO_EV_RECVFROM:
		return ev->arg[r] > 0 ? ev->arg[r] : 0;
	case PROTO_EV_FGETS:	/* count 0: a trace from before issue 31 */
		if (ev->arg[5] == 0)
			return ev->arg[r] > 0 ? ev->arg[r] : 0;
		break;
	default:
		break;
	}
	io = proto_ev_mpiio(ev->type);
	if (io == PROTO_IO_READ || io == PROTO_IO_WRITE) {
		/* a failed access moved nothing; a nonblocking one and a split
		 * collective's _begin (no result) move theirs at their
		 * completion (the MPI_Wait... records the bytes, the _end its
		 * status); a status that says nothing (-1): what it asked */
		if ((ev->flags & PROTO_EVF_FAILED) || r < 0)
			return 0;
		return ev->arg[r] >= 0 ? ev->arg[r] : ev->arg[b];
	}
	if (proto_ev_info(ev->type)->category == PROTO_CAT_LIBC &&
	    (ev->flags & PROTO_EVF_FAILED))
		return 0;
	return ev->arg[b];
}

uint64_t proto_ev_calls(const struct proto_event *ev)
{
	int c = proto_ev_arg(ev->type, PROTO_F_count);
	const struct proto_ev_info *i = proto_ev_info(ev->type);

	if (c >= 0 && i && i->category == PROTO_CAT_LIBC && ev->arg[c] > 1)
		return (uint64_t)ev->arg[c];
	return 1;
}

/* One-sided is one run of events.def, MPI_Win_create first, and
 * MPI_Win_test added later. */
_Static_assert(PROTO_EV_MPI_WIN_FLUSH_LOCAL_ALL - PROTO_EV_MPI_WIN_CREATE == 27,
	       "one-sided must stay one run of events.def");

int proto_ev_rma(unsigned type)
{
	return (type >= PROTO_EV_MPI_WIN_CREATE && type <= PROTO_EV_MPI_WIN_FLUSH_LOCAL_ALL) ||
	       type == PROTO_EV_MPI_WIN_TEST;
}

int proto_ev_rma_kind(unsigned type)
{
	if (type == PROTO_EV_MPI_WIN_TEST)
		return PROTO_RMA_KINDS - 1;
	return proto_ev_rma(type) ? (int)(type - PROTO_EV_MPI_WIN_CREATE) : -1;
}

unsigned proto_ev_rma_type(int kind)
{
	if (kind < 0 || kind >= PROTO_RMA_KINDS)
		return PROTO_EV__INVALID;
	return kind == PROTO_RMA_KINDS - 1 ? PROTO_EV_MPI_WIN_TEST :
	       PROTO_EV_MPI_WIN_CREATE + (unsigned)kind;
}

/* The later collectives are one run of events.def: two blocking ones,
 * the nonblocking ones (in the order of their blocking types from
 * MPI_Barrier, then the two above), five neighbourhood ones, their
 * nonblocking forms in the same order. */
_Static_assert(PROTO_EV_MPI_IEXSCAN - PROTO_EV_MPI_IBARRIER == 16,
	       "one nonblocking collective per blocking type");
_Static_assert(PROTO_EV_MPI_INEIGHBOR_ALLTOALLW - PROTO_EV_MPI_ALLTOALLW == 28,
	       "the later collectives must stay one run of events.def");

int proto_ev_coll2(unsigned type)
{
	if (type < PROTO_EV_MPI_ALLTOALLW || type > PROTO_EV_MPI_INEIGHBOR_ALLTOALLW)
		return PROTO_COLL2_NOT;
	if (type <= PROTO_EV_MPI_REDUCE_SCATTER_BLOCK)
		return PROTO_COLL2_BLOCKING;
	if (type <= PROTO_EV_MPI_IEXSCAN)
		return PROTO_COLL2_NB;
	if (type <= PROTO_EV_MPI_NEIGHBOR_ALLTOALLW)
		return PROTO_COLL2_NEIGHBOR;
	return PROTO_COLL2_INEIGHBOR;
}

unsigned proto_ev_icoll(unsigned type)
{
	static const unsigned short blocking[] = {
		PROTO_EV_MPI_BARRIER, PROTO_EV_MPI_BCAST, PROTO_EV_MPI_REDUCE,
		PROTO_EV_MPI_ALLREDUCE, PROTO_EV_MPI_GATHER,
		PROTO_EV_MPI_GATHERV, PROTO_EV_MPI_SCATTER,
		PROTO_EV_MPI_SCATTERV, PROTO_EV_MPI_ALLGATHER,
		PROTO_EV_MPI_ALLGATHERV, PROTO_EV_MPI_ALLTOALL,
		PROTO_EV_MPI_ALLTOALLV, PROTO_EV_MPI_ALLTOALLW,
		PROTO_EV_MPI_REDUCE_SCATTER, PROTO_EV_MPI_REDUCE_SCATTER_BLOCK,
		PROTO_EV_MPI_SCAN, PROTO_EV_MPI_EXSCAN,
	};

	switch (proto_ev_coll2(type)) {
	case PROTO_COLL2_NB:
		return blocking[type - PROTO_EV_MPI_IBARRIER];
	case PROTO_COLL2_INEIGHBOR:
		return type - PROTO_EV_MPI_INEIGHBOR_ALLGATHER +
		       PROTO_EV_MPI_NEIGHBOR_ALLGATHER;
	default:
		return 0;
	}
}

const char *proto_field_name(unsigned f)
{
	return f < PROTO_F__COUNT ? field_names[f] : NULL;
}

const char *proto_cat_name(unsigned cat)
{
	static const char *const names[] = {"tracer", "libc", "mpi", "mem",
					    "proc"};
	return cat < sizeof(names) / sizeof(names[0]) ? names[cat] : NULL;
}

unsigned proto_ev_base(unsigned type)
{
	switch (type) {
	case PROTO_EV_MPI_BSEND:
	case PROTO_EV_MPI_SSEND:
	case PROTO_EV_MPI_RSEND:
		return PROTO_EV_MPI_SEND;
	case PROTO_EV_MPI_IBSEND:
	case PROTO_EV_MPI_ISSEND:
	case PROTO_EV_MPI_IRSEND:
		return PROTO_EV_MPI_ISEND;
	case PROTO_EV_MPI_SENDRECV_REPLACE:
		return PROTO_EV_MPI_SENDRECV;
	case PROTO_EV_MPI_ISENDRECV_REPLACE:
		return PROTO_EV_MPI_ISENDRECV;
	case PROTO_EV_MPI_MRECV:
		return PROTO_EV_MPI_RECV;
	case PROTO_EV_MPI_IMRECV:
		return PROTO_EV_MPI_IRECV;
	case PROTO_EV_MPI_MPROBE:
		return PROTO_EV_MPI_PROBE;
	case PROTO_EV_MPI_IMPROBE:
		return PROTO_EV_MPI_IPROBE;
	case PROTO_EV_MPI_TESTANY:
		return PROTO_EV_MPI_WAITANY;
	default:
		return type;
	}
}

int proto_ev_poll_empty(unsigned type, const int64_t *arg)
{
	switch (type) {
	case PROTO_EV_MPI_TEST:
	case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTSOME:	/* outcount 0 */
	case PROTO_EV_MPI_REQUEST_GET_STATUS:
		return arg[1] == 0;
	case PROTO_EV_MPI_IPROBE:
		return arg[4] == 0;
	case PROTO_EV_MPI_TESTANY:
		return arg[2] == 0 && arg[1] < 0;
	default:
		return 0;
	}
}

unsigned proto_ev_done_stride(unsigned type)
{
	switch (type) {
	case PROTO_EV_MPI_WAITALL:
		return 4;
	case PROTO_EV_MPI_WAITSOME:
	case PROTO_EV_MPI_TESTALL:
	case PROTO_EV_MPI_TESTSOME:
		return 5;
	default:
		return 0;
	}
}

int proto_ev_done(unsigned type, const int64_t *arr, size_t n, size_t i,
		  struct proto_done *d)
{
	unsigned k = proto_ev_done_stride(type);

	if (!k || !arr || i >= n / k)
		return -1;
	arr += i * k;
	d->req = arr[0];
	d->peer = arr[1];
	if (k == 4) {
		d->tag = -1;
		d->bytes = arr[2];
		d->index = (int64_t)i;
	} else {
		d->tag = arr[2];
		d->bytes = arr[3];
		d->index = arr[4];
	}
	return 0;
}
