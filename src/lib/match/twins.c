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
#include <stdlib.h>
#include <unistd.h>

#include "match/match.h"
#include "match/twins.h"
#include "read/read.h"

/* Members m[0..k) without those marked in twin[] (full and kn, when given,
 * kept in step); a twin's fd, held from its first read, is closed (no
 * lockstep owns it now). @return how many are left. */
static size_t drop_twins(struct ds_member *m, size_t k, uint64_t *full, struct known *kn, const bool *twin)
{
	size_t kept = 0;
	for (size_t x = 0; x < k; x++) {
		if (twin[x]) {
			if (m[x].fd >= 0)
				close(m[x].fd);
			continue;
		}
		m[kept] = m[x];
		if (full)
			full[kept] = full[x];
		if (kn)
			kn[kept] = kn[x];
		kept++;
	}
	return kept;
}

/* Note member x a twin of the member whose record is first. @return false
 * when out of memory (x stays). */
static bool add_twin(struct ds_twinset *tw, const struct ds_member *m, uint32_t first)
{
	if (DS_GROW(tw->v, tw->cap, tw->n + 1))
		return false;
	tw->v[tw->n++] = (struct ds_twin){ m->rec, first };
	return true;
}

size_t ds_bucket_twins(struct ds_ctx *c, struct ds_member *m, size_t k, uint64_t *full, struct known *kn,
		       struct ds_twinset *tw)
{
	uint32_t *rec = malloc(k * sizeof(*rec)), *first = malloc(k * sizeof(*first));
	int *fd = malloc(k * sizeof(*fd));
	bool *twin = calloc(k, sizeof(*twin));
	for (size_t x = 0; rec && fd && x < k; x++) {
		rec[x] = m[x].rec;
		fd[x] = m[x].fd;
	}
	if (rec && first && fd && twin && ds_map_twins(c->s->reading, rec, fd, k, first) > 0)
		for (size_t x = 0; x < k; x++)
			twin[x] = first[x] != DS_NONE && add_twin(tw, &m[x], m[first[x]].rec);
	free(rec);
	free(first);
	free(fd);
	/* (out of memory: the bucket is read as ever) */
	size_t kept = twin ? drop_twins(m, k, full, kn, twin) : k;
	free(twin);
	return kept;
}

size_t ds_pass_twins_take(struct ds_ctx *c, size_t base, struct ds_member *m, size_t k, uint64_t *full,
			  struct known *kn, struct ds_twinset *tw)
{
	const struct ds_first_pass *fp = c->s->reading->first_pass;
	if (!fp || !fp->twin)
		return k;
	bool *twin = calloc(k, sizeof(*twin));
	for (size_t x = 0; twin && x < k; x++) {
		size_t p = base + m[x].hidx;
		twin[x] = ds_fp_twin(fp, p) && add_twin(tw, &m[x], fp->order[fp->twin[p]]);
	}
	size_t kept = twin ? drop_twins(m, k, full, kn, twin) : k;
	free(twin);
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
		if (ds_rec(c->s->tree, first)->flags & DS_F_DROPPED)
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
