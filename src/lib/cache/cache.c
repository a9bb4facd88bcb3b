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
 *   header, 48 bytes: magic "DUPSCANH", u32 version (3), u32 entry size (80),
 *     u64 entry count, u64 string-table size, u64 XXH64 of everything after
 *     the header, u64 the tag of the log folded in (ds_cache_log_tag(), 0
 *     for none; 0 from versions before 0.10)
 *   entries, sorted by (device, inode), 80 bytes each: u64 dev, ino, size,
 *     i64 mtime_ns, ctime_ns, u64 partial (XXH64 of the first 4096 bytes),
 *     full (XXH64 of the rest seeded with partial; partial for a file within
 *     4096 bytes), u64 class (a number naming
 *     the class of a proof), i64 at_ns (the start of the run that hashed
 *     the file, or with a proof, of the run that compared it into that
 *     class), u32 flags (1: full is set, 2: proven, 4: proven by a run
 *     that grouped without -1 or -p: see ds_proof),
 *     u32 offset of the file's absolute path in the string table
 *   string table: NUL-terminated paths (to prune entries whose file is gone)
 * Versions 1 (64-byte entries, no proofs) and 2 (full hashes of the whole
 * file) are still read, without the full hashes and proofs of files larger
 * than a block.
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
#define _GNU_SOURCE /* getrandom */
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
#include "support/support.h"
#include "records/records.h"

/* A key (device, inode, size, mtime, ctime) names one content only where the
 * device keeps its inode numbers (ds_inodes_trusted()). Where it does not
 * (FUSE, SMB with noserverino) a remount numbers files anew in the order
 * they are looked up, and sshfs reports a ctime equal to the mtime in whole
 * seconds: a copy rewritten at its size with its mtime put back, or made
 * again, has its old key. Files there are neither looked up nor saved: they
 * are read every run. */
bool ds_cache_keyed(const struct ds_cache_state *s, const struct ds_rec *r)
{
	return ds_inodes_trusted(s->tree, ds_rec_dev(s->tree, r));
}

bool ds_cachefile_is(const struct cache_file *f, const struct stat *st)
{
	return st->st_dev == f->st.st_dev && st->st_ino == f->st.st_ino && st->st_size == f->st.st_size &&
	       ds_ns(st->st_mtim) == ds_ns(f->st.st_mtim) && ds_ns(st->st_ctim) == ds_ns(f->st.st_ctim);
}

void ds_cachefile_free(struct cache_file *c)
{
	if (!c)
		return;
	free(c->marks);
	free(c);
}

void ds_cache_free(struct ds_cache *c)
{
	if (!c)
		return;
	ds_cachefile_free(c->loaded);
	free(c->log);
	free(c->prefix);
	free(c->pre_at);
	free(c->hits);
	free(c->noted);
	free(c->proved);
	free(c->proofs);
	free(c->at);
	if (c->logruns_fd >= 0)
		close(c->logruns_fd);
	free(c->logruns);
	if (c->bands_fd >= 0)
		close(c->bands_fd);
	free(c->bands);
	free(c);
}

/* Cache trouble is told through the error callback but is not a scan error. */
void ds_cache_report(struct ds_cache_state *s, const char *path, int code)
{
	if (s->core->cb.on_error)
		s->core->cb.on_error(s->core->cb.error_user, path, code);
}

int ds_cache_cmp_entry(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct cache_entry *b = pb;
	return ds_cache_cmp_key(pa, b->dev, b->ino);
}

int ds_cache_read_all(int fd, void *buf, size_t len)
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
void ds_cache_upgrade_v1(struct cache_entry *e, size_t n)
{
	const unsigned char *raw = (const unsigned char *)e;
	for (size_t i = n; i-- > 0;) {
		struct cache_entry_v1 old;
		memcpy(&old, raw + i * V1_ENTRY_SIZE, sizeof(old));
		e[i] = (struct cache_entry){ old.dev, old.ino, old.size, old.mtime_ns, old.ctime_ns, old.partial,
					     old.full, 0, 0, old.flags & F_FULL, old.path };
	}
}

void ds_cache_upgrade_v2(struct cache_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].size <= DS_BLOCK)
			continue;
		e[i].full = 0;
		e[i].cls = 0;
		e[i].flags &= ~F_ALL;
	}
}

