/*
 * bench/perturbation.c - an MPI program that the tracer perturbs heavily:
 * per iteration some computation, many cheap buffered fwrite calls (each
 * traced), and communication:
 *   perturbation [ITERS [WRITES [WORK [PATTERN [PING [CALLS]]]]]]
 * (defaults 2000, 100, 2000, 0, 0, 0)
 * PATTERN 0: a small message around a ring (MPI_Sendrecv); 1: a halo
 * exchange, 4 KiB to each neighbour (MPI_Irecv, MPI_Isend, MPI_Waitall),
 * then an MPI_Allreduce of one double.
 * Rank 0 prints the time between the two barriers that frame the timed
 * region, the maximum over ranks, the time the ranks spent in their own
 * part of the iterations (from the end of one iteration's last MPI call to
 * the start of the next one's first: what the trace's COMPUTE events
 * cover), the mean over ranks, and with PING 1 the one-way latency of a
 * 64-byte message between ranks 0 and 1 before and after the region
 * (median of 1000 round trips / 2; else 0 0):
 *   perturbation: region_ns N local_ns L pingpong_ns PRE POST
 * The ping-pong calls PMPI_Send and PMPI_Recv, which the MPI sensor does
 * not wrap: it measures the host, not the tracer (but the trace sees its
 * busy-polling as computation, which a replay's flop rate takes in: off
 * by default). On a virtual machine the
 * hypervisor may place the two vCPUs on cores that share a cache or not,
 * and the latency (and every MPI call's cost) changes with it: here 115 or
 * 430 ns, from one run to the next. bench/perturbation.sh runs it
 * untraced and traced and compares the traced run's corrected trace with
 * the untraced runs made in the same placement.
 * With CALLS 1 each rank also times each MPI call of the iteration (a clock
 * read before each, which the calls' times include: 19 ns here; off by
 * default, as it adds to the program) and prints its means in call order:
 *   perturbation: calls rank R NAME MEAN_NS NAME MEAN_NS ...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

/* Median one-way latency of a 64-byte message between ranks 0 and 1, on
 * rank 0 (0 elsewhere, or with one rank). */
#define PINGS 1000
static double pingpong(int rank, int size)
{
	static double rtt[PINGS];
	char b[64] = {0};

	if (size < 2 || rank > 1)
		return 0;
	for (int i = 0; i < PINGS; i++) {
		double t = (double)bench_now_ns();

		if (rank == 0) {
			PMPI_Send(b, sizeof(b), MPI_CHAR, 1, 7, MPI_COMM_WORLD);
			PMPI_Recv(b, sizeof(b), MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			PMPI_Recv(b, sizeof(b), MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			PMPI_Send(b, sizeof(b), MPI_CHAR, 0, 7, MPI_COMM_WORLD);
		}
		rtt[i] = (double)bench_now_ns() - t;
	}
	qsort(rtt, PINGS, sizeof(rtt[0]), bench_cmp_double);
	return rtt[PINGS / 2] / 2;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 2000;
	int writes = argc > 2 ? atoi(argv[2]) : 100;
	int work = argc > 3 ? atoi(argv[3]) : 2000;
	int pattern = argc > 4 ? atoi(argv[4]) : 0;
	int ping = argc > 5 ? atoi(argv[5]) : 0;
	int calls = argc > 6 ? atoi(argv[6]) : 0;
	static const char *const names[2][6] = {
		{"MPI_Sendrecv"},
		{"MPI_Irecv", "MPI_Irecv", "MPI_Isend", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce"},
	};
	double cs[6] = {0}, c[7];
	int nc = pattern == 0 ? 1 : 6, k = 0;
	volatile double acc = 0;
	char tok[64] = {0}, in[64];
	static char halo[2][4096], got[2][4096];
	MPI_Request rq[4];
	FILE *f;

	/* CALLS: each MPI call's start, and the iteration's end */
#define STAMP() do { if (calls) c[k++] = (double)bench_now_ns(); } while (0)
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	f = fopen("/dev/null", "w");
	if (!f)
		MPI_Abort(MPI_COMM_WORLD, 1);
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	double pre = ping ? pingpong(rank, size) : 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime(), local = 0, local_sum = 0, tl = (double)bench_now_ns();
	for (int i = 0; i < iters; i++) {
		for (int k = 0; k < work; k++)
			acc += k * 1e-9;
		for (int w = 0; w < writes; w++)
			fwrite(tok, 1, 8, f);
		int right = (rank + 1) % size, left = (rank + size - 1) % size;
		local += (double)bench_now_ns() - tl;
		k = 0;
		STAMP();
		if (pattern == 0) {
			MPI_Sendrecv(tok, sizeof(tok), MPI_CHAR, right, i, in, sizeof(in),
				     MPI_CHAR, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			double x = acc, sum;

			MPI_Irecv(got[0], sizeof(got[0]), MPI_CHAR, left, 1, MPI_COMM_WORLD, &rq[0]);
			STAMP();
			MPI_Irecv(got[1], sizeof(got[1]), MPI_CHAR, right, 2, MPI_COMM_WORLD, &rq[1]);
			STAMP();
			MPI_Isend(halo[0], sizeof(halo[0]), MPI_CHAR, right, 1, MPI_COMM_WORLD, &rq[2]);
			STAMP();
			MPI_Isend(halo[1], sizeof(halo[1]), MPI_CHAR, left, 2, MPI_COMM_WORLD, &rq[3]);
			STAMP();
			MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
			STAMP();
			MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
		tl = (double)bench_now_ns();
		if (calls) {
			c[k] = tl;
			for (int j = 0; j < nc; j++)
				cs[j] += c[j + 1] - c[j];
		}
	}
	double mine = MPI_Wtime() - t0, worst = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&local, &local_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	double post = ping ? pingpong(rank, size) : 0;
	if (rank == 0)
		printf("perturbation: region_ns %.0f local_ns %.0f pingpong_ns %.0f %.0f (acc %.3f)\n",
		       worst * 1e9, local_sum / size, pre, post, acc);
	if (calls) {
		char line[512];
		int n = snprintf(line, sizeof(line), "perturbation: calls rank %d", rank);

		for (int j = 0; j < nc && n > 0 && (size_t)n < sizeof(line); j++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %.0f", names[pattern != 0][j],
				      iters ? cs[j] / iters : 0);
		printf("%s\n", line);
	}
	fclose(f);
	MPI_Finalize();
	return 0;
}
