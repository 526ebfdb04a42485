/*
 * manager/launch/pingpong.c - tapestry-pingpong-FLAVOUR, the network calibration
 * `tapestry launch` (and `tapestry run` of an mpirun) runs before the
 * application, with the job's own mpirun and hosts: an MPI ping-pong
 * between ranks 0 and 1 (other ranks only wait).
 *
 *   1-byte messages, ROUNDS round trips each timed alone: one-way latency
 *   = half a round trip (minimum and median printed);
 *   SIZE-byte messages, REPS round trips each timed alone (after two
 *   unmeasured ones): one-way time T(SIZE); bandwidth = SIZE / (T - L),
 *   with L the median latency, so that a simulated message of SIZE bytes
 *   on a path of latency L and this bandwidth takes T;
 *   the sizes between (64 B to 1 MiB, times 4; REPS_MID round trips each):
 *   one-way T(s), and SMPI's piecewise bandwidth factor for messages of s
 *   bytes and more, f(s) = s / (B x (T(s) - L)), so that a simulated
 *   message of s bytes takes T(s) too (MPI libraries switch protocols
 *   between sizes: a 4 KiB message is no straight line between 1 byte and
 *   4 MiB).
 *
 * Rank 0 prints, on stdout, lines the manager parses:
 *   pingpong: hosts A B
 *   pingpong: latency_ns min X median Y rounds N
 *   pingpong: size_bytes S one_way_ns min X median Y reps R
 *   pingpong: net_latency_ns L net_bandwidth_Bps B
 *   pingpong: size_bytes S one_way_ns min X median Y reps R   (each size)
 *   pingpong: bw_factor S0:F0;S1:F1;...
 * Usage: tapestry-pingpong-FLAVOUR [--wait-go] [ROUNDS [SIZE [REPS]]]
 * (defaults 1000, 4194304, 10; maximums 10^6, 1 GiB, 10^4).
 * --wait-go: once both ranks are up, rank 0 waits for a line (or the end)
 * on its stdin, which mpirun forwards from its own, before measuring
 * (GO_WAIT_S at most): the manager starts the ping-pong beside its
 * collectors and lets it measure once they are up.
 * Exit status 0, 2 on bad arguments or fewer than two ranks (MPI errors
 * abort the job, as MPI does by default).
 */
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS_MAX 1000000L
#define SIZE_MAX_BYTES (1L << 30)
#define REPS_MAX 10000L
#define WARMUP 2
#define REPS_MID 200		/* round trips per intermediate size */
#define MID_FIRST 64
#define MID_LAST (1L << 20)
#define GO_WAIT_S 50

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Minimum and median of v[0..n-1] (sorted in place). */
static void stats(double *v, long n, double *min, double *med)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*min = v[0];
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* n timed round trips of len bytes between ranks 0 and 1 after warm
 * unmeasured ones; one-way times (s) into t (rank 0 only). */
