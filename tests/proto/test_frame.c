/*
 * tests/proto/test_frame.c - suite "frame": CRC-32C, frame header layout,
 * and every class of malformed frame the decoder must reject.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/frame.h"

/* Bitwise CRC-32C straight from the definition, the reference for both
 * implementations under test. */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & -(crc & 1u));
	}
	return ~crc;
}

static void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed ? seed : 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* A header with arbitrary fields and a correct header CRC. */
static void craft(uint8_t h[PROTO_FRAME_HDR], uint8_t version, uint8_t type,
		  uint32_t length, uint32_t pcrc)
{
	h[0] = 'T';
	h[1] = 'P';
	h[2] = version;
	h[3] = type;
	put32(h + 4, length);
	put32(h + 8, pcrc);
	put32(h + 12, crc_ref(0, h, 12));
}

/* ---- CRC-32C ---------------------------------------------------------- */

Test(frame, crc_vectors)
{
	static const uint8_t zeros[32], ones[32] = {
		[0 ... 31] = 0xff};
	uint8_t inc[32];

	for (int i = 0; i < 32; i++)
		inc[i] = (uint8_t)i;
	cr_assert_eq(proto_crc32c(0, "123456789", 9), 0xE3069283u);
	cr_assert_eq(proto_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	cr_assert_eq(proto_crc32c(0, NULL, 0), 0u);
	/* RFC 3720, appendix B.4 */
	cr_assert_eq(proto_crc32c(0, zeros, 32), 0x8A9136AAu);
	cr_assert_eq(proto_crc32c(0, ones, 32), 0x62A8AB43u);
	cr_assert_eq(proto_crc32c(0, inc, 32), 0x46DD794Eu);
	cr_assert_eq(proto_crc32c_sw(0, zeros, 32), 0x8A9136AAu);
	cr_assert_eq(proto_crc32c_sw(0, ones, 32), 0x62A8AB43u);
	cr_assert_eq(proto_crc32c_sw(0, inc, 32), 0x46DD794Eu);
}

/* Every table entry: a byte n followed by k zero bytes exercises
 * crc_table[k][n] in the slice-by-8 loop. */
Test(frame, crc_tables_match_definition)
{
	uint8_t b[16];

	for (unsigned n = 0; n < 256; n++)
		for (size_t k = 0; k < 8; k++) {
			for (size_t at = 0; at < 8; at++) {
				memset(b, 0, sizeof(b));
				b[at] = (uint8_t)n;
				cr_assert_eq(proto_crc32c_sw(0, b, 8 + k),
					     crc_ref(0, b, 8 + k),
					     "n %u at %zu len %zu", n, at, 8 + k);
			}
		}
}

Test(frame, crc_sw_hw_ref_agree_all_lengths_and_alignments)
{
	size_t max = 1100;
	uint8_t *buf = malloc(max + 8);

	cr_assert_not_null(buf);
	fill_random(buf, max + 8, 12345);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= max; len += (len < 80 ? 1 : 37)) {
			uint32_t ref = crc_ref(0, buf + off, len);

			cr_assert_eq(proto_crc32c_sw(0, buf + off, len), ref);
			cr_assert_eq(proto_crc32c(0, buf + off, len), ref,
				     "hw %d off %zu len %zu", proto_crc32c_hw(),
				     off, len);
		}
	free(buf);
}

Test(frame, crc_incremental_equals_one_shot)
{
	uint8_t buf[300];
	uint32_t whole;

	fill_random(buf, sizeof(buf), 777);
	whole = proto_crc32c(0, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut++) {
		uint32_t a = proto_crc32c(0, buf, cut);
		uint32_t s = proto_crc32c_sw(0, buf, cut);

		cr_assert_eq(proto_crc32c(a, buf + cut, sizeof(buf) - cut), whole);
		cr_assert_eq(proto_crc32c_sw(s, buf + cut, sizeof(buf) - cut),
			     whole);
	}
}

/* ---- names ------------------------------------------------------------ */

