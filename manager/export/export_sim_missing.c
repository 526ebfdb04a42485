/*
 * manager/export/export_sim_missing.c - MPI ranks without events in a
 * SimGrid time-independent trace (SMPI dialect): a rank killed before its
 * sensor sent anything (its MPI runtime killed it, or the job) has no
 * actions, and SMPI's replay needs every rank of the world. After the
 * export has written the ranks it has, this rewrites them and writes a
 * stand-in for each missing rank so that the replay runs what the others
 * did:
 *  - every message to or from a missing rank is left out (send, isend,
 *    recv, irecv and their wait or test; a sendRecv keeps its other half),
 *    those of the collectives on smaller communicators too (written as
 *    messages: export_sim.c);
 *  - in the v-collectives on MPI_COMM_WORLD (alltoallv, gatherv,
 *    allgatherv, scatterv, reducescatter) the missing rank's entries are
 *    0, and a gatherv or scatterv rooted at it moves nothing;
 *  - the stand-in takes part in each collective on MPI_COMM_WORLD of the
 *    rank that wrote the fewest of them (the same sizes; 0 bytes of its own
 *    in the v-collectives), between init and finalize, and computes
 *    nothing;
 *  - the others were killed too, each at its own point (what its sensor
 *    had sent): when their counts of those collectives differ, each rank
 *    is replayed up to the last one they all have (the replay would wait
 *    for ever in the next), its other actions after it left out, said.
 * The line syntax is export_sim.c's (docs/modules/export-simgrid.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/export/live.h"
#include "manager/mgr.h"
#include "proto/error.h"

#define TOK_MAX (2 * 65536 + 8)		/* alltoallv of TI_RANKS_MAX ranks */

/* The collectives on MPI_COMM_WORLD the stand-in repeats, and the
 * communicator actions (no-ops in the replay, kept for their order). */
static const char *const colls[] = {
	"barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
	"allgather", "alltoall", "scan", "exscan", "gatherv", "scatterv",
	"allgatherv", "alltoallv", "reducescatter", "comm_size", "comm_split",
	"comm_dup", NULL,
};

static int is_coll(const char *a)
{
	for (size_t i = 0; colls[i]; i++)
		if (!strcmp(a, colls[i]))
			return 1;
	return 0;
}

static int gone(const struct mgr_ti_missing *m, const char *tok)
{
	char *end;
	long r = strtol(tok, &end, 10);

	return *end == '\0' && r >= 0 && r < m->world && m->missing[r];
}

/* Split line (modified in place) into at most TOK_MAX words: the count. */
static size_t split(char *line, char **tok)
{
	size_t n = 0;

	for (char *s = strtok(line, " \n"); s && n < TOK_MAX; s = strtok(NULL, " \n"))
		tok[n++] = s;
	return n;
}

/* Zero the missing ranks' entries of the world-sized array at tok[from];
 * all of them with all. */
static void zero(const struct mgr_ti_missing *m, char **tok, size_t n,
		 size_t from, int all)
{
	static char z[] = "0";

	for (int64_t i = 0; i < m->world && from + (size_t)i < n; i++)
		if (all || m->missing[i])
			tok[from + (size_t)i] = z;
}

/* One rank's line rewritten in tok (n words): 1 to keep, 0 to drop. The
 * stand-in's own v-collective sizes with standin. */
static int rewrite(const struct mgr_ti_missing *m, char **tok, size_t *n,
		   int standin)
{
	static char z[] = "0", zero_tag[] = "0", recv[] = "recv", send[] = "send";
	size_t w = (size_t)m->world;
	const char *a = tok[1];

	if (*n < 2)
		return 1;
	if (!strcmp(a, "send") || !strcmp(a, "isend") || !strcmp(a, "recv") ||
	    !strcmp(a, "irecv"))
		return *n < 3 || !gone(m, tok[2]);
	if (!strcmp(a, "wait") || !strcmp(a, "test"))
		return *n < 4 || (!gone(m, tok[2]) && !gone(m, tok[3]));
	if (!strcmp(a, "sendRecv") && *n >= 6) {
		/* r sendRecv SBYTES DST RBYTES SRC 6 6: tag 0 both ways */
		int d = gone(m, tok[3]), s = gone(m, tok[5]);
		char *sb = tok[2], *dst = tok[3], *rb = tok[4], *src = tok[5];

		if (d && s)
			return 0;
		if (d || s) {
			tok[1] = d ? recv : send;
			tok[2] = d ? src : dst;
			tok[3] = zero_tag;
			tok[4] = d ? rb : sb;
			*n = 5;
		}
		return 1;
	}
	if (!strcmp(a, "alltoallv") && *n >= 4 + 2 * w) {
		zero(m, tok, *n, 3, standin);
		zero(m, tok, *n, 4 + w, standin);
		if (standin)
			tok[2] = tok[3 + w] = z;
	} else if ((!strcmp(a, "gatherv") || !strcmp(a, "allgatherv")) &&
		   *n >= 3 + w) {
		int root_gone = a[0] == 'g' && *n >= 4 + w && gone(m, tok[3 + w]);

		zero(m, tok, *n, 3, root_gone);
		if (standin || root_gone)
			tok[2] = z;
	} else if (!strcmp(a, "scatterv") && *n >= 4 + w) {
		int root_gone = gone(m, tok[3 + w]);

		zero(m, tok, *n, 2, root_gone || standin);
		if (standin || root_gone)
			tok[2 + w] = z;
	} else if (!strcmp(a, "reducescatter") && *n >= 2 + w) {
		zero(m, tok, *n, 2, 0);
	}
	return 1;
}

static void put(FILE *f, const char *rank, char **tok, size_t n)
{
	fputs(rank, f);
	for (size_t i = 1; i < n; i++) {
		fputc(' ', f);
		fputs(tok[i], f);
	}
	fputc('\n', f);
}

