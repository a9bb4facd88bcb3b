/* SPDX-License-Identifier: MIT */
/* match.c: from walked records to confirmed content classes in the index:
 * hard links, size groups, first-block hashes, full hashes and byte comparison. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* ---- hard links: one representative record per inode ---- */

static int cmp_inode(void *ctx, const void *pa, const void *pb)
{
	const dupscan_scan *s = ctx;
	const struct ds_rec *a = ds_rec(s, *(const uint32_t *)pa), *b = ds_rec(s, *(const uint32_t *)pb);
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return 0; /* the sort is stable: visit order decides among paths */
}

static bool same_place(const dupscan_scan *s, const struct ds_rec *a, const struct ds_rec *b)
{
	const struct ds_dir *da = &s->dirs[a->dir], *db = &s->dirs[b->dir];
	return da->dev == db->dev && da->ino == db->ino && strcmp(a->name, b->name) == 0;
}

/* Among the paths of one inode, the first in the chosen order represents it,
 * whatever order the walk met them in. */
static int collapse_run(dupscan_scan *s, const uint32_t *run, size_t n)
{
	uint32_t best = DS_NONE;
	char *best_path = NULL;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct ds_rec *r = ds_rec(s, run[i]);
		for (size_t j = 0; j < i; j++) {
			const struct ds_rec *o = ds_rec(s, run[j]);
			if (!(o->flags & DS_F_ALIAS) && same_place(s, r, o)) {
				r->flags |= DS_F_ALIAS;
				break;
			}
		}
		if (r->flags & DS_F_ALIAS)
			continue;
		char *p = ds_rec_path_alloc(s, r);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		if (best == DS_NONE || ds_order_cmp(s, r, p, ds_rec(s, best), best_path) < 0) {
			free(best_path);
			best_path = p;
			best = run[i];
		} else {
			free(p);
		}
	}
	free(best_path);
	if (best != DS_NONE)
		for (size_t i = 0; i < n; i++)
			ds_rec(s, run[i])->rep = best;
	return rc;
}

int ds_collapse_links(dupscan_scan *s, uint32_t *order)
{
	for (uint32_t i = 0; i < s->nrecs; i++)
		order[i] = i;
	int rc = ds_sort(order, s->nrecs, sizeof(*order), cmp_inode, s);
	for (uint32_t i = 0; rc == 0 && i < s->nrecs;) {
		uint32_t j = i + 1;
		while (j < s->nrecs && cmp_inode(s, &order[i], &order[j]) == 0)
			j++;
		if (j - i > 1)
			rc = collapse_run(s, order + i, j - i);
		i = j;
	}
	return rc;
}

/* ---- size groups ---- */

