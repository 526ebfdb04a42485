/*
 * tests/sensor/mpi_coll.c - every nonblocking collective, the neighbourhood
 * collectives (blocking and not) and MPI_Alltoallw /
 * MPI_Reduce_scatter_block through the sensor.
 *
 *   mpi_coll EXPECT
 *
 * On exactly 4 ranks. The nonblocking collectives on MPI_COMM_WORLD are
 * completed by each completion call in turn (Wait, Test, Waitall,
 * Waitsome, Testall, Waitany, Testany, Testsome); the neighbourhood ones
 * run on a 1-D cartesian communicator (id 3, not periodic: the ends have
 * MPI_PROC_NULL neighbours), a distributed graph (id 4: each rank sends to
 * the next two ranks of the ring) and a graph (id 5: the ring); before
 * them an MPI_Ibcast on a split of the world in the reverse order (id 2)
 * records its root's world rank. Each rank
 * writes to EXPECT.RANK one line per traced collective, in order: "NAME
 * field=value ..." with what the program knows (bytes, rbytes, root, comm,
 * indeg, outdeg, req "+", wroot, arr: the event's ARRAY), which the test compares
 * with the trace. Rank 0 prints "mpi_coll: ok" when every result read back
 * is right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define NP 4

static int rank, bad;
static FILE *ex;

static void want(int cond, const char *what)
{
	if (!cond) {
		printf("rank %d: %s\n", rank, what);
		bad = 1;
	}
}

static int ring(int d)
{
	return (rank + d + NP) % NP;
}

/* complete r[0..n) with MPI_Waitsome, MPI_Testall, MPI_Waitany, MPI_Testany
 * or MPI_Testsome (how), each request exactly once */
static void complete(MPI_Request *r, int n, int how)
{
	int left = n, idx[8], k, flag;

	while (left > 0) {
		switch (how) {
		case 0:
			MPI_Waitsome(n, r, &k, idx, MPI_STATUSES_IGNORE);
			left -= k;
			break;
		case 1:
			MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
			if (flag)
				left = 0;
			break;
		case 2:
			MPI_Waitany(n, r, &k, MPI_STATUS_IGNORE);
			left--;
			break;
		case 3:
			MPI_Testany(n, r, &k, &flag, MPI_STATUS_IGNORE);
			if (flag && k != MPI_UNDEFINED)
				left--;
			break;
		default:
			MPI_Testsome(n, r, &k, idx, MPI_STATUSES_IGNORE);
			if (k != MPI_UNDEFINED)
				left -= k;
			break;
		}
	}
}

