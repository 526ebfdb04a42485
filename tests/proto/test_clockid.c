/*
 * tests/proto/test_clockid.c - suite "clockid": the blanks squeezed, this
 * process's clock read from /proc, and a time namespace's offsets seen from
 * inside it (root and a kernel with time namespaces; otherwise that test
 * says so and passes on what it could check).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/clockid.h"

Test(clockid, squeeze)
{
	const char *cases[][2] = {
		{"", ""},
		{"   \n\t ", ""},
		{"abc", "abc"},
		{"  abc  ", "abc"},
		{"monotonic           5         0\nboottime            0         0\n",
		 "monotonic 5 0 boottime 0 0"},
		{"a\r\n\tb", "a b"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		proto_clockid_squeeze(buf);
		cr_assert_str_eq(buf, cases[i][1], "case %zu", i);
	}
}

Test(clockid, this_process)
{
	struct proto_clockid c;
	char want[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	cr_assert_not_null(f);
	cr_assert_not_null(fgets(want, sizeof(want), f));
	fclose(f);
	want[strcspn(want, "\n")] = 0;
	proto_clockid_read(&c);
	cr_assert_str_eq(c.boot_id, want);
	cr_assert_eq(strlen(c.boot_id), 36);
	cr_assert(!strncmp(c.timens, "time:[", 6) || !strcmp(c.timens, "none"),
		  "%s", c.timens);
	if (access("/proc/self/timens_offsets", R_OK) == 0)
		cr_assert(!strncmp(c.offsets, "monotonic ", 10) ||
			  !strncmp(c.offsets, "boottime ", 9), "%s", c.offsets);
	else
		cr_assert_str_eq(c.offsets, "");
}

/* A new time namespace whose CLOCK_MONOTONIC is 5 s ahead: a process in it
 * reads its offsets, and another inode than ours. */
Test(clockid, time_namespace_offsets)
{
	int pfd[2];
	struct proto_clockid here, there;
	pid_t pid;
	int st;

	proto_clockid_read(&here);
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd;

		close(pfd[0]);
		if (unshare(CLONE_NEWTIME) != 0)
			_exit(77);
		fd = open("/proc/self/timens_offsets", O_WRONLY);
		if (fd < 0 || write(fd, "monotonic 5 0\n", 14) != 14)
			_exit(78);
		close(fd);
		/* the caller stays in its namespace; its children enter */
		pid_t g = fork();
		if (g == 0) {
			proto_clockid_read(&there);
			_exit(write(pfd[1], &there, sizeof(there)) ==
			      (ssize_t)sizeof(there) ? 0 : 79);
		}
		_exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) ?
		      WEXITSTATUS(st) : 80);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], &there, sizeof(there));
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77 || WEXITSTATUS(st) == 78) {
		cr_log_warn("no time namespace here (%d): offsets not checked",
			    WEXITSTATUS(st));
		return;
	}
	cr_assert_eq(WEXITSTATUS(st), 0);
	cr_assert_eq(n, (ssize_t)sizeof(there));
	cr_assert_str_eq(there.offsets, "monotonic 5 0 boottime 0 0");
	cr_assert_str_eq(there.boot_id, here.boot_id);
	cr_assert_str_neq(there.timens, here.timens);
}

/* TAPESTRY_CLOCK_DRIFT_PPM, read by the sensor and the collector alike:
 * a number within +-PROTO_DRIFT_PPM_MAX, nothing after it; else -1 and 0. */
Test(clockid, drift_ppm)
{
	static const struct {
		const char *s;
		int rc;
		double ppm;
	} c[] = {
		{NULL, 0, 0}, {"", 0, 0}, {"50", 0, 50}, {"-12.5", 0, -12.5},
		{"1e5", 0, 1e5}, {"-100000", 0, -1e5}, {"100001", -1, 0},
		{"fast", -1, 0}, {"12x", -1, 0}, {"nan", -1, 0}, {"inf", -1, 0},
		{" ", -1, 0},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double ppm = 7;

		cr_expect_eq(proto_drift_ppm(c[i].s, &ppm), c[i].rc, "'%s'",
			     c[i].s ? c[i].s : "(null)");
		cr_expect_eq(ppm, c[i].ppm, "'%s': %g", c[i].s ? c[i].s : "(null)", ppm);
	}
}
