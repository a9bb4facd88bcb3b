/* SPDX-License-Identifier: MIT */
/* read/read.h: reading: the storage, the modes, the safe open, the first pass and the sweep; never installed. */
#ifndef DUPSCAN_READ_READ_H
#define DUPSCAN_READ_READ_H

#include "internal.h"
#include "records/records.h"
#include "cache/cache_run.h"

/* How and with what the run reads (storage.c, readorder.c, sweep.c, pool.c). */
struct ds_reading {
	struct ds_core *core;
	struct ds_tree *tree;
	struct ds_cache_state *cache;
	int io_mode;                 /* DUPSCAN_IO_HDD, _SSD or _NET as chosen; _AUTO until then */
	struct ds_netio *net;        /* requests in flight (netio.c): NET mode only, else NULL */
	struct ds_devkind {            /* what storage.c found of each device met */
		uint64_t dev;
		bool one;                  /* ds_one_stream() */
		bool net;                  /* a network filesystem */
		uint64_t disk;             /* ds_disk() */
		bool fuse;                 /* FUSE of no known kind, not probed yet (ds_probe_net()) */
		bool by_path;              /* of no kind mountinfo tells, major 0: a path on it may
		                            * (ds_device_path(): a btrfs subvolume) */
	} *devkinds;
	size_t ndevkinds, capdevkinds;
	struct ds_first_pass *first_pass; /* first blocks read in disk order (HDD), or NULL */
	struct ds_sweep *sweep;      /* buckets settled in disk order (HDD), or NULL */
	unsigned sweeps;             /* what the last sweep took: passes over the disk, */
	size_t sweep_peak;           /* and most bytes kept at once */
	size_t max_open;             /* files one thread may hold open: fits RLIMIT_NOFILE */
	uint32_t dirs_ahead;         /* directories the walk handed to helpers (tests look) */
	struct ds_fsdev {            /* the devices whose filesystem may share blocks, by index, */
		uint16_t devi;             /* with its key (ds_fs_key()): ds_twins_devices(), before */
		uint64_t key;              /* matching; read-only during it */
	} *fsdevs;
	size_t nfsdevs;
	int64_t net_probe_ns;        /* a FUSE filesystem whose directory takes this long to list
	                              * is a network one: DS_NET_PROBE_NS (tests set it) */
	int64_t memory_stat_ns;      /* a stat taking at most this found its metadata in
	                              * memory: DS_MEMORY_STAT_NS (tests under load raise it) */
	struct ds_chunks *chunks;    /* matching's read chunks, kept between comparisons */
};


/* ds_pread_full(), the bytes counted for progress. */
int ds_read(struct ds_reading *s, int fd, void *buf, size_t len, uint64_t off);
/* ds_read() of the bytes matching compares of record ri, open as fd: with
 * --ignore-metadata, a media file's payload, off and len counted in it. */
int ds_read_rec(struct ds_reading *s, uint32_t ri, int fd, void *buf, size_t len, uint64_t off);
/* payfind.c: with --ignore-metadata, the payload of each of the n records of
 * order, found in parallel (a file that cannot be opened or read is left
 * whole: its read reports it). @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_payloads_find(struct ds_reading *s, const uint32_t *order, size_t n);

/* Open record i for reading and check it is the file that was scanned.
 * @return an fd, or a negative code. */
int ds_open_scanned(const struct ds_reading *s, uint32_t i);
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
int ds_open_scanned_in(const struct ds_reading *s, uint32_t i, struct ds_dirfd *dc);
void ds_dirfd_close(struct ds_dirfd *dc);

/* Check an open file is still the one its record holds (ds_same_file()).
 * @return 0, -errno or DUPSCAN_E_CHANGED. */
int ds_check_unchanged(const struct ds_reading *s, int fd, const struct ds_rec *r);

/* storage.c: what holds a device's files */
enum { DS_STORE_UNKNOWN = 0, DS_STORE_SSD, DS_STORE_HDD, DS_STORE_NETWORK, DS_STORE_MEMORY };
/* The kind of storage of device dev (a file's st_dev), looked up under sysfs
 * (normally "/sys") and in mountinfo (normally "/proc/self/mountinfo"). */
int ds_storage_kind(const char *sysfs, const char *mountinfo, uint64_t dev);
/* A btrfs subvolume's files have a device number of their own that no line
 * of mountinfo names: the block device of the btrfs mount whose filesystem
 * (its UUID) holds path (on dev), or 0. */
uint64_t ds_btrfs_source(const char *mountinfo, const char *path, uint64_t dev);
/* Would a path on dev tell more of its storage than mountinfo did (major 0,
 * no kind known, not asked yet)? Then ds_device_path() with a file or
 * directory on it, before its kind decides how to read. */
