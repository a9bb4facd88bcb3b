/* SPDX-License-Identifier: MIT */
/* action.c: the safe primitives behind dupscan's destructive actions: re-check
 * files against the scan, replace atomically, never lose the kept file. */
#define _GNU_SOURCE /* linkat's AT_SYMLINK_FOLLOW, realpath */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define DEDUPE_STEP (16u * 1024u * 1024u) /* btrfs caps one call at 16 MiB */

static int matches_scan(const struct stat *st, const struct ds_rec *r)
{
	int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	if (!S_ISREG(st->st_mode) || st->st_dev != r->dev || st->st_ino != r->ino ||
	    (uint64_t)st->st_size != r->size || mt != r->mtime_ns)
		return DUPSCAN_E_CHANGED;
	return 0;
}

DUPSCAN_API int dupscan_check_unchanged(const dupscan_file *f)
{
	struct stat st;
	if (!f)
		return -EINVAL;
	if (stat(f->path, &st) != 0)
		return -errno;
	return matches_scan(&st, f->rec);
}

/* Both files must still exist; unless told otherwise, exactly as scanned. */
static int check_pair(const dupscan_file *keep, const dupscan_file *dup, unsigned flags,
		      struct stat *ks, struct stat *ds)
{
	if (!keep || !dup)
		return -EINVAL;
	if (stat(keep->path, ks) != 0 || stat(dup->path, ds) != 0)
		return errno == ENOENT ? DUPSCAN_E_CHANGED : -errno;
	if (flags & DUPSCAN_ACT_NO_CHANGE_CHECK)
		return S_ISREG(ks->st_mode) && S_ISREG(ds->st_mode) ? 0 : DUPSCAN_E_CHANGED;
	int rc = matches_scan(ks, keep->rec);
	return rc ? rc : matches_scan(ds, dup->rec);
}

/* realpath() of both: the same result means one directory entry under two
 * spellings (or a symlink to the other), and acting on one loses the other. */
static int same_entry(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	int rc = (!ra || !rb) ? -errno : strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return rc;
}

/* check_pair(), and the two paths must be two directory entries. */
static int check_two_entries(const dupscan_file *keep, const dupscan_file *dup, unsigned flags,
			     struct stat *ks, struct stat *ds)
{
	if (dup && (dup->rec->flags & DS_F_PROTECTED))
		return DUPSCAN_E_PROTECTED;
	int rc = check_pair(keep, dup, flags, ks, ds);
	if (rc)
		return rc;
	int same = same_entry(keep->path, dup->path);
	return same < 0 ? same : same ? DUPSCAN_E_SAME_ENTRY : 0;
}

static char *dir_part(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *d = strdup(dirname(copy));
	free(copy);
	return d;
}

