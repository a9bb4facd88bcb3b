/* SPDX-License-Identifier: MIT */
/* sweep.c: on a spinning disk, comparing two copies side by side costs a seek
 * at every turn, and copies lie far apart (an archive and its backup, a
 * photo and its import). So after the first pass, the buckets it leaves (files
 * of one size whose first blocks hash alike) are settled by sweeps over the
 * disk instead: their files are read whole in disk order; the first file of a
 * bucket is kept in memory, and each later one is compared with what its
 * bucket keeps as it is read, byte by byte, its full hash taken on the way.
 * A bucket is freed when its last file has been read. When the memory budget
 * is spent, a bucket whose first file comes later waits for the next sweep;
 * a file unlike everything its bucket keeps, with no room to be kept itself,
 * waits with the others like it. Each sweep settles at least the bucket it
 * starts with, so the sweeps end; each file is read once in most trees.
 * Buckets the sweep does not take (more than SWEEP_MEMBERS files, files
 * larger than half the budget) are matched as on any storage. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* A bucket of more than DS_SWEEP_MEMBERS files is split in rounds first,
 * which reads files that differ early only as far as they agree: many files
 * of one size and one first block (a camera's RAW files) are seldom copies
 * of each other, and the sweep would keep each of them whole. */
#define SWEEP_MEMBERS DS_SWEEP_MEMBERS

enum { M_PENDING, M_WAITING, M_DONE };                 /* a file in this sweep */
enum { B_WAIT, B_OPEN, B_LATER, B_DONE };              /* a bucket in this sweep */

struct kept {
	unsigned char *buf;  /* the whole file */
	uint32_t pos;        /* its position in order */
	bool joined;         /* another file proved equal to it */
};

struct sbucket {
	uint32_t first, n;   /* its members: positions pos[first..first+n) */
	uint32_t left;       /* members still to read in this sweep */
	uint8_t phase;
	uint8_t nkept;
	bool waits;          /* a member waits for the next sweep */
	uint64_t size;
	struct ds_hashes *h; /* members' XXH64 states by their hidx, or NULL: the first pass's by position */
	uint64_t from;       /* where those states stand */
	bool direct;         /* a group the first pass left unread (fp->direct) */
	struct kept kept[SWEEP_MEMBERS];
};

struct item {
	uint32_t rank, slot, bucket; /* slot: in run.pos */
};

struct run {
	dupscan_scan *s;
	struct ds_first_pass *fp; /* a direct group's partial hashes go there */
	struct ds_sweep *sw;
	struct sbucket *b;
	size_t nb;
	uint32_t *pos;       /* members of each bucket (positions in order), by bucket */
	uint32_t *hidx;      /* beside pos: each member's state in its bucket's h */
	struct ds_hashes **owned; /* states of split buckets, freed at the end */
	size_t nowned, capowned;
	uint8_t *mstate;     /* by position in order */
	struct ds_hashes *h; /* one state: the file being read */
	unsigned char *chunk;
	size_t step;         /* bytes a read */
	size_t used;         /* bytes kept */
	uint64_t *tail;      /* by position: XXH64 of the last block, where read (see read_tails), or NULL */
};

