/*
 * manager/export/export_sim_platform.c - the simgrid-platform export: a small XML
 * description of the job (job.xml: one simulated host per MPI rank, its
 * calibrated speed, the network's latency and bandwidth), turned by the
 * stylesheets xsl/simgrid-platform.xsl and xsl/simgrid-hostfile.xsl into
 * a SimGrid 4.1 platform and an smpirun hostfile.
 *
 * Speeds: each rank's own effective rate in the run, the flops of its
 * COMPUTE events over their thread CPU time (the platform calibrated by the
 * tool, [000]'s remedy for a flop rate calibrated once), each stretch's CPU
 * time capped by its interval (stretch_cpu_ns), when they add up to
 * at least a millisecond of CPU; else its META flop_rate (the sensor's
 * calibration loop), else the rate its COMPUTE events carry. Latency and
 * bandwidth come from the META keys
 * net_latency_ns (one-way) and net_bandwidth_Bps when the trace has them
 * (`tapestry launch` and `tapestry run` of an mpirun write them into
 * meta.xml from an MPI ping-pong before the application, manager/launch/netcal.c;
 * net_calibration says how, or why not), else the defaults below. They are
 * end-to-end figures; every route of the platform crosses two links, each
 * given half the one-way latency and the whole bandwidth.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxslt/transform.h>
#include <libxslt/xsltInternals.h>
#include <libxslt/xsltutils.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "proto/error.h"

#define PF_RANKS_MAX 65536
#define PF_STREAMS_MAX (1u << 20)

/* Measured once on the development machine (2-core KVM guest, Open MPI 4.1
 * shared memory between two ranks, best of 3): 1-byte ping-pong one-way
 * 0.452 us; 4 MiB ping-pong 8.59e9 B/s. Every route crosses two links
 * (host - switch - host), so each link gets half the one-way latency. */
#define PF_DEFAULT_LATENCY_S 4.52e-7
#define PF_DEFAULT_BANDWIDTH_BPS 8.59e9
#define PF_DEFAULT_SPEED 1e9

struct pf_stream {
	uint64_t id;
	int32_t rank;
	int64_t world;
	double compute_rate;	/* flop_rate carried by COMPUTE events */
	double flops, cpu_ns;	/* sums over its COMPUTE events */
	int mpi;		/* has MPI events */
	uint64_t busy;		/* MPI events besides MPI_Init, the queries */
	const struct proto_stream *s;
};

struct pf_rank {
	const struct pf_stream *st;	/* NULL: the rank has no events */
	double speed;			/* flop/s (rank_speed), 0: none */
};