bool ds_device_wants_path(struct ds_reading *s, uint64_t dev);
void ds_device_path(struct ds_reading *s, uint64_t dev, const char *path);
/* The one decision of how a device is read: as one stream in disk order
 * (--io=hdd, or in auto mode a spinning disk or a network filesystem), or in
 * parallel. Decided once per device and scan (looked up the first time). */
bool ds_one_stream(struct ds_reading *s, uint64_t dev);
/* The disk that serves device dev's reads (looked up under sysfs and in
 * mountinfo, as ds_storage_kind()): a partition's disk, for dm or md over one
 * device that one's, for a filesystem mounted from a block device that
 * device's; dev itself otherwise. Devices of one disk are read as one stream. */
uint64_t ds_disk_of(const char *sysfs, const char *mountinfo, uint64_t dev);
/* ds_disk_of() for the scan, looked up once per device. */
uint64_t ds_disk(struct ds_reading *s, uint64_t dev);
/* A FUSE filesystem of no known kind (device dev) is read as a network one
 * (NET mode) when listing dir, on it, takes s->net_probe_ns or more. */
#define DS_NET_PROBE_NS 1000000
void ds_probe_net(struct ds_reading *s, uint64_t dev, const char *dir);
/* Choose s->io_mode for files on devices devs[0..n) (for DUPSCAN_IO_AUTO: HDD
 * when any is read as one stream, else NET when any is a network filesystem; a
 * mode chosen before only moves to NET or HDD). @return 0 or -ENOMEM. */
int ds_choose_io(struct ds_reading *s, const uint64_t *devs, size_t n);

/* netio.c: requests in flight on a network filesystem (DUPSCAN_IO_NET) */
#define DS_NET_START 64   /* threads reading at first */
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
int ds_net_start(struct ds_reading *s);
int ds_readers(const struct ds_reading *s);
const _Atomic int *ds_net_cap(const struct ds_reading *s);
int64_t ds_net_begin(const struct ds_reading *s);
void ds_net_end(const struct ds_reading *s, int64_t start, size_t bytes);

/* readorder.c: on a spinning disk, every candidate's first block read before
 * matching, in the order the disk holds the files */
/* The physical offset of fd's first extent (FIEMAP), and (when not NULL)
 * whether another file holds its blocks too and how many of the file's
 * bytes it holds from the start, in one run on the disk (0 when it does not
 * start the file). @return false when there is none to tell (no FIEMAP
 * here, an empty or inline file). */
bool ds_first_extent(int fd, uint64_t *physical, bool *shared, uint64_t *run);
/* A group whose first blocks the first pass keeps: position first's at
 * base in blocks, the next blen bytes on. */
struct ds_fp_kept {
	uint32_t first, n, blen;
	size_t base;
};
struct ds_first_pass {
	const uint32_t *order;     /* the candidates as ds_match grouped them */
	size_t n;
	/* One entry a candidate, 12 bytes: the pass's largest array is also its
	 * result. While placing, by position, each one's place on its disk (or,
	 * read from the page cache, its head); then in the order read, rank
	 * first (the first nent). A read entry's key is the partial hash
	 * (failed: the negative errno), its pos its position. Once by_pos
	 * (ds_first_pass_by_pos()), only the keys are left, by position, in
	 * key. */
	struct ds_keypos32 *ent;
	size_t nent;
	uint64_t *key;
	size_t entbytes;           /* what ds_big_free() takes for ent */
	uint32_t *rank;            /* by position: its entry (its place in the disk order read in),
	                            * DS_NONE when in no group read; only for the sweep (with
	                            * head), until by_pos. Neither: the ds_fp_ accessors wait */
	unsigned char *state;      /* by position: enum ds_fp_state bits */
	uint64_t *head;            /* by position: XXH64 of the bytes past the first block up to
	                            * DS_HDD_HEAD (for the sweep), or NULL */
	uint32_t *twin;            /* by position: for a DS_FP_TWIN, the position whose bytes are
	                            * its own (ds_pass_twins()); NULL where there is none */
	/* the devices of the candidates, in the order of their disks (place.h):
	 * a place's key starts with its stream's number, sbits of them */
	struct ds_fp_stream { uint16_t disk, devi; } *stream;
	unsigned sbits;
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
	DS_FP_SHARED = 8,          /* its first extent is shared (placed: FIEMAP said so) */
	DS_FP_TWIN = 16,           /* one content with fp->twin[p] by their extent maps: never read */
	DS_FP_LONE = 32,           /* every other file of its group is its twin: nothing to tell it
	                            * from, its first block alone is read (its class's key) */
	DS_FP_RUN = 64,            /* placed by its first extent, which holds the whole file */
};
static inline uint64_t ds_fp_key(const struct ds_first_pass *fp, size_t p)
{
	return fp->by_pos ? fp->key[p] : ds_keypos32_key(&fp->ent[fp->rank[p]]);
}
/* Read, its partial hash known (never with DS_FP_FAILED: a failure clears it). */
static inline bool ds_fp_got(const struct ds_first_pass *fp, size_t p) { return fp->state[p] & DS_FP_GOT; }
static inline bool ds_fp_direct(const struct ds_first_pass *fp, size_t p) { return fp->state[p] & DS_FP_DIRECT; }
static inline bool ds_fp_twin(const struct ds_first_pass *fp, size_t p) { return fp->state[p] & DS_FP_TWIN; }
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
/* The group [first, first + n) is matched: its kept first blocks and its
 * keys, never read again, leave memory (a group is matched once; groups do
 * not share a byte of either, so another group's are never touched). */
