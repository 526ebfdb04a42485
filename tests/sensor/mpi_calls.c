/*
 * tests/sensor/mpi_calls.c - calls every MPI function the sensor wraps.
 *
 * Run on 2 or more ranks (the tests use 4). Every rank accumulates what it
 * received into a checksum; rank 0 gathers the checksums and prints one
 * line per rank, so the output is deterministic and must not change when
 * the sensor is preloaded. Covers MPI_STATUS_IGNORE, MPI_ANY_SOURCE,
 * MPI_IN_PLACE and MPI_PROC_NULL paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define N 64

static long long sum_ints(const int *v, int n)
{
	long long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* n ints of sbuf sent to dst, received from src into rbuf (MPI_Sendrecv,
 * tag on comm): their sum plus the source the status gives. */
static long long sendrecv_sum(const int *sbuf, int *rbuf, int n, int dst,
			      int src, int tag, MPI_Comm comm)
{
	MPI_Status st;

	MPI_Sendrecv(sbuf, n, MPI_INT, dst, tag, rbuf, n, MPI_INT, src, tag,
		     comm, &st);
	return sum_ints(rbuf, n) + st.MPI_SOURCE;
}

/* n ints of sbuf reduced with op over comm into rbuf: their sum. */
static long long allreduce_sum(const int *sbuf, int *rbuf, int n, MPI_Op op,
			       MPI_Comm comm)
{
	MPI_Allreduce(sbuf, rbuf, n, MPI_INT, op, comm);
	return sum_ints(rbuf, n);
}

