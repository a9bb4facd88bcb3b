/* SPDX-License-Identifier: MIT */
/* pool.c: match size groups on a pool of threads (when built with them) and
 * commit their results in group order, in the caller's thread, so the sets,
 * reports and callbacks are the same whatever the thread count. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#if DUPSCAN_THREADS
#include <pthread.h>
#endif

/* Groups are matched and committed in tasks of consecutive groups, so the many
 * small groups of a source tree do not each cost a handoff between threads.
 * Task bounds depend only on the groups, never on the thread count. */
#define TASK_FILES 512
#define TASK_GROUPS 64

static size_t make_tasks(const uint32_t *groups, size_t ngroups, size_t *tasks)
{
	size_t n = 0, files = 0, count = 0;
	for (size_t g = 0; g < ngroups; g++) {
		if (count == 0)
			tasks[n++] = g;
		files += groups[2 * g + 1];
		count++;
		if (files >= TASK_FILES || count >= TASK_GROUPS)
			files = count = 0;
	}
	tasks[n] = ngroups;
	return n;
}

static void run_task(struct ds_ctx *c, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups, size_t first,
		     size_t end)
{
	for (size_t g = first; g < end && c->res->rc == 0; g++) {
		fn(c, idx + groups[2 * g], groups[2 * g + 1]);
		/* matched to the end, not cut short by a cancel: its files that
		 * joined no class are shown unique */
		if (c->res->rc == 0 && ds_result_settled(c->res, idx + groups[2 * g], groups[2 * g + 1]) != 0)
			c->res->rc = -ENOMEM;
	}
}

