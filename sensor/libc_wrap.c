/*
 * sensor/libc_wrap.c - the libc sensor: wrappers of the calls in libc.def.
 *
 * The table is expanded into the real-function pointers (sn_real), their
 * dlsym(RTLD_NEXT) resolution (once, lazily, under a recursive mutex, so a
 * wrapper works even when another library's constructor calls it before
 * ours ran) and the GEN wrapper bodies. A body: resolve if needed, enter
 * the tracer (reentrancy guard), stamp, call the real function, save
 * errno, stamp, record through an ordinary ev_<name>() function, leave,
 * restore errno, return the real result untouched. CUSTOM bodies follow
 * the same steps by hand.
 *
 * A program that closes (or dup2s onto) one of the runtime's own
 * descriptors gets what it would get untraced: the runtime's descriptor is
 * moved out of the way first (sn_own_evict, rt_fd.c), then the real call
 * runs.
 */
#include "config.h"

#undef _FORTIFY_SOURCE
/* glibc's inline getc_unlocked, putc_unlocked, getchar, getline...
 * (bits/stdio.h, with optimisation) would clash with their wrappers */
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include <aio.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/event.h"
#include "sensor/libc.h"
#include "sensor/maptab.h"
#include "sensor/rt.h"

#define SN_EXPORT __attribute__((visibility("default")))

/* glibc's fortified read and open/openat, not declared without
 * _FORTIFY_SOURCE */
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
/* glibc's old names of getc and putc and its fortified printf, not
 * declared without libio.h or _FORTIFY_SOURCE */
int _IO_getc(FILE *f);
int _IO_putc(int ch, FILE *f);
int __printf_chk(int flag, const char *fmt, ...);
/* glibc's fortified fread, fgets, pread and its stat ABI before 2.33,
 * exported but no longer declared */
size_t __fread_chk(void *ptr, size_t bufsize, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *ptr, size_t bufsize, size_t size, size_t n,
			    FILE *f);
char *__fgets_chk(char *s, size_t bufsize, int size, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t bufsize, int size, FILE *f);
ssize_t __pread_chk(int fd, void *buf, size_t count, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset,
		      size_t buflen);
int __xstat(int ver, const char *path, struct stat *sb);
int __xstat64(int ver, const char *path, struct stat64 *sb);
int __lxstat(int ver, const char *path, struct stat *sb);
int __lxstat64(int ver, const char *path, struct stat64 *sb);
int __fxstat(int ver, int fd, struct stat *sb);
int __fxstat64(int ver, int fd, struct stat64 *sb);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *sb, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *sb,
		 int flags);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
#define SN_ARGS(...) __VA_ARGS__
/* ", args" or nothing for a call without arguments (getchar) */
#define SN_COMMA_ARGS(...) __VA_OPT__(,) __VA_ARGS__

/* ---- real functions and their resolution ------------------------------- */

struct sn_libc_real {
#define SN_CALL(kind, ret, name, params, args) ret (*name) params;
#include "sensor/libc.def"
#undef SN_CALL
};

static struct sn_libc_real sn_real;

static const struct {
	const char *name;
	size_t off;
} resolve_tab[] = {
#define SN_CALL(kind, ret, name, params, args)                               \
	{#name, offsetof(struct sn_libc_real, name)},
#include "sensor/libc.def"
#undef SN_CALL
};

static pthread_mutex_t resolve_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static _Atomic int resolved;

/* Resolve every real function with dlsym(RTLD_NEXT). Thread-safe,
 * idempotent. Every symbol of libc.def exists in glibc >= 2.11; the
 * fallbacks that matter (__vfprintf_chk) are checked where used. */
void sn_libc_resolve(void)
{
	int saved;

	if (atomic_load_explicit(&resolved, memory_order_acquire))
		return;
	saved = errno;
	pthread_mutex_lock(&resolve_mu);
	if (!atomic_load_explicit(&resolved, memory_order_relaxed)) {
		for (size_t i = 0; i < sizeof(resolve_tab) / sizeof(resolve_tab[0]);
		     i++) {
			void *p = dlsym(RTLD_NEXT, resolve_tab[i].name);

			memcpy((char *)&sn_real + resolve_tab[i].off, &p,
			       sizeof(p));
		}
		atomic_store_explicit(&resolved, 1, memory_order_release);
	}
	pthread_mutex_unlock(&resolve_mu);
	errno = saved;
}

/* ---- the common steps of a wrapper -------------------------------------- */

struct sn_call {
	int on;
	int err;
	uint64_t t0, t1;
	struct proto_event *e;	/* RW wrappers: the slot filled before */
	int kept;		/* exec_pre: the exec cannot start, the
				 * stream goes on untouched */
};

/* The guard taken (c->on) unless the call is not to be traced. */
static inline void call_enter(struct sn_call *c, int have_real)
{
	if (SN_UNLIKELY(!have_real))
		sn_libc_resolve();
	if (SN_LIKELY(atomic_load_explicit(&sn_clk.libc_hot,
					   memory_order_relaxed))) {
		c->on = !sn_tls.guard;
		sn_tls.guard = 1;
		return;
	}
	c->on = sn_enter_fast();
	if (c->on && SN_UNLIKELY(!sn_cfg.sens_libc)) {
		sn_leave_fast();
		c->on = 0;
	}
}

static inline void call_begin(struct sn_call *c, int have_real)
{
	call_enter(c, have_real);
	if (c->on)
		c->t0 = sn_stamp_fast();
}

static inline void call_end(struct sn_call *c)
{
	if (c->on)
		c->t1 = sn_stamp_fast();
	c->err = errno;
}

static inline void call_done(struct sn_call *c)
{
	if (c->on)
		sn_leave_fast();
	errno = c->err;
}

static inline void rec(const struct sn_call *c, uint16_t type, int failed,
		       int64_t a0, int64_t a1, int64_t a2, int64_t a3,
		       int64_t a4, int64_t a5)
{
	struct proto_event *e = sn_slot_fast();

	if (SN_UNLIKELY(!e))
		return;
	e->t_start = c->t0;
	e->t_end = c->t1;
	e->type = type;
	e->flags = SN_EVF_STAMP | (failed ? PROTO_EVF_FAILED : 0);
	proto_ev_set_args(e, a0, a1, a2, a3, a4, a5);
	sn_commit_fast(e);
}

#define ERR_IF(c, failed) ((failed) ? (int64_t)(c)->err : 0)

static int64_t path_id(const char *path)
{
	if (!path)
		return 0;
	return sn_string(path, strnlen(path, PROTO_STRING_MAX));
}

/* The string id of path made absolute against dirfd (AT_FDCWD: the
 * working directory), see sn_path_abs; an absolute path as given. */
static int64_t path_id_at(int dirfd, const char *path)
{
	char abs[PROTO_STRING_MAX + 1];
	size_t n;

	if (!path)
		return 0;
	n = sn_path_abs(dirfd, path, abs, sizeof(abs));
	if (!n)
		return path_id(path);
	return sn_string(abs, n);
}

/* The id of path (dirfd as path_id_at), and remember it as a directory's
 * (a later openat relative to it finds it without a system call). */
static int64_t dir_id_at(int dirfd, const char *path)
{
	char abs[PROTO_STRING_MAX + 1];
	size_t n;
	int64_t id;

	if (!path)
		return 0;
	n = sn_path_abs(dirfd, path, abs, sizeof(abs));
	if (!n) {
		n = strnlen(path, PROTO_STRING_MAX);
		memcpy(abs, path, n);
		abs[n] = 0;
	}
	id = sn_string(abs, n);
	sn_dir_remember(id, abs, n);
	return id;
}

/* The descriptor of a stream, read from the FILE itself (fileno_unlocked
 * is a call without glibc's inline functions). */
static int stream_fd(FILE *f)
{
	return f ? f->_fileno : -1;
}

static int64_t peer_id(const struct sockaddr *sa, socklen_t len)
{
	char b[160], ip[INET6_ADDRSTRLEN];
	int n = 0;

	if (!sa || len < sizeof(sa_family_t))
		return 0;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (len < sizeof(*in) || !inet_ntop(AF_INET, &in->sin_addr, ip,
						    sizeof(ip)))
			return 0;
		n = snprintf(b, sizeof(b), "%s:%u", ip, ntohs(in->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 =
			(const struct sockaddr_in6 *)sa;

		if (len < sizeof(*in6) || !inet_ntop(AF_INET6, &in6->sin6_addr,
						     ip, sizeof(ip)))
			return 0;
		n = snprintf(b, sizeof(b), "[%s]:%u", ip,
			     ntohs(in6->sin6_port));
		break;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
		size_t pl = len - offsetof(struct sockaddr_un, sun_path);

		if (len <= offsetof(struct sockaddr_un, sun_path))
			n = snprintf(b, sizeof(b), "unix:");
		else if (un->sun_path[0] == 0)
			n = snprintf(b, sizeof(b), "unix:@%.*s", (int)pl - 1,
				     un->sun_path + 1);
		else
			n = snprintf(b, sizeof(b), "unix:%.*s", (int)pl,
				     un->sun_path);
		break;
	}
	default:
		n = snprintf(b, sizeof(b), "family:%d", sa->sa_family);
		break;
	}
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(b))
		n = (int)sizeof(b) - 1;
	return sn_string(b, strnlen(b, (size_t)n));
}

