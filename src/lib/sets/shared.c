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
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "sets/tally.h"

struct occupancy {
	struct ds_range *r;
	uint32_t *owner;      /* by range: its file in the set */
	size_t n, cap, capowner;
	uint64_t apart;       /* bytes counted whole: no block address proves them shared */
	struct ds_extmap map; /* scratch */
	struct devshare { uint64_t dev, key; bool shares; } *devs; /* each device asked once */
	size_t ndevs, capdevs;
};

/* Can f's filesystem share blocks, and which is it (*key)? Asked once a
 * device (ds_path_fs()): no file on a filesystem that cannot (ext4, NFS,
 * tmpfs...) is opened for this. */
static bool may_share(struct occupancy *o, const dupscan_file *f, uint64_t *key)
{
	uint64_t dev = ds_rec_dev(f->tree, f->rec);
	for (size_t i = 0; i < o->ndevs; i++)
		if (o->devs[i].dev == dev) {
			*key = o->devs[i].key;
			return o->devs[i].shares;
		}
	bool shares = ds_path_fs(f->path, dev, key);
	if (DS_GROW(o->devs, o->capdevs, o->ndevs + 1) == 0)
		o->devs[o->ndevs++] = (struct devshare){ dev, shares ? *key : 0, shares };
	return shares;
}

/* One file's extents as ranges of its filesystem's blocks, up to its size. */
static int add_file(struct occupancy *o, const dupscan_file *f, uint32_t file)
{
	uint64_t size = ds_rec_size(f->tree, f->rec);
	uint64_t fs = 0, mapped = 0;
	/* (another host's file: f->tree->host; its blocks are not this host's) */
	int fd = f->tree->host || !may_share(o, f, &fs) ? -1 :
		 open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == ds_rec_dev(f->tree, f->rec) &&
		  (uint64_t)st.st_ino == ds_rec_ino(f->tree, f->rec) && (uint64_t)st.st_size == size &&
		  ds_extent_map(fd, &o->map) == 0;
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
		if (DS_GROW(o->r, o->cap, o->n + 1) || DS_GROW(o->owner, o->capowner, o->n + 1)) {
			close(fd);
			return -ENOMEM;
		}
		o->owner[o->n] = file;
		o->r[o->n++] = (struct ds_range){ fs, e->physical, len };
	}
	/* a hole is counted as the file's own: it is no block another file
	 * shares (and a file the map could not tell, all of it) */
	o->apart += ok ? size - mapped : size;
	if (fd >= 0)
		close(fd);
	return 0;
}

struct event {
	uint64_t fs, pos;
	uint32_t file;
	int32_t delta;        /* +1 a range starts, -1 it ends */
};

static int cmp_event(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct event *a = pa, *b = pb;
	if (a->fs != b->fs)
		return a->fs < b->fs ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->delta - b->delta; /* ends first: ranges that only touch share nothing */
}

/* Each file's bytes (of k) in blocks another file of the set holds too: one
 * sweep along the addresses; g grows by the length of every stretch two
 * files or more cover, and a file takes what g grew while it covered it.
 * @return 0 or -ENOMEM. */
static int per_file(const struct occupancy *o, size_t k, uint64_t *shared)
{
	struct event *ev = malloc((o->n ? 2 * o->n : 1) * sizeof(*ev));
	uint32_t *cnt = calloc(k, sizeof(*cnt));
	uint64_t *from = calloc(k, sizeof(*from));
	int rc = ev && cnt && from ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < o->n; i++) {
		ev[2 * i] = (struct event){ o->r[i].fs, o->r[i].start, o->owner[i], 1 };
		ev[2 * i + 1] = (struct event){ o->r[i].fs, o->r[i].start + o->r[i].len, o->owner[i], -1 };
	}
	if (rc == 0)
		rc = ds_sort(ev, 2 * o->n, sizeof(*ev), cmp_event, NULL);
	uint64_t g = 0, at = 0;
	size_t active = 0;
	for (size_t i = 0; rc == 0 && i < 2 * o->n; i++) {
		if (active >= 2)
			g += ev[i].pos - at; /* (active is 0 where one filesystem's addresses end) */
		at = ev[i].pos;
		uint32_t f = ev[i].file;
		if (ev[i].delta > 0 && cnt[f]++ == 0) {
			from[f] = g;
			active++;
		} else if (ev[i].delta < 0 && --cnt[f] == 0) {
			shared[f] += g - from[f];
			active--;
		}
	}
	free(ev);
	free(cnt);
	free(from);
	return rc;
}

/* The bytes of set's files that lie in blocks another of its files holds
 * too, up to what its copies waste (the size of all but one); and each
 * file's such bytes into files[0..count). */
static int set_shared(struct occupancy *o, const dupscan_set *set, uint64_t *shared, uint64_t *files)
{
	o->n = 0;
	o->apart = 0;
	*shared = 0;
	if (set->dirs || set->count < 2)
		return 0;
	uint64_t size = ds_set_size(set), occupied = 0;
	for (size_t k = 0; k < set->count; k++) {
		int rc = add_file(o, &set->files[k], (uint32_t)k);
		if (rc)
			return rc;
	}
	int rc = per_file(o, set->count, files);
	for (size_t k = 0; k < set->count; k++)
		files[k] = files[k] < size ? files[k] : size;
	if (rc == 0)
		rc = ds_occupied(o->r, o->n, &occupied);
	uint64_t all = size * set->count, waste = size * (set->count - 1);
	occupied += o->apart;
	if (rc == 0 && occupied < all)
		*shared = all - occupied < waste ? all - occupied : waste;
	return rc;
}

int ds_find_shared(struct ds_results *s)
{
	if (!s)
		return -EINVAL;
	if (!s->core->ran)
		return DUPSCAN_E_STATE;
	if (s->shared)
		return 0;
	/* (apart from the sets: a figure asked for now and then costs no set
	 * of a scan that never asks any) */
	size_t nfiles = 0;
	for (size_t i = 0; i < s->nsets; i++)
		nfiles += s->sets[i].count;
	uint64_t *shared = calloc(s->nsets ? s->nsets : 1, sizeof(*shared));
	uint64_t *files = calloc(nfiles ? nfiles : 1, sizeof(*files));
	struct occupancy o = { 0 };
	int rc = shared && files ? 0 : -ENOMEM;
	for (size_t i = 0, off = 0; rc == 0 && i < s->nsets; off += s->sets[i++].count)
		rc = set_shared(&o, &s->sets[i], &shared[i], files + off);
	free(o.r);
	free(o.owner);
	free(o.devs);
	ds_extmap_free(&o.map);
	if (rc) {
		free(shared);
		free(files);
		return rc;
	}
	s->shared = shared;
	s->shared_files = files;
	return ds_tally_shared(s); /* (a tally made before: its column now) */
}

uint64_t ds_set_shared_bytes(const struct ds_results *s, size_t i)
{
	return s && s->shared && i < s->nsets ? s->shared[i] : 0;
}
