/*
 * proto/clockid.h - which CLOCK_MONOTONIC a process reads.
 *
 * Two processes read the same CLOCK_MONOTONIC when they run on the same boot
 * of one machine (boot_id) with the same time-namespace offsets (a time
 * namespace adds a fixed offset, set before its first process enters and
 * never changed after; two namespaces with equal offsets read one clock).
 * The sensor puts these in its META and the collector in its STATS; the
 * post-processing needs no estimate between two equal clocks (manager/post/post.c).
 * Reads /proc with open/read/readlink only (no stdio: the sensor calls it
 * inside the traced program). Thread-safe.
 */
#ifndef TAPESTRY_PROTO_CLOCKID_H
#define TAPESTRY_PROTO_CLOCKID_H

struct proto_clockid {
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id, "" unreadable */
	char timens[48];	/* /proc/self/ns/time's link, "none" */
	char offsets[96];	/* /proc/self/timens_offsets with its blanks
				 * squeezed ("monotonic 5 0 boottime 0 0"),
				 * "" where the kernel has no time namespaces */
};

void proto_clockid_read(struct proto_clockid *c);

/* Squeeze runs of blanks (space, tab, newline) in s into one space and drop
 * them at both ends, in place. */
void proto_clockid_squeeze(char *s);

/* TAPESTRY_CLOCK_DRIFT_PPM (a test hook that makes the sensor's and the
 * collector's stamps CLOCK_MONOTONIC x (1 + ppm/1e6)): its value s (NULL or
 * "": 0) into *ppm; 0, or -1 (and *ppm 0) when s is not a number from
 * -PROTO_DRIFT_PPM_MAX to PROTO_DRIFT_PPM_MAX. */
#define PROTO_DRIFT_PPM_MAX 100000
int proto_drift_ppm(const char *s, double *ppm);

#endif
