/* SPDX-License-Identifier: MIT */
/* journal.c: every destructive run appends what it is about to do to a journal,
 * fsynced before each change, so --undo (undo.c) can reverse moves and links later.
 * The format is text, one change per line, tab-separated, paths absolute and
 * escaped (backslash, and bytes below 0x20 or 0x7f as \xHH); see dupscan(1). */
#define _GNU_SOURCE /* O_CLOEXEC, utimensat */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "dupscan_config.h"
#include "journal.h"
#include "msg.h"

#define JOURNAL_MAGIC JOURNAL_MAGIC_LINE "\n"

struct journal {
	int fd;
	char *path;
	char *cwd;
};


static char *default_path(void)
{
	char *dir = ds_xdg_dir("XDG_STATE_HOME", ".local/state");
	if (!dir)
		return NULL;
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", localtime_r(&now, &tm));
	char *out = NULL;
	if (asprintf(&out, "%s/journal-%s-%ld", dir, stamp, (long)getpid()) < 0)
		out = NULL;
	free(dir);
	return out;
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

/* A tab, then the path made absolute against cwd (NULL: another host's
 * HOST:PATH, as it is), escaped. */
static void put_path(struct line *l, const char *cwd, const char *path)
{
	put(l, "\t", 1);
	if (cwd && path[0] != '/') {
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

/* A tab and the hash in hexadecimal, "-" when none; after a tab and the
 * size first, or "-" for it when size is -1 (no size when -2). */
static void put_hash(struct line *l, long long size, const uint64_t *hash)
{
	if (size == -1)
		put_str(l, "\t-");
	else if (size >= 0)
		put_num(l, false, size);
	char hex[20];
	snprintf(hex, sizeof(hex), "%016llx", hash ? (unsigned long long)*hash : 0ull);
	put(l, "\t", 1);
	put_str(l, hash ? hex : "-");
}


/* Does the open file fd begin as a journal (or is it empty, as `touch`
 * leaves it)? @return 0, or -EINVAL when it holds anything else. */
static int holds_journal(int fd)
{
	char head[sizeof(JOURNAL_MAGIC)];
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size == 0)
		return 0;
	ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(head) - 1 && memcmp(head, JOURNAL_MAGIC, sizeof(head) - 1) == 0 ? 0 : -EINVAL;
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

int journal_check(const char *path)
{
	if (!path)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? check_place(path) : -errno;
	int rc = holds_journal(fd);
	close(fd);
	return rc;
}

/* The file, made (or opened to append) with the first change: a run that
 * changes nothing (every set kept, stdin closed) leaves no journal. @return
 * 0, with the run line to write before the change in *head, or -errno. */
static int begin(struct journal *j, struct line *head)
{
	for (int tries = 0; j->fd < 0 && tries < 100; tries++) {
		/* (read too: what is there is checked to be a journal) */
		j->fd = open(j->path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY);
		if (j->fd >= 0) {
			/* replaced since journal_check(): never append to another file */
			int held = holds_journal(j->fd);
			if (held) {
				close(j->fd);
				j->fd = -1;
				return held == -EINVAL ? -ENOTJOURNAL : held;
			}
		}
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
		int rc = ds_write_all(fd, JOURNAL_MAGIC, strlen(JOURNAL_MAGIC));
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
		rc = l->oom ? -ENOMEM : ds_write_all(j->fd, l->buf, l->len);
	if (rc == 0 && fdatasync(j->fd) != 0)
		rc = -errno;
	free(l->buf);
	return rc;
}

struct journal *journal_open(const char *path)
{
	struct journal *j = calloc(1, sizeof(*j));
	char cwd[PATH_MAX];
	if (!j || !getcwd(cwd, sizeof(cwd))) {
		msg_say("journal: cannot tell the current directory: %s", strerror(errno));
		free(j);
		return NULL;
	}
	j->fd = -1;
	j->cwd = strdup(cwd);
	j->path = path ? strdup(path) : default_path();
	if (!j->path || !j->cwd) {
		msg_say("journal: no place for it (set XDG_STATE_HOME or HOME, or give --journal=FILE)");
		goto fail;
	}
	int rc = check_place(j->path);
	if (rc) {
		msg_say("journal '%s': %s", j->path, strerror(-rc));
		goto fail;
	}
	return j;
fail:
	free(j->path);
	free(j->cwd);
	free(j);
	return NULL;
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
		/* the content moved, so --undo can tell it from whatever else has
		 * the name or the inode number later: none for a symlink */
		put_hash(&l, c->hash ? (long long)c->size : -1, c->hash);
		for (size_t i = 0; i < c->nsiblings; i++)
			put_path(&l, j->cwd, c->siblings[i]);
		return commit(j, &l);
	}
	put_path(&l, c->kept_remote ? NULL : j->cwd, c->kept);
	put_path(&l, j->cwd, c->dup);
	put_num(&l, true, (long long)(st->st_mode & 07777));
	put_num(&l, false, (long long)st->st_uid);
	put_num(&l, false, (long long)st->st_gid);
	put_num(&l, false, (long long)ds_ns(st->st_atim));
	put_num(&l, false, (long long)ds_ns(st->st_mtim));
	put_num(&l, false, (long long)kept->st_size);
	put_num(&l, false, (long long)ds_ns(kept->st_mtim));
	put_num(&l, false, (long long)st->st_dev);
	put_num(&l, false, (long long)st->st_ino);
	put_num(&l, false, (long long)kept->st_dev);
	put_num(&l, false, (long long)kept->st_ino);
	put_hash(&l, -2, c->hash);
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

int journal_mkdir(struct journal *j, const char *dir)
{
	struct line l = { 0 };
	put_str(&l, "mkdir");
	put_path(&l, j->cwd, dir);
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
