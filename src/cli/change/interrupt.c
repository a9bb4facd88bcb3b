/* SPDX-License-Identifier: MIT */
/* interrupt.c: SIGINT: with -Z during the scan it cancels the scan; during
 * actions it stops them after the file at hand. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>

#include "interrupt.h"

static volatile sig_atomic_t interrupted;
static dupscan_scan *volatile cancel_target;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
	if (cancel_target)
		dupscan_cancel(cancel_target);
}

void cli_catch_sigint(dupscan_scan *scan)
{
	cancel_target = scan;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

bool cli_interrupted(void)
{
	return interrupted != 0;
}

void cli_clear_interrupt(void)
{
	cancel_target = NULL;
	interrupted = 0;
}
