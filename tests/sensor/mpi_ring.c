/*
 * tests/sensor/mpi_ring.c - a token ring for the MPI sensor's tests.
 *
 * Each of ROUNDS rounds passes a token of TOKEN doubles around all ranks
 * (rank 0 starts, each rank adds its rank), with a little computation
 * between the calls. Rank 0 prints the final token sum: the output must be
 * the same with and without the sensor preloaded.
 */
#include <stdio.h>

#include <mpi.h>

#define ROUNDS 5
#define TOKEN 256
#define TAG 7

static double work(double *v, int n)
{
	double s = 0;
	int i, k;

	for (k = 0; k < 200; k++)
		for (i = 0; i < n; i++)
			s += v[i] * 1e-6 * (double)k;
	return s;
}

int main(int argc, char **argv)
{
	double token[TOKEN], extra = 0;
	int rank, size, r, i, next, prev;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	for (i = 0; i < TOKEN; i++)
		token[i] = rank == 0 ? (double)i : 0.0;
	for (r = 0; r < ROUNDS; r++) {
		if (rank == 0) {
			MPI_Send(token, TOKEN, MPI_DOUBLE, next, TAG,
				 MPI_COMM_WORLD);
			MPI_Recv(token, TOKEN, MPI_DOUBLE, prev, TAG,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(token, TOKEN, MPI_DOUBLE, prev, TAG,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (i = 0; i < TOKEN; i++)
				token[i] += rank;
			MPI_Send(token, TOKEN, MPI_DOUBLE, next, TAG,
				 MPI_COMM_WORLD);
		}
		extra += work(token, TOKEN);
	}
	if (rank == 0) {
		double s = 0;

		for (i = 0; i < TOKEN; i++)
			s += token[i];
		printf("ring size %d rounds %d token sum %.1f\n", size, ROUNDS,
		       s);
	}
	(void)extra;
	MPI_Finalize();
	return 0;
}
