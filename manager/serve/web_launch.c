/*
 * manager/serve/web_launch.c - the launch page's API: the job descriptions
 * (*.xml) of --descriptions, what `tapestry plan` says about one, and
 * launches (`tapestry launch -o JOBS/NAME DESC` in the descriptions
 * directory) whose output the page follows. Uploading a description is
 * refused unless --allow-upload. Launches and uploads are for the owner
 * only: a request that presented the token (none with --no-token); a
 * description is launched only from a regular file of --descriptions that
 * the server's user owns and nobody else may write, in a directory nobody
 * else may change (or sticky).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "manager/serve/serve.h"

#define DESC_MAX 1000
#define PLAN_FILE_MAX (256u << 10)
#define DESC_BYTES_MAX (1 << 20)	/* as tapestry plan: a description over it is refused */

static const char *const plan_files[] = {
	"collectors.plan", "hostfile.openmpi", "machinefile.mpich", "hostfile.simgrid",
	"platform.xml", "deployment.xml",
};

static int is_xml(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".xml");
}

/* s->descs/name into out when it is there and not a link (a link is not a
 * description: 404; any other type reaches the route, which opens it with
 * srv_open_regular or checks it with srv_desc_trusted: 403): 0 or -1. */
static int desc_path(const struct srv *s, const char *name, char *out, size_t cap)
{
	struct stat st;

	if (!srv_name_ok(name) || !is_xml(name) ||
	    (size_t)snprintf(out, cap, "%s/%s", s->descs, name) >= cap)
		return -1;
	return lstat(out, &st) == 0 && !S_ISLNK(st.st_mode) ? 0 : -1;
}

/* 0 when name is a regular file of --descriptions (srv_open_regular),
 * else a 403 saying what it is has been sent. */
