/*
 * tests/collector/synth.c - synthetic sensors: N concurrent streams that
 * speak the sensor side of the protocol to a collector.
 *
 * Each stream connects, does the handshake (role SENSOR, id = its stream
 * id, the proof of its random stream key), sends META once, then E events as BATCH frames of B records encoded
 * with proto_codec, at most W batches ahead of the cumulative ACK. After a
 * lost connection it reconnects with backoff and resends everything after
 * the last ACK (the root deduplicates). When all its batches are
 * acknowledged it sends BYE and ends on the answer (ACK or close).
 * --unique puts (stream, seq, index) in every record so the checker can
 * verify contents; without it a batch template is encoded once per size
 * (for throughput). Prints one summary line; exit 0 when every batch of
 * every stream was acknowledged before --timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "proto/auth.h"
#include "proto/codec.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"

enum { S_DOWN, S_CHALLENGE, S_WELCOME, S_STREAM, S_DONE };

struct synth;

struct stream {
	struct synth *sy;
	uint64_t id;
	struct bufferevent *bev;
	struct event *retry;
	int state;
	uint64_t next_seq, acked, high_seq;
	int meta_sent, bye_sent;
	unsigned backoff_ms;
	uint8_t nonce[PROTO_NONCE], snonce[PROTO_NONCE];
	uint8_t verifier[PROTO_MAC];	/* of its random stream key */
	int welcomed;
};

