/* SPDX-License-Identifier: MIT */
/* read/place.h: the first pass's places and what it keeps of each, shared
 * by readorder.c (placing, ordering), passread.c (reading in disk order)
 * and passkeys.c (what a read leaves); never installed. */
#ifndef DUPSCAN_READ_PLACE_H
#define DUPSCAN_READ_PLACE_H

#include "internal.h"
#include "read/read.h"

/* Where a candidate starts, as a (key, position) pair sorted in place
 * (ds_sort_by_key(): no copy beside the array, the pass's largest): in key,
 * its disk's number (15 bits), its record's device index (16), whether where
 * is an inode number (1: extents first, then inode order) and where's high
 * half; in position, where's low half and its position in order. Positions
 * are distinct, so the order is a total one. */
static inline struct ds_keypos place(unsigned disk, uint16_t devi, bool by_inode, uint64_t where, uint32_t pos)
{
	return (struct ds_keypos){ (uint64_t)disk << 49 | (uint64_t)devi << 33 | (uint64_t)by_inode << 32 | where >> 32,
				   (where & 0xFFFFFFFFu) << 32 | pos };
}
static inline uint32_t place_pos(const struct ds_keypos *k) { return (uint32_t)k->pos; }
static inline unsigned place_disk(const struct ds_keypos *k) { return (unsigned)(k->key >> 49); }
static inline uint16_t place_devi(const struct ds_keypos *k) { return (uint16_t)(k->key >> 33); }

/* Where a place lies on its disk: its first extent's offset, or UINT64_MAX
 * for one placed by its inode number. */
static inline uint64_t place_where(const struct ds_keypos *k)
{
	return k->key >> 32 & 1 ? UINT64_MAX : (k->key & 0xFFFFFFFFu) << 32 | k->pos >> 32;
}

/* passkeys.c: how much of a file of size bytes the pass reads: its first
 * block, and on to DS_HDD_HEAD when something is swept after it (what the
 * head reads on costs little beside the seek that brought it there). */
size_t ds_fp_head_len(const struct ds_first_pass *fp, uint64_t size);
/* What the pass reads of position p: its head, or the first block alone of
 * a file nothing in its group is to be told from (DS_FP_LONE). */
size_t ds_fp_read_len(const struct ds_first_pass *fp, size_t p, uint64_t size);
/* The head of position p was read into buf: its entry e takes the first
 * block's hash, and its group's room the first block when kept; the hash of
 * the rest of the head goes to fp->head. */
void ds_fp_took_head(struct ds_first_pass *fp, struct ds_keypos *e, uint32_t p, const unsigned char *buf, size_t len);
/* Entry e (position p) failed with err. */
void ds_fp_failed_at(struct ds_first_pass *fp, struct ds_keypos *e, uint32_t p, int err);
/* Read the heads of pl[0..np) (sorted by disk, device, then place). Each
 * spinning disk is one stream, and the disks of a scan are read at the same
 * time: a scan of two disks takes as long as the slower one. A device that
 * is not a spinning disk (in auto mode, beside one) is read in slices by as
 * many threads as are free. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_pass_read_heads(struct ds_reading *s, struct ds_first_pass *fp, struct ds_keypos *pl, size_t np);

#endif /* DUPSCAN_READ_PLACE_H */
