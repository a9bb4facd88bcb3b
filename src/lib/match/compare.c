/* SPDX-License-Identifier: MIT */
/* compare.c: partition same-size files into classes of identical content
 * by reading them side by side. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"
#include "match/result.h"
#include "match/compare.h"
#include "cache/cache_run.h"

int ds_open_rec(struct ds_ctx *c, uint32_t i)
{
	int fd = ds_open_scanned(c->s->reading, i);
	if (fd < 0 && fd != -ENOMEM)
		ds_fail(c, i, fd);
	return fd;
}

static void kill_member(struct ds_member *mb)
{
	if (mb->fd >= 0)
		close(mb->fd);
	mb->fd = -1;
	mb->alive = false;
}

static void drop_member(struct ds_ctx *c, struct ds_member *mb, int code)
{
	ds_fail(c, mb->rec, code);
	kill_member(mb);
}

/* Members left alone in their class are unique: stop reading them. */
static size_t retire_singletons(struct ds_member *m, size_t n, uint32_t *count)
{
	size_t alive = 0;
	for (size_t i = 0; i < n; i++)
		count[i] = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].alive)
			count[m[i].cls]++;
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		if (count[m[i].cls] < 2)
			kill_member(&m[i]);
		else
			alive++;
	}
	return alive;
}

/* Working memory of one lockstep comparison. */
struct lockstep {
	struct ds_ctx *c;
	struct ds_member *m;
	size_t n, chunk;
	const uint64_t *partial;   /* the members' first-block hash, to log checkpoints; or NULL */
	uint64_t unlogged;         /* bytes read since the last checkpoint */
	uint32_t *count, *first_rep, *rep_next;
	unsigned char **bufs, **pool;
	size_t npool;
	/* members on two or more spinning disks: each turn reads every disk at
	 * once, each member into its own buffer, then compares in memory */
	struct spread {
		unsigned char **own;  /* by member */
		int *err;             /* by member: its read of this turn */
		uint32_t *disk;       /* by member: its disk's place in devs */
		size_t ndisks;
		uint64_t off;
		size_t len;
	} *spread;
};

/* One disk's members of a spread lockstep: their turn read in member order. */
static void read_disk(void *job, size_t d)
{
	struct lockstep *ls = job;
	struct spread *sp = ls->spread;
	for (size_t i = 0; i < ls->n; i++) {
		if (!ls->m[i].alive || sp->disk[i] != d)
			continue;
		if (!sp->own[i] && !(sp->own[i] = ds_chunk_take(ls->c->s->reading->chunks, ls->chunk))) {
			sp->err[i] = -ENOMEM;
			continue;
		}
		sp->err[i] = ds_read_rec(ls->c->s->reading, ls->m[i].rec, ls->m[i].fd, sp->own[i], sp->len, sp->off);
	}
}

/* Member i's bytes of this turn: read now, or (spread) read by its disk's
 * thread. @return 0 or a negative code. */
static int turn_bytes(struct lockstep *ls, size_t i, uint64_t off, size_t len, unsigned char **buf)
{
	if (ls->spread) {
		*buf = ls->spread->own[i];
		return ls->spread->err[i];
	}
	if (ls->npool == 0) {
		ls->pool[0] = ds_chunk_take(ls->c->s->reading->chunks, ls->chunk);
		if (!ls->pool[0])
			return -ENOMEM;
		ls->npool = 1;
	}
	*buf = ls->pool[ls->npool - 1];
	return ds_read_rec(ls->c->s->reading, ls->m[i].rec, ls->m[i].fd, *buf, len, off);
}

/* Read [off, off + len) of every alive member and split each class by those
 * bytes; with h, feed the bytes past the first block to the members' hashes
 * (by member).
 * @return the number of members still in a class of two or more, or -ENOMEM. */
static long refine(struct lockstep *ls, uint64_t off, size_t len, struct ds_hashes *h)
{
	struct ds_member *m = ls->m;
	size_t n = ls->n;
	for (size_t i = 0; i < n; i++)
		ls->first_rep[i] = DS_NONE;
	if (ls->spread) {
		ls->spread->off = off;
		ls->spread->len = len;
		ds_parallel_for(ls->c->pool, ls->spread->ndisks, read_disk, ls);
	}
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		unsigned char *buf;
		int err = turn_bytes(ls, i, off, len, &buf);
		if (err == -ENOMEM)
			return err;
		if (err < 0) {
			drop_member(ls->c, &m[i], err);
			continue;
		}
		if (h && off + len > DS_BLOCK) {
			size_t skip = off < DS_BLOCK ? (size_t)(DS_BLOCK - off) : 0;
			ds_hash_update(h, i, buf + skip, len - skip);
		}
		uint32_t old = m[i].cls, found = DS_NONE, *tail = &ls->first_rep[old];
		for (uint32_t r = ls->first_rep[old]; r != DS_NONE; r = ls->rep_next[r]) {
			if (memcmp(ls->bufs[r], buf, len) == 0) {
				found = r;
				break;
			}
			tail = &ls->rep_next[r];
		}
		if (found == DS_NONE) {
			/* a new class starts here; keep its bytes to compare the rest */
			found = (uint32_t)i;
			ls->bufs[i] = buf;
			ls->npool -= ls->spread == NULL;
			ls->rep_next[i] = DS_NONE;
			*tail = (uint32_t)i;
		}
		ls->count[i] = found; /* new label, applied once every member has been read */
	}
	for (size_t i = 0; i < n; i++) {
		if (ls->bufs[i] && !ls->spread)
			ls->pool[ls->npool++] = ls->bufs[i];
		ls->bufs[i] = NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (m[i].alive)
			m[i].cls = ls->count[i];
	return (long)retire_singletons(m, n, ls->count);
}

