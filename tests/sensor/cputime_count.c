/*
 * tests/sensor/cputime_count.c - a preload shim for tests/sensor/mpi_compute.sh:
 * counts the process's clock_gettime(CLOCK_THREAD_CPUTIME_ID) calls (the MPI
 * sensor's CPU-time reads; preloaded before the sensor, it sees the sensor's
 * calls) and prints "cputime_count: PID N" on stderr at exit. Every call
 * goes on to the next clock_gettime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static _Atomic unsigned long reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);

	if (!next)
		next = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	if (id == CLOCK_THREAD_CPUTIME_ID)
		atomic_fetch_add(&reads, 1);
	return next(id, ts);
}

__attribute__((destructor)) static void cputime_report(void)
{
	fprintf(stderr, "cputime_count: %ld %lu\n", (long)getpid(), atomic_load(&reads));
}
