/*
 * tests/manager/test_jobdesc.c - manager/launch/jobdesc.c: every example job
 * description validates and gives the model it describes; every bad
 * description of tests/manager/launch_bad/ is refused with its
 * line-numbered message; rank placement; the plan stylesheets run.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "manager/launch/jobdesc.h"

#define SCHEMA TEST_SRCDIR "/share/jobdesc.rng"
#define EXAMPLES TEST_SRCDIR "/deploy/examples/"
#define BAD TEST_SRCDIR "/tests/manager/launch_bad/"

/* Load path; the messages go to *msgs (malloc'd, caller frees). */
static struct mgr_jobdesc *load(const char *path, int check, char **msgs)
{
	size_t len = 0;
	FILE *err = open_memstream(msgs, &len);
	struct mgr_jobdesc *jd;

	cr_assert_not_null(err);
	jd = mgr_jobdesc_load(path, SCHEMA, check, err);
	fclose(err);
	return jd;
}

/* deploy/examples/name, which must load (its messages shown if not). */
static struct mgr_jobdesc *example(const char *name, int check)
{
	char path[512], *msgs = NULL;
	struct mgr_jobdesc *jd;

	snprintf(path, sizeof(path), EXAMPLES "%s", name);
	jd = load(path, check, &msgs);
	cr_assert_not_null(jd, "%s: %s", name, msgs);
	free(msgs);
	return jd;
}

Test(jobdesc, examples_validate)
{
	static const char *ex[] = {"ring.xml", "two-sites.xml", "folding.xml", "io.xml"};

	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		char path[512], *msgs = NULL;
		struct mgr_jobdesc *jd;

		snprintf(path, sizeof(path), EXAMPLES "%s", ex[i]);
		jd = load(path, 0, &msgs);
		cr_expect_not_null(jd, "%s: %s", ex[i], msgs);
		cr_expect_str_empty(msgs, "%s printed: %s", ex[i], msgs);
		mgr_jobdesc_free(jd);
		free(msgs);
	}
}

Test(jobdesc, ring_model)
{
	struct mgr_jobdesc *jd = example("ring.xml", 0);

	cr_expect_str_eq(jd->name, "ring");
	cr_expect_eq(jd->nhosts, 1);
	cr_expect_str_eq(jd->host[0].address, "127.0.0.1");
	cr_expect_eq(jd->host[0].slots, 4);
	cr_expect_eq(jd->ncollectors, 2);
	cr_expect_str_eq(jd->col[jd->root].name, "gateway");
	cr_expect_str_eq(jd->col[jd->host[0].node].name, "node");
	cr_expect_eq(jd->col[1].parent, 0);
	cr_expect_eq(jd->col[1].depth, 1);
	cr_expect_eq(jd->col[1].nopts, 1);
	cr_expect_str_eq(jd->col[1].opt[0].name, "flush-ms");
	cr_expect_eq(jd->processes, 4);
	cr_expect_eq(jd->mpi, MGR_MPI_OPENMPI);
	cr_expect_eq(jd->mode, MGR_MODE_REGULAR);
	cr_expect_eq(jd->sensors, MGR_SENSOR_LIBC | MGR_SENSOR_MPI);
	cr_expect_eq(jd->noutputs, 1);
	cr_expect_str_eq(jd->output[0], "csv");
	cr_expect_eq(jd->host[0].launcher->type, MGR_LAUNCH_LOCAL);
	cr_expect_str_eq(jd->manager_address, "127.0.0.1");
	mgr_jobdesc_free(jd);
}

Test(jobdesc, two_sites_tree)
{
	/* the executable is remote (ssh hosts): not checked here */
	struct mgr_jobdesc *jd = example("two-sites.xml", 1);

	cr_expect_eq(jd->ncollectors, 7);
	cr_expect_str_eq(jd->col[jd->root].name, "top");
	for (int h = 0; h < jd->nhosts; h++) {
		if (jd->host[h].slots == 0)
			continue;
		int n = jd->host[h].node;

		cr_expect_eq(jd->col[n].host, h);
		cr_expect_eq(jd->col[n].depth, 2, "%s", jd->col[n].name);
	}
	cr_expect_eq(jd->host[1].launcher->type, MGR_LAUNCH_SSH);
	cr_expect_eq(jd->mode, MGR_MODE_SCATTERING);
	cr_expect_eq(jd->sensors, MGR_SENSOR_LIBC | MGR_SENSOR_MPI | MGR_SENSOR_MEM);
	mgr_jobdesc_free(jd);
}

