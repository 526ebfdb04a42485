/*
 * tests/sensor/mpi_io.c - MPI-IO through every form the sensor wraps.
 *
 *   mpi_io FILE EXPECT
 *
 * On any number of ranks (the tests use 4): writes FILE with explicit
 * offsets, the individual file pointer (through a view), nonblocking and
 * split collective calls, reads it back with the same forms, then uses the
 * shared file pointer (ordered and not), reopens the file read-only, and
 * deletes it; then a file FILE.seq opened MPI_MODE_SEQUENTIAL, under an
 * error handler that counts its calls: write_shared, seek_shared,
 * get_position_shared (ROMIO rejects the last two there, Open MPI's ompio
 * not), where the sensor records no position (-1) and must not make the
 * handler run for a query of its own. Every int written holds its own position in the file
 * (byte offset / 4), so any read can be checked. Each rank writes to
 * EXPECT.RANK one line per MPI-IO call it made, in order:
 *
 *   NAME field=value ...
 *
 * with what the program knows of the call (the file's id, its path, the
 * absolute byte offset, bytes asked for, whether collective, bytes
 * transferred; "req=+" for a request id the next completion must repeat:
 * each nonblocking call's request is completed by another of MPI_Wait,
 * MPI_Waitall, MPI_Waitsome, MPI_Testany, MPI_Testall, MPI_Testsome,
 * MPI_Waitany,
 * "failed=1" for a call that must fail), which the test compares with the
 * trace. stdout (rank 0) is deterministic: the error classes of the bad
 * calls and "mpi_io: ok", or what went wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "tests/sensor/mpi_verdict.h"

#define B 100			/* ints per access */
#define BY (B * 4)		/* bytes per access */

static int rank, size, bad;
static FILE *ex;
static const char *path;
static int buf[B];

/* buf holds the ints of the file's bytes [off, off + BY) */
static void fill(long long off)
{
	for (int i = 0; i < B; i++)
		buf[i] = (int)(off / 4 + i);
}

static void check(const char *what, long long off)
{
	for (int i = 0; i < B; i++)
		if (buf[i] != (int)(off / 4 + i)) {
			printf("rank %d: %s at %lld: int %d is %d, want %lld\n",
			       rank, what, off, i, buf[i], off / 4 + i);
			bad = 1;
			return;
		}
}

/* One expectation line: a data access on file id f. */
static void ex_rw(const char *name, int f, long long off, long long bytes,
		  int coll, const char *last)
{
	fprintf(ex, "%s file=%d path=%s offset=%lld bytes=%lld coll=%d %s\n",
		name, f, path, off, bytes, coll, last);
}

static void ex_done(const char *name, int f, long long off, int coll)
{
	ex_rw(name, f, off, BY, coll, "result=400");
}

static void ok(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		printf("rank %d: %s failed (%d)\n", rank, what, rc);
		bad = 1;
	}
}

/* Complete req by one of the completion calls (how, 0..6, see the top),
 * polling the Test ones until it is done. */
static void done(MPI_Request *req, MPI_Status *st, int how)
{
	int flag = 0, k, idx;
	MPI_Status *sts = st == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : st;

	switch (how) {
	case 0:
		ok(MPI_Wait(req, st), "wait");
		return;
	case 1:
		ok(MPI_Waitall(1, req, sts), "waitall");
		return;
	case 2:
		ok(MPI_Waitsome(1, req, &k, &idx, sts), "waitsome");
		return;
	case 3:
		while (!flag)
			ok(MPI_Testany(1, req, &k, &flag, st), "testany");
		return;
	case 4:
		while (!flag)
			ok(MPI_Testall(1, req, &flag, sts), "testall");
		return;
	case 5:
		for (k = 0; k != 1;)
			ok(MPI_Testsome(1, req, &k, &idx, sts), "testsome");
		return;
	default:
		ok(MPI_Waitany(1, req, &k, st), "waitany");
	}
}

/* The individual file pointer moved to off (etypes of the view at disp:
 * ints): where the sensor must find it. */
static void seek(MPI_File fh, long long off, long long disp)
{
	ok(MPI_File_seek(fh, off, MPI_SEEK_SET), "seek");
	fprintf(ex, "MPI_File_seek file=1 path=%s voffset=%lld whence=%d pos=%lld coll=0\n",
		path, off, MPI_SEEK_SET, disp + off * 4);
}

