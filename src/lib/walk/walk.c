/* SPDX-License-Identifier: MIT */
/* walk.c: reach every regular file under the added paths, each directory once. */
/* the directories' entries are listed and stat()ed in dirbatch.c; here
 * they are taken in depth-first order */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirbatch.h"
#include "walk/walk.h"
#include "records/spill.h"
#include "read/read.h"

/* The caller's directory filter: @return 1 to walk into dir/name, 0 to prune
 * it, -ENOMEM. */
static int dir_filter_keeps(struct ds_walk *s, uint32_t dir, const char *name)
{
	char stackbuf[4096];
	char *path = ds_path_in(s->tree, dir, name, stackbuf, sizeof(stackbuf));
	if (!path)
		return -ENOMEM;
	int keep = s->core->cb.dir_filter(s->core->cb.dir_filter_user, path, path + ds_rel_offset(s->tree, dir)) != 0;
	if (path != stackbuf)
		free(path);
	return keep;
}

/* ---- walking: directories are listed (opened, read a batch at a time,
 * their entries stat()ed) on any thread, ahead of need when there are helper
 * threads; the caller's thread takes each listing in depth-first order and
 * does everything that is seen from outside (filters, records, reports), so
 * the result is the one-thread walk's whatever the threads do. ---- */

#define PREFETCH_JOBS 64u          /* directories listed ahead, at most: each holds a descriptor */
/* the same on a network filesystem (netwalk.c), where a directory listed to
 * its end gives its descriptor back at once (its subdirectories open by
 * path): only those not listed to their end hold one, and PREFETCH_ENTRIES
 * bounds them (a batch is STAT_BATCH entries) */
#define NET_PREFETCH_JOBS 1024u
/* Entries the helpers listed ahead and the walk has not taken yet, at most:
 * each holds its stat (about 180 bytes), so 16,384 of them are 3 MB; four
 * times as many added to the peak and saved no time (docs/performance.md). */
#define PREFETCH_ENTRIES 16384u

/* hdd mode lists the directories at the top of the walk's stack together,
 * up to this many entries, to stat them in one inode order (list_ahead()) */
#define AHEAD_ENTRIES 65536u

/* Entries listed ahead (of cap) within a memory budget: the walk's share of
 * it (records/spill.h) at 1 KiB an entry (its stat, its name, the batch
 * arrays' doubling), 1,024 at least. */
static unsigned within_budget(const struct ds_walk *s, unsigned cap)
{
	uint64_t most = s->core->opt.max_memory / DS_SPILL_WALK_SHARE / 1024;
	if (!s->tree->spill || most >= cap)
		return cap;
	return most < 1024 ? 1024 : (unsigned)most;
}
/* Handing a directory to another thread costs a few microseconds of locking
 * and cache traffic: more than listing a small one. Only directories larger
 * than their first block (about 100 entries or more on ext4) are listed
 * ahead; on a network filesystem, where listing one waits round trips,
 * every directory is. */
#define PREFETCH_MIN_DIR_BYTES 4096

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
		ds_list_job(ctx, j);
	if (((struct ds_walk *)ctx)->reading->io_mode == DUPSCAN_IO_NET)
		ds_netwalk_spawn(ctx, j);
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
	struct ds_walk *s;
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
 * there is no head to move, and one thread does half the work it could. So
 * each batch is watched, its listing and its stat calls: when they read no
 * block and took at most DS_MEMORY_STAT_NS an entry (a cached stat takes a
 * microsecond or two, one that waits on a disk far more), the directories met next
 * are listed on every thread; the first batch that reads the disk makes the
 * walk one stream again. The listing counts because over FUSE or NFS no
 * block read is counted and the entries' attributes come with the listing
 * (READDIRPLUS): the stat calls after it are quick though the listing
 * waited on the disk. Batches of fewer than MEMORY_MIN_CALLS
 * entries change nothing. */
#define MEMORY_MIN_CALLS 32

bool ds_stats_in_memory(int64_t ns, long inblock, size_t calls, int64_t limit)
{
	return inblock == 0 && ns / (int64_t)(calls ? calls : 1) <= limit;
}

