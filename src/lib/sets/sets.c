/* SPDX-License-Identifier: MIT */
/* sets.c: turn confirmed classes into ordered duplicate sets and unique files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/sets.h"
#include "cache/cache_run.h"

static int cmp_set(void *ctx, const void *pa, const void *pb)
{
	const struct dupscan_set *a = pa, *b = pb;
	return ds_cmp_file(ctx, &a->files[0], &b->files[0]);
}

/* A report's sets in its order (a record's arg is its set's number there). */
static int cmp_report_set(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct dupscan_set *a = pa, *b = pb;
	uint32_t x = ds_file_arg(&a->files[0]), y = ds_file_arg(&b->files[0]);
	return x < y ? -1 : x > y;
}

uint32_t ds_file_class(const struct ds_results *s, uint32_t i)
{
	uint32_t rep = ds_rec_rep(s->tree, i);
	const struct ds_rec *r = ds_rec(s->tree, rep);
	if (ds_rec_size(s->tree, r) == 0)
		return DS_EMPTY_CLASS;
	uint32_t cls = ds_index_class(&s->tree->index, rep);
	return cls != DS_NONE ? cls : rep;
}

/* ---- sets ---- */

struct collect {
	struct ds_results *s;
	/* the records in a set, (record << 32 | set), sorted once all are in:
	 * a few of a scan's records, not 4 bytes for each (set_of()) */
	uint64_t *of;
	size_t nof, capof;
	uint32_t *members;     /* per set: number of inodes */
	uint32_t nsets, cap;
	uint32_t *buf;
	size_t nbuf, capbuf;
};

static int set_add(struct collect *c, uint32_t rec, uint32_t id)
{
	if (DS_GROW(c->of, c->capof, c->nof + 1))
		return -ENOMEM;
	c->of[c->nof++] = (uint64_t)rec << 32 | id;
	return 0;
}