Test(frame, msg_names)
{
	cr_assert_null(proto_msg_name(0));
	cr_assert_null(proto_msg_name(PROTO_MSG__MAX + 1));
	cr_assert_null(proto_msg_name(255));
	cr_assert_null(proto_msg_name(~0u));
	cr_assert_str_eq(proto_msg_name(PROTO_MSG_BATCH), "BATCH");
	cr_assert_str_eq(proto_msg_name(PROTO_MSG_HELLO), "HELLO");
	cr_assert_str_eq(proto_msg_name(PROTO_MSG_ERROR), "ERROR");
	for (unsigned a = 1; a <= PROTO_MSG__MAX; a++) {
		cr_assert_not_null(proto_msg_name(a));
		for (unsigned b = 1; b < a; b++)
			cr_assert_str_neq(proto_msg_name(a), proto_msg_name(b));
	}
}

/* Every code of proto/errors.def (the frame and message decoders' among
 * them) has a name of its own. */
Test(frame, errnames_of_every_code_distinct)
{
	static const int codes[] = {
#define ERR(name, value, msg) PROTO_E_##name,
#include "proto/errors.def"
#undef ERR
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);

	for (size_t i = 0; i < n; i++) {
		cr_assert_str_neq(proto_errname(codes[i]), "PROTO_E_UNKNOWN");
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(proto_errname(codes[i]),
					  proto_errname(codes[j]));
	}
}

/* ---- encoding --------------------------------------------------------- */

Test(frame, header_layout_byte_exact)
{
	uint8_t out[64];
	size_t w = 0;
	const char *pl = "hello";

	cr_assert_eq(proto_frame_encode(PROTO_MSG_PING, pl, 5, out, sizeof(out),
					&w), 0);
	cr_assert_eq(w, 21u);
	cr_assert_eq(out[0], 'T');
	cr_assert_eq(out[1], 'P');
	cr_assert_eq(out[2], PROTO_VERSION);
	cr_assert_eq(out[3], PROTO_MSG_PING);
	cr_assert_eq(out[4], 5);
	cr_assert_eq(out[5], 0);
	cr_assert_eq(out[6], 0);
	cr_assert_eq(out[7], 0);
	cr_assert_eq(get32(out + 8), crc_ref(0, (const uint8_t *)pl, 5));
	cr_assert_eq(get32(out + 12), crc_ref(0, out, 12));
	cr_assert_eq(memcmp(out + 16, pl, 5), 0);
}

Test(frame, header_errors)
{
	uint8_t h[PROTO_FRAME_HDR];
	static uint8_t dummy[1];

	cr_assert_eq(proto_frame_header(0, NULL, 0, h), PROTO_E_TYPE);
	cr_assert_eq(proto_frame_header(PROTO_MSG__MAX + 1, NULL, 0, h),
		     PROTO_E_TYPE);
	/* the length is refused before the payload would be read */
	cr_assert_eq(proto_frame_header(PROTO_MSG_BATCH, dummy,
					(size_t)PROTO_FRAME_MAX + 1, h),
		     PROTO_E_TOOBIG);
	cr_assert_eq(proto_frame_header(PROTO_MSG_BATCH, NULL, 3, h),
		     PROTO_E_ARG);
	cr_assert_eq(proto_frame_header(PROTO_MSG_ACK, NULL, 0, h), 0);
}

Test(frame, encode_full_reports_size_needed)
{
	uint8_t pl[40], out[56];
	size_t w;

	fill_random(pl, sizeof(pl), 9);
	for (size_t cap = 0; cap < 56; cap++) {
		w = 0;
		cr_assert_eq(proto_frame_encode(PROTO_MSG_AUTH, pl, 40, out, cap,
						&w), PROTO_E_FULL);
		cr_assert_eq(w, 56u);
	}
	cr_assert_eq(proto_frame_encode(PROTO_MSG_AUTH, pl, 40, out, 56, &w), 0);
	cr_assert_eq(w, 56u);
}

