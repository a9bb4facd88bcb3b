/* SPDX-License-Identifier: MIT */
/* cache.c: the hash cache. Partial and full XXH64 hashes kept between runs,
 * keyed on (device, inode, size, mtime, ctime): any difference and the entry
 * is not used. A cached hash only ever spares hashing; files are still
 * compared byte by byte before they are called duplicates. It also keeps
 * proofs: the class a file was compared into byte by byte, and when. Only
 * with DUPSCAN_OPT_CACHE_TRUST does a proof stand in for the comparison.
 *
 * File format (native byte order; a file from another machine fails the
 * checks and is ignored):
 *   header, 48 bytes: magic "DUPSCANH", u32 version (2), u32 entry size (80),
 *     u64 entry count, u64 string-table size, u64 XXH64 of everything after
 *     the header, u64 0 (reserved)
 *   entries, sorted by (device, inode), 80 bytes each: u64 dev, ino, size,
 *     i64 mtime_ns, ctime_ns, u64 partial, full, u64 class (a number naming
 *     the class of a proof), i64 at_ns (the start of the run that hashed
 *     the file, or with a proof, of the run that compared it into that
 *     class), u32 flags (1: full is set, 2: proven),
 *     u32 offset of the file's absolute path in the string table
 *   string table: NUL-terminated paths (to prune entries whose file is gone)
 * Version 1 (64-byte entries, no proofs) is still read.
 * Written to a temporary name beside it and renamed over it, under an
 * flock(2) of FILE.lock that also covers re-reading the current file, so two
 * runs that save at once merge their entries instead of losing one's.
 *
 * Why a proof is sound: a file joins a class only when compared byte by byte
 * with the files forming it, or with one member whose own proof holds. A
 * proof holds while the file's key is as recorded and its mtime and ctime are
 * older than the proving scan's start by more than DS_RACY_NS: any write
 * after the scan started would have moved its ctime (git's "racy" rule). So
 * the members whose proofs hold have one content, whichever runs proved them. */
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

#include "internal.h"

#define CACHE_MAGIC "DUPSCANH"
#define CACHE_VERSION 2u
#define HEADER_SIZE 48u
#define ENTRY_SIZE 80u
#define V1_ENTRY_SIZE 64u
#define F_FULL 1u
#define F_PROVEN 2u

struct cache_header {
	char magic[8];
	uint32_t version, entry_size;
	uint64_t count, strings, checksum, reserved;
};

struct cache_entry {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t partial, full;
	uint64_t cls;
	int64_t at_ns;
	uint32_t flags, path;
};

/* Version 1's entry: no proof. */
struct cache_entry_v1 {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t partial, full;
	uint32_t flags, path;
};

_Static_assert(sizeof(struct cache_header) == HEADER_SIZE, "cache header layout");
_Static_assert(sizeof(struct cache_entry) == ENTRY_SIZE, "cache entry layout");
_Static_assert(sizeof(struct cache_entry_v1) == V1_ENTRY_SIZE, "version 1 entry layout");

/* A cache file as read. */
struct cache_file {
	struct cache_entry *e;
	size_t n;
	char *strings;        /* NULL until needed: a run that changes nothing never reads them */
	size_t nstrings;
	struct stat st;       /* the file as read: is it still the one on disk? */
	uint64_t strings_at;  /* where the string table starts in the file */
};

/* The cache during one run: what it held when the run began, and the hashes
 * this run worked out, merged into it when the run ends. */
struct ds_cache {
	struct cache_file *loaded;   /* NULL when there was no valid file */
	uint64_t salt;               /* makes this run's new class numbers its own */
	uint32_t *at;                /* by representative record: its loaded entry, or DS_NONE;
	                              * NULL until ds_cache_join() */
	uint32_t nat;
	struct ds_hashed *noted;
	size_t nnoted, capnoted;
	struct proof *proofs;        /* at saving: by note, the proof it is saved with */
};

/* What a note is saved with: its class number (0: none) and time. */
struct proof {
	uint64_t cls;
	int64_t at;
};

static void cache_free(struct cache_file *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->strings);
	free(c);
}

void ds_cache_free(struct ds_cache *c)
{
	if (!c)
		return;
	cache_free(c->loaded);
	free(c->noted);
	free(c->proofs);
	free(c->at);
	free(c);
}

/* Cache trouble is told through the error callback but is not a scan error. */
static void cache_report(dupscan_scan *s, const char *path, int code)
{
	if (s->on_error)
		s->on_error(s->error_user, path, code);
}