static void watch_cost(struct walker *w, const struct stat_cost *c)
{
	if (c->n >= MEMORY_MIN_CALLS)
		w->in_memory = ds_stats_in_memory(c->ns, c->inblock, c->n, w->s->reading->memory_stat_ns);
}

/* Directories are listed on one thread, in inode order (a spinning disk
 * whose metadata is not all in memory). */
static bool one_stream(const struct walker *w)
{
	return w->s->reading->io_mode == DUPSCAN_IO_HDD && !w->in_memory;
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
	if (!j->queued && !j->listed && w->nheld > 0 && w->held[w->nheld - 1].d == w->s->tree->dirs[j->d].parent)
		j->parent_fd = dirfd(w->held[w->nheld - 1].dh);
}


/* Queue directory d at depth: on the walk's stack, and for the helpers to
 * list ahead when it is large (dir_bytes: its st_size). kid: its job made
 * ahead (netwalk.c), or NULL. */
static int walker_push(struct walker *w, uint32_t d, uint32_t depth, int64_t dir_bytes, struct dir_job *kid)
{
	struct ds_walk *s = w->s;
	if (DS_GROW(w->all, w->capall, w->nall + 1) || DS_GROW(w->stack, w->cap, w->n + 1))
		return -ENOMEM;
	if (kid) {
		kid->slot = w->nall;
		kid->d = d;
		w->all[w->nall++] = kid;
		w->stack[w->n++] = kid;
		w->pending++;
		s->reading->dirs_ahead++;
		/* queued again, on top: the helpers take first what the walk
		 * needs next (not yet started, it would wait behind the
		 * subdirectories of directories listed since, which the walk
		 * reaches later) */
		return ds_pool_queue(w->pool, &kid->job);
	}
	struct dir_job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->slot = w->nall;
	w->all[w->nall++] = j;
	j->d = d;
	j->depth = depth;
	j->parent_fd = -1;
	bool root = s->tree->dirs[d].parent == DS_NONE;
	j->oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY;
	if (!root && !s->core->opt.follow_symlinks)
		j->oflags |= O_NOFOLLOW;
	j->dev = s->tree->dirs[d].dev;
	j->ino = s->tree->dirs[d].ino;
	/* its subdirectories are at depth + 1: entered while that is within the limit */
	j->recurse = s->tree->args[s->tree->dirs[d].arg].recurse && (s->core->opt.max_depth < 0 || depth < s->core->opt.max_depth);
	j->ask = s->core->cb.dir_filter != NULL;
	j->bytes = dir_bytes;
	w->stack[w->n++] = j;
	/* (a spinning disk is one stream: its directories are listed here; and
	 * while list_ahead's directories wait, each holding a descriptor, the
	 * helpers open none: at most PREFETCH_JOBS are held either way) */
	if (ds_pool_helpers(w->pool) == 0 || one_stream(w) || w->ahead > 0 ||
	    (dir_bytes <= PREFETCH_MIN_DIR_BYTES && s->reading->io_mode != DUPSCAN_IO_NET))
		return 0;
	/* the helpers list it by its path, made here on the caller's thread */
	if (!ds_job_path(s, j))
		return -ENOMEM;
	j->queued = true;
	w->pending++;
	s->reading->dirs_ahead++;
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
	ds_job_free_batch(j);
	if (!j->queued) {
		w->all[j->slot] = NULL;
		free(j);
	}
}

/* Only directories of this size or more are listed ahead: small ones (most
 * of a system tree, a block or two each) lie beside their files' inodes, and
 * listing them apart from their stat calls costs seeks. */
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
 * this way the inode table is swept once for all of them. They are still
 * taken one by one in depth-first order. */
static void list_ahead(struct walker *w)
{
	struct ds_walk *s = w->s;
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
	ds_cost_begin(&cost);
	size_t total = 0, listed = 0;
	for (size_t most = within_budget(s, AHEAD_ENTRIES); listed < nj && total < most; listed++) {
		struct dir_job *j = jobs[listed];
		j->deferred = true;
		ds_list_job(s, j);
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
			ds_stat_batch(&jobs[k]->b);
		free(e);
		return;
	}
	for (size_t i = 0; i < ne; i++) {
		struct stat_batch *b = &jobs[e[i].job]->b;
		if (b->e[e[i].ent].kind == ENT_STAT)
			ds_stat_entry(b, &b->e[e[i].ent]);
	}
	ds_cost_end(&cost, ne);
	watch_cost(w, &cost);
	free(e);
}

