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
/* a kept content: being read, read (and unlike the others kept), found equal
 * to another kept content, or failed */
enum { K_FILLING, K_READY, K_ALIAS, K_FAILED };

/* Every disk is read at once, each by its own lane in its own order, so the
 * files of one bucket may be read at the same time on two disks. A bucket's
 * state is shared under the run's monitor; three rules keep a sweep exact:
 * a file compared without being kept compares with every content kept or
 * being kept when it starts (waiting for bytes still being read); no file is
 * kept while such a comparison runs or once a file of the bucket waits; and a
 * kept content, once read, is compared with every content read before it. So
 * a file that waits was compared with every content its bucket settles. */
struct kept {
	unsigned char *buf;  /* the whole file: bytes up to filled are read */
	uint64_t filled;
	uint32_t pos;        /* its position in order */
	uint8_t state;
	uint8_t alias;       /* K_ALIAS: the kept content (K_READY) it equals */
	uint8_t users;       /* comparisons that may read buf */
	bool joined;         /* another file proved equal to it */
	bool held;           /* its size counts in the run's used bytes */
};

struct sbucket {
	uint32_t first, n;   /* its members: positions pos[first..first+n) */
	uint32_t unvisited;  /* members still to visit in this sweep */
	uint32_t active;     /* members being read now */
	uint32_t streaming;  /* of those, compared without being kept */
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
	uint32_t lane, rank, slot, bucket; /* slot: in run.pos */
};

struct run;
/* One lane's reading: a disk's files in its order. */
struct reader {
	struct run *rn;
	struct ds_hashes *h; /* one state: the file being read */
	unsigned char *chunk; /* taken when the lane first reads a chunk */
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
	uint32_t *lane;      /* by position: its device's lane */
	struct reader *rd;   /* by lane */
	size_t nlanes;
	struct ds_monitor *mon; /* buckets, used, mstate and the sweep's results */
	size_t step;         /* bytes a read */
	size_t used;         /* bytes kept */
	bool more;           /* a bucket waits for another sweep */
	atomic_int rc;       /* -ENOMEM or DUPSCAN_E_CANCELED from any lane */
	uint64_t *tail;      /* by position: XXH64 of the last block, where read (see read_tails), or NULL */
};

/* By lane, then place in the disk order. */
static int cmp_item(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct item *a = pa, *b = pb;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* ---- lanes: one a device, all at once ---- */

/* A phase's work cut into lanes: items from[k] to from[k+1] are lane
 * lane[k]'s, each run by fn in order. */
struct lanes {
	struct run *rn;
	size_t n;
	const size_t *from;
	const uint32_t *lane;
	void (*fn)(struct reader *rd, size_t i, void *arg);
	void *arg;
};

static bool stopped(struct run *rn)
{
	if (atomic_load_explicit(&rn->s->canceled, memory_order_relaxed)) {
		int none = 0;
		atomic_compare_exchange_strong(&rn->rc, &none, DUPSCAN_E_CANCELED);
	}
	return atomic_load_explicit(&rn->rc, memory_order_relaxed) != 0;
}

static void run_lane(void *job, size_t k)
{
	const struct lanes *ln = job;
	struct reader *rd = &ln->rn->rd[ln->lane[k]];
	for (size_t i = ln->from[k]; i < ln->from[k + 1] && !stopped(ln->rn); i++)
		ln->fn(rd, i, ln->arg);
}

/* Run fn over items 0..n whose lanes lane_of(i) come in runs (items sorted
 * by lane first): each run on its own thread while threads last. */
static int in_lanes(struct run *rn, size_t n, uint32_t (*lane_of)(const void *arg, size_t i),
		    void (*fn)(struct reader *rd, size_t i, void *arg), void *arg)
{
	size_t *from = malloc((rn->nlanes + 1) * sizeof(*from));
	uint32_t *lane = malloc((rn->nlanes + 1) * sizeof(*lane));
	struct ds_pool *pool = ds_scan_pool(rn->s);
	if (!from || !lane || !pool) {
		free(from);
		free(lane);
		return -ENOMEM;
	}
	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t l = lane_of(arg, i);
		if (nl == 0 || lane[nl - 1] != l) {
			from[nl] = i;
			lane[nl++] = l;
		}
	}
	from[nl] = n;
	struct lanes ln = { rn, nl, from, lane, fn, arg };
	int threads = rn->s->opt.threads;
	ds_pool_phase(pool, NULL, NULL, 0, 0, threads < (int)nl ? threads - 1 : (int)nl - 1);
	ds_parallel_for(pool, nl, run_lane, &ln);
	ds_pool_end_phase(pool);
	free(lane);
	free(from);
	return atomic_load(&rn->rc);
}

