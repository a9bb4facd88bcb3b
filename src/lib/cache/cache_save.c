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
#include "support/support.h"
#include "records/records.h"

/* ---- saving ---- */

/* The new file written as the merge goes, never held whole: the entries
 * after the header, then (a second pass over the same merge) their paths;
 * XXH64 over both, in that order, goes in the header, written last. */
struct writer {
	int fd;
	struct ds_hashes *x;
	unsigned char *buf;
	size_t used;
	uint64_t count, nstrings;  /* entries written, bytes of paths so far */
	int rc;
};
#define WRITER_BUF (256u * 1024u)

static void put(struct writer *w, const void *p, size_t len)
{
	if (w->rc)
		return;
	ds_hash_update(w->x, 0, p, len);
	if (w->used + len > WRITER_BUF) {
		w->rc = ds_write_all(w->fd, w->buf, w->used);
		w->used = 0;
	}
	if (w->rc == 0 && len > WRITER_BUF)
		w->rc = ds_write_all(w->fd, p, len);
	else if (w->rc == 0) {
		memcpy(w->buf + w->used, p, len);
		w->used += len;
	}
}

static int flush(struct writer *w)
{
	if (w->rc == 0 && w->used)
		w->rc = ds_write_all(w->fd, w->buf, w->used);
	w->used = 0;
	return w->rc;
}

/* One entry of the file: in the first pass the entry (its path the offset
 * its string will have), in the second its path. */
static void emit(struct writer *w, bool paths, const struct cache_entry *e, const char *path)
{
	size_t len = strlen(path) + 1;
	if (w->nstrings + len > UINT32_MAX) {
		w->rc = w->rc ? w->rc : -EFBIG;
		return;
	}
	if (paths) {
		put(w, path, len);
	} else {
		struct cache_entry out = *e;
		out.path = (uint32_t)w->nstrings;
		put(w, &out, sizeof(out));
		w->count++;
	}
	w->nstrings += len;
}

/* An old entry this run did not see: kept while its file is still there as it was. */
static bool still_there(const struct cache_entry *e, const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_dev == e->dev &&
	       (uint64_t)st.st_ino == e->ino && (uint64_t)st.st_size == e->size && ds_ns(st.st_mtim) == e->mtime_ns &&
	       ds_ns(st.st_ctim) == e->ctime_ns;
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

/* This run's entries in key order, each inode once: from its notes in
 * memory, or (a spilled scan) merged from its bands' runs on disk. */
struct fresh {
	const struct ds_cache_state *s;
	const struct ds_cache *run;
	size_t i;                    /* in memory: the note at hand */
	struct ds_band_notes *bands; /* else the bands' merge */
	const char *path;            /* its path, from a band */
	struct cache_entry e;
};

static int fresh_open(struct fresh *f, const struct ds_cache_state *s, const struct ds_cache *run)
{
	*f = (struct fresh){ .s = s, .run = run };
	return run->nbands ? ds_band_notes_open(run, &f->bands) : 0;
}

/* The entry at hand, or NULL at the end (or after a band's failed read). */
static const struct cache_entry *fresh_peek(struct fresh *f)
{
	if (f->bands) {
		const struct cache_entry *e = ds_band_notes_peek(f->bands, &f->path);
		if (e)
			f->e = *e;
		return e ? &f->e : NULL;
	}
	if (f->i >= f->run->nnoted)
		return NULL;
	ds_cache_note_entry(f->s, f->run, f->i, &f->e);
	return &f->e;
}

/* Its path into buf of DS_CACHE_PATH_MOST + 1 bytes; false: too long, not cached. */
static bool fresh_path(struct fresh *f, const char *cwd, char *buf)
{
	if (!f->bands)
		return ds_cache_note_path(f->s, f->run->noted[f->i].rec, cwd, buf, DS_CACHE_PATH_MOST);
	strcpy(buf, f->path); /* (read back within the same bound) */
	return buf[0] != '\0';
}

/* Past the entry at hand: in memory, past every note of its inode. */
static void fresh_next(struct fresh *f)
{
	if (f->bands) {
		ds_band_notes_next(f->bands);
		return;
	}
	const struct ds_hashed *h = f->run->noted;
	uint64_t dev = f->e.dev, ino = f->e.ino;
	const struct ds_tree *t = f->s->tree;
	while (f->i < f->run->nnoted && ds_rec_dev(t, ds_rec(t, h[f->i].rec)) == dev &&
	       ds_rec_ino(t, ds_rec(t, h[f->i].rec)) == ino)
		f->i++;
}

static int fresh_close(struct fresh *f)
{
	int rc = f->bands ? ds_band_notes_error(f->bands) : 0;
	ds_band_notes_close(f->bands);
	return rc;
}

/* The old file read as the merge goes, an entry and a path at a time, not
 * held whole: its entries in order, the paths (written in the same order)
 * through a window. What it holds was checked when it was read (or it is
 * the file just re-read); bytes changed under it since give an entry out of
 * the table's bounds, which ends the save (the old file stays). */
struct oldcur {
	struct ds_entries es;       /* the entry at hand: es.index */
	int fd;
	char *win;                  /* paths from byte w0, wn bytes */
	uint64_t w0, wn;
	int rc;
};
#define OLD_WINDOW (64u * 1024u)

static void old_open(struct oldcur *c, const struct cache_file *f, const char *path)
{
	c->fd = f ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -1;
	c->win = f ? malloc(OLD_WINDOW + 1) : NULL;
	c->w0 = c->wn = 0;
	c->rc = !f ? 0 : c->fd < 0 ? -errno : !c->win ? -ENOMEM : 0;
	ds_entries_open(&c->es, c->fd, c->rc == 0 ? f : NULL, NULL);
}

static void old_close(struct oldcur *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->win);
}

