/*
 * manager/serve/tree.c - the live collector tree: a thread that asks every
 * known collector tree for its STATS once a second (the status client of
 * manager/status.c, as `tapestry status` does) and keeps each collector's
 * last report with the server's time at which the collector's own clock
 * (its time_ns key) last moved. A collector whose report has not moved for
 * SRV_STALE_S seconds, or whose tree does not answer, is stale.
 *
 * A collector's STATS carry only the offset of its last clock round's best
 * sample against its parent: the tree fits every round seen (the last
 * SRV_FIT_SAMPLES) the way the report fits a job's CLOCK frames
 * (manager/post/clock.h), for the offset, drift and quality shown.
 *
 * Lock order: t->mu only; the queries run without it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "manager/post/clock.h"
#include "manager/serve/serve.h"
#include "manager/launch/spawn.h"
#include "proto/msg.h"

#define SRV_TREE_NODES 1024
#define SRV_STALE_S 3.0
#define SRV_KV_JSON 12288
#define SRV_FIT_SAMPLES 64	/* clock rounds a node's live fit is made of */

struct tnode {
	int root;
	uint64_t id;
	char time_ns[32];
	double moved;		/* server time (s) at which time_ns last changed */
	char kv[SRV_KV_JSON];	/* the STATS keys as a JSON object */
	char last_clock[64];	/* clock_offset_ns/clock_rtt_ns last seen */
	struct proto_clock_sample fs[SRV_FIT_SAMPLES];	/* a ring, one per round */
	unsigned nfs;		/* rounds seen (the ring holds the last ones) */
	char fit[320];		/* the live fit as a JSON object, "" until one */
};

struct troot {
	char addr[300], label[64], error[512];
	double ok;		/* last answer, server time (s); 0: never */
	char jobdir[4400];	/* a launch's job: its own secret read from there */
	char secret[4096];	/* that secret, once read */
	size_t secretlen;
	int own_secret;		/* 1: asked with secret (else the tree's) */
	int ended;		/* the launch ended: no longer asked */
};

struct srv_tree {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, started;
	char secret[4096];
	size_t secretlen;
	struct troot roots[SRV_ROOTS_MAX];
	int nroots;
	struct tnode *nodes;
	int nnodes;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* JSON object of m's keys into out (cap bytes); keys over the cap dropped. */
static void kv_json(const struct proto_meta *m, char *out, size_t cap)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;

	evbuffer_add(b, "{", 1);
	for (uint32_t i = 0; i < m->n; i++) {
		if (i)
			evbuffer_add(b, ",", 1);
		srv_json_str(b, m->kv[i].key);
		evbuffer_add(b, ":", 1);
		srv_json_str(b, m->kv[i].value);
		if (evbuffer_get_length(b) > cap - 2)
			break;
	}
	evbuffer_add(b, "}", 1);
	n = evbuffer_get_length(b);
	if (n >= cap) {
		snprintf(out, cap, "{}");
	} else {
		evbuffer_remove(b, out, n);
		out[n] = '\0';
	}
	evbuffer_free(b);
}

/* The rounds' samples as fitted (a sample of MGR_CLOCK_NODE_PINGS: the
 * child stamps s and r, the parent rj and sj), remade from what STATS say:
 * the child's time y (time_ns), the offset o = parent - child and the round
 * trip: s, r = y -+ rtt / 2, rj = sj = y + o give back o and rtt. */
static void live_fit(struct tnode *nd, const char *y, const char *o, const char *rtt)
{
	char key[sizeof(nd->last_clock)];
	struct proto_clock_sample *x;
	struct mgr_clock_fit f;
	uint64_t t = strtoull(y, NULL, 10), r = strtoull(rtt, NULL, 10);
	int64_t off = strtoll(o, NULL, 10);

	snprintf(key, sizeof(key), "%s/%s", o, rtt);
	if (!strcmp(key, nd->last_clock) || !t || t < r)
		return;		/* no new round since the last STATS */
	snprintf(nd->last_clock, sizeof(nd->last_clock), "%s", key);
	x = &nd->fs[nd->nfs++ % SRV_FIT_SAMPLES];
	x->s = t - r / 2;
	x->r = t + r / 2;
	x->rj = x->sj = (uint64_t)((int64_t)t + off);
	unsigned n = nd->nfs < SRV_FIT_SAMPLES ? nd->nfs : SRV_FIT_SAMPLES;

	if (mgr_clock_fit(nd->fs, NULL, n, MGR_CLOCK_NODE_PINGS, &f)) {
		snprintf(nd->fit, sizeof(nd->fit), "{\"rounds\":%u}", n);
		return;
	}
	/* offset node - parent at the newest round, as the report gives it at x0 */
	double now = f.offset_ns + (f.slope - 1) * (double)(x->rj - f.x0);
	unsigned w = f.warn & ~MGR_CLOCK_WARN_ONE_PHASE;	/* live: one phase so far */

	snprintf(nd->fit, sizeof(nd->fit), "{\"rounds\":%u,\"used\":%zu,\"offset_ns\":%.1f,"
		 "\"offset_ci_ns\":%.1f,\"drift_ppm\":%.4f,\"drift_ci_ppm\":%.4f,"
		 "\"rtt_min_ns\":%.0f,\"quality\":\"%s\"}", n, f.n_used, now, f.offset_ci_ns,
		 (f.slope - 1) * 1e6, f.slope_ci * 1e6, f.rtt_min_ns,
		 w & MGR_CLOCK_WARN_FEW ? "few samples" :
		 w & MGR_CLOCK_WARN_LOADED ? "loaded network or NTP slewing" :
		 w & MGR_CLOCK_WARN_ADJUSTED ? "something adjusts the clock" :
		 w & MGR_CLOCK_WARN_NO_DRIFT ? "ok (drift not significant: 0)" : "ok");
}

