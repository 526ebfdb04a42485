/*
 * deploy/examples/iodemo.c - a small program doing file I/O in two threads and
 * one forked child: what `tapestry run` traces in the demo. `iodemo DIR flush`
 * flushes each line written: a record per call (consecutive fprintf calls
 * are otherwise one record, a run: docs/modules/sensor-libc.md, "Runs").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int flush_lines;

static void *writer(void *arg)
{
	const char *path = arg;
	FILE *f = fopen(path, "w");

	if (!f)
		return NULL;
	for (int i = 0; i < 1000; i++) {
		fprintf(f, "line %d of %s\n", i, path);
		if (flush_lines)
			fflush(f);
	}
	fclose(f);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	char a[4096], b[4096], buf[512];
	pthread_t t1, t2;

	flush_lines = argc > 2 && !strcmp(argv[2], "flush");

	snprintf(a, sizeof(a), "%s/iodemo-a.txt", dir);
	snprintf(b, sizeof(b), "%s/iodemo-b.txt", dir);
	pthread_create(&t1, NULL, writer, a);
	pthread_create(&t2, NULL, writer, b);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pid_t child = fork();
	if (child == 0) {
		FILE *f = fopen(a, "r");
		size_t total = 0, n;

		while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			total += n;
		if (f)
			fclose(f);
		printf("child read %zu bytes\n", total);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	unlink(a);
	unlink(b);
	printf("iodemo done\n");
	return 0;
}
