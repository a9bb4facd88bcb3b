/* SPDX-License-Identifier: MIT */
/* passfs: a FUSE passthrough for the tests (test_fuse.sh). It serves the
 * tree SRC at MNT as it is, mounts inside it included, and passes the
 * server's inode numbers on (use_ino), as some FUSE filesystems do: where
 * SRC holds two filesystems, two files (and the two roots) can show one
 * number on the one device of the mount. With --sftp, as sshfs shows a
 * tree: the numbers are FUSE's own, given in the order of lookups, and the
 * times whole seconds, the ctime the mtime (SFTP carries no other).
 *
 *     passfs [--sftp] SRC MNT    (returns once mounted; umount MNT)
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int root_fd = -1;
static int use_ino = 1;
static int sftp_times = 0;

/* "/a/b" as a path below the root; "/" is "." */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

#define RC(x) ((x) < 0 ? -errno : 0)

static void *pf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = use_ino;
	cfg->readdir_ino = use_ino;
	/* no caching of attributes: what the server says, each time */
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int pf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int rc = fi ? RC(fstat((int)fi->fh, st)) : RC(fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW));
	if (rc == 0 && sftp_times) {
		st->st_atim.tv_nsec = st->st_mtim.tv_nsec = 0;
		st->st_ctim = st->st_mtim;
	}
	return rc;
}

static int pf_readlink(const char *path, char *buf, size_t size)
{
	ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int pf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off, (void)fi, (void)flags;
	int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		struct stat st = { .st_ino = e->d_ino, .st_mode = (mode_t)(DTTOIF(e->d_type)) };
		if (fill(buf, e->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static int pf_mkdir(const char *path, mode_t mode) { return RC(mkdirat(root_fd, rel(path), mode)); }
static int pf_unlink(const char *path) { return RC(unlinkat(root_fd, rel(path), 0)); }
static int pf_rmdir(const char *path) { return RC(unlinkat(root_fd, rel(path), AT_REMOVEDIR)); }
static int pf_symlink(const char *to, const char *path) { return RC(symlinkat(to, root_fd, rel(path))); }
static int pf_link(const char *from, const char *to) { return RC(linkat(root_fd, rel(from), root_fd, rel(to), 0)); }

static int pf_rename(const char *from, const char *to, unsigned int flags)
{
	return RC(renameat2(root_fd, rel(from), root_fd, rel(to), flags));
}

static int pf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return fi ? RC(fchmod((int)fi->fh, mode)) : RC(fchmodat(root_fd, rel(path), mode, 0));
}

static int pf_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	return fi ? RC(fchown((int)fi->fh, uid, gid)) : RC(fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

static int pf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (fi)
		return RC(ftruncate((int)fi->fh, size));
	int fd = openat(root_fd, rel(path), O_WRONLY);
	if (fd < 0)
		return -errno;
	int rc = RC(ftruncate(fd, size));
	close(fd);
	return rc;
}

static int pf_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	return fi ? RC(futimens((int)fi->fh, tv)) : RC(utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

static int pf_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(root_fd, rel(path), fi->flags & ~O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(root_fd, rel(path), fi->flags | O_CREAT, mode);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pf_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t n = pwrite((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pf_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	return RC(fstatvfs(root_fd, st));
}

static int pf_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int pf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	return RC(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh));
}

static const struct fuse_operations ops = {
	.init = pf_init, .getattr = pf_getattr, .readlink = pf_readlink, .readdir = pf_readdir,
	.mkdir = pf_mkdir, .unlink = pf_unlink, .rmdir = pf_rmdir, .symlink = pf_symlink, .link = pf_link,
	.rename = pf_rename, .chmod = pf_chmod, .chown = pf_chown, .truncate = pf_truncate,
	.utimens = pf_utimens, .open = pf_open, .create = pf_create, .read = pf_read, .write = pf_write,
	.statfs = pf_statfs, .release = pf_release, .fsync = pf_fsync,
};

int main(int argc, char **argv)
{
	int a = 1;
	if (a < argc && strcmp(argv[a], "--sftp") == 0) {
		use_ino = 0;
		sftp_times = 1;
		a++;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: passfs [--sftp] SRC MNT\n");
		return 2;
	}
	root_fd = open(argv[a], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		perror(argv[a]);
		return 1;
	}
	char *fargs[] = { argv[0], argv[a + 1], "-o", "fsname=passfs,default_permissions", NULL };
	return fuse_main(4, fargs, &ops, NULL);
}