struct batch {
	struct srv_tree *t;
	int root;
	double now;
};

static void on_stats(const struct proto_meta *m, void *arg)
{
	struct batch *bt = arg;
	struct srv_tree *t = bt->t;
	const char *tn = proto_meta_get(m, "time_ns");
	struct tnode *nd = NULL;

	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->nnodes && !nd; i++)
		if (t->nodes[i].root == bt->root && t->nodes[i].id == m->id)
			nd = &t->nodes[i];
	if (!nd && t->nnodes < SRV_TREE_NODES) {
		nd = &t->nodes[t->nnodes++];
		memset(nd, 0, sizeof(*nd));
		nd->root = bt->root;
		nd->id = m->id;
	}
	if (nd) {
		if (!tn || strcmp(tn, nd->time_ns))
			nd->moved = bt->now;
		snprintf(nd->time_ns, sizeof(nd->time_ns), "%s", tn ? tn : "");
		kv_json(m, nd->kv, sizeof(nd->kv));
		const char *o = proto_meta_get(m, "clock_offset_ns");
		const char *rtt = proto_meta_get(m, "clock_rtt_ns");

		if (tn && o && rtt)
			live_fit(nd, tn, o, rtt);
	}
	pthread_mutex_unlock(&t->mu);
}

/* The secret file path into buf as mgr_read_secret reads it (a trailing
 * newline dropped), opened by srv_open_regular: 0, or -1. */
static int read_secret(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = srv_open_regular(AT_FDCWD, path);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, cap);

	if (fd >= 0)
		close(fd);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	*len = (size_t)n;
	return 0;
}

/* The secret of a launch's job (r->jobdir): the file its
 * logs/root-status names (written by launch right after it prints its root
 * receiver), read without following a link at the status file. 0 once
 * read, -1 while not there yet. */
static int launch_secret(struct troot *r)
{
	char p[4500], line[4200], path[4200] = "";
	int fd;
	FILE *f;

	snprintf(p, sizeof(p), "%s/logs/root-status", r->jobdir);
	/* not blocking: a FIFO put there would hold this thread and its lock */
	if ((fd = srv_open_regular(AT_FDCWD, p)) < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "secret ", 7)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", line + 7);
		}
	fclose(f);
	if (!path[0] || read_secret(path, r->secret, sizeof(r->secret), &r->secretlen))
		return -1;
	r->own_secret = 1;
	return 0;
}

