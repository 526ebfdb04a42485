/*
 * manager/export/damage.c - one damage policy for every export and the
 * report (docs/modules/manager.md, "Damage"): what is intact is exported
 * and what was skipped is said, or, with --strict, the job is refused.
 * Streams cut short (no BYE: the process was killed) count: what they had
 * not sent is lost, as surely as counted losses are.
 */
#include <inttypes.h>
#include <stdio.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "proto/error.h"
#include "proto/trace.h"

int mgr_export_strict;

int mgr_export_damage(struct proto_trace *t, const char *dir,
		      const char *format)
{
	const struct proto_trace_stats *ts = proto_trace_stats(t);
	const struct proto_jobdir_report *jr = proto_trace_report(t);
	uint64_t lost = 0, gaps = 0, gap_ev = 0, cut = 0;
	uint64_t skipped = jr ? jr->skipped_bytes : 0;
	char where[300] = "", in_gaps[64] = "", in_cut[96] = "", msg[1024];

	for (size_t i = 0; i < proto_trace_nstreams(t); i++) {
		const struct proto_stream *s = proto_trace_stream(t, i);

		lost += s->lost_events;
		gaps += s->gap_batches;
		gap_ev += s->gap_events;
		cut += !s->ended;
	}
	if (!ts->bad_batches && !skipped && !gaps && !lost && !cut)
		return 0;
	if (cut)
		snprintf(in_cut, sizeof(in_cut), ", %" PRIu64 " stream%s cut short "
			 "(no end seen: what they had not sent is lost)", cut,
			 cut == 1 ? "" : "s");
	if (skipped && jr->first_problem[0])
		snprintf(where, sizeof(where), ": %s", jr->first_problem);
	if (gap_ev)
		snprintf(in_gaps, sizeof(in_gaps), " (%" PRIu64 " events per the "
			 "index)", gap_ev);
	snprintf(msg, sizeof(msg), "%s: damaged job directory (%" PRIu64 " corrupt "
		 "batches, %" PRIu64 " bytes skipped%s, %" PRIu64 " batches "
		 "missing%s, %" PRIu64 " events lost%s): %s", dir, ts->bad_batches,
		 skipped, where, gaps, in_gaps, lost, in_cut, format);
	if (mgr_export_strict)
		return mgr_fail(PROTO_E_FORMAT, "%s refused (--strict)", msg);
	mgr_err("%s exported what is intact", msg);	/* a warning: it goes on */
	return 0;
}
