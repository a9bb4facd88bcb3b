/* SPDX-License-Identifier: MIT */
/* match.c: from walked records to confirmed content classes in the index:
 * hard links, size groups, first-block hashes, full hashes and byte comparison. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "match.h"
#include "read/read.h"
#include "match/result.h"
#include "match/compare.h"
#include "match/twins.h"
#include "cache/cache_run.h"
#include "records/spill.h"

/* Files that may match: one size (with --ignore-metadata, of payload), and
 * with -1 one device, with -p one mode, owner and group (one attrs index). */
static bool same_group(const struct ds_match *s, uint32_t ia, uint32_t ib)
{
	const struct ds_rec *a = ds_rec(s->tree, ia), *b = ds_rec(s->tree, ib);
	return ds_rec_msize(s->tree, ia) == ds_rec_msize(s->tree, ib) &&
	       (!s->core->opt.one_fs || ds_rec_devi(s->tree, a) == ds_rec_devi(s->tree, b)) &&
	       (!s->core->opt.permissions || ds_rec_attr(s->tree, a) == ds_rec_attr(s->tree, b));
}

/* same_group()'s order as a key: size, then the attributes or the device. */
static uint64_t group_key(const struct ds_tree *s, uint32_t ri, uint32_t *minor)
{
	const struct ds_rec *r = ds_rec(s, ri);
	*minor = s->core->opt.permissions ? ds_rec_attr(s, r) : s->core->opt.one_fs ? ds_rec_devi(s, r) : 0;
	return ds_rec_msize(s, ri);
}

static uint64_t device_key(const struct ds_tree *s, uint32_t ri, uint32_t *minor)
{
	*minor = 0;
	return ds_rec_devi(s, ds_rec(s, ri));
}

/* Candidates order[0..n) by group: with both -1 and -p, each run of one
 * size and attributes is sorted again by device. */
static int group_order(const struct ds_match *s, uint32_t *order, size_t n)
{
	int rc = ds_sort_recs(s->tree, order, n, group_key);
	for (size_t i = 0, j; rc == 0 && s->core->opt.one_fs && s->core->opt.permissions && i < n; i = j) {
		const struct ds_rec *a = ds_rec(s->tree, order[i]);
		for (j = i + 1; j < n && ds_rec_msize(s->tree, order[j]) == ds_rec_msize(s->tree, order[i]) && ds_rec_attr(s->tree, ds_rec(s->tree, order[j])) == ds_rec_attr(s->tree, a);)
			j++;
		if (j - i > 1)
			rc = ds_sort_recs(s->tree, order + i, j - i, device_key);
	}
	return rc;
}

/* The end of the run of equal first-block hashes starting at bh[i]. */
static size_t run_end(const struct group *g, size_t i)
{
	size_t j = i + 1;
	while (j < g->nb && ds_keypos32_key(&g->bh[j]) == ds_keypos32_key(&g->bh[i]))
		j++;
	return j;
}

/* Scratch for the largest bucket, most members. */
static int bucket_scratch(struct group *g, size_t most)
{
	const struct ds_match *s = g->c->s;
	bool ok = (g->m = malloc(most * sizeof(*g->m))) != NULL;
	/* full hashes come from the sweep or the cache; a file read this run
	 * knows its first block's */
	if (ok && (s->reading->sweep || g->hv))
		ok = (g->full = malloc(most * sizeof(*g->full))) != NULL;
	if (ok && s->reading->sweep)
		ok = (g->same = malloc(most * sizeof(*g->same))) && (g->serr = malloc(most * sizeof(*g->serr)));
	if (ok && (g->cached || g->mixed) && g->trust)
		ok = (g->kn = malloc(most * sizeof(*g->kn))) != NULL;
	return ok ? 0 : -ENOMEM;
}

