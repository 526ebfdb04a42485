/*
 * manager/post/comms.c - job-wide names for MPI communicators (see comms.h).
 * One open-addressing table holds six kinds of entries, keyed by
 * (kind, a, b, c): a stream's local id -> name, a stream's count of
 * creations on a parent, (parent, k, colour) -> name, a stream's count
 * of collectives on a communicator, and for the constructors collective
 * over a member set (create_group, merge) a stream's count of creations
 * on (parent, gkey) and (parent, k, gkey) -> name. A bit per name says
 * which are intercommunicators.
 */
#include <stdlib.h>
#include <string.h>

#include "manager/post/comms.h"
#include "manager/post/grow.h"
#include "proto/error.h"

enum { K_LOCAL = 1, K_SEQ, K_NAME, K_COLL, K_GSEQ, K_GNAME };

#define DUP_COLOUR INT64_MIN	/* one communicator a call: no colour */
#define UNKNOWN_COLOUR (INT64_MIN + 1)	/* no leader: stays unnamed */
#define MERGE_PARENT INT64_MIN	/* the parent slot of every merge */
#define INTER_PARENT (INT64_MIN + 1)	/* ... of every MPI_Intercomm_create */

struct ent {
	uint64_t kind;		/* 0: free */
	int64_t a, b, c, v;
	int64_t aux;		/* K_LOCAL: the stream's rank in it, -1 */
	int64_t side;		/* K_LOCAL of an intercommunicator: see
				 * mgr_comms_side; -1 */
};

struct mgr_comms {
	struct ent *t;
	size_t cap, n;
	int64_t next;		/* next name */
	uint8_t *inter;		/* bit name: an intercommunicator's */
	size_t ninter;		/* bytes of it */
	struct mgr_comms_stats st;
};

static size_t slot_of(const struct mgr_comms *cm, uint64_t kind, int64_t a,
		      int64_t b, int64_t c)
{
	uint64_t h = mgr_hash2(mgr_hash2(kind, (uint64_t)a),
			       mgr_hash2((uint64_t)b, (uint64_t)c));
	size_t k = h & (cm->cap - 1);

	while (cm->t[k].kind && !(cm->t[k].kind == kind && cm->t[k].a == a &&
				  cm->t[k].b == b && cm->t[k].c == c))
		k = (k + 1) & (cm->cap - 1);
	return k;
}

static const struct ent *find(const struct mgr_comms *cm, uint64_t kind,
			      int64_t a, int64_t b, int64_t c)
{
	if (!cm->cap)
		return NULL;
	size_t k = slot_of(cm, kind, a, b, c);

	return cm->t[k].kind ? &cm->t[k] : NULL;
}

/* The entry for the key, made with value v0 if new. NULL: out of memory
 * (*rc) or the table is at MGR_COMMS_MAX (*rc untouched). */
static struct ent *get(struct mgr_comms *cm, uint64_t kind, int64_t a,
		       int64_t b, int64_t c, int64_t v0, int *rc)
{
	if ((cm->n + 1) * 2 > cm->cap) {
		if (cm->n >= MGR_COMMS_MAX) {
			const struct ent *e = find(cm, kind, a, b, c);

			return (struct ent *)e;
		}
		size_t ncap = cm->cap ? cm->cap * 2 : 64;
		struct ent *old = cm->t, *nt = calloc(ncap, sizeof(*nt));

		if (!nt) {
			*rc = PROTO_E_NOMEM;
			return NULL;
		}
		size_t ocap = cm->cap;
		cm->t = nt;
		cm->cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].kind)
				cm->t[slot_of(cm, old[i].kind, old[i].a, old[i].b,
					      old[i].c)] = old[i];
		free(old);
	}
	size_t k = slot_of(cm, kind, a, b, c);
	struct ent *e = &cm->t[k];

	if (!e->kind) {
		*e = (struct ent){kind, a, b, c, v0, -1, -1};
		cm->n++;
	}
	return e;
}

struct mgr_comms *mgr_comms_new(void)
{
	struct mgr_comms *cm = calloc(1, sizeof(*cm));

	if (cm)
		cm->next = 1;
	return cm;
}

