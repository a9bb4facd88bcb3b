/* SPDX-License-Identifier: MIT */
/* dirbatch.c: a directory's entries, listed and stat()ed a batch at a time. */
/* d_type (a BSD/glibc extension) saves a stat per FIFO, device or skipped
 * directory */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dirbatch.h"
#include "read/read.h"

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

static int cmp_entry_ino(void *ctx, const void *pa, const void *pb)
{
	const struct stat_batch *b = ctx;
	uint64_t x = b->e[*(const uint32_t *)pa].ino, y = b->e[*(const uint32_t *)pb].ino;
	return x < y ? -1 : x > y;
}

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

void ds_cost_begin(struct stat_cost *c)
{
	c->ns = ds_mono_ns();
	c->inblock = thread_inblock();
	c->n = 0; /* nothing to judge by until cost_end() */
}

void ds_cost_end(struct stat_cost *c, size_t n)
{
	c->ns = ds_mono_ns() - c->ns;
	c->inblock = thread_inblock() - c->inblock;
	c->n = n;
}

/* Read the next batch of j's directory and stat() its entries, unless
 * j->deferred; touches only j (and reads options). */
static void list_batch(const struct ds_walk *s, struct dir_job *j)
{
	struct stat_batch *b = &j->b;
	b->n = b->nnames = 0;
	b->read_err = 0;
	/* the listing counts too: over FUSE or NFS, reading a directory may be
	 * what waits on the disk, and its entries' attributes come with it.
	 * Only hdd mode looks at the cost (one_stream()): elsewhere no clock
	 * and no getrusage() a batch */
	bool watch = s->reading->io_mode == DUPSCAN_IO_HDD;
	if (watch)
		ds_cost_begin(&b->cost);
	else
		b->cost.n = 0; /* nothing to judge by */
	while (b->n < STAT_BATCH) {
		if (atomic_load_explicit(&s->core->canceled, memory_order_relaxed)) {
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
		if (strncmp(name, DS_TEMP_PREFIX, DS_TEMP_PREFIX_LEN) == 0) {
			/* made by an action that was killed between link and rename */
			kind = ENT_LEFTOVER;
			j->skipped = true;
		} else if (s->core->opt.no_hidden && name[0] == '.') {
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
				if (!s->core->opt.follow_symlinks) {
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
		ds_stat_batch(b);
		if (watch)
			ds_cost_end(&b->cost, b->n);
	}
}

void ds_list_batch(const struct ds_walk *s, struct dir_job *j)
{
	/* a batch is one request of NET mode's count */
	int64_t t = ds_net_begin(s->reading);
	list_batch(s, j);
	ds_net_end(s->reading, t, 0);
}

/* stat() one entry b listed. */
void ds_stat_entry(const struct stat_batch *b, struct wentry *we)
{
	we->err = fstatat(b->fd, b->names + we->name, &we->st, b->flags) == 0 ? 0 : -errno;
}

/* stat() the entries a batch listed (none were taken yet). */
void ds_stat_batch(struct stat_batch *b)
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
			ds_stat_entry(b, we);
	}
}

/* j's path, made the first time it is needed. @return it, or NULL. */
const char *ds_job_path(const struct ds_walk *s, struct dir_job *j)
{
	if (!j->path)
		j->path = ds_dir_path(s->tree, j->d);
	return j->path;
}

/* Open j's directory: by its name in its open parent, or else by its path
 * (each open by path costs a lookup per level: quadratic in a deep tree). */
static int open_job(const struct ds_walk *s, struct dir_job *j)
{
	if (j->parent_fd >= 0)
		return openat(j->parent_fd, s->tree->dirs[j->d].name, j->oflags);
	if (!ds_job_path(s, j)) {
		errno = ENOMEM;
		return -1;
	}
	return ds_open_path(j->path, j->oflags);
}

/* Open j's directory and list its first batch. */
void ds_list_job(const struct ds_walk *s, struct dir_job *j)
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
	j->b.flags = s->core->opt.follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW;
	j->b.by_inode = s->reading->io_mode == DUPSCAN_IO_HDD;
	j->more = true;
	ds_list_batch(s, j);
}

void ds_job_free_batch(struct dir_job *j)
{
	free(j->b.e);
	free(j->b.names);
	free(j->b.order);
	free(j->path);
	j->b.e = NULL;
	j->b.names = NULL;
	j->b.order = NULL;
	j->path = NULL;
}