/* ---- event functions of the GEN wrappers ---------------------------------- */

/* The read/write family (RW wrappers): the record is taken and filled
 * before the call with all that does not depend on its result (type, fd,
 * bytes asked, path, offset, tid, start stamp), so that after the call only
 * the end stamp, the result, errno and the commit remain. The slot is only
 * a pointer until sn_commit_fast() moves the head: a call that never
 * returns (a handler's longjmp) leaves it unused. Nothing else writes this
 * thread's ring in between: the guard is set, so neither the call's own
 * libc calls nor a signal handler's (fatal_handler checks the guard) are
 * recorded, and these event functions emit no STRING record. */
static inline void pre_rw(struct sn_call *c, uint16_t type, int fd, size_t n,
			  int64_t off)
{
	struct proto_event *e = sn_slot_fast();

	c->e = e;
	if (SN_UNLIKELY(!e))
		return;
	e->type = type;
	e->arg[0] = fd;
	e->arg[1] = (int64_t)n;
	e->arg[3] = sn_fd_path_fast(fd);
	e->arg[5] = off;
	sn_prefetch_ahead(sn_tls.thr);
}

static inline void post_rw(const struct sn_call *c, ssize_t r)
{
	struct proto_event *e = c->e;

	if (SN_UNLIKELY(!e))
		return;
	e->t_start = c->t0;
	e->t_end = c->t1;
	e->flags = SN_EVF_STAMP | (r < 0 ? PROTO_EVF_FAILED : 0);
	e->arg[2] = r;
	e->arg[4] = SN_UNLIKELY(r < 0) ? errno : 0;
	sn_commit_pf(e, 0);
}

static void ev_fdpath(const struct sn_call *c, uint16_t type, int fd, int64_t r)
{
	rec(c, type, r < 0, fd, r, sn_fd_path_fast(fd), ERR_IF(c, r < 0), 0, 0);
}

static inline void pre_read(struct sn_call *c, int fd, void *buf, size_t n)
{
	pre_rw(c, PROTO_EV_READ, fd, n, -1);
}

static inline void pre___read_chk(struct sn_call *c, int fd, void *buf,
				  size_t n, size_t buflen)
{
	pre_rw(c, PROTO_EV_READ, fd, n, -1);
}

static inline void pre_write(struct sn_call *c, int fd, const void *buf,
			     size_t n)
{
	pre_rw(c, PROTO_EV_WRITE, fd, n, -1);
}

static inline void pre_pread(struct sn_call *c, int fd, void *buf, size_t n,
			     off_t off)
{
	pre_rw(c, PROTO_EV_PREAD, fd, n, off);
}

static inline void pre_pread64(struct sn_call *c, int fd, void *buf, size_t n,
			       off64_t off)
{
	pre_rw(c, PROTO_EV_PREAD, fd, n, off);
}

static inline void pre___pread_chk(struct sn_call *c, int fd, void *buf,
				   size_t n, off_t off, size_t buflen)
{
	pre_rw(c, PROTO_EV_PREAD, fd, n, off);
}

static inline void pre___pread64_chk(struct sn_call *c, int fd, void *buf,
				     size_t n, off64_t off, size_t buflen)
{
	pre_rw(c, PROTO_EV_PREAD, fd, n, off);
}

static inline void pre_pwrite(struct sn_call *c, int fd, const void *buf,
			      size_t n, off_t off)
{
	pre_rw(c, PROTO_EV_PWRITE, fd, n, off);
}

static inline void pre_pwrite64(struct sn_call *c, int fd, const void *buf,
				size_t n, off64_t off)
{
	pre_rw(c, PROTO_EV_PWRITE, fd, n, off);
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t s = 0;

	if (!iov || n <= 0 || n > 1024)
		return 0;
	for (int i = 0; i < n; i++)
		s += iov[i].iov_len;
	return s;
}

static inline void ev_readv(const struct sn_call *c, ssize_t r, int fd,
			    const struct iovec *iov, int n)
{
	rec(c, PROTO_EV_READV, r < 0, fd, (int64_t)iov_bytes(iov, n), r,
	    sn_fd_path_fast(fd), ERR_IF(c, r < 0), n);
}

static inline void ev_writev(const struct sn_call *c, ssize_t r, int fd,
			     const struct iovec *iov, int n)
{
	rec(c, PROTO_EV_WRITEV, r < 0, fd, (int64_t)iov_bytes(iov, n), r,
	    sn_fd_path_fast(fd), ERR_IF(c, r < 0), n);
}

static inline void ev_preadv(const struct sn_call *c, ssize_t r, int fd,
			     const struct iovec *iov, int n, off_t off)
{
	ev_readv(c, r, fd, iov, n);
}

static inline void ev_preadv64(const struct sn_call *c, ssize_t r, int fd,
			       const struct iovec *iov, int n, off64_t off)
{
	ev_readv(c, r, fd, iov, n);
}

static inline void ev_preadv2(const struct sn_call *c, ssize_t r, int fd,
			      const struct iovec *iov, int n, off_t off, int fl)
{
	ev_readv(c, r, fd, iov, n);
}

static inline void ev_preadv64v2(const struct sn_call *c, ssize_t r, int fd,
				 const struct iovec *iov, int n, off64_t off,
				 int fl)
{
	ev_readv(c, r, fd, iov, n);
}

static inline void ev_pwritev(const struct sn_call *c, ssize_t r, int fd,
			      const struct iovec *iov, int n, off_t off)
{
	ev_writev(c, r, fd, iov, n);
}

static inline void ev_pwritev64(const struct sn_call *c, ssize_t r, int fd,
				const struct iovec *iov, int n, off64_t off)
{
	ev_writev(c, r, fd, iov, n);
}

static inline void ev_pwritev2(const struct sn_call *c, ssize_t r, int fd,
			       const struct iovec *iov, int n, off_t off, int fl)
{
	ev_writev(c, r, fd, iov, n);
}

static inline void ev_pwritev64v2(const struct sn_call *c, ssize_t r, int fd,
				  const struct iovec *iov, int n, off64_t off,
				  int fl)
{
	ev_writev(c, r, fd, iov, n);
}

static inline void ev_lseek(const struct sn_call *c, off_t r, int fd,
			    off_t off, int whence)
{
	rec(c, PROTO_EV_LSEEK, r < 0, fd, off, whence, r, sn_fd_path_fast(fd),
	    ERR_IF(c, r < 0));
}

static inline void ev_lseek64(const struct sn_call *c, off64_t r, int fd,
			      off64_t off, int whence)
{
	rec(c, PROTO_EV_LSEEK, r < 0, fd, off, whence, r, sn_fd_path_fast(fd),
	    ERR_IF(c, r < 0));
}

static inline void ev_fsync(const struct sn_call *c, int r, int fd)
{
	ev_fdpath(c, PROTO_EV_FSYNC, fd, r);
}

static inline void ev_fdatasync(const struct sn_call *c, int r, int fd)
{
	ev_fdpath(c, PROTO_EV_FDATASYNC, fd, r);
}

static inline void ev_dup(const struct sn_call *c, int r, int fd)
{
	int64_t p = sn_fd_path_fast(fd);

	if (r >= 0)
		sn_fd_set(r, p);
	rec(c, PROTO_EV_DUP, r < 0, fd, r, p, ERR_IF(c, r < 0), 0, 0);
}

/* open and openat, all their variants (open_common, openat_common and
 * the fortified __open*_2, whose mode is 0: they take none): the path is
 * remembered for the new descriptor, so that its reads and writes carry
 * it. */
static void ev_open_any(const struct sn_call *c, int r, const char *path,
			int flags, int mode)
{
	int64_t p = (flags & O_DIRECTORY) ? dir_id_at(AT_FDCWD, path)
					  : path_id_at(AT_FDCWD, path);

	if (r >= 0)
		sn_fd_set(r, p);
	rec(c, PROTO_EV_OPEN, r < 0, r, flags, mode, p, ERR_IF(c, r < 0), 0);
}

static void ev_openat_any(const struct sn_call *c, int r, int dirfd,
			  const char *path, int flags, int mode)
{
	int64_t p = (flags & O_DIRECTORY) ? dir_id_at(dirfd, path)
					  : path_id_at(dirfd, path);

	if (r >= 0)
		sn_fd_set(r, p);
	rec(c, PROTO_EV_OPENAT, r < 0, r, dirfd, flags, p, ERR_IF(c, r < 0),
	    mode);
}

static inline void ev___open_2(const struct sn_call *c, int r,
			       const char *path, int flags)
{
	ev_open_any(c, r, path, flags, 0);
}

static inline void ev___open64_2(const struct sn_call *c, int r,
				 const char *path, int flags)
{
	ev_open_any(c, r, path, flags, 0);
}

static inline void ev___openat_2(const struct sn_call *c, int r, int dirfd,
				 const char *path, int flags)
{
	ev_openat_any(c, r, dirfd, path, flags, 0);
}