static int run_serial(dupscan_scan *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups,
		      const size_t *tasks, size_t ntasks, uint64_t total)
{
	struct ds_result res = { 0 };
	struct ds_ctx c = { s, &res, NULL };
	uint64_t done = 0;
	int rc = 0;
	for (size_t t = 0; t < ntasks && rc == 0; t++) {
		if (atomic_load(&s->canceled)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		ds_result_clear(&res);
		run_task(&c, fn, idx, groups, tasks[t], tasks[t + 1]);
		int crc = ds_result_commit(s, &res, &done, total);
		rc = res.rc ? res.rc : crc;
	}
	ds_result_free(&res);
	return rc;
}

#if DUPSCAN_THREADS

/* A loop that its owner split into slices: idle workers help with it. */
struct ds_assist {
	void (*fn)(void *job, size_t slice);
	void *job;
	size_t nslices;
	size_t next;            /* next slice to take */
	size_t done;            /* slices finished */
	struct ds_assist *link;
};

struct ds_pool {
	dupscan_scan *s;
	ds_group_fn *fn;
	const uint32_t *idx, *groups;
	const size_t *tasks;
	size_t ntasks;
	pthread_mutex_t mu;
	pthread_cond_t done_cv, room_cv;
	size_t next;          /* next task a worker takes */
	size_t committed;     /* tasks committed so far */
	size_t window;        /* tasks matched ahead of the commit at most: bounds memory */
	size_t running;       /* tasks being matched: they may still ask for help */
	struct ds_assist *help;
	struct ds_result *slots;
	bool *ready;
	bool stop;
};

static struct ds_assist *find_help(const struct ds_pool *p)
{
	for (struct ds_assist *a = p->help; a; a = a->link)
		if (a->next < a->nslices)
			return a;
	return NULL;
}

/* Take one slice of a (mutex held; released while it runs). */
static void help_once(struct ds_pool *p, struct ds_assist *a)
{
	size_t i = a->next++;
	pthread_mutex_unlock(&p->mu);
	a->fn(a->job, i);
	pthread_mutex_lock(&p->mu);
	if (++a->done == a->nslices)
		pthread_cond_broadcast(&p->done_cv);
}

static void *worker(void *arg)
{
	struct ds_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		/* help first: the group that asked holds up every commit after it */
		struct ds_assist *a = find_help(p);
		if (a) {
			help_once(p, a);
			continue;
		}
		if (p->stop)
			break;
		if (p->next >= p->ntasks) {
			if (p->running == 0)
				break;
			pthread_cond_wait(&p->room_cv, &p->mu);
			continue;
		}
		if (p->next >= p->committed + p->window) {
			pthread_cond_wait(&p->room_cv, &p->mu);
			continue;
		}
		size_t g = p->next++;
		struct ds_result *slot = &p->slots[g % p->window];
		p->running++;
		pthread_mutex_unlock(&p->mu);

		struct ds_ctx c = { p->s, slot, p };
		ds_result_clear(slot);
		run_task(&c, p->fn, p->idx, p->groups, p->tasks[g], p->tasks[g + 1]);

		pthread_mutex_lock(&p->mu);
		p->running--;
		p->ready[g % p->window] = true;
		pthread_cond_broadcast(&p->done_cv);
		/* idle workers wait for the last running task before they leave */
		pthread_cond_broadcast(&p->room_cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void ds_parallel_for(struct ds_ctx *c, size_t nslices, void (*fn)(void *job, size_t slice), void *job)
{
	struct ds_pool *p = c->pool;
	if (!p || nslices < 2) {
		for (size_t i = 0; i < nslices; i++)
			fn(job, i);
		return;
	}
	struct ds_assist a = { fn, job, nslices, 0, 0, NULL };
	pthread_mutex_lock(&p->mu);
	a.link = p->help;
	p->help = &a;
	pthread_cond_broadcast(&p->room_cv);
	while (a.next < a.nslices)
		help_once(p, &a);
	struct ds_assist **pp = &p->help;
	while (*pp != &a)
		pp = &(*pp)->link;
	*pp = a.link;
	/* helpers still running a slice hold a pointer to a */
	while (a.done < a.nslices)
		pthread_cond_wait(&p->done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

static int run_threads(dupscan_scan *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups,
		       const size_t *tasks, size_t ntasks, uint64_t total)
{
	int nthreads = s->threads;
	size_t ngroups = ntasks;
	struct ds_pool p = { .s = s, .fn = fn, .idx = idx, .groups = groups, .tasks = tasks, .ntasks = ntasks };
	p.window = (size_t)nthreads * 4;
	p.slots = calloc(p.window, sizeof(*p.slots));
	p.ready = calloc(p.window, sizeof(*p.ready));
	pthread_t *tids = calloc((size_t)nthreads, sizeof(*tids));
	int started = 0, rc = 0;
	if (!p.slots || !p.ready || !tids) {
		rc = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.done_cv, NULL);
	pthread_cond_init(&p.room_cv, NULL);
	for (; started < nthreads; started++)
		if (pthread_create(&tids[started], NULL, worker, &p) != 0)
			break;
	if (started == 0) {
		rc = run_serial(s, fn, idx, groups, tasks, ntasks, total);
		goto destroy;
	}
	uint64_t done = 0;
	for (size_t g = 0; g < ngroups; g++) {
		struct ds_result *slot = &p.slots[g % p.window];
		/* a cancel commits nothing more, however far the workers got */
		if (atomic_load(&s->canceled)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		pthread_mutex_lock(&p.mu);
		while (!p.ready[g % p.window])
			pthread_cond_wait(&p.done_cv, &p.mu);
		pthread_mutex_unlock(&p.mu);
		/* committing touches the index and calls back: one thread, in order */
		int crc = ds_result_commit(s, slot, &done, total);
		rc = slot->rc ? slot->rc : crc;
		pthread_mutex_lock(&p.mu);
		p.ready[g % p.window] = false;
		p.committed = g + 1;
		if (rc)
			p.stop = true;
		pthread_cond_broadcast(&p.room_cv);
		pthread_mutex_unlock(&p.mu);
		if (rc)
			break;
	}
	pthread_mutex_lock(&p.mu);
	p.stop = true;
	pthread_cond_broadcast(&p.room_cv);
	pthread_mutex_unlock(&p.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
destroy:
	pthread_cond_destroy(&p.room_cv);
	pthread_cond_destroy(&p.done_cv);
	pthread_mutex_destroy(&p.mu);
out:
	if (p.slots)
		for (size_t i = 0; i < p.window; i++)
			ds_result_free(&p.slots[i]);
	free(p.slots);
	free(p.ready);
	free(tids);
	return rc;
}

#else

void ds_parallel_for(struct ds_ctx *c, size_t nslices, void (*fn)(void *job, size_t slice), void *job)
{
	(void)c;
	for (size_t i = 0; i < nslices; i++)
		fn(job, i);
}

#endif /* DUPSCAN_THREADS */

int ds_run_groups(dupscan_scan *s, ds_group_fn *fn, const uint32_t *idx, const uint32_t *groups, size_t ngroups,
		  uint64_t total)
{
	size_t *tasks = malloc((ngroups + 1) * sizeof(*tasks));
	if (!tasks)
		return -ENOMEM;
	size_t ntasks = make_tasks(groups, ngroups, tasks);
	int rc;
#if DUPSCAN_THREADS
	if (s->threads > 1 && ntasks > 1)
		rc = run_threads(s, fn, idx, groups, tasks, ntasks, total);
	else
#endif
		rc = run_serial(s, fn, idx, groups, tasks, ntasks, total);
	free(tasks);
	/* a cancel that came during the last commit still tells the caller */
	if (rc == 0 && atomic_load(&s->canceled))
		rc = DUPSCAN_E_CANCELED;
	return rc;
}
