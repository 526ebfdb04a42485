/*
 * sensor/rt_init.c - runtime life cycle: initialisation from the
 * environment, stream identity and metadata, calibration, fork, exit and
 * fatal signals.
 *
 * sn_init() is idempotent and may run from a wrapper library's constructor
 * or lazily from the first traced call (another library's constructor can
 * call a wrapped function before ours ran). It is the only place that
 * reads the environment.
 *
 * Fatal signals (every signal whose default action ends the process and
 * that programs commonly die of: fatal_sigs): our handler is installed at
 * init where the disposition is the default one, never where it is SIG_IGN
 * (inherited across exec: nohup's SIGHUP, a shell's SIGPIPE), where a
 * handler in its place would make blocking calls fail with EINTR.
 * The application's sigaction()/signal() calls on those signals go through
 * sn_sigaction_app(): we remember its handler (and report it back as the
 * current one) and keep ours installed in front, chaining to it. With no
 * application handler, ours emits SIGNAL, asks the sender to flush (bounded
 * wait), restores the default action and re-raises.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/auth.h"
#include "proto/clockid.h"
#include "proto/error.h"
#include "proto/num.h"
#include "sensor/rt.h"
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif
#if SN_HAVE_TSC
#include <cpuid.h>
#endif

_Atomic int sn_state;
struct sn_config sn_cfg;

static _Atomic uint64_t stream_id;
static int my_rank = -1, my_size = 0;
static _Atomic int exit_emitted;
static int atfork_done, onexit_done;
static pid_t my_pid;

static pthread_mutex_t meta_mu = PTHREAD_MUTEX_INITIALIZER;
/* The metadata, packed: keys side by side, values in an arena (a value
 * that outgrows its place takes a new one at the arena's end). Each
 * 4 KiB key/value slot of a struct proto_meta's shape was a page of its
 * own, touched at start: a page fault costs tens of us on the VMs here,
 * and a short process's start paid dozens (issue 31). */
static struct {
	char key[PROTO_KEY_MAX + 1];
	uint32_t off, cap;	/* the value in meta_arena */
} meta[PROTO_META_MAX];
#define META_ARENA (16 * (PROTO_VALUE_MAX + 1))
static char meta_arena[META_ARENA];
static uint32_t meta_used;
static int nmeta;

/* ---- configuration ------------------------------------------------------- */

/* See rt.h. */
void sn_cfg_bad(const char *name, const char *v, const char *want,
		const char *using)
{
	sn_log(1, "config", "%s='%.64s' ignored: want %s (using %s)", name, v,
	       want, using);
}

/* See sensor.h. */
int sn_env_word(const char *name, const char *const *words, int def,
		const char *want)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return def;
	for (int i = 0; words[i]; i++)
		if (!strcmp(v, words[i]))
			return i;
	sn_cfg_bad(name, v, want, def >= 0 ? words[def] : "the default");
	return def;
}

/* A whole number in [lo, hi] from getenv(name); def when unset, or, said,
 * when it is anything else. */
static long env_long(const char *name, long def, long lo, long hi)
{
	const char *v = getenv(name);
	char want[80], using[24];
	long l;

	if (!v || !*v)
		return def;
	if (!proto_parse_long(v, lo, hi, &l))
		return l;
	snprintf(want, sizeof(want), "a whole number from %ld to %ld", lo, hi);
	snprintf(using, sizeof(using), "%ld", def);
	sn_cfg_bad(name, v, want, using);
	return def;
}

/* TAPESTRY_BUFFER_BYTES: a byte count (proto_parse_size: k, M, G, "MiB",
 * "MB"), at most 1 TiB; at least 1 MiB (smaller is raised, silently: a
 * floor, not a mistake). */
static uint64_t parse_size(const char *s, uint64_t dflt)
{
	uint64_t v;

	if (!s || !*s)
		return dflt;
	if (proto_parse_size(s, 10, &v) || v > (1ull << 40)) {
		sn_cfg_bad("TAPESTRY_BUFFER_BYTES", s,
			   "bytes, or a number with k, M or G, at most 1 TiB",
			   "64M");
		return dflt;
	}
	return v < (1u << 20) ? 1u << 20 : v;
}

/* TAPESTRY_SENSORS: words (runs of letters, digits, '_' and '-') among libc,
 * mpi and mem, separated by anything else; an unknown word is said and
 * skipped; no known word: all three (said, unless the value is blank). */
static int sensor_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void read_sensors(const char *v)
{
	static const char *const names[] = {"libc", "mpi", "mem"};
	int on[3] = {0, 0, 0}, any = 0, bad = 0;

	for (int pass = 0; pass < 2; pass++) {	/* 0: which are on; 1: say */
		for (const char *p = v; p && *p;) {
			size_t n = 0;
			int k;

			while (*p && !sensor_word_char(*p))
				p++;
			while (sensor_word_char(p[n]))
				n++;
			if (!n)
				break;
			for (k = 0; k < 3; k++)
				if (strlen(names[k]) == n && !strncmp(p, names[k], n))
					break;
			if (pass == 0 && k < 3)
				on[k] = any = 1;
			else if (pass == 1 && k == 3) {
				char word[32];

				snprintf(word, sizeof(word), "%.*s",
					 (int)(n < 31 ? n : 31), p);
				sn_cfg_bad("TAPESTRY_SENSORS", word, "libc, mpi or mem",
					   any ? "the others" : "all three");
				bad = 1;
			}
			p += n;
		}
	}
	if (!any && !bad && v && strspn(v, " \t") < strlen(v))	/* "," */
		sn_cfg_bad("TAPESTRY_SENSORS", v, "libc, mpi or mem", "all three");
	if (!any)
		on[0] = on[1] = on[2] = 1;
	sn_cfg.sens_libc = on[0];
	sn_cfg.sens_mpi = on[1];
	sn_cfg.sens_mem = on[2];
}

/* Ranks of this job on this node (the launchers' variables), 0 unknown. */
static long local_ranks(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE",
		"MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "PALS_LOCAL_SIZE",
		"SLURM_NTASKS_PER_NODE", NULL};

	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		long l;

		if (v && *v && !proto_parse_long(v, 1, 1 << 20, &l))
			return l;
	}
	return 0;
}

/* TAPESTRY_HOLD: auto (default), on or off. Holding, in stream mode: the
 * sender drains only when a ring is half full (or at a flush), a full
 * ring waits for it (no drop), a ring takes a quarter of the budget; auto
 * holds when this node runs at least one rank per core the process may use
 * (ranks that poll on every core: what the sender and the collectors take
 * then is taken from a rank, and a sender that gets no core dropped events,
 * issue 32). TAPESTRY_SENDER_SCHED: the sender's class while holding,
 * idle (default), batch or normal (docs/modules/sensor-runtime.md). */
