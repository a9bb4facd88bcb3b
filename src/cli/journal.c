/* SPDX-License-Identifier: MIT */
/* journal.c: every destructive run appends what it is about to do to a journal,
 * fsynced before each change, so --undo can reverse moves and links later.
 * The format is text, one change per line, tab-separated, paths absolute and
 * escaped (backslash, and bytes below 0x20 or 0x7f as \xHH); see dupscan(1). */
#define _GNU_SOURCE /* O_CLOEXEC, utimensat */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dirs.h"
#include "dupscan_config.h"
#include "journal.h"

#define JOURNAL_MAGIC_LINE "# dupscan journal 1"
#define JOURNAL_MAGIC JOURNAL_MAGIC_LINE "\n"

struct journal {
	int fd;
	char *path;
	char *cwd;
};


static char *default_path(void)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];
	if (state && state[0] == '/')
		snprintf(dir, sizeof(dir), "%s/dupscan", state);
	else if (home && home[0])
		snprintf(dir, sizeof(dir), "%s/.local/state/dupscan", home);
	else
		return NULL;
	if (cli_make_dirs(dir, strlen(dir), 0700) != 0)
		return NULL;
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", localtime_r(&now, &tm));
	char *out = malloc(strlen(dir) + 64);
	if (out)
		sprintf(out, "%s/journal-%s-%ld", dir, stamp, (long)getpid());
	return out;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- lines ---- */

struct line {
	char *buf;
	size_t len, cap;
	int oom;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->oom)
		return;
	if (l->len + n + 1 > l->cap) {
		size_t cap = (l->len + n + 1) * 2;
		char *b = realloc(l->buf, cap);
		if (!b) {
			l->oom = 1;
			return;
		}
		l->buf = b;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void put_str(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

static void put_escaped(struct line *l, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[5];
		if (*p == '\\') {
			put(l, "\\\\", 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
			put(l, esc, 4);
		} else {
			put(l, (const char *)p, 1);
		}
	}
}

/* A tab, then the path made absolute against cwd, escaped. */
static void put_path(struct line *l, const char *cwd, const char *path)
{
	put(l, "\t", 1);
	if (path[0] != '/') {
		put_escaped(l, cwd);
		if (strcmp(cwd, "/") != 0)
			put(l, "/", 1);
	}
	put_escaped(l, path);
}

static void put_num(struct line *l, bool octal, long long v)
{
	char b[32];
	if (octal)
		snprintf(b, sizeof(b), "%llo", (unsigned long long)v);
	else
		snprintf(b, sizeof(b), "%lld", v);
	put(l, "\t", 1);
	put_str(l, b);
}

static int64_t ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The file, made (or opened to append) with the first change: a run that
 * changes nothing (every set kept, stdin closed) leaves no journal. @return
 * 0, with the run line to write before the change in *head, or -errno. */
static int begin(struct journal *j, struct line *head)
{
	for (int tries = 0; j->fd < 0 && tries < 100; tries++) {
		j->fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
		if (j->fd >= 0 || errno != ENOENT)
			break;
		/* a new journal appears with its first line already in it: made
		 * under a name of its own, then linked in place, so a second run
		 * appending at the same moment never writes before it or twice */
		char tmp[PATH_MAX];
		if (snprintf(tmp, sizeof(tmp), "%s.new-%ld-%d", j->path, (long)getpid(), tries) >= (int)sizeof(tmp))
			return -ENAMETOOLONG;
		int fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0)
			return -errno;
		int rc = write_all(fd, JOURNAL_MAGIC, strlen(JOURNAL_MAGIC));
		if (rc == 0 && link(tmp, j->path) == 0)
			j->fd = fd;
		else
			rc = rc ? rc : errno == EEXIST ? 0 : -errno; /* EEXIST: another run made it: append */
		unlink(tmp);
		if (j->fd < 0)
			close(fd);
		if (rc)
			return rc;
	}
	struct stat st;
	if (j->fd < 0 || fstat(j->fd, &st) != 0)
		return -errno;
	if (st.st_size == 0)
		put_str(head, JOURNAL_MAGIC); /* a file given empty (touch) */
	put_str(head, "run");
	put_num(head, false, (long long)time(NULL));
	put(head, "\t", 1);
	put_str(head, DUPSCAN_VERSION_STRING);
	put(head, "\n", 1);
	return 0;
}

/* Append a finished line and make it durable before anything it names
 * changes. The first goes out in one write with its run line, so another run
 * appending to the same journal never comes between them. */
static int commit(struct journal *j, struct line *l)
{
	put(l, "\n", 1);
	struct line head = { 0 };
	int rc = l->oom ? -ENOMEM : j->fd >= 0 ? 0 : begin(j, &head);
	if (rc == 0 && head.len) {
		put(&head, l->buf, l->len);
		free(l->buf);
		*l = head;
	} else {
		free(head.buf);
	}
	if (rc == 0)
		rc = l->oom ? -ENOMEM : write_all(j->fd, l->buf, l->len);
	if (rc == 0 && fdatasync(j->fd) != 0)
		rc = -errno;
	free(l->buf);
	return rc;
}

/* Can the journal be made at its path? Asked before the first change, so a
 * place that cannot take it is said before any prompt or change (a later
 * failure still stops before the change it was to record). */
static int check_place(const char *path)
{
	if (access(path, W_OK) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash == path ? 1 : slash - path), path);
	return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

struct journal *journal_open(const char *path)
{
	struct journal *j = calloc(1, sizeof(*j));
	char cwd[PATH_MAX];
	if (!j || !getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "dupscan: journal: cannot tell the current directory: %s\n", strerror(errno));
		free(j);
		return NULL;
	}
	j->fd = -1;
	j->cwd = strdup(cwd);
	j->path = path ? strdup(path) : default_path();
	if (!j->path || !j->cwd) {
		fprintf(stderr, "dupscan: journal: no place for it (set XDG_STATE_HOME or HOME, or give --journal=FILE)\n");
		goto fail;
	}
	int rc = check_place(j->path);
	if (rc) {
		fprintf(stderr, "dupscan: journal '%s': %s\n", j->path, strerror(-rc));
		goto fail;
	}
	return j;
fail:
	free(j->path);
	free(j->cwd);
	free(j);
	return NULL;
}

