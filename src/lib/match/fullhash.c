/* SPDX-License-Identifier: MIT */
/* fullhash.c: the rest of a file hashed, and a bucket settled by reading it:
 * by full hash (equal ones still compared byte by byte, unless -Q), or side
 * by side. */
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

/* Hash bytes [from, to) of a file into its state h[hidx] (which stands at
 * from); at its end, check the file is still as scanned. @return 0 (a file
 * that fails is dropped and reported) or -ENOMEM. */
int ds_hash_range(struct ds_ctx *c, uint32_t ri, struct ds_hashes *h, size_t hidx, uint64_t from,
		      uint64_t to, unsigned char *buf)
{
	struct ds_match *s = c->s;
	const struct ds_rec *r = ds_rec(s->tree, ri);
	int fd = ds_open_rec(c, ri);
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	posix_fadvise(fd, (off_t)from, (off_t)(to - from), POSIX_FADV_SEQUENTIAL);
	int err = 0;
	for (uint64_t off = from; off < to && err == 0;) {
		size_t len = to - off < s->core->opt.chunk ? (size_t)(to - off) : s->core->opt.chunk;
		err = ds_read_rec(s->reading, ri, fd, buf, len, off);
		if (err == 0)
			ds_hash_update(h, hidx, buf, len);
		off += len;
	}
	if (err == 0 && to == ds_rec_msize(c->s->tree, ri))
		err = ds_check_unchanged(s->reading, fd, r);
	close(fd);
	if (err < 0)
		ds_fail(c, ri, err);
	return 0;
}

int ds_hash_rest(struct ds_ctx *c, uint32_t ri, uint64_t partial, struct ds_hashes *h, unsigned char *buf,
		 uint64_t *full)
{
	uint64_t size = ds_rec_msize(c->s->tree, ri);
	*full = partial;
	if (size <= DS_BLOCK)
		return 0;
	ds_hash_seed(h, 0, partial);
	int rc = ds_hash_range(c, ri, h, 0, DS_BLOCK, size, buf);
	*full = ds_hash_digest(h, 0);
	return rc;
}

static int cmp_member_inode(void *ctx, const void *pa, const void *pb)
{
	const struct bucket *b = ctx;
	const struct ds_rec *x = ds_rec(b->s->tree, b->m[*(const uint32_t *)pa].rec);
	const struct ds_rec *y = ds_rec(b->s->tree, b->m[*(const uint32_t *)pb].rec);
	uint64_t dx = ds_rec_dev(b->s->tree, x), dy = ds_rec_dev(b->s->tree, y);
	if (dx != dy)
		return dx < dy ? -1 : 1;
	uint64_t ix = ds_rec_ino(b->s->tree, x), iy = ds_rec_ino(b->s->tree, y);
	return ix < iy ? -1 : ix > iy;
}

/* One round's reads, NET mode: the members cut in slices that the pool's
 * threads take, each slice reporting into its own result (merged in order). */
#define ROUND_SLICE 2
struct round {
	struct ds_ctx *c;
	const struct bucket *b;
	struct ds_hashes *h;
	const uint32_t *alive;
	size_t na;
	uint64_t off, end;
	struct ds_result *res;
};

static void round_slice(void *arg, size_t sl)
{
	struct round *r = arg;
	struct ds_match *s = r->c->s;
	struct ds_ctx c = { s, &r->res[sl], r->c->pool };
	unsigned char *buf = ds_chunk_take(s->reading->chunks, s->core->opt.chunk);
	int rc = buf ? 0 : -ENOMEM;
	for (size_t i = sl * ROUND_SLICE; rc == 0 && i < r->na && i < (sl + 1) * ROUND_SLICE; i++) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed))
			rc = DUPSCAN_E_CANCELED;
		else
			rc = ds_hash_range(&c, r->b->m[r->alive[i]].rec, r->h, r->alive[i], r->off, r->end, buf);
	}
	if (buf)
		ds_chunk_give(s->reading->chunks, buf, s->core->opt.chunk);
	r->res[sl].rc = rc;
}

/* A round over alive[0..na): on every thread where each read waits a round
 * trip (NET mode; the members' hashes are apart, so only errors need
 * merging), else here, in order. */
