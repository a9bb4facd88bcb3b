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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"



/* ---- the walk ---- */


/* The caller's directory filter: @return 1 to walk into dir/name, 0 to prune
 * it, -ENOMEM. */
static int dir_filter_keeps(dupscan_scan *s, uint32_t dir, const char *name)
{
	char stackbuf[4096];
	char *path = ds_path_in(s, dir, name, stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	int keep = s->cb.dir_filter(s->cb.dir_filter_user, path, path + ds_rel_offset(s, dir)) != 0;
	if (path != stackbuf)
		free(path);
	return keep;
}

/* ---- a directory's entries, a batch at a time ---- */

#define STAT_BATCH 4096u   /* entries listed before they are added: bounds memory */

enum { ENT_STAT, ENT_LEFTOVER };

struct wentry {
	size_t name;          /* offset in the batch's names */
	uint64_t ino;         /* from the directory entry */
	int kind;
	unsigned char d_type;
	int err;              /* -errno of fstatat, or 0 */
	struct stat st;
};

/* What a batch's stat calls cost: on a spinning disk the walk is one
 * stream unless the metadata it meets is in memory already (below). */
struct stat_cost {
	int64_t ns;           /* wall time of the calls */
	long inblock;         /* block reads they started (this thread's) */
	size_t n;             /* calls */
};

struct stat_batch {
	int fd, flags;
	struct stat_cost cost;
	bool by_inode;        /* stat in inode order: one sweep over a disk's inode table */
	uint32_t *order;      /* scratch for that order */
	size_t caporder;
	struct wentry *e;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
	int read_err;         /* readdir failed after this batch */
};

static int batch_add(struct stat_batch *b, const char *name, int kind, unsigned char d_type, uint64_t ino)
{
	size_t len = strlen(name) + 1;
	if (DS_GROW(b->e, b->cap, b->n + 1) || DS_GROW(b->names, b->capnames, b->nnames + len))
		return -ENOMEM;
	memcpy(b->names + b->nnames, name, len);
	b->e[b->n++] = (struct wentry){ .name = b->nnames, .ino = ino, .kind = kind, .d_type = d_type };
	b->nnames += len;
	return 0;
}

/* ---- walking: directories are listed (opened, read a batch at a time,
 * their entries stat()ed) on any thread, ahead of need when there are helper
 * threads; the caller's thread takes each listing in depth-first order and
 * does everything that is seen from outside (filters, records, reports), so
 * the result is the one-thread walk's whatever the threads do. ---- */

#define PREFETCH_JOBS 64u          /* directories listed ahead, at most: each holds a descriptor */
/* Entries the helpers listed ahead and the walk has not taken yet, at most:
 * each holds its stat (about 180 bytes), so 16,384 of them are 3 MB; 65,536
 * were 12 MB, a fifth of the peak of a 200,000-file scan when the helpers
 * got that far ahead (test_memory: 34-38 bytes a file, and 52 in one run of
 * six; with 16,384: 31-33), and a million files took the same time. */
#define PREFETCH_ENTRIES 16384u
/* hdd mode lists the directories at the top of the walk's stack together,
 * up to this many entries, to stat them in one inode order (list_ahead()) */
#define AHEAD_ENTRIES 65536u
/* Handing a directory to another thread costs a few microseconds of locking
 * and cache traffic: more than listing a small one (measured on a copy of
 * /usr: 14,500 directories of 7 entries on average walked slower on two
 * threads than on one). Only directories larger than their first block
 * (about 100 entries or more on ext4) are listed ahead. */
#define PREFETCH_MIN_DIR_BYTES 4096

enum { ENT_ASK = 2 };              /* a directory the caller's filter must see before its stat */

struct dir_job {
	struct ds_job job;   /* first: the pool's job is the directory's */
	uint32_t d, depth;
	char *path;          /* made when needed: a directory's path costs its depth */
	int parent_fd;       /* its parent, open: the caller's thread opens it there */
	int oflags;
	uint64_t dev, ino;
	bool recurse, ask;   /* descend; entries that are directories go to the filter first */
	bool queued;         /* offered to the helpers: lives until the walk ends */
	size_t slot;         /* its place in walker.all */
	int fatal;           /* -ENOMEM or DUPSCAN_E_CANCELED while listing */
	int open_err;        /* the directory could not be opened or was replaced */
	DIR *dh;             /* open until taken */
	struct stat_batch b; /* the batch listed */
	bool complete, more, skipped;
	bool listed;         /* its first batch listed ahead (by list_ahead) */
	int64_t bytes;       /* its st_size when pushed */
	bool deferred;       /* list, but leave the stat calls to list_ahead */
};

static int cmp_entry_ino(void *ctx, const void *pa, const void *pb)
{
	const struct stat_batch *b = ctx;
	uint64_t x = b->e[*(const uint32_t *)pa].ino, y = b->e[*(const uint32_t *)pb].ino;
	return x < y ? -1 : x > y;
}

static void stat_batch(struct stat_batch *b);

/* This thread's block reads so far, or 0 where the kernel does not count
 * them per thread. */
static long thread_inblock(void)
{
#ifdef RUSAGE_THREAD
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0)
		return ru.ru_inblock;
#endif
	return 0;
}

