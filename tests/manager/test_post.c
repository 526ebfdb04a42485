/*
 * tests/manager/test_post.c - the job's clock tree: CLOCK frames of a
 * sensor -> node collector -> root path with a known offset and drift on the
 * node's host; events come out on the root's clock.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/events.h"
#include "manager/post/post.h"
#include "proto/codec.h"
#include "proto/error.h"
#include "proto/jobdir.h"
#include "proto/msg.h"

#define X0 2000000000000ull
static const double A = 5e9, B = 1 + 50e-6;	/* the node host against the root */
static char base[64], dir[96];

static uint64_t host_at(uint64_t x)	/* node host clock when the root reads x */
{
	return X0 + (uint64_t)llround(A + B * (double)(int64_t)(x - X0));
}

static void put(struct proto_jobdir_w *w, struct proto_msg *m)
{
	uint8_t *buf;
	size_t len;

	cr_assert_eq(proto_msg_frame_alloc(m, &buf, &len), 0);
	cr_assert_eq(proto_jobdir_append(w, buf, len), 0);
	free(buf);
}

/* A CLOCK message of 20 samples for the edge child -> parent. */
static void clock_head(struct proto_msg *m, uint64_t child, uint64_t parent,
		       uint32_t phase)
{
	memset(m, 0, sizeof(*m));
	m->type = PROTO_MSG_CLOCK;
	m->u.clock.child = child;
	m->u.clock.parent = parent;
	m->u.clock.phase = phase;
	m->u.clock.n = 20;
}

/* samples measured by the child end (it pings): s, r on the child clock */
static void clock_frame(struct proto_jobdir_w *w, struct proto_msg *m,
			uint64_t child, uint64_t parent, uint32_t phase,
			uint64_t x, int child_on_host, int parent_on_host)
{
	clock_head(m, child, parent, phase);
	for (int i = 0; i < 20; i++, x += 1000000) {
		uint64_t xs = x, xrj = x + 25000 + (uint64_t)(i % 3) * 1000,
			 xsj = xrj + 4000, xr = xsj + 25000 + (uint64_t)(i % 2) * 1000;
		struct proto_clock_sample *s = &m->u.clock.sample[i];

		s->s = child_on_host ? host_at(xs) : xs;
		s->r = child_on_host ? host_at(xr) : xr;
		s->rj = parent_on_host ? host_at(xrj) : xrj;
		s->sj = parent_on_host ? host_at(xsj) : xsj;
	}
	put(w, m);
}

static void setup(void)
{
	snprintf(base, sizeof(base), "/tmp/tapestry-test-post.XXXXXX");
	cr_assert_not_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/job", base);
}

static void teardown(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(post, .init = setup, .fini = teardown);

/* The text report of p (free it). */
static char *report_text(const struct mgr_post *p)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *mem = open_memstream(&buf, &blen);

	cr_assert_not_null(mem);
	mgr_post_report(p, mem, 0);
	fclose(mem);
	return buf;
}

