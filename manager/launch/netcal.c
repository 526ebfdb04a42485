/*
 * manager/launch/netcal.c - network calibration: the MPI ping-pong run with the
 * job's mpirun before the application, and its figures in meta.xml.
 *
 * The ping-pong (manager/launch/pingpong.c) prints its results on stdout, which
 * goes to a log in the job directory together with mpirun's messages; the
 * manager parses the log. It runs in its own process group, killed when
 * it outlives its time. Its figures are end to end (one-way latency and
 * bandwidth between two ranks); the simgrid-platform export turns them
 * into per-link ones (xsl/simgrid-platform.xsl: two links per route).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/mgr.h"
#include "manager/launch/netcal.h"
#include "manager/launch/spawn.h"
#include "proto/error.h"
#include "proto/jobdir.h"

#define LINE_MAX_NC 1024

char *mgr_netcal_program(const char *flavour)
{
	char rel[64], inst[512];

	snprintf(rel, sizeof(rel), "tapestry-pingpong-%s", flavour);
	snprintf(inst, sizeof(inst), "%s/tapestry-pingpong-%s",
		 TAPESTRY_PKGLIBEXECDIR, flavour);
	return mgr_find("TAPESTRY_PINGPONG", rel, inst);
}

void mgr_netcal_skip(struct mgr_netcal *nc, const char *fmt, ...)
{
	va_list ap;

	memset(nc, 0, sizeof(*nc));
	va_start(ap, fmt);
	vsnprintf(nc->note, sizeof(nc->note), fmt, ap);
	va_end(ap);
}

/* Wait for pid at most timeout_ms; kill its group past that. Its wait
 * status, or -1 after a timeout (*timed_out set). */
static int wait_bounded(pid_t pid, int timeout_ms, int *timed_out)
{
	long long end = mgr_now_ms() + timeout_ms;
	int st = 0;
	pid_t r;

	*timed_out = 0;
	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (mgr_now_ms() >= end)
			break;
		usleep(20000);
	}
	*timed_out = 1;
	kill(-pid, SIGTERM);
	for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(20000);
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* The figures of the ping-pong's log into nc; 0 when all were found. */
static int parse(const char *log, struct mgr_netcal *nc)
{
	char line[LINE_MAX_NC], a[120], b[120];
	FILE *f = fopen(log, "r");
	int got = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		double x, y;

		if (sscanf(line, "pingpong: net_latency_ns %lf net_bandwidth_Bps %lf",
			   &x, &y) == 2 && isfinite(x) && isfinite(y) && x > 0 && y > 0) {
			nc->lat_ns = x;
			nc->bw_Bps = y;
			got |= 1;
		} else if (sscanf(line, "pingpong: latency_ns min %lf median %lf",
				  &x, &y) == 2 && isfinite(x) && x > 0) {
			nc->lat_min_ns = x;
			got |= 2;
		} else if (!strncmp(line, "pingpong: bw_factor ", 20)) {
			/* "SIZE:FACTOR;...": digits and those signs only */
			const char *v = line + 20;
			size_t k = mgr_smpi_factor_span(v);

			if (k > 0 && k < sizeof(nc->bw_factor) && (v[k] == '\n' || !v[k]))
				snprintf(nc->bw_factor, sizeof(nc->bw_factor), "%.*s",
					 (int)k, v);
		} else if (sscanf(line, "pingpong: hosts %119s %119s", a, b) == 2) {
			snprintf(nc->hosts, sizeof(nc->hosts), "%s %s", a, b);
			got |= 4;
		}
	}
	fclose(f);
	return got == 7 ? 0 : -1;
}

