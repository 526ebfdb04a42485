/*
 * tests/sensor/prog_libc.c - calls one wrapped libc function N times.
 *
 *   prog_libc MODE N DIR
 *
 * MODE names the call (open, write, fprintf, connect, fork, ...; see the
 * table at the end). The program calls it N times successfully, then once
 * in a way that fails (except for modes where failing makes no sense), and
 * prints what it saw: the number of successes, the results that do not
 * depend on the process (bytes, offsets) and the errno of the failure, so
 * that a run with the sensor preloaded prints exactly what a run without
 * it prints. read, write, pread and pwrite count a success only when it
 * left errno as it was (the sensor must not touch it). DIR is a scratch directory the program may write into.
 * Special modes: threads (8 threads x N writes to /dev/null), segv (N
 * writes then a NULL dereference), abort, exit (exit status 3), exec
 * (execs itself in mode write), writeexec (N writes, then exec), forkexec
 * (fork, the child execs), execfail (N writes, an exec of a file that is
 * not executable, N writes), execnofile (the same with no such file),
 * spawn (posix_spawn, posix_spawnp, a posix_spawn that fails), burst (N fwrite of 8 bytes to /dev/null), timed (N writes to
 * /dev/null between two readings of CLOCK_MONOTONIC, printed as
 * "timed before=NS after=NS").
 * The calls of issue 31 (stdio's _unlocked and character calls, getline,
 * printf, puts, the metadata calls, mmap, sendfile, copy_file_range, aio)
 * have a mode each named after the call; chdir opens a file by a relative
 * path after the chdir (its recorded path must be absolute).
 * runsexit, runsexec, runsabort, runsbusy: stdio runs left open on other
 * threads when the process ends (see runs_main).
 */
#include "config.h"

#include <aio.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* glibc's fortified calls and its stat ABI before 2.33, exported but
 * not declared without _FORTIFY_SOURCE (or at all since 2.33) */
size_t __fread_chk(void *ptr, size_t bufsize, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *s, size_t bufsize, int size, FILE *f);
ssize_t __pread64_chk(int fd, void *buf, size_t count, off64_t offset,
		      size_t buflen);
int __xstat(int ver, const char *path, struct stat *sb);
int __lxstat(int ver, const char *path, struct stat *sb);
int __fxstat(int ver, int fd, struct stat *sb);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *sb, int flags);

static int n;
static const char *dir;
static char path[4096];
static char buf[4096];
static const char *self;
static int *volatile nullp;

/* Written with a raw system call: the report must add no traced event
 * (printf, puts and putchar are modes of their own). */
static void report(const char *what, long ok, long value, int err)
{
	char line[256];
	int k = snprintf(line, sizeof(line), "%s ok=%ld value=%ld errno=%s\n",
			 what, ok, value, err ? strerrorname_np(err) : "0");

	if (k > 0)
		syscall(SYS_write, 1, line, (size_t)k);
}

/* Raw system calls: the helper must not add traced events. */
static int make_file(const char *name, int lines)
{
	static const char line[] = "0123456789abcdefghij\n";
	long fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
		     0644);
	if (fd < 0)
		return -1;
	for (int i = 0; i < lines; i++)
		syscall(SYS_write, fd, line, sizeof(line) - 1);
	syscall(SYS_close, fd);
	return 0;
}

#define FAIL_AND_REPORT(what, ok, value, call)                              \
	do {                                                                \
		int e_;                                                     \
		errno = 0;                                                  \
		(void)(call);                                               \
		e_ = errno;                                                 \
		report(what, ok, value, e_);                                \
	} while (0)

static int m_open(void)
{
	long ok = 0;

	snprintf(path, sizeof(path), "%s/open.txt", dir);
	for (int i = 0; i < n; i++) {
		int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

		ok += fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	FAIL_AND_REPORT("open", ok, 0, open("/nonexistent/x", O_RDONLY));
	return 0;
}

static int m_openat(void)
{
	long ok = 0;

	snprintf(path, sizeof(path), "%s/openat.txt", dir);
	for (int i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, path, O_CREAT | O_WRONLY, 0600);

		ok += fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	FAIL_AND_REPORT("openat", ok, 0,
			openat(AT_FDCWD, "/nonexistent/x", O_RDONLY));
	return 0;
}

static int m_creat(void)
{
	long ok = 0;

	snprintf(path, sizeof(path), "%s/creat.txt", dir);
	for (int i = 0; i < n; i++) {
		int fd = creat(path, 0644);

		ok += fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	FAIL_AND_REPORT("creat", ok, 0, creat("/nonexistent/x", 0644));
	return 0;
}

static int m_close(void)
{
	long ok = 0;

	make_file("close.txt", 1);
	for (int i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);

		ok += close(fd) == 0;
	}
	FAIL_AND_REPORT("close", ok, 0, close(-1));
	return 0;
}

static int open_data(int lines, int flags)
{
	make_file("data.txt", lines);
	return open(path, flags);
}

static int m_read(void)
{
	int fd = open_data(n + 1, O_RDONLY);
	long ok = 0, bytes = 0;

	for (int i = 0; i < n; i++) {
		ssize_t r;

		errno = EDOM;
		r = read(fd, buf, 10);
		ok += r == 10 && errno == EDOM;
		bytes += r;
	}
	close(fd);
	FAIL_AND_REPORT("read", ok, bytes, read(-1, buf, 10));
	return 0;
}

static int m_write(void)
{
	int fd;
	long ok = 0;

	snprintf(path, sizeof(path), "%s/write.txt", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	memset(buf, 'x', 64);
	for (int i = 0; i < n; i++) {
		errno = EDOM;
		ok += write(fd, buf, 64) == 64 && errno == EDOM;
	}
	close(fd);
	FAIL_AND_REPORT("write", ok, 64, write(-1, buf, 64));
	return 0;
}

static int m_pread(void)
{
	int fd = open_data(n + 1, O_RDONLY);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		errno = EDOM;
		ok += pread(fd, buf, 10, 5) == 10 && errno == EDOM;
	}
	close(fd);
	FAIL_AND_REPORT("pread", ok, 0, pread(-1, buf, 10, 5));
	return 0;
}

static int m_pread_chk(void)
{
	int fd = open_data(n + 1, O_RDONLY);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		errno = EDOM;
		ok += __pread64_chk(fd, buf, 10, 5, sizeof(buf)) == 10 &&
		      errno == EDOM;
	}
	close(fd);
	FAIL_AND_REPORT("pread_chk", ok, 0, __pread64_chk(-1, buf, 10, 5, sizeof(buf)));
	return 0;
}

