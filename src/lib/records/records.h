/* SPDX-License-Identifier: MIT */
/* records/records.h: what the walk records: files, directories, arguments, the index of classes; never installed. */
#ifndef DUPSCAN_RECORDS_RECORDS_H
#define DUPSCAN_RECORDS_RECORDS_H

#include "internal.h"
#include "support/support.h"
#include "records/names.h"
#include "records/tree.h"

/* records.c: values many records share (struct ds_intern). */
/* The index of (k0, k1), added when new. @return 0, -ENOMEM or -EOVERFLOW
 * (limit values already). */
int ds_intern(struct ds_intern *t, uint64_t k0, uint64_t k1, uint32_t *out);
void ds_intern_free(struct ds_intern *t);

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
/* Members' records (and their classes) renumbered old -> map[old], every
 * member's record among the first nrecs (spill.c: a band kept). */
void ds_index_renumber(struct ds_index *ix, const uint32_t *map, uint32_t nrecs);
/* Visit nodes in key order; the callback returns nonzero to stop. @return that value. */
int ds_index_walk(const struct ds_index *ix, int (*fn)(void *, const struct ds_node *), void *user);

/* records.c: the tables the walk fills (place.c: the one path builder).
 * Add a directory (parent DS_NONE for a root, whose name is a path prefix) or a
 * file record, as the walk does. @return 0, -ENOMEM, or -EOVERFLOW (a file on
 * a 65,537th device); a record the filter
 * refuses is not added (still 0). */
int ds_add_dir(struct ds_tree *s, const char *name, size_t nlen, uint32_t parent, uint32_t arg,
	       const struct stat *st, uint32_t *out);
int ds_add_rec(struct ds_tree *s, const char *name, size_t nlen, uint32_t dir,
	       const struct stat *st);
/* Record r (its name field aside) appended as directory dir's, named name
 * (nlen bytes): what ds_add_rec() does once the record is made, and how a
 * spilled record comes back (spill.c). @return 0, -ENOMEM, -EOVERFLOW. */
int ds_rec_append(struct ds_tree *s, const struct ds_rec *r, uint32_t dir, const char *name, size_t nlen);
/* payloads.c: --ignore-metadata's payloads beside the records (tree.h).
 * Start the tables for every record, each compared whole; record ri's
 * payload p kept (nothing for one of no known format); the file offset of
 * payload byte off of p, with *room bytes there up to its range's end (0:
 * off is past the payload); whether records a and b of one set hold the
 * same bytes, every one (always without the mode); the tables given back.
 * @return 0 or -ENOMEM. */
int ds_payloads_start(struct ds_tree *t);
int ds_payloads_add(struct ds_tree *t, uint32_t ri, const struct dupscan_payload *p);
uint64_t ds_payload_map(const struct ds_tree *t, const struct ds_pay *p, uint64_t off, uint64_t *room);
bool ds_same_bytes(const struct ds_tree *t, uint32_t a, uint32_t b);
void ds_payloads_free(struct ds_tree *t);
/* A scan's tables, empty; and all they hold given back. */
void ds_tree_init(struct ds_tree *t);
void ds_tree_free(struct ds_tree *t);
/* An added path (remote: scanned on another host, never walked here).
 * @return its index, or -ENOMEM. */
int ds_add_arg(struct ds_tree *t, const char *path, bool recurse, bool remote);
/* Where the part of a path below its argument starts, for paths built from dir. */
uint32_t ds_rel_offset(const struct ds_tree *s, uint32_t dir);
/* The path of dir/name: in buf when it fits cap, else malloc'ed (the caller
 * frees it when it is not buf; with cap 0, always malloc'ed); NULL on ENOMEM. */
char *ds_path_in(const struct ds_tree *s, uint32_t dir, const char *name, char *buf, size_t cap);
/* Write the path of record i into buf (NUL-terminated). @return its length,
 * or the length needed when cap is too small (then buf holds nothing useful). */
size_t ds_rec_path(const struct ds_tree *s, uint32_t i, char *buf, size_t cap);
/* Same, allocated in the result arena. @return NULL on ENOMEM. */
char *ds_rec_path_dup(struct ds_tree *s, uint32_t i);
/* Same, malloc'ed (free it). @return NULL on ENOMEM. */
char *ds_rec_path_alloc(const struct ds_tree *s, uint32_t i);
/* The one meaning of "unchanged": st is a regular file with r's device, inode
 * (where the device keeps its numbers: ds_inodes_trusted_now()), size and mtime, and the ctime ctime_ns (the scan's, r->ctime_ns, or the one
 * an action's own change left). The ctime catches a rewrite in place whose
 * mtime was put back (cp -p, rsync --inplace -t), while reading as at acting. */