/* The entry at hand, or NULL past the last (a failed read sets rc). */
static const struct cache_entry *old_entry(struct oldcur *c)
{
	const struct cache_entry *e = c->rc ? NULL : ds_entries_peek(&c->es);
	if (!e && c->es.rc)
		c->rc = c->es.rc;
	return e;
}

/* The path of the entry at hand, or NULL (none kept, or the file is not as checked). */
static const char *old_path(struct oldcur *c)
{
	const struct cache_entry *e = old_entry(c);
	uint32_t off = e ? e->path : LOG_NO_PATH;
	if (c->rc || off == LOG_NO_PATH || off >= c->es.f->nstrings)
		return NULL;
	if (off < c->w0 || off >= c->w0 + c->wn || !memchr(c->win + (off - c->w0), '\0', c->w0 + c->wn - off)) {
		uint64_t left = c->es.f->nstrings - off;
		c->w0 = off;
		c->wn = left < OLD_WINDOW ? left : OLD_WINDOW;
		c->rc = ds_pread_full(c->fd, c->win, c->wn, c->es.f->strings_at + off);
		if (c->rc == 0 && !memchr(c->win, '\0', c->wn))
			c->rc = DUPSCAN_E_CACHE;
		if (c->rc)
			return NULL;
	}
	return c->win + (off - c->w0);
}

/* This run's files (each inode once, with its full hash when known), then the
 * old entries of files this run did not see, while they are still there as
 * they were. Without w, only tell whether that differs from old, and mark
 * in keep (a bit an old entry) the old entries still there; with w, write
 * the entries (paths false) or their paths (true) of that merge.
 * @return 1 when it differs, 0 when not, or a negative code. */
