/*
 * fuzz/gen_corpus_codec.c - writes the seed inputs of fuzz/fuzz_codec.c.
 *
 * A handful of small valid batches (empty, stored, zstd at levels 1 and 3,
 * incompressible records stored by fallback), each under 4 KiB, into the
 * directory given as argument, in the codec's current format. The corpus
 * keeps every format: fuzz/corpus/codec/NAME (version 1, written before
 * version 2), fuzz/corpus/codec/v2-NAME (version 2) and v3-NAME (this
 * program since: the name gets the prefix). Build like the target:
 *   cc -I. -I<builddir> fuzz/gen_corpus_codec.c proto/codec.c \
 *     proto/event.c proto/error.c -lzstd && ./a.out fuzz/corpus/codec
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/event.h"
#include "tests/xorshift.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	return tests_xorshift64(&rng);
}

static void trace(struct proto_event *ev, size_t n)
{
	uint64_t t = 1000000;
	size_t i;

	memset(ev, 0, n * sizeof(*ev));
	for (i = 0; i < n; i++) {
		t += 100 + rnd() % 500;
		ev[i].t_start = t;
		t += rnd() % 3000;
		ev[i].t_end = t;
		ev[i].type = (uint16_t)(i % 3 ? PROTO_EV_MPI_ISEND : PROTO_EV_WRITE);
		ev[i].arg[0] = (int64_t)(i % 4);
		ev[i].arg[1] = 4096;
		ev[i].arg[3] = (int64_t)(rnd() % 3);
	}
}

static int put(const char *dir, const char *name, int level,
	       const struct proto_event *ev, size_t n)
{
	struct proto_codec *c = proto_codec_new(level);
	unsigned char buf[4096];
	char path[512];
	size_t w;
	FILE *f;
	int rc = -1;

	if (!c || proto_codec_encode(c, ev, n, buf, sizeof(buf), &w))
		goto out;
	snprintf(path, sizeof(path), "%s/v3-%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		goto out;
	if (fwrite(buf, 1, w, f) == w)
		rc = 0;
	if (fclose(f))
		rc = -1;
out:
	proto_codec_free(c);
	return rc;
}

int main(int argc, char **argv)
{
	struct proto_event ev[40];
	unsigned char *p = (unsigned char *)ev;
	size_t i;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	trace(ev, 40);
	rc |= put(argv[1], "empty", 0, ev, 0);
	rc |= put(argv[1], "stored-1", 0, ev, 1);
	rc |= put(argv[1], "stored-9", 0, ev, 9);
	rc |= put(argv[1], "zstd1-40", 1, ev, 40);
	rc |= put(argv[1], "zstd3-17", 3, ev, 17);
	rc |= put(argv[1], "zstd19-8", 19, ev, 8);
	for (i = 0; i < sizeof(ev); i++)
		p[i] = (unsigned char)rnd();
	rc |= put(argv[1], "garbage-fallback-5", 1, ev, 5);
	if (rc)
		fprintf(stderr, "%s: could not write the corpus\n", argv[0]);
	return rc ? 1 : 0;
}
