/*
 * sensor/rt_log.c - the sensor's logger: off unless TAPESTRY_LOG asks.
 *
 * Formats into a stack buffer and writes with one raw write(2) system call,
 * so it never re-enters the wrappers, never allocates and can be used from
 * the sender thread, fork handlers and (sparingly) signal handlers.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sensor/rt.h"

/* Write one line "tapestry-sensor[pid] LEVEL func: message" to stderr. */
void sn_log(int level, const char *func, const char *fmt, ...)
{
	static const char *const names[] = {"", "error", "warn", "info",
					    "debug"};
	char buf[512];
	va_list ap;
	int n, m;

	if (level < 1 || level > 4)
		level = 4;
	n = snprintf(buf, sizeof(buf), "tapestry-sensor[%d] %s %s: ",
		     (int)getpid(), names[level], func);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	syscall(SYS_write, 2, buf, (size_t)n);
}
