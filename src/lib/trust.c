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

/* DUPSCAN_OPT_CACHE_TRUST: the members whose proofs hold and name one class
 * stand as one file, their first; the bucket is settled among those and the
 * other members (full hashes first, known or read, then byte comparison of
 * equal ones with ds_match_by_full()), and each proven class follows its first
 * member. A bucket of one proven class reads nothing. */
int ds_match_trusted(struct ds_ctx *c, const struct bucket *b)
{
	dupscan_scan *s = c->s;
	size_t k = b->k, nr = 0;
	uint64_t *cls = malloc(k * sizeof(*cls));
	struct by_hash *sub = malloc(k * sizeof(*sub));  /* proven members by class number, then order */
	uint32_t *head = malloc(k * sizeof(*head));      /* per member: its class' first member, or itself */
	uint32_t *mem = malloc(k * sizeof(*mem));
	struct ds_member *rm = malloc(k * sizeof(*rm));
	uint64_t *rfull = malloc(k * sizeof(*rfull));
	struct by_rec *heads = malloc(k * sizeof(*heads));
	bool *placed = calloc(k, sizeof(*placed));
	struct ds_hashes *hs = NULL;
	unsigned char *buf = NULL;
	int rc = cls && sub && head && mem && rm && rfull && heads && placed ? 0 : -ENOMEM;
	size_t nsub = 0;
	for (size_t x = 0; rc == 0 && x < k; x++) {
		int64_t at;
		if (!ds_cache_proof(s, ds_rec(s, b->m[x].rec), &cls[x], &at))
			cls[x] = 0;
		head[x] = (uint32_t)x;
		if (cls[x])
			sub[nsub++] = (struct by_hash){ cls[x], (uint32_t)x };
	}
	if (rc == 0)
		rc = ds_sort(sub, nsub, sizeof(*sub), ds_cmp_by_hash, NULL);
	for (size_t i = 1; rc == 0 && i < nsub; i++)
		if (sub[i].key == sub[i - 1].key)
			head[sub[i].pos] = head[sub[i - 1].pos];
	size_t nheads = 0;
	for (size_t x = 0; rc == 0 && x < k; x++) {
		if (head[x] != x)
			continue;
		if (cls[x])
			heads[nheads++] = (struct by_rec){ b->m[x].rec, (uint32_t)x };
		rm[nr] = (struct ds_member){ b->m[x].rec, -1, (uint32_t)nr, 0, true };
		mem[nr++] = (uint32_t)x;
	}
	if (rc)
		goto out;
	if (nr == 1) {
		/* one proven class and nothing else: no read */
		for (size_t x = 0; x < k; x++)
			head[x] = (uint32_t)x;
		rc = insert_proven(c, b, head, k, b->m[0].rec, b->known[0].full);
		if (rc == 0)
			rc = ds_result_insert(c, b->m[0].rec, b->m[0].rec, b->partial, b->known[0].full);
		goto out;
	}
	/* full hashes of those that lack one: a proven member always has one */
	hs = ds_hashes_new(nr);
	buf = ds_big_alloc(s->chunk);
	if (!hs || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; rc == 0 && j < nr; j++) {
		const struct known *kn = &b->known[mem[j]];
		struct ds_rec *r = ds_rec(s, rm[j].rec);
		if (kn->has_full) {
			rfull[j] = kn->full;
			continue;
		}
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		uint64_t from = 0;
		if (kn->h) {
			ds_hash_copy(hs, j, kn->h, kn->hidx);
			from = DS_BLOCK;
		}
		rc = ds_hash_range(c, r, hs, j, from, b->size, buf);
		rfull[j] = ds_hash_digest(hs, j);
		/* a file that differed after its first block last time has its full
		 * hash now: kept, so the next run need not read it */
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ rm[j].rec, true, false, b->partial, rfull[j] });
	}
	if (rc)
		goto out;
	struct bucket rb = { s, rm, nr, b->size, b->partial, NULL, 0, NULL, 0, rfull, NULL, NULL, NULL };
	size_t first = c->res->nins;
	rc = ds_match_by_full(c, &rb);
	/* each proven class joins the class its first member joined */
	size_t end = c->res->nins;
	if (rc == 0)
		rc = ds_sort(heads, nheads, sizeof(*heads), cmp_by_rec, NULL);
	for (size_t i = first; rc == 0 && i < end; i++) {
		struct ds_insert in = c->res->ins[i];
		struct by_rec key = { in.rec, 0 };
		const struct by_rec *h = bsearch(&key, heads, nheads, sizeof(*heads), cmp_by_rec_plain);
		if (!h)
			continue;
		/* the first member is in already, maybe joined to another's class */
		size_t n = 0;
		for (size_t x = 0; x < k; x++)
			if (head[x] == h->x && x != h->x)
				mem[n++] = (uint32_t)x;
		ds_rec(s, in.rec)->flags |= DS_F_TRUSTED;
		rc = insert_proven(c, b, mem, n, in.cls, in.full);
		placed[h->x] = true;
	}
	/* a proven class nothing joined stands alone, without its first member
	 * when that one failed to read */
	for (size_t i = 0; rc == 0 && i < nheads; i++) {
		if (placed[heads[i].x])
			continue;
		size_t n = 0;
		for (size_t x = 0; x < k; x++)
			if (head[x] == heads[i].x && !(ds_rec(s, b->m[x].rec)->flags & DS_F_DROPPED))
				mem[n++] = (uint32_t)x;
		if (n < 2)
			continue;
		uint32_t named = b->m[mem[0]].rec;
		rc = insert_proven(c, b, mem, n, named, b->known[mem[0]].full);
		if (rc == 0)
			rc = ds_result_insert(c, named, named, b->partial, b->known[mem[0]].full);
	}
out:
	ds_big_free(buf, buf ? s->chunk : 0);
	ds_hashes_free(hs);
	free(placed);
	free(heads);
	free(rfull);
	free(rm);
	free(mem);
	free(head);
	free(sub);
	free(cls);
	return rc;
}

/* With DUPSCAN_OPT_CACHE_TRUST: the members of a settled bucket that joined no
 * class and whose full hash is unknown (told apart before their end) are
 * hashed whole and noted, so a later trusted run need not read them. m[x] is
 * in a class when an insert from first on names it. @return 0 or a negative code. */
int ds_finish_hashes(struct ds_ctx *c, const struct ds_member *m, size_t k, const bool *has_full,
			 uint64_t size, uint64_t partial, size_t first)
{
	dupscan_scan *s = c->s;
	size_t nin = c->res->nins - first;
	uint32_t *in = malloc((nin ? nin : 1) * sizeof(*in));
	unsigned char *buf = NULL;
	int rc = in ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nin; i++)
		in[i] = c->res->ins[first + i].rec;
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
		struct ds_hashes *h = ds_hashes_new(1);
		if (!h || (!buf && !(buf = ds_big_alloc(s->chunk)))) {
			ds_hashes_free(h);
			rc = -ENOMEM;
			break;
		}
		rc = ds_hash_range(c, r, h, 0, 0, size, buf);
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ m[x].rec, true, false, partial, ds_hash_digest(h, 0) });
		ds_hashes_free(h);
	}
	ds_big_free(buf, buf ? s->chunk : 0);
	free(in);
	return rc;
}
