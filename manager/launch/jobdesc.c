/*
 * manager/launch/jobdesc.c - the XML job description: parse (libxml2), validate
 * against the RELAX NG schema, check what the schema cannot, build the
 * model of jobdesc.h, and run the plan stylesheets (libxslt).
 *
 * Messages are "FILE:LINE: text": parse and schema errors come from
 * libxml2's structured error handlers, semantic ones carry the line of the
 * element at fault (xmlGetLineNo).
 */
#include <errno.h>
#include <libgen.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/tree.h>
#include <libxslt/transform.h>
#include <libxslt/xsltInternals.h>
#include <libxslt/xsltutils.h>

#include "manager/launch/jobdesc.h"
#include "manager/mgr.h"
#include "manager/launch/spawn.h"
#include "proto/error.h"
#include "proto/num.h"

struct ctx {
	const char *path;
	char dir[PATH_MAX];	/* the description's directory */
	FILE *err;
	int nerr;
	int bad_slots;		/* a host's slots were refused: no sum to check */
	struct mgr_jobdesc *jd;
};

static void problem(struct ctx *x, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct ctx *x, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(x->err, "%s:%d: ", x->path, line);
	va_start(ap, fmt);
	vfprintf(x->err, fmt, ap);
	va_end(ap);
	fputc('\n', x->err);
	x->nerr++;
}

/* A value quoted in a message: at most 48 bytes, control characters as '?'
 * (a newline would start a line that looks like another problem). */
static const char *quoted(const char *v, char out[49])
{
	size_t i;

	for (i = 0; v[i] && i < 48; i++)
		out[i] = (unsigned char)v[i] < 0x20 ? '?' : v[i];
	out[i] = '\0';
	return out;
}

/* libxml2 structured error handler: parse and schema errors. */
static void xml_error(void *arg, const xmlError *e)
{
	struct ctx *x = arg;
	char msg[1024];
	size_t n;

	if (e->level == XML_ERR_WARNING)
		return;
	snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "error");
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (e->node && ((xmlNodePtr)e->node)->type == XML_ELEMENT_NODE) {
		xmlNodePtr node = e->node;
		char name[64];
		xmlChar *v = NULL;

		char q[49];

		/* RELAX NG says which attribute, not what was wrong with it */
		if (sscanf(msg, "Invalid attribute %63s for element", name) == 1)
			v = xmlGetProp(node, (const xmlChar *)name);
		problem(x, e->line ? e->line : (int)xmlGetLineNo(node),
			"element %s: %s%s%s%s", node->name, msg,
			v ? " (its value: \"" : "",
			v ? quoted((const char *)v, q) : "", v ? "\")" : "");
		xmlFree(v);
	} else
		problem(x, e->line, "%s", msg);
}

/* ---- small accessors ----------------------------------------------- */

