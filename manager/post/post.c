/*
 * manager/post/post.c - the clock tree of a job: samples per edge, fits, paths.
 *
 * Edges are keyed by their child id (a stream id for sensors, a node id for
 * collectors); the parent id of the edge's samples names the next edge up.
 * The root is the id that is a parent but never a child.
 *
 * Same clock: a sensor's META and a collector's STATS say which clock they
 * stamp with (host, time namespace, injected drift); when an edge's two ends
 * read the same CLOCK_MONOTONIC, its offset is 0 and its drift 1 exactly,
 * and the identity is used instead of the estimate (whose asymmetric
 * loopback delays leave tens of ns of bias: what a message's transit, a
 * few hundred ns between two ranks of a host, cannot afford).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manager/post/grow.h"
#include "manager/post/post.h"
#include "proto/error.h"
#include "proto/msg.h"

struct edge {
	uint64_t child, parent;
	struct proto_clock_sample *s;
	uint32_t *phase;
	size_t n, cap;
	int fitted, fit_rc;
	struct mgr_clock_fit fit;	/* child against parent */
	struct mgr_clock_fit path;	/* child against the root */
	int depth;			/* edges to the root, -1: cycle/too deep */
	int same;			/* both ends read the same clock */
};

struct clockid {
	uint64_t id;			/* stream or node id */
	uint64_t key;			/* hash of host, time namespace, drift */
};

struct mgr_post {
	struct edge *e;
	size_t n, cap;
	struct proto_msg *msg;
	int error;
	struct mgr_clock_fit identity;
	struct clockid *ck;
	size_t nck, capck;
};

/* FNV-1a over the clock's description: the boot, the time namespace's
 * offsets (its inode where the offsets were not recorded: two namespaces
 * with the same offsets read one clock, see proto/clockid.h) and the
 * injected drift; 0 when it is incomplete (a trace from before the time
 * namespace was recorded: never "the same"). */
static uint64_t clock_key(const struct proto_meta *m)
{
	const char *off = proto_meta_get(m, "timens_offsets");
	const char *v[] = {proto_meta_get(m, "boot_id"),
			   off && *off ? off : proto_meta_get(m, "timens"),
			   proto_meta_get(m, "clock_drift_ppm")};
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t w = 0; w < 3; w++) {
		const char *c = v[w];

		if (!c || !*c)
			return 0;
		/* "0" and "0.000" are the same drift */
		if (w == 2 && strtod(c, NULL) == 0)
			c = "0";
		for (; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
		h = (h ^ 0xff) * 0x100000001b3ull;
	}
	return h ? h : 1;
}

static uint64_t clock_of(const struct mgr_post *p, uint64_t id)
{
	for (size_t i = 0; i < p->nck; i++)
		if (p->ck[i].id == id)
			return p->ck[i].key;
	return 0;
}

static void on_meta(struct mgr_post *p, const struct proto_meta *m)
{
	uint64_t key = clock_key(m);
	size_t i;

	if (!key)
		return;
	for (i = 0; i < p->nck && p->ck[i].id != m->id; i++)
		;
	if (i == p->nck) {
		if (p->nck >= MGR_POST_MAX_EDGES + 1)
			return;
		if ((p->error = mgr_grow((void **)&p->ck, &p->capck, p->nck + 1,
					 sizeof(*p->ck))))
			return;
		p->nck++;
	}
	p->ck[i].id = m->id;
	p->ck[i].key = key;
}

static struct edge *edge_find(const struct mgr_post *p, uint64_t child)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->e[i].child == child)
			return &p->e[i];
	return NULL;
}

