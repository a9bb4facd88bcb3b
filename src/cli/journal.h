/* SPDX-License-Identifier: MIT */
/* journal.h: the undo journal of destructive runs, and --undo. */
#ifndef DUPSCAN_JOURNAL_H
#define DUPSCAN_JOURNAL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "dupscan.h"

struct journal;

/* Open (creating it and its directory when needed) the journal at path, or at
 * the default place when path is NULL, and append a run header.
 * @return the journal, or NULL with a message on stderr. */
struct journal *journal_open(const char *path);
/* Record one change before it is made: written and fsynced.
 * kind: "move", "hardlink", "symlink", "delete", "dedupe".
 * For "move", b is the destination; otherwise a is the kept file, b the
 * duplicate and st the duplicate's own metadata (restored by --undo).
 * @return 0, or -errno (then the change must not be made). */
int journal_record(struct journal *j, const char *kind, const char *a, const char *b, const struct stat *st,
		   const struct stat *kept);
/* Record a directory removed by --prune-empty-dirs. */
int journal_rmdir(struct journal *j, const char *dir, const struct stat *st);
const char *journal_path(const struct journal *j);
/* Close; @return 0 or -errno. */
int journal_close(struct journal *j);

/* --undo: reverse every change of the journal at path, newest first.
 * @return the exit status: 0 all undone, 1 something could not be. */
int journal_undo(const char *path);

#endif /* DUPSCAN_JOURNAL_H */