static int is(xmlNodePtr n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

static xmlNodePtr child(xmlNodePtr n, const char *name)
{
	for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
		if (is(c, name))
			return c;
	return NULL;
}

/* Attribute as a malloc'd string (plain malloc, not xmlMalloc), or NULL. */
static char *attr(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	char *s;

	if (!v)
		return NULL;
	s = strdup((const char *)v);
	xmlFree(v);
	return s;
}

static int line_of(xmlNodePtr n)
{
	return (int)xmlGetLineNo(n);
}

/*
 * Integer attribute in [lo, max], or def when absent. The schema only says
 * nonNegativeInteger (its range errors would not say the range): a value that
 * is not a whole number in range is a problem at its line, and def is kept so
 * that checking goes on.
 */
static int attr_int(struct ctx *x, xmlNodePtr n, const char *name, int def,
		    long lo, long max)
{
	char *v = attr(n, name), q[49];
	size_t len;
	long l;

	if (!v)
		return def;
	len = strlen(v);
	while (len && strchr(" \t\n\r", v[len - 1]))
		v[--len] = '\0';	/* the schema's whitespace rule keeps these */
	if (proto_parse_long(v + strspn(v, " \t\n\r"), lo, max, &l)) {
		problem(x, line_of(n), "element %s: %s=\"%s\": want a whole "
			"number from %ld to %ld", (const char *)n->name, name,
			quoted(v, q), lo, max);
		l = def;
	}
	free(v);
	return (int)l;
}

/* path resolved against the description's directory, malloc'd. */
static char *resolve(struct ctx *x, const char *p)
{
	char *r;

	if (p[0] == '/')
		return strdup(p);
	if (asprintf(&r, "%s/%s", x->dir, p) < 0)
		return NULL;
	return r;
}

/* jd->exe_path: the executable as given when it holds a '/' (resolved
 * against the description's directory), else the first match in PATH,
 * else a bare name next to the description; NULL when none is found. */
static void find_executable(struct ctx *x)
{
	struct mgr_jobdesc *jd = x->jd;

	if (strchr(jd->executable, '/')) {
		jd->exe_path = resolve(x, jd->executable);
		return;
	}
	const char *path = getenv("PATH");
	char *dup = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;

	for (char *d = strtok_r(dup, ":", &save); d && !jd->exe_path;
	     d = strtok_r(NULL, ":", &save)) {
		char cand[PATH_MAX];

		snprintf(cand, sizeof(cand), "%s/%s", d, jd->executable);
		if (access(cand, X_OK) == 0)
			jd->exe_path = strdup(cand);
	}
	free(dup);
	/* a bare name in the description's directory */
	if (!jd->exe_path) {
		char *c = resolve(x, jd->executable);

		if (c && access(c, F_OK) == 0)
			jd->exe_path = c;
		else
			free(c);
	}
}

static int find_host(const struct mgr_jobdesc *jd, const char *name)
{
	for (int i = 0; i < jd->nhosts; i++)
		if (!strcmp(jd->host[i].name, name))
			return i;
	return -1;
}

static int find_collector(const struct mgr_jobdesc *jd, const char *name)
{
	for (int i = 0; i < jd->ncollectors; i++)
		if (!strcmp(jd->col[i].name, name))
			return i;
	return -1;
}

/* ---- sections ----------------------------------------------------------- */

static const struct mgr_jd_launcher builtin_local = {
	.name = (char *)"local", .type = MGR_LAUNCH_LOCAL,
};
/* A host of a Slurm allocation: a step of its own on that node, sharing
 * the allocation's resources with the others (--overlap) */
static const struct mgr_jd_launcher builtin_slurm = {
	.name = (char *)"slurm", .type = MGR_LAUNCH_TEMPLATE,
	.command = (char *)"exec srun --overlap --nodes=1 --ntasks=1 "
		   "--nodelist={host} --kill-on-bad-exit=1 {command}",
};
static const struct mgr_jd_launcher builtin_ssh = {
	.name = (char *)"ssh", .type = MGR_LAUNCH_SSH,
};

static void load_launchers(struct ctx *x, xmlNodePtr sec)
{
	struct mgr_jobdesc *jd = x->jd;

	for (xmlNodePtr n = sec ? sec->children : NULL; n; n = n->next) {
		if (!is(n, "launcher"))
			continue;
		if (jd->nlaunchers == MGR_JD_MAX_LAUNCHERS) {
			problem(x, line_of(n), "more than %d launchers",
				MGR_JD_MAX_LAUNCHERS);
			return;
		}
		struct mgr_jd_launcher *l = &jd->launcher[jd->nlaunchers];
		char *type = attr(n, "type");

		l->name = attr(n, "name");
		l->line = line_of(n);
		l->command = attr(n, "command");
		l->user = attr(n, "user");
		l->identity = attr(n, "identity");
		l->options = attr(n, "options");
		l->collector_path = attr(n, "collector-path");
		l->tapestry_path = attr(n, "tapestry-path");
		l->port = attr_int(x, n, "port", 0, 0, 65535);
		l->type = !type ? MGR_LAUNCH_LOCAL :
			  !strcmp(type, "ssh") ? MGR_LAUNCH_SSH :
			  !strcmp(type, "template") ? MGR_LAUNCH_TEMPLATE :
			  MGR_LAUNCH_LOCAL;
		free(type);
		jd->nlaunchers++;
		if (!l->name)
			continue;
		for (int i = 0; i < jd->nlaunchers - 1; i++)
			if (jd->launcher[i].name &&
			    !strcmp(jd->launcher[i].name, l->name))
				problem(x, l->line, "launcher '%s' is already "
					"defined on line %d", l->name,
					jd->launcher[i].line);
		if (l->type == MGR_LAUNCH_TEMPLATE &&
		    (!l->command || !strstr(l->command, "{command}")))
			problem(x, l->line, "launcher '%s': the template must "
				"contain {command}", l->name);
		if (l->identity) {
			char *p = resolve(x, l->identity);

			free(l->identity);
			l->identity = p;
		}
	}
}

static const struct mgr_jd_launcher *find_launcher(const struct mgr_jobdesc *jd,
						   const char *name)
{
	for (int i = 0; i < jd->nlaunchers; i++)
		if (jd->launcher[i].name && !strcmp(jd->launcher[i].name, name))
			return &jd->launcher[i];
	if (!strcmp(name, "local"))
		return &builtin_local;
	if (!strcmp(name, "ssh"))
		return &builtin_ssh;
	return NULL;
}

/* SLURM_TASKS_PER_NODE ("2(x3),1") into slots[], at most max; the count
 * of nodes it describes, or PROTO_E_FORMAT when it does not read. */
static int slurm_tasks(const char *s, int slots[], int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10), rep = 1;

		if (end == s || v < 0 || v > MGR_JD_MAX_SLOTS)
			return PROTO_E_FORMAT;
		s = end;
		if (!strncmp(s, "(x", 2)) {
			rep = strtol(s + 2, &end, 10);
			if (end == s + 2 || *end != ')' || rep < 1)
				return PROTO_E_FORMAT;
			s = end + 1;
		}
		while (rep-- > 0) {
			if (n == max)
				return PROTO_E_FORMAT;
			slots[n++] = (int)v;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return PROTO_E_FORMAT;
	}
	return n;
}

/* The numeric address of host name (the collectors listen on numbers), or
 * a copy of name when it does not resolve. malloc'd. */
static char *numeric(const char *name)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	char buf[INET6_ADDRSTRLEN];

	if (getaddrinfo(name, NULL, &hints, &res) || !res ||
	    getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof(buf), NULL, 0,
			NI_NUMERICHOST)) {
		if (res)
			freeaddrinfo(res);
		return strdup(name);
	}
	freeaddrinfo(res);
	return strdup(buf);
}

/* <hosts from="slurm"/>: the nodes of the allocation this runs in
 * (scontrol show hostnames SLURM_JOB_NODELIST) with their slots
 * (SLURM_TASKS_PER_NODE), each reached by an srun step. */