static inline void ev___openat64_2(const struct sn_call *c, int r, int dirfd,
				   const char *path, int flags)
{
	ev_openat_any(c, r, dirfd, path, flags, 0);
}

static void ev_creat_any(const struct sn_call *c, int r, const char *path,
			 mode_t mode)
{
	int64_t p = path_id_at(AT_FDCWD, path);

	if (r >= 0)
		sn_fd_set(r, p);
	rec(c, PROTO_EV_CREAT, r < 0, r, mode, p, ERR_IF(c, r < 0), 0, 0);
}

static inline void ev_creat(const struct sn_call *c, int r, const char *path,
			    mode_t mode)
{
	ev_creat_any(c, r, path, mode);
}

static inline void ev_creat64(const struct sn_call *c, int r, const char *path,
			      mode_t mode)
{
	ev_creat_any(c, r, path, mode);
}

static void ev_fopen_any(const struct sn_call *c, FILE *r, const char *path)
{
	int64_t p = path_id_at(AT_FDCWD, path);
	int fd = stream_fd(r);

	if (fd >= 0)
		sn_fd_set(fd, p);
	rec(c, PROTO_EV_FOPEN, !r, fd, p, ERR_IF(c, !r), 0, 0, 0);
}

static inline void ev_fopen(const struct sn_call *c, FILE *r, const char *path,
			    const char *mode)
{
	ev_fopen_any(c, r, path);
}

static inline void ev_fopen64(const struct sn_call *c, FILE *r,
			      const char *path, const char *mode)
{
	ev_fopen_any(c, r, path);
}

static inline void ev_fdopen(const struct sn_call *c, FILE *r, int fd,
			     const char *mode)
{
	rec(c, PROTO_EV_FDOPEN, !r, fd, sn_fd_path_fast(fd), ERR_IF(c, !r), 0, 0, 0);
}

/* ---- runs of small stdio calls ----------------------------------------------
 *
 * A program that moves its data a line or a character at a time through
 * stdio (sort's output, fwrite_unlocked per line; getc loops) makes
 * millions of calls that each stay in the stream's buffer: a record each
 * cost more than the calls (bench/stdio_sort.sh). Consecutive successful
 * calls of one type on one stream, each moving at most RUN_SMALL bytes,
 * are kept as one record, the run (count: its calls; bytes: their sum;
 * result: the last one's; t_start the first's start, t_end the last's
 * end), as Darshan's counters keep them. The run lives in the thread's
 * sn_thread (SN_PEND_RUN) and enters the ring before the thread's next
 * record of any kind (sn_slot_slow), at the thread's end (thread_gone),
 * or when it reaches RUN_MAX_CALLS calls or spans RUN_SPAN stamps: its
 * bytes are never lost, only the single calls' times. A failed call or a
 * large one is recorded alone (count 1). */
#define RUN_SMALL 4096
#define RUN_MAX_CALLS 65536
#define RUN_SPAN (1ull << 24)	/* stamps: 5-16 ms of TSC ticks, 16 ms of ns */

static void stdio_rec(const struct sn_call *c, uint16_t type, int failed,
		      FILE *f, int64_t bytes, int64_t r)
{
	struct sn_thread *t = sn_tls.thr;
	struct proto_event *e;
	int fd;

	if (SN_LIKELY(t && !failed && bytes <= RUN_SMALL) && sn_run_enter(t)) {
		e = &t->run;
		if ((t->drop_pending & SN_PEND_RUN) && t->run_key == f &&
		    e->type == type && e->arg[5] < RUN_MAX_CALLS &&
		    c->t1 - e->t_start < RUN_SPAN) {
			e->t_end = c->t1;
			e->arg[1] += bytes;
			e->arg[2] = r;
			e->arg[5]++;
			t->run_in += c->t1 - c->t0;
			sn_run_leave(t);
			return;
		}
		/* a section lost while waiting for room: this call alone */
		if (!sn_run_flush(t))
			goto alone;
		fd = stream_fd(f);
		e->t_start = c->t0;
		e->t_end = c->t1;
		e->type = type;
		e->flags = SN_EVF_STAMP;
		e->tid = t->tid;
		proto_ev_set_args(e, fd, bytes, r, sn_fd_path_fast(fd), 0, 1);
		t->run_in = c->t1 - c->t0;
		t->run_key = f;
		t->drop_pending |= SN_PEND_RUN;
		sn_run_leave(t);
		return;
	}
alone:
	fd = stream_fd(f);
	rec(c, type, failed, fd, bytes, r, sn_fd_path_fast(fd), ERR_IF(c, failed),
	    1);
}

/* The stdio calls that move data: bytes is what moved (a run, or count 1) */
static void ev_stdio(const struct sn_call *c, uint16_t type, int failed,
		     FILE *f, int64_t bytes, int64_t r)
{
	stdio_rec(c, type, failed, f, bytes, r);
}

/* The error indicator of a stream (ferror_unlocked is a call without
 * glibc's inline functions). */
static int stream_err(FILE *f)
{
	return f && (f->_flags & 0x20);	/* _IO_ERR_SEEN */
}

static inline void ev_fread(const struct sn_call *c, size_t r, void *p,
			    size_t size, size_t n, FILE *f)
{
	ev_stdio(c, PROTO_EV_FREAD, r < n && stream_err(f), f,
		 (int64_t)(size * r), (int64_t)r);
}

static inline void ev_fwrite(const struct sn_call *c, size_t r, const void *p,
			     size_t size, size_t n, FILE *f)
{
	ev_stdio(c, PROTO_EV_FWRITE, r < n, f, (int64_t)(size * r), (int64_t)r);
}

static inline void ev_vfprintf(const struct sn_call *c, int r, FILE *f,
			       const char *fmt, va_list ap)
{
	ev_stdio(c, PROTO_EV_VFPRINTF, r < 0, f, r > 0 ? r : 0, r);
}

static inline void ev___vfprintf_chk(const struct sn_call *c, int r, FILE *f,
				     int flag, const char *fmt, va_list ap)
{
	ev_stdio(c, PROTO_EV_VFPRINTF, r < 0, f, r > 0 ? r : 0, r);
}

static inline void ev_fputs(const struct sn_call *c, int r, const char *s,
			    FILE *f)
{
	ev_stdio(c, PROTO_EV_FPUTS, r < 0, f, r >= 0 && s ? (int64_t)strlen(s) : 0,
		 r);
}

static inline void ev_fgets(const struct sn_call *c, char *r, char *s,
			    int size, FILE *f)
{
	int64_t n = r ? (int64_t)strlen(r) : -1;

	ev_stdio(c, PROTO_EV_FGETS, !r && stream_err(f), f, n > 0 ? n : 0, n);
}

static inline void ev_fflush(const struct sn_call *c, int r, FILE *f)
{
	int fd = stream_fd(f);

	rec(c, PROTO_EV_FFLUSH, r != 0, fd, r, sn_fd_path_fast(fd),
	    ERR_IF(c, r != 0), 0, 0);
}

static inline void ev_fseek(const struct sn_call *c, int r, FILE *f,
			    long off, int whence)
{
	int fd = stream_fd(f);

	rec(c, PROTO_EV_FSEEK, r != 0, fd, off, whence, r, sn_fd_path_fast(fd),
	    ERR_IF(c, r != 0));
}

static inline void ev_fseeko(const struct sn_call *c, int r, FILE *f,
			     off_t off, int whence)
{
	ev_fseek(c, r, f, (long)off, whence);
}

static inline void ev_fseeko64(const struct sn_call *c, int r, FILE *f,
			       off64_t off, int whence)
{
	ev_fseek(c, r, f, (long)off, whence);
}

/* ---- the rest of stdio (issue 31): bytes is what moved ---------------- */

static inline void ev___fread_chk(const struct sn_call *c, size_t r, void *p,
				  size_t bufsize, size_t size, size_t n, FILE *f)
{
	ev_fread(c, r, p, size, n, f);
}

static inline void ev___fread_unlocked_chk(const struct sn_call *c, size_t r,
					   void *p, size_t bufsize, size_t size,
					   size_t n, FILE *f)
{
	ev_fread(c, r, p, size, n, f);
}

static inline void ev___fgets_chk(const struct sn_call *c, char *r, char *s,
				  size_t bufsize, int size, FILE *f)
{
	ev_fgets(c, r, s, size, f);
}

static inline void ev___fgets_unlocked_chk(const struct sn_call *c, char *r,
					   char *s, size_t bufsize, int size,
					   FILE *f)
{
	ev_fgets(c, r, s, size, f);
}

static inline void ev_fread_unlocked(const struct sn_call *c, size_t r,
				     void *p, size_t size, size_t n, FILE *f)
{
	ev_fread(c, r, p, size, n, f);
}

static inline void ev_fwrite_unlocked(const struct sn_call *c, size_t r,
				      const void *p, size_t size, size_t n,
				      FILE *f)
{
	ev_fwrite(c, r, p, size, n, f);
}

static inline void ev_fputs_unlocked(const struct sn_call *c, int r,
				     const char *s, FILE *f)
{
	ev_fputs(c, r, s, f);
}

static inline void ev_fgets_unlocked(const struct sn_call *c, char *r, char *s,
				     int size, FILE *f)
{
	ev_fgets(c, r, s, size, f);
}