/* The files got, noted and sorted by first-block hash; scratch for the largest run. */
static int sort_heads(struct group *g)
{
	int rc = 0;
	if (g->hv) {
		/* hashes from the cache (kept: they know more than the keys) */
		if (!(g->bh = malloc((g->n ? g->n : 1) * sizeof(*g->bh))))
			return -ENOMEM;
		for (size_t i = 0; rc == 0 && i < g->n; i++) {
			if (!g->got[i])
				continue;
			g->bh[g->nb++] = ds_keypos32_of(g->hv[i].partial, (uint32_t)i);
			rc = ds_result_note(g->c, &g->hv[i]);
		}
	} else {
		/* files all read this run know no more than their first block's
		 * hash (the whole file's within one block): the keys, written as
		 * read, hold it; those got, packed */
		for (size_t i = 0; rc == 0 && i < g->n; i++) {
			if (!g->got[i])
				continue;
			uint64_t partial = ds_keypos32_key(&g->bh[i]);
			struct ds_hashed h = { .rec = g->idx[i], .has_full = g->size <= DS_BLOCK, .partial = partial, .full = partial };
			g->bh[g->nb++] = g->bh[i];
			rc = ds_result_note(g->c, &h);
		}
		struct ds_keypos32 *keys = realloc(g->bh, (g->nb ? g->nb : 1) * sizeof(*keys));
		g->bh = keys ? keys : g->bh;
		free(g->got);
		g->got = NULL;
	}
	if (rc == 0)
		ds_sort_by_key32(g->bh, g->nb);
	size_t most = 0;
	for (size_t i = 0, j; rc == 0 && i < g->nb; i = j) {
		j = run_end(g, i);
		most = j - i > most ? j - i : most;
	}
	return rc || most < 2 ? rc : bucket_scratch(g, most);
}

/* What is known of the file at bh[b]: whether its full hash is (with the
 * cache's, or within one block), and that hash. */
static bool known_whole(const struct group *g, size_t b)
{
	return g->hv ? g->hv[g->bh[b].pos].has_full : g->size <= DS_BLOCK;
}
static uint64_t known_hash(const struct group *g, size_t b)
{
	return g->hv ? g->hv[g->bh[b].pos].full : ds_keypos32_key(&g->bh[b]);
}

/* The run bh[i..i+k) as the bucket's members, their blocks (when kept) by
 * position in the group. @return how many came from the cache; *all_full:
 * every full hash known. */
static size_t take_members(struct group *g, size_t i, size_t k, bool *all_full)
{
	size_t from_cache_n = 0;
	*all_full = true;
	for (size_t x = 0; x < k; x++) {
		uint32_t pos = g->bh[i + x].pos;
		bool was_cached = g->cached || (g->mixed && g->stidx[pos] == DS_NONE);
		g->m[x] = (struct ds_member){ g->idx[pos], g->hold ? g->fds[pos] : -1, pos, 0, true };
		if (g->hold)
			g->fds[pos] = -1; /* the lockstep owns it now */
		if (g->full)
			g->full[x] = known_hash(g, i + x);
		*all_full = *all_full && known_whole(g, i + x);
		from_cache_n += was_cached;
		if (g->kn)
			g->kn[x] = (struct known){ g->hv[pos].full, g->hv[pos].has_full };
	}
	return from_cache_n;
}

/* Trust: a bucket with files from the cache is settled with their proofs,
 * unless none has one and none was read; files all read this run are
 * compared as without the cache. */
static bool by_proofs(const struct group *g, size_t k, size_t from_cache_n)
{
	if (!g->kn || from_cache_n == 0)
		return false;
	bool proofs = from_cache_n < k;
	for (size_t x = 0; !proofs && x < k; x++) {
		struct ds_proof pf;
		struct ds_prefix pre;
		proofs = ds_cache_proof(g->c->s->cache, g->m[x].rec, &pf) || ds_cache_prefix(g->c->s->cache, g->m[x].rec, &pre);
	}
	return proofs;
}

