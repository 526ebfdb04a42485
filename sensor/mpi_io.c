/*
 * sensor/mpi_io.c - the MPI sensor's MPI-IO wrappers.
 *
 * sensor/mpi_io.def lists the calls; sensor/mpi_gen.h expands it into the
 * next-function pointers and the exported wrappers, which share the
 * prologue and epilogue of sensor/mpi_wrap.c. Every call records an event
 * of its own type with the sensor's id of the file (1, 2 ... per process,
 * in open order), its path (the name given to MPI_File_open, a string id
 * emitted on the recording thread), and for the reads and writes the
 * absolute byte offset where the access starts (PMPI_File_get_byte_offset
 * of the explicit offset, or of the individual file pointer read with
 * PMPI_File_get_position before the call; -1 for the shared file pointer,
 * whose position other ranks move), the bytes asked for (count x
 * PMPI_Type_size_x, 64-bit), whether the call is collective, and the bytes
 * transferred (PMPI_Get_elements_x on MPI_BYTE of the status; -1 when
 * unknown), or the request id of a nonblocking one (its completion, by the
 * wrappers of mpi_wrap.c, records the same id). A seek records where the
 * pointer is after it (the same two queries), the query calls what they
 * returned. The MPI-4 large-count forms (_c, when mpi.h says MPI_VERSION
 * >= 4) record the events of their int forms.
 *
 * On a file opened MPI_MODE_SEQUENTIAL no position or byte offset is asked
 * (the offsets are -1): ROMIO rejects those queries there (even
 * seek_shared and get_position_shared, which the standard allows) and an
 * error of ours would reach the file's error handler, fatal under
 * MPI_ERRORS_ARE_FATAL, a spurious call of a program's own handler.
 *
 * The file table maps a handle to its id, path, whether it is sequential,
 * and the offset and size of the split collective begun on it (the standard allows one at a time per
 * handle), behind its lock (struct mw_ids: never held with another lock).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

_Static_assert(sizeof(MPI_File) <= sizeof(uint64_t), "MPI_File handle");

#define FILE_TAB_MAX 65536u

#define MW_TABLE "sensor/mpi_io.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* How a data access finds its offset. */
enum { OFF_AT, OFF_IND, OFF_SHARED };

struct file_rec {
	int64_t id;
	char *path;		/* as opened, NUL-terminated; NULL: unknown */
	size_t len;
	int seq;		/* opened MPI_MODE_SEQUENTIAL */
	int64_t split_off;	/* the split collective begun: offset, bytes */
	int64_t split_bytes;
};

/* What an event needs of a file: path stays valid until its close. */
struct file_info {
	int64_t id;		/* 0: a handle we did not see opened */
	const char *path;
	size_t len;
};

static void file_drop(void *rec)
{
	free(((struct file_rec *)rec)->path);
}

static struct mw_ids files = MW_IDS_INIT(struct file_rec, 16, FILE_TAB_MAX,
					 file_drop);

/* Register the file just opened under a fresh id (returned, 0 when the
 * table is full or out of memory). */
static int64_t file_added(MPI_File f, const char *path, int amode)
{
	struct file_rec *r = mw_ids_add(&files, MW_KEY(f));
	int64_t id = 0;

	if (r) {
		id = r->id;
		r->path = path ? strndup(path, PROTO_STRING_MAX) : NULL;
		r->len = r->path ? strlen(r->path) : 0;
		r->seq = (amode & MPI_MODE_SEQUENTIAL) != 0;
		r->split_off = -1;
		r->split_bytes = 0;
	}
	mw_ids_unlock(&files);
	return id;
}

static struct file_info file_info(MPI_File f)
{
	struct file_info fi = {0, NULL, 0};
	struct file_rec *r = mw_ids_get(&files, MW_KEY(f));

	if (r) {
		fi.id = r->id;
		fi.path = r->path;
		fi.len = r->len;
	}
	mw_ids_unlock(&files);
	return fi;
}

/* 1 when the position and byte offset queries may be made on f while
 * recording: not on a sequential file (above). */
static int file_queryable(const struct mw_call *c, MPI_File f)
{
	struct file_rec *r;
	int seq;

	if (!c->on || f == MPI_FILE_NULL)
		return 0;
	r = mw_ids_get(&files, MW_KEY(f));
	seq = r && r->seq;
	mw_ids_unlock(&files);
	return !seq;
}

