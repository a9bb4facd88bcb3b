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
	uint32_t rep = ds_rec(s, i)->rep;
	const struct ds_rec *r = ds_rec(s, rep);
	if (r->size == 0)
		return EMPTY_CLASS;
	uint32_t cls = ds_index_class(&s->index, rep);
	return cls != DS_NONE ? cls : rep;
}

static bool inside_reported(const dupscan_scan *s, const struct dir_info *di, uint32_t d)
{
	for (; d != DS_NONE; d = s->dirs[d].parent)
		if (di[d].reported)
			return true;
	return false;
}

static uint32_t depth_of(const dupscan_scan *s, uint32_t d)
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
	const struct ds_dir *dir = &s->dirs[d];
	struct ds_rec *r = ds_arena_alloc(&s->out, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = (struct ds_rec){ .size = di[d].bytes, .dev = dir->dev, .ino = dir->ino, .dir = dir->parent,
			      .mode = S_IFDIR, .arg = dir->arg, .rep = DS_NONE,
			      .flags = dir->prot ? DS_F_PROTECTED : 0, .name = dir->name };
	size_t len = ds_rec_path(s, r, NULL, 0);
	char *p = ds_arena_alloc(&s->out, len + 2);
	if (!p)
		return -ENOMEM;
	ds_rec_path(s, r, p, len + 1);
	if (len == 0 || p[len - 1] != '/')
		strcpy(p + len, "/");
	*out = (struct dupscan_file){ p, r, dir->parent == DS_NONE ? (uint32_t)strlen(p) : ds_rel_offset(s, dir->parent), NULL, NULL };
	return 0;
}