Test(jobdesc, rank_placement_folds)
{
	struct mgr_jobdesc *jd = example("two-sites.xml", 0);
	/* hosts with slots: a1 a2 b1 b2 (2 each) at indexes 2 3 5 6 */
	static const int want[] = {2, 2, 3, 3, 5, 5, 6, 6, 2, 2, 3};

	for (int r = 0; r < (int)(sizeof(want) / sizeof(want[0])); r++)
		cr_expect_eq(mgr_jd_rank_host(jd, r), want[r], "rank %d", r);
	mgr_jobdesc_free(jd);
}

/* Every kind of bad description: file, line, part of the message. */
static const struct {
	const char *file;
	int line;
	const char *msg;
} bad[] = {
	{"not-well-formed.xml", 6, "Opening and ending tag mismatch: host"},
	{"unknown-element.xml", 7, "element frobnicate"},
	{"missing-executable.xml", 6, "executable './no-such-program' not found"},
	{"not-executable.xml", 6, "is not an executable file"},
	{"unknown-host.xml", 7, "collector 'd': unknown host 'nowhere'"},
	{"cycle.xml", 7, "cycle in the collector tree: a -> b -> a"},
	{"zero-processes.xml", 6, "processes=\"0\": want a whole number from 1 to 65536"},
	{"folding-no-slots.xml", 6, "no host declares slots"},
	{"two-roots.xml", 7, "collector 'b' is a second root of the tree"},
	{"duplicate-host.xml", 6, "host 'h' is already defined on line 5"},
	{"bad-mpi.xml", 6, "Invalid attribute mpi for element application"},
	{"unknown-parent.xml", 7, "unknown parent 'ghost'"},
	{"too-few-slots.xml", 6, "8 processes but only 2 slots"},
	{"duplicate-collector.xml", 7, "collector 'c' is already defined on line 6"},
	{"mpi-sensor-without-mpi.xml", 8, "sensor 'mpi' needs an MPI application"},
	{"unknown-launcher.xml", 4, "unknown launcher 'pdsh'"},
	{"missing-attribute.xml", 6, "element application"},
	{"host-without-collector.xml", 6, "host 'k' runs processes"},
	{"template-without-command.xml", 6, "must contain {command}"},
	{"huge-slots.xml", 6, "slots=\"2147483647\": want a whole number from 0 to 65536"},
	{"bad-slots-value.xml", 4, "Invalid attribute slots for element host (its value: \"x2\")"},
	{"huge-processes.xml", 6, "processes=\"99999999999\": want a whole number from 1 to 65536"},
};

Test(jobdesc, bad_descriptions)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[512], want[600], *msgs = NULL;
		struct mgr_jobdesc *jd;

		snprintf(path, sizeof(path), BAD "%s", bad[i].file);
		jd = load(path, 1, &msgs);
		cr_expect_null(jd, "%s was accepted", bad[i].file);
		snprintf(want, sizeof(want), "%s:%d: ", path, bad[i].line);
		cr_expect(strstr(msgs, want) != NULL, "%s: no message at line %d: %s",
			  bad[i].file, bad[i].line, msgs);
		cr_expect(strstr(msgs, bad[i].msg) != NULL, "%s: wanted '%s', got: %s",
			  bad[i].file, bad[i].msg, msgs);
		mgr_jobdesc_free(jd);
		free(msgs);
	}
}

/* Write text to a temporary description and load it (checks off). */
static struct mgr_jobdesc *load_text(const char *text, char **msgs)
{
	char path[] = "/tmp/test_jobdesc.XXXXXX";
	int fd = mkstemp(path);
	struct mgr_jobdesc *jd;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	jd = load(path, 0, msgs);
	unlink(path);
	return jd;
}

/*
 * Counts at and past their bounds. Two hosts of 2^31 - 1 slots each once
 * overflowed the slot sum (the fuzzer found it); a refused count must not
 * bring a second, misleading message about the sum.
 */
#define COUNTS_FMT \
	"<job name=\"b\"><hosts><host name=\"h\" slots=\"%s\"/>" \
	"<host name=\"k\" slots=\"%s\"/></hosts><collectors>" \
	"<collector name=\"c\" host=\"h\"/>" \
	"<collector name=\"d\" host=\"k\" parent=\"c\"/></collectors>" \
	"<application executable=\"/bin/true\" processes=\"%s\"/></job>"

