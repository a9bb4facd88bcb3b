/* SPDX-License-Identifier: MIT */
/* sort.c: the two sorts: a stable merge sort with a context, and keys held
 * inline sorted with qsort. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx)
{
	if (n < 2)
		return 0;
	unsigned char *tmp = malloc(n * size);
	if (!tmp)
		return -ENOMEM;
	unsigned char *src = base, *dst = tmp;
	/* bottom-up merge sort: stable, no recursion */
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi) {
				if (cmp(ctx, src + j * size, src + i * size) < 0)
					memcpy(dst + size * k++, src + size * j++, size);
				else
					memcpy(dst + size * k++, src + size * i++, size);
			}
			memcpy(dst + size * k, src + size * i, (mid - i) * size);
			k += mid - i;
			memcpy(dst + size * k, src + size * j, (hi - j) * size);
		}
		unsigned char *t = src;
		src = dst;
		dst = t;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(tmp);
	return 0;
}

static int cmp_sortkey(const void *pa, const void *pb)
{
	const struct ds_sortkey *a = pa, *b = pb;
	for (int i = 0; i < 4; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

void ds_sort_keys(struct ds_sortkey *a, size_t n)
{
	if (n > 1)
		qsort(a, n, sizeof(*a), cmp_sortkey);
}

/* order[0..n) sorted by key (records' fields copied beside their indexes). */
int ds_sort_recs(const dupscan_scan *s, uint32_t *order, size_t n,
		   void (*key)(const dupscan_scan *s, const struct ds_rec *r, uint64_t k[4]))
{
	struct ds_sortkey *a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		key(s, ds_rec(s, order[i]), a[i].k);
		a[i].pos = order[i];
	}
	ds_sort_keys(a, n);
	for (size_t i = 0; i < n; i++)
		order[i] = a[i].pos;
	free(a);
	return 0;
}
