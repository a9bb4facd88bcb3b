/* SPDX-License-Identifier: MIT */
/* overlap.c: the pairs of directories where one holds copies of at least a
 * given share of the other's bytes.
 *
 * A set of size s with c files under A and at least one under B (neither
 * inside the other) gives A s * c bytes with a copy in B. Counting that for
 * every pair of directories a set touches costs the square of its
 * directories: a file copied into ten thousand folders would fill memory
 * with pairs that never reach the share. So pairs are made as in prefix
 * filtering: the sets are taken largest file first, and a directory A makes
 * new pairs only while the bytes of its files with a copy outside it that are
 * still to come could reach the share alone; after that it only adds to the
 * pairs it has. A directory B that no set touched with A in that first part
 * can hold at most what was still to come, less than the share: no pair is
 * lost, and every pair's count is whole (nothing was left out before it was
 * made). A directory whose files with a copy outside it fall short of the
 * share makes no pair at all, and no pair is made with a directory B whose
 * bytes outside it with a copy in it fall short of A's share (A's files
 * with a copy in B are among them). The other side of a pair shown is
 * counted again over every set when it was not made on its own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/tally.h"

enum { E_SEL = 1, E_FRESH = 2, E_HIDE = 4, E_ROW = 8 };

struct entry {
	uint64_t key;                /* (a + 1) << 32 | b; 0: empty */
	uint64_t bytes, shared;      /* a's files with a copy in b: their bytes, those shared */
	uint32_t files;              /* (and how many) */
	unsigned flags;
};

struct ovl {
	struct ds_results *s;
	struct ds_tally *t;
	unsigned pct;
	struct ds_set_dirs sd;
	struct entry *e;
	size_t cap, n;               /* cap a power of two, n at most half of it */
	size_t limit;                /* entries at most (ds_overlaps_limit()) */
	bool full;                   /* an entry past the limit was asked for */
	uint64_t *left;              /* by directory: bytes with a copy outside, still to come */
	uint64_t *cover;             /* by directory: bytes outside it with a copy in it */
	uint8_t *elig, *recount;     /* by directory */
	uint8_t *wrapper;            /* by directory: all its files in one subdirectory */
};

static uint64_t key_of(uint32_t a, uint32_t b)
{
	return ((uint64_t)a + 1) << 32 | b;
}

static size_t slot_of(const struct ovl *o, uint64_t key)
{
	/* both halves folded in before the low bits are taken: a multiply
	 * alone leaves the low bits to b's, and the hundreds of directories
	 * paired with one backup folder made one long probe run */
	uint64_t h = (key ^ key >> 32) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ h >> 32) & (o->cap - 1);
}

static struct entry *find(const struct ovl *o, uint32_t a, uint32_t b)
{
	uint64_t key = key_of(a, b);
	for (size_t i = slot_of(o, key);; i = (i + 1) & (o->cap - 1)) {
		if (o->e[i].key == key)
			return &o->e[i];
		if (o->e[i].key == 0)
			return NULL;
	}
}

static int grow(struct ovl *o)
{
	size_t cap = o->cap * 2;
	struct entry *old = o->e, *e = calloc(cap, sizeof(*e));
	if (!e)
		return -ENOMEM;
	size_t oldcap = o->cap;
	o->e = e;
	o->cap = cap;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key)
			continue;
		size_t j = slot_of(o, old[i].key);
		while (e[j].key)
			j = (j + 1) & (cap - 1);
		e[j] = old[i];
	}
	free(old);
	return 0;
}

/* The entry of (a, b), made when new; NULL on ENOMEM or past the limit
 * (o->full). */
static struct entry *add(struct ovl *o, uint32_t a, uint32_t b)
{
	struct entry *f = find(o, a, b);
	if (f)
		return f;
	if (o->n >= o->limit) {
		o->full = true;
		return NULL;
	}
	if (2 * (o->n + 1) > o->cap && grow(o) < 0)
		return NULL;
	uint64_t key = key_of(a, b);
	size_t i = slot_of(o, key);
	while (o->e[i].key)
		i = (i + 1) & (o->cap - 1);
	o->e[i] = (struct entry){ .key = key };
	o->n++;
	return &o->e[i];
}

