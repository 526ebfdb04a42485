/*
 * manager/serve/descform.c - the launch form: the fields of a job
 * description the page lets one edit (process count, program arguments,
 * hosts and their slots, sensors) read as JSON, and an edited copy saved
 * as a new description of --descriptions (never over the original) for
 * `tapestry plan` and `tapestry launch` to take as any other.
 *
 * The form edits a description's tree (libxml2) and writes it back: what
 * the form does not show (collectors, options, environment, outputs,
 * comments) is kept as written. A description with a DOCTYPE is not edited
 * here (its entities would be expanded or lost): the page says so. Every
 * value is checked here with a message naming its field, before `tapestry
 * plan` checks the whole (docs/modules/manager-serve.md, "The launch
 * form").
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "manager/serve/serve.h"

#define FORM_DESC_MAX (1 << 20)		/* as tapestry plan */
#define FORM_ARGS_MAX 128		/* MGR_JD_MAX_ARGS */
#define FORM_HOSTS_MAX 256		/* MGR_JD_MAX_HOSTS */
#define FORM_COUNT_MAX 65536		/* processes, slots per host */
#define FORM_ADDR_MAX 255
#define FORM_EDITS_MAX 1000		/* BASE-edit-N.xml tried */

static const char *const sensor_names[] = {"libc", "mpi", "mem"};

/* An answer being made: the HTTP status, the field at fault ("" for
 * none) and the message. */
struct form_err {
	int code;
	char field[16];
	char msg[1024];
};