/* The bytes read per member per turn: long turns on a spinning disk (each
 * costs a seek per file, so reading, not seeking, takes the time), and never
 * more than a budget for a buffer per member (per thread). */
static size_t lockstep_chunk(const struct ds_match *s, size_t n, uint64_t size, uint64_t start)
{
	size_t chunk = s->core->opt.chunk, budget = DS_LOCKSTEP_BUDGET;
	if (s->reading->io_mode == DUPSCAN_IO_HDD && !s->core->opt.chunk_given) {
		chunk = DS_HDD_TURN;
		budget = DS_HDD_LOCKSTEP_BUDGET;
	}
	/* up to one buffer per member may be held at once (when every file
	 * differs in the same chunk) */
	if (chunk > budget / (n + 1))
		chunk = budget / (n + 1) < DS_MIN_CHUNK ? DS_MIN_CHUNK : budget / (n + 1);
	uint64_t rest = size - (start < size ? start : size);
	if (rest < chunk)
		chunk = rest ? (size_t)rest : 1;
	return chunk;
}

/* The first classes: by the first blocks already in memory when given, else
 * one class of every member still in play. */
static void first_classes(const struct ds_match *s, struct ds_member *m, size_t n, const unsigned char *first_blocks,
			  size_t block_len)
{
	for (size_t i = 0; i < n; i++) {
		m[i].cls = 0;
		m[i].alive = !(ds_rec(s->tree, m[i].rec)->flags & DS_F_DROPPED);
		if (!m[i].alive)
			kill_member(&m[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive)
			continue;
		m[i].cls = (uint32_t)i;
		for (size_t j = 0; j < i; j++) {
			if (!m[j].alive || m[j].cls != j)
				continue;
			if (!first_blocks || memcmp(first_blocks + (size_t)m[i].hidx * block_len,
						    first_blocks + (size_t)m[j].hidx * block_len, block_len) == 0) {
				m[i].cls = (uint32_t)j;
				break;
			}
		}
	}
}

/* Open the members still in play that came without their file open (a
 * member may bring the fd its first block was read from). @return 0 or -ENOMEM. */
static int open_members(struct ds_ctx *c, struct ds_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!m[i].alive || m[i].fd >= 0)
			continue;
		int fd = ds_open_rec(c, m[i].rec);
		if (fd == -ENOMEM)
			return fd;
		if (fd < 0) {
			m[i].alive = false;
			continue;
		}
		m[i].fd = fd;
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return 0;
}

/* Bytes start..size of every member side by side. @return 1 with members
 * still in classes, 0 when none is left, or a negative code. */
static long compare_rest(struct lockstep *ls, uint64_t start, uint64_t size, struct ds_hashes *h)
{
	const struct ds_match *s = ls->c->s;
	/* Files that differ near their end are common (logs, images, partial
	 * downloads): compare the last block first, so they cost no full read. */
	if (size - start > 2 * (uint64_t)ls->chunk) {
		size_t tail = DS_BLOCK < ls->chunk ? DS_BLOCK : ls->chunk;
		long alive = refine(ls, size - tail, tail, NULL);
		if (alive <= 0)
			return alive;
	}
	for (uint64_t off = start; off < size;) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed)) {
			/* half-compared files must not become a set */
			for (size_t i = 0; i < ls->n; i++)
				kill_member(&ls->m[i]);
			return DUPSCAN_E_CANCELED;
		}
		size_t len = size - off < ls->chunk ? (size_t)(size - off) : ls->chunk;
		long alive = refine(ls, off, len, h);
		if (alive <= 0)
			return alive;
		off += len;
		ls->unlogged += (uint64_t)len * (uint64_t)alive;
		/* a comparison of large files takes minutes: what it knows goes
		 * to the log now and then, for a killed run's next to go on */
		if (ls->partial && ls->unlogged >= DS_CHECKPOINT_BYTES && off < size) {
			ds_cache_log_checkpoint(ls->c->s->cache, ls->m, ls->n, *ls->partial, off);
			ls->unlogged = 0;
		}
	}
	return 1;
}

static size_t disk_index(const uint64_t *devs, size_t nd, uint64_t dev)
{
	size_t d = 0;
	while (d < nd && devs[d] != dev)
		d++;
	return d;
}

