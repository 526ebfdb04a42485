/*
 * proto/frame.c - frame header encoding and the stream frame decoder.
 *
 * Layout in proto/frame.h and docs/PROTOCOL.md ("Frames"). The decoder is a
 * pure function over bytes: it never reads past len, never allocates, and
 * checks the header CRC before it believes the length.
 */
#include <stdint.h>
#include <string.h>

#include "proto/error.h"
#include "proto/frame.h"

#define MAGIC0 'T'
#define MAGIC1 'P'

static const char *const msg_names[PROTO_MSG__MAX + 1] = {
	[PROTO_MSG_HELLO] = "HELLO",
	[PROTO_MSG_CHALLENGE] = "CHALLENGE",
	[PROTO_MSG_AUTH] = "AUTH",
	[PROTO_MSG_WELCOME] = "WELCOME",
	[PROTO_MSG_BATCH] = "BATCH",
	[PROTO_MSG_ACK] = "ACK",
	[PROTO_MSG_PING] = "PING",
	[PROTO_MSG_PONG] = "PONG",
	[PROTO_MSG_CLOCK] = "CLOCK",
	[PROTO_MSG_STATS] = "STATS",
	[PROTO_MSG_LOSS] = "LOSS",
	[PROTO_MSG_META] = "META",
	[PROTO_MSG_BYE] = "BYE",
	[PROTO_MSG_ERROR] = "ERROR",
	[PROTO_MSG_KEY] = "KEY",
	[PROTO_MSG_VERDICT] = "VERDICT",
};

const char *proto_msg_name(unsigned type)
{
	return type <= PROTO_MSG__MAX ? msg_names[type] : NULL;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int proto_frame_header(uint8_t type, const void *payload, size_t len,
		       uint8_t hdr[PROTO_FRAME_HDR])
{
	if (!proto_msg_name(type))
		return PROTO_E_TYPE;
	if (len > PROTO_FRAME_MAX)
		return PROTO_E_TOOBIG;
	if (len && !payload)
		return PROTO_E_ARG;
	hdr[0] = MAGIC0;
	hdr[1] = MAGIC1;
	hdr[2] = PROTO_VERSION;
	hdr[3] = type;
	put32(hdr + 4, (uint32_t)len);
	put32(hdr + 8, proto_crc32c(0, payload, len));
	put32(hdr + 12, proto_crc32c(0, hdr, 12));
	return 0;
}

int proto_frame_encode(uint8_t type, const void *payload, size_t len,
		       uint8_t *out, size_t cap, size_t *written)
{
	uint8_t hdr[PROTO_FRAME_HDR];
	int rc;

	rc = proto_frame_header(type, payload, len, hdr);
	if (rc)
		return rc;
	*written = PROTO_FRAME_HDR + len;
	if (cap < PROTO_FRAME_HDR + len)
		return PROTO_E_FULL;
	/* The payload may already be in place at out + 16 (proto_msg_frame),
	 * or overlap the header's bytes: move it first, header second. */
	if (len && (const uint8_t *)payload != out + PROTO_FRAME_HDR)
		memmove(out + PROTO_FRAME_HDR, payload, len);
	memcpy(out, hdr, PROTO_FRAME_HDR);
	return 0;
}

int proto_frame_decode(const uint8_t *buf, size_t len, size_t max,
		       struct proto_frame *f, size_t *consumed)
{
	uint32_t plen;

	if (max == 0)
		max = PROTO_FRAME_MAX;
	if (max > SIZE_MAX - PROTO_FRAME_HDR)	/* header + payload fits size_t */
		max = SIZE_MAX - PROTO_FRAME_HDR;
	*consumed = 0;
	if (len < PROTO_FRAME_HDR) {
		*consumed = PROTO_FRAME_HDR;
		return PROTO_E_TRUNCATED;
	}
	if (buf[0] != MAGIC0 || buf[1] != MAGIC1)
		return PROTO_E_MAGIC;
	/* PROTOCOL.md: the header CRC is checked before any other field, so a
	 * flipped length bit is a CHECKSUM error, not a long wait. */
	if (proto_crc32c(0, buf, 12) != get32(buf + 12))
		return PROTO_E_CHECKSUM;
	if (buf[2] != PROTO_VERSION)
		return PROTO_E_VERSION;
	if (!proto_msg_name(buf[3]))
		return PROTO_E_TYPE;
	plen = get32(buf + 4);
	if (plen > max)
		return PROTO_E_TOOBIG;
	if (len - PROTO_FRAME_HDR < plen) {
		*consumed = PROTO_FRAME_HDR + (size_t)plen;
		return PROTO_E_TRUNCATED;
	}
	if (proto_crc32c(0, buf + PROTO_FRAME_HDR, plen) != get32(buf + 8))
		return PROTO_E_CHECKSUM;
	f->version = buf[2];
	f->type = buf[3];
	f->length = plen;
	f->payload = buf + PROTO_FRAME_HDR;
	*consumed = PROTO_FRAME_HDR + (size_t)plen;
	return 0;
}
