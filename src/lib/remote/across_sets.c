/* SPDX-License-Identifier: MIT */
/* across_sets.c: the sets across hosts: each host's sets and the files its
 * matching joined, as the scan's sets (the remote files named first), and
 * with --dirs each content's class across hosts and each host's tree as
 * dirsets.c takes it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xmatch.h"
#include "sets/sets.h"

/* Files an item stands for, into files (NULL: only counted). */
static int item_files(struct xmatch *x, const struct xitem *t, struct dupscan_file *files, size_t *n)
{
	struct ds_hosts *s = x->s;
	struct ds_remote *r = site_remote(x, t);
	int rc = 0;
	switch (t->kind) {
	case X_LSET:
		for (size_t k = 0; k < s->results->sets[t->ref].count; k++, (*n)++)
			if (files)
				files[*n] = s->results->sets[t->ref].files[k];
		return 0;
	case X_LUNIQ:
		if (files) {
			uint32_t rec = (uint32_t)t->ref;
			char *p = ds_rec_path_dup(s->tree, rec);
			if (!p)
				return -ENOMEM;
			files[*n] = ds_file_of(s->tree, p, rec, ds_rel_offset(s->tree, ds_rec_dir(s->tree, rec)));
			/* no longer unique here: ds_each_unique() leaves it out */
			ds_rec(s->tree, rec)->flags |= DS_F_ACROSS;
		}
		(*n)++;
		return 0;
	case X_RSET:
		for (uint64_t k = 0; rc == 0 && k < r->sets[t->ref].n; k++, (*n)++)
			if (files)
				rc = ds_remote_file(r, r->sets[t->ref].first + k, &files[*n]);
		return rc;
	default:
		if (files)
			rc = ds_remote_file(r, t->ref, &files[*n]);
		(*n)++;
		return rc;
	}
}

/* A set of the items t[0..n) that are group's (all, for DS_NONE). */
static int items_set(struct xmatch *x, const struct xitem *t, size_t n, uint32_t group, struct dupscan_set *set)
{
	size_t count = 0;
	int rc = 0;
	for (size_t b = 0; rc == 0 && b < n; b++)
		if (group == DS_NONE || t[b].group == group)
			rc = item_files(x, &t[b], NULL, &count);
	struct dupscan_file *files = ds_arena_alloc(&x->s->tree->out, count * sizeof(*files));
	if (!files)
		return -ENOMEM;
	*set = (struct dupscan_set){ .files = files };
	for (size_t b = 0; rc == 0 && b < n; b++)
		if (group == DS_NONE || t[b].group == group)
			rc = item_files(x, &t[b], files, &set->count);
	return rc;
}

/* An item's class before joining (ds_across_class()'s raw). */
static uint64_t raw_class(const struct xmatch *x, const struct xitem *t)
{
	switch (t->kind) {
	case X_LSET: return ds_file_class(x->s->results, x->s->results->sets[t->ref].files[0].idx);
	case X_LUNIQ: return ds_file_class(x->s->results, (uint32_t)t->ref);
	case X_RSET: return (uint64_t)t->site << 56 | site_remote(x, t)->sets[t->ref].first;
	default: return (uint64_t)t->site << 56 | t->ref;
	}
}

static int cmp_pair(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Each joined item's raw class and its set's (its first item's), by raw. */
static int class_map(struct xmatch *x)
{
	struct ds_hosts *s = x->s;
	size_t n = 0;
	for (size_t i = 0; i < x->n; i++)
		n += x->it[i].group != DS_NONE;
	free(s->across);
	s->nacross = 0;
	if (!(s->across = malloc((n ? n : 1) * 2 * sizeof(*s->across))))
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++)
		if (x->it[i].group != DS_NONE) {
			s->across[2 * s->nacross] = raw_class(x, &x->it[i]);
			s->across[2 * s->nacross++ + 1] = raw_class(x, &x->it[x->it[i].group]);
		}
	return ds_sort(s->across, s->nacross, 2 * sizeof(*s->across), cmp_pair, NULL);
}

uint64_t ds_across_class(const struct ds_hosts *s, uint64_t raw)
{
	size_t lo = 0, hi = s->nacross;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->across[2 * mid] < raw)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nacross && s->across[2 * lo] == raw ? s->across[2 * lo + 1] : raw;
}

/* The set of r (site) holding its file number id, as a raw class. */
static uint64_t remote_raw(const struct ds_remote *r, uint32_t site, uint64_t id)
{
	size_t lo = 0, hi = r->nsets;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->sets[mid].first + r->sets[mid].n <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t first = lo < r->nsets && r->sets[lo].first <= id ? r->sets[lo].first : id;
	return (uint64_t)site << 56 | first;
}

