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
 * wrappers of mpi_wrap.c, records the same id).
 *
 * The file table maps a handle to its id, path, and the offset and size of
 * the split collective begun on it (the standard allows one at a time per
 * handle), behind file_lock (never held with another lock).
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
	int64_t split_off;	/* the split collective begun: offset, bytes */
	int64_t split_bytes;
};

/* What an event needs of a file: path stays valid until its close. */
struct file_info {
	int64_t id;		/* 0: a handle we did not see opened */
	const char *path;
	size_t len;
};

static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mw_tab *file_tab;
static int64_t file_next = 1;

static uint64_t file_key(MPI_File f)
{
	uint64_t k = 0;

	memcpy(&k, &f, sizeof(f));
	return k;
}

/* Register the file just opened under a fresh id (returned, 0 when the
 * table is full or out of memory). */
static int64_t file_added(MPI_File f, const char *path)
{
	struct file_rec *r;
	int64_t id = 0;

	pthread_mutex_lock(&file_lock);
	if (!file_tab)
		file_tab = mw_tab_new(sizeof(struct file_rec), 16, FILE_TAB_MAX);
	/* a handle MPI reused after a close we did not see */
	if (file_tab && (r = mw_tab_get(file_tab, file_key(f)))) {
		free(r->path);
		mw_tab_del(file_tab, file_key(f));
	}
	r = file_tab ? mw_tab_put(file_tab, file_key(f), NULL) : NULL;
	if (r) {
		r->id = id = file_next++;
		r->path = path ? strndup(path, PROTO_STRING_MAX) : NULL;
		r->len = r->path ? strlen(r->path) : 0;
		r->split_off = -1;
		r->split_bytes = 0;
	}
	pthread_mutex_unlock(&file_lock);
	return id;
}

static struct file_info file_info(MPI_File f)
{
	struct file_info fi = {0, NULL, 0};
	struct file_rec *r;

	pthread_mutex_lock(&file_lock);
	if (file_tab && (r = mw_tab_get(file_tab, file_key(f)))) {
		fi.id = r->id;
		fi.path = r->path;
		fi.len = r->len;
	}
	pthread_mutex_unlock(&file_lock);
	return fi;
}

static void file_removed(uint64_t key)
{
	struct file_rec *r;

	pthread_mutex_lock(&file_lock);
	if (file_tab && (r = mw_tab_get(file_tab, key))) {
		free(r->path);
		mw_tab_del(file_tab, key);
	}
	pthread_mutex_unlock(&file_lock);
}

/* Remember (set) or take back (!set) the split collective of f. */
static void file_split(MPI_File f, int set, int64_t *off, int64_t *bytes)
{
	struct file_rec *r;

	pthread_mutex_lock(&file_lock);
	r = file_tab ? mw_tab_get(file_tab, file_key(f)) : NULL;
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
	pthread_mutex_unlock(&file_lock);
}

/* ---- helpers ----------------------------------------------------------- */

static int64_t path_id(const struct mw_call *c, const char *path, size_t len)
{
	return c->on && path && len ? sn_string(path, len) : 0;
}

static int64_t type_bytes(MPI_Datatype t, int count)
{
	MPI_Count sz = 0;

	if (t == MPI_DATATYPE_NULL || count <= 0)
		return 0;
	if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || sz < 0 ||
	    sz == MPI_UNDEFINED)
		return 0;
	return (int64_t)count * (int64_t)sz;
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

	if (!c->on || how == OFF_SHARED || fh == MPI_FILE_NULL)
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
		rid = mw_req_other(req, bytes);
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
		id = file_added(*fh, filename);
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
		file_removed(file_key(f));
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

	file_args(c, fh, disp, type_bytes(etype, 1), type_bytes(filetype, 1),
		  1);
	return rc;
}

