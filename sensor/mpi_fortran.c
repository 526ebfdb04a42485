/*
 * sensor/mpi_fortran.c - Fortran bindings of the MPI sensor (Open MPI).
 *
 * Open MPI's Fortran layer (libmpi_mpifh) calls PMPI_ directly, so a C
 * wrapper never sees a Fortran program's calls. We define the Fortran
 * symbols ourselves: mpi_send_ and its other manglings (mpi_send__,
 * mpi_send, MPI_SEND), plus ompi_send_f, the function Open MPI's mpi_f08
 * module calls. Each converts its handles (MPI_*_f2c), Fortran sentinels
 * (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE are addresses of common
 * blocks in libmpi) and 1-based indices, and calls our C wrapper, so C and
 * Fortran share one recording path.
 *
 * MPICH is not built with this file: its Fortran bindings call MPI_
 * through the PLT (nm -D libmpichfort.so: U MPI_Send), which the C
 * wrappers already catch.
 */
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(default)
#include <mpi.h>
/* Open MPI's Fortran sentinels (ompi/mpi/fortran/base/constants.h), gfortran
 * mangling: the only one libmpi.so exports here. */
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
extern int mpi_fortran_status_ignore_;
extern int mpi_fortran_statuses_ignore_;
extern int mpi_fortran_unweighted_;
extern int mpi_fortran_weights_empty_;
#pragma GCC visibility pop

#include "sensor/mpi_int.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is a C int");

/* INTEGER status(MPI_STATUS_SIZE): 6 in Open MPI 4 (mpif-config.h). */
#define F_STATUS_SIZE 6
_Static_assert(sizeof(MPI_Status) == F_STATUS_SIZE * sizeof(MPI_Fint),
	       "Open MPI Fortran status size");

#define SMALL 32
#define F_TRUE 1		/* gfortran .TRUE. */
#define F_FALSE 0

/* Declare fn_ (lc##_) and its aliases: lc__, lc, UC, ompi_<short>_f. */
#define F_ALIAS(target) \
	__attribute__((alias(target), visibility("default")))
