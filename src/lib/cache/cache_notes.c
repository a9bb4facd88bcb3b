/* SPDX-License-Identifier: MIT */
/* cache_notes.c: this run's notes as cache entries, for the save
 * (cache_save.c) and, in a spilled scan, each band's end (cache_bands.c):
 * sorted by inode, the first of each inode with the proof it is saved with,
 * and its absolute path. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "internal.h"
#include "support/support.h"
#include "records/records.h"

/* This run's notes by inode, those with a full hash first, else in the order
 * noted: 16 bytes a note sorted in place, not a copy of each. The devices are
 * ranked by number (a scan meets few), the notes spread by that rank in the
 * order noted, each device's run sorted on (inode, no full hash, note), and
 * the notes moved to their places along the permutation's cycles. */
static int sort_seen(const struct ds_cache_state *s, struct ds_cache *run)
{
	size_t n = run->nnoted, ndev = s->tree->devs.n ? s->tree->devs.n : 1;
	struct ds_keypos *kp = ds_big_alloc((n ? n : 1) * sizeof(*kp));
	struct ds_keypos *dk = malloc(ndev * sizeof(*dk));
	size_t *at = calloc(ndev + 1, sizeof(*at));
	int rc = kp && dk && at ? 0 : -ENOMEM;
	for (size_t d = 0; rc == 0 && d < s->tree->devs.n; d++)
		dk[d] = (struct ds_keypos){ s->tree->devs.key[2 * d], d };
	if (rc == 0)
		ds_sort_by_key(dk, s->tree->devs.n);
	/* each device's rank; at[rank]: where its notes begin, then end */
	size_t *devrank = rc == 0 ? malloc(ndev * sizeof(*devrank)) : NULL;
	if (rc == 0 && !devrank)
		rc = -ENOMEM;
	for (size_t k = 0; rc == 0 && k < s->tree->devs.n; k++)
		devrank[dk[k].pos] = k;
	for (size_t i = 0; rc == 0 && i < n; i++)
		at[devrank[ds_rec_devi(s->tree, ds_rec(s->tree, run->noted[i].rec))] + 1]++;
	for (size_t k = 1; rc == 0 && k <= ndev; k++)
		at[k] += at[k - 1];
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct ds_rec *r = ds_rec(s->tree, run->noted[i].rec);
		size_t d = devrank[ds_rec_devi(s->tree, r)];
		kp[at[d]++] = (struct ds_keypos){ ds_rec_ino(s->tree, r), (uint64_t)!run->noted[i].has_full << 32 | i };
	}
	/* at[d] is now where device d's run ends */
	for (size_t d = 0, from = 0; rc == 0 && d < ndev; from = at[d++])
		ds_sort_by_key(kp + from, at[d] - from);
	/* place k takes note kp[k].pos; bit 63 marks a place filled */
	for (size_t k = 0; rc == 0 && k < n; k++) {
		if (kp[k].pos >> 63)
			continue;
		struct ds_hashed first = run->noted[k];
		size_t j = k;
		for (;;) {
			size_t from = (uint32_t)kp[j].pos;
			kp[j].pos |= 1ull << 63;
			if (from == k) {
				run->noted[j] = first;
				break;
			}
			run->noted[j] = run->noted[from];
			j = from;
		}
	}
	ds_big_free(kp, (n ? n : 1) * sizeof(*kp));
	free(dk);
	free(at);
	free(devrank);
	return rc;
}

/* ---- proofs ---- */

static bool same_inode(const struct ds_cache_state *s, uint32_t a, uint32_t b)
{
	const struct ds_rec *ra = ds_rec(s->tree, a), *rb = ds_rec(s->tree, b);
	return ds_rec_devi(s->tree, ra) == ds_rec_devi(s->tree, rb) && ds_rec_ino(s->tree, ra) == ds_rec_ino(s->tree, rb);
}