static int merge(struct ds_cache_state *s, const struct ds_cache *run, const struct cache_file *old, uint8_t *keep,
		 const char *cwd, struct writer *w, bool paths)
{
	int changed = !old || old->version != CACHE_VERSION; /* an older version is replaced */
	struct oldcur oc;
	struct fresh f;
	int rc = fresh_open(&f, s, run);
	old_open(&oc, old, s->path);
	while (rc == 0 && (!w || w->rc == 0)) {
		const struct cache_entry *o = old_entry(&oc);
		const struct cache_entry *e = fresh_peek(&f);
		if (oc.rc || (!e && !o))
			break;
		int order = !e ? 1 : !o ? -1 : -ds_cache_cmp_key(o, e->dev, e->ino);
		if (order > 0) {
			/* a hash the log kept for a file this run did not see: no
			 * path to keep it by */
			uint64_t j = oc.es.index;
			const char *p = old_path(&oc);
			if (!w && p && still_there(o, p))
				keep[j / 8] |= (uint8_t)(1u << (j % 8));
			else if (!w)
				changed = 1;
			else if (keep[j / 8] & (1u << (j % 8)))
				emit(w, paths, o, p ? p : "");
			oc.es.index++;
			continue;
		}
		const char *was = order == 0 && same_entry(e, o) ? old_path(&oc) : NULL;
		changed |= !was;
		char buf[DS_CACHE_PATH_MOST + 1];
		if (w && was)
			emit(w, paths, e, was);
		else if (w && fresh_path(&f, cwd, buf))
			emit(w, paths, e, buf);
		uint64_t dev = e->dev, ino = e->ino;
		fresh_next(&f);
		while ((o = old_entry(&oc)) != NULL && ds_cache_cmp_key(o, dev, ino) == 0)
			oc.es.index++;
	}
	int frc = fresh_close(&f);
	rc = rc ? rc : frc ? frc : oc.rc ? oc.rc : w ? w->rc : changed;
	old_close(&oc);
	return rc;
}

/* The merged file under a temporary name, renamed over path: the entries,
 * their paths, then the header with the checksum over both. @return 0 or a
 * negative code. */
static int write_cache(struct ds_cache_state *s, const struct ds_cache *run, struct cache_file *old, uint8_t *keep,
		       const char *cwd, bool durable)
{
	const char *path = s->path;
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
	struct writer w = { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600), ds_hashes_new(1),
			    malloc(WRITER_BUF), 0, 0, 0, 0 };
	w.rc = w.fd < 0 ? -errno : !w.x || !w.buf ? -ENOMEM : 0;
	if (w.rc == 0 && lseek(w.fd, HEADER_SIZE, SEEK_SET) < 0)
		w.rc = -errno;
	if (w.rc == 0)
		merge(s, run, old, keep, cwd, &w, false);
	uint64_t strings = w.nstrings;
	w.nstrings = 0;
	if (w.rc == 0)
		merge(s, run, old, keep, cwd, &w, true);
	char *log = ds_cache_log_path(path);
	struct cache_header h = { .version = CACHE_VERSION, .entry_size = ENTRY_SIZE, .count = w.count,
				  .strings = strings, .folded_log = log ? ds_cache_log_tag(log) : 0 };
	free(log);
	memcpy(h.magic, CACHE_MAGIC, 8);
	int rc = flush(&w);
	if (rc == 0 && w.nstrings != strings)
		rc = -EIO; /* the two passes must agree; they read nothing that changes between them */
	if (rc == 0) {
		h.checksum = ds_hash_digest(w.x, 0);
		rc = lseek(w.fd, 0, SEEK_SET) < 0 ? -errno : ds_write_all(w.fd, &h, sizeof(h));
	}
	/* where the log it folds was made durable, the file is too before it
	 * replaces the old one and the log goes; elsewhere (a run shorter than
	 * the log's 30 s) a torn file after a power cut fails its checksum and
	 * costs one run's hashing, never a wrong result, and the wait (5% of a
	 * 1.2 s run of 200,000 files) is spared */
	if (rc == 0 && durable && fsync(w.fd) != 0)
		rc = -errno;
	if (w.fd >= 0 && close(w.fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0 && durable)
		rc = ds_fsync_dir_of(path); /* the rename too, before the log is removed */
	if (rc && w.fd >= 0)
		unlink(tmp);
	ds_hashes_free(w.x);
	free(w.buf);
	free(tmp);
	return rc;
}