/* The shared one: its position after the call is only known to be past
 * the view's start (the other ranks' ordered accesses may move it). */
static void seek_shared(MPI_File fh, long long off)
{
	ok(MPI_File_seek_shared(fh, off, MPI_SEEK_SET), "seek_shared");
	fprintf(ex, "MPI_File_seek_shared file=1 path=%s voffset=%lld whence=%d pos=+ coll=1\n",
		path, off, MPI_SEEK_SET);
}

/* Writes: explicit offsets [0, 2n) blocks, then through the view at
 * disp = 2n blocks: individual pointer, nonblocking, split collective. */
static void writes(MPI_File fh)
{
	long long n = size, disp = 2 * n * BY, off;
	MPI_Request req;
	MPI_Status st;

	off = rank * BY;
	fill(off);
	ok(MPI_File_write_at(fh, off, buf, B, MPI_INT, &st), "write_at");
	ex_done("MPI_File_write_at", 1, off, 0);
	off = (n + rank) * BY;
	fill(off);
	ok(MPI_File_write_at_all(fh, off, buf, B, MPI_INT, MPI_STATUS_IGNORE),
	   "write_at_all");
	ex_done("MPI_File_write_at_all", 1, off, 1);
	ok(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
	   "set_view");
	fprintf(ex, "MPI_File_set_view file=1 path=%s disp=%lld etype=4 ftype=4 coll=1\n",
		path, disp);
	/* offsets in the view are in ints */
	seek(fh, rank * B, disp);
	off = disp + rank * BY;
	fill(off);
	ok(MPI_File_write(fh, buf, B, MPI_INT, &st), "write");
	ex_done("MPI_File_write", 1, off, 0);
	seek(fh, (n + rank) * B, disp);
	off = disp + (n + rank) * BY;
	fill(off);
	ok(MPI_File_write_all(fh, buf, B, MPI_INT, &st), "write_all");
	ex_done("MPI_File_write_all", 1, off, 1);
	off = disp + (2 * n + rank) * BY;
	fill(off);
	ok(MPI_File_iwrite_at(fh, (2 * n + rank) * B, buf, B, MPI_INT, &req),
	   "iwrite_at");
	done(&req, &st, 0);
	ex_rw("MPI_File_iwrite_at", 1, off, BY, 0, "req=+ done=400");
	seek(fh, (3 * n + rank) * B, disp);
	off = disp + (3 * n + rank) * BY;
	fill(off);
	ok(MPI_File_iwrite_all(fh, buf, B, MPI_INT, &req), "iwrite_all");
	done(&req, MPI_STATUS_IGNORE, 1);
	ex_rw("MPI_File_iwrite_all", 1, off, BY, 1, "req=+ done=400");
	seek(fh, (4 * n + rank) * B, disp);
	off = disp + (4 * n + rank) * BY;
	fill(off);
	ok(MPI_File_write_all_begin(fh, buf, B, MPI_INT), "write_all_begin");
	ex_rw("MPI_File_write_all_begin", 1, off, BY, 1, "");
	ok(MPI_File_write_all_end(fh, buf, &st), "write_all_end");
	ex_done("MPI_File_write_all_end", 1, off, 1);
	off = disp + (5 * n + rank) * BY;
	fill(off);
	ok(MPI_File_write_at_all_begin(fh, (5 * n + rank) * B, buf, B, MPI_INT),
	   "write_at_all_begin");
	ex_rw("MPI_File_write_at_all_begin", 1, off, BY, 1, "");
	ok(MPI_File_write_at_all_end(fh, buf, &st), "write_at_all_end");
	ex_done("MPI_File_write_at_all_end", 1, off, 1);
	ok(MPI_File_sync(fh), "sync");
	fprintf(ex, "MPI_File_sync file=1 path=%s coll=1\n", path);
}

/* MPI_File_iread_at at view offset voff (ints past disp), completed by
 * MPI_Wait: the bytes its status says moved, which must be want (less
 * than asked), are what its completion must record. */