static int hash_round(struct ds_ctx *c, const struct bucket *b, struct ds_hashes *h, const uint32_t *alive,
		      size_t na, uint64_t off, uint64_t end, unsigned char *buf)
{
	struct ds_match *s = c->s;
	size_t nslices = (na + ROUND_SLICE - 1) / ROUND_SLICE;
	struct round r = { c, b, h, alive, na, off, end, NULL };
	if (s->reading->io_mode == DUPSCAN_IO_NET && nslices > 1 && ds_pool_helpers(c->pool) > 0 &&
	    (r.res = calloc(nslices, sizeof(*r.res)))) {
		ds_parallel_for(c->pool, nslices, round_slice, &r);
		int rc = 0;
		for (size_t sl = 0; sl < nslices; sl++) {
			if (rc == 0)
				rc = r.res[sl].rc;
			if (rc == 0)
				rc = ds_result_take_errors(c->res, &r.res[sl]);
			ds_result_free(&r.res[sl]);
		}
		free(r.res);
		return rc;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < na; i++) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed))
			rc = DUPSCAN_E_CANCELED;
		else
			rc = ds_hash_range(c, b->m[alive[i]].rec, h, alive[i], off, end, buf);
	}
	return rc;
}

/* Members m[0..n) of b compared side by side from the end of their first
 * block (from their start when b keeps no first blocks), hashing as they go:
 * *h holds their full hashes by member after (NULL within one block).
 * checkpoint: as ds_lockstep()'s partial. @return 0 or a negative code. */
static int side_by_side_run(struct ds_ctx *c, const struct bucket *b, struct ds_member *m, size_t n,
			    const uint64_t *checkpoint, struct ds_hashes **h)
{
	uint64_t start = b->blocks ? (b->size > DS_BLOCK ? DS_BLOCK : b->size) : 0;
	*h = b->size > DS_BLOCK ? ds_hashes_new(n) : NULL;
	if (b->size > DS_BLOCK && !*h)
		return -ENOMEM;
	for (size_t x = 0; *h && x < n; x++)
		ds_hash_seed(*h, x, b->partial);
	return ds_lockstep(c, m, n, b->size, start, *h, b->blocks, b->blen, checkpoint);
}

/* Index the alive members of a lockstep result m[0..n) (their full hashes in
 * h by member, or NULL within one block: then partial); a class is named by
 * the record of its first member. */
static int index_members(struct ds_ctx *c, const struct ds_member *m, size_t n, uint64_t partial,
			 const struct ds_hashes *h)
{
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		int rc = ds_result_insert(c, m[i].rec, m[m[i].cls].rec, partial, h ? ds_hash_digest(h, i) : partial);
		if (rc)
			return rc;
	}
	return 0;
}

/* Runs of members whose bytes so far hash alike, each few enough to be read
 * side by side: compared byte by byte from the end of the first block to
 * their end, hashing as they go. The part the rounds read is read again; the
 * rest once, where hashing to the end and then comparing would read it twice.
 * NET: the runs on the pool's threads, each with its own errors. */
struct early {
	struct ds_ctx *c;
	const struct bucket *b;
	struct ds_member *m;    /* the runs' members, one run after another */
	size_t *at;             /* run k: m[at[k] .. at[k + 1]) */
	struct ds_hashes **h;   /* by run: its members' full hashes */
	struct ds_result *res;  /* by run, on threads: its errors; or NULL */
	int *rc;                /* by run */
	size_t nruns;
};

static void early_run(void *arg, size_t k)
{
	struct early *e = arg;
	struct ds_ctx c = e->res ? (struct ds_ctx){ e->c->s, &e->res[k], e->c->pool } : *e->c;
	e->rc[k] = side_by_side_run(&c, e->b, e->m + e->at[k], e->at[k + 1] - e->at[k], NULL, &e->h[k]);
}