static void xml_attr(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

/* CPU time of a COMPUTE stretch that the program itself used: its thread
 * CPU time capped by the interval of its stamps (as in export_sim.c: the
 * sensor's CPU-time and counter reads sit between them and the stamps). */
static double stretch_cpu_ns(const struct proto_event *ev)
{
	double cpu = (double)ev->arg[0];
	double wall = ev->t_end > ev->t_start ? (double)(ev->t_end - ev->t_start) : 0;

	return cpu > wall ? wall : cpu;
}

/* A positive finite number from a META value, or 0. */
static double meta_num(const char *v)
{
	char *end;
	double d;

	if (!v || !*v)
		return 0;
	d = strtod(v, &end);
	return *end == '\0' && isfinite(d) && d > 0 ? d : 0;
}

/* First stream (then job) META value of key among the ranks, or NULL. */
static const char *net_meta(struct proto_trace *t, struct pf_rank *rk,
			    int64_t n, const char *key)
{
	const char *v;

	for (int64_t r = 0; r < n; r++)
		if (rk[r].st && (v = proto_stream_meta(rk[r].st->s, key)))
			return v;
	return proto_trace_meta(t, key);
}

/* Apply the stylesheet xsl_dir/name to doc, writing out: 0, or a negative
 * PROTO_E_* code (said, mgr_fail). */
static int apply(const char *xsl_dir, const char *name, xmlDocPtr doc,
		 const char *out)
{
	char path[PATH_MAX];
	xsltStylesheetPtr style;
	xmlDocPtr res;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", xsl_dir, name);
	if (access(path, R_OK) != 0)
		return mgr_fail(PROTO_E_NOTFOUND, "%s: stylesheet not found (set "
				"TAPESTRY_XSL_DIR?)", path);
	if (!(style = xsltParseStylesheetFile((const xmlChar *)path)))
		return mgr_fail(PROTO_E_FORMAT, "%s: not a valid stylesheet", path);
	if (!(res = xsltApplyStylesheet(style, doc, NULL))) {
		rc = mgr_fail(PROTO_E_FORMAT, "%s: transformation failed", path);
		goto done;
	}
	rc = xsltSaveResultToFilename(out, res, style, 0) < 0 ?
	     mgr_fail(PROTO_E_IO, "%s: cannot write", out) : 0;
	xmlFreeDoc(res);
done:
	xsltFreeStylesheet(style);
	return rc;
}

/* A rank's flop rate: its COMPUTE events' flops over their CPU time (at
 * least 1 ms of it), else its META flop_rate, else the rate its COMPUTE
 * events carry; 0 when none. */
static double rank_speed(const struct pf_stream *st)
{
	double speed = 0;

	if (st->cpu_ns >= 1e6 && st->flops > 0)
		speed = st->flops / (st->cpu_ns * 1e-9);
	if (!(speed > 0))
		speed = meta_num(proto_stream_meta(st->s, "flop_rate"));
	if (!(speed > 0))
		speed = st->compute_rate;
	return speed > 0 ? speed : 0;
}

/* Write out/job.xml: 0, or PROTO_E_IO (said, mgr_fail). Says on stderr
 * which figures are defaults. */
static int write_job(const char *dir, const char *path, struct proto_trace *t,
		     struct pf_rank *rk, int64_t n)
{
	double lat = meta_num(net_meta(t, rk, n, "net_latency_ns")) * 1e-9;
	double bw = meta_num(net_meta(t, rk, n, "net_bandwidth_Bps"));
	const char *src = lat > 0 && bw > 0 ? "trace" : lat > 0 || bw > 0 ?
		"trace and default" : "default";
	FILE *f = fopen(path, "w");
	int defaulted = 0;

	if (!f)
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path);
	if (!(lat > 0))
		lat = PF_DEFAULT_LATENCY_S;
	if (!(bw > 0))
		bw = PF_DEFAULT_BANDWIDTH_BPS;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<tapestry-simgrid version=\"1\" ranks=\"%" PRId64 "\">\n", n);
	/* SMPI's piecewise bandwidth factor from the ping-pong's sizes
	 * (net_bw_factor), else 1 for every size: the figures are measured */
	const char *bwf = net_meta(t, rk, n, "net_bw_factor");
	if (!mgr_smpi_factor_ok(bwf))
		bwf = "0:1";
	fprintf(f, "  <network one-way-latency=\"%.6g\" link-latency=\"%.6g\" "
		"link-bandwidth=\"%.6g\" bw-factor=\"%s\" source=\"%s\"",
		lat, lat / 2, bw, bwf, src);
	/* when the ping-pong measured them (a kept measure: before this job) */
	const char *when = net_meta(t, rk, n, "net_calibration_date");
	if (when && !strcmp(src, "trace")) {
		fputs(" measured=\"", f);
		xml_attr(f, when);
		fputs("\"", f);
	}
	fputs("/>\n", f);
	double sum = 0;
	int64_t have = 0;

	for (int64_t r = 0; r < n; r++)
		if (rk[r].st && rk[r].st->busy &&
		    (rk[r].speed = rank_speed(rk[r].st)) > 0) {
			sum += rk[r].speed;
			have++;
		}
	for (int64_t r = 0; r < n; r++) {
		double speed = rk[r].speed;

		if (!rk[r].st || !rk[r].st->busy) {
			/* a missing rank, or one cut short after MPI_Init (its
			 * stand-in computes nothing: simgrid-ti): the others'
			 * mean */
			fprintf(f, "  <host id=\"node-%" PRId64 "\" rank=\"%" PRId64
				"\" speed=\"%.6g\" trace-host=\"\" missing=\"1\"/>\n",
				r, r, have ? sum / (double)have : PF_DEFAULT_SPEED);
			continue;
		}
		if (!(speed > 0)) {
			speed = PF_DEFAULT_SPEED;
			defaulted++;
		}
		fprintf(f, "  <host id=\"node-%" PRId64 "\" rank=\"%" PRId64
			"\" speed=\"%.6g\" trace-host=\"", r, r, speed);
		xml_attr(f, rk[r].st->s->host);
		fputs("\"/>\n", f);
	}
	fputs("</tapestry-simgrid>\n", f);
	if (fclose(f) != 0)
		return mgr_fail(PROTO_E_IO, "%s: write failed: %m", path);
	if (defaulted)
		mgr_err("warning: %s: %d ranks have no calibrated flop rate: "
			"%.0e flop/s assumed", dir, defaulted, PF_DEFAULT_SPEED);
	if (strcmp(src, "trace")) {
		const char *why = net_meta(t, rk, n, "net_calibration");

		mgr_err("note: no measured latency/bandwidth in the trace "
			"(net_latency_ns, net_bandwidth_Bps): defaults %.3g s "
			"one-way, %.3g B/s used%s%s%s", lat, bw,
			why ? " (network ping-pong at launch: " : "",
			why ? why : "", why ? ")" : "");
	}
	return 0;
}

