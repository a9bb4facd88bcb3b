/* SPDX-License-Identifier: MIT */
/* buckets.c: settling one bucket (files of one size with equal first-block
 * hashes) into classes: by reading it (fullhash.c), with the cache's proofs
 * (trust.c), or as the sweep settled it; each class told to the stage
 * callback, and what it proves to the cache (proofs.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "match.h"
#include "match/result.h"

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
	struct ds_match *s = c->s;
	size_t n = c->res->nins - first;
	if (!s->core->cb.on_stage || n < 2)
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
			if (!(ds_rec(s->tree, ins[j].rec)->flags & DS_F_DROPPED))
				ri[nr++] = ins[j].rec;
		rc = ds_result_stage(c, DUPSCAN_STAGE_FULL, ri, nr);
		i = j;
	}
	free(ri);
	free(ins);
	return rc;
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

/* Settle one bucket: its classes go to c->res. */
int ds_match_bucket(struct ds_ctx *c, const struct bucket *b)
{
	struct ds_match *s = c->s;
	uint32_t *ri = malloc(b->k * sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	for (size_t x = 0; x < b->k; x++)
		ri[x] = b->m[x].rec;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_PARTIAL, ri, b->k);
	free(ri);
	if (rc)
		return rc;
	if (s->core->opt.partial_only) {
		for (size_t x = 0; x < b->k && rc == 0; x++)
			rc = ds_result_insert(c, b->m[x].rec, b->m[0].rec, b->partial, b->partial);
		return rc;
	}
	size_t first = c->res->nins;
	if (b->same) {
		rc = from_sweep(c, b);
	} else if (b->known) {
		rc = ds_match_trusted(c, b);
	} else if (s->core->opt.quick) {
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
