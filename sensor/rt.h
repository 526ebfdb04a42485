/*
 * sensor/rt.h - internals of the sensor runtime shared by sensor/rt_*.c and
 * the wrapper libraries that want the inline hot path (sensor/libc_wrap.c).
 *
 * Owns: the per-thread state (struct sn_thread: a single-producer
 * single-consumer ring of struct proto_event; the application thread
 * produces, the sender thread consumes), the initial-exec TLS block, the
 * provisional clock read on the hot path, the runtime configuration and
 * the signal-safe logger. Everything is hidden; nothing here is exported
 * from a preloaded library.
 */
#ifndef TAPESTRY_SENSOR_RT_H
#define TAPESTRY_SENSOR_RT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SN_HAVE_TSC 1
#else
#define SN_HAVE_TSC 0
#endif

#include "proto/event.h"
#include "proto/msg.h"
#include "sensor/sensor.h"

#define SN_LIKELY(x) __builtin_expect(!!(x), 1)
#define SN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SN_TLS __thread __attribute__((tls_model("initial-exec")))

#define SN_MAX_THREADS 16384		/* registry slots */
#define SN_FD_MAX 65536			/* fd -> path table size */
#define SN_STRCACHE 16			/* per-thread string cache entries */
#define SN_RING_MIN 1024		/* events */
#define SN_RING_MAX_BYTES (64u << 20)	/* per thread */
/* The sender thread's own ring: its FLUSH and CALIB records, and the
 * calibration's samples (8192 records at most, a quarter ring) */
#define SN_SENDER_RING_BYTES (1u << 20)

/* drop_pending bits: a DROP record (drops counted), a FLUSH record (the
 * thread waited for room in its ring, TAPESTRY_RING_FULL=wait) */
#define SN_PEND_DROP 1u
#define SN_PEND_WAIT 2u
/* a run of small stdio calls is open in sn_thread.run (libc_wrap.c,
 * stdio_rec): it enters the ring before the thread's next record */
#define SN_PEND_RUN 4u
/* the longest a thread waits for the sender to make room */
#define SN_WAIT_MAX_NS (5ull * 1000000000ull)

/* Per-thread state: an mmap'd header followed by the ring. The producer
 * fields are touched only by the owning thread; head is published with a
 * release store and tail with a release store by the sender, so each side
 * sees complete records. Lines are split to avoid false sharing. */
struct sn_thread {
	/* producer-private */
	uint64_t head_priv;	/* records committed (monotonic) */
	uint64_t tail_cache;	/* last tail seen */
	uint64_t kick_at;	/* head value at which to look at the fill */
	uint32_t widx;		/* head_priv % cap, kept without division */
	uint32_t cap;		/* records in ring[] */
	uint32_t tid;		/* thread index in the process */
	uint32_t drop_pending;	/* SN_PEND_*: records owed before the next event */
	uint64_t dropped;	/* drops of this thread not yet in a DROP */
	uint64_t wait_t0;	/* post-mortem: the last wait for room, */
	uint64_t wait_t1;	/* owed as a FLUSH record (SN_PEND_WAIT) */
	uint64_t wait_cpu;	/* the wait's thread CPU time */
	uint32_t nowait;	/* a wait timed out: drop from then on */
	struct {
		uint64_t hash;
		int64_t id;
	} strcache[SN_STRCACHE];
	/* SN_PEND_RUN: the record of the open run (its stamps, the bytes and
	 * calls so far), the stamps spent inside its calls, and the stream
	 * it is on */
	struct proto_event run;
	uint64_t run_in;
	const void *run_key;
	/* Another thread's take of the open run at the end of the process
	 * (sn_runs_take): run_busy 1 while the owner uses its run
	 * (sn_run_enter .. sn_run_leave); run_ctl SN_RUN_* */
	_Atomic int run_busy;
	_Atomic int run_ctl;
	int sender;		/* the sender thread's ring: never taken */
	char pad0[64];
	/* shared */
	_Atomic uint64_t head __attribute__((aligned(64)));
	_Atomic uint64_t dropped_total;	/* every drop of this thread */
	_Atomic int kicked;		/* sender woken for this ring */
	_Atomic int dead;		/* thread exited: drain then free */
	_Atomic uint64_t tail __attribute__((aligned(64)));
	size_t map_bytes;		/* mmap size of header + ring */
	size_t populated;		/* bytes of it populated (sn_threads_populate) */
	struct proto_event *ring;
};