/* With DUPSCAN_OPT_DIRS: each remote tree entry's class across hosts. */
static int tree_classes(struct ds_hosts *s)
{
	for (size_t k = 0; k < s->nremotes; k++) {
		struct ds_remote *r = s->remotes[k];
		free(r->tclass);
		if (!(r->tclass = malloc((r->ntent ? r->ntent : 1) * sizeof(*r->tclass))))
			return -ENOMEM;
		for (size_t i = 0; i < r->ntent; i++)
			r->tclass[i] = r->tent[i].what == 1 ? DS_EMPTY_CLASS :
				       r->tent[i].what == 0 ? ds_across_class(s, remote_raw(r, (uint32_t)k + 1, r->tent[i].id)) : 0;
	}
	return 0;
}

int ds_across_build(struct xmatch *x)
{
	struct ds_hosts *s = x->s;
	/* (before the local sets are replaced: an item names one by its index) */
	if (s->core->opt.dir_sets) {
		int rc = class_map(x);
		if (rc)
			return rc;
	}
	size_t total = s->results->nsets, n = 0;
	for (size_t k = 0; k < s->nremotes; k++)
		total += s->remotes[k]->nsets;
	for (size_t i = 0; i < x->n; i++) {
		struct xitem *t = &x->it[i];
		total += t->group == i;
		if (t->group != DS_NONE && t->kind == X_RUNIQ)
			site_remote(x, t)->matched[t->ref - site_remote(x, t)->nset] = 1;
	}
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		rc = ds_remote_name_matched(s->remotes[k], &x->w);
	struct dupscan_set *sets = malloc((total ? total : 1) * sizeof(*sets));
	/* the sets of each side that joined one across hosts */
	uint8_t *used = calloc(total ? total : 1, 1);
	if (rc == 0 && (!sets || !used))
		rc = -ENOMEM;
	for (size_t i = 0, j; rc == 0 && i < x->n; i = j) {
		for (j = i + 1; j < x->n && x->it[j].size == x->it[i].size && x->it[j].partial == x->it[i].partial &&
				x->it[j].full == x->it[i].full; j++)
			;
		for (size_t a = i; rc == 0 && a < j; a++)
			if (x->it[a].group == a)
				rc = items_set(x, x->it + a, j - a, (uint32_t)a, &sets[n++]);
		for (size_t a = i; a < j; a++) {
			const struct xitem *t = &x->it[a];
			if (t->group == DS_NONE || (t->kind != X_LSET && t->kind != X_RSET))
				continue;
			size_t at = t->ref;
			for (uint32_t k = 1; k <= t->site; k++)
				at += k == 1 ? s->results->nsets : s->remotes[k - 2]->nsets;
			used[at] = 1;
		}
	}
	size_t at = 0;
	for (size_t i = 0; rc == 0 && i < s->results->nsets; i++, at++)
		if (!used[at])
			sets[n++] = s->results->sets[i];
	for (size_t k = 0; rc == 0 && k < s->nremotes; k++)
		for (size_t i = 0; rc == 0 && i < s->remotes[k]->nsets; i++, at++) {
			const struct xitem t = { .kind = X_RSET, .ref = i, .site = (uint32_t)k + 1 };
			if (!used[at] && (rc = items_set(x, &t, 1, DS_NONE, &sets[n])) == 0)
				n++;
		}
	free(used);
	if (rc) {
		free(sets);
		return rc;
	}
	free(s->results->sets);
	s->results->sets = sets;
	s->results->nsets = n;
	rc = ds_finish_sets(s->results);
	if (rc == 0 && s->core->opt.dir_sets)
		rc = tree_classes(s);
	return rc;
}

/* ---- each other host's tree for the directory sets ---- */

static uint64_t entry_size(const struct ds_remote *r, const struct ds_tent *e)
{
	if (e->what != 0)
		return 0;
	if (e->id < r->nset)
		return ds_rec_size(&r->mirror->tree, ds_rec(&r->mirror->tree, r->rec_of[e->id]));
	return r->usize[e->id - r->nset];
}

void ds_host_trees_free(struct ds_host_tree *h, size_t n)
{
	for (size_t k = 0; h && k < n; k++)
		free(h[k].e);
	free(h);
}

int ds_host_trees(const struct ds_hosts *s, struct ds_host_tree **out)
{
	struct ds_host_tree *h = calloc(s->nremotes ? s->nremotes : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t k = 0; k < s->nremotes; k++) {
		const struct ds_remote *r = s->remotes[k];
		h[k] = (struct ds_host_tree){ &r->mirror->tree, malloc((r->ntent ? r->ntent : 1) * sizeof(*h[k].e)), r->ntent };
		if (!h[k].e) {
			ds_host_trees_free(h, s->nremotes);
			return -ENOMEM;
		}
		for (size_t i = 0; i < r->ntent; i++) {
			/* what: 0 a file's content, 1 empty, 2 unknown; 3 an incomplete directory */
			const struct ds_tent *e = &r->tent[i];
			uint32_t state = e->what == 3 ? DS_HOST_UNLISTED : e->what == 2 ? DS_HOST_UNREAD : DS_HOST_FILE;
			h[k].e[i] = (struct ds_host_entry){ state == DS_HOST_UNLISTED ? 0 : r->tclass[i], entry_size(r, e),
							    r->wdir[e->dir], state };
		}
	}
	*out = h;
	return 0;
}
