/*
 * sensor/rt_buf.c - per-thread event rings, their registry, string and
 * array records, the fd -> path table and drop accounting.
 *
 * Each traced thread owns one single-producer single-consumer ring (struct
 * sn_thread, mmap'd on the thread's first event: the only lock and syscall
 * a thread pays, once). The sender thread is the only consumer. Memory is
 * bounded by TAPESTRY_BUFFER_BYTES: rings take at most three quarters of
 * it, each ring a sixteenth (less for late threads while the budget is
 * short, see ring_bytes_for(); a thread that gets no ring has all its
 * events counted as dropped). Rings are populated (their first 2 MiB at
 * the thread's first event, the rest by the sender once the process lives
 * on: sn_threads_populate; in a process younger than that, all of it
 * then), so that no page fault lands on the
 * application's hot path (a fault per 64 records on the first lap
 * otherwise, an uncalibrated perturbation), and wiped on fork.
 * Rings of exited threads are drained, then unmapped.
 *
 * Lock order: threads_mu is a leaf lock (nothing is called while holding
 * it but memory bookkeeping).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "sensor/rt.h"

SN_TLS struct sn_tls sn_tls;

static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sn_thread *threads[SN_MAX_THREADS];
/* each ring's mapping size, beside the ring: a forked child reads it where
 * the rings themselves are wiped (MADV_WIPEONFORK, map_ring) */
static size_t threads_map[SN_MAX_THREADS];
static int nthreads;
static uint64_t ring_reserved;		/* bytes of live rings */
static uint64_t dropped_freed;		/* drops of rings already freed */
static uint64_t written_freed;		/* records of rings already freed */
static _Atomic uint64_t dropped_noring;	/* events of threads without ring */
static _Atomic uint32_t next_tid = 1;
static _Atomic int64_t next_string = 1;
_Atomic int64_t sn_fdpath[SN_FD_MAX];
/* 1 + the highest number ever given a path (sn_fd_reset's bound) */
static _Atomic int fdpath_end;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static SN_TLS int reg_failed;

void sn_threads_lock(void)
{
	pthread_mutex_lock(&threads_mu);
}

void sn_threads_unlock(void)
{
	pthread_mutex_unlock(&threads_mu);
}

/* Next thread index (1, 2, ...; 0 is the main thread). Thread-safe. */
uint32_t sn_tid_alloc(void)
{
	return atomic_fetch_add(&next_tid, 1);
}

/* A thread being taken (SN_RUN_FROZEN) stays alive until the taker is
 * done: its ring must not be freed under it. Bounded by the taker's own
 * wait (TAKE_WAIT_NS). */
static void wait_unfrozen(struct sn_thread *t)
{
	struct timespec ts = {0, 50000};

	while (atomic_load_explicit(&t->run_ctl, memory_order_acquire) ==
	       SN_RUN_FROZEN)
		syscall(SYS_nanosleep, &ts, NULL);
}

static void thread_gone(void *p)
{
	struct sn_thread *t = p;

	wait_unfrozen(t);
	if ((t->drop_pending & SN_PEND_RUN) && sn_run_enter(t)) {
		if (sn_run_flush(t))
			sn_run_leave(t);
	}
	wait_unfrozen(t);
	if (sn_tls.thr == t)
		sn_tls.thr = NULL;
	atomic_store_explicit(&t->dead, 1, memory_order_release);
}

static void make_key(void)
{
	if (pthread_key_create(&thread_key, thread_gone) != 0)
		thread_key = (pthread_key_t)-1;
}

/* The fill past which a producer kicks the sender, and the head at which
 * a new ring first looks: half the ring in post-mortem mode (the rings are
 * the buffer: no work beside the program until then), a quarter in stream
 * mode (the sender, short of CPU on a loaded machine, then has three
 * quarters of the ring to come, not a half). At least 1. */
static uint64_t kick_fill(uint32_t cap)
{
	uint64_t f = sn_cfg.postmortem || sn_cfg.hold ? cap / 2 : cap / 4;

	return f ? f : 1;
}

/* Ring size for a new thread: a sixteenth of the budget (at most
 * SN_RING_MAX_BYTES), and at most an eighth of what the rings may still
 * reserve, so that sizes shrink gradually when many threads live at once;
 * never less than SN_RING_MIN records, and 0 when those do not fit. */
static uint64_t ring_bytes_for(uint64_t budget, uint64_t reserved)
{
	uint64_t limit = budget / 4 * 3;
	/* holding the run (TAPESTRY_HOLD): a quarter, fewer drains beside
	 * the ranks */
	uint64_t b = sn_cfg.hold ? budget / 4 : budget / 16;
	uint64_t left = limit > reserved ? limit - reserved : 0;

	/* a sixteenth of a small budget (the documented minimum, 1 MiB)
	 * is less than SN_RING_MIN records: the first rings still get the
	 * minimum while an eighth of what is left holds it */
	if (b < SN_RING_MIN * sizeof(struct proto_event))
		b = SN_RING_MIN * sizeof(struct proto_event);
	if (b > SN_RING_MAX_BYTES)
		b = SN_RING_MAX_BYTES;
	if (b > left / 8)
		b = left / 8;
	if (b < SN_RING_MIN * sizeof(struct proto_event))
		return 0;
	return b;
}

