/* SPDX-License-Identifier: MIT */
/* trust.c: with DUPSCAN_OPT_CACHE_TRUST, a bucket settled with the proofs of
 * the cache: proven classes stand unread, new files join them by one
 * comparison; and full hashes finished for the next trusting run. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "match.h"

struct by_rec {
	uint32_t rec, x;
};

static int cmp_u32_plain(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

static int cmp_u32(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_u32_plain(pa, pb);
}

static int cmp_by_rec_plain(const void *pa, const void *pb)
{
	const struct by_rec *a = pa, *b = pb;
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
		struct ds_rec *r = ds_rec(c->s, b->m[mem[i]].rec);
		r->flags |= DS_F_TRUSTED;
		if (b->m[mem[i]].rec != cls)
			rc = ds_result_insert(c, b->m[mem[i]].rec, cls, b->partial, full);
	}
	return rc;
}

/* A bucket settled with proofs: its members by proven class, and one
 * representative per class (and per member in none) to compare. */
struct proven {
	size_t k;
	uint64_t *cls;          /* per member: its proven class, 0 for none */
	uint32_t *head;         /* per member: its class' first member, or itself */
	struct by_rec *heads;   /* the proven classes' first members, by record */
	size_t nheads;
	struct ds_member *rm;   /* the representatives */
	uint32_t *mem;          /* per representative: its member; scratch later */
	uint64_t *rfull;        /* per representative: its full hash */
	size_t nr;
	bool *placed;           /* per member: its class joined one of this run */
};

static int proven_alloc(struct proven *p, size_t k)
{
	p->k = k;
	p->cls = malloc(k * sizeof(*p->cls));
	p->head = malloc(k * sizeof(*p->head));
	p->heads = malloc(k * sizeof(*p->heads));
	p->rm = malloc(k * sizeof(*p->rm));
	p->mem = malloc(k * sizeof(*p->mem));
	p->rfull = malloc(k * sizeof(*p->rfull));
	p->placed = calloc(k, sizeof(*p->placed));
	return p->cls && p->head && p->heads && p->rm && p->mem && p->rfull && p->placed ? 0 : -ENOMEM;
}

static void proven_free(struct proven *p)
{
	free(p->placed);
	free(p->rfull);
	free(p->mem);
	free(p->rm);
	free(p->heads);
	free(p->head);
	free(p->cls);
}

/* Members by proven class (sorted by class number, then order): each class
 * stands as its first member; members in none stand for themselves. */
static int group_proven(const dupscan_scan *s, const struct bucket *b, struct proven *p)
{
	struct ds_keypos *sub = malloc(p->k * sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	size_t nsub = 0;
	for (size_t x = 0; x < p->k; x++) {
		int64_t at;
		if (!ds_cache_proof(s, b->m[x].rec, &p->cls[x], &at))
			p->cls[x] = 0;
		p->head[x] = (uint32_t)x;
		if (p->cls[x])
			sub[nsub++] = (struct ds_keypos){ p->cls[x], (uint32_t)x };
	}
	ds_sort_by_key(sub, nsub);
	for (size_t i = 1; i < nsub; i++)
		if (sub[i].key == sub[i - 1].key)
			p->head[sub[i].pos] = p->head[sub[i - 1].pos];
	free(sub);
	for (size_t x = 0; x < p->k; x++) {
		if (p->head[x] != x)
			continue;
		if (p->cls[x])
			p->heads[p->nheads++] = (struct by_rec){ b->m[x].rec, (uint32_t)x };
		p->rm[p->nr] = (struct ds_member){ b->m[x].rec, -1, (uint32_t)p->nr, 0, true };
		p->mem[p->nr++] = (uint32_t)x;
	}
	return 0;
}

/* The representatives' full hashes: known (a proven member always has one),
 * or read now and noted, so the next run need not read them. */
static int hash_representatives(struct ds_ctx *c, const struct bucket *b, struct proven *p)
{
	dupscan_scan *s = c->s;
	struct ds_hashes *hs = ds_hashes_new(1);
	unsigned char *buf = ds_big_alloc(s->opt.chunk);
	int rc = hs && buf ? 0 : -ENOMEM;
	for (size_t j = 0; rc == 0 && j < p->nr; j++) {
		const struct known *kn = &b->known[p->mem[j]];
		struct ds_rec *r = ds_rec(s, p->rm[j].rec);
		if (kn->has_full) {
			p->rfull[j] = kn->full;
			continue;
		}
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		rc = ds_hash_rest(c, p->rm[j].rec, b->partial, hs, buf, &p->rfull[j]);
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ p->rm[j].rec, true, false, b->partial, p->rfull[j] });
	}
	ds_big_free(buf, buf ? s->opt.chunk : 0);
	ds_hashes_free(hs);
	return rc;
}

