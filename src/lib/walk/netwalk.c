/* SPDX-License-Identifier: MIT */
/* netwalk.c: on a network filesystem, subdirectories listed as soon as their
 * parent is.
 *
 * The walk takes directories depth first on one thread and offers each to
 * the helpers when it meets it in its parent's listing (walk.c). On a local
 * disk that keeps the helpers ahead. Over a network every listing waits
 * round trips (sshfs on a 1 ms link: 7 ms a directory), and the walk met a
 * directory only a moment before it needed its listing, down every path of
 * the tree: 16 helpers walked a 973-directory tree in 6 s, one thread in 7.
 * So here whoever lists a directory makes a job for each subdirectory of
 * its first batch and queues it at once; when the walk meets that entry it
 * adopts the job (listed, or being listed) instead of making one. What the
 * walk sees is unchanged: it still decides each entry (filters, loops,
 * other filesystems), and a kid it does not adopt is dropped unread if no
 * helper started it. The look-ahead budget bounds what is listed ahead as
 * before (PREFETCH_JOBS directories, each holding a descriptor). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirbatch.h"

/* A job for subdirectory e of j, listed by its path; NULL when out of memory. */
static struct dir_job *make_kid(const struct ds_walk *s, const struct dir_job *j, const struct wentry *e)
{
	struct dir_job *kid = calloc(1, sizeof(*kid));
	if (!kid)
		return NULL;
	const char *name = j->b.names + e->name;
	size_t len = strlen(j->path);
	kid->path = malloc(len + strlen(name) + 2);
	if (!kid->path) {
		free(kid);
		return NULL;
	}
	sprintf(kid->path, "%s%s%s", j->path, len && j->path[len - 1] == '/' ? "" : "/", name);
	kid->d = DS_NONE;
	kid->depth = j->depth + 1;
	kid->parent_fd = -1;
	kid->oflags = j->oflags | (s->core->opt.follow_symlinks ? 0 : O_NOFOLLOW);
	kid->dev = (uint64_t)e->st.st_dev;
	kid->ino = (uint64_t)e->st.st_ino;
	/* as walker_push() decides it (j->recurse: its argument recurses) */
	kid->recurse = s->core->opt.max_depth < 0 || kid->depth < s->core->opt.max_depth;
	kid->bytes = e->st.st_size;
	kid->queued = true;
	return kid;
}

void ds_netwalk_spawn(const struct ds_walk *s, struct dir_job *j)
{
	/* listed to its end: its descriptor is of no more use (its kids open
	 * by path), and the budget of jobs ahead is not one of descriptors */
	if (j->dh && !j->more) {
		closedir(j->dh);
		j->dh = NULL;
	}
	/* a filter decides on directories before they are opened; with -s a
	 * listed symlink may lead back up (the walk's check of directories seen
	 * runs when it takes them): neither is listed ahead */
	if (!j->queued || !j->path || !j->recurse || j->ask || j->open_err || j->fatal || s->core->opt.follow_symlinks)
		return;
	/* (sshfs lists every entry as DT_UNKNOWN: its stat, not followed, says) */
	size_t n = 0;
	for (size_t k = 0; k < j->b.n; k++)
		n += j->b.e[k].kind == ENT_STAT && !j->b.e[k].err && S_ISDIR(j->b.e[k].st.st_mode);
	if (n == 0 || !(j->kids = calloc(j->b.n, sizeof(*j->kids))))
		return;
	j->nkids = j->b.n;
	for (size_t k = 0; k < j->b.n; k++) {
		const struct wentry *e = &j->b.e[k];
		if (e->kind != ENT_STAT || e->err || !S_ISDIR(e->st.st_mode) ||
		    (s->core->opt.one_fs && (uint64_t)e->st.st_dev != j->dev))
			continue;
		struct dir_job *kid = make_kid(s, j, e);
		if (!kid)
			return;
		j->kids[k] = kid;
		if (ds_pool_queue(s->core->pool, &kid->job) != 0) {
			/* never queued: the walk lists it itself */
			j->kids[k] = NULL;
			free(kid->path);
			free(kid);
			return;
		}
	}
}

struct dir_job *ds_netwalk_adopt(struct dir_job *j, size_t k)
{
	if (k >= j->nkids || !j->kids[k] || j->kids[k]->dropped)
		return NULL;
	j->kids[k]->adopted = true;
	return j->kids[k];
}

void ds_netwalk_drop(struct ds_pool *p, struct dir_job *j)
{
	for (size_t k = 0; k < j->nkids; k++) {
		struct dir_job *kid = j->kids[k];
		if (!kid || kid->adopted || kid->dropped)
			continue;
		ds_pool_drop(p, &kid->job);
		kid->dropped = true;
		/* listed ahead: its own kids were queued too */
		ds_netwalk_drop(p, kid);
		if (kid->dh)
			closedir(kid->dh);
		kid->dh = NULL;
	}
}

void ds_netwalk_free(struct dir_job *j)
{
	for (size_t k = 0; k < j->nkids; k++) {
		struct dir_job *kid = j->kids[k];
		if (!kid || kid->adopted)
			continue;
		ds_netwalk_free(kid);
		if (kid->dh)
			closedir(kid->dh);
		ds_job_free_batch(kid);
		free(kid);
	}
	free(j->kids);
	j->kids = NULL;
	j->nkids = 0;
}