void ds_entries_open(struct ds_entries *es, int fd, const struct cache_file *f, struct ds_hashes *x)
{
	es->fd = fd;
	es->f = f;
	es->x = x;
	es->index = es->b0 = 0;
	es->bn = 0;
	es->rc = 0;
}

const struct cache_entry *ds_entries_peek(struct ds_entries *es)
{
	if (es->rc || !es->f || es->index >= es->f->n)
		return NULL;
	if (es->index < es->b0 || es->index >= es->b0 + es->bn) {
		uint64_t left = es->f->n - es->index;
		size_t want = left < DS_ENTRIES_CHUNK ? (size_t)left : DS_ENTRIES_CHUNK;
		es->b0 = es->index;
		es->bn = 0;
		es->rc = ds_pread_full(es->fd, es->buf, want * es->f->esize, HEADER_SIZE + es->index * es->f->esize);
		if (es->rc)
			return NULL;
		if (es->x)
			ds_hash_update(es->x, 0, es->buf, want * es->f->esize);
		if (es->f->esize == V1_ENTRY_SIZE)
			ds_cache_upgrade_v1(es->buf, want);
		if (es->f->version < CACHE_VERSION)
			ds_cache_upgrade_v2(es->buf, want);
		es->bn = want;
	}
	return &es->buf[es->index - es->b0];
}

void ds_entries_seek(struct ds_entries *es, uint64_t dev, uint64_t ino)
{
	const struct cache_file *f = es->f;
	if (!f || !f->marks || es->index >= f->n)
		return;
	/* the last chunk whose first key is not past the key */
	size_t lo = 0, hi = f->nmarks;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cache_mark *m = &f->marks[mid];
		bool past = m->dev != dev ? m->dev > dev : m->ino > ino;
		if (past)
			hi = mid;
		else
			lo = mid;
	}
	uint64_t at = (uint64_t)lo * DS_ENTRIES_CHUNK;
	if (at > es->index)
		es->index = at;
}

/* Every entry sorted and its path inside the table, the checksum over the
 * entries and the paths as read; the marks noted (ds_entries_seek()).
 * @return 0, DUPSCAN_E_CACHE, -errno or -ENOMEM. */
static int check_body(int fd, struct cache_file *c, uint64_t checksum)
{
	struct ds_entries *es = malloc(sizeof(*es));
	struct ds_hashes *x = ds_hashes_new(1);
	unsigned char *chunk = malloc(65536);
	c->nmarks = (c->n + DS_ENTRIES_CHUNK - 1) / DS_ENTRIES_CHUNK;
	c->marks = malloc((c->nmarks ? c->nmarks : 1) * sizeof(*c->marks));
	int rc = es && x && chunk && c->marks ? 0 : -ENOMEM;
	struct cache_entry prev = { 0 };
	if (rc == 0)
		ds_entries_open(es, fd, c, x);
	for (; rc == 0 && es->index < c->n; es->index++) {
		const struct cache_entry *e = ds_entries_peek(es);
		if (!e)
			rc = es->rc == DUPSCAN_E_SHORT ? DUPSCAN_E_CACHE : es->rc;
		else if (e->path >= c->nstrings + (c->nstrings == 0) ||
			 (es->index > 0 && ds_cache_cmp_entry(NULL, &prev, e) >= 0))
			rc = DUPSCAN_E_CACHE;
		else
			prev = *e;
		if (rc == 0 && es->index % DS_ENTRIES_CHUNK == 0)
			c->marks[es->index / DS_ENTRIES_CHUNK] = (struct cache_mark){ e->dev, e->ino };
	}
	for (uint64_t off = 0; rc == 0 && off < c->nstrings;) {
		size_t len = c->nstrings - off < 65536 ? (size_t)(c->nstrings - off) : 65536;
		rc = ds_pread_full(fd, chunk, len, c->strings_at + off);
		if (rc == DUPSCAN_E_SHORT)
			rc = DUPSCAN_E_CACHE;
		if (rc == 0)
			ds_hash_update(x, 0, chunk, len);
		off += len;
	}
	if (rc == 0 && ds_hash_digest(x, 0) != checksum)
		rc = DUPSCAN_E_CACHE;
	free(chunk);
	ds_hashes_free(x);
	free(es);
	return rc;
}

