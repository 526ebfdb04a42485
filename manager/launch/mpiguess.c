/*
 * manager/launch/mpiguess.c - is a program an MPI launcher or an MPI
 * program, and which MPI (the sensor to preload)?
 *
 * The sensor must be the MPI of the processes it lands in: the MPICH
 * sensor in a program linked with Open MPI (mpirun.mpich launching
 * Debian's lmp, each rank an Open MPI singleton) stands down
 * (sensor/mpi_flavour.c) and traces libc only. So the program decides,
 * the launcher only when the program says nothing. Each step is noted in
 * the guess's `tried` for the message when none answers:
 *   1. the program found on PATH, and every link on the way to the real
 *      file (Debian: mpirun -> /etc/alternatives/mpirun ->
 *      /usr/bin/mpirun.openmpi -> orterun): each name and directory is
 *      matched against the launchers' names (orterun and prterun are Open
 *      MPI's, mpiexec.hydra MPICH's, NAME.openmpi / NAME.mpich say it):
 *      the launcher's flavour;
 *   2. the libraries it needs (ldd: its DT_NEEDED entries and theirs;
 *      libmpi.so.40 is Open MPI's, libmpich and libmpi.so.12 MPICH's);
 *   3. a launcher: the program it launches, the first of its arguments
 *      (or of their blank-separated words: `sh -c "lmp -in x"`) that is an
 *      executable file needing an MPI library; a script is followed into
 *      its interpreter's arguments and its own words (`#!/bin/sh` ... `exec
 *      lmp "$@"`), 4 levels at most; `env`, shells and other launchers
 *      are passed over as arguments are;
 *   4. a launcher whose flavour is still unknown: its `--version`.
 * The program's flavour wins (flavour); a launcher of another one is
 * noted (launcher_flavour, app_flavour differ) for the one line run says.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/spawn.h"
#include "proto/error.h"

static const char *const launchers[] = {
	"mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra", "srun",
	NULL,
};

/* Append a note to g->tried ("; " between notes). */
static void __attribute__((format(printf, 2, 3)))
note(struct mgr_mpi_guess *g, const char *fmt, ...)
{
	size_t n = strlen(g->tried);
	va_list ap;

	if (n && n + 2 < sizeof(g->tried)) {
		strcpy(g->tried + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	if (n < sizeof(g->tried))
		vsnprintf(g->tried + n, sizeof(g->tried) - n, fmt, ap);
	va_end(ap);
}

/* The flavour a launcher's file name says, or NULL; *launcher set when
 * the name is a launcher's. */
static const char *by_name(const char *base, int *launcher)
{
	size_t n;

	for (int i = 0; launchers[i]; i++) {
		n = strlen(launchers[i]);
		if (!strncmp(base, launchers[i], n) &&
		    (base[n] == 0 || base[n] == '.' || base[n] == '-'))
			*launcher = 1;
	}
	if (!strcmp(base, "orterun") || !strcmp(base, "prterun") ||
	    strstr(base, ".openmpi") || strstr(base, "-openmpi"))
		return "openmpi";
	if (!strcmp(base, "mpiexec.hydra") || strstr(base, ".mpich") ||
	    strstr(base, "-mpich") || !strcmp(base, "hydra_pmi_proxy"))
		return "mpich";
	return NULL;
}

/* The flavour a directory says (/usr/lib/x86_64-linux-gnu/openmpi/bin,
 * /opt/mpich/bin), or NULL. */
static const char *by_dir(const char *path)
{
	if (strstr(path, "/openmpi") || strstr(path, "/ompi"))
		return "openmpi";
	if (strstr(path, "/mpich"))
		return "mpich";
	return NULL;
}

/* Resolve prog like the shell does (PATH when it has no '/') into out: 0,
 * or PROTO_E_NOTFOUND. */
static int on_path(const char *prog, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char cand[PATH_MAX];

	if (strchr(prog, '/')) {
		snprintf(out, cap, "%s", prog);
		return access(out, X_OK) == 0 ? 0 : PROTO_E_NOTFOUND;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)(n ? n : 1),
			 n ? path : ".", prog);
		if (access(cand, X_OK) == 0) {
			snprintf(out, cap, "%s", cand);
			return 0;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return PROTO_E_NOTFOUND;
}

/* Follow file's links one at a time, classifying each name; leaves the
 * real file in file. */
static void walk_links(char *file, size_t cap, struct mgr_mpi_guess *g)
{
	char link[PATH_MAX], next[PATH_MAX * 2];

	for (int hop = 0; hop < 16; hop++) {
		const char *base = strrchr(file, '/');
		const char *f = by_name(base ? base + 1 : file, &g->launcher);
		ssize_t n;

		if (!g->flavour && f)
			g->flavour = f;
		n = readlink(file, link, sizeof(link) - 1);
		if (n <= 0)
			break;
		link[n] = 0;
		if (link[0] == '/' || !base)
			snprintf(next, sizeof(next), "%s", link);
		else
			snprintf(next, sizeof(next), "%.*s/%s",
				 (int)(base - file), file, link);
		if (strlen(next) >= cap)
			break;
		memcpy(file, next, strlen(next) + 1);
	}
	if (!g->flavour && g->launcher)
		g->flavour = by_dir(file);
}

/* The output of the shell command pre FILE post (file quoted), or NULL. */
static FILE *run_on(const char *pre, const char *file, const char *post)
{
	char cmd[PATH_MAX * 2 + 64], q[PATH_MAX * 2] = "";

	if (mgr_shell_quote(q, sizeof(q), file))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s%s%s", pre, q, post);
	return popen(cmd, "r");
}

/* The flavour of the MPI library file links (ldd), or NULL; *links set
 * when it links one. */
static const char *by_libs(const char *file, int *links)
{
	char line[1024];
	const char *f = NULL;
	FILE *p;

	if (!(p = run_on("ldd ", file, " 2>/dev/null")))
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		int mpi = strstr(line, "libmpi.so") || strstr(line, "libmpich");

		if (!mpi || f)
			continue;
		*links = 1;
		if (strstr(line, "libmpi.so.4") || strstr(line, "openmpi"))
			f = "openmpi";
		else if (strstr(line, "libmpich") || strstr(line, "libmpi.so.12") ||
			 strstr(line, "mpich"))
			f = "mpich";
	}
	pclose(p);
	return f;
}

/* The flavour a launcher's `--version` names, or NULL (5 s at most). */
static const char *by_version(const char *file)
{
	char line[1024];
	const char *f = NULL;
	FILE *p;

	if (!(p = run_on("timeout -k 1 5 ", file, " --version 2>&1 </dev/null")))
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		if (f)
			continue;
		if (strstr(line, "Open MPI") || strstr(line, "OpenRTE") ||
		    strstr(line, "open-mpi") || strstr(line, "PRRTE"))
			f = "openmpi";
		else if (strstr(line, "HYDRA") || strstr(line, "MPICH") ||
			 strstr(line, "Intel(R) MPI"))
			f = "mpich";
	}
	pclose(p);
	return f;
}

