/*
 * sensor/sensor.h - the sensor runtime shared by every preloaded library.
 *
 * The runtime (sensor/rt_*.c, prefix sn_) owns: initialisation from the
 * environment, per-thread event buffers in initial-exec TLS, the clock, the
 * string and array container records, the sender thread, calibration, fork,
 * exec, exit and fatal-signal handling. Wrapper libraries (libc.def,
 * mpi.def) only call the functions below. Everything here is built with
 * hidden visibility: a preloaded library exports nothing but wrapped symbols.
 *
 * Hot-path contract (sn_enter .. sn_commit): no lock, no syscall, no
 * allocation, errno untouched. Safe to call before the runtime is
 * initialised and after it is shut down: sn_enter() then returns 0.
 */
#ifndef TAPESTRY_SENSOR_H
#define TAPESTRY_SENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "proto/event.h"

#define SN_HIDDEN __attribute__((visibility("hidden")))

/* Begin tracing a call on this thread: returns 1 when the caller should
 * record an event (runtime ready, tracing enabled, not re-entered from
 * inside the tracer), 0 otherwise. Every 1 must be paired with sn_leave(). */
SN_HIDDEN int sn_enter(void);

/* End the section opened by sn_enter() returning 1. */
SN_HIDDEN void sn_leave(void);

/* Now, in ns, on the sensor clock: the TSC scaled by a rate measured at
 * start-up (or the vDSO CLOCK_MONOTONIC without an invariant TSC).
 * Monotonic, close to CLOCK_MONOTONIC; the sender maps every event's
 * t_start/t_end (so: stamp events with sn_now() only) exactly onto
 * CLOCK_MONOTONIC, applying TAPESTRY_CLOCK_DRIFT_PPM, before shipping.
 * Async-signal-safe. */
SN_HIDDEN uint64_t sn_now(void);

/* A record slot in this thread's buffer, its tid already set, or NULL when
 * the buffer is full (the drop is counted and reported in the trace).
 * Fill it, then sn_commit() it; no other sn_ call in between. */
SN_HIDDEN struct proto_event *sn_slot(void);

/* Publish the record returned by sn_slot(). */
SN_HIDDEN void sn_commit(struct proto_event *e);

/* Calibrations on an application thread (the MPI sensor's): between
 * sn_scratch_begin() and sn_scratch_end() this thread's records go to a
 * private ring of cap records that the sender never sees (no kick, no
 * drop below cap). NULL when out of memory or the thread has no ring. */
struct sn_scratch;
SN_HIDDEN struct sn_scratch *sn_scratch_begin(uint32_t cap);
/* Back to the thread's own ring; *ev: the records written (valid until
 * sn_scratch_free()); returns their number. */
SN_HIDDEN size_t sn_scratch_end(struct sn_scratch *s, const struct proto_event **ev);
SN_HIDDEN void sn_scratch_free(struct sn_scratch *s);

/* Emit STRING records for s[0..len) (truncated to PROTO_STRING_MAX) on this
 * thread and return its string id (> 0), or 0 when it could not be
 * recorded. Equal strings may get equal ids (a small per-thread cache). */
SN_HIDDEN int64_t sn_string(const char *s, size_t len);

/* Emit ARRAY records holding v[0..n) after the event just committed on this
 * thread (which must carry PROTO_EVF_HASARRAY). */
SN_HIDDEN void sn_array(const int64_t *v, size_t n);

/* Remember / forget / look up the path string id of a file descriptor
 * (lock-free table, racy reads are acceptable). */
SN_HIDDEN void sn_fd_set(int fd, int64_t path_id);
SN_HIDDEN int64_t sn_fd_path(int fd);

/* MPI identity of this process, once known (called by the MPI sensor after
 * MPI_Init): sent up as stream metadata. */
SN_HIDDEN void sn_set_rank(int rank, int size);

/* Add a key/value to the stream's metadata (not on the hot path). */
SN_HIDDEN void sn_meta(const char *key, const char *value);

/* Is the named sensor part enabled ("libc", "mpi", "mem")? */
SN_HIDDEN int sn_enabled(const char *part);

/* A setting (environment variable name = v) that cannot be read: said on
 * stderr whatever TAPESTRY_LOG says (a silent default would trace otherwise
 * than asked), with what it wants and what is used instead. */
SN_HIDDEN void sn_cfg_bad(const char *name, const char *v, const char *want,
			  const char *using);

/* getenv(name)'s index in words (NULL-terminated): def when unset or empty,
 * or, through sn_cfg_bad, when it is none of them (want: the words, for the
 * message; the default's name is words[def], or "the default" if def < 0). */
SN_HIDDEN int sn_env_word(const char *name, const char *const *words, int def,
			  const char *want);

/* Flush everything buffered and wait (bounded) until the collector has
 * acknowledged it: called at MPI_Abort (the job is killed next). */
SN_HIDDEN void sn_flush_all(void);
/* Ship everything buffered without waiting for the acknowledgements:
 * MPI_Finalize (the process goes on to its exit, whose final flush waits
 * for them). */
SN_HIDDEN void sn_ship_all(void);

/* Initialise the runtime now (idempotent; also done lazily by the first
 * sn_enter()). A wrapper library calls it from its constructor. Returns 0,
 * or a negative PROTO_E_* code when tracing is off. */
SN_HIDDEN int sn_init(void);
/* Defined by the MPI sensor only (sensor/mpi_flavour.c; weak here): run
 * by sn_init() before anything, it executes the process again without the
 * MPI sensor when the process holds the other MPI. Returns when it does
 * not. */
SN_HIDDEN void sn_preinit(void) __attribute__((weak));

#endif
