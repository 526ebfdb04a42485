/*
 * tests/security/attack.c - a hostile client for the collector: one
 * misbehaviour per run, then it watches what the server does.
 *
 *   attack --connect ADDR:PORT --mode MODE [--secret-file F] [--timeout S]
 *
 * Modes: garbage, truncated (half a HELLO, then close), truncated-stall
 * (half a HELLO, then wait), oversized (a valid header announcing 100 MiB),
 * oversized-stream (the same after a good handshake), badcrc, batch-first,
 * auth-first, hello-twice, ack-upward (a server's frame sent by a client
 * after the handshake), wrong-secret, no-secret, replay (the AUTH of an
 * earlier connection replayed on a new one with the same HELLO), stall
 * (connect and send nothing), plaintext (a HELLO in clear, meant for a TLS
 * port), good (a correct handshake: exits 0 only when WELCOME comes),
 * forge (a good handshake, then one 41-byte BATCH of --stream with
 * --seq, default 10^9: refused when the server sends ERROR and closes),
 * hold-frame (a good handshake, then 15 MiB of a 16 MiB BATCH, then
 * wait: prints "held" once every byte is written), idle (a good
 * handshake, then nothing: exit 0 when the server closes).
 * --role sensor|collector sets the HELLO's role, --hello-id HEX its id
 * (default random; "stream" for the --stream id). A sensor proves a
 * stream key of its own (KEY): right for a stream it starts, wrong for
 * the stream of another process, so a second connection for --stream
 * (live, or its connection gone) is refused at the handshake; with
 * --first its KEY says the stream is new (a node that does not know the
 * stream then takes it on its word until the root says no).
 *
 * Prints one line: what the server answered (ERROR code and message, or
 * the close and how long it took). Exit 0 when the server refused the
 * connection as it should (ERROR with the expected code, or a close), 1
 * when it accepted or did not react before --timeout, 2 on usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

static struct sockaddr_storage sa;
static socklen_t salen;
static char secret[4096];
static size_t secretlen;
static int timeout_ms = 20000;
static struct proto_msg msg;	/* large: not on the stack */
static uint8_t hello_role = PROTO_ROLE_SENSOR;
static int key_first;	/* --first: its KEY says the stream is new */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int parse_addr(const char *text)
{
	char host[64];
	const char *colon = strrchr(text, ':');
	struct sockaddr_in *in = (struct sockaddr_in *)&sa;

	if (!colon || (size_t)(colon - text) >= sizeof(host))
		return -1;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	memset(&sa, 0, sizeof(sa));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		return -1;
	salen = sizeof(*in);
	return 0;
}

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen) < 0) {
		fprintf(stderr, "attack: connect: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

static void put(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0) {
			if (errno == EINTR)
				continue;
			return;	/* the server may close first: that is fine */
		}
		p += n;
		len -= (size_t)n;
	}
}

static size_t encode(const struct proto_msg *m, uint8_t *buf, size_t cap)
{
	size_t len;

	if (proto_msg_frame(m, buf, cap, &len)) {
		fprintf(stderr, "attack: cannot encode\n");
		exit(2);
	}
	return len;
}

static void send_msg(int fd, const struct proto_msg *m)
{
	uint8_t buf[4096];

	put(fd, buf, encode(m, buf, sizeof(buf)));
}

static void hello(int fd, uint64_t id, const uint8_t nonce[PROTO_NONCE])
{
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_HELLO;
	msg.u.hello.role = hello_role;
	msg.u.hello.pid = (uint32_t)getpid();
	msg.u.hello.id = id;
	msg.u.hello.rank = -1;
	memcpy(msg.u.hello.nonce, nonce, PROTO_NONCE);
	snprintf(msg.u.hello.host, sizeof(msg.u.hello.host), "attacker");
	snprintf(msg.u.hello.name, sizeof(msg.u.hello.name), "attack");
	send_msg(fd, &msg);
}