struct synth {
	struct event_base *base;
	struct sockaddr_storage sa;
	int salen;
	uint64_t nstreams, events, batch, batches, window;
	int level, unique;
	char secret[4096];
	size_t secretlen;
	struct stream *st;
	uint64_t done, reconnects, sent_batches, acked_batches;
	double rate;			/* events/s for all streams, 0: no limit */
	uint64_t t_begin, sent_events;
	struct event *tick;
	struct proto_codec *codec;
	struct proto_event *ev;
	uint8_t *data_full, *data_last;	/* templates */
	size_t len_full, len_last;
	uint8_t *scratch, *frame;
	size_t scratch_cap, frame_cap;
	struct proto_msg *msg;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t batch_records(const struct synth *sy, uint64_t seq)
{
	if (seq < sy->batches)
		return sy->batch;
	return sy->events - (sy->batches - 1) * sy->batch;
}

static void fill(struct synth *sy, uint64_t stream, uint64_t seq, size_t n)
{
	uint64_t t = 1000000 + seq * 1000000000ull, x = seq * 2654435761u + 1;

	/* Trace-like: irregular gaps and durations, a few types, sizes. */
	for (size_t i = 0; i < n; i++) {
		struct proto_event *e = &sy->ev[i];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memset(e, 0, sizeof(*e));
		t += 200 + x % 3000;
		e->t_start = t;
		e->t_end = t + 100 + (x >> 12) % 5000;
		e->type = (uint16_t)(1 + (x >> 24) % 5);
		e->tid = (uint32_t)((x >> 30) % 3);
		e->arg[0] = (int64_t)stream;
		e->arg[1] = (int64_t)seq;
		e->arg[2] = (int64_t)i;
		e->arg[3] = (int64_t)((x >> 36) % 65536);
		e->arg[4] = (int64_t)(3 + (x >> 40) % 8);
	}
}

static int encode(struct synth *sy, uint64_t stream, uint64_t seq, size_t n,
		  uint8_t *out, size_t cap, size_t *len)
{
	fill(sy, stream, seq, n);
	return proto_codec_encode(sy->codec, sy->ev, n, out, cap, len);
}

static int send_msg(struct bufferevent *bev, struct proto_msg *m)
{
	uint8_t *buf;
	size_t len;
	int rc = proto_msg_frame_alloc(m, &buf, &len);

	if (rc)
		return rc;
	rc = bufferevent_write(bev, buf, len) ? PROTO_E_NOMEM : 0;
	free(buf);
	return rc;
}

static void st_connect(struct stream *s);

static void maybe_finish(struct synth *sy)
{
	if (sy->done == sy->nstreams)
		event_base_loopexit(sy->base, NULL);
}

static void st_done(struct stream *s)
{
	if (s->state == S_DONE)
		return;
	s->state = S_DONE;
	if (s->bev) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	s->sy->done++;
	maybe_finish(s->sy);
}

static void st_down(struct stream *s, const char *why)
{
	struct timeval tv;

	if (s->bev) {
		bufferevent_free(s->bev);
		s->bev = NULL;
	}
	if (s->bye_sent && s->acked >= s->sy->batches) {
		st_done(s);	/* closed after our BYE: the end */
		return;
	}
	s->state = S_DOWN;
	s->bye_sent = 0;
	s->next_seq = s->acked + 1;
	s->sy->reconnects++;
	s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : 50;
	if (s->backoff_ms > 2000)
		s->backoff_ms = 2000;
	tv.tv_sec = s->backoff_ms / 1000;
	tv.tv_usec = (s->backoff_ms % 1000) * 1000;
	evtimer_add(s->retry, &tv);
}

static void pump(struct stream *s)
{
	struct synth *sy = s->sy;
	struct evbuffer *out;
	struct proto_msg *m = sy->msg;

	if (s->state != S_STREAM)
		return;
	out = bufferevent_get_output(s->bev);
	while (s->next_seq <= sy->batches &&
	       s->next_seq - s->acked <= sy->window &&
	       evbuffer_get_length(out) < (1u << 20) &&
	       (sy->rate <= 0 || (double)sy->sent_events <
		sy->rate * (double)(now_ns() - sy->t_begin) / 1e9)) {
		uint64_t seq = s->next_seq, n = batch_records(sy, seq);
		const uint8_t *data;
		size_t dlen, flen;

		if (sy->unique) {
			if (encode(sy, s->id, seq, n, sy->scratch,
				   sy->scratch_cap, &dlen))
				abort();
			data = sy->scratch;
		} else if (n == sy->batch) {
			data = sy->data_full;
			dlen = sy->len_full;
		} else {
			data = sy->data_last;
			dlen = sy->len_last;
		}
		m->type = PROTO_MSG_BATCH;
		m->u.batch.stream = s->id;
		m->u.batch.seq = seq;
		m->u.batch.nrecords = (uint32_t)n;
		m->u.batch.flags = 0;
		m->u.batch.data = data;
		m->u.batch.datalen = (uint32_t)dlen;
		if (proto_msg_frame(m, sy->frame, sy->frame_cap, &flen))
			abort();
		evbuffer_add(out, sy->frame, flen);
		if (seq >= s->high_seq) {	/* resends are not new events */
			s->high_seq = seq;
			sy->sent_events += n;
		}
		s->next_seq++;
		sy->sent_batches++;
	}
	if (s->acked >= sy->batches && !s->bye_sent) {
		m->type = PROTO_MSG_BYE;
		m->u.bye.stream = s->id;
		m->u.bye.last_seq = sy->batches;
		m->u.bye.reason = 0;
		send_msg(s->bev, m);
		s->bye_sent = 1;
	}
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct stream *s = arg;
	struct synth *sy = s->sy;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct proto_msg *m = sy->msg;

	for (;;) {
		uint8_t hdr[PROTO_FRAME_HDR], *buf;
		struct proto_frame f;
		size_t need, used;
		int rc;

		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
			break;
		rc = proto_frame_decode(hdr, sizeof(hdr), 0, &f, &need);
		if (rc == 0)
			need = PROTO_FRAME_HDR;
		else if (rc != PROTO_E_TRUNCATED) {
			st_down(s, "bad frame");
			return;
		}
		if (evbuffer_get_length(in) < need)
			break;
		buf = evbuffer_pullup(in, (ev_ssize_t)need);
		rc = proto_frame_decode(buf, need, 0, &f, &used);
		if (!rc)
			rc = proto_msg_decode(&f, m);
		evbuffer_drain(in, need);
		if (rc) {
			st_down(s, "bad message");
			return;
		}
		if (m->type == PROTO_MSG_ERROR) {
			fprintf(stderr, "synth: stream %016" PRIx64 ": ERROR %d %s\n",
				s->id, m->u.error.code, m->u.error.message);
			st_down(s, "error");
			return;
		}
		switch (s->state) {
		case S_CHALLENGE:
			if (m->type != PROTO_MSG_CHALLENGE)
				goto bad;
			memcpy(s->snonce, m->u.challenge.nonce, PROTO_NONCE);
			{
				uint8_t mac[PROTO_MAC];
				uint32_t flags = m->u.challenge.flags;

				proto_auth_proof(PROTO_AUTH_CLIENT, sy->secret,
						 sy->secretlen, s->snonce,
						 s->nonce, s->id, mac);
				m->type = PROTO_MSG_AUTH;
				memcpy(m->u.auth.mac, mac, PROTO_MAC);
				send_msg(bev, m);
				m->type = PROTO_MSG_KEY;
				proto_key_claim(&m->u.key, s->verifier, s->id,
						s->snonce, s->nonce, flags);
				if (!s->welcomed)
					m->u.key.flags |= PROTO_KEY_FIRST;
				send_msg(bev, m);
			}
			s->state = S_WELCOME;
			break;
		case S_WELCOME: {
			uint8_t want[PROTO_MAC];

			if (m->type != PROTO_MSG_WELCOME)
				goto bad;
			proto_auth_proof(PROTO_AUTH_SERVER, sy->secret,
					 sy->secretlen, s->snonce, s->nonce,
					 s->id, want);
			if (!proto_auth_equal(want, m->u.welcome.mac))
				goto bad;
			s->state = S_STREAM;
			s->welcomed = 1;
			s->backoff_ms = 0;
			if (!s->meta_sent) {
				m->type = PROTO_MSG_META;
				m->u.meta.id = s->id;
				m->u.meta.n = 2;
				snprintf(m->u.meta.kv[0].key, sizeof(m->u.meta.kv[0].key), "exe");
				snprintf(m->u.meta.kv[0].value, sizeof(m->u.meta.kv[0].value), "synth");
				snprintf(m->u.meta.kv[1].key, sizeof(m->u.meta.kv[1].key), "events");
				snprintf(m->u.meta.kv[1].value, sizeof(m->u.meta.kv[1].value), "%" PRIu64, sy->events);
				send_msg(bev, m);
				s->meta_sent = 1;
			}
			pump(s);
			break;
		}
		case S_STREAM:
			if (m->type == PROTO_MSG_ACK) {
				if (m->u.ack.stream != s->id)
					goto bad;
				if (m->u.ack.seq > s->acked) {
					sy->acked_batches += m->u.ack.seq - s->acked;
					s->acked = m->u.ack.seq;
				}
				if (s->bye_sent && s->acked >= sy->batches) {
					st_done(s);
					return;
				}
				pump(s);
			} else if (m->type != PROTO_MSG_PONG) {
				goto bad;
			}
			break;
		default:
			goto bad;
		}
	}
	return;
bad:
	st_down(s, "unexpected message");
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	pump(arg);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct stream *s = arg;
	struct proto_msg *m = s->sy->msg;

	if (what & BEV_EVENT_CONNECTED) {
		memset(&m->u.hello, 0, sizeof(m->u.hello));
		m->type = PROTO_MSG_HELLO;
		m->u.hello.role = PROTO_ROLE_SENSOR;
		m->u.hello.pid = (uint32_t)getpid();
		m->u.hello.id = s->id;
		m->u.hello.rank = -1;
		proto_random(s->nonce, PROTO_NONCE);
		memcpy(m->u.hello.nonce, s->nonce, PROTO_NONCE);
		snprintf(m->u.hello.host, sizeof(m->u.hello.host), "synth");
		snprintf(m->u.hello.name, sizeof(m->u.hello.name), "synth");
		send_msg(bev, m);
		s->state = S_CHALLENGE;
		return;
	}
	st_down(s, "closed");
}

static void st_connect(struct stream *s)
{
	struct synth *sy = s->sy;

	s->bev = bufferevent_socket_new(sy->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!s->bev)
		abort();
	bufferevent_setcb(s->bev, read_cb, write_cb, event_cb, s);
	bufferevent_setwatermark(s->bev, EV_WRITE, 256u << 10, 0);
	bufferevent_enable(s->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->bev, (struct sockaddr *)&sy->sa,
				       sy->salen) < 0)
		st_down(s, "connect");
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	st_connect(arg);
}

