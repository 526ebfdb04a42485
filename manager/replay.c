/*
 * manager/replay.c - `tapestry replay`. PLACEHOLDER until the SimGrid export
 * lands: says plainly that it is not available.
 */
#include "manager/mgr.h"

int mgr_cmd_replay(int argc, char **argv)
{
	mgr_err("replay is not implemented yet");
	return 1;
}
