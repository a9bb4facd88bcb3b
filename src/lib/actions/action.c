/* SPDX-License-Identifier: MIT */
/* action.c: the safe primitives behind dupscan's destructive actions: re-check
 * files against the scan, replace atomically, never lose the kept file. */
#define _GNU_SOURCE /* linkat's AT_SYMLINK_FOLLOW, realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "remote/remote.h"
#include "read/read.h"

/* The ctime f's inode must have: the scan's, or the one dupscan's own last
 * change of it left (a link, a rename or an unlink moves an inode's ctime). */
static int64_t want_ctime(const dupscan_file *f)
{
	const struct ds_rec *inode = ds_file_inode(f);
	return inode ? inode->ctime_ns : f->rec->ctime_ns;
}

/* dupscan itself just changed the inode open at fd: later checks of any of its
 * names expect the ctime it has now. */
void ds_act_own_change(const dupscan_file *f, int fd)
{
	struct stat st;
	struct ds_rec *inode = ds_file_inode(f);
	if (inode && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == ds_rec_dev(f->tree, f->rec) && st.st_ino == ds_rec_ino(f->tree, f->rec))
		inode->ctime_ns = ds_ns(st.st_ctim);
}

/* st is f as scanned (ds_same_file()), expecting the ctime dupscan's own
 * last change left; with DUPSCAN_ACT_NO_CHANGE_CHECK, only a regular file. */
int ds_act_as_scanned(const struct stat *st, const dupscan_file *f, unsigned flags)
{
	if (!S_ISREG(st->st_mode))
		return ds_refuse(f, DUPSCAN_E_CHANGED_TYPE);
	if (flags & DUPSCAN_ACT_NO_CHANGE_CHECK)
		return 0;
	int why = ds_file_change(f->tree, st, f->rec, want_ctime(f));
	return why ? ds_refuse(f, why) : 0;
}

int ds_act_gone_or(int err)
{
	return err == ENOENT || err == ENOTDIR || err == ELOOP ? DUPSCAN_E_CHANGED : -err;
}

DUPSCAN_API int dupscan_check_unchanged(const dupscan_file *f)
{
	struct stat st;
	if (!f)
		return -EINVAL;
	if (ds_remote_of(f))
		return ds_remote_check(f);
	if (stat(f->path, &st) != 0)
		return -errno;
	return ds_act_as_scanned(&st, f, 0);
}

/* Read the events queued; count writes to this action's files. */
static void drain(struct kept *k, bool count)
{
	union {
		struct inotify_event e;
		char bytes[4096];
	} buf;
	ssize_t n;
	while (k->watch >= 0 && (n = read(k->watch, buf.bytes, sizeof(buf))) > 0)
		for (ssize_t at = 0; at < n;) {
			const struct inotify_event *e = (const void *)(buf.bytes + at);
			int ours = -1;
			for (int i = 0; i < k->nwd; i++)
				ours = e->wd == k->wd[i] ? i : ours;
			if (count && ((ours >= 0 && (e->mask & IN_MODIFY)) || (e->mask & IN_Q_OVERFLOW))) {
				bool other = k->written && k->written_file != (ours < 0 ? NULL : k->watched[ours]);
				k->written_file = ours < 0 || other ? NULL : k->watched[ours];
				k->written = true;
			}
			at += (ssize_t)(sizeof(*e) + e->len);
		}
}

static void watch_begin(struct kept *k, int *shared)
{
	if (shared && *shared < 0)
		*shared = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	k->own_watch = !shared;
	k->watch = shared ? *shared : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	drain(k, false); /* what earlier actions left */
}

static void watch_fd(struct kept *k, int fd, const dupscan_file *f)
{
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (k->watch < 0 || fd < 0)
		return;
	int wd = inotify_add_watch(k->watch, proc, IN_MODIFY);
	if (wd >= 0) {
		k->watched[k->nwd] = f;
		k->wd[k->nwd++] = wd;
	} else if (k->own_watch) {
		close(k->watch);
		k->watch = -1;
	} else {
		k->watch = -1; /* the scan's instance stays; this action goes without */
	}
}

