/*
 * tests/security/writer.c - a program for the sensor to trace: writes
 * 8-byte records 0, 1, 2 ... to FILE, pausing 100 us every 64 of them.
 *
 *   writer FILE [N [AFTER]]   N records (default or -1: until killed); with
 *                             AFTER, SIGINT, SIGTERM and SIGHUP are handled:
 *                             AFTER more records, then exit 0 (a program
 *                             that cleans up, writing, after Ctrl-C)
 *
 * The records stored in a job are then counted against the file's size.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	int fd;
	long n = argc > 2 ? atol(argv[2]) : -1;
	long after = argc > 3 ? atol(argv[3]) : -1;

	if (argc < 2)
		return 2;
	if (after >= 0) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (uint64_t i = 0; n < 0 || (long)i < n; i++) {
		if (stop && after-- <= 0)
			return 0;
		if (write(fd, &i, 8) != 8)
			return 1;
		if (i % 64 == 63)
			usleep(100);
	}
	return 0;
}
