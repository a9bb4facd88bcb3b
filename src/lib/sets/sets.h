/* SPDX-License-Identifier: MIT */
/* sets/sets.h: the sets, the directory sets and the unique files, in the chosen order; never installed. */
#ifndef DUPSCAN_SETS_SETS_H
#define DUPSCAN_SETS_SETS_H

#include "internal.h"
#include "records/records.h"
#include "cache/cache_run.h"

/* The results: sets, unique and missing files, the folders' tallies. */
struct ds_results {
	struct ds_core *core;
	struct ds_tree *tree;
	struct ds_cache_state *cache; /* the oldest proof a set uses */
	struct dupscan_set *sets;
	size_t nsets;
	struct dupscan_file *uniques;
	size_t nuniques;
	bool uniques_built;
	struct dupscan_file *missing; /* dupscan_find_missing() (reference.c) */
	size_t nmissing;
	uint64_t nasked;    /* the files dupscan_find_missing() asked about, on any host */
	bool missing_built;
	uint64_t *shared;            /* dupscan_find_shared(): each set's bytes already shared (NULL: not asked) */
	uint64_t *shared_files;      /* and each set file's, set after set in the sets' order */
	struct ds_tally *tally;      /* dupscan_tally_dirs(), dupscan_find_overlaps() (tally.h) */
	/* past a memory budget, by directory: the unique files that left memory
	 * with their band, and their bytes (ds_tally_gone()); NULL when none */
	uint64_t *gone_files, *gone_bytes;
	bool gone_lost;              /* they could not be counted (no memory): no tally */
};

/* sets.c */
int ds_build_sets(struct ds_results *s);
/* A record the scan lists (examined: no alias, none left out or dropped). */
static inline bool ds_rec_listed(const struct ds_rec *r)
{
	return !(r->flags & (DS_F_ALIAS | DS_F_DROPPED | DS_F_SKIPPED));
}
/* Record r (rep: its inode's representative) unique, as far as the records
 * tell: listed, its group matched to the end, in no set across hosts (the
 * index and -H's other names are ds_each_unique()'s to ask). */
static inline bool ds_rec_unique(const struct ds_rec *r, const struct ds_rec *rep)
{
	return ds_rec_listed(r) && ds_rec_listed(rep) && (rep->flags & DS_F_SETTLED) && !(rep->flags & DS_F_ACROSS);
}
/* The content class of record i, for directory matching: its confirmed class
 * (named by a member record), or for a file with no twin its own inode's
 * record, which no other content shares; DS_EMPTY_CLASS for an empty file. */
#define DS_EMPTY_CLASS (DS_NONE - 1) /* zero-length files: all equal, never read */
uint32_t ds_file_class(const struct ds_results *s, uint32_t i);
/* s->sets[0..nsets) made final: each in the chosen order, -I applied, sets
 * of one dropped, the sets sorted. @return 0 or -ENOMEM. */
int ds_finish_sets(struct ds_results *s);

/* Another host's tree as directory sets take it (remote/ fills it): the scan
 * that holds its directories, and its entries, each in one of them. */
enum { DS_HOST_FILE, DS_HOST_UNREAD, DS_HOST_UNLISTED };
struct ds_host_entry {
	uint64_t cls;        /* DS_HOST_FILE: its content's class across hosts */
	uint64_t size;
	uint32_t dir;        /* in dirs->dirs */
	uint32_t state;      /* DS_HOST_FILE; _UNREAD: a file of unknown content;
	                      * _UNLISTED: not a file, its directory was not listed whole */
};
struct ds_host_tree {
	struct ds_tree *dirs;
	struct ds_host_entry *e;
	size_t n;
};
/* dirsets.c: with DUPSCAN_OPT_DIRS, add the directory sets and leave out what
 * they cover, over this host's tree and hosts[0..nhosts); across (or NULL)
 * names this host's classes as hosts share them. @return 0 or -ENOMEM. */
int ds_build_dir_sets(struct ds_results *s, const struct ds_host_tree *hosts, size_t nhosts,
		      uint64_t (*across)(const dupscan_scan *s, uint64_t cls));
int ds_build_uniques(struct ds_results *s);
/* dupscan_find_missing()'s list of this host's files (s->missing, and
 * s->nasked), unsorted; the other hosts' are joined by the driver (scan.c),
 * then ds_missing_built(). @return 0 or -ENOMEM. */
int ds_build_missing(struct ds_results *s);
void ds_missing_built(struct ds_results *s);
/* fn(user, rec) for every record the unique files are (ds_build_uniques()),
 * in record order, without their paths; a nonzero return stops. @return it,
 * or -ENOMEM. */
int ds_each_unique(struct ds_results *s, int (*fn)(void *user, uint32_t rec), void *user);
void ds_free_results(struct ds_results *s);

/* the library's calls of the same names (dupscan_...), for this stage */
int ds_find_overlaps(struct ds_results *s, unsigned percent);
size_t ds_overlap_count(const struct ds_results *s);
int ds_overlap_dirs(const struct ds_results *s, size_t i, size_t *a, size_t *b);
uint64_t ds_overlap_tally(const struct ds_results *s, size_t i, int side, int what);
size_t ds_missing_count(const struct ds_results *s);
uint64_t ds_missing_asked(const struct ds_results *s);
const dupscan_file *ds_missing_file(const struct ds_results *s, size_t i);
int ds_find_shared(struct ds_results *s);
uint64_t ds_set_shared_bytes(const struct ds_results *s, size_t i);
int ds_tally_dirs(struct ds_results *s);
size_t ds_dir_count(const struct ds_results *s);
size_t ds_tally_dir_path(const struct ds_results *s, size_t dir, char *buf, size_t cap);
size_t ds_dir_parent(const struct ds_results *s, size_t dir);
unsigned ds_dir_depth(const struct ds_results *s, size_t dir);
uint64_t ds_dir_tally(const struct ds_results *s, size_t dir, int what);

#endif /* DUPSCAN_SETS_SETS_H */
