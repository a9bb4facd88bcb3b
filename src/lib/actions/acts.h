/* SPDX-License-Identifier: MIT */
/* actions/acts.h: the actions' state, one for a scan's files (its tree's
 * acts): made and freed by the scan (scan.c), reached from a file's handle;
 * never installed. */
#ifndef DUPSCAN_ACTIONS_ACTS_H
#define DUPSCAN_ACTIONS_ACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "records/records.h"

/* Whether a user could read a kept file (readers.c), asked once per user
 * and kept file. */
struct ds_readers {
	struct ds_reader { uint32_t uid, gid; const char *kept; int reads; } *v;
	size_t n, cap;
	/* directories a reader may search: open addressing on the reader and
	 * the path (readers.c) */
	struct ds_searchable { uint64_t key; char *dir; uint32_t uid, gid; bool ok; } *dirs;
	size_t ndirs, capdirs;
	struct ds_principal *users; /* users with their groups, as looked up (readers.c) */
	size_t nusers, capusers;
};
/* One inotify instance for all of a scan's actions (closing one waits for
 * a grace period, milliseconds each), -1 until the first; and the readers.
 * Apart from the scan: the actions change them through const file handles. */
struct ds_acts {
	int watch;
	struct ds_readers readers;
};
/* (readers.c) A scan's, made empty (NULL on ENOMEM) and freed. */
struct ds_acts *ds_acts_new(void);
void ds_acts_free(struct ds_acts *a);
/* The actions' state of f's scan (NULL for another host's file). */
static inline struct ds_acts *ds_acts_of(const dupscan_file *f)
{
	return f->tree->acts;
}

#endif /* DUPSCAN_ACTIONS_ACTS_H */
