/* SPDX-License-Identifier: MIT */
/* dirsets.c: duplicate directories. A directory's key is its content: the
 * sorted list of its files' confirmed classes and its subdirectories' keys,
 * interned bottom-up (a Merkle tree whose keys are exact: lists are compared
 * whole when their hashes meet), so two directories share a key only when
 * every file under one has a byte-for-byte twin under the other. */
#define _XOPEN_SOURCE 700 /* S_IFDIR */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/sets.h"

#define DIR_TAG (UINT64_C(1) << 63)        /* keeps a subdirectory's key apart from a file's */

struct dir_info {
	uint32_t nfiles, nsubs;
	uint32_t file_off, sub_off;  /* into the CSR arrays */
	uint32_t key;                /* interned content key, DS_NONE when incomplete */
	uint64_t bytes;              /* total size of the files below */
	bool reported;               /* a member of a listed directory set */
	bool unknown;                /* another host's, said incomplete there */
};

/* Interned key lists: open addressing on the list's hash. */
struct intern {
	uint64_t *lists;      /* all lists, back to back */
	size_t used, cap;
	uint32_t *start, *len;
	uint64_t *hash;
	uint32_t count, capk;
	uint32_t *table;      /* key + 1, 0 = empty */
	size_t tcap;
};

static int intern_grow_table(struct intern *in)
{
	size_t cap = in->tcap ? in->tcap * 2 : 1024;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint32_t k = 0; k < in->count; k++) {
		size_t j = in->hash[k] & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = k + 1;
	}
	free(in->table);
	in->table = t;
	in->tcap = cap;
	return 0;
}

/* @return the key of list v[0..n), a new one when unseen; DS_NONE on ENOMEM. */
static uint32_t intern_list(struct intern *in, const uint64_t *v, uint32_t n)
{
	if ((in->count + 1) * 2 > in->tcap && intern_grow_table(in))
		return DS_NONE;
	uint64_t h = ds_hash_oneshot(v, n * sizeof(*v));
	size_t j = h & (in->tcap - 1);
	for (; in->table[j]; j = (j + 1) & (in->tcap - 1)) {
		uint32_t k = in->table[j] - 1;
		if (in->hash[k] == h && in->len[k] == n && (n == 0 || memcmp(in->lists + in->start[k], v, n * sizeof(*v)) == 0))
			return k;
	}
	if (in->count == in->capk) {
		uint32_t cap = in->capk ? in->capk * 2 : 256;
		uint32_t *st = realloc(in->start, cap * sizeof(*st)), *ln = st ? realloc(in->len, cap * sizeof(*ln)) : NULL;
		uint64_t *hs = ln ? realloc(in->hash, cap * sizeof(*hs)) : NULL;
		if (st)
			in->start = st;
		if (ln)
			in->len = ln;
		if (!hs)
			return DS_NONE;
		in->hash = hs;
		in->capk = cap;
	}
	if (DS_GROW(in->lists, in->cap, in->used + n))
		return DS_NONE;
	if (n) /* an empty directory's list is empty: lists may be NULL yet */
		memcpy(in->lists + in->used, v, n * sizeof(*v));
	uint32_t k = in->count++;
	in->start[k] = (uint32_t)in->used;
	in->len[k] = n;
	in->hash[k] = h;
	in->used += n;
	in->table[j] = k + 1;
	return k;
}

static void intern_free(struct intern *in)
{
	free(in->lists);
	free(in->start);
	free(in->len);
	free(in->hash);
	free(in->table);
}

static bool inside_reported(const struct ds_tree *s, const struct dir_info *di, uint32_t d)
{
	for (; d != DS_NONE; d = s->dirs[d].parent)
		if (di[d].reported)
			return true;
	return false;
}

static uint32_t depth_of(const struct ds_tree *s, uint32_t d)
{
	uint32_t n = 0;
	for (; d != DS_NONE; d = s->dirs[d].parent)
		n++;
	return n;
}

struct dset {
	uint32_t key, first, count; /* members: order[first .. first+count) */
	uint32_t depth;             /* of its shallowest member */
};

