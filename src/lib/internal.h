/* SPDX-License-Identifier: MIT */
/* internal.h: types shared by libdupscan's modules; never installed. */
#ifndef DUPSCAN_INTERNAL_H
#define DUPSCAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "dupscan.h"
#include "dupscan_config.h"

#define DS_NONE UINT32_MAX
#define DS_MIN_THREADS 8                  /* default threads, at least; see scan.c */
#define DS_BLOCK 4096u                    /* first block: the partial hash covers this */
#define DS_DEFAULT_CHUNK (128u * 1024u)   /* read size; see README "Performance" */
#define DS_MIN_CHUNK 4096u
#define DS_MAX_CHUNK (16u * 1024u * 1024u)
#define DS_BLOCK_BUDGET (32u * 1024u * 1024u) /* first blocks kept in memory per size group */
#define DS_LOCKSTEP_MAX 256u              /* files open at once per thread, at most */
#define DS_LOCKSTEP_BUDGET (16u * 1024u * 1024u) /* read buffers of one lockstep comparison */
#define DS_HDD_TURN (8u * 1024u * 1024u)          /* per file and turn, side by side on a spinning disk */
#define DS_RACY_NS (2 * 1000000000LL)    /* timestamps closer than this to a proof's time void it */
#define DS_HDD_LOCKSTEP_BUDGET (64u * 1024u * 1024u) /* the same budget for its one stream */
#define DS_SPREAD_DISKS 8u /* disks a lockstep comparison reads at once, at most */
#define DS_MEMORY_STAT_NS 10000 /* see walk.c, one_stream() */

/* Nanoseconds since the epoch, as records keep times. */
static inline int64_t ds_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Now on the monotonic clock, in nanoseconds: for measuring, never stored. */
static inline int64_t ds_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ds_ns(t);
}

/* Make room for need elements of elem bytes in *arr (capacity *cap, in
 * elements): at least doubled, so appends cost amortised O(1).
 * @return 0 or -ENOMEM (*arr unchanged). */
int ds_grow(void **arr, size_t *cap, size_t need, size_t elem);
#define DS_GROW(arr, cap, need) \
	((need) <= (cap) ? 0 : ds_grow((void **)&(arr), &(cap), (need), sizeof(*(arr))))

/* ---- arena.c: bump allocator for strings; nothing moves once allocated ---- */
struct ds_arena_chunk;
struct ds_arena {
	struct ds_arena_chunk *head;
	size_t used, cap;
	size_t total; /* bytes handed out, for memory accounting */
};
void ds_arena_init(struct ds_arena *a);
void ds_arena_free(struct ds_arena *a);
void *ds_arena_alloc(struct ds_arena *a, size_t len);
char *ds_arena_strdup(struct ds_arena *a, const char *s, size_t len);
#define DS_BIG_MAP (128u * 1024u) /* ds_big_alloc() maps from this size on */
/* Read buffers and first-block arrays: from 128 KiB on straight from mmap, so
 * they go back to the system when freed (glibc raises its mmap threshold after
 * a large free and then keeps such buffers resident). NULL on ENOMEM. */
void *ds_big_alloc(size_t len);
/* The same for a buffer about to be written whole: from 128 KiB on its pages
 * are mapped at once (MAP_POPULATE), not faulted in one at a time. Not for
 * a read whose disk waits on it: the pages are cleared before the read is
 * asked (the sweep's kept contents on two simulated disks took 2% longer). */
void *ds_big_alloc_filled(size_t len);
void ds_big_free(void *p, size_t len);
/* chunks.c: read chunks kept between comparisons (s->reading.chunks, while
 * matching runs). ds_chunk_take() is ds_big_alloc_filled() when cs is NULL,
 * len is under DS_BIG_MAP (malloc reuses those already) or none of len bytes
 * is kept; ds_chunk_give() takes back what it lent (len: as taken), and
 * frees it in the same cases or when full. */
struct ds_chunks;
struct ds_chunks *ds_chunks_new(void);
void ds_chunks_free(struct ds_chunks *cs);
void *ds_chunk_take(struct ds_chunks *cs, size_t len);
void ds_chunk_give(struct ds_chunks *cs, void *p, size_t len);
/* Keep the first keep bytes of p, a ds_big_alloc() of *len bytes, giving the
 * rest back where it can. @return p or where it moved; *len is then what
 * ds_big_free() must be given. */
void *ds_big_shrink(void *p, size_t *len, size_t keep);

/* ---- records ---- */
enum ds_rec_flag {
	DS_F_DROPPED = 1u << 0, /* unreadable or changed: out of the match */
	DS_F_SKIPPED = 1u << 1, /* not examined (zero length without -z) */
	DS_F_ALIAS = 1u << 2,   /* the same path reached a second time */
	DS_F_PROTECTED = 1u << 3, /* under a protected path: never acted on */
	DS_F_SETTLED = 1u << 4, /* its group was matched to the end: unique if in no class */
	DS_F_TRUSTED = 1u << 5, /* in its class by a proof from the cache or by a report, not
	                         * compared this run: actions compare it first */
	DS_F_LINKED = 1u << 6,  /* another record of its inode stands for it (ds_rec_rep()) */
	DS_F_ACROSS = 1u << 7   /* unique here, in a set with files of another host (remote.c) */
};

/* One per path reached: 32 bytes, fixed-size, the most numerous thing a scan
 * keeps. The name is a handle into the scan's table of file names; the
 * directory, which holds the rest of the path and the argument it was
 * reached from, is found by the record's index (ds_rec_dir(): a directory's
 * records are added together, so one entry a directory says whose they
 * are); the device with the mode, owner and group, and the high halves of
 * the size and the inode number, are one index into a table of the kinds
 * the scan met (records.c: ds_rec_size(), ds_rec_ino(), ds_rec_dev(),
 * ds_rec_mode(), ...): a file of 4 GiB or more, or an inode number past
 * 2^32, is rare, and the few values their high halves take are shared like
 * owners. Hashes live only in the index, for the few files that get that
 * far. The kind and the flags share a word: a record is written by one
 * thread at a time (its group's). Which record stands for an inode of
 * several names is kept apart too (ds_rec_rep()): hard links are few. */
struct ds_rec {
	int64_t mtime_ns, ctime_ns;
	uint32_t size_lo, ino_lo; /* the low halves; all of them: ds_rec_size(), ds_rec_ino() */
	uint32_t name;           /* handle into scan->tree.fnames (ds_rec_name()) */
	uint32_t kind : 24;      /* index into scan->tree.kinds (ds_rec_identity()) */
	uint32_t flags : 8;      /* enum ds_rec_flag */
};
#define DS_KINDS_MAX (1u << 24)
_Static_assert(sizeof(struct ds_rec) == 32, "a record is 32 bytes");

/* File names by a 32-bit handle: 256 KiB chunks, the chunk in the high 14
 * bits, the offset in the low 18 (a little under 4 GiB of names). */
#define DS_NAME_SHIFT 18
#define DS_NAME_EMPTY UINT32_MAX /* "" (a directory's own entry in a set) */
struct ds_names {
	char **chunk;
	size_t cap;
	uint32_t n;
	uint32_t used;               /* bytes taken in the last chunk */
};
/* Keep name[0..len) with its NUL. @return 0, -ENOMEM or -EOVERFLOW (full). */
int ds_names_add(struct ds_names *t, const char *name, size_t len, uint32_t *out);
void ds_names_free(struct ds_names *t);
static inline const char *ds_names_get(const struct ds_names *t, uint32_t h)
{
	return h == DS_NAME_EMPTY ? "" : t->chunk[h >> DS_NAME_SHIFT] + (h & ((1u << DS_NAME_SHIFT) - 1));
}

/* Records live in fixed blocks: no realloc copy, no doubling slack. */
#define DS_REC_SHIFT 12
#define DS_REC_BLOCK (1u << DS_REC_SHIFT)

