/* SPDX-License-Identifier: MIT */
/* trust.c: the proofs of the cache. With DUPSCAN_OPT_CACHE_TRUST a bucket is
 * settled with them: proven classes stand unread, new files join them by one
 * comparison. Every run with a cache leaves what its buckets prove. */
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

/* A bucket's members by the proofs the cache holds for them, and one
 * representative per class (and per member in none) to compare. */
struct proven {
	size_t k;
	uint64_t *cls;          /* per member: its proven class, 0 for none */
	struct ds_proof *pf;    /* per member: its proof, when cls */
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
	p->pf = malloc(k * sizeof(*p->pf));
	p->head = malloc(k * sizeof(*p->head));
	p->heads = malloc(k * sizeof(*p->heads));
	p->rm = malloc(k * sizeof(*p->rm));
	p->mem = malloc(k * sizeof(*p->mem));
	p->rfull = malloc(k * sizeof(*p->rfull));
	p->placed = calloc(k, sizeof(*p->placed));
	return p->cls && p->pf && p->head && p->heads && p->rm && p->mem && p->rfull && p->placed ? 0 : -ENOMEM;
}

static void proven_free(struct proven *p)
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
static int group_proven(const dupscan_scan *s, const struct ds_member *m, size_t k, struct proven *p)
{
	struct ds_keypos *sub = malloc((k ? k : 1) * sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	size_t nsub = 0;
	for (size_t x = 0; x < k; x++) {
		if (!ds_cache_proof(s, m[x].rec, &p->pf[x]))
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
			p->heads[p->nheads++] = (struct by_rec){ m[x].rec, (uint32_t)x };
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
static int proofs_cover(const struct proven *p)
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
static uint64_t resumable(const dupscan_scan *s, const struct bucket *b, const struct proven *p, struct ds_prefix *pre,
			  bool *in)
{
	uint64_t x = 0;
	int64_t at = 0;
	size_t n = 0;
	for (size_t i = 0; i < b->k; i++) {
		in[i] = ds_cache_prefix(s, b->m[i].rec, &pre[i]);
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
	const dupscan_scan *s = c->s;
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
			if (ds_rec(s, m[y].rec)->flags & DS_F_DROPPED)
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
	unsigned char *buf = ds_big_alloc(c->s->opt.chunk);
	long n = m && h && buf ? resumed_members(c, b, pre, in, x, m, h, buf) : -ENOMEM;
	int rc = n < 0 ? (int)n : ds_lockstep_on(c, m, (size_t)n, b->size, x, h, &b->partial);
	for (long i = 0; rc == 0 && i < n; i++)
		if (m[i].alive)
			rc = ds_result_insert(c, m[i].rec, m[m[i].cls].rec, b->partial, ds_hash_digest(h, (size_t)i));
	ds_big_free(buf, buf ? c->s->opt.chunk : 0);
	ds_hashes_free(h);
	free(m);
	return rc;
}

/* DUPSCAN_OPT_CACHE_TRUST: the members whose proofs hold and name one class
 * stand as one file, their first. A bucket the proofs cover (proofs_cover())
 * is settled without a read. Otherwise it is settled among the classes' first
 * members and the other members (match_representatives()), and each proven
 * class follows its first member. */
int ds_match_trusted(struct ds_ctx *c, const struct bucket *b)
{
	struct proven p = { 0 };
	int rc = proven_alloc(&p, b->k);
	if (rc == 0)
		rc = group_proven(c->s, b->m, b->k, &p);
	int covered = rc == 0 ? proofs_cover(&p) : 0;
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
	proven_free(&p);
	return rc;
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
	proven_free(&t->old);
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
	const dupscan_scan *s = c->s;
	size_t nins = c->res->nins - first;
	struct rec_cls *ins = malloc((nins ? nins : 1) * sizeof(*ins));
	t->b = b;
	t->now = malloc(b->k * sizeof(*t->now));
	t->alone = malloc(b->k * sizeof(*t->alone));
	t->in = malloc(b->k * sizeof(*t->in));
	int rc = ins && t->now && t->alone && t->in ? proven_alloc(&t->old, b->k) : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nins; i++) {
		struct ds_insert in = ds_result_ins(c->res, first + i);
		ins[i] = (struct rec_cls){ in.rec, in.cls, in.pair };
	}
	if (rc == 0)
		rc = ds_sort(ins, nins, sizeof(*ins), cmp_rec_cls, NULL);
	if (rc == 0)
		rc = group_proven(s, b->m, b->k, &t->old);
	for (size_t x = 0; rc == 0 && x < b->k; x++) {
		struct rec_cls key = { b->m[x].rec, 0, 0 };
		const struct rec_cls *in = bsearch(&key, ins, nins, sizeof(*ins), cmp_rec_cls_plain);
		bool dropped = (ds_rec(s, b->m[x].rec)->flags & DS_F_DROPPED) != 0;
		t->in[x] = in ? *in : (struct rec_cls){ DS_NONE, DS_NONE, 0 };
		t->alone[x] = !in && !dropped;
		t->now[x] = dropped ? DS_NONE : in ? in->cls : b->m[x].rec;
	}
	if (rc == 0)
		rc = same_classes(t);
	int covered = rc == 0 && t->same ? proofs_cover(&t->old) : 0;
	t->covered = covered == 1;
	free(ins);
	return rc ? rc : covered < 0 ? covered : 0;
}

/* The number the class of members mem[0..n) is saved under: the one most of
 * their holding proofs name (0: none). */
static int cmp_u64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

static uint64_t most_named(const struct proven *old, const struct ds_keypos *mem, size_t n, uint64_t *ids)
{
	size_t nids = 0;
	for (size_t i = 0; i < n; i++)
		if (old->pf[mem[i].pos].cls)
			ids[nids++] = old->pf[mem[i].pos].cls;
	if (ds_sort(ids, nids, sizeof(*ids), cmp_u64, NULL))
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
 * stays as it is, and one that joins is proven at this run's start. */
static bool proof_now(const dupscan_scan *s, const struct settled *t, size_t x, uint64_t cls, struct ds_proof *pf)
{
	const struct ds_proof *old = &t->old.pf[x]; /* cls 0: none holds */
	if (ds_groups_apart(s)) {
		uint64_t own = cls ? cls : ds_cache_fresh_class(s, ds_rec(s, t->b->m[x].rec));
		*pf = (struct ds_proof){ own, s->cache.start_ns, true, false, !cls };
		return true;
	}
	if (!cls) {
		*pf = *old;
		return old->cls != 0;
	}
	*pf = old->cls == cls && !old->alone ? *old : (struct ds_proof){ cls, s->cache.start_ns, false, false, false };
	return true;
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
	struct ds_proved p = { b->m[x].rec, t->old.pf[x] };
	uint64_t full = 0;
	bool has_full = member_full(c, t, x, &full);
	if (t->covered) {
		ds_cache_log_add(c->s, p.rec, b->partial, full, has_full, &p.pf);
		return 0;
	}
	if (!proof_now(c->s, t, x, cls, &p.pf))
		return 0;
	return ds_result_prove(c, &p, b->partial, full, has_full);
}

/* After a bucket is settled (its inserts from first on): the proofs the cache
 * is to keep of it, decided here once for its log and its file alike (a log
 * and a file of one run that numbered a class two ways would tell its files
 * apart). Proofs that covered the bucket as it was settled stay. Otherwise,
 * in a run that grouped every file of its size and first block together,
 * every member is proven at this run's start (so that the next trusting run
 * finds them covered: proofs_cover()): a class under the number most of its
 * old proofs name (a fresh one when none does, or when they named two of its
 * classes alike), a member alone under a number of its own. With -1 or -p,
 * members alone keep the proofs that hold, and members of a class keep theirs
 * when it names the class's number, else join at this run's start.
 * @return 0 or -ENOMEM. */
int ds_note_proofs(struct ds_ctx *c, const struct bucket *b, size_t first)
{
	dupscan_scan *s = c->s;
	if (!s->cache.run || s->opt.quick || s->opt.partial_only)
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
			cls = cls ? cls : ds_cache_fresh_class(s, ds_rec(s, (uint32_t)mem[i].key));
		}
		for (size_t y = i; rc == 0 && y < j; y++)
			rc = prove_member(c, &t, mem[y].pos, cls);
	}
	free(ids);
	free(mem);
	settled_free(&t);
	return rc;
}