/* Remember (set) or take back (!set) the split collective of f. */
static void file_split(MPI_File f, int set, int64_t *off, int64_t *bytes)
{
	struct file_rec *r = mw_ids_get(&files, MW_KEY(f));

	if (r && set) {
		r->split_off = *off;
		r->split_bytes = *bytes;
	} else if (!set) {
		*off = r ? r->split_off : -1;
		*bytes = r ? r->split_bytes : 0;
		if (r) {
			r->split_off = -1;
			r->split_bytes = 0;
		}
	}
	mw_ids_unlock(&files);
}

/* ---- helpers ----------------------------------------------------------- */

static int64_t path_id(const struct mw_call *c, const char *path, size_t len)
{
	return c->on && path && len ? sn_string(path, len) : 0;
}

/* Bytes a completed access transferred per its status, -1 unknown. */
static int64_t status_bytes(int rc, const MPI_Status *st)
{
	MPI_Count n = 0;

	if (rc != MPI_SUCCESS ||
	    PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n == MPI_UNDEFINED || n < 0)
		return -1;
	return (int64_t)n;
}

/* The absolute byte offset where an access of fh starts (how: OFF_*; off:
 * the explicit offset, in etypes of the view), -1 when it cannot be known
 * (shared file pointer, failed query). Queried only while recording. */
static int64_t io_offset(const struct mw_call *c, MPI_File fh, int how,
			 MPI_Offset off)
{
	MPI_Offset pos = off, byte = 0;

	if (how == OFF_SHARED || !file_queryable(c, fh))
		return -1;
	if (how == OFF_IND && PMPI_File_get_position(fh, &pos) != MPI_SUCCESS)
		return -1;
	if (PMPI_File_get_byte_offset(fh, pos, &byte) != MPI_SUCCESS)
		return -1;
	return (int64_t)byte;
}

/* A data access's event: file, path, offset, bytes, coll, last. */
static void io_args(struct mw_call *c, MPI_File fh, int64_t off,
		    int64_t bytes, int coll, int64_t last)
{
	struct file_info fi;

	if (!c->on)
		return;
	fi = file_info(fh);
	proto_args_set(c->arg, fi.id, path_id(c, fi.path, fi.len), off, bytes,
		       coll, last);
}

static void io_blocking(struct mw_call *c, int rc, MPI_File fh, int64_t off,
			int64_t bytes, int coll, const MPI_Status *st)
{
	io_args(c, fh, off, bytes, coll, c->on ? status_bytes(rc, st) : -1);
}

/* A nonblocking access: its request gets an id even when not recording
 * (the completion looks it up either way). */
static void io_started(struct mw_call *c, int rc, MPI_File fh, int64_t off,
		       int64_t bytes, int coll, const MPI_Request *req)
{
	int64_t rid = 0;

	if (rc == MPI_SUCCESS)
		rid = mw_req_io(req, bytes);
	io_args(c, fh, off, bytes, coll, rid);
}

static void io_begun(struct mw_call *c, int rc, MPI_File fh, int64_t off,
		     int64_t bytes)
{
	if (rc == MPI_SUCCESS)
		file_split(fh, 1, &off, &bytes);
	io_args(c, fh, off, bytes, 1, 0);
}

static void io_ended(struct mw_call *c, int rc, MPI_File fh,
		     const MPI_Status *st)
{
	int64_t off = -1, bytes = 0;

	file_split(fh, 0, &off, &bytes);
	io_blocking(c, rc, fh, off, bytes, 1, st);
}

/* ---- file management ----------------------------------------------------- */

static int do_File_open(struct mw_call *c, MPI_Comm comm, const char *filename,
			int amode, MPI_Info info, MPI_File *fh)
{
	int rc = next_File_open(comm, filename, amode, info, fh);
	int64_t id = 0;

	if (rc == MPI_SUCCESS && fh)
		id = file_added(*fh, filename, amode);
	if (c->on)
		proto_args_set(c->arg, id,
			       path_id(c, filename, filename ?
				       strnlen(filename, PROTO_STRING_MAX) : 0),
			       mw_comm_id(comm, 0, NULL), amode, 1, 0);
	return rc;
}

static int do_File_close(struct mw_call *c, MPI_File *fh)
{
	MPI_File f = fh ? *fh : MPI_FILE_NULL;
	struct file_info fi = file_info(f);
	int rc = next_File_close(fh);

	/* the path is freed with the entry: its string id first */
	proto_args_set(c->arg, fi.id, path_id(c, fi.path, fi.len), 1, 0, 0, 0);
	if (rc == MPI_SUCCESS && f != MPI_FILE_NULL)
		mw_ids_del(&files, MW_KEY(f));
	return rc;
}

