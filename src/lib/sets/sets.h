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

/* Another host's tree as directory sets take it (remote/ fills it): the scan
 * that holds its directories, and its entries, each in one of them. */
enum { DS_HOST_FILE, DS_HOST_UNREAD, DS_HOST_UNLISTED };
struct ds_host_entry {
	uint64_t cls;        /* DS_HOST_FILE: its content's class across hosts */
	uint64_t size;
	uint32_t dir;        /* in dirs->tree.dirs */
	uint32_t state;      /* DS_HOST_FILE; _UNREAD: a file of unknown content;
	                      * _UNLISTED: not a file, its directory was not listed whole */
};
struct ds_host_tree {
	dupscan_scan *dirs;
	struct ds_host_entry *e;
	size_t n;
};
/* dirsets.c: with DUPSCAN_OPT_DIRS, add the directory sets and leave out what
 * they cover, over this host's tree and hosts[0..nhosts); across (or NULL)
 * names this host's classes as hosts share them. @return 0 or -ENOMEM. */
int ds_build_dir_sets(dupscan_scan *s, const struct ds_host_tree *hosts, size_t nhosts,
		      uint64_t (*across)(const dupscan_scan *s, uint64_t cls));
int ds_build_uniques(dupscan_scan *s);
/* reference.c: with reference paths, does set (of s's) hold a reference
 * file and another (its order puts them first)? Always true without. */
bool ds_set_asks(const dupscan_scan *s, const struct dupscan_set *set);
/* dupscan_find_missing()'s list of this host's files (s->missing, and
 * s->nasked), unsorted; the other hosts' are joined by the driver (scan.c),
 * then ds_missing_built(). @return 0 or -ENOMEM. */
int ds_build_missing(dupscan_scan *s);
void ds_missing_built(dupscan_scan *s);
/* fn(user, rec) for every record the unique files are (ds_build_uniques()),
 * in record order, without their paths; a nonzero return stops. @return it,
 * or -ENOMEM. */
int ds_each_unique(dupscan_scan *s, int (*fn)(void *user, uint32_t rec), void *user);
void ds_free_results(dupscan_scan *s);

#endif /* DUPSCAN_SETS_SETS_H */
