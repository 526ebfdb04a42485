/*
 * tests/sensor/mpi_rma.c - one-sided communication through every call the
 * sensor wraps.
 *
 *   mpi_rma EXPECT
 *
 * On 3 or more ranks (the tests use 4): windows made four ways, fence,
 * passive-target (lock, lock_all) and general active-target (post, start,
 * complete, wait) epochs, a dynamic window's attach, sync and detach, a
 * shared memory window's query, with Put, Get, Accumulate, Get_accumulate,
 * Fetch_and_op, Compare_and_swap and the request-based Rput, Rget,
 * Raccumulate, Rget_accumulate (completed by MPI_Wait), the flushes, and a
 * Put to MPI_PROC_NULL. Each rank writes to EXPECT.RANK one line per
 * one-sided call, in order: "NAME field=value ..." with what the program
 * knows (window id, target world rank, bytes, displacement, request "+"),
 * which the test compares with the trace. The group constructors are
 * called too (ids, sizes, lowest world ranks), before the windows and for
 * the post/start/complete/wait epoch. Rank 0 prints "mpi_rma: ok" when
 * every value read back is right.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "tests/sensor/mpi_verdict.h"

#define B 16

static int rank, size, bad;
static FILE *ex;

static void want(int cond, const char *what)
{
	if (!cond) {
		printf("rank %d: %s\n", rank, what);
		bad = 1;
	}
}

/* fence epoch on w (id 1): Put to next, Get from prev, Accumulate to 0 */
static void fence_epoch(MPI_Win w, int *mem)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int src[B], got[B], one = 1, rc, cls;

	for (int i = 0; i < B; i++)
		src[i] = rank * 100 + i;
	MPI_Win_fence(0, w);
	fprintf(ex, "MPI_Win_fence win=1 assert=0\n");
	MPI_Put(src, B, MPI_INT, next, 0, B, MPI_INT, w);
	fprintf(ex, "MPI_Put win=1 peer=%d bytes=%d tdisp=0\n", next, B * 4);
	MPI_Get(got, B, MPI_INT, prev, B, B, MPI_INT, w);
	fprintf(ex, "MPI_Get win=1 peer=%d bytes=%d tdisp=%d\n", prev, B * 4, B);
	MPI_Accumulate(&one, 1, MPI_INT, 0, 2 * B, 1, MPI_INT, MPI_SUM, w);
	fprintf(ex, "MPI_Accumulate win=1 peer=0 bytes=4 tdisp=%d\n", 2 * B);
	MPI_Put(src, B, MPI_INT, MPI_PROC_NULL, 0, B, MPI_INT, w);
	fprintf(ex, "MPI_Put win=1 peer=-2 bytes=%d tdisp=0\n", B * 4);
	/* bad input: a target outside the window's group (errors returned) */
	rc = MPI_Put(src, B, MPI_INT, size, 0, B, MPI_INT, w);
	fprintf(ex, "MPI_Put win=1 peer=-3 bytes=%d tdisp=0 failed=1\n", B * 4);
	MPI_Error_class(rc, &cls);
	if (rank == 0)
		printf("Put to rank %d: %s\n", size, rc == MPI_SUCCESS ? "worked" :
		       cls == MPI_ERR_RANK ? "MPI_ERR_RANK" : "another error");
	MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
	fprintf(ex, "MPI_Win_fence win=1 assert=%d\n", MPI_MODE_NOSUCCEED);
	want(mem[0] == prev * 100 && mem[B - 1] == prev * 100 + B - 1, "fence put");
	want(got[0] == prev * 1000, "fence get");
	if (rank == 0)
		want(mem[2 * B] == size, "fence accumulate");
}