static int m_pwrite(void)
{
	int fd = open_data(1, O_RDWR);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		errno = EDOM;
		ok += pwrite(fd, "abcdefghij", 10, 7) == 10 && errno == EDOM;
	}
	close(fd);
	FAIL_AND_REPORT("pwrite", ok, 0, pwrite(-1, buf, 10, 7));
	return 0;
}

static int m_readv(void)
{
	int fd = open_data(2 * n + 2, O_RDONLY);
	char a[10], b[20];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += readv(fd, iov, 2) == 30;
	close(fd);
	FAIL_AND_REPORT("readv", ok, 0, readv(-1, iov, 2));
	return 0;
}

/* preadv, preadv2 (in turn) at offset 0 of a file of 30-byte records */
static int m_preadv(void)
{
	int fd = open_data(2 * n + 2, O_RDONLY);
	char a[10], b[20];
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += (i % 2 ? preadv2(fd, iov, 2, 0, 0) : preadv(fd, iov, 2, 0)) == 30;
	close(fd);
	FAIL_AND_REPORT("preadv", ok, 0, preadv(-1, iov, 2, 0));
	return 0;
}

static int m_pwritev(void)
{
	int fd = open_data(0, O_WRONLY);
	static char a[] = "0123456789", b[] = "01234567890123456789";
	struct iovec iov[2] = {{a, 10}, {b, 20}};
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += (i % 2 ? pwritev2(fd, iov, 2, 30 * i, 0) :
			       pwritev(fd, iov, 2, 30 * i)) == 30;
	close(fd);
	FAIL_AND_REPORT("pwritev", ok, 0, pwritev(-1, iov, 2, 0));
	return 0;
}

static int m_writev(void)
{
	int fd = open_data(0, O_WRONLY);
	static char a[] = "0123456789", b[] = "01234567890123456789";
	struct iovec iov[2] = {{a, 10}, {b, 20}};
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += writev(fd, iov, 2) == 30;
	close(fd);
	FAIL_AND_REPORT("writev", ok, 0, writev(-1, iov, 2));
	return 0;
}

/* n calls of an fd operation on the data file opened with MODE (OK: the
 * call on fd worked), then the failing one BAD. */
#define M_FD_LOOP(name, MODE, OK, BAD) \
static int m_##name(void) \
{ \
	int fd = open_data(1, MODE); \
	long ok = 0; \
\
	for (int i = 0; i < n; i++) \
		ok += (OK); \
	close(fd); \
	FAIL_AND_REPORT(#name, ok, 0, BAD); \
	return 0; \
}
M_FD_LOOP(lseek, O_RDONLY, lseek(fd, 5, SEEK_SET) == 5, lseek(-1, 5, SEEK_SET))
M_FD_LOOP(fsync, O_WRONLY, fsync(fd) == 0, fsync(-1))
M_FD_LOOP(fdatasync, O_WRONLY, fdatasync(fd) == 0, fdatasync(-1))

static int m_dup(void)
{
	int fd = open_data(1, O_RDONLY);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		int d = dup(fd);

		ok += d >= 0;
		close(d);
	}
	close(fd);
	FAIL_AND_REPORT("dup", ok, 0, dup(-1));
	return 0;
}

static int m_dup2(void)
{
	int fd = open_data(1, O_RDONLY);
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += dup2(fd, 100) == 100;
	close(100);
	close(fd);
	FAIL_AND_REPORT("dup2", ok, 0, dup2(-1, 100));
	return 0;
}

static int m_fopen(void)
{
	long ok = 0;

	make_file("fopen.txt", 1);
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(path, "r");

		ok += f != NULL;
		if (f)
			fclose(f);
	}
	FAIL_AND_REPORT("fopen", ok, 0, fopen("/nonexistent/x", "r"));
	return 0;
}

