/*
 * tests/manager/mpi_alltoallw.c - MPI_Alltoallw with uneven counts and a
 * type per peer, after the MPICH test coll/alltoallw2 (its pattern, not
 * its code): rank r sends i elements to rank i and receives r from each,
 * the element a double to even ranks and an int to odd ones; on
 * MPI_COMM_WORLD, on a reversed copy of it, on the halves of a split, and
 * in place (MPI_IN_PLACE: the receive arguments on both sides). Checks
 * what it received; prints "alltoallw ok N" (N calls) or the first error,
 * and exits 1 then.
 *
 *   mpi_alltoallw [ROUNDS]   (default 2)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

/* element type and size for data going to rank `to` of comm */
static MPI_Datatype type_to(int to)
{
	return to % 2 ? MPI_INT : MPI_DOUBLE;
}

static int size_of(MPI_Datatype t)
{
	return t == MPI_INT ? (int)sizeof(int) : (int)sizeof(double);
}

static double value(int from, int to, int j)
{
	return from * 1000 + to * 10 + j;
}

static void one(MPI_Comm comm)
{
	int rank, size;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int *sc = calloc(size, sizeof(int)), *rc = calloc(size, sizeof(int));
	int *sd = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
	MPI_Datatype *st = calloc(size, sizeof(*st)), *rt = calloc(size, sizeof(*rt));
	char *sbuf = calloc((size_t)size * size + 1, sizeof(double));
	char *rbuf = calloc((size_t)size * size + 1, sizeof(double));
	int off = 0;

	for (int i = 0; i < size; i++) {
		sc[i] = i;
		st[i] = type_to(i);
		sd[i] = off;
		for (int j = 0; j < i; j++) {
			if (st[i] == MPI_INT)
				((int *)(sbuf + off))[j] = (int)value(rank, i, j);
			else
				((double *)(sbuf + off))[j] = value(rank, i, j);
		}
		off += i * size_of(st[i]);
	}
	off = 0;
	for (int i = 0; i < size; i++) {
		rc[i] = rank;
		rt[i] = type_to(rank);
		rd[i] = off;
		off += rank * size_of(rt[i]);
	}
	MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm);
	for (int i = 0; i < size; i++)
		for (int j = 0; j < rank; j++) {
			double got = rt[i] == MPI_INT ? ((int *)(rbuf + rd[i]))[j] :
				((double *)(rbuf + rd[i]))[j];

			if (got != value(i, rank, j) && !errors++)
				fprintf(stderr, "rank %d: from %d element %d: %g, not %g\n",
					rank, i, j, got, value(i, rank, j));
		}

	/* in place: rank r exchanges r + i elements with rank i (ints) */
	off = 0;
	for (int i = 0; i < size; i++) {
		rc[i] = rank + i;
		rt[i] = MPI_INT;
		rd[i] = off;
		for (int j = 0; j < rc[i]; j++)
			((int *)(rbuf + off))[j] = (int)value(rank, i, j);
		off += rc[i] * (int)sizeof(int);
	}
	free(rbuf);
	rbuf = calloc((size_t)off + 1, 1);
	for (int i = 0; i < size; i++)
		for (int j = 0; j < rc[i]; j++)
			((int *)(rbuf + rd[i]))[j] = (int)value(rank, i, j);
	MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rd, rt, comm);
	for (int i = 0; i < size; i++)
		for (int j = 0; j < rc[i]; j++)
			if (((int *)(rbuf + rd[i]))[j] != (int)value(i, rank, j) && !errors++)
				fprintf(stderr, "rank %d: in place from %d element %d wrong\n",
					rank, i, j);
	free(sc); free(rc); free(sd); free(rd); free(st); free(rt);
	free(sbuf); free(rbuf);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2, rank, calls = 0;
	MPI_Comm rev, half;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	for (int k = 0; k < rounds; k++) {
		one(MPI_COMM_WORLD);
		one(rev);
		one(half);
		calls += 6;
	}
	MPI_Comm_free(&rev);
	MPI_Comm_free(&half);
	int all;
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf(all ? "alltoallw: %d errors\n" : "alltoallw ok %d\n", all ? all : calls);
	MPI_Finalize();
	return all ? 1 : 0;
}
