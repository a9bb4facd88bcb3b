/* SPDX-License-Identifier: MIT */
/* passread.c: the first pass's reads, one stream a spinning disk in the
 * order readorder.c placed the files in: each file's head, and on to its
 * end where the disk passes over it anyway on its way to the next head. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"
#include "read/place.h"

/* A run of pl[] one thread reads in order. */
struct lane {
	size_t from, to;
	bool disk;           /* a whole spinning disk */
};

static int cmp_lane(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct lane *a = pa, *b = pb;
	if (a->disk != b->disk)
		return a->disk ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

struct heads {
	struct ds_reading *s;
	struct ds_first_pass *fp;
	struct ds_keypos32 *pl;  /* the placed, sorted: each one's entry once read */
	const struct lane *lane;
	atomic_int rc;       /* -ENOMEM or DUPSCAN_E_CANCELED from any lane */
};

/* The place of the next file lane k reads after entry i, a head at least
 * (a twin is never read, a direct file only when on the way), or NULL. */
static const struct ds_keypos32 *next_read(const struct heads *hj, size_t k, size_t i)
{
	for (size_t j = i + 1; j < hj->lane[k].to; j++)
		if (!ds_fp_twin(hj->fp, place_pos(&hj->pl[j])) && !ds_fp_direct(hj->fp, place_pos(&hj->pl[j])))
			return &hj->pl[j];
	return NULL;
}

/* Does the disk pass over [from, end) of e's device anyway, on its way to
 * the next file read (a spinning disk reads over a gap of up to
 * DS_HDD_SKIP sooner than it seeks past it)? */
static bool passed_over(const struct ds_first_pass *fp, const struct ds_keypos32 *e, const struct ds_keypos32 *next, uint64_t from, uint64_t end)
{
	uint64_t to = next && place_stream(fp, next) == place_stream(fp, e) ? place_where(fp, next) : UINT64_MAX;
	return to != UINT64_MAX && from <= end && end <= to && to - from <= DS_HDD_SKIP;
}

/* Ask for the rest of a file the disk passes over anyway (from at, where
 * the pass's read of it ends): the sweep then finds it in the page cache
 * instead of seeking back to it. @return where the lane's reading ends. */
static uint64_t ask_rest(const struct heads *hj, int fd, size_t p, const struct ds_keypos32 *e,
			 const struct ds_keypos32 *next, uint64_t from)
{
	uint64_t at = place_where(hj->fp, e), size = ds_rec_size(hj->s->tree, ds_rec(hj->s->tree, hj->fp->order[p]));
	if (!hj->fp->head || !(hj->fp->state[p] & DS_FP_RUN) || hj->fp->state[p] & DS_FP_LONE || at == UINT64_MAX ||
	    from < at || from >= at + size || !passed_over(hj->fp, e, next, from, at + size))
		return from;
	posix_fadvise(fd, (off_t)(from - at), (off_t)(at + size - from), POSIX_FADV_WILLNEED);
	return at + size;
}

/* A file the sweep reads whole (direct) lying where the disk passes over
 * anyway, between the end of the lane's last read (end; UINT64_MAX when
 * none: the disk comes to it first) and the next head: asked for whole now,
 * so the sweep finds it in the page cache. @return where the lane's reading
 * ends. */
static uint64_t ask_direct(const struct heads *hj, size_t p, const struct ds_keypos32 *e, const struct ds_keypos32 *next,
			   uint64_t end, struct ds_dirfd *dc)
{
	uint64_t at = place_where(hj->fp, e), size = ds_rec_size(hj->s->tree, ds_rec(hj->s->tree, hj->fp->order[p]));
	uint64_t from = end == UINT64_MAX ? at : end;
	if (!(hj->fp->state[p] & DS_FP_RUN) || at == UINT64_MAX || from > at || !passed_over(hj->fp, e, next, from, at + size))
		return end;
	int fd = ds_open_scanned_in(hj->s, hj->fp->order[p], dc);
	if (fd < 0)
		return end;
	posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_WILLNEED);
	close(fd);
	return at + size;
}

