/* SPDX-License-Identifier: MIT */
/* cache_save.c: the hash cache saved at the end of a run: this run's notes
 * with their proofs (the classes compared byte by byte), merged under a lock
 * with what the file holds now, entries of files gone dropped, written to a
 * temporary name and renamed over it. */
#define _GNU_SOURCE /* flock */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "internal.h"

/* ---- saving ---- */

struct builder {
	struct cache_entry *e;
	size_t n, cap;
	char *strings;
	size_t nstrings, capstrings;
};

static int add_entry(struct builder *b, const struct cache_entry *e, const char *path)
{
	size_t len = strlen(path) + 1;
	if (DS_GROW(b->e, b->cap, b->n + 1) || DS_GROW(b->strings, b->capstrings, b->nstrings + len))
		return -ENOMEM;
	if (b->nstrings + len > UINT32_MAX)
		return -EFBIG;
	b->e[b->n] = *e;
	b->e[b->n].path = (uint32_t)b->nstrings;
	b->n++;
	memcpy(b->strings + b->nstrings, path, len);
	b->nstrings += len;
	return 0;
}


/* An old entry this run did not see: kept while its file is still there as it was. */
static bool still_there(const struct cache_entry *e, const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == e->dev &&
	       (uint64_t)st.st_ino == e->ino && (uint64_t)st.st_size == e->size && ds_ns(st.st_mtim) == e->mtime_ns &&
	       ds_ns(st.st_ctim) == e->ctime_ns;
}

/* This run's notes by inode, those with a full hash first, else in the order noted. */
static int sort_seen(const dupscan_scan *s, struct ds_cache *run)
{
	size_t n = run->nnoted;
	struct ds_sortkey *a = malloc((n ? n : 1) * sizeof(*a));
	struct ds_hashed *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!a || !sorted) {
		free(a);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ds_rec *r = ds_rec(s, run->noted[i].rec);
		a[i] = (struct ds_sortkey){ { ds_rec_dev(s, r), r->ino, !run->noted[i].has_full, 0 }, (uint32_t)i };
	}
	ds_sort_keys(a, n);
	for (size_t i = 0; i < n; i++)
		sorted[i] = run->noted[a[i].pos];
	free(run->noted);
	run->noted = sorted;
	run->capnoted = n;
	free(a);
	return 0;
}

static int write_cache(const char *path, const struct builder *b, bool durable)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		int rc = -errno;
		free(tmp);
		return rc;
	}
	struct cache_header h = { .version = CACHE_VERSION, .entry_size = ENTRY_SIZE, .count = b->n,
				  .strings = b->nstrings };
	memcpy(h.magic, CACHE_MAGIC, 8);
	struct ds_hashes *x = ds_hashes_new(1);
	int rc = x ? 0 : -ENOMEM;
	if (x) {
		ds_hash_update(x, 0, b->e, b->n * ENTRY_SIZE);
		ds_hash_update(x, 0, b->strings, b->nstrings);
		h.checksum = ds_hash_digest(x, 0);
		ds_hashes_free(x);
	}
	if (rc == 0)
		rc = ds_write_all(fd, &h, sizeof(h));
	if (rc == 0)
		rc = ds_write_all(fd, b->e, b->n * ENTRY_SIZE);
	if (rc == 0)
		rc = ds_write_all(fd, b->strings, b->nstrings);
	/* where the log it folds was made durable, the file is too before it
	 * replaces the old one and the log goes; elsewhere (a run shorter than
	 * the log's 30 s) a torn file after a power cut fails its checksum and
	 * costs one run's hashing, never a wrong result, and the wait (5% of a
	 * 1.2 s run of 200,000 files) is spared */
	if (rc == 0 && durable && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0 && durable)
		rc = ds_fsync_dir_of(path); /* the rename too, before the log is removed */
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* The lock beside the cache: held while the file is re-read, merged and replaced. */
static int lock_cache(const char *path)
{
	size_t plen = strlen(path);
	char *lp = malloc(plen + 6);
	if (!lp)
		return -ENOMEM;
	memcpy(lp, path, plen);
	memcpy(lp + plen, ".lock", 6);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	int rc = fd < 0 ? -errno : 0;
	free(lp);
	while (rc == 0 && flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			rc = -errno;
			close(fd);
		}
	}
	return rc ? rc : fd;
}

static bool same_entry(const struct cache_entry *a, const struct cache_entry *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns && a->partial == b->partial && a->full == b->full && a->cls == b->cls &&
	       a->at_ns == b->at_ns && a->flags == b->flags;
}