struct ds_dir {
	const char *name;   /* component, or the whole prefix for a root */
	uint32_t parent;    /* DS_NONE for a root */
	uint32_t arg;
	bool prot;          /* under a protected path */
	bool incomplete;    /* an entry could not be listed or compared: never a duplicate directory */
	bool pseudo;        /* holds a file given as an argument: not a directory of the walk */
	uint64_t dev, ino;
};

struct ds_arg {
	const char *path;
	bool recurse;
	bool remote;        /* scanned on another host (remote.c): never walked here */
};

/* A file as the caller sees it: 32 bytes, one per member of a set. Its
 * inode's record and the actions' inotify instance are its scan's
 * (ds_file_inode(), scan->act_watch). */
struct dupscan_file {
	const char *path;
	const struct ds_rec *rec;
	const struct dupscan_scan *scan; /* the tables rec's indexes point into */
	uint32_t rel;       /* path + rel: the path below its argument */
	uint32_t idx;       /* rec's index; or DS_OUTSIDE | its directory, for a record
	                     * in no table: a directory of a set, a file the filter is asked about */
};
#define DS_OUTSIDE (1u << 31) /* records number fewer */

struct dupscan_set {
	struct dupscan_file *files;
	size_t count;
	bool dirs;          /* a set of directories */
	bool cached;        /* some member is in it by a proof from the cache */
	bool report;        /* given by dupscan_report_file(), not matched */
	int64_t proven_ns;  /* with cached: the oldest such proof's time */
};

/* ---- index.c: binary tree keyed on (partial, full, size) ---- */
struct ds_node {
	uint64_t partial, full, size;
	uint32_t left, right;
	uint32_t head, tail; /* members with this key (index->mem), chained through next */
};
/* A record in the index: its class and the next member of its node. Only
 * records in a class are members (most files are in none), so the index
 * costs a bit a record and 16 bytes a member, not 8 bytes a record. */
struct ds_ixmember {
	uint32_t rec, cls, next;
};
struct ds_index {
	struct ds_node *nodes;
	uint32_t count, cap;
	uint32_t root;
	struct ds_ixmember *mem;     /* in the order inserted */
	uint32_t nmem;
	size_t capmem;
	uint64_t *has;               /* a bit a record: a member */
	uint32_t *byrec;             /* member numbers in record order (ds_index_seal()), or NULL */
	uint32_t nrecs;
};
void ds_index_init(struct ds_index *ix);
/* Make room for records 0..nrecs-1. @return 0 or -ENOMEM. */
int ds_index_reserve(struct ds_index *ix, uint32_t nrecs);
void ds_index_free(struct ds_index *ix);
/* Insert record ri, a member of class cls (a record naming it), under a key.
 * A record joins one class, once. @return 0, -ENOMEM or -EINVAL. */
int ds_index_insert(struct ds_index *ix, uint32_t ri, uint32_t cls, uint64_t partial, uint64_t full, uint64_t size);
/* Is record ri a member? */
bool ds_index_has(const struct ds_index *ix, uint32_t ri);
/* Inserting is over: members by record, for ds_index_class(). @return 0 or -ENOMEM. */
int ds_index_seal(struct ds_index *ix);
/* The class record ri was inserted with, or DS_NONE (a search through the
 * members until ds_index_seal(), a binary search after). */
uint32_t ds_index_class(const struct ds_index *ix, uint32_t ri);
/* Node holding this key, or DS_NONE. */
uint32_t ds_index_find(const struct ds_index *ix, uint64_t partial, uint64_t full, uint64_t size);
/* Visit nodes in key order; the callback returns nonzero to stop. @return that value. */
int ds_index_walk(const struct ds_index *ix, int (*fn)(void *, const struct ds_node *), void *user);

/* ---- hash.c: the only user of xxhash.h ---- */
struct ds_hashes; /* an array of XXH64 streaming states */
struct ds_hashes *ds_hashes_new(size_t n);
void ds_hashes_free(struct ds_hashes *h);
void ds_hash_update(struct ds_hashes *h, size_t i, const void *buf, size_t len);
/* State to takes state from's (the same bytes hashed). */
void ds_hash_copy(struct ds_hashes *h, size_t to, size_t from);
/* State i as it stands after the first block of a file whose first block
 * hashes to partial: a full hash is XXH64 of the bytes past the first block
 * seeded with that hash (the file's partial hash when it has no more). */
void ds_hash_seed(struct ds_hashes *h, size_t i, uint64_t partial);
uint64_t ds_hash_digest(const struct ds_hashes *h, size_t i);
uint64_t ds_hash_oneshot(const void *buf, size_t len);
/* The full hash of the whole content buf[0..len) (as a scan takes it). */
uint64_t ds_hash_full_of(const void *buf, size_t len);
/* The first block's hash of the size bytes open at fd, and with whole the
 * full hash (ds_hash_full_of()'s), read through buf (cap bytes, at least
 * DS_BLOCK); tick(user), when given, after each read past the first block
 * (a long read's sign of life). @return 0, -ENOMEM, -errno or DUPSCAN_E_SHORT. */
int ds_hash_fd(int fd, uint64_t size, bool whole, uint64_t *partial, uint64_t *full, unsigned char *buf, size_t cap,
	       void (*tick)(void *), void *user);

/* ---- the scan ---- */
/* What the caller asked for (dupscan_set_option()); fixed once the run begins. */
struct ds_options {
	bool zero_match, hard_links, follow_symlinks, no_hidden, one_fs, isolate,
	     permissions, quick, partial_only, param_order, reverse, dir_sets;
	bool cache_trust;            /* DUPSCAN_OPT_CACHE_TRUST: proofs stand in for comparisons */
	int order;
	size_t chunk;
	bool chunk_given;            /* -C: the caller's read size, on any storage */
	int threads;                 /* hashing threads; 1 = all in the caller's thread */
	bool threads_given;          /* DUPSCAN_OPT_THREADS set: also the count in flight of NET mode */
	int io;                      /* DUPSCAN_IO_* as asked */
	int64_t max_depth;           /* DUPSCAN_OPT_MAX_DEPTH: -1, none */
	size_t sweep_budget;         /* contents the sweep may keep in memory */
};

/* The caller's callbacks and their user pointers. */
struct ds_callbacks {
	dupscan_error_fn on_error;
	void *error_user;
	dupscan_progress_fn on_progress;
	void *progress_user;
	dupscan_progress_bytes_fn on_bytes;
	void *bytes_user;
	dupscan_filter_fn filter;
	void *filter_user;
	dupscan_stage_fn on_stage;
	void *stage_user;
	dupscan_dir_filter_fn dir_filter;
	void *dir_filter_user;
};

/* The hash cache during a run (cache.c, cache_save.c, cache_log.c). */
struct cache_log;
struct ds_cache_state {
	char *path;                  /* the file, or NULL: no cache */
	struct ds_cache *run;        /* what was loaded and what this run noted, or NULL */
	int64_t start_ns;            /* when dupscan_run() began (CLOCK_REALTIME): the time of its proofs */
	int64_t racy_ns;             /* a proof holds for files older than its time by more than this */
	int64_t oldest_proof;        /* the oldest proof time a set uses (0: none), for directory sets */
	struct cache_log *log;       /* what the run appends as it goes (cache_log.c), or NULL */
};

/* How and with what the run reads (storage.c, readorder.c, sweep.c, pool.c). */
struct ds_reading {
	int io_mode;                 /* DUPSCAN_IO_HDD, _SSD or _NET as chosen; _AUTO until then */
	struct ds_netio *net;        /* requests in flight (netio.c): NET mode only, else NULL */
	const char *sysfs, *mountinfo; /* where storage is looked up (tests point elsewhere) */
	struct ds_devkind {            /* what storage.c found of each device met */
		uint64_t dev;
		bool one;                  /* ds_one_stream() */
		bool net;                  /* a network filesystem */
		uint64_t disk;             /* ds_disk() */
		bool inos;                 /* ds_inodes_trusted() */
		bool fuse;                 /* FUSE of no known kind, not probed yet (ds_probe_net()) */
	} *devkinds;
	size_t ndevkinds, capdevkinds;
	struct ds_first_pass *first_pass; /* first blocks read in disk order (HDD), or NULL */
	struct ds_sweep *sweep;      /* buckets settled in disk order (HDD), or NULL */
	unsigned sweeps;             /* what the last sweep took: passes over the disk, */
	size_t sweep_peak;           /* and most bytes kept at once */
	size_t max_open;             /* files one thread may hold open: fits RLIMIT_NOFILE */
	uint32_t dirs_ahead;         /* directories the walk handed to helpers (tests look) */
	int64_t net_probe_ns;        /* a FUSE filesystem whose directory takes this long to list
	                              * is a network one: DS_NET_PROBE_NS (tests set it) */
	int64_t memory_stat_ns;      /* a stat taking at most this found its metadata in
	                              * memory: DS_MEMORY_STAT_NS (tests under load raise it) */
	/* the run's threads: started once by dupscan_run(), each phase on them */
	struct ds_pool *pool;
	struct ds_chunks *chunks;    /* matching's read chunks, kept between comparisons */
};

