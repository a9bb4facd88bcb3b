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

#define EMPTY_CLASS (DS_NONE - 1)          /* zero-length files: all equal, never read */
#define DIR_TAG (UINT64_C(1) << 63)        /* keeps a subdirectory's key apart from a file's */

struct dir_info {
	uint32_t nfiles, nsubs;
	uint32_t file_off, sub_off;  /* into the CSR arrays */
	uint32_t key;                /* interned content key, DS_NONE when incomplete */
	uint64_t bytes;              /* total size of the files below */
	bool reported;               /* a member of a listed directory set */
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
		if (in->hash[k] == h && in->len[k] == n && memcmp(in->lists + in->start[k], v, n * sizeof(*v)) == 0)
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

static int cmp_u64(void *ctx, const void *a, const void *b)
{
	(void)ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The content class of record i for directory matching: its confirmed class
 * (named by a member record), or for a file with no twin its own inode's
 * record, which no other content shares. */
static uint32_t file_class(const dupscan_scan *s, uint32_t i)
{
	uint32_t rep = ds_rec_rep(s, i);
	const struct ds_rec *r = ds_rec(s, rep);
	if (ds_rec_size(s, r) == 0)
		return EMPTY_CLASS;
	uint32_t cls = ds_index_class(&s->index, rep);
	return cls != DS_NONE ? cls : rep;
}

static bool inside_reported(const dupscan_scan *s, const struct dir_info *di, uint32_t d)
{
	for (; d != DS_NONE; d = s->tree.dirs[d].parent)
		if (di[d].reported)
			return true;
	return false;
}

static uint32_t depth_of(const dupscan_scan *s, uint32_t d)
{
	uint32_t n = 0;
	for (; d != DS_NONE; d = s->tree.dirs[d].parent)
		n++;
	return n;
}

struct dset {
	uint32_t key, first, count; /* members: order[first .. first+count) */
	uint32_t depth;             /* of its shallowest member */
};

static int cmp_by_key(void *ctx, const void *a, const void *b)
{
	const struct dir_info *di = ctx;
	uint32_t x = di[*(const uint32_t *)a].key, y = di[*(const uint32_t *)b].key;
	return x < y ? -1 : x > y;
}

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
static int dir_member(dupscan_scan *s, uint32_t d, const struct dir_info *di, struct dupscan_file *out)
{
	const struct ds_dir *dir = &s->tree.dirs[d];
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

static int index_tree(const dupscan_scan *s, struct tree *t)
{
	uint32_t nd = s->tree.ndirs;
	t->di = calloc(nd ? nd : 1, sizeof(*t->di));
	t->files = malloc((s->tree.nrecs ? s->tree.nrecs : 1) * sizeof(*t->files));
	t->subs = malloc((nd ? nd : 1) * sizeof(*t->subs));
	if (!t->di || !t->files || !t->subs)
		return -ENOMEM;
	struct dir_info *di = t->di;
	/* (records by directory: a run of records a directory) */
	for (uint32_t k = 0; k < s->tree.nruns; k++) {
		uint32_t end = k + 1 < s->tree.nruns ? s->tree.runs[k + 1].first : s->tree.nrecs;
		for (uint32_t i = s->tree.runs[k].first; i < end; i++)
			if (!(ds_rec(s, i)->flags & DS_F_ALIAS))
				di[s->tree.runs[k].dir].nfiles++;
	}
	for (uint32_t d = 0; d < nd; d++)
		if (s->tree.dirs[d].parent != DS_NONE)
			di[s->tree.dirs[d].parent].nsubs++;
	uint32_t fo = 0, so = 0, widest = 0;
	for (uint32_t d = 0; d < nd; d++) {
		di[d].file_off = fo;
		di[d].sub_off = so;
		fo += di[d].nfiles;
		so += di[d].nsubs;
		if (di[d].nfiles + di[d].nsubs > widest)
			widest = di[d].nfiles + di[d].nsubs;
		di[d].nfiles = di[d].nsubs = 0;
	}
	for (uint32_t k = 0; k < s->tree.nruns; k++) {
		uint32_t end = k + 1 < s->tree.nruns ? s->tree.runs[k + 1].first : s->tree.nrecs;
		struct dir_info *x = &di[s->tree.runs[k].dir];
		for (uint32_t i = s->tree.runs[k].first; i < end; i++)
			if (!(ds_rec(s, i)->flags & DS_F_ALIAS))
				t->files[x->file_off + x->nfiles++] = i;
	}
	for (uint32_t d = 0; d < nd; d++) {
		uint32_t p = s->tree.dirs[d].parent;
		if (p != DS_NONE)
			t->subs[di[p].sub_off + di[p].nsubs++] = d;
	}
	t->list = malloc((widest ? widest : 1) * sizeof(*t->list));
	return t->list ? 0 : -ENOMEM;
}

/* Each directory's content key, bottom-up (a subdirectory is always added
 * after its parent): its files' classes and its subdirectories' keys, sorted
 * and interned; DS_NONE when anything in it is unknown. */
static int key_dirs(const dupscan_scan *s, struct tree *t, struct intern *in)
{
	for (uint32_t d = s->tree.ndirs; d-- > 0;) {
		struct dir_info *x = &t->di[d];
		x->key = DS_NONE;
		if (s->tree.dirs[d].incomplete || s->tree.dirs[d].pseudo)
			continue;
		uint32_t n = 0;
		bool known = true;
		for (uint32_t k = 0; known && k < x->nfiles; k++) {
			const struct ds_rec *r = ds_rec(s, t->files[x->file_off + k]);
			/* a file that could not be read is unknown, so is its directory */
			known = !((r->flags | ds_rec(s, ds_rec_rep(s, t->files[x->file_off + k]))->flags) & DS_F_DROPPED);
			t->list[n++] = file_class(s, t->files[x->file_off + k]);
			x->bytes += ds_rec_size(s, r);
		}
		for (uint32_t k = 0; known && k < x->nsubs; k++) {
			const struct dir_info *sub = &t->di[t->subs[x->sub_off + k]];
			known = sub->key != DS_NONE;
			t->list[n++] = DIR_TAG | sub->key;
			x->bytes += sub->bytes;
		}
		if (!known)
			continue;
		if (ds_sort(t->list, n, sizeof(*t->list), cmp_u64, NULL) != 0)
			return -ENOMEM;
		if ((x->key = intern_list(in, t->list, n)) == DS_NONE)
			return -ENOMEM;
	}
	return 0;
}

/* Directories of equal keys, two or more, not empty unless -z: candidates
 * into order (by key), their sets into *ds (shallowest first). */
static int group_dirs(const dupscan_scan *s, const struct dir_info *di, uint32_t *order, struct dset **ds,
		      uint32_t *nds)
{
	uint32_t ncand = 0;
	for (uint32_t d = 0; d < s->tree.ndirs; d++)
		if (di[d].key != DS_NONE && (di[d].bytes > 0 || s->opt.zero_match))
			order[ncand++] = d;
	if (ds_sort(order, ncand, sizeof(*order), cmp_by_key, (void *)di) != 0 ||
	    !(*ds = malloc((ncand ? ncand : 1) * sizeof(**ds))))
		return -ENOMEM;
	*nds = 0;
	for (uint32_t i = 0, j; i < ncand; i = j) {
		for (j = i + 1; j < ncand && di[order[j]].key == di[order[i]].key;)
			j++;
		if (j - i < 2)
			continue;
		uint32_t depth = UINT32_MAX;
		for (uint32_t k = i; k < j; k++) {
			uint32_t dk = depth_of(s, order[k]);
			depth = dk < depth ? dk : depth;
		}
		(*ds)[(*nds)++] = (struct dset){ di[order[i]].key, i, j - i, depth };
	}
	/* shallowest first: a set whose members all lie in listed directories is
	 * covered by them; the others are listed and cover what is below them */
	return ds_sort(*ds, *nds, sizeof(**ds), cmp_dset_depth, NULL) ? -ENOMEM : 0;
}

/* The directory sets not covered by one listed before, into all[*nall...]. */
static int list_dir_sets(dupscan_scan *s, struct dir_info *di, const uint32_t *order, const struct dset *ds,
			 uint32_t nds, struct dupscan_set *all, size_t *nall)
{
	int rc = 0;
	for (uint32_t k = 0; k < nds && rc == 0; k++) {
		bool outside = false;
		for (uint32_t m = 0; m < ds[k].count && !outside; m++)
			outside = !inside_reported(s, di, s->tree.dirs[order[ds[k].first + m]].parent);
		if (!outside)
			continue;
		/* files in by a proof may lie in any of them: said of every directory set */
		struct dupscan_set set = { ds_arena_alloc(&s->out, ds[k].count * sizeof(struct dupscan_file)), ds[k].count,
					   true, s->cache.oldest_proof != 0, false, s->cache.oldest_proof };
		if (!set.files)
			return -ENOMEM;
		for (uint32_t m = 0; m < ds[k].count && rc == 0; m++) {
			rc = dir_member(s, order[ds[k].first + m], di, &set.files[m]);
			/* sets come shallowest first: what lies below is decided later */
			di[order[ds[k].first + m]].reported = true;
		}
		if (rc == 0)
			rc = ds_sort(set.files, set.count, sizeof(*set.files), ds_cmp_file, s);
		if (rc == 0)
			all[(*nall)++] = set;
	}
	return rc;
}

int ds_build_dir_sets(dupscan_scan *s)
{
	struct tree t = { 0 };
	struct intern in = { 0 };
	uint32_t *order = malloc((s->tree.ndirs ? s->tree.ndirs : 1) * sizeof(*order));
	struct dset *ds = NULL;
	uint32_t nds = 0;
	struct dupscan_set *all = NULL;
	size_t nall = 0;
	int rc = order ? index_tree(s, &t) : -ENOMEM;
	if (rc == 0)
		rc = key_dirs(s, &t, &in);
	if (rc == 0)
		rc = group_dirs(s, t.di, order, &ds, &nds);
	if (rc == 0 && !(all = malloc((nds + s->nsets + 1) * sizeof(*all))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = list_dir_sets(s, t.di, order, ds, nds, all, &nall);
	if (rc == 0)
		rc = ds_sort(all, nall, sizeof(*all), cmp_set, s);
	/* file sets: kept when a member lies outside every listed directory */
	for (size_t k = 0; rc == 0 && k < s->nsets; k++) {
		const struct dupscan_set *set = &s->sets[k];
		bool outside = false;
		for (size_t m = 0; m < set->count && !outside; m++)
			outside = !inside_reported(s, t.di, ds_file_dir(&set->files[m]));
		if (outside)
			all[nall++] = *set;
	}
	if (rc == 0) {
		free(s->sets);
		s->sets = all;
		s->nsets = nall;
		all = NULL;
	}
	free(all);
	free(ds);
	free(t.list);
	intern_free(&in);
	free(order);
	free(t.subs);
	free(t.files);
	free(t.di);
	return rc;
}
