/*
 * proto/clockid.c - which CLOCK_MONOTONIC a process reads. See clockid.h.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/clockid.h"

/* The file's first len - 1 bytes or fewer, NUL-terminated; "" on error. */
static void slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

void proto_clockid_squeeze(char *s)
{
	char *w = s;
	int blank = 0;

	for (const char *r = s; *r; r++) {
		if (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r') {
			blank = w != s;
			continue;
		}
		if (blank)
			*w++ = ' ';
		blank = 0;
		*w++ = *r;
	}
	*w = 0;
}

void proto_clockid_read(struct proto_clockid *c)
{
	ssize_t n;

	slurp("/proc/sys/kernel/random/boot_id", c->boot_id, sizeof(c->boot_id));
	proto_clockid_squeeze(c->boot_id);
	n = readlink("/proc/self/ns/time", c->timens, sizeof(c->timens) - 1);
	if (n > 0)
		c->timens[n] = 0;
	else
		strcpy(c->timens, "none");
	slurp("/proc/self/timens_offsets", c->offsets, sizeof(c->offsets));
	proto_clockid_squeeze(c->offsets);
}

int proto_drift_ppm(const char *s, double *ppm)
{
	char *end;
	double d;

	*ppm = 0.0;
	if (!s || !*s)
		return 0;
	d = strtod(s, &end);
	if (end == s || *end || !(d >= -PROTO_DRIFT_PPM_MAX && d <= PROTO_DRIFT_PPM_MAX))
		return -1;
	*ppm = d;
	return 0;
}
