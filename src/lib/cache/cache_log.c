/* SPDX-License-Identifier: MIT */
/* cache_log.c: a first scan that survives a kill. With a cache FILE, the
 * hashes (and proofs) each group's commit settles are appended to FILE.log
 * as the run goes, written at least every LOG_BUFFER bytes of records, every
 * second and every 4 MiB read (what a SIGKILL may lose), and
 * made durable (fdatasync) at least every 30 s and every 256 MiB read (each
 * file as it is settled: its hashes, and its proof when it was compared into
 * a class byte by byte; not at the commits, which a single size group of a
 * whole disk would leave to the end); a run
 * that ends folds them into FILE (ds_cache_save) and removes the log; a run
 * that begins after one was killed takes them as if they were in FILE. A
 * rewrite of FILE at each step would cost, at ten million files, as much as
 * the scan.
 *
 * Log format (native byte order): records of 88 bytes, each the 80 bytes of
 * a cache entry (see cache.c; its path offset LOG_NO_PATH, as the log keeps
 * no paths) and the XXH64 of those 80 bytes seeded with LOG_SEED. A record
 * that fails its check (torn by a crash, or left by another machine) is
 * skipped; a later record of an inode replaces an earlier one. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill.h"

#define LOG_BUFFER (64u * 1024u)            /* records written at least this often */
#define LOG_WRITE_NS 1000000000ll           /* and every second and every 4 MiB read: */
#define LOG_WRITE_READ (4ull << 20)         /* what a SIGKILL loses, at most */
#define LOG_SYNC_NS (30ll * 1000000000ll)   /* durable at least this often */
#define LOG_SYNC_READ (256ull << 20)        /* and every so many bytes read */


/* The run's log: its file opened at the first write. */
struct cache_log {
	char *path;
	int fd;                  /* -1 until the first write */
	bool failed;             /* told once; the run goes on without it */
	bool durable;            /* a record was made durable, or a killed run's taken */
	struct log_record *buf;  /* LOG_BUFFER bytes */
	size_t nbuf;
	int64_t written_ns;      /* CLOCK_MONOTONIC at the last write (or the start) */
	int64_t synced_ns;       /* at the last fdatasync (or the start) */
	uint64_t synced_read;    /* bytes read then */
	uint64_t written_read;   /* bytes read at the last write */
	struct ds_monitor *mon;  /* records come from every matching thread */
};

/* Under a budget (records/spill.h), a log past an eighth of it is taken on
 * disk (cache_logruns.c), a chunk of that eighth at a time (4096 records at
 * least). @return the chunk's records, or 0: taken whole. */
static size_t log_chunk(const struct ds_cache_state *s, const char *path)
{
	struct stat st;
	uint64_t share = ds_spill_budget(s->tree) / 8;
	if (!s->tree->spill || lstat(path, &st) != 0 || (uint64_t)st.st_size / sizeof(struct log_record) * sizeof(struct cache_entry) <= share)
		return 0;
	uint64_t chunk = share / sizeof(struct cache_entry);
	return chunk < 4096 ? 4096 : (size_t)chunk;
}

/* The log at path taken on disk, in chunks of chunk records. @return 0
 * (*taken: records taken), -ENOMEM or another code (told by the caller). */
static int take_runs(struct ds_cache_state *s, struct ds_cache *c, const char *path, size_t chunk, size_t *taken)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	int rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? 0 : DUPSCAN_E_CACHE;
	if (rc == 0)
		rc = ds_log_runs_take(s, fd, chunk, taken);
	close(fd);
	if (rc == 0 && *taken > 0 && !c->loaded && !(c->loaded = calloc(1, sizeof(*c->loaded))))
		rc = -ENOMEM; /* no FILE: its stat stays zero, so saving reads what is there then */
	return rc;
}

/* The valid records of the log at path, in the order written.
 * @return 0 (*out NULL, *n 0 when there is none), -errno or -ENOMEM. */