static void *poll_loop(void *arg)
{
	struct srv_tree *t = arg;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		for (int r = 0; r < t->nroots && !t->stop; r++) {
			char addr[300], why[512], secret[4096];
			struct batch bt = {t, r, now_s()};
			struct troot *tr = &t->roots[r];
			size_t secretlen = t->secretlen;

			if (tr->ended)
				continue;
			/* a launch's tree is asked with its job's secret only, once
			 * known: asked with another, the collectors count a refused
			 * handshake */
			if (tr->jobdir[0] && !tr->own_secret && launch_secret(tr)) {
				snprintf(tr->error, sizeof(tr->error), "waiting for the job's secret");
				continue;
			}
			memcpy(secret, tr->own_secret ? tr->secret : t->secret,
			       tr->own_secret ? tr->secretlen : t->secretlen);
			if (tr->own_secret)
				secretlen = tr->secretlen;
			snprintf(addr, sizeof(addr), "%s", tr->addr);
			pthread_mutex_unlock(&t->mu);
			int rc = mgr_status_query(addr, secret, secretlen, 900, on_stats,
						  &bt, why, sizeof(why));
			pthread_mutex_lock(&t->mu);
			if (t->roots[r].ended)
				continue;	/* ended while asked: its error stays */
			if (rc) {
				snprintf(t->roots[r].error, sizeof(t->roots[r].error), "%s", why);
			} else {
				t->roots[r].error[0] = '\0';
				t->roots[r].ok = now_s();
			}
		}
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

struct srv_tree *srv_tree_new(const char *secret_file, char *why, size_t whylen)
{
	struct srv_tree *t = calloc(1, sizeof(*t));

	if (!t || !(t->nodes = calloc(SRV_TREE_NODES, sizeof(*t->nodes)))) {
		free(t);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	if (secret_file && mgr_read_secret(secret_file, t->secret, sizeof(t->secret),
					   &t->secretlen)) {
		snprintf(why, whylen, "cannot read the collectors' secret file %s", secret_file);
		free(t->nodes);
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (pthread_create(&t->th, NULL, poll_loop, t)) {
		snprintf(why, whylen, "cannot start the tree thread");
		free(t->nodes);
		free(t);
		return NULL;
	}
	t->started = 1;
	return t;
}

int srv_tree_add(struct srv_tree *t, const char *addr, const char *label,
		 const char *jobdir)
{
	int rc = -1;

	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->nroots; i++)
		if (!strcmp(t->roots[i].addr, addr) && !t->roots[i].ended) {
			snprintf(t->roots[i].label, sizeof(t->roots[i].label), "%s", label);
			rc = 0;
		}
	/* a root of an ended launch gives its place (its port may be reused) */
	for (int i = 0; rc && i < t->nroots; i++)
		if (t->roots[i].ended && !strcmp(t->roots[i].addr, addr))
			t->roots[i].addr[0] = '\0';
	if (rc && t->nroots < SRV_ROOTS_MAX) {
		struct troot *r = &t->roots[t->nroots++];

		memset(r, 0, sizeof(*r));
		snprintf(r->addr, sizeof(r->addr), "%s", addr);
		snprintf(r->label, sizeof(r->label), "%s", label);
		snprintf(r->jobdir, sizeof(r->jobdir), "%s", jobdir ? jobdir : "");
		snprintf(r->error, sizeof(r->error), "not asked yet");
		rc = 0;
		pthread_cond_signal(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

void srv_tree_end(struct srv_tree *t, const char *addr)
{
	pthread_mutex_lock(&t->mu);
	for (int i = 0; i < t->nroots; i++)
		if (!strcmp(t->roots[i].addr, addr) && !t->roots[i].ended) {
			t->roots[i].ended = 1;
			snprintf(t->roots[i].error, sizeof(t->roots[i].error),
				 "the launch ended: no longer asked");
		}
	pthread_mutex_unlock(&t->mu);
}

void srv_tree_json(struct srv_tree *t, struct evbuffer *b)
{
	double now = now_s();

	pthread_mutex_lock(&t->mu);
	evbuffer_add_printf(b, "{\"stale_after_s\":%.0f,\"roots\":[", SRV_STALE_S);
	for (int i = 0; i < t->nroots; i++) {
		const struct troot *r = &t->roots[i];

		evbuffer_add_printf(b, "%s{\"addr\":", i ? "," : "");
		srv_json_str(b, r->addr);
		evbuffer_add_printf(b, ",\"label\":");
		srv_json_str(b, r->label);
		evbuffer_add_printf(b, ",\"ended\":%s,\"error\":", r->ended ? "true" : "false");
		srv_json_str(b, r->error[0] ? r->error : NULL);
		if (r->ok > 0)
			evbuffer_add_printf(b, ",\"answered_s_ago\":%.1f}", now - r->ok);
		else
			evbuffer_add_printf(b, ",\"answered_s_ago\":null}");
	}
	evbuffer_add_printf(b, "],\"nodes\":[");
	for (int i = 0; i < t->nnodes; i++) {
		const struct tnode *n = &t->nodes[i];
		double age = now - n->moved;

		evbuffer_add_printf(b, "%s{\"root\":%d,\"id\":\"%016" PRIx64 "\",\"age_s\":%.1f,"
				    "\"stale\":%s,\"clock_fit\":%s,\"stats\":%s}", i ? "," : "",
				    n->root, n->id, age, age > SRV_STALE_S ? "true" : "false",
				    n->fit[0] ? n->fit : "null", n->kv);
	}
	evbuffer_add_printf(b, "]}\n");
	pthread_mutex_unlock(&t->mu);
}

void srv_tree_free(struct srv_tree *t)
{
	if (!t)
		return;
	if (t->started) {
		pthread_mutex_lock(&t->mu);
		t->stop = 1;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->th, NULL);
	}
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t->nodes);
	free(t);
}
