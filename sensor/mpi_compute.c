/*
 * sensor/mpi_compute.c - computation volumes between MPI calls.
 *
 * For time-independent traces ([000]) each stretch of a thread between two
 * MPI calls becomes a COMPUTE event with a volume. Method 1 counts user
 * instructions with perf_event_open when the kernel offers the counter;
 * method 0, the normal path on virtual machines without counters, takes the
 * thread's CPU time times a flop rate calibrated once at MPI_Init on a fixed
 * loop of double multiply-adds. The method and rate go into the stream's
 * metadata. CPU time is read with clock_gettime(CLOCK_THREAD_CPUTIME_ID),
 * a real system call (no vDSO path): about 0.15 us a read here.
 *
 * Method 0 reads it once per MPI call, at the exit, when the stretch before
 * the call is short (under MW_CPU_ENTRY_MIN_NS): a system call just before
 * an MPI call makes the call faster than the program's own (an untraced
 * MPI_Sendrecv, 64 bytes between two ranks: 397 ns with one
 * CLOCK_THREAD_CPUTIME_ID read just before it, against 441 without; medians
 * of 12 alternated runs), so the trace would show faster exchanges than the
 * program has. The stretch's
 * COMPUTE event then waits for that read and goes out just before the
 * call's own record. Its CPU time is the thread's CPU time between the
 * two exit reads, at most the stretch's wall time: the call takes the time
 * off the CPU first (a call that sleeps or yields keeps it), and a
 * preemption longer than the call lands on the stretch, less at most the
 * call's own CPU time. Longer stretches are read at the entry as well:
 * exact, and the read is then a small part of the stretch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sensor/mpi_int.h"

#define TLS __attribute__((tls_model("initial-exec"))) __thread

/* Calibration loop: iterations per timing, timings kept (best of). */
#define CAL_ITERS 1000000u
#define CAL_ROUNDS 3
#define READ_PROBES 31		/* counter reads timed at MPI_Init */
#define READ_MAX_NS 400		/* =auto: a dearer read, method 0 (CPU time) */

/* Method 0: stretches shorter than this are not read at the MPI entry. */
#define MW_CPU_ENTRY_MIN_NS 50000u
/* Method 0: when the exit's read and records, from the call's end stamp,
 * last longer than this (a wait for room, a page fault, a preemption; the
 * read alone takes about 0.15 us), the next stretch's CPU time starts from
 * a new read. */
#define MW_CPU_LEAD_MAX_NS 1000u

struct compute_tls {
	int have;		/* a previous MPI exit is recorded */
	int perf_state;		/* 0 untried, 1 open, -1 failed */
	int perf_fd;
	int deferred;		/* a COMPUTE event waits for the exit read */
	uint64_t t_exit;	/* the stretch's start (after the exit's records) */
	uint64_t cpu_exit;
	uint64_t t_cpu;		/* the call's end, just before that read (method 0) */
	uint64_t ins_exit;
	uint64_t d_end;		/* the deferred stretch's end (MPI entry) */
	int hold;		/* mw_compute_hold: the next event is kept */
	int held;		/* ... and it is in 'kept' */
	struct proto_event kept;
};

static TLS struct compute_tls ctls;
static double flop_rate;
static double instr_rate;	/* instructions/s on the calibration loop */
static int method;		/* 0 cpu x rate, 1 perf instructions */
static uint64_t read_ns;	/* median cost of a counter read, 0 if none */

uint64_t mw_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double mw_flop_loop_rate(uint64_t iters)
{
	/* volatile inputs: the compiler cannot fold the loop away */
	volatile double vm = 0.999999, va = 1e-9;
	double m = vm, a = va;
	double x0 = 1.0, x1 = 1.1, x2 = 1.2, x3 = 1.3;
	volatile double sink;
	uint64_t t0, t1, i;

	t0 = mw_thread_cpu_ns();
	for (i = 0; i < iters; i++) {
		x0 = x0 * m + a;
		x1 = x1 * m + a;
		x2 = x2 * m + a;
		x3 = x3 * m + a;
	}
	t1 = mw_thread_cpu_ns();
	sink = x0 + x1 + x2 + x3;
	(void)sink;
	if (!t0 || t1 <= t0)
		return 0;
	return (double)iters * 8.0 * 1e9 / (double)(t1 - t0);
}

static int perf_open(void)
{
	struct perf_event_attr pa;
	long fd;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_HARDWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_HW_INSTRUCTIONS;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -1 : (int)fd;
}

