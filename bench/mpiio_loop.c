/*
 * bench/mpiio_loop.c - N MPI-IO writes of S bytes per rank in a loop,
 * timed: the MPI sensor's cost per MPI-IO call (bench/mpiio_overhead.sh).
 *
 *   mpiio_loop FILE N S FORM    FORM: at (MPI_File_write_at), ind
 *   (MPI_File_write, the individual pointer: the sensor reads it first),
 *   rank (MPI_Comm_rank: the cost of any wrapped call, for comparison)
 *
 * Rank 0 prints the loop's wall time per call in ns (the slowest rank's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, size, n, s, ind, r;
	double t, tmax;
	char *buf;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 5) {
		if (rank == 0)
			fprintf(stderr, "usage: mpiio_loop FILE N S at|ind|rank\n");
		MPI_Finalize();
		return 2;
	}
	n = atoi(argv[2]);
	s = atoi(argv[3]);
	ind = !strcmp(argv[4], "ind") ? 1 : !strcmp(argv[4], "rank") ? 2 : 0;
	buf = calloc(1, (size_t)s);
	MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
		      MPI_INFO_NULL, &fh);
	MPI_File_seek(fh, (MPI_Offset)rank * n * s, MPI_SEEK_SET);
	MPI_Barrier(MPI_COMM_WORLD);
	t = MPI_Wtime();
	for (int i = 0; i < n; i++) {
		if (ind == 2)
			MPI_Comm_rank(MPI_COMM_WORLD, &r);
		else if (ind)
			MPI_File_write(fh, buf, s, MPI_BYTE, MPI_STATUS_IGNORE);
		else
			MPI_File_write_at(fh, ((MPI_Offset)rank * n + i) * s, buf, s,
					  MPI_BYTE, MPI_STATUS_IGNORE);
	}
	t = MPI_Wtime() - t;
	MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_File_close(&fh);
	if (rank == 0) {
		printf("%.1f\n", tmax * 1e9 / n);
		MPI_File_delete(argv[1], MPI_INFO_NULL);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