/* The TLS block: one per thread, no constructor, zero-initialised. */
struct sn_tls {
	int guard;		/* inside the tracer (or the sender thread) */
	int in_handler;		/* inside our fatal-signal handler */
	struct sn_thread *thr;
	uint32_t pending_tid;	/* index pre-assigned by pthread_create, +1 */
};

extern SN_TLS struct sn_tls sn_tls SN_HIDDEN;

/* Runtime state: 0 not initialised, 1 initialising, 2 ready, 3 shut down. */
enum { SN_ST_NONE = 0, SN_ST_INIT = 1, SN_ST_READY = 2, SN_ST_DOWN = 3 };
extern _Atomic int sn_state SN_HIDDEN;

/* Hot-path clock parameters (set once at init; the sender maps these
 * provisional ns onto CLOCK_MONOTONIC, see rt_clock.c). A line of its own:
 * every traced call reads it, and the linker put the sender's clock
 * anchors, stored at each of its wake-ups, right after it (each store then
 * cost the program's thread a miss on its next call). */
struct sn_clock {
	int use_tsc;
	/* 1 while the state is SN_ST_READY with the libc sensor on and the
	 * TSC used: the libc wrappers' one test before they take the guard
	 * (else the full one, call_enter in libc_wrap.c). Set after the
	 * state turns ready, cleared when it turns down (rt_init.c). */
	_Atomic int libc_hot;
	uint64_t base_tsc;
	uint64_t base_ns;
	uint64_t mult;		/* ns per tick << 32 */
} __attribute__((aligned(64)));
extern struct sn_clock sn_clk SN_HIDDEN;

/* Configuration read from the environment at init. */
struct sn_config {
	char host[256];
	char port[16];
	char secret[1024];
	size_t secretlen;
	uint64_t budget;	/* TAPESTRY_BUFFER_BYTES */
	int postmortem;
	int wait_full;		/* TAPESTRY_RING_FULL=wait: wait_room() */
	/* stream mode holding the trace (TAPESTRY_HOLD, ranks on every
	 * core): no periodic drain, a drain when a ring is half full, a full
	 * ring waits; sender_sched: TAPESTRY_SENDER_SCHED (0 normal, 1 idle,
	 * 2 batch), the sender's scheduling class while it holds */
	int hold;
	int sender_sched;
	int sens_libc, sens_mpi, sens_mem;
	int mem_period_ms;
	int drain_ms;		/* TAPESTRY_DRAIN_MS: most time between drains */
	int end_ack;		/* TAPESTRY_END_WAIT=ack: the end waits for the ACK */
	int log_level;		/* 0 off, 1 error, 2 warn, 3 info, 4 debug */
	double drift_ppm;
};
extern struct sn_config sn_cfg SN_HIDDEN;

/* ---- inline hot path --------------------------------------------------- */

SN_HIDDEN int sn_enter_slow(void);
SN_HIDDEN struct proto_event *sn_slot_slow(void);
SN_HIDDEN void sn_commit_slow(struct sn_thread *t);
SN_HIDDEN uint64_t sn_now_vdso(void);

static inline int sn_enter_fast(void)
{
	if (SN_UNLIKELY(sn_tls.guard))
		return 0;
	if (SN_UNLIKELY(atomic_load_explicit(&sn_state, memory_order_relaxed)
			!= SN_ST_READY))
		return sn_enter_slow();
	sn_tls.guard = 1;
	return 1;
}

static inline void sn_leave_fast(void)
{
	sn_tls.guard = 0;
}

/* A stamp: the TSC's count when it is used, else sn_now_vdso()'s ns. The
 * libc wrappers store stamps in their records (SN_EVF_STAMP) and leave
 * their conversion to the sender: the conversion's arithmetic, on the path
 * between the start stamp and the call, cost the call a few ns. */
static inline uint64_t sn_stamp_fast(void)
{
#if SN_HAVE_TSC
	if (SN_LIKELY(sn_clk.use_tsc))
		return __rdtsc();
#endif
	return sn_now_vdso();
}

/* A stamp in the provisional ns of sn_now_fast(). */
static inline uint64_t sn_stamp_ns(uint64_t s)
{
#if SN_HAVE_TSC
	if (SN_LIKELY(sn_clk.use_tsc)) {
		int64_t d = (int64_t)(s - sn_clk.base_tsc);

		return sn_clk.base_ns +
		       (uint64_t)(((__int128)d * (__int128)sn_clk.mult) >> 32);
	}
#endif
	return s;
}

