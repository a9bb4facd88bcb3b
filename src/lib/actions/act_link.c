/* SPDX-License-Identifier: MIT */
/* act_link.c: a duplicate replaced by a hard link or a symlink to the kept
 * file, swapped in atomically (dupscan_replace_with_link()). */
#define _GNU_SOURCE /* linkat's AT_SYMLINK_FOLLOW, realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "remote/remote.h"

struct link_src {
	const struct kept *k;
	const char *path;   /* keep's path, or the symlink's target text */
};

static int create_hard(struct slot *d, const void *arg)
{
	const struct link_src *src = arg;
	/* link the very inode that was checked, not whatever its path holds now */
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", src->k->fd);
	if (linkat(AT_FDCWD, proc, d->dirfd, d->tmp, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	/* no /proc: by path; the caller checks which inode that linked */
	return linkat(AT_FDCWD, src->path, d->dirfd, d->tmp, AT_SYMLINK_FOLLOW);
}

static int create_soft(struct slot *d, const void *arg)
{
	const struct link_src *src = arg;
	return symlinkat(src->path, d->dirfd, d->tmp);
}

/* The path from dup's directory to keep, through the real directories. */
static char *relative_target(const char *keep, const char *dup)
{
	char *kdir = ds_dir_part(keep), *ddir = ds_dir_part(dup);
	char *rk = kdir ? realpath(kdir, NULL) : NULL, *rd = ddir ? realpath(ddir, NULL) : NULL;
	char *out = NULL;
	if (!rk || !rd)
		goto done;
	const char *base = strrchr(keep, '/') ? strrchr(keep, '/') + 1 : keep;
	/* longest common run of whole components */
	size_t common = 0, i = 0;
	for (;; i++) {
		bool end_k = rk[i] == '\0' || rk[i] == '/', end_d = rd[i] == '\0' || rd[i] == '/';
		if (end_k && end_d)
			common = i;
		if (rk[i] != rd[i] || rk[i] == '\0')
			break;
	}
	size_t ups = 0; /* one per directory component of dup's left after the common part */
	for (const char *p = rd + common; *p; p++)
		if (*p == '/' && p[1] != '\0' && p[1] != '/')
			ups++;
	const char *rest = rk + common;
	while (*rest == '/')
		rest++;
	size_t len = ups * 3 + strlen(rest) + 1 + strlen(base) + 1;
	out = malloc(len);
	if (!out)
		goto done;
	out[0] = '\0';
	for (size_t u = 0; u < ups; u++)
		strcat(out, "../");
	if (*rest) {
		strcat(out, rest);
		strcat(out, "/");
	}
	strcat(out, base);
done:
	free(kdir);
	free(ddir);
	free(rk);
	free(rd);
	return out;
}

/* The swap moved the ctime of the duplicate's inode, and with a hard link of
 * the kept one: later checks expect what it is now. */
static void own_swap(const dupscan_file *keep, const dupscan_file *dup, const struct kept *k,
		     const struct slot *d, bool hard)
{
	ds_act_own_change(dup, d->fd);
	if (hard)
		ds_act_own_change(keep, k->fd);
}

/* The link made under a temporary name in dup's directory; it must reach the
 * inode that was checked, still as scanned. */
static int make_link(const dupscan_file *keep, struct kept *k, struct slot *d, bool hard, const char *target,
		     unsigned flags)
{
	struct link_src src = { k, hard ? keep->path : target };
	int rc = ds_act_temp_in(d, hard ? create_hard : create_soft, &src);
	if (rc)
		return rc;
	if (hard)
		ds_act_own_change(keep, k->fd);
	struct stat st, made;
	if (fstatat(d->dirfd, d->tmp, &st, 0) != 0)
		rc = errno == ELOOP || errno == ENOENT ? DUPSCAN_E_SAME_ENTRY : -errno;
	else if (st.st_dev != k->st.st_dev || st.st_ino != k->st.st_ino)
		rc = ds_refuse(keep, DUPSCAN_E_CHANGED_INODE);
	else
		rc = ds_act_kept_holds(keep, k, flags);
	if (rc == 0 && fstatat(d->dirfd, d->tmp, &made, AT_SYMLINK_NOFOLLOW) == 0)
		d->made_ino = made.st_ino;
	return rc;
}

/* The kept file, as it is now, still has the duplicate's owner, group,
 * mode, ACL and labels? Asked again once the link is in place: a chmod in
 * the instant after the first check moves the kept file's ctime within the
 * change dupscan makes itself, so no ctime tells it. */
static int access_holds(const dupscan_file *keep, const dupscan_file *dup, const struct kept *k,
			const struct slot *d, unsigned flags)
{
	struct stat now;
	if (flags & DUPSCAN_ACT_IGNORE_ACCESS)
		return 0;
	return fstat(k->fd, &now) != 0 ? -errno : ds_access_differs(k->fd, keep->path, &now, d->fd, dup->path, &d->file);
}

/* The link at d->tmp takes the duplicate's name: swapped in one step and the
 * duplicate checked at d->tmp (swapped back if it is not the one checked),
 * or, where the filesystem cannot swap, renamed over it after a last look. */
static int swap_link_in(const dupscan_file *keep, const dupscan_file *dup, struct kept *k, struct slot *d,
			bool hard, unsigned flags)
{
	int swapped = ds_act_swap_in(d);
	if (swapped < 0)
		return swapped;
	if (!swapped) {
		struct stat now;
		if (fstatat(d->dirfd, d->name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != d->entry.st_ino ||
		    now.st_dev != d->entry.st_dev)
			return ds_refuse(dup, DUPSCAN_E_CHANGED_INODE);
		int rc = access_holds(keep, dup, k, d, flags);
		if (rc == 0 && renameat(d->dirfd, d->tmp, d->dirfd, d->name) != 0)
			rc = -errno;
		if (rc == 0)
			d->tmp[0] = '\0';
		return rc;
	}
	own_swap(keep, dup, k, d, hard);
	int rc = ds_act_tmp_holds_dup(dup, d, flags);
	if (rc == 0)
		rc = ds_act_kept_holds(keep, k, flags);
	if (rc == 0)
		rc = access_holds(keep, dup, k, d, flags);
	if (rc && ds_act_swap_in(d) == 1)
		own_swap(keep, dup, k, d, hard);
	else if (rc)
		d->tmp[0] = '\0'; /* could not swap back: what was there stays at d->tmp */
	return rc;
}

DUPSCAN_API int dupscan_replace_with_link(const dupscan_file *keep, const dupscan_file *dup,
					  int kind, unsigned flags)
{
	/* a link or shared extents need both files on this host */
	if (ds_remote_of(keep) || ds_remote_of(dup))
		return DUPSCAN_E_REMOTE_FILE;
	if (kind != DUPSCAN_LINK_HARD && kind != DUPSCAN_LINK_SOFT)
		return -EINVAL;
	/* a link is one file: the duplicate's own tags would be lost */
	if (!dupscan_same_bytes(keep, dup))
		return DUPSCAN_E_PAYLOAD_ONLY;
	/* a new link is checked to reach the kept inode by its number: where
	 * numbers are not kept (sshfs shows each new link with a number of its
	 * own; a FUSE mount of two filesystems repeats them) it cannot be */
	if (kind == DUPSCAN_LINK_HARD && !ds_act_numbers_kept(keep))
		return DUPSCAN_E_LINK_UNCHECKED;
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	char *target = NULL;
	bool hard = kind == DUPSCAN_LINK_HARD;
	int rc = ds_act_prepare(keep, dup, flags, &k, &d);
	if (rc == 0 && hard && d.file.st_dev == k.st.st_dev && d.file.st_ino == k.st.st_ino)
		rc = DUPSCAN_E_ALREADY;
	else if (rc == 0 && hard && d.entry.st_dev != k.st.st_dev)
		rc = -EXDEV;
	else if (rc == 0 && !hard && !(target = relative_target(keep->path, dup->path)))
		rc = errno ? -errno : -ENOMEM;
	/* the path would take keep's owner, group, mode, ACL and labels */
	if (rc == 0 && !(flags & DUPSCAN_ACT_IGNORE_ACCESS))
		rc = ds_access_differs(k.fd, keep->path, &k.st, d.fd, dup->path, &d.file);
	if (rc || (flags & DUPSCAN_ACT_DRY_RUN))
		goto out;
	rc = make_link(keep, &k, &d, hard, target, flags);
	if (rc == 0)
		rc = swap_link_in(keep, dup, &k, &d, hard, flags);
	/* what is left at the temporary name: the duplicate, or the link refused */
	if (d.tmp[0] && unlinkat(d.dirfd, d.tmp, 0) != 0 && rc == 0)
		rc = -errno;
	d.tmp[0] = '\0';
	if (rc == 0) {
		own_swap(keep, dup, &k, &d, hard);
		/* a symlink reaches the content only while keep holds it: if keep was
		 * replaced in the instant after its check, the duplicate comes back */
		if (!hard && d.fd >= 0 && ds_act_kept_holds(keep, &k, flags) != 0)
			rc = ds_act_put_back_copy(&d, true);
	}
out:
	free(target);
	ds_act_release(&k, &d);
	return rc;
}
