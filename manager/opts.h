/*
 * manager/opts.h - a command's options, declared once.
 *
 * A command lists its options in one table (long name, key, whether -KEY
 * works too, argument, help lines); the getopt_long table, the
 * short-option string and the option lines of --help are all made from it, so what a command accepts and what
 * its --help says cannot disagree. --help and -h come with every command
 * and are not listed.
 */
#ifndef MGR_OPTS_H
#define MGR_OPTS_H

#include <stdio.h>

/* One option: --NAME, and -KEY too with MGR_OPT_SHORT. KEY is what
 * mgr_opts_next returns for it: a letter, never 'h'. */
struct mgr_opt {
	const char *name;	/* long name, without "--" */
	int key;
	unsigned flags;		/* MGR_OPT_SHORT or 0 */
	const char *arg;	/* the argument's name in --help; NULL: takes none */
	const char *help;	/* the help lines, '\n' between them; NULL: the
				 * command's text speaks of it */
	void (*more)(FILE *out);	/* printed under the help lines, or NULL */
};

#define MGR_OPT_SHORT 1u	/* -KEY as well as --NAME */

/* At most MGR_OPTS_MAX options per command. */
#define MGR_OPTS_MAX 15

/* A command's options and its --help: HEAD, one entry per option (its
 * help starting at column COL, continuation lines too), then TAIL. */
struct mgr_opts_doc {
	struct mgr_opt opt[MGR_OPTS_MAX + 1];	/* ends with a NULL name */
	int in_order;		/* options end at the first operand (what
				 * follows is a program's command line) */
	int col;
	const char *head;	/* usage line and what the command does */
	const char *tail;	/* after the options, or NULL */
};

/* What mgr_opts_next returns besides a key. */
enum {
	MGR_OPTS_END = 0,	/* no more options: operands from optind */
	MGR_OPTS_HELP = -1,	/* --help: printed on stdout, exit 0 */
	MGR_OPTS_BAD = -2,	/* unknown option or missing argument: the
				 * help on stderr after getopt's message, exit 2 */
};

/* The next option of ARGV (optarg set when it takes one), from the first
 * when optind is 1. */
int mgr_opts_next(const struct mgr_opts_doc *d, int argc, char **argv);

/* The exit status that goes with MGR_OPTS_HELP or MGR_OPTS_BAD. */
static inline int mgr_opts_status(int c)
{
	return c == MGR_OPTS_HELP ? 0 : 2;
}

/* The command's --help on OUT. */
void mgr_opts_help(const struct mgr_opts_doc *d, FILE *out);

/* The help on stderr for a wrong number of operands: 2, the exit status. */
int mgr_opts_usage(const struct mgr_opts_doc *d);

#endif