static void read_hold(void)
{
	static const char *const hw[] = {"auto", "on", "off", NULL};
	static const char *const sw[] = {"normal", "idle", "batch", NULL};
	int h = sn_env_word("TAPESTRY_HOLD", hw, 0, "auto, on or off");
	long ranks = local_ranks();
	cpu_set_t cs;
	long cpus = 0;

	if (sched_getaffinity(0, sizeof(cs), &cs) == 0)
		cpus = CPU_COUNT(&cs);
	if (cpus <= 0)
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int full = ranks > 0 && cpus > 0 && ranks >= cpus;
	/* a live feed (TAPESTRY_DRAIN_MS set: tapestry launch --live-ti, a
	 * tapestry live-ti beside the run) wants records every period: auto
	 * does not hold then (an idle sender beside ranks polling on every
	 * core ships nothing until they end), but a full ring still waits */
	const char *dm = getenv("TAPESTRY_DRAIN_MS");
	int live = dm && *dm;

	sn_cfg.hold = !sn_cfg.postmortem && (h == 1 || (h == 0 && full && !live));
	sn_cfg.sender_sched = sn_env_word("TAPESTRY_SENDER_SCHED", sw, 1,
					  "normal, idle or batch");
	if ((sn_cfg.hold || (h == 0 && full && !sn_cfg.postmortem)) &&
	    !getenv("TAPESTRY_RING_FULL"))
		sn_cfg.wait_full = 1;
	if (sn_cfg.hold && h == 0) {	/* said once a node (its first rank) */
		const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
		/* under tapestry run/launch the manager said it in its own
		 * line (TAPESTRY_HOLD_SAID=1): a debug line here then */
		int lvl = getenv("TAPESTRY_HOLD_SAID") ? 4 : 2;

		if (!lr)
			lr = getenv("MPI_LOCALRANKID");
		if ((!lr || !strcmp(lr, "0")) && (lvl == 2 || sn_cfg.log_level >= lvl))
			sn_log(lvl, "sensor", "%ld ranks on %ld cores: holding the "
			       "trace (drained when a ring is half full, a full "
			       "ring waits: nothing dropped; TAPESTRY_HOLD=off "
			       "streams)", ranks, cpus);
	}
}

static void read_secret_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		SN_ERROR("cannot read TAPESTRY_SECRET_FILE %s", path);
		return;
	}
	n = read(fd, sn_cfg.secret, sizeof(sn_cfg.secret) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	while (n > 0 && (sn_cfg.secret[n - 1] == '\n' ||
			 sn_cfg.secret[n - 1] == '\r'))
		n--;
	sn_cfg.secret[n] = 0;
	sn_cfg.secretlen = (size_t)n;
}

static void read_config(void)
{
	const char *v;

	memset(&sn_cfg, 0, sizeof(sn_cfg));
	{
		static const char *const lv[] = {"off", "error", "warn", "info",
						 "debug", NULL};

		sn_cfg.log_level = sn_env_word("TAPESTRY_LOG", lv, 0,
					    "off, error, warn, info or debug");
	}
	v = getenv("TAPESTRY_COLLECTOR");
	snprintf(sn_cfg.host, sizeof(sn_cfg.host), "127.0.0.1");
	snprintf(sn_cfg.port, sizeof(sn_cfg.port), "7450");
	if (v && *v) {
		const char *colon = strrchr(v, ':');

		const char *h = v;
		size_t hl = colon ? (size_t)(colon - v) : 0;
		char *end = NULL;
		long port = colon ? strtol(colon + 1, &end, 10) : 0;

		if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
			h++;
			hl -= 2;
		}
		/* an empty HOST (":9000") stays 127.0.0.1 */
		if (colon && hl < sizeof(sn_cfg.host) &&
		    end != colon + 1 && !*end && port > 0 && port < 65536) {
			if (hl) {
				memcpy(sn_cfg.host, h, hl);
				sn_cfg.host[hl] = 0;
			}
			snprintf(sn_cfg.port, sizeof(sn_cfg.port), "%ld", port);
		} else {
			sn_cfg_bad("TAPESTRY_COLLECTOR", v, "HOST:PORT (PORT a "
				   "number from 1 to 65535, [IPv6]:PORT)",
				   "127.0.0.1:7450");
		}
	}
	v = getenv("TAPESTRY_SECRET");
	if (v) {
		snprintf(sn_cfg.secret, sizeof(sn_cfg.secret), "%s", v);
		sn_cfg.secretlen = strlen(sn_cfg.secret);
	} else if ((v = getenv("TAPESTRY_SECRET_FILE")) && *v) {
		read_secret_file(v);
	}
	sn_cfg.budget = parse_size(getenv("TAPESTRY_BUFFER_BYTES"), 64u << 20);
	{
		static const char *const modes[] = {"stream", "postmortem", NULL};
		static const char *const full[] = {"drop", "wait", NULL};

		sn_cfg.postmortem = sn_env_word("TAPESTRY_MODE", modes, 0,
					     "stream or postmortem");
		/* a full ring: wait for the sender (post-mortem's default) or
		 * drop (stream's default: the program never waits for the
		 * tracer) */
		sn_cfg.wait_full = sn_env_word("TAPESTRY_RING_FULL", full,
					    sn_cfg.postmortem, "drop or wait");
	}
	{
		static const char *const ends[] = {"sent", "ack", NULL};

		/* the end of a stream waits for the collector's kernel to
		 * have every byte, or for the root's ACK (rt_send.c,
		 * hand_over) */
		sn_cfg.end_ack = sn_env_word("TAPESTRY_END_WAIT", ends, 0,
					  "sent or ack");
	}
	read_sensors(getenv("TAPESTRY_SENSORS"));
	read_hold();
	sn_cfg.mem_period_ms = (int)env_long("TAPESTRY_MEM_PERIOD_MS", 50, 1,
					     3600000);
	/* a live consumer (tapestry launch --live-ti) wants events soon; the
	 * default favours large batches (docs/modules/sensor-runtime.md) */
	sn_cfg.drain_ms = (int)env_long("TAPESTRY_DRAIN_MS", 1000, 5, 60000);
	v = getenv("TAPESTRY_CLOCK_DRIFT_PPM");
	if (proto_drift_ppm(v, &sn_cfg.drift_ppm))
		sn_cfg_bad("TAPESTRY_CLOCK_DRIFT_PPM", v,
			   "a number from -100000 to 100000", "0");
}

/* ---- identity and metadata ----------------------------------------------- */

/* The stream id of this process (random, new after fork and after a failed
 * exec). Thread- and async-signal-safe. */
uint64_t sn_stream_id(void)
{
	return atomic_load(&stream_id);
}

/* The stream's key never leaves the process; collectors learn its
 * verifier (proto/auth.h, "Stream keys"), with which a reconnection
 * proves it is this stream's and not another process speaking for it. */
static uint8_t stream_key[PROTO_STREAM_KEY];
static uint8_t stream_verifier[PROTO_MAC];

const uint8_t *sn_stream_verifier(void)
{
	return stream_verifier;
}

/* Draw a new random stream id and stream key (at start, in a forked
 * child, after a failed exec: before the sender thread runs). */
void sn_new_stream_id(void)
{
	uint64_t id = 0;

	while (id == 0)
		if (proto_random(&id, sizeof(id)))
			id = ((uint64_t)getpid() << 32) ^ sn_now_vdso();
	if (proto_random(stream_key, sizeof(stream_key))) {
		/* no entropy source at all: a key that is at least not the
		 * stream id (the proof still binds a reconnection to it) */
		uint64_t t = sn_now_vdso() ^ ((uint64_t)getpid() << 40);

		proto_hmac_sha256(&t, sizeof(t), &id, sizeof(id), stream_key);
	}
	proto_stream_verifier(stream_key, id, stream_verifier);
	atomic_store(&stream_id, id);
}

/* MPI world rank of this process, or -1. */
int sn_rank(void)
{
	return my_rank;
}