static int do_File_delete(struct mw_call *c, const char *filename,
			  MPI_Info info)
{
	int rc = next_File_delete(filename, info);

	proto_args_set(c->arg, path_id(c, filename, filename ?
				       strnlen(filename, PROTO_STRING_MAX) : 0),
		       0, 0, 0, 0, 0);
	return rc;
}

/* file, path, then a0..a3 */
static void file_args(struct mw_call *c, MPI_File fh, int64_t a0, int64_t a1,
		      int64_t a2, int64_t a3)
{
	struct file_info fi;

	if (!c->on)
		return;
	fi = file_info(fh);
	proto_args_set(c->arg, fi.id, path_id(c, fi.path, fi.len), a0, a1, a2,
		       a3);
}

static int do_File_set_size(struct mw_call *c, MPI_File fh, MPI_Offset size)
{
	int rc = next_File_set_size(fh, size);

	file_args(c, fh, size, 1, 0, 0);
	return rc;
}

static int do_File_preallocate(struct mw_call *c, MPI_File fh,
			       MPI_Offset size)
{
	int rc = next_File_preallocate(fh, size);

	file_args(c, fh, size, 1, 0, 0);
	return rc;
}

static int do_File_sync(struct mw_call *c, MPI_File fh)
{
	int rc = next_File_sync(fh);

	file_args(c, fh, 1, 0, 0, 0);
	return rc;
}

static int do_File_set_view(struct mw_call *c, MPI_File fh, MPI_Offset disp,
			    MPI_Datatype etype, MPI_Datatype filetype,
			    const char *datarep, MPI_Info info)
{
	int rc = next_File_set_view(fh, disp, etype, filetype, datarep, info);

	file_args(c, fh, disp, mw_type_bytes(etype, 1), mw_type_bytes(filetype, 1),
		  1);
	return rc;
}

/* ---- file pointers, views and queries --------------------------------- */

/* The absolute byte offset of fh's individual (shared: 0) or shared file
 * pointer, -1 when it cannot be known. Queried only while recording. */
static int64_t pointer_pos(const struct mw_call *c, MPI_File fh, int shared)
{
	MPI_Offset pos = 0, byte = 0;
	int rc;

	if (!file_queryable(c, fh))
		return -1;
	rc = shared ? PMPI_File_get_position_shared(fh, &pos) :
		PMPI_File_get_position(fh, &pos);
	if (rc != MPI_SUCCESS ||
	    PMPI_File_get_byte_offset(fh, pos, &byte) != MPI_SUCCESS)
		return -1;
	return (int64_t)byte;
}

/* A seek: the offset asked (etypes), whence, where the pointer is now
 * (bytes), collective for the shared pointer. */
static int do_File_seek(struct mw_call *c, MPI_File fh, MPI_Offset offset,
			int whence)
{
	int rc = next_File_seek(fh, offset, whence);

	file_args(c, fh, offset, whence, pointer_pos(c, fh, 0), 0);
	return rc;
}

static int do_File_seek_shared(struct mw_call *c, MPI_File fh,
			       MPI_Offset offset, int whence)
{
	int rc = next_File_seek_shared(fh, offset, whence);

	file_args(c, fh, offset, whence, pointer_pos(c, fh, 1), 1);
	return rc;
}

/* An offset returned (-1 when the call failed) and its byte position. */
static void got_offset(struct mw_call *c, int rc, MPI_File fh,
		       const MPI_Offset *off)
{
	MPI_Offset byte = -1;

	if (rc == MPI_SUCCESS && off && file_queryable(c, fh) &&
	    PMPI_File_get_byte_offset(fh, *off, &byte) != MPI_SUCCESS)
		byte = -1;
	file_args(c, fh, rc == MPI_SUCCESS && off ? *off : -1, byte, 0, 0);
}

static int do_File_get_position(struct mw_call *c, MPI_File fh,
				MPI_Offset *offset)
{
	int rc = next_File_get_position(fh, offset);

	got_offset(c, rc, fh, offset);
	return rc;
}

static int do_File_get_position_shared(struct mw_call *c, MPI_File fh,
				       MPI_Offset *offset)
{
	int rc = next_File_get_position_shared(fh, offset);

	got_offset(c, rc, fh, offset);
	return rc;
}

