/*
 * manager/serve/jobs.c - the job browser: the job directories under --jobs,
 * each job's report (the output of `tapestry report --xml`, cached), its
 * timeline (tlindex.c) and its exports, listed and downloaded.
 *
 * What the server derives from a job lives in DIR/.tapestry-serve/ (report.xml,
 * timeline.idx), rebuilt when DIR/index or DIR/meta.xml is newer. A name from
 * the URL is one checked component (srv_name_ok); every file served is
 * reached through components that are not symbolic links, and opened with
 * O_NOFOLLOW.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "manager/safeio.h"
#include "manager/serve/serve.h"
#include "proto/jobdir.h"

#define CACHE ".tapestry-serve"
#define LIST_MAX 2000		/* job directories listed */
#define TREE_FILES_MAX 2000	/* files listed in a directory export */

/* The exports `tapestry export` writes by default into the job directory
 * (manager/export.c's default names). */
static const struct { const char *format, *name; } exports[] = {
	{"csv", "trace.csv"}, {"chrome", "trace.json"}, {"paje", "trace.paje"},
	{"moca", "trace.moca"}, {"otf2", "otf2"}, {"simgrid-ti", "simgrid-ti"},
	{"simgrid-ti-2011", "simgrid-ti-2011"}, {"simgrid-platform", "simgrid-platform"},
};
#define NEXPORTS (sizeof(exports) / sizeof(exports[0]))

static int ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* 1 when the cache file name of cfd is newer than the job's data (index and
 * meta.xml of jfd), 0 when stale or absent, -1 when it is a symbolic link
 * (someone else may write this job directory: refused). */
static int fresh_at(int jfd, int cfd, const char *name)
{
	static const char *const data[] = {"index", "meta.xml"};
	struct stat sf, sd;

	if (fstatat(cfd, name, &sf, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISREG(sf.st_mode))
		return S_ISLNK(sf.st_mode) ? -1 : 0;
	for (size_t i = 0; i < 2; i++)
		if (fstatat(jfd, data[i], &sd, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !ts_after(&sf.st_mtim, &sd.st_mtim))
			return 0;
	return 1;
}

/* The job directory dir (O_PATH, reached without a link) into *jfd and its
 * cache DIR/.tapestry-serve (made 0700 when create, not a link) into *cfd:
 * 0, or -1 with why. */
static int cache_open(const char *dir, int create, int *jfd, int *cfd, char *why,
		      size_t whylen)
{
	*cfd = -1;
	if ((*jfd = mgr_dir_nofollow(dir)) < 0) {
		snprintf(why, whylen, "cannot open the job directory: %s", strerror(errno));
		return -1;
	}
	if (create && mkdirat(*jfd, CACHE, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot make the cache " CACHE " of the job: %s",
			 strerror(errno));
		goto fail;
	}
	if ((*cfd = openat(*jfd, CACHE, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "the job's " CACHE " %s", mgr_is_link(*jfd, CACHE) ?
			 "is a symbolic link: refused (someone else may write this job "
			 "directory)" : errno == ENOENT ? "is not there" : strerror(errno));
		goto fail;
	}
	return 0;
fail:
	close(*jfd);
	*jfd = -1;
	return -1;
}

static void cache_close(int jfd, int cfd)
{
	if (cfd >= 0)
		close(cfd);
	if (jfd >= 0)
		close(jfd);
}

/* s->jobs/name into out when it is a job directory (not a link): 0 or -1. */
static int job_dir(const struct srv *s, const char *name, char *out, size_t cap)
{
	struct stat st;
	char p[4200];

	if (!srv_name_ok(name) || (size_t)snprintf(out, cap, "%s/%s", s->jobs, name) >= cap)
		return -1;
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return -1;
	snprintf(p, sizeof(p), "%s/index", out);
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	snprintf(p, sizeof(p), "%s/segments", out);
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* ---- what the list shows without reading the trace --------------------------- */

struct summary {
	uint64_t records, bytes, created_ns;
	uint64_t written_ns;	/* the newest segment's mtime (the last write) */
	int have_report;
	char events[24], streams[24], lost[24], gaps[24], duration[24], app[256];
	int ranks;
};

/* The events of the job per its index (a damaged index: what its valid
 * entries say; the report reads the segments and says what is wrong). */
static void index_records(const char *dir, struct summary *sm)
{
	struct proto_jobdir_index_entry ie;
	struct proto_jobdir_r *jd;
	char p[4200];
	uint8_t e[32];
	FILE *f;
	int rc;

	if ((jd = proto_jobdir_open(dir, &rc))) {
		for (uint64_t i = 0; proto_jobdir_index_get(jd, i, &ie) == 1; i++)
			sm->records += ie.nrecords;
		proto_jobdir_close_r(jd);
	}
	snprintf(p, sizeof(p), "%s/segments/000000.tps", dir);
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && (f = fdopen(fd, "rb"))) {
		if (fread(e, 1, 32, f) == 32)
			memcpy(&sm->created_ns, e + 16, 8);
		fclose(f);
	} else if (fd >= 0) {
		close(fd);
	}
	DIR *d;
	snprintf(p, sizeof(p), "%s/segments", dir);
	if ((d = opendir(p))) {
		struct dirent *de;
		struct stat st;

		while ((de = readdir(d)))
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode)) {
				uint64_t t = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
					     (uint64_t)st.st_mtim.tv_nsec;

				sm->bytes += (uint64_t)st.st_size;
				if (t > sm->written_ns)
					sm->written_ns = t;
			}
		closedir(d);
	}
}

static void attr(xmlNode *n, const char *k, char *out, size_t cap)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)k);

	if (v)
		snprintf(out, cap, "%s", (const char *)v);
	xmlFree(v);
}