static int m_fdopen(void)
{
	long ok = 0;

	make_file("fdopen.txt", 1);
	for (int i = 0; i < n; i++) {
		FILE *f = fdopen(open(path, O_RDONLY), "r");

		ok += f != NULL;
		if (f)
			fclose(f);
	}
	FAIL_AND_REPORT("fdopen", ok, 0, fdopen(-1, "r"));
	return 0;
}

static int m_fclose(void)
{
	long ok = 0;

	make_file("fclose.txt", 1);
	for (int i = 0; i < n; i++)
		ok += fclose(fopen(path, "r")) == 0;
	report("fclose", ok, 0, 0);
	return 0;
}

static FILE *stream_for(const char *mode, int lines)
{
	make_file("stream.txt", lines);
	return fopen(path, mode);
}

/* n calls of a stream operation on stream.txt opened with MODE after
 * writing LINES lines to it (OK: the call on f worked), reported with the
 * bytes each moves (VALUE). */
#define M_STREAM_LOOP(name, MODE, LINES, OK, VALUE) \
static int m_##name(void) \
{ \
	FILE *f = stream_for(MODE, LINES); \
	long ok = 0; \
\
	for (int i = 0; i < n; i++) \
		ok += (OK); \
	fclose(f); \
	report(#name, ok, VALUE, 0); \
	return 0; \
}
M_STREAM_LOOP(fread, "r", n + 1, fread(buf, 1, 10, f) == 10, 10)

/* N cheap buffered fwrite calls to /dev/null: events far faster than a
 * drain of a few batches keeps up with. Two streams in turn, so that no
 * two calls in a row are on one stream: each is a record of its own (the
 * sensor keeps a run of calls on one stream as one record). */
static int m_burst(void)
{
	FILE *f = fopen("/dev/null", "w"), *g = fopen("/dev/null", "w");
	long ok = 0;

	if (!f || !g)
		return 1;
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	setvbuf(g, NULL, _IOFBF, 1 << 16);
	for (int i = 0; i < n; i++)
		ok += fwrite(buf, 1, 8, i % 2 ? g : f) == 8;
	fclose(g);
	fclose(f);
	report("burst", ok, 8, 0);
	return 0;
}

static int m_fwrite(void)
{
	FILE *f = stream_for("w", 0);
	long ok = 0;

	memset(buf, 'y', 64);
	for (int i = 0; i < n; i++)
		ok += fwrite(buf, 1, 64, f) == 64;
	fclose(f);
	report("fwrite", ok, 64, 0);
	return 0;
}

M_STREAM_LOOP(fprintf, "w", 0, fprintf(f, "%d\n", 12345) == 6, 6)

static int my_vfprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

M_STREAM_LOOP(vfprintf, "w", 0, my_vfprintf(f, "%s-%d\n", "ab", 7) == 5, 5)
M_STREAM_LOOP(fputs, "w", 0, fputs("hello\n", f) >= 0, 6)
M_STREAM_LOOP(fgets, "r", n, fgets(buf, 32, f) != NULL, 21)

/* issue 31: the rest of stdio */
M_STREAM_LOOP(fread_unlocked, "r", n + 1, fread_unlocked(buf, 1, 10, f) == 10, 10)
M_STREAM_LOOP(fread_chk, "r", n + 1, __fread_chk(buf, sizeof(buf), 1, 10, f) == 10, 10)
M_STREAM_LOOP(fgets_chk, "r", n, __fgets_chk(buf, sizeof(buf), 32, f) != NULL, 21)
M_STREAM_LOOP(fwrite_unlocked, "w", 0, fwrite_unlocked("0123456789", 1, 10, f) == 10, 10)
M_STREAM_LOOP(fputs_unlocked, "w", 0, fputs_unlocked("hello\n", f) >= 0, 6)
M_STREAM_LOOP(fgets_unlocked, "r", n, fgets_unlocked(buf, 32, f) != NULL, 21)
M_STREAM_LOOP(fgetc, "r", n, fgetc(f) == "0123456789"[i % 10], 1)
M_STREAM_LOOP(getc, "r", n, getc(f) == "0123456789"[i % 10], 1)
/* glibc inlines the _unlocked character calls when optimising (they then
 * call it only at the buffer's end, __uflow/__overflow): called through a
 * pointer, they are the library's */
static int (*volatile p_getc_unlocked)(FILE *) = getc_unlocked;
static int (*volatile p_fgetc_unlocked)(FILE *) = fgetc_unlocked;
static int (*volatile p_putc_unlocked)(int, FILE *) = putc_unlocked;
static int (*volatile p_fputc_unlocked)(int, FILE *) = fputc_unlocked;
M_STREAM_LOOP(getc_unlocked, "r", n, p_getc_unlocked(f) != EOF, 1)
M_STREAM_LOOP(fgetc_unlocked, "r", n, p_fgetc_unlocked(f) != EOF, 1)
M_STREAM_LOOP(fputc, "w", 0, fputc('x', f) == 'x', 1)
M_STREAM_LOOP(putc, "w", 0, putc('x', f) == 'x', 1)
M_STREAM_LOOP(putc_unlocked, "w", 0, p_putc_unlocked('x', f) == 'x', 1)
M_STREAM_LOOP(fputc_unlocked, "w", 0, p_fputc_unlocked('x', f) == 'x', 1)

static int m_getline(void)
{
	FILE *f = stream_for("r", n);
	char *line = NULL;
	size_t cap = 0;
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += getline(&line, &cap, f) == 21;
	free(line);
	fclose(f);
	report("getline", ok, 21, 0);
	return 0;
}

static int m_getdelim(void)
{
	FILE *f = stream_for("r", n);
	char *line = NULL;
	size_t cap = 0;
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += getdelim(&line, &cap, '\n', f) == 21;
	free(line);
	fclose(f);
	report("getdelim", ok, 21, 0);
	return 0;
}

/* printf, puts, putchar write to stdout: the lines are part of the
 * output compared with the untraced run's */
static int m_printf(void)
{
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += printf("p%04d\n", i) == 6;
	report("printf", ok, 6, 0);
	return 0;
}

static int m_puts(void)
{
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += puts("hello") >= 0;
	report("puts", ok, 6, 0);
	return 0;
}

static int m_putchar(void)
{
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += putchar('c') == 'c';
	report("putchar", ok, 1, 0);
	return 0;
}

/* issue 31: file metadata, each with a failure on a missing file */
#define M_META(name, SETUP, OK, FAIL) \
static int m_##name(void) \
{ \
	long ok = 0; \
	char miss[4200]; \
\
	make_file("meta.txt", 3); \
	snprintf(miss, sizeof(miss), "%s/missing", dir); \
	SETUP; \
	for (int i = 0; i < n; i++) \
		ok += (OK); \
	FAIL_AND_REPORT(#name, ok, 0, FAIL); \
	return 0; \
}
static struct stat sb;
static struct statx sx;
M_META(stat, , stat(path, &sb) == 0 && sb.st_size == 63, stat(miss, &sb))
M_META(lstat, , lstat(path, &sb) == 0 && sb.st_size == 63, lstat(miss, &sb))
M_META(fstat, int fd = open(path, O_RDONLY), fstat(fd, &sb) == 0 && sb.st_size == 63,
       fstat(-1, &sb))
M_META(fstatat, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       fstatat(dfd, "meta.txt", &sb, 0) == 0 && sb.st_size == 63,
       fstatat(dfd, "missing", &sb, 0))
M_META(statx, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       statx(dfd, "meta.txt", 0, STATX_SIZE, &sx) == 0 && sx.stx_size == 63,
       statx(dfd, "missing", 0, STATX_SIZE, &sx))
/* _STAT_VER of x86_64's and most other Linux ABIs: 1 */
M_META(xstat, , __xstat(1, path, &sb) == 0 && sb.st_size == 63, __xstat(1, miss, &sb))
M_META(lxstat, , __lxstat(1, path, &sb) == 0 && sb.st_size == 63, __lxstat(1, miss, &sb))
M_META(fxstat, int fd = open(path, O_RDONLY),
       __fxstat(1, fd, &sb) == 0 && sb.st_size == 63, __fxstat(1, -1, &sb))
M_META(fxstatat, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       __fxstatat(1, dfd, "meta.txt", &sb, 0) == 0 && sb.st_size == 63,
       __fxstatat(1, dfd, "missing", &sb, 0))
M_META(access, , access(path, R_OK) == 0, access(miss, R_OK))
M_META(faccessat, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       faccessat(dfd, "meta.txt", R_OK, 0) == 0, faccessat(dfd, "missing", R_OK, 0))
M_META(truncate, , truncate(path, i) == 0, truncate(miss, 0))
M_META(ftruncate, int fd = open(path, O_RDWR), ftruncate(fd, i) == 0, ftruncate(-1, 0))
M_META(rename, char to[4200]; snprintf(to, sizeof(to), "%s/renamed", dir),
       rename(i % 2 ? to : path, i % 2 ? path : to) == 0, rename(miss, to))
M_META(renameat, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       renameat(dfd, i % 2 ? "renamed" : "meta.txt", dfd,
		i % 2 ? "meta.txt" : "renamed") == 0,
       renameat(dfd, "missing", dfd, "renamed"))
M_META(unlink, , unlink(path) == 0 && make_file("meta.txt", 1) == 0, unlink(miss))
M_META(unlinkat, int dfd = open(dir, O_RDONLY | O_DIRECTORY),
       unlinkat(dfd, "meta.txt", 0) == 0 && make_file("meta.txt", 1) == 0,
       unlinkat(dfd, "missing", 0))
M_META(mkdir, char d[4200],
       (snprintf(d, sizeof(d), "%s/d%d", dir, i), mkdir(d, 0755) == 0),
       mkdir(path, 0755))
M_META(rmdir, char d[4200],
       (snprintf(d, sizeof(d), "%s/r%d", dir, i), syscall(SYS_mkdir, d, 0755),
	rmdir(d) == 0), rmdir(miss))

/* chdir into DIR/sub, then open "meta.txt" and "../meta.txt" by relative
 * paths: the events carry DIR/sub/meta.txt and DIR/meta.txt */
static int m_chdir(void)
{
	char sub[4200];
	long ok = 0;

	make_file("meta.txt", 1);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	syscall(SYS_mkdir, sub, 0755);
	for (int i = 0; i < n; i++) {
		int fd;

		ok += chdir(sub) == 0;
		fd = open(i % 2 ? "../meta.txt" : "./x/../meta.txt",
			  O_RDONLY | (i % 2 ? 0 : O_CREAT), 0644);
		if (fd < 0 && i % 2 == 0) {
			syscall(SYS_mkdir, "x", 0755);
			fd = open("./x/../meta.txt", O_RDONLY | O_CREAT, 0644);
		}
		close(fd);
		ok += chdir(dir) == 0;
	}
	FAIL_AND_REPORT("chdir", ok, 0, chdir("missing"));
	return 0;
}

static int m_opendir(void)
{
	long ok = 0, ents = 0;

	make_file("meta.txt", 1);
	for (int i = 0; i < n; i++) {
		DIR *d = opendir(dir);

		ok += d != NULL;
		while (d && readdir(d))
			ents++;
		if (d)
			closedir(d);
	}
	FAIL_AND_REPORT("opendir", ok, ents / n, opendir("/nonexistent-dir"));
	return 0;
}

static int m_mmap(void)
{
	long ok = 0;
	int fd;

	make_file("map.txt", 100);
	fd = open(path, O_RDWR);
	for (int i = 0; i < n; i++) {
		char *p = mmap(NULL, 2100, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);

		if (p == MAP_FAILED)
			continue;
		p[0] = '0';
		ok += msync(p, 2100, MS_SYNC) == 0;
		ok += munmap(p, 2100) == 0;
	}
	close(fd);
	FAIL_AND_REPORT("mmap", ok, 0,
			mmap(NULL, 4096, PROT_READ, MAP_SHARED, -1, 0));
	return 0;
}

/* sendfile and copy_file_range: 2100 bytes each from data.txt to a new
 * file */
#define M_COPY(name, CALL) \
static int m_##name(void) \
{ \
	long ok = 0; \
	char out[4200]; \
	int in, o; \
\
	make_file("src.txt", 100); \
	in = open(path, O_RDONLY); \
	snprintf(out, sizeof(out), "%s/dst.txt", dir); \
	o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644); \
	for (int i = 0; i < n; i++) { \
		off64_t off = 0; \
		ok += (CALL) == 2100; \
	} \
	close(o); \
	FAIL_AND_REPORT(#name, ok, 2100, ({ off64_t off = 0; (void)off; int i = -1; (void)i; o = -1; CALL; })); \
	close(in); \
	return 0; \
}
M_COPY(sendfile, sendfile(o, in, (off_t *)&off, 2100 + 0 * i))
M_COPY(copy_file_range, copy_file_range(in, &off, o, NULL, 2100 + 0 * i, 0))

static int m_aio(void)
{
	long ok = 0;
	int fd;

	make_file("aio.txt", 10);
	fd = open(path, O_RDWR);
	for (int i = 0; i < n; i++) {
		struct aiocb cb;
		const struct aiocb *l[1] = {&cb};

		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = fd;
		cb.aio_buf = buf;
		cb.aio_nbytes = 100;
		cb.aio_offset = 0;
		if ((i % 2 ? aio_write(&cb) : aio_read(&cb)) != 0)
			continue;
		while (aio_error(&cb) == EINPROGRESS)
			aio_suspend(l, 1, NULL);
		ok += aio_return(&cb) == 100;
	}
	close(fd);
	report("aio", ok, 100, 0);
	return 0;
}

static int m_fflush(void)
{
	FILE *f = stream_for("w", 0);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		fputc('a', f);
		ok += fflush(f) == 0;
	}
	fclose(f);
	report("fflush", ok, 0, 0);
	return 0;
}

static int m_fseeko(void)
{
	FILE *f = stream_for("r", 2);
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += fseeko(f, 3, SEEK_SET) == 0;
	FAIL_AND_REPORT("fseeko", ok, 0, fseeko(f, -100, SEEK_SET));
	fclose(f);
	return 0;
}

static int m_fseek(void)
{
	FILE *f = stream_for("r", 2);
	long ok = 0;

	for (int i = 0; i < n; i++)
		ok += fseek(f, 3, SEEK_SET) == 0;
	FAIL_AND_REPORT("fseek", ok, 0, fseek(f, -100, SEEK_SET));
	fclose(f);
	return 0;
}

static int tcp_listener(struct sockaddr_in *a)
{
	socklen_t l = sizeof(*a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)a, sizeof(*a)) || listen(s, n + 8) ||
	    getsockname(s, (struct sockaddr *)a, &l))
		return -1;
	return s;
}

