/*
 * sensor/rt_send.c - the sender thread: rings -> batches -> the collector.
 *
 * One sender thread per process (created with every signal blocked). It
 * drains every DRAIN_PERIOD_MS (100 ms) when DRAIN_MIN_RECORDS are waiting
 * or TAPESTRY_DRAIN_MS (1 s) have passed since the last drain (batches of many records
 * compress far better), when a ring passes half full (eventfd kick: until the rings are empty) or
 * when a flush is requested (an ACK or a PONG wakes it without draining);
 * drains the rings, maps the stamps onto
 * CLOCK_MONOTONIC, encodes a batch (proto_codec, zstd level 1), frames it
 * as BATCH (stream id, seq 1, 2, ...) and sends it over a blocking TCP
 * socket. Sent batches are kept until the collector's cumulative ACK
 * covers them (at most a quarter of TAPESTRY_BUFFER_BYTES; beyond that the
 * sender stops draining and the producers count drops). After a broken
 * connection it reconnects with backoff and resends what is unacknowledged.
 *
 * Connection: HELLO, CHALLENGE, AUTH, KEY (the stream key proof), WELCOME
 * (server proof checked), META,
 * then BATCH / PING / CLOCK / LOSS; BYE at the end (docs/ARCHITECTURE.md).
 * Clock: 20 PING/PONG rounds after connecting (phase 0), 5 every 5 s
 * (phase 1), 20 at the end (phase 2), shipped as CLOCK frames.
 * Its own work appears in the trace: FLUSH (encode; its cpu_ns also
 * counts collecting the batch from the rings) and SEND events with
 * durations, MEM_SAMPLE every TAPESTRY_MEM_PERIOD_MS.
 *
 * Everything here runs on the sender thread except sn_sender_kick(),
 * sn_sender_flush() and the fork/resume requests, which only touch
 * atomics and the eventfd.
 *
 * Descriptors: the sender thread takes a descriptor table of its own
 * (go_private; the socket and /proc/self/stat then live only there, out
 * of the program's reach). Where it cannot, the socket, the eventfd and
 * /proc/self/stat live in rt_fd.c's slots; every system call on one runs
 * between own_get() and own_put() (sn_own_get/put then), since the
 * program may close or dup2 onto the number at any time (the slot then
 * moves or is dropped). A dropped socket is a broken connection; a
 * dropped eventfd or stat file is made again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/codec.h"
#include "proto/error.h"
#include "proto/frame.h"
#include "proto/msg.h"
#include "sensor/rt.h"

#define BATCH_EVENTS 16384
#define DRAIN_PERIOD_MS 100	/* batch size: docs/modules/proto-codec.md */
/* a periodic drain waits for this many records, or for TAPESTRY_DRAIN_MS
 * (sn_cfg.drain_ms, default 1 s) since the last one: a few hundred records
 * a batch cost half again as many bytes per event as thousands (the
 * codec's and zstd's per-batch costs) */
#define DRAIN_MIN_RECORDS 4096
/* a drain that emptied the rings once goes on only while this many wait */
#define DRAIN_TAIL_MIN 1024
#define PING_PERIOD_NS (5ull * 1000000000ull)
#define LOSS_PERIOD_NS (100ull * 1000000ull)
#define RBUF 65536
/* pings of a burst (ping_burst): sent back to back, one collector wake-up */
#define PING_BURST 8
/* a stream that lived this long since its connection ends with a burst of
 * pings (phase 2): the drift needs a baseline; a shorter one has phase 0's */
#define PHASE2_MIN_NS 1000000000ull
/* the rings are populated past their first huge page after this long */
#define POPULATE_AFTER_NS 20000000ull

struct batch {
	struct batch *next;
	uint64_t seq;
	uint32_t nrec;
	size_t len;
	uint8_t *frame;
};

static struct {
	pthread_t thread;
	pid_t tid;
	uint32_t own_tid;	/* our thread index, once registered */
	int sock;
	uint64_t seq_next;	/* next seq to assign */
	uint64_t acked;		/* cumulative ack */
	uint64_t sent_upto;	/* last seq sent on this connection */
	struct batch *head, *tail;
	size_t kept_bytes, keep_limit;
	uint64_t node_id;
	struct proto_event *ev;
	size_t nev, nev_app;
	uint8_t *enc;
	size_t enccap;
	struct proto_codec *codec;
	struct proto_msg *msg;	/* decode scratch */
	struct proto_msg *out;	/* encode scratch (CLOCK, META) */
	struct proto_msg *tmp;	/* encode scratch (small messages) */
	uint8_t *rbuf;
	size_t rlen;
	uint64_t next_connect, backoff_ms;
	int warned, ended, own_payload;
	int welcomed;		/* this stream was welcomed once (KEY) */
	uint64_t last_ping, last_mem, last_loss;
	uint64_t next_drain;	/* the periodic drain is due (mono ns) */
	uint64_t last_drain;	/* the last drain (mono ns) */
	uint64_t loss_sent;
	uint64_t minflt, majflt;
	uint64_t collect_cpu;	/* thread CPU of collecting S.ev (in FLUSH) */
	uint8_t nonce[PROTO_NONCE];
	/* what the reader saw */
	int got_challenge, got_welcome, got_error;
	struct proto_challenge challenge;
	struct proto_welcome welcome;
	struct proto_pong pong;
	int got_pong;
	uint64_t ping_id;
	/* a burst of pings (ping_burst): ids burst_lo .. burst_lo + burst_n - 1,
	 * its samples as their PONGs come in */
	uint64_t burst_lo;
	uint32_t burst_n, burst_got;
	struct proto_clock_sample burst[PING_BURST];
	int peer_local;		/* the collector is on this host (hand_over) */
	uint64_t born;		/* the first connection's end of handshake (mono) */
	uint64_t started;	/* the loop's start (mono) */
} S = {.sock = -1, .seq_next = 1};

/* For the end-of-stream report (say_undelivered), also read by a thread
 * whose flush timed out: events in unacknowledged batches, drops said in
 * a LOSS frame, why the last delivery attempt failed (a literal). */
static _Atomic uint64_t kept_events, kept_batches, loss_said;
static _Atomic(const char *) why_failed;
/* the spool file that holds them (spool_undelivered), once written */
static char spool_path[512];
static _Atomic int spooled;
static _Atomic int said;
static _Atomic int running;
static _Atomic uint64_t flush_req, flush_done;
static _Atomic int flush_reason = -2;	/* the highest reason asked, -2 none */
static _Atomic int stop_req, resume_req, meta_dirty, calib_req;
/* bumped by the sender at each end of a flush or calibration and when it
 * stops; the threads that wait for those sleep on it (wait_sender) */
static _Atomic uint32_t wake_word;

static void wake_waiters(void)
{
	atomic_fetch_add(&wake_word, 1);
	syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
/* calib_req (sn_sender_calibrate) */
enum { CAL_NONE, CAL_ASKED, CAL_DONE, CAL_TAKEN };

static uint64_t mono(void)
{
	return sn_now_vdso();
}

/* ---- the sender's descriptors ---------------------------------------- */

/* The sender thread gives itself a descriptor table of its own
 * (unshare(CLONE_FILES), go_private): while a second thread shares the
 * program's table, the kernel takes and drops a reference to the file in
 * every read or write of the program (fdget's slow path: about the whole
 * libc budget of issue 23 on a write(2) to /dev/null, bench/sustained.sh,
 * bench/RESULTS.md). Its socket and files then live in that table
 * (priv_fd), out of the program's reach: no slot of rt_fd.c, nothing for
 * the program to close or dup2 onto. The eventfd stays in both: the
 * program's threads kick through the slot, the sender reads its own copy.
 * Where unshare fails, the slots as before (priv 0). */
static int priv;
static int priv_fd[SN_OWN_N] = {-1, -1, -1};

static int own_get(int slot, unsigned *ph)
{
	*ph = 0;
	return priv ? priv_fd[slot] : sn_own_get(slot, ph);
}

static void own_put(int slot, unsigned ph)
{
	if (!priv)
		sn_own_put(slot, ph);
}

static int own_peek(int slot)
{
	return priv ? priv_fd[slot] : sn_own_peek(slot);
}

static int own_adopt(int slot, int fd)
{
	if (!priv)
		return sn_own_adopt(slot, fd);
	priv_fd[slot] = fd;
	return fd;
}

static void own_close(int slot)
{
	if (!priv) {
		sn_own_close(slot);
	} else if (priv_fd[slot] >= 0) {
		/* past the close wrapper, which would act on the program's
		 * descriptor of that number */
		sn_raw_close(priv_fd[slot]);
		priv_fd[slot] = -1;
	}
}

/* Close the descriptors of this thread's table listed in
 * /proc/thread-self/fd but keep (kernels before close_range, 5.9): passes
 * of getdents64 until one closes nothing. 0, or -1 when the list cannot be
 * read. */
static int close_listed_but(int keep)
{
	char buf[4096];
	int dir, closed;

	dir = open("/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	do {
		long n;

		closed = 0;
		lseek(dir, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				/* struct linux_dirent64: ino, off, reclen, type, name */
				unsigned short reclen;
				const char *name = buf + off + 19;
				long fd;
				char *end;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));
				off += reclen;
				fd = strtol(name, &end, 10);
				if (*end || end == name || fd == keep || fd == dir)
					continue;
				sn_raw_close((int)fd);
				closed = 1;
			}
		}
	} while (closed);
	sn_raw_close(dir);
	return 0;
}

