/* SPDX-License-Identifier: MIT */
/* heads.c: the heads of one size group: every file's first block read (in
 * slices over the pool, or taken from the pass that read them ahead in disk
 * order), or its hashes taken from the cache. */
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
#include "cache/cache_run.h"

/* The first-block pass of one size group, in slices: a group of many small
 * files (one size of a source tree, a mail spool) is spread over the pool. */
#define FIRST_SLICE 256
/* Where each open and read waits a round trip (NET), slices of a few files:
 * every thread the link may keep busy takes some. */
#define NET_FIRST_SLICE 8

struct first_job {
	struct ds_ctx *c;
	const uint32_t *idx;
	size_t n, blen;
	unsigned char *blocks;  /* kept first blocks, or NULL */
	int *fds;               /* files held open, or NULL */
	struct ds_hashed *hv;   /* per file: its partial hash; or NULL, and */
	struct ds_keypos32 *keys; /* per file: its partial hash and position (12 bytes, not 24) */
	bool *got;              /* per file: read, partial set */
	struct ds_result *res;  /* per slice, or NULL: one slice reports to c->res */
	size_t slice;           /* files a slice */
};

static void first_slice(void *arg, size_t sl)
{
	struct first_job *j = arg;
	struct ds_ctx c = { j->c->s, j->res ? &j->res[sl] : j->c->res, NULL };
	struct ds_match *s = c.s;
	unsigned char one[DS_BLOCK];
	size_t begin = 0, end = j->n; /* one slice: the whole group */
	if (j->res) {
		begin = sl * j->slice;
		end = begin + j->slice < j->n ? begin + j->slice : j->n;
	}
	struct ds_dirfd dc = DS_DIRFD_INIT;
	for (size_t i = begin; i < end; i++) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed)) {
			c.res->rc = DUPSCAN_E_CANCELED;
			break;
		}
		uint32_t ri = j->idx[i];
		int fd = ds_open_scanned_in(s->reading, ri, &dc);
		if (fd == -ENOMEM) {
			c.res->rc = fd;
			break;
		}
		if (fd < 0) {
			ds_fail(&c, ri, fd);
			continue;
		}
		unsigned char *dst = j->blocks ? j->blocks + i * j->blen : one;
		/* on an SSD, one block: the kernel's readahead would read on into
		 * bytes that most files, unlike all others after it, never need (a
		 * file held for the lockstep read reads on with it after all) */
		bool once = s->reading->io_mode == DUPSCAN_IO_SSD;
		if (once)
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		int err = ds_read_rec(s->reading, ri, fd, dst, j->blen, 0);
		if (once && err == 0 && j->fds)
			posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		if (err < 0 || !j->fds)
			close(fd);
		else
			j->fds[i] = fd;
		if (err < 0) {
			ds_fail(&c, ri, err);
			continue;
		}
		uint64_t partial = ds_hash_oneshot(dst, j->blen);
		/* a file within its first block has its full hash too */
		if (j->keys)
			j->keys[i] = ds_keypos32_of(partial, (uint32_t)i);
		else
			j->hv[i] = (struct ds_hashed){ .rec = j->idx[i], .has_full = j->blen == ds_rec_msize(s->tree, ri),
							   .partial = partial, .full = partial };
		j->got[i] = true;
	}
	ds_dirfd_close(&dc);
}

/* Read the first block of every file of a group (fj set up by the caller). */
static int read_first_blocks(struct ds_ctx *c, struct first_job *fj)
{
	fj->slice = c->s->reading->io_mode == DUPSCAN_IO_NET ? NET_FIRST_SLICE : FIRST_SLICE;
	size_t nslices = (fj->n + fj->slice - 1) / fj->slice;
	/* a spinning disk is one stream */
	if (ds_pool_helpers(c->pool) > 0 && nslices > 1 && c->s->reading->io_mode != DUPSCAN_IO_HDD) {
		/* each slice reports into its own result; merged below in file order */
		fj->res = calloc(nslices, sizeof(*fj->res));
		if (!fj->res)
			return -ENOMEM;
	} else {
		nslices = 1;
	}
	ds_parallel_for(c->pool, nslices, first_slice, fj);
	if (!fj->res)
		return c->res->rc;
	int rc = 0;
	for (size_t sl = 0; sl < nslices; sl++) {
		if (rc == 0)
			rc = fj->res[sl].rc;
		if (rc == 0)
			rc = ds_result_take_errors(c->res, &fj->res[sl]);
		ds_result_free(&fj->res[sl]);
	}
	free(fj->res);
	fj->res = NULL;
	return rc;
}