static inline void ev_fflush_unlocked(const struct sn_call *c, int r, FILE *f)
{
	ev_fflush(c, r, f);
}

/* A character read: EOF is a failure only with the stream's error set. */
static void ev_getc_any(const struct sn_call *c, int r, FILE *f)
{
	int failed = r == EOF && stream_err(f);

	ev_stdio(c, PROTO_EV_FGETC, failed, f, r != EOF, r);
}

/* A character written (__overflow(f, EOF) only flushes: 0 bytes). */
static void ev_putc_any(const struct sn_call *c, int r, int ch, FILE *f)
{
	ev_stdio(c, PROTO_EV_FPUTC, r == EOF && ch != EOF, f,
		  r != EOF && ch != EOF, r);
}

static inline void ev_fgetc(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev_getc(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev__IO_getc(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev_fgetc_unlocked(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev_getc_unlocked(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev___uflow(const struct sn_call *c, int r, FILE *f)
{
	ev_getc_any(c, r, f);
}

static inline void ev_getchar(const struct sn_call *c, int r)
{
	ev_getc_any(c, r, stdin);
}

static inline void ev_getchar_unlocked(const struct sn_call *c, int r)
{
	ev_getc_any(c, r, stdin);
}

static inline void ev_fputc(const struct sn_call *c, int r, int ch, FILE *f)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev_putc(const struct sn_call *c, int r, int ch, FILE *f)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev__IO_putc(const struct sn_call *c, int r, int ch, FILE *f)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev_fputc_unlocked(const struct sn_call *c, int r, int ch,
				     FILE *f)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev_putc_unlocked(const struct sn_call *c, int r, int ch,
				    FILE *f)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev___overflow(const struct sn_call *c, int r, FILE *f,
				 int ch)
{
	ev_putc_any(c, r, ch, f);
}

static inline void ev_putchar(const struct sn_call *c, int r, int ch)
{
	ev_putc_any(c, r, ch, stdout);
}

static inline void ev_putchar_unlocked(const struct sn_call *c, int r, int ch)
{
	ev_putc_any(c, r, ch, stdout);
}

/* getline, getdelim: -1 at the end of the file (a failure only with the
 * stream's error set) */
static void ev_getdelim_any(const struct sn_call *c, ssize_t r, FILE *f)
{
	ev_stdio(c, PROTO_EV_GETDELIM, r < 0 && stream_err(f), f,
		  r > 0 ? r : 0, r);
}

static inline void ev_getline(const struct sn_call *c, ssize_t r, char **line,
			      size_t *n, FILE *f)
{
	ev_getdelim_any(c, r, f);
}

static inline void ev_getdelim(const struct sn_call *c, ssize_t r, char **line,
			       size_t *n, int delim, FILE *f)
{
	ev_getdelim_any(c, r, f);
}

static inline void ev___getdelim(const struct sn_call *c, ssize_t r,
				 char **line, size_t *n, int delim, FILE *f)
{
	ev_getdelim_any(c, r, f);
}

static void ev_printf_any(const struct sn_call *c, int r)
{
	ev_stdio(c, PROTO_EV_PRINTF, r < 0, stdout, r > 0 ? r : 0, r);
}

static inline void ev_vprintf(const struct sn_call *c, int r, const char *fmt,
			      va_list ap)
{
	ev_printf_any(c, r);
}

static inline void ev___vprintf_chk(const struct sn_call *c, int r, int flag,
				    const char *fmt, va_list ap)
{
	ev_printf_any(c, r);
}

static inline void ev_puts(const struct sn_call *c, int r, const char *s)
{
	ev_stdio(c, PROTO_EV_PUTS, r == EOF, stdout,
		  r != EOF && s ? (int64_t)strlen(s) + 1 : 0, r);
}

/* ---- file metadata ----------------------------------------------------- */

/* a path relative to dirfd, or dirfd's own with AT_EMPTY_PATH and "" */
static int64_t at_path(int dirfd, const char *path, int flags)
{
	if (path && !path[0] && (flags & AT_EMPTY_PATH))
		return sn_fd_path_fast(dirfd);
	return path_id_at(dirfd, path);
}

static void ev_stat_any(const struct sn_call *c, uint16_t type, int r, int fd,
			int64_t p, int64_t size, int flags)
{
	rec(c, type, r != 0, fd, p, r, ERR_IF(c, r != 0), r == 0 ? size : -1,
	    flags);
}

static inline void ev_stat(const struct sn_call *c, int r, const char *path,
			   struct stat *sb)
{
	ev_stat_any(c, PROTO_EV_STAT, r, AT_FDCWD, path_id_at(AT_FDCWD, path),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_stat64(const struct sn_call *c, int r, const char *path,
			     struct stat64 *sb)
{
	ev_stat_any(c, PROTO_EV_STAT, r, AT_FDCWD, path_id_at(AT_FDCWD, path),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_lstat(const struct sn_call *c, int r, const char *path,
			    struct stat *sb)
{
	ev_stat_any(c, PROTO_EV_LSTAT, r, AT_FDCWD, path_id_at(AT_FDCWD, path),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_lstat64(const struct sn_call *c, int r, const char *path,
			      struct stat64 *sb)
{
	ev_stat_any(c, PROTO_EV_LSTAT, r, AT_FDCWD, path_id_at(AT_FDCWD, path),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_fstat(const struct sn_call *c, int r, int fd,
			    struct stat *sb)
{
	ev_stat_any(c, PROTO_EV_FSTAT, r, fd, sn_fd_path_fast(fd),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_fstat64(const struct sn_call *c, int r, int fd,
			      struct stat64 *sb)
{
	ev_stat_any(c, PROTO_EV_FSTAT, r, fd, sn_fd_path_fast(fd),
		    r == 0 && sb ? sb->st_size : -1, 0);
}

static inline void ev_fstatat(const struct sn_call *c, int r, int dirfd,
			      const char *path, struct stat *sb, int flags)
{
	ev_stat_any(c, PROTO_EV_FSTATAT, r, dirfd, at_path(dirfd, path, flags),
		    r == 0 && sb ? sb->st_size : -1, flags);
}

static inline void ev_fstatat64(const struct sn_call *c, int r, int dirfd,
				const char *path, struct stat64 *sb, int flags)
{
	ev_stat_any(c, PROTO_EV_FSTATAT, r, dirfd, at_path(dirfd, path, flags),
		    r == 0 && sb ? sb->st_size : -1, flags);
}

static inline void ev___xstat(const struct sn_call *c, int r, int ver,
			      const char *path, struct stat *sb)
{
	ev_stat(c, r, path, sb);
}

static inline void ev___xstat64(const struct sn_call *c, int r, int ver,
				const char *path, struct stat64 *sb)
{
	ev_stat64(c, r, path, sb);
}

static inline void ev___lxstat(const struct sn_call *c, int r, int ver,
			       const char *path, struct stat *sb)
{
	ev_lstat(c, r, path, sb);
}

static inline void ev___lxstat64(const struct sn_call *c, int r, int ver,
				 const char *path, struct stat64 *sb)
{
	ev_lstat64(c, r, path, sb);
}

static inline void ev___fxstat(const struct sn_call *c, int r, int ver, int fd,
			       struct stat *sb)
{
	ev_fstat(c, r, fd, sb);
}

static inline void ev___fxstat64(const struct sn_call *c, int r, int ver,
				 int fd, struct stat64 *sb)
{
	ev_fstat64(c, r, fd, sb);
}

static inline void ev___fxstatat(const struct sn_call *c, int r, int ver,
				 int dirfd, const char *path, struct stat *sb,
				 int flags)
{
	ev_fstatat(c, r, dirfd, path, sb, flags);
}

static inline void ev___fxstatat64(const struct sn_call *c, int r, int ver,
				   int dirfd, const char *path,
				   struct stat64 *sb, int flags)
{
	ev_fstatat64(c, r, dirfd, path, sb, flags);
}

static inline void ev_statx(const struct sn_call *c, int r, int dirfd,
			    const char *path, int flags, unsigned mask,
			    struct statx *sb)
{
	ev_stat_any(c, PROTO_EV_STATX, r, dirfd, at_path(dirfd, path, flags),
		    r == 0 && sb && (sb->stx_mask & STATX_SIZE) ? (int64_t)sb->stx_size : -1,
		    flags);
}

static void ev_access_any(const struct sn_call *c, int r, int dirfd,
			  const char *path, int mode, int flags)
{
	rec(c, PROTO_EV_ACCESS, r != 0, dirfd, at_path(dirfd, path, flags), mode,
	    r, ERR_IF(c, r != 0), flags);
}

static inline void ev_access(const struct sn_call *c, int r, const char *path,
			     int mode)
{
	ev_access_any(c, r, AT_FDCWD, path, mode, 0);
}

static inline void ev_faccessat(const struct sn_call *c, int r, int dirfd,
				const char *path, int mode, int flags)
{
	ev_access_any(c, r, dirfd, path, mode, flags);
}

static inline void ev_euidaccess(const struct sn_call *c, int r,
				 const char *path, int mode)
{
	ev_access_any(c, r, AT_FDCWD, path, mode, AT_EACCESS);
}

static inline void ev_truncate(const struct sn_call *c, int r,
			       const char *path, off_t len)
{
	rec(c, PROTO_EV_TRUNCATE, r != 0, AT_FDCWD, path_id_at(AT_FDCWD, path),
	    len, r, ERR_IF(c, r != 0), 0);
}

static inline void ev_truncate64(const struct sn_call *c, int r,
				 const char *path, off64_t len)
{
	ev_truncate(c, r, path, len);
}

static inline void ev_ftruncate(const struct sn_call *c, int r, int fd,
				off_t len)
{
	rec(c, PROTO_EV_FTRUNCATE, r != 0, fd, sn_fd_path_fast(fd), len, r,
	    ERR_IF(c, r != 0), 0);
}

static inline void ev_ftruncate64(const struct sn_call *c, int r, int fd,
				  off64_t len)
{
	ev_ftruncate(c, r, fd, len);
}

static void ev_rename_any(const struct sn_call *c, int r, int fromfd,
			  const char *from, int tofd, const char *to,
			  unsigned flags)
{
	rec(c, PROTO_EV_RENAME, r != 0, fromfd, path_id_at(fromfd, from),
	    path_id_at(tofd, to), r, ERR_IF(c, r != 0), flags);
}

static inline void ev_rename(const struct sn_call *c, int r, const char *from,
			     const char *to)
{
	ev_rename_any(c, r, AT_FDCWD, from, AT_FDCWD, to, 0);
}

static inline void ev_renameat(const struct sn_call *c, int r, int fromfd,
			       const char *from, int tofd, const char *to)
{
	ev_rename_any(c, r, fromfd, from, tofd, to, 0);
}

static inline void ev_renameat2(const struct sn_call *c, int r, int fromfd,
				const char *from, int tofd, const char *to,
				unsigned flags)
{
	ev_rename_any(c, r, fromfd, from, tofd, to, flags);
}

static inline void ev_unlink(const struct sn_call *c, int r, const char *path)
{
	rec(c, PROTO_EV_UNLINK, r != 0, AT_FDCWD, path_id_at(AT_FDCWD, path), r,
	    ERR_IF(c, r != 0), 0, 0);
}

static inline void ev_unlinkat(const struct sn_call *c, int r, int dirfd,
			       const char *path, int flags)
{
	rec(c, PROTO_EV_UNLINK, r != 0, dirfd, path_id_at(dirfd, path), r,
	    ERR_IF(c, r != 0), flags, 0);
}

static inline void ev_rmdir(const struct sn_call *c, int r, const char *path)
{
	rec(c, PROTO_EV_RMDIR, r != 0, AT_FDCWD, path_id_at(AT_FDCWD, path), r,
	    ERR_IF(c, r != 0), 0, 0);
}

static inline void ev_mkdirat(const struct sn_call *c, int r, int dirfd,
			      const char *path, mode_t mode)
{
	rec(c, PROTO_EV_MKDIR, r != 0, dirfd, path_id_at(dirfd, path), mode, r,
	    ERR_IF(c, r != 0), 0);
}

static inline void ev_mkdir(const struct sn_call *c, int r, const char *path,
			    mode_t mode)
{
	ev_mkdirat(c, r, AT_FDCWD, path, mode);
}

/* chdir, fchdir: the working directory is read again at the next relative
 * path (not in a vfork child: its directory is its own, our memory the
 * parent's). A chdir that succeeded records the directory it entered. */
static inline void ev_chdir(const struct sn_call *c, int r, const char *path)
{
	int64_t p;

	if (r == 0 && !sn_in_vfork_child()) {
		sn_cwd_forget();
		p = dir_id_at(AT_FDCWD, ".");
	} else {
		p = path_id_at(AT_FDCWD, path);
	}
	rec(c, PROTO_EV_CHDIR, r != 0, AT_FDCWD, p, r, ERR_IF(c, r != 0), 0, 0);
}

static inline void ev_fchdir(const struct sn_call *c, int r, int fd)
{
	if (r == 0 && !sn_in_vfork_child())
		sn_cwd_forget();
	rec(c, PROTO_EV_CHDIR, r != 0, fd, sn_fd_path_fast(fd), r,
	    ERR_IF(c, r != 0), 0, 0);
}

static void ev_dir_open(const struct sn_call *c, DIR *r, int64_t p)
{
	int fd = r ? dirfd(r) : -1;

	if (fd >= 0)
		sn_fd_set(fd, p);
	rec(c, PROTO_EV_OPENDIR, !r, fd, p, ERR_IF(c, !r), 0, 0, 0);
}

static inline void ev_opendir(const struct sn_call *c, DIR *r,
			      const char *path)
{
	ev_dir_open(c, r, dir_id_at(AT_FDCWD, path));
}

static inline void ev_fdopendir(const struct sn_call *c, DIR *r, int fd)
{
	ev_dir_open(c, r, sn_fd_path_fast(fd));
}

static void ev_readdir_any(const struct sn_call *c, int found, DIR *d)
{
	int fd = dirfd(d);

	rec(c, PROTO_EV_READDIR, 0, fd, found, sn_fd_path_fast(fd), 0, 1, 0);
}

static inline void ev_readdir(const struct sn_call *c, struct dirent *r, DIR *d)
{
	ev_readdir_any(c, r != NULL, d);
}

static inline void ev_readdir64(const struct sn_call *c, struct dirent64 *r,
				DIR *d)
{
	ev_readdir_any(c, r != NULL, d);
}

/* ---- mappings ------------------------------------------------------------
 * mmap of a file is recorded (an anonymous one is memory, not I/O: malloc
 * makes them), and kept in a small table so that its munmap is recorded
 * too (with the file's path); msync always. */

static struct sn_maptab maps;

static void ev_mmap_any(const struct sn_call *c, void *r, size_t len, int prot,
			int flags, int fd, int64_t off)
{
	int64_t p;

	if ((flags & MAP_ANONYMOUS) || fd < 0)
		return;
	p = sn_fd_path_fast(fd);
	if (r != MAP_FAILED)
		sn_maptab_add(&maps, r, len, p);
	rec(c, PROTO_EV_MMAP, r == MAP_FAILED, fd, (int64_t)len,
	    r == MAP_FAILED ? -1 : (int64_t)(uintptr_t)r, p, off,
	    (int64_t)(unsigned)flags | ((int64_t)prot << 32));
}

static inline void ev_mmap(const struct sn_call *c, void *r, void *addr,
			   size_t len, int prot, int flags, int fd, off_t off)
{
	ev_mmap_any(c, r, len, prot, flags, fd, off);
}

static inline void ev_mmap64(const struct sn_call *c, void *r, void *addr,
			     size_t len, int prot, int flags, int fd,
			     off64_t off)
{
	ev_mmap_any(c, r, len, prot, flags, fd, off);
}

static inline void ev_munmap(const struct sn_call *c, int r, void *addr,
			     size_t len)
{
	int64_t p;

	if (!sn_maptab_find(&maps, addr, r == 0, &p))
		return;
	rec(c, PROTO_EV_MUNMAP, r != 0, (int64_t)(uintptr_t)addr, (int64_t)len,
	    r, ERR_IF(c, r != 0), 0, 0);
}

static inline void ev_msync(const struct sn_call *c, int r, void *addr,
			    size_t len, int flags)
{
	rec(c, PROTO_EV_MSYNC, r != 0, (int64_t)(uintptr_t)addr, (int64_t)len,
	    flags, r, ERR_IF(c, r != 0), 0);
}

/* ---- copies between descriptors, asynchronous I/O ----------------------- */

static void ev_copy(const struct sn_call *c, uint16_t type, ssize_t r, int fd,
		    int fd2, int src, int dst)
{
	rec(c, type, r < 0, fd, fd2, r > 0 ? r : 0, r, sn_fd_path_fast(src),
	    sn_fd_path_fast(dst));
}

static inline void ev_sendfile(const struct sn_call *c, ssize_t r, int out,
			       int in, off_t *off, size_t n)
{
	ev_copy(c, PROTO_EV_SENDFILE, r, out, in, in, out);
}

static inline void ev_sendfile64(const struct sn_call *c, ssize_t r, int out,
				 int in, off64_t *off, size_t n)
{
	ev_copy(c, PROTO_EV_SENDFILE, r, out, in, in, out);
}

static inline void ev_copy_file_range(const struct sn_call *c, ssize_t r,
				      int in, off64_t *inoff, int out,
				      off64_t *outoff, size_t n, unsigned flags)
{
	ev_copy(c, PROTO_EV_COPY_FILE_RANGE, r, in, out, in, out);
}

static void ev_aio_submit(const struct sn_call *c, uint16_t type, int r,
			  int fd, size_t n, int64_t off)
{
	rec(c, type, r != 0, fd, (int64_t)n, r, sn_fd_path_fast(fd),
	    ERR_IF(c, r != 0), off);
}

static inline void ev_aio_read(const struct sn_call *c, int r,
			       struct aiocb *cb)
{
	ev_aio_submit(c, PROTO_EV_AIO_READ, r, cb->aio_fildes, cb->aio_nbytes,
		      cb->aio_offset);
}

static inline void ev_aio_read64(const struct sn_call *c, int r,
				 struct aiocb64 *cb)
{
	ev_aio_submit(c, PROTO_EV_AIO_READ, r, cb->aio_fildes, cb->aio_nbytes,
		      cb->aio_offset);
}

static inline void ev_aio_write(const struct sn_call *c, int r,
				struct aiocb *cb)
{
	ev_aio_submit(c, PROTO_EV_AIO_WRITE, r, cb->aio_fildes, cb->aio_nbytes,
		      cb->aio_offset);
}

static inline void ev_aio_write64(const struct sn_call *c, int r,
				  struct aiocb64 *cb)
{
	ev_aio_submit(c, PROTO_EV_AIO_WRITE, r, cb->aio_fildes, cb->aio_nbytes,
		      cb->aio_offset);
}

/* kind: 1 write, 2 read (glibc sets aio_lio_opcode for aio_read/write) */
static void ev_aio_ret(const struct sn_call *c, ssize_t r, int fd, int op,
		       int64_t off)
{
	rec(c, PROTO_EV_AIO_RETURN, r < 0, fd, r > 0 ? r : 0, r,
	    sn_fd_path_fast(fd), op == LIO_WRITE ? 1 : op == LIO_READ ? 2 : 0,
	    off);
}

static inline void ev_aio_return(const struct sn_call *c, ssize_t r,
				 struct aiocb *cb)
{
	ev_aio_ret(c, r, cb->aio_fildes, cb->aio_lio_opcode, cb->aio_offset);
}

static inline void ev_aio_return64(const struct sn_call *c, ssize_t r,
				   struct aiocb64 *cb)
{
	ev_aio_ret(c, r, cb->aio_fildes, cb->aio_lio_opcode, cb->aio_offset);
}

static inline void ev_connect(const struct sn_call *c, int r, int fd,
			      __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int64_t p = peer_id(addr.__sockaddr__, len);
	int failed = r < 0 && c->err != EINPROGRESS;

	if (!failed)
		sn_fd_set(fd, p);
	rec(c, PROTO_EV_CONNECT, r < 0, fd, r, p, ERR_IF(c, r < 0), 0, 0);
}

static inline void ev_accept(const struct sn_call *c, int r, int fd,
			     __SOCKADDR_ARG addr, socklen_t *len)
{
	int64_t p = 0;

	if (r >= 0) {
		if (addr.__sockaddr__ && len) {
			p = peer_id(addr.__sockaddr__, *len);
		} else {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);

			if (getpeername(r, (struct sockaddr *)&ss, &sl) == 0)
				p = peer_id((struct sockaddr *)&ss, sl);
		}
		sn_fd_set(r, p);
	}
	rec(c, PROTO_EV_ACCEPT, r < 0, fd, r, p, ERR_IF(c, r < 0), 0, 0);
}

static void ev_sock(const struct sn_call *c, uint16_t type, ssize_t r, int fd,
		    size_t n, int flags, int64_t p)
{
	rec(c, type, r < 0, fd, (int64_t)n, r, p, ERR_IF(c, r < 0), flags);
}

static inline void ev_send(const struct sn_call *c, ssize_t r, int fd,
			   const void *b, size_t n, int flags)
{
	ev_sock(c, PROTO_EV_SEND_SOCK, r, fd, n, flags, sn_fd_path_fast(fd));
}

static inline void ev_recv(const struct sn_call *c, ssize_t r, int fd, void *b,
			   size_t n, int flags)
{
	ev_sock(c, PROTO_EV_RECV_SOCK, r, fd, n, flags, sn_fd_path_fast(fd));
}

static inline void ev_sendto(const struct sn_call *c, ssize_t r, int fd,
			     const void *b, size_t n, int flags,
			     __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	int64_t p = sn_fd_path_fast(fd);

	if (!p && addr.__sockaddr__)
		p = peer_id(addr.__sockaddr__, len);
	ev_sock(c, PROTO_EV_SENDTO, r, fd, n, flags, p);
}

static inline void ev_recvfrom(const struct sn_call *c, ssize_t r, int fd,
			       void *b, size_t n, int flags,
			       __SOCKADDR_ARG addr, socklen_t *len)
{
	int64_t p = sn_fd_path_fast(fd);

	if (!p && r >= 0 && addr.__sockaddr__ && len)
		p = peer_id(addr.__sockaddr__, *len);
	ev_sock(c, PROTO_EV_RECVFROM, r, fd, n, flags, p);
}

/* ---- generated wrappers ---------------------------------------------------- */

#define SN_BODY_CUSTOM(ret, name, params, args)
#define SN_BODY_GEN(ret, name, params, args)                                 \
	SN_EXPORT ret name params                                            \
	{                                                                    \
		struct sn_call c;                                            \
		ret r;                                                       \
                                                                             \
		call_begin(&c, sn_real.name != NULL);                        \
		r = sn_real.name args;                                       \
		call_end(&c);                                                \
		if (c.on)                                                    \
			ev_##name(&c, r SN_COMMA_ARGS args);                 \
		call_done(&c);                                               \
		return r;                                                    \
	}
/* RW: pre_<name>(call, args...) fills the record before the call (see
 * pre_rw), the start stamp is the last thing before it, the end stamp the
 * first after it. errno is read only when the call failed and never
 * written: nothing on this path sets it (the slow paths it may take keep
 * it, sn_now_vdso's clock_gettime does not fail). */
#define SN_BODY_RW(ret, name, params, args)                                  \
	SN_EXPORT ret name params                                            \
	{                                                                    \
		struct sn_call c;                                            \
		ret r;                                                       \
                                                                             \
		call_enter(&c, sn_real.name != NULL);                        \
		if (!c.on)                                                   \
			return sn_real.name args;                            \
		c.t0 = sn_stamp_fast();                                      \
		pre_##name(&c, SN_ARGS args);                                \
		r = sn_real.name args;                                       \
		c.t1 = sn_stamp_fast();                                      \
		post_rw(&c, r);                                              \
		sn_leave_fast();                                             \
		return r;                                                    \
	}
#define SN_CALL(kind, ret, name, params, args)                               \
	SN_BODY_##kind(ret, name, params, args)
#include "sensor/libc.def"
#undef SN_CALL

/* ---- files (custom) -------------------------------------------------------- */

static int open_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return va_arg(ap, int);
	return 0;
}

static int open_common(int (*real)(const char *, int, ...), const char *path,
		       int flags, int mode)
{
	struct sn_call c;
	int r;

	call_begin(&c, 1);
	r = real(path, flags, mode);
	call_end(&c);
	if (c.on)
		ev_open_any(&c, r, path, flags, mode);
	call_done(&c);
	return r;
}

SN_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (SN_UNLIKELY(!sn_real.open))
		sn_libc_resolve();
	return open_common(sn_real.open, path, flags, mode);
}

SN_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (SN_UNLIKELY(!sn_real.open64))
		sn_libc_resolve();
	return open_common(sn_real.open64, path, flags, mode);
}

static int openat_common(int (*real)(int, const char *, int, ...), int dirfd,
			 const char *path, int flags, int mode)
{
	struct sn_call c;
	int r;

	call_begin(&c, 1);
	r = real(dirfd, path, flags, mode);
	call_end(&c);
	if (c.on)
		ev_openat_any(&c, r, dirfd, path, flags, mode);
	call_done(&c);
	return r;
}

SN_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (SN_UNLIKELY(!sn_real.openat))
		sn_libc_resolve();
	return openat_common(sn_real.openat, dirfd, path, flags, mode);
}

SN_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (SN_UNLIKELY(!sn_real.openat64))
		sn_libc_resolve();
	return openat_common(sn_real.openat64, dirfd, path, flags, mode);
}

SN_EXPORT int close(int fd)
{
	struct sn_call c;
	int64_t p;
	int r;

	call_begin(&c, sn_real.close != NULL);
	p = sn_fd_path_fast(fd);
	sn_own_evict(fd, fd);
	r = sn_real.close(fd);
	if (r == 0)
		sn_fd_set(fd, 0);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_CLOSE, r < 0, fd, r, p, ERR_IF(&c, r < 0), 0, 0);
	call_done(&c);
	return r;
}

SN_EXPORT int dup2(int fd, int fd2)
{
	struct sn_call c;
	int64_t p;
	int r;

	call_begin(&c, sn_real.dup2 != NULL);
	p = sn_fd_path_fast(fd);
	if (fd != fd2)
		sn_own_evict(fd2, fd2);
	r = sn_real.dup2(fd, fd2);
	if (r >= 0)
		sn_fd_set(r, p);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_DUP2, r < 0, fd, fd2, r, p, ERR_IF(&c, r < 0), 0);
	call_done(&c);
	return r;
}

/* dup3: its own event, with its flags (O_CLOEXEC). */
SN_EXPORT int dup3(int fd, int fd2, int flags)
{
	struct sn_call c;
	int64_t p;
	int r;

	call_begin(&c, sn_real.dup3 != NULL);
	p = sn_fd_path_fast(fd);
	if (fd != fd2)
		sn_own_evict(fd2, fd2);
	if (sn_real.dup3) {
		r = sn_real.dup3(fd, fd2, flags);
	} else {
		errno = ENOSYS;
		r = -1;
	}
	if (r >= 0)
		sn_fd_set(r, p);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_DUP3, r < 0, fd, fd2, r, p, ERR_IF(&c, r < 0),
		    flags);
	call_done(&c);
	return r;
}

/* Forget the paths of the descriptors in [lo, hi] (closed). */
static void forget_range(unsigned lo, unsigned hi)
{
	for (unsigned fd = lo; fd <= hi && fd < SN_FD_MAX; fd++)
		if (sn_fd_path((int)fd))
			sn_fd_set((int)fd, 0);
}

/* close_range and closefrom close many descriptors at once (daemons, the
 * children of process managers): the runtime's own descriptors in the
 * range are moved above it first, or dropped when no number is free
 * there (closefrom, close_range(lo, ~0U)): the sender then makes new ones
 * (a new connection resends what was not acknowledged), so the program
 * streams on. Recorded as CLOSE_RANGE (lo, hi, flags) and CLOSEFROM (lo).
 * With CLOSE_RANGE_CLOEXEC nothing is closed (the runtime's descriptors
 * are close-on-exec already). */
SN_EXPORT int close_range(unsigned int lo, unsigned int hi, int flags)
{
	struct sn_call c;
	int r;

	call_begin(&c, sn_real.close_range != NULL);
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		sn_own_evict(lo, hi);
	if (sn_real.close_range) {
		r = sn_real.close_range(lo, hi, flags);
	} else {
		errno = ENOSYS;
		r = -1;
	}
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		forget_range(lo, hi);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_CLOSE_RANGE, r < 0, lo, hi, flags, r,
		    ERR_IF(&c, r < 0), 0);
	call_done(&c);
	return r;
}

SN_EXPORT void closefrom(int lo)
{
	struct sn_call c;
	int from = lo < 0 ? 0 : lo;

	call_begin(&c, sn_real.closefrom != NULL);
	sn_own_evict(from, INT_MAX);
	if (sn_real.closefrom)
		sn_real.closefrom(lo);
	forget_range((unsigned)from, UINT_MAX);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_CLOSEFROM, 0, lo, 0, 0, 0, 0, 0);
	call_done(&c);
}

SN_EXPORT int fclose(FILE *f)
{
	struct sn_call c;
	int fd, r;
	int64_t p;

	call_begin(&c, sn_real.fclose != NULL);
	fd = stream_fd(f);
	p = sn_fd_path_fast(fd);
	r = sn_real.fclose(f);
	if (fd >= 0)
		sn_fd_set(fd, 0);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_FCLOSE, r != 0, fd, r, p, ERR_IF(&c, r != 0), 0,
		    0);
	call_done(&c);
	return r;
}

SN_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	struct sn_call c;
	va_list ap;
	int r;

	call_begin(&c, sn_real.vfprintf != NULL);
	va_start(ap, fmt);
	r = sn_real.vfprintf(f, fmt, ap);
	va_end(ap);
	call_end(&c);
	if (c.on)
		ev_stdio(&c, PROTO_EV_FPRINTF, r < 0, f, r > 0 ? r : 0, r);
	call_done(&c);
	return r;
}

SN_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	struct sn_call c;
	va_list ap;
	int r;

	call_begin(&c, sn_real.vfprintf != NULL);
	va_start(ap, fmt);
	if (sn_real.__vfprintf_chk)
		r = sn_real.__vfprintf_chk(f, flag, fmt, ap);
	else
		r = sn_real.vfprintf(f, fmt, ap);
	va_end(ap);
	call_end(&c);
	if (c.on)
		ev_stdio(&c, PROTO_EV_FPRINTF, r < 0, f, r > 0 ? r : 0, r);
	call_done(&c);
	return r;
}

SN_EXPORT int printf(const char *fmt, ...)
{
	struct sn_call c;
	va_list ap;
	int r;

	call_begin(&c, sn_real.vprintf != NULL);
	va_start(ap, fmt);
	r = sn_real.vprintf(fmt, ap);
	va_end(ap);
	call_end(&c);
	if (c.on)
		ev_printf_any(&c, r);
	call_done(&c);
	return r;
}

SN_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	struct sn_call c;
	va_list ap;
	int r;

	call_begin(&c, sn_real.vprintf != NULL);
	va_start(ap, fmt);
	if (sn_real.__vprintf_chk)
		r = sn_real.__vprintf_chk(flag, fmt, ap);
	else
		r = sn_real.vprintf(fmt, ap);
	va_end(ap);
	call_end(&c);
	if (c.on)
		ev_printf_any(&c, r);
	call_done(&c);
	return r;
}