static int m_connect(void)
{
	struct sockaddr_in a;
	int l = tcp_listener(&a);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		ok += connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(s);
		close(accept(l, NULL, NULL));
	}
	close(l);
	a.sin_port = 0;
	{
		int s = socket(AF_INET, SOCK_STREAM, 0);

		FAIL_AND_REPORT("connect", ok, 0,
				connect(s, (struct sockaddr *)&a, sizeof(a)));
		close(s);
	}
	return 0;
}

static int m_accept(void)
{
	struct sockaddr_in a;
	int l = tcp_listener(&a);
	long ok = 0;

	for (int i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		int c;

		connect(s, (struct sockaddr *)&a, sizeof(a));
		c = accept(l, NULL, NULL);
		ok += c >= 0;
		close(c);
		close(s);
	}
	close(l);
	FAIL_AND_REPORT("accept", ok, 0, accept(-1, NULL, NULL));
	return 0;
}

static int tcp_pair(int *c, int *s)
{
	struct sockaddr_in a;
	int l = tcp_listener(&a);

	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*c, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	*s = accept(l, NULL, NULL);
	close(l);
	return *s >= 0 ? 0 : -1;
}

static int m_send(void)
{
	int c, s;
	long ok = 0;

	tcp_pair(&c, &s);
	for (int i = 0; i < n; i++) {
		ok += send(c, "0123456789abcdef", 16, 0) == 16;
		(void)!read(s, buf, 16);
	}
	close(c);
	close(s);
	FAIL_AND_REPORT("send", ok, 16, send(-1, buf, 16, 0));
	return 0;
}