/* Every file's hashes from the cache, when it holds them all (and hashes may
 * be trusted to spare reads: not with -Q or -T). */
static bool from_cache(const struct ds_match *s, const uint32_t *idx, size_t n, struct ds_hashed *hv, bool *got)
{
	if (!ds_cache_usable(s->cache))
		return false;
	for (size_t i = 0; i < n; i++) {
		hv[i].rec = idx[i];
		if (!ds_cache_get(s->cache, idx[i], &hv[i]))
			return false;
	}
	for (size_t i = 0; i < n; i++)
		got[i] = true;
	return true;
}

/* On a spinning disk the cache spares a group only when its hashes settle it
 * alone: each file unique by its first-block hash, or by a known full hash.
 * A group with possible twins is read by the first pass and the sweep, in
 * disk order; compared from the cache it would be read in no order at all. */
bool ds_settled_by_cache(const struct ds_match *s, const uint32_t *idx, size_t n)
{
	struct ds_sortkey *a = malloc(n * sizeof(*a));
	bool settled = a != NULL;
	for (size_t i = 0; settled && i < n; i++) {
		struct ds_hashed h;
		settled = ds_cache_get(s->cache, idx[i], &h);
		a[i] = (struct ds_sortkey){ { h.partial, h.has_full ? h.full : 0, h.has_full, 0 }, (uint32_t)i };
	}
	if (settled)
		ds_sort_keys(a, n);
	for (size_t i = 0; settled && i < n;) {
		size_t j = i + 1;
		while (j < n && a[j].k[0] == a[i].k[0])
			j++;
		/* a shared first block: every full hash known and none shared */
		for (size_t x = i; j - i >= 2 && settled && x < j; x++)
			settled = a[x].k[2] && (x == i || a[x].k[1] != a[x - 1].k[1]);
		i = j;
	}
	free(a);
	return settled;
}

/* With DUPSCAN_OPT_CACHE_TRUST: the hashes of every file the cache holds.
 * @return how many. */
static size_t from_cache_each(const struct ds_match *s, const uint32_t *idx, size_t n, struct ds_hashed *hv,
			      bool *got)
{
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		hv[i].rec = idx[i];
		got[i] = ds_cache_get(s->cache, idx[i], &hv[i]);
		found += got[i];
	}
	return found;
}

/* With DUPSCAN_OPT_CACHE_TRUST, a group the cache covers in part: the first
 * blocks of the files it does not hold, read now (stidx[i]: DS_NONE for a
 * file the cache holds). @return 0 or a negative code. */
static int read_uncached(struct ds_ctx *c, const uint32_t *idx, size_t n, size_t blen, struct ds_hashed *hv,
			 bool *got, uint32_t *stidx)
{
	uint32_t *sub = malloc(n * sizeof(*sub));
	struct ds_hashed *shv = malloc(n * sizeof(*shv));
	bool *sgot = calloc(n, sizeof(*sgot));
	int rc = sub && shv && sgot ? 0 : -ENOMEM;
	size_t nsub = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		stidx[i] = DS_NONE; /* from the cache */
		if (!got[i]) {
			stidx[i] = (uint32_t)nsub;
			sub[nsub++] = idx[i];
		}
	}
	if (rc == 0) {
		struct first_job job = { c, sub, nsub, blen, NULL, NULL, shv, NULL, sgot, NULL, 0 };
		rc = read_first_blocks(c, &job);
	}
	/* those that could not be read stay out (got false) */
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!got[i] && sgot[stidx[i]]) {
			hv[i] = shv[stidx[i]];
			got[i] = true;
		}
	free(sgot);
	free(shv);
	free(sub);
	return rc;
}

/* The first blocks read ahead in disk order (s->reading->first_pass), as the group
 * would have read them: their hashes; a failure is reported now, at the
 * group's turn. @return 0 or -ENOMEM. */
