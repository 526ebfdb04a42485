/*
 * tests/manager/mpi_split.c - collectives on sub-communicators, for the
 * SimGrid export (tests/manager/test_export_sim.sh): MPI_COMM_WORLD split
 * in two by rank parity with the key reversing the order, then every
 * blocking collective on each half, on a dup of it and on MPI_COMM_SELF.
 * Rank 0 prints one checksum of what every rank received, so a traced run
 * can be compared with an untraced one. Any number of ranks >= 2.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define N 8

static long long sum(const int *v, int n)
{
	long long s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* Every blocking collective on c; what arrived goes into *acc. */
static void collectives(MPI_Comm c, long long *acc)
{
	int rank, size, root;
	int in[N * 16], out[N * 16], counts[16], mine[16], displs[16];

	MPI_Comm_rank(c, &rank);
	MPI_Comm_size(c, &size);
	root = size - 1;
	for (int i = 0; i < N * 16; i++)
		in[i] = rank * 100 + i;
	for (int i = 0; i < size; i++) {
		counts[i] = 1 + i % N;
		mine[i] = 1 + rank % N;	/* what this rank sends each in alltoallv */
		displs[i] = i * N;
	}
	MPI_Barrier(c);
	MPI_Bcast(in, N, MPI_INT, root, c);
	MPI_Reduce(in, out, N, MPI_INT, MPI_SUM, root, c);
	*acc += rank == root ? sum(out, N) : 0;
	MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, c);
	*acc += sum(out, N);
	MPI_Gather(in, N, MPI_INT, out, N, MPI_INT, root, c);
	*acc += rank == root ? sum(out, N * size) : 0;
	MPI_Gatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, root, c);
	MPI_Scatter(in, N, MPI_INT, out, N, MPI_INT, root, c);
	*acc += sum(out, N);
	MPI_Scatterv(in, counts, displs, MPI_INT, out, counts[rank], MPI_INT, root, c);
	*acc += sum(out, counts[rank]);
	MPI_Allgather(in, N, MPI_INT, out, N, MPI_INT, c);
	*acc += sum(out, N * size);
	MPI_Allgatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, c);
	MPI_Alltoall(in, N, MPI_INT, out, N, MPI_INT, c);
	*acc += sum(out, N * size);
	MPI_Alltoallv(in, mine, displs, MPI_INT, out, counts, displs, MPI_INT, c);
	MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c);
	*acc += sum(out, counts[rank]);
	MPI_Scan(in, out, N, MPI_INT, MPI_SUM, c);
	*acc += sum(out, N);
	MPI_Exscan(in, out, N, MPI_INT, MPI_SUM, c);
	*acc += rank ? sum(out, N) : 0;
}

int main(int argc, char **argv)
{
	int rank, size;
	long long acc = 0, all = 0;
	MPI_Comm half, dup;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || size > 16) {
		if (rank == 0)
			fprintf(stderr, "mpi_split: run on 2 to 16 ranks\n");
		MPI_Finalize();
		return 1;
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	collectives(half, &acc);
	MPI_Comm_dup(half, &dup);
	collectives(dup, &acc);
	collectives(MPI_COMM_SELF, &acc);
	MPI_Reduce(&acc, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("checksum %lld\n", all);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
