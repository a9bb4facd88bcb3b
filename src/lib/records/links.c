/* SPDX-License-Identifier: MIT */
/* links.c: hard links, one representative record per inode, the first of its
 * paths in the chosen order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

static bool same_inode(const struct ds_tree *s, const struct ds_rec *a, const struct ds_rec *b)
{
	return ds_rec_ino(s, a) == ds_rec_ino(s, b) && ds_rec_devi(s, a) == ds_rec_devi(s, b);
}

static bool same_place(struct ds_tree *s, uint32_t a, uint32_t b)
{
	char na[DS_NAME_BUF], nb[DS_NAME_BUF];
	return strcmp(ds_rec_name(s, ds_rec(s, a), na), ds_rec_name(s, ds_rec(s, b), nb)) == 0 &&
	       ds_same_dir(s, ds_rec_dir(s, a), ds_rec_dir(s, b));
}

/* Paths of one inode number that are one path reached twice (DS_F_ALIAS
 * on the later). @return how many distinct paths. */
static size_t mark_aliases(struct ds_tree *s, const uint32_t *run, size_t n)
{
	size_t distinct = 0;
	for (size_t i = 0; i < n; i++) {
		struct ds_rec *r = ds_rec(s, run[i]);
		for (size_t j = 0; j < i && !(r->flags & DS_F_ALIAS); j++)
			if (!(ds_rec(s, run[j])->flags & DS_F_ALIAS) && same_place(s, run[i], run[j]))
				r->flags |= DS_F_ALIAS;
		distinct += !(r->flags & DS_F_ALIAS);
	}
	return distinct;
}

/* Two paths of one inode number, one of them the file's only name: the
 * kernel says they are two files, so the device's numbers are not kept
 * (FUSE without use_ino, SMB with noserverino, a reconnected share). Not
 * with -s: a followed symlink is another path to a file of one name. */
static void check_numbers(struct ds_tree *s, const uint32_t *run, size_t n)
{
	if (mark_aliases(s, run, n) < 2 || s->core->opt.follow_symlinks)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct ds_rec *r = ds_rec(s, run[i]);
		if (!(r->flags & DS_F_ALIAS) && !ds_rec_multilink(s, r)) {
			ds_inodes_distrust(s, ds_rec_dev(s, r));
			return;
		}
	}
}

/* Among the paths of one inode, the first in the chosen order represents it,
 * whatever order the walk met them in. */
static int collapse_run(struct ds_tree *s, const uint32_t *run, size_t n, size_t *cap_links)
{
	uint32_t best = DS_NONE;
	char *best_path = NULL;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct ds_rec *r = ds_rec(s, run[i]);
		if (r->flags & DS_F_ALIAS) /* (marked by check_numbers()) */
			continue;
		char *p = ds_rec_path_alloc(s, run[i]);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		struct dupscan_file f = ds_file_of(s, p, run[i], 0);
		struct dupscan_file fb = best != DS_NONE ? ds_file_of(s, best_path, best, 0) : f;
		if (best == DS_NONE || ds_order_cmp(s, &f, &fb) < 0) {
			free(best_path);
			best_path = p;
			best = run[i];
		} else {
			free(p);
		}
	}
	free(best_path);
	for (size_t i = 0; rc == 0 && best != DS_NONE && i < n; i++) {
		if (run[i] == best)
			continue;
		if (DS_GROW(s->links, *cap_links, 2 * ((size_t)s->nlinks + 1)))
			return -ENOMEM;
		s->links[2 * s->nlinks] = run[i];
		s->links[2 * s->nlinks + 1] = best;
		s->nlinks++;
		ds_rec(s, run[i])->flags |= DS_F_LINKED;
	}
	return rc;
}

/* The paths of one inode side by side: by inode number, then device. */
static uint64_t inode_key(const struct ds_tree *s, uint32_t ri, uint32_t *minor)
{
	const struct ds_rec *r = ds_rec(s, ri);
	*minor = ds_rec_devi(s, r);
	return ds_rec_ino(s, r);
}

static int cmp_link(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

int ds_collapse_links(struct ds_tree *s, uint32_t *order)
{
	free(s->links);
	s->links = NULL;
	s->nlinks = 0;
	size_t cap_links = 0;
	for (uint32_t i = 0; i < s->nrecs; i++) {
		order[i] = i;
		ds_rec(s, i)->flags &= ~DS_F_LINKED;
	}
	/* by inode, then record index: visit order decides among paths */
	int rc = ds_sort_recs(s, order, s->nrecs, inode_key);
	/* first which devices keep inode numbers, then the paths of one inode
	 * made one file where they do; elsewhere each path stands alone and is
	 * compared by its bytes like any other file */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; rc == 0 && i < s->nrecs;) {
			uint32_t j = i + 1;
			while (j < s->nrecs && same_inode(s, ds_rec(s, order[i]), ds_rec(s, order[j])))
				j++;
			if (j - i > 1 && pass == 0)
				check_numbers(s, order + i, j - i);
			else if (j - i > 1 && ds_inodes_trusted(s, ds_rec_dev(s, ds_rec(s, order[i]))))
				rc = collapse_run(s, order + i, j - i, &cap_links);
			i = j;
		}
	}
	/* by record, for ds_rec_rep()'s binary search */
	if (rc == 0)
		rc = ds_sort(s->links, s->nlinks, 2 * sizeof(*s->links), cmp_link, NULL);
	return rc;
}