/* Is a directory entry of type d_type a symlink followed (-s)? 1 yes, 0
 * no, -1 not known (ds_seen_dir() asks lstat() where it matters). */
static int entered_by_link(const struct ds_walk *s, unsigned char d_type)
{
	if (!s->core->opt.follow_symlinks || d_type == DT_DIR)
		return 0;
	return d_type == DT_LNK ? 1 : -1;
}

/* Add one listed entry of directory d (k: its index in j's first batch, else
 * SIZE_MAX): a file record, or a directory to walk. */
static int take_entry(struct walker *w, struct dir_job *j, struct wentry *we, size_t k, bool *skipped)
{
	struct ds_walk *s = w->s;
	uint32_t d = j->d;
	const char *name = j->b.names + we->name;
	if (we->kind == ENT_ASK) {
		int keep = dir_filter_keeps(s, d, name);
		if (keep <= 0)
			return keep; /* pruned: never stat()ed, never opened */
		ds_stat_entry(&j->b, we);
		we->kind = ENT_STAT;
	}
	const struct stat *st = &we->st;
	int err = we->kind == ENT_LEFTOVER ? DUPSCAN_E_LEFTOVER : we->err;
	if (err == 0 && S_ISREG(st->st_mode)) {
		/* past the budget: the records so far go to the spill file first */
		err = ds_spill_room(s->tree);
		if (err == 0)
			err = ds_add_rec(s->tree, name, strlen(name), d, st);
		if (err != -EOVERFLOW) /* a file on a 65,537th device is left out alone */
			return err;
	}
	if (err) {
		*skipped = true;
		/* dangling or looping symlinks are not files */
		if (err != DUPSCAN_E_LEFTOVER && s->core->opt.follow_symlinks && (err == -ENOENT || err == -ELOOP))
			return 0;
		char *fp = ds_path_in(s->tree, d, name, NULL, 0);
		if (!fp)
			return -ENOMEM;
		ds_report(s->core, fp, err);
		free(fp);
		return 0;
	}
	if (!S_ISDIR(st->st_mode) || !j->recurse) {
		*skipped = true;
		return 0;
	}
	/* -1: another filesystem mounted here (or reached by a followed symlink)
	 * is not entered, as find -xdev and jdupes do not */
	if (s->core->opt.one_fs && st->st_dev != s->tree->dirs[d].dev) {
		*skipped = true;
		return 0;
	}
	/* d_type did not say it was a directory: ask the filter now */
	int keep = s->core->cb.dir_filter && we->d_type != DT_DIR ? dir_filter_keeps(s, d, name) : 1;
	int seen = keep <= 0 ? (keep < 0 ? keep : 1) : ds_seen_dir(s->tree, d, name, st, entered_by_link(s, we->d_type));
	if (seen < 0)
		return seen;
	if (seen == 1) {
		if (keep == 1)
			*skipped = true; /* a loop, or a directory reached twice */
		return 0;
	}
	uint32_t nd;
	int rc = ds_add_dir(s->tree, name, strlen(name), d, s->tree->dirs[d].arg, st, &nd);
	return rc ? rc : walker_push(w, nd, j->depth + 1, st->st_size, k == SIZE_MAX ? NULL : ds_netwalk_adopt(j, k));
}

/* Take a listed directory: its entries in listing order, then the rest of
 * it a batch at a time. @return 0 (trouble is reported) or -ENOMEM,
 * DUPSCAN_E_CANCELED. */
