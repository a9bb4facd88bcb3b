/* SPDX-License-Identifier: MIT */
/* fsutil.c: the system calls the library and the program both need, made
 * whole (fsutil.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dupscan.h"
#include "dupscan_config.h"
#include "fsutil.h"
#if !HAVE_RENAMEAT2
#include <sys/syscall.h>
#endif

int ds_renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags)
{
#if HAVE_RENAMEAT2
	return renameat2(olddir, old, newdir, new_, flags);
#else
	/* no libc wrapper (musl): the system call itself */
	return (int)syscall(SYS_renameat2, olddir, old, newdir, new_, flags);
#endif
}

int ds_rename_paths(const char *from, const char *to, unsigned flags)
{
	return ds_renameat2(AT_FDCWD, from, AT_FDCWD, to, flags) == 0 ? 0 : errno == ENOSYS ? -EINVAL : -errno;
}

int ds_write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t ds_pread_some(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Both descriptors from offset 0 to their ends: equal bytes? @return 0,
 * DUPSCAN_E_DIFFERS or -errno. */
int ds_compare_fds(int a, int b, unsigned char *ba, unsigned char *bb)
{
	for (uint64_t off = 0;; off += DS_COPY_BUF) {
		ssize_t na = ds_pread_some(a, ba, DS_COPY_BUF, off), nb = ds_pread_some(b, bb, DS_COPY_BUF, off);
		if (na < 0 || nb < 0)
			return (int)(na < 0 ? na : nb);
		if (na != nb || memcmp(ba, bb, (size_t)na) != 0)
			return DUPSCAN_E_DIFFERS;
		if (na == 0)
			return 0;
	}
}

int ds_compare_paths(const char *a, const char *b)
{
	int fa = open(a, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int fb = fa < 0 ? -1 : open(b, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	unsigned char *buf = fb < 0 ? NULL : malloc(2 * DS_COPY_BUF);
	int rc = fa < 0 || fb < 0 ? -errno : buf ? ds_compare_fds(fa, fb, buf, buf + DS_COPY_BUF) : -ENOMEM;
	free(buf);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return rc;
}

char *ds_dir_part(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *d = strdup(dirname(copy));
	free(copy);
	return d;
}

int ds_fsync_dir_of(const char *path)
{
	char *dir = ds_dir_part(path);
	if (!dir)
		return -ENOMEM;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	/* some filesystems cannot sync a directory; the data itself was synced */
	return rc == -EINVAL ? 0 : rc;
}

int ds_make_dirs_told(const char *path, size_t len, mode_t mode, int (*before)(void *ctx, const char *dir), void *ctx)
{
	char *p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	struct stat st;
	for (char *s = p + (len > 0); len > 0 && rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (before && (lstat(p, &st) == 0 || errno != ENOENT))
			; /* there already (or mkdir says why not) */
		else if (before)
			rc = before(ctx, p);
		if (rc == 0 && mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

int ds_make_dirs(const char *path, size_t len, mode_t mode)
{
	return ds_make_dirs_told(path, len, mode, NULL, NULL);
}

char *ds_xdg_dir(const char *var, const char *fallback)
{
	const char *xdg = getenv(var), *home = getenv("HOME");
	char *dir = NULL;
	int n = -1;
	if (xdg && xdg[0] == '/') /* the XDG spec: a relative value is ignored */
		n = asprintf(&dir, "%s/dupscan", xdg);
	else if (home && home[0])
		n = asprintf(&dir, "%s/%s/dupscan", home, fallback);
	else
		errno = ENOENT;
	if (n < 0)
		return NULL;
	int rc = ds_make_dirs(dir, strlen(dir), 0700);
	if (rc) {
		free(dir);
		errno = -rc;
		return NULL;
	}
	return dir;
}

const char *ds_size_text(uint64_t b, char buf[DS_SIZE_TEXT])
{
	static const char *const unit[] = { "KB", "MB", "GB", "TB", "PB", "EB" };
	if (b < 1000) {
		snprintf(buf, DS_SIZE_TEXT, "%" PRIu64 " byte%s", b, b == 1 ? "" : "s");
		return buf;
	}
	double v = (double)b / 1000;
	int u = 0;
	while (v >= 999.95 && u < 5) { /* 999.95 KB would print as "1000.0 KB" */
		v /= 1000;
		u++;
	}
	snprintf(buf, DS_SIZE_TEXT, "%.1f %s", v, unit[u]);
	return buf;
}
