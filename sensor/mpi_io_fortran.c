/*
 * sensor/mpi_io_fortran.c - Fortran bindings of the MPI-IO wrappers (Open
 * MPI).
 *
 * Open MPI's Fortran layer calls PMPI_File_* directly (nm -D
 * libmpi_mpifh.so: U PMPI_File_open), so, as sensor/mpi_fortran.c does for
 * the other calls, we define mpi_file_open_ and its manglings (mpi_file_open__,
 * mpi_file_open, MPI_FILE_OPEN) and ompi_file_open_f (what the mpi_f08 module
 * calls); each converts handles (PMPI_File_f2c, _Type_, _Info_, _Comm_,
 * _Request_c2f), Fortran strings (blank-padded, length passed after the
 * arguments), MPI_BOTTOM and MPI_STATUS_IGNORE, and calls our C wrapper.
 * MPICH's Fortran bindings call MPI_File_* through the PLT (nm -D
 * libmpichfort.so: U MPI_File_open): the C wrappers see them, and the MPICH
 * library is built without this file. The conversions repeat the few of
 * mpi_fortran.c these bindings need.
 */
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
extern int mpi_fortran_bottom_;
extern int mpi_fortran_status_ignore_;
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is a C int");

#define F_ALIAS(target) \
	__attribute__((alias(target), visibility("default")))
