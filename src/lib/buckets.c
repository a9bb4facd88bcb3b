/* SPDX-License-Identifier: MIT */
/* buckets.c: settling one bucket (files of one size with equal first-block
 * hashes) into classes: side by side, by full hash, or as the sweep settled it;
 * each class told to the stage callback. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "match.h"

static int cmp_insert_cls(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_insert *a = pa, *b = pb;
	return a->cls < b->cls ? -1 : a->cls > b->cls;
}

/* After a bucket is settled: each class it added (inserts from first on) is a
 * full-hash match, told to the stage callback at commit. */
static int stage_classes(struct ds_ctx *c, size_t first)
{
	dupscan_scan *s = c->s;
	size_t n = c->res->nins - first;
	if (!s->cb.on_stage || n < 2)
		return 0;
	struct ds_insert *ins = malloc(n * sizeof(*ins));
	uint32_t *ri = malloc(n * sizeof(*ri));
	int rc = ins && ri ? 0 : -ENOMEM;
	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			ins[i] = ds_result_ins(c->res, first + i);
		rc = ds_sort(ins, n, sizeof(*ins), cmp_insert_cls, NULL);
	}
	for (size_t i = 0; rc == 0 && i < n;) {
		size_t j = i, nr = 0;
		for (; j < n && ins[j].cls == ins[i].cls; j++)
			if (!(ds_rec(s, ins[j].rec)->flags & DS_F_DROPPED))
				ri[nr++] = ins[j].rec;
		rc = ds_result_stage(c, DUPSCAN_STAGE_FULL, ri, nr);
		i = j;
	}
	free(ri);
	free(ins);
	return rc;
}

/* Index the alive members of a lockstep result (their full hashes in h by
 * member, or NULL within one block); a class is named by the record of its
 * first member. */
static int index_members(struct ds_ctx *c, const struct bucket *b, const struct ds_hashes *h)
{
	for (size_t i = 0; i < b->k; i++) {
		const struct ds_member *m = &b->m[i];
		if (!m->alive)
			continue;
		uint64_t full = h ? ds_hash_digest(h, i) : b->partial;
		int rc = ds_result_insert(c, m->rec, b->m[m->cls].rec, b->partial, full);
		if (rc)
			return rc;
	}
	return 0;
}

/* A bucket the sweep settled (sweep.c): its failures reported at its turn,
 * its classes indexed as a side by side comparison would have named them. */
static int from_sweep(struct ds_ctx *c, const struct bucket *b)
{
	for (size_t x = 0; x < b->k; x++)
		if (b->err[x])
			ds_fail(c, b->m[x].rec, b->err[x]);
	int rc = 0;
	for (size_t x = 0; rc == 0 && x < b->k; x++)
		if (b->same[x] != DS_NONE)
			rc = ds_result_insert(c, b->m[x].rec, b->m[b->same[x]].rec, b->partial, b->full[x]);
	return rc;
}

/* Side by side, hashing as it goes: one read of each file. whole: its
 * members are the whole bucket (not representatives), so what the comparison
 * knows of them is worth a checkpoint. */
static int side_by_side(struct ds_ctx *c, const struct bucket *b, bool whole)
{
	uint64_t start = b->blocks ? (b->size > DS_BLOCK ? DS_BLOCK : b->size) : 0;
	struct ds_hashes *h = b->size > DS_BLOCK ? ds_hashes_new(b->k) : NULL;
	if (b->size > DS_BLOCK && !h)
		return -ENOMEM;
	for (size_t x = 0; h && x < b->k; x++)
		ds_hash_seed(h, x, b->partial);
	int rc = ds_lockstep(c, b->m, b->k, b->size, start, h, b->blocks, b->blen, whole ? &b->partial : NULL);
	if (rc == 0)
		rc = index_members(c, b, h);
	ds_hashes_free(h);
	return rc;
}

/* Settle one bucket: its classes go to c->res. */
int ds_match_bucket(struct ds_ctx *c, const struct bucket *b)
{
	dupscan_scan *s = c->s;
	uint32_t *ri = malloc(b->k * sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	for (size_t x = 0; x < b->k; x++)
		ri[x] = b->m[x].rec;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_PARTIAL, ri, b->k);
	free(ri);
	if (rc)
		return rc;
	if (s->opt.partial_only) {
		for (size_t x = 0; x < b->k && rc == 0; x++)
			rc = ds_result_insert(c, b->m[x].rec, b->m[0].rec, b->partial, b->partial);
		return rc;
	}
	size_t first = c->res->nins;
	if (b->same) {
		rc = from_sweep(c, b);
	} else if (b->known) {
		rc = ds_match_trusted(c, b);
	} else if (s->opt.quick) {
		rc = ds_match_quick(c, b);
	} else {
		rc = ds_match_plain(c, b, true);
	}
	if (rc == 0)
		rc = ds_note_proofs(c, b, first);
	if (rc == 0)
		rc = stage_classes(c, first);
	return rc;
}

int ds_match_plain(struct ds_ctx *c, const struct bucket *b, bool whole)
{
	if (!b->full && b->k <= c->s->reading.max_open)
		return side_by_side(c, b, whole);
	return ds_match_by_full(c, b);
}
