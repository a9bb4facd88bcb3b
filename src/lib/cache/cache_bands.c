/* SPDX-License-Identifier: MIT */
/* cache_bands.c: the hash cache under a memory budget. A spilled scan
 * matches one band of sizes at a time and then keeps only its sets' records
 * (records/spill.c), renumbered; the run's notes and proofs name records by
 * number, so they leave with their band: sorted by inode, each inode's entry
 * with its proof and its path, as one run of an unnamed temporary file. The
 * save merges the runs (an inode is in one band: its names share a size)
 * with the cache file as it merges the notes of a scan in memory.
 *
 * A run's entry: the 80 bytes of a cache entry (cache.c), its path field
 * the path's length (0: too long to keep), then the path's bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill.h"
#include "fsutil.h"

#define BAND_WRITE (256u * 1024u)
#define BAND_READ (32u * 1024u) /* a run's buffer while merging: holds any entry */
_Static_assert(BAND_READ >= ENTRY_SIZE + DS_CACHE_PATH_MOST, "a band's read buffer holds any entry");

uint64_t ds_cache_held(const struct ds_cache_state *s)
{
	const struct ds_cache *c = s->run;
	return c ? (uint64_t)(c->nlog + c->nprefix) * sizeof(struct cache_entry) : 0;
}

/* A failed band file: told once; the save then writes nothing, and the log
 * (not folded) keeps what the run worked out for the next. */
static int band_failed(struct ds_cache_state *s, int rc)
{
	s->run->bands_end = UINT64_MAX;
	if (rc != -ENOMEM)
		ds_cache_report(s, ds_spill_dir(s->tree), rc);
	return rc;
}

/* The sorted notes, each inode's first, written after the file's end. */
static int write_band(struct ds_cache_state *s, struct ds_cache *run)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	unsigned char *buf = malloc(BAND_WRITE);
	char *path = malloc(DS_CACHE_PATH_MOST);
	int rc = buf && path ? 0 : -ENOMEM;
	uint64_t start = run->bands_end;
	size_t used = 0;
	for (size_t i = 0; rc == 0 && i < run->nnoted; i++) {
		struct cache_entry e;
		ds_cache_note_entry(s, run, i, &e);
		if (i > 0) {
			const struct ds_rec *p = ds_rec(s->tree, run->noted[i - 1].rec);
			if (ds_rec_dev(s->tree, p) == e.dev && ds_rec_ino(s->tree, p) == e.ino)
				continue; /* (the first of an inode counts) */
		}
		size_t len = ds_cache_note_path(s, run->noted[i].rec, cwd, path, DS_CACHE_PATH_MOST) ? strlen(path) : 0;
		e.path = (uint32_t)len;
		if (used + sizeof(e) + len > BAND_WRITE) {
			rc = ds_write_all(run->bands_fd, buf, used);
			run->bands_end += used;
			used = 0;
		}
		memcpy(buf + used, &e, sizeof(e));
		memcpy(buf + used + sizeof(e), path, len);
		used += sizeof(e) + len;
	}
	if (rc == 0 && used) {
		rc = ds_write_all(run->bands_fd, buf, used);
		run->bands_end += used;
	}
	if (rc == 0 && DS_GROW(run->bands, run->capbands, run->nbands + 1))
		rc = -ENOMEM;
	if (rc == 0)
		run->bands[run->nbands++] = (struct band_run){ start, run->bands_end };
	free(buf);
	free(path);
	return rc;
}

int ds_cache_band_done(struct ds_cache_state *s)
{
	struct ds_cache *run = s->run;
	if (!run)
		return 0;
	int rc = 0;
	if (run->nnoted > 0 && run->bands_end != UINT64_MAX) {
		if (run->bands_fd < 0 && (run->bands_fd = ds_spill_file(s->tree)) < 0)
			rc = band_failed(s, run->bands_fd);
		if (rc == 0)
			rc = ds_cache_order_notes(s, run);
		if (rc == 0 && (rc = write_band(s, run)) != 0)
			band_failed(s, rc);
	}
	/* the band's records go: what named them by number goes with them */
	run->nnoted = 0;
	run->nproved = 0;
	free(run->proofs);
	run->proofs = NULL;
	return rc == -ENOMEM ? rc : 0;
}

