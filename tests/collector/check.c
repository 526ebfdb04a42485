/*
 * tests/collector/check.c - reads a job directory back and checks that
 * every (stream, seq) of the synthetic load arrived exactly once.
 *
 * Expected: --streams N streams of --events E events in batches of
 * --batch B, so seqs 1..ceil(E/B) per stream. Every BATCH is decoded with
 * proto_msg_decode and proto_codec_decode; its record count must match the
 * header, and with --unique every record must name its stream and seq.
 * --require-bye: every stream has its BYE stored. Prints a summary; exit 0
 * when everything holds.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

struct sstat {
	uint64_t id;
	uint8_t *seen;		/* per seq: times stored */
	uint64_t events;
	int bye;
};

static struct sstat *table;
static size_t table_cap, nseen;

static struct sstat *lookup(uint64_t id, uint64_t batches)
{
	size_t i = (size_t)(id * 0x9e3779b97f4a7c15ull) & (table_cap - 1);

	while (table[i].id && table[i].id != id)
		i = (i + 1) & (table_cap - 1);
	if (!table[i].id) {
		if (nseen * 2 >= table_cap)
			return NULL;
		table[i].id = id;
		table[i].seen = calloc(batches + 2, 1);
		nseen++;
	}
	return &table[i];
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dir", required_argument, NULL, 'd'},
		{"streams", required_argument, NULL, 'n'},
		{"events", required_argument, NULL, 'e'},
		{"batch", required_argument, NULL, 'b'},
		{"unique", no_argument, NULL, 'u'},
		{"require-bye", no_argument, NULL, 'y'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL;
	uint64_t nstreams = 0, events = 0, batch = 8192, batches;
	int unique = 0, need_bye = 0, opt, rc, bad = 0;
	uint64_t frames = 0, nbatch = 0, dups = 0, missing = 0, ev_total = 0;
	uint64_t bytes_batch = 0, other = 0, bad_records = 0, foreign = 0;
	uint64_t nbye = 0;
	struct proto_jobdir_r *r;
	struct proto_frame f;
	struct proto_msg *m = malloc(sizeof(*m));
	struct proto_codec *codec = proto_codec_new(0);
	struct proto_event *ev;
	const struct proto_jobdir_report *rep;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'n': nstreams = strtoull(optarg, NULL, 0); break;
		case 'e': events = strtoull(optarg, NULL, 0); break;
		case 'b': batch = strtoull(optarg, NULL, 0); break;
		case 'u': unique = 1; break;
		case 'y': need_bye = 1; break;
		default: return 2;
		}
	}
	if (!dir || !nstreams || !events || !batch || !m || !codec) {
		fprintf(stderr, "usage: check --dir D --streams N --events E "
			"[--batch B] [--unique] [--require-bye]\n");
		return 2;
	}
	batches = (events + batch - 1) / batch;
	for (table_cap = 16; table_cap < nstreams * 4; table_cap *= 2)
		;
	table = calloc(table_cap, sizeof(*table));
	ev = malloc(PROTO_CODEC_MAX_RECORDS * sizeof(*ev));
	if (!table || !ev)
		return 1;
	r = proto_jobdir_open(dir, &rc);
	if (!r) {
		fprintf(stderr, "check: %s: %s\n", dir, proto_strerror(rc));
		return 1;
	}
	while ((rc = proto_jobdir_next(r, &f)) == 1) {
		struct sstat *s;
		size_t n;

		frames++;
		rc = proto_msg_decode(&f, m);
		if (rc) {
			fprintf(stderr, "check: frame %" PRIu64 ": %s\n",
				frames, proto_strerror(rc));
			bad = 1;
			continue;
		}
		if (m->type == PROTO_MSG_BYE) {
			s = lookup(m->u.bye.stream, batches);
			if (s && !s->bye++)
				nbye++;
			continue;
		}
		if (m->type != PROTO_MSG_BATCH) {
			other++;
			continue;
		}
		nbatch++;
		bytes_batch += PROTO_FRAME_HDR + f.length;
		s = lookup(m->u.batch.stream, batches);
		if (!s) {
			foreign++;
			continue;
		}
		if (m->u.batch.seq == 0 || m->u.batch.seq > batches) {
			foreign++;
			continue;
		}
		if (s->seen[m->u.batch.seq]++) {
			dups++;
			continue;
		}
		rc = proto_codec_decode(codec, m->u.batch.data,
					m->u.batch.datalen, ev,
					PROTO_CODEC_MAX_RECORDS, &n);
		if (rc || n != m->u.batch.nrecords) {
			bad_records++;
			continue;
		}
		s->events += n;
		ev_total += n;
		if (unique) {
			for (size_t i = 0; i < n; i++) {
				if ((uint64_t)ev[i].arg[0] != s->id ||
				    (uint64_t)ev[i].arg[1] != m->u.batch.seq ||
				    (uint64_t)ev[i].arg[2] != i) {
					bad_records++;
					break;
				}
			}
		}
	}
	if (rc < 0) {
		fprintf(stderr, "check: read: %s\n", proto_strerror(rc));
		bad = 1;
	}
	for (size_t i = 0; i < table_cap; i++) {
		if (!table[i].id)
			continue;
		for (uint64_t q = 1; q <= batches; q++)
			if (!table[i].seen[q])
				missing++;
		free(table[i].seen);
	}
	rep = proto_jobdir_report(r);
	printf("check: frames=%" PRIu64 " batches=%" PRIu64 " streams=%zu/%"
	       PRIu64 " events=%" PRIu64 "/%" PRIu64 " duplicates=%" PRIu64
	       " missing=%" PRIu64 " bad=%" PRIu64 " foreign=%" PRIu64
	       " byes=%" PRIu64 " other=%" PRIu64 " skipped_bytes=%" PRIu64
	       " bytes_per_event=%.2f\n", frames, nbatch, nseen, nstreams,
	       ev_total, nstreams * events, dups, missing, bad_records, foreign,
	       nbye, other, rep->skipped_bytes,
	       ev_total ? (double)bytes_batch / (double)ev_total : 0.0);
	if (nseen != nstreams || ev_total != nstreams * events || dups ||
	    missing || bad_records || foreign || (need_bye && nbye != nstreams))
		bad = 1;
	proto_jobdir_close_r(r);
	proto_codec_free(codec);
	free(table);
	free(ev);
	free(m);
	return bad;
}
