/*
 * proto/num.h - strict numbers from text: command-line options, environment
 * settings, job-description attributes. One parser for the sensor, the
 * collector and the manager, so that every part refuses the same things:
 * nothing before or after the number (no blanks), no sign where none is
 * allowed, no overflow, no value out of range. A refusal is PROTO_E_ARG
 * (proto/errors.def), never -1 (which is PROTO_E_TRUNCATED).
 */
#ifndef TAPESTRY_PROTO_NUM_H
#define TAPESTRY_PROTO_NUM_H

#include <stdint.h>

/* A whole decimal number in [lo, hi] ("+5" and "-5" as strtol reads them)
 * into *out: 0, or PROTO_E_ARG and *out untouched. */
int proto_parse_long(const char *s, long lo, long hi, long *out);

/* A byte count: digits in base (10, or 0: "0x" hex and "0" octal too),
 * then optionally k, M or G (powers of 1024) and "iB" or "B" after them, or
 * a bare "B". Into *out: 0, or PROTO_E_ARG (a sign, anything else after it, or
 * more than 2^64 - 1) and *out untouched. */
int proto_parse_size(const char *s, int base, uint64_t *out);

#endif
