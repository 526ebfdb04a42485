/*
 * deploy/examples/ring.c - an MPI ring: a token goes round the ranks ROUNDS
 * times, with some computation between the messages.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 10;
	double token[1024] = {0}, acc = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 200000; i++)
			acc += i * 1e-9;
		if (rank == 0) {
			token[0] += 1;
			MPI_Send(token, 1024, MPI_DOUBLE, (rank + 1) % size, r, MPI_COMM_WORLD);
			MPI_Recv(token, 1024, MPI_DOUBLE, size - 1, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(token, 1024, MPI_DOUBLE, rank - 1, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token[0] += 1;
			MPI_Send(token, 1024, MPI_DOUBLE, (rank + 1) % size, r, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ring: %d rounds on %d ranks, token %.0f (acc %.3f)\n", rounds,
		       size, token[0], acc);
	MPI_Finalize();
	return 0;
}