static void on_frame(void *arg, const struct proto_frame *f)
{
	struct mgr_post *p = arg;
	struct edge *e;

	if ((f->type != PROTO_MSG_CLOCK && f->type != PROTO_MSG_META &&
	     f->type != PROTO_MSG_STATS) || proto_msg_decode(f, p->msg) != 0)
		return;
	if (f->type != PROTO_MSG_CLOCK) {
		on_meta(p, &p->msg->u.meta);
		return;
	}
	const struct proto_clock *c = &p->msg->u.clock;
	if (!(e = edge_find(p, c->child))) {
		if (p->n >= MGR_POST_MAX_EDGES)
			return;
		if ((p->error = mgr_grow((void **)&p->e, &p->cap, p->n + 1,
					 sizeof(*p->e))))
			return;
		e = &p->e[p->n++];
		memset(e, 0, sizeof(*e));
		e->child = c->child;
		e->parent = c->parent;
	}
	/* a child that reconnected elsewhere keeps its first parent */
	if (c->parent != e->parent)
		return;
	for (uint32_t i = 0; i < c->n && e->n < MGR_POST_MAX_SAMPLES; i++) {
		if (e->n == e->cap) {
			size_t ncap = e->cap ? e->cap * 2 : 64;
			struct proto_clock_sample *ns = realloc(e->s, ncap * sizeof(*ns));
			uint32_t *np;

			if (!ns) {
				p->error = PROTO_E_NOMEM;
				return;
			}
			e->s = ns;
			if (!(np = realloc(e->phase, ncap * sizeof(*np)))) {
				p->error = PROTO_E_NOMEM;
				return;
			}
			e->phase = np;
			e->cap = ncap;
		}
		e->s[e->n] = c->sample[i];
		e->phase[e->n] = c->phase;
		e->n++;
	}
}

/* Compose e's path to the root, recursively through its parent's edge. */
static void resolve(struct mgr_post *p, struct edge *e, int guard)
{
	if (e->depth)
		return;
	if (!e->fitted) {
		e->fit_rc = mgr_clock_fit(e->s, e->phase, e->n, MGR_CLOCK_NODE_PINGS,
					  &e->fit);
		e->fitted = 1;
		uint64_t kc = clock_of(p, e->child);
		e->same = kc && kc == clock_of(p, e->parent);
	}
	/* the fit this edge contributes: the identity between equal clocks */
	const struct mgr_clock_fit *use = e->same ? &p->identity : &e->fit;
	struct edge *up = edge_find(p, e->parent);
	if (!up) {			/* the parent is the root */
		e->path = *use;
		e->depth = 1;
		return;
	}
	if (guard >= MGR_POST_MAX_DEPTH) {
		e->depth = -1;
		e->path = *use;
		return;
	}
	resolve(p, up, guard + 1);
	mgr_clock_compose(use, &up->path, &e->path);
	e->depth = up->depth > 0 ? up->depth + 1 : -1;
}

struct mgr_post *mgr_post_build(const char *dir, int *rc)
{
	struct mgr_post *p = calloc(1, sizeof(*p));
	struct proto_frame f;
	int r;

