/*
 * sensor/rt_fd.c - the runtime's own descriptors, kept out of the program's
 * way.
 *
 * The runtime owns a few descriptors (the collector socket, the sender's
 * eventfd, /proc/self/stat). Each lives in a slot; it is moved high
 * (F_DUPFD_CLOEXEC at or above a base well clear of the numbers programs
 * use) and is close-on-exec. A program may still close it or dup2 onto it
 * (a daemon closing every descriptor above 2 by close, close_range or
 * closefrom, MPICH's proxy rearranging its low descriptors in a forked
 * child): the wrapper first evicts the
 * slot (its file moves to another free number, or the slot is dropped
 * when there is none outside the range being closed), then the program's
 * call runs and succeeds as it would untraced. The sender notices a
 * dropped slot and makes a new descriptor (reconnects, a new eventfd).
 *
 * Safety: every system call on a slot's descriptor runs between
 * sn_own_get() and sn_own_put(), which count users in one of two phases.
 * An eviction publishes the new number, then waits until each phase in
 * turn has no user (flipping new users to the other one): after that
 * nobody can still hold the old number, so the program may reuse it. The owner's own close
 * (sn_own_take) marks the slot "closing" first, and sn_own_adopt marks the
 * low number it leaves "dropping", so an eviction racing with either waits
 * instead of letting the program's new descriptor be closed by the
 * runtime. Everything here is atomics and raw system calls:
 * async-signal-safe, no lock, usable in a forked child.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sensor/rt.h"

/* Descriptors go at or above this (or half the soft RLIMIT_NOFILE when
 * that is lower): far above what programs number by hand (shells use 10
 * and up, 255), below select()'s 1024 irrelevant to us (we poll). */
#define OWN_BASE 700
/* An eviction waits at most this long for the users of the old number
 * (the longest is a blocking send, bounded by SO_SNDTIMEO = 3 s). */
#define EVICT_WAIT_NS (4000000000ll)

struct own_slot {
	/* >= 0 the descriptor; -1 none; <= CLOSING(fd) being closed by the
	 * runtime (sn_own_take) */
	_Atomic int fd;
	/* the low number sn_own_adopt is closing after its move, or -1 */
	_Atomic int dropping;
	_Atomic unsigned phase;
	_Atomic int users[2];
};

#define CLOSING(fd) (-3 - (fd))

static struct own_slot slots[SN_OWN_N] = {
	[0 ... SN_OWN_N - 1] = {.fd = -1, .dropping = -1},
};
static _Atomic int own_base = -1;

static void raw_close(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/* See rt.h. */
void sn_raw_close(int fd)
{
	raw_close(fd);
}

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};

	syscall(SYS_nanosleep, &ts, NULL);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int base(void)
{
	int b = atomic_load(&own_base);
	struct rlimit rl;

	if (b >= 0)
		return b;
	b = OWN_BASE;
	if (syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < (rlim_t)b)
		b = (int)(rl.rlim_cur / 2);
	if (b < 3)
		b = 3;
	atomic_store(&own_base, b);
	return b;
}

/* A close-on-exec copy of fd at or above min, or -1. */
static int dup_at(int fd, long min)
{
	if (min > INT_MAX)
		return -1;
	return (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (int)min);
}

/* Wait until every user that started before now has finished: each
 * phase in turn is flipped away (new users count in the other) and
 * waited for until it reads zero. */
static void quiesce(struct own_slot *s)
{
	long long dl = now_ns() + EVICT_WAIT_NS;

	for (int round = 0; round < 2; round++) {
		unsigned old = atomic_fetch_xor(&s->phase, 1u) & 1u;

		/* past the deadline a user is stuck (a signal handler on
		 * its own thread): proceed rather than hang */
		while (atomic_load(&s->users[old]) > 0 && now_ns() < dl)
			pause_us(50);
	}
}

/* See rt.h. */
int sn_own_high(int fd)
{
	int hi;

	if (fd < 0 || fd >= base())
		return fd;
	hi = dup_at(fd, base());
	if (hi < 0)
		return fd;
	raw_close(fd);
	return hi;
}

