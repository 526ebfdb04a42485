/*
 * collector/log.c - leveled log lines to stderr or a file reopened on
 * SIGHUP.
 *
 * One line per call: "2024-01-02T03:04:05.678 LEVEL func: message". The
 * file is opened in append mode so rotation by rename + SIGHUP loses
 * nothing. Not thread-safe (the collector is one event loop).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include "collector/internal.h"

int col_log_level = COL_LOG_INFO;

static FILE *log_fp;
static char *log_path;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int col_log_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (name && !strcasecmp(name, level_names[i]))
			return i;
	return -1;
}

/* Logs name peers, stream ids and paths: created 0600 (SECURITY.md). */
static FILE *open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	FILE *fp;

	if (fd < 0)
		return NULL;
	fp = fdopen(fd, "a");
	if (!fp)
		close(fd);
	return fp;
}

int col_log_open(const char *path)
{
	FILE *fp;

	col_log_close();
	if (!path)
		return 0;
	fp = open_log(path);
	if (!fp)
		return PROTO_E_IO;
	log_path = strdup(path);
	if (!log_path) {
		fclose(fp);
		return PROTO_E_NOMEM;
	}
	setvbuf(fp, NULL, _IOLBF, 0);
	log_fp = fp;
	return 0;
}

int col_log_reopen(void)
{
	FILE *fp;

	if (!log_path)
		return 0;
	fp = open_log(log_path);
	if (!fp)
		return PROTO_E_IO;	/* keep writing to the old one */
	setvbuf(fp, NULL, _IOLBF, 0);
	if (log_fp)
		fclose(log_fp);
	log_fp = fp;
	return 0;
}

void col_log_close(void)
{
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
	free(log_path);
	log_path = NULL;
}

void col_log_write(int level, const char *func, const char *fmt, ...)
{
	FILE *fp = log_fp ? log_fp : stderr;
	struct timeval tv;
	struct tm tm;
	char ts[32];
	va_list ap;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (level < 0)
		level = 0;
	if (level > 3)
		level = 3;
	flockfile(fp);
	fprintf(fp, "%s.%03ld %s %s: ", ts, (long)(tv.tv_usec / 1000),
		level_names[level], func);
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fputc('\n', fp);
	funlockfile(fp);
}