/* Close every descriptor of this thread's (private) table but keep. Its
 * copy of the program's table holds references to the program's files: a
 * pipe's write end kept here would keep the reader from ever seeing its
 * end. */
static void close_all_but(int keep)
{
	struct rlimit rl;
	long hi;

#ifdef SYS_close_range
	if ((keep == 0 || syscall(SYS_close_range, 0u, (unsigned)keep - 1, 0u) == 0) &&
	    syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) == 0)
		return;
#endif
	if (close_listed_but(keep) == 0)
		return;
	hi = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ?
		(long)rl.rlim_cur : 65536;
	for (long fd = 0; fd < hi; fd++)
		if (fd != keep)
			sn_raw_close((int)fd);
}

/* 1 when the program's threads can no longer kick us: the sender has its
 * own table and the program dropped the eventfd from its own (closefrom
 * and no number left to move it to; only the program's threads could make
 * another there). The loop then looks at the rings' kick flags every ms. */
static int kick_lost(void)
{
	return priv && (priv_fd[SN_OWN_EVENT] < 0 ||
			sn_own_peek(SN_OWN_EVENT) < 0);
}

/* On the sender thread, first thing: a descriptor table of its own with
 * only the eventfd in it (above). The eventfd's number is held as a user
 * of its slot across the unshare: a program's close, close_range or dup2
 * over it (a forked child closing everything right after fork, while
 * this thread starts) evicts the slot and waits for us first, so the copy
 * of the table holds the eventfd at that number, not nothing (the loop
 * would poll a closed number) nor a file the program opened there (the
 * loop would read the program's bytes). */
static void go_private(void)
{
	unsigned ph;
	int ev = sn_own_get(SN_OWN_EVENT, &ph), r, err;

	r = ev < 0 ? -1 : unshare(CLONE_FILES);
	err = errno;
	sn_own_put(SN_OWN_EVENT, ph);
	if (r != 0) {
		SN_INFO("descriptor table shared with the program (%s)",
			ev < 0 ? "no eventfd" : strerror(err));
		return;
	}
	close_all_but(ev);
	for (int i = 0; i < SN_OWN_N; i++)
		priv_fd[i] = -1;
	priv_fd[SN_OWN_EVENT] = ev;
	priv = 1;
}

/* Wake the sender. Async-signal-safe (one eventfd write). */
void sn_sender_kick(void)
{
	uint64_t one = 1;
	unsigned ph;
	int fd = sn_own_get(SN_OWN_EVENT, &ph);

	if (fd >= 0)
		syscall(SYS_write, fd, &one, sizeof(one));
	sn_own_put(SN_OWN_EVENT, ph);
}

/* ---- the sender's scheduling class (holding, issue 32) ---------------
 *
 * With a rank polling on every core, whatever the sender runs runs instead
 * of a rank: a wake-up in the normal class preempts one, for a drain of
 * milliseconds, and its partner waits as long. Holding (sn_cfg.hold), the
 * sender lowers itself (TAPESTRY_SENDER_SCHED, default idle: SCHED_IDLE,
 * it runs only on a core nothing else wants; batch: SCHED_BATCH, it never
 * preempts on a wake-up but has a normal share). A thread that waits for
 * it (a full ring, a flush at exit) lifts it back to the normal class
 * (sn_sender_boost): then nothing else can run on the waiter's core anyway,
 * and an idle sender on a machine where other work fills every core would
 * never finish the drain (a wait of 5 s, then drops). Leaving SCHED_IDLE
 * takes CAP_SYS_NICE or an RLIMIT_NICE of 20: without them the sender
 * takes SCHED_BATCH instead of SCHED_IDLE (leaving batch needs nothing). */
static _Atomic int sched_low;	/* 0 normal, 1 lowered */

static int sched_set(pid_t tid, int policy)
{
	struct sched_param sp = {0};

	return sched_setscheduler(tid, policy, &sp);
}

/* On the sender thread: lower itself when holding (again after a boost,
 * once the wait is over). */
static void sched_lower(void)
{
	static int policy = -1;	/* the class to lower to, found once */

	if (!sn_cfg.hold || sn_cfg.sender_sched == 0 || atomic_load(&sched_low))
		return;
	if (policy < 0) {
		policy = sn_cfg.sender_sched == 1 ? SCHED_IDLE : SCHED_BATCH;
		/* idle only when we may leave it again */
		if (policy == SCHED_IDLE &&
		    (sched_set(0, SCHED_IDLE) || sched_set(0, SCHED_OTHER)))
			policy = SCHED_BATCH;
	}
	if (sched_set(0, policy) == 0)
		atomic_store(&sched_low, 1);
}

/* See rt.h. Any thread; one system call when the sender is lowered. */
void sn_sender_boost(void)
{
	if (atomic_exchange(&sched_low, 0) && atomic_load(&running))
		(void)sched_set(S.tid, SCHED_OTHER);
}

/* See rt.h. */
int sn_sender_ending(void)
{
	return atomic_load(&flush_req) > atomic_load(&flush_done) ||
	       atomic_load(&stop_req) || atomic_load(&sn_state) != SN_ST_READY;
}

/* 1 while the sender thread runs. Async-signal-safe. */
int sn_sender_running(void)
{
	return atomic_load(&running);
}

/* 1 when the caller is the sender thread. Async-signal-safe. */
int sn_sender_is_self(void)
{
	return atomic_load(&running) && S.tid == gettid();
}

/* See rt.h. */
int sn_sender_own_table(void)
{
	return priv && sn_sender_is_self();
}

/* ---- frames out ---------------------------------------------------------- */

static void disconnect(const char *why)
{
	if (S.sock < 0)
		return;
	SN_INFO("disconnected: %s", why);
	atomic_store(&why_failed, why);
	own_close(SN_OWN_SOCK);
	S.sock = -1;
	S.sent_upto = S.acked;
	S.rlen = 0;
	S.next_connect = mono() + S.backoff_ms * 1000000ull;
}

/* One send(2) or recv(2) on the socket slot; -1 with EBADF when the
 * program closed it and no number was left to move it to. */
static ssize_t sock_io(int out, void *buf, size_t len)
{
	unsigned ph;
	int fd = own_get(SN_OWN_SOCK, &ph);
	ssize_t r;

	if (fd < 0) {
		errno = EBADF;
		r = -1;
	} else if (out) {
		r = send(fd, buf, len, MSG_NOSIGNAL);
	} else {
		r = recv(fd, buf, len, MSG_DONTWAIT);
	}
	own_put(SN_OWN_SOCK, ph);
	return r;
}