static void meta_put_locked(const char *key, const char *value)
{
	int i;

	for (i = 0; i < nmeta; i++)
		if (!strcmp(meta[i].key, key))
			break;
	if (i == nmeta) {
		if (nmeta == PROTO_META_MAX)
			return;
		nmeta++;
	}
	snprintf(meta[i].key, sizeof(meta[i].key), "%s", key);
	{
		size_t n = strnlen(value, PROTO_VALUE_MAX);

		if (n + 1 > meta[i].cap) {
			if (meta_used + n + 1 > META_ARENA) {	/* cannot be */
				meta[i].cap = 0;
				meta[i].off = 0;
				return;
			}
			meta[i].off = meta_used;
			meta[i].cap = (uint32_t)(n + 1);
			meta_used += (uint32_t)(n + 1);
		}
		memcpy(meta_arena + meta[i].off, value, n);
		meta_arena[meta[i].off + n] = 0;
	}
}

/* See sensor.h. Keys over 64 bytes and values over 4096 are cut; at most
 * PROTO_META_MAX keys (later ones are ignored). */
void sn_meta(const char *key, const char *value)
{
	if (!key || !*key || !value)
		return;
	pthread_mutex_lock(&meta_mu);
	meta_put_locked(key, value);
	pthread_mutex_unlock(&meta_mu);
	sn_sender_meta_changed();
}

static void meta_num(const char *key, long long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	meta_put_locked(key, b);
}

/* See rt.h. */
void sn_meta_fill(struct proto_meta *m)
{
	pthread_mutex_lock(&meta_mu);
	m->id = sn_stream_id();
	m->n = (uint32_t)nmeta;
	for (int i = 0; i < nmeta; i++) {
		/* the bytes used only: each of m's slots is 4 KiB apart */
		memcpy(m->kv[i].key, meta[i].key, strlen(meta[i].key) + 1);
		if (meta[i].cap)
			memcpy(m->kv[i].value, meta_arena + meta[i].off,
			       strlen(meta_arena + meta[i].off) + 1);
		else
			m->kv[i].value[0] = 0;
	}
	pthread_mutex_unlock(&meta_mu);
}

/* See sensor.h. */
void sn_set_rank(int rank, int size)
{
	if (rank == my_rank && size == my_size)
		return;
	my_rank = rank;
	my_size = size;
	pthread_mutex_lock(&meta_mu);
	meta_num("rank", rank);
	meta_num("size", size);
	pthread_mutex_unlock(&meta_mu);
	sn_sender_meta_changed();
}

/* See sensor.h. */
int sn_enabled(const char *part)
{
	if (!part)
		return 0;
	if (!strcmp(part, "libc"))
		return sn_cfg.sens_libc;
	if (!strcmp(part, "mpi"))
		return sn_cfg.sens_mpi;
	if (!strcmp(part, "mem"))
		return sn_cfg.sens_mem;
	return 0;
}

static int env_int(const char *a, const char *b, const char *c)
{
	const char *names[] = {a, b, c};

	for (int i = 0; i < 3; i++) {
		const char *v = names[i] ? getenv(names[i]) : NULL;

		if (v && *v)
			return atoi(v);
	}
	return -1;
}

static void meta_basics(void)
{
	char buf[PROTO_VALUE_MAX + 1];
	struct proto_clockid cid;
	const char *v;
	ssize_t n;
	int fd;

	pthread_mutex_lock(&meta_mu);
	if (gethostname(buf, sizeof(buf) - 1) < 0)
		strcpy(buf, "unknown");
	buf[sizeof(buf) - 1] = 0;
	meta_put_locked("host", buf);
	meta_num("pid", getpid());
	meta_num("ppid", getppid());
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	meta_put_locked("exe", buf);
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0 && i + 1 < n)
			buf[i] = ' ';
	buf[n] = 0;
	meta_put_locked("argv", buf);
	meta_num("rank", my_rank);
	meta_num("size", my_size);
	if ((v = getenv("TAPESTRY_MPI_OTHER")) && *v)	/* mpi_flavour.c */
		meta_put_locked("mpi_stood_down", v);
	meta_put_locked("clock", sn_clock_method());
	snprintf(buf, sizeof(buf), "%.0f", sn_clock_tsc_hz());
	meta_put_locked("tsc_hz", buf);
	meta_put_locked("mode", sn_cfg.postmortem ? "postmortem" : "stream");
	meta_put_locked("ring_full", sn_cfg.wait_full ? "wait" : "drop");
	if (sn_cfg.hold)
		meta_put_locked("hold", "on (ranks on every core: drained when a "
				"ring is half full, a full ring waits)");
	snprintf(buf, sizeof(buf), "%s%s%s", sn_cfg.sens_libc ? "libc," : "",
		 sn_cfg.sens_mpi ? "mpi," : "", sn_cfg.sens_mem ? "mem," : "");
	meta_put_locked("sensors", buf);
	meta_num("buffer_bytes", (long long)sn_cfg.budget);
	meta_num("drain_ms", sn_cfg.drain_ms);
	snprintf(buf, sizeof(buf), "%g", sn_cfg.drift_ppm);
	meta_put_locked("clock_drift_ppm", buf);
	/* which CLOCK_MONOTONIC this is: the machine's boot and the time
	 * namespace's offsets (the post-processing needs no estimate between
	 * equals) */
	proto_clockid_read(&cid);
	meta_put_locked("boot_id", cid.boot_id);
	meta_put_locked("timens", cid.timens);
	meta_put_locked("timens_offsets", cid.offsets);
	pthread_mutex_unlock(&meta_mu);
}

/* Emit PROC_START (pid, ppid, rank, size) on the calling thread. */
void sn_proc_start_event(void)
{
	uint64_t t = sn_now_fast();

	sn_emit(PROTO_EV_PROC_START, PROTO_EVF_INSTANT, t, t, getpid(),
		getppid(), my_rank, my_size);
}

/* ---- calibration cache ----------------------------------------------------
 *
 * What the runtime measures at start (the TSC's rate, 0.2 ms on the
 * program's start path; the hot path's costs, 8-30 ms of the sender's CPU
 * beside the program) depends on the host, its boot, its CPU, the sensor
 * library and the clock, not on the process. The first process measures
 * and writes them in a file; the next ones read it (issue 31: a traced
 * /bin/true paid 30 ms, make's 22 processes each calibrated). The file is
 * in the manager's cache directory (manager/launch/netcal.c, the same
 * chain): $TAPESTRY_CACHE_DIR ("" or "none": no cache), else
 * $XDG_CACHE_HOME/tapestry, else $HOME/.cache/tapestry; used only when
 * that directory is this user's alone (mode 0700) and the file is ours and
 * not writable by others. Its name is calib-HASH of the key, and the whole
 * key is in it and compared (sn_calcache_parse): a reboot, another CPU,
 * another build of the library or the other clock is another file. The
 * values are checked (a TSC from 50 MHz to 20 GHz, costs from 0 to 100 us);
 * a file that fails is ignored and replaced by the next measure. An exit
 * calibration lower than the file's (sn_calibrate(1)) replaces it: the
 * post-processing takes a stream's lowest too.
 */
#define CC_MAGIC "tapestry sensor calibration 1"

static struct {
	int on;			/* a cache directory and a key */
	char path[3072];	/* the file */
	char key[1024];		/* its key lines */
	struct sn_calcache v;	/* what the file held (v.have) */
} cc;

/* "host ..\nboot ..\ncpu ..\nlib PATH SIZE MTIME\nclock tsc|vdso\n" into
 * key; 0, or -1 when a part cannot be known (no cache then). */
