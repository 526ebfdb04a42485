/*
 * bench/mpi_pingpong.c - what the MPI sensor adds to a small message's
 * half round trip, traced against untraced in one run.
 *
 *   mpi_pingpong [REPS [ITERS [BYTES]]]	(defaults 201, 2000, 8)
 *
 * Ranks 0 and 1 exchange a BYTES-byte message ITERS times per block, in
 * alternating blocks: through PMPI_Send / PMPI_Recv (never traced: the
 * sensor wraps MPI_ names only) and through MPI_Send / MPI_Recv (the
 * sensor's wrappers when it is preloaded). The order of the two blocks
 * alternates from one repetition to the next, so that a drift of the host
 * falls on both. Rank 0 prints the median half round trip of each (ns),
 * and the median over the repetitions of the difference:
 *   mpi_pingpong: untraced_ns U traced_ns T added_ns D p10 A p90 B reps R
 * Without the sensor both paths are the library's: the difference is the
 * bench's own noise. Other ranks wait at the final barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);

/* One block of iters round trips; the half round trip in ns (rank 0). */
static double block(int rank, int iters, char *buf, int bytes, send_fn snd, recv_fn rcv)
{
	double t = (double)bench_now_ns();

	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			snd(buf, bytes, MPI_CHAR, 1, 5, MPI_COMM_WORLD);
			rcv(buf, bytes, MPI_CHAR, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			rcv(buf, bytes, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			snd(buf, bytes, MPI_CHAR, 0, 5, MPI_COMM_WORLD);
		}
	}
	return ((double)bench_now_ns() - t) / iters / 2;
}

int main(int argc, char **argv)
{
	int rank, size;
	int reps = argc > 1 ? atoi(argv[1]) : 201;
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	int bytes = argc > 3 ? atoi(argv[3]) : 8;
	double *u, *t, *d;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	u = calloc((size_t)(reps > 0 ? reps : 1), sizeof(double));
	t = calloc((size_t)(reps > 0 ? reps : 1), sizeof(double));
	d = calloc((size_t)(reps > 0 ? reps : 1), sizeof(double));
	buf = calloc((size_t)(bytes > 0 ? bytes : 1), 1);
	if (size < 2 || reps < 1 || iters < 1 || bytes < 0 || !u || !t || !d || !buf) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_pingpong [REPS [ITERS [BYTES]]] on 2 ranks or more\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank < 2) {
		/* warm up both paths */
		block(rank, iters, buf, bytes, PMPI_Send, PMPI_Recv);
		block(rank, iters, buf, bytes, MPI_Send, MPI_Recv);
		for (int r = 0; r < reps; r++) {
			if (r & 1) {
				t[r] = block(rank, iters, buf, bytes, MPI_Send, MPI_Recv);
				u[r] = block(rank, iters, buf, bytes, PMPI_Send, PMPI_Recv);
			} else {
				u[r] = block(rank, iters, buf, bytes, PMPI_Send, PMPI_Recv);
				t[r] = block(rank, iters, buf, bytes, MPI_Send, MPI_Recv);
			}
			d[r] = t[r] - u[r];
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		qsort(u, (size_t)reps, sizeof(double), bench_cmp_double);
		qsort(t, (size_t)reps, sizeof(double), bench_cmp_double);
		qsort(d, (size_t)reps, sizeof(double), bench_cmp_double);
		printf("mpi_pingpong: untraced_ns %.1f traced_ns %.1f added_ns %.1f p10 %.1f p90 %.1f"
		       " reps %d iters %d bytes %d\n", u[reps / 2], t[reps / 2], d[reps / 2],
		       d[reps / 10], d[reps * 9 / 10], reps, iters, bytes);
	}
	free(u);
	free(t);
	free(d);
	free(buf);
	MPI_Finalize();
	return 0;
}
