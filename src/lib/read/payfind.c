/* SPDX-License-Identifier: MIT */
/* payfind.c: --ignore-metadata's first step, after the walk: each candidate
 * opened as scanned and its structure parsed (media/), the payloads kept
 * beside the records, so that the size groups are of payload lengths. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"

/* Files parsed at once: their answers (about 530 bytes each) held until
 * kept in order. */
#define BATCH 1024

struct find_job {
	struct ds_reading *s;
	const uint32_t *order;
	struct dupscan_payload *out;
};

/* Parse order[k] open as fd (closed here; < 0: not opened, compared whole). */
static void parse_fd(struct find_job *fj, size_t k, int fd)
{
	fj->out[k].format = DUPSCAN_MEDIA_OTHER;
	if (fd < 0)
		return;
	if (!atomic_load_explicit(&fj->s->core->canceled, memory_order_relaxed) && dupscan_payload(fd, &fj->out[k]) != 0)
		fj->out[k].format = DUPSCAN_MEDIA_OTHER;
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
	parse_fd(fj, k, fd);
}

/* On a spinning disk, files in disk order on one thread (requests from
 * several come a little out of order, each a turn of the disk), the next
 * AHEAD files' heads asked for while one is parsed, so that the disk is
 * never idle; what readahead reads past the headers is what the disk passes
 * over anyway, and the first pass finds those heads in the page cache. */
#define AHEAD 16
/* A file up to THROUGH is asked for whole: the parse reads its start and
 * its end (a JPEG's EOI, an MP3's tags), and a gap between them costs a
 * part of a turn, about what the disk reads in that time (a 7200 rpm disk's
 * half turn, 4 ms, is 640 KB at 160 MB/s); a larger one, its head and its
 * last TAIL bytes. */
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
		parse_fd(fj, k, fds[k % AHEAD]);
		if (k + AHEAD < n)
			fds[k % AHEAD] = open_ahead(fj, k + AHEAD);
	}
}

/* A candidate's place on its disk as a key: its device's index, then its
 * first extent's sector (FIEMAP), or where there is none its inode number. */
struct place_job {
	struct ds_reading *s;
	struct ds_keypos *kp;
};

#define LOW47 ((UINT64_C(1) << 47) - 1)
static void place_one(void *job, size_t k)
{
	struct place_job *pj = job;
	uint32_t ri = (uint32_t)pj->kp[k].pos;
	const struct ds_rec *r = ds_rec(pj->s->tree, ri);
	uint64_t devi = (uint64_t)ds_rec_devi(pj->s->tree, r) << 48;
	uint64_t at = UINT64_C(1) << 47 | (ds_rec_ino(pj->s->tree, r) & LOW47); /* (after every extent) */
	int fd = ds_open_scanned(pj->s, ri);
	uint64_t physical;
	if (fd >= 0 && ds_first_extent(fd, &physical, NULL, NULL))
		at = (physical >> 9) & LOW47;
	if (fd >= 0)
		close(fd);
	pj->kp[k].key = devi | at;
}

/* On a spinning disk the files are parsed in the order the disk holds them,
 * their reads one sweep across it, not a seek a file: each placed first (an
 * open and its extent map, no data), in inode order (the inode tables read
 * in their order). @return the order to parse in (malloc'ed), or NULL. */
static uint32_t *disk_order(struct find_job *fj, struct ds_pool *pool, const uint32_t *order, size_t n)
{
	struct ds_keypos *kp = malloc((n ? n : 1) * sizeof(*kp));
	uint32_t *out = malloc((n ? n : 1) * sizeof(*out));
	if (!kp || !out) {
		free(kp);
		free(out);
		return NULL;
	}
	for (size_t k = 0; k < n; k++)
		kp[k] = (struct ds_keypos){ ds_rec_ino(fj->s->tree, ds_rec(fj->s->tree, order[k])), order[k] };
	ds_sort_by_key(kp, n);
	ds_parallel_for(pool, n, place_one, &(struct place_job){ fj->s, kp });
	ds_sort_by_key(kp, n);
	for (size_t k = 0; k < n; k++)
		out[k] = (uint32_t)kp[k].pos;
	free(kp);
	return out;
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
	uint32_t *placed = NULL;
	if (rc == 0 && s->io_mode == DUPSCAN_IO_HDD && !(order = placed = disk_order(&fj, pool, order, n)))
		rc = -ENOMEM;
	for (size_t at = 0; rc == 0 && at < n; at += BATCH) {
		size_t k = n - at < BATCH ? n - at : BATCH;
		fj.order = order + at;
		if (s->io_mode == DUPSCAN_IO_HDD)
			find_in_order(&fj, k);
		else
			ds_parallel_for(pool, k, find_one, &fj);
		for (size_t i = 0; rc == 0 && i < k; i++)
			rc = ds_payloads_add(s->tree, order[at + i], &fj.out[i]);
		if (rc == 0 && atomic_load(&s->core->canceled))
			rc = DUPSCAN_E_CANCELED;
	}
	if (pool)
		ds_pool_end_phase(pool);
	free(placed);
	free(fj.out);
	return rc;
}
