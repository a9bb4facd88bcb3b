/* SPDX-License-Identifier: MIT */
/* readers.c: a duplicate removed (or moved away) leaves those who could read
 * it the kept file only, so it goes only when each of them could read that:
 * its owner; its group, when its mode or ACL lets the group read; anyone,
 * when it lets others read; the users and groups its ACL names; and those
 * the kept file singles out (its owner, the users and groups of its ACL),
 * each of them only when they could read the duplicate. Judged as
 * the kernel's permission check judges a process of theirs (the owner's
 * bits, then the ACL's named users, then the groups, then others; a named
 * entry limited by the mask; root reads anything), for search on every
 * directory of the kept file's real path and read on the file. Not by
 * asking as them (only root could, and a process a check is too slow for a
 * million files); a file whose ACL is longer than ACL_MAX entries counts as
 * unreadable. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "action.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "remote/remote.h"

#define NAMELESS ((uint32_t)-2) /* a user and a group that own nothing */
#define GROUPS_MAX 64
#define ACL_MAX 32
enum { A_USER_OBJ = 1, A_USER = 2, A_GROUP_OBJ = 4, A_GROUP = 8, A_MASK = 0x10, A_OTHER = 0x20 };

struct ds_principal {
	uint32_t uid;
	uint32_t groups[GROUPS_MAX];
	int ngroups;
};

struct acl {
	uint16_t tag[ACL_MAX], perm[ACL_MAX];
	uint32_t id[ACL_MAX];
	int n;      /* -1: more than ACL_MAX entries */
};

/* The POSIX ACL of path or fd (system.posix_acl_access); n = 0 for none. */
static void acl_of(int fd, const char *path, struct acl *a)
{
	unsigned char buf[4 + 8 * ACL_MAX];
	ssize_t len = fd >= 0 ? fgetxattr(fd, "system.posix_acl_access", buf, sizeof(buf))
			      : getxattr(path, "system.posix_acl_access", buf, sizeof(buf));
	a->n = len < 0 && errno == ERANGE ? -1 : 0;
	for (ssize_t off = 4; len > 4 && off + 8 <= len; off += 8, a->n++) {
		memcpy(&a->tag[a->n], buf + off, 2);
		memcpy(&a->perm[a->n], buf + off + 2, 2);
		memcpy(&a->id[a->n], buf + off + 4, 4);
	}
}

static bool member(const struct ds_principal *p, uint32_t gid)
{
	for (int i = 0; i < p->ngroups; i++)
		if (p->groups[i] == gid)
			return true;
	return false;
}

/* May p have want (4 read, 1 search) on the object st with ACL a? */
static bool permits(const struct ds_principal *p, const struct stat *st, const struct acl *a, unsigned want)
{
	if (p->uid == 0)
		return true;
	if (p->uid == st->st_uid)
		return ((st->st_mode >> 6) & want) == want;
	if (a->n < 0)
		return false;
	unsigned mask = 7;
	for (int i = 0; i < a->n; i++)
		if (a->tag[i] == A_MASK)
			mask = a->perm[i];
	for (int i = 0; i < a->n; i++)
		if (a->tag[i] == A_USER && a->id[i] == p->uid)
			return (a->perm[i] & mask & want) == want;
	bool in_group = false;
	for (int i = 0; i < a->n; i++) {
		if (!(a->tag[i] == A_GROUP_OBJ && member(p, (uint32_t)st->st_gid)) && !(a->tag[i] == A_GROUP && member(p, a->id[i])))
			continue;
		in_group = true;
		if ((a->perm[i] & mask & want) == want)
			return true;
	}
	if (a->n == 0 && member(p, (uint32_t)st->st_gid))
		return ((st->st_mode >> 3) & want) == want;
	return !in_group && (st->st_mode & want) == want;
}

static uint32_t key_gid(const struct ds_principal *p)
{
	return p->ngroups ? p->groups[0] : NAMELESS;
}

static int dirs_grow(struct ds_readers *r)
{
	size_t cap = r->capdirs ? r->capdirs * 2 : 256;
	struct ds_searchable *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < r->capdirs; i++) {
		if (!r->dirs[i].dir)
			continue;
		size_t j = r->dirs[i].key & (cap - 1);
		while (t[j].dir)
			j = (j + 1) & (cap - 1);
		t[j] = r->dirs[i];
	}
	free(r->dirs);
	r->dirs = t;
	r->capdirs = cap;
	return 0;
}

