/*
 * sensor/libc_syms.c - not compiled: run through the C preprocessor by
 * sensor/local.am to make the linker version script of
 * libtapestry-sensor.so, so that it exports exactly the calls of libc.def.
 */
SN_VERSION_OPEN
#define SN_CALL(kind, ret, name, params, args) name;
#include "sensor/libc.def"
#undef SN_CALL
SN_VERSION_CLOSE