static int fail(struct form_err *e, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct form_err *e, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	snprintf(e->field, sizeof(e->field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void send_err(struct evhttp_request *req, const struct form_err *e)
{
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"error\":");
	srv_json_str(b, e->msg);
	evbuffer_add_printf(b, ",\"field\":");
	srv_json_str(b, e->field[0] ? e->field : NULL);
	evbuffer_add_printf(b, ",\"status\":%d}\n", e->code);
	srv_reply(req, e->code, "application/json", b);
	evbuffer_free(b);
}

static int is_el(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNode *child(xmlNode *parent, const char *name)
{
	for (xmlNode *n = parent ? parent->children : NULL; n; n = n->next)
		if (is_el(n, name))
			return n;
	return NULL;
}

/* The attribute k of n (a copy to xmlFree), or NULL. */
static char *prop(xmlNode *n, const char *k)
{
	return (char *)xmlGetProp(n, (const xmlChar *)k);
}

/* A whole number from 0 to FORM_COUNT_MAX in v: 0, or -1. */
static int count(const char *v, long *out)
{
	char *end;
	long x;

	if (!v || !*v || *v < '0' || *v > '9' || strlen(v) > 6)
		return -1;
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || x > FORM_COUNT_MAX)
		return -1;
	*out = x;
	return 0;
}

/* The description name of --descriptions, parsed (the form's rules: at most
 * 1 MiB, a regular file, well-formed, no DOCTYPE, a <job> root): the
 * document, or NULL with e set. */
static xmlDoc *load(const struct srv *s, const char *name, struct form_err *e)
{
	int dfd = open(s->descs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -1 : srv_open_regular(dfd, name);
	char *buf = NULL;
	ssize_t got = -1;
	xmlDoc *doc = NULL;

	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		fail(e, errno == EINVAL || errno == ELOOP ? 403 : 404, "", "cannot read %s: %s",
		     name, errno == EINVAL ? "not a regular file" : errno == ELOOP ?
		     "a symbolic link" : strerror(errno));
		return NULL;
	}
	if ((buf = malloc(FORM_DESC_MAX + 1)))
		got = read(fd, buf, FORM_DESC_MAX + 1);
	close(fd);
	if (got < 0 || got > FORM_DESC_MAX) {
		fail(e, got < 0 ? 500 : 400, "xml", "%s: %s", name, got < 0 ?
		     "cannot read it" : "over 1 MiB");
		goto out;
	}
	xmlResetLastError();
	doc = xmlReadMemory(buf, (int)got, name, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
			    XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *x = xmlGetLastError();
		char m[600] = "not well-formed";

		if (x && x->message) {
			snprintf(m, sizeof(m), "%s", x->message);
			m[strcspn(m, "\n")] = '\0';
		}
		fail(e, 400, "xml", "%s:%d: not well-formed XML: %s", name, x ? x->line : 0, m);
		goto out;
	}
	if (doc->intSubset || doc->extSubset) {
		fail(e, 400, "xml", "%s has a DOCTYPE: the form does not edit a description "
		     "with entities (edit the file)", name);
	} else if (!is_el(xmlDocGetRootElement(doc), "job") ||
		   !child(xmlDocGetRootElement(doc), "application")) {
		fail(e, 400, "xml", "%s is not a job description (a <job> with an "
		     "<application>)", name);
	} else {
		free(buf);
		return doc;
	}
	xmlFreeDoc(doc);
	doc = NULL;
out:
	free(buf);
	return NULL;
}

/* ---- GET .../form ---------------------------------------------------------------- */

static void json_attr(struct evbuffer *b, const char *k, xmlNode *n, const char *a)
{
	char *v = prop(n, a);

	evbuffer_add_printf(b, ",\"%s\":", k);
	srv_json_str(b, v);
	xmlFree(v);
}

static void form_hosts(struct evbuffer *b, xmlNode *job)
{
	xmlNode *hosts = child(job, "hosts");
	char *from = hosts ? prop(hosts, "from") : NULL;
	int n = 0;

	evbuffer_add_printf(b, ",\"hosts_from\":");
	srv_json_str(b, from);
	xmlFree(from);
	evbuffer_add_printf(b, ",\"hosts\":[");
	for (xmlNode *h = hosts ? hosts->children : NULL; h; h = h->next) {
		if (!is_el(h, "host"))
			continue;
		char *name = prop(h, "name"), *slots = prop(h, "slots");

		evbuffer_add_printf(b, "%s{\"name\":", n++ ? "," : "");
		srv_json_str(b, name);
		json_attr(b, "address", h, "address");
		evbuffer_add_printf(b, ",\"slots\":%s,\"collector\":", slots ? slots : "0");
		/* a host with slots needs a collector: the form adds one to a new host */
		int has = 0;

		for (xmlNode *c = child(child(job, "collectors"), "collector"); c && !has;
		     c = c->next) {
			char *on = is_el(c, "collector") ? prop(c, "host") : NULL;

			has = on && name && !strcmp(on, name);
			xmlFree(on);
		}
		evbuffer_add_printf(b, "%s}", has ? "true" : "false");
		xmlFree(name);
		xmlFree(slots);
	}
	evbuffer_add_printf(b, "]");
}

/* GET /api/descriptions/NAME.xml/form: the fields the form edits. */
void srv_desc_form(struct srv *s, struct evhttp_request *req, const char *name)
{
	struct form_err e = {0};
	xmlDoc *doc = load(s, name, &e);
	char why[512];

	if (!doc) {
		send_err(req, &e);
		return;
	}
	xmlNode *job = xmlDocGetRootElement(doc), *app = child(job, "application");
	xmlNode *sensors = child(job, "sensors");
	struct evbuffer *b = evbuffer_new();
	int n = 0;

	evbuffer_add_printf(b, "{\"name\":");
	srv_json_str(b, name);
	json_attr(b, "job", job, "name");
	json_attr(b, "executable", app, "executable");
	json_attr(b, "mpi", app, "mpi");
	json_attr(b, "mode", app, "mode");
	json_attr(b, "processes", app, "processes");
	evbuffer_add_printf(b, ",\"arguments\":[");
	for (xmlNode *a = app->children; a; a = a->next)
		if (is_el(a, "argument")) {
			xmlChar *t = xmlNodeGetContent(a);

			evbuffer_add_printf(b, "%s", n++ ? "," : "");
			srv_json_str(b, t ? (const char *)t : "");
			xmlFree(t);
		}
	evbuffer_add_printf(b, "]");
	form_hosts(b, job);
	/* no <sensors>: tapestry launch's default, libc and mem, and mpi for an
	 * MPI program (docs/JOBDESC.md) */
	evbuffer_add_printf(b, ",\"sensors\":[");
	if (sensors) {
		n = 0;
		for (xmlNode *x = sensors->children; x; x = x->next) {
			char *v = is_el(x, "sensor") ? prop(x, "name") : NULL;

			if (v) {
				evbuffer_add_printf(b, "%s", n++ ? "," : "");
				srv_json_str(b, v);
			}
			xmlFree(v);
		}
	} else {
		char *mpi = prop(app, "mpi");

		evbuffer_add_printf(b, "\"libc\",\"mem\"%s", mpi && strcmp(mpi, "none") ?
				    ",\"mpi\"" : "");
		xmlFree(mpi);
	}
	int trusted = s->authed && !srv_desc_trusted(s, name, why, sizeof(why));

	evbuffer_add_printf(b, "],\"editable\":%s,\"why\":", trusted ? "true" : "false");
	srv_json_str(b, trusted ? NULL : !s->authed ? "only the owner edits (this server runs "
		     "with --no-token)" : why);
	evbuffer_add_printf(b, "}\n");
	xmlFreeDoc(doc);
	srv_reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* ---- POST .../edit ---------------------------------------------------------------- */

/* 0 when every byte of v is printable text XML can hold (no control
 * character but tab, valid UTF-8). */
static int text_ok(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return -1;
	return xmlCheckUTF8((const xmlChar *)v) ? 0 : -1;
}

/* 0 when address is one the collectors can listen on and sensors reach:
 * a numeric address, or a name this machine resolves (getaddrinfo, in
 * the server's loop: a slow resolver holds the page meanwhile). */
static int address_ok(const char *a, struct form_err *e)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
	struct addrinfo *res = NULL;
	size_t n = strlen(a);
	int rc;

	/* a leading '-' would be an option to ssh, which takes it as destination */
	if (!n || n > FORM_ADDR_MAX || a[0] == '-' || strspn(a, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:_-") != n)
		return fail(e, 400, "host", "host address '%.300s': want a name or address "
			    "(letters, digits, '.', ':', '_', '-'; not starting with '-')", a);
	if (!getaddrinfo(a, NULL, &hints, &res)) {
		freeaddrinfo(res);
		return 0;
	}
	hints.ai_flags = 0;
	hints.ai_family = AF_INET;	/* as the description's loader resolves it */
	if ((rc = getaddrinfo(a, NULL, &hints, &res)) != 0)
		return fail(e, 400, "host", "unknown host address '%s': %s", a, gai_strerror(rc));
	freeaddrinfo(res);
	return 0;
}

static int name_ok(const char *v)
{
	size_t n = strlen(v);

	return n >= 1 && n <= 64 && v[0] != '.' && v[0] != '-' &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static xmlNode *host_named(xmlNode *hosts, const char *name)
{
	for (xmlNode *h = hosts ? hosts->children : NULL; h; h = h->next) {
		char *v = is_el(h, "host") ? prop(h, "name") : NULL;
		int same = v && !strcmp(v, name);

		xmlFree(v);
		if (same)
			return h;
	}
	return NULL;
}

static int blank(const xmlNode *n)
{
	return n && n->type == XML_TEXT_NODE && xmlIsBlankNode((xmlNode *)n);
}

/* n appended to parent's elements, indented as the last of them (before
 * the blank that closes parent, after a copy of the blank before the
 * last element): the copy reads as the description was written. */
static void add_child(xmlNode *parent, xmlNode *n)
{
	xmlNode *last = parent->last, *el = last ? last->prev : NULL;

	if (!blank(last) || !el) {
		xmlAddChild(parent, n);
		return;
	}
	xmlAddPrevSibling(last, n);
	if (blank(el->prev))	/* n's prev is an element: the text is not merged */
		xmlAddPrevSibling(n, xmlNewDocText(parent->doc, el->prev->content));
}

/* A node collector for the new host name, under the root collector (the
 * one without a parent): the description needs one on a host with slots. */
static void add_collector(xmlNode *job, const char *host)
{
	xmlNode *cols = child(job, "collectors"), *root = NULL;
	char cname[80];

	for (xmlNode *c = cols ? cols->children : NULL; c && !root; c = c->next) {
		char *p = is_el(c, "collector") ? prop(c, "parent") : NULL;

		if (is_el(c, "collector") && !p)
			root = c;
		xmlFree(p);
	}
	if (!root)
		return;	/* tapestry plan says what is missing */
	char *rname = prop(root, "name");

	snprintf(cname, sizeof(cname), "node-%s", host);
	xmlNode *c = xmlNewDocNode(job->doc, NULL, (const xmlChar *)"collector", NULL);

	add_child(cols, c);

	xmlNewProp(c, (const xmlChar *)"name", (const xmlChar *)cname);
	xmlNewProp(c, (const xmlChar *)"host", (const xmlChar *)host);
	xmlNewProp(c, (const xmlChar *)"parent", (const xmlChar *)rname);
	xmlFree(rname);
}

/* host=NAME,ADDRESS,SLOTS: an existing host's address (when given) and
 * slots set; a new one added with its address and a node collector. */
static int edit_host(xmlNode *job, const char *v, const char *desc, struct form_err *e)
{
	char buf[400], *name = buf, *addr, *slots;
	xmlNode *hosts = child(job, "hosts"), *h;
	long n;

	if (strlen(v) < sizeof(buf))
		snprintf(buf, sizeof(buf), "%s", v);
	if (strlen(v) >= sizeof(buf) || !(addr = strchr(buf, ',')) ||
	    !(slots = strchr(addr + 1, ',')))
		return fail(e, 400, "host", "a host is NAME,ADDRESS,SLOTS, not '%.300s'", v);
	*addr++ = '\0';
	*slots++ = '\0';
	if (!name_ok(name))
		return fail(e, 400, "host", "host name '%.100s': want 1 to 64 letters, digits, "
			    "'_', '.', '-'", name);
	if (count(slots, &n))
		return fail(e, 400, "host", "host %s: slots '%.100s': want a whole number from "
			    "0 to %d", name, slots, FORM_COUNT_MAX);
	if (!hosts || !child(hosts, "host"))
		return fail(e, 400, "host", "%s takes its hosts from Slurm: no host to edit",
			    desc);
	h = host_named(hosts, name);
	if (!h && !*addr)
		return fail(e, 400, "host", "unknown host '%s': not a host of %s (give its "
			    "address to add it)", name, desc);
	if (*addr && address_ok(addr, e))
		return -1;
	if (!h) {
		h = xmlNewDocNode(job->doc, NULL, (const xmlChar *)"host", NULL);
		add_child(hosts, h);
		xmlNewProp(h, (const xmlChar *)"name", (const xmlChar *)name);
		if (n > 0)
			add_collector(job, name);
	}
	if (*addr)
		xmlSetProp(h, (const xmlChar *)"address", (const xmlChar *)addr);
	xmlSetProp(h, (const xmlChar *)"slots", (const xmlChar *)slots);
	return 0;
}

/* The arguments of the form replace the application's, before its
 * environment (the schema's order), each on a line indented as the first
 * one was (or as what follows them). */
static int edit_args(xmlNode *app, const struct evkeyvalq *kv, struct form_err *e)
{
	const struct evkeyval *p;
	xmlChar *ws = NULL;
	xmlNode *anchor = NULL;
	int n = 0;

	TAILQ_FOREACH(p, kv, next)
		if (!strcmp(p->key, "arg") && (++n > FORM_ARGS_MAX || text_ok(p->value)))
			return fail(e, 400, "arguments", n > FORM_ARGS_MAX ? "at most %d "
				    "arguments" : "argument %d holds a control character or "
				    "bytes that are not UTF-8", n > FORM_ARGS_MAX ? FORM_ARGS_MAX : n);
	for (xmlNode *a = app->children, *nx; a; a = nx) {
		nx = a->next;
		if (!is_el(a, "argument"))
			continue;
		if (blank(a->prev)) {
			xmlNode *b = a->prev;

			if (!ws)
				ws = xmlStrdup(b->content);
			xmlUnlinkNode(b);
			xmlFreeNode(b);
		}
		xmlUnlinkNode(a);
		xmlFreeNode(a);
	}
	anchor = child(app, "environment");
	if (anchor && blank(anchor->prev))
		anchor = anchor->prev;
	else if (!anchor && blank(app->last))
		anchor = app->last;
	if (!ws && blank(anchor))
		ws = xmlStrdup(anchor->content);
	TAILQ_FOREACH(p, kv, next) {
		if (strcmp(p->key, "arg"))
			continue;
		xmlNode *a = xmlNewDocNode(app->doc, NULL, (const xmlChar *)"argument", NULL);
		xmlNode *t = ws ? xmlNewDocText(app->doc, ws) : NULL;

		xmlNodeAddContent(a, (const xmlChar *)p->value);	/* escaped on output */
		if (anchor)
			xmlAddPrevSibling(anchor, a);
		else
			xmlAddChild(app, a);
		if (t)	/* before an element, or first: not merged with a text */
			xmlAddPrevSibling(a, t);
	}
	xmlFree(ws);
	return 0;
}

static int edit_sensors(xmlNode *job, xmlNode *app, const struct evkeyvalq *kv,
			struct form_err *e)
{
	const struct evkeyval *p;
	unsigned want = 0;

	TAILQ_FOREACH(p, kv, next) {
		size_t i;

		if (strcmp(p->key, "sensor"))
			continue;
		for (i = 0; i < 3 && strcmp(p->value, sensor_names[i]); i++)
			;
		if (i == 3)
			return fail(e, 400, "sensors", "no sensor '%.100s' (libc, mpi, mem)",
				    p->value);
		want |= 1u << i;
	}
	if (!want)
		return fail(e, 400, "sensors", "choose at least one sensor");
	xmlNode *sensors = child(job, "sensors");

	if (!sensors) {
		sensors = xmlNewDocNode(job->doc, NULL, (const xmlChar *)"sensors", NULL);
		xmlAddNextSibling(app, sensors);
		if (blank(app->prev))
			xmlAddPrevSibling(sensors, xmlNewDocText(job->doc, app->prev->content));
	}
	for (xmlNode *x = sensors->children, *nx; x; x = nx) {
		nx = x->next;
		xmlUnlinkNode(x);
		xmlFreeNode(x);
	}
	for (size_t i = 0; i < 3; i++)
		if (want & (1u << i))
			xmlNewProp(xmlNewChild(sensors, NULL, (const xmlChar *)"sensor", NULL),
				   (const xmlChar *)"name", (const xmlChar *)sensor_names[i]);
	return 0;
}

/* The form's fields (kv) applied to doc (description desc). 0, or -1 with e. */
static int apply(xmlDoc *doc, const struct evkeyvalq *kv, const char *desc,
		 struct form_err *e)
{
	xmlNode *job = xmlDocGetRootElement(doc), *app = child(job, "application");
	const char *v;
	const struct evkeyval *p;
	long n;

	if ((v = evhttp_find_header(kv, "processes"))) {
		if (count(v, &n) || n < 1)
			return fail(e, 400, "processes", "processes '%.100s': want a whole "
				    "number from 1 to %d", v, FORM_COUNT_MAX);
		xmlSetProp(app, (const xmlChar *)"processes", (const xmlChar *)v);
	}
	int hosts = 0;

	TAILQ_FOREACH(p, kv, next)
		if (!strcmp(p->key, "host") && (++hosts > FORM_HOSTS_MAX ||
						edit_host(job, p->value, desc, e)))
			return hosts > FORM_HOSTS_MAX ? fail(e, 400, "host", "at most %d hosts",
							     FORM_HOSTS_MAX) : -1;
	if (evhttp_find_header(kv, "arguments") && edit_args(app, kv, e))
		return -1;
	if (evhttp_find_header(kv, "sensors") && edit_sensors(job, app, kv, e))
		return -1;
	return 0;
}

/* The name of the copy: ?as= when given (checked), else BASE-edit-N.xml,
 * the first N free (BASE without a former -edit-N). */
static int new_name(const struct srv *s, const char *from, const struct evkeyvalq *kv,
		    char *out, size_t cap, struct form_err *e)
{
	const char *as = evhttp_find_header(kv, "as");
	size_t base = strlen(from) - 4, n = strlen(from);
	struct stat st;
	char p[4400];

	if (as && *as) {
		n = strlen(as);
		if (!srv_name_ok(as) || n <= 4 || strcmp(as + n - 4, ".xml") || n >= cap)
			return fail(e, 400, "as", "save as '%.200s': want NAME.xml ([A-Za-z0-9._-], "
				    "not starting with '.')", as);
		snprintf(out, cap, "%s", as);
		return 0;
	}
	for (const char *d = from + base; d > from; d--)	/* a former -edit-N */
		if (*d == '-' && d - from >= 5 && !strncmp(d - 5, "-edit", 5) &&
		    strspn(d + 1, "0123456789") == (size_t)(from + base - d - 1) &&
		    d + 1 < from + base) {
			base = (size_t)(d - 5 - from);
			break;
		}
	if (base > 150)
		base = 150;
	(void)n;
	for (int k = 1; k <= FORM_EDITS_MAX; k++) {
		snprintf(out, cap, "%.*s-edit-%d.xml", (int)base, from, k);
		snprintf(p, sizeof(p), "%s/%s", s->descs, out);
		if (lstat(p, &st) < 0 && errno == ENOENT)
			return 0;
	}
	return fail(e, 409, "as", "%d edited copies of %s already: name this one (save as)",
		    FORM_EDITS_MAX, from);
}

/* doc into a new file name of --descriptions (O_EXCL: never over a file,
 * 0644, the owner's). 0, or -1 with e. */
static int save(const struct srv *s, xmlDoc *doc, const char *name, struct form_err *e)
{
	int dfd = open(s->descs, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	xmlChar *mem = NULL;
	int len = 0, bad = 0;

	if (dfd >= 0)
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = errno;

		if (dfd >= 0)
			close(dfd);
		return fail(e, err == EEXIST ? 409 : 500, "as", "cannot create %s: %s%s", name,
			    strerror(err), err == EEXIST ? " (a description is never "
			    "overwritten: save under another name)" : "");
	}
	fchmod(fd, 0644);	/* whatever the umask: others must not write it (launch) */
	xmlDocDumpMemoryEnc(doc, &mem, &len, "UTF-8");
	for (int off = 0; mem && off < len && !bad;) {
		ssize_t w = write(fd, mem + off, (size_t)(len - off));

		bad = w <= 0;
		off += w > 0 ? (int)w : 0;
	}
	bad |= !mem || close(fd) != 0;
	xmlFree(mem);
	if (bad) {
		unlinkat(dfd, name, 0);
		close(dfd);
		return fail(e, 500, "", "cannot write %s", name);
	}
	close(dfd);
	return 0;
}

/* POST /api/descriptions/NAME.xml/edit (body: the form, URL-encoded): the
 * edited copy saved as a new description, 201 {"name":NEW,"from":NAME}. */
void srv_desc_edit(struct srv *s, struct evhttp_request *req, const char *name)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	struct form_err e = {0};
	struct evkeyvalq kv;
	char *body = NULL, out[SRV_NAME_MAX + 1], why[512];
	xmlDoc *doc = NULL;
	int parsed = 0;

	if (!s->authed) {
		fail(&e, 403, "", "edits only for the owner: this server runs with --no-token");
		goto out;
	}
	if (srv_desc_trusted(s, name, why, sizeof(why))) {
		/* the copy would be the owner's: only from a description the
		 * owner may launch */
		fail(&e, 403, "", "%s", why);
		goto out;
	}
	if (!(body = malloc(n + 1)) || evbuffer_copyout(in, body, n) != (ev_ssize_t)n) {
		fail(&e, 500, "", "out of memory");
		goto out;
	}
	body[n] = '\0';
	/* %00 would cut a value short, unseen */
	if (strlen(body) != n || strstr(body, "%00") || evhttp_parse_query_str(body, &kv)) {
		fail(&e, 400, "", "the form is URL-encoded fields without NUL bytes");
		goto out;
	}
	parsed = 1;
	if (!(doc = load(s, name, &e)) || apply(doc, &kv, name, &e) ||
	    new_name(s, name, &kv, out, sizeof(out), &e) || save(s, doc, out, &e))
		goto out;
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"name\":");
	srv_json_str(b, out);
	evbuffer_add_printf(b, ",\"from\":");
	srv_json_str(b, name);
	evbuffer_add_printf(b, "}\n");
	srv_reply(req, 201, "application/json", b);
	evbuffer_free(b);
	e.code = 0;
out:
	if (e.code)
		send_err(req, &e);
	if (parsed)
		evhttp_clear_headers(&kv);
	xmlFreeDoc(doc);
	free(body);
}