/* Provisional ns (CLOCK_MONOTONIC's rate and origin at init; the sender
 * maps them onto CLOCK_MONOTONIC, rt_clock.c). */
static inline uint64_t sn_now_fast(void)
{
	return sn_stamp_ns(sn_stamp_fast());
}

/* A record's flag, inside the process only: its t_start and t_end are
 * stamps (sn_stamp_fast), not provisional ns. The sender converts them
 * and clears the flag when it takes the record from the ring
 * (sn_clock_fix_events), before anything else reads it. Above every
 * PROTO_EVF_* bit. */
#define SN_EVF_STAMP 0x8000u

static inline struct proto_event *sn_slot_fast(void)
{
	struct sn_thread *t = sn_tls.thr;
	struct proto_event *e;

	if (SN_UNLIKELY(!t || t->drop_pending ||
			t->head_priv - t->tail_cache >= t->cap))
		return sn_slot_slow();
	e = &t->ring[t->widx];
	e->tid = t->tid;
	e->flags = 0;
	return e;
}

/* fd -> path string id (rt_buf.c, sn_fd_set); read inline by the
 * wrappers of calls on a descriptor, which look it up on every call. */
extern _Atomic int64_t sn_fdpath[SN_FD_MAX] SN_HIDDEN;

static inline int64_t sn_fd_path_fast(int fd)
{
	if (SN_LIKELY((unsigned)fd < SN_FD_MAX))
		return atomic_load_explicit(&sn_fdpath[fd],
					    memory_order_relaxed);
	return 0;
}

/* Records ahead of the producer whose lines it asks for (for writing)
 * at each commit. The hardware prefetcher alone left the cost of a record
 * to the state of its lines (in no cache on a ring's first lap, cached
 * when the sender had just read them), which a calibration cannot know.
 * Asked for 16 records (1152 bytes) ahead, the lines are in by the time
 * the record is written whatever their state (bench/perturbation.sh).
 * Both ends of the record: at 72 bytes a record, one line in nine holds
 * no record's start. */
#define SN_PREFETCH_AHEAD 16

/* Ask for the line of p, for writing. An asm statement, not
 * __builtin_prefetch: GCC 12 takes a function whose only effect is a
 * __builtin_prefetch for one without effect and drops it with its call
 * (sn_prefetch_ahead compiled to nothing in every wrapper). PREFETCHW
 * executes as a no-op on x86 processors that lack it. */
