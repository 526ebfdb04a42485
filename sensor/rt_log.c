/*
 * sensor/rt_log.c - the sensor's logger: off unless TAPESTRY_LOG asks.
 *
 * Formats into a stack buffer and writes with one raw write(2) system call
 * (on the sender thread with a table of its own, to a copy of the program's
 * descriptor 2), so it never re-enters the wrappers, never allocates and
 * can be used from the sender thread, fork handlers and (sparingly) signal
 * handlers.
 */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sensor/rt.h"

/* The program's standard error, for the caller: 2, or on the sender thread
 * when it has a descriptor table of its own (rt_send.c) a copy of the
 * program's descriptor 2 taken now (pidfd_getfd, else a new open of
 * /proc/self/fd/2), which *opened says to close; -1 when neither works. A
 * copy kept in the sender's table would keep the program's stderr open
 * after the program closed it (a pipe's reader would wait for its end). */
static int stderr_fd(int *opened)
{
	int fd = -1;

	*opened = 0;
	if (!sn_sender_own_table())
		return 2;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	{
		int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

		if (pfd >= 0) {
			fd = (int)syscall(SYS_pidfd_getfd, pfd, 2, 0);
			sn_raw_close(pfd);
		}
	}
#endif
	if (fd < 0)
		fd = open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_CLOEXEC |
			  O_NOCTTY);
	*opened = fd >= 0;
	return fd;
}

/* Write one line "tapestry-sensor[pid] LEVEL func: message" to stderr. */
void sn_log(int level, const char *func, const char *fmt, ...)
{
	static const char *const names[] = {"", "error", "warn", "info",
					    "debug"};
	char buf[512];
	va_list ap;
	int n, m, fd, opened;

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
	fd = stderr_fd(&opened);
	if (fd >= 0)
		syscall(SYS_write, fd, buf, (size_t)n);
	if (opened)
		sn_raw_close(fd);
}