static void load_slurm_hosts(struct ctx *x, int line)
{
	struct mgr_jobdesc *jd = x->jd;
	const char *list = getenv("SLURM_JOB_NODELIST");
	const char *tasks = getenv("SLURM_TASKS_PER_NODE");
	static int slots[MGR_JD_MAX_HOSTS];
	char cmd[4096], q[2048] = "", name[256];
	int nslots;
	FILE *p;

	jd->from_slurm = 1;
	x->bad_slots = 1;	/* until the allocation is read: said here */
	if (!list || !*list || !tasks || !*tasks) {
		problem(x, line, "<hosts from=\"slurm\"/>: not inside a Slurm "
			"allocation (SLURM_JOB_NODELIST is not set): run tapestry "
			"under salloc or sbatch");
		return;
	}
	nslots = slurm_tasks(tasks, slots, MGR_JD_MAX_HOSTS);
	if (nslots < 0) {
		problem(x, line, "<hosts from=\"slurm\"/>: cannot read "
			"SLURM_TASKS_PER_NODE='%s'", tasks);
		return;
	}
	if (mgr_shell_quote(q, sizeof(q), list)) {
		problem(x, line, "<hosts from=\"slurm\"/>: SLURM_JOB_NODELIST "
			"is too long");
		return;
	}
	snprintf(cmd, sizeof(cmd), "scontrol show hostnames %s 2>&1", q);
	if (!(p = popen(cmd, "r"))) {
		problem(x, line, "<hosts from=\"slurm\"/>: cannot run scontrol");
		return;
	}
	while (fgets(name, sizeof(name), p)) {
		struct mgr_jd_host *h = &jd->host[jd->nhosts];

		name[strcspn(name, "\r\n")] = 0;
		if (!*name)
			continue;
		if (jd->nhosts == MGR_JD_MAX_HOSTS || jd->nhosts >= nslots ||
		    strchr(name, ' ')) {
			problem(x, line, "<hosts from=\"slurm\"/>: scontrol "
				"show hostnames '%s' said '%s' (%d nodes in "
				"SLURM_TASKS_PER_NODE='%s')", list, name, nslots,
				tasks);
			break;
		}
		h->name = strdup(name);
		h->address = numeric(name);
		h->site = strdup("slurm");
		h->slots = slots[jd->nhosts];
		h->line = line;
		h->node = -1;
		h->launcher = &builtin_slurm;
		jd->total_slots += h->slots;
		jd->nhosts++;
	}
	if (pclose(p) != 0 && !x->nerr)
		problem(x, line, "<hosts from=\"slurm\"/>: scontrol show "
			"hostnames '%s' failed", list);
	else if (!x->nerr && jd->nhosts != nslots)
		problem(x, line, "<hosts from=\"slurm\"/>: %d nodes in "
			"SLURM_JOB_NODELIST='%s' but %d in SLURM_TASKS_PER_NODE="
			"'%s'", jd->nhosts, list, nslots, tasks);
	else if (!x->nerr)
		x->bad_slots = 0;
}

/* No <collectors> with <hosts from="slurm"/>: a node collector on every
 * node, each directly under the manager's root receiver, all started in
 * one srun step (launch.c); jd->root names the first. */
static void slurm_collectors(struct ctx *x)
{
	struct mgr_jobdesc *jd = x->jd;

	for (int h = 0; h < jd->nhosts && h < MGR_JD_MAX_COLLECTORS; h++) {
		struct mgr_jd_collector *c = &jd->col[jd->ncollectors];
		char name[300];

		snprintf(name, sizeof(name), "node-%s", jd->host[h].name);
		c->name = strdup(name);
		c->host = h;
		c->parent = -1;
		c->depth = 0;
		c->line = jd->host[h].line;
		jd->ncollectors++;
	}
	jd->root = jd->ncollectors ? 0 : -1;
	jd->slurm_step = jd->ncollectors > 0;
}

static void load_hosts(struct ctx *x, xmlNodePtr sec)
{
	struct mgr_jobdesc *jd = x->jd;
	char *from = sec ? attr(sec, "from") : NULL;

	if (from) {
		if (!strcmp(from, "slurm"))
			load_slurm_hosts(x, line_of(sec));
		else
			problem(x, line_of(sec), "<hosts from=\"%s\"/>: only "
				"slurm is known", from);
		free(from);
		return;
	}
	for (xmlNodePtr n = sec ? sec->children : NULL; n; n = n->next) {
		if (!is(n, "host"))
			continue;
		if (jd->nhosts == MGR_JD_MAX_HOSTS) {
			problem(x, line_of(n), "more than %d hosts", MGR_JD_MAX_HOSTS);
			return;
		}
		struct mgr_jd_host *h = &jd->host[jd->nhosts];
		char *lname = attr(n, "launcher");

		h->name = attr(n, "name");
		h->address = attr(n, "address");
		h->site = attr(n, "site");
		h->subnet = attr(n, "subnet");
		int before = x->nerr;

		h->slots = attr_int(x, n, "slots", 0, 0, MGR_JD_MAX_SLOTS);
		x->bad_slots |= x->nerr != before;
		h->line = line_of(n);
		h->node = -1;
		if (!h->name)
			h->name = strdup("?");
		if (!h->address)
			h->address = strdup(h->name);
		if (!h->site)
			h->site = strdup("default");
		h->launcher = find_launcher(jd, lname ? lname : "local");
		if (!h->launcher) {
			problem(x, h->line, "host '%s': unknown launcher '%s' "
				"(define it in <launchers>, or use local or ssh)",
				h->name, lname);
			h->launcher = &builtin_local;	/* keep checking */
		}
		free(lname);
		int dup = find_host(jd, h->name);

		if (dup >= 0)
			problem(x, h->line, "host '%s' is already defined on line %d",
				h->name, jd->host[dup].line);
		jd->total_slots += h->slots;
		jd->nhosts++;
	}
}

/* One <collector> element n into jd->col[jd->ncollectors] (its parent's
 * name, malloc'd, into *parent). */
static void read_collector(struct ctx *x, xmlNodePtr n, char **parent)
{
	struct mgr_jobdesc *jd = x->jd;
	struct mgr_jd_collector *c = &jd->col[jd->ncollectors];
	char *host = attr(n, "host");

	c->name = attr(n, "name");
	if (!c->name)
		c->name = strdup("?");
	c->line = line_of(n);
	c->port = attr_int(x, n, "port", 0, 0, 65535);
	c->parent = -1;
	*parent = attr(n, "parent");
	c->host = host ? find_host(jd, host) : -1;
	if (c->host < 0)
		problem(x, c->line, "collector '%s': unknown host '%s' "
			"(not in <hosts>)", c->name, host ? host : "");
	free(host);
	int dup = find_collector(jd, c->name);

	if (dup >= 0)
		problem(x, c->line, "collector '%s' is already defined "
			"on line %d", c->name, jd->col[dup].line);
	for (xmlNodePtr o = n->children; o; o = o->next) {
		if (!is(o, "option"))
			continue;
		if (c->nopts == MGR_JD_MAX_OPTS) {
			problem(x, line_of(o), "more than %d options",
				MGR_JD_MAX_OPTS);
			break;
		}
		c->opt[c->nopts].name = attr(o, "name");
		c->opt[c->nopts].value = attr(o, "value");
		if (!c->opt[c->nopts].name || !c->opt[c->nopts].value) {
			free(c->opt[c->nopts].name);
			free(c->opt[c->nopts].value);
			continue;
		}
		c->nopts++;
	}
	jd->ncollectors++;
}