/* Is one of a and b inside the other (or are they one)? */
static bool related(const struct ovl *o, uint32_t a, uint32_t b)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	if (o->t->depth[a] > o->t->depth[b]) {
		uint32_t x = a;
		a = b;
		b = x;
	}
	for (uint32_t up = o->t->depth[b] - o->t->depth[a]; up > 0 && b != DS_NONE; up--)
		b = dirs[b].parent;
	return a == b;
}

/* The bytes of each directory's files that have a copy outside it, and the
 * bytes outside it that have a copy in it. */
static int count_outside(struct ovl *o)
{
	struct ds_set_dirs *sd = &o->sd;
	for (size_t i = 0; i < o->s->nsets; i++) {
		if (ds_set_dirs_count(o->s, sd, i) < 0)
			return -ENOMEM;
		for (size_t j = 0; j < sd->n; j++) {
			uint32_t d = sd->list[j];
			if (sd->count[d] < sd->k) {
				o->left[d] += sd->size * sd->count[d];
				o->cover[d] += sd->size * (sd->k - sd->count[d]);
			}
		}
	}
	for (uint32_t d = 0; d < o->t->ndirs; d++)
		o->elig[d] = o->t->bytes[d] > 0 && ds_share_at_least(o->left[d], o->t->bytes[d], o->pct);
	return 0;
}

/* Set i's share to the pairs of directory a: made while a may still reach
 * the share (make), else only to those it has; only to fresh ones (fresh). */
static int add_set(struct ovl *o, uint32_t a, bool make, bool fresh)
{
	const struct ds_set_dirs *sd = &o->sd;
	uint64_t c = sd->count[a];
	/* a's files with a copy in b lie outside b: at most b's cover. A b
	 * covering less than a's share cannot pair with it (an entry fresh for
	 * the other side of a pair found is counted whole) */
	uint64_t need = fresh ? 0 : ds_share_need(o->t->bytes[a], o->pct);
	for (size_t j = 0; j < sd->n; j++) {
		uint32_t b = sd->list[j];
		/* b holding all the set's files holds a's too: inside it or a itself;
		 * two directories of the list are one inside the other exactly when
		 * they hold a file in common (each holds one; the inner one's are the
		 * outer one's), which the masks tell for sets of 64 files or fewer */
		if (b == a || sd->count[b] == sd->k || o->cover[b] < need)
			continue;
		if (sd->masked ? (sd->mask[a] & sd->mask[b]) != 0 : related(o, a, b))
			continue;
		struct entry *e = make ? add(o, a, b) : find(o, a, b);
		if (make && !e)
			return o->full ? DUPSCAN_E_TOO_MANY : -ENOMEM;
		if (e && (!fresh || (e->flags & E_FRESH))) {
			e->bytes += sd->size * c;
			e->shared += sd->shared ? sd->shared[a] : 0;
			e->files += (uint32_t)c;
		}
	}
	return 0;
}

/* A set by its file size, largest first (the size read once, not at each comparison). */
struct by_size {
	uint64_t size;
	uint32_t set;
};

static int cmp_set_size(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = ((const struct by_size *)pa)->size, b = ((const struct by_size *)pb)->size;
	return a > b ? -1 : a < b;
}

static int make_pairs(struct ovl *o)
{
	size_t n = o->s->nsets;
	struct by_size *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = (struct by_size){ ds_set_size(&o->s->sets[i]), (uint32_t)i };
	int rc = ds_sort(order, n, sizeof(*order), cmp_set_size, NULL);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct ds_set_dirs *sd = &o->sd;
		rc = ds_set_dirs_count(o->s, sd, order[i].set);
		for (size_t j = 0; rc == 0 && j < sd->n; j++) {
			uint32_t a = sd->list[j];
			if (!o->elig[a] || sd->count[a] >= sd->k)
				continue;
			rc = add_set(o, a, ds_share_at_least(o->left[a], o->t->bytes[a], o->pct), false);
			o->left[a] -= sd->size * sd->count[a];
		}
	}
	free(order);
	return rc;
}