static void set_tid(struct sn_thread *t)
{
	if (sn_tls.pending_tid) {
		t->tid = sn_tls.pending_tid - 1;
		sn_tls.pending_tid = 0;
	} else if (gettid() == getpid()) {
		t->tid = 0;
	} else {
		t->tid = sn_tid_alloc();
	}
}

/* Take over the ring of an exited thread (threads come and go faster than
 * the sender frees rings). Its records not yet drained stay in front of
 * ours: the counters stay monotonic, so the sender sees one continuous
 * single-producer ring whose producer changed (the old one is gone; its
 * last head store is seen through threads_mu). The sender frees a ring
 * only under threads_mu and only while it is still dead and empty. */
static struct sn_thread *adopt_locked(void)
{
	/* Never for the sender thread: calibration writes into its ring and
	 * takes the records back, which must not touch an exited thread's
	 * records still waiting to be drained. */
	if (sn_sender_is_self())
		return NULL;
	for (int i = 0; i < nthreads; i++) {
		struct sn_thread *t = threads[i];
		uint64_t h;

		if (!atomic_load_explicit(&t->dead, memory_order_acquire) ||
		    t->cap < SN_RING_MIN)
			continue;
		h = atomic_load_explicit(&t->head, memory_order_acquire);
		t->head_priv = h;
		t->tail_cache = atomic_load_explicit(&t->tail,
						     memory_order_acquire);
		t->widx = (uint32_t)(h % t->cap);
		t->kick_at = h + kick_fill(t->cap);
		t->dropped = 0;
		t->drop_pending = 0;
		t->nowait = 0;
		atomic_store_explicit(&t->run_ctl, SN_RUN_FREE,
				      memory_order_relaxed);
		atomic_store_explicit(&t->run_busy, 0, memory_order_relaxed);
		memset(t->strcache, 0, sizeof(t->strcache));
		atomic_store_explicit(&t->kicked, 0, memory_order_relaxed);
		atomic_store_explicit(&t->dead, 0, memory_order_release);
		return t;
	}
	return NULL;
}

#define HUGE_BYTES (2u << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18	/* Linux 4.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25	/* Linux 6.1 */
#endif

/* Set by the sender's first sn_threads_populate (the process lived
 * POPULATE_AFTER_NS): a ring registered before, in a process that may end
 * at once, starts unpopulated on small pages (map_ring) */
static _Atomic int process_settled;

/* Map map bytes for a ring, its first populate bytes populated (the rest:
 * sn_threads_populate, on the sender thread). From 2 MiB on, on a 2 MiB
 * boundary with transparent huge pages asked for (MADV_HUGEPAGE: the
 * default THP policy here is madvise): a ring of 4 KiB pages took a TLB
 * miss every 56 records on the producer's side and the sender's.
 * Populated with MADV_POPULATE_WRITE (MAP_POPULATE would fault in small
 * pages before the advice), or page by page where the kernel lacks it.
 * Wiped on fork (MADV_WIPEONFORK): a forked child starts an empty ring of
 * its own anyway (sn_threads_atfork_child), and sharing the populated
 * pages copy-on-write made both sides copy them, the parent on its next
 * records (huge pages split, a TLB shoot-down to the sender's core each):
 * most of a traced shell's fork + exec (issue 31, bench/startup.sh). */
