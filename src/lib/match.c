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

/* order[0..n) sorted by key (records' fields copied beside their indexes). */
static int sort_by(const dupscan_scan *s, uint32_t *order, size_t n,
		   void (*key)(const dupscan_scan *s, const struct ds_rec *r, uint64_t k[4]))
{
	struct ds_sortkey *a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		key(s, ds_rec(s, order[i]), a[i].k);
		a[i].pos = order[i];
	}
	ds_sort_keys(a, n);
	for (size_t i = 0; i < n; i++)
		order[i] = a[i].pos;
	free(a);
	return 0;
}

static void inode_key(const dupscan_scan *s, const struct ds_rec *r, uint64_t k[4])
{
	(void)s;
	k[0] = r->dev;
	k[1] = r->ino;
	k[2] = k[3] = 0;
}

int ds_collapse_links(dupscan_scan *s, uint32_t *order)
{
	for (uint32_t i = 0; i < s->nrecs; i++)
		order[i] = i;
	/* by inode, then record index: visit order decides among paths */
	int rc = sort_by(s, order, s->nrecs, inode_key);
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

/* cmp_group's order as keys. */
static void group_key(const dupscan_scan *s, const struct ds_rec *r, uint64_t k[4])
{
	k[0] = r->size;
	k[1] = s->one_fs ? r->dev : 0;
	k[2] = s->permissions ? (uint64_t)r->mode << 32 | r->uid : 0;
	k[3] = s->permissions ? r->gid : 0;
}

/* ---- one bucket: files of one size with equal first-block hashes ---- */

struct by_hash {
	uint64_t key;
	uint32_t pos;
};

static int cmp_by_hash(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct by_hash *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos; /* a fixed order within equal keys */
}

/* A bucket and what is known of its members, whether their first blocks were
 * read this run or their hashes came from the cache. */
struct bucket {
	const dupscan_scan *s;
	struct ds_member *m;
	size_t k;
	uint64_t size, partial;
	struct ds_hashes *h;          /* states by m[].hidx, standing at h_from; NULL within one block */
	uint64_t h_from;              /* DS_BLOCK after a first-block read, 0 for fresh states */
	const unsigned char *blocks;  /* first blocks by m[].hidx, or NULL */
	size_t blen;
	const uint64_t *full;         /* full hashes by member, known from the cache or the sweep, or NULL */
	const uint32_t *same;         /* settled by the sweep: by member, the first member of its
	                               * class (DS_NONE: in none); or NULL */
	const int *err;               /* with same: by member, why it failed in the sweep, or 0 */
	const struct known *known;    /* with DUPSCAN_OPT_CACHE_TRUST: by member, what is known of
	                               * it, to settle the bucket with proofs; or NULL */
};

/* A member of a bucket settled with proofs: its full hash when known (from the
 * cache, or within its first block), else where its hash state stands. */
struct known {
	uint64_t full;
	bool has_full;
	const struct ds_hashes *h;    /* its state after the first block (read this run), or NULL: from 0 */
	size_t hidx;
};

static int cmp_insert_cls(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_insert *a = pa, *b = pb;
	return a->cls < b->cls ? -1 : a->cls > b->cls;
}

/* After a bucket is settled: each class it added (inserts from first on) is a
 * full-hash match, told to the stage callback at commit. */
static int stage_classes(struct ds_ctx *c, size_t first)
{
	dupscan_scan *s = c->s;
	size_t n = c->res->nins - first;
	if (!s->on_stage || n < 2)
		return 0;
	struct ds_insert *ins = malloc(n * sizeof(*ins));
	uint32_t *ri = malloc(n * sizeof(*ri));
	int rc = ins && ri ? 0 : -ENOMEM;
	if (rc == 0) {
		memcpy(ins, c->res->ins + first, n * sizeof(*ins));
		rc = ds_sort(ins, n, sizeof(*ins), cmp_insert_cls, NULL);
	}
	for (size_t i = 0; rc == 0 && i < n;) {
		size_t j = i, nr = 0;
		for (; j < n && ins[j].cls == ins[i].cls; j++)
			if (!(ds_rec(s, ins[j].rec)->flags & DS_F_DROPPED))
				ri[nr++] = ins[j].rec;
		rc = ds_result_stage(c, DUPSCAN_STAGE_FULL, ri, nr);
		i = j;
	}
	free(ri);
	free(ins);
	return rc;
}

/* Hash bytes [from, to) of a file into its state h[hidx] (which stands at
 * from); at its end, check the file is still as scanned. @return 0 (a file
 * that fails is dropped and reported) or -ENOMEM. */
static int hash_range(struct ds_ctx *c, struct ds_rec *r, struct ds_hashes *h, size_t hidx, uint64_t from,
		      uint64_t to, unsigned char *buf)
{
	dupscan_scan *s = c->s;
	int fd = ds_open_rec(c, r);
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	posix_fadvise(fd, (off_t)from, (off_t)(to - from), POSIX_FADV_SEQUENTIAL);
	int err = 0;
	for (uint64_t off = from; off < to && err == 0;) {
		size_t len = to - off < s->chunk ? (size_t)(to - off) : s->chunk;
		err = ds_pread_full(fd, buf, len, off);
		if (err == 0)
			ds_hash_update(h, hidx, buf, len);
		off += len;
	}
	if (err == 0 && to == r->size)
		err = ds_check_unchanged(fd, r);
	close(fd);
	if (err < 0)
		ds_fail(c, r, err);
	return 0;
}

/* Index the alive members of a lockstep result; a class is named by the
 * record of its first member. */
static int index_members(struct ds_ctx *c, const struct bucket *b)
{
	for (size_t i = 0; i < b->k; i++) {
		const struct ds_member *m = &b->m[i];
		if (!m->alive)
			continue;
		uint64_t full = b->full ? b->full[i] : b->h ? ds_hash_digest(b->h, m->hidx) : b->partial;
		int rc = ds_result_insert(c, m->rec, b->m[m->cls].rec, b->partial, full);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_member_inode(void *ctx, const void *pa, const void *pb)
{
	const struct bucket *b = ctx;
	const struct ds_rec *x = ds_rec(b->s, b->m[*(const uint32_t *)pa].rec);
	const struct ds_rec *y = ds_rec(b->s, b->m[*(const uint32_t *)pb].rec);
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

#define FIRST_ROUND (64u * 1024u)           /* read per file in the first round... */
#define LAST_ROUND (64u * 1024u * 1024u)    /* ...growing four times a round up to this */

/* The full hashes of the members that may have a twin, into bh sorted by
 * hash: known ones, or read in rounds of growing length (64 KiB, 256 KiB,
 * ...), each file only until its hash so far is unlike every other's: files
 * that differ early are not read to their end. @return how many, or a
 * negative code. */
static long full_hashes(struct ds_ctx *c, const struct bucket *b, struct by_hash *bh)
{
	dupscan_scan *s = c->s;
	size_t nb = 0;
	if (b->full || !b->h) {
		/* known, or a file within its first block, hashed already */
		for (size_t x = 0; x < b->k; x++)
			if (!(ds_rec(s, b->m[x].rec)->flags & DS_F_DROPPED))
				bh[nb++] = (struct by_hash){ b->full ? b->full[x] : b->partial, (uint32_t)x };
		return ds_sort(bh, nb, sizeof(*bh), cmp_by_hash, NULL) ? -ENOMEM : (long)nb;
	}
	uint32_t *alive = malloc(b->k * sizeof(*alive));
	unsigned char *buf = ds_big_alloc(s->chunk);
	int rc = alive && buf ? 0 : -ENOMEM;
	size_t na = 0;
	for (size_t x = 0; rc == 0 && x < b->k; x++)
		if (!(ds_rec(s, b->m[x].rec)->flags & DS_F_DROPPED))
			alive[na++] = (uint32_t)x;
	uint64_t off = b->h_from, len = FIRST_ROUND;
	while (rc == 0 && na > 0 && off < b->size) {
		uint64_t end = b->size - off <= len ? b->size : off + len;
		/* one stream: in inode order, which on most filesystems follows the disk */
		if (s->io_mode == DUPSCAN_IO_HDD)
			rc = ds_sort(alive, na, sizeof(*alive), cmp_member_inode, (void *)b);
		for (size_t i = 0; rc == 0 && i < na; i++) {
			if (atomic_load_explicit(&s->canceled, memory_order_relaxed))
				rc = DUPSCAN_E_CANCELED;
			else
				rc = hash_range(c, ds_rec(s, b->m[alive[i]].rec), b->h, b->m[alive[i]].hidx, off, end, buf);
		}
		/* those whose bytes so far are like no other's are settled */
		nb = 0;
		for (size_t i = 0; rc == 0 && i < na; i++)
			if (!(ds_rec(s, b->m[alive[i]].rec)->flags & DS_F_DROPPED))
				bh[nb++] = (struct by_hash){ ds_hash_digest(b->h, b->m[alive[i]].hidx), alive[i] };
		if (rc == 0)
			rc = ds_sort(bh, nb, sizeof(*bh), cmp_by_hash, NULL);
		na = 0;
		for (size_t i = 0; rc == 0 && i < nb;) {
			size_t j = i + 1;
			while (j < nb && bh[j].key == bh[i].key)
				j++;
			for (size_t q = i; j - i >= 2 && q < j; q++)
				alive[na++] = bh[q].pos;
			i = j;
		}
		off = end;
		len = len < LAST_ROUND / 4 ? len * 4 : LAST_ROUND;
	}
	/* at the end, the states are the full hashes */
	nb = 0;
	for (size_t i = 0; rc == 0 && i < na; i++)
		bh[nb++] = (struct by_hash){ ds_hash_digest(b->h, b->m[alive[i]].hidx), alive[i] };
	if (rc == 0)
		rc = ds_sort(bh, nb, sizeof(*bh), cmp_by_hash, NULL);
	ds_big_free(buf, s->chunk);
	free(alive);
	return rc ? rc : (long)nb;
}

/* -Q: classes by full hash alone. */
static int match_quick(struct ds_ctx *c, const struct bucket *b)
{
	struct by_hash *bh = malloc(b->k * sizeof(*bh));
	if (!bh)
		return -ENOMEM;
	long nb = full_hashes(c, b, bh);
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

/* By full hash first (known, or each file hashed alone), then each run of
 * equal full hashes confirmed against its first file in batches of files
 * that may be open at once: for buckets too large to read side by side, and
 * for full hashes known from the cache, so files unique by hash are never
 * opened. */
static int match_by_full(struct ds_ctx *c, const struct bucket *b)
{
	dupscan_scan *s = c->s;
	size_t n = b->k;
	int rc = 0;
	struct by_hash *bh = malloc(n * sizeof(*bh));
	struct ds_member *batch = malloc(s->max_open * sizeof(*batch));
	struct ds_member *pending = malloc(n * sizeof(*pending));
	struct ds_member *joined = malloc(n * sizeof(*joined));
	long hashed = 0;
	if (!bh || !batch || !pending || !joined || (hashed = full_hashes(c, b, bh)) < 0) {
		rc = hashed < 0 ? (int)hashed : -ENOMEM;
		goto out;
	}
	size_t nb = (size_t)hashed;
	uint64_t start = b->blocks ? DS_BLOCK : 0;
	for (size_t i = 0; rc == 0 && i < nb;) {
		size_t j = i + 1;
		while (j < nb && bh[j].key == bh[i].key)
			j++;
		size_t np = 0;
		for (size_t k = i; k < j; k++)
			pending[np++] = b->m[bh[k].pos];
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
				rc = ds_lockstep(c, batch, cnt, b->size, start, NULL, 0, b->blocks, b->blen);
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
				for (size_t q = 1; rc == 0 && q < cnt; q++) {
					if (ds_rec(s, batch[q].rec)->flags & DS_F_DROPPED)
						continue;
					if (batch[q].alive && batch[q].cls == batch[0].cls)
						joined[njoined++] = batch[q];
					else
						pending[left++] = batch[q];
				}
			}
			for (size_t x = 0; rc == 0 && x < njoined; x++)
				rc = ds_result_insert(c, joined[x].rec, rep.rec, b->partial, bh[i].key);
			if (rc == 0 && njoined > 0)
				rc = ds_result_insert(c, rep.rec, rep.rec, b->partial, bh[i].key);
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

/* A bucket the sweep settled (sweep.c): its failures reported at its turn,
 * its classes indexed as a side by side comparison would have named them. */
static int from_sweep(struct ds_ctx *c, const struct bucket *b)
{
	for (size_t x = 0; x < b->k; x++)
		if (b->err[x])
			ds_fail(c, ds_rec(c->s, b->m[x].rec), b->err[x]);
	int rc = 0;
	for (size_t x = 0; rc == 0 && x < b->k; x++)
		if (b->same[x] != DS_NONE)
			rc = ds_result_insert(c, b->m[x].rec, b->m[b->same[x]].rec, b->partial, b->full[x]);
	return rc;
}

struct by_rec {
	uint32_t rec, x;
};

static int cmp_u32_plain(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

static int cmp_u32(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_u32_plain(pa, pb);
}

static int cmp_by_rec_plain(const void *pa, const void *pb)
{
	const struct by_rec *a = pa, *b = pb;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static int cmp_by_rec(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_by_rec_plain(pa, pb);
}

/* Members in their class by a proof: flagged, and their class indexed as the
 * class named cls (the whole class, or the rest of it after its first). */
static int insert_proven(struct ds_ctx *c, const struct bucket *b, const uint32_t *mem, size_t n, uint32_t cls,
			 uint64_t full)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct ds_rec *r = ds_rec(c->s, b->m[mem[i]].rec);
		r->flags |= DS_F_TRUSTED;
		if (b->m[mem[i]].rec != cls)
			rc = ds_result_insert(c, b->m[mem[i]].rec, cls, b->partial, full);
	}
	return rc;
}

/* DUPSCAN_OPT_CACHE_TRUST: the members whose proofs hold and name one class
 * stand as one file, their first; the bucket is settled among those and the
 * other members (full hashes first, known or read, then byte comparison of
 * equal ones with match_by_full()), and each proven class follows its first
 * member. A bucket of one proven class reads nothing. */
static int match_trusted(struct ds_ctx *c, const struct bucket *b)
{
	dupscan_scan *s = c->s;
	size_t k = b->k, nr = 0;
	uint64_t *cls = malloc(k * sizeof(*cls));
	struct by_hash *sub = malloc(k * sizeof(*sub));  /* proven members by class number, then order */
	uint32_t *head = malloc(k * sizeof(*head));      /* per member: its class' first member, or itself */
	uint32_t *mem = malloc(k * sizeof(*mem));
	struct ds_member *rm = malloc(k * sizeof(*rm));
	uint64_t *rfull = malloc(k * sizeof(*rfull));
	struct by_rec *heads = malloc(k * sizeof(*heads));
	bool *placed = calloc(k, sizeof(*placed));
	struct ds_hashes *hs = NULL;
	unsigned char *buf = NULL;
	int rc = cls && sub && head && mem && rm && rfull && heads && placed ? 0 : -ENOMEM;
	size_t nsub = 0;
	for (size_t x = 0; rc == 0 && x < k; x++) {
		int64_t at;
		if (!ds_cache_proof(s, ds_rec(s, b->m[x].rec), &cls[x], &at))
			cls[x] = 0;
		head[x] = (uint32_t)x;
		if (cls[x])
			sub[nsub++] = (struct by_hash){ cls[x], (uint32_t)x };
	}
	if (rc == 0)
		rc = ds_sort(sub, nsub, sizeof(*sub), cmp_by_hash, NULL);
	for (size_t i = 1; rc == 0 && i < nsub; i++)
		if (sub[i].key == sub[i - 1].key)
			head[sub[i].pos] = head[sub[i - 1].pos];
	size_t nheads = 0;
	for (size_t x = 0; rc == 0 && x < k; x++) {
		if (head[x] != x)
			continue;
		if (cls[x])
			heads[nheads++] = (struct by_rec){ b->m[x].rec, (uint32_t)x };
		rm[nr] = (struct ds_member){ b->m[x].rec, -1, (uint32_t)nr, 0, true };
		mem[nr++] = (uint32_t)x;
	}
	if (rc)
		goto out;
	if (nr == 1) {
		/* one proven class and nothing else: no read */
		for (size_t x = 0; x < k; x++)
			head[x] = (uint32_t)x;
		rc = insert_proven(c, b, head, k, b->m[0].rec, b->known[0].full);
		if (rc == 0)
			rc = ds_result_insert(c, b->m[0].rec, b->m[0].rec, b->partial, b->known[0].full);
		goto out;
	}
	/* full hashes of those that lack one: a proven member always has one */
	hs = ds_hashes_new(nr);
	buf = ds_big_alloc(s->chunk);
	if (!hs || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; rc == 0 && j < nr; j++) {
		const struct known *kn = &b->known[mem[j]];
		struct ds_rec *r = ds_rec(s, rm[j].rec);
		if (kn->has_full) {
			rfull[j] = kn->full;
			continue;
		}
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		uint64_t from = 0;
		if (kn->h) {
			ds_hash_copy(hs, j, kn->h, kn->hidx);
			from = DS_BLOCK;
		}
		rc = hash_range(c, r, hs, j, from, b->size, buf);
		rfull[j] = ds_hash_digest(hs, j);
		/* a file that differed after its first block last time has its full
		 * hash now: kept, so the next run need not read it */
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ rm[j].rec, true, false, b->partial, rfull[j] });
	}
	if (rc)
		goto out;
	struct bucket rb = { s, rm, nr, b->size, b->partial, NULL, 0, NULL, 0, rfull, NULL, NULL, NULL };
	size_t first = c->res->nins;
	rc = match_by_full(c, &rb);
	/* each proven class joins the class its first member joined */
	size_t end = c->res->nins;
	if (rc == 0)
		rc = ds_sort(heads, nheads, sizeof(*heads), cmp_by_rec, NULL);
	for (size_t i = first; rc == 0 && i < end; i++) {
		struct ds_insert in = c->res->ins[i];
		struct by_rec key = { in.rec, 0 };
		const struct by_rec *h = bsearch(&key, heads, nheads, sizeof(*heads), cmp_by_rec_plain);
		if (!h)
			continue;
		/* the first member is in already, maybe joined to another's class */
		size_t n = 0;
		for (size_t x = 0; x < k; x++)
			if (head[x] == h->x && x != h->x)
				mem[n++] = (uint32_t)x;
		ds_rec(s, in.rec)->flags |= DS_F_TRUSTED;
		rc = insert_proven(c, b, mem, n, in.cls, in.full);
		placed[h->x] = true;
	}
	/* a proven class nothing joined stands alone, without its first member
	 * when that one failed to read */
	for (size_t i = 0; rc == 0 && i < nheads; i++) {
		if (placed[heads[i].x])
			continue;
		size_t n = 0;
		for (size_t x = 0; x < k; x++)
			if (head[x] == heads[i].x && !(ds_rec(s, b->m[x].rec)->flags & DS_F_DROPPED))
				mem[n++] = (uint32_t)x;
		if (n < 2)
			continue;
		uint32_t named = b->m[mem[0]].rec;
		rc = insert_proven(c, b, mem, n, named, b->known[mem[0]].full);
		if (rc == 0)
			rc = ds_result_insert(c, named, named, b->partial, b->known[mem[0]].full);
	}
out:
	ds_big_free(buf, buf ? s->chunk : 0);
	ds_hashes_free(hs);
	free(placed);
	free(heads);
	free(rfull);
	free(rm);
	free(mem);
	free(head);
	free(sub);
	free(cls);
	return rc;
}

/* With DUPSCAN_OPT_CACHE_TRUST: the members of a settled bucket that joined no
 * class and whose full hash is unknown (told apart before their end) are
 * hashed whole and noted, so a later trusted run need not read them. m[x] is
 * in a class when an insert from first on names it. @return 0 or a negative code. */
static int finish_hashes(struct ds_ctx *c, const struct ds_member *m, size_t k, const bool *has_full,
			 uint64_t size, uint64_t partial, size_t first)
{
	dupscan_scan *s = c->s;
	size_t nin = c->res->nins - first;
	uint32_t *in = malloc((nin ? nin : 1) * sizeof(*in));
	unsigned char *buf = NULL;
	int rc = in ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < nin; i++)
		in[i] = c->res->ins[first + i].rec;
	if (rc == 0)
		rc = ds_sort(in, nin, sizeof(*in), cmp_u32, NULL);
	for (size_t x = 0; rc == 0 && x < k; x++) {
		struct ds_rec *r = ds_rec(s, m[x].rec);
		if (has_full[x] || (r->flags & DS_F_DROPPED) || bsearch(&m[x].rec, in, nin, sizeof(*in), cmp_u32_plain))
			continue;
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		struct ds_hashes *h = ds_hashes_new(1);
		if (!h || (!buf && !(buf = ds_big_alloc(s->chunk)))) {
			ds_hashes_free(h);
			rc = -ENOMEM;
			break;
		}
		rc = hash_range(c, r, h, 0, 0, size, buf);
		if (rc == 0 && !(r->flags & DS_F_DROPPED))
			rc = ds_result_note(c, &(struct ds_hashed){ m[x].rec, true, false, partial, ds_hash_digest(h, 0) });
		ds_hashes_free(h);
	}
	ds_big_free(buf, buf ? s->chunk : 0);
	free(in);
	return rc;
}

/* Settle one bucket: its classes go to c->res. */
static int match_bucket(struct ds_ctx *c, const struct bucket *b)
{
	dupscan_scan *s = c->s;
	uint32_t *ri = malloc(b->k * sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	for (size_t x = 0; x < b->k; x++)
		ri[x] = b->m[x].rec;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_PARTIAL, ri, b->k);
	free(ri);
	if (rc)
		return rc;
	if (s->partial_only) {
		for (size_t x = 0; x < b->k && rc == 0; x++)
			rc = ds_result_insert(c, b->m[x].rec, b->m[0].rec, b->partial, b->partial);
		return rc;
	}
	size_t first = c->res->nins;
	if (b->same) {
		rc = from_sweep(c, b);
	} else if (b->known) {
		rc = match_trusted(c, b);
	} else if (s->quick) {
		rc = match_quick(c, b);
	} else if (!b->full && b->k <= s->max_open) {
		/* side by side, hashing as it goes: one read of each file */
		uint64_t start = b->blocks ? (b->size > DS_BLOCK ? DS_BLOCK : b->size) : 0;
		rc = ds_lockstep(c, b->m, b->k, b->size, start, b->h, b->h_from, b->blocks, b->blen);
		if (rc == 0)
			rc = index_members(c, b);
	} else {
		rc = match_by_full(c, b);
	}
	if (rc == 0)
		rc = stage_classes(c, first);
	return rc;
}

/* ---- one size group ---- */

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
	struct ds_hashed *hv;   /* per file: its partial hash */
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
		uint64_t partial;
		if (j->h) {
			ds_hash_update(j->h, i, dst, j->blen);
			partial = ds_hash_digest(j->h, i);
		} else {
			partial = ds_hash_oneshot(dst, j->blen);
		}
		/* a file within its first block has its full hash too */
		j->hv[i] = (struct ds_hashed){ j->idx[i], j->blen == r->size, false, partial, partial };
		j->got[i] = true;
	}
}

/* Read the first block of every file of a group (fj set up by the caller). */
static int read_first_blocks(struct ds_ctx *c, struct first_job *fj)
{
	size_t nslices = (fj->n + FIRST_SLICE - 1) / FIRST_SLICE;
	if (ds_pool_helpers(c->pool) > 0 && nslices > 1) {
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
static bool from_cache(const dupscan_scan *s, const uint32_t *idx, size_t n, struct ds_hashed *hv, bool *got)
{
	if (!ds_cache_usable(s))
		return false;
	for (size_t i = 0; i < n; i++) {
		hv[i].rec = idx[i];
		if (!ds_cache_get(s, ds_rec(s, idx[i]), &hv[i]))
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
static bool settled_by_cache(const dupscan_scan *s, const uint32_t *idx, size_t n)
{
	struct ds_sortkey *a = malloc(n * sizeof(*a));
	bool settled = a != NULL;
	for (size_t i = 0; settled && i < n; i++) {
		struct ds_hashed h;
		settled = ds_cache_get(s, ds_rec(s, idx[i]), &h);
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
static size_t from_cache_each(const dupscan_scan *s, const uint32_t *idx, size_t n, struct ds_hashed *hv,
			      bool *got)
{
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		hv[i].rec = idx[i];
		got[i] = ds_cache_get(s, ds_rec(s, idx[i]), &hv[i]);
		found += got[i];
	}
	return found;
}

/* With DUPSCAN_OPT_CACHE_TRUST, a group the cache covers in part: the first
 * blocks of the files it does not hold, read now (states into *sh, by their
 * place among them, where stidx[i] says). @return 0 or a negative code. */
static int read_uncached(struct ds_ctx *c, const uint32_t *idx, size_t n, size_t blen, struct ds_hashed *hv,
			 bool *got, struct ds_hashes **sh, uint32_t *stidx)
{
	uint64_t size = ds_rec(c->s, idx[0])->size;
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
	if (rc == 0 && size > DS_BLOCK && !(*sh = ds_hashes_new(nsub)))
		rc = -ENOMEM;
	if (rc == 0) {
		struct first_job job = { c, sub, nsub, blen, NULL, *sh, NULL, shv, sgot, NULL };
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

/* The first blocks read ahead in disk order (s->first_pass), as the group
 * would have read them: hashes, states continued (into h, by position in the
 * group), the blocks (into blocks, when every file's is kept and blocks is
 * given); a failure is reported now, at the group's turn. @return 0, -ENOMEM,
 * or 1 when blocks could not be filled (some were not kept). */
static int from_first_pass(struct ds_ctx *c, const uint32_t *idx, size_t n, struct ds_hashed *hv, bool *got,
			   struct ds_hashes *h, unsigned char *blocks, size_t blen)
{
	const struct ds_first_pass *fp = c->s->first_pass;
	size_t base = (size_t)(idx - fp->order);
	bool all_kept = true;
	for (size_t i = 0; i < n; i++) {
		struct ds_rec *r = ds_rec(c->s, idx[i]);
		size_t p = base + i;
		if (fp->err[p]) {
			ds_fail(c, r, fp->err[p]);
			continue;
		}
		got[i] = fp->got[p];
		if (!got[i])
			continue;
		hv[i] = (struct ds_hashed){ idx[i], r->size <= DS_BLOCK, false, fp->partial[p], fp->partial[p] };
		if (h)
			ds_hash_copy(h, i, fp->h, p);
		if (fp->slot[p] == DS_NONE)
			all_kept = false;
		else if (blocks)
			memcpy(blocks + i * blen, fp->blocks + (size_t)fp->slot[p] * DS_BLOCK, blen);
	}
	if (c->res->rc == -ENOMEM)
		return -ENOMEM;
	return blocks && !all_kept ? 1 : 0;
}

/* One size group between its heads (first blocks read, or hashes from the
 * cache) and its buckets: what is known of each file, and scratch for one
 * bucket at a time, sized for the largest. */
struct group {
	struct ds_ctx *c;
	const uint32_t *idx;
	size_t n, blen;
	uint64_t size;
	struct ds_hashed *hv;        /* per file: its hashes */
	bool *got;                   /* per file: hv holds its first-block hash */
	struct by_hash *bh;          /* the files got, sorted by first-block hash */
	size_t nb;
	unsigned char *blocks;       /* first blocks by position, when kept */
	bool keep, hold;             /* blocks kept; files held open in fds */
	struct ds_hashes *h;         /* streaming states by position; NULL within one block */
	int *fds;
	bool trust, cached, mixed;   /* cache proofs trusted; all / some files' hashes from the cache */
	struct ds_hashes *sh;        /* mixed: the states of the files read, */
	uint32_t *stidx;             /* by stidx (DS_NONE: from the cache) */
	struct ds_member *m;         /* the bucket's members */
	uint64_t *full;
	uint32_t *same;
	int *serr;
	struct known *kn;
	bool *known_full;
	bool finish;                 /* trust: hash whole what a later run would read */
};

/* The first blocks of a group the cache does not hold, read now or taken from
 * the pass that read them ahead in disk order. */
static int read_heads(struct group *g)
{
	struct ds_ctx *c = g->c;
	const dupscan_scan *s = c->s;
	size_t n = g->n, blen = g->blen;
	/* first blocks stay in memory when they fit, so comparing never re-reads them */
	g->keep = !s->quick && !s->partial_only && (uint64_t)n * blen <= DS_BLOCK_BUDGET;
	/* a small group keeps its files open from the first read to the lockstep
	 * read: one open and one fstat per file (not when read ahead) */
	g->hold = !s->first_pass && !s->quick && !s->partial_only && g->size > DS_BLOCK && n <= s->max_open;
	g->blocks = g->keep ? ds_big_alloc(n * blen) : NULL;
	/* streaming states only where a full hash will continue them */
	g->h = g->size > DS_BLOCK ? ds_hashes_new(n) : NULL;
	g->fds = g->hold ? malloc(n * sizeof(*g->fds)) : NULL;
	for (size_t i = 0; g->fds && i < n; i++)
		g->fds[i] = -1;
	if ((g->keep && !g->blocks) || (g->size > DS_BLOCK && !g->h) || (g->hold && !g->fds))
		return -ENOMEM;
	if (!s->first_pass) {
		struct first_job job = { c, g->idx, n, blen, g->blocks, g->h, g->fds, g->hv, g->got, NULL };
		return read_first_blocks(c, &job);
	}
	int rc = from_first_pass(c, g->idx, n, g->hv, g->got, g->h, g->blocks, blen);
	if (rc == 1) {
		/* some were not kept ahead: the blocks are read again where needed */
		ds_big_free(g->blocks, n * blen);
		g->blocks = NULL;
		g->keep = false;
		rc = 0;
	}
	return rc;
}

/* Every file's first-block hash: from the cache when it holds the group (with
 * trust, the files it holds, the rest read), else read. */
static int gather_heads(struct group *g)
{
	struct ds_ctx *c = g->c;
	dupscan_scan *s = c->s;
	g->trust = s->cache_trust && ds_cache_usable(s);
	if (g->trust) {
		size_t ncached = from_cache_each(s, g->idx, g->n, g->hv, g->got);
		g->cached = ncached == g->n;
		g->mixed = ncached > 0 && !g->cached;
	} else {
		g->cached = from_cache(s, g->idx, g->n, g->hv, g->got) &&
			    (s->io_mode != DUPSCAN_IO_HDD || settled_by_cache(s, g->idx, g->n));
		for (size_t i = 0; !g->cached && i < g->n; i++)
			g->got[i] = false;
	}
	if (g->mixed) {
		/* a bucket tells its files apart by stidx: read_uncached() sets it whole */
		if (!(g->stidx = malloc(g->n * sizeof(*g->stidx))))
			return -ENOMEM;
		return read_uncached(c, g->idx, g->n, g->blen, g->hv, g->got, &g->sh, g->stidx);
	}
	return g->cached ? 0 : read_heads(g);
}

/* The end of the run of equal first-block hashes starting at bh[i]. */
static size_t run_end(const struct group *g, size_t i)
{
	size_t j = i + 1;
	while (j < g->nb && g->bh[j].key == g->bh[i].key)
		j++;
	return j;
}

/* Scratch for the largest bucket, most members. */
static int bucket_scratch(struct group *g, size_t most)
{
	const dupscan_scan *s = g->c->s;
	/* a trusting run keeps full hashes for the next, even without a cache file yet */
	g->finish = s->cache_trust && s->cache && !s->quick && !s->partial_only;
	bool ok = (g->m = malloc(most * sizeof(*g->m))) && (g->full = malloc(most * sizeof(*g->full)));
	if (ok && s->sweep)
		ok = (g->same = malloc(most * sizeof(*g->same))) && (g->serr = malloc(most * sizeof(*g->serr)));
	if (ok && (g->cached || g->mixed) && g->trust)
		ok = (g->kn = malloc(most * sizeof(*g->kn))) != NULL;
	if (ok && g->finish)
		ok = (g->known_full = malloc(most * sizeof(*g->known_full))) != NULL;
	return ok ? 0 : -ENOMEM;
}

/* The files got, noted and sorted by first-block hash; scratch for the largest run. */
static int sort_heads(struct group *g)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < g->n; i++) {
		if (!g->got[i])
			continue;
		g->bh[g->nb++] = (struct by_hash){ g->hv[i].partial, (uint32_t)i };
		rc = ds_result_note(g->c, &g->hv[i]);
	}
	if (rc == 0)
		rc = ds_sort(g->bh, g->nb, sizeof(*g->bh), cmp_by_hash, NULL);
	size_t most = 0;
	for (size_t i = 0, j; rc == 0 && i < g->nb; i = j) {
		j = run_end(g, i);
		most = j - i > most ? j - i : most;
	}
	return rc || most < 2 ? rc : bucket_scratch(g, most);
}

/* The run bh[i..i+k) as the bucket's members: read this run, their states and
 * blocks by position in the group (in a group the cache holds in part, states
 * by stidx); from the cache, fresh states by position in the bucket.
 * @return how many came from the cache; *all_full: every full hash known. */
static size_t take_members(struct group *g, size_t i, size_t k, bool *all_full)
{
	size_t from_cache_n = 0;
	*all_full = true;
	for (size_t x = 0; x < k; x++) {
		uint32_t pos = g->bh[i + x].pos;
		bool was_cached = g->cached || (g->mixed && g->stidx[pos] == DS_NONE);
		g->m[x] = (struct ds_member){ g->idx[pos], g->hold ? g->fds[pos] : -1,
					      was_cached ? (uint32_t)x : g->mixed ? g->stidx[pos] : pos, 0, true };
		if (g->hold)
			g->fds[pos] = -1; /* the lockstep owns it now */
		g->full[x] = g->hv[pos].full;
		*all_full = *all_full && g->hv[pos].has_full;
		from_cache_n += was_cached;
		if (g->kn)
			g->kn[x] = (struct known){ g->hv[pos].full, g->hv[pos].has_full, was_cached ? NULL : g->sh,
						   was_cached ? 0 : g->stidx[pos] };
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
		uint64_t kc;
		int64_t at;
		proofs = ds_cache_proof(g->c->s, ds_rec(g->c->s, g->m[x].rec), &kc, &at);
	}
	return proofs;
}

/* A bucket the sweep settled in disk order already: by member, the first
 * member of its class (same), its full hash and its failure. */
static bool swept_bucket(struct group *g, size_t k)
{
	const dupscan_scan *s = g->c->s;
	const struct ds_sweep *sw = s->sweep;
	if (!sw || g->cached || g->mixed)
		return false;
	size_t base = (size_t)(g->idx - s->first_pass->order);
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

/* The files bh[i..i+k) of one first-block hash settled as a bucket. */
static int settle_run(struct group *g, size_t i, size_t k)
{
	struct ds_ctx *c = g->c;
	const dupscan_scan *s = c->s;
	uint64_t key = g->bh[i].key;
	bool all_full;
	size_t from_cache_n = take_members(g, i, k, &all_full);
	bool proofs = by_proofs(g, k, from_cache_n);
	struct bucket b = { s, g->m, k, g->size, key, g->h, DS_BLOCK, g->blocks, g->blen, NULL, NULL, NULL, NULL };
	if (g->mixed && from_cache_n == 0) {
		/* all read this run, their states in sh */
		b.h = g->sh;
		b.blocks = NULL;
	}
	if (swept_bucket(g, k)) {
		b.full = g->full;
		b.same = g->same;
		b.err = g->serr;
	}
	if (proofs) {
		b = (struct bucket){ s, g->m, k, g->size, key, NULL, 0, NULL, 0, NULL, NULL, NULL, g->kn };
	} else if (from_cache_n == k) {
		/* known full hashes spare every read but the byte comparison;
		 * without them (files that differed after their first block
		 * last time), the bucket is read whole, hashing from byte 0 */
		b = (struct bucket){ s, g->m, k, g->size, key, NULL, 0, NULL, 0, all_full ? g->full : NULL, NULL, NULL,
				     NULL };
		if (!all_full && !(b.h = ds_hashes_new(k)))
			return -ENOMEM;
	}
	size_t first = c->res->nins;
	int rc = match_bucket(c, &b);
	if (from_cache_n == k && !proofs)
		ds_hashes_free(b.h);
	/* trust: what a later run would read again is hashed whole now */
	if (rc == 0 && g->finish && !proofs) {
		for (size_t x = 0; x < k; x++)
			g->known_full[x] = g->hv[g->bh[i + x].pos].has_full;
		rc = finish_hashes(c, g->m, k, g->known_full, g->size, key, first);
	}
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
	free(g->known_full);
	free(g->stidx);
	ds_hashes_free(g->sh);
	free(g->serr);
	free(g->same);
	free(g->full);
	free(g->m);
	free(g->bh);
	free(g->got);
	free(g->hv);
	ds_hashes_free(g->h);
	ds_big_free(g->blocks, g->keep ? g->n * g->blen : 0);
}

/* One size group (records idx[0..n), all of one size): gather the heads (the
 * first-block hash of every file, read or from the cache), then settle each
 * run of equal ones as a bucket. Effects go to c->res; c->res->rc tells how
 * it ended. The pool calls it (ds_group_fn). */
static void match_group(struct ds_ctx *c, const uint32_t *idx, size_t n)
{
	uint64_t size = ds_rec(c->s, idx[0])->size;
	c->res->files += n;
	int rc = ds_result_stage(c, DUPSCAN_STAGE_EARLY, idx, n);
	if (rc == 0 && size == 0) {
		/* zero-length files (with -z) are all equal without a read */
		uint64_t empty = ds_hash_oneshot("", 0);
		for (size_t x = 0; x < n && rc == 0; x++)
			rc = ds_result_insert(c, idx[x], idx[0], empty, empty);
	} else if (rc == 0) {
		struct group g = { .c = c, .idx = idx, .n = n, .size = size,
				   .blen = size < DS_BLOCK ? (size_t)size : DS_BLOCK };
		g.hv = malloc(n * sizeof(*g.hv));
		g.got = calloc(n, sizeof(*g.got));
		g.bh = malloc(n * sizeof(*g.bh));
		rc = g.hv && g.got && g.bh ? 0 : -ENOMEM;
		if (rc == 0)
			rc = gather_heads(&g);
		if (rc == 0)
			rc = sort_heads(&g);
		if (rc == 0)
			rc = settle_buckets(&g);
		group_free(&g);
	}
	if (rc)
		c->res->rc = rc;
}

/* The devices of the files that will be read decide how to read them. */
static int choose_io(dupscan_scan *s, const uint32_t *order, const uint32_t *groups, size_t ngroups)
{
	uint64_t *devs = NULL;
	size_t ndevs = 0, cap = 0;
	for (size_t g = 0; g < ngroups; g++) {
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++) {
			uint64_t dev = ds_rec(s, order[p])->dev;
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
		}
	}
	ds_choose_io(s, devs, ndevs);
	free(devs);
	return 0;
}

/* Where each group lies on the disk: its first file in the order read. */
static uint64_t *disk_keys(const struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups)
{
	uint64_t *key = malloc((ngroups ? ngroups : 1) * sizeof(*key));
	for (size_t g = 0; key && g < ngroups; g++) {
		key[g] = UINT64_MAX;
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++)
			key[g] = fp->rank[p] < key[g] ? fp->rank[p] : key[g];
	}
	return key;
}

/* Read ahead the first blocks of the groups the cache does not settle. */
static int first_pass(dupscan_scan *s, const uint32_t *order, size_t n, const uint32_t *groups, size_t ngroups)
{
	uint32_t *left = malloc(2 * ngroups * sizeof(*left));
	if (!left)
		return -ENOMEM;
	size_t nleft = 0;
	for (size_t g = 0; g < ngroups; g++) {
		/* groups the cache settles need no pass: with trust, every group it
		 * holds, whole or in part (only their other files are read) */
		const uint32_t *idx = order + groups[2 * g];
		if (ds_rec(s, idx[0])->size == 0 ||
		    (s->cache_trust ? ds_cache_any(s, idx, groups[2 * g + 1])
				    : ds_cache_covers(s, idx, groups[2 * g + 1]) && settled_by_cache(s, idx, groups[2 * g + 1])))
			continue;
		left[2 * nleft] = groups[2 * g];
		left[2 * nleft + 1] = groups[2 * g + 1];
		nleft++;
	}
	/* the rest of each bucket in disk order too (not for -Q, -T) */
	bool sweep = !s->quick && !s->partial_only;
	int rc = ds_first_pass_run(s, order, n, left, nleft, sweep ? s->sweep_budget : 0);
	if (rc == 0 && sweep)
		rc = ds_sweep_run(s, left, nleft, s->sweep_budget);
	free(left);
	return rc;
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
		rc = ds_cache_join(s, order, s->nrecs);
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
	/* candidates are in record order: ties keep it, as a stable sort would */
	rc = sort_by(s, order, nc, group_key);
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
		rc = choose_io(s, order, groups, ngroups);
	/* a spinning disk: first blocks in disk order, then one stream */
	if (rc == 0 && s->io_mode == DUPSCAN_IO_HDD && ngroups > 0)
		rc = first_pass(s, order, nc, groups, ngroups);
	/* one stream: groups in the order their files lie on the disk */
	uint64_t *key = NULL;
	if (rc == 0 && s->first_pass && !(key = disk_keys(s->first_pass, groups, ngroups)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = ds_run_groups(s, match_group, order, groups, ngroups, total,
				   s->io_mode == DUPSCAN_IO_HDD ? 1 : s->threads, key);
	free(key);
	ds_sweep_free(s->sweep);
	s->sweep = NULL;
	ds_first_pass_free(s->first_pass);
	s->first_pass = NULL;
out:
	free(groups);
	free(order);
	return rc;
}
