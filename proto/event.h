/*
 * proto/event.h - the event record and the event catalogue.
 *
 * One record layout for every event; what each argument means is given per
 * type by proto/events.def. Records are what sensors write on the hot path,
 * what batches carry (encoded by proto/codec.c) and what exporters read.
 * Wire byte order is little-endian; the struct is used as-is on
 * little-endian hosts (the codec swaps elsewhere).
 */
#ifndef TAPESTRY_PROTO_EVENT_H
#define TAPESTRY_PROTO_EVENT_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_EV_NARGS 6

/* A traced event: 72 bytes, no padding. Times are in ns on the clock of
 * the host that produced it (CLOCK_MONOTONIC based) until post-processing
 * converts them to global time. */
struct proto_event {
	uint64_t t_start;	/* call entry */
	uint64_t t_end;		/* call exit (== t_start for instants) */
	uint16_t type;		/* enum proto_ev_type */
	uint16_t flags;		/* PROTO_EVF_* ; chunk length for STRING/ARRAY */
	uint32_t tid;		/* thread index in its process, 0 = main */
	int64_t arg[PROTO_EV_NARGS];	/* meaning per type: events.def */
};

#define PROTO_EVENT_SIZE 72

/* Set the six arguments a[0..5] (an event's, or a record being built). */
static inline void proto_args_set(int64_t *a, int64_t a0, int64_t a1,
				  int64_t a2, int64_t a3, int64_t a4, int64_t a5)
{
	a[0] = a0;
	a[1] = a1;
	a[2] = a2;
	a[3] = a3;
	a[4] = a4;
	a[5] = a5;
}

/* Set all six arguments of e (the sensor's hot path, generators). */
static inline void proto_ev_set_args(struct proto_event *e, int64_t a0,
				     int64_t a1, int64_t a2, int64_t a3,
				     int64_t a4, int64_t a5)
{
	proto_args_set(e->arg, a0, a1, a2, a3, a4, a5);
}

/* Flags of ordinary events (not STRING/ARRAY, whose flags are a count). */
#define PROTO_EVF_FAILED 0x0001u	/* the call returned an error */
#define PROTO_EVF_HASARRAY 0x0002u	/* ARRAY records follow in this thread */
#define PROTO_EVF_INSTANT 0x0004u	/* no duration (t_end == t_start) */
/* A run of identical calls that found nothing (MPI_Test, MPI_Iprobe ...
 * returning false), folded into one record from the first one's start to
 * the last one's end; an ARRAY of 1 value follows: the number of calls. */
#define PROTO_EVF_FOLDED 0x0008u
/* An MPI call that failed (PROTO_EVF_FAILED too): an MPI_ERROR record
 * with the code it returned follows it on its thread, after its ARRAY
 * records. */
#define PROTO_EVF_ERRCODE 0x0010u
/* 0x8000 is the sensor's own inside the process (SN_EVF_STAMP,
 * sensor/rt.h), cleared before a record leaves it. */

/* STRING records: t_start = string id (> 0), t_end = byte offset of this
 * chunk in the string, flags = chunk length (1..48), arg[] = the bytes.
 * ARRAY records: t_start = index of arg[0] in the array, t_end = total
 * number of values, flags = values in this chunk (1..6). */
#define PROTO_STRING_CHUNK 48
#define PROTO_STRING_MAX 4096

enum proto_ev_category {
	PROTO_CAT_TRACER = 0,
	PROTO_CAT_LIBC = 1,
	PROTO_CAT_MPI = 2,
	PROTO_CAT_MEM = 3,
	PROTO_CAT_PROC = 4,
};

enum proto_field {
#define FIELD(name, desc) PROTO_F_##name,
#include "proto/fields.def"
#undef FIELD
	PROTO_F__COUNT
};

enum proto_ev_type {
	PROTO_EV__INVALID = 0,
#define EV(id, name, cat, a0, a1, a2, a3, a4, a5) PROTO_EV_##id,
#include "proto/events.def"
#undef EV
	PROTO_EV__COUNT
};

struct proto_ev_info {
	const char *name;			/* "write", "MPI_Send" */
	enum proto_ev_category category;
	uint8_t field[PROTO_EV_NARGS];		/* enum proto_field per arg */
};

/* Catalogue entry for type, or NULL if type is not a valid event type. */
const struct proto_ev_info *proto_ev_info(unsigned type);

/* Type whose name is name, or PROTO_EV__INVALID. */
enum proto_ev_type proto_ev_lookup(const char *name);

/* Index of the argument of type that holds field f, or -1. */
int proto_ev_arg(unsigned type, enum proto_field f);

/* 1 when type is an MPI collective (MPI_Barrier .. MPI_Exscan), else 0. */
int proto_ev_collective(unsigned type);

/* The call an MPI event's type is a variant of, for the readers that
 * match and replay: the send modes give MPI_SEND / MPI_ISEND,
 * MPI_Sendrecv_replace MPI_SENDRECV, MPI_Mrecv / MPI_Imrecv MPI_RECV /
 * MPI_IRECV (same peer, tag, comm, bytes), MPI_Mprobe / MPI_Improbe
 * MPI_PROBE / MPI_IPROBE, MPI_Testany MPI_WAITANY (same arguments; req 0:
 * nothing completed). Every other type is its own base. */