/* Values many records share, each kept once and named by an index (records.c):
 * key pairs by index, found by open addressing. */
struct ds_intern {
	uint64_t *key;               /* k0, k1 of index i at 2i, 2i + 1 */
	uint32_t n;                  /* indexes handed out */
	size_t cap;                  /* room in key, in uint64_t */
	uint32_t *slot;              /* index + 1, 0: empty */
	uint32_t nslot;              /* a power of two, at least twice n */
	uint32_t limit;              /* most indexes the records' field holds */
	uint32_t last;               /* the index found last: a run of one value costs no hash */
};
/* The index of (k0, k1), added when new. @return 0, -ENOMEM or -EOVERFLOW
 * (limit values already). */
int ds_intern(struct ds_intern *t, uint64_t k0, uint64_t k1, uint32_t *out);
void ds_intern_free(struct ds_intern *t);

/* What the walk found (walk.c, records.c): arguments, directories, files. */
struct ds_tree {
	struct ds_arg *args;
	uint32_t nargs, cap_args;
	struct ds_dir *dirs;
	uint32_t ndirs, cap_dirs;
	struct ds_rec **rec_blocks;
	uint32_t nrecs, nblocks;
	/* records standing for another's inode (DS_F_LINKED), by record:
	 * rec, its representative (ds_collapse_links()) */
	uint32_t *links;
	uint32_t nlinks;
	/* records' directories: records first.. (up to the next entry's first)
	 * are dir's (ds_rec_dir()) */
	struct ds_run { uint32_t first, dir; } *runs;
	uint32_t nruns;
	size_t cap_runs;
	struct ds_arena names;       /* directory names */
	struct ds_names fnames;      /* file names (records' handles) */
	struct ds_intern devs;       /* st_dev of records: k0 (at most 65,536) */
	struct ds_intern attrs;      /* st_mode of records: k1; owner << 32 | group: k0 */
	struct ds_intern kinds;      /* records' (device index, attributes index): k0, k1 */
	/* visited directories, open addressing on (dev, ino) */
	uint64_t *seen;              /* pairs: dev, ino+1 (0 = empty) */
	size_t seen_cap, seen_count;
	uint64_t *protect;           /* pairs: dev, ino of protected paths */
	size_t nprotect;
};

/* The run's progress in its phase (progress.c): set by the run's thread,
 * bytes read counted by every reading thread. */
struct ds_progress {
	atomic_int phase;
	_Atomic uint64_t files_done, files_total;
	_Atomic uint64_t left;       /* bytes the phase may still read, at most */
	_Atomic uint64_t read;       /* bytes read by the run */
	_Atomic uint64_t base;       /* read when the phase began */
	_Atomic uint64_t found;      /* bytes of the files the walk found */
	atomic_bool busy;            /* a report is being made */
};
/* Report the progress to the bytes callback, unless another thread is. */
void ds_progress_report(dupscan_scan *s);
/* A phase begins: files it examines, bytes it may read at most. */
void ds_progress_phase(dupscan_scan *s, int phase, uint64_t files, uint64_t bytes);
/* files settled, and bytes the phase no longer has to read for them. */
void ds_progress_settled(dupscan_scan *s, uint64_t files, uint64_t bytes);
/* The phase ends: all settled, nothing left. */
void ds_progress_end(dupscan_scan *s);
/* The walk found a file of size bytes. */
void ds_progress_found(dupscan_scan *s, uint64_t size);
/* ds_pread_full(), the bytes counted for progress. */
int ds_read(dupscan_scan *s, int fd, void *buf, size_t len, uint64_t off);

struct dupscan_scan {
	struct ds_options opt;
	struct ds_callbacks cb;
	struct ds_progress progress;
	struct ds_cache_state cache;
	struct ds_reading reading;
	struct ds_tree tree;

	struct ds_report_file *report; /* dupscan_report_file(): sets given, not walked (report.c) */
	size_t nreport, capreport;
	bool from_report;           /* files were given by dupscan_report_file() */

	bool ran;
	atomic_int canceled;         /* set by dupscan_cancel(), maybe from a signal handler or a thread */
	uint64_t errors;

	struct ds_index index;

	/* results */
	struct ds_arena out;         /* result paths */
	struct dupscan_set *sets;
	size_t nsets;
	struct dupscan_file *uniques;
	size_t nuniques;
	bool uniques_built;

	struct ds_remote **remotes;  /* dupscan_add_remote() (remote.c) */
	size_t nremotes;
	int remote_timeout_ms;       /* DUPSCAN_OPT_REMOTE_TIMEOUT */
	bool remote_uniques;         /* the remote sides' unique files still to be fetched for the uniques */
	struct ds_remote *mirror_of; /* this scan holds that remote's files, or NULL */
	const dupscan_scan *owner;   /* and is that scan's (whose callbacks tell of them) */
	uint64_t *across;            /* classes joined across hosts: raw, class pairs, by raw
	                              * (ds_across_class()) */
	size_t nacross;

	/* actions: one inotify instance for all of them (closing one waits for
	 * a grace period, milliseconds each); -1 until the first action. Apart
	 * from the handle: actions set it through const file handles */
	int *act_watch;
};

static inline struct ds_rec *ds_rec(const dupscan_scan *s, uint32_t i)
{
	return &s->tree.rec_blocks[i >> DS_REC_SHIFT][i & (DS_REC_BLOCK - 1)];
}

static inline const char *ds_rec_name(const dupscan_scan *s, const struct ds_rec *r)
{
	return ds_names_get(&s->tree.fnames, r->name);
}
/* A kind is (more than one name << 63 | high half of the inode number << 16
 * | device index, high half of the size << 32 | attributes index):
 * ds_rec_identity(). */
/* The record's device as an index into s->tree.devs (at most 65,536). */
static inline uint16_t ds_rec_devi(const dupscan_scan *s, const struct ds_rec *r)
{
	return (uint16_t)s->tree.kinds.key[2 * (size_t)r->kind];
}
/* Its mode, owner and group as an index into s->tree.attrs. */
static inline uint32_t ds_rec_attr(const dupscan_scan *s, const struct ds_rec *r)
{
	return (uint32_t)s->tree.kinds.key[2 * (size_t)r->kind + 1];
}
static inline uint64_t ds_rec_size(const dupscan_scan *s, const struct ds_rec *r)
{
	return s->tree.kinds.key[2 * (size_t)r->kind + 1] >> 32 << 32 | r->size_lo;
}
static inline uint64_t ds_rec_ino(const dupscan_scan *s, const struct ds_rec *r)
{
	return s->tree.kinds.key[2 * (size_t)r->kind] >> 16 << 32 | r->ino_lo;
}
/* Had the file more than one name (link count) when it was looked at? */
static inline bool ds_rec_multilink(const dupscan_scan *s, const struct ds_rec *r)
{
	return s->tree.kinds.key[2 * (size_t)r->kind] >> 63;
}
static inline uint64_t ds_rec_dev(const dupscan_scan *s, const struct ds_rec *r)
{
	return s->tree.devs.key[2 * (size_t)ds_rec_devi(s, r)];
}
static inline uint32_t ds_rec_mode(const dupscan_scan *s, const struct ds_rec *r)
{
	return (uint32_t)s->tree.attrs.key[2 * (size_t)ds_rec_attr(s, r) + 1];
}
/* owner << 32 | group */
static inline uint64_t ds_rec_owner(const dupscan_scan *s, const struct ds_rec *r)
{
	return s->tree.attrs.key[2 * (size_t)ds_rec_attr(s, r)];
}
/* The record standing for record i's inode: the first of its names in the
 * chosen order (links.c), i itself when it is the inode's only name. */
