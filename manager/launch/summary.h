/*
 * manager/launch/summary.h - the few lines `tapestry run` prints once the
 * job directory is written (manager/launch/summary.c).
 */
#ifndef TAPESTRY_MGR_SUMMARY_H
#define TAPESTRY_MGR_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

struct mgr_summary {
	uint64_t events, lost, gaps, corrupt;
	uint64_t rejected;	/* connections the collectors refused (a
				 * handshake or a frame they said no to;
				 * issue 33: not one a process closed during
				 * its handshake). A refused sensor keeps
				 * what it did not deliver for the spool. */
	char rejected_why[128];	/* "job secret 1, version 2" or "" */
	uint64_t nospace;	/* events the root could not store, its disk
				 * full (counted in lost) */
	char nospace_dir[512];	/* that disk's job directory, or "" */
	size_t streams, ranks;	/* ranks: processes with an MPI rank, not
				 * launchers (distinct host, pid) */
	size_t singletons;	/* those ranks whose MPI_COMM_WORLD is
				 * themselves alone (size 1) */
	size_t launchers;	/* launchers' processes (META launcher) */
	size_t processes;	/* distinct (host, pid): an exec'd process is
				 * one, with a stream per image */
	size_t cut;		/* streams with no end seen (killed): what
				 * they had not sent yet is lost */
	char clock[256];	/* the clock quality in one line */
};

/* Read the job directory dir once and fill s: events, streams, ranks,
 * losses, the clock quality. While it reads, a progress line (events read
 * of the index's total, rate, time left) is rewritten on stderr when stderr
 * is a terminal, and erased at the end. 0 or a negative proto code. */
int mgr_summary_read(const char *dir, struct mgr_summary *s);

/* Print s: events and losses with the clock quality, the network measure
 * (network: one line, or NULL), the job directory and its logs, the next
 * commands to try. */
void mgr_summary_print(const char *dir, const struct mgr_summary *s,
		       const char *network, FILE *out);

/* What the sensors left in spool (they reached no collector before their
 * end: docs/modules/sensor-runtime.md) into the job directory dir, said on
 * stderr; the spool removed when it is empty. 0, or the code of a failure
 * (said). run and launch call it after the drain. */
int mgr_take_spool(const char *dir, const char *spool);

#endif