static inline void sn_prefetchw(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* The prefetch of sn_commit_fast() for the record after the slot just
 * taken (a wrapper that fills its record before the call issues it there,
 * where the start stamp's latency hides it). */
static inline void sn_prefetch_ahead(const struct sn_thread *t)
{
	uint32_t w = t->widx + 1 == t->cap ? 0 : t->widx + 1;
	uint32_t a = w + SN_PREFETCH_AHEAD;

	if (SN_LIKELY(t->cap > SN_PREFETCH_AHEAD)) {
		const char *p = (const char *)&t->ring[a < t->cap ? a : a - t->cap];

		sn_prefetchw(p);
		sn_prefetchw(p + sizeof(struct proto_event) - 1);
	}
}

/* Publish the slot sn_slot_fast() gave; prefetch: issue the prefetch
 * (0 when the caller did it with sn_prefetch_ahead()). */
static inline void sn_commit_pf(struct proto_event *e, int prefetch)
{
	struct sn_thread *t = sn_tls.thr;
	uint64_t h = t->head_priv + 1;

	(void)e;
	if (prefetch)
		sn_prefetch_ahead(t);
	t->widx = t->widx + 1 == t->cap ? 0 : t->widx + 1;
	t->head_priv = h;
	atomic_store_explicit(&t->head, h, memory_order_release);
	if (SN_UNLIKELY(h >= t->kick_at))
		sn_commit_slow(t);
}

static inline void sn_commit_fast(struct proto_event *e)
{
	sn_commit_pf(e, 1);
}

/* The open run's owner and another thread taking it at the end
 * (sn_runs_take): SN_RUN_FREE the owner's, SN_RUN_FROZEN being taken (the
 * owner records its calls alone meanwhile), SN_RUN_TAKEN taken (the
 * owner's SN_PEND_RUN is stale: it drops it at its next section). */
enum { SN_RUN_FREE = 0, SN_RUN_FROZEN = 1, SN_RUN_TAKEN = 2 };

/* sn_run_enter() having met a take in progress (0) or done (1). */
SN_HIDDEN int sn_run_enter_slow(struct sn_thread *t, int ctl);

/* The owner's section on t->run and SN_PEND_RUN: 1 when it may use them
 * until sn_run_leave(), 0 while they are being taken (then leave at once,
 * nothing touched). No fence here: the taker's membarrier orders the
 * busy store before the control load (a compiler barrier suffices). */
static inline int sn_run_enter(struct sn_thread *t)
{
	int ctl;

	atomic_store_explicit(&t->run_busy, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	ctl = atomic_load_explicit(&t->run_ctl, memory_order_relaxed);
	if (SN_LIKELY(ctl == SN_RUN_FREE))
		return 1;
	return sn_run_enter_slow(t, ctl);
}

static inline void sn_run_leave(struct sn_thread *t)
{
	atomic_store_explicit(&t->run_busy, 0, memory_order_release);
}

/* A difference of two stamps in ns. */
static inline uint64_t sn_stamp_dur_ns(uint64_t d)
{
#if SN_HAVE_TSC
	if (SN_LIKELY(sn_clk.use_tsc))
		return (uint64_t)(((unsigned __int128)d * sn_clk.mult) >> 32);
#endif
	return d;
}

/* ---- runtime internals (rt_*.c) ----------------------------------------- */

/* rt_buf.c */
SN_HIDDEN struct sn_thread *sn_thread_register(void);
SN_HIDDEN uint32_t sn_tid_alloc(void);
SN_HIDDEN void sn_threads_lock(void);
SN_HIDDEN void sn_threads_unlock(void);
/* Visit each registered ring (sender side): drain up to the head seen,
 * calling fn on contiguous runs; frees dead, empty rings. Returns records. */
typedef int (*sn_drain_fn)(void *ctx, const struct proto_event *ev, size_t n);
SN_HIDDEN size_t sn_threads_drain(sn_drain_fn fn, void *ctx, size_t max);
SN_HIDDEN uint64_t sn_threads_dropped(void);
SN_HIDDEN uint64_t sn_threads_written(void);
/* Records waiting in every ring, a snapshot (sender side). */
SN_HIDDEN size_t sn_threads_pending(void);
/* 1 when a ring past half full kicked the sender since its last drain. */
SN_HIDDEN int sn_threads_kicked(void);
SN_HIDDEN void sn_threads_atfork_child(void);
/* Sender thread: populate what the rings' registration left (their first
 * 2 MiB only), once the process lives on. */
SN_HIDDEN void sn_threads_populate(void);
/* Emit an instant tracer event on the calling thread, bypassing the guard
 * (used by the sender and the signal handler). 0 or PROTO_E_FULL. */
SN_HIDDEN int sn_emit(uint16_t type, uint16_t flags, uint64_t t0, uint64_t t1,
		      int64_t a0, int64_t a1, int64_t a2, int64_t a3);
SN_HIDDEN void sn_fd_reset(void);
SN_HIDDEN void sn_strings_reset(void);
/* Put t's open run (SN_PEND_RUN) into its ring now (owner thread only,
 * inside sn_run_enter; a full ring counts it as a drop). Keeps errno.
 * Returns 1 still inside the section, 0 when it had to leave it (a take
 * began while it waited for room: the taker has the run). */
SN_HIDDEN int sn_run_flush(struct sn_thread *t);
/* Put the open run of every other thread (and the caller's own, unless it
 * is inside its run's section, interrupted by a signal) into the caller's
 * ring: before the final flush of an exit, an exec or a fatal signal,
 * whose other threads would keep theirs past the end of the stream.
 * Waits for an owner inside its section (bounded); async-signal-safe (a
 * registry lock held by the interrupted code: nothing taken). */
SN_HIDDEN void sn_runs_take(void);

/* rt_clock.c */
SN_HIDDEN void sn_clock_init(void);
/* sn_clock_init() with the TSC's rate known (sn_clk.mult, from the
 * calibration cache): no 0.2 ms measure on the start path. 0: measure. */
SN_HIDDEN void sn_clock_init_rate(uint64_t mult);
SN_HIDDEN void sn_clock_anchor(void);
SN_HIDDEN uint64_t sn_clock_fix(uint64_t prov);
SN_HIDDEN void sn_clock_fix_events(struct proto_event *ev, size_t n);
SN_HIDDEN const char *sn_clock_method(void);
SN_HIDDEN double sn_clock_tsc_hz(void);

/* rt_send.c */
SN_HIDDEN int sn_sender_start(void);
SN_HIDDEN void sn_sender_kick(void);
/* A thread waits for the sender (a full ring, a flush): the sender back in
 * the normal scheduling class if it was lowered (TAPESTRY_SENDER_SCHED). */
SN_HIDDEN void sn_sender_boost(void);
SN_HIDDEN int sn_sender_is_self(void);
/* 1 on the sender thread once it has a descriptor table of its own
 * (unshare(CLONE_FILES)): the program's descriptors are not in it. */
SN_HIDDEN int sn_sender_own_table(void);
SN_HIDDEN int sn_sender_running(void);
/* 1 when a flush is asked and not done, the sender asked to stop or
 * tracing off: the start-up calibration gives way (rt_init.c). */
SN_HIDDEN int sn_sender_ending(void);
SN_HIDDEN void sn_sender_atfork_child(void);
SN_HIDDEN void sn_sender_stop(void);
/* Ask the sender to ship what is buffered; reason: -2 ship without
 * waiting for the acknowledgements, -1 plain flush (acknowledged), 0 exit
 * (BYE normal), 1 fatal signal (BYE signal), 2 exec (BYE exec). Waits at
 * most timeout_ms. Async-signal-safe except for the first call's lazy
 * set-up. */
SN_HIDDEN void sn_sender_flush(int reason, int timeout_ms);
SN_HIDDEN void sn_sender_calibrate(int timeout_ms);
/* On the sender thread between calibration samples: drain the rings when
 * they hold enough (no-op elsewhere). */
SN_HIDDEN void sn_sender_tend(void);
/* Resume after a failed exec: new stream, reconnect. */
SN_HIDDEN void sn_sender_resume(void);
SN_HIDDEN void sn_sender_meta_changed(void);

/* rt_fd.c: the runtime's own descriptors (socket, eventfd, stat file),
 * one slot each. All async-signal-safe, lock-free. */
enum { SN_OWN_SOCK, SN_OWN_EVENT, SN_OWN_STAT, SN_OWN_N };
/* fd (the caller's, just made) moved high and close-on-exec: the new
 * number, or fd itself when it cannot be moved. For descriptors the runtime
 * holds a while (created at the lowest free number, they would take the
 * numbers the program is about to get). */
SN_HIDDEN int sn_own_high(int fd);
/* Publish fd (which the caller just made, close-on-exec) in slot at
 * once, then move it high when it can be. Returns the number now
 * published (-1: dropped by an eviction meanwhile). */
SN_HIDDEN int sn_own_adopt(int slot, int fd);
/* Begin a use of slot's descriptor: returns it, or -1 when the slot is
 * empty or was dropped; every get is paired with sn_own_put(slot, phase)
 * once the system calls on it are done (the number stays valid until). */
SN_HIDDEN int sn_own_get(int slot, unsigned *phase);
SN_HIDDEN void sn_own_put(int slot, unsigned phase);
/* The number published now, for poll() only (it may be stale at once). */
SN_HIDDEN int sn_own_peek(int slot);
/* The owner closes slot's descriptor (waiting for its users); the slot is
 * empty after. */
SN_HIDDEN void sn_own_close(int slot);
/* The program is about to close or replace every descriptor in [lo, hi]:
 * move the runtime's out of the range (or drop them when no number is
 * free above it), so the program's call succeeds as it would untraced.
 * Called by the close/dup2/dup3/close_range/closefrom wrappers. */
SN_HIDDEN void sn_own_evict(long lo, long hi);
/* close(2) past the wrappers, for a descriptor that is not the program's
 * (the close wrapper forgets that number's path and evicts the slots). */
SN_HIDDEN void sn_raw_close(int fd);
/* A forked child: close the parent's descriptors, empty the slots. */
SN_HIDDEN void sn_own_atfork_child(void);
/* rt_fd.c: absolute paths. The absolute, lexically cleaned form of a
 * relative path (dirfd: AT_FDCWD or a directory's descriptor) into out:
 * its length, or 0 when path is absolute, empty or its directory unknown
 * (the caller keeps path as given). No system call unless the working
 * directory changed since the last one or dirfd's path is not cached.
 * Thread-safe, lock-free; not async-signal-safe (the wrappers call it
 * under their guard). */
SN_HIDDEN size_t sn_path_abs(int dirfd, const char *path, char *out,
			     size_t cap);
/* The working directory may have changed (chdir, fchdir): read it again
 * when next needed. */
SN_HIDDEN void sn_cwd_forget(void);
/* Remember that string id names the directory s[0..n) (absolute). */
SN_HIDDEN void sn_dir_remember(int64_t id, const char *s, size_t n);

/* rt_init.c (sn_init is in sensor.h) */
SN_HIDDEN uint64_t sn_stream_id(void);
SN_HIDDEN void sn_new_stream_id(void);
/* The verifier of this stream's key (PROTO_MAC bytes; proto/auth.h). */
SN_HIDDEN const uint8_t *sn_stream_verifier(void);
/* Fill m (id and key/values) with the stream metadata. Thread-safe. */
SN_HIDDEN void sn_meta_fill(struct proto_meta *m);
SN_HIDDEN void sn_calibrate(int at_exit);
/* The start-up calibration from the host's cache only (CALIB records and
 * META calib_ns): 1 when the cache held it (sn_calibrate(0) must then not
 * run), 0 otherwise. Sender thread, before its first META. */
SN_HIDDEN int sn_calibrate_cached(void);
/* Calibration series (rt_init.c): sampled until quiet, CAL_QUIET samples
 * within 30 % + 1 ns of the third fastest among CAL_MIN at least (CAL_MAX
 * at most); the estimate is the mean of those in that band. */
#define CAL_MIN 31
#define CAL_MAX 255
#define CAL_QUIET 16
/* A process that wrote this many records calibrates again at exit (the
 * lower of its two calibrations counts): from there 1 ns of error a
 * record outweighs the exit calibration's own time (sn_shutdown). */
#define CAL_EXIT_MIN_RECORDS 100000
SN_HIDDEN void sn_calibrate_at_end(void);
/* At an exec about to start (libc_wrap.c's exec_pre): a shell, env or the
 * like that forked nothing is a shim, its stream marked META launcher
 * (rt_init.c, "launchers"). */
SN_HIDDEN void sn_exec_meta(void);
/* The calibration cache (rt_init.c, "calibration cache"): a file per host,
 * boot, CPU, library and clock holding the TSC rate and the three costs
 * (ps, with the samples they took). */
enum { SN_CC_TSC = 1, SN_CC_HOT = 2, SN_CC_STRING = 4, SN_CC_STDIO = 8 };
struct sn_calcache {
	unsigned have;		/* SN_CC_* */
	uint64_t tsc_mult;	/* sn_clk.mult */
	int64_t cost_ps[3];	/* hot path, cached string, stdio call */
	int64_t samples[3];
};
/* Parse a cache file's text written for key (its lines): 0 and v, or -1
 * (another key, a bad line, a value out of range). */
SN_HIDDEN int sn_calcache_parse(const char *text, const char *key,
				struct sn_calcache *v);
/* The file's text into buf; its length, or -1 when it does not fit. */
SN_HIDDEN int sn_calcache_format(char *buf, size_t cap, const char *key,
				 const struct sn_calcache *v);
SN_HIDDEN int sn_cal_quiet(const double *d, int n);
SN_HIDDEN double sn_cal_estimate(const double *d, int n);
/* Emit again, on the calling thread, every CALIB record sn_calibrate has
 * emitted in this process (evtypes 0, STRING, FWRITE; not the MPI sensor's),
 * for a stream continued after a failed exec; returns how many. */
SN_HIDDEN int sn_calib_replay(void);
SN_HIDDEN void sn_proc_start_event(void);
SN_HIDDEN int sn_rank(void);
SN_HIDDEN void sn_exit_event(int status);
SN_HIDDEN void sn_shutdown(int reason);
SN_HIDDEN void sn_after_fork_child(void);
/* 1 in the child of vfork() (it shares our memory: touch nothing). */
SN_HIDDEN int sn_in_vfork_child(void);
SN_HIDDEN void sn_signals_install(void);
SN_HIDDEN int sn_sig_is_fatal(int signo);
SN_HIDDEN int sn_sigaction_app(int signo, const struct sigaction *act,
			       struct sigaction *old,
			       int (*real)(int, const struct sigaction *,
					   struct sigaction *));

/* rt_log.c: signal-safe, off unless TAPESTRY_LOG asks */
SN_HIDDEN void sn_log(int level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define SN_LOG(lvl, ...)                                                    \
	do {                                                                \
		if (sn_cfg.log_level >= (lvl))                              \
			sn_log((lvl), __func__, __VA_ARGS__);               \
	} while (0)
#define SN_ERROR(...) SN_LOG(1, __VA_ARGS__)
#define SN_WARN(...) SN_LOG(2, __VA_ARGS__)
#define SN_INFO(...) SN_LOG(3, __VA_ARGS__)
#define SN_DEBUG(...) SN_LOG(4, __VA_ARGS__)

#endif
