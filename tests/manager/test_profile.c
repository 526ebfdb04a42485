/*
 * tests/manager/test_profile.c - the profile (manager/post/profile.c) on
 * synthetic events: per rank and call, the matrix, sizes, collectives,
 * files, bytes moved (results, not requests), launchers left out, ranks
 * known only at the end, non-MPI processes, folded polls, bounds; the
 * invariants checked after each case (mgr_profile_check).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/post/profile.h"
#include "proto/event.h"
#include "proto/trace.h"

static struct mgr_profile *p;
static struct proto_stream st[4];

static void setup(void)
{
	memset(st, 0, sizeof(st));
	for (int i = 0; i < 4; i++) {
		st[i].id = 100 + (uint64_t)i;
		st[i].rank = -1;
		st[i].pid = 1000 + i;
		snprintf(st[i].exe, sizeof(st[i].exe), "/bin/prog%d", i);
	}
	p = mgr_profile_new();
	cr_assert_not_null(p);
}

static void teardown(void)
{
	mgr_profile_free(p);
}

TestSuite(profile, .init = setup, .fini = teardown);

/* Feed one event of stream s: type, [start, end), args, tid, path, comm,
 * array. */
struct ev_opt {
	uint32_t tid;
	uint16_t flags;
	const char *path;
	int64_t comm;
	const int64_t *array;
	size_t narray;
};

static void feed_o(int s, unsigned type, int64_t t0, int64_t t1, const int64_t a[6],
		   const struct ev_opt *o)
{
	struct proto_event e;
	struct mgr_event me;

	memset(&e, 0, sizeof(e));
	e.type = (uint16_t)type;
	e.tid = o ? o->tid : 0;
	e.flags = o ? o->flags : 0;
	proto_args_set(e.arg, a[0], a[1], a[2], a[3], a[4], a[5]);
	memset(&me, 0, sizeof(me));
	me.ev = &e;
	me.stream = &st[s];
	me.start = t0;
	me.end = t1;
	me.path = o ? o->path : NULL;
	me.comm = o && o->comm != INT64_MIN ? o->comm : INT64_MIN;
	me.array = o ? o->array : NULL;
	me.narray = o ? o->narray : 0;
	cr_assert_eq(mgr_profile_add(p, &me), 0);
}

#define ARGS(...) ((const int64_t[6]){__VA_ARGS__})

static void feed(int s, unsigned type, int64_t t0, int64_t t1, const int64_t a[6])
{
	feed_o(s, type, t0, t1, a, NULL);
}

static void finish(void)
{
	cr_assert_eq(mgr_profile_finish(p), 0);
	cr_assert_eq(mgr_profile_check(p), 0, "invariant %d", mgr_profile_check(p));
}

static const struct mgr_prof_fn *fn(int rank, unsigned type)
{
	for (size_t i = 0; i < p->nfns; i++)
		if (p->fns[i].rank == rank && p->fns[i].type == type)
			return &p->fns[i];
	static const struct mgr_prof_fn none;
	cr_assert_fail("no row of rank %d, type %u", rank, type);
	return &none;
}

static const struct mgr_prof_msg *msg(int from, int to)
{
	for (size_t i = 0; i < p->nmsgs; i++)
		if (p->msgs[i].from == from && p->msgs[i].to == to)
			return &p->msgs[i];
	static const struct mgr_prof_msg none;
	cr_assert_fail("no cell %d -> %d", from, to);
	return &none;
}

static const struct mgr_prof_file *file(const char *path, int rank)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].rank == rank && !strcmp(p->files[i].path, path))
			return &p->files[i];
	static const struct mgr_prof_file none;
	cr_assert_fail("no file %s of rank %d", path, rank);
	return &none;
}

/* Two ranks and a launcher: the rank's time split, messages at the sender,
 * the launcher left out. */
