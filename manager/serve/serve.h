/*
 * manager/serve/serve.h - `tapestry serve`: the web page of the management
 * unit (docs/modules/manager-serve.md).
 *
 * One libevent loop answers HTTP (serve.c: options, security, routing,
 * static pages compiled in), the job browser (jobs.c), the timeline index
 * (tlindex.c) and launches (web_launch.c); long work runs in child processes
 * of this binary (child.c) so the loop never blocks on a job; a thread polls
 * the collector tree (tree.c). Every name taken from a URL is one path
 * component checked by srv_name_ok before it touches the file system.
 */
#ifndef TAPESTRY_MGR_SERVE_H
#define TAPESTRY_MGR_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct evhttp_request;
struct evbuffer;

#define SRV_NAME_MAX 200	/* a job or description name, bytes */
#define SRV_OUT_MAX (256u << 10)	/* output of a child kept, bytes */
#define SRV_ROOTS_MAX 16	/* collector trees polled */

struct srv_child;
struct srv_tree;

struct srv {
	struct event_base *base;
	const char *self;		/* this binary (/proc/self/exe) */
	char jobs[4096];		/* realpath of --jobs */
	char descs[4096];		/* realpath of --descriptions */
	char secret[512];		/* the token; "" with --no-token */
	size_t secretlen;
	int authed;			/* the request being answered presented it */
	int tls;			/* the listening socket speaks TLS */
	struct ssl_ctx_st *ssl;		/* its context (SSL_CTX), or NULL */
	struct srv_conn *conns;		/* open connections (serve.c: the deadline) */
	struct event *sweep;		/* checks them every 250 ms */
	double deadline_s;		/* a request must be whole within it */
	char host_ok[3][300];		/* Host headers accepted (loopback, no token) */
	int allow_upload;
	int loopback;
	struct srv_child *children;	/* running and finished children */
	struct srv_tree *tree;
	int reports_running;		/* cache children (report and index) at once: 1 */
	int quicks_running;		/* quick reports alone (the list) at once: 1 */
};

/* ---- serve.c: replies ------------------------------------------------------ */