/* a * b compared with c * d, in full (no 128-bit type on every target). */
static int cmp_product(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t p[2][2];
	uint64_t x[2] = { a, c }, y[2] = { b, d };
	for (int k = 0; k < 2; k++) {
		uint64_t a0 = x[k] & 0xffffffffu, a1 = x[k] >> 32, b0 = y[k] & 0xffffffffu, b1 = y[k] >> 32;
		uint64_t lo = a0 * b0, m1 = a1 * b0, m2 = a0 * b1, hi = a1 * b1;
		uint64_t mid = (lo >> 32) + (m1 & 0xffffffffu) + (m2 & 0xffffffffu);
		p[k][0] = hi + (m1 >> 32) + (m2 >> 32) + (mid >> 32);
		p[k][1] = (mid << 32) | (lo & 0xffffffffu);
	}
	if (p[0][0] != p[1][0])
		return p[0][0] < p[1][0] ? -1 : 1;
	return p[0][1] < p[1][1] ? -1 : p[0][1] > p[1][1];
}

/* Mark each directory whose files all lie in one of its subdirectories
 * (home/ holding only user/Photos/): it holds what that one holds, and the
 * deepest such folder is the one named. */
static void mark_wrappers(struct ovl *o)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	for (uint32_t d = 0; d < o->t->ndirs; d++) {
		uint32_t p = dirs[d].parent;
		if (p != DS_NONE && o->t->files[d] > 0 && o->t->files[d] == o->t->files[p])
			o->wrapper[p] = 1;
	}
}

/* The folder above d past those that hold nothing but what d holds. */
static uint32_t up_past_wrappers(const struct ovl *o, uint32_t d)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	uint32_t p = dirs[d].parent;
	while (p != DS_NONE && o->wrapper[p])
		p = dirs[p].parent;
	return p;
}

/* Does a's parent (past the folders that hold nothing but a) hold as large
 * a share of its own bytes in b, in b's parent or in the folder past those
 * wrapping b, as a holds in b (e)? Then a and b are a part of a larger copy,
 * which that pair names. (A wrapping folder is skipped on both sides: it
 * holds what its one subfolder holds, so its share is never smaller.) */
static bool within_larger(const struct ovl *o, const struct entry *e, uint32_t a, uint32_t b)
{
	const uint64_t *bytes = o->t->bytes;
	uint32_t pa = up_past_wrappers(o, a);
	uint32_t ys[3] = { b, o->s->tree->dirs[b].parent, up_past_wrappers(o, b) };
	for (int k = 0; pa != DS_NONE && k < 3; k++) {
		const struct entry *p = ys[k] != DS_NONE ? find(o, pa, ys[k]) : NULL;
		if (p && (p->flags & E_SEL) && cmp_product(p->bytes, bytes[a], e->bytes, bytes[pa]) >= 0)
			return true;
	}
	return false;
}

/* Does a folder above b hold more of a's bytes than b does? Then the pair
 * (a, b) is a part of that larger one (a copied whole, weighed against a
 * subfolder of its copy). */
static bool more_above(const struct ovl *o, const struct entry *e, uint32_t a, uint32_t b)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	for (uint32_t y = dirs[b].parent; y != DS_NONE; y = dirs[y].parent) {
		const struct entry *p = find(o, a, y);
		if (p && p->bytes > e->bytes)
			return true;
	}
	return false;
}

/* Of two pairs that hold the same of x's copies, (x, near) and (x, far)
 * with far near's parent, is far the copy of x? The one more of whose own
 * bytes have a copy in x (a pair below the share counting as less), then
 * the one closer to x's size (a copy is the size of what it copies); where
 * both are alike, the smaller folder, near. */
