/*
 * sensor/mpi_ext.c - the MPI sensor's wrappers of sensor/mpi_ext.def:
 * MPI_Abort and the group constructors.
 *
 * Expanded through sensor/mpi_gen.h like sensor/mpi_io.c, with the
 * prologue and epilogue of sensor/mpi_wrap.c. Groups get an id of the
 * sensor's (1, 2 ... per process in creation order, -1 MPI_GROUP_EMPTY) in
 * the group table (handle -> id, behind its lock, never held with
 * another lock); a constructor records the new group's size and leader
 * (its lowest MPI_COMM_WORLD rank, -1 when empty or unknown).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/mpi_int.h"
#include "sensor/mpi_table.h"

_Static_assert(sizeof(MPI_Group) <= sizeof(uint64_t), "MPI_Group handle");

#define GROUP_TAB_MAX (1u << 20)

#define MW_TABLE "sensor/mpi_ext.def"
#define MW_GEN_NEXT
#include "sensor/mpi_gen.h"

/* MPI_Abort does not return when it works, and the job's other processes
 * are killed (MPICH's hydra sends them SIGKILL): the event is emitted and
 * the whole trace of this process flushed (sn_flush_all: shipped, bounded
 * wait) before the call. If the call returns (it failed), the epilogue has
 * nothing left to do. */
static int do_Abort(struct mw_call *c, MPI_Comm comm, int errorcode)
{
	proto_args_set(c->arg, errorcode, mw_comm_id(comm, 0, NULL), 0, 0, 0,
		       0);
	c->flush = 1;
	mw_end(c, MPI_SUCCESS);
	c->on = 0;
	c->flush = 0;
	return next_Abort(comm, errorcode);
}

/* ---- groups ------------------------------------------------------------- */

static struct mw_ids groups = MW_IDS_INIT(int64_t, 16, GROUP_TAB_MAX, NULL);

/* The id of g: -1 for MPI_GROUP_EMPTY, 0 when unknown. */
static int64_t group_id(MPI_Group g)
{
	return g == MPI_GROUP_EMPTY ? -1 : mw_ids_id(&groups, MW_KEY(g));
}

/* Register the group just made (a fresh id; -1 for MPI_GROUP_EMPTY, which
 * MPI may return for an empty result; 0 when the table is full). */
static int64_t group_added(MPI_Group g)
{
	int64_t *r, id;

	if (g == MPI_GROUP_EMPTY)
		return -1;
	r = mw_ids_add(&groups, MW_KEY(g));
	id = r ? *r : 0;
	mw_ids_unlock(&groups);
	return id;
}

/* Size of g and its lowest world rank (-1: empty or unknown). */
static void group_shape(MPI_Group g, int64_t *size, int64_t *leader)
{
	MPI_Group wg = MPI_GROUP_NULL;
	int n = 0, *in = NULL, *out = NULL;

	*size = 0;
	*leader = -1;
	if (g == MPI_GROUP_NULL || PMPI_Group_size(g, &n) != MPI_SUCCESS)
		return;
	*size = n;
	if (n <= 0 || PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS)
		return;
	in = malloc((size_t)n * sizeof(int));
	out = malloc((size_t)n * sizeof(int));
	if (in && out) {
		for (int i = 0; i < n; i++)
			in[i] = i;
		if (PMPI_Group_translate_ranks(g, n, in, wg, out) == MPI_SUCCESS)
			for (int i = 0; i < n; i++)
				if (out[i] != MPI_UNDEFINED &&
				    (*leader < 0 || out[i] < *leader))
					*leader = out[i];
	}
	free(in);
	free(out);
	PMPI_Group_free(&wg);
}

/* The new group of a constructor that returned rc: id, size, leader. */
static void made_group(struct mw_call *c, int rc, const MPI_Group *newgroup,
		       int64_t *id, int64_t *size, int64_t *leader)
{
	*id = 0;
	*size = 0;
	*leader = -1;
	if (rc != MPI_SUCCESS || !newgroup)
		return;
	*id = group_added(*newgroup);
	if (c->on)
		group_shape(*newgroup, size, leader);
}