bool ds_cache_foreign_fd(int fd)
{
	struct stat st;
	struct cache_header h;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return true;
	ssize_t got = st.st_size > 0 ? pread(fd, &h, sizeof(h), 0) : 0;
	if (got <= 0)
		return false; /* empty (touch): a cache to begin */
	if (memcmp(h.magic, CACHE_MAGIC, (size_t)got < 8 ? (size_t)got : 8) == 0)
		return false; /* a cache, maybe damaged or cut short */
	/* a damaged magic over a header whose sizes add up to the file's is a
	 * damaged cache; nothing else adds up by chance */
	uint64_t esize = got == (ssize_t)sizeof(h) && (h.entry_size == ENTRY_SIZE || h.entry_size == V1_ENTRY_SIZE)
				 ? h.entry_size : 0;
	return !(esize && h.count <= (uint64_t)st.st_size / esize && h.strings <= (uint64_t)st.st_size &&
		 (uint64_t)st.st_size == HEADER_SIZE + h.count * esize + h.strings);
}

int ds_cache_read(const char *path, struct cache_file **out)
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
		rc = DUPSCAN_E_NOT_CACHE;
	if (rc == 0 && ds_cache_foreign_fd(fd))
		rc = DUPSCAN_E_NOT_CACHE;
	if (rc == 0)
		rc = ds_cache_read_all(fd, &h, sizeof(h));
	/* this version, or version 1 (64-byte entries without proofs) or 2 */
	size_t esize = rc == 0 && h.version == 1 ? V1_ENTRY_SIZE : ENTRY_SIZE;
	if (rc == 0 && (memcmp(h.magic, CACHE_MAGIC, 8) != 0 || h.version < 1 || h.version > CACHE_VERSION ||
			h.entry_size != esize || h.count > (uint64_t)st.st_size / esize ||
			h.strings > (uint64_t)st.st_size ||
			(uint64_t)st.st_size != HEADER_SIZE + h.count * esize + h.strings))
		rc = DUPSCAN_E_CACHE;
	if (rc == 0) {
		c->st = st;
		c->n = (size_t)h.count;
		c->nstrings = (size_t)h.strings;
		c->strings_at = HEADER_SIZE + c->n * esize;
		c->esize = (uint32_t)esize;
		c->version = h.version;
		c->folded_log = h.folded_log;
		rc = check_body(fd, c, h.checksum);
	}
	close(fd);
	if (rc) {
		ds_cachefile_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int ds_cache_load(struct ds_cache_state *s)
{
	struct ds_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	int rc = ds_cache_read(s->path, &c->loaded);
	if (rc == -ENOMEM) {
		free(c);
		return rc;
	}
	if (rc)
		ds_cache_report(s, s->path, rc); /* ignored: a run without it */
	if (rc == DUPSCAN_E_NOT_CACHE) { /* and never written over */
		free(c);
		s->run = NULL;
		return 0;
	}
	c->bands_fd = -1;
	c->logruns_fd = -1;
	if (getrandom(&c->salt, sizeof(c->salt), GRND_NONBLOCK) != (ssize_t)sizeof(c->salt)) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		c->salt = (uint64_t)ds_ns(t) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)c;
	}
	s->run = c;
	return 0;
}

/* The entry joined to the inode whose record is rep, or NULL. */
static const struct cache_hit *entry_of_rep(const struct ds_cache_state *s, uint32_t rep)
{
	const struct ds_cache *c = s->run;
	if (!c || !c->at || rep >= c->nat || c->at[rep] == DS_NONE)
		return NULL;
	return &c->hits[c->at[rep]];
}

const struct cache_hit *ds_cache_entry_of(const struct ds_cache_state *s, uint32_t i)
{
	return entry_of_rep(s, ds_rec_rep(s->tree, i));
}

/* A number for a class first proven in this run: unlike any other run's,
 * so two runs' classes never merge by name. */
uint64_t ds_cache_fresh_class(const struct ds_cache_state *s, const struct ds_rec *named)
{
	struct {
		uint64_t salt, dev, ino;
		int64_t start;
	} key = { s->run->salt, ds_rec_dev(s->tree, named), ds_rec_ino(s->tree, named), s->start_ns };
	uint64_t id = ds_hash_oneshot(&key, sizeof(key));
	return id ? id : 1; /* 0: no class */
}

