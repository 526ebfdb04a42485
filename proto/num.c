/*
 * proto/num.c - strict numbers from text. See num.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/num.h"

int proto_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s)
		return PROTO_E_ARG;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi ||
	    *s == ' ' || *s == '\t' || *s == '\n')
		return PROTO_E_ARG;
	*out = v;
	return 0;
}

int proto_parse_size(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')		/* no blank, no sign */
		return PROTO_E_ARG;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s)
		return PROTO_E_ARG;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && !strcmp(end, "iB"))
		end += 2;
	else if (!strcmp(end, "B"))
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return PROTO_E_ARG;
	*out = (uint64_t)v << shift;
	return 0;
}
