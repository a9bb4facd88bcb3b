/* SPDX-License-Identifier: MIT */
/* records/spill_state.h: the spill's state and its file's entries, shared by
 * spill.c (the budget, the runs written, what stays after a band) and
 * spill_merge.c (the runs read back merged); never installed. */
#ifndef DUPSCAN_RECORDS_SPILL_STATE_H
#define DUPSCAN_RECORDS_SPILL_STATE_H

#include "records/spill.h"

/* A spilled record: the record (its name field holding the name's length),
 * its directory, then the name's bytes. */
#define ENTRY_HEAD (sizeof(struct ds_rec) + sizeof(uint32_t))
#define NAME_MOST 4095u          /* a name's bytes at most (NAME_MAX is 255) */
#define READ_MOST (64u * 1024u)  /* a run's read buffer, at most */
#define READ_LEAST (8u * 1024u)  /* and at least: it holds any entry */

/* One run being merged: its next entry whole in buf[pos..len). */
struct cursor {
	uint64_t off, end;           /* the file's bytes still to read */
	unsigned char *buf;
	size_t pos, len, cap;
};

struct ds_spill {
	uint64_t budget;
	unsigned per_rec;            /* matching's bytes a record beyond its own */
	bool refuse;
	char *dir;                   /* the folder of the file, for messages */
	int fd;                      /* -1 until the first spill */
	uint64_t written;
	struct { uint64_t off, end; } *runs;
	size_t nruns, cap_runs;
	uint64_t spilled;            /* records in the runs */
	uint64_t spilled_bytes;      /* and their files' bytes */
	/* the size groups of DS_SPILL_LEAST records or more in some run, and
	 * how many records of theirs the runs hold there (by size once merging) */
	struct big_group { uint64_t size, count; } *bigs;
	size_t nbigs, cap_bigs;
	struct cursor *cur;          /* merging: one a run */
	/* the first record of the size group at hand, held until a second one
	 * shows it is no group of one (a file alone in its size is unique unread) */
	struct { struct ds_rec r; uint32_t dir; bool has; char name[NAME_MOST + 1]; } first;
	size_t ncur;
	uint64_t merge_bytes;        /* their buffers */
	uint32_t kept;               /* records at the table's start kept from bands before */
	uint64_t walk_share;         /* what the walk may list ahead, until it ends */
	bool hdd;                    /* hdd mode: the reading keeps first blocks and contents */
	uint64_t heads;              /* the table's records not kept: their first blocks' bytes */
	uint32_t big;                /* and how many are larger than a block (the sweep reads them) */
	uint32_t weighed;            /* records of the table counted in heads and big so far */
	bool keep_unique;            /* ds_spill_keep_unique() */
	bool keep_others;            /* ds_spill_keep_others(): only those outside the references */
	const uint64_t *keep_sizes;  /* ds_spill_keep_sizes(): only the unique files of these */
	size_t nkeep_sizes;
	ds_spill_drop_fn *on_drop;   /* ds_spill_on_drop() */
	void *drop_user;
	unsigned held_rec;           /* other stages' bytes a record matched (ds_spill_hold()) */
	uint64_t held;               /* and for the whole run */
};

/* Is a unique file of this size, in directory dir, kept after its band? */
bool ds_spill_keeps_unique(const struct ds_tree *t, uint64_t size, uint32_t dir);
/* Past the budget with more bytes to come? The records added since the
 * last look are weighed first. */
bool ds_spill_over_with(struct ds_tree *t, uint64_t more);
/* The merge's cursors given back. */
void ds_spill_merge_free(struct ds_spill *sp);

#endif /* DUPSCAN_RECORDS_SPILL_STATE_H */
