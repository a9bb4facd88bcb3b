/* SPDX-License-Identifier: MIT */
/* fsutil.h: what the library and the program both need of the system calls,
 * written once and compiled into each (never installed, no public API):
 * whole writes and reads, comparing open files or paths, renaming with
 * flags, a path's directory and making a name there durable, times in
 * nanoseconds, and the prefix of every temporary name dupscan makes. */
#ifndef DUPSCAN_FSUTIL_H
#define DUPSCAN_FSUTIL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* ".dupscan-tmp-" and six characters: the one spelling of the temporary
 * names actions make (the walk reports names so spelled as left over). */
#define DS_TEMP_PREFIX ".dupscan-tmp-"
#define DS_TEMP_PREFIX_LEN (sizeof(DS_TEMP_PREFIX) - 1)
#define DS_COPY_BUF (1u << 20) /* bytes a copy or a comparison of whole files moves at once */

#ifndef RENAME_NOREPLACE /* (a C library without renameat2's flags) */
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static inline int64_t ds_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* renameat2(2), also where the C library has no wrapper (musl): flags as
 * RENAME_NOREPLACE, RENAME_EXCHANGE. @return 0, or -1 with errno. */
int ds_renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags);
/* The same for two paths. @return 0 or -errno (-EINVAL where the kernel has
 * no renameat2, as where the filesystem cannot take the flags). */
int ds_rename_paths(const char *from, const char *to, unsigned flags);
/* Write all len bytes (retrying short writes and EINTR). @return 0 or -errno. */
int ds_write_all(int fd, const void *buf, size_t len);
/* Read up to len bytes at off, fewer only at the end of the file.
 * @return the bytes read or -errno. */
ssize_t ds_pread_some(int fd, void *buf, size_t len, uint64_t off);
/* Both descriptors from offset 0 to their ends, through ba and bb
 * (DS_COPY_BUF bytes each): equal bytes? @return 0, DUPSCAN_E_DIFFERS or -errno. */
int ds_compare_fds(int a, int b, unsigned char *ba, unsigned char *bb);
/* The files at paths a and b: equal bytes? @return 0, DUPSCAN_E_DIFFERS or -errno. */
int ds_compare_paths(const char *a, const char *b);
/* The directory part of path, malloc'ed; NULL on ENOMEM. */
char *ds_dir_part(const char *path);
/* fsync the directory holding path, so a name made there is durable (a
 * filesystem that cannot sync a directory counts as done). @return 0 or -errno. */
int ds_fsync_dir_of(const char *path);
/* mkdir -p for the first len bytes of path. @return 0 or -errno. */
int ds_make_dirs(const char *path, size_t len, mode_t mode);
/* The same, with before(ctx, dir) called for each folder not there yet,
 * before it is made (a journal line); its nonzero return stops there and
 * is returned. */
int ds_make_dirs_told(const char *path, size_t len, mode_t mode, int (*before)(void *ctx, const char *dir), void *ctx);
/* dupscan's directory of one XDG kind, made (0700) when missing: $VAR/dupscan
 * where VAR is set to an absolute path, else $HOME/FALLBACK/dupscan (VAR
 * "XDG_CACHE_HOME", FALLBACK ".cache"). @return its path, malloc'ed, or NULL
 * (no place: neither is set; or it cannot be made) with errno. */
char *ds_xdg_dir(const char *var, const char *fallback);

/* A size as a person reads it, in powers of 1000 as -m gives them: "812
 * bytes", "1 byte", "4.1 GB". @return buf. */
#define DS_SIZE_TEXT 32
const char *ds_size_text(uint64_t bytes, char buf[DS_SIZE_TEXT]);

#endif /* DUPSCAN_FSUTIL_H */