Test(frame, encode_in_place_and_overlapping)
{
	uint8_t pl[100], a[200], b[200];
	struct proto_frame f;
	size_t w, used;

	fill_random(pl, sizeof(pl), 4);
	cr_assert_eq(proto_frame_encode(PROTO_MSG_META, pl, 100, a, sizeof(a),
					&w), 0);
	memcpy(b + PROTO_FRAME_HDR, pl, 100);
	cr_assert_eq(proto_frame_encode(PROTO_MSG_META, b + PROTO_FRAME_HDR, 100,
					b, sizeof(b), &w), 0);
	cr_assert_eq(memcmp(a, b, w), 0);
	memcpy(b + 3, pl, 100);	/* payload overlapping the header */
	cr_assert_eq(proto_frame_encode(PROTO_MSG_META, b + 3, 100, b, sizeof(b),
					&w), 0);
	cr_assert_eq(memcmp(a, b, w), 0);
	cr_assert_eq(proto_frame_decode(b, w, 0, &f, &used), 0);
	cr_assert_eq(used, w);
}

/* ---- decoding --------------------------------------------------------- */

Test(frame, round_trip_every_type_and_sizes)
{
	static const size_t sizes[] = {0, 1, 7, 8, 9, 64, 1000, 65536};
	uint8_t *pl = malloc(65536), *out = malloc(65536 + 16);
	struct proto_frame f;
	size_t w, used;

	cr_assert(pl && out);
	fill_random(pl, 65536, 99);
	for (unsigned t = 1; t <= PROTO_MSG__MAX; t++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];

			cr_assert_eq(proto_frame_encode((uint8_t)t, pl, n, out,
							n + 16, &w), 0);
			cr_assert_eq(w, n + 16);
			memset(&f, 0, sizeof(f));
			cr_assert_eq(proto_frame_decode(out, w, 0, &f, &used), 0);
			cr_assert_eq(used, w);
			cr_assert_eq(f.type, t);
			cr_assert_eq(f.version, PROTO_VERSION);
			cr_assert_eq(f.length, n);
			cr_assert_eq(f.payload, out + 16);
			cr_assert_eq(memcmp(f.payload, pl, n), 0);
		}
	free(pl);
	free(out);
}

Test(frame, max_payload_exactly_accepted)
{
	size_t n = PROTO_FRAME_MAX;
	uint8_t *buf = calloc(1, n + 16);
	struct proto_frame f;
	size_t w, used;

	cr_assert_not_null(buf);
	cr_assert_eq(proto_frame_encode(PROTO_MSG_BATCH, buf + 16, n, buf, n + 16,
					&w), 0);
	cr_assert_eq(proto_frame_decode(buf, w, 0, &f, &used), 0);
	cr_assert_eq(f.length, PROTO_FRAME_MAX);
	cr_assert_eq(proto_frame_decode(buf, w, n - 1, &f, &used),
		     PROTO_E_TOOBIG);
	free(buf);
}

Test(frame, truncated_at_every_length)
{
	static const size_t sizes[] = {0, 1, 37, 300};
	uint8_t pl[300], out[316];
	struct proto_frame f;
	size_t w, used;

	fill_random(pl, sizeof(pl), 5);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cr_assert_eq(proto_frame_encode(PROTO_MSG_STATS, pl, sizes[i], out,
						sizeof(out), &w), 0);
		for (size_t k = 0; k < w; k++) {
			used = 12345;
			cr_assert_eq(proto_frame_decode(out, k, 0, &f, &used),
				     PROTO_E_TRUNCATED, "size %zu prefix %zu",
				     sizes[i], k);
			cr_assert_eq(used, k < 16 ? 16 : w);
		}
		cr_assert_eq(proto_frame_decode(out, w, 0, &f, &used), 0);
	}
}

