/*
 * bench/sustained.c - a tracer's sustained cost on a cheap call (issue 23):
 * one loop of CALLS write(fd of /dev/null, buf, 64), timed by the program
 * itself from its first call to its last, so that everything the tracer
 * does meanwhile (its sender thread's encoding, compression and sends, the
 * traffic between cores, the collectors on the same machine) is in the
 * figure, not only the wrapper's own work.
 *
 *   sustained [CALLS [thread|own]]	(default 2000000)
 *
 * With "thread", a second thread that only sleeps is started first: the
 * floor of any tracer with a thread in the program's process (glibc's
 * write then takes its cancellation path, and the kernel locks the file
 * position and counts file references once the descriptor table is shared
 * between threads). With "own", that thread first takes a descriptor table
 * of its own (unshare(CLONE_FILES)), as the tapestry sender does: the
 * floor of such a tracer (glibc's cancellation path only).
 *
 * Prints "sustained: ns_per_call X calls N cpu_main_ns M cpu_proc_ns P":
 * after the loop, the CPU time (user + system) of the main thread and of
 * the whole process (a tracer's threads included) since start. Built twice by
 * bench/sustained.sh: as is (the libc sensor's wrapper when it is
 * preloaded) and with -DWITH_LTTNG and the provider bench/lttng_tp.{h,c}
 * (each write followed by the tapestry_bench:write tracepoint, what a
 * wrapper built on LTTng-UST would record).
 */
#define _GNU_SOURCE	/* RUSAGE_THREAD */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef WITH_LTTNG
#include "lttng_tp.h"
#endif

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time (user + system) in ns of who: RUSAGE_THREAD or RUSAGE_SELF */
static uint64_t cpu_ns(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

static void *idle(void *arg)
{
	if (arg)
		unshare(CLONE_FILES);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000000;
	char buf[64];
	uint64_t t0, t1;
	int fd;

	if (calls < 1 || (argc > 2 && strcmp(argv[2], "thread") &&
			  strcmp(argv[2], "own"))) {
		fprintf(stderr, "usage: sustained [CALLS [thread|own]]\n");
		return 2;
	}
	if (argc > 2) {
		pthread_t th;

		if (pthread_create(&th, NULL, idle,
				   strcmp(argv[2], "own") ? NULL : argv[2]))
			return 1;
	}
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	memset(buf, 'b', sizeof(buf));
	t0 = now();
	for (long i = 0; i < calls; i++) {
		ssize_t r = write(fd, buf, 64);

#ifdef WITH_LTTNG
		lttng_ust_tracepoint(tapestry_bench, write, fd, 64, r, 1, r < 0 ? 1 : 0, -1);
#else
		(void)r;
#endif
	}
	t1 = now();
	printf("sustained: ns_per_call %.1f calls %ld cpu_main_ns %llu cpu_proc_ns %llu\n",
	       (double)(t1 - t0) / (double)calls, calls,
	       (unsigned long long)cpu_ns(RUSAGE_THREAD),
	       (unsigned long long)cpu_ns(RUSAGE_SELF));
	close(fd);
	return 0;
}