/* --rate: streams held back by the budget are pumped again every 10 ms */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct synth *sy = arg;

	for (uint64_t i = 0; i < sy->nstreams; i++)
		pump(&sy->st[i]);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct synth *sy = arg;

	fprintf(stderr, "synth: timeout with %" PRIu64 " of %" PRIu64
		" streams done\n", sy->done, sy->nstreams);
	event_base_loopexit(sy->base, NULL);
}

static void usage(FILE *fp)
{
	fputs("Usage: synth --connect ADDR:PORT [--streams N] [--events E]\n"
	      "  [--batch B] [--window W] [--level L] [--unique]\n"
	      "  [--secret-file F] [--timeout S] [--rate EV_PER_S]\n"
	      "N streams of E events each, B per batch, W batches ahead of\n"
	      "the ACK, codec level L (0: stored). Exit 0 when all acked.\n",
	      fp);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"streams", required_argument, NULL, 'n'},
		{"events", required_argument, NULL, 'e'},
		{"batch", required_argument, NULL, 'b'},
		{"window", required_argument, NULL, 'w'},
		{"level", required_argument, NULL, 'l'},
		{"unique", no_argument, NULL, 'u'},
		{"secret-file", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"rate", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct synth sy = {0};
	const char *addr = NULL;
	unsigned timeout = 120;
	struct event *tev;
	struct timeval tv;
	uint64_t t0, t1;
	double secs;
	int opt, ok;

	sy.nstreams = 1;
	sy.events = 100000;
	sy.batch = 8192;
	sy.window = 32;
	sy.level = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': addr = optarg; break;
		case 'n': sy.nstreams = strtoull(optarg, NULL, 0); break;
		case 'e': sy.events = strtoull(optarg, NULL, 0); break;
		case 'b': sy.batch = strtoull(optarg, NULL, 0); break;
		case 'w': sy.window = strtoull(optarg, NULL, 0); break;
		case 'l': sy.level = atoi(optarg); break;
		case 'u': sy.unique = 1; break;
		case 't': timeout = (unsigned)atoi(optarg); break;
		case 'r': sy.rate = strtod(optarg, NULL); break;
		case 's': {
			int fd = open(optarg, O_RDONLY);
			ssize_t r = fd < 0 ? -1 : read(fd, sy.secret, sizeof(sy.secret));

			if (fd >= 0)
				close(fd);
			if (r < 0)
				return 2;
			while (r > 0 && sy.secret[r - 1] == '\n')
				r--;
			sy.secretlen = (size_t)r;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!addr || !sy.nstreams || !sy.events || !sy.batch || !sy.window ||
	    sy.batch > PROTO_CODEC_MAX_RECORDS) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	sy.salen = sizeof(sy.sa);
	if (evutil_parse_sockaddr_port(addr, (struct sockaddr *)&sy.sa,
				       &sy.salen) < 0) {
		fprintf(stderr, "synth: bad address %s\n", addr);
		return 2;
	}
	sy.batches = (sy.events + sy.batch - 1) / sy.batch;
	sy.codec = proto_codec_new(sy.level);
	sy.ev = calloc(sy.batch, sizeof(*sy.ev));
	sy.scratch_cap = proto_codec_bound(sy.batch);
	sy.scratch = malloc(sy.scratch_cap);
	sy.frame_cap = PROTO_FRAME_HDR + PROTO_BATCH_HDR + sy.scratch_cap;
	sy.frame = malloc(sy.frame_cap);
	sy.msg = malloc(sizeof(*sy.msg));
	sy.st = calloc(sy.nstreams, sizeof(*sy.st));
	sy.base = event_base_new();
	if (!sy.codec || !sy.ev || !sy.scratch || !sy.frame || !sy.msg ||
	    !sy.st || !sy.base)
		return 1;
	if (!sy.unique) {
		size_t nlast = batch_records(&sy, sy.batches);

		sy.data_full = malloc(sy.scratch_cap);
		sy.data_last = malloc(sy.scratch_cap);
		if (encode(&sy, 0, 0, sy.batch, sy.data_full, sy.scratch_cap,
			   &sy.len_full) ||
		    encode(&sy, 0, 0, nlast, sy.data_last, sy.scratch_cap,
			   &sy.len_last))
			return 1;
	}
	for (uint64_t i = 0; i < sy.nstreams; i++) {
		struct stream *s = &sy.st[i];

		s->sy = &sy;
		while (!s->id)
			proto_random(&s->id, sizeof(s->id));
		{
			uint8_t key[PROTO_STREAM_KEY];

			proto_random(key, sizeof(key));
			proto_stream_verifier(key, s->id, s->verifier);
		}
		s->next_seq = 1;
		s->retry = evtimer_new(sy.base, retry_cb, s);
		st_connect(s);
	}
	sy.t_begin = now_ns();
	if (sy.rate > 0) {
		struct timeval tick = {0, 10000};

		sy.tick = event_new(sy.base, -1, EV_PERSIST, tick_cb, &sy);
		event_add(sy.tick, &tick);
	}
	tev = evtimer_new(sy.base, timeout_cb, &sy);
	tv.tv_sec = timeout;
	tv.tv_usec = 0;
	evtimer_add(tev, &tv);
	t0 = now_ns();
	event_base_dispatch(sy.base);
	t1 = now_ns();
	secs = (double)(t1 - t0) / 1e9;
	ok = sy.done == sy.nstreams;
	printf("synth: streams=%" PRIu64 " done=%" PRIu64 " events=%" PRIu64
	       " batches=%" PRIu64 " sent=%" PRIu64 " acked=%" PRIu64
	       " reconnects=%" PRIu64 " seconds=%.3f events_per_s=%.0f"
	       " batch_bytes=%zu\n", sy.nstreams, sy.done,
	       sy.nstreams * sy.events, sy.nstreams * sy.batches,
	       sy.sent_batches, sy.acked_batches, sy.reconnects, secs,
	       (double)(sy.nstreams * sy.events) / secs,
	       sy.unique ? (size_t)0 : sy.len_full);
	for (uint64_t i = 0; i < sy.nstreams; i++) {
		if (sy.st[i].bev)
			bufferevent_free(sy.st[i].bev);
		event_free(sy.st[i].retry);
	}
	event_free(tev);
	if (sy.tick)
		event_free(sy.tick);
	event_base_free(sy.base);
	proto_codec_free(sy.codec);
	free(sy.ev);
	free(sy.scratch);
	free(sy.frame);
	free(sy.msg);
	free(sy.st);
	free(sy.data_full);
	free(sy.data_last);
	return ok ? 0 : 1;
}