static int cc_key(char *key, size_t cap, int use_tsc)
{
	char host[256], boot[64] = "", cpu[49] = "unknown";
	Dl_info di;
	struct stat st;
	ssize_t n;
	int fd, len;

	if (gethostname(host, sizeof(host) - 1) < 0)
		return -1;
	host[sizeof(host) - 1] = 0;
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, boot, sizeof(boot) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 32)
		return -1;
	boot[n] = 0;
	boot[strcspn(boot, "\n")] = 0;
#if SN_HAVE_TSC
	{
		unsigned r[12], a, b, c, d;

		if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
			for (unsigned i = 0; i < 3; i++)
				__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1],
					    &r[4 * i + 2], &r[4 * i + 3]);
			memcpy(cpu, r, 48);
			cpu[48] = 0;
			for (char *p = cpu; *p; p++)
				if (*p == '\n')
					*p = ' ';
		}
	}
#endif
	if (!dladdr((void *)cc_key, &di) || !di.dli_fname ||
	    stat(di.dli_fname, &st) < 0)
		return -1;
	len = snprintf(key, cap, "host %s\nboot %s\ncpu %s\nlib %s %lld %lld.%09ld\n"
		       "clock %s\n", host, boot, cpu, di.dli_fname,
		       (long long)st.st_size, (long long)st.st_mtim.tv_sec,
		       st.st_mtim.tv_nsec, use_tsc ? "tsc" : "vdso");
	return len > 0 && (size_t)len < cap ? 0 : -1;
}

