/* SPDX-License-Identifier: MIT */
/* match/result.h: what matching a size group produces, and the scheduler that commits it in order; never installed. */
#ifndef DUPSCAN_MATCH_RESULT_H
#define DUPSCAN_MATCH_RESULT_H

#include "internal.h"
#include "records/records.h"
#include "records/known.h"

struct ds_cache_state;
struct ds_reading;

/* What matching works on: the tree's records (their classes go into its
 * index), read as the storage asks, the cache lending and noting hashes. */
struct ds_match {
	struct ds_core *core;
	struct ds_tree *tree;
	struct ds_cache_state *cache;
	struct ds_reading *reading;
	/* a spilled scan: called with each band as it comes back, its records
	 * from on (dupscan_serve(): the sizes its client wants), or NULL */
	void (*each_band)(void *user, struct ds_tree *t, uint32_t from);
	void *each_band_user;
};

/* ---- result.c: what matching one size group produced, kept until it is
 * committed in group order, so output never depends on the thread count ---- */
struct ds_insert {
	uint32_t rec, cls;      /* cls: the record naming its class */
	uint32_t pair;          /* its hashes, in the result's pairs */
};
/* Inserts in a row of one class and pair: a class's members come together,
 * so an insert costs its record (4 bytes) and a class 12 more, not 12 bytes
 * each (a class of a million copies). */
struct ds_ins_run {
	uint32_t first;         /* its first insert */
	uint32_t cls, pair;
};
struct ds_hash_pair {
	uint64_t partial, full;
};
struct ds_error {
	char *path;
	int code;
};
struct ds_stage_event {
	int stage;
	uint32_t first, count; /* in recs[] */
};
/* Records recs[0..n), held by the caller until the result is committed. */
struct ds_span {
	const uint32_t *recs;
	size_t n;
};
struct ds_result {
	uint32_t *ins;               /* inserted records (ds_result_ins()) */
	size_t nins, capins;
	struct ds_ins_run *runs;     /* each insert's class and pair */
	size_t nruns, capruns;
	struct ds_hash_pair *pairs;  /* the hashes of inserts, each pair once in a row */
	size_t npairs, cappairs;
	struct ds_hashed *notes;     /* hashes for the cache */
	size_t nnotes, capnotes;
	struct ds_proved *proved;    /* proofs for the cache */
	size_t nproved, capproved;
	struct ds_error *err;
	size_t nerr, caperr;
	struct ds_stage_event *stg;
	size_t nstg, capstg;
	uint32_t *recs;
	size_t nrecs, caprecs;
	struct ds_span *settled; /* the groups matched to the end */
	size_t nsettled, capsettled;
	uint64_t files;      /* files of the group, for progress */
	uint64_t bytes;      /* their bytes the matching phase may read (not those the sweep settles) */
	int rc;              /* -ENOMEM or DUPSCAN_E_CANCELED while matching */
};
/* Matching context: the scan, and where a group's effects go. */
struct ds_pool;
struct ds_ctx {
	struct ds_match *s;
	struct ds_result *res;
	struct ds_pool *pool; /* the threads matching runs on, or NULL */
};
void ds_result_clear(struct ds_result *r);
/* The n records of a group matched to the end (recs, not copied: a group
 * of a million files would cost 4 MB here). @return 0 or -ENOMEM. */
int ds_result_settled(struct ds_result *r, const uint32_t *recs, size_t n);
/* Move src's reports to the end of dst's, keeping their order. @return 0 or -ENOMEM. */
int ds_result_take_errors(struct ds_result *dst, struct ds_result *src);
void ds_result_free(struct ds_result *r);
int ds_result_insert(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial, uint64_t full);
/* A member whose full hash nobody read (twins.c: its class proven by extent
 * maps): indexed as any, but nothing of it goes to the cache. */
int ds_result_insert_unhashed(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial);
#define DS_PAIR_UNHASHED (1u << 31) /* on a run's pair: its full hash was not read */
/* Insert i (< r->nins) whole (its pair without DS_PAIR_UNHASHED). */
struct ds_insert ds_result_ins(const struct ds_result *r, size_t i);
/* Was insert i's full hash left unread (ds_result_insert_unhashed())? */
bool ds_result_ins_unhashed(const struct ds_result *r, size_t i);
int ds_result_stage(struct ds_ctx *c, int stage, const uint32_t *recs, size_t n);
/* Hashes worth caching (a no-op without a cache). @return 0 or -ENOMEM. */
int ds_result_note(struct ds_ctx *c, const struct ds_hashed *h);
/* Record rec's proof pf for the cache: logged now (partial, full: its hashes,
 * full when has_full), and kept for the save unless fresh is false (a proof
 * it had, kept as it was). @return 0 or -ENOMEM. */
int ds_result_prove(struct ds_ctx *c, uint32_t rec, const struct ds_proof *pf, bool fresh, uint64_t partial,
		    uint64_t full, bool has_full);
/* A file could not be read: drop it and keep the report for the commit. */
void ds_fail(struct ds_ctx *c, uint32_t i, int code);
void ds_fail_path(struct ds_ctx *c, struct ds_rec *r, const char *path, int code);
/* Apply a group's result: reports, stage callbacks, index inserts, progress.
 * @return 0 or -ENOMEM. */
int ds_result_commit(struct ds_match *s, struct ds_result *r, uint64_t *done, uint64_t total);

/* match.c */
int ds_match(struct ds_match *s);

/* Matching on the pool: work on one group of records (idx[0..n)), its effects into c->res */
typedef void ds_group_fn(struct ds_ctx *c, const uint32_t *idx, size_t n);
/* Run fn over groups on threads threads, committing results in group
 * order. groups[2*g], groups[2*g+1] = start, length in idx. A group fn ran to
 * the end of (no error, no cancel) has its records settled. With key (one
 * per group), groups run on one thread in the order of their keys instead,
 * and are still committed in group order.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_run_groups(struct ds_match *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups, size_t ngroups,
		  uint64_t total, int threads, const uint64_t *key);

#endif /* DUPSCAN_MATCH_RESULT_H */
