/*
 * tests/proto/test_event.c - Criterion suite "event": the event catalogue
 * (proto/event.c from events.def and fields.def) and the error table
 * (proto/error.c from errors.def) are consistent.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "proto/event.h"

static const int codes[] = {
#define ERR(name, value, msg) PROTO_E_##name,
#include "proto/errors.def"
#undef ERR
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

Test(event, record_layout)
{
	cr_assert_eq(sizeof(struct proto_event), PROTO_EVENT_SIZE);
	cr_assert_eq(offsetof(struct proto_event, t_start), 0);
	cr_assert_eq(offsetof(struct proto_event, t_end), 8);
	cr_assert_eq(offsetof(struct proto_event, type), 16);
	cr_assert_eq(offsetof(struct proto_event, flags), 18);
	cr_assert_eq(offsetof(struct proto_event, tid), 20);
	cr_assert_eq(offsetof(struct proto_event, arg), 24);
	cr_assert_eq(PROTO_STRING_CHUNK, PROTO_EV_NARGS * 8);
}

Test(event, every_type_has_a_unique_name_that_looks_up)
{
	cr_assert_gt(PROTO_EV__COUNT, 2);
	for (unsigned t = 1; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *a = proto_ev_info(t);

		cr_assert_not_null(a, "type %u", t);
		cr_assert_not_null(a->name, "type %u", t);
		cr_assert_gt(strlen(a->name), 0, "type %u", t);
		cr_assert_eq(proto_ev_lookup(a->name), t, "%s", a->name);
		for (unsigned u = t + 1; u < PROTO_EV__COUNT; u++)
			cr_assert_str_neq(a->name, proto_ev_info(u)->name,
					  "types %u and %u", t, u);
	}
}

Test(event, wire_ids_are_stable)
{
	/* events.def is append-only: the first lines keep their ids */
	cr_assert_eq(PROTO_EV_STRING, 1);
	cr_assert_eq(PROTO_EV_ARRAY, 2);
	cr_assert_str_eq(proto_ev_info(PROTO_EV_WRITE)->name, "write");
	cr_assert_str_eq(proto_ev_info(PROTO_EV_MPI_SEND)->name, "MPI_Send");
	cr_assert_str_eq(proto_ev_info(PROTO_EV_SEND_SOCK)->name, "send");
	cr_assert_eq(proto_ev_lookup("fwrite"), PROTO_EV_FWRITE);
	/* appended after MPI_Intercomm_merge */
	cr_assert_eq(PROTO_EV_MPI_INTERCOMM_MERGE, 90);
	cr_assert_eq(PROTO_EV_MPI_COMM_DUP_WITH_INFO, 91);
}

Test(event, categories_are_valid)
{
	for (unsigned t = 1; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *a = proto_ev_info(t);

		cr_assert_not_null(proto_cat_name(a->category), "type %u", t);
		if (strncmp(a->name, "MPI_", 4) == 0)
			cr_assert_eq(a->category, PROTO_CAT_MPI, "%s", a->name);
		else
			cr_assert_neq(a->category, PROTO_CAT_MPI, "%s", a->name);
	}
	cr_assert_eq(proto_ev_info(PROTO_EV_STRING)->category,
		     PROTO_CAT_TRACER);
	cr_assert_eq(proto_ev_info(PROTO_EV_MEM_SAMPLE)->category,
		     PROTO_CAT_MEM);
	cr_assert_str_eq(proto_cat_name(PROTO_CAT_TRACER), "tracer");
	cr_assert_str_eq(proto_cat_name(PROTO_CAT_LIBC), "libc");
	cr_assert_str_eq(proto_cat_name(PROTO_CAT_MPI), "mpi");
	cr_assert_str_eq(proto_cat_name(PROTO_CAT_MEM), "mem");
	cr_assert_str_eq(proto_cat_name(PROTO_CAT_PROC), "proc");
	cr_assert_null(proto_cat_name(5));
	cr_assert_null(proto_cat_name(~0u));
}