static int cmp_dset_depth(void *ctx, const void *a, const void *b)
{
	(void)ctx;
	const struct dset *x = a, *y = b;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_set(void *ctx, const void *pa, const void *pb)
{
	const struct dupscan_set *a = pa, *b = pb;
	return ds_cmp_file(ctx, &a->files[0], &b->files[0]);
}

/* A directory as a set member: its path with a '/', its totals in a record. */
static int dir_member(struct ds_tree *s, uint32_t d, const struct dir_info *di, struct dupscan_file *out)
{
	const struct ds_dir *dir = &s->dirs[d];
	struct ds_rec *r = ds_arena_alloc(&s->out, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* named as d's entry "": its path is d's, its argument d's */
	*r = (struct ds_rec){ .flags = dir->prot ? DS_F_PROTECTED : 0, .name = DS_NAME_EMPTY };
	struct stat st = { .st_dev = (dev_t)dir->dev, .st_ino = (ino_t)dir->ino, .st_size = (off_t)di[d].bytes,
			   .st_mode = S_IFDIR };
	int rc = ds_rec_identity(s, r, &st);
	if (rc)
		return rc;
	char *whole = ds_path_in(s, d, "", NULL, 0);
	size_t len = whole ? strlen(whole) : 0;
	char *p = whole ? ds_arena_alloc(&s->out, len + 2) : NULL;
	if (p)
		memcpy(p, whole, len + 1);
	free(whole);
	if (!p)
		return -ENOMEM;
	if (len == 0 || p[len - 1] != '/')
		strcpy(p + len, "/");
	*out = (struct dupscan_file){ p, r, s, dir->parent == DS_NONE ? (uint32_t)strlen(p) : ds_rel_offset(s, dir->parent),
				      DS_OUTSIDE | d };
	return 0;
}

/* The walked tree by directory: each one's files and subdirectories, as
 * compressed rows (file_off/sub_off into files and subs), and scratch for the
 * widest directory's key list. */
struct tree {
	struct dir_info *di;
	uint32_t *files, *subs;
	uint64_t *list;
};

/* With each directory's files counted in di: its subdirectories counted,
 * and where both begin in the compressed rows (counts set back to 0 for
 * filling). @return the most files and subdirectories of one directory. */
static uint32_t rows(const struct ds_tree *s, struct dir_info *di)
{
	uint32_t nd = s->ndirs, fo = 0, so = 0, widest = 0;
	for (uint32_t d = 0; d < nd; d++)
		if (s->dirs[d].parent != DS_NONE)
			di[s->dirs[d].parent].nsubs++;
	for (uint32_t d = 0; d < nd; d++) {
		di[d].file_off = fo;
		di[d].sub_off = so;
		fo += di[d].nfiles;
		so += di[d].nsubs;
		widest = di[d].nfiles + di[d].nsubs > widest ? di[d].nfiles + di[d].nsubs : widest;
		di[d].nfiles = di[d].nsubs = 0;
	}
	return widest;
}

/* Each directory's subdirectories into their row. */
static void fill_subs(const struct ds_tree *s, struct tree *t)
{
	for (uint32_t d = 0; d < s->ndirs; d++) {
		uint32_t p = s->dirs[d].parent;
		if (p != DS_NONE)
			t->subs[t->di[p].sub_off + t->di[p].nsubs++] = d;
	}
}

static int index_tree(const struct ds_results *s, struct tree *t)
{
	uint32_t nd = s->tree->ndirs;
	t->di = calloc(nd ? nd : 1, sizeof(*t->di));
	t->files = malloc((s->tree->nrecs ? s->tree->nrecs : 1) * sizeof(*t->files));
	t->subs = malloc((nd ? nd : 1) * sizeof(*t->subs));
	if (!t->di || !t->files || !t->subs)
		return -ENOMEM;
	struct dir_info *di = t->di;
	/* (records by directory: a run of records a directory) */
	for (uint32_t k = 0; k < s->tree->nruns; k++) {
		uint32_t end = k + 1 < s->tree->nruns ? s->tree->runs[k + 1].first : s->tree->nrecs;
		for (uint32_t i = s->tree->runs[k].first; i < end; i++)
			if (!(ds_rec(s->tree, i)->flags & DS_F_ALIAS))
				di[s->tree->runs[k].dir].nfiles++;
	}
	uint32_t widest = rows(s->tree, di);
	for (uint32_t k = 0; k < s->tree->nruns; k++) {
		uint32_t end = k + 1 < s->tree->nruns ? s->tree->runs[k + 1].first : s->tree->nrecs;
		struct dir_info *x = &di[s->tree->runs[k].dir];
		for (uint32_t i = s->tree->runs[k].first; i < end; i++)
			if (!(ds_rec(s->tree, i)->flags & DS_F_ALIAS))
				t->files[x->file_off + x->nfiles++] = i;
	}
	fill_subs(s->tree, t);
	t->list = malloc((widest ? widest : 1) * sizeof(*t->list));
	return t->list ? 0 : -ENOMEM;
}

/* Directory x's key, its files' classes in t->list[0..n): with its
 * subdirectories' keys, sorted and interned; left DS_NONE when anything in
 * it is unknown. @return 0 or -ENOMEM. */
static int key_one(struct tree *t, struct dir_info *x, uint32_t n, bool known, struct intern *in)
{
	for (uint32_t k = 0; known && k < x->nsubs; k++) {
		const struct dir_info *sub = &t->di[t->subs[x->sub_off + k]];
		known = sub->key != DS_NONE;
		t->list[n++] = DIR_TAG | sub->key;
		x->bytes += sub->bytes;
	}
	if (!known)
		return 0;
	if (ds_sort(t->list, n, sizeof(*t->list), ds_cmp_u64, NULL) != 0)
		return -ENOMEM;
	return (x->key = intern_list(in, t->list, n)) == DS_NONE ? -ENOMEM : 0;
}

/* Each directory's content key, bottom-up (a subdirectory is always added
 * after its parent): its files' classes and its subdirectories' keys, sorted
 * and interned; DS_NONE when anything in it is unknown. */
static int key_dirs(const struct ds_results *s, struct tree *t, struct intern *in,
		    uint64_t (*across)(const dupscan_scan *s, uint64_t cls))
{
	for (uint32_t d = s->tree->ndirs; d-- > 0;) {
		struct dir_info *x = &t->di[d];
		x->key = DS_NONE;
		if (s->tree->dirs[d].incomplete || s->tree->dirs[d].pseudo)
			continue;
		uint32_t n = 0;
		bool known = true;
		for (uint32_t k = 0; known && k < x->nfiles; k++) {
			const struct ds_rec *r = ds_rec(s->tree, t->files[x->file_off + k]);
			/* a file that could not be read is unknown, so is its directory */
			known = !((r->flags | ds_rec(s->tree, ds_rec_rep(s->tree, t->files[x->file_off + k]))->flags) & DS_F_DROPPED);
			uint32_t cls = ds_file_class(s, t->files[x->file_off + k]);
			t->list[n++] = across ? across(s->tree->scan, cls) : cls;
			x->bytes += ds_rec_size(s->tree, r);
		}
		if (key_one(t, x, n, known, in) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- another host's tree: the scan holding its directories, its entries ---- */

static int index_host(const struct ds_host_tree *h, struct tree *t)
{
	const struct ds_tree *m = h->dirs;
	uint32_t nd = m->ndirs;
	t->di = calloc(nd ? nd : 1, sizeof(*t->di));
	t->files = malloc((h->n ? h->n : 1) * sizeof(*t->files));
	t->subs = malloc((nd ? nd : 1) * sizeof(*t->subs));
	if (!t->di || !t->files || !t->subs)
		return -ENOMEM;
	struct dir_info *di = t->di;
	for (size_t i = 0; i < h->n; i++) {
		if (h->e[i].state == DS_HOST_UNLISTED)
			di[h->e[i].dir].unknown = true;
		else
			di[h->e[i].dir].nfiles++;
	}
	uint32_t widest = rows(m, di);
	for (size_t i = 0; i < h->n; i++) {
		struct dir_info *x = &di[h->e[i].dir];
		if (h->e[i].state != DS_HOST_UNLISTED)
			t->files[x->file_off + x->nfiles++] = (uint32_t)i;
	}
	fill_subs(m, t);
	t->list = malloc((widest ? widest : 1) * sizeof(*t->list));
	return t->list ? 0 : -ENOMEM;
}

/* key_dirs() for another host's tree: its entries' classes across hosts. */
static int key_host(const struct ds_host_tree *h, struct tree *t, struct intern *in)
{
	for (uint32_t d = h->dirs->ndirs; d-- > 0;) {
		struct dir_info *x = &t->di[d];
		x->key = DS_NONE;
		bool known = !x->unknown;
		uint32_t n = 0;
		for (uint32_t k = 0; known && k < x->nfiles; k++) {
			const struct ds_host_entry *e = &h->e[t->files[x->file_off + k]];
			known = e->state != DS_HOST_UNREAD;
			t->list[n++] = e->cls;
			x->bytes += e->size;
		}
		if (key_one(t, x, n, known, in) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- every host's trees together ---- */

/* One tree keyed: this host's walk, or another host's (s: its mirror). */
struct ftree {
	struct ds_tree *s;
	struct tree t;
};
struct forest {
	struct ftree *tr;
	size_t n;
};
#define CAND(tree, d) ((uint64_t)(tree) << 32 | (d))
#define CAND_TREE(c) ((size_t)((c) >> 32))
#define CAND_DIR(c) ((uint32_t)(c))

static const struct dir_info *cand_info(const struct forest *f, uint64_t c)
{
	return &f->tr[CAND_TREE(c)].t.di[CAND_DIR(c)];
}

static int cmp_by_key(void *ctx, const void *a, const void *b)
{
	uint32_t x = cand_info(ctx, *(const uint64_t *)a)->key, y = cand_info(ctx, *(const uint64_t *)b)->key;
	return x < y ? -1 : x > y;
}

/* Directories of equal keys, two or more, not empty unless -z: candidates
 * into order (by key), their sets into *ds (shallowest first). */
static int group_dirs(const struct ds_results *s, struct forest *f, uint64_t *order, struct dset **ds, uint32_t *nds)
{
	uint32_t ncand = 0;
	for (size_t k = 0; k < f->n; k++)
		for (uint32_t d = 0; d < f->tr[k].s->ndirs; d++) {
			const struct dir_info *di = &f->tr[k].t.di[d];
			if (di->key != DS_NONE && (di->bytes > 0 || s->core->opt.zero_match))
				order[ncand++] = CAND(k, d);
		}
	if (ds_sort(order, ncand, sizeof(*order), cmp_by_key, f) != 0 ||
	    !(*ds = malloc((ncand ? ncand : 1) * sizeof(**ds))))
		return -ENOMEM;
	*nds = 0;
	for (uint32_t i = 0, j; i < ncand; i = j) {
		for (j = i + 1; j < ncand && cand_info(f, order[j])->key == cand_info(f, order[i])->key;)
			j++;
		if (j - i < 2)
			continue;
		uint32_t depth = UINT32_MAX;
		for (uint32_t k = i; k < j; k++) {
			uint32_t dk = depth_of(f->tr[CAND_TREE(order[k])].s, CAND_DIR(order[k]));
			depth = dk < depth ? dk : depth;
		}
		(*ds)[(*nds)++] = (struct dset){ cand_info(f, order[i])->key, i, j - i, depth };
	}
	/* shallowest first: a set whose members all lie in listed directories is
	 * covered by them; the others are listed and cover what is below them */
	return ds_sort(*ds, *nds, sizeof(**ds), cmp_dset_depth, NULL) ? -ENOMEM : 0;
}

/* Is c's parent inside a listed directory of its tree? */
static bool cand_inside(const struct forest *f, uint64_t c)
{
	const struct ftree *tr = &f->tr[CAND_TREE(c)];
	return inside_reported(tr->s, tr->t.di, tr->s->dirs[CAND_DIR(c)].parent);
}

/* The directory sets not covered by one listed before, into all[*nall...]. */
static int list_dir_sets(struct ds_results *s, struct forest *f, const uint64_t *order, const struct dset *ds,
			 uint32_t nds, struct dupscan_set *all, size_t *nall)
{
	int rc = 0;
	for (uint32_t k = 0; k < nds && rc == 0; k++) {
		bool outside = false;
		for (uint32_t m = 0; m < ds[k].count && !outside; m++)
			outside = !cand_inside(f, order[ds[k].first + m]);
		if (!outside)
			continue;
		/* files in by a proof may lie in any of them: said of every directory set */
		struct dupscan_set set = { ds_arena_alloc(&s->tree->out, ds[k].count * sizeof(struct dupscan_file)), ds[k].count,
					   true, s->cache->oldest_proof != 0, false, s->cache->oldest_proof };
		if (!set.files)
			return -ENOMEM;
		for (uint32_t m = 0; m < ds[k].count && rc == 0; m++) {
			struct ftree *tr = &f->tr[CAND_TREE(order[ds[k].first + m])];
			uint32_t d = CAND_DIR(order[ds[k].first + m]);
			rc = dir_member(tr->s, d, tr->t.di, &set.files[m]);
			/* sets come shallowest first: what lies below is decided later */
			tr->t.di[d].reported = true;
		}
		if (rc == 0)
			rc = ds_sort(set.files, set.count, sizeof(*set.files), ds_cmp_file, s);
		if (rc == 0)
			all[(*nall)++] = set;
	}
	return rc;
}

/* This host's tree and each other host's, keyed with one table of keys. */
static int key_forest(struct ds_results *s, const struct ds_host_tree *hosts, size_t nhosts,
		      uint64_t (*across)(const dupscan_scan *s, uint64_t cls), struct forest *f, struct intern *in)
{
	f->n = 1 + nhosts;
	if (!(f->tr = calloc(f->n, sizeof(*f->tr))))
		return -ENOMEM;
	f->tr[0].s = s->tree;
	int rc = index_tree(s, &f->tr[0].t);
	if (rc == 0)
		rc = key_dirs(s, &f->tr[0].t, in, across);
	for (size_t k = 1; rc == 0 && k < f->n; k++) {
		f->tr[k].s = hosts[k - 1].dirs;
		rc = index_host(&hosts[k - 1], &f->tr[k].t);
		if (rc == 0)
			rc = key_host(&hosts[k - 1], &f->tr[k].t, in);
	}
	return rc;
}

static void free_forest(struct forest *f)
{
	for (size_t k = 0; f->tr && k < f->n; k++) {
		free(f->tr[k].t.list);
		free(f->tr[k].t.subs);
		free(f->tr[k].t.files);
		free(f->tr[k].t.di);
	}
	free(f->tr);
}

/* A file set stays when a member lies outside every listed directory. */
static bool set_outside(const struct ds_results *s, const struct forest *f, const struct dupscan_set *set)
{
	for (size_t m = 0; m < set->count; m++) {
		const struct dupscan_file *file = &set->files[m];
		size_t k = 0;
		while (k < f->n && f->tr[k].s != file->tree)
			k++;
		if (k == f->n || !inside_reported(f->tr[k].s, f->tr[k].t.di, ds_file_dir(file)))
			return true;
	}
	(void)s;
	return false;
}

int ds_build_dir_sets(struct ds_results *s, const struct ds_host_tree *hosts, size_t nhosts,
		      uint64_t (*across)(const dupscan_scan *s, uint64_t cls))
{
	struct forest f = { 0 };
	struct intern in = { 0 };
	size_t ndirs = s->tree->ndirs;
	for (size_t k = 0; k < nhosts; k++)
		ndirs += hosts[k].dirs->ndirs;
	uint64_t *order = malloc((ndirs ? ndirs : 1) * sizeof(*order));
	struct dset *ds = NULL;
	uint32_t nds = 0;
	struct dupscan_set *all = NULL;
	size_t nall = 0;
	int rc = order ? key_forest(s, hosts, nhosts, across, &f, &in) : -ENOMEM;
	if (rc == 0)
		rc = group_dirs(s, &f, order, &ds, &nds);
	if (rc == 0 && !(all = malloc((nds + s->nsets + 1) * sizeof(*all))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = list_dir_sets(s, &f, order, ds, nds, all, &nall);
	if (rc == 0)
		rc = ds_sort(all, nall, sizeof(*all), cmp_set, s);
	for (size_t k = 0; rc == 0 && k < s->nsets; k++)
		if (set_outside(s, &f, &s->sets[k]))
			all[nall++] = s->sets[k];
	if (rc == 0) {
		free(s->sets);
		s->sets = all;
		s->nsets = nall;
		all = NULL;
	}
	free(all);
	free(ds);
	intern_free(&in);
	free(order);
	free_forest(&f);
	return rc;
}