/* A bucket the sweep settled in disk order already: by member, the first
 * member of its class (same), its full hash and its failure. */
static bool swept_bucket(struct group *g, size_t k)
{
	const struct ds_match *s = g->c->s;
	const struct ds_sweep *sw = s->reading->sweep;
	if (!sw || g->cached || g->mixed)
		return false;
	size_t base = (size_t)(g->idx - s->reading->first_pass->order);
	for (size_t x = 0; x < k; x++)
		if (!sw->swept[base + g->m[x].hidx])
			return false;
	for (size_t x = 0; x < k; x++) {
		size_t p = base + g->m[x].hidx;
		g->same[x] = DS_NONE;
		for (size_t y = 0; y <= x && sw->rep[p] != DS_NONE && g->same[x] == DS_NONE; y++)
			if (sw->rep[base + g->m[y].hidx] == sw->rep[p])
				g->same[x] = (uint32_t)y;
		g->full[x] = sw->full[p];
		g->serr[x] = sw->err[p];
	}
	return true;
}

/* May the bucket's files be told one content by their extent maps
 * (twins.c)? Where it is about to be read whole this run, and its classes
 * are not matched across hosts by their hashes. */
static bool twins_may(const struct group *g, size_t from_cache_n, bool proofs)
{
	const struct ds_match *s = g->c->s;
	return ds_twins_any(s->reading) && g->size > DS_BLOCK && from_cache_n == 0 && !proofs && !g->cached && !g->mixed;
}

/* The files bh[i..i+k) of one first-block hash settled as a bucket; its
 * twins (files their extent maps prove one content) unread, then joined. */
static int settle_run(struct group *g, size_t i, size_t k)
{
	struct ds_ctx *c = g->c;
	const struct ds_match *s = c->s;
	uint64_t key = ds_keypos32_key(&g->bh[i]);
	bool all_full;
	size_t from_cache_n = take_members(g, i, k, &all_full);
	struct ds_twinset tw = { 0 };
	/* the first pass's twins, never read, out before anything is asked of the sweep */
	if (s->reading->first_pass)
		k = ds_pass_twins_take(c, (size_t)(g->idx - s->reading->first_pass->order), g->m, k, g->full, g->kn, &tw);
	bool proofs = by_proofs(g, k, from_cache_n);
	bool swept = swept_bucket(g, k);
	if (!swept && twins_may(g, from_cache_n, proofs))
		k = ds_bucket_twins(c, g->m, k, g->full, g->kn, &tw);
	size_t first_ins = c->res->nins;
	int rc = 0;
	if (k == 1 && g->m[0].fd >= 0)
		close(g->m[0].fd); /* left alone by its twins: unique among the files read */
	struct bucket b = { s, g->m, k, g->size, key, g->mixed ? NULL : g->blocks, g->blen, NULL, NULL, NULL, NULL };
	if (swept) {
		b.full = g->full;
		b.same = g->same;
		b.err = g->serr;
	}
	if (proofs) {
		b = (struct bucket){ s, g->m, k, g->size, key, NULL, 0, NULL, NULL, NULL, g->kn };
	} else if (from_cache_n == k) {
		/* known full hashes spare every read but the byte comparison;
		 * without them (files that differed after their first block
		 * last time), the bucket is read whole */
		b = (struct bucket){ s, g->m, k, g->size, key, NULL, 0, all_full && g->full ? g->full : NULL, NULL, NULL, NULL };
	}
	if (k >= 2)
		rc = ds_match_bucket(c, &b);
	if (rc == 0 && tw.n)
		rc = ds_twins_join(c, first_ins, &tw, key);
	free(tw.v);
	return rc;
}

/* Each run of equal first-block hashes as a bucket; a unique first block is
 * settled after 4 KiB. */
static int settle_buckets(struct group *g)
{
	int rc = 0;
	for (size_t i = 0, j; rc == 0 && i < g->nb; i = j) {
		j = run_end(g, i);
		if (j - i >= 2)
			rc = settle_run(g, i, j - i);
	}
	return rc;
}

