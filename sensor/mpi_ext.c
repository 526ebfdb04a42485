/*
 * sensor/mpi_ext.c - the MPI sensor's wrappers of sensor/mpi_ext.def.
 *
 * Expanded through sensor/mpi_gen.h like sensor/mpi_io.c, with the
 * prologue and epilogue of sensor/mpi_wrap.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

#define MW_TABLE "sensor/mpi_ext.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* MPI_Abort does not return when it works, and the job's other processes
 * are killed (MPICH's hydra sends them SIGKILL): the event is emitted and
 * the whole trace of this process flushed (sn_flush_all: shipped, bounded
 * wait) before the call. If the call returns (it failed), the epilogue has
 * nothing left to do. */
static int do_Abort(struct mw_call *c, MPI_Comm comm, int errorcode)
{
	proto_args_set(c->arg, errorcode, mw_comm_id(comm, 0, NULL), 0, 0, 0,
		       0);
	c->flush = 1;
	mw_end(c, MPI_SUCCESS);
	c->on = 0;
	c->flush = 0;
	return next_Abort(comm, errorcode);
}

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
