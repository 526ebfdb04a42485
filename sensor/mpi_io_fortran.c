/*
 * sensor/mpi_io_fortran.c - Fortran bindings of the MPI-IO, one-sided and
 * group wrappers (Open MPI).
 *
 * Open MPI's Fortran layer calls PMPI_File_*, PMPI_Put ... directly (nm -D
 * libmpi_mpifh.so: U PMPI_File_open), so, as sensor/mpi_fortran.c does for
 * the other calls, we define mpi_file_open_ and its manglings (mpi_file_open__,
 * mpi_file_open, MPI_FILE_OPEN) and ompi_file_open_f (what the mpi_f08 module
 * calls), and the same for the one-sided and group calls; each converts
 * handles (PMPI_File_f2c, _Win_, _Group_, _Type_, _Op_, _Info_, _Comm_,
 * _Request_c2f), Fortran strings (blank-padded, length passed after the
 * arguments), MPI_BOTTOM and MPI_STATUS_IGNORE, and calls our C wrapper.
 * MPICH's Fortran bindings call MPI_File_* through the PLT (nm -D
 * libmpichfort.so: U MPI_File_open, U MPI_Put): the C wrappers see them, and the MPICH
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

/* ---- one-sided and groups ------------------------------------------------ */

FDECL(mpi_win_create, MPI_WIN_CREATE, win_create,
      (void *base, MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
       MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_create_(void *base, MPI_Aint *size, MPI_Fint *disp_unit,
		     MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win,
		     MPI_Fint *ierr)
{
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_create(fbuf(base), *size, *disp_unit,
				PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), &w);

	if (rc == MPI_SUCCESS)
		*win = PMPI_Win_c2f(w);
	set_ierr(ierr, rc);
}

FDECL(mpi_win_allocate, MPI_WIN_ALLOCATE, win_allocate,
      (MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
       void *baseptr, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_allocate_(MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info,
		       MPI_Fint *comm, void *baseptr, MPI_Fint *win,
		       MPI_Fint *ierr)
{
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_allocate(*size, *disp_unit, PMPI_Info_f2c(*info),
				  PMPI_Comm_f2c(*comm), baseptr, &w);

	if (rc == MPI_SUCCESS)
		*win = PMPI_Win_c2f(w);
	set_ierr(ierr, rc);
}

FDECL(mpi_win_allocate_shared, MPI_WIN_ALLOCATE_SHARED, win_allocate_shared,
      (MPI_Aint *size, MPI_Fint *disp_unit, MPI_Fint *info, MPI_Fint *comm,
       void *baseptr, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_allocate_shared_(MPI_Aint *size, MPI_Fint *disp_unit,
			      MPI_Fint *info, MPI_Fint *comm, void *baseptr,
			      MPI_Fint *win, MPI_Fint *ierr)
{
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_allocate_shared(*size, *disp_unit,
					 PMPI_Info_f2c(*info),
					 PMPI_Comm_f2c(*comm), baseptr, &w);

	if (rc == MPI_SUCCESS)
		*win = PMPI_Win_c2f(w);
	set_ierr(ierr, rc);
}

FDECL(mpi_win_create_dynamic, MPI_WIN_CREATE_DYNAMIC, win_create_dynamic,
      (MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_create_dynamic_(MPI_Fint *info, MPI_Fint *comm, MPI_Fint *win,
			     MPI_Fint *ierr)
{
	MPI_Win w = MPI_WIN_NULL;
	int rc = MPI_Win_create_dynamic(PMPI_Info_f2c(*info),
					PMPI_Comm_f2c(*comm), &w);

	if (rc == MPI_SUCCESS)
		*win = PMPI_Win_c2f(w);
	set_ierr(ierr, rc);
}

FDECL(mpi_win_free, MPI_WIN_FREE, win_free,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_free_(MPI_Fint *win, MPI_Fint *ierr)
{
	MPI_Win w = PMPI_Win_f2c(*win);
	int rc = MPI_Win_free(&w);

	if (rc == MPI_SUCCESS)
		*win = PMPI_Win_c2f(w);
	set_ierr(ierr, rc);
}

FDECL(mpi_put, MPI_PUT, put,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *win, MPI_Fint *ierr))
void mpi_put_(void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
	      MPI_Fint *target_rank, MPI_Aint *target_disp,
	      MPI_Fint *target_count, MPI_Fint *target_type, MPI_Fint *win,
	      MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Put(fbuf(origin_addr), *origin_count,
			       PMPI_Type_f2c(*origin_type), *target_rank,
			       *target_disp, *target_count,
			       PMPI_Type_f2c(*target_type),
			       PMPI_Win_f2c(*win)));
}

FDECL(mpi_get, MPI_GET, get,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *win, MPI_Fint *ierr))
void mpi_get_(void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
	      MPI_Fint *target_rank, MPI_Aint *target_disp,
	      MPI_Fint *target_count, MPI_Fint *target_type, MPI_Fint *win,
	      MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Get(fbuf(origin_addr), *origin_count,
			       PMPI_Type_f2c(*origin_type), *target_rank,
			       *target_disp, *target_count,
			       PMPI_Type_f2c(*target_type),
			       PMPI_Win_f2c(*win)));
}

FDECL(mpi_accumulate, MPI_ACCUMULATE, accumulate,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win, MPI_Fint *ierr))
void mpi_accumulate_(void *origin_addr, MPI_Fint *origin_count,
		     MPI_Fint *origin_type, MPI_Fint *target_rank,
		     MPI_Aint *target_disp, MPI_Fint *target_count,
		     MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win,
		     MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Accumulate(fbuf(origin_addr), *origin_count,
				      PMPI_Type_f2c(*origin_type), *target_rank,
				      *target_disp, *target_count,
				      PMPI_Type_f2c(*target_type),
				      PMPI_Op_f2c(*op), PMPI_Win_f2c(*win)));
}

FDECL(mpi_get_accumulate, MPI_GET_ACCUMULATE, get_accumulate,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       void *result_addr, MPI_Fint *result_count, MPI_Fint *result_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win, MPI_Fint *ierr))
void mpi_get_accumulate_(void *origin_addr, MPI_Fint *origin_count,
			 MPI_Fint *origin_type, void *result_addr,
			 MPI_Fint *result_count, MPI_Fint *result_type,
			 MPI_Fint *target_rank, MPI_Aint *target_disp,
			 MPI_Fint *target_count, MPI_Fint *target_type,
			 MPI_Fint *op, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Get_accumulate(fbuf(origin_addr), *origin_count,
					  PMPI_Type_f2c(*origin_type),
					  fbuf(result_addr), *result_count,
					  PMPI_Type_f2c(*result_type),
					  *target_rank, *target_disp,
					  *target_count,
					  PMPI_Type_f2c(*target_type),
					  PMPI_Op_f2c(*op),
					  PMPI_Win_f2c(*win)));
}

