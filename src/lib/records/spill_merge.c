/* SPDX-License-Identifier: MIT */
/* spill_merge.c: the spilled runs read back merged by size (spill.c writes
 * them): a band of whole size groups at a time into the table, a file alone
 * in its size never brought back; or their sizes alone, for another host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "records/spill_state.h"

/* The held first record of its size, alone in it: it goes. */
static void drop_first(struct ds_tree *t)
{
	struct ds_spill *sp = t->spill;
	if (sp->first.has && sp->on_drop)
		sp->on_drop(sp->drop_user, t, DS_NONE, &sp->first.r, sp->first.dir);
	sp->first.has = false;
}

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
	if (first_of_size && !ds_spill_keeps_unique(t, ds_rec_size(t, &r), dir)) {
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
		if (!group && ((taken >= DS_SPILL_LEAST && taken >= sp->kept / 2) || big) && ds_spill_over_with(t, more_bytes)) {
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
		ds_spill_merge_free(sp);
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

