/*
 * proto/error.c - names and messages of the error codes in errors.def.
 */
#include "proto/error.h"

const char *proto_strerror(int rc)
{
	switch (rc) {
	case PROTO_OK:
		return "success";
#define ERR(name, value, msg) case PROTO_E_##name: return msg;
#include "proto/errors.def"
#undef ERR
	default:
		return "unknown error";
	}
}

const char *proto_errname(int rc)
{
	switch (rc) {
	case PROTO_OK:
		return "PROTO_OK";
#define ERR(name, value, msg) case PROTO_E_##name: return "PROTO_E_" #name;
#include "proto/errors.def"
#undef ERR
	default:
		return "PROTO_E_UNKNOWN";
	}
}
