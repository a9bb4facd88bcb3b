/* SPDX-License-Identifier: MIT */
/* payfind.c: --ignore-metadata's first step, after the walk: each candidate
 * opened as scanned and its structure parsed (media/), the payloads kept
 * beside the records, so that the size groups are of payload lengths. On
 * an SSD the files are parsed in parallel; on a spinning disk those whose
 * bytes are in the page cache too, the others in the disk's order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"
#include "media/media.h"

/* Files parsed at once: their answers (about 530 bytes each) held until
 * kept in order. */
#define BATCH 1024

struct find_job {
	struct ds_reading *s;
	const uint32_t *order;
	struct dupscan_payload *out;
};

/* The payload of record ri open as fd (closed here; < 0: not opened) into
 * *p: DUPSCAN_MEDIA_OTHER when it cannot be told (compared whole: its read
 * reports what failed). */
static void parse_fd(struct ds_reading *s, uint32_t ri, int fd, struct dupscan_payload *p)
{
	p->format = DUPSCAN_MEDIA_OTHER;
	if (fd < 0)
		return;
	/* (its size as scanned: the open checked it is still that file) */
	uint64_t size = ds_rec_size(s->tree, ds_rec(s->tree, ri));
	if (!atomic_load_explicit(&s->core->canceled, memory_order_relaxed) && ds_media_payload_fd(fd, size, p) != 0)
		p->format = DUPSCAN_MEDIA_OTHER;
	close(fd);
}

/* On an SSD, files in parallel: the parse reads headers, a few bytes here
 * and there, and the kernel's readahead would read on into the picture (50
 * KB a photo cold, 30 without). */
static void find_one(void *job, size_t k)
{
	struct find_job *fj = job;
	int fd = ds_open_scanned(fj->s, fj->order[k]);
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	parse_fd(fj->s, fj->order[k], fd, &fj->out[k]);
}

/* On a spinning disk, files in disk order on one thread (requests from
 * several come a little out of order, each a turn of the disk), the next
 * AHEAD files asked for while one is parsed, so that the disk is never idle:
 * a file up to THROUGH whole, since the parse reads its start and its end
 * (a JPEG's EOI, an MP3's tags) and the gap between them would cost a part
 * of a turn, about what the disk reads meanwhile (a 7200 rpm disk's half
 * turn, 4 ms, is 640 KB at 160 MB/s); a larger one, its head and its last
 * TAIL bytes. What is read past the headers is what the disk passes over
 * anyway, and the first pass finds those heads in the page cache. */
#define AHEAD 16
#define THROUGH (1u << 20)
#define TAIL (64u << 10)
static int open_ahead(struct find_job *fj, size_t k)
{
	int fd = ds_open_scanned(fj->s, fj->order[k]);
	uint64_t size = ds_rec_size(fj->s->tree, ds_rec(fj->s->tree, fj->order[k]));
	if (fd >= 0 && size <= THROUGH) {
		posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_WILLNEED);
	} else if (fd >= 0) {
		posix_fadvise(fd, 0, DS_HDD_HEAD, POSIX_FADV_WILLNEED);
		posix_fadvise(fd, (off_t)(size - TAIL), TAIL, POSIX_FADV_WILLNEED);
	}
	return fd;
}

static void find_in_order(struct find_job *fj, size_t n)
{
	int fds[AHEAD];
	for (size_t k = 0; k < n && k < AHEAD; k++)
		fds[k] = open_ahead(fj, k);
	for (size_t k = 0; k < n; k++) {
		parse_fd(fj->s, fj->order[k], fds[k % AHEAD], &fj->out[k]);
		if (k + AHEAD < n)
			fds[k % AHEAD] = open_ahead(fj, k + AHEAD);
	}
}

/* The parse's bytes in the page cache: no seek, parsed where it is met. */
static bool parse_cached(int fd, uint64_t size)
{
	if (size <= THROUGH)
		return ds_all_cached(fd, 0, size);
	return ds_all_cached(fd, 0, DS_HDD_HEAD) && ds_all_cached(fd, size - TAIL, TAIL);
}

/* Placing the candidates of a spinning disk: kp[k] is (its place, its
 * record); a file found cached is parsed at once, its payload kept under
 * the lock, and takes the place PARSED. */
struct place_job {
	struct ds_reading *s;
	struct ds_keypos *kp;
	struct ds_monitor *lock;
	_Atomic int rc;
};
#define PARSED 0
#define LOW46 ((UINT64_C(1) << 46) - 1)

