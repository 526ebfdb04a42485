/*
 * proto/codec.h - the batch codec: event records <-> compressed bytes.
 *
 * Encoding (version 3): timestamps delta-encoded (t_start against the
 * previous record's t_end, t_end as a duration), duration, gap and
 * arguments predicted by the last record of the same (type, previous
 * type), COMPUTE's volume against its CPU time times its rate, records
 * byte-plane shuffled with every plane but the type's grouped by (type,
 * previous type), then zstd with its content checksum. Versions 1 and 2
 * are still decoded. A 24-byte codec header says how. Byte layout in
 * docs/modules/proto-codec.md ("Batch encoding"). The round trip is exact; any corrupt
 * input is rejected as a whole (PROTO_E_CODEC, PROTO_E_FORMAT,
 * PROTO_E_CHECKSUM ...), never half-decoded.
 *
 * A struct proto_codec holds reusable zstd contexts and scratch space; one
 * per thread (not thread-safe), no locks.
 */
#ifndef TAPESTRY_PROTO_CODEC_H
#define TAPESTRY_PROTO_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/event.h"

#define PROTO_CODEC_MAX_RECORDS (1u << 20)	/* per batch */
#define PROTO_CODEC_LEVEL_NONE 0	/* delta + shuffle, no zstd */

struct proto_codec;

/* New codec context compressing at zstd level (PROTO_CODEC_LEVEL_NONE, or
 * 1..19). NULL on out of memory. */
struct proto_codec *proto_codec_new(int level);

/* Free c; NULL is a no-op. */
void proto_codec_free(struct proto_codec *c);

/* Upper bound of the encoded size of n records. */
size_t proto_codec_bound(size_t n);

/* Encode ev[0..n) into out[0..cap), *written = bytes used. n may be 0;
 * PROTO_E_TOOBIG over PROTO_CODEC_MAX_RECORDS, PROTO_E_FULL when cap is
 * too small, PROTO_E_NOMEM. */
int proto_codec_encode(struct proto_codec *c, const struct proto_event *ev,
		       size_t n, void *out, size_t cap, size_t *written);

/* Number of records an encoded batch holds, from its header only
 * (validated: version, sizes, limits). */
int proto_codec_peek(const void *in, size_t len, uint32_t *nrecords);

/* Decode in[0..len) into out[0..max); *n = records decoded. PROTO_E_FULL
 * when max is too small (nothing decoded), other codes for corrupt input. */
int proto_codec_decode(struct proto_codec *c, const void *in, size_t len,
		       struct proto_event *out, size_t max, size_t *n);

/* XXH32 of buf[0..len) with seed: the checksum of the codec header (its
 * last u32 is XXH32(header[0..20), XXH32(body, 0))); public so that tests
 * and fuzzers can forge valid headers. Pure. */
uint32_t proto_xxh32(const void *buf, size_t len, uint32_t seed);

#endif
