/*
 * bench/poll_loop.c - a polling-heavy MPI program for correction_accuracy.sh:
 * ranks pass messages round a ring, each receive waited for by an
 * MPI_Iprobe / MPI_Test loop (as hpcc's does), with some computation
 * between. Usage: poll_loop [rounds] (default 2000).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2000, flag;
	double buf[64] = {0}, in[64], x = 1.0;
	MPI_Request rq;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 20000; k++)	/* some work */
			x = x * 1.0000001 + 1e-9;
		buf[0] = x;
		MPI_Isend(buf, 64, MPI_DOUBLE, (rank + 1) % size, r, MPI_COMM_WORLD, &rq);
		do	/* poll for the message */
			MPI_Iprobe((rank + size - 1) % size, r, MPI_COMM_WORLD, &flag,
				   MPI_STATUS_IGNORE);
		while (!flag);
		MPI_Recv(in, 64, MPI_DOUBLE, (rank + size - 1) % size, r, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		do
			MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
		while (!flag);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("%g\n", x + in[0]);
	MPI_Finalize();
	return 0;
}