static void *map_ring(size_t map, size_t populate, int young)
{
	int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	char *m, *a;

	if (populate > map)
		populate = map;
	if (map < HUGE_BYTES) {
		a = mmap(NULL, map, PROT_READ | PROT_WRITE,
			 fl | (populate ? MAP_POPULATE : 0), -1, 0);
		if (a != MAP_FAILED)
			(void)madvise(a, map, MADV_WIPEONFORK);
		return a;
	}
	m = mmap(NULL, map + HUGE_BYTES, PROT_READ | PROT_WRITE, fl, -1, 0);
	if (m == MAP_FAILED)
		return m;
	a = (char *)(((uintptr_t)m + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	munmap(a + map, (size_t)(m + HUGE_BYTES - a));	/* the tail */
	/* young: the first huge page's advice waits for the sender (a first
	 * touch there would zero 2 MiB for the few records of a process
	 * that ends at once: 1.7 ms of a traced /bin/true on a loaded VM) */
	if (!young)
		(void)madvise(a, map, MADV_HUGEPAGE);
	else if (map > HUGE_BYTES)
		(void)madvise(a + HUGE_BYTES, map - HUGE_BYTES, MADV_HUGEPAGE);
	(void)madvise(a, map, MADV_WIPEONFORK);
	if (populate && madvise(a, populate, MADV_POPULATE_WRITE) != 0)
		for (size_t off = 0; off < populate; off += 4096)
			((volatile char *)a)[off] = 0;
	return a;
}

/* See rt.h. At most POPULATE_STEP bytes a call, outside the registry's
 * lock (only this thread frees rings): a 1 GiB budget's rings took the
 * sender seconds to populate on a loaded machine, and a drain waiting
 * behind them let the rings fill. */
#define POPULATE_STEP (16u << 20)
void sn_threads_populate(void)
{
	struct sn_thread *t = NULL;
	size_t map = 0, done = 0, len;

	atomic_store(&process_settled, 1);
	pthread_mutex_lock(&threads_mu);
	for (int i = 0; i < nthreads && !t; i++)
		if (threads[i]->populated < threads_map[i]) {
			t = threads[i];
			map = threads_map[i];
			done = t->populated;
		}
	pthread_mutex_unlock(&threads_mu);
	if (!t)
		return;
	/* a ring registered young (map_ring): its first huge page now, the
	 * few small pages its producer touched collapsed into it (the
	 * kernel copies them; a store meanwhile waits for the copy) */
	if (done == 0 && map >= HUGE_BYTES) {
		(void)madvise(t, HUGE_BYTES, MADV_HUGEPAGE);
		(void)madvise(t, HUGE_BYTES, MADV_COLLAPSE);
	}
	len = map - done < POPULATE_STEP ? map - done : POPULATE_STEP;
	if (madvise((char *)t + done, len, MADV_POPULATE_WRITE) != 0)
		for (size_t off = done; off < done + len; off += 4096)
			__atomic_fetch_add((char *)t + off, 0, __ATOMIC_RELAXED);
	t->populated = done + len;
}

/* Register the calling thread: map its ring and add it to the registry.
 * Returns the thread's state (also stored in TLS), or NULL when no memory
 * at all could be had (its events are then counted as dropped). Called
 * once per thread from the slow path; takes threads_mu once. */
struct sn_thread *sn_thread_register(void)
{
	struct sn_thread *t;
	uint64_t bytes, hdr, cap;
	size_t map;
	void *m;
	int young;

	if (reg_failed)
		return NULL;
	pthread_once(&key_once, make_key);
	hdr = (sizeof(struct sn_thread) + 4095) & ~(uint64_t)4095;
	pthread_mutex_lock(&threads_mu);
	t = adopt_locked();
	if (t) {
		pthread_mutex_unlock(&threads_mu);
		set_tid(t);
		goto registered;
	}
	bytes = ring_bytes_for(sn_cfg.budget ? sn_cfg.budget : (64u << 20),
			       ring_reserved);
	/* the sender's ring is small: populating a full-size one (64 MiB
	 * in post-mortem mode) ran beside the application's start, and on
	 * a VM whose memory is touched for the first time that took
	 * 0.1-0.3 s and slowed the program's stores to its own ring by up
	 * to five times */
	if (sn_sender_is_self() && bytes > SN_SENDER_RING_BYTES)
		bytes = SN_SENDER_RING_BYTES;
	ring_reserved += bytes;
	pthread_mutex_unlock(&threads_mu);
	cap = bytes / sizeof(struct proto_event);
	map = (size_t)(hdr + cap * sizeof(struct proto_event));
	/* the first huge page now (the thread's first records land there);
	 * the rest by the sender once the process lives on (a short process
	 * never needs it: zeroing 4 MiB was a tenth of a traced /bin/true's
	 * CPU); in a young process, none now: small pages as its records
	 * touch them, the first huge page with the rest (sn_threads_populate);
	 * the sender's ring on demand (a few records a batch; the
	 * calibration populates what it samples) */
	young = !sn_sender_is_self() && !atomic_load(&process_settled);
	m = map_ring(map, sn_sender_is_self() || young ? 0 : HUGE_BYTES, young);
	if (m == MAP_FAILED)
		goto fail_map;
	t = m;
	t->map_bytes = map;
	t->populated = sn_sender_is_self() ? map : young ? 0 :
		       map < HUGE_BYTES ? map : HUGE_BYTES;
	t->cap = (uint32_t)cap;
	t->sender = sn_sender_is_self();
	t->ring = (struct proto_event *)((char *)m + hdr);
	t->kick_at = kick_fill(cap);
	set_tid(t);
	pthread_mutex_lock(&threads_mu);
	if (nthreads >= SN_MAX_THREADS) {
		pthread_mutex_unlock(&threads_mu);
		goto fail_slot;
	}
	threads_map[nthreads] = map;
	threads[nthreads++] = t;
	pthread_mutex_unlock(&threads_mu);
registered:
	if (thread_key != (pthread_key_t)-1)
		pthread_setspecific(thread_key, t);
	sn_tls.thr = t;
	return t;

fail_slot:
	munmap(m, map);
fail_map:
	pthread_mutex_lock(&threads_mu);
	ring_reserved -= bytes;
	pthread_mutex_unlock(&threads_mu);
	reg_failed = 1;
	return NULL;
}

struct sn_scratch {
	struct sn_thread t;
	struct sn_thread *saved;
};

struct sn_scratch *sn_scratch_begin(uint32_t cap)
{
	struct sn_scratch *s;

	if (!sn_tls.thr || !cap || !(s = calloc(1, sizeof(*s))))
		return NULL;
	if (!(s->t.ring = calloc(cap, sizeof(*s->t.ring)))) {
		free(s);
		return NULL;
	}
	s->t.cap = cap;
	s->t.kick_at = UINT64_MAX;
	s->t.tid = sn_tls.thr->tid;
	s->saved = sn_tls.thr;
	sn_tls.thr = &s->t;
	return s;
}

size_t sn_scratch_end(struct sn_scratch *s, const struct proto_event **ev)
{
	sn_tls.thr = s->saved;
	*ev = s->t.ring;
	return (size_t)s->t.head_priv;
}

void sn_scratch_free(struct sn_scratch *s)
{
	if (s) {
		free(s->t.ring);
		free(s);
	}
}

static void count_drop(struct sn_thread *t)
{
	t->dropped++;
	t->drop_pending |= SN_PEND_DROP;
	atomic_store_explicit(&t->dropped_total,
			      atomic_load_explicit(&t->dropped_total,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void put_raw(struct sn_thread *t, const struct proto_event *e)
{
	t->ring[t->widx] = *e;
	t->widx = t->widx + 1 == t->cap ? 0 : t->widx + 1;
	t->head_priv++;
}

static inline void publish(struct sn_thread *t)
{
	atomic_store_explicit(&t->head, t->head_priv, memory_order_release);
	if (SN_UNLIKELY(t->head_priv >= t->kick_at))
		sn_commit_slow(t);
}

/* Records the open run of t takes: the run, and an ARRAY of 1 value (the
 * ns spent inside its calls) when it holds more than one call. */
static uint64_t run_records(const struct sn_thread *t)
{
	return t->run.arg[5] > 1 ? 2 : 1;
}

/* The open run of src into dst's ring (dst's owner calling; room for
 * run_records(src) checked). */
static void put_run(struct sn_thread *dst, const struct sn_thread *src)
{
	struct proto_event e = src->run;

	if (e.arg[5] > 1) {
		struct proto_event a = {0};

		e.flags |= PROTO_EVF_HASARRAY;
		put_raw(dst, &e);
		a.type = PROTO_EV_ARRAY;
		a.t_start = 0;
		a.t_end = 1;
		a.flags = 1;
		a.tid = e.tid;
		a.arg[0] = (int64_t)sn_stamp_dur_ns(src->run_in);
		put_raw(dst, &a);
	} else {
		put_raw(dst, &e);
	}
	publish(dst);
}

static uint64_t ring_free(struct sn_thread *t)
{
	t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
	return t->cap - (t->head_priv - t->tail_cache);
}

/* TAPESTRY_RING_FULL=wait (post-mortem mode's default) keeps the whole
 * run: a thread whose ring has no room for need records wakes the sender
 * and waits (sleeping 20 us at a time) until its ring is at most half
 * full, as [004]'s tracer flushed its full buffer in the application's
 * thread. The wait is owed as a FLUSH record with no records, carrying the
 * CPU time of its sleep loop (SN_PEND_WAIT), written before the thread's
 * next event, so the post-processing removes it. Not for the sender thread
 * itself, nor when no sender runs; a wait longer than SN_WAIT_MAX_NS (a
 * sender that cannot drain: its kept batches reached their limit) gives
 * up, and the thread counts drops from then on. Returns 1 when there is
 * room now. */
static int wait_room(struct sn_thread *t, uint64_t need)
{
	uint64_t t0, now;
	struct timespec ts = {0, 20000}, c0, c1;

	if (!sn_cfg.wait_full || t->nowait || need > t->cap / 2 ||
	    !sn_sender_running() || sn_sender_is_self())
		return 0;
	t0 = now = sn_now_fast();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	sn_sender_kick();
	sn_sender_boost();
	while (ring_free(t) < t->cap / 2) {
		if (now - t0 > SN_WAIT_MAX_NS || !sn_sender_running()) {
			t->nowait = 1;
			break;
		}
		syscall(SYS_nanosleep, &ts, NULL);
		now = sn_now_fast();
	}
	t->wait_t0 = t0;
	t->wait_t1 = sn_now_fast();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	t->wait_cpu = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll +
				 (c1.tv_nsec - c0.tv_nsec));
	t->drop_pending |= SN_PEND_WAIT;
	return ring_free(t) >= need;
}

/* Slow path of sn_slot(): registers the thread, refreshes the consumer's
 * position, writes a pending DROP or FLUSH record, waits for room
 * (TAPESTRY_RING_FULL=wait) or counts a drop. */
static struct proto_event *slot_slow(void)
{
	struct sn_thread *t = sn_tls.thr;
	struct proto_event *e;
	uint64_t fr;

	if (!t) {
		t = sn_thread_register();
		if (!t) {
			atomic_fetch_add_explicit(&dropped_noring, 1,
						  memory_order_relaxed);
			return NULL;
		}
	}
	fr = ring_free(t);
	if (fr < 4 && wait_room(t, 4))
		fr = ring_free(t);
	/* the run: unless it is being taken (sn_runs_take), which puts it
	 * into the taker's ring */
	if ((t->drop_pending & SN_PEND_RUN) && sn_run_enter(t)) {
		uint64_t need = run_records(t);

		if ((t->drop_pending & SN_PEND_RUN) && fr < need + 1) {
			sn_run_leave(t);
			count_drop(t);
			return NULL;
		}
		if (t->drop_pending & SN_PEND_RUN) {
			put_run(t, t);
			t->drop_pending &= ~SN_PEND_RUN;
			fr -= need;
		}
		sn_run_leave(t);
	}
	if (t->drop_pending & SN_PEND_WAIT) {
		struct proto_event d = {0};

		if (fr < 2) {
			count_drop(t);
			return NULL;
		}
		d.t_start = t->wait_t0;
		d.t_end = t->wait_t1;
		d.type = PROTO_EV_FLUSH;
		d.tid = t->tid;
		d.arg[2] = (int64_t)t->wait_cpu;	/* cpu_ns */
		put_raw(t, &d);
		publish(t);
		t->drop_pending &= ~SN_PEND_WAIT;
		fr--;
	}
	if (t->drop_pending & SN_PEND_DROP) {
		struct proto_event d = {0};

		if (fr < 2) {
			count_drop(t);
			return NULL;
		}
		d.t_start = d.t_end = sn_now_fast();
		d.type = PROTO_EV_DROP;
		d.flags = PROTO_EVF_INSTANT;
		d.tid = t->tid;
		d.arg[0] = (int64_t)t->dropped;
		put_raw(t, &d);
		publish(t);
		t->dropped = 0;
		t->drop_pending &= ~SN_PEND_DROP;
		fr--;
	}
	if (fr == 0) {
		count_drop(t);
		return NULL;
	}
	e = &t->ring[t->widx];
	e->tid = t->tid;
	e->flags = 0;
	return e;
}

/* See rt.h. The wait for room is made outside the section (a taker
 * waits for the section's end). */
int sn_run_flush(struct sn_thread *t)
{
	int saved = errno, ok = 1;
	uint64_t need = run_records(t);

	if (!(t->drop_pending & SN_PEND_RUN))
		return 1;
	if (ring_free(t) < need) {
		sn_run_leave(t);
		ok = wait_room(t, need);
		if (!sn_run_enter(t)) {
			errno = saved;
			return 0;
		}
		if (!(t->drop_pending & SN_PEND_RUN)) {	/* taken meanwhile */
			errno = saved;
			return 1;
		}
	}
	if (!ok && ring_free(t) < need)
		count_drop(t);
	else
		put_run(t, t);
	t->drop_pending &= ~SN_PEND_RUN;
	errno = saved;
	return 1;
}

/* See rt.h: the owner met a take. */
int sn_run_enter_slow(struct sn_thread *t, int ctl)
{
	if (ctl == SN_RUN_TAKEN) {
		/* the run went into the taker's ring: a new one may start */
		t->drop_pending &= ~SN_PEND_RUN;
		atomic_store_explicit(&t->run_ctl, SN_RUN_FREE,
				      memory_order_relaxed);
		return 1;
	}
	sn_run_leave(t);
	return 0;
}

/* ---- the open runs of the other threads, at the end -------------------- */

#define TAKE_WAIT_NS 1000000000ull	/* an owner inside its section */
#define TAKE_LOCK_TRIES 2000		/* x 50 us: the registry's lock */

/* membarrier(2) commands (linux/membarrier.h, Linux 4.3 and 4.14) */
#define SN_MEMBARRIER_GLOBAL 1
#define SN_MEMBARRIER_PRIVATE 8
#define SN_MEMBARRIER_REGISTER_PRIVATE 16

static struct sn_thread *taking[SN_MAX_THREADS];
static _Atomic int take_busy;
static int membar_state;	/* 0 not tried, 1 private expedited, 2 global, -1 none */

/* Every thread of the process past a full barrier since the caller's
 * stores: what makes the owners' compiler barrier in sn_run_enter enough
 * (an asymmetric Dekker: the hot path pays no fence). 0, or -1 when the
 * kernel offers no membarrier. */
static int membar_all(void)
{
	if (membar_state == 0)
		membar_state = syscall(SYS_membarrier, SN_MEMBARRIER_REGISTER_PRIVATE,
				       0, 0) == 0 ? 1 : 2;
	if (membar_state == 1 &&
	    syscall(SYS_membarrier, SN_MEMBARRIER_PRIVATE, 0, 0) == 0)
		return 0;
	if (membar_state != -1 &&
	    syscall(SYS_membarrier, SN_MEMBARRIER_GLOBAL, 0, 0) == 0) {
		membar_state = 2;
		return 0;
	}
	membar_state = -1;
	return -1;
}

static int registry_trylock(void)
{
	struct timespec ts = {0, 50000};

	for (int i = 0; i < TAKE_LOCK_TRIES; i++) {
		if (pthread_mutex_trylock(&threads_mu) == 0)
			return 0;
		syscall(SYS_nanosleep, &ts, NULL);
	}
	return -1;
}

/* Freeze (SN_RUN_FROZEN) every other live thread with an open run, under
 * the registry's lock; a frozen thread stays alive (thread_gone waits)
 * so its ring stays mapped once the lock is released. Returns how many. */
static int freeze_others(struct sn_thread *self)
{
	int n = 0;

	if (registry_trylock())
		return 0;
	for (int i = 0; i < nthreads; i++) {
		struct sn_thread *t = threads[i];
		int fr = SN_RUN_FREE;

		if (t == self || t->sender ||
		    atomic_load_explicit(&t->dead, memory_order_acquire) ||
		    !(*(volatile uint32_t *)&t->drop_pending & SN_PEND_RUN))
			continue;
		if (atomic_compare_exchange_strong(&t->run_ctl, &fr,
						   SN_RUN_FROZEN))
			taking[n++] = t;
	}
	pthread_mutex_unlock(&threads_mu);
	return n;
}

static void unfreeze(int from, int n, int ctl)
{
	for (int i = from; i < n; i++)
		atomic_store_explicit(&taking[i]->run_ctl, ctl,
				      memory_order_release);
}

/* See rt.h. */
void sn_runs_take(void)
{
	struct sn_thread *self = sn_tls.thr;
	uint64_t deadline;
	int n, i, saved = errno;

	if (!self || self->sender || atomic_exchange(&take_busy, 1))
		goto out;
	n = freeze_others(self);
	if (n && membar_all()) {
		SN_DEBUG("runs: no membarrier, %d threads' open runs left", n);
		unfreeze(0, n, SN_RUN_FREE);
		n = 0;
	}
	deadline = sn_now_vdso() + TAKE_WAIT_NS;
	for (i = 0; i < n; i++) {
		struct sn_thread *t = taking[i];
		struct timespec ts = {0, 20000};
		int ctl = SN_RUN_FREE;

		while (atomic_load_explicit(&t->run_busy, memory_order_acquire) &&
		       sn_now_vdso() < deadline)
			syscall(SYS_nanosleep, &ts, NULL);
		if (atomic_load_explicit(&t->run_busy, memory_order_acquire)) {
			SN_DEBUG("runs: thread %u stayed in its run", t->tid);
		} else if (*(volatile uint32_t *)&t->drop_pending & SN_PEND_RUN) {
			if (ring_free(self) < run_records(t) &&
			    !wait_room(self, run_records(t))) {
				count_drop(self);
			} else {
				put_run(self, t);
			}
			ctl = SN_RUN_TAKEN;
		}
		atomic_store_explicit(&t->run_ctl, ctl, memory_order_release);
	}
	/* the caller's own, unless a signal interrupted its section */
	if ((self->drop_pending & SN_PEND_RUN) &&
	    !atomic_load_explicit(&self->run_busy, memory_order_relaxed) &&
	    sn_run_enter(self)) {
		if (sn_run_flush(self))
			sn_run_leave(self);
	}
	atomic_store(&take_busy, 0);
out:
	errno = saved;
}

/* The slow paths keep errno: the read/write wrappers touch errno only when
 * the call failed (see SN_BODY_RW in libc_wrap.c). */
struct proto_event *sn_slot_slow(void)
{
	int saved = errno;
	struct proto_event *e = slot_slow();

	errno = saved;
	return e;
}

/* Called by the producer every so often (head reached kick_at): wakes the
 * sender once when the ring is more than kick_fill() full. Keeps errno. */
void sn_commit_slow(struct sn_thread *t)
{
	uint64_t used;
	int saved = errno;

	t->tail_cache = atomic_load_explicit(&t->tail, memory_order_acquire);
	used = t->head_priv - t->tail_cache;
	t->kick_at = t->head_priv + (t->cap / 4 ? t->cap / 4 : 1);
	if (used > kick_fill(t->cap) &&
	    !atomic_exchange_explicit(&t->kicked, 1, memory_order_relaxed))
		sn_sender_kick();
	errno = saved;
}

/* See sensor.h. */
int sn_enter(void)
{
	return sn_enter_fast();
}

/* See sensor.h. */
void sn_leave(void)
{
	sn_leave_fast();
}

/* See sensor.h. */
uint64_t sn_now(void)
{
	return sn_now_fast();
}

/* See sensor.h. */
struct proto_event *sn_slot(void)
{
	return sn_slot_fast();
}

/* See sensor.h. */
void sn_commit(struct proto_event *e)
{
	sn_commit_fast(e);
}

/* Emit a tracer record on the calling thread whatever its guard says;
 * callers make sure they are not inside a sn_slot..sn_commit window of
 * this thread. Returns 0, or PROTO_E_FULL when it was dropped. */
int sn_emit(uint16_t type, uint16_t flags, uint64_t t0, uint64_t t1,
	    int64_t a0, int64_t a1, int64_t a2, int64_t a3)
{
	struct proto_event *e = sn_slot_fast();

	if (!e)
		return PROTO_E_FULL;
	e->t_start = t0;
	e->t_end = t1;
	e->type = type;
	e->flags = flags;
	proto_ev_set_args(e, a0, a1, a2, a3, 0, 0);
	sn_commit_fast(e);
	return 0;
}

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ^ len;
}

/* See sensor.h. Ids are unique per process (stream): an fd opened on one
 * thread keeps its path id on every other thread. */
int64_t sn_string(const char *s, size_t len)
{
	struct sn_thread *t = sn_tls.thr;
	uint64_t h, chunks;
	unsigned slot;
	int64_t id;

	if (!s || len == 0)
		return 0;
	if (!t) {
		t = sn_thread_register();
		if (!t)
			return 0;
	}
	if (len > PROTO_STRING_MAX)
		len = PROTO_STRING_MAX;
	h = str_hash(s, len);
	slot = (unsigned)(h % SN_STRCACHE);
	if (t->strcache[slot].id && t->strcache[slot].hash == h)
		return t->strcache[slot].id;
	chunks = (len + PROTO_STRING_CHUNK - 1) / PROTO_STRING_CHUNK;
	if (ring_free(t) < chunks + 2 && !wait_room(t, chunks + 2)) {
		count_drop(t);
		return 0;
	}
	id = atomic_fetch_add_explicit(&next_string, 1, memory_order_relaxed);
	for (uint64_t c = 0; c < chunks; c++) {
		struct proto_event e = {0};
		size_t off = (size_t)c * PROTO_STRING_CHUNK;
		size_t n = len - off < PROTO_STRING_CHUNK ? len - off
							  : PROTO_STRING_CHUNK;

		e.type = PROTO_EV_STRING;
		e.t_start = (uint64_t)id;
		e.t_end = off;
		e.flags = (uint16_t)n;
		e.tid = t->tid;
		memcpy(e.arg, s + off, n);
		put_raw(t, &e);
	}
	publish(t);
	t->strcache[slot].hash = h;
	t->strcache[slot].id = id;
	return id;
}

/* See sensor.h. All or nothing: when the ring cannot take every chunk,
 * the values are counted as one drop and the event stands without them. */
void sn_array(const int64_t *v, size_t n)
{
	struct sn_thread *t = sn_tls.thr;
	uint64_t chunks;

	if (!t || !v || n == 0)
		return;
	chunks = (n + PROTO_EV_NARGS - 1) / PROTO_EV_NARGS;
	if (ring_free(t) < chunks && !wait_room(t, chunks)) {
		count_drop(t);
		return;
	}
	for (size_t i = 0; i < n; i += PROTO_EV_NARGS) {
		struct proto_event e = {0};
		size_t k = n - i < PROTO_EV_NARGS ? n - i : PROTO_EV_NARGS;

		e.type = PROTO_EV_ARRAY;
		e.t_start = i;
		e.t_end = n;
		e.flags = (uint16_t)k;
		e.tid = t->tid;
		memcpy(e.arg, v + i, k * sizeof(int64_t));
		put_raw(t, &e);
	}
	publish(t);
}

/* See sensor.h. Not from the sender thread on a descriptor table of its
 * own (rt_send.c): its numbers are not the program's, and the close and
 * fclose wrappers forget a number's path even unrecorded (its
 * calibration's fclose of /dev/null would erase the program's path of
 * that number). The sender runs guarded: the test costs others one
 * thread-local load. */
void sn_fd_set(int fd, int64_t path_id)
{
	if (SN_UNLIKELY(sn_tls.guard) && sn_sender_own_table())
		return;
	if (fd >= 0 && fd < SN_FD_MAX) {
		int end = atomic_load_explicit(&fdpath_end, memory_order_relaxed);

		while (path_id && fd >= end &&
		       !atomic_compare_exchange_weak(&fdpath_end, &end, fd + 1))
			;
		atomic_store_explicit(&sn_fdpath[fd], path_id,
				      memory_order_relaxed);
	}
}

/* See sensor.h. */
int64_t sn_fd_path(int fd)
{
	return sn_fd_path_fast(fd);
}

/* Forget every fd's path (a forked child: ids belong to the parent).
 * Only up to the highest number that had one: the whole table is 512 KiB,
 * and reading it in every forked child (a shell's loop) cost a page
 * fault a page of it never written (issue 31 item 4). */
void sn_fd_reset(void)
{
	int end = atomic_load_explicit(&fdpath_end, memory_order_relaxed);

	for (int i = 0; i < end; i++)
		if (atomic_load_explicit(&sn_fdpath[i], memory_order_relaxed))
			atomic_store_explicit(&sn_fdpath[i], 0,
					      memory_order_relaxed);
	atomic_store_explicit(&fdpath_end, 0, memory_order_relaxed);
}

/* Forget this thread's string cache. */
void sn_strings_reset(void)
{
	if (sn_tls.thr)
		memset(sn_tls.thr->strcache, 0, sizeof(sn_tls.thr->strcache));
}

static void free_thread_locked(int i)
{
	struct sn_thread *t = threads[i];

	written_freed += atomic_load_explicit(&t->head, memory_order_relaxed);
	dropped_freed += atomic_load_explicit(&t->dropped_total,
					      memory_order_relaxed);
	ring_reserved -= (uint64_t)t->cap * sizeof(struct proto_event);
	threads_map[i] = threads_map[nthreads - 1];
	threads[i] = threads[--nthreads];
	munmap(t, t->map_bytes);
}

/* Drain every ring (sender thread only): hand each contiguous run of
 * records to fn, at most max records in all, then release the space.
 * Rings of exited threads are freed once empty. Returns records handed. */
size_t sn_threads_drain(sn_drain_fn fn, void *ctx, size_t max)
{
	static struct sn_thread *snap[SN_MAX_THREADS];	/* sender only */
	size_t total = 0;
	int n;

	pthread_mutex_lock(&threads_mu);
	n = nthreads;
	memcpy(snap, threads, (size_t)n * sizeof(*snap));
	pthread_mutex_unlock(&threads_mu);
	for (int i = 0; i < n; i++) {
		struct sn_thread *t = snap[i];
		int dead = atomic_load_explicit(&t->dead, memory_order_acquire);
		uint64_t h = atomic_load_explicit(&t->head, memory_order_acquire);
		uint64_t tl = atomic_load_explicit(&t->tail, memory_order_relaxed);
		uint64_t k = h - tl;

		if (k > max - total)
			k = max - total;
		if (k > 0) {
			uint64_t r = tl % t->cap;
			uint64_t run = t->cap - r < k ? t->cap - r : k;

			fn(ctx, &t->ring[r], (size_t)run);
			if (k > run)
				fn(ctx, &t->ring[0], (size_t)(k - run));
			atomic_store_explicit(&t->tail, tl + k,
					      memory_order_release);
			total += k;
		}
		atomic_store_explicit(&t->kicked, 0, memory_order_relaxed);
		if (dead && tl + k == h) {
			pthread_mutex_lock(&threads_mu);
			for (int j = 0; j < nthreads; j++)
				if (threads[j] == t &&
				    atomic_load(&t->dead) &&
				    atomic_load(&t->head) == tl + k) {
					free_thread_locked(j);
					break;
				}
			pthread_mutex_unlock(&threads_mu);
		}
	}
	return total;
}

/* 1 when a ring's producer has kicked the sender since its last drain
 * (the ring was past half full). */
int sn_threads_kicked(void)
{
	int k = 0;

	pthread_mutex_lock(&threads_mu);
	for (int i = 0; i < nthreads && !k; i++)
		k = atomic_load_explicit(&threads[i]->kicked,
					 memory_order_relaxed);
	pthread_mutex_unlock(&threads_mu);
	return k;
}

/* Records waiting in every ring (a snapshot; the producers go on). */
size_t sn_threads_pending(void)
{
	size_t total = 0;

	pthread_mutex_lock(&threads_mu);
	for (int i = 0; i < nthreads; i++)
		total += (size_t)(atomic_load_explicit(&threads[i]->head,
						       memory_order_acquire) -
				  atomic_load_explicit(&threads[i]->tail,
						       memory_order_relaxed));
	pthread_mutex_unlock(&threads_mu);
	return total;
}

/* Events dropped so far by every thread of this process. */
uint64_t sn_threads_dropped(void)
{
	uint64_t d;

	pthread_mutex_lock(&threads_mu);
	d = dropped_freed;
	for (int i = 0; i < nthreads; i++)
		d += atomic_load_explicit(&threads[i]->dropped_total,
					  memory_order_relaxed);
	pthread_mutex_unlock(&threads_mu);
	return d + atomic_load_explicit(&dropped_noring, memory_order_relaxed);
}

/* Records written so far by every thread of this process; 0 when the
 * registry is busy (the exit path calls it: an exit from a signal handler
 * on a thread that holds the lock must not wait for itself). */
uint64_t sn_threads_written(void)
{
	uint64_t n;

	if (pthread_mutex_trylock(&threads_mu))
		return 0;
	n = written_freed;
	for (int i = 0; i < nthreads; i++)
		n += atomic_load_explicit(&threads[i]->head, memory_order_relaxed);
	pthread_mutex_unlock(&threads_mu);
	return n;
}

/* In a forked child (single-threaded): the other threads' rings hold the
 * parent's records; unmap them, keep the calling thread's ring, emptied,
 * as thread 0. threads_mu was taken in the prepare handler. */
void sn_threads_atfork_child(void)
{
	struct sn_thread *self = sn_tls.thr;
	size_t self_map = 0;

	pthread_mutex_init(&threads_mu, NULL);
	/* every ring was wiped (map_ring): what its header said is gone,
	 * the sizes are in threads_map */
	for (int i = 0; i < nthreads; i++) {
		if (threads[i] != self)
			munmap(threads[i], threads_map[i]);
		else
			self_map = threads_map[i];
	}
	nthreads = 0;
	atomic_store(&process_settled, 0);	/* a child is young */
	ring_reserved = 0;
	dropped_freed = 0;
	written_freed = 0;
	atomic_store(&dropped_noring, 0);
	atomic_store(&next_tid, 1);
	reg_failed = 0;
	if (self && !self_map)	/* not in the registry: cannot be */
		sn_tls.thr = self = NULL;
	if (self) {
		uint64_t hdr = (sizeof(struct sn_thread) + 4095) & ~(uint64_t)4095;

		/* small pages from here: a child that execs writes a few
		 * records, and a huge page's first touch zeroed 2 MiB for
		 * them; one that lives on takes a fault per 56 records on
		 * its ring's first lap */
		(void)madvise(self, self_map, MADV_NOHUGEPAGE);
		memset(self, 0, sizeof(*self));
		self->map_bytes = self_map;
		self->populated = self_map;
		self->cap = (uint32_t)((self_map - hdr) / sizeof(struct proto_event));
		self->ring = (struct proto_event *)((char *)self + hdr);
		self->kick_at = kick_fill(self->cap);
		threads_map[nthreads] = self_map;
		threads[nthreads++] = self;
		ring_reserved = (uint64_t)self->cap * sizeof(struct proto_event);
	}
	sn_fd_reset();
}
