/* SPDX-License-Identifier: MIT */
/* passkeys.c: what the first pass keeps of a position it read: how much it
 * reads, its first block when its group's are kept, its key (the first
 * block's hash, or why it failed) and the hash of the rest of its head.
 * Placing (readorder.c) and reading in disk order (passread.c) both take
 * it from here. */
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "read/place.h"

size_t ds_fp_head_len(const struct ds_first_pass *fp, uint64_t size)
{
	size_t len = fp->head ? DS_HDD_HEAD : DS_BLOCK;
	return size < len ? (size_t)size : len;
}

size_t ds_fp_read_len(const struct ds_first_pass *fp, size_t p, uint64_t size)
{
	size_t len = ds_fp_head_len(fp, size);
	return fp->state[p] & DS_FP_LONE && len > DS_BLOCK ? DS_BLOCK : len;
}

/* The kept group position p is in, or NULL. */
static const struct ds_fp_kept *kept_group(const struct ds_first_pass *fp, size_t p)
{
	size_t lo = 0, hi = fp->nkept;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p < fp->kept[mid].first)
			hi = mid;
		else if (p >= (size_t)fp->kept[mid].first + fp->kept[mid].n)
			lo = mid + 1;
		else
			return &fp->kept[mid];
	}
	return NULL;
}

const unsigned char *ds_fp_block(const struct ds_first_pass *fp, size_t p)
{
	const struct ds_fp_kept *k = kept_group(fp, p);
	return k ? fp->blocks + k->base + (p - k->first) * k->blen : NULL;
}

unsigned char *ds_fp_group_blocks(const struct ds_first_pass *fp, size_t first, size_t n)
{
	const struct ds_fp_kept *k = kept_group(fp, first);
	return k && k->first == first && k->n == n ? fp->blocks + k->base : NULL;
}

void ds_fp_group_done(struct ds_first_pass *fp, size_t first, size_t n)
{
	const struct ds_fp_kept *k = kept_group(fp, first);
	if (k && k->first == first && k->n == n)
		ds_big_release(fp->blocks, fp->capbytes, k->base, k->base + (size_t)n * k->blen);
	ds_fp_keys_taken(fp, first, n);
}

void ds_fp_keys_taken(struct ds_first_pass *fp, size_t first, size_t n)
{
	/* once they are by position (a page shared with a group still to come
	 * stays) */
	if (fp->by_pos)
		ds_big_release(fp->key, fp->entbytes, first * sizeof(*fp->key), (first + n) * sizeof(*fp->key));
}

void ds_fp_took_head(struct ds_first_pass *fp, struct ds_keypos32 *e, uint32_t p, const unsigned char *buf,
		     size_t len)
{
	size_t blen = len < DS_BLOCK ? len : DS_BLOCK;
	if (fp->head)
		fp->head[p] = ds_hash_oneshot(buf + blen, len - blen);
	const unsigned char *at = ds_fp_block(fp, p);
	if (at)
		memcpy((unsigned char *)at, buf, blen);
	*e = ds_keypos32_of(ds_hash_oneshot(buf, blen), p);
	fp->state[p] |= DS_FP_GOT;
}

void ds_fp_failed_at(struct ds_first_pass *fp, struct ds_keypos32 *e, uint32_t p, int err)
{
	*e = ds_keypos32_of((uint64_t)(int64_t)err, p);
	fp->state[p] = (unsigned char)((fp->state[p] & ~DS_FP_GOT) | DS_FP_FAILED);
}