/* The cache directory into dir (see above); 0, or -1: none. */
static int cc_dir(char *dir, size_t cap)
{
	const char *d = getenv("TAPESTRY_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (d && (!*d || !strcmp(d, "none")))
		return -1;
	if (d)
		n = snprintf(dir, cap, "%s", d);
	else if (x && *x == '/')
		n = snprintf(dir, cap, "%s/tapestry", x);
	else if (home && *home == '/')
		n = snprintf(dir, cap, "%s/.cache/tapestry", home);
	else
		return -1;
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* See rt.h. */
int sn_calcache_parse(const char *text, const char *key, struct sn_calcache *v)
{
	size_t ml = strlen(CC_MAGIC), kl = strlen(key);
	const char *p;

	memset(v, 0, sizeof(*v));
	if (strncmp(text, CC_MAGIC "\n", ml + 1) ||
	    strncmp(text + ml + 1, key, kl))
		return -1;
	for (p = text + ml + 1 + kl; *p;) {
		unsigned long long a = 0, b = 0;
		char word[16];
		int used = 0;

		if (sscanf(p, "%15s %llu %llu%n", word, &a, &b, &used) != 3 ||
		    (p[used] != '\n'))
			return -1;
		if (!strcmp(word, "tsc_mult")) {
			/* 2^32 ns per tick: 50 MHz .. 20 GHz */
			if (a < (1ull << 32) / 20 || a > (1ull << 32) * 20)
				return -1;
			v->tsc_mult = a;
			v->have |= SN_CC_TSC;
		} else if (!strcmp(word, "hot_ps") || !strcmp(word, "string_ps") ||
			   !strcmp(word, "stdio_ps")) {
			int k = word[1] == 'o' ? 0 : word[1] == 't' && word[2] == 'r' ? 1 : 2;

			if (a > 100000000ull || b == 0 || b > 1000000000ull)
				return -1;
			v->cost_ps[k] = (int64_t)a;
			v->samples[k] = (int64_t)b;
			v->have |= SN_CC_HOT << k;
		} else {
			return -1;
		}
		p += used + 1;
	}
	return 0;
}

/* See rt.h. */
int sn_calcache_format(char *buf, size_t cap, const char *key,
		       const struct sn_calcache *v)
{
	static const char *const kinds[] = {"hot_ps", "string_ps", "stdio_ps"};
	size_t n;
	int r;

	r = snprintf(buf, cap, "%s\n%s", CC_MAGIC, key);
	if (r < 0 || (size_t)r >= cap)
		return -1;
	n = (size_t)r;
	if (v->have & SN_CC_TSC) {
		r = snprintf(buf + n, cap - n, "tsc_mult %llu 1\n",
			     (unsigned long long)v->tsc_mult);
		if (r < 0 || (size_t)r >= cap - n)
			return -1;
		n += (size_t)r;
	}
	for (int k = 0; k < 3; k++) {
		if (!(v->have & (SN_CC_HOT << k)))
			continue;
		r = snprintf(buf + n, cap - n, "%s %lld %lld\n", kinds[k],
			     (long long)v->cost_ps[k], (long long)v->samples[k]);
		if (r < 0 || (size_t)r >= cap - n)
			return -1;
		n += (size_t)r;
	}
	return (int)n;
}

/* At init (before the clock): the key and the file's path; the file's
 * values when it holds valid ones for this key. A few system calls, no
 * allocation. */
static void cc_load(void)
{
	char dir[2048], text[2048];
	struct stat st;
	uint64_t h = 14695981039346656037ull;
	ssize_t n;
	int fd;

	memset(&cc, 0, sizeof(cc));
	if (cc_dir(dir, sizeof(dir)) ||
	    cc_key(cc.key, sizeof(cc.key), !getenv("TAPESTRY_CLOCK") ||
		   strcmp(getenv("TAPESTRY_CLOCK"), "vdso")))
		return;
	for (const char *k = cc.key; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	snprintf(cc.path, sizeof(cc.path), "%s/calib-%016llx", dir,
		 (unsigned long long)h);
	cc.on = 1;
	fd = open(cc.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
	    !(st.st_mode & 022) ? read(fd, text, sizeof(text) - 1) : -1;
	close(fd);
	if (n <= 0)
		return;
	text[n] = 0;
	if (sn_calcache_parse(text, cc.key, &cc.v)) {
		memset(&cc.v, 0, sizeof(cc.v));
		SN_INFO("calibration cache %s ignored: not this host's or unreadable",
			cc.path);
	}
}

/* Write v to the cache file (a new file renamed over it). The directory
 * is made (0700) when missing and used only when it is ours alone. */
static void cc_store(const struct sn_calcache *v)
{
	char dir[4096], tmp[4200], text[2048];
	struct stat st;
	char *slash;
	int fd, n, ok;

	if (!cc.on || (n = sn_calcache_format(text, sizeof(text), cc.key, v)) < 0)
		return;
	snprintf(dir, sizeof(dir), "%s", cc.path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	if (stat(dir, &st) < 0) {
		const char *d = getenv("TAPESTRY_CACHE_DIR");
		char *up = strrchr(dir, '/');

		if (!d && up && up != dir) {	/* ~/.cache itself */
			*up = 0;
			mkdir(dir, 0700);
			*up = '/';
		}
		if (mkdir(dir, 0700) < 0 || stat(dir, &st) < 0)
			return;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", cc.path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	ok = write(fd, text, (size_t)n) == n;
	sn_raw_close(fd);	/* on the sender's own table: not the program's */
	if (!ok || rename(tmp, cc.path) < 0)
		unlink(tmp);
	else
		cc.v = *v;
}

/* The TSC rate the cache holds for this host (0: measure it). */
static uint64_t cc_tsc_mult(void)
{
	return (cc.v.have & SN_CC_TSC) ? cc.v.tsc_mult : 0;
}

/* ---- calibration --------------------------------------------------------- */

/* Calibration samples. Other work only ever slows a sample down, and
 * while a job starts (collectors, rings being populated, the hypervisor)
 * whole runs of samples are several times too slow, so a plain median is
 * not robust; on a quiet host the samples still spread by 10-20 % (stores
 * to fresh ring lines, as the program makes them), so the fastest samples
 * alone underestimate (bench/perturbation.sh; figures in
 * bench/RESULTS.md, "Calibration"). A series is
 * sampled until CAL_QUIET of its samples lie in the quiet band (within
 * 30 % + 1 ns of its third fastest sample, cal_band), from CAL_MIN
 * samples up to CAL_MAX; its estimate is the mean of the samples in the
 * band.
 *
 * The quiet band of d[0..n) (n >= 1): around its third fastest sample
 * (one or two glitches below the rest, such as a sample taken while
 * tracing was being switched off, do not set it), from base / 1.3 - 1 to
 * base x 1.3 + 1. */
static void cal_band(const double *d, int n, double *lo, double *hi)
{
	double m[3];	/* the k fastest so far, sorted */
	int k = 0;

	for (int i = 0; i < n; i++) {
		double x = d[i];
		int j;

		if (k < 3)
			j = k++;
		else if (x < m[2])
			j = 2;
		else
			continue;
		for (; j > 0 && m[j - 1] > x; j--)
			m[j] = m[j - 1];
		m[j] = x;
	}
	*lo = (m[k - 1] - 1.0) / 1.3;
	*hi = 1.3 * m[k - 1] + 1.0;
}

/* 1 if d[0..n) has CAL_MIN samples, CAL_QUIET of them in the band. */
int sn_cal_quiet(const double *d, int n)
{
	double lo, hi;
	int q = 0;

	if (n < CAL_MIN)
		return 0;
	cal_band(d, n, &lo, &hi);
	for (int i = 0; i < n; i++)
		q += d[i] >= lo && d[i] <= hi;
	return q >= CAL_QUIET;
}

/* The mean of the samples of d[0..n) in the band; 0 without samples. */
double sn_cal_estimate(const double *d, int n)
{
	double lo, hi, sum = 0;
	int q = 0;

	if (n <= 0)
		return 0;
	cal_band(d, n, &lo, &hi);
	for (int i = 0; i < n; i++)
		if (d[i] >= lo && d[i] <= hi) {
			sum += d[i];
			q++;
		}
	return sum / q;
}

/* Evict from every cache the ring lines the next n records of t will
 * take: the application's records land on lines that are in none of its
 * caches (a ring far larger than the caches, or lines the sender read
 * last), and the stores' misses are part of the tracer's cost, which a
 * calibration on lines still cached from its previous sample missed. */
static void evict_next(const struct sn_thread *t, unsigned n)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t w = t->widx;

	for (unsigned i = 0; i < n; i++) {
		const char *a = (const char *)&t->ring[w];

		__builtin_ia32_clflush(a);
		__builtin_ia32_clflush(a + sizeof(struct proto_event) - 1);
		w = w + 1 == t->cap ? 0 : w + 1;
	}
	__builtin_ia32_mfence();
#else
	(void)t;
	(void)n;
#endif
}

/* The marginal cost of tracing a buffered stdio call: samples of ITER
 * fwrite(8 bytes) calls to a 64 KiB-buffered /dev/null through the wrapper
 * with tracing on, against the same calls made directly to libc, until
 * both series are quiet (sn_cal_quiet); the difference of their estimates per
 * call, or -1; *samples: how many samples it took. A call that stays in
 * user space overlaps with the tracer's work, which the no-op calibration
 * cannot see. Each sample writes a stream of ITER records on evicted
 * lines, as the program does: shorter streams miss the prefetcher and
 * overestimate. Records written are taken back.
 * On the sender thread, from sn_calibrate(). */
#define STDIO_ITER 2048
typedef size_t (*fwrite_fn)(const void *, size_t, size_t, FILE *);

/* n calls of fn: the one loop both series run, so that the difference
 * between them is the wrapper's and not their loops' (with two loops, the
 * code's placement alone moved the estimate by a third of a ns, 1 % of
 * bench/perturbation's iteration). */
static __attribute__((noinline)) void stdio_loop(fwrite_fn fn, const char *tok,
						 FILE *f, int n)
{
	for (int i = 0; i < n; i++)
		fn(tok, 1, 8, f);
}

static double calibrate_stdio(struct sn_thread *t, int *samples, int at_exit)
{
	enum { ITER = STDIO_ITER };
	fwrite_fn direct, traced = fwrite;
	double dd[CAL_MAX], dt[CAL_MAX], cost;
	char tok[8] = {0};
	FILE *f;
	int k, fd;

	direct = (fwrite_fn)dlsym(RTLD_NEXT, "fwrite");
	sn_tls.guard = 1;	/* our own fopen and setvbuf are not traced */
	if (!direct || t->cap < ITER * 4)
		return -1;
	/* held for milliseconds beside the program: moved high */
	fd = sn_own_high(open("/dev/null", O_WRONLY | O_CLOEXEC));
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		sn_raw_close(fd);	/* may be the sender's own table's */
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	for (k = 0; k < CAL_MAX && !(sn_cal_quiet(dd, k) && sn_cal_quiet(dt, k)); k++) {
		uint64_t h0, t0, t1, t2;

		if (!at_exit && sn_sender_ending()) {	/* gives way to the end */
			k = 0;
			break;
		}

		sn_sender_tend();	/* the program's rings go on filling */
		h0 = t->head_priv;
		sn_tls.guard = 1;
		evict_next(t, ITER);
		t0 = sn_now_vdso();
		stdio_loop(direct, tok, f, ITER);
		t1 = sn_now_vdso();
		sn_tls.guard = 0;
		stdio_loop(traced, tok, f, ITER);
		t2 = sn_now_vdso();
		sn_tls.guard = 1;
		dd[k] = (double)(t1 - t0) / ITER;
		dt[k] = (double)(t2 - t1) / ITER;
		t->head_priv = h0;
		t->widx = (uint32_t)(h0 % t->cap);
		atomic_store_explicit(&t->head, h0, memory_order_release);
		/* the traced calls' run (libc_wrap.c) is taken back too */
		t->drop_pending &= ~SN_PEND_RUN;
	}
	fclose(f);
	if (k == 0)
		return -1;
	/* each series on its own: a slowed direct sample would make a
	 * difference too small */
	cost = sn_cal_estimate(dt, k) - sn_cal_estimate(dd, k);
	*samples = k;
	return cost > 0 ? cost : 0;
}

/*
 * The CALIB records this process emitted (start-up, and at exit or exec: 6 at
 * most), under meta_mu. A stream continued after a failed exec gets them again
 * (sn_calib_replay): the same process image, the same costs, and without them
 * its stdio calls would be corrected with the no-op cost (the post-processing
 * falls back to META calib_ns, evtype 0 only).
 */
#define CAL_KEPT 8
static int64_t cal_kept[CAL_KEPT][4];
static int ncal_kept;

static void calib_emit(uint64_t now, int64_t evtype, int64_t cost_ns,
		       int64_t samples, int64_t cost_ps)
{
	if (sn_emit(PROTO_EV_CALIB, PROTO_EVF_INSTANT, now, now, evtype,
		    cost_ns, samples, cost_ps) != 0)
		SN_INFO("calibration skipped: no room for its record (evtype %lld)",
			(long long)evtype);
	pthread_mutex_lock(&meta_mu);
	if (ncal_kept < CAL_KEPT) {
		int64_t *k = cal_kept[ncal_kept++];

		k[0] = evtype;
		k[1] = cost_ns;
		k[2] = samples;
		k[3] = cost_ps;
	}
	pthread_mutex_unlock(&meta_mu);
}

/* See rt.h. */
int sn_calib_replay(void)
{
	int64_t kept[CAL_KEPT][4];
	uint64_t now = sn_now_fast();
	int n;

	pthread_mutex_lock(&meta_mu);
	n = ncal_kept;
	memcpy(kept, cal_kept, sizeof(kept));
	pthread_mutex_unlock(&meta_mu);
	for (int i = 0; i < n; i++)	/* outside the lock: sn_emit may wait */
		sn_emit(PROTO_EV_CALIB, PROTO_EVF_INSTANT, now, now, kept[i][0],
			kept[i][1], kept[i][2], kept[i][3]);
	return n;
}

/* At start-up, the costs the cache holds for this host: emitted as if
 * measured (CALIB records, META calib_ns). 1 when it held them all (the
 * stdio cost only when the libc sensor is on). */
static int cal_from_cache(void)
{
	unsigned want = SN_CC_HOT | SN_CC_STRING |
			(sn_enabled("libc") ? SN_CC_STDIO : 0);
	const struct sn_calcache *v = &cc.v;
	char meta_v[64];
	uint64_t now;

	if (!cc.on || (v->have & want) != want)
		return 0;
	now = sn_now_fast();
	if (want & SN_CC_STDIO)
		calib_emit(now, PROTO_EV_FWRITE, (v->cost_ps[2] + 500) / 1000,
			   v->samples[2], v->cost_ps[2]);
	calib_emit(now, 0, (v->cost_ps[0] + 500) / 1000, v->samples[0],
		   v->cost_ps[0]);
	calib_emit(now, PROTO_EV_STRING, (v->cost_ps[1] + 500) / 1000,
		   v->samples[1], 0);
	snprintf(meta_v, sizeof(meta_v), "%.1f", (double)v->cost_ps[0] / 1000);
	sn_meta("calib_ns", meta_v);
	SN_DEBUG("calibration from the cache %s", cc.path);
	return 1;
}

/* See rt.h. */
int sn_calibrate_cached(void)
{
	return cal_from_cache();
}

/* A calibration just measured: into the cache when it holds none for this
 * host (start-up), or when its hot path's cost is lower than the cache's
 * (an exit calibration: the quieter one), with this process's TSC rate. */
static void cal_to_cache(int at_exit, double hot, int64_t nhot, double str,
			 double stdio, int64_t nstdio)
{
	struct sn_calcache v;

	if (!cc.on || nhot <= 0 || hot <= 0 ||
	    (at_exit && (cc.v.have & SN_CC_HOT) &&
	     (int64_t)(hot * 1000 + 0.5) >= cc.v.cost_ps[0]))
		return;
	memset(&v, 0, sizeof(v));
	if (sn_clk.use_tsc) {
		v.have |= SN_CC_TSC;
		v.tsc_mult = sn_clk.mult;
	}
	v.have |= SN_CC_HOT | SN_CC_STRING;
	v.cost_ps[0] = (int64_t)(hot * 1000 + 0.5);
	v.samples[0] = nhot;
	v.cost_ps[1] = (int64_t)(str * 1000 + 0.5);
	v.samples[1] = nhot;
	if (stdio >= 0 && nstdio > 0) {
		v.have |= SN_CC_STDIO;
		v.cost_ps[2] = (int64_t)(stdio * 1000 + 0.5);
		v.samples[2] = nstdio;
	} else if (cc.v.have & SN_CC_STDIO) {	/* keep what it had */
		v.have |= SN_CC_STDIO;
		v.cost_ps[2] = cc.v.cost_ps[2];
		v.samples[2] = cc.v.samples[2];
	}
	cc_store(&v);
}

/* Measure the hot path's own cost (sn_enter, two stamps, sn_slot, fill,
 * sn_commit, sn_leave around a no-op): samples of 2048 iterations (a
 * quarter ring at most) on evicted lines, as the stdio calibration, until
 * quiet (sn_cal_quiet), the mean of its quiet band per iteration; then one
 * lookup of a cached string. Runs on the
 * sender thread, whose ring it uses and empties again; emits CALIB
 * (evtype 0 = every wrapped call, PROTO_EV_STRING = extra per path). At
 * start-up, and at exit (at_exit, sn_sender_calibrate: the CALIB records
 * again, META calib_ns keeps the first). */
void sn_calibrate(int at_exit)
{
	double s[CAL_MAX], s2[CAL_MAX];
	struct sn_thread *t = sn_tls.thr;
	int saved = sn_tls.guard, k, nstdio = 0;
	char meta_v[64];
	double stdio, cal;
	/* streams as long as the stdio calibration's, a quarter ring at most */
	const unsigned ITER = t && t->cap / 4 < STDIO_ITER ? t->cap / 4 : STDIO_ITER;

	if (!at_exit && cal_from_cache())
		return;
	/* our ring is populated on demand (rt_buf.c): the samples' first
	 * touches would be page faults */
	if (t)
		(void)madvise(t, t->map_bytes, MADV_POPULATE_WRITE);
	/* the samples need room in our ring: not while it is half full
	 * (at exit, batches kept at their bound stop the drain); and tracing
	 * on, or the hot path records nothing (checked again below) */
	if (!t || ITER < 100 || atomic_load(&sn_state) != SN_ST_READY ||
	    t->head_priv - atomic_load_explicit(&t->tail, memory_order_acquire) > t->cap / 2) {
		SN_INFO("%s calibration skipped: %s", at_exit ? "exit" : "start-up",
			atomic_load(&sn_state) != SN_ST_READY ? "tracing not on" :
			"no room in the sender's ring");
		return;
	}
	for (k = 0; k < CAL_MAX && !(sn_cal_quiet(s, k) && sn_cal_quiet(s2, k)); k++) {
		uint64_t t0, t1, h0;

		if (!at_exit && sn_sender_ending())	/* gives way to the end */
			break;
		sn_sender_tend();	/* the program's rings go on filling */
		h0 = t->head_priv;
		evict_next(t, ITER);
		sn_tls.guard = 0;
		t0 = sn_now_vdso();
		for (unsigned i = 0; i < ITER; i++) {
			if (sn_enter_fast()) {
				uint64_t a = sn_stamp_fast();
				struct proto_event *e;
				uint64_t b;

				__asm__ volatile("" ::: "memory");
				b = sn_stamp_fast();
				e = sn_slot_fast();
				if (e) {
					e->t_start = a;
					e->t_end = b;
					e->flags = SN_EVF_STAMP;
					e->type = PROTO_EV_WRITE;
					proto_ev_set_args(e, 1, 64, 64, 0, 0, 0);
					sn_commit_fast(e);
				}
				sn_leave_fast();
			}
		}
		t1 = sn_now_vdso();
		s[k] = (double)(t1 - t0) / ITER;
		t0 = sn_now_vdso();
		for (unsigned i = 0; i < ITER; i++) {
			sn_tls.guard = 0;
			if (sn_enter_fast()) {
				sn_string("/calibration/path", 17);
				sn_leave_fast();
			}
		}
		t1 = sn_now_vdso();
		s2[k] = (double)(t1 - t0) / ITER;
		/* we are this ring's consumer and producer: take back exactly
		 * what this sample wrote, nothing that was there before */
		t->head_priv = h0;
		t->widx = (uint32_t)(h0 % t->cap);
		atomic_store_explicit(&t->head, h0, memory_order_release);
	}
	stdio = sn_enabled("libc") && (at_exit || !sn_sender_ending()) ?
		calibrate_stdio(t, &nstdio, at_exit) : -1;
	sn_tls.guard = saved;
	if (atomic_load(&sn_state) != SN_ST_READY) {
		/* stopped while sampling: some samples measured nothing */
		SN_INFO("%s calibration skipped: tracing stopped while sampling",
			at_exit ? "exit" : "start-up");
		return;
	}
	if (!at_exit && sn_sender_ending()) {
		/* a process that ends this soon has few records to correct:
		 * its exit does not wait for the rest of the samples */
		SN_INFO("start-up calibration given up: the process is ending");
		return;
	}
	cal = sn_cal_estimate(s, k);
	cal_to_cache(at_exit, cal, k * (int64_t)ITER, sn_cal_estimate(s2, k),
		     stdio, nstdio * (int64_t)STDIO_ITER);
	{
		uint64_t now = sn_now_fast();

		if (stdio >= 0)	/* buffered stdio calls (evtype FWRITE) */
			calib_emit(now, PROTO_EV_FWRITE, (int64_t)(stdio + 0.5),
				   nstdio * (int64_t)STDIO_ITER,
				   (int64_t)(stdio * 1000 + 0.5));
		calib_emit(now, 0, (int64_t)(cal + 0.5), k * (int64_t)ITER,
			   (int64_t)(cal * 1000 + 0.5));
		calib_emit(now, PROTO_EV_STRING,
			   (int64_t)(sn_cal_estimate(s2, k) + 0.5),
			   k * (int64_t)ITER, 0);
	}
	if (at_exit)	/* the trace holds both; META keeps the first */
		return;
	snprintf(meta_v, sizeof(meta_v), "%.1f", cal);
	sn_meta("calib_ns", meta_v);
}


/* ---- fork ---------------------------------------------------------------- */

static int forked_once;		/* this image forked (sn_exec_meta) */

static void atfork_prepare(void)
{
	forked_once = 1;
	sn_threads_lock();
	pthread_mutex_lock(&meta_mu);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&meta_mu);
	sn_threads_unlock();
}

static void atfork_child(void)
{
	pthread_mutex_init(&meta_mu, NULL);
	ncal_kept = 0;		/* the child calibrates itself (its sender) */
	my_pid = getpid();
	sn_threads_atfork_child();
	sn_sender_atfork_child();
	sn_new_stream_id();
	atomic_store(&exit_emitted, 0);
	pthread_mutex_lock(&meta_mu);
	meta_num("pid", getpid());
	meta_num("ppid", getppid());
	pthread_mutex_unlock(&meta_mu);
}

/* In a forked child, from the fork wrapper: start the new stream's sender
 * and emit PROC_START. */
void sn_after_fork_child(void)
{
	if (atomic_load(&sn_state) != SN_ST_READY)
		return;
	sn_proc_start_event();
	sn_sender_start();
}

/* See rt.h (one getpid system call). */
int sn_in_vfork_child(void)
{
	return my_pid != 0 && getpid() != my_pid;
}

/* ---- exit ---------------------------------------------------------------- */

/* Emit EXIT(status) once per process (exit wrapper or the on_exit hook). */
void sn_exit_event(int status)
{
	uint64_t t;

	if (atomic_exchange(&exit_emitted, 1))
		return;
	if (sn_tls.thr == NULL && atomic_load(&sn_state) != SN_ST_READY)
		return;
	t = sn_now_fast();
	sn_emit(PROTO_EV_EXIT, PROTO_EVF_INSTANT, t, t, status, 0, 0, 0);
}

/* Before a stream ends by exit or exec: a process that wrote
 * CAL_EXIT_MIN_RECORDS records calibrates again, tracing still on. */
void sn_calibrate_at_end(void)
{
	if (atomic_load(&sn_state) == SN_ST_READY &&
	    sn_threads_written() >= CAL_EXIT_MIN_RECORDS)
		sn_sender_calibrate(2000);
}

/* Final flush: ship everything, BYE (reason), wait for the ACK (bounded at
 * about 5 s), then stop tracing. Idempotent. At exit, first
 * sn_calibrate_at_end. */
void sn_shutdown(int reason)
{
	int st = SN_ST_READY;

	if (reason == 0)
		sn_calibrate_at_end();
	if (!atomic_compare_exchange_strong(&sn_state, &st, SN_ST_DOWN))
		return;
	atomic_store_explicit(&sn_clk.libc_hot, 0, memory_order_relaxed);
	sn_runs_take();
	sn_sender_flush(reason, 5500);
	sn_sender_stop();
}

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	sn_tls.guard = 1;
	sn_exit_event(status);
	sn_shutdown(0);
}

/* ---- fatal signals ------------------------------------------------------- */

/* The signals whose default action terminates the process (with or
 * without a core), that a program dies of: faults, abort, kill requests
 * (TERM, INT from Ctrl-C or a launcher forwarding it, HUP, QUIT), a write
 * into a pipe nobody reads (PIPE: `sort | head`), resource limits (XCPU,
 * XFSZ), timers and user signals nobody handles. Not SIGKILL and SIGSTOP
 * (they cannot be caught), not SIGTRAP (debuggers), not the real-time
 * signals (libc keeps the first ones; programs that send the others
 * handle them), not those whose default is to ignore or stop.
 * The runtime itself arms no timer and its sender thread blocks every
 * signal (rt_send.c), so ALRM, VTALRM and PROF are the program's. */
static const int fatal_sigs[] = {
	SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,    SIGABRT, SIGSYS,
	SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,   SIGPIPE, SIGALRM,
	SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
};
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static struct sigaction app_act[NSIG];
static int ours[NSIG];
static pthread_mutex_t sig_mu = PTHREAD_MUTEX_INITIALIZER;

/* 1 for the signals the runtime handles. */
int sn_sig_is_fatal(int signo)
{
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		if (fatal_sigs[i] == signo)
			return 1;
	return 0;
}

/* A timer's signal the application handles itself (a profiler's SIGPROF
 * at 1 kHz, an interval SIGALRM): not recorded, or the trace would fill
 * with them; only the flush when one is about to end the process. */
static int timer_tick(int signo, const struct sigaction *app)
{
	if (signo != SIGALRM && signo != SIGVTALRM && signo != SIGPROF)
		return 0;
	return (app->sa_flags & SA_SIGINFO) ? app->sa_sigaction != NULL
					    : app->sa_handler != SIG_DFL;
}

static void fatal_handler(int signo, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *app = &app_act[signo];
	struct sigaction dfl;

	if (!(app->sa_flags & SA_SIGINFO) && app->sa_handler == SIG_IGN)
		goto out;
	if (!sn_tls.guard && !sn_tls.in_handler &&
	    atomic_load(&sn_state) == SN_ST_READY && !timer_tick(signo, app)) {
		uint64_t t = sn_now_fast();

		sn_emit(PROTO_EV_SIGNAL, PROTO_EVF_INSTANT, t, t, signo, 0, 0,
			0);
	}
	if ((app->sa_flags & SA_SIGINFO) ? app->sa_sigaction != NULL
					 : app->sa_handler != SIG_DFL) {
		struct sigaction a = *app;

		if (app->sa_flags & SA_RESETHAND) {
			memset(app, 0, sizeof(*app));
			app->sa_handler = SIG_DFL;
		}
		if (a.sa_flags & SA_SIGINFO)
			a.sa_sigaction(signo, si, uc);
		else
			a.sa_handler(signo);
		goto out;
	}
	if (!sn_tls.in_handler) {
		sn_tls.in_handler = 1;
		if (!sn_tls.guard)
			sn_runs_take();
		sn_sender_flush(1, 3000);
		sn_tls.in_handler = 0;
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (real_sigaction)
		real_sigaction(signo, &dfl, NULL);
	ours[signo] = 0;
	raise(signo);
out:
	errno = saved;
}

static void install_ours(int signo, const struct sigaction *like)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	a.sa_sigaction = fatal_handler;
	a.sa_flags = SA_SIGINFO | SA_ONSTACK;
	if (like) {
		a.sa_mask = like->sa_mask;
		a.sa_flags |= like->sa_flags & (SA_RESTART | SA_NODEFER);
	} else {
		sigemptyset(&a.sa_mask);
	}
	if (real_sigaction(signo, &a, NULL) == 0)
		ours[signo] = 1;
}

/* Install the fatal-signal handlers where the disposition is the default
 * (or an earlier handler, which we then chain to). */
void sn_signals_install(void)
{
	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *,
					  struct sigaction *))
			dlsym(RTLD_NEXT, "sigaction");
	if (!real_sigaction)
		return;
	pthread_mutex_lock(&sig_mu);
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		int s = fatal_sigs[i];
		struct sigaction cur;

		if (ours[s] || real_sigaction(s, NULL, &cur) != 0)
			continue;
		if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
			continue;
		app_act[s] = cur;
		install_ours(s, &cur);
	}
	pthread_mutex_unlock(&sig_mu);
}