static int cmp_group(void *ctx, const void *pa, const void *pb)
{
	const dupscan_scan *s = ctx;
	const struct ds_rec *a = ds_rec(s, *(const uint32_t *)pa), *b = ds_rec(s, *(const uint32_t *)pb);
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	if (s->one_fs && a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (s->permissions) {
		if (a->mode != b->mode)
			return a->mode < b->mode ? -1 : 1;
		if (a->uid != b->uid)
			return a->uid < b->uid ? -1 : 1;
		if (a->gid != b->gid)
			return a->gid < b->gid ? -1 : 1;
	}
	return 0;
}

/* ---- one size group ---- */

struct by_hash {
	uint64_t key;
	uint32_t pos;
};

static int cmp_by_hash(void *ctx, const void *pa, const void *pb)
{
	const struct by_hash *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos; /* a fixed order within equal keys */
}

static int cmp_rec_cls(void *ctx, const void *pa, const void *pb)
{
	const dupscan_scan *s = ctx;
	uint32_t a = ds_rec(s, *(const uint32_t *)pa)->cls, b = ds_rec(s, *(const uint32_t *)pb)->cls;
	return a < b ? -1 : a > b;
}

/* After a bucket is settled: each class of two or more is a full-hash match. */
static int stage_classes(struct ds_ctx *c, const struct ds_member *m, size_t k)
{
	dupscan_scan *s = c->s;
	if (!s->on_stage)
		return 0;
	uint32_t *ri = malloc(k * sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	size_t n = 0;
	for (size_t x = 0; x < k; x++)
		if (ds_rec(s, m[x].rec)->cls != DS_NONE && !(ds_rec(s, m[x].rec)->flags & DS_F_DROPPED))
			ri[n++] = m[x].rec;
	int rc = ds_sort(ri, n, sizeof(*ri), cmp_rec_cls, s);
	for (size_t i = 0; rc == 0 && i < n;) {
		size_t j = i + 1;
		while (j < n && ds_rec(s, ri[j])->cls == ds_rec(s, ri[i])->cls)
			j++;
		rc = ds_result_stage(c, DUPSCAN_STAGE_FULL, ri + i, j - i);
		i = j;
	}
	free(ri);
	return rc;
}

/* Continue a file's hash from the end of its first block to its end. */
static int hash_rest(struct ds_ctx *c, struct ds_rec *r, struct ds_hashes *h, size_t hidx,
		     unsigned char *buf, uint64_t *full)
{
	dupscan_scan *s = c->s;
	int fd = ds_open_rec(c, r);
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	int err = 0;
	for (uint64_t off = DS_BLOCK; off < r->size && err == 0;) {
		size_t len = r->size - off < s->chunk ? (size_t)(r->size - off) : s->chunk;
		err = ds_pread_full(fd, buf, len, off);
		if (err == 0)
			ds_hash_update(h, hidx, buf, len);
		off += len;
	}
	if (err == 0)
		err = ds_check_unchanged(fd, r);
	close(fd);
	if (err < 0)
		ds_fail(c, r, err);
	else
		*full = ds_hash_digest(h, hidx);
	return 0;
}

/* Index the alive members of a lockstep result; a class is named by the
 * record of its first member. */
static int index_members(struct ds_ctx *c, struct ds_member *m, size_t n, struct ds_hashes *h,
			 uint64_t partial)
{
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		struct ds_rec *r = ds_rec(c->s, m[i].rec);
		uint64_t full = (h && r->size > DS_BLOCK) ? ds_hash_digest(h, m[i].hidx) : partial;
		int rc = ds_result_insert(c, m[i].rec, m[m[i].cls].rec, partial, full);
		if (rc)
			return rc;
	}
	return 0;
}

/* Hash every member to its end, on its own; bh receives (full hash, member)
 * sorted by hash. @return how many were hashed (dropped files are left out),
 * or -ENOMEM. */
static long hash_each(struct ds_ctx *c, struct ds_member *m, size_t k, struct ds_hashes *h,
		      uint64_t partial, struct by_hash *bh)
{
	dupscan_scan *s = c->s;
	bool big = ds_rec(s, m[0].rec)->size > DS_BLOCK;
	unsigned char *buf = big ? ds_big_alloc(s->chunk) : NULL;
	if (big && !buf)
		return -ENOMEM;
	int rc = 0;
	size_t nb = 0;
	for (size_t x = 0; x < k && rc == 0; x++) {
		struct ds_rec *r = ds_rec(s, m[x].rec);
		uint64_t full = partial; /* a file within its first block is hashed already */
		if (big)
			rc = hash_rest(c, r, h, m[x].hidx, buf, &full);
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			bh[nb++] = (struct by_hash){ full, (uint32_t)x };
	}
	ds_big_free(buf, big ? s->chunk : 0);
	if (rc == 0)
		rc = ds_sort(bh, nb, sizeof(*bh), cmp_by_hash, NULL);
	return rc ? rc : (long)nb;
}

/* -Q: classes by full hash alone. */
static int match_quick(struct ds_ctx *c, struct ds_member *m, size_t k, struct ds_hashes *h,
		       uint64_t partial)
{
	struct by_hash *bh = malloc(k * sizeof(*bh));
	if (!bh)
		return -ENOMEM;
	long nb = hash_each(c, m, k, h, partial, bh);
	int rc = nb < 0 ? (int)nb : 0;
	for (size_t i = 0; rc == 0 && i < (size_t)nb;) {
		size_t j = i + 1;
		while (j < (size_t)nb && bh[j].key == bh[i].key)
			j++;
		for (size_t x = i; j - i >= 2 && rc == 0 && x < j; x++)
			rc = ds_result_insert(c, m[bh[x].pos].rec, m[bh[i].pos].rec, partial, bh[x].key);
		i = j;
	}
	free(bh);
	return rc;
}

/* Too many files to hold open at once: hash each alone, then confirm each run of
 * equal full hashes against its first file in batches that fit. */
static int match_many(struct ds_ctx *c, struct ds_member *m, size_t n, struct ds_hashes *h,
		      const unsigned char *blocks, size_t blen, uint64_t partial)
{
	dupscan_scan *s = c->s;
	int rc = 0;
	struct by_hash *bh = malloc(n * sizeof(*bh));
	struct ds_member *batch = malloc(s->max_open * sizeof(*batch));
	struct ds_member *pending = malloc(n * sizeof(*pending));
	struct ds_member *joined = malloc(n * sizeof(*joined));
	long hashed = 0;
	if (!bh || !batch || !pending || !joined || (hashed = hash_each(c, m, n, h, partial, bh)) < 0) {
		rc = hashed < 0 ? (int)hashed : -ENOMEM;
		goto out;
	}
	size_t nb = (size_t)hashed;
	for (size_t i = 0; rc == 0 && i < nb;) {
		size_t j = i + 1;
		while (j < nb && bh[j].key == bh[i].key)
			j++;
		size_t np = 0;
		for (size_t k = i; k < j; k++)
			pending[np++] = m[bh[k].pos];
		while (rc == 0 && np >= 2) {
			/* np members against pending[0], max_open at a time; those
			 * proven equal to it wait in joined, to be indexed as one class */
			struct ds_member rep = pending[0];
			size_t left = 0, njoined = 0;
			for (size_t k = 1; rc == 0 && k < np;) {
				size_t cnt = 1, from = k;
				batch[0] = rep;
				while (k < np && cnt < s->max_open)
					batch[cnt++] = pending[k++];
				uint64_t start = blocks ? DS_BLOCK : 0;
				rc = ds_lockstep(c, batch, cnt, ds_rec(s, rep.rec)->size, start, NULL, blocks, blen);
				if (rc == 0 && (ds_rec(s, rep.rec)->flags & DS_F_DROPPED)) {
					/* the file compared against failed: it leaves, and the
					 * class goes on with a member proven equal to it, this
					 * batch compared again; with none, the rest start over */
					if (njoined > 0) {
						rep = joined[--njoined];
						k = from;
						continue;
					}
					for (size_t x = from; x < np; x++)
						if (!(ds_rec(s, pending[x].rec)->flags & DS_F_DROPPED))
							pending[left++] = pending[x];
					break;
				}
				for (size_t b = 1; rc == 0 && b < cnt; b++) {
					if (ds_rec(s, batch[b].rec)->flags & DS_F_DROPPED)
						continue;
					if (batch[b].alive && batch[b].cls == batch[0].cls)
						joined[njoined++] = batch[b];
					else
						pending[left++] = batch[b];
				}
			}
			for (size_t x = 0; rc == 0 && x < njoined; x++)
				rc = ds_result_insert(c, joined[x].rec, rep.rec, partial, bh[i].key);
			if (rc == 0 && njoined > 0)
				rc = ds_result_insert(c, rep.rec, rep.rec, partial, bh[i].key);
			np = left;
		}
		i = j;
	}
out:
	free(joined);
	free(pending);
	free(batch);
	free(bh);
	return rc;
}

/* Settle one run of equal partial hashes. */
static int match_bucket(struct ds_ctx *c, struct ds_member *m, size_t k, uint64_t partial,
			struct ds_hashes *h, const unsigned char *blocks, size_t blen)
{
	dupscan_scan *s = c->s;
	uint64_t size = ds_rec(s, m[0].rec)->size;
	uint32_t *ri = malloc(k * sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	for (size_t x = 0; x < k; x++)
		ri[x] = m[x].rec;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_PARTIAL, ri, k);
	free(ri);
	if (rc)
		return rc;
	if (s->partial_only) {
		for (size_t x = 0; x < k && rc == 0; x++)
			rc = ds_result_insert(c, m[x].rec, m[0].rec, partial, partial);
		return rc;
	}
	if (s->quick) {
		rc = match_quick(c, m, k, h, partial);
	} else if (k <= s->max_open) {
		uint64_t start = blocks ? (size > DS_BLOCK ? DS_BLOCK : size) : 0;
		rc = ds_lockstep(c, m, k, size, start, h, blocks, blen);
		if (rc == 0)
			rc = index_members(c, m, k, h, partial);
	} else {
		rc = match_many(c, m, k, h, blocks, blen, partial);
	}
	if (rc == 0)
		rc = stage_classes(c, m, k);
	return rc;
}

/* ---- from the hash cache ---- */

struct cached {
	uint64_t partial, full;
	uint32_t pos;
	bool has_full;
};

static int cmp_cached(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct cached *a = pa, *b = pb;
	if (a->partial != b->partial)
		return a->partial < b->partial ? -1 : 1;
	if (a->full != b->full)
		return a->full < b->full ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Settle a size group from cached hashes, when they settle all of it: no
 * first block is read, files unique by hash are never opened, and each run of
 * equal full hashes is still compared byte by byte. @return 1 when done, 0 to
 * match the group the usual way (nothing was done), or a negative code. */
static int match_cached(struct ds_ctx *c, const uint32_t *idx, size_t n)
{
	dupscan_scan *s = c->s;
	if (!s->cache || s->quick || s->partial_only)
		return 0;
	struct cached *v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int rc = 1;
	for (size_t i = 0; rc == 1 && i < n; i++) {
		v[i].pos = (uint32_t)i;
		if (!ds_cache_get(s, ds_rec(s, idx[i]), &v[i].partial, &v[i].full, &v[i].has_full))
			rc = 0;
	}
	if (rc == 1)
		rc = ds_sort(v, n, sizeof(*v), cmp_cached, NULL) ? -ENOMEM : 1;
	/* every run of equal first blocks must fit the files one thread may open */
	for (size_t i = 0; rc == 1 && i < n;) {
		size_t j = i + 1;
		while (j < n && v[j].partial == v[i].partial)
			j++;
		if (j - i > s->max_open)
			rc = 0;
		i = j;
	}
	struct ds_member *m = rc == 1 ? malloc(n * sizeof(*m)) : NULL;
	uint32_t *ri = rc == 1 ? malloc(n * sizeof(*ri)) : NULL;
	if (rc == 1 && (!m || !ri))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 1 && i < n; i++)
		rc = ds_result_note(c, idx[v[i].pos], v[i].partial, v[i].full, v[i].has_full) ? -ENOMEM : 1;
	for (size_t i = 0; rc == 1 && i < n;) {
		size_t j = i + 1;
		while (j < n && v[j].partial == v[i].partial)
			j++;
		if (j - i >= 2) {
			for (size_t x = i; x < j; x++)
				ri[x - i] = idx[v[x].pos];
			if (ds_result_stage(c, DUPSCAN_STAGE_PARTIAL, ri, j - i))
				rc = -ENOMEM;
		}
		/* a shared first block without full hashes (files that differed
		 * after it last time, so they were never read to the end): compare
		 * the run whole, hashing from its first byte */
		bool all_full = true;
		for (size_t x = i; x < j; x++)
			all_full = all_full && v[x].has_full;
		if (j - i >= 2 && !all_full && rc == 1) {
			struct ds_hashes *h = ds_hashes_new(j - i);
			if (!h) {
				rc = -ENOMEM;
				break;
			}
			for (size_t x = i; x < j; x++)
				m[x - i] = (struct ds_member){ idx[v[x].pos], -1, (uint32_t)(x - i), 0, true };
			uint64_t size = ds_rec(s, idx[v[i].pos])->size;
			int lrc = ds_lockstep_whole(c, m, j - i, size, h);
			for (size_t x = 0; lrc == 0 && x < j - i; x++)
				if (m[x].alive)
					lrc = ds_result_insert(c, m[x].rec, m[m[x].cls].rec, v[i].partial,
							       ds_hash_digest(h, m[x].hidx));
			if (lrc == 0)
				lrc = stage_classes(c, m, j - i);
			ds_hashes_free(h);
			if (lrc)
				rc = lrc;
			i = j;
			continue;
		}
		for (size_t a = i; rc == 1 && a < j;) {
			size_t b = a + 1;
			while (b < j && v[b].full == v[a].full)
				b++;
			if (b - a >= 2) {
				for (size_t x = a; x < b; x++)
					m[x - a] = (struct ds_member){ idx[v[x].pos], -1, (uint32_t)(x - a), 0, true };
				uint64_t size = ds_rec(s, idx[v[a].pos])->size;
				int lrc = ds_lockstep(c, m, b - a, size, 0, NULL, NULL, 0);
				for (size_t x = 0; lrc == 0 && x < b - a; x++)
					if (m[x].alive)
						lrc = ds_result_insert(c, m[x].rec, m[m[x].cls].rec, v[a].partial, v[a].full);
				if (lrc == 0)
					lrc = stage_classes(c, m, b - a);
				if (lrc)
					rc = lrc;
			}
			a = b;
		}
		i = j;
	}
	free(ri);
	free(m);
	free(v);
	return rc;
}

/* The first-block pass of one size group, in slices: a group of many small
 * files (one size of a source tree, a mail spool) is spread over the pool. */
#define FIRST_SLICE 256

struct first_job {
	struct ds_ctx *c;
	const uint32_t *idx;
	size_t n, blen;
	unsigned char *blocks;  /* kept first blocks, or NULL */
	struct ds_hashes *h;    /* streaming states, or NULL within one block */
	int *fds;               /* files held open, or NULL */
	uint64_t *partial;      /* per file */
	bool *got;              /* per file: read, partial set */
	struct ds_result *res;  /* per slice, or NULL: one slice reports to c->res */
};

static void first_slice(void *arg, size_t sl)
{
	struct first_job *j = arg;
	struct ds_ctx c = { j->c->s, j->res ? &j->res[sl] : j->c->res, NULL };
	dupscan_scan *s = c.s;
	unsigned char one[DS_BLOCK];
	size_t begin = 0, end = j->n; /* one slice: the whole group */
	if (j->res) {
		begin = sl * FIRST_SLICE;
		end = begin + FIRST_SLICE < j->n ? begin + FIRST_SLICE : j->n;
	}
	for (size_t i = begin; i < end; i++) {
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			c.res->rc = DUPSCAN_E_CANCELED;
			return;
		}
		struct ds_rec *r = ds_rec(s, j->idx[i]);
		int fd = ds_open_rec(&c, r);
		if (fd == -ENOMEM) {
			c.res->rc = fd;
			return;
		}
		if (fd < 0)
			continue;
		unsigned char *dst = j->blocks ? j->blocks + i * j->blen : one;
		int err = ds_pread_full(fd, dst, j->blen, 0);
		if (err < 0 || !j->fds)
			close(fd);
		else
			j->fds[i] = fd;
		if (err < 0) {
			ds_fail(&c, r, err);
			continue;
		}
		if (j->h) {
			ds_hash_update(j->h, i, dst, j->blen);
			j->partial[i] = ds_hash_digest(j->h, i);
		} else {
			j->partial[i] = ds_hash_oneshot(dst, j->blen);
		}
		j->got[i] = true;
	}
}