bool journal_written(const struct journal *j)
{
	return j && j->fd >= 0;
}

int journal_record(struct journal *j, const struct journal_change *c)
{
	struct line l = { 0 };
	put_str(&l, c->kind);
	const struct stat *st = &c->entry, *kept = &c->kept_st;
	if (c->dest) {
		/* the inode moved and its other names: --undo links a name back to
		 * one of them when a copy was moved (another filesystem) */
		put_path(&l, j->cwd, c->dup);
		put_path(&l, j->cwd, c->dest);
		put_num(&l, false, (long long)st->st_dev);
		put_num(&l, false, (long long)st->st_ino);
		for (size_t i = 0; i < c->nsiblings; i++)
			put_path(&l, j->cwd, c->siblings[i]);
		return commit(j, &l);
	}
	put_path(&l, j->cwd, c->kept);
	put_path(&l, j->cwd, c->dup);
	put_num(&l, true, (long long)(st->st_mode & 07777));
	put_num(&l, false, (long long)st->st_uid);
	put_num(&l, false, (long long)st->st_gid);
	put_num(&l, false, (long long)ns(st->st_atim));
	put_num(&l, false, (long long)ns(st->st_mtim));
	put_num(&l, false, (long long)kept->st_size);
	put_num(&l, false, (long long)ns(kept->st_mtim));
	put_num(&l, false, (long long)st->st_dev);
	put_num(&l, false, (long long)st->st_ino);
	put_num(&l, false, (long long)kept->st_dev);
	put_num(&l, false, (long long)kept->st_ino);
	char hex[20];
	snprintf(hex, sizeof(hex), "%016llx", c->hash ? (unsigned long long)*c->hash : 0ull);
	put(&l, "\t", 1);
	put_str(&l, c->hash ? hex : "-");
	put(&l, "\t", 1);
	put_str(&l, c->link_target ? "symlink" : "file");
	put(&l, "\t", 1);
	if (c->link_target)
		put_escaped(&l, c->link_target);
	for (size_t i = 0; i < c->nsiblings; i++)
		put_path(&l, j->cwd, c->siblings[i]);
	return commit(j, &l);
}

