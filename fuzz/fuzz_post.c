/*
 * fuzz/fuzz_post.c - libFuzzer target for the post-processing every export
 * and the report go through (manager/post/events.c: the clock tree, message and
 * communicator matching, the causality repair, the perturbation correction)
 * on the job directories of fuzz/postjob.h, read with mgr_events to the end,
 * with its statistics.
 *
 * FUZZ-LINK: -D_GNU_SOURCE manager/post/ -lm
 */
#include <stdlib.h>

#include "fuzz/postjob.h"

#include "manager/post/causality.h"
#include "manager/post/comms.h"
#include "manager/post/events.h"
#include "manager/post/perturb.h"
#include "manager/post/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[128];
	int rc;

	fz_jobdir(dir, sizeof(dir), "post");
	write_job(dir, data, size);
	struct mgr_events *e = mgr_events_open(dir, &rc);
	if (e) {
		struct mgr_event me;
		volatile uint64_t sum = 0;	/* keeps the reads */

		/* the profile too (issue 29): every event, then its invariants */
		struct mgr_profile *pf = mgr_profile_new();

		while (mgr_events_next(e, &me) == 1) {
			sum += (uint64_t)me.start + (uint64_t)me.end + (uint64_t)me.comm;
			if (pf && mgr_profile_add(pf, &me) < 0)
				abort();
		}
		if (pf && (mgr_profile_finish(pf) < 0 || mgr_profile_check(pf) != 0))
			abort();
		mgr_profile_free(pf);
		const struct mgr_causality *clc = mgr_events_causality(e);
		if (clc)
			sum += mgr_causality_stats(clc)->coll_violations_after +
			       mgr_comms_stats(mgr_causality_comms(clc))->named;
		const struct mgr_perturb *pt = mgr_events_perturb(e);
		if (pt) {
			const struct mgr_perturb_stats *ps = mgr_perturb_stats(pt);
			struct mgr_model_check mc[2];

			sum += (uint64_t)ps->removed_ns;
			/* the model's test, on the fitted model and a wild one */
			sum += mgr_perturb_model_check(pt, ps->model_latency_ns,
						       ps->model_ns_per_byte, mc, 2, NULL);
			size_t bad;
			sum += mgr_perturb_model_check(pt, 1e18, 1e9, mc, 1, &bad) + bad;
		}
		mgr_events_close(e);
	}
	fz_rmdir(dir);
	return 0;
}
