/*
 * tests/sensor/prog_fds.c - a program that rearranges its descriptors the
 * way daemons and process managers do, and prints what it saw, so that a
 * run with the sensor preloaded must print exactly what a run without it
 * prints.
 *
 *   prog_fds MODE DIR
 *
 * closeall   close() every descriptor from 3 to the soft RLIMIT_NOFILE
 * closerange close_range(3, ~0U, 0)
 * closefrom  closefrom(3)
 *            then each opens DIR/MODE.out (prints the number it got) and
 *            writes LINES lines into it.
 * lowfork    saves stdout at fd 10, closes 0, 1 and 2, forks: the child
 *            opens DIR/low.in, DIR/low.out, DIR/low.err (0, 1, 2), dup2s
 *            them onto 0-2 again as a process manager does, reads fd 0,
 *            writes LINES lines to fd 1 and one to fd 2; both print every
 *            result on fd 10.
 * lowexec    closes 0, 1 and 2 and executes itself as lowchild (the same
 *            steps as lowfork's child, in a new image whose sensor started
 *            with 0-2 closed).
 * calls      the calls the sensor records for descriptors: writes LINES
 *            lines to DIR/calls-1.out, close_range(3, ~0U, 0), LINES to
 *            calls-2.out, closefrom(3), LINES to calls-3.out; then
 *            dup3(fd of calls-4.out, 20, O_CLOEXEC), LINES lines to fd 20,
 *            and dup3(20, 20, 0), which fails with EINVAL.
 * busy       4 threads write LINES * 200 times each to DIR/busy-T.out while
 *            the main thread closes every descriptor from 100 up, 50 times,
 *            then close_range(100, ~0U) 20 times: the runtime's descriptors
 *            move (or are made again) under a sender that is busy.
 * forkclose  FORKS times: fork; the child calls close_range(3, ~0U, 0)
 *            first thing (while its sensor's sender thread is starting),
 *            then writes LINES lines to DIR/fc-I.out; the parent waits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINES 100
#define SAVED 10
#define FORKS 40

static const char *dir;

static const char *ename(int r)
{
	return r < 0 ? strerrorname_np(errno) : "0";
}

/* Open DIR/NAME for writing, print the number, write LINES lines. */
static int write_lines(int out, const char *name)
{
	char path[4096];
	int fd, ok = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	dprintf(out, "open %s: fd %d errno %s\n", name, fd, ename(fd));
	if (fd < 0)
		return 1;
	for (int i = 0; i < LINES; i++)
		ok += write(fd, "0123456789abcdef\n", 17) == 17;
	dprintf(out, "writes %d of %d\n", ok, LINES);
	return close(fd) != 0 || ok != LINES;
}

static int closeall(int how)
{
	struct rlimit rl;
	int r = 0;

	if (how == 0) {
		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 1 << 24)
			rl.rlim_cur = 1 << 24;
		for (long fd = 3; fd < (long)rl.rlim_cur; fd++)
			close((int)fd);	/* most fail: not open */
	} else if (how == 1) {
		r = close_range(3, ~0U, 0);
	} else {
		closefrom(3);
	}
	printf("close: %d errno %s\n", r, ename(r));
	fflush(stdout);
	return write_lines(1, how == 0 ? "closeall.out" :
			   how == 1 ? "closerange.out" : "closefrom.out");
}

/* The "calls" mode (above). */
static int calls(void)
{
	char path[4096];
	int r, fd, bad = 0, ok = 0;

	bad |= write_lines(1, "calls-1.out");
	r = close_range(3, ~0U, 0);
	printf("close_range: %d errno %s\n", r, ename(r));
	fflush(stdout);
	bad |= write_lines(1, "calls-2.out");
	closefrom(3);
	bad |= write_lines(1, "calls-3.out");
	snprintf(path, sizeof(path), "%s/calls-4.out", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	r = dup3(fd, 20, O_CLOEXEC);
	printf("dup3 onto 20: %d errno %s cloexec %d\n", r, ename(r),
	       (fcntl(20, F_GETFD) & FD_CLOEXEC) != 0);
	close(fd);
	for (int i = 0; i < LINES; i++)
		ok += write(20, "0123456789abcdef\n", 17) == 17;
	printf("writes to fd 20: %d of %d\n", ok, LINES);
	r = dup3(20, 20, 0);
	printf("dup3 20 onto 20: %d errno %s\n", r, ename(r));
	close(20);
	return bad || ok != LINES;
}

/* Open a file at the lowest free number and dup2 it onto want. */
static int open_onto(const char *name, int flags, int want)
{
	char path[4096];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags, 0644);
	dprintf(SAVED, "open %s: fd %d errno %s\n", name, fd, ename(fd));
	if (fd < 0)
		return -1;
	r = dup2(fd, want);
	dprintf(SAVED, "dup2 %s onto %d: %d errno %s\n", name, want, r,
		ename(r));
	if (fd != want)
		close(fd);
	return r;
}

