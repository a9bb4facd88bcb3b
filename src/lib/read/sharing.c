/* SPDX-License-Identifier: MIT */
/* sharing.c: which candidates' filesystems may share blocks (btrfs, XFS,
 * OCFS2, bcachefs: asked once a device), and on a spinning disk the first
 * pass's twins: files of one group whose extent maps agree extent for extent
 * on one filesystem (support/extents.c) hold one content, which the pass and
 * the sweep read once. A snapshot tree read in disk order is then read a
 * file, not a snapshot, at a time. Only files whose first extent FIEMAP
 * called shared while placing them are mapped whole: a tree without shared
 * blocks pays nothing more. (A bucket settled later, off the disk order, is
 * asked by match/twins.c.) */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"
#include "read/read.h"

static int cmp_fsdev(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	const struct ds_fsdev *a = pa, *b = pb;
	return a->devi < b->devi ? -1 : a->devi > b->devi;
}

bool ds_rec_fs(const struct ds_reading *s, uint32_t rec, uint64_t *key)
{
	uint16_t d = ds_rec_devi(s->tree, ds_rec(s->tree, rec));
	size_t lo = 0, hi = s->nfsdevs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->fsdevs[mid].devi < d)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nfsdevs || s->fsdevs[lo].devi != d)
		return false;
	*key = s->fsdevs[lo].key;
	return true;
}

int ds_twins_devices(struct ds_reading *s, const uint32_t *order, size_t n)
{
	if (s->core->remote || s->core->opt.quick || s->core->opt.partial_only)
		return 0;
	uint64_t *asked = calloc(1024, sizeof(*asked)); /* 65,536 bits: device indexes */
	size_t cap = 0;
	int rc = asked ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint16_t d = ds_rec_devi(s->tree, ds_rec(s->tree, order[i]));
		if (asked[d / 64] >> (d % 64) & 1)
			continue;
		asked[d / 64] |= 1ull << (d % 64);
		char *p = ds_rec_path_alloc(s->tree, order[i]);
		uint64_t key;
		if (p && ds_path_fs(p, ds_rec_dev(s->tree, ds_rec(s->tree, order[i])), &key)) {
			if (DS_GROW(s->fsdevs, cap, s->nfsdevs + 1))
				rc = -ENOMEM;
			else
				s->fsdevs[s->nfsdevs++] = (struct ds_fsdev){ d, key };
		}
		free(p);
	}
	free(asked);
	if (rc == 0)
		rc = ds_sort(s->fsdevs, s->nfsdevs, sizeof(*s->fsdevs), cmp_fsdev, NULL);
	return rc;
}

void ds_twins_devices_free(struct ds_reading *s)
{
	free(s->fsdevs);
	s->fsdevs = NULL;
	s->nfsdevs = 0;
}

bool ds_twins_any(const struct ds_reading *s)
{
	return s->nfsdevs > 0;
}

bool ds_map_rec(const struct ds_reading *s, uint32_t rec, int fd, struct ds_extmap *map, uint64_t *fs)
{
	if (!ds_rec_fs(s, rec, fs))
		return false;
	int own = fd >= 0 ? fd : ds_open_scanned(s, rec);
	bool ok = own >= 0 && ds_extent_map(own, map) == 0 && map->proves && map->n > 0;
	if (own >= 0 && own != fd)
		close(own);
	if (!ok)
		ds_extmap_free(map);
	return ok;
}

size_t ds_map_twins(const struct ds_reading *s, const uint32_t *rec, const int *fd, size_t k, uint32_t *first)
{
	struct ds_extmap *map = calloc(k, sizeof(*map));
	uint64_t *fs = calloc(k, sizeof(*fs));
	bool *mapped = calloc(k, sizeof(*mapped));
	size_t n = 0;
	for (size_t x = 0; x < k; x++)
		first[x] = DS_NONE;
	for (size_t x = 0; map && fs && mapped && x < k; x++)
		mapped[x] = ds_map_rec(s, rec[x], fd ? fd[x] : -1, &map[x], &fs[x]);
	/* each against those before it: a twin is a twin of the first file it
	 * agrees with that is none itself (groups are small) */
	for (size_t i = 0; map && fs && mapped && i < k; i++) {
		for (size_t j = 0; mapped[i] && j < i; j++) {
			if (mapped[j] && first[j] == DS_NONE && fs[j] == fs[i] && ds_extmap_same(&map[j], &map[i])) {
				first[i] = (uint32_t)j;
				n++;
				break;
			}
		}
	}
	for (size_t x = 0; map && x < k; x++)
		ds_extmap_free(&map[x]);
	free(map);
	free(fs);
	free(mapped);
	return n;
}

/* The twins among group [first, first + cnt): its files FIEMAP called shared
 * mapped whole. @return 0 or -ENOMEM. */
static int group_twins(struct ds_reading *s, struct ds_first_pass *fp, uint32_t first, uint32_t cnt)
{
	uint32_t *pos = malloc(cnt * sizeof(*pos)), *rec = malloc(cnt * sizeof(*rec));
	uint32_t *of = malloc(cnt * sizeof(*of));
	size_t k = 0;
	int rc = pos && rec && of ? 0 : -ENOMEM;
	for (uint32_t p = first; rc == 0 && p < first + cnt; p++)
		if (fp->state[p] & DS_FP_SHARED && !ds_fp_got(fp, p)) {
			pos[k] = p;
			rec[k++] = fp->order[p];
		}
	if (rc == 0 && k >= 2 && ds_map_twins(s, rec, NULL, k, of) > 0) {
		if (!fp->twin && !(fp->twin = malloc(fp->n * sizeof(*fp->twin))))
			rc = -ENOMEM;
		for (size_t x = 0; rc == 0 && x < k; x++)
			if (of[x] != DS_NONE) {
				fp->twin[pos[x]] = pos[of[x]];
				fp->state[pos[x]] |= DS_FP_TWIN;
			}
		/* read by the pass after all, then swept: its twins left out */
		uint32_t others = 0, lone = DS_NONE;
		for (uint32_t p = first; rc == 0 && p < first + cnt; p++) {
			fp->state[p] &= (unsigned char)~DS_FP_DIRECT;
			if (!ds_fp_twin(fp, p)) {
				others++;
				lone = p;
			}
		}
		/* a snapshot's copies of one file and nothing else of its size:
		 * no head tells it from anything, its first block names its class */
		if (rc == 0 && others == 1 && !ds_fp_got(fp, lone))
			fp->state[lone] |= DS_FP_LONE;
	}
	free(pos);
	free(rec);
	free(of);
	return rc;
}

int ds_pass_twins(struct ds_reading *s, struct ds_first_pass *fp, const uint32_t *groups, size_t ngroups, size_t sweep)
{
	int rc = 0;
	for (size_t g = 0; rc == 0 && ds_twins_any(s) && g < ngroups; g++) {
		uint32_t first = groups[2 * g], cnt = groups[2 * g + 1];
		uint64_t size = ds_rec_msize(s->tree, fp->order[first]);
		/* as the sweep takes them: larger files are settled by their bucket */
		if (cnt >= 2 && size > DS_BLOCK && size <= sweep / 2)
			rc = group_twins(s, fp, first, cnt);
	}
	return rc;
}