/* closedir(NULL) fails with EINVAL in glibc: the wrapper must not crash
 * first (glibc declares closedir's argument nonnull, so the test is here) */
static int dir_fd(DIR *d)
{
	return d ? dirfd(d) : -1;
}

/* closedir: the descriptor is read before the call frees the DIR. */
SN_EXPORT int closedir(DIR *d)
{
	struct sn_call c;
	int fd, r;
	int64_t p;

	call_begin(&c, sn_real.closedir != NULL);
	fd = dir_fd(d);
	p = sn_fd_path_fast(fd);
	r = sn_real.closedir(d);
	if (r == 0 && fd >= 0)
		sn_fd_set(fd, 0);
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_CLOSEDIR, r != 0, fd, r, p, ERR_IF(&c, r != 0), 0,
		    0);
	call_done(&c);
	return r;
}

/* ---- process life ------------------------------------------------------------ */

SN_EXPORT pid_t fork(void)
{
	struct sn_call c;
	pid_t r;

	call_begin(&c, sn_real.fork != NULL);
	r = sn_real.fork();
	if (r == 0) {
		/* the child: a new stream (atfork reset the runtime) */
		c.err = errno;
		sn_after_fork_child();
		call_done(&c);
		return 0;
	}
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_FORK, r < 0, r, ERR_IF(&c, r < 0), 0, 0, 0, 0);
	call_done(&c);
	return r;
}

