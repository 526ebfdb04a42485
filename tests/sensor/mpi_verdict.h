/*
 * tests/sensor/mpi_verdict.h - how the C MPI-IO and one-sided test programs
 * (mpi_io.c, mpi_rma.c, mpi_large.c) start and end: their expectation
 * file opened; their failure flag reduced over the ranks, rank 0 printing
 * "NAME: ok" or "NAME: FAILED" (the line tests/sensor/mpi_io_run.sh looks
 * for), MPI_Finalize; the exit status.
 */
#ifndef TAPESTRY_TESTS_SENSOR_MPI_VERDICT_H
#define TAPESTRY_TESTS_SENSOR_MPI_VERDICT_H

#include <stdio.h>

#include <mpi.h>

/* BASE.RANK opened for writing (the job aborted when it cannot be). */
static FILE *mpi_expect(const char *base, int rank)
{
	char name[4096];
	FILE *f;

	snprintf(name, sizeof(name), "%s.%d", base, rank);
	if (!(f = fopen(name, "w"))) {
		perror(name);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return f;
}

static int mpi_verdict(const char *name, int rank, int bad)
{
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %s\n", name, bad ? "FAILED" : "ok");
	MPI_Finalize();
	return bad;
}

#endif
