/* SPDX-License-Identifier: MIT */
/* records/tree.h: the records stage's state (struct ds_tree) and its types:
 * records, directories, arguments, file handles, the index of classes; and
 * a record's fields as accessors. Never installed. */
#ifndef DUPSCAN_RECORDS_TREE_H
#define DUPSCAN_RECORDS_TREE_H

#include "internal.h"
#include "support/support.h"
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

struct ds_spill;

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
 * inode's record and the actions' state are its tree's (ds_file_inode(),
 * tree->acts). */
struct dupscan_file {
	const char *path;
	const struct ds_rec *rec;
	const struct ds_tree *tree; /* the tables rec's indexes point into */
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

/* With DUPSCAN_OPT_IGNORE_METADATA, where the files of a known format keep
 * their picture or sound (payloads.c): matching groups, hashes and compares
 * those bytes only (ds_rec_msize(), read/open.c's ds_read_rec()). */
struct ds_pay {
	uint64_t len;                /* the payload's bytes */
	uint32_t first;              /* its ranges: ext[first..first + n) */
	uint8_t n, format;           /* enum dupscan_media */
};
struct ds_payloads {
	uint32_t *at;                /* by record: its entry in ent, DS_NONE for a file
	                              * compared whole; NULL: the mode is off */
	uint32_t *whole;             /* by record, for a set's members: the first member of
	                              * its set whose every byte is the same as its own
	                              * (match/whole.c); itself when none is */
	struct ds_pay *ent;
	uint32_t nent;
	size_t capent;
	struct dupscan_extent *ext;
	size_t next, capext;
};

/* What the walk found (walk.c, records.c): arguments, directories, files. */
struct ds_tree {
	struct ds_core *core;
	const struct ds_tree *owner;  /* a mirror scan's (remote.c): the tree of the scan whose
	                              * arguments its directories name; else NULL */
	const dupscan_scan *scan;     /* the scan this is the tree of (NULL: a mirror's) */
	void *host;                   /* a mirror's: the other host its files are on (remote/: its
	                              * struct ds_remote); NULL: this host's */
	void *acts;                   /* the actions' state for its files (actions/: struct ds_acts,
	                              * made by scan.c); NULL: a mirror's */
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
	/* visited directories, open addressing on (dev, ino) (identity.c) */
	uint64_t *seen;              /* pairs: dev, ino+1 (0 = empty) */
	size_t seen_cap, seen_count;
	/* the real paths the walk starts from: the arguments and, where inode
	 * numbers are not kept, the directories entered through a symlink */
	struct ds_root { char *path; const char *base; uint32_t arg; bool walked; } *roots;
	size_t nroots, cap_roots;
	/* protected paths: their identity both ways (identity.c) */
	struct ds_protect { uint64_t dev, ino; char *real; const char *base; } *protect;
	size_t nprotect, cap_protect;
	/* whether each device met keeps one inode number a file (inodes.c) */
	struct ds_inos { uint64_t dev; bool kept; } *inos;
	size_t ninos, cap_inos;
	struct ds_index index;       /* the classes matching settles */
	struct ds_spill *spill;      /* records past the memory budget (spill.c, which frees it), or NULL */
	uint64_t nspilled;           /* records written there (spill.c): the walk's count goes on */
	struct ds_arena out;         /* result paths */
	bool references;             /* a path was added by dupscan_add_reference() */
	bool from_report;            /* files were given by dupscan_report_file(), not walked */
	struct ds_payloads pay;      /* DUPSCAN_OPT_IGNORE_METADATA's payloads */
};


static inline struct ds_rec *ds_rec(const struct ds_tree *s, uint32_t i)
{
	return &s->rec_blocks[i >> DS_REC_SHIFT][i & (DS_REC_BLOCK - 1)];
}

/* Its name, where it is kept or rebuilt in buf (DS_NAME_BUF bytes). */
static inline const char *ds_rec_name(const struct ds_tree *s, const struct ds_rec *r, char *buf)
{
	return ds_names_get(&s->fnames, r->name, buf);
}
/* A kind is (more than one name << 63 | high half of the inode number << 16
 * | device index, high half of the size << 32 | attributes index):
 * ds_rec_identity(). */
/* The record's device as an index into s->devs (at most 65,536). */
static inline uint16_t ds_rec_devi(const struct ds_tree *s, const struct ds_rec *r)
{
	return (uint16_t)s->kinds.key[2 * (size_t)r->kind];
}
/* Its mode, owner and group as an index into s->attrs. */
static inline uint32_t ds_rec_attr(const struct ds_tree *s, const struct ds_rec *r)
{
	return (uint32_t)s->kinds.key[2 * (size_t)r->kind + 1];
}
static inline uint64_t ds_rec_size(const struct ds_tree *s, const struct ds_rec *r)
{
	return s->kinds.key[2 * (size_t)r->kind + 1] >> 32 << 32 | r->size_lo;
}
static inline uint64_t ds_rec_ino(const struct ds_tree *s, const struct ds_rec *r)
{
	return s->kinds.key[2 * (size_t)r->kind] >> 16 << 32 | r->ino_lo;
}
/* Had the file more than one name (link count) when it was looked at? */
static inline bool ds_rec_multilink(const struct ds_tree *s, const struct ds_rec *r)
{
	return s->kinds.key[2 * (size_t)r->kind] >> 63;
}
static inline uint64_t ds_rec_dev(const struct ds_tree *s, const struct ds_rec *r)
{
	return s->devs.key[2 * (size_t)ds_rec_devi(s, r)];
}
static inline uint32_t ds_rec_mode(const struct ds_tree *s, const struct ds_rec *r)
{
	return (uint32_t)s->attrs.key[2 * (size_t)ds_rec_attr(s, r) + 1];
}
/* owner << 32 | group */
static inline uint64_t ds_rec_owner(const struct ds_tree *s, const struct ds_rec *r)
{
	return s->attrs.key[2 * (size_t)ds_rec_attr(s, r)];
}

/* Record ri's payload when it is a file of a known format read as one
 * (--ignore-metadata), else NULL: it is compared whole. */
static inline const struct ds_pay *ds_rec_payload(const struct ds_tree *s, uint32_t ri)
{
	return s->pay.at && s->pay.at[ri] != DS_NONE ? &s->pay.ent[s->pay.at[ri]] : NULL;
}
/* The bytes matching compares of record ri: its payload's, or all its own. */
static inline uint64_t ds_rec_msize(const struct ds_tree *s, uint32_t ri)
{
	const struct ds_pay *p = ds_rec_payload(s, ri);
	return p ? p->len : ds_rec_size(s, ds_rec(s, ri));
}

/* The handle of record r, reached by path p (rel: where its part below the
 * argument starts). */
static inline struct dupscan_file ds_file_of(const struct ds_tree *s, const char *p, uint32_t i, uint32_t rel)
{
	return (struct dupscan_file){ p, ds_rec(s, i), s, rel, i };
}

#endif /* DUPSCAN_RECORDS_TREE_H */