int64_t mgr_comms_name(const struct mgr_comms *cm, uint64_t stream,
		       int64_t local)
{
	if (local == 0)
		return 0;
	const struct ent *e = find(cm, K_LOCAL, (int64_t)stream, local, 0);

	return e ? e->v : -(local + 2);
}

/* A communicator the stream could not name: counted when one was made. */
static int unnamed(struct mgr_comms *cm, int64_t made)
{
	if (made >= 0) {
		cm->st.created++;
		cm->st.unnamed++;
	}
	return 0;
}

int mgr_comms_inter(const struct mgr_comms *cm, int64_t name)
{
	return name > 0 && (uint64_t)name < cm->ninter * 8 &&
	       (cm->inter[name / 8] >> (name % 8) & 1);
}

/* Mark name as an intercommunicator's. 0 or PROTO_E_NOMEM. */
static int mark_inter(struct mgr_comms *cm, int64_t name)
{
	size_t need = (size_t)name / 8 + 1;

	if (need > cm->ninter) {
		size_t ncap = cm->ninter ? cm->ninter : 64;
		uint8_t *b;

		while (ncap < need)
			ncap *= 2;
		if (!(b = realloc(cm->inter, ncap)))
			return PROTO_E_NOMEM;
		memset(b + cm->ninter, 0, ncap - cm->ninter);
		cm->inter = b;
		cm->ninter = ncap;
	}
	cm->inter[name / 8] |= (uint8_t)(1u << (name % 8));
	return 0;
}

int mgr_comms_event(struct mgr_comms *cm, uint64_t stream,
		    const struct proto_event *ev, const int64_t *array,
		    size_t narray)
{
	int64_t colour, parent, pname;
	uint64_t seqkind = K_SEQ, namekind = K_NAME;
	int rc = 0, by_leader = 0;

	/* what tells apart the communicators one call makes: the split's
	 * colour, else their lowest world rank (they are disjoint) */
	switch (ev->type) {
	case PROTO_EV_MPI_COMM_SPLIT:
		colour = ev->arg[proto_ev_arg(ev->type, PROTO_F_color)];
		break;
	case PROTO_EV_MPI_COMM_DUP:
	case PROTO_EV_MPI_COMM_DUP_WITH_INFO:
	case PROTO_EV_MPI_COMM_IDUP:
	case PROTO_EV_MPI_CART_CREATE:	/* one communicator */
	case PROTO_EV_MPI_GRAPH_CREATE:
	case PROTO_EV_MPI_DIST_GRAPH_CREATE:
	case PROTO_EV_MPI_DIST_GRAPH_CREATE_ADJACENT:
		colour = DUP_COLOUR;
		break;
	case PROTO_EV_MPI_COMM_CREATE:
	case PROTO_EV_MPI_COMM_SPLIT_TYPE:
	case PROTO_EV_MPI_CART_SUB:
		colour = ev->arg[proto_ev_arg(ev->type, PROTO_F_leader)];
		if (colour < 0)
			colour = UNKNOWN_COLOUR;
		by_leader = 1;
		break;
	case PROTO_EV_MPI_COMM_CREATE_GROUP:	/* counted per member set */
	case PROTO_EV_MPI_INTERCOMM_MERGE:
		colour = ev->arg[proto_ev_arg(ev->type, PROTO_F_gkey)];
		seqkind = K_GSEQ;
		namekind = K_GNAME;
		break;
	case PROTO_EV_MPI_INTERCOMM_CREATE:	/* the gkey rides in the ARRAY */
		colour = array && narray >= 1 ? array[0] : -1;
		seqkind = K_GSEQ;
		namekind = K_GNAME;
		break;
	default:
		return 0;
	}
	int64_t made = ev->arg[proto_ev_arg(ev->type, PROTO_F_newcomm)];

	parent = ev->arg[proto_ev_arg(ev->type, PROTO_F_comm)];
	pname = mgr_comms_name(cm, stream, parent);
	/* the merge's parent is an intercommunicator and an intercommunicator
	 * joins two local ones: the two sides' parents differ, the member set
	 * alone scopes it */
	int inter = ev->type == PROTO_EV_MPI_INTERCOMM_CREATE;
	if (ev->type == PROTO_EV_MPI_INTERCOMM_MERGE)
		pname = MERGE_PARENT;
	else if (inter)
		pname = INTER_PARENT;
	else if (parent < 0 || pname < 0)	/* no parent, or an unnamed one */
		return unnamed(cm, made);
	/* what is made on an intercommunicator is one too; the leader (the
	 * remote group's on each side) does not tell its instances apart */
	else if ((inter = mgr_comms_inter(cm, pname)) && by_leader)
		colour = UNKNOWN_COLOUR;
	/* no gkey: no count either (the members may lack it alike) */
	if (seqkind == K_GSEQ && colour < 0)
		return unnamed(cm, made);
	/* the k-th creation on the parent (or on the parent and member set),
	 * counted whether or not this rank got a communicator out of it
	 * (colour MPI_UNDEFINED) */
	struct ent *seq = get(cm, seqkind, (int64_t)stream, pname,
			      seqkind == K_GSEQ ? colour : 0, 0, &rc);
	if (!seq)
		return rc;
	int64_t k = seq->v++;
	if (made < 0)
		return 0;
	cm->st.created++;
	if (colour == UNKNOWN_COLOUR) {
		cm->st.unnamed++;
		return 0;
	}
	struct ent *nm = get(cm, namekind, pname, k, colour, 0, &rc);
	if (nm && !nm->v) {
		/* marked before it is given: unmarked, it would take
		 * collectives */
		if (inter && (rc = mark_inter(cm, cm->next)))
			return rc;
		nm->v = cm->next++;
		cm->st.named++;
		cm->st.inter += inter;
	}
	/* the value, not the entry: the next get may move the table */
	int64_t name = nm ? nm->v : -1;
	int64_t side = !inter ? -1 :
		ev->type == PROTO_EV_MPI_INTERCOMM_CREATE ?
		ev->arg[proto_ev_arg(ev->type, PROTO_F_leader)] :
		mgr_comms_side(cm, stream, parent);
	struct ent *loc = nm ? get(cm, K_LOCAL, (int64_t)stream, made, 0, 0, &rc) : NULL;
	if (!loc) {
		cm->st.unnamed++;
		return rc;
	}
	loc->v = name;
	int mi = proto_ev_arg(ev->type, PROTO_F_myrank);
	loc->aux = mi >= 0 ? ev->arg[mi] : -1;
	loc->side = side < 0 ? -1 : side;
	return 0;
}

