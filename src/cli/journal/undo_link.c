/* SPDX-License-Identifier: MIT */
/* undo_link.c: --undo of -L and -l: a name replaced by a link to its kept
 * twin gets back what it was: the symlink it was, a hard link of another name
 * its former inode still has, or a copy of the kept file with its own mode,
 * owner and times, checked against the content the journal recorded. */
#define _GNU_SOURCE /* utimensat */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "undo.h"

/* A name of the duplicate's former inode that is still there with its content:
 * another name recorded with it, or one restored before it from the same run. */
static const char *former_inode(const struct undo_state *u, const struct entry *e, long long dev, long long ino)
{
	struct stat st;
	for (int i = e->names; i < e->n; i++)
		if (lstat(e->f[i], &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && undo_holds(&e->want, e->f[i]))
			return e->f[i];
	const struct restored *twin = undo_twin(&u->links, dev, ino);
	return twin && undo_holds(&e->want, twin->path) ? twin->path : NULL;
}

struct restore_src {
	const struct entry *e;
	const char *link_to;  /* an existing name to hard-link, or NULL */
	bool symlink;         /* recreate the symlink the duplicate was */
};

/* The copy with the duplicate's own mode, owner (as root) and times. */
static int set_meta(const char *tmp, const struct entry *e)
{
	mode_t mode = (mode_t)strtol(e->f[3], NULL, 8);
	uid_t uid = (uid_t)strtoll(e->f[4], NULL, 10);
	gid_t gid = (gid_t)strtoll(e->f[5], NULL, 10);
	long long at = strtoll(e->f[6], NULL, 10), mt = strtoll(e->f[7], NULL, 10);
	struct timespec t[2] = { { (time_t)(at / 1000000000), (long)(at % 1000000000) },
				 { (time_t)(mt / 1000000000), (long)(mt % 1000000000) } };
	if (lchown(tmp, uid, gid) != 0 && errno != EPERM)
		return -errno;
	if (chmod(tmp, mode) != 0 || utimensat(AT_FDCWD, tmp, t, 0) != 0)
		return -errno;
	return 0;
}

static int make_restored(const char *tmp, const void *arg)
{
	const struct restore_src *src = arg;
	const struct entry *e = src->e;
	if (src->symlink)
		return symlink(e->f[16], tmp) == 0 ? 0 : -errno;
	if (src->link_to)
		return link(src->link_to, tmp) == 0 ? 0 : -errno;
	int rc = dupscan_copy_file(e->f[1], tmp);
	if (rc)
		return rc;
	/* the copy must be the content the duplicate had */
	rc = undo_holds(&e->want, tmp) ? set_meta(tmp, e) : DUPSCAN_E_CHANGED;
	if (rc)
		unlink(tmp);
	return rc;
}

/* The restored entry tmp takes the name dup, where the link ls (checked) is:
 * swapped in one step, and the link's name then removed, if what was swapped
 * out is still that link; else swapped back. tmp is gone after, unless it
 * holds what another process put at dup meanwhile (said). */
static int swap_in(const char *tmp, const char *dup, const struct stat *ls)
{
	struct stat out;
	int rc = ds_rename_paths(tmp, dup, RENAME_EXCHANGE);
	if (rc == -EINVAL) {
		/* no exchange on this filesystem: checked again just before */
		rc = lstat(dup, &out) != 0 ? -errno : out.st_dev != ls->st_dev || out.st_ino != ls->st_ino
			? DUPSCAN_E_CHANGED : rename(tmp, dup) == 0 ? 0 : -errno;
		if (rc)
			unlink(tmp);
		return rc ? rc : ds_fsync_dir_of(dup);
	}
	if (rc) {
		unlink(tmp);
		return rc;
	}
	if (lstat(tmp, &out) == 0 && out.st_dev == ls->st_dev && out.st_ino == ls->st_ino) {
		rc = ds_fsync_dir_of(dup);
		unlink(tmp); /* a name of the kept file, or a symlink to it */
		return rc;
	}
	if (ds_rename_paths(tmp, dup, RENAME_EXCHANGE) == 0)
		unlink(tmp);
	else
		undo_complain2(dup, "replaced while it was being restored; what was put there is now at ", tmp);
	return DUPSCAN_E_CHANGED;
}

/* dup no longer a link of its kept twin: restored before (an undo cut short
 * and run again) when it holds its recorded content, else changed since. */
static int not_linked(struct undo_state *u, const struct entry *e, bool soft, long long odev, long long oino)
{
	const char *dup = e->f[2];
	bool was_symlink = e->n >= 17 && strcmp(e->f[15], "symlink") == 0;
	if (was_symlink || !undo_holds(&e->want, dup)) {
		undo_say("skipped", dup, soft ? "no longer a symlink to its kept twin"
					      : "no longer a hard link of its kept twin");
		return 0;
	}
	undo_remember(&u->links, odev, oino, dup);
	undo_say("skipped", dup, "restored already");
	return 0;
}

/* Put back at dup (now a link to kept) what it was: a symlink as a symlink; a
 * name of an inode that still has another name as a hard link to it; else a
 * copy of kept, checked against the recorded content, with dup's metadata. */
int undo_link(struct undo_state *u, const struct entry *e, bool soft)
{
	const char *kept = e->f[1], *dup = e->f[2];
	struct stat ks, ds, ls;
	if (e->n < 10) {
		undo_complain(dup, "malformed journal entry");
		return 1;
	}
	if (lstat(dup, &ls) != 0) {
		undo_complain(dup, "gone since; nothing to restore it over");
		return 1;
	}
	if (stat(kept, &ks) != 0) {
		undo_complain(dup, "its kept twin is gone; cannot restore its content");
		return 1;
	}
	long long odev = e->n >= 12 ? strtoll(e->f[10], NULL, 10) : -1;
	long long oino = e->n >= 12 ? strtoll(e->f[11], NULL, 10) : -1;
	bool linked = soft ? S_ISLNK(ls.st_mode) && stat(dup, &ds) == 0 && ds.st_dev == ks.st_dev &&
				     ds.st_ino == ks.st_ino
			   : ls.st_dev == ks.st_dev && ls.st_ino == ks.st_ino;
	if (!linked)
		return not_linked(u, e, soft, odev, oino);
	struct restore_src src = { e, NULL, e->n >= 17 && strcmp(e->f[15], "symlink") == 0 };
	if (!src.symlink && odev >= 0)
		src.link_to = former_inode(u, e, odev, oino);
	if (!src.symlink && !src.link_to) {
		bool same = e->want.hashed ? undo_holds(&e->want, kept)
					   : (long long)ks.st_size == e->want.size &&
						     ds_ns(ks.st_mtim) == strtoll(e->f[9], NULL, 10);
		if (!same) {
			undo_complain(dup, "its kept twin changed since; its own content cannot be restored from it");
			return 1;
		}
	}
	char *tmp = NULL;
	int rc = undo_make_temp(dup, &tmp, make_restored, &src);
	if (rc == 0)
		rc = swap_in(tmp, dup, &ls);
	free(tmp);
	if (rc) {
		undo_complain(dup, dupscan_strerror(rc));
		return 1;
	}
	if (!src.symlink && !src.link_to)
		undo_remember(&u->links, odev, oino, dup);
	undo_say("restored", dup, NULL);
	return 0;
}
