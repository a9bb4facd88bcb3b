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

static void find_one(void *job, size_t k)
{
	struct find_job *fj = job;
	fj->out[k].format = DUPSCAN_MEDIA_OTHER;
	if (atomic_load_explicit(&fj->s->core->canceled, memory_order_relaxed))
		return;
	int fd = ds_open_scanned(fj->s, fj->order[k]);
	if (fd < 0)
		return;
	/* the parse reads headers, a few bytes here and there: the kernel's
	 * readahead would read on into the picture (50 KB a photo cold, 30
	 * without) */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (dupscan_payload(fd, &fj->out[k]) != 0)
		fj->out[k].format = DUPSCAN_MEDIA_OTHER;
	close(fd);
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
	for (size_t at = 0; rc == 0 && at < n; at += BATCH) {
		size_t k = n - at < BATCH ? n - at : BATCH;
		fj.order = order + at;
		ds_parallel_for(pool, k, find_one, &fj);
		for (size_t i = 0; rc == 0 && i < k; i++)
			rc = ds_payloads_add(s->tree, order[at + i], &fj.out[i]);
		if (rc == 0 && atomic_load(&s->core->canceled))
			rc = DUPSCAN_E_CANCELED;
	}
	if (pool)
		ds_pool_end_phase(pool);
	free(fj.out);
	return rc;
}
