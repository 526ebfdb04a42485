/*
 * manager/export/export.c - `tapestry export`: the format table and the driver that
 * makes every export all-or-nothing (write into the directory OUT.tmp,
 * rename on success; no link followed in OUT's directory).
 */
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/export/export.h"
#include "manager/mgr.h"
#include "manager/safeio.h"
#include "manager/opts.h"
#include "proto/error.h"

static const struct {
	const char *name;
	mgr_export_fn fn;
	const char *def;	/* default output name inside the job directory */
	const char *summary;
} formats[] = {
	{"simgrid-ti", mgr_export_simgrid_ti, "simgrid-ti",
	 "SimGrid time-independent trace (SMPI replay), one file per rank + list"},
	{"simgrid-ti-2011", mgr_export_simgrid_ti_2011, "simgrid-ti-2011",
	 "time-independent trace, the 2011 dialect (p0 compute ...)"},
	{"simgrid-platform", mgr_export_simgrid_platform, "simgrid-platform",
	 "SimGrid platform, deployment and hostfile for replay"},
	{"otf2", mgr_export_otf2, "otf2", "OTF2 archive (Vampir, otf2-print)"},
	{"paje", mgr_export_paje, "trace.paje", "Paje trace (ViTE, pj_dump)"},
	{"chrome", mgr_export_chrome, "trace.json",
	 "Chrome trace-event JSON (Perfetto, chrome://tracing)"},
	{"csv", mgr_export_csv, "trace.csv", "one line per event"},
	{"moca", mgr_export_moca, "trace.moca", "memory samples, MOCA text format"},
	{"profile", mgr_export_profile, "profile",
	 "where the time went: CSV tables per rank, call, message, file"},
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static void list_formats(FILE *out)
{
	for (size_t i = 0; i < NFORMATS; i++)
		fprintf(out, "      %-17s %s\n%-24s(default output DIR/%s)\n",
			formats[i].name, formats[i].summary, "", formats[i].def);
}

static const struct mgr_opts_doc export_doc = {
	.opt = {
		{"format", 'f', MGR_OPT_SHORT, "FORMAT", "one of:", list_formats},
		{"output", 'o', MGR_OPT_SHORT, "OUT",
		 "output path (default: inside DIR, named as above;\n"
		 "csv: '-' = stdout)"},
		{"strict", 'S', 0, NULL, "refuse a damaged job directory (corrupt or\n"
		 "missing batches, damaged segments, lost events);\n"
		 "without it every format exports what is intact\n"
		 "and says what was skipped"},
	},
	.col = 23,
	.head = "usage: tapestry export -f FORMAT [-o OUT] [--strict] DIR\n",
	.tail = "  The output appears only when complete: a failed export leaves nothing.\n"
		"\ncsv columns: rank,tid,event,start_ns,end_ns,bytes,peer,tag,fd,path,pid,result,errcode,\n"
		"  args; times in ns from the job start; empty fields where the event has no such\n"
		"  value; args: the event's other fields as name=value, separated by spaces.\n",
};

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static void remove_tree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) != 0)
		return;
	if (S_ISDIR(sb.st_mode))
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		unlink(path);
}

/* The directory path would go into when it is not there, else NULL (a
 * static buffer). */
static const char *out_dir_missing(const char *path)
{
	static char d[4096];
	struct stat sb;
	char *slash;

	snprintf(d, sizeof(d), "%s", path);
	if (!(slash = strrchr(d, '/')) || slash == d)
		return NULL;	/* the current directory, or the root */
	*slash = 0;
	return stat(d, &sb) == 0 && S_ISDIR(sb.st_mode) ? NULL : d;
}

