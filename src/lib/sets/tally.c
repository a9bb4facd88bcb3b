/* SPDX-License-Identifier: MIT */
/* tally.c: each directory's files and the bytes of them that have a copy,
 * rolled up the tree as du does, over a finished scan; and the directories a
 * set's files lie in, which overlap.c counts pairs from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/sets.h"
#include "sets/tally.h"

uint64_t ds_share_need(uint64_t whole, unsigned percent)
{
	/* ceil(whole * percent / 100), whole split so nothing overflows */
	return whole / 100 * percent + (whole % 100 * percent + 99) / 100;
}

bool ds_share_at_least(uint64_t part, uint64_t whole, unsigned percent)
{
	return part >= ds_share_need(whole, percent);
}

static void add_file(struct ds_tally *t, uint32_t dir, uint64_t size, bool dup)
{
	t->files[dir]++;
	t->bytes[dir] += size;
	if (dup) {
		t->dupfiles[dir]++;
		t->dupbytes[dir] += size;
	}
}

static int add_unique(void *user, uint32_t rec)
{
	struct ds_results *s = user;
	add_file(s->tally, ds_rec_dir(s->tree, rec), ds_rec_size(s->tree, ds_rec(s->tree, rec)), false);
	return 0;
}

/* A set's file of this host (another host's are in a scan of their own). */
static bool local_file(const struct ds_results *s, const struct dupscan_file *f)
{
	return f->tree == s->tree && !(f->idx & DS_OUTSIDE);
}

/* As ds_each_unique() tells a unique file (a record leaving is in no set,
 * nor -H's; one alone in its size, never back from the spill, was alone
 * in its group: settled unread). */
static bool unique_left(const struct ds_tree *t, uint32_t rec, const struct ds_rec *r)
{
	if (rec == DS_NONE)
		return ds_rec_listed(r);
	return ds_rec_unique(r, ds_rec(t, ds_rec_rep(t, rec)));
}

void ds_tally_gone(void *user, const struct ds_tree *t, uint32_t rec, const struct ds_rec *r, uint32_t dir)
{
	struct ds_results *s = user;
	if (s->gone_lost || !unique_left(t, rec, r))
		return;
	size_t n = t->ndirs ? t->ndirs : 1; /* (the walk is over: no directory comes after) */
	if (!s->gone_files) {
		s->gone_files = calloc(n, sizeof(*s->gone_files));
		s->gone_bytes = calloc(n, sizeof(*s->gone_bytes));
	}
	if (!s->gone_files || !s->gone_bytes || dir >= t->ndirs) {
		s->gone_lost = true;
		return;
	}
	s->gone_files[dir]++;
	s->gone_bytes[dir] += ds_rec_size(t, r);
}

static int count_files(struct ds_results *s)
{
	if (s->gone_lost)
		return -ENOMEM;
	for (uint32_t d = 0; s->gone_files && d < s->tree->ndirs; d++) {
		s->tally->files[d] += s->gone_files[d];
		s->tally->bytes[d] += s->gone_bytes[d];
	}
	int rc = ds_each_unique(s, add_unique, s);
	for (size_t i = 0; rc == 0 && i < s->nsets; i++) {
		const struct dupscan_set *set = &s->sets[i];
		for (size_t k = 0; !set->dirs && k < set->count; k++) {
			const struct dupscan_file *f = &set->files[k];
			if (local_file(s, f))
				add_file(s->tally, ds_file_dir(f), ds_rec_size(s->tree, f->rec), true);
		}
	}
	return rc;
}

/* Each directory's figures to its parent's, deepest first: a directory is
 * added after its parent, so its number is larger. */
static void roll_up(const struct ds_results *s, struct ds_tally *t)
{
	for (uint32_t d = t->ndirs; d-- > 0;) {
		uint32_t p = s->tree->dirs[d].parent;
		if (p == DS_NONE)
			continue;
		t->files[p] += t->files[d];
		t->bytes[p] += t->bytes[d];
		t->dupfiles[p] += t->dupfiles[d];
		t->dupbytes[p] += t->dupbytes[d];
	}
	for (uint32_t d = 0; d < t->ndirs; d++) {
		uint32_t p = s->tree->dirs[d].parent;
		t->depth[d] = p == DS_NONE ? 0 : t->depth[p] + 1;
	}
}

int ds_tally(struct ds_results *s)
{
	if (s->tally)
		return 0;
	if (!s->core->ran || s->tree->from_report)
		return DUPSCAN_E_STATE;
	if (s->core->opt.dir_sets)
		return DUPSCAN_E_OPTION;
	struct ds_tally *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	size_t n = s->tree->ndirs ? s->tree->ndirs : 1;
	t->ndirs = s->tree->ndirs;
	t->files = calloc(n, sizeof(*t->files));
	t->bytes = calloc(n, sizeof(*t->bytes));
	t->dupfiles = calloc(n, sizeof(*t->dupfiles));
	t->dupbytes = calloc(n, sizeof(*t->dupbytes));
	t->depth = calloc(n, sizeof(*t->depth));
	s->tally = t;
	int rc = t->files && t->bytes && t->dupfiles && t->dupbytes && t->depth ? count_files(s) : -ENOMEM;
	if (rc) {
		ds_tally_free(s);
		return rc < 0 ? rc : -ENOMEM;
	}
	roll_up(s, t);
	return ds_tally_shared(s);
}