Test(frame, stream_of_frames)
{
	uint8_t buf[4096], pl[200];
	struct proto_frame f;
	size_t len = 0, w, used, pos = 0;
	unsigned count = 0;

	fill_random(pl, sizeof(pl), 6);
	for (unsigned t = 1; t <= PROTO_MSG__MAX; t++) {
		cr_assert_eq(proto_frame_encode((uint8_t)t, pl, t * 13, buf + len,
						sizeof(buf) - len, &w), 0);
		len += w;
	}
	while (pos < len) {
		cr_assert_eq(proto_frame_decode(buf + pos, len - pos, 0, &f,
						&used), 0);
		cr_assert_eq(f.type, ++count);
		cr_assert_eq(f.length, count * 13);
		pos += used;
	}
	cr_assert_eq(count, PROTO_MSG__MAX);
	cr_assert_eq(pos, len);
}

/* Each bit of out[from .. to) flipped in turn (the frame is w bytes): its
 * decoding fails with want and takes no byte; so does the header's alone
 * (16 bytes) when the bit is in it. */
static void every_bit(uint8_t *out, size_t w, size_t from, size_t to, int want)
{
	struct proto_frame f;
	size_t used;

	for (size_t at = from; at < to; at++)
		for (int bit = 0; bit < 8; bit++) {
			out[at] ^= (uint8_t)(1 << bit);
			used = 99;
			cr_assert_eq(proto_frame_decode(out, w, 0, &f, &used),
				     want, "byte %zu bit %d", at, bit);
			cr_assert_eq(used, 0u);
			if (at < 16)
				cr_assert_eq(proto_frame_decode(out, 16, 0, &f,
								&used), want);
			out[at] ^= (uint8_t)(1 << bit);
		}
}

Test(frame, bad_magic)
{
	uint8_t out[32];
	struct proto_frame f;
	size_t w, used;

	cr_assert_eq(proto_frame_encode(PROTO_MSG_ACK, "0123456789abcdef", 16,
					out, sizeof(out), &w), 0);
	every_bit(out, w, 0, 2, PROTO_E_MAGIC);
	memcpy(out, "GET / HTTP/1.1\r\n", 16);
	cr_assert_eq(proto_frame_decode(out, 16, 0, &f, &used), PROTO_E_MAGIC);
}

/* Any bit of bytes 2..15 flipped is caught by the header CRC, including a
 * corrupt length that would otherwise make the reader wait or refuse. */
Test(frame, bad_header_crc_every_bit)
{
	uint8_t out[40];
	struct proto_frame f;
	size_t w, used;

	cr_assert_eq(proto_frame_encode(PROTO_MSG_PONG, "abcdefghijklmnopqrstuvwx",
					24, out, sizeof(out), &w), 0);
	/* even when only the header has arrived */
	every_bit(out, w, 2, 16, PROTO_E_CHECKSUM);
	cr_assert_eq(proto_frame_decode(out, w, 0, &f, &used), 0);
}

Test(frame, bad_payload_crc_every_bit)
{
	uint8_t out[16 + 12];
	size_t w;

	cr_assert_eq(proto_frame_encode(PROTO_MSG_LOSS, "small frame!", 12, out,
					sizeof(out), &w), 0);
	every_bit(out, w, 16, w, PROTO_E_CHECKSUM);
}

Test(frame, bad_version)
{
	uint8_t buf[16 + 4] = {0};
	struct proto_frame f;
	size_t used;
	uint32_t pcrc = crc_ref(0, buf + 16, 4);

	craft(buf, 0, PROTO_MSG_PING, 4, pcrc);
	cr_assert_eq(proto_frame_decode(buf, sizeof(buf), 0, &f, &used),
		     PROTO_E_VERSION);
	craft(buf, PROTO_VERSION + 1, PROTO_MSG_PING, 4, pcrc);
	cr_assert_eq(proto_frame_decode(buf, sizeof(buf), 0, &f, &used),
		     PROTO_E_VERSION);
	/* version is checked before the length and the type */
	craft(buf, 0xff, 0, 0xffffffffu, pcrc);
	cr_assert_eq(proto_frame_decode(buf, 16, 0, &f, &used), PROTO_E_VERSION);
	craft(buf, PROTO_VERSION, PROTO_MSG_PING, 4, pcrc);
	cr_assert_eq(proto_frame_decode(buf, sizeof(buf), 0, &f, &used), 0);
}