Test(profile, ranks_matrix_and_launcher)
{
	st[0].rank = 0;
	st[1].rank = 1;
	/* stream 2: mpirun, rank -1 */
	feed(2, PROTO_EV_READ, 0, 5000, ARGS(3, 100, 100, 0, 0, 0));
	feed(0, PROTO_EV_MPI_INIT, 100, 1100, ARGS(0, 2, 0, 0, 0, 0));
	feed(1, PROTO_EV_MPI_INIT, 200, 1200, ARGS(1, 2, 0, 0, 0, 0));
	/* rank 0: 3 sends of 1000 B to 1 (peer, tag, comm, bytes) */
	for (int i = 0; i < 3; i++)
		feed(0, PROTO_EV_MPI_SEND, 2000 + i * 100, 2050 + i * 100,
		     ARGS(1, 7, 0, 1000, 0, 0));
	/* rank 1: 3 receives, the first waits 500 ns */
	feed(1, PROTO_EV_MPI_RECV, 1500, 2050, ARGS(0, 7, 0, 1000, 0, 0));
	feed(1, PROTO_EV_MPI_RECV, 2100, 2150, ARGS(0, 7, 0, 1000, 0, 0));
	feed(1, PROTO_EV_MPI_RECV, 2200, 2250, ARGS(0, 7, 0, 1000, 0, 0));
	/* rank 1 sends 0 B to 0, rank 0 sends to MPI_PROC_NULL (-2): no message */
	feed(1, PROTO_EV_MPI_SEND, 3000, 3010, ARGS(0, 1, 0, 0, 0, 0));
	feed(0, PROTO_EV_MPI_SEND, 3000, 3010, ARGS(-2, 1, 0, 8, 0, 0));
	/* a write on rank 0: 4096 asked, 1024 written */
	feed_o(0, PROTO_EV_WRITE, 4000, 4400, ARGS(5, 4096, 1024, 9, 0, 0),
	       &(struct ev_opt){.path = "/tmp/out", .comm = INT64_MIN});
	feed(0, PROTO_EV_MPI_FINALIZE, 5000, 6000, ARGS(0, 2, 0, 0, 0, 0));
	feed(1, PROTO_EV_MPI_FINALIZE, 5000, 6100, ARGS(1, 2, 0, 0, 0, 0));
	finish();

	cr_assert(p->mpi);
	cr_assert_eq(p->left_out, 1);
	cr_assert_eq(p->nranks, 2);
	cr_assert_eq(p->ranks[0].rank, 0);
	cr_assert_eq(p->ranks[0].t0, 100);
	cr_assert_eq(p->ranks[0].t1, 6000);
	cr_assert_eq(p->ranks[0].mpi_ns, 1000 + 150 + 10 + 1000);
	cr_assert_eq(p->ranks[0].io_ns, 400);
	cr_assert_eq(p->ranks[0].pid, 1000);
	cr_assert_str_eq(p->ranks[0].exe, "/bin/prog0");
	cr_assert_eq(p->ranks[1].mpi_ns, 1000 + 550 + 50 + 50 + 10 + 1100);
	cr_assert_eq(p->ranks[1].t1 - p->ranks[1].t0, 5900);

	const struct mgr_prof_fn *f = fn(1, PROTO_EV_MPI_RECV);
	cr_assert_eq(f->calls, 3);
	cr_assert_eq(f->time_ns, 650);
	cr_assert_eq(f->max_ns, 550);
	cr_assert_eq(f->bytes, 3000);
	f = fn(0, PROTO_EV_WRITE);
	cr_assert_eq(f->bytes, 1024, "the result, not the 4096 asked");

	cr_assert_eq(p->nmsgs, 2);
	cr_assert_eq(msg(0, 1)->count, 3);
	cr_assert_eq(msg(0, 1)->bytes, 3000);
	cr_assert_eq(msg(1, 0)->count, 1);
	cr_assert_eq(msg(1, 0)->bytes, 0);
	cr_assert_eq(p->msgs[0].from, 0, "heaviest first");
	cr_assert_eq(p->msg_count, 4);
	cr_assert_eq(p->bins[mgr_profile_bin(1000)].count, 3);
	cr_assert_eq(p->bins[mgr_profile_bin(1000)].min_bytes, 512);
	cr_assert_eq(p->bins[mgr_profile_bin(1000)].max_bytes, 1023);
	cr_assert_eq(p->bins[0].count, 1);
	cr_assert_eq(p->bins[0].max_bytes, 0);

	const struct mgr_prof_file *x = file("/tmp/out", 0);
	cr_assert_eq(x->writes, 1);
	cr_assert_eq(x->write_bytes, 1024);
	cr_assert_eq(x->time_ns, 400);
	cr_assert_eq(p->nfiles, 1);

	/* imbalance of MPI_Recv: only rank 1 (650), mean 325 -> 2 */
	for (size_t i = 0; i < p->ntypes; i++)
		if (p->types[i].type == PROTO_EV_MPI_RECV)
			cr_assert_float_eq(p->types[i].imbalance, 2.0, 1e-9);
	cr_assert_eq(p->types[0].type, PROTO_EV_MPI_FINALIZE, "by time");
}