/* Next frame into msg: 1, 0 at EOF, -1 on timeout or a bad frame. */
static int next(int fd, int ms)
{
	static uint8_t buf[1 << 20];
	static size_t have;
	uint64_t end = now_ms() + (uint64_t)ms;

	for (;;) {
		struct proto_frame f;
		size_t need;
		int rc = proto_frame_decode(buf, have, 0, &f, &need);
		struct pollfd p = {fd, POLLIN, 0};
		uint64_t t = now_ms();
		ssize_t n;

		if (rc == 0) {
			rc = proto_msg_decode(&f, &msg);
			memmove(buf, buf + need, have - need);
			have -= need;
			return rc ? -1 : 1;
		}
		if (rc != PROTO_E_TRUNCATED || need > sizeof(buf))
			return -1;
		if (t >= end || poll(&p, 1, (int)(end - t)) <= 0)
			return -1;
		n = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		if (n < 0)
			return -1;
		have += (size_t)n;
	}
}

/* Wait for the server's verdict: ERROR (with code) then close, or close.
 * Exit status for main: 0 refused as expected, 1 otherwise. */
static int verdict(int fd, const char *mode, int want_code, uint64_t t0)
{
	int rc, got_error = 0;

	while ((rc = next(fd, timeout_ms)) == 1) {
		if (msg.type == PROTO_MSG_ERROR) {
			got_error = 1;
			printf("attack %s: ERROR %s (%d): %s\n", mode,
			       proto_errname(msg.u.error.code),
			       msg.u.error.code, msg.u.error.message);
			if (want_code && msg.u.error.code != want_code) {
				printf("attack %s: expected %s\n", mode,
				       proto_errname(want_code));
				return 1;
			}
		} else if (msg.type == PROTO_MSG_WELCOME) {
			printf("attack %s: ACCEPTED (WELCOME)\n", mode);
			return 1;
		}
	}
	if (rc < 0) {
		printf("attack %s: the server did not close within %d ms\n",
		       mode, timeout_ms);
		return 1;
	}
	if (want_code && !got_error)
		printf("attack %s: closed without an ERROR frame\n", mode);
	printf("attack %s: closed by the server after %" PRIu64 " ms\n", mode,
	       now_ms() - t0);
	return 0;
}

/* Full handshake with key; 1 when WELCOME came. auth_out: the AUTH sent. */
static int handshake(int fd, uint64_t id, const uint8_t cn[PROTO_NONCE],
		     const char *key, size_t keylen, uint8_t *auth_out)
{
	uint8_t sn[PROTO_NONCE];
	uint32_t flags;

	hello(fd, id, cn);
	if (next(fd, timeout_ms) != 1 || msg.type != PROTO_MSG_CHALLENGE)
		return 0;
	memcpy(sn, msg.u.challenge.nonce, PROTO_NONCE);
	flags = msg.u.challenge.flags;
	memset(&msg, 0, sizeof(msg));
	msg.type = PROTO_MSG_AUTH;
	proto_auth_proof(PROTO_AUTH_CLIENT, key, keylen, sn, cn, id,
			 msg.u.auth.mac);
	if (auth_out)
		memcpy(auth_out, msg.u.auth.mac, PROTO_MAC);
	send_msg(fd, &msg);
	if (flags & PROTO_CHALLENGE_KEY) {
		/* the attacker's own stream key: right for a stream it starts,
		 * wrong for a stream of another process it speaks for */
		uint8_t skey[PROTO_STREAM_KEY], v[PROTO_MAC];

		proto_random(skey, sizeof(skey));
		proto_stream_verifier(skey, id, v);
		msg.type = PROTO_MSG_KEY;
		proto_key_claim(&msg.u.key, v, id, sn, cn, flags);
		if (key_first)	/* it says the stream is new */
			msg.u.key.flags |= PROTO_KEY_FIRST;
		send_msg(fd, &msg);
	}
	return next(fd, timeout_ms) == 1 && msg.type == PROTO_MSG_WELCOME;
}

/* After a forged BATCH: refused when the server sends ERROR and closes,
 * or never acknowledges it (a collector's link is not closed for one
 * frame: the frame is dropped; the log says so); accepted (exit 1) when
 * an ACK covers it. */
