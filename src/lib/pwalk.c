/* SPDX-License-Identifier: MIT */
/* pwalk.c: the walk of one directory argument on the thread pool. Threads list
 * and stat directories as soon as they are found; the caller's thread then
 * takes their results in the order the one-thread walk would have made them
 * (depth first, entries in readdir order), so records, reports and the
 * filter's calls come in the same order whatever the thread count. */
#define _GNU_SOURCE /* d_type */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#if DUPSCAN_THREADS
#include <pthread.h>

struct wentry {
	char *name;
	struct stat st;
	uint32_t child;        /* job of a subdirectory, DS_NONE for a file */
};

struct wjob {
	char *path;
	uint64_t dev, ino;
	bool root, done;
	uint32_t dir;          /* its ds_dir, known once its parent is taken */
	struct wentry *e;
	size_t ne, cap;
	struct ds_error *err;  /* path (owned) and code, in the order met */
	size_t nerr, caperr;
};

struct pwalk {
	dupscan_scan *s;
	uint32_t arg;
	bool recurse;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct wjob **jobs;
	size_t njobs, capjobs;
	size_t next;           /* jobs[next..njobs) wait for a thread */
	size_t busy;           /* jobs being read */
	bool stop;
	int rc;                /* -ENOMEM or DUPSCAN_E_CANCELED */
};

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

/* Called with the lock held. @return the job's index, or DS_NONE on ENOMEM. */
static uint32_t add_job(struct pwalk *w, char *path, const struct stat *st, bool root)
{
	struct wjob *j = calloc(1, sizeof(*j));
	if (!j || grow((void **)&w->jobs, &w->capjobs, w->njobs + 1, sizeof(*w->jobs))) {
		free(j);
		free(path);
		return DS_NONE;
	}
	j->path = path;
	j->dev = st->st_dev;
	j->ino = st->st_ino;
	j->root = root;
	j->dir = DS_NONE;
	w->jobs[w->njobs] = j;
	pthread_cond_signal(&w->work_cv);
	return (uint32_t)w->njobs++;
}

static char *join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	size_t sep = dl > 0 && dir[dl - 1] != '/';
	char *p = malloc(dl + sep + nl + 1);
	if (p) {
		memcpy(p, dir, dl);
		if (sep)
			p[dl] = '/';
		memcpy(p + dl + sep, name, nl + 1);
	}
	return p;
}

static int job_error(struct wjob *j, char *path, int code)
{
	if (!path || grow((void **)&j->err, &j->caperr, j->nerr + 1, sizeof(*j->err))) {
		free(path);
		return -ENOMEM;
	}
	j->err[j->nerr++] = (struct ds_error){ path, code };
	return 0;
}

/* List and stat one directory; new subdirectories become jobs at once. */
static int read_job(struct pwalk *w, struct wjob *j)
{
	dupscan_scan *s = w->s;
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | (j->root ? 0 : O_NOFOLLOW);
	int fd = ds_open_path(j->path, flags);
	if (fd < 0)
		return job_error(j, strdup(j->path), -errno);
	struct stat dst;
	if (fstat(fd, &dst) != 0 || dst.st_dev != j->dev || dst.st_ino != j->ino) {
		close(fd);
		return job_error(j, strdup(j->path), DUPSCAN_E_CHANGED);
	}
	DIR *dh = fdopendir(fd);
	if (!dh) {
		int err = -errno;
		close(fd);
		return job_error(j, strdup(j->path), err);
	}
	int rc = 0;
	for (;;) {
		if (atomic_load_explicit(&s->canceled, memory_order_relaxed)) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		errno = 0;
		struct dirent *e = readdir(dh);
		if (!e) {
			if (errno != 0)
				rc = job_error(j, strdup(j->path), -errno);
			break;
		}
		const char *name = e->d_name;
		if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
			continue;
		if (strncmp(name, ".dupscan-tmp-", 13) == 0) {
			rc = job_error(j, join(j->path, name), DUPSCAN_E_LEFTOVER);
			if (rc)
				break;
			continue;
		}
		if (s->no_hidden && name[0] == '.')
			continue;
		switch (e->d_type) {
		case DT_FIFO: case DT_CHR: case DT_BLK: case DT_SOCK: case DT_LNK:
			continue; /* never opened; symlinks are not followed on this path */
		case DT_DIR:
			if (!w->recurse)
				continue;
			break;
		default:
			break;
		}
		struct stat st;
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = job_error(j, join(j->path, name), -errno);
			if (rc)
				break;
			continue;
		}
		uint32_t child = DS_NONE;
		if (S_ISDIR(st.st_mode) && w->recurse) {
			char *cpath = join(j->path, name);
			pthread_mutex_lock(&w->mu);
			int seen = cpath ? ds_seen_add(s, st.st_dev, st.st_ino) : -ENOMEM;
			if (seen == 0)
				child = add_job(w, cpath, &st, false);
			else
				free(cpath);
			pthread_mutex_unlock(&w->mu);
			if (seen < 0 || (seen == 0 && child == DS_NONE)) {
				rc = -ENOMEM;
				break;
			}
			if (seen)
				continue; /* a directory reached twice is walked once */
		} else if (!S_ISREG(st.st_mode)) {
			continue;
		}
		char *copy = strdup(name);
		if (!copy || grow((void **)&j->e, &j->cap, j->ne + 1, sizeof(*j->e))) {
			free(copy);
			rc = -ENOMEM;
			break;
		}
		j->e[j->ne++] = (struct wentry){ copy, st, child };
	}
	closedir(dh);
	return rc;
}

