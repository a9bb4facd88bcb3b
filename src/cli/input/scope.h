/* SPDX-License-Identifier: MIT */
/* scope.h: what the walk takes in (the -X filters and the globs, --move-to's
 * folder left out), and what it found and left out, counted so that a run
 * that examined nothing says so instead of answering "no duplicates". */
#ifndef DUPSCAN_CLI_SCOPE_H
#define DUPSCAN_CLI_SCOPE_H

#include <stdint.h>

#include "cli.h"
#include "nesting.h"

struct scope {
	const struct cli_opts *o;
	const struct moveto_prune *moveto; /* NULL: none to leave out */
	uint64_t walked;                   /* files the walk took (the library's count) */
	uint64_t left_out;                 /* files and folders the filters left out */
};

/* The filters (and the walk's count, unless serving) set on scan. */
void scope_install(dupscan_scan *scan, struct scope *sc, bool serving);
/* After the run: a scan that took no file at all. @return 0 (nothing was
 * left out: an empty tree, and no duplicates is the truth), or EXIT_USAGE (said: why nothing
 * was examined, -r not given or the filters). */
int scope_examined(const struct scope *sc);

/* The --exclude, --include and --keep path= patterns that matched nothing in
 * the run, each said with the rule (relative to each argument): as a
 * warning, or (refuse) as the reason an action is refused.
 * @return how many. */
size_t scope_unmatched(const struct scope *sc, const dupscan_scan *scan, bool refuse);

#endif /* DUPSCAN_CLI_SCOPE_H */