int mgr_export(const char *format, const char *dir, const char *out,
	       struct mgr_export_stats *st)
{
	char *def = NULL, *tmp = NULL;
	int rc = PROTO_E_NOMEM;
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, format))
			break;
	if (i == NFORMATS)
		return mgr_fail(PROTO_E_ARG, "unknown export format '%s'", format);
	memset(st, 0, sizeof(*st));
	if (!out) {
		if (asprintf(&def, "%s/%s", dir, formats[i].def) < 0)
			return PROTO_E_NOMEM;
		out = def;
	}
	if (!strcmp(out, "-")) {
		rc = formats[i].fn != mgr_export_csv ?
		     mgr_fail(PROTO_E_ARG, "only csv can be written to stdout") :
		     formats[i].fn(dir, "-", st);
		goto done;
	}
	if (out_dir_missing(out)) {	/* said about OUT, not OUT.tmp */
		rc = mgr_fail(PROTO_E_IO, "%s: cannot write: no directory %s", out,
			      out_dir_missing(out));
		goto done;
	}
	/* OUT.tmp is a directory made here (mkdir never follows a link; 0700:
	 * nobody else adds a name in it), the format writes OUT inside it
	 * through its descriptor, and OUT is renamed from it into OUT's
	 * directory through that directory's descriptor: in a job directory
	 * another user may write, a link planted at OUT.tmp is refused and no
	 * file outside is written (docs/SECURITY.md, "tapestry serve") */
	const char *base;
	int pfd = mgr_parent_dir(out, 0, &base), sfd = -1;
	char *stage = NULL, *inner = NULL;

	if (pfd < 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot open its directory: %m", out);
		goto done;
	}
	if (asprintf(&tmp, "%s.tmp", out) < 0 || asprintf(&stage, "%s.tmp", base) < 0)
		goto staged;
	if (mgr_is_link(pfd, stage)) {
		rc = mgr_fail(PROTO_E_IO, "%s is a symbolic link: refused (someone else may "
			      "write %s's directory)", tmp, out);
		goto staged;
	}
	remove_tree(tmp);
	if (mkdirat(pfd, stage, 0700) < 0 ||
	    (sfd = openat(pfd, stage, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    asprintf(&inner, "/proc/self/fd/%d/%s", sfd, base) < 0) {
		rc = mgr_fail(PROTO_E_IO, "%s: cannot make it: %m", tmp);
		goto staged;
	}
	rc = formats[i].fn(dir, inner, st);
	if (rc == 0) {
		if (mgr_is_link(pfd, base))
			unlinkat(pfd, base, 0);
		else
			remove_tree(out);
		if (renameat(sfd, base, pfd, base) != 0)
			rc = mgr_fail(PROTO_E_IO, "%s: cannot rename into place: %m",
				      out);
	}
	if (rc != 0) {
		remove_tree(inner);
		mgr_fail(rc, "export failed: %s not written", out);
	}
	unlinkat(pfd, stage, AT_REMOVEDIR);
staged:
	if (sfd >= 0)
		close(sfd);
	close(pfd);
	free(stage);
	free(inner);
done:
	free(def);
	free(tmp);
	return rc;
}

int mgr_cmd_export(int argc, char **argv)
{
	const char *format = NULL, *output = NULL;
	struct mgr_export_stats st;
	size_t i;
	int c;

	optind = 1;
	while ((c = mgr_opts_next(&export_doc, argc, argv)) > 0) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		case 'S': mgr_export_strict = 1; break;
		}
	}
	if (c < 0)
		return mgr_opts_status(c);
	if (!format || optind != argc - 1) {
		mgr_err("export needs -f FORMAT and one job directory");
		return mgr_opts_usage(&export_doc);
	}
	for (i = 0; i < NFORMATS; i++)
		if (!strcmp(formats[i].name, format))
			break;
	if (i == NFORMATS) {
		mgr_err("unknown export format '%s' (tapestry export --help lists them)",
			format);
		return 2;
	}
	if (mgr_export(format, argv[optind], output, &st) != 0)
		return 1;
	if (!output || strcmp(output, "-"))
		fprintf(stderr, "tapestry: %s: %" PRIu64 " events read, %" PRIu64
			" written to %s%s%s\n", format, st.events, st.written,
			output ? output : argv[optind], output ? "" : "/",
			output ? "" : formats[i].def);
	return 0;
}
