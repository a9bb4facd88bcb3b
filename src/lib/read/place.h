/* SPDX-License-Identifier: MIT */
/* read/place.h: the first pass's places and what it keeps of each, shared
 * by readorder.c (placing, ordering), passread.c (reading in disk order)
 * and passkeys.c (what a read leaves); never installed. */
#ifndef DUPSCAN_READ_PLACE_H
#define DUPSCAN_READ_PLACE_H

#include "internal.h"
#include "read/read.h"

/* Where a candidate starts, as a (key, position) pair sorted in place
 * (ds_sort_by_key32(): no copy beside the array, the pass's largest): in
 * the key, its stream's number (fp->stream: its disk, then its device, in
 * fp->sbits bits), whether where is an inode number (1: extents first, then
 * inode order), then where (an extent's offset in 512-byte units) in the
 * rest. A key orders the reads, nothing more: a where too large for its
 * bits (past 2^47 sectors or inodes with 65,536 streams) takes their
 * largest value, read in its stream's last place. Positions are distinct,
 * so the order is a total one. */
#define PLACE_SECTOR 9
static inline unsigned place_wbits(const struct ds_first_pass *fp) { return 63 - fp->sbits; }
static inline struct ds_keypos32 place(const struct ds_first_pass *fp, uint32_t stream, bool by_inode, uint64_t where,
				       uint32_t pos)
{
	unsigned w = place_wbits(fp);
	uint64_t v = by_inode ? where : where >> PLACE_SECTOR, most = ((uint64_t)1 << w) - 1;
	return ds_keypos32_of(((uint64_t)stream << 1 | by_inode) << w | (v < most ? v : most), pos);
}
static inline uint32_t place_pos(const struct ds_keypos32 *k) { return k->pos; }
static inline uint32_t place_stream(const struct ds_first_pass *fp, const struct ds_keypos32 *k)
{
	return (uint32_t)(ds_keypos32_key(k) >> place_wbits(fp) >> 1);
}
static inline unsigned place_disk(const struct ds_first_pass *fp, const struct ds_keypos32 *k)
{
	return fp->stream[place_stream(fp, k)].disk;
}
static inline uint16_t place_devi(const struct ds_first_pass *fp, const struct ds_keypos32 *k)
{
	return fp->stream[place_stream(fp, k)].devi;
}

/* Where a place lies on its disk: its first extent's offset (to a sector),
 * or UINT64_MAX for one placed by its inode number. */
static inline uint64_t place_where(const struct ds_first_pass *fp, const struct ds_keypos32 *k)
{
	unsigned w = place_wbits(fp);
	uint64_t key = ds_keypos32_key(k);
	return key >> w & 1 ? UINT64_MAX : (key & (((uint64_t)1 << w) - 1)) << PLACE_SECTOR;
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
void ds_fp_took_head(struct ds_first_pass *fp, struct ds_keypos32 *e, uint32_t p, const unsigned char *buf, size_t len);
/* Entry e (position p) failed with err. */
void ds_fp_failed_at(struct ds_first_pass *fp, struct ds_keypos32 *e, uint32_t p, int err);
/* Read the heads of pl[0..np) (sorted by stream: disk, device; then place). Each
 * spinning disk is one stream, and the disks of a scan are read at the same
 * time: a scan of two disks takes as long as the slower one. A device that
 * is not a spinning disk (in auto mode, beside one) is read in slices by as
 * many threads as are free. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_pass_read_heads(struct ds_reading *s, struct ds_first_pass *fp, struct ds_keypos32 *pl, size_t np);

#endif /* DUPSCAN_READ_PLACE_H */
