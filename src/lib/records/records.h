/* SPDX-License-Identifier: MIT */
/* records/records.h: what the walk records: files, directories, arguments, the index of classes; never installed. */
#ifndef DUPSCAN_RECORDS_RECORDS_H
#define DUPSCAN_RECORDS_RECORDS_H

struct ds_tree;

#include "records/names.h"

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
	bool reference;     /* dupscan_add_reference(): its files are the copies asked about */
	bool unread;        /* the path itself could not be scanned (reported) */
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

/* records.c: the tables the walk fills (place.c: the one path builder).
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
/* The one meaning of "unchanged": st is a regular file with r's device, inode
 * (where the device keeps its numbers: ds_inodes_trusted_now()), size and mtime, and the ctime ctime_ns (the scan's, r->ctime_ns, or the one
 * an action's own change left). The ctime catches a rewrite in place whose
 * mtime was put back (cp -p, rsync --inplace -t), while reading as at acting. */
bool ds_same_file(const dupscan_scan *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* What differs first of type, identity, size, mtime and ctime: 0 or a
 * DUPSCAN_E_CHANGED_* code. */
int ds_file_change(const dupscan_scan *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* Directory d's path into buf (NUL-terminated) when it fits cap. @return its
 * length (the room needed is one more). */
size_t ds_dir_path_in(const dupscan_scan *s, uint32_t d, char *buf, size_t cap);
/* Directory d's path, malloc'ed; NULL on ENOMEM. */
char *ds_dir_path(const dupscan_scan *s, uint32_t d);
/* identity.c: one directory reached twice, protected paths; by (device,
 * inode) where the device keeps its numbers (ds_inodes_trusted()), by the
 * real path where it does not.
 * Note directory (dev, ino) as visited. @return 0 when new, 1 when seen
 * before, -ENOMEM. */
int ds_seen_add(dupscan_scan *s, uint64_t dev, uint64_t ino);
/* The arguments' real paths, noted before the walk. @return 0 or -ENOMEM. */
int ds_roots_note_args(dupscan_scan *s);
/* Argument a (a directory, stat st) is about to be walked: @return 1 when
 * it was walked already (given twice, or inside another argument walked),
 * 0 when it is walked now, -ENOMEM. */
int ds_seen_arg(dupscan_scan *s, uint32_t a, const struct stat *st);
/* The same for directory parent/name (stat st), met in parent's listing;
 * link: the entry is a symlink followed (-s): 1 yes, 0 no, -1 not known. */
int ds_seen_dir(dupscan_scan *s, uint32_t parent, const char *name, const struct stat *st, int link);
/* Protect path and what lies under it. @return 0 or -errno. */
int ds_protect_add(dupscan_scan *s, const char *path);
/* Is dir/name (nlen bytes, stat st) a protected path itself? */
bool ds_is_protected(dupscan_scan *s, uint32_t dir, const char *name, size_t nlen, const struct stat *st);
/* Is directory path, or one above it, under a protected path? */
bool ds_under_protected(dupscan_scan *s, const char *path);
/* Are directories a and b one place (the same path reached twice)? */
bool ds_same_dir(dupscan_scan *s, uint32_t a, uint32_t b);
void ds_identity_free(struct ds_tree *t);

/* One representative per inode (ds_rec_rep()), aliases flagged. order: nrecs scratch entries. */
int ds_collapse_links(dupscan_scan *s, uint32_t *order);

/* ---- order.c ---- */
/* Natural order: runs of digits compare as numbers. */
int ds_natural_cmp(const char *a, const char *b);
/* The chosen order between two files (their records' times, arguments, paths). */
int ds_order_cmp(const dupscan_scan *s, const struct dupscan_file *a, const struct dupscan_file *b);
/* The chosen order between two struct dupscan_file; ctx is the scan. */
int ds_cmp_file(void *ctx, const void *a, const void *b);

/* ---- place.c, links.c: a record's directory, argument, representative ---- */
/* The record standing for record i's inode: the first of its names in the
 * chosen order (links.c), i itself when it is the inode's only name. */
uint32_t ds_rec_rep(const dupscan_scan *s, uint32_t i);
/* The directory record i is in (place.c). */
uint32_t ds_rec_dir(const dupscan_scan *s, uint32_t i);
/* The index of the added path record i was reached from. */
uint32_t ds_rec_arg(const dupscan_scan *s, uint32_t i);
/* A record's size and inode number from st, its device and attributes as
 * indexes (new values added to the tables) and with the high halves of the
 * size and inode number its kind. @return 0, -ENOMEM or -EOVERFLOW. */
int ds_rec_identity(dupscan_scan *s, struct ds_rec *r, const struct stat *st);
/* The record standing for f's inode (all its names share it): its ctime_ns
 * is the inode's ctime as last seen, by the scan or right after an action's
 * own change (links, renames and unlinks move it); NULL for directories and
 * for a file the filter is asked about. */
struct ds_rec *ds_file_inode(const struct dupscan_file *f);
/* The directory f is in (a directory of a set: the directory itself). */
uint32_t ds_file_dir(const struct dupscan_file *f);
/* The index of the added path f was reached from. */
uint32_t ds_file_arg(const struct dupscan_file *f);
/* Is record rec (file f) under a reference path (dupscan_add_reference())? */
bool ds_rec_reference(const dupscan_scan *s, uint32_t rec);
bool ds_file_reference(const struct dupscan_file *f);

/* inodes.c: may two paths with one inode number on device dev be called
 * one file? Not where the filesystem does not keep inode numbers, nor once
 * the scan saw two paths of one number, one of them the file's only name
 * (ds_inodes_distrust(): the kernel's link count says they are two). Looked
 * up once per device. */
bool ds_inodes_trusted(dupscan_scan *s, uint64_t dev);
void ds_inodes_distrust(dupscan_scan *s, uint64_t dev);
/* ds_inodes_trusted() without noting anything, for any thread: the answer
 * looked up already, or the mount's (the reading stage looks up every
 * device it reads on the scan's thread first: read/storage.c). */
bool ds_inodes_trusted_now(const dupscan_scan *s, uint64_t dev);

#endif /* DUPSCAN_RECORDS_RECORDS_H */