static int cmp_item(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct item *a = pa, *b = pb;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Position p's last block hashed (tail), or 0 when it was not read. */
static uint64_t tail_of(const struct run *rn, uint32_t p)
{
	return rn->tail ? rn->tail[p] : 0;
}

/* By first block, then head, then last block. */
static int cmp_partial(void *ctx, const void *pa, const void *pb)
{
	const struct run *rn = ctx;
	const struct ds_first_pass *fp = rn->fp;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (fp->partial[a] != fp->partial[b])
		return fp->partial[a] < fp->partial[b] ? -1 : 1;
	if (fp->head[a] != fp->head[b])
		return fp->head[a] < fp->head[b] ? -1 : 1;
	if (tail_of(rn, a) != tail_of(rn, b))
		return tail_of(rn, a) < tail_of(rn, b) ? -1 : 1;
	return a < b ? -1 : a > b;
}

static bool same_start(const struct run *rn, uint32_t a, uint32_t b)
{
	const struct ds_first_pass *fp = rn->fp;
	return fp->partial[a] == fp->partial[b] && fp->head[a] == fp->head[b] && tail_of(rn, a) == tail_of(rn, b);
}

/* Read position p whole. Into keep (size bytes) when given, else chunk by
 * chunk compared with what bucket b keeps, stopping once it is like none of
 * them. The bytes past the first block go into the XXH64 state the first pass
 * left. @return 0 (*like: the kept content it equals, or -1), a negative
 * read error (the file fails), or 1 when it was left unread to its end. */
static int read_member(struct run *rn, struct sbucket *b, uint32_t slot, unsigned char *keep, int *like)
{
	uint32_t p = rn->pos[slot];
	struct ds_rec *r = ds_rec(rn->s, rn->fp->order[p]);
	*like = -1;
	int fd = ds_open_scanned(rn->s, r);
	if (fd < 0)
		return fd;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (b->h)
		ds_hash_copy(rn->h, 0, b->h, rn->hidx[slot]);
	else
		ds_hash_copy(rn->h, 0, rn->fp->h, p);
	bool alike[SWEEP_MEMBERS];
	size_t nalike = b->nkept;
	for (size_t k = 0; k < b->nkept; k++)
		alike[k] = true;
	int err = 0;
	for (uint64_t off = 0; off < b->size && err == 0;) {
		size_t len = b->size - off < rn->step ? (size_t)(b->size - off) : rn->step;
		unsigned char *buf = keep ? keep + off : rn->chunk;
		err = ds_pread_full(fd, buf, len, off);
		if (err)
			break;
		/* the first pass (and a split) hashed what lies before b->from */
		if (off + len > b->from) {
			size_t skip = off < b->from ? (size_t)(b->from - off) : 0;
			if (b->direct && off == 0) {
				/* the first block's hash, as the first pass takes it */
				size_t blen = len < DS_BLOCK ? len : DS_BLOCK;
				ds_hash_update(rn->h, 0, buf, blen);
				rn->fp->partial[p] = ds_hash_digest(rn->h, 0);
				rn->fp->got[p] = true;
				skip = blen;
			}
			ds_hash_update(rn->h, 0, buf + skip, len - skip);
		}
		for (size_t k = 0; !keep && k < b->nkept; k++) {
			if (alike[k] && memcmp(buf, b->kept[k].buf + off, len) != 0) {
				alike[k] = false;
				nalike--;
			}
		}
		off += len;
		if (!keep && nalike == 0) {
			close(fd);
			return 1;
		}
	}
	if (err == 0)
		err = ds_check_unchanged(fd, r);
	close(fd);
	if (err)
		return err;
	for (size_t k = 0; k < b->nkept && *like < 0; k++)
		if (keep ? memcmp(keep, b->kept[k].buf, b->size) == 0 : alike[k])
			*like = (int)k;
	rn->sw->full[p] = ds_hash_digest(rn->h, 0);
	return 0;
}

/* Read member p of bucket b: it joins a kept content, is kept itself, waits
 * for the next sweep, or fails. @return 0 or -ENOMEM. */
static int visit(struct run *rn, struct sbucket *b, uint32_t slot)
{
	struct ds_sweep *sw = rn->sw;
	uint32_t p = rn->pos[slot];
	/* once a file waits, nothing more is kept: a later file kept could be
	 * the twin of one that waits, and neither would be told */
	bool room = !b->waits && b->nkept < SWEEP_MEMBERS && rn->used + b->size <= sw->budget;
	if (!room && b->nkept == 0) {
		b->left--;
		b->waits = true;
		rn->mstate[p] = M_WAITING; /* nothing to compare it with */
		return 0;
	}
	unsigned char *keep = room ? ds_big_alloc(b->size) : NULL;
	if (room && !keep)
		return -ENOMEM;
	int like;
	int rc = read_member(rn, b, slot, keep, &like);
	b->left--;
	if (rc < 0) {
		if (rc == -ENOMEM) {
			ds_big_free(keep, b->size);
			return rc;
		}
		/* reported at its group's turn: with the first pass's own
		 * errors when the first pass left it unread */
		if (b->direct) {
			rn->fp->err[p] = rc;
			rn->fp->got[p] = false;
		} else {
			sw->err[p] = rc;
		}
		rn->mstate[p] = M_DONE;
	} else if (rc == 0 && like >= 0) {
		sw->rep[p] = b->kept[like].pos;
		b->kept[like].joined = true;
		rn->mstate[p] = M_DONE;
	} else if (keep) {
		b->kept[b->nkept++] = (struct kept){ keep, p, false };
		rn->used += b->size;
		if (rn->used > rn->s->reading.sweep_peak)
			rn->s->reading.sweep_peak = rn->used;
		rn->mstate[p] = M_DONE;
		return 0;
	} else {
		rn->mstate[p] = M_WAITING; /* unlike all kept, no room for it */
		b->waits = true;
	}
	ds_big_free(keep, room ? b->size : 0);
	return 0;
}

/* Every member of b was read in this sweep: what it kept is settled, and
 * those that waited (unlike all of it) make the bucket of the next sweep. */
static void close_bucket(struct run *rn, struct sbucket *b)
{
	struct ds_sweep *sw = rn->sw;
	for (size_t k = 0; k < b->nkept; k++) {
		sw->rep[b->kept[k].pos] = b->kept[k].joined ? b->kept[k].pos : DS_NONE;
		ds_big_free(b->kept[k].buf, b->size);
		rn->used -= b->size;
	}
	b->nkept = 0;
	b->waits = false;
	uint32_t waiting = 0, last = DS_NONE;
	for (uint32_t i = b->first; i < b->first + b->n; i++) {
		uint32_t p = rn->pos[i];
		if (rn->mstate[p] == M_WAITING) {
			rn->mstate[p] = M_PENDING;
			waiting++;
			last = p;
		}
	}
	if (waiting == 1) {
		/* unlike everything else of the bucket: unique */
		rn->mstate[last] = M_DONE;
		sw->rep[last] = DS_NONE;
	}
	b->phase = waiting >= 2 ? B_WAIT : B_DONE;
}

/* One sweep over the items in disk order. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
static int sweep_once(struct run *rn, const struct item *it, size_t nit, bool *more)
{
	*more = false;
	for (size_t i = 0; i < rn->nb; i++) {
		struct sbucket *b = &rn->b[i];
		if (b->phase == B_DONE)
			continue;
		b->phase = B_WAIT;
		b->left = 0;
		for (uint32_t x = b->first; x < b->first + b->n; x++)
			b->left += rn->mstate[rn->pos[x]] == M_PENDING;
	}
	for (size_t i = 0; i < nit; i++) {
		if (atomic_load_explicit(&rn->s->canceled, memory_order_relaxed))
			return DUPSCAN_E_CANCELED;
		uint32_t p = rn->pos[it[i].slot];
		struct sbucket *b = &rn->b[it[i].bucket];
		if (rn->mstate[p] != M_PENDING || b->phase == B_LATER || b->phase == B_DONE)
			continue;
		if (b->phase == B_WAIT) {
			/* a bucket opens at its first file, if that file fits (the first
			 * bucket of a sweep always does: each sweep settles one at least) */
			if (rn->used > 0 && rn->used + b->size > rn->sw->budget) {
				b->phase = B_LATER;
				*more = true;
				continue;
			}
			b->phase = B_OPEN;
		}
		int rc = visit(rn, b, it[i].slot);
		if (rc)
			return rc;
		if (b->left == 0) {
			close_bucket(rn, b);
			*more = *more || b->phase == B_WAIT;
		}
	}
	return 0;
}