/* A rank known only from a META read after its first events (the stream's
 * rank changes while gathering): every row follows it; two streams of
 * one rank merge. */
Test(profile, rank_known_late_and_merged)
{
	feed_o(0, PROTO_EV_READ, 0, 100, ARGS(3, 50, 40, 9, 0, 0),
	       &(struct ev_opt){.path = "/in", .comm = INT64_MIN});
	st[0].rank = 3;
	feed(0, PROTO_EV_MPI_SEND, 200, 300, ARGS(4, 0, 0, 64, 0, 0));
	st[1].rank = 3;	/* a second stream of rank 3 (an exec) */
	feed_o(1, PROTO_EV_READ, 400, 500, ARGS(3, 50, 10, 9, 0, 0),
	       &(struct ev_opt){.path = "/in", .comm = INT64_MIN});
	feed(1, PROTO_EV_MPI_SEND, 500, 600, ARGS(4, 0, 0, 64, 0, 0));
	finish();
	cr_assert_eq(p->nranks, 1);
	cr_assert_eq(p->ranks[0].rank, 3);
	cr_assert_eq(p->left_out, 0);
	cr_assert_eq(fn(3, PROTO_EV_READ)->calls, 2);
	cr_assert_eq(fn(3, PROTO_EV_READ)->bytes, 50);
	cr_assert_eq(file("/in", 3)->reads, 2);
	cr_assert_eq(file("/in", 3)->read_bytes, 50);
	cr_assert_eq(p->nfiles, 1);
	cr_assert_eq(msg(3, 4)->count, 2);
	cr_assert_eq(p->nmsgs, 1);
}

/* No MPI rank anywhere: every process is one, in the order first seen. */
Test(profile, processes_without_mpi)
{
	feed_o(2, PROTO_EV_WRITE, 10, 20, ARGS(1, 6, 6, 0, 0, 0), NULL);
	feed(0, PROTO_EV_FORK, 0, 30, ARGS(1002, 0, 0, 0, 0, 0));
	feed(0, PROTO_EV_EXIT, 100, 100, ARGS(0, 0, 0, 0, 0, 0));
	finish();
	cr_assert_not(p->mpi);
	cr_assert_eq(p->nranks, 2);
	cr_assert_eq(p->ranks[0].pid, 1002, "first seen first");
	cr_assert_eq(p->ranks[0].io_ns, 10);
	cr_assert_eq(p->ranks[1].pid, 1000);
	cr_assert_eq(p->ranks[1].t1 - p->ranks[1].t0, 100);
	cr_assert_eq(mgr_profile_compute_ns(&p->ranks[1]), 100, "fork is computation");
	cr_assert_eq(p->nfiles, 0, "no path, no file row");
	cr_assert_eq(p->nmsgs, 0);
}

/* Bytes: what the call moved (its result), 0 for a failed call; stdio's
 * items; MPI-IO's status; completions' requests; Sendrecv both ways. */
