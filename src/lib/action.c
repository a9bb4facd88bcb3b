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
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "dupscan_config.h"
#include "internal.h"

#if !HAVE_RENAMEAT2
#include <sys/syscall.h>
/* no libc wrapper (musl): the system call itself */
static int ds_renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags)
{
	return (int)syscall(SYS_renameat2, olddir, old, newdir, new_, flags);
}
#define renameat2 ds_renameat2
#endif

#define DEDUPE_STEP (16u * 1024u * 1024u) /* btrfs caps one call at 16 MiB */

/* The ctime f's inode must have: the scan's, or the one dupscan's own last
 * change of it left (a link, a rename or an unlink moves an inode's ctime). */
static int64_t want_ctime(const dupscan_file *f)
{
	return f->inode ? f->inode->ctime_ns : f->rec->ctime_ns;
}

/* dupscan itself just changed the inode open at fd: later checks of any of its
 * names expect the ctime it has now. */
static void own_change(const dupscan_file *f, int fd)
{
	struct stat st;
	if (f->inode && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->rec->dev && st.st_ino == f->rec->ino)
		f->inode->ctime_ns = ds_ns(st.st_ctim);
}

/* st is f as scanned (ds_same_file()), expecting the ctime dupscan's own
 * last change left; with DUPSCAN_ACT_NO_CHANGE_CHECK, only a regular file. */
static int as_scanned(const struct stat *st, const dupscan_file *f, unsigned flags)
{
	if (!S_ISREG(st->st_mode))
		return DUPSCAN_E_CHANGED;
	if (flags & DUPSCAN_ACT_NO_CHANGE_CHECK)
		return 0;
	return ds_same_file(st, f->rec, want_ctime(f)) ? 0 : DUPSCAN_E_CHANGED;
}

static int gone_or(int err)
{
	return err == ENOENT || err == ENOTDIR || err == ELOOP ? DUPSCAN_E_CHANGED : -err;
}

DUPSCAN_API int dupscan_check_unchanged(const dupscan_file *f)
{
	struct stat st;
	if (!f)
		return -EINVAL;
	if (stat(f->path, &st) != 0)
		return -errno;
	return as_scanned(&st, f, 0);
}

/* ---- the kept file, held open: the inode every later check compares with ---- */

struct kept {
	int fd;
	struct stat st;
	/* inotify watches on both files for writes from before their check until
	 * after the change: the one change a check by metadata can miss is an
	 * in-place write whose mtime is put back in the instant before a link or
	 * rename moves the ctime anyway. The instance is the scan's (or our own
	 * for a handle without one); -1 where inotify is refused. */
	int watch;
	bool own_watch, written;
	int wd[2], nwd;
};

#define KEPT_INIT { -1, { 0 }, -1, false, false, { -1, -1 }, 0 }

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
			bool ours = false;
			for (int i = 0; i < k->nwd; i++)
				ours |= e->wd == k->wd[i];
			if (count && ((ours && (e->mask & IN_MODIFY)) || (e->mask & IN_Q_OVERFLOW)))
				k->written = true;
			at += (ssize_t)(sizeof(*e) + e->len);
		}
}

static void watch_begin(struct kept *k, dupscan_scan *scan)
{
	if (scan && scan->act_watch < 0)
		scan->act_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	k->own_watch = !scan;
	k->watch = scan ? scan->act_watch : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	drain(k, false); /* what earlier actions left */
}

