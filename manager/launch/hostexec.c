/*
 * manager/launch/hostexec.c - `tapestry host-exec MAP HOST WORDS...`: the
 * remote-shell agent `tapestry launch` gives mpirun (Open MPI's
 * plm_rsh_agent, MPICH's -launcher-exec) when a host the ranks run on is
 * reached through a template launcher (ip netns exec, a site's own
 * command): mpirun calls it as it would call ssh, HOST being a host file
 * entry. MAP (DIR/plan/host-launchers, on the manager's machine, where
 * mpirun runs) has a line "HOST<TAB>TEMPLATE" per such host, TEMPLATE its
 * launcher's command with {host} and {address} filled in; WORDS joined by
 * blanks (as ssh joins them) replace {command} and /bin/sh runs the result.
 * A host not in MAP is reached by ssh, as mpirun would have.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/mgr.h"

#define LINE_MAX_ 16384

/* The template of host in map into tpl; 1 found, 0 not, -1 unreadable. */
static int lookup(const char *map, const char *host, char *tpl, size_t cap)
{
	char line[LINE_MAX_];
	FILE *f = fopen(map, "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\n")] = 0;
		if (!tab)
			continue;
		*tab = 0;
		if (!strcmp(line, host)) {
			snprintf(tpl, cap, "%s", tab + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int mgr_cmd_host_exec(int argc, char **argv)
{
	char tpl[LINE_MAX_], cmd[LINE_MAX_] = "", out[3 * LINE_MAX_];
	const char *at;
	size_t len = 0;
	int rc;

	if (argc < 4) {
		mgr_err("usage: tapestry host-exec MAP HOST COMMAND... (given to "
			"mpirun by tapestry launch)");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		int n = snprintf(cmd + len, sizeof(cmd) - len, "%s%s",
				 i > 3 ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(cmd) - len) {
			mgr_err("host-exec: the command for %s is too long", argv[2]);
			return 2;
		}
		len += (size_t)n;
	}
	rc = lookup(argv[1], argv[2], tpl, sizeof(tpl));
	if (rc < 0) {
		mgr_err("host-exec: %s: %s", argv[1], strerror(errno));
		return 1;
	}
	if (rc == 0) {
		execlp("ssh", "ssh", "-o", "BatchMode=yes", argv[2], cmd, (char *)NULL);
		mgr_err("host-exec: cannot execute ssh: %s", strerror(errno));
		return 127;
	}
	if (!(at = strstr(tpl, "{command}")) ||
	    snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - tpl), tpl, cmd,
		     at + 9) >= (int)sizeof(out)) {
		mgr_err("host-exec: bad launcher template for %s", argv[2]);
		return 2;
	}
	execl("/bin/sh", "sh", "-c", out, (char *)NULL);
	mgr_err("host-exec: cannot execute /bin/sh: %s", strerror(errno));
	return 127;
}
