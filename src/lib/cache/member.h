/* SPDX-License-Identifier: MIT */
/* cache/member.h: a member of a bucket being compared (the cache's log
 * keeps a comparison's members as checkpoints): here, below matching, which
 * compares them, so both see it from above; never installed. */
#ifndef DUPSCAN_CACHE_MEMBER_H
#define DUPSCAN_CACHE_MEMBER_H

#include <stdint.h>

struct ds_member {
	uint32_t rec;
	int fd;
	uint32_t hidx;  /* its position in its group: where its first block is kept, and its place in the
	                 * first pass's arrays (hash states go by member: ds_lockstep()) */
	uint32_t cls : 31;   /* class label while partitioning: a member's index (fewer than DS_OUTSIDE) */
	uint32_t alive : 1;  /* with it, 16 bytes, not 20: a bucket of a million copies holds one each */
};
_Static_assert(sizeof(struct ds_member) == 16, "a member is 16 bytes");

#endif /* DUPSCAN_CACHE_MEMBER_H */
