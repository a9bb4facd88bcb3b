/* SPDX-License-Identifier: MIT */
/* sweepbuckets.c: the buckets a sweep takes, from what the first pass read:
 * files of one size alike in their first block and head (and, for large
 * files, their last block), two to DS_SWEEP_MEMBERS of them; larger runs are
 * told apart in rounds first. Each of these reads goes every disk at once,
 * in each disk's order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "sweep.h"
#include "read/read.h"

/* Position p's last block hashed (tail), or 0 when it was not read (a
 * twin's is the file's whose bytes it holds). */
static uint64_t tail_of(const struct sweep_run *rn, uint32_t p)
{
	if (rn->tail && ds_fp_twin(rn->fp, p))
		p = rn->fp->twin[p];
	return rn->tail ? rn->tail[p] : 0;
}

/* By first block, then head, then last block. */
static int cmp_partial(void *ctx, const void *pa, const void *pb)
{
	const struct sweep_run *rn = ctx;
	const struct ds_first_pass *fp = rn->fp;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint64_t ka = ds_fp_partial(fp, a), kb = ds_fp_partial(fp, b); /* each through its rank */
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (fp->head[a] != fp->head[b])
		return fp->head[a] < fp->head[b] ? -1 : 1;
	if (tail_of(rn, a) != tail_of(rn, b))
		return tail_of(rn, a) < tail_of(rn, b) ? -1 : 1;
	return a < b ? -1 : a > b;
}

static bool same_start(const struct sweep_run *rn, uint32_t a, uint32_t b)
{
	const struct ds_first_pass *fp = rn->fp;
	return ds_fp_partial(fp, a) == ds_fp_partial(fp, b) && fp->head[a] == fp->head[b] && tail_of(rn, a) == tail_of(rn, b);
}


/* Add a bucket of the k files at positions mem[] (direct: a group the
 * first pass left unread). @return 0 or -ENOMEM. */
static int add_bucket(struct sweep_run *rn, const uint32_t *mem, size_t k, uint64_t size, bool direct)
{
	size_t npos = rn->nb ? rn->b[rn->nb - 1].first + rn->b[rn->nb - 1].n : 0;
	if (DS_GROW(rn->b, rn->capb, rn->nb + 1) || DS_GROW(rn->pos, rn->cappos, npos + k))
		return -ENOMEM;
	rn->b[rn->nb++] = (struct sbucket){ .first = (uint32_t)npos, .n = (uint32_t)k, .phase = B_WAIT,
					    .size = size, .direct = direct };
	for (size_t x = 0; x < k; x++) {
		rn->pos[npos++] = mem[x];
		rn->mstate[mem[x]] = M_PENDING;
	}
	return 0;
}

/* A position settled before any sweep: unique, or failed. */
static void settle_alone(struct sweep_run *rn, uint32_t p, int err)
{
	rn->sw->err[p] = err;
	rn->sw->rep[p] = DS_NONE;
	rn->mstate[p] = M_DONE;
}

struct by_state {
	uint64_t key;  /* hash so far, or rank */
	uint32_t x;    /* index in the bucket */
};

static int cmp_by_state(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct by_state *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->x < b->x ? -1 : a->x > b->x;
}


/* One round of a split: bytes off..end of the files still alike. */
struct round {
	struct sweep_run *rn;
	const uint32_t *mem;
	const struct by_state *alive; /* sorted by lane, then disk order */
	struct ds_hashes *h;
	int *err;                    /* by place in alive: why the file failed, or 0 */
	uint64_t off, end;
};

static uint32_t round_lane(const void *arg, size_t i)
{
	const struct round *rd = arg;
	return (uint32_t)(rd->alive[i].key >> 32);
}

static void round_read(struct reader *rdr, size_t i, void *arg)
{
	const struct round *rd = arg;
	struct sweep_run *rn = rd->rn;
	uint32_t x = rd->alive[i].x;
	unsigned char *chunk = ds_lane_chunk(rdr);
	uint32_t ri = rn->fp->order[rd->mem[x]];
	int fd = chunk ? ds_open_scanned(rn->s, ri) : -ENOMEM;
	int err = fd < 0 ? fd : 0;
	for (uint64_t o = rd->off; err == 0 && o < rd->end;) {
		size_t n = rd->end - o < rn->step ? (size_t)(rd->end - o) : rn->step;
		err = ds_read_rec(rn->s, ri, fd, chunk, n, o);
		if (err == 0)
			ds_hash_update(rd->h, x, chunk, n);
		o += n;
	}
	if (fd >= 0)
		close(fd);
	if (err == -ENOMEM)
		atomic_store(&rn->rc, -ENOMEM);
	rd->err[i] = err;
}

/* A bucket of more files than a sweep takes (mem[0..k), positions): hashed
 * in rounds of growing length, each round in disk order (every disk at once), each file only until
 * its bytes so far are like no other's, until the files still alike make runs
 * a sweep takes, or are read to their end; each run is a bucket then (whose
 * sweep, reading its files whole, hashes them again: states kept from here
 * to the sweep would cost 88 bytes a file). */
