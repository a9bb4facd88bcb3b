/* SPDX-License-Identifier: MIT */
/* sort.c: the sorts: a stable merge sort with a context (half the array
 * beside it), keys held inline sorted with qsort, (key, position) pairs in
 * place, which sort files by a hash, and records by a key: in runs of a
 * bounded length, merged, so that sorting every record of a scan never
 * needs 16 bytes for each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "support/support.h"

/* Insertion sort of a[0..n) (small runs), hold: room for one element. */
static void insertion(unsigned char *a, size_t n, size_t size, int (*cmp)(void *, const void *, const void *),
		      void *ctx, unsigned char *hold)
{
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		if (cmp(ctx, a + (j - 1) * size, a + i * size) <= 0)
			continue;
		memcpy(hold, a + i * size, size);
		while (j > 0 && cmp(ctx, a + (j - 1) * size, hold) > 0) {
			memcpy(a + j * size, a + (j - 1) * size, size);
			j--;
		}
		memcpy(a + j * size, hold, size);
	}
}

/* Top-down merge sort of a[0..n) with tmp holding n / 2 elements: the left
 * half is copied out and merged back with the right, which never overtakes
 * what is still to be read. Ties go to the left: stable. */
static void merge_sort(unsigned char *a, size_t n, size_t size, int (*cmp)(void *, const void *, const void *),
		       void *ctx, unsigned char *tmp)
{
	if (n <= 16) {
		insertion(a, n, size, cmp, ctx, tmp);
		return;
	}
	size_t nl = n / 2;
	merge_sort(a, nl, size, cmp, ctx, tmp);
	merge_sort(a + nl * size, n - nl, size, cmp, ctx, tmp);
	if (cmp(ctx, a + (nl - 1) * size, a + nl * size) <= 0)
		return; /* in order already */
	memcpy(tmp, a, nl * size);
	size_t i = 0, j = nl, k = 0;
	while (i < nl && j < n) {
		if (cmp(ctx, a + j * size, tmp + i * size) < 0)
			memcpy(a + size * k++, a + size * j++, size);
		else
			memcpy(a + size * k++, tmp + size * i++, size);
	}
	memcpy(a + k * size, tmp + i * size, (nl - i) * size);
}

int ds_sort(void *base, size_t n, size_t size,
	    int (*cmp)(void *ctx, const void *a, const void *b), void *ctx)
{
	if (n < 2)
		return 0;
	/* half the array beside it, not all of it: the sorts of sets and
	 * members come at a run's largest moments */
	unsigned char *tmp = malloc((n / 2 > 1 ? n / 2 : 1) * size);
	if (!tmp)
		return -ENOMEM;
	merge_sort(base, n, size, cmp, ctx, tmp);
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


/* The in-place sort, once for each kind of (key, position) pair
 * (introsort.inc: T, LESS and NAME name the type, its order and the sort). */
#define T struct ds_keypos
#define LESS ds_keypos_less
#define NAME ds_sort_by_key
#include "support/introsort.inc"
#define T struct ds_keypos32
#define LESS ds_keypos32_less
#define NAME ds_sort_by_key32
#include "support/introsort.inc"

int ds_cmp_u64(void *ctx, const void *pa, const void *pb)
{
	(void)ctx;
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

int ds_sort_u64_set(uint64_t *v, size_t *n)
{
	int rc = ds_sort(v, *n, sizeof(*v), ds_cmp_u64, NULL);
	size_t m = 0;
	for (size_t i = 0; rc == 0 && i < *n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	if (rc == 0)
		*n = m;
	return rc;
}

bool ds_sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}