/* This run's files (each inode once, with its full hash when known), then the
 * old entries of files this run did not see, while they are still there as
 * they were. With b NULL only tell whether that differs from old.
 * @return 1 when it differs, 0 when not, or a negative code. */
/* The paths of a cache read without them (the caller holds the lock). */
static int load_strings(const char *path, struct cache_file *c)
{
	if (c->strings)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	c->strings = malloc(c->nstrings + 1);
	int rc = c->strings ? 0 : -ENOMEM;
	if (rc == 0 && lseek(fd, (off_t)c->strings_at, SEEK_SET) < 0)
		rc = -errno;
	if (rc == 0)
		rc = ds_cache_read_all(fd, c->strings, c->nstrings);
	if (rc == 0)
		c->strings[c->nstrings] = '\0';
	close(fd);
	return rc;
}

/* ---- proofs ---- */

struct member {
	uint32_t cls;   /* the record naming its class this run */
	uint32_t note;  /* its note */
	uint64_t old;   /* the class its proof names, while that proof holds; else 0 */
	int64_t at;
};

static int cmp_member(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct member *a = pa, *b = pb;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	return a->note < b->note ? -1 : a->note > b->note;
}

static int cmp_u64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}


/* The proof each note is saved with (notes sorted, the first of each inode
 * counts). A class of this run keeps the number most of its members' holding
 * proofs name (their times stay), or takes a fresh one; members that join it
 * are proven at this run's start. A file in no class this run keeps a proof
 * that still holds. @return 0 or -ENOMEM. */
static int assign_proofs(dupscan_scan *s, struct ds_cache *run)
{
	const struct ds_hashed *h = run->noted;
	size_t n = run->nnoted, nm = 0;
	run->proofs = calloc(n ? n : 1, sizeof(*run->proofs));
	struct member *m = malloc((n ? n : 1) * sizeof(*m));
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	int rc = run->proofs && m && ids ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct ds_rec *r = ds_rec(s, h[i].rec);
		if (i > 0 && ds_rec(s, h[i - 1].rec)->devi == r->devi && ds_rec(s, h[i - 1].rec)->ino == r->ino)
			continue;
		struct member x = { ds_index_class(&s->index, h[i].rec), (uint32_t)i, 0, 0 };
		if (!ds_cache_proof(s, r, &x.old, &x.at))
			x.old = 0;
		if (x.cls == DS_NONE || (r->flags & DS_F_DROPPED)) {
			/* no proof, or one that still holds; hashes keep the time
			 * they were worked out */
			const struct cache_entry *e = h[i].cached ? ds_cache_entry_of(s, r) : NULL;
			run->proofs[i] = x.old ? (struct proof){ x.old, x.at }
					       : (struct proof){ 0, e ? e->at_ns : s->cache.start_ns };
			continue;
		}
		m[nm++] = x;
	}
	if (rc == 0)
		rc = ds_sort(m, nm, sizeof(*m), cmp_member, NULL);
	for (size_t i = 0; rc == 0 && i < nm;) {
		size_t j = i, nids = 0;
		for (; j < nm && m[j].cls == m[i].cls; j++)
			if (m[j].old)
				ids[nids++] = m[j].old;
		rc = ds_sort(ids, nids, sizeof(*ids), cmp_u64, NULL);
		uint64_t best = 0;
		for (size_t a = 0, most = 0; rc == 0 && a < nids;) {
			size_t b = a + 1;
			while (b < nids && ids[b] == ids[a])
				b++;
			if (b - a > most) {
				most = b - a;
				best = ids[a];
			}
			a = b;
		}
		if (!best)
			best = ds_cache_fresh_class(s, ds_rec(s, m[i].cls));
		for (size_t k = i; k < j; k++)
			run->proofs[m[k].note] = (struct proof){ best, m[k].old == best ? m[k].at : s->cache.start_ns };
		i = j;
	}
	free(ids);
	free(m);
	return rc;
}