FDECL(mpi_fetch_and_op, MPI_FETCH_AND_OP, fetch_and_op,
      (void *origin_addr, void *result_addr, MPI_Fint *type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *op,
       MPI_Fint *win, MPI_Fint *ierr))
void mpi_fetch_and_op_(void *origin_addr, void *result_addr, MPI_Fint *type,
		       MPI_Fint *target_rank, MPI_Aint *target_disp,
		       MPI_Fint *op, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Fetch_and_op(fbuf(origin_addr), fbuf(result_addr),
					PMPI_Type_f2c(*type), *target_rank,
					*target_disp, PMPI_Op_f2c(*op),
					PMPI_Win_f2c(*win)));
}

FDECL(mpi_compare_and_swap, MPI_COMPARE_AND_SWAP, compare_and_swap,
      (void *origin_addr, void *compare_addr, void *result_addr, MPI_Fint *type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *win,
       MPI_Fint *ierr))
void mpi_compare_and_swap_(void *origin_addr, void *compare_addr,
			   void *result_addr, MPI_Fint *type,
			   MPI_Fint *target_rank, MPI_Aint *target_disp,
			   MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Compare_and_swap(fbuf(origin_addr),
					    fbuf(compare_addr),
					    fbuf(result_addr),
					    PMPI_Type_f2c(*type), *target_rank,
					    *target_disp, PMPI_Win_f2c(*win)));
}

