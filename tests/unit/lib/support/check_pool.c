/* SPDX-License-Identifier: MIT */
/* check_pool.c: the pool of ordered jobs: every job runs once, and has run
 * when the owner obtains it, whatever order it is obtained in; helpers stay
 * within the look-ahead budget; slices of a split loop all run. Matching on
 * it: whatever the thread count and however long each group takes, results
 * are committed in group order; a group that ran to the end settles its
 * records; a cancel commits nothing more. */
#define _GNU_SOURCE /* S_IFDIR */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "scan.h"
#include "testutil.h"
#include "match/result.h"

enum { GROUPS = 300, PER = 3 };

struct seen {
	char order[GROUPS * 8];
	size_t len;
};

static void collect(void *user, const char *path, int code)
{
	struct seen *s = user;
	(void)code;
	size_t n = strlen(path);
	if (s->len + n + 2 < sizeof(s->order)) {
		memcpy(s->order + s->len, path, n);
		s->len += n;
		s->order[s->len++] = ' ';
		s->order[s->len] = '\0';
	}
}

/* A scan with GROUPS * PER records (no files behind them) in one directory. */
static dupscan_scan *records(int threads, struct seen *seen)
{
	dupscan_scan *s = NULL;
	ck_assert_int_eq(dupscan_create(&s), 0);
	ck_assert_int_eq(dupscan_set_option(s, DUPSCAN_OPT_THREADS, threads), 0);
	s->core.opt.threads = threads; /* as dupscan_run() would settle it */
	dupscan_set_error_callback(s, collect, seen);
	struct stat st = { .st_mode = S_IFDIR };
	uint32_t d;
	ck_assert_int_eq(ds_add_dir(&s->tree, "root", 4, DS_NONE, 0, &st, &d), 0);
	st.st_mode = S_IFREG;
	for (int i = 0; i < GROUPS * PER; i++) {
		char name[16];
		int n = snprintf(name, sizeof(name), "f%d", i);
		st.st_ino = (ino_t)(i + 1);
		ck_assert_int_eq(ds_add_rec(&s->tree, name, (size_t)n, d, &st), 0);
	}
	return s;
}

