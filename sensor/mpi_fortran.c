/*
 * sensor/mpi_fortran.c - the conversions of the MPI sensor's Fortran
 * bindings, and the bindings a rule cannot generate.
 *
 * Most bindings are generated from the wrapper tables (sensor/mpi*.def) by
 * sensor/mpi_fortran_gen.awk into sensor/mpi_fortran_gen.c; each converts
 * its handles (PMPI_*_f2c), Fortran sentinels (MPI_IN_PLACE, MPI_BOTTOM,
 * MPI_STATUS(ES)_IGNORE, MPI_UNWEIGHTED are addresses of objects of the
 * MPI's Fortran layer), strings and LOGICALs, and calls our C wrapper, so C
 * and Fortran share one recording path. Which names they define, for Open
 * MPI and for MPICH's mpi_f08: sensor/mpi_fortran.h. Written here: MPI_Init
 * and Init_thread (no argc/argv in Fortran), the cartesian constructors
 * (LOGICAL arrays), the calls on arrays of requests (1-based indices, an
 * array of statuses), MPI_Test_cancelled (a status read) and the w
 * collectives (arrays of datatypes: Alltoallw, Ialltoallw and their
 * neighbourhood forms; Open MPI only, MPICH's Fortran calls MPI_ for
 * them).
 */
#include "sensor/mpi_fortran.h"

#ifdef OPEN_MPI
/* Open MPI's Fortran sentinels (ompi/mpi/fortran/base/constants.h), gfortran
 * mangling: the only one libmpi.so exports here. */
#pragma GCC visibility push(default)
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
extern int mpi_fortran_status_ignore_;
extern int mpi_fortran_statuses_ignore_;
extern int mpi_fortran_unweighted_;
extern int mpi_fortran_weights_empty_;
#pragma GCC visibility pop
#define MF_IN_PLACE mpi_fortran_in_place_
#define MF_BOTTOM mpi_fortran_bottom_
#define MF_STATUS_IGNORE mpi_fortran_status_ignore_
#define MF_STATUSES_IGNORE mpi_fortran_statuses_ignore_
#define MF_UNWEIGHTED mpi_fortran_unweighted_
#define MF_WEIGHTS_EMPTY mpi_fortran_weights_empty_
#else
/* MPICH's mpi_f08 sentinels (libmpichfort, which a C program does not
 * load: weak references, their address is then 0, which no argument has);
 * mpi.h declares the first four. */
#pragma GCC visibility push(default)
extern int __mpi_f08_link_constants_MOD_mpi_unweighted;
extern int __mpi_f08_link_constants_MOD_mpi_weights_empty;
#pragma GCC visibility pop
#pragma weak MPIR_F08_MPI_IN_PLACE
#pragma weak MPIR_F08_MPI_BOTTOM
#pragma weak MPIR_F08_MPI_STATUS_IGNORE_OBJ
#pragma weak MPIR_F08_MPI_STATUSES_IGNORE_OBJ
#pragma weak __mpi_f08_link_constants_MOD_mpi_unweighted
#pragma weak __mpi_f08_link_constants_MOD_mpi_weights_empty
/* GCC 12 reads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as an array
 * of size 0 */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#define MF_IN_PLACE MPIR_F08_MPI_IN_PLACE
#define MF_BOTTOM MPIR_F08_MPI_BOTTOM
#define MF_STATUS_IGNORE MPIR_F08_MPI_STATUS_IGNORE_OBJ
#define MF_STATUSES_IGNORE MPIR_F08_MPI_STATUSES_IGNORE_OBJ
#define MF_UNWEIGHTED __mpi_f08_link_constants_MOD_mpi_unweighted
#define MF_WEIGHTS_EMPTY __mpi_f08_link_constants_MOD_mpi_weights_empty
#endif

/* ---- conversions ------------------------------------------------------- */

void *mf_buf(void *b)
{
	if (b == (void *)&MF_IN_PLACE)
		return MPI_IN_PLACE;
	if (b == (void *)&MF_BOTTOM)
		return MPI_BOTTOM;
	return b;
}

