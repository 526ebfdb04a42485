/*
 * bench/sensor_overhead.c - what the libc sensor adds to a cheap call.
 *
 *   sensor_overhead [REPS [CALLS]]
 *
 * Times write(fd of /dev/null, buf, 64) two ways in one process, in
 * alternating repetitions: through the symbol `write` (the sensor's
 * wrapper when libtapestry-sensor.so is preloaded) and through libc's own
 * write found with dlsym on libc.so.6 (never traced). Prints the median ns
 * per call of each and the difference. Run it through
 * bench/sensor_overhead.sh, which preloads the sensor with a receiver
 * running, so that the traced path is the normal one (not the drop path).
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

typedef ssize_t (*write_fn)(int, const void *, size_t);

static double run(write_fn w, int fd, const char *buf, int calls)
{
	uint64_t t0 = bench_now_ns();

	for (int i = 0; i < calls; i++)
		w(fd, buf, 64);
	return (double)(bench_now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 301;
	int calls = argc > 2 ? atoi(argv[2]) : 5000;
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	write_fn real, sym = write;
	double *u, *t, *d;
	char buf[64];
	int fd;

	if (reps < 1 || calls < 1 || !libc) {
		fprintf(stderr, "usage: sensor_overhead [REPS [CALLS]]\n");
		return 2;
	}
	real = (write_fn)dlsym(libc, "write");
	fd = open("/dev/null", O_WRONLY);
	u = calloc((size_t)reps, sizeof(double));
	t = calloc((size_t)reps, sizeof(double));
	d = calloc((size_t)reps, sizeof(double));
	if (!real || fd < 0 || !u || !t || !d)
		return 1;
	memset(buf, 'b', sizeof(buf));
	run(real, fd, buf, calls);	/* warm up */
	run(sym, fd, buf, calls);
	for (int r = 0; r < reps; r++) {
		u[r] = run(real, fd, buf, calls);
		t[r] = run(sym, fd, buf, calls);
		d[r] = t[r] - u[r];
	}
	qsort(u, (size_t)reps, sizeof(double), bench_cmp_double);
	qsort(t, (size_t)reps, sizeof(double), bench_cmp_double);
	qsort(d, (size_t)reps, sizeof(double), bench_cmp_double);
	printf("write(/dev/null, 64 B), %s, median of %d x %d calls:\n",
	       real == sym ? "sensor NOT preloaded" : "sensor preloaded",
	       reps, calls);
	printf("  untraced (libc write)   %7.1f ns/call\n", u[reps / 2]);
	printf("  through write symbol    %7.1f ns/call\n", t[reps / 2]);
	printf("  added                   %7.1f ns/call (p10 %.1f, p90 %.1f)\n",
	       d[reps / 2], d[reps / 10], d[reps * 9 / 10]);
	close(fd);
	free(u);
	free(t);
	free(d);
	return 0;
}
