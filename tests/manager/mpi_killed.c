/*
 * tests/manager/mpi_killed.c - a job whose last rank dies (SIGKILL, as an
 * MPI runtime kills a rank) right after it took part in messages and
 * collectives: a ring exchange (MPI_Sendrecv), an MPI_Alltoallv of uneven
 * counts, an MPI_Bcast rooted at the dying rank, allreduces. Killed within
 * a few milliseconds of its start, its sensor has sent none of its MPI
 * events; the others are killed by their runtime while they wait in
 * MPI_Barrier. For tapestry's replay of a job with a rank missing.
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, x = 0, y;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *sc = calloc(size, sizeof(int)), *rc = calloc(size, sizeof(int));
	int *sd = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
	int *sb = calloc((size_t)size * size, sizeof(int));
	int *rb = calloc((size_t)size * size, sizeof(int));

	for (int i = 0; i < size; i++) {
		sc[i] = i + 1;
		rc[i] = rank + 1;
		sd[i] = i * size;
		rd[i] = i * size;
	}
	for (int k = 0; k < 5; k++) {
		MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &y, 1, MPI_INT,
			     (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
		MPI_Bcast(&x, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
		MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
	if (rank == size - 1)
		raise(SIGKILL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