static void cost_begin(struct stat_cost *c)
{
	c->ns = ds_mono_ns();
	c->inblock = thread_inblock();
	c->n = 0; /* nothing to judge by until cost_end() */
}

static void cost_end(struct stat_cost *c, size_t n)
{
	c->ns = ds_mono_ns() - c->ns;
	c->inblock = thread_inblock() - c->inblock;
	c->n = n;
}

/* Read the next batch of j's directory and stat() its entries, unless
 * j->deferred; touches only j (and reads options). */
static void list_batch(const dupscan_scan *s, struct dir_job *j)
{
	struct stat_batch *b = &j->b;
	b->n = b->nnames = 0;
	b->read_err = 0;
	/* the listing counts too: over FUSE or NFS, reading a directory may be
	 * what waits on the disk, and its entries' attributes come with it */
	cost_begin(&b->cost);
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
		} else if (s->opt.no_hidden && name[0] == '.') {
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
				if (!s->opt.follow_symlinks) {
					j->skipped = true;
					continue;
				}
				break;
			default:
				break;
			}
		}
		if (batch_add(b, name, kind, e->d_type, (uint64_t)e->d_ino)) {
			j->fatal = -ENOMEM;
			return;
		}
	}
	if (!j->deferred) {
		stat_batch(b);
		cost_end(&b->cost, b->n);
	}
}

/* stat() one entry b listed. */
static void stat_entry(const struct stat_batch *b, struct wentry *we)
{
	we->err = fstatat(b->fd, b->names + we->name, &we->st, b->flags) == 0 ? 0 : -errno;
}

/* stat() the entries a batch listed (none were taken yet). */
static void stat_batch(struct stat_batch *b)
{
	/* the entries keep their listing order; only the stat calls are reordered */
	bool sorted = b->by_inode && b->n > 1 && DS_GROW(b->order, b->caporder, b->n) == 0;
	for (size_t k = 0; sorted && k < b->n; k++)
		b->order[k] = (uint32_t)k;
	if (sorted && ds_sort(b->order, b->n, sizeof(*b->order), cmp_entry_ino, b) != 0)
		sorted = false;
	for (size_t k = 0; k < b->n; k++) {
		struct wentry *we = &b->e[sorted ? b->order[k] : k];
		if (we->kind == ENT_STAT)
			stat_entry(b, we);
	}
}

/* j's path, made the first time it is needed. @return it, or NULL. */
static const char *job_path(const dupscan_scan *s, struct dir_job *j)
{
	if (!j->path)
		j->path = ds_dir_path(s, j->d);
	return j->path;
}

/* Open j's directory: by its name in its open parent, or else by its path
 * (each open by path costs a lookup per level: quadratic in a deep tree). */
static int open_job(const dupscan_scan *s, struct dir_job *j)
{
	if (j->parent_fd >= 0)
		return openat(j->parent_fd, s->tree.dirs[j->d].name, j->oflags);
	if (!job_path(s, j)) {
		errno = ENOMEM;
		return -1;
	}
	return ds_open_path(j->path, j->oflags);
}

/* Open j's directory and list its first batch. */
static void list_job(const dupscan_scan *s, struct dir_job *j)
{
	int fd = open_job(s, j);
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
	j->b.flags = s->opt.follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW;
	j->b.by_inode = s->reading.io_mode == DUPSCAN_IO_HDD;
	j->more = true;
	list_batch(s, j);
}

enum { JOB_DIR, JOB_WARM };

/* The pool's run function: list a directory, ahead of need or not; or read
 * another disk's argument ahead (warm.c). */