void ds_fp_group_done(struct ds_first_pass *fp, size_t first, size_t n);
/* The group [first, first + n) has taken its keys (its hashes and failures,
 * read once, when it is matched): they leave memory, whether its blocks
 * were kept or not (a group of a million files not kept holds 8 MB of them
 * through its comparison otherwise). */
void ds_fp_keys_taken(struct ds_first_pass *fp, size_t first, size_t n);
/* Position p was read (by the sweep): its partial hash, its block not kept. */
void ds_fp_took(struct ds_first_pass *fp, size_t p, uint64_t partial);
/* Position p failed with err (< 0). */
void ds_fp_failed(struct ds_first_pass *fp, size_t p, int err);
/* The keys alone, by position: for the groups, which need no disk order any
 * more (the rest of ent and rank are given back); with key, the disk order
 * of groups (positions, as for ds_first_pass_run()) into key[0..ngroups):
 * the first rank of each, UINT64_MAX for one the pass did not read. */
void ds_first_pass_by_pos(struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, uint64_t *key);
/* First blocks kept by the pass, at most: what they spare is a second read
 * of a group's first blocks, which the page cache most often serves; 32 MiB
 * is 3.4 bytes a file at ten million files (64 MiB took 6.7) */
#define DS_FIRST_PASS_BUDGET (32u * 1024u * 1024u)
/* With heads, the pass reads this much of each file: where a seek costs what
 * reading 1 MiB costs, files of one size alike in their first block but not
 * after it (camera RAW files share their headers) are told apart for less
 * than a round would cost; it is also the kernel's usual readahead. */
#define DS_HDD_HEAD (128u * 1024u)
/* A gap a spinning disk reads over sooner than it seeks past it (about a
 * short seek and half a turn at 160 MB/s): the first pass reads on through
 * files that lie in such gaps between the files it reads, at no cost in
 * disk time. */
#define DS_HDD_SKIP (1024u * 1024u)
/* sharing.c: which devices of the candidates order[0..n) may share blocks,
 * asked once each by statfs(2) on a file's path, before matching (none in a
 * scan across hosts, or with -Q or -TT). @return 0 or -ENOMEM. */
int ds_twins_devices(struct ds_reading *s, const uint32_t *order, size_t n);
void ds_twins_devices_free(struct ds_reading *s);
/* May any candidate's filesystem share blocks (else no file is mapped)? */
bool ds_twins_any(const struct ds_reading *s);
/* The key of record rec's filesystem, when it may share blocks. */
bool ds_rec_fs(const struct ds_reading *s, uint32_t rec, uint64_t *key);
/* Record rec's extent map (through fd when >= 0, else opened here) and its
 * filesystem's key, when it may share blocks and the map proves something
 * (else false, *map empty). */
bool ds_map_rec(const struct ds_reading *s, uint32_t rec, int fd, struct ds_extmap *map, uint64_t *fs);
/* Of records rec[0..k) (fd: theirs when held, or NULL), each one whose map
 * agrees with an earlier one's that is no twin itself: first[x] that one,
 * else DS_NONE. @return how many twins. */
size_t ds_map_twins(const struct ds_reading *s, const uint32_t *rec, const int *fd, size_t k, uint32_t *first);
/* The first pass's twins among the groups the sweep takes (files no larger
 * than sweep / 2): DS_FP_TWIN and fp->twin set, such a group no longer
 * direct. @return 0 or -ENOMEM. */
int ds_pass_twins(struct ds_reading *s, struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, size_t sweep);
/* Read the first blocks of the files of groups (as for ds_run_groups) in disk
 * order into s->first_pass; with sweep (the sweep's budget, or 0: none), their
 * heads, except for groups the sweep reads whole (DS_FP_DIRECT). @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_first_pass_run(struct ds_reading *s, const uint32_t *order, size_t n, const uint32_t *groups, size_t ngroups,
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
 * into s->sweep, keeping at most budget bytes of contents. @return 0,
 * -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_sweep_run(struct ds_reading *s, const uint32_t *groups, size_t ngroups, size_t budget);
void ds_sweep_free(struct ds_sweep *sw);

#endif /* DUPSCAN_READ_READ_H */