Test(profile, bytes_moved)
{
	st[0].rank = 0;
	/* read asked 8192, got 100; a failed write; fread of 8192 B moved
	 * (bytes: what moved since issue 31; result: items), one that moved
	 * nothing; fgets got 12 of 80; fputs of 5 */
	feed(0, PROTO_EV_READ, 0, 1, ARGS(3, 8192, 100, 0, 0, 0));
	feed_o(0, PROTO_EV_WRITE, 1, 2, ARGS(3, 8192, -1, 0, 28, 0),
	       &(struct ev_opt){.flags = PROTO_EVF_FAILED, .comm = INT64_MIN});
	feed(0, PROTO_EV_FREAD, 2, 3, ARGS(3, 8192, 2, 0, 0, 1));
	feed(0, PROTO_EV_FREAD, 3, 4, ARGS(3, 0, 0, 0, 0, 1));
	feed(0, PROTO_EV_FGETS, 4, 5, ARGS(3, 80, 12, 0, 0, 0));
	feed(0, PROTO_EV_FGETS, 5, 6, ARGS(3, 80, -1, 0, 0, 0));
	feed(0, PROTO_EV_FPUTS, 6, 7, ARGS(3, 5, 1, 0, 0, 0));
	/* MPI_File_read_at: file, path, offset, bytes 4000, coll, result 3000;
	 * then one whose status says nothing (-1): what it asked */
	feed(0, PROTO_EV_MPI_FILE_READ_AT, 7, 8, ARGS(1, 0, 0, 4000, 0, 3000));
	feed(0, PROTO_EV_MPI_FILE_WRITE_AT, 8, 9, ARGS(1, 0, 0, 4000, 0, -1));
	/* a nonblocking access: its bytes move at its wait, not here */
	feed(0, PROTO_EV_MPI_FILE_IREAD_AT, 9, 10, ARGS(1, 0, 0, 4000, 0, 7));
	/* Waitall of two requests (req, peer, bytes, arrived): 10 + 20 */
	int64_t wa[8] = {1, 1, 10, 0, 2, 1, 20, 0};
	feed_o(0, PROTO_EV_MPI_WAITALL, 10, 11, ARGS(2, 0, 0, 0, 0, 0),
	       &(struct ev_opt){.array = wa, .narray = 8, .comm = INT64_MIN});
	/* Irecv moves nothing yet; Sendrecv: 16 out, 32 in */
	feed(0, PROTO_EV_MPI_IRECV, 11, 12, ARGS(1, 0, 0, 64, 3, 0));
	feed(0, PROTO_EV_MPI_SENDRECV, 12, 13, ARGS(1, 0, 0, 16, 1, 32));
	/* a folded run of 7 empty MPI_Test: 7 calls, no bytes */
	int64_t n7[1] = {7};
	feed_o(0, PROTO_EV_MPI_TEST, 13, 20, ARGS(3, 0, -1, -1, 0, 0),
	       &(struct ev_opt){.flags = PROTO_EVF_FOLDED, .array = n7, .narray = 1,
				.comm = INT64_MIN});
	/* MPI_Win_create of a 1 MB window transfers nothing */
	feed(0, PROTO_EV_MPI_WIN_CREATE, 20, 21, ARGS(1, 0, 1 << 20, 1, 0, 0));
	feed(0, PROTO_EV_MPI_PUT, 21, 22, ARGS(1, 1, 256, 0, 0, 0));
	finish();
	cr_assert_eq(fn(0, PROTO_EV_READ)->bytes, 100);
	cr_assert_eq(fn(0, PROTO_EV_WRITE)->bytes, 0);
	cr_assert_eq(fn(0, PROTO_EV_FREAD)->bytes, 8192);
	cr_assert_eq(fn(0, PROTO_EV_FREAD)->calls, 2);
	cr_assert_eq(fn(0, PROTO_EV_FGETS)->bytes, 12);
	cr_assert_eq(fn(0, PROTO_EV_FPUTS)->bytes, 5);
	cr_assert_eq(fn(0, PROTO_EV_MPI_FILE_READ_AT)->bytes, 3000);
	cr_assert_eq(fn(0, PROTO_EV_MPI_FILE_WRITE_AT)->bytes, 4000);
	cr_assert_eq(fn(0, PROTO_EV_MPI_FILE_IREAD_AT)->bytes, 0);
	cr_assert_eq(fn(0, PROTO_EV_MPI_WAITALL)->bytes, 30);
	cr_assert_eq(fn(0, PROTO_EV_MPI_IRECV)->bytes, 0);
	cr_assert_eq(fn(0, PROTO_EV_MPI_SENDRECV)->bytes, 48);
	cr_assert_eq(fn(0, PROTO_EV_MPI_TEST)->calls, 7);
	cr_assert_eq(fn(0, PROTO_EV_MPI_TEST)->bytes, 0);
	cr_assert_eq(fn(0, PROTO_EV_MPI_WIN_CREATE)->bytes, 0);
	cr_assert_eq(fn(0, PROTO_EV_MPI_PUT)->bytes, 256);
	/* MPI-IO is I/O time, the rest MPI */
	cr_assert_eq(p->ranks[0].io_ns, 7 + 3);
	cr_assert_eq(p->ranks[0].mpi_ns, 22 - 10);
	cr_assert_eq(msg(0, 1)->bytes, 16, "the Sendrecv's send only");
}