static int do_Comm_group(struct mw_call *c, MPI_Comm comm, MPI_Group *group)
{
	int rc = next_Comm_group(comm, group);
	int64_t id, size, leader;

	made_group(c, rc, group, &id, &size, &leader);
	proto_args_set(c->arg, mw_comm_id(comm, 0, NULL), id, size, leader, 0, 0);
	return rc;
}

/* Group_incl, _excl, _range_incl, _range_excl: group, newgroup, size,
 * leader, count */
static void subset_args(struct mw_call *c, int rc, MPI_Group group, int n,
			const MPI_Group *newgroup)
{
	int64_t id, size, leader;

	made_group(c, rc, newgroup, &id, &size, &leader);
	proto_args_set(c->arg, group_id(group), id, size, leader, n, 0);
}

static int do_Group_incl(struct mw_call *c, MPI_Group group, int n,
			 const int ranks[], MPI_Group *newgroup)
{
	int rc = next_Group_incl(group, n, ranks, newgroup);

	subset_args(c, rc, group, n, newgroup);
	return rc;
}

static int do_Group_excl(struct mw_call *c, MPI_Group group, int n,
			 const int ranks[], MPI_Group *newgroup)
{
	int rc = next_Group_excl(group, n, ranks, newgroup);

	subset_args(c, rc, group, n, newgroup);
	return rc;
}

static int do_Group_range_incl(struct mw_call *c, MPI_Group group, int n,
			       int ranges[][3], MPI_Group *newgroup)
{
	int rc = next_Group_range_incl(group, n, ranges, newgroup);

	subset_args(c, rc, group, n, newgroup);
	return rc;
}

static int do_Group_range_excl(struct mw_call *c, MPI_Group group, int n,
			       int ranges[][3], MPI_Group *newgroup)
{
	int rc = next_Group_range_excl(group, n, ranges, newgroup);

	subset_args(c, rc, group, n, newgroup);
	return rc;
}

/* Group_union, _intersection, _difference: group, group2, newgroup, size,
 * leader */
static void pair_args(struct mw_call *c, int rc, MPI_Group g1, MPI_Group g2,
		      const MPI_Group *newgroup)
{
	int64_t id, size, leader;

	made_group(c, rc, newgroup, &id, &size, &leader);
	proto_args_set(c->arg, group_id(g1), group_id(g2), id, size, leader, 0);
}

static int do_Group_union(struct mw_call *c, MPI_Group group1,
			  MPI_Group group2, MPI_Group *newgroup)
{
	int rc = next_Group_union(group1, group2, newgroup);

	pair_args(c, rc, group1, group2, newgroup);
	return rc;
}

static int do_Group_intersection(struct mw_call *c, MPI_Group group1,
				 MPI_Group group2, MPI_Group *newgroup)
{
	int rc = next_Group_intersection(group1, group2, newgroup);

	pair_args(c, rc, group1, group2, newgroup);
	return rc;
}

static int do_Group_difference(struct mw_call *c, MPI_Group group1,
			       MPI_Group group2, MPI_Group *newgroup)
{
	int rc = next_Group_difference(group1, group2, newgroup);

	pair_args(c, rc, group1, group2, newgroup);
	return rc;
}

static int do_Group_free(struct mw_call *c, MPI_Group *group)
{
	MPI_Group g = group ? *group : MPI_GROUP_NULL;
	int64_t id = group_id(g);
	int rc = next_Group_free(group);

	if (rc == MPI_SUCCESS && g != MPI_GROUP_NULL && g != MPI_GROUP_EMPTY)
		mw_ids_del(&groups, MW_KEY(g));
	proto_args_set(c->arg, id, 0, 0, 0, 0, 0);
	return rc;
}

/* ---- the exported wrappers --------------------------------------------- */

#include "sensor/mpi_gen.h"