/* One size group (records idx[0..n), all of one size): hash the first block of
 * every file, then settle each run of equal partial hashes. Effects go to
 * c->res; c->res->rc tells how it ended. The pool calls it (ds_group_fn). */
static void match_group(struct ds_ctx *c, const uint32_t *idx, size_t n)
{
	dupscan_scan *s = c->s;
	int rc = 0;
	uint64_t size = ds_rec(s, idx[0])->size;
	c->res->files += n;
	rc = ds_result_stage(c, DUPSCAN_STAGE_EARLY, idx, n);
	if (rc == 0 && size == 0) {
		/* zero-length files (with -z) are all equal without a read */
		uint64_t empty = ds_hash_oneshot("", 0);
		for (size_t x = 0; x < n && rc == 0; x++)
			rc = ds_result_insert(c, idx[x], idx[0], empty, empty);
	}
	if (rc || size == 0) {
		if (rc)
			c->res->rc = rc;
		return;
	}
	rc = match_cached(c, idx, n);
	if (rc) {
		if (rc < 0)
			c->res->rc = rc;
		return;
	}
	size_t blen = size < DS_BLOCK ? (size_t)size : DS_BLOCK;
	/* first blocks stay in memory when they fit, so comparing never re-reads them */
	bool keep = !s->quick && !s->partial_only && (uint64_t)n * blen <= DS_BLOCK_BUDGET;
	unsigned char *blocks = keep ? ds_big_alloc(n * blen) : NULL;
	/* streaming states only where a full hash will continue them */
	struct ds_hashes *h = size > DS_BLOCK ? ds_hashes_new(n) : NULL;
	struct by_hash *bh = malloc(n * sizeof(*bh));
	uint64_t *partial = malloc(n * sizeof(*partial));
	bool *got = calloc(n, sizeof(*got));
	struct ds_member *m = NULL;
	/* a small group keeps its files open from the first read to the lockstep
	 * read: one open and one fstat per file */
	bool hold = !s->quick && !s->partial_only && size > DS_BLOCK && n <= s->max_open;
	int *fds = hold ? malloc(n * sizeof(*fds)) : NULL;
	if ((keep && !blocks) || (size > DS_BLOCK && !h) || !bh || !partial || !got || (hold && !fds)) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; hold && i < n; i++)
		fds[i] = -1;
	struct first_job job = { c, idx, n, blen, keep ? blocks : NULL, h, fds, partial, got, NULL };
	size_t nslices = (n + FIRST_SLICE - 1) / FIRST_SLICE;
	if (c->pool && nslices > 1) {
		/* each slice reports into its own result; merged below in file order */
		job.res = calloc(nslices, sizeof(*job.res));
		if (!job.res) {
			rc = -ENOMEM;
			goto out;
		}
	} else {
		nslices = 1;
	}
	ds_parallel_for(c, nslices, first_slice, &job);
	for (size_t sl = 0; job.res && sl < nslices; sl++) {
		if (rc == 0)
			rc = job.res[sl].rc;
		if (rc == 0)
			rc = ds_result_take_errors(c->res, &job.res[sl]);
		ds_result_free(&job.res[sl]);
	}
	if (job.res)
		free(job.res);
	else if (rc == 0)
		rc = c->res->rc;
	if (rc)
		goto out;
	size_t nb = 0;
	for (size_t i = 0; i < n; i++)
		if (got[i])
			bh[nb++] = (struct by_hash){ partial[i], (uint32_t)i };
	/* a file within its first block has its full hash too */
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (got[i])
			rc = ds_result_note(c, idx[i], partial[i], partial[i], size <= DS_BLOCK);
	if (rc)
		goto out;
	rc = ds_sort(bh, nb, sizeof(*bh), cmp_by_hash, NULL);
	size_t most = 0;
	for (size_t i = 0; rc == 0 && i < nb;) {
		size_t j = i + 1;
		while (j < nb && bh[j].key == bh[i].key)
			j++;
		most = j - i > most ? j - i : most;
		i = j;
	}
	if (rc == 0 && most >= 2 && !(m = malloc(most * sizeof(*m))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nb;) {
		size_t j = i + 1;
		while (j < nb && bh[j].key == bh[i].key)
			j++;
		/* a unique first block is settled after 4 KiB */
		if (j - i >= 2) {
			for (size_t x = 0; x < j - i; x++) {
				uint32_t pos = bh[i + x].pos;
				m[x] = (struct ds_member){ idx[pos], hold ? fds[pos] : -1, pos, 0, true };
				if (hold)
					fds[pos] = -1; /* the lockstep owns it now */
			}
			rc = match_bucket(c, m, j - i, bh[i].key, h, blocks, blen);
		}
		i = j;
	}
out:
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(m);
	free(got);
	free(partial);
	free(bh);
	ds_hashes_free(h);
	ds_big_free(blocks, keep ? n * blen : 0);
	if (rc)
		c->res->rc = rc;
}

