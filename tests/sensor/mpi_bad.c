/*
 * tests/sensor/mpi_bad.c - wrapped calls given bad arguments and sentinels.
 *
 * With MPI_ERRORS_RETURN, each call is made through PMPI_ (the library,
 * never wrapped) and through MPI_ (the sensor's wrapper when it is
 * preloaded) with the same arguments: the two must return the same error
 * class (MPICH's codes carry a per-call message index, so classes are
 * compared). The sentinels (MPI_STATUS(ES)_IGNORE, MPI_REQUEST_NULL,
 * MPI_PROC_NULL, MPI_IN_PLACE, MPI_BOTTOM, MPI_MESSAGE_NO_PROC, zero
 * counts) must not crash the wrapper. Prints one line per rank: "ok" or
 * the calls that differed.
 *
 *   mpi_bad [ERRS]
 *
 * With ERRS, each rank writes to ERRS.RANK the code each MPI_ call that
 * failed returned, one line each in call order ("CODE CLASS"): the trace's
 * mpi_error records must hold the same (tests/sensor/mpi_reqs.sh).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size, bad;
static FILE *errs;

static void same(const char *what, int rc_pmpi, int rc_mpi)
{
	int c1 = rc_pmpi, c2 = rc_mpi;

	MPI_Error_class(rc_pmpi, &c1);
	MPI_Error_class(rc_mpi, &c2);
	if (errs && rc_mpi != MPI_SUCCESS)
		fprintf(errs, "%d %d\n", rc_mpi, c2);
	if (c1 != c2) {
		printf("rank %d: %s: PMPI class %d, MPI class %d\n", rank, what, c1, c2);
		bad++;
	}
}

/* Each call twice: PMPI_name then MPI_name, same arguments. */
#define BOTH(what, call) same(what, P##call, call)

