/*
 * manager/export/export_otf2.c - OTF2 archive through libotf2 (Vampir, otf2-print):
 * a location per (process, thread), a region per event type (Enter/Leave),
 * MPI point-to-point and non-blocking records, collectives, a metric for
 * memory samples, clock properties in ns. The points go through the external
 * sort ordered by location then time, so one event writer is open at a time
 * (memory: one OTF2 chunk). Mapping: docs/modules/export-viz.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manager/post/events.h"
#include "manager/export/export.h"
#include "manager/export/export_viz.h"
#include "manager/mgr.h"
#include "proto/error.h"

#ifndef HAVE_OTF2

int mgr_export_otf2(const char *dir, const char *out, struct mgr_export_stats *st)
{
	mgr_err("OTF2 support was not built (otf2-config not found by configure)");
	return -1;
}

#else

#include <otf2/otf2.h>

/* location first, then the time order of mgr_viz_cmp_time */
static int cmp_loc(const struct viz_pt *x, const struct viz_pt *y)
{
	int c = MGR_CMP(x->loc, y->loc);

	return c ? c : mgr_viz_cmp_time(x, y);
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType ft,
				OTF2_LocationRef loc, void *caller, bool final)
{
	return OTF2_FLUSH;
}

/* no post-flush callback: no BufferFlush records in the trace */
static OTF2_FlushCallbacks flush_cb = {pre_flush, NULL};

static int coll_op(unsigned type, OTF2_CollectiveOp *op)
{
	switch (type) {
	case PROTO_EV_MPI_BARRIER: *op = OTF2_COLLECTIVE_OP_BARRIER; return 1;
	case PROTO_EV_MPI_BCAST: *op = OTF2_COLLECTIVE_OP_BCAST; return 1;
	case PROTO_EV_MPI_REDUCE: *op = OTF2_COLLECTIVE_OP_REDUCE; return 1;
	case PROTO_EV_MPI_ALLREDUCE: *op = OTF2_COLLECTIVE_OP_ALLREDUCE; return 1;
	case PROTO_EV_MPI_GATHER: *op = OTF2_COLLECTIVE_OP_GATHER; return 1;
	case PROTO_EV_MPI_GATHERV: *op = OTF2_COLLECTIVE_OP_GATHERV; return 1;
	case PROTO_EV_MPI_SCATTER: *op = OTF2_COLLECTIVE_OP_SCATTER; return 1;
	case PROTO_EV_MPI_SCATTERV: *op = OTF2_COLLECTIVE_OP_SCATTERV; return 1;
	case PROTO_EV_MPI_ALLGATHER: *op = OTF2_COLLECTIVE_OP_ALLGATHER; return 1;
	case PROTO_EV_MPI_ALLGATHERV: *op = OTF2_COLLECTIVE_OP_ALLGATHERV; return 1;
	case PROTO_EV_MPI_ALLTOALL: *op = OTF2_COLLECTIVE_OP_ALLTOALL; return 1;
	case PROTO_EV_MPI_ALLTOALLV: *op = OTF2_COLLECTIVE_OP_ALLTOALLV; return 1;
	case PROTO_EV_MPI_REDUCE_SCATTER: *op = OTF2_COLLECTIVE_OP_REDUCE_SCATTER; return 1;
	case PROTO_EV_MPI_SCAN: *op = OTF2_COLLECTIVE_OP_SCAN; return 1;
	case PROTO_EV_MPI_EXSCAN: *op = OTF2_COLLECTIVE_OP_EXSCAN; return 1;
	default: return 0;
	}
}

static OTF2_RegionRole region_role(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);
	OTF2_CollectiveOp op;

	if (type == PROTO_EV_MPI_BARRIER)
		return OTF2_REGION_ROLE_BARRIER;
	if (coll_op(type, &op)) {
		switch (op) {
		case OTF2_COLLECTIVE_OP_BCAST:
		case OTF2_COLLECTIVE_OP_SCATTER:
		case OTF2_COLLECTIVE_OP_SCATTERV:
			return OTF2_REGION_ROLE_COLL_ONE2ALL;
		case OTF2_COLLECTIVE_OP_REDUCE:
		case OTF2_COLLECTIVE_OP_GATHER:
		case OTF2_COLLECTIVE_OP_GATHERV:
			return OTF2_REGION_ROLE_COLL_ALL2ONE;
		case OTF2_COLLECTIVE_OP_SCAN:
		case OTF2_COLLECTIVE_OP_EXSCAN:
			return OTF2_REGION_ROLE_COLL_OTHER;
		default:
			return OTF2_REGION_ROLE_COLL_ALL2ALL;
		}
	}
	if (type >= PROTO_EV_MPI_SEND && type <= PROTO_EV_MPI_IPROBE)
		return OTF2_REGION_ROLE_POINT2POINT;
	if (info && info->category == PROTO_CAT_LIBC)
		return OTF2_REGION_ROLE_FILE_IO;
	return OTF2_REGION_ROLE_FUNCTION;
}

