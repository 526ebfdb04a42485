/*
 * sensor/mpi_fortran.h - what the Fortran bindings of the MPI sensor share
 * (not installed): the symbol names a binding defines (F_BIND), and the
 * conversions of Fortran arguments (sensor/mpi_fortran.c). The bindings
 * themselves: sensor/mpi_fortran_gen.c, generated from the wrapper tables
 * by sensor/mpi_fortran_gen.awk, and the hand-written ones of
 * sensor/mpi_fortran.c.
 *
 * Open MPI (mpi.h defines OPEN_MPI): its Fortran layers call PMPI_
 * directly, so every binding is defined under every name a caller uses:
 * mpi_send_ and its other manglings (mpi_send__, mpi_send, MPI_SEND) for
 * mpif.h and `use mpi`, ompi_send_f for the mpi_f08 module. A Fortran
 * status is MPI_STATUS_SIZE INTEGERs (PMPI_Status_c2f).
 *
 * MPICH: mpif.h and `use mpi` call MPI_ through the PLT, which the C
 * wrappers catch; its mpi_f08 module calls mpi_send_f08ts_ (choice
 * buffers, passed as descriptors: those call MPI_ through the PLT too) and
 * mpi_wait_f08_ (the others), which call PMPI_ directly: the sensor defines
 * those, mpi_wait_f08_ ..., and no binding with a choice buffer
 * (F_CHOICE_BUFFERS 0). An mpi_f08 handle is its Fortran INTEGER, a status
 * has the C layout; the sentinels are libmpichfort's objects, referenced
 * weakly so that a C program does not need that library.
 */
#ifndef SENSOR_MPI_FORTRAN_H
#define SENSOR_MPI_FORTRAN_H

#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is a C int");

#define F_TRUE 1		/* gfortran .TRUE. */
#define F_FALSE 0
#define MF_SMALL 32		/* arrays up to this length need no malloc */

#define F_ALIAS(target) \
	__attribute__((alias(target), visibility("default")))

#ifdef OPEN_MPI
#define F_CHOICE_BUFFERS 1
/* INTEGER status(MPI_STATUS_SIZE): 6 in Open MPI 4 (mpif-config.h) */
#define MF_STATUS_INTS 6
_Static_assert(sizeof(MPI_Status) == MF_STATUS_INTS * sizeof(MPI_Fint),
	       "Open MPI Fortran status size");
/* F_BIND(lc, UC, short, params) { body }: defines lc_ and its aliases
 * lc__, lc, UC and ompi_<short>_f. */
#define F_BIND(lc, UC, short, params) \
	__attribute__((visibility("default"))) void lc##_ params; \
	extern __typeof__(lc##_) lc##__ F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) lc F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) UC F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) ompi_##short##_f F_ALIAS(#lc "_"); \
	void lc##_ params
#else
#define F_CHOICE_BUFFERS 0
/* TYPE(MPI_Status) of MPICH's mpi_f08: the C struct */
#define MF_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))
#define F_BIND(lc, UC, short, params) \
	__attribute__((visibility("default"))) void lc##_f08_ params; \
	void lc##_f08_ params
#endif

/* The C buffer of a Fortran one (MPI_IN_PLACE, MPI_BOTTOM translated). */
void *mf_buf(void *b);
/* A graph's weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY translated. */
const int *mf_weights(const MPI_Fint *w);
/* The Fortran MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE? */
int mf_status_ignored(const MPI_Fint *f);
int mf_statuses_ignored(const MPI_Fint *f);
/* Write the C status c (unless MPI_STATUS_IGNORE) to the Fortran one f. */
void mf_status_out(const MPI_Status *c, MPI_Fint *f);
/* Read the Fortran status f into c. */
int mf_status_in(const MPI_Fint *f, MPI_Status *c);
/* *ierr = rc (ierr may be absent: mpi_f08's is OPTIONAL). */
void mf_ierr(MPI_Fint *ierr, int rc);
/* A C copy of a Fortran string of len characters, trailing blanks cut
 * (free it); NULL when out of memory. */
char *mf_string(const char *f, int len);

#endif
