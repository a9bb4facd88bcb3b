/* SPDX-License-Identifier: MIT */
/* sets/sets.h: the sets, the directory sets and the unique files, in the chosen order; never installed. */
#ifndef DUPSCAN_SETS_SETS_H
#define DUPSCAN_SETS_SETS_H

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

/* dirsets.c: with DUPSCAN_OPT_DIRS, add the directory sets and leave out what
 * they cover. @return 0 or -ENOMEM. */
int ds_build_dir_sets(dupscan_scan *s);
int ds_build_uniques(dupscan_scan *s);
/* fn(user, rec) for every record the unique files are (ds_build_uniques()),
 * in record order, without their paths; a nonzero return stops. @return it,
 * or -ENOMEM. */
int ds_each_unique(dupscan_scan *s, int (*fn)(void *user, uint32_t rec), void *user);
void ds_free_results(dupscan_scan *s);

#endif /* DUPSCAN_SETS_SETS_H */
