/*
 * tests/sensor/mpi_order.c - collectives on a communicator of every rank in
 * the reverse order (MPI_Comm_split with key size-1-rank, and its dup),
 * with rank-dependent counts and zeros; a derived datatype whose extent
 * is not its size. A replay on MPI_COMM_WORLD must put the counts and
 * roots in world order (else SimGrid aborts with MPI_ERR_TRUNCATE) and
 * send the type's size, not its extent. Deterministic output: a checksum
 * per rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Alltoallv on comm: rank i sends (i + 2 * j) % 3 ints to rank j (zeros
 * among them); then Bcast, Reduce, Gatherv rooted on ranks 0, 1, 2 of
 * comm. */
static long colls(MPI_Comm comm)
{
	int me, n, sc[64], sd[64], rc[64], rd[64], st = 0, rt = 0;
	int sbuf[256], rbuf[256], v, sum = 0, *all = NULL;
	long check = 0;

	MPI_Comm_rank(comm, &me);
	MPI_Comm_size(comm, &n);
	if (n > 64)
		return -1;
	for (int j = 0; j < n; j++) {
		sc[j] = (me + 2 * j) % 3;
		rc[j] = (j + 2 * me) % 3;
		sd[j] = st;
		rd[j] = rt;
		st += sc[j];
		rt += rc[j];
	}
	for (int k = 0; k < st; k++)
		sbuf[k] = me * 100 + k;
	MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm);
	for (int k = 0; k < rt; k++)
		check = check * 7 + rbuf[k];
	v = me == 0 ? 42 : 0;
	MPI_Bcast(&v, 1, MPI_INT, 0, comm);
	MPI_Reduce(&me, &sum, 1, MPI_INT, MPI_SUM, 1, comm);
	if (me == 2)
		all = calloc((size_t)n * 3, sizeof(int));
	for (int j = 0; j < n; j++) {
		rc[j] = j % 3;
		rd[j] = 3 * j;
	}
	MPI_Gatherv(sbuf, me % 3, MPI_INT, all, rc, rd, MPI_INT, 2, comm);
	if (all)
		for (int k = 0; k < 3 * n; k += 3)
			check = check * 3 + all[k];
	free(all);
	return check * 11 + v + sum;
}

int main(int argc, char **argv)
{
	int rank, size, v[8] = {0}, w[8] = {0};
	MPI_Comm rev, dup;
	MPI_Datatype strided;
	long check;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
	MPI_Comm_dup(rev, &dup);
	check = colls(MPI_COMM_WORLD);
	check = check * 13 + colls(rev);
	check = check * 17 + colls(dup);

	/* 4 ints every other one: size 16 bytes, extent 28 */
	MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
	MPI_Type_commit(&strided);
	for (int i = 0; i < 8; i++)
		v[i] = rank + i;
	MPI_Sendrecv(v, 1, strided, (rank + 1) % size, 7, w, 1, strided,
		     (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 0; i < 8; i += 2)
		check = check * 5 + w[i];
	MPI_Type_free(&strided);

	MPI_Comm_free(&dup);
	MPI_Comm_free(&rev);
	printf("rank %d checksum %ld\n", rank, check);
	MPI_Finalize();
	return 0;
}
