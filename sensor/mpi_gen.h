/*
 * sensor/mpi_gen.h - the expansion of a wrapper table (not installed).
 *
 * A wrapper file (mpi_wrap.c for sensor/mpi.def, mpi_io.c, mpi_ext.c,
 * mpi_rma.c for theirs) defines MW_TABLE (the table's path, "sensor/xxx.def", in
 * the format of sensor/mpi.def) and includes this header twice: with
 * MW_GEN_NEXT defined, before its do_NAME() functions, for the next-function
 * pointers, their next_NAME() callers (which stamp mw_t_ret) and their
 * resolution at load; without it, after them, for the exported MPI_NAME
 * wrappers (prologue, do_NAME(), epilogue: see sensor/mpi_wrap.c).
 */
#ifdef MW_GEN_NEXT

#define MPI_CALL(name, ev, params, args) \
	static int (*ptr_##name) params = PMPI_##name; \
	static inline int next_##name params \
	{ \
		int rc_ = ptr_##name args; \
		mw_t_ret = sn_now(); \
		return rc_; \
	}
#include MW_TABLE
#undef MPI_CALL

__attribute__((constructor))
static void mw_gen_resolve(void)
{
	void *p;

#define MPI_CALL(name, ev, params, args) \
	p = dlsym(RTLD_NEXT, "MPI_" #name); \
	if (p && p != (void *)MPI_##name) \
		ptr_##name = (int (*) params)p;
#include MW_TABLE
#undef MPI_CALL
	(void)p;
}

#undef MW_GEN_NEXT
#else

#define MW_MORE(...) __VA_OPT__(,) __VA_ARGS__
#define MPI_CALL(name, ev, params, args) \
int MPI_##name params \
{ \
	struct mw_call c; \
	int rc; \
\
	mw_begin(&c, PROTO_EV_##ev); \
	rc = do_##name(&c MW_MORE args); \
	mw_end(&c, rc); \
	return rc; \
}
#include MW_TABLE
#undef MPI_CALL
#undef MW_MORE

#endif