static int env_has(char *const envp[], const char *name, size_t n)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return 1;
	return 0;
}

/* The environment for an exec: envp, plus our LD_PRELOAD and TAPESTRY_*
 * settings when envp lacks them (so the new image traces itself). Returns
 * envp itself or a malloc'd array (*owned set). */
static char *const *exec_env(char *const envp[], char ***owned)
{
	size_t n = 0, add = 0;
	char **out;

	*owned = NULL;
	if (!envp || envp == environ || env_has(envp, "LD_PRELOAD", 10))
		return envp;
	for (; envp[n]; n++)
		;
	for (size_t i = 0; environ && environ[i]; i++)
		add++;
	out = malloc((n + add + 1) * sizeof(*out));
	if (!out)
		return envp;
	memcpy(out, envp, n * sizeof(*out));
	for (size_t i = 0; environ && environ[i]; i++) {
		const char *e = environ[i];
		const char *eq = strchr(e, '=');

		if (!eq)
			continue;
		if ((!strncmp(e, "LD_PRELOAD=", 11) ||
		     !strncmp(e, "TAPESTRY_", 9)) &&
		    !env_has(envp, e, (size_t)(eq - e)))
			out[n++] = (char *)e;
	}
	out[n] = NULL;
	*owned = out;
	return out;
}

