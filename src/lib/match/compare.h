/* SPDX-License-Identifier: MIT */
/* match/compare.h: files compared side by side; never installed. */
#ifndef DUPSCAN_MATCH_COMPARE_H
#define DUPSCAN_MATCH_COMPARE_H

#include "cache/member.h"
#include "match/result.h"

/* compare.c: reading files and comparing them byte by byte */

/* ds_open_scanned(), a failure reported through c (but -ENOMEM, returned). */
int ds_open_rec(struct ds_ctx *c, uint32_t i);

/* Partition members (all of one size) into classes of identical content by
 * reading them in lockstep from offset start. When h is given, the bytes read
 * past the first block are fed to state i of h (seeded by the caller:
 * ds_hash_seed()). first_blocks (optional) holds each member's first min(size, DS_BLOCK) bytes
 * at m[i].hidx * block_len. On return each alive member's cls is a class label
 * (labels are member indexes); a member alone in its class is marked not
 * alive. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
/* With partial (their first-block hash), the members are the whole of their
 * bucket, and what the comparison knows goes to the cache's log every
 * DS_CHECKPOINT_BYTES read (a killed run's next goes on from there). */
int ds_lockstep(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		struct ds_hashes *h, const unsigned char *first_blocks, size_t block_len, const uint64_t *partial);
/* ds_lockstep() with the members' classes as given (m[i].cls the index of a
 * member of its class, m[i].alive set): equal before start. */
int ds_lockstep_on(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		   struct ds_hashes *h, const uint64_t *partial);
#define DS_CHECKPOINT_BYTES (32u << 20)

#endif /* DUPSCAN_MATCH_COMPARE_H */
