/* SPDX-License-Identifier: MIT */
/* pool.c: jobs run ahead of need on helper threads, taken in the owner's order.
 *
 * The owner queues jobs and later obtains each in an order of its own (the
 * walk: depth first; matching: group order). Helpers run queued jobs ahead of
 * that, the most recently queued first, while fewer than a budget of jobs (and
 * of what they hold) have run ahead and are not yet released. A job the owner
 * needs that no helper has started, it runs itself; while one it needs is
 * running elsewhere, it runs others. Whatever ran where, the owner sees the
 * results in its own order, so nothing seen from outside depends on the
 * thread count. Idle threads also take slices of a loop a running job splits
 * (ds_parallel_for). Matching size groups in order is built on it
 * (match/groups.c). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "support/support.h"

#if DUPSCAN_THREADS
#include <pthread.h>
#endif

enum { JOB_QUEUED = 0, JOB_RUNNING, JOB_DONE };

/* A loop that its owner split into slices: idle threads help with it. */
struct ds_assist {
	void (*fn)(void *job, size_t slice);
	void *job;
	size_t nslices;
	size_t next;            /* next slice to take */
	size_t done;            /* slices finished */
	struct ds_assist *link;
};

struct ds_pool {
	ds_job_fn *run;
	void *ctx;
	int nhelpers;            /* started so far */
	int most;                /* helpers it may start, each when work waits for it (start_helpers()) */
	int active;              /* helpers this phase lets run jobs ahead and take slices */
#if DUPSCAN_THREADS
	int running;             /* helpers running a job ahead now */
	int slicing;             /* helpers running a slice now */
	const _Atomic int *cap;  /* threads (owner included) this phase lets work now, or NULL: ds_pool_cap() */
	bool ending;             /* the owner waits for them: ds_pool_end_phase() */
	size_t max_jobs, max_weight;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct ds_job **todo;    /* queued jobs, the most recent on top */
	size_t ntodo, captodo;
	size_t outstanding;      /* jobs run ahead and not yet released */
	size_t held;             /* their weight */
	int idle;                /* helpers waiting: wake-ups only when someone sleeps */
	bool owner_waits;        /* the owner waits for a job or a slice */
	bool stop;
	struct ds_assist *help;
	pthread_t *tids;
#endif
};

struct ds_pool *ds_scan_pool(struct ds_core *s)
{
	/* room for NET mode's threads (each phase says how many run; the
	 * storage is not known yet when the run starts it) */
	int most = s->opt.threads > 1 && !s->opt.threads_given && s->opt.threads < DS_NET_MOST ? DS_NET_MOST
											     : s->opt.threads;
	if (!s->pool)
		s->pool = ds_pool_start(most - 1, NULL, NULL, 0, 0);
	return s->pool;
}

int ds_pool_helpers(const struct ds_pool *p)
{
	return p ? p->active : 0;
}

int ds_pool_started(struct ds_pool *p)
{
#if DUPSCAN_THREADS
	pthread_mutex_lock(&p->mu);
	int n = p->nhelpers;
	pthread_mutex_unlock(&p->mu);
	return n;
#else
	(void)p;
	return 0;
#endif
}

#if DUPSCAN_THREADS

static struct ds_assist *find_help(const struct ds_pool *p)
{
	for (struct ds_assist *a = p->help; a; a = a->link)
		if (a->next < a->nslices)
			return a;
	return NULL;
}

/* As many helpers busy (a job run ahead, a slice) as the phase lets work
 * (lock held). */
static bool helpers_busy(const struct ds_pool *p)
{
	int busy = p->running + p->slicing;
	return busy >= p->active || (p->cap && busy >= atomic_load_explicit(p->cap, memory_order_relaxed) - 1);
}

/* Take one slice of a (lock held; released while it runs). */
static void help_once(struct ds_pool *p, struct ds_assist *a, bool helper)
{
	size_t i = a->next++;
	p->slicing += helper;
	pthread_mutex_unlock(&p->mu);
	a->fn(a->job, i);
	pthread_mutex_lock(&p->mu);
	p->slicing -= helper;
	if (++a->done == a->nslices)
		pthread_cond_broadcast(&p->done_cv);
}

/* The most recent queued job (lock held), or NULL when none may be taken:
 * what has run ahead and is not released stays within the phase's budget
 * whoever runs it (what a job holds, a directory's descriptor, is bounded
 * so); a helper also waits while the phase's number of helpers run. */