static void group_free(struct group *g)
{
	for (size_t i = 0; g->fds && i < g->n; i++)
		if (g->fds[i] >= 0)
			close(g->fds[i]);
	free(g->fds);
	free(g->kn);
	free(g->stidx);
	free(g->serr);
	free(g->same);
	free(g->full);
	free(g->m);
	free(g->bh);
	free(g->got);
	free(g->hv);
	if (!g->lent)
		ds_big_free(g->blocks, g->keep ? g->n * g->blen : 0);
	else /* (the pass's: given back as each group ends, not all at the last) */
		ds_fp_group_done(g->c->s->reading->first_pass, (size_t)(g->idx - g->c->s->reading->first_pass->order), g->n);
}

/* How many of the group's files the sweep did not settle (their bytes
 * leave the progress's bound when the group is committed; the sweep's as
 * it reads them). */
static size_t unswept(const struct ds_match *s, const uint32_t *idx, size_t n)
{
	const struct ds_sweep *sw = s->reading->sweep;
	if (!sw)
		return n;
	size_t base = (size_t)(idx - s->reading->first_pass->order), left = 0;
	for (size_t x = 0; x < n; x++)
		left += !sw->swept[base + x];
	return left;
}

/* One size group (records idx[0..n), all of one size): gather the heads (the
 * first-block hash of every file, read or from the cache), then settle each
 * run of equal ones as a bucket. Effects go to c->res; c->res->rc tells how
 * it ended. The pool calls it (ds_group_fn). */
static void match_group(struct ds_ctx *c, const uint32_t *idx, size_t n)
{
	uint64_t size = ds_rec_msize(c->s->tree, idx[0]);
	c->res->files += n;
	c->res->bytes += unswept(c->s, idx, n) * size;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_EARLY, idx, n);
	if (rc == 0 && size == 0) {
		/* zero-length files (with -z) are all equal without a read */
		uint64_t empty = ds_hash_oneshot("", 0);
		for (size_t x = 0; x < n && rc == 0; x++)
			rc = ds_result_insert(c, idx[x], idx[0], empty, empty);
	} else if (rc == 0) {
		struct group g = { .c = c, .idx = idx, .n = n, .size = size,
				   .blen = size < DS_BLOCK ? (size_t)size : DS_BLOCK };
		g.got = calloc(n, sizeof(*g.got));
		rc = g.got ? 0 : -ENOMEM;
		if (rc == 0)
			rc = ds_gather_heads(&g);
		if (rc == 0)
			rc = sort_heads(&g);
		if (rc == 0)
			rc = settle_buckets(&g);
		group_free(&g);
		if (rc == 0)
			rc = ds_whole_classes(c);
	}
	if (rc)
		c->res->rc = rc;
}

/* The devices of the files that will be read decide how to read them. */
static int file_devices_io(struct ds_match *s, const uint32_t *order, const uint32_t *groups, size_t ngroups)
{
	uint64_t *devs = NULL;
	size_t ndevs = 0, cap = 0;
	for (size_t g = 0; g < ngroups; g++) {
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++) {
			uint64_t dev = ds_rec_dev(s->tree, ds_rec(s->tree, order[p]));
			bool known = false;
			for (size_t i = 0; i < ndevs && !known; i++)
				known = devs[i] == dev;
			if (known)
				continue;
			if (DS_GROW(devs, cap, ndevs + 1)) {
				free(devs);
				return -ENOMEM;
			}
			devs[ndevs++] = dev;
			if (ds_device_wants_path(s->reading, dev)) { /* (a btrfs subvolume met inside an argument) */
				char *path = ds_rec_path_alloc(s->tree, order[p]);
				if (path)
					ds_device_path(s->reading, dev, path);
				free(path);
			}
		}
	}
	int rc = ds_choose_io(s->reading, devs, ndevs);
	free(devs);
	return rc;
}