static int split_bucket(struct sweep_run *rn, uint32_t *mem, size_t k, uint64_t size)
{
	const struct ds_first_pass *fp = rn->fp;
	struct ds_hashes *h = ds_hashes_new(k);
	struct by_state *alive = malloc(k * sizeof(*alive));
	uint32_t *run = malloc(k * sizeof(*run));
	int *err = malloc(k * sizeof(*err));
	int rc = h && alive && run && err ? 0 : -ENOMEM;
	size_t na = k;
	for (size_t x = 0; rc == 0 && x < k; x++) {
		ds_hash_seed(h, x, ds_fp_partial(fp, mem[x]));
		alive[x] = (struct by_state){ 0, (uint32_t)x };
	}
	uint64_t off = DS_BLOCK, len = DS_FIRST_ROUND;
	for (bool small = false; rc == 0 && !small && off < size;) {
		uint64_t end = size - off <= len ? size : off + len;
		struct round rd = { rn, mem, alive, h, err, off, end };
		for (size_t i = 0; i < na; i++)
			alive[i].key = (uint64_t)rn->lane[mem[alive[i].x]] << 32 | fp->rank[mem[alive[i].x]];
		rc = ds_sort(alive, na, sizeof(*alive), cmp_by_state, NULL);
		if (rc == 0)
			rc = ds_lanes_run(rn, na, round_lane, round_read, &rd);
		size_t nr = 0;
		for (size_t i = 0; rc == 0 && i < na; i++) {
			if (err[i])
				settle_alone(rn, mem[alive[i].x], err[i]);
			else
				alive[nr++] = (struct by_state){ ds_hash_digest(h, alive[i].x), alive[i].x };
		}
		if (rc == 0)
			rc = ds_sort(alive, nr, sizeof(*alive), cmp_by_state, NULL);
		/* those like no other so far are unique; the rest go on */
		na = 0;
		small = true;
		for (size_t i = 0; rc == 0 && i < nr;) {
			size_t j = i + 1;
			while (j < nr && alive[j].key == alive[i].key)
				j++;
			if (j - i == 1)
				settle_alone(rn, mem[alive[i].x], 0);
			for (size_t q = i; j - i >= 2 && q < j; q++)
				alive[na++] = alive[q];
			small = small && j - i <= SWEEP_MEMBERS;
			i = j;
		}
		off = end;
		len = len < DS_LAST_ROUND / 4 ? len * 4 : DS_LAST_ROUND;
	}
	/* runs of equal hashes so far (alive is sorted by them) */
	for (size_t i = 0; rc == 0 && i < na;) {
		size_t j = i, nrun = 0;
		for (; j < na && alive[j].key == alive[i].key; j++)
			run[nrun++] = mem[alive[j].x];
		rc = add_bucket(rn, run, nrun, size, false);
		i = j;
	}
	ds_hashes_free(h);
	free(err);
	free(run);
	free(alive);
	return rc;
}

/* The twins among mem[0..n) (never read: matching joins them to the file
 * whose bytes they hold) settled and moved to the end, the others kept in
 * their order (a swap each: the twins' own order does not matter). @return
 * how many twins. */
static size_t leave_twins(struct sweep_run *rn, uint32_t *mem, size_t n)
{
	size_t kept = 0;
	for (size_t x = 0; x < n; x++) {
		uint32_t p = mem[x];
		if (ds_fp_twin(rn->fp, p)) {
			rn->sw->swept[p] = true;
			settle_alone(rn, p, 0);
			continue;
		}
		mem[x] = mem[kept];
		mem[kept++] = p;
	}
	return n - kept;
}

/* The buckets of one group: its read files by first-block hash, runs of two
 * or more, which are its buckets as matching will take them; within them,
 * runs of equal heads; a file alone with its head is unique, runs too large
 * for a sweep are split first. */
int ds_sweep_group(struct sweep_run *rn, uint32_t first, uint32_t n, uint32_t *scratch)
{
	const struct ds_first_pass *fp = rn->fp;
	uint64_t size = ds_rec_msize(rn->s->tree, fp->order[first]);
	if (ds_fp_direct(fp, first)) {
		/* left unread by the first pass: one bucket, hashed from byte 0 */
		for (uint32_t x = 0; x < n; x++) {
			scratch[x] = first + x;
			rn->sw->swept[first + x] = true;
		}
		return add_bucket(rn, scratch, n, size, true);
	}
	size_t nr = 0;
	for (uint32_t p = first; p < first + n; p++)
		if (ds_fp_got(fp, p) && !rn->sw->err[p])
			scratch[nr++] = p;
	int rc = ds_sort(scratch, nr, sizeof(*scratch), cmp_partial, rn);
	for (size_t i = 0; rc == 0 && i < nr;) {
		size_t j = i + 1;
		while (j < nr && same_start(rn, scratch[j], scratch[i]))
			j++;
		uint64_t key = ds_fp_partial(fp, scratch[i]);
		size_t k = j - i - leave_twins(rn, scratch + i, j - i);
		if (k == 1 && (j - i > 1 || (i > 0 && ds_fp_partial(fp, scratch[i - 1]) == key) ||
			       (j < nr && ds_fp_partial(fp, scratch[j]) == key))) {
			rn->sw->swept[scratch[i]] = true; /* in a bucket, alone with its head (and twins) */
			settle_alone(rn, scratch[i], 0);
		}
		for (size_t x = i; k >= 2 && x < i + k; x++)
			rn->sw->swept[scratch[x]] = true;
		if (k >= 2 && k <= SWEEP_MEMBERS)
			rc = add_bucket(rn, scratch + i, k, size, false);
		else if (k > SWEEP_MEMBERS)
			rc = split_bucket(rn, scratch + i, k, size);
		i = j;
	}
	return rc;
}