static int send_all(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t r = sock_io(1, (void *)p, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return PROTO_E_IO;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int send_msg(const struct proto_msg *m)
{
	uint8_t small[1024], *buf;
	size_t len;
	int rc = proto_msg_frame_buf(m, small, sizeof(small), &buf, &len);

	if (rc)
		return rc;
	rc = send_all(buf, len);
	if (buf != small)
		free(buf);
	return rc;
}

/* ---- frames in ----------------------------------------------------------- */

static void ack_upto(uint64_t seq)
{
	if (seq <= S.acked)
		return;
	S.acked = seq;
	while (S.head && S.head->seq <= seq) {
		struct batch *b = S.head;

		S.head = b->next;
		S.kept_bytes -= b->len;
		atomic_fetch_sub(&kept_events, b->nrec);
		atomic_fetch_sub(&kept_batches, 1);
		free(b->frame);
		free(b);
	}
	if (!S.head)
		S.tail = NULL;
}

/* 1 once every PONG of the burst came in (wait_for's flag). */
static int burst_flag;

/* A PONG of the burst under way (ping_burst): its sample, our receipt
 * stamped now. 1 when it was one. */
static int burst_pong(const struct proto_pong *p)
{
	struct proto_clock_sample *c;

	if (!S.burst_n || p->id < S.burst_lo || p->id >= S.burst_lo + S.burst_n)
		return 0;
	c = &S.burst[p->id - S.burst_lo];
	if (c->r == 0) {
		c->s = p->t_orig;
		c->rj = p->t_recv;
		c->sj = p->t_send;
		c->r = sn_clock_fix(sn_now_fast());
		if (++S.burst_got >= S.burst_n)
			burst_flag = 1;
	}
	return 1;
}

static void dispatch(const struct proto_msg *m)
{
	switch (m->type) {
	case PROTO_MSG_ACK:
		if (m->u.ack.stream == sn_stream_id())
			ack_upto(m->u.ack.seq);
		break;
	case PROTO_MSG_PONG:
		if (burst_pong(&m->u.pong))
			break;
		if (m->u.pong.id == S.ping_id) {
			S.pong = m->u.pong;
			S.got_pong = 1;
		}
		break;
	case PROTO_MSG_CHALLENGE:
		S.challenge = m->u.challenge;
		S.got_challenge = 1;
		break;
	case PROTO_MSG_WELCOME:
		S.welcome = m->u.welcome;
		S.got_welcome = 1;
		break;
	case PROTO_MSG_ERROR:
		SN_WARN("collector error %d: %s", m->u.error.code,
			m->u.error.message);
		S.got_error = 1;
		break;
	default:
		break;
	}
}

/* Read what is available (waiting at most timeout_ms for the first byte)
 * and dispatch every complete frame. 0, or a negative code when the
 * connection is broken (it is then closed). */
static int pump(int timeout_ms)
{
	struct pollfd p = {.fd = own_peek(SN_OWN_SOCK), .events = POLLIN};
	int r;

	if (S.sock < 0)
		return PROTO_E_CLOSED;
	if (p.fd < 0) {
		disconnect("socket closed by the program");
		return PROTO_E_CLOSED;
	}
	r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : PROTO_E_IO;
	if (r == 0)
		return 0;
	for (;;) {
		ssize_t n = sock_io(0, S.rbuf + S.rlen, RBUF - S.rlen);

		if (n == 0) {
			disconnect("closed by the collector");
			return PROTO_E_CLOSED;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			disconnect("receive error");
			return PROTO_E_IO;
		}
		S.rlen += (size_t)n;
		for (;;) {
			struct proto_frame f;
			size_t used = 0;
			int rc = proto_frame_decode(S.rbuf, S.rlen, RBUF, &f,
						    &used);

			if (rc == PROTO_E_TRUNCATED)
				break;
			if (rc == 0)
				rc = proto_msg_decode(&f, S.msg);
			if (rc) {
				disconnect("bad frame from the collector");
				return rc;
			}
			S.msg->type = f.type;
			dispatch(S.msg);
			memmove(S.rbuf, S.rbuf + used, S.rlen - used);
			S.rlen -= used;
		}
		if (S.rlen == RBUF) {
			disconnect("oversized frame from the collector");
			return PROTO_E_TOOBIG;
		}
	}
	return 0;
}

/* Pump until *flag is set or deadline (mono ns) passes. 1 when set.
 * tend (after META only: batches may go out): in steps of 2 ms, draining
 * the rings between them (sn_sender_tend), for an answer that takes long:
 * a collector short of CPU can take longer to answer than a ring takes to
 * fill at the program's full rate. */
static int wait_for(int *flag, uint64_t deadline, int tend)
{
	while (!*flag && !S.got_error) {
		uint64_t now = mono();
		int ms = (int)((deadline - now) / 1000000) + 1;

		if (now >= deadline || S.sock < 0)
			return 0;
		if (pump(tend && ms > 2 ? 2 : ms) < 0)
			return 0;
		if (tend && !*flag)
			sn_sender_tend();
	}
	return *flag;
}

/* ---- connection ---------------------------------------------------------- */

/* The collectors this sensor may deliver to (issue 33): its node
 * collector (TAPESTRY_COLLECTOR, sn_cfg), then those of
 * TAPESTRY_COLLECTOR_FALLBACK (HOST:PORT,... : the node's parent chain,
 * set by `tapestry run` and `launch`), tried in turn when one does not
 * answer. Read on the sender thread at its first connection. */
#define ALT_MAX 8
static struct {
	char host[256], port[16];
} alt[ALT_MAX + 1];
static int nalt, alt_cur;

static void alt_add(const char *v, size_t len)
{
	const char *colon = memrchr(v, ':', len), *h = v;
	size_t hl = colon ? (size_t)(colon - v) : 0, pl;
	long port;
	char pb[8], *end;

	if (!colon || nalt > ALT_MAX)
		return;
	pl = len - hl - 1;
	if (pl == 0 || pl >= sizeof(pb))
		return;
	memcpy(pb, colon + 1, pl);
	pb[pl] = 0;
	port = strtol(pb, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return;
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl >= sizeof(alt[0].host))
		return;
	if (hl)
		memcpy(alt[nalt].host, h, hl);
	else
		hl = (size_t)snprintf(alt[nalt].host, sizeof(alt[0].host),
				      "127.0.0.1");
	alt[nalt].host[hl] = 0;
	snprintf(alt[nalt].port, sizeof(alt[0].port), "%ld", port);
	nalt++;
}

static void alt_load(void)
{
	const char *v = getenv("TAPESTRY_COLLECTOR_FALLBACK");

	if (nalt)
		return;
	snprintf(alt[0].host, sizeof(alt[0].host), "%s", sn_cfg.host);
	snprintf(alt[0].port, sizeof(alt[0].port), "%s", sn_cfg.port);
	nalt = 1;
	while (v && *v) {
		size_t n = strcspn(v, ",");

		alt_add(v, n);
		v += n;
		v += *v == ',';
	}
}

static const char *alt_host(void)
{
	alt_load();
	return alt[alt_cur].host;
}

static const char *alt_port(void)
{
	alt_load();
	return alt[alt_cur].port;
}

/* The next collector to try after a failure; 0 when the turn wrapped
 * back to the node collector (every one failed once). */
static int alt_next(void)
{
	alt_load();
	alt_cur = (alt_cur + 1) % nalt;
	return alt_cur != 0;
}

/* 1 when the socket's two ends have one address (the collector runs on
 * this host: loopback, or this host's own address). */
static int same_host(int fd)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);

	if (getsockname(fd, (struct sockaddr *)&a, &la) < 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) < 0 ||
	    a.ss_family != b.ss_family)
		return 0;
	if (a.ss_family == AF_INET)
		return ((struct sockaddr_in *)&a)->sin_addr.s_addr ==
		       ((struct sockaddr_in *)&b)->sin_addr.s_addr;
	if (a.ss_family == AF_INET6)
		return !memcmp(&((struct sockaddr_in6 *)&a)->sin6_addr,
			       &((struct sockaddr_in6 *)&b)->sin6_addr,
			       sizeof(struct in6_addr));
	return 0;
}

/* Connect fd (non-blocking) to a within 1 s, then make it blocking with a
 * 3 s send timeout. 1 when connected. */
static int connect_one(int fd, const struct addrinfo *a)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	struct timeval tv = {.tv_sec = 3};
	int err = 0, one = 1;
	socklen_t el = sizeof(err);

	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS)
		return 0;
	if (poll(&p, 1, 1000) != 1)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err)
		return 0;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	S.peer_local = same_host(fd);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 1;
}