FDECL(mpi_rput, MPI_RPUT, rput,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *win, MPI_Fint *req, MPI_Fint *ierr))
void mpi_rput_(void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
	       MPI_Fint *target_rank, MPI_Aint *target_disp,
	       MPI_Fint *target_count, MPI_Fint *target_type, MPI_Fint *win,
	       MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Rput(fbuf(origin_addr), *origin_count,
			  PMPI_Type_f2c(*origin_type), *target_rank,
			  *target_disp, *target_count,
			  PMPI_Type_f2c(*target_type), PMPI_Win_f2c(*win), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_rget, MPI_RGET, rget,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *win, MPI_Fint *req, MPI_Fint *ierr))
void mpi_rget_(void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
	       MPI_Fint *target_rank, MPI_Aint *target_disp,
	       MPI_Fint *target_count, MPI_Fint *target_type, MPI_Fint *win,
	       MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Rget(fbuf(origin_addr), *origin_count,
			  PMPI_Type_f2c(*origin_type), *target_rank,
			  *target_disp, *target_count,
			  PMPI_Type_f2c(*target_type), PMPI_Win_f2c(*win), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_raccumulate, MPI_RACCUMULATE, raccumulate,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_raccumulate_(void *origin_addr, MPI_Fint *origin_count,
		      MPI_Fint *origin_type, MPI_Fint *target_rank,
		      MPI_Aint *target_disp, MPI_Fint *target_count,
		      MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win,
		      MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Raccumulate(fbuf(origin_addr), *origin_count,
				 PMPI_Type_f2c(*origin_type), *target_rank,
				 *target_disp, *target_count,
				 PMPI_Type_f2c(*target_type), PMPI_Op_f2c(*op),
				 PMPI_Win_f2c(*win), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_rget_accumulate, MPI_RGET_ACCUMULATE, rget_accumulate,
      (void *origin_addr, MPI_Fint *origin_count, MPI_Fint *origin_type,
       void *result_addr, MPI_Fint *result_count, MPI_Fint *result_type,
       MPI_Fint *target_rank, MPI_Aint *target_disp, MPI_Fint *target_count,
       MPI_Fint *target_type, MPI_Fint *op, MPI_Fint *win, MPI_Fint *req,
       MPI_Fint *ierr))
void mpi_rget_accumulate_(void *origin_addr, MPI_Fint *origin_count,
			  MPI_Fint *origin_type, void *result_addr,
			  MPI_Fint *result_count, MPI_Fint *result_type,
			  MPI_Fint *target_rank, MPI_Aint *target_disp,
			  MPI_Fint *target_count, MPI_Fint *target_type,
			  MPI_Fint *op, MPI_Fint *win, MPI_Fint *req,
			  MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Rget_accumulate(fbuf(origin_addr), *origin_count,
				     PMPI_Type_f2c(*origin_type),
				     fbuf(result_addr), *result_count,
				     PMPI_Type_f2c(*result_type), *target_rank,
				     *target_disp, *target_count,
				     PMPI_Type_f2c(*target_type),
				     PMPI_Op_f2c(*op), PMPI_Win_f2c(*win), &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_ierr(ierr, rc);
}

FDECL(mpi_win_fence, MPI_WIN_FENCE, win_fence,
      (MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_fence_(MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_fence(*assert, PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_post, MPI_WIN_POST, win_post,
      (MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_post_(MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win,
		   MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_post(PMPI_Group_f2c(*group), *assert,
				    PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_start, MPI_WIN_START, win_start,
      (MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_start_(MPI_Fint *group, MPI_Fint *assert, MPI_Fint *win,
		    MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_start(PMPI_Group_f2c(*group), *assert,
				     PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_complete, MPI_WIN_COMPLETE, win_complete,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_complete_(MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_complete(PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_wait, MPI_WIN_WAIT, win_wait,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_wait_(MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_wait(PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_unlock_all, MPI_WIN_UNLOCK_ALL, win_unlock_all,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_unlock_all_(MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_unlock_all(PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_flush_all, MPI_WIN_FLUSH_ALL, win_flush_all,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_flush_all_(MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_flush_all(PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_flush_local_all, MPI_WIN_FLUSH_LOCAL_ALL, win_flush_local_all,
      (MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_flush_local_all_(MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_flush_local_all(PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_lock, MPI_WIN_LOCK, win_lock,
      (MPI_Fint *lock_type, MPI_Fint *rank, MPI_Fint *assert, MPI_Fint *win,
       MPI_Fint *ierr))
void mpi_win_lock_(MPI_Fint *lock_type, MPI_Fint *rank, MPI_Fint *assert,
		   MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_lock(*lock_type, *rank, *assert,
				    PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_unlock, MPI_WIN_UNLOCK, win_unlock,
      (MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_unlock_(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_unlock(*rank, PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_lock_all, MPI_WIN_LOCK_ALL, win_lock_all,
      (MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_lock_all_(MPI_Fint *assert, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_lock_all(*assert, PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_flush, MPI_WIN_FLUSH, win_flush,
      (MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_flush_(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_flush(*rank, PMPI_Win_f2c(*win)));
}

FDECL(mpi_win_flush_local, MPI_WIN_FLUSH_LOCAL, win_flush_local,
      (MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr))
void mpi_win_flush_local_(MPI_Fint *rank, MPI_Fint *win, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Win_flush_local(*rank, PMPI_Win_f2c(*win)));
}

FDECL(mpi_comm_group, MPI_COMM_GROUP, comm_group,
      (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *ierr))
void mpi_comm_group_(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Comm_group(PMPI_Comm_f2c(*comm), &g);

	if (rc == MPI_SUCCESS)
		*group = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_incl, MPI_GROUP_INCL, group_incl,
      (MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranks, MPI_Fint *newgroup,
       MPI_Fint *ierr))
void mpi_group_incl_(MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranks,
		     MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_incl(PMPI_Group_f2c(*group), *n, ranks, &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_excl, MPI_GROUP_EXCL, group_excl,
      (MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranks, MPI_Fint *newgroup,
       MPI_Fint *ierr))
void mpi_group_excl_(MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranks,
		     MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_excl(PMPI_Group_f2c(*group), *n, ranks, &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_range_incl, MPI_GROUP_RANGE_INCL, group_range_incl,
      (MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranges, MPI_Fint *newgroup,
       MPI_Fint *ierr))
void mpi_group_range_incl_(MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranges,
			   MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_range_incl(PMPI_Group_f2c(*group), *n,
				      (int (*)[3])ranges, &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_range_excl, MPI_GROUP_RANGE_EXCL, group_range_excl,
      (MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranges, MPI_Fint *newgroup,
       MPI_Fint *ierr))
void mpi_group_range_excl_(MPI_Fint *group, MPI_Fint *n, MPI_Fint *ranges,
			   MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_range_excl(PMPI_Group_f2c(*group), *n,
				      (int (*)[3])ranges, &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_union, MPI_GROUP_UNION, group_union,
      (MPI_Fint *group1, MPI_Fint *group2, MPI_Fint *newgroup, MPI_Fint *ierr))
void mpi_group_union_(MPI_Fint *group1, MPI_Fint *group2, MPI_Fint *newgroup,
		      MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_union(PMPI_Group_f2c(*group1),
				 PMPI_Group_f2c(*group2), &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_intersection, MPI_GROUP_INTERSECTION, group_intersection,
      (MPI_Fint *group1, MPI_Fint *group2, MPI_Fint *newgroup, MPI_Fint *ierr))
void mpi_group_intersection_(MPI_Fint *group1, MPI_Fint *group2,
			     MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_intersection(PMPI_Group_f2c(*group1),
					PMPI_Group_f2c(*group2), &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_difference, MPI_GROUP_DIFFERENCE, group_difference,
      (MPI_Fint *group1, MPI_Fint *group2, MPI_Fint *newgroup, MPI_Fint *ierr))
void mpi_group_difference_(MPI_Fint *group1, MPI_Fint *group2,
			   MPI_Fint *newgroup, MPI_Fint *ierr)
{
	MPI_Group g = MPI_GROUP_NULL;
	int rc = MPI_Group_difference(PMPI_Group_f2c(*group1),
				      PMPI_Group_f2c(*group2), &g);

	if (rc == MPI_SUCCESS)
		*newgroup = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}

FDECL(mpi_group_free, MPI_GROUP_FREE, group_free,
      (MPI_Fint *group, MPI_Fint *ierr))
void mpi_group_free_(MPI_Fint *group, MPI_Fint *ierr)
{
	MPI_Group g = PMPI_Group_f2c(*group);
	int rc = MPI_Group_free(&g);

	if (rc == MPI_SUCCESS)
		*group = PMPI_Group_c2f(g);
	set_ierr(ierr, rc);
}
