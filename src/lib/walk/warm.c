/* SPDX-License-Identifier: MIT */
/* warm.c: in hdd mode the walk is one stream, argument after argument, so
 * with two disks one would wait while the other's directories are read. An
 * argument on another disk than the first has its directories and inodes
 * read ahead on a helper thread meanwhile (listed, their entries stat()ed in
 * inode order), into the kernel's caches only: the walk itself, when it gets
 * there, finds them there and its result is what it always is. The reading
 * ahead stops when the walk reaches that argument, or is canceled. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "walk/walk.h"
#include "read/read.h"

#define WARM_DEPTH 32u     /* directories held open on the way down, at most */
#define WARM_BATCH 4096u   /* entries of a directory stat()ed in one inode order */

struct warm_ent {
	uint64_t ino;
	size_t name;         /* offset in its frame's names */
	bool dir;
};

static int cmp_warm(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct warm_ent *a = pa, *b = pb;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static bool warm_stop(const struct ds_walk *s, const struct ds_warm *w)
{
	return atomic_load_explicit(&w->stop, memory_order_relaxed) ||
	       atomic_load_explicit(&s->core->canceled, memory_order_relaxed);
}

/* A directory being read ahead: its entries, the next to go down into. */
struct warm_frame {
	DIR *d;
	struct warm_ent *e;
	size_t n, next;
	char *names;         /* the entries' names, one after another */
	size_t nnames;
};

static void frame_free(struct warm_frame *f)
{
	free(f->names);
	free(f->e);
	if (f->d)
		closedir(f->d);
}

/* List the directory open at fd into f and stat() its entries in inode
 * order; the subdirectories on the same device are marked. @return false
 * when it cannot be read (fd is closed then). */
static bool warm_list(const struct ds_walk *s, struct ds_warm *w, int fd, struct warm_frame *f)
{
	*f = (struct warm_frame){ .d = fdopendir(fd) };
	if (!f->d) {
		close(fd);
		return false;
	}
	size_t cap = 0, capnames = 0;
	struct dirent *de;
	while (!warm_stop(s, w) && f->n < WARM_BATCH && (de = readdir(f->d)) != NULL) {
		size_t len = strlen(de->d_name) + 1;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || DS_GROW(f->e, cap, f->n + 1) ||
		    DS_GROW(f->names, capnames, f->nnames + len))
			continue;
		memcpy(f->names + f->nnames, de->d_name, len);
		f->e[f->n++] = (struct warm_ent){ de->d_ino, f->nnames, false };
		f->nnames += len;
	}
	if (ds_sort(f->e, f->n, sizeof(*f->e), cmp_warm, NULL) != 0)
		return true;
	for (size_t i = 0; i < f->n && !warm_stop(s, w); i++) {
		struct stat st;
		f->e[i].dir = fstatat(dirfd(f->d), f->names + f->e[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
			      (uint64_t)st.st_dev == w->dev;
	}
	return true;
}

void ds_warm_run(const struct ds_walk *s, struct ds_warm *w)
{
	struct warm_frame stack[WARM_DEPTH];
	size_t depth = 0;
	struct stat st;
	int fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return;
	}
	w->dev = (uint64_t)st.st_dev;
	if (!warm_list(s, w, fd, &stack[0]))
		return;
	depth = 1;
	/* depth first, with an explicit stack of open directories */
	while (depth > 0) {
		struct warm_frame *f = &stack[depth - 1];
		while (f->next < f->n && !f->e[f->next].dir)
			f->next++;
		if (warm_stop(s, w) || f->next == f->n || depth == WARM_DEPTH) {
			frame_free(f);
			depth--;
			continue;
		}
		int sub = openat(dirfd(f->d), f->names + f->e[f->next++].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0 && warm_list(s, w, sub, &stack[depth]))
			depth++;
	}
}

int ds_warm_args(struct ds_walk *s, struct ds_warm **warms, int kind)
{
	uint64_t disks[64];
	size_t nd = 0;
	int n = 0;
	for (uint32_t a = 0; a < s->tree->nargs; a++) {
		struct stat st;
		warms[a] = NULL;
		if (s->tree->args[a].remote || stat(s->tree->args[a].path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		uint64_t disk = ds_disk(s->reading, (uint64_t)st.st_dev);
		size_t d = 0;
		while (d < nd && disks[d] != disk)
			d++;
		if (d < nd || nd == 64)
			continue;
		disks[nd++] = disk;
		if (nd > 1 && (warms[a] = calloc(1, sizeof(*warms[a]))) != NULL) {
			warms[a]->job.kind = kind;
			warms[a]->path = s->tree->args[a].path;
			n++;
		}
	}
	return n;
}