Test(post, offset_and_drift_composed_along_the_tree)
{
	int rc;
	struct proto_jobdir_w *w = proto_jobdir_create(dir, 0, 0, &rc);
	struct proto_msg *m = calloc(1, sizeof(*m));
	struct proto_codec *c = proto_codec_new(1);
	uint64_t stream = 0x5157, node = 0x40de, root = 0x2007;

	cr_assert_not_null(w);
	/* start-of-run and end-of-run phases on both edges; the sensor and its
	 * node collector share the host clock, the root is the reference */
	clock_frame(w, m, stream, node, 0, X0, 1, 1);
	clock_frame(w, m, node, root, 0, X0, 1, 0);
	/* one event, 100 s into the run, on the sensor's (host) clock */
	struct proto_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = PROTO_EV_WRITE;
	ev.t_start = host_at(X0 + 100000000000ull);
	ev.t_end = host_at(X0 + 100000001000ull);
	uint8_t data[256];
	size_t len;
	cr_assert_eq(proto_codec_encode(c, &ev, 1, data, sizeof(data), &len), 0);
	memset(m, 0, sizeof(*m));
	m->type = PROTO_MSG_BATCH;
	m->u.batch.stream = stream;
	m->u.batch.seq = 1;
	m->u.batch.nrecords = 1;
	m->u.batch.data = data;
	m->u.batch.datalen = (uint32_t)len;
	put(w, m);
	clock_frame(w, m, stream, node, 2, X0 + 600000000000ull, 1, 1);
	clock_frame(w, m, node, root, 2, X0 + 600000000000ull, 1, 0);
	cr_assert_eq(proto_jobdir_close(w), 0);

	struct mgr_post *p = mgr_post_build(dir, &rc);
	cr_assert_not_null(p, "%s", proto_strerror(rc));
	int depth;
	const struct mgr_clock_fit *f = mgr_post_stream_fit(p, stream, &depth);
	cr_assert_eq(depth, 2);
	uint64_t g = mgr_post_global(p, stream, ev.t_start);
	int64_t err = (int64_t)(g - (X0 + 100000000000ull));
	cr_log_info("composed offset %.1f ns drift %.4f ppm, error at 100 s %lld ns",
		    f->offset_ns, (f->slope - 1) * 1e6, (long long)err);
	cr_assert_lt(llabs(err), 5000, "global time off by %lld ns", (long long)err);
	cr_assert_lt(fabs((f->slope - B) * 1e6), 1.0);
	/* an unknown stream keeps its clock */
	cr_assert_eq(mgr_post_global(p, 999, 12345), 12345);
	mgr_post_stream_fit(p, 999, &depth);
	cr_assert_eq(depth, 0);
	char *buf = report_text(p);
	cr_assert_not_null(strstr(buf, "0000000000005157"));
	free(buf);
	mgr_post_free(p);

	/* exporters see the event on the global clock, from the job start */
	struct mgr_events *e = mgr_events_open(dir, &rc);
	cr_assert_not_null(e);
	struct mgr_event me;
	cr_assert_eq(mgr_events_next(e, &me), 1);
	cr_assert_eq(me.start, 0);
	cr_assert(llabs(me.end - 1000) < 10, "duration %lld", (long long)me.end);
	cr_assert(llabs((int64_t)mgr_events_origin(e) - (int64_t)(X0 + 100000000000ull)) < 5000);
	cr_assert_eq(mgr_events_next(e, &me), 0);
	mgr_events_close(e);
	proto_codec_free(c);
	free(m);
}

Test(post, no_samples_means_raw_clocks_and_bad_dirs_fail)
{
	int rc;
	struct proto_jobdir_w *w = proto_jobdir_create(dir, 0, 0, &rc);

	cr_assert_eq(proto_jobdir_close(w), 0);
	struct mgr_post *p = mgr_post_build(dir, &rc);
	cr_assert_not_null(p);
	cr_assert_eq(mgr_post_global(p, 1, 777), 777);
	mgr_post_free(p);
	cr_assert_null(mgr_post_build("/nonexistent/job", &rc));
	cr_assert_lt(rc, 0);
	mgr_post_free(NULL);
}

/* META or STATS saying which clock id reads: boot, time namespace (inode
 * and offsets; offsets NULL: not recorded), no injected drift */
static void meta_frame(struct proto_jobdir_w *w, struct proto_msg *m,
		       uint8_t type, uint64_t id, const char *boot,
		       const char *timens, const char *offsets)
{
	const char *kv[][2] = {{"host", "h"}, {"boot_id", boot},
			       {"timens", timens}, {"clock_drift_ppm", "0"},
			       {"timens_offsets", offsets}};

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->u.meta.id = id;
	m->u.meta.n = offsets ? 5 : 4;
	for (size_t i = 0; i < m->u.meta.n; i++) {
		snprintf(m->u.meta.kv[i].key, sizeof(m->u.meta.kv[i].key), "%s", kv[i][0]);
		snprintf(m->u.meta.kv[i].value, sizeof(m->u.meta.kv[i].value), "%s", kv[i][1]);
	}
	put(w, m);
}