/* lock epoch on w to next: the atomics, flushes */
static void lock_epoch(MPI_Win w)
{
	int next = (rank + 1) % size, v = 1, r = -1, cmp = 0, nv = 7;
	long long l = 1, lr = -1;

	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, w);
	fprintf(ex, "MPI_Win_lock win=1 peer=%d lock_type=%d assert=0\n", next,
		MPI_LOCK_EXCLUSIVE);
	MPI_Get_accumulate(&l, 1, MPI_LONG_LONG, &lr, 1, MPI_LONG_LONG, next, 2 * B,
			   1, MPI_LONG_LONG, MPI_SUM, w);
	fprintf(ex, "MPI_Get_accumulate win=1 peer=%d bytes=8 tdisp=%d rbytes=8\n",
		next, 2 * B);
	MPI_Fetch_and_op(&v, &r, MPI_INT, next, 3 * B, MPI_SUM, w);
	fprintf(ex, "MPI_Fetch_and_op win=1 peer=%d bytes=4 tdisp=%d\n", next, 3 * B);
	MPI_Win_flush(next, w);
	fprintf(ex, "MPI_Win_flush win=1 peer=%d\n", next);
	MPI_Compare_and_swap(&nv, &cmp, &r, MPI_INT, next, 3 * B + 1, w);
	fprintf(ex, "MPI_Compare_and_swap win=1 peer=%d bytes=4 tdisp=%d\n", next,
		3 * B + 1);
	MPI_Win_flush_local(next, w);
	fprintf(ex, "MPI_Win_flush_local win=1 peer=%d\n", next);
	MPI_Win_unlock(next, w);
	fprintf(ex, "MPI_Win_unlock win=1 peer=%d\n", next);
	want(r == 0, "compare_and_swap");
}

/* lock_all epoch: the request-based calls, each completed by MPI_Wait */
static void lock_all_epoch(MPI_Win w)
{
	int prev = (rank + size - 1) % size, src[B], got[B], r2[2], one = 1;
	MPI_Request q;

	for (int i = 0; i < B; i++)
		src[i] = rank;
	MPI_Win_lock_all(0, w);
	fprintf(ex, "MPI_Win_lock_all win=1 assert=0\n");
	MPI_Rput(src, B, MPI_INT, prev, 5 * B, B, MPI_INT, w, &q);
	fprintf(ex, "MPI_Rput win=1 peer=%d bytes=%d tdisp=%d req=+\n", prev, B * 4, 5 * B);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	MPI_Rget(got, B, MPI_INT, prev, 0, B, MPI_INT, w, &q);
	fprintf(ex, "MPI_Rget win=1 peer=%d bytes=%d tdisp=0 req=+\n", prev, B * 4);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	MPI_Raccumulate(&one, 1, MPI_INT, prev, 6 * B, 1, MPI_INT, MPI_SUM, w, &q);
	fprintf(ex, "MPI_Raccumulate win=1 peer=%d bytes=4 tdisp=%d req=+\n", prev, 6 * B);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	/* MPI_NO_OP: no origin data, 2 ints fetched */
	MPI_Rget_accumulate(NULL, 0, MPI_INT, r2, 2, MPI_INT, prev, 6 * B + 2, 2,
			    MPI_INT, MPI_NO_OP, w, &q);
	fprintf(ex, "MPI_Rget_accumulate win=1 peer=%d bytes=0 tdisp=%d req=+ rbytes=8\n",
		prev, 6 * B + 2);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	MPI_Win_flush_all(w);
	fprintf(ex, "MPI_Win_flush_all win=1\n");
	MPI_Win_flush_local_all(w);
	fprintf(ex, "MPI_Win_flush_local_all win=1\n");
	MPI_Win_unlock_all(w);
	fprintf(ex, "MPI_Win_unlock_all win=1\n");
}