/* The lane's read buffer, taken the first time it is needed. */
static unsigned char *chunk_of(struct reader *rd)
{
	if (!rd->chunk && !(rd->chunk = ds_big_alloc(rd->rn->step)))
		atomic_store(&rd->rn->rc, -ENOMEM);
	return rd->chunk;
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

/* ---- the sweep ---- */

/* Hash the bytes buf[0..len) at off of position p into the lane's state:
 * the first pass (and a split) hashed what lies before b->from. */
static void hash_read(struct reader *rd, struct sbucket *b, uint32_t p, const unsigned char *buf, uint64_t off,
		      size_t len)
{
	if (off + len <= b->from)
		return;
	size_t skip = off < b->from ? (size_t)(b->from - off) : 0;
	if (b->direct && off == 0) {
		/* the first block's hash, as the first pass takes it */
		size_t blen = len < DS_BLOCK ? len : DS_BLOCK;
		ds_hash_update(rd->h, 0, buf, blen);
		rd->rn->fp->partial[p] = ds_hash_digest(rd->h, 0);
		rd->rn->fp->got[p] = true;
		skip = blen;
	}
	ds_hash_update(rd->h, 0, buf + skip, len - skip);
}

/* Open the member in slot for a read from its start, its hash state ready. */
static int open_member(struct reader *rd, struct sbucket *b, uint32_t slot)
{
	struct run *rn = rd->rn;
	uint32_t p = rn->pos[slot];
	int fd = ds_open_scanned(rn->s, ds_rec(rn->s, rn->fp->order[p]));
	if (fd < 0)
		return fd;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (b->h)
		ds_hash_copy(rd->h, 0, b->h, rn->hidx[slot]);
	else
		ds_hash_copy(rd->h, 0, rn->fp->h, p);
	return fd;
}

/* Read the member in slot whole into kept content k (its buffer taken
 * here), telling those who compare with it how far it is read.
 * @return 0 or a negative code (the file fails). */
static int read_keep(struct reader *rd, struct sbucket *b, uint32_t slot, struct kept *k)
{
	struct run *rn = rd->rn;
	unsigned char *buf = ds_big_alloc(b->size);
	if (!buf)
		return -ENOMEM;
	ds_monitor_enter(rn->mon);
	k->buf = buf;
	ds_monitor_leave(rn->mon);
	int fd = open_member(rd, b, slot);
	int err = fd < 0 ? fd : 0;
	for (uint64_t off = 0; off < b->size && err == 0;) {
		size_t len = b->size - off < rn->step ? (size_t)(b->size - off) : rn->step;
		err = ds_pread_full(fd, buf + off, len, off);
		if (err)
			break;
		hash_read(rd, b, rn->pos[slot], buf + off, off, len);
		off += len;
		ds_monitor_enter(rn->mon);
		k->filled = off;
		ds_monitor_wake(rn->mon);
		ds_monitor_leave(rn->mon);
	}
	if (err == 0)
		err = ds_check_unchanged(fd, ds_rec(rn->s, rn->fp->order[rn->pos[slot]]));
	if (fd >= 0)
		close(fd);
	if (err == 0)
		rn->sw->full[rn->pos[slot]] = ds_hash_digest(rd->h, 0);
	return err;
}

/* A content equal to another kept one is given back once no comparison
 * reads it (monitor held). */
static void release_alias(struct run *rn, const struct sbucket *b, struct kept *k)
{
	if (k->state != K_ALIAS || k->users > 0 || !k->held)
		return;
	ds_big_free(k->buf, b->size);
	k->buf = NULL;
	k->held = false;
	rn->used -= b->size;
}

/* Kept content k, read: compared with every content kept and read before
 * it (those read meanwhile too), it becomes K_READY or K_ALIAS. */
static void settle_keep(struct run *rn, struct sbucket *b, struct kept *k)
{
	unsigned done = 0;
	int like = -1;
	ds_monitor_enter(rn->mon);
	for (;;) {
		unsigned todo = 0, nk = b->nkept;
		for (unsigned j = 0; j < nk; j++)
			if (b->kept[j].state == K_READY && !(done >> j & 1))
				todo |= 1u << j;
		if (todo == 0 || like >= 0)
			break;
		/* a content K_READY stays so, its buffer kept, until the bucket closes */
		ds_monitor_leave(rn->mon);
		for (unsigned j = 0; j < nk && like < 0; j++)
			if (todo >> j & 1 && memcmp(k->buf, b->kept[j].buf, b->size) == 0)
				like = (int)j;
		done |= todo;
		ds_monitor_enter(rn->mon);
	}
	if (like >= 0) {
		k->state = K_ALIAS;
		k->alias = (uint8_t)like;
		b->kept[like].joined = true;
		release_alias(rn, b, k);
	} else {
		k->state = K_READY;
	}
	ds_monitor_wake(rn->mon);
	ds_monitor_leave(rn->mon);
}

/* Read the member in slot compared, chunk by chunk, with the contents its
 * bucket keeps in the mask set (their users counted) (waiting for bytes still being read), stopping
 * once it is like none of them. @return 0 (*like: the kept content it equals),
 * a negative code (the file fails), or 1: unlike them all (maybe left unread
 * to its end). */
static int read_stream(struct reader *rd, struct sbucket *b, uint32_t slot, unsigned set, int *like)
{
	struct run *rn = rd->rn;
	unsigned char *chunk = chunk_of(rd);
	*like = -1;
	bool alike[SWEEP_MEMBERS];
	unsigned nalike = 0, nk = SWEEP_MEMBERS;
	for (unsigned j = 0; j < nk; j++) {
		alike[j] = chunk && (set >> j & 1);
		nalike += alike[j];
	}
	int fd = chunk ? open_member(rd, b, slot) : -ENOMEM;
	int err = fd < 0 ? fd : 0;
	for (uint64_t off = 0; off < b->size && err == 0 && nalike > 0;) {
		size_t len = b->size - off < rn->step ? (size_t)(b->size - off) : rn->step;
		if ((err = ds_pread_full(fd, chunk, len, off)) != 0)
			break;
		hash_read(rd, b, rn->pos[slot], chunk, off, len);
		for (unsigned j = 0; j < nk; j++) {
			if (!alike[j])
				continue;
			struct kept *k = &b->kept[j];
			ds_monitor_enter(rn->mon);
			while (k->state == K_FILLING && k->filled < off + len)
				ds_monitor_wait(rn->mon);
			bool failed = k->state == K_FAILED;
			ds_monitor_leave(rn->mon);
			if (failed || memcmp(chunk, k->buf + off, len) != 0) {
				alike[j] = false;
				nalike--;
			}
		}
		off += len;
	}
	if (err == 0 && nalike == 0)
		err = 1;
	if (err == 0)
		err = ds_check_unchanged(fd, ds_rec(rn->s, rn->fp->order[rn->pos[slot]]));
	if (fd >= 0)
		close(fd);
	if (err == 0)
		rn->sw->full[rn->pos[slot]] = ds_hash_digest(rd->h, 0);
	/* alike to the last byte: the first content that stands (a content
	 * still being read is compared with the others first) */
	ds_monitor_enter(rn->mon);
	for (unsigned j = 0; err == 0 && j < nk && *like < 0; j++) {
		while (alike[j] && b->kept[j].state == K_FILLING)
			ds_monitor_wait(rn->mon);
		if (alike[j] && b->kept[j].state != K_FAILED)
			*like = b->kept[j].state == K_ALIAS ? b->kept[j].alias : (int)j;
	}
	for (unsigned j = 0; j < nk; j++) {
		if (set >> j & 1) {
			b->kept[j].users--;
			release_alias(rn, b, &b->kept[j]);
		}
	}
	ds_monitor_leave(rn->mon);
	if (err == 0 && *like < 0)
		err = 1; /* what it equals failed */
	return err;
}

/* A file of a bucket the first pass left unread fails with its group's
 * other first-pass errors; otherwise at its group's turn with the sweep's. */
static void member_failed(struct run *rn, const struct sbucket *b, uint32_t p, int err)
{
	if (b->direct) {
		rn->fp->err[p] = err;
		rn->fp->got[p] = false;
	} else {
		rn->sw->err[p] = err;
	}
	rn->mstate[p] = M_DONE;
}

/* Every member of b was read in this sweep (monitor held): what it kept is
 * settled, and those that waited (unlike all of it) make the bucket of the
 * next sweep. */
static void close_bucket(struct run *rn, struct sbucket *b)
{
	struct ds_sweep *sw = rn->sw;
	for (size_t j = 0; j < b->nkept; j++) {
		struct kept *k = &b->kept[j];
		if (k->state == K_READY)
			sw->rep[k->pos] = k->joined ? k->pos : DS_NONE;
		else if (k->state == K_ALIAS)
			sw->rep[k->pos] = b->kept[k->alias].pos;
		ds_big_free(k->buf, b->size);
		k->buf = NULL;
		if (k->held)
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
	rn->more = rn->more || b->phase == B_WAIT;
}

/* How a member is visited, decided under the monitor. */
enum { V_SKIP, V_WAIT, V_KEEP, V_STREAM };

static int plan_visit(struct run *rn, struct sbucket *b, uint32_t p, unsigned *k)
{
	if (rn->mstate[p] != M_PENDING || b->phase == B_LATER || b->phase == B_DONE)
		return V_SKIP;
	if (b->phase == B_WAIT) {
		/* a bucket opens at its first file, if that file fits (the first
		 * bucket of a sweep always does: each sweep settles one at least) */
		if (rn->used > 0 && rn->used + b->size > rn->sw->budget) {
			b->phase = B_LATER;
			rn->more = true;
			return V_SKIP;
		}
		b->phase = B_OPEN;
	}
	b->unvisited--;
	unsigned live = 0;
	for (unsigned j = 0; j < b->nkept; j++)
		live += b->kept[j].state != K_FAILED;
	/* the last file read of a bucket need not be kept: nothing comes after it */
	bool room = !b->waits && b->streaming == 0 && b->nkept < SWEEP_MEMBERS &&
		    rn->used + b->size <= rn->sw->budget && !(b->unvisited == 0 && live > 0);
	if (!room && live == 0) {
		b->waits = true;
		rn->mstate[p] = M_WAITING; /* nothing to compare it with */
		return V_WAIT;
	}
	b->active++;
	if (!room) {
		/* compared with the contents kept or being kept (one found equal
		 * to another adds nothing) */
		b->streaming++;
		*k = 0;
		for (unsigned j = 0; j < b->nkept; j++) {
			if (b->kept[j].state == K_FILLING || b->kept[j].state == K_READY) {
				b->kept[j].users++;
				*k |= 1u << j;
			}
		}
		return V_STREAM;
	}
	*k = b->nkept++;
	b->kept[*k] = (struct kept){ .pos = p, .state = K_FILLING, .held = true };
	rn->used += b->size;
	if (rn->used > rn->s->reading.sweep_peak)
		rn->s->reading.sweep_peak = rn->used;
	return V_KEEP;
}

/* Visit the member in slot of bucket b: it is kept, joins a kept content,
 * waits for the next sweep, or fails. */
static void visit(struct reader *rd, struct sbucket *b, uint32_t slot)
{
	struct run *rn = rd->rn;
	uint32_t p = rn->pos[slot];
	unsigned k = 0;
	ds_monitor_enter(rn->mon);
	int how = plan_visit(rn, b, p, &k);
	ds_monitor_leave(rn->mon);
	if (how == V_SKIP)
		return;
	int like = -1, rc = 0;
	if (how == V_KEEP) {
		rc = read_keep(rd, b, slot, &b->kept[k]);
		if (rc == 0)
			settle_keep(rn, b, &b->kept[k]);
	} else if (how == V_STREAM) {
		rc = read_stream(rd, b, slot, k, &like);
	}
	ds_monitor_enter(rn->mon);
	if (how == V_KEEP && rc) {
		b->kept[k].state = K_FAILED;
		ds_monitor_wake(rn->mon);
	}
	if (how == V_STREAM)
		b->streaming--;
	if (how != V_WAIT)
		b->active--;
	if (rc == -ENOMEM)
		atomic_store(&rn->rc, -ENOMEM);
	if (rc < 0) {
		member_failed(rn, b, p, rc);
	} else if (how == V_STREAM && rc == 0) {
		rn->sw->rep[p] = b->kept[like].pos;
		b->kept[like].joined = true;
		rn->mstate[p] = M_DONE;
	} else if (how == V_STREAM) {
		rn->mstate[p] = M_WAITING; /* unlike all kept */
		b->waits = true;
	} else if (how == V_KEEP) {
		rn->mstate[p] = M_DONE;
	}
	if (b->unvisited == 0 && b->active == 0)
		close_bucket(rn, b);
	ds_monitor_leave(rn->mon);
}

struct sweep_job {
	const struct item *it;
};

static uint32_t item_lane(const void *arg, size_t i)
{
	return ((const struct sweep_job *)arg)->it[i].lane;
}

static void sweep_item(struct reader *rd, size_t i, void *arg)
{
	const struct item *it = &((const struct sweep_job *)arg)->it[i];
	visit(rd, &rd->rn->b[it->bucket], it->slot);
}

/* One sweep over the items, every disk at once, each in its order.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
static int sweep_once(struct run *rn, const struct item *it, size_t nit, bool *more)
{
	rn->more = false;
	for (size_t i = 0; i < rn->nb; i++) {
		struct sbucket *b = &rn->b[i];
		if (b->phase == B_DONE)
			continue;
		b->phase = B_WAIT;
		b->unvisited = 0;
		for (uint32_t x = b->first; x < b->first + b->n; x++)
			b->unvisited += rn->mstate[rn->pos[x]] == M_PENDING;
	}
	struct sweep_job job = { it };
	int rc = in_lanes(rn, nit, item_lane, sweep_item, &job);
	*more = rn->more;
	return rc;
}

/* Add a bucket of the k files at positions mem[], their states in h by
 * hidx[] (h NULL: the first pass's, standing after the first block). */
static void add_bucket(struct run *rn, const uint32_t *mem, const uint32_t *hidx, size_t k, uint64_t size,
		       struct ds_hashes *h, uint64_t from)
{
	size_t npos = rn->nb ? rn->b[rn->nb - 1].first + rn->b[rn->nb - 1].n : 0;
	rn->b[rn->nb++] = (struct sbucket){ .first = (uint32_t)npos, .n = (uint32_t)k, .phase = B_WAIT,
					    .size = size, .h = h, .from = from };
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


/* One round of a split: bytes off..end of the files still alike. */
struct round {
	struct run *rn;
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
	struct run *rn = rd->rn;
	uint32_t x = rd->alive[i].x;
	unsigned char *chunk = chunk_of(rdr);
	int fd = chunk ? ds_open_scanned(rn->s, ds_rec(rn->s, rn->fp->order[rd->mem[x]])) : -ENOMEM;
	int err = fd < 0 ? fd : 0;
	for (uint64_t o = rd->off; err == 0 && o < rd->end;) {
		size_t n = rd->end - o < rn->step ? (size_t)(rd->end - o) : rn->step;
		err = ds_pread_full(fd, chunk, n, o);
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
 * a sweep takes, or are read to their end; each run is a bucket then. */
static int split_bucket(struct run *rn, uint32_t *mem, size_t k, uint64_t size)
{
	const struct ds_first_pass *fp = rn->fp;
	struct ds_hashes *h = ds_hashes_new(k);
	struct by_state *alive = malloc(k * sizeof(*alive));
	uint32_t *run = malloc(k * sizeof(*run)), *ri = malloc(k * sizeof(*ri));
	int *err = malloc(k * sizeof(*err));
	int rc = h && alive && run && ri && err && DS_GROW(rn->owned, rn->capowned, rn->nowned + 1) == 0 ? 0 : -ENOMEM;
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
		struct round rd = { rn, mem, alive, h, err, off, end };
		for (size_t i = 0; i < na; i++)
			alive[i].key = (uint64_t)rn->lane[mem[alive[i].x]] << 32 | fp->rank[mem[alive[i].x]];
		rc = ds_sort(alive, na, sizeof(*alive), cmp_by_state, NULL);
		if (rc == 0)
			rc = in_lanes(rn, na, round_lane, round_read, &rd);
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
		for (; j < na && alive[j].key == alive[i].key; j++) {
			run[nrun] = mem[alive[j].x];
			ri[nrun++] = alive[j].x;
		}
		add_bucket(rn, run, ri, nrun, size, h, off);
		i = j;
	}
out:
	free(err);
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

/* Positions by lane, then place in the disk order. */
static int cmp_lane_rank(void *ctx, const void *pa, const void *pb)
{
	const struct run *rn = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (rn->lane[a] != rn->lane[b])
		return rn->lane[a] < rn->lane[b] ? -1 : 1;
	return rn->fp->rank[a] < rn->fp->rank[b] ? -1 : rn->fp->rank[a] > rn->fp->rank[b];
}

struct tails {
	struct run *rn;
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
	struct run *rn = rd->rn;
	uint32_t p = t->want[i];
	const struct ds_rec *r = ds_rec(rn->s, rn->fp->order[p]);
	unsigned char *chunk = chunk_of(rd);
	int fd = chunk ? ds_open_scanned(rn->s, r) : -ENOMEM;
	if (fd == -ENOMEM) {
		atomic_store(&rn->rc, -ENOMEM);
		return;
	}
	/* one block: readahead would read past the end or a seek back */
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	int err = fd < 0 ? fd : ds_pread_full(fd, chunk, DS_BLOCK, r->size - DS_BLOCK);
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
	struct tails t = { rn, want };
	if (rc == 0)
		rc = ds_sort(want, nw, sizeof(*want), cmp_lane_rank, rn);
	if (rc == 0)
		rc = in_lanes(rn, nw, tail_lane, tail_read, &t);
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

/* A lane for each device the groups' files are on, each with its reader.
 * @return 0 or -ENOMEM. */
static int make_lanes(struct run *rn, const uint32_t *groups, size_t ngroups)
{
	const struct ds_first_pass *fp = rn->fp;
	uint64_t *devs = NULL;
	size_t cap = 0;
	if (!(rn->lane = calloc(fp->n ? fp->n : 1, sizeof(*rn->lane))))
		return -ENOMEM;
	for (size_t g = 0; g < ngroups; g++) {
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++) {
			uint64_t dev = ds_rec(rn->s, fp->order[p])->dev;
			uint32_t l = 0;
			while (l < rn->nlanes && devs[l] != dev)
				l++;
			if (l == rn->nlanes) {
				if (DS_GROW(devs, cap, rn->nlanes + 1)) {
					free(devs);
					return -ENOMEM;
				}
				devs[rn->nlanes++] = dev;
			}
			rn->lane[p] = l;
		}
	}
	free(devs);
	rn->rd = calloc(rn->nlanes ? rn->nlanes : 1, sizeof(*rn->rd));
	for (size_t l = 0; rn->rd && l < rn->nlanes; l++) {
		rn->rd[l].rn = rn;
		if (!(rn->rd[l].h = ds_hashes_new(1)))
			return -ENOMEM;
	}
	return rn->rd ? 0 : -ENOMEM;
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
	rn.mon = ds_monitor_new();
	it = malloc(n * sizeof(*it));
	scratch = malloc(2 * n * sizeof(*scratch)); /* a direct group takes two rows */
	if (!sw->swept || !sw->rep || !sw->full || !sw->err || !rn.b || !rn.pos || !rn.hidx || !rn.mstate || !rn.mon ||
	    !it || !scratch || make_lanes(&rn, groups, ngroups) != 0)
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
			it[nit++] = (struct item){ rn.lane[rn.pos[x]], fp->rank[rn.pos[x]], x, (uint32_t)i };
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
	for (size_t l = 0; rn.rd && l < rn.nlanes; l++) {
		ds_big_free(rn.rd[l].chunk, rn.step);
		ds_hashes_free(rn.rd[l].h);
	}
	free(rn.rd);
	free(rn.lane);
	ds_monitor_free(rn.mon);
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