/* See rt.h. The new descriptor is published at once, at the number the
 * kernel gave it (no call makes a socket or an eventfd at a chosen
 * number), then moved high like an eviction moves it: from the first
 * instruction after its creation a program's close, dup2 or close_range
 * over that number evicts it as any slot's, where a move before the
 * publication left a window in which the program closed the runtime's
 * descriptor (or a new file of its own under the runtime's number). The
 * low number is marked dropping before the slot moves off it, so that a
 * program's close over it waits until the runtime has closed it: else
 * both close it, and the second close may hit a file another thread of
 * the program opened at that number in between. */
int sn_own_adopt(int slot, int fd)
{
	struct own_slot *s = &slots[slot];
	int hi;

	if (fd < 0)
		return -1;
	atomic_store(&s->fd, fd);
	if (fd >= base() || (hi = dup_at(fd, base())) < 0)
		return fd;
	atomic_store(&s->dropping, fd);
	if (atomic_compare_exchange_strong(&s->fd, &fd, hi)) {
		quiesce(s);
		raw_close(fd);
		atomic_store(&s->dropping, -1);
		return hi;
	}
	/* evicted meanwhile: the program's call closes the low number, the
	 * eviction's copy (or none) is the slot's */
	atomic_store(&s->dropping, -1);
	raw_close(hi);
	return sn_own_peek(slot);
}

/* See rt.h. */
int sn_own_get(int slot, unsigned *phase)
{
	struct own_slot *s = &slots[slot];
	unsigned p = atomic_load(&s->phase) & 1u;
	int fd;

	atomic_fetch_add(&s->users[p], 1);
	*phase = p;
	fd = atomic_load(&s->fd);
	return fd >= 0 ? fd : -1;
}

/* See rt.h. */
void sn_own_put(int slot, unsigned phase)
{
	atomic_fetch_sub(&slots[slot].users[phase & 1u], 1);
}

/* See rt.h. */
int sn_own_peek(int slot)
{
	int fd = atomic_load(&slots[slot].fd);

	return fd >= 0 ? fd : -1;
}

/* See rt.h. */
void sn_own_close(int slot)
{
	struct own_slot *s = &slots[slot];
	int fd = atomic_load(&s->fd);

	while (fd >= 0 && !atomic_compare_exchange_weak(&s->fd, &fd,
							CLOSING(fd)))
		;
	if (fd < 0)
		return;		/* already dropped by an eviction */
	quiesce(s);
	raw_close(fd);
	atomic_store(&s->fd, -1);
}

/* A copy of fd outside [lo, hi], or -1. The lowest free number at or
 * above the base first: a program closing every descriptor in a loop has
 * usually passed it already, so the runtime's moves at most once or twice
 * instead of running ahead of the loop to the limit. */
static int dest(int fd, long lo, long hi)
{
	int nfd = dup_at(fd, base());

	if (nfd >= 0 && nfd >= lo && nfd <= hi) {
		raw_close(nfd);
		nfd = dup_at(fd, hi + 1);
	}
	return nfd;
}

/* 1 when n lies in [lo, hi]. */
static int within(int n, long lo, long hi)
{
	return n >= 0 && n >= lo && n <= hi;
}

/* Evict one slot whose descriptor lies in [lo, hi]. The slot's number is
 * read before its dropping mark: sn_own_adopt sets the mark before it
 * moves the slot, so a move this loop sees comes with its mark. */
static void evict_slot(struct own_slot *s, long lo, long hi)
{
	for (;;) {
		int fd = atomic_load(&s->fd), nfd;

		if (within(atomic_load(&s->dropping), lo, hi)) {
			pause_us(20);	/* sn_own_adopt closes it */
			continue;
		}
		if (fd <= CLOSING(0)) {	/* the runtime is closing it */
			if (CLOSING(fd) < lo || CLOSING(fd) > hi)
				return;
			pause_us(20);
			continue;
		}
		if (fd < lo || fd > hi)
			return;
		nfd = dest(fd, lo, hi);
		if (atomic_compare_exchange_strong(&s->fd, &fd, nfd)) {
			quiesce(s);
			return;	/* the program's call closes the old one */
		}
		raw_close(nfd);
	}
}