#define FDECL(lc, UC, short, params) \
	__attribute__((visibility("default"))) void lc##_ params; \
	extern __typeof__(lc##_) lc##__ F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) lc F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) UC F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) ompi_##short##_f F_ALIAS(#lc "_");

/* ---- conversions ------------------------------------------------------- */

static void *fbuf(void *b)
{
	return b == (void *)&mpi_fortran_bottom_ ? MPI_BOTTOM : b;
}

static int status_ignored(const MPI_Fint *f)
{
	return f == (const MPI_Fint *)&mpi_fortran_status_ignore_;
}

static void status_out(int rc, const MPI_Status *c, MPI_Fint *f)
{
	if (rc == MPI_SUCCESS && c != MPI_STATUS_IGNORE && !status_ignored(f))
		PMPI_Status_c2f(c, f);
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

/* A C copy of a Fortran string of len characters, trailing blanks cut
 * (free it); NULL when out of memory. */
static char *c_string(const char *f, int len)
{
	char *s;

	if (len < 0)
		len = 0;
	while (len > 0 && f[len - 1] == ' ')
		len--;
	if ((s = malloc((size_t)len + 1))) {
		memcpy(s, f, (size_t)len);
		s[len] = '\0';
	}
	return s;
}

/* ---- file management ----------------------------------------------------- */

FDECL(mpi_file_open, MPI_FILE_OPEN, file_open,
      (MPI_Fint *comm, char *filename, MPI_Fint *amode, MPI_Fint *info,
       MPI_Fint *fh, MPI_Fint *ierr, int filename_len))
void mpi_file_open_(MPI_Fint *comm, char *filename, MPI_Fint *amode,
		    MPI_Fint *info, MPI_Fint *fh, MPI_Fint *ierr,
		    int filename_len)
{
	char *name = c_string(filename, filename_len);
	MPI_File f = MPI_FILE_NULL;
	int rc;

	if (!name) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_File_open(PMPI_Comm_f2c(*comm), name, *amode,
			   PMPI_Info_f2c(*info), &f);
	free(name);
	if (rc == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_close, MPI_FILE_CLOSE, file_close,
      (MPI_Fint *fh, MPI_Fint *ierr))
void mpi_file_close_(MPI_Fint *fh, MPI_Fint *ierr)
{
	MPI_File f = PMPI_File_f2c(*fh);
	int rc = MPI_File_close(&f);

	if (rc == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_delete, MPI_FILE_DELETE, file_delete,
      (char *filename, MPI_Fint *info, MPI_Fint *ierr, int filename_len))
void mpi_file_delete_(char *filename, MPI_Fint *info, MPI_Fint *ierr,
		      int filename_len)
{
	char *name = c_string(filename, filename_len);

	if (!name) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	set_ierr(ierr, MPI_File_delete(name, PMPI_Info_f2c(*info)));
	free(name);
}

FDECL(mpi_file_set_size, MPI_FILE_SET_SIZE, file_set_size,
      (MPI_Fint *fh, MPI_Offset *size, MPI_Fint *ierr))
void mpi_file_set_size_(MPI_Fint *fh, MPI_Offset *size, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_set_size(PMPI_File_f2c(*fh), *size));
}

FDECL(mpi_file_preallocate, MPI_FILE_PREALLOCATE, file_preallocate,
      (MPI_Fint *fh, MPI_Offset *size, MPI_Fint *ierr))
void mpi_file_preallocate_(MPI_Fint *fh, MPI_Offset *size, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_preallocate(PMPI_File_f2c(*fh), *size));
}

FDECL(mpi_file_sync, MPI_FILE_SYNC, file_sync, (MPI_Fint *fh, MPI_Fint *ierr))
void mpi_file_sync_(MPI_Fint *fh, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_sync(PMPI_File_f2c(*fh)));
}

FDECL(mpi_file_set_view, MPI_FILE_SET_VIEW, file_set_view,
      (MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype,
       char *datarep, MPI_Fint *info, MPI_Fint *ierr, int datarep_len))
void mpi_file_set_view_(MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype,
			MPI_Fint *filetype, char *datarep, MPI_Fint *info,
			MPI_Fint *ierr, int datarep_len)
{
	char *rep = c_string(datarep, datarep_len);

	if (!rep) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	set_ierr(ierr, MPI_File_set_view(PMPI_File_f2c(*fh), *disp,
					 PMPI_Type_f2c(*etype),
					 PMPI_Type_f2c(*filetype), rep,
					 PMPI_Info_f2c(*info)));
	free(rep);
}

/* ---- reads and writes ---------------------------------------------------- */

FDECL(mpi_file_read_at, MPI_FILE_READ_AT, file_read_at,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_at_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
		       MPI_Fint *count, MPI_Fint *type, MPI_Fint *status,
		       MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_at(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				  *count, PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_at_all, MPI_FILE_READ_AT_ALL, file_read_at_all,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_at_all_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			   MPI_Fint *count, MPI_Fint *type, MPI_Fint *status,
			   MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_at_all(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				      *count, PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_at, MPI_FILE_WRITE_AT, file_write_at,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_at_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			MPI_Fint *count, MPI_Fint *type, MPI_Fint *status,
			MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_at(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				   *count, PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_at_all, MPI_FILE_WRITE_AT_ALL, file_write_at_all,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_at_all_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			    MPI_Fint *count, MPI_Fint *type, MPI_Fint *status,
			    MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_at_all(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				       *count, PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iread_at, MPI_FILE_IREAD_AT, file_iread_at,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr))
void mpi_file_iread_at_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
			MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iread_at(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				   *count, PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iwrite_at, MPI_FILE_IWRITE_AT, file_iwrite_at,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr))
void mpi_file_iwrite_at_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			 MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
			 MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite_at(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				    *count, PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iread_at_all, MPI_FILE_IREAD_AT_ALL, file_iread_at_all,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr))
void mpi_file_iread_at_all_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			    MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
			    MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iread_at_all(PMPI_File_f2c(*fh), *offset, fbuf(buf),
				       *count, PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iwrite_at_all, MPI_FILE_IWRITE_AT_ALL, file_iwrite_at_all,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr))
void mpi_file_iwrite_at_all_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
			     MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
			     MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite_at_all(PMPI_File_f2c(*fh), *offset, fbuf(buf),
					*count, PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read, MPI_FILE_READ, file_read,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
		    MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read(PMPI_File_f2c(*fh), fbuf(buf), *count,
			       PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_all, MPI_FILE_READ_ALL, file_read_all,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_all_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_all(PMPI_File_f2c(*fh), fbuf(buf), *count,
				   PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write, MPI_FILE_WRITE, file_write,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
		     MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write(PMPI_File_f2c(*fh), fbuf(buf), *count,
				PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_all, MPI_FILE_WRITE_ALL, file_write_all,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_all_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			 MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_all(PMPI_File_f2c(*fh), fbuf(buf), *count,
				    PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_shared, MPI_FILE_READ_SHARED, file_read_shared,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_shared_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			   MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_shared(PMPI_File_f2c(*fh), fbuf(buf), *count,
				      PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_shared, MPI_FILE_WRITE_SHARED, file_write_shared,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_shared_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			    MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_shared(PMPI_File_f2c(*fh), fbuf(buf), *count,
				       PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_ordered, MPI_FILE_READ_ORDERED, file_read_ordered,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_ordered_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			    MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_ordered(PMPI_File_f2c(*fh), fbuf(buf), *count,
				       PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_ordered, MPI_FILE_WRITE_ORDERED, file_write_ordered,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_ordered_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			     MPI_Fint *type, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_ordered(PMPI_File_f2c(*fh), fbuf(buf), *count,
					PMPI_Type_f2c(*type), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iread, MPI_FILE_IREAD, file_iread,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iread_(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
		     MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iread(PMPI_File_f2c(*fh), fbuf(buf), *count,
				PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iwrite, MPI_FILE_IWRITE, file_iwrite,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iwrite_(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
		      MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite(PMPI_File_f2c(*fh), fbuf(buf), *count,
				 PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iread_all, MPI_FILE_IREAD_ALL, file_iread_all,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iread_all_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			 MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iread_all(PMPI_File_f2c(*fh), fbuf(buf), *count,
				    PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iwrite_all, MPI_FILE_IWRITE_ALL, file_iwrite_all,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iwrite_all_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			  MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite_all(PMPI_File_f2c(*fh), fbuf(buf), *count,
				     PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iread_shared, MPI_FILE_IREAD_SHARED, file_iread_shared,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iread_shared_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			    MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iread_shared(PMPI_File_f2c(*fh), fbuf(buf), *count,
				       PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_iwrite_shared, MPI_FILE_IWRITE_SHARED, file_iwrite_shared,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_file_iwrite_shared_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			     MPI_Fint *type, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite_shared(PMPI_File_f2c(*fh), fbuf(buf), *count,
					PMPI_Type_f2c(*type), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_at_all_begin, MPI_FILE_READ_AT_ALL_BEGIN, file_read_at_all_begin,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *ierr))
void mpi_file_read_at_all_begin_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
				 MPI_Fint *count, MPI_Fint *type,
				 MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_read_at_all_begin(PMPI_File_f2c(*fh), *offset,
						  fbuf(buf), *count,
						  PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_write_at_all_begin, MPI_FILE_WRITE_AT_ALL_BEGIN, file_write_at_all_begin,
      (MPI_Fint *fh, MPI_Offset *offset, void *buf, MPI_Fint *count,
       MPI_Fint *type, MPI_Fint *ierr))
void mpi_file_write_at_all_begin_(MPI_Fint *fh, MPI_Offset *offset, void *buf,
				  MPI_Fint *count, MPI_Fint *type,
				  MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_write_at_all_begin(PMPI_File_f2c(*fh), *offset,
						   fbuf(buf), *count,
						   PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_read_all_begin, MPI_FILE_READ_ALL_BEGIN, file_read_all_begin,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *ierr))
void mpi_file_read_all_begin_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			      MPI_Fint *type, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_read_all_begin(PMPI_File_f2c(*fh), fbuf(buf),
					       *count, PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_write_all_begin, MPI_FILE_WRITE_ALL_BEGIN, file_write_all_begin,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *ierr))
void mpi_file_write_all_begin_(MPI_Fint *fh, void *buf, MPI_Fint *count,
			       MPI_Fint *type, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_write_all_begin(PMPI_File_f2c(*fh), fbuf(buf),
						*count, PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_read_ordered_begin, MPI_FILE_READ_ORDERED_BEGIN, file_read_ordered_begin,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *ierr))
void mpi_file_read_ordered_begin_(MPI_Fint *fh, void *buf, MPI_Fint *count,
				  MPI_Fint *type, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_read_ordered_begin(PMPI_File_f2c(*fh),
						   fbuf(buf), *count,
						   PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_write_ordered_begin, MPI_FILE_WRITE_ORDERED_BEGIN, file_write_ordered_begin,
      (MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *type,
       MPI_Fint *ierr))
void mpi_file_write_ordered_begin_(MPI_Fint *fh, void *buf, MPI_Fint *count,
				   MPI_Fint *type, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_File_write_ordered_begin(PMPI_File_f2c(*fh),
						    fbuf(buf), *count,
						    PMPI_Type_f2c(*type)));
}

FDECL(mpi_file_read_at_all_end, MPI_FILE_READ_AT_ALL_END, file_read_at_all_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_at_all_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
			       MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_at_all_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_at_all_end, MPI_FILE_WRITE_AT_ALL_END, file_write_at_all_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_at_all_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
				MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_at_all_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_all_end, MPI_FILE_READ_ALL_END, file_read_all_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_all_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
			    MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_all_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_all_end, MPI_FILE_WRITE_ALL_END, file_write_all_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_all_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
			     MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_all_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_read_ordered_end, MPI_FILE_READ_ORDERED_END, file_read_ordered_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_read_ordered_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
				MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_read_ordered_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_file_write_ordered_end, MPI_FILE_WRITE_ORDERED_END, file_write_ordered_end,
      (MPI_Fint *fh, void *buf, MPI_Fint *status, MPI_Fint *ierr))
void mpi_file_write_ordered_end_(MPI_Fint *fh, void *buf, MPI_Fint *status,
				 MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_File_write_ordered_end(PMPI_File_f2c(*fh), fbuf(buf), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}
