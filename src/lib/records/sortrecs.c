/* SPDX-License-Identifier: MIT */
/* sortrecs.c: every record of a scan sorted by a key of its own (the walk's,
 * the cache's, the reading's orders), in runs merged when there are many. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"
#include "records/records.h"

/* The (key, position) of record order[i], as ds_sort_recs() orders them. */
static struct ds_keypos rec_key(const struct ds_tree *s, uint32_t ri, ds_rec_key_fn key)
{
	uint32_t minor = 0;
	uint64_t k = key(s, ri, &minor);
	return (struct ds_keypos){ k, (uint64_t)minor << 32 | ri }; /* all distinct */
}

/* Sort order[0..n) with a[0..n) beside it. */
static void sort_run(const struct ds_tree *s, uint32_t *order, size_t n, ds_rec_key_fn key, struct ds_keypos *a)
{
	for (size_t i = 0; i < n; i++)
		a[i] = rec_key(s, order[i], key);
	ds_sort_by_key(a, n);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)a[i].pos;
}

/* A sorted run being merged: its next record's key, where it is and ends. */
struct run_head {
	struct ds_keypos next;
	size_t at, end;
};

static void sift(struct run_head *h, size_t i, size_t k)
{
	for (size_t c; (c = 2 * i + 1) < k; i = c) {
		if (c + 1 < k && ds_keypos_less(&h[c + 1].next, &h[c].next))
			c++;
		if (!ds_keypos_less(&h[c].next, &h[i].next))
			break;
		struct run_head t = h[i];
		h[i] = h[c];
		h[c] = t;
	}
}

/* Merge the sorted runs of order[0..n), each run records long, into out: a
 * heap of the runs' heads, each record's key taken again as it comes up. */
static void merge_runs(const struct ds_tree *s, const uint32_t *order, size_t n, size_t run, ds_rec_key_fn key,
		       struct run_head *h, uint32_t *out)
{
	size_t k = 0;
	for (size_t at = 0; at < n; at += run) {
		h[k] = (struct run_head){ rec_key(s, order[at], key), at, at + run < n ? at + run : n };
		k++;
	}
	for (size_t i = k; i-- > 0;)
		sift(h, i, k);
	for (size_t o = 0; k > 0; o++) {
		out[o] = order[h[0].at];
		if (++h[0].at < h[0].end)
			h[0].next = rec_key(s, order[h[0].at], key);
		else
			h[0] = h[--k];
		sift(h, 0, k);
	}
}

int ds_sort_recs_runs(const struct ds_tree *s, uint32_t *order, size_t n, ds_rec_key_fn key, size_t run)
{
	if (run == 0 || run > n)
		run = n ? n : 1;
	struct ds_keypos *a = ds_big_alloc(run * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t at = 0; at < n; at += run)
		sort_run(s, order + at, n - at < run ? n - at : run, key, a);
	ds_big_free(a, run * sizeof(*a));
	if (n <= run)
		return 0;
	size_t k = (n + run - 1) / run;
	struct run_head *h = malloc(k * sizeof(*h));
	uint32_t *out = ds_big_alloc(n * sizeof(*out));
	if (h && out) {
		merge_runs(s, order, n, run, key, h, out);
		memcpy(order, out, n * sizeof(*out));
	}
	free(h);
	if (out)
		ds_big_free(out, n * sizeof(*out));
	return h && out ? 0 : -ENOMEM;
}

int ds_sort_recs(const struct ds_tree *s, uint32_t *order, size_t n, ds_rec_key_fn key)
{
	return ds_sort_recs_runs(s, order, n, key, DS_SORT_RUN);
}

