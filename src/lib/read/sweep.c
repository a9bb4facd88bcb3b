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

#include "sweep.h"
#include "read/read.h"
#include "cache/cache_run.h"

/* By lane, then place in the disk order. */
static int cmp_item(void *ctx, const void *pa, const void *pb)
{
	const struct sweep_run *rn = ctx;
	const struct item *x = pa, *y = pb;
	if (x->lane != y->lane)
		return x->lane < y->lane ? -1 : 1;
	uint32_t a = rn->pos[x->slot], b = rn->pos[y->slot];
	return rn->fp->rank[a] < rn->fp->rank[b] ? -1 : rn->fp->rank[a] > rn->fp->rank[b];
}

_Static_assert(DS_MIN_CHUNK >= DS_BLOCK, "a sweep's first chunk holds the first block");

/* Read the member in slot whole into kept content k (its buffer taken
 * here), telling those who compare with it how far it is read.
 * @return 0 or a negative code (the file fails). */
static int read_keep(struct reader *rd, struct sbucket *b, uint32_t slot, struct kept *k)
{
	struct sweep_run *rn = rd->rn;
	unsigned char *buf = ds_big_alloc(b->size);
	if (!buf)
		return -ENOMEM;
	ds_monitor_enter(rn->mon);
	k->buf = buf;
	ds_monitor_leave(rn->mon);
	bool ahead;
	int fd = ds_sweep_open_member(rd, slot, &ahead);
	int err = fd < 0 ? fd : 0;
	for (uint64_t off = 0; off < b->size && err == 0;) {
		size_t len = b->size - off < rn->step ? (size_t)(b->size - off) : rn->step;
		err = ds_sweep_read_chunk(rd, b, rn->pos[slot], fd, buf + off, off, len, ahead, true);
		if (err)
			break;
		ds_sweep_hash_read(rd, b, rn->pos[slot], buf + off, off, len);
		off += len;
		ds_monitor_enter(rn->mon);
		k->filled = off;
		ds_monitor_wake(rn->mon);
		ds_monitor_leave(rn->mon);
	}
	err = ds_sweep_close_member(rd, slot, fd, err);
	return err;
}

/* A content equal to another kept one is given back once no comparison
 * reads it (monitor held). */
static void release_alias(struct sweep_run *rn, const struct sbucket *b, struct kept *k)
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
static void settle_keep(struct sweep_run *rn, struct sbucket *b, struct kept *k)
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
	struct sweep_run *rn = rd->rn;
	unsigned char *chunk = ds_lane_chunk(rd);
	*like = -1;
	bool alike[SWEEP_MEMBERS];
	unsigned nalike = 0, nk = SWEEP_MEMBERS;
	for (unsigned j = 0; j < nk; j++) {
		alike[j] = chunk && (set >> j & 1);
		nalike += alike[j];
	}
	bool ahead = false;
	int fd = chunk ? ds_sweep_open_member(rd, slot, &ahead) : -ENOMEM;
	int err = fd < 0 ? fd : 0;
	for (uint64_t off = 0; off < b->size && err == 0 && nalike > 0;) {
		size_t len = b->size - off < rn->step ? (size_t)(b->size - off) : rn->step;
		if ((err = ds_sweep_read_chunk(rd, b, rn->pos[slot], fd, chunk, off, len, ahead, false)) != 0)
			break;
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
		/* its next chunk only once this one is alike: a file that differs
		 * here costs no read of the next (then hashed, as the disk reads) */
		if (nalike > 0 && off + len < b->size)
			ds_sweep_ask_next(rd, b, fd, off + len);
		ds_sweep_hash_read(rd, b, rn->pos[slot], chunk, off, len);
		off += len;
	}
	if (err == 0 && nalike == 0)
		err = 1;
	err = ds_sweep_close_member(rd, slot, fd, err);
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
static void member_failed(struct sweep_run *rn, const struct sbucket *b, uint32_t p, int err)
{
	if (b->direct) {
		ds_fp_failed(rn->fp, p, err);
	} else {
		rn->sw->err[p] = err;
	}
	rn->mstate[p] = M_DONE;
}

