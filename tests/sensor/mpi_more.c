/*
 * tests/sensor/mpi_more.c - the calls of sensor/mpi_more.def on 4 ranks,
 * each written to EXPECT.RANK as the event the sensor must record
 * (tests/sensor/mpi_io_run.sh compares them with the trace):
 * MPI_Isendrecv and MPI_Isendrecv_replace around the ring (MPI-4 only:
 * MPICH 4), a generalized request started, completed and waited for,
 * MPI_Buffer_attach / MPI_Bsend / MPI_Buffer_detach, MPI_Reduce_local.
 * Every received buffer is checked.
 *
 *   mpi_more EXPECT
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "tests/sensor/mpi_verdict.h"

#define B 100			/* ints per message */

static int rank, size, bad;

static void want(int cond, const char *what)
{
	if (!cond) {
		printf("rank %d: %s\n", rank, what);
		bad = 1;
	}
}

static int query(void *extra, MPI_Status *st)
{
	(void)extra;
	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int gfree(void *extra)
{
	(void)extra;
	return MPI_SUCCESS;
}

static int gcancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	int sbuf[B], rbuf[B], local[16], acc[16], right, left, ok, bsz, *got;
	char *bbuf;
	MPI_Request req;
	FILE *ex;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		fprintf(stderr, "usage: mpi_more EXPECT\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	ex = mpi_expect(argv[1], rank);
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;
	for (int i = 0; i < B; i++)
		sbuf[i] = rank * 1000 + i;
#if MPI_VERSION >= 4
	MPI_Isendrecv(sbuf, B, MPI_INT, right, 5, rbuf, B, MPI_INT, left, 5,
		      MPI_COMM_WORLD, &req);
	fprintf(ex, "MPI_Isendrecv peer=%d tag=5 comm=0 bytes=%d src=%d req=+\n",
		right, B * 4, left);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	/* (MPICH 4.0.2 leaves st.MPI_SOURCE and MPI_TAG 0) */
	want(rbuf[7] == left * 1000 + 7, "Isendrecv received the wrong data");
	for (int i = 0; i < B; i++)
		rbuf[i] = rank * 1000 + i;
	MPI_Isendrecv_replace(rbuf, B, MPI_INT, left, 6, right, 6,
			      MPI_COMM_WORLD, &req);
	fprintf(ex, "MPI_Isendrecv_replace peer=%d tag=6 comm=0 bytes=%d "
		"src=%d req=+\n", left, B * 4, right);
	MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
	want(rbuf[9] == right * 1000 + 9, "Isendrecv_replace received the "
	     "wrong data");
#endif
	MPI_Grequest_start(query, gfree, gcancel, NULL, &req);
	fprintf(ex, "MPI_Grequest_start req=+\n");
	MPI_Grequest_complete(req);
	fprintf(ex, "MPI_Grequest_complete req=+\n");
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	want(req == MPI_REQUEST_NULL, "generalized request not freed");

	bsz = B * 4 + MPI_BSEND_OVERHEAD;
	bbuf = malloc((size_t)bsz);
	MPI_Buffer_attach(bbuf, bsz);
	fprintf(ex, "MPI_Buffer_attach bytes=%d\n", bsz);
	MPI_Bsend(sbuf, B, MPI_INT, right, 7, MPI_COMM_WORLD);
	MPI_Recv(rbuf, B, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	want(rbuf[3] == left * 1000 + 3, "Bsend received the wrong data");
	MPI_Buffer_detach(&got, &ok);
	fprintf(ex, "MPI_Buffer_detach bytes=%d\n", bsz);
	want(ok == bsz && (char *)got == bbuf, "Buffer_detach gave another buffer");
	free(bbuf);

	for (int i = 0; i < 16; i++) {
		local[i] = i;
		acc[i] = rank;
	}
	MPI_Reduce_local(local, acc, 16, MPI_INT, MPI_SUM);
	fprintf(ex, "MPI_Reduce_local bytes=64\n");
	want(acc[15] == 15 + rank, "Reduce_local computed the wrong sum");
	fclose(ex);
	return mpi_verdict("mpi_more", rank, bad);
}