/* Settle e's runs and index their classes. @return 0 or a negative code. */
static int settle_early(struct ds_ctx *c, struct early *e)
{
	struct ds_match *s = c->s;
	e->res = NULL;
	if (s->reading->io_mode == DUPSCAN_IO_NET && e->nruns > 1 && ds_pool_helpers(c->pool) > 0)
		e->res = calloc(e->nruns, sizeof(*e->res));
	if (e->res)
		ds_parallel_for(c->pool, e->nruns, early_run, e);
	for (size_t k = 0; !e->res && k < e->nruns; k++)
		early_run(e, k);
	int rc = 0;
	for (size_t k = 0; k < e->nruns; k++) {
		if (rc == 0)
			rc = e->rc[k];
		if (rc == 0 && e->res)
			rc = ds_result_take_errors(c->res, &e->res[k]);
		if (e->res)
			ds_result_free(&e->res[k]);
		if (rc == 0)
			rc = index_members(c, e->m + e->at[k], e->at[k + 1] - e->at[k], e->b->partial, e->h[k]);
		ds_hashes_free(e->h[k]);
		e->h[k] = NULL;
	}
	free(e->res);
	e->nruns = 0;
	e->at[0] = 0;
	return rc;
}

/* The full hashes of the members that may have a twin, into bh sorted by
 * hash: known ones, or read in rounds of growing length (64 KiB, 256 KiB,
 * ...) from the end of the first block, each file only until its hash so far
 * is unlike every other's: files that differ early are not read to their
 * end. With e, a run of at most leave members alike so far is settled side
 * by side (settle_early()) and leaves the rounds. @return how many, or a
 * negative code. */
static long full_hashes(struct ds_ctx *c, const struct bucket *b, struct ds_keypos *bh, struct early *e,
			size_t leave)
{
	struct ds_match *s = c->s;
	size_t nb = 0;
	if (b->full || b->size <= DS_BLOCK) {
		/* known, or a file within its first block, hashed already */
		for (size_t x = 0; x < b->k; x++)
			if (!(ds_rec(s->tree, b->m[x].rec)->flags & DS_F_DROPPED))
				bh[nb++] = (struct ds_keypos){ b->full ? b->full[x] : b->partial, (uint32_t)x };
		ds_sort_by_key(bh, nb);
		return (long)nb;
	}
	uint32_t *alive = malloc(b->k * sizeof(*alive));
	unsigned char *buf = ds_chunk_take(s->reading->chunks, s->core->opt.chunk);
	struct ds_hashes *h = ds_hashes_new(b->k);
	int rc = alive && buf && h ? 0 : -ENOMEM;
	size_t na = 0;
	for (size_t x = 0; rc == 0 && x < b->k; x++) {
		ds_hash_seed(h, x, b->partial);
		if (!(ds_rec(s->tree, b->m[x].rec)->flags & DS_F_DROPPED))
			alive[na++] = (uint32_t)x;
	}
	uint64_t off = DS_BLOCK, len = DS_FIRST_ROUND;
	while (rc == 0 && na > 0 && off < b->size) {
		uint64_t end = b->size - off <= len ? b->size : off + len;
		/* one stream: in inode order, which on most filesystems follows the disk */
		if (s->reading->io_mode == DUPSCAN_IO_HDD)
			rc = ds_sort(alive, na, sizeof(*alive), cmp_member_inode, (void *)b);
		if (rc == 0)
			rc = hash_round(c, b, h, alive, na, off, end, buf);
		/* those whose bytes so far are like no other's are settled */
		nb = 0;
		for (size_t i = 0; rc == 0 && i < na; i++)
			if (!(ds_rec(s->tree, b->m[alive[i]].rec)->flags & DS_F_DROPPED))
				bh[nb++] = (struct ds_keypos){ ds_hash_digest(h, alive[i]), alive[i] };
		ds_sort_by_key(bh, nb);
		na = 0;
		for (size_t i = 0; rc == 0 && i < nb;) {
			size_t j = i + 1;
			while (j < nb && bh[j].key == bh[i].key)
				j++;
			bool early = e && j - i >= 2 && j - i <= leave && end < b->size;
			for (size_t q = i; early && q < j; q++) {
				e->m[e->at[e->nruns] + q - i] = b->m[bh[q].pos];
				b->m[bh[q].pos].fd = -1; /* the lockstep's now, which closes it */
			}
			if (early) {
				e->at[e->nruns + 1] = e->at[e->nruns] + (j - i);
				e->nruns++;
			}
			for (size_t q = i; !early && j - i >= 2 && q < j; q++)
				alive[na++] = bh[q].pos;
			i = j;
		}
		if (rc == 0 && e && e->nruns > 0)
			rc = settle_early(c, e);
		off = end;
		len = len < DS_LAST_ROUND / 4 ? len * 4 : DS_LAST_ROUND;
	}
	/* at the end, the states are the full hashes */
	nb = 0;
	for (size_t i = 0; rc == 0 && i < na; i++)
		bh[nb++] = (struct ds_keypos){ ds_hash_digest(h, alive[i]), alive[i] };
	ds_sort_by_key(bh, nb);
	ds_hashes_free(h);
	ds_chunk_give(s->reading->chunks, buf, s->core->opt.chunk);
	free(alive);
	return rc ? rc : (long)nb;
}