int ds_tally_shared(struct ds_results *s)
{
	struct ds_tally *t = s->tally;
	if (!t || !s->shared_files || t->sharedbytes)
		return 0;
	if (!(t->sharedbytes = calloc(t->ndirs ? t->ndirs : 1, sizeof(*t->sharedbytes))))
		return -ENOMEM;
	for (size_t i = 0, off = 0; i < s->nsets; off += s->sets[i++].count)
		for (size_t k = 0; !s->sets[i].dirs && k < s->sets[i].count; k++)
			if (local_file(s, &s->sets[i].files[k]))
				t->sharedbytes[ds_file_dir(&s->sets[i].files[k])] += s->shared_files[off + k];
	for (uint32_t d = t->ndirs; d-- > 0;)
		if (s->tree->dirs[d].parent != DS_NONE)
			t->sharedbytes[s->tree->dirs[d].parent] += t->sharedbytes[d];
	return 0;
}

void ds_tally_free(struct ds_results *s)
{
	struct ds_tally *t = s->tally;
	if (!t)
		return;
	free(t->files);
	free(t->bytes);
	free(t->dupfiles);
	free(t->dupbytes);
	free(t->sharedbytes);
	free(t->depth);
	free(t->pairs);
	free(t);
	s->tally = NULL;
}

/* ---- a set's directories ---- */

int ds_set_dirs_init(struct ds_set_dirs *sd, const struct ds_results *s)
{
	memset(sd, 0, sizeof(*sd));
	size_t n = s->tree->ndirs ? s->tree->ndirs : 1;
	sd->stamp = calloc(n, sizeof(*sd->stamp));
	sd->count = calloc(n, sizeof(*sd->count));
	sd->mask = calloc(n, sizeof(*sd->mask));
	bool ok = sd->stamp && sd->count && sd->mask;
	if (ok && s->shared_files) {
		sd->shared = calloc(n, sizeof(*sd->shared));
		sd->off = malloc((s->nsets ? s->nsets : 1) * sizeof(*sd->off));
		ok = sd->shared && sd->off;
		for (size_t i = 0, off = 0; ok && i < s->nsets; off += s->sets[i++].count)
			sd->off[i] = off;
	}
	if (ok)
		return 0;
	ds_set_dirs_free(sd);
	return -ENOMEM;
}

void ds_set_dirs_free(struct ds_set_dirs *sd)
{
	free(sd->stamp);
	free(sd->count);
	free(sd->mask);
	free(sd->list);
	free(sd->shared);
	free(sd->off);
	memset(sd, 0, sizeof(*sd));
}

int ds_set_dirs_count(const struct ds_results *s, struct ds_set_dirs *sd, size_t i)
{
	const struct dupscan_set *set = &s->sets[i];
	uint32_t mark = ++sd->gen; /* a count of its own: the passes take the sets in other orders */
	sd->n = 0;
	sd->k = (uint32_t)set->count;
	sd->size = ds_set_size(set);
	uint32_t here = 0;
	for (size_t m = 0; !set->dirs && m < set->count; m++) {
		if (!local_file(s, &set->files[m]))
			continue;
		uint64_t bit = here < 64 ? 1ull << here : 0;
		here++;
		for (uint32_t d = ds_file_dir(&set->files[m]); d != DS_NONE; d = s->tree->dirs[d].parent) {
			if (sd->stamp[d] != mark) {
				if (DS_GROW(sd->list, sd->cap, sd->n + 1))
					return -ENOMEM;
				sd->stamp[d] = mark;
				sd->count[d] = 0;
				sd->mask[d] = 0;
				if (sd->shared)
					sd->shared[d] = 0;
				sd->list[sd->n++] = d;
			}
			sd->count[d]++;
			sd->mask[d] |= bit;
			if (sd->shared)
				sd->shared[d] += s->shared_files[sd->off[i] + m];
		}
	}
	sd->masked = here <= 64;
	return 0;
}

/* ---- the library's calls ---- */

int ds_tally_dirs(struct ds_results *s)
{
	return s ? ds_tally(s) : -EINVAL;
}

size_t ds_dir_count(const struct ds_results *s)
{
	return s && s->tally ? s->tally->ndirs : 0;
}

size_t ds_tally_dir_path(const struct ds_results *s, size_t dir, char *buf, size_t cap)
{
	if (dir >= ds_dir_count(s))
		return 0;
	return ds_dir_path_in(s->tree, (uint32_t)dir, buf, cap);
}

size_t ds_dir_parent(const struct ds_results *s, size_t dir)
{
	if (dir >= ds_dir_count(s) || s->tree->dirs[dir].parent == DS_NONE)
		return SIZE_MAX;
	return s->tree->dirs[dir].parent;
}

unsigned ds_dir_depth(const struct ds_results *s, size_t dir)
{
	return dir < ds_dir_count(s) ? s->tally->depth[dir] : 0;
}

uint64_t ds_dir_tally(const struct ds_results *s, size_t dir, int what)
{
	if (dir >= ds_dir_count(s))
		return 0;
	const struct ds_tally *t = s->tally;
	switch (what) {
	case DUPSCAN_TALLY_FILES: return t->files[dir];
	case DUPSCAN_TALLY_BYTES: return t->bytes[dir];
	case DUPSCAN_TALLY_DUP_FILES: return t->dupfiles[dir];
	case DUPSCAN_TALLY_DUP_BYTES: return t->dupbytes[dir];
	case DUPSCAN_TALLY_SHARED_BYTES: return t->sharedbytes ? t->sharedbytes[dir] : 0;
	default: return 0;
	}
}
