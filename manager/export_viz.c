/*
 * manager/export_viz.c - viewer exports (OTF2, Paje, Chrome JSON, MOCA). PLACEHOLDER: the formats are listed
 * so the command knows them, and each says plainly that it is not written yet.
 */
#include "manager/export.h"
#include "manager/mgr.h"

static int pending(const char *name)
{
	mgr_err("export format %s is not implemented yet", name);
	return -1;
}

int mgr_export_otf2(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("otf2");
}

int mgr_export_paje(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("paje");
}

int mgr_export_chrome(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("chrome");
}

int mgr_export_moca(const char *dir, const char *out, struct mgr_export_stats *st)
{
	return pending("moca");
}