/* Has either file been written since the watch began? */
static bool written_since(struct kept *k)
{
	drain(k, true);
	return k->written;
}

static int pin_kept(const dupscan_file *keep, struct kept *k)
{
	k->fd = ds_open_path(keep->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return k->fd < 0 ? ds_act_gone_or(errno) : 0;
}

/* keep's path still reaches the pinned inode, and that inode is as expected.
 * Called with the duplicate's entry out of the way, so a path that reached the
 * file only through the duplicate's name fails here (SAME_ENTRY). */
int ds_act_kept_holds(const dupscan_file *keep, struct kept *k, unsigned flags)
{
	struct stat now, st;
	if (!(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) && written_since(k))
		return k->written_file ? ds_refuse(k->written_file, DUPSCAN_E_CHANGED_WRITTEN) : DUPSCAN_E_CHANGED;
	/* on another host: its server holds it open and checks it there */
	if (ds_remote_of(keep))
		return ds_remote_check(keep);
	if (stat(keep->path, &now) != 0)
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? DUPSCAN_E_SAME_ENTRY : -errno;
	if (now.st_dev != k->st.st_dev || now.st_ino != k->st.st_ino)
		return ds_refuse(keep, DUPSCAN_E_CHANGED_INODE);
	if (fstat(k->fd, &st) != 0)
		return -errno;
	return ds_act_as_scanned(&st, keep, flags);
}

/* Split path into its directory and last name. */
static int split_path(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');
	*dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	*name = strdup(slash ? slash + 1 : path);
	return *dir && *name ? 0 : -ENOMEM;
}

static int open_slot(const dupscan_file *dup, struct slot *d)
{
	int rc = split_path(dup->path, &d->dir, &d->name);
	if (rc)
		return rc;
	d->dirfd = ds_open_path(d->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->dirfd < 0 || fstatat(d->dirfd, d->name, &d->entry, AT_SYMLINK_NOFOLLOW) != 0)
		return ds_act_gone_or(errno);
	if (S_ISLNK(d->entry.st_mode))
		return 0;
	d->fd = openat(d->dirfd, d->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	return d->fd < 0 ? ds_act_gone_or(errno) : 0;
}

static void close_slot(struct slot *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->dirfd >= 0)
		close(d->dirfd);
	free(d->dir);
	free(d->name);
}

/* The directory entry a path names, following symlinks in its last component
 * too: the entry's directory (by device and inode; dir_path, when not NULL,
 * its path, malloc'ed) and its name. */
static int final_entry(const char *path, struct stat *dir, char **name, char **dir_path)
{
	char *p = strdup(path);
	int rc = p ? 0 : -ENOMEM;
	for (int hops = 0; rc == 0; hops++) {
		struct stat st;
		if (lstat(p, &st) != 0) {
			rc = -errno;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		char target[PATH_MAX];
		ssize_t n = readlink(p, target, sizeof(target) - 1);
		if (n < 0 || hops >= 40) {
			rc = n < 0 ? -errno : -ELOOP;
			break;
		}
		target[n] = '\0';
		const char *slash = strrchr(p, '/');
		size_t keep = target[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
		char *next = malloc(keep + (size_t)n + 1);
		if (!next) {
			rc = -ENOMEM;
			break;
		}
		memcpy(next, p, keep);
		memcpy(next + keep, target, (size_t)n + 1);
		free(p);
		p = next;
	}
	char *d = NULL;
	if (rc == 0 && (rc = split_path(p, &d, name)) == 0 && stat(d, dir) != 0)
		rc = -errno;
	if (rc == 0 && dir_path)
		*dir_path = d;
	else
		free(d);
	free(p);
	return rc;
}

/* Are the directories at paths a and b one, by their real paths? */
static bool same_real_dir(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = ra ? realpath(b, NULL) : NULL;
	bool same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

/* Does keep's path end at dup's very directory entry (through a symlink, a
 * bind mount or a second spelling)? Decided by the directories' device and
 * inode and the name, never by comparing path strings. */
static bool same_entry(const dupscan_file *keep, const struct slot *d)
{
	struct stat kdir, ddir;
	char *kname = NULL, *kdir_path = NULL;
	bool same = final_entry(keep->path, &kdir, &kname, &kdir_path) == 0 && fstat(d->dirfd, &ddir) == 0 &&
		    kdir.st_dev == ddir.st_dev && kdir.st_ino == ddir.st_ino && strcmp(kname, d->name) == 0;
	/* where numbers are not kept, two directories of one number (the roots
	 * of two filesystems a FUSE mount shows) are one only by their real
	 * paths; a bind mount there, one directory by two paths, is caught by
	 * the files' one number (ds_act_untold()) and by the kept path failing
	 * once the duplicate is set aside (ds_act_kept_holds()) */
	if (same && !ds_act_numbers_kept(keep))
		same = same_real_dir(kdir_path, d->dir);
	free(kname);
	free(kdir_path);
	return same;
}

/* Is f in its set by a proof from the hash cache or by a report, not by this
 * run's comparison? */
static bool by_proof(const dupscan_file *f)
{
	const struct ds_rec *r = ds_file_inode(f) ? ds_file_inode(f) : f->rec;
	return r->flags & DS_F_TRUSTED;
}

/* Does f's filesystem keep one inode number a file (ds_inodes_trusted())?
 * (The scan's table of devices is filled as they are met: the files of a
 * set were met while matching, so this only reads it.) */
bool ds_act_numbers_kept(const dupscan_file *f)
{
	return ds_remote_of(f) || ds_inodes_trusted((struct ds_tree *)f->tree, ds_rec_dev(f->tree, f->rec));
}

DUPSCAN_API int dupscan_same_file(const dupscan_file *a, const dupscan_file *b)
{
	if (!a || !b || a->tree != b->tree || dupscan_file_host(a) != dupscan_file_host(b))
		return 0;
	return a == b || (ds_rec_dev(a->tree, a->rec) == ds_rec_dev(b->tree, b->rec) &&
			  ds_rec_ino(a->tree, a->rec) == ds_rec_ino(b->tree, b->rec) && ds_act_numbers_kept(a));
}

DUPSCAN_API int dupscan_same_bytes(const dupscan_file *a, const dupscan_file *b)
{
	if (!a || !b || a->tree != b->tree)
		return 0;
	if (!a->tree->pay.whole)
		return 1;
	return !(a->idx & DS_OUTSIDE) && !(b->idx & DS_OUTSIDE) && ds_same_bytes(a->tree, a->idx, b->idx);
}

/* The kept file and the duplicate, byte by byte. @return 0, DUPSCAN_E_DIFFERS or -errno. */
static int compare_pair(const struct kept *k, const struct slot *d)
{
	int fd = d->fd >= 0 ? d->fd : openat(d->dirfd, d->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ds_act_gone_or(errno);
	unsigned char *buf = malloc(2 * DS_COPY_BUF);
	int rc = buf ? ds_compare_fds(k->fd, fd, buf, buf + DS_COPY_BUF) : -ENOMEM;
	free(buf);
	if (fd != d->fd)
		close(fd);
	return rc;
}

/* Pin keep, open dup's entry, and check both: not protected, two entries,
 * each as scanned; a pair this run did not compare (cache proof, report) is
 * compared now. */
int ds_act_untold(const dupscan_file *keep, const struct kept *k, const struct slot *d)
{
	bool one = d->file.st_dev == k->st.st_dev && d->file.st_ino == k->st.st_ino;
	return one && !ds_act_numbers_kept(keep) ? DUPSCAN_E_UNTOLD : 0;
}

int ds_act_prepare(const dupscan_file *keep, const dupscan_file *dup, unsigned flags, struct kept *k,
		   struct slot *d)
{
	if (!keep || !dup)
		return -EINVAL;
	if (dup->rec->flags & DS_F_PROTECTED)
		return DUPSCAN_E_PROTECTED;
	/* only this host's files change; a kept file there is checked there */
	bool remote = ds_remote_of(keep) != NULL;
	if (ds_remote_of(dup) || (remote && by_proof(dup)))
		return DUPSCAN_E_REMOTE_FILE;
	int rc = remote ? 0 : pin_kept(keep, k);
	if (rc == 0)
		rc = open_slot(dup, d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK)) {
		watch_begin(k, &ds_acts_of(dup)->watch);
		if (!remote)
			watch_fd(k, k->fd, keep);
		watch_fd(k, d->fd, dup);
	}
	/* looked at once the writes are watched: nothing after goes unseen */
	if (rc == 0 && ((!remote && fstat(k->fd, &k->st) != 0) ||
			(d->fd >= 0 ? fstat(d->fd, &d->file) : fstatat(d->dirfd, d->name, &d->file, 0)) != 0))
		rc = ds_act_gone_or(errno);
	/* the name must still hold what was opened */
	if (rc == 0 && d->fd >= 0 && (d->file.st_dev != d->entry.st_dev || d->file.st_ino != d->entry.st_ino))
		rc = ds_refuse(dup, DUPSCAN_E_CHANGED_INODE);
	if (rc == 0 && !remote && same_entry(keep, d))
		rc = DUPSCAN_E_SAME_ENTRY;
	if (rc == 0)
		rc = remote ? ds_remote_check(keep) : ds_act_as_scanned(&k->st, keep, flags);
	if (rc == 0)
		rc = ds_act_as_scanned(&d->file, dup, flags);
	/* a pair the cache or a report vouched for is compared now: a forged
	 * cache or report can make a listing wrong, never an action; so is one
	 * on a filesystem whose inode numbers do not tell files apart (the
	 * checks above pass for another file given the same number) */
	if (rc == 0 && (by_proof(keep) || by_proof(dup) || !ds_act_numbers_kept(keep) || !ds_act_numbers_kept(dup)))
		rc = compare_pair(k, d);
	return rc;
}

void ds_act_release(struct kept *k, struct slot *d)
{
	if (k->fd >= 0)
		close(k->fd);
	for (int i = 0; k->watch >= 0 && i < k->nwd; i++)
		inotify_rm_watch(k->watch, k->wd[i]);
	if (k->own_watch && k->watch >= 0)
		close(k->watch);
	close_slot(d);
}

void ds_act_temp_name(char name[DS_TEMP_NAME_SIZE], uint64_t *x)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	if (*x == 0) {
		/* a different sequence per process, call site and instant */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		*x = ((uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ (uintptr_t)name) | 1;
	}
	memcpy(name, DS_TEMP_PREFIX, DS_TEMP_PREFIX_LEN);
	for (size_t i = 0; i < 6; i++) {
		*x = *x * 6364136223846793005ull + 1442695040888963407ull;
		name[DS_TEMP_PREFIX_LEN + i] = alphabet[(*x >> 33) % (sizeof(alphabet) - 1)];
	}
	name[DS_TEMP_PREFIX_LEN + 6] = '\0';
}

/* Make a fresh ".dupscan-tmp-XXXXXX" name in d's directory with create(). */
int ds_act_temp_in(struct slot *d, int (*create)(struct slot *d, const void *arg), const void *arg)
{
	uint64_t x = 0;
	int rc = -EEXIST;
	for (int attempt = 0; attempt < 100 && rc == -EEXIST; attempt++) {
		ds_act_temp_name(d->tmp, &x);
		rc = create(d, arg) == 0 ? 0 : -errno;
	}
	if (rc)
		d->tmp[0] = '\0';
	return rc;
}

/* rename without replacing; where the filesystem cannot promise that, look first */
int ds_act_rename_noreplace(int from_dir, const char *from, int to_dir, const char *to)
{
	if (ds_renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	struct stat st;
	if (fstatat(to_dir, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(from_dir, from, to_dir, to);
}

static int create_hidden(struct slot *d, const void *unused)
{
	(void)unused;
	return ds_act_rename_noreplace(d->dirfd, d->name, d->dirfd, d->tmp);
}

/* The entry now at d->tmp is the one checked, unchanged but for the ctime the
 * rename itself moved. */
int ds_act_tmp_holds_dup(const dupscan_file *dup, const struct slot *d, unsigned flags)
{
	struct stat st;
	if (fstatat(d->dirfd, d->tmp, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (st.st_dev != d->entry.st_dev || st.st_ino != d->entry.st_ino)
		return ds_refuse(dup, DUPSCAN_E_CHANGED_INODE);
	if (d->fd < 0 || (flags & DUPSCAN_ACT_NO_CHANGE_CHECK))
		return 0;
	if ((uint64_t)st.st_size != ds_rec_size(dup->tree, dup->rec))
		return ds_refuse(dup, DUPSCAN_E_CHANGED_SIZE);
	return ds_ns(st.st_mtim) == dup->rec->mtime_ns ? 0 : ds_refuse(dup, DUPSCAN_E_CHANGED_MTIME);
}

/* Take dup's entry out of the way (to d->tmp), then check that it is what was
 * checked and that keep still holds without it; otherwise put it back. */
int ds_act_hide_and_check(const dupscan_file *keep, const dupscan_file *dup, struct kept *k, struct slot *d,
			  unsigned flags)
{
	int rc = ds_act_temp_in(d, create_hidden, NULL);
	if (rc)
		return rc;
	ds_act_own_change(dup, d->fd);
	rc = ds_act_tmp_holds_dup(dup, d, flags);
	if (rc == 0)
		rc = ds_act_kept_holds(keep, k, flags);
	if (rc && ds_act_rename_noreplace(d->dirfd, d->tmp, d->dirfd, d->name) == 0) {
		ds_act_own_change(dup, d->fd);
		d->tmp[0] = '\0';
	}
	/* a name that came back meanwhile keeps it: what was hidden stays at
	 * d->tmp, a leftover a later scan reports, never lost */
	return rc;
}

/* The duplicate's content, still open at d->fd after its last name went, comes
 * back at its name (or, when that is taken, under d->tmp): used when the kept
 * file changed in the instant between the last check and the change. */

static int create_copy_of_fd(struct slot *d, const void *arg)
{
	int out = openat(d->dirfd, d->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	if (out < 0)
		return -1;
	int rc = ds_copy_into(d->fd, out, arg);
	if (close(out) != 0 && rc == 0)
		rc = -errno;
	if (rc) {
		unlinkat(d->dirfd, d->tmp, 0);
		errno = rc < 0 && rc > -4096 ? -rc : EIO;
		return -1;
	}
	return 0;
}

int ds_act_put_back_copy(struct slot *d, bool over_own_symlink)
{
	struct stat st, now;
	if (d->fd < 0 || fstat(d->fd, &st) != 0)
		return DUPSCAN_E_CHANGED;
	if (ds_act_temp_in(d, create_copy_of_fd, &st) != 0)
		return DUPSCAN_E_CHANGED;
	/* with -l the name holds the symlink just made: swapped out, and dropped
	 * only if it is that symlink (else swapped back: whatever took the name
	 * keeps it, and the copy stays under d->tmp) */
	if (over_own_symlink && ds_act_swap_in(d) == 1) {
		if (fstatat(d->dirfd, d->tmp, &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(now.st_mode) &&
		    now.st_ino == d->made_ino && unlinkat(d->dirfd, d->tmp, 0) == 0)
			d->tmp[0] = '\0';
		else
			ds_act_swap_in(d);
	} else if (ds_act_rename_noreplace(d->dirfd, d->tmp, d->dirfd, d->name) == 0) {
		d->tmp[0] = '\0';
	}
	return DUPSCAN_E_CHANGED;
}

/* Swap the new link at d->tmp with the duplicate at d->name; @return 1 when
 * swapped (the old entry is at d->tmp), 0 when the filesystem cannot swap. */
int ds_act_swap_in(struct slot *d)
{
	if (ds_renameat2(d->dirfd, d->tmp, d->dirfd, d->name, RENAME_EXCHANGE) == 0)
		return 1;
	return errno == EINVAL || errno == ENOSYS ? 0 : -errno;
}

