/* SPDX-License-Identifier: MIT */
/* act_move.c: files copied and moved, across filesystems too, a verified copy
 * always named before its original goes (dupscan_copy_file(),
 * dupscan_move_path(), dupscan_move_duplicate()). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"

DUPSCAN_API int dupscan_copy_file(const char *from, const char *to)
{
	if (!from || !to)
		return -EINVAL;
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0)
		return -errno;
	int rc = ds_copy_fd(in, to);
	close(in);
	return rc;
}

/* A free ".dupscan-tmp-XXXXXX" name beside path, made by create(). */
static int make_temp(const char *dup, char **out, int (*create)(const char *tmp, const void *arg),
		     const void *arg)
{
	char *dir = ds_dir_part(dup);
	if (!dir)
		return -ENOMEM;
	size_t cap = strlen(dir) + 32;
	char *tmp = malloc(cap);
	if (!tmp) {
		free(dir);
		return -ENOMEM;
	}
	uint64_t x = 0;
	int rc = -EEXIST;
	for (int attempt = 0; attempt < 100 && rc == -EEXIST; attempt++) {
		char name[DS_TEMP_NAME_SIZE];
		ds_act_temp_name(name, &x);
		snprintf(tmp, cap, "%s/%s", dir, name);
		rc = create(tmp, arg) == 0 ? 0 : -errno;
	}
	free(dir);
	if (rc) {
		free(tmp);
		return rc;
	}
	*out = tmp;
	return 0;
}

static int create_copy_of_fd(const char *tmp, const void *in)
{
	int rc = ds_copy_fd(*(const int *)in, tmp);
	if (rc == 0)
		return 0;
	/* make_temp() retries on EEXIST and reports errno otherwise */
	errno = rc == -EEXIST ? EEXIST : rc < 0 && rc > -4096 ? -rc : EIO;
	return -1;
}

/* The copy in an unnamed file of to's directory (O_TMPFILE), given the name
 * to once complete and read back equal: killed at any instant, it leaves
 * nothing behind. @return 0, -EOPNOTSUPP where the filesystem cannot, or a
 * negative code. */
static int place_unnamed(const char *to, int in)
{
	struct stat st;
	char *dir = ds_dir_part(to);
	if (!dir)
		return -ENOMEM;
	int out = fstat(in, &st) != 0 ? -1 : open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	int rc = out >= 0 ? 0 : errno == EISDIR || errno == EINVAL || errno == ENOENT ? -EOPNOTSUPP : -errno;
	free(dir);
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = DUPSCAN_E_NOTREG;
	if (rc == 0)
		rc = ds_copy_into(in, out, &st);
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", out);
	if (rc == 0 && linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW) != 0)
		rc = errno == ENOENT ? -EOPNOTSUPP : -errno; /* (no /proc: by a name) */
	if (out >= 0)
		close(out);
	return rc;
}

/* The temporary name a copy to to is made under where O_TMPFILE is refused:
 * the first of a sequence seeded by to's own name, so that what names to (a
 * journal's move line) names it too. malloc'ed, or NULL. */
static char *partial_name(const char *to)
{
	char *dir = ds_dir_part(to);
	const char *base = strrchr(to, '/') ? strrchr(to, '/') + 1 : to;
	char *tmp = dir ? malloc(strlen(dir) + DS_TEMP_NAME_SIZE + 2) : NULL;
	if (tmp) {
		char name[DS_TEMP_NAME_SIZE];
		uint64_t x = ds_hash_oneshot(base, strlen(base)) | 1;
		ds_act_temp_name(name, &x);
		sprintf(tmp, "%s/%s", dir, name);
	}
	free(dir);
	return tmp;
}

/* A copy a kill left at to's temporary name: a regular file of one name, or
 * another name of to itself. Removed. @return 1 removed, 0 none, -errno. */
DUPSCAN_API int dupscan_remove_partial_copy(const char *to)
{
	if (!to)
		return -EINVAL;
	char *tmp = partial_name(to);
	if (!tmp)
		return -ENOMEM;
	struct stat st, ts;
	int rc = 0;
	if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_nlink == 1 || (lstat(to, &ts) == 0 && ts.st_dev == st.st_dev && ts.st_ino == st.st_ino)))
		rc = unlink(tmp) == 0 ? 1 : -errno;
	free(tmp);
	return rc;
}

/* Where O_TMPFILE is refused: the copy under to's temporary name (one a
 * kill left there first removed), linked to to. */
static int place_named(const char *to, int in)
{
	int rc = dupscan_remove_partial_copy(to);
	char *tmp = rc >= 0 ? partial_name(to) : NULL;
	if (rc >= 0 && !tmp)
		rc = -ENOMEM;
	if (rc >= 0)
		rc = ds_copy_fd(in, tmp); /* (a failed copy removes itself) */
	if (rc == -EEXIST) { /* held by a file not ours to remove: another name */
		free(tmp);
		tmp = NULL;
		rc = make_temp(to, &tmp, create_copy_of_fd, &in);
	}
	bool made = rc >= 0;
	if (made && link(tmp, to) != 0)
		rc = -errno;
	if (made)
		unlink(tmp);
	free(tmp);
	return rc < 0 ? rc : 0;
}

