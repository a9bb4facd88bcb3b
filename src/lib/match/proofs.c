/* SPDX-License-Identifier: MIT */
/* proofs.c: the proofs of the cache for a bucket's files: which classes they
 * name and whether they settle the bucket alone; and the proofs a settled
 * bucket leaves, decided once for the cache's log and file. */
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


int ds_proven_alloc(struct proven *p, size_t k)
{
	p->k = k;
	p->cls = malloc(k * sizeof(*p->cls));
	p->pf = malloc(k * sizeof(*p->pf));
	p->head = malloc(k * sizeof(*p->head));
	p->heads = malloc(k * sizeof(*p->heads));
	p->rm = malloc(k * sizeof(*p->rm));
	p->mem = malloc(k * sizeof(*p->mem));
	p->rfull = malloc(k * sizeof(*p->rfull));
	p->placed = calloc(k, sizeof(*p->placed));
	return p->cls && p->pf && p->head && p->heads && p->rm && p->mem && p->rfull && p->placed ? 0 : -ENOMEM;
}

void ds_proven_free(struct proven *p)
{
	free(p->placed);
	free(p->rfull);
	free(p->mem);
	free(p->rm);
	free(p->heads);
	free(p->head);
	free(p->pf);
	free(p->cls);
}

/* Members m[0..k) by proven class (sorted by class number, then order): each
 * class stands as its first member; members in none stand for themselves. A
 * class of several members whose full hashes the cache lacks is not taken
 * (every class a run compares has them: such an entry is not one of ours). */