static bool far_is_the_copy(const struct ovl *o, uint32_t x, uint32_t near, uint32_t far)
{
	const uint64_t *bytes = o->t->bytes;
	const struct entry *rn = find(o, near, x), *rf = find(o, far, x);
	bool sn = rn && (rn->flags & E_SEL), sf = rf && (rf->flags & E_SEL);
	if (sn != sf)
		return sf;
	int c = sn ? cmp_product(rf->bytes, bytes[near], rn->bytes, bytes[far]) : 0;
	if (c)
		return c > 0;
	uint64_t dn = bytes[near] > bytes[x] ? bytes[near] - bytes[x] : bytes[x] - bytes[near];
	uint64_t df = bytes[far] > bytes[x] ? bytes[far] - bytes[x] : bytes[x] - bytes[far];
	return df < dn;
}

/* Leave out the row of (x, y), both ways: the other folder was named. */
static void hide_row(struct ovl *o, uint32_t x, uint32_t y)
{
	struct entry *e = find(o, x, y), *r = find(o, y, x);
	if (e)
		e->flags |= E_HIDE;
	if (r)
		r->flags |= E_HIDE;
}

/* Do x and y lie (at any depth, strictly) in two folders that are whole
 * copies of each other, every byte of each with a copy in the other? That
 * pair says it all: x and y are a part of it. */
static bool under_whole(const struct ovl *o, uint32_t x, uint32_t y)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	const uint64_t *bytes = o->t->bytes;
	for (uint32_t ax = x; ax != DS_NONE; ax = dirs[ax].parent)
		for (uint32_t ay = y; ay != DS_NONE; ay = dirs[ay].parent) {
			/* strictly inside on both sides (a pair beside it is weighed by
			 * the rules above); a folder holding nothing but one
			 * subfolder is no pair: that one is */
			if (ax == x || ay == y || o->wrapper[ax] || o->wrapper[ay])
				continue;
			const struct entry *p = find(o, ax, ay), *q = p ? find(o, ay, ax) : NULL;
			if (q && (p->flags & E_SEL) && (q->flags & E_SEL) && p->bytes == bytes[ax] && q->bytes == bytes[ay])
				return true;
		}
	return false;
}

/* Leave out a pair with a side that only wraps a subdirectory; a pair whose
 * A's parent (past the folders that hold nothing but A) has as large a share
 * of itself in B, in B's parent or past the folders wrapping B; a pair whose
 * B has a subdirectory holding as much of A, or whose A has a subdirectory
 * with as many bytes in B; one where a folder above B holds more of A; and
 * one inside two folders that are whole copies of each other. A folder copied whole, at any depth, is then one pair,
 * whichever side is weighed. */
static void hide_nested(struct ovl *o)
{
	const struct ds_dir *dirs = o->s->tree->dirs;
	mark_wrappers(o);
	for (size_t i = 0; i < o->cap; i++) {
		struct entry *e = &o->e[i];
		if (!(e->flags & E_SEL))
			continue;
		uint32_t a = (uint32_t)(e->key >> 32) - 1, b = (uint32_t)e->key;
		if (o->wrapper[a] || o->wrapper[b])
			e->flags |= E_HIDE;
		/* the smallest folder holding the copies is named, on either side,
		 * unless its parent holds more of the other side's copies: a
		 * folder copied whole that holds copies of its own files is
		 * named whole, not one subfolder its other copies match */
		uint32_t pb = dirs[b].parent, pa = dirs[a].parent;
		struct entry *up = pb != DS_NONE ? find(o, a, pb) : NULL;
		if (up && (up->flags & E_SEL) && up->bytes == e->bytes) {
			if (far_is_the_copy(o, a, b, pb))
				hide_row(o, a, b);
			else
				hide_row(o, a, pb);
		}
		up = pa != DS_NONE ? find(o, pa, b) : NULL;
		if (up && (up->flags & E_SEL) && up->bytes == e->bytes) {
			if (far_is_the_copy(o, b, a, pa))
				hide_row(o, a, b);
			else
				hide_row(o, pa, b);
		}
		if (within_larger(o, e, a, b) || more_above(o, e, a, b) || under_whole(o, a, b))
			e->flags |= E_HIDE;
	}
}