/* 1 when an exec of path cannot start because there is no such file
 * (ENOENT, ENOTDIR): what a shell meets at every directory of PATH before
 * the one that holds the program, since it calls execve for each (dash,
 * `exec prog`). searched: path is looked up in PATH by the call (the
 * execvp family) unless it holds a slash; not checked then. */
static int exec_cannot_start(const char *path, int searched)
{
	struct stat sb;
	int saved = errno, r;

	if (!path || (searched && !strchr(path, '/')))
		return 0;
	r = stat(path, &sb) != 0 && (errno == ENOENT || errno == ENOTDIR);
	errno = saved;
	return r;
}

/* Before an exec: record it, calibrate again as at exit
 * (sn_calibrate_at_end), and ship everything (the process image is about
 * to go). An exec that cannot start (exec_cannot_start) is only recorded,
 * after it failed, in the stream that goes on (c->kept): a search of PATH
 * no longer cuts a process into a stream per directory. Returns 1 when
 * tracing is on for this call. */
static int exec_pre(struct sn_call *c, const char *path, int searched,
		    int64_t *pid)
{
	call_begin(c, 1);
	*pid = 0;
	c->kept = 0;
	if (!c->on)
		return 0;
	if (sn_in_vfork_child()) {
		sn_leave_fast();
		c->on = 0;
		return 0;
	}
	*pid = path_id(path);
	if (exec_cannot_start(path, searched)) {
		c->kept = 1;
		return 1;
	}
	c->t1 = c->t0;
	rec(c, PROTO_EV_EXEC, 0, *pid, 0, 0, 0, 0, 0);
	sn_exec_meta();
	sn_calibrate_at_end();
	sn_runs_take();
	sn_sender_flush(2, 3000);
	return 1;
}

/* After an exec that failed: record the failure, continue as a new stream
 * (the old one was closed with BYE), or in the same stream when exec_pre
 * kept it (the record then spans the call). */