/* Rewrite out/rank_R.txt (R present) through rewrite(): its count of
 * world collectives, or -1 (said). */
static long fix_rank(const char *out, int64_t r, const struct mgr_ti_missing *m,
		     char **tok, long limit, uint64_t *dropped, uint64_t *cut)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], *line = NULL;
	size_t cap = 0, n;
	FILE *in, *o;
	long ncoll = 0;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/rank_%" PRId64 ".txt", out, r);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(in = fopen(path, "r")))
		return mgr_fail(PROTO_E_IO, "%s: cannot read: %m", path), -1;
	if (!(o = fopen(tmp, "w"))) {
		fclose(in);
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", tmp), -1;
	}
	while (getline(&line, &cap, in) > 0) {
		char *rank;

		n = split(line, tok);
		if (!n)
			continue;
		rank = tok[0];
		if (n >= 2 && limit >= 0 && ncoll >= limit && strcmp(tok[1], "finalize")) {
			(*cut)++;	/* past the collectives every rank has */
			continue;
		}
		if (n >= 2 && is_coll(tok[1]))
			ncoll++;
		if (rewrite(m, tok, &n, 0))
			put(o, rank, tok, n);
		else
			(*dropped)++;
	}
	free(line);
	if (ferror(in))
		rc = mgr_fail(PROTO_E_IO, "%s: read error: %m", path);
	fclose(in);
	if (fclose(o) != 0 && !rc)
		rc = mgr_fail(PROTO_E_IO, "%s: write failed: %m", tmp);
	if (!rc && rename(tmp, path) != 0)
		rc = mgr_fail(PROTO_E_IO, "%s: cannot rename: %m", tmp);
	if (rc)
		remove(tmp);
	return rc ? -1 : ncoll;
}

/* out/rank_S.txt for missing rank s: init, the collectives of rank model's
 * (rewritten) file, finalize. 0, or -1 (said). */
static int write_standin(const char *out, int64_t s, int64_t model,
			 const struct mgr_ti_missing *m, char **tok, long limit)
{
	long ncoll = 0;
	char path[PATH_MAX], mpath[PATH_MAX], rank[24], *line = NULL;
	size_t cap = 0, n;
	FILE *in = NULL, *o;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/rank_%" PRId64 ".txt", out, s);
	snprintf(rank, sizeof(rank), "%" PRId64, s);
	if (!(o = fopen(path, "w")))
		return mgr_fail(PROTO_E_IO, "%s: cannot write: %m", path), -1;
	fprintf(o, "%s init\n", rank);
	if (model >= 0) {
		snprintf(mpath, sizeof(mpath), "%s/rank_%" PRId64 ".txt", out, model);
		if (!(in = fopen(mpath, "r")))
			rc = mgr_fail(PROTO_E_IO, "%s: cannot read: %m", mpath);
	}
	while (in && !rc && getline(&line, &cap, in) > 0) {
		n = split(line, tok);
		if (n >= 2 && is_coll(tok[1]) && ncoll++ < limit && rewrite(m, tok, &n, 1))
			put(o, rank, tok, n);
	}
	free(line);
	if (in)
		fclose(in);
	fprintf(o, "%s finalize\n", rank);
	if (fclose(o) != 0 && !rc)
		rc = mgr_fail(PROTO_E_IO, "%s: write failed: %m", path);
	return rc ? -1 : 0;
}

/* The world collectives of out/rank_R.txt, or -1 (said). */
static long count_colls(const char *out, int64_t r, char **tok)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	long n = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/rank_%" PRId64 ".txt", out, r);
	if (!(in = fopen(path, "r")))
		return mgr_fail(PROTO_E_IO, "%s: cannot read: %m", path), -1;
	while (getline(&line, &cap, in) > 0)
		n += split(line, tok) >= 2 && is_coll(tok[1]);
	free(line);
	fclose(in);
	return n;
}

int mgr_ti_standin(const char *out, const struct mgr_ti_missing *m)
{
	char **tok = malloc(TOK_MAX * sizeof(*tok));
	int64_t model = -1;
	long least = -1, most = -1, c;
	uint64_t dropped = 0, cut = 0;
	int rc = 0;

	if (!tok)
		return mgr_fail(PROTO_E_NOMEM, "out of memory"), -1;
	/* the others were killed too, each after what its sensor had sent:
	 * every rank is cut after the collectives they all have, the one
	 * with the fewest gives the stand-in's */
	for (int64_t r = 0; r < m->world && !rc; r++) {
		if (m->missing[r])
			continue;
		if ((c = count_colls(out, r, tok)) < 0)
			rc = -1;
		else if (least < 0 || c < least) {
			least = c;
			model = r;
		}
		if (c > most)
			most = c;
	}
	for (int64_t r = 0; r < m->world && !rc; r++)
		if (!m->missing[r] &&
		    fix_rank(out, r, m, tok, least < most ? least : -1, &dropped, &cut) < 0)
			rc = -1;
	for (int64_t r = 0; r < m->world && !rc; r++)
		if (m->missing[r] && write_standin(out, r, model, m, tok,
						   least < 0 ? 0 : least) != 0)
			rc = -1;
	free(tok);
	if (!rc && dropped)
		mgr_err("warning: %" PRIu64 " point-to-point actions to or from the "
			"missing ranks left out", dropped);
	if (!rc && cut)
		mgr_err("warning: the ranks' traces end after different numbers of "
			"collectives on MPI_COMM_WORLD (%ld to %ld: killed at different "
			"points): each is replayed up to the %ld-th, %" PRIu64 " actions "
			"after it left out", least, most, least, cut);
	return rc;
}