/* A verified copy of in given the name to (never over an existing file),
 * fsynced: made unnamed where the filesystem allows it, else under a
 * temporary name derived from to's (a kill leaves it there, and the next
 * copy to to, or --undo of the journal that names to, removes it). */
static int place_copy(const char *to, int in)
{
	int rc = place_unnamed(to, in);
	if (rc == -EOPNOTSUPP)
		rc = place_named(to, in);
	if (rc == 0 && (rc = ds_fsync_dir_of(to)) != 0)
		unlink(to); /* ours: the link just made */
	return rc;
}

static int move_path(const char *from, const char *to, unsigned flags)
{
	struct stat st;
	if (lstat(from, &st) != 0)
		return -errno;
	if (lstat(to, &st) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	if (flags & DUPSCAN_ACT_DRY_RUN)
		return 0;
	if (ds_renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return ds_fsync_dir_of(to);
	int err = errno;
	if (err == EINVAL || err == ENOSYS) {
		/* no RENAME_NOREPLACE here: link() never overwrites either */
		if (link(from, to) == 0)
			return unlink(from) == 0 ? ds_fsync_dir_of(to) : -errno;
		err = errno;
	}
	if (err != EXDEV)
		return -err;
	/* another filesystem: a verified copy gets its name first, and only then
	 * does from go; killed in between, both copies are left */
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0)
		return -errno;
	int rc = place_copy(to, in);
	close(in);
	return rc ? rc : unlink(from) == 0 ? 0 : -errno;
}

DUPSCAN_API int dupscan_move_path(const char *from, const char *to, unsigned flags)
{
	if (!from || !to)
		return -EINVAL;
	return move_path(from, to, flags);
}

/* Across filesystems: a verified copy of the checked file (or a symlink with
 * the same target) gets the name dest; the duplicate is not touched yet. */
static int copy_to(const struct slot *d, const char *dest)
{
	if (d->fd < 0) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(d->dirfd, d->name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlink(target, dest) == 0 ? ds_fsync_dir_of(dest) : -errno;
	}
	return place_copy(dest, d->fd);
}

DUPSCAN_API int dupscan_move_duplicate(const dupscan_file *keep, const dupscan_file *dup,
				       const char *dest, unsigned flags)
{
	if (!dest)
		return -EINVAL;
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	struct stat st;
	int rc = ds_act_prepare(keep, dup, flags, &k, &d);
	if (rc == 0)
		rc = ds_act_untold(keep, &k, &d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_IGNORE_ACCESS))
		rc = ds_access_owner_reads(keep, &k, &d);
	if (rc == 0 && lstat(dest, &st) == 0)
		rc = -EEXIST;
	else if (rc == 0 && errno != ENOENT)
		rc = -errno;
	if (rc || (flags & DUPSCAN_ACT_DRY_RUN))
		goto out;
	if (ds_renameat2(d.dirfd, d.name, AT_FDCWD, dest, RENAME_NOREPLACE) == 0) {
		/* moved: it must be the entry checked, and keep must hold without
		 * it; otherwise it goes back */
		ds_act_own_change(dup, d.fd);
		if (lstat(dest, &st) != 0 || st.st_dev != d.entry.st_dev || st.st_ino != d.entry.st_ino)
			rc = ds_refuse(dup, DUPSCAN_E_CHANGED_INODE);
		else if (d.fd >= 0 && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) &&
			 (uint64_t)st.st_size != ds_rec_size(dup->tree, dup->rec))
			rc = ds_refuse(dup, DUPSCAN_E_CHANGED_SIZE);
		else if (d.fd >= 0 && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) && ds_ns(st.st_mtim) != dup->rec->mtime_ns)
			rc = ds_refuse(dup, DUPSCAN_E_CHANGED_MTIME);
		if (rc == 0)
			rc = ds_act_kept_holds(keep, &k, flags);
		if (rc == 0)
			rc = ds_fsync_dir_of(dest);
		else if (ds_renameat2(AT_FDCWD, dest, d.dirfd, d.name, RENAME_NOREPLACE) == 0)
			ds_act_own_change(dup, d.fd);
		goto out;
	}
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS) {
		rc = -errno;
		goto out;
	}
	/* another filesystem (or no RENAME_NOREPLACE): a verified copy at dest
	 * first, then the duplicate goes as -d removes it; killed in between,
	 * both are left */
	rc = copy_to(&d, dest);
	if (rc)
		goto out;
	rc = ds_act_hide_and_check(keep, dup, &k, &d, flags);
	if (rc == 0 && unlinkat(d.dirfd, d.tmp, 0) != 0) {
		rc = -errno;
		if (ds_act_rename_noreplace(d.dirfd, d.tmp, d.dirfd, d.name) == 0)
			d.tmp[0] = '\0';
	} else if (rc == 0) {
		d.tmp[0] = '\0';
		ds_act_own_change(dup, d.fd);
	}
	if (rc)
		unlink(dest);
out:
	ds_act_release(&k, &d);
	return rc;
}
