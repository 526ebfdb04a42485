/*
 * tests/sensor/mpi_large.c - the MPI-4 large-count (_c) forms the sensor
 * wraps (an MPI with MPI_VERSION >= 4: MPICH 4).
 *
 *   mpi_large FILE EXPECT
 *
 * On an even number of ranks (the tests use 4), paired rank ^ 1: sends and
 * receives of every mode, blocking and not, the exchanges (sendrecv and
 * sendrecv_replace), persistent requests, the collectives, MPI-IO at
 * explicit offsets and through the individual pointer, Put and Get; and
 * counts past 2^31 (a send, a ready send, a Put to MPI_PROC_NULL, which
 * touch no buffer), whose bytes must be recorded in 64 bits. Each rank
 * writes to EXPECT.RANK one line per call, in order, as the trace must
 * show it: the event of the int form (MPI_Send_c: "MPI_Send") with the
 * fields the program knows (format of mpi_io.c; "req=+": a request id
 * the next MPI_Wait repeats). Rank 0 prints "mpi_large: ok" when every
 * value moved is right.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "tests/sensor/mpi_verdict.h"

#define B 100			/* ints per message or access */
#define BY (B * 4)
#define HUGE_COUNT 3000000000LL	/* > INT_MAX */

static int rank, size, bad;
static FILE *ex;
static const char *path;
static int buf[B], got[B];

static void want(int cond, const char *what)
{
	if (!cond) {
		printf("rank %d: %s\n", rank, what);
		bad = 1;
	}
}

static void fill(int *b, int base)
{
	for (int i = 0; i < B; i++)
		b[i] = base + i;
}

static int same(const int *b, int base)
{
	for (int i = 0; i < B; i++)
		if (b[i] != base + i)
			return 0;
	return 1;
}

/* Blocking sends of each mode from the even rank of a pair, received by
 * the odd one with wildcards (the actual source and tag recorded). */