char *ds_cache_log_path(const char *cache)
{
	size_t len = strlen(cache);
	char *p = malloc(len + 5);
	if (p) {
		memcpy(p, cache, len);
		memcpy(p + len, ".log", 5);
	}
	return p;
}

/* Racy: r's mtime or ctime is not older than t by more than the margin, so a
 * write after t could have left its key as it was. */
static bool racy(const struct ds_cache_state *s, const struct ds_rec *r, int64_t t)
{
	int64_t before = t - s->racy_ns;
	return r->mtime_ns >= before || r->ctime_ns >= before;
}

bool ds_cache_get(const struct ds_cache_state *s, uint32_t i, struct ds_hashed *out)
{
	uint32_t rep = ds_rec_rep(s->tree, i);
	const struct ds_rec *r = ds_rec(s->tree, rep); /* its inode's */
	const struct cache_hit *e = entry_of_rep(s, rep);
	/* a trusting run takes no hash from a racy entry either: the file is read */
	if (!e || (s->core->opt.cache_trust && racy(s, r, e->at_ns)))
		return false;
	out->cached = true;
	out->partial = e->partial;
	out->full = e->full;
	out->has_full = (e->flags & F_FULL) != 0;
	return true;
}

bool ds_cache_proof(const struct ds_cache_state *s, uint32_t i, struct ds_proof *out)
{
	uint32_t rep = ds_rec_rep(s->tree, i);
	const struct ds_rec *r = ds_rec(s->tree, rep); /* its inode's */
	const struct cache_hit *e = entry_of_rep(s, rep);
	if (!e || !(e->flags & F_PROVEN) || e->cls == 0)
		return false;
	/* a write in the same timestamp tick as the recorded one, after the
	 * proving scan began, would have left the key as it was */
	if (racy(s, r, e->at_ns))
		return false;
	*out = (struct ds_proof){ e->cls, e->at_ns, (e->flags & F_APART) != 0, (e->flags & F_FULL) != 0,
				  (e->flags & F_ALONE) != 0 };
	return true;
}

bool ds_cache_prefix(const struct ds_cache_state *s, uint32_t i, struct ds_prefix *out)
{
	const struct ds_cache *c = s->run;
	uint32_t rep = ds_rec_rep(s->tree, i);
	if (!c || !c->pre_at || rep >= c->nat || c->pre_at[rep] == DS_NONE)
		return false;
	const struct cache_entry *e = &c->prefix[c->pre_at[rep]];
	if (racy(s, ds_rec(s->tree, rep), e->at_ns))
		return false;
	*out = (struct ds_prefix){ e->full, e->cls, e->at_ns };
	return true;
}

bool ds_cache_usable(const struct ds_cache_state *s)
{
	/* -Q and -T runs neither take hashes from the cache nor save them */
	return s->run && s->run->loaded && !s->core->opt.quick && !s->core->opt.partial_only;
}

bool ds_cache_covers(const struct ds_cache_state *s, const uint32_t *idx, size_t n)
{
	if (!ds_cache_usable(s))
		return false;
	struct ds_hashed h;
	for (size_t i = 0; i < n; i++)
		if (!ds_cache_get(s, idx[i], &h))
			return false;
	return true;
}

bool ds_cache_any(const struct ds_cache_state *s, const uint32_t *idx, size_t n)
{
	if (!ds_cache_usable(s))
		return false;
	struct ds_hashed h;
	for (size_t i = 0; i < n; i++)
		if (ds_cache_get(s, idx[i], &h))
			return true;
	return false;
}

int ds_cache_proved(struct ds_cache_state *s, const struct ds_proved *p)
{
	struct ds_cache *c = s->run;
	if (!c)
		return 0;
	if (DS_GROW(c->proved, c->capproved, c->nproved + 1))
		return -ENOMEM;
	c->proved[c->nproved++] = *p;
	return 0;
}

int ds_cache_note(struct ds_cache_state *s, const struct ds_hashed *h)
{
	struct ds_cache *c = s->run;
	if (!c || !ds_cache_keyed(s, ds_rec(s->tree, h->rec)))
		return 0;
	if (DS_GROW(c->noted, c->capnoted, c->nnoted + 1))
		return -ENOMEM;
	c->noted[c->nnoted++] = *h;
	return 0;
}