unsigned proto_ev_base(unsigned type);

/* 1 when an MPI event of type with arguments arg polled and found
 * nothing: MPI_Test, MPI_Testall, MPI_Testsome (outcount 0),
 * MPI_Request_get_status and MPI_Iprobe with their flag 0, MPI_Testany
 * with nothing completed. The MPI sensor folds a run of them into one
 * record (PROTO_EVF_FOLDED, docs/modules/sensor-mpi.md). */
int proto_ev_poll_empty(unsigned type, const int64_t *arg);

/* A request an MPI completion event's ARRAY says completed. */
struct proto_done {
	int64_t req;		/* the request's id (0: unknown) */
	int64_t peer;		/* actual source of a receive, else the peer */
	int64_t tag;		/* actual tag (-1: not recorded, MPI_Waitall) */
	int64_t bytes;		/* actual bytes of a receive, else asked for */
	int64_t index;		/* position in the call's array (-1: not recorded) */
};

/* Values per completed request in the ARRAY of an event of this type: 4
 * for MPI_Waitall (req, peer, bytes, arrived), 5 for MPI_Waitsome,
 * MPI_Testall and MPI_Testsome (req, peer, tag, bytes, index); 0 when the
 * type has no such ARRAY. */
unsigned proto_ev_done_stride(unsigned type);

/* Decode the i-th completed request of an event of type from its ARRAY
 * (arr, n values) into *d: 0, or -1 when there is no such entry. */
int proto_ev_done(unsigned type, const int64_t *arr, size_t n, size_t i,
		  struct proto_done *d);
/* What an MPI-IO event type does: PROTO_IO_NOT (not MPI-IO),
 * PROTO_IO_FILE (open, close, delete, set_size, preallocate, sync,
 * set_view; seek, get_position, get_size, get_view, atomicity, info,
 * get_amode and get_group calls), PROTO_IO_READ or PROTO_IO_WRITE (every data access form;
 * the nonblocking ones have a req argument, the split collectives' _begin
 * neither req nor result). */
enum { PROTO_IO_NOT = 0, PROTO_IO_FILE = 1, PROTO_IO_READ = 2, PROTO_IO_WRITE = 3 };
int proto_ev_mpiio(unsigned type);

/* The bytes an event's call moved, for the exports' bytes column: its
 * result for the calls whose bytes field is what they asked for (read,
 * write, pread, pwrite, readv, writev, the socket calls; 0 when they
 * failed), MPI-IO's result when known (else what it asked for; 0 when it
 * failed, and for a nonblocking access or a split collective's _begin,
 * whose bytes move at their completion), the bytes
 * field itself for every other type that has one (the stdio calls and the
 * libc types since issue 31 record what moved; in their older traces,
 * count 0, fgets records the buffer's size: its result then), -1 for a
 * type without bytes. */
int64_t proto_ev_moved(const struct proto_event *ev);
/* The calls ev stands for: a run of libc stdio calls holds count of them
 * (docs/modules/sensor-libc.md, "Runs"), any other record one. */
uint64_t proto_ev_calls(const struct proto_event *ev);

/* 1 when type is an MPI one-sided call (MPI_Win_create .. the flushes,
 * and MPI_Win_test). */
int proto_ev_rma(unsigned type);

/* The one-sided kinds, for tables indexed by them: the index (0 ..
 * PROTO_RMA_KINDS - 1) of a type proto_ev_rma accepts, -1 for any other;
 * and the type of an index. */
#define PROTO_RMA_KINDS (PROTO_EV_MPI_WIN_FLUSH_LOCAL_ALL - PROTO_EV_MPI_WIN_CREATE + 2)
int proto_ev_rma_kind(unsigned type);
unsigned proto_ev_rma_type(int kind);

/* The later collectives (issue 19), one run of events.def from
 * MPI_Alltoallw: proto_ev_coll2() is 1 for Alltoallw and
 * Reduce_scatter_block, 2 for a nonblocking collective, 3 for a blocking
 * neighbourhood collective, 4 for a nonblocking one, else 0;
 * proto_ev_icoll() the blocking type a nonblocking collective (or
 * neighbourhood collective) completes as (MPI_Ibcast: MPI_BCAST,
 * MPI_Ineighbor_alltoall: MPI_NEIGHBOR_ALLTOALL), 0 for any other type. */
enum { PROTO_COLL2_NOT = 0, PROTO_COLL2_BLOCKING = 1, PROTO_COLL2_NB = 2,
       PROTO_COLL2_NEIGHBOR = 3, PROTO_COLL2_INEIGHBOR = 4 };
int proto_ev_coll2(unsigned type);
unsigned proto_ev_icoll(unsigned type);

/* Name of a field ("bytes"), or NULL. */
const char *proto_field_name(unsigned f);

/* Name of a category ("libc"), or NULL. */
const char *proto_cat_name(unsigned cat);

#endif