/* The application's sigaction() for any signal: for the fatal ones, keep
 * our handler in front and remember the application's (what old reports).
 * real is libc's sigaction. Same return and errno as sigaction(2). */
int sn_sigaction_app(int signo, const struct sigaction *act,
		     struct sigaction *old,
		     int (*real)(int, const struct sigaction *,
				 struct sigaction *))
{
	int rc = 0;

	if (!real_sigaction)
		real_sigaction = real;
	if (signo <= 0 || signo >= NSIG || !sn_sig_is_fatal(signo) ||
	    !ours[signo] || atomic_load(&sn_state) != SN_ST_READY)
		return real(signo, act, old);
	pthread_mutex_lock(&sig_mu);
	if (old)
		*old = app_act[signo];
	if (act) {
		if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN) {
			rc = real(signo, act, NULL);
			if (rc == 0) {
				ours[signo] = 0;
				app_act[signo] = *act;
			}
		} else {
			app_act[signo] = *act;
			install_ours(signo, act);
		}
	}
	pthread_mutex_unlock(&sig_mu);
	return rc;
}

/* ---- launchers (docs/modules/sensor-runtime.md, "Launchers") ----------- */

/* MPI and batch launchers and their helpers: their streams carry META
 * launcher (the readers keep them off the timeline, the profile and the
 * application's counts) and no rank (orted started by an Open MPI
 * singleton inherited PMI_RANK). A name with a suffix after a dot counts
 * (mpirun.openmpi, mpiexec.hydra). */