/* A name in dup's directory that tells where it came from. */
static int make_temp(const char *dup, char **out, int (*create)(const char *tmp, const void *arg),
		     const void *arg)
{
	char *dir = dir_part(dup);
	if (!dir)
		return -ENOMEM;
	size_t cap = strlen(dir) + 32;
	char *tmp = malloc(cap);
	if (!tmp) {
		free(dir);
		return -ENOMEM;
	}
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ (uintptr_t)tmp;
	int rc = -EEXIST;
	for (int attempt = 0; attempt < 100 && rc == -EEXIST; attempt++) {
		char suffix[7];
		for (int i = 0; i < 6; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			suffix[i] = alphabet[(x >> 33) % (sizeof(alphabet) - 1)];
		}
		suffix[6] = '\0';
		snprintf(tmp, cap, "%s/.dupscan-tmp-%s", dir, suffix);
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

static int create_hard(const char *tmp, const void *keep)
{
	/* follow a kept path that is a symlink: link its file, not the link */
	return linkat(AT_FDCWD, keep, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW);
}

static int create_soft(const char *tmp, const void *target)
{
	return symlink(target, tmp);
}

/* The path from dup's directory to keep, through the real directories. */
static char *relative_target(const char *keep, const char *dup)
{
	char *kdir = dir_part(keep), *ddir = dir_part(dup);
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

DUPSCAN_API int dupscan_replace_with_link(const dupscan_file *keep, const dupscan_file *dup,
					  int kind, unsigned flags)
{
	struct stat ks, ds;
	if (kind != DUPSCAN_LINK_HARD && kind != DUPSCAN_LINK_SOFT)
		return -EINVAL;
	int rc = check_two_entries(keep, dup, flags, &ks, &ds);
	if (rc)
		return rc;
	if (ks.st_dev == ds.st_dev && ks.st_ino == ds.st_ino && kind == DUPSCAN_LINK_HARD)
		return DUPSCAN_E_ALREADY;
	if (kind == DUPSCAN_LINK_HARD && ks.st_dev != ds.st_dev)
		return -EXDEV;
	char *target = NULL, *tmp = NULL;
	if (kind == DUPSCAN_LINK_SOFT && !(target = relative_target(keep->path, dup->path)))
		return errno ? -errno : -ENOMEM;
	if (flags & DUPSCAN_ACT_DRY_RUN)
		goto out;
	rc = kind == DUPSCAN_LINK_HARD ? make_temp(dup->path, &tmp, create_hard, keep->path)
				       : make_temp(dup->path, &tmp, create_soft, target);
	if (rc)
		goto out;
	/* the duplicate must still be what was compared, right up to the swap */
	if (!(flags & DUPSCAN_ACT_NO_CHANGE_CHECK))
		rc = dupscan_check_unchanged(dup);
	if (rc == 0 && rename(tmp, dup->path) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
out:
	free(tmp);
	free(target);
	return rc;
}

DUPSCAN_API int dupscan_remove_duplicate(const dupscan_file *keep, const dupscan_file *dup, unsigned flags)
{
	struct stat ks, ds;
	int rc = check_two_entries(keep, dup, flags, &ks, &ds);
	if (rc || (flags & DUPSCAN_ACT_DRY_RUN))
		return rc;
	return unlink(dup->path) == 0 ? 0 : -errno;
}

/* Do the two files already map to the same physical extents? */
static bool extents_shared(int a, int b)
{
	enum { N = 64 };
	size_t sz = sizeof(struct fiemap) + N * sizeof(struct fiemap_extent);
	struct fiemap *fa = calloc(1, sz), *fb = calloc(1, sz);
	bool shared = false;
	if (!fa || !fb)
		goto out;
	fa->fm_length = fb->fm_length = FIEMAP_MAX_OFFSET;
	fa->fm_extent_count = fb->fm_extent_count = N;
	fa->fm_flags = fb->fm_flags = FIEMAP_FLAG_SYNC;
	if (ioctl(a, FS_IOC_FIEMAP, fa) != 0 || ioctl(b, FS_IOC_FIEMAP, fb) != 0)
		goto out;
	if (fa->fm_mapped_extents == 0 || fa->fm_mapped_extents != fb->fm_mapped_extents ||
	    fa->fm_mapped_extents >= N)
		goto out;
	shared = true;
	for (unsigned i = 0; i < fa->fm_mapped_extents && shared; i++) {
		const struct fiemap_extent *x = &fa->fm_extents[i], *y = &fb->fm_extents[i];
		shared = x->fe_physical == y->fe_physical && x->fe_logical == y->fe_logical &&
			 x->fe_length == y->fe_length &&
			 !(x->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DATA_INLINE));
	}
out:
	free(fa);
	free(fb);
	return shared;
}

DUPSCAN_API int dupscan_dedupe(const dupscan_file *keep, const dupscan_file *dup, unsigned flags)
{
	struct stat ks, ds;
	if (dup && (dup->rec->flags & DS_F_PROTECTED))
		return DUPSCAN_E_PROTECTED;
	int rc = check_pair(keep, dup, flags, &ks, &ds);
	if (rc)
		return rc;
	if ((ks.st_dev == ds.st_dev && ks.st_ino == ds.st_ino) || ks.st_size == 0)
		return DUPSCAN_E_ALREADY;
	int kfd = open(keep->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	int dfd = open(dup->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct file_dedupe_range *req = malloc(sizeof(*req) + sizeof(struct file_dedupe_range_info));
	if (kfd < 0 || dfd < 0 || !req) {
		rc = req ? -errno : -ENOMEM;
		goto out;
	}
	/* the open files are the scanned ones, whatever happened to the paths */
	if (!(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) &&
	    ((rc = ds_check_unchanged(kfd, keep->rec)) != 0 || (rc = ds_check_unchanged(dfd, dup->rec)) != 0))
		goto out;
	if (extents_shared(kfd, dfd)) {
		rc = DUPSCAN_E_ALREADY;
		goto out;
	}
	if (flags & DUPSCAN_ACT_DRY_RUN)
		goto out;
	bool reopened = false;
	for (uint64_t off = 0; off < (uint64_t)ks.st_size;) {
		uint64_t len = (uint64_t)ks.st_size - off < DEDUPE_STEP ? (uint64_t)ks.st_size - off : DEDUPE_STEP;
		memset(req, 0, sizeof(*req) + sizeof(struct file_dedupe_range_info));
		req->src_offset = off;
		req->src_length = len;
		req->dest_count = 1;
		req->info[0].dest_fd = dfd;
		req->info[0].dest_offset = off;
		if (ioctl(kfd, FIDEDUPERANGE, req) != 0) {
			int err = errno;
			if ((err == EPERM || err == EBADF || err == EACCES) && !reopened) {
				/* older kernels want the destination open for writing */
				int wfd = open(dup->path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
				reopened = true;
				if (wfd >= 0) {
					struct stat ws;
					if (fstat(wfd, &ws) == 0 && ws.st_ino == ds.st_ino && ws.st_dev == ds.st_dev) {
						close(dfd);
						dfd = wfd;
						continue;
					}
					close(wfd);
				}
			}
			rc = (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP || err == EXDEV) ? -EOPNOTSUPP : -err;
			goto out;
		}
		if (req->info[0].status == FILE_DEDUPE_RANGE_DIFFERS) {
			rc = DUPSCAN_E_DIFFERS;
			goto out;
		}
		if (req->info[0].status < 0) {
			rc = req->info[0].status == -EINVAL ? -EOPNOTSUPP : req->info[0].status;
			goto out;
		}
		if (req->info[0].bytes_deduped == 0) {
			rc = -EIO;
			goto out;
		}
		off += req->info[0].bytes_deduped;
	}
out:
	free(req);
	if (kfd >= 0)
		close(kfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* ---- moving and copying ---- */

#define COPY_BUF (1u << 20)

/* Read up to len bytes, fewer only at the end of the file. @return bytes or -errno. */
static ssize_t read_full(int fd, unsigned char *p, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Both descriptors from offset 0 to their ends: equal bytes? @return 0,
 * DUPSCAN_E_DIFFERS or -errno. */
static int compare_fds(int a, int b, unsigned char *ba, unsigned char *bb)
{
	if (lseek(a, 0, SEEK_SET) < 0 || lseek(b, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t na = read_full(a, ba, COPY_BUF), nb = read_full(b, bb, COPY_BUF);
		if (na < 0 || nb < 0)
			return (int)(na < 0 ? na : nb);
		if (na != nb || memcmp(ba, bb, (size_t)na) != 0)
			return DUPSCAN_E_DIFFERS;
		if (na == 0)
			return 0;
	}
}

static int fsync_dir_of(const char *path)
{
	char *dir = dir_part(path);
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

DUPSCAN_API int dupscan_copy_file(const char *from, const char *to)
{
	if (!from || !to)
		return -EINVAL;
	int in = open(from, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in < 0)
		return -errno;
	struct stat st;
	int src_rc = fstat(in, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : DUPSCAN_E_NOTREG;
	if (src_rc) {
		close(in);
		return src_rc;
	}
	int out = open(to, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	if (out < 0) {
		int rc = -errno;
		close(in);
		return rc;
	}
	unsigned char *buf = malloc(2 * COPY_BUF);
	int rc = buf ? 0 : -ENOMEM;
	while (rc == 0) {
		ssize_t n = read_full(in, buf, COPY_BUF);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		rc = ds_write_all(out, buf, (size_t)n);
	}
	if (rc == 0 && fsync(out) != 0)
		rc = -errno;
	/* read back and compare: what reached the new file is what from holds */
	if (rc == 0)
		rc = compare_fds(in, out, buf, buf + COPY_BUF);
	if (rc == 0) {
		/* owner first: chown may clear set-id bits, which fchmod then restores */
		if (fchown(out, st.st_uid, st.st_gid) != 0 && errno != EPERM)
			rc = -errno;
		if (rc == 0 && fchmod(out, st.st_mode & 07777) != 0)
			rc = -errno;
		struct timespec times[2] = { st.st_atim, st.st_mtim };
		if (rc == 0 && futimens(out, times) != 0)
			rc = -errno;
		if (rc == 0 && fsync(out) != 0)
			rc = -errno;
	}
	free(buf);
	close(in);
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc)
		unlink(to);
	return rc;
}

static int create_copy(const char *tmp, const void *from)
{
	int rc = dupscan_copy_file(from, tmp);
	if (rc == 0)
		return 0;
	/* make_temp() retries on EEXIST and reports errno otherwise */
	errno = rc == -EEXIST ? EEXIST : rc < 0 && rc > -4096 ? -rc : EIO;
	return -1;
}

/* The move itself; recheck (when not NULL) is the file that must still be
 * from, checked right before from leaves its place. */
static int move_path(const char *from, const char *to, const dupscan_file *recheck, unsigned flags)
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
	if (recheck && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK)) {
		int rc = dupscan_check_unchanged(recheck);
		if (rc)
			return rc;
	}
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return fsync_dir_of(to);
	int err = errno;
	if (err == EINVAL || err == ENOSYS) {
		/* no RENAME_NOREPLACE here: link() never overwrites either */
		if (link(from, to) == 0)
			return unlink(from) == 0 ? fsync_dir_of(to) : -errno;
		err = errno;
	}
	if (err != EXDEV)
		return -err;
	/* another filesystem: a verified copy gets its name first, and only then
	 * does from go; killed in between, both copies are left */
	char *tmp = NULL;
	int rc = make_temp(to, &tmp, create_copy, from);
	if (rc)
		return rc;
	if (link(tmp, to) != 0)
		rc = -errno;
	unlink(tmp);
	free(tmp);
	if (rc == 0)
		rc = fsync_dir_of(to);
	if (rc == 0 && recheck && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK))
		rc = dupscan_check_unchanged(recheck);
	if (rc) {
		if (rc != -EEXIST)
			unlink(to);
		return rc;
	}
	return unlink(from) == 0 ? 0 : -errno;
}

DUPSCAN_API int dupscan_move_path(const char *from, const char *to, unsigned flags)
{
	if (!from || !to)
		return -EINVAL;
	return move_path(from, to, NULL, flags);
}

DUPSCAN_API int dupscan_move_duplicate(const dupscan_file *keep, const dupscan_file *dup,
				       const char *dest, unsigned flags)
{
	struct stat ks, ds;
	if (!dest)
		return -EINVAL;
	int rc = check_two_entries(keep, dup, flags, &ks, &ds);
	if (rc)
		return rc;
	return move_path(dup->path, dest, dup, flags);
}
