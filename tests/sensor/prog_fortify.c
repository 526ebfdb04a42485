/*
 * tests/sensor/prog_fortify.c - opens files through glibc's fortified
 * open/openat (__open_2, __open64_2, __openat_2, __openat64_2), as
 * distribution binaries built with _FORTIFY_SOURCE do, and prints every
 * result and errno, so that a run with the sensor preloaded must print
 * exactly what a run without it prints.
 *
 *   prog_fortify DIR
 *
 * Built with -O2 -D_FORTIFY_SOURCE=2 (tests/sensor/local.am): glibc's
 * fcntl2.h then turns an open/openat whose flags are not a compile-time
 * constant and that passes no mode into a call of __open*_2; the flags are
 * read from a volatile for that. fortify.sh checks with nm that the four
 * symbols are referenced. For each variant V (open, open64, openat,
 * openat64): writes DIR/V.txt (plain open, constant flags), opens it
 * through the fortified call (openat relative to DIR), reads it, closes
 * it; then opens DIR/V.missing the same way (ENOENT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Built without optimisation (a user's CFLAGS=-O0 comes after the -O2 of
 * local.am), glibc does not redirect: call the fortified functions by
 * name, as the redirection would. */
#if !defined(_FORTIFY_SOURCE) || _FORTIFY_SOURCE < 1 || !defined(__OPTIMIZE__)
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
#define F_OPEN(p, f) __open_2(p, f)
#define F_OPEN64(p, f) __open64_2(p, f)
#define F_OPENAT(d, p, f) __openat_2(d, p, f)
#define F_OPENAT64(d, p, f) __openat64_2(d, p, f)
#else
#define F_OPEN(p, f) open(p, f)
#define F_OPEN64(p, f) open64(p, f)
#define F_OPENAT(d, p, f) openat(d, p, f)
#define F_OPENAT64(d, p, f) openat64(d, p, f)
#endif

#define DATA "fortified 0123456789\n"

static volatile int rdonly = O_RDONLY;
static int dirfd_;

static const char *ename(int r)
{
	return r < 0 ? strerrorname_np(errno) : "0";
}

/* The fortified call of variant v on name (relative to DIR for openat). */
static int fopen_v(int v, const char *dir, const char *name)
{
	char path[4096];
	int flags = rdonly;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	switch (v) {
	case 0:
		return F_OPEN(path, flags);
	case 1:
		return F_OPEN64(path, flags);
	case 2:
		return F_OPENAT(dirfd_, name, flags);
	default:
		return F_OPENAT64(dirfd_, name, flags);
	}
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "open", "open64", "openat",
					     "openat64" };
	const char *dir;
	char path[4096], name[64], buf[64];
	int fd, r;

	if (argc != 2) {
		fprintf(stderr, "usage: prog_fortify DIR\n");
		return 2;
	}
	dir = argv[1];
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd_ < 0) {
		perror(dir);
		return 1;
	}
	printf("dir: %d\n", dirfd_);
	for (int v = 0; v < 4; v++) {
		snprintf(path, sizeof(path), "%s/%s.txt", dir, names[v]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, DATA, strlen(DATA)) !=
		    (ssize_t)strlen(DATA) || close(fd) < 0) {
			perror(path);
			return 1;
		}
		snprintf(name, sizeof(name), "%s.txt", names[v]);
		errno = 0;
		fd = fopen_v(v, dir, name);
		printf("%s %s: %d %s\n", names[v], name, fd, ename(fd));
		if (fd < 0)
			return 1;
		r = (int)read(fd, buf, sizeof(buf));
		printf("read: %d %s\n", r, ename(r));
		r = close(fd);
		printf("close: %d %s\n", r, ename(r));
		snprintf(name, sizeof(name), "%s.missing", names[v]);
		errno = 0;
		fd = fopen_v(v, dir, name);
		printf("%s %s: %d %s\n", names[v], name, fd, ename(fd));
	}
	return 0;
}