uint32_t ds_rec_rep(const dupscan_scan *s, uint32_t i);
/* The directory record i is in (records.c). */
uint32_t ds_rec_dir(const dupscan_scan *s, uint32_t i);
/* The index of the added path record i was reached from. */
uint32_t ds_rec_arg(const dupscan_scan *s, uint32_t i);
/* A record's size and inode number from st, its device and attributes as
 * indexes (new values added to the tables) and with the high halves of the
 * size and inode number its kind. @return 0, -ENOMEM or -EOVERFLOW. */
int ds_rec_identity(dupscan_scan *s, struct ds_rec *r, const struct stat *st);

/* The handle of record r, reached by path p (rel: where its part below the
 * argument starts). */
static inline struct dupscan_file ds_file_of(const dupscan_scan *s, const char *p, uint32_t i, uint32_t rel)
{
	return (struct dupscan_file){ p, ds_rec(s, i), s, rel, i };
}

/* The record standing for f's inode (all its names share it): its ctime_ns
 * is the inode's ctime as last seen, by the scan or right after an action's
 * own change (links, renames and unlinks move it); NULL for directories and
 * for a file the filter is asked about. */
struct ds_rec *ds_file_inode(const struct dupscan_file *f);
/* The directory f is in (a directory of a set: the directory itself). */
uint32_t ds_file_dir(const struct dupscan_file *f);
/* The index of the added path f was reached from. */
uint32_t ds_file_arg(const struct dupscan_file *f);

/* ---- sysio.c: system calls made whole ---- */
/* Files each of so many threads may hold open: the process' limit of
 * descriptors shared, with room for the caller's, 8 to DS_LOCKSTEP_MAX. */
size_t ds_open_per_thread(int threads);
/* Files read side by side past their first block: so much per file in the
 * first round, four times more each round up to the last (a difference is
 * most often early; a long run of equal bytes is read in large requests). */
#define DS_FIRST_ROUND (64u * 1024u)
#define DS_LAST_ROUND (64u * 1024u * 1024u)
#define DS_COPY_BUF (1u << 20) /* bytes a copy or a comparison of whole files moves at once */
/* open(2) for a path of any length (longer than PATH_MAX: in pieces with openat). */
int ds_open_path(const char *path, int flags);
/* renameat2(2), also where the C library has no wrapper (musl): flags as
 * RENAME_NOREPLACE, RENAME_EXCHANGE. @return 0, or -1 with errno. */
int ds_renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags);
/* Write all len bytes (retrying short writes and EINTR). @return 0 or -errno. */
int ds_write_all(int fd, const void *buf, size_t len);
/* Read exactly len bytes at off. @return 0, -errno, or DUPSCAN_E_SHORT. */
int ds_pread_full(int fd, void *buf, size_t len, uint64_t off);
/* Is all of [off, off + len) of fd in the page cache (false where the
 * kernel cannot tell, before Linux 6.5)? Reads nothing. */
bool ds_all_cached(int fd, uint64_t off, uint64_t len);
/* Read up to len bytes at off, fewer only at the end of the file.
 * @return the bytes read or -errno. */
ssize_t ds_pread_some(int fd, void *buf, size_t len, uint64_t off);
/* Both descriptors from offset 0 to their ends, through ba and bb
 * (DS_COPY_BUF bytes each): equal bytes? @return 0, DUPSCAN_E_DIFFERS or -errno. */
int ds_compare_fds(int a, int b, unsigned char *ba, unsigned char *bb);
/* in's content into the new empty file out, synced and read back equal; then
 * st's mode, owner (when permitted) and times. @return 0 or a negative code. */
int ds_copy_into(int in, int out, const struct stat *st);
/* The regular file open at in (from its start) copied as above to the new
 * file to (removed again on failure). @return 0 or a negative code. */
int ds_copy_fd(int in, const char *to);
/* The directory part of path, malloc'ed; NULL on ENOMEM. */
char *ds_dir_part(const char *path);
/* fsync the directory holding path, so a name made there is durable (a
 * filesystem that cannot sync a directory counts as done). @return 0 or -errno. */
int ds_fsync_dir_of(const char *path);

/* ---- sort.c ---- */
/* Stable merge sort with a context argument (qsort has none), taking half
 * the array's size beside it. @return 0 or -ENOMEM. */
int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx);
/* Sort keys held inline: by k[0..3], then pos. Where pos is each element's
 * place before the sort, the order is that of a stable sort on k; sorting
 * records by fields they hold this way spares a lookup per comparison. */
struct ds_sortkey {
	uint64_t k[4];
	uint32_t pos;
};
void ds_sort_keys(struct ds_sortkey *a, size_t n);
/* A key and a position: sorted by key, then position, in place and without
 * a copy (quicksort, heapsort past a hostile depth); with distinct positions
 * the order is a stable sort's on key. */
struct ds_keypos {
	uint64_t key, pos;
};
void ds_sort_by_key(struct ds_keypos *a, size_t n);
/* order[0..n) (record indexes) sorted by key() and then by the 32 bits it
 * puts in *minor, ties by record index. The sort of every record a scan
 * holds, so its memory can be the run's peak: 16 bytes a record beside at
 * most DS_SORT_RUN of them at a time, sorted in place; past that, the sorted
 * runs are merged through 4 bytes a record, each key taken once more.
 * @return 0 or -ENOMEM (order is then some permutation of itself). */
typedef uint64_t (*ds_rec_key_fn)(const dupscan_scan *s, const struct ds_rec *r, uint32_t *minor);
#define DS_SORT_RUN ((size_t)1 << 18)
int ds_sort_recs(const dupscan_scan *s, uint32_t *order, size_t n, ds_rec_key_fn key);
/* The same with runs of run records (tests: the merge on a small scan). */
int ds_sort_recs_runs(const dupscan_scan *s, uint32_t *order, size_t n, ds_rec_key_fn key, size_t run);

/* error.c */
void ds_report(dupscan_scan *s, const char *path, int code);
/* Is code DUPSCAN_E_CHANGED or one of the DUPSCAN_E_CHANGED_* reasons? */
bool ds_is_change(int code);
/* An action refuses because f changed since the scan: why (a
 * DUPSCAN_E_CHANGED_* code) goes to the error callback with f's path.
 * @return DUPSCAN_E_CHANGED. */
int ds_refuse(const dupscan_file *f, int why);

/* ---- result.c: what matching one size group produced, kept until it is
 * committed in group order, so output never depends on the thread count ---- */
struct ds_insert {
	uint32_t rec, cls;      /* cls: the record naming its class */
	uint32_t pair;          /* its hashes, in the result's pairs */
};
/* Inserts in a row of one class and pair: a class's members come together,
 * so an insert costs its record (4 bytes) and a class 12 more, not 12 bytes
 * each (a class of a million copies). */
struct ds_ins_run {
	uint32_t first;         /* its first insert */
	uint32_t cls, pair;
};
struct ds_hash_pair {
	uint64_t partial, full;
};
/* What is known of a file's content before its bucket is settled: its hashes,
 * read this run or taken from the cache. */
struct ds_hashed {
	uint32_t rec;
	bool has_full;          /* full is the whole file's XXH64, not only its first block's */
	bool cached;            /* taken from the cache, not worked out in this run */
	uint64_t partial, full;
};
/* A proof the cache holds for a file: the class it was settled into by a run
 * (a file alone in its bucket has a class of its own), that run's start, and
 * whether that run grouped it with every file of its size and first block
 * (not with -1 or -p): files such a run settled into different classes differ. */
