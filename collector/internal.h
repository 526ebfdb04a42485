/*
 * collector/internal.h - what the collector's files share: the frame held
 * in memory, connections, stream table, spill store, logging.
 *
 * Not installed. Tests include it to drive handlers without sockets.
 */
#ifndef TAPESTRY_COLLECTOR_INTERNAL_H
#define TAPESTRY_COLLECTOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "collector/collector.h"
#include "proto/clockid.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

/* ---- logging (collector/log.c) ---------------------------------------- */

enum col_log_level {
	COL_LOG_ERROR = 0, COL_LOG_WARN = 1, COL_LOG_INFO = 2, COL_LOG_DEBUG = 3
};

extern int col_log_level;

/* Set the log file (NULL: stderr). 0 or PROTO_E_IO. */
int col_log_open(const char *path);
/* Reopen the log file given to col_log_open (SIGHUP, after rotation). */
int col_log_reopen(void);
void col_log_close(void);
/* Level by name ("error", "warn", "info", "debug"), -1 when unknown. */
int col_log_parse(const char *name);
void col_log_write(int level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define COL_LOG(lvl, ...) do { \
	if ((lvl) <= col_log_level) \
		col_log_write((lvl), __func__, __VA_ARGS__); \
} while (0)
#define col_err(...) COL_LOG(COL_LOG_ERROR, __VA_ARGS__)
#define col_warn(...) COL_LOG(COL_LOG_WARN, __VA_ARGS__)
#define col_info(...) COL_LOG(COL_LOG_INFO, __VA_ARGS__)
#define col_debug(...) COL_LOG(COL_LOG_DEBUG, __VA_ARGS__)

/* ---- u64 -> pointer map (collector/map.c) ----------------------------- */

struct col_map {
	uint64_t *keys;
	void **vals;
	size_t cap;		/* power of two, 0 when empty */
	size_t n;
	size_t max;		/* entries at most */
};

#define COL_MAP_MAX (1u << 22)

void col_map_init(struct col_map *m, size_t max);
void col_map_clear(struct col_map *m);	/* frees the arrays, not values */
void *col_map_get(const struct col_map *m, uint64_t key);
/* Insert or replace; val not NULL. 0, PROTO_E_ARG (val NULL), PROTO_E_FULL
 * past max, PROTO_E_NOMEM. */
int col_map_put(struct col_map *m, uint64_t key, void *val);
/* Remove key; returns its value or NULL. */
void *col_map_del(struct col_map *m, uint64_t key);
/* Iterate: start with *i = 0; returns 1 with *key, *val, 0 at the end.
 * The map must not change during an iteration. */
int col_map_next(const struct col_map *m, size_t *i, uint64_t *key,
		 void **val);
/* Invariant check for tests: 0 or PROTO_E_STATE. */
int col_map_check(const struct col_map *m);

/* ---- frames held by the collector -------------------------------------- */

struct col_frame {
	struct col_frame *next;		/* queue or per-stream unacked list */
	struct col_frame *gprev, *gnext;	/* global unacked list */
	struct col *col;		/* for memory accounting */
	uint32_t refs;			/* owner + output evbuffers */
	uint8_t type;
	uint8_t sent;			/* in the unacked lists */
	uint32_t nrecords;		/* BATCH */
	uint64_t stream, seq;		/* BATCH; BYE: seq = last_seq */
	uint64_t word;			/* the claim taken on its word it came
					 * in under (col_stream.word), or 0 */
	size_t len;
	uint8_t data[];			/* header + payload */
};

/* New frame holding a copy of bytes[0..len) (a whole frame); the fields
 * type/stream/seq/nrecords are filled from m when given. Counted in the
 * collector's memory. Aborts on out of memory (a daemon may). */
struct col_frame *col_frame_new(struct col *c, const void *bytes, size_t len,
				const struct proto_msg *m);
/* New frame encoding m. NULL with *rc on an encoding error. */
struct col_frame *col_frame_msg(struct col *c, const struct proto_msg *m,
				int *rc);
void col_frame_ref(struct col_frame *f);
/* Drop one reference; the last frees f. */
void col_frame_unref(struct col_frame *f);

/* ---- spill store (collector/spill.c) ---------------------------------- */

/* A FIFO of frames on disk: DIR/spill-NNNNNNNNNN.tps files, each a 16-byte
 * header then whole frames (docs/modules/collector.md, "Spill format"). */
struct col_spill;

#define COL_SPILL_MAGIC "TPSPILL1"
#define COL_SPILL_HDR 16

/* Open the spill store in dir (created if missing); files left by an
 * earlier run are kept, in order, ahead of anything new. NULL with *rc. */
struct col_spill *col_spill_open(const char *dir, uint64_t quota,
				 size_t file_max, int *rc);
void col_spill_free(struct col_spill *s);
/* Append one whole frame. PROTO_E_FULL when over the quota (nothing
 * written), PROTO_E_IO (nothing kept). */
int col_spill_write(struct col_spill *s, const void *frame, size_t len);
/* Bytes on disk, and whether any frame is waiting. */
uint64_t col_spill_bytes(const struct col_spill *s);
int col_spill_empty(const struct col_spill *s);
/* Size of the oldest file (what the next col_spill_read_file returns). */
uint64_t col_spill_head_size(const struct col_spill *s);
/* What a read could not return: bytes skipped (a torn or corrupt tail),
 * and, when the file ends inside a BATCH whose frame and batch headers are
 * whole (a collector killed while spilling), which batch that was. */
struct col_spill_skip {
	uint64_t bytes;
	int torn;			/* stream, seq, nrecords are set */
	uint64_t stream, seq;
	uint32_t nrecords;
};

/* Read the oldest file (closing it for writing first when it is the one
 * being written), call fn for each frame in order, then delete the file.
 * A torn or corrupt tail is dropped and described in *skip (added to its
 * bytes; torn set when the tail was a BATCH that says which).
 * 0, PROTO_E_NOTFOUND when empty, PROTO_E_IO. */
int col_spill_read_file(struct col_spill *s,
			void (*fn)(void *arg, const uint8_t *frame, size_t len),
			void *arg, struct col_spill_skip *skip);
/* A place in the spill's order: file number, offset in it. */
struct col_spill_pos {
	uint64_t file, off;
};
/* Where the next frame written goes, or after (every frame written
 * before is before it); where the frame read goes (inside
 * col_spill_read_file's fn: that frame; else the next to read). Zero
 * without a spill store. */
void col_spill_wpos(const struct col_spill *s, struct col_spill_pos *p);
void col_spill_rpos(const struct col_spill *s, struct col_spill_pos *p);
int col_spill_before(const struct col_spill_pos *a,
		     const struct col_spill_pos *b);

/* ---- connections ------------------------------------------------------ */

enum col_conn_state {
	CS_HELLO = 0,		/* waiting for HELLO */
	CS_AUTH,		/* CHALLENGE sent, waiting for AUTH */
	CS_KEY,			/* a sensor's AUTH taken, waiting for KEY */
	CS_VERDICT,		/* its KEY sent up, waiting for the VERDICT */
	CS_STREAM,		/* WELCOME sent */
	CS_CLOSING,		/* flushing output, then freed */
};

struct col_conn {
	struct col *col;
	struct col_conn *prev, *next;
	struct bufferevent *bev;
	struct event *hs_timer;
	enum col_conn_state state;
	uint8_t role;
	uint64_t peer_id;
	uint8_t client_nonce[PROTO_NONCE];
	uint8_t server_nonce[PROTO_NONCE];
	char peer[64];
	uint64_t serial;
	int tls;			/* accepted on the TLS listener */
	uint32_t pid;			/* the HELLO's (as the peer says; STATS stream_list) */
	uint32_t uid;			/* loopback peers: owner of the socket */
	int has_uid;
	size_t reserved;		/* bytes reserved for a large frame */
	int mem_wait;			/* waiting for memory to read one */
	int wait_logged;
	int write_dead;			/* a write failed: reading to the end */
	int32_t rank;
	char host[64];
	struct proto_key claim;		/* CS_VERDICT: the KEY sent up */
};

/* Per-stream state (both modes). */
struct col_stream {
	uint64_t id;
	struct col_conn *owner;		/* connection the stream came from */
	struct col_frame *ua_head, *ua_tail;	/* sent, not acknowledged */
	uint64_t last_seq;		/* root: last stored seq */
	uint64_t fwd_seq;		/* highest BATCH seq taken from below */
	uint64_t loss_seq;		/* highest seq a LOSS named */
	uint64_t lost;			/* root: batches missing */
	uint64_t nospace_batches;	/* root: not stored, the disk full */
	uint64_t nospace_events;	/* ... their records (exact) */
	int bye;
	uint64_t bye_seq;		/* BYE's last_seq */
	uint64_t events;		/* in its batches received here */
	uint8_t verifier[PROTO_MAC];	/* its stream key's (key.c) */
	int has_verifier;
	struct col_conn *claim_via;	/* the child a KEY came from (its
					 * VERDICT goes back there) */
	/* The claim taken on its word here (key.c), numbered (c->words; the
	 * frames that came in under it carry the number), the spill's
	 * place when it began and, once refused above, when it was: its
	 * frames spilled between the two are dropped when read, no other
	 * frame of the stream (a restarted collector's spill holds the
	 * real sensor's). */
	uint64_t word;
	struct col_spill_pos word_from, word_to;
	int word_refused;
	/* A KEY not answered yet by the parent (key.c): of a sensor taken
	 * on its word here (its frames are then held, not sent up, until
	 * the answer), or passed on from a child (claim_via). */
	struct proto_key *claim;
	struct col_frame *held_head, *held_tail;
};

enum col_up_state {
	UP_DOWN = 0, UP_CONNECTING, UP_CHALLENGE, UP_WELCOME, UP_STREAM
};

struct col_clock {
	unsigned rounds_left;
	uint32_t phase;
	uint64_t ping_id;
	uint64_t t_sent;
	int outstanding;
	unsigned end_rounds;		/* end-of-run round asked during another */
	struct proto_msg *msg;		/* CLOCK: samples gathered so far */
};

struct col {
	struct event_base *base;
	struct col_config cfg;
	char name[PROTO_NAME_MAX + 1];
	char host[PROTO_HOST_MAX + 1];
	struct proto_clockid clockid;	/* which CLOCK_MONOTONIC it reads */
	uint64_t node_id;
	uint64_t parent_id;
	int root;
	struct evconnlistener *listener;
	struct evconnlistener *tls_listener;
	struct event *accept_retry;
	unsigned port, tls_port;
	struct ssl_ctx_st *tls_srv;	/* SSL_CTX of the TLS listener */
	struct ssl_ctx_st *tls_cli;	/* SSL_CTX of the link to the parent */
	struct col_conn *conns;
	uint64_t conn_serial;
	struct col_map streams;		/* id -> struct col_stream */
	struct col_map nodes;		/* node id -> STATS col_frame */
	struct proto_msg *msg;		/* decode scratch (large) */
	struct col_stats st;
	uint64_t mem_used;		/* bytes of frames alive */
	uint64_t mem_reserved;		/* bytes reserved for large frames */
	unsigned mem_waiters;		/* connections with mem_wait set */
	struct event *mem_ev;		/* retries them (col_conn_mem_cb) */
	char refused_by[PROTO_VALUE_MAX + 1];	/* the last refusals */

	/* root */
	struct proto_jobdir_w *jobdir;
	int meta_dirty;
	int nospace;			/* root: the job's disk was full once */
	uint64_t nospace_batches, nospace_events;	/* all streams */
	char *reserve;			/* root: DIR/reserve, room kept for the
					 * metadata that says so (root.c) */
	uint64_t root_unkept;		/* root: frames neither stored nor
					 * counted (table full, append error) */
	struct col_spool_file *spool_files;	/* node: taken, not yet
						 * acknowledged (spool.c) */

	/* upward link */
	struct bufferevent *up;
	enum col_up_state up_state;
	int up_tearing;			/* evbuffer cleanups are not writes */
	int up_ever;			/* connected at least once */
	unsigned backoff_ms;
	struct event *up_retry;
	uint8_t up_nonce[PROTO_NONCE];
	uint8_t up_server_nonce[PROTO_NONCE];
	struct col_frame *q_head, *q_tail;	/* to send, in order */
	uint64_t q_bytes, q_records;
	int q_urgent;			/* a BYE or a drain: flush now */
	struct event *flush_timer;
	int flush_armed;
	struct col_frame *ua_head, *ua_tail;	/* global unacked, send order */
	struct col_frame *t_head, *t_tail;	/* behind the spill, in memory */
	uint64_t ua_count;
	uint64_t held_frames;		/* of streams taken on their word */
	uint64_t words;			/* claims taken on their word */
	struct col_spill *spill;
	struct proto_msg *msg2;		/* decode scratch for spill refills */
	struct sockaddr_storage parent_sa;
	int parent_salen;
	struct col_clock clock;
	/* the last clock round's sample of least round trip (STATS): the
	 * parent's clock minus ours, and that round trip; rtt 0: none yet */
	int64_t clock_offset_ns;
	uint64_t clock_rtt_ns;
	struct event *clock_timer;
	struct event *keepalive_timer;
	struct proto_codec *codec;
	struct proto_event *scratch_ev;	/* recompression and filtering */
	uint32_t *filter;		/* copy of cfg.filter, or NULL */
	uint64_t *filter_seen;		/* per type, for sampling */
	size_t scratch_cap;
	uint8_t *scratch_out;

	int freeing;			/* col_free: connections closing */

	/* backpressure */
	int paused;
	struct event *resume_ev;

	/* timers and drain */
	struct event *stats_timer;
	uint64_t rate_t, rate_events, rate_bytes;
	double ev_rate, byte_rate;
	int draining;
	int drain_clock_done;
	int drain_fired;
	void (*drain_cb)(struct col *, int, void *);
	void *drain_arg;
	struct event *drain_ev;
	int drain_rc;

	/* test hook: makes the upward bufferevent (NULL: TCP connect) */
	struct bufferevent *(*up_connector)(struct col *c, void *arg);
	void *up_connector_arg;
};

/* "IPv4:PORT" or "[IPv6]:PORT" (numeric, port 0 allowed) into ss.
 * 0 or PROTO_E_ARG. */
int col_parse_addr(const char *text, struct sockaddr_storage *ss, int *len);

/* CLOCK_MONOTONIC in ns. */
uint64_t col_now_ns(void);

/* conn.c: attach an accepted (or paired) bufferevent as a child
 * connection; the collector owns bev from now on. */
struct col_conn *col_conn_attach(struct col *c, struct bufferevent *bev,
				 const char *peer);
/* Orderly end (after the ACK of a client's own BYE): stop reading, close
 * once the output is written. Returns 1 when cn is freed already. */
int col_conn_finish(struct col_conn *cn);
/* Close and free one connection (its streams lose their owner). */
void col_conn_close(struct col_conn *cn, const char *why);
/* Process frames already buffered on cn (after a resume). Returns 1 when
 * cn has been closed and freed. */
int col_conn_process(struct col_conn *cn);
/* 1 when a sensor's streaming connection holds bytes not yet taken (in
 * its input buffer or the kernel's receive queue): a drain waits for them
 * (a sensor hands its end over without waiting for the ACK). */
int col_conn_unread(const struct col *c);
/* Write msg to a bufferevent as a frame. */
int col_send_msg(struct bufferevent *bev, const struct proto_msg *m);
/* Read one whole frame of at most max payload bytes off in: 1 with *f (a
 * new col_frame, c->msg decoded), 0 when more bytes are needed, a
 * negative code for a bad frame. */
int col_read_frame(struct col *c, struct evbuffer *in, size_t max,
		   struct col_frame **f);
/* Count and log a frame or connection refused because it spoke for a
 * stream that is not its own or carried a seq out of the window
 * (docs/SECURITY.md, "Streams"): who (address, role, HELLO id and pid,
 * uid of a loopback peer) and what, kept for STATS "refused_by". */
void col_refuse(struct col_conn *cn, uint64_t stream, uint64_t seq,
		const char *why);
/* Send ERROR code (why), stop reading, free once the output is flushed.
 * Returns 1 when cn has been freed already. */
int col_conn_fail(struct col_conn *cn, int code, const char *why);
/* Finish a handshake: WELCOME (the stream's, for a sensor: key.c). 0 or
 * a code (PROTO_E_CLOSED: a status client served and to be closed). */
int col_conn_welcome(struct col_conn *cn);

/* key.c: stream keys (docs/PROTOCOL.md, "Stream keys"). */
/* CHALLENGE flags for a sensor's HELLO of stream id. */
uint32_t col_key_flags(struct col *c, uint64_t id);
/* The KEY of sensor connection cn (in CS_KEY): WELCOME, refusal, or the
 * question to the parent (cn then waits in CS_VERDICT). 0 or a code. */
int col_key_claim(struct col_conn *cn, const struct proto_key *k);
/* A KEY passed up by child collector cn: answered (root), or passed on. */
void col_key_from_below(struct col_conn *cn, const struct proto_key *k);
/* A VERDICT from the parent; f is its frame (passed down as it is). */
void col_key_verdict(struct col *c, const struct proto_verdict *v,
		     const struct col_frame *f);
/* The link to the parent is up: ask again for every claim waiting. */
void col_key_resend(struct col *c);
/* up.c: forget the frames that came in under the claim of s taken on its
 * word (queued, held; spilled ones when read), none other: that claim was
 * refused. */
void col_up_purge(struct col *c, struct col_stream *s);
/* 1 while frames of s's refused claim may still be in the spill (the
 * stream is kept until they are read and dropped). */
int col_up_word_spilled(const struct col *c, const struct col_stream *s);
/* up.c: the parent said yes: the frames of s held back go up, first. */
void col_up_release(struct col *c, struct col_stream *s);
/* Free a stream's state (not its frames in the upward lists). */
void col_stream_free(struct col_stream *s);

/* Memory given back (a frame freed, a reservation released): let the
 * connections waiting to read a large frame try again. */
void col_conn_mem_freed(struct col *c);
void col_conn_mem_cb(evutil_socket_t fd, short what, void *arg);
/* Stream state, created when missing (NULL when the table is full). */
struct col_stream *col_stream_get(struct col *c, uint64_t id, int create);
void col_stream_gc(struct col *c, struct col_stream *s);

/* tls.c: TLS contexts from cfg (none when no TLS file is given). 0,
 * PROTO_E_ARG (some files missing), PROTO_E_IO (unreadable, logged). */
int col_tls_init(struct col *c);
void col_tls_fini(struct col *c);
/* An OpenSSL bufferevent accepting on fd (owned from now on), or NULL. */
struct bufferevent *col_tls_accept(struct col *c, evutil_socket_t fd);
/* An OpenSSL bufferevent to connect with bufferevent_socket_connect. */
struct bufferevent *col_tls_connect(struct col *c);
/* The reason a TLS bufferevent failed (OpenSSL's queue, the certificate
 * check, or the socket error), written into buf. */
const char *col_tls_error(struct bufferevent *bev, char *buf, size_t len);
/* Common name of the peer's certificate ("" when none). */
const char *col_tls_peer(struct bufferevent *bev, char *buf, size_t len);

/* up.c: the upward link and its queue. */
int col_up_init(struct col *c);		/* its events */
void col_up_fini(struct col *c);
int col_up_start(struct col *c);
void col_up_stop(struct col *c);
/* Take a frame from below (ownership passes). */
void col_up_enqueue(struct col *c, struct col_frame *f);
/* Flush the queue now if the link is up. */
void col_up_flush(struct col *c);
/* Check backpressure after memory or spill use changed. */
void col_up_pressure(struct col *c);
/* 1 when nothing is queued, spilled or waiting for an ACK. */
int col_up_idle(const struct col *c);
void col_up_clock_round(struct col *c, uint32_t phase, unsigned rounds);
/* Test hook: replace the TCP connect of the upward link. */
void col_set_up_connector(struct col *c,
			  struct bufferevent *(*fn)(struct col *, void *),
			  void *arg);

/* root.c: the job directory sink. */
int col_root_open(struct col *c);
void col_root_close(struct col *c);
/* Store one frame from cn (root mode); sends the ACKs. Returns 1 when cn
 * sent the BYE of its own stream and is to be finished. */
int col_root_frame(struct col *c, struct col_conn *cn, struct col_frame *f,
		   const struct proto_msg *m);

/* spool.c: the sensors' spool (--spool, issue 33). */
struct col_spool_file;
/* Take every spool file of dir (at start): stored (root; the files removed
 * once synced) or queued upward (the files kept until acknowledged). */
void col_spool_take(struct col *c, const char *dir);
/* An ACK(stream, seq) from the parent: remove the spool files it ends. */
void col_spool_acked(struct col *c, uint64_t stream, uint64_t seq);
/* A drain ended with nothing left unsent: remove the files that wait for
 * no ACK (their frames are written); the others stay. */
void col_spool_drained(struct col *c);
/* Forget the files taken (they stay on disk). */
void col_spool_free(struct col *c);

/* collector.c */
/* A STATS message describing c now (into c->msg). */
void col_stats_msg(struct col *c, struct proto_msg *m);
/* Remember the latest STATS frame of a node (for status clients). */
void col_remember_stats(struct col *c, struct col_frame *f, uint64_t node);
/* Called when the upward queue may have become idle during a drain. */
void col_drain_check(struct col *c);

#endif