/* The files of b in a class, each read whole and compared byte by byte
 * into it, go to the cache's log now: a kill during the sweeps, which come
 * before any commit, loses none of them (a no-op without a cache). Their
 * class is numbered as the bucket will not be when settled (ds_note_proofs()),
 * so these proofs never tell classes apart (apart false): they only join. */
static void log_classes(const struct sweep_run *rn, const struct sbucket *b)
{
	if (!rn->s->cache->log)
		return;
	for (uint32_t i = b->first; i < b->first + b->n; i++) {
		uint32_t p = rn->pos[i], rep = rn->sw->rep[p];
		if (rn->mstate[p] != M_DONE || rep == DS_NONE)
			continue;
		struct ds_proof pf = { ds_cache_fresh_class(rn->s->cache, ds_rec(rn->s->tree, rn->fp->order[rep])), rn->s->cache->start_ns,
				       false, true, false };
		ds_cache_log_add(rn->s->cache, rn->fp->order[p], ds_fp_partial(rn->fp, p), rn->sw->full[p], true, &pf);
	}
}

/* Every member of b was read in this sweep (monitor held): what it kept is
 * settled, and those that waited (unlike all of it) make the bucket of the
 * next sweep. */
static void close_bucket(struct sweep_run *rn, struct sbucket *b)
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
	free(b->kept);
	b->kept = NULL;
	b->nkept = 0;
	b->waits = false;
	log_classes(rn, b);
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

static int plan_visit(struct sweep_run *rn, struct sbucket *b, uint32_t p, unsigned *k)
{
	if (ds_sweep_passed_over(rn, b, p)) {
		if (rn->mstate[p] == M_PENDING && b->phase == B_WAIT) {
			b->phase = B_LATER; /* it did not fit */
			rn->more = true;
		}
		return V_SKIP;
	}
	if (b->phase == B_WAIT)
		b->phase = B_OPEN;
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
	if (!b->kept && !(b->kept = malloc(SWEEP_MEMBERS * sizeof(*b->kept)))) {
		b->active--;
		atomic_store(&rn->rc, -ENOMEM);
		return V_SKIP;
	}
	*k = b->nkept++;
	b->kept[*k] = (struct kept){ .pos = p, .state = K_FILLING, .held = true };
	rn->used += b->size;
	if (rn->used > rn->s->sweep_peak)
		rn->s->sweep_peak = rn->used;
	return V_KEEP;
}

/* Visit the member in slot of bucket b: it is kept, joins a kept content,
 * waits for the next sweep, or fails. */
static void visit(struct reader *rd, struct sbucket *b, uint32_t slot)
{
	struct sweep_run *rn = rd->rn;
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
	if (how != V_WAIT)
		ds_progress_settled(rn->s->core, 0, b->size);
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
	size_t n;
};

static uint32_t item_lane(const void *arg, size_t i)
{
	return ((const struct sweep_job *)arg)->it[i].lane;
}

static void sweep_item(struct reader *rd, size_t i, void *arg)
{
	const struct sweep_job *job = arg;
	const struct item *it = &job->it[i];
	rd->next = i + 1 < job->n && job->it[i + 1].lane == it->lane ? &job->it[i + 1] : NULL;
	visit(rd, &rd->rn->b[it->bucket], it->slot);
	if (rd->ahead_slot == it->slot) {
		/* opened ahead, and passed over after all */
		close(rd->ahead_fd);
		rd->ahead_slot = DS_NONE;
	}
}

/* One sweep over the items, every disk at once, each in its order.
 * @return 0, -ENOMEM or DUPSCAN_E_CANCELED. */
static int sweep_once(struct sweep_run *rn, const struct item *it, size_t nit, bool *more)
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
	struct sweep_job job = { it, nit };
	int rc = ds_lanes_run(rn, nit, item_lane, sweep_item, &job);
	*more = rn->more;
	return rc;
}

/* Files the sweep settled without reading them whole (alone in their
 * bucket after their heads or last blocks) leave the progress's bound. */
