/*
 * manager/export_sim.c - SimGrid exports. PLACEHOLDER: the formats are listed
 * so the command knows them, and each says plainly that it is not written yet.
 */
#include "manager/export.h"
#include "manager/mgr.h"

static int pending(const char *name)
{
	mgr_err("export format %s is not implemented yet", name);
	return -1;
}

int mgr_export_simgrid_ti(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("simgrid-ti");
}

int mgr_export_simgrid_ti_2011(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("simgrid-ti-2011");
}

int mgr_export_simgrid_platform(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("simgrid-platform");
}