static int cmp_proved_plain(const void *pa, const void *pb)
{
	const struct ds_proved *a = pa, *b = pb;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static int cmp_proved(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	return cmp_proved_plain(pa, pb);
}

/* The proof this run gave anew to the inode of notes h[i..) (ds_note_proofs()), or NULL. */
static const struct ds_proved *decided(const struct ds_cache_state *s, const struct ds_cache *run, size_t i)
{
	const struct ds_hashed *h = run->noted;
	if (run->nproved == 0)
		return NULL;
	for (size_t j = i; j < run->nnoted && (j == i || same_inode(s, h[j].rec, h[i].rec)); j++) {
		struct ds_proved key = { 0, h[j].rec, 0 };
		const struct ds_proved *p = bsearch(&key, run->proved, run->nproved, sizeof(key), cmp_proved_plain);
		if (p)
			return p;
	}
	return NULL;
}

/* The proof each note is saved with (notes sorted, the first of each inode
 * counts): the one its bucket gave it anew this run (ds_note_proofs()), unless
 * the file dropped out since; else a proof that still holds; else none,
 * its hashes keeping the time they were worked out. @return 0 or -ENOMEM. */
static int assign_proofs(struct ds_cache_state *s, struct ds_cache *run)
{
	const struct ds_hashed *h = run->noted;
	size_t n = run->nnoted;
	run->proofs = calloc(n ? n : 1, sizeof(*run->proofs));
	int rc = !run->proofs ? -ENOMEM
		 : run->nproved ? ds_sort(run->proved, run->nproved, sizeof(*run->proved), cmp_proved, NULL) : 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i > 0 && same_inode(s, h[i - 1].rec, h[i].rec))
			continue;
		const struct ds_proved *now = decided(s, run, i);
		struct ds_proof old;
		if (now && !(ds_rec(s->tree, h[i].rec)->flags & DS_F_DROPPED)) {
			run->proofs[i] = (struct proof){ now->cls, s->start_ns, (now->how & DS_PROVED_APART) != 0,
							 (now->how & DS_PROVED_ALONE) != 0 };
		} else if (ds_cache_proof(s, h[i].rec, &old)) {
			run->proofs[i] = (struct proof){ old.cls, old.at, old.apart, old.alone };
		} else {
			const struct cache_hit *e = h[i].cached ? ds_cache_entry_of(s, h[i].rec) : NULL;
			run->proofs[i] = (struct proof){ 0, e ? e->at_ns : s->start_ns, false, false };
		}
	}
	return rc;
}

int ds_cache_order_notes(struct ds_cache_state *s, struct ds_cache *run)
{
	free(run->proofs);
	run->proofs = NULL;
	int rc = sort_seen(s, run);
	return rc ? rc : assign_proofs(s, run);
}

void ds_cache_note_entry(const struct ds_cache_state *s, const struct ds_cache *run, size_t i, struct cache_entry *e)
{
	const struct ds_hashed *h = &run->noted[i];
	const struct ds_rec *r = ds_rec(s->tree, h->rec);
	const struct proof *pf = &run->proofs[i];
	*e = (struct cache_entry){ ds_rec_dev(s->tree, r), ds_rec_ino(s->tree, r), ds_rec_size(s->tree, r), r->mtime_ns,
				   r->ctime_ns, h->partial, h->full, pf->cls, pf->at,
				   (h->has_full ? F_FULL : 0) | (pf->cls ? F_PROVEN : 0) | (pf->cls && pf->apart ? F_APART : 0) |
					   (pf->cls && pf->alone ? F_ALONE : 0), 0 };
}

bool ds_cache_note_path(const struct ds_cache_state *s, uint32_t rec, const char *cwd, char *buf, size_t size)
{
	size_t clen = strlen(cwd), room = size - clen - 2;
	size_t len = ds_rec_path(s->tree, rec, buf, room);
	if (len >= room)
		return false; /* longer paths are not cached */
	if (buf[0] != '/' && cwd[0]) {
		memmove(buf + clen + 1, buf, len + 1);
		memcpy(buf, cwd, clen);
		buf[clen] = '/';
	}
	return true;
}