static void settle_unread(const struct sweep_run *rn)
{
	uint64_t swept = 0, read = 0;
	for (size_t p = 0; p < rn->fp->n; p++)
		if (rn->sw->swept[p])
			swept += ds_rec_msize(rn->s->tree, rn->fp->order[p]);
	for (size_t i = 0; i < rn->nb; i++)
		read += rn->b[i].size * rn->b[i].n;
	if (swept > read)
		ds_progress_settled(rn->s->core, 0, swept - read);
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

/* What a sweep run holds only while it runs. */
static void sweep_run_free(struct sweep_run *rn)
{
	for (size_t i = 0; i < rn->nb; i++) {
		for (size_t k = 0; k < rn->b[i].nkept; k++)
			ds_big_free(rn->b[i].kept[k].buf, rn->b[i].size);
		free(rn->b[i].kept);
	}
	ds_lanes_free(rn);
	ds_monitor_free(rn->mon);
	free(rn->mstate);
	free(rn->pos);
	free(rn->b);
	free(rn->tail);
}

int ds_sweep_run(struct ds_reading *s, const uint32_t *groups, size_t ngroups, size_t budget)
{
	struct ds_first_pass *fp = s->first_pass;
	size_t n = fp->n ? fp->n : 1;
	struct ds_sweep *sw = calloc(1, sizeof(*sw));
	struct sweep_run rn = { 0 };
	rn.s = s;
	rn.fp = fp;
	rn.sw = sw;
	/* large reads: the file is read whole, and each read is a request the disk serves in one go */
	rn.step = s->core->opt.chunk_given ? s->core->opt.chunk : DS_HDD_TURN;
	struct item *it = NULL;
	uint32_t *scratch = NULL;
	int rc = -ENOMEM;
	if (!sw)
		return rc;
	sw->budget = budget;
	s->sweeps = 0;
	s->sweep_peak = 0;
	sw->swept = calloc(n, sizeof(*sw->swept));
	sw->rep = malloc(n * sizeof(*sw->rep));
	sw->full = calloc(n, sizeof(*sw->full));
	sw->err = calloc(n, sizeof(*sw->err));
	rn.mstate = calloc(n, sizeof(*rn.mstate));
	rn.mon = ds_monitor_new();
	size_t most = 1; /* a group's files at most: scratch for one */
	for (size_t g = 0; g < ngroups; g++)
		most = groups[2 * g + 1] > most ? groups[2 * g + 1] : most;
	scratch = malloc(most * sizeof(*scratch));
	if (!sw->swept || !sw->rep || !sw->full || !sw->err || !rn.mstate || !rn.mon ||
	    !scratch || ds_lanes_make(&rn, groups, ngroups) != 0)
		goto out;
	rc = 0;
	for (size_t i = 0; i < n; i++)
		sw->rep[i] = DS_NONE;
	if (fp->big)
		rc = ds_sweep_tails(&rn, groups, ngroups, budget, scratch);
	/* (no file larger than a block: nothing to sweep) */
	for (size_t g = 0; rc == 0 && fp->big && g < ngroups; g++) {
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec_msize(s->tree, fp->order[first]);
		/* within one block the first pass has read it all; a file larger
		 * than half the budget could not be kept beside another */
		if (size > DS_BLOCK && size <= budget / 2)
			rc = ds_sweep_group(&rn, first, cnt, scratch);
	}
	/* an item a bucket member: the buckets are known now */
	size_t nit = rn.nb ? rn.b[rn.nb - 1].first + rn.b[rn.nb - 1].n : 0;
	if (rc == 0 && !(it = malloc((nit ? nit : 1) * sizeof(*it))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < rn.nb; i++)
		for (uint32_t x = rn.b[i].first; x < rn.b[i].first + rn.b[i].n; x++)
			it[x] = (struct item){ rn.lane[rn.pos[x]], x, (uint32_t)i };
	if (rc == 0)
		rc = ds_sort(it, nit, sizeof(*it), cmp_item, &rn);
	if (rc == 0)
		settle_unread(&rn);
	for (bool more = nit > 0; rc == 0 && more;) {
		rc = sweep_once(&rn, it, nit, &more);
		s->sweeps++;
	}
out:
	free(scratch);
	free(it);
	sweep_run_free(&rn);
	if (rc) {
		ds_sweep_free(sw);
		return rc;
	}
	s->sweep = sw;
	return 0;
}