Test(jobdesc, count_bounds)
{
	static const struct {
		const char *a, *b, *procs;
		int total;		/* -1: refused */
		const char *msg;
	} c[] = {
		{"65536", "65536", "65536", 131072, NULL},
		{" 4 ", "+4", "8", 8, NULL},
		{"65537", "1", "1", -1, "slots=\"65537\": want a whole number"},
		{"2147483647", "2147483647", "8", -1, "slots=\"2147483647\""},
		{"99999999999999999999", "1", "1", -1, "want a whole number"},
		{"1", "1", "65537", -1, "processes=\"65537\": want a whole number"},
		{"1", "1", "0", -1, "processes=\"0\": want a whole number from 1"},
		/* a newline in a quoted value must not start a line */
		{"x&#10;t.xml:1: forged", "1", "1", -1, "(its value: \"x?t.xml:1: forged\")"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char text[1024], *msgs = NULL;
		struct mgr_jobdesc *jd;

		snprintf(text, sizeof(text), COUNTS_FMT, c[i].a, c[i].b, c[i].procs);
		jd = load_text(text, &msgs);
		if (c[i].total >= 0) {
			cr_expect_not_null(jd, "case %zu: %s", i, msgs);
			if (jd)
				cr_expect_eq(jd->total_slots, c[i].total, "case %zu", i);
		} else {
			cr_expect_null(jd, "case %zu was accepted", i);
			cr_expect(strstr(msgs, c[i].msg) != NULL,
				  "case %zu: wanted '%s', got: %s", i, c[i].msg, msgs);
			cr_expect(strstr(msgs, "slots declared") == NULL &&
				  strstr(msgs, "no host declares slots") == NULL,
				  "case %zu: a message about the sum: %s", i, msgs);
		}
		mgr_jobdesc_free(jd);
		free(msgs);
	}
}

Test(jobdesc, missing_file_and_schema)
{
	char *msgs = NULL;
	struct mgr_jobdesc *jd = load(BAD "no-such-file.xml", 1, &msgs);

	cr_expect_null(jd);
	cr_expect(strstr(msgs, "cannot read") != NULL, "%s", msgs);
	free(msgs);
	size_t len = 0;
	FILE *err = open_memstream(&msgs, &len);

	jd = mgr_jobdesc_load(EXAMPLES "ring.xml", "/nonexistent/schema.rng", 0, err);
	fclose(err);
	cr_expect_null(jd);
	cr_expect(strstr(msgs, "schema") != NULL, "%s", msgs);
	free(msgs);
}

Test(jobdesc, free_null)
{
	mgr_jobdesc_free(NULL);
}

Test(jobdesc, names)
{
	cr_expect_str_eq(mgr_jd_mpi_name(MGR_MPI_MPICH), "mpich");
	cr_expect_str_eq(mgr_jd_mpi_name(MGR_MPI_NONE), "none");
	cr_expect_str_eq(mgr_jd_mode_name(MGR_MODE_FOLDING), "folding");
}

/* docs/SECURITY.md, "Job descriptions": entities and sizes. */
#define ENT_HEAD "<?xml version=\"1.0\"?>\n<!DOCTYPE job [\n%s\n]>\n" \
	"<job name=\"e\"><hosts><host name=\"h\" slots=\"4\"/></hosts>" \
	"<collectors><collector name=\"c\" host=\"h\"/></collectors>" \
	"<application executable=\"%s\" processes=\"1\">%s</application></job>\n"

static char *ent_doc(const char *decl, const char *exe, const char *body)
{
	size_t n = strlen(ENT_HEAD) + strlen(decl) + strlen(exe) + strlen(body) + 1;
	char *t = malloc(n);

	cr_assert_not_null(t);
	snprintf(t, n, ENT_HEAD, decl, exe, body);
	return t;
}

/* The description text t (freed) is refused, saying want (NULL: anything);
 * what names the case. */
static void refused(char *t, const char *what, const char *want)
{
	char *msgs = NULL;
	struct mgr_jobdesc *jd = load_text(t, &msgs);

	cr_expect_null(jd, "%s was accepted", what);
	if (want)
		cr_expect(strstr(msgs, want) != NULL, "%s: %s", what, msgs);
	mgr_jobdesc_free(jd);
	free(msgs);
	free(t);
}

Test(jobdesc, entities_bounded_external_refused)
{
	/* 100 KB entity used 10,000 times: 130 KB of text, 1 GB expanded */
	size_t big = 100000, uses = 10000;
	char *decl = malloc(big + 64), *body = malloc(uses * 3 + 64), *t, *msgs = NULL;
	struct mgr_jobdesc *jd;
	struct rusage ru;

	cr_assert(decl && body);
	strcpy(decl, "<!ENTITY b \"");
	memset(decl + strlen(decl), 'x', big);
	strcpy(decl + strlen("<!ENTITY b \"") + big, "\">");
	strcpy(body, "<argument>");
	for (size_t i = 0; i < uses; i++)
		memcpy(body + 10 + 3 * i, "&b;", 3);
	strcpy(body + 10 + 3 * uses, "</argument>");
	t = ent_doc(decl, "/bin/true", body);
	cr_expect_gt(strlen(t), 130000);
	jd = load_text(t, &msgs);
	cr_expect_null(jd, "the quadratic description was accepted");
	cr_expect(strstr(msgs, "entities expand the description") != NULL, "%s", msgs);
	getrusage(RUSAGE_SELF, &ru);
	cr_expect_lt(ru.ru_maxrss, 50 * 1024, "peak RSS %ld kB", ru.ru_maxrss);
	mgr_jobdesc_free(jd);
	free(msgs);
	free(t);

	/* an external entity in element text: refused, not read as nothing */
	refused(ent_doc("<!ENTITY e SYSTEM \"file:///etc/hostname\">", "/bin/true",
			"<argument>&e;</argument>"),
		"an external entity in text", "entity &e; is external");
	/* ... and in an attribute (libxml2 refuses it) */
	refused(ent_doc("<!ENTITY e SYSTEM \"file:///etc/hostname\">", "&e;", ""),
		"an external entity in an attribute", NULL);

	/* a small internal entity is fine */
	msgs = NULL;
	t = ent_doc("<!ENTITY t \"/bin/true\"><!ENTITY a \"-v\">", "&t;",
		    "<argument>&a;</argument>");
	jd = load_text(t, &msgs);
	cr_expect_not_null(jd, "a small entity was refused: %s", msgs);
	if (jd) {
		cr_expect_str_eq(jd->executable, "/bin/true");
		cr_expect_str_eq(jd->arg[0], "-v");
	}
	mgr_jobdesc_free(jd);
	free(msgs);
	free(t);

	/* over 1 MiB: refused before parsing */
	memset(decl, ' ', big);
	decl[big] = 0;
	{
		size_t n = 11 * big;
		char *pad = malloc(n + 1);

		cr_assert_not_null(pad);
		memset(pad, ' ', n);
		pad[n] = 0;
		t = ent_doc("", "/bin/true", pad);
		free(pad);
	}
	refused(t, "a description over 1 MiB", "too large");
	free(decl);
	free(body);
}

/* Argument lists that could not be exec'd are said before anything starts. */
Test(jobdesc, arg_max_checked)
{
	size_t big = 100000;
	char *decl = malloc(big + 64), *body = malloc(64 * 40);
	long max = sysconf(_SC_ARG_MAX);
	size_t nargs = (size_t)max / big + 2;

	cr_assert(decl && body);
	if (max <= 0 || nargs > 40)
		cr_skip_test("ARG_MAX %ld too large to reach", max);
	strcpy(decl, "<!ENTITY b \"");
	memset(decl + 12, 'y', big);
	strcpy(decl + 12 + big, "\">");
	/* one argument of 200 KB: over MAX_ARG_STRLEN */
	refused(ent_doc(decl, "/bin/true", "<argument>&b;&b;</argument>"),
		"an argument of 200 KB", "argument 1 is 200000 bytes");
	/* ARG_MAX / 100 KB + 2 arguments of 100 KB: over ARG_MAX */
	body[0] = 0;
	for (size_t i = 0; i < nargs; i++)
		strcat(body, "<argument>&b;</argument>");
	refused(ent_doc(decl, "/bin/true", body), "arguments over ARG_MAX",
		"(ARG_MAX): nothing can start");
	free(decl);
	free(body);
}