/* The file on disk now, when it is still the one this run loaded (checked
 * then): its header's counts only, entries and paths left on disk for the
 * merge to read as it goes. @return 0 with *out, 1 when it is another file
 * (or none), or a negative code. */
static int same_file_meta(const char *path, const struct cache_file *loaded, struct cache_file **out)
{
	struct stat now;
	if (!loaded || stat(path, &now) != 0 || !ds_cachefile_is(loaded, &now))
		return 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 1;
	struct cache_header h;
	int rc = ds_cache_read_all(fd, &h, sizeof(h));
	close(fd);
	size_t esize = h.version == 1 ? V1_ENTRY_SIZE : ENTRY_SIZE;
	if (rc || memcmp(h.magic, CACHE_MAGIC, 8) != 0 || h.entry_size != esize ||
	    (uint64_t)now.st_size != HEADER_SIZE + h.count * esize + h.strings)
		return 1;
	struct cache_file *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct cache_file){ (size_t)h.count, (size_t)h.strings, now, HEADER_SIZE + h.count * esize,
				  (uint32_t)esize, h.version, h.folded_log, NULL, 0 };
	*out = c;
	return 0;
}

int ds_cache_save(struct ds_cache_state *s, bool *folded)
{
	*folded = false;
	if (!s->run)
		return 0;
	/* proofs are judged by what this run loaded, whatever another run saved since */
	struct ds_cache *run = s->run;
	/* a spilled scan's notes left with their bands (the last's too) */
	int rc = run->nbands ? ds_cache_band_done(s) : ds_cache_order_notes(s, run);
	if (rc || ds_cache_bands_failed(run))
		return rc; /* (a band's file failed: told; the log keeps the run's work) */
	int lock = lock_cache(s->path);
	if (lock < 0) {
		ds_cache_report(s, s->path, lock);
		return lock == -ENOMEM ? lock : 0;
	}
	/* what is on disk now: what was loaded, unless another run replaced it
	 * (then read and checked again); merged from the disk as the merge
	 * goes, so what was loaded (and the log's records taken over it) is
	 * given back first */
	struct cache_file *old = NULL;
	rc = same_file_meta(s->path, run->loaded, &old);
	ds_cachefile_free(run->loaded);
	run->loaded = NULL;
	if (rc == 1)
		rc = ds_cache_read(s->path, &old);
	/* a broken file is replaced; another file put there since, never */
	if (rc && rc != -ENOMEM && rc != DUPSCAN_E_NOT_CACHE)
		rc = 0;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	/* which old entries stay: decided once, so both passes of the writing agree */
	uint8_t *keep = rc == 0 ? calloc(old ? old->n / 8 + 1 : 1, 1) : NULL;
	if (rc == 0 && !keep)
		rc = -ENOMEM;
	/* a run that changed nothing writes nothing */
	if (rc == 0)
		rc = merge(s, run, old, keep, cwd, NULL, false);
	if (rc == 1)
		rc = write_cache(s, run, old, keep, cwd, ds_cache_log_durable(s));
	if (rc < 0 && rc != -ENOMEM)
		ds_cache_report(s, s->path, rc);
	/* written (or nothing to write): the log's entries are in the file now */
	*folded = rc == 0;
	ds_cachefile_free(old);
	free(keep);
	close(lock); /* releases the lock */
	return rc == -ENOMEM ? rc : 0;
}

int ds_set_cache(struct ds_cache_state *s, const char *path)
{
	if (!s)
		return -EINVAL;
	if (s->core->ran)
		return DUPSCAN_E_STATE;
	char *copy = NULL;
	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(s->path);
	s->path = copy;
	return 0;
}

DUPSCAN_API int dupscan_cache_clear(const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	/* (another file given by mistake is left as it is) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	bool foreign = fd >= 0 && ds_cache_foreign_fd(fd);
	if (fd >= 0)
		close(fd);
	if (foreign)
		return DUPSCAN_E_NOT_CACHE;
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
