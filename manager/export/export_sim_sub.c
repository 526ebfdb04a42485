/*
 * manager/export/export_sim_sub.c - the members of a job's communicators, for
 * the SimGrid export of collectives on communicators of fewer ranks than
 * MPI_COMM_WORLD (live.h, mgr_ti_subs; their mapping: export_sim.c).
 *
 * A communicator's members are the ranks whose constructor events made it:
 * the job-wide name of what each made (manager/post/comms.h) and its rank
 * in it (the event's myrank) give the world rank of each of its ranks. A
 * communicator is kept only when those ranks are exactly 0 .. n-1 once
 * each (traces from before myrank say 0 everywhere: their collectives stay
 * skipped); intercommunicators are not kept (their collectives are not
 * intracommunicator ones). Memory: one entry per constructor event of a
 * named communicator, at most TI_SUB_MAX.
 */
#include <stdlib.h>

#include "manager/export/live.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/grow.h"
#include "manager/post/map.h"
#include "proto/error.h"

#define TI_SUB_MAX (1u << 22)	/* members of named communicators */

struct sub_member {
	int64_t name, crank;
	int32_t world;
	const struct proto_stream *ps;	/* while reading: world unknown yet */
};

struct mgr_ti_subs {
	struct mgr_map index;		/* (name, 0) -> first member */
	struct sub_member *m;		/* by name, then rank in it */
	int32_t *world;			/* their world ranks, in that order */
	size_t n;
};

static int by_name_rank(const void *pa, const void *pb)
{
	const struct sub_member *a = pa, *b = pb;

	int c = MGR_CMP(a->name, b->name);

	return c ? c : MGR_CMP(a->crank, b->crank);
}

/* The world rank of each member, once the whole trace is read: its
 * stream's META rank (which may come after its first events), else its
 * MPI_Init's (inits: stream id -> rank). */
static void resolve(struct mgr_ti_subs *s, const struct mgr_map *inits)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct proto_stream *ps = s->m[i].ps;

		s->m[i].world = ps->rank >= 0 ? ps->rank :
			(int32_t)mgr_map_get(inits, ps->id, 0);
		s->m[i].ps = NULL;
	}
}

/* The members of every named communicator made in the trace at dir. */
static int collect(struct mgr_ti_subs *s, const char *dir, const struct mgr_comms *cm)
{
	struct proto_trace *tr;
	struct proto_trace_event te;
	struct mgr_map inits;
	size_t cap = 0;
	int rc;

	if (!(tr = proto_trace_open(dir, &rc)))
		return rc;
	mgr_map_init(&inits, SIZE_MAX);
	while ((rc = proto_trace_next(tr, &te)) == 1) {
		const struct proto_event *ev = te.ev;
		int ni = proto_ev_arg(ev->type, PROTO_F_newcomm);
		int64_t name;

		if (ev->type == PROTO_EV_MPI_INIT && mgr_ev_field(ev, PROTO_F_rank, -1) >= 0 &&
		    mgr_ev_field(ev, PROTO_F_rank, -1) < INT32_MAX &&
		    (rc = mgr_map_put(&inits, te.stream->id, 0,
				      (uint32_t)mgr_ev_field(ev, PROTO_F_rank, -1))))
			break;
		if (ni < 0 || proto_ev_arg(ev->type, PROTO_F_myrank) < 0 ||
		    (ev->flags & PROTO_EVF_FAILED))
			continue;
		name = mgr_comms_name(cm, te.stream->id, ev->arg[ni]);
		if (name <= 0 || mgr_comms_inter(cm, name))
			continue;
		if (s->n >= TI_SUB_MAX)
			break;	/* the rest stay skipped */
		if (mgr_grow((void **)&s->m, &cap, s->n + 1, sizeof(*s->m))) {
			rc = PROTO_E_NOMEM;
			break;
		}
		s->m[s->n++] = (struct sub_member){name, mgr_ev_field(ev, PROTO_F_myrank, -1),
						   -1, te.stream};
	}
	if (rc >= 0)
		resolve(s, &inits);
	mgr_map_clear(&inits);
	proto_trace_close(tr);
	return rc < 0 ? rc : 0;
}

struct mgr_ti_subs *mgr_ti_subs_read(const char *dir, const struct mgr_comms *cm, int *rc)
{
	struct mgr_ti_subs *s = calloc(1, sizeof(*s));

	if (!s) {
		*rc = PROTO_E_NOMEM;
		return NULL;
	}
	mgr_map_init(&s->index, TI_SUB_MAX);
	if ((*rc = collect(s, dir, cm))) {
		mgr_ti_subs_free(s);
		return NULL;
	}
	if (s->n)	/* (qsort wants a non-NULL base) */
		qsort(s->m, s->n, sizeof(*s->m), by_name_rank);
	if (s->n && !(s->world = malloc(s->n * sizeof(*s->world)))) {
		*rc = PROTO_E_NOMEM;
		mgr_ti_subs_free(s);
		return NULL;
	}
	for (size_t i = 0; i < s->n; i++)
		s->world[i] = s->m[i].world;
	for (size_t i = 0, j; i < s->n; i = j) {
		int ok = 1;

		for (j = i; j < s->n && s->m[j].name == s->m[i].name; j++)
			ok &= s->m[j].crank == (int64_t)(j - i) && s->m[j].world >= 0;
		if (ok && (*rc = mgr_map_put(&s->index, (uint64_t)s->m[i].name, 0,
					     (uint32_t)i))) {
			mgr_ti_subs_free(s);
			return NULL;
		}
	}
	return s;
}

const int32_t *mgr_ti_subs_members(const struct mgr_ti_subs *s, int64_t name,
				   size_t *n)
{
	int64_t i = s ? mgr_map_get(&s->index, (uint64_t)name, 0) : -1;
	size_t j;

	*n = 0;
	if (i < 0)
		return NULL;
	for (j = (size_t)i; j < s->n && s->m[j].name == name; j++)
		;
	*n = j - (size_t)i;
	return s->world + i;
}

void mgr_ti_subs_free(struct mgr_ti_subs *s)
{
	if (!s)
		return;
	mgr_map_clear(&s->index);
	free(s->m);
	free(s->world);
	free(s);
}
