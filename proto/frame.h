/*
 * proto/frame.h - frames: the unit of every tapestry byte stream.
 *
 * Wire layout (little-endian), PROTO_FRAME_HDR = 16 bytes of header, then
 * `length` bytes of payload:
 *   0  u8[2] magic 'T' 'P'
 *   2  u8    version (PROTO_VERSION)
 *   3  u8    type (enum proto_msg_type)
 *   4  u32   length of the payload, <= the decoder's maximum
 *   8  u32   CRC-32C of the payload
 *  12  u32   CRC-32C of header bytes 0..11
 * The header has its own checksum so that a corrupt length is rejected
 * before anyone waits for (or allocates) the payload. docs/PROTOCOL.md.
 *
 * Pure functions over bytes: no I/O, no allocation, thread-safe.
 */
#ifndef TAPESTRY_PROTO_FRAME_H
#define TAPESTRY_PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_FRAME_HDR 16
#define PROTO_FRAME_MAX (16u << 20)	/* default maximum payload */

enum proto_msg_type {
	PROTO_MSG_HELLO = 1,	/* client introduces itself */
	PROTO_MSG_CHALLENGE = 2,	/* server nonce */
	PROTO_MSG_AUTH = 3,	/* client proof */
	PROTO_MSG_WELCOME = 4,	/* server accepts, server proof */
	PROTO_MSG_BATCH = 5,	/* encoded event records of one stream */
	PROTO_MSG_ACK = 6,	/* cumulative acknowledgement of a stream */
	PROTO_MSG_PING = 7,	/* clock sample request */
	PROTO_MSG_PONG = 8,	/* clock sample answer */
	PROTO_MSG_CLOCK = 9,	/* clock samples of an edge, passed upward */
	PROTO_MSG_STATS = 10,	/* collector state report */
	PROTO_MSG_LOSS = 11,	/* events lost, counted */
	PROTO_MSG_META = 12,	/* key/value metadata of a stream */
	PROTO_MSG_BYE = 13,	/* orderly end of a stream */
	PROTO_MSG_ERROR = 14,	/* the peer is closing because of an error */
	PROTO_MSG_KEY = 15,	/* a sensor's stream key proof, passed upward */
	PROTO_MSG_VERDICT = 16,	/* a parent's answer to a KEY it was sent */
	PROTO_MSG__MAX = 16
};

/* A decoded frame; payload points into the caller's buffer. */
struct proto_frame {
	uint8_t type;
	uint8_t version;
	uint32_t length;
	const uint8_t *payload;
};

/* Name of a message type ("BATCH"), or NULL when unknown. */
const char *proto_msg_name(unsigned type);

/* CRC-32C (Castagnoli) of buf, continuing from crc (start with 0):
 * proto_crc32c(proto_crc32c(0, a, n), b, m) is the CRC of a then b.
 * Uses the SSE4.2 instruction when the CPU has it. Thread- and
 * async-signal-safe; buf may be NULL when len is 0. */
uint32_t proto_crc32c(uint32_t crc, const void *buf, size_t len);

/* The same CRC, always by the portable slice-by-8 tables (for tests and
 * for comparing the two paths). */
uint32_t proto_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* 1 when proto_crc32c() uses the CPU's crc32 instruction, else 0. */
int proto_crc32c_hw(void);

/* Write the 16-byte header for a payload of len bytes into hdr (payload
 * may be NULL when len is 0).
 * Returns 0, PROTO_E_TYPE for an unknown type, PROTO_E_TOOBIG when len is
 * over PROTO_FRAME_MAX. */
int proto_frame_header(uint8_t type, const void *payload, size_t len,
		       uint8_t hdr[PROTO_FRAME_HDR]);

/* Header + payload into out[0..cap); *written = PROTO_FRAME_HDR + len.
 * PROTO_E_FULL when cap is too small (*written is then the size needed),
 * PROTO_E_TYPE, PROTO_E_TOOBIG as proto_frame_header(). The payload may
 * already sit at out + PROTO_FRAME_HDR (encode in place) or overlap out. */
int proto_frame_encode(uint8_t type, const void *payload, size_t len,
		       uint8_t *out, size_t cap, size_t *written);

/* Decode the frame at the start of buf[0..len), payload at most max bytes
 * (0: PROTO_FRAME_MAX). On success returns 0, fills *f and sets *consumed
 * to the frame's total size. PROTO_E_TRUNCATED when more bytes are needed
 * (*consumed is then the total size needed when the header is complete,
 * else PROTO_FRAME_HDR). Other codes: PROTO_E_MAGIC, PROTO_E_VERSION,
 * PROTO_E_TYPE, PROTO_E_TOOBIG, PROTO_E_CHECKSUM; they are fatal for the
 * stream (resynchronising is not possible) and set *consumed to 0.
 * Checks run in this order: header present, magic, header CRC (so a
 * corrupt length is never trusted), version, type, length <= max, payload
 * present, payload CRC. Never reads past len. */
int proto_frame_decode(const uint8_t *buf, size_t len, size_t max,
		       struct proto_frame *f, size_t *consumed);

#endif
