/*
 * collector/main.c - tapestry-collector: options, signals, logging, and
 * one struct col in a libevent loop.
 *
 * SIGTERM/SIGINT drain (forward everything, wait for the acks) and exit;
 * a second one exits at once. SIGHUP reopens the log file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "collector/collector.h"
#include "collector/internal.h"
#include "proto/clockid.h"
#include "proto/event.h"
#include "proto/num.h"

#define SECRET_MAX 4096

static const char usage_text[] =
"Usage: tapestry-collector [OPTION]...\n"
"Receive trace frames from sensors and child collectors, buffer them and\n"
"forward them to a parent collector, or store them in a job directory.\n"
"\n"
"Role (one of):\n"
"  --parent ADDR:PORT      forward upward to this collector or manager\n"
"  --output DIR            root mode: store every frame in job directory DIR\n"
"\n"
"Network:\n"
"  --listen ADDR:PORT      where children connect (default 127.0.0.1:7450;\n"
"                          port 0 picks a free port)\n"
"  --print-port            print \"listening ADDR:PORT\" on stdout once bound\n"
"  --secret-file FILE      job secret for the handshake (default: empty key)\n"
"  --node-id N             this node's id, decimal or 0x hex (default random)\n"
"  --name NAME             name sent to the parent (default \"collector\")\n"
"  --handshake-timeout T   close connections not through the handshake in T\n"
"                          (default 10s)\n"
"  --idle-timeout T        close a child that sent nothing for T after the\n"
"                          handshake (default 60s; 0: never). Sensors and\n"
"                          collectors ping at least every 5 s (whatever\n"
"                          --clock-period and --stats-period say)\n"
"  --seq-window N          root: refuse a batch more than N past the last\n"
"                          stored of its stream (default 65536)\n"
"\n"
"TLS between collectors (all three files, PEM; see docs/SECURITY.md):\n"
"  --tls-cert FILE         this collector's certificate\n"
"  --tls-key FILE          its private key\n"
"  --tls-ca FILE           the job's certificate authority: peers must show a\n"
"                          certificate it signed. With these the link to\n"
"                          --parent is TLS 1.3 (mutual certificates).\n"
"  --tls-listen ADDR:PORT  a second listener, TLS 1.3 only, for child\n"
"                          collectors on other hosts (--listen stays in clear\n"
"                          for the sensors of this host)\n"
"\n"
"Forwarding (sizes take K, M, G; durations ms or s, plain numbers are s):\n"
"  --flush-bytes N         forward once N bytes are queued (default 1M)\n"
"  --flush-records N       ... or N events (default 65536)\n"
"  --flush-ms MS           ... or the oldest frame is MS old (default 50;\n"
"                          0 forwards at once). A BYE forwards at once.\n"
"  --zstd-level L          recompress uncompressed batches at zstd level L,\n"
"                          1..19; 0 passes them as they are (default 0)\n"
"  --mem-cap N             bytes of frames held in memory (default 256M);\n"
"                          past it frames spill, or children are not read\n"
"  --spill-dir DIR         spill frames to DIR when memory is full\n"
"  --spool DIR             at start, forward (root: store) what sensors left in\n"
"                          DIR, their TAPESTRY_SPOOL, having reached no collector\n"
"  --spill-quota N         bytes of spill files at most (default 1G)\n"
"\n"
"Filters (node and gateway collectors; filtered events are counted in\n"
"STATS \"filtered\", never reported lost):\n"
"  --drop NAME[,NAME...]   drop these event types (names as in the CSV\n"
"                          export: write, fprintf, MPI_Send, mem_sample ...)\n"
"  --sample NAME:N[,...]   keep one event in N of these types\n"
"\n"
"Clock and reports:\n"
"  --clock-rounds N        ping-pongs with the parent at start (default 16)\n"
"  --clock-period T        periodic clock round every T (default 5s; 0: off)\n"
"  --stats-period T        STATS report every T (default 5s; 0: off)\n"
"  --drain-timeout T       on SIGTERM wait at most T for acks (default 30s)\n"
"\n"
"Logging:\n"
"  --log-level LEVEL       error, warn, info (default) or debug\n"
"  --log-file FILE         log there instead of stderr (SIGHUP reopens it)\n"
"  -h, --help              this text\n";

enum {
	O_LISTEN = 256, O_PARENT, O_OUTPUT, O_SECRET, O_NODE, O_NAME,
	O_FBYTES, O_FREC, O_FMS, O_ZSTD, O_SPILL, O_SPOOL, O_QUOTA, O_MEM, O_CROUNDS,
	O_CPERIOD, O_SPERIOD, O_HS, O_LOGLEVEL, O_LOGFILE, O_PRINT, O_DRAIN,
	O_DROP, O_SAMPLE, O_TLSCERT, O_TLSKEY, O_TLSCA, O_TLSLISTEN, O_IDLE,
	O_WINDOW,
};

static const struct option longopts[] = {
	{"listen", required_argument, NULL, O_LISTEN},
	{"parent", required_argument, NULL, O_PARENT},
	{"output", required_argument, NULL, O_OUTPUT},
	{"secret-file", required_argument, NULL, O_SECRET},
	{"node-id", required_argument, NULL, O_NODE},
	{"name", required_argument, NULL, O_NAME},
	{"flush-bytes", required_argument, NULL, O_FBYTES},
	{"flush-records", required_argument, NULL, O_FREC},
	{"flush-ms", required_argument, NULL, O_FMS},
	{"zstd-level", required_argument, NULL, O_ZSTD},
	{"spill-dir", required_argument, NULL, O_SPILL},
	{"spool", required_argument, NULL, O_SPOOL},
	{"spill-quota", required_argument, NULL, O_QUOTA},
	{"mem-cap", required_argument, NULL, O_MEM},
	{"clock-rounds", required_argument, NULL, O_CROUNDS},
	{"clock-period", required_argument, NULL, O_CPERIOD},
	{"stats-period", required_argument, NULL, O_SPERIOD},
	{"handshake-timeout", required_argument, NULL, O_HS},
	{"idle-timeout", required_argument, NULL, O_IDLE},
	{"seq-window", required_argument, NULL, O_WINDOW},
	{"drain-timeout", required_argument, NULL, O_DRAIN},
	{"log-level", required_argument, NULL, O_LOGLEVEL},
	{"log-file", required_argument, NULL, O_LOGFILE},
	{"print-port", no_argument, NULL, O_PRINT},
	{"drop", required_argument, NULL, O_DROP},
	{"sample", required_argument, NULL, O_SAMPLE},
	{"tls-cert", required_argument, NULL, O_TLSCERT},
	{"tls-key", required_argument, NULL, O_TLSKEY},
	{"tls-ca", required_argument, NULL, O_TLSCA},
	{"tls-listen", required_argument, NULL, O_TLSLISTEN},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static const char *opt_name(int opt)
{
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/* "--drop a,b" (n = 1) or "--sample a:N,b:M" into filter[]. 0 or -1. */
static int parse_filter(char *spec, int sample, uint32_t *filter)
{
	for (char *save = NULL, *tok = strtok_r(spec, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t n = 1;
		char *colon = strchr(tok, ':');

		if (sample) {
			char *end;
			unsigned long v;

			if (!colon)
				return -1;
			*colon = '\0';
			errno = 0;
			v = strtoul(colon + 1, &end, 10);
			if (errno || *end || v < 2 || v > UINT32_MAX)
				return -1;
			n = (uint32_t)v;
		} else if (colon) {
			return -1;
		}
		enum proto_ev_type t = proto_ev_lookup(tok);
		if (t == PROTO_EV__INVALID || t == PROTO_EV_STRING ||
		    t == PROTO_EV_ARRAY) {
			fprintf(stderr, "tapestry-collector: unknown event type "
				"'%s'\n", tok);
			return -1;
		}
		filter[t] = n;
	}
	return 0;
}

/* Counts and sizes (k, M, G, "MiB"...), decimal or 0x hex: proto_parse_size. */
static int parse_u64(const char *s, uint64_t *out)
{
	return proto_parse_size(s, 0, out);
}

/* "250ms", "5s", "5" (s), "1.5s" -> ms */
static int parse_ms(const char *s, unsigned *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	if (!strcmp(end, "ms"))
		;
	else if (!*end || !strcmp(end, "s"))
		v *= 1000;
	else
		return -1;
	if (v > 86400000.0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int read_secret(const char *path, char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap);
	close(fd);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;	/* a trailing newline is not part of the secret */
	*len = (size_t)n;
	return 0;
}

struct app {
	struct event_base *base;
	struct col *col;
	unsigned drain_ms;
	int exit_code;
	int stopping;
	struct event *drain_timer;
};

static void drained(struct col *c, int rc, void *arg)
{
	struct app *a = arg;

	if (rc)
		col_err("drain: %s", proto_strerror(rc));
	else
		col_info("drained: everything acknowledged");
	a->exit_code = rc ? 1 : 0;
	event_base_loopexit(a->base, NULL);
}

static void drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct app *a = arg;
	struct col_stats st;

	col_get_stats(a->col, &st);
	col_err("drain timed out: %" PRIu64 " frames not acknowledged, %"
		PRIu64 " bytes buffered, %" PRIu64 " spilled",
		st.unacked_frames, st.buffered_bytes, st.spilled_bytes);
	a->exit_code = 1;
	event_base_loopexit(a->base, NULL);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct app *a = arg;
	struct timeval tv = {a->drain_ms / 1000, (a->drain_ms % 1000) * 1000};

	if (sig == SIGHUP) {
		if (col_log_reopen())
			col_err("cannot reopen the log file");
		else
			col_info("log file reopened");
		return;
	}
	if (a->stopping) {
		col_warn("second signal: exiting without draining");
		a->exit_code = 1;
		event_base_loopbreak(a->base);
		return;
	}
	a->stopping = 1;
	col_info("signal %d: draining", (int)sig);
	col_drain(a->col, drained, a);
	event_add(a->drain_timer, &tv);
}

/* Everything the command line sets; cfg points into the rest. */
struct options {
	struct col_config cfg;
	char secret[SECRET_MAX];
	const char *log_file;
	int print_port;
	unsigned drain_ms;
	uint32_t filter[PROTO_EV__COUNT];
};

/* A count or size option's value v into o: 0, or -1 when out of its range. */
static int set_count(struct options *o, int opt, uint64_t v)
{
	struct col_config *cfg = &o->cfg;

	switch (opt) {
	case O_FBYTES: cfg->flush_bytes = v; break;
	case O_FREC: cfg->flush_records = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; break;
	case O_ZSTD:
		if (v > 19)
			return -1;
		cfg->zstd_level = (int)v;
		break;
	case O_QUOTA: cfg->spill_quota = v; break;
	case O_MEM: cfg->mem_cap = v; break;
	default:	/* O_CROUNDS */
		if (v > PROTO_CLOCK_MAX)
			return -1;
		cfg->clock_rounds = (unsigned)v;
		break;
	}
	return 0;
}

/* One option with its argument into o: 0, -1 for a bad value, or 1 when
 * the secret file cannot be read (said here). */
static int set_option(struct options *o, int opt, char *arg)
{
	struct col_config *cfg = &o->cfg;
	uint64_t v;

	switch (opt) {
	case O_LISTEN: cfg->listen = arg; break;
	case O_PARENT: cfg->parent = arg; break;
	case O_OUTPUT: cfg->output = arg; break;
	case O_NAME: cfg->name = arg; break;
	case O_SPILL: cfg->spill_dir = arg; break;
	case O_SPOOL: cfg->spool = arg; break;
	case O_LOGFILE: o->log_file = arg; break;
	case O_PRINT: o->print_port = 1; break;
	case O_TLSCERT: cfg->tls_cert = arg; break;
	case O_TLSKEY: cfg->tls_key = arg; break;
	case O_TLSCA: cfg->tls_ca = arg; break;
	case O_TLSLISTEN: cfg->tls_listen = arg; break;
	case O_SECRET:
		if (read_secret(arg, o->secret, sizeof(o->secret), &cfg->secretlen)) {
			fprintf(stderr, "tapestry-collector: cannot read "
				"secret file %s\n", arg);
			return 1;
		}
		cfg->secret = o->secret;
		break;
	case O_LOGLEVEL:
		return (col_log_level = col_log_parse(arg)) < 0 ? -1 : 0;
	case O_NODE:
		return parse_u64(arg, &cfg->node_id) ? -1 : 0;
	case O_FBYTES: case O_FREC: case O_ZSTD: case O_QUOTA:
	case O_MEM: case O_CROUNDS:
		return parse_u64(arg, &v) ? -1 : set_count(o, opt, v);
	case O_FMS:
		if (parse_u64(arg, &v) || v > 3600000)
			return -1;
		cfg->flush_ms = (unsigned)v;
		break;
	case O_CPERIOD: return parse_ms(arg, &cfg->clock_period_ms);
	case O_SPERIOD: return parse_ms(arg, &cfg->stats_period_ms);
	case O_HS:
		return parse_ms(arg, &cfg->handshake_ms) || !cfg->handshake_ms ? -1 : 0;
	case O_IDLE: return parse_ms(arg, &cfg->idle_ms);
	case O_WINDOW:
		if (parse_u64(arg, &v) || v == 0)
			return -1;
		cfg->seq_window = v;
		break;
	case O_DRAIN: return parse_ms(arg, &o->drain_ms);
	case O_DROP: case O_SAMPLE:
		if (parse_filter(arg, opt == O_SAMPLE, o->filter))
			return -1;
		cfg->filter = o->filter;
		break;
	}
	return 0;
}

/* What the options say together, and the environment: 0, or 2 after a
 * message. */
static int check_options(const struct options *o, int extra_args)
{
	const struct col_config *cfg = &o->cfg;
	double ppm;

	if (extra_args || (!cfg->parent == !cfg->output)) {
		fprintf(stderr, "tapestry-collector: give exactly one of "
			"--parent or --output (see --help)\n");
		return 2;
	}
	if (cfg->filter && cfg->output) {
		fprintf(stderr, "tapestry-collector: --drop and --sample apply on "
			"node and gateway collectors, not with --output\n");
		return 2;
	}
	if ((cfg->tls_cert || cfg->tls_key || cfg->tls_ca || cfg->tls_listen) &&
	    !(cfg->tls_cert && cfg->tls_key && cfg->tls_ca)) {
		fprintf(stderr, "tapestry-collector: TLS needs all of --tls-cert, "
			"--tls-key and --tls-ca\n");
		return 2;
	}
	if (proto_drift_ppm(getenv("TAPESTRY_CLOCK_DRIFT_PPM"), &ppm)) {
		fprintf(stderr, "tapestry-collector: TAPESTRY_CLOCK_DRIFT_PPM='%s': "
			"want a number from -100000 to 100000\n",
			getenv("TAPESTRY_CLOCK_DRIFT_PPM"));
		return 2;
	}
	return 0;
}

/* Parse the command line into o: -1 to go on, else the exit status
 * (0 after --help, 2 after a message). */
static int parse_options(int argc, char **argv, struct options *o)
{
	int opt, rc;

	col_config_default(&o->cfg);
	o->drain_ms = 30000;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (opt == '?' || opt == ':') {
			fputs(usage_text, stderr);
			return 2;
		}
		if ((rc = set_option(o, opt, optarg)) > 0)
			return 2;
		if (rc < 0) {
			fprintf(stderr, "tapestry-collector: bad value for --%s: %s\n",
				opt_name(opt), optarg);
			return 2;
		}
	}
	rc = check_options(o, optind < argc);
	return rc ? rc : -1;
}