struct ds_proof {
	uint64_t cls;
	int64_t at;
	bool apart;
	bool full;              /* the entry holds the file's full hash */
	bool alone;             /* told apart from every other file of its bucket */
};
/* A proof a settled bucket gives one of its files anew (ds_note_proofs()),
 * kept for the save: at this run's start, in class cls; how: DS_PROVED_*.
 * (A proof it keeps as it was needs nothing: the save keeps those.) */
struct ds_proved {
	uint64_t cls;
	uint32_t rec;
	uint8_t how;
};
enum { DS_PROVED_APART = 1, DS_PROVED_ALONE = 2 };
_Static_assert(sizeof(struct ds_proved) == 16, "a proof kept for the save is 16 bytes");
struct ds_error {
	char *path;
	int code;
};
struct ds_stage_event {
	int stage;
	uint32_t first, count; /* in recs[] */
};
/* Records recs[0..n), held by the caller until the result is committed. */
struct ds_span {
	const uint32_t *recs;
	size_t n;
};
struct ds_result {
	uint32_t *ins;               /* inserted records (ds_result_ins()) */
	size_t nins, capins;
	struct ds_ins_run *runs;     /* each insert's class and pair */
	size_t nruns, capruns;
	struct ds_hash_pair *pairs;  /* the hashes of inserts, each pair once in a row */
	size_t npairs, cappairs;
	struct ds_hashed *notes;     /* hashes for the cache */
	size_t nnotes, capnotes;
	struct ds_proved *proved;    /* proofs for the cache */
	size_t nproved, capproved;
	struct ds_error *err;
	size_t nerr, caperr;
	struct ds_stage_event *stg;
	size_t nstg, capstg;
	uint32_t *recs;
	size_t nrecs, caprecs;
	struct ds_span *settled; /* the groups matched to the end */
	size_t nsettled, capsettled;
	uint64_t files;      /* files of the group, for progress */
	uint64_t bytes;      /* their bytes the matching phase may read (not those the sweep settles) */
	int rc;              /* -ENOMEM or DUPSCAN_E_CANCELED while matching */
};
/* Matching context: the scan, and where a group's effects go. */
struct ds_pool;
struct ds_ctx {
	dupscan_scan *s;
	struct ds_result *res;
	struct ds_pool *pool; /* the threads matching runs on, or NULL */
};
void ds_result_clear(struct ds_result *r);
/* The n records of a group matched to the end (recs, not copied: a group
 * of a million files would cost 4 MB here). @return 0 or -ENOMEM. */
int ds_result_settled(struct ds_result *r, const uint32_t *recs, size_t n);
/* Move src's reports to the end of dst's, keeping their order. @return 0 or -ENOMEM. */
int ds_result_take_errors(struct ds_result *dst, struct ds_result *src);
void ds_result_free(struct ds_result *r);
int ds_result_insert(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial, uint64_t full);
/* Insert i (< r->nins) whole. */
struct ds_insert ds_result_ins(const struct ds_result *r, size_t i);
int ds_result_stage(struct ds_ctx *c, int stage, const uint32_t *recs, size_t n);
/* Hashes worth caching (a no-op without a cache). @return 0 or -ENOMEM. */
int ds_result_note(struct ds_ctx *c, const struct ds_hashed *h);
/* Record rec's proof pf for the cache: logged now (partial, full: its hashes,
 * full when has_full), and kept for the save unless fresh is false (a proof
 * it had, kept as it was). @return 0 or -ENOMEM. */
int ds_result_prove(struct ds_ctx *c, uint32_t rec, const struct ds_proof *pf, bool fresh, uint64_t partial,
		    uint64_t full, bool has_full);
/* A file could not be read: drop it and keep the report for the commit. */
void ds_fail(struct ds_ctx *c, uint32_t i, int code);
void ds_fail_path(struct ds_ctx *c, struct ds_rec *r, const char *path, int code);
/* Apply a group's result: reports, stage callbacks, index inserts, progress.
 * @return 0 or -ENOMEM. */
int ds_result_commit(dupscan_scan *s, struct ds_result *r, uint64_t *done, uint64_t total);

/* walk.c */
int ds_walk(dupscan_scan *s);
/* Did stat calls taking ns in all, which started inblock block reads, find
 * their metadata in memory, each taking at most limit ns (reading's
 * memory_stat_ns)? (On a spinning disk the walk then lists on every thread.) */
bool ds_stats_in_memory(int64_t ns, long inblock, size_t calls, int64_t limit);

/* records.c: the tables the walk fills, and the one path builder.
 * Add a directory (parent DS_NONE for a root, whose name is a path prefix) or a
 * file record, as the walk does. @return 0, -ENOMEM, or -EOVERFLOW (a file on
 * a 65,537th device); a record the filter
 * refuses is not added (still 0). */
int ds_add_dir(dupscan_scan *s, const char *name, size_t nlen, uint32_t parent, uint32_t arg,
	       const struct stat *st, uint32_t *out);
int ds_add_rec(dupscan_scan *s, const char *name, size_t nlen, uint32_t dir,
	       const struct stat *st);
/* A scan's tables, empty; and all they hold given back. */
void ds_tree_init(struct ds_tree *t);
void ds_tree_free(struct ds_tree *t);
/* An added path (remote: scanned on another host, never walked here).
 * @return its index, or -ENOMEM. */
int ds_add_arg(struct ds_tree *t, const char *path, bool recurse, bool remote);
/* Where the part of a path below its argument starts, for paths built from dir. */
uint32_t ds_rel_offset(const dupscan_scan *s, uint32_t dir);
/* The path of dir/name: in buf when it fits cap, else malloc'ed (the caller
 * frees it when it is not buf; with cap 0, always malloc'ed); NULL on ENOMEM. */
char *ds_path_in(const dupscan_scan *s, uint32_t dir, const char *name, char *buf, size_t cap);
/* Write the path of record i into buf (NUL-terminated). @return its length,
 * or the length needed when cap is too small (then buf holds nothing useful). */
size_t ds_rec_path(const dupscan_scan *s, uint32_t i, char *buf, size_t cap);
/* Same, allocated in the result arena. @return NULL on ENOMEM. */
char *ds_rec_path_dup(dupscan_scan *s, uint32_t i);
/* Same, malloc'ed (free it). @return NULL on ENOMEM. */
char *ds_rec_path_alloc(const dupscan_scan *s, uint32_t i);
/* The one meaning of "unchanged": st is a regular file with r's device, inode,
 * size and mtime, and the ctime ctime_ns (the scan's, r->ctime_ns, or the one
 * an action's own change left). The ctime catches a rewrite in place whose
 * mtime was put back (cp -p, rsync --inplace -t), while reading as at acting. */
