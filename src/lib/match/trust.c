/* SPDX-License-Identifier: MIT */
/* trust.c: with DUPSCAN_OPT_CACHE_TRUST, a bucket settled with the proofs of
 * the cache (proofs.c): proven classes stand unread, new files join them by
 * one comparison, and a comparison a killed run had under way goes on from
 * its last checkpoint. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "match.h"
#include "match/result.h"
#include "match/compare.h"
#include "cache/cache_run.h"

static int cmp_by_rec_plain(const void *pa, const void *pb)
{
	const struct ds_by_rec *a = pa, *b = pb;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static int cmp_by_rec(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_by_rec_plain(pa, pb);
}

/* Members in their class by a proof: flagged, and their class indexed as the
 * class named cls (the whole class, or the rest of it after its first). */
static int insert_proven(struct ds_ctx *c, const struct bucket *b, const uint32_t *mem, size_t n, uint32_t cls,
			 uint64_t full)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct ds_rec *r = ds_rec(c->s->tree, b->m[mem[i]].rec);
		r->flags |= DS_F_TRUSTED;
		if (b->m[mem[i]].rec != cls)
			rc = ds_result_insert(c, b->m[mem[i]].rec, cls, b->partial, full);
	}
	return rc;
}

/* Each proven class joins the class its first member joined (inserts from
 * first to end). */
static int join_proven(struct ds_ctx *c, const struct bucket *b, struct proven *p, size_t first, size_t end)
{
	int rc = ds_sort(p->heads, p->nheads, sizeof(*p->heads), cmp_by_rec, NULL);
	for (size_t i = first; rc == 0 && i < end; i++) {
		struct ds_insert in = ds_result_ins(c->res, i);
		struct ds_by_rec key = { in.rec, 0 };
		const struct ds_by_rec *h = bsearch(&key, p->heads, p->nheads, sizeof(*p->heads), cmp_by_rec_plain);
		if (!h)
			continue;
		/* the first member is in already, maybe joined to another's class */
		size_t n = 0;
		for (size_t x = 0; x < p->k; x++)
			if (p->head[x] == h->x && x != h->x)
				p->mem[n++] = (uint32_t)x;
		ds_rec(c->s->tree, in.rec)->flags |= DS_F_TRUSTED;
		rc = insert_proven(c, b, p->mem, n, in.cls, c->res->pairs[in.pair].full);
		p->placed[h->x] = true;
	}
	return rc;
}

/* A proven class nothing joined stands alone, without its first member when
 * that one failed to read. */
static int stand_alone(struct ds_ctx *c, const struct bucket *b, struct proven *p)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < p->nheads; i++) {
		if (p->placed[p->heads[i].x])
			continue;
		size_t n = 0;
		for (size_t x = 0; x < p->k; x++)
			if (p->head[x] == p->heads[i].x && !(ds_rec(c->s->tree, b->m[x].rec)->flags & DS_F_DROPPED))
				p->mem[n++] = (uint32_t)x;
		if (n < 2)
			continue;
		uint32_t named = b->m[p->mem[0]].rec;
		rc = insert_proven(c, b, p->mem, n, named, b->known[p->mem[0]].full);
		if (rc == 0)
			rc = ds_result_insert(c, named, named, b->partial, b->known[p->mem[0]].full);
	}
	return rc;
}

/* The representatives compared: by their full hashes when all are known (a
 * proven class always knows its own), else as a bucket nothing is known of. */
static int match_representatives(struct ds_ctx *c, const struct bucket *b, struct proven *p)
{
	bool all = true;
	for (size_t j = 0; j < p->nr; j++) {
		const struct known *kn = &b->known[p->mem[j]];
		all = all && kn->has_full;
		p->rfull[j] = kn->full;
	}
	struct bucket rb = { c->s, p->rm, p->nr, b->size, b->partial, NULL, 0, all ? p->rfull : NULL, NULL, NULL, NULL };
	return all ? ds_match_by_full(c, &rb) : ds_match_plain(c, &rb, p->nr == b->k);
}

/* A bucket a killed run was comparing side by side (its checkpoints:
 * compare.c): every member in play then (in[i], pre[i]) at one offset of
 * one run, or proven alone by that run. @return that offset, or 0. */
static uint64_t resumable(const struct ds_match *s, const struct bucket *b, const struct proven *p, struct ds_prefix *pre,
			  bool *in)
{
	uint64_t x = 0;
	int64_t at = 0;
	size_t n = 0;
	for (size_t i = 0; i < b->k; i++) {
		in[i] = ds_cache_prefix(s->cache, b->m[i].rec, &pre[i]);
		if (in[i] && n++ > 0 && (pre[i].x != x || pre[i].at != at))
			return 0;
		if (in[i]) {
			x = pre[i].x;
			at = pre[i].at;
		}
	}
	for (size_t i = 0; n >= 2 && i < b->k; i++) {
		if (in[i])
			continue;
		/* proven alone by that run (a member of a class it proved, whose
		 * others' records the kill cut off, is not) */
		if (!p->cls[i] || !p->pf[i].alone || p->pf[i].at != at || !p->pf[i].apart)
			return 0;
	}
	return n >= 2 ? x : 0;
}