static int take_dir(struct walker *w, struct dir_job *j)
{
	struct ds_walk *s = w->s;
	/* taken: no longer one of list_ahead's waiting (its subdirectories may
	 * go to the helpers, see walker_push) */
	if (j->listed)
		w->ahead--;
	/* until it is listed to its end, a directory's content is unknown */
	s->tree->dirs[j->d].incomplete = true;
	int rc = j->fatal;
	if (rc == 0 && j->open_err) {
		if (j->open_err == -ENOMEM || !ds_job_path(s, j))
			rc = -ENOMEM;
		else
			ds_report(s->core, j->path, j->open_err);
	}
	bool skipped = j->skipped;
	for (bool first = true; rc == 0 && !j->open_err; first = false) {
		watch_cost(w, &j->b.cost);
		for (size_t k = 0; k < j->b.n && rc == 0; k++)
			rc = take_entry(w, j, &j->b.e[k], first ? k : SIZE_MAX, &skipped);
		/* the kids made ahead that no entry took (netwalk.c) */
		if (first && j->nkids)
			ds_netwalk_drop(w->pool, j);
		if (rc == 0 && j->b.read_err)
			rc = ds_job_path(s, j) ? (ds_report(s->core, j->path, j->b.read_err), 0) : -ENOMEM;
		if (rc || !j->more)
			break;
		ds_list_batch(s, j);
		rc = j->fatal;
		skipped = skipped || j->skipped;
	}
	if (rc == 0 && !j->open_err)
		s->tree->dirs[j->d].incomplete = !j->complete || skipped;
	release(w, j);
	return rc;
}

/* A file given as an argument hangs off a pseudo-directory holding its prefix. */
static int add_file_arg(struct ds_walk *s, uint32_t arg, const char *path, const struct stat *st)
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
	int rc = ds_add_dir(s->tree, path, plen, DS_NONE, arg, &pst, &d);
	if (rc == 0)
		s->tree->dirs[d].pseudo = true;
	if (rc == 0 && s->tree->nprotect) {
		char *dir = strndup(path, plen ? plen : 1);
		if (!dir)
			return -ENOMEM;
		if (!plen)
			strcpy(dir, ".");
		s->tree->dirs[d].prot = ds_under_protected(s->tree, dir);
		free(dir);
	}
	if (rc == 0)
		rc = ds_spill_room(s->tree);
	if (rc == 0)
		rc = ds_add_rec(s->tree, path + plen, strlen(path + plen), d, st);
	return rc;
}

/* How to read, as far as the added paths tell; matching looks again at the
 * devices of the files it reads. */
static int arg_devices_io(struct ds_walk *s)
{
	uint64_t devs[64];
	size_t n = 0;
	for (uint32_t a = 0; a < s->tree->nargs && n < 64; a++) {
		struct stat st;
		if (s->tree->args[a].remote || stat(s->tree->args[a].path, &st) != 0)
			continue;
		devs[n++] = (uint64_t)st.st_dev;
		ds_device_path(s->reading, (uint64_t)st.st_dev, s->tree->args[a].path);
		if (S_ISDIR(st.st_mode) && s->core->opt.io == DUPSCAN_IO_AUTO)
			ds_probe_net(s->reading, (uint64_t)st.st_dev, s->tree->args[a].path);
	}
	return ds_choose_io(s->reading, devs, n);
}

/* One argument: a file taken as it is, a directory walked depth first with
 * an explicit stack (no recursion per level). @return 0 or an error that
 * ends the walk (what only this argument meets is reported). */
static int walk_arg(struct walker *w, uint32_t a)
{
	struct ds_walk *s = w->s;
	const char *path = s->tree->args[a].path;
	struct stat st;
	/* an argument is followed even without -s, like find -H */
	if (stat(path, &st) != 0) {
		s->tree->args[a].unread = true;
		ds_report(s->core, path, -errno);
		return 0;
	}
	if (S_ISREG(st.st_mode))
		return add_file_arg(s, a, path, &st);
	if (!S_ISDIR(st.st_mode)) {
		s->tree->args[a].unread = true;
		ds_report(s->core, path, DUPSCAN_E_NOTREG);
		return 0;
	}
	int seen = ds_seen_arg(s->tree, a, &st);
	if (seen != 0)
		return seen < 0 ? seen : 0;
	uint32_t d;
	int rc = ds_add_dir(s->tree, path, strlen(path), DS_NONE, a, &st, &d);
	if (rc == 0)
		s->tree->dirs[d].prot = ds_under_protected(s->tree, path);
	if (rc == 0)
		rc = walker_push(w, d, 0, st.st_size, NULL);
	while (rc == 0 && w->n > 0) {
		/* (not while directories offered to the helpers wait: see walker_push) */
		if (one_stream(w) && w->pending == 0 && !w->stack[w->n - 1]->listed &&
		    w->stack[w->n - 1]->bytes >= AHEAD_MIN_DIR_BYTES)
			list_ahead(w);
		struct dir_job *j = w->stack[--w->n];
		parent_of(w, j);
		ds_pool_obtain(w->pool, &j->job);
		rc = take_dir(w, j);
	}
	return rc;
}