/* Mark the pairs at the share and those left out; give each pair shown the
 * entry of its other side, counted over every set when it is new (only for
 * those shown: in snapshots of one tree most pairs at the share are a folder
 * against the parents of its copies, left out). */
static int select_pairs(struct ovl *o)
{
	for (size_t i = 0; i < o->cap; i++) {
		struct entry *e = &o->e[i];
		if (e->key && ds_share_at_least(e->bytes, o->t->bytes[(e->key >> 32) - 1], o->pct))
			e->flags |= E_SEL;
	}
	hide_nested(o);
	uint64_t *sel = NULL;
	size_t nsel = 0, cap = 0;
	for (size_t i = 0; i < o->cap; i++) {
		if ((o->e[i].flags & (E_SEL | E_HIDE)) != E_SEL)
			continue;
		if (DS_GROW(sel, cap, nsel + 1)) {
			free(sel);
			return -ENOMEM;
		}
		sel[nsel++] = o->e[i].key;
	}
	bool any = false;
	for (size_t i = 0; i < nsel; i++) {
		uint32_t a = (uint32_t)(sel[i] >> 32) - 1, b = (uint32_t)sel[i];
		if (find(o, b, a))
			continue;
		struct entry *r = add(o, b, a);
		if (!r) {
			free(sel);
			return o->full ? DUPSCAN_E_TOO_MANY : -ENOMEM;
		}
		r->flags |= E_FRESH;
		o->recount[b] = 1;
		any = true;
	}
	free(sel);
	struct ds_set_dirs *sd = &o->sd;
	for (size_t i = 0; any && i < o->s->nsets; i++) {
		if (ds_set_dirs_count(o->s, sd, i) < 0)
			return -ENOMEM;
		for (size_t j = 0; j < sd->n; j++) {
			uint32_t d = sd->list[j];
			if (o->recount[d] && sd->count[d] < sd->k)
				add_set(o, d, false, true);
		}
	}
	return 0;
}

struct row {
	struct ds_overlap p;
	char *path[2];
};

static int cmp_row(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct row *x = pa, *y = pb;
	if (x->p.bytes[0] != y->p.bytes[0])
		return x->p.bytes[0] > y->p.bytes[0] ? -1 : 1;
	int c = strcmp(x->path[0], y->path[0]);
	return c ? c : strcmp(x->path[1], y->path[1]);
}

/* One row a shown pair (both sides shown: one row), its larger side first. */
static int make_rows(struct ovl *o, struct row **out, size_t *nout)
{
	struct row *rows = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < o->cap; i++) {
		struct entry *e = &o->e[i];
		if ((e->flags & (E_SEL | E_HIDE)) != E_SEL || (e->flags & E_ROW))
			continue;
		uint32_t a = (uint32_t)(e->key >> 32) - 1, b = (uint32_t)e->key;
		struct entry *r = find(o, b, a);
		e->flags |= E_ROW;
		r->flags |= E_ROW;
		struct row w = { .p = { a, b, { e->files, r->files }, { e->bytes, r->bytes }, { e->shared, r->shared } } };
		w.path[0] = ds_dir_path(o->s->tree, a);
		w.path[1] = ds_dir_path(o->s->tree, b);
		if (w.path[0] && w.path[1] && (w.p.bytes[1] > w.p.bytes[0] ||
		    (w.p.bytes[1] == w.p.bytes[0] && strcmp(w.path[1], w.path[0]) < 0))) {
			w = (struct row){ .p = { b, a, { r->files, e->files }, { r->bytes, e->bytes }, { r->shared, e->shared } },
					  .path = { w.path[1], w.path[0] } };
		}
		if (!w.path[0] || !w.path[1] || DS_GROW(rows, cap, n + 1)) {
			free(w.path[0]);
			free(w.path[1]);
			rc = -ENOMEM;
			break;
		}
		rows[n++] = w;
	}
	if (rc == 0)
		rc = ds_sort(rows, n, sizeof(*rows), cmp_row, NULL);
	*out = rows;
	*nout = n;
	return rc;
}