/* On spinning disks, members on two or more of them: ls->spread, so that
 * each turn reads them all at once, a thread a disk. On a network
 * filesystem, where each read waits a round trip, every member is a "disk"
 * of its own: a turn's reads are all in flight at once. @return 0 or -ENOMEM. */
static int spread_members(struct lockstep *ls)
{
	struct ds_match *s = ls->c->s;
	bool net = s->reading->io_mode == DUPSCAN_IO_NET;
	if ((s->reading->io_mode != DUPSCAN_IO_HDD && !net) || ds_pool_helpers(ls->c->pool) == 0 || ls->n < 2)
		return 0;
	uint64_t devs[DS_SPREAD_DISKS];
	size_t nd = 0;
	/* the disks first: most comparisons have one, and need nothing more */
	for (size_t i = 0; !net && i < ls->n && nd < DS_SPREAD_DISKS; i++) {
		uint64_t dev = ds_disk(s->reading, ds_rec_dev(s->tree, ds_rec(s->tree, ls->m[i].rec)));
		if (disk_index(devs, nd, dev) == nd)
			devs[nd++] = dev;
	}
	if (!net && nd < 2)
		return 0;
	struct spread *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	ls->spread = sp;
	sp->own = calloc(ls->n, sizeof(*sp->own));
	sp->err = calloc(ls->n, sizeof(*sp->err));
	sp->disk = malloc(ls->n * sizeof(*sp->disk));
	sp->ndisks = nd;
	if (!sp->own || !sp->err || !sp->disk)
		return -ENOMEM;
	if (net)
		sp->ndisks = ls->n;
	for (size_t i = 0; i < ls->n; i++) {
		size_t d = net ? i : disk_index(devs, nd, ds_disk(s->reading, ds_rec_dev(s->tree, ds_rec(s->tree, ls->m[i].rec))));
		sp->disk[i] = (uint32_t)(d < sp->ndisks ? d : sp->ndisks - 1); /* past the last: shares its thread */
	}
	return 0;
}

static void lockstep_free(struct lockstep *ls)
{
	struct spread *sp = ls->spread;
	struct ds_chunks *cs = ls->c->s->reading->chunks;
	for (size_t i = 0; sp && sp->own && i < ls->n; i++)
		ds_chunk_give(cs, sp->own[i], ls->chunk);
	if (sp) {
		free(sp->own);
		free(sp->err);
		free(sp->disk);
		free(sp);
	}
	for (size_t i = 0; i < ls->n; i++) {
		if (ls->m[i].fd >= 0)
			close(ls->m[i].fd);
		ls->m[i].fd = -1;
	}
	for (size_t i = 0; ls->pool && i < ls->npool; i++)
		ds_chunk_give(cs, ls->pool[i], ls->chunk);
	/* spread, a member's class bytes are its own chunk, given back above */
	for (size_t i = 0; !sp && ls->bufs && i < ls->n; i++)
		ds_chunk_give(cs, ls->bufs[i], ls->chunk);
	free(ls->pool);
	free(ls->bufs);
	free(ls->rep_next);
	free(ls->first_rep);
	free(ls->count);
}

int ds_lockstep(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		struct ds_hashes *h, const unsigned char *first_blocks, size_t block_len, const uint64_t *partial)
{
	first_classes(c->s, m, n, first_blocks, block_len);
	return ds_lockstep_on(c, m, n, size, start, h, partial);
}

int ds_lockstep_on(struct ds_ctx *c, struct ds_member *m, size_t n, uint64_t size, uint64_t start,
		   struct ds_hashes *h, const uint64_t *partial)
{
	struct ds_match *s = c->s;
	struct lockstep ls = { .c = c, .m = m, .n = n, .chunk = lockstep_chunk(s, n, size, start), .partial = partial };
	ls.count = malloc(n * sizeof(*ls.count));
	ls.first_rep = malloc(n * sizeof(*ls.first_rep));
	ls.rep_next = malloc(n * sizeof(*ls.rep_next));
	ls.bufs = calloc(n, sizeof(*ls.bufs));
	ls.pool = calloc(n + 1, sizeof(*ls.pool));
	int rc = ls.count && ls.first_rep && ls.rep_next && ls.bufs && ls.pool ? 0 : -ENOMEM;
	if (rc == 0) {
		if (retire_singletons(m, n, ls.count) == 0 || start >= size)
			goto out;
		rc = open_members(c, m, n);
		if (rc || retire_singletons(m, n, ls.count) == 0)
			goto out;
		if ((rc = spread_members(&ls)) != 0)
			goto out;
		long alive = compare_rest(&ls, start, size, h);
		if (alive <= 0) {
			rc = (int)alive;
			goto out;
		}
		/* a file written while it was read must not be reported on what was read */
		for (size_t i = 0; i < n; i++) {
			int err = m[i].alive ? ds_check_unchanged(s->reading, m[i].fd, ds_rec(s->tree, m[i].rec)) : 0;
			if (err < 0)
				drop_member(c, &m[i], err);
		}
		retire_singletons(m, n, ls.count);
	}
out:
	lockstep_free(&ls);
	return rc;
}