Test(event, arg_finds_each_declared_field)
{
	for (unsigned t = 1; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *a = proto_ev_info(t);

		for (int i = 0; i < PROTO_EV_NARGS; i++) {
			unsigned f = a->field[i];

			cr_assert_lt(f, PROTO_F__COUNT, "%s arg %d", a->name, i);
			if (f == PROTO_F_none)
				continue;
			/* a field appears at most once per type */
			for (int j = i + 1; j < PROTO_EV_NARGS; j++)
				cr_assert_neq(a->field[j], f, "%s: %s twice",
					      a->name, proto_field_name(f));
			cr_assert_eq(proto_ev_arg(t, (enum proto_field)f), i,
				     "%s.%s", a->name, proto_field_name(f));
		}
		cr_assert_eq(proto_ev_arg(t, PROTO_F_none), -1);
	}
	cr_assert_eq(proto_ev_arg(PROTO_EV_MPI_SEND, PROTO_F_peer), 0);
	cr_assert_eq(proto_ev_arg(PROTO_EV_MPI_SEND, PROTO_F_bytes), 3);
	cr_assert_eq(proto_ev_arg(PROTO_EV_WRITE, PROTO_F_fd), 0);
	cr_assert_eq(proto_ev_arg(PROTO_EV_WRITE, PROTO_F_peer), -1);
	cr_assert_eq(proto_ev_arg(PROTO_EV_STRING, PROTO_F_fd), -1);
}

Test(event, field_names_are_unique)
{
	for (unsigned f = 0; f < PROTO_F__COUNT; f++) {
		cr_assert_not_null(proto_field_name(f), "field %u", f);
		for (unsigned g = f + 1; g < PROTO_F__COUNT; g++)
			cr_assert_str_neq(proto_field_name(f),
					  proto_field_name(g));
	}
	cr_assert_str_eq(proto_field_name(PROTO_F_none), "none");
	cr_assert_str_eq(proto_field_name(PROTO_F_bytes), "bytes");
	cr_assert_null(proto_field_name(PROTO_F__COUNT));
	cr_assert_null(proto_field_name(~0u));
}

Test(event, invalid_types)
{
	cr_assert_null(proto_ev_info(PROTO_EV__INVALID));
	cr_assert_null(proto_ev_info(PROTO_EV__COUNT));
	cr_assert_null(proto_ev_info(0xffff));
	cr_assert_null(proto_ev_info(~0u));
	cr_assert_eq(proto_ev_arg(PROTO_EV__INVALID, PROTO_F_fd), -1);
	cr_assert_eq(proto_ev_arg(PROTO_EV__COUNT, PROTO_F_fd), -1);
	cr_assert_eq(proto_ev_arg(~0u, PROTO_F_fd), -1);
	cr_assert_eq(proto_ev_arg(PROTO_EV_WRITE, (enum proto_field)200), -1);
	cr_assert_eq(proto_ev_lookup(NULL), PROTO_EV__INVALID);
	cr_assert_eq(proto_ev_lookup(""), PROTO_EV__INVALID);
	cr_assert_eq(proto_ev_lookup("Write"), PROTO_EV__INVALID);
	cr_assert_eq(proto_ev_lookup("write "), PROTO_EV__INVALID);
	cr_assert_eq(proto_ev_lookup("MPI_Sen"), PROTO_EV__INVALID);
}

Test(event, error_codes_have_distinct_names_and_messages)
{
	cr_assert_gt(NCODES, 0);
	for (size_t i = 0; i < NCODES; i++) {
		const char *n = proto_errname(codes[i]);
		const char *m = proto_strerror(codes[i]);

		cr_assert_lt(codes[i], 0, "%s", n);
		cr_assert_str_neq(n, "PROTO_E_UNKNOWN", "code %d", codes[i]);
		cr_assert_eq(strncmp(n, "PROTO_E_", 8), 0, "%s", n);
		cr_assert_not_null(m);
		cr_assert_gt(strlen(m), 0, "%s", n);
		cr_assert_str_neq(m, "unknown error", "%s", n);
		for (size_t j = i + 1; j < NCODES; j++) {
			cr_assert_neq(codes[i], codes[j], "%s", n);
			cr_assert_str_neq(n, proto_errname(codes[j]));
			cr_assert_str_neq(m, proto_strerror(codes[j]));
		}
	}
	cr_assert_str_eq(proto_errname(PROTO_E_TRUNCATED), "PROTO_E_TRUNCATED");
	cr_assert_eq(PROTO_E_TRUNCATED, -1);
}

