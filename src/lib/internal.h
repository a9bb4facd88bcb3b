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

#include "fsutil.h"
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

/* Now on the monotonic clock, in nanoseconds: for measuring, never stored. */
static inline int64_t ds_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ds_ns(t);
}


#include "support/support.h"
#include "records/records.h"

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
	/* the run's threads: started once by dupscan_run(), each phase on them */
	struct ds_pool *pool;
	struct ds_chunks *chunks;    /* matching's read chunks, kept between comparisons */
};

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
	uint64_t *shared;            /* dupscan_find_shared(): each set's bytes already shared (NULL: not asked) */
	uint64_t *shared_files;      /* and each set file's, set after set in the sets' order */
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
	struct dupscan_file *missing; /* dupscan_find_missing() (sets/reference.c) */
	size_t nmissing;
	uint64_t nasked;    /* the files dupscan_find_missing() asked about, on any host */
	bool missing_built;
	bool references;             /* a path was added by dupscan_add_reference() */
	/* dupscan_serve(): what its run does between the walk and the matching
	 * (serve.c: the sizes a reference's client wants) */
	int (*after_walk)(dupscan_scan *s, void *user);
	void *after_walk_user;
	struct ds_tally *tally;      /* dupscan_tally_dirs(), dupscan_find_overlaps() (sets/tally.h) */

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
	/* whether a user could read a kept file (actions/access.c), asked once
	 * per user and kept file; set through const file handles likewise */
	struct ds_readers {
		struct ds_reader { uint32_t uid, gid; const char *kept; int reads; } *v;
		size_t n, cap;
		/* directories a reader may search: open addressing on the
		 * reader and the path (actions/readers.c) */
		struct ds_searchable { uint64_t key; char *dir; uint32_t uid, gid; bool ok; } *dirs;
		size_t ndirs, capdirs;
		struct ds_principal *users; /* users with their groups, as looked up (readers.c) */
		size_t nusers, capusers;
	} *act_readers;
};

/* actions/readers.c */
void ds_readers_free(struct ds_readers *r);

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

/* The handle of record r, reached by path p (rel: where its part below the
 * argument starts). */
static inline struct dupscan_file ds_file_of(const dupscan_scan *s, const char *p, uint32_t i, uint32_t rel)
{
	return (struct dupscan_file){ p, ds_rec(s, i), s, rel, i };
}


#endif /* DUPSCAN_INTERNAL_H */