/* Reply code with a JSON {"error": msg} body. */
void srv_error(struct evhttp_request *req, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reply 200 (or code) with body b of the given content type. b is drained. */
void srv_reply(struct evhttp_request *req, int code, const char *type,
	       struct evbuffer *b);
/* Append s to b as a JSON string (quotes included). NULL gives null. */
void srv_json_str(struct evbuffer *b, const char *s);
/* 1 when s is a name this server accepts as one path component: 1 to
 * SRV_NAME_MAX bytes of [A-Za-z0-9._-], not starting with '.'. */
int srv_name_ok(const char *s);
/* The value of query key in req's URI, copied into out (cap bytes): 0, or -1
 * when absent or too long. */
int srv_query(struct evhttp_request *req, const char *key, char *out, size_t cap);
/* name in directory dfd (AT_FDCWD: a path) opened for reading without
 * following a link and without blocking (a FIFO planted there would hold
 * the server): the descriptor of a regular file, or -1 with errno (ELOOP
 * for a link, EINVAL for anything but a regular file). */
int srv_open_regular(int dfd, const char *name);

/* ---- child.c: child processes of this binary ------------------------------- */

enum srv_child_kind { SRV_CHILD_CACHE, SRV_CHILD_PLAN,
		      SRV_CHILD_LAUNCH, SRV_CHILD_EXPORT, SRV_CHILD_QUICK };

struct srv_child {
	struct srv_child *next;
	struct srv *srv;
	enum srv_child_kind kind;
	int id;				/* launches: the number in the URL */
	char key[4096 + 64];		/* what it works on (a job or plan dir) */
	char job[SRV_NAME_MAX + 1];	/* launches: the job directory's name */
	char root[300];			/* launches: the root receiver, once said */
	int tree_ended;			/* launches: its tree no longer polled */
	pid_t pid;
	int fd;				/* its stderr (and stdout unless to a file) */
	struct event *ev;
	char *out;			/* the last SRV_OUT_MAX bytes of output */
	size_t outlen;
	uint64_t outbase;		/* bytes dropped before out[0] */
	int eof, exited, status;	/* status: exit code, or 128+signal */
	struct evbuffer *result;	/* plans: the answer, JSON (or NULL) */
	char tmpdir[64];		/* plans: where it wrote (removed when done) */
	void (*done)(struct srv *, struct srv_child *);
};

/* Start argv (argv[0] = this binary's command word list) as a child with its
 * stdout into out_fd (-1: into the pipe with stderr). Returns the child,
 * kept on s->children, or NULL with a message in why. */
struct srv_child *srv_child_start(struct srv *s, enum srv_child_kind kind,
				  const char *key, const char *const argv[], int out_fd,
				  char *why, size_t whylen);
/* The same, run in directory cwd (NULL: the server's). */
struct srv_child *srv_child_start_in(struct srv *s, enum srv_child_kind kind,
				     const char *key, const char *const argv[], int out_fd,
				     const char *cwd, char *why, size_t whylen);
/* The newest child of kind working on key, or NULL. */
struct srv_child *srv_child_find(struct srv *s, enum srv_child_kind kind,
				 const char *key);
/* Launch number id, or NULL. */
struct srv_child *srv_child_by_id(struct srv *s, int id);
/* 1 while it runs (not exited or output not drained). */
int srv_child_running(const struct srv_child *c);
/* Reap exited children (SIGCHLD handler); finished report/plan children
 * older than the newest of their key are freed. */
void srv_child_reap(struct srv *s);
/* Stop every running child (SIGTERM to each by pid) and free all. */
void srv_child_stop_all(struct srv *s);

/* ---- jobs.c: the job browser ----------------------------------------------- */

void srv_jobs_list(struct srv *s, struct evhttp_request *req);
/* /api/jobs/NAME[/what]: rest is what follows NAME ("" or "/report.xml" ...) */
void srv_job(struct srv *s, struct evhttp_request *req, const char *name,
	     const char *rest);
/* The quick report (`tapestry report --xml --quick`) the cache child writes
 * beside report.xml before the post-processing. */
#define SRV_QUICK "report-quick.xml"

/* ---- tlindex.c: the timeline index ----------------------------------------- */

/* Build the timeline index of job dir into file out (written as out.tmp,
 * renamed). 0, or -1 after a message on stderr. Runs in a child process;
 * its anonymous memory is bounded whatever the job: fixed tables of lanes
 * and paths (at most 32 MiB of paths), and what grows with the job (a
 * 4-byte map per event, the messages, a lane's sort) in big arrays within
 * the post-processing's heap budget (manager/post/grow.h). */
int srv_tl_build(const char *dir, const char *out);
/* The same from the events of dir opened by the caller (consumed). */
struct mgr_events;
struct mgr_event;
int srv_tl_build_events(struct mgr_events *me, const char *dir, const char *out);
/* The same in steps, for a caller that reads the events itself (the cache
 * child: the report's pass over them): begin (NULL with why), srv_tl_add
 * for every event of one iteration of me and then once with NULL at its
 * clean end (the index fails without it), finish (frees b), or free. */
struct srv_tl_builder;
struct srv_tl_builder *srv_tl_begin(const char *out, char *why, size_t whylen);
int srv_tl_add(void *b, const struct mgr_event *ev);
int srv_tl_finish(struct srv_tl_builder *b, struct mgr_events *me, const char *dir,
		  const char *out);
void srv_tl_free(struct srv_tl_builder *b);
/* Answer a timeline request from index file path: query t0, t1 (ns), w
 * (pixels). Appends JSON to b: 0, or with why set -2 (a bad request), -3 (the
 * index is damaged or of another version: build it again), -1 (else). */
int srv_tl_query(const char *path, int64_t t0, int64_t t1, int w,
		 struct evbuffer *b, char *why, size_t whylen);
/* The event record number i of the index as JSON (detail pane). */
int srv_tl_event(const char *path, uint64_t i, struct evbuffer *b,
		 char *why, size_t whylen);
/* The profile of the window [t0, t1] (clamped to the job) as JSON: per
 * lane, per call type, the calls that start in it or are under t0 and their
 * time within it. Cost: a few blocks of records per lane, not the window's
 * events. 0, or -1/-3 as srv_tl_query. */
int srv_tl_range(const char *path, int64_t t0, int64_t t1, struct evbuffer *b,
		 char *why, size_t whylen);
/* The first call whose name holds name (any case; letters, digits, _) after
 * the call (after, after_i) in the order (start, record number), with how
 * many calls match in the job, as JSON ("next": null past the last). 0,
 * -2 for a bad name, -1/-3 as srv_tl_query. */
int srv_tl_find(const char *path, const char *name, int64_t after, int64_t after_i,
		struct evbuffer *b, char *why, size_t whylen);

/* ---- tree.c: the live collector tree --------------------------------------- */

/* Start the polling thread (one query per second of every root added). */
struct srv_tree *srv_tree_new(const char *secret_file, char *why, size_t whylen);
/* Poll addr ("ADDR:PORT") too, from now on; jobdir (or NULL): a launch's
 * job directory, whose own secret the polls use (not before it is known).
 * 0 or -1 (full). */
int srv_tree_add(struct srv_tree *t, const char *addr, const char *label,
		 const char *jobdir);
/* The launch of root addr ended: no longer polled (kept, shown as ended). */
void srv_tree_end(struct srv_tree *t, const char *addr);
/* The tree as JSON into b. */
void srv_tree_json(struct srv_tree *t, struct evbuffer *b);
void srv_tree_free(struct srv_tree *t);

/* ---- web_launch.c: descriptions, plans, launches --------------------------- */

void srv_desc_list(struct srv *s, struct evhttp_request *req);
void srv_desc(struct srv *s, struct evhttp_request *req, const char *name,
	      const char *rest);
void srv_launch_get(struct srv *s, struct evhttp_request *req, const char *id);
/* 0 when description name of --descriptions is one the owner may launch
 * (and edit into a copy): a regular file of the server's user that others
 * cannot write, in a directory others cannot change; else why says which. */
int srv_desc_trusted(const struct srv *s, const char *name, char *why, size_t whylen);

/* ---- descform.c: the launch form ------------------------------------------- */

/* GET /api/descriptions/NAME.xml/form: the fields the form edits, JSON. */
void srv_desc_form(struct srv *s, struct evhttp_request *req, const char *name);
/* POST /api/descriptions/NAME.xml/edit: the edited copy saved as a new
 * description (never over a file): 201, or 400/403/409 naming the field. */
void srv_desc_edit(struct srv *s, struct evhttp_request *req, const char *name);

#endif