static OTF2_Paradigm paradigm(unsigned type)
{
	const struct proto_ev_info *info = proto_ev_info(type);

	switch (info ? info->category : PROTO_CAT_TRACER) {
	case PROTO_CAT_MPI: return OTF2_PARADIGM_MPI;
	case PROTO_CAT_TRACER: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
	default: return OTF2_PARADIGM_USER;
	}
}

struct otf2 {
	OTF2_Archive *ar;
	const struct viz_scan *s;
	uint64_t *nev;		/* events written per location */
	uint32_t region[128];	/* event type -> region id (dense from 0) */
	uint32_t strings;	/* next string id */
	OTF2_GlobalDefWriter *g;
	int err;
};

static uint32_t str(struct otf2 *o, const char *s)
{
	uint32_t id = o->strings++;

	if (OTF2_GlobalDefWriter_WriteString(o->g, id, s) != OTF2_SUCCESS)
		o->err = 1;
	return id;
}

#define OK(call) do { if ((call) != OTF2_SUCCESS) o->err = 1; } while (0)

/* OTF2 communicator of a job-wide communicator name (manager/post/comms.h):
 * 0 for MPI_COMM_WORLD, else 1 + its index in the scan's list (world when
 * the list was full) */
static uint32_t comm_ref(const struct viz_scan *s, int64_t comm)
{
	if (comm == 0)
		return 0;
	for (size_t i = 0; i < s->ncomms; i++)
		if (s->comm_ids[i] == comm)
			return (uint32_t)i + 1;
	return 0;
}

static const struct viz_scan *member_scan;

/* members by name, then side (an intercommunicator's group), then their
 * rank in the communicator, then world rank */
static int cmp_member(const void *pa, const void *pb)
{
	const struct viz_member *a = pa, *b = pb;
	int32_t ra = member_scan->procs[a->proc].rank, rb = member_scan->procs[b->proc].rank;

	int c;

	if ((c = MGR_CMP(a->name, b->name)) || (c = MGR_CMP(a->side, b->side)) ||
	    (c = MGR_CMP(a->myrank, b->myrank)))
		return c;
	return MGR_CMP(ra, rb);
}

/* Define the communicators the collectives used: each named one over its
 * members (in their rank order; world ranks index group 0's locations), an
 * intercommunicator as an InterComm of its two groups (told apart by side),
 * the others (unnamed, or without members seen) over all ranks, as their
 * membership is not known. */
static void write_comms(struct otf2 *o, uint64_t *members)
{
	const struct viz_scan *s = o->s;
	uint32_t next_group = 2;	/* 0, 1: world's */

	member_scan = s;
	qsort(s->members, s->nmembers, sizeof(*s->members), cmp_member);
	for (size_t i = 0; i < s->ncomms; i++) {
		int64_t name = s->comm_ids[i];
		uint32_t group = 1, n = 0, split = 0;
		size_t lo = 0, hi = s->nmembers;
		char label[96];

		while (lo < hi) {	/* the first member of name */
			size_t mid = (lo + hi) / 2;

			if (s->members[mid].name < name)
				lo = mid + 1;
			else
				hi = mid;
		}
		int sides = 0;
		int64_t side0 = lo < s->nmembers && s->members[lo].name == name ?
				s->members[lo].side : -1;
		for (size_t k = lo; k < s->nmembers && s->members[k].name == name; k++) {
			int32_t r = s->procs[s->members[k].proc].rank;

			if (k == lo || s->members[k].side != s->members[k - 1].side) {
				sides++;
				split = n;
			}
			if (r >= 0 && r <= s->max_rank && n <= (uint32_t)s->max_rank)
				members[n++] = (uint64_t)r;
		}
		if (name > 0 && side0 >= 0 && sides == 2 &&
		    split > 0 && split < n) {
			uint32_t ga = next_group++, gb = next_group++;

			snprintf(label, sizeof(label), "intercomm %" PRId64 " (%" PRIu32
				 " + %" PRIu32 " ranks)", name, split, n - split);
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, ga, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, split, members));
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, gb, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, n - split, members + split));
			OK(OTF2_GlobalDefWriter_WriteInterComm(o->g, (uint32_t)i + 1,
				str(o, label), ga, gb, OTF2_UNDEFINED_COMM,
				OTF2_COMM_FLAG_NONE));
			continue;
		}
		if (name > 0 && n && side0 < 0) {
			group = next_group++;
			snprintf(label, sizeof(label), "comm %" PRId64 " (%" PRIu32 " ranks)",
				 name, n);
			OK(OTF2_GlobalDefWriter_WriteGroup(o->g, group, str(o, label),
				OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
				OTF2_GROUP_FLAG_NONE, n, members));
		} else {
			snprintf(label, sizeof(label), "%s %" PRId64 " (members unknown)",
				 name == -3 ? "MPI_COMM_SELF" : "comm", name);
		}
		OK(OTF2_GlobalDefWriter_WriteComm(o->g, (uint32_t)i + 1, str(o, label),
			group, 0, OTF2_COMM_FLAG_NONE));
	}
}

