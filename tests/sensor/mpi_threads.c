/*
 * tests/sensor/mpi_threads.c - point to point from several threads of each
 * rank at once (MPI_THREAD_MULTIPLE).
 *
 *   mpi_threads
 *
 * NT threads per rank, each on its own communicator (thread 0 on
 * MPI_COMM_WORLD, thread t on the t-th dup of it) and its own tags, run
 * ITER rounds around the ring: Irecv + Isend + Waitall, Sendrecv, Isend +
 * Recv + Wait, Irecv from MPI_ANY_SOURCE + Isend + Waitany (twice), each
 * message's content checked. Rank 0 prints "mpi_threads: ok" when every
 * value was right, or "mpi_threads: no MPI_THREAD_MULTIPLE" when the
 * library does not provide it (the test is then skipped). The test
 * (tests/sensor/mpi_io_run.sh, PROG threads) checks the trace with
 * mpi_tracecheck: the counts per rank, every message matched, every request
 * completed once, and the calls recorded on NT threads of each rank.
 */
#include <pthread.h>
#include <stdio.h>

#include <mpi.h>

#define NT 3
#define ITER 40
#define N 8

static int rank, size, bad[NT];
static MPI_Comm comms[NT];

static void check(int t, const int *v, int from, int round, int what)
{
	for (int i = 0; i < N; i++)
		if (v[i] != ((from * 1000 + round) * 10 + what) * N + i)
			bad[t] = 1;
}

static void fill(int *v, int round, int what)
{
	for (int i = 0; i < N; i++)
		v[i] = ((rank * 1000 + round) * 10 + what) * N + i;
}

static void *body(void *arg)
{
	int t = (int)(long)arg, next = (rank + 1) % size;
	int prev = (rank + size - 1) % size, tag = 100 * (t + 1), k;
	int s[N], r[N], s2[N], r2[N];
	MPI_Comm c = comms[t];
	MPI_Request q[2];

	for (int it = 0; it < ITER; it++) {
		fill(s, it, 0);
		MPI_Irecv(r, N, MPI_INT, prev, tag, c, &q[0]);
		MPI_Isend(s, N, MPI_INT, next, tag, c, &q[1]);
		MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
		check(t, r, prev, it, 0);
		fill(s, it, 1);
		MPI_Sendrecv(s, N, MPI_INT, next, tag + 1, r, N, MPI_INT, prev,
			     tag + 1, c, MPI_STATUS_IGNORE);
		check(t, r, prev, it, 1);
		fill(s, it, 2);
		MPI_Isend(s, N, MPI_INT, next, tag + 2, c, &q[0]);
		MPI_Recv(r, N, MPI_INT, prev, tag + 2, c, MPI_STATUS_IGNORE);
		MPI_Wait(&q[0], MPI_STATUS_IGNORE);
		check(t, r, prev, it, 2);
		fill(s2, it, 3);
		MPI_Irecv(r2, N, MPI_INT, MPI_ANY_SOURCE, tag + 3, c, &q[0]);
		MPI_Isend(s2, N, MPI_INT, next, tag + 3, c, &q[1]);
		MPI_Waitany(2, q, &k, MPI_STATUS_IGNORE);
		MPI_Waitany(2, q, &k, MPI_STATUS_IGNORE);
		check(t, r2, prev, it, 3);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	int provided = 0, b = 0, allbad = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("mpi_threads: no MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 0;
	}
	comms[0] = MPI_COMM_WORLD;
	for (int t = 1; t < NT; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	for (int t = 0; t < NT; t++)
		if (pthread_create(&th[t], NULL, body, (void *)(long)t) != 0) {
			perror("pthread_create");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t], NULL);
		b |= bad[t];
	}
	for (int t = 1; t < NT; t++)
		MPI_Comm_free(&comms[t]);
	MPI_Reduce(&b, &allbad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf(allbad ? "mpi_threads: FAILED\n" : "mpi_threads: ok\n");
	MPI_Finalize();
	return 0;
}