static int forge_verdict(int fd, uint64_t stream, uint64_t seq)
{
	uint64_t t0 = now_ms();
	int rc;

	while ((rc = next(fd, timeout_ms)) == 1) {
		if (msg.type == PROTO_MSG_ACK && msg.u.ack.stream == stream &&
		    msg.u.ack.seq >= seq) {
			printf("attack forge: ACCEPTED (ACK %" PRIu64 ")\n",
			       msg.u.ack.seq);
			return 1;
		}
		if (msg.type == PROTO_MSG_ERROR)
			printf("attack forge: ERROR %s (%d): %s\n",
			       proto_errname(msg.u.error.code),
			       msg.u.error.code, msg.u.error.message);
	}
	if (rc == 0)
		printf("attack forge: closed by the server after %" PRIu64
		       " ms\n", now_ms() - t0);
	else
		printf("attack forge: not acknowledged in %d ms, not closed "
		       "(dropped)\n", timeout_ms);
	return 0;
}

/* The modes that start with a good handshake (forge, hold-frame, idle). */
static int after_handshake(int fd, const char *mode, uint64_t id,
			   const uint8_t cn[PROTO_NONCE], uint64_t stream,
			   uint64_t seq)
{
	static uint8_t data[1] = {0};
	uint8_t buf[256];
	size_t len;

	if (!handshake(fd, id, cn, secret, secretlen, NULL)) {
		if (msg.type == PROTO_MSG_ERROR) {
			printf("attack %s: refused at the handshake: ERROR %s: "
			       "%s\n", mode, proto_errname(msg.u.error.code),
			       msg.u.error.message);
			return 0;
		}
		printf("attack %s: handshake failed\n", mode);
		return 1;
	}
	if (!strcmp(mode, "idle"))
		return verdict(fd, mode, 0, now_ms());
	if (!strcmp(mode, "forge")) {
		memset(&msg, 0, sizeof(msg));
		msg.type = PROTO_MSG_BATCH;
		msg.u.batch.stream = stream ? stream : id;
		msg.u.batch.seq = seq;
		msg.u.batch.nrecords = 1;
		msg.u.batch.data = data;
		msg.u.batch.datalen = sizeof(data);
		len = encode(&msg, buf, sizeof(buf));
		put(fd, buf, len);
		printf("attack forge: %zu-byte BATCH of %016" PRIx64 " seq %"
		       PRIu64 " sent as %016" PRIx64 "\n", len,
		       msg.u.batch.stream, seq, id);
		return forge_verdict(fd, msg.u.batch.stream, seq);
	}
	{	/* hold-frame: 15 MiB of a 16 MiB BATCH, then wait */
		size_t total = PROTO_FRAME_MAX, part = 15u << 20, sent = 0;
		uint8_t hdr[PROTO_FRAME_HDR], *chunk = calloc(1, 1u << 20);
		uint32_t c;

		if (!chunk)
			return 2;
		proto_frame_header(PROTO_MSG_BATCH, data, 1, hdr);
		for (int i = 0; i < 4; i++)
			hdr[4 + i] = (uint8_t)(total >> (8 * i));
		c = proto_crc32c(0, hdr, 12);
		for (int i = 0; i < 4; i++)
			hdr[12 + i] = (uint8_t)(c >> (8 * i));
		put(fd, hdr, sizeof(hdr));
		while (sent < part) {
			put(fd, chunk, 1u << 20);
			sent += 1u << 20;
		}
		printf("attack hold-frame: held (%zu of %zu bytes sent)\n",
		       sent, total);
		fflush(stdout);
		free(chunk);
		return verdict(fd, mode, 0, now_ms());
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"mode", required_argument, NULL, 'm'},
		{"secret-file", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"stream", required_argument, NULL, 'S'},
		{"seq", required_argument, NULL, 'q'},
		{"role", required_argument, NULL, 'r'},
		{"hello-id", required_argument, NULL, 'i'},
		{"first", no_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	uint64_t stream = 0, seq = 1000000000ull;
	const char *hello_id = NULL;
	const char *mode = NULL, *addr = NULL;
	uint8_t cn[PROTO_NONCE], buf[4096], hdr[PROTO_FRAME_HDR];
	uint64_t id, t0;
	size_t len;
	int opt, fd;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': addr = optarg; break;
		case 'm': mode = optarg; break;
		case 't': timeout_ms = atoi(optarg) * 1000; break;
		case 'S': stream = strtoull(optarg, NULL, 16); break;
		case 'q': seq = strtoull(optarg, NULL, 10); break;
		case 'i': hello_id = optarg; break;
		case 'f': key_first = 1; break;
		case 'r':
			hello_role = !strcmp(optarg, "collector") ?
				     PROTO_ROLE_COLLECTOR : PROTO_ROLE_SENSOR;
			break;
		case 's': {
			int sfd = open(optarg, O_RDONLY);
			ssize_t r = sfd < 0 ? -1 : read(sfd, secret, sizeof(secret));

			if (sfd >= 0)
				close(sfd);
			if (r < 0)
				return 2;
			while (r > 0 && (secret[r - 1] == '\n' || secret[r - 1] == '\r'))
				r--;
			secretlen = (size_t)r;
			break;
		}
		default:
			return 2;
		}
	}
	if (!mode || !addr || parse_addr(addr)) {
		fprintf(stderr, "usage: attack --connect IPV4:PORT --mode MODE "
			"[--secret-file F] [--timeout S]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	proto_random(cn, sizeof(cn));
	proto_random(&id, sizeof(id));
	id |= 1;
	if (hello_id)
		id = !strcmp(hello_id, "stream") ? stream :
		     strtoull(hello_id, NULL, 16);
	fd = dial();
	t0 = now_ms();
	if (!strcmp(mode, "garbage")) {
		proto_random(buf, sizeof(buf));
		put(fd, buf, sizeof(buf));
		return verdict(fd, mode, 0, t0);
	}
	if (!strcmp(mode, "truncated") || !strcmp(mode, "truncated-stall")) {
		hello(-1, id, cn);	/* encode only: fd -1 sends nothing */
		len = encode(&msg, buf, sizeof(buf));
		put(fd, buf, len / 2);
		if (!strcmp(mode, "truncated")) {
			usleep(200000);
			close(fd);
			printf("attack truncated: %zu of %zu bytes sent, closed\n",
			       len / 2, len);
			return 0;
		}
		return verdict(fd, mode, 0, t0);
	}
	if (!strcmp(mode, "oversized")) {
		static uint8_t zero[1];

		/* a correct header (its CRC too) announcing 100 MiB */
		proto_frame_header(PROTO_MSG_HELLO, zero, 1, hdr);
		hdr[4] = 0; hdr[5] = 0; hdr[6] = 0x40; hdr[7] = 0x06;
		{
			uint32_t c = proto_crc32c(0, hdr, 12);

			for (int i = 0; i < 4; i++)
				hdr[12 + i] = (uint8_t)(c >> (8 * i));
		}
		put(fd, hdr, sizeof(hdr));
		return verdict(fd, mode, PROTO_E_TOOBIG, t0);
	}
	if (!strcmp(mode, "badcrc")) {
		hello(-1, id, cn);
		len = encode(&msg, buf, sizeof(buf));
		buf[len - 1] ^= 0x55;
		put(fd, buf, len);
		return verdict(fd, mode, PROTO_E_CHECKSUM, t0);
	}
	if (!strcmp(mode, "batch-first") || !strcmp(mode, "auth-first")) {
		static uint8_t data[8] = {1};

		memset(&msg, 0, sizeof(msg));
		if (mode[0] == 'b') {
			msg.type = PROTO_MSG_BATCH;
			msg.u.batch.stream = id;
			msg.u.batch.seq = 1;
			msg.u.batch.data = data;
			msg.u.batch.datalen = sizeof(data);
		} else {
			msg.type = PROTO_MSG_AUTH;
		}
		send_msg(fd, &msg);
		return verdict(fd, mode, PROTO_E_STATE, t0);
	}
	if (!strcmp(mode, "hello-twice")) {
		hello(fd, id, cn);
		if (next(fd, timeout_ms) != 1 || msg.type != PROTO_MSG_CHALLENGE)
			return 1;
		hello(fd, id, cn);
		return verdict(fd, mode, PROTO_E_STATE, t0);
	}
	if (!strcmp(mode, "wrong-secret") || !strcmp(mode, "no-secret")) {
		const char *key = mode[0] == 'w' ? "wrong secret" : "";

		if (handshake(fd, id, cn, key, strlen(key), NULL)) {
			printf("attack %s: ACCEPTED (WELCOME)\n", mode);
			return 1;
		}
		if (msg.type != PROTO_MSG_ERROR || msg.u.error.code != PROTO_E_AUTH) {
			printf("attack %s: no AUTH error\n", mode);
			return 1;
		}
		printf("attack %s: ERROR %s: %s\n", mode,
		       proto_errname(msg.u.error.code), msg.u.error.message);
		return verdict(fd, mode, 0, t0);
	}
	if (!strcmp(mode, "replay")) {
		uint8_t auth[PROTO_MAC];
		int fd2;

		/* an eavesdropper's recording of a good exchange... */
		if (!handshake(fd, id, cn, secret, secretlen, auth)) {
			printf("attack replay: the recorded connection itself "
			       "was refused (secret?)\n");
			return 1;
		}
		/* ...played again on a new connection: same HELLO, same AUTH */
		fd2 = dial();
		hello(fd2, id, cn);
		if (next(fd2, timeout_ms) != 1 || msg.type != PROTO_MSG_CHALLENGE)
			return 1;
		memset(&msg, 0, sizeof(msg));
		msg.type = PROTO_MSG_AUTH;
		memcpy(msg.u.auth.mac, auth, PROTO_MAC);
		send_msg(fd2, &msg);
		close(fd);
		return verdict(fd2, mode, PROTO_E_AUTH, now_ms());
	}
	if (!strcmp(mode, "ack-upward") || !strcmp(mode, "oversized-stream")) {
		if (!handshake(fd, id, cn, secret, secretlen, NULL)) {
			printf("attack %s: handshake refused (secret?)\n", mode);
			return 1;
		}
		if (mode[0] == 'a') {
			memset(&msg, 0, sizeof(msg));
			msg.type = PROTO_MSG_ACK;
			msg.u.ack.stream = id;
			msg.u.ack.seq = 1;
			send_msg(fd, &msg);
			return verdict(fd, mode, PROTO_E_STATE, now_ms());
		}
		{
			static uint8_t zero[1];
			uint32_t c, big = PROTO_FRAME_MAX + 1;

			proto_frame_header(PROTO_MSG_BATCH, zero, 1, hdr);
			for (int i = 0; i < 4; i++)
				hdr[4 + i] = (uint8_t)(big >> (8 * i));
			c = proto_crc32c(0, hdr, 12);
			for (int i = 0; i < 4; i++)
				hdr[12 + i] = (uint8_t)(c >> (8 * i));
			put(fd, hdr, sizeof(hdr));
			return verdict(fd, mode, PROTO_E_TOOBIG, now_ms());
		}
	}
	if (!strcmp(mode, "stall"))
		return verdict(fd, mode, 0, t0);
	if (!strcmp(mode, "plaintext")) {
		hello(fd, id, cn);
		{
			/* a TLS server answers with an alert record, not a
			 * frame: read raw bytes until it closes */
			struct pollfd p = {fd, POLLIN, 0};
			size_t got = 0;

			for (;;) {
				ssize_t n;

				if (poll(&p, 1, timeout_ms) <= 0) {
					printf("attack plaintext: not closed within "
					       "%d ms\n", timeout_ms);
					return 1;
				}
				n = recv(fd, buf, sizeof(buf), 0);
				if (n <= 0)
					break;
				if (got == 0 && n >= 16 && buf[0] == 'T' && buf[1] == 'P') {
					printf("attack plaintext: the port speaks "
					       "the protocol in clear\n");
					return 1;
				}
				got += (size_t)n;
			}
			printf("attack plaintext: closed by the server after %"
			       PRIu64 " ms (%zu bytes of TLS alert)\n",
			       now_ms() - t0, got);
			return 0;
		}
	}
	if (!strcmp(mode, "forge") || !strcmp(mode, "idle") ||
	    !strcmp(mode, "hold-frame"))
		return after_handshake(fd, mode, id, cn, stream, seq);
	if (!strcmp(mode, "good")) {
		if (handshake(fd, id, cn, secret, secretlen, NULL)) {
			printf("attack good: WELCOME\n");
			return 0;
		}
		printf("attack good: refused\n");
		return 1;
	}
	fprintf(stderr, "attack: unknown mode %s\n", mode);
	return 2;
}