static void *worker(void *arg)
{
	struct pwalk *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->stop && w->next == w->njobs && w->busy > 0)
			pthread_cond_wait(&w->work_cv, &w->mu);
		if (w->stop || w->next == w->njobs)
			break; /* stopped, or nothing queued and nothing that could queue more */
		struct wjob *j = w->jobs[w->next++];
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		int rc = read_job(w, j);
		pthread_mutex_lock(&w->mu);
		w->busy--;
		j->done = true;
		if (rc && !w->rc) {
			w->rc = rc;
			w->stop = true;
		}
		pthread_cond_broadcast(&w->done_cv);
		pthread_cond_broadcast(&w->work_cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void free_job(struct wjob *j)
{
	for (size_t i = 0; i < j->ne; i++)
		free(j->e[i].name);
	for (size_t i = 0; i < j->nerr; i++)
		free(j->err[i].path);
	free(j->e);
	free(j->err);
	free(j->path);
	free(j);
}

/* Take a finished job as the one-thread walk would read it: reports, then its
 * entries in order; its subdirectories go on the stack. */
static int take(struct pwalk *w, struct wjob *j, uint32_t **stack, size_t *n, size_t *cap)
{
	dupscan_scan *s = w->s;
	for (size_t i = 0; i < j->nerr; i++)
		ds_report(s, j->err[i].path, j->err[i].code);
	for (size_t i = 0; i < j->ne; i++) {
		struct wentry *e = &j->e[i];
		size_t nlen = strlen(e->name);
		if (e->child == DS_NONE) {
			int rc = ds_add_rec(s, e->name, nlen, j->dir, w->arg, &e->st);
			if (rc)
				return rc;
			continue;
		}
		uint32_t nd;
		int rc = ds_add_dir(s, e->name, nlen, j->dir, w->arg, &e->st, &nd);
		if (rc || grow((void **)stack, cap, *n + 1, sizeof(**stack)))
			return rc ? rc : -ENOMEM;
		pthread_mutex_lock(&w->mu);
		w->jobs[e->child]->dir = nd;
		pthread_mutex_unlock(&w->mu);
		(*stack)[(*n)++] = e->child;
	}
	return 0;
}

int ds_walk_dir_parallel(dupscan_scan *s, uint32_t arg, uint32_t root_dir)
{
	struct pwalk w = { .s = s, .arg = arg, .recurse = s->args[arg].recurse };
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.work_cv, NULL);
	pthread_cond_init(&w.done_cv, NULL);
	int nthreads = s->threads, started = 0, rc = 0;
	pthread_t *tids = calloc((size_t)nthreads, sizeof(*tids));
	uint32_t *stack = NULL;
	size_t n = 0, cap = 0;
	struct stat rst = { 0 };
	rst.st_dev = s->dirs[root_dir].dev;
	rst.st_ino = s->dirs[root_dir].ino;
	char *rpath = strdup(s->dirs[root_dir].name);
	pthread_mutex_lock(&w.mu);
	uint32_t root = DS_NONE;
	if (tids && rpath)
		root = add_job(&w, rpath, &rst, true); /* frees rpath if it fails */
	else
		free(rpath);
	pthread_mutex_unlock(&w.mu);
	if (root == DS_NONE) {
		rc = -ENOMEM;
		goto out;
	}
	w.jobs[root]->dir = root_dir;
	for (; started < nthreads; started++)
		if (pthread_create(&tids[started], NULL, worker, &w) != 0)
			break;
	if (started == 0) {
		rc = -ENOMEM;
		goto out;
	}
	if (grow((void **)&stack, &cap, 1, sizeof(*stack))) {
		rc = -ENOMEM;
		goto out;
	}
	stack[n++] = root;
	while (rc == 0 && n > 0) {
		uint32_t ji = stack[--n];
		pthread_mutex_lock(&w.mu);
		struct wjob *j = w.jobs[ji];
		while (!j->done && !w.stop)
			pthread_cond_wait(&w.done_cv, &w.mu);
		bool ready = j->done;
		if (!ready)
			rc = w.rc ? w.rc : DUPSCAN_E_CANCELED;
		pthread_mutex_unlock(&w.mu);
		if (ready)
			rc = take(&w, j, &stack, &n, &cap);
	}
out:
	pthread_mutex_lock(&w.mu);
	w.stop = true;
	if (rc == 0 && w.rc)
		rc = w.rc;
	pthread_cond_broadcast(&w.work_cv);
	pthread_mutex_unlock(&w.mu);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	for (size_t i = 0; i < w.njobs; i++)
		free_job(w.jobs[i]);
	free(w.jobs);
	free(stack);
	free(tids);
	pthread_cond_destroy(&w.done_cv);
	pthread_cond_destroy(&w.work_cv);
	pthread_mutex_destroy(&w.mu);
	return rc;
}

#endif /* DUPSCAN_THREADS */