/* Its place: its device's index, then its first extent's sector (FIEMAP),
 * or where there is none its inode number, after them. */
static uint64_t place_of(const struct ds_tree *t, uint32_t ri, int fd)
{
	const struct ds_rec *r = ds_rec(t, ri);
	uint64_t devi = (uint64_t)ds_rec_devi(t, r) << 48, physical;
	if (fd >= 0 && ds_first_extent(fd, &physical, NULL, NULL))
		return devi | UINT64_C(1) << 46 | ((physical >> 9) & LOW46);
	return devi | UINT64_C(1) << 47 | (ds_rec_ino(t, r) & LOW46);
}

static void place_one(void *job, size_t k)
{
	struct place_job *pj = job;
	uint32_t ri = (uint32_t)pj->kp[k].pos;
	int fd = ds_open_scanned(pj->s, ri);
	if (fd < 0 || !parse_cached(fd, ds_rec_size(pj->s->tree, ds_rec(pj->s->tree, ri)))) {
		pj->kp[k].key = place_of(pj->s->tree, ri, fd);
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dupscan_payload p;
	parse_fd(pj->s, ri, fd, &p);
	pj->kp[k].key = PARSED;
	if (p.format == DUPSCAN_MEDIA_OTHER)
		return;
	ds_monitor_enter(pj->lock);
	int rc = ds_payloads_add(pj->s->tree, ri, &p);
	ds_monitor_leave(pj->lock);
	if (rc)
		atomic_store(&pj->rc, rc);
}

/* On a spinning disk, the candidates placed (an open and its extent map or
 * the page cache asked, no data read; in inode order, the inode tables read
 * in their order), the cached ones parsed meanwhile: the others into *left
 * (malloc'ed) in the order the disk holds them, *nleft of them, their reads
 * one sweep across it. @return 0 or -ENOMEM. */
static int place_all(struct ds_reading *s, struct ds_pool *pool, const uint32_t *order, size_t n, uint32_t **left,
		     size_t *nleft)
{
	struct place_job pj = { s, malloc((n ? n : 1) * sizeof(*pj.kp)), ds_monitor_new(), 0 };
	*left = malloc((n ? n : 1) * sizeof(**left));
	int rc = pj.kp && pj.lock && *left ? 0 : -ENOMEM;
	for (size_t k = 0; rc == 0 && k < n; k++)
		pj.kp[k] = (struct ds_keypos){ ds_rec_ino(s->tree, ds_rec(s->tree, order[k])), order[k] };
	if (rc == 0) {
		ds_sort_by_key(pj.kp, n);
		ds_parallel_for(pool, n, place_one, &pj);
		ds_sort_by_key(pj.kp, n);
		rc = atomic_load(&pj.rc);
	}
	*nleft = 0;
	for (size_t k = 0; rc == 0 && k < n; k++)
		if (pj.kp[k].key != PARSED)
			(*left)[(*nleft)++] = (uint32_t)pj.kp[k].pos;
	free(pj.kp);
	ds_monitor_free(pj.lock);
	return rc;
}

int ds_payloads_find(struct ds_reading *s, const uint32_t *order, size_t n)
{
	int rc = ds_payloads_start(s->tree);
	struct find_job fj = { s, NULL, malloc(BATCH * sizeof(*fj.out)) };
	if (rc == 0 && !fj.out)
		rc = -ENOMEM;
	struct ds_pool *pool = rc == 0 ? ds_scan_pool(s->core) : NULL;
	if (rc == 0 && !pool)
		rc = -ENOMEM;
	if (rc == 0)
		ds_pool_phase(pool, NULL, NULL, 0, 0, ds_readers(s) - 1);
	bool hdd = s->io_mode == DUPSCAN_IO_HDD;
	uint32_t *left = NULL;
	if (rc == 0 && hdd)
		rc = place_all(s, pool, order, n, &left, &n);
	for (size_t at = 0; rc == 0 && at < n; at += BATCH) {
		size_t k = n - at < BATCH ? n - at : BATCH;
		fj.order = (hdd ? left : order) + at;
		if (hdd)
			find_in_order(&fj, k);
		else
			ds_parallel_for(pool, k, find_one, &fj);
		for (size_t i = 0; rc == 0 && i < k; i++)
			rc = ds_payloads_add(s->tree, fj.order[i], &fj.out[i]);
		if (rc == 0 && atomic_load(&s->core->canceled))
			rc = DUPSCAN_E_CANCELED;
	}
	if (pool)
		ds_pool_end_phase(pool);
	free(left);
	free(fj.out);
	return rc;
}
