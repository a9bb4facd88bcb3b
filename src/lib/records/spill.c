/* SPDX-License-Identifier: MIT */
/* spill.c: records past the memory budget. While the walk's records fit the
 * budget nothing here runs. Past it, the table is written out sorted by size
 * as one run of an unnamed temporary file (O_TMPFILE: a kill leaves nothing
 * behind) and emptied; the directories stay in memory. Matching then takes
 * the runs back merged, one band of whole size groups at a time (a file
 * matches only files of its size: spill_merge.c), and after each band
 * keeps only the records that are in a class: the sets' files (and the
 * unique ones a caller asks for). */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill.h"
#include "fsutil.h"

#include "records/spill_state.h"

#define WRITE_BUF (1u << 20)

int ds_spill_new(struct ds_tree *t, uint64_t budget, unsigned per_rec, const char *dir, bool refuse)
{
	struct ds_spill *sp = calloc(1, sizeof(*sp));
	const char *env = getenv("TMPDIR");
	const char *where = dir && *dir ? dir : env && *env ? env : "/tmp";
	if (!sp || !(sp->dir = strdup(where))) {
		free(sp);
		return -ENOMEM;
	}
	sp->budget = budget;
	sp->per_rec = per_rec;
	sp->refuse = refuse;
	sp->fd = -1;
	sp->walk_share = budget / DS_SPILL_WALK_SHARE;
	t->spill = sp;
	return 0;
}

void ds_spill_mode(struct ds_tree *t, bool hdd)
{
	t->spill->per_rec = hdd ? DS_SPILL_HDD : DS_SPILL_SSD;
	t->spill->hdd = hdd;
}

/* The records added to the table since last weighed, into heads and big. */
static void weigh(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	for (; sp->weighed < t->nrecs; sp->weighed++) {
		uint64_t size = ds_rec_size(t, ds_rec(t, sp->weighed));
		sp->heads += size < DS_BLOCK ? size : DS_BLOCK;
		sp->big += size > DS_BLOCK;
	}
}

/* What hdd mode's reading may keep while it matches the table's records:
 * their first blocks (within its share), and contents for the sweep when
 * some file is larger than a block. */
static uint64_t read_bytes(const struct ds_spill *sp)
{
	if (!sp->hdd)
		return 0;
	uint64_t heads = sp->budget / DS_SPILL_HEADS_SHARE;
	return (sp->heads < heads ? sp->heads : heads) + (sp->big ? sp->budget / DS_SPILL_SWEEP_SHARE : 0);
}

void ds_spill_merge_free(struct ds_spill *sp)
{
	for (size_t k = 0; k < sp->ncur; k++)
		free(sp->cur[k].buf);
	free(sp->cur);
	sp->cur = NULL;
	sp->ncur = 0;
	sp->merge_bytes = 0;
}

void ds_spill_keep_unique(struct ds_tree *t)
{
	t->spill->keep_unique = true;
}

void ds_spill_keep_sizes(struct ds_tree *t, const uint64_t *sizes, size_t n)
{
	t->spill->keep_unique = true;
	t->spill->keep_sizes = sizes;
	t->spill->nkeep_sizes = n;
}

void ds_spill_keep_others(struct ds_tree *t)
{
	t->spill->keep_unique = true;
	t->spill->keep_others = true;
}

bool ds_spill_keeps_unique(const struct ds_tree *t, uint64_t size, uint32_t dir)
{
	const struct ds_spill *sp = t->spill;
	return sp->keep_unique && (!sp->keep_sizes || ds_sorted_has(sp->keep_sizes, sp->nkeep_sizes, size)) &&
	       (!sp->keep_others || !t->args[t->dirs[dir].arg].reference);
}

void ds_spill_on_drop(struct ds_tree *t, ds_spill_drop_fn *fn, void *user)
{
	t->spill->on_drop = fn;
	t->spill->drop_user = user;
}

void ds_spill_hold(struct ds_tree *t, unsigned per_rec, uint64_t bytes)
{
	t->spill->held_rec += per_rec;
	t->spill->held += bytes;
}