/* -Q: classes by full hash alone. */
int ds_match_quick(struct ds_ctx *c, const struct bucket *b)
{
	struct ds_keypos *bh = malloc(b->k * sizeof(*bh));
	if (!bh)
		return -ENOMEM;
	long nb = full_hashes(c, b, bh, NULL, 0);
	int rc = nb < 0 ? (int)nb : 0;
	for (size_t i = 0; rc == 0 && i < (size_t)nb;) {
		size_t j = i + 1;
		while (j < (size_t)nb && bh[j].key == bh[i].key)
			j++;
		for (size_t x = i; j - i >= 2 && rc == 0 && x < j; x++)
			rc = ds_result_insert(c, b->m[bh[x].pos].rec, b->m[bh[i].pos].rec, b->partial, bh[x].key);
		i = j;
	}
	free(bh);
	return rc;
}

/* Scratch of ds_match_by_full(): members wait by their index in b->m (4
 * bytes, not a copy of 20: a bucket of a million copies of one file is this
 * function's to hold). */
struct confirm {
	struct ds_member *batch;  /* max_open members compared at once */
	uint32_t *bi;             /* batch's members in b->m */
	uint32_t *pending, *joined;
};

/* The np members pending[] of one full hash, each compared byte by byte
 * against the first, max_open at a time; those proven equal to it are
 * indexed as one class, the rest start over. @return 0 or a negative code. */
static int confirm_run(struct ds_ctx *c, const struct bucket *b, struct confirm *cf, size_t np, uint64_t full)
{
	struct ds_match *s = c->s;
	uint64_t start = b->blocks ? DS_BLOCK : 0;
	int rc = 0;
	while (rc == 0 && np >= 2) {
		uint32_t rep = cf->pending[0];
		size_t left = 0, njoined = 0;
		for (size_t k = 1; rc == 0 && k < np;) {
			size_t cnt = 1, from = k;
			cf->batch[0] = b->m[rep];
			cf->bi[0] = rep;
			while (k < np && cnt < s->reading->max_open) {
				cf->bi[cnt] = cf->pending[k++];
				cf->batch[cnt] = b->m[cf->bi[cnt]];
				cnt++;
			}
			rc = ds_lockstep(c, cf->batch, cnt, b->size, start, NULL, b->blocks, b->blen, NULL);
			/* a descriptor a member brought is the lockstep's, closed now */
			for (size_t q = 0; q < cnt; q++)
				b->m[cf->bi[q]].fd = cf->batch[q].fd;
			if (rc == 0 && (ds_rec(s->tree, b->m[rep].rec)->flags & DS_F_DROPPED)) {
				/* the file compared against failed: it leaves, and the
				 * class goes on with a member proven equal to it, this
				 * batch compared again; with none, the rest start over */
				if (njoined > 0) {
					rep = cf->joined[--njoined];
					k = from;
					continue;
				}
				for (size_t x = from; x < np; x++)
					if (!(ds_rec(s->tree, b->m[cf->pending[x]].rec)->flags & DS_F_DROPPED))
						cf->pending[left++] = cf->pending[x];
				break;
			}
			for (size_t q = 1; rc == 0 && q < cnt; q++) {
				if (ds_rec(s->tree, cf->batch[q].rec)->flags & DS_F_DROPPED)
					continue;
				if (cf->batch[q].alive && cf->batch[q].cls == cf->batch[0].cls)
					cf->joined[njoined++] = cf->bi[q];
				else
					cf->pending[left++] = cf->bi[q];
			}
		}
		for (size_t x = 0; rc == 0 && x < njoined; x++)
			rc = ds_result_insert(c, b->m[cf->joined[x]].rec, b->m[rep].rec, b->partial, full);
		if (rc == 0 && njoined > 0)
			rc = ds_result_insert(c, b->m[rep].rec, b->m[rep].rec, b->partial, full);
		np = left;
	}
	return rc;
}