static int desc_regular(const struct srv *s, struct evhttp_request *req, const char *name)
{
	int dfd = open(s->descs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -1 : srv_open_regular(dfd, name);

	if (dfd >= 0)
		close(dfd);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	srv_error(req, 403, "%s: %s", name, errno == EINVAL ? "not a regular file" :
		  errno == ELOOP ? "a symbolic link: refused" : strerror(errno));
	return -1;
}

/* 403 unless the request presented the token: 0 when it did. */
static int owner_only(const struct srv *s, struct evhttp_request *req, const char *what)
{
	if (s->authed)
		return 0;
	srv_error(req, 403, "%s only for the owner: this server runs with --no-token", what);
	return -1;
}

/* 0 when path (a description of s->descs) is one the owner may launch:
 * a regular file (not a link) of the server's user, not writable by group
 * or others, in a directory of the user (or root) that nobody else may
 * change (unless sticky). Else why says which. */
int srv_desc_trusted(const struct srv *s, const char *name, char *why, size_t whylen)
{
	struct stat st, sd;
	int dfd = open(s->descs, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	uid_t me = geteuid();

	if (dfd < 0 || fstat(dfd, &sd) < 0) {
		snprintf(why, whylen, "cannot open --descriptions: %s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s is not a regular file of --descriptions%s", name,
			 fd < 0 && errno == ELOOP ? " (a symbolic link)" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (st.st_uid != me || (st.st_mode & 022)) {
		snprintf(why, whylen, "%s is not launched: %s", name, st.st_uid != me ?
			 "another user owns it" : "others may write it (chmod go-w)");
		return -1;
	}
	if ((sd.st_uid != me && sd.st_uid != 0) ||
	    ((sd.st_mode & 022) && !(sd.st_mode & S_ISVTX))) {
		snprintf(why, whylen, "%s is not launched: another user may replace it in "
			 "--descriptions (chmod go-w, or +t)", name);
		return -1;
	}
	return 0;
}

static void send_json(struct evhttp_request *req, int code, struct evbuffer *b)
{
	srv_reply(req, code, "application/json", b);
	evbuffer_free(b);
}

static void list(struct srv *s, struct evhttp_request *req)
{
	DIR *d = opendir(s->descs);
	struct evbuffer *b;
	struct dirent *de;
	struct stat st;
	int n = 0;

	if (!d) {
		srv_error(req, 500, "cannot read %s: %s", s->descs, strerror(errno));
		return;
	}
	b = evbuffer_new();
	evbuffer_add_printf(b, "{\"upload\":%s,\"launch\":%s,\"descriptions\":[",
			    s->allow_upload && s->secretlen ? "true" : "false",
			    s->secretlen ? "true" : "false");
	while ((de = readdir(d)) && n < DESC_MAX) {
		if (!srv_name_ok(de->d_name) || !is_xml(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		evbuffer_add_printf(b, "%s{\"name\":", n++ ? "," : "");
		srv_json_str(b, de->d_name);
		evbuffer_add_printf(b, ",\"bytes\":%lld}", (long long)st.st_size);
	}
	closedir(d);
	evbuffer_add_printf(b, "]}\n");
	send_json(req, 200, b);
}

static void upload(struct srv *s, struct evhttp_request *req)
{
	char name[SRV_NAME_MAX + 1], path[4400];
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	int fd;

	if (!s->allow_upload) {
		srv_error(req, 403, "uploads are off (start tapestry serve with --allow-upload)");
		return;
	}
	if (owner_only(s, req, "uploads"))
		return;
	if (srv_query(req, "name", name, sizeof(name)) || !srv_name_ok(name) || !is_xml(name)) {
		srv_error(req, 400, "upload needs ?name=NAME.xml ([A-Za-z0-9._-], not "
			  "starting with '.')");
		return;
	}
	if (!n) {
		srv_error(req, 400, "empty description");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", s->descs, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		srv_error(req, errno == EEXIST ? 409 : 500, "cannot create %s: %s", name,
			  strerror(errno));
		return;
	}
	while (evbuffer_get_length(in) > 0)
		if (evbuffer_write(in, fd) <= 0)
			break;
	close(fd);
	if (evbuffer_get_length(in)) {
		unlink(path);
		srv_error(req, 500, "cannot write %s", name);
		return;
	}
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"name\":");
	srv_json_str(b, name);
	evbuffer_add_printf(b, "}\n");
	send_json(req, 201, b);
}

/* The description's text, opened from --descriptions without following a
 * link or blocking: a FIFO or device put there in place of the file (after
 * the listing's check) is refused, not waited on. */
static void show(struct srv *s, struct evhttp_request *req, const char *name)
{
	int dfd = open(s->descs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = dfd < 0 ? -1 : srv_open_regular(dfd, name);
	struct stat st;
	struct evbuffer *b;

	if (dfd >= 0)
		close(dfd);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size > DESC_BYTES_MAX) {
		srv_error(req, fd < 0 && (errno == EINVAL || errno == ELOOP) ? 403 : 404,
			  "cannot read the description %s: %s", name, fd >= 0 ?
			  "over 1 MiB" : errno == EINVAL ? "not a regular file" :
			  errno == ELOOP ? "a symbolic link" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	b = evbuffer_new();
	evbuffer_add_file(b, fd, 0, st.st_size);	/* owns fd */
	srv_reply(req, 200, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

/* ---- plan ------------------------------------------------------------------------ */

static void rm_plan_dir(const char *dir)
{
	char p[200];

	for (size_t i = 0; i < sizeof(plan_files) / sizeof(plan_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/p/%s", dir, plan_files[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/p", dir);
	rmdir(p);
	rmdir(dir);
}

static void plan_done(struct srv *s, struct srv_child *c)
{
	struct evbuffer *b = evbuffer_new();
	char p[200], *buf = malloc(PLAN_FILE_MAX + 1);

	evbuffer_add_printf(b, "{\"state\":\"done\",\"exit\":%d,\"output\":", c->status);
	c->out[c->outlen < SRV_OUT_MAX ? c->outlen : SRV_OUT_MAX - 1] = '\0';
	srv_json_str(b, c->out);
	evbuffer_add_printf(b, ",\"files\":{");
	for (size_t i = 0, n = 0; buf && i < sizeof(plan_files) / sizeof(plan_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/p/%s", c->tmpdir, plan_files[i]);
		int fd = srv_open_regular(AT_FDCWD, p);
		ssize_t got;

		if (fd < 0)
			continue;
		got = read(fd, buf, PLAN_FILE_MAX);
		close(fd);
		if (got < 0)
			continue;
		buf[got] = '\0';
		evbuffer_add_printf(b, "%s\"%s\":", n++ ? "," : "", plan_files[i]);
		srv_json_str(b, buf);
	}
	evbuffer_add_printf(b, "}}\n");
	free(buf);
	rm_plan_dir(c->tmpdir);
	c->result = b;
}

/* GET /plan: the last plan (200), 202 while it runs, 409 when none (a GET
 * starts no work); POST /plan: runs `tapestry plan` anew. */
static void plan(struct srv *s, struct evhttp_request *req, const char *name,
		 const char *path, int post)
{
	struct srv_child *c = srv_child_find(s, SRV_CHILD_PLAN, path);
	char why[256], tmpdir[64], out[80];

	if (c && srv_child_running(c)) {
		struct evbuffer *b = evbuffer_new();

		evbuffer_add_printf(b, "{\"state\":\"running\"}\n");
		send_json(req, 202, b);
		return;
	}
	if (!post && c && c->result) {
		struct evbuffer *b = evbuffer_new();

		evbuffer_add_buffer_reference(b, c->result);
		send_json(req, 200, b);
		return;
	}
	if (!post) {
		struct evbuffer *b = evbuffer_new();
		char url[300];

		snprintf(url, sizeof(url), "/api/descriptions/%s/plan", name);
		evbuffer_add_printf(b, "{\"error\":\"no plan yet: POST %s (a GET starts no "
				    "work)\",\"status\":409,\"state\":\"none\",\"build\":", url);
		srv_json_str(b, url);
		evbuffer_add_printf(b, "}\n");
		send_json(req, 409, b);
		return;
	}
	if (desc_regular(s, req, name))
		return;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tapestry-serve-plan.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		srv_error(req, 500, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(out, sizeof(out), "%s/p", tmpdir);	/* plan -o creates it */
	const char *argv[] = {"tapestry", "plan", "-o", out, path, NULL};

	if (!(c = srv_child_start(s, SRV_CHILD_PLAN, path, argv, -1, why, sizeof(why)))) {
		rmdir(tmpdir);
		srv_error(req, 500, "cannot run tapestry plan: %s", why);
		return;
	}
	snprintf(c->tmpdir, sizeof(c->tmpdir), "%s", tmpdir);
	c->done = plan_done;
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"state\":\"running\"}\n");
	send_json(req, 202, b);
}

/* ---- launch ---------------------------------------------------------------------- */

static void launch(struct srv *s, struct evhttp_request *req, const char *name,
		   const char *path)
{
	char job[SRV_NAME_MAX + 1], out[4400], why[4700], stamp[32];
	size_t base = strlen(name) - 4;
	time_t now = time(NULL);
	struct tm tm;
	struct stat st;

	if (owner_only(s, req, "launches"))
		return;
	if (srv_desc_trusted(s, name, why, sizeof(why))) {
		srv_error(req, 403, "%s", why);
		return;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (base > 100)
		base = 100;
	for (int k = 0; k < 100; k++) {
		snprintf(job, sizeof(job), k ? "%.*s-%s-%d" : "%.*s-%s", (int)base, name,
			 stamp, k);
		snprintf(out, sizeof(out), "%s/%s", s->jobs, job);
		if (lstat(out, &st) < 0 && !srv_child_find(s, SRV_CHILD_LAUNCH, job))
			break;
	}
	const char *argv[] = {"tapestry", "launch", "-o", out, path, NULL};
	struct srv_child *c = srv_child_start_in(s, SRV_CHILD_LAUNCH, job, argv, -1, s->descs,
						 why, sizeof(why));
	if (!c) {
		srv_error(req, 500, "cannot run tapestry launch: %s", why);
		return;
	}
	snprintf(c->job, sizeof(c->job), "%s", job);
	struct evbuffer *b = evbuffer_new();

	evbuffer_add_printf(b, "{\"id\":%d,\"job\":", c->id);
	srv_json_str(b, job);
	evbuffer_add_printf(b, "}\n");
	send_json(req, 202, b);
}

void srv_desc(struct srv *s, struct evhttp_request *req, const char *name,
	      const char *rest)
{
	int post = evhttp_request_get_command(req) == EVHTTP_REQ_POST;
	char path[4400];

	if (!name) {
		if (post)
			upload(s, req);
		else
			list(s, req);
		return;
	}
	if (desc_path(s, name, path, sizeof(path))) {
		srv_error(req, 404, "no description '%s' in %s", name, s->descs);
		return;
	}
	if (!*rest && !post)
		show(s, req, name);
	else if (!strcmp(rest, "/plan"))
		plan(s, req, name, path, post);
	else if (!strcmp(rest, "/launch") && post)
		launch(s, req, name, path);
	else if (!strcmp(rest, "/form") && !post)
		srv_desc_form(s, req, name);
	else if (!strcmp(rest, "/edit") && post)
		srv_desc_edit(s, req, name);
	else
		srv_error(req, post ? 405 : 404, "no description URL %s", rest);
}

void srv_launch_get(struct srv *s, struct evhttp_request *req, const char *id)
{
	char from[24], *end;
	long n = strtol(id, &end, 10);
	struct srv_child *c = *end || n <= 0 || n > 1000000 ? NULL :
			      srv_child_by_id(s, (int)n);
	unsigned long long off = 0;

	if (!c) {
		srv_error(req, 404, "no launch %s", id);
		return;
	}
	if (!srv_query(req, "from", from, sizeof(from)))
		off = strtoull(from, NULL, 10);
	if (off < c->outbase)
		off = c->outbase;
	if (off > c->outbase + c->outlen)
		off = c->outbase + c->outlen;
	struct evbuffer *b = evbuffer_new();
	size_t len = (size_t)(c->outbase + c->outlen - off);
	char *text = malloc(len + 1);

	evbuffer_add_printf(b, "{\"id\":%d,\"job\":", c->id);
	srv_json_str(b, c->job);
	evbuffer_add_printf(b, ",\"state\":\"%s\",\"exit\":", srv_child_running(c) ?
			    "running" : "done");
	if (srv_child_running(c))
		evbuffer_add_printf(b, "null");
	else
		evbuffer_add_printf(b, "%d", c->status);
	evbuffer_add_printf(b, ",\"root\":");
	srv_json_str(b, c->root[0] ? c->root : NULL);
	evbuffer_add_printf(b, ",\"from\":%llu,\"next\":%llu,\"output\":", off,
			    (unsigned long long)(c->outbase + c->outlen));
	if (text) {
		memcpy(text, c->out + (off - c->outbase), len);
		text[len] = '\0';
		/* a NUL in the output would cut the string short: shown as '?' */
		for (size_t i = 0; i < len; i++)
			if (!text[i])
				text[i] = '?';
	}
	srv_json_str(b, text ? text : "");
	free(text);
	evbuffer_add_printf(b, "}\n");
	send_json(req, 200, b);
}
