/* SPDX-License-Identifier: MIT */
/* monitor.c: a lock and a condition in one, for state that threads share
 * (the sweep's buckets, the cache's log); nothing in a build without
 * threads, where one thread does everything in order. */
#include <stdlib.h>

#include "internal.h"
#include "support/support.h"

#if DUPSCAN_THREADS
#include <pthread.h>

struct ds_monitor {
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct ds_monitor *ds_monitor_new(void)
{
	struct ds_monitor *m = malloc(sizeof(*m));
	if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m);
		return NULL;
	}
	if (m && pthread_cond_init(&m->cv, NULL) != 0) {
		pthread_mutex_destroy(&m->mu);
		free(m);
		return NULL;
	}
	return m;
}

void ds_monitor_free(struct ds_monitor *m)
{
	if (!m)
		return;
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

void ds_monitor_enter(struct ds_monitor *m)
{
	pthread_mutex_lock(&m->mu);
}

void ds_monitor_leave(struct ds_monitor *m)
{
	pthread_mutex_unlock(&m->mu);
}

void ds_monitor_wait(struct ds_monitor *m)
{
	pthread_cond_wait(&m->cv, &m->mu);
}

void ds_monitor_wake(struct ds_monitor *m)
{
	pthread_cond_broadcast(&m->cv);
}

#else

/* One thread: nobody else holds the lock, and what a waiter waits for was
 * done before it asked (each slice runs to its end before the next). */
struct ds_monitor {
	int unused;
};

struct ds_monitor *ds_monitor_new(void)
{
	return calloc(1, sizeof(struct ds_monitor));
}

void ds_monitor_free(struct ds_monitor *m)
{
	free(m);
}

void ds_monitor_enter(struct ds_monitor *m)
{
	(void)m;
}

void ds_monitor_leave(struct ds_monitor *m)
{
	(void)m;
}

void ds_monitor_wait(struct ds_monitor *m)
{
	(void)m;
}

void ds_monitor_wake(struct ds_monitor *m)
{
	(void)m;
}

#endif /* DUPSCAN_THREADS */