int ds_build_dir_sets(dupscan_scan *s)
{
	int rc = 0;
	uint32_t nd = s->ndirs;
	struct dir_info *di = calloc(nd ? nd : 1, sizeof(*di));
	uint32_t *files = malloc((s->nrecs ? s->nrecs : 1) * sizeof(*files));
	uint32_t *subs = malloc((nd ? nd : 1) * sizeof(*subs));
	uint32_t *order = malloc((nd ? nd : 1) * sizeof(*order));
	uint64_t *list = NULL;
	struct dset *ds = NULL;
	struct dupscan_set *all = NULL;
	struct intern in = { 0 };
	if (!di || !files || !subs || !order) {
		rc = -ENOMEM;
		goto out;
	}
	/* each directory's files and subdirectories, as compressed rows */
	for (uint32_t i = 0; i < s->nrecs; i++)
		if (!(ds_rec(s, i)->flags & DS_F_ALIAS))
			di[ds_rec(s, i)->dir].nfiles++;
	for (uint32_t d = 0; d < nd; d++)
		if (s->dirs[d].parent != DS_NONE)
			di[s->dirs[d].parent].nsubs++;
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
	for (uint32_t i = 0; i < s->nrecs; i++) {
		const struct ds_rec *r = ds_rec(s, i);
		if (!(r->flags & DS_F_ALIAS))
			files[di[r->dir].file_off + di[r->dir].nfiles++] = i;
	}
	for (uint32_t d = 0; d < nd; d++) {
		uint32_t p = s->dirs[d].parent;
		if (p != DS_NONE)
			subs[di[p].sub_off + di[p].nsubs++] = d;
	}
	list = malloc((widest ? widest : 1) * sizeof(*list));
	if (!list) {
		rc = -ENOMEM;
		goto out;
	}
	/* bottom-up: a subdirectory is always added after its parent */
	for (uint32_t d = nd; d-- > 0;) {
		struct dir_info *x = &di[d];
		x->key = DS_NONE;
		if (s->dirs[d].incomplete || s->dirs[d].pseudo)
			continue;
		uint32_t n = 0;
		bool known = true;
		for (uint32_t k = 0; known && k < x->nfiles; k++) {
			const struct ds_rec *r = ds_rec(s, files[x->file_off + k]);
			/* a file that could not be read is unknown, so is its directory */
			known = !((r->flags | ds_rec(s, r->rep)->flags) & DS_F_DROPPED);
			list[n++] = file_class(s, files[x->file_off + k]);
			x->bytes += r->size;
		}
		for (uint32_t k = 0; known && k < x->nsubs; k++) {
			const struct dir_info *sub = &di[subs[x->sub_off + k]];
			known = sub->key != DS_NONE;
			list[n++] = DIR_TAG | sub->key;
			x->bytes += sub->bytes;
		}
		if (!known)
			continue;
		rc = ds_sort(list, n, sizeof(*list), cmp_u64, NULL);
		if (rc)
			goto out;
		x->key = intern_list(&in, list, n);
		if (x->key == DS_NONE) {
			rc = -ENOMEM;
			goto out;
		}
	}
	/* directory sets: equal keys, two or more, not empty unless -z */
	uint32_t ncand = 0;
	for (uint32_t d = 0; d < nd; d++)
		if (di[d].key != DS_NONE && (di[d].bytes > 0 || s->zero_match))
			order[ncand++] = d;
	rc = ds_sort(order, ncand, sizeof(*order), cmp_by_key, di);
	if (rc)
		goto out;
	uint32_t nds = 0;
	ds = malloc((ncand ? ncand : 1) * sizeof(*ds));
	if (!ds) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ncand;) {
		uint32_t j = i + 1;
		while (j < ncand && di[order[j]].key == di[order[i]].key)
			j++;
		if (j - i >= 2) {
			uint32_t depth = UINT32_MAX;
			for (uint32_t k = i; k < j; k++) {
				uint32_t dk = depth_of(s, order[k]);
				depth = dk < depth ? dk : depth;
			}
			ds[nds++] = (struct dset){ di[order[i]].key, i, j - i, depth };
		}
		i = j;
	}
	/* shallowest first: a set whose members all lie in listed directories is
	 * covered by them; the others are listed and cover what is below them */
	rc = ds_sort(ds, nds, sizeof(*ds), cmp_dset_depth, NULL);
	if (rc)
		goto out;
	all = malloc((nds + s->nsets + 1) * sizeof(*all));
	if (!all) {
		rc = -ENOMEM;
		goto out;
	}
	size_t nall = 0;
	for (uint32_t k = 0; k < nds; k++) {
		bool outside = false;
		for (uint32_t m = 0; m < ds[k].count && !outside; m++)
			outside = !inside_reported(s, di, s->dirs[order[ds[k].first + m]].parent);
		if (!outside)
			continue;
		/* files in by a proof may lie in any of them: said of every directory set */
		struct dupscan_set set = { ds_arena_alloc(&s->out, ds[k].count * sizeof(struct dupscan_file)), ds[k].count,
					   true, s->oldest_proof != 0, false, s->oldest_proof };
		if (!set.files) {
			rc = -ENOMEM;
			goto out;
		}
		for (uint32_t m = 0; m < ds[k].count && rc == 0; m++) {
			rc = dir_member(s, order[ds[k].first + m], di, &set.files[m]);
			/* sets come shallowest first: what lies below is decided later */
			di[order[ds[k].first + m]].reported = true;
		}
		if (rc == 0)
			rc = ds_sort(set.files, set.count, sizeof(*set.files), ds_cmp_file, s);
		if (rc)
			goto out;
		all[nall++] = set;
	}
	rc = ds_sort(all, nall, sizeof(*all), cmp_set, s);
	if (rc)
		goto out;
	/* file sets: kept when a member lies outside every listed directory */
	for (size_t k = 0; k < s->nsets; k++) {
		const struct dupscan_set *set = &s->sets[k];
		bool outside = false;
		for (size_t m = 0; m < set->count && !outside; m++)
			outside = !inside_reported(s, di, set->files[m].rec->dir);
		if (outside)
			all[nall++] = *set;
	}
	free(s->sets);
	s->sets = all;
	s->nsets = nall;
	all = NULL;
out:
	free(all);
	free(ds);
	free(list);
	intern_free(&in);
	free(order);
	free(subs);
	free(files);
	free(di);
	return rc;
}