static struct ds_job *take_queued(struct ds_pool *p, bool helper)
{
	while (p->ntodo > 0) {
		if (p->outstanding >= p->max_jobs || p->held >= p->max_weight || (helper && helpers_busy(p)))
			return NULL;
		struct ds_job *j = p->todo[--p->ntodo];
		if (j->state == JOB_QUEUED)
			return j;
	}
	return NULL;
}

/* Run j ahead of need (lock held on entry and exit). */
static void run_ahead(struct ds_pool *p, struct ds_job *j)
{
	j->state = JOB_RUNNING;
	j->ahead = true;
	p->outstanding++;
	p->running++;
	ds_job_fn *run = p->run;
	void *ctx = p->ctx;
	pthread_mutex_unlock(&p->mu);
	run(ctx, j);
	pthread_mutex_lock(&p->mu);
	p->running--;
	p->held += j->weight;
	j->state = JOB_DONE;
	if (p->owner_waits || p->ending)
		pthread_cond_broadcast(&p->done_cv);
}

static void *helper(void *arg)
{
	struct ds_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		/* slices first: the job that split its loop holds up the owner;
		 * no more helpers busy than the phase lets (NET mode lowers it) */
		struct ds_assist *a = helpers_busy(p) ? NULL : find_help(p);
		struct ds_job *j = a ? NULL : take_queued(p, true);
		if (a) {
			help_once(p, a, true);
		} else if (j) {
			run_ahead(p, j);
		} else {
			p->idle++;
			pthread_cond_wait(&p->work_cv, &p->mu);
			p->idle--;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Helpers are started when there is work for them (lock held): while more
 * pieces of work wait than helpers are free (not running a job ahead), up
 * to the phase's number. A small tree never pays for threads (a stack, read
 * buffers) it has no work for. One that cannot be started is not asked for
 * again: fewer threads than asked for is still a pool; none, the owner alone. */
static void start_helpers(struct ds_pool *p, size_t waiting)
{
	while ((size_t)(p->nhelpers - p->running) < waiting &&
	       p->nhelpers < p->active && p->nhelpers < p->most) {
		if (pthread_create(&p->tids[p->nhelpers], NULL, helper, p) != 0)
			p->most = p->nhelpers;
		else
			p->nhelpers++;
	}
}

struct ds_pool *ds_pool_start(int helpers, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight)
{
	struct ds_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->run = run;
	p->ctx = ctx;
	p->max_jobs = max_jobs;
	p->max_weight = max_weight;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	pthread_cond_init(&p->done_cv, NULL);
	if (helpers > 0 && (p->tids = calloc((size_t)helpers, sizeof(*p->tids))))
		p->most = helpers; /* else the owner runs everything */
	p->active = p->most;
	return p;
}

void ds_pool_phase(struct ds_pool *p, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight, int helpers)
{
	pthread_mutex_lock(&p->mu);
	p->run = run;
	p->ctx = ctx;
	p->max_jobs = max_jobs;
	p->max_weight = max_weight;
	p->active = helpers < 0 ? 0 : helpers < p->most ? helpers : p->most;
	pthread_mutex_unlock(&p->mu);
}

void ds_pool_cap(struct ds_pool *p, const _Atomic int *cap)
{
	pthread_mutex_lock(&p->mu);
	p->cap = cap;
	pthread_mutex_unlock(&p->mu);
}

void ds_pool_end_phase(struct ds_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->cap = NULL;
	/* jobs queued and not started stay unrun; those running ahead finish */
	p->ntodo = 0;
	p->active = 0;
	p->ending = true;
	while (p->running > 0)
		pthread_cond_wait(&p->done_cv, &p->mu);
	p->ending = false;
	p->outstanding = p->held = 0;
	pthread_mutex_unlock(&p->mu);
}

void ds_pool_stop(struct ds_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nhelpers; i++)
		pthread_join(p->tids[i], NULL);
	pthread_cond_destroy(&p->done_cv);
	pthread_cond_destroy(&p->work_cv);
	pthread_mutex_destroy(&p->mu);
	free(p->todo);
	free(p->tids);
	free(p);
}