Test(event, error_ok_and_unknown_codes)
{
	cr_assert_str_eq(proto_errname(PROTO_OK), "PROTO_OK");
	cr_assert_str_eq(proto_strerror(PROTO_OK), "success");
	cr_assert_str_eq(proto_errname(1), "PROTO_E_UNKNOWN");
	cr_assert_str_eq(proto_errname(-1000), "PROTO_E_UNKNOWN");
	cr_assert_str_eq(proto_strerror(-1000), "unknown error");
	cr_assert_str_eq(proto_strerror(12345), "unknown error");
}

Test(event, collectives_are_one_run)
{
	unsigned n = 0;

	for (unsigned t = 0; t < PROTO_EV__COUNT + 2; t++)
		if (proto_ev_collective(t)) {
			const struct proto_ev_info *i = proto_ev_info(t);

			cr_assert_not_null(i);
			cr_assert_eq(i->category, PROTO_CAT_MPI, "%s", i->name);
			cr_assert_geq(proto_ev_arg(t, PROTO_F_comm), 0, "%s has no comm", i->name);
			n++;
		}
	cr_assert_eq(n, 15);
	cr_assert(proto_ev_collective(PROTO_EV_MPI_BARRIER));
	cr_assert(proto_ev_collective(PROTO_EV_MPI_EXSCAN));
	cr_assert_not(proto_ev_collective(PROTO_EV_MPI_SEND));
	cr_assert_not(proto_ev_collective(PROTO_EV_MPI_WAITALL));
	cr_assert_not(proto_ev_collective(PROTO_EV__INVALID));
}

/* Every MPI_File_ event is MPI-IO: the data accesses reads or writes, the
 * rest (management, the pointer, view and query run) file management. */
Test(event, mpiio_kinds)
{
	unsigned n = 0;

	for (unsigned t = 1; t < PROTO_EV__COUNT; t++) {
		const struct proto_ev_info *i = proto_ev_info(t);
		int io = proto_ev_mpiio(t);

		if (strncmp(i->name, "MPI_File_", 9)) {
			cr_assert_eq(io, PROTO_IO_NOT, "%s", i->name);
			continue;
		}
		n++;
		cr_assert_neq(io, PROTO_IO_NOT, "%s", i->name);
		/* delete names a path, every other call a file id */
		cr_assert_geq(proto_ev_arg(t, t == PROTO_EV_MPI_FILE_DELETE ?
					   PROTO_F_path : PROTO_F_file), 0, "%s", i->name);
	}
	cr_assert_eq(n, 41 + 11 + 2);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_GET_AMODE), PROTO_IO_FILE);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_GET_GROUP), PROTO_IO_FILE);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_SEEK), PROTO_IO_FILE);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_GET_INFO), PROTO_IO_FILE);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_IREAD_AT), PROTO_IO_READ);
	cr_assert_eq(proto_ev_mpiio(PROTO_EV_MPI_FILE_WRITE_ORDERED_END), PROTO_IO_WRITE);
}

/* What an MPI-IO access moved (proto_ev_moved, the CSV's, the report's and
 * the profile's one rule): its status's count, 0 at the end of a file;
 * -1 (the status said nothing): what it asked; 0 when it failed, and for a
 * nonblocking access or a split collective's _begin (they move at their
 * completion). */