/* Read ahead the first blocks of the groups the cache does not settle. */
static int first_pass(struct ds_match *s, const uint32_t *order, size_t n, const uint32_t *groups, size_t ngroups,
		      uint64_t files, uint64_t bytes)
{
	uint32_t *left = malloc(2 * ngroups * sizeof(*left));
	if (!left)
		return -ENOMEM;
	size_t nleft = 0;
	for (size_t g = 0; g < ngroups; g++) {
		/* groups the cache settles need no pass: with trust, every group it
		 * holds, whole or in part (only their other files are read) */
		const uint32_t *idx = order + groups[2 * g];
		if (ds_rec_msize(s->tree, idx[0]) == 0 ||
		    (s->core->opt.cache_trust ? ds_cache_any(s->cache, idx, groups[2 * g + 1])
				    : ds_cache_covers(s->cache, idx, groups[2 * g + 1]) && ds_settled_by_cache(s, idx, groups[2 * g + 1])))
			continue;
		left[2 * nleft] = groups[2 * g];
		left[2 * nleft + 1] = groups[2 * g + 1];
		nleft++;
	}
	/* the rest of each bucket in disk order too (not for -Q, -T) */
	bool sweep = !s->core->opt.quick && !s->core->opt.partial_only;
	int rc = ds_first_pass_run(s->reading, order, n, left, nleft, sweep ? s->core->opt.sweep_budget : 0);
	atomic_store(&s->core->progress.first, false);
	ds_progress_phase(s->core, DUPSCAN_PHASE_MATCH, files, bytes);
	/* no file past a block: the first pass read every byte, nothing to sweep */
	if (rc == 0 && sweep && s->reading->first_pass->big)
		rc = ds_sweep_run(s->reading, left, nleft, s->core->opt.sweep_budget);
	free(left);
	return rc;
}

/* The groups of files that may match: (start in order, count) pairs, and
 * their files and bytes. */
struct groups {
	uint32_t *v;
	size_t n;
	uint64_t total, bytes;
};

/* The candidates, one record per inode, into order. @return how many. */
static uint32_t candidates(struct ds_match *s, uint32_t *order)
{
	uint32_t nc = 0;
	for (uint32_t i = 0; i < s->tree->nrecs; i++) {
		struct ds_rec *r = ds_rec(s->tree, i);
		/* (skipped or settled already: of a size the client of a scan
		 * for another host does not want, serve.c) */
		if ((r->flags & (DS_F_LINKED | DS_F_ALIAS | DS_F_SKIPPED | DS_F_SETTLED)))
			continue;
		if (ds_rec_size(s->tree, r) == 0 && !s->core->opt.zero_match) {
			r->flags |= DS_F_SKIPPED;
			continue;
		}
		order[nc++] = i;
	}
	return nc;
}

/* The kinds of file a size group may hold whatever its files here: a path
 * on another host may hold its kind in any size (REF: a reference's file,
 * OTHER: another; both without reference paths: every group is asked). */
enum { KIND_REF = 1, KIND_OTHER = 2 };
static unsigned kinds_anywhere(const struct ds_match *s)
{
	if (!s->tree->references)
		return KIND_REF | KIND_OTHER;
	unsigned kinds = 0;
	for (uint32_t a = 0; a < s->tree->nargs; a++)
		if (s->tree->args[a].remote)
			kinds |= s->tree->args[a].reference ? KIND_REF : KIND_OTHER;
	return kinds;
}

/* With reference paths, does a size group ask anything: a file under a
 * reference and another (else none of its files is read: sets/reference.c)? */
static bool group_asked(const struct ds_match *s, unsigned anywhere, const uint32_t *recs, size_t n)
{
	bool ref = anywhere & KIND_REF, other = anywhere & KIND_OTHER;
	for (size_t i = 0; i < n && !(ref && other); i++) {
		if (ds_rec_reference(s->tree, recs[i]))
			ref = true;
		else
			other = true;
	}
	return ref && other;
}