static __attribute__((unused)) void short_iread(MPI_File fh, long long voff,
						long long disp, int want)
{
	MPI_Request req;
	MPI_Status st;
	char last[64];
	int got = -1;

	ok(MPI_File_iread_at(fh, voff, buf, B, MPI_INT, &req), "iread_at end");
	ok(MPI_Wait(&req, &st), "wait end");
	ok(MPI_Get_count(&st, MPI_BYTE, &got), "get_count");
	if (got != want) {
		printf("rank %d: iread_at across the end moved %d bytes, want %d\n",
		       rank, got, want);
		bad = 1;
	}
	snprintf(last, sizeof(last), "req=+ done=%d", got);
	ex_rw("MPI_File_iread_at", 1, disp + voff * 4, BY, 0, last);
}

/* The same blocks read back with the read forms. */
static void reads(MPI_File fh)
{
	long long n = size, disp = 2 * n * BY, off;
	MPI_Request req;
	MPI_Status st;

	MPI_Barrier(MPI_COMM_WORLD);
	off = disp + rank * BY;
	ok(MPI_File_read_at(fh, rank * B, buf, B, MPI_INT, &st), "read_at");
	check("read_at", off);
	ex_done("MPI_File_read_at", 1, off, 0);
	off = disp + (n + rank) * BY;
	ok(MPI_File_read_at_all(fh, (n + rank) * B, buf, B, MPI_INT,
				MPI_STATUS_IGNORE), "read_at_all");
	check("read_at_all", off);
	ex_done("MPI_File_read_at_all", 1, off, 1);
	seek(fh, (2 * n + rank) * B, disp);
	off = disp + (2 * n + rank) * BY;
	ok(MPI_File_read(fh, buf, B, MPI_INT, &st), "read");
	check("read", off);
	ex_done("MPI_File_read", 1, off, 0);
	seek(fh, (3 * n + rank) * B, disp);
	off = disp + (3 * n + rank) * BY;
	ok(MPI_File_read_all(fh, buf, B, MPI_INT, &st), "read_all");
	check("read_all", off);
	ex_done("MPI_File_read_all", 1, off, 1);
	off = disp + (4 * n + rank) * BY;
	ok(MPI_File_iread_at(fh, (4 * n + rank) * B, buf, B, MPI_INT, &req),
	   "iread_at");
	done(&req, &st, 2);
	ex_rw("MPI_File_iread_at", 1, off, BY, 0, "req=+ done=400");
	check("iread_at", off);
	seek(fh, (5 * n + rank) * B, disp);
	off = disp + (5 * n + rank) * BY;
	ok(MPI_File_iread(fh, buf, B, MPI_INT, &req), "iread");
	done(&req, &st, 3);
	ex_rw("MPI_File_iread", 1, off, BY, 0, "req=+ done=400");
	check("iread", off);
	off = disp + rank * BY;
	ok(MPI_File_iread_at_all(fh, rank * B, buf, B, MPI_INT, &req),
	   "iread_at_all");
	done(&req, &st, 4);
	ex_rw("MPI_File_iread_at_all", 1, off, BY, 1, "req=+ done=400");
	check("iread_at_all", off);
	seek(fh, (n + rank) * B, disp);
	off = disp + (n + rank) * BY;
	ok(MPI_File_read_all_begin(fh, buf, B, MPI_INT), "read_all_begin");
	ex_rw("MPI_File_read_all_begin", 1, off, BY, 1, "");
	ok(MPI_File_read_all_end(fh, buf, &st), "read_all_end");
	check("read_all_end", off);
	ex_done("MPI_File_read_all_end", 1, off, 1);
	off = disp + (2 * n + rank) * BY;
	ok(MPI_File_read_at_all_begin(fh, (2 * n + rank) * B, buf, B, MPI_INT),
	   "read_at_all_begin");
	ex_rw("MPI_File_read_at_all_begin", 1, off, BY, 1, "");
	ok(MPI_File_read_at_all_end(fh, buf, MPI_STATUS_IGNORE), "read_at_all_end");
	check("read_at_all_end", off);
	ex_done("MPI_File_read_at_all_end", 1, off, 1);
	/* zero count: nothing asked, nothing moved */
	ok(MPI_File_write_at(fh, 0, buf, 0, MPI_INT, MPI_STATUS_IGNORE), "write_at 0");
	ex_rw("MPI_File_write_at", 1, disp, 0, 0, "result=0");
	/* past the end: 0 bytes transferred */
	ok(MPI_File_read_at(fh, 1000 * n * B, buf, B, MPI_INT, &st), "read_at eof");
	ex_rw("MPI_File_read_at", 1, disp + 1000 * n * BY, BY, 0, "result=0");
	/* nonblocking past the end: nothing moves, and the completion
	 * records what the status says, not what was asked. Not under Open
	 * MPI: 4.1's ompio never completes a nonblocking read that reaches
	 * the end of the file (its aio progress submits the rest again and
	 * again), traced or not */
#ifndef OMPI_MAJOR_VERSION
	short_iread(fh, 1000 * n * B, disp, 0);
#endif
}

