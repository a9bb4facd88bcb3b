/* SPDX-License-Identifier: MIT */
/* identity.c: when two paths are one directory (the walk's "already seen")
 * or lie under a protected path. Where the device keeps its inode numbers
 * (ds_inodes_trusted()), by (device, inode), which sees through bind mounts
 * and symlinks. Where it does not (FUSE, SMB with noserverino), a number may
 * be another file's (on another filesystem the mount shows: the roots of two
 * of them both say 2) or change once the kernel forgets the file, so there
 * it is the real path (realpath(3)) that tells.
 *
 * The real path costs a lookup of each component, so it is asked only where
 * it can answer yes: a directory reached by its name is compared with the
 * arguments, the directories entered through a symlink and the protected
 * paths whose last component is that name. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

static bool numbers_kept(struct ds_tree *s, uint64_t dev)
{
	return ds_inodes_trusted(s, dev);
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* Is real path p root itself or below it? */
static bool under(const char *p, const char *root)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return true;
	return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* realpath() of dir/name (name NULL: of dir). @return malloc'ed, or NULL
 * with errno set. */
static char *real_of(const struct ds_tree *s, uint32_t dir, const char *name)
{
	char *p = name ? ds_path_in(s, dir, name, NULL, 0) : ds_dir_path(s, dir);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	char *r = realpath(p, NULL);
	int err = errno;
	free(p);
	errno = err;
	return r;
}

/* ---- visited directories, open addressing on (dev, ino) ---- */