	if (!p || !(p->msg = malloc(sizeof(*p->msg)))) {
		free(p);
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	mgr_clock_identity(&p->identity);
	/* only frames are needed: read the job directory directly */
	struct proto_jobdir_r *jr = proto_jobdir_open(dir, rc);
	if (!jr) {
		mgr_post_free(p);
		return NULL;
	}
	while ((r = proto_jobdir_next(jr, &f)) == 1)
		on_frame(p, &f);
	proto_jobdir_close_r(jr);
	if (r < 0 || p->error) {
		*rc = r < 0 ? r : p->error;
		mgr_post_free(p);
		return NULL;
	}
	for (size_t i = 0; i < p->n; i++)
		resolve(p, &p->e[i], 0);
	return p;
}

const struct mgr_clock_fit *mgr_post_stream_fit(const struct mgr_post *p,
						uint64_t stream, int *depth)
{
	struct edge *e = p ? edge_find(p, stream) : NULL;

	if (depth)
		*depth = e ? e->depth : 0;
	if (!e || (e->fit_rc != 0 && !e->same))
		return p ? &p->identity : NULL;
	return &e->path;
}

uint64_t mgr_post_global(const struct mgr_post *p, uint64_t stream, uint64_t t)
{
	const struct mgr_clock_fit *f = mgr_post_stream_fit(p, stream, NULL);
	uint64_t g = f ? mgr_clock_to_ref(f, t) : t;

	/* damaged stamps or fits: kept within MGR_T_MAX, so that what the
	 * post-processing adds and subtracts stays in an int64_t */
	if ((int64_t)g < 0)
		return 0;
	return g > MGR_T_MAX ? MGR_T_MAX : g;
}

static const char *warn_text(unsigned w)
{
	if (w & MGR_CLOCK_WARN_FEW)
		return "too few samples";
	if (w & MGR_CLOCK_WARN_LOADED)
		return "error over 5%: loaded network or clock slewing";
	if (w & MGR_CLOCK_WARN_ADJUSTED)
		return "error over 1%: something adjusts the clock";
	if (w & MGR_CLOCK_WARN_ONE_PHASE)
		return "no end-of-run samples: extrapolated";
	if (w & MGR_CLOCK_WARN_NO_DRIFT)
		return "ok (drift not significant: offset only)";
	return "ok";
}

void mgr_post_report(const struct mgr_post *p, FILE *out, int xml)
{
	if (!p)
		return;
	if (!xml)
		fprintf(out, "\nclock (each edge: child against parent; root = reference)\n"
			"  %-16s %-16s %8s %14s %10s %12s %9s %9s  %s\n", "child", "parent",
			"samples", "offset ns", "+-95% ns", "drift ppm", "+-ppm", "rtt us",
			"quality");
	for (size_t i = 0; i < p->n; i++) {
		const struct edge *e = &p->e[i];
		const struct mgr_clock_fit *f = &e->fit;

		if (xml)
			fprintf(out, "  <clock child=\"%016" PRIx64 "\" parent=\"%016" PRIx64
				"\" samples=\"%zu\" used=\"%zu\" offset_ns=\"%.1f\" offset_ci_ns=\"%.1f\""
				" offset_err=\"%.6f\" drift_ppm=\"%.4f\" drift_ci_ppm=\"%.4f\""
				" rtt_min_ns=\"%.0f\" x0=\"%" PRIu64 "\" path_x0=\"%" PRIu64 "\""
				" path_offset_ns=\"%.1f\" path_offset_ci_ns=\"%.1f\""
				" path_drift_ppm=\"%.4f\" depth=\"%d\" quality=\"%s\"/>\n",
				e->child, e->parent, f->n_total,
				f->n_used, f->offset_ns, f->offset_ci_ns, f->offset_err,
				(f->slope - 1) * 1e6, f->slope_ci * 1e6, f->rtt_min_ns,
				f->x0, e->path.x0, e->path.offset_ns, e->path.offset_ci_ns,
				(e->path.slope - 1) * 1e6, e->depth,
				e->same ? "same clock" : warn_text(f->warn));
		else if (e->same)	/* the fit is not used: not shown */
			fprintf(out, "  %016" PRIx64 " %016" PRIx64 " %8zu %14s %10s %12s"
				" %9s %9.1f  %s\n", e->child, e->parent, f->n_total,
				"-", "-", "-", "-", f->rtt_min_ns / 1e3,
				"same clock (boot, time namespace offsets, drift):"
				" identity used");
		else
			fprintf(out, "  %016" PRIx64 " %016" PRIx64 " %8zu %14.1f %10.1f %12.4f"
				" %9.4f %9.1f  %s\n", e->child, e->parent, f->n_total,
				f->offset_ns, f->offset_ci_ns, (f->slope - 1) * 1e6,
				f->slope_ci * 1e6, f->rtt_min_ns / 1e3, warn_text(f->warn));
	}
	if (!xml && p->n == 0)
		fprintf(out, "  no clock samples in this job: times are the raw host clocks\n");
}

void mgr_post_quality(const struct mgr_post *p, char *buf, size_t cap)
{
	size_t fitted = 0, same = 0, warned = 0;
	double worst = 0;
	const char *first = NULL;

	for (size_t i = 0; p && i < p->n; i++) {
		const struct edge *e = &p->e[i];

		if (e->same) {
			same++;
			continue;
		}
		fitted++;
		if (e->path.offset_ci_ns > worst)
			worst = e->path.offset_ci_ns;
		if (e->fit.warn & ~(unsigned)MGR_CLOCK_WARN_NO_DRIFT) {
			if (!warned++)
				first = warn_text(e->fit.warn);
		}
	}
	if (!p || p->n == 0)
		snprintf(buf, cap, "no clock samples: times are the raw host clocks");
	else if (fitted == 0)
		snprintf(buf, cap, same == 1 ? "one clock for the %zu link: no "
			 "correction needed" : "one clock for all %zu links: no "
			 "correction needed", same);
	else if (warned)
		snprintf(buf, cap, "%zu links fitted, within %.0f ns (95%%); %zu "
			 "with a warning (%s)", fitted, worst, warned, first);
	else
		snprintf(buf, cap, "%zu links fitted, within %.0f ns (95%%)%s",
			 fitted, worst, same ? ", the others share a clock" : "");
}

void mgr_post_free(struct mgr_post *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->e[i].s);
		free(p->e[i].phase);
	}
	free(p->e);
	free(p->ck);
	free(p->msg);
	free(p);
}
