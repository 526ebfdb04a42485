/*
 * tests/strev.h - a string of a trace as the sensor writes it: STRING events
 * of at most PROTO_STRING_CHUNK bytes each (t_start the string's id, t_end
 * the offset, flags the length; docs/FORMAT.md). For the programs that write
 * traces by hand; header only, as each is linked alone.
 */
#ifndef TAPESTRY_TESTS_STREV_H
#define TAPESTRY_TESTS_STREV_H

#include <stdint.h>
#include <string.h>

#include "proto/event.h"

/* The STRING events of s (id, thread tid) into ev: how many (len /
 * PROTO_STRING_CHUNK rounded up; ev must have room). */
static inline size_t tests_string_events(struct proto_event *ev, uint32_t tid,
					 int64_t id, const char *s)
{
	size_t len = strlen(s), n = 0;

	for (size_t off = 0; off < len; off += PROTO_STRING_CHUNK) {
		struct proto_event *e = &ev[n++];
		size_t take = len - off < PROTO_STRING_CHUNK ? len - off :
			      PROTO_STRING_CHUNK;

		memset(e, 0, sizeof(*e));
		e->type = PROTO_EV_STRING;
		e->tid = tid;
		e->t_start = (uint64_t)id;
		e->t_end = off;
		e->flags = (uint16_t)take;
		memcpy(e->arg, s + off, take);
	}
	return n;
}

#endif