/* The groups of two or more files among the nc ordered candidates, as
 * (start, count) pairs; a file alone in its group is unique unread.
 * @return 0 or -ENOMEM. */
static int form_groups(struct ds_match *s, const uint32_t *order, uint32_t nc, struct groups *gs)
{
	size_t cap = 0;
	unsigned anywhere = kinds_anywhere(s); /* (once: the arguments may be many files) */
	for (uint32_t i = 0; i < nc;) {
		uint32_t j = i + 1;
		while (j < nc && same_group(s, order[i], order[j]))
			j++;
		if (j - i == 1)
			ds_rec(s->tree, order[i])->flags |= DS_F_SETTLED; /* alone: unique unread */
		if (j - i >= 2 && group_asked(s, anywhere, order + i, j - i)) {
			if (gs->n == cap) {
				cap = cap ? cap * 2 : 256;
				uint32_t *g = realloc(gs->v, cap * 2 * sizeof(*g));
				if (!g)
					return -ENOMEM;
				gs->v = g;
			}
			gs->v[2 * gs->n] = i;
			gs->v[2 * gs->n + 1] = j - i;
			gs->n++;
			gs->total += j - i;
			gs->bytes += (j - i) * ds_rec_msize(s->tree, order[i]);
		}
		i = j;
	}
	return 0;
}

/* Only the groups' files stay in order: what is kept by position (the
 * first pass's and the sweep's arrays) costs nothing for a file alone.
 * @return the files kept. */
static uint32_t pack_groups(uint32_t *order, struct groups *gs)
{
	uint32_t kept = 0;
	for (size_t g = 0; g < gs->n; g++) {
		/* forward, element by element (kept <= the group's start): valgrind
		 * takes a fortified memmove (__memmove_chk) for a memcpy and calls
		 * any overlap an error */
		for (uint32_t k = 0; gs->v[2 * g] != kept && k < gs->v[2 * g + 1]; k++)
			order[kept + k] = order[gs->v[2 * g] + k];
		gs->v[2 * g] = kept;
		kept += gs->v[2 * g + 1];
	}
	return kept;
}

/* The groups read and compared, in the order the storage wants. */
static int match_groups(struct ds_match *s, uint32_t *order, uint32_t nc, struct groups *gs)
{
	int rc = file_devices_io(s, order, gs->v, gs->n);
	/* a spinning disk: first blocks in disk order, then one stream */
	if (rc == 0 && s->reading->io_mode == DUPSCAN_IO_HDD && gs->n > 0)
		rc = first_pass(s, order, nc, gs->v, gs->n, gs->total, gs->bytes);
	else
		ds_progress_phase(s->core, DUPSCAN_PHASE_MATCH, gs->total, gs->bytes);
	/* one stream: groups in the order their files lie on the disk */
	uint64_t *key = NULL;
	if (rc == 0 && s->reading->first_pass && !(key = malloc((gs->n ? gs->n : 1) * sizeof(*key))))
		rc = -ENOMEM;
	/* where each group lies on the disk: its first file in the order read */
	if (s->reading->first_pass)
		ds_first_pass_by_pos(s->reading->first_pass, gs->v, gs->n, key);
	/* the index is filled as groups are committed: made here, after the
	 * first pass's arrays of places are gone, it does not add to their peak */
	if (rc == 0)
		rc = ds_index_reserve(&s->tree->index, s->tree->nrecs);
	if (rc == 0 && !(s->reading->chunks = ds_chunks_new()))
		rc = -ENOMEM;
	if (rc == 0)
		rc = ds_run_groups(s, match_group, order, gs->v, gs->n, gs->total,
				   s->reading->io_mode == DUPSCAN_IO_HDD ? 1 : ds_readers(s->reading), key);
	if (rc == 0)
		ds_progress_end(s->core);
	free(key);
	ds_chunks_free(s->reading->chunks);
	s->reading->chunks = NULL;
	ds_sweep_free(s->reading->sweep);
	s->reading->sweep = NULL;
	ds_first_pass_free(s->reading->first_pass);
	s->reading->first_pass = NULL;
	return rc;
}

