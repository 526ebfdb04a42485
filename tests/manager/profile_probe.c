/*
 * tests/manager/profile_probe.c - an MPI program of 2 ranks whose profile is
 * known exactly (tests/manager/test_profile.sh checks every figure):
 *
 *   matrix   0 -> 1: 5 MPI_Send of 1000 B, 4 MPI_Isend of 64 B, the send of
 *            one MPI_Sendrecv of 16 B (10 messages, 5272 B);
 *            1 -> 0: 3 MPI_Send of 100000 B and the Sendrecv's 16 B
 *            (4 messages, 300016 B)
 *   waits    rank 0 sleeps WAIT_MS before its first send: rank 1's first
 *            MPI_Recv waits that long; rank 1 sleeps WAIT_MS before its
 *            first 100000 B send: rank 0's MPI_Recv waits as long
 *   colls    2 MPI_Barrier, 4 MPI_Allreduce of one double, 1 MPI_Bcast of
 *            1024 B, all on MPI_COMM_WORLD
 *   files    each rank writes DIR/probe-RANK.dat with 3 write() of 4096 B,
 *            then reads it back with read() of 8192 B: 8192, 4096, then 0
 *            (12288 B read: what the calls returned, not the 24576 asked)
 *
 * usage: profile_probe DIR [WAIT_MS]
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int file_io(const char *dir, int rank)
{
	static char buf[8192];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/probe-%d.dat", dir, rank);
	memset(buf, 'a' + rank, sizeof(buf));
	if ((fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644)) < 0)
		return 1;
	for (int i = 0; i < 3; i++)
		if (write(fd, buf, 4096) != 4096)
			return 1;
	close(fd);
	if ((fd = open(path, O_RDONLY)) < 0)
		return 1;
	if (read(fd, buf, 8192) != 8192 || read(fd, buf, 8192) != 4096 ||
	    read(fd, buf, 8192) != 0)
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static char big[100000], small[1000], tiny[4][64];
	long wait_ms = argc > 2 ? atol(argv[2]) : 300;
	int rank, size, bad = 0;
	MPI_Request rq[4];
	double x = 1, y;
	char sr[16], rr[16];
	char bc[1024];

	if (argc < 2) {
		fprintf(stderr, "usage: profile_probe DIR [WAIT_MS]\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "profile_probe: 2 ranks, not %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int peer = 1 - rank;

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		sleep_ms(wait_ms);
		for (int i = 0; i < 5; i++)
			MPI_Send(small, sizeof(small), MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		for (int i = 0; i < 4; i++)
			MPI_Isend(tiny[i], 64, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &rq[i]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		for (int i = 0; i < 3; i++)
			MPI_Recv(big, sizeof(big), MPI_CHAR, 1, 3, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
	} else {
		for (int i = 0; i < 5; i++)
			MPI_Recv(small, sizeof(small), MPI_CHAR, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		for (int i = 0; i < 4; i++)
			MPI_Irecv(tiny[i], 64, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rq[i]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		sleep_ms(wait_ms);
		for (int i = 0; i < 3; i++)
			MPI_Send(big, sizeof(big), MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	MPI_Sendrecv(sr, 16, MPI_CHAR, peer, 4, rr, 16, MPI_CHAR, peer, 4, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (int i = 0; i < 4; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Bcast(bc, sizeof(bc), MPI_CHAR, 0, MPI_COMM_WORLD);
	bad = file_io(argv[1], rank);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return bad;
}