bool ds_cache_bands_failed(const struct ds_cache *run)
{
	return run->bands_end == UINT64_MAX;
}

/* ---- the save's merge of the runs ---- */

struct band_cursor {
	uint64_t off, end;           /* the run's bytes still to read */
	unsigned char *buf;
	size_t pos, len;
};

struct ds_band_notes {
	int fd;
	struct band_cursor *c;
	size_t n;
	size_t least;                /* the cursor of the entry at hand, or n */
	struct cache_entry e;
	char path[DS_CACHE_PATH_MOST + 1];
	int rc;
};

/* Cursor c's next entry whole in its buffer, or false at its end (or a failed read). */
static bool fill(struct ds_band_notes *b, struct band_cursor *c)
{
	size_t have = c->len - c->pos;
	if (have >= sizeof(struct cache_entry)) {
		struct cache_entry e;
		memcpy(&e, c->buf + c->pos, sizeof(e));
		if (e.path > DS_CACHE_PATH_MOST) {
			b->rc = DUPSCAN_E_CACHE; /* (the file is this run's own: never) */
			return false;
		}
		if (have >= sizeof(e) + e.path)
			return true;
	}
	if (c->off >= c->end) {
		if (have)
			b->rc = DUPSCAN_E_CACHE; /* an entry cut short */
		return false;
	}
	memmove(c->buf, c->buf + c->pos, have);
	c->pos = 0;
	c->len = have;
	size_t want = BAND_READ - have;
	if (want > c->end - c->off)
		want = (size_t)(c->end - c->off);
	int rc = ds_pread_full(b->fd, c->buf + have, want, c->off);
	if (rc) {
		b->rc = rc;
		return false;
	}
	c->off += want;
	c->len += want;
	return fill(b, c);
}

/* The least of the cursors' next entries: b->least. */
static void pick(struct ds_band_notes *b)
{
	b->least = b->n;
	for (size_t k = 0; k < b->n && b->rc == 0; k++) {
		if (!fill(b, &b->c[k]))
			continue;
		struct cache_entry e;
		memcpy(&e, b->c[k].buf + b->c[k].pos, sizeof(e));
		if (b->least == b->n || ds_cache_cmp_key(&e, b->e.dev, b->e.ino) < 0) {
			b->least = k;
			b->e = e;
		}
	}
}

int ds_band_notes_open(const struct ds_cache *run, struct ds_band_notes **out)
{
	struct ds_band_notes *b = calloc(1, sizeof(*b));
	if (!b || !(b->c = calloc(run->nbands, sizeof(*b->c)))) {
		free(b);
		return -ENOMEM;
	}
	b->fd = run->bands_fd;
	b->n = run->nbands;
	for (size_t k = 0; k < b->n; k++) {
		b->c[k] = (struct band_cursor){ run->bands[k].off, run->bands[k].end, malloc(BAND_READ), 0, 0 };
		if (!b->c[k].buf) {
			ds_band_notes_close(b);
			return -ENOMEM;
		}
	}
	pick(b);
	*out = b;
	return 0;
}

const struct cache_entry *ds_band_notes_peek(struct ds_band_notes *b, const char **path)
{
	if (b->rc || b->least == b->n)
		return NULL;
	const struct band_cursor *c = &b->c[b->least];
	memcpy(b->path, c->buf + c->pos + sizeof(b->e), b->e.path);
	b->path[b->e.path] = '\0';
	*path = b->path;
	return &b->e;
}

void ds_band_notes_next(struct ds_band_notes *b)
{
	if (b->least == b->n)
		return;
	struct band_cursor *c = &b->c[b->least];
	c->pos += sizeof(b->e) + b->e.path;
	pick(b);
}

int ds_band_notes_error(const struct ds_band_notes *b)
{
	return b->rc;
}

void ds_band_notes_close(struct ds_band_notes *b)
{
	if (!b)
		return;
	for (size_t k = 0; k < b->n; k++)
		free(b->c[k].buf);
	free(b->c);
	free(b);
}
