/*
 * bench/lttng_tp.h - the LTTng-UST tracepoint provider of the overhead
 * benchmark: one event, tapestry_bench:write, with the integer fields the
 * libc sensor records for a write(2) (fd, bytes requested, result, path id,
 * errno, offset; LTTng adds its own timestamp). Compiled by
 * bench/sensor_overhead.sh only, with -llttng-ust, when liblttng-ust-dev is
 * installed; not part of the build.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tapestry_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(TAPESTRY_BENCH_LTTNG_TP_H) || \
	defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TAPESTRY_BENCH_LTTNG_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	tapestry_bench, write,
	LTTNG_UST_TP_ARGS(int, fd, uint64_t, requested, int64_t, result,
			  int64_t, path, int, err, int64_t, offset),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, fd, fd)
		lttng_ust_field_integer(uint64_t, requested, requested)
		lttng_ust_field_integer(int64_t, result, result)
		lttng_ust_field_integer(int64_t, path, path)
		lttng_ust_field_integer(int, err, err)
		lttng_ust_field_integer(int64_t, offset, offset)
	)
)

#endif /* TAPESTRY_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
