/*
 * bench/lttng_bench.c - the cost of one active LTTng-UST tracepoint event,
 * measured the way bench/sensor_overhead measures the libc sensor.
 *
 *   lttng_bench [REPS [CALLS]]
 *
 * In alternating repetitions of CALLS iterations: write(fd of /dev/null,
 * buf, 64) alone, and the same write followed by the tapestry_bench:write
 * tracepoint carrying what the sensor records for it (an instrumented
 * write, as a wrapper built on LTTng-UST would do). Prints the median ns
 * per iteration of each and of the difference, and whether the tracepoint
 * was enabled (by a recording session) when the loops ran. Exit status 3
 * when it was not: the "traced" figure is then the disabled-tracepoint
 * cost, not an event's. Built and run by bench/sensor_overhead.sh, which
 * starts lttng-sessiond and the session around it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lttng_tp.h"
#include "timing.h"

static double plain(int fd, const char *buf, int calls)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < calls; i++)
		(void)!write(fd, buf, 64);
	return (double)(bench_now_ns() - t0) / calls;
}

static double traced(int fd, const char *buf, int calls)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < calls; i++) {
		ssize_t r = write(fd, buf, 64);

		lttng_ust_tracepoint(tapestry_bench, write, fd, 64, r, 1,
				     r < 0 ? 1 : 0, -1);
	}
	return (double)(bench_now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 301;
	int calls = argc > 2 ? atoi(argv[2]) : 5000;
	double *u, *t, *d;
	char buf[64];
	int fd, enabled;

	if (reps < 1 || calls < 1) {
		fprintf(stderr, "usage: lttng_bench [REPS [CALLS]]\n");
		return 2;
	}
	fd = open("/dev/null", O_WRONLY);
	u = calloc((size_t)reps, sizeof(double));
	t = calloc((size_t)reps, sizeof(double));
	d = calloc((size_t)reps, sizeof(double));
	if (fd < 0 || !u || !t || !d)
		return 1;
	memset(buf, 'b', sizeof(buf));
	enabled = lttng_ust_tracepoint_enabled(tapestry_bench, write) != 0;
	plain(fd, buf, calls);	/* warm up */
	traced(fd, buf, calls);
	for (int r = 0; r < reps; r++) {
		u[r] = plain(fd, buf, calls);
		t[r] = traced(fd, buf, calls);
		d[r] = t[r] - u[r];
	}
	qsort(u, (size_t)reps, sizeof(double), bench_cmp_double);
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_double);
	qsort(d, (size_t)reps, sizeof(double), bench_cmp_double);
	printf("write(/dev/null, 64 B) + LTTng-UST tracepoint (%s), "
	       "median of %d x %d calls:\n",
	       enabled ? "enabled" : "NOT enabled", reps, calls);
	printf("  untraced (write alone)  %7.1f ns/call\n", u[reps / 2]);
	printf("  write + tracepoint      %7.1f ns/call\n", t[reps / 2]);
	printf("  added                   %7.1f ns/call (p10 %.1f, p90 %.1f)\n",
	       d[reps / 2], d[reps / 10], d[reps * 9 / 10]);
	printf("events %lld\n", (long long)(reps + 1) * calls);
	close(fd);
	free(u);
	free(t);
	free(d);
	return enabled ? 0 : 3;
}
