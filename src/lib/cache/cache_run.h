/* SPDX-License-Identifier: MIT */
/* cache/cache_run.h: the hash cache as the run's stages use it: loaded,
 * asked, noted, logged as it goes and saved; never installed. */
#ifndef DUPSCAN_CACHE_CACHE_RUN_H
#define DUPSCAN_CACHE_CACHE_RUN_H

#include "internal.h"
#include "records/records.h"
#include "records/known.h"
#include "cache/member.h"

struct ds_cache;
/* The hash cache during a run (cache.c, cache_save.c, cache_log.c). */
struct cache_log;
struct ds_cache_state {
	struct ds_core *core;
	struct ds_tree *tree;
	char *path;                  /* the file, or NULL: no cache */
	struct ds_cache *run;        /* what was loaded and what this run noted, or NULL */
	int64_t start_ns;            /* when dupscan_run() began (CLOCK_REALTIME): the time of its proofs */
	int64_t racy_ns;             /* a proof holds for files older than its time by more than this */
	int64_t oldest_proof;        /* the oldest proof time a set uses (0: none), for directory sets */
	struct cache_log *log;       /* what the run appends as it goes (cache_log.c), or NULL */
};


/* Does this run's matching see every file of one size and first block
 * together (no -1 or -p to split them: match.c's same_group())? Then classes
 * it settles apart differ. */
static inline bool ds_groups_apart(const struct ds_cache_state *s)
{
	return !s->core->opt.one_fs && !s->core->opt.permissions;
}

/* ---- the run's cache (cache.c, cache_save.c, cache_log.c) ---- */
struct ds_cache;
/* Begin the run's cache, s->run, from the file s->path (a damaged
 * file is reported and ignored). @return 0 or -ENOMEM. */
int ds_cache_load(struct ds_cache_state *s);
void ds_cache_free(struct ds_cache *c);
/* Cached hashes of r into out (all but out->rec) when its key still matches. */
bool ds_cache_get(const struct ds_cache_state *s, uint32_t i, struct ds_hashed *out);
/* With r's key as recorded, and a proof that holds (r's mtime and ctime older
 * than the proof's time by more than s->racy_ns): that proof. */
bool ds_cache_proof(const struct ds_cache_state *s, uint32_t i, struct ds_proof *out);
/* Does the cache hold hashes it may lend for some file of idx[0..n)? */
bool ds_cache_any(const struct ds_cache_state *s, const uint32_t *idx, size_t n);
/* Match the loaded entries to the records, order[0..n) sorted by inode (as
 * ds_collapse_links() leaves it): later lookups need no search. Without
 * settled, records settled already are left out (a spilled scan's band:
 * the sets' records kept from the bands before are joined at the end).
 * @return 0 or -ENOMEM. */
int ds_cache_join(struct ds_cache_state *s, const uint32_t *order, uint32_t n, bool settled);
/* Does this run take hashes from a loaded cache (not with -Q or -T)? */
bool ds_cache_usable(const struct ds_cache_state *s);
/* Does the cache hold hashes it may lend for every file of idx[0..n)? */
bool ds_cache_covers(const struct ds_cache_state *s, const uint32_t *idx, size_t n);
/* Remember hashes of this run (in commit order; a no-op without a cache).
 * @return 0 or -ENOMEM. */
int ds_cache_note(struct ds_cache_state *s, const struct ds_hashed *h);
/* A class number of this run, named by one of its files: salted, so two
 * runs' classes never merge by name. */
uint64_t ds_cache_fresh_class(const struct ds_cache_state *s, const struct ds_rec *named);
/* A comparison a killed run had under way (ds_cache_prefix()): the file was
 * byte for byte equal up to offset x to the others of group label, in the
 * run that started at at. */
struct ds_prefix {
	uint64_t x, label;
	int64_t at;
};
/* With r's key as the killed run saw it and not racy for it: its prefix. */
bool ds_cache_prefix(const struct ds_cache_state *s, uint32_t i, struct ds_prefix *out);
/* Remember a proof of this run for the save (a no-op without a cache). @return 0 or -ENOMEM. */
int ds_cache_proved(struct ds_cache_state *s, const struct ds_proved *p);
/* cache_bands.c: a spilled scan (records/spill.h) */
/* Matching's bytes a record of a band with a cache (its hit, its place in
 * the joins, its note and proof, and their sorting at the band's end), and
 * what the run holds whole (a killed run's log): the budget's weights. */
#define DS_CACHE_PER_REC 88u
uint64_t ds_cache_held(const struct ds_cache_state *s);
/* A band matched, before its records go: its notes and proofs leave as
 * entries with their paths, a run on disk. @return 0 or a negative code. */
int ds_cache_band_done(struct ds_cache_state *s);
/* cache_save.c */
/* Merge and replace the cache file. @return 0 (trouble is reported) or -ENOMEM. */
/* *folded: the file now holds what the log held (then the log can go). */
int ds_cache_save(struct ds_cache_state *s, bool *folded);
/* cache_log.c */
/* Append a file's hashes to the cache's log (made durable when due), from
 * any thread, with its proof (or NULL). A no-op without a log. */
void ds_cache_log_add(struct ds_cache_state *s, uint32_t rec, uint64_t partial, uint64_t full, bool has_full,
		      const struct ds_proof *pf);
/* A comparison side by side of m[0..n) (a whole bucket, of first-block hash
 * partial) under way, at offset off: what it knows goes to the cache's log in
 * one piece (a no-op without a log, or for more than 64 members). */
void ds_cache_log_checkpoint(struct ds_cache_state *s, const struct ds_member *m, size_t n, uint64_t partial, uint64_t off);
/* Take what a killed run left in the cache's log over the entries loaded,
 * and open this run's log (s->log; none with -Q or -T). Trouble is
 * told and ignored. @return 0 or -ENOMEM. */
int ds_cache_log_start(struct ds_cache_state *s);
/* Close the cache's log: folded (its entries are in the cache file now),
 * removed; else made durable for the next run. */
void ds_cache_log_close(struct ds_cache_state *s, bool folded);
/* Free a log left open (its descriptor closed, nothing written). */
void ds_cache_log_free(struct cache_log *l);
/* Was a record of the log made durable (or a killed run's log taken)? Then
 * the cache file that folds it must be durable before the log goes. */
bool ds_cache_log_durable(const struct ds_cache_state *s);

/* the library's calls of the same names (dupscan_...), for this stage */
int ds_set_cache(struct ds_cache_state *s, const char *path);

#endif /* DUPSCAN_CACHE_CACHE_RUN_H */