static void watch_fd(struct kept *k, int fd)
{
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (k->watch < 0 || fd < 0)
		return;
	int wd = inotify_add_watch(k->watch, proc, IN_MODIFY);
	if (wd >= 0) {
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
	return k->fd < 0 ? gone_or(errno) : 0;
}

/* keep's path still reaches the pinned inode, and that inode is as expected.
 * Called with the duplicate's entry out of the way, so a path that reached the
 * file only through the duplicate's name fails here (SAME_ENTRY). */
static int kept_holds(const dupscan_file *keep, struct kept *k, unsigned flags)
{
	struct stat now, st;
	if (!(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) && written_since(k))
		return DUPSCAN_E_CHANGED;
	if (stat(keep->path, &now) != 0)
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? DUPSCAN_E_SAME_ENTRY : -errno;
	if (now.st_dev != k->st.st_dev || now.st_ino != k->st.st_ino)
		return DUPSCAN_E_CHANGED;
	if (fstat(k->fd, &st) != 0)
		return -errno;
	return as_scanned(&st, keep, flags);
}

/* ---- the duplicate's directory entry: its directory open, its name ---- */

struct slot {
	int dirfd;
	char *dir, *name;
	struct stat entry;  /* the entry itself (a symlink with -s) */
	struct stat file;   /* what it names: the entry, or a symlink's target */
	ino_t made_ino;     /* the link an action put at the name */
	int fd;             /* the regular file it holds, open; -1 for a symlink */
	char tmp[24];       /* a temporary name in dirfd, when one was made */
};

#define SLOT_INIT { -1, NULL, NULL, { 0 }, { 0 }, 0, -1, { 0 } }

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
		return gone_or(errno);
	if (S_ISLNK(d->entry.st_mode))
		return 0;
	d->fd = openat(d->dirfd, d->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	return d->fd < 0 ? gone_or(errno) : 0;
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
 * too: the entry's directory (by device and inode) and its name. */
static int final_entry(const char *path, struct stat *dir, char **name)
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
	free(d);
	free(p);
	return rc;
}

/* Does keep's path end at dup's very directory entry (through a symlink, a
 * bind mount or a second spelling)? Decided by the directories' device and
 * inode and the name, never by comparing path strings. */
static bool same_entry(const dupscan_file *keep, const struct slot *d)
{
	struct stat kdir, ddir;
	char *kname = NULL;
	bool same = final_entry(keep->path, &kdir, &kname) == 0 && fstat(d->dirfd, &ddir) == 0 &&
		    kdir.st_dev == ddir.st_dev && kdir.st_ino == ddir.st_ino && strcmp(kname, d->name) == 0;
	free(kname);
	return same;
}


/* Is f in its set by a proof from the hash cache or by a report, not by this
 * run's comparison? */
static bool by_proof(const dupscan_file *f)
{
	const struct ds_rec *r = f->inode ? f->inode : f->rec;
	return r && (r->flags & DS_F_TRUSTED);
}

/* The kept file and the duplicate, byte by byte. @return 0, DUPSCAN_E_DIFFERS or -errno. */
static int compare_pair(const struct kept *k, const struct slot *d)
{
	int fd = d->fd >= 0 ? d->fd : openat(d->dirfd, d->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return gone_or(errno);
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
static int prepare(const dupscan_file *keep, const dupscan_file *dup, unsigned flags, struct kept *k,
		   struct slot *d)
{
	if (!keep || !dup)
		return -EINVAL;
	if (dup->rec->flags & DS_F_PROTECTED)
		return DUPSCAN_E_PROTECTED;
	int rc = pin_kept(keep, k);
	if (rc == 0)
		rc = open_slot(dup, d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK)) {
		watch_begin(k, dup->scan);
		watch_fd(k, k->fd);
		watch_fd(k, d->fd);
	}
	/* looked at once the writes are watched: nothing after goes unseen */
	if (rc == 0 && (fstat(k->fd, &k->st) != 0 || (d->fd >= 0 ? fstat(d->fd, &d->file)
								  : fstatat(d->dirfd, d->name, &d->file, 0)) != 0))
		rc = gone_or(errno);
	/* the name must still hold what was opened */
	if (rc == 0 && d->fd >= 0 && (d->file.st_dev != d->entry.st_dev || d->file.st_ino != d->entry.st_ino))
		rc = DUPSCAN_E_CHANGED;
	if (rc == 0 && same_entry(keep, d))
		rc = DUPSCAN_E_SAME_ENTRY;
	if (rc == 0)
		rc = as_scanned(&k->st, keep, flags);
	if (rc == 0)
		rc = as_scanned(&d->file, dup, flags);
	/* a pair the cache or a report vouched for is compared now: a forged
	 * cache or report can make a listing wrong, never an action */
	if (rc == 0 && (by_proof(keep) || by_proof(dup)))
		rc = compare_pair(k, d);
	return rc;
}

static void release(struct kept *k, struct slot *d)
{
	if (k->fd >= 0)
		close(k->fd);
	for (int i = 0; k->watch >= 0 && i < k->nwd; i++)
		inotify_rm_watch(k->watch, k->wd[i]);
	if (k->own_watch && k->watch >= 0)
		close(k->watch);
	close_slot(d);
}

/* Make a fresh ".dupscan-tmp-XXXXXX" name in d's directory with create(). */
static int temp_in(struct slot *d, int (*create)(struct slot *d, const void *arg), const void *arg)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ (uintptr_t)d;
	int rc = -EEXIST;
	for (int attempt = 0; attempt < 100 && rc == -EEXIST; attempt++) {
		memcpy(d->tmp, ".dupscan-tmp-", 13);
		for (int i = 0; i < 6; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			d->tmp[13 + i] = alphabet[(x >> 33) % (sizeof(alphabet) - 1)];
		}
		d->tmp[19] = '\0';
		rc = create(d, arg) == 0 ? 0 : -errno;
	}
	if (rc)
		d->tmp[0] = '\0';
	return rc;
}

/* rename without replacing; where the filesystem cannot promise that, look first */
static int rename_noreplace(int from_dir, const char *from, int to_dir, const char *to)
{
	if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0)
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
	return rename_noreplace(d->dirfd, d->name, d->dirfd, d->tmp);
}