static struct pf_stream *stream_of(struct pf_stream **v, size_t *n,
				   size_t *cap, uint64_t id)
{
	for (size_t i = *n; i-- > 0;)
		if ((*v)[i].id == id)
			return &(*v)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct pf_stream *p;

		if (c > PF_STREAMS_MAX || !(p = realloc(*v, c * sizeof(*p))))
			return NULL;
		*v = p;
		*cap = c;
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].id = id;
	(*v)[*n].rank = -1;
	return &(*v)[(*n)++];
}

/* Each MPI stream of sv[0 .. ns) at its rank: *rk (world entries, every
 * rank with its stream), *world. 0, or a negative PROTO_E_* code (said,
 * mgr_fail). */
static int place_ranks(const char *dir, struct pf_stream *sv, size_t ns,
		       struct pf_rank **rkp, int64_t *worldp)
{
	struct pf_rank *rk;
	int64_t world = 0;

	for (size_t i = 0; i < ns; i++) {
		if (sv[i].s->rank >= 0)
			sv[i].rank = sv[i].s->rank;
		if (!sv[i].world)
			sv[i].world = strtoll(proto_stream_meta(sv[i].s, "size") ?
					      proto_stream_meta(sv[i].s, "size") : "0",
					      NULL, 10);
		if (sv[i].mpi && sv[i].rank >= 0 && sv[i].world > world)
			world = sv[i].world;
	}
	if (world <= 0)
		return mgr_fail(PROTO_E_NOTFOUND, "%s: no MPI ranks in this trace "
				"(was it taken with --sensors mpi?)", dir);
	if (world > PF_RANKS_MAX)
		return mgr_fail(PROTO_E_TOOBIG, "%s: %" PRId64 " ranks: at most %d",
				dir, world, PF_RANKS_MAX);
	if (!(rk = *rkp = calloc((size_t)world, sizeof(*rk))))
		return mgr_fail(PROTO_E_NOMEM, "out of memory");
	for (size_t i = 0; i < ns; i++) {
		if (!sv[i].mpi || sv[i].rank < 0 || sv[i].rank >= world)
			continue;
		if (rk[sv[i].rank].st)
			return mgr_fail(PROTO_E_FORMAT, "%s: two processes claim "
					"MPI rank %d", dir, sv[i].rank);
		rk[sv[i].rank].st = &sv[i];
	}
	/* a rank without events (killed before its sensor sent them) keeps
	 * a host, for the stand-in the simgrid-ti export writes for it */
	*worldp = world;
	return 0;
}