static int read_log(const char *path, struct cache_entry **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	int rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? 0 : DUPSCAN_E_CACHE;
	size_t cap = rc == 0 ? (size_t)((uint64_t)st.st_size / sizeof(struct log_record)) : 0;
	struct cache_entry *e = rc == 0 ? malloc((cap ? cap : 1) * sizeof(*e)) : NULL;
	struct log_record *chunk = rc == 0 ? malloc(LOG_BUFFER) : NULL;
	if (rc == 0 && (!e || !chunk))
		rc = -ENOMEM;
	/* whole records only: a torn last one is left */
	for (size_t done = 0; rc == 0 && done < cap;) {
		size_t want = cap - done < LOG_BUFFER / sizeof(*chunk) ? cap - done : LOG_BUFFER / sizeof(*chunk);
		rc = ds_cache_read_all(fd, chunk, want * sizeof(*chunk));
		for (size_t i = 0; rc == 0 && i < want; i++)
			if (ds_log_record_valid(&chunk[i]))
				e[(*n)++] = chunk[i].e;
		done += want;
	}
	free(chunk);
	close(fd);
	if (rc == DUPSCAN_E_CACHE && *n > 0)
		rc = 0; /* the file shrank meanwhile: what was read stands */
	if (rc) {
		free(e);
		*n = 0;
		return rc;
	}
	*out = e;
	return 0;
}

static int cmp_key(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct cache_entry *b = pb;
	return ds_cache_cmp_key(pa, b->dev, b->ino);
}

/* Keep the log's records, sorted by inode (the last of an inode written
 * last), for ds_cache_join() to take over the file's entries (c->loaded made
 * when there was no FILE); *taken: how many. Trouble is told and ignored.
 * @return 0 or -ENOMEM. */
static int take(struct ds_cache_state *s, struct ds_cache *c, size_t *taken)
{
	char *path = ds_cache_log_path(s->path);
	struct cache_entry *log = NULL;
	size_t m = 0;
	/* a log the file holds already (its run was killed before removing it):
	 * its proofs are numbered otherwise than the file's, so it is not taken,
	 * and goes before this run appends (left there, this run keeps no log) */
	bool folded = path && c->loaded && c->loaded->folded_log && c->loaded->folded_log == ds_cache_log_tag(path);
	if (folded && unlink(path) != 0 && errno != ENOENT) {
		ds_cache_report(s, path, -errno);
		free(path);
		return -EEXIST;
	}
	size_t chunk = path ? log_chunk(s, path) : 0;
	if (chunk) {
		int rc = take_runs(s, c, path, chunk, taken);
		if (rc && rc != -ENOMEM)
			ds_cache_report(s, path, rc); /* a run without it */
		free(path);
		return rc == -ENOMEM ? rc : 0;
	}
	int rc = path ? read_log(path, &log, &m) : -ENOMEM;
	*taken = m;
	if (rc && rc != -ENOMEM)
		ds_cache_report(s, path, rc); /* a run without it */
	if (rc == 0 && m > 0)
		rc = ds_sort(log, m, sizeof(*log), cmp_key, NULL); /* stable: the order written stays */
	if (rc == 0 && m > 0 && !c->loaded && !(c->loaded = calloc(1, sizeof(*c->loaded))))
		rc = -ENOMEM; /* no FILE: its stat stays zero, so saving reads what is there then */
	if (rc == 0 && m > 0) {
		/* comparisons under way apart: they are no entry, and count only
		 * while nothing was written of their file after them */
		size_t ne = 0, np = 0;
		for (size_t i = 0; i < m; i++)
			np += (log[i].flags & F_PREFIX) != 0;
		struct cache_entry *pre = malloc((np ? np : 1) * sizeof(*pre));
		if (!pre)
			rc = -ENOMEM;
		np = 0;
		for (size_t i = 0; rc == 0 && i < m; i++) {
			bool last = i + 1 == m || ds_cache_cmp_key(&log[i + 1], log[i].dev, log[i].ino) != 0;
			if (!(log[i].flags & F_PREFIX))
				log[ne++] = log[i];
			else if (last)
				pre[np++] = log[i];
		}
		if (rc == 0) {
			free(c->log);
			free(c->prefix);
			c->log = log;
			c->nlog = ne;
			c->prefix = pre;
			c->nprefix = np;
			log = NULL;
		}
	}
	free(log);
	free(path);
	return rc == -ENOMEM ? rc : 0;
}