static void list_dir(void *ctx, struct ds_job *job)
{
	if (job->kind == JOB_WARM) {
		ds_warm_run(ctx, (struct ds_warm *)job);
		return;
	}
	struct dir_job *j = (struct dir_job *)job;
	if (!j->listed)
		list_job(ctx, j);
	j->job.weight = j->b.n;
}

/* Directories taken last, on the path down to where the walk is, kept open
 * so that a subdirectory opens relative to its parent: the deepest few only,
 * so descriptors stay bounded at any depth. */
#define HELD_DIRS 8

struct held_dir {
	uint32_t d, depth;
	DIR *dh;
};

struct walker {
	dupscan_scan *s;
	struct ds_pool *pool;        /* lists directories ahead of need */
	struct dir_job **stack;      /* directories to walk, depth first */
	size_t n, cap;
	struct dir_job **all;        /* every job, freed when the walk ends */
	size_t nall, capall;
	size_t ahead;                /* listed by list_ahead and not taken yet */
	size_t pending;              /* offered to the helpers and not taken yet */
	struct held_dir held[HELD_DIRS]; /* by depth, the deepest last */
	size_t nheld;
	bool in_memory;              /* the last batch's metadata was in memory (ds_stats_in_memory()) */
};

/* On a spinning disk the walk is one stream in inode order: listing
 * directories on several threads would move the head between them. But
 * where the metadata is in memory already (a tree walked a moment ago)
 * there is no head to move, and one thread did half the work it could (a
 * million cached files on two CPUs: 2.3 s walked on one thread, 1.2 s on
 * all). So each batch is watched, its listing and its stat calls: when
 * they read no block and took at most DS_MEMORY_STAT_NS an entry (a cached
 * stat takes 1.5 us here, one that waits on this VM's virtual disk 6 us and
 * more, on a disk or a slow mount milliseconds), the directories met next
 * are listed on every thread; the first batch that reads the disk makes the
 * walk one stream again. The listing counts because over FUSE or NFS no
 * block read is counted and the entries' attributes come with the listing
 * (READDIRPLUS): the stat calls after it are quick though the listing
 * waited on the disk (two simulated disks behind FUSE were 4% slower when
 * only the stat calls counted). Batches of fewer than MEMORY_MIN_CALLS
 * entries change nothing. */
#define MEMORY_MIN_CALLS 32

bool ds_stats_in_memory(int64_t ns, long inblock, size_t calls, int64_t limit)
{
	return inblock == 0 && ns / (int64_t)(calls ? calls : 1) <= limit;
}

static void watch_cost(struct walker *w, const struct stat_cost *c)
{
	if (c->n >= MEMORY_MIN_CALLS)
		w->in_memory = ds_stats_in_memory(c->ns, c->inblock, c->n, w->s->reading.memory_stat_ns);
}

/* Directories are listed on one thread, in inode order (a spinning disk
 * whose metadata is not all in memory). */
static bool one_stream(const struct walker *w)
{
	return w->s->reading.io_mode == DUPSCAN_IO_HDD && !w->in_memory;
}

/* Keep j's open directory, the deepest on the path now; the shallowest goes
 * when there are too many. */
static void hold_dir(struct walker *w, struct dir_job *j)
{
	if (w->nheld == HELD_DIRS) {
		closedir(w->held[0].dh);
		memmove(&w->held[0], &w->held[1], (HELD_DIRS - 1) * sizeof(w->held[0]));
		w->nheld--;
	}
	w->held[w->nheld++] = (struct held_dir){ j->d, j->depth, j->dh };
	j->dh = NULL;
}

/* Before j is taken: the directories held that are not above it are done
 * with (the walk is depth first); j's parent, when held, opens it. */
static void parent_of(struct walker *w, struct dir_job *j)
{
	while (w->nheld > 0 && w->held[w->nheld - 1].depth >= j->depth)
		closedir(w->held[--w->nheld].dh);
	/* a job the helpers may list keeps to its path (and its fields are
	 * theirs until obtained): the held directories are the caller's */
	if (!j->queued && !j->listed && w->nheld > 0 && w->held[w->nheld - 1].d == w->s->tree.dirs[j->d].parent)
		j->parent_fd = dirfd(w->held[w->nheld - 1].dh);
}


/* Queue directory d at depth: on the walk's stack, and for the helpers to
 * list ahead when it is large (dir_bytes: its st_size). */
