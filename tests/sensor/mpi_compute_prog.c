/*
 * tests/sensor/mpi_compute_prog.c - the MPI sensor's computation accounting
 * under test (tests/sensor/mpi_compute.sh): on 2 ranks or more, ITERS
 * exchanges around a ring (MPI_Sendrecv) with a short computation before
 * each (about 1 us) and a long one (about 0.3 ms) every 100th; then rank 0
 * forks, and the child makes an MPI call that stays local
 * (MPI_Comm_rank: the sensor's accounting runs in a process whose thread
 * did not map its per-thread state) before _exit. Prints "ring: N
 * exchanges" and, on rank 0, "fork: child exit 0".
 *   mpi_compute_prog [ITERS]	(default 2000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static double work(int n)
{
	volatile double acc = 0;

	for (int i = 0; i < n; i++)
		acc += i * 1e-9;
	return acc;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 2000;
	char out[8] = {0}, in[8];
	double acc = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < iters; i++) {
		acc += work(i % 100 == 99 ? 200000 : 300);
		MPI_Sendrecv(out, sizeof(out), MPI_CHAR, (rank + 1) % size, 1, in, sizeof(in),
			     MPI_CHAR, (rank + size - 1) % size, 1, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int st = -1, r = -1;
		pid_t pid;

		printf("ring: %d exchanges (%.3f)\n", iters, acc > 0 ? 1.0 : 0.0);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
			_exit(r == 0 ? 0 : 3);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid)
			printf("fork: child exit %d\n",
			       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		else
			printf("fork: failed\n");
	}
	MPI_Finalize();
	return 0;
}