static void write_point(struct otf2 *o, OTF2_EvtWriter *w, const struct viz_pt *p)
{
	const struct viz_scan *s = o->s;
	OTF2_TimeStamp t = (OTF2_TimeStamp)(p->t < 0 ? 0 : p->t);
	OTF2_CollectiveOp op;
	int coll = coll_op(p->type, &op);
	uint64_t before = 0;

	OK(OTF2_EvtWriter_GetNumberOfEvents(w, &before));
	switch (p->kind) {
	case VIZ_PT_ENTER:
		OK(OTF2_EvtWriter_Enter(w, NULL, t, o->region[p->type & 127]));
		if (coll)
			OK(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t));
		break;
	case VIZ_PT_LEAVE:
		if (coll) {
			struct proto_event ev = {.type = p->type};

			memcpy(ev.arg, p->a, sizeof(ev.arg));
			int64_t bytes = mgr_ev_field(&ev, PROTO_F_bytes, 0);
			int64_t rbytes = mgr_ev_field(&ev, PROTO_F_rbytes, bytes);
			int64_t root = mgr_ev_field(&ev, PROTO_F_root, -1);
			int64_t comm = mgr_ev_field(&ev, PROTO_F_comm, 0);

			OK(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, op, comm_ref(s, comm),
				root >= 0 ? (uint32_t)root : OTF2_UNDEFINED_UINT32,
				(uint64_t)(bytes < 0 ? 0 : bytes),
				(uint64_t)(rbytes < 0 ? 0 : rbytes)));
		}
		OK(OTF2_EvtWriter_Leave(w, NULL, t, o->region[p->type & 127]));
		break;
	case VIZ_PT_EP: {
		int64_t peer = p->a[1], tag = p->a[3], bytes = p->a[4] < 0 ? 0 : p->a[4];
		uint64_t req = (uint64_t)p->a[5];
		/* point-to-point on MPI_COMM_WORLD with world ranks (see docs) */
		int known = peer >= 0 && peer <= s->max_rank && tag >= 0 && tag <= UINT32_MAX;

		switch (p->a[0]) {
		case VIZ_EP_SEND:
			if (known)
				OK(OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)peer, 0,
							  (uint32_t)tag, (uint64_t)bytes));
			break;
		case VIZ_EP_RECV:
			if (known)
				OK(OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)peer, 0,
							  (uint32_t)tag, (uint64_t)bytes));
			break;
		case VIZ_EP_ISEND:
			if (known)
				OK(OTF2_EvtWriter_MpiIsend(w, NULL, t, (uint32_t)peer, 0,
							   (uint32_t)tag, (uint64_t)bytes, req));
			break;
		case VIZ_EP_IRECV_POST:
			OK(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, req));
			break;
		case VIZ_EP_ISEND_DONE:
			OK(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, req));
			break;
		case VIZ_EP_IRECV_DONE:
			if (known)
				OK(OTF2_EvtWriter_MpiIrecv(w, NULL, t, (uint32_t)peer, 0,
							   (uint32_t)tag, (uint64_t)bytes, req));
			else
				OK(OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t, req));
			break;
		}
		break;
	}
	case VIZ_PT_SAMPLE: {
		OTF2_Type types[4] = {OTF2_TYPE_INT64, OTF2_TYPE_INT64, OTF2_TYPE_INT64,
				      OTF2_TYPE_INT64};
		OTF2_MetricValue v[4];

		for (int i = 0; i < 4; i++)
			v[i].signed_int = p->a[i];
		OK(OTF2_EvtWriter_Metric(w, NULL, t, 0, 4, types, v));
		break;
	}
	}
	uint64_t after = before;
	OK(OTF2_EvtWriter_GetNumberOfEvents(w, &after));
	o->nev[p->loc] += after - before;
}

