/*
 * proto/msg.h - the payloads of each message type, encoded and decoded.
 *
 * Every payload is a fixed little-endian layout, optionally followed by
 * length-prefixed strings (u16 length, bytes, no NUL) or arrays; layouts
 * are in docs/PROTOCOL.md. Decoders are strict: a payload whose length is
 * not exactly what its fields say is PROTO_E_LENGTH, a string over its
 * maximum PROTO_E_TOOBIG, a bad enum value PROTO_E_FIELD. Decoded strings
 * are copied and NUL-terminated; BATCH data points into the payload.
 *
 * Encoders write into out[0..cap) and set *written; PROTO_E_FULL when cap
 * is too small. All functions are pure and thread-safe.
 */
#ifndef TAPESTRY_PROTO_MSG_H
#define TAPESTRY_PROTO_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto/frame.h"

#define PROTO_NONCE 32
#define PROTO_MAC 32
#define PROTO_HOST_MAX 255
#define PROTO_NAME_MAX 1024
#define PROTO_KEY_MAX 64
#define PROTO_VALUE_MAX 4096
#define PROTO_META_MAX 64	/* key/value pairs per META or STATS */
#define PROTO_CLOCK_MAX 1024	/* samples per CLOCK */

enum proto_role {
	PROTO_ROLE_SENSOR = 1,
	PROTO_ROLE_COLLECTOR = 2,
	PROTO_ROLE_STATUS = 3,
};

struct proto_hello {
	uint8_t role;		/* enum proto_role */
	uint32_t pid;
	uint64_t id;		/* sensor: stream id; collector: node id */
	int32_t rank;		/* MPI world rank or -1 */
	uint32_t flags;
	uint8_t nonce[PROTO_NONCE];	/* client nonce */
	char host[PROTO_HOST_MAX + 1];
	char name[PROTO_NAME_MAX + 1];	/* executable or collector name */
};

struct proto_challenge {
	uint32_t flags;		/* PROTO_AUTH_REQUIRED ... */
	uint8_t nonce[PROTO_NONCE];
};
#define PROTO_AUTH_REQUIRED 0x1u
/* The server wants a KEY frame after the AUTH of a sensor (always set for
 * sensors), and whether it already knows the stream's verifier (then the
 * KEY carries the proof only). */
#define PROTO_CHALLENGE_KEY 0x2u
#define PROTO_CHALLENGE_KNOWN 0x4u

struct proto_auth {
	uint8_t mac[PROTO_MAC];
};

struct proto_welcome {
	uint32_t flags;
	uint64_t node_id;	/* id of the accepting node */
	uint8_t mac[PROTO_MAC];	/* server proof */
};

struct proto_batch {
	uint64_t stream;	/* stream id (one per traced process) */
	uint64_t seq;		/* 1, 2, ... per stream */
	uint32_t nrecords;
	uint32_t flags;
	const uint8_t *data;	/* codec output (proto/codec.h) */
	uint32_t datalen;
};

struct proto_ack {
	uint64_t stream;
	uint64_t seq;		/* every seq <= this one is acknowledged */
};

struct proto_ping {
	uint64_t id;
	uint64_t t_send;	/* pinger's clock at send (S) */
};

struct proto_pong {
	uint64_t id;
	uint64_t t_orig;	/* the ping's t_send, echoed */
	uint64_t t_recv;	/* ponger's clock at receipt (R_j) */
	uint64_t t_send;	/* ponger's clock at reply (S_j) */
};

struct proto_clock_sample {
	uint64_t s, rj, sj, r;	/* ref send, node recv, node send, ref recv */
};

/* Samples measured on the edge child -> parent; the parent is the reference. */
struct proto_clock {
	uint64_t child;		/* node/stream id of the child end */
	uint64_t parent;	/* node id of the reference end */
	uint32_t phase;		/* 0: start, 1: periodic, 2: end */
	uint32_t n;
	struct proto_clock_sample sample[PROTO_CLOCK_MAX];
};

struct proto_kv {
	char key[PROTO_KEY_MAX + 1];
	char value[PROTO_VALUE_MAX + 1];
};

/* META (strings) and STATS (values are decimal strings too). */
struct proto_meta {
	uint64_t id;		/* stream or node id */
	uint32_t n;
	struct proto_kv kv[PROTO_META_MAX];
};

struct proto_loss {
	uint64_t stream;
	uint64_t dropped;	/* events */
	uint64_t first_seq, last_seq;	/* batches affected, 0 if none */
};