/* Each collector's depth; the first cycle met is a problem, named from its
 * first member. */
static void check_cycles(struct ctx *x)
{
	struct mgr_jobdesc *jd = x->jd;
	int cycle_said = 0;

	/* from each collector, the walk up must reach the root */
	for (int i = 0; i < jd->ncollectors; i++) {
		int at = i, steps = 0;

		while (jd->col[at].parent >= 0 && steps <= jd->ncollectors) {
			at = jd->col[at].parent;
			steps++;
		}
		jd->col[i].depth = steps;
		if (steps <= jd->ncollectors || cycle_said)
			continue;
		/* at is inside the cycle: name it from its first member */
		int first = at;

		for (int p = jd->col[at].parent; p != at; p = jd->col[p].parent)
			if (p < first)
				first = p;
		char names[512] = "";
		size_t l = 0;
		int p = first;

		do {
			snprintf(names + l, sizeof(names) - l, "%s -> ", jd->col[p].name);
			l = strlen(names);
			p = jd->col[p].parent;
		} while (p != first && l < sizeof(names) - 1);
		snprintf(names + l, sizeof(names) - l, "%s", jd->col[first].name);
		if (jd->col[first].parent != first)
			problem(x, jd->col[first].line, "cycle in the collector "
				"tree: %s", names);
		cycle_said = 1;
	}
}

static void load_collectors(struct ctx *x, xmlNodePtr sec)
{
	struct mgr_jobdesc *jd = x->jd;
	char *parents[MGR_JD_MAX_COLLECTORS] = {NULL};

	for (xmlNodePtr n = sec ? sec->children : NULL; n; n = n->next) {
		if (!is(n, "collector"))
			continue;
		if (jd->ncollectors == MGR_JD_MAX_COLLECTORS) {
			problem(x, line_of(n), "more than %d collectors",
				MGR_JD_MAX_COLLECTORS);
			break;
		}
		read_collector(x, n, &parents[jd->ncollectors]);
	}
	/* parents, by name, once every collector is known */
	for (int i = 0; i < jd->ncollectors; i++) {
		struct mgr_jd_collector *c = &jd->col[i];

		if (!parents[i])
			continue;
		c->parent = find_collector(jd, parents[i]);
		if (c->parent < 0)
			problem(x, c->line, "collector '%s': unknown parent '%s'",
				c->name, parents[i]);
		else if (c->parent == i)
			problem(x, c->line, "collector '%s' is its own parent "
				"(a cycle in the collector tree)", c->name);
	}
	/* exactly one root */
	int roots = 0;

	jd->root = -1;
	for (int i = 0; i < jd->ncollectors; i++) {
		if (parents[i])
			continue;
		if (roots++)
			problem(x, jd->col[i].line, "collector '%s' is a second "
				"root of the tree (the root is '%s', line %d): "
				"give it a parent", jd->col[i].name,
				jd->col[jd->root].name, jd->col[jd->root].line);
		else
			jd->root = i;
	}
	check_cycles(x);
	if (roots == 0 && jd->ncollectors > 0 && !x->nerr)
		problem(x, line_of(sec), "the collector tree has no root "
			"(every collector has a parent)");
	/* two collectors of one host on one fixed port */
	for (int i = 0; i < jd->ncollectors; i++)
		for (int k = 0; k < i; k++)
			if (jd->col[i].port && jd->col[i].port == jd->col[k].port &&
			    jd->col[i].host == jd->col[k].host)
				problem(x, jd->col[i].line, "collector '%s': port "
					"%d is already used by '%s' on the same host",
					jd->col[i].name, jd->col[i].port,
					jd->col[k].name);
	for (int i = 0; i < jd->ncollectors; i++)
		free(parents[i]);
}

/* Node collector of each host: the deepest collector on it (a leaf). */
static void assign_nodes(struct ctx *x)
{
	struct mgr_jobdesc *jd = x->jd;

	for (int i = 0; i < jd->ncollectors; i++) {
		int h = jd->col[i].host;

		if (h < 0)
			continue;
		if (jd->host[h].node < 0 ||
		    jd->col[i].depth > jd->col[jd->host[h].node].depth)
			jd->host[h].node = i;
	}
	for (int h = 0; h < jd->nhosts; h++)
		if (jd->host[h].slots > 0 && jd->host[h].node < 0)
			problem(x, jd->host[h].line, "host '%s' runs processes "
				"(slots=\"%d\") but no collector runs on it",
				jd->host[h].name, jd->host[h].slots);
}

static int any_remote(const struct mgr_jobdesc *jd)
{
	for (int h = 0; h < jd->nhosts; h++)
		if (jd->host[h].slots > 0 &&
		    jd->host[h].launcher->type == MGR_LAUNCH_SSH)
			return 1;
	return 0;
}

/* The program's argument list and environment must fit in one execve:
 * each string at most MAX_ARG_STRLEN (32 pages), all of them (with their
 * pointers, and the environment the launcher passes on) within
 * sysconf(_SC_ARG_MAX). Said here, before anything starts, rather than by
 * the launcher's "Argument list too long" after the collectors ran. */
#define JD_ARG_STRLEN (32 * 4096)
#define JD_ARG_SLACK (64u << 10)	/* mpirun's own words, TAPESTRY_* */

