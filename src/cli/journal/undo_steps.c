/* SPDX-License-Identifier: MIT */
/* undo_steps.c: the steps every restore of --undo is made of (undo_move.c,
 * undo_link.c): its messages, the content a journal line recorded and a
 * check of a file against it, the names restored so far, a name of undo's
 * own, and the removal of a name only while it is what was checked. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "msg.h"
#include "undo.h"

void undo_say(const char *what, const char *path, const char *why)
{
	printf("%s ", what);
	fwrite(path, 1, strlen(path), stdout);
	if (why)
		printf(" -- %s", why);
	putchar('\n');
}

void undo_complain2(const char *path, const char *why, const char *other)
{
	fflush(stdout);
	msg_say("undo: %s: %s%s", path, why, other ? other : "");
}

void undo_complain(const char *path, const char *why)
{
	undo_complain2(path, why, NULL);
}



/* ---- content ---- */

bool undo_known(const struct content *c)
{
	return c->size >= 0;
}

bool undo_holds(const struct content *c, const char *path)
{
	struct stat st;
	if (!undo_known(c) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || (long long)st.st_size != c->size)
		return false;
	if (!c->hashed)
		return true;
	uint64_t size, hash;
	return dupscan_hash_file(path, &size, &hash) == 0 && (long long)size == c->size && hash == c->hash;
}

bool undo_same_entry(const char *a, const char *b)
{
	struct stat sa, sb;
	if (lstat(a, &sa) != 0 || lstat(b, &sb) != 0 || (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
		return false;
	if (S_ISREG(sa.st_mode))
		return sa.st_size == sb.st_size && ds_compare_paths(a, b) == 0;
	char ta[PATH_MAX], tb[PATH_MAX];
	ssize_t na = S_ISLNK(sa.st_mode) ? readlink(a, ta, sizeof(ta)) : -1;
	ssize_t nb = S_ISLNK(sb.st_mode) ? readlink(b, tb, sizeof(tb)) : -1;
	return na >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0;
}

bool undo_matches(const struct entry *e, const char *path, const char *other)
{
	if (undo_known(&e->want))
		return undo_holds(&e->want, path);
	return other && undo_same_entry(path, other);
}

/* ---- names restored ---- */

const struct restored *undo_twin(const struct restored_map *u, long long dev, long long ino)
{
	struct stat st;
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].dev == dev && u->v[i].ino == ino)
			return lstat(u->v[i].path, &st) == 0 && st.st_dev == u->v[i].now_dev &&
				       st.st_ino == u->v[i].now_ino ? &u->v[i] : NULL;
	return NULL;
}

void undo_remember(struct restored_map *u, long long dev, long long ino, const char *path)
{
	struct stat st;
	if (dev < 0 || undo_twin(u, dev, ino))
		return;
	struct restored *v = realloc(u->v, (u->n + 1) * sizeof(*v));
	if (!v)
		return;
	u->v = v;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(v[u->n].path = strdup(path)))
		return;
	v[u->n].dev = dev;
	v[u->n].ino = ino;
	v[u->n].now_dev = st.st_dev;
	v[u->n].now_ino = st.st_ino;
	u->n++;
}

void undo_forget(struct restored_map *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].path);
	u->n = 0;
}

/* ---- the steps ---- */

int undo_make_temp(const char *beside, char **out, int (*make)(const char *tmp, const void *arg), const void *arg)
{
	char *dir = ds_dir_part(beside);
	char *tmp = dir ? malloc(strlen(dir) + 64) : NULL;
	int rc = tmp ? -EEXIST : -ENOMEM;
	for (int i = 0; rc == -EEXIST && i < 1000; i++) {
		sprintf(tmp, "%s/" DS_TEMP_PREFIX "undo%ld-%d", dir, (long)getpid(), i);
		rc = make(tmp, arg);
	}
	free(dir);
	if (rc) {
		free(tmp);
		return rc;
	}
	*out = tmp;
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT) &&
	       a->st_size == b->st_size && ds_ns(a->st_mtim) == ds_ns(b->st_mtim);
}

static int rename_aside(const char *tmp, const void *path)
{
	return ds_rename_paths(path, tmp, RENAME_NOREPLACE);
}

int undo_remove_checked(const char *path, const struct stat *st)
{
	struct stat now;
	char *aside = NULL;
	int rc = undo_make_temp(path, &aside, rename_aside, path);
	if (rc == -ENOENT)
		return 0; /* removed meanwhile */
	if (rc == -EINVAL) /* no RENAME_NOREPLACE here: checked, then removed */
		return lstat(path, &now) != 0 ? -errno : !same_file(&now, st) ? DUPSCAN_E_CHANGED
		       : unlink(path) == 0 ? 0 : -errno;
	if (rc)
		return rc;
	if (lstat(aside, &now) == 0 && same_file(&now, st))
		rc = unlink(aside) == 0 ? 0 : -errno;
	else if ((rc = ds_rename_paths(aside, path, RENAME_NOREPLACE)) == 0)
		rc = DUPSCAN_E_CHANGED;
	else
		undo_complain2(path, "replaced while it was being removed; what was put there is now at ", aside);
	free(aside);
	return rc;
}
