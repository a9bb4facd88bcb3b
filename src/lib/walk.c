/* SPDX-License-Identifier: MIT */
/* walk.c: reach every regular file under the added paths, each directory once. */
/* d_type (a BSD/glibc extension) saves a stat per FIFO, device or skipped
 * directory; O_PATH opens directories only to walk down very long paths */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#if DUPSCAN_THREADS
#include <pthread.h>
#endif


/* ---- the walk ---- */


/* The caller's directory filter: @return 1 to walk into dir/name, 0 to prune
 * it, -ENOMEM. */
static int dir_filter_keeps(dupscan_scan *s, uint32_t dir, const char *name)
{
	char stackbuf[4096];
	char *path = ds_path_in(s, dir, name, stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	int keep = s->dir_filter(s->dir_filter_user, path, path + ds_rel_offset(s, dir)) != 0;
	if (path != stackbuf)
		free(path);
	return keep;
}

/* ---- a directory's entries, a batch at a time ---- */

#define STAT_BATCH 4096u   /* entries listed before they are added: bounds memory */
#define STAT_SLICE 64u    /* entries one thread stats at a time */

enum { ENT_STAT, ENT_LEFTOVER };

struct wentry {
	size_t name;          /* offset in the batch's names */
	int kind;
	unsigned char d_type;
	int err;              /* -errno of fstatat, or 0 */
	struct stat st;
};

struct stat_batch {
	int fd, flags;
	struct wentry *e;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
	int read_err;         /* readdir failed after this batch */
};

static int batch_add(struct stat_batch *b, const char *name, int kind, unsigned char d_type)
{
	size_t len = strlen(name) + 1;
	if (DS_GROW(b->e, b->cap, b->n + 1) || DS_GROW(b->names, b->capnames, b->nnames + len))
		return -ENOMEM;
	memcpy(b->names + b->nnames, name, len);
	b->e[b->n++] = (struct wentry){ .name = b->nnames, .kind = kind, .d_type = d_type };
	b->nnames += len;
	return 0;
}

/* fstatat() for one slice of a batch; each entry is its slice's own. */
static void stat_slice(void *job, size_t sl)
{
	struct stat_batch *b = job;
	size_t end = (sl + 1) * STAT_SLICE < b->n ? (sl + 1) * STAT_SLICE : b->n;
	for (size_t k = sl * STAT_SLICE; k < end; k++) {
		struct wentry *we = &b->e[k];
		if (we->kind == ENT_STAT)
			we->err = fstatat(b->fd, b->names + we->name, &we->st, b->flags) == 0 ? 0 : -errno;
	}
}


/* ---- walking: directories are listed (opened, read a batch at a time,
 * their entries stat()ed) on any thread, ahead of need when there are helper
 * threads; the caller's thread takes each listing in depth-first order and
 * does everything that is seen from outside (filters, records, reports), so
 * the result is the one-thread walk's whatever the threads do. ---- */

#define PREFETCH_JOBS 64u          /* directories listed ahead, at most: each holds a descriptor */
#define PREFETCH_ENTRIES 65536u    /* entries listed ahead and not yet taken, at most */
/* Handing a directory to another thread costs a few microseconds of locking
 * and cache traffic: more than listing a small one (measured on a copy of
 * /usr: 14,500 directories of 7 entries on average walked slower on two
 * threads than on one). Only directories larger than their first block
 * (about 100 entries or more on ext4) are listed ahead. */
#define PREFETCH_MIN_DIR_BYTES 4096

enum { ENT_ASK = 2 };              /* a directory the caller's filter must see before its stat */
enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct dir_job {
	uint32_t d;
	char *path;
	int oflags;
	uint64_t dev, ino;
	bool recurse, ask;   /* descend; entries that are directories go to the filter first */
	int state;           /* JOB_*, under the prefetch lock */
	bool queued;         /* offered to the helpers: lives until the walk ends */
	size_t slot;         /* its place in walker.all */
	bool ahead;          /* listed by a helper: counted in the prefetch budget */
	int fatal;           /* -ENOMEM or DUPSCAN_E_CANCELED while listing */
	int open_err;        /* the directory could not be opened or was replaced */
	DIR *dh;             /* open until taken */
	struct stat_batch b; /* the batch listed */
	bool complete, more, skipped;
};

struct prefetch {
	const dupscan_scan *s;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct dir_job **todo;   /* queued jobs, the most recent on top */
	size_t ntodo, captodo;
	size_t outstanding, held;
	int idle;                /* helpers waiting for work: wake-ups only when someone sleeps */
	bool main_waits;         /* the caller's thread waits for a listing */
	bool stop;
	pthread_t *tids;
	int ntids;
};

/* Read the next batch of j's directory; touches only j (and reads options). */
static void list_batch(const dupscan_scan *s, struct dir_job *j)
{
	struct stat_batch *b = &j->b;
	b->n = b->nnames = 0;
	b->read_err = 0;
	while (b->n < STAT_BATCH) {
		if (atomic_load_explicit(&((dupscan_scan *)s)->canceled, memory_order_relaxed)) {
			j->fatal = DUPSCAN_E_CANCELED;
			return;
		}
		errno = 0;
		struct dirent *e = readdir(j->dh);
		if (!e) {
			if (errno != 0)
				b->read_err = -errno;
			else
				j->complete = true;
			j->more = false;
			break;
		}
		const char *name = e->d_name;
		if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
			continue;
		int kind = ENT_STAT;
		if (strncmp(name, ".dupscan-tmp-", 13) == 0) {
			/* made by an action that was killed between link and rename */
			kind = ENT_LEFTOVER;
			j->skipped = true;
		} else if (s->no_hidden && name[0] == '.') {
			continue;
		} else {
			switch (e->d_type) {
			case DT_FIFO: case DT_CHR: case DT_BLK: case DT_SOCK:
				j->skipped = true;
				continue; /* never a candidate, never opened */
			case DT_DIR:
				if (!j->recurse) {
					j->skipped = true;
					continue;
				}
				/* a pruned directory costs no stat and no open */
				if (j->ask)
					kind = ENT_ASK;
				break;
			case DT_LNK:
				if (!s->follow_symlinks) {
					j->skipped = true;
					continue;
				}
				break;
			default:
				break;
			}
		}
		if (batch_add(b, name, kind, e->d_type)) {
			j->fatal = -ENOMEM;
			return;
		}
	}
	for (size_t sl = 0; sl * STAT_SLICE < b->n; sl++)
		stat_slice(b, sl);
}

/* Open j's directory and list its first batch. */
static void list_job(const dupscan_scan *s, struct dir_job *j)
{
	int fd = ds_open_path(j->path, j->oflags);
	if (fd < 0) {
		j->open_err = -errno;
		return;
	}
	struct stat dst;
	if (fstat(fd, &dst) != 0 || dst.st_dev != j->dev || dst.st_ino != j->ino) {
		/* replaced between its listing and now: not the directory we counted */
		close(fd);
		j->open_err = DUPSCAN_E_CHANGED;
		return;
	}
	j->dh = fdopendir(fd);
	if (!j->dh) {
		j->open_err = -errno;
		close(fd);
		return;
	}
	j->b.fd = fd;
	j->b.flags = s->follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW;
	j->more = true;
	list_batch(s, j);
}

#if DUPSCAN_THREADS
/* Take the most recent queued job (lock held); NULL when none may be taken. */
static struct dir_job *take_queued(struct prefetch *pf, bool budget)
{
	while (pf->ntodo > 0) {
		if (budget && (pf->outstanding >= PREFETCH_JOBS || pf->held >= PREFETCH_ENTRIES))
			return NULL;
		struct dir_job *j = pf->todo[--pf->ntodo];
		if (j->state == JOB_QUEUED)
			return j;
	}
	return NULL;
}

/* List j ahead of need (lock held on entry and exit). */
static void list_ahead(struct prefetch *pf, struct dir_job *j)
{
	j->state = JOB_RUNNING;
	j->ahead = true;
	pf->outstanding++;
	pthread_mutex_unlock(&pf->mu);
	list_job(pf->s, j);
	pthread_mutex_lock(&pf->mu);
	pf->held += j->b.n;
	j->state = JOB_DONE;
	if (pf->main_waits)
		pthread_cond_broadcast(&pf->done_cv);
}

static void *prefetch_worker(void *arg)
{
	struct prefetch *pf = arg;
	pthread_mutex_lock(&pf->mu);
	while (!pf->stop) {
		struct dir_job *j = take_queued(pf, true);
		if (j) {
			list_ahead(pf, j);
		} else {
			pf->idle++;
			pthread_cond_wait(&pf->work_cv, &pf->mu);
			pf->idle--;
		}
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

static struct prefetch *prefetch_start(const dupscan_scan *s)
{
	if (s->threads < 2)
		return NULL;
	struct prefetch *pf = calloc(1, sizeof(*pf));
	if (!pf || !(pf->tids = calloc((size_t)s->threads, sizeof(*pf->tids)))) {
		free(pf);
		return NULL; /* the caller's thread lists everything */
	}
	pf->s = s;
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->work_cv, NULL);
	pthread_cond_init(&pf->done_cv, NULL);
	for (; pf->ntids < s->threads - 1; pf->ntids++)
		if (pthread_create(&pf->tids[pf->ntids], NULL, prefetch_worker, pf) != 0)
			break;
	return pf;
}

static void prefetch_stop(struct prefetch *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->stop = true;
	pthread_cond_broadcast(&pf->work_cv);
	pthread_mutex_unlock(&pf->mu);
	for (int i = 0; i < pf->ntids; i++)
		pthread_join(pf->tids[i], NULL);
	pthread_cond_destroy(&pf->done_cv);
	pthread_cond_destroy(&pf->work_cv);
	pthread_mutex_destroy(&pf->mu);
	free(pf->todo);
	free(pf->tids);
	free(pf);
}
#else
struct prefetch;
static struct prefetch *prefetch_start(const dupscan_scan *s)
{
	(void)s;
	return NULL;
}
static void prefetch_stop(struct prefetch *pf)
{
	(void)pf;
}
#endif

struct walker {
	dupscan_scan *s;
	struct prefetch *pf;
	struct dir_job **stack;      /* directories to walk, depth first */
	size_t n, cap;
	struct dir_job **all;        /* every job, freed when the walk ends */
	size_t nall, capall;
};


/* Queue directory d: on the walk's stack, and for the helpers to list ahead
 * when it is large (dir_bytes: its st_size). */
static int walker_push(struct walker *w, uint32_t d, int64_t dir_bytes)
{
	dupscan_scan *s = w->s;
	struct dir_job *j = calloc(1, sizeof(*j));
	if (!j || DS_GROW(w->all, w->capall, w->nall + 1) || DS_GROW(w->stack, w->cap, w->n + 1)) {
		free(j);
		return -ENOMEM;
	}
	j->slot = w->nall;
	w->all[w->nall++] = j;
	j->d = d;
	j->path = ds_dir_path(s, d);
	if (!j->path)
		return -ENOMEM;
	bool root = s->dirs[d].parent == DS_NONE;
	j->oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY;
	if (!root && !s->follow_symlinks)
		j->oflags |= O_NOFOLLOW;
	j->dev = s->dirs[d].dev;
	j->ino = s->dirs[d].ino;
	j->recurse = s->args[s->dirs[d].arg].recurse;
	j->ask = s->dir_filter != NULL;
	w->stack[w->n++] = j;
#if DUPSCAN_THREADS
	if (w->pf && dir_bytes > PREFETCH_MIN_DIR_BYTES) {
		struct prefetch *pf = w->pf;
		pthread_mutex_lock(&pf->mu);
		int rc = DS_GROW(pf->todo, pf->captodo, pf->ntodo + 1);
		if (rc == 0) {
			pf->todo[pf->ntodo++] = j;
			j->queued = true;
			if (pf->idle)
				pthread_cond_signal(&pf->work_cv);
		}
		pthread_mutex_unlock(&pf->mu);
		return rc;
	}
#endif
	return 0;
}

/* Make sure j is listed: by a helper (wait, listing other queued directories
 * meanwhile), or here. */
static void obtain(struct walker *w, struct dir_job *j)
{
#if DUPSCAN_THREADS
	struct prefetch *pf = w->pf;
	if (pf) {
		pthread_mutex_lock(&pf->mu);
		if (j->state == JOB_QUEUED) {
			j->state = JOB_RUNNING;
			pthread_mutex_unlock(&pf->mu);
			list_job(w->s, j);
			pthread_mutex_lock(&pf->mu);
			j->state = JOB_DONE;
		}
		while (j->state != JOB_DONE) {
			struct dir_job *other = take_queued(pf, false);
			if (other) {
				list_ahead(pf, other);
			} else {
				pf->main_waits = true;
				pthread_cond_wait(&pf->done_cv, &pf->mu);
				pf->main_waits = false;
			}
		}
		pthread_mutex_unlock(&pf->mu);
		return;
	}
#endif
	list_job(w->s, j);
}

/* j has been taken: its entries and descriptor leave the budget, and it is
 * freed unless the helpers' queue may still point to it. */
static void release(struct walker *w, struct dir_job *j, size_t counted)
{
	if (j->dh)
		closedir(j->dh);
	j->dh = NULL;
	free(j->b.e);
	free(j->b.names);
	free(j->path);
	j->b.e = NULL;
	j->b.names = NULL;
	j->path = NULL;
	if (!j->queued) {
		w->all[j->slot] = NULL;
		free(j);
		return;
	}
#if DUPSCAN_THREADS
	if (w->pf && j->ahead) {
		pthread_mutex_lock(&w->pf->mu);
		w->pf->outstanding--;
		w->pf->held -= counted;
		if (w->pf->idle)
			pthread_cond_broadcast(&w->pf->work_cv);
		pthread_mutex_unlock(&w->pf->mu);
	}
#else
	(void)w;
	(void)counted;
#endif
}

/* Add one listed entry of directory d: a file record, or a directory to walk. */
static int take_entry(struct walker *w, struct dir_job *j, struct wentry *we, bool *skipped)
{
	dupscan_scan *s = w->s;
	uint32_t d = j->d;
	const char *name = j->b.names + we->name;
	if (we->kind == ENT_ASK) {
		int keep = dir_filter_keeps(s, d, name);
		if (keep <= 0)
			return keep; /* pruned: never stat()ed, never opened */
		we->err = fstatat(j->b.fd, name, &we->st, j->b.flags) == 0 ? 0 : -errno;
		we->kind = ENT_STAT;
	}
	if (we->kind == ENT_LEFTOVER || we->err) {
		int err = we->kind == ENT_LEFTOVER ? DUPSCAN_E_LEFTOVER : we->err;
		*skipped = true;
		/* dangling or looping symlinks are not files */
		if (err != DUPSCAN_E_LEFTOVER && s->follow_symlinks && (err == -ENOENT || err == -ELOOP))
			return 0;
		char *fp = ds_path_in(s, d, name, NULL, 0);
		if (!fp)
			return -ENOMEM;
		ds_report(s, fp, err);
		free(fp);
		return 0;
	}
	const struct stat *st = &we->st;
	size_t nlen = strlen(name);
	if (S_ISREG(st->st_mode))
		return ds_add_rec(s, name, nlen, d, s->dirs[d].arg, st);
	if (!S_ISDIR(st->st_mode) || !j->recurse) {
		*skipped = true;
		return 0;
	}
	/* -1: another filesystem mounted here (or reached by a followed symlink)
	 * is not entered, as find -xdev and jdupes do not */
	if (s->one_fs && st->st_dev != s->dirs[d].dev) {
		*skipped = true;
		return 0;
	}
	/* d_type did not say it was a directory: ask the filter now */
	int keep = s->dir_filter && we->d_type != DT_DIR ? dir_filter_keeps(s, d, name) : 1;
	int seen = keep <= 0 ? (keep < 0 ? keep : 1) : ds_seen_add(s, st->st_dev, st->st_ino);
	if (seen < 0)
		return seen;
	if (seen == 1) {
		if (keep == 1)
			*skipped = true; /* a loop, or a directory reached twice */
		return 0;
	}
	uint32_t nd;
	int rc = ds_add_dir(s, name, nlen, d, s->dirs[d].arg, st, &nd);
	return rc ? rc : walker_push(w, nd, st->st_size);
}

/* Take a listed directory: its entries in listing order, then the rest of
 * it a batch at a time. @return 0 (trouble is reported) or -ENOMEM,
 * DUPSCAN_E_CANCELED. */
static int take_dir(struct walker *w, struct dir_job *j)
{
	dupscan_scan *s = w->s;
	/* until it is listed to its end, a directory's content is unknown */
	s->dirs[j->d].incomplete = true;
	size_t counted = j->b.n;
	int rc = j->fatal;
	if (rc == 0 && j->open_err) {
		if (j->open_err == -ENOMEM)
			rc = -ENOMEM;
		else
			ds_report(s, j->path, j->open_err);
	}
	bool skipped = j->skipped;
	while (rc == 0 && !j->open_err) {
		for (size_t k = 0; k < j->b.n && rc == 0; k++)
			rc = take_entry(w, j, &j->b.e[k], &skipped);
		if (rc == 0 && j->b.read_err)
			ds_report(s, j->path, j->b.read_err);
		if (rc || !j->more)
			break;
		list_batch(s, j);
		rc = j->fatal;
		skipped = skipped || j->skipped;
	}
	if (rc == 0 && !j->open_err)
		s->dirs[j->d].incomplete = !j->complete || skipped;
	release(w, j, counted);
	return rc;
}

/* A file given as an argument hangs off a pseudo-directory holding its prefix. */
static int add_file_arg(dupscan_scan *s, uint32_t arg, const char *path, const struct stat *st)
{
	const char *slash = strrchr(path, '/');
	size_t plen = slash ? (size_t)(slash - path) + 1 : 0;
	struct stat pst;
	char *prefix = strndup(path, plen ? plen : 1);
	if (!prefix)
		return -ENOMEM;
	if (!plen)
		strcpy(prefix, ".");
	if (stat(prefix, &pst) != 0)
		memset(&pst, 0, sizeof(pst));
	free(prefix);
	uint32_t d;
	int rc = ds_add_dir(s, path, plen, DS_NONE, arg, &pst, &d);
	if (rc == 0)
		s->dirs[d].pseudo = true;
	if (rc == 0 && s->nprotect) {
		char *dir = strndup(path, plen ? plen : 1);
		if (!dir)
			return -ENOMEM;
		if (!plen)
			strcpy(dir, ".");
		s->dirs[d].prot = ds_under_protected(s, dir);
		free(dir);
	}
	if (rc == 0)
		rc = ds_add_rec(s, path + plen, strlen(path + plen), d, arg, st);
	return rc;
}

int ds_walk(dupscan_scan *s)
{
	struct walker w = { .s = s, .pf = prefetch_start(s) };
	int rc = 0;
	for (uint32_t a = 0; a < s->nargs && rc == 0; a++) {
		if (s->canceled) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		const char *path = s->args[a].path;
		struct stat st;
		/* an argument is followed even without -s, like find -H */
		if (stat(path, &st) != 0) {
			ds_report(s, path, -errno);
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			rc = add_file_arg(s, a, path, &st);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			ds_report(s, path, DUPSCAN_E_NOTREG);
			continue;
		}
		int seen = ds_seen_add(s, st.st_dev, st.st_ino);
		if (seen != 0) {
			rc = seen < 0 ? seen : 0;
			continue;
		}
		uint32_t d;
		rc = ds_add_dir(s, path, strlen(path), DS_NONE, a, &st, &d);
		if (rc == 0)
			s->dirs[d].prot = ds_under_protected(s, path);
		if (rc == 0)
			rc = walker_push(&w, d, st.st_size);
		/* depth-first with an explicit stack: no recursion per level */
		while (rc == 0 && w.n > 0) {
			struct dir_job *j = w.stack[--w.n];
			obtain(&w, j);
			rc = take_dir(&w, j);
		}
	}
	prefetch_stop(w.pf);
	for (size_t i = 0; i < w.nall; i++) {
		struct dir_job *j = w.all[i];
		if (!j)
			continue;
		if (j->dh)
			closedir(j->dh);
		free(j->b.e);
		free(j->b.names);
		free(j->path);
		free(j);
	}
	free(w.all);
	free(w.stack);
	/* a fixed point between walking and reading, announced to the caller */
	if (rc == 0 && s->on_progress)
		s->on_progress(s->progress_user, DUPSCAN_PHASE_WALK, s->nrecs, s->nrecs);
	return rc;
}