/* Every candidate of the table matched: the whole tree, or one band. */
static int match_table(struct ds_match *s)
{
	uint32_t *order = malloc((s->tree->nrecs ? s->tree->nrecs : 1) * sizeof(*order));
	struct groups gs = { 0 };
	if (!order)
		return -ENOMEM;
	int rc = ds_collapse_links(s->tree, order);
	if (rc == 0)
		rc = ds_cache_join(s->cache, order, s->tree->nrecs, !ds_spilled(s->tree));
	uint32_t nc = rc == 0 ? candidates(s, order) : 0;
	/* --ignore-metadata: the groups are of payload lengths, every candidate
	 * read for them as its storage asks */
	if (rc == 0 && s->core->opt.ignore_metadata) {
		uint32_t all[2] = { 0, nc };
		rc = file_devices_io(s, order, all, 1);
		if (rc == 0)
			rc = ds_payloads_find(s->reading, order, nc);
	}
	/* candidates are in record order: ties keep it, as a stable sort would */
	if (rc == 0)
		rc = group_order(s, order, nc);
	if (rc == 0)
		rc = form_groups(s, order, nc, &gs);
	uint32_t kept = rc == 0 ? pack_groups(order, &gs) : 0;
	/* (not with payloads: one extent map is one content of one size, and a
	 * group of payloads holds several sizes) */
	if (rc == 0 && !s->tree->pay.at)
		rc = ds_twins_devices(s->reading, order, kept);
	if (rc == 0)
		rc = match_groups(s, order, kept, &gs);
	ds_twins_devices_free(s->reading);
	free(gs.v);
	free(order);
	return rc;
}

/* The cache joined to the table as it is (a spilled scan's kept records). */
static int rejoin(struct ds_match *s)
{
	uint32_t *order = malloc((s->tree->nrecs ? s->tree->nrecs : 1) * sizeof(*order));
	int rc = order ? ds_collapse_links(s->tree, order) : -ENOMEM;
	if (rc == 0)
		rc = ds_cache_join(s->cache, order, s->tree->nrecs, true);
	free(order);
	return rc;
}

int ds_match(struct ds_match *s)
{
	if (!ds_spilled(s->tree))
		return match_table(s);
	/* past the budget: the rest of the walk's records join the others on
	 * disk, and come back a band of sizes at a time; after each band only
	 * its sets' files stay (canceled: the band stays as matched so far) */
	int rc = ds_spill_out(s->tree);
	/* the progress counts every file spilled once, across the bands (a
	 * file alone in its size is settled unread: counted at the end) */
	if (rc == 0)
		ds_progress_whole(s->core, ds_spill_count(s->tree), ds_spill_bytes(s->tree));
	for (bool more = true; rc == 0 && more;) {
		uint32_t from = s->tree->nrecs; /* (the records kept from the bands before) */
		rc = ds_spill_band(s->tree, &more);
		if (rc == 0 && s->each_band)
			s->each_band(s->each_band_user, s->tree, from);
		if (rc == 0)
			rc = match_table(s);
		/* the cache's notes name the band's records: they leave first */
		if (rc == 0)
			rc = ds_cache_band_done(s->cache);
		if (rc == 0)
			rc = ds_spill_keep(s->tree);
	}
	/* the sets' records kept: their proofs for the sets (dupscan_set_proof()) */
	if (rc == 0 && s->cache->run)
		rc = rejoin(s);
	if (rc == 0)
		ds_progress_whole_end(s->core);
	s->core->progress.whole = false;
	return rc;
}