int ds_pool_queue(struct ds_pool *p, struct ds_job *j)
{
	if (p->active == 0)
		return 0; /* nobody to run it ahead */
	pthread_mutex_lock(&p->mu);
	int rc = DS_GROW(p->todo, p->captodo, p->ntodo + 1);
	if (rc == 0) {
		p->todo[p->ntodo++] = j;
		if (p->idle)
			pthread_cond_signal(&p->work_cv);
		start_helpers(p, p->ntodo);
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void ds_pool_obtain(struct ds_pool *p, struct ds_job *j)
{
	if (p->active == 0) {
		if (j->state == JOB_QUEUED)
			p->run(p->ctx, j);
		j->state = JOB_DONE;
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (j->state == JOB_QUEUED) {
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->mu);
		p->run(p->ctx, j);
		pthread_mutex_lock(&p->mu);
		j->state = JOB_DONE;
	}
	while (j->state != JOB_DONE) {
		struct ds_assist *a = find_help(p);
		struct ds_job *other = a ? NULL : take_queued(p, false);
		if (a) {
			help_once(p, a, false);
		} else if (other) {
			run_ahead(p, other);
		} else {
			p->owner_waits = true;
			pthread_cond_wait(&p->done_cv, &p->mu);
			p->owner_waits = false;
		}
	}
	pthread_mutex_unlock(&p->mu);
}

void ds_pool_drop(struct ds_pool *p, struct ds_job *j)
{
	pthread_mutex_lock(&p->mu);
	if (j->state == JOB_QUEUED)
		j->state = JOB_DONE; /* left in the queue: take_queued() passes it by */
	while (j->state != JOB_DONE) {
		p->owner_waits = true;
		pthread_cond_wait(&p->done_cv, &p->mu);
		p->owner_waits = false;
	}
	pthread_mutex_unlock(&p->mu);
	ds_pool_release(p, j);
}

void ds_pool_release(struct ds_pool *p, struct ds_job *j)
{
	/* j->ahead was written under the lock before obtain saw it done */
	if (!j->ahead)
		return;
	pthread_mutex_lock(&p->mu);
	p->outstanding--;
	p->held -= j->weight;
	j->ahead = false;
	if (p->idle)
		pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
}

void ds_parallel_for(struct ds_pool *p, size_t nslices, void (*fn)(void *job, size_t slice), void *job)
{
	if (!p || p->active == 0 || nslices < 2) {
		for (size_t i = 0; i < nslices; i++)
			fn(job, i);
		return;
	}
	struct ds_assist a = { fn, job, nslices, 0, 0, NULL };
	pthread_mutex_lock(&p->mu);
	a.link = p->help;
	p->help = &a;
	/* helpers for the slices the owner will not be taking itself */
	start_helpers(p, nslices - 1);
	pthread_cond_broadcast(&p->work_cv);
	if (p->owner_waits)
		pthread_cond_broadcast(&p->done_cv);
	while (a.next < a.nslices)
		help_once(p, &a, false);
	struct ds_assist **pp = &p->help;
	while (*pp != &a)
		pp = &(*pp)->link;
	*pp = a.link;
	/* helpers still running a slice hold a pointer to a */
	while (a.done < a.nslices)
		pthread_cond_wait(&p->done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

#else /* one thread: the owner runs every job when it obtains it */

struct ds_pool *ds_pool_start(int helpers, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight)
{
	(void)helpers;
	(void)max_jobs;
	(void)max_weight;
	struct ds_pool *p = calloc(1, sizeof(*p));
	if (p) {
		p->run = run;
		p->ctx = ctx;
	}
	return p;
}

void ds_pool_stop(struct ds_pool *p)
{
	free(p);
}

void ds_pool_cap(struct ds_pool *p, const _Atomic int *cap)
{
	(void)p;
	(void)cap;
}

void ds_pool_drop(struct ds_pool *p, struct ds_job *j)
{
	(void)p;
	j->state = JOB_DONE;
}

void ds_pool_phase(struct ds_pool *p, ds_job_fn *run, void *ctx, size_t max_jobs, size_t max_weight, int helpers)
{
	(void)max_jobs;
	(void)max_weight;
	(void)helpers;
	p->run = run;
	p->ctx = ctx;
}

void ds_pool_end_phase(struct ds_pool *p)
{
	(void)p;
}

int ds_pool_queue(struct ds_pool *p, struct ds_job *j)
{
	(void)p;
	(void)j;
	return 0;
}

void ds_pool_obtain(struct ds_pool *p, struct ds_job *j)
{
	if (j->state == JOB_QUEUED)
		p->run(p->ctx, j);
	j->state = JOB_DONE;
}

void ds_pool_release(struct ds_pool *p, struct ds_job *j)
{
	(void)p;
	(void)j;
}

void ds_parallel_for(struct ds_pool *p, size_t nslices, void (*fn)(void *job, size_t slice), void *job)
{
	(void)p;
	for (size_t i = 0; i < nslices; i++)
		fn(job, i);
}

#endif /* DUPSCAN_THREADS */
