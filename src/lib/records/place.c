/* SPDX-License-Identifier: MIT */
/* place.c: where a record is: its directory, its argument, the record that
 * stands for its inode, the one builder of paths from the tables, and
 * whether a file is still as recorded. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

/* ---- paths ---- */

static size_t sep_after(const char *left, size_t len)
{
	return (len > 0 && left[len - 1] != '/') ? 1 : 0;
}

static size_t path_len(const struct ds_tree *s, uint32_t dir, const char *name)
{
	size_t len = strlen(name);
	for (uint32_t d = dir; d != DS_NONE; d = s->dirs[d].parent) {
		size_t plen = strlen(s->dirs[d].name);
		len += plen + sep_after(s->dirs[d].name, plen);
	}
	return len;
}

/* Components are written back to front, so no depth-sized array is needed. */
static size_t build_path(const struct ds_tree *s, uint32_t dir, const char *name, char *buf, size_t cap)
{
	size_t len = path_len(s, dir, name);
	if (len + 1 > cap)
		return len;
	char *end = buf + len;
	*end = '\0';
	size_t nlen = strlen(name);
	end -= nlen;
	memcpy(end, name, nlen);
	for (uint32_t d = dir; d != DS_NONE; d = s->dirs[d].parent) {
		const char *pn = s->dirs[d].name;
		size_t plen = strlen(pn);
		if (sep_after(pn, plen))
			*--end = '/';
		end -= plen;
		memcpy(end, pn, plen);
	}
	return len;
}

uint32_t ds_rel_offset(const struct ds_tree *s, uint32_t dir)
{
	uint32_t d = dir;
	while (s->dirs[d].parent != DS_NONE)
		d = s->dirs[d].parent;
	size_t len = strlen(s->dirs[d].name);
	return (uint32_t)(len + sep_after(s->dirs[d].name, len));
}

uint32_t ds_rec_dir(const struct ds_tree *s, uint32_t i)
{
	const struct ds_run *run = s->runs;
	size_t lo = 0, hi = s->nruns;
	/* the last run that begins at i or before */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (run[mid].first <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return run[lo - 1].dir;
}

uint32_t ds_rec_rep(const struct ds_tree *s, uint32_t i)
{
	if (!(ds_rec(s, i)->flags & DS_F_LINKED))
		return i;
	const uint32_t *l = s->links;
	size_t lo = 0, hi = s->nlinks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l[2 * mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a record is flagged only with its pair in the table */
	return lo < s->nlinks && l[2 * lo] == i ? l[2 * lo + 1] : i;
}

uint32_t ds_rec_arg(const struct ds_tree *s, uint32_t i)
{
	return s->dirs[ds_rec_dir(s, i)].arg;
}

struct ds_rec *ds_file_inode(const struct dupscan_file *f)
{
	return !(f->idx & DS_OUTSIDE) ? ds_rec(f->tree, ds_rec_rep(f->tree, f->idx)) : NULL;
}

uint32_t ds_file_dir(const struct dupscan_file *f)
{
	return f->idx & DS_OUTSIDE ? f->idx & ~DS_OUTSIDE : ds_rec_dir(f->tree, f->idx);
}

uint32_t ds_file_arg(const struct dupscan_file *f)
{
	return f->tree->dirs[ds_file_dir(f)].arg;
}

/* The tree whose arguments s's directories name: a remote's files live in
 * a mirror scan (remote.c) whose directories carry the owner's argument. */
static const struct ds_tree *args_tree(const struct ds_tree *s)
{
	return s->owner ? s->owner : s;
}

bool ds_rec_reference(const struct ds_tree *s, uint32_t rec)
{
	return args_tree(s)->args[s->dirs[ds_rec_dir(s, rec)].arg].reference;
}

bool ds_file_reference(const struct dupscan_file *f)
{
	return args_tree(f->tree)->args[ds_file_arg(f)].reference;
}

size_t ds_rec_path(const struct ds_tree *s, uint32_t i, char *buf, size_t cap)
{
	char nbuf[DS_NAME_BUF];
	return build_path(s, ds_rec_dir(s, i), ds_rec_name(s, ds_rec(s, i), nbuf), buf, cap);
}

char *ds_rec_path_dup(struct ds_tree *s, uint32_t i)
{
	uint32_t dir = ds_rec_dir(s, i);
	char nbuf[DS_NAME_BUF];
	const char *name = ds_rec_name(s, ds_rec(s, i), nbuf);
	size_t len = path_len(s, dir, name);
	char *p = ds_arena_alloc(&s->out, len + 1);
	if (p)
		build_path(s, dir, name, p, len + 1);
	return p;
}

int ds_file_change(const struct ds_tree *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns)
{
	if (!S_ISREG(st->st_mode))
		return DUPSCAN_E_CHANGED_TYPE;
	/* where numbers are not kept they say nothing: FUSE numbers a file
	 * anew once the kernel forgot it (a large tree walked over sshfs, then
	 * read), and may give another file its old number */
	if (st->st_dev != ds_rec_dev(s, r) ||
	    (st->st_ino != ds_rec_ino(s, r) && ds_inodes_trusted_now(s, ds_rec_dev(s, r))))
		return DUPSCAN_E_CHANGED_INODE;
	if ((uint64_t)st->st_size != ds_rec_size(s, r))
		return DUPSCAN_E_CHANGED_SIZE;
	if (ds_ns(st->st_mtim) != r->mtime_ns)
		return DUPSCAN_E_CHANGED_MTIME;
	return ds_ns(st->st_ctim) == ctime_ns ? 0 : DUPSCAN_E_CHANGED_CTIME;
}

bool ds_same_file(const struct ds_tree *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns)
{
	return ds_file_change(s, st, r, ctime_ns) == 0;
}

char *ds_rec_path_alloc(const struct ds_tree *s, uint32_t i)
{
	char nbuf[DS_NAME_BUF];
	return ds_path_in(s, ds_rec_dir(s, i), ds_rec_name(s, ds_rec(s, i), nbuf), NULL, 0);
}

size_t ds_dir_path_in(const struct ds_tree *s, uint32_t d, char *buf, size_t cap)
{
	const struct ds_dir *dir = &s->dirs[d];
	return build_path(s, dir->parent, dir->name, buf, cap);
}

char *ds_dir_path(const struct ds_tree *s, uint32_t d)
{
	/* a directory's path is its parent's path joined with its own name */
	const struct ds_dir *dir = &s->dirs[d];
	size_t len = path_len(s, dir->parent, dir->name);
	char *p = malloc(len + 1);
	if (p)
		build_path(s, dir->parent, dir->name, p, len + 1);
	return p;
}

char *ds_path_in(const struct ds_tree *s, uint32_t dir, const char *name, char *buf, size_t cap)
{
	size_t len = build_path(s, dir, name, buf, cap);
	if (len < cap)
		return buf;
	char *path = malloc(len + 1);
	if (path)
		build_path(s, dir, name, path, len + 1);
	return path;
}

int ds_refuse(const dupscan_file *f, int why)
{
	/* told, not counted: the scan's errors are its reading's; the action
	 * that refuses says so itself */
	const struct ds_core *c = args_tree(f->tree)->core;
	if (why != DUPSCAN_E_CHANGED && c->cb.on_error)
		c->cb.on_error(c->cb.error_user, f->path, why);
	return DUPSCAN_E_CHANGED;
}