int ds_group_proven(const struct ds_match *s, const struct ds_member *m, size_t k, struct proven *p)
{
	struct ds_keypos *sub = malloc((k ? k : 1) * sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	size_t nsub = 0;
	for (size_t x = 0; x < k; x++) {
		if (!ds_cache_proof(s->cache, m[x].rec, &p->pf[x]))
			p->pf[x] = (struct ds_proof){ 0 };
		p->cls[x] = p->pf[x].cls;
		p->head[x] = (uint32_t)x;
		if (p->cls[x])
			sub[nsub++] = (struct ds_keypos){ p->cls[x], (uint32_t)x };
	}
	ds_sort_by_key(sub, nsub);
	for (size_t i = 0, j; i < nsub; i = j) {
		bool full = true;
		for (j = i; j < nsub && sub[j].key == sub[i].key; j++)
			full = full && p->pf[sub[j].pos].full;
		for (size_t y = i; y < j; y++) {
			if (j - i >= 2 && !full)
				p->cls[sub[y].pos] = 0;
			else
				p->head[sub[y].pos] = (uint32_t)sub[i].pos;
		}
	}
	free(sub);
	p->nheads = p->nr = 0;
	for (size_t x = 0; x < k; x++) {
		if (p->head[x] != x)
			continue;
		if (p->cls[x])
			p->heads[p->nheads++] = (struct ds_by_rec){ m[x].rec, (uint32_t)x };
		p->rm[p->nr] = (struct ds_member){ m[x].rec, -1, (uint32_t)p->nr, 0, true };
		p->mem[p->nr++] = (uint32_t)x;
	}
	return 0;
}

struct run_cls {
	int64_t at;
	uint64_t cls;
};

static int cmp_run_cls(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct run_cls *a = pa, *b = pb;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->cls < b->cls ? -1 : a->cls > b->cls;
}

/* Do the proofs alone settle the bucket? Every member is proven, and one run
 * that saw every file of this size and first block together (ds_proof.apart)
 * settled a member of each class: that run told the classes apart, and the
 * members of a class are one content by their proofs. @return 1, 0 or -ENOMEM. */
int ds_proofs_cover(const struct proven *p)
{
	if (p->nheads != p->nr)
		return 0; /* a member without a proof */
	if (p->nr <= 1)
		return 1;
	struct run_cls *rc = malloc(p->k * sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	size_t n = 0;
	for (size_t x = 0; x < p->k; x++)
		if (p->pf[x].apart)
			rc[n++] = (struct run_cls){ p->pf[x].at, p->cls[x] };
	int covered = ds_sort(rc, n, sizeof(*rc), cmp_run_cls, NULL) == 0 ? 0 : -ENOMEM;
	for (size_t i = 0, j; covered == 0 && i < n; i = j) {
		size_t classes = 0;
		for (j = i; j < n && rc[j].at == rc[i].at; j++)
			classes += j == i || rc[j].cls != rc[j - 1].cls;
		covered = classes == p->nr;
	}
	free(rc);
	return covered;
}

struct rec_cls {
	uint32_t rec, cls, pair;
};

static int cmp_rec_cls_plain(const void *pa, const void *pb)
{
	const struct rec_cls *a = pa, *b = pb;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static int cmp_rec_cls(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_rec_cls_plain(pa, pb);
}

struct pair64 {
	uint64_t a, b;
};

static int cmp_pair64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct pair64 *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

/* Is each a of pair[0..n) paired with one b only? (pair sorted in place) */
static int one_b_each(struct pair64 *pair, size_t n)
{
	if (ds_sort(pair, n, sizeof(*pair), cmp_pair64, NULL))
		return -ENOMEM;
	for (size_t i = 1; i < n; i++)
		if (pair[i].a == pair[i - 1].a && pair[i].b != pair[i - 1].b)
			return 0;
	return 1;
}

/* A settled bucket as its proofs see it: by member, its class this run (the
 * record naming it; its own record when alone; DS_NONE when dropped) and
 * what is known of it; its old proofs. */
struct settled {
	const struct bucket *b;
	struct proven old;
	uint32_t *now;
	bool *alone;
	struct rec_cls *in;          /* by member: its insert (rec DS_NONE: none) */
	bool same, agree, covered;
};

static void settled_free(struct settled *t)
{
	ds_proven_free(&t->old);
	free(t->in);
	free(t->alone);
	free(t->now);
}

/* Do the old proofs (members without one, or dropped, aside) name the classes
 * this run found one to one (t->same)? t->agree: at least they name no two
 * of them alike (else they are not to be trusted). @return 0 or -ENOMEM. */
static int same_classes(struct settled *t)
{
	size_t k = t->b->k, n = 0;
	struct pair64 *old_now = malloc(k * sizeof(*old_now));
	struct pair64 *now_old = malloc(k * sizeof(*now_old));
	for (size_t x = 0; old_now && now_old && x < k; x++)
		if (t->old.cls[x] && t->now[x] != DS_NONE) {
			old_now[n] = (struct pair64){ t->old.cls[x], t->now[x] };
			now_old[n++] = (struct pair64){ t->now[x], t->old.cls[x] };
		}
	int agree = old_now && now_old ? one_b_each(old_now, n) : -ENOMEM;
	int same = agree == 1 ? one_b_each(now_old, n) : agree;
	free(now_old);
	free(old_now);
	t->agree = agree == 1;
	t->same = same == 1;
	return agree < 0 || same < 0 ? -ENOMEM : 0;
}

/* The bucket's members by their class this run (inserts from first on), their
 * old proofs, and whether those covered it as it was settled. @return 0 or -ENOMEM. */
static int settled_of(struct ds_ctx *c, const struct bucket *b, size_t first, struct settled *t)
{
	const struct ds_match *s = c->s;
	size_t nins = c->res->nins - first;
	struct rec_cls *ins = malloc((nins ? nins : 1) * sizeof(*ins));
	t->b = b;
	t->now = malloc(b->k * sizeof(*t->now));
	t->alone = malloc(b->k * sizeof(*t->alone));
	t->in = malloc(b->k * sizeof(*t->in));
	int rc = ins && t->now && t->alone && t->in ? ds_proven_alloc(&t->old, b->k) : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nins; i++) {
		struct ds_insert in = ds_result_ins(c->res, first + i);
		ins[i] = (struct rec_cls){ in.rec, in.cls, in.pair };
	}
	if (rc == 0)
		rc = ds_sort(ins, nins, sizeof(*ins), cmp_rec_cls, NULL);
	if (rc == 0)
		rc = ds_group_proven(s, b->m, b->k, &t->old);
	for (size_t x = 0; rc == 0 && x < b->k; x++) {
		struct rec_cls key = { b->m[x].rec, 0, 0 };
		const struct rec_cls *in = bsearch(&key, ins, nins, sizeof(*ins), cmp_rec_cls_plain);
		bool dropped = (ds_rec(s->tree, b->m[x].rec)->flags & DS_F_DROPPED) != 0;
		t->in[x] = in ? *in : (struct rec_cls){ DS_NONE, DS_NONE, 0 };
		t->alone[x] = !in && !dropped;
		t->now[x] = dropped ? DS_NONE : in ? in->cls : b->m[x].rec;
	}
	if (rc == 0)
		rc = same_classes(t);
	int covered = rc == 0 && t->same ? ds_proofs_cover(&t->old) : 0;
	t->covered = covered == 1;
	free(ins);
	return rc ? rc : covered < 0 ? covered : 0;
}

/* The number the class of members mem[0..n) is saved under: the one most of
 * their holding proofs name (0: none). */
static uint64_t most_named(const struct proven *old, const struct ds_keypos *mem, size_t n, uint64_t *ids)
{
	size_t nids = 0;
	for (size_t i = 0; i < n; i++)
		if (old->pf[mem[i].pos].cls)
			ids[nids++] = old->pf[mem[i].pos].cls;
	if (ds_sort(ids, nids, sizeof(*ids), ds_cmp_u64, NULL))
		return 0;
	uint64_t best = 0;
	for (size_t a = 0, most = 0, b; a < nids; a = b) {
		for (b = a + 1; b < nids && ids[b] == ids[a];)
			b++;
		if (b - a > most) {
			most = b - a;
			best = ids[a];
		}
	}
	return best;
}

/* What member x is proven as: in class number cls this run (0: in none).
 * In a run that grouped every file of its size and first block together, at
 * its start and told apart; otherwise a proof of that number still holding
 * stays as it is, and one that joins is proven at this run's start.
 * @return PROOF_NEW, PROOF_KEPT (*pf the old one) or PROOF_NONE. */
enum { PROOF_NONE, PROOF_KEPT, PROOF_NEW };
static int proof_now(const struct ds_match *s, const struct settled *t, size_t x, uint64_t cls, struct ds_proof *pf)
{
	const struct ds_proof *old = &t->old.pf[x]; /* cls 0: none holds */
	if (ds_groups_apart(s->cache)) {
		uint64_t own = cls ? cls : ds_cache_fresh_class(s->cache, ds_rec(s->tree, t->b->m[x].rec));
		*pf = (struct ds_proof){ own, s->cache->start_ns, true, false, !cls };
		return PROOF_NEW;
	}
	*pf = *old;
	if (!cls)
		return old->cls ? PROOF_KEPT : PROOF_NONE;
	if (old->cls == cls && !old->alone)
		return PROOF_KEPT;
	*pf = (struct ds_proof){ cls, s->cache->start_ns, false, false, false };
	return PROOF_NEW;
}

/* Member x's full hash, when known. */
static bool member_full(const struct ds_ctx *c, const struct settled *t, size_t x, uint64_t *full)
{
	const struct bucket *b = t->b;
	if (t->in[x].rec != DS_NONE)
		*full = c->res->pairs[t->in[x].pair].full;
	else if (b->full)
		*full = b->full[x];
	else if (b->known && b->known[x].has_full)
		*full = b->known[x].full;
	else if (b->size <= DS_BLOCK)
		*full = b->partial;
	else
		return false;
	return true;
}

/* Member x proven: as its old proof when those covered the bucket (to the log
 * only: the file has it), else as proof_now() says, to the log and the save.
 * cls: its class's number this run (0: alone). @return 0 or -ENOMEM. */
static int prove_member(struct ds_ctx *c, const struct settled *t, size_t x, uint64_t cls)
{
	const struct bucket *b = t->b;
	struct ds_proof pf = t->old.pf[x];
	uint64_t full = 0;
	bool has_full = member_full(c, t, x, &full);
	int how = t->covered ? PROOF_KEPT : proof_now(c->s, t, x, cls, &pf);
	if (how == PROOF_NONE)
		return 0;
	return ds_result_prove(c, b->m[x].rec, &pf, how == PROOF_NEW, b->partial, full, has_full);
}

/* After a bucket is settled (its inserts from first on): the proofs the cache
 * is to keep of it, decided here once for its log and its file alike (a log
 * and a file of one run that numbered a class two ways would tell its files
 * apart). Proofs that covered the bucket as it was settled stay. Otherwise,
 * in a run that grouped every file of its size and first block together,
 * every member is proven at this run's start (so that the next trusting run
 * finds them covered: ds_proofs_cover()): a class under the number most of its
 * old proofs name (a fresh one when none does, or when they named two of its
 * classes alike), a member alone under a number of its own. With -1 or -p,
 * members alone keep the proofs that hold, and members of a class keep theirs
 * when it names the class's number, else join at this run's start.
 * @return 0 or -ENOMEM. */
int ds_note_proofs(struct ds_ctx *c, const struct bucket *b, size_t first)
{
	struct ds_match *s = c->s;
	if (!s->cache->run || s->core->opt.quick || s->core->opt.partial_only)
		return 0;
	struct settled t = { 0 };
	int rc = settled_of(c, b, first, &t);
	struct ds_keypos *mem = malloc(b->k * sizeof(*mem));
	uint64_t *ids = malloc(b->k * sizeof(*ids));
	if (rc == 0 && (!mem || !ids))
		rc = -ENOMEM;
	size_t n = 0;
	for (size_t x = 0; rc == 0 && x < b->k; x++)
		if (t.now[x] != DS_NONE)
			mem[n++] = (struct ds_keypos){ t.now[x], x };
	if (rc == 0)
		ds_sort_by_key(mem, n);
	for (size_t i = 0, j; rc == 0 && i < n; i = j) {
		for (j = i + 1; j < n && mem[j].key == mem[i].key;)
			j++;
		uint64_t cls = 0;
		if (!t.alone[mem[i].pos] && !t.covered) {
			cls = t.agree ? most_named(&t.old, mem + i, j - i, ids) : 0;
			cls = cls ? cls : ds_cache_fresh_class(s->cache, ds_rec(s->tree, (uint32_t)mem[i].key));
		}
		for (size_t y = i; rc == 0 && y < j; y++)
			rc = prove_member(c, &t, mem[y].pos, cls);
	}
	free(ids);
	free(mem);
	settled_free(&t);
	return rc;
}