/* See rt.h. */
void sn_own_evict(long lo, long hi)
{
	int any = 0;

	for (int i = 0; i < SN_OWN_N; i++) {
		int fd = atomic_load(&slots[i].fd);

		if (fd <= CLOSING(0))
			fd = CLOSING(fd);
		if (within(fd, lo, hi) ||
		    within(atomic_load(&slots[i].dropping), lo, hi))
			any = 1;
	}
	/* a vfork child shares our memory but not our descriptor table:
	 * what it closes is its own copy, the slots stay the parent's */
	if (!any || sn_in_vfork_child())
		return;
	for (int i = 0; i < SN_OWN_N; i++)
		evict_slot(&slots[i], lo, hi);
}

/* See rt.h. */
void sn_own_atfork_child(void)
{
	for (int i = 0; i < SN_OWN_N; i++) {
		int fd = atomic_load(&slots[i].fd);

		if (fd <= CLOSING(0))
			fd = CLOSING(fd);
		raw_close(fd);
		atomic_store(&slots[i].fd, -1);
		/* the forking thread was not adopting (the sender does):
		 * a mark left is another thread's, gone in the child */
		atomic_store(&slots[i].dropping, -1);
		atomic_store(&slots[i].users[0], 0);
		atomic_store(&slots[i].users[1], 0);
	}
}

/* ---- absolute paths ------------------------------------------------------
 *
 * The paths the wrappers record are absolute: a relative one is joined to
 * the working directory (for AT_FDCWD) or to the directory its dirfd
 * names, then cleaned lexically ("." and empty components dropped, ".."
 * takes the previous one off: a symbolic link followed by ".." is not
 * resolved as the kernel would). No system call per call: the working
 * directory is read once (getcwd) and kept until a chdir/fchdir wrapper
 * says it changed (sn_cwd_forget); a directory descriptor's path is found
 * by its path string id (the id the fd table holds for it) in a small
 * cache filled when a directory is opened, or read once from
 * /proc/self/fd when not there. Both are lock-free to read; a writer that
 * finds the other busy leaves the cache alone (a forked child never waits
 * on a lock its parent's other thread held). */

#define PATH_CAP 4096
#define DIR_CACHE 16

static struct {
	_Atomic unsigned seq;	/* odd while written */
	_Atomic int known;
	_Atomic int busy;	/* a writer is on it */
	size_t len;
	char s[PATH_CAP];
} cwd;

static struct dir_ent {
	_Atomic unsigned seq;
	_Atomic int64_t id;
	size_t len;
	char s[PATH_CAP];
} dirs[DIR_CACHE];
static _Atomic int dirs_busy;
static _Atomic unsigned dirs_next;

/* Bumped by every chdir: a getcwd taken before one must not be stored as
 * known after it (a thread racing a chdir would keep the old directory). */
static _Atomic unsigned cwd_gen;

/* See rt.h. */
void sn_cwd_forget(void)
{
	atomic_fetch_add(&cwd_gen, 1);
	atomic_store(&cwd.known, 0);
}

/* Copy a seqlock-protected string into out; its length, or 0 when a writer
 * kept changing it. */
static size_t seq_copy(_Atomic unsigned *seq, const char *s, const size_t *len,
		       char *out, size_t cap)
{
	for (int tries = 0; tries < 8; tries++) {
		unsigned a = atomic_load_explicit(seq, memory_order_acquire);
		size_t n;

		if (a & 1u)
			continue;
		n = *len;
		if (n >= cap)
			n = cap - 1;
		memcpy(out, s, n);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(seq, memory_order_relaxed) == a)
			return n;
	}
	return 0;
}