int64_t mgr_comms_side(const struct mgr_comms *cm, uint64_t stream, int64_t local)
{
	const struct ent *e = local > 0 ? find(cm, K_LOCAL, (int64_t)stream, local, 0) : NULL;

	return e ? e->side : -1;
}

int64_t mgr_comms_rank(const struct mgr_comms *cm, uint64_t stream, int64_t local)
{
	const struct ent *e = local > 0 ? find(cm, K_LOCAL, (int64_t)stream, local, 0) : NULL;

	return e ? e->aux : -1;
}

int64_t mgr_comms_next_coll(struct mgr_comms *cm, uint64_t stream,
			    int64_t name, int *rc)
{
	if (name < 0 || mgr_comms_inter(cm, name))
		return -1;
	struct ent *e = get(cm, K_COLL, (int64_t)stream, name, 0, 0, rc);

	return e ? e->v++ : -1;
}

int mgr_comms_coll_kind(unsigned type)
{
	if (!proto_ev_collective(type))
		return 0;
	switch (type) {
	case PROTO_EV_MPI_BCAST:
	case PROTO_EV_MPI_SCATTER:
	case PROTO_EV_MPI_SCATTERV:
		return MGR_CK_FROM_ROOT;
	case PROTO_EV_MPI_REDUCE:
	case PROTO_EV_MPI_GATHER:
	case PROTO_EV_MPI_GATHERV:
		return MGR_CK_TO_ROOT;
	case PROTO_EV_MPI_SCAN:
	case PROTO_EV_MPI_EXSCAN:
		return MGR_CK_PREFIX;
	default:
		return MGR_CK_ALL;
	}
}

const struct mgr_comms_stats *mgr_comms_stats(const struct mgr_comms *cm)
{
	return &cm->st;
}

void mgr_comms_free(struct mgr_comms *cm)
{
	if (!cm)
		return;
	free(cm->t);
	free(cm->inter);
	free(cm);
}
