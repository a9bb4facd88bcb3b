/* SPDX-License-Identifier: MIT */
/* groups.c: matching's scheduler: size groups matched in tasks on the
 * pool's threads (or in the order of a key), their results committed in
 * group order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "match/result.h"
#include "read/read.h"

/* Groups are matched and committed in tasks of consecutive groups, so the many
 * small groups of a source tree do not each cost a handoff between threads.
 * Task bounds depend only on the groups, never on the thread count. */
#define TASK_FILES 512
#define TASK_GROUPS 64
/* On a network filesystem a file's open and first read wait round trips
 * (milliseconds, not the microseconds of a handoff): small tasks, so that
 * a tree of small groups is read by every thread NET mode runs */
#define NET_TASK_FILES 8
#define NET_TASK_GROUPS 2
/* tasks matched ahead of the commit per thread, at most: bounds memory */
#define TASKS_AHEAD 4

struct task {
	struct ds_job job;      /* first: a job is its task */
	size_t first, end;      /* groups [first, end) */
	struct ds_result res;
};

struct groups_run {
	struct ds_match *s;
	ds_group_fn *fn;
	const uint32_t *idx, *groups;
	struct ds_pool *pool;
};

/* Cut groups into tasks of at most most_files files or most_groups groups
 * (tasks NULL: only count them). @return how many. */
static size_t make_tasks(const uint32_t *groups, size_t ngroups, size_t most_files, size_t most_groups,
			 struct task *tasks)
{
	size_t n = 0, files = 0, count = 0;
	for (size_t g = 0; g < ngroups; g++) {
		if (count == 0) {
			if (tasks && n > 0)
				tasks[n - 1].end = g;
			if (tasks)
				tasks[n].first = g;
			n++;
		}
		files += groups[2 * g + 1];
		count++;
		if (files >= most_files || count >= most_groups)
			files = count = 0;
	}
	if (tasks && n > 0)
		tasks[n - 1].end = ngroups;
	return n;
}

static void run_task(void *arg, struct ds_job *job)
{
	struct groups_run *gr = arg;
	struct task *t = (struct task *)job;
	struct ds_ctx c = { gr->s, &t->res, gr->pool };
	for (size_t g = t->first; g < t->end && t->res.rc == 0; g++) {
		const uint32_t *idx = gr->idx + gr->groups[2 * g];
		size_t n = gr->groups[2 * g + 1];
		gr->fn(&c, idx, n);
		/* matched to the end, not cut short by a cancel: its files that
		 * joined no class are shown unique */
		if (t->res.rc == 0 && ds_result_settled(&t->res, idx, n) != 0)
			t->res.rc = -ENOMEM;
	}
}

static int cmp_by_key(void *ctx, const void *pa, const void *pb)
{
	const uint64_t *key = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (key[a] != key[b])
		return key[a] < key[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* One stream, groups read in the order of their keys (where their files lie
 * on the disk), committed in group order as soon as every group before them
 * is done: the same commits as in any other run. */
static int run_in_key_order(struct ds_match *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups,
			    size_t ngroups, uint64_t total, const uint64_t *key)
{
	struct task *tasks = calloc(ngroups ? ngroups : 1, sizeof(*tasks));
	uint32_t *order = malloc((ngroups ? ngroups : 1) * sizeof(*order));
	bool *ran = calloc(ngroups ? ngroups : 1, sizeof(*ran));
	struct groups_run gr = { s, fn, idx, groups, NULL };
	int rc = tasks && order && ran ? 0 : -ENOMEM;
	for (size_t g = 0; rc == 0 && g < ngroups; g++) {
		tasks[g].first = g;
		tasks[g].end = g + 1;
		order[g] = (uint32_t)g;
	}
	if (rc == 0)
		rc = ds_sort(order, ngroups, sizeof(*order), cmp_by_key, (void *)key);
	if (rc == 0 && !(gr.pool = ds_scan_pool(s->core)))
		rc = -ENOMEM;
	if (rc == 0)
		/* no job is queued: the helpers only read a comparison's other disks */
		ds_pool_phase(gr.pool, run_task, &gr, 1, SIZE_MAX, s->core->opt.threads - 1);
	uint64_t done = 0;
	size_t next = 0;
	for (size_t i = 0; rc == 0 && i < ngroups; i++) {
		if (atomic_load(&s->core->canceled)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		ds_pool_obtain(gr.pool, &tasks[order[i]].job);
		ran[order[i]] = true;
		for (; rc == 0 && next < ngroups && ran[next]; next++) {
			int crc = ds_result_commit(s, &tasks[next].res, &done, total);
			rc = tasks[next].res.rc ? tasks[next].res.rc : crc;
			ds_result_free(&tasks[next].res);
		}
	}
	if (gr.pool)
		ds_pool_end_phase(gr.pool);
	for (size_t g = 0; tasks && g < ngroups; g++)
		ds_result_free(&tasks[g].res);
	free(ran);
	free(order);
	free(tasks);
	if (rc == 0 && atomic_load(&s->core->canceled))
		rc = DUPSCAN_E_CANCELED;
	return rc;
}

int ds_run_groups(struct ds_match *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups, size_t ngroups,
		  uint64_t total, int threads, const uint64_t *key)
{
	if (key)
		return run_in_key_order(s, fn, idx, groups, ngroups, total, key);
	bool net = s->reading->io_mode == DUPSCAN_IO_NET;
	size_t most_files = net ? NET_TASK_FILES : TASK_FILES, most_groups = net ? NET_TASK_GROUPS : TASK_GROUPS;
	size_t ntasks = make_tasks(groups, ngroups, most_files, most_groups, NULL);
	struct task *tasks = calloc(ntasks ? ntasks : 1, sizeof(*tasks));
	if (!tasks)
		return -ENOMEM;
	make_tasks(groups, ngroups, most_files, most_groups, tasks);
	int helpers = ntasks > 1 ? threads - 1 : 0;
	struct groups_run gr = { s, fn, idx, groups, NULL };
	gr.pool = ds_scan_pool(s->core);
	if (!gr.pool) {
		free(tasks);
		return -ENOMEM;
	}
	ds_pool_phase(gr.pool, run_task, &gr, (size_t)threads * TASKS_AHEAD, SIZE_MAX, helpers);
	ds_pool_cap(gr.pool, ds_net_cap(s->reading));
	ds_netio_phase(s->reading->net);
	int rc = 0;
	/* the first tasks on top: helpers take them in group order */
	for (size_t t = ntasks; rc == 0 && t-- > 0;)
		rc = ds_pool_queue(gr.pool, &tasks[t].job);
	uint64_t done = 0;
	for (size_t t = 0; rc == 0 && t < ntasks; t++) {
		/* a cancel commits nothing more, however far the helpers got */
		if (atomic_load(&s->core->canceled)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		ds_pool_obtain(gr.pool, &tasks[t].job);
		/* committing touches the index and calls back: one thread, in order */
		int crc = ds_result_commit(s, &tasks[t].res, &done, total);
		rc = tasks[t].res.rc ? tasks[t].res.rc : crc;
		ds_result_free(&tasks[t].res);
		ds_pool_release(gr.pool, &tasks[t].job);
	}
	ds_pool_end_phase(gr.pool);
	for (size_t t = 0; t < ntasks; t++)
		ds_result_free(&tasks[t].res);
	free(tasks);
	/* a cancel that came during the last commit still tells the caller */
	if (rc == 0 && atomic_load(&s->core->canceled))
		rc = DUPSCAN_E_CANCELED;
	return rc;
}