const int *mf_weights(const MPI_Fint *w)
{
	if (w == (const MPI_Fint *)(void *)&MF_UNWEIGHTED)
		return MPI_UNWEIGHTED;
	if (w == (const MPI_Fint *)(void *)&MF_WEIGHTS_EMPTY)
		return MPI_WEIGHTS_EMPTY;
	return w;
}

int mf_status_ignored(const MPI_Fint *f)
{
	return f == (const MPI_Fint *)(void *)&MF_STATUS_IGNORE;
}

int mf_statuses_ignored(const MPI_Fint *f)
{
	return f == (const MPI_Fint *)(void *)&MF_STATUSES_IGNORE;
}

void mf_status_out(const MPI_Status *c, MPI_Fint *f)
{
	if (c == MPI_STATUS_IGNORE || mf_status_ignored(f))
		return;
#ifdef OPEN_MPI
	PMPI_Status_c2f(c, f);
#else
	memcpy(f, c, sizeof(*c));
#endif
}

int mf_status_in(const MPI_Fint *f, MPI_Status *c)
{
#ifdef OPEN_MPI
	return PMPI_Status_f2c(f, c);
#else
	memcpy(c, f, sizeof(*c));
	return MPI_SUCCESS;
#endif
}

void mf_ierr(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

char *mf_string(const char *f, int len)
{
	char *s;

	if (len < 0)
		len = 0;
	while (len > 0 && f[len - 1] == ' ')
		len--;
	if ((s = malloc((size_t)len + 1))) {
		memcpy(s, f, (size_t)len);
		s[len] = '\0';
	}
	return s;
}

/* C ints of n Fortran LOGICALs (gfortran: .TRUE. is 1), in small (MF_SMALL
 * ints) or allocated; NULL when out of memory. Free with free_ints(). */
static int *c_logicals(const MPI_Fint *l, int n, int *small)
{
	int *p = n > MF_SMALL ? malloc((size_t)n * sizeof(int)) : small;

	for (int i = 0; p && i < n; i++)
		p[i] = l[i] != F_FALSE;
	return p;
}

static void free_ints(int *p, const int *small)
{
	if (p != small)
		free(p);
}

/* A constructor's result: the new communicator's handle when it worked. */
static void set_newcomm(MPI_Fint *newcomm, MPI_Comm nc, int rc, MPI_Fint *ierr)
{
	if (rc == MPI_SUCCESS)
		*newcomm = PMPI_Comm_c2f(nc);
	mf_ierr(ierr, rc);
}

/* C copies of n Fortran requests, in small or allocated (NULL: failed). */
static MPI_Request *reqs_f2c(const MPI_Fint *f, int n, MPI_Request *small)
{
	MPI_Request *c = small;
	int i;

	if (n < 0)
		return NULL;
	if (n > MF_SMALL) {
		c = malloc((size_t)n * sizeof(*c));
		if (!c)
			return NULL;
	}
	for (i = 0; i < n; i++)
		c[i] = PMPI_Request_f2c(f[i]);
	return c;
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

/* *cs: C statuses for n Fortran ones, MPI_STATUSES_IGNORE (NULL in Open
 * MPI) when they are ignored or n is 0, else small or allocated; 0 when
 * out of memory. */
static int statuses_for(const MPI_Fint *f, int n, MPI_Status *small,
			MPI_Status **cs)
{
	*cs = MPI_STATUSES_IGNORE;
	if (mf_statuses_ignored(f) || n <= 0)
		return 1;
	*cs = n <= MF_SMALL ? small : malloc((size_t)n * sizeof(MPI_Status));
	return *cs != NULL;
}

static void free_statuses(MPI_Status *cs, const MPI_Status *small)
{
	if (cs != MPI_STATUSES_IGNORE && cs != small)
		free(cs);
}

/* Write the n C statuses cs (unless ignored) to the Fortran array f. */
static void statuses_out(const MPI_Status *cs, int n, MPI_Fint *f)
{
	for (int i = 0; cs != MPI_STATUSES_IGNORE && i < n; i++)
		mf_status_out(&cs[i], &f[i * MF_STATUS_INTS]);
}

/* ---- life and cartesian communicators ------------------------------------ */

F_BIND(mpi_init, MPI_INIT, init, (MPI_Fint *ierr))
{
	mf_ierr(ierr, MPI_Init(NULL, NULL));
}

F_BIND(mpi_init_thread, MPI_INIT_THREAD, init_thread,
       (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
{
	int p = 0, rc = MPI_Init_thread(NULL, NULL, *required, &p);

	if (rc == MPI_SUCCESS)
		*provided = p;
	mf_ierr(ierr, rc);
}

/* periods and reorder are LOGICAL */
F_BIND(mpi_cart_create, MPI_CART_CREATE, cart_create,
       (MPI_Fint *comm, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
	MPI_Fint *reorder, MPI_Fint *newcomm, MPI_Fint *ierr))
{
	MPI_Comm nc = MPI_COMM_NULL;
	int small[MF_SMALL] = { 0 }, rc;	/* (GCC 12 sees it unset) */
	int *p = c_logicals(periods, *ndims > 0 ? *ndims : 0, small);

	if (!p) {
		mf_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Cart_create(PMPI_Comm_f2c(*comm), *ndims, dims, p,
			     *reorder != F_FALSE, &nc);
	free_ints(p, small);
	set_newcomm(newcomm, nc, rc, ierr);
}

/* remain_dims is LOGICAL(ndims), ndims from the cartesian communicator */
F_BIND(mpi_cart_sub, MPI_CART_SUB, cart_sub,
       (MPI_Fint *comm, MPI_Fint *remain_dims, MPI_Fint *newcomm,
	MPI_Fint *ierr))
{
	MPI_Comm c = PMPI_Comm_f2c(*comm), nc = MPI_COMM_NULL;
	int n = 0, small[MF_SMALL], *p, rc;

	if ((rc = PMPI_Cartdim_get(c, &n)) != MPI_SUCCESS) {
		mf_ierr(ierr, rc);
		return;
	}
	if (!(p = c_logicals(remain_dims, n > 0 ? n : 0, small))) {
		mf_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Cart_sub(c, p, &nc);
	free_ints(p, small);
	set_newcomm(newcomm, nc, rc, ierr);
}

/* ---- arrays of requests -------------------------------------------------- */

F_BIND(mpi_waitall, MPI_WAITALL, waitall,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr))
{
	MPI_Request small[MF_SMALL], *cr;
	MPI_Status ssmall[MF_SMALL], *cs;
	int n = *count, rc = MPI_ERR_NO_MEM;

	cr = reqs_f2c(reqs, n, small);
	if (statuses_for(statuses, n, ssmall, &cs) && cr) {
		rc = MPI_Waitall(n, cr, cs);
		if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
			statuses_out(cs, n, statuses);
	}
	if (cr)
		reqs_back(reqs, cr, n, small);
	free_statuses(cs, ssmall);
	mf_ierr(ierr, rc);
}

/* A completed request's 1-based index (MPI_UNDEFINED stays). */
static MPI_Fint index_out(int idx, int n)
{
	return idx >= 0 && idx < n ? idx + 1 : idx;
}

F_BIND(mpi_waitany, MPI_WAITANY, waitany,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status,
	MPI_Fint *ierr))
{
	MPI_Request small[MF_SMALL], *cr;
	MPI_Status cs, *st = mf_status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int n = *count, idx = MPI_UNDEFINED, rc;

	cr = reqs_f2c(reqs, n, small);
	if (!cr) {
		mf_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Waitany(n, cr, &idx, st);
	if (rc == MPI_SUCCESS) {
		*index = index_out(idx, n);
		mf_status_out(st, status);
	}
	reqs_back(reqs, cr, n, small);
	mf_ierr(ierr, rc);
}

F_BIND(mpi_testany, MPI_TESTANY, testany,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
	MPI_Fint *status, MPI_Fint *ierr))
{
	MPI_Request small[MF_SMALL], *cr = reqs_f2c(reqs, *count, small);
	MPI_Status cs, *st = mf_status_ignored(status) ? MPI_STATUS_IGNORE : &cs;
	int n = *count, idx = MPI_UNDEFINED, f = 0, rc;

	if (!cr) {
		mf_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Testany(n, cr, &idx, &f, st);
	if (rc == MPI_SUCCESS) {
		*flag = f ? F_TRUE : F_FALSE;
		*index = index_out(idx, n);
		if (f)
			mf_status_out(st, status);
	}
	reqs_back(reqs, cr, n, small);
	mf_ierr(ierr, rc);
}

F_BIND(mpi_startall, MPI_STARTALL, startall,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *ierr))
{
	MPI_Request small[MF_SMALL], *cr = reqs_f2c(reqs, *count, small);
	int rc;

	if (!cr) {
		mf_ierr(ierr, MPI_ERR_NO_MEM);
		return;
	}
	rc = MPI_Startall(*count, cr);
	reqs_back(reqs, cr, *count, small);
	mf_ierr(ierr, rc);
}

/* Waitsome and Testsome: 1-based indices, a status per completion. */
static void some_f(int (*fn)(int, MPI_Request[], int *, int[], MPI_Status[]),
		   MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount,
		   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	MPI_Request small[MF_SMALL], *cr;
	MPI_Status ssmall[MF_SMALL], *cs;
	int n = *count, out = 0, ismall[MF_SMALL], *idx, rc = MPI_ERR_NO_MEM;

	cr = reqs_f2c(reqs, n, small);
	idx = n > MF_SMALL ? malloc((size_t)n * sizeof(int)) : ismall;
	if (statuses_for(statuses, n, ssmall, &cs) && cr && idx) {
		rc = fn(n, cr, &out, idx, cs);
		if (rc == MPI_SUCCESS) {
			*outcount = out;
			for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
				indices[k] = idx[k] + 1;
			if (out != MPI_UNDEFINED)
				statuses_out(cs, out, statuses);
		}
	}
	if (cr)
		reqs_back(reqs, cr, n, small);
	if (idx && idx != ismall)
		free(idx);
	free_statuses(cs, ssmall);
	mf_ierr(ierr, rc);
}

F_BIND(mpi_waitsome, MPI_WAITSOME, waitsome,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
	MPI_Fint *statuses, MPI_Fint *ierr))
{
	some_f(MPI_Waitsome, count, reqs, outcount, indices, statuses, ierr);
}

F_BIND(mpi_testsome, MPI_TESTSOME, testsome,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
	MPI_Fint *statuses, MPI_Fint *ierr))
{
	some_f(MPI_Testsome, count, reqs, outcount, indices, statuses, ierr);
}

F_BIND(mpi_testall, MPI_TESTALL, testall,
       (MPI_Fint *count, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *statuses,
	MPI_Fint *ierr))
{
	MPI_Request small[MF_SMALL], *cr = reqs_f2c(reqs, *count, small);
	MPI_Status ssmall[MF_SMALL], *cs;
	int n = *count, f = 0, rc = MPI_ERR_NO_MEM;

	if (statuses_for(statuses, n, ssmall, &cs) && cr) {
		rc = MPI_Testall(n, cr, &f, cs);
		if (rc == MPI_SUCCESS) {
			*flag = f ? F_TRUE : F_FALSE;
			if (f)
				statuses_out(cs, n, statuses);
		}
	}
	if (cr)
		reqs_back(reqs, cr, n, small);
	free_statuses(cs, ssmall);
	mf_ierr(ierr, rc);
}

F_BIND(mpi_test_cancelled, MPI_TEST_CANCELLED, test_cancelled,
       (MPI_Fint *status, MPI_Fint *flag, MPI_Fint *ierr))
{
	MPI_Status cs;
	int f = 0, rc = mf_status_in(status, &cs);

	if (rc == MPI_SUCCESS)
		rc = MPI_Test_cancelled(&cs, &f);
	if (rc == MPI_SUCCESS)
		*flag = f ? F_TRUE : F_FALSE;
	mf_ierr(ierr, rc);
}

/* A string the call writes (datarep, of datarep_len characters): the C
 * result copied into it, padded with blanks. */
F_BIND(mpi_file_get_view, MPI_FILE_GET_VIEW, file_get_view,
       (MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype,
	char *datarep, MPI_Fint *ierr, int datarep_len))
{
	MPI_Datatype et = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
	char rep[MPI_MAX_DATAREP_STRING + 1] = "";
	int rc = MPI_File_get_view(PMPI_File_f2c(*fh), disp, &et, &ft, rep);

	if (rc == MPI_SUCCESS) {
		size_t n = strnlen(rep, sizeof(rep) - 1);

		*etype = PMPI_Type_c2f(et);
		*filetype = PMPI_Type_c2f(ft);
		for (int i = 0; i < datarep_len; i++)
			datarep[i] = (size_t)i < n ? rep[i] : ' ';
	}
	mf_ierr(ierr, rc);
}

#if F_CHOICE_BUFFERS
/* Open MPI's Fortran (mpif.h, use mpi, mpi_f08 alike) detaches into an
 * address of its own and writes only the size: the buffer's address means
 * nothing to a Fortran caller, and buffer_addr may be smaller than one.
 * MPICH's mpi_f08 passes a TYPE(C_PTR) there: no binding of ours (its
 * mpi_buffer_detach_f08_ goes untraced; tests/sensor/mpi_fortran_syms.sh). */
F_BIND(mpi_buffer_detach, MPI_BUFFER_DETACH, buffer_detach,
       (void *buffer_addr, MPI_Fint *size, MPI_Fint *ierr))
{
	void *addr = NULL;
	int n = 0, rc = MPI_Buffer_detach(&addr, &n);

	(void)buffer_addr;
	if (rc == MPI_SUCCESS)
		*size = n;
	mf_ierr(ierr, rc);
}
#endif

/* ---- arrays of datatypes: the w collectives ------------------------------ */

#if F_CHOICE_BUFFERS
/* The C datatypes of a w collective's two sides, converted from Fortran:
 * s has ns (sent to each rank or out-neighbour), r nr (received from each
 * rank or in-neighbour); in small arrays or allocated. With MPI_IN_PLACE
 * the send side is ignored by MPI (and its array may be short): r stands
 * for it. Open MPI's own bindings free such arrays when the call returns,
 * nonblocking or not: its schedule keeps the types. */
struct w_types {
	MPI_Datatype ss[MF_SMALL], rs[MF_SMALL], *s, *r;
};

static MPI_Datatype *types_f2c(const MPI_Fint *f, int n, MPI_Datatype *small)
{
	MPI_Datatype *c = n > MF_SMALL ? malloc((size_t)n * sizeof(*c)) : small;

	for (int i = 0; c && i < n; i++)
		c[i] = PMPI_Type_f2c(f[i]);
	return c;
}

/* The peers of each side: the ranks (the remote group's of an
 * intercommunicator) or, nbr, the topology's out- and in-neighbours. */
static int w_peers(MPI_Comm comm, int nbr, int *ns, int *nr)
{
	int topo, weighted, inter = 0, rc;

	if (nbr)
		return mw_nbr_degrees(comm, &topo, nr, ns, &weighted) ?
		       MPI_ERR_TOPOLOGY : MPI_SUCCESS;
	rc = PMPI_Comm_test_inter(comm, &inter);
	if (rc == MPI_SUCCESS)
		rc = (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, ns);
	*nr = *ns;
	return rc;
}

static int w_types_in(struct w_types *w, MPI_Comm comm, int nbr,
		      const void *sbuf, const MPI_Fint *st, const MPI_Fint *rt)
{
	int ns = 0, nr = 0, rc = w_peers(comm, nbr, &ns, &nr);

	w->s = w->r = NULL;
	if (rc != MPI_SUCCESS)
		return rc;
	if (ns < 0 || nr < 0)
		return MPI_ERR_COMM;
	w->r = types_f2c(rt, nr, w->rs);
	w->s = sbuf == MPI_IN_PLACE ? w->r : types_f2c(st, ns, w->ss);
	return w->r && w->s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void w_types_free(struct w_types *w)
{
	if (w->s && w->s != w->ss && w->s != w->r)
		free(w->s);
	if (w->r && w->r != w->rs)
		free(w->r);
}

/* Start one of the four w calls with the converted types w, by nbr (the
 * neighbourhood form, whose displacements are MPI_Aint) and r (NULL: the
 * blocking form). */
static int w_start(int nbr, MPI_Request *r, const struct w_types *w,
		   void *sbuf, MPI_Fint *scounts, const void *sdispls,
		   void *rbuf, MPI_Fint *rcounts, const void *rdispls,
		   MPI_Comm c)
{
	sbuf = mf_buf(sbuf);
	rbuf = mf_buf(rbuf);
	if (nbr && r)
		return MPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, w->s, rbuf,
					       rcounts, rdispls, w->r, c, r);
	if (nbr)
		return MPI_Neighbor_alltoallw(sbuf, scounts, sdispls, w->s, rbuf,
					      rcounts, rdispls, w->r, c);
	if (r)
		return MPI_Ialltoallw(sbuf, scounts, sdispls, w->s, rbuf,
				      rcounts, rdispls, w->r, c, r);
	return MPI_Alltoallw(sbuf, scounts, sdispls, w->s, rbuf, rcounts,
			     rdispls, w->r, c);
}

/* A w binding: its types converted, the call, the Fortran request (req,
 * NULL for a blocking form) set when it worked. */
static void w_call(int nbr, MPI_Fint *req, void *sbuf, MPI_Fint *scounts,
		   const void *sdispls, MPI_Fint *stypes, void *rbuf,
		   MPI_Fint *rcounts, const void *rdispls, MPI_Fint *rtypes,
		   MPI_Fint *comm, MPI_Fint *ierr)
{
	MPI_Comm c = PMPI_Comm_f2c(*comm);
	MPI_Request r = MPI_REQUEST_NULL;
	struct w_types w;
	int rc = w_types_in(&w, c, nbr, mf_buf(sbuf), stypes, rtypes);

	if (rc == MPI_SUCCESS)
		rc = w_start(nbr, req ? &r : NULL, &w, sbuf, scounts, sdispls,
			     rbuf, rcounts, rdispls, c);
	w_types_free(&w);
	if (req && rc == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
	mf_ierr(ierr, rc);
}

/* W_BIND(lc, UC, short, nbr, DISP[, req]): the binding of a w call whose
 * displacements are DISP (INTEGER, or INTEGER(MPI_ADDRESS_KIND) for the
 * neighbourhood forms), with a request argument when req is given (the
 * compound literal's first element: req, else NULL). */
#define W_BIND(lc, UC, short, nbr, DISP, ...) \
F_BIND(lc, UC, short, \
       (void *sbuf, MPI_Fint *scounts, DISP *sdispls, MPI_Fint *stypes, \
	void *rbuf, MPI_Fint *rcounts, DISP *rdispls, MPI_Fint *rtypes, \
	MPI_Fint *comm, __VA_OPT__(MPI_Fint *__VA_ARGS__,) MPI_Fint *ierr)) \
{ \
	w_call(nbr, (MPI_Fint *[]){__VA_OPT__(__VA_ARGS__,) NULL}[0], sbuf, \
	       scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, \
	       ierr); \
}
W_BIND(mpi_alltoallw, MPI_ALLTOALLW, alltoallw, 0, MPI_Fint)
W_BIND(mpi_ialltoallw, MPI_IALLTOALLW, ialltoallw, 0, MPI_Fint, req)
W_BIND(mpi_neighbor_alltoallw, MPI_NEIGHBOR_ALLTOALLW, neighbor_alltoallw, 1,
       MPI_Aint)
W_BIND(mpi_ineighbor_alltoallw, MPI_INEIGHBOR_ALLTOALLW, ineighbor_alltoallw,
       1, MPI_Aint, req)
#endif
