/* SPDX-License-Identifier: MIT */
/* sysio.c: the system calls every part uses, made whole: opening a path of any
 * length, reading and writing all the bytes asked for, comparing and copying
 * open files, making a new name durable. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dupscan_config.h"
#include "internal.h"
#include "support/support.h"



/* Open a path of any length: past PATH_MAX, piece by piece. */
int ds_open_path(const char *path, int flags)
{
	if (strlen(path) < PATH_MAX)
		return open(path, flags);
	/* past PATH_MAX, go down in pieces shorter than it, each relative to the last */
	char piece[PATH_MAX];
	const char *p = path;
	int dirfd = AT_FDCWD;
	while (strlen(p) >= PATH_MAX) {
		const char *cut = p + PATH_MAX - 1;
		while (cut > p && *cut != '/')
			cut--;
		size_t n = (size_t)(cut - p);
		if (*cut != '/') {
			errno = ENAMETOOLONG; /* one component longer than PATH_MAX */
			break;
		}
		memcpy(piece, n ? p : "/", n ? n : 1);
		piece[n ? n : 1] = '\0';
		int fd = openat(dirfd, piece, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int err = errno;
		if (dirfd != AT_FDCWD)
			close(dirfd);
		if (fd < 0) {
			errno = err;
			return -1;
		}
		dirfd = fd;
		p = cut + 1;
	}
	int fd = strlen(p) < PATH_MAX ? openat(dirfd, p, flags) : -1;
	int err = errno;
	if (dirfd != AT_FDCWD)
		close(dirfd);
	errno = err;
	return fd;
}



/* cachestat(2), Linux 6.5: what of a file's range is in the page cache,
 * asked without reading anything (a read with RWF_NOWAIT starts readahead on
 * a miss, in the wrong order: measured, it cost a cold scan its disk order). */
#ifndef __NR_cachestat
#define __NR_cachestat 451 /* the same number on every architecture */
#endif
struct cachestat_range {
	uint64_t off, len;
};
struct cachestat_result {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

bool ds_all_cached(int fd, uint64_t off, uint64_t len)
{
	struct cachestat_range range = { off, len };
	struct cachestat_result cs;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages = page > 0 ? (len + (uint64_t)page - 1) / (uint64_t)page : 1;
	return syscall(__NR_cachestat, fd, &range, &cs, 0) == 0 && cs.nr_cache >= pages;
}

int ds_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t got = ds_pread_some(fd, buf, len, off);
	return got < 0 ? (int)got : (size_t)got == len ? 0 : DUPSCAN_E_SHORT;
}


/* in's content, from its start, into the new empty file out, synced and read
 * back equal; then st's mode, owner (when permitted) and times. */
int ds_copy_into(int in, int out, const struct stat *st)
{
	unsigned char *buf = malloc(2 * DS_COPY_BUF);
	int rc = buf ? 0 : -ENOMEM;
	for (uint64_t off = 0; rc == 0;) {
		ssize_t n = ds_pread_some(in, buf, DS_COPY_BUF, off);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		rc = ds_write_all(out, buf, (size_t)n);
		off += (uint64_t)n;
	}
	if (rc == 0 && fsync(out) != 0)
		rc = -errno;
	/* read back and compare: what reached the new file is what in holds */
	if (rc == 0)
		rc = ds_compare_fds(in, out, buf, buf + DS_COPY_BUF);
	free(buf);
	/* owner first: chown may clear set-id bits, which fchmod then restores */
	if (rc == 0 && fchown(out, st->st_uid, st->st_gid) != 0 && errno != EPERM)
		rc = -errno;
	struct timespec times[2] = { st->st_atim, st->st_mtim };
	if (rc == 0 && (fchmod(out, st->st_mode & 07777) != 0 || futimens(out, times) != 0 || fsync(out) != 0))
		rc = -errno;
	return rc;
}


/* ---- moving and copying ---- */

size_t ds_open_per_thread(int threads)
{
	/* every thread may hold this many files: together they must fit the
	 * process' limit, with room for the caller's own descriptors */
	struct rlimit rl;
	size_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (size_t)rl.rlim_cur : 1024;
	size_t per = limit > 64 ? (limit - 64) / (size_t)(threads > 0 ? threads : 1) : 8;
	return per < 8 ? 8 : per > DS_LOCKSTEP_MAX ? DS_LOCKSTEP_MAX : per;
}


/* Copy the regular file open at in (from its start) to the new file to. */
int ds_copy_fd(int in, const char *to)
{
	struct stat st;
	if (fstat(in, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return DUPSCAN_E_NOTREG;
	int out = open(to, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	if (out < 0)
		return -errno;
	int rc = ds_copy_into(in, out, &st);
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc)
		unlink(to);
	return rc;
}