static int m_recv(void)
{
	int c, s;
	long ok = 0;

	tcp_pair(&c, &s);
	for (int i = 0; i < n; i++) {
		(void)!write(c, "0123456789abcdef", 16);
		ok += recv(s, buf, 16, MSG_WAITALL) == 16;
	}
	close(c);
	close(s);
	FAIL_AND_REPORT("recv", ok, 16, recv(-1, buf, 16, 0));
	return 0;
}

static int udp_pair(int *a, int *b, struct sockaddr_in *to)
{
	socklen_t l = sizeof(*to);

	*a = socket(AF_INET, SOCK_DGRAM, 0);
	*b = socket(AF_INET, SOCK_DGRAM, 0);
	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(*b, (struct sockaddr *)to, sizeof(*to)) ||
	    getsockname(*b, (struct sockaddr *)to, &l))
		return -1;
	return 0;
}

static int m_sendto(void)
{
	struct sockaddr_in to;
	int a, b;
	long ok = 0;

	udp_pair(&a, &b, &to);
	for (int i = 0; i < n; i++) {
		ok += sendto(a, "datagram", 8, 0, (struct sockaddr *)&to,
			     sizeof(to)) == 8;
		(void)!read(b, buf, 8);
	}
	close(a);
	close(b);
	FAIL_AND_REPORT("sendto", ok, 8, sendto(-1, buf, 8, 0, NULL, 0));
	return 0;
}