/* ---- blocking reads and writes -------------------------------------------- */
static int do_File_read_at(struct mw_call *c, MPI_File fh, MPI_Offset offset,
			   void *buf, int count, MPI_Datatype type,
			   MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_read_at(fh, offset, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_read_at_all(struct mw_call *c, MPI_File fh,
			       MPI_Offset offset, void *buf, int count,
			       MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_read_at_all(fh, offset, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

static int do_File_write_at(struct mw_call *c, MPI_File fh, MPI_Offset offset,
			    const void *buf, int count, MPI_Datatype type,
			    MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_write_at(fh, offset, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_write_at_all(struct mw_call *c, MPI_File fh,
				MPI_Offset offset, const void *buf, int count,
				MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_write_at_all(fh, offset, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

static int do_File_read(struct mw_call *c, MPI_File fh, void *buf, int count,
			MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_read(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_read_all(struct mw_call *c, MPI_File fh, void *buf,
			    int count, MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_read_all(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

static int do_File_write(struct mw_call *c, MPI_File fh, const void *buf,
			 int count, MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_write(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_write_all(struct mw_call *c, MPI_File fh, const void *buf,
			     int count, MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_write_all(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

static int do_File_read_shared(struct mw_call *c, MPI_File fh, void *buf,
			       int count, MPI_Datatype type, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_read_shared(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_write_shared(struct mw_call *c, MPI_File fh, const void *buf,
				int count, MPI_Datatype type,
				MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_write_shared(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 0, st);
	return rc;
}

static int do_File_read_ordered(struct mw_call *c, MPI_File fh, void *buf,
				int count, MPI_Datatype type,
				MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_read_ordered(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

static int do_File_write_ordered(struct mw_call *c, MPI_File fh,
				 const void *buf, int count, MPI_Datatype type,
				 MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_write_ordered(fh, buf, count, type, st);

	io_blocking(c, rc, fh, off, type_bytes(type, count), 1, st);
	return rc;
}

/* ---- nonblocking reads and writes ----------------------------------------- */
static int do_File_iread_at(struct mw_call *c, MPI_File fh, MPI_Offset offset,
			    void *buf, int count, MPI_Datatype type,
			    MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_iread_at(fh, offset, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

static int do_File_iwrite_at(struct mw_call *c, MPI_File fh, MPI_Offset offset,
			     const void *buf, int count, MPI_Datatype type,
			     MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_iwrite_at(fh, offset, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

static int do_File_iread_at_all(struct mw_call *c, MPI_File fh,
				MPI_Offset offset, void *buf, int count,
				MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_iread_at_all(fh, offset, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 1, req);
	return rc;
}

static int do_File_iwrite_at_all(struct mw_call *c, MPI_File fh,
				 MPI_Offset offset, const void *buf, int count,
				 MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_iwrite_at_all(fh, offset, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 1, req);
	return rc;
}

static int do_File_iread(struct mw_call *c, MPI_File fh, void *buf, int count,
			 MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_iread(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

static int do_File_iwrite(struct mw_call *c, MPI_File fh, const void *buf,
			  int count, MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_iwrite(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

static int do_File_iread_all(struct mw_call *c, MPI_File fh, void *buf,
			     int count, MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_iread_all(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 1, req);
	return rc;
}

static int do_File_iwrite_all(struct mw_call *c, MPI_File fh, const void *buf,
			      int count, MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_iwrite_all(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 1, req);
	return rc;
}

static int do_File_iread_shared(struct mw_call *c, MPI_File fh, void *buf,
				int count, MPI_Datatype type, MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_iread_shared(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

static int do_File_iwrite_shared(struct mw_call *c, MPI_File fh,
				 const void *buf, int count, MPI_Datatype type,
				 MPI_Request *req)
{
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_iwrite_shared(fh, buf, count, type, req);

	io_started(c, rc, fh, off, type_bytes(type, count), 0, req);
	return rc;
}

/* ---- split collectives ---------------------------------------------------- */
static int do_File_read_at_all_begin(struct mw_call *c, MPI_File fh,
				     MPI_Offset offset, void *buf, int count,
				     MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_read_at_all_begin(fh, offset, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_read_at_all_end(struct mw_call *c, MPI_File fh, void *buf,
				   MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_read_at_all_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

static int do_File_write_at_all_begin(struct mw_call *c, MPI_File fh,
				      MPI_Offset offset, const void *buf,
				      int count, MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_AT, offset);
	int rc = next_File_write_at_all_begin(fh, offset, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_write_at_all_end(struct mw_call *c, MPI_File fh,
				    const void *buf, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_write_at_all_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

static int do_File_read_all_begin(struct mw_call *c, MPI_File fh, void *buf,
				  int count, MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_read_all_begin(fh, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_read_all_end(struct mw_call *c, MPI_File fh, void *buf,
				MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_read_all_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

static int do_File_write_all_begin(struct mw_call *c, MPI_File fh,
				   const void *buf, int count,
				   MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_IND, 0);
	int rc = next_File_write_all_begin(fh, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_write_all_end(struct mw_call *c, MPI_File fh,
				 const void *buf, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_write_all_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

static int do_File_read_ordered_begin(struct mw_call *c, MPI_File fh, void *buf,
				      int count, MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_read_ordered_begin(fh, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_read_ordered_end(struct mw_call *c, MPI_File fh, void *buf,
				    MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_read_ordered_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

static int do_File_write_ordered_begin(struct mw_call *c, MPI_File fh,
				       const void *buf, int count,
				       MPI_Datatype type)
{
	int64_t off = io_offset(c, fh, OFF_SHARED, 0);
	int rc = next_File_write_ordered_begin(fh, buf, count, type);

	io_begun(c, rc, fh, off, type_bytes(type, count));
	return rc;
}

static int do_File_write_ordered_end(struct mw_call *c, MPI_File fh,
				     const void *buf, MPI_Status *status)
{
	MPI_Status mine, *st = status == MPI_STATUS_IGNORE ? &mine : status;
	int rc = next_File_write_ordered_end(fh, buf, st);

	io_ended(c, rc, fh, st);
	return rc;
}

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