static void pingpong(int rank, char *buf, int len, long n, int warm, double *t)
{
	for (long i = -warm; i < n; i++) {
		double t0 = MPI_Wtime();

		if (rank == 0) {
			MPI_Send(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (i >= 0)
				t[i] = (MPI_Wtime() - t0) / 2;
		} else {
			MPI_Recv(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
}

/* --wait-go: a line, the end of stdin or GO_WAIT_S, whichever is first. */
static void wait_go(void)
{
	struct pollfd p = {0, POLLIN, 0};
	char c = 0;

	while (c != '\n' && poll(&p, 1, GO_WAIT_S * 1000) > 0 && read(0, &c, 1) == 1)
		;
}

/* A decimal argument in [1, max], or -1. */
static long arg(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v >= 1 && v <= max ? v : -1;
}

int main(int argc, char **argv)
{
	long rounds = 1000, size = 4L << 20, reps = 10;
	char host[MPI_MAX_PROCESSOR_NAME] = "", peer[MPI_MAX_PROCESSOR_NAME] = "";
	double *t = NULL, lmin = 0, lmed = 0, smin, smed, bw = 1;
	char *buf = NULL;
	int rank, nranks, len, rc = 0, go = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc > 1 && !strcmp(argv[1], "--wait-go")) {
		go = 1;
		argv++;
		argc--;
	}
	if ((argc > 1 && (rounds = arg(argv[1], ROUNDS_MAX)) < 0) ||
	    (argc > 2 && (size = arg(argv[2], SIZE_MAX_BYTES)) < 0) ||
	    (argc > 3 && (reps = arg(argv[3], REPS_MAX)) < 0) || argc > 4) {
		if (rank == 0)
			fprintf(stderr, "usage: %s [--wait-go] [ROUNDS [SIZE [REPS]]] "
				"(at most %ld, %ld, %ld)\n", argv[0], ROUNDS_MAX,
				SIZE_MAX_BYTES, REPS_MAX);
		rc = 2;
		goto out;
	}
	if (nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "%s: needs two ranks (mpirun -np 2)\n",
				argv[0]);
		rc = 2;
		goto out;
	}
	if (rank > 1)
		goto out;
	buf = calloc(1, (size_t)(size > MID_LAST ? size : MID_LAST));
	t = calloc((size_t)(rounds > reps ? rounds : reps) + REPS_MID, sizeof(*t));
	if (!buf || !t) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Get_processor_name(host, &len);
	if (rank == 0)
		MPI_Recv(peer, sizeof(peer), MPI_CHAR, 1, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(host, (int)strlen(host) + 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	if (go && rank == 0)
		wait_go();
	pingpong(rank, buf, 1, rounds, (int)(rounds / 10 + 1), t);
	if (rank == 0)
		stats(t, rounds, &lmin, &lmed);
	pingpong(rank, buf, (int)size, reps, WARMUP, t);
	if (rank == 0) {
		stats(t, reps, &smin, &smed);
		/* the time the bytes themselves took; never below a tenth of
		 * the whole (a message that size is mostly transfer) */
		bw = (double)size / (smed - lmed > smed / 10 ? smed - lmed : smed);
		printf("pingpong: hosts %s %s\n", host, peer);
		printf("pingpong: latency_ns min %.1f median %.1f rounds %ld\n",
		       lmin * 1e9, lmed * 1e9, rounds);
		printf("pingpong: size_bytes %ld one_way_ns min %.1f median %.1f "
		       "reps %ld\n", size, smin * 1e9, smed * 1e9, reps);
		printf("pingpong: net_latency_ns %.1f net_bandwidth_Bps %.6g\n",
		       lmed * 1e9, bw);
		fflush(stdout);
	}
	/* the sizes between: SMPI's bandwidth factor, piecewise */
	{
		char fac[1024] = "0:1";
		size_t used = strlen(fac);

		for (long s = MID_FIRST; s <= MID_LAST && s < size; s *= 4) {
			pingpong(rank, buf, (int)s, REPS_MID, WARMUP, t);
			if (rank != 0)
				continue;
			double mn, md, xfer, f;

			stats(t, REPS_MID, &mn, &md);
			printf("pingpong: size_bytes %ld one_way_ns min %.1f median "
			       "%.1f reps %d\n", s, mn * 1e9, md * 1e9, REPS_MID);
			/* at least a nanosecond of transfer: below it the
			 * size does not matter */
			xfer = md - lmed > 1e-9 ? md - lmed : 1e-9;
			f = (double)s / (bw * xfer);
			if (f > 1e3)
				f = 1e3;
			used += (size_t)snprintf(fac + used, sizeof(fac) - used,
						 ";%ld:%.4g", s, f);
			if (used >= sizeof(fac))
				break;
		}
		/* from SIZE on, the bandwidth itself */
		if (rank == 0 && used < sizeof(fac)) {
			snprintf(fac + used, sizeof(fac) - used, ";%ld:1", size);
			printf("pingpong: bw_factor %s\n", fac);
		}
		fflush(stdout);
	}
out:
	free(buf);
	free(t);
	MPI_Finalize();
	return rc;
}
