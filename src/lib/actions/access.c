/* SPDX-License-Identifier: MIT */
/* access.c: who may read or write a path. A hard link makes a path the kept
 * file's inode, and a symlink makes it reach that inode: either way the path
 * then has the kept file's owner, group, permission bits, POSIX ACL and
 * security labels (the security.* attributes: SELinux, SMACK, IMA), and its
 * own are gone. Such a change is refused unless the caller lifts the rule
 * (DUPSCAN_ACT_IGNORE_ACCESS), as util-linux hardlink refuses owners and
 * modes that differ. (Removing a duplicate: readers.c.) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "remote/remote.h"

/* One attribute's value by fd (fd >= 0) or path (following symlinks).
 * @return its length, or -1 with errno. */
static ssize_t value_of(int fd, const char *path, const char *name, char *buf, size_t cap)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, cap) : getxattr(path, name, buf, cap);
}

/* The file's attribute names, NUL-separated, malloc'ed (*names NULL and 0
 * where the filesystem keeps none). @return the length, or -errno. */
static ssize_t names_of(int fd, const char *path, char **names)
{
	*names = NULL;
	for (int tries = 0; tries < 4; tries++) {
		ssize_t n = fd >= 0 ? flistxattr(fd, NULL, 0) : listxattr(path, NULL, 0);
		if (n < 0)
			return errno == ENOTSUP ? 0 : -errno;
		if (n == 0)
			return 0;
		char *buf = malloc((size_t)n);
		if (!buf)
			return -ENOMEM;
		ssize_t got = fd >= 0 ? flistxattr(fd, buf, (size_t)n) : listxattr(path, buf, (size_t)n);
		if (got >= 0) {
			*names = buf;
			return got;
		}
		free(buf);
		if (errno != ERANGE) /* (ERANGE: one was added meanwhile) */
			return -errno;
	}
	return -ERANGE;
}

/* Does this attribute decide access? acl: the POSIX ACL; else a security label. */
static bool decides(const char *name, bool acl)
{
	return acl ? strcmp(name, "system.posix_acl_access") == 0 : strncmp(name, "security.", 9) == 0;
}

/* Is every attribute of a that decides access (of the kind acl says) on b,
 * with the same value? @return 1 yes, 0 no, -errno. */
static int attrs_within(int fa, const char *pa, int fb, const char *pb, bool acl)
{
	char *names;
	ssize_t len = names_of(fa, pa, &names);
	if (len < 0)
		return (int)len;
	int rc = 1;
	/* most files have no attribute at all: nothing to hold their values */
	char *va = len ? malloc(65536) : NULL, *vb = len ? malloc(65536) : NULL;
	if (len && (!va || !vb))
		rc = -ENOMEM;
	for (ssize_t off = 0; rc == 1 && off < len; off += (ssize_t)strlen(names + off) + 1) {
		const char *name = names + off;
		if (!decides(name, acl))
			continue;
		ssize_t na = value_of(fa, pa, name, va, 65536), nb = value_of(fb, pb, name, vb, 65536);
		if (na < 0 && errno != ENODATA)
			rc = -errno;
		else if (na < 0 || nb < 0 || na != nb || memcmp(va, vb, (size_t)na) != 0)
			rc = 0;
	}
	free(va);
	free(vb);
	free(names);
	return rc;
}

int ds_access_differs(int fa, const char *pa, const struct stat *a, int fb, const char *pb, const struct stat *b)
{
	if (a->st_uid != b->st_uid)
		return DUPSCAN_E_ACCESS_OWNER;
	if (a->st_gid != b->st_gid)
		return DUPSCAN_E_ACCESS_GROUP;
	if ((a->st_mode & 07777) != (b->st_mode & 07777))
		return DUPSCAN_E_ACCESS_MODE;
	for (int acl = 1; acl >= 0; acl--) {
		int rc = attrs_within(fa, pa, fb, pb, acl);
		if (rc == 1)
			rc = attrs_within(fb, pb, fa, pa, acl);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return acl ? DUPSCAN_E_ACCESS_ACL : DUPSCAN_E_ACCESS_LABEL;
	}
	return 0;
}

DUPSCAN_API int dupscan_access_differs(const dupscan_file *a, const dupscan_file *b)
{
	if (!a || !b)
		return -EINVAL;
	if (ds_remote_of(a) || ds_remote_of(b))
		return DUPSCAN_E_REMOTE_FILE;
	struct stat sa, sb;
	if (stat(a->path, &sa) != 0 || stat(b->path, &sb) != 0)
		return -errno;
	return ds_access_differs(-1, a->path, &sa, -1, b->path, &sb);
}