static int from_first_pass(struct ds_ctx *c, const uint32_t *idx, size_t n, struct ds_keypos32 *keys, bool *got)
{
	struct ds_first_pass *fp = c->s->reading->first_pass;
	size_t base = (size_t)(idx - fp->order);
	for (size_t i = 0; i < n; i++) {
		size_t p = base + i;
		int err = ds_fp_err(fp, p);
		if (err) {
			ds_fail(c, idx[i], err);
			continue;
		}
		got[i] = ds_fp_got(fp, p);
		if (got[i])
			keys[i] = ds_keypos32_of(ds_fp_partial(fp, p), (uint32_t)i);
	}
	ds_fp_keys_taken(fp, base, n);
	return c->res->rc == -ENOMEM ? -ENOMEM : 0;
}

/* The first blocks of a group the cache does not hold, read now or taken from
 * the pass that read them ahead in disk order. */
static int read_heads(struct group *g)
{
	struct ds_ctx *c = g->c;
	const struct ds_match *s = c->s;
	size_t n = g->n, blen = g->blen;
	bool compare = !s->core->opt.quick && !s->core->opt.partial_only;
	/* read this run, a file's first-block hash is all there is to know: its
	 * sort key is written as it is read (sort_heads()) */
	free(g->hv);
	g->hv = NULL;
	if (!(g->bh = malloc((n ? n : 1) * sizeof(*g->bh))))
		return -ENOMEM;
	if (s->reading->first_pass) {
		/* a group the pass kept whole compares its first blocks where the
		 * pass keeps them (no copy); else they are read again where needed */
		const struct ds_first_pass *fp = s->reading->first_pass;
		g->blocks = compare ? ds_fp_group_blocks(fp, (size_t)(g->idx - fp->order), n) : NULL;
		g->keep = g->lent = g->blocks != NULL;
		return from_first_pass(c, g->idx, n, g->bh, g->got);
	}
	/* first blocks stay in memory when they fit, so comparing never re-reads them */
	g->keep = compare && (uint64_t)n * blen <= DS_BLOCK_BUDGET;
	/* a small group keeps its files open from the first read to the lockstep
	 * read: one open and one fstat per file */
	g->hold = compare && g->size > DS_BLOCK && n <= s->reading->max_open;
	g->blocks = g->keep ? ds_big_alloc(n * blen) : NULL;
	g->fds = g->hold ? malloc(n * sizeof(*g->fds)) : NULL;
	for (size_t i = 0; g->fds && i < n; i++)
		g->fds[i] = -1;
	if ((g->keep && !g->blocks) || (g->hold && !g->fds))
		return -ENOMEM;
	struct first_job job = { c, g->idx, n, blen, g->blocks, g->fds, NULL, g->bh, g->got, NULL, 0 };
	return read_first_blocks(c, &job);
}

/* Every file's first-block hash: from the cache when it holds the group (with
 * trust, the files it holds, the rest read), else read. */
int ds_gather_heads(struct group *g)
{
	struct ds_ctx *c = g->c;
	struct ds_match *s = c->s;
	g->trust = s->core->opt.cache_trust && ds_cache_usable(s->cache);
	/* the cache's hashes, when it may hold some */
	if (ds_cache_usable(s->cache) && !(g->hv = malloc(g->n * sizeof(*g->hv))))
		return -ENOMEM;
	if (g->trust) {
		size_t ncached = from_cache_each(s, g->idx, g->n, g->hv, g->got);
		g->cached = ncached == g->n;
		g->mixed = ncached > 0 && !g->cached;
	} else {
		g->cached = g->hv && from_cache(s, g->idx, g->n, g->hv, g->got) &&
			    (s->reading->io_mode != DUPSCAN_IO_HDD || ds_settled_by_cache(s, g->idx, g->n));
		for (size_t i = 0; !g->cached && i < g->n; i++)
			g->got[i] = false;
	}
	if (g->mixed) {
		/* a bucket tells its files apart by stidx: read_uncached() sets it whole */
		if (!(g->stidx = malloc(g->n * sizeof(*g->stidx))))
			return -ENOMEM;
		return read_uncached(c, g->idx, g->n, g->blen, g->hv, g->got, g->stidx);
	}
	return g->cached ? 0 : read_heads(g);
}