int ds_match(dupscan_scan *s)
{
	int rc = 0;
	uint32_t *order = malloc((s->nrecs ? s->nrecs : 1) * sizeof(*order));
	uint32_t *groups = NULL;
	if (!order)
		return -ENOMEM;
	rc = ds_collapse_links(s, order);
	if (rc == 0)
		rc = ds_index_reserve(&s->index, s->nrecs);
	if (rc)
		goto out;

	/* candidates: one record per inode */
	uint32_t nc = 0;
	for (uint32_t i = 0; i < s->nrecs; i++) {
		struct ds_rec *r = ds_rec(s, i);
		if (r->rep != i || (r->flags & DS_F_ALIAS))
			continue;
		if (r->size == 0 && !s->zero_match) {
			r->flags |= DS_F_SKIPPED;
			continue;
		}
		order[nc++] = i;
	}
	rc = ds_sort(order, nc, sizeof(*order), cmp_group, s);
	/* groups of two or more files; a file alone in its group is unique unread */
	size_t ngroups = 0, cap = 0;
	uint64_t total = 0;
	for (uint32_t i = 0; rc == 0 && i < nc;) {
		uint32_t j = i + 1;
		while (j < nc && cmp_group(s, &order[i], &order[j]) == 0)
			j++;
		if (j - i == 1)
			ds_rec(s, order[i])->flags |= DS_F_SETTLED; /* alone: unique unread */
		if (j - i >= 2) {
			if (ngroups == cap) {
				cap = cap ? cap * 2 : 256;
				uint32_t *g = realloc(groups, cap * 2 * sizeof(*g));
				if (!g) {
					rc = -ENOMEM;
					break;
				}
				groups = g;
			}
			groups[2 * ngroups] = i;
			groups[2 * ngroups + 1] = j - i;
			ngroups++;
			total += j - i;
		}
		i = j;
	}
	if (rc == 0)
		rc = ds_run_groups(s, match_group, order, groups, ngroups, total);
out:
	free(groups);
	free(order);
	return rc;
}