/* A stdio run (count 1000 fwrite over 10 ms) whose calls took 1 ms: the
 * I/O time is the calls' (its ARRAY), not the span; a run without it (a
 * trace from before) and a single call count their span; a value beyond
 * the span (the correction shortened it) is held to it. */
Test(profile, stdio_run_time)
{
	int64_t in1[1] = {1000000}, big[1] = {50};

	st[0].rank = 0;
	feed_o(0, PROTO_EV_FWRITE, 0, 10000000, ARGS(3, 11000, 11, 0, 0, 1000),
	       &(struct ev_opt){.flags = PROTO_EVF_HASARRAY, .array = in1, .narray = 1,
				.comm = INT64_MIN, .path = "/tmp/f"});
	feed(0, PROTO_EV_FREAD, 10000000, 10000100, ARGS(3, 4096, 1, 0, 0, 40));
	feed(0, PROTO_EV_FPUTS, 10000100, 10000130, ARGS(3, 5, 1, 0, 0, 1));
	feed_o(0, PROTO_EV_FGETC, 10000130, 10000140, ARGS(3, 2, 1, 0, 0, 2),
	       &(struct ev_opt){.flags = PROTO_EVF_HASARRAY, .array = big, .narray = 1,
				.comm = INT64_MIN});
	finish();
	cr_assert_eq(fn(0, PROTO_EV_FWRITE)->time_ns, 1000000);
	cr_assert_eq(fn(0, PROTO_EV_FWRITE)->calls, 1000);
	cr_assert_eq(fn(0, PROTO_EV_FWRITE)->bytes, 11000);
	cr_assert_eq(fn(0, PROTO_EV_FREAD)->time_ns, 100);
	cr_assert_eq(fn(0, PROTO_EV_FPUTS)->time_ns, 30);
	cr_assert_eq(fn(0, PROTO_EV_FGETC)->time_ns, 10);
	cr_assert_eq(p->ranks[0].io_ns, 1000000 + 100 + 30 + 10);
	cr_assert_eq(p->nfiles, 1);
	cr_assert_eq(p->files[0].time_ns, 1000000);
}

/* Collectives per communicator: world, a named one, the unnamed together;
 * the members counted once each. */
Test(profile, collectives)
{
	st[0].rank = 0;
	st[1].rank = 1;
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < 3; i++)
			feed_o(s, PROTO_EV_MPI_ALLREDUCE, 10 * i, 10 * i + 4 + s,
			       ARGS(8, 0, 0, 0, 0, 0), &(struct ev_opt){.comm = 0});
		feed_o(s, PROTO_EV_MPI_BARRIER, 100, 150, ARGS(2, 0, 0, 0, 0, 0),
		       &(struct ev_opt){.comm = 5});
		feed_o(s, PROTO_EV_MPI_BCAST, 200, 210, ARGS(64, 0, -(s + 2), 0, 0, 0),
		       &(struct ev_opt){.comm = -(s + 2)});
	}
	finish();
	cr_assert_eq(p->ncolls, 3);
	cr_assert_eq(p->colls[0].comm, 0);
	cr_assert_eq(p->colls[0].type, PROTO_EV_MPI_ALLREDUCE);
	cr_assert_eq(p->colls[0].calls, 6);
	cr_assert_eq(p->colls[0].time_ns, 3 * 4 + 3 * 5);
	cr_assert_eq(p->colls[0].bytes, 48);
	cr_assert_eq(p->colls[0].ranks, 2);
	cr_assert_eq(p->colls[1].comm, 5);
	cr_assert_eq(p->colls[1].time_ns, 100);
	cr_assert_eq(p->colls[2].comm, MGR_PROFILE_COMM_UNNAMED, "unnamed last");
	cr_assert_eq(p->colls[2].calls, 2);
	cr_assert_eq(p->colls[2].ranks, 2);
	cr_assert_eq(p->nmsgs, 0, "collectives are not in the matrix");
}

/* Helper threads: their calls in the functions, their time beside the
 * rank's; files by (path, rank), by time. */
