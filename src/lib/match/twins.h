/* SPDX-License-Identifier: MIT */
/* match/twins.h: files one content by their extent maps, without a read
 * (twins.c); never installed. */
#ifndef DUPSCAN_MATCH_TWINS_H
#define DUPSCAN_MATCH_TWINS_H

#include "match/match.h"

struct ds_twin {
	uint32_t rec, first; /* rec's bytes are first's, proven by their extent maps */
	int fd;              /* rec's, held from its first read (closed by ds_bucket_twins()) */
};
struct ds_twinset {
	struct ds_twin *v;
	size_t n, cap;
};
/* Which devices of the candidates order[0..n) may share blocks, asked
 * once each by statfs(2) on a file's path, before matching (none in a scan
 * across hosts, or with -Q or -TT). @return 0 or -ENOMEM. */
int ds_twins_devices(dupscan_scan *s, const uint32_t *order, size_t n);
void ds_twins_devices_free(dupscan_scan *s);
/* May any candidate's filesystem share blocks (else no bucket is asked)? */
bool ds_twins_any(const dupscan_scan *s);
/* Take the twins out of bucket members m[0..k) (full and kn, when given,
 * kept in step). @return how many members are left, in their order. */
size_t ds_bucket_twins(struct ds_ctx *c, struct ds_member *m, size_t k, uint64_t *full, struct known *kn,
		       struct ds_twinset *tw);
/* After the bucket is settled (its inserts from first_ins on): each twin
 * into its first's class, or a class of their own where the first is in none
 * (partial: the bucket's first-block hash). @return 0 or -ENOMEM. */
int ds_twins_join(struct ds_ctx *c, size_t first_ins, const struct ds_twinset *tw, uint64_t partial);

#endif /* DUPSCAN_MATCH_TWINS_H */