const char *mgr_mpi_version(const char *prog)
{
	char file[PATH_MAX];

	if (on_path(prog, file, sizeof(file)) < 0)
		return NULL;
	return by_version(file);
}

/* Words of a script (a file starting with "#!"), up to max: the words
 * of its lines but comments, split on blanks and shell punctuation, into
 * buf (cap bytes), NUL-separated; their count, 0 for a file that is not a
 * script. */
static int script_words(const char *file, char *buf, size_t cap, char **w,
			int max)
{
	FILE *f = fopen(file, "re");
	char line[1024];
	size_t used = 0;
	int n = 0, first = 1;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *save = NULL, *p;

		if (first && strncmp(line, "#!", 2))
			break;
		p = first ? line + 2 : line;
		first = 0;
		if (p[strspn(p, " \t")] == '#')
			continue;
		for (char *t = strtok_r(p, " \t\n\"';|&()`$={}<>", &save);
		     t && n < max; t = strtok_r(NULL, " \t\n\"';|&()`$={}<>", &save)) {
			size_t len = strlen(t) + 1;

			if (used + len > cap)
				break;
			w[n++] = memcpy(buf + used, t, len);
			used += len;
		}
	}
	fclose(f);
	return n;
}

/* The MPI program among words[0..n) (a launcher's arguments, a script's
 * words): the first executable file needing an MPI library, into
 * g->app and g->app_flavour (NULL: of unknown flavour); scripts followed
 * depth levels more. 1 found, 0 not. */
