/* SPDX-License-Identifier: MIT */
/* walk/walk.h: the walk, the arguments read ahead, and the sets a report gives; never installed. */
#ifndef DUPSCAN_WALK_WALK_H
#define DUPSCAN_WALK_WALK_H

#include "internal.h"
#include "records/records.h"
#include "read/read.h"

/* The walk's state: it fills the tree, reading as the storage asks. */
struct ds_walk {
	struct ds_core *core;
	struct ds_tree *tree;
	struct ds_reading *reading;
	struct ds_report_file *report; /* dupscan_report_file(): sets given, not walked (report.c) */
	size_t nreport, capreport;
};

/* walk.c */
int ds_walk(struct ds_walk *s);
/* Did stat calls taking ns in all, which started inblock block reads, find
 * their metadata in memory, each taking at most limit ns (reading's
 * memory_stat_ns)? (On a spinning disk the walk then lists on every thread.) */
bool ds_stats_in_memory(int64_t ns, long inblock, size_t calls, int64_t limit);

/* warm.c: an argument on another disk read ahead while the walk is
 * elsewhere (hdd mode), into the kernel's caches only. A pool job. */
struct ds_warm {
	struct ds_job job;   /* first: the pool's job is this */
	const char *path;    /* the argument, a directory */
	atomic_bool stop;    /* the walk got there, or ends */
	uint64_t dev;        /* its device: read ahead on it alone */
};
void ds_warm_run(const struct ds_walk *s, struct ds_warm *w);
/* The arguments on a disk no argument before them is on: a job each, in
 * warms[a] (the others NULL), of the given kind. @return how many. */
int ds_warm_args(struct ds_walk *s, struct ds_warm **warms, int kind);

/* report.c: the sets dupscan_report_file() gave, as records and classes
 * (paths that are now directories or symlinks are reported and fail it:
 * DUPSCAN_E_NOTREG). @return 0 or a negative code. */
int ds_report_build(struct ds_walk *s);
void ds_report_free(struct ds_walk *s);

/* the library's calls of the same names (dupscan_...), for this stage */
int ds_report_file(struct ds_walk *s, uint32_t set, const char *path, uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_ns, int64_t ctime_ns);

#endif /* DUPSCAN_WALK_WALK_H */
