/*
 * bench/lttng_tp.c - instantiates the tracepoint provider of lttng_tp.h
 * (probes and tracepoint definitions) in the benchmark program itself.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