static int cmp_u32(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

/* Record rec's set, or DS_NONE (c->of sorted). */
static uint32_t set_of(const struct collect *c, uint32_t rec)
{
	size_t lo = 0, hi = c->nof;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t r = (uint32_t)(c->of[mid] >> 32);
		if (r == rec)
			return (uint32_t)c->of[mid];
		if (r < rec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return DS_NONE;
}

static int new_set(struct collect *c, uint32_t *out)
{
	if (c->nsets == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		uint32_t *m = realloc(c->members, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		c->members = m;
		c->cap = cap;
	}
	c->members[c->nsets] = 0;
	*out = c->nsets++;
	return 0;
}

/* Members of a node (their numbers in the index) by class. */
static int cmp_cls(void *ctx, const void *pa, const void *pb)
{
	const struct ds_results *s = ctx;
	uint32_t a = s->tree->index.mem[*(const uint32_t *)pa].cls, b = s->tree->index.mem[*(const uint32_t *)pb].cls;
	return a < b ? -1 : a > b;
}

/* One index node may hold several classes (equal hashes, different bytes). */
static int visit_node(void *user, const struct ds_node *node)
{
	struct collect *c = user;
	struct ds_results *s = c->s;
	c->nbuf = 0;
	const struct ds_ixmember *mem = s->tree->index.mem;
	for (uint32_t m = node->head; m != DS_NONE; m = mem[m].next) {
		if (ds_rec(s->tree, mem[m].rec)->flags & DS_F_DROPPED)
			continue;
		if (DS_GROW(c->buf, c->capbuf, c->nbuf + 1))
			return -ENOMEM;
		c->buf[c->nbuf++] = m;
	}
	int rc = ds_sort(c->buf, c->nbuf, sizeof(*c->buf), cmp_cls, s);
	for (size_t i = 0; rc == 0 && i < c->nbuf;) {
		size_t j = i + 1;
		while (j < c->nbuf && mem[c->buf[j]].cls == mem[c->buf[i]].cls)
			j++;
		if (j - i >= 2) {
			uint32_t id;
			rc = new_set(c, &id);
			for (size_t k = i; rc == 0 && k < j; k++)
				rc = set_add(c, mem[c->buf[k]].rec, id);
			if (rc == 0)
				c->members[id] = (uint32_t)(j - i);
		}
		i = j;
	}
	return rc;
}

/* -H: an inode reached by two paths is a set of its own (c->of sorted,
 * and sorted again after). */
static int link_sets(struct ds_results *s, struct collect *c)
{
	size_t nreps = 0, cap = 0;
	uint32_t *reps = NULL;
	int rc = 0;
	for (uint32_t i = 0; i < s->tree->nrecs && rc == 0; i++) {
		const struct ds_rec *r = ds_rec(s->tree, i);
		uint32_t rep = ds_rec_rep(s->tree, i);
		if (rep == i || !ds_rec_listed(r) || !ds_rec_listed(ds_rec(s->tree, rep)) || set_of(c, rep) != DS_NONE)
			continue;
		rc = DS_GROW(reps, cap, nreps + 1);
		if (rc == 0)
			reps[nreps++] = rep;
	}
	/* an inode's names after its first name the same inode: one set */
	if (rc == 0)
		rc = ds_sort(reps, nreps, sizeof(*reps), cmp_u32, NULL);
	for (size_t k = 0; rc == 0 && k < nreps; k++) {
		uint32_t id;
		if (k > 0 && reps[k] == reps[k - 1])
			continue;
		rc = new_set(c, &id);
		if (rc == 0)
			rc = set_add(c, reps[k], id);
		if (rc == 0)
			c->members[id] = 1;
	}
	free(reps);
	return rc ? rc : ds_sort(c->of, c->nof, sizeof(*c->of), ds_cmp_u64, NULL);
}

/* Is record i listed in a set (its set's id in *id)? Representatives only, or
 * every path of their inodes with -H. */
static bool member(const struct ds_results *s, const struct collect *c, uint32_t i, uint32_t *id)
{
	uint32_t rep = ds_rec_rep(s->tree, i);
	if (!(s->core->opt.hard_links || rep == i) || !ds_rec_listed(ds_rec(s->tree, i)))
		return false;
	/* only a member of the index is in a set, but for -H's sets of links */
	*id = ds_index_has(&s->tree->index, rep) || s->core->opt.hard_links ? set_of(c, rep) : DS_NONE;
	return *id != DS_NONE;
}

/* The sets' files: each member's path, in the result arena. */
static int fill_sets(struct ds_results *s, const struct collect *c)
{
	uint32_t *count = calloc(c->nsets ? c->nsets : 1, sizeof(*count));
	s->sets = malloc((c->nsets ? c->nsets : 1) * sizeof(*s->sets));
	int rc = count && s->sets ? 0 : -ENOMEM;
	uint32_t id;
	for (uint32_t i = 0; rc == 0 && i < s->tree->nrecs; i++)
		if (member(s, c, i, &id))
			count[id]++;
	for (id = 0; rc == 0 && id < c->nsets; id++) {
		s->sets[id] = (struct dupscan_set){ ds_arena_alloc(&s->tree->out, count[id] * sizeof(struct dupscan_file) + 1),
						    0, false, false, false, 0 };
		if (!s->sets[id].files)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; rc == 0 && i < s->tree->nrecs; i++) {
		if (!member(s, c, i, &id))
			continue;
		char *p = ds_rec_path_dup(s->tree, i);
		if (!p)
			rc = -ENOMEM;
		else
			s->sets[id].files[s->sets[id].count++] = ds_file_of(s->tree, p, i, ds_rel_offset(s->tree, ds_rec_dir(s->tree, i)));
	}
	free(count);
	return rc;
}

/* One set made final: in the chosen order (a report's in its own), -I
 * applied, and whether a member is in it by a cache proof (and since when). */
static int finish_set(struct ds_results *s, struct dupscan_set *set)
{
	/* a report's sets keep its order: its first file may have been put first to be kept */
	set->report = s->tree->from_report;
	int rc = set->report ? 0 : ds_sort(set->files, set->count, sizeof(*set->files), ds_cmp_file, s);
	if (rc == 0 && s->core->opt.isolate) {
		/* -I: the others must come from another argument than the first */
		size_t n = 1;
		for (size_t k = 1; k < set->count; k++)
			if (ds_file_arg(&set->files[k]) != ds_file_arg(&set->files[0]))
				set->files[n++] = set->files[k];
		set->count = n;
	}
	set->cached = false;
	set->proven_ns = 0;
	for (size_t k = 0; k < set->count; k++) {
		const struct ds_rec *r = ds_file_inode(&set->files[k]) ? ds_file_inode(&set->files[k]) : set->files[k].rec;
		struct ds_proof pf;
		if (!(r->flags & DS_F_TRUSTED) || set->files[k].idx == DS_NONE || !ds_cache_proof(s->cache, set->files[k].idx, &pf))
			continue;
		set->proven_ns = set->cached && set->proven_ns < pf.at ? set->proven_ns : pf.at;
		set->cached = true;
	}
	if (set->cached && (!s->cache->oldest_proof || set->proven_ns < s->cache->oldest_proof))
		s->cache->oldest_proof = set->proven_ns;
	return rc;
}

int ds_build_sets(struct ds_results *s)
{
	struct collect c = { .s = s };
	/* matching is over: from here on classes are looked up by record */
	int rc = ds_index_seal(&s->tree->index);
	if (rc == 0)
		rc = ds_index_walk(&s->tree->index, visit_node, &c);
	if (rc == 0)
		rc = ds_sort(c.of, c.nof, sizeof(*c.of), ds_cmp_u64, NULL);
	if (rc == 0 && s->core->opt.hard_links)
		rc = link_sets(s, &c);
	if (rc == 0)
		rc = fill_sets(s, &c);
	/* given back before the sets are sorted: the largest moment of a run with many sets */
	free(c.buf);
	free(c.members);
	free(c.of);
	if (rc)
		return rc;
	s->nsets = c.nsets;
	return ds_finish_sets(s);
}

/* With reference paths, does set hold a reference file and another (the
 * chosen order puts them first: records/order.c)? Always true without. */
static bool set_asks(const struct ds_results *s, const struct dupscan_set *set)
{
	if (!s->tree->references || !set->count)
		return true;
	return ds_file_reference(&set->files[0]) && !ds_file_reference(&set->files[set->count - 1]);
}

int ds_finish_sets(struct ds_results *s)
{
	/* sets of one, after -I, are no sets */
	size_t kept = 0;
	int rc = 0;
	for (size_t id = 0; rc == 0 && id < s->nsets; id++) {
		rc = finish_set(s, &s->sets[id]);
		if (s->sets[id].count >= 2 && set_asks(s, &s->sets[id]))
			s->sets[kept++] = s->sets[id];
	}
	if (rc == 0) {
		s->nsets = kept;
		rc = ds_sort(s->sets, s->nsets, sizeof(*s->sets), s->tree->from_report ? cmp_report_set : cmp_set, s);
	}
	return rc;
}

int ds_each_unique(struct ds_results *s, int (*fn)(void *user, uint32_t rec), void *user)
{
	/* a file is unique when its inode belongs to no class and it is no -H set,
	 * its group was matched to the end (not after a cancel), and it joined
	 * no set across hosts */
	bool *multi = calloc(s->tree->nrecs ? s->tree->nrecs : 1, sizeof(*multi));
	if (!multi)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->tree->nrecs; i++)
		if (ds_rec_rep(s->tree, i) != i && ds_rec_listed(ds_rec(s->tree, i)))
			multi[ds_rec_rep(s->tree, i)] = true;
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < s->tree->nrecs; i++) {
		const struct ds_rec *r = ds_rec(s->tree, i);
		uint32_t ri = ds_rec_rep(s->tree, i);
		const struct ds_rec *rep = ds_rec(s->tree, ri);
		if (!ds_rec_unique(r, rep) || ds_index_has(&s->tree->index, ri) || (s->core->opt.hard_links && multi[ri]))
			continue;
		rc = fn(user, i);
	}
	free(multi);
	return rc;
}

static int count_one(void *user, uint32_t rec)
{
	(void)rec;
	++*(size_t *)user;
	return 0;
}

static int list_one(void *user, uint32_t rec)
{
	struct ds_results *s = user;
	char *p = ds_rec_path_dup(s->tree, rec);
	if (!p)
		return -ENOMEM;
	s->uniques[s->nuniques++] = ds_file_of(s->tree, p, rec, ds_rel_offset(s->tree, ds_rec_dir(s->tree, rec)));
	return 0;
}

int ds_build_uniques(struct ds_results *s)
{
	if (s->uniques_built)
		return 0;
	free(s->uniques); /* what a failed call left */
	s->uniques = NULL;
	size_t n = 0;
	int rc = ds_each_unique(s, count_one, &n);
	if (rc == 0 && !(s->uniques = malloc((n ? n : 1) * sizeof(*s->uniques))))
		rc = -ENOMEM;
	s->nuniques = 0;
	if (rc == 0)
		rc = ds_each_unique(s, list_one, s);
	if (rc)
		return rc;
	s->uniques_built = true;
	return ds_sort(s->uniques, s->nuniques, sizeof(*s->uniques), ds_cmp_file, s);
}

void ds_free_results(struct ds_results *s)
{
	free(s->missing);
	s->missing = NULL;
	s->nmissing = 0;
	s->nasked = 0;
	s->missing_built = false;
	free(s->shared);
	free(s->shared_files);
	s->shared = NULL;
	s->shared_files = NULL;
	free(s->sets);
	free(s->uniques);
	s->sets = NULL;
	s->uniques = NULL;
	s->nsets = s->nuniques = 0;
	free(s->gone_files);
	free(s->gone_bytes);
	s->gone_files = s->gone_bytes = NULL;
	ds_arena_free(&s->tree->out);
}