/* post/start/complete/wait on w2 (id 2): Put to next */
static void pscw_epoch(MPI_Win w2, int *mem2)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, v = rank + 1;
	MPI_Group world, gnext, gprev;

	/* group ids 8, 9, 10 after the 7 of groups() */
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	fprintf(ex, "MPI_Comm_group comm=0 newgroup=8 size=%d leader=0\n", size);
	MPI_Group_incl(world, 1, &next, &gnext);
	fprintf(ex, "MPI_Group_incl group=8 newgroup=9 size=1 leader=%d count=1\n", next);
	MPI_Group_incl(world, 1, &prev, &gprev);
	fprintf(ex, "MPI_Group_incl group=8 newgroup=10 size=1 leader=%d count=1\n", prev);
	MPI_Win_post(gprev, 0, w2);
	fprintf(ex, "MPI_Win_post win=2 assert=0 count=1\n");
	MPI_Win_start(gnext, 0, w2);
	fprintf(ex, "MPI_Win_start win=2 assert=0 count=1\n");
	MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, w2);
	fprintf(ex, "MPI_Put win=2 peer=%d bytes=4 tdisp=1\n", next);
	MPI_Win_complete(w2);
	fprintf(ex, "MPI_Win_complete win=2\n");
	MPI_Win_wait(w2);
	fprintf(ex, "MPI_Win_wait win=2\n");
	want(mem2[1] == prev + 1, "pscw put");
	/* a second, empty epoch whose exposure ends by polling MPI_Win_test:
	 * one event a poll, the flag it returned */
	MPI_Win_post(gprev, 0, w2);
	fprintf(ex, "MPI_Win_post win=2 assert=0 count=1\n");
	MPI_Win_start(gnext, 0, w2);
	fprintf(ex, "MPI_Win_start win=2 assert=0 count=1\n");
	MPI_Win_complete(w2);
	fprintf(ex, "MPI_Win_complete win=2\n");
	for (int done = 0; !done;) {
		MPI_Win_test(w2, &done);
		fprintf(ex, "MPI_Win_test win=2 result=%d\n", done != 0);
	}
	MPI_Group_free(&gnext);
	fprintf(ex, "MPI_Group_free group=9\n");
	MPI_Group_free(&gprev);
	fprintf(ex, "MPI_Group_free group=10\n");
	MPI_Group_free(&world);
	fprintf(ex, "MPI_Group_free group=8\n");
}

/* The group constructors on the world group (3 ranks or more): ids 1..7 */
static void groups(void)
{
	int zero = 0, even[1][3] = {{0, size - 1, 2}};
	MPI_Group g[8];

	MPI_Comm_group(MPI_COMM_WORLD, &g[1]);
	fprintf(ex, "MPI_Comm_group comm=0 newgroup=1 size=%d leader=0\n", size);
	MPI_Group_excl(g[1], 1, &zero, &g[2]);
	fprintf(ex, "MPI_Group_excl group=1 newgroup=2 size=%d leader=1 count=1\n", size - 1);
	MPI_Group_range_incl(g[1], 1, even, &g[3]);
	fprintf(ex, "MPI_Group_range_incl group=1 newgroup=3 size=%d leader=0 count=1\n",
		(size + 1) / 2);
	MPI_Group_range_excl(g[1], 1, even, &g[4]);
	fprintf(ex, "MPI_Group_range_excl group=1 newgroup=4 size=%d leader=1 count=1\n",
		size / 2);
	MPI_Group_union(g[3], g[4], &g[5]);
	fprintf(ex, "MPI_Group_union group=3 group2=4 newgroup=5 size=%d leader=0\n", size);
	MPI_Group_intersection(g[2], g[3], &g[6]);
	fprintf(ex, "MPI_Group_intersection group=2 group2=3 newgroup=6 size=%d leader=2\n",
		(size + 1) / 2 - 1);
	MPI_Group_difference(g[1], g[2], &g[7]);
	fprintf(ex, "MPI_Group_difference group=1 group2=2 newgroup=7 size=1 leader=0\n");
	for (int i = 1; i <= 7; i++) {
		MPI_Group_free(&g[i]);
		fprintf(ex, "MPI_Group_free group=%d\n", i);
	}
}