/* Add a bucket of the k files at positions mem[], their states in h by
 * hidx[] (h NULL: the first pass's, standing after the first block). */
static void add_bucket(struct run *rn, const uint32_t *mem, const uint32_t *hidx, size_t k, uint64_t size,
		       struct ds_hashes *h, uint64_t from)
{
	size_t npos = rn->nb ? rn->b[rn->nb - 1].first + rn->b[rn->nb - 1].n : 0;
	rn->b[rn->nb++] = (struct sbucket){ (uint32_t)npos, (uint32_t)k, 0, B_WAIT, 0, false, size, h, from, false,
					    { { 0 } } };
	for (size_t x = 0; x < k; x++) {
		rn->pos[npos] = mem[x];
		rn->hidx[npos++] = hidx ? hidx[x] : 0;
		rn->mstate[mem[x]] = M_PENDING;
	}
}

/* A position settled before any sweep: unique, or failed. */
static void settle_alone(struct run *rn, uint32_t p, int err)
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


/* A bucket of more files than a sweep takes (mem[0..k), positions): hashed
 * in rounds of growing length, each round in disk order, each file only until
 * its bytes so far are like no other's, until the files still alike make runs
 * a sweep takes, or are read to their end; each run is a bucket then. */
static int split_bucket(struct run *rn, uint32_t *mem, size_t k, uint64_t size)
{
	const struct ds_first_pass *fp = rn->fp;
	struct ds_hashes *h = ds_hashes_new(k);
	struct by_state *alive = malloc(k * sizeof(*alive));
	uint32_t *run = malloc(k * sizeof(*run)), *ri = malloc(k * sizeof(*ri));
	int rc = h && alive && run && ri && DS_GROW(rn->owned, rn->capowned, rn->nowned + 1) == 0 ? 0 : -ENOMEM;
	if (rc) {
		ds_hashes_free(h);
		goto out;
	}
	rn->owned[rn->nowned++] = h;
	size_t na = k;
	for (size_t x = 0; x < k; x++) {
		ds_hash_copy(h, x, fp->h, mem[x]);
		alive[x] = (struct by_state){ 0, (uint32_t)x };
	}
	uint64_t off = DS_BLOCK, len = DS_FIRST_ROUND;
	for (bool small = false; rc == 0 && !small && off < size;) {
		uint64_t end = size - off <= len ? size : off + len;
		for (size_t i = 0; i < na; i++)
			alive[i].key = fp->rank[mem[alive[i].x]];
		rc = ds_sort(alive, na, sizeof(*alive), cmp_by_state, NULL);
		size_t nr = 0;
		for (size_t i = 0; rc == 0 && i < na; i++) {
			if (atomic_load_explicit(&rn->s->canceled, memory_order_relaxed)) {
				rc = DUPSCAN_E_CANCELED;
				break;
			}
			uint32_t p = mem[alive[i].x];
			struct ds_rec *r = ds_rec(rn->s, fp->order[p]);
			int fd = ds_open_scanned(rn->s, r);
			int err = fd < 0 ? fd : 0;
			for (uint64_t o = off; err == 0 && o < end;) {
				size_t n = end - o < rn->step ? (size_t)(end - o) : rn->step;
				err = ds_pread_full(fd, rn->chunk, n, o);
				if (err == 0)
					ds_hash_update(h, alive[i].x, rn->chunk, n);
				o += n;
			}
			if (fd >= 0)
				close(fd);
			if (err == -ENOMEM) {
				rc = err;
				break;
			}
			if (err)
				settle_alone(rn, p, err);
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
		for (; j < na && alive[j].key == alive[i].key; j++) {
			run[nrun] = mem[alive[j].x];
			ri[nrun++] = alive[j].x;
		}
		add_bucket(rn, run, ri, nrun, size, h, off);
		i = j;
	}
out:
	free(ri);
	free(run);
	free(alive);
	return rc;
}

/* The buckets of one group: its read files by first-block hash, runs of two
 * or more, which are its buckets as matching will take them; within them,
 * runs of equal heads; a file alone with its head is unique, runs too large
 * for a sweep are split first. */
static int group_buckets(struct run *rn, uint32_t first, uint32_t n, uint32_t *scratch)
{
	const struct ds_first_pass *fp = rn->fp;
	uint64_t size = ds_rec(rn->s, fp->order[first])->size;
	if (fp->direct[first]) {
		/* left unread by the first pass: one bucket, hashed from byte 0 */
		struct ds_hashes *h = ds_hashes_new(n);
		if (!h || DS_GROW(rn->owned, rn->capowned, rn->nowned + 1)) {
			ds_hashes_free(h);
			return -ENOMEM;
		}
		rn->owned[rn->nowned++] = h;
		for (uint32_t x = 0; x < n; x++) {
			scratch[x] = first + x;
			scratch[n + x] = x;
			rn->sw->swept[first + x] = true;
		}
		add_bucket(rn, scratch, scratch + n, n, size, h, 0);
		rn->b[rn->nb - 1].direct = true;
		return 0;
	}
	size_t nr = 0;
	for (uint32_t p = first; p < first + n; p++)
		if (fp->got[p] && !fp->err[p] && !rn->sw->err[p])
			scratch[nr++] = p;
	int rc = ds_sort(scratch, nr, sizeof(*scratch), cmp_partial, rn);
	for (size_t i = 0; rc == 0 && i < nr;) {
		size_t j = i + 1;
		while (j < nr && same_start(rn, scratch[j], scratch[i]))
			j++;
		if (j - i == 1 && ((i > 0 && fp->partial[scratch[i - 1]] == fp->partial[scratch[i]]) ||
				   (j < nr && fp->partial[scratch[j]] == fp->partial[scratch[i]]))) {
			rn->sw->swept[scratch[i]] = true; /* in a bucket, alone with its head */
			settle_alone(rn, scratch[i], 0);
		}
		for (size_t x = i; j - i >= 2 && x < j; x++)
			rn->sw->swept[scratch[x]] = true;
		if (j - i >= 2 && j - i <= SWEEP_MEMBERS)
			add_bucket(rn, scratch + i, NULL, j - i, size, NULL, DS_BLOCK);
		else if (j - i > SWEEP_MEMBERS)
			rc = split_bucket(rn, scratch + i, j - i, size);
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

static int cmp_rank(void *ctx, const void *pa, const void *pb)
{
	const struct ds_first_pass *fp = ctx;
	uint32_t a = fp->rank[*(const uint32_t *)pa], b = fp->rank[*(const uint32_t *)pb];
	return a < b ? -1 : a > b;
}

/* The last blocks of the files of groups that TAIL_MIN asks for, into
 * rn->tail; a file that cannot be read is settled with its error. scratch:
 * n entries. @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
static int read_tails(struct run *rn, const uint32_t *groups, size_t ngroups, size_t budget, uint32_t *scratch)
{
	const struct ds_first_pass *fp = rn->fp;
	uint32_t *want = NULL;
	size_t nw = 0, cap = 0;
	int rc = 0;
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec(rn->s, fp->order[first])->size;
		if (size < TAIL_MIN || size > budget / 2 || fp->direct[first])
			continue;
		size_t nr = 0;
		for (uint32_t p = first; p < first + cnt; p++)
			if (fp->got[p] && !fp->err[p])
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
	if (rc == 0)
		rc = ds_sort(want, nw, sizeof(*want), cmp_rank, (void *)fp);
	for (size_t i = 0; rc == 0 && i < nw; i++) {
		if (atomic_load_explicit(&rn->s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		uint32_t p = want[i];
		const struct ds_rec *r = ds_rec(rn->s, fp->order[p]);
		int fd = ds_open_scanned(rn->s, r);
		if (fd == -ENOMEM) {
			rc = fd;
			break;
		}
		/* one block: readahead would read past the end or a seek back */
		if (fd >= 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		int err = fd < 0 ? fd : ds_pread_full(fd, rn->chunk, DS_BLOCK, r->size - DS_BLOCK);
		if (fd >= 0)
			close(fd);
		if (err) {
			rn->sw->swept[p] = true;
			settle_alone(rn, p, err); /* reported at its group's turn */
		} else {
			rn->tail[p] = ds_hash_oneshot(rn->chunk, DS_BLOCK);
		}
	}
	free(want);
	return rc;
}

void ds_sweep_free(struct ds_sweep *sw)
{
	if (!sw)
		return;
	free(sw->swept);
	free(sw->rep);
	free(sw->full);
	free(sw->err);
	free(sw);
}

int ds_sweep_run(dupscan_scan *s, const uint32_t *groups, size_t ngroups, size_t budget)
{
	struct ds_first_pass *fp = s->reading.first_pass;
	size_t n = fp->n ? fp->n : 1;
	struct ds_sweep *sw = calloc(1, sizeof(*sw));
	struct run rn = { 0 };
	rn.s = s;
	rn.fp = fp;
	rn.sw = sw;
	/* large reads: the file is read whole, and each read is a request the disk serves in one go */
	rn.step = s->opt.chunk_given ? s->opt.chunk : DS_HDD_TURN;
	struct item *it = NULL;
	uint32_t *scratch = NULL;
	int rc = -ENOMEM;
	if (!sw)
		return rc;
	sw->budget = budget;
	s->reading.sweeps = 0;
	s->reading.sweep_peak = 0;
	sw->swept = calloc(n, sizeof(*sw->swept));
	sw->rep = malloc(n * sizeof(*sw->rep));
	sw->full = calloc(n, sizeof(*sw->full));
	sw->err = calloc(n, sizeof(*sw->err));
	rn.b = malloc(n * sizeof(*rn.b));
	rn.pos = malloc(n * sizeof(*rn.pos));
	rn.hidx = malloc(n * sizeof(*rn.hidx));
	rn.mstate = calloc(n, sizeof(*rn.mstate));
	rn.h = ds_hashes_new(1);
	rn.chunk = ds_big_alloc(rn.step);
	it = malloc(n * sizeof(*it));
	scratch = malloc(2 * n * sizeof(*scratch)); /* a direct group takes two rows */
	if (!sw->swept || !sw->rep || !sw->full || !sw->err || !rn.b || !rn.pos || !rn.hidx || !rn.mstate || !rn.h ||
	    !rn.chunk || !it || !scratch)
		goto out;
	rc = 0;
	for (size_t i = 0; i < n; i++)
		sw->rep[i] = DS_NONE;
	if (fp->h)
		rc = read_tails(&rn, groups, ngroups, budget, scratch);
	/* (no states: no file larger than a block, nothing to sweep) */
	for (size_t g = 0; rc == 0 && fp->h && g < ngroups; g++) {
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec(s, fp->order[first])->size;
		/* within one block the first pass has read it all; a file larger
		 * than half the budget could not be kept beside another */
		if (size > DS_BLOCK && size <= budget / 2)
			rc = group_buckets(&rn, first, cnt, scratch);
	}
	size_t nit = 0;
	for (size_t i = 0; rc == 0 && i < rn.nb; i++)
		for (uint32_t x = rn.b[i].first; x < rn.b[i].first + rn.b[i].n; x++)
			it[nit++] = (struct item){ fp->rank[rn.pos[x]], x, (uint32_t)i };
	if (rc == 0)
		rc = ds_sort(it, nit, sizeof(*it), cmp_item, NULL);
	for (bool more = nit > 0; rc == 0 && more;) {
		rc = sweep_once(&rn, it, nit, &more);
		s->reading.sweeps++;
	}
out:
	for (size_t i = 0; i < rn.nb; i++)
		for (size_t k = 0; k < rn.b[i].nkept; k++)
			ds_big_free(rn.b[i].kept[k].buf, rn.b[i].size);
	free(scratch);
	free(it);
	ds_big_free(rn.chunk, rn.step);
	ds_hashes_free(rn.h);
	free(rn.mstate);
	free(rn.hidx);
	free(rn.pos);
	free(rn.b);
	for (size_t i = 0; i < rn.nowned; i++)
		ds_hashes_free(rn.owned[i]);
	free(rn.owned);
	free(rn.tail);
	if (rc) {
		ds_sweep_free(sw);
		return rc;
	}
	s->reading.sweep = sw;
	return 0;
}