int journal_rmdir(struct journal *j, const char *dir, const struct stat *st)
{
	struct line l = { 0 };
	put_str(&l, "rmdir");
	put_path(&l, j->cwd, dir);
	put_num(&l, true, (long long)(st->st_mode & 07777));
	return commit(j, &l);
}

const char *journal_path(const struct journal *j)
{
	return j->path;
}

int journal_close(struct journal *j)
{
	if (!j)
		return 0;
	int rc = j->fd < 0 || close(j->fd) == 0 ? 0 : -errno;
	free(j->path);
	free(j->cwd);
	free(j);
	return rc;
}

/* ---- undo ---- */

#define MAXF (17 + JOURNAL_MAX_SIBLINGS)

struct entry {
	char *f[MAXF]; /* fields, unescaped; f[0] is the kind */
	int n;
	unsigned lineno;
	unsigned run;  /* the run that wrote it: device and inode numbers mean
			* something only within one run (numbers are reused) */
};

/* Split a line at tabs and undo the escapes in place. @return 0, or -1 when malformed. */
static int parse(char *line, struct entry *e)
{
	e->n = 0;
	for (char *s = line; s && e->n < MAXF;) {
		char *tab = strchr(s, '\t');
		if (tab)
			*tab = '\0';
		char *w = s;
		for (char *r = s; *r; r++) {
			if (*r != '\\') {
				*w++ = *r;
			} else if (r[1] == '\\') {
				*w++ = '\\';
				r++;
			} else if (r[1] == 'x' && r[2] && r[3]) {
				char hex[3] = { r[2], r[3], 0 };
				char *end;
				long v = strtol(hex, &end, 16);
				if (*end)
					return -1;
				*w++ = (char)v;
				r += 3;
			} else {
				return -1;
			}
		}
		*w = '\0';
		e->f[e->n++] = s;
		s = tab ? tab + 1 : NULL;
	}
	return 0;
}

static void say(const char *what, const char *path, const char *why)
{
	printf("%s ", what);
	fwrite(path, 1, strlen(path), stdout);
	if (why)
		printf(" -- %s", why);
	putchar('\n');
}

static void complain(const char *path, const char *why)
{
	fflush(stdout);
	fputs("dupscan: undo: ", stderr);
	fwrite(path, 1, strlen(path), stderr);
	fprintf(stderr, ": %s\n", why);
}

static char *parent_of(const char *path)
{
	char *c = strdup(path);
	if (!c)
		return NULL;
	char *d = strdup(dirname(c));
	free(c);
	return d;
}

/* Files restored so far in one run, by the inode they had: hard links among
 * them come back as hard links, not as separate copies. */
struct restored {
	long long dev, ino;
	char *path;
	dev_t now_dev;
	ino_t now_ino;
};
struct restored_map {
	struct restored *v;
	size_t n;
};
/* keyed apart: a link's key is the inode a file had before the run, a move's
 * the inode its moved copy has now; numbers can be reused between the two */
struct undo_state {
	struct restored_map links, moves;
	unsigned run;
};

static void forget(struct restored_map *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].path);
	u->n = 0;
}

/* The restored name of inode (dev, ino), while it still holds what was restored. */
static const struct restored *find_restored(const struct restored_map *u, long long dev, long long ino)
{
	struct stat st;
	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].dev == dev && u->v[i].ino == ino)
			return stat(u->v[i].path, &st) == 0 && st.st_dev == u->v[i].now_dev &&
				       st.st_ino == u->v[i].now_ino ? &u->v[i] : NULL;
	return NULL;
}