static void blocking(int peer)
{
	static char bsend[BY + MPI_BSEND_OVERHEAD];
	MPI_Status st;
	void *b;
	int n;

	MPI_Send_c(buf, HUGE_COUNT, MPI_BYTE, MPI_PROC_NULL, 5, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Send peer=-2 tag=5 comm=0 bytes=%lld\n", HUGE_COUNT);
	MPI_Rsend_c(buf, HUGE_COUNT, MPI_BYTE, MPI_PROC_NULL, 6, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Rsend peer=-2 tag=6 comm=0 bytes=%lld\n", HUGE_COUNT);
	MPI_Recv_c(got, B, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st);
	fprintf(ex, "MPI_Recv peer=-2 tag=%d comm=0 bytes=0 arrived=1 probe_ns=0\n",
		MPI_ANY_TAG);
	MPI_Buffer_attach(bsend, sizeof(bsend));
	for (int tag = 1; tag <= 3; tag++) {
		if (rank % 2 == 0) {
			fill(buf, rank * 1000 + tag);
			if (tag == 1)
				MPI_Send_c(buf, B, MPI_INT, peer, tag, MPI_COMM_WORLD);
			else if (tag == 2)
				MPI_Ssend_c(buf, B, MPI_INT, peer, tag, MPI_COMM_WORLD);
			else
				MPI_Bsend_c(buf, B, MPI_INT, peer, tag, MPI_COMM_WORLD);
			fprintf(ex, "%s peer=%d tag=%d comm=0 bytes=%d\n",
				tag == 1 ? "MPI_Send" : tag == 2 ? "MPI_Ssend" : "MPI_Bsend",
				peer, tag, BY);
		} else {
			MPI_Recv_c(got, B, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
				   MPI_COMM_WORLD, &st);
			want(st.MPI_TAG == tag && same(got, peer * 1000 + tag), "recv_c");
			/* probed first, like MPI_Recv (arrived or not) */
			fprintf(ex, "MPI_Recv peer=%d tag=%d comm=0 bytes=%d probe_ns=+\n",
				peer, tag, BY);
		}
	}
	MPI_Buffer_detach(&b, &n);
}

/* Nonblocking: four receives posted, a barrier (the ready send needs
 * them), then a send of each mode; every request waited for in turn. */
static void nonblocking(int peer)
{
	static int in[4][B], out[4][B];
	static char bsend[BY + MPI_BSEND_OVERHEAD];
	static const char *const mode[4] = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend",
					    "MPI_Irsend"};
	MPI_Request rq[8];
	void *b;
	int n;

	MPI_Buffer_attach(bsend, sizeof(bsend));
	for (int i = 0; i < 4; i++) {
		MPI_Irecv_c(in[i], B, MPI_INT, peer, 10 + i, MPI_COMM_WORLD, &rq[i]);
		fprintf(ex, "MPI_Irecv peer=%d tag=%d comm=0 bytes=%d req=+\n", peer, 10 + i, BY);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 4; i++) {
		fill(out[i], rank * 1000 + 10 + i);
		if (i == 0)
			MPI_Isend_c(out[i], B, MPI_INT, peer, 10, MPI_COMM_WORLD, &rq[4]);
		else if (i == 1)
			MPI_Issend_c(out[i], B, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[5]);
		else if (i == 2)
			MPI_Ibsend_c(out[i], B, MPI_INT, peer, 12, MPI_COMM_WORLD, &rq[6]);
		else
			MPI_Irsend_c(out[i], B, MPI_INT, peer, 13, MPI_COMM_WORLD, &rq[7]);
		fprintf(ex, "%s peer=%d tag=%d comm=0 bytes=%d req=+\n", mode[i], peer,
			10 + i, BY);
	}
	for (int i = 0; i < 8; i++)
		MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
	for (int i = 0; i < 4; i++)
		want(same(in[i], peer * 1000 + 10 + i), "irecv_c");
	MPI_Buffer_detach(&b, &n);
}

/* The exchanges with the pair's other rank: a sendrecv, then a
 * sendrecv_replace with MPI_STATUS_IGNORE. */
static void exchanges(int peer)
{
	MPI_Status st;

	fill(buf, rank * 1000 + 20);
	MPI_Sendrecv_c(buf, B, MPI_INT, peer, 20, got, B, MPI_INT, peer, 20,
		       MPI_COMM_WORLD, &st);
	want(st.MPI_SOURCE == peer && same(got, peer * 1000 + 20), "sendrecv_c");
	fprintf(ex, "MPI_Sendrecv peer=%d tag=20 comm=0 bytes=%d src=%d rbytes=%d\n",
		peer, BY, peer, BY);
	fill(got, rank * 1000 + 21);
	MPI_Sendrecv_replace_c(got, B, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD,
			       MPI_STATUS_IGNORE);
	want(same(got, peer * 1000 + 21), "sendrecv_replace_c");
	fprintf(ex, "MPI_Sendrecv_replace peer=%d tag=21 comm=0 bytes=%d src=%d "
		"rbytes=%d\n", peer, BY, peer, BY);
}

/* Persistent requests made by the _c constructors, each started once: the
 * constructor records the message (no request of its own to wait for),
 * MPI_Start the activation, which MPI_Wait completes. */
static void persistent(int peer)
{
	MPI_Request rq[2];

	MPI_Recv_init_c(got, B, MPI_INT, peer, 30, MPI_COMM_WORLD, &rq[0]);
	fprintf(ex, "MPI_Recv_init peer=%d tag=30 comm=0 bytes=%d\n", peer, BY);
	fill(buf, rank * 1000 + 30);
	MPI_Send_init_c(buf, B, MPI_INT, peer, 30, MPI_COMM_WORLD, &rq[1]);
	fprintf(ex, "MPI_Send_init peer=%d tag=30 comm=0 bytes=%d\n", peer, BY);
	for (int i = 0; i < 2; i++) {
		MPI_Start(&rq[i]);
		fprintf(ex, "MPI_Start req=+ peer=%d tag=30 comm=0 bytes=%d\n", peer, BY);
	}
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	want(same(got, peer * 1000 + 30), "recv_init_c");
	MPI_Request_free(&rq[0]);
	MPI_Request_free(&rq[1]);
}

static void collectives(void)
{
	double d[10], s[10], r[10];

	for (int i = 0; i < 10; i++)
		d[i] = s[i] = rank == 0 ? i : -1;
	MPI_Bcast_c(d, 10, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Bcast bytes=80 root=0 comm=0\n");
	want(d[9] == 9, "bcast_c");
	for (int i = 0; i < 10; i++)
		s[i] = 1;
	MPI_Reduce_c(s, r, 10, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Reduce bytes=80 root=0 comm=0\n");
	want(rank != 0 || r[0] == size, "reduce_c");
	MPI_Allreduce_c(s, r, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Allreduce bytes=80 comm=0\n");
	want(r[9] == size, "allreduce_c");
}

/* One expectation line of a data access on file 1. */
static void ex_rw(const char *name, long long off, int coll, const char *last)
{
	fprintf(ex, "%s file=1 path=%s offset=%lld bytes=%d coll=%d %s\n", name,
		path, off, BY, coll, last);
}

static void seek(MPI_File fh, long long off)
{
	MPI_File_seek(fh, off, MPI_SEEK_SET);
	fprintf(ex, "MPI_File_seek file=1 path=%s voffset=%lld whence=%d pos=%lld coll=0\n",
		path, off, MPI_SEEK_SET, off);
}

/* Form f (0 at, 1 at_all, 2 individual pointer, 3 its _all, 4 iat, 5
 * i: the pointer forms after a seek) of a write (wr) or read at byte off,
 * its expectation line, and the wait of the nonblocking ones. */
static void access_c(MPI_File fh, int f, int wr, long long off)
{
	static const char *const names[6] = {"at", "at_all", "", "all", "at", ""};
	MPI_Request req;
	MPI_Status st;
	char name[64];

	if (f == 2 || f == 3 || f == 5)
		seek(fh, off);
	switch (f * 2 + wr) {
	case 0: MPI_File_read_at_c(fh, off, got, B, MPI_INT, &st); break;
	case 1: MPI_File_write_at_c(fh, off, buf, B, MPI_INT, &st); break;
	case 2: MPI_File_read_at_all_c(fh, off, got, B, MPI_INT, &st); break;
	case 3: MPI_File_write_at_all_c(fh, off, buf, B, MPI_INT, &st); break;
	case 4: MPI_File_read_c(fh, got, B, MPI_INT, &st); break;
	case 5: MPI_File_write_c(fh, buf, B, MPI_INT, &st); break;
	case 6: MPI_File_read_all_c(fh, got, B, MPI_INT, &st); break;
	case 7: MPI_File_write_all_c(fh, buf, B, MPI_INT, &st); break;
	case 8: MPI_File_iread_at_c(fh, off, got, B, MPI_INT, &req); break;
	case 9: MPI_File_iwrite_at_c(fh, off, buf, B, MPI_INT, &req); break;
	case 10: MPI_File_iread_c(fh, got, B, MPI_INT, &req); break;
	default: MPI_File_iwrite_c(fh, buf, B, MPI_INT, &req); break;
	}
	snprintf(name, sizeof(name), "MPI_File_%s%s%s%s", f >= 4 ? "i" : "",
		 wr ? "write" : "read", *names[f] ? "_" : "", names[f]);
	ex_rw(name, off, f == 1 || f == 3, f >= 4 ? "req=+" : "result=400");
	if (f >= 4)
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	if (!wr)
		want(same(got, 0), name);
}

/* Block k of rank r at byte (k * size + r) * BY (the default view: bytes):
 * form k writes block k, form k reads block 5 - k back. */
static void file_io(void)
{
	int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
	long long n = size;
	MPI_File fh;

	MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
	fprintf(ex, "MPI_File_open file=1 path=%s comm=0 flags=%d coll=1\n", path, amode);
	fill(buf, 0);
	for (int k = 0; k < 6; k++)
		access_c(fh, k, 1, (k * n + rank) * BY);
	MPI_File_sync(fh);
	fprintf(ex, "MPI_File_sync file=1 path=%s coll=1\n", path);
	for (int k = 0; k < 6; k++)
		access_c(fh, k, 0, ((5 - k) * n + rank) * BY);
	MPI_File_close(&fh);
	fprintf(ex, "MPI_File_close file=1 path=%s coll=1\n", path);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_File_delete(path, MPI_INFO_NULL);
		fprintf(ex, "MPI_File_delete path=%s\n", path);
	}
}

/* A fence epoch: Put_c of more than 2^31 bytes to MPI_PROC_NULL, Get_c of
 * the pair's block. */
static void one_sided(int peer)
{
	int *mem;
	MPI_Win w;

	MPI_Win_allocate(BY, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
	fprintf(ex, "MPI_Win_allocate win=1 comm=0 bytes=%d disp_unit=4\n", BY);
	fill(mem, rank * 1000);
	MPI_Win_fence(0, w);
	fprintf(ex, "MPI_Win_fence win=1 assert=0\n");
	MPI_Put_c(buf, HUGE_COUNT, MPI_BYTE, MPI_PROC_NULL, 0, HUGE_COUNT, MPI_BYTE, w);
	fprintf(ex, "MPI_Put win=1 peer=-2 bytes=%lld tdisp=0\n", HUGE_COUNT);
	MPI_Get_c(got, B, MPI_INT, peer, 0, B, MPI_INT, w);
	fprintf(ex, "MPI_Get win=1 peer=%d bytes=%d tdisp=0\n", peer, BY);
	MPI_Win_fence(0, w);
	fprintf(ex, "MPI_Win_fence win=1 assert=0\n");
	want(same(got, peer * 1000), "get_c");
	MPI_Win_free(&w);
	fprintf(ex, "MPI_Win_free win=1\n");
}

int main(int argc, char **argv)
{
	int peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 3 || size % 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_large FILE EXPECT (even ranks)\n");
		MPI_Finalize();
		return 2;
	}
	path = argv[1];
	ex = mpi_expect(argv[2], rank);
	peer = rank ^ 1;
	blocking(peer);
	MPI_Barrier(MPI_COMM_WORLD);
	nonblocking(peer);
	exchanges(peer);
	persistent(peer);
	collectives();
	file_io();
	one_sided(peer);
	/* mpi_verdict's reduction of the verdicts */
	fprintf(ex, "MPI_Allreduce bytes=4 comm=0\n");
	fclose(ex);
	return mpi_verdict("mpi_large", rank, bad);
}