static int walker_push(struct walker *w, uint32_t d, uint32_t depth, int64_t dir_bytes)
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
	j->depth = depth;
	j->parent_fd = -1;
	bool root = s->tree.dirs[d].parent == DS_NONE;
	j->oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY;
	if (!root && !s->opt.follow_symlinks)
		j->oflags |= O_NOFOLLOW;
	j->dev = s->tree.dirs[d].dev;
	j->ino = s->tree.dirs[d].ino;
	/* its subdirectories are at depth + 1: entered while that is within the limit */
	j->recurse = s->tree.args[s->tree.dirs[d].arg].recurse && (s->opt.max_depth < 0 || depth < s->opt.max_depth);
	j->ask = s->cb.dir_filter != NULL;
	j->bytes = dir_bytes;
	w->stack[w->n++] = j;
	/* (a spinning disk is one stream: its directories are listed here; and
	 * while list_ahead's directories wait, each holding a descriptor, the
	 * helpers open none: at most PREFETCH_JOBS are held either way) */
	if (ds_pool_helpers(w->pool) == 0 || dir_bytes <= PREFETCH_MIN_DIR_BYTES || one_stream(w) || w->ahead > 0)
		return 0;
	/* the helpers list it by its path, made here on the caller's thread */
	if (!job_path(s, j))
		return -ENOMEM;
	j->queued = true;
	w->pending++;
	s->reading.dirs_ahead++;
	return ds_pool_queue(w->pool, &j->job);
}

/* j has been taken: its entries and descriptor leave the budget, and it is
 * freed unless the helpers' queue may still point to it. */
static void release(struct walker *w, struct dir_job *j)
{
	ds_pool_release(w->pool, &j->job);
	if (j->queued)
		w->pending--;
	if (j->dh && !j->open_err)
		hold_dir(w, j);
	if (j->dh)
		closedir(j->dh);
	j->dh = NULL;
	free(j->b.e);
	free(j->b.names);
	free(j->b.order);
	free(j->path);
	j->b.e = NULL;
	j->b.names = NULL;
	j->b.order = NULL;
	j->path = NULL;
	if (!j->queued) {
		w->all[j->slot] = NULL;
		free(j);
	}
}

/* Only directories of this size or more are listed ahead: small ones (most
 * of a system tree, a block or two each) lie beside their files' inodes, and
 * listing them apart from their stat calls cost seeks (a copy of /usr on the
 * simulated disk: 45.7 s walked one at a time, 54.1 s all listed ahead). */
#define AHEAD_MIN_DIR_BYTES 16384

struct ahead_entry {
	uint64_t ino;
	uint32_t job, ent;
};

static int cmp_ahead(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ahead_entry *a = pa, *b = pb;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->job != b->job)
		return a->job < b->job ? -1 : 1;
	return a->ent < b->ent ? -1 : a->ent > b->ent;
}