static const char *const launcher_names[] = {
	"mpirun", "mpiexec", "orterun", "orted", "prterun", "prte", "prted",
	"hydra_pmi_proxy", "hydra_nameserver", "srun", "slurmstepd", NULL,
};
/* Programs that often only pass on to another (a shell's `exec`, env,
 * nice ...): a process of one of these that executes another program
 * without having forked is a shim, marked at its exec (sn_exec_meta). */
static const char *const shim_names[] = {
	"sh", "dash", "bash", "zsh", "ksh", "env", "nice", "nohup", "stdbuf",
	"taskset", "numactl", "chrt", "ionice", "setsid", "time", NULL,
};
static int am_launcher;		/* set by sn_init */

/* Is this image's program (its file's base name) one of names? */
static int exe_in(const char *const *names)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	const char *base;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	for (int i = 0; names[i]; i++) {
		size_t len = strlen(names[i]);

		if (!strncmp(base, names[i], len) &&
		    (base[len] == 0 || base[len] == '.'))
			return 1;
	}
	return 0;
}

/* META launcher: "1" (hidden by the readers), or "traced" when
 * TAPESTRY_TRACE_LAUNCHER=1 asked to see launchers (run/launch
 * --trace-launcher). */
static const char *launcher_value(void)
{
	const char *v = getenv("TAPESTRY_TRACE_LAUNCHER");

	return v && !strcmp(v, "1") ? "traced" : "1";
}