/* Ibarrier, Ibcast (Wait, Test), Ireduce, Iallreduce (Waitall) */
static void rooted(void)
{
	MPI_Request r[2];
	int v[10], s[5], sum[5], flag = 0;
	double d[8], dsum[8];

	MPI_Ibarrier(MPI_COMM_WORLD, r);
	fprintf(ex, "MPI_Ibarrier comm=0 req=+\n");
	MPI_Wait(r, MPI_STATUS_IGNORE);
	for (int i = 0; i < 10; i++)
		v[i] = rank == 1 ? 100 + i : -1;
	MPI_Ibcast(v, 10, MPI_INT, 1, MPI_COMM_WORLD, r);
	fprintf(ex, "MPI_Ibcast bytes=40 root=1 comm=0 req=+ wroot=1\n");
	while (!flag)
		MPI_Test(r, &flag, MPI_STATUS_IGNORE);
	want(v[9] == 109, "ibcast");
	for (int i = 0; i < 8; i++)
		d[i] = rank + i;
	for (int i = 0; i < 5; i++)
		s[i] = rank * i;
	MPI_Ireduce(d, dsum, 8, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD, &r[0]);
	fprintf(ex, "MPI_Ireduce bytes=64 root=2 comm=0 req=+ wroot=2\n");
	MPI_Iallreduce(s, sum, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
	fprintf(ex, "MPI_Iallreduce bytes=20 comm=0 req=+\n");
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	want(sum[4] == 24, "iallreduce");
	if (rank == 2)
		want(dsum[1] == 10.0, "ireduce");
}

/* The line of a rooted v-collective: its ARRAY (the counts 1, 2, 3, 4
 * ints) at the root only. */
static void v_expect(const char *name, int sb, int rb, int root)
{
	fprintf(ex, "%s bytes=%d rbytes=%d root=%d comm=0 req=+ wroot=%d%s\n",
		name, sb, rb, root, root, rank == root ? " arr=4,8,12,16" : "");
}

/* Igather(v), Iscatter(v): completed by Waitsome */
static void rooted_v(void)
{
	MPI_Request r[4];
	int s[4] = {rank, rank, rank, rank}, g[3 * NP], gv[10], sv[10], rv[4];
	int counts[NP] = {1, 2, 3, 4}, displs[NP] = {0, 1, 3, 6}, sc[2];

	MPI_Igather(s, 3, MPI_INT, g, 3, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
	fprintf(ex, "MPI_Igather bytes=12 rbytes=%d root=0 comm=0 req=+ wroot=0\n",
		rank == 0 ? 12 : 0);
	MPI_Igatherv(s, rank + 1, MPI_INT, gv, counts, displs, MPI_INT, 3,
		     MPI_COMM_WORLD, &r[1]);
	v_expect("MPI_Igatherv", 4 * (rank + 1), rank == 3 ? 40 : 0, 3);
	for (int i = 0; i < 10; i++)
		sv[i] = i;
	MPI_Iscatter(sv, 2, MPI_INT, sc, 2, MPI_INT, 1, MPI_COMM_WORLD, &r[2]);
	fprintf(ex, "MPI_Iscatter bytes=%d rbytes=8 root=1 comm=0 req=+ wroot=1\n",
		rank == 1 ? 8 : 0);
	MPI_Iscatterv(sv, counts, displs, MPI_INT, rv, rank + 1, MPI_INT, 0,
		      MPI_COMM_WORLD, &r[3]);
	v_expect("MPI_Iscatterv", rank == 0 ? 40 : 0, 4 * (rank + 1), 0);
	complete(r, 4, 0);
	if (rank == 0)
		want(g[3 * 3] == 3, "igather");
	if (rank == 3)
		want(gv[9] == 3 && gv[1] == 1, "igatherv");
	want(sc[1] == 2 * rank + 1, "iscatter");
	want(rv[0] == displs[rank], "iscatterv");
}

/* Iallgather(v), Ialltoall(v): completed by Testall */
static void all(void)
{
	MPI_Request r[4];
	int s[4] = {rank, rank, rank, rank}, ag[2 * NP], agv[10], a[NP], aa[NP];
	int counts[NP] = {1, 2, 3, 4}, displs[NP] = {0, 1, 3, 6};
	int sc[NP] = {1, 2, 3, 4}, sd[NP] = {0, 1, 3, 6}, svv[10], rvv[4 * NP];
	int rc[NP], rd[NP];

	MPI_Iallgather(s, 2, MPI_INT, ag, 2, MPI_INT, MPI_COMM_WORLD, &r[0]);
	fprintf(ex, "MPI_Iallgather bytes=8 rbytes=8 comm=0 req=+\n");
	MPI_Iallgatherv(s, rank + 1, MPI_INT, agv, counts, displs, MPI_INT,
			MPI_COMM_WORLD, &r[1]);
	fprintf(ex, "MPI_Iallgatherv bytes=%d rbytes=40 comm=0 req=+ arr=4,8,12,16\n",
		4 * (rank + 1));
	for (int i = 0; i < NP; i++)
		a[i] = 10 * rank + i;
	MPI_Ialltoall(a, 1, MPI_INT, aa, 1, MPI_INT, MPI_COMM_WORLD, &r[2]);
	fprintf(ex, "MPI_Ialltoall bytes=4 rbytes=4 comm=0 req=+\n");
	for (int i = 0; i < 10; i++)
		svv[i] = rank;
	for (int i = 0; i < NP; i++) {
		rc[i] = rank + 1;
		rd[i] = i * (rank + 1);
	}
	MPI_Ialltoallv(svv, sc, sd, MPI_INT, rvv, rc, rd, MPI_INT,
		       MPI_COMM_WORLD, &r[3]);
	fprintf(ex, "MPI_Ialltoallv bytes=40 rbytes=%d comm=0 req=+ arr=4,8,12,16",
		16 * (rank + 1));
	for (int i = 0; i < NP; i++)
		fprintf(ex, ",%d", 4 * (rank + 1));
	fprintf(ex, "\n");
	complete(r, 4, 1);
	want(ag[7] == 3 && agv[9] == 3, "iallgather(v)");
	want(aa[2] == 20 + rank, "ialltoall");
	want(rvv[3 * (rank + 1)] == 3, "ialltoallv");
}

/* the types of Alltoallw: ints to even ranks, doubles to odd ones */
static void w_args(MPI_Datatype *st, MPI_Datatype *rt, int *cnt, int *sd,
		   int *rd)
{
	for (int i = 0; i < NP; i++) {
		st[i] = i % 2 ? MPI_DOUBLE : MPI_INT;
		rt[i] = rank % 2 ? MPI_DOUBLE : MPI_INT;
		cnt[i] = 1;
		sd[i] = 8 * i;
		rd[i] = 8 * i;
	}
}

static void w_expect(const char *name, int nb)
{
	int rs = rank % 2 ? 8 : 4;

	fprintf(ex, "%s bytes=24 rbytes=%d comm=0%s arr=4,8,4,8,%d,%d,%d,%d\n",
		name, 4 * rs, nb ? " req=+" : "", rs, rs, rs, rs);
}

/* Ialltoallw, Ireduce_scatter(_block), Iscan, Iexscan: completed by
 * Waitany, Testany and Testsome; then the blocking Alltoallw and
 * Reduce_scatter_block */
static void rest(void)
{
	MPI_Request r[5];
	MPI_Datatype st[NP], rt[NP];
	int cnt[NP], sd[NP], rd[NP], counts[NP] = {1, 2, 3, 4};
	double sbuf[NP], rbuf[NP];
	int v[10], rs[4], rsb[2], sc[3], ex3[3], three[3] = {1, 1, 1};

	w_args(st, rt, cnt, sd, rd);
	memset(sbuf, 0, sizeof(sbuf));
	MPI_Ialltoallw(sbuf, cnt, sd, st, rbuf, cnt, rd, rt, MPI_COMM_WORLD,
		       &r[0]);
	w_expect("MPI_Ialltoallw", 1);
	for (int i = 0; i < 10; i++)
		v[i] = 1;
	MPI_Ireduce_scatter(v, rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
			    &r[1]);
	fprintf(ex, "MPI_Ireduce_scatter bytes=40 comm=0 req=+ arr=4,8,12,16\n");
	MPI_Ireduce_scatter_block(v, rsb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
				  &r[2]);
	fprintf(ex, "MPI_Ireduce_scatter_block bytes=32 comm=0 req=+\n");
	MPI_Iscan(three, sc, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[3]);
	fprintf(ex, "MPI_Iscan bytes=12 comm=0 req=+\n");
	MPI_Iexscan(three, ex3, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[4]);
	fprintf(ex, "MPI_Iexscan bytes=12 comm=0 req=+\n");
	complete(r, 2, 2);
	complete(r + 2, 2, 3);
	complete(r + 4, 1, 4);
	want(rs[0] == NP && rsb[1] == NP && sc[2] == rank + 1, "reductions");
	if (rank > 0)
		want(ex3[0] == rank, "iexscan");
	MPI_Alltoallw(sbuf, cnt, sd, st, rbuf, cnt, rd, rt, MPI_COMM_WORLD);
	w_expect("MPI_Alltoallw", 0);
	MPI_Reduce_scatter_block(v, rsb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	fprintf(ex, "MPI_Reduce_scatter_block bytes=32 comm=0\n");
	want(rsb[0] == NP, "reduce_scatter_block");
}

/* MPI_Ibcast on the world in the reverse order: its root 0 is world rank
 * NP - 1 */
static void reversed(void)
{
	MPI_Comm rev;
	MPI_Request r;
	int v = rank;

	MPI_Comm_split(MPI_COMM_WORLD, 0, NP - 1 - rank, &rev);
	MPI_Ibcast(&v, 1, MPI_INT, 0, rev, &r);
	fprintf(ex, "MPI_Ibcast bytes=4 root=0 comm=2 req=+ wroot=%d\n", NP - 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	want(v == NP - 1, "ibcast on the reversed world");
	MPI_Comm_free(&rev);
}

/* "arr=" of a neighbourhood collective: sources, destinations (world
 * ranks, -2 for MPI_PROC_NULL), bytes per destination, per source */
static void nbr_expect(const char *name, long sb, long rb, int comm,
		       const int *src, const int *dst, const int *sbytes,
		       const int *rbytes, int nb)
{
	fprintf(ex, "%s bytes=%ld rbytes=%ld comm=%d indeg=2 outdeg=2%s arr=",
		name, sb, rb, comm, nb ? " req=+" : "");
	for (int i = 0; i < 2; i++)
		fprintf(ex, "%d,", src[i] == MPI_PROC_NULL ? -2 : src[i]);
	for (int i = 0; i < 2; i++)
		fprintf(ex, "%d,", dst[i] == MPI_PROC_NULL ? -2 : dst[i]);
	fprintf(ex, "%d,%d,%d,%d\n", sbytes[0], sbytes[1], rbytes[0], rbytes[1]);
}

/* the neighbourhood collectives on the cartesian line (2) and the graph
 * ring (4): allgather, alltoall, blocking then not */
static void nbr_simple(MPI_Comm cart, MPI_Comm graph)
{
	int line[2] = {rank > 0 ? rank - 1 : MPI_PROC_NULL,
		       rank < NP - 1 ? rank + 1 : MPI_PROC_NULL};
	int rg[2] = {ring(-1), ring(1)}, four[2] = {4, 4}, eight[2] = {8, 8};
	int s[2] = {rank, rank}, g[4] = {-1, -1, -1, -1};
	MPI_Request r;

	MPI_Neighbor_allgather(s, 1, MPI_INT, g, 1, MPI_INT, cart);
	nbr_expect("MPI_Neighbor_allgather", 4, 4, 3, line, line, four, four, 0);
	want(g[0] == (rank > 0 ? rank - 1 : -1), "neighbor_allgather");
	MPI_Neighbor_alltoall(s, 1, MPI_INT, g, 1, MPI_INT, graph);
	nbr_expect("MPI_Neighbor_alltoall", 4, 4, 5, rg, rg, four, four, 0);
	want(g[1] == ring(1), "neighbor_alltoall");
	MPI_Ineighbor_allgather(s, 2, MPI_INT, g, 2, MPI_INT, graph, &r);
	nbr_expect("MPI_Ineighbor_allgather", 8, 8, 5, rg, rg, eight, eight, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	want(g[2] == ring(1), "ineighbor_allgather");
	MPI_Ineighbor_alltoall(s, 1, MPI_INT, g, 1, MPI_INT, cart, &r);
	nbr_expect("MPI_Ineighbor_alltoall", 4, 4, 3, line, line, four, four, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* the v and w forms on the distributed graph (3): sources r-1, r-2,
 * destinations r+1, r+2; to the first one int, to the second two */
static void nbr_v(MPI_Comm dg)
{
	int src[2] = {ring(-1), ring(-2)}, dst[2] = {ring(1), ring(2)};
	int cnt[2] = {1, 2}, dis[2] = {0, 1}, one[2] = {1, 1}, d1[2] = {0, 1};
	int b[2] = {4, 8}, four[2] = {4, 4}, s[3] = {rank, rank, rank}, g[3];
	MPI_Aint ad[2] = {0, 4};
	MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
	MPI_Request r;

	MPI_Neighbor_allgatherv(s, 1, MPI_INT, g, one, d1, MPI_INT, dg);
	nbr_expect("MPI_Neighbor_allgatherv", 4, 8, 4, src, dst, four, four, 0);
	want(g[1] == ring(-2), "neighbor_allgatherv");
	MPI_Neighbor_alltoallv(s, cnt, dis, MPI_INT, g, cnt, dis, MPI_INT, dg);
	nbr_expect("MPI_Neighbor_alltoallv", 12, 12, 4, src, dst, b, b, 0);
	MPI_Neighbor_alltoallw(s, cnt, ad, ty, g, cnt, ad, ty, dg);
	nbr_expect("MPI_Neighbor_alltoallw", 12, 12, 4, src, dst, b, b, 0);
	MPI_Ineighbor_allgatherv(s, 1, MPI_INT, g, one, d1, MPI_INT, dg, &r);
	nbr_expect("MPI_Ineighbor_allgatherv", 4, 8, 4, src, dst, four, four, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Ineighbor_alltoallv(s, cnt, dis, MPI_INT, g, cnt, dis, MPI_INT, dg,
				&r);
	nbr_expect("MPI_Ineighbor_alltoallv", 12, 12, 4, src, dst, b, b, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Ineighbor_alltoallw(s, cnt, ad, ty, g, cnt, ad, ty, dg, &r);
	nbr_expect("MPI_Ineighbor_alltoallw", 12, 12, 4, src, dst, b, b, 1);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	want(g[0] == ring(-1) && g[2] == ring(-2), "neighbor_alltoall(v,w)");
}

static void neighbours(void)
{
	int dims[1] = {NP}, periods[1] = {0}, index[NP], edges[2 * NP];
	int src[2] = {ring(-1), ring(-2)}, dst[2] = {ring(1), ring(2)};
	MPI_Comm cart, dg, graph;

	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED,
				       2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
				       &dg);
	for (int i = 0; i < NP; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + NP - 1) % NP;
		edges[2 * i + 1] = (i + 1) % NP;
	}
	MPI_Graph_create(MPI_COMM_WORLD, NP, index, edges, 0, &graph);
	nbr_simple(cart, graph);
	nbr_v(dg);
	MPI_Comm_free(&graph);
	MPI_Comm_free(&dg);
	MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
	char path[4096];
	int size, allbad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2 || size != NP) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np %d mpi_coll EXPECT\n", NP);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	snprintf(path, sizeof(path), "%s.%d", argv[1], rank);
	if (!(ex = fopen(path, "w"))) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	rooted();
	rooted_v();
	all();
	rest();
	reversed();
	neighbours();
	fclose(ex);
	MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf(allbad ? "mpi_coll: FAILED\n" : "mpi_coll: ok\n");
	MPI_Finalize();
	return 0;
}