/* May p search directory dir (a real path) and every one above it? Each
 * directory is judged once a reader. */
static bool searches(struct ds_readers *r, const struct ds_principal *p, const char *dir)
{
	uint64_t key = ds_hash_oneshot(dir, strlen(dir)) ^ (((uint64_t)p->uid << 32 | key_gid(p)) * 0x9E3779B97F4A7C15ull);
	for (size_t j = r->capdirs ? key & (r->capdirs - 1) : 0; r->capdirs && r->dirs[j].dir; j = (j + 1) & (r->capdirs - 1))
		if (r->dirs[j].key == key && r->dirs[j].uid == p->uid && r->dirs[j].gid == key_gid(p) &&
		    strcmp(r->dirs[j].dir, dir) == 0)
			return r->dirs[j].ok;
	struct stat st;
	struct acl a;
	bool ok = stat(dir, &st) == 0;
	if (ok) {
		acl_of(-1, dir, &a);
		ok = permits(p, &st, &a, 1);
	}
	const char *slash = strrchr(dir, '/');
	if (ok && slash && strcmp(dir, "/") != 0) {
		char *up = strndup(dir, slash == dir ? 1 : (size_t)(slash - dir));
		ok = up && searches(r, p, up);
		free(up);
	}
	char *copy = strdup(dir);
	if (copy && ((r->ndirs + 1) * 2 <= r->capdirs || dirs_grow(r) == 0)) {
		size_t j = key & (r->capdirs - 1);
		while (r->dirs[j].dir)
			j = (j + 1) & (r->capdirs - 1);
		r->dirs[j] = (struct ds_searchable){ key, copy, p->uid, key_gid(p), ok };
		r->ndirs++;
	} else {
		free(copy); /* out of memory: judged again next time */
	}
	return ok;
}

/* A file held open: the real path of its directory (from the kernel's name
 * of the descriptor, one call; without /proc, from realpath() of its path or
 * of its directory's), its stat and its ACL. */
struct held {
	char dir[PATH_MAX];
	const struct stat *st;
	struct acl acl;
};

static int held_of(int fd, const struct stat *st, const char *path, const char *dir, struct held *h)
{
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(proc, h->dir, sizeof(h->dir) - 1);
	if (n > 0 && h->dir[0] == '/') {
		h->dir[n] = '\0';
		char *slash = strrchr(h->dir, '/');
		slash[slash == h->dir] = '\0';
	} else if (!realpath(dir ? dir : path, h->dir)) {
		return ds_act_gone_or(errno);
	} else if (!dir) {
		char *slash = strrchr(h->dir, '/');
		slash[slash == h->dir] = '\0';
	}
	h->st = st;
	acl_of(fd, NULL, &h->acl);
	return 0;
}

/* Could p search every directory of h's and read h? */
static bool reads(struct ds_readers *r, const struct ds_principal *p, const struct held *h)
{
	return p->uid == 0 || (searches(r, p, h->dir) && permits(p, h->st, &h->acl, 4));
}

struct ds_acts *ds_acts_new(void)
{
	struct ds_acts *a = calloc(1, sizeof(*a));
	if (a)
		a->watch = -1;
	return a;
}

void ds_acts_free(struct ds_acts *a)
{
	if (!a)
		return;
	if (a->watch >= 0)
		close(a->watch);
	struct ds_readers *r = &a->readers;
	for (size_t i = 0; i < r->capdirs; i++)
		free(r->dirs[i].dir);
	free(r->dirs);
	free(r->users);
	free(r->v);
	free(a);
}

/* The user uid with the groups the user database gives it (none when it
 * has no entry: the stricter); looked up once a user. */
static void user_principal(struct ds_readers *r, struct ds_principal *p, uint32_t uid)
{
	struct ds_principal *known = r->users;
	for (size_t i = 0; i < r->nusers; i++)
		if (known[i].uid == uid) {
			*p = known[i];
			return;
		}
	p->uid = uid;
	p->ngroups = 0;
	struct passwd pw, *found = NULL;
	char buf[4096];
	if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found) == 0 && found) {
		gid_t groups[GROUPS_MAX];
		int n = GROUPS_MAX;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
			n = 1, groups[0] = pw.pw_gid; /* more than GROUPS_MAX: the primary only */
		for (int i = 0; i < n; i++)
			p->groups[p->ngroups++] = (uint32_t)groups[i];
	}
	if (DS_GROW(r->users, r->capusers, r->nusers + 1) == 0)
		r->users[r->nusers++] = *p;
}

