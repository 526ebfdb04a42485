/*
 * bench/call_residual.c - one MPI call (or pattern) in a tight loop, for
 * bench/call_residual.sh: what the correction leaves per call.
 *   call_residual KIND [N]   (N: 20000)
 * KIND 0: MPI_Comm_rank (the MPI sensor's calibration call: no progress
 * engine); 1: MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF)
 * (one pass of the progress engine, nothing pending); 2: MPI_Irecv and
 * MPI_Isend of 8 bytes to itself on MPI_COMM_SELF, then MPI_Waitall.
 * The loop runs twice between barriers; rank 0 prints the second time:
 *   call_residual: kind K per_iter_ns T
 * The trace's corrected time between the second pair of barriers, over N,
 * is the same figure as the correction sees it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

int main(int argc, char **argv)
{
	int kind = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 20000;
	int rank, r, flag;
	char a[8] = {0}, b[8];
	MPI_Request rq[2];
	MPI_Status st;
	double t = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int rep = 0; rep < 2; rep++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = (double)bench_now_ns();

		for (int i = 0; i < n; i++) {
			if (kind == 0) {
				MPI_Comm_rank(MPI_COMM_WORLD, &r);
			} else if (kind == 1) {
				MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &st);
			} else {
				MPI_Irecv(b, sizeof(b), MPI_CHAR, 0, 1, MPI_COMM_SELF, &rq[0]);
				MPI_Isend(a, sizeof(a), MPI_CHAR, 0, 1, MPI_COMM_SELF, &rq[1]);
				MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
			}
		}
		t = (double)bench_now_ns() - t0;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("call_residual: kind %d per_iter_ns %.1f\n", kind, t / n);
	MPI_Finalize();
	return 0;
}