static int m_recvfrom(void)
{
	struct sockaddr_in to, from;
	socklen_t fl;
	int a, b;
	long ok = 0;

	udp_pair(&a, &b, &to);
	for (int i = 0; i < n; i++) {
		fl = sizeof(from);
		(void)!sendto(a, "datagram", 8, 0, (struct sockaddr *)&to,
			      sizeof(to));
		ok += recvfrom(b, buf, 64, 0, (struct sockaddr *)&from, &fl) == 8;
	}
	close(a);
	close(b);
	FAIL_AND_REPORT("recvfrom", ok, 8, recvfrom(-1, buf, 8, 0, NULL, NULL));
	return 0;
}

static int m_fork(void)
{
	long ok = 0;

	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		int st;

		if (p == 0)
			_exit(7);
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 7)
			ok++;
	}
	report("fork", ok, 0, 0);
	return 0;
}

static void *noop(void *a)
{
	return a;
}

static int m_pthread_create(void)
{
	long ok = 0;

	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, noop, NULL) == 0) {
			ok++;
			pthread_join(t, NULL);
		}
	}
	report("pthread_create", ok, 0, 0);
	return 0;
}

static void *writer(void *a)
{
	int fd = open("/dev/null", O_WRONLY);

	for (int i = 0; i < n; i++)
		(void)!write(fd, buf, 64);
	close(fd);
	return a;
}

static int m_threads(void)
{
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	report("threads", 8, n, 0);
	return 0;
}

/* runs* modes: 3 threads each write N lines of 11 bytes with fputs to
 * DIR/runK (one open run each: no other call after them), then wait
 * (thread 0 in pthread_cond_wait, untraced; thread 1 in a traced read of
 * a pipe nobody writes; thread 2 in pause); the main thread writes N
 * lines to DIR/run3 and then ends the process: runsexit exit(0),
 * runsexec execs itself in mode write with N 0, runsabort abort().
 * runsbusy: the threads go on writing lines after their N until the
 * process ends (exit 20 ms after all three made theirs), so that the exit
 * takes their runs while they extend them. */
static pthread_mutex_t runs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t runs_cv = PTHREAD_COND_INITIALIZER;
static int runs_ready, runs_busy, runs_pipe[2];
/* not a constant: the compiler would make fputs of it an fwrite */
static const char *volatile runs_line = "abcdefghij\n";

static FILE *runs_file(int k)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/run%d", dir, k);
	return fopen(p, "w");
}