uint64_t ds_cache_log_tag(const char *log_path)
{
	struct stat st;
	if (lstat(log_path, &st) != 0)
		return 0;
	struct {
		uint64_t dev, ino, size;
		int64_t mtime, ctime;
	} key = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size, ds_ns(st.st_mtim), ds_ns(st.st_ctim) };
	uint64_t tag = ds_hash_oneshot(&key, sizeof(key));
	return tag ? tag : 1;
}

static bool sync_due(const struct cache_log *l, int64_t now, uint64_t read)
{
	return now - l->synced_ns >= LOG_SYNC_NS || read - l->synced_read >= LOG_SYNC_READ;
}

/* Write what the buffer holds, and make the log durable when due (or when
 * sync). A failure is told once; the run goes on without a log. */
static void flush(struct ds_cache_state *s, struct cache_log *l, bool sync)
{
	if (l->failed)
		return;
	if (l->fd < 0 && l->nbuf > 0) {
		l->fd = open(l->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (l->fd < 0) {
			l->failed = true;
			ds_cache_report(s, l->path, -errno);
			return;
		}
	}
	int rc = l->nbuf ? ds_write_all(l->fd, l->buf, l->nbuf * sizeof(*l->buf)) : 0;
	l->nbuf = 0;
	uint64_t read = atomic_load_explicit(&s->core->progress.read, memory_order_relaxed);
	int64_t now = ds_mono_ns();
	l->written_ns = now;
	l->written_read = read;
	if (rc == 0 && l->fd >= 0 && (sync || sync_due(l, now, read))) {
		rc = fdatasync(l->fd) == 0 ? 0 : -errno;
		l->synced_ns = now;
		l->durable = true;
		l->synced_read = read;
	}
	if (rc) {
		l->failed = true;
		ds_cache_report(s, l->path, rc);
	}
}

int ds_cache_log_start(struct ds_cache_state *s)
{
	struct ds_cache *c = s->run;
	if (!c)
		return 0;
	/* what a killed run had worked out */
	size_t taken = 0;
	int rc = take(s, c, &taken);
	/* -Q and -T runs save nothing; nor a run whose log could not be cleared */
	if (rc || s->core->opt.quick || s->core->opt.partial_only)
		return rc == -EEXIST ? 0 : rc;
	struct cache_log *l = calloc(1, sizeof(*l));
	if (!l || !(l->path = ds_cache_log_path(s->path)) || !(l->buf = malloc(LOG_BUFFER)) ||
	    !(l->mon = ds_monitor_new())) {
		if (l) {
			free(l->path);
			free(l->buf);
		}
		free(l);
		return -ENOMEM;
	}
	l->fd = -1;
	l->synced_ns = l->written_ns = ds_mono_ns();
	l->durable = taken > 0;
	s->log = l;
	return 0;
}

/* Append entries e[0..n) to the log (from any thread), all in one write:
 * written and made durable when due. */
static void append(struct ds_cache_state *s, const struct cache_entry *e, size_t n)
{
	struct cache_log *l = s->log;
	ds_monitor_enter(l->mon);
	if (!l->failed && l->nbuf + n > LOG_BUFFER / sizeof(*l->buf))
		flush(s, l, false);
	for (size_t i = 0; !l->failed && i < n && l->nbuf < LOG_BUFFER / sizeof(*l->buf); i++) {
		struct log_record x = { .e = e[i] };
		x.check = ds_log_record_check(&x.e);
		l->buf[l->nbuf++] = x;
	}
	if (!l->failed) {
		/* the clock every few records: many small files settle in a microsecond each */
		uint64_t read = atomic_load_explicit(&s->core->progress.read, memory_order_relaxed);
		int64_t now = n > 1 || (l->nbuf & 15) == 1 || read - l->written_read >= LOG_WRITE_READ ? ds_mono_ns() : l->written_ns;
		/* flush decides whether it is also made durable */
		if (now - l->written_ns >= LOG_WRITE_NS || read - l->written_read >= LOG_WRITE_READ ||
		    sync_due(l, now, read))
			flush(s, l, false);
	}
	ds_monitor_leave(l->mon);
}

void ds_cache_log_add(struct ds_cache_state *s, uint32_t rec, uint64_t partial, uint64_t full, bool has_full,
		      const struct ds_proof *pf)
{
	if (!s->log)
		return;
	const struct ds_rec *r = ds_rec(s->tree, rec);
	uint32_t flags = (has_full ? F_FULL : 0) | (pf ? F_PROVEN : 0) | (pf && pf->apart ? F_APART : 0) |
			 (pf && pf->alone ? F_ALONE : 0);
	append(s, &(struct cache_entry){ ds_rec_dev(s->tree, r), ds_rec_ino(s->tree, r), ds_rec_size(s->tree, r), r->mtime_ns, r->ctime_ns, partial, full,
					 pf ? pf->cls : 0, pf ? pf->at : s->start_ns, flags, LOG_NO_PATH }, 1);
}

/* Member m's record at a checkpoint: in play, equal to the others of its class
 * up to off; alone (unless dropped), proven in a class of its own in a run
 * that sees its whole bucket together, as ds_note_proofs() will prove it.
 * @return false when there is nothing to tell of it. */
static bool checkpoint_entry(const struct ds_cache_state *s, const struct ds_member *m, const struct ds_member *all,
			     uint64_t partial, uint64_t off, struct cache_entry *e)
{
	const struct ds_rec *r = ds_rec(s->tree, m->rec);
	*e = (struct cache_entry){ ds_rec_dev(s->tree, r), ds_rec_ino(s->tree, r), ds_rec_size(s->tree, r), r->mtime_ns, r->ctime_ns, partial, off,
				   0, s->start_ns, F_PREFIX, LOG_NO_PATH };
	if (m->alive) {
		e->cls = ds_cache_fresh_class(s, ds_rec(s->tree, all[m->cls].rec));
		return true;
	}
	if ((r->flags & DS_F_DROPPED) || !ds_groups_apart(s))
		return false;
	e->full = partial;
	e->cls = ds_cache_fresh_class(s, r);
	e->flags = F_PROVEN | F_APART | F_ALONE;
	return true;
}

void ds_cache_log_checkpoint(struct ds_cache_state *s, const struct ds_member *m, size_t n, uint64_t partial, uint64_t off)
{
	if (!s->log)
		return;
	struct cache_entry e[64];
	size_t k = 0;
	/* a checkpoint whole in the log or not at all (a part would not resume) */
	if (n > sizeof(e) / sizeof(*e))
		return;
	for (size_t i = 0; i < n; i++)
		k += checkpoint_entry(s, &m[i], m, partial, off, &e[k]);
	append(s, e, k);
}

void ds_cache_log_close(struct ds_cache_state *s, bool folded)
{
	struct cache_log *l = s->log;
	if (l && !folded)
		flush(s, l, true); /* what the next run takes */
	if (l && l->fd >= 0)
		close(l->fd);
	if (folded && s->path) {
		char *path = l ? NULL : ds_cache_log_path(s->path);
		const char *p = l ? l->path : path;
		if (p && unlink(p) != 0 && errno != ENOENT)
			ds_cache_report(s, p, -errno);
		free(path);
	}
	if (l) {
		l->fd = -1;
		ds_cache_log_free(l);
		s->log = NULL;
	}
}

bool ds_cache_log_durable(const struct ds_cache_state *s)
{
	return s->log && s->log->durable;
}

void ds_cache_log_free(struct cache_log *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->path);
	free(l->buf);
	ds_monitor_free(l->mon);
	free(l);
}
