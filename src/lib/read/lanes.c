/* SPDX-License-Identifier: MIT */
/* lanes.c: the sweep's phases read every disk at once, each in its own
 * order: one lane a device, each on its own thread while threads last, each
 * with its own hash state and read buffer. A disk's lane reads its files in
 * the order the first pass found them on it, so no disk waits for another's
 * seeks, and a scan of two disks takes as long as the slower one. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "sweep.h"
#include "read/read.h"

/* A phase's work cut into lanes: items from[k] to from[k+1] are lane
 * lane[k]'s, each run by fn in order. */
struct lanes {
	struct sweep_run *rn;
	size_t n;
	const size_t *from;
	const uint32_t *lane;
	void (*fn)(struct reader *rd, size_t i, void *arg);
	void *arg;
};

static bool stopped(struct sweep_run *rn)
{
	if (atomic_load_explicit(&rn->s->core->canceled, memory_order_relaxed)) {
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

int ds_lanes_run(struct sweep_run *rn, size_t n, uint32_t (*lane_of)(const void *arg, size_t i),
		    void (*fn)(struct reader *rd, size_t i, void *arg), void *arg)
{
	size_t *from = malloc((rn->nlanes + 1) * sizeof(*from));
	uint32_t *lane = malloc((rn->nlanes + 1) * sizeof(*lane));
	struct ds_pool *pool = ds_scan_pool(rn->s->core);
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
	int threads = rn->s->core->opt.threads;
	ds_pool_phase(pool, NULL, NULL, 0, 0, threads < (int)nl ? threads - 1 : (int)nl - 1);
	ds_parallel_for(pool, nl, run_lane, &ln);
	ds_pool_end_phase(pool);
	free(lane);
	free(from);
	return atomic_load(&rn->rc);
}

unsigned char *ds_lane_chunk(struct reader *rd)
{
	if (!rd->chunk && !(rd->chunk = ds_big_alloc(rd->rn->step)))
		atomic_store(&rd->rn->rc, -ENOMEM);
	return rd->chunk;
}


int ds_lanes_make(struct sweep_run *rn, const uint32_t *groups, size_t ngroups)
{
	const struct ds_first_pass *fp = rn->fp;
	uint64_t *devs = NULL;
	size_t cap = 0;
	if (!(rn->lane = calloc(fp->n ? fp->n : 1, sizeof(*rn->lane))))
		return -ENOMEM;
	for (size_t g = 0; g < ngroups; g++) {
		for (uint32_t p = groups[2 * g]; p < groups[2 * g] + groups[2 * g + 1]; p++) {
			uint64_t dev = ds_disk(rn->s, ds_rec_dev(rn->s->tree, ds_rec(rn->s->tree, fp->order[p])));
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
		rn->rd[l].ahead_slot = DS_NONE;
		if (!(rn->rd[l].h = ds_hashes_new(1)))
			return -ENOMEM;
	}
	return rn->rd ? 0 : -ENOMEM;
}

void ds_lanes_free(struct sweep_run *rn)
{
	for (size_t l = 0; rn->rd && l < rn->nlanes; l++) {
		if (rn->rd[l].ahead_slot != DS_NONE)
			close(rn->rd[l].ahead_fd); /* a canceled lane's */
		ds_big_free(rn->rd[l].chunk, rn->step);
		ds_hashes_free(rn->rd[l].h);
	}
	free(rn->rd);
	free(rn->lane);
}
