/* SPDX-License-Identifier: MIT */
/* journal.h: the undo journal of destructive runs, and --undo. */
#ifndef DUPSCAN_JOURNAL_H
#define DUPSCAN_JOURNAL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "dupscan.h"

struct journal;

#define JOURNAL_MAGIC_LINE "# dupscan journal 1"

/* The journal at path, or at the default place when path is NULL (its
 * directory made when needed): the file is made, or a run header appended to
 * it, with the first change recorded; here only its place is checked.
 * @return the journal, or NULL with a message on stderr. */
struct journal *journal_open(const char *path);
/* Is the file at path a journal dupscan may append to (one it wrote, or an
 * empty file), or can one be made there? Asked before anything changes.
 * @return 0; -EINVAL when it holds anything else (a report, a folder);
 * another -errno when it cannot be opened or made (its folder missing). */
int journal_check(const char *path);
/* (journal_record()'s error when the file was replaced by one that is not a journal) */
#define ENOTJOURNAL EBADMSG
#define JOURNAL_MAX_SIBLINGS 16

/* One change, as journal_record() writes it. */
struct journal_change {
	const char *kind;          /* "move", "hardlink", "symlink", "delete", "dedupe" */
	const char *kept, *dup;    /* for "move": the file moved (dup) and dest */
	bool kept_remote;          /* kept is HOST:PATH, on another host: written as it is */
	const char *dest;
	struct stat entry;         /* the duplicate's directory entry (lstat) */
	struct stat kept_st;       /* the kept file (stat) */
	const char *link_target;   /* the duplicate is a symlink: its target */
	const uint64_t *hash;      /* XXH64 of the content, NULL when not known */
	uint64_t size;             /* "move": the size of the content hashed */
	const char *siblings[JOURNAL_MAX_SIBLINGS]; /* other names of the duplicate's inode */
	size_t nsiblings;
};

/* Record one change before it is made: written and fsynced.
 * @return 0, or -errno (then the change must not be made). */
int journal_record(struct journal *j, const struct journal_change *c);
/* Record a directory removed by --prune-empty-dirs. */
int journal_rmdir(struct journal *j, const char *dir, const struct stat *st);
/* Record a directory --move-to is about to make (--undo removes it when empty). */
int journal_mkdir(struct journal *j, const char *dir);
const char *journal_path(const struct journal *j);
/* Close; @return 0 or -errno. */
int journal_close(struct journal *j);

/* --undo: reverse every change of the journal at path, newest first.
 * @return the exit status: 0 all undone, 1 something could not be. */
int journal_undo(const char *path);

#endif /* DUPSCAN_JOURNAL_H */