static void seq_store(_Atomic unsigned *seq, char *dst, size_t *len,
		      const char *src, size_t n)
{
	atomic_fetch_add_explicit(seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(dst, src, n);
	*len = n;
	atomic_fetch_add_explicit(seq, 1, memory_order_release);
}

/* The working directory into out: its length, 0 when unknown. */
static size_t cwd_get(char *out, size_t cap)
{
	size_t n = 0;
	long r;
	int z = 0;

	if (atomic_load_explicit(&cwd.known, memory_order_acquire)) {
		n = seq_copy(&cwd.seq, cwd.s, &cwd.len, out, cap);
		if (n)
			return n;
	}
	unsigned gen = atomic_load(&cwd_gen);

	r = syscall(SYS_getcwd, out, cap);
	if (r <= 1 || out[0] != '/')
		return 0;
	n = strnlen(out, cap);
	if (atomic_compare_exchange_strong(&cwd.busy, &z, 1)) {
		seq_store(&cwd.seq, cwd.s, &cwd.len, out, n);
		if (atomic_load(&cwd_gen) == gen)
			atomic_store_explicit(&cwd.known, 1, memory_order_release);
		atomic_store(&cwd.busy, 0);
	}
	return n;
}

/* See rt.h. */
void sn_dir_remember(int64_t id, const char *s, size_t n)
{
	int z = 0;
	struct dir_ent *d;

	if (!id || !n || n >= PATH_CAP || s[0] != '/')
		return;
	if (!atomic_compare_exchange_strong(&dirs_busy, &z, 1))
		return;
	d = &dirs[atomic_fetch_add(&dirs_next, 1) % DIR_CACHE];
	atomic_store(&d->id, 0);
	seq_store(&d->seq, d->s, &d->len, s, n);
	atomic_store(&d->id, id);
	atomic_store(&dirs_busy, 0);
}

/* The path of directory descriptor fd into out: its length, 0 unknown. */
static size_t dir_get(int fd, char *out, size_t cap)
{
	int64_t id = sn_fd_path_fast(fd);
	char link[32];
	long r;
	size_t n;
	int k;

	for (int i = 0; id && i < DIR_CACHE; i++) {
		if (atomic_load_explicit(&dirs[i].id, memory_order_acquire) != id)
			continue;
		n = seq_copy(&dirs[i].seq, dirs[i].s, &dirs[i].len, out, cap);
		if (n && atomic_load(&dirs[i].id) == id)
			return n;
	}
	k = snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (k <= 0 || (size_t)k >= sizeof(link))
		return 0;
	r = syscall(SYS_readlink, link, out, cap - 1);
	if (r <= 0 || out[0] != '/')
		return 0;
	n = (size_t)r;
	sn_dir_remember(id, out, n);
	return n;
}

/* Clean the absolute path p[0..n) in place lexically; its new length. */
static size_t clean(char *p, size_t n)
{
	size_t w = 0, i = 0;

	while (i < n) {
		size_t j = i, len;

		while (j < n && p[j] == '/')
			j++;
		i = j;
		while (j < n && p[j] != '/')
			j++;
		len = j - i;
		if (len == 0 || (len == 1 && p[i] == '.')) {
			/* nothing */
		} else if (len == 2 && p[i] == '.' && p[i + 1] == '.') {
			while (w > 0 && p[w - 1] != '/')
				w--;
			if (w > 0)
				w--;
		} else {
			p[w++] = '/';
			memmove(p + w, p + i, len);
			w += len;
		}
		i = j;
	}
	if (w == 0)
		p[w++] = '/';
	p[w] = 0;
	return w;
}

/* See rt.h. */
size_t sn_path_abs(int dirfd, const char *path, char *out, size_t cap)
{
	size_t n, pl;

	if (!path || cap < 2)
		return 0;
	pl = strnlen(path, cap);
	if (path[0] == '/' || pl == 0 || pl >= cap)
		return 0;
	n = dirfd == AT_FDCWD ? cwd_get(out, cap) : dir_get(dirfd, out, cap);
	if (!n || n + 1 + pl >= cap)
		return 0;
	out[n] = '/';
	memcpy(out + n + 1, path, pl);
	return clean(out, n + 1 + pl);
}