/* Figures of the cached report f (report.xml, or the quick one) of cfd
 * (the list's columns), opened without following a link. */
static void report_summary(int cfd, const char *f, struct summary *sm)
{
	int fd = openat(cfd, f, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	xmlDoc *doc = fd < 0 ? NULL : xmlReadFd(fd, f, NULL, XML_PARSE_NONET |
						XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
	xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
	char rank[24];
	long best_rank = -1, best_pid = 0;
	unsigned char seen[4096 / 8] = {0};

	if (!root)
		goto out;
	sm->have_report = 1;
	attr(root, "events", sm->events, sizeof(sm->events));
	attr(root, "streams", sm->streams, sizeof(sm->streams));
	attr(root, "lost_events", sm->lost, sizeof(sm->lost));
	attr(root, "gap_batches", sm->gaps, sizeof(sm->gaps));
	for (xmlNode *n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!strcmp((const char *)n->name, "stream")) {
			rank[0] = '\0';
			attr(n, "rank", rank, sizeof(rank));
			long r = atol(rank);

			if (r >= 0 && r < 4096 && !(seen[r / 8] & (1 << (r % 8)))) {
				seen[r / 8] |= (unsigned char)(1 << (r % 8));
				sm->ranks++;
			}
			/* the application: rank 0's program, else the first process's
			 * (the lowest pid) */
			char pid[24] = "";

			attr(n, "pid", pid, sizeof(pid));
			long p = atol(pid);

			if (!sm->app[0] || (r == 0 && best_rank != 0) ||
			    (best_rank != 0 && r != 0 && p < best_pid)) {
				attr(n, "exe", sm->app, sizeof(sm->app));
				best_rank = r;
				best_pid = p;
			}
		} else if (!strcmp((const char *)n->name, "perturbation")) {
			attr(n, "span_corrected_ns", sm->duration, sizeof(sm->duration));
		}
	}
out:
	xmlFreeDoc(doc);
	if (fd >= 0)
		close(fd);
}

static void num_or_null(struct evbuffer *b, const char *k, const char *v)
{
	char *end;

	evbuffer_add_printf(b, ",\"%s\":", k);
	if (v[0] && (strtoull(v, &end, 10), !*end))
		evbuffer_add_printf(b, "%s", v);
	else
		evbuffer_add(b, "null", 4);
}

/* The list's duration without reading the trace: the corrected span of
 * the full report when it is made ("span"); else the wall time of the
 * collection, from the first segment's creation (its header) to the
 * newest segment's last write ("collection"), or to now while the job is
 * being written ("running"); null when the segments do not say. */
static void duration(struct evbuffer *b, const struct summary *sm, int running)
{
	struct timespec now;
	uint64_t end = sm->written_ns;
	const char *of = "collection";

	if (sm->duration[0]) {
		num_or_null(b, "duration_ns", sm->duration);
		evbuffer_add_printf(b, ",\"duration_of\":\"span\"");
		return;
	}
	if (running) {
		clock_gettime(CLOCK_REALTIME, &now);
		end = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		of = "running";
	}
	if (!sm->created_ns || !end) {
		evbuffer_add_printf(b, ",\"duration_ns\":null,\"duration_of\":null");
		return;
	}
	/* a file's mtime is the kernel's coarse clock (a tick behind the
	 * header's precise creation time at most): a collection shorter than
	 * a tick can end "before" it began, and is 0 long */
	evbuffer_add_printf(b, ",\"duration_ns\":%" PRIu64 ",\"duration_of\":\"%s\"",
			    end > sm->created_ns ? end - sm->created_ns : 0, of);
}

static const char *report_state(struct srv *s, const char *dir)
{
	struct srv_child *c = srv_child_find(s, SRV_CHILD_CACHE, dir);
	char why[256];
	int jfd, cfd, fresh = 0;

	if (!cache_open(dir, 0, &jfd, &cfd, why, sizeof(why))) {
		fresh = fresh_at(jfd, cfd, "report.xml");
		cache_close(jfd, cfd);
	}
	if (fresh > 0)
		return "ready";
	if (c && srv_child_running(c))
		return "building";
	if ((c && c->status) || fresh < 0)
		return "failed";
	return "none";
}

/* ---- jobs still being written ------------------------------------------------ */

#define WRITERS_MAX 256

/* The job directories tapestry-collector processes write (their --output,
 * made absolute from their working directory and resolved), from /proc:
 * a job listed there is still running. Into out (at most WRITERS_MAX). */
static size_t job_writers(char (*out)[4096])
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d)) && n < WRITERS_MAX) {
		char p[300], cmd[8192], arg[8300];
		ssize_t got;
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		got = read(fd, cmd, sizeof(cmd) - 1);
		close(fd);
		if (got <= 0)
			continue;
		cmd[got] = '\0';
		const char *base = strrchr(cmd, '/');

		if (!strstr(base ? base : cmd, "tapestry-collector"))
			continue;
		for (const char *a = cmd; a < cmd + got; a += strlen(a) + 1) {
			const char *o = NULL;

			if (!strcmp(a, "--output") && a + strlen(a) + 1 < cmd + got)
				o = a + strlen(a) + 1;
			else if (!strncmp(a, "--output=", 9))
				o = a + 9;
			if (!o)
				continue;
			if (o[0] == '/')
				snprintf(arg, sizeof(arg), "%s", o);
			else
				snprintf(arg, sizeof(arg), "/proc/%s/cwd/%s", de->d_name, o);
			if (realpath(arg, out[n]))
				n++;
			break;
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* 1 when job name (directory dir) is being written: a launch of this
 * server that runs, or a collector writing it (writers, nw). */
static int job_running(struct srv *s, const char *name, const char *dir,
		       char (*writers)[4096], size_t nw)
{
	for (struct srv_child *c = s->children; c; c = c->next)
		if (c->kind == SRV_CHILD_LAUNCH && srv_child_running(c) && !strcmp(c->job, name))
			return 1;
	for (size_t i = 0; i < nw; i++)
		if (!strcmp(writers[i], dir))
			return 1;
	return 0;
}

/* A job as JSON; running: it is being written (job_running). */
static void job_json(struct srv *s, struct evbuffer *b, const char *name,
		     const char *dir, int running)
{
	struct summary sm;
	char cache[4300], date[64] = "";
	const char *figures = NULL;
	struct stat st;
	int jfd, cfd;

	memset(&sm, 0, sizeof(sm));
	index_records(dir, &sm);
	const char *state = report_state(s, dir);

	/* the full report's figures, else the quick report's (one read of the
	 * job, made by POST .../quick: the list fills its columns without
	 * the post-processing of every job) */
	if (!cache_open(dir, 0, &jfd, &cfd, cache, sizeof(cache))) {
		if (!strcmp(state, "ready")) {
			report_summary(cfd, "report.xml", &sm);
			figures = "report";
		} else if (fresh_at(jfd, cfd, SRV_QUICK) > 0) {
			report_summary(cfd, SRV_QUICK, &sm);
			figures = "quick";
		}
		cache_close(jfd, cfd);
	}
	time_t t = sm.created_ns ? (time_t)(sm.created_ns / 1000000000u) :
		   (stat(dir, &st) == 0 ? st.st_mtime : 0);
	struct tm tm;
	if (t && gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	evbuffer_add_printf(b, "{\"name\":");
	srv_json_str(b, name);
	evbuffer_add_printf(b, ",\"date\":\"%s\",\"records\":%" PRIu64 ",\"bytes\":%"
			    PRIu64 ",\"report\":\"%s\"", date, sm.records, sm.bytes, state);
	num_or_null(b, "events", sm.events);
	num_or_null(b, "streams", sm.streams);
	num_or_null(b, "lost_events", sm.lost);
	num_or_null(b, "gap_batches", sm.gaps);
	duration(b, &sm, running);
	evbuffer_add_printf(b, ",\"ranks\":%d,\"application\":", sm.ranks);
	srv_json_str(b, sm.have_report ? sm.app : NULL);
	evbuffer_add_printf(b, ",\"figures\":");
	srv_json_str(b, figures);
	evbuffer_add_printf(b, ",\"running\":%s}", running ? "true" : "false");
}

/* A job in the list: its name and when its trace was last written (the
 * mtime of DIR/segments: an export written later into DIR does not move
 * the job up). */
struct listed {
	char *name;
	time_t t;
};

/* Newest first, then by name. */
static int cmp_listed(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? 1 : -1;
	return strcmp(x->name, y->name);
}

static time_t written_at(const char *dir)
{
	char p[4400];
	struct stat st;

	snprintf(p, sizeof(p), "%s/segments", dir);
	if (stat(p, &st) == 0 || stat(dir, &st) == 0)
		return st.st_mtime;
	return 0;
}

void srv_jobs_list(struct srv *s, struct evhttp_request *req)
{
	DIR *d = opendir(s->jobs);
	struct evbuffer *b = evbuffer_new();
	struct listed *names = calloc(LIST_MAX, sizeof(*names));
	char dir[4300];
	size_t n = 0;
	struct dirent *de;

	if (!d || !b || !names) {
		srv_error(req, 500, "cannot read %s: %s", s->jobs, strerror(errno));
		goto out;
	}
	int truncated = 0;

	while ((de = readdir(d))) {
		if (job_dir(s, de->d_name, dir, sizeof(dir)))
			continue;
		if (n == LIST_MAX || !(names[n].name = strdup(de->d_name))) {
			truncated = 1;
			break;
		}
		names[n++].t = written_at(dir);
	}
	qsort(names, n, sizeof(*names), cmp_listed);
	char (*writers)[4096] = malloc(WRITERS_MAX * sizeof(*writers));
	size_t nw = writers ? job_writers(writers) : 0;

	evbuffer_add_printf(b, "{\"jobs\":[");
	for (size_t i = 0; i < n; i++) {
		job_dir(s, names[i].name, dir, sizeof(dir));
		if (i)
			evbuffer_add(b, ",", 1);
		job_json(s, b, names[i].name, dir,
			 job_running(s, names[i].name, dir, writers, nw));
	}
	free(writers);
	evbuffer_add_printf(b, "],\"truncated\":%s}\n", truncated ? "true" : "false");
	srv_reply(req, 200, "application/json", b);
out:
	for (size_t i = 0; names && i < n; i++)
		free(names[i].name);
	free(names);
	if (b)
		evbuffer_free(b);
	if (d)
		closedir(d);
}

/* ---- exports ------------------------------------------------------------------- */

/* The regular files under dir/rel (no links followed), as JSON strings,
 * in name order (an OTF2 archive's files as otf2-print lists them). */
static void list_tree(struct evbuffer *b, const char *dir, const char *rel, int *count,
		      int depth)
{
	char p[4400], r[4400], f[8900];
	struct dirent **de = NULL;
	struct stat st;
	int n;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (depth > 8 || (n = scandir(p, &de, NULL, alphasort)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = de[i]->d_name;

		snprintf(f, sizeof(f), "%s/%s", p, name);
		if (*count >= TREE_FILES_MAX || !srv_name_ok(name) ||
		    lstat(f, &st) < 0)
			continue;
		snprintf(r, sizeof(r), "%s/%s", rel, name);
		if (S_ISDIR(st.st_mode)) {
			list_tree(b, dir, r, count, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			evbuffer_add_printf(b, "%s{\"path\":", (*count)++ ? "," : "");
			srv_json_str(b, r);
			evbuffer_add_printf(b, ",\"bytes\":%lld}", (long long)st.st_size);
		}
	}
	for (int i = 0; i < n; i++)
		free(de[i]);
	free(de);
}

static void job_info(struct srv *s, struct evhttp_request *req, const char *name,
		     const char *dir)
{
	struct evbuffer *b = evbuffer_new();
	char p[4400];
	struct stat st;

	char (*writers)[4096] = malloc(WRITERS_MAX * sizeof(*writers));
	size_t nw = writers ? job_writers(writers) : 0;

	evbuffer_add_printf(b, "{\"job\":");
	job_json(s, b, name, dir, job_running(s, name, dir, writers, nw));
	free(writers);
	evbuffer_add_printf(b, ",\"exports\":[");
	for (size_t i = 0; i < NEXPORTS; i++) {
		struct srv_child *c;
		const char *state = "none";
		int count = 0;

		snprintf(p, sizeof(p), "%s/%s", dir, exports[i].name);
		snprintf(p + strlen(p), sizeof(p) - strlen(p), "#%s", exports[i].format);
		if ((c = srv_child_find(s, SRV_CHILD_EXPORT, p)))
			state = srv_child_running(c) ? "running" : c->status ? "failed" : "none";
		snprintf(p, sizeof(p), "%s/%s", dir, exports[i].name);
		int have = lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));

		evbuffer_add_printf(b, "%s{\"format\":\"%s\",\"name\":\"%s\",\"state\":\"%s\","
				    "\"files\":[", i ? "," : "", exports[i].format,
				    exports[i].name, have && strcmp(state, "running") ? "ready" : state);
		if (have && S_ISREG(st.st_mode))
			evbuffer_add_printf(b, "{\"path\":\"%s\",\"bytes\":%lld}",
					    exports[i].name, (long long)st.st_size);
		else if (have)
			list_tree(b, dir, exports[i].name, &count, 0);
		evbuffer_add(b, "]}", 2);
	}
	evbuffer_add_printf(b, "]}\n");
	srv_reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* /files/REL: one file of an export, every component checked and opened
 * from its directory's descriptor without following a link. */
static void download(struct evhttp_request *req, const char *dir, const char *rel)
{
	char comp[SRV_NAME_MAX + 1], disp[300];
	const char *c = rel, *last = rel;
	size_t i;
	int fd = mgr_dir_nofollow(dir), first = 1, listed = 0;
	struct stat st;

	if (fd < 0) {
		srv_error(req, 404, "cannot open the job directory");
		return;
	}
	while (*c) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);

		if (n > SRV_NAME_MAX)
			goto bad;
		memcpy(comp, c, n);
		comp[n] = '\0';
		if (!srv_name_ok(comp))
			goto bad;
		for (i = 0; first && i < NEXPORTS; i++)
			listed |= !strcmp(comp, exports[i].name);
		if (first && !listed) {
			srv_error(req, 404, "'%s' is not an export of this job", comp);
			close(fd);
			return;
		}
		first = 0;
		last = c;
		c += n + (slash ? 1 : 0);
		if (slash && !*c)
			goto bad;
		int next = openat(fd, comp, (*c ? O_PATH | O_DIRECTORY : O_RDONLY | O_NONBLOCK) | O_NOFOLLOW |
				  O_CLOEXEC);

		if (next < 0) {
			int link = mgr_is_link(fd, comp);

			close(fd);
			if (link)
				srv_error(req, 403, "%s: links are not followed", rel);
			else
				srv_error(req, 404, "no file %s", rel);
			return;
		}
		close(fd);
		fd = next;
	}
	if (first)
		goto bad;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		srv_error(req, 404, "%s is not a file", rel);
		return;
	}
	struct evbuffer *b = evbuffer_new();
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", last);
	evhttp_add_header(h, "Content-Disposition", disp);
	evbuffer_add_file(b, fd, 0, st.st_size);	/* owns fd */
	srv_reply(req, 200, "application/octet-stream", b);
	evbuffer_free(b);
	return;
bad:
	close(fd);
	srv_error(req, 400, "bad file path");
}

static void export_start(struct srv *s, struct evhttp_request *req, const char *dir)
{
	char fmt[32], key[4400], why[256];
	size_t i;

	if (srv_query(req, "format", fmt, sizeof(fmt))) {
		srv_error(req, 400, "export needs ?format=");
		return;
	}
	for (i = 0; i < NEXPORTS && strcmp(fmt, exports[i].format); i++)
		;
	if (i == NEXPORTS) {
		srv_error(req, 400, "no export format '%s'", fmt);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s#%s", dir, exports[i].name, fmt);
	struct srv_child *c = srv_child_find(s, SRV_CHILD_EXPORT, key);

	if (c && srv_child_running(c)) {
		srv_error(req, 409, "that export is running");
		return;
	}
	const char *argv[] = {"tapestry", "export", "-f", fmt, dir, NULL};

	if (!srv_child_start(s, SRV_CHILD_EXPORT, key, argv, -1, why, sizeof(why))) {
		srv_error(req, 500, "cannot start the export: %s", why);
		return;
	}
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"state\":\"running\"}\n");
	srv_reply(req, 202, "application/json", b);
	evbuffer_free(b);
}

/* ---- report and timeline: built by a child, then served from the cache ------- */

static void cache_done(struct srv *s, struct srv_child *c)
{
	(void)c;
	s->reports_running--;
}

static void busy(struct evhttp_request *req, const char *state)
{
	struct evbuffer *b = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
	evbuffer_add_printf(b, "{\"state\":\"%s\"}\n", state);
	srv_reply(req, 202, "application/json", b);
	evbuffer_free(b);
}

/* The job's cache for a request: dir's cache opened (jfd, cfd), the file
 * name (report.xml, report-quick.xml, timeline.idx) looked at. */
struct cache {
	int jfd, cfd;
	const char *name;
	const char *job;	/* its name in the URL */
	int start;		/* a POST: start the child when stale */
};

/* 1 when the cache file c->name is fresh (c open: the caller closes it);
 * else a reply (202 while building, 500 when the build failed, 403 for a
 * planted link) has been sent: 0. Both files come from one child
 * (serve.c, build_cache: one post-processing for the two), started for
 * whichever is stale; it writes the report first, so the report may be
 * fresh while the child still indexes. */
/* 409: not made, and a GET starts no work: the client POSTs build (the
 * URL to do so, JSON "build") and asks again. */
static void not_made(struct evhttp_request *req, const char *name, const char *what)
{
	struct evbuffer *b = evbuffer_new();
	char url[300];

	snprintf(url, sizeof(url), "/api/jobs/%s/build", name);
	evbuffer_add_printf(b, "{\"error\":\"%s not made yet: POST %s (a GET starts no "
			    "work)\",\"status\":409,\"state\":\"none\",\"build\":", what, url);
	srv_json_str(b, url);
	evbuffer_add_printf(b, "}\n");
	srv_reply(req, 409, "application/json", b);
	evbuffer_free(b);
}

static int cached(struct srv *s, struct evhttp_request *req, const char *dir,
		  struct cache *k)
{
	char why[4500], rep[4400], idx[4400];
	struct srv_child *c = srv_child_find(s, SRV_CHILD_CACHE, dir);
	int fresh;

	if (cache_open(dir, 1, &k->jfd, &k->cfd, why, sizeof(why))) {
		srv_error(req, errno == EACCES || errno == EROFS ? 503 : 403, "%s", why);
		return 0;
	}
	if ((fresh = fresh_at(k->jfd, k->cfd, k->name)) > 0)
		return 1;
	int rfresh = fresh_at(k->jfd, k->cfd, "report.xml");
	int ifresh = fresh_at(k->jfd, k->cfd, "timeline.idx");

	cache_close(k->jfd, k->cfd);
	k->jfd = k->cfd = -1;
	if (fresh < 0 || rfresh < 0 || ifresh < 0) {
		srv_error(req, 403, "the job's " CACHE "/%s is a symbolic link: refused "
			  "(someone else may write this job directory)",
			  fresh < 0 ? k->name : rfresh < 0 ? "report.xml" : "timeline.idx");
		return 0;
	}
	if (c && srv_child_running(c)) {
		busy(req, "building");
		return 0;
	}
	if (!k->start && c && c->status) {
		size_t n = c->outlen > 2000 ? 2000 : c->outlen;

		srv_error(req, 500, "the job's report and index failed (exit %d; POST "
			  "/api/jobs/%s/build tries again): %.*s", c->status, k->job,
			  (int)n, c->out + c->outlen - n);
		return 0;
	}
	if (!k->start) {
		not_made(req, k->job, k->name);
		return 0;
	}
	if (s->reports_running > 0) {
		busy(req, "queued");
		return 0;
	}
	snprintf(rep, sizeof(rep), "%s/" CACHE "/report.xml", dir);
	snprintf(idx, sizeof(idx), "%s/" CACHE "/timeline.idx", dir);
	const char *argv[] = {"tapestry", "serve", "--build-index", dir,
			      ifresh ? "-" : idx, rfresh ? NULL : rep, NULL};

	if (!(c = srv_child_start(s, SRV_CHILD_CACHE, dir, argv, -1, why, sizeof(why)))) {
		srv_error(req, 500, "cannot start: %s", why);
		return 0;
	}
	c->done = cache_done;
	s->reports_running++;
	busy(req, "building");
	return 0;
}

static int64_t q_i64(struct evhttp_request *req, const char *k, int64_t def)
{
	char v[32], *end;
	long long x;

	if (srv_query(req, k, v, sizeof(v)))
		return def;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno || *end || end == v ? def : x;
}

/* event: 0 a window, 1 an event's details, 2 a window's profile, 3 a search */
static void timeline(struct srv *s, struct evhttp_request *req, const char *name,
		     const char *dir, int event)
{
	struct cache k = {-1, -1, "timeline.idx", name, 0};
	char path[64], why[256];
	struct evbuffer *b;
	int rc;

	if (!cached(s, req, dir, &k))
		return;
	struct timespec a, z;
	char timing[64];

	/* the index through the cache's descriptor: no link followed */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/timeline.idx", k.cfd);
	b = evbuffer_new();
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (event == 1) {
		rc = srv_tl_event(path, (uint64_t)q_i64(req, "i", -1), b, why, sizeof(why));
	} else if (event == 2) {
		rc = srv_tl_range(path, q_i64(req, "t0", 0), q_i64(req, "t1", INT64_MAX), b,
				  why, sizeof(why));
	} else if (event == 3) {
		char q[80] = "";

		srv_query(req, "q", q, sizeof(q));
		rc = srv_tl_find(path, q, q_i64(req, "after", INT64_MIN),
				 q_i64(req, "after_i", -1), b, why, sizeof(why));
	} else {
		rc = srv_tl_query(path, q_i64(req, "t0", 0), q_i64(req, "t1", INT64_MAX),
				  (int)q_i64(req, "w", 1000), b, why, sizeof(why));
	}
	clock_gettime(CLOCK_MONOTONIC, &z);
	/* the time the answer took here, for the browser's tools and bench/serve.sh */
	snprintf(timing, sizeof(timing), "index;dur=%.3f",
		 (double)(z.tv_sec - a.tv_sec) * 1e3 + (double)(z.tv_nsec - a.tv_nsec) / 1e6);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Server-Timing", timing);
	if (rc == -3 && unlinkat(k.cfd, "timeline.idx", 0) == 0) {
		evbuffer_free(b);
		cache_close(k.jfd, k.cfd);
		timeline(s, req, name, dir, event);	/* now stale: 409 */
		return;
	}
	cache_close(k.jfd, k.cfd);
	if (rc)
		srv_error(req, rc == -2 ? 400 : 500, "%s", rc == -2 ? why :
			  "cannot read the job's timeline index");
	else
		srv_reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

/* The cache file k->name, opened without following a link; closes k. */
static void send_xml(struct evhttp_request *req, struct cache *k)
{
	int fd = openat(k->cfd, k->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	struct evbuffer *b = evbuffer_new();

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int link = fd < 0 && errno == ELOOP;

		if (fd >= 0)
			close(fd);
		srv_error(req, link ? 403 : 500, "cannot read the job's " CACHE "/%s%s", k->name,
			  link ? ": a symbolic link, refused" : "");
	} else {
		evbuffer_add_file(b, fd, 0, st.st_size);
		srv_reply(req, 200, "application/xml", b);
	}
	evbuffer_free(b);
	cache_close(k->jfd, k->cfd);
}

/* The report when it is made, else the quick one (post="skipped") once
 * the cache child has written it, else as report.xml (202, building). */
static void report_quick(struct srv *s, struct evhttp_request *req, const char *name,
			 const char *dir)
{
	struct cache k = {-1, -1, SRV_QUICK, name, 0};
	char why[256];

	if (!cache_open(dir, 0, &k.jfd, &k.cfd, why, sizeof(why))) {
		if (fresh_at(k.jfd, k.cfd, "report.xml") == 0 &&
		    fresh_at(k.jfd, k.cfd, SRV_QUICK) > 0) {
			send_xml(req, &k);
			return;
		}
		cache_close(k.jfd, k.cfd);
	}
	k.name = "report.xml";
	if (cached(s, req, dir, &k))
		send_xml(req, &k);
}

/* POST /build: the report and the index made when stale (again after a
 * failure): 202 while the child runs, 200 {"state":"ready"} when both are
 * fresh. */
static void build(struct srv *s, struct evhttp_request *req, const char *name,
		  const char *dir)
{
	struct cache k = {-1, -1, "report.xml", name, 1};

	if (!cached(s, req, dir, &k))
		return;
	cache_close(k.jfd, k.cfd);
	k.name = "timeline.idx";
	if (!cached(s, req, dir, &k))
		return;
	cache_close(k.jfd, k.cfd);
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"state\":\"ready\"}\n");
	srv_reply(req, 200, "application/json", b);
	evbuffer_free(b);
}

static void quick_done(struct srv *s, struct srv_child *c)
{
	(void)c;
	s->quicks_running--;
}

/* POST /quick: the quick report alone (`tapestry report --xml --quick`,
 * one read of the job, by `serve --build-quick DIR OUT`), for the list's
 * columns: 200 {"state":"ready"} when it or the full report is fresh, 202
 * while made (one at a time, beside the full reports). */
static void quick(struct srv *s, struct evhttp_request *req, const char *dir)
{
	struct srv_child *c = srv_child_find(s, SRV_CHILD_QUICK, dir);
	struct srv_child *full = srv_child_find(s, SRV_CHILD_CACHE, dir);
	char why[4500], out[4400];
	int jfd, cfd, fresh;

	if (cache_open(dir, 1, &jfd, &cfd, why, sizeof(why))) {
		srv_error(req, errno == EACCES || errno == EROFS ? 503 : 403, "%s", why);
		return;
	}
	fresh = fresh_at(jfd, cfd, "report.xml") > 0 || fresh_at(jfd, cfd, SRV_QUICK) > 0;
	cache_close(jfd, cfd);
	if (fresh) {
		struct evbuffer *b = evbuffer_new();

		evbuffer_add_printf(b, "{\"state\":\"ready\"}\n");
		srv_reply(req, 200, "application/json", b);
		evbuffer_free(b);
		return;
	}
	if ((c && srv_child_running(c)) || (full && srv_child_running(full))) {
		busy(req, "building");
		return;
	}
	if (c && c->status) {
		size_t n = c->outlen > 2000 ? 2000 : c->outlen;

		srv_error(req, 500, "the job's quick report failed (exit %d): %.*s",
			  c->status, (int)n, c->out + c->outlen - n);
		return;
	}
	if (s->quicks_running > 0) {
		busy(req, "queued");
		return;
	}
	snprintf(out, sizeof(out), "%s/" CACHE "/" SRV_QUICK, dir);
	const char *argv[] = {"tapestry", "serve", "--build-quick", dir, out, NULL};

	if (!(c = srv_child_start(s, SRV_CHILD_QUICK, dir, argv, -1, why, sizeof(why)))) {
		srv_error(req, 500, "cannot start: %s", why);
		return;
	}
	c->done = quick_done;
	s->quicks_running++;
	busy(req, "building");
}

void srv_job(struct srv *s, struct evhttp_request *req, const char *name,
	     const char *rest)
{
	char dir[4300];
	int post = evhttp_request_get_command(req) == EVHTTP_REQ_POST;

	if (job_dir(s, name, dir, sizeof(dir))) {
		srv_error(req, 404, "no job directory '%s' under %s", name, s->jobs);
		return;
	}
	if (post) {
		if (!strcmp(rest, "/export"))
			export_start(s, req, dir);
		else if (!strcmp(rest, "/build"))
			build(s, req, name, dir);
		else if (!strcmp(rest, "/quick"))
			quick(s, req, dir);
		else
			srv_error(req, 405, "no POST on this job URL");
		return;
	}
	if (!*rest) {
		job_info(s, req, name, dir);
	} else if (!strcmp(rest, "/report.xml")) {
		struct cache k = {-1, -1, "report.xml", name, 0};

		if (cached(s, req, dir, &k))
			send_xml(req, &k);
	} else if (!strcmp(rest, "/" SRV_QUICK)) {
		report_quick(s, req, name, dir);
	} else if (!strcmp(rest, "/timeline")) {
		timeline(s, req, name, dir, 0);
	} else if (!strcmp(rest, "/event")) {
		timeline(s, req, name, dir, 1);
	} else if (!strcmp(rest, "/range")) {
		timeline(s, req, name, dir, 2);
	} else if (!strcmp(rest, "/find")) {
		timeline(s, req, name, dir, 3);
	} else if (!strncmp(rest, "/files/", 7)) {
		download(req, dir, rest + 7);
	} else {
		srv_error(req, 404, "no job URL %s", rest);
	}
}