/* The pointer and view queries, a relative seek and the read after it,
 * atomicity and info hints, on the view at disp (the shared pointer at
 * its start: nothing moved it since the view was set). */
static void queries(MPI_File fh)
{
	long long n = size, disp = 2 * n * BY, off;
	MPI_Offset o, sz;
	MPI_Datatype et, ft;
	MPI_Info info, used;
	MPI_Status st;
	char rep[MPI_MAX_DATAREP_STRING];
	int flag, nk = -1, amode = -1;
	MPI_Group group;

	seek(fh, rank * B, disp);
	ok(MPI_File_seek(fh, B, MPI_SEEK_CUR), "seek cur");
	off = disp + (rank + 1) * BY;
	fprintf(ex, "MPI_File_seek file=1 path=%s voffset=%d whence=%d pos=%lld coll=0\n",
		path, B, MPI_SEEK_CUR, off);
	ok(MPI_File_get_position(fh, &o), "get_position");
	fprintf(ex, "MPI_File_get_position file=1 path=%s voffset=%lld pos=%lld\n",
		path, (long long)o, off);
	ok(MPI_File_read(fh, buf, B, MPI_INT, &st), "read after seek");
	check("read after seek", off);
	ex_done("MPI_File_read", 1, off, 0);
	ok(MPI_File_get_position_shared(fh, &o), "get_position_shared");
	fprintf(ex, "MPI_File_get_position_shared file=1 path=%s voffset=0 pos=%lld\n",
		path, disp);
	ok(MPI_File_get_byte_offset(fh, 3, &o), "get_byte_offset");
	fprintf(ex, "MPI_File_get_byte_offset file=1 path=%s voffset=3 pos=%lld\n",
		path, (long long)o);
	if (o != disp + 12) {
		printf("rank %d: byte offset %lld\n", rank, (long long)o);
		bad = 1;
	}
	ok(MPI_File_get_size(fh, &sz), "get_size");
	fprintf(ex, "MPI_File_get_size file=1 path=%s fsize=%lld\n", path, (long long)sz);
	ok(MPI_File_get_view(fh, &o, &et, &ft, rep), "get_view");
	fprintf(ex, "MPI_File_get_view file=1 path=%s disp=%lld etype=4 ftype=4\n",
		path, disp);
	ok(MPI_File_set_atomicity(fh, 1), "set_atomicity");
	fprintf(ex, "MPI_File_set_atomicity file=1 path=%s flag=1 coll=1\n", path);
	ok(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
	fprintf(ex, "MPI_File_get_atomicity file=1 path=%s flag=%d\n", path, flag != 0);
	ok(MPI_File_set_atomicity(fh, 0), "set_atomicity 0");
	fprintf(ex, "MPI_File_set_atomicity file=1 path=%s flag=0 coll=1\n", path);
	MPI_Info_create(&info);
	MPI_Info_set(info, "access_style", "read_mostly");
	ok(MPI_File_set_info(fh, info), "set_info");
	fprintf(ex, "MPI_File_set_info file=1 path=%s nkeys=1 coll=1\n", path);
	MPI_Info_free(&info);
	ok(MPI_File_get_info(fh, &used), "get_info");
	MPI_Info_get_nkeys(used, &nk);
	fprintf(ex, "MPI_File_get_info file=1 path=%s nkeys=%d\n", path, nk);
	MPI_Info_free(&used);
	ok(MPI_File_get_amode(fh, &amode), "get_amode");
	fprintf(ex, "MPI_File_get_amode file=1 path=%s flags=%d\n", path, amode);
	ok(MPI_File_get_group(fh, &group), "get_group");
	MPI_Group_size(group, &nk);
	fprintf(ex, "MPI_File_get_group file=1 path=%s count=%d\n", path, nk);
	MPI_Group_free(&group);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* The shared file pointer (offsets unknown to the sensor: -1): ordered
 * writes from the view's start, read back in order, then one ordered split
 * pair and the non-collective forms past them. */
static void shared(MPI_File fh)
{
	long long n = size, disp = 2 * n * BY, off;
	MPI_Request req;
	MPI_Status st;

	seek_shared(fh, 0);
	off = disp + rank * BY;
	fill(off);
	ok(MPI_File_write_ordered(fh, buf, B, MPI_INT, &st), "write_ordered");
	ex_done("MPI_File_write_ordered", 1, -1, 1);
	seek_shared(fh, 0);
	ok(MPI_File_read_ordered(fh, buf, B, MPI_INT, &st), "read_ordered");
	check("read_ordered", off);
	ex_done("MPI_File_read_ordered", 1, -1, 1);
	off = disp + (n + rank) * BY;
	fill(off);
	ok(MPI_File_write_ordered_begin(fh, buf, B, MPI_INT), "write_ordered_begin");
	ex_rw("MPI_File_write_ordered_begin", 1, -1, BY, 1, "");
	ok(MPI_File_write_ordered_end(fh, buf, &st), "write_ordered_end");
	ex_done("MPI_File_write_ordered_end", 1, -1, 1);
	seek_shared(fh, n * B);
	ok(MPI_File_read_ordered_begin(fh, buf, B, MPI_INT), "read_ordered_begin");
	ex_rw("MPI_File_read_ordered_begin", 1, -1, BY, 1, "");
	ok(MPI_File_read_ordered_end(fh, buf, &st), "read_ordered_end");
	check("read_ordered_end", off);
	ex_done("MPI_File_read_ordered_end", 1, -1, 1);
	/* each rank's block lands somewhere in [2n, 3n) blocks: contents
	 * are the same whoever writes first */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < B; i++)
		buf[i] = -1;
	ok(MPI_File_write_shared(fh, buf, B, MPI_INT, &st), "write_shared");
	ex_done("MPI_File_write_shared", 1, -1, 0);
	ok(MPI_File_iwrite_shared(fh, buf, B, MPI_INT, &req), "iwrite_shared");
	done(&req, &st, 5);
	ex_rw("MPI_File_iwrite_shared", 1, -1, BY, 0, "req=+ done=400");
	MPI_Barrier(MPI_COMM_WORLD);
	seek_shared(fh, 2 * n * B);
	ok(MPI_File_read_shared(fh, buf, B, MPI_INT, &st), "read_shared");
	ex_done("MPI_File_read_shared", 1, -1, 0);
	ok(MPI_File_iread_shared(fh, buf, B, MPI_INT, &req), "iread_shared");
	done(&req, &st, 6);
	ex_rw("MPI_File_iread_shared", 1, -1, BY, 0, "req=+ done=400");
	for (int i = 0; i < B; i++)
		if (buf[i] != -1) {
			printf("rank %d: read_shared: int %d is %d\n", rank, i, buf[i]);
			bad = 1;
			break;
		}
}

/* Calls that fail: the error class is the library's, the event failed. */
static void errors(void)
{
	MPI_File nf = MPI_FILE_NULL;
	MPI_Status st;
	int rc, cls;

	rc = MPI_File_read_at(MPI_FILE_NULL, 0, buf, B, MPI_INT, &st);
	MPI_Error_class(rc, &cls);
	if (rank == 0)
		printf("read_at on MPI_FILE_NULL: class %d\n", cls);
	/* a handle never opened: no id, no path */
	fprintf(ex, "MPI_File_read_at file=0 path=0 offset=-1 bytes=%d coll=0 failed=1\n", BY);
	rc = MPI_File_open(MPI_COMM_SELF, "/nonexistent-dir/x", MPI_MODE_RDONLY,
			   MPI_INFO_NULL, &nf);
	MPI_Error_class(rc, &cls);
	if (rank == 0)
		printf("open of a missing file: %s\n", rc != MPI_SUCCESS ? "failed" : "worked");
	fprintf(ex, "MPI_File_open file=0 path=/nonexistent-dir/x comm=1 flags=%d coll=1 failed=1\n",
		MPI_MODE_RDONLY);
	if (rc == MPI_SUCCESS)
		MPI_File_close(&nf);
}

static int handler_calls;

static void count_err(MPI_File *fh, int *code, ...)
{
	(void)fh;
	(void)code;
	handler_calls++;
}

/* The MPI_MODE_SEQUENTIAL file (top): id 3. The error handler runs once
 * per call of ours that failed, never more. */
static void sequential(void)
{
	int amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL;
	const char *main_path = path;
	char sp[4096];
	MPI_Errhandler eh;
	MPI_Offset o = -1;
	MPI_Status st;
	MPI_File fh;
	int rc, fails = 0;

	snprintf(sp, sizeof(sp), "%s.seq", main_path);
	path = sp;
	ok(MPI_File_open(MPI_COMM_WORLD, sp, amode, MPI_INFO_NULL, &fh), "open seq");
	fprintf(ex, "MPI_File_open file=3 path=%s comm=0 flags=%d coll=1\n", sp, amode);
	MPI_File_create_errhandler(count_err, &eh);
	MPI_File_set_errhandler(fh, eh);
	fill(0);
	ok(MPI_File_write_shared(fh, buf, B, MPI_INT, &st), "write_shared seq");
	ex_done("MPI_File_write_shared", 3, -1, 0);
	rc = MPI_File_seek_shared(fh, 0, MPI_SEEK_END);
	fails += rc != MPI_SUCCESS;
	fprintf(ex, "MPI_File_seek_shared file=3 path=%s voffset=0 whence=%d pos=-1 coll=1%s\n",
		sp, MPI_SEEK_END, rc != MPI_SUCCESS ? " failed=1" : "");
	rc = MPI_File_get_position_shared(fh, &o);
	fails += rc != MPI_SUCCESS;
	fprintf(ex, "MPI_File_get_position_shared file=3 path=%s voffset=%lld pos=-1%s\n",
		sp, rc != MPI_SUCCESS ? -1LL : (long long)o,
		rc != MPI_SUCCESS ? " failed=1" : "");
	ok(MPI_File_close(&fh), "close seq");
	fprintf(ex, "MPI_File_close file=3 path=%s coll=1\n", sp);
	MPI_Errhandler_free(&eh);
	if (handler_calls != fails) {
		printf("rank %d: sequential file: error handler ran %d times for %d failed calls\n",
		       rank, handler_calls, fails);
		bad = 1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		ok(MPI_File_delete(sp, MPI_INFO_NULL), "delete seq");
		fprintf(ex, "MPI_File_delete path=%s\n", sp);
	}
	path = main_path;
}

int main(int argc, char **argv)
{
	int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
	MPI_File fh;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_io FILE EXPECT\n");
		MPI_Finalize();
		return 2;
	}
	path = argv[1];
	ex = mpi_expect(argv[2], rank);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	ok(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), "open");
	fprintf(ex, "MPI_File_open file=1 path=%s comm=0 flags=%d coll=1\n", path, amode);
	ok(MPI_File_set_size(fh, 0), "set_size");
	fprintf(ex, "MPI_File_set_size file=1 path=%s fsize=0 coll=1\n", path);
	ok(MPI_File_preallocate(fh, 8LL * size * BY), "preallocate");
	fprintf(ex, "MPI_File_preallocate file=1 path=%s fsize=%lld coll=1\n", path,
		8LL * size * BY);
	writes(fh);
	reads(fh);
	queries(fh);
	shared(fh);
	ok(MPI_File_close(&fh), "close");
	fprintf(ex, "MPI_File_close file=1 path=%s coll=1\n", path);
	/* a second open: id 2; the first blocks, explicit offsets, default view */
	ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
	   "reopen");
	fprintf(ex, "MPI_File_open file=2 path=%s comm=0 flags=%d coll=1\n", path,
		MPI_MODE_RDONLY);
	ok(MPI_File_read_at_all(fh, (long long)rank * BY, buf, B, MPI_INT, &st),
	   "read_at_all 2");
	check("read_at_all 2", (long long)rank * BY);
	fprintf(ex, "MPI_File_read_at_all file=2 path=%s offset=%lld bytes=%d coll=1 result=%d\n",
		path, (long long)rank * BY, BY, BY);
	ok(MPI_File_close(&fh), "close 2");
	fprintf(ex, "MPI_File_close file=2 path=%s coll=1\n", path);
	errors();
	sequential();
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		ok(MPI_File_delete(path, MPI_INFO_NULL), "delete");
		fprintf(ex, "MPI_File_delete path=%s\n", path);
	}
	fclose(ex);
	return mpi_verdict("mpi_io", rank, bad);
}