static void check_arg_max(struct ctx *x, int line)
{
	struct mgr_jobdesc *jd = x->jd;
	long max = sysconf(_SC_ARG_MAX);
	size_t total = JD_ARG_SLACK, envb = 0;

	for (char **e = environ; e && *e; e++)
		envb += strlen(*e) + 1 + sizeof(char *);
	total += envb + (jd->executable ? strlen(jd->executable) + 1 : 0);
	for (int i = 0; i < jd->nargs; i++) {
		size_t l = strlen(jd->arg[i]) + 1;

		if (l > JD_ARG_STRLEN) {
			problem(x, line, "application: argument %d is %zu bytes, "
				"over the %d one argument may have "
				"(MAX_ARG_STRLEN)", i + 1, l - 1, JD_ARG_STRLEN);
			return;
		}
		total += l + sizeof(char *);
	}
	for (int i = 0; i < jd->nenv; i++) {
		size_t l = (jd->env[i].name ? strlen(jd->env[i].name) : 0) +
			   (jd->env[i].value ? strlen(jd->env[i].value) : 0) + 2;

		if (l > JD_ARG_STRLEN) {
			problem(x, line, "application: environment variable %s "
				"is %zu bytes, over the %d one may have "
				"(MAX_ARG_STRLEN)", jd->env[i].name ?
				jd->env[i].name : "?", l - 1, JD_ARG_STRLEN);
			return;
		}
		total += l + sizeof(char *);
	}
	if (max > 0 && total > (size_t)max)
		problem(x, line, "application: its arguments and environment "
			"need %zu bytes (%zu of them this environment's), over "
			"the system's limit of %ld (ARG_MAX): nothing can start",
			total, envb, max);
}

static void load_application(struct ctx *x, xmlNodePtr n, int check_files)
{
	struct mgr_jobdesc *jd = x->jd;
	char *mpi = attr(n, "mpi"), *mode = attr(n, "mode"), *wd;
	int line = line_of(n);

	jd->executable = attr(n, "executable");
	/* -1: absent (the schema refuses it) or already reported */
	jd->processes = attr_int(x, n, "processes", -1, 1, MGR_JD_MAX_PROCESSES);
	jd->mpi = !mpi || !strcmp(mpi, "none") ? MGR_MPI_NONE :
		  !strcmp(mpi, "openmpi") ? MGR_MPI_OPENMPI : MGR_MPI_MPICH;
	jd->mode = !mode || !strcmp(mode, "regular") ? MGR_MODE_REGULAR :
		   !strcmp(mode, "folding") ? MGR_MODE_FOLDING : MGR_MODE_SCATTERING;
	free(mpi);
	free(mode);
	if ((wd = attr(n, "workdir"))) {
		jd->workdir = resolve(x, wd);
		free(wd);
	}
	for (xmlNodePtr a = n->children; a; a = a->next) {
		if (is(a, "argument")) {
			if (jd->nargs == MGR_JD_MAX_ARGS) {
				problem(x, line_of(a), "more than %d arguments",
					MGR_JD_MAX_ARGS);
				break;
			}
			xmlChar *t = xmlNodeGetContent(a);

			jd->arg[jd->nargs++] = strdup(t ? (const char *)t : "");
			xmlFree(t);
		} else if (is(a, "environment")) {
			if (jd->nenv == MGR_JD_MAX_ENV) {
				problem(x, line_of(a), "more than %d environment "
					"variables", MGR_JD_MAX_ENV);
				break;
			}
			jd->env[jd->nenv].name = attr(a, "name");
			jd->env[jd->nenv].value = attr(a, "value");
			jd->nenv++;
		}
	}

	check_arg_max(x, line);
	if (x->bad_slots)
		;		/* reported on the host's line */
	else if (jd->total_slots == 0)
		problem(x, line, "application: no host declares slots: give "
			"the hosts that run processes slots=\"N\"%s",
			jd->mode == MGR_MODE_FOLDING ?
			" (folding places several processes per slot, but "
			"needs slots to fold onto)" : "");
	else if (jd->from_slurm && jd->mode != MGR_MODE_FOLDING &&
		 jd->processes > jd->total_slots)
		problem(x, line, "application: %d processes but the Slurm "
			"allocation has %d slots (SLURM_TASKS_PER_NODE=%s): "
			"allocate at least %d tasks (salloc -n %d)", jd->processes,
			jd->total_slots, getenv("SLURM_TASKS_PER_NODE"),
			jd->processes, jd->processes);
	else if (jd->mode != MGR_MODE_FOLDING && jd->processes > jd->total_slots)
		problem(x, line, "application: %d processes but only %d slots "
			"declared: add slots or use mode=\"folding\"",
			jd->processes, jd->total_slots);
	if (jd->mode == MGR_MODE_SCATTERING) {
		int sites = 0;

		for (int h = 0; h < jd->nhosts; h++) {
			int seen = 0;

			if (jd->host[h].slots <= 0)
				continue;
			for (int k = 0; k < h; k++)
				if (jd->host[k].slots > 0 &&
				    !strcmp(jd->host[k].site, jd->host[h].site))
					seen = 1;
			sites += !seen;
		}
		if (sites < 2)
			problem(x, line, "application: mode=\"scattering\" spreads "
				"processes over several sites, but the hosts "
				"with slots are all in one site");
	}

	/* the executable, when this machine can check it */
	if (!jd->executable || !*jd->executable)
		return;
	find_executable(x);
	if (!check_files || any_remote(jd))
		return;
	struct stat sb;

	if (!jd->exe_path || stat(jd->exe_path, &sb) != 0)
		problem(x, line, "application: executable '%s' not found%s",
			jd->executable, strchr(jd->executable, '/') ? "" :
			" (in PATH or next to the description)");
	else if (!S_ISREG(sb.st_mode) || access(jd->exe_path, X_OK) != 0)
		problem(x, line, "application: '%s' is not an executable file",
			jd->exe_path);
}

