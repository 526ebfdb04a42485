/*
 * tests/security/writer.c - a program for the sensor to trace: writes
 * 8-byte records 0, 1, 2 ... to FILE, pausing 100 us every 64 of them.
 *
 *   writer FILE [N]    N records (default: until killed)
 *
 * The records stored in a job are then counted against the file's size.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;
	long n = argc > 2 ? atol(argv[2]) : -1;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (uint64_t i = 0; n < 0 || (long)i < n; i++) {
		if (write(fd, &i, 8) != 8)
			return 1;
		if (i % 64 == 63)
			usleep(100);
	}
	return 0;
}
