/* SPDX-License-Identifier: MIT */
/* dirbatch.h: a directory's entries listed and stat()ed a batch at a time
 * (dirbatch.c), on whichever thread, for the walk (walk.c); never installed. */
#ifndef DUPSCAN_DIRBATCH_H
#define DUPSCAN_DIRBATCH_H

#include <dirent.h>
#include <sys/stat.h>

#include "internal.h"
#include "walk/walk.h"

#define STAT_BATCH 4096u   /* entries listed before they are added: bounds memory */

/* stat it; an action's leftover (reported, never a file); a directory the
 * caller's filter must see before its stat */
enum { ENT_STAT, ENT_LEFTOVER, ENT_ASK };

struct wentry {
	size_t name;          /* offset in the batch's names */
	uint64_t ino;         /* from the directory entry */
	int kind;
	unsigned char d_type;
	int err;              /* -errno of fstatat, or 0 */
	struct stat st;
};

/* What a batch's listing and stat calls cost: on a spinning disk the walk
 * is one stream unless the metadata it meets is in memory already (walk.c,
 * one_stream()). */
struct stat_cost {
	int64_t ns;           /* wall time of the calls */
	long inblock;         /* block reads they started (this thread's) */
	size_t n;             /* calls */
};

struct stat_batch {
	int fd, flags;
	struct stat_cost cost;
	bool by_inode;        /* stat in inode order: one sweep over a disk's inode table */
	uint32_t *order;      /* scratch for that order */
	size_t caporder;
	struct wentry *e;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
	int read_err;         /* readdir failed after this batch */
};

/* One directory of the walk: listed on any thread (the pool's job), taken
 * by the caller's thread. */
struct dir_job {
	struct ds_job job;   /* first: the pool's job is the directory's */
	uint32_t d, depth;
	char *path;          /* made when needed: a directory's path costs its depth */
	int parent_fd;       /* its parent, open: the caller's thread opens it there */
	int oflags;
	uint64_t dev, ino;
	bool recurse, ask;   /* descend; entries that are directories go to the filter first */
	bool queued;         /* offered to the helpers: lives until the walk ends */
	size_t slot;         /* its place in walker.all */
	int fatal;           /* -ENOMEM or DUPSCAN_E_CANCELED while listing */
	int open_err;        /* the directory could not be opened or was replaced */
	DIR *dh;             /* open until taken */
	struct stat_batch b; /* the batch listed */
	bool complete, more, skipped;
	bool listed;         /* its first batch listed ahead (by list_ahead) */
	int64_t bytes;       /* its st_size when pushed */
	bool deferred;       /* list, but leave the stat calls to list_ahead */
	/* NET mode (netwalk.c): the subdirectories of its first batch, made and
	 * queued by whoever listed it, before the walk reaches them */
	struct dir_job **kids; /* by entry, or NULL */
	size_t nkids;
	bool adopted;        /* a kid the walk took as its own */
	bool dropped;        /* a kid the walk left: done with, freed at the end */
};

/* netwalk.c: on a network filesystem, where listing a directory waits round
 * trips, the walk's helpers list subdirectories as soon as their parent is
 * listed, not when the walk (depth first, on one thread) reaches it. */
/* Make and queue j's subdirectories (NET mode, j listed by its path). */
void ds_netwalk_spawn(const struct ds_walk *s, struct dir_job *j);
/* j's kid for its first batch's entry k, adopted; NULL when there is none. */
struct dir_job *ds_netwalk_adopt(struct dir_job *j, size_t k);
/* j's kids the walk did not adopt: each waited for if running, dropped
 * with its own kids, descriptors closed. */
void ds_netwalk_drop(struct ds_pool *p, struct dir_job *j);
/* Free what j's kids not adopted hold, and them (after the phase ended). */
void ds_netwalk_free(struct dir_job *j);

void ds_cost_begin(struct stat_cost *c);
void ds_cost_end(struct stat_cost *c, size_t n);

/* Open j's directory (checked to be the one counted) and list its first
 * batch; trouble goes to j->open_err or j->fatal. Touches only j. */
void ds_list_job(const struct ds_walk *s, struct dir_job *j);
/* List j's next batch and stat() it unless j->deferred. */
void ds_list_batch(const struct ds_walk *s, struct dir_job *j);
/* stat() a batch's entries (none taken yet), in inode order when by_inode. */
void ds_stat_batch(struct stat_batch *b);
/* stat() one entry b listed. */
void ds_stat_entry(const struct stat_batch *b, struct wentry *we);
/* j's path, made the first time it is needed. @return it, or NULL. */
const char *ds_job_path(const struct ds_walk *s, struct dir_job *j);
/* Give back j's batch and path (not j, nor its directory handle). */
void ds_job_free_batch(struct dir_job *j);

#endif