/* By full hash first (known, or each file hashed alone), then each run of
 * equal full hashes confirmed against its first file in batches of files
 * that may be open at once: for buckets too large to read side by side, and
 * for full hashes known from the cache, so files unique by hash are never
 * opened. Files within one block, no full hash known, are one run already
 * (their full hash is the bucket's partial one): no keys to sort. */
int ds_match_by_full(struct ds_ctx *c, const struct bucket *b)
{
	struct ds_match *s = c->s;
	size_t n = b->k;
	bool one_run = !b->full && b->size <= DS_BLOCK;
	struct confirm cf = { malloc(s->reading->max_open * sizeof(*cf.batch)), malloc(s->reading->max_open * sizeof(*cf.bi)),
			      malloc(n * sizeof(*cf.pending)), malloc(n * sizeof(*cf.joined)) };
	struct ds_keypos *bh = one_run ? NULL : malloc(n * sizeof(*bh));
	int rc = cf.batch && cf.bi && cf.pending && cf.joined && (one_run || bh) ? 0 : -ENOMEM;
	if (rc == 0 && one_run) {
		size_t np = 0;
		for (size_t x = 0; x < n; x++)
			if (!(ds_rec(s->tree, b->m[x].rec)->flags & DS_F_DROPPED))
				cf.pending[np++] = (uint32_t)x;
		rc = confirm_run(c, b, &cf, np, b->partial);
	}
	/* at most every member in early runs, each run at least 2 */
	struct early e = { c, b, malloc(n * sizeof(*e.m)), malloc((n / 2 + 1) * sizeof(*e.at)),
			   calloc(n / 2 + 1, sizeof(*e.h)), NULL, malloc((n / 2 + 1) * sizeof(*e.rc)), 0 };
	if (rc == 0 && !one_run && !(e.m && e.at && e.h && e.rc))
		rc = -ENOMEM;
	if (e.at)
		e.at[0] = 0;
	long nb = rc == 0 && !one_run ? full_hashes(c, b, bh, &e, s->reading->max_open) : 0;
	if (nb < 0)
		rc = (int)nb;
	for (size_t i = 0, j; rc == 0 && i < (size_t)nb; i = j) {
		size_t np = 0;
		for (j = i; j < (size_t)nb && bh[j].key == bh[i].key; j++)
			cf.pending[np++] = (uint32_t)bh[j].pos;
		rc = confirm_run(c, b, &cf, np, bh[i].key);
	}
	free(e.rc);
	free(e.h);
	free(e.at);
	free(e.m);
	free(bh);
	free(cf.joined);
	free(cf.pending);
	free(cf.bi);
	free(cf.batch);
	return rc;
}

/* Side by side, hashing as it goes: one read of each file. whole: its
 * members are the whole bucket (not representatives), so what the comparison
 * knows of them is worth a checkpoint. */
static int side_by_side(struct ds_ctx *c, const struct bucket *b, bool whole)
{
	struct ds_hashes *h;
	int rc = side_by_side_run(c, b, b->m, b->k, whole ? &b->partial : NULL, &h);
	if (rc == 0)
		rc = index_members(c, b->m, b->k, b->partial, h);
	ds_hashes_free(h);
	return rc;
}

int ds_match_plain(struct ds_ctx *c, const struct bucket *b, bool whole)
{
	if (!b->full && b->k <= c->s->reading->max_open)
		return side_by_side(c, b, whole);
	return ds_match_by_full(c, b);
}
