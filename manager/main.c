/*
 * manager/main.c - the `tapestry` command: subcommand dispatch.
 */
#include <stdio.h>
#include <string.h>

#include "manager/launch/ca.h"
#include "manager/launch/jobdesc.h"
#include "manager/export/live.h"
#include "manager/mgr.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} cmds[] = {
	{"run", mgr_cmd_run, "trace a program on this host into a job directory"},
	{"launch", mgr_cmd_launch, "run the job an XML description names: collectors, application, outputs"},
	{"plan", mgr_cmd_plan, "validate a job description and write its hostfiles and SimGrid files"},
	{"status", mgr_cmd_status, "show the live collector tree"},
	{"ca", mgr_cmd_ca, "generate a job's credentials: certificate authority, host certificates, secret"},
	{"export", mgr_cmd_export, "convert a job directory (csv, SimGrid, OTF2, Paje, Chrome JSON ...)"},
	{"report", mgr_cmd_report, "summarise a job directory"},
	{"rank-exec", mgr_cmd_rank_exec, "(internal) start one MPI rank of a launched job"},
	{"host-exec", mgr_cmd_host_exec, "(internal) mpirun's agent to a host behind a template launcher"},
	{"replay", mgr_cmd_replay, "replay a job's time-independent trace in SimGrid"},
	{"live-ti", mgr_cmd_live_ti, "follow a job directory being written: each rank's SimGrid actions as they come"},
	{"serve", mgr_cmd_serve, "the web page: job browser with report and timeline, live tree, launch"},
};

static void usage(FILE *out)
{
	fputs("usage: tapestry COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", out);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fputs("\n`tapestry COMMAND --help` describes each command.\n", out);
}

/* rank-exec runs under mpirun with the description's <environment>, which is
 * the program's, and uses none of the manager's settings; help is help. */
static int needs_env(int argc, char **argv)
{
	return strcmp(argv[1], "rank-exec") && strcmp(argv[1], "host-exec") &&
	       !(argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts(PACKAGE_STRING);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			int st = needs_env(argc, argv) && mgr_env_check() ? 2 :
				 cmds[i].fn(argc - 1, argv + 1);

			mgr_err_flush();	/* what the command left unsaid */
			return st;
		}
	mgr_err("unknown command '%s' (try tapestry --help)", argv[1]);
	return 2;
}