static void errors(void)
{
	char buf[16] = {0};
	MPI_Request q = MPI_REQUEST_NULL, qs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	MPI_Comm nc;
	int idx, flag, n, ids[2];

	BOTH("send count -1", MPI_Send(buf, -1, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
	BOTH("send rank size+5", MPI_Send(buf, 1, MPI_BYTE, size + 5, 0, MPI_COMM_WORLD));
	BOTH("recv tag -5", MPI_Recv(buf, 1, MPI_BYTE, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	BOTH("isend type null", MPI_Isend(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &q));
	BOTH("irecv comm null", MPI_Irecv(buf, 1, MPI_BYTE, 0, 0, MPI_COMM_NULL, &q));
	BOTH("ssend rank -7", MPI_Ssend(buf, 1, MPI_BYTE, -7, 0, MPI_COMM_WORLD));
	BOTH("bsend, no buffer", MPI_Bsend(buf, 16, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
	BOTH("send_init rank size+5", MPI_Send_init(buf, 1, MPI_BYTE, size + 5, 0, MPI_COMM_WORLD, &q));
	BOTH("recv_init tag -5", MPI_Recv_init(buf, 1, MPI_BYTE, 0, -5, MPI_COMM_WORLD, &q));
	BOTH("start null", MPI_Start(&q));
	BOTH("startall null", MPI_Startall(2, qs));
	BOTH("cancel null", MPI_Cancel(&q));
	BOTH("request_free null", MPI_Request_free(&q));
	BOTH("waitall count -1", MPI_Waitall(-1, qs, MPI_STATUSES_IGNORE));
	BOTH("sendrecv_replace tag -5", MPI_Sendrecv_replace(buf, 1, MPI_BYTE, 0, -5, 0, 0,
							    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	BOTH("comm_split comm null", MPI_Comm_split(MPI_COMM_NULL, 0, 0, &nc));
	BOTH("bcast root size", MPI_Bcast(buf, 1, MPI_BYTE, size, MPI_COMM_WORLD));
	BOTH("mprobe tag -5", MPI_Improbe(0, -5, MPI_COMM_WORLD, &flag, NULL, MPI_STATUS_IGNORE));
	BOTH("ibcast root size", MPI_Ibcast(buf, 1, MPI_BYTE, size, MPI_COMM_WORLD, &q));
	BOTH("neighbor_allgather, no topology",
	     MPI_Neighbor_allgather(buf, 1, MPI_BYTE, buf + 8, 1, MPI_BYTE, MPI_COMM_WORLD));
	(void)idx;
	(void)n;
	(void)ids;
}

/* Sentinels and empty calls: all succeed, through the wrapper too. */
static void sentinels(void)
{
	char buf[16] = {0};
	int zero[64] = {0}, disp[64] = {0}, v = rank, idx, flag, n, ids[2];
	MPI_Request q = MPI_REQUEST_NULL, q2, qs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	MPI_Message m, m2;
	MPI_Status st;

	/* nonblocking collectives with MPI_IN_PLACE and zero counts, each
	 * completed through the same layer (first: after the calls below,
	 * Open MPI 4.1's Ialltoallv of zero counts never completed, traced
	 * or not) */
	same("iallreduce in_place", PMPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM,
						    MPI_COMM_WORLD, &q),
	     MPI_Iallreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q2));
	same("wait iallreduce", PMPI_Wait(&q, MPI_STATUS_IGNORE), MPI_Wait(&q2, MPI_STATUS_IGNORE));
	same("ialltoallv zeros", PMPI_Ialltoallv(buf, zero, disp, MPI_BYTE, buf + 8, zero, disp,
						 MPI_BYTE, MPI_COMM_WORLD, &q),
	     MPI_Ialltoallv(buf, zero, disp, MPI_BYTE, buf + 8, zero, disp, MPI_BYTE,
			    MPI_COMM_WORLD, &q2));
	same("wait ialltoallv", PMPI_Wait(&q, MPI_STATUS_IGNORE), MPI_Wait(&q2, MPI_STATUS_IGNORE));
	same("iallgather in_place", PMPI_Iallgather(MPI_IN_PLACE, 0, MPI_INT, zero, 1, MPI_INT,
						    MPI_COMM_WORLD, &q),
	     MPI_Iallgather(MPI_IN_PLACE, 0, MPI_INT, zero, 1, MPI_INT, MPI_COMM_WORLD, &q2));
	same("waitall iallgather", PMPI_Waitall(1, &q, MPI_STATUSES_IGNORE),
	     MPI_Waitall(1, &q2, MPI_STATUSES_IGNORE));
	BOTH("wait null", MPI_Wait(&q, MPI_STATUS_IGNORE));
	BOTH("test null", MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
	BOTH("get_status null", MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE));
	BOTH("waitall nulls", MPI_Waitall(2, qs, MPI_STATUSES_IGNORE));
	BOTH("waitany nulls", MPI_Waitany(2, qs, &idx, MPI_STATUS_IGNORE));
	BOTH("waitsome nulls", MPI_Waitsome(2, qs, &n, ids, MPI_STATUSES_IGNORE));
	BOTH("testall nulls", MPI_Testall(2, qs, &flag, MPI_STATUSES_IGNORE));
	BOTH("testany nulls", MPI_Testany(2, qs, &idx, &flag, MPI_STATUS_IGNORE));
	BOTH("testsome nulls", MPI_Testsome(2, qs, &n, ids, MPI_STATUSES_IGNORE));
	BOTH("waitall 0", MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
	BOTH("testany 0", MPI_Testany(0, NULL, &idx, &flag, MPI_STATUS_IGNORE));
	BOTH("send proc_null bottom", MPI_Send(MPI_BOTTOM, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
	BOTH("bsend proc_null", MPI_Bsend(buf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
	BOTH("recv proc_null", MPI_Recv(buf, 16, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
	BOTH("sendrecv_replace proc_null", MPI_Sendrecv_replace(buf, 4, MPI_BYTE, MPI_PROC_NULL, 0,
							       MPI_PROC_NULL, 0, MPI_COMM_WORLD,
							       MPI_STATUS_IGNORE));
	BOTH("mprobe proc_null", MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
	BOTH("improbe proc_null", MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &st));
	/* these take the message: one each */
	m = MPI_MESSAGE_NO_PROC;
	m2 = MPI_MESSAGE_NO_PROC;
	same("mrecv no_proc", PMPI_Mrecv(buf, 16, MPI_BYTE, &m, MPI_STATUS_IGNORE),
	     MPI_Mrecv(buf, 16, MPI_BYTE, &m2, MPI_STATUS_IGNORE));
	m = MPI_MESSAGE_NO_PROC;
	m2 = MPI_MESSAGE_NO_PROC;
	same("imrecv no_proc", PMPI_Imrecv(buf, 16, MPI_BYTE, &m, &q),
	     MPI_Imrecv(buf, 16, MPI_BYTE, &m2, &q2));
	same("wait imrecv", PMPI_Wait(&q, MPI_STATUS_IGNORE), MPI_Wait(&q2, MPI_STATUS_IGNORE));
	same("isend proc_null", PMPI_Isend(buf, 4, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &q),
	     MPI_Isend(buf, 4, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &q2));
	same("wait isend proc_null", PMPI_Wait(&q, &st), MPI_Wait(&q2, &st));
	BOTH("test_cancelled", MPI_Test_cancelled(&st, &flag));
	BOTH("bcast 0", MPI_Bcast(buf, 0, MPI_BYTE, 0, MPI_COMM_WORLD));
	BOTH("allreduce in_place", MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	BOTH("alltoallv zeros", MPI_Alltoallv(buf, zero, disp, MPI_BYTE, buf, zero, disp, MPI_BYTE,
					      MPI_COMM_WORLD));
	BOTH("gather in_place", MPI_Gather(rank == 0 ? MPI_IN_PLACE : (void *)&v, 1, MPI_INT,
					   zero, 1, MPI_INT, 0, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	if (argc > 1) {
		char path[4096];

		/* (without it the test finds no codes: it fails there) */
		snprintf(path, sizeof(path), "%s.%d", argv[1], rank);
		errs = fopen(path, "w");
	}
	errors();
	sentinels();
	if (errs)
		fclose(errs);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!bad)
		printf("rank %d ok\n", rank);
	MPI_Finalize();
	return 0;
}
