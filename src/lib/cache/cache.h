/* SPDX-License-Identifier: MIT */
/* cache.h: the hash cache's file format and run state, shared by reading and
 * looking up (cache.c) and saving with proofs (cache_save.c); the format is
 * described in cache.c. */
#ifndef DUPSCAN_CACHE_H
#define DUPSCAN_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "internal.h"
#include "cache/cache_run.h"

#define CACHE_MAGIC "DUPSCANH"
#define CACHE_VERSION 3u     /* 3: full hashes seeded with the partial (ds_hash_seed()) */
#define HEADER_SIZE 48u
#define ENTRY_SIZE 80u
#define V1_ENTRY_SIZE 64u
#define F_FULL 1u
#define F_PROVEN 2u
#define F_APART 4u      /* proven by a run that grouped without -1 or -p (struct ds_proof) */
#define F_ALONE 16u     /* proven alone in its bucket (a class of its own) */
#define F_ALL (F_FULL | F_PROVEN | F_APART | F_ALONE)
/* A log record of a comparison under way, not an entry (never in the file):
 * its file was equal to the others of its group (cls) up to byte full, when
 * the run starting at at was killed (ds_cache_prefix()). */
#define F_PREFIX 8u
#define LOG_NO_PATH UINT32_MAX /* an entry taken from the log: no path known */
/* "dupscnL3": seeds each log record's check; a log of version 2 (seeded
 * "dupscanL", its full hashes of the whole file) fails every check */
#define LOG_SEED 0x334c6e6373707564ull