/* The walk's directories closed and its jobs freed. */
static void walker_free(struct walker *w)
{
	while (w->nheld > 0)
		closedir(w->held[--w->nheld].dh);
	for (size_t i = 0; i < w->nall; i++) {
		struct dir_job *j = w->all[i];
		if (!j)
			continue;
		ds_netwalk_free(j);
		if (j->dh)
			closedir(j->dh);
		ds_job_free_batch(j);
		free(j);
	}
	free(w->all);
	free(w->stack);
}

static void warms_free(struct ds_warm **warms, uint32_t n)
{
	for (uint32_t a = 0; warms && a < n; a++)
		free(warms[a]);
	free(warms);
}

int ds_walk(struct ds_walk *s)
{
	int rc = arg_devices_io(s);
	if (rc == 0)
		rc = ds_roots_note_args(s->tree);
	/* what matching will add to a record depends on how it reads */
	if (s->tree->spill)
		ds_spill_mode(s->tree, s->reading->io_mode == DUPSCAN_IO_HDD);
	if (rc)
		return rc;
	/* the caller's thread and s->core->opt.threads - 1 helpers; one stream on a
	 * spinning disk, other disks read ahead beside it */
	bool hdd = s->reading->io_mode == DUPSCAN_IO_HDD;
	struct ds_warm **warms = hdd && s->core->opt.threads > 1 ? calloc(s->tree->nargs + 1, sizeof(*warms)) : NULL;
	if (warms)
		ds_warm_args(s, warms, JOB_WARM);
	/* on a spinning disk the helpers read the other disks ahead, and list
	 * directories only while the metadata met is in memory (one_stream()) */
	int helpers = ds_readers(s->reading) - 1;
	struct walker w = { .s = s, .pool = ds_scan_pool(s->core) };
	if (!w.pool) {
		warms_free(warms, s->tree->nargs);
		return -ENOMEM;
	}
	ds_pool_phase(w.pool, list_dir, s, s->reading->io_mode == DUPSCAN_IO_NET ? NET_PREFETCH_JOBS : PREFETCH_JOBS,
		      within_budget(s, PREFETCH_ENTRIES), helpers);
	ds_pool_cap(w.pool, ds_net_cap(s->reading));
	ds_netio_phase(s->reading->net);
	/* the last on top: helpers take the next disk's first */
	for (uint32_t a = s->tree->nargs; warms && rc == 0 && a-- > 0;)
		if (warms[a])
			rc = ds_pool_queue(w.pool, &warms[a]->job);
	for (uint32_t a = 0; a < s->tree->nargs && rc == 0; a++) {
		if (s->core->canceled) {
			rc = DUPSCAN_E_CANCELED;
			break;
		}
		if (warms && warms[a])
			atomic_store(&warms[a]->stop, true); /* the walk is there */
		if (!s->tree->args[a].remote)
			rc = walk_arg(&w, a);
	}
	for (uint32_t a = 0; warms && a < s->tree->nargs; a++)
		if (warms[a])
			atomic_store(&warms[a]->stop, true);
	ds_pool_end_phase(w.pool);
	warms_free(warms, s->tree->nargs);
	walker_free(&w);
	/* a fixed point between walking and reading, announced to the caller */
	if (rc == 0 && s->core->cb.on_progress)
		s->core->cb.on_progress(s->core->cb.progress_user, DUPSCAN_PHASE_WALK, ds_spill_found(s->tree),
					ds_spill_found(s->tree));
	if (rc == 0)
		ds_progress_end(s->core);
	return rc;
}
