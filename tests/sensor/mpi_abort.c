/*
 * tests/sensor/mpi_abort.c - rank 0 aborts the job after a few calls.
 *
 * Every rank makes 5 MPI_Allreduce on MPI_COMM_WORLD; rank 0 then calls
 * MPI_Abort(MPI_COMM_WORLD, 3) while the others wait in an MPI_Recv that
 * nothing matches, until the launcher kills them. The job's exit status is
 * the launcher's (not 0).
 */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, v = 1, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < 5; i++)
		MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("aborting after %d\n", v);
		fflush(stdout);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