bool ds_same_file(const dupscan_scan *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* What differs first of type, identity, size, mtime and ctime: 0 or a
 * DUPSCAN_E_CHANGED_* code. */
int ds_file_change(const dupscan_scan *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* Directory d's path, malloc'ed; NULL on ENOMEM. */
char *ds_dir_path(const dupscan_scan *s, uint32_t d);
/* Note directory (dev, ino) as visited. @return 0 when new, 1 when seen
 * before, -ENOMEM. */
int ds_seen_add(dupscan_scan *s, uint64_t dev, uint64_t ino);
/* Is directory path, or one above it, under a protected path? */
bool ds_under_protected(const dupscan_scan *s, const char *path);

/* compare.c: reading files and comparing them byte by byte */
struct ds_member {
	uint32_t rec;
	int fd;
	uint32_t hidx;  /* its position in its group: where its first block is kept, and its place in the
	                 * first pass's arrays (hash states go by member: ds_lockstep()) */
	uint32_t cls : 31;   /* class label while partitioning: a member's index (fewer than DS_OUTSIDE) */
	uint32_t alive : 1;  /* with it, 16 bytes, not 20: a bucket of a million copies holds one each */
};
_Static_assert(sizeof(struct ds_member) == 16, "a member is 16 bytes");
/* Open record i for reading and check it is the file that was scanned.
 * @return an fd, or a negative code. */
int ds_open_scanned(const dupscan_scan *s, uint32_t i);
/* A directory held open while its files are opened one after another (a
 * lane of the first pass goes in walk or disk order: mostly a directory's
 * files together). Opened by name from it, a file costs the kernel one
 * component's lookup, not one for each of its path's. */
struct ds_dirfd {
	uint32_t dir; /* DS_NONE: none held */
	int fd;       /* -1: dir could not be opened (its files go by path) */
};
#define DS_DIRFD_INIT { DS_NONE, -1 }
/* ds_open_scanned(), through the directory dc holds (taking record i's). */
int ds_open_scanned_in(const dupscan_scan *s, uint32_t i, struct ds_dirfd *dc);
void ds_dirfd_close(struct ds_dirfd *dc);
/* ds_open_scanned(), a failure reported through c (but -ENOMEM, returned). */
int ds_open_rec(struct ds_ctx *c, uint32_t i);
/* Check an open file is still the one its record holds (ds_same_file()).
 * @return 0, -errno or DUPSCAN_E_CHANGED. */
int ds_check_unchanged(const dupscan_scan *s, int fd, const struct ds_rec *r);
/* Partition members (all of one size) into classes of identical content by
 * reading them in lockstep from offset start. When h is given, the bytes read
 * past the first block are fed to state i of h (seeded by the caller:
 * ds_hash_seed()). first_blocks (optional) holds each member's first min(size, DS_BLOCK) bytes
 * at m[i].hidx * block_len. On return each alive member's cls is a class label
 * (labels are member indexes); a member alone in its class is marked not
 * alive. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
/* With partial (their first-block hash), the members are the whole of their
 * bucket, and what the comparison knows goes to the cache's log every
 * DS_CHECKPOINT_BYTES read (a killed run's next goes on from there). */
int ds_lockstep(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		struct ds_hashes *h, const unsigned char *first_blocks, size_t block_len, const uint64_t *partial);
/* ds_lockstep() with the members' classes as given (m[i].cls the index of a
 * member of its class, m[i].alive set): equal before start. */
int ds_lockstep_on(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		   struct ds_hashes *h, const uint64_t *partial);
#define DS_CHECKPOINT_BYTES (32u << 20)

/* storage.c: what holds a device's files */
enum { DS_STORE_UNKNOWN = 0, DS_STORE_SSD, DS_STORE_HDD, DS_STORE_NETWORK, DS_STORE_MEMORY };
/* The kind of storage of device dev (a file's st_dev), looked up under sysfs
 * (normally "/sys") and in mountinfo (normally "/proc/self/mountinfo"). */
int ds_storage_kind(const char *sysfs, const char *mountinfo, uint64_t dev);
/* The one decision of how a device is read: as one stream in disk order
 * (--io=hdd, or in auto mode a spinning disk or a network filesystem), or in
 * parallel. Decided once per device and scan (looked up the first time). */
bool ds_one_stream(dupscan_scan *s, uint64_t dev);
/* The disk that serves device dev's reads (looked up under sysfs and in
 * mountinfo, as ds_storage_kind()): a partition's disk, for dm or md over one
 * device that one's, for a filesystem mounted from a block device that
 * device's; dev itself otherwise. Devices of one disk are read as one stream. */
uint64_t ds_disk_of(const char *sysfs, const char *mountinfo, uint64_t dev);
/* ds_disk_of() for the scan, looked up once per device. */
uint64_t ds_disk(dupscan_scan *s, uint64_t dev);
/* Does the filesystem of device dev keep one inode number a file (false:
 * FUSE, SMB with noserverino), by its mount in mountinfo? */
bool ds_inode_numbers_kept(const char *mountinfo, uint64_t dev);
/* May two paths with one inode number on device dev be called one file? Not
 * where the filesystem does not keep inode numbers, nor once the scan saw two
 * paths of one number, one of them the file's only name (ds_inodes_distrust():
 * the kernel's link count says they are two). Looked up once per device. */
bool ds_inodes_trusted(dupscan_scan *s, uint64_t dev);
void ds_inodes_distrust(dupscan_scan *s, uint64_t dev);
/* A FUSE filesystem of no known kind (device dev) is read as a network one
 * (NET mode) when listing dir, on it, takes s->reading.net_probe_ns or more. */
#define DS_NET_PROBE_NS 1000000
void ds_probe_net(dupscan_scan *s, uint64_t dev, const char *dir);
/* Choose s->reading.io_mode for files on devices devs[0..n) (for DUPSCAN_IO_AUTO: HDD
 * when any is read as one stream, else NET when any is a network filesystem; a
 * mode chosen before only moves to NET or HDD). @return 0 or -ENOMEM. */
int ds_choose_io(dupscan_scan *s, const uint64_t *devs, size_t n);

/* netio.c: requests in flight on a network filesystem (DUPSCAN_IO_NET) */
#define DS_NET_START 64   /* threads reading at first */
#define DS_NET_MOST 64    /* at most */
#define DS_NET_LEAST 4    /* at least, once judged */
#define DS_NET_WINDOW 32  /* requests judged together, at least */
#define DS_NET_BACKOFF 8  /* a window's mean this many times the least: fewer */
struct ds_netio;
struct ds_netio *ds_netio_new(int most);
void ds_netio_fix(struct ds_netio *n, int limit);
void ds_netio_free(struct ds_netio *n);
/* Threads let read now (1 for NULL); the most requests in flight at once. */
int ds_netio_limit(const struct ds_netio *n);
int ds_netio_peak(const struct ds_netio *n);
/* A new phase: what is judged against is learnt again. */
void ds_netio_phase(struct ds_netio *n);
/* A request begins (@return its start, 0 for NULL) and ends, having read
 * bytes (every window of requests, the limit judged again). */
int64_t ds_netio_begin(struct ds_netio *n);
void ds_netio_end(struct ds_netio *n, int64_t start, size_t bytes);
/* The scan's: NET mode's count set up (@return 0 or -ENOMEM); the threads
 * a phase may run in the mode chosen (opt.threads, or the most NET runs);
 * NET's count in flight now, for ds_pool_cap() (NULL in other modes); each
 * request's begin and end (nothing outside NET mode). */
int ds_net_start(dupscan_scan *s);
int ds_readers(const dupscan_scan *s);
const _Atomic int *ds_net_cap(const dupscan_scan *s);
int64_t ds_net_begin(const dupscan_scan *s);
void ds_net_end(const dupscan_scan *s, int64_t start, size_t bytes);

/* readorder.c: on a spinning disk, every candidate's first block read before
 * matching, in the order the disk holds the files */
/* The physical offset of fd's first extent (FIEMAP). @return false when
 * there is none to tell (no FIEMAP here, an empty or inline file). */
bool ds_first_extent(int fd, uint64_t *physical);
/* A group whose first blocks the first pass keeps: position first's at
 * base in blocks, the next blen bytes on. */
struct ds_fp_kept {
	uint32_t first, n, blen;
	size_t base;
};
struct ds_first_pass {
	const uint32_t *order;     /* the candidates as ds_match grouped them */
	size_t n;
	/* One entry a candidate, 16 bytes: the pass's largest array is also its
	 * result. While placing, by position, each one's place on its disk (or,
	 * read from the page cache, its head); then in the order read, rank
	 * first (the first nent). A read entry's key is the partial hash
	 * (failed: the negative errno), its pos's low half its position. Once
	 * by_pos (ds_first_pass_by_pos()), only the keys are left, by position,
	 * in key. */
	struct ds_keypos *ent;
	size_t nent;
	uint64_t *key;
	size_t entbytes;           /* what ds_big_free() takes for ent */
	uint32_t *rank;            /* by position: its entry (its place in the disk order read in),
	                            * DS_NONE when in no group read; only for the sweep (with
	                            * head), until by_pos. Neither: the ds_fp_ accessors wait */
	unsigned char *state;      /* by position: enum ds_fp_state bits */
	uint64_t *head;            /* by position: XXH64 of the bytes past the first block up to
	                            * DS_HDD_HEAD (for the sweep), or NULL */
	bool big;                  /* some group's files are larger than a block */
	bool by_pos;
	/* first blocks kept for whole groups (a group with one block not kept
	 * reads them all again), each as long as it is (min(size, DS_BLOCK): a
	 * small file takes its own bytes, not a block's), up to a budget */
	struct ds_fp_kept *kept;   /* by first position */
	size_t nkept;
	unsigned char *blocks;
	size_t capbytes;
};
enum ds_fp_state {
	DS_FP_GOT = 1,             /* read: its partial hash known */
	DS_FP_FAILED = 2,          /* could not be read: reported at its group's turn */
	DS_FP_DIRECT = 4,          /* left to the sweep, not read by the pass (the sweep sets GOT) */
};
static inline uint64_t ds_fp_key(const struct ds_first_pass *fp, size_t p)
{
	return fp->by_pos ? fp->key[p] : fp->ent[fp->rank[p]].key;
}
/* Read, its partial hash known (never with DS_FP_FAILED: a failure clears it). */
static inline bool ds_fp_got(const struct ds_first_pass *fp, size_t p) { return fp->state[p] & DS_FP_GOT; }
static inline bool ds_fp_direct(const struct ds_first_pass *fp, size_t p) { return fp->state[p] & DS_FP_DIRECT; }
/* 0, or why position p could not be read */
static inline int ds_fp_err(const struct ds_first_pass *fp, size_t p)
{
	return fp->state[p] & DS_FP_FAILED ? (int)(int64_t)ds_fp_key(fp, p) : 0;
}
/* The partial hash of position p (got). */
static inline uint64_t ds_fp_partial(const struct ds_first_pass *fp, size_t p) { return ds_fp_key(fp, p); }
/* Where p's first block is kept (read when p is got), or NULL. */
const unsigned char *ds_fp_block(const struct ds_first_pass *fp, size_t p);
/* The first blocks of the group of positions [first, first + n), by
 * position, when the pass keeps them all; else NULL. */
unsigned char *ds_fp_group_blocks(const struct ds_first_pass *fp, size_t first, size_t n);
/* Position p was read (by the sweep): its partial hash, its block not kept. */
void ds_fp_took(struct ds_first_pass *fp, size_t p, uint64_t partial);
/* Position p failed with err (< 0). */
void ds_fp_failed(struct ds_first_pass *fp, size_t p, int err);
/* The keys alone, by position: for the groups, which need no disk order any
 * more (the rest of ent and rank are given back); with key, the disk order
 * of groups (positions, as for ds_first_pass_run()) into key[0..ngroups):
 * the first rank of each, UINT64_MAX for one the pass did not read. */
void ds_first_pass_by_pos(struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, uint64_t *key);
#define DS_FIRST_PASS_BUDGET (64u * 1024u * 1024u) /* first blocks kept by the pass, at most */
/* With heads, the pass reads this much of each file: where a seek costs what
 * reading 1 MiB costs, files of one size alike in their first block but not
 * after it (camera RAW files share their headers) are told apart for less
 * than a round would cost; it is also the kernel's usual readahead. */
#define DS_HDD_HEAD (128u * 1024u)
/* Read the first blocks of the files of groups (as for ds_run_groups) in disk
 * order into s->reading.first_pass; with sweep (the sweep's budget, or 0: none), their
 * heads, except for groups the sweep reads whole (DS_FP_DIRECT). @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_first_pass_run(dupscan_scan *s, const uint32_t *order, size_t n, const uint32_t *groups, size_t ngroups,
		      size_t sweep);
void ds_first_pass_free(struct ds_first_pass *fp);

/* sweep.c: on a spinning disk, the buckets the first pass leaves settled in
 * sweeps over the disk in its order, each file read once and compared with
 * the first of its bucket kept in memory */
struct ds_sweep {
	bool *swept;               /* by position in order: settled here */
	uint32_t *rep;             /* by position: the position its class is named by, DS_NONE when alone */
	uint64_t *full;            /* by position: its full hash, when in a class */
	int *err;                  /* by position: 0, or why it failed, reported at its group's turn */
	size_t budget;             /* file contents kept at once, at most */
};
#define DS_SWEEP_MEMBERS 4 /* files of a bucket a sweep takes; see sweep.c */
#define DS_SWEEP_BUDGET (256u * 1024u * 1024u) /* at most; an eighth of the memory on a small machine */
/* Sweep the buckets of groups (as for ds_run_groups, read by the first pass)
 * into s->reading.sweep, keeping at most budget bytes of contents. @return 0,
 * -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_sweep_run(dupscan_scan *s, const uint32_t *groups, size_t ngroups, size_t budget);
void ds_sweep_free(struct ds_sweep *sw);

/* match.c */
int ds_match(dupscan_scan *s);
/* Does this run's matching see every file of one size and first block
 * together (no -1 or -p to split them: match.c's same_group())? Then classes
 * it settles apart differ. */
static inline bool ds_groups_apart(const dupscan_scan *s)
{
	return !s->opt.one_fs && !s->opt.permissions;
}
/* One representative per inode (ds_rec_rep()), aliases flagged. order: nrecs scratch entries. */
int ds_collapse_links(dupscan_scan *s, uint32_t *order);

/* pool.c: jobs run ahead of need on helper threads, taken in the owner's
 * order. A job embeds struct ds_job (zeroed: not run yet). */
struct ds_job {
	int state;           /* under the pool's lock */
	bool ahead;          /* run by a helper: counted in the look-ahead budget */
	size_t weight;       /* what it holds once run (set by the run function) */
	int kind;            /* for a phase's run function, when it has jobs of several kinds */
};
typedef void ds_job_fn(void *ctx, struct ds_job *job);
/* warm.c: an argument on another disk read ahead while the walk is
 * elsewhere (hdd mode), into the kernel's caches only. A pool job. */
struct ds_warm {
	struct ds_job job;   /* first: the pool's job is this */
	const char *path;    /* the argument, a directory */
	atomic_bool stop;    /* the walk got there, or ends */
	uint64_t dev;        /* its device: read ahead on it alone */
};
void ds_warm_run(const dupscan_scan *s, struct ds_warm *w);
/* The arguments on a disk no argument before them is on: a job each, in
 * warms[a] (the others NULL), of the given kind. @return how many. */
int ds_warm_args(dupscan_scan *s, struct ds_warm **warms, int kind);
/* A pool of up to helpers threads (fewer when they cannot be made; with none,
 * the owner runs every job as it obtains it) that run queued jobs ahead while
 * fewer than max_jobs, holding less than max_weight, are run ahead and not
 * released. @return NULL when out of memory. */
struct ds_pool *ds_pool_start(int helpers, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight);
/* Join the helpers and free the pool (queued jobs not run stay unrun); NULL is fine. */
void ds_pool_stop(struct ds_pool *p);
/* One pool a run (dupscan_run() starts it): each phase (the walk, the first
 * pass, matching) sets its own run function, budgets and how many of the
 * helpers it lets run ahead (at most those that run), and ends by dropping
 * what is still queued and waiting for what is running. Owner's thread only;
 * nothing may be queued or running when a phase begins. */
void ds_pool_phase(struct ds_pool *p, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight, int helpers);
void ds_pool_end_phase(struct ds_pool *p);
/* The run's pool, started the first time it is asked for (s->opt.threads - 1
 * helpers). @return it, or NULL when out of memory. */
struct ds_pool *ds_scan_pool(dupscan_scan *s);
/* For the rest of this phase, let at most *cap - 1 helpers work at once
 * (*cap read as they take work: NET mode's count in flight); NULL: the
 * phase's number. */
void ds_pool_cap(struct ds_pool *p, const _Atomic int *cap);
/* How many helper threads this phase may use (0 for NULL). */
int ds_pool_helpers(const struct ds_pool *p);
/* How many helper threads were started so far: each when work waited for it. */
int ds_pool_started(struct ds_pool *p);
/* Offer j to the helpers; it must stay valid until the phase ends. @return 0 or -ENOMEM. */
int ds_pool_queue(struct ds_pool *p, struct ds_job *j);
/* Return once j has run: run here if no helper started it, else wait,
 * running other queued jobs and slices meanwhile. Owner's thread only. */
void ds_pool_obtain(struct ds_pool *p, struct ds_job *j);
/* The owner will not obtain j: it never runs if no thread started it; else
 * it is waited for and released. */
void ds_pool_drop(struct ds_pool *p, struct ds_job *j);
/* The owner is done with j: what it held leaves the look-ahead budget. */
void ds_pool_release(struct ds_pool *p, struct ds_job *j);
/* Run fn(job, 0..nslices-1); idle threads of p (may be NULL) take slices
 * too; fn must only write what its slice owns. Returns when every slice is done. */
void ds_parallel_for(struct ds_pool *p, size_t nslices, void (*fn)(void *job, size_t slice), void *job);

/* monitor.c: a lock with one condition, for threads of one phase that wait for each
 * other's progress (the sweep's disks). Without threads each slice runs to
 * its end before the next begins: what a waiter would wait for is done, and
 * these do nothing. ds_monitor_new() returns NULL when out of memory. */
struct ds_monitor;
struct ds_monitor *ds_monitor_new(void);
void ds_monitor_free(struct ds_monitor *m);
void ds_monitor_enter(struct ds_monitor *m);
void ds_monitor_leave(struct ds_monitor *m);
/* Entered: release the lock until a wake, then hold it again. */
void ds_monitor_wait(struct ds_monitor *m);
/* Entered: wake every waiter. */
void ds_monitor_wake(struct ds_monitor *m);

/* Matching on the pool: work on one group of records (idx[0..n)), its effects into c->res */
typedef void ds_group_fn(struct ds_ctx *c, const uint32_t *idx, size_t n);
/* Run fn over groups on threads threads, committing results in group
 * order. groups[2*g], groups[2*g+1] = start, length in idx. A group fn ran to
 * the end of (no error, no cancel) has its records settled. With key (one
 * per group), groups run on one thread in the order of their keys instead,
 * and are still committed in group order.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_run_groups(dupscan_scan *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups, size_t ngroups,
		  uint64_t total, int threads, const uint64_t *key);

/* sets.c */
int ds_build_sets(dupscan_scan *s);
/* The content class of record i, for directory matching: its confirmed class
 * (named by a member record), or for a file with no twin its own inode's
 * record, which no other content shares; DS_EMPTY_CLASS for an empty file. */
#define DS_EMPTY_CLASS (DS_NONE - 1) /* zero-length files: all equal, never read */
uint32_t ds_file_class(const dupscan_scan *s, uint32_t i);
/* s->sets[0..nsets) made final: each in the chosen order, -I applied, sets
 * of one dropped, the sets sorted. @return 0 or -ENOMEM. */
int ds_finish_sets(dupscan_scan *s);
/* cache.c */
struct ds_cache;
/* Begin the run's cache, s->cache.run, from the file s->cache.path (a damaged
 * file is reported and ignored). @return 0 or -ENOMEM. */
int ds_cache_load(dupscan_scan *s);
void ds_cache_free(struct ds_cache *c);
/* Cached hashes of r into out (all but out->rec) when its key still matches. */
bool ds_cache_get(const dupscan_scan *s, uint32_t i, struct ds_hashed *out);
/* With r's key as recorded, and a proof that holds (r's mtime and ctime older
 * than the proof's time by more than s->cache.racy_ns): that proof. */
bool ds_cache_proof(const dupscan_scan *s, uint32_t i, struct ds_proof *out);
/* Does the cache hold hashes it may lend for some file of idx[0..n)? */
bool ds_cache_any(const dupscan_scan *s, const uint32_t *idx, size_t n);
/* Match the loaded entries to the records, order[0..n) sorted by inode (as
 * ds_collapse_links() leaves it): later lookups need no search. @return 0 or -ENOMEM. */
int ds_cache_join(dupscan_scan *s, const uint32_t *order, uint32_t n);
/* Does this run take hashes from a loaded cache (not with -Q or -T)? */
bool ds_cache_usable(const dupscan_scan *s);
/* Does the cache hold hashes it may lend for every file of idx[0..n)? */
bool ds_cache_covers(const dupscan_scan *s, const uint32_t *idx, size_t n);
/* Remember hashes of this run (in commit order; a no-op without a cache).
 * @return 0 or -ENOMEM. */
int ds_cache_note(dupscan_scan *s, const struct ds_hashed *h);
/* A class number of this run, named by one of its files: salted, so two
 * runs' classes never merge by name. */
uint64_t ds_cache_fresh_class(const dupscan_scan *s, const struct ds_rec *named);
/* A comparison a killed run had under way (ds_cache_prefix()): the file was
 * byte for byte equal up to offset x to the others of group label, in the
 * run that started at at. */
struct ds_prefix {
	uint64_t x, label;
	int64_t at;
};
/* With r's key as the killed run saw it and not racy for it: its prefix. */
bool ds_cache_prefix(const dupscan_scan *s, uint32_t i, struct ds_prefix *out);
/* Remember a proof of this run for the save (a no-op without a cache). @return 0 or -ENOMEM. */
int ds_cache_proved(dupscan_scan *s, const struct ds_proved *p);
/* cache_save.c */
/* Merge and replace the cache file. @return 0 (trouble is reported) or -ENOMEM. */
/* *folded: the file now holds what the log held (then the log can go). */
int ds_cache_save(dupscan_scan *s, bool *folded);
/* cache_log.c */
/* Append a file's hashes to the cache's log (made durable when due), from
 * any thread, with its proof (or NULL). A no-op without a log. */
void ds_cache_log_add(dupscan_scan *s, uint32_t rec, uint64_t partial, uint64_t full, bool has_full,
		      const struct ds_proof *pf);
/* A comparison side by side of m[0..n) (a whole bucket, of first-block hash
 * partial) under way, at offset off: what it knows goes to the cache's log in
 * one piece (a no-op without a log, or for more than 64 members). */
void ds_cache_log_checkpoint(dupscan_scan *s, const struct ds_member *m, size_t n, uint64_t partial, uint64_t off);
/* Take what a killed run left in the cache's log over the entries loaded,
 * and open this run's log (s->cache.log; none with -Q or -T). Trouble is
 * told and ignored. @return 0 or -ENOMEM. */
int ds_cache_log_start(dupscan_scan *s);
/* Close the cache's log: folded (its entries are in the cache file now),
 * removed; else made durable for the next run. */
void ds_cache_log_close(dupscan_scan *s, bool folded);
/* Free a log left open (its descriptor closed, nothing written). */
void ds_cache_log_free(struct cache_log *l);
/* Was a record of the log made durable (or a killed run's log taken)? Then
 * the cache file that folds it must be durable before the log goes. */
bool ds_cache_log_durable(const dupscan_scan *s);
/* report.c: the sets dupscan_report_file() gave, as records and classes
 * (paths that are now directories or symlinks are reported and fail it:
 * DUPSCAN_E_NOTREG). @return 0 or a negative code. */
int ds_report_build(dupscan_scan *s);
void ds_report_free(dupscan_scan *s);
/* dirsets.c: with DUPSCAN_OPT_DIRS, add the directory sets and leave out what
 * they cover. @return 0 or -ENOMEM. */
int ds_build_dir_sets(dupscan_scan *s);
int ds_build_uniques(dupscan_scan *s);
/* fn(user, rec) for every record the unique files are (ds_build_uniques()),
 * in record order, without their paths; a nonzero return stops. @return it,
 * or -ENOMEM. */
int ds_each_unique(dupscan_scan *s, int (*fn)(void *user, uint32_t rec), void *user);
void ds_free_results(dupscan_scan *s);
/* Natural order: runs of digits compare as numbers. */
int ds_natural_cmp(const char *a, const char *b);
/* The chosen order between two files (their records' times, arguments, paths). */
int ds_order_cmp(const dupscan_scan *s, const struct dupscan_file *a, const struct dupscan_file *b);
/* The chosen order between two struct dupscan_file; ctx is the scan. */
int ds_cmp_file(void *ctx, const void *a, const void *b);

#endif /* DUPSCAN_INTERNAL_H */