struct cache_header {
	char magic[8];
	uint32_t version, entry_size;
	uint64_t count, strings, checksum;
	uint64_t folded_log;   /* ds_cache_log_tag() of the log folded in, or 0 (written 0 before 0.10) */
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

/* The log at log_path as it is now (its device, inode, size and times,
 * hashed; never 0), or 0 when there is none: a file saved with its log's tag
 * holds all that log held, so a log still so is not taken again (a kill
 * between the file's rename and the log's removal leaves it). */
uint64_t ds_cache_log_tag(const char *log_path);

/* A record of the log (cache_log.c): an entry and its check. */
struct log_record {
	struct cache_entry e;
	uint64_t check;        /* XXH64 of e, seeded with LOG_SEED */
};
_Static_assert(sizeof(struct log_record) == ENTRY_SIZE + 8, "log record layout");

/* A cache file as read: its counts, checked; its entries stay in the file,
 * read as they are needed (ds_entries), never held whole. */
struct cache_file {
	size_t n;             /* entries */
	size_t nstrings;      /* bytes of paths */
	struct stat st;       /* the file as read: is it still the one on disk? */
	uint64_t strings_at;  /* where the string table starts in the file */
	uint32_t esize;       /* bytes an entry in the file (ENTRY_SIZE, or V1_ENTRY_SIZE) */
	uint32_t version;     /* the file's: 1 and 2 give no full hash and no proof past a block */
	uint64_t folded_log;  /* the log its saving run folded into it, as it was (ds_cache_log_tag()) */
	/* the key of every DS_ENTRIES_CHUNK-th entry, noted as the file was
	 * checked (NULL: not noted): a join of a few records reads only the
	 * chunks that may hold them (a spilled scan joins each band) */
	struct cache_mark { uint64_t dev, ino; } *marks;
	size_t nmarks;
};
/* Version 1's entries, n of them read raw into the front of e, widened in place. */
void ds_cache_upgrade_v1(struct cache_entry *e, size_t n);
/* Entries of versions 1 and 2: their full hashes are of the whole file, not
 * this version's, so a file larger than a block keeps only its partial hash
 * (its proof goes too: a proven entry carries a full hash). */
void ds_cache_upgrade_v2(struct cache_entry *e, size_t n);

/* The entries of a cache file's descriptor in their order, a chunk at a
 * time (version 1's widened; with x, the raw bytes hashed into it as read). */
#define DS_ENTRIES_CHUNK 512
struct ds_entries {
	int fd;
	const struct cache_file *f;
	struct ds_hashes *x;
	uint64_t index;              /* the entry at hand; the caller steps it on */
	struct cache_entry buf[DS_ENTRIES_CHUNK];
	uint64_t b0;                 /* buf holds entries b0 .. b0 + bn */
	size_t bn;
	int rc;                      /* a failed read: the end */
};
void ds_entries_open(struct ds_entries *es, int fd, const struct cache_file *f, struct ds_hashes *x);
/* The entry at hand, or NULL past the last one or after a failed read. */
const struct cache_entry *ds_entries_peek(struct ds_entries *es);
/* On to the chunk that holds key (dev, ino) if it is one past the entry at
 * hand (by the file's marks; without them, nowhere). */
void ds_entries_seek(struct ds_entries *es, uint64_t dev, uint64_t ino);

/* What a run keeps of a cache entry that matches one of its files as walked
 * (key, size, mtime and ctime): 40 bytes, not the entry's 80. */
struct cache_hit {
	uint64_t partial, full, cls;
	int64_t at_ns;
	uint32_t flags;
};

/* The cache during one run: what it held when the run began, and the hashes
 * this run worked out, merged into it when the run ends. */
struct ds_cache {
	struct cache_file *loaded;   /* NULL when there was no valid file */
	uint64_t salt;               /* makes this run's new class numbers its own */
	struct cache_entry *log;     /* a killed run's log records, sorted, until ds_cache_join() */
	size_t nlog;
	struct cache_entry *prefix;  /* its F_PREFIX records, sorted (the last of an inode counts) */
	size_t nprefix;
	uint32_t *pre_at;            /* by record: its prefix record, or DS_NONE; NULL without any */
	uint32_t *at;                /* by record: its hit, or DS_NONE; NULL until ds_cache_join() */
	uint32_t nat;
	struct cache_hit *hits;
	size_t nhits, caphits;
	struct ds_hashed *noted;
	size_t nnoted, capnoted;
	struct ds_proved *proved;    /* this run's proofs (sorted by record at saving) */
	size_t nproved, capproved;
	struct proof *proofs;        /* at saving: by note, the proof it is saved with */
	/* a spilled scan's bands: their notes written out as entries with their
	 * paths (cache_bands.c), a run sorted by inode a band, in an unnamed file */
	int bands_fd;                /* meaningful once nbands > 0 */
	struct band_run { uint64_t off, end; } *bands;
	size_t nbands, capbands;
	uint64_t bands_end;
	/* a killed run's log on disk, under a budget (cache_logruns.c): runs
	 * sorted by inode in an unnamed file */
	int logruns_fd;              /* -1: none (a log taken is whole in log and prefix) */
	struct log_run { uint64_t off, end; } *logruns;
	size_t nlogruns, caplogruns;
	uint64_t logruns_end;
};

/* What a note is saved with: its class number (0: none) and time. */
struct proof {
	uint64_t cls;
	int64_t at;
	bool apart, alone;
};

void ds_cachefile_free(struct cache_file *c);
/* Is st the file f was read from, unchanged (device, inode, size, mtime, ctime)? */
bool ds_cachefile_is(const struct cache_file *f, const struct stat *st);
/* Cache trouble is told through the error callback but is not a scan error. */
void ds_cache_report(struct ds_cache_state *s, const char *path, int code);
/* Entries' order: by (device, inode). */
static inline int ds_cache_cmp_key(const struct cache_entry *a, uint64_t dev, uint64_t ino)
{
	if (a->dev != dev)
		return a->dev < dev ? -1 : 1;
	return a->ino < ino ? -1 : a->ino > ino;
}
int ds_cache_cmp_entry(void *ctx, const void *pa, const void *pb);
/* Is the open file fd another file than a cache: not a regular file, or
 * one whose first bytes (however few) are not a cache's? Such a file is
 * never replaced nor removed (DUPSCAN_E_NOT_CACHE); a cache cut short is
 * damaged, and replaced. */
bool ds_cache_foreign_fd(int fd);
/* Read exactly len bytes. @return 0, -errno, or DUPSCAN_E_CACHE at the end of the file. */
int ds_cache_read_all(int fd, void *buf, size_t len);
/* Check a cache file (read through once: checksum, order, paths in the
 * table) and keep its counts. @return 0 with *out (NULL when there is no
 * file), DUPSCAN_E_CACHE when it is not a valid cache, -errno, -ENOMEM. */
int ds_cache_read(const char *path, struct cache_file **out);
/* The hit of r's inode (joined), or NULL. */
const struct cache_hit *ds_cache_entry_of(const struct ds_cache_state *s, uint32_t i);

/* ---- this run's notes as entries (cache_notes.c; for cache_save.c, cache_bands.c) ---- */
/* The notes sorted by inode, and the proof of each inode's first note
 * decided (run->proofs). @return 0 or -ENOMEM. */
int ds_cache_order_notes(struct ds_cache_state *s, struct ds_cache *run);
/* The entry of sorted note i, with its proof. */
void ds_cache_note_entry(const struct ds_cache_state *s, const struct ds_cache *run, size_t i, struct cache_entry *e);
/* Record rec's absolute path (relative ones after cwd) into buf of size
 * bytes. @return false when it does not fit (such a file is not cached). */
bool ds_cache_note_path(const struct ds_cache_state *s, uint32_t rec, const char *cwd, char *buf, size_t size);
#define DS_CACHE_PATH_MOST (PATH_MAX * 2)

/* The bands' entries merged in key order (cache_bands.c), read as the save
 * goes: each inode once, with its path ("" when it was too long to keep). */
struct ds_band_notes;
/* Did writing a band's notes fail (told)? Then nothing is saved. */
bool ds_cache_bands_failed(const struct ds_cache *run);
/* @return 0 with *out, or -ENOMEM. */
int ds_band_notes_open(const struct ds_cache *run, struct ds_band_notes **out);
/* The least entry left and its path, or NULL at the end or after a failed
 * read (ds_band_notes_error()). */
const struct cache_entry *ds_band_notes_peek(struct ds_band_notes *b, const char **path);
void ds_band_notes_next(struct ds_band_notes *b);
int ds_band_notes_error(const struct ds_band_notes *b);
void ds_band_notes_close(struct ds_band_notes *b);

/* ---- a killed run's log on disk (cache_logruns.c) ---- */
/* A log record's check: XXH64 of its entry, seeded with LOG_SEED. */
static inline uint64_t ds_log_record_check(const struct cache_entry *e)
{
	return XXH64(e, sizeof(*e), LOG_SEED);
}
/* Is log record r whole and this version's (its check, no path, known flags)? */
static inline bool ds_log_record_valid(const struct log_record *r)
{
	return r->check == ds_log_record_check(&r->e) && r->e.path == LOG_NO_PATH && (r->e.flags & ~(F_ALL | F_PREFIX)) == 0;
}
/* The log read from fd, chunk records at a time, each chunk sorted, cut to
 * what counts of each inode and written as a run of a file in the spill's
 * folder (the run's logruns). @return 0 with *taken (records taken), or a
 * negative code (then no run is kept). */
int ds_log_runs_take(struct ds_cache_state *s, int fd, size_t chunk, size_t *taken);
/* What the log says of order[0..n) (in the cache's order), into the run's
 * log and prefix arrays, as a log taken whole would. @return 0 or a negative code. */
int ds_log_runs_gather(struct ds_cache_state *s, const uint32_t *order, uint32_t n);
/* Does the run hold a log on disk? */
static inline bool ds_log_on_disk(const struct ds_cache *c)
{
	return c->logruns_fd >= 0;
}

/* ---- cache_join.c ---- */
/* Are r's cache entries keyed by its content (its device keeps inode numbers)? */
bool ds_cache_keyed(const struct ds_cache_state *s, const struct ds_rec *r);

/* FILE.log: what a run appends as it goes (cache_log.c). Owned string. */
char *ds_cache_log_path(const char *cache);

#endif /* DUPSCAN_CACHE_H */
