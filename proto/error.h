/*
 * proto/error.h - the one error type of tapestry.
 *
 * Every function that can fail returns 0 (PROTO_OK) or one of these negative
 * codes; constructors return NULL instead. proto_strerror() and
 * proto_errname() name any code, including unknown ones.
 */
#ifndef TAPESTRY_PROTO_ERROR_H
#define TAPESTRY_PROTO_ERROR_H

enum proto_err {
	PROTO_OK = 0,
#define ERR(name, value, msg) PROTO_E_##name = (value),
#include "proto/errors.def"
#undef ERR
};

/* Human-readable message for rc; never NULL, thread-safe (static strings). */
const char *proto_strerror(int rc);

/* Symbolic name for rc ("PROTO_E_TRUNCATED"); "PROTO_E_UNKNOWN" when unknown. */
const char *proto_errname(int rc);

#endif