int mgr_netcal_run(const char *const mpirun_argv[], const char *flavour,
		   const char *log, int timeout_ms, struct mgr_netcal *nc)
{
	const char *argv[MGR_NETCAL_ARGV_MAX];
	char *prog = mgr_netcal_program(flavour);
	int n = 0, st, timed_out = 0, fd;
	pid_t pid;

	mgr_netcal_skip(nc, "not measured");
	if (!prog || access(prog, X_OK) != 0) {
		mgr_netcal_skip(nc, "failed: the ping-pong program %s is not "
				"installed", prog ? prog : "tapestry-pingpong");
		goto fail;
	}
	while (mpirun_argv[n] && n < MGR_NETCAL_ARGV_MAX - 2) {
		argv[n] = mpirun_argv[n];
		n++;
	}
	argv[n++] = prog;
	argv[n] = NULL;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		mgr_netcal_skip(nc, "failed: cannot write %s: %s", log, strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		unsetenv("LD_PRELOAD");	/* the calibration is not traced */
		if (geteuid() == 0) {
			setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
			setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
		}
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "tapestry: cannot execute %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(fd);
	if (pid < 0) {
		mgr_netcal_skip(nc, "failed: fork: %s", strerror(errno));
		goto fail;
	}
	setpgid(pid, pid);
	st = wait_bounded(pid, timeout_ms, &timed_out);
	if (timed_out) {
		mgr_netcal_skip(nc, "failed: no result within %d s (see %s)",
				timeout_ms / 1000, log);
		goto fail;
	}
	if (st < 0 || mgr_wait_code(st) != 0) {
		mgr_netcal_skip(nc, "failed: %s exited with status %d (see %s)",
				argv[0], st < 0 ? -1 : mgr_wait_code(st), log);
		goto fail;
	}
	if (parse(log, nc) != 0) {
		mgr_netcal_skip(nc, "failed: no figures in %s", log);
		goto fail;
	}
	nc->ok = 1;
	snprintf(nc->flavour, sizeof(nc->flavour), "%s", flavour);
	snprintf(nc->note, sizeof(nc->note), "MPI ping-pong (%s) between %s "
		 "before the application: one-way latency median of 1-byte "
		 "round trips / 2, bandwidth of 4 MiB messages", flavour, nc->hosts);
	free(prog);
	return 0;
fail:
	mgr_err("warning: network ping-pong %s: the SimGrid platform will use "
		"default latency and bandwidth", nc->note);
	free(prog);
	return -1;
}

void mgr_netcal_brief(const struct mgr_netcal *nc, char *buf, size_t cap)
{
	if (nc->ok)
		snprintf(buf, cap, "ping-pong (%s, %s): one-way latency %.3g us "
			 "(min %.3g us), bandwidth %.3g GB/s", nc->flavour, nc->hosts,
			 nc->lat_ns / 1e3, nc->lat_min_ns / 1e3, nc->bw_Bps / 1e9);
	else
		snprintf(buf, cap, "ping-pong %s", nc->note);
}

int mgr_netcal_save(const char *dir, const struct mgr_netcal *nc)
{
	struct proto_jobdir_w *w;
	char v[64];
	int rc = 0;

	if (!(w = proto_jobdir_create(dir, PROTO_JOBDIR_APPEND, 0, &rc))) {
		mgr_err("%s: cannot record the network calibration: %s", dir,
			proto_strerror(rc));
		return rc;
	}
	rc = proto_jobdir_set_meta(w, "net_calibration", nc->note);
	if (nc->ok) {
		snprintf(v, sizeof(v), "%.1f", nc->lat_ns);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_latency_ns", v);
		snprintf(v, sizeof(v), "%.1f", nc->lat_min_ns);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_latency_min_ns", v);
		snprintf(v, sizeof(v), "%.6g", nc->bw_Bps);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_bandwidth_Bps", v);
		if (!rc)
			rc = proto_jobdir_set_meta(w, "net_hosts", nc->hosts);
		if (!rc && nc->bw_factor[0])
			rc = proto_jobdir_set_meta(w, "net_bw_factor", nc->bw_factor);
	}
	int crc = proto_jobdir_close(w);

	if (!rc)
		rc = crc;
	if (rc)
		mgr_err("%s: cannot record the network calibration: %s", dir,
			proto_strerror(rc));
	return rc;
}
