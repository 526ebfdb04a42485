/*
 * collector/collector.h - the embeddable collector: receive, buffer,
 * forward (or store) frames, route acknowledgements back down.
 *
 * One struct col runs inside a caller's libevent event_base, in that
 * base's thread only (nothing here is thread-safe). It listens for
 * sensors, child collectors and status clients, and either forwards what
 * they send to a parent collector (cfg.parent) or, as the root, writes it
 * to a job directory (cfg.output). tapestry-collector (collector/main.c)
 * is a thin main() around it; the manager embeds a root receiver the same
 * way. docs/modules/collector.md describes the daemon.
 */
#ifndef TAPESTRY_COLLECTOR_H
#define TAPESTRY_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct col;

struct col_config {
	const char *listen;		/* "ADDR:PORT", port 0: any free port */
	const char *parent;		/* "ADDR:PORT" of the parent, or NULL */
	const char *output;		/* root mode: job directory */
	const void *secret;		/* job secret (NULL, 0: the empty key) */
	size_t secretlen;
	uint64_t node_id;		/* 0: random */
	const char *name;		/* sent in HELLO; NULL: "collector" */
	size_t flush_bytes;		/* forward when this much is queued */
	uint32_t flush_records;		/* ... or this many events */
	unsigned flush_ms;		/* ... or the oldest is this old */
	int zstd_level;			/* recompress raw batches; 0: never */
	const char *spill_dir;		/* NULL: no spilling */
	const char *spool;		/* sensors' TAPESTRY_SPOOL: taken at
					 * start (col_spool_take), or NULL */
	uint64_t spill_quota;		/* bytes of spill files at most */
	uint64_t mem_cap;		/* bytes of frames held in memory */
	unsigned clock_period_ms;	/* 0: no periodic clock rounds */
	unsigned clock_rounds;		/* ping-pongs at start (16) */
	unsigned stats_period_ms;	/* 0: no periodic STATS */
	unsigned handshake_ms;		/* close a connection stuck this long */
	unsigned idle_ms;		/* close a streaming child silent this
					 * long (0: never; healthy ones ping) */
	unsigned keepalive_ms;		/* the link to the parent sends a PING
					 * this often when neither the clock
					 * nor the STATS period is as short
					 * (the parent's idle timeout; 0:
					 * never) */
	uint64_t seq_window;		/* root: a BATCH more than this past the
					 * last stored (or LOSS-named) seq of
					 * its stream is refused */
	size_t frame_max;		/* largest payload accepted */
	size_t segment_max;		/* job directory segment size (0: default) */
	/* Filters, indexed by event type (proto/events.def), NULL: none.
	 * 0 keeps the type, 1 drops it, N >= 2 keeps one event in N. Only
	 * node and gateway collectors filter; filtered events are counted
	 * (STATS "filtered") and never reported as lost. */
	const uint32_t *filter;
	/* TLS between collectors (collector/tls.c): all three files or none.
	 * With them the link to parent is TLS 1.3 (the parent's certificate
	 * must chain to tls_ca), and tls_listen, when set, is a second
	 * listener that accepts only TLS 1.3 clients with a certificate of
	 * tls_ca. listen stays in clear (sensors on this host). */
	const char *tls_cert;		/* PEM certificate of this collector */
	const char *tls_key;		/* PEM private key */
	const char *tls_ca;		/* PEM certificate of the job's CA */
	const char *tls_listen;		/* "ADDR:PORT" for TLS children, or NULL */
};

/* Defaults of every field (listen 127.0.0.1:7450, no parent, no output). */
void col_config_default(struct col_config *cfg);

/* What a collector has done so far. */
struct col_stats {
	uint64_t node_id;
	uint64_t children;		/* connections in streaming state */
	uint64_t streams;		/* streams known */
	uint64_t frames_in, batches_in, events_in, bytes_in;
	uint64_t frames_up, bytes_up;	/* forwarded (resends included) */
	uint64_t buffered_bytes;	/* frames held in memory */
	uint64_t spilled_bytes;		/* bytes in spill files now */
	uint64_t spilled_total;		/* bytes ever written to spill */
	uint64_t unacked_frames;	/* sent upward, not acknowledged */
	uint64_t dropped_events, dropped_batches;	/* counted, LOSS sent */
	uint64_t filtered_events;	/* removed by --drop / --sample */
	uint64_t reconnects;		/* upward link re-established */
	uint64_t stored_batches;	/* root: batches appended */
	uint64_t dup_batches;		/* root: duplicates acknowledged only */
	uint64_t gap_batches;		/* root: batches never received */
	uint64_t rejected;		/* connections refused (ERROR sent): */
	uint64_t rejected_secret;	/* ... a proof of the job secret failed */
	uint64_t rejected_key;		/* ... a stream key refused */
	uint64_t rejected_version;	/* ... a protocol version not spoken */
	uint64_t abandoned;		/* connections that carried no frame
					 * past the handshake and were not
					 * refused: closed by the peer during
					 * it (a process that ended or exec'd,
					 * a probe), handshake or idle
					 * timeouts; not a loss (issue 33) */
	uint64_t cut_frames;		/* closed by the peer inside a frame
					 * after the handshake (a killed
					 * sender: its stream has no end) */
	uint64_t refused;		/* frames for another's stream, or
					 * with a seq out of the window */
	uint64_t pauses;		/* times reading from children stopped */
	int parent_up;			/* 1 when the upward link is streaming */
	int paused;			/* 1 while children are not read */
};

/* Start a collector in base: bind the listener, open the job directory
 * (root) or start connecting to the parent. NULL on failure with *rc set
 * (PROTO_E_ARG for a bad address or an option combination, PROTO_E_IO when
 * the address cannot be bound or the directories cannot be used,
 * PROTO_E_NOMEM, or the job directory's code). cfg is copied; its strings
 * must stay valid while the collector lives. */
struct col *col_new(struct event_base *base, const struct col_config *cfg,
		    int *rc);

/* Close every connection, stop timers, close the job directory (root) and
 * free c. Frames not yet acknowledged are lost from this collector (their
 * senders still hold them); spill files stay on disk and are replayed by
 * the next collector started on the same spill directory. NULL: no-op. */
void col_free(struct col *c);

/* Finish: stop accepting connections, forward everything queued or
 * spilled, run the end clock round, and call done(c, rc, arg) once every
 * forwarded batch is acknowledged (rc 0; root: once the job directory is
 * synced, rc its code). Children still connected keep being served.
 * done is called from the event loop, never from inside col_drain. Returns
 * 0 or PROTO_E_STATE when a drain is already running. */
int col_drain(struct col *c, void (*done)(struct col *, int rc, void *arg),
	      void *arg);

/* Current figures (never fails). */
void col_get_stats(const struct col *c, struct col_stats *st);

/* The port the listener is bound to (useful with port 0). */
unsigned col_port(const struct col *c);

/* The port of the TLS listener (0 when there is none). */
unsigned col_tls_port(const struct col *c);

/* This collector's node id. */
uint64_t col_node_id(const struct col *c);

#endif