/* The entry now at d->tmp is the one checked, unchanged but for the ctime the
 * rename itself moved. */
static int tmp_holds_dup(const dupscan_file *dup, const struct slot *d, unsigned flags)
{
	struct stat st;
	if (fstatat(d->dirfd, d->tmp, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (st.st_dev != d->entry.st_dev || st.st_ino != d->entry.st_ino)
		return DUPSCAN_E_CHANGED;
	if (d->fd < 0 || (flags & DUPSCAN_ACT_NO_CHANGE_CHECK))
		return 0;
	return (uint64_t)st.st_size == dup->rec->size && ds_ns(st.st_mtim) == dup->rec->mtime_ns ? 0
											 : DUPSCAN_E_CHANGED;
}

/* Take dup's entry out of the way (to d->tmp), then check that it is what was
 * checked and that keep still holds without it; otherwise put it back. */
static int hide_and_check(const dupscan_file *keep, const dupscan_file *dup, struct kept *k, struct slot *d,
			  unsigned flags)
{
	int rc = temp_in(d, create_hidden, NULL);
	if (rc)
		return rc;
	own_change(dup, d->fd);
	rc = tmp_holds_dup(dup, d, flags);
	if (rc == 0)
		rc = kept_holds(keep, k, flags);
	if (rc && rename_noreplace(d->dirfd, d->tmp, d->dirfd, d->name) == 0) {
		own_change(dup, d->fd);
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

static int swap_in(struct slot *d);

static int put_back_copy(struct slot *d, bool over_own_symlink)
{
	struct stat st, now;
	if (d->fd < 0 || fstat(d->fd, &st) != 0)
		return DUPSCAN_E_CHANGED;
	if (temp_in(d, create_copy_of_fd, &st) != 0)
		return DUPSCAN_E_CHANGED;
	/* with -l the name holds the symlink just made: swapped out, and dropped
	 * only if it is that symlink (else swapped back: whatever took the name
	 * keeps it, and the copy stays under d->tmp) */
	if (over_own_symlink && swap_in(d) == 1) {
		if (fstatat(d->dirfd, d->tmp, &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(now.st_mode) &&
		    now.st_ino == d->made_ino && unlinkat(d->dirfd, d->tmp, 0) == 0)
			d->tmp[0] = '\0';
		else
			swap_in(d);
	} else if (rename_noreplace(d->dirfd, d->tmp, d->dirfd, d->name) == 0) {
		d->tmp[0] = '\0';
	}
	return DUPSCAN_E_CHANGED;
}

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

/* Swap the new link at d->tmp with the duplicate at d->name; @return 1 when
 * swapped (the old entry is at d->tmp), 0 when the filesystem cannot swap. */
static int swap_in(struct slot *d)
{
	if (renameat2(d->dirfd, d->tmp, d->dirfd, d->name, RENAME_EXCHANGE) == 0)
		return 1;
	return errno == EINVAL || errno == ENOSYS ? 0 : -errno;
}

DUPSCAN_API int dupscan_replace_with_link(const dupscan_file *keep, const dupscan_file *dup,
					  int kind, unsigned flags)
{
	if (kind != DUPSCAN_LINK_HARD && kind != DUPSCAN_LINK_SOFT)
		return -EINVAL;
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	char *target = NULL;
	int rc = prepare(keep, dup, flags, &k, &d);
	if (rc)
		goto out;
	bool hard = kind == DUPSCAN_LINK_HARD;
	if (hard && d.file.st_dev == k.st.st_dev && d.file.st_ino == k.st.st_ino) {
		rc = DUPSCAN_E_ALREADY;
		goto out;
	}
	if (hard && d.entry.st_dev != k.st.st_dev) {
		rc = -EXDEV;
		goto out;
	}
	if (!hard && !(target = relative_target(keep->path, dup->path))) {
		rc = errno ? -errno : -ENOMEM;
		goto out;
	}
	if (flags & DUPSCAN_ACT_DRY_RUN)
		goto out;
	struct link_src src = { &k, hard ? keep->path : target };
	rc = temp_in(&d, hard ? create_hard : create_soft, &src);
	if (rc)
		goto out;
	if (hard)
		own_change(keep, k.fd);
	/* the new name must reach the inode that was checked, still as scanned */
	struct stat st;
	if (fstatat(d.dirfd, d.tmp, &st, 0) != 0)
		rc = errno == ELOOP || errno == ENOENT ? DUPSCAN_E_SAME_ENTRY : -errno;
	else if (st.st_dev != k.st.st_dev || st.st_ino != k.st.st_ino)
		rc = DUPSCAN_E_CHANGED;
	else
		rc = kept_holds(keep, &k, flags);
	struct stat made;
	if (rc == 0 && fstatat(d.dirfd, d.tmp, &made, AT_SYMLINK_NOFOLLOW) == 0)
		d.made_ino = made.st_ino;
	int swapped = rc ? 0 : swap_in(&d);
	if (swapped < 0)
		rc = swapped;
	if (rc == 0 && !swapped) {
		/* no atomic swap here: check the duplicate once more, then rename over it */
		struct stat now;
		if (fstatat(d.dirfd, d.name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != d.entry.st_ino ||
		    now.st_dev != d.entry.st_dev)
			rc = DUPSCAN_E_CHANGED;
		else if (renameat(d.dirfd, d.tmp, d.dirfd, d.name) != 0)
			rc = -errno;
		else
			d.tmp[0] = '\0';
	}
	if (rc == 0 && swapped) {
		/* d.tmp holds what was at the name: the duplicate, or else it goes back;
		 * the swap moved the ctime of both inodes */
		own_change(dup, d.fd);
		if (hard)
			own_change(keep, k.fd);
		rc = tmp_holds_dup(dup, &d, flags);
		if (rc == 0)
			rc = kept_holds(keep, &k, flags);
		if (rc && swap_in(&d) == 1) {
			own_change(dup, d.fd);
			if (hard)
				own_change(keep, k.fd);
		} else if (rc) {
			d.tmp[0] = '\0'; /* could not swap back: what was there stays at d.tmp */
		}
	}
	if (d.tmp[0] && unlinkat(d.dirfd, d.tmp, 0) != 0 && rc == 0)
		rc = -errno;
	d.tmp[0] = '\0';
	if (rc == 0) {
		own_change(dup, d.fd);
		if (hard)
			own_change(keep, k.fd);
		/* a symlink reaches the content only while keep holds it: if keep was
		 * replaced in the instant after its check, the duplicate comes back */
		else if (d.fd >= 0 && kept_holds(keep, &k, flags) != 0)
			rc = put_back_copy(&d, true);
	}
out:
	free(target);
	release(&k, &d);
	return rc;
}

DUPSCAN_API int dupscan_remove_duplicate(const dupscan_file *keep, const dupscan_file *dup, unsigned flags)
{
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	int rc = prepare(keep, dup, flags, &k, &d);
	if (rc == 0 && !(flags & DUPSCAN_ACT_DRY_RUN))
		rc = hide_and_check(keep, dup, &k, &d, flags);
	if (rc == 0 && !(flags & DUPSCAN_ACT_DRY_RUN)) {
		if (unlinkat(d.dirfd, d.tmp, 0) != 0) {
			rc = -errno;
			if (rename_noreplace(d.dirfd, d.tmp, d.dirfd, d.name) == 0)
				d.tmp[0] = '\0';
		} else {
			d.tmp[0] = '\0';
			own_change(dup, d.fd);
			/* keep replaced in the instant between its check and the unlink:
			 * the duplicate's content, still open, comes back (a symlink
			 * held none) */
			if (d.fd >= 0 && kept_holds(keep, &k, flags) != 0)
				rc = put_back_copy(&d, false);
		}
	}
	release(&k, &d);
	return rc;
}

/* ioctl(2) with a request of the kernel's width: glibc declares it unsigned
 * long, musl int, where constants past INT_MAX (FS_IOC_FIEMAP, FIDEDUPERANGE)
 * would not convert without a warning; through a variable they do. */
static int fs_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
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
	if (fs_ioctl(a, FS_IOC_FIEMAP, fa) != 0 || fs_ioctl(b, FS_IOC_FIEMAP, fb) != 0)
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
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	struct file_dedupe_range *req = NULL;
	int rc = prepare(keep, dup, flags, &k, &d);
	if (rc)
		goto out;
	if ((d.file.st_dev == k.st.st_dev && d.file.st_ino == k.st.st_ino) || k.st.st_size == 0) {
		rc = DUPSCAN_E_ALREADY;
		goto out;
	}
	/* a symlinked duplicate: its target, which prepare() checked */
	if (d.fd < 0 && (d.fd = openat(d.dirfd, d.name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) >= 0) {
		struct stat st;
		if (fstat(d.fd, &st) != 0 || st.st_dev != d.file.st_dev || st.st_ino != d.file.st_ino)
			rc = DUPSCAN_E_CHANGED;
	}
	req = malloc(sizeof(*req) + sizeof(struct file_dedupe_range_info));
	if (rc == 0 && (d.fd < 0 || !req))
		rc = req ? gone_or(errno) : -ENOMEM;
	if (rc)
		goto out;
	int kfd = k.fd, dfd = d.fd;
	struct stat ks = k.st, ds = d.file;
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
		if (fs_ioctl(kfd, FIDEDUPERANGE, req) != 0) {
			int err = errno;
			if ((err == EPERM || err == EBADF || err == EACCES) && !reopened) {
				/* older kernels want the destination open for writing */
				int wfd = open(dup->path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
				reopened = true;
				if (wfd >= 0) {
					struct stat ws;
					if (fstat(wfd, &ws) == 0 && ws.st_ino == ds.st_ino && ws.st_dev == ds.st_dev) {
						close(d.fd);
						d.fd = dfd = wfd;
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
	release(&k, &d);
	return rc;
}

DUPSCAN_API int dupscan_hash_file(const char *path, uint64_t *size, uint64_t *hash)
{
	if (!path || !hash)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	struct ds_hashes *h = ds_hashes_new(1);
	unsigned char *buf = malloc(DS_COPY_BUF);
	int rc = !h || !buf ? -ENOMEM : fstat(fd, &st) != 0 ? -errno : S_ISREG(st.st_mode) ? 0 : DUPSCAN_E_NOTREG;
	uint64_t total = 0;
	while (rc == 0) {
		ssize_t n = ds_pread_some(fd, buf, DS_COPY_BUF, total);
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		ds_hash_update(h, 0, buf, (size_t)n);
		total += (uint64_t)n;
	}
	if (rc == 0) {
		*hash = ds_hash_digest(h, 0);
		if (size)
			*size = total;
	}
	free(buf);
	ds_hashes_free(h);
	close(fd);
	return rc;
}

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

static int create_copy(const char *tmp, const void *from)
{
	int rc = dupscan_copy_file(from, tmp);
	if (rc == 0)
		return 0;
	/* make_temp() retries on EEXIST and reports errno otherwise */
	errno = rc == -EEXIST ? EEXIST : rc < 0 && rc > -4096 ? -rc : EIO;
	return -1;
}

static int create_copy_of_slot(const char *tmp, const void *slot)
{
	const struct slot *d = slot;
	int rc = ds_copy_fd(d->fd, tmp);
	if (rc == 0)
		return 0;
	/* make_temp() retries on EEXIST and reports errno otherwise */
	errno = rc == -EEXIST ? EEXIST : rc < 0 && rc > -4096 ? -rc : EIO;
	return -1;
}

/* A verified copy made by create() under a temporary name beside to, then
 * given the name to (link: never over an existing file), fsynced. */
static int place_copy(const char *to, int (*create)(const char *tmp, const void *arg), const void *arg)
{
	char *tmp = NULL;
	int rc = make_temp(to, &tmp, create, arg);
	if (rc)
		return rc;
	if (link(tmp, to) != 0)
		rc = -errno;
	unlink(tmp);
	free(tmp);
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
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
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
	int rc = place_copy(to, create_copy, from);
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
	return place_copy(dest, create_copy_of_slot, d);
}

DUPSCAN_API int dupscan_move_duplicate(const dupscan_file *keep, const dupscan_file *dup,
				       const char *dest, unsigned flags)
{
	if (!dest)
		return -EINVAL;
	struct kept k = KEPT_INIT;
	struct slot d = SLOT_INIT;
	struct stat st;
	int rc = prepare(keep, dup, flags, &k, &d);
	if (rc == 0 && lstat(dest, &st) == 0)
		rc = -EEXIST;
	else if (rc == 0 && errno != ENOENT)
		rc = -errno;
	if (rc || (flags & DUPSCAN_ACT_DRY_RUN))
		goto out;
	if (renameat2(d.dirfd, d.name, AT_FDCWD, dest, RENAME_NOREPLACE) == 0) {
		/* moved: it must be the entry checked, and keep must hold without
		 * it; otherwise it goes back */
		own_change(dup, d.fd);
		if (lstat(dest, &st) != 0 || st.st_dev != d.entry.st_dev || st.st_ino != d.entry.st_ino ||
		    (d.fd >= 0 && !(flags & DUPSCAN_ACT_NO_CHANGE_CHECK) &&
		     ((uint64_t)st.st_size != dup->rec->size || ds_ns(st.st_mtim) != dup->rec->mtime_ns)))
			rc = DUPSCAN_E_CHANGED;
		if (rc == 0)
			rc = kept_holds(keep, &k, flags);
		if (rc == 0)
			rc = ds_fsync_dir_of(dest);
		else if (renameat2(AT_FDCWD, dest, d.dirfd, d.name, RENAME_NOREPLACE) == 0)
			own_change(dup, d.fd);
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
	rc = hide_and_check(keep, dup, &k, &d, flags);
	if (rc == 0 && unlinkat(d.dirfd, d.tmp, 0) != 0) {
		rc = -errno;
		if (rename_noreplace(d.dirfd, d.tmp, d.dirfd, d.name) == 0)
			d.tmp[0] = '\0';
	} else if (rc == 0) {
		d.tmp[0] = '\0';
		own_change(dup, d.fd);
	}
	if (rc)
		unlink(dest);
out:
	release(&k, &d);
	return rc;
}
