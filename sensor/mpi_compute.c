/*
 * sensor/mpi_compute.c - computation volumes between MPI calls.
 *
 * For time-independent traces ([000]) each stretch of a thread between two
 * MPI calls becomes a COMPUTE event with a volume. Method 1 counts user
 * instructions with perf_event_open when the kernel offers the counter;
 * method 0, the normal path on virtual machines without counters, takes the
 * thread's CPU time times a flop rate calibrated once at MPI_Init on a fixed
 * loop of double multiply-adds. The method and rate go into the stream's
 * metadata.
 *
 * The CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) is a real system
 * call, 0.4 us a read on this host: read around every MPI call it was most
 * of the sensor's cost on a small message (bench/mpi_pingpong.sh). So it is
 * read only where the thread may have left the CPU. Its time is cut into
 * segments (a stretch between MPI calls; a call with the wrapper's work and
 * records), and after a segment the CPU time is read when the thread was
 * switched out during it (the kernel bumps a counter in a per-thread perf
 * page each time it schedules the thread back in: one load), or when the
 * segment lasted gap_min_ns (20 us with the switch count: time taken
 * without a switch, by the hypervisor or interrupts, then matters; 2 us
 * without it, about the shortest switch to another thread and back). A
 * stretch that needed no read takes its wall time from the TSC; another
 * one its wall time less the time off the CPU since the previous read
 * (wall time between the two reads' stamps minus CPU time between them),
 * which the segments in between, none of which needed a read, cannot
 * hold. The rule, its cost and its accuracy: docs/modules/sensor-mpi.md,
 * figures in bench/RESULTS.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proto/num.h"
#include "sensor/mpi_int.h"

#define TLS __attribute__((tls_model("initial-exec"))) __thread

/* Calibration loop: iterations per timing, timings kept (best of). */
#define CAL_ITERS 1000000u
#define CAL_ROUNDS 3
#define READ_PROBES 31		/* counter reads timed at MPI_Init */
#define READ_MAX_NS 400		/* =auto: a dearer read, method 0 (CPU time) */

/* Segments at least this long are followed by a CPU-time read: with the
 * switch count, long enough for time taken without a switch to matter;
 * without it, as short as a switch can be (a yield to another thread and
 * back costs about 2 us). TAPESTRY_COMPUTE_GAP_NS sets it (0: a read around
 * every call) and turns the switch count off. */
#define GAP_SWITCH_NS 20000L
#define GAP_NOSWITCH_NS 2000L
#define GAP_MIN_MAX_NS 1000000000L
/* Without the switch count, a read that took longer than this (preempted
 * inside the system call: its sample point is unknown) is made again, at
 * most READ_TRIES times; with it, a read during which the count moved. */
#define READ_MAX_WALL_NS 1500u
#define READ_TRIES 3

struct compute_tls {
	int have;		/* a previous MPI exit is recorded */
	int perf_state;		/* 0 untried, 1 open, -1 failed */
	int perf_fd;
	int sw_state;		/* switch page: 0 untried, 1 mapped, -1 none */
	const volatile struct perf_event_mmap_page *sw;
	int base_ok;		/* base_t, base_cpu hold a read */
	uint32_t base_sw;	/* the switch count at that read */
	uint64_t t_exit;	/* the stretch's start (after the exit's records) */
	uint64_t t_enter;	/* the current call's entry (its stretch's end) */
	uint64_t base_t;	/* the last CPU-time read: stamp just before it */
	uint64_t base_cpu;	/* and its value */
	uint64_t ins_exit;
	int held;		/* a COMPUTE event waits in 'kept' */
	struct proto_event kept;
};

static TLS struct compute_tls ctls;
static double flop_rate;
static double instr_rate;	/* instructions/s on the calibration loop */
static int method;		/* 0 cpu x rate, 1 perf instructions */
static uint64_t read_ns;	/* median cost of a counter read, 0 if none */
static int use_switches;	/* the rule: 1 switch count, 0 segment length */
static uint64_t gap_min_ns = GAP_NOSWITCH_NS;

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

/* Map this thread's switch page: the control page of a software perf event
 * that counts nothing, bound to the thread. The kernel rewrites the page,
 * bumping its seqcount (lock) by 2, each time it schedules the thread back
 * in (perf_swevent_add), and at no other time while the thread runs: one
 * load tells whether the thread left the CPU since an earlier load. The
 * mapping keeps the event; its descriptor is closed at once (the
 * application cannot close it, no descriptor is used up). The mapping is
 * not inherited by a child (the kernel marks it VM_DONTCOPY: see
 * compute_atfork_child). Returns 0, or -1 (the kernel refuses the event:
 * perf_event_paranoid 3, seccomp, no perf). */
