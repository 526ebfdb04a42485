/*
 * sensor/mpi_flavour.c - the MPI sensor stands down in a process of the
 * other MPI.
 *
 * Open MPI and MPICH share the MPI_ names but not their ABI (a
 * communicator is a pointer in one, an int in the other): the MPICH
 * sensor preloaded into a program linked with Open MPI (an mpirun.mpich
 * launching Debian's lmp) handed Open MPI's MPI_Init an MPICH world and
 * every rank died in MPI_Comm_rank. Nothing the wrappers can do at a call
 * is safe once the types disagree, so the check runs before anything is
 * traced: sn_init() calls sn_preinit() first (from this library's
 * constructor, or earlier from the first traced call another library's
 * constructor makes), which looks for the other implementation's marker
 * function in the process (Open MPI's ompi_mpi_init, MPICH's
 * MPIR_Err_create_code; this library's own MPI is always there, it links
 * it). Found: one warning line on stderr (whatever TAPESTRY_LOG says),
 * then the process executes itself again (/proc/self/exe, the same argv
 * from /proc/self/cmdline, fds and environment) with the libc sensor
 * (libtapestry-sensor.so, beside this library) in LD_PRELOAD in place of
 * this one: it runs traced for libc only, as one stream, and its MPI is
 * never touched by a wrapper; TAPESTRY_MPI_OTHER names the MPI for its
 * META (mpi_stood_down). Without the libc sensor beside it, the process
 * runs untraced.
 *
 * Not covered: an MPI opened later with dlopen (mpi4py), which no check
 * at start can see (docs/modules/sensor-mpi.md, "The other MPI").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "sensor/rt.h"

#ifdef OPEN_MPI
#define MY_NAME "Open MPI"
#define OTHER_NAME "MPICH"
#define OTHER_MARK "MPIR_Err_create_code"
#else
#define MY_NAME "MPICH"
#define OTHER_NAME "Open MPI"
#define OTHER_MARK "ompi_mpi_init"
#endif

#define LIBC_SENSOR "libtapestry-sensor.so"

/* The value of LD_PRELOAD with this library (self, a path) replaced by
 * the libc sensor of its directory, or dropped when there is none; into
 * out (cap bytes). Entries are separated by ':' or blanks, as ld.so
 * reads them. */
static void preload_without_me(const char *old, const char *self, char *out,
			       size_t cap)
{
	const char *slash = strrchr(self, '/');
	char libc[4096];
	size_t n = 0;

	snprintf(libc, sizeof(libc), "%.*s%s", slash ? (int)(slash - self + 1) : 0,
		 self, LIBC_SENSOR);
	if (access(libc, R_OK) != 0)
		libc[0] = 0;
	out[0] = 0;
	while (old && *old) {
		size_t len = strcspn(old, ": \t");
		const char *base = old, *p;
		const char *put = old;
		size_t putlen = len;

		for (p = old; p < old + len; p++)
			if (*p == '/')
				base = p + 1;
		if (len && !strncmp(base, "libtapestry-mpi-", 16)) {
			put = libc;
			putlen = strlen(libc);
		}
		if (putlen && n + putlen + 2 < cap) {
			if (n)
				out[n++] = ':';
			memcpy(out + n, put, putlen);
			n += putlen;
			out[n] = 0;
		}
		old += len;
		old += strspn(old, ": \t");
	}
}

/* The environment of the new image: env with LD_PRELOAD set to preload
 * and TAPESTRY_MPI_OTHER set (the libc sensor says the MPI sensor stood
 * down in its META). A malloc'd array, or NULL. */
static char **new_env(char **env, const char *preload, const char *other)
{
	size_t n = 0, k = 0;
	char **out, *pre, *oth;

	while (env && env[n])
		n++;
	out = malloc((n + 3) * sizeof(*out));
	pre = malloc(strlen(preload) + 12);
	oth = malloc(strlen(other) + 24);
	if (!out || !pre || !oth) {
		free(out);
		free(pre);
		free(oth);
		return NULL;
	}
	sprintf(pre, "LD_PRELOAD=%s", preload);
	sprintf(oth, "TAPESTRY_MPI_OTHER=%s", other);
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "LD_PRELOAD=", 11) &&
		    strncmp(env[i], "TAPESTRY_MPI_OTHER=", 19))
			out[k++] = env[i];
	if (*preload)
		out[k++] = pre;
	out[k++] = oth;
	out[k] = NULL;
	return out;
}

/* argv of this process from /proc/self/cmdline (NUL-separated): a
 * malloc'd array whose strings live in *buf, or NULL. */
static char **read_argv(char **buf)
{
	size_t cap = 1 << 16, n = 0, argc = 0;
	char *b = malloc(cap), **argv;
	FILE *f = fopen("/proc/self/cmdline", "re");

	*buf = b;
	if (!b || !f) {
		if (f)
			fclose(f);
		return NULL;
	}
	for (size_t r; (r = fread(b + n, 1, cap - n, f)) > 0; ) {
		char *nb;

		n += r;
		if (n < cap)
			break;
		if (cap >= (64u << 20) || !(nb = realloc(b, cap * 2)))
			break;
		*buf = b = nb;
		cap *= 2;
	}
	fclose(f);
	if (n == 0 || n >= cap)
		return NULL;
	b[n] = 0;
	for (size_t i = 0; i < n; i++)
		argc += b[i] == 0;
	if (!(argv = malloc((argc + 1) * sizeof(*argv))))
		return NULL;
	argc = 0;
	for (size_t i = 0; i < n; i += strlen(b + i) + 1)
		argv[argc++] = b + i;
	argv[argc] = NULL;
	return argv;
}

/* See sensor.h: the other MPI in the process -> exec again without this
 * sensor. Runs once; returns only when there is nothing to do or the
 * exec failed. */
void sn_preinit(void)
{
	static atomic_int done;
	static char preload[8192];
	void *mark;
	Dl_info self, lib;
	char **env, **argv, *argbuf = NULL;
	char line[1024];
	const char *libname = "?";
	int len;

	if (atomic_exchange(&done, 1))
		return;
	/* an image this already stood down for: never again (a copy of this
	 * library under another name, or one from /etc/ld.so.preload, stays
	 * in LD_PRELOAD and would exec forever) */
	if (getenv("TAPESTRY_MPI_OTHER"))
		return;
	mark = dlsym(RTLD_DEFAULT, OTHER_MARK);
	if (!mark || !dladdr((void *)sn_preinit, &self) || !self.dli_fname)
		return;
	if (dladdr(mark, &lib) && lib.dli_fname)
		libname = lib.dli_fname;
	preload_without_me(getenv("LD_PRELOAD"), self.dli_fname, preload,
			   sizeof(preload));
	len = snprintf(line, sizeof(line), "tapestry-sensor[%d] warning mpi: "
		       "this program uses %s (%s), not " MY_NAME ": the " MY_NAME
		       " sensor stands down, %s\n", (int)getpid(), OTHER_NAME,
		       libname, *preload ? "libc calls only are traced" :
		       "the program runs untraced (no " LIBC_SENSOR " beside it)");
	if (len > 0)
		(void)!write(STDERR_FILENO, line, (size_t)len < sizeof(line) ?
			     (size_t)len : sizeof(line) - 1);
	argv = read_argv(&argbuf);
	env = new_env(environ, preload, OTHER_NAME);
	if (argv && env)
		syscall(SYS_execve, "/proc/self/exe", argv, env);
	free(env);	/* the exec failed: nothing else to do but run on */
	free(argv);
	free(argbuf);
}