static int find_app(char *const *words, int n, int depth,
		    struct mgr_mpi_guess *g)
{
	char app[PATH_MAX];

	for (int i = 0; i < n && words[i]; i++) {
		char copy[PATH_MAX], *save = NULL;
		struct stat st;
		int links = 0;

		snprintf(copy, sizeof(copy), "%s", words[i]);
		for (char *t = strtok_r(copy, " \t", &save); t;
		     t = strtok_r(NULL, " \t", &save)) {
			char sbuf[16384], *sw[512];
			const char *f;
			int k;

			if (t[0] == '-' || on_path(t, app, sizeof(app)) < 0 ||
			    stat(app, &st) || !S_ISREG(st.st_mode))
				continue;
			if ((f = by_libs(app, &links)) || links) {
				snprintf(g->app, sizeof(g->app), "%s", app);
				g->app_flavour = f;
				return 1;
			}
			k = depth > 0 ? script_words(app, sbuf, sizeof(sbuf), sw,
						     512) : 0;
			if (k && find_app(sw, k, depth - 1, g))
				return 1;
		}
	}
	return 0;
}

int mgr_mpi_guess(const char *prog, char *const args[], struct mgr_mpi_guess *g)
{
	char file[PATH_MAX];
	int links = 0, nargs = 0;

	memset(g, 0, sizeof(*g));
	if (on_path(prog, file, sizeof(file)) < 0) {
		note(g, "%s not found", prog);
		return PROTO_E_NOTFOUND;
	}
	walk_links(file, sizeof(file), g);
	g->launcher_flavour = g->flavour;
	g->flavour = NULL;
	note(g, "%s: %s", file, !g->launcher ? "not a launcher's name" :
	     g->launcher_flavour ? "a launcher's name" :
	     "a launcher's name, no flavour in it or its links");
	g->flavour = by_libs(file, &links);
	g->links_mpi = links;
	if (g->flavour || links) {
		snprintf(g->app, sizeof(g->app), "%s", file);
		g->app_flavour = g->flavour;
	}
	if (g->flavour)
		return 0;
	note(g, "ldd %s: %s", file, links ?
	     "links an MPI library of unknown flavour" : "no MPI library");
	if (!g->launcher) {
		char sbuf[16384], *sw[512];
		int k = script_words(file, sbuf, sizeof(sbuf), sw, 512);

		/* a script: the MPI program it runs */
		if (k && find_app(sw, k, 3, g)) {
			g->links_mpi = 1;
			if ((g->flavour = g->app_flavour))
				return 0;
		}
		return 0;
	}
	while (args && args[nargs])
		nargs++;
	if (find_app(args, nargs, 4, g)) {
		if ((g->flavour = g->app_flavour))
			return 0;
		note(g, "ldd %s: an MPI library of unknown flavour", g->app);
	} else {
		note(g, "no argument of %s is a program linking an MPI library",
		     file);
	}
	if ((g->flavour = g->launcher_flavour))
		return 0;
	if ((g->flavour = g->launcher_flavour = by_version(file)))
		return 0;
	note(g, "%s --version: names neither Open MPI nor MPICH", file);
	return 0;
}