/* Could p read the kept file? Asked once per reader while the kept file is
 * the same (a set's files one after another). */
static bool reads_kept(const dupscan_file *keep, const struct ds_principal *p, const struct held *kept)
{
	struct ds_readers *r = &ds_acts_of(keep)->readers;
	uint32_t gid = key_gid(p);
	if (r->n && r->v[0].kept != keep->path)
		r->n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].uid == p->uid && r->v[i].gid == gid && r->v[i].kept == keep->path)
			return r->v[i].reads;
	bool ok = reads(r, p, kept);
	if (DS_GROW(r->v, r->cap, r->n + 1) == 0)
		r->v[r->n++] = (struct ds_reader){ p->uid, gid, keep->path, ok };
	return ok;
}

/* p, when it could read the duplicate, could read the kept file? */
static bool keeps_reading(const dupscan_file *keep, const struct ds_principal *p, const struct held *dup,
			  const struct held *kept)
{
	return !reads(&ds_acts_of(keep)->readers, p, dup) || reads_kept(keep, p, kept);
}

/* The users and groups acl names (each, when it could read the duplicate,
 * must read the kept file)? */
static bool named_keep_reading(const dupscan_file *keep, const struct acl *acl, const struct held *dup,
			       const struct held *kept)
{
	struct ds_principal p;
	for (int i = 0; i < acl->n; i++) {
		if (acl->tag[i] == A_USER)
			user_principal(&ds_acts_of(keep)->readers, &p, acl->id[i]);
		else if (acl->tag[i] == A_GROUP)
			p = (struct ds_principal){ NAMELESS, { acl->id[i] }, 1 };
		else
			continue;
		if (!keeps_reading(keep, &p, dup, kept))
			return false;
	}
	return acl->n >= 0;
}

/* Everyone who could read the duplicate could read the kept file? Its
 * owner, others, its group, the users and groups its ACL names; and those
 * the kept file singles out: its owner (whose own bits may be fewer than
 * the group's) and the users and groups its ACL names. */
static bool readers_read(const dupscan_file *keep, const struct held *dup, const struct held *kept)
{
	struct ds_readers *r = &ds_acts_of(keep)->readers;
	struct ds_principal owner, kept_owner, anyone = { NAMELESS, { 0 }, 0 },
				   group = { NAMELESS, { (uint32_t)dup->st->st_gid }, 1 };
	user_principal(r, &owner, (uint32_t)dup->st->st_uid);
	user_principal(r, &kept_owner, (uint32_t)kept->st->st_uid);
	return keeps_reading(keep, &owner, dup, kept) && keeps_reading(keep, &kept_owner, dup, kept) &&
	       keeps_reading(keep, &anyone, dup, kept) && keeps_reading(keep, &group, dup, kept) &&
	       named_keep_reading(keep, &dup->acl, dup, kept) && named_keep_reading(keep, &kept->acl, dup, kept);
}

int ds_access_owner_reads(const dupscan_file *keep, const struct kept *k, const struct slot *d)
{
	/* a symlink removed leaves its target */
	if (d->fd < 0)
		return 0;
	/* kept on another host: its server reads it as this user, who must
	 * own the duplicate; who else may log in there cannot be told */
	if (ds_remote_of(keep))
		return d->file.st_uid == geteuid() ? 0 : DUPSCAN_E_ACCESS_UNTOLD;
	struct held *h = malloc(2 * sizeof(*h));
	if (!h)
		return -ENOMEM;
	int rc = held_of(k->fd, &k->st, keep->path, NULL, &h[0]);
	if (rc == 0)
		rc = held_of(d->fd, &d->file, NULL, d->dir, &h[1]);
	if (rc == 0)
		rc = readers_read(keep, &h[1], &h[0]) ? 0 : DUPSCAN_E_ACCESS_READ;
	free(h);
	return rc;
}
