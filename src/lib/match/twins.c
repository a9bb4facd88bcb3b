/* SPDX-License-Identifier: MIT */
/* twins.c: files one content without reading them. A reflink copy, a
 * snapshot's file or an earlier dedupe's result maps every byte to the
 * blocks of the file it shares them with: where the extent maps of two files
 * of one bucket (one size, equal first blocks) agree extent for extent
 * (address, offset, length; none unknown, delayed, unwritten, inline or
 * compressed) on one filesystem (a btrfs filesystem's subvolumes and
 * snapshots are one), their bytes are the same bytes. Such a file is taken
 * out of its bucket before the bucket is read, a twin of the first of them
 * in the bucket's order, and joins that file's class afterwards (a class of
 * their own where it turned out unique). A snapshot tree is then read a
 * first block a file, not whole once a snapshot. The maps are asked only of
 * a bucket about to be read whole (a file past its first block, nothing
 * settled by the cache or the sweep), and only on filesystems that share
 * blocks: a tree without shared blocks pays an ioctl a file it reads whole. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "match/match.h"
#include "match/twins.h"
#include "read/read.h"

struct mapped {
	size_t x;             /* the member */
	uint64_t fs;          /* ds_path_fs()'s key */
	struct ds_extmap map;
};

static int cmp_fsdev(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_fsdev *a = pa, *b = pb;
	return a->devi < b->devi ? -1 : a->devi > b->devi;
}

/* The filesystem key of record rec's device, when it may share blocks. */
static bool fs_of(const dupscan_scan *s, uint32_t rec, uint64_t *key)
{
	uint16_t d = ds_rec_devi(s, ds_rec(s, rec));
	size_t lo = 0, hi = s->reading.nfsdevs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->reading.fsdevs[mid].devi < d)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->reading.nfsdevs || s->reading.fsdevs[lo].devi != d)
		return false;
	*key = s->reading.fsdevs[lo].key;
	return true;
}

int ds_twins_devices(dupscan_scan *s, const uint32_t *order, size_t n)
{
	if (s->nremotes || s->opt.quick || s->opt.partial_only)
		return 0;
	uint64_t *asked = calloc(1024, sizeof(*asked)); /* 65,536 bits: device indexes */
	size_t cap = 0;
	int rc = asked ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint16_t d = ds_rec_devi(s, ds_rec(s, order[i]));
		if (asked[d / 64] >> (d % 64) & 1)
			continue;
		asked[d / 64] |= 1ull << (d % 64);
		char *p = ds_rec_path_alloc(s, order[i]);
		uint64_t key;
		if (p && ds_path_fs(p, ds_rec_dev(s, ds_rec(s, order[i])), &key)) {
			if (DS_GROW(s->reading.fsdevs, cap, s->reading.nfsdevs + 1))
				rc = -ENOMEM;
			else
				s->reading.fsdevs[s->reading.nfsdevs++] = (struct ds_fsdev){ d, key };
		}
		free(p);
	}
	free(asked);
	if (rc == 0)
		rc = ds_sort(s->reading.fsdevs, s->reading.nfsdevs, sizeof(*s->reading.fsdevs), cmp_fsdev, NULL);
	return rc;
}

void ds_twins_devices_free(dupscan_scan *s)
{
	free(s->reading.fsdevs);
	s->reading.fsdevs = NULL;
	s->reading.nfsdevs = 0;
}

bool ds_twins_any(const dupscan_scan *s)
{
	return s->reading.nfsdevs > 0;
}

/* Member m's extent map, when its filesystem may share blocks (no file on
 * another is opened for it) and the map proves something. @return true with
 * *out filled. */
static bool map_member(const dupscan_scan *s, const struct ds_member *m, struct mapped *out)
{
	if (!fs_of(s, m->rec, &out->fs))
		return false;
	int fd = m->fd >= 0 ? m->fd : ds_open_scanned(s, m->rec);
	bool ok = fd >= 0 && ds_extent_map(fd, &out->map) == 0 && out->map.proves && out->map.n > 0;
	if (fd >= 0 && fd != m->fd)
		close(fd);
	return ok;
}

size_t ds_bucket_twins(struct ds_ctx *c, struct ds_member *m, size_t k, uint64_t *full, struct known *kn,
		       struct ds_twinset *tw)
{
	tw->n = 0;
	struct mapped *mp = calloc(k, sizeof(*mp));
	if (!mp)
		return k; /* (out of memory: the bucket is read as ever) */
	size_t nm = 0;
	for (size_t x = 0; x < k; x++) {
		mp[nm].x = x;
		if (map_member(c->s, &m[x], &mp[nm]))
			nm++;
		else
			ds_extmap_free(&mp[nm].map);
	}
	bool *twin = calloc(k, sizeof(*twin));
	/* each mapped member against the mapped ones before it: buckets are
	 * small, and a twin is a twin of the first file it agrees with */
	for (size_t i = 0; twin && i < nm; i++) {
		for (size_t j = 0; j < i; j++) {
			if (twin[mp[j].x] || mp[j].fs != mp[i].fs || !ds_extmap_same(&mp[j].map, &mp[i].map))
				continue;
			if (DS_GROW(tw->v, tw->cap, tw->n + 1))
				break;
			tw->v[tw->n++] = (struct ds_twin){ m[mp[i].x].rec, m[mp[j].x].rec, m[mp[i].x].fd };
			twin[mp[i].x] = true;
			break;
		}
	}
	for (size_t i = 0; i < nm; i++)
		ds_extmap_free(&mp[i].map);
	free(mp);
	size_t kept = 0;
	for (size_t x = 0; x < k; x++) {
		if (twin && twin[x])
			continue;
		m[kept] = m[x];
		if (full)
			full[kept] = full[x];
		if (kn)
			kn[kept] = kn[x];
		kept++;
	}
	free(twin);
	for (size_t i = 0; i < tw->n; i++)
		if (tw->v[i].fd >= 0) /* (held from the first read: no lockstep owns it now) */
			close(tw->v[i].fd);
	return kept;
}

/* Where the first's insert is among those from first_ins on: its class and
 * hashes. @return false when it joined no class. */
static bool class_of(const struct ds_result *r, size_t first_ins, uint32_t rec, struct ds_insert *out, bool *unhashed)
{
	for (size_t i = first_ins; i < r->nins; i++) {
		struct ds_insert in = ds_result_ins(r, i);
		if (in.rec == rec) {
			*out = in;
			*unhashed = ds_result_ins_unhashed(r, i);
			return true;
		}
	}
	return false;
}

int ds_twins_join(struct ds_ctx *c, size_t first_ins, const struct ds_twinset *tw, uint64_t partial)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < tw->n; i++) {
		uint32_t first = tw->v[i].first;
		struct ds_insert in;
		bool unhashed;
		if (ds_rec(c->s, first)->flags & DS_F_DROPPED)
			continue; /* (it failed: its twins are unread, in no set, and said unique nowhere) */
		if (class_of(c->res, first_ins, first, &in, &unhashed)) {
			const struct ds_hash_pair *hp = &c->res->pairs[in.pair];
			rc = unhashed ? ds_result_insert_unhashed(c, tw->v[i].rec, in.cls, hp->partial)
				      : ds_result_insert(c, tw->v[i].rec, in.cls, hp->partial, hp->full);
			continue;
		}
		/* unique among the files read: a class of its own with its twins,
		 * whose full hash nobody read (the cache keeps none of it) */
		rc = ds_result_insert_unhashed(c, first, first, partial);
		if (rc == 0)
			rc = ds_result_insert_unhashed(c, tw->v[i].rec, first, partial);
	}
	return rc;
}
