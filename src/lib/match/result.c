/* SPDX-License-Identifier: MIT */
/* result.c: the effects of matching one size group, held until their turn, so
 * reports, stage callbacks and the index see groups in one fixed order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "match/result.h"
#include "cache/cache_run.h"

#define GROW(arr, n, cap) DS_GROW(arr, cap, (n) + 1)

void ds_result_clear(struct ds_result *r)
{
	for (size_t i = 0; i < r->nerr; i++)
		free(r->err[i].path);
	r->nins = r->nruns = r->npairs = r->nerr = r->nstg = r->nrecs = r->nnotes = r->nproved = r->nsettled = 0;
	r->files = 0;
	r->bytes = 0;
	r->rc = 0;
}

int ds_result_take_errors(struct ds_result *dst, struct ds_result *src)
{
	for (size_t i = 0; i < src->nerr; i++) {
		if (GROW(dst->err, dst->nerr, dst->caperr))
			return -ENOMEM;
		dst->err[dst->nerr++] = src->err[i];
		src->err[i].path = NULL;
	}
	src->nerr = 0;
	return 0;
}

void ds_result_free(struct ds_result *r)
{
	ds_result_clear(r);
	free(r->ins);
	free(r->runs);
	free(r->pairs);
	free(r->notes);
	free(r->proved);
	free(r->err);
	free(r->stg);
	free(r->recs);
	free(r->settled);
	memset(r, 0, sizeof(*r));
}

static int insert(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial, uint64_t full, uint32_t unhashed)
{
	struct ds_result *r = c->res;
	if (GROW(r->ins, r->nins, r->capins))
		return -ENOMEM;
	bool new_pair = r->npairs == 0 || r->pairs[r->npairs - 1].partial != partial || r->pairs[r->npairs - 1].full != full;
	if (new_pair) {
		if (GROW(r->pairs, r->npairs, r->cappairs))
			return -ENOMEM;
		r->pairs[r->npairs++] = (struct ds_hash_pair){ partial, full };
	}
	uint32_t pair = (uint32_t)(r->npairs - 1) | unhashed;
	if (new_pair || r->nruns == 0 || r->runs[r->nruns - 1].cls != cls || r->runs[r->nruns - 1].pair != pair) {
		if (GROW(r->runs, r->nruns, r->capruns))
			return -ENOMEM;
		r->runs[r->nruns++] = (struct ds_ins_run){ (uint32_t)r->nins, cls, pair };
	}
	r->ins[r->nins++] = rec;
	return 0;
}

int ds_result_insert(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial, uint64_t full)
{
	return insert(c, rec, cls, partial, full, 0);
}

int ds_result_insert_unhashed(struct ds_ctx *c, uint32_t rec, uint32_t cls, uint64_t partial)
{
	return insert(c, rec, cls, partial, 0, DS_PAIR_UNHASHED);
}

/* Past run k's last insert. */
static size_t run_end(const struct ds_result *r, size_t k)
{
	return k + 1 < r->nruns ? r->runs[k + 1].first : r->nins;
}