/* --print-port: the ports the kernel chose, on stdout. */
static void print_ports(const struct col_config *cfg, struct col *col)
{
	const char *colon = strrchr(cfg->listen, ':');
	int hostlen = colon ? (int)(colon - cfg->listen) : 0;

	printf("listening %.*s:%u\n", hostlen, cfg->listen, col_port(col));
	if (cfg->tls_listen) {
		colon = strrchr(cfg->tls_listen, ':');
		hostlen = colon ? (int)(colon - cfg->tls_listen) : 0;
		printf("listening-tls %.*s:%u\n", hostlen, cfg->tls_listen,
		       col_tls_port(col));
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct options o;
	struct app a = {0};
	struct event *sig[3] = {NULL};
	static const int signo[3] = {SIGTERM, SIGINT, SIGHUP};
	int rc;

	if ((rc = parse_options(argc, argv, &o)) >= 0)
		return rc;
	a.drain_ms = o.drain_ms;
	if (o.log_file && col_log_open(o.log_file)) {
		fprintf(stderr, "tapestry-collector: cannot open %s\n", o.log_file);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	a.base = event_base_new();
	if (!a.base)
		return 1;
	a.col = col_new(a.base, &o.cfg, &rc);
	if (!a.col) {
		col_err("cannot start: %s", proto_strerror(rc));
		event_base_free(a.base);
		return 1;
	}
	if (o.print_port)
		print_ports(&o.cfg, a.col);
	a.drain_timer = evtimer_new(a.base, drain_timeout_cb, &a);
	for (int i = 0; i < 3; i++) {
		sig[i] = evsignal_new(a.base, signo[i], signal_cb, &a);
		if (!sig[i] || event_add(sig[i], NULL) < 0) {
			col_err("cannot install signal handlers");
			a.exit_code = 1;
			goto out;
		}
	}
	event_base_dispatch(a.base);
out:
	for (int i = 2; i >= 0; i--)
		if (sig[i])
			event_free(sig[i]);
	if (a.drain_timer)
		event_free(a.drain_timer);
	col_free(a.col);
	event_base_free(a.base);
	col_log_close();
	return a.exit_code;
}