static int do_File_get_byte_offset(struct mw_call *c, MPI_File fh,
				   MPI_Offset offset, MPI_Offset *disp)
{
	int rc = next_File_get_byte_offset(fh, offset, disp);

	file_args(c, fh, offset, rc == MPI_SUCCESS && disp ? *disp : -1, 0, 0);
	return rc;
}

static int do_File_get_size(struct mw_call *c, MPI_File fh, MPI_Offset *size)
{
	int rc = next_File_get_size(fh, size);

	file_args(c, fh, rc == MPI_SUCCESS && size ? *size : -1, 0, 0, 0);
	return rc;
}

/* The view returned, as File_set_view records it (the types' sizes). */
static int do_File_get_view(struct mw_call *c, MPI_File fh, MPI_Offset *disp,
			    MPI_Datatype *etype, MPI_Datatype *filetype,
			    char *datarep)
{
	int rc = next_File_get_view(fh, disp, etype, filetype, datarep);
	int ok = rc == MPI_SUCCESS && disp && etype && filetype;

	file_args(c, fh, ok ? *disp : -1, ok ? mw_type_bytes(*etype, 1) : -1,
		  ok ? mw_type_bytes(*filetype, 1) : -1, 0);
	return rc;
}

static int do_File_set_atomicity(struct mw_call *c, MPI_File fh, int flag)
{
	int rc = next_File_set_atomicity(fh, flag);

	file_args(c, fh, flag != 0, 1, 0, 0);
	return rc;
}

static int do_File_get_atomicity(struct mw_call *c, MPI_File fh, int *flag)
{
	int rc = next_File_get_atomicity(fh, flag);

	file_args(c, fh, rc == MPI_SUCCESS && flag ? *flag != 0 : -1, 0, 0, 0);
	return rc;
}

/* The number of keys of info, -1 unknown (MPI_INFO_NULL has none). */
static int64_t info_nkeys(const struct mw_call *c, MPI_Info info)
{
	int n = 0;

	if (!c->on)
		return -1;
	if (info == MPI_INFO_NULL)
		return 0;
	return PMPI_Info_get_nkeys(info, &n) == MPI_SUCCESS ? n : -1;
}

static int do_File_set_info(struct mw_call *c, MPI_File fh, MPI_Info info)
{
	int rc = next_File_set_info(fh, info);

	file_args(c, fh, info_nkeys(c, info), 1, 0, 0);
	return rc;
}

static int do_File_get_info(struct mw_call *c, MPI_File fh,
			    MPI_Info *info_used)
{
	int rc = next_File_get_info(fh, info_used);

	file_args(c, fh, rc == MPI_SUCCESS && info_used ?
		  info_nkeys(c, *info_used) : -1, 0, 0, 0);
	return rc;
}

static int do_File_get_amode(struct mw_call *c, MPI_File fh, int *amode)
{
	int rc = next_File_get_amode(fh, amode);

	file_args(c, fh, rc == MPI_SUCCESS && amode ? *amode : -1, 0, 0, 0);
	return rc;
}

/* the group's size, -1 unknown */
static int do_File_get_group(struct mw_call *c, MPI_File fh, MPI_Group *group)
{
	int rc = next_File_get_group(fh, group), n = -1;

	if (rc != MPI_SUCCESS || !group || !c->on ||
	    PMPI_Group_size(*group, &n) != MPI_SUCCESS)
		n = -1;
	file_args(c, fh, n, 0, 0, 0);
	return rc;
}

/* ---- reads and writes ------------------------------------------------------
 * Every data access, defined by its form: IO_RW (KIND BLOCKING: a
 * status; START: a request), IO_BEGIN / IO_END (a split collective). BUF
 * is the buffer's type (void, const void); HOW how its offset is found
 * (OFF_AT: the explicit offset argument, which the _at forms take);
 * COLL whether it is collective. */
#define IO_OFFSET_PARAM_OFF_AT MPI_Offset offset,
#define IO_OFFSET_PARAM_OFF_IND
#define IO_OFFSET_PARAM_OFF_SHARED
#define IO_OFFSET_ARG_OFF_AT offset,
#define IO_OFFSET_ARG_OFF_IND
#define IO_OFFSET_ARG_OFF_SHARED
#define IO_OFFSET_OFF_AT offset
#define IO_OFFSET_OFF_IND 0
#define IO_OFFSET_OFF_SHARED 0

/* what a blocking access (a status) and a nonblocking one (a request)
 * take last, and record with */