static int64_t moved(unsigned type, int64_t bytes, int64_t result, unsigned flags)
{
	struct proto_event ev = {.type = type, .flags = flags};

	ev.arg[proto_ev_arg(type, PROTO_F_bytes)] = bytes;
	if (proto_ev_arg(type, PROTO_F_result) >= 0)
		ev.arg[proto_ev_arg(type, PROTO_F_result)] = result;
	return proto_ev_moved(&ev);
}

Test(event, mpiio_moved)
{
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_READ_AT, 400, 400, 0), 400);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_READ_AT, 400, 0, 0), 0);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_WRITE_AT, 400, -1, 0), 400);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_READ_AT, 400, -1, PROTO_EVF_FAILED), 0);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_IREAD_AT, 400, 0, 0), 0);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_READ_ALL_BEGIN, 400, 0, 0), 0);
	cr_assert_eq(moved(PROTO_EV_MPI_FILE_READ_ALL_END, 400, 400, 0), 400);
}

/* The one-sided kinds number the run from MPI_Win_create and MPI_Win_test
 * after it, one index a type, and nothing else. */
Test(event, rma_kinds)
{
	unsigned n = 0;

	for (unsigned t = 0; t < PROTO_EV__COUNT + 2; t++) {
		int k = proto_ev_rma_kind(t);

		cr_assert_eq(k >= 0, proto_ev_rma(t), "%u", t);
		if (k < 0)
			continue;
		n++;
		cr_assert_lt(k, PROTO_RMA_KINDS);
		cr_assert_eq(proto_ev_rma_type(k), t);
	}
	cr_assert_eq(n, PROTO_RMA_KINDS);
	cr_assert_eq(proto_ev_rma_kind(PROTO_EV_MPI_WIN_TEST), PROTO_RMA_KINDS - 1);
	cr_assert_eq(proto_ev_rma_type(PROTO_RMA_KINDS), PROTO_EV__INVALID);
}

/* Each nonblocking collective completes as the blocking type whose name it
 * carries after its "I" (case aside), with the same arguments and a req after them. */
Test(event, nonblocking_collectives_map_to_blocking)
{
	unsigned n[5] = {0};

	for (unsigned t = 0; t < PROTO_EV__COUNT + 2; t++) {
		int k = proto_ev_coll2(t);
		unsigned b = proto_ev_icoll(t);

		n[k]++;
		if (k != PROTO_COLL2_NB && k != PROTO_COLL2_INEIGHBOR) {
			cr_assert_eq(b, 0u, "%u", t);
			continue;
		}
		const struct proto_ev_info *i = proto_ev_info(t), *bi = proto_ev_info(b);

		cr_assert_not_null(bi, "%s", i->name);
		/* MPI_Ineighbor_x: MPI_Neighbor_x */
		cr_assert_eq(strcasecmp(i->name + 5, bi->name + 4), 0, "%s -> %s",
			     i->name, bi->name);
		cr_assert_eq(i->name[4], 'I');
		for (int a = 0; a < PROTO_EV_NARGS; a++)
			if (bi->field[a] != PROTO_F_none)
				cr_assert_eq(i->field[a], bi->field[a], "%s arg %d", i->name, a);
		cr_assert_geq(proto_ev_arg(t, PROTO_F_req), 0, "%s", i->name);
		cr_assert_lt(proto_ev_arg(b, PROTO_F_req), 0, "%s", bi->name);
	}
	cr_assert_eq(n[PROTO_COLL2_BLOCKING], 2);
	cr_assert_eq(n[PROTO_COLL2_NB], 17);
	cr_assert_eq(n[PROTO_COLL2_NEIGHBOR], 5);
	cr_assert_eq(n[PROTO_COLL2_INEIGHBOR], 5);
	cr_assert_eq(proto_ev_icoll(PROTO_EV_MPI_IBCAST), PROTO_EV_MPI_BCAST);
	cr_assert_eq(proto_ev_icoll(PROTO_EV_MPI_IREDUCE_SCATTER_BLOCK),
		     PROTO_EV_MPI_REDUCE_SCATTER_BLOCK);
	cr_assert_not(proto_ev_collective(PROTO_EV_MPI_IBARRIER));
}
