/*
 * tests/sensor/mpi_halo.c - n Irecv, n Isend, one MPI_Waitall, six steps:
 * Open MPI and MPICH hand every isend that completed at once the same
 * handle, and each request must still be recorded once (waitall 2n).
 */
#include <mpi.h>
#include <stdio.h>

#define N 4

int main(int argc, char **argv)
{
	unsigned char sb[N][8], rb[N][8];
	MPI_Request r[2 * N];
	int rank, size, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int step = 0; step < 6; step++) {
		for (int i = 0; i < N; i++)
			MPI_Irecv(rb[i], 8, MPI_BYTE, (rank + size - 1) % size, i,
				  MPI_COMM_WORLD, &r[i]);
		for (int i = 0; i < N; i++) {
			sb[i][0] = (unsigned char)(rank * 10 + i + step);
			MPI_Isend(sb[i], 8, MPI_BYTE, (rank + 1) % size, i,
				  MPI_COMM_WORLD, &r[N + i]);
		}
		MPI_Waitall(2 * N, r, MPI_STATUSES_IGNORE);
		for (int i = 0; i < N; i++)
			sum += rb[i][0];
	}
	printf("rank %d sum %d\n", rank, sum);
	MPI_Finalize();
	return 0;
}
