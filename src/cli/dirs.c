/* SPDX-License-Identifier: MIT */
/* dirs.c: mkdir -p, a directory's fsync and renameat2, for --move-to, the
 * journal and --undo. */
#define _GNU_SOURCE /* renameat2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dirs.h"
#include "dupscan_config.h"

int cli_make_dirs(const char *path, size_t len, mode_t mode)
{
	char *p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	for (char *s = p + (len > 0); len > 0 && rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

int cli_fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	/* some filesystems cannot sync a directory */
	return rc == -EINVAL ? 0 : rc;
}

int cli_rename2(const char *from, const char *to, unsigned flags)
{
#if HAVE_RENAMEAT2
	int rc = renameat2(AT_FDCWD, from, AT_FDCWD, to, flags);
#else
	int rc = (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, flags);
#endif
	return rc == 0 ? 0 : errno == ENOSYS ? -EINVAL : -errno;
}
