/* SPDX-License-Identifier: MIT */
/* nesting.h: where the paths a command line names lie against each other
 * (a --move-to inside a scanned tree, a card inside its reference), decided
 * by the kernel's real paths, before anything is read or changed. */
#ifndef DUPSCAN_CLI_NESTING_H
#define DUPSCAN_CLI_NESTING_H

#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"

/* Does inner lie in outer, or is it outer (by their real paths)? @return 1
 * (inside), 2 (the same), 0 (neither, or either not there), or -errno
 * (ENOMEM). */
int nest_in(const char *inner, const char *outer);

/* --move-to's folder when it lies inside a scanned tree: left out of the walk. */
struct moveto_prune {
	bool on;
	dev_t dev;
	ino_t ino;
};
/* --move-to's folder checked before the scan: a file, a place where it
 * cannot be made, or a scanned path itself (or a folder holding one) is
 * refused; inside a scanned tree, it is said once and set to be pruned.
 * @return 0 or EXIT_USAGE (said). */
int moveto_check(const struct cli_opts *o, struct moveto_prune *m);
/* Is path (a folder the walk is to enter) --move-to's, by its identity? */
bool moveto_is(const struct moveto_prune *m, const char *path);

/* A path option's value that begins with '~' when no folder '~' is here:
 * the shell expands '~' after a space, not after '=' (--move-to=~/dupes
 * would make a folder named '~'). @return 0, or EXIT_USAGE (said). */
int tilde_slip(const char *opt, const char *path);

/* --reference against the other paths, before the scan: a path inside a
 * reference (or one itself) would be checked against itself: refused; a
 * reference inside a path is said. @return 0 or EXIT_USAGE (said). */
int reference_check(const struct cli_opts *o);

#endif /* DUPSCAN_CLI_NESTING_H */