static int keep_rows(struct ovl *o)
{
	struct row *rows;
	size_t n;
	int rc = make_rows(o, &rows, &n);
	struct ds_overlap *pairs = rc == 0 ? malloc((n ? n : 1) * sizeof(*pairs)) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (pairs)
			pairs[i] = rows[i].p;
		free(rows[i].path[0]);
		free(rows[i].path[1]);
	}
	free(rows);
	if (!pairs)
		return rc ? rc : -ENOMEM;
	free(o->t->pairs);
	o->t->pairs = pairs;
	o->t->npairs = n;
	return 0;
}

size_t ds_overlaps_limit(const struct ds_results *s)
{
	/* a pair table about as large as the scan's own tables at most: its
	 * entries can grow as the square of the directories holding one file */
	uint64_t files = 0;
	for (uint32_t d = 0; d < s->tally->ndirs; d++)
		if (s->tree->dirs[d].parent == DS_NONE)
			files += s->tally->files[d];
	return files > DS_OVERLAPS_FLOOR ? (size_t)files : DS_OVERLAPS_FLOOR;
}

int ds_overlaps(struct ds_results *s, unsigned percent, size_t limit)
{
	struct ovl o = { .s = s, .t = s->tally, .pct = percent, .cap = 1024, .limit = limit };
	size_t nd = s->tree->ndirs ? s->tree->ndirs : 1;
	int rc = ds_set_dirs_init(&o.sd, s);
	o.e = calloc(o.cap, sizeof(*o.e));
	o.left = calloc(nd, sizeof(*o.left));
	o.cover = calloc(nd, sizeof(*o.cover));
	o.elig = calloc(nd, 1);
	o.recount = calloc(nd, 1);
	o.wrapper = calloc(nd, 1);
	if (rc == 0 && (!o.e || !o.left || !o.cover || !o.elig || !o.recount || !o.wrapper))
		rc = -ENOMEM;
	if (rc == 0)
		rc = count_outside(&o);
	if (rc == 0)
		rc = make_pairs(&o);
	if (rc == 0)
		rc = select_pairs(&o);
	if (rc == 0)
		rc = keep_rows(&o);
	else { /* no pair rather than the last call's */
		free(s->tally->pairs);
		s->tally->pairs = NULL;
		s->tally->npairs = 0;
	}
	ds_set_dirs_free(&o.sd);
	free(o.e);
	free(o.left);
	free(o.cover);
	free(o.elig);
	free(o.recount);
	free(o.wrapper);
	return rc;
}

/* ---- the library's calls ---- */

int ds_find_overlaps(struct ds_results *s, unsigned percent)
{
	if (!s || percent < 1 || percent > 100)
		return -EINVAL;
	int rc = ds_tally(s);
	return rc ? rc : ds_overlaps(s, percent, ds_overlaps_limit(s));
}

size_t ds_overlap_count(const struct ds_results *s)
{
	return s && s->tally ? s->tally->npairs : 0;
}

int ds_overlap_dirs(const struct ds_results *s, size_t i, size_t *a, size_t *b)
{
	if (i >= ds_overlap_count(s))
		return -EINVAL;
	if (a)
		*a = s->tally->pairs[i].a;
	if (b)
		*b = s->tally->pairs[i].b;
	return 0;
}

uint64_t ds_overlap_tally(const struct ds_results *s, size_t i, int side, int what)
{
	if (i >= ds_overlap_count(s) || side < 0 || side > 1)
		return 0;
	const struct ds_overlap *p = &s->tally->pairs[i];
	switch (what) {
	case DUPSCAN_TALLY_FILES: return p->files[side];
	case DUPSCAN_TALLY_BYTES: return p->bytes[side];
	case DUPSCAN_TALLY_SHARED_BYTES: return p->shared[side];
	default: return 0;
	}
}