Test(frame, unknown_type)
{
	static const uint8_t bad[] = {0, PROTO_MSG__MAX + 1, 0x7f, 0xff};
	uint8_t buf[16];
	struct proto_frame f;
	size_t used;

	for (size_t i = 0; i < sizeof(bad); i++) {
		craft(buf, PROTO_VERSION, bad[i], 0, 0);
		cr_assert_eq(proto_frame_decode(buf, 16, 0, &f, &used),
			     PROTO_E_TYPE);
	}
	/* type before length */
	craft(buf, PROTO_VERSION, 0, 0xffffffffu, 0);
	cr_assert_eq(proto_frame_decode(buf, 16, 0, &f, &used), PROTO_E_TYPE);
}

Test(frame, oversized_length)
{
	uint8_t buf[16];
	struct proto_frame f;
	size_t used;

	craft(buf, PROTO_VERSION, PROTO_MSG_BATCH, PROTO_FRAME_MAX + 1, 0);
	cr_assert_eq(proto_frame_decode(buf, 16, 0, &f, &used), PROTO_E_TOOBIG);
	craft(buf, PROTO_VERSION, PROTO_MSG_BATCH, PROTO_FRAME_MAX, 0);
	cr_assert_eq(proto_frame_decode(buf, 16, 0, &f, &used),
		     PROTO_E_TRUNCATED);
	cr_assert_eq(used, 16u + PROTO_FRAME_MAX);
	/* caller's own maximum */
	craft(buf, PROTO_VERSION, PROTO_MSG_ACK, 17, 0);
	cr_assert_eq(proto_frame_decode(buf, 16, 16, &f, &used), PROTO_E_TOOBIG);
	cr_assert_eq(proto_frame_decode(buf, 16, 17, &f, &used),
		     PROTO_E_TRUNCATED);
	cr_assert_eq(used, 33u);
}

/* Lengths near 2^32 must neither wrap the size computation nor be read. */
Test(frame, length_overflow)
{
	static const uint32_t lens[] = {0xffffffffu, 0xfffffff0u, 0xfffffff1u,
					0x80000000u};
	uint8_t buf[64] = {0};
	struct proto_frame f;
	size_t used;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		craft(buf, PROTO_VERSION, PROTO_MSG_BATCH, lens[i], 0);
		cr_assert_eq(proto_frame_decode(buf, sizeof(buf), 0, &f, &used),
			     PROTO_E_TOOBIG);
		cr_assert_eq(proto_frame_decode(buf, sizeof(buf), SIZE_MAX, &f,
						&used), PROTO_E_TRUNCATED);
		cr_assert_eq(used, (size_t)16 + lens[i]);
	}
}

Test(frame, decoder_check_order)
{
	uint8_t buf[16 + 8] = {0};
	struct proto_frame f;
	size_t used;

	/* magic is checked before the header CRC */
	craft(buf, PROTO_VERSION, PROTO_MSG_PING, 8, 0);
	buf[0] = 'X';
	buf[12] ^= 1;
	cr_assert_eq(proto_frame_decode(buf, 24, 0, &f, &used), PROTO_E_MAGIC);
	/* the header CRC before version, type and length */
	craft(buf, 9, 0, 0xffffffffu, 0);
	buf[13] ^= 1;
	cr_assert_eq(proto_frame_decode(buf, 24, 0, &f, &used),
		     PROTO_E_CHECKSUM);
	/* TOOBIG before TRUNCATED, TRUNCATED before payload CRC */
	craft(buf, PROTO_VERSION, PROTO_MSG_PING, 9, 0xdeadbeef);
	cr_assert_eq(proto_frame_decode(buf, 24, 8, &f, &used), PROTO_E_TOOBIG);
	cr_assert_eq(proto_frame_decode(buf, 24, 0, &f, &used),
		     PROTO_E_TRUNCATED);
	cr_assert_eq(used, 25u);
	craft(buf, PROTO_VERSION, PROTO_MSG_PING, 8, 0xdeadbeef);
	cr_assert_eq(proto_frame_decode(buf, 24, 0, &f, &used),
		     PROTO_E_CHECKSUM);
}