static int perf_read(int fd, uint64_t *v)
{
	return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* This thread's instruction count, opening its counter on first use. */
static int thread_instructions(uint64_t *v)
{
	if (ctls.perf_state == 0) {
		ctls.perf_fd = perf_open();
		ctls.perf_state = ctls.perf_fd >= 0 ? 1 : -1;
	}
	if (ctls.perf_state < 0)
		return -1;
	return perf_read(ctls.perf_fd, v);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The cost of this accounting per MPI call (two CPU-time reads, and two
 * counter reads with method 1: system calls; method 0 after a short stretch
 * makes one), measured here and sent as a CALIB record with evtype
 * PROTO_EV_COMPUTE. It runs between the events (mw_begin, mw_end), where
 * the post-processing measures it; the calibration serves the MPI events
 * it cannot measure (no COMPUTE event before them, and the last one's exit:
 * half of it). Inside sn_enter() (from MPI_Init's wrapper). */
static void calibrate_accounting(void)
{
	enum { N = 101 };
	uint64_t d[N], v;
	struct proto_event *e;

	for (int k = 0; k < N; k++) {
		uint64_t t0 = sn_now();

		(void)mw_thread_cpu_ns();
		if (method == 1)
			(void)thread_instructions(&v);
		(void)mw_thread_cpu_ns();
		if (method == 1)
			(void)thread_instructions(&v);
		d[k] = sn_now() - t0;
	}
	qsort(d, N, sizeof(d[0]), cmp_u64);
	e = sn_slot();
	if (!e)
		return;
	e->t_start = e->t_end = sn_now();	/* sn_slot set its tid */
	e->type = PROTO_EV_CALIB;
	e->flags = PROTO_EVF_INSTANT;
	proto_ev_set_args(e, PROTO_EV_COMPUTE, (int64_t)d[N / 2], N, 0, 0, 0);
	sn_commit(e);
}

void mw_compute_setup(void)
{
	const char *env = getenv("TAPESTRY_FLOP_RATE");
	static const char *const methods[] = {"instructions", "cpu", "auto", NULL};
	enum { M_INSTR, M_CPU, M_AUTO };
	int force = sn_env_word("TAPESTRY_COMPUTE_METHOD", methods, M_INSTR,
				"instructions, cpu or auto");
	char buf[64];
	int saved = errno, i, fd;
	uint64_t v;

	flop_rate = 0;
	if (env && *env) {
		char *end;
		double r = strtod(env, &end);

		if (*end == '\0' && r > 0 && isfinite(r))
			flop_rate = r;
		else
			sn_cfg_bad("TAPESTRY_FLOP_RATE", env,
				   "a positive number of flop/s", "a measured rate");
	}
	for (i = 0; !flop_rate && i < CAL_ROUNDS; i++) {
		double r = mw_flop_loop_rate(CAL_ITERS);

		if (r > flop_rate)
			flop_rate = r;
	}
	if (!(flop_rate > 0))
		flop_rate = 1e9;	/* no CPU clock: a nominal 1 Gflop/s */

	/* Method 1 if a counter opens and counts (VMs return ENOENT or a
	 * counter that stays 0): instruction counts do not depend on the
	 * run's timing, so folded and regular runs give the same volumes
	 * ([000]). A read's cost is recorded (META counter_read_ns): under a
	 * hypervisor that traps each read (1.2 us here, against 0.1 for the
	 * CPU time) the reads around every MPI call are most of the tracer's
	 * cost; TAPESTRY_COMPUTE_METHOD=cpu (method 0) avoids them, and
	 * =auto takes the counter only when a read costs at most
	 * READ_MAX_NS. */
	method = 0;
	read_ns = 0;
	if (force != M_CPU) {
		fd = perf_open();
		if (fd >= 0) {
			uint64_t v0 = 0, t0 = mw_thread_cpu_ns(), t1;
			uint64_t r[READ_PROBES];

			(void)perf_read(fd, &v0);
			(void)mw_flop_loop_rate(CAL_ITERS / 4);
			t1 = mw_thread_cpu_ns();
			for (i = 0; i < READ_PROBES; i++) {
				uint64_t a = sn_now(), x;

				(void)perf_read(fd, &x);
				r[i] = sn_now() - a;
			}
			qsort(r, READ_PROBES, sizeof(r[0]), cmp_u64);
			read_ns = r[READ_PROBES / 2];
			if (!perf_read(fd, &v) && v > v0 &&
			    (read_ns <= READ_MAX_NS ||
			     force != M_AUTO)) {
				/* flops per instruction of the calibration loop
				 * (8 flops an iteration): a count over a count,
				 * so volumes do not depend on timing noise; the
				 * instruction rate follows from the flop rate */
				double fpi = 8.0 * (CAL_ITERS / 4) / (double)(v - v0);

				method = 1;
				instr_rate = flop_rate / fpi;
				(void)t0;
				(void)t1;
			}
			close(fd);
		}
	}
	calibrate_accounting();
	snprintf(buf, sizeof(buf), "%d", method);
	sn_meta("compute_method", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)read_ns);
	sn_meta("counter_read_ns", buf);
	snprintf(buf, sizeof(buf), "%.6g", flop_rate);
	sn_meta("flop_rate", buf);
	if (method == 1) {
		snprintf(buf, sizeof(buf), "%.6g", instr_rate);
		sn_meta("instruction_rate", buf);
	}
	errno = saved;
}

double mw_flop_rate(void)
{
	return flop_rate;
}

int mw_compute_method(void)
{
	return method;
}

static void compute_event(uint64_t t0, uint64_t t1, uint64_t cpu_ns,
			  int64_t volume, int m)
{
	struct proto_event *e = ctls.hold ? &ctls.kept : sn_slot();

	if (!e)
		return;
	if (ctls.hold)
		ctls.held = 1;
	e->t_start = t0;
	e->t_end = t1;
	e->type = PROTO_EV_COMPUTE;
	e->flags = 0;
	/* the event carries its own conversion: the stream's META may reach
	 * a reader after the events it applies to */
	proto_ev_set_args(e, (int64_t)cpu_ns, volume, m, (int64_t)(flop_rate + 0.5),
			  m == 1 ? (int64_t)(instr_rate + 0.5) : 0, 0);
	if (e != &ctls.kept)
		sn_commit(e);
}

void mw_compute_hold(void)
{
	ctls.hold = 1;
	ctls.held = 0;
}

void mw_compute_release(int emit)
{
	struct proto_event *e;

	if (emit && ctls.held && (e = sn_slot())) {
		uint32_t tid = e->tid;

		*e = ctls.kept;
		e->tid = tid;
		sn_commit(e);
	}
	ctls.hold = 0;
	ctls.held = 0;
}

static int64_t cpu_volume(uint64_t cpu_ns)
{
	return (int64_t)((double)cpu_ns * 1e-9 * flop_rate + 0.5);
}

/* A stretch's CPU time from the exit read before it to cpu (0: no
 * reading), at most its wall time: the read's own cost lands after the
 * stretch's end stamp, and under load it reached 18 us (a contended
 * run-queue lock, most likely: a stretch of 58 us "used" 76 us). */
static uint64_t stretch_cpu(uint64_t cpu, uint64_t wall)
{
	if (!cpu || !ctls.cpu_exit || cpu < ctls.cpu_exit)
		return 0;
	return cpu - ctls.cpu_exit < wall ? cpu - ctls.cpu_exit : wall;
}

void mw_compute_enter(uint64_t now)
{
	uint64_t ins = 0, cpu_ns;
	int64_t volume;
	int m = 0;

	ctls.deferred = 0;
	if (!ctls.have || now < ctls.t_exit)
		return;
	if (method == 0 && now - ctls.t_exit < MW_CPU_ENTRY_MIN_NS) {
		ctls.deferred = 1;
		ctls.d_end = now;
		return;
	}
	/* since the exit read: the exit's records too, under
	 * MW_CPU_LEAD_MAX_NS (see mw_compute_open) */
	cpu_ns = stretch_cpu(mw_thread_cpu_ns(), now - ctls.t_exit);
	if (method == 1 && !thread_instructions(&ins) && ins >= ctls.ins_exit) {
		volume = (int64_t)(ins - ctls.ins_exit);
		m = 1;
	} else {
		volume = cpu_volume(cpu_ns);
	}
	compute_event(ctls.t_exit, now, cpu_ns, volume, m);
}

void mw_compute_exit(uint64_t t1)
{
	uint64_t cpu;

	if (method == 1)
		return;		/* its reads follow the call's record */
	cpu = mw_thread_cpu_ns();
	ctls.t_cpu = t1;
	if (ctls.deferred) {
		uint64_t wall = ctls.d_end - ctls.t_exit;
		uint64_t cpu_ns = stretch_cpu(cpu, wall);

		/* without a CPU time (the read failed) the volume is the
		 * wall time's */
		compute_event(ctls.t_exit, ctls.d_end, cpu_ns,
			      cpu_volume(cpu ? cpu_ns : wall), 0);
		ctls.deferred = 0;
	}
	ctls.cpu_exit = cpu;
}

void mw_compute_open(void)
{
	uint64_t ins;

	/* the counter first: its read (a trap to the hypervisor here, about
	 * 1.2 us) stays out of the next stretch's CPU time, which starts at
	 * the CPU-time read and ends at the one of mw_compute_enter */
	if (method == 1) {
		if (!thread_instructions(&ins))
			ctls.ins_exit = ins;
		ctls.cpu_exit = mw_thread_cpu_ns();
	}
	/* stamped after the reads and the call's record: their cost falls
	 * between the events */
	ctls.t_exit = sn_now();
	/* method 0 read before the records: if they took long, what they
	 * ran (a wait for room's sleep loop, a page fault) is not the next
	 * stretch's */
	if (method == 0 && ctls.t_exit - ctls.t_cpu > MW_CPU_LEAD_MAX_NS) {
		ctls.cpu_exit = mw_thread_cpu_ns();
		ctls.t_exit = sn_now();
	}
	ctls.have = 1;
}