static int cmp_job_ino(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct dir_job *a = *(struct dir_job *const *)pa, *b = *(struct dir_job *const *)pb;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* One stream on a spinning disk: the directories waiting at the top of the
 * stack are listed together, in the order of their inodes, and then all their
 * entries are stat()ed in one inode order. Listing one directory at a time
 * moved the head from its blocks to the inode table and back for each one;
 * this way the inode table is swept once for all of them (100,000 files in
 * 100 directories: 6.6 s -> 4.7 s on the simulated disk). They are still
 * taken one by one in depth-first order. */
static void list_ahead(struct walker *w)
{
	dupscan_scan *s = w->s;
	struct dir_job *jobs[PREFETCH_JOBS];
	size_t nj = 0;
	/* each holds a descriptor until taken: at most PREFETCH_JOBS at once, however deep */
	for (size_t i = w->n; i > 0 && w->ahead + nj < PREFETCH_JOBS; i--)
		if (!w->stack[i - 1]->listed && !w->stack[i - 1]->queued && w->stack[i - 1]->bytes >= AHEAD_MIN_DIR_BYTES)
			jobs[nj++] = w->stack[i - 1];
	if (ds_sort(jobs, nj, sizeof(*jobs), cmp_job_ino, NULL) != 0)
		nj = 1; /* out of memory: just the one on top (any will do) */
	/* what the listing and the stat calls cost together (see one_stream()) */
	struct stat_cost cost;
	cost_begin(&cost);
	size_t total = 0, listed = 0;
	for (; listed < nj && total < AHEAD_ENTRIES; listed++) {
		struct dir_job *j = jobs[listed];
		j->deferred = true;
		list_job(s, j);
		j->deferred = false;
		j->listed = true;
		w->ahead++;
		total += j->b.n;
	}
	struct ahead_entry *e = malloc((total ? total : 1) * sizeof(*e));
	size_t ne = 0;
	for (size_t k = 0; e && k < listed; k++)
		for (size_t x = 0; x < jobs[k]->b.n; x++)
			e[ne++] = (struct ahead_entry){ jobs[k]->b.e[x].ino, (uint32_t)k, (uint32_t)x };
	if (!e || ds_sort(e, ne, sizeof(*e), cmp_ahead, NULL) != 0) {
		/* out of memory: each directory on its own */
		for (size_t k = 0; k < listed; k++)
			stat_batch(&jobs[k]->b);
		free(e);
		return;
	}
	for (size_t i = 0; i < ne; i++) {
		struct stat_batch *b = &jobs[e[i].job]->b;
		if (b->e[e[i].ent].kind == ENT_STAT)
			stat_entry(b, &b->e[e[i].ent]);
	}
	cost_end(&cost, ne);
	watch_cost(w, &cost);
	free(e);
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
		stat_entry(&j->b, we);
		we->kind = ENT_STAT;
	}
	const struct stat *st = &we->st;
	int err = we->kind == ENT_LEFTOVER ? DUPSCAN_E_LEFTOVER : we->err;
	if (err == 0 && S_ISREG(st->st_mode)) {
		err = ds_add_rec(s, name, strlen(name), d, st);
		if (err != -EOVERFLOW) /* a file on a 65,537th device is left out alone */
			return err;
	}
	if (err) {
		*skipped = true;
		/* dangling or looping symlinks are not files */
		if (err != DUPSCAN_E_LEFTOVER && s->opt.follow_symlinks && (err == -ENOENT || err == -ELOOP))
			return 0;
		char *fp = ds_path_in(s, d, name, NULL, 0);
		if (!fp)
			return -ENOMEM;
		ds_report(s, fp, err);
		free(fp);
		return 0;
	}
	if (!S_ISDIR(st->st_mode) || !j->recurse) {
		*skipped = true;
		return 0;
	}
	/* -1: another filesystem mounted here (or reached by a followed symlink)
	 * is not entered, as find -xdev and jdupes do not */
	if (s->opt.one_fs && st->st_dev != s->tree.dirs[d].dev) {
		*skipped = true;
		return 0;
	}
	/* d_type did not say it was a directory: ask the filter now */
	int keep = s->cb.dir_filter && we->d_type != DT_DIR ? dir_filter_keeps(s, d, name) : 1;
	int seen = keep <= 0 ? (keep < 0 ? keep : 1) : ds_seen_add(s, st->st_dev, st->st_ino);
	if (seen < 0)
		return seen;
	if (seen == 1) {
		if (keep == 1)
			*skipped = true; /* a loop, or a directory reached twice */
		return 0;
	}
	uint32_t nd;
	int rc = ds_add_dir(s, name, strlen(name), d, s->tree.dirs[d].arg, st, &nd);
	return rc ? rc : walker_push(w, nd, j->depth + 1, st->st_size);
}

/* Take a listed directory: its entries in listing order, then the rest of
 * it a batch at a time. @return 0 (trouble is reported) or -ENOMEM,
 * DUPSCAN_E_CANCELED. */
static int take_dir(struct walker *w, struct dir_job *j)
{
	dupscan_scan *s = w->s;
	/* taken: no longer one of list_ahead's waiting (its subdirectories may
	 * go to the helpers, see walker_push) */
	if (j->listed)
		w->ahead--;
	/* until it is listed to its end, a directory's content is unknown */
	s->tree.dirs[j->d].incomplete = true;
	int rc = j->fatal;
	if (rc == 0 && j->open_err) {
		if (j->open_err == -ENOMEM || !job_path(s, j))
			rc = -ENOMEM;
		else
			ds_report(s, j->path, j->open_err);
	}
	bool skipped = j->skipped;
	while (rc == 0 && !j->open_err) {
		watch_cost(w, &j->b.cost);
		for (size_t k = 0; k < j->b.n && rc == 0; k++)
			rc = take_entry(w, j, &j->b.e[k], &skipped);
		if (rc == 0 && j->b.read_err)
			rc = job_path(s, j) ? (ds_report(s, j->path, j->b.read_err), 0) : -ENOMEM;
		if (rc || !j->more)
			break;
		list_batch(s, j);
		rc = j->fatal;
		skipped = skipped || j->skipped;
	}
	if (rc == 0 && !j->open_err)
		s->tree.dirs[j->d].incomplete = !j->complete || skipped;
	release(w, j);
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
		s->tree.dirs[d].pseudo = true;
	if (rc == 0 && s->tree.nprotect) {
		char *dir = strndup(path, plen ? plen : 1);
		if (!dir)
			return -ENOMEM;
		if (!plen)
			strcpy(dir, ".");
		s->tree.dirs[d].prot = ds_under_protected(s, dir);
		free(dir);
	}
	if (rc == 0)
		rc = ds_add_rec(s, path + plen, strlen(path + plen), d, st);
	return rc;
}