/* Read the heads of lane k's files, in their order. */
static void read_lane(void *job, size_t k)
{
	struct heads *hj = job;
	struct ds_reading *s = hj->s;
	struct ds_first_pass *fp = hj->fp;
	unsigned char *buf = ds_big_alloc(fp->head ? DS_HDD_HEAD : DS_BLOCK);
	if (!buf) {
		atomic_store(&hj->rc, -ENOMEM);
		return;
	}
	struct ds_dirfd dc = DS_DIRFD_INIT;
	uint64_t end = UINT64_MAX; /* where the lane's last read ended on the disk, when known */
	for (size_t i = hj->lane[k].from; i < hj->lane[k].to; i++) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed)) {
			atomic_store(&hj->rc, DUPSCAN_E_CANCELED);
			break;
		}
		if (atomic_load_explicit(&hj->rc, memory_order_relaxed))
			break;
		uint32_t p = place_pos(&hj->pl[i]);
		if (ds_fp_twin(fp, p))
			continue; /* a twin is never read */
		struct ds_keypos32 e = hj->pl[i]; /* its place: the entry takes the hash once read */
		const struct ds_keypos32 *next = next_read(hj, k, i);
		if (ds_fp_direct(fp, p)) { /* its rank is its place in the sweep */
			end = fp->head ? ask_direct(hj, p, &e, next, end, &dc) : end;
			continue;
		}
		size_t len = ds_fp_read_len(fp, p, ds_rec_msize(s->tree, fp->order[p]));
		int fd = ds_open_scanned_in(s, fp->order[p], &dc);
		if (fd == -ENOMEM) {
			atomic_store(&hj->rc, -ENOMEM);
			break;
		}
		/* just the head: readahead past it would come after the next file's read, a seek back */
		if (fd >= 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		int err = fd < 0 ? fd : ds_read_rec(s, fp->order[p], fd, buf, len, 0);
		uint64_t at = place_where(fp, &e);
		end = at == UINT64_MAX ? UINT64_MAX : at + len;
		if (fd >= 0 && !err)
			end = ask_rest(hj, fd, p, &e, next, end);
		if (fd >= 0)
			close(fd);
		if (err)
			ds_fp_failed_at(fp, &hj->pl[i], p, err);
		else
			ds_fp_took_head(fp, &hj->pl[i], p, buf, len);
		ds_progress_settled(s->core, 1, len);
	}
	ds_dirfd_close(&dc);
	ds_big_free(buf, fp->head ? DS_HDD_HEAD : DS_BLOCK);
}

#define SSD_LANE 256u /* files a slice of a device that is not a spinning disk */

int ds_pass_read_heads(struct ds_reading *s, struct ds_first_pass *fp, struct ds_keypos32 *pl, size_t np)
{
	size_t nlanes = 0, cap = 0;
	struct lane *lane = NULL;
	int rc = 0;
	for (size_t i = 0, j; rc == 0 && i < np; i = j) {
		for (j = i + 1; j < np && place_disk(fp, &pl[j]) == place_disk(fp, &pl[i]);)
			j++;
		bool one = ds_one_stream(s, s->tree->devs.key[2 * (size_t)place_devi(fp, &pl[i])]) || s->core->opt.threads <= 1;
		for (size_t from = i, to; rc == 0 && from < j; from = to) {
			to = one || j - from <= SSD_LANE ? j : from + SSD_LANE;
			if (DS_GROW(lane, cap, nlanes + 1))
				rc = -ENOMEM;
			else
				lane[nlanes++] = (struct lane){ from, to, one };
		}
	}
	/* the disks' lanes first: each is long, and must start at once */
	if (rc == 0)
		rc = ds_sort(lane, nlanes, sizeof(*lane), cmp_lane, NULL);
	struct heads hj = { s, fp, pl, lane, 0 };
	int helpers = s->core->opt.threads < (int)nlanes ? s->core->opt.threads - 1 : (int)nlanes - 1;
	struct ds_pool *pool = ds_scan_pool(s->core);
	if (rc == 0 && !pool)
		rc = -ENOMEM;
	if (rc == 0) {
		ds_pool_phase(pool, NULL, NULL, 0, 0, helpers);
		ds_parallel_for(pool, nlanes, read_lane, &hj);
		ds_pool_end_phase(pool);
	}
	free(lane);
	return rc ? rc : atomic_load(&hj.rc);
}