/* Round trips whose way out takes 3 us more than the way back: a midpoint
 * estimate of the offset between two readers of one clock is 1.5 us off. */
static void skewed_frame(struct proto_jobdir_w *w, struct proto_msg *m,
			 uint64_t child, uint64_t parent, uint32_t phase, uint64_t x)
{
	clock_head(m, child, parent, phase);
	for (int i = 0; i < 20; i++, x += 1000000) {
		struct proto_clock_sample *s = &m->u.clock.sample[i];

		s->s = x;
		s->rj = x + 4000;
		s->sj = s->rj + 1000;
		s->r = s->sj + 1000;
	}
	put(w, m);
}

/* A sensor and its collector that stamp with the same CLOCK_MONOTONIC (same
 * boot, same time namespace or another one with the same offsets, no
 * injected drift): the identity, whatever the biased samples say. Another
 * time namespace without offsets recorded, other offsets, or another boot
 * of a machine with the same host name: the estimate. */
Test(post, same_clock_is_the_identity)
{
	int rc;
	struct proto_jobdir_w *w = proto_jobdir_create(dir, 0, 0, &rc);
	struct proto_msg *m = calloc(1, sizeof(*m));
	const char *boot = "8f1c-boot", *ns = "time:[4026531834]",
		   *zero = "monotonic 0 0 boottime 0 0";
	uint64_t same = 0x5a3e, node = 0x40de, root = 0x2007, twin = 0x7a1e,
		 other = 0x07e4, moved = 0x3e0d, reboot = 0xb007;
	uint64_t ids[] = {same, twin, other, moved, reboot, node};

	cr_assert_not_null(w);
	meta_frame(w, m, PROTO_MSG_META, same, boot, ns, zero);
	meta_frame(w, m, PROTO_MSG_META, twin, boot, "time:[4026532111]", zero);
	meta_frame(w, m, PROTO_MSG_META, other, boot, "time:[4026532999]", NULL);
	meta_frame(w, m, PROTO_MSG_META, moved, boot, "time:[4026532998]",
		   "monotonic 5 0 boottime 0 0");
	meta_frame(w, m, PROTO_MSG_META, reboot, "another-boot", ns, zero);
	meta_frame(w, m, PROTO_MSG_STATS, node, boot, ns, zero);
	meta_frame(w, m, PROTO_MSG_STATS, root, boot, ns, zero);
	for (uint32_t ph = 0; ph <= 2; ph += 2) {
		uint64_t x = X0 + ph * 100000000000ull;

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			skewed_frame(w, m, ids[i], ids[i] == node ? root : node,
				     ph, x);
	}
	cr_assert_eq(proto_jobdir_close(w), 0);
	struct mgr_post *p = mgr_post_build(dir, &rc);
	cr_assert_not_null(p, "%s", proto_strerror(rc));
	uint64_t t = X0 + 50000000000ull;
	cr_assert_eq(mgr_post_global(p, same, t), t);
	cr_assert_eq(mgr_post_global(p, twin, t), t, "same offsets: same clock");
	cr_assert_eq(mgr_post_global(p, node, t), t);
	for (size_t i = 2; i < 5; i++) {
		int64_t d = (int64_t)(mgr_post_global(p, ids[i], t) - t);

		cr_assert(llabs(d) > 1000, "stream %zu: estimated (%lld ns)", i,
			  (long long)d);
	}
	char *buf = report_text(p);
	cr_assert_not_null(strstr(buf, "same clock"));
	free(buf);
	mgr_post_free(p);
	free(m);
}
