/* SPDX-License-Identifier: MIT */
/* undo_move.c: --undo of --move-to: each name moved comes back, checked to
 * hold the content the journal recorded, and only then does its moved copy
 * go. Names of one inode come back as one inode; a name an action set aside
 * (".dupscan-tmp-*", killed before removing it) takes its name back. An undo
 * cut short leaves the name restored and the copy, or neither restored: run
 * again, it finishes what it began. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "undo.h"

/* the inode the name had before it was moved, (-1, -1) in journals before 0.5.1 */
static void recorded_inode(const struct entry *e, long long *dev, long long *ino)
{
	*dev = e->n >= 5 ? strtoll(e->f[3], NULL, 10) : -1;
	*ino = e->n >= 5 ? strtoll(e->f[4], NULL, 10) : -1;
}

/* The entry name in dir whose inode is (dev, ino), among the names an action
 * sets a file aside under (".dupscan-tmp-*", not undo's own). @return it,
 * allocated, or NULL. */
static char *aside_name(const char *dir, long long dev, long long ino)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char *found = NULL;
	struct dirent *de;
	struct stat st;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, DS_TEMP_PREFIX, DS_TEMP_PREFIX_LEN) != 0 ||
		    strncmp(de->d_name, DS_TEMP_PREFIX "undo", DS_TEMP_PREFIX_LEN + 4) == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && (found = malloc(strlen(dir) + strlen(de->d_name) + 2)))
			sprintf(found, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	return found;
}

/* A name given back as a hard link of src: linked, made durable, checked. */
static int link_back(const char *src, const char *from)
{
	if (link(src, from) != 0)
		return -errno;
	return ds_fsync_dir_of(from);
}

/* The moved copy to goes once from holds the content: only if it is still
 * the entry ts, and not when it is from's own inode under another name. */
static int drop_copy(const char *to, const struct stat *ts)
{
	return ts ? undo_remove_checked(to, ts) : 0;
}

/* A move to another filesystem killed after the name was set aside (renamed
 * to ".dupscan-tmp-*" in its directory) and before that name was removed:
 * the inode itself is still there, and takes its name back, if it holds the
 * recorded content (its number may have been reused by another file since:
 * an undo's own copy, say). @return 1 when restored so, 0 when there is
 * nothing set aside, or -errno. */
static int undo_set_aside(struct undo_state *u, const struct entry *e, const struct stat *ts)
{
	const char *from = e->f[1], *to = e->f[2];
	long long dev, ino;
	recorded_inode(e, &dev, &ino);
	char *dir = dev >= 0 ? ds_dir_part(from) : NULL;
	char *aside = dir ? aside_name(dir, dev, ino) : NULL;
	free(dir);
	if (!aside)
		return 0;
	struct stat st, as;
	int rc = 0;
	if (lstat(aside, &as) != 0) {
		rc = 0;
	} else if (lstat(from, &st) == 0) {
		/* back already: the name set aside is one name too many */
		if (st.st_dev == as.st_dev && st.st_ino == as.st_ino)
			rc = undo_remove_checked(aside, &as);
	} else if (!undo_known(&e->want) || undo_holds(&e->want, aside)) {
		/* (journals before 0.9 recorded no content: the name and the
		 * number decide, as they did) */
		rc = link_back(aside, from);
		if (rc == 0)
			rc = undo_remove_checked(aside, &as);
		if (rc == 0 && ts && undo_matches(e, to, from))
			rc = drop_copy(to, ts);
		if (rc == 0) {
			undo_remember(&u->moves, dev, ino, from);
			rc = 1;
		}
	}
	free(aside);
	return rc;
}

/* A name of the inode the file was moved from that is still there (never
 * moved: the run was killed first, or it was protected) and holds the
 * content, so the name comes back as that inode's. */