static void *runs_thread(void *a)
{
	int k = (int)(intptr_t)a;
	FILE *f = runs_file(k);
	char c;

	if (!f)
		return NULL;
	for (int i = 0; i < n; i++)
		fputs(runs_line, f);
	pthread_mutex_lock(&runs_mu);
	runs_ready++;
	pthread_cond_broadcast(&runs_cv);
	if (runs_busy) {
		pthread_mutex_unlock(&runs_mu);
		for (;;)
			fputs(runs_line, f);
	}
	if (k == 0)
		for (;;)
			pthread_cond_wait(&runs_cv, &runs_mu);
	pthread_mutex_unlock(&runs_mu);
	if (k == 1)
		(void)!read(runs_pipe[0], &c, 1);
	for (;;)
		pause();
	return NULL;
}

static int runs_main(const char *how)
{
	pthread_t t;
	FILE *f;
	char num[16];

	runs_busy = !strcmp(how, "busy");
	if (pipe(runs_pipe))
		return 1;
	for (int k = 0; k < 3; k++)
		pthread_create(&t, NULL, runs_thread, (void *)(intptr_t)k);
	if (!(f = runs_file(3)))
		return 1;
	for (int i = 0; i < n; i++)
		fputs(runs_line, f);
	pthread_mutex_lock(&runs_mu);
	while (runs_ready < 3)
		pthread_cond_wait(&runs_cv, &runs_mu);
	pthread_mutex_unlock(&runs_mu);
	if (runs_busy) {
		struct timespec ts = {0, 20000000};

		nanosleep(&ts, NULL);
		report("runsbusy", 3, 0, 0);
		exit(0);
	}
	report(how, 3, n, 0);
	if (!strcmp(how, "exec")) {
		fflush(NULL);
		snprintf(num, sizeof(num), "%d", 0);
		execl(self, self, "write", num, dir, (char *)NULL);
		return 127;
	}
	if (!strcmp(how, "abort"))
		abort();
	exit(0);
}

static int m_runsexit(void)
{
	return runs_main("exit");
}

static int m_runsexec(void)
{
	return runs_main("exec");
}

static int m_runsabort(void)
{
	return runs_main("abort");
}

static int m_runsbusy(void)
{
	return runs_main("busy");
}

static int m_segv(void)
{
	int fd = open("/dev/null", O_WRONLY);

	for (int i = 0; i < n; i++)
		(void)!write(fd, buf, 64);
	report("segv", n, 0, 0);
	fflush(stdout);
	*nullp = 1;
	return 0;
}

static int m_abort(void)
{
	int fd = open("/dev/null", O_WRONLY);

	for (int i = 0; i < n; i++)
		(void)!write(fd, buf, 64);
	report("abort", n, 0, 0);
	fflush(stdout);
	abort();
}

static int m_exit(void)
{
	report("exit", 1, 3, 0);
	fflush(stdout);
	exit(3);
}

/* exec self in mode "write" with argument wn */
static int exec_write(int wn)
{
	char num[32];

	snprintf(num, sizeof(num), "%d", wn);
	fflush(stdout);
	execl(self, self, "write", num, dir, (char *)NULL);
	report("exec", 0, 0, errno);
	return 1;
}

static int m_exec(void)
{
	return exec_write(n);
}

/* n writes of 64 bytes to /dev/null, then exec (a stream with enough
 * records to calibrate again before it ends) */
static int m_writeexec(void)
{
	int fd = open("/dev/null", O_WRONLY);
	long ok = 0;

	memset(buf, 'x', 64);
	for (int i = 0; i < n; i++)
		ok += write(fd, buf, 64) == 64;
	close(fd);
	report("writeexec", ok, 0, 0);
	return exec_write(1);
}

/* n writes, an exec of what that fails, n writes again */
static int exec_fails(const char *mode, const char *what)
{
	int fd = open("/dev/null", O_WRONLY), e;
	long ok = 0;

	memset(buf, 'x', 64);
	for (int i = 0; i < n; i++)
		ok += write(fd, buf, 64) == 64;
	fflush(stdout);
	execl(what, "prog", (char *)NULL);
	e = errno;
	for (int i = 0; i < n; i++)
		ok += write(fd, buf, 64) == 64;
	close(fd);
	report(mode, ok, 0, e);
	return 0;
}

/* an exec that fails after it started (a file that is not executable:
 * EACCES): the process goes on as a new stream */
