/* SPDX-License-Identifier: MIT */
/* spill.c: records past the memory budget. While the walk's records fit the
 * budget nothing here runs. Past it, the table is written out sorted by size
 * as one run of an unnamed temporary file (O_TMPFILE: a kill leaves nothing
 * behind) and emptied; the directories stay in memory. Matching then takes
 * the runs back merged, one band of whole size groups at a time (a file
 * matches only files of its size), and after each band keeps only the
 * records that are in a class: the sets' files. */
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

/* A spilled record: the record (its name field holding the name's length),
 * its directory, then the name's bytes. */
#define ENTRY_HEAD (sizeof(struct ds_rec) + sizeof(uint32_t))
#define NAME_MOST 4095u          /* a name's bytes at most (NAME_MAX is 255) */
#define WRITE_BUF (1u << 20)
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

static void merge_free(struct ds_spill *sp)
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

/* Is a unique file of this size, in directory dir, kept? */
static bool keeps_unique(const struct ds_tree *t, uint64_t size, uint32_t dir)
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

/* The held first record of its size, alone in it: it goes. */
static void drop_first(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	if (sp->first.has && sp->on_drop)
		sp->on_drop(sp->drop_user, t, DS_NONE, &sp->first.r, sp->first.dir);
	sp->first.has = false;
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
	merge_free(sp);
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

/* Past the budget with more bytes to come? The records added since the
 * last look are weighed first. */
static bool over_with(struct ds_tree *t, uint64_t more)
{
	weigh(t);
	return table_bytes(t) + more >= t->spill->budget;
}

int ds_spill_room(struct ds_tree *t)
{
	/* (weighed every 256 records: the table grows by blocks and chunks) */
	if (!t->spill || (t->nrecs & 255) != 0 || !over_with(t, 0))
		return 0;
	return ds_spill_out(t);
}

static uint64_t size_key(const struct ds_tree *s, const struct ds_rec *r, uint32_t *minor)
{
	*minor = 0;
	return ds_rec_size(s, r);
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
		const char *name = ds_rec_name(t, &r);
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

/* ---- the merge ---- */

/* Make c's next entry whole in its buffer. @return 1: there, 0: the run is
 * over, or a negative code. */
static int fill(const struct ds_spill *sp, struct cursor *c)
{
	size_t have = c->len - c->pos;
	uint32_t nlen = 0;
	if (have >= ENTRY_HEAD)
		memcpy(&nlen, c->buf + c->pos + offsetof(struct ds_rec, name), sizeof(nlen));
	if (have >= ENTRY_HEAD && have >= ENTRY_HEAD + nlen)
		return 1;
	if (c->off == c->end)
		return have ? -EIO : 0; /* an entry cut short: the file is not as written */
	memmove(c->buf, c->buf + c->pos, have);
	c->pos = 0;
	c->len = have;
	size_t want = c->cap - have;
	if (want > c->end - c->off)
		want = (size_t)(c->end - c->off);
	int rc = ds_pread_full(sp->fd, c->buf + have, want, c->off);
	if (rc)
		return rc < 0 ? rc : -EIO;
	c->off += want;
	c->len += want;
	return fill(sp, c);
}

static int cmp_big(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct big_group *a = pa, *b = pb;
	return a->size < b->size ? -1 : a->size > b->size;
}

/* The large groups by size, each size once, its counts summed. */
static int sum_bigs(struct ds_spill *sp)
{
	int rc = ds_sort(sp->bigs, sp->nbigs, sizeof(*sp->bigs), cmp_big, NULL);
	size_t n = 0;
	for (size_t i = 0; rc == 0 && i < sp->nbigs; i++) {
		if (n && sp->bigs[n - 1].size == sp->bigs[i].size)
			sp->bigs[n - 1].count += sp->bigs[i].count;
		else
			sp->bigs[n++] = sp->bigs[i];
	}
	if (rc == 0)
		sp->nbigs = n;
	return rc;
}

/* Records of size the runs hold in groups of DS_SPILL_LEAST or more (at
 * least that many of the size, when it is not 0). */
static uint64_t big_count(const struct ds_spill *sp, uint64_t size)
{
	size_t lo = 0, hi = sp->nbigs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sp->bigs[mid].size < size)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sp->nbigs && sp->bigs[lo].size == size ? sp->bigs[lo].count : 0;
}

static int merge_start(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	int rc = sum_bigs(sp);
	if (rc)
		return rc;
	uint64_t share = sp->budget / 16 / sp->nruns;
	size_t cap = share > READ_MOST ? READ_MOST : share < READ_LEAST ? READ_LEAST : (size_t)share;
	sp->walk_share = 0; /* (the walk is over) */
	if (!(sp->cur = calloc(sp->nruns, sizeof(*sp->cur))))
		return -ENOMEM;
	sp->ncur = sp->nruns;
	for (size_t k = 0; k < sp->nruns; k++) {
		sp->cur[k] = (struct cursor){ sp->runs[k].off, sp->runs[k].end, malloc(cap), 0, 0, cap };
		if (!sp->cur[k].buf)
			return -ENOMEM;
		sp->merge_bytes += cap;
	}
	return 0;
}

/* The run whose next entry comes first (by size; among equal sizes the
 * earlier run: the walk's order), or SIZE_MAX when all are over. */
static int next_run(const struct ds_tree *t, size_t *best, uint64_t *best_size)
{
	struct ds_spill *sp = t->spill;
	*best = SIZE_MAX;
	for (size_t k = 0; k < sp->ncur; k++) {
		int rc = fill(sp, &sp->cur[k]);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		struct ds_rec r;
		memcpy(&r, sp->cur[k].buf + sp->cur[k].pos, sizeof(r));
		uint64_t size = ds_rec_size(t, &r);
		if (*best == SIZE_MAX || size < *best_size) {
			*best = k;
			*best_size = size;
		}
	}
	return 0;
}

/* c's next entry (whole in its buffer): its record and directory, checked
 * against the tables they name. @return 0 or -EIO (not as written). */
static int peek_entry(const struct ds_tree *t, const struct cursor *c, struct ds_rec *r, uint32_t *dir)
{
	memcpy(r, c->buf + c->pos, sizeof(*r));
	memcpy(dir, c->buf + c->pos + sizeof(*r), sizeof(*dir));
	return *dir >= t->ndirs || r->name > NAME_MOST || r->kind >= t->kinds.n ? -EIO : 0;
}

/* The next entry of run k into the table (or, the first of its size, held
 * unless such a unique file is kept). */
static int take_entry(struct ds_tree *t, size_t k, bool first_of_size)
{
	struct ds_spill *sp = t->spill;
	struct cursor *c = &sp->cur[k];
	struct ds_rec r;
	uint32_t dir;
	if (peek_entry(t, c, &r, &dir))
		return -EIO;
	const char *name = (const char *)c->buf + c->pos + ENTRY_HEAD;
	c->pos += ENTRY_HEAD + r.name;
	if (first_of_size && !keeps_unique(t, ds_rec_size(t, &r), dir)) {
		drop_first(t); /* (the one before had no second) */
		sp->first.r = r;
		sp->first.dir = dir;
		memcpy(sp->first.name, name, r.name);
		sp->first.has = true;
		return 0;
	}
	int rc = 0;
	if (sp->first.has) /* a second of its size: the first joins the table too */
		rc = ds_rec_append(t, &sp->first.r, sp->first.dir, sp->first.name, sp->first.r.name);
	sp->first.has = false;
	return rc ? rc : ds_rec_append(t, &r, dir, name, r.name);
}

int ds_spill_band(struct ds_tree *t, bool *more)
{
	struct ds_spill *sp = t->spill;
	int rc = sp->cur ? 0 : merge_start(t);
	uint64_t last = 0;
	uint32_t taken = 0;
	bool any = false;
	*more = false;
	sp->first.has = false;
	while (rc == 0) {
		size_t k;
		uint64_t size = 0;
		rc = next_run(t, &k, &size);
		if (rc || k == SIZE_MAX)
			break;
		bool group = any && size == last;
		/* a size group is never split; a band holds DS_SPILL_LEAST at least,
		 * and half as many as were kept (each band's matching goes over
		 * the records kept too: where most are kept, a served scan's
		 * unique files or a tree of copies, bands of the least would go
		 * over them once each, a square of the files; so at most three
		 * times the files in all), and a large group that would pass the
		 * budget begins a band */
		uint64_t big = taken && !group ? big_count(sp, size) : 0;
		/* (a record, matching's bytes for it, its name and its run) */
		uint64_t more_bytes = big * (sizeof(struct ds_rec) + sp->per_rec + 24);
		if (!group && ((taken >= DS_SPILL_LEAST && taken >= sp->kept / 2) || big) && over_with(t, more_bytes)) {
			*more = true;
			break;
		}
		/* a group's first record waits for its second: one alone is never
		 * read back (unless unique files are kept) */
		rc = take_entry(t, k, !group);
		taken = t->nrecs - sp->kept;
		last = size;
		any = true;
	}
	if (rc == 0)
		drop_first(t); /* (a band ends between groups) */
	sp->first.has = false;
	if (rc == -EIO)
		ds_report(t->core, sp->dir, rc);
	if (rc || !*more)
		merge_free(sp);
	return rc;
}

/* ---- the sizes alone ---- */

/* Skip c's entries of size, noting whether one of them is wanted. @return
 * 1: c has more, 0: its run is over, or a negative code. */
static int skip_size(const struct ds_tree *t, struct cursor *c, uint64_t size, bool ref, bool *wanted)
{
	int rc;
	while ((rc = fill(t->spill, c)) == 1) {
		struct ds_rec r;
		uint32_t dir;
		if (peek_entry(t, c, &r, &dir))
			return -EIO;
		if (ds_rec_size(t, &r) != size)
			return 1;
		*wanted |= t->args[t->dirs[dir].arg].reference == ref;
		c->pos += ENTRY_HEAD + r.name;
	}
	return rc;
}

/* The least size at the head of the runs that are not over, or false. */
static int least_size(const struct ds_tree *t, struct cursor *cur, size_t n, uint64_t *size)
{
	bool any = false;
	for (size_t k = 0; k < n; k++) {
		int rc = fill(t->spill, &cur[k]);
		if (rc < 0)
			return rc;
		struct ds_rec r;
		if (rc == 0)
			continue;
		memcpy(&r, cur[k].buf + cur[k].pos, sizeof(r));
		if (!any || ds_rec_size(t, &r) < *size)
			*size = ds_rec_size(t, &r);
		any = true;
	}
	return any;
}

int ds_spill_sizes(struct ds_tree *t, bool ref, int (*fn)(void *user, uint64_t size), void *user)
{
	struct ds_spill *sp = t->spill;
	if (t->nrecs > sp->kept)
		return -EINVAL; /* (the table must be out: ds_spill_out()) */
	struct cursor *cur = calloc(sp->nruns ? sp->nruns : 1, sizeof(*cur));
	int rc = cur ? 0 : -ENOMEM;
	for (size_t k = 0; rc == 0 && k < sp->nruns; k++) {
		cur[k] = (struct cursor){ sp->runs[k].off, sp->runs[k].end, malloc(READ_LEAST), 0, 0, READ_LEAST };
		rc = cur[k].buf ? 0 : -ENOMEM;
	}
	uint64_t size = 0;
	while (rc == 0 && (rc = least_size(t, cur, sp->nruns, &size)) == 1) {
		bool wanted = false;
		for (size_t k = 0; rc >= 0 && k < sp->nruns; k++)
			rc = skip_size(t, &cur[k], size, ref, &wanted);
		rc = rc < 0 ? rc : wanted ? fn(user, size) : 0;
	}
	for (size_t k = 0; cur && k < sp->nruns; k++)
		free(cur[k].buf);
	free(cur);
	if (rc == -EIO)
		ds_report(t->core, sp->dir, rc);
	return rc;
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
		bool unique = keeps_unique(t, ds_rec_size(t, r), ds_rec_dir(t, i)) &&
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
		const char *name = ds_rec_name(t, &r);
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