static const char *never_moved(const struct entry *e, const struct stat *ts)
{
	long long dev, ino;
	recorded_inode(e, &dev, &ino);
	if (dev < 0 || !S_ISREG(ts->st_mode) || ((long long)ts->st_dev == dev && (long long)ts->st_ino == ino))
		return NULL; /* moved by a rename: the inode itself goes back */
	struct stat st;
	for (int i = e->names; i < e->n; i++)
		if (lstat(e->f[i], &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && undo_matches(e, e->f[i], e->f[2]))
			return e->f[i];
	return NULL;
}

static int copy_or_symlink(const char *tmp, const void *arg)
{
	const char *to = arg;
	struct stat st;
	if (lstat(to, &st) != 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return dupscan_copy_file(to, tmp); /* read back equal, metadata kept */
	char target[4096];
	ssize_t n = readlink(to, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return symlink(target, tmp) == 0 ? 0 : -errno;
}

/* Across filesystems: a copy of to under a name of undo's own beside from,
 * checked to hold the recorded content, linked to from (never over a file),
 * made durable. */
static int copy_back(const struct entry *e, const char *to, const char *from)
{
	char *tmp = NULL;
	int rc = undo_make_temp(from, &tmp, copy_or_symlink, to);
	if (rc)
		return rc;
	if (!undo_matches(e, tmp, to))
		rc = DUPSCAN_E_CHANGED;
	if (rc == 0)
		rc = link_back(tmp, from);
	unlink(tmp);
	free(tmp);
	return rc;
}

/* from made again from the moved copy to (the entry ts): a name of the
 * inode restored before it, or never moved, else to's own inode linked back
 * (one filesystem), else a copy; from then holds the recorded content, and
 * so does to. @return 0, DUPSCAN_E_CHANGED when the moved copy holds other
 * content (then nothing is made), or -errno. */
static int put_back(struct undo_state *u, const struct entry *e, const struct stat *ts)
{
	const char *from = e->f[1], *to = e->f[2];
	long long dev, ino;
	recorded_inode(e, &dev, &ino);
	const struct restored *twin = S_ISREG(ts->st_mode) ? undo_twin(&u->moves, dev, ino) : NULL;
	const char *src = twin ? twin->path : never_moved(e, ts);
	/* the moved copy goes after: only if it holds what the name had (a copy
	 * changed since goes back itself, or is refused where that is known) */
	if (src && undo_matches(e, to, src))
		return link_back(src, from);
	int rc = link_back(to, from);
	if (rc == -EXDEV || rc == -EPERM || rc == -EMLINK || rc == -ENOTSUP)
		return copy_back(e, to, from);
	if (rc == 0 && undo_known(&e->want) && !undo_holds(&e->want, from)) {
		struct stat st;
		if (lstat(from, &st) == 0 && st.st_dev == ts->st_dev && st.st_ino == ts->st_ino)
			unlink(from); /* the link made above: the moved file changed since */
		rc = DUPSCAN_E_CHANGED;
	}
	return rc;
}

/* from is there: given back before (an undo cut short and run again), or
 * made by someone since. Its moved copy, when still there, goes if from
 * holds the same recorded content. */
static int in_place(struct undo_state *u, const struct entry *e, const struct stat *fs, const struct stat *ts)
{
	const char *from = e->f[1], *to = e->f[2];
	long long dev, ino;
	recorded_inode(e, &dev, &ino);
	bool ours = undo_matches(e, from, ts ? to : NULL);
	if (ours)
		undo_remember(&u->moves, dev, ino, from);
	if (!ts) {
		undo_say("skipped", from, "already in place");
		return 0;
	}
	bool one = ts->st_dev == fs->st_dev && ts->st_ino == fs->st_ino;
	if (!one && !(ours && undo_matches(e, to, from))) {
		undo_complain2(from, "a file with other content is in its place; its moved copy is left at ", to);
		return 1;
	}
	int rc = drop_copy(to, ts);
	if (rc) {
		undo_complain(to, dupscan_strerror(rc));
		return 1;
	}
	undo_say("restored", from, NULL);
	return 0;
}

int undo_move(struct undo_state *u, const struct entry *e)
{
	const char *from = e->f[1], *to = e->f[2];
	struct stat fs, ts;
	/* a copy across filesystems killed before it was named (where the
	 * destination's filesystem has no O_TMPFILE) */
	if (dupscan_remove_partial_copy(to) == 1)
		undo_say("removed", to, "a partial copy of it, left by an interrupted move");
	bool have_to = lstat(to, &ts) == 0;
	int rc = undo_set_aside(u, e, have_to ? &ts : NULL);
	if (rc < 0) {
		undo_complain(from, dupscan_strerror(rc));
		return 1;
	}
	if (rc > 0) {
		undo_say("restored", from, NULL);
		return 0;
	}
	if (lstat(from, &fs) == 0)
		return in_place(u, e, &fs, have_to ? &ts : NULL);
	if (!have_to) {
		undo_complain(from, "its moved copy is gone; cannot move it back");
		return 1;
	}
	char *dir = ds_dir_part(from);
	rc = dir ? ds_make_dirs(dir, strlen(dir), 0777) : -ENOMEM;
	free(dir);
	if (rc == 0)
		rc = put_back(u, e, &ts);
	if (rc == DUPSCAN_E_CHANGED) {
		undo_complain2(from, "its moved copy holds other content than the journal recorded; left at ", to);
		return 1;
	}
	if (rc == 0) {
		long long dev, ino;
		recorded_inode(e, &dev, &ino);
		undo_remember(&u->moves, dev, ino, from);
		rc = drop_copy(to, &ts);
	}
	if (rc) {
		undo_complain(from, dupscan_strerror(rc));
		return 1;
	}
	undo_say("restored", from, NULL);
	return 0;
}