static void write_defs(struct otf2 *o)
{
	const struct viz_scan *s = o->s;
	uint32_t empty, machine, node_cls, host_cls, *host_node = NULL;
	uint64_t *members = NULL;

	o->g = OTF2_Archive_GetGlobalDefWriter(o->ar);
	if (!o->g) {
		o->err = 1;
		return;
	}
	OK(OTF2_GlobalDefWriter_WriteClockProperties(o->g, 1000000000, 0,
		(uint64_t)s->t_end + 1, OTF2_UNDEFINED_TIMESTAMP));
	empty = str(o, "");
	(void)empty;
	for (unsigned ty = 1; ty < 128; ty++) {
		uint32_t name;

		if (!s->by_type[ty] || ty == PROTO_EV_MEM_SAMPLE)
			continue;
		name = str(o, mgr_viz_ev_name(ty));
		OK(OTF2_GlobalDefWriter_WriteRegion(o->g, o->region[ty], name, name, empty,
			region_role(ty), paradigm(ty), OTF2_REGION_FLAG_NONE, empty, 0, 0));
	}
	machine = str(o, "job");
	node_cls = str(o, "machine");
	host_cls = str(o, "node");
	OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->g, 0, machine, node_cls,
						    OTF2_UNDEFINED_SYSTEM_TREE_NODE));
	host_node = calloc(s->nhosts ? s->nhosts : 1, sizeof(*host_node));
	if (!host_node) {
		o->err = 1;
		return;
	}
	for (size_t h = 0; h < s->nhosts; h++) {
		host_node[h] = (uint32_t)h + 1;
		OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->g, host_node[h],
			str(o, s->hosts[h]), host_cls, 0));
	}
	for (size_t p = 0; p < s->nprocs; p++) {
		const struct viz_proc *pr = &s->procs[p];
		char name[64];

		if (pr->rank >= 0)
			snprintf(name, sizeof(name), "rank %d", pr->rank);
		else
			snprintf(name, sizeof(name), "pid %" PRId64, pr->pid);
		OK(OTF2_GlobalDefWriter_WriteLocationGroup(o->g, p, str(o, name),
			OTF2_LOCATION_GROUP_TYPE_PROCESS, host_node[pr->host_idx],
			OTF2_UNDEFINED_LOCATION_GROUP));
	}
	for (size_t t = 0; t < s->nthreads; t++) {
		char name[64];

		snprintf(name, sizeof(name), "thread %" PRIu32, s->threads[t].tid);
		OK(OTF2_GlobalDefWriter_WriteLocation(o->g, t, str(o, name),
			OTF2_LOCATION_TYPE_CPU_THREAD, o->nev[t], s->threads[t].proc));
	}
	if (s->mem_samples) {
		static const char *mn[4] = {"rss", "minflt", "majflt", "vsize"};
		static const char *md[4] = {"resident set size", "minor page faults in the period",
					    "major page faults in the period", "virtual size"};
		OTF2_MetricMemberRef mm[4] = {0, 1, 2, 3};

		for (int i = 0; i < 4; i++)
			OK(OTF2_GlobalDefWriter_WriteMetricMember(o->g, (uint32_t)i,
				str(o, mn[i]), str(o, md[i]), OTF2_METRIC_TYPE_OTHER,
				i == 0 || i == 3 ? OTF2_METRIC_ABSOLUTE_POINT :
				OTF2_METRIC_RELATIVE_LAST, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0,
				str(o, i == 0 || i == 3 ? "bytes" : "faults")));
		OK(OTF2_GlobalDefWriter_WriteMetricClass(o->g, 0, 4, mm,
			OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT));
	}
	if (s->max_rank >= 0) {
		size_t n = (size_t)s->max_rank + 1;
		uint32_t world = str(o, "MPI_COMM_WORLD");

		members = malloc(n * sizeof(*members));
		if (!members) {
			o->err = 1;
			goto done;
		}
		/* group 0: rank -> location of its main thread (a rank with no
		 * process falls back to location 0) */
		for (size_t r = 0; r < n; r++)
			members[r] = s->rank_proc[r] == UINT32_MAX ? 0 :
				s->procs[s->rank_proc[r]].first_thread;
		OK(OTF2_GlobalDefWriter_WriteGroup(o->g, 0, str(o, "world locations"),
			OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
			OTF2_GROUP_FLAG_NONE, (uint32_t)n, members));
		for (size_t r = 0; r < n; r++)
			members[r] = r;
		OK(OTF2_GlobalDefWriter_WriteGroup(o->g, 1, str(o, "world"),
			OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
			OTF2_GROUP_FLAG_NONE, (uint32_t)n, members));
		OK(OTF2_GlobalDefWriter_WriteComm(o->g, 0, world, 1,
			OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
		write_comms(o, members);
	}
done:
	free(members);
	free(host_node);
}

int mgr_export_otf2(const char *dir, const char *path, struct mgr_export_stats *st)
{
	struct viz_sort *so = NULL;
	struct viz_scan s;
	struct viz_pt p;
	struct otf2 ob, *o = &ob;
	OTF2_EvtWriter *w = NULL;
	uint32_t cur = UINT32_MAX;
	int rc = -1, r = 0;

	memset(o, 0, sizeof(*o));
	if (mgr_viz_scan(dir, &s) != 0)
		return -1;
	o->s = &s;
	if (!s.nthreads) {
		mgr_err("%s: no events: an OTF2 archive needs at least one location", dir);
		goto done;
	}
	o->nev = calloc(s.nthreads ? s.nthreads : 1, sizeof(*o->nev));
	if (!o->nev || !(so = mgr_viz_sort_new(0, cmp_loc))) {
		mgr_err("out of memory");
		goto done;
	}
	for (unsigned ty = 1, n = 0; ty < 128; ty++)
		if (s.by_type[ty] && ty != PROTO_EV_MEM_SAMPLE)
			o->region[ty] = n++;
	if (mgr_viz_fill_sort(dir, &s, so, 1, 0, "otf2", st) != 0)
		goto done;
	if (mkdir(path, 0777) != 0) {
		mgr_err("%s: cannot create: %m", path);
		goto done;
	}
	o->ar = OTF2_Archive_Open(path, "traces", OTF2_FILEMODE_WRITE,
				 OTF2_CHUNK_SIZE_MIN, OTF2_CHUNK_SIZE_MIN,
				 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o->ar) {
		mgr_err("%s: OTF2 cannot open the archive", path);
		goto done;
	}
	OK(OTF2_Archive_SetFlushCallbacks(o->ar, &flush_cb, NULL));
	OK(OTF2_Archive_SetSerialCollectiveCallbacks(o->ar));
	OK(OTF2_Archive_SetCreator(o->ar, "tapestry"));
	OK(OTF2_Archive_OpenEvtFiles(o->ar));
	while (!o->err && (r = mgr_viz_sort_next(so, &p)) == 1) {
		if (p.loc != cur) {
			if (w)
				OK(OTF2_Archive_CloseEvtWriter(o->ar, w));
			cur = p.loc;
			if (!(w = OTF2_Archive_GetEvtWriter(o->ar, cur))) {
				o->err = 1;
				break;
			}
		}
		write_point(o, w, &p);
	}
	if (r < 0) {
		mgr_err("reading sorted events: %s", proto_strerror(r));
		goto done;
	}
	if (w)
		OK(OTF2_Archive_CloseEvtWriter(o->ar, w));
	OK(OTF2_Archive_CloseEvtFiles(o->ar));
	OK(OTF2_Archive_OpenDefFiles(o->ar));
	for (size_t t = 0; t < s.nthreads; t++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar, t);

		if (!dw)
			o->err = 1;
		else
			OK(OTF2_Archive_CloseDefWriter(o->ar, dw));
	}
	OK(OTF2_Archive_CloseDefFiles(o->ar));
	write_defs(o);
	for (size_t t = 0; t < s.nthreads; t++)
		st->written += o->nev[t];
	if (o->err) {
		mgr_err("%s: OTF2 write failed", path);
		goto done;
	}
	rc = 0;
done:
	if (o->ar && OTF2_Archive_Close(o->ar) != OTF2_SUCCESS && rc == 0) {
		mgr_err("%s: OTF2 archive close failed", path);
		rc = -1;
	}
	mgr_viz_sort_free(so);
	free(o->nev);
	mgr_viz_scan_free(&s);
	return rc;
}

#endif
