/*
 * fuzz/fuzz_export.c - libFuzzer target for the exporters that read the
 * post-processed events (CSV, Chrome JSON, Paje, SimGrid time-independent
 * traces in both dialects, MOCA) on the job directories of fuzz/postjob.h:
 * each export runs to the end (or refuses the job with a message) and its
 * output is removed. OTF2 is left out (libotf2 is not linked here; its
 * writer takes the same points as Paje's).
 *
 * FUZZ-LINK: -D_GNU_SOURCE manager/post/ manager/export/export_csv.c manager/export/export_chrome.c manager/export/export_paje.c manager/export/export_viz.c manager/export/viz_points.c manager/export/viz_sort.c manager/export/viz_progress.c manager/export/export_sim.c manager/export/export_sim_sub.c manager/export/export_sim_missing.c manager/export/export_moca.c manager/export/damage.c manager/util.c -lm
 */
#include "fuzz/postjob.h"

#include "manager/export/export.h"
#include "manager/mgr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *name;
		int (*fn)(const char *, const char *, struct mgr_export_stats *);
	} ex[] = {
		{"csv", mgr_export_csv}, {"chrome", mgr_export_chrome},
		{"paje", mgr_export_paje}, {"ti", mgr_export_simgrid_ti},
		{"ti2011", mgr_export_simgrid_ti_2011}, {"moca", mgr_export_moca},
	};
	char dir[128], out[160];

	fz_jobdir(dir, sizeof(dir), "export");
	write_job(dir, data, size);
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		struct mgr_export_stats st = {0};

		snprintf(out, sizeof(out), "%s/out.%s", dir, ex[i].name);
		(void)ex[i].fn(dir, out, &st);
		mgr_err_clear();	/* a refusal's reason: not wanted here */
	}
	fz_rmdir(dir);
	return 0;
}