/* The last run starting at or before insert i. */
static size_t run_of(const struct ds_result *r, size_t i)
{
	size_t lo = 0, hi = r->nruns;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->runs[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

struct ds_insert ds_result_ins(const struct ds_result *r, size_t i)
{
	size_t k = run_of(r, i);
	return (struct ds_insert){ r->ins[i], r->runs[k].cls, r->runs[k].pair & ~DS_PAIR_UNHASHED };
}

bool ds_result_ins_unhashed(const struct ds_result *r, size_t i)
{
	return r->runs[run_of(r, i)].pair & DS_PAIR_UNHASHED;
}

int ds_result_note(struct ds_ctx *c, const struct ds_hashed *h)
{
	struct ds_result *r = c->res;
	if (!c->s->cache->run)
		return 0;
	if (GROW(r->notes, r->nnotes, r->capnotes))
		return -ENOMEM;
	r->notes[r->nnotes++] = *h;
	/* what this run worked out goes to the log, first-block hashes too: a
	 * killed run's next need not open the files they told apart */
	if (!h->cached)
		ds_cache_log_add(c->s->cache, h->rec, h->partial, h->full, h->has_full, NULL);
	return 0;
}

int ds_result_prove(struct ds_ctx *c, uint32_t rec, const struct ds_proof *pf, bool fresh, uint64_t partial,
		    uint64_t full, bool has_full)
{
	struct ds_result *r = c->res;
	ds_cache_log_add(c->s->cache, rec, partial, full, has_full, pf);
	if (!fresh)
		return 0;
	if (GROW(r->proved, r->nproved, r->capproved))
		return -ENOMEM;
	r->proved[r->nproved++] = (struct ds_proved){ pf->cls, rec,
						      (uint8_t)((pf->apart ? DS_PROVED_APART : 0) | (pf->alone ? DS_PROVED_ALONE : 0)) };
	return 0;
}

int ds_result_stage(struct ds_ctx *c, int stage, const uint32_t *recs, size_t n)
{
	struct ds_result *r = c->res;
	if (!c->s->core->cb.on_stage || n < 2)
		return 0;
	if (GROW(r->stg, r->nstg, r->capstg))
		return -ENOMEM;
	if (DS_GROW(r->recs, r->caprecs, r->nrecs + n))
		return -ENOMEM;
	memcpy(r->recs + r->nrecs, recs, n * sizeof(*recs));
	r->stg[r->nstg++] = (struct ds_stage_event){ stage, (uint32_t)r->nrecs, (uint32_t)n };
	r->nrecs += n;
	return 0;
}

void ds_fail_path(struct ds_ctx *c, struct ds_rec *rec, const char *path, int code)
{
	rec->flags |= DS_F_DROPPED;
	struct ds_result *r = c->res;
	if (GROW(r->err, r->nerr, r->caperr)) {
		r->rc = -ENOMEM;
		return;
	}
	/* without memory for the path the report still counts, with a placeholder */
	r->err[r->nerr++] = (struct ds_error){ strdup(path), code };
}

void ds_fail(struct ds_ctx *c, uint32_t i, int code)
{
	struct ds_rec *rec = ds_rec(c->s->tree, i);
	char *path = ds_rec_path_alloc(c->s->tree, i), nbuf[DS_NAME_BUF];
	ds_fail_path(c, rec, path ? path : ds_rec_name(c->s->tree, rec, nbuf), code);
	free(path);
}

/* The stage callback gets the group's files with their paths, in the chosen order. */
static int call_stage(struct ds_match *s, int stage, const uint32_t *ri, size_t n)
{
	int rc = 0;
	size_t made = 0;
	struct dupscan_file *files = malloc(n * sizeof(*files));
	const dupscan_file **ptrs = malloc(n * sizeof(*ptrs));
	if (!files || !ptrs) {
		rc = -ENOMEM;
		goto out;
	}
	for (; made < n; made++) {
		char *p = ds_rec_path_alloc(s->tree, ri[made]);
		if (!p) {
			rc = -ENOMEM;
			goto out;
		}
		files[made] = ds_file_of(s->tree, p, ri[made], ds_rel_offset(s->tree, ds_rec_dir(s->tree, ri[made])));
	}
	rc = ds_sort(files, n, sizeof(*files), ds_cmp_file, s);
	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			ptrs[i] = &files[i];
		s->core->cb.on_stage(s->core->cb.stage_user, stage, ptrs, n);
	}
out:
	for (size_t i = 0; i < made; i++)
		free((char *)files[i].path);
	free(ptrs);
	free(files);
	return rc;
}

int ds_result_settled(struct ds_result *r, const uint32_t *recs, size_t n)
{
	if (GROW(r->settled, r->nsettled, r->capsettled))
		return -ENOMEM;
	r->settled[r->nsettled++] = (struct ds_span){ recs, n };
	return 0;
}

int ds_result_commit(struct ds_match *s, struct ds_result *r, uint64_t *done, uint64_t total)
{
	int rc = r->rc == -ENOMEM ? -ENOMEM : 0;
	for (size_t i = 0; i < r->nerr; i++) {
		s->core->errors++;
		if (s->core->cb.on_error)
			s->core->cb.on_error(s->core->cb.error_user, r->err[i].path ? r->err[i].path : "(path unknown: out of memory)",
				    r->err[i].code);
	}
	for (size_t i = 0; rc == 0 && i < r->nstg; i++)
		rc = call_stage(s, r->stg[i].stage, r->recs + r->stg[i].first, r->stg[i].count);
	for (size_t k = 0; rc == 0 && k < r->nruns; k++) {
		const struct ds_hash_pair *hp = &r->pairs[r->runs[k].pair & ~DS_PAIR_UNHASHED];
		for (size_t i = r->runs[k].first; rc == 0 && i < run_end(r, k); i++)
			rc = ds_index_insert(&s->tree->index, r->ins[i], r->runs[k].cls, hp->partial, hp->full,
					     ds_rec_msize(s->tree, r->ins[i]));
	}
	if (s->cache->run && !s->core->opt.quick && !s->core->opt.partial_only) {
		for (size_t i = 0; rc == 0 && i < r->nnotes; i++)
			rc = ds_cache_note(s->cache, &r->notes[i]);
		for (size_t i = 0; rc == 0 && i < r->nproved; i++)
			rc = ds_cache_proved(s->cache, &r->proved[i]);
		for (size_t k = 0; rc == 0 && k < r->nruns; k++) {
			if (r->runs[k].pair & DS_PAIR_UNHASHED)
				continue; /* (twins: no hash of theirs was read) */
			const struct ds_hash_pair *hp = &r->pairs[r->runs[k].pair];
			for (size_t i = r->runs[k].first; rc == 0 && i < run_end(r, k); i++) {
				struct ds_hashed h = { .rec = r->ins[i], .has_full = true, .partial = hp->partial, .full = hp->full };
				rc = ds_cache_note(s->cache, &h);
			}
		}
	}
	for (size_t i = 0; rc == 0 && i < r->nsettled; i++)
		for (size_t x = 0; x < r->settled[i].n; x++)
			ds_rec(s->tree, r->settled[i].recs[x])->flags |= DS_F_SETTLED;
	*done += r->files;
	ds_progress_settled(s->core, r->files, r->bytes);
	/* in bands (records/spill.c), one count across them all, as the bytes callback's */
	if (rc == 0 && s->core->cb.on_progress && s->core->progress.whole)
		s->core->cb.on_progress(s->core->cb.progress_user, DUPSCAN_PHASE_MATCH,
					atomic_load(&s->core->progress.files_done), atomic_load(&s->core->progress.files_total));
	else if (rc == 0 && s->core->cb.on_progress)
		s->core->cb.on_progress(s->core->cb.progress_user, DUPSCAN_PHASE_MATCH, *done, total);
	ds_progress_report(s->core);
	return rc;
}