static int m_execfail(void)
{
	int fd;

	snprintf(path, sizeof(path), "%s/not-executable", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	return exec_fails("execfail", path);
}

/* an exec of no such file (what a search of PATH meets): the process goes
 * on in the same stream */
static int m_execnofile(void)
{
	return exec_fails("execnofile", "/nonexistent-tapestry-test/prog");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int m_timed(void)
{
	int fd = open("/dev/null", O_WRONLY);
	uint64_t before, after;

	memset(buf, 'x', 64);
	before = mono_ns();
	for (int i = 0; i < n; i++)
		if (write(fd, buf, 64) != 64)
			return 1;
	after = mono_ns();
	close(fd);
	printf("timed before=%llu after=%llu\n", (unsigned long long)before,
	       (unsigned long long)after);
	return 0;
}

/* posix_spawn of /bin/true, posix_spawnp of true, posix_spawn of no such
 * file; each child waited for */
static int m_spawn(void)
{
	static char name[] = "true";
	char *argv[] = {name, NULL};
	pid_t p1 = -1, p2 = -1, p3 = -1;
	int r1, r2, r3, st;

	r1 = posix_spawn(&p1, "/bin/true", NULL, NULL, argv, environ);
	if (r1 == 0)
		waitpid(p1, &st, 0);
	r2 = posix_spawnp(&p2, "true", NULL, NULL, argv, environ);
	if (r2 == 0)
		waitpid(p2, &st, 0);
	r3 = posix_spawn(&p3, "/nonexistent-tapestry-test/prog", NULL, NULL, argv,
			 environ);
	if (r3 == 0)
		waitpid(p3, &st, 0);
	report("spawn", (r1 == 0) + (r2 == 0), 0, r3);
	return 0;
}

static int m_forkexec(void)
{
	pid_t p;
	int st = 0;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		char num[32];

		snprintf(num, sizeof(num), "%d", n);
		execl(self, self, "write", num, dir, (char *)NULL);
		_exit(127);
	}
	waitpid(p, &st, 0);
	report("forkexec", WIFEXITED(st) && WEXITSTATUS(st) == 0, 0, 0);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} modes[] = {
	{"open", m_open}, {"openat", m_openat}, {"creat", m_creat},
	{"close", m_close}, {"read", m_read}, {"write", m_write},
	{"pread", m_pread}, {"pwrite", m_pwrite}, {"readv", m_readv},
	{"writev", m_writev}, {"lseek", m_lseek}, {"fsync", m_fsync},
	{"fdatasync", m_fdatasync}, {"dup", m_dup}, {"dup2", m_dup2},
	{"fopen", m_fopen}, {"fdopen", m_fdopen}, {"fclose", m_fclose},
	{"fread", m_fread}, {"fwrite", m_fwrite}, {"fprintf", m_fprintf},
	{"vfprintf", m_vfprintf}, {"fputs", m_fputs}, {"fgets", m_fgets},
	{"fflush", m_fflush}, {"fseek", m_fseek}, {"connect", m_connect},
	{"accept", m_accept}, {"send", m_send}, {"recv", m_recv},
	{"sendto", m_sendto}, {"recvfrom", m_recvfrom}, {"fork", m_fork},
	{"pthread_create", m_pthread_create}, {"threads", m_threads},
	{"segv", m_segv}, {"abort", m_abort}, {"exit", m_exit},
	{"exec", m_exec}, {"writeexec", m_writeexec}, {"forkexec", m_forkexec},
	{"execfail", m_execfail}, {"burst", m_burst}, {"timed", m_timed},
	{"execnofile", m_execnofile}, {"spawn", m_spawn},
	{"fread_unlocked", m_fread_unlocked},
	{"fwrite_unlocked", m_fwrite_unlocked},
	{"fputs_unlocked", m_fputs_unlocked},
	{"fgets_unlocked", m_fgets_unlocked}, {"fgetc", m_fgetc},
	{"getc", m_getc}, {"getc_unlocked", m_getc_unlocked},
	{"fgetc_unlocked", m_fgetc_unlocked}, {"fputc", m_fputc},
	{"putc", m_putc}, {"putc_unlocked", m_putc_unlocked},
	{"fputc_unlocked", m_fputc_unlocked}, {"getline", m_getline},
	{"getdelim", m_getdelim}, {"printf", m_printf}, {"puts", m_puts},
	{"putchar", m_putchar}, {"stat", m_stat}, {"lstat", m_lstat},
	{"fstat", m_fstat}, {"fstatat", m_fstatat}, {"statx", m_statx},
	{"access", m_access}, {"faccessat", m_faccessat},
	{"truncate", m_truncate}, {"ftruncate", m_ftruncate},
	{"rename", m_rename}, {"renameat", m_renameat}, {"unlink", m_unlink},
	{"unlinkat", m_unlinkat}, {"mkdir", m_mkdir}, {"rmdir", m_rmdir},
	{"chdir", m_chdir}, {"opendir", m_opendir}, {"mmap", m_mmap},
	{"sendfile", m_sendfile}, {"copy_file_range", m_copy_file_range},
	{"aio", m_aio}, {"runsexit", m_runsexit}, {"runsexec", m_runsexec},
	{"runsabort", m_runsabort}, {"runsbusy", m_runsbusy},
	{"fread_chk", m_fread_chk}, {"fgets_chk", m_fgets_chk},
	{"pread_chk", m_pread_chk}, {"preadv", m_preadv}, {"pwritev", m_pwritev},
	{"fseeko", m_fseeko}, {"xstat", m_xstat}, {"lxstat", m_lxstat},
	{"fxstat", m_fxstat}, {"fxstatat", m_fxstatat},
};

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: prog_libc MODE N DIR\n");
		return 2;
	}
	self = argv[0];
	n = atoi(argv[2]);
	dir = argv[3];
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(modes[i].name, argv[1]))
			return modes[i].fn();
	fprintf(stderr, "prog_libc: unknown mode %s\n", argv[1]);
	return 2;
}