struct proto_bye {
	uint64_t stream;
	uint64_t last_seq;
	uint32_t reason;	/* 0: normal exit, 1: signal, 2: exec */
};

/* A sensor's proof that it holds its stream's key (docs/PROTOCOL.md,
 * "Stream keys"): sent after AUTH, forwarded upward unchanged by a
 * collector that cannot check it. */
struct proto_key {
	uint64_t stream;
	uint32_t flags;		/* PROTO_KEY_VERIFIER */
	uint8_t server_nonce[PROTO_NONCE];	/* of the sensor's connection */
	uint8_t client_nonce[PROTO_NONCE];
	uint8_t verifier[PROTO_MAC];	/* zeros without PROTO_KEY_VERIFIER */
	uint8_t proof[PROTO_MAC];
};
#define PROTO_KEY_VERIFIER 0x1u
/* The sensor has never been welcomed for this stream (a hint, not proof:
 * a collector whose parent is away takes such a claim on its word until
 * the parent answers). */
#define PROTO_KEY_FIRST 0x2u

/* The answer to a KEY a collector passed up: the claim of the connection
 * whose server nonce this is was accepted (0) or refused (1). */
struct proto_verdict {
	uint64_t stream;
	uint32_t result;
	uint8_t server_nonce[PROTO_NONCE];
};
#define PROTO_VERDICT_OK 0
#define PROTO_VERDICT_REFUSED 1

struct proto_error {
	int32_t code;		/* enum proto_err */
	char message[PROTO_VALUE_MAX + 1];
};

/* One decoded message of any type. */
struct proto_msg {
	uint8_t type;
	union {
		struct proto_hello hello;
		struct proto_challenge challenge;
		struct proto_auth auth;
		struct proto_welcome welcome;
		struct proto_batch batch;
		struct proto_ack ack;
		struct proto_ping ping;
		struct proto_pong pong;
		struct proto_clock clock;
		struct proto_meta meta;	/* META and STATS */
		struct proto_loss loss;
		struct proto_bye bye;
		struct proto_error error;
		struct proto_key key;
		struct proto_verdict verdict;
	} u;
};

/* Encode m (its payload only, not the frame header) into out[0..cap).
 * The encoder refuses what the decoder would refuse: PROTO_E_TYPE for an
 * unknown m->type, PROTO_E_FIELD / PROTO_E_TOOBIG for a bad field, a count
 * over its maximum or a string not NUL-terminated within its maximum.
 * PROTO_E_FULL when cap is too small: *written is then the size needed,
 * so out = NULL, cap = 0 measures. */
int proto_msg_encode(const struct proto_msg *m, uint8_t *out, size_t cap,
		     size_t *written);

/* Encode m as a whole frame (header + payload); same codes and the same
 * measuring rule as proto_msg_encode(). */
int proto_msg_frame(const struct proto_msg *m, uint8_t *out, size_t cap,
		    size_t *written);

/* Encode m as a whole frame into a new malloc'd buffer of exactly the
 * frame's size: *out (the caller frees it) and *len. Codes as
 * proto_msg_encode(), plus PROTO_E_NOMEM; on error *out is NULL. */
/* Encode m as a whole frame into small[0..cap) when it fits, else into a
 * malloc'd buffer: *out is small or the allocation (free it when it is not
 * small), *len the frame's size. Codes as proto_msg_frame_alloc(). */
int proto_msg_frame_buf(const struct proto_msg *m, uint8_t *small, size_t cap,
			uint8_t **out, size_t *len);

int proto_msg_frame_alloc(const struct proto_msg *m, uint8_t **out,
			  size_t *len);

/* Decode the payload of frame f into *m (large: ~300 KiB, keep it off
 * small stacks). BATCH's data points into f->payload. Only the union
 * member of f->type is written, and of it only the encoded fields (kv[i]
 * and sample[i] for i < n); on error *m is partly written. Codes:
 * PROTO_E_TYPE, PROTO_E_LENGTH, PROTO_E_TOOBIG, PROTO_E_FIELD, PROTO_E_ARG
 * (f->payload NULL with a length). */
int proto_msg_decode(const struct proto_frame *f, struct proto_msg *m);

/* The value of key in a META or STATS (the last one when it repeats), NULL
 * when absent. */
const char *proto_meta_get(const struct proto_meta *m, const char *key);

/* 1 when a and b carry the same message (type and every encoded field;
 * BATCH data compared by content), else 0. For tests and fuzzing. */
int proto_msg_equal(const struct proto_msg *a, const struct proto_msg *b);

/* Size of a BATCH payload header before the codec data. */
#define PROTO_BATCH_HDR 24

#endif