/* Each proven class joins the class its first member joined (inserts from
 * first to end). */
static int join_proven(struct ds_ctx *c, const struct bucket *b, struct proven *p, size_t first, size_t end)
{
	int rc = ds_sort(p->heads, p->nheads, sizeof(*p->heads), cmp_by_rec, NULL);
	for (size_t i = first; rc == 0 && i < end; i++) {
		struct ds_insert in = ds_result_ins(c->res, i);
		struct by_rec key = { in.rec, 0 };
		const struct by_rec *h = bsearch(&key, p->heads, p->nheads, sizeof(*p->heads), cmp_by_rec_plain);
		if (!h)
			continue;
		/* the first member is in already, maybe joined to another's class */
		size_t n = 0;
		for (size_t x = 0; x < p->k; x++)
			if (p->head[x] == h->x && x != h->x)
				p->mem[n++] = (uint32_t)x;
		ds_rec(c->s, in.rec)->flags |= DS_F_TRUSTED;
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
			if (p->head[x] == p->heads[i].x && !(ds_rec(c->s, b->m[x].rec)->flags & DS_F_DROPPED))
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

/* DUPSCAN_OPT_CACHE_TRUST: the members whose proofs hold and name one class
 * stand as one file, their first; the bucket is settled among those and the
 * other members (full hashes first, known or read, then byte comparison of
 * equal ones with ds_match_by_full()), and each proven class follows its first
 * member. A bucket of one proven class reads nothing. */
int ds_match_trusted(struct ds_ctx *c, const struct bucket *b)
{
	struct proven p = { 0 };
	int rc = proven_alloc(&p, b->k);
	if (rc == 0)
		rc = group_proven(c->s, b, &p);
	if (rc == 0 && p.nr == 1) {
		/* one proven class and nothing else: no read */
		for (size_t x = 0; x < b->k; x++)
			p.head[x] = (uint32_t)x;
		rc = insert_proven(c, b, p.head, b->k, b->m[0].rec, b->known[0].full);
		if (rc == 0)
			rc = ds_result_insert(c, b->m[0].rec, b->m[0].rec, b->partial, b->known[0].full);
	} else if (rc == 0) {
		rc = hash_representatives(c, b, &p);
		size_t first = c->res->nins;
		struct bucket rb = { c->s, p.rm, p.nr, b->size, b->partial, NULL, 0, p.rfull, NULL, NULL, NULL };
		if (rc == 0)
			rc = ds_match_by_full(c, &rb);
		if (rc == 0)
			rc = join_proven(c, b, &p, first, c->res->nins);
		if (rc == 0)
			rc = stand_alone(c, b, &p);
	}
	proven_free(&p);
	return rc;
}

/* With DUPSCAN_OPT_CACHE_TRUST: the members of a settled bucket that joined no
 * class and whose full hash is unknown (told apart before their end) are
 * read to their end and their full hashes noted, so a later trusted run need not read them. m[x] is
 * in a class when an insert from first on names it. @return 0 or a negative code. */
int ds_finish_hashes(struct ds_ctx *c, const struct ds_member *m, size_t k, const bool *has_full,
			 uint64_t partial, size_t first)
{
	dupscan_scan *s = c->s;
	size_t nin = c->res->nins - first;
	uint32_t *in = malloc((nin ? nin : 1) * sizeof(*in));
	unsigned char *buf = NULL;
	struct ds_hashes *h = NULL;
	int rc = in ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nin; i++)
		in[i] = c->res->ins[first + i];
	if (rc == 0)
		rc = ds_sort(in, nin, sizeof(*in), cmp_u32, NULL);
	for (size_t x = 0; rc == 0 && x < k; x++) {
		struct ds_rec *r = ds_rec(s, m[x].rec);
		if (has_full[x] || (r->flags & DS_F_DROPPED) || bsearch(&m[x].rec, in, nin, sizeof(*in), cmp_u32_plain))
			continue;
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		if ((!h && !(h = ds_hashes_new(1))) || (!buf && !(buf = ds_big_alloc(s->opt.chunk)))) {
			rc = -ENOMEM;
			break;
		}
		uint64_t full;
		rc = ds_hash_rest(c, m[x].rec, partial, h, buf, &full);
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ m[x].rec, true, false, partial, full });
	}
	ds_hashes_free(h);
	ds_big_free(buf, s->opt.chunk);
	free(in);
	return rc;
}