int mgr_export_simgrid_platform(const char *dir, const char *out,
				struct mgr_export_stats *st)
{
	struct pf_stream *sv = NULL;
	struct pf_rank *rk = NULL;
	size_t ns = 0, caps = 0;
	struct proto_trace *t;
	struct proto_trace_event te;
	char path[PATH_MAX], *xsl = NULL;
	xmlDocPtr doc = NULL;
	int64_t world = 0;
	int rc;

	if (!(t = mgr_trace_open(dir)))
		return PROTO_E_IO;
	while ((rc = proto_trace_next(t, &te)) == 1) {
		const struct proto_ev_info *info = proto_ev_info(te.ev->type);
		struct pf_stream *s;

		st->events++;
		if (!info || (info->category != PROTO_CAT_MPI &&
			      te.ev->type != PROTO_EV_COMPUTE))
			continue;
		if (!(s = stream_of(&sv, &ns, &caps, te.stream->id))) {
			rc = mgr_fail(PROTO_E_TOOBIG, "%s: too many streams", dir);
			goto done;
		}
		s->s = te.stream;
		if (te.ev->type == PROTO_EV_COMPUTE) {
			if (te.ev->arg[3] > 0)
				s->compute_rate = (double)te.ev->arg[3];
			if (te.ev->arg[0] > 0) {
				double cpu = stretch_cpu_ns(te.ev);
				double f = mgr_compute_flops(te.ev, meta_num(
					proto_stream_meta(te.stream, "instruction_rate")));

				/* as the simgrid-ti export counts them */
				if (te.ev->arg[2] == 0)
					f *= cpu / (double)te.ev->arg[0];
				s->flops += f;
				s->cpu_ns += cpu;
			}
			continue;
		}
		s->mpi = 1;
		s->busy += te.ev->type != PROTO_EV_MPI_INIT &&
			   te.ev->type != PROTO_EV_MPI_COMM_SIZE &&
			   te.ev->type != PROTO_EV_MPI_COMM_RANK;
		if (te.ev->type == PROTO_EV_MPI_INIT) {
			if (s->rank < 0)
				s->rank = (int32_t)te.ev->arg[0];
			s->world = te.ev->arg[1];
		}
	}
	if (rc < 0) {
		mgr_fail(rc, "%s: read error: %s", dir, proto_strerror(rc));
		goto done;
	}
	if ((rc = place_ranks(dir, sv, ns, &rk, &world)))
		goto done;
	if (mkdir(out, 0777) != 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot create: %m", out);
		goto done;
	}
	snprintf(path, sizeof(path), "%s/job.xml", out);
	if ((rc = write_job(dir, path, t, rk, world)))
		goto done;
	if (!(doc = xmlReadFile(path, NULL, XML_PARSE_NONET))) {
		rc = mgr_fail(PROTO_E_FORMAT, "%s: cannot parse what was just "
			      "written", path);
		goto done;
	}
	if (!(xsl = mgr_find("TAPESTRY_XSL_DIR", "../xsl",
			     TAPESTRY_PKGDATADIR "/xsl"))) {
		rc = mgr_fail(PROTO_E_NOMEM, "out of memory");
		goto done;
	}
	snprintf(path, sizeof(path), "%s/platform.xml", out);
	if ((rc = apply(xsl, "simgrid-platform.xsl", doc, path)))
		goto done;
	snprintf(path, sizeof(path), "%s/hostfile", out);
	if ((rc = apply(xsl, "simgrid-hostfile.xsl", doc, path)))
		goto done;
	st->written = (uint64_t)world;
done:
	free(xsl);
	xmlFreeDoc(doc);
	free(rk);
	free(sv);
	proto_trace_close(t);
	return rc;
}
