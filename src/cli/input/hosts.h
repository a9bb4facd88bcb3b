/* SPDX-License-Identifier: MIT */
/* hosts.h: HOST:PATH arguments, the ssh (or --rsh) each one starts, and
 * --server's side. */
#ifndef DUPSCAN_CLI_REMOTE_H
#define DUPSCAN_CLI_REMOTE_H

#include <stdbool.h>
#include <sys/types.h>

#include "dupscan.h"

struct cli_opts;

/* Is arg [USER@]HOST:PATH, rsync's way: a colon before any slash, something
 * before it, and no local file of that name (./NAME is always local)? */
bool remote_arg(const char *arg);

/* The commands started for remote arguments, to be waited for. */
struct remote_procs {
	pid_t *pid;
	int *fd;         /* our ends, two a command */
	int n;
};
/* Start "RSH HOST DUPSCAN --server [filters]" for arg and add it to scan
 * (with reference, as a reference path: --reference=HOST:PATH).
 * @return 0, or an exit status after a message. */
int remote_add(dupscan_scan *scan, const struct cli_opts *o, const char *arg, bool recurse, bool reference,
	       struct remote_procs *procs);
/* Close our ends (after dupscan_free()) and wait for every command (with
 * failed, each told to end first). */
void remote_wait(struct remote_procs *procs, bool failed);


#endif /* DUPSCAN_CLI_REMOTE_H */