/* The members in play of a resumed bucket, m[0..n), in their groups (cls:
 * the index of the first of its group); each group's hash state rebuilt from
 * the bytes up to x of one member (the others were equal to it there).
 * @return n, or -ENOMEM. */
static long resumed_members(struct ds_ctx *c, const struct bucket *b, const struct ds_prefix *pre, const bool *in,
			    uint64_t x, struct ds_member *m, struct ds_hashes *h, unsigned char *buf)
{
	const struct ds_match *s = c->s;
	struct ds_keypos *lab = malloc(b->k * sizeof(*lab));
	if (!lab)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < b->k; i++)
		if (in[i]) {
			lab[n] = (struct ds_keypos){ pre[i].label, n };
			m[n] = (struct ds_member){ b->m[i].rec, -1, (uint32_t)n, (uint32_t)n, true };
			n++;
		}
	ds_sort_by_key(lab, n);
	int rc = 0;
	for (size_t i = 0, j; rc == 0 && i < n; i = j) {
		size_t first = n;
		for (j = i; j < n && lab[j].key == lab[i].key; j++) {
			size_t y = lab[j].pos;
			if (first < n) {
				ds_hash_copy(h, y, first);
				m[y].cls = (uint32_t)first;
				continue;
			}
			ds_hash_seed(h, y, b->partial);
			if (x > DS_BLOCK)
				rc = ds_hash_range(c, m[y].rec, h, y, DS_BLOCK, x, buf);
			if (ds_rec(s->tree, m[y].rec)->flags & DS_F_DROPPED)
				m[y].alive = false; /* reported: the next of its group stands for it */
			else
				first = y;
		}
	}
	free(lab);
	return rc ? rc : (long)n;
}

/* Going on with a bucket a killed run was comparing side by side, from offset
 * x: its members in play compared from there, those proven alone aside.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
static int resume_side_by_side(struct ds_ctx *c, const struct bucket *b, const struct ds_prefix *pre, const bool *in,
			       uint64_t x)
{
	struct ds_member *m = malloc(b->k * sizeof(*m));
	struct ds_hashes *h = ds_hashes_new(b->k);
	unsigned char *buf = ds_big_alloc(c->s->core->opt.chunk);
	long n = m && h && buf ? resumed_members(c, b, pre, in, x, m, h, buf) : -ENOMEM;
	int rc = n < 0 ? (int)n : ds_lockstep_on(c, m, (size_t)n, b->size, x, h, &b->partial);
	for (long i = 0; rc == 0 && i < n; i++)
		if (m[i].alive)
			rc = ds_result_insert(c, m[i].rec, m[m[i].cls].rec, b->partial, ds_hash_digest(h, (size_t)i));
	ds_big_free(buf, buf ? c->s->core->opt.chunk : 0);
	ds_hashes_free(h);
	free(m);
	return rc;
}

/* DUPSCAN_OPT_CACHE_TRUST: the members whose proofs hold and name one class
 * stand as one file, their first. A bucket the proofs cover (ds_proofs_cover())
 * is settled without a read; one a killed run was comparing goes on from its
 * checkpoint (resumable()). Otherwise it is settled among the classes' first
 * members and the other members (match_representatives()), and each proven
 * class follows its first member. */
int ds_match_trusted(struct ds_ctx *c, const struct bucket *b)
{
	struct proven p = { 0 };
	int rc = ds_proven_alloc(&p, b->k);
	if (rc == 0)
		rc = ds_group_proven(c->s, b->m, b->k, &p);
	int covered = rc == 0 ? ds_proofs_cover(&p) : 0;
	if (covered < 0)
		rc = covered;
	struct ds_prefix *pre = rc == 0 && !covered ? malloc(b->k * sizeof(*pre)) : NULL;
	bool *in = pre ? malloc(b->k * sizeof(*in)) : NULL;
	if (rc == 0 && !covered && !in)
		rc = -ENOMEM;
	uint64_t x = in ? resumable(c->s, b, &p, pre, in) : 0;
	if (rc == 0 && x) {
		rc = resume_side_by_side(c, b, pre, in, x);
	} else if (rc == 0 && !covered) {
		size_t first = c->res->nins;
		rc = match_representatives(c, b, &p);
		if (rc == 0)
			rc = join_proven(c, b, &p, first, c->res->nins);
	}
	if (rc == 0 && !x)
		rc = stand_alone(c, b, &p);
	free(in);
	free(pre);
	ds_proven_free(&p);
	return rc;
}