static void remember_restored(struct restored_map *u, long long dev, long long ino, const char *path)
{
	struct stat st;
	struct restored *v = realloc(u->v, (u->n + 1) * sizeof(*v));
	if (!v)
		return;
	u->v = v;
	if (stat(path, &st) != 0 || !(v[u->n].path = strdup(path)))
		return;
	v[u->n].dev = dev;
	v[u->n].ino = ino;
	v[u->n].now_dev = st.st_dev;
	v[u->n].now_ino = st.st_ino;
	u->n++;
}

/* Does path hold the content e recorded: its size, and its hash when the
 * journal has one (older journals have none)? */
static bool holds_content(const struct entry *e, const char *path)
{
	long long size = strtoll(e->f[8], NULL, 10);
	if (e->n > 14 && strcmp(e->f[14], "-") != 0) {
		uint64_t got_size, hash;
		return dupscan_hash_file(path, &got_size, &hash) == 0 && (long long)got_size == size &&
		       hash == strtoull(e->f[14], NULL, 16);
	}
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_size == size;
}

/* A name of the duplicate's former inode that is still there with its content:
 * another name recorded with it, or one this undo restored in the same run. */
static const char *former_inode(const struct undo_state *u, const struct entry *e, long long dev, long long ino)
{
	struct stat st;
	for (int i = 17; i < e->n; i++)
		if (lstat(e->f[i], &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && holds_content(e, e->f[i]))
			return e->f[i];
	const struct restored *twin = find_restored(&u->links, dev, ino);
	return twin && holds_content(e, twin->path) ? twin->path : NULL;
}

struct restore_src {
	const struct entry *e;
	const char *link_to;  /* an existing name to hard-link, or NULL */
	bool symlink;         /* recreate the symlink the duplicate was */
};

static int make_restored(const char *tmp, const struct restore_src *src)
{
	const struct entry *e = src->e;
	if (src->symlink)
		return symlink(e->f[16], tmp) == 0 ? 0 : -errno;
	if (src->link_to)
		return link(src->link_to, tmp) == 0 ? 0 : -errno;
	int rc = dupscan_copy_file(e->f[1], tmp);
	if (rc)
		return rc;
	/* the copy must be the content the duplicate had */
	if (!holds_content(e, tmp)) {
		unlink(tmp);
		return DUPSCAN_E_CHANGED;
	}
	mode_t mode = (mode_t)strtol(e->f[3], NULL, 8);
	uid_t uid = (uid_t)strtoll(e->f[4], NULL, 10);
	gid_t gid = (gid_t)strtoll(e->f[5], NULL, 10);
	long long at = strtoll(e->f[6], NULL, 10), mt = strtoll(e->f[7], NULL, 10);
	struct timespec t[2] = { { (time_t)(at / 1000000000), (long)(at % 1000000000) },
				 { (time_t)(mt / 1000000000), (long)(mt % 1000000000) } };
	if (lchown(tmp, uid, gid) != 0 && errno != EPERM)
		rc = -errno;
	if (rc == 0 && chmod(tmp, mode) != 0)
		rc = -errno;
	if (rc == 0 && utimensat(AT_FDCWD, tmp, t, 0) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Put back at dup (now a link to kept) what it was: a symlink as a symlink; a
 * name of an inode that still has another name as a hard link to it; else a
 * copy of kept, checked against the recorded content, with dup's metadata. */
static int restore_copy(struct undo_state *u, const struct entry *e, bool soft)
{
	const char *kept = e->f[1], *dup = e->f[2];
	struct stat ks, ds, ls;
	if (e->n < 10) {
		complain(dup, "malformed journal entry");
		return 1;
	}
	if (lstat(dup, &ls) != 0) {
		complain(dup, "gone since; nothing to restore it over");
		return 1;
	}
	if (stat(kept, &ks) != 0) {
		complain(dup, "its kept twin is gone; cannot restore its content");
		return 1;
	}
	bool linked = soft ? S_ISLNK(ls.st_mode) && stat(dup, &ds) == 0 && ds.st_dev == ks.st_dev &&
				     ds.st_ino == ks.st_ino
			   : ls.st_dev == ks.st_dev && ls.st_ino == ks.st_ino;
	if (!linked) {
		say("skipped", dup, soft ? "no longer a symlink to its kept twin" : "no longer a hard link of its kept twin");
		return 0;
	}
	long long odev = e->n >= 12 ? strtoll(e->f[10], NULL, 10) : -1;
	long long oino = e->n >= 12 ? strtoll(e->f[11], NULL, 10) : -1;
	struct restore_src src = { e, NULL, e->n >= 17 && strcmp(e->f[15], "symlink") == 0 };
	if (!src.symlink && odev >= 0)
		src.link_to = former_inode(u, e, odev, oino);
	if (!src.symlink && !src.link_to) {
		bool same = e->n > 14 && strcmp(e->f[14], "-") != 0
				    ? holds_content(e, kept)
				    : (long long)ks.st_size == strtoll(e->f[8], NULL, 10) &&
					      ns(ks.st_mtim) == strtoll(e->f[9], NULL, 10);
		if (!same) {
			complain(dup, "its kept twin changed since; its own content cannot be restored from it");
			return 1;
		}
	}
	char *dir = parent_of(dup);
	char *tmp = dir ? malloc(strlen(dir) + 64) : NULL;
	int rc = tmp ? -EEXIST : -ENOMEM;
	for (int i = 0; rc == -EEXIST && i < 1000; i++) {
		sprintf(tmp, "%s/.dupscan-tmp-undo%ld-%d", dir, (long)getpid(), i);
		rc = make_restored(tmp, &src);
	}
	free(dir);
	if (rc == 0 && rename(tmp, dup) != 0) {
		rc = -errno;
		unlink(tmp);
	}
	free(tmp);
	if (rc) {
		complain(dup, dupscan_strerror(rc));
		return 1;
	}
	if (!src.symlink && !src.link_to && odev >= 0)
		remember_restored(&u->links, odev, oino, dup);
	say("restored", dup, NULL);
	return 0;
}

/* Up to len bytes, fewer only at the end of the file. @return the count, or -1. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Do the two files hold the same bytes? */
static bool same_bytes(const char *a, const char *b)
{
	enum { CHUNK = 1 << 16 };
	int fa = open(a, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int fb = open(b, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char *buf = malloc(2 * CHUNK);
	bool same = fa >= 0 && fb >= 0 && buf;
	for (ssize_t na = 1; same && na > 0;) {
		na = read_full(fa, buf, CHUNK);
		ssize_t nb = read_full(fb, buf + CHUNK, CHUNK);
		same = na >= 0 && na == nb && memcmp(buf, buf + CHUNK, (size_t)(na > 0 ? na : 0)) == 0;
	}
	free(buf);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/* A move to another filesystem moved a copy: a name of the inode it was moved
 * from that is still there (never moved: the run was killed first, or it was
 * protected) and holds the copy's bytes, so the name comes back as that inode's. */
static const char *moved_from_inode(const struct entry *e, const struct stat *moved)
{
	if (e->n < 5)
		return NULL; /* journals before 0.5.1 recorded neither */
	long long dev = strtoll(e->f[3], NULL, 10), ino = strtoll(e->f[4], NULL, 10);
	if ((long long)moved->st_dev == dev && (long long)moved->st_ino == ino)
		return NULL; /* moved by a rename: the inode itself goes back */
	struct stat st;
	for (int i = 5; i < e->n; i++)
		if (lstat(e->f[i], &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && same_bytes(e->f[i], e->f[2]))
			return e->f[i];
	return NULL;
}

/* The entry name in dir whose inode is (dev, ino), among the names an action
 * sets a file aside under (".dupscan-tmp-*", not undo's own). @return it,
 * allocated, or NULL. */
static char *aside_name(const char *dir, long long dev, long long ino)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char *found = NULL;
	struct dirent *de;
	struct stat st;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, ".dupscan-tmp-", 13) != 0 || strncmp(de->d_name, ".dupscan-tmp-undo", 17) == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (long long)st.st_dev == dev &&
		    (long long)st.st_ino == ino && (found = malloc(strlen(dir) + strlen(de->d_name) + 2)))
			sprintf(found, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	return found;
}

/* Do the entries a and b hold the same thing: the same bytes, or symlinks
 * with the same target? */
static bool same_entry(const char *a, const char *b)
{
	struct stat sa, sb;
	if (lstat(a, &sa) != 0 || lstat(b, &sb) != 0 || (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
		return false;
	if (S_ISREG(sa.st_mode))
		return sa.st_size == sb.st_size && same_bytes(a, b);
	char ta[PATH_MAX], tb[PATH_MAX];
	ssize_t na = S_ISLNK(sa.st_mode) ? readlink(a, ta, sizeof(ta)) : -1;
	ssize_t nb = S_ISLNK(sb.st_mode) ? readlink(b, tb, sizeof(tb)) : -1;
	return na >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0;
}

/* A move to another filesystem killed after the moved name was set aside
 * (renamed to ".dupscan-tmp-*" in its directory) and before that name was
 * removed: the inode itself is still there. It takes its name back, and the
 * copy at the destination goes when it holds what the inode holds; a name
 * set aside of an inode already back at its name is only an extra name.
 * @return 1 when the move is undone so, 0 when there is nothing set aside,
 * or -errno. */
static int undo_set_aside(const struct entry *e)
{
	const char *from = e->f[1], *to = e->f[2];
	if (e->n < 5)
		return 0; /* journals before 0.5.1 recorded no inode */
	long long dev = strtoll(e->f[3], NULL, 10), ino = strtoll(e->f[4], NULL, 10);
	char *dir = parent_of(from);
	char *aside = dir ? aside_name(dir, dev, ino) : NULL;
	free(dir);
	if (!aside)
		return 0;
	struct stat st, ts;
	int rc = 0;
	if (lstat(from, &st) == 0) {
		/* back already: the name set aside is one name too many */
		if ((long long)st.st_dev == dev && (long long)st.st_ino == ino && unlink(aside) != 0)
			rc = -errno;
	} else if ((rc = dupscan_move_path(aside, from, 0)) == 0) {
		rc = 1;
		if (lstat(to, &ts) == 0 && !((long long)ts.st_dev == dev && (long long)ts.st_ino == ino) &&
		    same_entry(from, to) && unlink(to) != 0)
			rc = -errno;
	}
	free(aside);
	return rc;
}

/* Move a file back. Names of one inode moved together come back as names of
 * one inode: the first is moved, the others linked to it; a name whose inode
 * kept another name in place is linked to that name. */
static int undo_move(struct undo_state *u, const struct entry *e)
{
	const char *from = e->f[1], *to = e->f[2];
	struct stat st, ts;
	int aside = undo_set_aside(e);
	if (aside < 0) {
		complain(from, dupscan_strerror(aside));
		return 1;
	}
	if (aside > 0) {
		say("restored", from, NULL);
		return 0;
	}
	if (lstat(from, &st) == 0) {
		say("skipped", from, "already in place");
		return 0;
	}
	if (lstat(to, &ts) != 0) {
		complain(from, "its moved copy is gone; cannot move it back");
		return 1;
	}
	char *dir = parent_of(from);
	int rc = dir ? cli_make_dirs(dir, strlen(dir), 0777) : -ENOMEM;
	free(dir);
	const struct restored *twin = S_ISREG(ts.st_mode) ? find_restored(&u->moves, (long long)ts.st_dev,
									   (long long)ts.st_ino) : NULL;
	const char *link_to = twin ? twin->path : S_ISREG(ts.st_mode) ? moved_from_inode(e, &ts) : NULL;
	if (rc == 0 && link_to) {
		/* linked, made durable, and only then the moved name goes */
		if (link(link_to, from) != 0)
			rc = -errno;
		else if ((rc = cli_fsync_dir_of(from)) == 0 && unlink(to) != 0)
			rc = -errno;
	} else if (rc == 0) {
		rc = dupscan_move_path(to, from, 0);
		if (rc == 0 && S_ISREG(ts.st_mode) && ts.st_nlink > 1)
			remember_restored(&u->moves, (long long)ts.st_dev, (long long)ts.st_ino, from);
	}
	if (rc) {
		complain(from, dupscan_strerror(rc));
		return 1;
	}
	say("restored", from, NULL);
	return 0;
}

static int undo_one(struct undo_state *u, const struct entry *e)
{
	if (e->run != u->run) {
		forget(&u->links);
		forget(&u->moves);
		u->run = e->run;
	}
	const char *k = e->f[0];
	if (strcmp(k, "move") == 0 && e->n >= 3)
		return undo_move(u, e);
	if ((strcmp(k, "hardlink") == 0 || strcmp(k, "symlink") == 0) && e->n >= 3)
		return restore_copy(u, e, k[0] == 's');
	if (strcmp(k, "delete") == 0 && e->n >= 3) {
		complain(e->f[2], "was deleted (without --move-to): cannot be undone");
		return 1;
	}
	if (strcmp(k, "dedupe") == 0 && e->n >= 3) {
		say("unchanged", e->f[2], "deduplication never changed its content");
		return 0;
	}
	if (strcmp(k, "rmdir") == 0 && e->n >= 3) {
		struct stat st;
		if (lstat(e->f[1], &st) == 0)
			return 0;
		int rc = cli_make_dirs(e->f[1], strlen(e->f[1]), (mode_t)strtol(e->f[2], NULL, 8));
		if (rc) {
			complain(e->f[1], strerror(-rc));
			return 1;
		}
		say("restored", e->f[1], NULL);
		return 0;
	}
	complain(k, "unknown journal entry");
	return 1;
}

int journal_undo(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "dupscan: --undo: '%s': %s\n", path, strerror(errno));
		return 2;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct entry *v = NULL;
	size_t n = 0;
	unsigned lineno = 0, run = 0, torn = 0;
	int status = 0;
	bool magic = false;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		/* a line without its newline was cut short (a crash, a full disk):
		 * journal lines are written whole before their change is made, so
		 * its change never happened; it can only be the last */
		if (len == 0 || line[len - 1] != '\n') {
			torn = lineno;
			break;
		}
		line[--len] = '\0';
		if (lineno == 1)
			magic = strcmp(line, JOURNAL_MAGIC_LINE) == 0;
		if (strncmp(line, "run\t", 4) == 0)
			run++;
		if (line[0] == '#' || line[0] == '\0' || strncmp(line, "run\t", 4) == 0)
			continue;
		struct entry *nv = realloc(v, (n + 1) * sizeof(*v));
		char *copy = strdup(line);
		if (!nv || !copy) {
			free(copy);
			v = nv ? nv : v;
			fprintf(stderr, "dupscan: --undo: out of memory\n");
			status = 1;
			break;
		}
		v = nv;
		if (parse(copy, &v[n]) != 0) {
			fprintf(stderr, "dupscan: --undo: '%s' line %u: malformed; stopped before undoing anything\n",
				path, lineno);
			free(copy);
			status = 2;
			break;
		}
		v[n].run = run;
		v[n++].lineno = lineno;
	}
	free(line);
	fclose(f);
	/* a run killed before it wrote anything leaves an empty journal */
	bool empty = lineno == 0 || (torn == 1 && n == 0);
	if (status == 0 && !magic && !empty) {
		fprintf(stderr, "dupscan: --undo: '%s' is not a dupscan journal\n", path);
		status = 2;
	}
	if (status == 0 && torn > 1)
		fprintf(stderr, "dupscan: --undo: '%s' line %u: incomplete (the run stopped while writing it, "
			"so its change was never made): ignored\n", path, torn);
	if (status == 0 && n == 0)
		puts("nothing to undo");
	/* newest first: a later change may stand on an earlier one */
	struct undo_state u = { { NULL, 0 }, { NULL, 0 }, 0 };
	for (size_t i = n; status != 2 && i-- > 0;)
		if (undo_one(&u, &v[i]))
			status = 1;
	forget(&u.links);
	forget(&u.moves);
	free(u.links.v);
	free(u.moves.v);
	for (size_t i = 0; i < n; i++)
		free(v[i].f[0]);
	free(v);
	if (fflush(stdout) != 0)
		status = status ? status : 1;
	return status;
}