#define FDECL(lc, UC, short, params) \
	__attribute__((visibility("default"))) void lc##_ params; \
	extern __typeof__(lc##_) lc##__ F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) lc F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) UC F_ALIAS(#lc "_"); \
	extern __typeof__(lc##_) ompi_##short##_f F_ALIAS(#lc "_");

/* ---- conversions ------------------------------------------------------- */

static void *fbuf(void *b)
{
	if (b == (void *)&mpi_fortran_in_place_)
		return MPI_IN_PLACE;
	if (b == (void *)&mpi_fortran_bottom_)
		return MPI_BOTTOM;
	return b;
}

/* A graph's weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are sentinels */
static const int *fweights(const MPI_Fint *w)
{
	if (w == (const MPI_Fint *)&mpi_fortran_unweighted_)
		return MPI_UNWEIGHTED;
	if (w == (const MPI_Fint *)&mpi_fortran_weights_empty_)
		return MPI_WEIGHTS_EMPTY;
	return w;
}

static int status_ignored(const MPI_Fint *f)
{
	return f == (const MPI_Fint *)&mpi_fortran_status_ignore_;
}

static int statuses_ignored(const MPI_Fint *f)
{
	return f == (const MPI_Fint *)&mpi_fortran_statuses_ignore_;
}

static void status_out(int rc, const MPI_Status *c, MPI_Fint *f)
{
	if (rc == MPI_SUCCESS && c != MPI_STATUS_IGNORE && !status_ignored(f))
		PMPI_Status_c2f(c, f);
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

/* A constructor's result: the new communicator's handle when it worked. */
static void set_newcomm(MPI_Fint *newcomm, MPI_Comm nc, int rc, MPI_Fint *ierr)
{
	if (rc == MPI_SUCCESS)
		*newcomm = PMPI_Comm_c2f(nc);
	set_ierr(ierr, rc);
}

/* C ints of n Fortran LOGICALs (gfortran: .TRUE. is 1), in small (SMALL
 * ints) or allocated; NULL when out of memory. Free with free_ints(). */
static int *c_logicals(const MPI_Fint *l, int n, int *small)
{
	int *p = n > SMALL ? malloc((size_t)n * sizeof(int)) : small;

	for (int i = 0; p && i < n; i++)
		p[i] = l[i] != F_FALSE;
	return p;
}

static void free_ints(int *p, const int *small)
{
	if (p != small)
		free(p);
}

/* C copies of n Fortran requests, in small or allocated (NULL: failed). */
static MPI_Request *reqs_f2c(const MPI_Fint *f, int n, MPI_Request *small)
{
	MPI_Request *c = small;
	int i;

	if (n < 0)
		return NULL;
	if (n > SMALL) {
		c = malloc((size_t)n * sizeof(*c));
		if (!c)
			return NULL;
	}
	for (i = 0; i < n; i++)
		c[i] = PMPI_Request_f2c(f[i]);
	return c;
}

/* ---- life and communicators -------------------------------------------- */

FDECL(mpi_init, MPI_INIT, init, (MPI_Fint *ierr))
void mpi_init_(MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Init(NULL, NULL));
}

FDECL(mpi_init_thread, MPI_INIT_THREAD, init_thread,
      (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0, rc = MPI_Init_thread(NULL, NULL, *required, &p);

	if (rc == MPI_SUCCESS)
		*provided = p;
	set_ierr(ierr, rc);
}

FDECL(mpi_finalize, MPI_FINALIZE, finalize, (MPI_Fint *ierr))
void mpi_finalize_(MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Finalize());
}

FDECL(mpi_comm_size, MPI_COMM_SIZE, comm_size,
      (MPI_Fint *comm, MPI_Fint *size, MPI_Fint *ierr))
void mpi_comm_size_(MPI_Fint *comm, MPI_Fint *size, MPI_Fint *ierr)
{
	int s = 0, rc = MPI_Comm_size(PMPI_Comm_f2c(*comm), &s);

	if (rc == MPI_SUCCESS)
		*size = s;
	set_ierr(ierr, rc);
}

FDECL(mpi_comm_rank, MPI_COMM_RANK, comm_rank,
      (MPI_Fint *comm, MPI_Fint *rank, MPI_Fint *ierr))
void mpi_comm_rank_(MPI_Fint *comm, MPI_Fint *rank, MPI_Fint *ierr)
{
	int r = 0, rc = MPI_Comm_rank(PMPI_Comm_f2c(*comm), &r);

	if (rc == MPI_SUCCESS)
		*rank = r;
	set_ierr(ierr, rc);
}

FDECL(mpi_comm_split, MPI_COMM_SPLIT, comm_split,
      (MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm,
       MPI_Fint *ierr))
void mpi_comm_split_(MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key,
		     MPI_Fint *newcomm, MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_split(PMPI_Comm_f2c(*comm), *color, *key, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_dup, MPI_COMM_DUP, comm_dup,
      (MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_comm_dup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_dup(PMPI_Comm_f2c(*comm), &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_create, MPI_COMM_CREATE, comm_create,
      (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_comm_create_(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm,
		      MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_create(PMPI_Comm_f2c(*comm), PMPI_Group_f2c(*group), &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, comm_split_type,
      (MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
       MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_comm_split_type_(MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key,
			  MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_split_type(PMPI_Comm_f2c(*comm), *split_type, *key,
				     PMPI_Info_f2c(*info), &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

/* periods and reorder are LOGICAL */
FDECL(mpi_cart_create, MPI_CART_CREATE, cart_create,
      (MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
       MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_cart_create_(MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims,
		      MPI_Fint *periods, MPI_Fint *reorder, MPI_Fint *newcomm,
		      MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int small[SMALL], *p = c_logicals(periods, *ndims > 0 ? *ndims : 0, small), rc;

	if (!p) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Cart_create(PMPI_Comm_f2c(*comm), *ndims, dims, p,
			     *reorder != F_FALSE, &nc);
	free_ints(p, small);
	set_newcomm(newcomm, nc, rc, ierr);
}

/* remain_dims is LOGICAL(ndims), ndims from the cartesian communicator */
FDECL(mpi_cart_sub, MPI_CART_SUB, cart_sub,
      (MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_cart_sub_(MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm,
		   MPI_Fint *ierr)
{
	MPI_Comm c = PMPI_Comm_f2c(*comm), nc = MPI_COMM_NULL;
	int n = 0, small[SMALL], *p, rc;

	if ((rc = PMPI_Cartdim_get(c, &n)) != MPI_SUCCESS) {
		set_ierr(ierr, rc);
		return;
	}
	if (!(p = c_logicals(remain_dims, n > 0 ? n : 0, small))) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Cart_sub(c, p, &nc);
	free_ints(p, small);
	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_idup, MPI_COMM_IDUP, comm_idup,
      (MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *req, MPI_Fint *ierr))
void mpi_comm_idup_(MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *req,
		    MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Comm_idup(PMPI_Comm_f2c(*comm), &nc, &r);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	set_newcomm(newcomm, nc, rc, ierr);
}

/* reorder is LOGICAL */
FDECL(mpi_graph_create, MPI_GRAPH_CREATE, graph_create,
      (MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index, MPI_Fint *edges,
       MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_graph_create_(MPI_Fint *comm, MPI_Fint *nnodes, MPI_Fint *index,
		       MPI_Fint *edges, MPI_Fint *reorder, MPI_Fint *newcomm,
		       MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Graph_create(PMPI_Comm_f2c(*comm), *nnodes, index, edges,
				  *reorder != F_FALSE, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE, dist_graph_create,
      (MPI_Fint *comm, MPI_Fint *n, MPI_Fint *sources, MPI_Fint *degrees,
       MPI_Fint *destinations, MPI_Fint *weights, MPI_Fint *info,
       MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_dist_graph_create_(MPI_Fint *comm, MPI_Fint *n, MPI_Fint *sources,
			    MPI_Fint *degrees, MPI_Fint *destinations,
			    MPI_Fint *weights, MPI_Fint *info,
			    MPI_Fint *reorder, MPI_Fint *newcomm,
			    MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Dist_graph_create(PMPI_Comm_f2c(*comm), *n, sources,
				       degrees, destinations, fweights(weights),
				       PMPI_Info_f2c(*info),
				       *reorder != F_FALSE, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT,
      dist_graph_create_adjacent,
      (MPI_Fint *comm, MPI_Fint *indegree, MPI_Fint *sources,
       MPI_Fint *sourceweights, MPI_Fint *outdegree, MPI_Fint *destinations,
       MPI_Fint *destweights, MPI_Fint *info, MPI_Fint *reorder,
       MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_dist_graph_create_adjacent_(MPI_Fint *comm, MPI_Fint *indegree,
				     MPI_Fint *sources, MPI_Fint *sourceweights,
				     MPI_Fint *outdegree,
				     MPI_Fint *destinations,
				     MPI_Fint *destweights, MPI_Fint *info,
				     MPI_Fint *reorder, MPI_Fint *newcomm,
				     MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Dist_graph_create_adjacent(PMPI_Comm_f2c(*comm), *indegree,
						sources, fweights(sourceweights),
						*outdegree, destinations,
						fweights(destweights),
						PMPI_Info_f2c(*info),
						*reorder != F_FALSE, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_create_group, MPI_COMM_CREATE_GROUP, comm_create_group,
      (MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag, MPI_Fint *newcomm,
       MPI_Fint *ierr))
void mpi_comm_create_group_(MPI_Fint *comm, MPI_Fint *group, MPI_Fint *tag,
			    MPI_Fint *newcomm, MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_create_group(PMPI_Comm_f2c(*comm),
				       PMPI_Group_f2c(*group), *tag, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_intercomm_create, MPI_INTERCOMM_CREATE, intercomm_create,
      (MPI_Fint *local_comm, MPI_Fint *local_leader, MPI_Fint *peer_comm,
       MPI_Fint *remote_leader, MPI_Fint *tag, MPI_Fint *newcomm,
       MPI_Fint *ierr))
void mpi_intercomm_create_(MPI_Fint *local_comm, MPI_Fint *local_leader,
			   MPI_Fint *peer_comm, MPI_Fint *remote_leader,
			   MPI_Fint *tag, MPI_Fint *newcomm, MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Intercomm_create(PMPI_Comm_f2c(*local_comm), *local_leader,
				      PMPI_Comm_f2c(*peer_comm), *remote_leader,
				      *tag, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

/* high is LOGICAL */
FDECL(mpi_intercomm_merge, MPI_INTERCOMM_MERGE, intercomm_merge,
      (MPI_Fint *comm, MPI_Fint *high, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_intercomm_merge_(MPI_Fint *comm, MPI_Fint *high, MPI_Fint *newcomm,
			  MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Intercomm_merge(PMPI_Comm_f2c(*comm), *high != F_FALSE, &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

/* info is converted and passed on; the C wrapper does not record it */
FDECL(mpi_comm_dup_with_info, MPI_COMM_DUP_WITH_INFO, comm_dup_with_info,
      (MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierr))
void mpi_comm_dup_with_info_(MPI_Fint *comm, MPI_Fint *info, MPI_Fint *newcomm,
			     MPI_Fint *ierr)
{
	MPI_Comm nc = MPI_COMM_NULL;
	int rc = MPI_Comm_dup_with_info(PMPI_Comm_f2c(*comm),
					PMPI_Info_f2c(*info), &nc);

	set_newcomm(newcomm, nc, rc, ierr);
}

FDECL(mpi_comm_free, MPI_COMM_FREE, comm_free,
      (MPI_Fint *comm, MPI_Fint *ierr))
void mpi_comm_free_(MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Comm c = PMPI_Comm_f2c(*comm);
	int rc = MPI_Comm_free(&c);

	if (rc == MPI_SUCCESS)
		*comm = PMPI_Comm_c2f(c);
	set_ierr(ierr, rc);
}

/* ---- point to point ---------------------------------------------------- */

#define F_SEND(lc, UC, short, Cname) \
FDECL(lc, UC, short, (void *buf, MPI_Fint *count, MPI_Fint *type, \
		      MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, \
		      MPI_Fint *ierr)) \
void lc##_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, \
	   MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *ierr) \
{ \
	set_ierr(ierr, Cname(fbuf(buf), *count, PMPI_Type_f2c(*type), *dest, \
			     *tag, PMPI_Comm_f2c(*comm))); \
}
F_SEND(mpi_send, MPI_SEND, send, MPI_Send)
F_SEND(mpi_ssend, MPI_SSEND, ssend, MPI_Ssend)
F_SEND(mpi_rsend, MPI_RSEND, rsend, MPI_Rsend)
F_SEND(mpi_bsend, MPI_BSEND, bsend, MPI_Bsend)

#define F_ISEND(lc, UC, short, Cname) \
FDECL(lc, UC, short, (void *buf, MPI_Fint *count, MPI_Fint *type, \
		      MPI_Fint *peer, MPI_Fint *tag, MPI_Fint *comm, \
		      MPI_Fint *req, MPI_Fint *ierr)) \
void lc##_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, \
	   MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) \
{ \
	MPI_Request r = MPI_REQUEST_NULL; \
	int rc = Cname(fbuf(buf), *count, PMPI_Type_f2c(*type), *peer, *tag, \
		       PMPI_Comm_f2c(*comm), &r); \
\
	if (rc == MPI_SUCCESS) \
		*req = PMPI_Request_c2f(r); \
	set_ierr(ierr, rc); \
}
F_ISEND(mpi_isend, MPI_ISEND, isend, MPI_Isend)
F_ISEND(mpi_issend, MPI_ISSEND, issend, MPI_Issend)
F_ISEND(mpi_ibsend, MPI_IBSEND, ibsend, MPI_Ibsend)
F_ISEND(mpi_irsend, MPI_IRSEND, irsend, MPI_Irsend)
F_ISEND(mpi_irecv, MPI_IRECV, irecv, MPI_Irecv)
/* the persistent requests' constructors have the same arguments */
F_ISEND(mpi_send_init, MPI_SEND_INIT, send_init, MPI_Send_init)
F_ISEND(mpi_bsend_init, MPI_BSEND_INIT, bsend_init, MPI_Bsend_init)
F_ISEND(mpi_ssend_init, MPI_SSEND_INIT, ssend_init, MPI_Ssend_init)
F_ISEND(mpi_rsend_init, MPI_RSEND_INIT, rsend_init, MPI_Rsend_init)
F_ISEND(mpi_recv_init, MPI_RECV_INIT, recv_init, MPI_Recv_init)

/* A call on one request that may change its handle (MPI_Start keeps it,
 * MPI_Request_free and MPI_Cancel set or keep it). */
#define F_REQ1(lc, UC, short, Cname) \
FDECL(lc, UC, short, (MPI_Fint *req, MPI_Fint *ierr)) \
void lc##_(MPI_Fint *req, MPI_Fint *ierr) \
{ \
	MPI_Request r = PMPI_Request_f2c(*req); \
	int rc = Cname(&r); \
\
	if (rc == MPI_SUCCESS) \
		*req = PMPI_Request_c2f(r); \
	set_ierr(ierr, rc); \
}
F_REQ1(mpi_start, MPI_START, start, MPI_Start)
F_REQ1(mpi_request_free, MPI_REQUEST_FREE, request_free, MPI_Request_free)
F_REQ1(mpi_cancel, MPI_CANCEL, cancel, MPI_Cancel)

FDECL(mpi_recv, MPI_RECV, recv,
      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source,
       MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr))
void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source,
	       MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_Recv(fbuf(buf), *count, PMPI_Type_f2c(*type), *source,
			  *tag, PMPI_Comm_f2c(*comm), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_sendrecv, MPI_SENDRECV, sendrecv,
      (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest,
       MPI_Fint *stag, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,
       MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status,
       MPI_Fint *ierr))
void mpi_sendrecv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype,
		   MPI_Fint *dest, MPI_Fint *stag, void *rbuf,
		   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source,
		   MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status,
		   MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_Sendrecv(fbuf(sbuf), *scount, PMPI_Type_f2c(*stype),
			      *dest, *stag, fbuf(rbuf), *rcount,
			      PMPI_Type_f2c(*rtype), *source, *rtag,
			      PMPI_Comm_f2c(*comm), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_wait, MPI_WAIT, wait,
      (MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr))
void mpi_wait_(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	MPI_Request r = PMPI_Request_f2c(*req);
	int rc = MPI_Wait(&r, st);

	if (rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_waitall, MPI_WAITALL, waitall,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr))
void mpi_waitall_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses,
		  MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr;
	MPI_Status ssmall[SMALL], *cs = MPI_STATUSES_IGNORE;
	int n = *count, i, rc;

	cr = reqs_f2c(reqs, n, small);
	if (!cr) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	if (!statuses_ignored(statuses)) {
		cs = n <= SMALL ? ssmall : malloc((size_t)n * sizeof(*cs));
		if (!cs) {
			if (cr != small)
				free(cr);
			set_ierr(ierr, MPI_ERR_NO_MEM);
			return;
		}
	}
	rc = MPI_Waitall(n, cr, cs);
	for (i = 0; i < n; i++) {
		reqs[i] = PMPI_Request_c2f(cr[i]);
		if (cs != MPI_STATUSES_IGNORE &&
		    (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS))
			PMPI_Status_c2f(&cs[i], &statuses[i * F_STATUS_SIZE]);
	}
	if (cs != MPI_STATUSES_IGNORE && cs != ssmall)
		free(cs);
	if (cr != small)
		free(cr);
	set_ierr(ierr, rc);
}

FDECL(mpi_waitany, MPI_WAITANY, waitany,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status,
       MPI_Fint *ierr))
void mpi_waitany_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index,
		  MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr;
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int n = *count, idx = MPI_UNDEFINED, rc;

	cr = reqs_f2c(reqs, n, small);
	if (!cr) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Waitany(n, cr, &idx, st);
	if (rc == MPI_SUCCESS) {
		if (idx >= 0 && idx < n) {
			reqs[idx] = PMPI_Request_c2f(cr[idx]);
			*index = idx + 1;
		} else {
			*index = idx;
		}
	}
	status_out(rc, st, status);
	if (cr != small)
		free(cr);
	set_ierr(ierr, rc);
}

FDECL(mpi_test, MPI_TEST, test,
      (MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr))
void mpi_test_(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status,
	       MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	MPI_Request r = PMPI_Request_f2c(*req);
	int f = 0, rc = MPI_Test(&r, &f, st);

	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		if (f) {
			*req = PMPI_Request_c2f(r);
			status_out(rc, st, status);
		}
	}
	set_ierr(ierr, rc);
}

/* Copy back the n handles the C call may have changed; free cr. */
static void reqs_back(MPI_Fint *reqs, MPI_Request *cr, int n,
		      const MPI_Request *small)
{
	for (int i = 0; i < n; i++)
		reqs[i] = PMPI_Request_c2f(cr[i]);
	if (cr != small)
		free(cr);
}

FDECL(mpi_startall, MPI_STARTALL, startall,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr))
void mpi_startall_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr = reqs_f2c(reqs, *count, small);
	int rc;

	if (!cr) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Startall(*count, cr);
	reqs_back(reqs, cr, *count, small);
	set_ierr(ierr, rc);
}

/* Waitsome and Testsome: 1-based indices, a status per completion. */
static void some_f(int (*fn)(int, MPI_Request[], int *, int[], MPI_Status[]),
		   MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
		   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr;
	MPI_Status ssmall[SMALL], *cs = MPI_STATUSES_IGNORE;
	int n = *count, out = 0, ismall[SMALL], *idx, rc;

	cr = reqs_f2c(reqs, n, small);
	idx = n > SMALL ? malloc((size_t)n * sizeof(int)) : ismall;
	if (!statuses_ignored(statuses) && n > 0)
		cs = n <= SMALL ? ssmall : malloc((size_t)n * sizeof(*cs));
	if (!cr || !idx || !cs) {
		rc = MPI_ERR_NO_MEM;
		goto out;
	}
	rc = fn(n, cr, &out, idx, cs);
	if (rc == MPI_SUCCESS) {
		*outcount = out;
		for (int k = 0; out != MPI_UNDEFINED && k < out; k++) {
			indices[k] = idx[k] + 1;
			if (cs != MPI_STATUSES_IGNORE)
				PMPI_Status_c2f(&cs[k], &statuses[k * F_STATUS_SIZE]);
		}
	}
out:
	if (cr)
		reqs_back(reqs, cr, n, small);
	if (idx && idx != ismall)
		free(idx);
	if (cs && cs != MPI_STATUSES_IGNORE && cs != ssmall)
		free(cs);
	set_ierr(ierr, rc);
}

FDECL(mpi_waitsome, MPI_WAITSOME, waitsome,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
       MPI_Fint *statuses, MPI_Fint *ierr))
void mpi_waitsome_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
		   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	some_f(MPI_Waitsome, count, reqs, outcount, indices, statuses, ierr);
}

FDECL(mpi_testsome, MPI_TESTSOME, testsome,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
       MPI_Fint *statuses, MPI_Fint *ierr))
void mpi_testsome_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
		   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	some_f(MPI_Testsome, count, reqs, outcount, indices, statuses, ierr);
}

FDECL(mpi_testall, MPI_TESTALL, testall,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *statuses,
       MPI_Fint *ierr))
void mpi_testall_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag,
		  MPI_Fint *statuses, MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr = reqs_f2c(reqs, *count, small);
	MPI_Status ssmall[SMALL], *cs = MPI_STATUSES_IGNORE;
	int n = *count, f = 0, rc;

	if (cr && !statuses_ignored(statuses) && n > 0)
		cs = n <= SMALL ? ssmall : malloc((size_t)n * sizeof(*cs));
	if (!cr || !cs) {
		if (cr)
			reqs_back(reqs, cr, n, small);
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Testall(n, cr, &f, cs);
	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		for (int i = 0; f && cs != MPI_STATUSES_IGNORE && i < n; i++)
			PMPI_Status_c2f(&cs[i], &statuses[i * F_STATUS_SIZE]);
	}
	reqs_back(reqs, cr, n, small);
	if (cs != MPI_STATUSES_IGNORE && cs != ssmall)
		free(cs);
	set_ierr(ierr, rc);
}

FDECL(mpi_testany, MPI_TESTANY, testany,
      (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_testany_(MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index,
		  MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request small[SMALL], *cr = reqs_f2c(reqs, *count, small);
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int n = *count, idx = MPI_UNDEFINED, f = 0, rc;

	if (!cr) {
		set_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Testany(n, cr, &idx, &f, st);
	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		*index = idx >= 0 && idx < n ? idx + 1 : idx;
		if (f)
			status_out(rc, st, status);
	}
	reqs_back(reqs, cr, n, small);
	set_ierr(ierr, rc);
}

FDECL(mpi_request_get_status, MPI_REQUEST_GET_STATUS, request_get_status,
      (MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr))
void mpi_request_get_status_(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status,
			     MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int f = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*req), &f, st);

	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		if (f)
			status_out(rc, st, status);
	}
	set_ierr(ierr, rc);
}

FDECL(mpi_test_cancelled, MPI_TEST_CANCELLED, test_cancelled,
      (MPI_Fint *status, MPI_Fint *flag, MPI_Fint *ierr))
void mpi_test_cancelled_(MPI_Fint *status, MPI_Fint *flag, MPI_Fint *ierr)
{
	MPI_Status cs;
	int f = 0, rc = PMPI_Status_f2c(status, &cs);

	if (rc == MPI_SUCCESS)
		rc = MPI_Test_cancelled(&cs, &f);
	if (rc == MPI_SUCCESS)
		*flag = f ? F_TRUE : F_FALSE;
	set_ierr(ierr, rc);
}

FDECL(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, sendrecv_replace,
      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest,
       MPI_Fint *stag, MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_sendrecv_replace_(void *buf, MPI_Fint *count, MPI_Fint *type,
			   MPI_Fint *dest, MPI_Fint *stag, MPI_Fint *source,
			   MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status,
			   MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_Sendrecv_replace(fbuf(buf), *count, PMPI_Type_f2c(*type),
				      *dest, *stag, *source, *rtag,
				      PMPI_Comm_f2c(*comm), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_mprobe, MPI_MPROBE, mprobe,
      (MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *msg,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_mprobe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
		 MPI_Fint *msg, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	MPI_Message m = MPI_MESSAGE_NULL;
	int rc = MPI_Mprobe(*source, *tag, PMPI_Comm_f2c(*comm), &m, st);

	if (rc == MPI_SUCCESS)
		*msg = PMPI_Message_c2f(m);
	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_improbe, MPI_IMPROBE, improbe,
      (MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
       MPI_Fint *msg, MPI_Fint *status, MPI_Fint *ierr))
void mpi_improbe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
		  MPI_Fint *flag, MPI_Fint *msg, MPI_Fint *status,
		  MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	MPI_Message m = MPI_MESSAGE_NULL;
	int f = 0, rc = MPI_Improbe(*source, *tag, PMPI_Comm_f2c(*comm), &f, &m, st);

	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		if (f) {
			*msg = PMPI_Message_c2f(m);
			status_out(rc, st, status);
		}
	}
	set_ierr(ierr, rc);
}

FDECL(mpi_mrecv, MPI_MRECV, mrecv,
      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *msg,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_mrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *msg,
		MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	MPI_Message m = PMPI_Message_f2c(*msg);
	int rc = MPI_Mrecv(fbuf(buf), *count, PMPI_Type_f2c(*type), &m, st);

	if (rc == MPI_SUCCESS)
		*msg = PMPI_Message_c2f(m);
	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_imrecv, MPI_IMRECV, imrecv,
      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *msg,
       MPI_Fint *req, MPI_Fint *ierr))
void mpi_imrecv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *msg,
		 MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Message m = PMPI_Message_f2c(*msg);
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Imrecv(fbuf(buf), *count, PMPI_Type_f2c(*type), &m, &r);

	if (rc == MPI_SUCCESS) {
		*msg = PMPI_Message_c2f(m);
		*req = PMPI_Request_c2f(r);
	}
	set_ierr(ierr, rc);
}

FDECL(mpi_probe, MPI_PROBE, probe,
      (MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status,
       MPI_Fint *ierr))
void mpi_probe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
		MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int rc = MPI_Probe(*source, *tag, PMPI_Comm_f2c(*comm), st);

	status_out(rc, st, status);
	set_ierr(ierr, rc);
}

FDECL(mpi_iprobe, MPI_IPROBE, iprobe,
      (MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *flag,
       MPI_Fint *status, MPI_Fint *ierr))
void mpi_iprobe_(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
		 MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status cs, *st = status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int f = 0, rc = MPI_Iprobe(*source, *tag, PMPI_Comm_f2c(*comm), &f, st);

	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		if (f)
			status_out(rc, st, status);
	}
	set_ierr(ierr, rc);
}

/* ---- collectives ------------------------------------------------------- */

FDECL(mpi_barrier, MPI_BARRIER, barrier, (MPI_Fint *comm, MPI_Fint *ierr))
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Barrier(PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_bcast, MPI_BCAST, bcast,
      (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root,
       MPI_Fint *comm, MPI_Fint *ierr))
void mpi_bcast_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root,
		MPI_Fint *comm, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Bcast(fbuf(buf), *count, PMPI_Type_f2c(*type),
				 *root, PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_reduce, MPI_REDUCE, reduce,
      (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
       MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr))
void mpi_reduce_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type,
		 MPI_Fint *op, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Reduce(fbuf(sbuf), fbuf(rbuf), *count,
				  PMPI_Type_f2c(*type), PMPI_Op_f2c(*op),
				  *root, PMPI_Comm_f2c(*comm)));
}

/* allreduce, scan and exscan share their Fortran signature */
#define F_ALLRED(lc, UC, short, Cname) \
FDECL(lc, UC, short, (void *sbuf, void *rbuf, MPI_Fint *count, \
		      MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, \
		      MPI_Fint *ierr)) \
void lc##_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, \
	   MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr) \
{ \
	set_ierr(ierr, Cname(fbuf(sbuf), fbuf(rbuf), *count, \
			     PMPI_Type_f2c(*type), PMPI_Op_f2c(*op), \
			     PMPI_Comm_f2c(*comm))); \
}
F_ALLRED(mpi_allreduce, MPI_ALLREDUCE, allreduce, MPI_Allreduce)
F_ALLRED(mpi_scan, MPI_SCAN, scan, MPI_Scan)
F_ALLRED(mpi_exscan, MPI_EXSCAN, exscan, MPI_Exscan)

/* gather and scatter share theirs */
#define F_ROOTED(lc, UC, short, Cname) \
FDECL(lc, UC, short, (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, \
		      void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)) \
void lc##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, \
	   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root, \
	   MPI_Fint *comm, MPI_Fint *ierr) \
{ \
	set_ierr(ierr, Cname(fbuf(sbuf), *scount, PMPI_Type_f2c(*stype), \
			     fbuf(rbuf), *rcount, PMPI_Type_f2c(*rtype), \
			     *root, PMPI_Comm_f2c(*comm))); \
}
F_ROOTED(mpi_gather, MPI_GATHER, gather, MPI_Gather)
F_ROOTED(mpi_scatter, MPI_SCATTER, scatter, MPI_Scatter)

/* allgather and alltoall share theirs */
#define F_ALLTO(lc, UC, short, Cname) \
FDECL(lc, UC, short, (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, \
		      void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, \
		      MPI_Fint *comm, MPI_Fint *ierr)) \
void lc##_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, \
	   MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *comm, \
	   MPI_Fint *ierr) \
{ \
	set_ierr(ierr, Cname(fbuf(sbuf), *scount, PMPI_Type_f2c(*stype), \
			     fbuf(rbuf), *rcount, PMPI_Type_f2c(*rtype), \
			     PMPI_Comm_f2c(*comm))); \
}
F_ALLTO(mpi_allgather, MPI_ALLGATHER, allgather, MPI_Allgather)
F_ALLTO(mpi_alltoall, MPI_ALLTOALL, alltoall, MPI_Alltoall)

FDECL(mpi_gatherv, MPI_GATHERV, gatherv,
      (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf,
       MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *root,
       MPI_Fint *comm, MPI_Fint *ierr))
void mpi_gatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf,
		  MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype,
		  MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Gatherv(fbuf(sbuf), *scount, PMPI_Type_f2c(*stype),
				   fbuf(rbuf), rcounts, displs,
				   PMPI_Type_f2c(*rtype), *root,
				   PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_scatterv, MPI_SCATTERV, scatterv,
      (void *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype,
       void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root,
       MPI_Fint *comm, MPI_Fint *ierr))
void mpi_scatterv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *displs,
		   MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
		   MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm,
		   MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Scatterv(fbuf(sbuf), scounts, displs,
				    PMPI_Type_f2c(*stype), fbuf(rbuf), *rcount,
				    PMPI_Type_f2c(*rtype), *root,
				    PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_allgatherv, MPI_ALLGATHERV, allgatherv,
      (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf,
       MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm,
       MPI_Fint *ierr))
void mpi_allgatherv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype,
		     void *rbuf, MPI_Fint *rcounts, MPI_Fint *displs,
		     MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Allgatherv(fbuf(sbuf), *scount,
				      PMPI_Type_f2c(*stype), fbuf(rbuf),
				      rcounts, displs, PMPI_Type_f2c(*rtype),
				      PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_alltoallv, MPI_ALLTOALLV, alltoallv,
      (void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype,
       void *rbuf, MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype,
       MPI_Fint *comm, MPI_Fint *ierr))
void mpi_alltoallv_(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls,
		    MPI_Fint *stype, void *rbuf, MPI_Fint *rcounts,
		    MPI_Fint *rdispls, MPI_Fint *rtype, MPI_Fint *comm,
		    MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Alltoallv(fbuf(sbuf), scounts, sdispls,
				     PMPI_Type_f2c(*stype), fbuf(rbuf),
				     rcounts, rdispls, PMPI_Type_f2c(*rtype),
				     PMPI_Comm_f2c(*comm)));
}

FDECL(mpi_reduce_scatter, MPI_REDUCE_SCATTER, reduce_scatter,
      (void *sbuf, void *rbuf, MPI_Fint *rcounts, MPI_Fint *type,
       MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr))
void mpi_reduce_scatter_(void *sbuf, void *rbuf, MPI_Fint *rcounts,
			 MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,
			 MPI_Fint *ierr)
{
	set_ierr(ierr, MPI_Reduce_scatter(fbuf(sbuf), fbuf(rbuf), rcounts,
					  PMPI_Type_f2c(*type),
					  PMPI_Op_f2c(*op),
					  PMPI_Comm_f2c(*comm)));
}