/* See rt.h. */
void sn_exec_meta(void)
{
	if (!am_launcher && !forked_once && exe_in(shim_names))
		sn_meta("launcher", launcher_value());
}

/* ---- init ---------------------------------------------------------------- */

/* Initialise the runtime once per process image. Returns 0, or a negative
 * code when tracing is off (the program runs untraced). Safe to call from
 * any thread and more than once; the loser of a race returns at once. */
int sn_init(void)
{
	int st = SN_ST_NONE;
	int saved_guard = sn_tls.guard;
	int saved_errno = errno;

	if (sn_preinit && atomic_load(&sn_state) == SN_ST_NONE) {
		/* the MPI sensor in the other MPI's process: what it calls
		 * (access, write, fopen...) must not start a nested init */
		sn_tls.guard = 1;
		sn_preinit();
		sn_tls.guard = saved_guard;
	}
	if (!atomic_compare_exchange_strong(&sn_state, &st, SN_ST_INIT))
		return st == SN_ST_READY ? 0 : PROTO_E_STATE;
	sn_tls.guard = 1;
	read_config();
	my_pid = getpid();
	cc_load();
	sn_clock_init_rate(cc_tsc_mult());
	sn_new_stream_id();
	my_rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK");
	my_size = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL);
	if (my_size < 0)
		my_size = 0;
	if ((am_launcher = exe_in(launcher_names))) {
		my_rank = -1;	/* a rank's variables, inherited */
		my_size = 0;
	}
	meta_basics();
	if (am_launcher) {
		pthread_mutex_lock(&meta_mu);
		meta_put_locked("launcher", launcher_value());
		pthread_mutex_unlock(&meta_mu);
	}
	unsetenv("TAPESTRY_MPI_OTHER");	/* its programs are not told */
	if (!atfork_done) {
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		atfork_done = 1;
	}
	if (!onexit_done) {
		on_exit(on_exit_hook, NULL);
		onexit_done = 1;
	}
	sn_signals_install();
	atomic_store(&sn_state, SN_ST_READY);
	atomic_store_explicit(&sn_clk.libc_hot, sn_cfg.sens_libc && sn_clk.use_tsc,
			      memory_order_relaxed);
	sn_proc_start_event();
	if (sn_sender_start())
		SN_ERROR("cannot start the sender thread: not tracing");
	sn_tls.guard = saved_guard;
	errno = saved_errno;
	return 0;
}

/* Slow path of sn_enter(): initialise lazily. Keeps errno. */
int sn_enter_slow(void)
{
	int saved = errno;

	if (atomic_load(&sn_state) == SN_ST_NONE)
		sn_init();
	errno = saved;
	if (atomic_load(&sn_state) != SN_ST_READY || sn_tls.guard)
		return 0;
	sn_tls.guard = 1;
	return 1;
}

/* See sensor.h. */
void sn_flush_all(void)
{
	if (atomic_load(&sn_state) == SN_ST_READY) {
		sn_runs_take();	/* MPI_Abort: the job is killed next */
		sn_sender_flush(-1, 5000);
	}
}

/* See sensor.h. */
void sn_ship_all(void)
{
	if (atomic_load(&sn_state) == SN_ST_READY)
		sn_sender_flush(-2, 5000);
}
