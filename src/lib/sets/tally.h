/* SPDX-License-Identifier: MIT */
/* sets/tally.h: where the copies are, directory by directory, and which
 * directories overlap (tally.c, overlap.c); never installed. */
#ifndef DUPSCAN_SETS_TALLY_H
#define DUPSCAN_SETS_TALLY_H

#include "internal.h"
#include "records/records.h"
#include "sets/sets.h"

/* One overlap pair: side 0 is a's files that have a copy in b, side 1 b's in a. */
struct ds_overlap {
	uint32_t a, b;
	uint64_t files[2], bytes[2];
	uint64_t shared[2];          /* of bytes, those in blocks another file of their set holds */
};

/* A scan's directory figures, rolled up (each directory's subtree), by
 * directory number; and its overlap pairs. */
struct ds_tally {
	uint32_t ndirs;
	uint64_t *files, *bytes, *dupfiles, *dupbytes;
	uint64_t *sharedbytes;       /* after dupscan_find_shared() only (ds_tally_shared()), else NULL */
	uint32_t *depth;             /* levels below its argument */
	struct ds_overlap *pairs;
	size_t npairs;
};

/* tally.c: the figures, once (s->tally). @return 0, -ENOMEM,
 * DUPSCAN_E_STATE or DUPSCAN_E_OPTION (dupscan_tally_dirs()). */
int ds_tally(struct ds_results *s);
void ds_tally_free(struct ds_results *s);
/* A record leaving memory with its band (records/spill.h: user is the
 * results): counted in its directory's figures when it is a unique file,
 * as ds_each_unique() would have listed it. */
void ds_tally_gone(void *user, const struct ds_tree *t, uint32_t rec, const struct ds_rec *r, uint32_t dir);
/* The shared bytes' column of a tally made, once the sets' shared bytes are
 * known (dupscan_find_shared()), whichever came first. @return 0 or -ENOMEM. */
int ds_tally_shared(struct ds_results *s);
/* part is at least percent of whole, exactly (no overflow); the least such
 * part. */
bool ds_share_at_least(uint64_t part, uint64_t whole, unsigned percent);
uint64_t ds_share_need(uint64_t whole, unsigned percent);

/* The members of one set as the directories see them (tally.c): every
 * directory holding one of its files at any depth, with how many; k the set's
 * files on every host. */
struct ds_set_dirs {
	uint32_t *stamp, *count;     /* by directory: the count it was last in (gen), its files there */
	uint32_t gen;                /* counts made: 1, 2, ... */
	uint64_t *mask;              /* by directory: which of the set's first 64 files of this host it holds */
	uint32_t *list;              /* the directories counted for the set */
	size_t n, cap;
	uint32_t k;
	uint64_t size;
	bool masked;                 /* the set has at most 64 files here: mask tells them all */
	uint64_t *shared;            /* by directory: its files' shared bytes (dupscan_find_shared()
	                              * asked before), else NULL */
	size_t *off;                 /* with shared: by set, its first file's in s->shared_files */
};
/* The size of a set's files (0 for a set of none). */
static inline uint64_t ds_set_size(const struct dupscan_set *set)
{
	return set->count ? ds_rec_size(set->files[0].tree, set->files[0].rec) : 0;
}
/* For s's directories; with the shared bytes where they are known.
 * @return 0 or -ENOMEM. */
int ds_set_dirs_init(struct ds_set_dirs *sd, const struct ds_results *s);
void ds_set_dirs_free(struct ds_set_dirs *sd);
/* Count set number i's files into sd. @return 0 or -ENOMEM. */
int ds_set_dirs_count(const struct ds_results *s, struct ds_set_dirs *sd, size_t i);

/* overlap.c: the pairs at percent into s->tally (ds_tally() first), with
 * at most limit entries of pairs weighed. @return 0, -ENOMEM or
 * DUPSCAN_E_TOO_MANY (and no pair). */
int ds_overlaps(struct ds_results *s, unsigned percent, size_t limit);
/* The limit dupscan_find_overlaps() gives: one entry a file listed, at
 * least DS_OVERLAPS_FLOOR. */
enum { DS_OVERLAPS_FLOOR = 1 << 20 };
size_t ds_overlaps_limit(const struct ds_results *s);

#endif /* DUPSCAN_SETS_TALLY_H */