static int merge(dupscan_scan *s, const struct ds_cache *run, struct cache_file *old, const char *cwd,
		 struct builder *b)
{
	int rc = 0, changed = !old;
	size_t i = 0, j = 0;
	const struct ds_hashed *h = run->noted;
	while (rc == 0 && (i < run->nnoted || (old && j < old->n))) {
		const struct ds_rec *r = i < run->nnoted ? ds_rec(s, h[i].rec) : NULL;
		int order = !r ? 1 : !old || j >= old->n ? -1 : -ds_cache_cmp_key(&old->e[j], ds_rec_dev(s, r), r->ino);
		/* paths are needed for old entries this run did not see, and to write */
		if ((order > 0 || b) && old && (rc = load_strings(s->cache.path, old)) != 0)
			break;
		if (order > 0) {
			/* a hash the log kept for a file this run did not see: no
			 * path to keep it by */
			const char *p = old->e[j].path == LOG_NO_PATH ? NULL : old->strings + old->e[j].path;
			if (!p || !still_there(&old->e[j], p))
				changed = 1;
			else if (b)
				rc = add_entry(b, &old->e[j], p);
			j++;
			continue;
		}
		const struct proof *pf = &run->proofs[i];
		struct cache_entry e = { ds_rec_dev(s, r), r->ino, r->size, r->mtime_ns, r->ctime_ns, h[i].partial,
					 h[i].full, pf->cls, pf->at,
					 (h[i].has_full ? F_FULL : 0) | (pf->cls ? F_PROVEN : 0), 0 };
		bool was = order == 0 && same_entry(&e, &old->e[j]) && old->e[j].path != LOG_NO_PATH;
		changed |= !was;
		if (b && was) {
			rc = add_entry(b, &e, old->strings + old->e[j].path);
		} else if (b) {
			char buf[PATH_MAX * 2];
			size_t room = sizeof(buf) - strlen(cwd) - 2;
			size_t len = ds_rec_path(s, r, buf, room);
			if (len < room) { /* longer paths are not cached */
				if (buf[0] != '/' && cwd[0]) {
					memmove(buf + strlen(cwd) + 1, buf, len + 1);
					memcpy(buf, cwd, strlen(cwd));
					buf[strlen(cwd)] = '/';
				}
				rc = add_entry(b, &e, buf);
			}
		}
		uint64_t dev = ds_rec_dev(s, r), ino = r->ino;
		while (i < run->nnoted && ds_rec_dev(s, ds_rec(s, h[i].rec)) == dev && ds_rec(s, h[i].rec)->ino == ino)
			i++;
		while (old && j < old->n && ds_cache_cmp_key(&old->e[j], dev, ino) == 0)
			j++;
	}
	return rc ? rc : changed;
}

int ds_cache_save(dupscan_scan *s, bool *folded)
{
	*folded = false;
	if (!s->cache.run)
		return 0;
	/* proofs are judged by what this run loaded, whatever another run saved since */
	struct ds_cache *run = s->cache.run;
	int rc = sort_seen(s, run);
	if (rc == 0)
		rc = assign_proofs(s, run);
	if (rc)
		return rc;
	int lock = lock_cache(s->cache.path);
	if (lock < 0) {
		ds_cache_report(s, s->cache.path, lock);
		return lock == -ENOMEM ? lock : 0;
	}
	/* what is on disk now: what was loaded, unless another run replaced it */
	struct cache_file *old = run->loaded;
	struct stat now;
	if (!old || stat(s->cache.path, &now) != 0 || now.st_dev != old->st.st_dev || now.st_ino != old->st.st_ino ||
	    now.st_size != old->st.st_size || ds_ns(now.st_mtim) != ds_ns(old->st.st_mtim) ||
	    ds_ns(now.st_ctim) != ds_ns(old->st.st_ctim)) {
		ds_cachefile_free(old);
		rc = ds_cache_read(s->cache.path, &old, false);
	}
	run->loaded = NULL;
	if (rc && rc != -ENOMEM)
		rc = 0; /* a broken file is replaced */
	struct builder b = { 0 };
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	/* a run that changed nothing writes nothing */
	if (rc == 0)
		rc = merge(s, run, old, cwd, NULL);
	if (rc == 1)
		rc = merge(s, run, old, cwd, &b);
	if (rc == 1)
		rc = write_cache(s->cache.path, &b, ds_cache_log_durable(s));
	if (rc < 0 && rc != -ENOMEM)
		ds_cache_report(s, s->cache.path, rc);
	/* written (or nothing to write): the log's entries are in the file now */
	*folded = rc == 0;
	ds_cachefile_free(old);
	free(b.e);
	free(b.strings);
	close(lock); /* releases the lock */
	return rc == -ENOMEM ? rc : 0;
}

DUPSCAN_API int dupscan_set_cache(dupscan_scan *s, const char *path)
{
	if (!s)
		return -EINVAL;
	if (s->ran)
		return DUPSCAN_E_STATE;
	char *copy = NULL;
	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(s->cache.path);
	s->cache.path = copy;
	return 0;
}

DUPSCAN_API int dupscan_cache_clear(const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	int lock = lock_cache(path);
	if (lock < 0)
		return lock;
	int rc = unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
	char *log = ds_cache_log_path(path);
	if (rc == 0 && !log)
		rc = -ENOMEM;
	if (rc == 0 && unlink(log) != 0 && errno != ENOENT)
		rc = -errno;
	free(log);
	close(lock);
	return rc;
}