static void load_sensors(struct ctx *x, xmlNodePtr sec)
{
	struct mgr_jobdesc *jd = x->jd;

	if (!sec) {
		jd->sensors = MGR_SENSOR_LIBC | MGR_SENSOR_MEM |
			      (jd->mpi != MGR_MPI_NONE ? MGR_SENSOR_MPI : 0);
		return;
	}
	jd->sensor_mode = attr(sec, "mode");
	for (xmlNodePtr n = sec->children; n; n = n->next) {
		char *name;

		if (!is(n, "sensor") || !(name = attr(n, "name")))
			continue;
		unsigned bit = !strcmp(name, "libc") ? MGR_SENSOR_LIBC :
			       !strcmp(name, "mpi") ? MGR_SENSOR_MPI : MGR_SENSOR_MEM;

		if (jd->sensors & bit)
			problem(x, line_of(n), "sensor '%s' is listed twice", name);
		if (bit == MGR_SENSOR_MPI && jd->mpi == MGR_MPI_NONE)
			problem(x, line_of(n), "sensor 'mpi' needs an MPI "
				"application (application mpi=\"openmpi\" or "
				"\"mpich\")");
		jd->sensors |= bit;
		free(name);
	}
}

static void load_outputs(struct ctx *x, xmlNodePtr sec)
{
	struct mgr_jobdesc *jd = x->jd;

	for (xmlNodePtr n = sec ? sec->children : NULL; n; n = n->next) {
		char *f;

		if (!is(n, "output") || !(f = attr(n, "format")))
			continue;
		for (int i = 0; i < jd->noutputs; i++)
			if (!strcmp(jd->output[i], f))
				problem(x, line_of(n), "output '%s' is asked "
					"twice", f);
		if (jd->noutputs == MGR_JD_MAX_OUTPUTS) {
			problem(x, line_of(n), "more than %d outputs",
				MGR_JD_MAX_OUTPUTS);
			free(f);
			return;
		}
		jd->output[jd->noutputs++] = f;
	}
}

static void load_security(struct ctx *x, xmlNodePtr sec, int check_files)
{
	char *s = sec ? attr(sec, "secret-file") : NULL;

	if (!s)
		return;
	x->jd->secret_file = resolve(x, s);
	if (check_files && access(x->jd->secret_file, R_OK) != 0)
		problem(x, line_of(sec), "security: secret file '%s' cannot be "
			"read (%s)", x->jd->secret_file, strerror(errno));
	free(s);
}

/* ---- load ---------------------------------------------------------------- */

static int validate(struct ctx *x, xmlDocPtr doc, const char *schema_path)
{
	xmlRelaxNGParserCtxtPtr pc = NULL;
	xmlRelaxNGPtr schema = NULL;
	xmlRelaxNGValidCtxtPtr vc = NULL;
	int rc = -1;

	if (!(pc = xmlRelaxNGNewParserCtxt(schema_path)) ||
	    !(schema = xmlRelaxNGParse(pc))) {
		fprintf(x->err, "tapestry: cannot read the schema %s\n", schema_path);
		x->nerr++;
		goto out;
	}
	if (!(vc = xmlRelaxNGNewValidCtxt(schema)))
		goto out;
	xmlRelaxNGSetValidStructuredErrors(vc, (xmlStructuredErrorFunc)xml_error, x);
	int before = x->nerr;

	rc = xmlRelaxNGValidateDoc(vc, doc);
	if (rc != 0 && x->nerr == before)
		problem(x, 1, "does not match the job description schema");
out:
	xmlRelaxNGFreeValidCtxt(vc);
	xmlRelaxNGFree(schema);
	xmlRelaxNGFreeParserCtxt(pc);
	return rc == 0 ? 0 : -1;
}

/* ---- hostile descriptions (docs/SECURITY.md, "Job descriptions") ---- */

/* The largest description read, and how far entities may make its text
 * grow: a description has no use for more, and every value read through
 * libxml2 (attributes, RELAX NG, the plan stylesheets) expands entity
 * references again, so 100 KB used 10,000 times cost gigabytes. */
#define JD_MAX_BYTES (1u << 20)
#define JD_MAX_EXPANDED (4u << 20)

struct ent_walk {
	struct ctx *x;
	xmlDocPtr doc;
	uint64_t expanded;	/* bytes the references stand for */
	int refused;
};

static void walk_refs(struct ent_walk *w, xmlNodePtr n, int depth);

/* One entity reference: an external one is refused wherever it is (in an
 * attribute libxml2 refuses it itself; in text it would become nothing);
 * an internal one adds its replacement text, its own references counted
 * too (at most 8 deep). */
static void on_ref(struct ent_walk *w, xmlNodePtr n, int depth)
{
	xmlEntityPtr e = xmlGetDocEntity(w->doc, n->name);
	char q[49];

	if (w->refused)
		return;
	if (!e || e->etype == XML_EXTERNAL_GENERAL_PARSED_ENTITY ||
	    e->etype == XML_EXTERNAL_GENERAL_UNPARSED_ENTITY) {
		problem(w->x, line_of(n), "entity &%s; is %s: entities from "
			"other files are refused", quoted((const char *)n->name, q),
			e ? "external" : "not declared");
		w->refused = 1;
		return;
	}
	if (e->etype == XML_INTERNAL_PREDEFINED_ENTITY)
		return;
	w->expanded += e->length;
	if (depth >= 8) {
		problem(w->x, line_of(n), "entity &%s; nests entities more than "
			"8 deep", quoted((const char *)n->name, q));
		w->refused = 1;
		return;
	}
	if (e->content && strchr((const char *)e->content, '&')) {
		/* its own references, parsed once from its text */
		xmlNodePtr list = NULL;

		if (xmlParseBalancedChunkMemory(w->doc, NULL, NULL, 0,
						e->content, &list) == 0) {
			for (xmlNodePtr c = list; c && !w->refused; c = c->next)
				walk_refs(w, c, depth + 1);
		}
		xmlFreeNodeList(list);
	}
	if (w->expanded > JD_MAX_EXPANDED && !w->refused) {
		problem(w->x, line_of(n), "entities expand the description to "
			"more than %u bytes (entity &%s;): refused",
			JD_MAX_EXPANDED, quoted((const char *)n->name, q));
		w->refused = 1;
	}
}

