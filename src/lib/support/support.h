/* SPDX-License-Identifier: MIT */
/* support/support.h: what every stage uses: memory, hashing, sorting, whole system calls, errors, the thread pool; never installed. */
#ifndef DUPSCAN_SUPPORT_SUPPORT_H
#define DUPSCAN_SUPPORT_SUPPORT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "dupscan.h"
#include "fsutil.h" /* (src/util: shared with the program) */
#include "internal.h"

struct ds_rec;

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
 * asked: the clearing then delays the disk's work. */
void *ds_big_alloc_filled(size_t len);
void ds_big_free(void *p, size_t len);
/* Bytes [from, to) of p, a ds_big_alloc() of len bytes, no longer needed:
 * the whole pages among them given back (read again they are zeros), where
 * p is a mapping; the rest stays. */
void ds_big_release(void *p, size_t len, size_t from, size_t to);
/* chunks.c: read chunks kept between comparisons (s->reading->chunks, while
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


/* ---- sysio.c: system calls made whole ---- */
/* Files each of so many threads may hold open: the process' limit of
 * descriptors shared, with room for the caller's, 8 to DS_LOCKSTEP_MAX. */
size_t ds_open_per_thread(int threads);
/* Files read side by side past their first block: so much per file in the
 * first round, four times more each round up to the last (a difference is
 * most often early; a long run of equal bytes is read in large requests). */
#define DS_FIRST_ROUND (64u * 1024u)
#define DS_LAST_ROUND (64u * 1024u * 1024u)
/* open(2) for a path of any length (longer than PATH_MAX: in pieces with openat). */
int ds_open_path(const char *path, int flags);
/* Read exactly len bytes at off. @return 0, -errno, or DUPSCAN_E_SHORT. */
int ds_pread_full(int fd, void *buf, size_t len, uint64_t off);
/* Is all of [off, off + len) of fd in the page cache (false where the
 * kernel cannot tell, before Linux 6.5)? Reads nothing. */
bool ds_all_cached(int fd, uint64_t off, uint64_t len);
/* in's content into the new empty file out, synced and read back equal; then
 * st's mode, owner (when permitted) and times. @return 0 or a negative code. */
int ds_copy_into(int in, int out, const struct stat *st);
/* The regular file open at in (from its start) copied as above to the new
 * file to (removed again on failure). @return 0 or a negative code. */
int ds_copy_fd(int in, const char *to);

/* ---- sort.c ---- */
/* Stable merge sort with a context argument (qsort has none), taking half
 * the array's size beside it. @return 0 or -ENOMEM. */
int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx);
/* Ascending order of uint64_t elements, for ds_sort(). */
int ds_cmp_u64(void *ctx, const void *a, const void *b);
/* v[0..*n) sorted ascending, each value once (*n shortened). @return 0 or -ENOMEM. */
int ds_sort_u64_set(uint64_t *v, size_t *n);
/* Is x among v[0..n), ascending? (binary search) */
bool ds_sorted_has(const uint64_t *v, size_t n, uint64_t x);
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
/* Their order: by key, then by pos. */
static inline bool ds_keypos_less(const struct ds_keypos *a, const struct ds_keypos *b)
{
	return a->key != b->key ? a->key < b->key : a->pos < b->pos;
}
/* The same with a 32-bit position, in 12 bytes (the key in two halves: 4-byte
 * alignment, no padding), for arrays of one pair a file. */
struct ds_keypos32 {
	uint32_t key_lo, key_hi, pos;
};
static inline uint64_t ds_keypos32_key(const struct ds_keypos32 *a)
{
	return (uint64_t)a->key_hi << 32 | a->key_lo;
}
static inline struct ds_keypos32 ds_keypos32_of(uint64_t key, uint32_t pos)
{
	return (struct ds_keypos32){ (uint32_t)key, (uint32_t)(key >> 32), pos };
}
static inline bool ds_keypos32_less(const struct ds_keypos32 *a, const struct ds_keypos32 *b)
{
	uint64_t ka = ds_keypos32_key(a), kb = ds_keypos32_key(b);
	return ka != kb ? ka < kb : a->pos < b->pos;
}
void ds_sort_by_key32(struct ds_keypos32 *a, size_t n);
/* error.c */
void ds_report(struct ds_core *s, const char *path, int code);
/* Is code DUPSCAN_E_CHANGED or one of the DUPSCAN_E_CHANGED_* reasons? */
bool ds_is_change(int code);

