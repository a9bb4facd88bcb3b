/* SPDX-License-Identifier: MIT */
/* readorder.c: on a spinning disk the order of reads decides the time, not
 * their number. Size groups list files in size order, which on the disk is a
 * random order: a seek for every file. So before any group is matched, the
 * first block of every candidate is read in the order the disk holds the
 * files: by the physical offset of each file's first extent (FIEMAP), else
 * (FUSE, NFS, tmpfs, files with no extent) by inode number, which on most
 * filesystems follows where they were allocated. The groups then take their
 * first-block hashes (and kept first blocks) from here, in their usual order;
 * errors are reported at their group's turn, so output and messages are the
 * same as when groups read their own first blocks. The array of places, the
 * pass's largest, holds its results too (fp->ent), in the order read: 12
 * bytes a candidate and a state byte, where places beside arrays of results
 * took 37. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"
#include "read/place.h"

/* The disks of the pass numbered in the order met (ds_disk(): the devices of
 * one disk are one stream), looked up once a device. */
#define PLACE_DISKS 0x7FFFu /* disks told apart; more share the last */
struct disks {
	uint16_t *of;     /* by device index: its disk's number + 1, 0 until looked up */
	uint64_t *id;     /* by number: ds_disk() */
	size_t n, cap;
};

/* The number of the disk under device devi. @return it, or -ENOMEM. */
static int disk_number(struct ds_reading *s, struct disks *d, uint16_t devi)
{
	if (!d->of[devi]) {
		uint64_t id = ds_disk(s, s->tree->devs.key[2 * (size_t)devi]);
		size_t k = 0;
		while (k < d->n && d->id[k] != id)
			k++;
		if (k == d->n && d->n < PLACE_DISKS) {
			if (DS_GROW(d->id, d->cap, d->n + 1))
				return -ENOMEM;
			d->id[d->n++] = id;
		}
		d->of[devi] = (uint16_t)((k < d->n ? k : d->n - 1) + 1);
	}
	return d->of[devi] - 1;
}