void ds_spill_free(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	if (!sp)
		return;
	ds_spill_merge_free(sp);
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->runs);
	free(sp->bigs);
	free(sp->dir);
	free(sp);
	t->spill = NULL;
}

bool ds_spilled(const struct ds_tree *t)
{
	return t->spill && t->spill->nruns > 0;
}

uint64_t ds_spill_count(const struct ds_tree *t)
{
	return t->spill ? t->spill->spilled : 0;
}

uint64_t ds_spill_bytes(const struct ds_tree *t)
{
	return t->spill ? t->spill->spilled_bytes : 0;
}

uint64_t ds_spill_found(const struct ds_tree *t)
{
	return t->nspilled + t->nrecs;
}

/* The bytes the table holds now, and what matching adds for the records not
 * kept yet: what the budget is weighed against. */
static uint64_t table_bytes(const struct ds_tree *t)
{
	const struct ds_spill *sp = t->spill;
	uint64_t b = (uint64_t)t->nblocks * DS_REC_BLOCK * sizeof(struct ds_rec);
	b += (uint64_t)t->fnames.n << DS_NAME_SHIFT;
	b += (uint64_t)t->cap_runs * sizeof(*t->runs);
	b += (uint64_t)t->index.capmem * sizeof(*t->index.mem) + (uint64_t)t->index.cap * sizeof(*t->index.nodes);
	b += (uint64_t)(t->nrecs - sp->kept) * (sp->per_rec + sp->held_rec) + sp->held;
	/* a directory: its entry, its name, its identity in the table of those seen */
	b += (uint64_t)t->ndirs * (sizeof(*t->dirs) + 48);
	/* (the walk's share is given back before the reading takes its own) */
	uint64_t read = read_bytes(sp), share = sp->walk_share > read ? sp->walk_share : read;
	return b + sp->merge_bytes + share + DS_SPILL_FIXED;
}

bool ds_spill_over_with(struct ds_tree *t, uint64_t more)
{
	weigh(t);
	return table_bytes(t) + more >= t->spill->budget;
}

int ds_spill_room(struct ds_tree *t)
{
	/* (weighed every 256 records: the table grows by blocks and chunks) */
	if (!t->spill || (t->nrecs & 255) != 0 || !ds_spill_over_with(t, 0))
		return 0;
	return ds_spill_out(t);
}

static uint64_t size_key(const struct ds_tree *s, uint32_t ri, uint32_t *minor)
{
	*minor = 0;
	return ds_rec_size(s, ds_rec(s, ri));
}

int ds_spill_file(struct ds_tree *t)
{
	const char *dir = t->spill->dir;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* a filesystem without O_TMPFILE: a name for as long as it takes to remove it */
		size_t len = strlen(dir) + 32;
		char *name = malloc(len);
		if (!name)
			return -ENOMEM;
		snprintf(name, len, "%s/.dupscan-spill-XXXXXX", dir);
		fd = mkostemp(name, O_CLOEXEC);
		if (fd >= 0)
			unlink(name);
		free(name);
	}
	return fd >= 0 ? fd : -errno;
}

uint64_t ds_spill_budget(const struct ds_tree *t)
{
	return t->spill ? t->spill->budget : 0;
}

const char *ds_spill_dir(const struct ds_tree *t)
{
	return t->spill->dir;
}

/* The file the runs go to: unnamed, so that nothing outlives the process. */
static int open_file(struct ds_tree *t)
{
	int fd = ds_spill_file(t);
	if (fd < 0) {
		if (fd != -ENOMEM)
			ds_report(t->core, t->spill->dir, fd);
		return fd;
	}
	t->spill->fd = fd;
	return 0;
}

/* A run's size group of count records (sorted: a group's records follow
 * each other): a large one is noted, for the bands to come. */