bool ds_same_file(const struct ds_tree *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* What differs first of type, identity, size, mtime and ctime: 0 or a
 * DUPSCAN_E_CHANGED_* code. */
int ds_file_change(const struct ds_tree *s, const struct stat *st, const struct ds_rec *r, int64_t ctime_ns);
/* Directory d's path into buf (NUL-terminated) when it fits cap. @return its
 * length (the room needed is one more). */
size_t ds_dir_path_in(const struct ds_tree *s, uint32_t d, char *buf, size_t cap);
/* Directory d's path, malloc'ed; NULL on ENOMEM. */
char *ds_dir_path(const struct ds_tree *s, uint32_t d);
/* identity.c: one directory reached twice, protected paths; by (device,
 * inode) where the device keeps its numbers (ds_inodes_trusted()), by the
 * real path where it does not.
 * Note directory (dev, ino) as visited. @return 0 when new, 1 when seen
 * before, -ENOMEM. */
int ds_seen_add(struct ds_tree *s, uint64_t dev, uint64_t ino);
/* The arguments' real paths, noted before the walk. @return 0 or -ENOMEM. */
int ds_roots_note_args(struct ds_tree *s);
/* Argument a (a directory, stat st) is about to be walked: @return 1 when
 * it was walked already (given twice, or inside another argument walked),
 * 0 when it is walked now, -ENOMEM. */
int ds_seen_arg(struct ds_tree *s, uint32_t a, const struct stat *st);
/* The same for directory parent/name (stat st), met in parent's listing;
 * link: the entry is a symlink followed (-s): 1 yes, 0 no, -1 not known. */
int ds_seen_dir(struct ds_tree *s, uint32_t parent, const char *name, const struct stat *st, int link);
/* Protect path and what lies under it. @return 0 or -errno. */
int ds_protect_add(struct ds_tree *s, const char *path);
/* Is dir/name (nlen bytes, stat st) a protected path itself? */
bool ds_is_protected(struct ds_tree *s, uint32_t dir, const char *name, size_t nlen, const struct stat *st);
/* Is directory path, or one above it, under a protected path? */
bool ds_under_protected(struct ds_tree *s, const char *path);
/* Are directories a and b one place (the same path reached twice)? */
bool ds_same_dir(struct ds_tree *s, uint32_t a, uint32_t b);
void ds_identity_free(struct ds_tree *t);

/* One representative per inode (ds_rec_rep()), aliases flagged. order: nrecs scratch entries. */
int ds_collapse_links(struct ds_tree *s, uint32_t *order);

/* ---- order.c ---- */
/* Natural order: runs of digits compare as numbers. */
int ds_natural_cmp(const char *a, const char *b);
/* The chosen order between two files (their records' times, arguments, paths). */
int ds_order_cmp(const struct ds_tree *s, const struct dupscan_file *a, const struct dupscan_file *b);
/* The chosen order between two struct dupscan_file, as their owner scan orders them (ctx unused). */
int ds_cmp_file(void *ctx, const void *a, const void *b);

/* ---- place.c, links.c: a record's directory, argument, representative ---- */
/* The record standing for record i's inode: the first of its names in the
 * chosen order (links.c), i itself when it is the inode's only name. */
uint32_t ds_rec_rep(const struct ds_tree *s, uint32_t i);
/* The directory record i is in (place.c). */
uint32_t ds_rec_dir(const struct ds_tree *s, uint32_t i);
/* The index of the added path record i was reached from. */
uint32_t ds_rec_arg(const struct ds_tree *s, uint32_t i);
/* A record's size and inode number from st, its device and attributes as
 * indexes (new values added to the tables) and with the high halves of the
 * size and inode number its kind. @return 0, -ENOMEM or -EOVERFLOW. */
int ds_rec_identity(struct ds_tree *s, struct ds_rec *r, const struct stat *st);
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
bool ds_rec_reference(const struct ds_tree *s, uint32_t rec);
bool ds_file_reference(const struct dupscan_file *f);
/* (place.c) An action refuses because f changed since the scan: why (a
 * DUPSCAN_E_CHANGED_* code) goes to the error callback with f's path.
 * @return DUPSCAN_E_CHANGED. */
int ds_refuse(const dupscan_file *f, int why);

/* inodes.c: may two paths with one inode number on device dev be called
 * one file? Not where the filesystem does not keep inode numbers, nor once
 * the scan saw two paths of one number, one of them the file's only name
 * (ds_inodes_distrust(): the kernel's link count says they are two). Looked
 * up once per device. */
bool ds_inodes_trusted(struct ds_tree *s, uint64_t dev);
void ds_inodes_distrust(struct ds_tree *s, uint64_t dev);
/* ds_inodes_trusted() without noting anything, for any thread: the answer
 * looked up already, or the mount's (the reading stage looks up every
 * device it reads on the scan's thread first: read/storage.c). */
bool ds_inodes_trusted_now(const struct ds_tree *s, uint64_t dev);

/* sortrecs.c */
/* order[0..n) (record indexes) sorted by key() and then by the 32 bits it
 * puts in *minor, ties by record index. The sort of every record a scan
 * holds, so its memory can be the run's peak: 16 bytes a record beside at
 * most DS_SORT_RUN of them at a time, sorted in place; past that, the sorted
 * runs are merged through 4 bytes a record, each key taken once more.
 * @return 0 or -ENOMEM (order is then some permutation of itself). */
typedef uint64_t (*ds_rec_key_fn)(const struct ds_tree *s, uint32_t ri, uint32_t *minor);
#define DS_SORT_RUN ((size_t)1 << 18)
int ds_sort_recs(const struct ds_tree *s, uint32_t *order, size_t n, ds_rec_key_fn key);
/* The same with runs of run records (tests: the merge on a small scan). */
int ds_sort_recs_runs(const struct ds_tree *s, uint32_t *order, size_t n, ds_rec_key_fn key, size_t run);

#endif /* DUPSCAN_RECORDS_RECORDS_H */
