/*
 * sensor/libc.h - the libc sensor's internal interface (hidden).
 */
#ifndef TAPESTRY_SENSOR_LIBC_H
#define TAPESTRY_SENSOR_LIBC_H

#include "sensor/sensor.h"

/* Resolve the real libc functions of libc.def with dlsym(RTLD_NEXT).
 * Thread-safe and idempotent; every wrapper calls it when its pointer is
 * still NULL, so wrappers work before the library's constructor ran. */
SN_HIDDEN void sn_libc_resolve(void);

#endif