static int note_group(struct ds_spill *sp, uint64_t size, uint64_t count)
{
	if (count < DS_SPILL_LEAST)
		return 0;
	if (DS_GROW(sp->bigs, sp->cap_bigs, sp->nbigs + 1))
		return -ENOMEM;
	sp->bigs[sp->nbigs++] = (struct big_group){ size, count };
	return 0;
}

/* Write the table's records in order[0..n) after the file's end. */
static int write_run(struct ds_tree *t, const uint32_t *order, size_t n)
{
	struct ds_spill *sp = t->spill;
	unsigned char *buf = ds_big_alloc(WRITE_BUF);
	if (!buf)
		return -ENOMEM;
	size_t used = 0;
	int rc = 0;
	uint64_t gsize = 0, gcount = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct ds_rec r = *ds_rec(t, order[i]);
		uint64_t size = ds_rec_size(t, &r);
		sp->spilled_bytes += size;
		if (gcount && size != gsize) {
			rc = note_group(sp, gsize, gcount);
			gcount = 0;
		}
		gsize = size;
		gcount++;
		char nbuf[DS_NAME_BUF];
		const char *name = ds_rec_name(t, &r, nbuf);
		size_t len = strlen(name);
		uint32_t dir = ds_rec_dir(t, order[i]);
		if (len > NAME_MOST) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (used + ENTRY_HEAD + len > WRITE_BUF) {
			rc = ds_write_all(sp->fd, buf, used);
			sp->written += used;
			used = 0;
		}
		r.name = (uint32_t)len;
		memcpy(buf + used, &r, sizeof(r));
		memcpy(buf + used + sizeof(r), &dir, sizeof(dir));
		memcpy(buf + used + ENTRY_HEAD, name, len);
		used += ENTRY_HEAD + len;
	}
	if (rc == 0 && used) {
		rc = ds_write_all(sp->fd, buf, used);
		sp->written += used;
	}
	if (rc == 0)
		rc = note_group(sp, gsize, gcount);
	ds_big_free(buf, WRITE_BUF);
	if (rc && rc != -ENOMEM && rc != -ENAMETOOLONG)
		ds_report(t->core, sp->dir, rc);
	return rc;
}

/* The table emptied: records, their runs of directories and their names. */
static void empty_table(struct ds_tree *t)
{
	for (uint32_t i = 0; i < t->nblocks; i++)
		ds_big_free(t->rec_blocks[i], DS_REC_BLOCK * sizeof(struct ds_rec));
	free(t->rec_blocks);
	t->rec_blocks = NULL;
	t->nblocks = t->nrecs = 0;
	free(t->runs);
	t->runs = NULL;
	t->nruns = 0;
	t->cap_runs = 0;
	ds_names_free(&t->fnames);
	t->spill->heads = 0;
	t->spill->big = 0;
	t->spill->weighed = 0;
}

int ds_spill_out(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	if (sp->refuse)
		return DUPSCAN_E_MEMORY;
	if (t->nrecs == 0)
		return 0;
	int rc = sp->fd < 0 ? open_file(t) : 0;
	if (rc)
		return rc;
	uint32_t *order = malloc(t->nrecs * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nrecs; i++)
		order[i] = i;
	rc = ds_sort_recs(t, order, t->nrecs, size_key);
	uint64_t start = sp->written;
	if (rc == 0)
		rc = DS_GROW(sp->runs, sp->cap_runs, sp->nruns + 1);
	if (rc == 0)
		rc = write_run(t, order, t->nrecs);
	free(order);
	if (rc)
		return rc;
	sp->runs[sp->nruns].off = start;
	sp->runs[sp->nruns++].end = sp->written;
	sp->spilled += t->nrecs;
	t->nspilled = sp->spilled;
	empty_table(t);
	return 0;
}

/* ---- after a band ---- */

/* Which records stay: the index's members and their classes' records, the
 * other names of a member's inode, with -H every name of an inode of
 * several (an inode reached by two paths is a set of its own), and when
 * unique files are kept every record not left out. */