static int cmp_key(const struct cache_entry *a, uint64_t dev, uint64_t ino)
{
	if (a->dev != dev)
		return a->dev < dev ? -1 : 1;
	return a->ino < ino ? -1 : a->ino > ino;
}

static int cmp_entry(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct cache_entry *b = pb;
	return cmp_key(pa, b->dev, b->ino);
}

static int read_all(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : DUPSCAN_E_CACHE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Version 1's entries, read into the front of e, widened in place (from the
 * last, so none is overwritten before it is moved). */
static void upgrade_v1(struct cache_entry *e, size_t n)
{
	const unsigned char *raw = (const unsigned char *)e;
	for (size_t i = n; i-- > 0;) {
		struct cache_entry_v1 old;
		memcpy(&old, raw + i * V1_ENTRY_SIZE, sizeof(old));
		e[i] = (struct cache_entry){ old.dev, old.ino, old.size, old.mtime_ns, old.ctime_ns, old.partial,
					     old.full, 0, 0, old.flags & F_FULL, old.path };
	}
}

/* Read and check a cache file; the paths are only hashed, and kept when
 * with_strings. @return 0 with *out (NULL when there is no file),
 * DUPSCAN_E_CACHE when it is not a valid cache, -errno, -ENOMEM. */
static int cache_read(const char *path, struct cache_file **out, bool with_strings)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	struct cache_header h;
	struct cache_file *c = calloc(1, sizeof(*c));
	int rc = c ? 0 : -ENOMEM;
	if (rc == 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
		rc = DUPSCAN_E_CACHE;
	if (rc == 0)
		rc = read_all(fd, &h, sizeof(h));
	/* this version, or version 1 (64-byte entries without proofs) */
	size_t esize = rc == 0 && h.version == 1 ? V1_ENTRY_SIZE : ENTRY_SIZE;
	if (rc == 0 && (memcmp(h.magic, CACHE_MAGIC, 8) != 0 || (h.version != CACHE_VERSION && h.version != 1) ||
			h.entry_size != esize || h.count > (uint64_t)st.st_size / esize ||
			h.strings > (uint64_t)st.st_size ||
			(uint64_t)st.st_size != HEADER_SIZE + h.count * esize + h.strings))
		rc = DUPSCAN_E_CACHE;
	struct ds_hashes *x = NULL;
	if (rc == 0) {
		c->st = st;
		c->n = (size_t)h.count;
		c->nstrings = (size_t)h.strings;
		c->strings_at = HEADER_SIZE + c->n * esize;
		c->e = malloc(c->n ? c->n * ENTRY_SIZE : 1);
		c->strings = malloc(with_strings ? c->nstrings + 1 : 65536);
		x = ds_hashes_new(1);
		if (!c->e || !c->strings || !x)
			rc = -ENOMEM;
	}
	if (rc == 0)
		rc = read_all(fd, c->e, c->n * esize);
	if (rc == 0) {
		ds_hash_update(x, 0, c->e, c->n * esize);
		if (esize == V1_ENTRY_SIZE)
			upgrade_v1(c->e, c->n);
		if (with_strings) {
			rc = read_all(fd, c->strings, c->nstrings);
			if (rc == 0) {
				c->strings[c->nstrings] = '\0';
				ds_hash_update(x, 0, c->strings, c->nstrings);
			}
		} else {
			for (size_t left = c->nstrings; rc == 0 && left > 0;) {
				size_t len = left < 65536 ? left : 65536;
				rc = read_all(fd, c->strings, len);
				if (rc == 0)
					ds_hash_update(x, 0, c->strings, len);
				left -= len;
			}
			free(c->strings);
			c->strings = NULL;
		}
	}
	if (rc == 0 && ds_hash_digest(x, 0) != h.checksum)
		rc = DUPSCAN_E_CACHE;
	ds_hashes_free(x);
	/* sorted, and every path inside the table: what lookups and pruning rely on */
	for (size_t i = 0; rc == 0 && i < c->n; i++)
		if (c->e[i].path >= c->nstrings + (c->nstrings == 0) ||
		    (i > 0 && cmp_entry(NULL, &c->e[i - 1], &c->e[i]) >= 0))
			rc = DUPSCAN_E_CACHE;
	close(fd);
	if (rc) {
		cache_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int ds_cache_load(dupscan_scan *s)
{
	struct ds_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int rc = cache_read(s->cache_path, &c->loaded, false);
	if (rc == -ENOMEM) {
		free(c);
		return rc;
	}
	if (rc)
		cache_report(s, s->cache_path, rc); /* ignored: a run without it */
	if (getrandom(&c->salt, sizeof(c->salt), GRND_NONBLOCK) != (ssize_t)sizeof(c->salt)) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		c->salt = (uint64_t)ds_ns(t) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
	}
	s->cache = c;
	return 0;
}

/* The loaded entry of r's inode, or NULL. */
static const struct cache_entry *find_entry(const dupscan_scan *s, const struct ds_rec *r)
{
	const struct cache_file *c = s->cache ? s->cache->loaded : NULL;
	size_t lo = 0, hi = c ? c->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = cmp_key(&c->e[mid], r->dev, r->ino);
		if (cmp == 0)
			return &c->e[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int ds_cache_join(dupscan_scan *s, const uint32_t *order, uint32_t n)
{
	struct ds_cache *c = s->cache;
	if (!c || !c->loaded)
		return 0;
	free(c->at);
	c->at = malloc((n ? n : 1) * sizeof(*c->at));
	if (!c->at)
		return -ENOMEM;
	c->nat = n;
	const struct cache_file *f = c->loaded;
	size_t j = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct ds_rec *r = ds_rec(s, order[i]);
		while (j < f->n && cmp_key(&f->e[j], r->dev, r->ino) < 0)
			j++;
		c->at[order[i]] = j < f->n && cmp_key(&f->e[j], r->dev, r->ino) == 0 ? (uint32_t)j : DS_NONE;
	}
	return 0;
}

/* The entry of r when its key still matches r as walked, or NULL. */
static const struct cache_entry *entry_of(const dupscan_scan *s, const struct ds_rec *r)
{
	const struct ds_cache *c = s->cache;
	const struct cache_entry *e;
	if (c && c->at && c->loaded && r->rep < c->nat) {
		/* joined by inode: no search */
		uint32_t at = c->at[r->rep];
		e = at == DS_NONE ? NULL : &c->loaded->e[at];
		if (e && cmp_key(e, r->dev, r->ino) != 0)
			e = find_entry(s, r);
	} else {
		e = find_entry(s, r);
	}
	if (!e || e->size != r->size || e->mtime_ns != r->mtime_ns || e->ctime_ns != r->ctime_ns)
		return NULL;
	return e;
}

/* Racy: r's mtime or ctime is not older than t by more than the margin, so a
 * write after t could have left its key as it was. */
static bool racy(const dupscan_scan *s, const struct ds_rec *r, int64_t t)
{
	int64_t before = t - s->racy_ns;
	return r->mtime_ns >= before || r->ctime_ns >= before;
}

bool ds_cache_get(const dupscan_scan *s, const struct ds_rec *r, struct ds_hashed *out)
{
	const struct cache_entry *e = entry_of(s, r);
	/* a trusting run takes no hash from a racy entry either: the file is read */
	if (!e || (s->cache_trust && racy(s, r, e->at_ns)))
		return false;
	out->cached = true;
	out->partial = e->partial;
	out->full = e->full;
	out->has_full = (e->flags & F_FULL) != 0;
	return true;
}

bool ds_cache_proof(const dupscan_scan *s, const struct ds_rec *r, uint64_t *cls, int64_t *at_ns)
{
	const struct cache_entry *e = entry_of(s, r);
	if (!e || !(e->flags & F_PROVEN) || !(e->flags & F_FULL) || e->cls == 0)
		return false;
	/* a write in the same timestamp tick as the recorded one, after the
	 * proving scan began, would have left the key as it was */
	if (racy(s, r, e->at_ns))
		return false;
	*cls = e->cls;
	*at_ns = e->at_ns;
	return true;
}

bool ds_cache_usable(const dupscan_scan *s)
{
	/* -Q and -T runs neither take hashes from the cache nor save them */
	return s->cache && s->cache->loaded && !s->quick && !s->partial_only;
}

bool ds_cache_covers(const dupscan_scan *s, const uint32_t *idx, size_t n)
{
	if (!ds_cache_usable(s))
		return false;
	struct ds_hashed h;
	for (size_t i = 0; i < n; i++)
		if (!ds_cache_get(s, ds_rec(s, idx[i]), &h))
			return false;
	return true;
}

bool ds_cache_any(const dupscan_scan *s, const uint32_t *idx, size_t n)
{
	if (!ds_cache_usable(s))
		return false;
	struct ds_hashed h;
	for (size_t i = 0; i < n; i++)
		if (ds_cache_get(s, ds_rec(s, idx[i]), &h))
			return true;
	return false;
}

int ds_cache_note(dupscan_scan *s, const struct ds_hashed *h)
{
	struct ds_cache *c = s->cache;
	if (!c)
		return 0;
	if (DS_GROW(c->noted, c->capnoted, c->nnoted + 1))
		return -ENOMEM;
	c->noted[c->nnoted++] = *h;
	return 0;
}

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
		a[i] = (struct ds_sortkey){ { r->dev, r->ino, !run->noted[i].has_full, 0 }, (uint32_t)i };
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

static int write_cache(const char *path, const struct builder *b)
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
	/* no fsync: after a crash a torn file fails its checksum and is ignored,
	 * which costs one run's hashing, never a wrong result */
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
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
		rc = read_all(fd, c->strings, c->nstrings);
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

/* A number for a class first proven in this run: unlike any other run's,
 * so two runs' classes never merge by name. */
static uint64_t fresh_class(const dupscan_scan *s, const struct ds_rec *named)
{
	struct {
		uint64_t salt, dev, ino;
		int64_t start;
	} key = { s->cache->salt, named->dev, named->ino, s->start_ns };
	uint64_t id = ds_hash_oneshot(&key, sizeof(key));
	return id ? id : 1; /* 0: no class */
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
		if (i > 0 && ds_rec(s, h[i - 1].rec)->dev == r->dev && ds_rec(s, h[i - 1].rec)->ino == r->ino)
			continue;
		struct member x = { ds_index_class(&s->index, h[i].rec), (uint32_t)i, 0, 0 };
		if (!ds_cache_proof(s, r, &x.old, &x.at))
			x.old = 0;
		if (x.cls == DS_NONE || (r->flags & DS_F_DROPPED)) {
			/* no proof, or one that still holds; hashes keep the time
			 * they were worked out */
			const struct cache_entry *e = h[i].cached ? entry_of(s, r) : NULL;
			run->proofs[i] = x.old ? (struct proof){ x.old, x.at }
					       : (struct proof){ 0, e ? e->at_ns : s->start_ns };
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
			best = fresh_class(s, ds_rec(s, m[i].cls));
		for (size_t k = i; k < j; k++)
			run->proofs[m[k].note] = (struct proof){ best, m[k].old == best ? m[k].at : s->start_ns };
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
		int order = !r ? 1 : !old || j >= old->n ? -1 : -cmp_key(&old->e[j], r->dev, r->ino);
		/* paths are needed for old entries this run did not see, and to write */
		if ((order > 0 || b) && old && (rc = load_strings(s->cache_path, old)) != 0)
			break;
		if (order > 0) {
			const char *p = old->strings + old->e[j].path;
			if (!still_there(&old->e[j], p))
				changed = 1;
			else if (b)
				rc = add_entry(b, &old->e[j], p);
			j++;
			continue;
		}
		const struct proof *pf = &run->proofs[i];
		struct cache_entry e = { r->dev, r->ino, r->size, r->mtime_ns, r->ctime_ns, h[i].partial,
					 h[i].full, pf->cls, pf->at,
					 (h[i].has_full ? F_FULL : 0) | (pf->cls ? F_PROVEN : 0), 0 };
		bool was = order == 0 && same_entry(&e, &old->e[j]);
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
		uint64_t dev = r->dev, ino = r->ino;
		while (i < run->nnoted && ds_rec(s, h[i].rec)->dev == dev && ds_rec(s, h[i].rec)->ino == ino)
			i++;
		while (old && j < old->n && cmp_key(&old->e[j], dev, ino) == 0)
			j++;
	}
	return rc ? rc : changed;
}

int ds_cache_save(dupscan_scan *s)
{
	if (!s->cache)
		return 0;
	/* proofs are judged by what this run loaded, whatever another run saved since */
	struct ds_cache *run = s->cache;
	int rc = sort_seen(s, run);
	if (rc == 0)
		rc = assign_proofs(s, run);
	if (rc)
		return rc;
	int lock = lock_cache(s->cache_path);
	if (lock < 0) {
		cache_report(s, s->cache_path, lock);
		return lock == -ENOMEM ? lock : 0;
	}
	/* what is on disk now: what was loaded, unless another run replaced it */
	struct cache_file *old = run->loaded;
	struct stat now;
	if (!old || stat(s->cache_path, &now) != 0 || now.st_dev != old->st.st_dev || now.st_ino != old->st.st_ino ||
	    now.st_size != old->st.st_size || ds_ns(now.st_mtim) != ds_ns(old->st.st_mtim) ||
	    ds_ns(now.st_ctim) != ds_ns(old->st.st_ctim)) {
		cache_free(old);
		rc = cache_read(s->cache_path, &old, false);
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
		rc = write_cache(s->cache_path, &b);
	if (rc < 0 && rc != -ENOMEM)
		cache_report(s, s->cache_path, rc);
	cache_free(old);
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
	free(s->cache_path);
	s->cache_path = copy;
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
	close(lock);
	return rc;
}
