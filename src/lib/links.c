/* SPDX-License-Identifier: MIT */
/* links.c: hard links, one representative record per inode, the first of its
 * paths in the chosen order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static bool same_inode(const dupscan_scan *s, const struct ds_rec *a, const struct ds_rec *b)
{
	return a->ino == b->ino && ds_rec_devi(s, a) == ds_rec_devi(s, b);
}

static bool same_place(const dupscan_scan *s, const struct ds_rec *a, const struct ds_rec *b)
{
	const struct ds_dir *da = &s->tree.dirs[a->dir], *db = &s->tree.dirs[b->dir];
	return da->dev == db->dev && da->ino == db->ino && strcmp(ds_rec_name(s, a), ds_rec_name(s, b)) == 0;
}

/* Among the paths of one inode, the first in the chosen order represents it,
 * whatever order the walk met them in. */
static int collapse_run(dupscan_scan *s, const uint32_t *run, size_t n)
{
	uint32_t best = DS_NONE;
	char *best_path = NULL;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct ds_rec *r = ds_rec(s, run[i]);
		for (size_t j = 0; j < i; j++) {
			const struct ds_rec *o = ds_rec(s, run[j]);
			if (!(o->flags & DS_F_ALIAS) && same_place(s, r, o)) {
				r->flags |= DS_F_ALIAS;
				break;
			}
		}
		if (r->flags & DS_F_ALIAS)
			continue;
		char *p = ds_rec_path_alloc(s, r);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		if (best == DS_NONE || ds_order_cmp(s, r, p, ds_rec(s, best), best_path) < 0) {
			free(best_path);
			best_path = p;
			best = run[i];
		} else {
			free(p);
		}
	}
	free(best_path);
	if (best != DS_NONE)
		for (size_t i = 0; i < n; i++)
			ds_rec(s, run[i])->rep = best;
	return rc;
}

/* The paths of one inode side by side: by inode number, then device. */
static uint64_t inode_key(const dupscan_scan *s, const struct ds_rec *r, uint32_t *minor)
{
	*minor = ds_rec_devi(s, r);
	return r->ino;
}

int ds_collapse_links(dupscan_scan *s, uint32_t *order)
{
	for (uint32_t i = 0; i < s->tree.nrecs; i++)
		order[i] = i;
	/* by inode, then record index: visit order decides among paths */
	int rc = ds_sort_recs(s, order, s->tree.nrecs, inode_key);
	for (uint32_t i = 0; rc == 0 && i < s->tree.nrecs;) {
		uint32_t j = i + 1;
		while (j < s->tree.nrecs && same_inode(s, ds_rec(s, order[i]), ds_rec(s, order[j])))
			j++;
		if (j - i > 1)
			rc = collapse_run(s, order + i, j - i);
		i = j;
	}
	return rc;
}