static void walk_refs(struct ent_walk *w, xmlNodePtr n, int depth)
{
	for (; n && !w->refused; n = n->next) {
		if (n->type == XML_ENTITY_REF_NODE) {
			on_ref(w, n, depth);
			continue;
		}
		if (n->type == XML_ELEMENT_NODE)
			for (xmlAttrPtr a = n->properties; a && !w->refused;
			     a = a->next)
				walk_refs(w, a->children, depth);
		if (n->type == XML_ELEMENT_NODE || n->type == XML_DOCUMENT_NODE)
			walk_refs(w, n->children, depth);
	}
}

/* Before anything reads values out of doc: references to external
 * entities refused, the text entities stand for bounded. 0 or -1. */
static int check_entities(struct ctx *x, xmlDocPtr doc)
{
	struct ent_walk w = {.x = x, .doc = doc};

	walk_refs(&w, doc->children, 0);
	return w.refused ? -1 : 0;
}

/* The file itself: a regular file of at most JD_MAX_BYTES. 0 or -1. */
static int check_size(const char *path, FILE *err)
{
	struct stat sb;

	if (stat(path, &sb) != 0) {
		fprintf(err, "%s: cannot read: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > JD_MAX_BYTES) {
		fprintf(err, "%s: %s: a job description is a file of at most %u "
			"bytes\n", path, S_ISREG(sb.st_mode) ? "too large" :
			"not a regular file", JD_MAX_BYTES);
		return -1;
	}
	return 0;
}

/* Parser options: no network, no entity substitution while parsing (the
 * references are checked first, check_entities), and libxml2's own
 * limits kept (no XML_PARSE_HUGE). */
#define JD_PARSE_OPTS (XML_PARSE_NONET)

struct mgr_jobdesc *mgr_jobdesc_load(const char *path, const char *schema_path,
				     int check_files, FILE *err)
{
	struct ctx x = {.path = path, .err = err};
	xmlParserCtxtPtr pctx = NULL;
	xmlDocPtr doc = NULL;
	xmlNodePtr root, n;
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	if (!realpath(dirname(tmp), x.dir))
		snprintf(x.dir, sizeof(x.dir), ".");
	if (!(x.jd = calloc(1, sizeof(*x.jd))))
		return NULL;
	x.jd->path = strdup(path);
	if (access(path, R_OK) != 0) {
		fprintf(err, "%s: cannot read: %s\n", path, strerror(errno));
		goto fail;
	}
	if (check_size(path, err))
		goto fail;
	xmlSetStructuredErrorFunc(&x, (xmlStructuredErrorFunc)xml_error);
	if (!(pctx = xmlNewParserCtxt()))
		goto fail_parse;
	doc = xmlCtxtReadFile(pctx, path, NULL, JD_PARSE_OPTS);
	if (!doc || x.nerr) {
		if (!x.nerr)
			problem(&x, 1, "not a well-formed XML document");
		goto fail_parse;
	}
	if (check_entities(&x, doc))
		goto fail_parse;
	if (validate(&x, doc, schema_path))
		goto fail_parse;
	xmlSetStructuredErrorFunc(NULL, NULL);

	root = xmlDocGetRootElement(doc);
	x.jd->name = attr(root, "name");
	if (!x.jd->name)
		x.jd->name = strdup("job");
	load_launchers(&x, child(root, "launchers"));
	load_hosts(&x, child(root, "hosts"));
	if ((n = child(root, "manager"))) {
		x.jd->manager_address = attr(n, "address");
		x.jd->manager_port = attr_int(&x, n, "port", 0, 0, 65535);
	}
	if (!x.jd->manager_address && x.jd->from_slurm) {
		char self[256] = "";	/* the allocation's nodes reach us here */

		gethostname(self, sizeof(self) - 1);
		x.jd->manager_address = numeric(*self ? self : "127.0.0.1");
	}
	if (!x.jd->manager_address)
		x.jd->manager_address = strdup("127.0.0.1");
	if ((n = child(root, "collectors")))
		load_collectors(&x, n);
	else if (x.jd->from_slurm)
		slurm_collectors(&x);
	else
		problem(&x, line_of(root), "no <collectors>: give the collector "
			"tree (only <hosts from=\"slurm\"/> makes one per node)");
	if (!x.nerr)
		assign_nodes(&x);
	load_application(&x, child(root, "application"), check_files);
	load_sensors(&x, child(root, "sensors"));
	load_outputs(&x, child(root, "outputs"));
	load_security(&x, child(root, "security"), check_files);
	if (x.nerr)
		goto fail_parse;
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(pctx);
	return x.jd;
fail_parse:
	xmlSetStructuredErrorFunc(NULL, NULL);
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(pctx);
fail:
	mgr_jobdesc_free(x.jd);
	return NULL;
}

void mgr_jobdesc_free(struct mgr_jobdesc *jd)
{
	if (!jd)
		return;
	for (int i = 0; i < jd->nhosts; i++) {
		free(jd->host[i].name);
		free(jd->host[i].address);
		free(jd->host[i].site);
		free(jd->host[i].subnet);
	}
	for (int i = 0; i < jd->ncollectors; i++) {
		free(jd->col[i].name);
		for (int k = 0; k < jd->col[i].nopts; k++) {
			free(jd->col[i].opt[k].name);
			free(jd->col[i].opt[k].value);
		}
	}
	for (int i = 0; i < jd->nlaunchers; i++) {
		struct mgr_jd_launcher *l = &jd->launcher[i];

		free(l->name);
		free(l->command);
		free(l->user);
		free(l->identity);
		free(l->options);
		free(l->collector_path);
		free(l->tapestry_path);
	}
	for (int i = 0; i < jd->nargs; i++)
		free(jd->arg[i]);
	for (int i = 0; i < jd->nenv; i++) {
		free(jd->env[i].name);
		free(jd->env[i].value);
	}
	for (int i = 0; i < jd->noutputs; i++)
		free(jd->output[i]);
	free(jd->path);
	free(jd->name);
	free(jd->executable);
	free(jd->exe_path);
	free(jd->workdir);
	free(jd->sensor_mode);
	free(jd->secret_file);
	free(jd->manager_address);
	free(jd);
}

const char *mgr_jd_mpi_name(enum mgr_jd_mpi m)
{
	return m == MGR_MPI_OPENMPI ? "openmpi" : m == MGR_MPI_MPICH ? "mpich" : "none";
}

const char *mgr_jd_mode_name(enum mgr_jd_mode m)
{
	return m == MGR_MODE_FOLDING ? "folding" :
	       m == MGR_MODE_SCATTERING ? "scattering" : "regular";
}

int mgr_jd_rank_host(const struct mgr_jobdesc *jd, int r)
{
	int k;

	if (jd->total_slots <= 0)
		return 0;
	k = r % jd->total_slots;
	for (int h = 0; h < jd->nhosts; h++) {
		if (k < jd->host[h].slots)
			return h;
		k -= jd->host[h].slots;
	}
	return 0;
}

/* ---- plan (XSLT) ----------------------------------------------------------- */

static const struct {
	const char *sheet, *out;
} plan_sheets[] = {
	{"xsl/job-openmpi-hostfile.xsl", "hostfile.openmpi"},
	{"xsl/job-mpich-machinefile.xsl", "machinefile.mpich"},
	{"xsl/job-simgrid-platform.xsl", "platform.xml"},
	{"xsl/job-simgrid-hostfile.xsl", "hostfile.simgrid"},
	{"xsl/job-simgrid-deployment.xsl", "deployment.xml"},
	{"xsl/job-collectors.xsl", "collectors.plan"},
};

/* <hosts from="slurm"/> in doc replaced by the hosts jd found in the
 * allocation, and the collectors made for them, so that the stylesheets
 * see an ordinary description. */
static void expand_slurm(xmlDocPtr doc, const struct mgr_jobdesc *jd)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), hosts = child(root, "hosts");
	xmlNodePtr cols = child(root, "collectors");
	char num[16];

	if (!hosts)
		return;
	xmlUnsetProp(hosts, (const xmlChar *)"from");
	for (int h = 0; h < jd->nhosts; h++) {
		xmlNodePtr n = xmlNewChild(hosts, NULL, (const xmlChar *)"host", NULL);

		snprintf(num, sizeof(num), "%d", jd->host[h].slots);
		xmlNewProp(n, (const xmlChar *)"name", (const xmlChar *)jd->host[h].name);
		/* the MPI's host files name the allocation's nodes as Slurm
		 * does (an address is not "in the allocation" for mpirun) */
		xmlNewProp(n, (const xmlChar *)"address",
			   (const xmlChar *)jd->host[h].name);
		xmlNewProp(n, (const xmlChar *)"slots", (const xmlChar *)num);
		xmlNewProp(n, (const xmlChar *)"site", (const xmlChar *)jd->host[h].site);
	}
	if (cols)
		return;
	cols = xmlNewNode(NULL, (const xmlChar *)"collectors");
	xmlAddNextSibling(hosts, cols);
	for (int i = 0; i < jd->ncollectors; i++) {
		const struct mgr_jd_collector *c = &jd->col[i];
		xmlNodePtr n = xmlNewChild(cols, NULL, (const xmlChar *)"collector", NULL);

		xmlNewProp(n, (const xmlChar *)"name", (const xmlChar *)c->name);
		xmlNewProp(n, (const xmlChar *)"host",
			   (const xmlChar *)jd->host[c->host].name);
		if (c->parent >= 0)
			xmlNewProp(n, (const xmlChar *)"parent",
				   (const xmlChar *)jd->col[c->parent].name);
	}
}

