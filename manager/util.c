/*
 * manager/util.c - helpers shared by the subcommands.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "proto/clockid.h"
#include "proto/error.h"
#include "proto/num.h"

/* The error slot: the messages mgr_fail recorded, each "tapestry: ...\n",
 * in order. Per thread (serve's tree thread fails on its own); when full,
 * what it holds is printed first so that no message is lost. */
static __thread char slot[4096];
static __thread size_t slot_len;

void mgr_err_flush(void)
{
	if (!slot_len)
		return;
	fflush(stdout);		/* what was printed before comes before */
	fwrite(slot, 1, slot_len, stderr);
	slot_len = 0;
}

void mgr_err_clear(void)
{
	slot_len = 0;
}

int mgr_fail(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return code;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	if (slot_len + (size_t)n + sizeof("tapestry: \n") > sizeof(slot))
		mgr_err_flush();
	slot_len += (size_t)snprintf(slot + slot_len, sizeof(slot) - slot_len,
				     "tapestry: %s\n", msg);
	return code;
}

void mgr_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);		/* what was printed before comes before */
	mgr_err_flush();
	fputs("tapestry: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

char *mgr_find(const char *env, const char *build_rel, const char *installed)
{
	const char *v = env ? getenv(env) : NULL;
	char self[PATH_MAX], cand[PATH_MAX * 2];
	ssize_t n;

	if (v && *v)
		return strdup(v);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0 && build_rel) {
		self[n] = '\0';
		snprintf(cand, sizeof(cand), "%s/%s", dirname(self), build_rel);
		if (access(cand, F_OK) == 0)
			return realpath(cand, NULL);
	}
	return strdup(installed);
}

int mgr_env_check(void)
{
	static const char *const no_corr[] = {"0", "1", NULL};
	static const char *const indirect[] = {"auto", "stolen", "busy", "0",
					       "none", NULL};
	static const struct {
		const char *name;
		const char *const *words;	/* NULL: a number in lo..hi */
		long lo, hi;
		const char *want;
	} env[] = {
		{"TAPESTRY_MIN_LATENCY_NS", NULL, 0, 1000000000,
		 "a whole number of nanoseconds from 0 to 1000000000"},
		{"TAPESTRY_NO_CORRECTION", no_corr, 0, 0, "0 or 1"},
		{"TAPESTRY_PERTURB_INDIRECT", indirect, 0, 0,
		 "auto, stolen, busy, or 0 (none)"},
		{"TAPESTRY_VIZ_RUN_MAX", NULL, 16, 1L << 30,
		 "a whole number from 16 to 1073741824"},
		{"TAPESTRY_SPILL_BYTES", NULL, 0, LONG_MAX,
		 "a whole number of bytes"},
		{"TAPESTRY_POST_THREADS", NULL, 1, 2, "1 or 2"},
	};
	const char *drift = getenv("TAPESTRY_CLOCK_DRIFT_PPM");
	double ppm;
	int bad = 0;

	/* not ours, but the collectors and sensors we start would refuse it
	 * one by one */
	if (proto_drift_ppm(drift, &ppm)) {
		mgr_err("TAPESTRY_CLOCK_DRIFT_PPM='%s': want a number from %d to %d",
			drift, -PROTO_DRIFT_PPM_MAX, PROTO_DRIFT_PPM_MAX);
		bad = 1;
	}

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = getenv(env[i].name);
		long l;
		int ok = 0;

		if (!v || !*v)
			continue;
		if (env[i].words) {
			for (int k = 0; env[i].words[k]; k++)
				ok |= !strcmp(v, env[i].words[k]);
		} else {
			ok = !proto_parse_long(v, env[i].lo, env[i].hi, &l);
		}
		if (!ok) {
			mgr_err("%s='%s': want %s", env[i].name, v, env[i].want);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* What is missing when a job directory is "not found": the directory, or
 * the segments/ a collector writes into it (a directory that is not a job's:
 * "not found" alone read as if dir itself were absent). */
static const char *not_found_why(const char *dir, char *buf, size_t cap)
{
	struct stat sb;

	if (stat(dir, &sb) != 0)
		return "no such directory";
	if (!S_ISDIR(sb.st_mode))
		return "not a directory";
	snprintf(buf, cap, "%s/segments", dir);
	if (stat(buf, &sb) != 0)
		return "no segments/ in it: not a job directory (tapestry run "
		       "or launch writes one)";
	return "a file of it not found";
}

int mgr_fail_jobdir(int rc, const char *dir)
{
	char buf[PATH_MAX + 16];

	return mgr_fail(rc, "%s: not a readable job directory (%s)", dir,
			rc == PROTO_E_NOTFOUND ? not_found_why(dir, buf, sizeof(buf))
			: proto_strerror(rc));
}

struct proto_trace *mgr_trace_open(const char *dir)
{
	int rc = 0;
	struct proto_trace *t = proto_trace_open(dir, &rc);

	if (!t)
		mgr_fail_jobdir(rc, dir);
	return t;
}

void mgr_csv_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

size_t mgr_smpi_factor_span(const char *s)
{
	return strspn(s, "0123456789.:;eE+-");
}

int mgr_smpi_factor_ok(const char *s)
{
	return s && *s && mgr_smpi_factor_span(s) == strlen(s);
}

/* Sensors and collectors run in other directories than the manager (a
 * program that changes directory, a collector started elsewhere): every
 * path handed to them is absolute. */
int mgr_abs_path(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(out, cap, "%s", path);
	else if (!getcwd(cwd, sizeof(cwd)))
		return mgr_fail(PROTO_E_IO, "cannot tell the current directory: %s",
				strerror(errno));
	else
		n = snprintf(out, cap, "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= cap)
		return mgr_fail(PROTO_E_IO, "%s: path too long", path);
	return 0;
}