static int mark_kept(const struct ds_tree *t, uint64_t *keep)
{
	const struct ds_index *ix = &t->index;
	for (uint32_t m = 0; m < ix->nmem; m++) {
		keep[ix->mem[m].rec / 64] |= (uint64_t)1 << (ix->mem[m].rec % 64);
		keep[ix->mem[m].cls / 64] |= (uint64_t)1 << (ix->mem[m].cls % 64);
	}
	for (uint32_t i = 0; i < t->nrecs; i++) {
		const struct ds_rec *r = ds_rec(t, i);
		bool multi = ds_rec_multilink(t, r) && t->core->opt.hard_links;
		/* (kept unique: every file matched, not those left out) */
		bool unique = ds_spill_keeps_unique(t, ds_rec_size(t, r), ds_rec_dir(t, i)) &&
			      !(ds_rec(t, ds_rec_rep(t, i))->flags & DS_F_SKIPPED) && !(r->flags & DS_F_SKIPPED);
		if (multi || unique || ds_index_has(ix, ds_rec_rep(t, i)))
			keep[i / 64] |= (uint64_t)1 << (i % 64);
	}
	return 0;
}

/* Records kept moved to the table's start in order, with new names and runs. */
static int compact(struct ds_tree *t, const uint64_t *keep, uint32_t *map)
{
	uint32_t k = 0;
	struct ds_names names = { 0 };
	struct ds_run *runs = NULL;
	size_t cap_runs = 0;
	uint32_t nruns = 0;
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < t->nrecs; i++) {
		map[i] = DS_NONE;
		if (!(keep[i / 64] >> (i % 64) & 1)) {
			if (t->spill->on_drop)
				t->spill->on_drop(t->spill->drop_user, t, i, ds_rec(t, i), ds_rec_dir(t, i));
			continue;
		}
		struct ds_rec r = *ds_rec(t, i);
		char nbuf[DS_NAME_BUF];
		const char *name = ds_rec_name(t, &r, nbuf);
		uint32_t dir = ds_rec_dir(t, i);
		rc = ds_names_add(&names, name, strlen(name), &r.name);
		if (rc == 0 && (nruns == 0 || runs[nruns - 1].dir != dir)) {
			rc = DS_GROW(runs, cap_runs, (size_t)nruns + 1);
			if (rc == 0)
				runs[nruns++] = (struct ds_run){ k, dir };
		}
		r.flags = (uint8_t)((r.flags | DS_F_SETTLED) & ~DS_F_LINKED);
		if (rc == 0) {
			*ds_rec(t, k) = r; /* k <= i: nothing not yet read is written over */
			map[i] = k++;
		}
	}
	if (rc) {
		ds_names_free(&names);
		free(runs);
		return rc;
	}
	uint32_t blocks = (k + DS_REC_BLOCK - 1) >> DS_REC_SHIFT;
	for (uint32_t b = blocks; b < t->nblocks; b++)
		ds_big_free(t->rec_blocks[b], DS_REC_BLOCK * sizeof(struct ds_rec));
	t->nblocks = blocks;
	ds_names_free(&t->fnames);
	t->fnames = names;
	free(t->runs);
	t->runs = runs;
	t->nruns = nruns;
	t->cap_runs = cap_runs;
	ds_index_renumber(&t->index, map, k);
	t->nrecs = k;
	return 0;
}

int ds_spill_keep(struct ds_tree *t)
{
	uint64_t *keep = calloc(((size_t)t->nrecs + 63) / 64 + 1, sizeof(*keep));
	uint32_t *map = malloc(((size_t)t->nrecs + 1) * sizeof(*map));
	int rc = keep && map ? mark_kept(t, keep) : -ENOMEM;
	if (rc == 0)
		rc = compact(t, keep, map);
	free(keep);
	/* the names of one inode among the records kept, one standing for them */
	if (rc == 0)
		rc = ds_collapse_links(t, map);
	free(map);
	if (rc == 0) {
		t->spill->kept = t->nrecs;
		t->spill->heads = 0; /* (the kept are matched no more) */
		t->spill->big = 0;
		t->spill->weighed = t->nrecs;
	}
	return rc;
}
