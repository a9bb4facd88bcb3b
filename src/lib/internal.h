/* SPDX-License-Identifier: MIT */
/* internal.h: what every stage of libdupscan shares: its constants, the
 * options, callbacks and progress, in the core each stage's state points at;
 * it includes no folder's header. Never installed. */
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


struct ds_pool;

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
	size_t heads_budget;         /* first blocks hdd mode's first pass may keep (DS_FIRST_PASS_BUDGET) */
	uint64_t max_memory;         /* DUPSCAN_OPT_MAX_MEMORY: the records' budget; 0, none */
	int keep_unique;             /* DUPSCAN_OPT_KEEP_UNIQUE: DUPSCAN_KEEP_* */
	bool ignore_metadata;        /* DUPSCAN_OPT_IGNORE_METADATA: media files by their payload */
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
	bool whole;                  /* matching in bands (records/spill.c): one phase and count for
	                              * them all, which a band's phases and ends leave as they are */
	atomic_bool first;           /* hdd mode's first pass is under way (its files counted later) */
};

/* What every stage needs of the scan: what was asked, whom to tell, how far
 * it is, and whether it must stop. Each stage's state holds a pointer to it. */
struct ds_core {
	struct ds_options opt;
	struct ds_callbacks cb;
	struct ds_progress progress;
	atomic_int canceled;         /* set by dupscan_cancel(), maybe from a signal handler or a thread */
	uint64_t errors;
	bool ran;
	bool remote;                 /* paths on other hosts were added (dupscan_add_remote()) */
	struct ds_pool *pool;        /* the run's threads: started once by dupscan_run(), each phase on them */
	const char *sysfs, *mountinfo; /* where storage is looked up (tests point elsewhere) */
};

#endif /* DUPSCAN_INTERNAL_H */