int main(int argc, char **argv)
{
	int rank, size, next, prev, provided, i, flag, idx, color;
	int sbuf[N * 16], rbuf[N * 16], *counts, *displs, *rcounts, *rdispls;
	long long check = 0, *all;
	MPI_Request req[4];
	MPI_Status st, sts[4];
	MPI_Comm half, dup;
	void *bbuf;
	int bsize;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (size < 2 || size > 16) {
		if (rank == 0)
			fprintf(stderr, "mpi_calls: needs 2 to 16 ranks\n");
		MPI_Finalize();
		return 1;
	}
	next = (rank + 1) % size;
	prev = (rank + size - 1) % size;
	for (i = 0; i < N * 16; i++)
		sbuf[i] = rank * 1000 + i;

	/* Send / Recv, even ranks first (tag 1, N ints) */
	if (rank % 2 == 0) {
		MPI_Send(sbuf, N, MPI_INT, next, 1, MPI_COMM_WORLD);
		MPI_Recv(rbuf, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &st);
	} else {
		MPI_Recv(rbuf, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &st);
		MPI_Send(sbuf, N, MPI_INT, next, 1, MPI_COMM_WORLD);
	}
	check += sum_ints(rbuf, N) + st.MPI_SOURCE;
	/* Ssend / Recv from any source, status ignored (tag 2, 10 ints) */
	if (rank % 2 == 0) {
		MPI_Ssend(sbuf, 10, MPI_INT, next, 2, MPI_COMM_WORLD);
		MPI_Recv(rbuf, 10, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(rbuf, 10, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Ssend(sbuf, 10, MPI_INT, next, 2, MPI_COMM_WORLD);
	}
	check += sum_ints(rbuf, 10);
	/* Rsend: the receive is posted before the barrier (tag 3, 5 ints) */
	MPI_Irecv(rbuf, 5, MPI_INT, prev, 3, MPI_COMM_WORLD, &req[0]);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Rsend(sbuf, 5, MPI_INT, next, 3, MPI_COMM_WORLD);
	MPI_Wait(&req[0], &st);
	check += sum_ints(rbuf, 5) + st.MPI_TAG;
	/* Bsend (tag 4, 3 ints) */
	MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &bsize);
	bsize += MPI_BSEND_OVERHEAD;
	bbuf = malloc((size_t)bsize);
	MPI_Buffer_attach(bbuf, bsize);
	MPI_Bsend(sbuf, 3, MPI_INT, next, 4, MPI_COMM_WORLD);
	MPI_Recv(rbuf, 3, MPI_INT, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Buffer_detach(&bbuf, &bsize);
	free(bbuf);
	check += sum_ints(rbuf, 3);
	/* Isend / Irecv / Waitall with statuses ignored (tag 5, N ints) */
	MPI_Irecv(rbuf, N, MPI_INT, prev, 5, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(sbuf, N, MPI_INT, next, 5, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	check += sum_ints(rbuf, N);
	/* Issend / Irecv from any source / Waitall with statuses (tag 6) */
	MPI_Irecv(rbuf, 20, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &req[0]);
	MPI_Issend(sbuf, 20, MPI_INT, next, 6, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, sts);
	check += sum_ints(rbuf, 20) + sts[0].MPI_SOURCE;
	/* Waitany twice (tag 7, 7 ints) */
	MPI_Irecv(rbuf, 7, MPI_INT, prev, 7, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(sbuf, 7, MPI_INT, next, 7, MPI_COMM_WORLD, &req[1]);
	for (i = 0; i < 2; i++) {
		MPI_Waitany(2, req, &idx, &st);
		if (idx == 0)
			check += sum_ints(rbuf, 7) + st.MPI_SOURCE;
	}
	/* Test until done (tag 8, 8 ints) */
	MPI_Irecv(rbuf, 8, MPI_INT, prev, 8, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(sbuf, 8, MPI_INT, next, 8, MPI_COMM_WORLD, &req[1]);
	flag = 0;
	while (!flag)
		MPI_Test(&req[0], &flag, &st);
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	check += sum_ints(rbuf, 8);
	/* Sendrecv (tag 9 / 9, 9 ints) */
	MPI_Sendrecv(sbuf, 9, MPI_INT, next, 9, rbuf, 9, MPI_INT, prev, 9,
		     MPI_COMM_WORLD, &st);
	check += sum_ints(rbuf, 9) + st.MPI_SOURCE;
	/* Probe then Recv (tag 10, 11 ints) */
	MPI_Isend(sbuf, 11, MPI_INT, next, 10, MPI_COMM_WORLD, &req[1]);
	MPI_Probe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
	MPI_Recv(rbuf, 11, MPI_INT, st.MPI_SOURCE, 10, MPI_COMM_WORLD, &st);
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	check += sum_ints(rbuf, 11);
	/* Iprobe until found, then Recv (tag 11, 12 ints) */
	MPI_Isend(sbuf, 12, MPI_INT, next, 11, MPI_COMM_WORLD, &req[1]);
	flag = 0;
	while (!flag)
		MPI_Iprobe(prev, 11, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	MPI_Recv(rbuf, 12, MPI_INT, prev, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	check += sum_ints(rbuf, 12);
	/* MPI_PROC_NULL: completes at once, moves nothing */
	MPI_Send(sbuf, 1, MPI_INT, MPI_PROC_NULL, 12, MPI_COMM_WORLD);
	MPI_Recv(rbuf, 1, MPI_INT, MPI_PROC_NULL, 12, MPI_COMM_WORLD, &st);

	/* collectives */
	MPI_Barrier(MPI_COMM_WORLD);
	memcpy(rbuf, sbuf, N * sizeof(int));
	MPI_Bcast(rbuf, N, MPI_INT, 1, MPI_COMM_WORLD);
	check += sum_ints(rbuf, N);
	MPI_Reduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		check += sum_ints(rbuf, N);
	MPI_Allreduce(sbuf, rbuf, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	check += sum_ints(rbuf, N);
	memcpy(rbuf, sbuf, N * sizeof(int));
	MPI_Allreduce(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	check += sum_ints(rbuf, N);
	MPI_Gather(sbuf, 4, MPI_INT, rbuf, 4, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		check += sum_ints(rbuf, 4 * size);
	counts = malloc((size_t)size * sizeof(int));
	displs = malloc((size_t)size * sizeof(int));
	rcounts = malloc((size_t)size * sizeof(int));
	rdispls = malloc((size_t)size * sizeof(int));
	for (i = 0; i < size; i++) {
		counts[i] = i + 1;
		displs[i] = i * 16;
	}
	MPI_Gatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 1,
		    MPI_COMM_WORLD);
	if (rank == 1)
		for (i = 0; i < size; i++)
			check += sum_ints(rbuf + displs[i], counts[i]);
	MPI_Scatter(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, 0, MPI_COMM_WORLD);
	check += sum_ints(rbuf, 3);
	MPI_Scatterv(sbuf, counts, counts, MPI_INT, rbuf, rank + 1, MPI_INT, 0,
		     MPI_COMM_WORLD);
	check += sum_ints(rbuf, rank + 1);
	MPI_Allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
	check += sum_ints(rbuf, 2 * size);
	MPI_Allgatherv(sbuf, rank + 1, MPI_INT, rbuf, counts, displs, MPI_INT,
		       MPI_COMM_WORLD);
	for (i = 0; i < size; i++)
		check += sum_ints(rbuf + displs[i], counts[i]);
	MPI_Alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
	check += sum_ints(rbuf, 2 * size);
	/* alltoallv: rank r sends i+1 ints to rank i, receives r+1 from each */
	for (i = 0; i < size; i++) {
		rcounts[i] = rank + 1;
		rdispls[i] = i * 16;
	}
	MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, rcounts, rdispls,
		      MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < size; i++)
		check += sum_ints(rbuf + rdispls[i], rcounts[i]);
	/* the same exchange as an alltoallw: a type a rank, byte displacements */
	{
		MPI_Datatype wt[16];
		int wsd[16], wrd[16];

		for (i = 0; i < size; i++) {
			wt[i] = MPI_INT;
			wsd[i] = displs[i] * (int)sizeof(int);
			wrd[i] = rdispls[i] * (int)sizeof(int);
		}
		MPI_Alltoallw(sbuf, counts, wsd, wt, rbuf, rcounts, wrd, wt,
			      MPI_COMM_WORLD);
		for (i = 0; i < size; i++)
			check += sum_ints(rbuf + rdispls[i], rcounts[i]);
	}
	MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM,
			   MPI_COMM_WORLD);
	check += sum_ints(rbuf, rank + 1);
	MPI_Scan(sbuf, rbuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	check += sum_ints(rbuf, 4);
	MPI_Exscan(sbuf, rbuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank > 0)
		check += sum_ints(rbuf, 4);

	/* communicators: split into even/odd halves, dup, talk inside */
	color = rank % 2;
	MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
	MPI_Comm_dup(half, &dup);
	{
		int hr, hs, hn, hp;

		MPI_Comm_rank(dup, &hr);
		MPI_Comm_size(dup, &hs);
		hn = (hr + 1) % hs;
		hp = (hr + hs - 1) % hs;
		check += sendrecv_sum(sbuf, rbuf, 6, hn, hp, 13, dup);
		check += allreduce_sum(sbuf, rbuf, 5, MPI_SUM, half);
	}
	MPI_Comm_free(&dup);
	MPI_Comm_free(&half);

	/* more constructors: the low half by group (the others get
	 * MPI_COMM_NULL), the ranks that share memory (all of them here), a
	 * periodic ring as a 1-D cartesian communicator; each is used */
	{
		MPI_Group wg, lg;
		MPI_Comm low, shm, cart;
		int ranks[16], dims[1], periods[1] = {1}, src, dst;

		for (i = 0; i < size / 2; i++)
			ranks[i] = i;
		MPI_Comm_group(MPI_COMM_WORLD, &wg);
		MPI_Group_incl(wg, size / 2, ranks, &lg);
		MPI_Comm_create(MPI_COMM_WORLD, lg, &low);
		if (low != MPI_COMM_NULL) {
			MPI_Barrier(low);
			MPI_Comm_free(&low);
		}
		MPI_Group_free(&lg);
		MPI_Group_free(&wg);
		MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
				    MPI_INFO_NULL, &shm);
		check += allreduce_sum(sbuf, rbuf, 3, MPI_SUM, shm);
		MPI_Comm_free(&shm);
		dims[0] = size;
		MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
		MPI_Cart_shift(cart, 0, 1, &src, &dst);
		check += sendrecv_sum(sbuf, rbuf, 7, dst, src, 14, cart);
		MPI_Comm_free(&cart);
		/* a 2-D grid and its rows (MPI_Cart_sub), a sum along each */
		{
			int d2[2] = {0, 0}, p2[2] = {0, 0}, keep[2] = {0, 1};
			MPI_Comm grid, row;

			MPI_Dims_create(size, 2, d2);
			MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &grid);
			MPI_Cart_sub(grid, keep, &row);
			check += allreduce_sum(sbuf, rbuf, 2, MPI_SUM, row);
			MPI_Comm_free(&row);
			MPI_Comm_free(&grid);
		}
	}

	/* constructors after those, each used: a nonblocking dup, a dup
	 * with info (a ring exchange and a sum on it), a graph ring, the same
	 * ring as two distributed graphs, MPI_Comm_create_group by three
	 * groups that overlap, and the even and odd halves as an
	 * intercommunicator (an exchange with the same local rank across,
	 * a Barrier, a dup with a Barrier), merged (odd first). The even
	 * ranks dup MPI_COMM_SELF before it, the odd ones after, so that the
	 * two sides' local ids for it differ: the manager must name it. */
	{
		MPI_Comm idc, dwi, gr, dg, dga, gc, par, inter, merged, idup2, sd;
		MPI_Request ireq;
		MPI_Group wg, g;
		int *index, *edges, one[1] = {1}, me[1] = {rank}, ranks[16];
		int mr, ms, lr, ls, rs;

		MPI_Comm_idup(MPI_COMM_WORLD, &idc, &ireq);
		MPI_Wait(&ireq, MPI_STATUS_IGNORE);
		MPI_Barrier(idc);
		MPI_Comm_free(&idc);

		/* a dup of world: its ranks are the world ranks */
		MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dwi);
		check += sendrecv_sum(sbuf, rbuf, 4, next, prev, 16, dwi);
		check += allreduce_sum(sbuf, rbuf, 4, MPI_MAX, dwi);
		MPI_Comm_free(&dwi);

		index = malloc((size_t)size * sizeof(int));
		edges = malloc((size_t)size * 2 * sizeof(int));
		for (i = 0; i < size; i++) {
			index[i] = 2 * (i + 1);
			edges[2 * i] = (i + size - 1) % size;
			edges[2 * i + 1] = (i + 1) % size;
		}
		MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &gr);
		check += allreduce_sum(sbuf, rbuf, 2, MPI_SUM, gr);
		MPI_Comm_free(&gr);
		free(index);
		free(edges);
		/* weights of 1: MPI_UNWEIGHTED is a small constant pointer,
		 * which GCC takes for an overread */
		MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, &next, one,
				      MPI_INFO_NULL, 0, &dg);
		MPI_Barrier(dg);
		MPI_Comm_free(&dg);
		MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, one,
					       1, &next, one, MPI_INFO_NULL, 0,
					       &dga);
		MPI_Barrier(dga);
		MPI_Comm_free(&dga);

		/* A = {0, 1}, B = {1, ..}, C = all but 1: every rank is in two
		 * (same local ids everywhere after them), in this order */
		MPI_Comm_group(MPI_COMM_WORLD, &wg);
		for (int k = 0; k < 3; k++) {
			int n = 0, in = 0;

			for (i = 0; i < size && n < 16; i++)
				if ((k == 0 && i <= 1) || (k == 1 && i >= 1) ||
				    (k == 2 && i != 1)) {
					in |= i == rank;
					ranks[n++] = i;
				}
			if (!in)
				continue;
			MPI_Group_incl(wg, n, ranks, &g);
			MPI_Comm_create_group(MPI_COMM_WORLD, g, 5, &gc);
			MPI_Barrier(gc);
			MPI_Comm_free(&gc);
			MPI_Group_free(&g);
		}
		MPI_Group_free(&wg);

		/* remote leader: world rank 0 for the odd half, 1 for the
		 * even one (size >= 2) */
		MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
		if (rank % 2 == 0)
			MPI_Comm_dup(MPI_COMM_SELF, &sd);
		MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, 1 - rank % 2, 77,
				     &inter);
		if (rank % 2)
			MPI_Comm_dup(MPI_COMM_SELF, &sd);
		MPI_Comm_free(&sd);
		MPI_Comm_rank(par, &lr);
		MPI_Comm_size(par, &ls);
		MPI_Comm_remote_size(inter, &rs);
		if (lr < ls && lr < rs) {
			check += sendrecv_sum(sbuf, rbuf, 2, lr, lr, 14, inter);
		}
		MPI_Barrier(inter);
		MPI_Comm_dup(inter, &idup2);
		MPI_Barrier(idup2);
		MPI_Comm_free(&idup2);
		MPI_Intercomm_merge(inter, rank % 2 == 0, &merged);
		MPI_Comm_rank(merged, &mr);
		MPI_Comm_size(merged, &ms);
		MPI_Sendrecv(sbuf, 3, MPI_INT, (mr + 1) % ms, 15, rbuf, 3,
			     MPI_INT, (mr + ms - 1) % ms, 15, merged, &st);
		check += sum_ints(rbuf, 3) + mr;
		MPI_Comm_free(&merged);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&par);
	}

	all = malloc((size_t)size * sizeof(long long));
	MPI_Gather(&check, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0,
		   MPI_COMM_WORLD);
	if (rank == 0)
		for (i = 0; i < size; i++)
			printf("rank %d check %lld\n", i, all[i]);
	free(all);
	free(counts);
	free(displs);
	free(rcounts);
	free(rdispls);
	MPI_Finalize();
	return 0;
}
