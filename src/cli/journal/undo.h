/* SPDX-License-Identifier: MIT */
/* undo.h: what --undo's parts share: a journal line read back, the content it
 * recorded, the names restored so far, and the steps every restore is made of
 * (a name of undo's own, checked, then placed; a name removed only when it is
 * still what was checked). */
#ifndef DUPSCAN_CLI_UNDO_H
#define DUPSCAN_CLI_UNDO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "journal.h"

/* the content a line recorded: its size (-1: none) and XXH64 (when hashed) */
struct content {
	long long size;
	uint64_t hash;
	bool hashed;
};

#define UNDO_MAXF (17 + JOURNAL_MAX_SIBLINGS)

struct entry {
	char *f[UNDO_MAXF]; /* fields, unescaped; f[0] is the kind */
	int n;
	int names;          /* the first field of the inode's other names */
	struct content want;
	unsigned lineno;
	unsigned run;       /* the run that wrote it: device and inode numbers mean
			     * something only within one run (numbers are reused) */
};

/* Files restored so far in one run, by the inode they had: names of one inode
 * come back as names of one inode. */
struct restored {
	long long dev, ino;
	char *path;
	dev_t now_dev;
	ino_t now_ino;
};
struct restored_map {
	struct restored *v;
	size_t n;
};
/* keyed apart: a link's key is the inode a duplicate had before it was
 * replaced, a move's the inode the name had before it was moved */
struct undo_state {
	struct restored_map links, moves;
	unsigned run;
};

void undo_say(const char *what, const char *path, const char *why);
void undo_complain(const char *path, const char *why);
/* "what at path: why", for complaints that name a second path. */
void undo_complain2(const char *path, const char *why, const char *other);

/* Is anything recorded to check a content against? */
bool undo_known(const struct content *c);
/* Does path hold the recorded content (a regular file of its size, and its
 * hash when recorded)? False when nothing is recorded. */
bool undo_holds(const struct content *c, const char *path);
/* Does path hold what e recorded; where e recorded nothing (older journals,
 * symlinks), the same thing as other (NULL: no). */
bool undo_matches(const struct entry *e, const char *path, const char *other);
/* Do the entries a and b hold the same thing: the same bytes, or symlinks
 * with the same target? */
bool undo_same_entry(const char *a, const char *b);

/* The restored name of inode (dev, ino), while it is still that file. */
const struct restored *undo_twin(const struct restored_map *u, long long dev, long long ino);
void undo_remember(struct restored_map *u, long long dev, long long ino, const char *path);
/* Forget them (another run's numbers mean other files). */
void undo_forget(struct restored_map *u);

/* A new entry made by make() under a name of undo's own beside path
 * (".dupscan-tmp-undo*", never taken for an action's name set aside).
 * @return 0 with the name in *tmp (to free), or make()'s -errno. */
int undo_make_temp(const char *beside, char **tmp, int (*make)(const char *tmp, const void *arg), const void *arg);
/* Remove the name path if it is still the entry st describes (device, inode,
 * type, size, mtime): set aside first and checked there, so a file put in its
 * place meanwhile is put back, never removed. @return 0, or -errno or
 * DUPSCAN_E_CHANGED. */
int undo_remove_checked(const char *path, const struct stat *st);

int undo_move(struct undo_state *u, const struct entry *e);
int undo_link(struct undo_state *u, const struct entry *e, bool soft);

#endif /* DUPSCAN_CLI_UNDO_H */
