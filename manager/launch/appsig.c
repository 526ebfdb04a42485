/*
 * manager/launch/appsig.c - the application under a signal to the manager
 * (appsig.h). Without it, a SIGTERM to `tapestry run` or `launch` ended the
 * manager alone and left its collectors, mpirun and the ranks running with
 * no one to drain them. The application runs in its own process group so
 * that one kill reaches mpirun and everything it started on this host.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/launch/appsig.h"
#include "manager/launch/spawn.h"

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	if (!caught)
		caught = sig;
}

static void on_pipe(int sig)
{
	(void)sig;
}

void mgr_sig_catch(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* the manager's own output closed (`tapestry run ... | head -1`): its
	 * writes fail and it goes on draining and writing the job, instead of
	 * dying and leaving its collectors behind. A handler, not SIG_IGN, so
	 * that the programs it executes get the default back. */
	sa.sa_handler = on_pipe;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPIPE, &sa, NULL);
}

int mgr_sig_caught(void)
{
	return caught;
}

void mgr_app_child(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGTTOU, SIGPIPE};

	setpgid(0, 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* Give the terminal to group pg when the manager holds it; 1 if given. */
static int take_terminal(pid_t pg)
{
	void (*old)(int);
	int given;

	if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp())
		return 0;
	old = signal(SIGTTOU, SIG_IGN);
	given = tcsetpgrp(STDIN_FILENO, pg) == 0;
	signal(SIGTTOU, old);
	return given;
}

static void give_back_terminal(void)
{
	void (*old)(int) = signal(SIGTTOU, SIG_IGN);

	tcsetpgrp(STDIN_FILENO, getpgrp());
	signal(SIGTTOU, old);
}

static void on_child(int sig)
{
	(void)sig;	/* only wakes the wait below */
}

/* The signals the wait sleeps on are blocked outside ppoll, so that none
 * falls between the check and the sleep. */
int mgr_app_wait(pid_t pid, int grace_ms)
{
	struct sigaction sa, oldchld;
	sigset_t block, old;
	long long killed_at = 0;
	int st = 0, tty;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &oldchld);
	setpgid(pid, pid);	/* either side may run first */
	tty = take_terminal(pid);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		struct timespec ts = {0, 20000000};

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (caught && !killed_at) {
			kill(-pid, caught);
			kill(pid, caught);
			killed_at = mgr_now_ms();
		} else if (killed_at && mgr_now_ms() - killed_at > grace_ms) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		ppoll(NULL, 0, killed_at ? &ts : NULL, &old);
	}
	if (tty)
		give_back_terminal();
	sigaction(SIGCHLD, &oldchld, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return mgr_wait_code(st);
}

void mgr_app_ended(int code, char *buf, size_t cap)
{
	if (code > 128 && code < 128 + NSIG)
		snprintf(buf, cap, "was killed by signal %d (%s)", code - 128,
			 strsignal(code - 128));
	else
		snprintf(buf, cap, "exited with status %d", code);
}
