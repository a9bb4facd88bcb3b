/* SPDX-License-Identifier: MIT */
/* records.c: what the walk records: the file and directory tables and the
 * values records share (where a record is and its path: place.c; visited
 * directories and protected paths: identity.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

/* ---- values records share ---- */

static uint32_t intern_slot(uint64_t k0, uint64_t k1, uint32_t nslot)
{
	uint64_t h = (k0 * 0x9E3779B97F4A7C15ull) ^ (k1 * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 31;
	return (uint32_t)(h & (nslot - 1));
}

static bool intern_is(const struct ds_intern *t, uint32_t i, uint64_t k0, uint64_t k1)
{
	return t->key[2 * (size_t)i] == k0 && t->key[2 * (size_t)i + 1] == k1;
}

/* Twice the slots, every index placed again. */
static int intern_rehash(struct ds_intern *t)
{
	uint32_t nslot = t->nslot ? t->nslot * 2 : 64;
	uint32_t *slot = calloc(nslot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = intern_slot(t->key[2 * (size_t)i], t->key[2 * (size_t)i + 1], nslot);
		while (slot[j])
			j = (j + 1) & (nslot - 1);
		slot[j] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

int ds_intern(struct ds_intern *t, uint64_t k0, uint64_t k1, uint32_t *out)
{
	if (t->last < t->n && intern_is(t, t->last, k0, k1)) {
		*out = t->last;
		return 0;
	}
	if ((uint64_t)(t->n + 1) * 2 > t->nslot && intern_rehash(t))
		return -ENOMEM;
	uint32_t j = intern_slot(k0, k1, t->nslot);
	for (; t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
		if (intern_is(t, t->slot[j] - 1, k0, k1)) {
			*out = t->last = t->slot[j] - 1;
			return 0;
		}
	}
	if (t->n >= t->limit)
		return -EOVERFLOW;
	if (DS_GROW(t->key, t->cap, 2 * ((size_t)t->n + 1)))
		return -ENOMEM;
	t->key[2 * (size_t)t->n] = k0;
	t->key[2 * (size_t)t->n + 1] = k1;
	t->slot[j] = t->n + 1;
	*out = t->last = t->n++;
	return 0;
}

void ds_intern_free(struct ds_intern *t)
{
	free(t->key);
	free(t->slot);
	uint32_t limit = t->limit;
	memset(t, 0, sizeof(*t));
	t->limit = limit;
}

int ds_rec_identity(struct ds_tree *s, struct ds_rec *r, const struct stat *st)
{
	uint64_t size = (uint64_t)st->st_size, ino = (uint64_t)st->st_ino;
	uint32_t dev, attr, kind;
	int rc = ds_intern(&s->devs, (uint64_t)st->st_dev, 0, &dev);
	if (rc == 0)
		rc = ds_intern(&s->attrs, (uint64_t)st->st_uid << 32 | st->st_gid, st->st_mode, &attr);
	if (rc == 0)
		rc = ds_intern(&s->kinds, (uint64_t)(st->st_nlink > 1) << 63 | ino >> 32 << 16 | dev,
			       size >> 32 << 32 | attr, &kind);
	if (rc)
		return rc;
	r->size_lo = (uint32_t)size;
	r->ino_lo = (uint32_t)ino;
	r->kind = kind & (DS_KINDS_MAX - 1);
	return 0;
}

/* ---- tables ---- */

int ds_add_dir(struct ds_tree *s, const char *name, size_t nlen, uint32_t parent, uint32_t arg,
		   const struct stat *st, uint32_t *out)
{
	if (s->ndirs == s->cap_dirs) {
		uint32_t cap = s->cap_dirs ? s->cap_dirs * 2 : 64;
		struct ds_dir *d = realloc(s->dirs, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		s->dirs = d;
		s->cap_dirs = cap;
	}
	const char *copy = ds_arena_strdup(&s->names, name, nlen);
	if (!copy)
		return -ENOMEM;
	struct ds_dir *d = &s->dirs[s->ndirs];
	d->name = copy;
	d->parent = parent;
	d->arg = arg;
	d->prot = parent != DS_NONE && s->nprotect &&
		  (s->dirs[parent].prot || ds_is_protected(s, parent, copy, nlen, st));
	d->incomplete = d->pseudo = false;
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	*out = s->ndirs++;
	return 0;
}

/* The caller's filter sees the file before it costs a record. @return 1 to keep. */
static int filter_keeps(struct ds_tree *s, const struct ds_rec *r, uint32_t dir, const char *name)
{
	char stackbuf[4096];
	char *path = ds_path_in(s, dir, name, stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	struct dupscan_file f = { path, r, s, ds_rel_offset(s, dir), DS_OUTSIDE | dir };
	int keep = s->core->cb.filter(s->core->cb.filter_user, &f) != 0;
	if (path != stackbuf)
		free(path);
	return keep;
}

int ds_add_rec(struct ds_tree *s, const char *name, size_t nlen, uint32_t dir, const struct stat *st)
{
	struct ds_rec tmp = {
		.mtime_ns = ds_ns(st->st_mtim),
		.ctime_ns = ds_ns(st->st_ctim),
	};
	int rc = ds_rec_identity(s, &tmp, st);
	if (rc)
		return rc;
	if (s->nprotect && (s->dirs[dir].prot || ds_is_protected(s, dir, name, nlen, st)))
		tmp.flags |= DS_F_PROTECTED;
	if (s->core->cb.filter) {
		int keep = filter_keeps(s, &tmp, dir, name);
		if (keep <= 0)
			return keep;
	}
	rc = ds_rec_append(s, &tmp, dir, name, nlen);
	if (rc)
		return rc;
	ds_progress_found(s->core, (uint64_t)st->st_size);
	uint64_t found = s->nrecs + s->nspilled;
	if (s->core->cb.on_progress && (found & 1023) == 0)
		s->core->cb.on_progress(s->core->cb.progress_user, DUPSCAN_PHASE_WALK, found, 0);
	return 0;
}

int ds_rec_append(struct ds_tree *s, const struct ds_rec *r, uint32_t dir, const char *name, size_t nlen)
{
	if (s->nrecs == DS_OUTSIDE)
		return -ENOMEM;
	/* a directory's records follow each other: a new run when the directory changes */
	bool new_run = s->nruns == 0 || s->runs[s->nruns - 1].dir != dir;
	if (new_run && DS_GROW(s->runs, s->cap_runs, s->nruns + 1))
		return -ENOMEM;
	if ((s->nrecs & (DS_REC_BLOCK - 1)) == 0 && (s->nrecs >> DS_REC_SHIFT) == s->nblocks) {
		struct ds_rec **blocks = realloc(s->rec_blocks, (s->nblocks + 1) * sizeof(*blocks));
		if (!blocks)
			return -ENOMEM;
		s->rec_blocks = blocks;
		blocks[s->nblocks] = ds_big_alloc(DS_REC_BLOCK * sizeof(struct ds_rec));
		if (!blocks[s->nblocks])
			return -ENOMEM;
		s->nblocks++;
	}
	struct ds_rec tmp = *r;
	int rc = ds_names_add(&s->fnames, name, nlen, &tmp.name);
	if (rc)
		return rc;
	if (new_run)
		s->runs[s->nruns++] = (struct ds_run){ s->nrecs, dir };
	*ds_rec(s, s->nrecs) = tmp;
	s->nrecs++;
	return 0;
}

void ds_tree_init(struct ds_tree *t)
{
	ds_arena_init(&t->names);
	t->devs.limit = UINT16_MAX + 1u; /* the kinds' field */
	t->attrs.limit = DS_KINDS_MAX;
	t->kinds.limit = DS_KINDS_MAX;   /* the record's field */
}

void ds_tree_free(struct ds_tree *t)
{
	for (uint32_t i = 0; i < t->nargs; i++)
		free((char *)t->args[i].path);
	free(t->args);
	free(t->dirs);
	for (uint32_t i = 0; i < t->nblocks; i++)
		ds_big_free(t->rec_blocks[i], DS_REC_BLOCK * sizeof(struct ds_rec));
	free(t->rec_blocks);
	free(t->links);
	free(t->runs);
	ds_identity_free(t);
	ds_arena_free(&t->names);
	ds_intern_free(&t->devs);
	ds_intern_free(&t->attrs);
	ds_intern_free(&t->kinds);
	ds_names_free(&t->fnames);
	ds_payloads_free(t);
}

int ds_add_arg(struct ds_tree *t, const char *path, bool recurse, bool remote)
{
	if (t->nargs == t->cap_args) {
		uint32_t cap = t->cap_args ? t->cap_args * 2 : 16;
		if (cap > (uint32_t)INT32_MAX)
			return -ENOMEM;
		struct ds_arg *a = realloc(t->args, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		t->args = a;
		t->cap_args = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	t->args[t->nargs] = (struct ds_arg){ .path = copy, .recurse = recurse, .remote = remote };
	return (int)t->nargs++;
}
