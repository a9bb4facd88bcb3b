/* SPDX-License-Identifier: MIT */
/* match/twins.h: files one content by their extent maps, without a read
 * (twins.c); never installed. */
#ifndef DUPSCAN_MATCH_TWINS_H
#define DUPSCAN_MATCH_TWINS_H

#include "match/match.h"

struct ds_twin {
	uint32_t rec, first; /* rec's bytes are first's, proven by their extent maps */
};
struct ds_twinset {
	struct ds_twin *v;
	size_t n, cap;
};
/* Take the twins out of bucket members m[0..k) (full and kn, when given,
 * kept in step). @return how many members are left, in their order. */
size_t ds_bucket_twins(struct ds_ctx *c, struct ds_member *m, size_t k, uint64_t *full, struct known *kn,
		       struct ds_twinset *tw);
/* The same for the twins the first pass found (ds_pass_twins()): the
 * members are positions base + hidx of its order. */
size_t ds_pass_twins_take(struct ds_ctx *c, size_t base, struct ds_member *m, size_t k, uint64_t *full,
			  struct known *kn, struct ds_twinset *tw);
/* After the bucket is settled (its inserts from first_ins on): each twin
 * into its first's class, or a class of their own where the first is in none
 * (partial: the bucket's first-block hash). @return 0 or -ENOMEM. */
int ds_twins_join(struct ds_ctx *c, size_t first_ins, const struct ds_twinset *tw, uint64_t partial);

#endif /* DUPSCAN_MATCH_TWINS_H */