static int switch_page_open(void)
{
	struct perf_event_attr pa;
	long fd;
	void *m;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_SOFTWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_SW_DUMMY;
	pa.exclude_kernel = 1;	/* what perf_event_paranoid 2 allows */
	pa.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, (int)fd, 0);
	syscall(SYS_close, fd);
	if (m == MAP_FAILED)
		return -1;
	ctls.sw = m;
	return 0;
}

/* This thread's switch count (0 without a page; opened on first use). */
static uint32_t switch_count(void)
{
	uint32_t v;

	if (__builtin_expect(ctls.sw_state == 0, 0))
		ctls.sw_state = use_switches && switch_page_open() == 0 ? 1 : -1;
	if (ctls.sw_state < 0)
		return 0;
	__asm__ __volatile__("" ::: "memory");
	v = ctls.sw->lock;
	__asm__ __volatile__("" ::: "memory");
	return v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The cost of this accounting per MPI call between a short stretch and a
 * short call (a TSC stamp; two counter reads with method 1, system calls;
 * two CPU-time reads with gap_min_ns 0), measured here and sent as a CALIB
 * record with evtype PROTO_EV_COMPUTE. It runs between the events
 * (mw_begin, mw_end), where the post-processing measures it; the
 * calibration serves the MPI events it cannot measure (no COMPUTE event
 * before them, and the last one's exit: half of it). Inside sn_enter()
 * (from MPI_Init's wrapper). */
static void calibrate_accounting(void)
{
	enum { N = 101 };
	uint64_t d[N], v;
	struct proto_event *e;

	for (int k = 0; k < N; k++) {
		uint64_t t0 = sn_now();

		for (int j = 0; j < 2; j++) {
			if (method == 1)
				(void)thread_instructions(&v);
			if (gap_min_ns == 0)
				(void)mw_thread_cpu_ns();
		}
		(void)sn_now();
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

/* TAPESTRY_COMPUTE_GAP_NS: the segment length from which a CPU-time read
 * follows (0: around every MPI call), instead of the switch count; -1 when
 * not set (or, said, not a number). */
static long gap_setting(void)
{
	const char *v = getenv("TAPESTRY_COMPUTE_GAP_NS");
	char want[80];
	long l;

	if (!v || !*v)
		return -1;
	if (!proto_parse_long(v, 0, GAP_MIN_MAX_NS, &l))
		return l;
	snprintf(want, sizeof(want), "a whole number of ns from 0 to %ld", GAP_MIN_MAX_NS);
	sn_cfg_bad("TAPESTRY_COMPUTE_GAP_NS", v, want, "the switch count");
	return -1;
}

/* In a forked child (one thread: the one that forked): the parent's switch
 * page is not mapped here and its counter counts the parent's thread;
 * this thread opens its own at its next MPI call, and its CPU clock
 * started again at 0. */
static void compute_atfork_child(void)
{
	if (ctls.perf_state > 0)
		syscall(SYS_close, ctls.perf_fd);
	ctls.perf_state = 0;
	ctls.sw = NULL;
	ctls.sw_state = 0;
	ctls.base_ok = 0;
}

/* Choose the rule that decides when the CPU time is read: the switch count
 * where this thread's page maps, else the segment length. */
static void setup_rule(void)
{
	static int atfork;
	long gap = gap_setting();

	if (!atfork && pthread_atfork(NULL, NULL, compute_atfork_child) == 0)
		atfork = 1;
	use_switches = gap < 0;
	if (ctls.sw_state < 0)
		ctls.sw_state = 0;	/* an MPI call before MPI_Init's end */
	(void)switch_count();
	use_switches = ctls.sw_state > 0;
	if (gap >= 0)
		gap_min_ns = (uint64_t)gap;
	else
		gap_min_ns = use_switches ? GAP_SWITCH_NS : GAP_NOSWITCH_NS;
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

	setup_rule();
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
	 * hypervisor that traps each read (ten times a CPU-time read) the reads around every MPI call are most of the tracer's
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
	sn_meta("compute_cpu_rule", use_switches ? "switches" : "gap");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)gap_min_ns);
	sn_meta("compute_gap_ns", buf);
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

/* The stretch's COMPUTE event, kept until the call's exit
 * (mw_compute_release): written just before the call's own record, both go
 * into the same batch and get the same clock mapping (written at the entry,
 * a batch boundary between them let the mapping's next anchor put the call's
 * start a few ns before the stretch's end). */
static void compute_event(uint64_t t0, uint64_t t1, uint64_t cpu_ns,
			  int64_t volume, int m)
{
	struct proto_event *e = &ctls.kept;

	ctls.held = 1;
	e->t_start = t0;
	e->t_end = t1;
	e->type = PROTO_EV_COMPUTE;
	e->flags = 0;
	/* the event carries its own conversion: the stream's META may reach
	 * a reader after the events it applies to */
	proto_ev_set_args(e, (int64_t)cpu_ns, volume, m, (int64_t)(flop_rate + 0.5),
			  m == 1 ? (int64_t)(instr_rate + 0.5) : 0, 0);
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
	ctls.held = 0;
}

static int64_t cpu_volume(uint64_t cpu_ns)
{
	return (int64_t)((double)cpu_ns * 1e-9 * flop_rate + 0.5);
}

/* Read the CPU time into the base: the stamp just before the read, its
 * value and the switch count. The read's sample point lies inside the
 * system call; two reads taken the same way put it at the same offset from
 * their stamps, so the wall time between the stamps is the wall time
 * between the samples. A read during which the thread left the CPU (the
 * count moved; without a count, a read that lasted long) is made again.
 * base_ok is 0 when the clock failed. */
static void read_base(void)
{
	for (int i = 0; i < READ_TRIES; i++) {
		uint32_t sw0 = switch_count();
		uint64_t t = sn_now(), c = mw_thread_cpu_ns();
		uint32_t sw1 = switch_count();

		ctls.base_t = t;
		ctls.base_cpu = c;
		ctls.base_sw = sw1;
		ctls.base_ok = c != 0;
		if (!c || (ctls.sw_state > 0 ? sw0 == sw1 : sn_now() - t <= READ_MAX_WALL_NS))
			return;
	}
}

/* Must the CPU time be read after a segment of len ns: no base yet, the
 * thread left the CPU since the base (the switch count moved), or the
 * segment was long enough for time taken without a switch (the
 * hypervisor's, interrupts') to matter, or, without a switch count, for a
 * switch to have happened? */
static int must_read(uint64_t len)
{
	if (!ctls.base_ok || len >= gap_min_ns)
		return 1;
	return ctls.sw_state > 0 && switch_count() != ctls.base_sw;
}

/* The CPU time of a stretch of wall ns ending now: its wall time when the
 * thread did not leave the CPU; otherwise its wall time less the time off
 * the CPU since the base (taken at the stretch's start at the latest: see
 * mw_compute_open), read now (the new base). *ok is 0 when the read failed
 * (the CPU time is then 0 and the volume the wall time's). */
static uint64_t stretch_cpu(uint64_t wall, int *ok)
{
	uint64_t t0 = ctls.base_t, c0 = ctls.base_cpu, off;
	int had = ctls.base_ok;

	*ok = 1;
	if (!must_read(wall))
		return wall;
	read_base();
	if (!ctls.base_ok) {
		*ok = 0;
		return 0;
	}
	if (!had || ctls.base_t < t0 || ctls.base_cpu < c0)
		return wall;
	off = ctls.base_t - t0 > ctls.base_cpu - c0 ?
	      (ctls.base_t - t0) - (ctls.base_cpu - c0) : 0;
	return wall > off ? wall - off : 0;
}

void mw_compute_enter(uint64_t now)
{
	uint64_t ins = 0, cpu_ns, wall;
	int64_t volume;
	int m = 0, ok;

	ctls.t_enter = now;
	ctls.held = 0;
	if (!ctls.have || now < ctls.t_exit)
		return;
	wall = now - ctls.t_exit;
	cpu_ns = stretch_cpu(wall, &ok);
	if (method == 1 && !thread_instructions(&ins) && ins >= ctls.ins_exit) {
		volume = (int64_t)(ins - ctls.ins_exit);
		m = 1;
	} else {
		volume = cpu_volume(ok ? cpu_ns : wall);
	}
	compute_event(ctls.t_exit, now, cpu_ns, volume, m);
}

void mw_compute_open(void)
{
	uint64_t ins;

	/* the counter first (a trap to the hypervisor on some hosts): its
	 * cost falls between the events */
	if (method == 1 && !thread_instructions(&ins))
		ctls.ins_exit = ins;
	/* stamped after the call's record: its cost falls between the events */
	ctls.t_exit = sn_now();
	/* the call and its records are one segment: when the thread may have
	 * left the CPU in it (blocked, yielded, preempted, waited for room),
	 * a new base, so that the next stretch's time off the CPU is its own */
	if (ctls.t_exit < ctls.t_enter || must_read(ctls.t_exit - ctls.t_enter)) {
		read_base();
		ctls.t_exit = sn_now();
	}
	ctls.have = 1;
}