bool ds_first_extent(int fd, uint64_t *physical, bool *shared, uint64_t *run)
{
	union {
		struct fiemap map;
		unsigned char room[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} u;
	memset(&u, 0, sizeof(u));
	u.map.fm_start = 0;
	u.map.fm_length = FIEMAP_MAX_OFFSET;
	u.map.fm_extent_count = 1;
	unsigned long request = FS_IOC_FIEMAP; /* musl declares ioctl's request int */
	if (ioctl(fd, request, &u.map) != 0 || u.map.fm_mapped_extents == 0 ||
	    (u.map.fm_extents[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DATA_INLINE)))
		return false;
	*physical = u.map.fm_extents[0].fe_physical;
	if (shared)
		*shared = u.map.fm_extents[0].fe_flags & FIEMAP_EXTENT_SHARED;
	if (run)
		*run = u.map.fm_extents[0].fe_logical == 0 ? u.map.fm_extents[0].fe_length : 0;
	return true;
}

/* Set position p's key (its entry's, or once by_pos its own). */
static void set_key(struct ds_first_pass *fp, size_t p, uint64_t key)
{
	if (fp->by_pos)
		fp->key[p] = key;
	else
		fp->ent[fp->rank[p]] = ds_keypos32_of(key, (uint32_t)p);
}

void ds_fp_took(struct ds_first_pass *fp, size_t p, uint64_t partial)
{
	set_key(fp, p, partial);
	fp->state[p] |= DS_FP_GOT;
}

void ds_fp_failed(struct ds_first_pass *fp, size_t p, int err)
{
	set_key(fp, p, (uint64_t)(int64_t)err);
	fp->state[p] = (unsigned char)((fp->state[p] & ~DS_FP_GOT) | DS_FP_FAILED);
}

/* The group of position p among groups (in position order, as
 * ds_match packs them). */
static size_t group_of(const uint32_t *groups, size_t ngroups, uint32_t p)
{
	size_t lo = 0, hi = ngroups;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (groups[2 * mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The entries put at their positions: each swap puts one at its position
 * for good; the positions in no group read keep what is left (entries of no
 * position). */
static void entries_by_pos(struct ds_first_pass *fp)
{
	struct ds_keypos32 *e = fp->ent;
	for (size_t i = 0; i < fp->n; i++) {
		for (uint32_t q = place_pos(&e[i]); q != DS_NONE && q != i; q = place_pos(&e[i])) {
			struct ds_keypos32 t = e[q];
			e[q] = e[i];
			e[i] = t;
		}
	}
}

void ds_first_pass_by_pos(struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, uint64_t *key)
{
	if (fp->by_pos)
		return;
	/* each group's first rank: the first of its entries met in the order read */
	for (size_t g = 0; key && g < ngroups; g++)
		key[g] = UINT64_MAX;
	for (size_t i = 0; key && ngroups && i < fp->nent; i++) {
		size_t g = group_of(groups, ngroups, place_pos(&fp->ent[i]));
		if (key[g] == UINT64_MAX)
			key[g] = i;
	}
	entries_by_pos(fp);
	/* the keys packed at the front (key i is written where entry 2i / 3
	 * was, read already; through memcpy, as the bytes of another type),
	 * the rest given back */
	unsigned char *k = (unsigned char *)fp->ent;
	for (size_t i = 0; i < fp->n; i++) {
		uint64_t v = ds_keypos32_key(&fp->ent[i]);
		memcpy(k + i * sizeof(v), &v, sizeof(v));
	}
	fp->ent = ds_big_shrink(fp->ent, &fp->entbytes, (fp->n ? fp->n : 1) * sizeof(uint64_t));
	fp->key = (uint64_t *)(void *)fp->ent;
	free(fp->rank);
	fp->rank = NULL;
	fp->by_pos = true;
}

/* Read the head only if it is all in the page cache already: a cached
 * file costs no seek, so it need not wait for its place in the disk order.
 * @return true when it was read. */
static bool read_if_cached(struct ds_reading *s, uint32_t ri, int fd, unsigned char *buf, size_t blen)
{
	return ds_all_cached(fd, 0, blen) && ds_read_rec(s, ri, fd, buf, blen, 0) == 0;
}

/* Placing the candidates: fp->ent by position, filled with each one's disk;
 * slices of positions on every thread. */
struct placing {
	struct ds_reading *s;
	struct ds_first_pass *fp;
	atomic_int rc;         /* -ENOMEM or DUPSCAN_E_CANCELED from any slice */
	/* files mapped before a cached read, on filesystems that may share
	 * blocks: found shared, and not (map_first()) */
	atomic_uint shared, unshared;
};
/* Cached files mapped first while none was found shared, at most this many:
 * a reflink filesystem without shared blocks then pays a few ioctls. */
#define MAP_FIRST_TRIES 256u
#define PLACE_SLICE 4096u /* candidates a slice */

/* Is rec's extent map asked before its head is taken from the page cache?
 * Where its filesystem may share blocks, and copies sharing them were found
 * or few files were asked yet (a copy proven by its map is not read). */
static bool map_first(struct placing *pj, uint32_t rec, uint64_t *fs)
{
	return ds_rec_fs(pj->s, rec, fs) &&
	       (atomic_load_explicit(&pj->shared, memory_order_relaxed) ||
		atomic_load_explicit(&pj->unshared, memory_order_relaxed) < MAP_FIRST_TRIES);
}

/* Where candidate p starts on its disk: an open and an ioctl, no data read.
 * What is cached already is read at once (its place taken). A file that
 * fails is tried again when read: its error is that one's. @return 0 or
 * -ENOMEM. */
static int place_one(struct placing *pj, uint32_t p, unsigned char *buf, struct ds_dirfd *dc)
{
	struct ds_first_pass *fp = pj->fp;
	struct ds_keypos32 *at = &fp->ent[p];
	if (place_pos(at) == DS_NONE)
		return 0;
	uint64_t size = ds_rec_size(pj->s->tree, ds_rec(pj->s->tree, fp->order[p]));
	int fd = ds_open_scanned_in(pj->s, fp->order[p], dc);
	if (fd < 0)
		return fd == -ENOMEM ? fd : 0;
	size_t len = ds_fp_head_len(fp, ds_rec_msize(pj->s->tree, fp->order[p])); /* (the bytes compared) */
	/* where blocks may be shared, the map first: a copy its twins prove
	 * one with another is not read, not even from the page cache */
	uint64_t where, fs, run = 0;
	bool shared = false;
	int mapped = map_first(pj, fp->order[p], &fs) ? ds_first_extent(fd, &where, &shared, &run) : -1;
	if (mapped >= 0)
		atomic_fetch_add_explicit(shared ? &pj->shared : &pj->unshared, 1, memory_order_relaxed);
	if (!shared && !ds_fp_direct(fp, p) && read_if_cached(pj->s, fp->order[p], fd, buf, len)) {
		ds_fp_took_head(fp, at, p, buf, len); /* ranked first, in order_entries() */
		ds_progress_settled(pj->s->core, 1, len);
	} else {
		if (mapped < 0)
			mapped = ds_first_extent(fd, &where, &shared, &run);
		if (mapped)
			*at = place(fp, place_stream(fp, at), false, where, p);
		/* (a byte of its own: no other thread writes it) */
		fp->state[p] |= (shared ? DS_FP_SHARED : 0) | (mapped && run >= size ? DS_FP_RUN : 0);
	}
	close(fd);
	return 0;
}

static void place_slice(void *job, size_t k)
{
	struct placing *pj = job;
	size_t from = k * PLACE_SLICE, to = from + PLACE_SLICE < pj->fp->n ? from + PLACE_SLICE : pj->fp->n;
	unsigned char *buf = ds_big_alloc(pj->fp->head ? DS_HDD_HEAD : DS_BLOCK);
	int rc = buf ? 0 : -ENOMEM;
	struct ds_dirfd dc = DS_DIRFD_INIT;
	for (size_t p = from; rc == 0 && p < to; p++) {
		if (atomic_load_explicit(&pj->rc, memory_order_relaxed))
			break;
		if (atomic_load_explicit(&pj->s->core->canceled, memory_order_relaxed))
			rc = DUPSCAN_E_CANCELED;
		else
			rc = place_one(pj, (uint32_t)p, buf, &dc);
	}
	ds_dirfd_close(&dc);
	if (rc)
		atomic_store(&pj->rc, rc);
	ds_big_free(buf, pj->fp->head ? DS_HDD_HEAD : DS_BLOCK);
	ds_progress_report(pj->s->core);
}

/* Place every candidate, on as many threads as the scan has: opening a file
 * whose inode the walk brought in, and asking where it lies, wait on the CPU,
 * not the disk, so the order does not matter here. @return 0, -ENOMEM or
 * DUPSCAN_E_CANCELED. */
static int place_all(struct ds_reading *s, struct placing *pj, size_t n)
{
	struct ds_pool *pool = ds_scan_pool(s->core);
	if (!pool)
		return -ENOMEM;
	size_t nslices = (n + PLACE_SLICE - 1) / PLACE_SLICE;
	int helpers = s->core->opt.threads - 1 < (int)nslices - 1 ? s->core->opt.threads - 1 : (int)nslices - 1;
	ds_pool_phase(pool, NULL, NULL, 0, 0, helpers > 0 ? helpers : 0);
	ds_parallel_for(pool, nslices, place_slice, pj);
	ds_pool_end_phase(pool);
	return atomic_load(&pj->rc);
}

/* The entries in the order read: those read from the page cache while
 * placed first (in any order: they cost no seek), then the placed (sorted
 * here by their places), then those of no group read (fp->nent are not).
 * @return the number of placed, at fp->ent + *first. */
static size_t order_entries(struct ds_first_pass *fp, size_t *first)
{
	struct ds_keypos32 *e = fp->ent, t;
	size_t got = 0;
	for (size_t i = 0; i < fp->n; i++) {
		uint32_t q = place_pos(&e[i]);
		if (q != DS_NONE && ds_fp_got(fp, q)) {
			t = e[got], e[got] = e[i], e[i] = t;
			got++;
		}
	}
	size_t end = got;
	for (size_t i = got; i < fp->n; i++) {
		if (place_pos(&e[i]) != DS_NONE) {
			t = e[end], e[end] = e[i], e[i] = t;
			end++;
		}
	}
	ds_sort_by_key32(e + got, end - got);
	fp->nent = end;
	*first = got;
	return end - got;
}

/* Each twin takes what the pass read of the file whose bytes are its own
 * (its hash, its head's, its first block where kept); where that file
 * failed, the twin is left unread, in no set and said unique nowhere. */
static void took_twins(const struct ds_reading *s, struct ds_first_pass *fp)
{
	for (size_t p = 0; p < fp->n; p++) {
		uint32_t f = ds_fp_twin(fp, p) ? fp->twin[p] : DS_NONE;
		if (f == DS_NONE || !ds_fp_got(fp, f))
			continue;
		set_key(fp, p, ds_fp_partial(fp, f));
		fp->state[p] |= DS_FP_GOT;
		fp->head[p] = fp->head[f];
		const unsigned char *from = ds_fp_block(fp, f), *to = ds_fp_block(fp, p);
		uint64_t size = ds_rec_msize(s->tree, fp->order[p]);
		if (from && to)
			memcpy((unsigned char *)to, from, size < DS_BLOCK ? size : DS_BLOCK);
	}
}

/* Each position's rank, for the sweep (which reads by it, and looks its
 * files' entries up while they are in the order read). @return 0 or -ENOMEM. */
static int rank_entries(struct ds_first_pass *fp)
{
	if (!(fp->rank = malloc((fp->n ? fp->n : 1) * sizeof(*fp->rank))))
		return -ENOMEM;
	for (size_t i = 0; i < fp->n; i++)
		fp->rank[i] = DS_NONE;
	for (size_t i = 0; i < fp->nent; i++)
		fp->rank[place_pos(&fp->ent[i])] = (uint32_t)i;
	return 0;
}

void ds_first_pass_free(struct ds_first_pass *fp)
{
	if (!fp)
		return;
	ds_big_free(fp->ent, fp->entbytes);
	free(fp->rank);
	free(fp->kept);
	free(fp->state);
	free(fp->head);
	free(fp->twin);
	free(fp->stream);
	ds_big_free(fp->blocks, fp->capbytes);
	free(fp);
}

/* The pass's arrays. @return 0 or -ENOMEM. */
static int pass_alloc(struct ds_reading *s, struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, bool heads)
{
	size_t n = fp->n ? fp->n : 1;
	fp->entbytes = n * sizeof(*fp->ent);
	fp->ent = ds_big_alloc(fp->entbytes);
	fp->state = calloc(n, sizeof(*fp->state));
	for (size_t g = 0; g < ngroups; g++)
		fp->big = fp->big || ds_rec_msize(s->tree, fp->order[groups[2 * g]]) > DS_BLOCK;
	if (fp->big && heads)
		fp->head = malloc(n * sizeof(*fp->head));
	if (!fp->ent || !fp->state || (fp->big && heads && !fp->head))
		return -ENOMEM;
	for (size_t i = 0; i < fp->n; i++)
		fp->ent[i] = ds_keypos32_of(0, DS_NONE); /* placed below when in a group */
	return 0;
}

static int cmp_kept(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_fp_kept *a = pa, *b = pb;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* First blocks kept, for whole groups, the groups of fewest bytes first,
 * while the budget lasts: a bucket whose blocks are all here compares them
 * without reading them again; a group with one not kept would read them all
 * again, so a block kept of it would be memory for nothing. Many small
 * groups before one large: a group of a rare size is most often copies.
 * @return 0 or -ENOMEM. */
static int keep_groups(struct ds_reading *s, struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups)
{
	struct ds_keypos *by = malloc((ngroups ? ngroups : 1) * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (size_t g = 0; g < ngroups; g++) {
		uint64_t size = ds_rec_msize(s->tree, fp->order[groups[2 * g]]);
		by[g] = (struct ds_keypos){ groups[2 * g + 1] * (size < DS_BLOCK ? size : DS_BLOCK), g };
	}
	ds_sort_by_key(by, ngroups);
	size_t cap = 0, want = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < ngroups && by[i].key <= s->core->opt.heads_budget - want; i++) {
		uint32_t first = groups[2 * by[i].pos], cnt = groups[2 * by[i].pos + 1];
		if (ds_fp_direct(fp, first))
			continue;
		if (DS_GROW(fp->kept, cap, fp->nkept + 1))
			rc = -ENOMEM;
		else
			fp->kept[fp->nkept++] = (struct ds_fp_kept){ first, cnt, (uint32_t)(by[i].key / cnt), want };
		want += (size_t)by[i].key;
	}
	free(by);
	/* kept_group() looks them up by position */
	if (rc == 0)
		rc = ds_sort(fp->kept, fp->nkept, sizeof(*fp->kept), cmp_kept, NULL);
	fp->blocks = rc == 0 && want ? ds_big_alloc(want) : NULL;
	fp->capbytes = fp->blocks ? want : 0;
	if (!fp->blocks)
		fp->nkept = 0; /* none kept after all */
	return rc;
}

/* The pass's streams: each device of a candidate (dk->of[devi] set) with
 * its disk, numbered in the order of (disk, device), into fp->stream; sof:
 * by device index, its stream's number. @return 0 or -ENOMEM. */
static int number_streams(struct ds_first_pass *fp, const struct disks *dk, size_t ndevs, uint32_t *sof)
{
	uint64_t *pair = malloc((ndevs ? ndevs : 1) * sizeof(*pair));
	size_t n = 0;
	if (!pair)
		return -ENOMEM;
	for (size_t d = 0; d < ndevs; d++)
		if (dk->of[d])
			pair[n++] = (uint64_t)(dk->of[d] - 1) << 16 | d;
	int rc = ds_sort_u64_set(pair, &n);
	if (rc == 0 && !(fp->stream = malloc((n ? n : 1) * sizeof(*fp->stream))))
		rc = -ENOMEM;
	for (size_t k = 0; rc == 0 && k < n; k++) {
		fp->stream[k] = (struct ds_fp_stream){ (uint16_t)(pair[k] >> 16), (uint16_t)pair[k] };
		sof[(uint16_t)pair[k]] = (uint32_t)k;
	}
	for (fp->sbits = 0; n > 1 && (n - 1) >> fp->sbits; fp->sbits++)
		; /* the bits of the last stream's number */
	free(pair);
	return rc;
}

/* Which disk each candidate of the groups is on (its place: its inode until
 * place_all() finds its extent), and the groups the sweep reads whole.
 * @return 0 or -ENOMEM. */
static int pass_disks(struct ds_reading *s, struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups,
		      size_t sweep)
{
	size_t ndevs = s->tree->devs.n ? s->tree->devs.n : 1;
	struct disks dk = { calloc(ndevs, sizeof(*dk.of)), NULL, 0, 0 };
	uint32_t *sof = malloc(ndevs * sizeof(*sof));
	int rc = dk.of && sof ? 0 : -ENOMEM;
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		/* a few files of one size, more than a head each: most likely
		 * copies, which the sweep reads whole; reading their heads first
		 * would be a second visit (and a seek) for each */
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec_msize(s->tree, fp->order[first]);
		bool direct = fp->head && cnt <= DS_SWEEP_MEMBERS && size > DS_HDD_HEAD && size <= sweep / 2;
		for (uint32_t p = first; rc == 0 && p < first + cnt; p++) {
			if (direct)
				fp->state[p] |= DS_FP_DIRECT;
			int disk = disk_number(s, &dk, ds_rec_devi(s->tree, ds_rec(s->tree, fp->order[p])));
			rc = disk < 0 ? disk : 0;
		}
	}
	if (rc == 0)
		rc = number_streams(fp, &dk, ndevs, sof);
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++) {
			const struct ds_rec *r = ds_rec(s->tree, fp->order[p]);
			fp->ent[p] = place(fp, sof[ds_rec_devi(s->tree, r)], true, ds_rec_ino(s->tree, r), p);
		}
	}
	free(sof);
	free(dk.of);
	free(dk.id);
	return rc;
}

int ds_first_pass_run(struct ds_reading *s, const uint32_t *order, size_t n, const uint32_t *groups, size_t ngroups,
		      size_t sweep)
{
	struct ds_first_pass *fp = calloc(1, sizeof(*fp));
	if (!fp)
		return -ENOMEM;
	fp->order = order;
	fp->n = n;
	int rc = pass_alloc(s, fp, groups, ngroups, sweep > 0);
	if (rc == 0)
		rc = pass_disks(s, fp, groups, ngroups, sweep);
	if (rc == 0)
		rc = keep_groups(s, fp, groups, ngroups);
	/* one phase from the first open to the last head read */
	uint64_t files = 0, bytes = 0;
	for (size_t p = 0; rc == 0 && p < n; p++) {
		if (place_pos(&fp->ent[p]) != DS_NONE && !ds_fp_direct(fp, p)) {
			files++;
			bytes += ds_fp_head_len(fp, ds_rec_msize(s->tree, order[p]));
		}
	}
	ds_progress_phase(s->core, DUPSCAN_PHASE_FIRST, files, bytes);
	atomic_store(&s->core->progress.first, true);
	struct placing pj = { s, fp, 0, 0, 0 };
	if (rc == 0)
		rc = place_all(s, &pj, n);
	if (rc == 0 && fp->head)
		rc = ds_pass_twins(s, fp, groups, ngroups, sweep);
	size_t first = 0, np = rc == 0 ? order_entries(fp, &first) : 0;
	if (rc == 0)
		rc = ds_pass_read_heads(s, fp, fp->ent + first, np);
	if (rc == 0 && fp->head)
		rc = rank_entries(fp);
	if (rc == 0 && fp->twin)
		took_twins(s, fp);
	ds_progress_end(s->core);
	if (rc) {
		ds_first_pass_free(fp);
		return rc;
	}
	s->first_pass = fp;
	return 0;
}