#define IO_LAST_BLOCKING MPI_Status *status
#define IO_LAST_START MPI_Request *req
#define IO_PRE_BLOCKING \
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
#define IO_PRE_START
#define IO_ARG_BLOCKING st
#define IO_ARG_START req
#define IO_RECORD_BLOCKING io_blocking
#define IO_RECORD_START io_started

/* CNT: the count's type (MPI_Count for the MPI-4 large-count forms) */
#define IO_RW_T(name, BUF, HOW, COLL, KIND, CNT) \
static int do_##name(struct mw_call *c, MPI_File fh, \
		     IO_OFFSET_PARAM_##HOW BUF *buf, CNT count, \
		     MPI_Datatype type, IO_LAST_##KIND) \
{ \
	IO_PRE_##KIND \
	int64_t off = io_offset(c, fh, HOW, IO_OFFSET_##HOW); \
	int rc = next_##name(fh, IO_OFFSET_ARG_##HOW buf, count, type, \
			     IO_ARG_##KIND); \
\
	IO_RECORD_##KIND(c, rc, fh, off, mw_type_bytes(type, count), COLL, \
			 IO_ARG_##KIND); \
	return rc; \
}

#define IO_BEGIN(name, BUF, HOW) \
static int do_##name(struct mw_call *c, MPI_File fh, \
		     IO_OFFSET_PARAM_##HOW BUF *buf, int count, \
		     MPI_Datatype type) \
{ \
	int64_t off = io_offset(c, fh, HOW, IO_OFFSET_##HOW); \
	int rc = next_##name(fh, IO_OFFSET_ARG_##HOW buf, count, type); \
\
	io_begun(c, rc, fh, off, mw_type_bytes(type, count)); \
	return rc; \
}

#define IO_END(name, BUF) \
static int do_##name(struct mw_call *c, MPI_File fh, BUF *buf, \
		     MPI_Status *status) \
{ \
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status; \
	int rc = next_##name(fh, buf, st); \
\
	io_ended(c, rc, fh, st); \
	return rc; \
}

/* A read and the write of the same form (CNT: the count's type) */
#define IO_PAIR_T(rd, wr, HOW, COLL, KIND, CNT) \
	IO_RW_T(File_##rd, void, HOW, COLL, KIND, CNT) \
	IO_RW_T(File_##wr, const void, HOW, COLL, KIND, CNT)
#define IO_PAIR(rd, wr, HOW, COLL, KIND) IO_PAIR_T(rd, wr, HOW, COLL, KIND, int)
/* A pair MPI-4 also has in a large-count form (NAME_c: an MPI_Count
 * count, the event of the int form), when the MPI has it. */
#if MPI_VERSION >= 4
#define IO_PAIR_L(rd, wr, HOW, COLL, KIND) IO_PAIR(rd, wr, HOW, COLL, KIND) \
	IO_PAIR_T(rd##_c, wr##_c, HOW, COLL, KIND, MPI_Count)
#else
#define IO_PAIR_L IO_PAIR
#endif
#define IO_SPLIT(rd, wr, HOW) \
	IO_BEGIN(File_##rd##_begin, void, HOW) \
	IO_END(File_##rd##_end, void) \
	IO_BEGIN(File_##wr##_begin, const void, HOW) \
	IO_END(File_##wr##_end, const void)

/* blocking: explicit offset, individual file pointer, shared one */
IO_PAIR_L(read_at, write_at, OFF_AT, 0, BLOCKING)
IO_PAIR_L(read_at_all, write_at_all, OFF_AT, 1, BLOCKING)
IO_PAIR_L(read, write, OFF_IND, 0, BLOCKING)
IO_PAIR_L(read_all, write_all, OFF_IND, 1, BLOCKING)
IO_PAIR(read_shared, write_shared, OFF_SHARED, 0, BLOCKING)
IO_PAIR(read_ordered, write_ordered, OFF_SHARED, 1, BLOCKING)
/* nonblocking (no ordered form) */
IO_PAIR_L(iread_at, iwrite_at, OFF_AT, 0, START)
IO_PAIR(iread_at_all, iwrite_at_all, OFF_AT, 1, START)
IO_PAIR_L(iread, iwrite, OFF_IND, 0, START)
IO_PAIR(iread_all, iwrite_all, OFF_IND, 1, START)
IO_PAIR(iread_shared, iwrite_shared, OFF_SHARED, 0, START)
/* split collectives */
IO_SPLIT(read_at_all, write_at_all, OFF_AT)
IO_SPLIT(read_all, write_all, OFF_IND)
IO_SPLIT(read_ordered, write_ordered, OFF_SHARED)

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