int mgr_jobdesc_plan(const char *path, const char *dir,
		     const struct mgr_jobdesc *jd)
{
	xmlDocPtr doc = NULL;
	int rc = PROTO_E_FORMAT;	/* check_entities said why */

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return mgr_fail(PROTO_E_IO, "cannot create %s: %s", dir,
				strerror(errno));
	if (check_size(path, stderr))
		return PROTO_E_TOOBIG;
	doc = xmlReadFile(path, NULL, JD_PARSE_OPTS);
	if (!doc)
		return mgr_fail(PROTO_E_FORMAT, "%s: cannot parse", path);
	{
		struct ctx x = {.path = path, .err = stderr};

		if (check_entities(&x, doc))
			goto out;
	}
	if (jd && jd->from_slurm)
		expand_slurm(doc, jd);
	for (size_t i = 0; i < sizeof(plan_sheets) / sizeof(plan_sheets[0]); i++) {
		char *sp = mgr_find_data(plan_sheets[i].sheet), out[PATH_MAX], tmp[PATH_MAX + 8];
		xsltStylesheetPtr st = sp ? xsltParseStylesheetFile((const xmlChar *)sp) : NULL;
		xmlDocPtr res = NULL;
		int wr = -1;

		if (!st) {
			rc = mgr_fail(PROTO_E_NOTFOUND, "cannot load the stylesheet "
				      "%s", sp ? sp : plan_sheets[i].sheet);
			free(sp);
			goto out;
		}
		res = xsltApplyStylesheet(st, doc, NULL);
		snprintf(out, sizeof(out), "%s/%s", dir, plan_sheets[i].out);
		snprintf(tmp, sizeof(tmp), "%s.tmp", out);
		if (res)
			wr = xsltSaveResultToFilename(tmp, res, st, 0);
		if (wr < 0 || rename(tmp, out) < 0) {
			mgr_fail(PROTO_E_IO, "%s: stylesheet %s failed", path, sp);
			unlink(tmp);
		}
		xmlFreeDoc(res);
		xsltFreeStylesheet(st);
		free(sp);
		if (wr < 0) {
			rc = PROTO_E_IO;
			goto out;
		}
	}
	rc = 0;
out:
	xmlFreeDoc(doc);
	return rc;
}
