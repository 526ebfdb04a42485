/*
 * fuzz/scratch.h - what the job-directory fuzz targets share (header only):
 * a scratch directory per fuzz process, removed at exit (libFuzzer exits
 * through exit()), one job directory per input under it, and their input
 * format, a list of chunks [u8 kind][u8 stream][u16le len][len bytes].
 */
#ifndef TAPESTRY_FUZZ_SCRATCH_H
#define TAPESTRY_FUZZ_SCRATCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static char fz_base[64];

static int fz_rm_one(const char *path, const struct stat *sb, int flag,
		     struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fz_cleanup(void)
{
	if (fz_base[0])
		nftw(fz_base, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh job directory path for this input (the scratch directory,
 * /tmp/fuzz-NAME.XXXXXX, made at the first call). */
static void fz_jobdir(char *dir, size_t n, const char *name)
{
	static unsigned iter;

	if (!fz_base[0]) {
		snprintf(fz_base, sizeof(fz_base), "/tmp/fuzz-%s.XXXXXX", name);
		if (!mkdtemp(fz_base))
			abort();
		atexit(fz_cleanup);
	}
	snprintf(dir, n, "%s/j%u", fz_base, iter++);
}

/* The next chunk of the input: 1 with its kind, stream byte and bytes
 * (len cut to what is left), 0 at the end. */
static int fz_chunk(const uint8_t **data, size_t *size, uint8_t *kind,
		    uint8_t *stream, const uint8_t **p, size_t *len)
{
	if (*size < 4)
		return 0;
	*kind = (*data)[0];
	*stream = (*data)[1];
	*len = (size_t)(*data)[2] | (size_t)(*data)[3] << 8;
	*data += 4;
	*size -= 4;
	if (*len > *size)
		*len = *size;
	*p = *data;
	*data += *len;
	*size -= *len;
	return 1;
}

/* Remove this input's job directory. */
static void fz_rmdir(const char *dir)
{
	if (nftw(dir, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		abort();
}

#endif
