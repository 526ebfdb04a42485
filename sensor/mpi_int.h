/*
 * sensor/mpi_int.h - what the MPI sensor's files share (not installed).
 *
 * mpi_wrap.c owns the wrappers and their tables, mpi_compute.c the
 * computation volumes between MPI calls, mpi_fortran.c the Fortran
 * bindings of Open MPI. Everything here is hidden.
 */
#ifndef TAPESTRY_SENSOR_MPI_INT_H
#define TAPESTRY_SENSOR_MPI_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sensor/sensor.h"

/* Values an in-call array (ARRAY records after the event) holds without
 * allocating; longer ones are allocated, up to MW_ARR_MAX values. */
#define MW_ARR_SMALL 48
#define MW_ARR_MAX (1u << 18)

/* One wrapped call in progress: filled by the call's do_NAME(), emitted by
 * the common epilogue. */
struct mw_call {
	int on;				/* an event is being recorded */
	int flush;			/* sn_flush_all() after the event */
	uint16_t type;			/* PROTO_EV_*; __INVALID: no event */
	uint16_t flags;			/* PROTO_EVF_* */
	uint64_t t0;			/* entry time */
	int64_t arg[PROTO_EV_NARGS];
	int64_t *arr;			/* ARRAY values, NULL: none */
	size_t narr;
	int64_t arr_small[MW_ARR_SMALL];
};

/* Room for n ARRAY values in c (n clipped to MW_ARR_MAX; *n updated), or
 * NULL when it cannot be had: the event then goes without its array.
 * Released by mw_call_done(). */
SN_HIDDEN int64_t *mw_call_array(struct mw_call *c, size_t *n);

/* Release what mw_call_array() allocated. */
SN_HIDDEN void mw_call_done(struct mw_call *c);

/* Computation between MPI calls (mpi_compute.c). */

/* Calibrate the flop rate (or take TAPESTRY_FLOP_RATE), probe
 * perf_event_open, and publish compute_method and flop_rate with sn_meta().
 * Called once, after MPI_Init; not thread-safe against itself. */
SN_HIDDEN void mw_compute_setup(void);

/* At an MPI call's entry (now: sn_now()): the COMPUTE event covering this
 * thread's time since its previous MPI exit, if there was one. A short
 * stretch during which the thread stayed on the CPU makes no system call
 * (method 0).
 * Must be called inside sn_enter()/sn_leave(), before any sn_slot() of the
 * call. */
SN_HIDDEN void mw_compute_enter(uint64_t now);

/* After the call's record: method 1's counter read, a CPU-time read when
 * the call may have left the CPU; the next stretch starts. */
SN_HIDDEN void mw_compute_open(void);

/* The calibrated rate in flop/s (0 before mw_compute_setup). */
SN_HIDDEN double mw_flop_rate(void);

/* 0: CPU time x calibrated rate; 1: perf instruction counts. */
SN_HIDDEN int mw_compute_method(void);

/* Thread CPU time in ns (CLOCK_THREAD_CPUTIME_ID), 0 on failure. */
SN_HIDDEN uint64_t mw_thread_cpu_ns(void);

/* Time a fixed loop of iters x 8 double multiply-adds on this thread's CPU
 * clock; flop/s, or 0 when the clock failed. */
SN_HIDDEN double mw_flop_loop_rate(uint64_t iters);

#endif