/* A connected socket, published in the socket slot; its number or -1. */
static int dial(void)
{
	struct addrinfo hints = {0}, *res = NULL;
	int fd = -1;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(alt_host(), alt_port(), &hints, &res) != 0 || !res)
		return -1;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		unsigned ph;
		int ok;

		fd = socket(a->ai_family,
			    a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		own_adopt(SN_OWN_SOCK, fd);
		fd = own_get(SN_OWN_SOCK, &ph);
		ok = fd >= 0 && connect_one(fd, a);
		own_put(SN_OWN_SOCK, ph);
		if (ok)
			break;
		own_close(SN_OWN_SOCK);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static void send_meta(void)
{
	/* no memset: 266 KB, 65 pages to touch (sn_meta_fill writes what
	 * the encoder reads) */
	S.out->type = PROTO_MSG_META;
	sn_meta_fill(&S.out->u.meta);
	if (send_msg(S.out))
		disconnect("META send failed");
}

static struct proto_msg *small_msg(uint8_t type)
{
	memset(S.tmp, 0, offsetof(struct proto_msg, u) +
	       sizeof(S.tmp->u.hello));
	S.tmp->type = type;
	return S.tmp;
}

static void send_loss(void)
{
	struct proto_msg *mp;
	uint64_t d = sn_threads_dropped();

	if (d == S.loss_sent || S.sock < 0)
		return;
	/* the drops never became batches: the LOSS names no seq, so that
	 * it cannot be taken for a collector's LOSS of one lost batch
	 * (PROTOCOL.md, "LOSS"; counted once by the reader) */
	mp = small_msg(PROTO_MSG_LOSS);
	mp->u.loss.stream = sn_stream_id();
	mp->u.loss.dropped = d;
	if (send_msg(mp) == 0) {
		S.loss_sent = d;
		atomic_store(&loss_said, d);
	}
	else
		disconnect("LOSS send failed");
}

/* The sender thread's CPU time (a system call: per batch, not per event):
 * FLUSH and SEND events carry it, since their wall time also counts the
 * moments the thread waited for a core. */
static uint64_t cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send_batch(struct batch *b)
{
	uint64_t t0 = sn_now_fast(), c0 = cpu_now();

	if (send_all(b->frame, b->len)) {
		disconnect("BATCH send failed");
		return;
	}
	S.sent_upto = b->seq;
	sn_emit(PROTO_EV_SEND, 0, t0, sn_now_fast(), b->nrec,
		(int64_t)b->len, (int64_t)b->seq, (int64_t)(cpu_now() - c0));
}

static void ping_rounds(int rounds, uint32_t phase)
{
	struct proto_clock *c = &S.out->u.clock;
	uint32_t n = 0;

	memset(c, 0, offsetof(struct proto_clock, sample));
	for (int i = 0; i < rounds && S.sock >= 0; i++) {
		struct proto_msg *m;
		uint64_t s;

		sn_sender_tend();	/* rounds take a while beside the program */
		if (S.sock < 0)
			break;
		m = small_msg(PROTO_MSG_PING);
		S.ping_id++;
		S.got_pong = 0;
		s = sn_clock_fix(sn_now_fast());
		m->u.ping.id = S.ping_id;
		m->u.ping.t_send = s;
		if (send_msg(m)) {
			disconnect("PING send failed");
			break;
		}
		if (!wait_for(&S.got_pong, mono() + 500000000ull, 1))
			break;
		c->sample[n].s = s;
		c->sample[n].rj = S.pong.t_recv;
		c->sample[n].sj = S.pong.t_send;
		c->sample[n].r = sn_clock_fix(sn_now_fast());
		n++;
	}
	S.last_ping = mono();
	if (n == 0 || S.sock < 0)
		return;
	S.out->type = PROTO_MSG_CLOCK;
	c->child = sn_stream_id();
	c->parent = S.node_id;
	c->phase = phase;
	c->n = n;
	if (send_msg(S.out))
		disconnect("CLOCK send failed");
}

/* A burst of n pings (n <= PING_BURST) sent back to back, their PONGs
 * awaited together (500 ms at most), shipped as one CLOCK frame of phase:
 * one wake-up of the collector instead of n round trips one after the
 * other. The samples stay valid bounds (a later ping's round trip
 * includes its wait behind the earlier ones at the collector; the fit
 * keeps the shortest). At the connection (phase 0) and at the end of a
 * stream that lived PHASE2_MIN_NS (phase 2): a short process waits for one
 * round trip, not 40 (issue 31: 20 rounds at each end were most of a
 * traced /bin/true's 30 ms). */
static void ping_burst(int n, uint32_t phase)
{
	struct proto_clock *c = &S.out->u.clock;
	uint32_t k = 0;

	if (n > PING_BURST)
		n = PING_BURST;
	memset(S.burst, 0, sizeof(S.burst));
	S.burst_lo = S.ping_id + 1;
	S.burst_n = (uint32_t)n;
	S.burst_got = 0;
	burst_flag = 0;
	for (int i = 0; i < n && S.sock >= 0; i++) {
		struct proto_msg *m = small_msg(PROTO_MSG_PING);

		m->u.ping.id = ++S.ping_id;
		m->u.ping.t_send = sn_clock_fix(sn_now_fast());
		if (send_msg(m)) {
			disconnect("PING send failed");
			break;
		}
	}
	if (S.sock >= 0 && n > 0)
		wait_for(&burst_flag, mono() + 500000000ull, 1);
	S.last_ping = mono();
	memset(c, 0, offsetof(struct proto_clock, sample));
	for (int i = 0; i < n; i++)
		if (S.burst[i].r)
			c->sample[k++] = S.burst[i];
	S.burst_n = 0;
	/* n == 0: a stream that ends before its first burst (a process
	 * that exits or execs within its connection's time) sends a CLOCK
	 * frame without samples, one round trip less at its end: the edge
	 * to its collector exists, and the post-processing takes the
	 * identity composed with the collector's path when both read one
	 * clock (the same boot, time namespace and drift: META boot_id ...,
	 * manager/post/post.c), as they do on a node; a stream on another
	 * clock than its collector's needs a process that lives a round
	 * trip longer (or is left on its host's clock) */
	if ((k == 0 && n > 0) || S.sock < 0)
		return;
	S.out->type = PROTO_MSG_CLOCK;
	c->child = sn_stream_id();
	c->parent = S.node_id;
	c->phase = phase;
	c->n = k;
	if (send_msg(S.out))
		disconnect("CLOCK send failed");
}

static int handshake(void)
{
	struct proto_msg *mp = small_msg(PROTO_MSG_HELLO);
	uint8_t proof[PROTO_MAC];
	uint64_t dl = mono() + 3000000000ull;
	char exe[PROTO_NAME_MAX + 1];
	ssize_t n;

	S.got_challenge = S.got_welcome = S.got_error = 0;
	proto_random(S.nonce, sizeof(S.nonce));
	mp->u.hello.role = PROTO_ROLE_SENSOR;
	mp->u.hello.pid = (uint32_t)getpid();
	mp->u.hello.id = sn_stream_id();
	mp->u.hello.rank = sn_rank();
	memcpy(mp->u.hello.nonce, S.nonce, PROTO_NONCE);
	if (gethostname(mp->u.hello.host, sizeof(mp->u.hello.host) - 1) < 0)
		strcpy(mp->u.hello.host, "unknown");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(mp->u.hello.name, sizeof(mp->u.hello.name), "%s", exe);
	if (send_msg(mp))
		return PROTO_E_IO;
	if (!wait_for(&S.got_challenge, dl, 0))
		return PROTO_E_AUTH;
	mp = small_msg(PROTO_MSG_AUTH);
	proto_auth_proof(PROTO_AUTH_CLIENT, sn_cfg.secret, sn_cfg.secretlen,
			 S.challenge.nonce, S.nonce, sn_stream_id(),
			 mp->u.auth.mac);
	if (send_msg(mp))
		return PROTO_E_IO;
	/* the stream key proof (PROTOCOL.md, "Stream keys"); a collector
	 * that does not know the stream asks its parent before WELCOME */
	if (S.challenge.flags & PROTO_CHALLENGE_KEY) {
		mp = small_msg(PROTO_MSG_KEY);
		proto_key_claim(&mp->u.key, sn_stream_verifier(), sn_stream_id(),
				S.challenge.nonce, S.nonce,
				S.challenge.flags);
		if (!S.welcomed)
			mp->u.key.flags |= PROTO_KEY_FIRST;
		if (send_msg(mp))
			return PROTO_E_IO;
	}
	if (!wait_for(&S.got_welcome, dl, 0))
		return PROTO_E_AUTH;
	proto_auth_proof(PROTO_AUTH_SERVER, sn_cfg.secret, sn_cfg.secretlen,
			 S.challenge.nonce, S.nonce, sn_stream_id(), proof);
	if (!proto_auth_equal(proof, S.welcome.mac)) {
		SN_WARN("collector failed to prove the job secret");
		return PROTO_E_AUTH;
	}
	S.node_id = S.welcome.node_id;
	S.welcomed = 1;
	return 0;
}

/* Connect, authenticate, send META and everything unacknowledged. */
static int try_connect(void)
{
	int rc;

	S.sock = dial();
	if (S.sock < 0) {
		rc = PROTO_E_CLOSED;
		goto fail;
	}
	S.rlen = 0;
	rc = handshake();
	if (rc)
		goto fail_sock;
	S.backoff_ms = 50;
	SN_INFO("connected to %s:%s", alt_host(), alt_port());
	send_meta();
	atomic_store(&meta_dirty, 0);
	S.sent_upto = S.acked;
	for (struct batch *b = S.head; b && S.sock >= 0; b = b->next)
		send_batch(b);
	if (!S.born)
		S.born = mono();
	if (S.sock >= 0)
		ping_burst(sn_sender_ending() ? 0 : PING_BURST, 0);
	if (S.sock >= 0)
		send_loss();
	return S.sock >= 0 ? 0 : PROTO_E_CLOSED;

fail_sock:
	own_close(SN_OWN_SOCK);
	S.sock = -1;
	atomic_store(&why_failed, S.got_error ?
		     "the collector refused the handshake (job secret?)" :
		     !S.got_challenge ? "no answer to the handshake" :
		     !S.got_welcome ? "the handshake was not answered" :
		     "the collector failed to prove the job secret");
	goto fail_said;
fail:
	atomic_store(&why_failed, "cannot connect");
fail_said:
	if (!S.warned) {
		SN_WARN("no collector at %s:%s (%s): events are counted as "
			"lost until one answers", alt_host(), alt_port(),
			proto_strerror(rc));
		S.warned = 1;
	}
	if (alt_next())	/* another collector of the tree: not doubled */
		S.backoff_ms = S.backoff_ms ? S.backoff_ms : 50;
	else
		S.backoff_ms = S.backoff_ms ? S.backoff_ms * 2 : 50;
	if (S.backoff_ms > 2000)
		S.backoff_ms = 2000;
	S.next_connect = mono() + S.backoff_ms * 1000000ull;
	return rc;
}

/* ---- batches ------------------------------------------------------------- */

static int collect(void *ctx, const struct proto_event *ev, size_t n)
{
	struct proto_event *out = S.ev + S.nev;

	(void)ctx;
	memcpy(out, ev, n * sizeof(*ev));
	sn_clock_fix_events(out, n);
	for (size_t i = 0; i < n; i++) {
		if (out[i].type == PROTO_EV_STRING ||
		    out[i].type == PROTO_EV_ARRAY)
			continue;
		if (out[i].tid != S.own_tid)
			S.nev_app++;
		else if (out[i].type != PROTO_EV_FLUSH &&
			 out[i].type != PROTO_EV_SEND)
			S.own_payload = 1;
	}
	S.nev += n;
	return 0;
}

/* Encode S.ev into a BATCH frame, keep it, send it when connected. */
static void ship(void)
{
	struct proto_msg *mp = small_msg(PROTO_MSG_BATCH);
	struct batch *b;
	uint64_t t0 = sn_now_fast(), c0 = cpu_now();
	size_t enc;
	int rc;

	if (S.nev == 0)
		return;
	rc = proto_codec_encode(S.codec, S.ev, S.nev, S.enc, S.enccap, &enc);
	if (rc) {
		SN_ERROR("codec: %s", proto_strerror(rc));
		goto drop;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		goto drop;
	mp->u.batch.stream = sn_stream_id();
	mp->u.batch.seq = S.seq_next;
	mp->u.batch.nrecords = (uint32_t)S.nev;
	mp->u.batch.data = S.enc;
	mp->u.batch.datalen = (uint32_t)enc;
	if (proto_msg_frame_alloc(mp, &b->frame, &b->len)) {
		free(b);
		goto drop;
	}
	b->seq = S.seq_next++;
	b->nrec = (uint32_t)S.nev;
	if (S.tail)
		S.tail->next = b;
	else
		S.head = b;
	S.tail = b;
	S.kept_bytes += b->len;
	atomic_fetch_add(&kept_events, b->nrec);
	atomic_fetch_add(&kept_batches, 1);
	sn_emit(PROTO_EV_FLUSH, 0, t0, sn_now_fast(), (int64_t)S.nev,
		(int64_t)b->len, (int64_t)(cpu_now() - c0 + S.collect_cpu), 0);
	S.nev = S.nev_app = 0;
	S.own_payload = 0;
	S.collect_cpu = 0;
	if (S.sock >= 0 && S.sent_upto + 1 == b->seq)
		send_batch(b);
	return;
drop:
	S.nev = S.nev_app = 0;
	S.own_payload = 0;
	S.collect_cpu = 0;
}

/* Drain the rings into batches. force: ship even the sender's own
 * bookkeeping; all: keep going until the rings are empty (bounded). */
static void drain(int force, int all)
{
	for (int round = 0; round < (all ? 256 : 4); round++) {
		size_t got, app;
		uint64_t c0;

		if (S.kept_bytes >= S.keep_limit)
			break;
		/* what came in while the last batch was encoded waits for the
		 * next drain unless it makes a batch worth its fixed cost
		 * (emptying the rings to the last record made tiny batches at
		 * several times the cost per record: bench/sustained.sh) */
		if (round > 0 && !force && sn_threads_pending() < DRAIN_TAIL_MIN)
			break;
		c0 = cpu_now();
		got = sn_threads_drain(collect, NULL, BATCH_EVENTS - S.nev);
		S.collect_cpu += cpu_now() - c0;
		app = S.nev_app;
		if (S.nev == BATCH_EVENTS || app > 0 ||
		    (S.nev > 0 && ((force && round == 0) || S.own_payload)))
			ship();
		/* stop when only our own FLUSH/SEND records came back */
		if (got == 0 || app == 0 ||
		    (!all && S.nev < BATCH_EVENTS && got < 1024))
			break;
	}
}

/* Between the samples of a calibration (sn_calibrate, on this thread) and
 * between clock rounds (after META, so batches may go out): drain the rings when they hold DRAIN_MIN_RECORDS (post-mortem mode: when
 * one is half full, as the loop does). The start-up calibration runs
 * while the program already runs and lasts longer than a ring of the
 * default budget takes to fill at a cheap call's full rate: drained only
 * after it, the first lap would overflow (events lost in stream mode, a
 * wait in post-mortem mode). */
void sn_sender_tend(void)
{
	int saved = sn_tls.guard;

	/* not in the exit calibration: the exiting thread waits 1 s for it
	 * (sn_sender_calibrate), and the program is about to end anyway */
	if (!sn_sender_is_self() || S.ended ||
	    atomic_load(&calib_req) == CAL_TAKEN ||
	    !(sn_cfg.postmortem || sn_cfg.hold ? sn_threads_kicked() :
	      sn_threads_pending() >= DRAIN_MIN_RECORDS))
		return;
	sn_tls.guard = 1;	/* the calibration clears it: our calls untraced */
	sn_clock_anchor();
	drain(0, 1);
	sn_tls.guard = saved;
}

/* ---- memory sampler ------------------------------------------------------ */

static void mem_sample(void)
{
	char buf[1024], *p;
	unsigned long long minflt = 0, majflt = 0, vsize = 0;
	long long rss = 0;
	ssize_t n = -1;
	uint64_t t;
	unsigned ph;
	int fd;

	if (own_peek(SN_OWN_STAT) < 0 &&
	    own_adopt(SN_OWN_STAT, open("/proc/self/stat",
					   O_RDONLY | O_CLOEXEC)) < 0)
		return;
	t = sn_now_fast();
	fd = own_get(SN_OWN_STAT, &ph);
	if (fd >= 0)
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	own_put(SN_OWN_STAT, ph);
	if (n <= 0)
		return;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p)
		return;
	/* fields after the command: 3 state ... 10 minflt 12 majflt 23 vsize
	 * 24 rss (proc(5)) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %llu %*u %llu %*u "
		   "%*u %*u %*d %*d %*d %*d %*d %*d %*u %llu %lld",
		   &minflt, &majflt, &vsize, &rss) != 4)
		return;
	sn_emit(PROTO_EV_MEM_SAMPLE, PROTO_EVF_INSTANT, t, t,
		rss * (long long)sysconf(_SC_PAGESIZE),
		(int64_t)(minflt - S.minflt), (int64_t)(majflt - S.majflt),
		(int64_t)vsize);
	S.minflt = minflt;
	S.majflt = majflt;
	S.own_payload = 1;
}

/* ---- flush / end --------------------------------------------------------- */

/* At the end of a stream: what did not reach the collector, on stderr
 * whatever TAPESTRY_LOG says (one line, once; nothing when all is
 * delivered): events in unacknowledged batches, events not yet shipped
 * (pending: the caller's count of them), and events dropped with the
 * buffers full that no LOSS frame told the collector of. Called by the
 * sender at the end of its flush, or by the exiting thread when the
 * flush timed out (atomics only). */
static void say_undelivered(uint64_t pending)
{
	uint64_t kept = atomic_load(&kept_events) + pending;
	uint64_t drops = sn_threads_dropped(), told = atomic_load(&loss_said);
	uint64_t unsaid = drops > told ? drops - told : 0;
	const char *why = atomic_load(&why_failed);

	if ((kept == 0 && unsaid == 0) || atomic_exchange(&said, 1))
		return;
	if (atomic_load(&spooled)) {
		sn_log(1, "sensor", "%llu events of this process could not be "
		       "delivered to the collectors (%s): kept for the job in "
		       "%s (%llu dropped with the buffers full, counted there)",
		       (unsigned long long)kept, why ? why :
		       "not acknowledged before the end", spool_path,
		       (unsigned long long)drops);
		return;
	}
	sn_log(1, "sensor", "%llu events of this process were not delivered "
	       "to the collector at %s:%s (%llu in %llu unacknowledged "
	       "batches or not shipped, %llu dropped with the buffers full): "
	       "%s", (unsigned long long)(kept + unsaid), sn_cfg.host,
	       sn_cfg.port, (unsigned long long)kept,
	       (unsigned long long)atomic_load(&kept_batches),
	       (unsigned long long)drops,
	       why ? why : "not acknowledged before the end");
}

/* ---- the spool (issue 33) ------------------------------------------------ */

/* What could not be delivered at the end of a stream goes into a file of
 * TAPESTRY_SPOOL (set by `tapestry run` and `launch`: a directory the
 * manager collects on this host; for a bare collector tree the node
 * collector's --spool, read when it starts): the stream's META, every
 * unacknowledged batch as framed, its LOSS (the running total of drops)
 * and BYE(reason), behind the header of docs/FORMAT.md, "Sensor spool".
 * The job then holds these events, or at least their exact count. Written
 * whole under a temporary name, then renamed: a reader never sees half a
 * file. Sender thread only. */
static int spool_put(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int spool_msg(int fd, const struct proto_msg *m)
{
	uint8_t small[1024], *buf;
	size_t len;
	int rc = proto_msg_frame_buf(m, small, sizeof(small), &buf, &len);

	if (rc)
		return -1;
	rc = spool_put(fd, buf, len);
	if (buf != small)
		free(buf);
	return rc;
}

static void spool_undelivered(int reason)
{
	const char *dir = getenv("TAPESTRY_SPOOL");
	uint64_t drops = sn_threads_dropped(), id = sn_stream_id();
	uint8_t head[16] = "TPSPOOL1";
	struct proto_msg *m;
	char tmp[sizeof(spool_path) + 8];
	int fd, bad = 0;

	if (!dir || !*dir || (!S.head && drops <= atomic_load(&loss_said)))
		return;
	snprintf(spool_path, sizeof(spool_path), "%s/%016llx.tps", dir,
		 (unsigned long long)id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", spool_path);
	/* a file of our own, never through a link planted at its name */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sn_log(1, "sensor", "cannot keep the undelivered events in "
		       "%s: %s", tmp, strerror(errno));
		return;
	}
	for (int i = 0; i < 8; i++)
		head[8 + i] = (uint8_t)(id >> (8 * i));
	bad |= spool_put(fd, head, sizeof(head));
	memset(&S.out->u.meta, 0, sizeof(S.out->u.meta));
	S.out->type = PROTO_MSG_META;
	sn_meta_fill(&S.out->u.meta);
	bad |= spool_msg(fd, S.out);
	for (struct batch *b = S.head; b && !bad; b = b->next)
		bad |= spool_put(fd, b->frame, b->len);
	m = small_msg(PROTO_MSG_LOSS);
	m->u.loss.stream = id;
	m->u.loss.dropped = drops;
	if (drops)
		bad |= spool_msg(fd, m);
	m = small_msg(PROTO_MSG_BYE);
	m->u.bye.stream = id;
	m->u.bye.last_seq = S.seq_next - 1;
	m->u.bye.reason = (uint32_t)reason;
	bad |= spool_msg(fd, m);
	bad |= fsync(fd);
	sn_raw_close(fd);
	if (bad || rename(tmp, spool_path) != 0) {
		sn_log(1, "sensor", "cannot keep the undelivered events in "
		       "%s: %s", spool_path, strerror(errno));
		unlink(tmp);
		return;
	}
	atomic_store(&spooled, 1);
}

/* The end of the stream on the connection: the last clock rounds, LOSS,
 * BYE (reason). 1 when the BYE went out. */
static int send_bye(int reason)
{
	struct proto_msg *m;

	if (S.born && mono() - S.born >= PHASE2_MIN_NS)
		ping_burst(PING_BURST, 2);
	send_loss();
	m = small_msg(PROTO_MSG_BYE);
	m->u.bye.stream = sn_stream_id();
	m->u.bye.last_seq = S.seq_next - 1;
	m->u.bye.reason = (uint32_t)reason;
	return S.sock >= 0 && send_msg(m) == 0;
}

/* The end of a stream without waiting for its BYE's ACK (issue 31 item
 * 4: that ACK comes from the root, several hand-overs away, and the
 * exiting process waited for them). Everything up to the BYE is written;
 * the stream is the collector's once its kernel has every byte: none left
 * unsent here (SIOCOUTQNSD; on this host's collector the bytes are then in
 * its receive queue), and to another host none unacknowledged by its
 * kernel (SIOCOUTQ), since the reset that an ACK arriving after our close
 * provokes would drop what is still in flight. A collector that reads
 * slowly (a full window) is waited for, in 1 ms steps, until dl. The ACKs
 * that came in are read first: a close with unread bytes resets the
 * connection at once. 1 when handed over (the caller closes). */
static int hand_over(uint64_t dl)
{
	for (;;) {
		int unsent = 0, unacked = 0, fd;
		unsigned ph;

		if (S.sock < 0)
			return 0;
		fd = own_get(SN_OWN_SOCK, &ph);
		if (fd < 0 || ioctl(fd, SIOCOUTQNSD, &unsent) < 0 ||
		    (!S.peer_local && ioctl(fd, SIOCOUTQ, &unacked) < 0))
			unsent = -1;
		own_put(SN_OWN_SOCK, ph);
		if (unsent < 0)
			return 0;
		if (pump(unsent || unacked ? 1 : 0) < 0)
			return 0;
		if (unsent == 0 && unacked == 0)
			return 1;
		if (mono() >= dl)
			return 0;
	}
}

static void handle_flush(void)
{
	uint64_t target = atomic_load(&flush_req);
	int reason, bye = 0, tries = 0, handed = 0;
	uint64_t dl;

	if (target <= atomic_load(&flush_done))
		return;
	reason = atomic_exchange(&flush_reason, -2);
	sn_clock_anchor();
	drain(1, 1);
	if (S.nev > 0)
		ship();
	if (S.sock < 0 && (reason >= 0 || !sn_cfg.postmortem))
		try_connect();
	/* a META changed since the last loop (MPI_Init's rank, just before
	 * a short program's exit) goes before the end, or the stream keeps
	 * rank -1 */
	if (S.sock >= 0 && atomic_exchange(&meta_dirty, 0))
		send_meta();
	/* at the end, the BYE right behind the last batch: a collector
	 * forwards a BYE at once with what it holds before it, where the
	 * last batches alone would wait for its --flush-ms at every level of
	 * the tree (the exiting process waited for that); the BYE's ACK
	 * covers every batch. After a reconnection (batches resent) it goes
	 * again below. */
	if (reason >= 0 && S.sock >= 0 && S.sent_upto + 1 >= S.seq_next)
		bye = send_bye(reason);
	/* -2 ships only: the process goes on (MPI_Finalize) and its end
	 * waits for the acknowledgements, quickly with its BYE, where a
	 * wait here lasted the collectors' --flush-ms at every level */
	dl = mono() + (reason == -2 ? 0 : 4000000000ull);
	/* the end (exit, exec, fatal signal) waits for the collector's
	 * kernel, not for the ACK (TAPESTRY_END_WAIT=ack: for it) */
	if (reason >= 0 && bye && !sn_cfg.end_ack)
		handed = hand_over(dl);
	while (!handed && S.acked + 1 < S.seq_next && mono() < dl) {
		if (S.sock < 0) {
			/* lost on the way: reconnect once more, resending,
			 * to each collector of the tree it knows in turn */
			if (try_connect() && ++tries >= nalt)
				break;
			bye = 0;
			continue;
		}
		if (S.sent_upto + 1 < S.seq_next) {
			for (struct batch *b = S.head; b && S.sock >= 0;
			     b = b->next)
				if (b->seq > S.sent_upto)
					send_batch(b);
		}
		pump(50);
	}
	if (reason >= 0 && S.sock >= 0 && !bye && (bye = send_bye(reason))) {
		dl = mono() + 1000000000ull;
		if (!sn_cfg.end_ack)
			handed = hand_over(dl);
		while (!handed && S.sock >= 0 && S.acked + 1 < S.seq_next &&
		       mono() < dl)
			pump(50);
	}
	if (reason >= 0 && bye)
		SN_DEBUG("BYE sent (last seq %llu, %s)",
			 (unsigned long long)(S.seq_next - 1),
			 handed ? "handed over" :
			 S.acked + 1 >= S.seq_next ? "acknowledged" :
			 "not acknowledged");
	/* handed over: the collector's now (nothing to spool or to say) */
	if (handed && S.seq_next > 1)
		ack_upto(S.seq_next - 1);
	if (reason >= 0 && S.sock >= 0)
		disconnect("end of stream");
	if (reason >= 0) {
		S.ended = 1;
		spool_undelivered(reason);
		say_undelivered(S.nev);
	}
	atomic_store(&flush_done, target);
	wake_waiters();
}

static void new_stream(void)
{
	S.born = 0;
	while (S.head)
		ack_upto(S.head->seq);
	S.seq_next = 1;
	S.acked = 0;
	S.sent_upto = 0;
	S.welcomed = 0;
	S.loss_sent = 0;
	atomic_store(&loss_said, 0);
	atomic_store(&said, 0);
	atomic_store(&spooled, 0);
	atomic_store(&why_failed, NULL);
	S.ended = 0;
	S.next_connect = 0;
}

/* The eventfd's number, made again when the program closed it and no
 * number was left to move it to (-1 when that fails: the loop then wakes
 * on its period only). Not on a table of our own: no program thread could
 * kick a new one there (kick_lost). */
static int own_event_fd(void)
{
	int fd = own_peek(SN_OWN_EVENT);

	if (fd < 0 && !priv)
		fd = own_adopt(SN_OWN_EVENT,
				  eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	return fd;
}

static void *sender_main(void *arg)
{
	int cached;

	(void)arg;
	sn_tls.guard = 1;
	S.tid = gettid();
	go_private();
	if (sn_thread_register())
		S.own_tid = sn_tls.thr->tid;
	if (sn_cfg.sens_mem)
		mem_sample();
	/* the connection first: a short process's exit waits for it (its
	 * events must reach the collector), never for a calibration measured,
	 * which comes next and gives way to an exit's flush
	 * (sn_sender_ending); one from the host's cache (rt_init.c) before,
	 * so that the first META holds its calib_ns (after, it made META go
	 * twice: 18 page faults and a send more a process) */
	cached = sn_calibrate_cached();
	if (!sn_cfg.postmortem)
		try_connect();
	if (!cached)
		sn_calibrate(0);
	S.started = mono();
	while (!atomic_load(&stop_req)) {
		/* holding: back to the low class once a waiter's drain is
		 * done (not while a flush is asked: the end is near) */
		if (!sn_sender_ending() && !sn_threads_kicked())
			sched_lower();
		struct pollfd p[2] = {
			{.fd = own_event_fd(), .events = POLLIN},
			{.fd = own_peek(SN_OWN_SOCK), .events = POLLIN},
		};
		uint64_t now = mono(), due = S.next_drain;
		int kicked = 0, full = 0, wait_ms;

		if (S.sock >= 0 && p[1].fd < 0)
			disconnect("socket closed by the program");

		if (sn_cfg.postmortem || sn_cfg.hold || S.ended)	/* no periodic drain */
			due = now + DRAIN_PERIOD_MS * 1000000ull;

		if (sn_cfg.sens_mem && !S.ended &&
		    S.last_mem + (uint64_t)sn_cfg.mem_period_ms * 1000000ull < due)
			due = S.last_mem + (uint64_t)sn_cfg.mem_period_ms * 1000000ull;
		wait_ms = due > now ? (int)((due - now + 999999) / 1000000) : 0;
		if (wait_ms > (kick_lost() ? 1 : DRAIN_PERIOD_MS))
			wait_ms = kick_lost() ? 1 : DRAIN_PERIOD_MS;
		if (poll(p, S.sock >= 0 ? 2 : 1, wait_ms) == 0 && kick_lost() &&
		    sn_threads_kicked()) {
			kicked = full = 1;
		} else if ((p[0].revents & POLLNVAL) && priv) {
			/* our copy is gone (cannot be, see go_private): the
			 * program's kicks no longer reach us, look at the
			 * rings' flags every ms instead of polling a closed
			 * number in a loop */
			priv_fd[SN_OWN_EVENT] = -1;
		} else if (p[0].revents & POLLIN) {
			uint64_t v;
			unsigned ph;
			int fd = own_get(SN_OWN_EVENT, &ph);

			if (fd >= 0 && syscall(SYS_read, fd, &v, sizeof(v)) < 0)
				v = 0;
			own_put(SN_OWN_EVENT, ph);
			kicked = full = 1;
		}
		if (S.sock >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			pump(0);
		if (atomic_exchange(&resume_req, 0)) {
			new_stream();
			sn_proc_start_event();
			sn_calib_replay();
		}
		now = mono();
		sn_clock_anchor();
		/* the rings' memory past their first 2 MiB, once the process
		 * lives on (rt_buf.c, map_ring) */
		if (now - S.started >= POPULATE_AFTER_NS)
			sn_threads_populate();
		if (sn_cfg.sens_mem && !S.ended &&
		    now - S.last_mem >= (uint64_t)sn_cfg.mem_period_ms * 1000000ull) {
			S.last_mem = now;
			mem_sample();
		}
		{	/* asked -> taken -> done (sn_sender_calibrate) */
			int want = CAL_ASKED;

			if (atomic_compare_exchange_strong(&calib_req, &want, CAL_TAKEN)) {
				drain(1, 1);	/* room in our ring for the samples */
				sn_calibrate(1);
				atomic_store(&calib_req, CAL_DONE);
				wake_waiters();
			}
		}
		if (atomic_load(&flush_req) > atomic_load(&flush_done)) {
			handle_flush();
			continue;
		}
		if (S.ended)
			continue;
		/* post-mortem: the rings are the buffer; drain them only when
		 * one is half full (its producer kicks), so the tracer does no
		 * work beside the application until then ([004]'s flushes) */
		if (!sn_cfg.postmortem && !sn_cfg.hold && now >= S.next_drain) {
			S.next_drain = now + (uint64_t)(sn_cfg.drain_ms < DRAIN_PERIOD_MS ?
					sn_cfg.drain_ms : DRAIN_PERIOD_MS) * 1000000ull;
			if (now - S.last_drain >= (uint64_t)sn_cfg.drain_ms * 1000000ull ||
			    sn_threads_pending() >= DRAIN_MIN_RECORDS)
				kicked = 1;
		}
		/* a ring past half full (its producer kicked): empty the
		 * rings, as [004]'s tracer flushed its whole buffer; a
		 * bounded drain here fell behind a producer of millions of
		 * events a second and the ring overflowed */
		if (kicked) {
			S.last_drain = now;
			drain(0, full);
		}
		if (S.sock >= 0) {
			if (atomic_exchange(&meta_dirty, 0))
				send_meta();
			if (S.sock >= 0 && now - S.last_ping >= PING_PERIOD_NS)
				ping_rounds(5, 1);
			if (S.sock >= 0 && now - S.last_loss >= LOSS_PERIOD_NS) {
				S.last_loss = now;
				send_loss();
			}
		} else if (!sn_cfg.postmortem && now >= S.next_connect) {
			try_connect();
		}
	}
	atomic_store(&running, 0);
	wake_waiters();
	return NULL;
}

/* Start the sender thread (idempotent). Allocates its buffers; returns 0
 * or a negative code (the program then runs untraced: events are dropped).
 * Not async-signal-safe. */
int sn_sender_start(void)
{
	sigset_t all, old;
	pthread_attr_t at;
	int rc = PROTO_E_NOMEM;

	if (atomic_load(&running))
		return 0;
	if (!S.ev)
		S.ev = malloc(BATCH_EVENTS * sizeof(*S.ev));
	S.enccap = proto_codec_bound(BATCH_EVENTS);
	if (!S.enc)
		S.enc = malloc(S.enccap);
	if (!S.codec)
		S.codec = proto_codec_new(1);
	if (!S.msg)
		S.msg = malloc(sizeof(*S.msg));
	if (!S.out)
		S.out = malloc(sizeof(*S.out));
	if (!S.tmp)
		S.tmp = malloc(sizeof(*S.tmp));
	if (!S.rbuf)
		S.rbuf = malloc(RBUF);
	if (!S.ev || !S.enc || !S.codec || !S.msg || !S.out || !S.tmp ||
	    !S.rbuf)
		return rc;
	S.keep_limit = (size_t)(sn_cfg.budget / 4);
	if (S.keep_limit < (1u << 20))
		S.keep_limit = 1u << 20;
	priv = 0;	/* the program's table until the thread has its own */
	if (own_event_fd() < 0)
		return PROTO_E_IO;
	atomic_store(&stop_req, 0);
	atomic_store(&running, 1);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1024 * 1024);
	rc = pthread_create(&S.thread, &at, sender_main, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		atomic_store(&running, 0);
		sn_own_close(SN_OWN_EVENT);
		return PROTO_E_IO;
	}
	return 0;
}

/* Wait until done(arg), the sender gone or dl (mono) passed: on a futex
 * the sender wakes (wake_waiters) when a flush or a calibration is done or
 * it stops, in steps of 10 ms at most (a wake-up lost to a race costs a
 * step, never the wait). It slept in 1 ms steps: a traced /bin/true, which
 * lives about a millisecond, paid up to a step more at its exit than its
 * flush took. Async-signal-safe. */
static void wait_sender(int (*done)(uint64_t), uint64_t arg, uint64_t dl)
{
	for (;;) {
		uint32_t w = atomic_load(&wake_word);
		uint64_t now = mono(), step;
		struct timespec ts;

		if (done(arg) || !atomic_load(&running) || now >= dl)
			return;
		step = dl - now < 10000000ull ? dl - now : 10000000ull;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)step;
		syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, w, &ts, NULL, 0);
	}
}

static int flush_done_by(uint64_t my)
{
	return atomic_load(&flush_done) >= my;
}

static int calib_done(uint64_t unused)
{
	(void)unused;
	return atomic_load(&calib_req) == CAL_DONE;
}

/* See rt.h. Waits with nanosleep (wait_sender), bounded by timeout_ms. */
void sn_sender_flush(int reason, int timeout_ms)
{
	uint64_t my;
	int cur;

	if (!atomic_load(&running) || sn_sender_is_self())
		return;
	cur = atomic_load(&flush_reason);
	while (reason > cur &&
	       !atomic_compare_exchange_weak(&flush_reason, &cur, reason))
		;
	my = atomic_fetch_add(&flush_req, 1) + 1;
	sn_sender_kick();
	sn_sender_boost();
	wait_sender(flush_done_by, my, mono() + (uint64_t)timeout_ms * 1000000ull);
	/* reason 1 is a fatal signal: we may be in its handler, where the
	 * rings' lock may be held by the interrupted code */
	if (reason >= 0 && !flush_done_by(my))
		say_undelivered(reason == 1 ? 0 : sn_threads_pending());
}

/* Have the sender calibrate again (the program is exiting, tracing still
 * on) and wait for it, at most timeout_ms; the final flush ships the CALIB
 * records. The start-up calibration runs beside the job's start (MPI_Init,
 * the other processes' connections and clock rounds), which only slow it
 * down, so the post-processing takes the lower of a stream's
 * calibrations.
 * calib_req: CAL_NONE, CAL_ASKED, CAL_TAKEN by the sender, CAL_DONE. A request
 * the sender has not taken by the deadline is withdrawn (a late sender does
 * not calibrate after tracing stopped); one it has taken is awaited 1 s
 * more (it takes tens of ms), and sn_calibrate() itself keeps nothing measured
 * while tracing stopped. Once per process: a second caller waits for the
 * first one's. */
void sn_sender_calibrate(int timeout_ms)
{
	int st = CAL_NONE;

	if (!atomic_load(&running) || sn_sender_is_self())
		return;
	if (atomic_compare_exchange_strong(&calib_req, &st, CAL_ASKED)) {
		sn_sender_kick();
		sn_sender_boost();
	}
	wait_sender(calib_done, 0, mono() + (uint64_t)timeout_ms * 1000000ull);
	st = CAL_ASKED;
	if (atomic_compare_exchange_strong(&calib_req, &st, CAL_NONE))
		SN_INFO("exit calibration withdrawn: the sender did not take "
			"it within %d ms", timeout_ms);
	else if (st == CAL_TAKEN)
		wait_sender(calib_done, 0, mono() + 1000000000ull);
}

/* Ask the sender to start a new stream (after a failed exec). */
void sn_sender_resume(void)
{
	atomic_store(&resume_req, 1);
	sn_sender_kick();
}

/* The metadata changed (rank known): send META again. */
void sn_sender_meta_changed(void)
{
	atomic_store(&meta_dirty, 1);
}

/* Stop the sender loop (after the final flush). Does not wait. */
void sn_sender_stop(void)
{
	atomic_store(&stop_req, 1);
	sn_sender_kick();
}

/* In a forked child: the sender thread does not exist here. Forget the
 * parent's connection and unacknowledged batches (they are the parent's;
 * the memory is left alone, since the parent's thread may have been
 * using it when the fork happened). sn_sender_start() makes a new one. */
void sn_sender_atfork_child(void)
{
	sn_own_atfork_child();
	priv = 0;
	atomic_store(&running, 0);
	atomic_store(&flush_req, 0);
	atomic_store(&flush_done, 0);
	atomic_store(&flush_reason, -2);
	atomic_store(&stop_req, 0);
	atomic_store(&resume_req, 0);
	atomic_store(&meta_dirty, 0);
	atomic_store(&calib_req, CAL_NONE);
	atomic_store(&sched_low, 0);	/* the child's sender starts normal */
	S.sock = -1;
	S.head = S.tail = NULL;
	S.kept_bytes = 0;
	atomic_store(&kept_events, 0);
	atomic_store(&kept_batches, 0);
	S.ev = NULL;
	S.enc = NULL;
	S.codec = NULL;
	S.msg = NULL;
	S.out = NULL;
	S.tmp = NULL;
	S.rbuf = NULL;
	S.nev = S.nev_app = 0;
	S.collect_cpu = 0;
	S.rlen = 0;
	S.warned = 0;
	S.backoff_ms = 0;
	S.last_ping = S.last_mem = S.last_loss = 0;
	S.minflt = S.majflt = 0;
	new_stream();
}