Test(profile, threads_and_files)
{
	st[0].rank = 0;
	feed(0, PROTO_EV_MPI_INIT, 0, 100, ARGS(0, 1, 0, 0, 0, 0));
	feed_o(0, PROTO_EV_READ, 100, 900, ARGS(7, 64, 64, 0, 0, 0),
	       &(struct ev_opt){.tid = 2, .comm = INT64_MIN});
	feed_o(0, PROTO_EV_OPEN, 100, 110, ARGS(4, 0, 0, 3, 0, 0),
	       &(struct ev_opt){.path = "/a", .comm = INT64_MIN});
	feed_o(0, PROTO_EV_PWRITE, 110, 130, ARGS(4, 10, 10, 3, 0, 0),
	       &(struct ev_opt){.path = "/a", .comm = INT64_MIN});
	feed_o(0, PROTO_EV_FSYNC, 130, 230, ARGS(4, 0, 3, 0, 0, 0),
	       &(struct ev_opt){.path = "/a", .comm = INT64_MIN});
	feed_o(0, PROTO_EV_READ, 300, 600, ARGS(5, 10, 10, 6, 0, 0),
	       &(struct ev_opt){.path = "/b", .comm = INT64_MIN});
	/* a socket's address is not a file */
	feed_o(0, PROTO_EV_SEND_SOCK, 600, 700, ARGS(6, 10, 10, 8, 0, 0),
	       &(struct ev_opt){.path = "127.0.0.1:80", .comm = INT64_MIN});
	/* an event ending before it starts (damaged) lasts 0 */
	feed_o(0, PROTO_EV_READ, 800, 700, ARGS(5, 10, 10, 6, 0, 0),
	       &(struct ev_opt){.path = "/b", .comm = INT64_MIN});
	finish();
	cr_assert_eq(p->ranks[0].threads_ns, 800);
	cr_assert_eq(p->ranks[0].io_ns, 10 + 20 + 100 + 300 + 100);
	cr_assert_eq(p->ranks[0].mpi_ns, 100);
	cr_assert_eq(fn(0, PROTO_EV_READ)->calls, 3);
	cr_assert_eq(p->nfiles, 2);
	cr_assert_str_eq(p->files[0].path, "/b", "by time");
	cr_assert_eq(p->files[0].reads, 2);
	cr_assert_eq(p->files[0].read_bytes, 20);
	cr_assert_eq(p->files[0].time_ns, 300);
	const struct mgr_prof_file *a = file("/a", 0);
	cr_assert_eq(a->opens, 1);
	cr_assert_eq(a->writes, 1);
	cr_assert_eq(a->write_bytes, 10);
	cr_assert_eq(a->other, 1);
	cr_assert_eq(a->time_ns, 130);
}

/* Not calls: tracer records, invalid types; an empty profile. */
Test(profile, nothing_to_count)
{
	feed(0, PROTO_EV_COMPUTE, 0, 100, ARGS(100, 0, 0, 0, 0, 0));
	feed(0, 0, 0, 100, ARGS(0, 0, 0, 0, 0, 0));
	feed(0, PROTO_EV__COUNT + 5, 0, 100, ARGS(0, 0, 0, 0, 0, 0));
	finish();
	cr_assert_eq(p->nranks, 0);
	cr_assert_eq(p->nfns, 0);
	cr_assert_eq(p->ntypes, 0);
	/* finish twice, add after it: no effect */
	cr_assert_eq(mgr_profile_finish(p), 0);
	feed(0, PROTO_EV_READ, 0, 1, ARGS(3, 1, 1, 0, 0, 0));
	cr_assert_eq(p->nfns, 0);
	mgr_profile_free(NULL);
}

/* The bins: 0 alone, then powers of two. */
Test(profile, bins)
{
	cr_assert_eq(mgr_profile_bin(0), 0);
	cr_assert_eq(mgr_profile_bin(1), 1);
	cr_assert_eq(mgr_profile_bin(2), 2);
	cr_assert_eq(mgr_profile_bin(3), 2);
	cr_assert_eq(mgr_profile_bin(4), 3);
	cr_assert_eq(mgr_profile_bin(1023), 10);
	cr_assert_eq(mgr_profile_bin(1024), 11);
	cr_assert_eq(mgr_profile_bin(UINT64_MAX), MGR_PROFILE_BINS - 1);
}
