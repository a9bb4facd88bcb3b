/* SPDX-License-Identifier: MIT */
/* shared.c: what the copies already share (dupscan_find_shared()). A copy
 * made by a reflink, a snapshot or an earlier dedupe holds no block of its
 * own: its set occupies the blocks of all its files, each counted once, and
 * only what exceeds one copy could be won. The filesystem's extent maps say
 * which blocks; a file whose map proves nothing (compressed, inline,
 * delayed, unknown extents), another host's file, or one on a filesystem
 * that never shares blocks occupies its whole size. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"

struct occupancy {
	struct ds_range *r;
	size_t n, cap;
	uint64_t apart;       /* bytes counted whole: no block address proves them shared */
	struct ds_extmap map; /* scratch */
	struct devshare { uint64_t dev; bool shares; } *devs; /* each device asked once */
	size_t ndevs, capdevs;
};

/* Can f's filesystem share blocks? Asked once a device, by statfs(2) on the
 * file's path: no file on a filesystem that cannot (ext4, NFS, tmpfs...) is
 * opened for this. */
static bool may_share(struct occupancy *o, const dupscan_file *f)
{
	uint64_t dev = dupscan_file_dev(f);
	for (size_t i = 0; i < o->ndevs; i++)
		if (o->devs[i].dev == dev)
			return o->devs[i].shares;
	struct statfs sf;
	bool shares = statfs(dupscan_file_path(f), &sf) == 0 && ds_fs_type_shares((unsigned long)sf.f_type);
	if (DS_GROW(o->devs, o->capdevs, o->ndevs + 1) == 0)
		o->devs[o->ndevs++] = (struct devshare){ dev, shares };
	return shares;
}

/* One file's extents as ranges of its filesystem's blocks, up to its size. */
static int add_file(struct occupancy *o, const dupscan_file *f)
{
	uint64_t size = dupscan_file_size(f);
	int fd = dupscan_file_host(f) || !may_share(o, f) ? -1 :
		 open(dupscan_file_path(f), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == dupscan_file_dev(f) &&
		  (uint64_t)st.st_ino == dupscan_file_ino(f) && (uint64_t)st.st_size == size &&
		  ds_extent_map(fd, &o->map) == 0;
	uint64_t fs = ok ? ds_fs_key(fd, st.st_dev) : 0, mapped = 0;
	for (size_t i = 0; ok && i < o->map.n; i++) {
		const struct ds_extent *e = &o->map.v[i];
		if (e->logical >= size)
			break;
		uint64_t len = e->length < size - e->logical ? e->length : size - e->logical;
		mapped += len;
		if (e->flags & DS_EXTENT_UNPROVEN) {
			o->apart += len;
			continue;
		}
		if (DS_GROW(o->r, o->cap, o->n + 1)) {
			close(fd);
			return -ENOMEM;
		}
		o->r[o->n++] = (struct ds_range){ fs, e->physical, len };
	}
	/* a hole is counted as the file's own: it is no block another file
	 * shares (and a file the map could not tell, all of it) */
	o->apart += ok ? size - mapped : size;
	if (fd >= 0)
		close(fd);
	return 0;
}

/* The bytes of set's files that lie in blocks another of its files holds
 * too, up to what its copies waste (the size of all but one). */
static int set_shared(struct occupancy *o, const dupscan_set *set, uint64_t *shared)
{
	o->n = 0;
	o->apart = 0;
	*shared = 0;
	if (set->dirs || set->count < 2)
		return 0;
	uint64_t size = dupscan_file_size(&set->files[0]), occupied = 0;
	for (size_t k = 0; k < set->count; k++) {
		int rc = add_file(o, &set->files[k]);
		if (rc)
			return rc;
	}
	int rc = ds_occupied(o->r, o->n, &occupied);
	uint64_t all = size * set->count, waste = size * (set->count - 1);
	occupied += o->apart;
	if (rc == 0 && occupied < all)
		*shared = all - occupied < waste ? all - occupied : waste;
	return rc;
}

DUPSCAN_API int dupscan_find_shared(dupscan_scan *s)
{
	if (!s)
		return -EINVAL;
	if (!s->ran)
		return DUPSCAN_E_STATE;
	if (s->shared)
		return 0;
	/* (apart from the sets: a figure asked for now and then costs no set
	 * of a scan that never asks any) */
	uint64_t *shared = calloc(s->nsets ? s->nsets : 1, sizeof(*shared));
	struct occupancy o = { 0 };
	int rc = shared ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < s->nsets; i++)
		rc = set_shared(&o, &s->sets[i], &shared[i]);
	free(o.r);
	free(o.devs);
	ds_extmap_free(&o.map);
	if (rc)
		free(shared);
	else
		s->shared = shared;
	return rc;
}

DUPSCAN_API uint64_t dupscan_set_shared_bytes(const dupscan_scan *s, size_t i)
{
	return s && s->shared && i < s->nsets ? s->shared[i] : 0;
}