/* Files of at least this size whose heads are alike are first compared on
 * their last block, all of them in one pass in disk order: a copy cut short
 * or a log that grew costs one visit of a block instead of a read to its
 * end. For a true copy the visit is lost: at this size it costs about a
 * tenth of reading the file (a seek of 12.6 ms against 105 ms at 160 MB/s),
 * as side by side comparing does in turns of DS_HDD_TURN. Groups the first
 * pass left to the sweep (two to four files, most likely copies) are not
 * visited. */
#define TAIL_MIN (2u * DS_HDD_TURN)

/* Positions by lane, then place in the disk order. */
static int cmp_lane_rank(void *ctx, const void *pa, const void *pb)
{
	const struct sweep_run *rn = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (rn->lane[a] != rn->lane[b])
		return rn->lane[a] < rn->lane[b] ? -1 : 1;
	return rn->fp->rank[a] < rn->fp->rank[b] ? -1 : rn->fp->rank[a] > rn->fp->rank[b];
}

struct tails {
	struct sweep_run *rn;
	const uint32_t *want; /* positions, by lane and disk order */
};

static uint32_t tail_lane(const void *arg, size_t i)
{
	const struct tails *t = arg;
	return t->rn->lane[t->want[i]];
}

static void tail_read(struct reader *rd, size_t i, void *arg)
{
	const struct tails *t = arg;
	struct sweep_run *rn = rd->rn;
	uint32_t p = t->want[i];
	uint32_t ri = rn->fp->order[p];
	unsigned char *chunk = ds_lane_chunk(rd);
	int fd = chunk ? ds_open_scanned(rn->s, ri) : -ENOMEM;
	if (fd == -ENOMEM) {
		atomic_store(&rn->rc, -ENOMEM);
		return;
	}
	/* one block: readahead would read past the end or a seek back */
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	int err = fd < 0 ? fd : ds_read_rec(rn->s, ri, fd, chunk, DS_BLOCK, ds_rec_msize(rn->s->tree, ri) - DS_BLOCK);
	if (fd >= 0)
		close(fd);
	if (err) {
		rn->sw->swept[p] = true;
		settle_alone(rn, p, err); /* reported at its group's turn */
	} else {
		rn->tail[p] = ds_hash_oneshot(chunk, DS_BLOCK);
	}
}

/* The last blocks of the files of groups that TAIL_MIN asks for, into
 * rn->tail; a file that cannot be read is settled with its error. scratch:
 * n entries. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
int ds_sweep_tails(struct sweep_run *rn, const uint32_t *groups, size_t ngroups, size_t budget, uint32_t *scratch)
{
	const struct ds_first_pass *fp = rn->fp;
	uint32_t *want = NULL;
	size_t nw = 0, cap = 0;
	int rc = 0;
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec_msize(rn->s->tree, fp->order[first]);
		if (size < TAIL_MIN || size > budget / 2 || ds_fp_direct(fp, first))
			continue;
		size_t nr = 0;
		for (uint32_t p = first; p < first + cnt; p++)
			if (ds_fp_got(fp, p) && !ds_fp_twin(fp, p))
				scratch[nr++] = p;
		rc = ds_sort(scratch, nr, sizeof(*scratch), cmp_partial, rn);
		/* only files whose head has a twin */
		for (size_t i = 0; rc == 0 && i < nr;) {
			size_t j = i + 1;
			while (j < nr && same_start(rn, scratch[j], scratch[i]))
				j++;
			if (j - i >= 2 && DS_GROW(want, cap, nw + (j - i)))
				rc = -ENOMEM;
			for (size_t x = i; rc == 0 && j - i >= 2 && x < j; x++)
				want[nw++] = scratch[x];
			i = j;
		}
	}
	if (rc == 0 && nw > 0 && !(rn->tail = calloc(fp->n, sizeof(*rn->tail))))
		rc = -ENOMEM;
	struct tails t = { rn, want };
	if (rc == 0)
		rc = ds_sort(want, nw, sizeof(*want), cmp_lane_rank, rn);
	if (rc == 0)
		rc = ds_lanes_run(rn, nw, tail_lane, tail_read, &t);
	free(want);
	return rc;
}