/* The child of a process manager: stdin, stdout, stderr from files. */
static int lowchild(void)
{
	char buf[64];
	ssize_t n;
	int ok = 0;

	if (open_onto("low.in", O_RDONLY, 0) < 0 ||
	    open_onto("low.out", O_CREAT | O_WRONLY | O_TRUNC, 1) < 0 ||
	    open_onto("low.err", O_CREAT | O_WRONLY | O_TRUNC, 2) < 0)
		return 1;
	n = read(0, buf, sizeof(buf));
	dprintf(SAVED, "read fd 0: %zd errno %s\n", n, ename((int)n));
	for (int i = 0; i < LINES; i++)
		ok += write(1, "0123456789abcdef\n", 17) == 17;
	dprintf(SAVED, "writes to fd 1: %d of %d\n", ok, LINES);
	n = write(2, "err\n", 4);
	dprintf(SAVED, "write fd 2: %zd errno %s\n", n, ename((int)n));
	return ok != LINES;
}

static void *busy_writer(void *arg)
{
	char path[4096];
	int fd, ok = 0;

	snprintf(path, sizeof(path), "%s/busy-%ld.out", dir, (long)arg);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < LINES * 200; i++)
		ok += write(fd, "0123456789abcdef\n", 17) == 17;
	if (fd >= 0)
		close(fd);
	return (void *)(long)ok;
}

static int busy(void)
{
	pthread_t t[4];
	struct rlimit rl;
	long lim, total = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 4096)
		rl.rlim_cur = 4096;
	lim = (long)rl.rlim_cur;
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, busy_writer, (void *)i))
			return 1;
	for (int r = 0; r < 50; r++)
		for (long fd = 100; fd < lim; fd++)
			close((int)fd);		/* the writers' are below 100 */
	for (int r = 0; r < 20; r++) {
		close_range(100, ~0U, 0);
		usleep(5000);
	}
	for (int i = 0; i < 4; i++) {
		void *ok;

		pthread_join(t[i], &ok);
		total += (long)ok;
	}
	printf("busy: %ld writes of %d\n", total, 4 * LINES * 200);
	return total != 4 * LINES * 200;
}

static int closelow(void)
{
	if (dup2(1, SAVED) != SAVED)
		return -1;
	fflush(stdout);
	for (int fd = 0; fd < 3; fd++) {
		int r = close(fd);

		dprintf(SAVED, "close %d: %d errno %s\n", fd, r, ename(r));
	}
	return 0;
}

static int lowfork(void)
{
	pid_t pid;
	int st = 0;

	if (closelow())
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(lowchild());
	waitpid(pid, &st, 0);
	dprintf(SAVED, "child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

static int lowexec(const char *self)
{
	char mode[] = "lowchild";
	char *argv[] = {(char *)self, mode, (char *)dir, NULL};

	if (closelow())
		return 1;
	execv(self, argv);
	dprintf(SAVED, "exec: errno %s\n", strerrorname_np(errno));
	return 1;
}

static int forkclose(void)
{
	char name[32];
	int bad = 0, st;

	fflush(stdout);
	for (int i = 0; i < FORKS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			int r = close_range(3, ~0U, 0);

			printf("child %d close_range: %d errno %s\n", i, r,
			       ename(r));
			fflush(stdout);
			snprintf(name, sizeof(name), "fc-%d.out", i);
			_exit(write_lines(1, name));
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad = 1;
	}
	printf("forks %d bad %d\n", FORKS, bad);
	return bad;
}

int main(int argc, char **argv)
{
	char in[4096];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: prog_fds MODE DIR\n");
		return 2;
	}
	dir = argv[2];
	snprintf(in, sizeof(in), "%s/low.in", dir);
	if (!(f = fopen(in, "w")) || fputs("input\n", f) < 0 || fclose(f))
		return 1;
	if (!strcmp(argv[1], "closeall"))
		return closeall(0);
	if (!strcmp(argv[1], "closerange"))
		return closeall(1);
	if (!strcmp(argv[1], "closefrom"))
		return closeall(2);
	if (!strcmp(argv[1], "lowfork"))
		return lowfork();
	if (!strcmp(argv[1], "lowexec"))
		return lowexec(argv[0]);
	if (!strcmp(argv[1], "lowchild"))
		return lowchild();
	if (!strcmp(argv[1], "calls"))
		return calls();
	if (!strcmp(argv[1], "busy"))
		return busy();
	if (!strcmp(argv[1], "forkclose"))
		return forkclose();
	fprintf(stderr, "prog_fds: unknown mode %s\n", argv[1]);
	return 2;
}
