/*
 * fuzz/fuzz_jobdesc.c - libFuzzer target for the job description loader
 * (manager/launch/jobdesc.c): arbitrary bytes as APP.xml, validated against the
 * shipped schema (share/jobdesc.rng) and checked; must never crash, leak or
 * accept what the checks refuse. Messages go to /dev/null.
 *
 * FUZZ-LINK: manager/launch/jobdesc.c manager/util.c manager/launch/spawn.c -I/usr/include/libxml2 -lxslt -lxml2 -DTAPESTRY_BINDIR="/usr/local/bin" -DTAPESTRY_PKGDATADIR="/usr/local/share/tapestry" -DTAPESTRY_PKGLIBDIR="/usr/local/lib/tapestry" -DPACKAGE_STRING="tapestry"
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "manager/launch/jobdesc.h"

static char path[64], schema[4096];
static FILE *devnull;

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		const char *src = getenv("TAPESTRY_SRCDIR");
		int fd;

		snprintf(schema, sizeof(schema), "%s/share/jobdesc.rng",
			 src ? src : ".");
		snprintf(path, sizeof(path), "/tmp/fuzz-jobdesc.XXXXXX");
		if ((fd = mkstemp(path)) < 0)
			abort();
		close(fd);
		devnull = fopen("/dev/null", "w");
		atexit(cleanup);
	}
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	struct mgr_jobdesc *jd = mgr_jobdesc_load(path, schema, 0, devnull);
	mgr_jobdesc_free(jd);
	return 0;
}
