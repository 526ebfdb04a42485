/*
 * bench/collector_throughput.c - end-to-end throughput of the collector:
 * synthetic sensors -> one node collector -> root collector -> job dir.
 *
 * Starts the root (--output) and a node collector on free loopback ports,
 * runs tests/collector/synth against the node, drains both (SIGTERM),
 * then reads the job directory back with tests/collector/check. Prints
 * events/s end to end (first connect to last ACK), bytes per event
 * stored and the node collector's peak RSS (VmHWM, read before it exits).
 * Usage: collector_throughput [STREAMS [EVENTS_PER_STREAM [BATCH
 * [LEVEL]]]]  (defaults 8, 20000000, 65536, 1). Binaries are found next
 * to this one (../tapestry-collector, ../tests/collector/{synth,check}).
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char bindir[PATH_MAX];

static pid_t spawn(const char *const argv[], const char *out)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();

	if (pid == 0) {
		if (out && !freopen(out, "w", stdout))
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static unsigned wait_port(const char *file)
{
	for (int i = 0; i < 400; i++) {
		FILE *fp = fopen(file, "r");
		char line[128];
		unsigned port = 0;

		if (fp) {
			if (fgets(line, sizeof(line), fp)) {
				char *c = strrchr(line, ':');

				if (c)
					port = (unsigned)atoi(c + 1);
			}
			fclose(fp);
		}
		if (port)
			return port;
		usleep(25000);
	}
	return 0;
}

/* A collector started with argv a, which prints its port into portf: its
 * port into *port, its pid; exits 1 after a message when it does not start. */
static pid_t start_col(const char *const a[], const char *portf,
		       const char *what, unsigned *port)
{
	pid_t pid = spawn(a, portf);

	if (!(*port = wait_port(portf))) {
		fprintf(stderr, "%s did not start\n", what);
		exit(1);
	}
	return pid;
}

/* The first line of file path, to stdout (nothing when it has none). */
static void first_line(const char *path)
{
	char line[512];
	FILE *fp = fopen(path, "r");

	if (fp && fgets(line, sizeof(line), fp))
		printf("%s", line);
	if (fp)
		fclose(fp);
}

static long hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

static int run_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int capture(const char *const argv[], const char *out)
{
	return run_wait(spawn(argv, out));
}

int main(int argc, char **argv)
{
	const char *streams = argc > 1 ? argv[1] : "8";
	const char *events = argc > 2 ? argv[2] : "20000000";
	const char *batch = argc > 3 ? argv[3] : "65536";
	const char *level = argc > 4 ? argv[4] : "1";
	char tmp[] = "/tmp/col-bench-XXXXXX", col[PATH_MAX + 32], synth[PATH_MAX + 32];
	char check[PATH_MAX + 32], job[PATH_MAX], rootp[PATH_MAX], nodep[PATH_MAX];
	char parent[64], conn[64], sout[PATH_MAX], cout[PATH_MAX], line[512];
	char self[PATH_MAX];
	unsigned rport, nport;
	pid_t root, node, sy;
	long peak;
	int rc;

	if (!realpath("/proc/self/exe", self))
		return 1;
	snprintf(bindir, sizeof(bindir), "%s", dirname(dirname(self)));
	snprintf(col, sizeof(col), "%s/tapestry-collector", bindir);
	snprintf(synth, sizeof(synth), "%s/tests/collector/synth", bindir);
	snprintf(check, sizeof(check), "%s/tests/collector/check", bindir);
	if (!mkdtemp(tmp))
		return 1;
	snprintf(job, sizeof(job), "%s/job", tmp);
	snprintf(rootp, sizeof(rootp), "%s/root.port", tmp);
	snprintf(nodep, sizeof(nodep), "%s/node.port", tmp);
	snprintf(sout, sizeof(sout), "%s/synth.out", tmp);
	snprintf(cout, sizeof(cout), "%s/check.out", tmp);
	signal(SIGPIPE, SIG_IGN);

	const char *ra[] = {col, "--listen", "127.0.0.1:0", "--print-port",
		      "--output", job, "--log-level", "warn", NULL};
	root = start_col(ra, rootp, "root", &rport);
	snprintf(parent, sizeof(parent), "127.0.0.1:%u", rport);
	const char *na[] = {col, "--listen", "127.0.0.1:0", "--print-port",
		      "--parent", parent, "--log-level", "warn",
		      "--flush-bytes", "4M", NULL};
	node = start_col(na, nodep, "node", &nport);
	snprintf(conn, sizeof(conn), "127.0.0.1:%u", nport);
	const char *sa[] = {synth, "--connect", conn, "--streams", streams,
		      "--events", events, "--batch", batch,
		      "--level", level, "--window", "16",
		      "--timeout", "600", NULL};
	sy = spawn(sa, sout);
	rc = run_wait(sy);
	peak = hwm_kb(node);
	kill(node, SIGTERM);
	run_wait(node);
	kill(root, SIGTERM);
	run_wait(root);
	first_line(sout);
	const char *ca[] = {check, "--dir", job, "--streams", streams,
		      "--events", events, "--batch", batch, NULL};
	int crc = capture(ca, cout);

	first_line(cout);
	printf("collector_throughput: synth %s, check %s, node collector peak "
	       "RSS %ld kB\n", rc == 0 ? "ok" : "FAILED",
	       crc == 0 ? "ok (nothing lost or duplicated)" : "FAILED", peak);
	snprintf(line, sizeof(line), "rm -rf '%s'", tmp);
	if (system(line) != 0)
		return 1;
	return rc || crc;
}