/* Report the group's number; some groups take longer, so workers finish out of order. */
static void number_group(struct ds_ctx *c, const uint32_t *idx, size_t n)
{
	uint32_t g = idx[0] / PER;
	ck_assert_uint_eq(n, PER);
	if (g % 7 == 3) {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
	char name[16];
	snprintf(name, sizeof(name), "g%u", g);
	ds_fail_path(c, ds_rec(c->s->tree, idx[0]), name, -5);
	if (g == 250 && c->s->core->cb.on_progress) /* the cancel test's trigger */
		dupscan_cancel((dupscan_scan *)c->s->tree->scan);
}

static void no_progress(void *user, int phase, uint64_t done, uint64_t total)
{
	(void)user, (void)phase, (void)done, (void)total;
}

static void groups_of(uint32_t *idx, uint32_t *groups)
{
	for (uint32_t i = 0; i < GROUPS * PER; i++)
		idx[i] = i;
	for (uint32_t g = 0; g < GROUPS; g++) {
		groups[2 * g] = g * PER;
		groups[2 * g + 1] = PER;
	}
}

START_TEST(test_commit_order)
{
	char want[GROUPS * 8] = "";
	for (int g = 0; g < GROUPS; g++) {
		char part[16];
		snprintf(part, sizeof(part), "g%d ", g);
		strcat(want, part);
	}
	uint32_t idx[GROUPS * PER], groups[2 * GROUPS];
	groups_of(idx, groups);
	/* keys: groups run in another order (as on a disk), committed in theirs */
	uint64_t key[GROUPS];
	for (int g = 0; g < GROUPS; g++)
		key[g] = (uint64_t)((g * 37) % GROUPS);
	const int threads[] = { 1, 2, 4, 8, 1 };
	for (size_t t = 0; t < 5; t++) {
		struct seen seen = { .len = 0 };
		dupscan_scan *s = records(threads[t], &seen);
		ck_assert_int_eq(ds_run_groups(&s->match, number_group, idx, groups, GROUPS, GROUPS * PER, s->core.opt.threads,
					       t == 4 ? key : NULL), 0);
		ck_assert_msg(strcmp(seen.order, want) == 0, "%d threads%s: %.80s...", threads[t], t == 4 ? ", keys" : "",
			      seen.order);
		/* every group ran to the end: its records are settled */
		for (uint32_t i = 0; i < GROUPS * PER; i++)
			ck_assert(ds_rec(&s->tree, i)->flags & DS_F_SETTLED);
		dupscan_free(s);
	}
}
END_TEST

START_TEST(test_cancel_commits_a_prefix)
{
	uint32_t idx[GROUPS * PER], groups[2 * GROUPS];
	groups_of(idx, groups);
	uint64_t key[GROUPS];
	for (int g = 0; g < GROUPS; g++)
		key[g] = (uint64_t)(GROUPS - g); /* backwards: group 250 runs early */
	const int threads[] = { 1, 2, 4, 1 };
	for (size_t t = 0; t < 4; t++) {
		struct seen seen = { .len = 0 };
		dupscan_scan *s = records(threads[t], &seen);
		dupscan_set_progress_callback(s, no_progress, NULL); /* arms the cancel at group 250 */
		ck_assert_int_eq(ds_run_groups(&s->match, number_group, idx, groups, GROUPS, GROUPS * PER, s->core.opt.threads,
					       t == 3 ? key : NULL), DUPSCAN_E_CANCELED);
		/* what was committed is g0 ... gK in order: whole tasks of 64 groups,
		 * so K ends the task of group 250 at the latest; nothing after is settled */
		int next = 0;
		for (char *p = seen.order; *p; next++) {
			int g = -1;
			ck_assert_int_eq(sscanf(p, "g%d ", &g), 1);
			ck_assert_int_eq(g, next);
			p = strchr(p, ' ') + 1;
		}
		ck_assert_int_le(next, 256);
		for (uint32_t g = (uint32_t)next; g < GROUPS; g++)
			ck_assert(!(ds_rec(&s->tree, g * PER)->flags & DS_F_SETTLED));
		dupscan_free(s);
	}
}
END_TEST

enum { JOBS = 400, SLICES = 7 };

struct tjob {
	struct ds_job job;   /* first */
	int id;
	atomic_int runs;
	bool by_helper;
	atomic_int slices[SLICES];
};

struct tctx {
	pthread_t owner;
	size_t max_jobs;
	atomic_int helper_live;   /* run by a helper, not yet released */
	atomic_int helper_max;
};

static void slice_fn(void *arg, size_t sl)
{
	struct tjob *j = arg;
	atomic_fetch_add(&j->slices[sl], 1);
}

static void run_tjob(void *arg, struct ds_job *job)
{
	struct tctx *t = arg;
	struct tjob *j = (struct tjob *)job;
	j->by_helper = !pthread_equal(pthread_self(), t->owner);
	if (j->by_helper) {
		int live = atomic_fetch_add(&t->helper_live, 1) + 1;
		int max = atomic_load(&t->helper_max);
		while (live > max && !atomic_compare_exchange_weak(&t->helper_max, &max, live))
			;
	}
	atomic_fetch_add(&j->runs, 1);
	if (j->id % 50 == 0) {
		struct timespec ts = { 0, 200000 }; /* some jobs take longer */
		nanosleep(&ts, NULL);
	}
	j->job.weight = 1;
}

/* Jobs queued in one order and obtained in another (the multiples of three
 * from the back, the others in order), on 0 to 4 helpers; each obtained job
 * splits a loop over the pool. */
START_TEST(test_jobs_once_in_budget)
{
	for (int helpers = 0; helpers <= 4; helpers++) {
		struct tjob *jobs = calloc(JOBS, sizeof(*jobs));
		ck_assert_ptr_nonnull(jobs);
		struct tctx t = { pthread_self(), 5, 0, 0 };
		struct ds_pool *p = ds_pool_start(helpers, run_tjob, &t, t.max_jobs, SIZE_MAX);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_le(ds_pool_helpers(p), helpers);
		for (int i = 0; i < JOBS; i++) {
			jobs[i].id = i;
			ck_assert_int_eq(ds_pool_queue(p, &jobs[i].job), 0);
		}
		for (int k = 0; k < JOBS; k++) {
			int i = k % 3 == 0 ? JOBS - 1 - k : k;
			ds_pool_obtain(p, &jobs[i].job);
			ck_assert_int_eq(atomic_load(&jobs[i].runs), 1);
			ds_parallel_for(p, SLICES, slice_fn, &jobs[i]);
			if (jobs[i].by_helper)
				atomic_fetch_sub(&t.helper_live, 1);
			ds_pool_release(p, &jobs[i].job);
		}
		ds_pool_stop(p);
		for (int i = 0; i < JOBS; i++) {
			ck_assert_int_eq(atomic_load(&jobs[i].runs), 1);
			for (int sl = 0; sl < SLICES; sl++)
				ck_assert_int_eq(atomic_load(&jobs[i].slices[sl]), 1);
		}
		ck_assert_int_le(atomic_load(&t.helper_max), (int)t.max_jobs);
		if (helpers == 0)
			ck_assert_int_eq(atomic_load(&t.helper_max), 0);
		free(jobs);
	}
}
END_TEST

static void noop_slice(void *arg, size_t sl)
{
	(void)arg;
	(void)sl;
}

/* Helpers are started as work waits for them, not with the pool: none for
 * nothing, one for a loop of two slices (the owner takes the other), at most
 * the phase's number for many jobs; every job still runs once. */
START_TEST(test_helpers_started_for_work)
{
	struct ds_pool *p = ds_pool_start(6, run_tjob, NULL, 0, 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(ds_pool_started(p), 0);
	ds_parallel_for(p, 2, noop_slice, NULL);
	ck_assert_int_eq(ds_pool_started(p), DUPSCAN_THREADS ? 1 : 0);
	struct tctx t = { .owner = pthread_self(), .max_jobs = 8 };
	static struct tjob jobs[40];
	memset(jobs, 0, sizeof(jobs));
	ds_pool_phase(p, run_tjob, &t, 8, SIZE_MAX, 3);
	for (int i = 0; i < 40; i++) {
		jobs[i].id = i + 1;
		ck_assert_int_eq(ds_pool_queue(p, &jobs[i].job), 0);
	}
	for (int i = 0; i < 40; i++) {
		ds_pool_obtain(p, &jobs[i].job);
		ds_pool_release(p, &jobs[i].job);
	}
	ds_pool_end_phase(p);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(atomic_load(&jobs[i].runs), 1);
	ck_assert_int_le(ds_pool_started(p), 3);
	ds_pool_stop(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("ds_pool");
	tcase_add_test(tc, test_jobs_once_in_budget);
	suite_add_tcase(s, tc);
	tc = tcase_create("ds_run_groups");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_commit_order);
	tcase_add_test(tc, test_cancel_commits_a_prefix);
	tcase_add_test(tc, test_helpers_started_for_work);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
