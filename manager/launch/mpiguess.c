/*
 * manager/launch/mpiguess.c - is a program an MPI launcher or an MPI
 * program, and which MPI (the sensor to preload)?
 *
 * In order, each step noted in the guess's `tried` for the message when
 * none answers:
 *   1. the program found on PATH, and every link on the way to the real
 *      file (Debian: mpirun -> /etc/alternatives/mpirun ->
 *      /usr/bin/mpirun.openmpi -> orterun): each name and directory is
 *      matched against the launchers' names (orterun and prterun are Open
 *      MPI's, mpiexec.hydra MPICH's, NAME.openmpi / NAME.mpich say it);
 *   2. the libraries it links (ldd: libmpi.so.40 is Open MPI's, libmpich
 *      and libmpi.so.12 MPICH's);
 *   3. a launcher whose flavour is still unknown: its `--version`, then
 *      the libraries of the program it launches (the first argument that
 *      is an executable file, as for srun).
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

int mgr_mpi_guess(const char *prog, char *const args[], struct mgr_mpi_guess *g)
{
	char file[PATH_MAX], app[PATH_MAX];
	int links = 0;

	memset(g, 0, sizeof(*g));
	if (on_path(prog, file, sizeof(file)) < 0) {
		note(g, "%s not found", prog);
		return PROTO_E_NOTFOUND;
	}
	walk_links(file, sizeof(file), g);
	note(g, "%s: %s", file, g->launcher ?
	     "a launcher's name, no flavour in it or its links" :
	     "not a launcher's name");
	if (g->flavour)
		return 0;
	g->flavour = by_libs(file, &links);
	g->links_mpi = links;
	if (g->flavour)
		return 0;
	note(g, "ldd %s: %s", file, links ?
	     "links an MPI library of unknown flavour" : "no MPI library");
	if (!g->launcher)
		return 0;
	if ((g->flavour = by_version(file)))
		return 0;
	note(g, "%s --version: names neither Open MPI nor MPICH", file);
	for (int i = 0; args && args[i]; i++) {
		struct stat st;

		if (args[i][0] == '-' || on_path(args[i], app, sizeof(app)) < 0 ||
		    stat(app, &st) || !S_ISREG(st.st_mode))
			continue;
		links = 0;
		if ((g->flavour = by_libs(app, &links)))
			return 0;
		note(g, "ldd %s: %s", app, links ?
		     "an MPI library of unknown flavour" : "no MPI library");
		break;
	}
	return 0;
}
