/* SPDX-License-Identifier: MIT */
/* records/spill.h: records past the memory budget (DUPSCAN_OPT_MAX_MEMORY),
 * spilled sorted by size to an unnamed temporary file and taken back one
 * band of whole size groups at a time (spill.c); never installed. It stands
 * on the records' tables (records.c knows nothing of it): the walk asks for
 * room before each record, matching takes the bands. */
#ifndef DUPSCAN_RECORDS_SPILL_H
#define DUPSCAN_RECORDS_SPILL_H

#include "records/tree.h"

/* What the budget must hold beside the records: the walk's and matching's
 * buffers, the threads' stacks in use, the library's tables of devices. */
#define DS_SPILL_FIXED (6u << 20)
/* Matching's bytes a record of a band beyond the record and its name (its
 * place in the orders and groups, its hashes; hdd mode's places): measured
 * at a million files (docs/performance.md). */
#define DS_SPILL_SSD 40u
#define DS_SPILL_HDD 64u
/* The walk may list ahead a budget's eighth (walk.c); in hdd mode the sweep
 * may keep a quarter of it in file contents and the first pass an eighth in
 * first blocks (scan.c): the records' table leaves them that room, the
 * walk's until it ends. */
#define DS_SPILL_WALK_SHARE 8u
#define DS_SPILL_SWEEP_SHARE 4u
#define DS_SPILL_HEADS_SHARE 8u
/* The least band of records matched at once, whatever the budget says. */
#define DS_SPILL_LEAST 4096u

/* The spill state of tree t: budget bytes, of which each record in the
 * table costs its own bytes and per_rec more while it is matched; runs go
 * to an unnamed file in dir (NULL: $TMPDIR, else /tmp); refuse: a spill is
 * DUPSCAN_E_MEMORY instead (the scan needs every record: directory sets,
 * a served client's tree). @return 0 or -ENOMEM. */
int ds_spill_new(struct ds_tree *t, uint64_t budget, unsigned per_rec, const char *dir, bool refuse);
/* Once the walk knows how matching will read: hdd mode keeps more a record. */
void ds_spill_mode(struct ds_tree *t, bool hdd);
/* Keep the unique files too, every record not left out (DS_F_SKIPPED), a
 * file alone in its size included: a served scan's client asks for them by
 * number after the run (serve/). */
void ds_spill_keep_unique(struct ds_tree *t);
/* The same, of the files outside the references only (the references' own
 * unique files go): what dupscan_find_missing() lists. */
void ds_spill_keep_others(struct ds_tree *t);
/* Keep the unique files of these sizes (ascending; the caller keeps them
 * until the spill is freed) as well as the sets', after each band: those
 * that may match another host's files (remote/). */
void ds_spill_keep_sizes(struct ds_tree *t, const uint64_t *sizes, size_t n);
/* Each size of the spilled records whose argument is a reference (ref) or
 * not, once, ascending, to fn (which stops them with a nonzero return),
 * through buffers of their own: everything spilled (ds_spill_out()), no
 * band taken yet. @return 0, fn's code, -ENOMEM or -EIO (reported). */
int ds_spill_sizes(struct ds_tree *t, bool ref, int (*fn)(void *user, uint64_t size), void *user);
/* fn is told of each record that leaves memory for good after its band
 * (not kept; a file alone in its size, never read back, too: rec DS_NONE):
 * its record (its name field not a handle) and directory. */
typedef void ds_spill_drop_fn(void *user, const struct ds_tree *t, uint32_t rec, const struct ds_rec *r,
			      uint32_t dir);
void ds_spill_on_drop(struct ds_tree *t, ds_spill_drop_fn *fn, void *user);
/* What another stage holds beside the records while they are matched:
 * per_rec bytes a record of a band, bytes for the whole run (the hash
 * cache's: cache/cache_run.h). */
void ds_spill_hold(struct ds_tree *t, unsigned per_rec, uint64_t bytes);
void ds_spill_free(struct ds_tree *t);
/* A new unnamed temporary file in the spill's folder (a kill leaves
 * nothing), for another stage's runs. @return its descriptor, or -errno. */
int ds_spill_file(struct ds_tree *t);
/* The budget in bytes (0: none). */
uint64_t ds_spill_budget(const struct ds_tree *t);
/* That folder, to name in a message. */
const char *ds_spill_dir(const struct ds_tree *t);
/* Before the walk adds a record: past the budget, the table goes to a run
 * first (ds_spill_out()). @return 0 or its code; 0 without a budget. */
int ds_spill_room(struct ds_tree *t);
/* Has anything been spilled? */
bool ds_spilled(const struct ds_tree *t);
/* Records written to the file. */
uint64_t ds_spill_count(const struct ds_tree *t);
/* Their files' bytes. */
uint64_t ds_spill_bytes(const struct ds_tree *t);
/* Records found in all: those in the table and those spilled. */
uint64_t ds_spill_found(const struct ds_tree *t);
/* The table's records (none kept yet) written as one run sorted by size, and
 * the table emptied; the directories stay. @return 0, -ENOMEM, -errno of the
 * file (reported with its folder), DUPSCAN_E_MEMORY (refused). */
int ds_spill_out(struct ds_tree *t);
/* The next band into the table, after the records kept: whole size groups
 * while the budget holds them (one group at least); *more: bands remain.
 * @return 0 or a negative code. */
int ds_spill_band(struct ds_tree *t, bool *more);
/* After a band is matched: only the records in a class (and every name of
 * an inode of several) stay, renumbered in order, marked settled; the
 * index's members follow. @return 0 or -ENOMEM. */
int ds_spill_keep(struct ds_tree *t);

#endif /* DUPSCAN_RECORDS_SPILL_H */
