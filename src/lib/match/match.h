/* SPDX-License-Identifier: MIT */
/* match.h: what the parts of matching share: a size group's state (match.c),
 * its heads (heads.c), its buckets (buckets.c), settled by full hash
 * (fullhash.c) or with the cache's proofs (trust.c). */
#ifndef DUPSCAN_MATCH_H
#define DUPSCAN_MATCH_H

#include "internal.h"
#include "match/result.h"
#include "match/compare.h"




/* A bucket and what is known of its members, whether their first blocks were
 * read this run or their hashes came from the cache. */
struct bucket {
	const struct ds_match *s;
	struct ds_member *m;
	size_t k;
	uint64_t size, partial;       /* every member's first block hashes to partial */
	const unsigned char *blocks;  /* first blocks by m[].hidx, or NULL */
	size_t blen;
	const uint64_t *full;         /* full hashes by member, known from the cache or the sweep, or NULL */
	const uint32_t *same;         /* settled by the sweep: by member, the first member of its
	                               * class (DS_NONE: in none); or NULL */
	const int *err;               /* with same: by member, why it failed in the sweep, or 0 */
	const struct known *known;    /* with DUPSCAN_OPT_CACHE_TRUST: by member, what is known of
	                               * it, to settle the bucket with proofs; or NULL */
};

/* A member of a bucket settled with proofs: its full hash when known (from the
 * cache, or within its first block). */
struct known {
	uint64_t full;
	bool has_full;
};

/* One size group between its heads (first blocks read, or hashes from the
 * cache) and its buckets: what is known of each file, and scratch for one
 * bucket at a time, sized for the largest. */
struct group {
	struct ds_ctx *c;
	const uint32_t *idx;
	size_t n, blen;
	uint64_t size;
	struct ds_hashed *hv;        /* per file: its hashes */
	bool *got;                   /* per file: hv holds its first-block hash */
	struct ds_keypos32 *bh;      /* the files got (pos: in the group), sorted by first-block hash */
	size_t nb;
	unsigned char *blocks;       /* first blocks by position, when kept */
	bool keep, hold;             /* blocks kept; files held open in fds */
	bool lent;                   /* blocks are the first pass's (ds_fp_group_blocks()) */
	int *fds;
	bool trust, cached, mixed;   /* cache proofs trusted; all / some files' hashes from the cache */
	uint32_t *stidx;             /* mixed: by position, DS_NONE for a file the cache holds */
	struct ds_member *m;         /* the bucket's members */
	uint64_t *full;
	uint32_t *same;
	int *serr;
	struct known *kn;
};


/* heads.c: every file's first-block hash, into g->hv and g->got: from the
 * cache when it holds the group (with trust, the files it holds, the rest
 * read), else read. @return 0 or a negative code. */
int ds_gather_heads(struct group *g);
/* On a spinning disk the cache spares a group only when its hashes settle it alone. */
bool ds_settled_by_cache(const struct ds_match *s, const uint32_t *idx, size_t n);

/* whole.c: with --ignore-metadata, the members of each class c->res holds
 * whose every byte is the same as an earlier one's, noted in the tree
 * (pay.whole). @return 0 or -ENOMEM. */
int ds_whole_classes(struct ds_ctx *c);

/* buckets.c: settle one bucket; its classes go to c->res. */
int ds_match_bucket(struct ds_ctx *c, const struct bucket *b);

/* fullhash.c */
/* Hash record r from byte from to to into state hidx of h (buf: s->core->opt.chunk bytes). */
int ds_hash_range(struct ds_ctx *c, uint32_t ri, struct ds_hashes *h, size_t hidx, uint64_t from,
		  uint64_t to, unsigned char *buf);
/* Record ri's full hash into *full: its first block's hash partial for a
 * file within one block, else the rest read now (h: a state to use, buf:
 * s->core->opt.chunk bytes). @return 0 (a file that fails is dropped and
 * reported; *full is then meaningless) or -ENOMEM. */
int ds_hash_rest(struct ds_ctx *c, uint32_t ri, uint64_t partial, struct ds_hashes *h, unsigned char *buf,
		 uint64_t *full);
/* -Q: classes by full hash alone. */
int ds_match_quick(struct ds_ctx *c, const struct bucket *b);
/* By full hash, equal ones compared byte by byte. */
int ds_match_by_full(struct ds_ctx *c, const struct bucket *b);
/* A bucket of which nothing is known past its first blocks (b->full may be
 * NULL): side by side when its files can all be open at once, else by full
 * hash. whole: b->m is the whole bucket, not representatives of it. */
int ds_match_plain(struct ds_ctx *c, const struct bucket *b, bool whole);

/* proofs.c */
/* A proven class's first member: its record, and where it is in its bucket. */
struct ds_by_rec {
	uint32_t rec, x;
};
/* A bucket's members by the proofs the cache holds for them, and one
 * representative per class (and per member in none) to compare. */
struct proven {
	size_t k;
	uint64_t *cls;          /* per member: its proven class, 0 for none */
	struct ds_proof *pf;    /* per member: its proof, when cls */
	uint32_t *head;         /* per member: its class' first member, or itself */
	struct ds_by_rec *heads;   /* the proven classes' first members, by record */
	size_t nheads;
	struct ds_member *rm;   /* the representatives */
	uint32_t *mem;          /* per representative: its member; scratch later */
	uint64_t *rfull;        /* per representative: its full hash */
	size_t nr;
	bool *placed;           /* per member: its class joined one of this run */
};

int ds_proven_alloc(struct proven *p, size_t k);
void ds_proven_free(struct proven *p);
/* Members m[0..k) by the proofs the cache holds for them (p allocated for k).
 * @return 0 or -ENOMEM. */
int ds_group_proven(const struct ds_match *s, const struct ds_member *m, size_t k, struct proven *p);
/* Do the proofs alone settle the bucket? @return 1, 0 or -ENOMEM. */
int ds_proofs_cover(const struct proven *p);
/* After bucket b is settled (inserts from first on): its proofs for the
 * cache's log and file. @return 0 or -ENOMEM. */
int ds_note_proofs(struct ds_ctx *c, const struct bucket *b, size_t first);

/* trust.c */
/* A bucket settled with the cache's proofs (b->known). */
int ds_match_trusted(struct ds_ctx *c, const struct bucket *b);

#endif /* DUPSCAN_MATCH_H */