/* pool.c: jobs run ahead of need on helper threads, taken in the owner's
 * order. A job embeds struct ds_job (zeroed: not run yet). */
struct ds_job {
	int state;           /* under the pool's lock */
	bool ahead;          /* run by a helper: counted in the look-ahead budget */
	size_t weight;       /* what it holds once run (set by the run function) */
	int kind;            /* for a phase's run function, when it has jobs of several kinds */
};
typedef void ds_job_fn(void *ctx, struct ds_job *job);

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
/* Threads reading a network filesystem at most (read/netio.c): the scan's
 * pool has room for them. */
#define DS_NET_MOST 64
/* The run's pool, started the first time it is asked for (opt.threads - 1
 * helpers). @return it, or NULL when out of memory. */
struct ds_pool *ds_scan_pool(struct ds_core *s);
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

/* ---- progress.c: the run's progress in its phase (s->progress) ---- */
/* Report the progress to the bytes callback, unless another thread is. */
void ds_progress_report(struct ds_core *s);
/* A phase begins: files it examines, bytes it may read at most. */
void ds_progress_phase(struct ds_core *s, int phase, uint64_t files, uint64_t bytes);
/* files settled, and bytes the phase no longer has to read for them. */
void ds_progress_settled(struct ds_core *s, uint64_t files, uint64_t bytes);
/* The phase ends: all settled, nothing left. */
void ds_progress_end(struct ds_core *s);
/* Matching in bands: one phase and count of files and bytes for them all
 * (whole), which a band's phases leave as they are; and its end. */
void ds_progress_whole(struct ds_core *s, uint64_t files, uint64_t bytes);
void ds_progress_whole_end(struct ds_core *s);
/* The walk found a file of size bytes. */
void ds_progress_found(struct ds_core *s, uint64_t size);

/* ---- extents.c: where a file's bytes lie (FIEMAP) ---- */
struct ds_extent {
	uint64_t logical, physical, length;
	uint32_t flags;      /* FIEMAP_EXTENT_* */
};
/* FIEMAP_EXTENT_* flags under which an extent's address proves nothing:
 * unknown, delayed, unwritten, inline, a tail, unaligned, compressed or
 * encrypted (its bytes are not the blocks at that address, as they are) */
#define DS_EXTENT_UNPROVEN (0x0002u | 0x0004u | 0x0008u | 0x0080u | 0x0100u | 0x0200u | 0x0400u | 0x0800u)
struct ds_extmap {
	struct ds_extent *v;
	size_t n, cap;
	bool proves;         /* every extent is plain data at a known address */
};
/* Can the filesystem path is on (device dev) share blocks (btrfs, XFS,
 * OCFS2, bcachefs), and which is it: *key names the address space its
 * extents are in (the UUID on btrfs, whose subvolumes and snapshots each have
 * a device number of their own; else the device number). Asked once a device
 * by its users (statfs(2); an open only where blocks can be shared). */
bool ds_path_fs(const char *path, uint64_t dev, uint64_t *key);
/* fd's extents into m (m->v reused). @return 0, -ENOMEM or -errno
 * (m->proves false). */
int ds_extent_map(int fd, struct ds_extmap *m);
/* Do a and b map every byte to the same address, extent for extent, each
 * map proving it? */
bool ds_extmap_same(const struct ds_extmap *a, const struct ds_extmap *b);
void ds_extmap_free(struct ds_extmap *m);
/* A range of blocks of a filesystem (fs: ds_path_fs()'s key). */
struct ds_range {
	uint64_t fs, start, len;
};
/* The bytes the n ranges cover, each byte once (r sorted in place).
 * @return 0 or -ENOMEM. */
int ds_occupied(struct ds_range *r, size_t n, uint64_t *bytes);

/* ---- mounts.c: what mountinfo tells of a device ---- */
/* The mount of device dev in mountinfo ("ID PARENT MAJ:MIN ROOT MNT OPTS...
 * - TYPE SOURCE SUPER"): its type, source and (super may be NULL) the
 * filesystem's own options. @return false when not found. */
bool ds_mount_entry(const char *mountinfo, uint64_t dev, char type[64], char source[PATH_MAX], char *super);
/* Does the filesystem of device dev keep one inode number a file (false:
 * FUSE, SMB with noserverino), by its mount in mountinfo? */
bool ds_inode_numbers_kept(const char *mountinfo, uint64_t dev);

#endif /* DUPSCAN_SUPPORT_SUPPORT_H */
