/* SPDX-License-Identifier: MIT */
/* interrupt.h: SIGINT, for the scan (-Z cancels it) and the actions (they stop
 * after the file at hand); what main.c and every act_*.c share. */
#ifndef DUPSCAN_CLI_INTERRUPT_H
#define DUPSCAN_CLI_INTERRUPT_H

#include <stdbool.h>

#include "dupscan.h"

/* Catch SIGINT from now on; scan (may be NULL) is canceled when it comes. */
void cli_catch_sigint(dupscan_scan *scan);
/* Has SIGINT come since the last cli_clear_interrupt()? */
bool cli_interrupted(void);
/* Forget a SIGINT already acted on, and stop canceling any scan. */
void cli_clear_interrupt(void);

#endif /* DUPSCAN_CLI_INTERRUPT_H */
