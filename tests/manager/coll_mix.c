/*
 * tests/manager/coll_mix.c - a ring of point-to-point messages and every
 * common collective, some of 0 bytes (hpcc makes 0-byte MPI_Bcast calls),
 * for test_repair_mpi.sh. Usage: coll_mix [rounds] (default 200).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 200;
	double a[256] = {0}, b[256 * 8], x = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 8)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2000; k++)
			x += 1e-9 * k;
		a[0] = x;
		MPI_Sendrecv(a, 64, MPI_DOUBLE, (rank + 1) % size, r, b, 64, MPI_DOUBLE,
			     (rank + size - 1) % size, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Bcast(a, 16, MPI_DOUBLE, r % size, MPI_COMM_WORLD);
		MPI_Bcast(a, 0, MPI_DOUBLE, (r + 1) % size, MPI_COMM_WORLD);
		MPI_Reduce(a, b, 8, MPI_DOUBLE, MPI_SUM, r % size, MPI_COMM_WORLD);
		MPI_Allreduce(a, b, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Alltoall(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Allgather(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, MPI_COMM_WORLD);
		MPI_Gather(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Scatter(b, 4, MPI_DOUBLE, a, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		if (r % 10 == 0)
			MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("%g\n", x + b[0]);
	MPI_Finalize();
	return 0;
}