/* The dynamic window w3: a region attached, an epoch with Win_sync,
 * detached (the size it was attached with); the shared memory window w4:
 * the segment of its rank 0 (the lowest world rank of node, key 0). */
static void dynamic(MPI_Win w3, MPI_Win w4, MPI_Comm node)
{
	int *reg = calloc(B, sizeof(int)), *base = NULL, du = 0, lead = 0;
	MPI_Aint sz = 0;

	MPI_Win_attach(w3, reg, B * sizeof(int));
	fprintf(ex, "MPI_Win_attach win=3 bytes=%d\n", (int)(B * sizeof(int)));
	MPI_Win_lock_all(0, w3);
	fprintf(ex, "MPI_Win_lock_all win=3 assert=0\n");
	MPI_Win_sync(w3);
	fprintf(ex, "MPI_Win_sync win=3\n");
	MPI_Win_unlock_all(w3);
	fprintf(ex, "MPI_Win_unlock_all win=3\n");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_detach(w3, reg);
	fprintf(ex, "MPI_Win_detach win=3 bytes=%d\n", (int)(B * sizeof(int)));
	free(reg);
	MPI_Allreduce(&rank, &lead, 1, MPI_INT, MPI_MIN, node);
	MPI_Win_shared_query(w4, 0, &sz, &du, &base);
	want(sz == B * (MPI_Aint)sizeof(int) && du == 4 && base, "shared_query");
	fprintf(ex, "MPI_Win_shared_query win=4 peer=%d bytes=%d disp_unit=4\n",
		lead, (int)(B * sizeof(int)));
}

int main(int argc, char **argv)
{
	int *mem, *mem2, *shm, i;
	MPI_Win w, w2, w3, w4;
	MPI_Comm node;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2 || size < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_rma EXPECT (3 ranks or more)\n");
		MPI_Finalize();
		return 2;
	}
	ex = mpi_expect(argv[1], rank);
	groups();
	MPI_Win_allocate(8 * B * sizeof(int), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &mem, &w);
	fprintf(ex, "MPI_Win_allocate win=1 comm=0 bytes=%d disp_unit=4\n",
		(int)(8 * B * sizeof(int)));
	MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
	for (i = 0; i < 8 * B; i++)
		mem[i] = 0;
	for (i = 0; i < B; i++)
		mem[B + i] = rank * 1000 + i;
	mem2 = calloc(B, sizeof(int));
	MPI_Win_create(mem2, B * sizeof(int), sizeof(int), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &w2);
	fprintf(ex, "MPI_Win_create win=2 comm=0 bytes=%d disp_unit=4\n",
		(int)(B * sizeof(int)));
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w3);
	fprintf(ex, "MPI_Win_create_dynamic win=3 comm=0\n");
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
			    &node);
	MPI_Win_allocate_shared(B * sizeof(int), sizeof(int), MPI_INFO_NULL, node,
				&shm, &w4);
	fprintf(ex, "MPI_Win_allocate_shared win=4 bytes=%d disp_unit=4\n",
		(int)(B * sizeof(int)));

	fence_epoch(w, mem);
	MPI_Barrier(MPI_COMM_WORLD);
	lock_epoch(w);
	MPI_Barrier(MPI_COMM_WORLD);
	lock_all_epoch(w);
	MPI_Barrier(MPI_COMM_WORLD);
	pscw_epoch(w2, mem2);
	MPI_Barrier(MPI_COMM_WORLD);
	dynamic(w3, w4, node);

	MPI_Win_free(&w4);
	fprintf(ex, "MPI_Win_free win=4\n");
	MPI_Win_free(&w3);
	fprintf(ex, "MPI_Win_free win=3\n");
	MPI_Win_free(&w2);
	fprintf(ex, "MPI_Win_free win=2\n");
	MPI_Win_free(&w);
	fprintf(ex, "MPI_Win_free win=1\n");
	MPI_Comm_free(&node);
	free(mem2);
	fclose(ex);
	return mpi_verdict("mpi_rma", rank, bad);
}