/* How to read, as far as the added paths tell; matching looks again at the
 * devices of the files it reads. */
static void arg_devices_io(dupscan_scan *s)
{
	uint64_t devs[64];
	size_t n = 0;
	for (uint32_t a = 0; a < s->tree.nargs && n < 64; a++) {
		struct stat st;
		if (stat(s->tree.args[a].path, &st) == 0)
			devs[n++] = (uint64_t)st.st_dev;
	}
	ds_choose_io(s, devs, n);
}

int ds_walk(dupscan_scan *s)
{
	arg_devices_io(s);
	/* the caller's thread and s->opt.threads - 1 helpers; one stream on a
	 * spinning disk, other disks read ahead beside it */
	bool hdd = s->reading.io_mode == DUPSCAN_IO_HDD;
	struct ds_warm **warms = hdd && s->opt.threads > 1 ? calloc(s->tree.nargs + 1, sizeof(*warms)) : NULL;
	if (warms)
		ds_warm_args(s, warms, JOB_WARM);
	/* on a spinning disk the helpers read the other disks ahead, and list
	 * directories only while the metadata met is in memory (one_stream()) */
	int helpers = s->opt.threads - 1;
	struct walker w = { .s = s, .pool = ds_scan_pool(s) };
	if (!w.pool) {
		for (uint32_t a = 0; warms && a < s->tree.nargs; a++)
			free(warms[a]);
		free(warms);
		return -ENOMEM;
	}
	ds_pool_phase(w.pool, list_dir, s, PREFETCH_JOBS, PREFETCH_ENTRIES, helpers);
	int rc = 0;
	/* the last on top: helpers take the next disk's first */
	for (uint32_t a = s->tree.nargs; warms && rc == 0 && a-- > 0;)
		if (warms[a])
			rc = ds_pool_queue(w.pool, &warms[a]->job);
	for (uint32_t a = 0; a < s->tree.nargs && rc == 0; a++) {
		if (s->canceled) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		if (warms && warms[a])
			atomic_store(&warms[a]->stop, true); /* the walk is there */
		const char *path = s->tree.args[a].path;
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
			s->tree.dirs[d].prot = ds_under_protected(s, path);
		if (rc == 0)
			rc = walker_push(&w, d, 0, st.st_size);
		/* depth-first with an explicit stack: no recursion per level */
		while (rc == 0 && w.n > 0) {
			/* (not while directories offered to the helpers wait: see walker_push) */
			if (one_stream(&w) && w.pending == 0 && !w.stack[w.n - 1]->listed &&
			    w.stack[w.n - 1]->bytes >= AHEAD_MIN_DIR_BYTES)
				list_ahead(&w);
			struct dir_job *j = w.stack[--w.n];
			parent_of(&w, j);
			ds_pool_obtain(w.pool, &j->job);
			rc = take_dir(&w, j);
		}
	}
	for (uint32_t a = 0; warms && a < s->tree.nargs; a++)
		if (warms[a])
			atomic_store(&warms[a]->stop, true);
	ds_pool_end_phase(w.pool);
	for (uint32_t a = 0; warms && a < s->tree.nargs; a++)
		free(warms[a]);
	free(warms);
	while (w.nheld > 0)
		closedir(w.held[--w.nheld].dh);
	for (size_t i = 0; i < w.nall; i++) {
		struct dir_job *j = w.all[i];
		if (!j)
			continue;
		if (j->dh)
			closedir(j->dh);
		free(j->b.e);
		free(j->b.names);
		free(j->b.order);
		free(j->path);
		free(j);
	}
	free(w.all);
	free(w.stack);
	/* a fixed point between walking and reading, announced to the caller */
	if (rc == 0 && s->cb.on_progress)
		s->cb.on_progress(s->cb.progress_user, DUPSCAN_PHASE_WALK, s->tree.nrecs, s->tree.nrecs);
	if (rc == 0)
		ds_progress_end(s);
	return rc;
}