static int exec_post(struct sn_call *c, int r, int64_t pid)
{
	call_end(c);
	if (c->on && c->kept) {
		rec(c, PROTO_EV_EXEC, 1, pid, c->err, 0, 0, 0, 0);
	} else if (c->on) {
		c->t0 = c->t1;
		rec(c, PROTO_EV_EXEC, 1, pid, c->err, 0, 0, 0, 0);
		sn_new_stream_id();
		sn_sender_resume();
	}
	call_done(c);
	return r;
}

SN_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct sn_call c;
	char **owned;
	char *const *env;
	int64_t p;
	int r;

	if (SN_UNLIKELY(!sn_real.execve))
		sn_libc_resolve();
	exec_pre(&c, path, 0, &p);
	env = exec_env(envp, &owned);
	r = sn_real.execve(path, argv, env);
	free(owned);
	return exec_post(&c, r, p);
}

SN_EXPORT int execv(const char *path, char *const argv[])
{
	struct sn_call c;
	int64_t p;
	int r;

	if (SN_UNLIKELY(!sn_real.execv))
		sn_libc_resolve();
	exec_pre(&c, path, 0, &p);
	r = sn_real.execv(path, argv);
	return exec_post(&c, r, p);
}

SN_EXPORT int execvp(const char *file, char *const argv[])
{
	struct sn_call c;
	int64_t p;
	int r;

	if (SN_UNLIKELY(!sn_real.execvp))
		sn_libc_resolve();
	exec_pre(&c, file, 1, &p);
	r = sn_real.execvp(file, argv);
	return exec_post(&c, r, p);
}

SN_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct sn_call c;
	char **owned;
	char *const *env;
	int64_t p;
	int r;

	if (SN_UNLIKELY(!sn_real.execvpe))
		sn_libc_resolve();
	exec_pre(&c, file, 1, &p);
	env = exec_env(envp, &owned);
	r = sn_real.execvpe(file, argv, env);
	free(owned);
	return exec_post(&c, r, p);
}

/* posix_spawn(p): the child is started by libc (clone and exec inside
 * it, not through these wrappers) with envp, which keeps our LD_PRELOAD
 * and settings as an exec's does (exec_env): the child traces itself as a
 * new stream. The parent records SPAWN (path, child pid, the error code
 * returned: posix_spawn sets no errno). */
static int spawn_common(int (*real)(pid_t *, const char *,
				    const posix_spawn_file_actions_t *,
				    const posix_spawnattr_t *, char *const[],
				    char *const[]),
			pid_t *pid, const char *path,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[])
{
	struct sn_call c;
	char **owned = NULL;
	char *const *env;
	pid_t child = -1;
	int r;

	call_begin(&c, 1);
	env = c.on ? exec_env(envp, &owned) : envp;
	r = real(pid ? pid : &child, path, fa, attr, argv, env);
	call_end(&c);
	free(owned);
	if (c.on)
		rec(&c, PROTO_EV_SPAWN, r != 0, path_id(path),
		    r == 0 ? (int64_t)(pid ? *pid : child) : -1, r, 0, 0, 0);
	call_done(&c);
	return r;
}

SN_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	if (SN_UNLIKELY(!sn_real.posix_spawn))
		sn_libc_resolve();
	return spawn_common(sn_real.posix_spawn, pid, path, fa, attr, argv, envp);
}

SN_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	if (SN_UNLIKELY(!sn_real.posix_spawnp))
		sn_libc_resolve();
	return spawn_common(sn_real.posix_spawnp, pid, file, fa, attr, argv, envp);
}

SN_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct sn_call c;
	char **owned;
	char *const *env;
	int64_t p;
	int r;

	if (SN_UNLIKELY(!sn_real.fexecve))
		sn_libc_resolve();
	exec_pre(&c, NULL, 0, &p);
	env = exec_env(envp, &owned);
	r = sn_real.fexecve(fd, argv, env);
	free(owned);
	return exec_post(&c, r, p);
}

#define EXECL_MAX 65536

/* Collect execl-style arguments into a malloc'd argv; *envp gets the
 * trailing environment when want_env. NULL (errno E2BIG/ENOMEM) on error. */
static char **collect_args(const char *arg, va_list ap, int want_env,
			   char ***envp)
{
	va_list cp;
	size_t n = 1;
	char **argv;

	va_copy(cp, ap);
	if (arg)
		while (va_arg(cp, char *) && n < EXECL_MAX)
			n++;
	va_end(cp);
	if (n >= EXECL_MAX) {
		errno = E2BIG;
		return NULL;
	}
	argv = malloc((n + 1) * sizeof(*argv));
	if (!argv) {
		errno = ENOMEM;
		return NULL;
	}
	argv[0] = (char *)arg;
	for (size_t i = 1; arg && i <= n; i++)
		argv[i] = va_arg(ap, char *);
	argv[arg ? n : 0] = NULL;
	if (want_env)
		*envp = va_arg(ap, char **);
	return argv;
}

SN_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;
	int r, e;

	va_start(ap, arg);
	argv = collect_args(arg, ap, 0, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	r = execv(path, argv);
	e = errno;
	free(argv);
	errno = e;
	return r;
}

SN_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;
	int r, e;

	va_start(ap, arg);
	argv = collect_args(arg, ap, 0, NULL);
	va_end(ap);
	if (!argv)
		return -1;
	r = execvp(file, argv);
	e = errno;
	free(argv);
	errno = e;
	return r;
}

SN_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp = NULL;
	int r, e;

	va_start(ap, arg);
	argv = collect_args(arg, ap, 1, &envp);
	va_end(ap);
	if (!argv)
		return -1;
	r = execve(path, argv, envp);
	e = errno;
	free(argv);
	errno = e;
	return r;
}

static void exit_common(int status, int flush_now)
{
	if (sn_tls.guard || atomic_load(&sn_state) != SN_ST_READY ||
	    !sn_cfg.sens_libc)
		return;
	if (flush_now && sn_in_vfork_child())
		return;
	sn_tls.guard = 1;
	sn_exit_event(status);
	if (flush_now)
		sn_shutdown(0);
	sn_tls.guard = 0;
}

SN_EXPORT void exit(int status)
{
	if (SN_UNLIKELY(!sn_real.exit))
		sn_libc_resolve();
	exit_common(status, 0);
	sn_real.exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

SN_EXPORT void _exit(int status)
{
	if (SN_UNLIKELY(!sn_real._exit))
		sn_libc_resolve();
	exit_common(status, 1);
	if (sn_real._exit)
		sn_real._exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

SN_EXPORT void _Exit(int status)
{
	if (SN_UNLIKELY(!sn_real._Exit))
		sn_libc_resolve();
	exit_common(status, 1);
	if (sn_real._Exit)
		sn_real._Exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

struct tramp {
	void *(*fn)(void *);
	void *arg;
	uint32_t tid;
	uint32_t parent;
};

static void *trampoline(void *p)
{
	struct tramp t = *(struct tramp *)p;

	free(p);
	sn_tls.pending_tid = t.tid + 1;
	if (atomic_load(&sn_state) == SN_ST_READY && sn_cfg.sens_libc) {
		uint64_t now = sn_now_fast();

		sn_emit(PROTO_EV_THREAD_START, PROTO_EVF_INSTANT, now, now,
			t.parent, 0, 0, 0);
	}
	return t.fn(t.arg);
}

SN_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	struct sn_call c;
	struct tramp *t = NULL;
	int r;

	call_begin(&c, sn_real.pthread_create != NULL);
	if (c.on)
		t = malloc(sizeof(*t));
	if (t) {
		t->fn = fn;
		t->arg = arg;
		t->tid = sn_tid_alloc();
		t->parent = sn_tls.thr ? sn_tls.thr->tid : 0;
		r = sn_real.pthread_create(th, attr, trampoline, t);
		if (r)
			free(t);
	} else {
		r = sn_real.pthread_create(th, attr, fn, arg);
	}
	call_end(&c);
	if (c.on)
		rec(&c, PROTO_EV_PTHREAD_CREATE, r != 0, r,
		    t && r == 0 ? (int64_t)t->tid : -1, 0, 0, 0, 0);
	call_done(&c);
	return r;
}

/* ---- signals ------------------------------------------------------------------ */

SN_EXPORT int sigaction(int signo, const struct sigaction *act,
			struct sigaction *old)
{
	if (SN_UNLIKELY(!sn_real.sigaction))
		sn_libc_resolve();
	return sn_sigaction_app(signo, act, old, sn_real.sigaction);
}

SN_EXPORT sighandler_t signal(int signo, sighandler_t handler)
{
	struct sigaction a, old;

	if (SN_UNLIKELY(!sn_real.signal))
		sn_libc_resolve();
	if (!sn_sig_is_fatal(signo) || atomic_load(&sn_state) != SN_ST_READY)
		return sn_real.signal(signo, handler);
	memset(&a, 0, sizeof(a));
	a.sa_handler = handler;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	if (sigaction(signo, &a, &old) < 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction
					   : old.sa_handler;
}

/* ---- start ------------------------------------------------------------------- */

__attribute__((constructor)) static void libc_sensor_init(void)
{
	sn_libc_resolve();
	sn_init();
}
