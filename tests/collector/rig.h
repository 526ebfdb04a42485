/*
 * tests/collector/rig.h - a collector driven without sockets, for the
 * collector's suites: a rig (event base, collector, scratch directory),
 * child connections as bufferevent pairs, messages in and out, the
 * handshake, batches.
 */
#ifndef TAPESTRY_TESTS_COLLECTOR_RIG_H
#define TAPESTRY_TESTS_COLLECTOR_RIG_H

#include <stddef.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "collector/internal.h"

struct rig {
	struct event_base *base;
	struct col *col;
	struct col_config cfg;
	char dir[64];
	char job[128];
};

extern struct proto_msg msg;		/* the last message recv_m read */
extern uint8_t cnonce[PROTO_NONCE];	/* the client nonce hello sends */

/* Run the event loop a little, without blocking. */
void spin(struct event_base *b);
/* Send m on bev (asserts it was queued). */
void send_m(struct bufferevent *bev, const struct proto_msg *m);
/* Next message on bev's input: 1 with msg filled, 0 when none. */
int recv_m(struct bufferevent *bev);
/* A collector on a new base, root (writing r->job) or not. */
void rig_up(struct rig *r, int root);
void rm_tree(const char *path);
void rig_down(struct rig *r);
/* A child connection: returns the test's end. */
struct bufferevent *child(struct rig *r);
void hello(struct bufferevent *t, uint8_t role, uint64_t id);
/* Full handshake with secret key and the stream key of id: how, 0 or
 * RIG_FORGED (a forger's key) | RIG_FIRST (the KEY says the stream is
 * new); returns 1 when WELCOME came. */
#define RIG_FORGED 1
#define RIG_FIRST 2
int handshake_key(struct rig *r, struct bufferevent *t, uint64_t id,
		  const char *key, int how);
/* The same, with the stream's own key; on a forwarder the stream's
 * verifier is registered first (rig_know). */
int handshake(struct rig *r, struct bufferevent *t, uint64_t id, const char *key);
/* The verifier of the rig's stream key of id (forged: another key). */
void rig_verifier(uint64_t id, int forged, uint8_t v[PROTO_MAC]);
/* The collector knows stream id's verifier (as after a parent's yes). */
void rig_know(struct rig *r, uint64_t id);
/* The collector's child connections. */
size_t nconns(struct rig *r);
/* Send msg on to, run the loop, read the answer on from into msg and
 * assert it is of type want. */
void roundtrip(struct rig *r, struct bufferevent *to, struct bufferevent *from, int want);
/* Run the loop, read the next message on t and assert it is an ERROR
 * with code. */
void expect_error(struct rig *r, struct bufferevent *t, int code);
/* A BATCH of n events (n <= 64) of stream, seq. */
void send_batch(struct bufferevent *t, uint64_t stream, uint64_t seq, uint32_t n);
/* A sensor's spool file at path (docs/FORMAT.md, "Sensor spool"): a
 * BATCH of 4 events of stream for each of seqs[0..n), then a BYE when
 * bye is set. */
void rig_spool_file(const char *path, uint64_t stream, const uint64_t *seqs,
		    int n, int bye);

#endif