static size_t seen_slot(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t h = (dev * 0x9E3779B97F4A7C15ull) ^ (ino * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

/* @return 1 if (dev, ino) was already seen, 0 if it is new now, -ENOMEM. */
int ds_seen_add(struct ds_tree *s, uint64_t dev, uint64_t ino)
{
	if ((s->seen_count + 1) * 2 > s->seen_cap) {
		size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
		uint64_t *t = calloc(cap * 2, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < s->seen_cap; i++) {
			if (s->seen[2 * i + 1] == 0)
				continue;
			size_t j = seen_slot(s->seen[2 * i], s->seen[2 * i + 1] - 1, cap);
			while (t[2 * j + 1] != 0)
				j = (j + 1) & (cap - 1);
			t[2 * j] = s->seen[2 * i];
			t[2 * j + 1] = s->seen[2 * i + 1];
		}
		free(s->seen);
		s->seen = t;
		s->seen_cap = cap;
	}
	size_t j = seen_slot(dev, ino, s->seen_cap);
	while (s->seen[2 * j + 1] != 0) {
		if (s->seen[2 * j] == dev && s->seen[2 * j + 1] == ino + 1)
			return 1;
		j = (j + 1) & (s->seen_cap - 1);
	}
	s->seen[2 * j] = dev;
	s->seen[2 * j + 1] = ino + 1;
	s->seen_count++;
	return 0;
}

/* ---- the real paths the walk starts from ---- */

static int add_root(struct ds_tree *s, char *real, uint32_t arg, bool walked)
{
	if (DS_GROW(s->roots, s->cap_roots, s->nroots + 1)) {
		free(real);
		return -ENOMEM;
	}
	s->roots[s->nroots++] = (struct ds_root){ real, base_of(real), arg, walked };
	return 0;
}

int ds_roots_note_args(struct ds_tree *s)
{
	for (uint32_t a = 0; a < s->nargs; a++) {
		if (s->args[a].remote)
			continue;
		char *real = realpath(s->args[a].path, NULL);
		struct stat st;
		if (!real && errno == ENOMEM)
			return -ENOMEM;
		if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
			free(real);
			continue;
		}
		int rc = add_root(s, real, a, false);
		if (rc)
			return rc;
	}
	return 0;
}

static struct ds_root *arg_root(struct ds_tree *s, uint32_t a)
{
	for (size_t i = 0; i < s->nroots; i++)
		if (s->roots[i].arg == a)
			return &s->roots[i];
	return NULL;
}

int ds_seen_arg(struct ds_tree *s, uint32_t a, const struct stat *st)
{
	struct ds_root *r = arg_root(s, a);
	if (numbers_kept(s, st->st_dev)) {
		if (r)
			r->walked = true;
		return ds_seen_add(s, st->st_dev, st->st_ino);
	}
	/* reached already by the walk of another argument, or given twice */
	if (!r || r->walked)
		return r ? 1 : 0;
	for (size_t i = 0; i < s->nroots; i++)
		if (s->roots[i].walked && strcmp(s->roots[i].path, r->path) == 0)
			return 1;
	r->walked = true;
	return 0;
}

/* A directory entered through a symlink where numbers are not kept: seen
 * when its real path lies under a directory the walk starts from (reached,
 * or to be reached, by its name), or is the directory it is in or above it
 * (a loop). Else it is one more place the walk starts from. */
static int seen_through_link(struct ds_tree *s, uint32_t parent, const char *name)
{
	char *real = real_of(s, parent, name);
	if (!real)
		return errno == ENOMEM ? -ENOMEM : 1; /* a loop of links, or gone */
	for (size_t i = 0; i < s->nroots; i++)
		if (under(real, s->roots[i].path)) {
			free(real);
			return 1;
		}
	char *here = real_of(s, parent, NULL);
	bool loop = here && under(here, real);
	free(here);
	if (loop) {
		free(real);
		return 1;
	}
	return add_root(s, real, DS_NONE, true);
}

int ds_seen_dir(struct ds_tree *s, uint32_t parent, const char *name, const struct stat *st, int link)
{
	if (numbers_kept(s, st->st_dev))
		return ds_seen_add(s, st->st_dev, st->st_ino);
	if (link < 0) {
		char *p = ds_path_in(s, parent, name, NULL, 0);
		struct stat l;
		if (!p)
			return -ENOMEM;
		link = lstat(p, &l) != 0 || S_ISLNK(l.st_mode); /* not known: as a link */
		free(p);
	}
	if (link)
		return seen_through_link(s, parent, name);
	/* by its name, as its parent's real path joined with it: the same as
	 * a place the walk starts from, or new */
	char *real = NULL;
	int seen = 0;
	for (size_t i = 0; i < s->nroots && seen == 0; i++) {
		struct ds_root *r = &s->roots[i];
		if (strcmp(r->base, name) != 0)
			continue;
		if (!real && !(real = real_of(s, parent, name)))
			return errno == ENOMEM ? -ENOMEM : 0;
		if (strcmp(real, r->path) != 0)
			continue;
		/* an argument not walked yet is walked here, and not again */
		seen = r->walked ? 1 : 0;
		r->walked = true;
	}
	free(real);
	return seen;
}

/* ---- protected paths ---- */

int ds_protect_add(struct ds_tree *s, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	char *real = realpath(path, NULL);
	if (!real)
		return -errno;
	if (DS_GROW(s->protect, s->cap_protect, s->nprotect + 1)) {
		free(real);
		return -ENOMEM;
	}
	s->protect[s->nprotect++] = (struct ds_protect){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, real,
								   base_of(real) };
	return 0;
}

/* dir/name (nlen bytes) with stat st: protected itself? (What lies under a
 * protected directory inherits it from the walk: ds_dir's prot.) */
bool ds_is_protected(struct ds_tree *s, uint32_t dir, const char *name, size_t nlen, const struct stat *st)
{
	bool kept = numbers_kept(s, st->st_dev);
	char *real = NULL;
	bool found = false;
	for (size_t i = 0; i < s->nprotect && !found; i++) {
		const struct ds_protect *p = &s->protect[i];
		if (kept) {
			found = p->dev == (uint64_t)st->st_dev && p->ino == (uint64_t)st->st_ino;
			continue;
		}
		if (strlen(p->base) != nlen || memcmp(p->base, name, nlen) != 0)
			continue;
		char *own = real ? NULL : strndup(name, nlen);
		if (!real && (!own || !(real = real_of(s, dir, own)))) {
			free(own);
			return errno == ENOMEM; /* when it cannot be told: protected */
		}
		free(own);
		found = strcmp(real, p->real) == 0;
	}
	free(real);
	return found;
}

/* Is directory path, or a directory above it, protected? By its real path;
 * and climbing ".." by descriptor by (device, inode) where numbers are
 * kept, so that a bind mount of a protected path is protected too. */
bool ds_under_protected(struct ds_tree *s, const char *path)
{
	if (s->nprotect == 0)
		return false;
	char *real = realpath(path, NULL);
	bool found = !real && errno == ENOMEM;
	for (size_t i = 0; real && i < s->nprotect && !found; i++)
		found = under(real, s->protect[i].real);
	free(real);
	int fd = found ? -1 : ds_open_path(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int depth = 0; fd >= 0 && depth < 65536; depth++) {
		struct stat st, up;
		if (fstat(fd, &st) != 0)
			break;
		for (size_t i = 0; i < s->nprotect && !found; i++)
			found = s->protect[i].dev == (uint64_t)st.st_dev &&
				s->protect[i].ino == (uint64_t)st.st_ino && numbers_kept(s, (uint64_t)st.st_dev);
		if (found)
			break;
		int ufd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = ufd;
		if (fd < 0 || fstat(fd, &up) != 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino))
			break; /* "/" is its own parent */
	}
	if (fd >= 0)
		close(fd);
	return found;
}

/* ---- one place, reached twice ---- */

bool ds_same_dir(struct ds_tree *s, uint32_t a, uint32_t b)
{
	const struct ds_dir *da = &s->dirs[a], *db = &s->dirs[b];
	if (a == b)
		return true;
	if (da->dev != db->dev)
		return false;
	if (numbers_kept(s, da->dev))
		return da->ino == db->ino;
	char *ra = real_of(s, a, NULL), *rb = ra ? real_of(s, b, NULL) : NULL;
	bool same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

void ds_identity_free(struct ds_tree *t)
{
	free(t->seen);
	free(t->inos);
	for (size_t i = 0; i < t->nprotect; i++)
		free(t->protect[i].real);
	free(t->protect);
	for (size_t i = 0; i < t->nroots; i++)
		free(t->roots[i].path);
	free(t->roots);
}
